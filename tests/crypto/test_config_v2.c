/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_config_v2.c - config formats 1 and 2 side by side (docs/format.md
 * section 6): both unlock with a password and with a key file; format 1
 * keeps using the KEK as the wrap key (old volumes unchanged) and format 2
 * derives the wrap key and key_check from separate labels, checked here
 * against an independent recomputation with plain OpenSSL; rewrapping
 * keeps a config's format unless the caller asks for 2; a format 2 config
 * with a flipped check value or a format byte changed in either direction
 * is refused with the right error.  scrypt runs at N=1024.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include "sc_crypto.h"
#include "crypto_i.h"

#define PW	"correct horse battery staple"

/* HKDF-SHA256(ikm, no salt, info) with OpenSSL's EVP_KDF directly. */
static void ossl_hkdf(const uint8_t *ikm, const char *info, uint8_t *out, size_t len)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
	OSSL_PARAM p[] = {
		OSSL_PARAM_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, 32),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, strlen(info)),
		OSSL_PARAM_END,
	};

	cr_assert_eq(EVP_KDF_derive(ctx, out, len, p), 1);
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
}

static void make(struct sc_config *c, uint32_t format, enum sc_kdf_id kdf,
		 const uint8_t *secret, size_t slen, const uint8_t mk[32])
{
	cr_assert_eq(sc_config_init(c, SC_CIPHER_AES_XTS, 4096, kdf, 1024), 0);
	cr_assert_eq(c->format, SC_CONFIG_FORMAT, "init writes format %d", SC_CONFIG_FORMAT);
	c->format = format;
	cr_assert_eq(sc_config_wrap(c, secret, slen, mk), 0);
}

/* Through the text form and back. */
static void reparse(const struct sc_config *c, struct sc_config *out, uint32_t want_format)
{
	char text[SC_CONFIG_MAX_TEXT], err[160], want[32];

	cr_assert_gt(sc_config_format(c, text, sizeof(text)), 0);
	snprintf(want, sizeof(want), "\nformat = %u\n", want_format);
	cr_assert_not_null(strstr(text, want), "%s", text);
	cr_assert_eq(sc_config_parse(text, strlen(text), out, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(out->format, want_format);
}

Test(config_v2, both_formats_unlock_with_both_kdfs)
{
	uint8_t mk[32], key[32], out[32];

	cr_assert_eq(sc_random(mk, 32), 0);
	cr_assert_eq(sc_random(key, 32), 0);
	for (uint32_t f = 1; f <= 2; f++) {
		for (int kdf = 0; kdf < 2; kdf++) {
			const uint8_t *s = kdf ? key : (const uint8_t *)PW;
			size_t sl = kdf ? 32 : strlen(PW);
			struct sc_config c, p;

			make(&c, f, (enum sc_kdf_id)kdf, s, sl, mk);
			reparse(&c, &p, f);
			memset(out, 0, sizeof(out));
			cr_assert_eq(sc_config_unwrap(&p, s, sl, out), 0, "format %u kdf %d", f, kdf);
			cr_assert_eq(memcmp(out, mk, 32), 0);
			cr_assert_eq(sc_config_unwrap(&p, "wrong", 5, out), -EKEYREJECTED);
		}
	}
}

/* Opens cfg->wrapped with OpenSSL under wrap_key: does the config use that key? */
static int opens_with(const struct sc_config *c, const uint8_t *wrap_key)
{
	struct sc_config t = *c;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	uint8_t aad[126], pt[32];
	uint8_t *p = aad;
	int l, ok;

	/* docs/format.md section 6: the AAD, rebuilt here from the spec */
	memcpy(p, t.format == 1 ? "stackcrypt/v1 config" : "stackcrypt/v2 config", 20);
	p += 20;
	sc_le64(p, t.format); p += 4;
	*p++ = (uint8_t)t.cipher;
	sc_le64(p, t.block_size); p += 4;
	sc_le64(p, t.features); p += 8;
	*p++ = (uint8_t)t.kdf;
	sc_le64(p, t.scrypt_n); p += 8;
	sc_le64(p, t.scrypt_r); p += 4;
	sc_le64(p, t.scrypt_p); p += 4;
	memcpy(p, t.salt, 32); p += 32;
	memcpy(p, t.uuid, 16); p += 16;
	sc_le64(p, (uint64_t)t.created); p += 8;
	memcpy(p, t.key_check, 16); p += 16;
	cr_assert_eq(p - aad, 126);
	ok = EVP_DecryptInit_ex2(ctx, EVP_aes_256_gcm(), wrap_key, t.wrapped, NULL) == 1 &&
	     EVP_DecryptUpdate(ctx, NULL, &l, aad, sizeof(aad)) == 1 &&
	     EVP_DecryptUpdate(ctx, pt, &l, t.wrapped + 12, 32) == 1 &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, t.wrapped + 44) == 1 &&
	     EVP_DecryptFinal_ex(ctx, pt + l, &l) == 1;
	EVP_CIPHER_CTX_free(ctx);
	return ok;
}

Test(config_v2, format_2_separates_the_wrap_key_from_the_check)
{
	uint8_t mk[32], kek[32], wrap[32], check[16], want_wrap[32], want_check[16];
	struct sc_config c1, c2;

	cr_assert_eq(sc_random(mk, 32), 0);
	/* format 1, unchanged: the KEK wraps, and key_check is HKDF(KEK, v1) */
	make(&c1, 1, SC_KDF_SCRYPT, (const uint8_t *)PW, strlen(PW), mk);
	cr_assert_eq(sc_config_derive(&c1, PW, strlen(PW), kek, wrap, check), 0);
	cr_assert_eq(memcmp(wrap, kek, 32), 0);
	ossl_hkdf(kek, "stackcrypt/v1 key-check", want_check, 16);
	cr_assert_eq(memcmp(c1.key_check, want_check, 16), 0);
	cr_assert(opens_with(&c1, kek));

	/* format 2: the KEK is only HKDF input */
	make(&c2, 2, SC_KDF_SCRYPT, (const uint8_t *)PW, strlen(PW), mk);
	cr_assert_eq(sc_config_derive(&c2, PW, strlen(PW), kek, wrap, check), 0);
	ossl_hkdf(kek, "stackcrypt/v2 config-wrap-key", want_wrap, 32);
	ossl_hkdf(kek, "stackcrypt/v2 key-check", want_check, 16);
	cr_assert_eq(memcmp(wrap, want_wrap, 32), 0);
	cr_assert_eq(memcmp(c2.key_check, want_check, 16), 0);
	cr_assert_neq(memcmp(wrap, kek, 32), 0, "format 2 wraps with the KEK itself");
	cr_assert_neq(memcmp(wrap, check, 16), 0, "wrap key and check value share bytes");
	cr_assert(opens_with(&c2, want_wrap));
	cr_assert_not(opens_with(&c2, kek), "format 2 config opens under the bare KEK");
}

Test(config_v2, rewrap_keeps_the_format_unless_asked)
{
	uint8_t mk[32], out[32];
	struct sc_config c, p, q;

	cr_assert_eq(sc_random(mk, 32), 0);
	make(&c, 1, SC_KDF_SCRYPT, (const uint8_t *)PW, strlen(PW), mk);
	reparse(&c, &p, 1);
	/* passwd on an old volume: parse, rewrap under a new password */
	cr_assert_eq(sc_config_wrap(&p, "new", 3, mk), 0);
	reparse(&p, &q, 1);
	cr_assert_eq(sc_config_unwrap(&q, "new", 3, out), 0);
	/* asked: upgrade to format 2 */
	q.format = 2;
	cr_assert_eq(sc_config_wrap(&q, "new", 3, mk), 0);
	reparse(&q, &p, 2);
	cr_assert_eq(sc_config_unwrap(&p, "new", 3, out), 0);
	cr_assert_eq(memcmp(out, mk, 32), 0);
	/* asked: upgrade to format 3 (passwd), which adds the config MAC */
	q.format = 3;
	cr_assert_eq(sc_config_wrap(&q, "new", 3, mk), 0);
	reparse(&q, &p, 3);
	cr_assert_eq(sc_config_unwrap(&p, "new", 3, out), 0);
	cr_assert_eq(sc_config_mac_check(&p, mk), 0);
	/* format 4 is key slots' (test_slots.c); none after it exists */
	q.format = SC_CONFIG_FORMAT_MAX + 1;
	cr_assert_eq(sc_config_wrap(&q, "new", 3, mk), -EINVAL);
}

Test(config_v2, tampered_format_2_is_refused_with_the_right_error)
{
	uint8_t mk[32], out[32];
	struct sc_config c, t, p;

	cr_assert_eq(sc_random(mk, 32), 0);
	make(&c, 2, SC_KDF_SCRYPT, (const uint8_t *)PW, strlen(PW), mk);
	for (int i = 0; i < 16; i++) {	/* any flipped check bit reads as a wrong key */
		t = c;
		t.key_check[i] ^= (uint8_t)(1u << (i % 8));
		reparse(&t, &p, 2);
		cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), -EKEYREJECTED, "byte %d", i);
	}
	t = c;				/* a field under the AAD: right key, tag fails */
	t.block_size = 512;
	reparse(&t, &p, 2);
	cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), -EBADMSG);
	t = c;
	t.wrapped[20] ^= 1;
	reparse(&t, &p, 2);
	cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), -EBADMSG);
	/* the format relabelled (checksum resealed): the check differs */
	t = c;
	t.format = 1;
	reparse(&t, &p, 1);
	cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), -EKEYREJECTED);
	make(&t, 1, SC_KDF_SCRYPT, (const uint8_t *)PW, strlen(PW), mk);
	t.format = 2;
	reparse(&t, &p, 2);
	cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), -EKEYREJECTED);
}

/*
 * aes-gcm (docs/format.md section 10) exists only in format 2, without the
 * length-preserving formats' hdr-v2 feature: init writes that, it unlocks,
 * and a text config that says otherwise is refused as malformed.
 */
/* Recomputes the last line (checksum = SHA-256 of the text before it) after an edit. */
static void reseal(char *text)
{
	char *sum = strstr(text, "checksum = ");
	uint8_t d[32];

	cr_assert_not_null(sum);
	cr_assert_eq(EVP_Digest(text, (size_t)(sum - text), d, NULL, EVP_sha256(), NULL), 1);
	for (int i = 0; i < 32; i++)
		snprintf(sum + strlen("checksum = ") + 2 * i, 3, "%02x", d[i]);
	strcat(text, "\n");
}

Test(config_v2, aes_gcm_is_format_2_only)
{
	char text[SC_CONFIG_MAX_TEXT], err[160];
	uint8_t mk[32], out[32];
	struct sc_config c, p;
	char *f;

	cr_assert_eq(sc_random(mk, 32), 0);
	cr_assert_eq(sc_config_init(&c, SC_CIPHER_AES_GCM, 4096, SC_KDF_SCRYPT, 1024), 0);
	cr_assert_eq(c.format, SC_CONFIG_FORMAT);
	cr_assert_eq(c.features & SC_FEAT_HDR_V2, 0);
	c.format = 2;	/* an aes-gcm volume made before format 3 */
	cr_assert_eq(sc_config_wrap(&c, PW, strlen(PW), mk), 0);
	reparse(&c, &p, 2);
	cr_assert_eq(p.cipher, SC_CIPHER_AES_GCM);
	cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), 0);
	cr_assert_eq(memcmp(out, mk, 32), 0);

	cr_assert_gt(sc_config_format(&c, text, sizeof(text)), 0);
	f = strstr(text, "\nformat = 2\n");
	cr_assert_not_null(f);
	f[10] = '1';
	reseal(text);
	cr_assert_lt(sc_config_parse(text, strlen(text), &p, err, sizeof(err)), 0);
	cr_assert_not_null(strstr(err, "aes-gcm needs config format 2"), "%s", err);

	cr_assert_gt(sc_config_format(&c, text, sizeof(text)), 0);
	f = strstr(text, "\nfeatures = 0x0\n");
	cr_assert_not_null(f, "%s", text);
	f[14] = '1';
	reseal(text);
	cr_assert_lt(sc_config_parse(text, strlen(text), &p, err, sizeof(err)), 0);
	cr_assert_not_null(strstr(err, "hdr-v2"), "%s", err);
}

/*
 * Format 3's config MAC (docs/format.md 6.3), the fix of review finding 1
 * (issue #28): keyed from the master key, so recovery, which has only the
 * master key, can tell the volume's true fields from edited ones.
 */
static void want_mac(const struct sc_config *c, const uint8_t mk[32], uint8_t mac[32])
{
	uint8_t key[32], msg[41];
	unsigned int len = 0;

	ossl_hkdf(mk, "stackcrypt/v3 config-mac", key, sizeof(key));
	for (int i = 0; i < 4; i++)
		msg[i] = (uint8_t)(c->format >> (8 * i));
	msg[4] = (uint8_t)c->cipher;
	for (int i = 0; i < 4; i++)
		msg[5 + i] = (uint8_t)(c->block_size >> (8 * i));
	for (int i = 0; i < 8; i++)
		msg[9 + i] = (uint8_t)(c->features >> (8 * i));
	memcpy(msg + 17, c->uuid, 16);
	for (int i = 0; i < 8; i++)
		msg[33 + i] = (uint8_t)((uint64_t)c->created >> (8 * i));
	cr_assert_not_null(HMAC(EVP_sha256(), key, 32, msg, sizeof(msg), mac, &len));
	cr_assert_eq(len, 32);
}

Test(config_v2, format_3_mac_is_hmac_of_the_volume_fields)
{
	uint8_t mk[32], other[32], mac[32], out[32];
	struct sc_config c, p;

	cr_assert_eq(sc_random(mk, 32), 0);
	cr_assert_eq(sc_random(other, 32), 0);
	make(&c, 3, SC_KDF_SCRYPT, (const uint8_t *)PW, strlen(PW), mk);
	c.features |= SC_FEAT_NAMES;
	cr_assert_eq(sc_config_wrap(&c, PW, strlen(PW), mk), 0);
	reparse(&c, &p, 3);
	want_mac(&p, mk, mac);
	cr_assert_eq(memcmp(p.config_mac, mac, 32), 0, "config_mac is not the documented HMAC");
	cr_assert_eq(sc_config_mac_check(&p, mk), 0);
	cr_assert_eq(sc_config_mac_check(&p, other), -EBADMSG);
	cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), 0);
	cr_assert_eq(memcmp(out, mk, 32), 0);
	/* formats 1 and 2 carry no MAC to check */
	make(&c, 2, SC_KDF_SCRYPT, (const uint8_t *)PW, strlen(PW), mk);
	reparse(&c, &p, 2);
	cr_assert_eq(sc_config_mac_check(&p, mk), -ENODATA);
}

/*
 * The attack of finding 1: features edited (checksum resealed) and the
 * salt spoiled so the password fails.  The master key finds the edit;
 * the spoiled salt alone does not hide the true fields from it.
 */
Test(config_v2, format_3_mac_catches_edited_fields_but_not_a_spoiled_salt)
{
	uint8_t mk[32], out[32];
	struct sc_config c, t, p;

	cr_assert_eq(sc_random(mk, 32), 0);
	make(&c, 3, SC_KDF_SCRYPT, (const uint8_t *)PW, strlen(PW), mk);
	c.features |= SC_FEAT_NAMES;
	cr_assert_eq(sc_config_wrap(&c, PW, strlen(PW), mk), 0);
	t = c;
	t.features &= ~SC_FEAT_NAMES;
	t.salt[0] ^= 1;
	reparse(&t, &p, 3);
	cr_assert_eq(sc_config_mac_check(&p, mk), -EBADMSG, "names switched off unnoticed");
	cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), -EKEYREJECTED);
	t = c;
	t.salt[0] ^= 1;
	reparse(&t, &p, 3);
	cr_assert_eq(sc_config_mac_check(&p, mk), 0);
	for (int f = 0; f < 5; f++) {
		t = c;
		switch (f) {
		case 0: t.cipher = SC_CIPHER_AES_CBC; break;
		case 1: t.block_size = 512; break;
		case 2: t.uuid[15] ^= 0x80; break;
		case 3: t.created ^= 1; break;
		case 4: t.features &= ~SC_FEAT_HDR_V2; break;
		}
		reparse(&t, &p, 3);
		cr_assert_eq(sc_config_mac_check(&p, mk), -EBADMSG, "field %d", f);
		cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), -EBADMSG, "field %d", f);
	}
	/* the MAC alone damaged: the GCM tag opens, the unlock still refuses */
	for (int i = 0; i < 32; i++) {
		t = c;
		t.config_mac[i] ^= (uint8_t)(1u << (i % 8));
		reparse(&t, &p, 3);
		cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), -EBADMSG, "mac byte %d", i);
	}
}

/*
 * Configs written by the code before format 3 (main at 2af36dc, `stackcrypt
 * init --scrypt-n=1024`, password "old build password"; the master keys are
 * what --save-masterkey wrote): they parse as they are, unlock with the
 * password, carry no MAC (-ENODATA), and passwd's upgrade (format 3, a
 * rewrap) keeps the key and gains the MAC.
 */
static const char old_xts_format1[] =
	"# stackcrypt volume config - do not edit\n"
	"format = 1\n"
	"cipher = aes-xts\n"
	"block_size = 4096\n"
	"features = 0x1\n"
	"kdf = scrypt\n"
	"scrypt_n = 1024\n"
	"scrypt_r = 8\n"
	"scrypt_p = 1\n"
	"salt = fc877f16905b21b904bdffebabd954a8ff2c38e51294a7ed66255bda67598ae2\n"
	"uuid = e096bc8998e019a7bc96f746c1789357\n"
	"created = 2026-12-06T08:29:57Z\n"
	"key_check = cf00923e863711559dd55d3e7ca31160\n"
	"wrapped_key = cfaa47ef0509cd5d53bf91fcd604e81e9ed7dd609fb714443d40df8dcffa0d095066824645e3291e17716790e42a9d8858b4f523c7c032fa5d3f8775\n"
	"checksum = 8b8a98e01cb23946c06071c96a0e04d0adc77b0f7e941902368b50997d6c6b19\n";
static const char old_xts_mk[] = "e86e9e7e-a36f3816-1b2893bd-51cd9a1c-9e0528d7-772936bd-dc530eba-ccbedf50";
static const char old_gcm_names_format2[] =
	"# stackcrypt volume config - do not edit\n"
	"format = 2\n"
	"cipher = aes-gcm\n"
	"block_size = 4096\n"
	"features = 0x2\n"
	"kdf = scrypt\n"
	"scrypt_n = 1024\n"
	"scrypt_r = 8\n"
	"scrypt_p = 1\n"
	"salt = 40b8f0e9075985fb8494e5ebeca67abe04630084569c5c031c1c4cbaf4ae4402\n"
	"uuid = f439c3e1d9a6f2a0fd8945c68753a54f\n"
	"created = 2026-12-06T08:29:57Z\n"
	"key_check = 3cf953f355e613320d38f1a0524f81e8\n"
	"wrapped_key = effe3b88b0e5439f9293dfde6d47fbd486aa9a57117f800b0e73d5b9f63f3b282dc1b2fb20c915d9aba43b6a1000454b796d66524d0638a3e1819f2d\n"
	"checksum = 95cae1070663b6174ccc5772c26f57a418da45fd2646300d26e2802c971a2fe7\n";
static const char old_gcm_mk[] = "937f068f-fc84818d-5d9eb36c-cab18489-c2c2152e-2a35cc0e-159747f7-1174e9cd";

Test(config_v2, configs_made_by_the_old_code_open_and_upgrade)
{
	static const struct { const char *text, *mk; uint32_t format; } old[] = {
		{ old_xts_format1, old_xts_mk, 1 },
		{ old_gcm_names_format2, old_gcm_mk, 2 },
	};
	static const char pw[] = "old build password";

	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		uint8_t want[32], out[32];
		struct sc_config c, p;
		char err[160];

		cr_assert_eq(sc_mkey_from_text(old[i].mk, want), 0);
		cr_assert_eq(sc_config_parse(old[i].text, strlen(old[i].text), &c, err, sizeof(err)),
			     0, "old config %zu: %s", i, err);
		cr_assert_eq(c.format, old[i].format);
		cr_assert_eq(sc_config_unwrap(&c, pw, strlen(pw), out), 0, "old config %zu", i);
		cr_assert_eq(memcmp(out, want, 32), 0);
		cr_assert_eq(sc_config_mac_check(&c, want), -ENODATA);
		c.format = SC_CONFIG_FORMAT;	/* what passwd does */
		cr_assert_eq(sc_config_wrap(&c, "new", 3, want), 0);
		reparse(&c, &p, SC_CONFIG_FORMAT);
		cr_assert_eq(sc_config_unwrap(&p, "new", 3, out), 0);
		cr_assert_eq(memcmp(out, want, 32), 0);
		cr_assert_eq(sc_config_mac_check(&p, want), 0);
	}
}

/*
 * Integrity volumes (format.md 11.1): 0x10 is read only with aes-gcm and
 * bound encrypted names (0x2, 0x4, 0x8); each requirement missing is a
 * config refused in one line; the unit tree and listing bits need 0x10
 * and do not go together yet; the upgrade bit (11.12) is read on a volume
 * about to be an integrity one, never beside 0x10.
 */
/* An integrity volume's config text (features 0x1e), SC_CONFIG_MAX_TEXT bytes. */
static void integ_text(char *text)
{
	struct sc_config c;
	uint8_t mk[32];

	cr_assert_eq(sc_random(mk, 32), 0);
	cr_assert_eq(sc_config_init(&c, SC_CIPHER_AES_GCM, 4096, SC_KDF_SCRYPT, 1024), 0);
	c.features = SC_FEAT_NAMES | SC_FEAT_NAMES_BOUND | SC_FEAT_LINKS_BOUND | SC_FEAT_INTEGRITY;
	cr_assert_eq(sc_config_wrap(&c, PW, strlen(PW), mk), 0);
	cr_assert_gt(sc_config_format(&c, text, SC_CONFIG_MAX_TEXT), 0);
}

/* integ_text's text with features f into edited (SC_CONFIG_MAX_TEXT), its MAC made again. */
static void features_edit(const char *text, uint64_t f, char *edited)
{
	const char *at = strstr(text, "\nfeatures = 0x1e\n");

	cr_assert_not_null(at, "%s", text);
	snprintf(edited, SC_CONFIG_MAX_TEXT, "%.*s\nfeatures = 0x%llx\n%s", (int)(at - text), text,
		 (unsigned long long)f, at + strlen("\nfeatures = 0x1e\n"));
	reseal(edited);
}

Test(config_v2, integrity_needs_gcm_and_bound_names)
{
	const uint64_t need = SC_FEAT_NAMES | SC_FEAT_NAMES_BOUND | SC_FEAT_LINKS_BOUND;
	char text[SC_CONFIG_MAX_TEXT], err[160];
	struct sc_config p;

	integ_text(text);
	cr_assert_eq(sc_config_parse(text, strlen(text), &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.features, need | SC_FEAT_INTEGRITY);
	/*
	 * 3: the tree, served; 4: an upgrade's mark on an integrity volume; 5: on
	 * its own; 6: the tree without integrity; 7: listings without
	 * integrity; 8: listings with the tree (served together: format.md
	 * 11.7, "With the unit tree"); 9: listings, served
	 */
	for (int i = 0; i < 10; i++) {
		uint64_t f = i < 3 ? (need & ~(SC_FEAT_NAMES << i)) | SC_FEAT_INTEGRITY :
			     i == 5 ? need | SC_FEAT_UPGRADING : i == 6 ? need | SC_FEAT_UNIT_TREE :
			     i == 7 ? need | SC_FEAT_DIR_LISTS :
			     i == 8 ? need | SC_FEAT_INTEGRITY | SC_FEAT_UNIT_TREE | SC_FEAT_DIR_LISTS :
			     i == 9 ? need | SC_FEAT_INTEGRITY | SC_FEAT_DIR_LISTS :
			     need | SC_FEAT_INTEGRITY | (i == 3 ? SC_FEAT_UNIT_TREE : SC_FEAT_UPGRADING);
		char edited[SC_CONFIG_MAX_TEXT];

		features_edit(text, f, edited);
		cr_assert_eq(sc_config_parse(edited, strlen(edited), &p, err, sizeof(err)),
			     i == 5 || i == 3 || i == 8 || i == 9 ? 0 : -EINVAL, "features 0x%llx: %s",
			     (unsigned long long)f, err);
		if (i == 8)	/* init --integrity --unit-tree's: 0x13e */
			cr_assert_eq(p.features, f);
		if (i < 3)
			cr_assert_not_null(strstr(err, "integrity needs"), "%s", err);
		if (i == 4)
			cr_assert_not_null(strstr(err, "an upgrade (feature 0x40) needs"), "%s", err);
		if (i == 6)
			cr_assert_not_null(strstr(err, "the unit tree (feature 0x20) needs "
						  "integrity"), "%s", err);
		if (i == 7)
			cr_assert_not_null(strstr(err, "directory listings (feature 0x100) need "
						  "integrity"), "%s", err);
	}
}

/*
 * The mark of an upgrade that gives an integrity volume its listing
 * records in place (format.md 11.12, 0x200): read beside 0x10, with or
 * without the unit tree (0x230: a tree volume made without records),
 * never without 0x10, nor beside another run's mark or the listings it is
 * adding.
 */
Test(config_v2, lists_upgrading_needs_integrity)
{
	const uint64_t need = SC_FEAT_NAMES | SC_FEAT_NAMES_BOUND | SC_FEAT_LINKS_BOUND,
		       integ = need | SC_FEAT_INTEGRITY | SC_FEAT_LISTS_UPGRADING;
	const uint64_t fs[] = { integ, integ | SC_FEAT_UNIT_TREE, need | SC_FEAT_LISTS_UPGRADING,
				integ | SC_FEAT_REKEYING, integ | SC_FEAT_DIR_LISTS,
				integ | SC_FEAT_UNIT_TREE | SC_FEAT_DIR_LISTS,
				need | SC_FEAT_UPGRADING | SC_FEAT_LISTS_UPGRADING };
	char text[SC_CONFIG_MAX_TEXT], edited[SC_CONFIG_MAX_TEXT], err[160];
	struct sc_config p;

	integ_text(text);
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		features_edit(text, fs[i], edited);
		cr_assert_eq(sc_config_parse(edited, strlen(edited), &p, err, sizeof(err)),
			     i < 2 ? 0 : -EINVAL, "features 0x%llx", (unsigned long long)fs[i]);
		if (i < 2)
			cr_assert_eq(p.features, fs[i]);
		else
			cr_assert_not_null(strstr(err, "an upgrade to listing records (feature "
						  "0x200) needs integrity"), "%s", err);
	}
}
