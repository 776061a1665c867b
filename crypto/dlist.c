/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dlist.c - a directory's listing record on integrity volumes with
 * SC_FEAT_DIR_LISTS (docs/format.md 11.7): the count and digest of its
 * entries, its version, and the one change that may have been cut short.
 *
 * The record is the contents of the file SC_DIRLIST_FILE in the
 * directory, a file of the layers (INTERNAL) that the data layer below
 * encrypts and authenticates like any other, so these bytes carry no MAC
 * of their own: what a writer of the backing store could do to them is
 * what it can do to any file's units (put an older one back, copy one
 * from another file), and the nonce field (another directory's record) and
 * the gen checked against the client's record (an older one) catch that.
 * Nothing here does I/O.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "crypto_i.h"

#define DLIST_MAGIC	"scdl"
#define DLIST_VERSION	1

struct sc_dlist_disk {
	uint8_t		magic[4];
	uint8_t		version;
	uint8_t		pend;
	uint8_t		pend_len;
	uint8_t		zero;
	uint8_t		nonce[SC_DIRNONCE_LEN];
	uint8_t		gen[8];
	uint8_t		count[8];
	uint8_t		digest[SC_INTEG_TAG_LEN];
	uint8_t		count_before[8];
	uint8_t		digest_before[SC_INTEG_TAG_LEN];
	uint8_t		pend_name[SC_DLIST_NAME_MAX + 1];
} __attribute__((packed));
_Static_assert(sizeof(struct sc_dlist_disk) == SC_DLIST_LEN, "listing record is 336 bytes");
_Static_assert(offsetof(struct sc_dlist_disk, nonce) == 8, "nonce at 8");
_Static_assert(offsetof(struct sc_dlist_disk, count_before) == 56, "count_before at 56");
_Static_assert(offsetof(struct sc_dlist_disk, pend_name) == 80, "pending name at 80");

/* A backing name the record may name: 1..255 bytes, no NUL, no '/'. */
static bool name_ok(const uint8_t *s, size_t len)
{
	if (len == 0 || len > SC_DLIST_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] == 0 || s[i] == '/')
			return false;
	return true;
}

/* 0, -EINVAL (a pending kind or name it cannot hold). */
int sc_dlist_pack(const struct sc_dlist *r, uint8_t out[SC_DLIST_LEN])
{
	struct sc_dlist_disk d;

	if (r->pend > SC_DLIST_REMOVED || (r->pend == SC_DLIST_NONE) != (r->pend_len == 0) ||
	    (r->pend && !name_ok((const uint8_t *)r->pend_name, r->pend_len)))
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	memcpy(d.magic, DLIST_MAGIC, 4);
	d.version = DLIST_VERSION;
	d.pend = r->pend;
	d.pend_len = r->pend_len;
	memcpy(d.nonce, r->nonce, sizeof(d.nonce));
	sc_le64(d.gen, r->gen);
	sc_le64(d.count, r->count);
	memcpy(d.digest, r->digest, sizeof(d.digest));
	sc_le64(d.count_before, r->count_before);
	memcpy(d.digest_before, r->digest_before, sizeof(d.digest_before));
	memcpy(d.pend_name, r->pend_name, r->pend_len);
	memcpy(out, &d, sizeof(d));
	return 0;
}

static bool zeros(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * 0, -EUCLEAN (not a listing record, or one no stackcrypt writes),
 * -EPROTONOSUPPORT (another version), -EBADMSG (another directory's).
 */
int sc_dlist_parse(const void *buf, size_t len, const uint8_t nonce[SC_DIRNONCE_LEN],
		   struct sc_dlist *r)
{
	struct sc_dlist_disk d;

	if (len < 5 || memcmp(buf, DLIST_MAGIC, 4) != 0)
		return -EUCLEAN;
	if (((const uint8_t *)buf)[4] != DLIST_VERSION)
		return -EPROTONOSUPPORT;
	if (len != SC_DLIST_LEN)
		return -EUCLEAN;
	memcpy(&d, buf, sizeof(d));
	if (d.zero || d.pend > SC_DLIST_REMOVED || (d.pend == SC_DLIST_NONE) != (d.pend_len == 0) ||
	    (d.pend && !name_ok(d.pend_name, d.pend_len)) ||
	    !zeros(d.pend_name + d.pend_len, sizeof(d.pend_name) - d.pend_len))
		return -EUCLEAN;
	if (memcmp(d.nonce, nonce, sizeof(d.nonce)) != 0)
		return -EBADMSG;
	memset(r, 0, sizeof(*r));
	memcpy(r->nonce, d.nonce, sizeof(r->nonce));
	r->gen = sc_get_le64(d.gen);
	r->count = sc_get_le64(d.count);
	memcpy(r->digest, d.digest, sizeof(r->digest));
	r->count_before = sc_get_le64(d.count_before);
	memcpy(r->digest_before, d.digest_before, sizeof(r->digest_before));
	r->pend = d.pend;
	r->pend_len = d.pend_len;
	memcpy(r->pend_name, d.pend_name, d.pend_len);
	return 0;
}

void sc_dlist_xor(uint8_t digest[SC_INTEG_TAG_LEN], const uint8_t elem[SC_INTEG_TAG_LEN])
{
	for (int i = 0; i < SC_INTEG_TAG_LEN; i++)
		digest[i] ^= elem[i];
}
