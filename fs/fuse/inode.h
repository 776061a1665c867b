/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inode.h - the front end's inode table (private to fs/).
 *
 * One entry per backing object the kernel holds a lookup on, keyed by the
 * backing (st_dev, st_ino) and hashed with XXH3.  An entry embeds the
 * struct sc_obj the translators see (O_PATH fd + per-layer slots) and the
 * kernel's lookup count.  The FUSE node id of an entry is its address; the
 * root is a separate entry that is never hashed and never freed.
 *
 * Ownership: the table owns entries and their O_PATH fds.  An entry is freed
 * when its lookup count drops to zero: the table calls the release callback
 * (the front end calls ->forget on every layer of the stack, top to bottom),
 * then closes the fd.
 *
 * Names, for messages only: an entry made by a lookup, create, mkdir...
 * keeps the name it was found by and its parent's key, so that a layer's
 * message can name the file by its path in the mount (sc_inode_path;
 * sc_obj_path in include/sc_xlator.h).  A hard link keeps the first name
 * it was seen by.  Renames and unlinks through the mount update the names
 * (sc_inode_moved, sc_inode_unlinked) through a second hash of the entries
 * by (parent, name); nothing on the data path reads or writes them.
 *
 * An entry may hold no fd (obj.fd == -1): the adopt callback, run on every
 * new entry before it becomes visible, lets the stack trade the fd for a
 * file handle so that a large tree does not need one descriptor per cached
 * inode.  Such an entry no longer pins its backing inode, so its inode
 * number can be reused by a new file while the kernel still holds the old
 * node id; the same callback tells a match by (dev, ino) from such a reuse,
 * and a reused key gets a new entry while the old one lives on unhashed
 * until the kernel forgets it.
 */
#ifndef SC_INODE_H
#define SC_INODE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "sc_xlator.h"

struct sc_inode {
	struct sc_obj		obj;		/* first: what the translators see */
	dev_t			dev;		/* backing st_dev, key */
	ino_t			ino;		/* backing st_ino, key */
	_Atomic uint64_t	nlookup;	/* kernel lookups not yet forgotten */
	struct sc_inode		*next;		/* hash chain */
	bool			hashed;		/* false once replaced by a reused key */
	/* Under the table lock: the name the entry was found by (see above). */
	bool			named;		/* in the (parent, name) hash */
	dev_t			pdev;		/* the parent's key */
	ino_t			pino;
	char			*name;		/* NULL: none; the first is after the entry */
	struct sc_inode		*nnext;		/* (parent, name) hash chain */
};

struct sc_itable;

/* Called (without the table lock) before an entry's fd is closed. */
typedef void (*sc_inode_release_fn)(void *ctx, struct sc_obj *obj);

/*
 * Creates a table whose root entry takes ownership of root_fd (an O_PATH fd
 * on the backing root directory).  Returns 0, -ENOMEM or -EINVAL.
 */
int sc_inode_table_new(int root_fd, const struct stat *root_st,
		       sc_inode_release_fn release, void *ctx,
		       struct sc_itable **out);

/*
 * Frees every entry (calling release on each, root last) and the table.
 * Used at unmount: the kernel sends no forgets for what it still holds.
 */
void sc_inode_table_free(struct sc_itable *it);

/*
 * Optional, set once before the table is used.  adopt(ctx, obj, st) runs on
 * a new entry under the table lock before it is visible and may replace
 * obj->fd by -1 (keeping its own way to reach the object).  same(ctx, obj,
 * fd) is asked, under the lock, only for an entry without an fd whose key
 * matches: is fd that very object?
 */
typedef void (*sc_inode_adopt_fn)(void *ctx, struct sc_obj *obj, const struct stat *st);
typedef bool (*sc_inode_same_fn)(void *ctx, const struct sc_obj *obj, int fd);
void sc_inode_table_set_adopt(struct sc_itable *it, sc_inode_adopt_fn adopt,
			      sc_inode_same_fn same);

/*
 * Optional, set once before the table is used: how the table gives back
 * an fd it owns (an entry's when it is freed, a duplicate's in
 * sc_inode_get): drop(ctx, fd), without the lock.  Unset: close(2).  The
 * stack's bottom layer may hand up ints that are not descriptors (the
 * gluster layer), so the mount routes this through ->drop_fd.
 */
typedef void (*sc_inode_drop_fn)(void *ctx, int fd);
void sc_inode_table_set_drop(struct sc_itable *it, sc_inode_drop_fn drop);

/* Returns the root entry (never freed before the table). */
struct sc_inode *sc_inode_root(struct sc_itable *it);

/*
 * Finds the entry for (st->st_dev, st->st_ino), or inserts a new one holding
 * fd, and adds one lookup to it.  Always consumes fd: if an entry already
 * existed (hard link, racing lookups) fd is closed.  Returns 0 with *out set,
 * or -ENOMEM (fd closed).
 */
int sc_inode_get(struct sc_itable *it, int fd, const struct stat *st,
		 struct sc_inode **out);

/*
 * sc_inode_get, and the entry is known as name in parent (the entry the
 * kernel looked it up in) unless it has a name already.  parent NULL: no
 * name.  Returns as sc_inode_get.
 */
int sc_inode_get_named(struct sc_itable *it, int fd, const struct stat *st,
		       const struct sc_inode *parent, const char *name,
		       struct sc_inode **out);

/*
 * A rename through the mount succeeded: the entry known as oldname in
 * oldparent is now newname in newparent; the one known by the new name
 * before loses it (replaced), or, with exchange, takes the old name.
 */
void sc_inode_moved(struct sc_itable *it, const struct sc_inode *oldparent,
		    const char *oldname, const struct sc_inode *newparent,
		    const char *newname, bool exchange);

/* An unlink or rmdir through the mount succeeded: no entry is known by name in parent. */
void sc_inode_unlinked(struct sc_itable *it, const struct sc_inode *parent, const char *name);

/*
 * The path of e below the table's root, "/" for the root, "/a/b" else, in
 * buf.  Returns 0, -ENOENT (a name on the way is unknown: not found by a
 * lookup, or its parent forgotten) or -ENAMETOOLONG.  For messages: it
 * takes the table lock.
 */
int sc_inode_path(struct sc_itable *it, const struct sc_inode *e, char *buf, size_t len);

/* Adds n lookups to an entry the caller knows is live (link reply). */
void sc_inode_ref(struct sc_inode *inode, uint64_t n);

/*
 * Drops n lookups (forget, or undoing a reply the kernel never saw) and
 * frees the entry at zero.  Aborts if the count would go negative: that is
 * a front-end bug and continuing would corrupt memory.  The root is never
 * freed.
 */
void sc_inode_put(struct sc_itable *it, struct sc_inode *inode, uint64_t n);

/* Returns the number of hashed entries (the root excluded); for tests. */
size_t sc_inode_count(struct sc_itable *it);

#endif /* SC_INODE_H */
