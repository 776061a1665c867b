/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rev_data.c - the reverse translator, data side: the bytes of the view's
 * files.  A plaintext file of P bytes is shown as the aes-gcm backing file
 * a forward mount would have stored for it (docs/format.md 10.2, 10.3):
 * nothing for P = 0, else the 40-byte header and the units, each sealed
 * when it is read with its synthetic nonce (12.3).  The header and the
 * file key are made once per inode (at its first open) and kept while the
 * kernel holds the inode, so a large read costs the units' seals and one
 * read of the plaintext below, nothing more.  Made-up files (nonce records,
 * long names' side files, the config) are sealed once, at their lookup,
 * and served from memory.  Symlink targets are sealed at readlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "rev_i.h"

/* read_units' plaintext and its seal, per thread. */
static __thread struct sc_tbuf t_pt, t_ct;

uint64_t rev_stored_size(uint32_t bs, uint64_t plain)
{
	return plain ? sc_gcm_stored_size(bs, plain) : 0;
}

/* 0, -ENOMEM, -EIO. */
int rev_blob_sealed(struct rev_priv *rp, struct rev_node *n, const uint8_t *id,
		    enum sc_rev_use use, const void *pt, size_t len)
{
	uint8_t fid[SC_GCM_FILE_ID_LEN], hdr[SC_GHDR_SIZE];
	struct sc_gkey *gk = NULL;
	int ret = sc_rev_derive(rp->rk, id, use, NULL, 0, fid);

	if (ret == 0)
		ret = sc_ghdr_make(rp->mk, fid, hdr);
	if (ret == 0)
		ret = sc_gkey_new(rp->mk, hdr, sizeof(hdr), &gk);
	if (ret < 0)
		return ret;
	n->blob_len = SC_GHDR_SIZE + sc_gcm_stored_len(rp->bs, len);
	n->blob = malloc(n->blob_len);
	ret = n->blob ? 0 : -ENOMEM;
	if (ret == 0) {
		memcpy(n->blob, hdr, sizeof(hdr));
		ret = sc_rev_seal(rp->rk, gk, 0, pt, len, n->blob + SC_GHDR_SIZE);
	}
	sc_gkey_free(gk);
	return ret;
}

/* n's file key, made once (the first open of the inode wins; the others drop theirs). */
static int file_key(struct rev_priv *rp, struct rev_node *n)
{
	struct sc_gkey *gk, *none = NULL;
	int ret;

	if (__atomic_load_n(&n->gk, __ATOMIC_ACQUIRE) != NULL)
		return 0;
	ret = sc_gkey_new(rp->mk, n->hdr, sizeof(n->hdr), &gk);
	if (ret < 0)
		return ret;
	if (!__atomic_compare_exchange_n(&n->gk, &none, gk, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		sc_gkey_free(gk);
	return 0;
}

/* Opens for reading only (-EROFS otherwise); made-up files need nothing below. */
int rev_open(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct rev_node *n = obj->priv[xl->id];
	int ret;

	if (n == NULL)
		return -EIO;
	if ((fh->flags & O_ACCMODE) != O_RDONLY || (fh->flags & O_TRUNC))
		return -EROFS;
	if (n->kind == REV_BLOB)
		return 0;
	ret = n->kind == REV_FILE ? file_key(xl->priv, n) : 0;
	return ret < 0 ? ret : sc_xl_open(xl->below, obj, fh);
}

int rev_release(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct rev_node *n = obj->priv[xl->id];

	return n && n->kind == REV_BLOB ? 0 : sc_xl_release(xl->below, obj, fh);
}

int rev_flush(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct rev_node *n = obj->priv[xl->id];

	return n && n->kind == REV_BLOB ? 0 : sc_xl_flush(xl->below, obj, fh);
}

/* Up to len plaintext bytes from off, below; short only at the end of the file. */
static ssize_t read_plain(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, uint8_t *buf,
			  size_t len, off_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = sc_xl_read(xl->below, obj, fh, buf + got, len - got, off + (off_t)got);

		if (r < 0)
			return r;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/*
 * The stored bytes [off, off + size) of the units of file n, off past the
 * header, into buf: the plaintext of the units they touch read once, the
 * units sealed.  Returns the bytes given (short at the end) or -errno.
 */
static ssize_t read_units(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  struct rev_node *n, uint8_t *buf, size_t size, uint64_t off)
{
	struct rev_priv *rp = xl->priv;
	uint64_t sbs = (uint64_t)rp->bs + SC_GCM_OVERHEAD, s0 = off - SC_GHDR_SIZE;
	uint64_t first = s0 / sbs, last = (s0 + size - 1) / sbs, skip = s0 - first * sbs;
	size_t plen = (size_t)(last - first + 1) * rp->bs, stored;
	uint8_t *pt = sc_tbuf_get(&t_pt, plen);
	uint8_t *ct = sc_tbuf_get(&t_ct, sc_gcm_stored_len(rp->bs, plen));
	ssize_t got;
	int ret;

	if (pt == NULL || ct == NULL)
		return -ENOMEM;
	got = read_plain(xl, obj, fh, pt, plen, (off_t)(first * rp->bs));
	if (got <= 0)
		return got;
	ret = sc_rev_seal(rp->rk, n->gk, first, pt, (size_t)got, ct);
	if (ret < 0)
		return ret;
	stored = sc_gcm_stored_len(rp->bs, (size_t)got);
	if (stored <= skip)
		return 0;
	stored -= skip;
	if (stored > size)
		stored = size;
	memcpy(buf, ct + skip, stored);
	return (ssize_t)stored;
}

ssize_t rev_read(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, void *buf,
		 size_t size, off_t off)
{
	struct rev_node *n = obj->priv[xl->id];
	uint8_t *out = buf;
	size_t done = 0;
	ssize_t r;

	if (n == NULL)
		return -EIO;
	if (n->kind == REV_BLOB) {
		if ((uint64_t)off >= n->blob_len)
			return 0;
		done = n->blob_len - (size_t)off < size ? n->blob_len - (size_t)off : size;
		memcpy(buf, n->blob + off, done);
		return (ssize_t)done;
	}
	if (n->kind != REV_FILE)
		return sc_xl_read(xl->below, obj, fh, buf, size, off);
	if (size == 0)
		return 0;
	if (off < SC_GHDR_SIZE) {
		done = SC_GHDR_SIZE - (size_t)off < size ? SC_GHDR_SIZE - (size_t)off : size;
		memcpy(out, n->hdr + off, done);
		if (done == size)
			return (ssize_t)done;
	}
	r = read_units(xl, obj, fh, n, out + done, size - done, (uint64_t)off + done);
	if (r < 0)
		return r;
	/* a file emptied since: no units, and then no header either (an empty file) */
	return r == 0 && off < SC_GHDR_SIZE ? 0 : (ssize_t)(done + (size_t)r);
}

/* SEEK_DATA and SEEK_HOLE on the stored size: the view holds no holes. */
off_t rev_lseek(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off, int whence)
{
	struct rev_node *n = obj->priv[xl->id];
	struct stat st;
	int ret;

	if (n == NULL)
		return -EIO;
	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return -EINVAL;
	ret = xl->ops->getattr(xl, obj, n->kind == REV_BLOB ? NULL : fh, &st);
	if (ret < 0)
		return ret;
	if (off < 0 || off >= st.st_size)
		return -ENXIO;
	return whence == SEEK_DATA ? off : st.st_size;
}

off_t rev_link_size(off_t plain)
{
	off_t raw = 48 + ((plain + 15) / 16) * 16, enc = (raw * 4 + 2) / 3;

	return enc > SC_LINK_ENC_MAX ? SC_LINK_MARK_LEN : enc;
}

ssize_t rev_link_sealed(struct rev_priv *rp, const uint8_t *id, const struct sc_dirplace *at,
			const char *target, size_t len, char *out)
{
	uint8_t nonce[SC_DIRNONCE_LEN];

	if (sc_rev_derive(rp->rk, id, SC_REV_LINK_NONCE, target, len, nonce))
		return -EIO;
	return sc_link_seal_nonce(rp->nk, target, len, at, nonce, out);
}

/*
 * The target sealed for the link's place, its nonce derived from the link
 * and the target (12.3); one too long for a symlink (over 3008 bytes) is
 * its marker, the stored target then in the link side file (9.5).
 */
ssize_t rev_readlink(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	struct rev_node *n = obj->priv[xl->id];
	char *plain = malloc(PATH_MAX + 1), *enc = malloc(SC_LINK_BOUND_ENC_MAX + 1);
	char mark[SC_LINK_MARK_LEN + 1];
	struct sc_dirplace at;
	ssize_t len;

	len = n && n->kind == REV_LINK ? (plain && enc ? 0 : -ENOMEM) : -EIO;
	if (len == 0)
		len = sc_xl_readlink(xl->below, obj, plain, PATH_MAX);
	if (len > 0) {
		at = (struct sc_dirplace){ n->pnonce, n->enc, n->enc_len };
		len = rev_link_sealed(xl->priv, n->id, &at, plain, (size_t)len, enc);
	}
	if (len > SC_LINK_ENC_MAX) {
		len = sc_link_mark(enc, (size_t)len, mark) ? -EIO : SC_LINK_MARK_LEN;
		if (len > 0)
			memcpy(enc, mark, SC_LINK_MARK_LEN);
	}
	if (len > 0) {
		len = (size_t)len < size ? len : (ssize_t)size;
		memcpy(buf, enc, (size_t)len);
	}
	free(plain);
	free(enc);
	return len;
}
