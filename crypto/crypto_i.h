/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crypto_i.h - private interfaces between the files of crypto/ (and its
 * tests, which use them to run known-answer vectors against the exact code
 * paths the public API takes).  Nothing outside crypto/ and tests/crypto/
 * includes this.
 */
#ifndef SC_CRYPTO_I_H
#define SC_CRYPTO_I_H

#include <pthread.h>
#include <sys/types.h>
#include <openssl/evp.h>
#include "sc_crypto.h"
#include "hdr_i.h"

/* ---- kdf.c ---- */

/* HKDF-SHA256 (extract and expand).  salt may be NULL/0.  0 or -EIO. */
int sc_hkdf_sha256(const void *ikm, size_t ikm_len, const void *salt, size_t salt_len,
		   const void *info, size_t info_len, void *out, size_t out_len);
/* HMAC-SHA256.  0 or -EIO. */
int sc_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
		   uint8_t out[32]);
EVP_MAC_CTX *sc_hmac_sha256_keyed(const void *key, size_t key_len);
int sc_hmac_sha256_dup(const EVP_MAC_CTX *tmpl, const void *msg, size_t msg_len,
		       uint8_t out[32]);
int sc_hmac_sha256_reuse(EVP_MAC_CTX *ctx, const void *msg, size_t msg_len, uint8_t out[32]);
/* scrypt via EVP_KDF "SCRYPT"; no range policy here (config.c has it).  0, -ENOMEM or -EIO. */
int sc_scrypt(const void *pass, size_t pass_len, const void *salt, size_t salt_len,
	      uint64_t n, uint32_t r, uint32_t p, void *out, size_t out_len);
/* sc_argon2id is public (sc_crypto.h): stackcrypt speed times it. */

/* ---- pool.c: the pool of keyed context sets (both contents formats) ---- */

/* The first member of every pooled set. */
struct sc_pool_link {
	struct sc_pool_link	*next;		/* free list */
};

/* Keyed sets for one file; get/put are thread safe. */
struct sc_pool {
	pthread_mutex_t		lock;		/* guards free, nfree */
	struct sc_pool_link	*free;
	unsigned		nfree;
	/* A new set keyed from key (NULL on failure), and its end (cleanses it). */
	struct sc_pool_link	*(*make)(const void *key);
	void			(*drop)(struct sc_pool_link *set);
	const void		*key;		/* owned by the caller, outlives the pool */
};

/* Keys one set up front, so key errors show at open: 0, -ENOMEM or -EIO. */
int sc_pool_init(struct sc_pool *p, struct sc_pool_link *(*make)(const void *key),
		 void (*drop)(struct sc_pool_link *set), const void *key);
void sc_pool_destroy(struct sc_pool *p);
/* A keyed set for this call, or NULL (out of memory / OpenSSL failure). */
struct sc_pool_link *sc_pool_get(struct sc_pool *p);
void sc_pool_put(struct sc_pool *p, struct sc_pool_link *set);

/* ---- cipher.c: keyed contexts and data-unit transforms ---- */

/* A file's key material (lives in sc_secure_alloc memory). */
struct sc_keys {
	enum sc_cipher_id	cipher;
	uint8_t			data[64];	/* XTS: key1|key2; CBC: first 32 */
	uint8_t			essiv[32];	/* CBC only */
	uint8_t			tiny[32];	/* files shorter than 16 bytes */
};

/*
 * A context keyed once that changes only its IV/tweak per message: either
 * OpenSSL's provider implementation called through its dispatch table
 * (the fast path, see cipher.c) or a plain EVP_CIPHER_CTX.
 */
struct sc_kctx {
	void			*prov;		/* provider cipher context, or NULL */
	const void		*fast;		/* its dispatch table (cipher.c) */
	EVP_CIPHER_CTX		*evp;		/* the EVP path when prov == NULL */
	int			enc;
};

/* One thread's set of contexts, all keyed once from sc_keys. */
struct sc_ctxset {
	struct sc_pool_link	link;		/* first: pooled (pool.c) */
	struct sc_kctx		enc, dec;	/* XTS, or CBC without padding */
	struct sc_kctx		ecb;		/* CBC: AES-256-ECB encrypt, data key (interleaved CBC) */
	EVP_CIPHER_CTX		*cts_enc, *cts_dec; /* CBC-CTS (CS3), keyed on first use */
	EVP_CIPHER_CTX		*essiv;		/* AES-256-ECB encrypt, CBC only */
	EVP_CIPHER_CTX		*tiny;		/* AES-256-ECB encrypt, keyed on first use */
};

/* Keyed context sets for one file (a struct sc_pool of struct sc_ctxset). */
struct sc_ctxpool {
	struct sc_pool		pool;
	const struct sc_keys	*keys;		/* owned by the caller, outlives the pool */
};

/* 0 or -ENOMEM/-EIO (keys one set up front so key errors show at open). */
int sc_ctxpool_init(struct sc_ctxpool *pool, const struct sc_keys *keys);
void sc_ctxpool_destroy(struct sc_ctxpool *pool);
/* A keyed set for this call, or NULL (out of memory / OpenSSL failure). */
struct sc_ctxset *sc_ctxpool_get(struct sc_ctxpool *pool);
void sc_ctxpool_put(struct sc_ctxpool *pool, struct sc_ctxset *set);

/*
 * n contiguous whole units of unit_len bytes (a multiple of 16... or any
 * length >= 16), unit indices first, first+1, ...  enc: 1 encrypt, 0
 * decrypt.  in == out or disjoint.  0 or -EIO.
 */
int sc_cipher_units(const struct sc_ctxpool *pool, struct sc_ctxset *set, uint64_t first,
		    const uint8_t *in, uint8_t *out, size_t unit_len, size_t n, int enc);
/* One message of len >= 16 under the tweak/IV of index idx.  0 or -EIO. */
int sc_cipher_msg(const struct sc_ctxpool *pool, struct sc_ctxset *set, uint64_t idx,
		  const uint8_t *in, uint8_t *out, size_t len, int enc);
/* len < 16 bytes XORed with AES-256-ECB(tiny key, iv).  0 or -EIO. */
int sc_cipher_tiny(const struct sc_ctxpool *pool, struct sc_ctxset *set, const uint8_t iv[16],
		   const uint8_t *in, uint8_t *out, size_t len);
/*
 * One CBC message under an explicit IV with the set's data key (CTS when
 * len % 16 != 0).  Used by sc_cipher_msg and by the NIST known-answer test.
 */
int sc_cbc_msg(const struct sc_ctxpool *pool, struct sc_ctxset *set, const uint8_t iv[16],
	       const uint8_t *in, uint8_t *out, size_t len, int enc);

/*
 * 1 when XTS and CBC units run through the provider dispatch fast path, 0
 * when through EVP (environment SC_CRYPTO_EVP_ONLY=1, or the fast path
 * failed its self-test against EVP at start-up).
 */
int sc_cipher_fast_path(void);

/* ---- fkey.c ---- */

/*
 * An fkey from explicit key material instead of a header (for the IEEE
 * 1619 / ESSIV known-answer tests).  keys is copied.  0 or -errno.
 */
int sc_fkey_new_keys(enum sc_cipher_id cipher, uint32_t block_size,
		     const struct sc_keys *keys, const uint8_t tiny_iv[16],
		     struct sc_fkey **out);

/* ---- header.c ---- */

/* A header as the code uses it, whatever its version on disk. */
struct sc_hdr {
	uint8_t		version;
	uint8_t		cipher;
	uint8_t		log2_bs;
	uint8_t		flags;
	uint8_t		reserved[4];
	uint8_t		nonce[16];
	uint8_t		mac[32];	/* version 2 uses the first 16 */
	uint8_t		tiny_iv[16];
};

/* h in its on-disk form; returns its length.  No MAC computed (h->mac as is). */
size_t sc_hdr_encode(const struct sc_hdr *h, uint8_t out[SC_HDR_MAX]);

/* Checks version, size, cipher, block size and MAC; fills *hdr.  -errno as sc_fkey_new. */
int sc_hdr_verify(const struct sc_mkey *mk, const void *buf, size_t len, struct sc_hdr *hdr);
/* Derives the per-file data keys for hdr->nonce into keys (not the tiny key).  0 or -EIO. */
int sc_hdr_file_keys(const struct sc_mkey *mk, const struct sc_hdr *hdr, struct sc_keys *keys);
/* The per-file tiny-file key.  0 or -EIO. */
int sc_hdr_tiny_key(const struct sc_mkey *mk, const struct sc_hdr *hdr, uint8_t out[32]);

/* ---- names.c ---- */

/* One associated-data component of an SIV message. */
struct sc_siv_ad {
	const void	*p;
	size_t		len;
};

/*
 * One AES-SIV message (RFC 5297) through the routine the names use: key of
 * 32 bytes (AES-SIV-CMAC-256, the RFC's appendix A vectors) or 64 bytes
 * (AES-SIV-CMAC-512, "AES-256-SIV": names and targets), the associated-data
 * components in order.  enc 1: in is the plaintext (len bytes), out gets
 * tag || ciphertext (len + 16).  enc 0: in is tag || ciphertext (len >= 16),
 * out gets the plaintext (len - 16).  The plaintext is never empty (names
 * are padded to 16 bytes).  0, -EBADMSG (the tag does not verify), -EINVAL
 * (key length, empty plaintext), -EIO.
 */
int sc_siv(const uint8_t *key, size_t key_len, int enc, const struct sc_siv_ad *ad,
	   size_t n_ad, const void *in, size_t len, void *out);

/*
 * base64url (RFC 4648 section 5), no '=' padding, canonical: the names'
 * encoding, shared with the binding records of integrity volumes (integ.c).
 * Encode: n bytes into out (room for 4 * ceil(n / 3) + 1), NUL-terminated;
 * returns the length.  Decode: len characters into out (room for max + 2
 * bytes: the last group is written whole); the decoded length, or -EBADMSG
 * (a byte outside the alphabet, an impossible length, non-zero unused bits,
 * more than max bytes).
 */
size_t sc_b64u_encode(const uint8_t *in, size_t n, char *out);
ssize_t sc_b64u_decode(const char *in, size_t len, uint8_t *out, size_t max);

/* ---- gcm.c ---- */

/*
 * sc_gcm_seal with the nonces given (16 bytes per unit, in order) instead
 * of drawn: the known-answer vectors, and reverse mode's synthetic
 * nonces (reverse.c).  Same errors.
 */
int sc_gcm_seal_nonces(struct sc_gkey *gk, uint64_t first, const void *pt, size_t len,
		       void *out, const uint8_t *nonces);

/* ---- integ.c ---- */

/* The keys of an sc_ikey, in the order of docs/format.md 11.2. */
enum sc_ik {
	SC_IK_HEADER,	/* K_h */
	SC_IK_ENTRY,	/* K_e */
	SC_IK_DIRREC,	/* K_r */
	SC_IK_DIGEST,	/* K_d */
	SC_IK_TREE,	/* K_u */
	SC_IK_DIRTY,	/* K_j */
	SC_IK_STATE,	/* K_s */
	SC_IK_COUNT,
};
/* One of them (32 bytes): for the known-answer vectors only. */
const uint8_t *sc_ikey_raw(const struct sc_ikey *ik, enum sc_ik which);
/* The AES-256-GCM key of a version 2 file (label integ-file-key, salt = its id).  0 or -EIO. */
int sc_integ_file_key(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		      uint8_t key[32]);

/* ---- config.c ---- */

/*
 * The KEK (32 bytes), the key that wraps the master key (32) and the
 * key_check value (16) a config's format derives from secret (docs/format.md
 * section 6).  kek and wrap should be locked memory.  0, -EINVAL, -ENOMEM, -EIO.
 */
int sc_config_derive(const struct sc_config *c, const void *secret, size_t len,
		     uint8_t *kek, uint8_t *wrap, uint8_t check[16]);
/* The same for slot i of a config (sc_config_derive is slot 0's). */
int sc_config_derive_slot(const struct sc_config *c, unsigned slot, const void *secret,
			  size_t len, uint8_t *kek, uint8_t *wrap, uint8_t check[16]);

/* ---- mkey.c ---- */

const uint8_t *sc_mkey_header_mac_key(const struct sc_mkey *mk);	/* 32 bytes */
const uint8_t *sc_mkey_gcm_header_mac_key(const struct sc_mkey *mk);	/* 32 bytes */
/* HMAC-SHA256 under the volume's (aes-gcm) header MAC key, from pooled contexts. */
int sc_mkey_header_mac(const struct sc_mkey *mk, const void *msg, size_t len, uint8_t mac[32]);
int sc_mkey_gcm_header_mac(const struct sc_mkey *mk, const void *msg, size_t len,
			   uint8_t mac[32]);
const uint8_t *sc_mkey_master(const struct sc_mkey *mk);		/* 32 bytes */

/* ---- misc ---- */

static inline void sc_le64(uint8_t out[8], uint64_t v)
{
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t sc_get_le64(const uint8_t in[8])
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | in[i];
	return v;
}

#endif /* SC_CRYPTO_I_H */
