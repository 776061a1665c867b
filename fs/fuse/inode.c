/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inode.c - the front end's inode table: backing (st_dev, st_ino) -> entry.
 *
 * Chained hash table (XXH3 of the key), doubled when the load passes 1.  One
 * mutex guards the chains and every change of a lookup count that can reach
 * or leave zero: a lookup that finds an entry and a forget that frees it
 * must not interleave, or the lookup would hand the kernel a node id that is
 * about to be freed.  Forgets and lookups are metadata operations; the data
 * path (read/write) never touches the table, so one lock is enough here.
 *
 * The count is atomic anyway so that sc_inode_ref() (link, which the kernel
 * only sends for a live inode) needs no lock.
 *
 * The names (inode.h) hang off the same lock: a second chained hash, by
 * XXH3 of (parent key, name), with as many buckets as the first and
 * rebuilt when it grows.  A new entry's first name is copied into the
 * entry's own allocation (no second malloc on a lookup); a rename
 * allocates the new one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "inode.h"

#define SC_ITABLE_MIN_BUCKETS	1024

struct sc_itable {
	pthread_mutex_t		lock;
	struct sc_inode		**buckets;
	struct sc_inode		**by_name;	/* as many buckets: by (parent, name) */
	size_t			nbuckets;	/* power of two */
	size_t			count;		/* hashed entries */
	struct sc_inode		*stale;		/* unhashed by a reused key, still held */
	struct sc_inode		root;
	sc_inode_release_fn	release;
	sc_inode_adopt_fn	adopt;
	sc_inode_same_fn	same;
	sc_inode_drop_fn	drop;
	void			*ctx;
};

static void drop_fd(struct sc_itable *it, int fd)
{
	if (it->drop)
		it->drop(it->ctx, fd);
	else
		close(fd);
}

/*
 * Set while this thread runs the adopt callback under the lock: a layer
 * that logs there (names_adopt) names the object through sc_inode_path,
 * which must then not take the lock again.
 */
static _Thread_local bool holding_lock;

struct ikey {
	uint64_t dev;
	uint64_t ino;
};

static size_t bucket_of(const struct sc_itable *it, dev_t dev, ino_t ino)
{
	struct ikey k = { .dev = dev, .ino = ino };

	return (size_t)XXH3_64bits(&k, sizeof(k)) & (it->nbuckets - 1);
}

/* Bucket of (parent key, name) in the name hash. */
static size_t name_bucket(const struct sc_itable *it, dev_t pdev, ino_t pino, const char *name)
{
	struct ikey k = { .dev = pdev, .ino = pino };

	/* the parent's hash seeds the name's: one pass over each */
	return (size_t)XXH3_64bits_withSeed(name, strlen(name), XXH3_64bits(&k, sizeof(k))) &
	       (it->nbuckets - 1);
}

/* Called with the lock held: e goes into the name hash under its name. */
static void name_hash(struct sc_itable *it, struct sc_inode *e)
{
	size_t b = name_bucket(it, e->pdev, e->pino, e->name);

	e->nnext = it->by_name[b];
	it->by_name[b] = e;
	e->named = true;
}

/* Called with the lock held: e leaves the name hash (it keeps its name). */
static void name_unhash(struct sc_itable *it, struct sc_inode *e)
{
	struct sc_inode **pp;

	if (!e->named)
		return;
	pp = &it->by_name[name_bucket(it, e->pdev, e->pino, e->name)];
	for (; *pp; pp = &(*pp)->nnext) {
		if (*pp == e) {
			*pp = e->nnext;
			break;
		}
	}
	e->nnext = NULL;
	e->named = false;
}

/* Called with the lock held: the entry known as name in parent, or NULL. */
static struct sc_inode *name_find(struct sc_itable *it, const struct sc_inode *parent,
				  const char *name)
{
	struct sc_inode *e = it->by_name[name_bucket(it, parent->dev, parent->ino, name)];

	for (; e; e = e->nnext)
		if (e->pino == parent->ino && e->pdev == parent->dev && !strcmp(e->name, name))
			return e;
	return NULL;
}

/* Called with the lock held: the live entry of key (dev, ino), the root included. */
static const struct sc_inode *key_find(struct sc_itable *it, dev_t dev, ino_t ino)
{
	const struct sc_inode *e;

	if (it->root.ino == ino && it->root.dev == dev)
		return &it->root;
	for (e = it->buckets[bucket_of(it, dev, ino)]; e; e = e->next)
		if (e->ino == ino && e->dev == dev)
			return e;
	return NULL;
}

static void entry_init(struct sc_inode *e, int fd, const struct stat *st)
{
	memset(e, 0, sizeof(*e));
	e->obj.fd = fd;
	e->obj.type = st->st_mode & S_IFMT;
	e->obj.in_table = true;
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	atomic_init(&e->nlookup, 0);
}

/* A name a rename allocated: not the one in the entry's own allocation. */
static void name_free(struct sc_inode *e)
{
	if (e->name && e->name != (char *)(e + 1))
		free(e->name);
	e->name = NULL;
}

static void entry_free(struct sc_itable *it, struct sc_inode *e)
{
	if (it->release)
		it->release(it->ctx, &e->obj);
	if (e->obj.fd >= 0)
		drop_fd(it, e->obj.fd);
	name_free(e);
	if (e != &it->root)
		free(e);
}

int sc_inode_table_new(int root_fd, const struct stat *root_st,
		       sc_inode_release_fn release, void *ctx,
		       struct sc_itable **out)
{
	struct sc_itable *it;

	if (root_fd < 0 || !S_ISDIR(root_st->st_mode))
		return -EINVAL;
	it = calloc(1, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->nbuckets = SC_ITABLE_MIN_BUCKETS;
	it->buckets = calloc(it->nbuckets, sizeof(*it->buckets));
	if (!it->buckets)
		goto err_free_it;
	it->by_name = calloc(it->nbuckets, sizeof(*it->by_name));
	if (!it->by_name)
		goto err_free_buckets;
	pthread_mutex_init(&it->lock, NULL);
	entry_init(&it->root, root_fd, root_st);
	it->root.obj.is_root = true;
	atomic_store(&it->root.nlookup, 1);	/* the kernel's implicit one */
	it->release = release;
	it->ctx = ctx;
	*out = it;
	return 0;

err_free_buckets:
	free(it->buckets);
err_free_it:
	free(it);
	return -ENOMEM;
}

void sc_inode_table_free(struct sc_itable *it)
{
	size_t i;

	if (!it)
		return;
	for (i = 0; i < it->nbuckets; i++) {
		struct sc_inode *e = it->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			entry_free(it, e);
		}
	}
	while (it->stale) {
		struct sc_inode *e = it->stale;

		it->stale = e->next;
		entry_free(it, e);
	}
	entry_free(it, &it->root);
	pthread_mutex_destroy(&it->lock);
	free(it->buckets);
	free(it->by_name);
	free(it);
}

void sc_inode_table_set_adopt(struct sc_itable *it, sc_inode_adopt_fn adopt,
			      sc_inode_same_fn same)
{
	it->adopt = adopt;
	it->same = same;
}

void sc_inode_table_set_drop(struct sc_itable *it, sc_inode_drop_fn drop)
{
	it->drop = drop;
}

struct sc_inode *sc_inode_root(struct sc_itable *it)
{
	return &it->root;
}

/* Called with the lock held; a failed allocation just keeps the old size. */
static void maybe_grow(struct sc_itable *it)
{
	struct sc_inode **old = it->buckets, **oldnames = it->by_name, **nb, **nn;
	size_t oldn = it->nbuckets, i;

	if (it->count <= it->nbuckets)
		return;
	nb = calloc(oldn * 2, sizeof(*nb));
	nn = calloc(oldn * 2, sizeof(*nn));
	if (!nb || !nn) {
		free(nb);
		free(nn);
		return;
	}
	it->buckets = nb;
	it->by_name = nn;
	it->nbuckets = oldn * 2;
	for (i = 0; i < oldn; i++) {
		struct sc_inode *e = oldnames[i], *next;

		for (; e; e = next) {
			next = e->nnext;
			name_hash(it, e);
		}
	}
	free(oldnames);
	for (i = 0; i < oldn; i++) {
		struct sc_inode *e = old[i], *next;

		for (; e; e = next) {
			size_t b = bucket_of(it, e->dev, e->ino);

			next = e->next;
			e->next = nb[b];
			nb[b] = e;
		}
	}
	free(old);
}

/* Unlinks e from the chain starting at *pp.  Called with the lock held. */
static void unchain(struct sc_inode **pp, struct sc_inode *e)
{
	for (; *pp; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	}
	e->next = NULL;
}

/* Takes e out of the table for good.  Called with the lock held. */
static void unhash(struct sc_itable *it, struct sc_inode *e)
{
	name_unhash(it, e);
	if (e->hashed) {
		unchain(&it->buckets[bucket_of(it, e->dev, e->ino)], e);
		e->hashed = false;
		it->count--;
	} else {
		unchain(&it->stale, e);
	}
}

static void rename_entry(struct sc_itable *it, struct sc_inode *e, const struct sc_inode *parent,
			 const char *name);

int sc_inode_get(struct sc_itable *it, int fd, const struct stat *st,
		 struct sc_inode **out)
{
	return sc_inode_get_named(it, fd, st, NULL, NULL, out);
}

int sc_inode_get_named(struct sc_itable *it, int fd, const struct stat *st,
		       const struct sc_inode *parent, const char *name,
		       struct sc_inode **out)
{
	size_t namelen = parent ? strlen(name) + 1 : 0;
	struct sc_inode *e, *fresh;
	size_t b;

	pthread_mutex_lock(&it->lock);
	b = bucket_of(it, st->st_dev, st->st_ino);
	for (e = it->buckets[b]; e; e = e->next) {
		if (e->ino == st->st_ino && e->dev == st->st_dev) {
			if (e->obj.fd < 0 && it->same && !it->same(it->ctx, &e->obj, fd)) {
				/*
				 * The inode number was freed and reused: e is a
				 * deleted object the kernel has not forgotten yet.
				 */
				unhash(it, e);
				e->next = it->stale;
				it->stale = e;
				break;
			}
			atomic_fetch_add(&e->nlookup, 1);
			if (parent && !e->named)	/* its name was unlinked: another link's */
				rename_entry(it, e, parent, name);
			pthread_mutex_unlock(&it->lock);
			drop_fd(it, fd);
			*out = e;
			return 0;
		}
	}
	fresh = malloc(sizeof(*fresh) + namelen);
	if (!fresh) {
		pthread_mutex_unlock(&it->lock);
		drop_fd(it, fd);
		return -ENOMEM;
	}
	entry_init(fresh, fd, st);
	if (parent) {
		fresh->name = memcpy(fresh + 1, name, namelen);
		fresh->pdev = parent->dev;
		fresh->pino = parent->ino;
		/* A file replaced behind the mount leaves its old entry under the name: unnamed. */
		e = name_find(it, parent, name);
		if (e)
			name_unhash(it, e);
		name_hash(it, fresh);
	}
	atomic_store(&fresh->nlookup, 1);
	if (it->adopt) {
		holding_lock = true;
		it->adopt(it->ctx, &fresh->obj, st);
		holding_lock = false;
	}
	fresh->hashed = true;
	fresh->next = it->buckets[b];
	it->buckets[b] = fresh;
	it->count++;
	maybe_grow(it);
	pthread_mutex_unlock(&it->lock);
	*out = fresh;
	return 0;
}

/* Called with the lock held: e is now name in parent (a copy; kept nameless without memory). */
static void rename_entry(struct sc_itable *it, struct sc_inode *e, const struct sc_inode *parent,
			 const char *name)
{
	char *copy = strdup(name);

	name_unhash(it, e);
	if (!copy)
		return;
	name_free(e);
	e->name = copy;
	e->pdev = parent->dev;
	e->pino = parent->ino;
	name_hash(it, e);
}

void sc_inode_moved(struct sc_itable *it, const struct sc_inode *oldparent,
		    const char *oldname, const struct sc_inode *newparent,
		    const char *newname, bool exchange)
{
	struct sc_inode *from, *to;

	pthread_mutex_lock(&it->lock);
	from = name_find(it, oldparent, oldname);
	to = name_find(it, newparent, newname);
	if (to)
		name_unhash(it, to);	/* replaced; or, exchanged, renamed below */
	if (from)
		rename_entry(it, from, newparent, newname);
	if (to && exchange)
		rename_entry(it, to, oldparent, oldname);
	pthread_mutex_unlock(&it->lock);
}

void sc_inode_unlinked(struct sc_itable *it, const struct sc_inode *parent, const char *name)
{
	struct sc_inode *e;

	pthread_mutex_lock(&it->lock);
	e = name_find(it, parent, name);
	if (e)
		name_unhash(it, e);
	pthread_mutex_unlock(&it->lock);
}

int sc_inode_path(struct sc_itable *it, const struct sc_inode *e, char *buf, size_t len)
{
	size_t pos = len;	/* the path is built backwards, from its end */
	int ret = 0;

	if (len < 2)
		return -ENAMETOOLONG;
	buf[--pos] = '\0';
	if (!holding_lock)
		pthread_mutex_lock(&it->lock);
	/* Each step adds at least "/x": a cycle, were one possible, ends at len. */
	while (e != &it->root) {
		size_t n;

		if (!e || !e->named) {
			ret = -ENOENT;
			break;
		}
		n = strlen(e->name);
		if (n + 1 > pos) {
			ret = -ENAMETOOLONG;
			break;
		}
		pos -= n;
		memcpy(buf + pos, e->name, n);
		buf[--pos] = '/';
		e = key_find(it, e->pdev, e->pino);
	}
	if (!holding_lock)
		pthread_mutex_unlock(&it->lock);
	if (ret < 0)
		return ret;
	if (pos == len - 1)
		buf[--pos] = '/';	/* the root itself */
	memmove(buf, buf + pos, len - pos);
	return 0;
}

void sc_inode_ref(struct sc_inode *inode, uint64_t n)
{
	atomic_fetch_add(&inode->nlookup, n);
}

void sc_inode_put(struct sc_itable *it, struct sc_inode *inode, uint64_t n)
{
	uint64_t prev;

	if (inode == &it->root)
		return;		/* the kernel never forgets the root for good */

	pthread_mutex_lock(&it->lock);
	prev = atomic_fetch_sub(&inode->nlookup, n);
	if (prev < n) {
		fprintf(stderr, "stackcrypt: BUG: inode %llu lookup count %llu - %llu < 0\n",
			(unsigned long long)inode->ino, (unsigned long long)prev,
			(unsigned long long)n);
		abort();
	}
	if (prev != n) {
		pthread_mutex_unlock(&it->lock);
		return;
	}
	unhash(it, inode);
	pthread_mutex_unlock(&it->lock);
	/* Unhashed: no lookup can find it any more, free outside the lock. */
	entry_free(it, inode);
}

size_t sc_inode_count(struct sc_itable *it)
{
	size_t n;

	pthread_mutex_lock(&it->lock);
	n = it->count;
	pthread_mutex_unlock(&it->lock);
	return n;
}
