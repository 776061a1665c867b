/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * probe.c - what the backing tree itself says about a volume, where the
 * config cannot be trusted to say it: whether its names are encrypted (a
 * directory nonce record anywhere in the tree), for the recovery of a
 * config that carries no MAC (formats 1 and 2) or is gone.
 *
 * The root alone is not enough: whoever can write BACKING can delete the
 * root's record, and recovery would then write a config without names
 * (issue #28, finding 1).  Every directory of the tree is looked at, in
 * both forms of the record (the xattr, or the file of a volume that keeps
 * nothing in xattrs), over a directory or over gluster://.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sc_crypto.h"
#include "volume_i.h"
#include "gluster_xl.h"

struct nonce_find {
	struct sc_gluster	*g;	/* over gluster:// */
	char			*where;	/* the directory found, relative to the root */
	size_t			wlen;
};

/* rel is a nonce record (name the file form), or the directory holding one. */
static int nonce_found(struct nonce_find *f, const char *rel, bool file)
{
	const char *slash = strrchr(rel, '/');

	if (!file)
		snprintf(f->where, f->wlen, "%s", rel);
	else if (slash)
		snprintf(f->where, f->wlen, "%.*s", (int)(slash - rel), rel);
	else
		snprintf(f->where, f->wlen, ".");
	return 1;
}

static int nonce_visit(void *ctx, int dirfd, const char *name, const char *rel,
		       const struct stat *st, int err)
{
	struct nonce_find *f = ctx;
	bool has;
	int fd;

	if (err || !st)
		return 0;
	if (S_ISREG(st->st_mode) && !strcmp(name, SC_DIRNONCE_FILE))
		return nonce_found(f, rel, true);
	if (!S_ISDIR(st->st_mode))
		return 0;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	has = fgetxattr(fd, SC_DIRNONCE_XATTR, NULL, 0) >= 0;
	close(fd);
	return has ? nonce_found(f, rel, false) : 0;
}

static int nonce_visit_gluster(void *ctx, const char *rel, const char *name,
			       const struct stat *st, int err)
{
	struct nonce_find *f = ctx;

	if (err || !st)
		return 0;
	if (S_ISREG(st->st_mode) && !strcmp(name, SC_DIRNONCE_FILE))
		return nonce_found(f, rel, true);
	if (S_ISDIR(st->st_mode) && sc_gluster_lgetxattr(f->g, rel, SC_DIRNONCE_XATTR, NULL, 0) >= 0)
		return nonce_found(f, rel, false);
	return 0;
}

/* The root's record, in either form, over connection g. */
static bool gluster_root_has(struct sc_gluster *g)
{
	char rec[SC_HDR_MAX];

	return sc_gluster_root_getxattr(g, SC_DIRNONCE_XATTR, NULL, 0) >= 0 ||
	       sc_gluster_read_file(g, SC_DIRNONCE_FILE, rec, sizeof(rec)) >= 0;
}

static int nonce_walk_gluster(struct sc_gluster *g, void *ctx)
{
	struct nonce_find *f = ctx;

	f->g = g;
	if (gluster_root_has(g))
		return nonce_found(f, ".", false);
	return sc_gluster_walk(g, nonce_visit_gluster, f);
}

int sc_vol_tree_has_dirnonce(const char *backing, char *where, size_t wlen, char *err,
			     size_t errlen)
{
	struct nonce_find f = { NULL, where, wlen };
	int r;

	where[0] = 0;
	if (sc_gluster_is_url(backing)) {
		r = sc_vol_gluster_do(backing, nonce_walk_gluster, &f, err, errlen);
	} else if (getxattr(backing, SC_DIRNONCE_XATTR, NULL, 0) >= 0) {
		r = nonce_found(&f, ".", false);
	} else {
		r = sc_vol_walk(backing, nonce_visit, &f);
		if (r < 0)
			snprintf(err, errlen, "cannot scan %s: %s", backing, strerror(-r));
	}
	return r < 0 ? r : where[0] != 0;
}
