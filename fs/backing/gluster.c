/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gluster.c - the GlusterFS engine of sc_backing.h: a directory of a
 * volume named gluster://HOST[:PORT]/VOLUME[/PATH], reached through
 * libgfapi's handle API over the gluster translator's connection
 * (fs/xlators/gluster: connections are cached per process and URL, and
 * the one-mount and config locks are the connection's, since the
 * translator keeps the first across lost connections).  Built only with
 * libgfapi; gluster_none.c stands in for it otherwise.
 *
 * What differs from a directory: files open read-only (no --repair over
 * gluster:// yet: no writes are offered, so sc_backing_writable is
 * false); files are ints of this engine's table, from GB_FD_BASE up, so
 * that a syscall made on one by mistake fails with EBADF; the walk is
 * by lookups from each directory's object, and rel paths are looked up
 * from the root in one call (a symlink is never followed).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glusterfs/api/glfs.h>
#include <glusterfs/api/glfs-handles.h>

#include "sc_crypto.h"	/* SC_CONFIG_NAME, SC_LOCK_NAME */
#include "sc_stack.h"	/* sc_stack_spec_gluster */
#include "gluster_xl.h"
#include "backing_i.h"

#define GB_FD_BASE	(1 << 30)

struct gb {
	const char		*url;
	struct sc_gluster	*g;
	glfs_t			*fs;
	struct glfs_object	*root;
	struct glfs_fd		**files;	/* open files: files[fd - GB_FD_BASE] */
	size_t			nfiles;
};

/* libgfapi's errno after a failed call, as -errno (the translator's rule). */
static int gl_err(struct gb *b)
{
	return sc_gluster_errno(b->g);
}

/* The default log of a daemon: /var/log/glusterfs/stackcrypt-VOLUME.log if writable. */
static void daemon_log(const char *url, char *buf, size_t len)
{
	const char *vol = url + strlen(SC_GLUSTER_SCHEME), *end;

	vol = strchr(vol, '/');
	vol = vol ? vol + 1 : "";
	end = strchrnul(vol, '/');
	if (access("/var/log/glusterfs", W_OK) == 0)
		snprintf(buf, len, "/var/log/glusterfs/stackcrypt-%.*s.log", (int)(end - vol), vol);
	else
		snprintf(buf, len, "/dev/null");
}

static int gb_open(const char *spec, const char *log, void **priv, char *err, size_t errlen)
{
	char dlog[PATH_MAX];
	struct gb *b;
	int r;

	b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (log && !*log) {
		daemon_log(spec, dlog, sizeof(dlog));
		log = dlog;
	}
	r = sc_gluster_connect(spec, log, &b->g, err, errlen);
	if (r) {
		free(b);
		return r == -EINVAL || r == -EPROTONOSUPPORT || r == -ENOMEM ? r : -ENOTDIR;
	}
	b->url = sc_gluster_url(b->g);
	b->fs = sc_gluster_fs(b->g);
	b->root = sc_gluster_root_object(b->g);
	*priv = b;
	return 0;
}

static void gb_close(void *priv)
{
	struct gb *b = priv;
	size_t i;

	for (i = 0; i < b->nfiles; i++)
		if (b->files[i])
			glfs_close(b->files[i]);
	free(b->files);
	sc_gluster_disconnect(b->g);	/* cached: locks stay with the process */
	free(b);
}

/* The object at rel below the root ("": the root itself, not to be closed). */
static struct glfs_object *lookup_rel(struct gb *b, const char *rel, struct stat *st)
{
	errno = 0;
	if (!*rel)
		return glfs_h_stat(b->fs, b->root, st) < 0 ? NULL : b->root;
	return glfs_h_lookupat(b->fs, b->root, rel, st, 0);	/* a symlink is not followed */
}

static void put_rel(struct gb *b, struct glfs_object *o)
{
	if (o != b->root)
		glfs_h_close(o);
}

/* All of fd (at most cap bytes, one more to see it grew) into buf: the length or -errno. */
static ssize_t read_all(struct gb *b, struct glfs_fd *fd, char *buf, size_t cap)
{
	size_t n = 0;
	char extra;

	while (n <= cap) {
		ssize_t m = n < cap ? glfs_pread(fd, buf + n, cap - n, n, 0, NULL)
				    : glfs_pread(fd, &extra, 1, n, 0, NULL);

		if (m < 0)
			return gl_err(b);
		if (m == 0)
			break;
		if (n == cap)
			return -EFBIG;
		n += (size_t)m;
	}
	return (ssize_t)n;
}

static ssize_t gb_read_file(void *priv, const char *name, char *buf, size_t cap,
			    struct stat *st)
{
	struct gb *b = priv;
	struct glfs_object *o;
	struct glfs_fd *fd;
	ssize_t r;

	o = lookup_rel(b, name, st);
	if (!o)
		return gl_err(b);
	sc_gluster_fix_stat(b->g, st);
	if (!S_ISREG(st->st_mode) || (size_t)st->st_size > cap) {
		put_rel(b, o);
		return S_ISLNK(st->st_mode) ? -ELOOP : S_ISREG(st->st_mode) ? -EFBIG : -EUCLEAN;
	}
	errno = 0;
	fd = glfs_h_open(b->fs, o, O_RDONLY);
	put_rel(b, o);
	if (!fd)
		return gl_err(b);
	r = read_all(b, fd, buf, cap);
	glfs_close(fd);
	return r;
}

/*
 * data as the new file tname of the root, fsynced, then put in place of
 * name (replace: renamed over it; else linked, which never replaces:
 * libgfapi has no RENAME_NOREPLACE).  0 or -errno with *step the call that
 * failed, nothing left behind.
 */
static int write_tmp(struct gb *b, const char *tname, const char *name, const void *data,
		     size_t len, mode_t mode, bool replace, const char **step)
{
	struct glfs_object *o;
	struct glfs_fd *fd = NULL;
	struct stat st;
	size_t done = 0;
	int ret = 0;

	*step = "create";
	o = glfs_h_creat_open(b->fs, b->root, tname, O_WRONLY | O_CREAT | O_EXCL, mode, &st, &fd);
	if (!o)
		return gl_err(b);
	*step = "write";
	while (done < len && !ret) {
		ssize_t m = glfs_pwrite(fd, (const char *)data + done, len - done, done, 0,
					NULL, NULL);

		if (m < 0)
			ret = gl_err(b);
		else if (m == 0)
			ret = -ENOSPC;
		else
			done += m;
	}
	if (!ret && glfs_fsync(fd, NULL, NULL) < 0) {
		ret = gl_err(b);
		*step = "fsync";
	}
	if (glfs_close(fd) < 0 && !ret)
		ret = gl_err(b);
	if (!ret) {
		*step = replace ? "rename" : "link";
		if (replace)
			ret = glfs_h_rename(b->fs, b->root, tname, b->root, name) < 0 ? gl_err(b) : 0;
		else
			ret = glfs_h_link(b->fs, o, b->root, name) < 0 ? gl_err(b) : 0;
		if (!ret && !replace)
			glfs_h_unlink(b->fs, b->root, tname);
	}
	if (ret)
		glfs_h_unlink(b->fs, b->root, tname);
	glfs_h_close(o);
	return ret;
}

static int gb_write_file(void *priv, const char *tmp, const char *name, const void *data,
			 size_t len, mode_t mode, bool replace, char *err, size_t errlen)
{
	struct gb *b = priv;
	char tname[NAME_MAX + 1];
	const char *step = "name";
	int r;

	r = sc_backing_tmp_name(tmp, tname, sizeof(tname));
	if (!r)
		r = write_tmp(b, tname, name, data, len, mode, replace, &step);
	if (r)
		snprintf(err, errlen, "cannot %s %s/%s: %s", step, b->url, tname, strerror(-r));
	return r;
}

/* Every entry of directory object o but . and .. to fn(ctx, name) until it returns non-0. */
static int each_name(struct gb *b, struct glfs_object *o, int (*fn)(void *ctx, const char *name),
		     void *ctx)
{
	struct dirent de, *res;
	struct glfs_fd *fd;
	int ret = 0;

	errno = 0;
	fd = glfs_h_opendir(b->fs, o);
	if (!fd)
		return gl_err(b);
	while (ret == 0) {
		if (glfs_readdir_r(fd, &de, &res) != 0) {
			ret = gl_err(b);
			break;
		}
		if (!res)
			break;
		if (strcmp(de.d_name, ".") && strcmp(de.d_name, ".."))
			ret = fn(ctx, de.d_name);
	}
	glfs_closedir(fd);
	return ret;
}

static int gb_lstat(void *priv, const char *rel, struct stat *st)
{
	struct gb *b = priv;
	struct glfs_object *o = lookup_rel(b, rel, st);

	if (!o)
		return gl_err(b);
	put_rel(b, o);
	sc_gluster_fix_stat(b->g, st);
	return 0;
}

static ssize_t gb_getxattr(void *priv, const char *rel, const char *name, void *buf,
			   size_t len)
{
	struct gb *b = priv;
	struct glfs_object *o;
	struct stat st;
	ssize_t n;

	o = lookup_rel(b, rel, &st);
	if (!o)
		return gl_err(b);
	errno = 0;
	n = glfs_h_getxattrs(b->fs, o, name, buf, len);
	if (n < 0)
		n = gl_err(b);
	put_rel(b, o);
	return n;
}

static int gb_setxattr(void *priv, const char *rel, const char *name, const void *val,
		       size_t len, int flags)
{
	struct gb *b = priv;
	struct glfs_object *o;
	struct stat st;
	int r;

	o = lookup_rel(b, rel, &st);
	if (!o)
		return gl_err(b);
	errno = 0;
	r = glfs_h_setxattrs(b->fs, o, name, val, len, flags) < 0 ? gl_err(b) : 0;
	put_rel(b, o);
	return r;
}

static ssize_t gb_readlink(void *priv, const char *rel, char *buf, size_t len)
{
	struct gb *b = priv;
	struct glfs_object *o;
	struct stat st;
	ssize_t n;

	o = lookup_rel(b, rel, &st);
	if (!o)
		return gl_err(b);
	errno = 0;
	n = glfs_h_readlink(b->fs, o, buf, len);
	if (n < 0)
		n = gl_err(b);
	put_rel(b, o);
	return n;
}

static int gb_list(void *priv, const char *rel, int (*fn)(void *ctx, const char *name),
		   void *ctx)
{
	struct gb *b = priv;
	struct glfs_object *o;
	struct stat st;
	int r;

	o = lookup_rel(b, rel, &st);
	if (!o)
		return gl_err(b);
	r = each_name(b, o, fn, ctx);
	put_rel(b, o);
	return r;
}

/* ---- the walk -------------------------------------------------------------------- */

struct gl_walk {
	struct gb		*b;
	sc_backing_walk_fn	fn;
	void			*ctx;
	char			rel[4 * PATH_MAX];
};

static int walk_dir(struct gl_walk *w, struct glfs_object *dir, size_t rellen,
		    const char *name, const struct stat *dst);

/* Entry name of directory dir (w->rel[0..rellen) its path): to fn, then below. */
static int walk_entry(struct gl_walk *w, struct glfs_object *dir, size_t rellen,
		      const char *name)
{
	struct glfs_object *o;
	struct stat st;
	int n, ret;

	n = snprintf(w->rel + rellen, sizeof(w->rel) - rellen, "%s%s", rellen ? "/" : "", name);
	if (n < 0 || (size_t)n >= sizeof(w->rel) - rellen)
		return -ENAMETOOLONG;
	errno = 0;
	o = glfs_h_lookupat(w->b->fs, dir, name, &st, 0);
	if (!o) {
		ret = gl_err(w->b);
		return ret == -ENOENT ? 0 :	/* removed since the readdir */
		       w->fn(w->ctx, -1, name, w->rel, NULL, ret);
	}
	sc_gluster_fix_stat(w->b->g, &st);
	ret = w->fn(w->ctx, -1, name, w->rel, &st, 0);
	if (ret == 0 && S_ISDIR(st.st_mode))
		ret = walk_dir(w, o, rellen + (size_t)n, name, &st);
	glfs_h_close(o);
	return ret;
}

/*
 * The directory dir, whose path is w->rel (rellen bytes), depth first:
 * every entry to w->fn, which also hears of an entry that cannot be looked
 * up, a directory that cannot be opened (name and st: its own) or read
 * (name NULL), and goes on.
 */
static int walk_dir(struct gl_walk *w, struct glfs_object *dir, size_t rellen,
		    const char *name, const struct stat *dst)
{
	struct dirent de, *res;
	struct glfs_fd *fd;
	int ret = 0;

	errno = 0;
	fd = glfs_h_opendir(w->b->fs, dir);
	if (!fd) {
		ret = gl_err(w->b);
		return name ? w->fn(w->ctx, -1, name, w->rel, dst, ret) : ret;
	}
	while (ret == 0) {
		if (glfs_readdir_r(fd, &de, &res) != 0) {
			w->rel[rellen] = 0;
			ret = w->fn(w->ctx, -1, NULL, w->rel, NULL, gl_err(w->b));
			break;
		}
		if (!res)
			break;
		if (!strcmp(de.d_name, ".") || !strcmp(de.d_name, ".."))
			continue;
		/* the config and the mount lock live in the root only */
		if (rellen == 0 && (!strcmp(de.d_name, SC_CONFIG_NAME) ||
				    !strcmp(de.d_name, SC_LOCK_NAME)))
			continue;
		ret = walk_entry(w, dir, rellen, de.d_name);
	}
	w->rel[rellen] = 0;
	glfs_closedir(fd);
	return ret;
}

static int gb_walk(void *priv, sc_backing_walk_fn fn, void *ctx)
{
	struct gb *b = priv;
	struct gl_walk *w;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->b = b;
	w->fn = fn;
	w->ctx = ctx;
	ret = walk_dir(w, b->root, 0, NULL, NULL);
	free(w);
	return ret > 0 ? 0 : ret;
}

/* ---- files, read-only -------------------------------------------------------------- */

static struct glfs_fd *fd_of(struct gb *b, int fd)
{
	size_t i = (size_t)fd - GB_FD_BASE;

	return fd >= GB_FD_BASE && i < b->nfiles ? b->files[i] : NULL;
}

static int gb_open_file(void *priv, int at, const char *name, const char *rel, int flags)
{
	struct gb *b = priv;
	struct glfs_object *o;
	struct glfs_fd *fd, **grown;
	size_t i;
	int ret = 0;

	(void)at;
	(void)name;
	(void)flags;	/* O_RDONLY: sc_backing_open_file refused the rest */
	errno = 0;
	o = glfs_h_lookupat(b->fs, b->root, rel, NULL, 0);	/* a symlink is not followed */
	if (!o)
		return gl_err(b);
	fd = glfs_h_open(b->fs, o, O_RDONLY);
	if (!fd)
		ret = gl_err(b);
	glfs_h_close(o);
	if (!fd)
		return ret;
	for (i = 0; i < b->nfiles && b->files[i]; i++)
		;
	if (i == b->nfiles) {
		grown = realloc(b->files, (b->nfiles + 8) * sizeof(*grown));
		if (!grown) {
			glfs_close(fd);
			return -ENOMEM;
		}
		memset(grown + b->nfiles, 0, 8 * sizeof(*grown));
		b->files = grown;
		b->nfiles += 8;
	}
	b->files[i] = fd;
	return GB_FD_BASE + (int)i;
}

static int gb_fstat(void *priv, int fd, struct stat *st)
{
	struct gb *b = priv;
	struct glfs_fd *f = fd_of(b, fd);

	if (!f)
		return -EBADF;
	errno = 0;
	if (glfs_fstat(f, st) < 0)
		return gl_err(b);
	sc_gluster_fix_stat(b->g, st);
	return 0;
}

static ssize_t gb_fgetxattr(void *priv, int fd, const char *name, void *buf, size_t len)
{
	struct gb *b = priv;
	struct glfs_fd *f = fd_of(b, fd);
	ssize_t n;

	if (!f)
		return -EBADF;
	errno = 0;
	n = glfs_fgetxattr(f, name, buf, len);
	return n < 0 ? gl_err(b) : n;
}

static ssize_t gb_pread(void *priv, int fd, void *buf, size_t len, uint64_t off)
{
	struct gb *b = priv;
	struct glfs_fd *f = fd_of(b, fd);
	ssize_t n;

	if (!f)
		return -EBADF;
	errno = 0;
	n = glfs_pread(f, buf, len, (off_t)off, 0, NULL);
	return n < 0 ? gl_err(b) : n;
}

static void gb_close_file(void *priv, int fd)
{
	struct gb *b = priv;
	struct glfs_fd *f = fd_of(b, fd);

	if (!f)
		return;
	glfs_close(f);
	b->files[fd - GB_FD_BASE] = NULL;
}

/* ---- locks and the mount ------------------------------------------------------------ */

static int gb_lock_config(void *priv)
{
	return sc_gluster_lock_config(((struct gb *)priv)->g, SC_LOCK_NAME);
}

static int gb_lock_mount(void *priv)
{
	return sc_gluster_lock(((struct gb *)priv)->g, SC_LOCK_NAME);
}

static int gb_stack_bottom(void *priv, struct sc_stack_spec *s)
{
	return sc_stack_spec_gluster(s, priv ? ((struct gb *)priv)->g : NULL);
}

static int gb_root(void *priv, struct stat *st)
{
	return sc_gluster_root(((struct gb *)priv)->g, st);
}

const struct sc_backing_ops sc_backing_gluster_ops = {
	.name		= "gluster",
	.scheme		= SC_GLUSTER_SCHEME,
	.open		= gb_open,
	.close		= gb_close,
	.read_file	= gb_read_file,
	.write_file	= gb_write_file,
	.lstat		= gb_lstat,
	.getxattr	= gb_getxattr,
	.setxattr	= gb_setxattr,
	.readlink	= gb_readlink,
	.list		= gb_list,
	.walk		= gb_walk,
	.open_file	= gb_open_file,
	.fstat		= gb_fstat,
	.fgetxattr	= gb_fgetxattr,
	.pread		= gb_pread,
	.close_file	= gb_close_file,
	.lock_config	= gb_lock_config,
	.lock_mount	= gb_lock_mount,
	.stack_bottom	= gb_stack_bottom,
	.root		= gb_root,
};
