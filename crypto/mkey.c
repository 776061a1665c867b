/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mkey.c - the volume master key object and the two text forms a person
 * handles: the key file (64 hex digits or 32 raw bytes) and the master key
 * printed for recovery (8 groups of 8 hex digits; read back with or without
 * the dashes).
 *
 * The whole sc_mkey lives in one locked page; it is immutable after
 * sc_mkey_new, so threads share it without locking, save the MAC
 * contexts of its three volume-wide MAC keys (file headers, aes-gcm
 * in-file headers, journal records): made on first use (a key whose MAC
 * is never asked for, as the journal's on an aes-xts volume or in a CLI
 * command, never pays for them), the keyed template published with a
 * compare-and-swap, the pool's slots claimed with atomic exchanges.  A
 * MAC from a restarted pooled context costs a fraction of one made from
 * the key (docs/performance.md 14.2): a header MAC is made at every
 * create and checked at every open.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "crypto_i.h"	/* kdf, secure memory; header format via hdr_i.h, never header.c */
#include "kdf_labels_i.h"

/* MACs of one key at once without a dup: the daemon's threads, about. */
#define SC_MAC_POOL	16

/* The contexts of one MAC key. */
struct mac_pool {
	EVP_MAC_CTX		*tmpl;	/* keyed once, at the first MAC (atomic) */
	/* Copies of tmpl that a caller claims (busy) and restarts: no
	 * allocation per MAC.  A slot is filled by the first caller that
	 * claims it, under its busy flag.  All busy: a caller dups tmpl. */
	EVP_MAC_CTX		*pool[SC_MAC_POOL];
	int			busy[SC_MAC_POOL];
};

struct sc_mkey {
	uint8_t			master[SC_MASTER_KEY_LEN];
	uint8_t			hdr_mac_key[32];
	uint8_t			gcm_hdr_mac_key[32];	/* aes-gcm in-file headers (fhdr.c) */
	uint8_t			jrnl_mac_key[32];	/* aes-gcm intent journal records */
	struct mac_pool		hdr_mac, gcm_hdr_mac, jrnl_mac;	/* of the three keys */
	enum sc_cipher_id	cipher;
	uint32_t		block_size;
	unsigned		hdr_version;	/* of the headers of new files */
};

/* 0, -EINVAL (cipher or block size), -ENOMEM or -EIO. */
int sc_mkey_new(const uint8_t mk[SC_MASTER_KEY_LEN], enum sc_cipher_id cipher,
		uint32_t block_size, struct sc_mkey **out)
{
	struct sc_mkey *m;
	int ret;

	if (sc_cipher_name(cipher) == NULL || sc_block_size_check(block_size) != 0)
		return -EINVAL;
	m = sc_secure_alloc(sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	memcpy(m->master, mk, SC_MASTER_KEY_LEN);
	m->cipher = cipher;
	m->block_size = block_size;
	m->hdr_version = SC_HDR_VERSION_LATEST;
	/* Volume-wide: no salt, so every header of the volume shares the key. */
	ret = sc_hkdf_sha256(m->master, sizeof(m->master), NULL, 0,
			     SC_LABEL_HEADER_MAC, strlen(SC_LABEL_HEADER_MAC),
			     m->hdr_mac_key, sizeof(m->hdr_mac_key));
	/* The authenticated format's headers get their own key (own label):
	 * one HKDF at mount, whichever format the volume's files use. */
	if (ret == 0)
		ret = sc_hkdf_sha256(m->master, sizeof(m->master), NULL, 0,
				     SC_LABEL_GCM_HEADER_MAC, strlen(SC_LABEL_GCM_HEADER_MAC),
				     m->gcm_hdr_mac_key, sizeof(m->gcm_hdr_mac_key));
	if (ret == 0)
		ret = sc_hkdf_sha256(m->master, sizeof(m->master), NULL, 0,
				     SC_LABEL_JOURNAL_MAC, strlen(SC_LABEL_JOURNAL_MAC),
				     m->jrnl_mac_key, sizeof(m->jrnl_mac_key));
	if (ret != 0) {
		sc_mkey_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

void sc_mkey_free(struct sc_mkey *mk)
{
	if (mk) {
		struct mac_pool *pools[] = { &mk->hdr_mac, &mk->gcm_hdr_mac, &mk->jrnl_mac };

		/* EVP_MAC_CTX_free cleanses the key inside; NULL is a no-op */
		for (size_t p = 0; p < sizeof(pools) / sizeof(pools[0]); p++) {
			for (int i = 0; i < SC_MAC_POOL; i++)
				EVP_MAC_CTX_free(pools[p]->pool[i]);
			EVP_MAC_CTX_free(pools[p]->tmpl);
		}
	}
	sc_secure_free(mk, sizeof(*mk));
}

/* The volume's cipher. */
enum sc_cipher_id sc_mkey_cipher(const struct sc_mkey *mk)
{
	return mk->cipher;
}

/* The volume's data-unit size in bytes. */
uint32_t sc_mkey_block_size(const struct sc_mkey *mk)
{
	return mk->block_size;
}

/* A volume without the SC_FEAT_HDR_V2 feature keeps writing version 1
 * headers, so builds that predate version 2 still read every file. */
int sc_mkey_set_hdr_version(struct sc_mkey *mk, unsigned version)
{
	if (sc_hdr_version_size(version) == 0)
		return -EINVAL;
	mk->hdr_version = version;
	return 0;
}

unsigned sc_mkey_hdr_version(const struct sc_mkey *mk)
{
	return mk->hdr_version;
}

/* The 32-byte header MAC key. */
const uint8_t *sc_mkey_header_mac_key(const struct sc_mkey *mk)
{
	return mk->hdr_mac_key;
}

/* The 32-byte MAC key of aes-gcm in-file headers. */
const uint8_t *sc_mkey_gcm_header_mac_key(const struct sc_mkey *mk)
{
	return mk->gcm_hdr_mac_key;
}

/*
 * The keyed template of pool mp, for key, made by the first caller: the
 * threads that race to make it all key one, one of them publishes it and
 * the others free theirs.  NULL (allocation failed) or the template.
 */
static const EVP_MAC_CTX *pool_template(struct mac_pool *mp, const uint8_t key[32])
{
	EVP_MAC_CTX *t = __atomic_load_n(&mp->tmpl, __ATOMIC_ACQUIRE);
	EVP_MAC_CTX *cur = NULL;

	if (t)
		return t;
	t = sc_hmac_sha256_keyed(key, 32);
	if (t == NULL)
		return NULL;
	if (__atomic_compare_exchange_n(&mp->tmpl, &cur, t, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return t;
	EVP_MAC_CTX_free(t);	/* another thread's is published: cur */
	return cur;
}

/*
 * HMAC-SHA256 under key of msg, through pool mp.  0, -ENOMEM (the first
 * use of a context could not make it) or -EIO.
 */
static int pool_mac(struct mac_pool *mp, const uint8_t key[32], const void *msg, size_t len,
		    uint8_t mac[32])
{
	const EVP_MAC_CTX *tmpl = pool_template(mp, key);
	int ret;

	if (tmpl == NULL)
		return -ENOMEM;
	for (int i = 0; i < SC_MAC_POOL; i++) {
		if (__atomic_load_n(&mp->busy[i], __ATOMIC_RELAXED) ||
		    __atomic_exchange_n(&mp->busy[i], 1, __ATOMIC_ACQUIRE))
			continue;
		/* the slot is ours until the release below: no one else fills it */
		if (mp->pool[i] == NULL)
			mp->pool[i] = EVP_MAC_CTX_dup(tmpl);
		ret = mp->pool[i] ? sc_hmac_sha256_reuse(mp->pool[i], msg, len, mac) : -ENOMEM;
		__atomic_store_n(&mp->busy[i], 0, __ATOMIC_RELEASE);
		return ret;
	}
	return sc_hmac_sha256_dup(tmpl, msg, len, mac);
}

/*
 * The contexts are the one mutable part of a shared key (see the top);
 * the sc_mkey itself is never const (sc_secure_alloc'ed), so the MAC
 * calls below take a const key and write its pools.
 */

/*
 * The MAC of an intent journal record (docs/format.md 10.10):
 * HMAC-SHA256 under the journal key (its own label) of msg.  0, -ENOMEM
 * or -EIO.
 */
int sc_jrnl_mac(const struct sc_mkey *mk, const void *msg, size_t len, uint8_t mac[32])
{
	struct sc_mkey *m = (struct sc_mkey *)mk;

	return pool_mac(&m->jrnl_mac, m->jrnl_mac_key, msg, len, mac);
}

/* HMAC-SHA256 under the header MAC key of msg (header.c).  0, -ENOMEM or -EIO. */
int sc_mkey_header_mac(const struct sc_mkey *mk, const void *msg, size_t len, uint8_t mac[32])
{
	struct sc_mkey *m = (struct sc_mkey *)mk;

	return pool_mac(&m->hdr_mac, m->hdr_mac_key, msg, len, mac);
}

/* HMAC-SHA256 under the aes-gcm header MAC key of msg (fhdr.c).  0, -ENOMEM or -EIO. */
int sc_mkey_gcm_header_mac(const struct sc_mkey *mk, const void *msg, size_t len,
			   uint8_t mac[32])
{
	struct sc_mkey *m = (struct sc_mkey *)mk;

	return pool_mac(&m->gcm_hdr_mac, m->gcm_hdr_mac_key, msg, len, mac);
}

/* The 32-byte master key. */
const uint8_t *sc_mkey_master(const struct sc_mkey *mk)
{
	return mk->master;
}

/* ---- text forms ---- */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Key file: 64 hex digits (+ "\n" or "\r\n"), or exactly 32 raw bytes.  0 or -EINVAL. */
int sc_keyfile_parse(const void *buf, size_t len, uint8_t key[32])
{
	const uint8_t *b = buf;

	if (len == 32) {
		memcpy(key, b, 32);
		return 0;
	}
	if (len == 66 && b[64] == '\r' && b[65] == '\n')
		len = 64;
	else if (len == 65 && b[64] == '\n')
		len = 64;
	if (len != 64)
		return -EINVAL;
	for (size_t i = 0; i < 32; i++) {
		int hi = hexval(b[2 * i]), lo = hexval(b[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			sc_wipe(key, 32);
			return -EINVAL;
		}
		key[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* "xxxxxxxx-...-xxxxxxxx" (71 chars + NUL).  Returns 71 or -ENOSPC. */
int sc_mkey_to_text(const uint8_t mk[SC_MASTER_KEY_LEN], char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (size < 72)
		return -ENOSPC;
	for (size_t i = 0; i < SC_MASTER_KEY_LEN; i++) {
		if (i > 0 && i % 4 == 0)
			buf[o++] = '-';
		buf[o++] = hex[mk[i] >> 4];
		buf[o++] = hex[mk[i] & 15];
	}
	buf[o] = '\0';
	return (int)o;
}

/*
 * The inverse, case-insensitive.  The dashes are optional and blanks may
 * stand anywhere between digits (a person copies it from paper, or from a
 * display that wrapped it); surrounding blanks and a trailing newline are
 * ignored.  Exactly 64 hex digits.  0 or -EINVAL (mk wiped).
 */
int sc_mkey_from_text(const char *text, uint8_t mk[SC_MASTER_KEY_LEN])
{
	const char *s = text, *e;
	size_t n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	for (; s < e; s++) {
		int v;

		if (*s == '-' || *s == ' ' || *s == '\t')
			continue;
		v = hexval((unsigned char)*s);
		if (v < 0 || n == 2 * SC_MASTER_KEY_LEN)
			goto err_wipe;
		if (n % 2 == 0)
			mk[n / 2] = (uint8_t)(v << 4);
		else
			mk[n / 2] |= (uint8_t)v;
		n++;
	}
	if (n == 2 * SC_MASTER_KEY_LEN)
		return 0;
err_wipe:
	sc_wipe(mk, SC_MASTER_KEY_LEN);
	return -EINVAL;
}
