/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crypt.c - the crypt translator: plaintext above, ciphertext below.
 *
 * It sits between the front end and the posix translator and intercepts
 * only what touches file contents, the per-file header or the hidden
 * volume config; every other operation is left NULL and forwarded by the
 * sc_xl_*() macros.  The crypto library (crypto/, docs/format.md) does the
 * cipher work; this file decides which stored bytes to read, decrypt,
 * re-encrypt and write, using the pure unit arithmetic of crypt_span.c.
 *
 * Per-file state (struct cfile) hangs off obj->priv[xl->id] from the first
 * open/create/truncate of a regular file until ->forget: the verified
 * header, the keyed struct sc_fkey, the file size, and the inode
 * lock.  It stays cached while the kernel holds a lookup, so an open costs
 * no getxattr after the first one.  The size is kept here, under the lock,
 * because backing size == plaintext size and every change of it goes
 * through this layer; stat is passed through untouched.  (The backing
 * directory must not be modified behind a live mount.)
 *
 * Locking: one writer-preferring rwlock per file, and under it, held
 * shared, a range lock on data units (rangelock.c).  Reads hold the rwlock
 * shared and their units shared.  A write that stays inside a non-tiny
 * file changes no size and no header and re-encrypts only the units of its
 * plan (its head and tail units, widened to a tail group it touches): it
 * holds the rwlock shared and those units exclusive, so writers of
 * different units of one file run in parallel, as O_DIRECT writers arrive
 * (FOPEN_PARALLEL_DIRECT_WRITES, fs/fuse/wire.c) and as write-back of cached
 * pages does.  Everything that moves the size or the header (a write past
 * EOF, a tiny file's write, truncate, fallocate) holds the rwlock
 * exclusive: it re-encrypts the last unit and tail group that readers and
 * other writers decrypt, and the size they plan from must not move under
 * them.  fio randwrite with 4 jobs on one file (ext4, B1): 9.8k IOPS with
 * the writers queued in the kernel (-o no_parallel_dio), 51.3k with them
 * here (docs/performance.md section 9).
 * No per-operation crypto state lives in shared state:
 * tweaks and IVs are built per call by the crypto library, and the
 * plaintext/ciphertext buffers are per thread (grown once, reused).
 *
 * Crash order (what a kill -9 of the daemon can leave behind):
 *  - create writes the header (xattr) before the file can hold any data, so
 *    no data is ever stored under a header that does not exist yet.  A
 *    create without owner-write makes the file with it, sets the header,
 *    then drops it (crypt_create): killed in between, the file is empty,
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
#include "crypt_i.h"
#include "crypt_xl.h"
#include "rangelock.h"

struct crypt_priv {
	struct sc_crypt_hidden	hidden;	/* first: the shared operations find it here */
	const struct sc_mkey	*mk;
	uint64_t		bs;
};

/* Per-file state; see the top of the file. */
struct cfile {
	pthread_rwlock_t	lock;
	struct sc_rlock		units;	/* under lock held shared; see the top */
	struct sc_fkey		*fk;	/* rekeyed (tiny IV) only under the write lock */
	uint64_t		size;	/* under lock */
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

/*
 * fh->priv[xl->id]: after a create, the new file's cfile (its obj did not
 * exist yet), installed into the obj by the first operation on it.
 *
 * O_APPEND needs nothing here: the kernel places appending write(2)s at
 * its i_size under the inode lock (generic_write_checks) and sends that
 * offset, and the write-back of a shared mapping of an O_APPEND file
 * arrives through the same handle with real offsets, so this layer must
 * honour every offset it is given.  The backing fd is opened without
 * O_APPEND so that pwrite() honours it too.
 */

static struct crypt_priv *cpriv(const struct sc_xl *xl)
{
	return xl->priv;
}

/* ---- per-file state ------------------------------------------------------- */

/* Header I/O failed: say why when the backing filesystem is the reason. */
static int hdr_io_err(struct sc_xl *xl, struct sc_obj *obj, int ret)
{
	if (ret == -ENOTSUP || ret == -EOPNOTSUPP)
		sc_log(SC_LOG_ERR, "stackcrypt: crypt: backing inode %llu: the backing "
			 "filesystem does not store user.* extended attributes, which hold the "
			 "file headers\n", sc_crypt_backing_ino(xl, obj));
	return ret;
}

static void cfile_free(struct cfile *cf)
{
	if (!cf)
		return;
	sc_fkey_free(cf->fk);
	sc_crypt_locks_destroy(&cf->lock, &cf->units);
	sc_wipe(cf->hdr, sizeof(cf->hdr));
	free(cf);
}

/*
 * A new cfile for header hdr.  Returns 0, -ENOMEM, or -EIO when the header
 * does not verify (logged, naming the backing inode).
 */
static int cfile_new(struct sc_xl *xl, struct sc_obj *obj, const uint8_t *hdr, size_t hdr_len,
		     uint64_t size, struct cfile **out)
{
	struct cfile *cf;
	int ret;

	cf = calloc(1, sizeof(*cf));
	if (!cf)
		return -ENOMEM;
	ret = sc_fkey_new(cpriv(xl)->mk, hdr, hdr_len, &cf->fk);
	if (ret < 0) {
		const char *why = ret == -EUCLEAN ? "fails authentication (tampered, or from another volume)" :
				  ret == -EPROTONOSUPPORT ? "has a version this build cannot read" :
				  ret == -EINVAL ? "has the wrong size, cipher or block size" :
				  "cannot be used";

		sc_log(SC_LOG_ERR, "stackcrypt: crypt: backing inode %llu: file header %s; "
			 "returning EIO\n", sc_crypt_backing_ino(xl, obj), why);
		free(cf);
		return ret == -ENOMEM ? ret : -EIO;
	}
	ret = sc_crypt_locks_init(&cf->lock, &cf->units);
	if (ret < 0)
		goto err_free_fkey;
	memcpy(cf->hdr, hdr, hdr_len);
	cf->hdr_len = (uint8_t)hdr_len;
	cf->size = size;
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
			sc_log(SC_LOG_ERR, "stackcrypt: crypt: backing inode %llu: regular file "
				 "with data but no file header; returning EIO\n",
				 (unsigned long long)st.st_ino);
			return -EIO;
		}
		hlen = sc_hdr_new(cpriv(xl)->mk, hdr);
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
		sc_log(SC_LOG_ERR, "stackcrypt: crypt: backing inode %llu: file header has the "
			 "wrong size; returning EIO\n", (unsigned long long)st.st_ino);
		return -EIO;
	}
	if (n < 0)
		return hdr_io_err(xl, obj, (int)n);
	return cfile_new(xl, obj, hdr, (size_t)n, (uint64_t)st.st_size, out);
}

static int cf_fetch(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, void **out)
{
	(void)fh;
	return cfile_fetch(xl, obj, (struct cfile **)out);
}

static void cf_free(void *cf)
{
	cfile_free(cf);
}

static const struct sc_crypt_state_ops cf_ops = { .fetch = cf_fetch, .free = cf_free };

/* obj's state, made on first use; fh may carry a create's.  0 or cfile_fetch's -errno. */
static int cf_load(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct cfile **out)
{
	return sc_crypt_state_load(xl, obj, fh, &cf_ops, (void **)out);
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
	uint64_t bs = cpriv(xl)->bs, keep;
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
static int load_plain(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      struct cfile *cf, uint64_t sz, uint64_t off, uint64_t end,
		      uint8_t *dst, size_t cap)
{
	uint64_t a, b;
	uint8_t *ct;
	int ret;

	sc_crypt_dec_range(cpriv(xl)->bs, sz, off, end, &a, &b);
	if (a == off && b - a <= cap) {
		ct = dst;
	} else {
		ct = sc_crypt_tbuf_scr(b - a);
		if (!ct)
			return -ENOMEM;
	}
	ret = sc_crypt_read_exact(xl, obj, fh, ct, b - a, a);
	if (ret < 0)
		return ret;
	ret = sc_fkey_decrypt(cf->fk, a, ct, ct, b - a, sz);
	if (ret < 0)
		return sc_crypt_crypto_err(xl, ret, "decrypt", a, b - a, sz);
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
		ret = load_plain(xl, obj, fh, cf, old_sz, x, old_end, out + (x - A), y - x);
		if (ret < 0)
			return ret;
	}
	if (old_end < y)
		memset(out + (max_u64(old_end, x) - A), 0, y - max_u64(old_end, x));
	if (wo < y && we > x) {
		uint64_t c0 = max_u64(x, wo), c1 = min_u64(y, we);

		if (src)
			memcpy(out + (c0 - A), src + (c0 - wo), c1 - c0);
		else
			memset(out + (c0 - A), 0, c1 - c0);
	}
	return 0;
}

/* Drops a rekey that never reached the disk: back to the stored header's IV. */
static void fk_reset(struct sc_xl *xl, struct cfile *cf)
{
	struct sc_fkey *fk;

	if (sc_fkey_new(cpriv(xl)->mk, cf->hdr, cf->hdr_len, &fk) == 0) {
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
static int apply_plan(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      struct cfile *cf, const struct sc_crypt_plan *p,
		      uint64_t old_sz, uint64_t new_sz, const uint8_t *src,
		      uint64_t wo, uint64_t we, uint8_t newhdr[SC_HDR_MAX], bool *rekeyed)
{
	uint64_t bs = cpriv(xl)->bs;
	uint64_t stored = old_sz;	/* backing size before the current run */
	int ret;

	*rekeyed = false;
	for (unsigned i = 0; i < p->nruns; i++) {
		const struct sc_crypt_run *r = &p->run[i];
		uint64_t A = r->ua * bs, B = min_u64(r->ub * bs, new_sz);
		uint64_t DA = r->da * bs, DB = min_u64(r->db * bs, new_sz);
		uint64_t seg[2][2] = { { A, DA }, { DB, B } };
		unsigned nseg = 2;
		uint8_t *out;

		if (r->da == r->db) {	/* no direct units: the whole run is one segment */
			seg[0][1] = B;
			nseg = 1;
		}
		out = sc_crypt_tbuf_out(B - A);
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
				ret = sc_crypt_crypto_err(xl, ret, "encrypt", x, y - x, new_sz);
				goto err_reset;
			}
		}
		if (nseg == 2) {
			/* Whole units of a large write: out of place, straight from the caller. */
			ret = sc_fkey_encrypt(cf->fk, DA, src + (DA - wo), out + (DA - A), DB - DA,
					      new_sz);
			if (ret < 0) {
				ret = sc_crypt_crypto_err(xl, ret, "encrypt", DA, DB - DA, new_sz);
				goto err_reset;
			}
		}
		ret = sc_crypt_write_exact(xl, obj, fh, out, B - A, A);
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
		sc_log(SC_LOG_ERR, "stackcrypt: crypt: backing inode %llu: storing the file "
			 "header failed (%s); the file may read as garbage after a remount\n",
			 sc_crypt_backing_ino(xl, obj), strerror(-ret));
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
	const struct sc_mkey *mk = cpriv(xl)->mk;
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
			sc_log(SC_LOG_ERR, "stackcrypt: crypt: backing inode %llu: truncated "
				 "to 0 but keeps its old file header (%s)\n",
				 sc_crypt_backing_ino(xl, obj), strerror(-ret));
		return;
	}
	sc_fkey_free(cf->fk);
	cf->fk = fk;
	memcpy(cf->hdr, hdr, (size_t)hlen);
	cf->hdr_len = (uint8_t)hlen;
	cf->tiny_iv_fresh = true;
}

/* After a failed change, believe the backing file's size again. */
static void resync_size(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct cfile *cf)
{
	struct stat st;

	if (sc_xl_getattr(xl->below, obj, fh, &st) == 0)
		cf->size = (uint64_t)st.st_size;
}

/*
 * Re-encrypts what a size change from cf->size to new_sz needs (no data
 * written), under the write lock, through the backing fd of fh.  The
 * caller then changes the size below and stores *newhdr if *rekeyed.
 */
static int resize_prepare(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  struct cfile *cf, uint64_t new_sz, uint8_t newhdr[SC_HDR_MAX],
			  bool *rekeyed)
{
	struct sc_crypt_plan p;
	int ret;

	*rekeyed = false;
	ret = sc_crypt_plan(cpriv(xl)->bs, cf->size, new_sz, 0, 0, false, &p);
	if (ret < 0 || p.nruns == 0)
		return ret;
	return apply_plan(xl, obj, fh, cf, &p, cf->size, new_sz, NULL, 0, 0, newhdr, rekeyed);
}

/*
 * A growing change failed after part of it was stored (EFBIG past the
 * backing filesystem's largest file, ENOSPC): the file may have gained
 * units re-encrypted for a larger size.  Shrink it back to old_sz,
 * re-encrypting its last unit for that size, so a failed write, truncate
 * or fallocate leaves the size it found.  Best effort, under the write
 * lock; cf->size follows the backing file whatever happens.
 */
static void undo_growth(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			struct cfile *cf, uint64_t old_sz)
{
	struct stat st, attr = { .st_size = (off_t)old_sz };
	uint8_t newhdr[SC_HDR_MAX];
	struct sc_crypt_plan p;
	bool rekeyed;
	uint64_t cur;

	if (sc_xl_getattr(xl->below, obj, fh, &st) < 0)
		return;
	cur = (uint64_t)st.st_size;
	cf->size = cur;
	if (cur <= old_sz || sc_crypt_plan(cpriv(xl)->bs, cur, old_sz, 0, 0, false, &p) < 0 ||
	    apply_plan(xl, obj, fh, cf, &p, cur, old_sz, NULL, 0, 0, newhdr, &rekeyed) < 0)
		return;
	if (sc_xl_setattr(xl->below, obj, fh, &attr, SC_SET_SIZE, &st) < 0) {
		if (rekeyed)
			fk_reset(xl, cf);
		return;
	}
	cf->size = old_sz;
	if (rekeyed)
		store_hdr(xl, obj, cf, newhdr);
}

/* ---- operations ----------------------------------------------------------- */

static void crypt_forget(struct sc_xl *xl, struct sc_obj *obj)
{
	cfile_free(obj->priv[xl->id]);
	obj->priv[xl->id] = NULL;
}

/*
 * setattr: a size change re-encrypts the units whose encoding depends on
 * the size (new last unit before the cut; old last unit before growing),
 * then lets the posix layer change the size and every other attribute in
 * one call.  Other attributes pass through.
 */
static int crypt_setattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 const struct stat *attr, int valid, struct stat *st)
{
	struct sc_fh tmp = { .fd = -1, .flags = O_RDWR };
	uint8_t newhdr[SC_HDR_MAX];
	uint64_t old_sz, new_sz;
	struct cfile *cf;
	bool rekeyed = false;
	int ret;

	if (!(valid & SC_SET_SIZE) || !S_ISREG(obj->type))
		return sc_xl_setattr(xl->below, obj, fh, attr, valid, st);
	if (attr->st_size < 0)
		return -EINVAL;
	ret = cf_load(xl, obj, fh, &cf);
	if (ret < 0)
		return ret;
	/* truncate(2) by path: re-encryption and undo need a backing fd. */
	if (!fh) {
		ret = sc_xl_open(xl->below, obj, &tmp);
		if (ret < 0)
			return ret;
		fh = &tmp;
	}
	pthread_rwlock_wrlock(&cf->lock);
	old_sz = cf->size;
	new_sz = (uint64_t)attr->st_size;
	ret = new_sz > old_sz ? hdr_settle(xl, obj, cf) : 0;
	if (ret == 0)
		ret = resize_prepare(xl, obj, fh, cf, new_sz, newhdr, &rekeyed);
	if (ret == 0)
		ret = sc_xl_setattr(xl->below, obj, fh, attr, valid, st);
	if (ret == 0) {
		cf->size = new_sz;
		if (rekeyed)
			ret = store_hdr(xl, obj, cf, newhdr);
		if (new_sz == 0 && old_sz > 0)
			rekey_empty(xl, obj, cf);
	} else {
		if (rekeyed)
			fk_reset(xl, cf);
		if (new_sz > old_sz)
			undo_growth(xl, obj, fh, cf, old_sz);
		else
			resync_size(xl, obj, fh, cf);
	}
	pthread_rwlock_unlock(&cf->lock);
	if (fh == &tmp)
		sc_xl_release(xl->below, obj, &tmp);
	return ret;
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
 * open: the header is loaded and verified once per inode (-EIO if bad),
 * then the backing file is opened read-write without O_APPEND/O_DIRECT.
 * O_TRUNC runs under the write lock so no reader sees the old size, and
 * a file it empties gets a fresh header (rekey_empty).
 */
static int crypt_open(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	int uflags = fh->flags;
	struct cfile *cf;
	int ret;

	if (!S_ISREG(obj->type))
		return sc_xl_open(xl->below, obj, fh);
	ret = cf_load(xl, obj, NULL, &cf);
	if (ret < 0)
		return ret;
	fh->flags = sc_crypt_backing_flags(uflags);
	if (uflags & O_TRUNC)
		pthread_rwlock_wrlock(&cf->lock);
	ret = sc_xl_open(xl->below, obj, fh);
	if (ret == -EACCES && (uflags & O_ACCMODE) == O_WRONLY) {
		/* Write-only permission: whole-unit writes still work, RMW will not. */
		fh->flags = (fh->flags & ~O_ACCMODE) | O_WRONLY;
		ret = sc_xl_open(xl->below, obj, fh);
	}
	if (uflags & O_TRUNC) {
		if (ret == 0 && cf->size > 0) {
			cf->size = 0;
			rekey_empty(xl, obj, cf);
		}
		pthread_rwlock_unlock(&cf->lock);
	}
	fh->flags = uflags;
	return ret;
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
 * create: the backing file is created, then given a fresh header before
 * the call returns (so before any data).  If the file already existed (no
 * O_EXCL), its header is used instead.  On failure a file we made is
 * unlinked.
 *
 * Setting a user.* xattr needs write permission on the inode, even through
 * a writable fd, so a caller who creates a file without owner-write (mode
 * 0, 0444: cp -p of a read-only file) could not give it its header.  The
 * backing file is therefore always created with O_EXCL (so we know it is
 * ours) and with owner-write added; after the header is set, the mode
 * goes back to what the creation made minus that bit, which is exactly
 * the mode creating with the caller's mode makes: the kernel applied the
 * caller's umask before the request reached us (the daemon's is 0), a
 * default ACL masks each class of bits separately, and the setgid strip
 * of a setgid directory does not look at owner-write.  The caller owns the
 * new file, so the chmod is one it may make itself; the xattr is set with
 * the caller's credentials.  A default ACL that denies the owner write is
 * met the same way (owner-write added by chmod first).  Killed between
 * the steps, the file is empty, with or without its header, and carries
 * owner-write: it reads and opens normally (cfile_fetch adopts an empty
 * headerless file) and only its mode shows the interruption.  A name that
 * exists (created behind the mount; the kernel sends CREATE only for
 * names it believes absent) is opened as before, without the O_EXCL.
 */
static int crypt_create(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			mode_t mode, struct sc_fh *fh, int *fd_out, struct stat *st)
{
	uint8_t hdr[SC_HDR_MAX];
	struct sc_obj nobj = { .type = S_IFREG };
	size_t hlen = 0;
	int uflags = fh->flags;
	struct cfile *cf = NULL;
	mode_t want = 0;
	bool made = true;
	int ret;

	if (sc_crypt_is_hidden(xl, dir, name))
		return -EPERM;
	fh->flags = sc_crypt_backing_flags(uflags) | O_EXCL;
	ret = sc_xl_create(xl->below, dir, name, mode | S_IWUSR, fh, fd_out, st);
	if (ret == -EEXIST && !(uflags & O_EXCL)) {
		made = false;
		fh->flags = sc_crypt_backing_flags(uflags);
		ret = sc_xl_create(xl->below, dir, name, mode, fh, fd_out, st);
	}
	fh->flags = uflags;
	if (ret < 0)
		return ret;
	nobj.fd = *fd_out;
	if (!made) {
		ret = cfile_fetch(xl, &nobj, &cf);
		goto out_cfile;
	}
	want = st->st_mode & (mode & S_IWUSR ? 07777 : 07777 & ~S_IWUSR);
	if (!(st->st_mode & S_IWUSR))
		ret = set_mode(xl, &nobj, fh, st->st_mode | S_IWUSR, st);
	if (ret == 0)
		ret = sc_hdr_new(cpriv(xl)->mk, hdr);
	if (ret > 0) {
		hlen = (size_t)ret;
		ret = sc_xl_setxattr(xl->below, &nobj, SC_HDR_XATTR, hdr, hlen, XATTR_CREATE);
		if (ret < 0)
			hdr_io_err(xl, &nobj, ret);
	}
	if (ret == 0)
		ret = cfile_new(xl, &nobj, hdr, hlen, 0, &cf);
	if (ret == 0) {
		cf->tiny_iv_fresh = true;
		if ((st->st_mode & 07777) != want)
			ret = set_mode(xl, &nobj, fh, want, st);
	}
out_cfile:
	if (ret < 0)
		goto err_release;
	fh->priv[xl->id] = cf;
	return 0;

err_release:
	cfile_free(cf);
	sc_xl_release(xl->below, &nobj, fh);
	sc_xl_drop_fd(xl->below, *fd_out);
	*fd_out = -1;
	if (made || (uflags & O_EXCL))
		sc_xl_unlink(xl->below, dir, name);
	return ret;
}

static ssize_t crypt_read(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  void *buf, size_t size, off_t off)
{
	uint64_t bs = cpriv(xl)->bs, end, a, b;
	struct cfile *cf;
	int ret, tok;

	if (!S_ISREG(obj->type))
		return sc_xl_read(xl->below, obj, fh, buf, size, off);
	if (off < 0)
		return -EINVAL;
	ret = cf_load(xl, obj, fh, &cf);
	if (ret < 0)
		return ret;
	pthread_rwlock_rdlock(&cf->lock);
	if ((uint64_t)off >= cf->size || size == 0) {
		pthread_rwlock_unlock(&cf->lock);
		return 0;
	}
	end = min_u64((uint64_t)off + size, cf->size);
	sc_crypt_dec_range(bs, cf->size, (uint64_t)off, end, &a, &b);
	tok = sc_rlock_lock(&cf->units, a / bs, sc_crypt_nunits(bs, b), false);
	ret = load_plain(xl, obj, fh, cf, cf->size, (uint64_t)off, end, buf, size);
	sc_rlock_unlock(&cf->units, tok);
	pthread_rwlock_unlock(&cf->lock);
	return ret < 0 ? ret : (ssize_t)(end - (uint64_t)off);
}

/*
 * A write inside the file that leaves it non-tiny changes no size, no
 * header and no unit outside its plan: it runs under the file lock held
 * shared and an exclusive lock on its plan's units, beside reads and
 * writes of other units.  Returns 1 if the write is not of that kind (the
 * caller takes the write lock), else 0 or -errno.
 */
static int write_in_place(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  struct cfile *cf, const uint8_t *src, uint64_t wo, uint64_t we)
{
	uint8_t newhdr[SC_HDR_MAX];
	struct sc_crypt_plan p;
	bool rekeyed;
	uint64_t sz;
	int ret, tok;

	pthread_rwlock_rdlock(&cf->lock);
	sz = cf->size;
	if (we > sz || sz < SC_CRYPT_TINY) {
		ret = 1;
		goto out_unlock;
	}
	/* wo < we <= sz and sz >= 16: at least one run, and no tiny rekey. */
	ret = sc_crypt_plan(cpriv(xl)->bs, sz, sz, wo, we, true, &p);
	if (ret < 0)
		goto out_unlock;
	/* Runs ascend and include their tail group: their span is all we touch. */
	tok = sc_rlock_lock(&cf->units, p.run[0].ua, p.run[p.nruns - 1].ub, true);
	ret = apply_plan(xl, obj, fh, cf, &p, sz, sz, src, wo, we, newhdr, &rekeyed);
	sc_rlock_unlock(&cf->units, tok);
out_unlock:
	pthread_rwlock_unlock(&cf->lock);
	return ret;
}

static ssize_t crypt_write(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			   const void *buf, size_t size, off_t off)
{
	uint8_t newhdr[SC_HDR_MAX];
	struct sc_crypt_plan p;
	struct cfile *cf;
	uint64_t old_sz, new_sz, wo = (uint64_t)off;
	bool rekeyed = false;
	int ret;

	if (!S_ISREG(obj->type))
		return sc_xl_write(xl->below, obj, fh, buf, size, off);
	if (off < 0)
		return -EINVAL;
	ret = cf_load(xl, obj, fh, &cf);
	if (ret < 0)
		return ret;
	if (size == 0)
		return 0;
	ret = write_in_place(xl, obj, fh, cf, buf, wo, wo + size);
	if (ret <= 0)
		return ret < 0 ? ret : (ssize_t)size;
	pthread_rwlock_wrlock(&cf->lock);
	old_sz = cf->size;
	new_sz = max_u64(old_sz, wo + size);
	ret = hdr_settle(xl, obj, cf);
	if (ret == 0)
		ret = sc_crypt_plan(cpriv(xl)->bs, old_sz, new_sz, wo, wo + size, true, &p);
	if (ret == 0)
		ret = apply_plan(xl, obj, fh, cf, &p, old_sz, new_sz, buf, wo, wo + size,
				 newhdr, &rekeyed);
	if (ret == 0) {
		cf->size = new_sz;
		if (rekeyed)
			ret = store_hdr(xl, obj, cf, newhdr);
	} else {
		undo_growth(xl, obj, fh, cf, old_sz);
	}
	pthread_rwlock_unlock(&cf->lock);
	return ret < 0 ? ret : (ssize_t)size;
}

/* Releases fh; frees the state a create left on it if no obj adopted it. */
static int crypt_release(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	sc_crypt_state_release(xl, obj, fh, &cf_ops);
	return sc_xl_release(xl->below, obj, fh);
}

/*
 * Zeroes [off, off + len) inside a file (size unchanged) under the write
 * lock: whole plain units get below_mode (PUNCH_HOLE or ZERO_RANGE, with
 * KEEP_SIZE) from the layer below, since stored zeros are a hole and read
 * as zeros; the partial edges, a partial last unit and a tail group are
 * zeroed by re-encryption.  Past EOF there is no plaintext: the request
 * only concerns preallocated blocks and goes below unchanged.
 */
static int zero_units(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct cfile *cf,
		      int below_mode, uint64_t off, uint64_t len)
{
	uint64_t bs = cpriv(xl)->bs, sz = cf->size;
	uint64_t end = min_u64(off + len, sz), ma, mb;
	uint64_t edge[2][2];
	uint8_t newhdr[SC_HDR_MAX];
	bool rekeyed;
	int ret;

	if (off >= sz)
		return sc_xl_fallocate(xl->below, obj, fh, below_mode, (off_t)off, (off_t)len);
	ma = sc_crypt_nunits(bs, off);
	mb = min_u64(end / bs, sz / bs);
	if (sc_crypt_short_tail(bs, sz))
		mb = min_u64(mb, sc_crypt_nunits(bs, sz) - 2);
	if (ma >= mb)
		ma = mb = sc_crypt_nunits(bs, end);	/* no whole unit: all by RMW */
	edge[0][0] = off;
	edge[0][1] = min_u64(ma * bs, end);
	edge[1][0] = max_u64(mb * bs, edge[0][1]);
	edge[1][1] = end;
	for (unsigned e = 0; e < 2; e++) {
		struct sc_crypt_plan p;

		if (edge[e][0] >= edge[e][1])
			continue;
		ret = sc_crypt_plan(bs, sz, sz, edge[e][0], edge[e][1], false, &p);
		if (ret == 0)
			ret = apply_plan(xl, obj, fh, cf, &p, sz, sz, NULL, edge[e][0],
					 edge[e][1], newhdr, &rekeyed);
		if (ret == 0 && rekeyed)
			ret = store_hdr(xl, obj, cf, newhdr);
		if (ret < 0)
			return ret;
	}
	if (ma < mb)
		return sc_xl_fallocate(xl->below, obj, fh, below_mode, (off_t)(ma * bs),
				       (off_t)((mb - ma) * bs));
	return 0;
}

/*
 * Allocation (mode 0) of [off, off + len) past the current size, under the
 * write lock: re-encrypts what the larger size needs first (the old last
 * unit, as a growing truncate does), then allocates below, which sets the
 * size; the new range reads as zeros (unwritten extents are holes).
 */
static int alloc_grow(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct cfile *cf,
		      uint64_t off, uint64_t len)
{
	uint8_t newhdr[SC_HDR_MAX];
	uint64_t old_sz = cf->size;
	bool rekeyed = false;	/* read on the error path even if nothing was planned */
	int ret;

	ret = hdr_settle(xl, obj, cf);
	if (ret == 0)
		ret = resize_prepare(xl, obj, fh, cf, off + len, newhdr, &rekeyed);
	if (ret == 0)
		ret = sc_xl_fallocate(xl->below, obj, fh, 0, (off_t)off, (off_t)len);
	if (ret == 0) {
		cf->size = off + len;
		if (rekeyed)
			ret = store_hdr(xl, obj, cf, newhdr);
	} else {
		if (rekeyed)
			fk_reset(xl, cf);
		undo_growth(xl, obj, fh, cf, old_sz);
	}
	return ret;
}

/*
 * fallocate: allocation that keeps the size passes through (allocated
 * blocks read as zeros, i.e. holes); allocation that grows the file goes
 * through alloc_grow.  PUNCH_HOLE and ZERO_RANGE zero through zero_units
 * (ZERO_RANGE growing the file first allocates the new part like mode 0).
 * COLLAPSE_RANGE and INSERT_RANGE would move ciphertext to offsets whose
 * tweaks differ, and UNSHARE_RANGE is not worth the risk: EOPNOTSUPP.
 */
static int crypt_fallocate(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			   int mode, off_t off, off_t len)
{
	const int zero_modes = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;
	uint64_t end, old_sz;
	struct cfile *cf;
	int ret;

	if (!S_ISREG(obj->type))
		return sc_xl_fallocate(xl->below, obj, fh, mode, off, len);
	if (off < 0 || len <= 0)
		return -EINVAL;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | zero_modes) || (mode & zero_modes) == zero_modes ||
	    mode == FALLOC_FL_PUNCH_HOLE)	/* PUNCH_HOLE requires KEEP_SIZE */
		return -EOPNOTSUPP;
	ret = cf_load(xl, obj, fh, &cf);
	if (ret < 0)
		return ret;
	end = (uint64_t)off + (uint64_t)len;
	pthread_rwlock_wrlock(&cf->lock);
	old_sz = cf->size;
	if (!(mode & FALLOC_FL_KEEP_SIZE) && end > old_sz) {
		/* ZERO_RANGE: the part past EOF is allocated like mode 0, and is zeros. */
		uint64_t from = (mode & FALLOC_FL_ZERO_RANGE) ? old_sz : (uint64_t)off;

		ret = alloc_grow(xl, obj, fh, cf, from, end - from);
		if (ret < 0 || !(mode & FALLOC_FL_ZERO_RANGE))
			goto out_unlock;
		if ((uint64_t)off < old_sz)
			ret = zero_units(xl, obj, fh, cf, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
					 (uint64_t)off, old_sz - (uint64_t)off);
	} else if (mode & zero_modes) {
		ret = zero_units(xl, obj, fh, cf, (mode & zero_modes) | FALLOC_FL_KEEP_SIZE,
				 (uint64_t)off, (uint64_t)len);
	} else {	/* allocation inside the file, or KEEP_SIZE: no plaintext changes */
		ret = sc_xl_fallocate(xl->below, obj, fh, mode, off, len);
	}
out_unlock:
	if (ret < 0)
		resync_size(xl, obj, fh, cf);
	pthread_rwlock_unlock(&cf->lock);
	return ret;
}

/* SEEK_DATA/SEEK_HOLE: backing holes are plaintext holes; results on unit bounds. */
static off_t crypt_lseek(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 off_t off, int whence)
{
	uint64_t bs = cpriv(xl)->bs;
	struct cfile *cf;
	off_t r;
	int ret;

	if (!S_ISREG(obj->type) || (whence != SEEK_DATA && whence != SEEK_HOLE))
		return sc_xl_lseek(xl->below, obj, fh, off, whence);
	ret = cf_load(xl, obj, fh, &cf);
	if (ret < 0)
		return ret;
	pthread_rwlock_rdlock(&cf->lock);
	r = sc_xl_lseek(xl->below, obj, fh, off, whence);
	if (r >= 0 && whence == SEEK_DATA)
		r = (off_t)max_u64((uint64_t)off, (uint64_t)r / bs * bs);
	else if (r >= 0)
		r = (off_t)max_u64((uint64_t)off,
				   min_u64(cf->size, sc_crypt_nunits(bs, (uint64_t)r) * bs));
	pthread_rwlock_unlock(&cf->lock);
	return r;
}

static const struct sc_xl_ops crypt_ops = {
	.name			= "crypt",
	.destroy		= sc_crypt_op_destroy,
	.forget			= crypt_forget,
	.lookup			= sc_crypt_op_lookup,
	.setattr		= crypt_setattr,
	.mknod			= sc_crypt_op_mknod,
	.mkdir			= sc_crypt_op_mkdir,
	.symlink		= sc_crypt_op_symlink,
	.link			= sc_crypt_op_link,
	.unlink			= sc_crypt_op_unlink,
	.rmdir			= sc_crypt_op_rmdir,
	.rename			= sc_crypt_op_rename,
	.getxattr		= crypt_getxattr,
	.listxattr		= crypt_listxattr,
	.setxattr		= crypt_setxattr,
	.removexattr		= crypt_removexattr,
	.open			= crypt_open,
	.create			= crypt_create,
	.read			= crypt_read,
	.write			= crypt_write,
	.release		= crypt_release,
	.fallocate		= crypt_fallocate,
	.lseek			= crypt_lseek,
	.copy_file_range	= sc_crypt_op_copy_file_range,
	.readdir		= sc_crypt_op_readdir,
};

/* Returns 0, -ENOMEM or -EINVAL (see crypt_xl.h). */
int sc_crypt_xl_new(struct sc_xl *below, const struct sc_mkey *mk,
		    const struct sc_crypt_hide *hide, struct sc_xl **out)
{
	struct crypt_priv *cp;
	struct sc_xl *xl;

	/* aes-gcm is not length-preserving: its files are the gcm translator's. */
	if (!below || !mk || !hide || below->id + 1 >= SC_XL_MAX ||
	    sc_block_size_check(sc_mkey_block_size(mk)) < 0 ||
	    sc_mkey_cipher(mk) == SC_CIPHER_AES_GCM)
		return -EINVAL;
	xl = calloc(1, sizeof(*xl));
	cp = calloc(1, sizeof(*cp));
	if (!xl || !cp) {
		free(xl);
		free(cp);
		return -ENOMEM;
	}
	cp->mk = mk;
	cp->bs = sc_mkey_block_size(mk);
	sc_crypt_hidden_init(&cp->hidden, hide);
	xl->ops = &crypt_ops;
	xl->below = below;
	xl->id = below->id + 1;
	xl->priv = cp;
	*out = xl;
	return 0;
}
