/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fmt_lp.c - the length-preserving contents format (null, aes-xts,
 * aes-cbc) under the data engine (engine.c): stored size == plaintext
 * size, unit i at byte i * bs, the per-file header in an extended
 * attribute (docs/format.md).  The crypto library (crypto/) does the
 * cipher work; this file loads plaintext, builds and stores re-encrypted
 * runs, and keeps the header: made at create, replaced when a file drops
 * to 0 bytes, rekeyed on every change of a tiny file.  The engine decides
 * which units, under which locks, in which order.
 *
 * Per-file state (struct cfile) starts with the engine's (size, locks)
 * and adds the verified header and the keyed struct sc_fkey.  It stays
 * cached while the kernel holds a lookup, so an open costs no getxattr
 * after the first one.  The size is the engine's, under the lock, because
 * backing size == plaintext size and every change of it goes through this
 * layer; stat is passed through untouched.  (The backing directory must
 * not be modified behind a live mount.)  A write inside a non-tiny file
 * re-encrypts only the units of its plan (its head and tail units, widened
 * to a tail group it touches) beside other writers of the file (engine.h,
 * locking); fio randwrite with 4 jobs on one file (ext4, B1): 9.8k IOPS
 * with the writers queued in the kernel (-o no_parallel_dio), 51.3k with
 * them here (docs/performance.md section 9).  No per-operation crypto
 * state lives in shared state: tweaks and IVs are built per call by the
 * crypto library, and the buffers are per thread (common.c).
 *
 * Crash order (what a kill -9 of the daemon can leave behind):
 *  - create writes the header (xattr) before the file can hold any data, so
 *    no data is ever stored under a header that does not exist yet.  A
 *    create without owner-write makes the file with it, sets the header,
 *    then drops it (lp_made): killed in between, the file is empty,
 *    perhaps headerless (adopted at its first open, like a mknod'ed one),
 *    and keeps owner-write;
 *  - a write stores whole re-encrypted units with one pwrite per run; runs
 *    go in ascending order, so the old partial last unit is rewritten as a
 *    full unit before anything extends the file past it: at every instant
 *    the file decrypts correctly except possibly inside the units being
 *    written, which hold old or new bytes;
 *  - a shrinking truncate writes the re-encrypted new last unit(s) before
 *    it cuts the file; a growing one re-encrypts the old last unit before
 *    it extends, and leaves the new range a hole (zeros read as zeros);
 *  - a file cut to size 0 (O_TRUNC, truncate, ftruncate) from a larger
 *    size is cut first, then its header is replaced by a fresh one (new
 *    nonce, new keys; rekey_empty): killed in between, it is an empty
 *    file under its old header, which reads correctly;
 *  - a tiny file (< 16 bytes) gets a fresh keystream IV on every change:
 *    data first, then the header carrying the IV.  Killed between the two,
 *    that file (and only it) reads as garbage of the right size;
 *  - errors, not crashes: a growing change that fails after its first run
 *    (EFBIG, ENOSPC) is undone back to the old size, and a run cut short
 *    leaves no partial unit behind (cut_partial_run, undo_growth).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sc_crypto.h"
#include "sc_xlator.h"
#include "xlator_i.h"	/* the shared escape of reserved xattr names */
#include "engine.h"
#include "data_xl.h"

/* Per-file state; see the top of the file. */
struct cfile {
	struct sc_dfile		d;	/* first: the engine's part (size, locks) */
	struct sc_fkey		*fk;	/* rekeyed (tiny IV) only under the write lock */
	uint8_t			hdr[SC_HDR_MAX];	/* as stored; under lock */
	uint8_t			hdr_len;		/* its version's size */
	/*
	 * The tiny IV in hdr was drawn by us and has encrypted nothing yet
	 * (a header just made for an empty file), so the first tiny write
	 * may use it without a rekey: a created file's first small write
	 * then costs no second setxattr.  Under lock.
	 */
	bool			tiny_iv_fresh;
	/*
	 * hdr is not stored yet: an empty headerless file was opened by a
	 * caller who may not write it (user.* xattrs need write permission
	 * on the inode, e.g. mknod with mode 0444, then a read-only open).
	 * hdr_settle stores it, with the credentials of the first caller
	 * who changes the file, before any data.  Under lock.
	 */
	bool			hdr_unstored;
};

/* A change's scratch (struct sc_dchange.fmt): a tiny file's new header, stored after its data. */
struct lp_change {
	uint8_t		newhdr[SC_HDR_MAX];
	bool		rekeyed;
};
_Static_assert(sizeof(struct lp_change) <= SC_DATA_CHANGE_SCRATCH, "lp_change fits");

static struct lp_change *lpc(struct sc_dchange *ch)
{
	return (struct lp_change *)ch->fmt;
}

static struct cfile *cfile_of(struct sc_dfile *df)
{
	return (struct cfile *)df;
}

/* ---- per-file state ------------------------------------------------------- */

/* Header I/O failed: say why when the backing filesystem is the reason. */
static int hdr_io_err(struct sc_xl *xl, struct sc_obj *obj, int ret)
{
	if (ret == -ENOTSUP || ret == -EOPNOTSUPP)
		sc_log(SC_LOG_ERR, "stackcrypt: crypt: %s: the backing "
			 "filesystem does not store user.* extended attributes, which hold the "
			 "file headers\n", sc_obj_name(xl->below, obj));
	return ret;
}

static void cfile_free(struct cfile *cf)
{
	if (!cf)
		return;
	sc_fkey_free(cf->fk);
	sc_data_dfile_destroy(&cf->d);
	sc_wipe(cf->hdr, sizeof(cf->hdr));
	free(cf);
}

/*
 * A new cfile for header hdr.  Returns 0, -ENOMEM, or -EIO when the header
 * does not verify (logged, naming the file).
 */
static int cfile_new(struct sc_xl *xl, struct sc_obj *obj, const uint8_t *hdr, size_t hdr_len,
		     uint64_t size, struct cfile **out)
{
	struct cfile *cf;
	int ret;

	cf = calloc(1, sizeof(*cf));
	if (!cf)
		return -ENOMEM;
	ret = sc_fkey_new(sc_data_of(xl)->mk, hdr, hdr_len, &cf->fk);
	if (ret < 0) {
		const char *why = ret == -EUCLEAN ? "fails authentication (tampered, or from another volume)" :
				  ret == -EPROTONOSUPPORT ? "has a version this build cannot read" :
				  ret == -EINVAL ? "has the wrong size, cipher or block size" :
				  "cannot be used";

		sc_log(SC_LOG_ERR, "stackcrypt: crypt: %s: file header %s; "
			 "returning EIO\n", sc_obj_name(xl->below, obj), why);
		free(cf);
		return ret == -ENOMEM ? ret : -EIO;
	}
	ret = sc_data_dfile_init(&cf->d, size);
	if (ret < 0)
		goto err_free_fkey;
	memcpy(cf->hdr, hdr, hdr_len);
	cf->hdr_len = (uint8_t)hdr_len;
	*out = cf;
	return 0;

err_free_fkey:
	sc_fkey_free(cf->fk);
	free(cf);
	return ret;
}

/*
 * Reads and verifies the header of the backing file obj and returns a new
 * cfile for it.  A regular file without a header gets one if it is empty
 * (created behind our back, or by mknod); with data it is -EIO.
 */
static int cfile_fetch(struct sc_xl *xl, struct sc_obj *obj, struct cfile **out)
{
	uint8_t hdr[SC_HDR_MAX];
	struct stat st;
	ssize_t n;
	int ret, hlen;

	ret = sc_xl_getattr(xl->below, obj, NULL, &st);
	if (ret < 0)
		return ret;
	for (int tries = 0; tries < 2; tries++) {
		n = sc_xl_getxattr(xl->below, obj, SC_HDR_XATTR, hdr, sizeof(hdr));
		if (n != -ENODATA)
			break;
		if (st.st_size > 0) {
			sc_log(SC_LOG_ERR, "stackcrypt: crypt: %s: regular file "
				 "with data but no file header; returning EIO\n",
				 sc_obj_name(xl->below, obj));
			return -EIO;
		}
		hlen = sc_hdr_new(sc_data_of(xl)->mk, hdr);
		if (hlen < 0)
			return hlen;
		/* XATTR_CREATE: if someone else just wrote one, use theirs (read again). */
		ret = sc_xl_setxattr(xl->below, obj, SC_HDR_XATTR, hdr, (size_t)hlen, XATTR_CREATE);
		if (ret == 0 || ret == -EACCES || ret == -EPERM) {
			bool stored = ret == 0;

			ret = cfile_new(xl, obj, hdr, (size_t)hlen, 0, out);
			if (ret == 0) {
				(*out)->tiny_iv_fresh = true;
				(*out)->hdr_unstored = !stored;
			}
			return ret;
		}
		if (ret != -EEXIST)
			return hdr_io_err(xl, obj, ret);
	}
	/* A known version at another length; an unknown version is cfile_new's to name. */
	if (n == -ERANGE ||
	    (n >= 0 && sc_hdr_probe(hdr, (size_t)n, NULL) == SC_HDR_SHAPE_WRONG_SIZE)) {
		sc_log(SC_LOG_ERR, "stackcrypt: crypt: %s: file header has the "
			 "wrong size; returning EIO\n", sc_obj_name(xl->below, obj));
		return -EIO;
	}
	if (n < 0)
		return hdr_io_err(xl, obj, (int)n);
	return cfile_new(xl, obj, hdr, (size_t)n, (uint64_t)st.st_size, out);
}

/* ---- the data path ---------------------------------------------------------- */

/*
 * A run that failed part way (ENOSPC) may have extended the file to the
 * middle of a unit, whose stored bytes then decode under the wrong length
 * and could drag a neighbour into a bogus tail group.  Cut such a file back
 * to the last whole unit it gained (not below its size before the run), so
 * that only the units of the failed run can be wrong.
 */
static void cut_partial_run(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			    uint64_t before)
{
	uint64_t bs = sc_data_of(xl)->bs, keep;
	struct stat st, attr = { 0 };

	if (sc_xl_getattr(xl->below, obj, fh, &st) < 0 || (uint64_t)st.st_size <= before)
		return;
	keep = max_u64((uint64_t)st.st_size / bs * bs, before);
	if (keep == (uint64_t)st.st_size)
		return;
	attr.st_size = (off_t)keep;
	sc_xl_setattr(xl->below, obj, fh, &attr, SC_SET_SIZE, &st);
}

/*
 * Plaintext [off, end) of a file of size sz (end <= sz) into dst, which
 * has room for cap >= end - off bytes.  One read from below.  When the
 * stored range starts at off and fits in dst, it is read and decrypted in
 * place (the common aligned read); otherwise through the scratch buffer.
 */
static int lp_load(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		   struct sc_dfile *df, uint64_t sz, uint64_t off, uint64_t end,
		   uint8_t *dst, size_t cap)
{
	struct cfile *cf = cfile_of(df);
	uint64_t a, b;
	uint8_t *ct;
	int ret;

	sc_data_dec_range(sc_data_of(xl)->bs, sz, off, end, &a, &b);
	if (a == off && b - a <= cap) {
		ct = dst;
	} else {
		ct = sc_data_tbuf_scr(b - a);
		if (!ct)
			return -ENOMEM;
	}
	ret = sc_data_read_exact(xl, obj, fh, ct, b - a, a);
	if (ret < 0)
		return ret;
	ret = sc_fkey_decrypt(cf->fk, a, ct, ct, b - a, sz);
	if (ret < 0)
		return sc_data_crypto_err(xl, ret, "decrypt", a, b - a, sz);
	if (ct != dst)
		memcpy(dst, ct + (off - a), end - off);
	return 0;
}

/*
 * Builds the plaintext of [x, y) of a run starting at A into out: old
 * plaintext below old_sz (unless the write covers it all), zeros beyond,
 * then the write's bytes (src NULL: zeros).
 */
static int build_plain(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		       struct cfile *cf, uint64_t old_sz, uint8_t *out, uint64_t A,
		       uint64_t x, uint64_t y, const uint8_t *src, uint64_t wo, uint64_t we)
{
	uint64_t old_end = min_u64(y, old_sz);
	int ret;

	if (x < old_end && !(wo <= x && we >= old_end)) {
		ret = lp_load(xl, obj, fh, &cf->d, old_sz, x, old_end, out + (x - A), y - x);
		if (ret < 0)
			return ret;
	}
	sc_data_overlay(out + (x - A), x, y, old_sz, src, wo, we);
	return 0;
}

/* Drops a rekey that never reached the disk: back to the stored header's IV. */
static void fk_reset(struct sc_xl *xl, struct cfile *cf)
{
	struct sc_fkey *fk;

	if (sc_fkey_new(sc_data_of(xl)->mk, cf->hdr, cf->hdr_len, &fk) == 0) {
		sc_fkey_free(cf->fk);
		cf->fk = fk;
	}
}

/*
 * Carries out plan p for a change from old_sz to new_sz with the write
 * [wo, we) from src (NULL: zeros), under cf's write lock, or (a write
 * inside the file, write_in_place) its read lock and an exclusive range
 * lock on the plan's units.  Each run is
 * built, encrypted and stored with one write, in ascending order.  On a
 * tiny rekey the new header is left in newhdr and *rekeyed set: the caller
 * stores it after the data (and after a cut).  Returns 0 or -errno.
 */
static int lp_apply(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		    struct sc_dfile *df, const struct sc_data_plan *p, struct sc_dchange *ch)
{
	struct cfile *cf = cfile_of(df);
	uint64_t bs = sc_data_of(xl)->bs, old_sz = ch->old_sz, new_sz = ch->new_sz;
	uint64_t wo = ch->wo, we = ch->we;
	const uint8_t *src = ch->src;
	uint8_t *newhdr = lpc(ch)->newhdr;
	bool *rekeyed = &lpc(ch)->rekeyed;
	uint64_t stored = old_sz;	/* backing size before the current run */
	int ret;

	*rekeyed = false;
	for (unsigned i = 0; i < p->nruns; i++) {
		const struct sc_data_run *r = &p->run[i];
		uint64_t A = r->ua * bs, B = min_u64(r->ub * bs, new_sz);
		uint64_t DA = r->da * bs, DB = min_u64(r->db * bs, new_sz);
		uint64_t seg[2][2] = { { A, DA }, { DB, B } };
		unsigned nseg = 2;
		uint8_t *out;

		if (r->da == r->db) {	/* no direct units: the whole run is one segment */
			seg[0][1] = B;
			nseg = 1;
		}
		out = sc_data_tbuf_out(B - A);
		if (!out)
			return -ENOMEM;
		for (unsigned s = 0; s < nseg; s++) {
			if (seg[s][0] >= seg[s][1])
				continue;
			ret = build_plain(xl, obj, fh, cf, old_sz, out, A, seg[s][0], seg[s][1],
					  src, wo, we);
			if (ret < 0)
				goto err_reset;
		}
		/* All old plaintext is in hand: only now may the tiny IV change. */
		if (p->rekey && r->ua == 0 && cf->tiny_iv_fresh) {
			cf->tiny_iv_fresh = false;
		} else if (p->rekey && r->ua == 0 && !*rekeyed) {
			ret = sc_fkey_tiny_rekey(cf->fk, newhdr);	/* cf->hdr_len bytes */
			if (ret < 0)
				goto err_reset;
			*rekeyed = true;
		}
		for (unsigned s = 0; s < nseg; s++) {
			uint64_t x = seg[s][0], y = seg[s][1];

			if (x >= y)
				continue;
			ret = sc_fkey_encrypt(cf->fk, x, out + (x - A), out + (x - A), y - x, new_sz);
			if (ret < 0) {
				ret = sc_data_crypto_err(xl, ret, "encrypt", x, y - x, new_sz);
				goto err_reset;
			}
		}
		if (nseg == 2) {
			/* Whole units of a large write: out of place, straight from the caller. */
			ret = sc_fkey_encrypt(cf->fk, DA, src + (DA - wo), out + (DA - A), DB - DA,
					      new_sz);
			if (ret < 0) {
				ret = sc_data_crypto_err(xl, ret, "encrypt", DA, DB - DA, new_sz);
				goto err_reset;
			}
		}
		ret = sc_data_write_exact(xl, obj, fh, out, B - A, A);
		if (ret < 0) {
			cut_partial_run(xl, obj, fh, stored);
			goto err_reset;
		}
		stored = max_u64(stored, B);
	}
	return 0;

err_reset:
	if (*rekeyed) {
		fk_reset(xl, cf);
		*rekeyed = false;
	}
	return ret;
}

/* Stores a rekeyed header (after the data it covers) and caches it. */
static int store_hdr(struct sc_xl *xl, struct sc_obj *obj, struct cfile *cf,
		     const uint8_t hdr[SC_HDR_MAX])
{
	int ret = sc_xl_setxattr(xl->below, obj, SC_HDR_XATTR, hdr, cf->hdr_len, XATTR_REPLACE);

	if (ret < 0) {
		sc_log(SC_LOG_ERR, "stackcrypt: crypt: %s: storing the file "
			 "header failed (%s); the file may read as garbage after a remount\n",
			 sc_obj_name(xl->below, obj), strerror(-ret));
		return ret;
	}
	memcpy(cf->hdr, hdr, cf->hdr_len);
	return 0;
}

/*
 * Stores a header that cfile_fetch could not (hdr_unstored), before the
 * file gets any data, under the write lock.  0 or -errno (-EACCES: this
 * caller may not write the file's inode either).
 */
static int hdr_settle(struct sc_xl *xl, struct sc_obj *obj, struct cfile *cf)
{
	int ret;

	if (!cf->hdr_unstored)
		return 0;
	ret = sc_xl_setxattr(xl->below, obj, SC_HDR_XATTR, cf->hdr, cf->hdr_len, XATTR_CREATE);
	if (ret < 0)
		return hdr_io_err(xl, obj, ret);
	cf->hdr_unstored = false;
	return 0;
}

/*
 * A file just cut from data to size 0 gets a fresh header: a new nonce, so
 * new file keys and a new tiny IV.  What is written next then shares no
 * key or tweak with what the file held before, nor with a copy of the
 * file made in the backing directory (cp -a, a restore) that still has the
 * old header.  Called under the write lock after the cut: killed between
 * the two, the file is empty under its old header and reads as the empty
 * file it is.
 *
 * An already-empty file is not rekeyed: its keys have encrypted nothing
 * since its header was made (by create, or by the cut that emptied it),
 * so truncating an empty file, or an O_TRUNC open of a new one, costs no
 * xattr write.  Copies of an empty file made in the backing directory do
 * share its nonce; fsck reports files that share one.
 *
 * Best effort: the cut has happened and the old header is still valid for
 * an empty file, so a header that cannot be replaced leaves the file as it
 * was before this change.  EACCES/EPERM are silent: a caller whose fd was
 * opened writable may not write the inode (a create with mode 0444, under
 * a daemon that is not root), and user.* xattrs need that permission.
 */
static void rekey_empty(struct sc_xl *xl, struct sc_obj *obj, struct cfile *cf)
{
	const struct sc_mkey *mk = sc_data_of(xl)->mk;
	uint8_t hdr[SC_HDR_MAX];
	struct sc_fkey *fk = NULL;
	int hlen, ret;

	hlen = sc_hdr_new(mk, hdr);
	ret = hlen < 0 ? hlen : sc_fkey_new(mk, hdr, (size_t)hlen, &fk);
	if (ret == 0)
		ret = sc_xl_setxattr(xl->below, obj, SC_HDR_XATTR, hdr, (size_t)hlen,
				     XATTR_REPLACE);
	if (ret < 0) {
		sc_fkey_free(fk);
		if (ret != -EACCES && ret != -EPERM)
			sc_log(SC_LOG_ERR, "stackcrypt: crypt: %s: truncated "
				 "to 0 but keeps its old file header (%s)\n",
				 sc_obj_name(xl->below, obj), strerror(-ret));
		return;
	}
	sc_fkey_free(cf->fk);
	cf->fk = fk;
	memcpy(cf->hdr, hdr, (size_t)hlen);
	cf->hdr_len = (uint8_t)hlen;
	cf->tiny_iv_fresh = true;
}

/*
 * A growing change failed after part of it was stored (EFBIG past the
 * backing filesystem's largest file, ENOSPC): the file may have gained
 * units re-encrypted for a larger size.  Shrink it back to old_sz,
 * re-encrypting its last unit for that size, so a failed write, truncate
 * or fallocate leaves the size it found.  Best effort, under the write
 * lock; cf->size follows the backing file whatever happens.
 */
static void lp_undo_growth(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			   struct sc_dfile *df, struct sc_dchange *failed)
{
	struct cfile *cf = cfile_of(df);
	uint64_t old_sz = failed->old_sz, cur;
	struct stat st, attr = { .st_size = (off_t)old_sz };
	struct sc_dchange ch = { 0 };
	struct sc_data_plan p;

	if (sc_xl_getattr(xl->below, obj, fh, &st) < 0)
		return;
	cur = (uint64_t)st.st_size;
	cf->d.size = cur;
	ch.old_sz = cur;
	ch.new_sz = old_sz;
	if (cur <= old_sz || sc_data_plan(sc_data_of(xl)->bs, cur, old_sz, 0, 0, false, &p) < 0 ||
	    lp_apply(xl, obj, fh, df, &p, &ch) < 0)
		return;
	if (sc_xl_setattr(xl->below, obj, fh, &attr, SC_SET_SIZE, &st) < 0) {
		if (lpc(&ch)->rekeyed)
			fk_reset(xl, cf);
		return;
	}
	cf->d.size = old_sz;
	if (lpc(&ch)->rekeyed)
		store_hdr(xl, obj, cf, lpc(&ch)->newhdr);
}

/*
 * Extended attribute names (docs/format.md, "Extended attribute names"):
 * the header name H (SC_HDR_XATTR) is this layer's, and so is every name
 * H + "!" + s with s neither empty nor starting with "!".  The layers
 * above have reserved names of their own -- the very same H when a
 * stackcrypt volume lives inside this one, or when a backing tree is
 * copied in with cp -a -- so their names are escaped on the way down and
 * shown unescaped on the way up, by the rule every layer with a reserved
 * name shares (fs/xlators/xlator_i.h, sc_xl_*xattr_esc).  The rule is
 * about names only; it does not depend on where headers live.
 */
static ssize_t crypt_getxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
			      void *buf, size_t size)
{
	return sc_xl_getxattr_esc(xl, SC_HDR_XATTR, obj, name, buf, size);
}

static ssize_t crypt_listxattr(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	return sc_xl_listxattr_esc(xl, SC_HDR_XATTR, obj, buf, size);
}

static int crypt_setxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
			  const void *value, size_t size, int flags)
{
	return sc_xl_setxattr_esc(xl, SC_HDR_XATTR, obj, name, value, size, flags);
}

static int crypt_removexattr(struct sc_xl *xl, struct sc_obj *obj, const char *name)
{
	return sc_xl_removexattr_esc(xl, SC_HDR_XATTR, obj, name);
}

/*
 * Sets the mode bits of the file we just created (fd in fh) to mode and
 * refreshes *st.  0 or -errno.
 */
static int set_mode(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, mode_t mode,
		    struct stat *st)
{
	struct stat attr = { .st_mode = mode & 07777 };

	return sc_xl_setattr(xl->below, obj, fh, &attr, SC_SET_MODE, st);
}

/*
 * made (create, engine.c): the backing file was just created with O_EXCL
 * and owner-write (create_owner_write), and gets a fresh header before
 * the call returns (so before any data).
 *
 * Setting a user.* xattr needs write permission on the inode, even through
 * a writable fd, so a caller who creates a file without owner-write (mode
 * 0, 0444: cp -p of a read-only file) could not give it its header.  The
 * backing file is therefore always created with owner-write added; after
 * the header is set, the mode goes back to what the creation made minus
 * that bit, which is exactly the mode creating with the caller's mode
 * makes: the kernel applied the caller's umask before the request reached
 * us (the daemon's is 0), a default ACL masks each class of bits
 * separately, and the setgid strip of a setgid directory does not look at
 * owner-write.  The caller owns the new file, so the chmod is one it may
 * make itself; the xattr is set with the caller's credentials.  A default
 * ACL that denies the owner write is met the same way (owner-write added
 * by chmod first).  Killed between the steps, the file is empty, with or
 * without its header, and carries owner-write: it reads and opens
 * normally (cfile_fetch adopts an empty headerless file) and only its mode
 * shows the interruption.
 */
static int lp_made(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, mode_t mode,
		   struct stat *st, struct sc_dfile **out)
{
	mode_t want = st->st_mode & (mode & S_IWUSR ? 07777 : 07777 & ~S_IWUSR);
	uint8_t hdr[SC_HDR_MAX];
	struct cfile *cf = NULL;
	size_t hlen = 0;
	int ret = 0;

	if (!(st->st_mode & S_IWUSR))
		ret = set_mode(xl, obj, fh, st->st_mode | S_IWUSR, st);
	if (ret == 0)
		ret = sc_hdr_new(sc_data_of(xl)->mk, hdr);
	if (ret > 0) {
		hlen = (size_t)ret;
		ret = sc_xl_setxattr(xl->below, obj, SC_HDR_XATTR, hdr, hlen, XATTR_CREATE);
		if (ret < 0)
			hdr_io_err(xl, obj, ret);
	}
	if (ret == 0)
		ret = cfile_new(xl, obj, hdr, hlen, 0, &cf);
	if (ret == 0) {
		cf->tiny_iv_fresh = true;
		if ((st->st_mode & 07777) != want)
			ret = set_mode(xl, obj, fh, want, st);
	}
	if (ret < 0) {
		cfile_free(cf);
		return ret;
	}
	*out = &cf->d;
	return 0;
}

/* SEEK_DATA/SEEK_HOLE: backing holes are plaintext holes; results on unit bounds. */
static off_t crypt_lseek(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 off_t off, int whence)
{
	uint64_t bs = sc_data_of(xl)->bs;
	struct sc_dfile *df;
	off_t r;
	int ret;

	if (!S_ISREG(obj->type) || (whence != SEEK_DATA && whence != SEEK_HOLE))
		return sc_xl_lseek(xl->below, obj, fh, off, whence);
	ret = sc_data_load(xl, obj, fh, &df);
	if (ret < 0)
		return ret;
	pthread_rwlock_rdlock(&df->lock);
	r = sc_xl_lseek(xl->below, obj, fh, off, whence);
	if (r >= 0 && whence == SEEK_DATA)
		r = (off_t)max_u64((uint64_t)off, (uint64_t)r / bs * bs);
	else if (r >= 0)
		r = (off_t)max_u64((uint64_t)off,
				   min_u64(df->size, sc_data_nunits(bs, (uint64_t)r) * bs));
	pthread_rwlock_unlock(&df->lock);
	return r;
}

/* ---- the format's operations (engine.h) ---------------------------------- */

static int lp_fetch(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct sc_dfile **out)
{
	struct cfile *cf;
	int ret;

	(void)fh;
	ret = cfile_fetch(xl, obj, &cf);
	if (ret == 0)
		*out = &cf->d;
	return ret;
}

static void lp_free(struct sc_dfile *df)
{
	cfile_free(cfile_of(df));
}

/* Stored size == plaintext size. */
static uint64_t lp_stored_of(const struct sc_xl *xl, const struct sc_dfile *df, uint64_t plain)
{
	(void)xl;
	(void)df;
	return plain;
}

static uint64_t lp_plain_of(const struct sc_xl *xl, uint64_t stored)
{
	(void)xl;
	return stored;
}

/* A file that grows stores a header it could not store at its first open, before any data. */
static int lp_begin(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct sc_dfile *df,
		    struct sc_dchange *ch)
{
	(void)fh;
	return ch->new_sz > ch->old_sz ? hdr_settle(xl, obj, cfile_of(df)) : 0;
}

/* After the data: a tiny file's new header; a file cut to 0 gets a fresh one. */
static int lp_commit(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		     struct sc_dfile *df, struct sc_dchange *ch)
{
	(void)fh;
	struct cfile *cf = cfile_of(df);
	int ret = 0;

	if (lpc(ch)->rekeyed)
		ret = store_hdr(xl, obj, cf, lpc(ch)->newhdr);
	if (ret == 0 && ch->new_sz == 0 && ch->old_sz > 0)
		rekey_empty(xl, obj, cf);
	return ret;
}

/* A tiny rekey that never reached the disk is dropped. */
static void lp_abort(struct sc_xl *xl, struct sc_dfile *df, struct sc_dchange *ch)
{
	if (lpc(ch)->rekeyed) {
		fk_reset(xl, cfile_of(df));
		lpc(ch)->rekeyed = false;
	}
}

/* Stored bytes == plaintext bytes: the request goes below as it is. */
static int lp_falloc(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct sc_dfile *df,
		     int mode, uint64_t off, uint64_t end)
{
	(void)df;
	return sc_xl_fallocate(xl->below, obj, fh, mode, (off_t)off, (off_t)(end - off));
}

static const struct sc_data_fmt lp_fmt = {
	.tail_rule		= true,
	.sizes_differ		= false,
	.create_owner_write	= true,
	.fetch			= lp_fetch,
	.made			= lp_made,
	.free			= lp_free,
	.stored_of		= lp_stored_of,
	.plain_of		= lp_plain_of,
	.load			= lp_load,
	.begin			= lp_begin,
	.apply			= lp_apply,
	.commit			= lp_commit,
	.abort			= lp_abort,
	.undo_growth		= lp_undo_growth,
	.falloc			= lp_falloc,
};

static const struct sc_xl_ops lp_ops = {
	.name			= "crypt",
	.destroy		= sc_data_op_destroy,
	.lookup			= sc_data_op_lookup,
	.link			= sc_data_op_link,
	.getxattr		= crypt_getxattr,
	.listxattr		= crypt_listxattr,
	.setxattr		= crypt_setxattr,
	.removexattr		= crypt_removexattr,
	.lseek			= crypt_lseek,
	SC_DATA_XL_OPS,
};

/* Returns 0, -ENOMEM or -EINVAL (see data_xl.h). */
int sc_crypt_xl_new(struct sc_xl *below, const struct sc_mkey *mk,
		    const struct sc_stack_hide *hide, struct sc_xl **out)
{
	struct sc_data *d;
	struct sc_xl *xl;
	int ret;

	/* aes-gcm is not length-preserving: its files are the authenticated format's. */
	if (!mk || sc_mkey_cipher(mk) == SC_CIPHER_AES_GCM)
		return -EINVAL;
	xl = calloc(1, sizeof(*xl));
	d = calloc(1, sizeof(*d));
	ret = xl && d ? sc_data_layer_init(xl, below, &lp_ops, d, &lp_fmt, mk, hide) : -ENOMEM;
	if (ret < 0) {
		free(xl);
		free(d);
		return ret;
	}
	*out = xl;
	return 0;
}
