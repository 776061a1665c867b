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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
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
