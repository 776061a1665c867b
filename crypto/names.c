/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names.c - filename and symlink target encryption (docs/format.md,
 * "Names"): AES-256-SIV (RFC 5297, OpenSSL's "AES-256-SIV") over the
 * NUL-padded name with the directory nonce as the one associated-data
 * component, encoded in strict canonical base64url; the long form of an
 * encoded name that does not fit a directory entry; the shapes of backing
 * names; symlink targets under their own key with a random nonce, and
 * (bound targets) a tag of the link's place.
 *
 * Speed: the names translator calls these for every lookup, readdir entry,
 * create, rename and unlink, from many threads.  OpenSSL's own SIV cipher
 * does one message per keying, so each call had to copy a keyed context
 * (its CMAC and CTR contexts: allocations and cleanses), about 3 us of CPU
 * per name; and EVP_MAC CMAC or an EVP CTR context re-initialise a cipher
 * context per message (about 1 us per name in all).  So SIV is done here,
 * by RFC 5297 and RFC 4493, on two AES-ECB contexts keyed once and never
 * re-initialised: S2V's CMAC (key's first half) chains its blocks here,
 * one EVP call per block, with the subkeys and CMAC(<zero>) computed at
 * keying; CTR (second half) encrypts the counter blocks in one EVP call.
 * AES itself stays OpenSSL's.  The output is byte for byte OpenSSL's
 * "AES-256-SIV" (tests/crypto/test_names_kat.c compares them).
 *
 * Thread safety: a call needs the contexts to itself (an EVP context is not
 * for concurrent use), so a key keeps a pool of engines (the two contexts);
 * a call takes one from a slot by atomic exchange and gives it back (no
 * lock: the daemon's workers meet here on every name).  The pool grows to
 * the number of threads that use the key at once (at most SIV_POOL kept),
 * and belongs to the key: sc_nkey_free frees every engine (their key schedules cleansed),
 * so no thread keeps a context keyed with a freed key.  ECB contexts keep
 * no message state, and the blocks chained here are wiped after each call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "crypto_i.h"
#include "kdf_labels_i.h"

#define NAME_KEY_LEN	64	/* AES-256-SIV: CMAC key | CTR key */
#define SIV_TAG_LEN	16
#define TAG_KEY_LEN	32	/* HMAC-SHA256 key of the nonce records' tags */
#define REC_TAG_LEN	16	/* a tag as stored: HMAC-SHA256 truncated */

/* The two keys, in locked memory only while the contexts are keyed. */
struct nkeys {
	uint8_t			name[NAME_KEY_LEN];
	uint8_t			link[NAME_KEY_LEN];
	uint8_t			tag[TAG_KEY_LEN];
	uint8_t			ltag[TAG_KEY_LEN];
};

/*
 * The raw keys are not kept: after keying nothing reads them, and the
 * engines' key schedules are all a call needs (siv_key_free cleanses them).
 */
struct siv_key;
struct sc_nkey {
	struct siv_key		*name, *link;
	EVP_MAC_CTX		*tag;	/* keyed once, only duplicated (read-only, shared) */
	EVP_MAC_CTX		*ltag;	/* bound symlink targets' place tags: likewise */
};

_Static_assert(SC_DIRNONCE_REC_LEN == 1 + SC_DIRNONCE_LEN, "record: version byte + nonce");
_Static_assert(SC_DIRNONCE_REC2_LEN == 1 + SC_DIRNONCE_LEN + REC_TAG_LEN, "version 2: + a tag");
_Static_assert(SC_DIRNONCE_REC_MAX == SC_DIRNONCE_REC2_LEN + REC_TAG_LEN, "two places' tags");
_Static_assert(SC_NAME_ENC_MAX == (4 * (SIV_TAG_LEN + 256) + 2) / 3,
	       "longest encoded name: base64url of tag + 256 padded bytes");
_Static_assert(SC_NAME_LONG_LEN == 3 + 43, "sc. + base64url of 32 bytes");
_Static_assert((4 * (SC_DIRNONCE_LEN + SIV_TAG_LEN + SC_LINK_PLAIN_MAX) + 2) / 3 <=
	       SC_LINK_ENC_MAX, "the longest target's stored form fits");
_Static_assert((4 * (SC_DIRNONCE_LEN + SIV_TAG_LEN + SC_LINK_PLAIN_MAX + SC_NAME_PAD) + 2) /
	       3 > SC_LINK_ENC_MAX, "SC_LINK_PLAIN_MAX is the longest that fits");
_Static_assert(SC_LINK_PLAIN_MAX % SC_NAME_PAD == 0, "targets pad like names");
_Static_assert(SC_LINK_BOUND_ENC_MAX == (4 * (3 * 16 + SC_LINK_BOUND_PLAIN_MAX + 1) + 2) / 3,
	       "longest bound target: base64url of nonce, two tags, 4096 padded bytes");
_Static_assert(SC_LINK_MARK_LEN == sizeof(SC_LINK_MARK_PREFIX) - 1 + 43,
	       "marker: prefix + base64url of 32 bytes");

/* ---- the SIV routine (RFC 5297) ---- */

#define SIV_BLOCK	16
#define CTR_CHUNK	16	/* counter blocks encrypted per EVP call */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static EVP_CIPHER *g_ecb[2];	/* AES-128-ECB, AES-256-ECB */

static void fetch_ciphers(void)
{
	g_ecb[0] = EVP_CIPHER_fetch(NULL, "AES-128-ECB", NULL);
	g_ecb[1] = EVP_CIPHER_fetch(NULL, "AES-256-ECB", NULL);
}

/* One message's worth of keyed contexts: in a key's pool, or in use by one call. */
struct siv_eng {
	EVP_CIPHER_CTX		*mac;	/* AES under K1: S2V's CMAC */
	EVP_CIPHER_CTX		*ctr;	/* AES under K2: the CTR keystream */
};

/* What a key derives once: CMAC's subkeys and S2V's first value. */
struct siv_sub {
	uint8_t			k1[SIV_BLOCK], k2[SIV_BLOCK];	/* RFC 4493 K1, K2 */
	uint8_t			d0[SIV_BLOCK];			/* CMAC(<zero>) */
};

static void eng_free(struct siv_eng *e)
{
	if (e == NULL)
		return;
	EVP_CIPHER_CTX_free(e->mac);	/* both cleanse their key schedules */
	EVP_CIPHER_CTX_free(e->ctr);
	free(e);
}

/* AES of the n blocks at in into out (may be in), under ctx.  0 or -EIO. */
static int aes_blocks(EVP_CIPHER_CTX *ctx, const uint8_t *in, size_t n, uint8_t *out)
{
	int outl = 0;

	if (EVP_EncryptUpdate(ctx, out, &outl, in, (int)(n * SIV_BLOCK)) != 1 ||
	    (size_t)outl != n * SIV_BLOCK)
		return -EIO;
	return 0;
}

/* d = dbl(d): multiplication by x in GF(2^128) (RFC 5297 section 2.3, and
 * RFC 4493's subkeys), in constant time (d is secret). */
static void dbl(uint8_t d[SIV_BLOCK])
{
	const uint8_t carry = (uint8_t)-(d[0] >> 7);

	for (int i = 0; i < SIV_BLOCK - 1; i++)
		d[i] = (uint8_t)(d[i] << 1 | d[i + 1] >> 7);
	d[SIV_BLOCK - 1] = (uint8_t)(d[SIV_BLOCK - 1] << 1 ^ (0x87 & carry));
}

static void xor16(uint8_t *d, const uint8_t *s)
{
	for (int i = 0; i < SIV_BLOCK; i++)
		d[i] ^= s[i];
}

/*
 * AES-CMAC (RFC 4493) of a[0..alen) || tail[0..16) (no tail if tail is
 * NULL) into out: CBC-MAC over the blocks, the last one xored with subkey
 * K1 if complete, else padded with 0x80 0... and xored with K2.  The
 * chaining is done here, one block per EVP call, so the AES context never
 * needs re-initialising.  0 or -EIO.
 */
static int cmac(EVP_CIPHER_CTX *ecb, const struct siv_sub *sub, const uint8_t *a, size_t alen,
		const uint8_t *tail, uint8_t out[SIV_BLOCK])
{
	const size_t total = alen + (tail != NULL ? SIV_BLOCK : 0);
	uint8_t x[SIV_BLOCK] = { 0 };
	size_t off = 0;
	int ret = 0;

	/* Every block but the last (which may be complete: total % 16 == 0). */
	for (; off + SIV_BLOCK < total && ret == 0; off += SIV_BLOCK) {
		for (size_t i = 0; i < SIV_BLOCK; i++)
			x[i] ^= off + i < alen ? a[off + i] : tail[off + i - alen];
		ret = aes_blocks(ecb, x, 1, x);
	}
	if (ret == 0) {
		const size_t rest = total - off;	/* 0..16; 0 only if total == 0 */

		for (size_t i = 0; i < rest; i++)
			x[i] ^= off + i < alen ? a[off + i] : tail[off + i - alen];
		if (rest == SIV_BLOCK) {
			xor16(x, sub->k1);
		} else {
			x[rest] ^= 0x80;
			xor16(x, sub->k2);
		}
		ret = aes_blocks(ecb, x, 1, out);
	}
	sc_wipe(x, sizeof(x));
	return ret;
}

/*
 * S2V (RFC 5297 section 2.4) of the associated-data components and the
 * plaintext p (plen >= 1, so the RFC's "no strings at all" case cannot
 * arise) into v.  0 or -EIO.
 */
static int s2v(EVP_CIPHER_CTX *ecb, const struct siv_sub *sub, const struct sc_siv_ad *ad,
	       size_t n_ad, const uint8_t *p, size_t plen, uint8_t v[SIV_BLOCK])
{
	uint8_t d[SIV_BLOCK], t[SIV_BLOCK];
	int ret = 0;

	memcpy(d, sub->d0, SIV_BLOCK);
	for (size_t i = 0; i < n_ad && ret == 0; i++) {
		dbl(d);
		ret = cmac(ecb, sub, ad[i].p, ad[i].len, NULL, t);
		xor16(d, t);
	}
	if (ret != 0)
		goto out_wipe;
	if (plen >= SIV_BLOCK) {
		/* T = Sn xorend D: only the last block changes. */
		memcpy(t, p + plen - SIV_BLOCK, SIV_BLOCK);
		xor16(t, d);
		ret = cmac(ecb, sub, p, plen - SIV_BLOCK, t, v);
	} else {
		/* T = dbl(D) xor pad(Sn), pad = Sn || 0x80 || 0... */
		dbl(d);
		memset(t, 0, SIV_BLOCK);
		memcpy(t, p, plen);
		t[plen] = 0x80;
		xor16(t, d);
		ret = cmac(ecb, sub, t, SIV_BLOCK, NULL, v);
	}
out_wipe:
	sc_wipe(d, sizeof(d));
	sc_wipe(t, sizeof(t));
	return ret;
}

/*
 * out = in xor the AES-CTR keystream from counter block q (section 2.6;
 * the counter is q as a 128-bit big-endian number, incremented per
 * block).  The counter blocks are encrypted CTR_CHUNK at a time in one EVP
 * call on the ECB context, which therefore is never re-initialised.
 * 0 or -EIO.
 */
static int ctr_xor(EVP_CIPHER_CTX *ecb, const uint8_t q[SIV_BLOCK], const uint8_t *in, size_t n,
		   uint8_t *out)
{
	uint8_t ks[CTR_CHUNK * SIV_BLOCK], c[SIV_BLOCK];
	int ret = 0;

	memcpy(c, q, SIV_BLOCK);
	for (size_t off = 0; off < n && ret == 0;) {
		size_t nb = (n - off + SIV_BLOCK - 1) / SIV_BLOCK, len;

		if (nb > CTR_CHUNK)
			nb = CTR_CHUNK;
		for (size_t b = 0; b < nb; b++) {
			memcpy(ks + b * SIV_BLOCK, c, SIV_BLOCK);
			for (int i = SIV_BLOCK - 1; i >= 0 && ++c[i] == 0; i--)
				;
		}
		ret = aes_blocks(ecb, ks, nb, ks);
		len = n - off < nb * SIV_BLOCK ? n - off : nb * SIV_BLOCK;
		for (size_t i = 0; i < len && ret == 0; i++)
			out[off + i] = in[off + i] ^ ks[i];
		off += len;
	}
	sc_wipe(ks, sizeof(ks));
	sc_wipe(c, sizeof(c));
	return ret;
}

/*
 * One SIV message on engine e with the key's sub.  enc: in is the
 * plaintext of len bytes, out gets tag || ciphertext (len + 16).  Decrypt:
 * in is tag || ciphertext (len >= 16), out gets the plaintext (len - 16),
 * wiped unless the tag verifies.  in and out do not overlap.  0, -EBADMSG
 * (tag mismatch), -EINVAL (an empty plaintext, which the names never have
 * and OpenSSL's SIV refused) or -EIO.
 */
static int siv_run(struct siv_eng *e, const struct siv_sub *sub, int enc,
		   const struct sc_siv_ad *ad, size_t n_ad, const uint8_t *in, size_t len,
		   uint8_t *out)
{
	const uint8_t *src = in;
	uint8_t *dst = out, v[SIV_BLOCK], q[SIV_BLOCK];
	size_t n = len;
	int ret;

	if (!enc) {
		if (len < SIV_TAG_LEN)
			return -EBADMSG;
		src = in + SIV_TAG_LEN;
		n = len - SIV_TAG_LEN;
	} else {
		dst = out + SIV_TAG_LEN;
	}
	if (n == 0 || n > INT32_MAX)
		return -EINVAL;
	if (enc) {
		ret = s2v(e->mac, sub, ad, n_ad, src, n, v);
		if (ret != 0)
			return ret;
		memcpy(out, v, SIV_TAG_LEN);
	} else {
		memcpy(v, in, SIV_TAG_LEN);
	}
	/* The counter: V with the top bits of its last two 32-bit words
	 * cleared (section 2.6), so implementations may use 64-bit adds. */
	memcpy(q, v, SIV_BLOCK);
	q[8] &= 0x7f;
	q[12] &= 0x7f;
	ret = ctr_xor(e->ctr, q, src, n, dst);
	if (ret == 0 && !enc) {
		ret = s2v(e->mac, sub, ad, n_ad, dst, n, q);
		if (ret == 0 && CRYPTO_memcmp(q, v, SIV_BLOCK) != 0)
			ret = -EBADMSG;
	}
	if (ret != 0)
		sc_wipe(dst, n);
	sc_wipe(q, sizeof(q));
	return ret;
}

/*
 * An engine keyed with key (32 bytes: AES-SIV-CMAC-256, 64: -512; the
 * first half keys S2V's CMAC, the second the CTR encryption, RFC 5297
 * section 2.6), with the key's subkeys and d0 into sub; or NULL with *err
 * set (-EINVAL: key length, -ENOMEM, -EIO).
 */
static struct siv_eng *eng_keyed(const uint8_t *key, size_t key_len, struct siv_sub *sub,
				 int *err)
{
	static const uint8_t zero[SIV_BLOCK];
	const int big = key_len == 64;
	const size_t half = key_len / 2;
	struct siv_eng *e;

	*err = -EINVAL;
	if (key_len != 32 && key_len != 64)
		return NULL;
	pthread_once(&g_once, fetch_ciphers);
	*err = -EIO;
	if (g_ecb[big] == NULL)
		return NULL;
	*err = -ENOMEM;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->mac = EVP_CIPHER_CTX_new();
	e->ctr = EVP_CIPHER_CTX_new();
	if (e->mac == NULL || e->ctr == NULL)
		goto err_free_eng;
	*err = -EIO;
	if (EVP_EncryptInit_ex2(e->mac, g_ecb[big], key, NULL, NULL) != 1 ||
	    EVP_EncryptInit_ex2(e->ctr, g_ecb[big], key + half, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_padding(e->mac, 0) != 1 ||
	    EVP_CIPHER_CTX_set_padding(e->ctr, 0) != 1)
		goto err_free_eng;
	/* RFC 4493 section 2.3: L = AES(0), K1 = dbl(L), K2 = dbl(K1). */
	if (aes_blocks(e->mac, zero, 1, sub->k1) != 0)
		goto err_free_eng;
	dbl(sub->k1);
	memcpy(sub->k2, sub->k1, SIV_BLOCK);
	dbl(sub->k2);
	if (cmac(e->mac, sub, zero, SIV_BLOCK, NULL, sub->d0) != 0)
		goto err_free_eng;
	return e;

err_free_eng:
	eng_free(e);
	return NULL;
}

/* A copy of the keyed engine t (only read, so threads copy it at once), or NULL. */
static struct siv_eng *eng_dup(const struct siv_eng *t)
{
	struct siv_eng *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->mac = EVP_CIPHER_CTX_new();
	e->ctr = EVP_CIPHER_CTX_new();
	if (e->mac == NULL || e->ctr == NULL || EVP_CIPHER_CTX_copy(e->mac, t->mac) != 1 ||
	    EVP_CIPHER_CTX_copy(e->ctr, t->ctr) != 1) {
		eng_free(e);
		return NULL;
	}
	return e;
}

/*
 * A key: an engine keyed once (only copied) and the pool of engines calls
 * use: slots taken and given back by atomic exchange (a lock would be a
 * futex round trip whenever two threads meet).  A call finding every slot
 * empty copies the template; one finding every slot full frees its engine,
 * so the pool holds at most SIV_POOL engines.
 */
#define SIV_POOL	32

struct siv_key {
	struct siv_sub		sub;
	struct siv_eng		*tmpl;
	_Atomic(struct siv_eng *) slot[SIV_POOL];
};

static void siv_key_free(struct siv_key *k)
{
	if (k == NULL)
		return;
	for (size_t i = 0; i < SIV_POOL; i++)
		eng_free(atomic_load(&k->slot[i]));
	eng_free(k->tmpl);
	sc_wipe(&k->sub, sizeof(k->sub));
	free(k);
}

/* A key for key (64 bytes), or NULL with *err set (-ENOMEM, -EIO). */
static struct siv_key *siv_key_new(const uint8_t key[NAME_KEY_LEN], int *err)
{
	struct siv_key *k = calloc(1, sizeof(*k));

	*err = -ENOMEM;
	if (k == NULL)
		return NULL;
	for (size_t i = 0; i < SIV_POOL; i++)
		atomic_init(&k->slot[i], NULL);
	k->tmpl = eng_keyed(key, NAME_KEY_LEN, &k->sub, err);
	if (k->tmpl == NULL) {
		siv_key_free(k);
		return NULL;
	}
	return k;
}

/* siv_run on an engine from k's pool (a new copy of the template if none is
 * free).  0, -EBADMSG, -ENOMEM or -EIO. */
static int siv_key_run(struct siv_key *k, int enc, const uint8_t nonce[SC_DIRNONCE_LEN],
		       const uint8_t *in, size_t len, uint8_t *out)
{
	const struct sc_siv_ad ad = { nonce, SC_DIRNONCE_LEN };
	struct siv_eng *e = NULL;
	size_t i;
	int ret;

	for (i = 0; i < SIV_POOL && e == NULL; i++)
		if (atomic_load_explicit(&k->slot[i], memory_order_relaxed) != NULL)
			e = atomic_exchange(&k->slot[i], NULL);
	if (e == NULL) {
		e = eng_dup(k->tmpl);
		if (e == NULL)
			return -ENOMEM;
	}
	ret = siv_run(e, &k->sub, enc, &ad, 1, in, len, out);
	for (i = 0; i < SIV_POOL; i++) {
		struct siv_eng *empty = NULL;

		if (atomic_compare_exchange_strong(&k->slot[i], &empty, e))
			return ret;
	}
	eng_free(e);
	return ret;
}

/* Test hook (crypto_i.h): one SIV message under an explicit key. */
int sc_siv(const uint8_t *key, size_t key_len, int enc, const struct sc_siv_ad *ad,
	   size_t n_ad, const void *in, size_t len, void *out)
{
	struct siv_sub sub;
	struct siv_eng *e;
	int ret;

	e = eng_keyed(key, key_len, &sub, &ret);
	if (e != NULL) {
		ret = siv_run(e, &sub, enc, ad, n_ad, in, len, out);
		eng_free(e);
	}
	sc_wipe(&sub, sizeof(sub));
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
size_t sc_b64u_encode(const uint8_t *in, size_t n, char *out)
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
ssize_t sc_b64u_decode(const char *in, size_t len, uint8_t *out, size_t max)
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
 * string encodes to, and its unused bits zero?  (sc_b64u_decode's checks.) */
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
	if (ret == 0)
		ret = sc_hkdf_sha256(master, SC_MASTER_KEY_LEN, NULL, 0, SC_LABEL_DIRNONCE_TAG,
				     strlen(SC_LABEL_DIRNONCE_TAG), keys->tag, TAG_KEY_LEN);
	if (ret == 0)
		ret = sc_hkdf_sha256(master, SC_MASTER_KEY_LEN, NULL, 0, SC_LABEL_LINK_TAG,
				     strlen(SC_LABEL_LINK_TAG), keys->ltag, TAG_KEY_LEN);
	if (ret != 0)
		goto err_free_keys;
	ret = -EIO;
	nk->tag = sc_hmac_sha256_keyed(keys->tag, TAG_KEY_LEN);
	nk->ltag = sc_hmac_sha256_keyed(keys->ltag, TAG_KEY_LEN);
	if (nk->tag == NULL || nk->ltag == NULL)
		goto err_free_keys;
	nk->name = siv_key_new(keys->name, &ret);
	if (nk->name == NULL)
		goto err_free_keys;
	nk->link = siv_key_new(keys->link, &ret);
	if (nk->link == NULL)
		goto err_free_name;
	sc_secure_free(keys, sizeof(*keys));
	*out = nk;
	return 0;

err_free_name:
	siv_key_free(nk->name);
err_free_keys:
	EVP_MAC_CTX_free(nk->tag);
	EVP_MAC_CTX_free(nk->ltag);
	sc_secure_free(keys, sizeof(*keys));
err_free_nk:
	free(nk);
	return ret;
}

void sc_nkey_free(struct sc_nkey *nk)
{
	if (nk == NULL)
		return;
	siv_key_free(nk->name);	/* cleanses the key schedules */
	siv_key_free(nk->link);
	EVP_MAC_CTX_free(nk->tag);	/* cleanses its key */
	EVP_MAC_CTX_free(nk->ltag);
	free(nk);
}

/* ---- directory nonce record ---- */

#define DIRNONCE_VERSION	1	/* unbound: volumes made before the tags */
#define DIRNONCE_VERSION_BOUND	2	/* tagged with its place */

/* 0 or -EIO. */
int sc_dirnonce_new(uint8_t rec[SC_DIRNONCE_REC_LEN])
{
	rec[0] = DIRNONCE_VERSION;
	return sc_random(rec + 1, SC_DIRNONCE_LEN);
}

/*
 * The version byte is read first (a later version may have another
 * length): 0, -EPROTONOSUPPORT (a version other than 1 and 2), -EUCLEAN
 * (empty, version 1 at a length other than 17, version 2 at one other
 * than 33 and 49).
 */
int sc_dirnonce_parse(const void *rec, size_t len, uint8_t nonce[SC_DIRNONCE_LEN])
{
	const uint8_t *r = rec;

	if (len == 0)
		return -EUCLEAN;
	if (r[0] != DIRNONCE_VERSION && r[0] != DIRNONCE_VERSION_BOUND)
		return -EPROTONOSUPPORT;
	if (r[0] == DIRNONCE_VERSION ? len != SC_DIRNONCE_REC_LEN :
	    len != SC_DIRNONCE_REC2_LEN && len != SC_DIRNONCE_REC_MAX)
		return -EUCLEAN;
	memcpy(nonce, r + 1, SC_DIRNONCE_LEN);
	return 0;
}

/*
 * The tag of nonce at the place at: HMAC-SHA256 under the tag key of
 * version byte || nonce || parent nonce (16 zero bytes for the root) ||
 * encoded name (empty for the root), truncated to 16 bytes.  The name is
 * last and the rest fixed-length, so no two inputs run together; the
 * version byte keeps these tags apart from any later record's.  0 or -EIO.
 */
static int place_tag(const struct sc_nkey *nk, const uint8_t nonce[SC_DIRNONCE_LEN],
		     const struct sc_dirplace *at, uint8_t out[REC_TAG_LEN])
{
	static const uint8_t none[SC_DIRNONCE_LEN];
	uint8_t msg[1 + 2 * SC_DIRNONCE_LEN + SC_NAME_ENC_MAX], md[32];
	int ret;

	if (at->enc_len > SC_NAME_ENC_MAX || (at->parent == NULL) != (at->enc_len == 0))
		return -EINVAL;
	msg[0] = DIRNONCE_VERSION_BOUND;
	memcpy(msg + 1, nonce, SC_DIRNONCE_LEN);
	memcpy(msg + 1 + SC_DIRNONCE_LEN, at->parent ? at->parent : none, SC_DIRNONCE_LEN);
	if (at->enc_len)	/* the root has no name: enc may be NULL, memcpy's args never */
		memcpy(msg + 1 + 2 * SC_DIRNONCE_LEN, at->enc, at->enc_len);
	ret = sc_hmac_sha256_dup(nk->tag, msg, 1 + 2 * SC_DIRNONCE_LEN + at->enc_len, md);
	if (ret == 0)
		memcpy(out, md, REC_TAG_LEN);
	sc_wipe(md, sizeof(md));
	return ret;
}

/* Length or -EIO (-EINVAL: a place that is neither the root nor a name). */
int sc_dirnonce_seal(const struct sc_nkey *nk, const uint8_t nonce[SC_DIRNONCE_LEN],
		     const struct sc_dirplace *at, const struct sc_dirplace *also, uint8_t *rec)
{
	int ret;

	rec[0] = DIRNONCE_VERSION_BOUND;
	memcpy(rec + 1, nonce, SC_DIRNONCE_LEN);
	ret = place_tag(nk, nonce, at, rec + 1 + SC_DIRNONCE_LEN);
	if (ret == 0 && also != NULL)
		ret = place_tag(nk, nonce, also, rec + SC_DIRNONCE_REC2_LEN);
	if (ret != 0)
		return ret;
	return also != NULL ? SC_DIRNONCE_REC_MAX : SC_DIRNONCE_REC2_LEN;
}

/* 2, 1, -EBADMSG, -EUCLEAN, -EPROTONOSUPPORT, -EIO (sc_crypto.h). */
int sc_dirnonce_open(const struct sc_nkey *nk, const void *rec, size_t len,
		     const struct sc_dirplace *at, uint8_t nonce[SC_DIRNONCE_LEN])
{
	const uint8_t *r = rec;
	uint8_t n[SC_DIRNONCE_LEN], want[REC_TAG_LEN];
	int ret, ok;

	ret = sc_dirnonce_parse(rec, len, n);
	if (ret != 0)
		return ret;
	if (r[0] == DIRNONCE_VERSION) {
		memcpy(nonce, n, SC_DIRNONCE_LEN);
		return 1;
	}
	ret = place_tag(nk, n, at, want);
	if (ret != 0)
		return ret == -EINVAL ? -EBADMSG : ret;
	/* Both tags compared, in constant time, whichever matches. */
	ok = !CRYPTO_memcmp(want, r + 1 + SC_DIRNONCE_LEN, REC_TAG_LEN);
	if (len == SC_DIRNONCE_REC_MAX)
		ok |= !CRYPTO_memcmp(want, r + SC_DIRNONCE_REC2_LEN, REC_TAG_LEN);
	if (!ok)
		return -EBADMSG;
	memcpy(nonce, n, SC_DIRNONCE_LEN);
	return 2;
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
	ret = siv_key_run(nk->name, 1, nonce, p, plen, ct);
	sc_wipe(p, plen);
	if (ret != 0)
		return ret;
	return (int)sc_b64u_encode(ct, SIV_TAG_LEN + plen, out);
}

/* Plaintext length, or -EBADMSG (not a name of this directory), -ENOMEM, -EIO. */
int sc_name_decrypt(const struct sc_nkey *nk, const uint8_t nonce[SC_DIRNONCE_LEN],
		    const char *enc, size_t len, char *out)
{
	uint8_t ct[SIV_TAG_LEN + 256 + 2];	/* + 2: sc_b64u_decode's last group */
	ssize_t n, plen;
	int ret;

	if (len > SC_NAME_ENC_MAX)
		return -EBADMSG;
	n = sc_b64u_decode(enc, len, ct, SIV_TAG_LEN + 256);
	if (n < 0)
		return (int)n;
	if (n < 2 * SIV_TAG_LEN || n % SC_NAME_PAD != 0)
		return -EBADMSG;
	ret = siv_key_run(nk->name, 0, nonce, ct, (size_t)n, (uint8_t *)out);
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
	sc_b64u_encode(md, sizeof(md), out + 3);
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
	static const char lsfx[] = SC_LINK_SIDE_SUFFIX, lnew[] = SC_LINK_SIDE_NEW;
	static const char bsfx[] = SC_BINDREC_SUFFIX;
	const size_t sfx_len = sizeof(sfx) - 1, tmp_len = sizeof(tmp) - 1;
	const size_t lsfx_len = sizeof(lsfx) - 1, lnew_len = sizeof(lnew) - 1;
	const size_t bsfx_len = sizeof(bsfx) - 1;

	if (len >= 3 && memcmp(backing, LONG_PREFIX, 3) == 0) {
		if (is_long(backing, len))
			return SC_NAME_KIND_LONG;
		if (len == SC_NAME_LONG_LEN + sfx_len &&
		    memcmp(backing + SC_NAME_LONG_LEN, sfx, sfx_len) == 0 &&
		    is_long(backing, SC_NAME_LONG_LEN))
			return SC_NAME_KIND_SIDE;
		if (((len == SC_NAME_LONG_LEN + lsfx_len &&
		      memcmp(backing + SC_NAME_LONG_LEN, lsfx, lsfx_len) == 0) ||
		     (len == SC_NAME_LONG_LEN + lnew_len &&
		      memcmp(backing + SC_NAME_LONG_LEN, lnew, lnew_len) == 0)) &&
		    is_long(backing, SC_NAME_LONG_LEN))
			return SC_NAME_KIND_LINKSIDE;
		if (len == SC_NAME_LONG_LEN + bsfx_len &&
		    memcmp(backing + SC_NAME_LONG_LEN, bsfx, bsfx_len) == 0 &&
		    is_long(backing, SC_NAME_LONG_LEN))
			return SC_NAME_KIND_BIND;
		if (len == tmp_len + 32 && memcmp(backing, tmp, tmp_len) == 0) {
			for (size_t i = tmp_len; i < len; i++)
				if (!((backing[i] >= '0' && backing[i] <= '9') ||
				      (backing[i] >= 'a' && backing[i] <= 'f')))
					return SC_NAME_KIND_OTHER;
			return SC_NAME_KIND_TMP;
		}
		if ((len == sizeof(SC_DIRNONCE_FILE) - 1 &&
		     memcmp(backing, SC_DIRNONCE_FILE, len) == 0) ||
		    (len == sizeof(SC_DIRNONCE_TMP) - 1 && memcmp(backing, SC_DIRNONCE_TMP, len) == 0) ||
		    (len == sizeof(SC_DIRLIST_FILE) - 1 && memcmp(backing, SC_DIRLIST_FILE, len) == 0))
			return SC_NAME_KIND_NONCE;
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
	ret = siv_key_run(nk->link, 1, buf, p, plen, buf + SC_DIRNONCE_LEN);
	sc_wipe(p, plen);
	if (ret != 0)
		return ret;
	return (int)sc_b64u_encode(buf, SC_DIRNONCE_LEN + SIV_TAG_LEN + plen, out);
}

/* Plaintext length, or -EBADMSG, -ENOMEM, -EIO. */
int sc_link_decrypt(const struct sc_nkey *nk, const char *enc, size_t len, char *out)
{
	uint8_t buf[SC_DIRNONCE_LEN + SIV_TAG_LEN + SC_LINK_PLAIN_MAX + 2];
	ssize_t n, plen;
	int ret;

	if (len > SC_LINK_ENC_MAX)
		return -EBADMSG;
	n = sc_b64u_decode(enc, len, buf, SC_DIRNONCE_LEN + SIV_TAG_LEN + SC_LINK_PLAIN_MAX);
	if (n < 0)
		return (int)n;
	if (n < SC_DIRNONCE_LEN + SIV_TAG_LEN + SC_NAME_PAD || n % SC_NAME_PAD != 0)
		return -EBADMSG;
	ret = siv_key_run(nk->link, 0, buf, buf + SC_DIRNONCE_LEN,
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

/* ---- bound symlink targets (SC_FEAT_LINKS_BOUND) ---- */

#define LINK_TAG_VERSION	1	/* the first byte of a place tag's message */
#define LINK_HDR		(SC_DIRNONCE_LEN + SIV_TAG_LEN + REC_TAG_LEN)

/*
 * The place tag of a stored target whose nonce and SIV tag are hdr
 * (32 bytes) at the place at: HMAC-SHA256 under the link tag key of
 * version byte || nonce || SIV tag || directory nonce || encoded name,
 * truncated to 16 bytes.  The SIV tag commits to the plaintext, so this
 * binds the whole target; the name is last and all else fixed-length.
 * 0, -EINVAL (no place), -EIO.
 */
static int link_tag(const struct sc_nkey *nk, const uint8_t *hdr, const struct sc_dirplace *at,
		    uint8_t out[REC_TAG_LEN])
{
	uint8_t msg[1 + 3 * 16 + SC_NAME_ENC_MAX], md[32];
	int ret;

	if (at->parent == NULL || at->enc_len == 0 || at->enc_len > SC_NAME_ENC_MAX)
		return -EINVAL;
	msg[0] = LINK_TAG_VERSION;
	memcpy(msg + 1, hdr, SC_DIRNONCE_LEN + SIV_TAG_LEN);
	memcpy(msg + 1 + 32, at->parent, SC_DIRNONCE_LEN);
	memcpy(msg + 1 + 48, at->enc, at->enc_len);
	ret = sc_hmac_sha256_dup(nk->ltag, msg, 1 + 48 + at->enc_len, md);
	if (ret == 0)
		memcpy(out, md, REC_TAG_LEN);
	sc_wipe(md, sizeof(md));
	return ret;
}

/*
 * The stored form of target at the place at under the link nonce R (NULL:
 * drawn from the CSPRNG).  Stored length, or -EINVAL (empty, holds NUL, no
 * place), -ENAMETOOLONG, -ENOMEM, -EIO.
 */
static int link_seal(const struct sc_nkey *nk, const char *target, size_t len,
		     const struct sc_dirplace *at, const uint8_t *r, char *out)
{
	uint8_t *p, *buf;
	size_t plen;
	int ret = -ENOMEM;

	if (len == 0 || memchr(target, '\0', len) != NULL)
		return -EINVAL;
	if (len > SC_LINK_BOUND_PLAIN_MAX)
		return -ENAMETOOLONG;
	plen = padded(len);
	/* Up to 4 KiB each: off the stack of a FUSE worker. */
	p = malloc(plen);
	buf = malloc(LINK_HDR + plen);
	if (p == NULL || buf == NULL)
		goto out_free;
	ret = 0;
	if (r != NULL)
		memcpy(buf, r, SC_DIRNONCE_LEN);
	else
		ret = sc_random(buf, SC_DIRNONCE_LEN);
	if (ret != 0)
		goto out_free;
	memcpy(p, target, len);
	memset(p + len, 0, plen - len);
	/*
	 * The SIV part is the unbound format's (AD: the random nonce), written
	 * as tag || ciphertext from byte 32; the tag then moves to byte 16,
	 * where the unbound format has it, and the place tag takes its room.
	 */
	ret = siv_key_run(nk->link, 1, buf, p, plen, buf + LINK_HDR - SIV_TAG_LEN);
	if (ret != 0)
		goto out_free;
	memcpy(buf + SC_DIRNONCE_LEN, buf + LINK_HDR - SIV_TAG_LEN, SIV_TAG_LEN);
	ret = link_tag(nk, buf, at, buf + SC_DIRNONCE_LEN + SIV_TAG_LEN);
	if (ret == 0)
		ret = (int)sc_b64u_encode(buf, LINK_HDR + plen, out);
out_free:
	if (p != NULL)
		sc_wipe(p, plen);
	free(p);
	free(buf);
	return ret;
}

int sc_link_seal(const struct sc_nkey *nk, const char *target, size_t len,
		 const struct sc_dirplace *at, char *out)
{
	return link_seal(nk, target, len, at, NULL, out);
}

/* As sc_link_seal, the nonce given (reverse mode's synthetic one). */
int sc_link_seal_nonce(const struct sc_nkey *nk, const char *target, size_t len,
		       const struct sc_dirplace *at, const uint8_t nonce[SC_DIRNONCE_LEN],
		       char *out)
{
	return link_seal(nk, target, len, at, nonce, out);
}

/* Plaintext length, or -ESTALE (bound elsewhere), -EBADMSG, -ENOMEM, -EIO. */
int sc_link_open(const struct sc_nkey *nk, const char *enc, size_t len,
		 const struct sc_dirplace *at, char *out)
{
	const size_t max = LINK_HDR + SC_LINK_BOUND_PLAIN_MAX + 1;
	uint8_t *buf, want[REC_TAG_LEN];
	ssize_t n, plen = -EBADMSG;
	int ret;

	if (len > SC_LINK_BOUND_ENC_MAX)
		return -EBADMSG;
	buf = malloc(max + 2);	/* + 2: sc_b64u_decode's last group */
	if (buf == NULL)
		return -ENOMEM;
	n = sc_b64u_decode(enc, len, buf, max);
	if (n < 0) {
		plen = n;
		goto out_free;
	}
	if (n < (ssize_t)(LINK_HDR + SC_NAME_PAD) || n % SC_NAME_PAD != 0)
		goto out_free;
	/* SIV wants tag || ciphertext: the SIV tag goes next to it, over the place tag. */
	memcpy(want, buf + SC_DIRNONCE_LEN + SIV_TAG_LEN, REC_TAG_LEN);
	memcpy(buf + SC_DIRNONCE_LEN + SIV_TAG_LEN, buf + SC_DIRNONCE_LEN, SIV_TAG_LEN);
	ret = siv_key_run(nk->link, 0, buf, buf + SC_DIRNONCE_LEN + SIV_TAG_LEN,
			  (size_t)n - SC_DIRNONCE_LEN - SIV_TAG_LEN, (uint8_t *)out);
	if (ret != 0) {
		plen = ret;
		goto out_free;
	}
	plen = unpad((const uint8_t *)out, (size_t)n - LINK_HDR);
	if (plen < 0 || plen > SC_LINK_BOUND_PLAIN_MAX) {
		sc_wipe(out, (size_t)n - LINK_HDR);
		plen = -EBADMSG;
		goto out_free;
	}
	if (at != NULL) {
		uint8_t got[REC_TAG_LEN];

		/* buf's first 32 bytes are the nonce and SIV tag, as sealed. */
		ret = link_tag(nk, buf, at, got);
		if (ret != 0 || CRYPTO_memcmp(got, want, REC_TAG_LEN) != 0) {
			sc_wipe(out, (size_t)n - LINK_HDR);
			plen = ret == 0 || ret == -EINVAL ? -ESTALE : ret;
			goto out_free;
		}
	}
	out[plen] = '\0';
out_free:
	free(buf);
	return (int)plen;
}

/* SC_LINK_MARK_PREFIX + base64url(SHA-256(enc)) into out (SC_LINK_MARK_LEN + 1).  0 or -EIO. */
int sc_link_mark(const char *enc, size_t len, char *out)
{
	const size_t pl = sizeof(SC_LINK_MARK_PREFIX) - 1;
	uint8_t md[32];
	unsigned int mdlen = 0;

	if (EVP_Digest(enc, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
		return -EIO;
	memcpy(out, SC_LINK_MARK_PREFIX, pl);
	sc_b64u_encode(md, sizeof(md), out + pl);
	return 0;
}

bool sc_link_is_mark(const char *s, size_t len)
{
	const size_t pl = sizeof(SC_LINK_MARK_PREFIX) - 1;

	return len == SC_LINK_MARK_LEN && memcmp(s, SC_LINK_MARK_PREFIX, pl) == 0 &&
	       b64_canonical(s + pl, SC_LINK_MARK_LEN - pl);
}
