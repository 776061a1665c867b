/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kdf.c - key derivation: HKDF-SHA256 and HMAC-SHA256 for every derived
 * key (labels in kdf_labels_i.h), scrypt and Argon2id for password-based
 * KEKs.  All through OpenSSL 3 EVP_KDF / EVP_MAC but Argon2id, which
 * OpenSSL 3.0 lacks: libargon2, the reference implementation; the algorithm objects are fetched
 * once per process because a fetch is a locked name lookup in the
 * provider store, too slow to repeat on every file open.  So is the
 * digest a context is told by name ("SHA256"): HMAC contexts are
 * duplicated from a template that already holds it, and HKDF is
 * composed of such HMACs (OpenSSL 3.0's HKDF context has no dup).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <argon2.h>
#include "crypto_i.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static EVP_KDF *g_scrypt;
static EVP_MAC *g_hmac;
/* A keyless HMAC context told the digest once; only ever duplicated. */
static EVP_MAC_CTX *g_hmac_tmpl;

static void fetch_algs(void)
{
	OSSL_PARAM params[2];

	g_scrypt = EVP_KDF_fetch(NULL, "SCRYPT", NULL);
	g_hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	if (g_hmac) {
		g_hmac_tmpl = EVP_MAC_CTX_new(g_hmac);
		if (g_hmac_tmpl && EVP_MAC_CTX_set_params(g_hmac_tmpl, params) != 1) {
			EVP_MAC_CTX_free(g_hmac_tmpl);
			g_hmac_tmpl = NULL;
		}
	}
}

/*
 * HKDF-SHA256 (RFC 5869), extract and expand, composed of HMACs on
 * contexts duplicated from the digest template.  OpenSSL 3.0's HKDF
 * context fetches SHA-256 by name at every derive and cannot be
 * duplicated; a file key is derived at every create and first open, so
 * that fetch was most of a create's instructions (docs/performance.md
 * 14.2).  The RFC 5869 vectors and a comparison with OpenSSL's own HKDF
 * (tests/crypto/test_kat.c) pin the output.  0, -EINVAL (out_len above
 * 255 blocks, as the RFC bounds it), -ENOMEM or -EIO.
 */
int sc_hkdf_sha256(const void *ikm, size_t ikm_len, const void *salt, size_t salt_len,
		   const void *info, size_t info_len, void *out, size_t out_len)
{
	static const uint8_t zero_salt[32];
	uint8_t prk[32], t[32];
	uint8_t *o = out;
	EVP_MAC_CTX *mctx;
	size_t outl, n, done = 0;
	unsigned int i;
	int ret = -EIO;

	if (out_len > 255 * sizeof(t))
		return -EINVAL;
	pthread_once(&g_once, fetch_algs);
	if (g_hmac_tmpl == NULL)
		return -EIO;
	mctx = EVP_MAC_CTX_dup(g_hmac_tmpl);
	if (mctx == NULL)
		return -ENOMEM;
	/* Extract: PRK = HMAC(salt, IKM); no salt is HashLen zero bytes. */
	if (salt == NULL || salt_len == 0) {
		salt = zero_salt;
		salt_len = sizeof(zero_salt);
	}
	outl = 0;
	if (EVP_MAC_init(mctx, salt, salt_len, NULL) != 1 ||
	    EVP_MAC_update(mctx, ikm, ikm_len) != 1 ||
	    EVP_MAC_final(mctx, prk, &outl, sizeof(prk)) != 1 || outl != sizeof(prk))
		goto out_free_ctx;
	/* Expand: T(i) = HMAC(PRK, T(i-1) | info | i), under one key set-up. */
	if (EVP_MAC_init(mctx, prk, sizeof(prk), NULL) != 1)
		goto out_free_ctx;
	for (i = 1; done < out_len; i++) {
		uint8_t ctr = (uint8_t)i;

		outl = 0;
		if ((i > 1 && (EVP_MAC_init(mctx, NULL, 0, NULL) != 1 ||
			       EVP_MAC_update(mctx, t, sizeof(t)) != 1)) ||
		    (info_len > 0 && EVP_MAC_update(mctx, info, info_len) != 1) ||
		    EVP_MAC_update(mctx, &ctr, 1) != 1 ||
		    EVP_MAC_final(mctx, t, &outl, sizeof(t)) != 1 || outl != sizeof(t))
			goto out_free_ctx;
		n = out_len - done < sizeof(t) ? out_len - done : sizeof(t);
		memcpy(o + done, t, n);
		done += n;
	}
	ret = 0;
out_free_ctx:
	EVP_MAC_CTX_free(mctx);		/* cleanses its copy of the keys */
	OPENSSL_cleanse(prk, sizeof(prk));
	OPENSSL_cleanse(t, sizeof(t));
	if (ret != 0)
		OPENSSL_cleanse(out, out_len);
	return ret;
}

/* HMAC-SHA256.  0, -ENOMEM or -EIO. */
int sc_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
		   uint8_t out[32])
{
	EVP_MAC_CTX *mctx;
	size_t outl = 0;
	int ret = -EIO;

	pthread_once(&g_once, fetch_algs);
	if (g_hmac_tmpl == NULL)
		return -EIO;
	mctx = EVP_MAC_CTX_dup(g_hmac_tmpl);
	if (mctx == NULL)
		return -ENOMEM;
	if (EVP_MAC_init(mctx, key, key_len, NULL) == 1 &&
	    EVP_MAC_update(mctx, msg, msg_len) == 1 &&
	    EVP_MAC_final(mctx, out, &outl, 32) == 1 && outl == 32)
		ret = 0;
	EVP_MAC_CTX_free(mctx);
	return ret;
}

/*
 * A context keyed for HMAC-SHA256 with key, to be duplicated per MAC
 * (sc_hmac_sha256_dup): a MAC on a hot path then costs no algorithm fetch
 * and no key setup.  NULL on failure.
 */
EVP_MAC_CTX *sc_hmac_sha256_keyed(const void *key, size_t key_len)
{
	EVP_MAC_CTX *mctx;

	pthread_once(&g_once, fetch_algs);
	if (g_hmac_tmpl == NULL)
		return NULL;
	mctx = EVP_MAC_CTX_dup(g_hmac_tmpl);
	if (mctx == NULL)
		return NULL;
	if (EVP_MAC_init(mctx, key, key_len, NULL) != 1) {
		EVP_MAC_CTX_free(mctx);
		return NULL;
	}
	return mctx;
}

/* HMAC-SHA256 of msg under the key tmpl was made with (untouched).  0, -ENOMEM or -EIO. */
int sc_hmac_sha256_dup(const EVP_MAC_CTX *tmpl, const void *msg, size_t msg_len,
		       uint8_t out[32])
{
	EVP_MAC_CTX *mctx = EVP_MAC_CTX_dup(tmpl);
	size_t outl = 0;
	int ret = -EIO;

	if (mctx == NULL)
		return -ENOMEM;
	if (EVP_MAC_update(mctx, msg, msg_len) == 1 &&
	    EVP_MAC_final(mctx, out, &outl, 32) == 1 && outl == 32)
		ret = 0;
	EVP_MAC_CTX_free(mctx);
	return ret;
}

/*
 * HMAC-SHA256 of msg in ctx, a context keyed once (sc_hmac_sha256_keyed)
 * and used before or not: init without a key restarts it under the same
 * key, which costs a digest-state copy, where a dup of the template also
 * allocates a context and takes references on the algorithm objects that
 * every thread shares.  The caller owns ctx exclusively for the call.
 * 0 or -EIO.
 */
int sc_hmac_sha256_reuse(EVP_MAC_CTX *ctx, const void *msg, size_t msg_len, uint8_t out[32])
{
	size_t outl = 0;

	if (EVP_MAC_init(ctx, NULL, 0, NULL) == 1 &&
	    EVP_MAC_update(ctx, msg, msg_len) == 1 &&
	    EVP_MAC_final(ctx, out, &outl, 32) == 1 && outl == 32)
		return 0;
	return -EIO;
}

/*
 * scrypt (RFC 7914).  0, -EINVAL (parameters above the SC_SCRYPT_*_MAX
 * bounds: refused before anything is allocated), -ENOMEM (allocation) or -EIO.
 */
int sc_scrypt(const void *pass, size_t pass_len, const void *salt, size_t salt_len,
	      uint64_t n, uint32_t r, uint32_t p, void *out, size_t out_len)
{
	OSSL_PARAM params[7], *q = params;
	EVP_KDF_CTX *kctx;
	/* scrypt needs 128*r*N (V) + 128*r*p (B) bytes; OpenSSL's default
	 * ceiling is 32 MiB, too low for N=2^16 r=8 (64 MiB).  Allow what the
	 * parameters need plus slack, and let allocation failure say -ENOMEM. */
	uint64_t maxmem = 128ull * r * (n + p) + (1u << 20);
	int ret = -EIO;

	if (n > SC_SCRYPT_N_MAX || r > 1024 || p > 1024 ||
	    128ull * r * n > SC_SCRYPT_MEM_MAX || n * r * p > SC_SCRYPT_WORK_MAX)
		return -EINVAL;
	pthread_once(&g_once, fetch_algs);
	if (g_scrypt == NULL)
		return -EIO;
	kctx = EVP_KDF_CTX_new(g_scrypt);
	if (kctx == NULL)
		return -ENOMEM;
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD, (void *)pass, pass_len);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, salt_len);
	*q++ = OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n);
	*q++ = OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r);
	*q++ = OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &p);
	*q++ = OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &maxmem);
	*q = OSSL_PARAM_construct_end();
	if (EVP_KDF_derive(kctx, out, out_len, params) == 1)
		ret = 0;
	EVP_KDF_CTX_free(kctx);
	return ret;
}

/*
 * Argon2id (RFC 9106) through libargon2, version 0x13.  The bounds are
 * the config's (sc_slot_cost_check), checked again here so that no caller
 * can make it allocate more.  0, -EINVAL, -ENOMEM or -EIO.
 */
int sc_argon2id(const void *pass, size_t pass_len, const void *salt, size_t salt_len,
		uint32_t t, uint32_t m, uint32_t p, void *out, size_t out_len)
{
	int r;

	if (t < 1 || t > SC_ARGON2_T_MAX || m < SC_ARGON2_M_MIN || m > SC_ARGON2_M_MAX ||
	    p < 1 || p > SC_ARGON2_P_MAX || (uint64_t)t * m > SC_ARGON2_WORK_MAX ||
	    pass_len > UINT32_MAX || salt_len > UINT32_MAX || out_len > UINT32_MAX)
		return -EINVAL;
	r = argon2id_hash_raw(t, m, p, pass, pass_len, salt, salt_len, out, out_len);
	if (r == ARGON2_OK)
		return 0;
	OPENSSL_cleanse(out, out_len);
	return r == ARGON2_MEMORY_ALLOCATION_ERROR ? -ENOMEM : -EIO;
}
