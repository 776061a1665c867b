/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * common.h - the data engine's small helpers (common.c), which both
 * contents formats use as they are: per-thread buffers, exact backing
 * reads and writes, the flags of a backing open, the fallocate modes a
 * data layer serves, and the names it hides in the backing root with the
 * operations that only refuse or forward because of them.
 */
#ifndef SC_DATA_COMMON_H
#define SC_DATA_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sc_xlator.h"
#include "data_xl.h"	/* struct sc_stack_hide */

struct stat;

/*
 * This thread's buffers for a run being re-encrypted (out) and for stored
 * bytes read to be decrypted (scr), grown to at least need bytes (old
 * contents not kept), or NULL.  Wiped and freed when the thread exits.
 */
uint8_t *sc_data_tbuf_out(size_t need);
uint8_t *sc_data_tbuf_scr(size_t need);


/* The backing inode number of obj (0 if unknown): gcm's once-per-file report key. */
unsigned long long sc_data_backing_ino(struct sc_xl *xl, struct sc_obj *obj);
/* Exactly len stored bytes at off, from the layer below: 0, -EIO (short, logged), -errno. */
int sc_data_read_exact(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			void *buf, size_t len, uint64_t off);
/* All of buf at off, to the layer below: 0 or -errno. */
int sc_data_write_exact(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 const void *buf, size_t len, uint64_t off);
/* A crypto library error as the reader sees it: -ENOMEM or -EIO (-EINVAL logged: a bug). */
int sc_data_crypto_err(const struct sc_xl *xl, int ret, const char *what, uint64_t off,
			size_t len, uint64_t size);
/* The user's open flags as the backing open gets them (see common.c). */
int sc_data_backing_flags(int flags);
/* A fallocate request a data layer serves: 0, -EINVAL (bad range), -EOPNOTSUPP (mode). */
int sc_data_falloc_check(int mode, off_t off, off_t len);

/*
 * The root names a data layer hides (the volume config).  It is the first
 * member of every data layer's xl->priv (struct sc_data, engine.h): the
 * operations below find it there.
 */
struct sc_data_hidden {
	struct sc_stack_hide	hide;
	size_t			prefix_len;
	const char		*also;	/* one more name a format keeps for itself (gcm: its journal) */
};
void sc_data_hidden_init(struct sc_data_hidden *h, const struct sc_stack_hide *hide);
/* True when name in dir is one of them. */
bool sc_data_is_hidden(const struct sc_xl *xl, const struct sc_obj *dir, const char *name);

/*
 * Operations both formats use as they are: the hidden names refused
 * (-ENOENT to look up or remove, -EPERM to make, link or move) and left
 * out of the root's listing, everything else forwarded; destroy frees
 * xl->priv.
 */
void sc_data_op_destroy(struct sc_xl *xl);
int sc_data_op_lookup(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       int *fd_out, struct stat *st);
int sc_data_op_mknod(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      mode_t mode, dev_t rdev, int *fd_out, struct stat *st);
int sc_data_op_mkdir(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      mode_t mode, int *fd_out, struct stat *st);
int sc_data_op_symlink(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			const char *target, int *fd_out, struct stat *st);
int sc_data_op_link(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		     const char *newname, struct stat *st);
int sc_data_op_unlink(struct sc_xl *xl, struct sc_obj *dir, const char *name);
int sc_data_op_rmdir(struct sc_xl *xl, struct sc_obj *dir, const char *name);
int sc_data_op_rename(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       struct sc_obj *newdir, const char *newname, unsigned int flags);
int sc_data_op_readdir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off,
			int (*fill)(void *ctx, const struct sc_dirent *de), void *ctx);

#endif /* SC_DATA_COMMON_H */
