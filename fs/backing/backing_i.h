/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * backing_i.h - an engine of sc_backing.h: one table of operations.  Each
 * operation is the public call of the same name (include/sc_backing.h
 * says what it returns) on the engine's own state, priv.  An engine may
 * leave out what it cannot do: NULL answers -EROFS for the calls that
 * write a file (pwrite, truncate, sync, futimens, and open_file with O_RDWR) and
 * -ENOENT for lock_mount; a NULL entries counts list's names of "".  Private to fs/backing/.
 */
#ifndef SC_BACKING_I_H
#define SC_BACKING_I_H

#include "sc_backing.h"

struct sc_backing_ops {
	const char	*name;		/* "dir", "gluster", "cephfs" */
	const char	*scheme;	/* the URL prefix ("gluster://"); NULL: a path */
	int	(*open)(const char *spec, const char *log, void **priv, char *err,
			size_t errlen);
	void	(*close)(void *priv);
	ssize_t	(*read_file)(void *priv, const char *name, char *buf, size_t cap,
			     struct stat *st);
	int	(*write_file)(void *priv, const char *tmp, const char *name, const void *data,
			      size_t len, mode_t mode, bool replace, char *err, size_t errlen);
	int	(*entries)(void *priv, bool (*skip)(const char *name), char *first,
			   size_t firstlen);
	int	(*lstat)(void *priv, const char *rel, struct stat *st);
	ssize_t	(*getxattr)(void *priv, const char *rel, const char *name, void *buf,
			    size_t len);
	int	(*setxattr)(void *priv, const char *rel, const char *name, const void *val,
			    size_t len, int flags);
	ssize_t	(*readlink)(void *priv, const char *rel, char *buf, size_t len);
	int	(*list)(void *priv, const char *rel, int (*fn)(void *ctx, const char *name),
			void *ctx);
	int	(*walk)(void *priv, sc_backing_walk_fn fn, void *ctx);
	int	(*open_file)(void *priv, int at, const char *name, const char *rel, int flags);
	int	(*fstat)(void *priv, int fd, struct stat *st);
	ssize_t	(*fgetxattr)(void *priv, int fd, const char *name, void *buf, size_t len);
	ssize_t	(*pread)(void *priv, int fd, void *buf, size_t len, uint64_t off);
	int	(*pwrite)(void *priv, int fd, const void *buf, size_t len, uint64_t off);
	int	(*truncate)(void *priv, int fd, uint64_t size);
	int	(*sync)(void *priv, int fd);
	int	(*futimens)(void *priv, int fd, const struct timespec ts[2]);
	void	(*close_file)(void *priv, int fd);
	int	(*lock_config)(void *priv);
	int	(*lock_mount)(void *priv);
	/* sc_backing_stack_bottom; priv NULL: name the bottom only */
	int	(*stack_bottom)(void *priv, struct sc_stack_spec *s);
	int	(*root)(void *priv, struct stat *st);
	int	(*sync_all)(void *priv);	/* NULL: -EOPNOTSUPP */
};

/*
 * The engines (dir.c; gluster.c or, built without libgfapi, gluster_none.c;
 * cephfs.c or, built without libcephfs, cephfs_none.c).
 */
extern const struct sc_backing_ops sc_backing_dir_ops;
extern const struct sc_backing_ops sc_backing_gluster_ops;
extern const struct sc_backing_ops sc_backing_cephfs_ops;

/*
 * A temporary name in dir for a file about to be put in place: prefix and
 * 16 random hex digits into buf (len bytes).  0 or -errno (no randomness,
 * -ENAMETOOLONG).
 */
int sc_backing_tmp_name(const char *prefix, char *buf, size_t len);

#endif /* SC_BACKING_I_H */
