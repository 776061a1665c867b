/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_reverse.c - reverse mode's derivations (docs/format.md section 12):
 * identities, derived values and synthetic unit nonces recomputed from the
 * section with plain OpenSSL calls (HKDF and HMAC through EVP_KDF/EVP_MAC,
 * nothing of crypto/); units sealed with them open with sc_gcm_open, are
 * the same at every seal, and a changed unit alone changes; headers made
 * with a given file id verify; a symlink target sealed with a given nonce
 * opens at its place and is the same at every seal.
 */
#include <string.h>
#include <criterion/criterion.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include "sc_crypto.h"

static const uint8_t master[32] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

static char sha256[] = "SHA256";	/* OSSL_PARAM wants a char * */

/* HKDF-SHA256(master, no salt, label) into 32 bytes, with EVP_KDF alone. */
static void hkdf(const char *label, uint8_t out[32])
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, sha256, 0),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)master, 32),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)label,
						  strlen(label)),
		OSSL_PARAM_construct_end(),
	};

	cr_assert_eq(EVP_KDF_derive(ctx, out, 32, p), 1);
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
}

/* HMAC-SHA256(key, a || b || c), with EVP_MAC alone. */
static void hmac3(const uint8_t key[32], const void *a, size_t al, const void *b, size_t bl,
		  const void *c, size_t cl, uint8_t out[32])
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, sha256, 0),
		OSSL_PARAM_construct_end(),
	};
	size_t n = 0;

	cr_assert_eq(EVP_MAC_init(ctx, key, 32, p), 1);
	cr_assert_eq(EVP_MAC_update(ctx, a, al), 1);
	cr_assert_eq(EVP_MAC_update(ctx, b, bl), 1);
	cr_assert_eq(EVP_MAC_update(ctx, c, cl), 1);
	cr_assert_eq(EVP_MAC_final(ctx, out, &n, 32), 1);
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
}

static struct sc_mkey *mkey(void)
{
	struct sc_mkey *mk;

	cr_assert_eq(sc_mkey_new(master, SC_CIPHER_AES_GCM, 4096, &mk), 0);
	return mk;
}

Test(reverse, identities_and_derived_values_are_the_sections)
{
	struct sc_mkey *mk = mkey();
	struct sc_rkey *rk;
	uint8_t ki[32], root[32], child[32], want[32], got[16];
	const uint8_t t0 = 0, t1 = 1, d2[2] = { 2, SC_REV_FILE_ID }, d5[2] = { 2, SC_REV_LINK_NONCE };
	const uint8_t ino_msg[9] = { 3, 8, 7, 6, 5, 4, 3, 2, 1 };	/* 03 || LE64(ino) */

	cr_assert_eq(sc_rkey_new(mk, &rk), 0);
	hkdf("stackcrypt/v5 reverse-id", ki);
	cr_assert_eq(sc_rev_root(rk, root), 0);
	hmac3(ki, &t0, 1, "", 0, "", 0, want);
	cr_assert_arr_eq(root, want, 32, "I(root)");
	cr_assert_eq(sc_rev_child(rk, root, "späť", strlen("späť"), child), 0);
	hmac3(ki, &t1, 1, root, 32, "späť", strlen("späť"), want);
	cr_assert_arr_eq(child, want, 32, "I(root/späť)");
	cr_assert_eq(sc_rev_derive(rk, child, SC_REV_FILE_ID, NULL, 0, got), 0);
	hmac3(ki, d2, 2, child, 32, "", 0, want);
	cr_assert_arr_eq(got, want, 16, "file id");
	cr_assert_eq(sc_rev_derive(rk, child, SC_REV_LINK_NONCE, "target", 6, got), 0);
	hmac3(ki, d5, 2, child, 32, "target", 6, want);
	cr_assert_arr_eq(got, want, 16, "link nonce");
	cr_assert_eq(sc_rev_inode(rk, 0x0102030405060708ULL, child), 0);
	hmac3(ki, ino_msg, sizeof(ino_msg), "", 0, "", 0, want);
	cr_assert_arr_eq(child, want, 32, "I(inode 0x0102030405060708)");
	sc_rkey_free(rk);
	sc_mkey_free(mk);
}

/* Seals len bytes of pt from unit 0 of a file with id fid into st. */
static void seal(struct sc_mkey *mk, struct sc_rkey *rk, const uint8_t fid[16], const uint8_t *pt,
		 size_t len, uint8_t *st)
{
	uint8_t hdr[SC_GHDR_SIZE], id[16];
	struct sc_gkey *gk;

	cr_assert_eq(sc_ghdr_make(mk, fid, hdr), 0);
	cr_assert_eq(sc_ghdr_verify(mk, hdr, sizeof(hdr), id), 0);
	cr_assert_arr_eq(id, fid, 16);
	cr_assert_eq(sc_gkey_new(mk, hdr, sizeof(hdr), &gk), 0);
	cr_assert_eq(sc_rev_seal(rk, gk, 0, pt, len, st), 0);
	sc_gkey_free(gk);
}

Test(reverse, unit_nonces_are_synthetic)
{
	enum { BS = 4096, LEN = 3 * BS + 100, UNITS = 4 };
	static uint8_t pt[LEN], st1[LEN + UNITS * 32], st2[LEN + UNITS * 32], back[LEN];
	const uint8_t fid[16] = { 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
				  0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf };
	struct sc_mkey *mk = mkey();
	struct sc_rkey *rk;
	struct sc_gkey *gk;
	uint8_t ku[32], hdr[SC_GHDR_SIZE], want[32], le[8];

	cr_assert_eq(sc_rkey_new(mk, &rk), 0);
	hkdf("stackcrypt/v5 reverse-nonce", ku);
	for (size_t i = 0; i < LEN; i++)
		pt[i] = (uint8_t)(i * 7 + (i >> 9));
	seal(mk, rk, fid, pt, LEN, st1);
	for (unsigned u = 0; u < UNITS; u++) {
		size_t ulen = u + 1 < UNITS ? BS : LEN - u * BS;

		for (unsigned b = 0; b < 8; b++)
			le[b] = b == 0 ? (uint8_t)u : 0;
		hmac3(ku, fid, 16, le, 8, pt + u * BS, ulen, want);
		cr_assert_arr_eq(st1 + u * (BS + 32), want, 16, "nonce of unit %u", u);
	}
	cr_assert_eq(sc_ghdr_make(mk, fid, hdr), 0);
	cr_assert_eq(sc_gkey_new(mk, hdr, sizeof(hdr), &gk), 0);
	cr_assert_eq(sc_gcm_open(gk, 0, st1, sizeof(st1), back, NULL), LEN);
	cr_assert_arr_eq(back, pt, LEN, "a forward reader opens the units");
	seal(mk, rk, fid, pt, LEN, st2);
	cr_assert_arr_eq(st1, st2, sizeof(st1), "the same plaintext, the same bytes");
	pt[BS + 5] ^= 1;
	seal(mk, rk, fid, pt, LEN, st2);
	cr_assert_arr_eq(st1, st2, BS + 32, "unit 0 unchanged");
	cr_assert(memcmp(st1 + BS + 32, st2 + BS + 32, 16) != 0, "unit 1 got a new nonce");
	cr_assert_arr_eq(st1 + 2 * (BS + 32), st2 + 2 * (BS + 32), sizeof(st1) - 2 * (BS + 32),
			 "units 2 and 3 unchanged");
	sc_gkey_free(gk);
	sc_rkey_free(rk);
	sc_mkey_free(mk);
}

Test(reverse, a_target_sealed_with_a_given_nonce_opens_at_its_place)
{
	struct sc_mkey *mk = mkey();
	struct sc_nkey *nk;
	uint8_t dir[16], nonce[16];
	char enc[SC_NAME_ENC_MAX + 1], s1[SC_LINK_BOUND_ENC_MAX + 1], s2[SC_LINK_BOUND_ENC_MAX + 1];
	char back[SC_LINK_BOUND_PLAIN_MAX + 1];
	int elen, n1, n2;

	memset(dir, 0xa5, sizeof(dir));
	memset(nonce, 0xc3, sizeof(nonce));
	cr_assert_eq(sc_nkey_new(mk, &nk), 0);
	elen = sc_name_encrypt(nk, dir, "link", 4, enc);
	cr_assert_gt(elen, 0);
	struct sc_dirplace at = { dir, enc, (size_t)elen };

	n1 = sc_link_seal_nonce(nk, "../a/b", 6, &at, nonce, s1);
	n2 = sc_link_seal_nonce(nk, "../a/b", 6, &at, nonce, s2);
	cr_assert_gt(n1, 0);
	cr_assert_eq(n1, n2);
	cr_assert_arr_eq(s1, s2, (size_t)n1, "the same nonce, the same stored target");
	cr_assert_eq(sc_link_open(nk, s1, (size_t)n1, &at, back), 6);
	cr_assert_arr_eq(back, "../a/b", 6);
	sc_nkey_free(nk);
	sc_mkey_free(mk);
}
