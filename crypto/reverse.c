/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reverse.c - the derivations of reverse mode (docs/format.md section 12):
 * a plaintext tree shown as the ciphertext of an ordinary aes-gcm volume
 * with encrypted names, the same bytes at every mount.
 *
 * Nothing random may enter such a view, so what a forward volume draws
 * from the CSPRNG is derived here instead: every entry gets an identity,
 * an HMAC chained down its path from the root; directory nonces, file ids
 * and symlink nonces are HMACs of that identity; and each unit's GCM
 * nonce is an HMAC of its file id, index and plaintext (a synthetic IV, as
 * SIV modes make), so a unit whose plaintext changes gets a new nonce and
 * a GCM key never meets one nonce with two plaintexts.  Readers of the
 * copy need nothing of this: they read the stored nonces.  No I/O here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "crypto_i.h"
#include "kdf_labels_i.h"

struct sc_rkey {
	EVP_MAC_CTX	*id;	/* HMAC under the identity key: templates, only duplicated */
	EVP_MAC_CTX	*unit;	/* HMAC under the unit nonce key */
};

/* First bytes of the identity MAC's inputs: the root, a child, a derived value, an inode. */
enum { REV_MSG_ROOT = 0, REV_MSG_CHILD = 1, REV_MSG_DERIVE = 2, REV_MSG_INODE = 3 };

#define REV_CHUNK	64	/* units whose nonces are made per sc_gcm_seal_nonces call */

/* An HMAC template keyed with HKDF(master, label).  NULL on failure. */
static EVP_MAC_CTX *keyed(const uint8_t *master, const char *label)
{
	uint8_t *key = sc_secure_alloc(32);
	EVP_MAC_CTX *ctx = NULL;

	if (key == NULL)
		return NULL;
	if (sc_hkdf_sha256(master, SC_MASTER_KEY_LEN, NULL, 0, label, strlen(label), key, 32) == 0)
		ctx = sc_hmac_sha256_keyed(key, 32);
	sc_secure_free(key, 32);
	return ctx;
}

/* 0, -ENOMEM or -EIO. */
int sc_rkey_new(const struct sc_mkey *mk, struct sc_rkey **out)
{
	const uint8_t *master = sc_mkey_master(mk);
	struct sc_rkey *rk = calloc(1, sizeof(*rk));

	if (rk == NULL)
		return -ENOMEM;
	rk->id = keyed(master, SC_LABEL_REVERSE_ID);
	rk->unit = keyed(master, SC_LABEL_REVERSE_NONCE);
	if (rk->id == NULL || rk->unit == NULL) {
		sc_rkey_free(rk);
		return -EIO;
	}
	*out = rk;
	return 0;
}

void sc_rkey_free(struct sc_rkey *rk)
{
	if (rk == NULL)
		return;
	EVP_MAC_CTX_free(rk->id);
	EVP_MAC_CTX_free(rk->unit);
	free(rk);
}

/* HMAC of the n parts under the template tmpl (duplicated).  0, -ENOMEM or -EIO. */
static int mac_parts(const EVP_MAC_CTX *tmpl, const void *const *part, const size_t *len,
		     unsigned n, uint8_t out[32])
{
	EVP_MAC_CTX *ctx = EVP_MAC_CTX_dup(tmpl);
	size_t outl = 0;
	int ret = 0;

	if (ctx == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < n && ret == 0; i++)
		if (len[i] && EVP_MAC_update(ctx, part[i], len[i]) != 1)
			ret = -EIO;
	if (ret == 0 && (EVP_MAC_final(ctx, out, &outl, 32) != 1 || outl != 32))
		ret = -EIO;
	EVP_MAC_CTX_free(ctx);
	return ret;
}

/* 0 or -EIO. */
int sc_rev_root(const struct sc_rkey *rk, uint8_t id[SC_REV_ID_LEN])
{
	static const uint8_t tag = REV_MSG_ROOT;
	const void *part[] = { &tag };
	const size_t len[] = { 1 };

	return mac_parts(rk->id, part, len, 1, id) ? -EIO : 0;
}

/*
 * 0 or -EIO.  The parent's identity has a fixed length and comes before
 * the name, so no two (parent, name) pairs give one input.
 */
int sc_rev_child(const struct sc_rkey *rk, const uint8_t parent[SC_REV_ID_LEN],
		 const char *name, size_t nlen, uint8_t id[SC_REV_ID_LEN])
{
	static const uint8_t tag = REV_MSG_CHILD;
	const void *part[] = { &tag, parent, name };
	const size_t len[] = { 1, SC_REV_ID_LEN, nlen };

	return mac_parts(rk->id, part, len, 3, id) ? -EIO : 0;
}

/*
 * 0 or -EIO.  A hard-linked file has no one path, so its identity is its
 * plaintext inode number's: the same for every name, whichever is met first.
 */
int sc_rev_inode(const struct sc_rkey *rk, uint64_t ino, uint8_t id[SC_REV_ID_LEN])
{
	const uint8_t msg[9] = { REV_MSG_INODE, (uint8_t)ino, (uint8_t)(ino >> 8),
				 (uint8_t)(ino >> 16), (uint8_t)(ino >> 24), (uint8_t)(ino >> 32),
				 (uint8_t)(ino >> 40), (uint8_t)(ino >> 48), (uint8_t)(ino >> 56) };
	const void *part[] = { msg };
	const size_t len[] = { sizeof(msg) };

	return mac_parts(rk->id, part, len, 1, id) ? -EIO : 0;
}

/* 0 or -EIO. */
int sc_rev_derive(const struct sc_rkey *rk, const uint8_t id[SC_REV_ID_LEN], enum sc_rev_use use,
		  const void *extra, size_t extra_len, uint8_t out[16])
{
	const uint8_t head[2] = { REV_MSG_DERIVE, (uint8_t)use };
	const void *part[] = { head, id, extra };
	const size_t len[] = { 2, SC_REV_ID_LEN, extra_len };
	uint8_t md[32];
	int ret = mac_parts(rk->id, part, len, 3, md);

	if (ret == 0)
		memcpy(out, md, 16);
	sc_wipe(md, sizeof(md));
	return ret ? -EIO : 0;
}

/*
 * The synthetic nonces of the n units of pt from unit first into nonces:
 * one context for the call, restarted per unit under the same key (a
 * digest-state copy, no allocation).  0, -ENOMEM, -EIO.
 */
static int unit_nonces(const struct sc_rkey *rk, const uint8_t *file_id, uint32_t bs,
		       uint64_t first, const uint8_t *pt, size_t len, uint8_t *nonces)
{
	EVP_MAC_CTX *ctx = EVP_MAC_CTX_dup(rk->unit);
	size_t n = (len + bs - 1) / bs, outl;
	uint8_t head[SC_GCM_FILE_ID_LEN + 8], md[32];
	int ret = ctx ? 0 : -ENOMEM;

	memcpy(head, file_id, SC_GCM_FILE_ID_LEN);
	for (size_t u = 0; u < n && ret == 0; u++) {
		uint64_t idx = first + u;
		size_t ulen = u + 1 < n ? bs : len - u * bs;

		for (unsigned b = 0; b < 8; b++)
			head[SC_GCM_FILE_ID_LEN + b] = (uint8_t)(idx >> (8 * b));
		outl = 0;
		if ((u > 0 && EVP_MAC_init(ctx, NULL, 0, NULL) != 1) ||
		    EVP_MAC_update(ctx, head, sizeof(head)) != 1 ||
		    EVP_MAC_update(ctx, pt + u * bs, ulen) != 1 ||
		    EVP_MAC_final(ctx, md, &outl, sizeof(md)) != 1 || outl != sizeof(md))
			ret = -EIO;
		memcpy(nonces + u * SC_GCM_NONCE_LEN, md, SC_GCM_NONCE_LEN);
	}
	sc_wipe(md, sizeof(md));
	EVP_MAC_CTX_free(ctx);
	return ret;
}

/* 0, -EINVAL, -ENOMEM or -EIO. */
int sc_rev_seal(const struct sc_rkey *rk, struct sc_gkey *gk, uint64_t first, const void *pt,
		size_t len, void *out)
{
	uint8_t nonces[REV_CHUNK * SC_GCM_NONCE_LEN];
	const uint8_t *src = pt;
	uint8_t *dst = out;
	uint32_t bs = sc_gkey_block_size(gk);
	size_t chunk = (size_t)REV_CHUNK * bs;
	int ret = len == 0 ? -EINVAL : 0;

	for (size_t done = 0; done < len && ret == 0; done += chunk) {
		size_t n = len - done < chunk ? len - done : chunk;
		uint64_t at = first + done / bs;

		ret = unit_nonces(rk, sc_gkey_file_id(gk), bs, at, src + done, n, nonces);
		if (ret == 0)
			ret = sc_gcm_seal_nonces(gk, at, src + done, n,
						 dst + (done / bs) * (bs + SC_GCM_OVERHEAD), nonces);
	}
	return ret;
}
