/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_backing.h - where a volume's files are, for the tools that work on
 * them without a mount (init, passwd, info, recovery, fsck) and for the
 * mount's choice of a bottom layer: a local directory, or a volume of a
 * network file system reached by URL (gluster://HOST[:PORT]/VOLUME[/PATH]).
 *
 * One small set of calls, the same for every engine; each engine is one
 * table of operations in fs/backing/ (dir.c, gluster.c).  The code above
 * this header never names an engine: adding one is a new table there and
 * a new bottom translator, nothing else (docs/design.md, "Adding a
 * backing").
 *
 * Paths (rel) are relative to the backing's root ("" is the root) and are
 * never followed through a final symbolic link.  Files opened here are
 * fd-shaped ints that only these calls take (a kernel fd for a
 * directory; an int of the engine's own table otherwise).  Every call
 * returns 0, a count or a length, or -errno; never errno.  The file and
 * tree calls are for the single-threaded tools.
 */
#ifndef SC_BACKING_H
#define SC_BACKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct sc_backing;
struct sc_stack_spec;

/* Whether spec is a directory path: it names no engine's URL. */
bool sc_backing_is_dir(const char *spec);

/*
 * Opens the backing spec names (a directory path or a URL).  log: where a
 * network engine's client library logs (NULL: nowhere; "" : the engine's
 * default for a daemon, e.g. /var/log/glusterfs/stackcrypt-VOLUME.log).
 * A directory must exist and be searchable.  Returns 0, or -EINVAL (bad
 * URL), -ENOTDIR (not a directory, missing), -EPROTONOSUPPORT (an engine
 * this build lacks), -EHOSTUNREACH / -ENOENT / -ENOTCONN (cannot connect),
 * -ENOMEM; err gets a one-line reason.
 */
int sc_backing_open(const char *spec, const char *log, struct sc_backing **out, char *err,
		    size_t errlen);
void sc_backing_close(struct sc_backing *b);
/* The spec it was opened with. */
const char *sc_backing_spec(const struct sc_backing *b);

/*
 * Small files of the root (the config, the names layer's root nonce
 * file).  read_file: the regular file name (at most cap bytes) into buf
 * and its stat into st; returns the length, -ENOENT, -ELOOP (a symbolic
 * link), -EUCLEAN (not a regular file), -EFBIG (larger than cap; st
 * set), or -errno.  write_file: data as a new file (a temporary name of
 * prefix tmp, written, fsynced) put in place of name atomically (replace:
 * over it; else -EEXIST if name exists), the root synced; nothing left
 * behind on failure; err gets the step that failed and the error ("cannot
 * fsync BACKING/TMP: Input/output error").  Under the config lock if this
 * process holds it, else under it for just this write where the engine
 * has one that waits.
 * entries: the count of entries of the root but . and .. and those skip
 * (if not NULL) is true for, the first one's name in first.
 */
ssize_t sc_backing_read_file(struct sc_backing *b, const char *name, char *buf, size_t cap,
			     struct stat *st);
int sc_backing_write_file(struct sc_backing *b, const char *tmp, const char *name,
			  const void *data, size_t len, mode_t mode, bool replace, char *err,
			  size_t errlen);
int sc_backing_entries(struct sc_backing *b, bool (*skip)(const char *name), char *first,
		       size_t firstlen);

/*
 * Entries by path: lstat, getxattr / setxattr (flags: XATTR_CREATE ...)
 * and readlink as those calls, and list, which calls fn with the name of
 * every entry of directory rel but . and .. (fn returns 0 to go on, else
 * that value ends the listing and is returned).
 */
int sc_backing_lstat(struct sc_backing *b, const char *rel, struct stat *st);
ssize_t sc_backing_getxattr(struct sc_backing *b, const char *rel, const char *name,
			    void *buf, size_t len);
int sc_backing_setxattr(struct sc_backing *b, const char *rel, const char *name,
			const void *val, size_t len, int flags);
ssize_t sc_backing_readlink(struct sc_backing *b, const char *rel, char *buf, size_t len);
int sc_backing_list(struct sc_backing *b, const char *rel,
		    int (*fn)(void *ctx, const char *name), void *ctx);

/*
 * Walks the tree depth first, not following symbolic links, and calls fn
 * for every entry but . and .., the config and the lock file in the root:
 * at the directory handle it is in (for sc_backing_open_file; -1 where the
 * engine has none), name its last component, rel its path, st its stat
 * and err 0 -- or err -errno with st NULL (it cannot be stat'ed), with
 * name and st (a directory that cannot be opened) or with name NULL (rel:
 * a directory that cannot be read).  A directory backing does not cross
 * into other file systems.  fn returns 0 to go on, > 0 to stop, < 0 to
 * abort.  Returns 0 (also when stopped), fn's negative value, or -errno.
 */
typedef int (*sc_backing_walk_fn)(void *ctx, int at, const char *name, const char *rel,
				  const struct stat *st, int err);
int sc_backing_walk(struct sc_backing *b, sc_backing_walk_fn fn, void *ctx);

/*
 * Files: open_file opens the regular file rel (at >= 0: name in the
 * walk's directory at, which is rel's) with flags O_RDONLY or O_RDWR
 * (-EROFS where the engine cannot write files); then stat, getxattr,
 * pread (bytes read, short at EOF), pwrite (all of buf), truncate, sync
 * and futimens on it, and close.
 */
int sc_backing_open_file(struct sc_backing *b, int at, const char *name, const char *rel,
			 int flags);
int sc_backing_fstat(struct sc_backing *b, int fd, struct stat *st);
ssize_t sc_backing_fgetxattr(struct sc_backing *b, int fd, const char *name, void *buf,
			     size_t len);
ssize_t sc_backing_pread(struct sc_backing *b, int fd, void *buf, size_t len, uint64_t off);
/*
 * len bytes at off of fd, over short reads: 0, -errno, or -ENODATA when
 * the file ends first.  *got (if got is not NULL) says how many arrived.
 */
int sc_backing_pread_full(struct sc_backing *b, int fd, void *buf, size_t len, uint64_t off,
			  size_t *got);
int sc_backing_pwrite(struct sc_backing *b, int fd, const void *buf, size_t len, uint64_t off);
int sc_backing_truncate(struct sc_backing *b, int fd, uint64_t size);
int sc_backing_sync(struct sc_backing *b, int fd);
/* fd's times as futimens(2) takes them (UTIME_OMIT keeps one); -EROFS as pwrite. */
int sc_backing_futimens(struct sc_backing *b, int fd, const struct timespec ts[2]);
void sc_backing_close_file(struct sc_backing *b, int fd);
/*
 * Everything written to the backing made durable at once (a directory:
 * syncfs of its file system), for a tool that writes many files and then
 * commits a step (rekey): cheaper than a sync per file.  0, -errno, or
 * -EOPNOTSUPP where the engine has no such call (then sync each file).
 */
int sc_backing_sync_all(struct sc_backing *b);
/* Whether open_file can open for writing (fsck --repair needs it). */
bool sc_backing_writable(const struct sc_backing *b);

/*
 * The config lock: one command at a time changes the config (passwd reads,
 * rewraps and writes it under it), held until sc_backing_close or the
 * process exits.  Returns 0, -EBUSY (another command holds it), or -errno.
 */
int sc_backing_lock_config(struct sc_backing *b);

/*
 * The one-mount lock of a backing reached by URL, which a mount through
 * the file system's own client takes too (the mount takes a directory's
 * itself, before it forks).  Held until the process exits.  Returns 0,
 * -EBUSY (another client holds it), -ENOENT (a directory: no such lock
 * here), or -errno.
 */
int sc_backing_lock_mount(struct sc_backing *b);

/*
 * For the mount: the bottom layer of spec for this kind of backing
 * (sc_stack_spec_init puts posix there; b NULL: only its kind, for a
 * plan of the stack's boundaries, from the spec string), and the root as
 * the front end's inode table takes it (an fd, or the engine's fd-shaped
 * int; its stat in st).  0 or -errno.
 */
int sc_backing_stack_bottom(const char *spec, struct sc_backing *b, struct sc_stack_spec *s);
int sc_backing_root(struct sc_backing *b, struct stat *st);

#endif /* SC_BACKING_H */
