/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rekey.c - the state of a master-key rotation (stackcrypt rekey), as the
 * bytes of the file BACKING/.stackcrypt.rekey (docs/format.md 6.5): the
 * phase, the new master key wrapped with AES-256-GCM under a key derived
 * from the old one, and the text of the config the rotation ends with,
 * all under one GCM tag.  Whoever holds the old master key (any slot of
 * the config during the rotation) can resume it; nobody else learns the
 * new key.  No I/O here: fs/volume/rekey.c reads and writes the file.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <openssl/evp.h>

#include "crypto_i.h"
#include "kdf_labels_i.h"
#include "sc_crypto.h"

#define NONCE_LEN	12
#define TAG_LEN		16
#define VERSION		1

/* The fixed header: magic, version, phase, reserved, text length, uuid. */
struct rk_hdr {
	char		magic[8];	/* "SCREKEY\0" */
	uint8_t		version;
	uint8_t		phase;
	uint8_t		reserved[2];
	uint32_t	text_len;	/* little-endian */
	uint8_t		uuid[16];
} __attribute__((packed));
_Static_assert(sizeof(struct rk_hdr) == SC_REKEY_HDR_LEN, "rekey header size");

static const char magic[8] = "SCREKEY";

/* The GCM key of the state from the old master key.  0 or -EIO. */
static int state_key(const uint8_t *old_mk, uint8_t key[32])
{
	return sc_hkdf_sha256(old_mk, SC_MASTER_KEY_LEN, NULL, 0, SC_LABEL_REKEY_STATE,
			      strlen(SC_LABEL_REKEY_STATE), key, 32);
}

/*
 * AES-256-GCM over the state in buf (header, nonce, key, tag, text):
 * enc 1 seals key into buf, 0 opens it into key (-EBADMSG on a bad tag).
 * The associated data is the header and the config text.
 */
static int state_gcm(const uint8_t *old_mk, uint8_t *buf, size_t text_len, uint8_t *key, int enc)
{
	uint8_t *nonce = buf + SC_REKEY_HDR_LEN, *ct = nonce + NONCE_LEN;
	uint8_t *tag = ct + SC_MASTER_KEY_LEN, *text = tag + TAG_LEN, gkey[32];
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int outl, ret = -EIO;

	if (!ctx)
		return -ENOMEM;
	if (state_key(old_mk, gkey))
		goto out_free_ctx;
	if (EVP_CipherInit_ex2(ctx, EVP_aes_256_gcm(), gkey, nonce, enc, NULL) != 1 ||
	    EVP_CipherUpdate(ctx, NULL, &outl, buf, SC_REKEY_HDR_LEN) != 1 ||
	    (text_len && EVP_CipherUpdate(ctx, NULL, &outl, text, (int)text_len) != 1))
		goto out_free_ctx;
	if (enc) {
		if (EVP_CipherUpdate(ctx, ct, &outl, key, SC_MASTER_KEY_LEN) != 1 ||
		    EVP_CipherFinal_ex(ctx, ct + outl, &outl) != 1 ||
		    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, tag) != 1)
			goto out_free_ctx;
		ret = 0;
		goto out_free_ctx;
	}
	if (EVP_CipherUpdate(ctx, key, &outl, ct, SC_MASTER_KEY_LEN) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, tag) != 1)
		goto out_free_ctx;
	ret = 0;
	if (EVP_CipherFinal_ex(ctx, key + outl, &outl) != 1) {
		sc_wipe(key, SC_MASTER_KEY_LEN);	/* unauthenticated plaintext */
		ret = -EBADMSG;
	}
out_free_ctx:
	sc_wipe(gkey, sizeof(gkey));
	EVP_CIPHER_CTX_free(ctx);
	return ret;
}

int sc_rekey_state_seal(const uint8_t old_mk[SC_MASTER_KEY_LEN], const uint8_t uuid[16],
			enum sc_rekey_phase phase, const uint8_t new_mk[SC_MASTER_KEY_LEN],
			const char *text, size_t len, uint8_t *out)
{
	struct rk_hdr h = { .version = VERSION, .phase = (uint8_t)phase };
	uint8_t key[SC_MASTER_KEY_LEN];
	int r;

	if (len > SC_CONFIG_MAX_TEXT || phase < SC_REKEY_COPY || phase > SC_REKEY_CLEANUP)
		return -EINVAL;
	memcpy(h.magic, magic, sizeof(h.magic));
	h.text_len = htole32((uint32_t)len);
	memcpy(h.uuid, uuid, sizeof(h.uuid));
	memcpy(out, &h, sizeof(h));
	memcpy(out + SC_REKEY_FIXED_LEN, text, len);
	r = sc_random(out + SC_REKEY_HDR_LEN, NONCE_LEN);
	memcpy(key, new_mk, sizeof(key));	/* state_gcm takes a writable key */
	if (!r)
		r = state_gcm(old_mk, out, len, key, 1);
	sc_wipe(key, sizeof(key));
	return r ? r : (int)(SC_REKEY_FIXED_LEN + len);
}

int sc_rekey_state_open(const uint8_t old_mk[SC_MASTER_KEY_LEN], const uint8_t uuid[16],
			const void *buf, size_t len, enum sc_rekey_phase *phase,
			uint8_t new_mk[SC_MASTER_KEY_LEN], size_t *text_off, size_t *text_len)
{
	uint8_t copy[SC_REKEY_STATE_MAX];
	struct rk_hdr h;
	int r;

	if (len < SC_REKEY_FIXED_LEN || len > SC_REKEY_STATE_MAX)
		return -EUCLEAN;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, magic, sizeof(magic)) ||
	    le32toh(h.text_len) != len - SC_REKEY_FIXED_LEN)
		return -EUCLEAN;
	if (h.version != VERSION || h.reserved[0] || h.reserved[1] ||
	    h.phase < SC_REKEY_COPY || h.phase > SC_REKEY_CLEANUP)
		return -EPROTONOSUPPORT;
	if (memcmp(h.uuid, uuid, sizeof(h.uuid)))
		return -EBADMSG;
	memcpy(copy, buf, len);
	r = state_gcm(old_mk, copy, len - SC_REKEY_FIXED_LEN, new_mk, 0);
	sc_wipe(copy, SC_REKEY_FIXED_LEN);
	if (r)
		return r;
	*phase = (enum sc_rekey_phase)h.phase;
	*text_off = SC_REKEY_FIXED_LEN;
	*text_len = len - SC_REKEY_FIXED_LEN;
	return 0;
}
