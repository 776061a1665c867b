/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dir.c - the directory engine of sc_backing.h: a local directory (ext4,
 * XFS, a GlusterFS FUSE mount...), reached by *at() calls on an fd of its
 * root, so that a rename above it during a command changes nothing.
 *
 * Files are kernel fds.  The config lock is a flock(2) of the root
 * directory (the mount takes its one-mount lock itself, before it forks).
 * The walk does not cross into other file systems mounted below the root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sc_crypto.h"	/* SC_CONFIG_NAME, SC_LOCK_NAME, SC_HDR_XATTR */
#include "sc_local.h"	/* sc_pwrite_all */
#include "backing_i.h"

struct dir {
	int	root;		/* O_RDONLY | O_DIRECTORY */
	int	lockfd;		/* the config lock's fd, -1: not held */
	char	path[PATH_MAX];
};

static int dir_open(const char *spec, const char *log, void **priv, char *err, size_t errlen)
{
	struct dir *d;
	struct stat st;

	(void)log;
	if (stat(spec, &st) || (S_ISDIR(st.st_mode) && access(spec, X_OK))) {
		snprintf(err, errlen, "backing directory %s: %s", spec, strerror(errno));
		return -ENOTDIR;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "backing directory %s: not a directory", spec);
		return -ENOTDIR;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(d->path, sizeof(d->path), "%s", spec);
	d->lockfd = -1;
	d->root = open(spec, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->root < 0) {
		snprintf(err, errlen, "backing directory %s: %s", spec, strerror(errno));
		free(d);
		return -ENOTDIR;
	}
	*priv = d;
	return 0;
}

static void dir_close(void *priv)
{
	struct dir *d = priv;

	if (d->lockfd >= 0)
		close(d->lockfd);
	close(d->root);
	free(d);
}

/* rel as an *at() path from the root ("" is the root itself: "."). */
static const char *at_path(const char *rel)
{
	return *rel ? rel : ".";
}

/*
 * Where rel is, for an *at() call: the root and rel itself, or, for a rel
 * longer than a path may be (a volume with encrypted names has longer
 * backing paths than its plaintext ones), the directory that holds its
 * last component, opened component by component (*own: the caller closes
 * it), and that component in *base.  The fd, or -errno.
 */
static int parent_of(const struct dir *d, const char *rel, const char **base, bool *own)
{
	const char *p = rel, *slash;
	char comp[NAME_MAX + 1];
	int fd = d->root, nfd;

	*own = false;
	*base = at_path(rel);
	if (strlen(rel) < PATH_MAX)
		return d->root;
	while ((slash = strchr(p, '/'))) {
		if ((size_t)(slash - p) > NAME_MAX) {
			nfd = -ENAMETOOLONG;
		} else {
			snprintf(comp, sizeof(comp), "%.*s", (int)(slash - p), p);
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (nfd < 0)
				nfd = -errno;
		}
		if (*own)
			close(fd);
		if (nfd < 0)
			return nfd;
		fd = nfd;
		*own = true;
		p = slash + 1;
	}
	*base = p;
	return fd;
}

static ssize_t dir_read_file(void *priv, const char *name, char *buf, size_t cap,
			     struct stat *st)
{
	struct dir *d = priv;
	size_t n = 0;
	ssize_t r = 0;
	int fd;

	fd = openat(d->root, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st))
		r = -errno;
	else if (!S_ISREG(st->st_mode))
		r = -EUCLEAN;
	else if ((size_t)st->st_size > cap)
		r = -EFBIG;
	while (!r && n <= cap) {
		/* one byte past cap: a file that grew since the fstat is too large too */
		char extra;
		ssize_t m = n < cap ? read(fd, buf + n, cap - n) : read(fd, &extra, 1);

		if (m < 0 && errno == EINTR)
			continue;
		if (m < 0)
			r = -errno;
		else if (m == 0)
			break;
		else if (n == cap)
			r = -EFBIG;
		else
			n += (size_t)m;
	}
	close(fd);
	return r ? r : (ssize_t)n;
}

/*
 * Removes what a writer that died before its rename left in the root:
 * small regular files named tmp* without a file header (a file of that
 * name made through the mount has a header, and is the user's).  Called
 * under the config lock, so no live writer's file is among them.
 */
static void remove_stale_tmp(int dfd, const char *tmp)
{
	struct dirent *de;
	int fd, ffd;
	DIR *dp;

	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return;
	}
	while ((de = readdir(dp))) {
		struct stat st;

		if (strncmp(de->d_name, tmp, strlen(tmp)))
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_size > SC_CONFIG_MAX_TEXT)
			continue;
		ffd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (ffd < 0)
			continue;
		if (fgetxattr(ffd, SC_HDR_XATTR, NULL, 0) < 0 && errno == ENODATA)
			unlinkat(dfd, de->d_name, 0);
		close(ffd);
	}
	closedir(dp);
}

/* The root, locked for a write: a dup of the held lock's fd, or locked here (waiting). */
static int root_locked(struct dir *d)
{
	int dfd, r;

	if (d->lockfd >= 0) {
		dfd = dup(d->lockfd);	/* this process holds the lock on it */
		return dfd < 0 ? -errno : dfd;
	}
	dfd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (flock(dfd, LOCK_EX)) {
		r = -errno;
		close(dfd);
		return r;
	}
	return dfd;
}

/*
 * data into the new file tmp of dfd, fsynced.  0 or -errno with *step
 * the call that failed, nothing left behind.
 */
static int write_tmp(int dfd, const char *tmp, const void *data, size_t len, mode_t mode,
		     const char **step)
{
	size_t done = 0;
	int fd, r = 0;

	*step = "create";
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	*step = "write";
	while (done < len && !r) {
		ssize_t m = write(fd, (const char *)data + done, len - done);

		if (m < 0 && errno != EINTR)
			r = -errno;
		else if (m > 0)
			done += (size_t)m;
	}
	if (!r && fsync(fd)) {
		r = -errno;
		*step = "fsync";
	}
	if (close(fd) && !r)
		r = -errno;
	if (r)
		unlinkat(dfd, tmp, 0);
	return r;
}

/*
 * tmp in place of name, atomically.  Without replace, RENAME_NOREPLACE
 * makes a concurrent init lose instead of overwriting a volume's only
 * key; link(2), which never replaces, where the file system lacks it.
 */
static int swap_in(int dfd, const char *tmp, const char *name, bool replace)
{
	int r;

	if (replace)
		return renameat(dfd, tmp, dfd, name) ? -errno : 0;
	r = renameat2(dfd, tmp, dfd, name, RENAME_NOREPLACE) ? -errno : 0;
	if (r == -EINVAL || r == -ENOSYS) {
		r = linkat(dfd, tmp, dfd, name, 0) ? -errno : 0;
		if (!r)
			unlinkat(dfd, tmp, 0);
	}
	return r;
}

static int dir_write_file(void *priv, const char *tmp, const char *name, const void *data,
			  size_t len, mode_t mode, bool replace, char *err, size_t errlen)
{
	struct dir *d = priv;
	char tname[NAME_MAX + 1];
	const char *step = "lock";
	int dfd, r;

	/*
	 * One writer at a time (the lock goes with the fd): then any
	 * temporary file still here was left by a writer that died before its
	 * rename, and is removed so it cannot pile up or show in the mount.
	 */
	dfd = root_locked(d);
	if (dfd < 0) {
		snprintf(err, errlen, "cannot lock %s: %s", d->path, strerror(-dfd));
		return dfd;
	}
	remove_stale_tmp(dfd, tmp);
	r = sc_backing_tmp_name(tmp, tname, sizeof(tname));
	if (r) {
		snprintf(err, errlen, "no temporary name in %s: %s", d->path, strerror(-r));
		goto out_close;
	}
	/* the old file stays until the new one is durable under its temporary name */
	r = write_tmp(dfd, tname, data, len, mode, &step);
	if (r) {
		snprintf(err, errlen, "cannot %s %s/%s: %s", step, d->path, tname, strerror(-r));
		goto out_close;
	}
	r = swap_in(dfd, tname, name, replace);
	if (r) {
		snprintf(err, errlen, "cannot rename %s/%s to %s: %s", d->path, tname, name,
			 strerror(-r));
		unlinkat(dfd, tname, 0);
	} else if (fsync(dfd)) {
		r = -errno;
		snprintf(err, errlen, "cannot fsync directory %s: %s", d->path, strerror(-r));
	}
out_close:
	close(dfd);
	return r;
}

/* Entries of dir but . and .. and skip's, an empty lost+found (ext4's own) not counted. */
static int count_entries(int dfd, bool (*skip)(const char *name), char *first, size_t firstlen)
{
	struct dirent *de;
	int fd, n = 0;
	DIR *dp;

	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (skip && skip(de->d_name))
			continue;
		if (!strcmp(de->d_name, "lost+found")) {
			int sub = openat(dfd, "lost+found", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			if (sub >= 0 && count_entries(sub, NULL, NULL, 0) == 0) {
				close(sub);
				continue;
			}
			if (sub >= 0)
				close(sub);
		}
		if (n++ == 0 && firstlen)
			snprintf(first, firstlen, "%s", de->d_name);
	}
	closedir(dp);
	return n;
}

static int dir_entries(void *priv, bool (*skip)(const char *name), char *first,
		       size_t firstlen)
{
	struct dir *d = priv;

	if (firstlen)
		first[0] = 0;
	return count_entries(d->root, skip, first, firstlen);
}

static int dir_lstat(void *priv, const char *rel, struct stat *st)
{
	const char *base;
	bool own;
	int fd, r;

	fd = parent_of(priv, rel, &base, &own);
	if (fd < 0)
		return fd;
	r = fstatat(fd, base, st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
	if (own)
		close(fd);
	return r;
}

/*
 * The xattr calls take no dirfd: rel as a path through /proc/self/fd of
 * the directory that holds it (its last component not followed), into
 * buf; *fd the directory to close if *own.  0 or -errno.
 */
static int xattr_path(const struct dir *d, const char *rel, char *buf, size_t len, int *fd,
		      bool *own)
{
	const char *base;

	*fd = parent_of(d, rel, &base, own);
	if (*fd < 0)
		return *fd;
	if ((size_t)snprintf(buf, len, "/proc/self/fd/%d/%s", *fd, base) < len)
		return 0;
	if (*own)
		close(*fd);
	return -ENAMETOOLONG;
}

static ssize_t dir_getxattr(void *priv, const char *rel, const char *name, void *buf,
			    size_t len)
{
	struct dir *d = priv;
	char path[PATH_MAX + 64];
	ssize_t n;
	bool own;
	int fd, r;

	if (!*rel) {
		n = fgetxattr(d->root, name, buf, len);
		return n < 0 ? -errno : n;
	}
	r = xattr_path(d, rel, path, sizeof(path), &fd, &own);
	if (r)
		return r;
	n = lgetxattr(path, name, buf, len);
	if (n < 0)
		n = -errno;
	if (own)
		close(fd);
	return n;
}

static int dir_setxattr(void *priv, const char *rel, const char *name, const void *val,
			size_t len, int flags)
{
	struct dir *d = priv;
	char path[PATH_MAX + 64];
	bool own;
	int fd, r;

	if (!*rel)
		return fsetxattr(d->root, name, val, len, flags) ? -errno : 0;
	r = xattr_path(d, rel, path, sizeof(path), &fd, &own);
	if (r)
		return r;
	r = lsetxattr(path, name, val, len, flags) ? -errno : 0;
	if (own)
		close(fd);
	return r;
}

static ssize_t dir_readlink(void *priv, const char *rel, char *buf, size_t len)
{
	const char *base;
	ssize_t n;
	bool own;
	int fd;

	fd = parent_of(priv, rel, &base, &own);
	if (fd < 0)
		return fd;
	n = readlinkat(fd, base, buf, len);
	if (n < 0)
		n = -errno;
	if (own)
		close(fd);
	return n;
}

static int dir_list(void *priv, const char *rel, int (*fn)(void *ctx, const char *name),
		    void *ctx)
{
	const char *base;
	struct dirent *de;
	int pfd, fd, r = 0;
	bool own;
	DIR *dp;

	pfd = parent_of(priv, rel, &base, &own);
	if (pfd < 0)
		return pfd;
	fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		r = -errno;
	if (own)
		close(pfd);
	if (fd < 0)
		return r;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return -errno;
	}
	while (!r && (errno = 0, de = readdir(dp)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			r = fn(ctx, de->d_name);
	if (!r && !de && errno)
		r = -errno;
	closedir(dp);
	return r;
}

/* ---- the walk -------------------------------------------------------------------- */

struct walk {
	dev_t			dev;
	/* Every call is relative to a directory fd: the bound is only for rel, which with
	 * encrypted names is longer than the plaintext path, itself up to PATH_MAX deep. */
	char			rel[4 * PATH_MAX];
	sc_backing_walk_fn	fn;
	void			*ctx;
};

static int walk_dir(struct walk *w, int dfd, size_t rel_len);

/* Entry name of directory dp, whose rel is w->rel[0..rel_len): to fn, then below. */
static int walk_entry(struct walk *w, DIR *dp, const char *name, size_t rel_len)
{
	size_t nlen = strlen(name);
	struct stat st;
	int cfd, r;

	if (rel_len + nlen + 2 > sizeof(w->rel))
		return -ENAMETOOLONG;
	if (rel_len)
		w->rel[rel_len] = '/';
	memcpy(w->rel + rel_len + !!rel_len, name, nlen + 1);
	if (fstatat(dirfd(dp), name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 :	/* removed while we walk */
		       w->fn(w->ctx, dirfd(dp), name, w->rel, NULL, -errno);
	r = w->fn(w->ctx, dirfd(dp), name, w->rel, &st, 0);
	if (r || !S_ISDIR(st.st_mode) || st.st_dev != w->dev)
		return r;
	cfd = openat(dirfd(dp), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0)
		return w->fn(w->ctx, dirfd(dp), name, w->rel, &st, -errno);
	return walk_dir(w, cfd, rel_len + nlen + !!rel_len);
}

/* Depth first, not following symlinks nor crossing into other filesystems. */
static int walk_dir(struct walk *w, int dfd, size_t rel_len)
{
	struct dirent *de;
	DIR *dp;
	int r = 0;

	dp = fdopendir(dfd);
	if (!dp) {
		r = -errno;
		close(dfd);
		return r;
	}
	while (!r && (errno = 0, de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* the config and the mount lock live in the root only */
		if (rel_len == 0 && (!strcmp(de->d_name, SC_CONFIG_NAME) ||
				     !strcmp(de->d_name, SC_LOCK_NAME)))
			continue;
		r = walk_entry(w, dp, de->d_name, rel_len);
	}
	if (!r && !de && errno) {
		int e = -errno;

		w->rel[rel_len] = 0;
		r = w->fn(w->ctx, dirfd(dp), NULL, w->rel, NULL, e);
	}
	closedir(dp);
	w->rel[rel_len] = 0;
	return r;
}

static int dir_walk(void *priv, sc_backing_walk_fn fn, void *ctx)
{
	struct dir *d = priv;
	struct walk *w;
	struct stat st;
	int dfd, r;

	dfd = openat(d->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &st)) {
		r = -errno;
		close(dfd);
		return r;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		close(dfd);
		return -ENOMEM;
	}
	w->dev = st.st_dev;
	w->fn = fn;
	w->ctx = ctx;
	r = walk_dir(w, dfd, 0);
	free(w);
	return r < 0 ? r : 0;
}

/* ---- files ------------------------------------------------------------------------ */

static int dir_open_file(void *priv, int at, const char *name, const char *rel, int flags)
{
	const char *base = name;
	bool own = false;
	int fd;

	if (at < 0)
		at = parent_of(priv, rel, &base, &own);
	if (at < 0)
		return at;
	fd = openat(at, base, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		fd = -errno;
	if (own)
		close(at);
	return fd;
}

static int dir_fstat(void *priv, int fd, struct stat *st)
{
	(void)priv;
	return fstat(fd, st) ? -errno : 0;
}

static ssize_t dir_fgetxattr(void *priv, int fd, const char *name, void *buf, size_t len)
{
	ssize_t n = fgetxattr(fd, name, buf, len);

	(void)priv;
	return n < 0 ? -errno : n;
}

static ssize_t dir_pread(void *priv, int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	(void)priv;
	do
		n = pread(fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static int dir_pwrite(void *priv, int fd, const void *buf, size_t len, uint64_t off)
{
	(void)priv;
	return sc_pwrite_all(fd, buf, len, off);
}

static int dir_truncate(void *priv, int fd, uint64_t size)
{
	(void)priv;
	return ftruncate(fd, (off_t)size) ? -errno : 0;
}

static int dir_futimens(void *priv, int fd, const struct timespec ts[2])
{
	(void)priv;
	return futimens(fd, ts) ? -errno : 0;
}

static int dir_sync(void *priv, int fd)
{
	(void)priv;
	return fsync(fd) ? -errno : 0;
}

static void dir_close_file(void *priv, int fd)
{
	(void)priv;
	close(fd);
}

static int dir_lock_config(void *priv)
{
	struct dir *d = priv;
	int fd, r;

	if (d->lockfd >= 0)
		return 0;
	fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return r;
	}
	d->lockfd = fd;
	return 0;
}

static int dir_root(void *priv, struct stat *st)
{
	struct dir *d = priv;
	int fd = open(d->path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* syncfs of the directory's file system: every file the tool wrote, durable. */
static int dir_sync_all(void *priv)
{
	struct dir *d = priv;
	int fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = syncfs(fd) ? -errno : 0;
	close(fd);
	return r;
}

const struct sc_backing_ops sc_backing_dir_ops = {
	.name		= "dir",
	.scheme		= NULL,
	.open		= dir_open,
	.close		= dir_close,
	.read_file	= dir_read_file,
	.write_file	= dir_write_file,
	.entries	= dir_entries,
	.lstat		= dir_lstat,
	.getxattr	= dir_getxattr,
	.setxattr	= dir_setxattr,
	.readlink	= dir_readlink,
	.list		= dir_list,
	.walk		= dir_walk,
	.open_file	= dir_open_file,
	.fstat		= dir_fstat,
	.fgetxattr	= dir_fgetxattr,
	.pread		= dir_pread,
	.pwrite		= dir_pwrite,
	.truncate	= dir_truncate,
	.sync		= dir_sync,
	.futimens	= dir_futimens,
	.close_file	= dir_close_file,
	.lock_config	= dir_lock_config,
	.lock_mount	= NULL,		/* the mount's own, before it forks */
	.stack_bottom	= NULL,		/* sc_stack_spec_init's posix layer */
	.root		= dir_root,
	.sync_all	= dir_sync_all,
};
