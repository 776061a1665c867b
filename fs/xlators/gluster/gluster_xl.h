/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gluster_xl.h - the gluster translator's connection and constructor, for
 * the commands (init, mount) and the stack builder.  A connection is one
 * libgfapi client of one volume, rooted at a directory of it, named by a
 * URL gluster://HOST[:PORT]/VOLUME[/PATH].  Everything else about the layer
 * goes through struct sc_xl_ops (include/sc_xlator.h).
 *
 * Connections are cached per process (one per URL) and end when the
 * process does (gluster.c says why): connect and disconnect are cheap after
 * the first.  A connection never crosses a fork(): the child makes its own.
 */
#ifndef SC_GLUSTER_XL_H
#define SC_GLUSTER_XL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct sc_gluster;
struct sc_xl;

#define SC_GLUSTER_SCHEME	"gluster://"

/* Whether s names a gluster backing (starts with gluster://). */
bool sc_gluster_is_url(const char *s);

/*
 * Connects to the volume url names and looks up its directory (which must
 * exist), or takes this process's connection to url.  libgfapi's own log
 * goes to logfile at warning level (NULL: /dev/null, or where it went).  Returns 0, or -EINVAL (bad URL), -EHOSTUNREACH / -ENOENT /
 * -ENOTCONN (no host, no volume, no answer: libgfapi's errno), -ENOTDIR
 * (PATH is not a directory), -ENOMEM; err gets a one-line reason.
 */
int sc_gluster_connect(const char *url, const char *logfile, struct sc_gluster **out,
		       char *err, size_t errlen);
void sc_gluster_disconnect(struct sc_gluster *g);

/*
 * The root directory as the front end's inode table takes it: an fd-shaped
 * int that only the gluster layer can use (give it back with the layer's
 * ->drop_fd), and its stat.  Returns the int or -errno.
 */
int sc_gluster_root(struct sc_gluster *g, struct stat *st);

/*
 * Small files of the root directory, for the volume tools (the config,
 * the names layer's root nonce file).  read_file: at most cap bytes of
 * name into buf; returns the length, -ENOENT, -EUCLEAN (not a regular
 * file, or larger than cap), -errno.  write_file: a new file tmp written,
 * fsynced and then moved to name (replace: renamed over it; else linked,
 * which never replaces: -EEXIST); returns 0 or -errno, nothing left
 * behind on failure.  entries: the count of entries of the root but . and
 * .. and those skip (if not NULL) is true for, the first one's name in
 * first.  root_setxattr / root_getxattr: as
 * setxattr(2) / getxattr(2) on the root.
 */
ssize_t sc_gluster_read_file(struct sc_gluster *g, const char *name, char *buf, size_t cap);
int sc_gluster_write_file(struct sc_gluster *g, const char *tmp, const char *name,
			  const void *data, size_t len, mode_t mode, bool replace);
int sc_gluster_entries(struct sc_gluster *g, bool (*skip)(const char *name), char *first,
		       size_t firstlen);
int sc_gluster_root_setxattr(struct sc_gluster *g, const char *name, const void *val,
			     size_t len, int flags);
ssize_t sc_gluster_root_getxattr(struct sc_gluster *g, const char *name, void *val,
				 size_t len);

/*
 * Walks the tree below the root depth first (not following symlinks) and
 * calls fn for every regular file: rel its path relative to the root, st
 * its stat, xval/xlen the value of its xattr `xattr` (at most xcap bytes;
 * xlen -errno when it has none or it cannot be read) and, only when xlen
 * < 0, head/hlen its first bytes (at most headcap; hlen 0 for an empty
 * file, -errno when unreadable).  The volume tools' header search
 * (recovery, init) over gluster://, as sc_vol_walk over a directory.  fn
 * returns 0 to go on, > 0 to stop, < 0 to abort.  Returns 0 (also when
 * stopped), fn's negative value, or -errno.
 */
typedef int (*sc_gluster_file_fn)(void *ctx, const char *rel, const struct stat *st,
				  const void *xval, ssize_t xlen, const void *head,
				  ssize_t hlen);
int sc_gluster_walk_files(struct sc_gluster *g, const char *xattr, size_t xcap,
			  size_t headcap, sc_gluster_file_fn fn, void *ctx);

/*
 * Walks the tree below the root depth first (not following symlinks) and
 * calls fn for every entry but . and ..: rel its path relative to the
 * root, name its last component, st its stat and err 0 -- or err -errno
 * with st NULL (it cannot be looked up), with name and st (a directory
 * that cannot be opened) or with name NULL (rel: a directory that cannot
 * be read).  fsck's walk, as sc_vol_walk's over a directory.  fn returns 0
 * to go on, > 0 to stop, < 0 to abort.  Returns 0 (also when stopped),
 * fn's negative value, or -errno.
 */
typedef int (*sc_gluster_entry_fn)(void *ctx, const char *rel, const char *name,
				   const struct stat *st, int err);
int sc_gluster_walk(struct sc_gluster *g, sc_gluster_entry_fn fn, void *ctx);

/*
 * Regular files below the root by path, read-only, for fsck: open_ro
 * returns an fd-shaped int of this layer (not a kernel fd) or -errno;
 * fstat, fgetxattr and pread are the calls of those names on it (0, a
 * length, or -errno; never errno), close gives it back.
 */
int sc_gluster_open_ro(struct sc_gluster *g, const char *rel);
int sc_gluster_fstat(struct sc_gluster *g, int fd, struct stat *st);
ssize_t sc_gluster_fgetxattr(struct sc_gluster *g, int fd, const char *name, void *buf,
			     size_t len);
ssize_t sc_gluster_pread(struct sc_gluster *g, int fd, void *buf, size_t len, uint64_t off);
void sc_gluster_close(struct sc_gluster *g, int fd);

/*
 * Entries below the root by path, for fsck's name checks (rel "": the
 * root; a symlink is never followed): lstat, lgetxattr and readlink as
 * those calls (0 or a length, or -errno), and list, which calls fn with
 * the name of every entry of directory rel but . and .. (fn returns 0 to
 * go on, else that value ends the listing and is returned); 0 or -errno.
 */
int sc_gluster_lstat(struct sc_gluster *g, const char *rel, struct stat *st);
ssize_t sc_gluster_lgetxattr(struct sc_gluster *g, const char *rel, const char *name,
			     void *buf, size_t len);
ssize_t sc_gluster_readlink(struct sc_gluster *g, const char *rel, char *buf, size_t len);
int sc_gluster_list(struct sc_gluster *g, const char *rel,
		    int (*fn)(void *ctx, const char *name), void *ctx);

/*
 * The one-mount lock over gluster://: a write lock on byte 0 of the root's
 * file name (the mount lock file, made if missing), held until the process
 * exits: the lock a mount over the volume's FUSE client takes too.  Take
 * it after the last read of that file, if any: GlusterFS drops a client's
 * locks on a file when any fd of it is closed, whatever the lock owner.
 * Returns 0, -EBUSY (another client holds it), or -errno (the volume has
 * no locks).
 */
int sc_gluster_lock(struct sc_gluster *g, const char *name);

/*
 * The config lock over gluster:// (sc_vol_lock's flock of the directory,
 * which libgfapi has no call for): a write lock on byte 1 of the same
 * file, apart from the mount's byte 0, so that a command may change the
 * config of a mounted volume as over a directory.  Held until the process
 * exits.  Returns 0, -EBUSY (another command holds it), or -errno.
 */
int sc_gluster_lock_config(struct sc_gluster *g, const char *name);

/*
 * The bottom layer (id 0) over connection g, which must outlive it.
 * Returns 0 or -ENOMEM.
 */
int sc_gluster_xl_new(struct sc_gluster *g, struct sc_xl **out);

#endif /* SC_GLUSTER_XL_H */
