/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cephfs.c - the CephFS engine of sc_backing.h: a directory of a file
 * system named cephfs://[ID@][HOST[:PORT]]/FS[/PATH], reached through
 * libcephfs over the cephfs translator's connection (fs/xlators/cephfs:
 * connections are cached per process and URL, and the one-mount and
 * config locks are the connection's MDS session's).  Built only with
 * libcephfs; cephfs_none.c stands in for it otherwise.
 *
 * The tools are single-threaded and work by path, so this engine uses
 * libcephfs's path API (ceph_statx, ceph_open, ...) on the connection's
 * client, whose root is the URL's directory: a rel path is "/" + rel
 * there.  Files are libcephfs's own fds moved up by CB_FD_BASE, so a
 * syscall made on one by mistake fails with EBADF.  Files open
 * read-only, as over gluster://: fsck's repairs are *at() calls on a
 * walk's directory fds, which this engine has not, so no writes are
 * offered (sc_backing_writable is false) and --repair is refused whole.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cephfs/libcephfs.h>

#include "sc_crypto.h"	/* SC_CONFIG_NAME, SC_LOCK_NAME */
#include "sc_stack.h"	/* sc_stack_spec_cephfs */
#include "cephfs_xl.h"
#include "backing_i.h"

#define CB_FD_BASE	(1 << 30)
#define CB_WANT		CEPH_STATX_BASIC_STATS

struct cb {
	struct sc_cephfs	*c;
	struct ceph_mount_info	*cm;
	const char		*url;
};

/* "/" + rel into buf: 0 or -ENAMETOOLONG. */
static int abs_path(const char *rel, char *buf, size_t len)
{
	return (size_t)snprintf(buf, len, "/%s", rel) >= len ? -ENAMETOOLONG : 0;
}

static int cb_open(const char *spec, const char *log, void **priv, char *err, size_t errlen)
{
	struct cb *b;
	int r;

	b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = sc_cephfs_connect(spec, log, &b->c, err, errlen);
	if (r) {
		free(b);
		return r == -EINVAL || r == -EPROTONOSUPPORT || r == -ENOMEM ? r : -ENOTDIR;
	}
	b->cm = sc_cephfs_mount(b->c);
	b->url = sc_cephfs_url(b->c);
	*priv = b;
	return 0;
}

static void cb_close(void *priv)
{
	struct cb *b = priv;

	sc_cephfs_disconnect(b->c);	/* cached: locks stay with the process */
	free(b);
}

static int cb_err(struct cb *b, int r)
{
	return sc_cephfs_err(b->c, r);
}

static int cb_lstat(void *priv, const char *rel, struct stat *st)
{
	struct cb *b = priv;
	struct ceph_statx stx;
	char path[PATH_MAX];
	int r;

	r = abs_path(rel, path, sizeof(path));
	if (r)
		return r;
	r = ceph_statx(b->cm, path, &stx, CB_WANT, AT_SYMLINK_NOFOLLOW);
	if (r < 0)
		return cb_err(b, r);
	sc_cephfs_stat(b->c, &stx, st);
	return 0;
}

static ssize_t cb_read_file(void *priv, const char *name, char *buf, size_t cap,
			    struct stat *st)
{
	struct cb *b = priv;
	char path[PATH_MAX], extra;
	size_t n = 0;
	int fd, r;

	r = cb_lstat(b, name, st);
	if (r)
		return r;
	if (!S_ISREG(st->st_mode))
		return S_ISLNK(st->st_mode) ? -ELOOP : -EUCLEAN;
	if ((size_t)st->st_size > cap)
		return -EFBIG;
	abs_path(name, path, sizeof(path));
	fd = ceph_open(b->cm, path, O_RDONLY | O_NOFOLLOW, 0);
	if (fd < 0)
		return cb_err(b, fd);
	/* all of it, and one byte more to see that it grew since the stat */
	for (;;) {
		r = n < cap ? ceph_read(b->cm, fd, buf + n, (int64_t)(cap - n), (int64_t)n)
			    : ceph_read(b->cm, fd, &extra, 1, (int64_t)n);
		if (r <= 0)
			break;
		if (n == cap) {
			r = -EFBIG;
			break;
		}
		n += (size_t)r;
	}
	ceph_close(b->cm, fd);
	return r < 0 ? cb_err(b, r) : (ssize_t)n;
}

/*
 * data as the new file tname of the root, fsynced, then put in place of
 * name (replace: renamed over it; else linked, which never replaces);
 * the MDS's journal then made safe.  0 or -errno with *step the call that
 * failed, nothing left behind.
 */
static int write_tmp(struct cb *b, const char *tpath, const char *npath, const void *data,
		     size_t len, mode_t mode, bool replace, const char **step)
{
	size_t done = 0;
	int fd, r = 0;

	*step = "create";
	fd = ceph_open(b->cm, tpath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
	if (fd < 0)
		return cb_err(b, fd);
	*step = "write";
	while (done < len && !r) {
		int m = ceph_write(b->cm, fd, (const char *)data + done, (int64_t)(len - done),
				   (int64_t)done);

		r = m < 0 ? cb_err(b, m) : m == 0 ? -ENOSPC : 0;
		done += m > 0 ? (size_t)m : 0;
	}
	if (!r) {
		*step = "fsync";
		r = cb_err(b, ceph_fsync(b->cm, fd, 0));
	}
	if (ceph_close(b->cm, fd) < 0 && !r)
		r = -EIO;
	if (!r) {
		*step = replace ? "rename" : "link";
		r = cb_err(b, replace ? ceph_rename(b->cm, tpath, npath) :
				       ceph_link(b->cm, tpath, npath));
	}
	if (r || !replace)
		ceph_unlink(b->cm, tpath);
	if (!r) {
		*step = "sync";
		r = cb_err(b, ceph_sync_fs(b->cm));
	}
	return r;
}

static int cb_write_file(void *priv, const char *tmp, const char *name, const void *data,
			 size_t len, mode_t mode, bool replace, char *err, size_t errlen)
{
	struct cb *b = priv;
	char tname[NAME_MAX + 1], tpath[PATH_MAX], npath[PATH_MAX];
	const char *step = "name";
	int r;

	r = sc_backing_tmp_name(tmp, tname, sizeof(tname));
	if (!r)
		r = abs_path(tname, tpath, sizeof(tpath));
	if (!r)
		r = abs_path(name, npath, sizeof(npath));
	if (!r)
		r = write_tmp(b, tpath, npath, data, len, mode, replace, &step);
	if (r)
		snprintf(err, errlen, "cannot %s %s/%s: %s", step, b->url, tname, strerror(-r));
	return r;
}

/* Every entry of directory path but . and .. to fn(ctx, name) until it returns non-0. */
static int each_name(struct cb *b, const char *path, int (*fn)(void *ctx, const char *name),
		     void *ctx)
{
	struct ceph_dir_result *d;
	struct dirent de;
	int r, ret = 0;

	r = ceph_opendir(b->cm, path, &d);
	if (r < 0)
		return cb_err(b, r);
	while (ret == 0) {
		r = ceph_readdir_r(b->cm, d, &de);
		if (r < 0)
			ret = cb_err(b, r);
		if (r <= 0)
			break;
		if (strcmp(de.d_name, ".") && strcmp(de.d_name, ".."))
			ret = fn(ctx, de.d_name);
	}
	ceph_closedir(b->cm, d);
	return ret;
}

static ssize_t cb_getxattr(void *priv, const char *rel, const char *name, void *buf,
			   size_t len)
{
	struct cb *b = priv;
	char path[PATH_MAX];
	int r;

	r = abs_path(rel, path, sizeof(path));
	if (r)
		return r;
	r = ceph_lgetxattr(b->cm, path, name, buf, len);
	return r < 0 ? cb_err(b, r) : r;
}

static int cb_setxattr(void *priv, const char *rel, const char *name, const void *val,
		       size_t len, int flags)
{
	struct cb *b = priv;
	char path[PATH_MAX];
	int r;

	r = abs_path(rel, path, sizeof(path));
	return r ? r : cb_err(b, ceph_lsetxattr(b->cm, path, name, val, len, flags));
}

static ssize_t cb_readlink(void *priv, const char *rel, char *buf, size_t len)
{
	struct cb *b = priv;
	char path[PATH_MAX];
	int r;

	r = abs_path(rel, path, sizeof(path));
	if (r)
		return r;
	r = ceph_readlink(b->cm, path, buf, (int64_t)len);
	return r < 0 ? cb_err(b, r) : r;
}

static int cb_list(void *priv, const char *rel, int (*fn)(void *ctx, const char *name),
		   void *ctx)
{
	char path[PATH_MAX];
	int r;

	r = abs_path(rel, path, sizeof(path));
	return r ? r : each_name(priv, path, fn, ctx);
}

/* ---- the walk ------------------------------------------------------------------ */

struct cb_walk {
	struct cb		*b;
	sc_backing_walk_fn	fn;
	void			*ctx;
	char			rel[4 * PATH_MAX];
};

static int walk_dir(struct cb_walk *w, size_t rellen, const char *name,
		    const struct stat *dst);

/* Entry name of the directory w->rel[0..rellen): to fn, then below. */
static int walk_entry(struct cb_walk *w, size_t rellen, const char *name)
{
	struct stat st;
	int n, ret;

	n = snprintf(w->rel + rellen, sizeof(w->rel) - rellen, "%s%s", rellen ? "/" : "", name);
	if (n < 0 || (size_t)n >= sizeof(w->rel) - rellen)
		return -ENAMETOOLONG;
	ret = cb_lstat(w->b, w->rel, &st);
	if (ret)
		return ret == -ENOENT ? 0 :	/* removed since the readdir */
		       w->fn(w->ctx, -1, name, w->rel, NULL, ret);
	ret = w->fn(w->ctx, -1, name, w->rel, &st, 0);
	if (ret == 0 && S_ISDIR(st.st_mode))
		ret = walk_dir(w, rellen + (size_t)n, name, &st);
	return ret;
}

/*
 * The directory w->rel (rellen bytes), depth first: every entry to
 * w->fn, which also hears of a directory that cannot be opened (name and
 * st: its own) or read (name NULL), and goes on.
 */
static int walk_dir(struct cb_walk *w, size_t rellen, const char *name,
		    const struct stat *dst)
{
	struct ceph_dir_result *d;
	char path[PATH_MAX];
	struct dirent de;
	int r, ret = 0;

	r = abs_path(w->rel, path, sizeof(path));
	if (!r)
		r = ceph_opendir(w->b->cm, path, &d);
	if (r < 0) {
		r = cb_err(w->b, r);
		return name ? w->fn(w->ctx, -1, name, w->rel, dst, r) : r;
	}
	while (ret == 0) {
		r = ceph_readdir_r(w->b->cm, d, &de);
		if (r < 0) {
			w->rel[rellen] = 0;
			ret = w->fn(w->ctx, -1, NULL, w->rel, NULL, cb_err(w->b, r));
			break;
		}
		if (r == 0)
			break;
		if (!strcmp(de.d_name, ".") || !strcmp(de.d_name, ".."))
			continue;
		/* the config and the mount lock live in the root only */
		if (rellen == 0 && (!strcmp(de.d_name, SC_CONFIG_NAME) ||
				    !strcmp(de.d_name, SC_LOCK_NAME)))
			continue;
		ret = walk_entry(w, rellen, de.d_name);
		w->rel[rellen] = 0;
	}
	w->rel[rellen] = 0;
	ceph_closedir(w->b->cm, d);
	return ret;
}

static int cb_walk(void *priv, sc_backing_walk_fn fn, void *ctx)
{
	struct cb_walk *w;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->b = priv;
	w->fn = fn;
	w->ctx = ctx;
	ret = walk_dir(w, 0, NULL, NULL);
	free(w);
	return ret > 0 ? 0 : ret;
}

/* ---- files ------------------------------------------------------------------------ */

/* libcephfs's fd of ours, or -1. */
static int cfd(int fd)
{
	return fd >= CB_FD_BASE ? fd - CB_FD_BASE : -1;
}

static int cb_open_file(void *priv, int at, const char *name, const char *rel, int flags)
{
	struct cb *b = priv;
	char path[PATH_MAX];
	int fd, r;

	(void)at;
	(void)name;
	r = abs_path(rel, path, sizeof(path));
	if (r)
		return r;
	(void)flags;	/* O_RDONLY: sc_backing_open_file refused the rest */
	fd = ceph_open(b->cm, path, O_RDONLY | O_NOFOLLOW, 0);
	if (fd < 0)
		return cb_err(b, fd);
	if (fd >= CB_FD_BASE) {
		ceph_close(b->cm, fd);
		return -EMFILE;
	}
	return CB_FD_BASE + fd;
}

static int cb_fstat(void *priv, int fd, struct stat *st)
{
	struct cb *b = priv;
	struct ceph_statx stx;
	int r;

	r = ceph_fstatx(b->cm, cfd(fd), &stx, CB_WANT, 0);
	if (r < 0)
		return cb_err(b, r);
	sc_cephfs_stat(b->c, &stx, st);
	return 0;
}

static ssize_t cb_fgetxattr(void *priv, int fd, const char *name, void *buf, size_t len)
{
	struct cb *b = priv;
	int r = ceph_fgetxattr(b->cm, cfd(fd), name, buf, len);

	return r < 0 ? cb_err(b, r) : r;
}

static ssize_t cb_pread(void *priv, int fd, void *buf, size_t len, uint64_t off)
{
	struct cb *b = priv;
	int r = ceph_read(b->cm, cfd(fd), buf, (int64_t)len, (int64_t)off);

	return r < 0 ? cb_err(b, r) : r;
}

static int cb_sync_all(void *priv)
{
	struct cb *b = priv;

	return cb_err(b, ceph_sync_fs(b->cm));
}

static void cb_close_file(void *priv, int fd)
{
	struct cb *b = priv;

	if (cfd(fd) >= 0)
		ceph_close(b->cm, cfd(fd));
}

/* ---- locks and the mount ---------------------------------------------------------- */

static int cb_lock_config(void *priv)
{
	return sc_cephfs_lock_config(((struct cb *)priv)->c, SC_LOCK_NAME);
}

static int cb_lock_mount(void *priv)
{
	return sc_cephfs_lock(((struct cb *)priv)->c, SC_LOCK_NAME);
}

static int cb_stack_bottom(void *priv, struct sc_stack_spec *s)
{
	return sc_stack_spec_cephfs(s, priv ? ((struct cb *)priv)->c : NULL);
}

static int cb_root(void *priv, struct stat *st)
{
	return sc_cephfs_root(((struct cb *)priv)->c, st);
}

const struct sc_backing_ops sc_backing_cephfs_ops = {
	.name		= "cephfs",
	.scheme		= SC_CEPHFS_SCHEME,
	.open		= cb_open,
	.close		= cb_close,
	.read_file	= cb_read_file,
	.write_file	= cb_write_file,
	.lstat		= cb_lstat,
	.getxattr	= cb_getxattr,
	.setxattr	= cb_setxattr,
	.readlink	= cb_readlink,
	.list		= cb_list,
	.walk		= cb_walk,
	.open_file	= cb_open_file,
	.fstat		= cb_fstat,
	.fgetxattr	= cb_fgetxattr,
	.pread		= cb_pread,
	.close_file	= cb_close_file,
	.lock_config	= cb_lock_config,
	.lock_mount	= cb_lock_mount,
	.stack_bottom	= cb_stack_bottom,
	.root		= cb_root,
	.sync_all	= cb_sync_all,
};
