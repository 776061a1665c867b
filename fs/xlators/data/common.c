/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * common.c - the data engine's small helpers (engine.h): per-thread
 * buffers for units being re-encrypted, exact reads and writes of the
 * backing file through the layer below, the flags of a backing open, the
 * fallocate modes a data layer serves, and the names it hides in the
 * backing root with the operations that only refuse or forward because
 * of them.  Both contents formats use each of these as it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>

#include "sc_crypto.h"
#include "sc_xlator.h"
#include "common.h"

/* ---- per-thread buffers ---------------------------------------------------- */

static __thread struct sc_tbuf t_out;	/* a run being re-encrypted */
static __thread struct sc_tbuf t_scr;	/* ciphertext read for decryption */

uint8_t *sc_data_tbuf_out(size_t need)
{
	return sc_tbuf_get(&t_out, need);
}

uint8_t *sc_data_tbuf_scr(size_t need)
{
	return sc_tbuf_get(&t_scr, need);
}

/* ---- backing I/O -------------------------------------------------------------- */

unsigned long long sc_data_backing_ino(struct sc_xl *xl, struct sc_obj *obj)
{
	struct stat st;

	if (sc_xl_getattr(xl->below, obj, NULL, &st) < 0)
		return 0;
	return (unsigned long long)st.st_ino;
}

/* 0, -EIO (short: the file shrank behind us, logged) or the error below. */
int sc_data_read_exact(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			void *buf, size_t len, uint64_t off)
{
	ssize_t n = sc_xl_read(xl->below, obj, fh, buf, len, (off_t)off);

	if (n < 0)
		return (int)n;
	if ((size_t)n != len) {
		sc_log(SC_LOG_ERR, "stackcrypt: %s: %s is shorter than "
			 "expected (%llu < %llu); modified behind the mount?\n", xl->ops->name,
			 sc_obj_name(xl->below, obj), (unsigned long long)(off + n),
			 (unsigned long long)(off + len));
		return -EIO;
	}
	return 0;
}

/* Writes all of buf; after a short write, the retry reports the cause (ENOSPC). */
int sc_data_write_exact(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = sc_xl_write(xl->below, obj, fh, (const uint8_t *)buf + done,
					len - done, (off_t)(off + done));

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* -ENOMEM or -EIO; -EINVAL (a range our arithmetic got wrong) is logged. */
int sc_data_crypto_err(const struct sc_xl *xl, int ret, const char *what, uint64_t off,
			size_t len, uint64_t size)
{
	if (ret == -EINVAL)
		sc_log(SC_LOG_ERR, "stackcrypt: %s: %s range [%llu, +%zu) size %llu "
			 "rejected (bug)\n", xl->ops->name, what, (unsigned long long)off, len,
			 (unsigned long long)size);
	return ret == -ENOMEM ? ret : -EIO;
}

/*
 * Flags for the backing open: read-write for RMW (and the writeback cache's
 * reads), no O_APPEND (pwrite would ignore our offsets), no O_DIRECT (the
 * page-aligned-buffer rules of the backing fs are not ours to meet; the
 * user's O_DIRECT still bypasses the FUSE page cache, never encryption).
 */
int sc_data_backing_flags(int flags)
{
	if ((flags & O_ACCMODE) == O_WRONLY)
		flags = (flags & ~O_ACCMODE) | O_RDWR;
	return flags & ~(O_APPEND | O_DIRECT);
}

/*
 * The fallocate requests a data layer serves: allocation (mode 0,
 * KEEP_SIZE), PUNCH_HOLE with KEEP_SIZE, ZERO_RANGE with or without it.
 * COLLAPSE_RANGE and INSERT_RANGE would move stored units to offsets their
 * encryption does not name, and UNSHARE_RANGE is not worth the risk.
 */
int sc_data_falloc_check(int mode, off_t off, off_t len)
{
	const int zero_modes = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;

	if (off < 0 || len <= 0)
		return -EINVAL;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | zero_modes) || (mode & zero_modes) == zero_modes ||
	    mode == FALLOC_FL_PUNCH_HOLE)	/* PUNCH_HOLE requires KEEP_SIZE */
		return -EOPNOTSUPP;
	return 0;
}

/* ---- the hidden config ------------------------------------------------------- */

void sc_data_hidden_init(struct sc_data_hidden *h, const struct sc_stack_hide *hide)
{
	h->hide = *hide;
	h->prefix_len = hide->prefix ? strlen(hide->prefix) : 0;
	h->also = NULL;
}

/*
 * The names in the backing root that the mount neither shows nor lets
 * anyone make, replace or move (the rule comes from whoever built the
 * stack: for a volume, its config, its mount lock, and the volume tools'
 * temporary copies of the config, which init and passwd rename over it).  A file made
 * under a temporary name through the mount could otherwise be renamed
 * over the config by a concurrent passwd, or be removed by its stale-file
 * cleanup.  The gcm layer adds its intent journal (also).
 */
static bool hidden_name(const struct sc_data_hidden *h, const char *name)
{
	for (size_t i = 0; i < sizeof(h->hide.names) / sizeof(h->hide.names[0]); i++)
		if (h->hide.names[i] && strcmp(name, h->hide.names[i]) == 0)
			return true;
	return (h->also && strcmp(name, h->also) == 0) ||
	       (h->prefix_len && strncmp(name, h->hide.prefix, h->prefix_len) == 0);
}

static const struct sc_data_hidden *hidden_of(const struct sc_xl *xl)
{
	return xl->priv;	/* the first member of the layer's state (common.h) */
}

bool sc_data_is_hidden(const struct sc_xl *xl, const struct sc_obj *dir, const char *name)
{
	return dir->is_root && hidden_name(hidden_of(xl), name);
}

void sc_data_op_destroy(struct sc_xl *xl)
{
	free(xl->priv);
	xl->priv = NULL;
}

int sc_data_op_lookup(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       int *fd_out, struct stat *st)
{
	if (sc_data_is_hidden(xl, dir, name))
		return -ENOENT;
	return sc_xl_lookup(xl->below, dir, name, fd_out, st);
}

int sc_data_op_mknod(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      mode_t mode, dev_t rdev, int *fd_out, struct stat *st)
{
	if (sc_data_is_hidden(xl, dir, name))
		return -EPERM;
	return sc_xl_mknod(xl->below, dir, name, mode, rdev, fd_out, st);
}

int sc_data_op_mkdir(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      mode_t mode, int *fd_out, struct stat *st)
{
	if (sc_data_is_hidden(xl, dir, name))
		return -EPERM;
	return sc_xl_mkdir(xl->below, dir, name, mode, fd_out, st);
}

int sc_data_op_symlink(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			const char *target, int *fd_out, struct stat *st)
{
	if (sc_data_is_hidden(xl, dir, name))
		return -EPERM;
	return sc_xl_symlink(xl->below, dir, name, target, fd_out, st);
}

int sc_data_op_link(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		     const char *newname, struct stat *st)
{
	if (sc_data_is_hidden(xl, newdir, newname))
		return -EPERM;
	return sc_xl_link(xl->below, obj, newdir, newname, st);
}

int sc_data_op_unlink(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	if (sc_data_is_hidden(xl, dir, name))
		return -ENOENT;
	return sc_xl_unlink(xl->below, dir, name);
}

int sc_data_op_rmdir(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	if (sc_data_is_hidden(xl, dir, name))
		return -ENOENT;
	return sc_xl_rmdir(xl->below, dir, name);
}

int sc_data_op_rename(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       struct sc_obj *newdir, const char *newname, unsigned int flags)
{
	if (sc_data_is_hidden(xl, dir, name) || sc_data_is_hidden(xl, newdir, newname))
		return -EPERM;
	return sc_xl_rename(xl->below, dir, name, newdir, newname, flags);
}

struct root_fill {
	int				(*fill)(void *ctx, const struct sc_dirent *de);
	void				*ctx;
	const struct sc_data_hidden	*h;
};

static int root_fill(void *ctx, const struct sc_dirent *de)
{
	struct root_fill *rf = ctx;

	if (hidden_name(rf->h, de->name))
		return 0;
	return rf->fill(rf->ctx, de);
}

int sc_data_op_readdir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off,
			int (*fill)(void *ctx, const struct sc_dirent *de), void *ctx)
{
	struct root_fill rf = { .fill = fill, .ctx = ctx, .h = hidden_of(xl) };

	if (!obj->is_root)
		return sc_xl_readdir(xl->below, obj, fh, off, fill, ctx);
	return sc_xl_readdir(xl->below, obj, fh, off, root_fill, &rf);
}
