/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_gcm.c - the authenticated format's properties (docs/format.md
 * section 10): round trips for every unit size a volume allows with
 * partial final units and in place; every tamper class of the issue at the
 * crypto level (a flipped byte of the header and of a unit's nonce,
 * ciphertext and tag, a unit moved to another index, a unit from another
 * file, a header from another file or volume, truncated units) and what
 * each returns; the hole rule; the offset arithmetic checked exhaustively
 * for small sizes against a model that lays units out one by one;
 * threads sharing one gkey; and no nonce shared by a process and its
 * forked child (the nonce cache).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "sc_crypto.h"
#include "crypto_i.h"	/* sc_mkey_gcm_header_mac: headers with other flags */

static struct sc_mkey *mkey_bs(uint32_t bs, uint8_t seed)
{
	uint8_t master[32];
	struct sc_mkey *mk;

	memset(master, seed, sizeof(master));
	cr_assert_eq(sc_mkey_new(master, SC_CIPHER_AES_XTS, bs, &mk), 0);
	return mk;
}

static struct sc_gkey *new_file(struct sc_mkey *mk, uint8_t hdr[SC_GHDR_SIZE])
{
	struct sc_gkey *gk;

	cr_assert_eq(sc_ghdr_new(mk, hdr), 0);
	cr_assert_eq(sc_gkey_new(mk, hdr, SC_GHDR_SIZE, &gk), 0);
	return gk;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131 + seed * 17 + (i >> 8)) ^ 0x5a);
}

Test(gcm, round_trip_every_unit_size)
{
	for (uint32_t bs = SC_BLOCK_MIN; bs <= SC_BLOCK_MAX; bs *= 2) {
		struct sc_mkey *mk = mkey_bs(bs, 1);
		uint8_t hdr[SC_GHDR_SIZE];
		struct sc_gkey *gk = new_file(mk, hdr);
		size_t lens[] = { 1, 15, 16, 17, bs - 1, bs, bs + 1, 2 * bs, 3 * bs + 17 };

		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			size_t len = lens[k], slen = sc_gcm_stored_len(bs, len);
			uint8_t *pt = malloc(len), *st = malloc(slen), *back = malloc(len);
			uint64_t first = k * 1000003ull;

			fill(pt, len, (unsigned)k);
			cr_assert_eq(sc_gcm_seal(gk, first, pt, len, st), 0, "bs %u len %zu", bs, len);
			/* Ciphertext equals plaintext by chance with odds 2^-8n for n
			 * bytes: compared only from 16 bytes on (1-byte units matched
			 * once in 256 runs). */
			if (len >= 16)
				cr_assert_neq(memcmp(st + 16, pt, len < bs ? len : bs), 0,
					      "not encrypted");
			cr_assert_eq(sc_gcm_open(gk, first, st, slen, back, NULL), (int)len,
				     "bs %u len %zu", bs, len);
			cr_assert_eq(memcmp(back, pt, len), 0, "bs %u len %zu", bs, len);
			free(pt);
			free(st);
			free(back);
		}
		sc_gkey_free(gk);
		sc_mkey_free(mk);
	}
}

Test(gcm, one_unit_in_place_and_fresh_nonces)
{
	uint32_t bs = 4096;
	struct sc_mkey *mk = mkey_bs(bs, 2);
	uint8_t hdr[SC_GHDR_SIZE], buf[4096 + 32], again[4096 + 32], pt[4096];
	struct sc_gkey *gk = new_file(mk, hdr);

	for (size_t len = 1; len <= bs; len = len * 3 + 1) {
		fill(pt, len, 7);
		memcpy(buf + 16, pt, len);
		cr_assert_eq(sc_gcm_seal(gk, 5, buf + 16, len, buf), 0);
		cr_assert_eq(sc_gcm_seal(gk, 5, pt, len, again), 0);
		/* the same plaintext at the same place never gives the same bytes */
		cr_assert_neq(memcmp(buf, again, 16), 0, "nonce repeated");
		if (len >= 16)	/* shorter ones match by chance (1 in 256 for 1 byte) */
			cr_assert_neq(memcmp(buf + 16, again + 16, len), 0);
		cr_assert_eq(sc_gcm_open(gk, 5, buf, len + 32, buf + 16, NULL), (int)len);
		cr_assert_eq(memcmp(buf + 16, pt, len), 0, "len %zu", len);
	}
	cr_assert_eq(sc_gcm_seal(gk, 0, pt, 0, buf), -EINVAL);
	cr_assert_eq(sc_gcm_seal(gk, SC_GCM_UNIT_MAX + 1, pt, 1, buf), -EINVAL);
	cr_assert_eq(sc_gcm_seal(gk, SC_GCM_UNIT_MAX, pt, 1, buf), 0);
	cr_assert_eq(sc_gcm_seal(gk, SC_GCM_UNIT_MAX, pt, bs + 1, buf), -EINVAL);
	/* refused before any byte is read: the result must fit the int it returns */
	cr_assert_eq(sc_gcm_open(gk, 0, buf, (size_t)INT32_MAX + 1, pt, NULL), -EINVAL);
	cr_assert_eq(sc_gcm_open(gk, SC_GCM_UNIT_MAX + 1, buf, 48, pt, NULL), -EINVAL);
	cr_assert_eq(sc_gcm_open(gk, 0, buf, 0, pt, NULL), 0);
	sc_gkey_free(gk);
	sc_mkey_free(mk);
}

/* Three units of 512 (the last 100 bytes) of one file, sealed from unit 4. */
struct three {
	struct sc_mkey	*mk;
	struct sc_gkey	*gk;
	uint8_t		hdr[SC_GHDR_SIZE];
	uint8_t		pt[2 * 512 + 100];
	uint8_t		st[2 * 544 + 132];
};

static void three_make(struct three *t, uint8_t seed)
{
	t->mk = mkey_bs(512, seed);
	t->gk = new_file(t->mk, t->hdr);
	fill(t->pt, sizeof(t->pt), seed);
	cr_assert_eq(sc_gcm_seal(t->gk, 4, t->pt, sizeof(t->pt), t->st), 0);
}

static void three_free(struct three *t)
{
	sc_gkey_free(t->gk);
	sc_mkey_free(t->mk);
}

/* Opens st (len bytes) from unit first; expects -EBADMSG at unit want_bad. */
static void expect_bad(struct sc_gkey *gk, uint64_t first, const uint8_t *st, size_t len,
		       uint64_t want_bad, const char *what)
{
	uint8_t out[3 * 512];
	uint64_t bad = 999;

	memset(out, 0xee, sizeof(out));
	cr_assert_eq(sc_gcm_open(gk, first, st, len, out, &bad), -EBADMSG, "%s", what);
	cr_assert_eq(bad, want_bad, "%s: unit %llu", what, (unsigned long long)bad);
	/* the failing unit's output holds no unauthenticated plaintext */
	if (len > (want_bad - first) * 544 + 32) {
		size_t o = (want_bad - first) * 512, n = len - (want_bad - first) * 544 - 32;

		for (size_t i = 0; i < (n < 512 ? n : 512); i++)
			cr_assert_eq(out[o + i], 0, "%s: byte %zu of the failed unit", what, i);
	}
}

Test(gcm_tamper, every_byte_of_every_unit)
{
	struct three t;

	three_make(&t, 3);
	for (size_t i = 0; i < sizeof(t.st); i++) {
		uint8_t c[sizeof(t.st)];
		uint64_t unit = 4 + i / 544;
		size_t in_unit = i % 544, ulen = unit == 6 ? 132 : 544;
		const char *cls = in_unit < 16 ? "nonce" : in_unit >= ulen - 16 ? "tag" : "ciphertext";
		char what[64];

		memcpy(c, t.st, sizeof(c));
		c[i] ^= (uint8_t)(1u << (i % 8));
		snprintf(what, sizeof(what), "%s byte %zu of unit %llu", cls, in_unit,
			 (unsigned long long)unit);
		expect_bad(t.gk, 4, c, sizeof(c), unit, what);
	}
	three_free(&t);
}

Test(gcm_tamper, units_moved_swapped_or_from_another_file)
{
	struct three a, b;
	uint8_t c[sizeof(a.st)], out[3 * 512];
	struct sc_gkey *gk;

	three_make(&a, 4);
	/* the right index opens; any other fails */
	cr_assert_eq(sc_gcm_open(a.gk, 4, a.st, 544, out, NULL), 512);
	expect_bad(a.gk, 5, a.st, 544, 5, "unit 4 read as unit 5");
	expect_bad(a.gk, 3, a.st, 544, 3, "unit 4 read as unit 3");
	/* units 4 and 5 swapped */
	memcpy(c, a.st, sizeof(c));
	memcpy(c, a.st + 544, 544);
	memcpy(c + 544, a.st, 544);
	expect_bad(a.gk, 4, c, sizeof(c), 4, "units 4 and 5 swapped");
	/* a whole unit duplicated over the next */
	memcpy(c, a.st, sizeof(c));
	memcpy(c + 544, a.st, 544);
	expect_bad(a.gk, 4, c, sizeof(c), 5, "unit 4 copied over unit 5");

	/* another file of the same volume (same master key) */
	b.mk = a.mk;
	b.gk = new_file(b.mk, b.hdr);
	fill(b.pt, sizeof(b.pt), 9);
	cr_assert_eq(sc_gcm_seal(b.gk, 4, b.pt, sizeof(b.pt), b.st), 0);
	memcpy(c, a.st, sizeof(c));
	memcpy(c + 544, b.st + 544, 544);
	expect_bad(a.gk, 4, c, sizeof(c), 5, "unit 5 from another file");
	/* a header from another file of the volume: verifies, but no unit opens */
	cr_assert_eq(sc_gkey_new(a.mk, b.hdr, SC_GHDR_SIZE, &gk), 0);
	expect_bad(gk, 4, a.st, sizeof(a.st), 4, "header of another file");
	sc_gkey_free(gk);
	sc_gkey_free(b.gk);
	three_free(&a);
}

Test(gcm_tamper, header_bytes_and_other_volumes)
{
	struct sc_mkey *mk = mkey_bs(512, 5), *other = mkey_bs(512, 6), *big = mkey_bs(4096, 5);
	uint8_t hdr[SC_GHDR_SIZE], c[SC_HDR_MAX];
	struct sc_gkey *gk = new_file(mk, hdr);

	sc_gkey_free(gk);
	for (size_t i = 0; i < SC_GHDR_SIZE; i++) {
		for (int bit = 0; bit < 8; bit++) {
			int want = i == 4 ? -EPROTONOSUPPORT : -EUCLEAN;

			memcpy(c, hdr, SC_GHDR_SIZE);
			c[i] ^= (uint8_t)(1u << bit);
			cr_assert_eq(sc_ghdr_verify(mk, c, SC_GHDR_SIZE, NULL), want,
				     "byte %zu bit %d", i, bit);
			cr_assert_eq(sc_gkey_new(mk, c, SC_GHDR_SIZE, &gk), want);
		}
	}
	/* another volume's master key: its MAC key differs */
	cr_assert_eq(sc_ghdr_verify(other, hdr, SC_GHDR_SIZE, NULL), -EUCLEAN);
	/* same master key, other unit size: MAC fine, size refused */
	cr_assert_eq(sc_ghdr_verify(big, hdr, SC_GHDR_SIZE, NULL), -EINVAL);
	/* truncated, overlong, empty, garbage */
	for (size_t n = 0; n < SC_GHDR_SIZE; n++)
		cr_assert_eq(sc_ghdr_verify(mk, hdr, n, NULL), -EUCLEAN, "length %zu", n);
	memcpy(c, hdr, SC_GHDR_SIZE);
	c[SC_GHDR_SIZE] = 0;
	cr_assert_eq(sc_ghdr_verify(mk, c, SC_GHDR_SIZE + 1, NULL), -EUCLEAN);
	memset(c, 0, sizeof(c));
	cr_assert_eq(sc_ghdr_verify(mk, c, SC_GHDR_SIZE, NULL), -EUCLEAN);
	/* the xattr-format header is not this format */
	cr_assert_gt(sc_hdr_new(mk, c), 0);
	cr_assert_eq(sc_ghdr_verify(mk, c, SC_GHDR_SIZE, NULL), -EUCLEAN);
	sc_mkey_free(mk);
	sc_mkey_free(other);
	sc_mkey_free(big);
}

/* A header with flags or another version, MACed correctly, is refused as unknown. */
Test(gcm_tamper, unknown_flags_and_version)
{
	struct sc_mkey *mk = mkey_bs(512, 7);
	uint8_t hdr[SC_GHDR_SIZE];

	cr_assert_eq(sc_ghdr_new(mk, hdr), 0);
	hdr[4] = 2;
	cr_assert_eq(sc_ghdr_verify(mk, hdr, SC_GHDR_SIZE, NULL), -EPROTONOSUPPORT);
	cr_assert_eq(sc_ghdr_verify(mk, hdr, 5, NULL), -EPROTONOSUPPORT,
		     "a newer version is named before its length is judged");
	sc_mkey_free(mk);
}

Test(gcm_tamper, truncated_units)
{
	struct three t;

	three_make(&t, 8);
	/* the final unit (132 stored bytes) cut anywhere */
	for (size_t cut = 1; cut < 132; cut++)
		expect_bad(t.gk, 4, t.st, sizeof(t.st) - cut, 6, "final unit cut");
	/* a whole unit cut: it becomes a short final unit whose tag fails */
	for (size_t cut = 1; cut < 544; cut++)
		expect_bad(t.gk, 4, t.st, 544 - cut, 4, "whole unit cut");
	/* cut exactly at a unit boundary: undetectable here (docs 10.6) */
	cr_assert_eq(sc_gcm_open(t.gk, 4, t.st, 2 * 544, t.pt, NULL), 1024);
	three_free(&t);
}

/*
 * A whole unit of zeros in a file made today (header flag TRACKS) is
 * refused, -EUCLEAN naming it, until its header says it may hold holes
 * (#28 finding 3); marking the header re-MACs it and keeps every unit
 * valid (HOLES is not in the units' associated data).
 */
Test(gcm_holes, zeros_refused_until_the_header_allows_holes)
{
	struct three t;
	struct sc_gkey *gk;
	uint8_t c[sizeof(t.st)], out[3 * 512], hdr[SC_GHDR_SIZE];
	uint64_t bad = 0;

	three_make(&t, 9);
	cr_assert_eq(sc_ghdr_flags(t.hdr), SC_GHDR_F_TRACKS);
	cr_assert_not(sc_gkey_holes_ok(t.gk));
	memcpy(c, t.st, sizeof(c));
	cr_assert_not(sc_gcm_is_hole(c + 544, 544, 512), "unit 5 must not be zeros already");
	memset(c + 544, 0, 544);		/* unit 5 zeroed */
	cr_assert_eq(sc_gcm_open(t.gk, 4, c, sizeof(c), out, &bad), -EUCLEAN);
	cr_assert_eq(bad, 5);
	memcpy(hdr, t.hdr, sizeof(hdr));
	cr_assert_eq(sc_ghdr_mark_holes(t.mk, hdr), 0);
	cr_assert_eq(sc_ghdr_flags(hdr), SC_GHDR_F_TRACKS | SC_GHDR_F_HOLES);
	cr_assert_neq(memcmp(hdr + 24, t.hdr + 24, 16), 0, "the MAC was not recomputed");
	cr_assert_eq(sc_gkey_new(t.mk, hdr, sizeof(hdr), &gk), 0);
	cr_assert(sc_gkey_holes_ok(gk));
	cr_assert_eq(sc_gcm_open(gk, 4, t.st, sizeof(t.st), out, NULL), 1124,
		     "units sealed before the mark open after it");
	cr_assert_eq(sc_gcm_open(gk, 4, c, sizeof(c), out, NULL), 1124);
	for (int i = 0; i < 512; i++)
		cr_assert_eq(out[512 + i], 0);
	sc_gkey_free(gk);
	/* the flag changed by a byte, not by the key's holder: the MAC fails */
	memcpy(hdr, t.hdr, sizeof(hdr));
	hdr[6] ^= SC_GHDR_F_HOLES;
	cr_assert_eq(sc_ghdr_verify(t.mk, hdr, sizeof(hdr), NULL), -EUCLEAN);
	/* allowed in memory (what the layer does once the mark is stored) */
	sc_gkey_allow_holes(t.gk);
	cr_assert_eq(sc_gcm_open(t.gk, 4, c, sizeof(c), out, NULL), 1124);
	three_free(&t);
}

/* HOLES alone, or an unknown bit, MACed correctly: a later build's header. */
Test(gcm_holes, unknown_flag_combinations_refused)
{
	struct sc_mkey *mk = mkey_bs(512, 3);
	uint8_t hdr[SC_GHDR_SIZE], mac[32];

	for (unsigned f = 0; f < 16; f++) {
		int want = f == 0 || f == 1 || f == 3 ? 0 : -EPROTONOSUPPORT;

		cr_assert_eq(sc_ghdr_new(mk, hdr), 0);
		hdr[6] = (uint8_t)f;
		cr_assert_eq(sc_mkey_gcm_header_mac(mk, hdr, SC_GHDR_AUTH_LEN, mac), 0);
		memcpy(hdr + SC_GHDR_AUTH_LEN, mac, 16);
		cr_assert_eq(sc_ghdr_verify(mk, hdr, sizeof(hdr), NULL), want, "flags %u", f);
	}
	sc_mkey_free(mk);
}

/* The old rule, for headers without TRACKS (files from before): zeros are a hole. */
Test(gcm_holes, zeros_are_a_hole_only_as_a_whole_unit)
{
	struct three t;
	uint8_t c[sizeof(t.st)], out[3 * 512];
	uint64_t bad;

	three_make(&t, 9);
	sc_gkey_allow_holes(t.gk);	/* as an old header's gkey is */
	memcpy(c, t.st, sizeof(c));
	memset(c + 544, 0, 544);		/* unit 5 zeroed: a hole */
	cr_assert(sc_gcm_is_hole(c + 544, 544, 512));
	cr_assert_eq(sc_gcm_open(t.gk, 4, c, sizeof(c), out, NULL), 1124);
	for (int i = 0; i < 512; i++)
		cr_assert_eq(out[512 + i], 0);
	cr_assert_eq(memcmp(out, t.pt, 512), 0);
	cr_assert_eq(memcmp(out + 1024, t.pt + 1024, 100), 0);
	/* a zeroed final (short) unit is no hole: a tag failure */
	memset(c + 1088, 0, 132);
	cr_assert_not(sc_gcm_is_hole(c + 1088, 132, 512));
	bad = 0;
	cr_assert_eq(sc_gcm_open(t.gk, 4, c, sizeof(c), out, &bad), -EBADMSG);
	cr_assert_eq(bad, 6);
	/* nearly zero (one byte set) is a unit, and a forged one */
	memcpy(c, t.st, sizeof(c));
	memset(c, 0, 544);
	c[300] = 1;
	cr_assert_not(sc_gcm_is_hole(c, 544, 512));
	expect_bad(t.gk, 4, c, sizeof(c), 4, "almost-zero unit");
	cr_assert_not(sc_gcm_is_hole(c, 543, 512));
	three_free(&t);
}

/*
 * ---- offset arithmetic against a model that lays units out one by one,
 * for both header lengths: 40 (version 1, the functions without _h must
 * agree) and 88 (version 2, format.md 11.3: an empty backing file is cut)
 */

static const uint32_t hlens[] = { SC_GHDR_SIZE, SC_IHDR_SIZE };

static uint64_t model_stored_size(uint32_t hlen, uint32_t bs, uint64_t plain)
{
	uint64_t s = hlen;

	while (plain > 0) {
		uint64_t u = plain < bs ? plain : bs;

		s += 16 + u + 16;
		plain -= u;
	}
	return s;
}

static void check_sizes(uint32_t hlen, uint32_t bs)
{
	uint64_t top = 5ull * bs + 7;
	uint64_t smax = model_stored_size(hlen, bs, top) + 100;
	/* inverse map of the model: stored size -> plain size, -1 for none */
	int64_t *inv = malloc(sizeof(*inv) * (smax + 100));

	for (uint64_t s = 0; s <= smax; s++)
		inv[s] = -1;
	for (uint64_t p = 0; p <= top + 1; p++) {
		uint64_t s = model_stored_size(hlen, bs, p);

		cr_assert_eq(sc_gcm_stored_size_h(hlen, bs, p), s, "bs %u plain %llu", bs,
			     (unsigned long long)p);
		cr_assert_eq(sc_gcm_stored_len(bs, p), s - hlen);
		if (p % bs == 0)
			cr_assert_eq(sc_gcm_unit_off_h(hlen, bs, p / bs), s);
		if (hlen == SC_GHDR_SIZE)
			cr_assert_eq(sc_gcm_stored_size(bs, p), s);
		if (hlen == SC_GHDR_SIZE && p % bs == 0)
			cr_assert_eq(sc_gcm_unit_off(bs, p / bs), s);
		if (s <= smax)
			inv[s] = (int64_t)p;
	}
	for (uint64_t s = 0; s <= smax - bs - 64; s++) {
		uint64_t p = 12345, q = 54321;
		int r = sc_gcm_plain_size_h(hlen, bs, s, &p);

		if (s == 0 && hlen == SC_GHDR_SIZE)
			cr_assert(r == 0 && p == 0);
		else if (s < hlen)
			cr_assert_eq(r, -EUCLEAN, "hlen %u stored %llu", hlen, (unsigned long long)s);
		else if (inv[s] < 0)
			cr_assert_eq(r, -EBADMSG, "stored %llu", (unsigned long long)s);
		else
			cr_assert(r == 0 && p == (uint64_t)inv[s], "stored %llu: %d %llu",
				  (unsigned long long)s, r, (unsigned long long)p);
		if (hlen == SC_GHDR_SIZE)
			cr_assert(sc_gcm_plain_size(bs, s, &q) == r && (r < 0 || q == p));
	}
	free(inv);
}

Test(gcm_layout, sizes_exhaustive_against_the_model)
{
	for (unsigned h = 0; h < 2; h++)
		for (uint32_t bs = 512; bs <= 2048; bs *= 2)
			check_sizes(hlens[h], bs);
}

static void check_span(uint32_t hlen, uint64_t plain, uint64_t off, uint64_t len)
{
	const uint32_t bs = 512;
	uint64_t first, soff, slen, end, a, b, f1, s1, l1;

	sc_gcm_stored_span_h(hlen, bs, plain, off, len, &first, &soff, &slen);
	if (hlen == SC_GHDR_SIZE) {
		sc_gcm_stored_span(bs, plain, off, len, &f1, &s1, &l1);
		cr_assert(f1 == first && s1 == soff && l1 == slen);
	}
	cr_assert_eq(first, off / bs);
	cr_assert_eq(soff, model_stored_size(hlen, bs, off / bs * bs));
	end = off + len < plain ? off + len : plain;
	if (end <= off) {
		cr_assert_eq(slen, 0);
		return;
	}
	/* the model: every unit that holds a byte of [off, end) */
	a = model_stored_size(hlen, bs, off / bs * bs);
	b = model_stored_size(hlen, bs, ((end - 1) / bs + 1) * bs < plain ?
			      ((end - 1) / bs + 1) * bs : plain);
	cr_assert_eq(slen, b - a, "plain %llu off %llu len %llu", (unsigned long long)plain,
		     (unsigned long long)off, (unsigned long long)len);
}

Test(gcm_layout, span_exhaustive_against_the_model)
{
	for (unsigned h = 0; h < 2; h++)
		for (uint64_t plain = 0; plain <= 3 * 512 + 1; plain += 37)
			for (uint64_t off = 0; off <= plain + 512; off += 13)
				for (uint64_t len = 0; len <= 2 * 512 + 3; len += 29)
					check_span(hlens[h], plain, off, len);
}

Test(gcm_layout, the_largest_file)
{
	for (unsigned h = 0; h < 2; h++) {
		for (uint32_t bs = SC_BLOCK_MIN; bs <= SC_BLOCK_MAX; bs *= 2) {
			uint32_t hl = hlens[h];
			uint64_t m = sc_gcm_plain_max_h(hl, bs), p;

			cr_assert_leq(sc_gcm_stored_size_h(hl, bs, m), (uint64_t)INT64_MAX);
			cr_assert_gt(sc_gcm_stored_size_h(hl, bs, m + 1), (uint64_t)INT64_MAX);
			cr_assert_eq(sc_gcm_plain_size_h(hl, bs, sc_gcm_stored_size_h(hl, bs, m),
							 &p), 0);
			cr_assert_eq(p, m);
			cr_assert_leq(m / bs, SC_GCM_UNIT_MAX);
			if (hl == SC_GHDR_SIZE)
				cr_assert_eq(sc_gcm_plain_max(bs), m);
		}
	}
}

/* ---- threads share one gkey, as the crypt layer's FUSE threads will ---- */

struct worker {
	struct sc_gkey	*gk;
	unsigned	id;
	int		fails;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint8_t pt[4 * 4096], st[4 * 4128], back[4 * 4096];

	for (unsigned r = 0; r < 200; r++) {
		size_t len = 1 + (w->id * 977 + r * 4099) % sizeof(pt);
		uint64_t first = w->id * 1000 + r;

		fill(pt, len, w->id + r);
		if (sc_gcm_seal(w->gk, first, pt, len, st) != 0 ||
		    sc_gcm_open(w->gk, first, st, sc_gcm_stored_len(4096, len), back, NULL) !=
		    (int)len || memcmp(pt, back, len) != 0)
			w->fails++;
	}
	return NULL;
}

Test(gcm, threads_share_a_gkey)
{
	struct sc_mkey *mk = mkey_bs(4096, 10);
	uint8_t hdr[SC_GHDR_SIZE];
	struct sc_gkey *gk = new_file(mk, hdr);
	struct worker w[8];
	pthread_t th[8];

	for (unsigned i = 0; i < 8; i++) {
		w[i] = (struct worker){ gk, i, 0 };
		cr_assert_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (unsigned i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(w[i].fails, 0, "thread %u", i);
	}
	sc_gkey_free(gk);
	sc_mkey_free(mk);
}

/* The per-thread nonce cache is copied by fork(): parent and child must not
 * both use its next entry. */
Test(gcm, fork_does_not_share_nonces)
{
	struct sc_mkey *mk = mkey_bs(512, 11);
	uint8_t hdr[SC_GHDR_SIZE], pt[16] = { 1 }, a[48], b[48];
	struct sc_gkey *gk = new_file(mk, hdr);
	int fd[2], status;
	pid_t pid;

	cr_assert_eq(sc_gcm_seal(gk, 0, pt, 16, a), 0);	/* fills this thread's cache */
	cr_assert_eq(pipe(fd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int ok = sc_gcm_seal(gk, 0, pt, 16, b) == 0 && write(fd[1], b, 16) == 16;

		_exit(ok ? 0 : 1);
	}
	cr_assert_eq(sc_gcm_seal(gk, 0, pt, 16, a), 0);
	cr_assert_eq(read(fd[0], b, 16), 16);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	cr_assert_neq(memcmp(a, b, 16), 0, "parent and child drew the same nonce");
	close(fd[0]);
	close(fd[1]);
	sc_gkey_free(gk);
	sc_mkey_free(mk);
}
