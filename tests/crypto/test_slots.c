/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_slots.c - config format 4, key slots (docs/format.md 6.4): a table
 * of a scrypt, an Argon2id and a key-file slot round-trips through the
 * text form and each secret opens its own slot; the wrap, its associated
 * data and the config MAC recomputed from the document with plain OpenSSL
 * (and libargon2 for the KEK); any slot field changed, a slot dropped or
 * moved, fails the MAC or the slot's tag; the text parser's refusals; the
 * slot table's own rules (labels, full, last); an old config upgraded;
 * Argon2id against RFC 9106's vector; a full table of the longest
 * fields fits the size a config may have.  Cheap costs throughout.
 */
#include <argon2.h>
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
#define PW2	"a second password"

/* HKDF-SHA256(ikm, salt, info) with OpenSSL's EVP_KDF directly. */
static void ossl_hkdf(const uint8_t *ikm, const uint8_t *salt, size_t salt_len,
		      const char *info, uint8_t *out, size_t len)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
	OSSL_PARAM p[5], *q = p;

	*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, 32);
	if (salt)
		*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt,
							 salt_len);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, strlen(info));
	*q = OSSL_PARAM_construct_end();
	cr_assert_eq(EVP_KDF_derive(ctx, out, len, p), 1);
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
}

static void le(uint8_t **p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		*(*p)++ = (uint8_t)(v >> (8 * i));
}

static void put_cost(uint8_t **p, const struct sc_slot *s)
{
	le(p, s->kdf, 1);
	le(p, s->scrypt_n, 8);
	le(p, s->scrypt_r, 4);
	le(p, s->scrypt_p, 4);
	le(p, s->argon2_t, 4);
	le(p, s->argon2_m, 4);
	le(p, s->argon2_p, 4);
}

/* A table: slot 0 scrypt (PW), slot 1 Argon2id (PW2), slot 2 a key file (key). */
static void three_slots(struct sc_config *c, uint8_t mk[32], uint8_t key[32])
{
	int i;

	cr_assert_eq(sc_random(mk, 32), 0);
	cr_assert_eq(sc_random(key, 32), 0);
	cr_assert_eq(sc_config_init(c, SC_CIPHER_AES_GCM, 4096, SC_KDF_SCRYPT, 1024), 0);
	cr_assert_eq(c->format, 3, "one scrypt slot: the format builds before slots read");
	cr_assert_eq(sc_config_upgrade(c), 0);
	cr_assert_eq(c->format, 4);
	cr_assert_str_eq(c->slots[0].label, "password");
	cr_assert_eq(sc_config_wrap_slot(c, 0, PW, strlen(PW), mk), 0);
	i = sc_config_slot_new(c, "laptop", SC_KDF_ARGON2ID);
	cr_assert_eq(i, 1);
	c->slots[1].argon2_t = 1;
	c->slots[1].argon2_m = SC_ARGON2_M_MIN;
	c->slots[1].argon2_p = 1;
	cr_assert_eq(sc_config_wrap_slot(c, 1, PW2, strlen(PW2), mk), 0);
	i = sc_config_slot_new(c, "usb key", SC_KDF_KEYFILE);
	cr_assert_eq(i, 2);
	cr_assert_eq(sc_config_wrap_slot(c, 2, key, 32, mk), 0);
}

static void reparse(const struct sc_config *c, struct sc_config *out)
{
	char text[SC_CONFIG_MAX_TEXT], err[160];

	cr_assert_gt(sc_config_format(c, text, sizeof(text)), 0);
	cr_assert_eq(sc_config_parse(text, strlen(text), out, err, sizeof(err)), 0, "%s\n%s",
		     err, text);
}

Test(slots, each_secret_opens_its_slot_through_the_text_form)
{
	uint8_t mk[32], key[32], out[32];
	struct sc_config c, p;
	int slot;

	three_slots(&c, mk, key);
	reparse(&c, &p);
	cr_assert(memcmp(&c, &p, sizeof(c)) == 0, "parse(format(c)) != c");
	cr_assert_eq(sc_config_slots(&p), 3);
	cr_assert_eq(sc_config_open(&p, false, PW, strlen(PW), out, &slot), 0);
	cr_assert_eq(slot, 0);
	cr_assert_eq(memcmp(out, mk, 32), 0);
	cr_assert_eq(sc_config_open(&p, false, PW2, strlen(PW2), out, &slot), 0);
	cr_assert_eq(slot, 1);
	cr_assert_eq(memcmp(out, mk, 32), 0);
	cr_assert_eq(sc_config_open(&p, true, key, 32, out, &slot), 0);
	cr_assert_eq(slot, 2);
	cr_assert_eq(memcmp(out, mk, 32), 0);
	cr_assert_eq(sc_config_mac_check(&p, mk), 0);
	/* a secret of the other kind, a wrong one */
	cr_assert_eq(sc_config_open(&p, true, PW, strlen(PW), out, &slot), -EKEYREJECTED);
	cr_assert_eq(sc_config_open(&p, false, "wrong", 5, out, &slot), -EKEYREJECTED);
	cr_assert_eq(sc_config_unwrap(&p, "wrong", 5, out), -EKEYREJECTED);
	cr_assert_eq(sc_config_unwrap(&p, PW2, strlen(PW2), out), 0);
	/* no key-file slot at all */
	cr_assert_eq(sc_config_slot_remove(&p, 2), 0);
	cr_assert_eq(sc_config_open(&p, true, key, 32, out, &slot), -ENOKEY);
}

Test(slots, wrap_and_mac_are_the_documented_bytes)
{
	uint8_t mk[32], key[32], kek[32], wrap[32], check[16], macgot[32], mackey[32];
	uint8_t aad[111], msg[2048], *p, pt[32];
	struct sc_config c, q;
	EVP_CIPHER_CTX *ctx;
	unsigned int mlen = 0;
	int l;

	three_slots(&c, mk, key);
	reparse(&c, &q);
	for (unsigned i = 0; i < 3; i++) {
		const struct sc_slot *s = &q.slots[i];

		/* the KEK: scrypt, Argon2id (libargon2) or HKDF of the key file */
		if (s->kdf == SC_KDF_SCRYPT)
			cr_assert_eq(EVP_PBE_scrypt(PW, strlen(PW), s->salt, 32, s->scrypt_n,
						    s->scrypt_r, s->scrypt_p, 1ull << 30, kek, 32), 1);
		else if (s->kdf == SC_KDF_ARGON2ID)
			cr_assert_eq(argon2id_hash_raw(s->argon2_t, s->argon2_m, s->argon2_p, PW2,
						       strlen(PW2), s->salt, 32, kek, 32), ARGON2_OK);
		else
			ossl_hkdf(key, s->salt, 32, "stackcrypt/v4 kek", kek, 32);
		ossl_hkdf(kek, NULL, 0, "stackcrypt/v4 slot-wrap-key", wrap, 32);
		ossl_hkdf(kek, NULL, 0, "stackcrypt/v4 slot-key-check", check, 16);
		cr_assert_eq(memcmp(check, s->key_check, 16), 0, "slot %u key_check", i);
		p = aad;
		memcpy(p, "stackcrypt/v4 slot", 18);
		p += 18;
		memcpy(p, q.uuid, 16);
		p += 16;
		put_cost(&p, s);
		memcpy(p, s->salt, 32);
		p += 32;
		memcpy(p, s->key_check, 16);
		p += 16;
		cr_assert_eq(p - aad, 111);
		ctx = EVP_CIPHER_CTX_new();
		cr_assert(EVP_DecryptInit_ex2(ctx, EVP_aes_256_gcm(), wrap, s->wrapped, NULL) == 1 &&
			  EVP_DecryptUpdate(ctx, NULL, &l, aad, sizeof(aad)) == 1 &&
			  EVP_DecryptUpdate(ctx, pt, &l, s->wrapped + 12, 32) == 1 &&
			  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16,
					      (void *)(s->wrapped + 44)) == 1 &&
			  EVP_DecryptFinal_ex(ctx, pt + l, &l) == 1, "slot %u does not open", i);
		EVP_CIPHER_CTX_free(ctx);
		cr_assert_eq(memcmp(pt, mk, 32), 0);
	}
	/* the MAC: the volume's 41 bytes, then every slot in index order */
	p = msg;
	le(&p, q.format, 4);
	le(&p, q.cipher, 1);
	le(&p, q.block_size, 4);
	le(&p, q.features, 8);
	memcpy(p, q.uuid, 16);
	p += 16;
	le(&p, (uint64_t)q.created, 8);
	for (unsigned i = 0; i < SC_SLOTS_MAX; i++) {
		const struct sc_slot *s = &q.slots[i];

		if (!s->used)
			continue;
		le(&p, i, 1);
		le(&p, strlen(s->label), 1);
		memcpy(p, s->label, strlen(s->label));
		p += strlen(s->label);
		le(&p, (uint64_t)s->slot_created, 8);
		put_cost(&p, s);
		memcpy(p, s->salt, 32);
		p += 32;
		memcpy(p, s->key_check, 16);
		p += 16;
		memcpy(p, s->wrapped, 60);
		p += 60;
	}
	ossl_hkdf(mk, NULL, 0, "stackcrypt/v4 config-mac", mackey, 32);
	cr_assert_not_null(HMAC(EVP_sha256(), mackey, 32, msg, (size_t)(p - msg), macgot, &mlen));
	cr_assert_eq(memcmp(macgot, q.config_mac, 32), 0, "config_mac is not the documented HMAC");
}

/* Every field of a slot, changed in the text form: the unlock by another slot fails the MAC. */
Test(slots, a_changed_slot_is_refused)
{
	uint8_t mk[32], key[32], out[32];
	struct sc_config c, t, p;
	int slot;

	three_slots(&c, mk, key);
	for (int f = 0; f < 10; f++) {
		t = c;
		switch (f) {
		case 0: t.slots[1].label[0] ^= 1; break;
		case 1: t.slots[1].slot_created += 1; break;
		case 2: t.slots[1].argon2_t = 2; break;
		case 3: t.slots[1].salt[5] ^= 1; break;
		case 4: t.slots[1].key_check[0] ^= 1; break;
		case 5: t.slots[1].wrapped[20] ^= 1; break;
		case 6: t.slots[2].used = false; break;			/* dropped */
		case 7: t.slots[5] = t.slots[2]; t.slots[2].used = false; break;	/* moved */
		case 8: t.features ^= SC_FEAT_NAMES; break;
		case 9: t.slots[3] = t.slots[2]; snprintf(t.slots[3].label, 8, "copy"); break;
		}
		reparse(&t, &p);
		cr_assert_eq(sc_config_open(&p, false, PW, strlen(PW), out, &slot), 0, "case %d", f);
		cr_assert_eq(sc_config_mac_check(&p, mk), -EBADMSG, "case %d: MAC holds", f);
		cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), -EBADMSG, "case %d", f);
	}
	/* the opening slot's own wrap changed: its tag fails, the slot named */
	t = c;
	t.slots[0].wrapped[30] ^= 1;
	cr_assert_eq(sc_config_open(&t, false, PW, strlen(PW), out, &slot), -EBADMSG);
	cr_assert_eq(slot, 0);
	/* its cost or salt changed: the password no longer fits it */
	t = c;
	t.slots[0].scrypt_n = 2048;
	cr_assert_eq(sc_config_open(&t, false, PW, strlen(PW), out, &slot), -EKEYREJECTED);
}

static int parse_edit(const struct sc_config *c, const char *from, const char *to)
{
	char text[SC_CONFIG_MAX_TEXT], out[SC_CONFIG_MAX_TEXT + 512], err[160];
	struct sc_config parsed;
	uint8_t md[32];
	unsigned int l;
	char *at, *sum;
	size_t n;

	cr_assert_gt(sc_config_format(c, text, sizeof(text)), 0);
	sum = strstr(text, "checksum = ");
	*sum = '\0';
	at = strstr(text, from);
	cr_assert_not_null(at, "%s not in config", from);
	snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	n = strlen(out);
	cr_assert_eq(EVP_Digest(out, n, md, &l, EVP_sha256(), NULL), 1);
	n += (size_t)snprintf(out + n, sizeof(out) - n, "checksum = ");
	for (int i = 0; i < 32; i++)
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%02x", md[i]);
	snprintf(out + n, sizeof(out) - n, "\n");
	err[0] = '\0';
	n = (size_t)sc_config_parse(out, strlen(out), &parsed, err, sizeof(err));
	cr_assert((int)n == 0 || (err[0] && !strchr(err, '\n')), "no one-line reason");
	return (int)n;
}

Test(slots, strict_parsing)
{
	static const struct { const char *from, *to; int want; } cases[] = {
		{ "format = 4\n", "format = 5\n", -EPROTONOSUPPORT },
		{ "format = 4\n", "format = 3\n", -EUCLEAN },	/* slot keys in format 3 */
		{ "format = 4\n", "format = 4\nkdf = scrypt\n", -EUCLEAN },
		{ "format = 4\n", "format = 4\nsalt = 00\n", -EUCLEAN },
		{ "slot2.label = usb key\n", "", -EUCLEAN },	/* a slot missing a key */
		{ "slot2.label = usb key\n", "slot2.label = laptop\n", -EINVAL },	/* twice */
		{ "slot2.label = usb key\n", "slot2.label = 42\n", -EUCLEAN },
		{ "slot2.label = usb key\n", "slot2.label = \n", -EUCLEAN },
		{ "slot2.label = usb key\n", "slot2.label = " "012345678901234567890123456789abc\n",
		  -EUCLEAN },
		{ "slot2.label = usb key\n", "slot8.label = usb key\n", -EUCLEAN },	/* unknown key */
		{ "slot0.kdf = scrypt N=1024 r=8 p=1\n", "slot0.kdf = scrypt N=1024 r=8\n", -EUCLEAN },
		{ "slot0.kdf = scrypt N=1024 r=8 p=1\n", "slot0.kdf = scrypt N=1024  r=8 p=1\n",
		  -EUCLEAN },
		{ "slot0.kdf = scrypt N=1024 r=8 p=1\n", "slot0.kdf = scrypt N=01024 r=8 p=1\n",
		  -EUCLEAN },
		{ "slot0.kdf = scrypt N=1024 r=8 p=1\n", "slot0.kdf = scrypt r=8 N=1024 p=1\n",
		  -EUCLEAN },
		{ "slot0.kdf = scrypt N=1024 r=8 p=1\n", "slot0.kdf = pbkdf2 N=1024 r=8 p=1\n",
		  -EINVAL },
		{ "slot0.kdf = scrypt N=1024 r=8 p=1\n", "slot0.kdf = scrypt N=33554432 r=8 p=1\n",
		  -EINVAL },
		{ "slot0.kdf = scrypt N=1024 r=8 p=1\n", "slot0.kdf = keyfile\n", 0 },
		/* Argon2id's bounds: memory, passes, lanes, work */
		{ "slot1.kdf = argon2id t=1 m=8192 p=1\n", "slot1.kdf = argon2id t=1 m=4194304 p=1\n",
		  0 },
		{ "slot1.kdf = argon2id t=1 m=8192 p=1\n", "slot1.kdf = argon2id t=1 m=4194305 p=1\n",
		  -EINVAL },
		{ "slot1.kdf = argon2id t=1 m=8192 p=1\n", "slot1.kdf = argon2id t=1 m=8191 p=1\n",
		  -EINVAL },
		{ "slot1.kdf = argon2id t=1 m=8192 p=1\n", "slot1.kdf = argon2id t=17 m=8192 p=1\n",
		  -EINVAL },
		{ "slot1.kdf = argon2id t=1 m=8192 p=1\n", "slot1.kdf = argon2id t=0 m=8192 p=1\n",
		  -EINVAL },
		{ "slot1.kdf = argon2id t=1 m=8192 p=1\n", "slot1.kdf = argon2id t=1 m=8192 p=17\n",
		  -EINVAL },
		{ "slot1.kdf = argon2id t=1 m=8192 p=1\n", "slot1.kdf = argon2id t=5 m=4194304 p=1\n",
		  -EINVAL },
		{ "slot1.kdf = argon2id t=1 m=8192 p=1\n", "slot1.kdf = argon2id t=4 m=4194304 p=1\n",
		  0 },
		{ "slot1.kdf = argon2id t=1 m=8192 p=1\n",
		  "slot1.kdf = argon2id t=99999999999 m=8192 p=1\n", -EINVAL },
		{ "slot1.created = ", "slot1.created = x", -EUCLEAN },
		{ "slot1.salt = ", "slot1.salt = 0", -EUCLEAN },
		{ "slot1.key_check = ", "slot1.key_check = 0", -EUCLEAN },
		{ "slot1.wrapped_key = ", "slot1.wrapped_key = 0", -EUCLEAN },
		{ "config_mac = ", "config_mac = 0", -EUCLEAN },
	};
	uint8_t mk[32], key[32];
	struct sc_config c;

	three_slots(&c, mk, key);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = parse_edit(&c, cases[i].from, cases[i].to);

		cr_assert_eq(ret, cases[i].want, "case %zu (%s -> %s): got %d want %d", i,
			     cases[i].from, cases[i].to, ret, cases[i].want);
	}
}

Test(slots, no_slot_left_is_malformed)
{
	uint8_t mk[32], key[32];
	struct sc_config c;
	char text[SC_CONFIG_MAX_TEXT];

	three_slots(&c, mk, key);
	c.slots[0].used = c.slots[1].used = c.slots[2].used = false;
	cr_assert_eq(sc_config_format(&c, text, sizeof(text)), -EINVAL);
}

Test(slots, the_table_rules)
{
	uint8_t mk[32], key[32];
	struct sc_config c;
	char label[16];
	int i;

	three_slots(&c, mk, key);
	cr_assert_eq(sc_config_slot_find(&c, "laptop"), 1);
	cr_assert_eq(sc_config_slot_find(&c, "2"), 2);
	cr_assert_eq(sc_config_slot_find(&c, "3"), -ENOENT);
	cr_assert_eq(sc_config_slot_find(&c, "8"), -ENOENT);
	cr_assert_eq(sc_config_slot_find(&c, "phone"), -ENOENT);
	cr_assert_eq(sc_config_slot_new(&c, "laptop", SC_KDF_SCRYPT), -EEXIST);
	cr_assert_eq(sc_config_slot_new(&c, "123", SC_KDF_SCRYPT), -EINVAL);
	cr_assert_eq(sc_config_slot_new(&c, " x", SC_KDF_SCRYPT), -EINVAL);
	cr_assert_eq(sc_config_slot_new(&c, "tab\there", SC_KDF_SCRYPT), -EINVAL);
	cr_assert_eq(sc_slot_label_check("Bob's laptop (2026)"), 0);
	for (i = 3; i < SC_SLOTS_MAX; i++) {
		snprintf(label, sizeof(label), "k%d", i);
		cr_assert_eq(sc_config_slot_new(&c, label, SC_KDF_KEYFILE), i);
		cr_assert_eq(sc_config_wrap_slot(&c, (unsigned)i, key, 32, mk), 0);
	}
	cr_assert_eq(sc_config_slot_new(&c, "one more", SC_KDF_KEYFILE), -ENOSPC);
	/* a freed place is taken again, the first free one */
	cr_assert_eq(sc_config_slot_remove(&c, 4), 0);
	cr_assert_eq(sc_config_slot_remove(&c, 4), -ENOENT);
	cr_assert_eq(sc_config_slot_new(&c, "again", SC_KDF_KEYFILE), 4);
	for (i = 0; i < SC_SLOTS_MAX - 1; i++)
		cr_assert_eq(sc_config_slot_remove(&c, (unsigned)i), 0);
	cr_assert_eq(sc_config_slot_remove(&c, SC_SLOTS_MAX - 1), -EBUSY, "the last slot");
}

/* The most a format 4 config can hold fits SC_CONFIG_MAX_TEXT (sc_crypto.h, SC_SLOTS_MAX). */
Test(slots, a_full_table_of_the_longest_fields_fits)
{
	uint8_t mk[32], key[32];
	struct sc_config c, p;
	char text[SC_CONFIG_MAX_TEXT], label[SC_SLOT_LABEL_MAX + 1];
	int n;

	three_slots(&c, mk, key);
	c.block_size = 65536;
	/*
	 * every bit a config may hold at once (0x40 never beside 0x10, 0x200
	 * never beside 0x80 or 0x100: as wide a number)
	 */
	c.features = SC_FEATURES_KNOWN & ~(SC_FEAT_HDR_V2 | SC_FEAT_UPGRADING |
					   SC_FEAT_LISTS_UPGRADING);
	c.created = 4102444799;	/* 2099-12-31T23:59:59Z: the widest time is as wide */
	for (unsigned i = 0; i < SC_SLOTS_MAX; i++) {
		struct sc_slot *s = &c.slots[i];

		memset(label, 'x', SC_SLOT_LABEL_MAX);
		label[SC_SLOT_LABEL_MAX] = '\0';
		label[0] = (char)('a' + i);
		memset(s, 0, sizeof(*s));
		s->used = true;
		memcpy(s->label, label, sizeof(label));
		s->slot_created = c.created;
		/* the widest kdf line a config may hold (scrypt's is 18 characters) */
		s->kdf = SC_KDF_ARGON2ID;
		s->argon2_t = SC_ARGON2_T_MAX;
		s->argon2_m = SC_ARGON2_M_MAX / 4;
		s->argon2_p = SC_ARGON2_P_MAX;
	}
	n = sc_config_format(&c, text, sizeof(text));
	cr_assert_gt(n, 0, "a full table does not fit %d bytes", SC_CONFIG_MAX_TEXT);
	cr_log_info("a full table of the longest fields: %d bytes of %d", n, SC_CONFIG_MAX_TEXT);
	reparse(&c, &p);
	cr_assert_eq(sc_config_slots(&p), SC_SLOTS_MAX);
}

/* Formats 2 and 3 become 4 with their one slot wrapped anew; a slot then added. */
Test(slots, an_old_config_upgrades)
{
	uint8_t mk[32], out[32];
	struct sc_config c, p;
	int i, slot;

	for (uint32_t f = 1; f <= 3; f++) {
		cr_assert_eq(sc_random(mk, 32), 0);
		cr_assert_eq(sc_config_init(&c, SC_CIPHER_AES_XTS, 4096, SC_KDF_SCRYPT, 1024), 0);
		c.format = f;
		cr_assert_eq(sc_config_wrap(&c, PW, strlen(PW), mk), 0);
		reparse(&c, &p);
		cr_assert_eq(p.format, f);
		cr_assert_str_eq(p.slots[0].label, "password");
		cr_assert_eq(sc_config_unwrap(&p, PW, strlen(PW), out), 0);
		cr_assert_eq(sc_config_upgrade(&p), 0);
		cr_assert_eq(sc_config_upgrade(&p), -EINVAL);
		cr_assert_eq(sc_config_wrap_slot(&p, 0, PW, strlen(PW), mk), 0);
		i = sc_config_slot_new(&p, "phone", SC_KDF_SCRYPT);
		cr_assert_eq(i, 1);
		p.slots[1].scrypt_n = 1024;
		p.slots[1].scrypt_r = 8;
		p.slots[1].scrypt_p = 1;
		cr_assert_eq(sc_config_wrap_slot(&p, 1, PW2, strlen(PW2), mk), 0);
		reparse(&p, &c);
		cr_assert_eq(c.format, 4);
		cr_assert_eq(sc_config_open(&c, false, PW, strlen(PW), out, &slot), 0);
		cr_assert_eq(slot, 0);
		cr_assert_eq(sc_config_open(&c, false, PW2, strlen(PW2), out, &slot), 0);
		cr_assert_eq(slot, 1);
		cr_assert_eq(memcmp(out, mk, 32), 0);
		cr_assert_eq(sc_config_mac_check(&c, mk), 0);
	}
}

/*
 * RFC 9106 section 5.3, Argon2id (libargon2 through its full interface:
 * the vector has a secret and associated data, and 32 KiB of memory,
 * below what a config may ask), then sc_argon2id against the library's
 * plain call: the wrapper passes t, m and p in their places.
 */
Test(slots, argon2id_vectors)
{
	static const uint8_t want[32] = {
		0x0d, 0x64, 0x0d, 0xf5, 0x8d, 0x78, 0x76, 0x6c, 0x08, 0xc0, 0x37, 0xa3,
		0x4a, 0x8b, 0x53, 0xc9, 0xd0, 0x1e, 0xf0, 0x45, 0x2d, 0x75, 0xb6, 0x5e,
		0xb5, 0x25, 0x20, 0xe9, 0x6b, 0x01, 0xe6, 0x59,
	};
	uint8_t pwd[32], salt[16], secret[8], ad[12], tag[32], a[32], b[32];
	argon2_context ctx = {
		.out = tag, .outlen = 32, .pwd = pwd, .pwdlen = 32, .salt = salt, .saltlen = 16,
		.secret = secret, .secretlen = 8, .ad = ad, .adlen = 12, .t_cost = 3,
		.m_cost = 32, .lanes = 4, .threads = 1, .version = ARGON2_VERSION_13,
	};

	memset(pwd, 1, sizeof(pwd));
	memset(salt, 2, sizeof(salt));
	memset(secret, 3, sizeof(secret));
	memset(ad, 4, sizeof(ad));
	cr_assert_eq(argon2_ctx(&ctx, Argon2_id), ARGON2_OK);
	cr_assert_eq(memcmp(tag, want, 32), 0, "libargon2 does not give RFC 9106's tag");
	cr_assert_eq(sc_argon2id(PW, strlen(PW), salt, 16, 2, 9000, 3, a, 32), 0);
	cr_assert_eq(argon2id_hash_raw(2, 9000, 3, PW, strlen(PW), salt, 16, b, 32), ARGON2_OK);
	cr_assert_eq(memcmp(a, b, 32), 0);
	cr_assert_eq(sc_argon2id(PW, strlen(PW), salt, 16, 1, SC_ARGON2_M_MIN - 1, 1, a, 32),
		     -EINVAL);
	cr_assert_eq(sc_argon2id(PW, strlen(PW), salt, 16, 17, SC_ARGON2_M_MIN, 1, a, 32),
		     -EINVAL);
	cr_assert_eq(sc_argon2id(PW, strlen(PW), salt, 16, 5, SC_ARGON2_M_MAX, 1, a, 32),
		     -EINVAL);
}
