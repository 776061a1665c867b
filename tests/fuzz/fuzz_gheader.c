// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_gheader.c - libFuzzer target for the authenticated format's in-file
 * header parser (sc_ghdr_verify / sc_gkey_new, crypto/fhdr.c), the unit
 * opener behind it (sc_gcm_open, crypto/gcm.c) and the offset arithmetic
 * (crypto/glayout.c), under a fixed master key.
 *
 * Input layout (missing bytes read as zero):
 *   [0]      flags: bits 0-1 unit size (512, 1024, 4096, 65536), bit 2
 *            re-MAC the header (so mutations get past the MAC to the flags
 *            and unit size behind it), bit 3 open one unit in place
 *   [1]      header length (0..255; 40 for version 1)
 *   [2..]    the header bytes, then 8 bytes: the first unit's index (LE),
 *            then the stored units.
 *
 * Checks: sc_ghdr_verify and sc_gkey_new return what docs/format.md 10.2
 * gives for these bytes, computed here independently; with a key,
 * sc_gcm_open of the fuzzed units either fails with -EBADMSG (naming a unit
 * inside the range) or -EINVAL (index out of range), or succeeds only when
 * every unit is a hole, with zeros out; sealing those bytes as plaintext
 * and opening the result gives them back; and for the backing file the
 * input describes, plain_size and stored_size are inverse.  Buffers are
 * allocated at their exact length so ASan sees any access past them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "crypto_i.h"
#include "sc_crypto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t block_sizes[4] = { 512, 1024, 4096, 65536 };
static struct sc_mkey *mkeys[4];	/* made on first use, kept for the run */

/*
 * At exit: a key holds OpenSSL objects (the journal's keyed MAC) that
 * LeakSanitizer cannot find through the key's locked memory, which it does
 * not scan.
 */
static void free_keys(void)
{
	for (unsigned b = 0; b < 4; b++)
		sc_mkey_free(mkeys[b]);
}

static struct sc_mkey *volume_key(unsigned bsi)
{
	static const uint8_t master[SC_MASTER_KEY_LEN] = {
		0x3c, 0x1f, 0x2e, 0x4d, 0x5c, 0x6b, 0x7a, 0x89, 0x98, 0xa7, 0xb6, 0xc5,
		0xd4, 0xe3, 0xf2, 0x01, 0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87,
		0x98, 0xa9, 0xba, 0xcb, 0xdc, 0xed, 0xfe, 0x0f,
	};

	static bool once;

	if (!once)
		once = atexit(free_keys) == 0;
	if (mkeys[bsi] == NULL && sc_mkey_new(master, SC_CIPHER_AES_XTS, block_sizes[bsi],
					      &mkeys[bsi]) != 0)
		abort();
	return mkeys[bsi];
}

static unsigned log2u(uint32_t v)
{
	unsigned l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

static void fail(const char *what, long long a, long long b)
{
	fprintf(stderr, "fuzz_gheader: %s (%lld, %lld)\n", what, a, b);
	abort();
}

/* What sc_ghdr_verify must return for hdr (docs/format.md 10.2's order). */
static int expected(const struct sc_mkey *mk, const uint8_t *hdr, size_t len)
{
	uint8_t mac[32];

	if (len < 5 || memcmp(hdr, "scgm", 4) != 0)
		return -EUCLEAN;
	if (hdr[4] != 1)
		return -EPROTONOSUPPORT;
	if (len != 40)
		return -EUCLEAN;
	if (sc_hmac_sha256(sc_mkey_gcm_header_mac_key(mk), 32, hdr, 24, mac) != 0)
		abort();
	if (memcmp(mac, hdr + 24, 16) != 0)
		return -EUCLEAN;
	/* none, TRACKS, TRACKS|HOLES (10.2); anything else is a later build's */
	if (hdr[7] != 0 || (hdr[6] != 0 && hdr[6] != 1 && hdr[6] != 3))
		return -EPROTONOSUPPORT;
	if (hdr[5] != log2u(sc_mkey_block_size(mk)))
		return -EINVAL;
	return 0;
}

static void units(struct sc_gkey *gk, uint8_t flags, uint64_t first, const uint8_t *rest,
		  size_t n)
{
	uint32_t bs = sc_gkey_block_size(gk);
	size_t sbs = (size_t)bs + SC_GCM_OVERHEAD, nunits = (n + sbs - 1) / sbs;
	uint8_t *in = malloc(n ? n : 1), *out = malloc(nunits * bs + 1), *st, *back;
	uint64_t bad = UINT64_MAX;
	int r;

	if (in == NULL || out == NULL)
		abort();
	memcpy(in, rest, n);
	if ((flags & 8) && n > SC_GCM_OVERHEAD && n <= sbs)	/* one unit, in place */
		r = sc_gcm_open(gk, first, in, n, in + SC_GCM_NONCE_LEN, &bad);
	else
		r = sc_gcm_open(gk, first, in, n, out, &bad);
	if (r == -EBADMSG || r == -EUCLEAN) {
		if (bad < first || bad - first >= nunits)
			fail("-EBADMSG names a unit outside the range", (long long)bad, (long long)first);
		if (r == -EUCLEAN && (sc_gkey_holes_ok(gk) ||
				      !sc_gcm_is_hole(rest + (bad - first) * sbs,
						      bad + 1 - first < nunits ? sbs :
						      n - (bad - first) * sbs, bs)))
			fail("-EUCLEAN for a unit that is no refused hole", (long long)bad, r);
	} else if (r == -EINVAL) {
		if (first <= SC_GCM_UNIT_MAX && nunits <= SC_GCM_UNIT_MAX - first + 1)
			fail("-EINVAL for an index in range", (long long)first, (long long)nunits);
	} else if (r >= 0) {
		/* random bytes never pass a tag: only holes open, where holes may be */
		if (nunits > 0 && !sc_gkey_holes_ok(gk))
			fail("a unit opened in a file that allows no hole", (long long)nunits, r);
		for (size_t u = 0; u < nunits; u++)
			if (!sc_gcm_is_hole(rest + u * sbs, u + 1 < nunits ? sbs : n - u * sbs, bs))
				fail("a unit that is no hole opened", (long long)u, r);
		if (!(flags & 8) || n <= SC_GCM_OVERHEAD || n > sbs)
			for (int i = 0; i < r; i++)
				if (out[i] != 0)
					fail("a hole did not read as zeros", i, r);
	} else {
		fail("sc_gcm_open returned an errno outside its contract", r, 0);
	}
	free(in);
	free(out);

	/* the same bytes as plaintext: seal, open, compare */
	if (n == 0 || first > SC_GCM_UNIT_MAX - (n + bs - 1) / bs + 1)
		return;
	st = malloc(sc_gcm_stored_len(bs, n));
	back = malloc(n);
	if (st == NULL || back == NULL)
		abort();
	if (sc_gcm_seal(gk, first, rest, n, st) != 0)
		fail("seal failed", (long long)n, 0);
	r = sc_gcm_open(gk, first, st, sc_gcm_stored_len(bs, n), back, NULL);
	if (r != (int)n || memcmp(back, rest, n) != 0)
		fail("open(seal(x)) != x", r, (long long)n);
	free(st);
	free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t flags = size > 0 ? data[0] : 0;
	size_t hlen = size > 1 ? data[1] : 0, n;
	struct sc_mkey *mk = volume_key(flags & 3);
	uint8_t *hdr = malloc(hlen ? hlen : 1), mac[32], ix[8] = { 0 };
	const uint8_t *rest;
	struct sc_gkey *gk = NULL;
	uint64_t first, plain;
	int want, got;

	if (hdr == NULL)
		abort();
	memset(hdr, 0, hlen);
	if (size > 2)
		memcpy(hdr, data + 2, size - 2 < hlen ? size - 2 : hlen);
	if ((flags & 4) && hlen >= 40) {
		if (sc_hmac_sha256(sc_mkey_gcm_header_mac_key(mk), 32, hdr, 24, mac) != 0)
			abort();
		memcpy(hdr + 24, mac, 16);
	}
	want = expected(mk, hdr, hlen);
	got = sc_ghdr_verify(mk, hdr, hlen, NULL);
	if (got != want)
		fail("sc_ghdr_verify differs from the spec", got, want);
	got = sc_gkey_new(mk, hdr, hlen, &gk);
	if (got != want)
		fail("sc_gkey_new differs from sc_ghdr_verify", got, want);

	rest = size > 2 + hlen ? data + 2 + hlen : data + size;
	n = (size_t)(data + size - rest);
	memcpy(ix, rest, n < 8 ? n : 8);
	first = sc_get_le64(ix);
	if (!(first & (1ull << 63)))
		first %= 1024;		/* mostly small indices; sometimes any */
	rest += n < 8 ? n : 8;
	n -= n < 8 ? n : 8;

	/* the backing file header || rest: size arithmetic is inverse */
	got = sc_gcm_plain_size(block_sizes[flags & 3], 40 + n, &plain);
	if (got == 0 && sc_gcm_stored_size(block_sizes[flags & 3], plain) != 40 + n)
		fail("stored_size(plain_size(s)) != s", (long long)n, (long long)plain);
	if (got != 0 && got != -EBADMSG)
		fail("plain_size of a file with a header", got, (long long)n);

	if (gk != NULL)
		units(gk, flags, first, rest, n);
	sc_gkey_free(gk);
	free(hdr);
	return 0;
}
