/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crypt_i.h - private to the data translators (crypt: fs/xlators/crypt/crypt.c;
 * gcm: fs/xlators/gcm/gcm.c) and their tests: the data-unit arithmetic, kept
 * in pure functions (fs/xlators/crypt/crypt_span.c) so it can be tested
 * without FUSE, files or keys, and the helpers the two layers share
 * (fs/xlators/crypt/crypt_common.c).
 *
 * Vocabulary (docs/format.md has the rules these follow):
 *  - a file of size sz is cut into units of bs bytes; the last one may be
 *    partial;
 *  - the "tail group": when the last unit holds 1..15 bytes and sz >= 16,
 *    the crypto library encrypts it together with the last 16 stored bytes
 *    of the unit before it, so those two units are only ever decrypted or
 *    re-encrypted together;
 *  - a "tiny" file (0 < sz < 16) is one short unit under a keystream whose
 *    IV lives in the header and must change on every write of it;
 *  - a unit whose stored bytes are all zero is a hole and reads as zeros,
 *    so units that were never written are simply left unallocated.
 */
#ifndef SC_CRYPT_I_H
#define SC_CRYPT_I_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "crypt_xl.h"	/* struct sc_crypt_hide */

struct sc_xl;
struct sc_obj;
struct sc_fh;
struct sc_dirent;
struct sc_rlock;
struct stat;

/* Smallest non-tiny file; also the cipher block the tail rule borrows. */
#define SC_CRYPT_TINY	16u

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Number of units of a file of size sz: ceil(sz / bs). */
static inline uint64_t sc_crypt_nunits(uint64_t bs, uint64_t sz)
{
	return (sz + bs - 1) / bs;
}

/* True when the last unit of a file of size sz is tied to the one before it. */
static inline bool sc_crypt_short_tail(uint64_t bs, uint64_t sz)
{
	return sz >= SC_CRYPT_TINY && sz % bs != 0 && sz % bs < SC_CRYPT_TINY;
}

/*
 * The stored range [*a, *b) that must be read and decrypted, under file
 * size sz, to obtain the plaintext range [off, end) (off < end <= sz): the
 * covering units, clipped to sz, widened to the whole tail group when it
 * touches it.
 */
void sc_crypt_dec_range(uint64_t bs, uint64_t sz, uint64_t off, uint64_t end,
			uint64_t *a, uint64_t *b);

/*
 * A run of consecutive units [ua, ub) to re-encrypt under the new size and
 * write with one call.  Units [da, db) inside it are wholly overwritten by
 * the write and may be encrypted straight from the caller's buffer
 * ("direct"); da == db when there are none.  Units of the run outside
 * [da, db) are built in a scratch buffer from old plaintext (read and
 * decrypted under the old size where they held data), zeros beyond the old
 * size, and the write's bytes.
 */
struct sc_crypt_run {
	uint64_t	ua, ub;
	uint64_t	da, db;
};

#define SC_CRYPT_MAX_RUNS	4

/*
 * What a size change from old_sz to new_sz, with an optional write of
 * [wo, we) (wo == we: none; we <= new_sz), must re-encrypt: the written
 * units, every surviving unit whose encoding depends on the size and
 * changes (the old partial last unit, both tail groups), widened so a tail
 * group is always written whole.  Units beyond old_sz that nothing writes
 * stay holes.  Runs are in ascending order, which is also the crash-safe
 * write order: the old last unit is re-encrypted as a full unit before any
 * later unit extends the file past it.
 */
struct sc_crypt_plan {
	unsigned		nruns;
	struct sc_crypt_run	run[SC_CRYPT_MAX_RUNS];
	bool			rekey;	/* tiny result: new keystream IV, new header after data */
};

/*
 * Fills *p.  direct_ok false forbids direct units (the write source is not
 * a buffer, e.g. zeroing).  Returns 0, or -EINVAL if the arguments are
 * inconsistent (we > new_sz, wo > we, new_sz < old_sz with a write past
 * new_sz).
 */
int sc_crypt_plan(uint64_t bs, uint64_t old_sz, uint64_t new_sz, uint64_t wo, uint64_t we,
		  bool direct_ok, struct sc_crypt_plan *p);

/*
 * sc_crypt_plan for a format that encrypts every unit on its own, at any
 * length (aes-gcm, docs/format.md section 10): no tiny file, no tail group,
 * never a rekey.  A unit's encoding is its length alone, and only a whole
 * unit can be a hole, so a size change that leaves a partial last unit
 * past the old data plans it too (sealed as zeros).  Same arguments and
 * returns.
 */
int sc_crypt_plan_units(uint64_t bs, uint64_t old_sz, uint64_t new_sz, uint64_t wo, uint64_t we,
			bool direct_ok, struct sc_crypt_plan *p);

/* ---- shared by the crypt and gcm translators (crypt_common.c) ---------------- */

/*
 * This thread's buffers for a run being re-encrypted (out) and for stored
 * bytes read to be decrypted (scr), grown to at least need bytes (old
 * contents not kept), or NULL.  Wiped and freed when the thread exits.
 */
uint8_t *sc_crypt_tbuf_out(size_t need);
uint8_t *sc_crypt_tbuf_scr(size_t need);

/* A file's rwlock (writer-preferring) and unit range lock.  0 or -ENOMEM. */
int sc_crypt_locks_init(pthread_rwlock_t *lock, struct sc_rlock *units);
void sc_crypt_locks_destroy(pthread_rwlock_t *lock, struct sc_rlock *units);

/*
 * Per-file state in obj->priv[xl->id], from the first use until ->forget;
 * a create leaves the new file's state in fh->priv[xl->id] (its obj does
 * not exist yet) and the first operation on the obj adopts it.
 */
struct sc_crypt_state_ops {
	/* A new state for obj read from the backing file (fh may be NULL). */
	int	(*fetch)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, void **out);
	void	(*free)(void *st);
};
void *sc_crypt_state_get(const struct sc_xl *xl, const struct sc_obj *obj);
void *sc_crypt_state_pending(const struct sc_xl *xl, const struct sc_fh *fh);
/* obj's state, made on first use (race-free).  0 or fetch's -errno. */
int sc_crypt_state_load(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			const struct sc_crypt_state_ops *ops, void **out);
/* At release: frees what a create left on fh if no obj adopted it. */
void sc_crypt_state_release(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			    const struct sc_crypt_state_ops *ops);

/* The backing inode number of obj, for log lines (0 if unknown). */
unsigned long long sc_crypt_backing_ino(struct sc_xl *xl, struct sc_obj *obj);
/* Exactly len stored bytes at off, from the layer below: 0, -EIO (short, logged), -errno. */
int sc_crypt_read_exact(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			void *buf, size_t len, uint64_t off);
/* All of buf at off, to the layer below: 0 or -errno. */
int sc_crypt_write_exact(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 const void *buf, size_t len, uint64_t off);
/* A crypto library error as the reader sees it: -ENOMEM or -EIO (-EINVAL logged: a bug). */
int sc_crypt_crypto_err(const struct sc_xl *xl, int ret, const char *what, uint64_t off,
			size_t len, uint64_t size);
/* The user's open flags as the backing open gets them (see crypt_common.c). */
int sc_crypt_backing_flags(int flags);
/* A fallocate request a data layer serves: 0, -EINVAL (bad range), -EOPNOTSUPP (mode). */
int sc_crypt_falloc_check(int mode, off_t off, off_t len);

/*
 * The root names a layer hides (the volume config).  It must be the FIRST
 * member of the layer's xl->priv: the shared operations below find it there.
 */
struct sc_crypt_hidden {
	struct sc_crypt_hide	hide;
	size_t			prefix_len;
	const char		*also;	/* one more name a layer keeps for itself (gcm: its journal) */
};
void sc_crypt_hidden_init(struct sc_crypt_hidden *h, const struct sc_crypt_hide *hide);
/* True when name in dir is one of them. */
bool sc_crypt_is_hidden(const struct sc_xl *xl, const struct sc_obj *dir, const char *name);

/*
 * Operations both layers use as they are: the hidden names refused
 * (-ENOENT to look up or remove, -EPERM to make, link or move) and left
 * out of the root's listing, everything else forwarded; copy_file_range
 * is -EOPNOTSUPP (the kernel copies through read and write); destroy
 * frees xl->priv.
 */
void sc_crypt_op_destroy(struct sc_xl *xl);
int sc_crypt_op_lookup(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       int *fd_out, struct stat *st);
int sc_crypt_op_mknod(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      mode_t mode, dev_t rdev, int *fd_out, struct stat *st);
int sc_crypt_op_mkdir(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      mode_t mode, int *fd_out, struct stat *st);
int sc_crypt_op_symlink(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			const char *target, int *fd_out, struct stat *st);
int sc_crypt_op_link(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		     const char *newname, struct stat *st);
int sc_crypt_op_unlink(struct sc_xl *xl, struct sc_obj *dir, const char *name);
int sc_crypt_op_rmdir(struct sc_xl *xl, struct sc_obj *dir, const char *name);
int sc_crypt_op_rename(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       struct sc_obj *newdir, const char *newname, unsigned int flags);
ssize_t sc_crypt_op_copy_file_range(struct sc_xl *xl,
				    struct sc_obj *obj_in, struct sc_fh *fh_in, off_t off_in,
				    struct sc_obj *obj_out, struct sc_fh *fh_out, off_t off_out,
				    size_t len, int flags);
int sc_crypt_op_readdir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off,
			int (*fill)(void *ctx, const struct sc_dirent *de), void *ctx);

#endif /* SC_CRYPT_I_H */
