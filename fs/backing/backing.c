/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * backing.c - the calls of sc_backing.h: find the engine a spec names (a
 * URL's scheme, else a directory) and forward to its table of operations
 * (backing_i.h).  Nothing here knows an engine's calls: a new engine is a
 * new table in this folder and one line in engines[].
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_crypto.h"	/* sc_random */
#include "backing_i.h"

/* Engines reached by URL; a spec that matches none is a directory. */
static const struct sc_backing_ops *const engines[] = {
	&sc_backing_gluster_ops,
	&sc_backing_cephfs_ops,
};

struct sc_backing {
	const struct sc_backing_ops	*ops;
	void				*priv;
	char				*spec;
};

static const struct sc_backing_ops *engine_of(const char *spec)
{
	size_t i;

	for (i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (spec && !strncmp(spec, engines[i]->scheme, strlen(engines[i]->scheme)))
			return engines[i];
	return &sc_backing_dir_ops;
}

bool sc_backing_is_dir(const char *spec)
{
	return engine_of(spec) == &sc_backing_dir_ops;
}

int sc_backing_open(const char *spec, const char *log, struct sc_backing **out, char *err,
		    size_t errlen)
{
	struct sc_backing *b;
	int r;

	b = calloc(1, sizeof(*b));
	if (b)
		b->spec = strdup(spec);
	if (!b || !b->spec) {
		free(b);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	b->ops = engine_of(spec);
	r = b->ops->open(spec, log, &b->priv, err, errlen);
	if (r) {
		free(b->spec);
		free(b);
		return r;
	}
	*out = b;
	return 0;
}

void sc_backing_close(struct sc_backing *b)
{
	if (!b)
		return;
	b->ops->close(b->priv);
	free(b->spec);
	free(b);
}

const char *sc_backing_spec(const struct sc_backing *b)
{
	return b->spec;
}

int sc_backing_tmp_name(const char *prefix, char *buf, size_t len)
{
	uint8_t rnd[8];
	int r;

	r = sc_random(rnd, sizeof(rnd));
	if (r)
		return r;
	if ((size_t)snprintf(buf, len, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, rnd[0],
			     rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]) >= len)
		return -ENAMETOOLONG;
	return 0;
}

ssize_t sc_backing_read_file(struct sc_backing *b, const char *name, char *buf, size_t cap,
			     struct stat *st)
{
	return b->ops->read_file(b->priv, name, buf, cap, st);
}

int sc_backing_write_file(struct sc_backing *b, const char *tmp, const char *name,
			  const void *data, size_t len, mode_t mode, bool replace, char *err,
			  size_t errlen)
{
	return b->ops->write_file(b->priv, tmp, name, data, len, mode, replace, err, errlen);
}

struct count {
	bool	(*skip)(const char *name);
	char	*first;
	size_t	firstlen;
	int	n;
};

static int count_one(void *ctx, const char *name)
{
	struct count *c = ctx;

	if (c->skip && c->skip(name))
		return 0;
	if (c->n++ == 0 && c->firstlen)
		snprintf(c->first, c->firstlen, "%s", name);
	return 0;
}

int sc_backing_entries(struct sc_backing *b, bool (*skip)(const char *name), char *first,
		       size_t firstlen)
{
	struct count c = { skip, first, firstlen, 0 };
	int r;

	if (b->ops->entries)
		return b->ops->entries(b->priv, skip, first, firstlen);
	/* an engine without its own: the root's listing, counted */
	if (firstlen)
		first[0] = 0;
	r = b->ops->list(b->priv, "", count_one, &c);
	return r ? r : c.n;
}

int sc_backing_lstat(struct sc_backing *b, const char *rel, struct stat *st)
{
	return b->ops->lstat(b->priv, rel, st);
}

ssize_t sc_backing_getxattr(struct sc_backing *b, const char *rel, const char *name,
			    void *buf, size_t len)
{
	return b->ops->getxattr(b->priv, rel, name, buf, len);
}

int sc_backing_setxattr(struct sc_backing *b, const char *rel, const char *name,
			const void *val, size_t len, int flags)
{
	return b->ops->setxattr(b->priv, rel, name, val, len, flags);
}

ssize_t sc_backing_readlink(struct sc_backing *b, const char *rel, char *buf, size_t len)
{
	return b->ops->readlink(b->priv, rel, buf, len);
}

int sc_backing_list(struct sc_backing *b, const char *rel,
		    int (*fn)(void *ctx, const char *name), void *ctx)
{
	return b->ops->list(b->priv, rel, fn, ctx);
}

int sc_backing_walk(struct sc_backing *b, sc_backing_walk_fn fn, void *ctx)
{
	return b->ops->walk(b->priv, fn, ctx);
}

int sc_backing_open_file(struct sc_backing *b, int at, const char *name, const char *rel,
			 int flags)
{
	if ((flags & O_ACCMODE) != O_RDONLY && !sc_backing_writable(b))
		return -EROFS;
	return b->ops->open_file(b->priv, at, name, rel, flags);
}

int sc_backing_fstat(struct sc_backing *b, int fd, struct stat *st)
{
	return b->ops->fstat(b->priv, fd, st);
}

ssize_t sc_backing_fgetxattr(struct sc_backing *b, int fd, const char *name, void *buf,
			     size_t len)
{
	return b->ops->fgetxattr(b->priv, fd, name, buf, len);
}

ssize_t sc_backing_pread(struct sc_backing *b, int fd, void *buf, size_t len, uint64_t off)
{
	return b->ops->pread(b->priv, fd, buf, len, off);
}

int sc_backing_pread_full(struct sc_backing *b, int fd, void *buf, size_t len, uint64_t off,
			  size_t *got)
{
	size_t done = 0;
	int r = 0;

	while (done < len) {
		ssize_t n = sc_backing_pread(b, fd, (uint8_t *)buf + done, len - done, off + done);

		if (n <= 0) {
			r = n < 0 ? (int)n : -ENODATA;
			break;
		}
		done += (size_t)n;
	}
	if (got)
		*got = done;
	return r;
}

int sc_backing_pwrite(struct sc_backing *b, int fd, const void *buf, size_t len, uint64_t off)
{
	return b->ops->pwrite ? b->ops->pwrite(b->priv, fd, buf, len, off) : -EROFS;
}

int sc_backing_truncate(struct sc_backing *b, int fd, uint64_t size)
{
	return b->ops->truncate ? b->ops->truncate(b->priv, fd, size) : -EROFS;
}

int sc_backing_sync(struct sc_backing *b, int fd)
{
	return b->ops->sync ? b->ops->sync(b->priv, fd) : -EROFS;
}

int sc_backing_futimens(struct sc_backing *b, int fd, const struct timespec ts[2])
{
	return b->ops->futimens ? b->ops->futimens(b->priv, fd, ts) : -EROFS;
}

int sc_backing_sync_all(struct sc_backing *b)
{
	return b->ops->sync_all ? b->ops->sync_all(b->priv) : -EOPNOTSUPP;
}

void sc_backing_close_file(struct sc_backing *b, int fd)
{
	b->ops->close_file(b->priv, fd);
}

bool sc_backing_writable(const struct sc_backing *b)
{
	return b->ops->pwrite != NULL;
}

int sc_backing_lock_config(struct sc_backing *b)
{
	return b->ops->lock_config(b->priv);
}

int sc_backing_lock_mount(struct sc_backing *b)
{
	return b->ops->lock_mount ? b->ops->lock_mount(b->priv) : -ENOENT;
}

int sc_backing_stack_bottom(const char *spec, struct sc_backing *b, struct sc_stack_spec *s)
{
	const struct sc_backing_ops *ops = b ? b->ops : engine_of(spec);

	return ops->stack_bottom ? ops->stack_bottom(b ? b->priv : NULL, s) : 0;
}

int sc_backing_root(struct sc_backing *b, struct stat *st)
{
	return b->ops->root(b->priv, st);
}
