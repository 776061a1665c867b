/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * handlers.c - the FUSE front end: low-level request handlers.
 *
 * Each handler turns one FUSE request into sc_xl_*() calls on the top of the
 * translator stack and sends exactly one reply.  The front end owns the
 * inode table (fs/fuse/inode.c) and the lookup counts the kernel holds on it, the
 * per-open struct sc_fh hung off fi->fh (handles.c), and the one place where -errno
 * becomes a positive errno: fuse_reply_err(req, -ret).  It does no backing
 * I/O of its own; that is the posix translator's job (fs/xlators/posix/posix.c).
 *
 * Lookup counts: every reply that hands the kernel an entry (lookup, mknod,
 * mkdir, symlink, link, create, and readdirplus entries other than "." and
 * "..") adds one; forget and forget_multi drop what the kernel says it
 * dropped.  If such a reply fails to reach the kernel, the count is given
 * back at once.
 *
 * Locks are not implemented (no getlk/setlk/flock): the kernel then handles
 * POSIX and BSD locks locally, which is correct for a single mount of a
 * backing directory nobody else locks through.  access(2) and chdir(2)
 * reach op_access only on a mount without default_permissions (one only
 * its user reaches, cmd_mount.c); with it the kernel checks every call
 * itself from the attributes we return.
 *
 * Threads: handlers run on libfuse's worker threads, share nothing but the
 * inode table (its own lock) and keep per-thread I/O buffers.
 *
 * What the raw request said that libfuse does not pass up (the kernel's
 * request to drop set-id bits), and what the reply must say that libfuse
 * cannot (FOPEN_PARALLEL_DIRECT_WRITES), travel in the request's context
 * (struct sc_wire_req, wire_i.h): the handlers that need it take it once
 * with sc_wire_req() and pass it on.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>	/* RENAME_EXCHANGE */
#include <stdlib.h>
#include <string.h>

#include "creds_i.h"
#include "fuse_i.h"
#include "handlers_i.h"
#include "handles_i.h"
#include "inode.h"
#include "sc_iostats.h"	/* SC_TRANSPORT_XATTR */
#include "setid_i.h"
#include "wire_i.h"
#include "xattr_ns_i.h"
#include "xlator_i.h"

/* ---- helpers ---------------------------------------------------------- */

static struct sc_fuse *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct sc_inode *inode_of(struct sc_fuse *fs, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return sc_inode_root(fs->itable);
	return (struct sc_inode *)(uintptr_t)ino;
}

static struct sc_obj *obj_of(struct sc_fuse *fs, fuse_ino_t ino)
{
	return &inode_of(fs, ino)->obj;
}

static struct sc_fh *fh_of(const struct fuse_file_info *fi)
{
	return fi ? (struct sc_fh *)(uintptr_t)fi->fh : NULL;
}

static fuse_ino_t ino_of(struct sc_fuse *fs, struct sc_inode *inode)
{
	if (inode == sc_inode_root(fs->itable))
		return FUSE_ROOT_ID;
	return (fuse_ino_t)(uintptr_t)inode;
}

struct tbuf {
	size_t	size;
	void	*data;
};

static void tbuf_free(void *p)
{
	struct tbuf *b = p;

	free(b->data);
	free(b);
}

/*
 * Returns this thread's I/O buffer, at least size bytes (page aligned), or
 * NULL.  Allocates only the first time a thread needs more than it has, so
 * the data path does not allocate per request.
 */
static void *thread_buf(struct sc_fuse *fs, size_t size)
{
	struct tbuf *b = pthread_getspecific(fs->buf_key);
	void *data;

	if (b && b->size >= size)
		return b->data;
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		if (pthread_setspecific(fs->buf_key, b)) {
			free(b);
			return NULL;
		}
	}
	if (size < fs->conf.max_io)
		size = fs->conf.max_io;
	if (posix_memalign(&data, 4096, size))
		return NULL;
	free(b->data);
	b->data = data;
	b->size = size;
	return data;
}

int sc_handlers_bufs_init(struct sc_fuse *fs)
{
	int ret = pthread_key_create(&fs->buf_key, tbuf_free);

	if (ret)
		return -ret;
	fs->buf_key_ok = true;
	return 0;
}

void sc_handlers_bufs_fini(struct sc_fuse *fs)
{
	struct tbuf *b;

	if (!fs->buf_key_ok)
		return;
	/* The main thread's buffer, if it ran requests (-s). */
	b = pthread_getspecific(fs->buf_key);
	if (b)
		tbuf_free(b);
	pthread_key_delete(fs->buf_key);
	fs->buf_key_ok = false;
}

/*
 * Hashes a new O_PATH fd, found as name in parent, into the table and
 * fills e.  Consumes fd.
 */
static int entry_from(struct sc_fuse *fs, int fd, const struct stat *st,
		      fuse_ino_t parent, const char *name,
		      struct fuse_entry_param *e, struct sc_inode **inode)
{
	int ret = sc_inode_get_named(fs->itable, fd, st, inode_of(fs, parent), name, inode);

	if (ret < 0)
		return ret;
	memset(e, 0, sizeof(*e));
	e->ino = ino_of(fs, *inode);
	e->attr = *st;
	e->attr_timeout = fs->attr_timeout;
	e->entry_timeout = fs->entry_timeout;
	return 0;
}

/* Sends an entry; if the kernel never got it, gives its lookup back. */
static void reply_entry(fuse_req_t req, struct sc_fuse *fs, struct sc_inode *inode,
			const struct fuse_entry_param *e)
{
	if (fuse_reply_entry(req, e))
		sc_inode_put(fs->itable, inode, 1);
}

/* ---- session lifecycle ------------------------------------------------- */

/* Negotiates the connection; sends no reply (libfuse answers INIT). */
static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct sc_fuse *fs = userdata;

	/* No NFS export (node ids are addresses) and no splice (the crypt layer needs the bytes). */
	conn->want &= ~(FUSE_CAP_EXPORT_SUPPORT | FUSE_CAP_SPLICE_READ |
			FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
	/* Handlers only use *at() calls on per-inode fds: lookups and readdir may run in parallel. */
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	/*
	 * No automatic invalidation on an mtime change: it races with our own
	 * writes.  write(2) fills the cached page, then sends WRITE; a GETATTR
	 * answered meanwhile shows the previous write's mtime, the kernel drops
	 * the page, and a READ served before the WRITE brings the old bytes
	 * back, where they stay (sc_concur lost updates on every stack,
	 * passthrough included: 35 of 193 runs under load, 0 of 362 without).
	 * Every change comes through this mount, and size changes still
	 * invalidate.
	 */
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	if (fs->conf.writeback) {
		if (conn->capable & FUSE_CAP_WRITEBACK_CACHE) {
			conn->want |= FUSE_CAP_WRITEBACK_CACHE;
		} else {
			/* The layers were initialised for it: stop rather than run otherwise. */
			fuse_log(FUSE_LOG_ERR, "stackcrypt: -o writeback: the kernel has no writeback cache\n");
			fuse_session_exit(fs->se);
		}
	}
	conn->max_write = fs->conf.max_io;
}

/* ---- namespace --------------------------------------------------------- */

/* Replies entry or err. */
static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sc_fuse *fs = fs_of(req);
	struct fuse_entry_param e;
	struct sc_inode *inode;
	struct stat st;
	int fd, ret;

	sc_obj_lookup_begin(obj_of(fs, parent), name);	/* for a layer's messages */
	ret = sc_xl_lookup(fs->top, obj_of(fs, parent), name, &fd, &st);
	sc_obj_lookup_begin(NULL, NULL);
	if (ret == -ENOENT && fs->entry_timeout > 0) {
		/*
		 * A negative entry (node id 0) with the entry timeout: the kernel
		 * caches the miss like a hit, so the lookups that precede
		 * create, rename-to and mkdir of a new name and repeated probes
		 * of missing names (PATH, include paths) cost no round trip.
		 * Creations through the mount drop it; creations behind our
		 * back show after entry_timeout, as changes to cached entries do.
		 * It takes no lookup count.
		 */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fs->entry_timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	if (ret == 0)
		ret = entry_from(fs, fd, &st, parent, name, &e, &inode);
	if (ret < 0) {
		fuse_reply_err(req, -ret);
		return;
	}
	reply_entry(req, fs, inode, &e);
}

/* Replies none. */
static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct sc_fuse *fs = fs_of(req);

	sc_inode_put(fs->itable, inode_of(fs, ino), nlookup);
	fuse_reply_none(req);
}

/* Replies none. */
static void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	struct sc_fuse *fs = fs_of(req);
	size_t i;

	for (i = 0; i < count; i++)
		sc_inode_put(fs->itable, inode_of(fs, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

/* Replies attr or err. */
static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);
	struct stat st;
	int ret;

	ret = sc_xl_getattr(fs->top, obj_of(fs, ino), fh_of(fi), &st);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_attr(req, &st, fs->attr_timeout);
}

/*
 * access(2), chdir(2): the object's attributes judged against the caller
 * (creds.c).  The kernel asks only on mounts without default_permissions;
 * a mask of F_OK asks only whether the object exists, which its inode in
 * the kernel already says.
 */
static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct sc_fuse *fs = fs_of(req);
	struct stat st;
	int ret;

	ret = sc_xl_getattr(fs->top, obj_of(fs, ino), NULL, &st);
	if (ret == 0)
		ret = sc_creds_access(req, &st, mask);
	fuse_reply_err(req, -ret);
}

/* The kernel's FUSE_SET_ATTR_* mask as the translators' SC_SET_* mask. */
static int set_mask(int valid)
{
	static const struct { int fuse, sc; } map[] = {
		{ FUSE_SET_ATTR_MODE,		SC_SET_MODE },
		{ FUSE_SET_ATTR_UID,		SC_SET_UID },
		{ FUSE_SET_ATTR_GID,		SC_SET_GID },
		{ FUSE_SET_ATTR_SIZE,		SC_SET_SIZE },
		{ FUSE_SET_ATTR_ATIME,		SC_SET_ATIME },
		{ FUSE_SET_ATTR_MTIME,		SC_SET_MTIME },
		{ FUSE_SET_ATTR_ATIME_NOW,	SC_SET_ATIME_NOW },
		{ FUSE_SET_ATTR_MTIME_NOW,	SC_SET_MTIME_NOW },
	};
	int m = 0;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (valid & map[i].fuse)
			m |= map[i].sc;
	return m;
}

/* Replies attr or err. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int valid, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);
	struct stat st;
	int ret;

	sc_setid_drop(req, fs, sc_wire_req(), ino, obj_of(fs, ino), fh_of(fi));
	ret = sc_xl_setattr(fs->top, obj_of(fs, ino), fh_of(fi), attr, set_mask(valid), &st);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_attr(req, &st, fs->attr_timeout);
}

/* Replies readlink or err. */
static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct sc_fuse *fs = fs_of(req);
	char buf[PATH_MAX + 1];
	ssize_t n;

	n = sc_xl_readlink(fs->top, obj_of(fs, ino), buf, sizeof(buf));
	if (n < 0) {
		fuse_reply_err(req, -n);
		return;
	}
	if ((size_t)n >= sizeof(buf)) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	buf[n] = '\0';
	fuse_reply_readlink(req, buf);
}

enum mk_kind { MK_NOD, MK_DIR, MK_SYMLINK };

/* mknod, mkdir and symlink: replies entry or err. */
static void make_node(fuse_req_t req, fuse_ino_t parent, const char *name,
		      enum mk_kind kind, mode_t mode, dev_t rdev, const char *target)
{
	struct sc_fuse *fs = fs_of(req);
	struct sc_obj *dir = obj_of(fs, parent);
	struct fuse_entry_param e;
	struct sc_inode *inode;
	struct stat st;
	bool switched;
	int fd, ret;

	ret = sc_creds_enter(fs, req, &switched);
	if (ret < 0)
		goto out_err;
	switch (kind) {
	case MK_NOD:
		ret = sc_xl_mknod(fs->top, dir, name, mode, rdev, &fd, &st);
		break;
	case MK_DIR:
		ret = sc_xl_mkdir(fs->top, dir, name, mode, &fd, &st);
		break;
	default:
		ret = sc_xl_symlink(fs->top, dir, name, target, &fd, &st);
		break;
	}
	sc_creds_leave(fs, switched);
	if (ret == 0)
		ret = entry_from(fs, fd, &st, parent, name, &e, &inode);
	if (ret < 0)
		goto out_err;
	reply_entry(req, fs, inode, &e);
	return;

out_err:
	fuse_reply_err(req, -ret);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	make_node(req, parent, name, MK_NOD, mode, rdev, NULL);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make_node(req, parent, name, MK_DIR, S_IFDIR | mode, 0, NULL);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	make_node(req, parent, name, MK_SYMLINK, S_IFLNK | 0777, 0, link);
}

/* Replies entry or err. */
static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	struct sc_fuse *fs = fs_of(req);
	struct sc_inode *inode = inode_of(fs, ino);
	struct fuse_entry_param e;
	struct stat st;
	int ret;

	ret = sc_xl_link(fs->top, &inode->obj, obj_of(fs, newparent), newname, &st);
	if (ret < 0) {
		fuse_reply_err(req, -ret);
		return;
	}
	/* The kernel holds a lookup on ino while it links it: no table lock needed. */
	sc_inode_ref(inode, 1);
	memset(&e, 0, sizeof(e));
	e.ino = ino_of(fs, inode);
	e.attr = st;
	e.attr_timeout = fs->attr_timeout;
	e.entry_timeout = fs->entry_timeout;
	reply_entry(req, fs, inode, &e);
}

/*
 * Replies err (0 on success).  The table's names follow (inode.h): they
 * are what a message names a file by.
 */
static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sc_fuse *fs = fs_of(req);
	int ret = sc_xl_unlink(fs->top, obj_of(fs, parent), name);

	if (ret == 0)
		sc_inode_unlinked(fs->itable, inode_of(fs, parent), name);
	fuse_reply_err(req, -ret);
}

/* Replies err (0 on success); the names follow, as for unlink. */
static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sc_fuse *fs = fs_of(req);
	int ret = sc_xl_rmdir(fs->top, obj_of(fs, parent), name);

	if (ret == 0)
		sc_inode_unlinked(fs->itable, inode_of(fs, parent), name);
	fuse_reply_err(req, -ret);
}

/*
 * Replies err (0 on success).  flags: RENAME_NOREPLACE, RENAME_EXCHANGE.
 * The names follow, as for unlink.
 */
static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct sc_fuse *fs = fs_of(req);
	int ret = sc_xl_rename(fs->top, obj_of(fs, parent), name, obj_of(fs, newparent),
			       newname, flags);

	if (ret == 0)
		sc_inode_moved(fs->itable, inode_of(fs, parent), name, inode_of(fs, newparent),
			       newname, flags & RENAME_EXCHANGE);
	fuse_reply_err(req, -ret);
}

/* Replies statfs or err. */
static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct sc_fuse *fs = fs_of(req);
	struct statvfs sv;
	int ret;

	ret = sc_xl_statfs(fs->top, obj_of(fs, ino), &sv);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_statfs(req, &sv);
}

/* ---- extended attributes ----------------------------------------------- */

/*
 * Only the user.* and trusted.* namespaces are served (xattr_ns.c): any
 * other name is answered EOPNOTSUPP here, before the stack.
 */

/* Replies err (0 on success). */
static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	struct sc_fuse *fs = fs_of(req);

	if (!sc_xattr_ns_served(name)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (ino == FUSE_ROOT_ID && !strcmp(name, SC_TRANSPORT_XATTR)) {
		fuse_reply_err(req, EPERM);	/* the front end's own, read-only */
		return;
	}
	fuse_reply_err(req, -sc_xl_setxattr(fs->top, obj_of(fs, ino), name, value,
					    size, flags));
}

/*
 * What getxattr and listxattr send for n (a size or -errno): err, xattr
 * for a size query (size 0), else n bytes of buf.
 */
static void reply_xattr(fuse_req_t req, ssize_t n, const void *buf, size_t size)
{
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

/* Replies xattr (size query), buf, or err. */
static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct sc_fuse *fs = fs_of(req);
	void *buf = NULL;

	if (!sc_xattr_ns_served(name)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (ino == FUSE_ROOT_ID && !strcmp(name, SC_TRANSPORT_XATTR)) {
		const char *t = sc_fuse_transport(fs);
		size_t len = strlen(t);

		reply_xattr(req, size && size < len ? -ERANGE : (ssize_t)len, t, size);
		return;
	}
	if (size) {
		buf = thread_buf(fs, size);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	reply_xattr(req, sc_xl_getxattr(fs->top, obj_of(fs, ino), name, buf, size), buf, size);
}

/* Replies xattr (size query), buf (the served names only), or err. */
static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct sc_fuse *fs = fs_of(req);
	char small[SC_XL_LIST_ON_STACK], *list;
	ssize_t n = sc_xattr_ns_list(fs->top, obj_of(fs, ino), small, sizeof(small), &list, size);

	reply_xattr(req, n, list, size);
	if (list != small)
		free(list);
}

/* Replies err (0 on success). */
static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct sc_fuse *fs = fs_of(req);

	if (!sc_xattr_ns_served(name)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	fuse_reply_err(req, -sc_xl_removexattr(fs->top, obj_of(fs, ino), name));
}

/* ---- files ------------------------------------------------------------- */

/*
 * Open flags for the stack.  O_DIRECT is dropped: the kernel already sends
 * O_DIRECT I/O straight to us, uncached, with the caller's buffers and
 * offsets; the backing file stays buffered, because our request buffers are
 * not aligned and the crypt layer does its own read-modify-write.
 */
static int stack_flags(int flags)
{
	return flags & ~O_DIRECT;
}

static void set_open_flags(struct sc_fuse *fs, struct sc_wire_req *rq,
			   struct fuse_file_info *fi)
{
	/*
	 * Keep the page cache across opens: dropping it at open races with
	 * writes in flight on other handles exactly as auto_inval_data does
	 * (see op_init), and every change to the data comes through here.
	 */
	fi->keep_cache = 1;
	/*
	 * A read-only handle has nothing to flush and locks are the kernel's:
	 * spare close(2) a round trip (the kernel ignores this with the
	 * writeback cache, where FLUSH writes dirty pages back).  A writable
	 * handle on a local backing filesystem has nothing to report at close
	 * either (ext4/XFS/btrfs/tmpfs return errors at write and fsync, never
	 * at close), so FLUSH would only cost a round trip and dup+close.
	 */
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY || fs->local_backing;
	/*
	 * O_DIRECT: the kernel takes the inode lock exclusively for every
	 * O_DIRECT write(2) of a cached-mode file, so writers of one file
	 * (databases, fio --numjobs) queue in the kernel one round trip at a
	 * time.  Opened as direct_io with FOPEN_PARALLEL_DIRECT_WRITES, their
	 * writes inside the file reach us together (the crypt layer orders
	 * writes to the same units itself); appends and writes past EOF stay
	 * exclusive, and any cached open or shared mapping of the file puts it
	 * back in cached mode (kernel io modes, 6.9+).  Only when the kernel
	 * lets direct_io files be mapped shared (FUSE_DIRECT_IO_ALLOW_MMAP,
	 * 6.6+), so that mmap(2) of an O_DIRECT handle keeps working.
	 */
	if (fs->parallel_dio && (fi->flags & O_DIRECT)) {
		fi->direct_io = 1;
		rq->parallel_writes = true;
	}
}

/*
 * The first half of open and opendir: a handle opened through the stack,
 * or NULL after replying the error.
 */
static struct sc_fh *open_handle(fuse_req_t req, struct sc_fuse *fs, fuse_ino_t ino,
				 int flags, bool dir)
{
	struct sc_fh *fh = sc_handle_new(flags);
	int ret;

	if (!fh) {
		fuse_reply_err(req, ENOMEM);
		return NULL;
	}
	ret = dir ? sc_xl_opendir(fs->top, obj_of(fs, ino), fh)
		  : sc_xl_open(fs->top, obj_of(fs, ino), fh);
	if (ret < 0) {
		free(fh);
		fuse_reply_err(req, -ret);
		return NULL;
	}
	return fh;
}

/* The second half: publishes fh in fi and replies open. */
static void reply_opened(fuse_req_t req, struct sc_fuse *fs, fuse_ino_t ino,
			 struct fuse_file_info *fi, struct sc_fh *fh, bool dir)
{
	fi->fh = (uintptr_t)fh;
	sc_handle_publish(fs, fh, obj_of(fs, ino), dir);
	if (fuse_reply_open(req, fi))	/* interrupted: no release will come */
		sc_handle_release(fs, obj_of(fs, ino), fh);
}

/* Replies open or err. */
static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sc_wire_req *rq = sc_wire_req();
	struct sc_fuse *fs = fs_of(req);
	struct sc_fh *fh = open_handle(req, fs, ino, stack_flags(fi->flags), false);

	if (!fh)
		return;
	sc_setid_drop(req, fs, rq, ino, obj_of(fs, ino), fh);
	set_open_flags(fs, rq, fi);
	reply_opened(req, fs, ino, fi, fh, false);
	rq->parallel_writes = false;
}

/* Replies create or err. */
static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct sc_obj orphan = { .fd = -1, .type = S_IFREG };
	struct sc_wire_req *rq = sc_wire_req();
	struct sc_fuse *fs = fs_of(req);
	struct fuse_entry_param e;
	struct sc_inode *inode;
	struct sc_fh *fh;
	struct stat st;
	bool switched;
	int fd, ret;

	fh = sc_handle_new(stack_flags(fi->flags));
	if (!fh) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = sc_creds_enter(fs, req, &switched);
	if (ret < 0)
		goto err_free_fh;
	ret = sc_xl_create(fs->top, obj_of(fs, parent), name, mode, fh, &fd, &st);
	sc_creds_leave(fs, switched);
	if (ret < 0)
		goto err_free_fh;
	ret = entry_from(fs, fd, &st, parent, name, &e, &inode);
	if (ret < 0)
		goto err_release;
	if (rq->kill_suidgid) {
		/* An existing file opened with O_TRUNC: clear, then show the new mode. */
		sc_setid_drop(req, fs, rq, e.ino, &inode->obj, fh);
		sc_xl_getattr(fs->top, &inode->obj, fh, &e.attr);
	}
	fi->fh = (uintptr_t)fh;
	set_open_flags(fs, rq, fi);
	sc_handle_publish(fs, fh, &inode->obj, false);
	ret = fuse_reply_create(req, &e, fi);
	rq->parallel_writes = false;
	if (ret) {
		sc_handle_release(fs, &inode->obj, fh);
		sc_inode_put(fs->itable, inode, 1);
	}
	return;

err_release:
	/*
	 * Out of memory for the inode entry (its fd is already closed): release
	 * against an object with no layer state, so each layer frees what it
	 * hung off fh and nothing else.
	 */
	sc_xl_release(fs->top, &orphan, fh);
err_free_fh:
	free(fh);
	fuse_reply_err(req, -ret);
}

/* Replies buf or err. */
static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);
	void *buf = thread_buf(fs, size);
	ssize_t n;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = sc_xl_read(fs->top, obj_of(fs, ino), fh_of(fi), buf, size, off);
	if (n < 0)
		fuse_reply_err(req, -n);
	else
		fuse_reply_buf(req, buf, n);
}

/* Replies write with n, or err for n < 0: what write and copy_file_range send. */
static void reply_written(fuse_req_t req, ssize_t n)
{
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

/* Replies write or err. */
static void op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in_buf,
			 off_t off, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);
	size_t size = fuse_buf_size(in_buf);
	const void *data;
	ssize_t n;

	if (in_buf->count == 1 && !(in_buf->buf[0].flags & FUSE_BUF_IS_FD)) {
		data = in_buf->buf[0].mem;	/* already in memory: no copy */
	} else {
		struct fuse_bufvec dst = FUSE_BUFVEC_INIT(size);
		void *buf = thread_buf(fs, size);

		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		dst.buf[0].mem = buf;
		n = fuse_buf_copy(&dst, in_buf, 0);
		if (n < 0) {
			fuse_reply_err(req, -n);
			return;
		}
		size = n;
		data = buf;
	}
	sc_setid_drop(req, fs, sc_wire_req(), ino, obj_of(fs, ino), fh_of(fi));
	reply_written(req, sc_xl_write(fs->top, obj_of(fs, ino), fh_of(fi), data, size, off));
}

/* Replies err (0 on success). */
static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_flush(fs->top, obj_of(fs, ino), fh_of(fi)));
}

/*
 * release and releasedir: replies err (0 on success); frees the struct sc_fh
 * after the layers' ->release or ->releasedir (handles.c knows which).
 */
static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_handle_release(fs, obj_of(fs, ino), fh_of(fi)));
}

/* Replies err (0 on success). */
static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_fsync(fs->top, obj_of(fs, ino), fh_of(fi), datasync));
}

/* Replies err (0 on success). */
static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
			 off_t len, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_fallocate(fs->top, obj_of(fs, ino), fh_of(fi),
					     mode, off, len));
}

/* Replies lseek or err (SEEK_DATA/SEEK_HOLE; the kernel does SET/CUR/END). */
static void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);
	off_t r;

	r = sc_xl_lseek(fs->top, obj_of(fs, ino), fh_of(fi), off, whence);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_lseek(req, r);
}

/* Replies write (bytes copied) or err. */
static void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			       struct fuse_file_info *fi_in, fuse_ino_t ino_out,
			       off_t off_out, struct fuse_file_info *fi_out,
			       size_t len, int flags)
{
	struct sc_fuse *fs = fs_of(req);

	reply_written(req, sc_xl_copy_file_range(fs->top, obj_of(fs, ino_in), fh_of(fi_in), off_in,
						 obj_of(fs, ino_out), fh_of(fi_out), off_out,
						 len, flags));
}

/* ---- directories ------------------------------------------------------- */

/* Replies open or err. */
/*
 * Replies opendir or err.  With fs->cache_dirs the kernel keeps the
 * listing it reads in the directory's page cache and serves the next
 * opendir's readdirs from it, until a name in the directory changes through
 * the mount (its i_version) or a refresh of its attributes shows a new
 * mtime: GNU rm lists each directory twice, find and rm -rf one after the
 * other read every directory once more (docs/performance.md 19).
 */
static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);
	struct sc_fh *fh = open_handle(req, fs, ino, fi->flags, true);

	if (!fh)
		return;
	if (fs->cache_dirs) {
		fi->cache_readdir = 1;
		fi->keep_cache = 1;
	}
	reply_opened(req, fs, ino, fi, fh, true);
}

struct rd_ctx {
	fuse_req_t		req;
	struct sc_fuse		*fs;
	struct sc_obj		*dir;
	fuse_ino_t		ino;		/* dir's */
	char			*buf;
	size_t			size;
	size_t			pos;
	bool			plus;
	int			err;
};

static bool is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* ->readdir callback: returns 1 when the reply buffer is full (entry not taken). */
static int rd_fill(void *c, const struct sc_dirent *de)
{
	struct rd_ctx *ctx = c;
	size_t room = ctx->size - ctx->pos, len;
	struct sc_inode *inode = NULL;
	struct fuse_entry_param e;
	struct stat st;
	int fd, ret;

	if (!ctx->plus) {
		memset(&st, 0, sizeof(st));
		st.st_ino = de->ino;
		st.st_mode = de->type;
		len = fuse_add_direntry(ctx->req, ctx->buf + ctx->pos, room, de->name,
					&st, de->next_off);
		if (len > room)
			return 1;
		ctx->pos += len;
		return 0;
	}

	memset(&e, 0, sizeof(e));
	if (is_dot_or_dotdot(de->name)) {
		/* ino 0: the kernel takes no lookup and makes no dentry for these. */
		e.attr.st_ino = de->ino;
		e.attr.st_mode = de->type;
	} else {
		sc_obj_lookup_begin(ctx->dir, de->name);
		ret = sc_xl_lookup(ctx->fs->top, ctx->dir, de->name, &fd, &st);
		sc_obj_lookup_begin(NULL, NULL);
		if (ret == -ENOENT)
			return 0;	/* removed since the stream saw it: skip */
		if (ret == 0)
			ret = entry_from(ctx->fs, fd, &st, ctx->ino, de->name, &e, &inode);
		if (ret < 0) {
			ctx->err = ret;
			return 1;
		}
	}
	len = fuse_add_direntry_plus(ctx->req, ctx->buf + ctx->pos, room, de->name,
				     &e, de->next_off);
	if (len > room) {
		if (inode)
			sc_inode_put(ctx->fs->itable, inode, 1);
		return 1;
	}
	ctx->pos += len;
	return 0;
}

/* readdir and readdirplus: replies buf or err. */
static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct sc_fuse *fs = fs_of(req);
	struct rd_ctx ctx = {
		.req	= req,
		.fs	= fs,
		.dir	= obj_of(fs, ino),
		.ino	= ino,
		.size	= size,
		.plus	= plus,
	};
	int ret;

	ctx.buf = thread_buf(fs, size);
	if (!ctx.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = sc_xl_readdir(fs->top, ctx.dir, fh_of(fi), off, rd_fill, &ctx);
	if (ret == 0)
		ret = ctx.err;
	/* Entries already added carry lookups: send them, the error recurs next call. */
	if (ret < 0 && ctx.pos == 0) {
		fuse_reply_err(req, -ret);
		return;
	}
	/*
	 * A sent request always gets its reply read by the kernel unless the
	 * connection is gone, so the lookups added above are not given back
	 * on failure here (there is nobody left to forget them to).
	 */
	fuse_reply_buf(req, ctx.buf, ctx.pos);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

/* Replies err (0 on success). */
static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_fsyncdir(fs->top, obj_of(fs, ino), fh_of(fi), datasync));
}

const struct fuse_lowlevel_ops sc_fuse_ops = {
	.init			= op_init,
	.lookup			= op_lookup,
	.forget			= op_forget,
	.forget_multi		= op_forget_multi,
	.getattr		= op_getattr,
	.setattr		= op_setattr,
	.access			= op_access,
	.readlink		= op_readlink,
	.mknod			= op_mknod,
	.mkdir			= op_mkdir,
	.unlink			= op_unlink,
	.rmdir			= op_rmdir,
	.symlink		= op_symlink,
	.rename			= op_rename,
	.link			= op_link,
	.open			= op_open,
	.read			= op_read,
	.write_buf		= op_write_buf,
	.flush			= op_flush,
	.release		= op_release,
	.fsync			= op_fsync,
	.opendir		= op_opendir,
	.readdir		= op_readdir,
	.readdirplus		= op_readdirplus,
	.releasedir		= op_release,
	.fsyncdir		= op_fsyncdir,
	.statfs			= op_statfs,
	.setxattr		= op_setxattr,
	.getxattr		= op_getxattr,
	.listxattr		= op_listxattr,
	.removexattr		= op_removexattr,
	.create			= op_create,
	.fallocate		= op_fallocate,
	.lseek			= op_lseek,
	.copy_file_range	= op_copy_file_range,
};
