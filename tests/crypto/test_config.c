/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_config.c - the volume config: text round trip, strict parsing (each
 * kind of malformed input gets its own error), wrap/unwrap with a password
 * and a key file, wrong secret vs tampered field, and the key file and
 * master key text forms.  scrypt runs at N=1024 to keep the suite fast.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include <openssl/evp.h>
#include "sc_crypto.h"

#define PW	"correct horse battery staple"
#define N_TEST	1024

static void wrapped_cfg(struct sc_config *c, enum sc_kdf_id kdf, uint8_t mk[32],
			uint8_t key[32])
{
	cr_assert_eq(sc_random(mk, 32), 0);
	cr_assert_eq(sc_config_init(c, SC_CIPHER_AES_XTS, 4096, kdf, N_TEST), 0);
	if (kdf == SC_KDF_KEYFILE) {
		cr_assert_eq(sc_random(key, 32), 0);
		cr_assert_eq(sc_config_wrap(c, key, 32, mk), 0);
	} else {
		cr_assert_eq(sc_config_wrap(c, PW, strlen(PW), mk), 0);
	}
}

/* Appends "checksum = sha256(text)" the way a careful attacker would. */
static size_t seal(char *text, size_t size)
{
	uint8_t md[32];
	unsigned int l;
	size_t n = strlen(text);

	cr_assert_eq(EVP_Digest(text, n, md, &l, EVP_sha256(), NULL), 1);
	n += (size_t)snprintf(text + n, size - n, "checksum = ");
	for (int i = 0; i < 32; i++)
		n += (size_t)snprintf(text + n, size - n, "%02x", md[i]);
	n += (size_t)snprintf(text + n, size - n, "\n");
	return n;
}

/* text without its checksum line */
static void body(const struct sc_config *c, char *text, size_t size)
{
	int n = sc_config_format(c, text, size);
	char *sum;

	cr_assert_gt(n, 0);
	sum = strstr(text, "checksum = ");
	cr_assert_not_null(sum);
	*sum = '\0';
}

Test(config, format_parse_roundtrip)
{
	for (int kdf = 0; kdf < 2; kdf++) {
		struct sc_config c, back;
		uint8_t mk[32], key[32], out[32];
		char text[SC_CONFIG_MAX_TEXT], err[128];
		int n;

		wrapped_cfg(&c, (enum sc_kdf_id)kdf, mk, key);
		n = sc_config_format(&c, text, sizeof(text));
		cr_assert_gt(n, 0);
		cr_assert_eq((size_t)n, strlen(text));
		cr_assert(strncmp(text, "# stackcrypt volume config - do not edit\nformat = 3\n", 52) == 0,
			  "%s", text);
		cr_assert_eq(sc_config_parse(text, (size_t)n, &back, err, sizeof(err)), 0, "%s", err);
		cr_assert(memcmp(&c, &back, sizeof(c)) == 0, "parse(format(c)) != c");
		cr_assert_eq(kdf == 0 ? sc_config_unwrap(&back, PW, strlen(PW), out)
				      : sc_config_unwrap(&back, key, 32, out), 0);
		cr_assert(memcmp(out, mk, 32) == 0);
		cr_assert_eq(sc_config_format(&c, text, (size_t)n), -ENOSPC);
	}
}

Test(config, wrong_secret_is_rejected)
{
	struct sc_config c;
	uint8_t mk[32], key[32], out[32];

	wrapped_cfg(&c, SC_KDF_SCRYPT, mk, key);
	cr_assert_eq(sc_config_unwrap(&c, "wrong", 5, out), -EKEYREJECTED);
	cr_assert_eq(sc_config_unwrap(&c, PW, strlen(PW) - 1, out), -EKEYREJECTED);
	wrapped_cfg(&c, SC_KDF_KEYFILE, mk, key);
	key[31] ^= 1;
	cr_assert_eq(sc_config_unwrap(&c, key, 32, out), -EKEYREJECTED);
	cr_assert_eq(sc_config_unwrap(&c, key, 31, out), -EKEYREJECTED);
}

Test(config, rewrap_changes_nonce_and_keeps_key)
{
	struct sc_config c;
	uint8_t mk[32], key[32], out[32], w1[sizeof(c.wrapped)];

	wrapped_cfg(&c, SC_KDF_SCRYPT, mk, key);
	memcpy(w1, c.wrapped, sizeof(w1));
	cr_assert_eq(sc_config_wrap(&c, "new password", 12, mk), 0);
	cr_assert(memcmp(w1, c.wrapped, 12) != 0, "GCM nonce reused");
	cr_assert_eq(sc_config_unwrap(&c, PW, strlen(PW), out), -EKEYREJECTED);
	cr_assert_eq(sc_config_unwrap(&c, "new password", 12, out), 0);
	cr_assert(memcmp(out, mk, 32) == 0);
}

/*
 * Every field changed and re-sealed with a valid checksum: fields that feed
 * the KEK (salt, scrypt parameters, kdf, key_check) look like a wrong
 * password; every other field breaks the GCM tag.
 */
Test(config, tamper_each_field)
{
	struct sc_config c, t, parsed;
	uint8_t mk[32], key[32], out[32];
	char text[SC_CONFIG_MAX_TEXT], err[128];

	wrapped_cfg(&c, SC_KDF_SCRYPT, mk, key);
	for (int f = 0; f < 13; f++) {
		int want = -EBADMSG;

		t = c;
		switch (f) {
		case 0: t.cipher = SC_CIPHER_AES_CBC; break;
		case 1: t.cipher = SC_CIPHER_NULL; break;
		case 2: t.block_size = 512; break;
		case 3: t.uuid[7] ^= 0x10; break;
		case 4: t.created += 1; break;
		case 5: t.wrapped[0] ^= 1; break;		/* nonce */
		case 6: t.wrapped[12 + 5] ^= 1; break;		/* ciphertext */
		case 7: t.wrapped[sizeof(t.wrapped) - 1] ^= 0x80; break;	/* tag */
		case 8: t.salt[0] ^= 1; want = -EKEYREJECTED; break;
		case 9: t.scrypt_n = 2048; want = -EKEYREJECTED; break;
		case 10: t.scrypt_r = 4; want = -EKEYREJECTED; break;
		case 11: t.scrypt_p = 2; want = -EKEYREJECTED; break;
		case 12: t.key_check[3] ^= 4; want = -EKEYREJECTED; break;
		}
		/* through the text form, as an attacker editing the file would */
		cr_assert_gt(sc_config_format(&t, text, sizeof(text)), 0);
		cr_assert_eq(sc_config_parse(text, strlen(text), &parsed, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(sc_config_unwrap(&parsed, PW, strlen(PW), out), want,
			     "field %d: want %d", f, want);
	}
	/* kdf switched to keyfile: the password is no key */
	t = c;
	t.kdf = SC_KDF_KEYFILE;
	t.scrypt_n = t.scrypt_r = t.scrypt_p = 0;
	cr_assert_eq(sc_config_unwrap(&t, key, 32, out), -EKEYREJECTED);
}

Test(config, any_edited_byte_fails_the_checksum)
{
	struct sc_config c, parsed;
	uint8_t mk[32], key[32];
	char text[SC_CONFIG_MAX_TEXT], err[128];
	int n;

	wrapped_cfg(&c, SC_KDF_SCRYPT, mk, key);
	n = sc_config_format(&c, text, sizeof(text));
	for (int i = 0; i < n - 1; i++) {
		char save = text[i];

		text[i] = save == '1' ? '2' : '1';
		cr_assert_eq(sc_config_parse(text, (size_t)n, &parsed, err, sizeof(err)), -EUCLEAN,
			     "byte %d", i);
		cr_assert_neq(err[0], '\0');
		text[i] = save;
	}
	cr_assert_eq(sc_config_parse(text, (size_t)n - 1, &parsed, err, sizeof(err)), -EUCLEAN);
	cr_assert_eq(sc_config_parse(text, 0, &parsed, err, sizeof(err)), -EUCLEAN);
}

static int parse_edit(const struct sc_config *c, const char *from, const char *to,
		      char *err, size_t errlen)
{
	char text[SC_CONFIG_MAX_TEXT], out[SC_CONFIG_MAX_TEXT];
	struct sc_config parsed;
	char *at;

	body(c, text, sizeof(text));
	at = strstr(text, from);
	cr_assert_not_null(at, "%s not in config", from);
	snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	seal(out, sizeof(out));
	return sc_config_parse(out, strlen(out), &parsed, err, errlen);
}

Test(config, strict_parsing)
{
	static const struct { const char *from, *to; int want; } cases[] = {
		{ "format = 3\n", "format = 5\n", -EPROTONOSUPPORT },
		/* format 4 has no flat kdf keys: its slots carry them */
		{ "format = 3\n", "format = 4\n", -EUCLEAN },
		/* format 3 needs its MAC; formats 1 and 2 have none (no relabelling) */
		{ "config_mac = ", "config_mac = 0", -EUCLEAN },
		{ "config_mac = ", "config_mac = X", -EUCLEAN },
		{ "format = 3\n", "format = 2\n", -EUCLEAN },
		{ "format = 3\n", "", -EUCLEAN },
		{ "format = 3\n", "format = 01\n", -EUCLEAN },
		{ "features = 0x1\n", "features = 0x4000000000000001\n", -EPROTONOSUPPORT },
		{ "features = 0x1\n", "features = 1\n", -EUCLEAN },
		/*
		 * integrity volumes (format.md 11): 0x10 needs aes-gcm and bound names
		 * (not this aes-xts config), and so does an upgrade's 0x40 (11.12);
		 * the unit tree's 0x20 needs 0x10 (11.10)
		 */
		{ "features = 0x1\n", "features = 0x11\n", -EINVAL },
		{ "features = 0x1\n", "features = 0x31\n", -EINVAL },
		{ "features = 0x1\n", "features = 0x21\n", -EINVAL },
		{ "features = 0x1\n", "features = 0x41\n", -EINVAL },
		{ "cipher = aes-xts\n", "cipher = aes-gcm\n", -EINVAL },
		{ "block_size = 4096\n", "block_size = 4000\n", -EINVAL },
		{ "block_size = 4096\n", "block_size = 131072\n", -EINVAL },
		{ "block_size = 4096\n", "block_size = -4096\n", -EUCLEAN },
		{ "block_size = 4096\n", "block_size = 4096x\n", -EUCLEAN },
		{ "scrypt_r = 8\n", "scrypt_r = 99999999999\n", -EINVAL },
		{ "block_size = 4096\n", "block_size = 99999999999999999999999\n", -EINVAL },
		{ "scrypt_n = 1024\n", "scrypt_n = 1000\n", -EINVAL },
		{ "scrypt_n = 1024\n", "scrypt_n = 512\n", -EINVAL },
		{ "scrypt_n = 1024\n", "scrypt_n = 33554432\n", -EINVAL },
		{ "scrypt_r = 8\n", "scrypt_r = 0\n", -EINVAL },
		{ "scrypt_p = 1\n", "scrypt_p = 17\n", -EINVAL },
		/* bounded memory and work (issue 13): at most what init writes */
		{ "scrypt_n = 1024\nscrypt_r = 8\n", "scrypt_n = 16777216\nscrypt_r = 32\n",
		  -EINVAL },
		{ "scrypt_n = 1024\nscrypt_r = 8\n", "scrypt_n = 16777216\nscrypt_r = 9\n",
		  -EINVAL },
		{ "scrypt_n = 1024\nscrypt_r = 8\nscrypt_p = 1\n",
		  "scrypt_n = 16777216\nscrypt_r = 8\nscrypt_p = 2\n", -EINVAL },
		{ "scrypt_n = 1024\nscrypt_r = 8\n", "scrypt_n = 16777216\nscrypt_r = 8\n", 0 },
		{ "scrypt_n = 1024\nscrypt_r = 8\n", "scrypt_n = 8388608\nscrypt_r = 16\n", 0 },
		{ "scrypt_n = 1024\nscrypt_r = 8\nscrypt_p = 1\n",
		  "scrypt_n = 1024\nscrypt_r = 32\nscrypt_p = 16\n", 0 },
		{ "scrypt_p = 1\n", "", -EUCLEAN },
		{ "kdf = scrypt\n", "kdf = keyfile\n", -EUCLEAN },	/* scrypt_* with keyfile */
		{ "kdf = scrypt\n", "kdf = argon2\n", -EINVAL },
		{ "salt = ", "salt = X", -EUCLEAN },
		{ "salt = ", "salt = 00", -EUCLEAN },
		{ "uuid = ", "uuid = A", -EUCLEAN },
		{ "created = ", "created = x", -EUCLEAN },
		{ "key_check = ", "key_check = 0", -EUCLEAN },
		{ "wrapped_key = ", "wrapped_key = 0", -EUCLEAN },
		{ "format = 3\n", "format = 3\nformat = 3\n", -EUCLEAN },
		{ "format = 3\n", "format = 3\ncolour = blue\n", -EUCLEAN },
		{ "format = 3\n", "format = 3\nno equals sign\n", -EUCLEAN },
		{ "format = 3\n", "format\t=\t3\n", 0 },
		{ "format = 3\n", "format = 3\n# a comment\n\n", 0 },
	};
	struct sc_config c;
	uint8_t mk[32], key[32];
	char err[160];

	wrapped_cfg(&c, SC_KDF_SCRYPT, mk, key);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = parse_edit(&c, cases[i].from, cases[i].to, err, sizeof(err));

		cr_assert_eq(ret, cases[i].want, "case %zu (%s -> %s): got %d want %d (%s)", i,
			     cases[i].from, cases[i].to, ret, cases[i].want, err);
		if (ret != 0)
			cr_assert(err[0] != '\0' && strchr(err, '\n') == NULL,
				  "case %zu: no one-line reason", i);
	}
}

Test(config, init_rejects_bad_parameters)
{
	struct sc_config c;

	cr_assert_eq(sc_config_init(&c, SC_CIPHER_AES_XTS, 1000, SC_KDF_SCRYPT, 0), -EINVAL);
	cr_assert_eq(sc_config_init(&c, (enum sc_cipher_id)7, 4096, SC_KDF_SCRYPT, 0), -EINVAL);
	cr_assert_eq(sc_config_init(&c, SC_CIPHER_AES_XTS, 4096, SC_KDF_SCRYPT, 3000), -EINVAL);
	cr_assert_eq(sc_config_init(&c, SC_CIPHER_AES_XTS, 4096, SC_KDF_SCRYPT, 0), 0);
	cr_assert_eq(c.scrypt_n, SC_SCRYPT_N_DEFAULT);
	cr_assert_eq(c.scrypt_r, 8);
	cr_assert_eq(c.scrypt_p, 1);
}

Test(keytext, keyfile_parse)
{
	const char *hex = "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F";
	uint8_t key[32], raw[32];
	char buf[80];

	for (int i = 0; i < 32; i++)
		raw[i] = (uint8_t)i;
	cr_assert_eq(sc_keyfile_parse(hex, 64, key), 0);
	cr_assert(memcmp(key, raw, 32) == 0);
	snprintf(buf, sizeof(buf), "%s\n", hex);
	cr_assert_eq(sc_keyfile_parse(buf, 65, key), 0);
	cr_assert(memcmp(key, raw, 32) == 0);
	cr_assert_eq(sc_keyfile_parse(raw, 32, key), 0);
	cr_assert(memcmp(key, raw, 32) == 0);
	cr_assert_eq(sc_keyfile_parse(hex, 63, key), -EINVAL);
	cr_assert_eq(sc_keyfile_parse(buf, 66, key), -EINVAL);
	buf[10] = 'g';
	cr_assert_eq(sc_keyfile_parse(buf, 65, key), -EINVAL);
	cr_assert_eq(sc_keyfile_parse("", 0, key), -EINVAL);
}

Test(keytext, master_key_text)
{
	uint8_t mk[32], back[32];
	char text[80], edit[100];

	cr_assert_eq(sc_random(mk, 32), 0);
	cr_assert_eq(sc_mkey_to_text(mk, text, sizeof(text)), 71);
	for (int i = 0; i < 71; i++)
		cr_assert_eq(text[i] == '-', i % 9 == 8, "%s", text);
	cr_assert_eq(sc_mkey_from_text(text, back), 0);
	cr_assert(memcmp(mk, back, 32) == 0);
	snprintf(edit, sizeof(edit), "  %s\n", text);
	cr_assert_eq(sc_mkey_from_text(edit, back), 0);
	cr_assert(memcmp(mk, back, 32) == 0);
	cr_assert_eq(sc_mkey_to_text(mk, text, 71), -ENOSPC);
	cr_assert_eq(sc_mkey_from_text("00", back), -EINVAL);
	snprintf(edit, sizeof(edit), "%s", text);
	edit[8] = '0';
	cr_assert_eq(sc_mkey_from_text(edit, back), -EINVAL);
	snprintf(edit, sizeof(edit), "%s", text);
	edit[0] = 'z';
	cr_assert_eq(sc_mkey_from_text(edit, back), -EINVAL);

	/* without the dashes, with blanks for them, upper case (issue 14) */
	{
		char bare[80], spaced[80], upper[80];
		size_t b = 0, sp = 0;

		for (int i = 0; i < 71; i++) {
			if (text[i] != '-')
				bare[b++] = text[i];
			spaced[sp++] = text[i] == '-' ? ' ' : text[i];
			upper[i] = (char)(text[i] >= 'a' && text[i] <= 'f' ? text[i] - 32 : text[i]);
		}
		bare[b] = spaced[sp] = upper[71] = '\0';
		memset(back, 0, sizeof(back));
		cr_assert_eq(sc_mkey_from_text(bare, back), 0, "%s", bare);
		cr_assert(memcmp(mk, back, 32) == 0);
		memset(back, 0, sizeof(back));
		cr_assert_eq(sc_mkey_from_text(spaced, back), 0, "%s", spaced);
		cr_assert(memcmp(mk, back, 32) == 0);
		memset(back, 0, sizeof(back));
		cr_assert_eq(sc_mkey_from_text(upper, back), 0, "%s", upper);
		cr_assert(memcmp(mk, back, 32) == 0);
		/* one digit short or one too many: refused, and nothing left behind */
		bare[63] = '\0';
		cr_assert_eq(sc_mkey_from_text(bare, back), -EINVAL);
		for (int i = 0; i < 32; i++)
			cr_assert_eq(back[i], 0);
		snprintf(edit, sizeof(edit), "%s0", text);
		cr_assert_eq(sc_mkey_from_text(edit, back), -EINVAL);
		cr_assert_eq(sc_mkey_from_text("", back), -EINVAL);
		cr_assert_eq(sc_mkey_from_text("- - -", back), -EINVAL);
	}
}

Test(speed, measures_every_cipher)
{
	for (int c = SC_CIPHER_NULL; c <= SC_CIPHER_AES_GCM; c++) {
		double enc = 0, dec = 0;

		cr_assert_eq(sc_speed_measure((enum sc_cipher_id)c, 4096, 0.02, &enc, &dec), 0);
		cr_assert(enc > 1 && dec > 1, "%s: %f / %f MB/s", sc_cipher_name(c), enc, dec);
	}
	cr_assert_eq(sc_speed_measure(SC_CIPHER_AES_XTS, 1000, 0.02, &(double){0}, &(double){0}),
		     -EINVAL);
	cr_assert_eq(sc_speed_measure(SC_CIPHER_AES_XTS, 4096, 0, &(double){0}, &(double){0}),
		     -EINVAL);
}

Test(secret, alloc_is_zeroed_and_reuse_wiped)
{
	uint8_t *a[600];

	/* more than one 64 KiB chunk of 256-byte slots, then reuse */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 600; i++) {
			a[i] = sc_secure_alloc(i % 2 ? SC_MASTER_KEY_LEN : 256);
			cr_assert_not_null(a[i]);
			for (int j = 0; j < SC_MASTER_KEY_LEN; j++)
				cr_assert_eq(a[i][j], 0, "round %d slot %d byte %d not zeroed", round, i, j);
			memset(a[i], 0xa5, SC_MASTER_KEY_LEN);
		}
		for (int i = 0; i < 600; i++)
			sc_secure_free(a[i], i % 2 ? SC_MASTER_KEY_LEN : 256);
	}
	/* a large secret gets its own mapping */
	a[0] = sc_secure_alloc(10000);
	cr_assert_not_null(a[0]);
	cr_assert_eq(a[0][9999], 0);
	a[0][9999] = 1;
	sc_secure_free(a[0], 10000);
	sc_secure_free(NULL, 32);
}

Test(secret, constant_time_compare_and_random)
{
	uint8_t x[64], y[64];

	cr_assert_eq(sc_random(x, sizeof(x)), 0);
	memcpy(y, x, sizeof(y));
	cr_assert_eq(sc_memeq_ct(x, y, sizeof(x)), 1);
	y[63] ^= 1;
	cr_assert_eq(sc_memeq_ct(x, y, sizeof(x)), 0);
	cr_assert_eq(sc_memeq_ct(x, y, 63), 1);
	cr_assert_eq(sc_random(y, sizeof(y)), 0);
	cr_assert(memcmp(x, y, sizeof(x)) != 0, "two draws of 64 random bytes are equal");
	sc_wipe(x, sizeof(x));
	for (size_t i = 0; i < sizeof(x); i++)
		cr_assert_eq(x[i], 0);
}
