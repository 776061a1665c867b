/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names.c - what the volume tools read of encrypted names without a mount
 * (docs/format.md 9): the small files the names layer stores through the
 * data layer below it (a long name's side file, a directory's nonce
 * file), decrypted as that layer stores file data, and a directory's
 * nonce record in either of its forms.  fsck checks every name with
 * these; `stackcrypt path` follows one path with them.  Every file is
 * read through the backing interface (sc_backing.h), so a gluster://
 * backing reads as a directory does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sc_backing.h"
#include "sc_crypto.h"
#include "sc_volume.h"

#define HDR_BUF		256	/* more than SC_HDR_MAX: an oversize header shows */

/* The length of a small aes-gcm file's header: its version byte's (10.2, 11.3). */
static uint32_t small_hlen(struct sc_backing *b, int fd, uint64_t size)
{
	uint8_t head[5];

	return size >= SC_IHDR_SIZE && !sc_backing_pread_full(b, fd, head, 5, 0, NULL) &&
	       head[4] == SC_IHDR_VERSION ? SC_IHDR_SIZE : SC_GHDR_SIZE;
}

/*
 * The key of a small aes-gcm file from its header of hl bytes: version 1
 * (section 10.2), or version 2 (an integrity volume's, 11.3), whose size
 * must be the backing size its header records.  0 or -EBADMSG.
 */
static int small_key(struct sc_backing *b, const struct sc_mkey *mk, int fd, uint64_t size,
		     uint32_t hl, struct sc_gkey **gk)
{
	uint8_t hdr[SC_IHDR_SIZE];
	struct sc_ikey *ik;
	struct sc_ihdr h;
	int r;

	if (sc_backing_pread_full(b, fd, hdr, hl, 0, NULL))
		return -EBADMSG;
	if (hl == SC_GHDR_SIZE)
		return sc_gkey_new(mk, hdr, SC_GHDR_SIZE, gk) ? -EBADMSG : 0;
	/* a unit tree volume's headers carry TREE (11.10): the keys must expect it */
	if (sc_ikey_new(mk, ((hdr[6] | hdr[7] << 8) & SC_IHDR_F_TREE) != 0, &ik))
		return -EBADMSG;
	r = sc_gkey_new_v2(ik, hdr, SC_IHDR_SIZE, &h, gk);
	sc_ikey_free(ik);
	if (r == 0 && size != sc_gcm_stored_size_h(SC_IHDR_SIZE, sc_mkey_block_size(mk), h.size)) {
		sc_gkey_free(*gk);
		r = -EBADMSG;
	}
	return r ? -EBADMSG : 0;
}

/*
 * The authenticated format (docs/format.md 10, 11.3): the header at the
 * file's start, then its units (max is small: one or a few).  The
 * plaintext length, or -errno with why set.
 */
static ssize_t small_gcm(struct sc_backing *b, const struct sc_mkey *mk, int fd, uint64_t size,
			 uint8_t *buf, size_t max, char *why, size_t whylen)
{
	uint32_t hl = small_hlen(b, fd, size);
	struct sc_gkey *gk;
	uint8_t *ct;
	uint64_t plain;
	ssize_t r = -EBADMSG;

	if (sc_gcm_plain_size_h(hl, sc_mkey_block_size(mk), size, &plain) || plain < 1 ||
	    plain > max) {
		snprintf(why, whylen, "its %llu stored bytes are no contents of 1 to %zu bytes",
			 (unsigned long long)size, max);
		return -EUCLEAN;
	}
	if (small_key(b, mk, fd, size, hl, &gk)) {
		snprintf(why, whylen, "its header does not verify");
		return -EBADMSG;
	}
	ct = malloc(size - hl);
	if (!ct || sc_backing_pread_full(b, fd, ct, size - hl, hl, NULL) ||
	    sc_gcm_open(gk, 0, ct, size - hl, buf, NULL) != (int)plain)
		snprintf(why, whylen, "its contents cannot be read or do not authenticate");
	else
		r = (ssize_t)plain;
	free(ct);
	sc_gkey_free(gk);
	return r;
}

/* A length-preserving format: the header in SC_HDR_XATTR.  As small_gcm. */
static ssize_t small_lp(struct sc_backing *b, const struct sc_mkey *mk, int fd, uint64_t size,
			uint8_t *buf, size_t max, char *why, size_t whylen)
{
	uint8_t hdr[HDR_BUF], *ct;
	struct sc_fkey *fk;
	ssize_t hlen, r = -EBADMSG;

	if (size < 1 || size > max) {
		snprintf(why, whylen, "it holds %llu bytes, not 1 to %zu", (unsigned long long)size,
			 max);
		return -EUCLEAN;
	}
	hlen = sc_backing_fgetxattr(b, fd, SC_HDR_XATTR, hdr, sizeof(hdr));
	if (hlen < 0) {
		snprintf(why, whylen, "cannot read its header: %s", strerror((int)-hlen));
		return hlen;
	}
	if (sc_fkey_new(mk, hdr, (size_t)hlen, &fk)) {
		snprintf(why, whylen, "its header does not verify");
		return -EBADMSG;
	}
	ct = malloc(size);
	if (!ct || sc_backing_pread_full(b, fd, ct, size, 0, NULL) ||
	    sc_fkey_decrypt(fk, 0, ct, buf, size, size))
		snprintf(why, whylen, "its contents cannot be read or decrypted");
	else
		r = (ssize_t)size;
	free(ct);
	sc_fkey_free(fk);
	return r;
}

ssize_t sc_vol_read_small(struct sc_backing *b, const struct sc_mkey *mk, const char *rel,
			  void *buf, size_t max, char *why, size_t whylen)
{
	const char *slash = strrchr(rel, '/');
	struct stat st;
	ssize_t r;
	int fd;

	if (max > SC_VOL_SMALL_MAX)
		return -EINVAL;
	fd = sc_backing_open_file(b, -1, slash ? slash + 1 : rel, rel, O_RDONLY);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open it: %s", strerror(-fd));
		return fd;
	}
	if (sc_backing_fstat(b, fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "it is not a regular file");
		r = -EUCLEAN;
	} else if (sc_mkey_cipher(mk) == SC_CIPHER_AES_GCM) {
		r = small_gcm(b, mk, fd, (uint64_t)st.st_size, buf, max, why, whylen);
	} else {
		r = small_lp(b, mk, fd, (uint64_t)st.st_size, buf, max, why, whylen);
	}
	sc_backing_close_file(b, fd);
	return r;
}

bool sc_vol_nonce_in_file(struct sc_backing *b, const struct sc_mkey *mk)
{
	struct stat st;

	/*
	 * Files on an aes-gcm volume (nothing but their copies in xattrs),
	 * else the xattr -- unless the root has a nonce file (a volume made
	 * by the in-process tests; its root may hold the copy too).
	 */
	return sc_mkey_cipher(mk) == SC_CIPHER_AES_GCM ||
	       (sc_backing_lstat(b, SC_DIRNONCE_FILE, &st) == 0 && S_ISREG(st.st_mode));
}

/* The record in rel's xattr, into rec (max bytes): its length, or -errno with why set (if not NULL). */
static ssize_t rec_xattr(struct sc_backing *b, const char *rel, uint8_t *rec, size_t max,
			 char *why, size_t whylen)
{
	ssize_t len = sc_backing_getxattr(b, rel, SC_DIRNONCE_XATTR, rec, max);

	if (len < 0 && why)
		snprintf(why, whylen, "%s", len == -ENODATA ? "missing" :
			 len == -ERANGE ? "wrong length" : strerror((int)-len));
	return len == -ENODATA ? -ENOENT : len;
}

int sc_vol_dir_nonce(struct sc_backing *b, const struct sc_volume *vol,
		     const struct sc_nkey *nk, bool in_file, const char *rel,
		     const struct sc_dirplace *at, uint8_t nonce[SC_DIRNONCE_LEN], bool *copy,
		     char *why, size_t whylen)
{
	uint8_t rec[64], xrec[64];
	ssize_t len, xlen;
	char *path;
	int r;

	if (copy)
		*copy = false;
	if (!in_file) {
		len = rec_xattr(b, rel, rec, sizeof(rec), why, whylen);
	} else {
		path = malloc(strlen(rel) + sizeof("/" SC_DIRNONCE_FILE));
		if (!path) {
			snprintf(why, whylen, "%s", strerror(ENOMEM));
			return -ENOMEM;
		}
		sprintf(path, "%s%s" SC_DIRNONCE_FILE, rel, rel[0] ? "/" : "");
		len = sc_vol_read_small(b, vol->mkey, path, rec, SC_DIRNONCE_REC_MAX + 1, why,
					whylen);
		free(path);
		if (len == -ENOENT)
			snprintf(why, whylen, "missing");
		/*
		 * A file lost or left empty by a crash before it reached the disk
		 * (the mount does not fsync it where its copy in the xattr is kept
		 * instead, format.md 9.2): the copy answers, if it checks below.
		 */
		if (len == -ENOENT || len == -EUCLEAN || len == -EBADMSG) {
			xlen = rec_xattr(b, rel, xrec, sizeof(xrec), NULL, 0);
			r = xlen < 0 ? -1 : at ? sc_dirnonce_open(nk, xrec, (size_t)xlen, at, nonce) :
			    sc_dirnonce_parse(xrec, (size_t)xlen, nonce);
			if (r >= 0) {
				memcpy(rec, xrec, (size_t)xlen);
				len = xlen;
				if (copy)
					*copy = true;
			} else if (xlen >= 0) {
				size_t w = strlen(why);

				snprintf(why + w, whylen - w, "; its copy in the xattr %s",
					 r == -EBADMSG ? "is the record of another directory: "
					 "copied from it, or this directory was moved behind the "
					 "mount" : "is damaged");
			}
		}
	}
	if (len < 0)
		return (int)len;
	r = at ? sc_dirnonce_open(nk, rec, (size_t)len, at, nonce) :
	    sc_dirnonce_parse(rec, (size_t)len, nonce);
	if (r == 1 && (vol->cfg.features & SC_FEAT_NAMES_BOUND)) {
		snprintf(why, whylen, "an unbound version 1 record, which this volume never "
			 "makes: put there behind the mount");
		r = -EIO;
	} else if (r == -EBADMSG) {
		snprintf(why, whylen, "the record of another directory: copied from it, or this "
			 "directory was moved behind the mount");
	} else if (r < 0) {
		snprintf(why, whylen, "%s", r == -EPROTONOSUPPORT ? "unknown version" :
			 r == -EUCLEAN ? "wrong length" : strerror(-r));
	}
	return r < 0 ? r : 0;
}
