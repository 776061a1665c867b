/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names.c - filename and symlink target encryption (docs/format.md,
 * "Names"): AES-256-SIV (RFC 5297, OpenSSL's "AES-256-SIV") over the
 * NUL-padded name with the directory nonce as the one associated-data
 * component, encoded in strict canonical base64url; the long form of an
 * encoded name that does not fit a directory entry; the shapes of backing
 * names; symlink targets under their own key with a random nonce.
 *
 * Thread safety and speed: the names translator calls these for every
 * lookup from many threads.  An OpenSSL SIV context does one operation per
 * keying (it keeps the S2V state and refuses a second message), and keying
 * it fetches AES-CBC, AES-CTR and CMAC by name (locked provider-store
 * lookups).  So the nkey keeps one context per key and direction, keyed
 * once, and each call works on a copy of it (EVP_CIPHER_CTX_copy reads the
 * template only, so threads copy it at once without a lock).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <openssl/evp.h>
#include "crypto_i.h"
#include "kdf_labels_i.h"

#define NAME_KEY_LEN	64	/* AES-256-SIV: CMAC key | CTR key */
#define SIV_TAG_LEN	16

/* The two keys, in locked memory only while the contexts are keyed. */
struct nkeys {
	uint8_t			name[NAME_KEY_LEN];
	uint8_t			link[NAME_KEY_LEN];
};

/*
 * Keyed once; never used directly, only copied (see the top).  The raw keys
 * are not kept: after keying nothing reads them, and the contexts' key
 * schedules are all a call needs (EVP_CIPHER_CTX_free cleanses them).
 */
struct sc_nkey {
	EVP_CIPHER_CTX		*name_enc, *name_dec, *link_enc, *link_dec;
};

_Static_assert(SC_DIRNONCE_REC_LEN == 1 + SC_DIRNONCE_LEN, "record: version byte + nonce");
_Static_assert(SC_NAME_ENC_MAX == (4 * (SIV_TAG_LEN + 256) + 2) / 3,
	       "longest encoded name: base64url of tag + 256 padded bytes");
_Static_assert(SC_NAME_LONG_LEN == 3 + 43, "sc. + base64url of 32 bytes");
_Static_assert((4 * (SC_DIRNONCE_LEN + SIV_TAG_LEN + SC_LINK_PLAIN_MAX) + 2) / 3 <=
	       SC_LINK_ENC_MAX, "the longest target's stored form fits");
_Static_assert((4 * (SC_DIRNONCE_LEN + SIV_TAG_LEN + SC_LINK_PLAIN_MAX + SC_NAME_PAD) + 2) /
	       3 > SC_LINK_ENC_MAX, "SC_LINK_PLAIN_MAX is the longest that fits");
_Static_assert(SC_LINK_PLAIN_MAX % SC_NAME_PAD == 0, "targets pad like names");

/* ---- the SIV routine ---- */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static EVP_CIPHER *g_siv256, *g_siv128;

static void fetch_ciphers(void)
{
	g_siv256 = EVP_CIPHER_fetch(NULL, "AES-256-SIV", NULL);
	g_siv128 = EVP_CIPHER_fetch(NULL, "AES-128-SIV", NULL);
}

/* A context keyed with key (32 bytes: AES-128-SIV, 64: AES-256-SIV) for enc
 * (1) or decrypt (0), or NULL. */
static EVP_CIPHER_CTX *siv_keyed(const uint8_t *key, size_t key_len, int enc)
{
	EVP_CIPHER_CTX *ctx;
	EVP_CIPHER *c;

	pthread_once(&g_once, fetch_ciphers);
	c = key_len == 64 ? g_siv256 : key_len == 32 ? g_siv128 : NULL;
	if (c == NULL)
		return NULL;
	ctx = EVP_CIPHER_CTX_new();
	if (ctx == NULL)
		return NULL;
	if (EVP_CipherInit_ex2(ctx, c, key, NULL, enc, NULL) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

/*
 * One SIV message on a freshly keyed context (consumed: SIV contexts do one
 * message).  enc: in is the plaintext of len bytes, out gets tag || ciphertext
 * (len + 16).  Decrypt: in is tag || ciphertext (len >= 16), out gets the
 * plaintext (len - 16).  0, -EBADMSG (tag mismatch), -EINVAL (an empty
 * plaintext) or -EIO.
 */
static int siv_run(EVP_CIPHER_CTX *ctx, int enc, const struct sc_siv_ad *ad, size_t n_ad,
		   const uint8_t *in, size_t len, uint8_t *out)
{
	const uint8_t *src = in;
	uint8_t *dst = out;
	size_t n = len;
	int outl;

	if (!enc) {
		if (len < SIV_TAG_LEN)
			return -EBADMSG;
		if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, SIV_TAG_LEN,
					(void *)in) != 1)
			return -EIO;
		src = in + SIV_TAG_LEN;
		n = len - SIV_TAG_LEN;
	} else {
		dst = out + SIV_TAG_LEN;
	}
	/* OpenSSL's SIV cannot do an empty message (no update runs the S2V,
	 * so its final fails either way); every message here is at least one
	 * padded block. */
	if (n == 0 || n > INT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n_ad; i++)
		if (ad[i].len > INT32_MAX ||
		    EVP_CipherUpdate(ctx, NULL, &outl, ad[i].p, (int)ad[i].len) != 1)
			return -EIO;
	/* OpenSSL's SIV checks the tag inside the update: failure there on
	 * decrypt is a forgery (or a wrong key or nonce), not an OpenSSL fault. */
	if (EVP_CipherUpdate(ctx, dst, &outl, src, (int)n) != 1) {
		sc_wipe(dst, n);
		return enc ? -EIO : -EBADMSG;
	}
	if (EVP_CipherFinal_ex(ctx, dst + n, &outl) != 1) {
		sc_wipe(dst, n);
		return enc ? -EIO : -EBADMSG;
	}
	if (enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, SIV_TAG_LEN, out) != 1)
		return -EIO;
	return 0;
}

/* siv_run on a copy of the keyed template t.  0, -EBADMSG, -ENOMEM or -EIO. */
static int siv_copy_run(const EVP_CIPHER_CTX *t, int enc, const uint8_t nonce[16],
			const uint8_t *in, size_t len, uint8_t *out)
{
	const struct sc_siv_ad ad = { nonce, 16 };
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int ret;

	if (ctx == NULL)
		return -ENOMEM;
	if (EVP_CIPHER_CTX_copy(ctx, t) != 1)
		ret = -EIO;
	else
		ret = siv_run(ctx, enc, &ad, 1, in, len, out);
	EVP_CIPHER_CTX_free(ctx);
	return ret;
}

/* Test hook (crypto_i.h): one SIV message under an explicit key. */
int sc_siv(const uint8_t *key, size_t key_len, int enc, const struct sc_siv_ad *ad,
	   size_t n_ad, const void *in, size_t len, void *out)
{
	EVP_CIPHER_CTX *ctx = siv_keyed(key, key_len, enc);
	int ret;

	if (ctx == NULL)
		return key_len == 32 || key_len == 64 ? -EIO : -EINVAL;
	ret = siv_run(ctx, enc, ad, n_ad, in, len, out);
	EVP_CIPHER_CTX_free(ctx);
	return ret;
}

/* ---- base64url (RFC 4648 section 5), no '=' padding, canonical ---- */

static const char b64_alpha[64] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* 1 + the value of each byte in the alphabet; 0 for any other byte. */
static const uint8_t b64_val1[256] = {
	['A'] = 1, ['B'] = 2, ['C'] = 3, ['D'] = 4, ['E'] = 5, ['F'] = 6, ['G'] = 7,
	['H'] = 8, ['I'] = 9, ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13,
	['N'] = 14, ['O'] = 15, ['P'] = 16, ['Q'] = 17, ['R'] = 18, ['S'] = 19,
	['T'] = 20, ['U'] = 21, ['V'] = 22, ['W'] = 23, ['X'] = 24, ['Y'] = 25,
	['Z'] = 26, ['a'] = 27, ['b'] = 28, ['c'] = 29, ['d'] = 30, ['e'] = 31,
	['f'] = 32, ['g'] = 33, ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37,
	['l'] = 38, ['m'] = 39, ['n'] = 40, ['o'] = 41, ['p'] = 42, ['q'] = 43,
	['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48, ['w'] = 49,
	['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55,
	['3'] = 56, ['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61,
	['9'] = 62, ['-'] = 63, ['_'] = 64,
};

/* The value of c, or 0xff if c is not in the alphabet. */
static inline uint8_t b64_val(uint8_t c)
{
	return (uint8_t)(b64_val1[c] - 1);
}

/* Encodes n bytes into out (b64_len(n) + 1 bytes, NUL-terminated); the length. */
static size_t b64_encode(const uint8_t *in, size_t n, char *out)
{
	size_t i = 0, o = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		out[o++] = b64_alpha[v >> 18];
		out[o++] = b64_alpha[(v >> 12) & 63];
		out[o++] = b64_alpha[(v >> 6) & 63];
		out[o++] = b64_alpha[v & 63];
	}
	if (n - i == 1) {
		out[o++] = b64_alpha[in[i] >> 2];
		out[o++] = b64_alpha[(in[i] & 3) << 4];
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)in[i] << 8 | in[i + 1];

		out[o++] = b64_alpha[v >> 10];
		out[o++] = b64_alpha[(v >> 4) & 63];
		out[o++] = b64_alpha[(v & 15) << 2];
	}
	out[o] = '\0';
	return o;
}

/*
 * Decodes len characters into out (room for max bytes).  The decoded
 * length, or -EBADMSG: a byte outside the alphabet (including '='), a
 * length no encoding has (len % 4 == 1), non-zero unused bits in the last
 * character (so each byte string has exactly one accepted encoding), or
 * more than max bytes.
 */
static ssize_t b64_decode(const char *in, size_t len, uint8_t *out, size_t max)
{
	const uint8_t *s = (const uint8_t *)in;
	size_t i = 0, o = 0, rem = len % 4;
	uint32_t v;

	if (rem == 1 || len / 4 * 3 + (rem ? rem - 1 : 0) > max)
		return -EBADMSG;
	for (; i + 4 <= len; i += 4) {
		uint8_t a = b64_val(s[i]), b = b64_val(s[i + 1]);
		uint8_t c = b64_val(s[i + 2]), d = b64_val(s[i + 3]);

		if ((a | b | c | d) & 0xc0)
			return -EBADMSG;
		v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | d;
		out[o++] = (uint8_t)(v >> 16);
		out[o++] = (uint8_t)(v >> 8);
		out[o++] = (uint8_t)v;
	}
	if (rem == 2) {
		uint8_t a = b64_val(s[i]), b = b64_val(s[i + 1]);

		if ((a | b) & 0xc0 || (b & 15) != 0)
			return -EBADMSG;
		out[o++] = (uint8_t)(a << 2 | b >> 4);
	} else if (rem == 3) {
		uint8_t a = b64_val(s[i]), b = b64_val(s[i + 1]), c = b64_val(s[i + 2]);

		if ((a | b | c) & 0xc0 || (c & 3) != 0)
			return -EBADMSG;
		v = (uint32_t)a << 10 | (uint32_t)b << 4 | c >> 2;
		out[o++] = (uint8_t)(v >> 8);
		out[o++] = (uint8_t)v;
	}
	return (ssize_t)o;
}

/* Are all len characters of s in the alphabet, with len a length some byte
 * string encodes to, and its unused bits zero?  (b64_decode's checks.) */
static bool b64_canonical(const char *s, size_t len)
{
	const uint8_t *u = (const uint8_t *)s;
	uint8_t last;

	if (len == 0 || len % 4 == 1)
		return false;
	for (size_t i = 0; i < len; i++)
		if (b64_val(u[i]) == 0xff)
			return false;
	last = b64_val(u[len - 1]);
	return len % 4 == 2 ? (last & 15) == 0 : len % 4 == 3 ? (last & 3) == 0 : true;
}

/* ---- keys ---- */

/* 0, -ENOMEM or -EIO. */
int sc_nkey_new(const struct sc_mkey *mk, struct sc_nkey **out)
{
	const uint8_t *master = sc_mkey_master(mk);
	struct sc_nkey *nk = calloc(1, sizeof(*nk));
	struct nkeys *keys;
	int ret = -ENOMEM;

	if (nk == NULL)
		return -ENOMEM;
	keys = sc_secure_alloc(sizeof(*keys));
	if (keys == NULL)
		goto err_free_nk;
	/* Volume-wide, no salt: one names key and one symlink key per volume. */
	ret = sc_hkdf_sha256(master, SC_MASTER_KEY_LEN, NULL, 0, SC_LABEL_NAMES_KEY,
			     strlen(SC_LABEL_NAMES_KEY), keys->name, NAME_KEY_LEN);
	if (ret == 0)
		ret = sc_hkdf_sha256(master, SC_MASTER_KEY_LEN, NULL, 0, SC_LABEL_SYMLINK_KEY,
				     strlen(SC_LABEL_SYMLINK_KEY), keys->link, NAME_KEY_LEN);
	if (ret != 0)
		goto err_free_keys;
	ret = -EIO;
	nk->name_enc = siv_keyed(keys->name, NAME_KEY_LEN, 1);
	nk->name_dec = siv_keyed(keys->name, NAME_KEY_LEN, 0);
	nk->link_enc = siv_keyed(keys->link, NAME_KEY_LEN, 1);
	nk->link_dec = siv_keyed(keys->link, NAME_KEY_LEN, 0);
	if (nk->name_enc == NULL || nk->name_dec == NULL || nk->link_enc == NULL ||
	    nk->link_dec == NULL)
		goto err_free_ctxs;
	sc_secure_free(keys, sizeof(*keys));
	*out = nk;
	return 0;

err_free_ctxs:
	EVP_CIPHER_CTX_free(nk->name_enc);
	EVP_CIPHER_CTX_free(nk->name_dec);
	EVP_CIPHER_CTX_free(nk->link_enc);
	EVP_CIPHER_CTX_free(nk->link_dec);
err_free_keys:
	sc_secure_free(keys, sizeof(*keys));
err_free_nk:
	free(nk);
	return ret;
}

void sc_nkey_free(struct sc_nkey *nk)
{
	if (nk == NULL)
		return;
	EVP_CIPHER_CTX_free(nk->name_enc);	/* cleanses the key schedules */
	EVP_CIPHER_CTX_free(nk->name_dec);
	EVP_CIPHER_CTX_free(nk->link_enc);
	EVP_CIPHER_CTX_free(nk->link_dec);
	free(nk);
}

/* ---- directory nonce record ---- */

#define DIRNONCE_VERSION	1

/* 0 or -EIO. */
int sc_dirnonce_new(uint8_t rec[SC_DIRNONCE_REC_LEN])
{
	rec[0] = DIRNONCE_VERSION;
	return sc_random(rec + 1, SC_DIRNONCE_LEN);
}

/*
 * The version byte is read first (a later version may have another
 * length): 0, -EPROTONOSUPPORT (a version other than 1), -EUCLEAN (empty,
 * or version 1 at a length other than 17).
 */
int sc_dirnonce_parse(const void *rec, size_t len, uint8_t nonce[SC_DIRNONCE_LEN])
{
	const uint8_t *r = rec;

	if (len == 0)
		return -EUCLEAN;
	if (r[0] != DIRNONCE_VERSION)
		return -EPROTONOSUPPORT;
	if (len != SC_DIRNONCE_REC_LEN)
		return -EUCLEAN;
	memcpy(nonce, r + 1, SC_DIRNONCE_LEN);
	return 0;
}

/* ---- names ---- */

/* The padded length of a plaintext of len bytes (len >= 1). */
static size_t padded(size_t len)
{
	return (len + SC_NAME_PAD - 1) / SC_NAME_PAD * SC_NAME_PAD;
}

/*
 * The plaintext length of a decrypted, padded buffer of plen bytes, or
 * -EBADMSG unless it is the one padding encryption makes: the text before
 * the trailing NULs is non-empty, holds no NUL, and padding it again gives
 * plen bytes (so no two stored forms decrypt to one text).
 */
static ssize_t unpad(const uint8_t *p, size_t plen)
{
	size_t n = plen;

	while (n > 0 && p[n - 1] == '\0')
		n--;
	if (n == 0 || padded(n) != plen || memchr(p, '\0', n) != NULL)
		return -EBADMSG;
	return (ssize_t)n;
}

static bool is_dot_or_dotdot(const char *s, size_t len)
{
	return (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.');
}

/* Encoded length, or -EINVAL (not a name), -ENAMETOOLONG, -ENOMEM, -EIO. */
int sc_name_encrypt(const struct sc_nkey *nk, const uint8_t nonce[SC_DIRNONCE_LEN],
		    const char *name, size_t len, char *out)
{
	uint8_t p[SC_NAME_PLAIN_MAX + 1 + SC_NAME_PAD], ct[SIV_TAG_LEN + sizeof(p)];
	size_t plen;
	int ret;

	if (len == 0 || is_dot_or_dotdot(name, len) || memchr(name, '/', len) != NULL ||
	    memchr(name, '\0', len) != NULL)
		return -EINVAL;
	if (len > SC_NAME_PLAIN_MAX)
		return -ENAMETOOLONG;
	plen = padded(len);
	memcpy(p, name, len);
	memset(p + len, 0, plen - len);
	ret = siv_copy_run(nk->name_enc, 1, nonce, p, plen, ct);
	sc_wipe(p, plen);
	if (ret != 0)
		return ret;
	return (int)b64_encode(ct, SIV_TAG_LEN + plen, out);
}

/* Plaintext length, or -EBADMSG (not a name of this directory), -ENOMEM, -EIO. */
int sc_name_decrypt(const struct sc_nkey *nk, const uint8_t nonce[SC_DIRNONCE_LEN],
		    const char *enc, size_t len, char *out)
{
	uint8_t ct[SIV_TAG_LEN + 256 + 2];	/* + 2: b64_decode's last group */
	ssize_t n, plen;
	int ret;

	if (len > SC_NAME_ENC_MAX)
		return -EBADMSG;
	n = b64_decode(enc, len, ct, SIV_TAG_LEN + 256);
	if (n < 0)
		return (int)n;
	if (n < 2 * SIV_TAG_LEN || n % SC_NAME_PAD != 0)
		return -EBADMSG;
	ret = siv_copy_run(nk->name_dec, 0, nonce, ct, (size_t)n, (uint8_t *)out);
	if (ret != 0)
		return ret;
	plen = unpad((const uint8_t *)out, (size_t)n - SIV_TAG_LEN);
	if (plen < 0 || plen > SC_NAME_PLAIN_MAX || is_dot_or_dotdot(out, (size_t)plen) ||
	    memchr(out, '/', (size_t)plen) != NULL) {
		sc_wipe(out, (size_t)n - SIV_TAG_LEN);
		return -EBADMSG;
	}
	out[plen] = '\0';
	return (int)plen;
}

#define LONG_PREFIX	"sc."

/* "sc." + base64url(SHA-256(enc)) into out (SC_NAME_LONG_LEN + 1).  0 or -EIO. */
int sc_name_long(const char *enc, size_t len, char *out)
{
	uint8_t md[32];
	unsigned int mdlen = 0;

	if (EVP_Digest(enc, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
		return -EIO;
	memcpy(out, LONG_PREFIX, 3);
	b64_encode(md, sizeof(md), out + 3);
	return 0;
}

/* Is s[0..len) the long form's shape: "sc." and 43 canonical base64url characters? */
static bool is_long(const char *s, size_t len)
{
	return len == SC_NAME_LONG_LEN && memcmp(s, LONG_PREFIX, 3) == 0 &&
	       b64_canonical(s + 3, SC_NAME_LONG_LEN - 3);
}

/* Could s be an encoded name short enough to be stored as itself? */
static bool is_short(const char *s, size_t len)
{
	size_t n;

	if (len > SC_NAME_SHORT_MAX || !b64_canonical(s, len))
		return false;
	n = len / 4 * 3 + (len % 4 ? len % 4 - 1 : 0);	/* decoded length */
	return n >= 2 * SIV_TAG_LEN && n % SC_NAME_PAD == 0;
}

enum sc_name_kind sc_name_kind(const char *backing, size_t len)
{
	static const char sfx[] = SC_NAME_SIDE_SUFFIX, tmp[] = SC_NAME_TMP_PREFIX;
	const size_t sfx_len = sizeof(sfx) - 1, tmp_len = sizeof(tmp) - 1;

	if (len >= 3 && memcmp(backing, LONG_PREFIX, 3) == 0) {
		if (is_long(backing, len))
			return SC_NAME_KIND_LONG;
		if (len == SC_NAME_LONG_LEN + sfx_len &&
		    memcmp(backing + SC_NAME_LONG_LEN, sfx, sfx_len) == 0 &&
		    is_long(backing, SC_NAME_LONG_LEN))
			return SC_NAME_KIND_SIDE;
		if (len == tmp_len + 32 && memcmp(backing, tmp, tmp_len) == 0) {
			for (size_t i = tmp_len; i < len; i++)
				if (!((backing[i] >= '0' && backing[i] <= '9') ||
				      (backing[i] >= 'a' && backing[i] <= 'f')))
					return SC_NAME_KIND_OTHER;
			return SC_NAME_KIND_TMP;
		}
		return SC_NAME_KIND_OTHER;
	}
	return is_short(backing, len) ? SC_NAME_KIND_SHORT : SC_NAME_KIND_OTHER;
}

/* ---- symlink targets ---- */

/* Stored length, or -EINVAL (empty, or holds NUL), -ENAMETOOLONG, -ENOMEM, -EIO. */
int sc_link_encrypt(const struct sc_nkey *nk, const char *target, size_t len, char *out)
{
	uint8_t p[SC_LINK_PLAIN_MAX], buf[SC_DIRNONCE_LEN + SIV_TAG_LEN + SC_LINK_PLAIN_MAX];
	size_t plen;
	int ret;

	if (len == 0 || memchr(target, '\0', len) != NULL)
		return -EINVAL;
	if (len > SC_LINK_PLAIN_MAX)
		return -ENAMETOOLONG;
	/* A fresh nonce per target: a link keeps its target wherever it moves,
	 * so nothing of its place can be the associated data. */
	ret = sc_random(buf, SC_DIRNONCE_LEN);
	if (ret != 0)
		return ret;
	plen = padded(len);
	memcpy(p, target, len);
	memset(p + len, 0, plen - len);
	ret = siv_copy_run(nk->link_enc, 1, buf, p, plen, buf + SC_DIRNONCE_LEN);
	sc_wipe(p, plen);
	if (ret != 0)
		return ret;
	return (int)b64_encode(buf, SC_DIRNONCE_LEN + SIV_TAG_LEN + plen, out);
}

/* Plaintext length, or -EBADMSG, -ENOMEM, -EIO. */
int sc_link_decrypt(const struct sc_nkey *nk, const char *enc, size_t len, char *out)
{
	uint8_t buf[SC_DIRNONCE_LEN + SIV_TAG_LEN + SC_LINK_PLAIN_MAX + 2];
	ssize_t n, plen;
	int ret;

	if (len > SC_LINK_ENC_MAX)
		return -EBADMSG;
	n = b64_decode(enc, len, buf, SC_DIRNONCE_LEN + SIV_TAG_LEN + SC_LINK_PLAIN_MAX);
	if (n < 0)
		return (int)n;
	if (n < SC_DIRNONCE_LEN + SIV_TAG_LEN + SC_NAME_PAD || n % SC_NAME_PAD != 0)
		return -EBADMSG;
	ret = siv_copy_run(nk->link_dec, 0, buf, buf + SC_DIRNONCE_LEN,
			   (size_t)n - SC_DIRNONCE_LEN, (uint8_t *)out);
	if (ret != 0)
		return ret;
	plen = unpad((const uint8_t *)out, (size_t)n - SC_DIRNONCE_LEN - SIV_TAG_LEN);
	if (plen < 0) {
		sc_wipe(out, (size_t)n - SC_DIRNONCE_LEN - SIV_TAG_LEN);
		return -EBADMSG;
	}
	out[plen] = '\0';
	return (int)plen;
}
