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
 *
 * Per-unit IV reset, fast path: EVP_CipherInit_ex2(ctx, NULL, NULL, iv)
 * costs 100-300 ns in OpenSSL 3.0 (it queries the IV length through the
 * provider's parameter interface on every call), against about 600 ns for
 * AES-256-XTS of a whole 4 KiB unit with VAES: 20-50 % on top of the
 * cipher.  So for XTS and CBC we call the same OpenSSL provider
 * implementation one layer down, through the dispatch table the provider
 * publishes (OSSL_PROVIDER_query_operation): its encrypt_init with only an
 * IV costs about 15 ns.  It is the very code EVP would run, fetched from
 * the provider EVP_CIPHER_fetch chose; it is checked against the EVP path
 * on known data at start-up and abandoned for EVP if anything differs or
 * is missing, or if SC_CRYPTO_EVP_ONLY=1 is set.  docs/crypto-speed.md has
 * the measurements.
 *
 * CBC encryption of several units: CBC is serial within a unit (each block
 * waits for the previous one's AES), which leaves AES-NI's pipeline mostly
 * idle: ~1.5 GB/s where CBC decryption and XTS run at 8-9 GB/s.  Units are
 * independent, so for 2+ whole units per call we run up to CBC_LANES of them
 * side by side: block j of every lane is XORed with its own chaining value
 * and the row goes through one AES-256-ECB call (OpenSSL's, keyed once).
 * The bytes are exactly CBC's (test_kat and test_fkey check them against
 * OpenSSL's CBC; decryption stays OpenSSL's CBC).
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <strings.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include "crypto_i.h"

/* ESSIV IVs computed per ECB call (a stack array of 16-byte blocks). */
#define ESSIV_BATCH	64
/* Units encrypted side by side by interleaved CBC (a divisor of ESSIV_BATCH). */
#define CBC_LANES	32
/* The cross-unit tail region uses the tweak/IV of its unit index with this
 * bit set, so it never shares one with a whole unit (unit indices of a file
 * < 2^64 bytes with units >= 512 bytes are below 2^55). */
#define TAIL_TWEAK_BIT	(1ull << 63)

static const char *const cipher_names[] = {
	[SC_CIPHER_NULL]	= "null",
	[SC_CIPHER_AES_XTS]	= "aes-xts",
	[SC_CIPHER_AES_CBC]	= "aes-cbc",
	[SC_CIPHER_AES_GCM]	= "aes-gcm",
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

/* One provider cipher implementation, called directly (see the top). */
struct fast_cipher {
	OSSL_FUNC_cipher_newctx_fn		*newctx;
	OSSL_FUNC_cipher_freectx_fn		*freectx;
	OSSL_FUNC_cipher_encrypt_init_fn	*einit;
	OSSL_FUNC_cipher_decrypt_init_fn	*dinit;
	OSSL_FUNC_cipher_cipher_fn		*cipher;
	void					*provctx;
	size_t					keylen;
	int					ok;
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static EVP_CIPHER *g_xts, *g_cbc, *g_cts, *g_ecb;
static struct fast_cipher g_fast_xts, g_fast_cbc, g_fast_ecb;

/* Does the ':'-separated name list of a provider algorithm hold name? */
static int names_have(const char *names, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = names; p != NULL; p = strchr(p, ':')) {
		if (*p == ':')
			p++;
		if (strncasecmp(p, name, n) == 0 && (p[n] == '\0' || p[n] == ':'))
			return 1;
	}
	return 0;
}

static void fast_lookup(const EVP_CIPHER *c, const char *name, struct fast_cipher *f)
{
	OSSL_PROVIDER *prov = (OSSL_PROVIDER *)EVP_CIPHER_get0_provider(c);
	const OSSL_ALGORITHM *algs, *a;
	int no_store = 0;

	memset(f, 0, sizeof(*f));
	if (prov == NULL)
		return;
	algs = OSSL_PROVIDER_query_operation(prov, OSSL_OP_CIPHER, &no_store);
	for (a = algs; a != NULL && a->algorithm_names != NULL; a++) {
		if (!names_have(a->algorithm_names, name))
			continue;
		for (const OSSL_DISPATCH *d = a->implementation; d->function_id != 0; d++) {
			switch (d->function_id) {
			case OSSL_FUNC_CIPHER_NEWCTX:
				f->newctx = OSSL_FUNC_cipher_newctx(d);
				break;
			case OSSL_FUNC_CIPHER_FREECTX:
				f->freectx = OSSL_FUNC_cipher_freectx(d);
				break;
			case OSSL_FUNC_CIPHER_ENCRYPT_INIT:
				f->einit = OSSL_FUNC_cipher_encrypt_init(d);
				break;
			case OSSL_FUNC_CIPHER_DECRYPT_INIT:
				f->dinit = OSSL_FUNC_cipher_decrypt_init(d);
				break;
			case OSSL_FUNC_CIPHER_CIPHER:
				f->cipher = OSSL_FUNC_cipher_cipher(d);
				break;
			}
		}
		break;
	}
	if (algs != NULL)
		OSSL_PROVIDER_unquery_operation(prov, OSSL_OP_CIPHER, algs);
	f->provctx = OSSL_PROVIDER_get0_provider_ctx(prov);
	f->keylen = (size_t)EVP_CIPHER_get_key_length(c);
	f->ok = f->newctx && f->freectx && f->einit && f->dinit && f->cipher;
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

/* Reset only the IV/tweak of a keyed EVP context and run one message through it. */
static int run_iv(EVP_CIPHER_CTX *ctx, const uint8_t iv[16], const uint8_t *in,
		  uint8_t *out, size_t len)
{
	int outl;

	if (EVP_CipherInit_ex2(ctx, NULL, NULL, iv, -1, NULL) != 1 ||
	    EVP_CipherUpdate(ctx, out, &outl, in, (int)len) != 1 || (size_t)outl != len)
		return -EIO;
	return 0;
}

static void kctx_free(struct sc_kctx *k)
{
	if (k->prov != NULL)
		((const struct fast_cipher *)k->fast)->freectx(k->prov);	/* cleanses */
	EVP_CIPHER_CTX_free(k->evp);
	memset(k, 0, sizeof(*k));
}

/* Key k for c through the fast path when it is usable, else EVP.  0 or -EIO. */
static int kctx_init(struct sc_kctx *k, const EVP_CIPHER *c, const struct fast_cipher *f,
		     const uint8_t *key, int enc)
{
	memset(k, 0, sizeof(*k));
	k->enc = enc;
	if (f->ok) {
		k->prov = f->newctx(f->provctx);
		if (k->prov == NULL)
			return -EIO;
		k->fast = f;
		if ((enc ? f->einit : f->dinit)(k->prov, key, f->keylen, NULL, 0, NULL) != 1) {
			kctx_free(k);
			return -EIO;
		}
		return 0;
	}
	k->evp = keyed_ctx(c, key, enc, NULL);
	return k->evp != NULL ? 0 : -EIO;
}

/* One message of len bytes under iv.  0 or -EIO. */
static int kctx_run(struct sc_kctx *k, const uint8_t iv[16], const uint8_t *in, uint8_t *out,
		    size_t len)
{
	if (k->prov != NULL) {
		const struct fast_cipher *f = k->fast;
		size_t outl = 0;

		if ((k->enc ? f->einit : f->dinit)(k->prov, NULL, 0, iv, 16, NULL) != 1 ||
		    f->cipher(k->prov, out, &outl, len, in, len) != 1 || outl != len)
			return -EIO;
		return 0;
	}
	return run_iv(k->evp, iv, in, out, len);
}

/* ECB: len bytes (a multiple of 16) through a keyed ECB context.  0 or -EIO. */
static int kctx_ecb(struct sc_kctx *k, const uint8_t *in, uint8_t *out, size_t len)
{
	if (k->prov != NULL) {
		size_t outl = 0;

		if (((const struct fast_cipher *)k->fast)->cipher(k->prov, out, &outl, len, in,
								   len) != 1 || outl != len)
			return -EIO;
		return 0;
	}
	{
		int outl;

		if (EVP_EncryptUpdate(k->evp, out, &outl, in, (int)len) != 1 || (size_t)outl != len)
			return -EIO;
	}
	return 0;
}

/* Both paths must give the same bytes on known data, or the fast one is dropped. */
static void fast_selftest(const EVP_CIPHER *c, struct fast_cipher *f)
{
	uint8_t key[64], iv[16], pt[64], a[64], b[64];
	struct sc_kctx fe, fd, ee, ed;
	struct fast_cipher evp_only = { .ok = 0 };
	int ok;

	if (!f->ok)
		return;
	for (int i = 0; i < 64; i++) {
		key[i] = (uint8_t)(i * 37 + 11);
		pt[i] = (uint8_t)(i * 91 + 3);
	}
	for (int i = 0; i < 16; i++)
		iv[i] = (uint8_t)(i * 53 + 7);
	ok = kctx_init(&fe, c, f, key, 1) == 0 && kctx_init(&fd, c, f, key, 0) == 0 &&
	     kctx_init(&ee, c, &evp_only, key, 1) == 0 && kctx_init(&ed, c, &evp_only, key, 0) == 0;
	/* twice each, so that the per-message IV reset is covered as well */
	for (int round = 0; ok && round < 2; round++) {
		iv[0] ^= (uint8_t)round;
		ok = kctx_run(&fe, iv, pt, a, 64) == 0 && kctx_run(&ee, iv, pt, b, 64) == 0 &&
		     memcmp(a, b, 64) == 0 && memcmp(a, pt, 64) != 0 &&
		     kctx_run(&fd, iv, a, b, 64) == 0 && memcmp(b, pt, 64) == 0 &&
		     kctx_run(&ed, iv, a, b, 64) == 0 && memcmp(b, pt, 64) == 0;
	}
	kctx_free(&fe);
	kctx_free(&fd);
	kctx_free(&ee);
	kctx_free(&ed);
	f->ok = ok;
}

static void fetch_ciphers(void)
{
	const char *evp_only = getenv("SC_CRYPTO_EVP_ONLY");

	g_xts = EVP_CIPHER_fetch(NULL, "AES-256-XTS", NULL);
	g_cbc = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
	g_cts = EVP_CIPHER_fetch(NULL, "AES-256-CBC-CTS", NULL);
	g_ecb = EVP_CIPHER_fetch(NULL, "AES-256-ECB", NULL);
	if (g_xts == NULL || g_cbc == NULL || g_ecb == NULL ||
	    (evp_only != NULL && strcmp(evp_only, "1") == 0))
		return;
	fast_lookup(g_xts, "AES-256-XTS", &g_fast_xts);
	fast_lookup(g_cbc, "AES-256-CBC", &g_fast_cbc);
	fast_lookup(g_ecb, "AES-256-ECB", &g_fast_ecb);
	fast_selftest(g_xts, &g_fast_xts);
	fast_selftest(g_cbc, &g_fast_cbc);
	fast_selftest(g_ecb, &g_fast_ecb);	/* ECB ignores the IV the test passes */
}

/* 1 if XTS and CBC units use the provider fast path, else 0. */
int sc_cipher_fast_path(void)
{
	pthread_once(&g_once, fetch_ciphers);
	return g_fast_xts.ok && g_fast_cbc.ok;
}

static void ctxset_free(struct sc_ctxset *s)
{
	if (s == NULL)
		return;
	/* The provider's freectx and EVP_CIPHER_CTX_free cleanse the key schedules. */
	kctx_free(&s->enc);
	kctx_free(&s->dec);
	kctx_free(&s->ecb);
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
		if (kctx_init(&s->enc, g_xts, &g_fast_xts, k->data, 1) != 0 ||
		    kctx_init(&s->dec, g_xts, &g_fast_xts, k->data, 0) != 0)
			goto err_free_set;
		return s;
	case SC_CIPHER_AES_CBC:
		if (kctx_init(&s->enc, g_cbc, &g_fast_cbc, k->data, 1) != 0 ||
		    kctx_init(&s->dec, g_cbc, &g_fast_cbc, k->data, 0) != 0 ||
		    kctx_init(&s->ecb, g_ecb, &g_fast_ecb, k->data, 1) != 0)
			goto err_free_set;
		s->essiv = keyed_ctx(g_ecb, k->essiv, 1, NULL);
		if (s->essiv == NULL)
			goto err_free_set;
		return s;
	case SC_CIPHER_AES_GCM:	/* not length-preserving: sc_gkey's, never here */
		break;
	}
err_free_set:
	ctxset_free(s);
	return NULL;
}

static struct sc_pool_link *ctxset_make(const void *keys)
{
	struct sc_ctxset *s = ctxset_new(keys);

	return s != NULL ? &s->link : NULL;
}

static void ctxset_drop(struct sc_pool_link *l)
{
	ctxset_free((struct sc_ctxset *)l);
}

/* 0, -ENOMEM, or -EIO (OpenSSL refused the key, e.g. XTS halves equal). */
int sc_ctxpool_init(struct sc_ctxpool *pool, const struct sc_keys *keys)
{
	pthread_once(&g_once, fetch_ciphers);
	if (g_xts == NULL || g_cbc == NULL || g_cts == NULL || g_ecb == NULL)
		return -EIO;
	pool->keys = keys;
	return sc_pool_init(&pool->pool, ctxset_make, ctxset_drop, keys);
}

void sc_ctxpool_destroy(struct sc_ctxpool *pool)
{
	sc_pool_destroy(&pool->pool);
}

/* A keyed set, or NULL when a new one could not be made. */
struct sc_ctxset *sc_ctxpool_get(struct sc_ctxpool *pool)
{
	return (struct sc_ctxset *)sc_pool_get(&pool->pool);
}

void sc_ctxpool_put(struct sc_ctxpool *pool, struct sc_ctxset *s)
{
	sc_pool_put(&pool->pool, &s->link);
}

/* ---- transforms ---- */

static void le128(uint8_t out[16], uint64_t idx)
{
	sc_le64(out, idx);
	memset(out + 8, 0, 8);
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
		return kctx_run(enc ? &s->enc : &s->dec, iv, in, out, len);
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

/*
 * CBC encryption of `lanes` whole units side by side (see the top): row j
 * holds block j of every unit XORed with that unit's chaining value (its
 * IV, then its previous ciphertext block) and goes through one ECB call.
 * in == out works: a block is read before its ciphertext is written.
 */
static int cbc_enc_lanes(struct sc_ctxset *s, const uint8_t (*ivs)[16], const uint8_t *in,
			 uint8_t *out, size_t unit_len, size_t lanes)
{
	uint8_t row[CBC_LANES][16];
	int ret = 0;

	for (size_t off = 0; off < unit_len && ret == 0; off += 16) {
		for (size_t l = 0; l < lanes; l++) {
			const uint8_t *chain = off == 0 ? ivs[l] : out + l * unit_len + off - 16;
			const uint8_t *p = in + l * unit_len + off;
			uint64_t a, b, c, d;

			memcpy(&a, p, 8);
			memcpy(&b, p + 8, 8);
			memcpy(&c, chain, 8);
			memcpy(&d, chain + 8, 8);
			a ^= c;
			b ^= d;
			memcpy(row[l], &a, 8);
			memcpy(row[l] + 8, &b, 8);
		}
		ret = kctx_ecb(&s->ecb, row[0], row[0], 16 * lanes);
		for (size_t l = 0; l < lanes && ret == 0; l++)
			memcpy(out + l * unit_len + off, row[l], 16);
	}
	OPENSSL_cleanse(row, sizeof(row));
	return ret;
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
		struct sc_kctx *k = enc ? &s->enc : &s->dec;

		for (size_t i = 0; i < n && ret == 0; i++) {
			le128(ivs[0], first + i);
			ret = kctx_run(k, ivs[0], in + i * unit_len, out + i * unit_len, unit_len);
		}
		return ret;
	}
	case SC_CIPHER_AES_CBC:
		for (size_t done = 0; done < n && ret == 0; ) {
			size_t batch = n - done < ESSIV_BATCH ? n - done : ESSIV_BATCH;

			ret = essiv_ivs(s, first + done, ivs, batch);
			for (size_t i = 0; i < batch && ret == 0; ) {
				size_t o = (done + i) * unit_len, lanes = batch - i;

				if (lanes > CBC_LANES)
					lanes = CBC_LANES;
				if (enc && lanes >= 2 && unit_len % 16 == 0) {
					ret = cbc_enc_lanes(s, ivs + i, in + o, out + o, unit_len, lanes);
					i += lanes;
				} else {
					ret = sc_cbc_msg(pool, s, ivs[i], in + o, out + o, unit_len, enc);
					i++;
				}
			}
			done += batch;
		}
		return ret;
	case SC_CIPHER_AES_GCM:
		break;
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
