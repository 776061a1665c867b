/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.c - the volume config (BACKING/.stackcrypt.conf): its text form,
 * strict parsing, and wrapping the master key under a key-encryption key
 * (KEK) derived from the password (scrypt) or a key file (HKDF).
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
};

static int scrypt_n_check(uint64_t n)
{
	if (n < (1ull << SCRYPT_LOG2_MIN) || n > (1ull << SCRYPT_LOG2_MAX) || (n & (n - 1)))
		return -EINVAL;
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
	if (sc_block_size_check(c->block_size) != 0)
		return *why = "block_size not a power of two in 512..65536", -EINVAL;
	if (c->kdf == SC_KDF_SCRYPT) {
		if (scrypt_n_check(c->scrypt_n) != 0)
			return *why = "scrypt_n not a power of two in 2^10..2^24", -EINVAL;
		if (c->scrypt_r < 1 || c->scrypt_r > SCRYPT_R_MAX)
			return *why = "scrypt_r not in 1..32", -EINVAL;
		if (c->scrypt_p < 1 || c->scrypt_p > SCRYPT_P_MAX)
			return *why = "scrypt_p not in 1..16", -EINVAL;
		/* each factor is bounded above, so the products cannot overflow */
		if (128ull * c->scrypt_r * c->scrypt_n > SC_SCRYPT_MEM_MAX)
			return *why = "scrypt_n and scrypt_r ask for more than 16 GiB "
				"(128*r*N bytes; init writes at most N=2^24 with r=8)", -EINVAL;
		if (c->scrypt_n * c->scrypt_r * c->scrypt_p > SC_SCRYPT_WORK_MAX)
			return *why = "scrypt_n, scrypt_r and scrypt_p ask for more work than "
				"N=2^24, r=8, p=1 (the most init writes)", -EINVAL;
	} else if (c->kdf == SC_KDF_KEYFILE) {
		if (c->scrypt_n != 0 || c->scrypt_r != 0 || c->scrypt_p != 0)
			return *why = "scrypt parameters with kdf = keyfile", -EINVAL;
	} else {
		return *why = "unknown kdf", -EINVAL;
	}
	return 0;
}

/* Defaults, random salt and uuid, created = now.  0, -EINVAL or -EIO. */
int sc_config_init(struct sc_config *cfg, enum sc_cipher_id cipher,
		   uint32_t block_size, enum sc_kdf_id kdf, uint64_t scrypt_n)
{
	const char *why;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	cfg->format = SC_CONFIG_FORMAT;
	cfg->cipher = cipher;
	cfg->block_size = block_size;
	cfg->features = cipher == SC_CIPHER_AES_GCM ? 0 : SC_FEATURES_DEFAULT;
	cfg->kdf = kdf;
	if (kdf == SC_KDF_SCRYPT) {
		cfg->scrypt_n = scrypt_n ? scrypt_n : SC_SCRYPT_N_DEFAULT;
		cfg->scrypt_r = SC_SCRYPT_R_DEFAULT;
		cfg->scrypt_p = SC_SCRYPT_P_DEFAULT;
	}
	ret = check_fields(cfg, &why);
	if (ret != 0)
		return -EINVAL;
	cfg->created = (int64_t)time(NULL);
	ret = sc_random(cfg->salt, sizeof(cfg->salt));
	if (ret == 0)
		ret = sc_random(cfg->uuid, sizeof(cfg->uuid));
	return ret;
}

/* ---- KEK, key check, associated data ---- */

static int derive_kek(const struct sc_config *c, const void *secret, size_t len, uint8_t *kek)
{
	if (c->kdf == SC_KDF_KEYFILE) {
		const char *label = c->format == 1 ? SC_LABEL_KEK : SC_LABEL_KEK_V2;

		if (len != 32)
			return -EINVAL;
		return sc_hkdf_sha256(secret, len, c->salt, sizeof(c->salt), label, strlen(label),
				      kek, KEK_LEN);
	}
	return sc_scrypt(secret, len, c->salt, sizeof(c->salt), c->scrypt_n, c->scrypt_r,
			 c->scrypt_p, kek, KEK_LEN);
}

static int kek_hkdf(const uint8_t *kek, const char *label, uint8_t *out, size_t len)
{
	return sc_hkdf_sha256(kek, KEK_LEN, NULL, 0, label, strlen(label), out, len);
}

/*
 * From the secret: the KEK, the GCM key that wraps the master key and the
 * check value.  Format 1: wrap = KEK, check = HKDF(KEK, v1 key-check).
 * Format 2: wrap = HKDF(KEK, v2 config-wrap-key), check = HKDF(KEK, v2
 * key-check): no key serves two primitives.  kek and wrap are KEK_LEN
 * bytes of locked memory.  0, -EINVAL, -ENOMEM or -EIO.
 */
int sc_config_derive(const struct sc_config *c, const void *secret, size_t len,
		     uint8_t *kek, uint8_t *wrap, uint8_t check[16])
{
	int ret = derive_kek(c, secret, len, kek);

	if (ret != 0)
		return ret;
	if (c->format == 1) {
		memcpy(wrap, kek, KEK_LEN);
		return kek_hkdf(kek, SC_LABEL_KEY_CHECK, check, 16);
	}
	ret = kek_hkdf(kek, SC_LABEL_WRAP_KEY_V2, wrap, KEK_LEN);
	if (ret == 0)
		ret = kek_hkdf(kek, SC_LABEL_KEY_CHECK_V2, check, 16);
	return ret;
}

#define AAD_LEN	(sizeof(SC_LABEL_CONFIG_AAD) - 1 + 4 + 1 + 4 + 8 + 1 + 8 + 4 + 4 + 32 + 16 + 8 + 16)

/* Every field but wrapped_key, fixed order and width, little-endian (format.md). */
static void config_aad(const struct sc_config *c, uint8_t aad[AAD_LEN])
{
	uint8_t *p = aad;

	_Static_assert(sizeof(SC_LABEL_CONFIG_AAD) == sizeof(SC_LABEL_CONFIG_AAD_V2),
		       "both formats' AAD prefixes are 20 bytes");
	memcpy(p, c->format == 1 ? SC_LABEL_CONFIG_AAD : SC_LABEL_CONFIG_AAD_V2,
	       sizeof(SC_LABEL_CONFIG_AAD) - 1);
	p += sizeof(SC_LABEL_CONFIG_AAD) - 1;
	sc_le64(p, c->format);			p += 4;
	*p++ = (uint8_t)c->cipher;
	sc_le64(p, c->block_size);		p += 4;
	sc_le64(p, c->features);		p += 8;
	*p++ = (uint8_t)c->kdf;
	sc_le64(p, c->scrypt_n);		p += 8;
	sc_le64(p, c->scrypt_r);		p += 4;
	sc_le64(p, c->scrypt_p);		p += 4;
	memcpy(p, c->salt, 32);			p += 32;
	memcpy(p, c->uuid, 16);			p += 16;
	sc_le64(p, (uint64_t)c->created);	p += 8;
	memcpy(p, c->key_check, 16);		p += 16;
}

#define MAC_MSG_LEN	(4 + 1 + 4 + 8 + 16 + 8)

/*
 * The config MAC of format 3 (format.md 6.3): HMAC-SHA256 keyed with
 * HKDF(mk, "stackcrypt/v3 config-mac") over format, cipher, block size,
 * features, uuid and created, fixed width, little-endian.  Not over the
 * password's fields (kdf, scrypt cost, salt, key_check, wrapped_key): the
 * GCM tag covers those at unlock, and recovery replaces them, so a config
 * whose salt was spoiled still tells recovery its true features.
 */
static int config_mac(const struct sc_config *c, const uint8_t *mk, uint8_t mac[32])
{
	uint8_t msg[MAC_MSG_LEN], le[8], *key, *p = msg;
	int ret;

	sc_le64(le, c->format);		memcpy(p, le, 4);	p += 4;
	*p++ = (uint8_t)c->cipher;
	sc_le64(le, c->block_size);	memcpy(p, le, 4);	p += 4;
	sc_le64(p, c->features);				p += 8;
	memcpy(p, c->uuid, 16);					p += 16;
	sc_le64(p, (uint64_t)c->created);			p += 8;
	_Static_assert(MAC_MSG_LEN == 41, "format.md 6.3 lists 41 bytes");
	key = sc_secure_alloc(32);
	if (key == NULL)
		return -ENOMEM;
	ret = sc_hkdf_sha256(mk, SC_MASTER_KEY_LEN, NULL, 0, SC_LABEL_CONFIG_MAC_V3,
			     strlen(SC_LABEL_CONFIG_MAC_V3), key, 32);
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

/* AES-256-GCM under the wrap key; enc 1 seals mk into wrapped, 0 opens it (-EBADMSG on a bad tag). */
static int gcm(const uint8_t *wrap_key, const struct sc_config *c, uint8_t *wrapped,
	       uint8_t *mk, int enc)
{
	uint8_t aad[AAD_LEN];
	uint8_t *nonce = wrapped, *ct = wrapped + GCM_NONCE_LEN;
	uint8_t *tag = ct + SC_MASTER_KEY_LEN;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int outl, ret = -EIO;

	if (ctx == NULL)
		return -ENOMEM;
	config_aad(c, aad);
	if (EVP_CipherInit_ex2(ctx, EVP_aes_256_gcm(), wrap_key, nonce, enc, NULL) != 1 ||
	    EVP_CipherUpdate(ctx, NULL, &outl, aad, (int)sizeof(aad)) != 1)
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

/*
 * Sets key_check, wrapped (fresh GCM nonce) and, in format 3, config_mac.
 * secret: the password, or the key file's 32 raw bytes.  0, -EINVAL,
 * -ENOMEM or -EIO.
 */
int sc_config_wrap(struct sc_config *cfg, const void *secret, size_t secret_len,
		   const uint8_t mk[SC_MASTER_KEY_LEN])
{
	uint8_t *keys, tmp[SC_MASTER_KEY_LEN];
	const char *why;
	int ret;

	if (check_fields(cfg, &why) != 0)
		return -EINVAL;
	keys = sc_secure_alloc(2 * KEK_LEN);	/* KEK, wrap key */
	if (keys == NULL)
		return -ENOMEM;
	ret = sc_config_derive(cfg, secret, secret_len, keys, keys + KEK_LEN, cfg->key_check);
	if (ret == 0 && cfg->format >= SC_CONFIG_FORMAT_MAC)
		ret = config_mac(cfg, mk, cfg->config_mac);
	if (ret == 0)
		ret = sc_random(cfg->wrapped, GCM_NONCE_LEN);
	if (ret == 0) {
		memcpy(tmp, mk, sizeof(tmp));	/* gcm() takes a writable mk */
		ret = gcm(keys + KEK_LEN, cfg, cfg->wrapped, tmp, 1);
		sc_wipe(tmp, sizeof(tmp));
	}
	sc_secure_free(keys, 2 * KEK_LEN);
	return ret;
}

/* 0, -EKEYREJECTED (wrong secret), -EBADMSG (tampered), -EINVAL, -ENOMEM, -EIO. */
int sc_config_unwrap(const struct sc_config *cfg, const void *secret, size_t secret_len,
		     uint8_t mk[SC_MASTER_KEY_LEN])
{
	uint8_t *keys, check[16], wrapped[sizeof(cfg->wrapped)];
	const char *why;
	int ret;

	if (check_fields(cfg, &why) != 0)
		return -EINVAL;
	if (cfg->kdf == SC_KDF_KEYFILE && secret_len != 32)
		return -EKEYREJECTED;	/* not a key at all: certainly not the key */
	keys = sc_secure_alloc(2 * KEK_LEN);	/* KEK, wrap key */
	if (keys == NULL)
		return -ENOMEM;
	ret = sc_config_derive(cfg, secret, secret_len, keys, keys + KEK_LEN, check);
	if (ret == 0 && !sc_memeq_ct(check, cfg->key_check, sizeof(check)))
		ret = -EKEYREJECTED;
	if (ret == 0) {
		memcpy(wrapped, cfg->wrapped, sizeof(wrapped));
		ret = gcm(keys + KEK_LEN, cfg, wrapped, mk, 0);
	}
	/* the password opened it; the fields must also be the master key's */
	if (ret == 0 && cfg->format >= SC_CONFIG_FORMAT_MAC) {
		ret = sc_config_mac_check(cfg, mk);
		if (ret != 0)
			sc_wipe(mk, SC_MASTER_KEY_LEN);
	}
	sc_wipe(check, sizeof(check));
	sc_secure_free(keys, 2 * KEK_LEN);
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

/* The text form, NUL-terminated.  Returns its length, -ENOSPC or -EINVAL. */
int sc_config_format(const struct sc_config *cfg, char *buf, size_t size)
{
	char salt[65], uuid[33], kc[33], wr[2 * sizeof(cfg->wrapped) + 1], when[32], sum[65];
	char mac[65];
	struct out o = { buf, size, 0, 0 };
	const char *why;

	if (check_fields(cfg, &why) != 0 || fmt_time(cfg->created, when) != 0)
		return -EINVAL;
	hex_out(salt, cfg->salt, sizeof(cfg->salt));
	hex_out(uuid, cfg->uuid, sizeof(cfg->uuid));
	hex_out(kc, cfg->key_check, sizeof(cfg->key_check));
	hex_out(wr, cfg->wrapped, sizeof(cfg->wrapped));
	hex_out(mac, cfg->config_mac, sizeof(cfg->config_mac));
	put(&o, HEADER_LINE "\n");
	put(&o, "format = %u\n", cfg->format);
	put(&o, "cipher = %s\n", sc_cipher_name(cfg->cipher));
	put(&o, "block_size = %u\n", cfg->block_size);
	put(&o, "features = 0x%llx\n", (unsigned long long)cfg->features);
	put(&o, "kdf = %s\n", kdf_names[cfg->kdf]);
	if (cfg->kdf == SC_KDF_SCRYPT) {
		put(&o, "scrypt_n = %llu\n", (unsigned long long)cfg->scrypt_n);
		put(&o, "scrypt_r = %u\n", cfg->scrypt_r);
		put(&o, "scrypt_p = %u\n", cfg->scrypt_p);
	}
	put(&o, "salt = %s\n", salt);
	put(&o, "uuid = %s\n", uuid);
	put(&o, "created = %s\n", when);
	put(&o, "key_check = %s\n", kc);
	put(&o, "wrapped_key = %s\n", wr);
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
	K_SCRYPT_P, K_SALT, K_UUID, K_CREATED, K_KEY_CHECK, K_WRAPPED, K_CONFIG_MAC, K_COUNT
};

static const char *const key_names[K_COUNT] = {
	"format", "cipher", "block_size", "features", "kdf", "scrypt_n", "scrypt_r",
	"scrypt_p", "salt", "uuid", "created", "key_check", "wrapped_key", "config_mac",
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
		if (want && p->line[k] == 0)
			return fail(p, -EUCLEAN, "missing key \"%s\"", key_names[k]);
		if (!want && p->line[k] != 0)
			return fail(p, -EUCLEAN, "line %d: \"%s\" with %s", p->line[k],
				    key_names[k], k == K_CONFIG_MAC ? "format 1 or 2" :
				    "kdf = keyfile");
	}
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
	if (hex_in(p->val[K_UUID], c->uuid, sizeof(c->uuid)) != 0)
		return fail(p, -EUCLEAN, "line %d: uuid: expected 32 lowercase hex digits",
			    p->line[K_UUID]);
	if (parse_time(p->val[K_CREATED], &c->created) != 0)
		return fail(p, -EUCLEAN, "line %d: created: expected YYYY-MM-DDThh:mm:ssZ",
			    p->line[K_CREATED]);
	if (hex_in(p->val[K_KEY_CHECK], c->key_check, sizeof(c->key_check)) != 0)
		return fail(p, -EUCLEAN, "line %d: key_check: expected 32 lowercase hex digits",
			    p->line[K_KEY_CHECK]);
	if (hex_in(p->val[K_WRAPPED], c->wrapped, sizeof(c->wrapped)) != 0)
		return fail(p, -EUCLEAN, "line %d: wrapped_key: expected %zu lowercase hex digits",
			    p->line[K_WRAPPED], 2 * sizeof(c->wrapped));
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
