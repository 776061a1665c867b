/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gluster_none.c - gluster_xl.h for a build without libgfapi
 * (-Dgfapi=disabled): a gluster:// backing is recognised and refused with
 * one line, so the user learns why and the exact commands that rebuild
 * this very build tree with it (SC_BUILD_DIR, set by meson.build), from
 * any directory: a plain `ninja` would not look for libgfapi again, while
 * after `meson configure` it reconfigures and does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gluster_xl.h"

bool sc_gluster_is_url(const char *s)
{
	return s && !strncmp(s, SC_GLUSTER_SCHEME, sizeof(SC_GLUSTER_SCHEME) - 1);
}

int sc_gluster_connect(const char *url, const char *logfile, struct sc_gluster **out,
		       char *err, size_t errlen)
{
	(void)logfile;
	(void)out;
	snprintf(err, errlen, "%s: this stackcrypt was built without GlusterFS support "
		 "(-Dgfapi=disabled): install libglusterfs-dev, then rebuild with "
		 "`meson configure %s -Dgfapi=enabled && ninja -C %s && "
		 "sudo meson install -C %s`", url, SC_BUILD_DIR, SC_BUILD_DIR, SC_BUILD_DIR);
	return -EPROTONOSUPPORT;
}

void sc_gluster_disconnect(struct sc_gluster *g)
{
	(void)g;
}

int sc_gluster_root(struct sc_gluster *g, struct stat *st)
{
	(void)g;
	(void)st;
	return -EPROTONOSUPPORT;
}

ssize_t sc_gluster_read_file(struct sc_gluster *g, const char *name, char *buf, size_t cap)
{
	(void)g;
	(void)name;
	(void)buf;
	(void)cap;
	return -EPROTONOSUPPORT;
}

int sc_gluster_write_file(struct sc_gluster *g, const char *tmp, const char *name,
			  const void *data, size_t len, mode_t mode, bool replace)
{
	(void)g;
	(void)tmp;
	(void)name;
	(void)data;
	(void)len;
	(void)mode;
	(void)replace;
	return -EPROTONOSUPPORT;
}

int sc_gluster_entries(struct sc_gluster *g, bool (*skip)(const char *name), char *first,
		       size_t firstlen)
{
	(void)g;
	(void)skip;
	(void)first;
	(void)firstlen;
	return -EPROTONOSUPPORT;
}

int sc_gluster_walk_files(struct sc_gluster *g, const char *xattr, size_t xcap,
			  size_t headcap, sc_gluster_file_fn fn, void *ctx)
{
	(void)g;
	(void)xattr;
	(void)xcap;
	(void)headcap;
	(void)fn;
	(void)ctx;
	return -EPROTONOSUPPORT;
}

int sc_gluster_walk(struct sc_gluster *g, sc_gluster_entry_fn fn, void *ctx)
{
	(void)g;
	(void)fn;
	(void)ctx;
	return -EPROTONOSUPPORT;
}

int sc_gluster_open_ro(struct sc_gluster *g, const char *rel)
{
	(void)g;
	(void)rel;
	return -EPROTONOSUPPORT;
}

int sc_gluster_fstat(struct sc_gluster *g, int fd, struct stat *st)
{
	(void)g;
	(void)fd;
	(void)st;
	return -EBADF;
}

ssize_t sc_gluster_fgetxattr(struct sc_gluster *g, int fd, const char *name, void *buf,
			     size_t len)
{
	(void)g;
	(void)fd;
	(void)name;
	(void)buf;
	(void)len;
	return -EBADF;
}

ssize_t sc_gluster_pread(struct sc_gluster *g, int fd, void *buf, size_t len, uint64_t off)
{
	(void)g;
	(void)fd;
	(void)buf;
	(void)len;
	(void)off;
	return -EBADF;
}

void sc_gluster_close(struct sc_gluster *g, int fd)
{
	(void)g;
	(void)fd;
}

int sc_gluster_lstat(struct sc_gluster *g, const char *rel, struct stat *st)
{
	(void)g;
	(void)rel;
	(void)st;
	return -EPROTONOSUPPORT;
}

ssize_t sc_gluster_lgetxattr(struct sc_gluster *g, const char *rel, const char *name,
			     void *buf, size_t len)
{
	(void)g;
	(void)rel;
	(void)name;
	(void)buf;
	(void)len;
	return -EPROTONOSUPPORT;
}

ssize_t sc_gluster_readlink(struct sc_gluster *g, const char *rel, char *buf, size_t len)
{
	(void)g;
	(void)rel;
	(void)buf;
	(void)len;
	return -EPROTONOSUPPORT;
}

int sc_gluster_list(struct sc_gluster *g, const char *rel,
		    int (*fn)(void *ctx, const char *name), void *ctx)
{
	(void)g;
	(void)rel;
	(void)fn;
	(void)ctx;
	return -EPROTONOSUPPORT;
}

int sc_gluster_root_setxattr(struct sc_gluster *g, const char *name, const void *val,
			     size_t len, int flags)
{
	(void)g;
	(void)name;
	(void)val;
	(void)len;
	(void)flags;
	return -EPROTONOSUPPORT;
}

ssize_t sc_gluster_root_getxattr(struct sc_gluster *g, const char *name, void *val,
				 size_t len)
{
	(void)g;
	(void)name;
	(void)val;
	(void)len;
	return -EPROTONOSUPPORT;
}

int sc_gluster_lock(struct sc_gluster *g, const char *name)
{
	(void)g;
	(void)name;
	return -EPROTONOSUPPORT;
}

int sc_gluster_lock_config(struct sc_gluster *g, const char *name)
{
	(void)g;
	(void)name;
	return -EPROTONOSUPPORT;
}

int sc_gluster_xl_new(struct sc_gluster *g, struct sc_xl **out)
{
	(void)g;
	(void)out;
	return -EPROTONOSUPPORT;
}
