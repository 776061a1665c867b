/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.c - the volume config (BACKING/.stackcrypt.conf): its text form,
 * strict parsing, and wrapping the master key under a key-encryption key
 * (KEK) derived from a password (scrypt or Argon2id) or a key file (HKDF),
 * in each key slot.
 *
 * Two independent checks (docs/format.md, "Volume config"):
 *  - checksum: SHA-256 of the text before it.  Catches accidental damage
 *    without any secret, so "corrupt" (-EUCLEAN) is told apart before a
 *    password is even asked for.
 *  - AES-256-GCM over the master key with every other field as associated
 *    data, plus key_check = HKDF(KEK)[0:16] so that a wrong password
 *    (-EKEYREJECTED) is told apart from fields changed behind our back
 *    (-EBADMSG: right KEK, GCM tag fails).
 * Three formats: in format 1 the KEK itself is the GCM key and also the
 * HKDF input of key_check (one key in two primitives); in format 2 the KEK
 * is only an HKDF input, and the wrap key and key_check come from their own
 * labels.  Format 3 is format 2 plus a third check:
 *  - config_mac: HMAC-SHA256 under a key derived from the master key over
 *    the fields that describe the volume.  The GCM tag is keyed by the
 *    password, which recovery ('passwd --masterkey') does not have: without
 *    this MAC whoever can write BACKING could switch a feature off and have
 *    recovery write it back authenticated (review finding 1, issue #28).
 * Format 4 holds up to SC_SLOTS_MAX key slots: each one a password under
 * scrypt or Argon2id, or a key file, with its own salt, check value and
 * wrapped copy of the master key (each slot's KEK feeds only v4 labels),
 * and config_mac covers the slot table as well as the volume's fields, so
 * a slot added, removed or edited behind our back is refused once the
 * master key is out.  Formats 1 to 3 are slot 0 alone (sc_crypto.h).
 * All are read and unlocked; wrapping keeps a config's format.
 * Writing the file atomically is the caller's job (fs/volume/volume.c): this file
 * only turns structs into bytes and back.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/evp.h>
#include "crypto_i.h"
#include "kdf_labels_i.h"

#define SCRYPT_LOG2_MIN	10
#define SCRYPT_LOG2_MAX	24
_Static_assert((1ull << SCRYPT_LOG2_MAX) == SC_SCRYPT_N_MAX, "one N limit");
#define SCRYPT_R_MAX	32
#define SCRYPT_P_MAX	16
#define KEK_LEN		32
#define GCM_NONCE_LEN	12
#define GCM_TAG_LEN	16
#define HEADER_LINE	"# stackcrypt volume config - do not edit"

_Static_assert(sizeof(((struct sc_config *)0)->wrapped) ==
	       GCM_NONCE_LEN + SC_MASTER_KEY_LEN + GCM_TAG_LEN, "wrapped = nonce | ct | tag");

static const char *const kdf_names[] = {
	[SC_KDF_SCRYPT]		= "scrypt",
	[SC_KDF_KEYFILE]	= "keyfile",
	[SC_KDF_ARGON2ID]	= "argon2id",
};

const char *sc_kdf_name(enum sc_kdf_id id)
{
	return (unsigned)id < sizeof(kdf_names) / sizeof(kdf_names[0]) ? kdf_names[id] : NULL;
}

static int scrypt_n_check(uint64_t n)
{
	if (n < (1ull << SCRYPT_LOG2_MIN) || n > (1ull << SCRYPT_LOG2_MAX) || (n & (n - 1)))
		return -EINVAL;
	return 0;
}

int sc_slot_cost_check(const struct sc_slot *s, const char **why)
{
	if (s->kdf == SC_KDF_SCRYPT) {
		if (s->argon2_t || s->argon2_m || s->argon2_p)
			return *why = "argon2 parameters with kdf scrypt", -EINVAL;
		if (scrypt_n_check(s->scrypt_n) != 0)
			return *why = "scrypt_n not a power of two in 2^10..2^24", -EINVAL;
		if (s->scrypt_r < 1 || s->scrypt_r > SCRYPT_R_MAX)
			return *why = "scrypt_r not in 1..32", -EINVAL;
		if (s->scrypt_p < 1 || s->scrypt_p > SCRYPT_P_MAX)
			return *why = "scrypt_p not in 1..16", -EINVAL;
		/* each factor is bounded above, so the products cannot overflow */
		if (128ull * s->scrypt_r * s->scrypt_n > SC_SCRYPT_MEM_MAX)
			return *why = "scrypt_n and scrypt_r ask for more than 16 GiB "
				"(128*r*N bytes; init writes at most N=2^24 with r=8)", -EINVAL;
		if (s->scrypt_n * s->scrypt_r * s->scrypt_p > SC_SCRYPT_WORK_MAX)
			return *why = "scrypt_n, scrypt_r and scrypt_p ask for more work than "
				"N=2^24, r=8, p=1 (the most init writes)", -EINVAL;
	} else if (s->kdf == SC_KDF_ARGON2ID) {
		if (s->scrypt_n || s->scrypt_r || s->scrypt_p)
			return *why = "scrypt parameters with kdf argon2id", -EINVAL;
		if (s->argon2_t < 1 || s->argon2_t > SC_ARGON2_T_MAX)
			return *why = "argon2id t (passes) not in 1..16", -EINVAL;
		if (s->argon2_m < SC_ARGON2_M_MIN || s->argon2_m > SC_ARGON2_M_MAX)
			return *why = "argon2id m not in 8 MiB..4 GiB (8192..4194304 KiB)", -EINVAL;
		if (s->argon2_p < 1 || s->argon2_p > SC_ARGON2_P_MAX)
			return *why = "argon2id p (lanes) not in 1..16", -EINVAL;
		if (s->argon2_m < 8ull * s->argon2_p)
			return *why = "argon2id m below 8 KiB per lane", -EINVAL;
		if ((uint64_t)s->argon2_t * s->argon2_m > SC_ARGON2_WORK_MAX)
			return *why = "argon2id t and m ask for more work than 4 passes over "
				"4 GiB", -EINVAL;
	} else if (s->kdf == SC_KDF_KEYFILE) {
		if (s->scrypt_n || s->scrypt_r || s->scrypt_p || s->argon2_t || s->argon2_m ||
		    s->argon2_p)
			return *why = "KDF parameters with kdf keyfile", -EINVAL;
	} else {
		return *why = "unknown kdf", -EINVAL;
	}
	return 0;
}

int sc_slot_label_check(const char *label)
{
	size_t n = strnlen(label, SC_SLOT_LABEL_MAX + 1), digits = 0;

	if (n == 0 || n > SC_SLOT_LABEL_MAX || label[0] == ' ' || label[n - 1] == ' ')
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (label[i] < 0x20 || label[i] > 0x7e)
			return -EINVAL;
		digits += label[i] >= '0' && label[i] <= '9';
	}
	/* a slot is named by its label or its number: the two must not meet */
	return digits == n ? -EINVAL : 0;
}

/* The slot table's shape: slot 0 alone before format 4, distinct labels in it. */
static int check_slots(const struct sc_config *c, const char **why)
{
	unsigned used = 0;
	int ret;

	for (unsigned i = 0; i < SC_SLOTS_MAX; i++) {
		const struct sc_slot *s = &c->slots[i];

		if (!s->used)
			continue;
		used++;
		if (c->format < SC_CONFIG_FORMAT_SLOTS && i != 0)
			return *why = "key slots other than slot 0 before format 4", -EINVAL;
		if (c->format < SC_CONFIG_FORMAT_SLOTS && s->kdf == SC_KDF_ARGON2ID)
			return *why = "kdf argon2id needs config format 4", -EINVAL;
		ret = sc_slot_cost_check(s, why);
		if (ret != 0)
			return ret;
		if (c->format < SC_CONFIG_FORMAT_SLOTS)
			continue;
		if (sc_slot_label_check(s->label) != 0)
			return *why = "a slot label that is not 1..32 printable characters "
				"(not all digits)", -EINVAL;
		for (unsigned j = 0; j < i; j++)
			if (c->slots[j].used && strcmp(c->slots[j].label, s->label) == 0)
				return *why = "two slots with one label", -EINVAL;
	}
	if (used == 0)
		return *why = "no key slot", -EINVAL;
	return 0;
}

/* Range checks shared by init, parse and unwrap (a struct may be hand-built). */
static int check_fields(const struct sc_config *c, const char **why)
{
	if (c->format < 1 || c->format > SC_CONFIG_FORMAT_MAX)
		return *why = "unsupported format", -EPROTONOSUPPORT;
	if ((c->features & ~SC_FEATURES_KNOWN) != 0)
		return *why = "unknown feature bits", -EPROTONOSUPPORT;
	if (sc_cipher_name(c->cipher) == NULL)
		return *why = "unknown cipher", -EINVAL;
	/* Format 1 uses one derived key twice (section 6); a new format gets none of that. */
	if (c->cipher == SC_CIPHER_AES_GCM && c->format < 2)
		return *why = "cipher aes-gcm needs config format 2", -EINVAL;
	/* Version 2 headers are the length-preserving formats' per-file headers. */
	if (c->cipher == SC_CIPHER_AES_GCM && (c->features & SC_FEAT_HDR_V2))
		return *why = "feature hdr-v2 does not apply to cipher aes-gcm", -EINVAL;
	/* Files are bound to places only encrypted, bound names give (format.md 11.1). */
	if ((c->features & SC_FEAT_INTEGRITY) &&
	    (c->cipher != SC_CIPHER_AES_GCM ||
	     (c->features & SC_FEATURES_INTEG_NEEDS) != SC_FEATURES_INTEG_NEEDS))
		return *why = "integrity needs cipher aes-gcm and bound encrypted names "
			"(features 0x2, 0x4, 0x8)", -EINVAL;
	if ((c->features & SC_FEAT_DIR_LISTS) && !(c->features & SC_FEAT_INTEGRITY))
		return *why = "directory listings (feature 0x100) need integrity (feature 0x10)",
		       -EINVAL;
	/* the tree's root is a field of the version 2 header (format.md 11.10) */
	if ((c->features & SC_FEAT_UNIT_TREE) && !(c->features & SC_FEAT_INTEGRITY))
		return *why = "the unit tree (feature 0x20) needs integrity (feature 0x10)",
			-EINVAL;
	/* a volume being converted into an integrity volume (format.md 11.12): one about to be one */
	if ((c->features & SC_FEAT_UPGRADING) &&
	    (c->cipher != SC_CIPHER_AES_GCM ||
	     (c->features & SC_FEATURES_INTEG_NEEDS) != SC_FEATURES_INTEG_NEEDS ||
	     (c->features & (SC_FEAT_INTEGRITY | SC_FEAT_UNIT_TREE | SC_FEAT_REKEYING |
			     SC_FEAT_DIR_LISTS))))
		return *why = "an upgrade (feature 0x40) needs cipher aes-gcm and bound encrypted "
			"names (features 0x2, 0x4, 0x8), and no 0x10, 0x20, 0x80 or 0x100", -EINVAL;
	/*
	 * an integrity volume being given its listing records (format.md
	 * 11.12), in place: with or without the unit tree, whose records the
	 * same layers write with their roots
	 */
	if ((c->features & SC_FEAT_LISTS_UPGRADING) &&
	    (!(c->features & SC_FEAT_INTEGRITY) ||
	     (c->features & (SC_FEAT_UPGRADING | SC_FEAT_REKEYING | SC_FEAT_DIR_LISTS))))
		return *why = "an upgrade to listing records (feature 0x200) needs integrity "
			"(feature 0x10), and no 0x40, 0x80 or 0x100", -EINVAL;
	if (sc_block_size_check(c->block_size) != 0)
		return *why = "block_size not a power of two in 512..65536", -EINVAL;
	return check_slots(c, why);
}

/* Defaults, random salt and uuid, created = now.  0, -EINVAL or -EIO. */
int sc_config_init(struct sc_config *cfg, enum sc_cipher_id cipher,
		   uint32_t block_size, enum sc_kdf_id kdf, uint64_t scrypt_n)
{
	const char *why;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	cfg->format = kdf == SC_KDF_ARGON2ID ? SC_CONFIG_FORMAT_SLOTS : SC_CONFIG_FORMAT;
	cfg->cipher = cipher;
	cfg->block_size = block_size;
	cfg->features = cipher == SC_CIPHER_AES_GCM ? 0 : SC_FEATURES_DEFAULT;
	cfg->used = true;
	snprintf(cfg->label, sizeof(cfg->label), "%s",
		 kdf == SC_KDF_KEYFILE ? "keyfile" : "password");
	cfg->kdf = kdf;
	if (kdf == SC_KDF_SCRYPT) {
		cfg->scrypt_n = scrypt_n ? scrypt_n : SC_SCRYPT_N_DEFAULT;
		cfg->scrypt_r = SC_SCRYPT_R_DEFAULT;
		cfg->scrypt_p = SC_SCRYPT_P_DEFAULT;
	} else if (kdf == SC_KDF_ARGON2ID) {
		/* the least cost sc_argon2_choose gives: the caller measures its own */
		cfg->argon2_t = 3;
		cfg->argon2_m = 64 * 1024;
		cfg->argon2_p = 1;
	}
	ret = check_fields(cfg, &why);
	if (ret != 0)
		return -EINVAL;
	cfg->created = (int64_t)time(NULL);
	cfg->slot_created = cfg->created;
	ret = sc_random(cfg->salt, sizeof(cfg->salt));
	if (ret == 0)
		ret = sc_random(cfg->uuid, sizeof(cfg->uuid));
	return ret;
}

/* ---- the slot table ---- */

unsigned sc_config_slots(const struct sc_config *cfg)
{
	unsigned n = 0;

	for (unsigned i = 0; i < SC_SLOTS_MAX; i++)
		n += cfg->slots[i].used;
	return n;
}

int sc_config_slot_find(const struct sc_config *cfg, const char *which)
{
	uint64_t v;
	int r;

	for (unsigned i = 0; i < SC_SLOTS_MAX; i++)
		if (cfg->slots[i].used && strcmp(cfg->slots[i].label, which) == 0)
			return (int)i;
	/* a label is never all digits (sc_slot_label_check): this is a number */
	r = -1;
	if (*which >= '0' && *which <= '9' && strlen(which) <= 3) {
		char *end;

		v = strtoull(which, &end, 10);
		if (*end == '\0' && v < SC_SLOTS_MAX && cfg->slots[v].used)
			r = (int)v;
	}
	return r >= 0 ? r : -ENOENT;
}

int sc_config_slot_new(struct sc_config *cfg, const char *label, enum sc_kdf_id kdf)
{
	struct sc_slot *s;
	unsigned i;
	int ret;

	if (sc_slot_label_check(label) != 0 || sc_kdf_name(kdf) == NULL)
		return -EINVAL;
	for (i = 0; i < SC_SLOTS_MAX; i++)
		if (cfg->slots[i].used && strcmp(cfg->slots[i].label, label) == 0)
			return -EEXIST;
	for (i = 0; i < SC_SLOTS_MAX && cfg->slots[i].used; i++)
		;
	if (i == SC_SLOTS_MAX)
		return -ENOSPC;
	s = &cfg->slots[i];
	memset(s, 0, sizeof(*s));
	ret = sc_random(s->salt, sizeof(s->salt));
	if (ret != 0)
		return ret;
	s->used = true;
	snprintf(s->label, sizeof(s->label), "%s", label);
	s->slot_created = (int64_t)time(NULL);
	s->kdf = kdf;
	return (int)i;
}

int sc_config_slot_remove(struct sc_config *cfg, unsigned slot)
{
	if (slot >= SC_SLOTS_MAX || !cfg->slots[slot].used)
		return -ENOENT;
	if (sc_config_slots(cfg) == 1)
		return -EBUSY;
	sc_wipe(&cfg->slots[slot], sizeof(cfg->slots[slot]));
	return 0;
}

int sc_config_upgrade(struct sc_config *cfg)
{
	if (cfg->format >= SC_CONFIG_FORMAT_SLOTS)
		return -EINVAL;
	cfg->format = SC_CONFIG_FORMAT_SLOTS;
	cfg->slot_created = cfg->created;
	return 0;
}

/* ---- KEK, key check, associated data ---- */

static int derive_kek(const struct sc_config *c, const struct sc_slot *s, const void *secret,
		      size_t len, uint8_t *kek)
{
	if (s->kdf == SC_KDF_KEYFILE) {
		const char *label = c->format == 1 ? SC_LABEL_KEK :
				    c->format < SC_CONFIG_FORMAT_SLOTS ? SC_LABEL_KEK_V2 :
				    SC_LABEL_KEK_V4;

		if (len != 32)
			return -EINVAL;
		return sc_hkdf_sha256(secret, len, s->salt, sizeof(s->salt), label, strlen(label),
				      kek, KEK_LEN);
	}
	if (s->kdf == SC_KDF_ARGON2ID)
		return sc_argon2id(secret, len, s->salt, sizeof(s->salt), s->argon2_t,
				   s->argon2_m, s->argon2_p, kek, KEK_LEN);
	return sc_scrypt(secret, len, s->salt, sizeof(s->salt), s->scrypt_n, s->scrypt_r,
			 s->scrypt_p, kek, KEK_LEN);
}

static int kek_hkdf(const uint8_t *kek, const char *label, uint8_t *out, size_t len)
{
	return sc_hkdf_sha256(kek, KEK_LEN, NULL, 0, label, strlen(label), out, len);
}

/*
 * From the secret: the KEK, the GCM key that wraps the master key and the
 * check value.  Format 1: wrap = KEK, check = HKDF(KEK, v1 key-check).
 * Formats 2 and 3: wrap = HKDF(KEK, v2 config-wrap-key), check =
 * HKDF(KEK, v2 key-check): no key serves two primitives.  Format 4: the
 * same with the v4 slot labels.  kek and wrap are KEK_LEN bytes of locked
 * memory.  0, -EINVAL, -ENOMEM or -EIO.
 */
int sc_config_derive_slot(const struct sc_config *c, unsigned slot, const void *secret,
			  size_t len, uint8_t *kek, uint8_t *wrap, uint8_t check[16])
{
	bool v4 = c->format >= SC_CONFIG_FORMAT_SLOTS;
	int ret;

	if (slot >= SC_SLOTS_MAX)
		return -EINVAL;
	ret = derive_kek(c, &c->slots[slot], secret, len, kek);
	if (ret != 0)
		return ret;
	if (c->format == 1) {
		memcpy(wrap, kek, KEK_LEN);
		return kek_hkdf(kek, SC_LABEL_KEY_CHECK, check, 16);
	}
	ret = kek_hkdf(kek, v4 ? SC_LABEL_WRAP_KEY_V4 : SC_LABEL_WRAP_KEY_V2, wrap, KEK_LEN);
	if (ret == 0)
		ret = kek_hkdf(kek, v4 ? SC_LABEL_KEY_CHECK_V4 : SC_LABEL_KEY_CHECK_V2, check, 16);
	return ret;
}

int sc_config_derive(const struct sc_config *c, const void *secret, size_t len,
		     uint8_t *kek, uint8_t *wrap, uint8_t check[16])
{
	return sc_config_derive_slot(c, 0, secret, len, kek, wrap, check);
}

#define AAD_LEN	(sizeof(SC_LABEL_CONFIG_AAD) - 1 + 4 + 1 + 4 + 8 + 1 + 8 + 4 + 4 + 32 + 16 + 8 + 16)
#define SLOT_AAD_LEN	(sizeof(SC_LABEL_SLOT_AAD_V4) - 1 + 16 + 1 + 8 + 4 * 5 + 32 + 16)
_Static_assert(SLOT_AAD_LEN == 111, "format.md 6.4 lists 111 bytes");
#define AAD_MAX	(AAD_LEN > SLOT_AAD_LEN ? AAD_LEN : SLOT_AAD_LEN)

/* A slot's KDF and its cost, fixed width, little-endian (format.md 6.4). */
static uint8_t *put_cost(uint8_t *p, const struct sc_slot *s)
{
	*p++ = (uint8_t)s->kdf;
	sc_le64(p, s->scrypt_n);	p += 8;
	sc_le64(p, s->scrypt_r);	p += 4;
	sc_le64(p, s->scrypt_p);	p += 4;
	sc_le64(p, s->argon2_t);	p += 4;
	sc_le64(p, s->argon2_m);	p += 4;
	sc_le64(p, s->argon2_p);	p += 4;
	return p;
}

/*
 * The associated data of slot s's wrap.  Formats 1 to 3: every field but
 * wrapped_key, fixed order and width, little-endian (format.md 6).
 * Format 4: the volume's uuid and the slot's KDF, cost, salt and check
 * value (6.4); its label, time and place are under config_mac.  Returns
 * the length.
 */
static size_t config_aad(const struct sc_config *c, const struct sc_slot *s, uint8_t *aad)
{
	uint8_t *p = aad;

	if (c->format >= SC_CONFIG_FORMAT_SLOTS) {
		memcpy(p, SC_LABEL_SLOT_AAD_V4, sizeof(SC_LABEL_SLOT_AAD_V4) - 1);
		p += sizeof(SC_LABEL_SLOT_AAD_V4) - 1;
		memcpy(p, c->uuid, 16);			p += 16;
		p = put_cost(p, s);
		memcpy(p, s->salt, 32);			p += 32;
		memcpy(p, s->key_check, 16);		p += 16;
		return (size_t)(p - aad);
	}
	_Static_assert(sizeof(SC_LABEL_CONFIG_AAD) == sizeof(SC_LABEL_CONFIG_AAD_V2),
		       "both formats' AAD prefixes are 20 bytes");
	memcpy(p, c->format == 1 ? SC_LABEL_CONFIG_AAD : SC_LABEL_CONFIG_AAD_V2,
	       sizeof(SC_LABEL_CONFIG_AAD) - 1);
	p += sizeof(SC_LABEL_CONFIG_AAD) - 1;
	sc_le64(p, c->format);			p += 4;
	*p++ = (uint8_t)c->cipher;
	sc_le64(p, c->block_size);		p += 4;
	sc_le64(p, c->features);		p += 8;
	*p++ = (uint8_t)s->kdf;
	sc_le64(p, s->scrypt_n);		p += 8;
	sc_le64(p, s->scrypt_r);		p += 4;
	sc_le64(p, s->scrypt_p);		p += 4;
	memcpy(p, s->salt, 32);			p += 32;
	memcpy(p, c->uuid, 16);			p += 16;
	sc_le64(p, (uint64_t)c->created);	p += 8;
	memcpy(p, s->key_check, 16);		p += 16;
	return (size_t)(p - aad);
}

#define MAC_MSG_LEN	(4 + 1 + 4 + 8 + 16 + 8)
/* One slot in the format 4 MAC: index, label length, label, created, cost, salt, check, wrapped. */
#define MAC_SLOT_MAX	(1 + 1 + SC_SLOT_LABEL_MAX + 8 + 1 + 8 + 4 * 5 + 32 + 16 + 60)

/*
 * The config MAC (format.md 6.3, 6.4): HMAC-SHA256 keyed with HKDF(mk,
 * "stackcrypt/v3 config-mac") over format, cipher, block size, features,
 * uuid and created, fixed width, little-endian.  Format 3 leaves the
 * password's fields out (the GCM tag covers those at unlock, and recovery
 * replaces them).  Format 4 (its own key, "stackcrypt/v4 config-mac") adds
 * every slot in use, in index order, all its fields: the table is the
 * volume's, and recovery keeps it only as it is.
 */
static int config_mac(const struct sc_config *c, const uint8_t *mk, uint8_t mac[32])
{
	uint8_t msg[MAC_MSG_LEN + SC_SLOTS_MAX * MAC_SLOT_MAX], le[8], *key, *p = msg;
	const char *label = c->format >= SC_CONFIG_FORMAT_SLOTS ? SC_LABEL_CONFIG_MAC_V4 :
			    SC_LABEL_CONFIG_MAC_V3;
	int ret;

	sc_le64(le, c->format);		memcpy(p, le, 4);	p += 4;
	*p++ = (uint8_t)c->cipher;
	sc_le64(le, c->block_size);	memcpy(p, le, 4);	p += 4;
	sc_le64(p, c->features);				p += 8;
	memcpy(p, c->uuid, 16);					p += 16;
	sc_le64(p, (uint64_t)c->created);			p += 8;
	_Static_assert(MAC_MSG_LEN == 41, "format.md 6.3 lists 41 bytes");
	for (unsigned i = 0; c->format >= SC_CONFIG_FORMAT_SLOTS && i < SC_SLOTS_MAX; i++) {
		const struct sc_slot *s = &c->slots[i];
		size_t n = strnlen(s->label, SC_SLOT_LABEL_MAX);

		if (!s->used)
			continue;
		*p++ = (uint8_t)i;
		*p++ = (uint8_t)n;
		memcpy(p, s->label, n);				p += n;
		sc_le64(p, (uint64_t)s->slot_created);		p += 8;
		p = put_cost(p, s);
		memcpy(p, s->salt, 32);				p += 32;
		memcpy(p, s->key_check, 16);			p += 16;
		memcpy(p, s->wrapped, sizeof(s->wrapped));	p += sizeof(s->wrapped);
	}
	key = sc_secure_alloc(32);
	if (key == NULL)
		return -ENOMEM;
	ret = sc_hkdf_sha256(mk, SC_MASTER_KEY_LEN, NULL, 0, label, strlen(label), key, 32);
	if (ret == 0)
		ret = sc_hmac_sha256(key, 32, msg, (size_t)(p - msg), mac);
	sc_secure_free(key, 32);
	return ret;
}

int sc_config_mac_check(const struct sc_config *cfg, const uint8_t mk[SC_MASTER_KEY_LEN])
{
	uint8_t mac[32];
	int ret;

	if (cfg->format < SC_CONFIG_FORMAT_MAC)
		return -ENODATA;
	ret = config_mac(cfg, mk, mac);
	if (ret == 0 && !sc_memeq_ct(mac, cfg->config_mac, sizeof(mac)))
		ret = -EBADMSG;
	sc_wipe(mac, sizeof(mac));
	return ret;
}

int sc_config_seal(struct sc_config *cfg, const uint8_t mk[SC_MASTER_KEY_LEN])
{
	if (cfg->format < SC_CONFIG_FORMAT_MAC)
		return 0;
	return config_mac(cfg, mk, cfg->config_mac);
}

/*
 * AES-256-GCM under the wrap key over slot s of c; enc 1 seals mk into
 * wrapped, 0 opens it (-EBADMSG on a bad tag).
 */
static int gcm(const uint8_t *wrap_key, const struct sc_config *c, const struct sc_slot *s,
	       uint8_t *wrapped, uint8_t *mk, int enc)
{
	uint8_t aad[AAD_MAX];
	uint8_t *nonce = wrapped, *ct = wrapped + GCM_NONCE_LEN;
	uint8_t *tag = ct + SC_MASTER_KEY_LEN;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	size_t aad_len;
	int outl, ret = -EIO;

	if (ctx == NULL)
		return -ENOMEM;
	aad_len = config_aad(c, s, aad);
	if (EVP_CipherInit_ex2(ctx, EVP_aes_256_gcm(), wrap_key, nonce, enc, NULL) != 1 ||
	    EVP_CipherUpdate(ctx, NULL, &outl, aad, (int)aad_len) != 1)
		goto out_free_ctx;
	if (enc) {
		if (EVP_CipherUpdate(ctx, ct, &outl, mk, SC_MASTER_KEY_LEN) != 1 ||
		    EVP_CipherFinal_ex(ctx, ct + outl, &outl) != 1 ||
		    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, GCM_TAG_LEN, tag) != 1)
			goto out_free_ctx;
		ret = 0;
	} else {
		if (EVP_CipherUpdate(ctx, mk, &outl, ct, SC_MASTER_KEY_LEN) != 1 ||
		    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, GCM_TAG_LEN, tag) != 1)
			goto out_free_ctx;
		if (EVP_CipherFinal_ex(ctx, mk + outl, &outl) != 1) {
			sc_wipe(mk, SC_MASTER_KEY_LEN);	/* unauthenticated plaintext */
			ret = -EBADMSG;
			goto out_free_ctx;
		}
		ret = 0;
	}
out_free_ctx:
	EVP_CIPHER_CTX_free(ctx);
	return ret;
}

int sc_config_wrap_slot(struct sc_config *cfg, unsigned slot, const void *secret,
			size_t secret_len, const uint8_t mk[SC_MASTER_KEY_LEN])
{
	uint8_t *keys, tmp[SC_MASTER_KEY_LEN];
	struct sc_slot *s;
	const char *why;
	int ret;

	if (slot >= SC_SLOTS_MAX || !cfg->slots[slot].used || check_fields(cfg, &why) != 0)
		return -EINVAL;
	s = &cfg->slots[slot];
	keys = sc_secure_alloc(2 * KEK_LEN);	/* KEK, wrap key */
	if (keys == NULL)
		return -ENOMEM;
	ret = sc_config_derive_slot(cfg, slot, secret, secret_len, keys, keys + KEK_LEN,
				    s->key_check);
	if (ret == 0)
		ret = sc_random(s->wrapped, GCM_NONCE_LEN);
	if (ret == 0) {
		memcpy(tmp, mk, sizeof(tmp));	/* gcm() takes a writable mk */
		ret = gcm(keys + KEK_LEN, cfg, s, s->wrapped, tmp, 1);
		sc_wipe(tmp, sizeof(tmp));
	}
	/* last: in format 4 the MAC covers the wrapped key just made */
	if (ret == 0)
		ret = sc_config_seal(cfg, mk);
	sc_secure_free(keys, 2 * KEK_LEN);
	return ret;
}

/*
 * Sets key_check, wrapped (fresh GCM nonce) and, in format 3 and 4,
 * config_mac, of slot 0.  secret: the password, or the key file's 32 raw
 * bytes.  0, -EINVAL, -ENOMEM or -EIO.
 */
int sc_config_wrap(struct sc_config *cfg, const void *secret, size_t secret_len,
		   const uint8_t mk[SC_MASTER_KEY_LEN])
{
	return sc_config_wrap_slot(cfg, 0, secret, secret_len, mk);
}

/* Slot i opened with secret: 0, -EKEYREJECTED (not its secret), -EBADMSG (tampered). */
static int open_slot(const struct sc_config *cfg, unsigned i, const void *secret,
		     size_t secret_len, uint8_t *keys, uint8_t mk[SC_MASTER_KEY_LEN])
{
	const struct sc_slot *s = &cfg->slots[i];
	uint8_t check[16], wrapped[sizeof(s->wrapped)];
	int ret;

	if (s->kdf == SC_KDF_KEYFILE && secret_len != 32)
		return -EKEYREJECTED;	/* not a key at all: certainly not the key */
	ret = sc_config_derive_slot(cfg, i, secret, secret_len, keys, keys + KEK_LEN, check);
	if (ret == 0 && !sc_memeq_ct(check, s->key_check, sizeof(check)))
		ret = -EKEYREJECTED;
	if (ret == 0) {
		memcpy(wrapped, s->wrapped, sizeof(wrapped));
		ret = gcm(keys + KEK_LEN, cfg, s, wrapped, mk, 0);
	}
	sc_wipe(check, sizeof(check));
	return ret;
}

/* Every slot of the kinds asked for (password ones, key-file ones), in order. */
static int open_any(const struct sc_config *cfg, bool passwords, bool keyfiles,
		    const void *secret, size_t secret_len, uint8_t mk[SC_MASTER_KEY_LEN],
		    int *slot)
{
	const char *why;
	uint8_t *keys;
	int ret = -ENOKEY;

	*slot = -1;
	if (check_fields(cfg, &why) != 0)
		return -EINVAL;
	keys = sc_secure_alloc(2 * KEK_LEN);	/* KEK, wrap key */
	if (keys == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < SC_SLOTS_MAX; i++) {
		const struct sc_slot *s = &cfg->slots[i];
		bool kf = s->kdf == SC_KDF_KEYFILE;

		if (!s->used || (kf ? !keyfiles : !passwords))
			continue;
		ret = open_slot(cfg, i, secret, secret_len, keys, mk);
		if (ret != -EKEYREJECTED) {
			*slot = (int)i;
			break;
		}
	}
	sc_secure_free(keys, 2 * KEK_LEN);
	return ret;
}

int sc_config_open(const struct sc_config *cfg, bool keyfile, const void *secret,
		   size_t secret_len, uint8_t mk[SC_MASTER_KEY_LEN], int *slot)
{
	return open_any(cfg, !keyfile, keyfile, secret, secret_len, mk, slot);
}

/* 0, -EKEYREJECTED (wrong secret), -EBADMSG (tampered), -EINVAL, -ENOMEM, -EIO. */
int sc_config_unwrap(const struct sc_config *cfg, const void *secret, size_t secret_len,
		     uint8_t mk[SC_MASTER_KEY_LEN])
{
	int slot, ret = open_any(cfg, true, true, secret, secret_len, mk, &slot);

	if (ret == -ENOKEY)
		ret = -EKEYREJECTED;
	/* the password opened it; the fields must also be the master key's */
	if (ret == 0 && cfg->format >= SC_CONFIG_FORMAT_MAC) {
		ret = sc_config_mac_check(cfg, mk);
		if (ret != 0)
			sc_wipe(mk, SC_MASTER_KEY_LEN);
	}
	return ret;
}

/* ---- text form ---- */

static void hex_out(char *dst, const uint8_t *src, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		dst[2 * i] = hex[src[i] >> 4];
		dst[2 * i + 1] = hex[src[i] & 15];
	}
	dst[2 * n] = '\0';
}

static int hex_in(const char *s, uint8_t *dst, size_t n)
{
	if (strlen(s) != 2 * n)
		return -1;
	for (size_t i = 0; i < 2 * n; i++) {
		char c = s[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (v < 0)	/* lowercase only: one canonical spelling */
			return -1;
		if (i % 2 == 0)
			dst[i / 2] = (uint8_t)(v << 4);
		else
			dst[i / 2] |= (uint8_t)v;
	}
	return 0;
}

static int sha256_hex(const char *text, size_t len, char out[65])
{
	uint8_t md[32];
	unsigned int mdlen = 0;

	if (EVP_Digest(text, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
		return -EIO;
	hex_out(out, md, 32);
	return 0;
}

static int fmt_time(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL || strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return -EINVAL;
	return 0;
}

struct out {
	char	*buf;
	size_t	size, len;
	int	err;
};

static void __attribute__((format(printf, 2, 3))) put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->len < o->size ? o->size - o->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0 || o->len + (size_t)n >= o->size)
		o->err = -ENOSPC;
	else
		o->len += (size_t)n;
}

/* A slot's kdf line value: "scrypt N=.. r=.. p=..", "argon2id t=.. m=.. p=..", "keyfile". */
static void kdf_text(const struct sc_slot *s, char *buf, size_t size)
{
	if (s->kdf == SC_KDF_SCRYPT)
		snprintf(buf, size, "scrypt N=%llu r=%u p=%u", (unsigned long long)s->scrypt_n,
			 s->scrypt_r, s->scrypt_p);
	else if (s->kdf == SC_KDF_ARGON2ID)
		snprintf(buf, size, "argon2id t=%u m=%u p=%u", s->argon2_t, s->argon2_m,
			 s->argon2_p);
	else
		snprintf(buf, size, "keyfile");
}

/* The lines of format 4's slot i. */
static void put_slot(struct out *o, const struct sc_slot *s, unsigned i)
{
	char salt[65], kc[33], wr[2 * sizeof(s->wrapped) + 1], when[32], kdf[64];

	if (fmt_time(s->slot_created, when) != 0) {
		o->err = -EINVAL;
		return;
	}
	hex_out(salt, s->salt, sizeof(s->salt));
	hex_out(kc, s->key_check, sizeof(s->key_check));
	hex_out(wr, s->wrapped, sizeof(s->wrapped));
	kdf_text(s, kdf, sizeof(kdf));
	put(o, "slot%u.label = %s\n", i, s->label);
	put(o, "slot%u.created = %s\n", i, when);
	put(o, "slot%u.kdf = %s\n", i, kdf);
	put(o, "slot%u.salt = %s\n", i, salt);
	put(o, "slot%u.key_check = %s\n", i, kc);
	put(o, "slot%u.wrapped_key = %s\n", i, wr);
}

/* Formats 1 to 3: slot 0's fields as the lines they always were. */
static void put_flat(struct out *o, const struct sc_config *cfg)
{
	char salt[65], kc[33], wr[2 * sizeof(cfg->wrapped) + 1];

	hex_out(salt, cfg->salt, sizeof(cfg->salt));
	hex_out(kc, cfg->key_check, sizeof(cfg->key_check));
	hex_out(wr, cfg->wrapped, sizeof(cfg->wrapped));
	put(o, "kdf = %s\n", kdf_names[cfg->kdf]);
	if (cfg->kdf == SC_KDF_SCRYPT) {
		put(o, "scrypt_n = %llu\n", (unsigned long long)cfg->scrypt_n);
		put(o, "scrypt_r = %u\n", cfg->scrypt_r);
		put(o, "scrypt_p = %u\n", cfg->scrypt_p);
	}
	put(o, "salt = %s\n", salt);
}

/* The text form, NUL-terminated.  Returns its length, -ENOSPC or -EINVAL. */
int sc_config_format(const struct sc_config *cfg, char *buf, size_t size)
{
	char uuid[33], kc[33], wr[2 * sizeof(cfg->wrapped) + 1], when[32], sum[65];
	char mac[65];
	struct out o = { buf, size, 0, 0 };
	bool slots = cfg->format >= SC_CONFIG_FORMAT_SLOTS;
	const char *why;

	if (check_fields(cfg, &why) != 0 || fmt_time(cfg->created, when) != 0)
		return -EINVAL;
	hex_out(uuid, cfg->uuid, sizeof(cfg->uuid));
	hex_out(mac, cfg->config_mac, sizeof(cfg->config_mac));
	put(&o, HEADER_LINE "\n");
	put(&o, "format = %u\n", cfg->format);
	put(&o, "cipher = %s\n", sc_cipher_name(cfg->cipher));
	put(&o, "block_size = %u\n", cfg->block_size);
	put(&o, "features = 0x%llx\n", (unsigned long long)cfg->features);
	if (!slots)
		put_flat(&o, cfg);
	put(&o, "uuid = %s\n", uuid);
	put(&o, "created = %s\n", when);
	if (slots) {
		for (unsigned i = 0; i < SC_SLOTS_MAX; i++)
			if (cfg->slots[i].used)
				put_slot(&o, &cfg->slots[i], i);
	} else {
		hex_out(kc, cfg->key_check, sizeof(cfg->key_check));
		hex_out(wr, cfg->wrapped, sizeof(cfg->wrapped));
		put(&o, "key_check = %s\n", kc);
		put(&o, "wrapped_key = %s\n", wr);
	}
	if (cfg->format >= SC_CONFIG_FORMAT_MAC)
		put(&o, "config_mac = %s\n", mac);
	if (o.err != 0)
		return o.err;
	if (sha256_hex(buf, o.len, sum) != 0)
		return -EIO;
	put(&o, "checksum = %s\n", sum);
	return o.err ? o.err : (int)o.len;
}

/* ---- parsing ---- */

enum key {
	K_FORMAT, K_CIPHER, K_BLOCK_SIZE, K_FEATURES, K_KDF, K_SCRYPT_N, K_SCRYPT_R,
	K_SCRYPT_P, K_SALT, K_UUID, K_CREATED, K_KEY_CHECK, K_WRAPPED, K_CONFIG_MAC,
	K_SLOT0,	/* then SLOT_KEYS keys per slot, SC_SLOTS_MAX slots */
	K_COUNT = K_SLOT0 + 6 * SC_SLOTS_MAX
};
/* A slot's keys, in the order put_slot writes them. */
enum { SK_LABEL, SK_CREATED, SK_KDF, SK_SALT, SK_KEY_CHECK, SK_WRAPPED, SLOT_KEYS };
_Static_assert(SLOT_KEYS == 6 && SC_SLOTS_MAX == 8, "the key table below lists 8 slots of 6");

#define SLOT_KEY_NAMES(n) "slot" #n ".label", "slot" #n ".created", "slot" #n ".kdf", \
	"slot" #n ".salt", "slot" #n ".key_check", "slot" #n ".wrapped_key"

static const char *const key_names[K_COUNT] = {
	"format", "cipher", "block_size", "features", "kdf", "scrypt_n", "scrypt_r",
	"scrypt_p", "salt", "uuid", "created", "key_check", "wrapped_key", "config_mac",
	SLOT_KEY_NAMES(0), SLOT_KEY_NAMES(1), SLOT_KEY_NAMES(2), SLOT_KEY_NAMES(3),
	SLOT_KEY_NAMES(4), SLOT_KEY_NAMES(5), SLOT_KEY_NAMES(6), SLOT_KEY_NAMES(7),
};

struct parse {
	char	*err;
	size_t	errlen;
	char	val[K_COUNT][256];
	int	line[K_COUNT];		/* 0 = not seen */
};

static int __attribute__((format(printf, 3, 4))) fail(struct parse *p, int ret, const char *fmt, ...)
{
	va_list ap;

	if (p->err != NULL && p->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(p->err, p->errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* Unsigned decimal, no sign, no leading zero: 0, -1 malformed, -2 above max. */
static int dec_in(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (*s == '\0' || (s[0] == '0' && s[1] != '\0'))
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (uint64_t)(*s - '0')) / 10)
			return -2;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/* A decimal field: malformed -> -EUCLEAN, too large -> -EINVAL. */
static int dec_field(struct parse *p, int key, uint64_t max, uint64_t *out)
{
	int r = dec_in(p->val[key], max, out);

	if (r == -1)
		return fail(p, -EUCLEAN, "line %d: %s: not a decimal number", p->line[key],
			    key_names[key]);
	if (r == -2)
		return fail(p, -EINVAL, "line %d: %s: out of range", p->line[key], key_names[key]);
	return 0;
}

/* One "key = value" line (no newline) into p; comments were skipped. */
static int parse_line(struct parse *p, const char *line, size_t len, int lineno)
{
	const char *eq = memchr(line, '=', len), *k = line, *ke, *v, *ve = line + len;
	int key;

	if (eq == NULL)
		return fail(p, -EUCLEAN, "line %d: expected \"key = value\"", lineno);
	ke = eq;
	while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
		ke--;
	v = eq + 1;
	while (v < ve && (*v == ' ' || *v == '\t'))
		v++;
	while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
		ve--;
	for (key = 0; key < K_COUNT; key++)
		if (strlen(key_names[key]) == (size_t)(ke - k) &&
		    memcmp(key_names[key], k, (size_t)(ke - k)) == 0)
			break;
	if (key == K_COUNT)
		return fail(p, -EUCLEAN, "line %d: unknown key \"%.*s\"", lineno,
			    (int)(ke - k > 40 ? 40 : ke - k), k);
	if (p->line[key] != 0)
		return fail(p, -EUCLEAN, "line %d: duplicate key \"%s\" (first on line %d)",
			    lineno, key_names[key], p->line[key]);
	if ((size_t)(ve - v) >= sizeof(p->val[key]))
		return fail(p, -EUCLEAN, "line %d: value of \"%s\" too long", lineno, key_names[key]);
	memcpy(p->val[key], v, (size_t)(ve - v));
	p->val[key][ve - v] = '\0';
	p->line[key] = lineno;
	return 0;
}

/* "0x" and 1..16 lowercase hex digits. */
static int hex_num(const char *s, uint64_t *out)
{
	size_t n = strlen(s);
	uint64_t v = 0;

	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x')
		return -1;
	for (s += 2; *s; s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;

		if (d < 0)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

static int parse_time(const char *s, int64_t *out)
{
	struct tm tm;
	const char *end;
	char back[32];

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (end == NULL || *end != '\0')
		return -1;
	*out = (int64_t)timegm(&tm);
	/* reject what strptime tolerates but we never write (e.g. "2026-1-5") */
	if (fmt_time(*out, back) != 0 || strcmp(back, s) != 0)
		return -1;
	return 0;
}

/* One "N=v" token of a kdf value, name given: 0, or -1 malformed, -2 too large. */
static int cost_tok(const char *tok, const char *name, uint64_t max, uint64_t *out)
{
	size_t n = strlen(name);

	if (strncmp(tok, name, n) != 0 || tok[n] != '=')
		return -1;
	return dec_in(tok + n + 1, max, out);
}

/*
 * slotN.kdf's value into s: "keyfile", "scrypt N=.. r=.. p=..", or
 * "argon2id t=.. m=.. p=..", one blank between tokens.  0, -EUCLEAN or
 * -EINVAL with the reason.
 */
static int slot_kdf(struct parse *p, int key, struct sc_slot *s)
{
	static const char *const names[2][3] = { { "N", "r", "p" }, { "t", "m", "p" } };
	char buf[256], *tok[5], *save = NULL;
	uint64_t v[3];
	int n = 0, a, r;

	snprintf(buf, sizeof(buf), "%s", p->val[key]);
	if (strstr(buf, "  ") != NULL)
		return fail(p, -EUCLEAN, "line %d: %s: one blank between its words", p->line[key],
			    key_names[key]);
	for (char *t = strtok_r(buf, " ", &save); t && n < 5; t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	if (n == 1 && strcmp(tok[0], "keyfile") == 0) {
		s->kdf = SC_KDF_KEYFILE;
		return 0;
	}
	if (n >= 1 && strcmp(tok[0], "scrypt") != 0 && strcmp(tok[0], "argon2id") != 0)
		return fail(p, -EINVAL, "line %d: unknown kdf \"%.40s\"", p->line[key], tok[0]);
	if (n != 4)
		return fail(p, -EUCLEAN, "line %d: %s: expected \"scrypt N=.. r=.. p=..\", "
			    "\"argon2id t=.. m=.. p=..\" or \"keyfile\"", p->line[key],
			    key_names[key]);
	a = strcmp(tok[0], "argon2id") == 0;
	for (int i = 0; i < 3; i++) {
		r = cost_tok(tok[i + 1], names[a][i], UINT32_MAX, &v[i]);
		if (r == -1)
			return fail(p, -EUCLEAN, "line %d: %s: expected %s=<decimal> as word %d",
				    p->line[key], key_names[key], names[a][i], i + 2);
		if (r == -2)
			return fail(p, -EINVAL, "line %d: %s: %s out of range", p->line[key],
				    key_names[key], names[a][i]);
	}
	if (a) {
		s->kdf = SC_KDF_ARGON2ID;
		s->argon2_t = (uint32_t)v[0];
		s->argon2_m = (uint32_t)v[1];
		s->argon2_p = (uint32_t)v[2];
	} else {
		s->kdf = SC_KDF_SCRYPT;
		s->scrypt_n = v[0];
		s->scrypt_r = (uint32_t)v[1];
		s->scrypt_p = (uint32_t)v[2];
	}
	return 0;
}

/* Slot i's six keys (all seen) into c->slots[i]. */
static int slot_fields(struct parse *p, struct sc_config *c, unsigned i)
{
	struct sc_slot *s = &c->slots[i];
	int k = K_SLOT0 + (int)i * SLOT_KEYS, ret;

	s->used = true;
	if (sc_slot_label_check(p->val[k + SK_LABEL]) != 0)
		return fail(p, -EUCLEAN, "line %d: %s: expected 1 to %d printable characters, "
			    "not all digits", p->line[k + SK_LABEL], key_names[k + SK_LABEL],
			    SC_SLOT_LABEL_MAX);
	snprintf(s->label, sizeof(s->label), "%s", p->val[k + SK_LABEL]);
	if (parse_time(p->val[k + SK_CREATED], &s->slot_created) != 0)
		return fail(p, -EUCLEAN, "line %d: %s: expected YYYY-MM-DDThh:mm:ssZ",
			    p->line[k + SK_CREATED], key_names[k + SK_CREATED]);
	ret = slot_kdf(p, k + SK_KDF, s);
	if (ret != 0)
		return ret;
	if (hex_in(p->val[k + SK_SALT], s->salt, sizeof(s->salt)) != 0)
		return fail(p, -EUCLEAN, "line %d: %s: expected 64 lowercase hex digits",
			    p->line[k + SK_SALT], key_names[k + SK_SALT]);
	if (hex_in(p->val[k + SK_KEY_CHECK], s->key_check, sizeof(s->key_check)) != 0)
		return fail(p, -EUCLEAN, "line %d: %s: expected 32 lowercase hex digits",
			    p->line[k + SK_KEY_CHECK], key_names[k + SK_KEY_CHECK]);
	if (hex_in(p->val[k + SK_WRAPPED], s->wrapped, sizeof(s->wrapped)) != 0)
		return fail(p, -EUCLEAN, "line %d: %s: expected %zu lowercase hex digits",
			    p->line[k + SK_WRAPPED], key_names[k + SK_WRAPPED],
			    2 * sizeof(s->wrapped));
	return 0;
}

/* Format 4: which keys a config must have and may not have, then its slots. */
static int fields_v4(struct parse *p, struct sc_config *c)
{
	int ret;

	for (int k = 0; k < K_SLOT0; k++) {
		bool want = k == K_CIPHER || k == K_BLOCK_SIZE || k == K_FEATURES ||
			    k == K_UUID || k == K_CREATED || k == K_CONFIG_MAC || k == K_FORMAT;

		if (want && p->line[k] == 0)
			return fail(p, -EUCLEAN, "missing key \"%s\"", key_names[k]);
		if (!want && p->line[k] != 0)
			return fail(p, -EUCLEAN, "line %d: \"%s\" in format 4 (its slots "
				    "carry the keys)", p->line[k], key_names[k]);
	}
	for (unsigned i = 0; i < SC_SLOTS_MAX; i++) {
		int k0 = K_SLOT0 + (int)i * SLOT_KEYS, seen = 0;

		for (int f = 0; f < SLOT_KEYS; f++)
			seen += p->line[k0 + f] != 0;
		if (seen == 0)
			continue;
		for (int f = 0; f < SLOT_KEYS; f++)
			if (p->line[k0 + f] == 0)
				return fail(p, -EUCLEAN, "slot %u: missing key \"%s\"", i,
					    key_names[k0 + f]);
		ret = slot_fields(p, c, i);
		if (ret != 0)
			return ret;
	}
	return 0;
}

/* Formats 1 to 3: the flat keys of the one slot, none of format 4's. */
static int fields_flat(struct parse *p, struct sc_config *c)
{
	uint64_t v;
	int ret;

	if (p->line[K_KDF] == 0)
		return fail(p, -EUCLEAN, "missing key \"kdf\"");
	if (strcmp(p->val[K_KDF], "scrypt") == 0)
		c->kdf = SC_KDF_SCRYPT;
	else if (strcmp(p->val[K_KDF], "keyfile") == 0)
		c->kdf = SC_KDF_KEYFILE;
	else
		return fail(p, -EINVAL, "line %d: unknown kdf \"%s\"", p->line[K_KDF], p->val[K_KDF]);
	for (int k = 0; k < K_COUNT; k++) {
		int want = c->kdf == SC_KDF_SCRYPT || (k != K_SCRYPT_N && k != K_SCRYPT_R &&
						       k != K_SCRYPT_P);

		if (k == K_CONFIG_MAC)
			want = c->format >= SC_CONFIG_FORMAT_MAC;
		if (k >= K_SLOT0)
			want = 0;
		if (want && p->line[k] == 0)
			return fail(p, -EUCLEAN, "missing key \"%s\"", key_names[k]);
		if (!want && p->line[k] != 0)
			return fail(p, -EUCLEAN, "line %d: \"%s\" with %s", p->line[k],
				    key_names[k], k == K_CONFIG_MAC ? "format 1 or 2" :
				    k >= K_SLOT0 ? "format 1 to 3 (slots are format 4's)" :
				    "kdf = keyfile");
	}
	c->used = true;
	snprintf(c->label, sizeof(c->label), "%s",
		 c->kdf == SC_KDF_KEYFILE ? "keyfile" : "password");
	if (c->kdf == SC_KDF_SCRYPT) {
		ret = dec_field(p, K_SCRYPT_N, UINT64_MAX, &c->scrypt_n);
		if (ret == 0)
			ret = dec_field(p, K_SCRYPT_R, UINT32_MAX, &v);
		if (ret != 0)
			return ret;
		c->scrypt_r = (uint32_t)v;
		ret = dec_field(p, K_SCRYPT_P, UINT32_MAX, &v);
		if (ret != 0)
			return ret;
		c->scrypt_p = (uint32_t)v;
	}
	if (hex_in(p->val[K_SALT], c->salt, sizeof(c->salt)) != 0)
		return fail(p, -EUCLEAN, "line %d: salt: expected 64 lowercase hex digits",
			    p->line[K_SALT]);
	if (hex_in(p->val[K_KEY_CHECK], c->key_check, sizeof(c->key_check)) != 0)
		return fail(p, -EUCLEAN, "line %d: key_check: expected 32 lowercase hex digits",
			    p->line[K_KEY_CHECK]);
	if (hex_in(p->val[K_WRAPPED], c->wrapped, sizeof(c->wrapped)) != 0)
		return fail(p, -EUCLEAN, "line %d: wrapped_key: expected %zu lowercase hex digits",
			    p->line[K_WRAPPED], 2 * sizeof(c->wrapped));
	return 0;
}

static int fields(struct parse *p, struct sc_config *c)
{
	uint64_t v;
	const char *why;
	int ret;

	/* format first: a newer format may use keys this build does not know */
	if (p->line[K_FORMAT] == 0)
		return fail(p, -EUCLEAN, "missing key \"format\"");
	ret = dec_field(p, K_FORMAT, UINT32_MAX, &v);
	if (ret != 0)
		return ret;
	if (v < 1 || v > SC_CONFIG_FORMAT_MAX)
		return fail(p, -EPROTONOSUPPORT, "format %llu is not supported (this build reads "
			    "1 to %d)", (unsigned long long)v, SC_CONFIG_FORMAT_MAX);
	c->format = (uint32_t)v;
	ret = c->format >= SC_CONFIG_FORMAT_SLOTS ? fields_v4(p, c) : fields_flat(p, c);
	if (ret != 0)
		return ret;
	if (sc_cipher_parse(p->val[K_CIPHER], &c->cipher) != 0)
		return fail(p, -EINVAL, "line %d: unknown cipher \"%s\"", p->line[K_CIPHER],
			    p->val[K_CIPHER]);
	ret = dec_field(p, K_BLOCK_SIZE, UINT32_MAX, &v);
	if (ret != 0)
		return ret;
	c->block_size = (uint32_t)v;
	if (hex_num(p->val[K_FEATURES], &c->features) != 0)
		return fail(p, -EUCLEAN, "line %d: features: expected 0x<1..16 hex digits>",
			    p->line[K_FEATURES]);
	if (hex_in(p->val[K_UUID], c->uuid, sizeof(c->uuid)) != 0)
		return fail(p, -EUCLEAN, "line %d: uuid: expected 32 lowercase hex digits",
			    p->line[K_UUID]);
	if (parse_time(p->val[K_CREATED], &c->created) != 0)
		return fail(p, -EUCLEAN, "line %d: created: expected YYYY-MM-DDThh:mm:ssZ",
			    p->line[K_CREATED]);
	if (c->format < SC_CONFIG_FORMAT_SLOTS)
		c->slot_created = c->created;
	if (c->format >= SC_CONFIG_FORMAT_MAC &&
	    hex_in(p->val[K_CONFIG_MAC], c->config_mac, sizeof(c->config_mac)) != 0)
		return fail(p, -EUCLEAN, "line %d: config_mac: expected 64 lowercase hex digits",
			    p->line[K_CONFIG_MAC]);
	ret = check_fields(c, &why);
	if (ret != 0)
		return fail(p, ret, "%s", why);
	return 0;
}

/*
 * Parses and checks the text form.  0, -EUCLEAN (checksum or malformed),
 * -EPROTONOSUPPORT (newer format, unknown feature), -EINVAL (out of range),
 * -ENOMEM; err gets one line saying why.
 */
int sc_config_parse(const char *text, size_t len, struct sc_config *cfg,
		    char *err, size_t errlen)
{
	struct parse *p = calloc(1, sizeof(*p));
	const char *sum_line, *end = text + len;
	char sum[65];
	int ret, lineno = 0;

	if (p == NULL)
		return -ENOMEM;
	p->err = err;
	p->errlen = errlen;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	memset(cfg, 0, sizeof(*cfg));
	if (len > SC_CONFIG_MAX_TEXT) {
		ret = fail(p, -EUCLEAN, "config larger than %d bytes", SC_CONFIG_MAX_TEXT);
		goto out_free_p;
	}
	if (len == 0 || memchr(text, '\0', len) != NULL || text[len - 1] != '\n') {
		ret = fail(p, -EUCLEAN, "config is empty, truncated or not text");
		goto out_free_p;
	}
	/* The checksum line is the last line and covers every byte before it. */
	sum_line = end - 1;
	while (sum_line > text && sum_line[-1] != '\n')
		sum_line--;
	if ((size_t)(end - sum_line) != strlen("checksum = ") + 64 + 1 ||
	    memcmp(sum_line, "checksum = ", strlen("checksum = ")) != 0) {
		ret = fail(p, -EUCLEAN, "last line is not \"checksum = <64 hex digits>\"");
		goto out_free_p;
	}
	ret = sha256_hex(text, (size_t)(sum_line - text), sum);
	if (ret != 0)
		goto out_free_p;
	if (memcmp(sum, sum_line + strlen("checksum = "), 64) != 0) {
		ret = fail(p, -EUCLEAN, "checksum mismatch: the config was damaged or edited");
		goto out_free_p;
	}
	for (const char *l = text; l < sum_line; ) {
		const char *nl = memchr(l, '\n', (size_t)(sum_line - l));
		size_t n = (size_t)(nl - l);

		lineno++;
		if (n > 0 && l[0] != '#') {
			ret = parse_line(p, l, n, lineno);
			if (ret != 0)
				goto out_free_p;
		}
		l = nl + 1;
	}
	ret = fields(p, cfg);
out_free_p:
	free(p);
	return ret;
}
