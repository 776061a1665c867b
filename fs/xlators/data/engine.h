/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine.h - the data engine's interface to its two contents formats
 * (fmt_lp.c: null, aes-xts, aes-cbc; fmt_gcm.c: aes-gcm) and to their
 * tests.  The engine (engine.c) owns what does not depend on the format:
 * per-file state and its handover from create to the inode, the file lock
 * and the unit range lock (rangelock.c), the choice of units a change
 * re-encrypts (span.c), the read-modify-write flows of read, write,
 * truncate, fallocate, open and create, the per-thread buffers, backing
 * I/O and the hidden names (common.c).  A format says only how its units
 * are stored, through struct sc_data_fmt below.
 *
 * Vocabulary (docs/format.md has the rules these follow):
 *  - a file of size sz is cut into units of bs bytes; the last one may be
 *    partial;
 *  - the "tail group" (length-preserving format only): when the last unit
 *    holds 1..15 bytes and sz >= 16, the crypto library encrypts it
 *    together with the last 16 stored bytes of the unit before it, so those
 *    two units are only ever decrypted or re-encrypted together;
 *  - a "tiny" file (length-preserving, 0 < sz < 16) is one short unit under
 *    a keystream whose IV lives in the header and must change on every
 *    write of it;
 *  - a unit whose stored bytes are all zero is a hole and reads as zeros,
 *    so units that were never written are simply left unallocated (the
 *    authenticated format allows it only in a file whose header says it
 *    may hold holes: fmt_gcm.c, docs/format.md 10.6).
 */
#ifndef SC_DATA_ENGINE_H
#define SC_DATA_ENGINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sc_xlator.h"
#include "common.h"	/* buffers, backing I/O, hidden names */
#include "rangelock.h"
#include "span.h"	/* unit arithmetic */

struct stat;

/* ---- the engine (engine.c) ----------------------------------------------------- */

/*
 * The part of a file's state the engine owns; a format's per-file state
 * starts with it.  In obj->priv[xl->id] from the first use until ->forget;
 * a create leaves the new file's state in fh->priv[xl->id] (its obj does
 * not exist yet) and the first operation on the obj adopts it.
 *
 * Locking: one writer-preferring rwlock per file, and under it, held
 * shared, a range lock on units.  Reads hold the rwlock shared and their
 * units shared; a write inside the file that changes no size (and, in the
 * length-preserving format, leaves it non-tiny) holds the rwlock shared
 * and its plan's units exclusive, so writers of different units of one
 * file run in parallel; whatever moves the size or stores a header holds
 * the rwlock exclusive.
 */
struct sc_dfile {
	pthread_rwlock_t	lock;
	struct sc_rlock		units;	/* under lock held shared */
	uint64_t		size;	/* plaintext; changed under lock held exclusive, read atomically */
	/*
	 * A unit the backing file ends inside the stored overhead of (cut
	 * behind the mount; only the authenticated format can tell), or
	 * SC_DATA_NO_CUT: it reads as EIO until a change rewrites or drops
	 * it.  Atomic.
	 */
	uint64_t		cut_unit;
};

#define SC_DATA_NO_CUT	UINT64_MAX

/*
 * One change of a file under its lock: from old_sz to new_sz, with the
 * write [wo, we) from src (NULL: zeros; wo == we: no data, a resize).
 * fmt is the format's own scratch for the change, kept from begin to
 * commit or undo (the length-preserving format's rekeyed header, the
 * authenticated one's saved partial last unit).
 */
#define SC_DATA_CHANGE_SCRATCH	96

struct sc_dchange {
	uint64_t	old_sz, new_sz;
	const uint8_t	*src;
	uint64_t	wo, we;
	bool		resize;	/* a size change alone: truncate, growing fallocate */
	_Alignas(8) unsigned char fmt[SC_DATA_CHANGE_SCRATCH];
};

/*
 * A contents format: how its units and headers are stored.  Called by the
 * engine with the file lock held as the flow says; every int function
 * returns 0 or -errno.  One indirect call per request, never per unit.
 */
struct sc_data_fmt {
	/* tiny files and tail groups (length-preserving), or units on their own */
	bool	tail_rule;
	/* the backing file's size is not the plaintext size (stat is mapped) */
	bool	sizes_differ;
	/* the backing file is created with owner-write (made() may drop it) */
	bool	create_owner_write;

	/* A new state for the existing backing file obj (fh: an open handle, or NULL). */
	int	(*fetch)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 struct sc_dfile **out);
	/* A new state for the 0-byte file create just made (st its stat, mode the caller's). */
	int	(*made)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, mode_t mode,
			struct stat *st, struct sc_dfile **out);
	void	(*free)(struct sc_dfile *df);
	/* The backing size of df at plaintext size plain, and back (plain_of: no state). */
	uint64_t (*stored_of)(const struct sc_xl *xl, const struct sc_dfile *df, uint64_t plain);
	uint64_t (*plain_of)(const struct sc_xl *xl, uint64_t stored);

	/*
	 * Plaintext [off, end) of a file of size sz (end <= sz) into dst,
	 * which has room for cap >= end - off bytes (under the read lock and
	 * a shared range lock).
	 */
	int	(*load)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			struct sc_dfile *df, uint64_t sz, uint64_t off, uint64_t end,
			uint8_t *dst, size_t cap);
	/* Before change ch (write lock held): what must be stored or saved first. */
	int	(*begin)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 struct sc_dfile *df, struct sc_dchange *ch);
	/* Builds, encrypts and stores the runs of plan p for ch, in ascending order. */
	int	(*apply)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 struct sc_dfile *df, const struct sc_data_plan *p, struct sc_dchange *ch);
	/* ch is stored and df->size is new_sz: what follows the data (a header; fh may be NULL). */
	int	(*commit)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  struct sc_dfile *df, struct sc_dchange *ch);
	/* ch failed: drops what begin or apply prepared and did not store (may be NULL). */
	void	(*abort)(struct sc_xl *xl, struct sc_dfile *df, struct sc_dchange *ch);
	/* A growing ch failed, perhaps part stored: back to ch->old_sz, best effort. */
	void	(*undo_growth)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			       struct sc_dfile *df, struct sc_dchange *ch);
	/*
	 * May be NULL.  Before the backing release of a handle of a regular
	 * file whose state is df (NULL: none): what a format stores when a
	 * handle goes (integrity volumes: the header's size, format.md 11.6).
	 */
	void	(*release)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			   struct sc_dfile *df);
	/*
	 * The layer below's fallocate(mode) of the stored bytes of plaintext
	 * [off, end) of df, whose size is df->size: whole units, or what lies
	 * past the end of the file.
	 */
	int	(*falloc)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  struct sc_dfile *df, int mode, uint64_t off, uint64_t end);
};

/* What every data layer's xl->priv starts with (hidden first: common.c finds it there). */
struct sc_data {
	struct sc_data_hidden		hidden;
	const struct sc_data_fmt	*fmt;
	const struct sc_mkey		*mk;
	uint64_t			bs;
	uint64_t			max_size;	/* largest plaintext size of the format */
};

_Static_assert(offsetof(struct sc_data, hidden) == 0, "hidden names first");

static inline struct sc_data *sc_data_of(const struct sc_xl *xl)
{
	return xl->priv;
}

/*
 * Fills the engine's part of a new layer over below: d (the first member
 * of priv; max_size UINT64_MAX, for the format to lower) and xl.  Returns
 * 0 or -EINVAL (stack too deep, mk's block size unusable).
 */
int sc_data_layer_init(struct sc_xl *xl, struct sc_xl *below, const struct sc_xl_ops *ops,
		       struct sc_data *d, const struct sc_data_fmt *fmt,
		       const struct sc_mkey *mk, const struct sc_stack_hide *hide);

/* df's locks.  0 or -ENOMEM. */
int sc_data_dfile_init(struct sc_dfile *df, uint64_t size);
void sc_data_dfile_destroy(struct sc_dfile *df);
static inline uint64_t sc_data_size(const struct sc_dfile *df)
{
	return __atomic_load_n(&df->size, __ATOMIC_RELAXED);
}
/* Sets the size (write lock held); a cut unit that is no longer in the file is forgotten. */
void sc_data_set_size(const struct sc_xl *xl, struct sc_dfile *df, uint64_t size);
/* st of a regular file as the layers above see it (df: its state, or NULL). */
void sc_data_fix_stat(const struct sc_xl *xl, const struct sc_dfile *df, struct stat *st);
/* obj's state, made on first use; fh may carry a create's.  0 or fetch's -errno. */
int sc_data_load(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct sc_dfile **out);
/* obj's state if it has one, else NULL. */
struct sc_dfile *sc_data_state(const struct sc_xl *xl, const struct sc_obj *obj);
/* After a failed change, believe the backing file's size again (write lock held). */
void sc_data_resync_size(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 struct sc_dfile *df);
/*
 * Plaintext [x, y) of a change in dst (dst[0] is byte x), once the old
 * plaintext below old_sz is there: zeros from old_sz on, then the
 * write [wo, we)'s bytes from src (NULL: zeros).
 */
void sc_data_overlay(uint8_t *dst, uint64_t x, uint64_t y, uint64_t old_sz,
		     const uint8_t *src, uint64_t wo, uint64_t we);
/* The plan of the format's rules for a change (sc_data_plan or sc_data_plan_units). */
int sc_data_plan_for(const struct sc_xl *xl, uint64_t old_sz, uint64_t new_sz, uint64_t wo,
		     uint64_t we, bool direct_ok, struct sc_data_plan *p);

/*
 * The operations the engine serves for both formats (struct sc_xl_ops
 * members; a format's table names them beside its own).  They keep the
 * errno contracts of include/sc_xlator.h; O_TRUNC is the engine's (the
 * backing open never sees it).
 */
void sc_data_op_forget(struct sc_xl *xl, struct sc_obj *obj);
int sc_data_op_setattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		       const struct stat *attr, int valid, struct stat *st);
int sc_data_op_open(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh);
int sc_data_op_create(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      mode_t mode, struct sc_fh *fh, int *fd_out, struct stat *st);
ssize_t sc_data_op_read(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			void *buf, size_t size, off_t off);
ssize_t sc_data_op_write(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 const void *buf, size_t size, off_t off);
int sc_data_op_release(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh);
int sc_data_op_fallocate(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 int mode, off_t off, off_t len);

/*
 * The members of struct sc_xl_ops that every data layer takes from the
 * engine as they are; a format's table adds its name and its own
 * (lookup, getattr, link, xattrs, lseek, init, destroy).  No stored bytes
 * are ever copied between files (other keys; other tweaks, nonces or
 * associated data at other offsets): copy_file_range is refused, and the
 * kernel copies through read and write.
 */
#define SC_DATA_XL_OPS						\
	.forget			= sc_data_op_forget,		\
	.setattr		= sc_data_op_setattr,		\
	.mknod			= sc_data_op_mknod,		\
	.mkdir			= sc_data_op_mkdir,		\
	.symlink		= sc_data_op_symlink,		\
	.unlink			= sc_data_op_unlink,		\
	.rmdir			= sc_data_op_rmdir,		\
	.rename			= sc_data_op_rename,		\
	.open			= sc_data_op_open,		\
	.create			= sc_data_op_create,		\
	.read			= sc_data_op_read,		\
	.write			= sc_data_op_write,		\
	.release		= sc_data_op_release,		\
	.fallocate		= sc_data_op_fallocate,		\
	.copy_file_range	= sc_xl_no_copy_file_range,	\
	.readdir		= sc_data_op_readdir

#endif /* SC_DATA_ENGINE_H */
