/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * header.c - the per-file header (the value of the "user.stackcrypt"
 * xattr, docs/format.md "Per-file header") and the per-file keys derived
 * from its nonce.
 *
 * Two versions are read (1: 72 bytes, 2: 56 bytes, the same fields with a
 * shorter MAC); new files get the one the volume chose (mkey.c).
 *
 * The header binds a file to its volume, not to a path or inode: the MAC
 * key is derived from the master key, and the file keys from the master
 * key with the header's random nonce as HKDF salt.  Renames and hard links
 * need nothing; a header copied from another volume fails the MAC.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "crypto_i.h"
#include "kdf_labels_i.h"

_Static_assert(sizeof(struct sc_hdr_v1) == SC_HDR_V1_SIZE, "version 1 header is 72 bytes on disk");
_Static_assert(sizeof(struct sc_hdr_v2) == SC_HDR_V2_SIZE, "version 2 header is 56 bytes on disk");
_Static_assert(SC_HDR_V1_SIZE <= SC_HDR_MAX && SC_HDR_V2_SIZE <= SC_HDR_MAX, "SC_HDR_MAX holds all");
_Static_assert(offsetof(struct sc_hdr_v1, nonce) == 8 && offsetof(struct sc_hdr_v2, nonce) == 8,
	       "nonce at byte 8");
_Static_assert(offsetof(struct sc_hdr_v1, mac) == SC_HDR_MAC_OFF &&
	       offsetof(struct sc_hdr_v2, mac) == SC_HDR_MAC_OFF, "MAC covers bytes 0..23");
_Static_assert(offsetof(struct sc_hdr_v1, tiny_iv) == SC_HDR_V1_TINY_IV_OFF, "v1 tiny IV at 56");
_Static_assert(offsetof(struct sc_hdr_v2, tiny_iv) == SC_HDR_V2_TINY_IV_OFF, "v2 tiny IV at 40");
_Static_assert(offsetof(struct sc_hdr, mac) == SC_HDR_MAC_OFF,
	       "the in-memory form starts with the MACed bytes as stored");

static unsigned log2u(uint32_t v)
{
	unsigned l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

size_t sc_hdr_size(unsigned version)
{
	return sc_hdr_version_size(version);
}

enum sc_hdr_shape sc_hdr_probe(const void *hdr, size_t len, unsigned *version)
{
	const uint8_t *b = hdr;
	size_t want;

	if (len < 1)
		return SC_HDR_SHAPE_WRONG_SIZE;
	if (version)
		*version = b[0];
	want = sc_hdr_version_size(b[0]);
	if (want == 0)
		return SC_HDR_SHAPE_UNKNOWN_VERSION;
	return len == want ? SC_HDR_SHAPE_OK : SC_HDR_SHAPE_WRONG_SIZE;
}

bool sc_hdr_explain(int err, const void *hdr, size_t len, char *buf, size_t buflen)
{
	unsigned version = 0;

	switch (err) {
	case -ENODATA:
		snprintf(buf, buflen, "no header (xattr %s missing): not written through "
			 "stackcrypt, or its xattrs were lost in a copy", SC_HDR_XATTR);
		return true;
	case -ERANGE:
		snprintf(buf, buflen, "header is larger than %zu bytes, want %d or %d", len,
			 SC_HDR_V2_SIZE, SC_HDR_V1_SIZE);
		return true;
	case -EINVAL:
		if (len == 0)
			snprintf(buf, buflen, "header is empty (truncated or corrupt)");
		else if (sc_hdr_probe(hdr, len, &version) == SC_HDR_SHAPE_WRONG_SIZE)
			snprintf(buf, buflen, "header is %zu bytes, want %zu for its version %u "
				 "(truncated or corrupt)", len, sc_hdr_version_size(version),
				 version);
		else
			snprintf(buf, buflen, "header names another cipher or block size than "
				 "the volume's");
		return true;
	case -EUCLEAN:
		snprintf(buf, buflen, "header MAC mismatch: the header was tampered with, or "
			 "the file comes from another volume");
		return true;
	case -EPROTONOSUPPORT:
		sc_hdr_probe(hdr, len, &version);
		snprintf(buf, buflen, "header of an unknown version (%u) or with unknown flags",
			 version);
		return true;
	default:
		snprintf(buf, buflen, "cannot derive the file key: %s", strerror(-err));
		return false;
	}
}

/* The stored MAC's length: version 1 keeps all of HMAC-SHA256, version 2
 * its first 128 bits (a forgery still takes 2^128 tries per header). */
static size_t mac_len(unsigned version)
{
	return version == 1 ? 32 : 16;
}

size_t sc_hdr_encode(const struct sc_hdr *h, uint8_t out[SC_HDR_MAX])
{
	size_t ml = mac_len(h->version);

	memcpy(out, h, SC_HDR_MAC_OFF);			/* version .. nonce */
	memcpy(out + SC_HDR_MAC_OFF, h->mac, ml);
	memcpy(out + SC_HDR_MAC_OFF + ml, h->tiny_iv, sizeof(h->tiny_iv));
	return SC_HDR_MAC_OFF + ml + sizeof(h->tiny_iv);
}

static int hdr_mac(const struct sc_mkey *mk, const struct sc_hdr *h, uint8_t mac[32])
{
	return sc_mkey_header_mac(mk, h, SC_HDR_MAC_OFF, mac);
}

/* A fresh header for a new file, in the volume's header version.  Its length or -EIO. */
int sc_hdr_new(const struct sc_mkey *mk, uint8_t out[SC_HDR_MAX])
{
	uint8_t rnd[32];
	struct sc_hdr h;
	int ret;

	memset(&h, 0, sizeof(h));
	h.version = (uint8_t)sc_mkey_hdr_version(mk);
	h.cipher = (uint8_t)sc_mkey_cipher(mk);
	h.log2_bs = (uint8_t)log2u(sc_mkey_block_size(mk));
	ret = sc_random(rnd, sizeof(rnd));	/* one getrandom for both fields */
	memcpy(h.nonce, rnd, 16);
	memcpy(h.tiny_iv, rnd + 16, 16);
	if (ret == 0)
		ret = hdr_mac(mk, &h, h.mac);
	if (ret != 0)
		return ret;
	return (int)sc_hdr_encode(&h, out);
}

/*
 * Checks in this order: version (-EPROTONOSUPPORT: a newer format may have
 * another size), the size of that version (-EINVAL), MAC (-EUCLEAN:
 * tampered or foreign), then the authenticated fields: flags/reserved
 * (-EPROTONOSUPPORT), cipher and block size equal to the volume's
 * (-EINVAL).  0 on success.
 */
int sc_hdr_verify(const struct sc_mkey *mk, const void *buf, size_t len, struct sc_hdr *h)
{
	const uint8_t *b = buf;
	uint8_t mac[32];
	size_t ml;
	int ret, ok;

	switch (sc_hdr_probe(buf, len, NULL)) {
	case SC_HDR_SHAPE_UNKNOWN_VERSION:
		return -EPROTONOSUPPORT;	/* a newer format may have another size */
	case SC_HDR_SHAPE_WRONG_SIZE:
		return -EINVAL;
	case SC_HDR_SHAPE_OK:
		break;
	}
	ml = mac_len(b[0]);
	memset(h, 0, sizeof(*h));
	memcpy(h, b, SC_HDR_MAC_OFF);
	memcpy(h->mac, b + SC_HDR_MAC_OFF, ml);
	memcpy(h->tiny_iv, b + SC_HDR_MAC_OFF + ml, sizeof(h->tiny_iv));
	ret = hdr_mac(mk, h, mac);
	if (ret != 0)
		return ret;
	ok = sc_memeq_ct(mac, h->mac, ml);
	sc_wipe(mac, sizeof(mac));
	if (!ok)
		return -EUCLEAN;
	if (h->flags != 0 || h->reserved[0] | h->reserved[1] | h->reserved[2] | h->reserved[3])
		return -EPROTONOSUPPORT;
	if (h->cipher != (uint8_t)sc_mkey_cipher(mk) ||
	    h->log2_bs != log2u(sc_mkey_block_size(mk)))
		return -EINVAL;
	return 0;
}

static int derive(const struct sc_mkey *mk, const struct sc_hdr *h, const char *label,
		  uint8_t *out, size_t len)
{
	return sc_hkdf_sha256(sc_mkey_master(mk), SC_MASTER_KEY_LEN, h->nonce, sizeof(h->nonce),
			      label, strlen(label), out, len);
}

/*
 * keys = HKDF-SHA256(ikm = master key, salt = nonce, info = label) for
 * each data key the cipher uses; the tiny key is left to sc_hdr_tiny_key
 * (most files never need it).  null derives nothing: it has no key.
 * 0, -EINVAL or -EIO.
 */
int sc_hdr_file_keys(const struct sc_mkey *mk, const struct sc_hdr *h, struct sc_keys *k)
{
	int ret = 0;

	memset(k, 0, sizeof(*k));
	k->cipher = (enum sc_cipher_id)h->cipher;
	switch (k->cipher) {
	case SC_CIPHER_NULL:
		break;
	case SC_CIPHER_AES_XTS:
		ret = derive(mk, h, SC_LABEL_DATA_KEY, k->data, 64);
		break;
	case SC_CIPHER_AES_CBC:
		ret = derive(mk, h, SC_LABEL_DATA_KEY, k->data, 32);
		if (ret == 0)
			ret = derive(mk, h, SC_LABEL_ESSIV_KEY, k->essiv, 32);
		break;
	default:
		return -EINVAL;
	}
	if (ret != 0)
		sc_wipe(k, sizeof(*k));
	return ret;
}

/* The tiny-file key of the file with header h.  0 or -EIO. */
int sc_hdr_tiny_key(const struct sc_mkey *mk, const struct sc_hdr *h, uint8_t out[32])
{
	return derive(mk, h, SC_LABEL_TINY_KEY, out, 32);
}
