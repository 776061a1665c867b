/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_xlator.h - the translator interface.
 *
 * A request flows one way: the FUSE front end (fs/fuse/handlers.c) owns the inode
 * table and the replies, and calls the top translator of a stack; each
 * translator calls only the one below it through the sc_xl_*() forwarders at
 * the end of this file.  The bottom translator (fs/xlators/posix/posix.c)
 * does all backing I/O.  Stacks are built by the stack builder
 * (fs/xlators/stack.c), the only code that knows the concrete layers:
 *
 *     passthrough:  front end -> posix
 *     crypt:        front end -> crypt -> posix
 *     crypt, names encrypted (init --encrypt-names):
 *                   front end -> names -> crypt -> posix
 *
 * and `-o stats` puts an io-stats layer at any boundary of these.
 *
 * A translator fills in only the operations it intercepts (as sshfs's
 * cache_wrap does); a NULL operation is forwarded to the layer below by the
 * sc_xl_*() wrappers, so adding a layer never changes the front end.
 *
 * Conventions: every operation returns 0 (or a byte count / offset) or
 * -errno.  Results go through out-parameters.  The sign flips once, at
 * fuse_reply_err() in the front end.
 *
 * Objects:
 *  - struct sc_obj is an inode as translators see it: an O_PATH fd on the
 *    backing object plus one private slot per layer (indexed by xl->id) for
 *    state that lives while the kernel holds a lookup on the inode (the crypt
 *    translator keeps its per-file key and inode lock there).  The front end
 *    embeds it in its inode table entry and calls ->forget on every layer
 *    (top to bottom) before freeing it.
 *  - struct sc_fh is an open file or directory: the backing fd plus one
 *    private slot per layer.  ->release / ->releasedir are forwarded like
 *    any operation; the posix layer closes the fd.
 */
#ifndef SC_XLATOR_H
#define SC_XLATOR_H

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

#define SC_XL_MAX 6		/* layers in one stack, at most */

struct sc_obj {
	int		fd;		/* O_PATH fd on the backing object, or -1 (see ->adopt) */
	mode_t		type;		/* S_IFMT bits, fixed for life */
	bool		is_root;	/* the stack's root directory */
	bool		in_table;	/* the front end's (sc_obj_path can name it), not a layer's own */
	void		*priv[SC_XL_MAX];
};

struct sc_fh {
	int		fd;		/* backing fd (file: O_RDONLY/O_RDWR..., dir: O_RDONLY|O_DIRECTORY) */
	int		flags;		/* open(2) flags the user asked for */
	void		*priv[SC_XL_MAX];
};

/* One directory entry handed up by ->readdir. */
struct sc_dirent {
	const char	*name;
	ino_t		ino;
	mode_t		type;		/* S_IFMT bits, 0 if unknown */
	off_t		next_off;	/* telldir() cookie of the entry after this one */
};

/*
 * Mount-wide settings a translator may need to see or adjust in ->init.
 * The front end fills it from the command line before building the stack.
 */
struct sc_xl_conf {
	bool		writeback;	/* FUSE writeback cache enabled */
	uint32_t	max_io;		/* largest read/write request, bytes */
	long		max_path_fds;	/* O_PATH fds kept for files; -1 = half RLIMIT_NOFILE */
};

/*
 * Which attributes ->setattr changes: the translators' own mask, so no
 * layer needs libfuse.  The front end maps the kernel's mask to it once,
 * in its setattr handler.  *_NOW: set that time to the current time
 * (attr's value is ignored).  ctime is never set: it moves by itself.
 */
#define SC_SET_MODE		(1 << 0)
#define SC_SET_UID		(1 << 1)
#define SC_SET_GID		(1 << 2)
#define SC_SET_SIZE		(1 << 3)
#define SC_SET_ATIME		(1 << 4)
#define SC_SET_MTIME		(1 << 5)
#define SC_SET_ATIME_NOW	(1 << 6)
#define SC_SET_MTIME_NOW	(1 << 7)

/*
 * Logging for translators: one line per event, ending in a newline.  It
 * goes to stderr unless the program routes it elsewhere with
 * sc_log_set_func() (the mount sends it to libfuse's log, which is stderr
 * in the foreground and syslog or a file once detached: docs/usage.md,
 * Messages).  A line about a file names it with sc_obj_name().  Set the function before
 * any translator runs; it is not changed while requests are served.
 */
enum sc_log_level {
	SC_LOG_ERR,
	SC_LOG_WARNING,
	SC_LOG_INFO,
	SC_LOG_DEBUG,
};

typedef void (*sc_log_func)(enum sc_log_level level, const char *fmt, va_list ap);

void sc_log(enum sc_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sc_log_set_func(sc_log_func func);	/* NULL: back to stderr */

/*
 * For a line that a failing connection would repeat at every call: true
 * at most once a second per *last (the second of its last line, 0 at
 * first), so a layer logs the first failure and then one a second.
 */
bool sc_log_due(atomic_long *last);

/*
 * A layer's per-thread scratch buffer: declare it `static __thread struct
 * sc_tbuf`, and sc_tbuf_get() gives it at least need bytes (old contents
 * not kept; grown in 64 KiB steps, so a growing request size reallocates
 * rarely), or NULL.  FUSE workers come and go (max_idle_threads): a
 * thread's buffers are freed when it ends, wiped first, since the crypt
 * layers keep plaintext in them.  Held only within one call of the layer.
 */
struct sc_tbuf {
	uint8_t		*p;
	size_t		cap;
	struct sc_tbuf	*next;		/* the thread's other buffers */
	bool		listed;		/* on the thread's list, to be freed at its end */
};

uint8_t *sc_tbuf_get(struct sc_tbuf *b, size_t need);

/*
 * Naming an object in a message: its path in the mount, which only the
 * front end knows (it keeps the name each inode was found by).  The front
 * end sets the function once before serving and unsets it (NULL) when it
 * is freed; func(ctx, obj, buf, len) returns 0 with the path in buf, or
 * -errno.  For error paths only: it takes the inode table's lock.
 */
typedef int (*sc_obj_path_func)(void *ctx, const struct sc_obj *obj, char *buf, size_t len);
void sc_obj_path_set_func(sc_obj_path_func func, void *ctx);

/*
 * The path of obj in the mount (absolute: the mount point and the names
 * below it) in buf.  Returns 0, or -ENOENT when no path is known: a
 * layer's own obj, one whose name was unlinked, no front end (a test).
 */
int sc_obj_path(const struct sc_obj *obj, char *buf, size_t len);

struct sc_xl;
struct sc_jrnl;

/*
 * obj as a message names it: its path in the mount, or, when none is
 * known, "backing inode N (no path known)" with N asked of below.  The
 * text is the calling thread's, valid until its next call: one per
 * message.
 */
const char *sc_obj_name(struct sc_xl *below, struct sc_obj *obj);

/* sc_obj_name with the backing inode number known (no I/O: ->adopt). */
const char *sc_obj_name_ino(struct sc_obj *obj, unsigned long long ino);

/*
 * The same for the object called name in dir, which a layer reached on
 * its own (no obj of the front end's): "DIR/NAME" when dir's path is
 * known, else "backing inode INO (no path known)".
 */
const char *sc_obj_child_name(struct sc_obj *dir, const char *name, unsigned long long ino);

/*
 * The front end, around its calls of ->lookup: this thread looks up name
 * (the name in the mount) in dir; (NULL, NULL) when done.  A layer that
 * works on the object being looked up before it has an obj of the front
 * end's names it with sc_obj_lookup_name(below, its own obj): "DIR/NAME",
 * or as sc_obj_name when no lookup is under way or dir's path is unknown.
 */
void sc_obj_lookup_begin(struct sc_obj *dir, const char *name);
const char *sc_obj_lookup_name(struct sc_xl *below, struct sc_obj *obj);

/*
 * Integrity volumes (docs/format.md 11.4): the place of the entry whose
 * regular file a layer above makes, opens, resizes or moves in this
 * thread (its directory's 16-byte nonce and its encoded name), for the
 * data layer below, which binds the file's header to it.  The layer that
 * knows places sets it around its call below and clears it (NULL) after;
 * a rename sets the place a file leaves (at) and the one it reaches (to).
 * internal: a file of the layers themselves (sc.nonce, side files), whose
 * contents bind themselves.  Two pointer stores per call; nothing is
 * copied, so the pointed-to bytes must live until the call returns.
 */
struct sc_xl_place {
	const uint8_t	*nonce;		/* 16 bytes */
	const char	*enc;
	size_t		enc_len;
	bool		internal;
};
void sc_xl_place_set(const struct sc_xl_place *at, const struct sc_xl_place *to);
/* This thread's places, or NULL. */
const struct sc_xl_place *sc_xl_place_at(void);
const struct sc_xl_place *sc_xl_place_to(void);

struct sc_xl;

struct sc_xl_ops {
	const char *name;

	/* Lifecycle: init after the stack is built, destroy at unmount. */
	int  (*init)(struct sc_xl *xl, struct sc_obj *root, struct sc_xl_conf *conf);
	void (*destroy)(struct sc_xl *xl);
	/* Called on every layer, not forwarded, before an inode is freed. */
	void (*forget)(struct sc_xl *xl, struct sc_obj *obj);
	/*
	 * Called on every layer, not forwarded, when a new inode enters the
	 * front end's table, before any other thread can see it.  The layer
	 * that owns obj->fd may trade it for another way to reach the object
	 * (the posix layer: a file handle) and set obj->fd to -1.
	 */
	void (*adopt)(struct sc_xl *xl, struct sc_obj *obj, const struct stat *st);
	/* For an obj with fd -1: is the O_PATH fd the very same object? */
	bool (*same)(struct sc_xl *xl, const struct sc_obj *obj, int fd);
	/*
	 * Gives back an O_PATH fd that ->lookup, ->create, ->mknod, ->mkdir or
	 * ->symlink handed up but that will not become an inode (a layer above
	 * failed after the call below it succeeded).  Forwarded like an
	 * operation: the layer that opened the fd closes it.
	 */
	void (*drop_fd)(struct sc_xl *xl, int fd);
	/*
	 * A property of the stack, asked once by the front end before the
	 * stack starts (root: its root object): true when closing a file can
	 * report nothing (the backing is a local kernel file system that never
	 * fails close(2): ext4, XFS, ...), so the kernel need send no FLUSH.
	 * Forwarded like an operation; call through sc_xl_close_is_silent,
	 * which answers false when no layer implements it (gluster, or any
	 * future bottom that cannot tell).  A layer with work of its own at
	 * ->flush implements it and answers false.
	 */
	bool (*close_is_silent)(struct sc_xl *xl, struct sc_obj *root);
	/*
	 * A property of the backing, asked once by a layer at its ->init
	 * (root: the stack's root): true when a change of metadata (an entry
	 * made, an xattr set) is never lost by a crash while a later one
	 * survives -- a local file system with a journal that commits in
	 * order (ext4, XFS, btrfs, f2fs; tmpfs keeps nothing).  The names
	 * layer then lets a directory's nonce file reach the disk later and
	 * keeps a copy in the directory's xattr (docs/format.md 9.2).
	 * Forwarded like close_is_silent; call through sc_xl_meta_ordered,
	 * which answers false when no layer implements it (GlusterFS, whose
	 * bricks order nothing between them; CephFS; anything unknown).
	 */
	bool (*meta_ordered)(struct sc_xl *xl, struct sc_obj *root);
	/*
	 * The volume's crash journal (sc_journal.h), kept by the data layer of
	 * an integrity volume, for a layer above that refuses what an unclean
	 * stop can leave (the names layer's listing records, docs/format.md
	 * 11.7): it keeps the journal's unclean mark as the data layer does
	 * for its files.  Forwarded like close_is_silent; call through
	 * sc_xl_journal, which answers NULL when no layer keeps one.
	 */
	struct sc_jrnl *(*journal)(struct sc_xl *xl);

	/* Namespace.  On success *fd_out is a new O_PATH fd on the child. */
	int (*lookup)(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      int *fd_out, struct stat *st);
	int (*getattr)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		       struct stat *st);
	/* valid is an SC_SET_* mask; fh may be NULL. */
	int (*setattr)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		       const struct stat *attr, int valid, struct stat *st);
	int (*mknod)(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		     mode_t mode, dev_t rdev, int *fd_out, struct stat *st);
	int (*mkdir)(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		     mode_t mode, int *fd_out, struct stat *st);
	int (*symlink)(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       const char *target, int *fd_out, struct stat *st);
	int (*link)(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		    const char *newname, struct stat *st);
	int (*unlink)(struct sc_xl *xl, struct sc_obj *dir, const char *name);
	int (*rmdir)(struct sc_xl *xl, struct sc_obj *dir, const char *name);
	int (*rename)(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      struct sc_obj *newdir, const char *newname, unsigned int flags);
	/* Returns the target length (not NUL-terminated) or -errno. */
	ssize_t (*readlink)(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size);
	int (*statfs)(struct sc_xl *xl, struct sc_obj *obj, struct statvfs *sv);
	/*
	 * Makes every write to the file system of obj durable (syncfs(2)).
	 * obj NULL asks only whether the layer can: 0, or -EOPNOTSUPP.
	 */
	int (*syncfs)(struct sc_xl *xl, struct sc_obj *obj);

	/* Extended attributes.  Size 0 asks for the needed size, as in libc. */
	ssize_t (*getxattr)(struct sc_xl *xl, struct sc_obj *obj, const char *name,
			    void *buf, size_t size);
	ssize_t (*listxattr)(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size);
	int (*setxattr)(struct sc_xl *xl, struct sc_obj *obj, const char *name,
			const void *value, size_t size, int flags);
	int (*removexattr)(struct sc_xl *xl, struct sc_obj *obj, const char *name);

	/* Files.  ->open/->create fill fh->fd; flags are the user's. */
	int (*open)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh);
	int (*create)(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      mode_t mode, struct sc_fh *fh, int *fd_out, struct stat *st);
	ssize_t (*read)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			void *buf, size_t size, off_t off);
	ssize_t (*write)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 const void *buf, size_t size, off_t off);
	int (*flush)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh);
	int (*fsync)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int datasync);
	int (*release)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh);
	int (*fallocate)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 int mode, off_t off, off_t len);
	off_t (*lseek)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		       off_t off, int whence);
	ssize_t (*copy_file_range)(struct sc_xl *xl,
				   struct sc_obj *obj_in, struct sc_fh *fh_in, off_t off_in,
				   struct sc_obj *obj_out, struct sc_fh *fh_out, off_t off_out,
				   size_t len, int flags);
	/*
	 * Asks that ->write calls through fh that fall inside [0, len) become
	 * copies into a shared mapping of the file: no system call and no
	 * inode lock per write, for a small file rewritten in place at a high
	 * rate (the gcm layer's crash journal).  The file's size becomes at
	 * least len.  The writes keep their meaning (the page cache is the
	 * same); a fault in the mapping (an I/O error, a full filesystem, the
	 * file cut behind our back) is caught and the write is made again
	 * with a system call, which then reports the error.  0 or -errno;
	 * -EOPNOTSUPP (gluster, or no layer that can) leaves writes as they
	 * were, which is always correct.  The mapping goes at ->release.
	 * Call through sc_xl_map, which answers -EOPNOTSUPP when no layer
	 * implements it.
	 */
	int (*map)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, uint64_t len);

	/* Directories. */
	int (*opendir)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh);
	/*
	 * Positions the stream at off (0 = start, else a next_off cookie) and
	 * calls fill() for each entry until it returns non-zero (buffer full:
	 * that entry was not taken and will be returned again next time) or the
	 * directory ends.  Returns 0 or -errno.
	 */
	int (*readdir)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off,
		       int (*fill)(void *ctx, const struct sc_dirent *de), void *ctx);
	int (*fsyncdir)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int datasync);
	int (*releasedir)(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh);
};

struct sc_xl {
	const struct sc_xl_ops	*ops;
	struct sc_xl		*below;	/* NULL for the bottom (posix) layer */
	unsigned int		id;	/* index into sc_obj.priv / sc_fh.priv */
	void			*priv;	/* the layer's mount-wide state */
};

/* Finds the first layer at or below xl that implements op. */
#define SC_XL_FIND(xl, op) ({				\
	struct sc_xl *_x = (xl);			\
	while (!_x->ops->op)				\
		_x = _x->below;				\
	_x; })

/* Forward a call to the first layer at or below xl that implements it. */
#define SC_XL_CALL(xl, op, ...) ({			\
	struct sc_xl *_y = SC_XL_FIND(xl, op);		\
	_y->ops->op(_y, ##__VA_ARGS__); })

#define sc_xl_same(xl, ...)		SC_XL_CALL(xl, same, __VA_ARGS__)
#define sc_xl_drop_fd(xl, ...)		SC_XL_CALL(xl, drop_fd, __VA_ARGS__)
#define sc_xl_lookup(xl, ...)		SC_XL_CALL(xl, lookup, __VA_ARGS__)
#define sc_xl_getattr(xl, ...)		SC_XL_CALL(xl, getattr, __VA_ARGS__)
#define sc_xl_setattr(xl, ...)		SC_XL_CALL(xl, setattr, __VA_ARGS__)
#define sc_xl_mknod(xl, ...)		SC_XL_CALL(xl, mknod, __VA_ARGS__)
#define sc_xl_mkdir(xl, ...)		SC_XL_CALL(xl, mkdir, __VA_ARGS__)
#define sc_xl_symlink(xl, ...)		SC_XL_CALL(xl, symlink, __VA_ARGS__)
#define sc_xl_link(xl, ...)		SC_XL_CALL(xl, link, __VA_ARGS__)
#define sc_xl_unlink(xl, ...)		SC_XL_CALL(xl, unlink, __VA_ARGS__)
#define sc_xl_rmdir(xl, ...)		SC_XL_CALL(xl, rmdir, __VA_ARGS__)
#define sc_xl_rename(xl, ...)		SC_XL_CALL(xl, rename, __VA_ARGS__)
#define sc_xl_readlink(xl, ...)		SC_XL_CALL(xl, readlink, __VA_ARGS__)
#define sc_xl_statfs(xl, ...)		SC_XL_CALL(xl, statfs, __VA_ARGS__)
#define sc_xl_syncfs(xl, ...)		SC_XL_CALL(xl, syncfs, __VA_ARGS__)
#define sc_xl_getxattr(xl, ...)		SC_XL_CALL(xl, getxattr, __VA_ARGS__)
#define sc_xl_listxattr(xl, ...)	SC_XL_CALL(xl, listxattr, __VA_ARGS__)
#define sc_xl_setxattr(xl, ...)		SC_XL_CALL(xl, setxattr, __VA_ARGS__)
#define sc_xl_removexattr(xl, ...)	SC_XL_CALL(xl, removexattr, __VA_ARGS__)
#define sc_xl_open(xl, ...)		SC_XL_CALL(xl, open, __VA_ARGS__)
#define sc_xl_create(xl, ...)		SC_XL_CALL(xl, create, __VA_ARGS__)
#define sc_xl_read(xl, ...)		SC_XL_CALL(xl, read, __VA_ARGS__)
#define sc_xl_write(xl, ...)		SC_XL_CALL(xl, write, __VA_ARGS__)
#define sc_xl_flush(xl, ...)		SC_XL_CALL(xl, flush, __VA_ARGS__)
#define sc_xl_fsync(xl, ...)		SC_XL_CALL(xl, fsync, __VA_ARGS__)
#define sc_xl_release(xl, ...)		SC_XL_CALL(xl, release, __VA_ARGS__)
#define sc_xl_fallocate(xl, ...)	SC_XL_CALL(xl, fallocate, __VA_ARGS__)
#define sc_xl_lseek(xl, ...)		SC_XL_CALL(xl, lseek, __VA_ARGS__)
#define sc_xl_copy_file_range(xl, ...)	SC_XL_CALL(xl, copy_file_range, __VA_ARGS__)
#define sc_xl_opendir(xl, ...)		SC_XL_CALL(xl, opendir, __VA_ARGS__)
#define sc_xl_readdir(xl, ...)		SC_XL_CALL(xl, readdir, __VA_ARGS__)
#define sc_xl_fsyncdir(xl, ...)		SC_XL_CALL(xl, fsyncdir, __VA_ARGS__)
#define sc_xl_releasedir(xl, ...)	SC_XL_CALL(xl, releasedir, __VA_ARGS__)

/* ->map of the first layer at or below xl that has one, else -EOPNOTSUPP. */
int sc_xl_map(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, uint64_t len);

/* ->close_is_silent of the first layer at or below xl that has one, else false. */
bool sc_xl_close_is_silent(struct sc_xl *xl, struct sc_obj *root);
/* ->meta_ordered of the first layer at or below xl that has one, else false. */
bool sc_xl_meta_ordered(struct sc_xl *xl, struct sc_obj *root);
/* ->journal of the first layer at or below xl that has one, else NULL. */
struct sc_jrnl *sc_xl_journal(struct sc_xl *xl);

/*
 * A ->copy_file_range for a layer that copies no bytes between files
 * itself: -EOPNOTSUPP, on which the kernel copies through read and write.
 */
ssize_t sc_xl_no_copy_file_range(struct sc_xl *xl, struct sc_obj *obj_in, struct sc_fh *fh_in,
				 off_t off_in, struct sc_obj *obj_out, struct sc_fh *fh_out,
				 off_t off_out, size_t len, int flags);

/*
 * Frees one layer (calls its ->destroy).  The layers' constructors are
 * not declared here: the stack builder (include/sc_stack.h) makes them.
 */
void sc_xl_free(struct sc_xl *xl);

#endif /* SC_XLATOR_H */
