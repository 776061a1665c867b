/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gcm.c - data units of the authenticated format (docs/format.md section
 * 10): a file's AES-256-GCM key, sealing plaintext into stored units
 * (random 16-byte nonce || ciphertext || 16-byte tag) and opening them,
 * and the hole rule (a whole unit of zeros is a hole only in a file whose
 * header allows holes: sc_gkey_holes_ok).
 *
 * Keys: file key = HKDF-SHA256(master key, salt = the header's file id,
 * "stackcrypt/v2 gcm-file-key").  A per-file key divides the nonce
 * birthday bound among files (section 10.4).
 *
 * Associated data of unit i: the header's 24 authenticated bytes (magic,
 * version, unit size, flags with SC_GHDR_F_HOLES clear, file id) || LE64(i);
 * HOLES is left out so that a file's first hole rewrites its header alone.
 * Version 2 headers (integrity volumes, format.md 11.3; sc_gkey_new_v2)
 * leave every flag out and take their key from the integ-file-key label.  A unit moved to another
 * index, copied from another file or from a file of another format version
 * fails its tag (and a unit of another file also has another key).
 *
 * Contexts: EVP_CIPHER_fetch runs once per process; each gkey keeps a pool
 * (pool.c, the one fkey.c's sets use too) of context pairs keyed once with
 * its key, so a
 * unit costs one IV reset, two updates and the final, with no key schedule
 * and no GHASH table setup.
 *
 * Nonces: from the kernel's CSPRNG (getrandom), drawn NONCE_CACHE units'
 * worth at a time into a per-thread cache: one getrandom per 4 KiB unit
 * costs about 0.5 us and RAND_bytes about 1.3 us, against 1.8 us for
 * sealing the unit itself (docs/format.md 10.8).  Nonces need to be unique,
 * not secret, so caching them is safe as long as no two processes consume
 * the same cache: a fork() copies the parent's cache into the child, so a
 * fork handler bumps a generation number and a cache from an older
 * generation is dropped before use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "crypto_i.h"
#include "kdf_labels_i.h"

#define GCM_KEY_LEN	32
#define AAD_LEN		(SC_GHDR_AUTH_LEN + 8)
#define NONCE_CACHE	64	/* nonces per getrandom call and per-thread cache */

_Static_assert(AAD_LEN == 32, "AAD is two GHASH blocks");
_Static_assert(SC_GCM_OVERHEAD == 32, "nonce 16 + tag 16");

struct gset {
	struct sc_pool_link	link;		/* first: pooled (pool.c) */
	EVP_CIPHER_CTX		*enc, *dec;
};

struct sc_gkey {
	uint8_t			*key;		/* GCM_KEY_LEN, sc_secure_alloc */
	uint32_t		bs;
	uint8_t			auth[SC_GHDR_AUTH_LEN];	/* header bytes 0..23, HOLES clear */
	bool			holes_ok;	/* atomic: zero units are holes */
	struct sc_pool		pool;		/* of struct gset keyed with key */
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static EVP_CIPHER *g_gcm;
static unsigned long g_fork_gen;	/* bumped in every child of a fork() */

static void forked_child(void)
{
	__atomic_add_fetch(&g_fork_gen, 1, __ATOMIC_RELAXED);
}

static void fetch_gcm(void)
{
	g_gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
	pthread_atfork(NULL, NULL, forked_child);
}

/* Per-thread nonce cache: used[] nonces of buf are spent. */
static __thread struct {
	uint8_t		buf[NONCE_CACHE][SC_GCM_NONCE_LEN];
	unsigned	used;		/* NONCE_CACHE: empty */
	unsigned long	gen;		/* g_fork_gen when filled */
	bool		filled;
} t_nonces;

/* A fresh random nonce into out.  0 or -EIO. */
static int next_nonce(uint8_t out[SC_GCM_NONCE_LEN])
{
	unsigned long gen = __atomic_load_n(&g_fork_gen, __ATOMIC_RELAXED);

	if (!t_nonces.filled || t_nonces.used == NONCE_CACHE || t_nonces.gen != gen) {
		int ret = sc_random(t_nonces.buf, sizeof(t_nonces.buf));

		if (ret != 0)
			return ret;
		t_nonces.used = 0;
		t_nonces.gen = gen;
		t_nonces.filled = true;
	}
	memcpy(out, t_nonces.buf[t_nonces.used], SC_GCM_NONCE_LEN);
	/* never handed out twice, even if the bookkeeping were wrong */
	memset(t_nonces.buf[t_nonces.used++], 0, SC_GCM_NONCE_LEN);
	return 0;
}

/* A context for one direction, keyed, with 16-byte IVs.  NULL on failure. */
static EVP_CIPHER_CTX *gcm_ctx(const uint8_t *key, int enc)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	if (ctx == NULL)
		return NULL;
	/* The IV length must be set before the key and IV (OpenSSL's order). */
	if (EVP_CipherInit_ex2(ctx, g_gcm, NULL, NULL, enc, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, SC_GCM_NONCE_LEN, NULL) != 1 ||
	    EVP_CipherInit_ex2(ctx, NULL, key, NULL, enc, NULL) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static void gset_free(struct gset *s)
{
	if (s == NULL)
		return;
	EVP_CIPHER_CTX_free(s->enc);	/* cleanses the key schedule */
	EVP_CIPHER_CTX_free(s->dec);
	free(s);
}

static struct gset *gset_new(const uint8_t *key)
{
	struct gset *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->enc = gcm_ctx(key, 1);
	s->dec = gcm_ctx(key, 0);
	if (s->enc == NULL || s->dec == NULL) {
		gset_free(s);
		return NULL;
	}
	return s;
}

static struct sc_pool_link *gset_make(const void *key)
{
	struct gset *s = gset_new(key);

	return s != NULL ? &s->link : NULL;
}

static void gset_drop(struct sc_pool_link *l)
{
	gset_free((struct gset *)l);
}

static struct gset *gset_get(struct sc_gkey *gk)
{
	return (struct gset *)sc_pool_get(&gk->pool);
}

static void gset_put(struct sc_gkey *gk, struct gset *s)
{
	sc_pool_put(&gk->pool, &s->link);
}

/* A gkey with its locked key buffer, nothing derived yet.  0, -ENOMEM or -EIO. */
static int gkey_alloc(struct sc_gkey **out)
{
	struct sc_gkey *gk;

	pthread_once(&g_once, fetch_gcm);
	if (g_gcm == NULL)
		return -EIO;
	gk = calloc(1, sizeof(*gk));
	if (gk == NULL)
		return -ENOMEM;
	gk->key = sc_secure_alloc(GCM_KEY_LEN);
	if (gk->key == NULL) {
		free(gk);
		return -ENOMEM;
	}
	*out = gk;
	return 0;
}

/*
 * gk's key is derived (ret 0) and its fields set: keys one context set
 * now, so that an OpenSSL failure shows at open, not on a read.  Frees gk
 * on failure.  0 or -errno.
 */
static int gkey_ready(struct sc_gkey *gk, int ret, struct sc_gkey **out)
{
	if (ret == 0)
		ret = sc_pool_init(&gk->pool, gset_make, gset_drop, gk->key);
	if (ret != 0) {
		sc_secure_free(gk->key, GCM_KEY_LEN);
		free(gk);
		return ret;
	}
	*out = gk;
	return 0;
}

/* Verifies the header, derives the file key, keys one context set.  0 or -errno. */
int sc_gkey_new(const struct sc_mkey *mk, const void *hdr, size_t len, struct sc_gkey **out)
{
	uint8_t file_id[SC_GCM_FILE_ID_LEN];
	struct sc_gkey *gk;
	int ret;

	ret = sc_ghdr_verify(mk, hdr, len, file_id);
	if (ret == 0)
		ret = gkey_alloc(&gk);
	if (ret != 0)
		return ret;
	ret = sc_hkdf_sha256(sc_mkey_master(mk), SC_MASTER_KEY_LEN, file_id, sizeof(file_id),
			     SC_LABEL_GCM_FILE_KEY, strlen(SC_LABEL_GCM_FILE_KEY),
			     gk->key, GCM_KEY_LEN);
	gk->bs = sc_mkey_block_size(mk);
	memcpy(gk->auth, hdr, sizeof(gk->auth));
	gk->auth[6] &= (uint8_t)~SC_GHDR_F_HOLES;
	gk->holes_ok = !(sc_ghdr_flags(hdr) & SC_GHDR_F_TRACKS) ||
		       (sc_ghdr_flags(hdr) & SC_GHDR_F_HOLES);
	return gkey_ready(gk, ret, out);
}

/*
 * A version 2 header (format.md 11.3): verified under ik into *h, the key
 * from the integ-file-key label, and every unit's associated data its
 * bytes 0..23 with all flags zeroed (sc_ihdr_aad).  0 or -errno.
 */
int sc_gkey_new_v2(const struct sc_ikey *ik, const void *hdr, size_t len, struct sc_ihdr *h,
		   struct sc_gkey **out)
{
	struct sc_gkey *gk;
	int ret;

	ret = sc_ihdr_verify(ik, hdr, len, h);
	if (ret == 0)
		ret = gkey_alloc(&gk);
	if (ret != 0)
		return ret;
	ret = sc_integ_file_key(ik, h->file_id, gk->key);
	gk->bs = 1u << ((const uint8_t *)hdr)[5];	/* verified: the volume's */
	memcpy(gk->auth, hdr, sizeof(gk->auth));
	gk->auth[6] = gk->auth[7] = 0;
	gk->holes_ok = (h->flags & SC_IHDR_F_HOLES) != 0;
	return gkey_ready(gk, ret, out);
}

void sc_gkey_free(struct sc_gkey *gk)
{
	if (gk == NULL)
		return;
	sc_pool_destroy(&gk->pool);
	sc_secure_free(gk->key, GCM_KEY_LEN);
	free(gk);
}

uint32_t sc_gkey_block_size(const struct sc_gkey *gk)
{
	return gk->bs;
}

/* The 16-byte file id of the (verified) header the gkey was made from. */
const uint8_t *sc_gkey_file_id(const struct sc_gkey *gk)
{
	return gk->auth + 8;
}

bool sc_gkey_holes_ok(const struct sc_gkey *gk)
{
	return __atomic_load_n(&gk->holes_ok, __ATOMIC_RELAXED);
}

void sc_gkey_allow_holes(struct sc_gkey *gk)
{
	__atomic_store_n(&gk->holes_ok, true, __ATOMIC_RELAXED);
}

static void unit_aad(const struct sc_gkey *gk, uint64_t idx, uint8_t aad[AAD_LEN])
{
	memcpy(aad, gk->auth, SC_GHDR_AUTH_LEN);
	sc_le64(aad + SC_GHDR_AUTH_LEN, idx);
}

/* One unit: pt (len bytes) -> out = nonce || ct || tag.  0 or -EIO. */
static int seal_one(const struct sc_gkey *gk, EVP_CIPHER_CTX *ctx, uint64_t idx,
		    const uint8_t nonce[SC_GCM_NONCE_LEN], const uint8_t *pt, size_t len,
		    uint8_t *out)
{
	uint8_t aad[AAD_LEN];
	uint8_t *ct = out + SC_GCM_NONCE_LEN;
	int outl, fl;

	memcpy(out, nonce, SC_GCM_NONCE_LEN);
	unit_aad(gk, idx, aad);
	if (EVP_CipherInit_ex2(ctx, NULL, NULL, nonce, -1, NULL) != 1 ||
	    EVP_CipherUpdate(ctx, NULL, &outl, aad, AAD_LEN) != 1 ||
	    EVP_CipherUpdate(ctx, ct, &outl, pt, (int)len) != 1 ||
	    EVP_CipherFinal_ex(ctx, ct + outl, &fl) != 1 || (size_t)(outl + fl) != len ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, SC_GCM_TAG_LEN, ct + len) != 1)
		return -EIO;
	return 0;
}

/* One stored unit of len >= 33 bytes -> out (len - 32).  0, -EBADMSG or -EIO. */
static int open_one(const struct sc_gkey *gk, EVP_CIPHER_CTX *ctx, uint64_t idx,
		    const uint8_t *in, size_t len, uint8_t *out)
{
	uint8_t aad[AAD_LEN], tag[SC_GCM_TAG_LEN];
	size_t plen = len - SC_GCM_OVERHEAD;
	int outl, fl;

	unit_aad(gk, idx, aad);
	/* A copy: EVP takes the tag through a non-const pointer. */
	memcpy(tag, in + len - SC_GCM_TAG_LEN, sizeof(tag));
	if (EVP_CipherInit_ex2(ctx, NULL, NULL, in, -1, NULL) != 1 ||
	    EVP_CipherUpdate(ctx, NULL, &outl, aad, AAD_LEN) != 1 ||
	    EVP_CipherUpdate(ctx, out, &outl, in + SC_GCM_NONCE_LEN, (int)plen) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, SC_GCM_TAG_LEN, tag) != 1) {
		sc_wipe(out, plen);
		return -EIO;
	}
	if (EVP_CipherFinal_ex(ctx, out + outl, &fl) != 1) {
		sc_wipe(out, plen);	/* unauthenticated plaintext never leaves */
		return -EBADMSG;
	}
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

bool sc_gcm_is_hole(const void *unit, size_t len, uint32_t bs)
{
	return len == (size_t)bs + SC_GCM_OVERHEAD && all_zero(unit, len);
}

static bool index_ok(uint64_t first, uint64_t n)
{
	return first <= SC_GCM_UNIT_MAX && n <= SC_GCM_UNIT_MAX - first + 1;
}

/*
 * Seals len bytes from unit first; nonces: 16 bytes per unit, or NULL to
 * draw them.  0, -EINVAL, -ENOMEM or -EIO.
 */
static int seal_range(struct sc_gkey *gk, uint64_t first, const uint8_t *pt, size_t len,
		      uint8_t *out, const uint8_t *nonces)
{
	uint8_t fresh[SC_GCM_NONCE_LEN];
	size_t bs = gk->bs, n = (len + bs - 1) / bs;
	struct gset *s;
	int ret = 0;

	if (len == 0 || !index_ok(first, n))
		return -EINVAL;
	s = gset_get(gk);
	if (s == NULL)
		return -ENOMEM;
	for (size_t u = 0; u < n && ret == 0; u++) {
		size_t ulen = u + 1 < n ? bs : len - u * bs;
		const uint8_t *nonce;

		if (nonces != NULL) {
			nonce = nonces + u * SC_GCM_NONCE_LEN;
		} else {
			ret = next_nonce(fresh);
			if (ret != 0)
				break;
			nonce = fresh;
		}
		ret = seal_one(gk, s->enc, first + u, nonce, pt + u * bs, ulen,
			       out + u * (bs + SC_GCM_OVERHEAD));
	}
	gset_put(gk, s);
	return ret;
}

/* 0, -EINVAL, -ENOMEM or -EIO. */
int sc_gcm_seal(struct sc_gkey *gk, uint64_t first, const void *pt, size_t len, void *out)
{
	return seal_range(gk, first, pt, len, out, NULL);
}

/* The nonces given (crypto_i.h: vectors, reverse.c).  As sc_gcm_seal. */
int sc_gcm_seal_nonces(struct sc_gkey *gk, uint64_t first, const void *pt, size_t len,
		       void *out, const uint8_t *nonces)
{
	return seal_range(gk, first, pt, len, out, nonces);
}

/* The plaintext length, or -EBADMSG/-EUCLEAN (*bad = the unit), -EINVAL, -ENOMEM, -EIO. */
int sc_gcm_open(struct sc_gkey *gk, uint64_t first, const void *in, size_t in_len, void *out,
		uint64_t *bad)
{
	const uint8_t *src = in;
	uint8_t *dst = out;
	size_t sbs = (size_t)gk->bs + SC_GCM_OVERHEAD, n = (in_len + sbs - 1) / sbs;
	size_t plain = 0;
	struct gset *s;
	int ret = 0;

	if (!index_ok(first, n) || in_len > (size_t)INT32_MAX)
		return -EINVAL;
	if (in_len == 0)
		return 0;
	s = gset_get(gk);
	if (s == NULL)
		return -ENOMEM;
	for (size_t u = 0; u < n; u++) {
		size_t slen = u + 1 < n ? sbs : in_len - u * sbs;
		const uint8_t *unit = src + u * sbs;
		uint8_t *pt = dst + u * gk->bs;

		if (slen <= SC_GCM_OVERHEAD) {	/* ends in a nonce or tag: truncated */
			ret = -EBADMSG;
		} else if (sc_gcm_is_hole(unit, slen, gk->bs)) {
			/* one flag load, only for a unit that is all zeros (the test
			 * stops at the first non-zero byte, the random nonce's) */
			if (sc_gkey_holes_ok(gk))
				memset(pt, 0, gk->bs);
			else
				ret = -EUCLEAN;
		} else {
			ret = open_one(gk, s->dec, first + u, unit, slen, pt);
		}
		if (ret != 0) {
			if (bad != NULL)
				*bad = first + u;
			break;
		}
		plain += slen - SC_GCM_OVERHEAD;
	}
	gset_put(gk, s);
	return ret != 0 ? ret : (int)plain;
}
