/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_names.c - filename and symlink target encryption (crypto/names.c):
 * round trips over every length class and byte value, determinism per
 * directory, random nonces of targets, the shapes sc_name_kind tells apart,
 * the directory nonce record, and the rejection of every malformed or
 * tampered stored form (-EBADMSG, never a crash).  The known-answer
 * vectors are in test_names_kat.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "sc_crypto.h"
#include "crypto_i.h"
#include "kdf_labels_i.h"

static const uint8_t master[SC_MASTER_KEY_LEN] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
	0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};
static const uint8_t nonce_a[SC_DIRNONCE_LEN] = "0123456789abcdef";
static const uint8_t nonce_b[SC_DIRNONCE_LEN] = "0123456789abcdeg";

static struct sc_mkey *mk;
static struct sc_nkey *nk;

static void setup(void)
{
	cr_assert_eq(sc_mkey_new(master, SC_CIPHER_AES_XTS, 4096, &mk), 0);
	cr_assert_eq(sc_nkey_new(mk, &nk), 0);
}

static void teardown(void)
{
	sc_nkey_free(nk);
	sc_mkey_free(mk);
}

TestSuite(names, .init = setup, .fini = teardown);

static const size_t name_lens[] = { 1, 15, 16, 17, 143, 144, 160, 161, 175, 176, 255 };

/* A name of len bytes: printable, varied, never '/', never "." or "..". */
static void make_name(char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)('a' + (i * 7 + seed) % 26);
}

/* The length sc_name_encrypt must return for a name of len bytes. */
static size_t enc_len(size_t len)
{
	size_t n = 16 + (len + 15) / 16 * 16;

	return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

static void round_trip(const uint8_t *nonce, const char *name, size_t len)
{
	char enc[SC_NAME_ENC_MAX + 1], back[SC_NAME_PLAIN_MAX + 1];
	int e, d;

	e = sc_name_encrypt(nk, nonce, name, len, enc);
	cr_assert_eq(e, (int)enc_len(len), "encrypt of a %zu-byte name: %d", len, e);
	cr_assert_eq(strlen(enc), (size_t)e);
	cr_assert_eq(sc_name_kind(enc, (size_t)e),
		     e <= SC_NAME_SHORT_MAX ? SC_NAME_KIND_SHORT : SC_NAME_KIND_OTHER);
	d = sc_name_decrypt(nk, nonce, enc, (size_t)e, back);
	cr_assert_eq(d, (int)len, "decrypt of a %zu-byte name: %d", len, d);
	cr_assert_eq(memcmp(back, name, len), 0);
	cr_assert_eq(back[len], '\0');
}

Test(names, round_trip_every_length_class)
{
	char name[SC_NAME_PLAIN_MAX];

	for (size_t i = 0; i < sizeof(name_lens) / sizeof(name_lens[0]); i++) {
		make_name(name, name_lens[i], (unsigned)i);
		round_trip(nonce_a, name, name_lens[i]);
	}
	for (size_t len = 1; len <= SC_NAME_PLAIN_MAX; len++) {
		make_name(name, len, (unsigned)len);
		round_trip(nonce_b, name, len);
	}
}

Test(names, short_names_up_to_160_bytes)
{
	char name[SC_NAME_PLAIN_MAX], enc[SC_NAME_ENC_MAX + 1];

	make_name(name, 160, 1);
	cr_assert_leq(sc_name_encrypt(nk, nonce_a, name, 160, enc), SC_NAME_SHORT_MAX);
	make_name(name, 161, 1);
	cr_assert_gt(sc_name_encrypt(nk, nonce_a, name, 161, enc), SC_NAME_SHORT_MAX);
	make_name(name, 255, 1);
	cr_assert_eq(sc_name_encrypt(nk, nonce_a, name, 255, enc), SC_NAME_ENC_MAX);
}

/* Names holding every byte value 1..255 but '/', in 255-byte slices and alone. */
Test(names, round_trip_every_byte_value)
{
	char all[254], one[2];
	size_t n = 0;

	for (unsigned c = 1; c <= 255; c++)
		if (c != '/')
			all[n++] = (char)c;
	cr_assert_eq(n, sizeof(all));
	round_trip(nonce_a, all, n);
	for (size_t off = 0; off < n; off += 17)
		round_trip(nonce_a, all + off, n - off < 40 ? n - off : 40);
	for (unsigned c = 1; c <= 255; c++) {
		if (c == '/' || c == '.')
			continue;
		one[0] = (char)c;
		round_trip(nonce_b, one, 1);
		one[1] = (char)c;
		round_trip(nonce_b, one, 2);
	}
	round_trip(nonce_a, "...", 3);
	round_trip(nonce_a, ".a", 2);
}

Test(names, deterministic_per_directory)
{
	char e1[SC_NAME_ENC_MAX + 1], e2[SC_NAME_ENC_MAX + 1], e3[SC_NAME_ENC_MAX + 1];
	struct sc_nkey *nk2;

	cr_assert_gt(sc_name_encrypt(nk, nonce_a, "hello.txt", 9, e1), 0);
	cr_assert_gt(sc_name_encrypt(nk, nonce_a, "hello.txt", 9, e2), 0);
	cr_assert_str_eq(e1, e2, "same name, same nonce: same output");
	/* Another nkey from the same master key gives the same names. */
	cr_assert_eq(sc_nkey_new(mk, &nk2), 0);
	cr_assert_gt(sc_name_encrypt(nk2, nonce_a, "hello.txt", 9, e3), 0);
	sc_nkey_free(nk2);
	cr_assert_str_eq(e1, e3);
	cr_assert_gt(sc_name_encrypt(nk, nonce_b, "hello.txt", 9, e2), 0);
	cr_assert_str_neq(e1, e2, "two directories: two encodings");
}

static void link_round_trip(const char *t, size_t len)
{
	char enc[SC_LINK_ENC_MAX + 1], back[SC_LINK_PLAIN_MAX + 1];
	int e, d;

	e = sc_link_encrypt(nk, t, len, enc);
	cr_assert_gt(e, 0, "encrypt of a %zu-byte target: %d", len, e);
	cr_assert_leq(e, SC_LINK_ENC_MAX);
	cr_assert_eq(strlen(enc), (size_t)e);
	d = sc_link_decrypt(nk, enc, (size_t)e, back);
	cr_assert_eq(d, (int)len, "decrypt of a %zu-byte target: %d", len, d);
	cr_assert_eq(memcmp(back, t, len), 0);
	cr_assert_eq(back[len], '\0');
}

Test(names, link_round_trip_1_to_3024)
{
	static char t[SC_LINK_PLAIN_MAX + 1];
	char enc[SC_LINK_ENC_MAX + 1];

	for (size_t i = 0; i < sizeof(t); i++)
		t[i] = (char)(1 + i % 255);	/* every byte but NUL, '/' included */
	for (size_t len = 1; len <= SC_LINK_PLAIN_MAX; len++)
		link_round_trip(t, len);
	link_round_trip(".", 1);
	link_round_trip("..", 2);
	link_round_trip("../a/b", 6);
	cr_assert_eq(sc_link_encrypt(nk, t, SC_LINK_PLAIN_MAX + 1, enc), -ENAMETOOLONG);
	cr_assert_eq(sc_link_encrypt(nk, t, 0, enc), -EINVAL);
	cr_assert_eq(sc_link_encrypt(nk, "a\0b", 3, enc), -EINVAL);
}

Test(names, link_nonce_is_random)
{
	char e1[SC_LINK_ENC_MAX + 1], e2[SC_LINK_ENC_MAX + 1];

	cr_assert_gt(sc_link_encrypt(nk, "/etc/passwd", 11, e1), 0);
	cr_assert_gt(sc_link_encrypt(nk, "/etc/passwd", 11, e2), 0);
	cr_assert_str_neq(e1, e2);
}

Test(names, encrypt_refuses_what_is_not_a_name)
{
	char enc[SC_NAME_ENC_MAX + 1], name[SC_NAME_PLAIN_MAX + 1];

	make_name(name, sizeof(name), 0);
	cr_assert_eq(sc_name_encrypt(nk, nonce_a, name, 0, enc), -EINVAL);
	cr_assert_eq(sc_name_encrypt(nk, nonce_a, ".", 1, enc), -EINVAL);
	cr_assert_eq(sc_name_encrypt(nk, nonce_a, "..", 2, enc), -EINVAL);
	cr_assert_eq(sc_name_encrypt(nk, nonce_a, "a/b", 3, enc), -EINVAL);
	cr_assert_eq(sc_name_encrypt(nk, nonce_a, "a\0b", 3, enc), -EINVAL);
	cr_assert_eq(sc_name_encrypt(nk, nonce_a, name, SC_NAME_PLAIN_MAX + 1, enc),
		     -ENAMETOOLONG);
}

Test(names, long_form)
{
	char name[SC_NAME_PLAIN_MAX], enc[SC_NAME_ENC_MAX + 1], l1[SC_NAME_LONG_LEN + 1];
	char l2[SC_NAME_LONG_LEN + 1], side[SC_NAME_LONG_LEN + 8];
	int e;

	make_name(name, 200, 3);
	e = sc_name_encrypt(nk, nonce_a, name, 200, enc);
	cr_assert_gt(e, SC_NAME_SHORT_MAX);
	cr_assert_eq(sc_name_long(enc, (size_t)e, l1), 0);
	cr_assert_eq(strlen(l1), SC_NAME_LONG_LEN);
	cr_assert_eq(strncmp(l1, "sc.", 3), 0);
	cr_assert_eq(sc_name_kind(l1, SC_NAME_LONG_LEN), SC_NAME_KIND_LONG);
	snprintf(side, sizeof(side), "%s%s", l1, SC_NAME_SIDE_SUFFIX);
	cr_assert_eq(sc_name_kind(side, strlen(side)), SC_NAME_KIND_SIDE);
	enc[0] ^= 1;
	cr_assert_eq(sc_name_long(enc, (size_t)e, l2), 0);
	cr_assert_str_neq(l1, l2);
}

Test(names, dirnonce_record)
{
	uint8_t rec[SC_DIRNONCE_REC_LEN], rec2[SC_DIRNONCE_REC_LEN], n[SC_DIRNONCE_LEN];

	cr_assert_eq(sc_dirnonce_new(rec), 0);
	cr_assert_eq(sc_dirnonce_new(rec2), 0);
	cr_assert_eq(rec[0], 1);
	cr_assert_neq(memcmp(rec + 1, rec2 + 1, SC_DIRNONCE_LEN), 0);
	cr_assert_eq(sc_dirnonce_parse(rec, sizeof(rec), n), 0);
	cr_assert_eq(memcmp(n, rec + 1, SC_DIRNONCE_LEN), 0);
}

Test(names, dirnonce_parse_rejects)
{
	uint8_t rec[SC_DIRNONCE_REC_LEN + 1], n[SC_DIRNONCE_LEN];

	cr_assert_eq(sc_dirnonce_new(rec), 0);
	rec[SC_DIRNONCE_REC_LEN] = 0;
	cr_assert_eq(sc_dirnonce_parse(rec, 0, n), -EUCLEAN);
	cr_assert_eq(sc_dirnonce_parse(rec, 1, n), -EUCLEAN);
	cr_assert_eq(sc_dirnonce_parse(rec, SC_DIRNONCE_REC_LEN - 1, n), -EUCLEAN);
	cr_assert_eq(sc_dirnonce_parse(rec, SC_DIRNONCE_REC_LEN + 1, n), -EUCLEAN);
	/* The version is read first: a later version may have another length. */
	rec[0] = 3;
	cr_assert_eq(sc_dirnonce_parse(rec, SC_DIRNONCE_REC_LEN, n), -EPROTONOSUPPORT);
	cr_assert_eq(sc_dirnonce_parse(rec, SC_DIRNONCE_REC_LEN + 1, n), -EPROTONOSUPPORT);
	/* Version 2 has its own lengths: 33 (one place) and 49 (two, during a rename). */
	rec[0] = 2;
	cr_assert_eq(sc_dirnonce_parse(rec, SC_DIRNONCE_REC_LEN, n), -EUCLEAN);
	rec[0] = 0;
	cr_assert_eq(sc_dirnonce_parse(rec, SC_DIRNONCE_REC_LEN, n), -EPROTONOSUPPORT);
	rec[0] = 0xff;
	cr_assert_eq(sc_dirnonce_parse(rec, SC_DIRNONCE_REC_LEN, n), -EPROTONOSUPPORT);
}

/* ---- rejections: every malformed or tampered stored form is -EBADMSG ---- */

/* base64url without padding by OpenSSL's encoder (not names.c's). */
static size_t b64url(const uint8_t *in, size_t n, char *out)
{
	int len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);

	cr_assert_geq(len, 0);
	while (len > 0 && out[len - 1] == '=')
		len--;
	out[len] = '\0';
	for (int i = 0; i < len; i++)
		out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
	return (size_t)len;
}

/* The names key or the symlink key of the test volume, derived here. */
static void test_key(const char *label, uint8_t k[64])
{
	cr_assert_eq(sc_hkdf_sha256(master, sizeof(master), NULL, 0, label, strlen(label),
				    k, 64), 0);
}

/* An encoded name whose plaintext is exactly the plen bytes p (no padding
 * added), made with the raw SIV routine under the key of label. */
static size_t craft_name_key(const char *label, const uint8_t *nonce, const void *p,
			     size_t plen, char *out)
{
	uint8_t k[64], ct[16 + 512];
	const struct sc_siv_ad ad = { nonce, SC_DIRNONCE_LEN };

	test_key(label, k);
	cr_assert_eq(sc_siv(k, sizeof(k), 1, &ad, 1, p, plen, ct), 0);
	return b64url(ct, 16 + plen, out);
}

static size_t craft_name(const uint8_t *nonce, const void *p, size_t plen, char *out)
{
	return craft_name_key(SC_LABEL_NAMES_KEY, nonce, p, plen, out);
}

/* A stored target whose plaintext is exactly the plen bytes p, under the
 * key of label. */
static size_t craft_link_key(const char *label, const void *p, size_t plen, char *out)
{
	static const uint8_t n[16] = "link-nonce-16-by";
	uint8_t k[64], buf[32 + 4096];
	const struct sc_siv_ad ad = { n, sizeof(n) };

	test_key(label, k);
	memcpy(buf, n, sizeof(n));
	cr_assert_eq(sc_siv(k, sizeof(k), 1, &ad, 1, p, plen, buf + 16), 0);
	return b64url(buf, 32 + plen, out);
}

static size_t craft_link(const void *p, size_t plen, char *out)
{
	return craft_link_key(SC_LABEL_SYMLINK_KEY, p, plen, out);
}

static int dec_name(const char *enc, size_t len)
{
	char back[SC_NAME_PLAIN_MAX + 1];

	return sc_name_decrypt(nk, nonce_a, enc, len, back);
}

static int dec_link(const char *enc, size_t len)
{
	char back[SC_LINK_PLAIN_MAX + 1];

	return sc_link_decrypt(nk, enc, len, back);
}

/* Every replacement of every character of enc by every other byte value. */
static void every_change(const char *enc0, size_t len, int (*dec)(const char *, size_t))
{
	char *enc = malloc(len + 1);

	cr_assert_not_null(enc);
	memcpy(enc, enc0, len + 1);
	cr_assert_gt(dec(enc, len), 0, "the unchanged form decrypts");
	for (size_t i = 0; i < len; i++) {
		for (unsigned c = 0; c <= 255; c++) {
			if (c == (uint8_t)enc0[i])
				continue;
			enc[i] = (char)c;
			cr_assert_eq(dec(enc, len), -EBADMSG, "byte %zu -> 0x%02x", i, c);
		}
		enc[i] = enc0[i];
	}
	free(enc);
}

Test(names, reject_every_single_character_change)
{
	char name[SC_NAME_PLAIN_MAX], enc[SC_NAME_ENC_MAX + 1];
	static const size_t lens[] = { 1, 17, 255 };

	for (size_t i = 0; i < 3; i++) {
		int e;

		make_name(name, lens[i], 9);
		e = sc_name_encrypt(nk, nonce_a, name, lens[i], enc);
		cr_assert_gt(e, 0);
		every_change(enc, (size_t)e, dec_name);
	}
}

Test(names, reject_link_single_character_change)
{
	char enc[SC_LINK_ENC_MAX + 1];
	int e = sc_link_encrypt(nk, "../some/where/else", 18, enc);

	cr_assert_gt(e, 0);
	every_change(enc, (size_t)e, dec_link);
}

Test(names, reject_wrong_nonce_and_wrong_key)
{
	static const char pad16[16] = "name";	/* "name" and 12 NULs */
	char enc[SC_LINK_ENC_MAX + 1], back[SC_LINK_PLAIN_MAX + 1];
	uint8_t other[SC_MASTER_KEY_LEN];
	struct sc_mkey *mk2;
	struct sc_nkey *nk2;
	int e = sc_name_encrypt(nk, nonce_a, "report.pdf", 10, enc);

	cr_assert_gt(e, 0);
	cr_assert_eq(sc_name_decrypt(nk, nonce_b, enc, (size_t)e, back), -EBADMSG);
	memcpy(other, master, sizeof(other));
	other[31] ^= 1;
	cr_assert_eq(sc_mkey_new(other, SC_CIPHER_AES_XTS, 4096, &mk2), 0);
	cr_assert_eq(sc_nkey_new(mk2, &nk2), 0);
	cr_assert_eq(sc_name_decrypt(nk2, nonce_a, enc, (size_t)e, back), -EBADMSG);
	e = sc_link_encrypt(nk, "report.pdf", 10, enc);
	cr_assert_gt(e, 0);
	cr_assert_eq(sc_link_decrypt(nk2, enc, (size_t)e, back), -EBADMSG);
	/* Names and targets have two keys: each layout made under the other's
	 * key is refused (the controls show the crafting is right). */
	e = (int)craft_name_key(SC_LABEL_NAMES_KEY, nonce_a, pad16, 16, enc);
	cr_assert_eq(sc_name_decrypt(nk, nonce_a, enc, (size_t)e, back), 4);
	e = (int)craft_name_key(SC_LABEL_SYMLINK_KEY, nonce_a, pad16, 16, enc);
	cr_assert_eq(sc_name_decrypt(nk, nonce_a, enc, (size_t)e, back), -EBADMSG);
	e = (int)craft_link_key(SC_LABEL_SYMLINK_KEY, pad16, 16, enc);
	cr_assert_eq(sc_link_decrypt(nk, enc, (size_t)e, back), 4);
	e = (int)craft_link_key(SC_LABEL_NAMES_KEY, pad16, 16, enc);
	cr_assert_eq(sc_link_decrypt(nk, enc, (size_t)e, back), -EBADMSG);
	sc_nkey_free(nk2);
	sc_mkey_free(mk2);
}

Test(names, reject_truncation_and_extension)
{
	char name[SC_NAME_PLAIN_MAX], enc[SC_NAME_ENC_MAX + 2], lenc[SC_LINK_ENC_MAX + 2];
	int e, l;

	make_name(name, 200, 4);
	e = sc_name_encrypt(nk, nonce_a, name, 200, enc);
	l = sc_link_encrypt(nk, name, 200, lenc);
	cr_assert_gt(e, 0);
	cr_assert_gt(l, 0);
	for (int n = 0; n < e; n++)
		cr_assert_eq(dec_name(enc, (size_t)n), -EBADMSG, "prefix of %d", n);
	for (int n = 0; n < l; n++)
		cr_assert_eq(dec_link(lenc, (size_t)n), -EBADMSG, "prefix of %d", n);
	enc[e] = 'A';
	enc[e + 1] = '\0';
	cr_assert_eq(dec_name(enc, (size_t)e + 1), -EBADMSG);
	lenc[l] = 'A';
	lenc[l + 1] = '\0';
	cr_assert_eq(dec_link(lenc, (size_t)l + 1), -EBADMSG);
}

Test(names, reject_non_canonical_base64_and_alphabet)
{
	char enc[SC_NAME_ENC_MAX + 8], bad[SC_NAME_ENC_MAX + 8];
	int e = sc_name_encrypt(nk, nonce_a, "x", 1, enc);	/* 32 bytes: 43 chars */
	uint8_t last;

	cr_assert_eq(e, 43);
	cr_assert_gt(dec_name(enc, 43), 0);
	/* The last character carries 4 bits of byte 31 and 2 unused bits. */
	memcpy(bad, enc, 44);
	last = (uint8_t)(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
				enc[42]) - "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
	cr_assert_eq(last & 3, 0);
	for (unsigned u = 1; u < 4; u++) {
		bad[42] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last | u];
		cr_assert_eq(dec_name(bad, 43), -EBADMSG, "unused bits %u", u);
	}
	/* '=' padding, standard-alphabet characters, a NUL inside. */
	memcpy(bad, enc, 43);
	bad[43] = '=';
	cr_assert_eq(dec_name(bad, 44), -EBADMSG);
	memcpy(bad, enc, 44);
	for (const char *p = "+/=.\0 \n"; ; p++) {
		bad[10] = *p;
		cr_assert_eq(dec_name(bad, 43), -EBADMSG, "0x%02x", (uint8_t)*p);
		if (*p == '\n')
			break;
	}
}

/* Random stored forms of every decoded length: none is a name. */
Test(names, reject_length_classes)
{
	uint8_t raw[3100];
	char enc[4200];

	cr_assert_eq(sc_random(raw, sizeof(raw)), 0);
	for (size_t n = 0; n <= 16 + 256 + 3; n++) {
		size_t len = b64url(raw, n, enc);

		cr_assert_eq(dec_name(enc, len), -EBADMSG, "%zu random bytes", n);
	}
	for (size_t n = 0; n <= sizeof(raw); n += (n < 80 ? 1 : 37)) {
		size_t len = b64url(raw, n, enc);

		cr_assert_eq(dec_link(enc, len), -EBADMSG, "%zu random bytes", n);
	}
	/* Lengths no encoding has (len % 4 == 1), and beyond the maxima. */
	memset(enc, 'A', sizeof(enc));
	for (size_t len = 1; len < 400; len += 4)
		cr_assert_eq(dec_name(enc, len), -EBADMSG, "%zu characters", len);
	cr_assert_eq(dec_name(enc, SC_NAME_ENC_MAX + 1), -EBADMSG);
	cr_assert_eq(dec_link(enc, SC_LINK_ENC_MAX + 1), -EBADMSG);
	cr_assert_eq(dec_link(enc, 4097), -EBADMSG);
}

/* Plaintexts no encryption makes, under the right key and nonce. */
Test(names, reject_crafted_plaintexts)
{
	static const struct { const char *p; size_t len; const char *why; } bad[] = {
		{ ".\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, "\".\"" },
		{ "..\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, "\"..\"" },
		{ "a/b\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, "a slash" },
		{ "/\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, "a slash alone" },
		{ "a\0b\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, "an inner NUL" },
		{ "\0abcdefghijklmno", 16, "a leading NUL" },
		{ "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, "empty" },
		{ "a\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 32,
		  "16 bytes of padding too many" },
	};
	char enc[SC_NAME_ENC_MAX + 64], back[SC_NAME_PLAIN_MAX + 1];
	uint8_t p[272];
	size_t len;

	/* Controls: the crafting makes names that decrypt. */
	len = craft_name(nonce_a, "abc\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, enc);
	cr_assert_eq(sc_name_decrypt(nk, nonce_a, enc, len, back), 3);
	cr_assert_str_eq(back, "abc");
	memset(p, 'q', 255);
	p[255] = '\0';
	len = craft_name(nonce_a, p, 256, enc);
	cr_assert_eq(sc_name_decrypt(nk, nonce_a, enc, len, back), 255);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		len = craft_name(nonce_a, bad[i].p, bad[i].len, enc);
		cr_assert_eq(sc_name_decrypt(nk, nonce_a, enc, len, back), -EBADMSG, "%s",
			     bad[i].why);
	}
	/* 256 bytes without a NUL: a name longer than NAME_MAX. */
	memset(p, 'q', 256);
	len = craft_name(nonce_a, p, 256, enc);
	cr_assert_eq(sc_name_decrypt(nk, nonce_a, enc, len, back), -EBADMSG);
	/* '/' anywhere in a long name. */
	memset(p, 'q', 255);
	p[255] = '\0';
	p[200] = '/';
	len = craft_name(nonce_a, p, 256, enc);
	cr_assert_eq(sc_name_decrypt(nk, nonce_a, enc, len, back), -EBADMSG);
}

Test(names, reject_crafted_link_plaintexts)
{
	static const struct { const char *p; size_t len; const char *why; } bad[] = {
		{ "a\0b\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, "an inner NUL" },
		{ "\0/etc/passwd\0\0\0\0", 16, "a leading NUL" },
		{ "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, "empty" },
		{ "a\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 32,
		  "16 bytes of padding too many" },
	};
	char enc[SC_LINK_ENC_MAX + 64], back[SC_LINK_PLAIN_MAX + 1];
	size_t len;

	/* Controls: ".", "..", slashes are fine in a target. */
	len = craft_link("..\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, enc);
	cr_assert_eq(sc_link_decrypt(nk, enc, len, back), 2);
	len = craft_link("/a/b\0\0\0\0\0\0\0\0\0\0\0\0", 16, enc);
	cr_assert_eq(sc_link_decrypt(nk, enc, len, back), 4);
	cr_assert_str_eq(back, "/a/b");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		len = craft_link(bad[i].p, bad[i].len, enc);
		cr_assert_eq(sc_link_decrypt(nk, enc, len, back), -EBADMSG, "%s", bad[i].why);
	}
}

/* ---- sc_name_kind ---- */

#define KIND(s) sc_name_kind((s), strlen(s))

Test(names, kind_of_every_class)
{
	char name[SC_NAME_PLAIN_MAX], enc[SC_NAME_ENC_MAX + 1], lng[SC_NAME_LONG_LEN + 1];
	char buf[SC_NAME_ENC_MAX + 16];
	int e;

	/* Every encoded length of a short name, and the first that is not. */
	for (size_t len = 1; len <= SC_NAME_PLAIN_MAX; len++) {
		make_name(name, len, 2);
		e = sc_name_encrypt(nk, nonce_a, name, len, enc);
		cr_assert_eq(sc_name_kind(enc, (size_t)e),
			     len <= 160 ? SC_NAME_KIND_SHORT : SC_NAME_KIND_OTHER, "%zu", len);
		cr_assert_eq(sc_name_long(enc, (size_t)e, lng), 0);
		cr_assert_eq(KIND(lng), SC_NAME_KIND_LONG);
		snprintf(buf, sizeof(buf), "%s.name", lng);
		cr_assert_eq(KIND(buf), SC_NAME_KIND_SIDE);
	}
	/* 255 vs 256 alphabet characters: 255 has no byte length of a name
	 * (191 bytes), 256 (192 bytes) does but needs the long form. */
	memset(buf, 'A', 256);
	cr_assert_eq(sc_name_kind(buf, 235), SC_NAME_KIND_SHORT);
	cr_assert_eq(sc_name_kind(buf, 255), SC_NAME_KIND_OTHER);
	cr_assert_eq(sc_name_kind(buf, 256), SC_NAME_KIND_OTHER);
	cr_assert_eq(sc_name_kind(buf, 43), SC_NAME_KIND_SHORT);
	cr_assert_eq(sc_name_kind(buf, 42), SC_NAME_KIND_OTHER);	/* 31 bytes */
	cr_assert_eq(sc_name_kind(buf, 44), SC_NAME_KIND_OTHER);	/* 33 bytes */
	cr_assert_eq(sc_name_kind(buf, 64), SC_NAME_KIND_SHORT);	/* 48 bytes */
	buf[42] = 'B';		/* non-zero unused bits */
	cr_assert_eq(sc_name_kind(buf, 43), SC_NAME_KIND_OTHER);
	buf[42] = 'E';
	cr_assert_eq(sc_name_kind(buf, 43), SC_NAME_KIND_SHORT);
	buf[10] = '.';
	cr_assert_eq(sc_name_kind(buf, 43), SC_NAME_KIND_OTHER);

	cr_assert_eq(KIND("."), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND(".."), SC_NAME_KIND_OTHER);
	cr_assert_eq(sc_name_kind("", 0), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND(".stackcrypt.conf"), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND("lost+found"), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND("hello.txt"), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND("sc."), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND("sc.name"), SC_NAME_KIND_OTHER);
}

Test(names, kind_long_side_tmp_boundaries)
{
	char lng[SC_NAME_LONG_LEN + 1], buf[128];

	cr_assert_eq(sc_name_long("abc", 3, lng), 0);
	cr_assert_eq(KIND(lng), SC_NAME_KIND_LONG);
	/* 45 and 47 characters: near misses. */
	cr_assert_eq(sc_name_kind(lng, 45), SC_NAME_KIND_OTHER);
	snprintf(buf, sizeof(buf), "%sA", lng);
	cr_assert_eq(KIND(buf), SC_NAME_KIND_OTHER);
	snprintf(buf, sizeof(buf), "%.45s.name", lng);
	cr_assert_eq(KIND(buf), SC_NAME_KIND_OTHER);
	snprintf(buf, sizeof(buf), "%sA.name", lng);
	cr_assert_eq(KIND(buf), SC_NAME_KIND_OTHER);
	snprintf(buf, sizeof(buf), "%s.nam", lng);
	cr_assert_eq(KIND(buf), SC_NAME_KIND_OTHER);
	snprintf(buf, sizeof(buf), "%s.names", lng);
	cr_assert_eq(KIND(buf), SC_NAME_KIND_OTHER);
	snprintf(buf, sizeof(buf), "%s.NAME", lng);
	cr_assert_eq(KIND(buf), SC_NAME_KIND_OTHER);
	/* Not base64url after "sc.", or non-zero unused bits (43 characters
	 * carry 256 bits + 2 unused). */
	snprintf(buf, sizeof(buf), "%s", lng);
	buf[20] = '.';
	cr_assert_eq(KIND(buf), SC_NAME_KIND_OTHER);
	snprintf(buf, sizeof(buf), "sc.%s", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
	cr_assert_eq(KIND(buf), SC_NAME_KIND_LONG);
	buf[45] = 'B';
	cr_assert_eq(KIND(buf), SC_NAME_KIND_OTHER);
	snprintf(buf, sizeof(buf), "SC.%s", lng + 3);
	cr_assert_eq(KIND(buf), SC_NAME_KIND_OTHER);

	cr_assert_eq(KIND("sc.new.0123456789abcdef0123456789abcdef"), SC_NAME_KIND_TMP);
	cr_assert_eq(KIND("sc.new.00000000000000000000000000000000"), SC_NAME_KIND_TMP);
	cr_assert_eq(KIND("sc.new.0123456789ABCDEF0123456789abcdef"), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND("sc.new.0123456789abcdef0123456789abcde"), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND("sc.new.0123456789abcdef0123456789abcdef0"), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND("sc.new.0123456789abcdef0123456789abcdeg"), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND("sc.new."), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND("sc.old.0123456789abcdef0123456789abcdef"), SC_NAME_KIND_OTHER);

	/* The file form of a directory's nonce record: that name exactly. */
	cr_assert_eq(KIND(SC_DIRNONCE_FILE), SC_NAME_KIND_NONCE);
	cr_assert_eq(KIND("sc.nonc"), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND("sc.nonces"), SC_NAME_KIND_OTHER);
	cr_assert_eq(KIND("sc.NONCE"), SC_NAME_KIND_OTHER);
	cr_assert_eq(sc_name_kind("sc.nonce\0", 9), SC_NAME_KIND_OTHER);
}

/* ---- one nkey shared by threads (the names translator's use) ---- */

#define N_THREADS	4
#define N_NAMES		(sizeof(name_lens) / sizeof(name_lens[0]))

static char shared_enc[N_NAMES][SC_NAME_ENC_MAX + 1];

static void *hammer(void *arg)
{
	char name[SC_NAME_PLAIN_MAX], enc[SC_NAME_ENC_MAX + 1], back[SC_LINK_PLAIN_MAX + 1];
	char lenc[SC_LINK_ENC_MAX + 1];
	long bad = 0;

	(void)arg;
	for (int round = 0; round < 300; round++) {
		for (size_t i = 0; i < N_NAMES; i++) {
			int e;

			make_name(name, name_lens[i], (unsigned)i);
			e = sc_name_encrypt(nk, nonce_a, name, name_lens[i], enc);
			bad += e < 0 || strcmp(enc, shared_enc[i]) != 0;
			bad += sc_name_decrypt(nk, nonce_a, shared_enc[i], strlen(shared_enc[i]),
					       back) != (int)name_lens[i] ||
			       memcmp(back, name, name_lens[i]) != 0;
			e = sc_link_encrypt(nk, name, name_lens[i], lenc);
			bad += e < 0 || sc_link_decrypt(nk, lenc, (size_t)e, back) !=
					(int)name_lens[i];
		}
	}
	return (void *)bad;
}

Test(names, threads_share_one_nkey)
{
	pthread_t t[N_THREADS];
	char name[SC_NAME_PLAIN_MAX];

	for (size_t i = 0; i < N_NAMES; i++) {
		make_name(name, name_lens[i], (unsigned)i);
		cr_assert_gt(sc_name_encrypt(nk, nonce_a, name, name_lens[i], shared_enc[i]), 0);
	}
	for (int i = 0; i < N_THREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, hammer, NULL), 0);
	for (int i = 0; i < N_THREADS; i++) {
		void *bad;

		cr_assert_eq(pthread_join(t[i], &bad), 0);
		cr_assert_eq((long)bad, 0, "thread %d: %ld wrong results", i, (long)bad);
	}
}

/* ---- bound symlink targets (SC_FEAT_LINKS_BOUND, docs/format.md 9.5) ---- */

static const struct sc_dirplace place_a = { nonce_a, "linkname-a", 10 };

static void bound_round_trip(const char *t, size_t len)
{
	static char enc[SC_LINK_BOUND_ENC_MAX + 1], back[SC_LINK_BOUND_PLAIN_MAX + 1];
	int e, d;

	e = sc_link_seal(nk, t, len, &place_a, enc);
	cr_assert_gt(e, 0, "seal of a %zu-byte target: %d", len, e);
	cr_assert_leq(e, SC_LINK_BOUND_ENC_MAX);
	cr_assert_eq(strlen(enc), (size_t)e);
	/* 48 bytes before the padded text, base64url: the length says which form it takes */
	cr_assert_eq((size_t)e, (4 * (48 + (len + 15) / 16 * 16) + 2) / 3);
	d = sc_link_open(nk, enc, (size_t)e, &place_a, back);
	cr_assert_eq(d, (int)len, "open of a %zu-byte target: %d", len, d);
	cr_assert_eq(memcmp(back, t, len), 0);
	cr_assert_eq(back[len], '\0');
}

Test(names, bound_round_trip_1_to_4095)
{
	static char t[SC_LINK_BOUND_PLAIN_MAX + 2];
	char *enc = malloc(SC_LINK_BOUND_ENC_MAX + 1);

	for (size_t i = 0; i < sizeof(t); i++)
		t[i] = (char)(1 + i % 255);
	for (size_t len = 1; len <= SC_LINK_BOUND_PLAIN_MAX; len += len < 64 ? 1 : 61)
		bound_round_trip(t, len);
	for (size_t len = 3000; len <= 3030; len++)	/* around the inline/side-file boundary */
		bound_round_trip(t, len);
	bound_round_trip(t, SC_LINK_BOUND_PLAIN_MAX);
	cr_assert_eq(sc_link_seal(nk, t, SC_LINK_BOUND_PLAIN_MAX + 1, &place_a, enc),
		     -ENAMETOOLONG);
	cr_assert_eq(sc_link_seal(nk, t, 0, &place_a, enc), -EINVAL);
	cr_assert_eq(sc_link_seal(nk, "a\0b", 3, &place_a, enc), -EINVAL);
	free(enc);
}

/* 3008 bytes is the longest target whose stored form fits a backing symlink (4095). */
Test(names, bound_inline_limit)
{
	static char t[3009], enc[SC_LINK_BOUND_ENC_MAX + 1];

	memset(t, 'x', sizeof(t));
	cr_assert_leq(sc_link_seal(nk, t, 3008, &place_a, enc), SC_LINK_ENC_MAX);
	cr_assert_gt(sc_link_seal(nk, t, 3009, &place_a, enc), SC_LINK_ENC_MAX);
}

/* A target opens only at its place: another directory, another name: -ESTALE. */
Test(names, bound_target_opens_only_at_its_place)
{
	static char enc[SC_LINK_BOUND_ENC_MAX + 1], back[SC_LINK_BOUND_PLAIN_MAX + 1];
	const struct sc_dirplace other_dir = { nonce_b, "linkname-a", 10 };
	const struct sc_dirplace other_name = { nonce_a, "linkname-b", 10 };
	const struct sc_dirplace longer_name = { nonce_a, "linkname-a2", 11 };
	int e = sc_link_seal(nk, "/usr/bin/python3", 16, &place_a, enc);

	cr_assert_gt(e, 0);
	cr_assert_eq(sc_link_open(nk, enc, (size_t)e, &other_dir, back), -ESTALE);
	cr_assert_eq(sc_link_open(nk, enc, (size_t)e, &other_name, back), -ESTALE);
	cr_assert_eq(sc_link_open(nk, enc, (size_t)e, &longer_name, back), -ESTALE);
	/* fsck --repair's view: no place checked, the target is this volume's */
	cr_assert_eq(sc_link_open(nk, enc, (size_t)e, NULL, back), 16);
	cr_assert_str_eq(back, "/usr/bin/python3");
	cr_assert_eq(sc_link_open(nk, enc, (size_t)e, &place_a, back), 16);
}

/*
 * Every byte of a stored form, damaged (XOR, never a fixed value): the
 * nonce and SIV tag or the ciphertext give -EBADMSG, the place tag
 * -ESTALE (the SIV part still opens: fsck could only rebind it).
 */
Test(names, bound_target_damage)
{
	static char enc[SC_LINK_BOUND_ENC_MAX + 1], back[SC_LINK_BOUND_PLAIN_MAX + 1];
	static uint8_t raw[48 + 32];
	char forged[256];
	int e = sc_link_seal(nk, "../some/where", 13, &place_a, enc);

	cr_assert_eq(e, (4 * (48 + 16) + 2) / 3);
	/* decoded by OpenSSL's decoder; each byte flipped, re-encoded, opened */
	{
		char std[128];
		int n;

		for (int i = 0; i < e; i++)
			std[i] = enc[i] == '-' ? '+' : enc[i] == '_' ? '/' : enc[i];
		while (e % 4)
			std[e++] = '=';
		std[e] = 0;
		n = EVP_DecodeBlock(raw, (const unsigned char *)std, e);
		cr_assert_geq(n, 64);
	}
	for (size_t i = 0; i < 64; i++) {
		size_t len;
		int r;

		raw[i] ^= 0x01;
		len = b64url(raw, 64, forged);
		r = sc_link_open(nk, forged, len, &place_a, back);
		if (i >= 32 && i < 48)
			cr_assert_eq(r, -ESTALE, "byte %zu (place tag): %d", i, r);
		else
			cr_assert_eq(r, -EBADMSG, "byte %zu: %d", i, r);
		raw[i] ^= 0x01;
	}
	cr_assert_eq(sc_link_open(nk, forged, b64url(raw, 64, forged), &place_a, back), 13);
}

/*
 * The layout, checked with OpenSSL's own SIV and HMAC (not names.c's):
 * nonce || SIV tag || place tag || ciphertext, the SIV part made with the
 * symlink key and the nonce as the one associated-data component (the
 * unbound format's), the place tag HMAC-SHA256 under the link tag key of
 * 0x01 || nonce || SIV tag || directory nonce || encoded name, 16 bytes.
 */
Test(names, bound_target_layout)
{
	static char enc[SC_LINK_BOUND_ENC_MAX + 1];
	uint8_t raw[48 + 32 + 3], lk[64], tk[32], msg[1 + 48 + 10], md[32], pt[32];
	char std[128];
	unsigned int mdlen = 0;
	int e = sc_link_seal(nk, "target-of-17-byte", 17, &place_a, enc), n, outl = 0;
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, "AES-256-SIV", NULL);
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();

	cr_assert_gt(e, 0);
	for (int i = 0; i < e; i++)
		std[i] = enc[i] == '-' ? '+' : enc[i] == '_' ? '/' : enc[i];
	while (e % 4)
		std[e++] = '=';
	n = EVP_DecodeBlock(raw, (const unsigned char *)std, e);
	cr_assert_geq(n, 48 + 32);
	test_key(SC_LABEL_SYMLINK_KEY, lk);
	cr_assert_eq(sc_hkdf_sha256(master, sizeof(master), NULL, 0, SC_LABEL_LINK_TAG,
				    strlen(SC_LABEL_LINK_TAG), tk, sizeof(tk)), 0);
	msg[0] = 1;
	memcpy(msg + 1, raw, 32);
	memcpy(msg + 33, nonce_a, 16);
	memcpy(msg + 49, "linkname-a", 10);
	cr_assert_neq(HMAC(EVP_sha256(), tk, sizeof(tk), msg, sizeof(msg), md, &mdlen), NULL);
	cr_assert_eq(memcmp(md, raw + 32, 16), 0, "place tag");
	cr_assert_not_null(c);
	cr_assert_eq(EVP_DecryptInit_ex2(x, c, lk, NULL, NULL), 1);
	cr_assert_eq(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, raw + 16), 1);
	cr_assert_eq(EVP_DecryptUpdate(x, NULL, &outl, raw, 16), 1);
	cr_assert_eq(EVP_DecryptUpdate(x, pt, &outl, raw + 48, 32), 1, "SIV part");
	cr_assert_eq(outl, 32);
	cr_assert_eq(memcmp(pt, "target-of-17-byte", 17), 0);
	for (int i = 17; i < 32; i++)
		cr_assert_eq(pt[i], 0);
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_free(c);
}

Test(names, link_marker_and_side_kind)
{
	char mark[SC_LINK_MARK_LEN + 1], lf[SC_NAME_LONG_LEN + 1], side[80];

	cr_assert_eq(sc_link_mark("abc", 3, mark), 0);
	cr_assert_eq(strlen(mark), SC_LINK_MARK_LEN);
	cr_assert(sc_link_is_mark(mark, SC_LINK_MARK_LEN));
	cr_assert_not(sc_link_is_mark(mark, SC_LINK_MARK_LEN - 1));
	mark[3] ^= 0x01;	/* "sc.link." no more */
	cr_assert_not(sc_link_is_mark(mark, SC_LINK_MARK_LEN));
	cr_assert_eq(sc_name_long("abc", 3, lf), 0);
	snprintf(side, sizeof(side), "%s%s", lf, SC_LINK_SIDE_SUFFIX);
	cr_assert_eq(sc_name_kind(side, strlen(side)), SC_NAME_KIND_LINKSIDE);
	snprintf(side, sizeof(side), "%s%s", lf, SC_LINK_SIDE_NEW);
	cr_assert_eq(sc_name_kind(side, strlen(side)), SC_NAME_KIND_LINKSIDE);
	snprintf(side, sizeof(side), "%s%s", lf, ".lnk");
	cr_assert_eq(sc_name_kind(side, strlen(side)), SC_NAME_KIND_OTHER);
	/* integrity volumes' binding records (format.md 11.5) */
	snprintf(side, sizeof(side), "%s%s", lf, SC_BINDREC_SUFFIX);
	cr_assert_eq(sc_name_kind(side, strlen(side)), SC_NAME_KIND_BIND);
	snprintf(side, sizeof(side), "%s%s", lf, ".bindx");
	cr_assert_eq(sc_name_kind(side, strlen(side)), SC_NAME_KIND_OTHER);
	side[4] = side[4] == 'A' ? 'B' : 'A';	/* still the shape of a long form */
	snprintf(side + SC_NAME_LONG_LEN, sizeof(side) - SC_NAME_LONG_LEN, "%s", SC_BINDREC_SUFFIX);
	cr_assert_eq(sc_name_kind(side, strlen(side)), SC_NAME_KIND_BIND);
	side[SC_NAME_LONG_LEN - 1] = '=';	/* not base64url */
	cr_assert_eq(sc_name_kind(side, strlen(side)), SC_NAME_KIND_OTHER);
}
