/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cache_i.h - the gluster translator's read cache: what the page cache of
 * a GlusterFS FUSE mount is to the layers stacked on that mount.  Whole
 * 4 KiB pages of backing files, keyed by GFID, kept while an object of the
 * file lives (gl_cache_hold/gl_cache_release, from the slot table), filled
 * by reads, patched by every write,
 * cut by every truncate, hole and copy into the file.  Only this process
 * writes the volume (the one-mount lock), so what it holds is what the
 * bricks hold; cache.c says why that is enough.
 */
#ifndef SC_GL_CACHE_I_H
#define SC_GL_CACHE_I_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GL_CACHE_PAGE	4096
#define GL_CACHE_GFID	16

struct gl_cchunk;
struct gl_cfile;
struct gl_cpage;

struct gl_cache {
	pthread_mutex_t		lock;
	size_t			max_pages;	/* 0: the cache is off */
	size_t			npages;
	struct gl_cpage		**pbucket;	/* pages by (file, index) */
	size_t			pmask;
	struct gl_cfile		**fbucket;	/* files by GFID */
	struct gl_cpage		*lru_head;	/* the most recently used */
	struct gl_cpage		*lru_tail;	/* the next to go */
	struct gl_cchunk	*partial;	/* chunks with free pages (cache.c) */
};

/* How a read miss reaches the brick: fills buf from off, short at EOF only. */
typedef ssize_t (*gl_cache_fill_fn)(void *arg, void *buf, size_t size, off_t off);

/* max_bytes 0: no cache (every call passes through).  0 or -ENOMEM. */
int gl_cache_init(struct gl_cache *c, size_t max_bytes);
void gl_cache_fini(struct gl_cache *c);

/* An object of gfid made / let go of: its pages live while one does. */
void gl_cache_hold(struct gl_cache *c, const unsigned char *gfid);
void gl_cache_release(struct gl_cache *c, const unsigned char *gfid);

/* size bytes at off, from the cache or through fill: bytes read or -errno. */
ssize_t gl_cache_read(struct gl_cache *c, const unsigned char *gfid, void *buf, size_t size,
		      off_t off, gl_cache_fill_fn fill, void *arg);
/*
 * A write of gfid: begin before the brick call (size bytes at off), end
 * after it with the bytes written (buf NULL: the call failed, perhaps after
 * writing part of it: the range is cut).  The op is the cache's until end.
 */
struct gl_cache_op {
	struct gl_cfile		*f;	/* NULL: nothing cached of the file */
	uint64_t		first, last;	/* the pages it touches */
	uint64_t		from, to;	/* a write's bytes: [from, to) */
	int			write;
	int			spoiled;	/* an overlapping write or cut came */
	struct gl_cache_op	*prev, *next;	/* the file's ops under way */
};
void gl_cache_write_begin(struct gl_cache *c, const unsigned char *gfid, size_t size,
			  off_t off, struct gl_cache_op *w);
void gl_cache_write_end(struct gl_cache *c, struct gl_cache_op *w, const void *buf);
/* Every page goes (another client may have written): reads under way keep nothing. */
void gl_cache_drop_all(struct gl_cache *c);
/* The file changed from off for len bytes (len 0: to its end). */
void gl_cache_cut(struct gl_cache *c, const unsigned char *gfid, off_t off, off_t len);

#endif /* SC_GL_CACHE_I_H */
