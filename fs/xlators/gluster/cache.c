/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cache.c - the gluster translator's read cache (cache_i.h).
 *
 * Over a GlusterFS FUSE mount the layers read the backing through that
 * mount's page cache; through libgfapi every read was a brick round trip
 * (docs/performance.md, section 17).  This is the same cache in the
 * daemon: whole pages of backing files, filled by reads (a write patches
 * what is in and brings nothing in), in one LRU under a fixed budget.
 *
 * Why it is never stale: only this process writes the volume (the
 * one-mount lock), and every call of the translator that changes a file's
 * bytes tells the cache after the brick took it -- writes patch the pages
 * they touch, truncates, holes, zeroed ranges and copies into the file cut
 * them.  A page is whole or absent (the partial last page of a file is
 * never kept, so a file that grows or shrinks needs no size here), and
 * absent is always safe: the read goes to the brick.  The races: a read
 * miss fetches outside the lock, and two writes of one file in flight
 * together may reach the brick in either order.  So each read miss and
 * each write is an op of the file while it runs (a list under the one
 * mutex), over the pages it touches; an op is spoiled by a write that
 * overlaps it in pages and in time (begun while it ran, or running when it
 * began) and by a cut of its pages while it runs.  A spoiled read keeps
 * nothing, a spoiled write cuts its pages instead of patching them.  Ops
 * on other pages of the file go on undisturbed (fio's jobs on one file).
 * The translator asks the cache only while it holds the one-mount lock,
 * and drops every page when it takes the lock again after a lost
 * connection (another client may have written meanwhile).
 * Pages live while an object of the file does: the slot table holds the
 * file's entry from each GL_OBJ slot's making to its freeing, and the
 * front end frees the object when the kernel forgets the inode -- so
 * `echo 3 > /proc/sys/vm/drop_caches`, which evicts unused FUSE inodes,
 * empties this cache as it empties the page cache of a FUSE mount.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cache_i.h"

#define GL_CACHE_FBUCKETS	1024

struct gl_cfile {
	unsigned char		gfid[GL_CACHE_GFID];
	struct gl_cfile		*hnext;
	struct gl_cpage		*pages;		/* the file's, by fnext/fprev */
	size_t			npages;
	int			refs;		/* objects of the file */
	struct gl_cache_op	*ops;		/* reads and writes under way */
};

struct gl_cpage {
	struct gl_cchunk	*chunk;		/* where it lives */
	struct gl_cfile		*f;
	uint64_t		idx;
	struct gl_cpage		*hnext;
	struct gl_cpage		*lprev, *lnext;
	struct gl_cpage		*fprev, *fnext;
	unsigned char		data[GL_CACHE_PAGE];
};

/*
 * Pages come from chunks of GL_CHUNK_PAGES, mapped with MAP_POPULATE: one
 * system call makes the chunk's memory present, where malloc'd pages each
 * took page faults on first touch, which on this KVM guest cost more than
 * the page's copy (docs/performance.md 17.4).  A chunk whose pages are all
 * free is unmapped.
 */
#define GL_CHUNK_PAGES	256

struct gl_cchunk {
	struct gl_cchunk	*prev, *next;	/* in c->partial while it has free pages */
	struct gl_cpage		*free;		/* by hnext */
	int			used;
	struct gl_cpage		page[GL_CHUNK_PAGES];
};

static struct gl_cpage *page_alloc(struct gl_cache *c)
{
	struct gl_cchunk *k = c->partial;
	struct gl_cpage *p;
	int i;

	if (!k) {
		k = mmap(NULL, sizeof(*k), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (k == MAP_FAILED)
			return NULL;
		k->prev = k->next = NULL;
		k->used = 0;
		k->free = NULL;
		for (i = GL_CHUNK_PAGES - 1; i >= 0; i--) {
			k->page[i].chunk = k;
			k->page[i].hnext = k->free;
			k->free = &k->page[i];
		}
		c->partial = k;
	}
	p = k->free;
	k->free = p->hnext;
	if (++k->used == GL_CHUNK_PAGES) {	/* full: out of the partial list */
		c->partial = k->next;
		if (k->next)
			k->next->prev = NULL;
		k->next = NULL;
	}
	return p;
}

static void page_release(struct gl_cache *c, struct gl_cpage *p)
{
	struct gl_cchunk *k = p->chunk;

	if (k->used-- == GL_CHUNK_PAGES) {	/* was full: back in the list */
		k->prev = NULL;
		k->next = c->partial;
		if (c->partial)
			c->partial->prev = k;
		c->partial = k;
	}
	p->hnext = k->free;
	k->free = p;
	if (k->used == 0) {
		if (k->prev)
			k->prev->next = k->next;
		else
			c->partial = k->next;
		if (k->next)
			k->next->prev = k->prev;
		munmap(k, sizeof(*k));
	}
}

int gl_cache_init(struct gl_cache *c, size_t max_bytes)
{
	size_t nb = 1024;

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->max_pages = max_bytes / GL_CACHE_PAGE;
	if (!c->max_pages)
		return 0;
	while (nb < c->max_pages)
		nb <<= 1;
	c->pbucket = calloc(nb, sizeof(*c->pbucket));
	c->fbucket = calloc(GL_CACHE_FBUCKETS, sizeof(*c->fbucket));
	if (!c->pbucket || !c->fbucket)
		goto err_free;
	c->pmask = nb - 1;
	return 0;

err_free:
	free(c->pbucket);
	free(c->fbucket);
	c->pbucket = NULL;
	c->fbucket = NULL;
	c->max_pages = 0;
	return -ENOMEM;
}

static struct gl_cpage **page_slot(struct gl_cache *c, const struct gl_cfile *f, uint64_t idx)
{
	uint64_t h = (uint64_t)(uintptr_t)f ^ (idx * 0x9E3779B97F4A7C15ULL);

	h ^= h >> 29;
	return &c->pbucket[h & c->pmask];
}

static struct gl_cfile **file_slot(struct gl_cache *c, const unsigned char *gfid)
{
	uint32_t h;

	memcpy(&h, gfid + GL_CACHE_GFID - sizeof(h), sizeof(h));	/* random bytes of a UUID */
	return &c->fbucket[h % GL_CACHE_FBUCKETS];
}

static struct gl_cfile *file_find(struct gl_cache *c, const unsigned char *gfid)
{
	struct gl_cfile *f;

	if (!c->max_pages)
		return NULL;
	for (f = *file_slot(c, gfid); f; f = f->hnext)
		if (!memcmp(f->gfid, gfid, GL_CACHE_GFID))
			return f;
	return NULL;
}

static struct gl_cpage *page_find(struct gl_cache *c, const struct gl_cfile *f, uint64_t idx)
{
	struct gl_cpage *p;

	for (p = *page_slot(c, f, idx); p; p = p->hnext)
		if (p->f == f && p->idx == idx)
			return p;
	return NULL;
}

static void lru_unlink(struct gl_cache *c, struct gl_cpage *p)
{
	if (p->lprev)
		p->lprev->lnext = p->lnext;
	else
		c->lru_head = p->lnext;
	if (p->lnext)
		p->lnext->lprev = p->lprev;
	else
		c->lru_tail = p->lprev;
}

static void lru_push(struct gl_cache *c, struct gl_cpage *p)
{
	p->lprev = NULL;
	p->lnext = c->lru_head;
	if (c->lru_head)
		c->lru_head->lprev = p;
	c->lru_head = p;
	if (!c->lru_tail)
		c->lru_tail = p;
}

static void page_free(struct gl_cache *c, struct gl_cpage *p)
{
	struct gl_cpage **pp = page_slot(c, p->f, p->idx);

	while (*pp != p)
		pp = &(*pp)->hnext;
	*pp = p->hnext;
	lru_unlink(c, p);
	if (p->fprev)
		p->fprev->fnext = p->fnext;
	else
		p->f->pages = p->fnext;
	if (p->fnext)
		p->fnext->fprev = p->fprev;
	p->f->npages--;
	c->npages--;
	page_release(c, p);
}

/* The page idx of f becomes src (made if missing, when memory allows). */
static void page_put(struct gl_cache *c, struct gl_cfile *f, uint64_t idx, const void *src)
{
	struct gl_cpage *p = page_find(c, f, idx), **slot;

	if (p) {
		memcpy(p->data, src, GL_CACHE_PAGE);
		lru_unlink(c, p);
		lru_push(c, p);
		return;
	}
	if (c->npages >= c->max_pages) {
		p = c->lru_tail;
		page_free(c, p);
	}
	p = page_alloc(c);
	if (!p)
		return;		/* not kept: read from the brick next time */
	memcpy(p->data, src, GL_CACHE_PAGE);
	p->f = f;
	p->idx = idx;
	slot = page_slot(c, f, idx);
	p->hnext = *slot;
	*slot = p;
	p->fprev = NULL;
	p->fnext = f->pages;
	if (f->pages)
		f->pages->fprev = p;
	f->pages = p;
	lru_push(c, p);
	f->npages++;
	c->npages++;
}

/* Drops f's pages from..to (inclusive): by index when fewer than f holds. */
static void pages_cut(struct gl_cache *c, struct gl_cfile *f, uint64_t from, uint64_t to)
{
	struct gl_cpage *p, *next;
	uint64_t i;

	if (to - from < f->npages) {
		for (i = from; i <= to; i++)
			if ((p = page_find(c, f, i)))
				page_free(c, p);
		return;
	}
	for (p = f->pages; p; p = next) {
		next = p->fnext;
		if (p->idx >= from && p->idx <= to)
			page_free(c, p);
	}
}

static bool ops_meet(const struct gl_cache_op *a, const struct gl_cache_op *b)
{
	return a->first <= b->last && b->first <= a->last && (a->write || b->write);
}

/* op (f, first, last, write set) begins: what it meets spoils or is spoiled. */
static void op_begin(struct gl_cfile *f, struct gl_cache_op *op)
{
	struct gl_cache_op *o;

	op->spoiled = 0;
	for (o = f->ops; o; o = o->next) {
		if (!ops_meet(o, op))
			continue;
		if (op->write)
			o->spoiled = 1;
		if (o->write)
			op->spoiled = 1;
	}
	op->prev = NULL;
	op->next = f->ops;
	if (f->ops)
		f->ops->prev = op;
	f->ops = op;
}

static void op_end(struct gl_cache_op *op)
{
	if (op->prev)
		op->prev->next = op->next;
	else
		op->f->ops = op->next;
	if (op->next)
		op->next->prev = op->prev;
}

/* f's pages from..to change: ops under way over them keep nothing. */
static void ops_spoil(struct gl_cfile *f, uint64_t from, uint64_t to)
{
	struct gl_cache_op *o;

	for (o = f->ops; o; o = o->next)
		if (o->first <= to && from <= o->last)
			o->spoiled = 1;
}

static void file_unref(struct gl_cache *c, struct gl_cfile *f)
{
	struct gl_cfile **pp;

	if (f->refs || f->ops)
		return;
	pages_cut(c, f, 0, UINT64_MAX);
	for (pp = file_slot(c, f->gfid); *pp != f; pp = &(*pp)->hnext)
		;
	*pp = f->hnext;
	free(f);
}

/* Every page dropped; reads and writes under way keep nothing. */
static void drop_all(struct gl_cache *c)
{
	size_t i;

	for (i = 0; c->fbucket && i < GL_CACHE_FBUCKETS; i++) {
		struct gl_cfile *f;

		for (f = c->fbucket[i]; f; f = f->hnext) {
			pages_cut(c, f, 0, UINT64_MAX);
			ops_spoil(f, 0, UINT64_MAX);
		}
	}
}

void gl_cache_drop_all(struct gl_cache *c)
{
	pthread_mutex_lock(&c->lock);
	drop_all(c);
	pthread_mutex_unlock(&c->lock);
}

/* Everything dropped and the cache off for good (it lost track of a file). */
static void cache_off(struct gl_cache *c)
{
	drop_all(c);
	c->max_pages = 0;
}

void gl_cache_hold(struct gl_cache *c, const unsigned char *gfid)
{
	struct gl_cfile *f, **slot;

	pthread_mutex_lock(&c->lock);
	f = file_find(c, gfid);
	if (!f && c->max_pages) {
		f = calloc(1, sizeof(*f));
		if (!f) {
			/*
			 * An object of this file would hold no entry, and a
			 * second one could make an entry that the first one's
			 * release ends early: safe only with no cache at all.
			 */
			cache_off(c);
		} else {
			memcpy(f->gfid, gfid, GL_CACHE_GFID);
			slot = file_slot(c, gfid);
			f->hnext = *slot;
			*slot = f;
		}
	}
	if (f)
		f->refs++;
	pthread_mutex_unlock(&c->lock);
}

void gl_cache_release(struct gl_cache *c, const unsigned char *gfid)
{
	struct gl_cfile *f;

	pthread_mutex_lock(&c->lock);
	f = file_find(c, gfid);
	if (f && f->refs > 0 && --f->refs == 0)
		file_unref(c, f);	/* ops under way keep it, and keep nothing (refs 0) */
	pthread_mutex_unlock(&c->lock);
}

ssize_t gl_cache_read(struct gl_cache *c, const unsigned char *gfid, void *buf, size_t size,
		      off_t off, gl_cache_fill_fn fill, void *arg)
{
	uint64_t first, last, i;
	struct gl_cache_op op = { .write = 0 };
	struct gl_cfile *f;
	size_t span, skip;
	unsigned char *tmp;
	ssize_t n, ret;

	if (!size || off < 0)
		return fill(arg, buf, size, off);
	first = (uint64_t)off / GL_CACHE_PAGE;
	last = ((uint64_t)off + size - 1) / GL_CACHE_PAGE;
	skip = (size_t)((uint64_t)off - first * GL_CACHE_PAGE);
	pthread_mutex_lock(&c->lock);
	f = file_find(c, gfid);
	if (!f || !f->refs) {
		pthread_mutex_unlock(&c->lock);
		return fill(arg, buf, size, off);
	}
	for (i = first; i <= last; i++) {
		struct gl_cpage *p = page_find(c, f, i);
		size_t from = i == first ? skip : 0;
		size_t at = (size_t)((i - first) * GL_CACHE_PAGE) - (i == first ? 0 : skip);
		size_t len = GL_CACHE_PAGE - from;

		if (!p)
			break;
		if (len > size - at)
			len = size - at;
		memcpy((unsigned char *)buf + at, p->data + from, len);
		lru_unlink(c, p);
		lru_push(c, p);
	}
	if (i > last) {
		pthread_mutex_unlock(&c->lock);
		return (ssize_t)size;
	}
	op.f = f;
	op.first = first;
	op.last = last;
	op_begin(f, &op);
	pthread_mutex_unlock(&c->lock);

	/*
	 * A miss: the request from the brick, from the start of its first
	 * page so that page is whole, but not past its end: past the end of a
	 * small file libgfapi's quick-read would no longer answer from the
	 * content its lookup brought (an OPEN and a READ at the brick per
	 * file).  A last page the request cuts stays out; the read of the
	 * next range brings it in.
	 */
	span = skip + size;
	tmp = skip == 0 ? buf : malloc(span);
	n = tmp ? fill(arg, tmp, span, (off_t)(first * GL_CACHE_PAGE)) : -ENOMEM;

	pthread_mutex_lock(&c->lock);
	if (n > 0 && !op.spoiled && f->refs)
		for (i = 0; i < (uint64_t)n / GL_CACHE_PAGE; i++)
			page_put(c, f, first + i, tmp + i * GL_CACHE_PAGE);
	op_end(&op);
	file_unref(c, f);
	pthread_mutex_unlock(&c->lock);

	if (!tmp)
		return fill(arg, buf, size, off);
	ret = n < 0 ? n : (size_t)n > skip ? (ssize_t)((size_t)n - skip) : 0;
	if (ret > (ssize_t)size)
		ret = (ssize_t)size;
	if (tmp != buf) {
		if (ret > 0)
			memcpy(buf, tmp + skip, (size_t)ret);
		free(tmp);
	}
	return ret;
}

void gl_cache_write_begin(struct gl_cache *c, const unsigned char *gfid, size_t size,
			  off_t off, struct gl_cache_op *w)
{
	pthread_mutex_lock(&c->lock);
	w->f = size && off >= 0 ? file_find(c, gfid) : NULL;
	if (w->f) {
		w->from = (uint64_t)off;
		w->to = (uint64_t)off + size;
		w->first = w->from / GL_CACHE_PAGE;
		w->last = (w->to - 1) / GL_CACHE_PAGE;
		w->write = 1;
		op_begin(w->f, w);
	}
	pthread_mutex_unlock(&c->lock);
}

/*
 * The bytes of write w (from src, its data) that fall in page p.  Only the
 * pages a read brought in are patched: a write brings none in, since
 * filling the cache from writes made sequential writes dearer than the
 * reads it saved (docs/performance.md 17.4).
 */
static void page_patch(struct gl_cpage *p, const struct gl_cache_op *w,
		       const unsigned char *src)
{
	uint64_t ps = p->idx * GL_CACHE_PAGE, pe = ps + GL_CACHE_PAGE;
	uint64_t lo = w->from > ps ? w->from : ps, hi = w->to < pe ? w->to : pe;

	memcpy(p->data + (lo - ps), src + (lo - w->from), hi - lo);
}

void gl_cache_write_end(struct gl_cache *c, struct gl_cache_op *w, const void *buf)
{
	const unsigned char *src = buf;
	struct gl_cfile *f = w->f;
	struct gl_cpage *p;
	uint64_t i;

	if (!f)
		return;
	pthread_mutex_lock(&c->lock);
	op_end(w);
	if (!buf || w->spoiled || !f->refs) {
		pages_cut(c, f, w->first, w->last);
	} else if (w->last - w->first < f->npages) {	/* as pages_cut: the shorter walk */
		for (i = w->first; i <= w->last; i++)
			if ((p = page_find(c, f, i)))
				page_patch(p, w, src);
	} else {
		for (p = f->pages; p; p = p->fnext)
			if (p->idx >= w->first && p->idx <= w->last)
				page_patch(p, w, src);
	}
	file_unref(c, f);
	pthread_mutex_unlock(&c->lock);
}

void gl_cache_cut(struct gl_cache *c, const unsigned char *gfid, off_t off, off_t len)
{
	struct gl_cfile *f;
	uint64_t from, to;

	pthread_mutex_lock(&c->lock);
	f = file_find(c, gfid);
	if (f) {
		from = off > 0 ? (uint64_t)off / GL_CACHE_PAGE : 0;
		to = len > 0 ? ((uint64_t)off + (uint64_t)len - 1) / GL_CACHE_PAGE : UINT64_MAX;
		ops_spoil(f, from, to);	/* after the brick's change: ops under way keep nothing */
		pages_cut(c, f, from, to);
	}
	pthread_mutex_unlock(&c->lock);
}

void gl_cache_fini(struct gl_cache *c)
{
	size_t i;

	for (i = 0; c->fbucket && i < GL_CACHE_FBUCKETS; i++) {
		while (c->fbucket[i]) {
			struct gl_cfile *f = c->fbucket[i];

			pages_cut(c, f, 0, UINT64_MAX);
			c->fbucket[i] = f->hnext;
			free(f);
		}
	}
	free(c->pbucket);
	free(c->fbucket);
	pthread_mutex_destroy(&c->lock);
	memset(c, 0, sizeof(*c));
}
