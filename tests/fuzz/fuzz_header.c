// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_header.c - libFuzzer target for the per-file header parser
 * (sc_fkey_new, crypto/header.c) and the range rules of
 * sc_fkey_encrypt/decrypt (crypto/fkey.c), under a fixed master key.
 *
 * Input layout (missing bytes read as zero):
 *   [0]      flags: bits 0-1 cipher (0 null, 1 aes-xts, 2 aes-cbc, 3 aes-xts),
 *            bits 2-3 block size (512, 1024, 4096, 65536), bit 4 re-MAC the
 *            header (so mutations get past the MAC to the fields behind it),
 *            bit 5 in-place transform, bit 6 raw 64-bit offset and file size
 *            (else: unit index and a small distance to the end of file)
 *   [1]      header length (0..255; 72 for version 1, 56 for version 2)
 *   [2..]    the header bytes, then 16 bytes of range parameters, then data.
 *
 * Checks: sc_fkey_new's result equals the one its contract (sc_crypto.h,
 * header.c) gives for these bytes -- computed here independently, with the
 * MAC recomputed from the volume's header MAC key; whenever encrypt accepts
 * a range, decrypt of the result accepts it too and gives the plaintext
 * back; a range of all-zero stored bytes in a file of 16 bytes or more
 * decrypts to zeros (a hole, format.md section 5).  The
 * buffers are allocated at their exact length so that ASan sees any byte
 * read or written past the range.
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
static struct sc_mkey *mkeys[3][4];	/* made on first use, kept for the run */

/*
 * At exit: a key holds OpenSSL objects (the journal's keyed MAC) that
 * LeakSanitizer cannot find through the key's locked memory, which it does
 * not scan.
 */
static void free_keys(void)
{
	for (unsigned c = 0; c < 3; c++)
		for (unsigned b = 0; b < 4; b++)
			sc_mkey_free(mkeys[c][b]);
}

static struct sc_mkey *volume_key(enum sc_cipher_id c, unsigned bsi)
{
	static const uint8_t master[SC_MASTER_KEY_LEN] = {
		0x5c, 0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96, 0xa5,
		0xb4, 0xc3, 0xd2, 0xe1, 0xf0, 0x01, 0x12, 0x23, 0x34, 0x45, 0x56, 0x67,
		0x78, 0x89, 0x9a, 0xab, 0xbc, 0xcd, 0xde, 0xef,
	};

	static bool once;

	if (!once)
		once = atexit(free_keys) == 0;
	if (mkeys[c][bsi] == NULL && sc_mkey_new(master, c, block_sizes[bsi], &mkeys[c][bsi]) != 0)
		abort();
	return mkeys[c][bsi];
}

static unsigned log2u(uint32_t v)
{
	unsigned l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

/* What sc_fkey_new must return for hdr (header.c's order of checks). */
static int expected(const struct sc_mkey *mk, const uint8_t *hdr, size_t len)
{
	uint8_t mac[32];

	if (len < 1)
		return -EINVAL;
	if (hdr[0] != 1 && hdr[0] != 2)
		return -EPROTONOSUPPORT;
	if (len != (hdr[0] == 1 ? 72u : 56u))
		return -EINVAL;
	if (sc_hmac_sha256(sc_mkey_header_mac_key(mk), 32, hdr, SC_HDR_MAC_OFF, mac) != 0)
		abort();
	if (memcmp(mac, hdr + SC_HDR_MAC_OFF, hdr[0] == 1 ? 32 : 16) != 0)
		return -EUCLEAN;
	if (hdr[3] != 0 || hdr[4] != 0 || hdr[5] != 0 || hdr[6] != 0 || hdr[7] != 0)
		return -EPROTONOSUPPORT;
	if (hdr[1] != (uint8_t)sc_mkey_cipher(mk) || hdr[2] != log2u(sc_mkey_block_size(mk)))
		return -EINVAL;
	return 0;
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void fail(const char *what, int a, int b)
{
	fprintf(stderr, "fuzz_header: %s (%d, %d)\n", what, a, b);
	abort();
}

/* Encrypt and decrypt one range of fk; checks the round trip and holes. */
static void ranges(struct sc_fkey *fk, uint8_t flags, const uint8_t *p, const uint8_t *rest,
		   size_t restlen)
{
	uint64_t bs = sc_fkey_block_size(fk), off, fsize;
	size_t len = (size_t)get_le(p, 4) % (3 * bs + 16);
	uint8_t *plain, *ct, *back;
	int re, rd;

	if (flags & 0x40) {
		off = get_le(p + 4, 8);
		fsize = get_le(p + 12, 4) | (get_le(p + 4, 1) << 56);
	} else {
		off = get_le(p + 4, 4) * bs;
		fsize = off + len + get_le(p + 12, 2) % (2 * bs);
	}
	plain = malloc(len ? len : 1);
	ct = malloc(len ? len : 1);
	back = malloc(len ? len : 1);
	if (plain == NULL || ct == NULL || back == NULL)
		abort();
	for (size_t i = 0; i < len; i++)
		plain[i] = restlen ? rest[i % restlen] : 0;

	memcpy(ct, plain, len);
	re = sc_fkey_encrypt(fk, off, flags & 0x20 ? ct : plain, ct, len, fsize);
	if (re != 0 && re != -EINVAL)
		fail("encrypt returned an errno outside its contract", re, 0);
	memcpy(back, ct, len);
	rd = sc_fkey_decrypt(fk, off, flags & 0x20 ? back : ct, back, len, fsize);
	if (re == 0 && rd != 0)
		fail("decrypt refused a range encrypt accepted", re, rd);
	/* An all-zero ciphertext decrypts to zeros whatever the plaintext: skip. */
	if (re == 0 && memcmp(back, plain, len) != 0) {
		int zero = 1;

		for (size_t i = 0; i < len && zero; i++)
			zero = ct[i] == 0;
		if (!zero)
			fail("decrypt(encrypt(x)) != x", (int)len, (int)(off / bs));
	}
	/* A hole: all-zero stored bytes read as zeros (format.md 5; tiny files
	 * have no hole rule). */
	memset(ct, 0, len);
	memset(back, 0xa5, len);
	rd = sc_fkey_decrypt(fk, off, ct, back, len, fsize);
	if (rd == 0 && fsize >= 16)
		for (size_t i = 0; i < len; i++)
			if (back[i] != 0)
				fail("a hole did not read as zeros", (int)i, (int)len);
	if (rd != re)
		fail("encrypt and decrypt disagree on the range rules", re, rd);
	free(back);
	free(ct);
	free(plain);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t flags = size > 0 ? data[0] : 0, params[16] = { 0 };
	unsigned cipher = flags & 3, bsi = (flags >> 2) & 3;
	size_t hlen = size > 1 ? data[1] : 0, have, restlen;
	const uint8_t *rest;
	struct sc_mkey *mk;
	struct sc_fkey *fk = NULL;
	uint8_t *hdr;
	int ret, want;

	if (cipher == 3)
		cipher = SC_CIPHER_AES_XTS;
	mk = volume_key((enum sc_cipher_id)cipher, bsi);
	have = size > 2 ? size - 2 : 0;
	if (hlen > have)
		hlen = have;
	/* exactly hlen bytes, so that ASan catches a read past the header */
	hdr = malloc(hlen ? hlen : 1);
	if (hdr == NULL)
		abort();
	memcpy(hdr, data + 2, hlen);
	if ((flags & 0x10) && hlen >= SC_HDR_MAC_OFF + 32) {
		uint8_t mac[32];	/* version 2 keeps the first 16 bytes; 1 keeps all */

		if (sc_hmac_sha256(sc_mkey_header_mac_key(mk), 32, hdr, SC_HDR_MAC_OFF, mac) != 0)
			abort();
		memcpy(hdr + SC_HDR_MAC_OFF, mac, hdr[0] == 2 ? 16 : 32);
	}
	rest = data + 2 + hlen;
	restlen = have - hlen;
	memcpy(params, rest, restlen < 16 ? restlen : 16);
	rest += restlen < 16 ? restlen : 16;
	restlen -= restlen < 16 ? restlen : 16;

	want = expected(mk, hdr, hlen);
	ret = sc_fkey_new(mk, hdr, hlen, &fk);
	if (ret != want)
		fail("sc_fkey_new result differs from its contract (got, want)", ret, want);
	free(hdr);
	if (ret != 0)
		return 0;
	if (sc_fkey_block_size(fk) != sc_mkey_block_size(mk))
		fail("file block size differs from the volume's", (int)sc_fkey_block_size(fk),
		     (int)sc_mkey_block_size(mk));
	ranges(fk, flags, params, rest, restlen);
	sc_fkey_free(fk);
	return 0;
}
