/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine.c - the data engine: plaintext above, stored units below, for
 * every contents format (engine.h).  It owns the flows that do not depend
 * on how a unit is stored: per-file state and its handover from a create,
 * the file lock and the unit range lock, which units a read decrypts and a
 * change re-encrypts (span.c), and the order of read, write, truncate,
 * fallocate, open and create.  A format (fmt_lp.c, fmt_gcm.c) is called
 * through its struct sc_data_fmt to load plaintext, store runs, and store
 * or save what a change needs before and after its data.
 *
 * Crash order the flows keep for every format (the formats' files say
 * what each adds): runs are stored in ascending order, so the old partial
 * last unit is re-encrypted as a whole unit before anything extends the
 * file past it; a shrinking truncate stores the new last unit before the
 * cut; a growing one stores the old last unit (and, where a partial unit
 * of zeros would not read as zeros, the new one) before the size changes
 * below.  A growing change that fails part way is undone back to the old
 * size by the format (undo_growth), best effort.
 *
 * O_APPEND needs nothing here: the kernel places appending write(2)s at
 * its i_size under the inode lock (generic_write_checks) and sends that
 * offset, and the write-back of a shared mapping of an O_APPEND file
 * arrives through the same handle with real offsets, so this layer must
 * honour every offset it is given.  The backing fd is opened without
 * O_APPEND so that pwrite() honours it too, and without O_TRUNC: a cut to
 * 0 goes through the format (trunc_open), which may keep or replace a
 * header.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sc_crypto.h"
#include "sc_xlator.h"
#include "engine.h"

/* ---- the layer and per-file state ------------------------------------------ */

/* 0 or -EINVAL (see engine.h). */
int sc_data_layer_init(struct sc_xl *xl, struct sc_xl *below, const struct sc_xl_ops *ops,
		       struct sc_data *d, const struct sc_data_fmt *fmt,
		       const struct sc_mkey *mk, const struct sc_stack_hide *hide)
{
	if (!below || !mk || !hide || below->id + 1 >= SC_XL_MAX ||
	    sc_block_size_check(sc_mkey_block_size(mk)) < 0)
		return -EINVAL;
	sc_data_hidden_init(&d->hidden, hide);
	d->fmt = fmt;
	d->mk = mk;
	d->bs = sc_mkey_block_size(mk);
	d->max_size = UINT64_MAX;
	xl->ops = ops;
	xl->below = below;
	xl->id = below->id + 1;
	xl->priv = d;
	return 0;
}

/* 0 or -ENOMEM. */
int sc_data_dfile_init(struct sc_dfile *df, uint64_t size)
{
	pthread_rwlockattr_t attr;
	int ret;

	/* Writers (short, re-encrypting a few units) must not starve behind readahead. */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	ret = pthread_rwlock_init(&df->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	if (ret != 0)
		return -ENOMEM;
	if (sc_rlock_init(&df->units) < 0) {
		pthread_rwlock_destroy(&df->lock);
		return -ENOMEM;
	}
	df->size = size;
	df->cut_unit = SC_DATA_NO_CUT;
	return 0;
}

void sc_data_dfile_destroy(struct sc_dfile *df)
{
	sc_rlock_destroy(&df->units);
	pthread_rwlock_destroy(&df->lock);
}

void sc_data_set_size(const struct sc_xl *xl, struct sc_dfile *df, uint64_t size)
{
	uint64_t cu = __atomic_load_n(&df->cut_unit, __ATOMIC_RELAXED);

	if (cu != SC_DATA_NO_CUT && size <= cu * sc_data_of(xl)->bs)	/* the cut unit was dropped */
		__atomic_store_n(&df->cut_unit, SC_DATA_NO_CUT, __ATOMIC_RELAXED);
	__atomic_store_n(&df->size, size, __ATOMIC_RELAXED);
}

void sc_data_fix_stat(const struct sc_xl *xl, const struct sc_dfile *df, struct stat *st)
{
	if (!S_ISREG(st->st_mode) || !sc_data_of(xl)->fmt->sizes_differ)
		return;
	st->st_size = (off_t)(df ? sc_data_size(df) :
			      sc_data_of(xl)->fmt->plain_of(xl, (uint64_t)st->st_size));
}

void sc_data_resync_size(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 struct sc_dfile *df)
{
	struct stat st;

	if (sc_xl_getattr(xl->below, obj, fh, &st) == 0)
		sc_data_set_size(xl, df, sc_data_of(xl)->fmt->plain_of(xl, (uint64_t)st.st_size));
}

struct sc_dfile *sc_data_state(const struct sc_xl *xl, const struct sc_obj *obj)
{
	return __atomic_load_n((struct sc_dfile *const *)&obj->priv[xl->id], __ATOMIC_ACQUIRE);
}

static struct sc_dfile *state_pending(const struct sc_xl *xl, const struct sc_fh *fh)
{
	return fh ? __atomic_load_n((struct sc_dfile *const *)&fh->priv[xl->id], __ATOMIC_ACQUIRE)
		  : NULL;
}

/* Publishes df as obj's state unless another thread was first; returns the winner. */
static struct sc_dfile *state_install(const struct sc_xl *xl, struct sc_obj *obj,
				      struct sc_dfile *df)
{
	void *expected = NULL;

	if (__atomic_compare_exchange_n(&obj->priv[xl->id], &expected, df, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return df;
	return expected;
}

/* 0 or what fetch returns. */
int sc_data_load(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct sc_dfile **out)
{
	struct sc_dfile *df = sc_data_state(xl, obj), *won;
	int ret;

	if (df) {
		*out = df;
		return 0;
	}
	df = state_pending(xl, fh);
	if (df) {
		/*
		 * Owned by the fh until the obj adopts it; then the obj owns it
		 * (freed in ->forget) and the fh forgets it, so release and
		 * forget never both free it, whatever their order.
		 */
		won = state_install(xl, obj, df);
		if (won == df)
			__atomic_store_n(&fh->priv[xl->id], NULL, __ATOMIC_RELEASE);
		*out = won;
		return 0;
	}
	ret = sc_data_of(xl)->fmt->fetch(xl, obj, fh, &df);
	if (ret < 0)
		return ret;
	won = state_install(xl, obj, df);
	if (won != df)
		sc_data_of(xl)->fmt->free(df);
	*out = won;
	return 0;
}

/* ---- spans ---------------------------------------------------------------------- */

/* 0 or -EINVAL (see sc_data_plan). */
int sc_data_plan_for(const struct sc_xl *xl, uint64_t old_sz, uint64_t new_sz, uint64_t wo,
		     uint64_t we, bool direct_ok, struct sc_data_plan *p)
{
	const struct sc_data *d = sc_data_of(xl);

	if (d->fmt->tail_rule)
		return sc_data_plan(d->bs, old_sz, new_sz, wo, we, direct_ok, p);
	return sc_data_plan_units(d->bs, old_sz, new_sz, wo, we, direct_ok, p);
}

void sc_data_overlay(uint8_t *dst, uint64_t x, uint64_t y, uint64_t old_sz,
		     const uint8_t *src, uint64_t wo, uint64_t we)
{
	uint64_t old_end = min_u64(y, old_sz);

	if (old_end < y)
		memset(dst + (max_u64(old_end, x) - x), 0, y - max_u64(old_end, x));
	if (wo < y && we > x) {
		uint64_t c0 = max_u64(x, wo), c1 = min_u64(y, we);

		if (src)
			memcpy(dst + (c0 - x), src + (c0 - wo), c1 - c0);
		else
			memset(dst + (c0 - x), 0, c1 - c0);
	}
}

/* The units [*ua, *ub) a read of [off, end) of a file of size sz decrypts. */
static void read_units(const struct sc_data *d, uint64_t sz, uint64_t off, uint64_t end,
		       uint64_t *ua, uint64_t *ub)
{
	uint64_t a = off, b = end;

	if (d->fmt->tail_rule)
		sc_data_dec_range(d->bs, sz, off, end, &a, &b);
	*ua = a / d->bs;
	*ub = sc_data_nunits(d->bs, b);
}

/* Re-encrypts what ch's size change needs (no data written).  Under the write lock. */
static int resize_prepare(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  struct sc_dfile *df, struct sc_dchange *ch)
{
	struct sc_data_plan p;
	int ret;

	ret = sc_data_plan_for(xl, ch->old_sz, ch->new_sz, 0, 0, false, &p);
	if (ret < 0 || p.nruns == 0)
		return ret;
	return sc_data_of(xl)->fmt->apply(xl, obj, fh, df, &p, ch);
}

/* ---- operations ----------------------------------------------------------------- */

void sc_data_op_forget(struct sc_xl *xl, struct sc_obj *obj)
{
	struct sc_dfile *df = obj->priv[xl->id];

	if (df)
		sc_data_of(xl)->fmt->free(df);
	obj->priv[xl->id] = NULL;
}

/*
 * setattr: a size change re-encrypts the units whose encoding depends on
 * the size (the new last unit before a cut; the old last unit, and what
 * the format needs at the new end, before growing), then lets the layer
 * below change the stored size and every other attribute in one call.
 * Other attributes pass through.
 */
int sc_data_op_setattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		       const struct stat *attr, int valid, struct stat *st)
{
	const struct sc_data *d = sc_data_of(xl);
	struct sc_fh tmp = { .fd = -1, .flags = O_RDWR };
	struct sc_dchange ch = { .resize = true };
	struct stat battr = *attr;
	struct sc_dfile *df;
	int ret;

	if (!(valid & SC_SET_SIZE) || !S_ISREG(obj->type)) {
		ret = sc_xl_setattr(xl->below, obj, fh, attr, valid, st);
		if (ret == 0)
			sc_data_fix_stat(xl, sc_data_state(xl, obj), st);
		return ret;
	}
	if (attr->st_size < 0)
		return -EINVAL;
	if ((uint64_t)attr->st_size > d->max_size)
		return -EFBIG;
	/* truncate(2) by path: re-encryption and undo need a backing fd. */
	if (!fh) {
		ret = sc_xl_open(xl->below, obj, &tmp);
		if (ret < 0)
			return ret;
		fh = &tmp;
	}
	ret = sc_data_load(xl, obj, fh, &df);
	if (ret < 0)
		goto out_release;
	pthread_rwlock_wrlock(&df->lock);
	ch.old_sz = df->size;
	ch.new_sz = (uint64_t)attr->st_size;
	ret = d->fmt->begin(xl, obj, fh, df, &ch);
	if (ret == 0)
		ret = resize_prepare(xl, obj, fh, df, &ch);
	if (ret == 0) {
		battr.st_size = (off_t)d->fmt->stored_of(xl, df, ch.new_sz);
		ret = sc_xl_setattr(xl->below, obj, fh, &battr, valid, st);
	}
	if (ret == 0) {
		sc_data_set_size(xl, df, ch.new_sz);
		ret = d->fmt->commit(xl, obj, fh, df, &ch);
		sc_data_fix_stat(xl, df, st);
	} else {
		if (d->fmt->abort)
			d->fmt->abort(xl, df, &ch);
		if (ch.new_sz > ch.old_sz)
			d->fmt->undo_growth(xl, obj, fh, df, &ch);
		else
			sc_data_resync_size(xl, obj, fh, df);
	}
	pthread_rwlock_unlock(&df->lock);
out_release:
	if (fh == &tmp)
		sc_xl_release(xl->below, obj, &tmp);
	return ret;
}

/*
 * Cuts an open file to size 0 (O_TRUNC) under the write lock, so no reader
 * sees the old size; the format's commit decides what becomes of its
 * header.  0 or -errno.
 */
static int trunc_open(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      struct sc_dfile *df)
{
	const struct sc_data *d = sc_data_of(xl);
	struct sc_dchange ch = { .resize = true };
	struct stat st, attr = { 0 };
	int ret = 0;

	/* O_RDONLY|O_TRUNC: the kernel checked write permission; cut by the object. */
	if ((fh->flags & O_ACCMODE) == O_RDONLY)
		fh = NULL;
	pthread_rwlock_wrlock(&df->lock);
	ch.old_sz = df->size;
	/* what the format stores first (integrity volumes: the dirty table's entry) */
	if (ch.old_sz > 0)
		ret = d->fmt->begin(xl, obj, fh, df, &ch);
	if (ch.old_sz > 0 && ret == 0) {
		attr.st_size = (off_t)d->fmt->stored_of(xl, df, 0);
		ret = sc_xl_setattr(xl->below, obj, fh, &attr, SC_SET_SIZE, &st);
		if (ret == 0) {
			sc_data_set_size(xl, df, 0);
			ret = d->fmt->commit(xl, obj, fh, df, &ch);
		} else {
			sc_data_resync_size(xl, obj, fh, df);
		}
	}
	pthread_rwlock_unlock(&df->lock);
	return ret;
}

/* The backing open of a user's open (common.c's rule), and O_TRUNC is the engine's. */
static int open_flags(int flags)
{
	return sc_data_backing_flags(flags) & ~O_TRUNC;
}

/*
 * open: the backing file is opened read-write without O_APPEND, O_DIRECT
 * or O_TRUNC, then the file's state is loaded once per inode (-EIO if its
 * header is bad).  O_TRUNC cuts the file under the write lock.
 */
int sc_data_op_open(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	int uflags = fh->flags;
	struct sc_dfile *df;
	int ret;

	if (!S_ISREG(obj->type))
		return sc_xl_open(xl->below, obj, fh);
	fh->flags = open_flags(uflags);
	ret = sc_xl_open(xl->below, obj, fh);
	if (ret == -EACCES && (uflags & O_ACCMODE) == O_WRONLY) {
		/* Write-only permission: whole-unit writes still work, RMW will not. */
		fh->flags = (fh->flags & ~O_ACCMODE) | O_WRONLY;
		ret = sc_xl_open(xl->below, obj, fh);
	}
	if (ret < 0) {
		fh->flags = uflags;
		return ret;
	}
	ret = sc_data_load(xl, obj, fh, &df);
	fh->flags = uflags;
	if (ret == 0 && (uflags & O_TRUNC))
		ret = trunc_open(xl, obj, fh, df);
	if (ret < 0)
		sc_xl_release(xl->below, obj, fh);
	return ret;
}

/*
 * create: the backing file is created with O_EXCL (so we know it is ours)
 * and the format makes its state (made: a header, in the file or in
 * memory) before the call returns, so before any data.  A name that exists
 * (created behind the mount; the kernel sends CREATE only for names it
 * believes absent) is opened as it is, its header verified, and O_TRUNC
 * cuts it.  On failure a file we made is unlinked.
 */
int sc_data_op_create(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      mode_t mode, struct sc_fh *fh, int *fd_out, struct stat *st)
{
	const struct sc_data_fmt *fmt = sc_data_of(xl)->fmt;
	struct sc_obj nobj = { .type = S_IFREG };
	mode_t bmode = fmt->create_owner_write ? mode | S_IWUSR : mode;
	int uflags = fh->flags;
	struct sc_dfile *df = NULL;
	bool made = true;
	int ret;

	if (sc_data_is_hidden(xl, dir, name))
		return -EPERM;
	fh->flags = open_flags(uflags) | O_EXCL;
	ret = sc_xl_create(xl->below, dir, name, bmode, fh, fd_out, st);
	if (ret == -EEXIST && !(uflags & O_EXCL)) {
		made = false;
		fh->flags = open_flags(uflags);
		ret = sc_xl_create(xl->below, dir, name, mode, fh, fd_out, st);
	}
	fh->flags = uflags;
	if (ret < 0)
		return ret;
	nobj.fd = *fd_out;
	ret = made ? fmt->made(xl, &nobj, fh, mode, st, &df) : fmt->fetch(xl, &nobj, fh, &df);
	if (ret == 0 && !made && (uflags & O_TRUNC))
		ret = trunc_open(xl, &nobj, fh, df);
	if (ret < 0)
		goto err_release;
	fh->priv[xl->id] = df;
	sc_data_fix_stat(xl, df, st);
	return 0;

err_release:
	if (df)
		fmt->free(df);
	sc_xl_release(xl->below, &nobj, fh);
	sc_xl_drop_fd(xl->below, *fd_out);
	*fd_out = -1;
	if (made)
		sc_xl_unlink(xl->below, dir, name);
	return ret;
}

ssize_t sc_data_op_read(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			void *buf, size_t size, off_t off)
{
	const struct sc_data *d = sc_data_of(xl);
	uint64_t end, sz, ua, ub;
	struct sc_dfile *df;
	int ret, tok;

	if (!S_ISREG(obj->type))
		return sc_xl_read(xl->below, obj, fh, buf, size, off);
	if (off < 0)
		return -EINVAL;
	ret = sc_data_load(xl, obj, fh, &df);
	if (ret < 0)
		return ret;
	pthread_rwlock_rdlock(&df->lock);
	sz = df->size;
	if ((uint64_t)off >= sz || size == 0) {
		pthread_rwlock_unlock(&df->lock);
		return 0;
	}
	end = min_u64((uint64_t)off + size, sz);
	read_units(d, sz, (uint64_t)off, end, &ua, &ub);
	tok = sc_rlock_lock(&df->units, ua, ub, false);
	ret = d->fmt->load(xl, obj, fh, df, sz, (uint64_t)off, end, buf, size);
	sc_rlock_unlock(&df->units, tok);
	pthread_rwlock_unlock(&df->lock);
	return ret < 0 ? ret : (ssize_t)(end - (uint64_t)off);
}

/*
 * A write inside the file (that leaves it non-tiny, where tiny files
 * exist) changes no size, no header and no unit outside its plan: it runs
 * under the file lock held shared and an exclusive lock on its plan's
 * units, beside reads and writes of other units.  Returns 1 if the write
 * is not of that kind (the caller takes the write lock), else 0 or -errno.
 */
static int write_in_place(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  struct sc_dfile *df, const uint8_t *src, uint64_t wo, uint64_t we)
{
	const struct sc_data *d = sc_data_of(xl);
	struct sc_dchange ch = { .src = src, .wo = wo, .we = we };
	struct sc_data_plan p;
	uint64_t sz;
	int ret, tok;

	pthread_rwlock_rdlock(&df->lock);
	sz = df->size;
	if (we > sz || (d->fmt->tail_rule && sz < SC_DATA_TINY)) {
		ret = 1;
		goto out_unlock;
	}
	/* wo < we <= sz (and no tiny file): at least one run, no header to store. */
	ret = sc_data_plan_for(xl, sz, sz, wo, we, true, &p);
	if (ret < 0)
		goto out_unlock;
	ch.old_sz = ch.new_sz = sz;
	/* Runs ascend and include their tail group: their span is all we touch. */
	tok = sc_rlock_lock(&df->units, p.run[0].ua, p.run[p.nruns - 1].ub, true);
	ret = d->fmt->apply(xl, obj, fh, df, &p, &ch);
	sc_rlock_unlock(&df->units, tok);
out_unlock:
	pthread_rwlock_unlock(&df->lock);
	return ret;
}

ssize_t sc_data_op_write(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 const void *buf, size_t size, off_t off)
{
	const struct sc_data *d = sc_data_of(xl);
	struct sc_dchange ch = { .src = buf, .wo = (uint64_t)off };
	struct sc_data_plan p;
	struct sc_dfile *df;
	int ret;

	if (!S_ISREG(obj->type))
		return sc_xl_write(xl->below, obj, fh, buf, size, off);
	if (off < 0)
		return -EINVAL;
	ret = sc_data_load(xl, obj, fh, &df);
	if (ret < 0)
		return ret;
	if (size == 0)
		return 0;
	ch.we = ch.wo + size;
	if (ch.we > d->max_size)
		return -EFBIG;
	ret = write_in_place(xl, obj, fh, df, buf, ch.wo, ch.we);
	if (ret <= 0)
		return ret < 0 ? ret : (ssize_t)size;
	pthread_rwlock_wrlock(&df->lock);
	/* another writer may have grown the file since write_in_place looked */
	ch.old_sz = df->size;
	ch.new_sz = max_u64(ch.old_sz, ch.we);
	ret = d->fmt->begin(xl, obj, fh, df, &ch);
	if (ret == 0)
		ret = sc_data_plan_for(xl, ch.old_sz, ch.new_sz, ch.wo, ch.we, true, &p);
	if (ret == 0)
		ret = d->fmt->apply(xl, obj, fh, df, &p, &ch);
	if (ret == 0) {
		sc_data_set_size(xl, df, ch.new_sz);
		ret = d->fmt->commit(xl, obj, fh, df, &ch);
	} else {
		d->fmt->undo_growth(xl, obj, fh, df, &ch);
	}
	pthread_rwlock_unlock(&df->lock);
	return ret < 0 ? ret : (ssize_t)size;
}

/*
 * Releases fh (after the format's release, if it has one); frees the state
 * a create left on it if no obj adopted it.
 */
int sc_data_op_release(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct sc_dfile *pending = state_pending(xl, fh), *df;
	const struct sc_data_fmt *fmt = sc_data_of(xl)->fmt;

	if (fmt->release && S_ISREG(obj->type)) {
		df = sc_data_state(xl, obj);
		fmt->release(xl, obj, fh, df ? df : pending);
	}
	if (pending && sc_data_state(xl, obj) != pending)
		sc_data_of(xl)->fmt->free(pending);
	fh->priv[xl->id] = NULL;
	return sc_xl_release(xl->below, obj, fh);
}

/*
 * Zeroes [off, off + len) inside a file (size unchanged) under the write
 * lock: whole units get below_mode (PUNCH_HOLE or ZERO_RANGE, with
 * KEEP_SIZE) over their stored bytes, since a stored unit of zeros is a
 * hole and reads as zeros; the partial edges, a partial last unit and a
 * tail group are re-encrypted with zeros.  The whole units go first: a
 * backing that refuses below_mode (EOPNOTSUPP: CephFS's ceph-fuse for
 * ZERO_RANGE) must find the file as it was, not with its edges already
 * zeroed.  Past EOF there is no plaintext: the request only concerns
 * preallocated blocks and goes below past the stored file.
 */
static int zero_units(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      struct sc_dfile *df, int below_mode, uint64_t off, uint64_t len)
{
	const struct sc_data *d = sc_data_of(xl);
	uint64_t bs = d->bs, sz = df->size;
	uint64_t end = min_u64(off + len, sz), ma, mb;
	uint64_t edge[2][2];
	int ret;

	if (off >= sz)
		return d->fmt->falloc(xl, obj, fh, df, below_mode, off, off + len);
	ma = sc_data_nunits(bs, off);
	mb = end / bs;
	if (d->fmt->tail_rule && sc_data_short_tail(bs, sz))
		mb = min_u64(mb, sc_data_nunits(bs, sz) - 2);
	if (ma >= mb)
		ma = mb = sc_data_nunits(bs, end);	/* no whole unit: all re-encrypted */
	edge[0][0] = off;
	edge[0][1] = min_u64(ma * bs, end);
	edge[1][0] = max_u64(mb * bs, edge[0][1]);
	edge[1][1] = end;
	if (ma < mb) {
		ret = d->fmt->falloc(xl, obj, fh, df, below_mode, ma * bs, mb * bs);
		if (ret < 0)
			return ret;
	}
	for (unsigned e = 0; e < 2; e++) {
		struct sc_dchange ch = { .old_sz = sz, .new_sz = sz, .wo = edge[e][0],
					 .we = edge[e][1] };
		struct sc_data_plan p;

		if (edge[e][0] >= edge[e][1])
			continue;
		ret = sc_data_plan_for(xl, sz, sz, edge[e][0], edge[e][1], false, &p);
		if (ret == 0)
			ret = d->fmt->apply(xl, obj, fh, df, &p, &ch);
		if (ret == 0)
			ret = d->fmt->commit(xl, obj, fh, df, &ch);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * Allocation (mode 0) of [off, off + len) past the current size, under the
 * write lock: what the format must store first, then what the larger size
 * needs re-encrypted (the old last unit, as a growing truncate does), then
 * the stored range allocated below, which sets the stored size; the new
 * whole units read as zeros (unwritten extents are holes).
 */
static int alloc_grow(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      struct sc_dfile *df, uint64_t off, uint64_t len)
{
	const struct sc_data *d = sc_data_of(xl);
	struct sc_dchange ch = { .old_sz = df->size, .new_sz = off + len, .resize = true };
	int ret;

	if (ch.new_sz > d->max_size)
		return -EFBIG;
	ret = d->fmt->begin(xl, obj, fh, df, &ch);
	if (ret == 0)
		ret = resize_prepare(xl, obj, fh, df, &ch);
	if (ret == 0)
		ret = d->fmt->falloc(xl, obj, fh, df, 0, off, ch.new_sz);
	if (ret == 0) {
		sc_data_set_size(xl, df, ch.new_sz);
		ret = d->fmt->commit(xl, obj, fh, df, &ch);
	} else {
		if (d->fmt->abort)
			d->fmt->abort(xl, df, &ch);
		d->fmt->undo_growth(xl, obj, fh, df, &ch);
	}
	return ret;
}

/*
 * fallocate: allocation that keeps the size passes through over the
 * stored bytes it covers (allocated blocks read as zeros, i.e. holes);
 * allocation that grows the file goes through alloc_grow.  PUNCH_HOLE and
 * ZERO_RANGE zero through zero_units (ZERO_RANGE growing the file first
 * allocates the new part like mode 0).  COLLAPSE_RANGE and INSERT_RANGE
 * would move stored units to offsets their encryption does not name, and
 * UNSHARE_RANGE is not worth the risk: EOPNOTSUPP.
 */
int sc_data_op_fallocate(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 int mode, off_t off, off_t len)
{
	const int zero_modes = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;
	const struct sc_data *d = sc_data_of(xl);
	uint64_t end, old_sz;
	struct sc_dfile *df;
	int ret;

	if (!S_ISREG(obj->type))
		return sc_xl_fallocate(xl->below, obj, fh, mode, off, len);
	ret = sc_data_falloc_check(mode, off, len);
	if (ret < 0)
		return ret;
	ret = sc_data_load(xl, obj, fh, &df);
	if (ret < 0)
		return ret;
	end = (uint64_t)off + (uint64_t)len;
	pthread_rwlock_wrlock(&df->lock);
	old_sz = df->size;
	if (!(mode & FALLOC_FL_KEEP_SIZE) && end > old_sz) {
		/* ZERO_RANGE: the part past EOF is allocated like mode 0, and is zeros. */
		uint64_t from = (mode & FALLOC_FL_ZERO_RANGE) ? old_sz : (uint64_t)off;

		ret = alloc_grow(xl, obj, fh, df, from, end - from);
		if (ret < 0 || !(mode & FALLOC_FL_ZERO_RANGE))
			goto out_unlock;
		if ((uint64_t)off < old_sz)
			ret = zero_units(xl, obj, fh, df, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
					 (uint64_t)off, old_sz - (uint64_t)off);
	} else if (mode & zero_modes) {
		ret = zero_units(xl, obj, fh, df, (mode & zero_modes) | FALLOC_FL_KEEP_SIZE,
				 (uint64_t)off, (uint64_t)len);
	} else {	/* allocation inside the file, or KEEP_SIZE: no plaintext changes */
		ret = d->fmt->falloc(xl, obj, fh, df, mode, (uint64_t)off, end);
	}
out_unlock:
	if (ret < 0)
		sc_data_resync_size(xl, obj, fh, df);
	pthread_rwlock_unlock(&df->lock);
	return ret;
}
