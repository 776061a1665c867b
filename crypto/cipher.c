/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cipher.c - cipher names, keyed context sets and their pool, and the
 * data-unit transforms for null, AES-256-XTS and AES-256-CBC(-CTS)+ESSIV.
 *
 * Contexts are keyed once (key schedule at pool fill time) and reused: a
 * call pops a keyed set, processes its N contiguous units resetting only
 * the tweak/IV per unit, and pushes the set back.  Tweaks and IVs live on
 * the caller's stack, never in shared state (the GlusterFS translator's
 * shared IV buffer corrupted concurrent reads).
 *
 * The null cipher takes the same calls (pool get/put, per-unit loop) and
 * replaces only the transform with memmove, so a null volume measures
 * everything but AES.
 */
#include <errno.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include "crypto_i.h"

/* Keyed sets kept beyond this are freed on put: about one per FUSE thread. */
#define POOL_MAX_FREE	16
/* ESSIV IVs computed per ECB call (a stack array of 16-byte blocks). */
#define ESSIV_BATCH	64
/* Tail regions and tiny files use the tweak of their unit index with this bit
 * set, so they never share a tweak/IV with a whole unit (unit indices of a
 * file < 2^64 bytes with units >= 512 bytes are below 2^55). */
#define TAIL_TWEAK_BIT	(1ull << 63)

static const char *const cipher_names[] = {
	[SC_CIPHER_NULL]	= "null",
	[SC_CIPHER_AES_XTS]	= "aes-xts",
	[SC_CIPHER_AES_CBC]	= "aes-cbc",
};

/* The name, or NULL for an unknown id. */
const char *sc_cipher_name(enum sc_cipher_id id)
{
	if ((unsigned)id >= sizeof(cipher_names) / sizeof(cipher_names[0]))
		return NULL;
	return cipher_names[id];
}

/* 0, or -EINVAL for an unknown name. */
int sc_cipher_parse(const char *name, enum sc_cipher_id *out)
{
	for (unsigned i = 0; i < sizeof(cipher_names) / sizeof(cipher_names[0]); i++) {
		if (strcmp(name, cipher_names[i]) == 0) {
			*out = (enum sc_cipher_id)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* 0 if bs is a power of two in [SC_BLOCK_MIN, SC_BLOCK_MAX], else -EINVAL. */
int sc_block_size_check(uint64_t bs)
{
	if (bs < SC_BLOCK_MIN || bs > SC_BLOCK_MAX || (bs & (bs - 1)) != 0)
		return -EINVAL;
	return 0;
}

/* ---- algorithm objects, fetched once ---- */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static EVP_CIPHER *g_xts, *g_cbc, *g_cts, *g_ecb;

static void fetch_ciphers(void)
{
	g_xts = EVP_CIPHER_fetch(NULL, "AES-256-XTS", NULL);
	g_cbc = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
	g_cts = EVP_CIPHER_fetch(NULL, "AES-256-CBC-CTS", NULL);
	g_ecb = EVP_CIPHER_fetch(NULL, "AES-256-ECB", NULL);
}

/* A new context keyed with key; padding off (we only feed whole messages). */
static EVP_CIPHER_CTX *keyed_ctx(const EVP_CIPHER *c, const uint8_t *key, int enc,
				 const OSSL_PARAM *params)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	if (ctx == NULL)
		return NULL;
	if (EVP_CipherInit_ex2(ctx, c, key, NULL, enc, params) != 1 ||
	    EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static void ctxset_free(struct sc_ctxset *s)
{
	if (s == NULL)
		return;
	/* EVP_CIPHER_CTX_free cleanses the key schedules. */
	EVP_CIPHER_CTX_free(s->enc);
	EVP_CIPHER_CTX_free(s->dec);
	EVP_CIPHER_CTX_free(s->cts_enc);
	EVP_CIPHER_CTX_free(s->cts_dec);
	EVP_CIPHER_CTX_free(s->essiv);
	EVP_CIPHER_CTX_free(s->tiny);
	OPENSSL_free(s);
}

static struct sc_ctxset *ctxset_new(const struct sc_keys *k)
{
	struct sc_ctxset *s = OPENSSL_zalloc(sizeof(*s));

	if (s == NULL)
		return NULL;
	switch (k->cipher) {
	case SC_CIPHER_NULL:
		return s;
	case SC_CIPHER_AES_XTS:
		s->enc = keyed_ctx(g_xts, k->data, 1, NULL);
		s->dec = keyed_ctx(g_xts, k->data, 0, NULL);
		if (s->enc == NULL || s->dec == NULL)
			goto err_free_set;
		return s;
	case SC_CIPHER_AES_CBC:
		s->enc = keyed_ctx(g_cbc, k->data, 1, NULL);
		s->dec = keyed_ctx(g_cbc, k->data, 0, NULL);
		s->essiv = keyed_ctx(g_ecb, k->essiv, 1, NULL);
		if (s->enc == NULL || s->dec == NULL || s->essiv == NULL)
			goto err_free_set;
		return s;
	}
err_free_set:
	ctxset_free(s);
	return NULL;
}

/* 0, -ENOMEM, or -EIO (OpenSSL refused the key, e.g. XTS halves equal). */
int sc_ctxpool_init(struct sc_ctxpool *pool, const struct sc_keys *keys)
{
	struct sc_ctxset *s;

	pthread_once(&g_once, fetch_ciphers);
	if (g_xts == NULL || g_cbc == NULL || g_cts == NULL || g_ecb == NULL)
		return -EIO;
	memset(pool, 0, sizeof(*pool));
	pool->keys = keys;
	if (pthread_mutex_init(&pool->lock, NULL) != 0)
		return -ENOMEM;
	/* Key one set now: a key OpenSSL rejects fails the open, not a read. */
	s = ctxset_new(keys);
	if (s == NULL) {
		pthread_mutex_destroy(&pool->lock);
		return -EIO;
	}
	pool->free = s;
	pool->nfree = 1;
	return 0;
}

void sc_ctxpool_destroy(struct sc_ctxpool *pool)
{
	while (pool->free != NULL) {
		struct sc_ctxset *s = pool->free;

		pool->free = s->next;
		ctxset_free(s);
	}
	pthread_mutex_destroy(&pool->lock);
}

/* A keyed set, or NULL when a new one could not be made. */
struct sc_ctxset *sc_ctxpool_get(struct sc_ctxpool *pool)
{
	struct sc_ctxset *s;

	pthread_mutex_lock(&pool->lock);
	s = pool->free;
	if (s != NULL) {
		pool->free = s->next;
		pool->nfree--;
	}
	pthread_mutex_unlock(&pool->lock);
	if (s == NULL)	/* more threads than sets: key one more, once */
		s = ctxset_new(pool->keys);
	return s;
}

void sc_ctxpool_put(struct sc_ctxpool *pool, struct sc_ctxset *s)
{
	pthread_mutex_lock(&pool->lock);
	if (pool->nfree < POOL_MAX_FREE) {
		s->next = pool->free;
		pool->free = s;
		pool->nfree++;
		s = NULL;
	}
	pthread_mutex_unlock(&pool->lock);
	ctxset_free(s);
}

/* ---- transforms ---- */

static void le128(uint8_t out[16], uint64_t idx)
{
	sc_le64(out, idx);
	memset(out + 8, 0, 8);
}

/* Reset only the IV/tweak of a keyed context and run one message through it. */
static int run_iv(EVP_CIPHER_CTX *ctx, const uint8_t iv[16], const uint8_t *in,
		  uint8_t *out, size_t len)
{
	int outl;

	if (EVP_CipherInit_ex2(ctx, NULL, NULL, iv, -1, NULL) != 1 ||
	    EVP_CipherUpdate(ctx, out, &outl, in, (int)len) != 1 || (size_t)outl != len)
		return -EIO;
	return 0;
}

static int cts_ready(const struct sc_ctxpool *pool, struct sc_ctxset *s)
{
	OSSL_PARAM params[2];

	if (s->cts_enc != NULL && s->cts_dec != NULL)
		return 0;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, (char *)"CS3", 0);
	params[1] = OSSL_PARAM_construct_end();
	if (s->cts_enc == NULL)
		s->cts_enc = keyed_ctx(g_cts, pool->keys->data, 1, params);
	if (s->cts_dec == NULL)
		s->cts_dec = keyed_ctx(g_cts, pool->keys->data, 0, params);
	return s->cts_enc != NULL && s->cts_dec != NULL ? 0 : -EIO;
}

/* One CBC message under iv: plain CBC for whole blocks, CBC-CS3 otherwise.  0 or -EIO. */
int sc_cbc_msg(const struct sc_ctxpool *pool, struct sc_ctxset *s, const uint8_t iv[16],
	       const uint8_t *in, uint8_t *out, size_t len, int enc)
{
	if (len % 16 == 0)
		return run_iv(enc ? s->enc : s->dec, iv, in, out, len);
	if (len < 16 || cts_ready(pool, s) != 0)
		return -EIO;
	return run_iv(enc ? s->cts_enc : s->cts_dec, iv, in, out, len);
}

/* n ESSIV IVs: AES-256-ECB(essiv key, LE128(first + i)), in one ECB call. */
static int essiv_ivs(struct sc_ctxset *s, uint64_t first, uint8_t (*ivs)[16], size_t n)
{
	int outl;

	for (size_t i = 0; i < n; i++)
		le128(ivs[i], first + i);
	if (EVP_EncryptUpdate(s->essiv, ivs[0], &outl, ivs[0], (int)(16 * n)) != 1 ||
	    (size_t)outl != 16 * n)
		return -EIO;
	return 0;
}

/* n units of unit_len bytes, indices first...  0 or -EIO. */
int sc_cipher_units(const struct sc_ctxpool *pool, struct sc_ctxset *s, uint64_t first,
		    const uint8_t *in, uint8_t *out, size_t unit_len, size_t n, int enc)
{
	uint8_t ivs[ESSIV_BATCH][16];
	int ret = 0;

	switch (pool->keys->cipher) {
	case SC_CIPHER_NULL:
		for (size_t i = 0; i < n; i++)
			if (in != out)
				memmove(out + i * unit_len, in + i * unit_len, unit_len);
		return 0;
	case SC_CIPHER_AES_XTS: {
		EVP_CIPHER_CTX *ctx = enc ? s->enc : s->dec;

		for (size_t i = 0; i < n && ret == 0; i++) {
			le128(ivs[0], first + i);
			ret = run_iv(ctx, ivs[0], in + i * unit_len, out + i * unit_len, unit_len);
		}
		return ret;
	}
	case SC_CIPHER_AES_CBC:
		for (size_t done = 0; done < n && ret == 0; ) {
			size_t batch = n - done < ESSIV_BATCH ? n - done : ESSIV_BATCH;

			ret = essiv_ivs(s, first + done, ivs, batch);
			for (size_t i = 0; i < batch && ret == 0; i++) {
				size_t o = (done + i) * unit_len;

				ret = sc_cbc_msg(pool, s, ivs[i], in + o, out + o, unit_len, enc);
			}
			done += batch;
		}
		return ret;
	}
	return -EINVAL;
}

/* One message of len >= 16 under the tail tweak of unit idx.  0 or -EIO. */
int sc_cipher_msg(const struct sc_ctxpool *pool, struct sc_ctxset *s, uint64_t idx,
		  const uint8_t *in, uint8_t *out, size_t len, int enc)
{
	return sc_cipher_units(pool, s, idx | TAIL_TWEAK_BIT, in, out, len, 1, enc);
}

/* A file shorter than 16 bytes: XOR with one AES block of the tiny key.  0 or -EIO. */
int sc_cipher_tiny(const struct sc_ctxpool *pool, struct sc_ctxset *s, const uint8_t iv[16],
		   const uint8_t *in, uint8_t *out, size_t len)
{
	uint8_t ks[16];
	int outl;

	if (len >= 16)
		return -EINVAL;
	if (pool->keys->cipher == SC_CIPHER_NULL) {
		if (in != out)
			memmove(out, in, len);
		return 0;
	}
	if (s->tiny == NULL) {
		s->tiny = keyed_ctx(g_ecb, pool->keys->tiny, 1, NULL);
		if (s->tiny == NULL)
			return -EIO;
	}
	if (EVP_EncryptUpdate(s->tiny, ks, &outl, iv, 16) != 1 || outl != 16)
		return -EIO;
	for (size_t i = 0; i < len; i++)
		out[i] = in[i] ^ ks[i];
	OPENSSL_cleanse(ks, sizeof(ks));
	return 0;
}
