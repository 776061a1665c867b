/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse_ll.c - the FUSE front end: low-level request handlers.
 *
 * Each handler turns one FUSE request into sc_xl_*() calls on the top of the
 * translator stack and sends exactly one reply.  The front end owns the
 * inode table (fs/fuse/inode.c) and the lookup counts the kernel holds on it, the
 * per-open struct sc_fh hung off fi->fh, and the one place where -errno
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
 * backing directory nobody else locks through.  access() needs no handler
 * either: we always mount with default_permissions, so the kernel checks
 * permissions itself from the attributes we return.
 *
 * Threads: handlers run on libfuse's worker threads, share nothing but the
 * inode table (its own lock) and keep per-thread I/O buffers.
 *
 * The /dev/fuse fd is wrapped (sc_fuse_io) only to negotiate
 * FUSE_HANDLE_KILLPRIV_V2, which libfuse 3.14 does not know; see below.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/fuse.h>		/* wire structs, for the /dev/fuse hooks only */
#include <linux/magic.h>

#include "fuse_i.h"
#include "inode.h"
#include "xlator_i.h"

#define SC_MAX_GROUPS	64	/* supplementary groups carried into creates */

/* Linux 6.6 (protocol 7.39); Debian 12's <linux/fuse.h> predates it. */
#define SC_FUSE_DIRECT_IO_ALLOW_MMAP	(1ULL << 36)

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

/*
 * A file or directory handle as the front end allocates it.  Once the
 * kernel has it (open/create/opendir replied) it is on fs->open_fhs until
 * its release: at unmount the kernel may drop RELEASE/RELEASEDIR requests
 * still queued in the background, and sc_fuse_teardown() releases what is
 * left through the layers so nothing leaks (valgrind memcheck caught an
 * opendir handle lost that way).  Before publishing, plain free() of the
 * struct sc_fh is enough: it is the first member.
 */
struct fe_fh {
	struct sc_fh	fh;
	struct fe_fh	*prev, *next;
	struct sc_obj	*obj;
	bool		dir;
};

static struct sc_fh *fh_new(int flags)
{
	struct fe_fh *fe = calloc(1, sizeof(*fe));

	if (!fe)
		return NULL;
	fe->fh.fd = -1;
	fe->fh.flags = flags;
	return &fe->fh;
}

/* Before the reply that hands fh to the kernel. */
static void fh_publish(struct sc_fuse *fs, struct sc_fh *fh, struct sc_obj *obj, bool dir)
{
	struct fe_fh *fe = (struct fe_fh *)fh;

	fe->obj = obj;
	fe->dir = dir;
	pthread_mutex_lock(&fs->fh_lock);
	fe->prev = NULL;
	fe->next = fs->open_fhs;
	if (fe->next)
		fe->next->prev = fe;
	fs->open_fhs = fe;
	pthread_mutex_unlock(&fs->fh_lock);
}

/* Takes a published fh off the list (release, or a reply the kernel lost). */
static void fh_unpublish(struct sc_fuse *fs, struct sc_fh *fh)
{
	struct fe_fh *fe = (struct fe_fh *)fh;

	pthread_mutex_lock(&fs->fh_lock);
	if (fe->prev)
		fe->prev->next = fe->next;
	else
		fs->open_fhs = fe->next;
	if (fe->next)
		fe->next->prev = fe->prev;
	pthread_mutex_unlock(&fs->fh_lock);
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

/*
 * New objects belong to the caller, not to the root daemon: switch this
 * thread's filesystem uid/gid and groups (per-thread syscalls; glibc's
 * setgroups() would change every thread, hence the raw syscall) around the
 * call, so the backing filesystem applies ownership, setgid directories and
 * ACL inheritance itself.  Root callers, the common case, cost nothing.
 */
/*
 * The caller's supplementary groups, from the "Groups:" line of
 * /proc/TID/status.  Ours, not fuse_req_getgroups(): libfuse 3.14's scans
 * a buffer it never NUL-terminates (AddressSanitizer's strict string checks
 * catch the over-read).  Returns the count or -errno.
 */
static int caller_groups(pid_t tid, gid_t *list, int size)
{
	char path[64], buf[16384], *s, *end;
	ssize_t len;
	int fd, n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -errno;
	buf[len] = '\0';
	s = strstr(buf, "\nGroups:");
	if (!s)
		return -EIO;
	s += strlen("\nGroups:");
	while (n < size) {
		unsigned long g = strtoul(s, &end, 10);

		if (end == s)
			break;
		list[n++] = (gid_t)g;
		s = end;
	}
	return n;
}

static int creds_enter(struct sc_fuse *fs, fuse_req_t req, bool *switched)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	gid_t groups[SC_MAX_GROUPS];
	int n;

	*switched = false;
	if (!fs->switch_creds || (ctx->uid == 0 && ctx->gid == 0))
		return 0;
	n = caller_groups(ctx->pid, groups, SC_MAX_GROUPS);
	if (n < 0) {
		groups[0] = ctx->gid;
		n = 1;
	}
	if (syscall(SYS_setgroups, (size_t)n, groups) < 0)
		return -errno;
	setfsgid(ctx->gid);
	setfsuid(ctx->uid);
	*switched = true;
	return 0;
}

static void creds_leave(struct sc_fuse *fs, bool switched)
{
	if (!switched)
		return;
	setfsuid(0);
	setfsgid(0);
	syscall(SYS_setgroups, (size_t)fs->ngroups, fs->groups);
}

/* Hashes a new O_PATH fd into the table and fills e.  Consumes fd. */
static int entry_from(struct sc_fuse *fs, int fd, const struct stat *st,
		      struct fuse_entry_param *e, struct sc_inode **inode)
{
	int ret = sc_inode_get(fs->itable, fd, st, inode);

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

/* ---- FUSE_HANDLE_KILLPRIV_V2 -------------------------------------------- */

/*
 * Without this capability the kernel asks getxattr("security.capability")
 * before every write(2) (to know whether the write must drop file
 * capabilities): one extra round trip per write, the largest cost of small
 * writes.  With it, the kernel leaves the clearing of privileges to us and
 * flags the requests of callers without CAP_FSETID: FUSE_WRITE_KILL_SUIDGID
 * on WRITE, FATTR_KILL_SUIDGID on SETATTR (truncate, chown), and
 * FUSE_OPEN_KILL_SUIDGID on OPEN/CREATE with O_TRUNC.
 *
 * libfuse 3.14 neither offers the capability nor passes those flags up, so
 * the front end hooks the /dev/fuse I/O (fuse_session_custom_io): the read
 * hook notes the flag of the request this worker thread is about to
 * process (libfuse reads and processes a request on the same thread), and
 * the write hook adds the capability to the INIT reply when the kernel
 * offered it.  The handlers then drop suid, and sgid when group-executable
 * (the kernel's own rule), through the stack.  security.capability needs
 * nothing: the backing filesystem removes it itself on every write,
 * truncate and chown, whoever the caller is, and a chown by root (all our
 * backing calls) drops suid/sgid too.
 */
static __thread bool t_kill_suidgid;

/*
 * FOPEN_* flags for the OPEN/CREATE reply this thread is sending, which
 * libfuse 3.14's fuse_file_info cannot carry (FOPEN_PARALLEL_DIRECT_WRITES);
 * set just before fuse_reply_open/create, consumed by the write hook.
 */
static __thread uint32_t t_open_flags;

static ssize_t sc_dev_read(int fd, void *buf, size_t len, void *userdata)
{
	struct sc_fuse *fs = userdata;
	const struct fuse_in_header *h = buf;
	const void *arg = h + 1;
	ssize_t n = read(fd, buf, len);
	size_t alen;

	t_kill_suidgid = false;
	if (n < (ssize_t)sizeof(*h))
		return n;
	alen = n - sizeof(*h);
	switch (h->opcode) {
	case FUSE_INIT:
		if (alen >= offsetof(struct fuse_init_in, flags) + sizeof(uint32_t)) {
			const struct fuse_init_in *in = arg;

			fs->init_unique = h->unique;
			fs->init_minor = in->minor;
			fs->init_offered = in->flags;
			if ((in->flags & FUSE_INIT_EXT) &&
			    alen >= offsetof(struct fuse_init_in, flags2) + sizeof(uint32_t))
				fs->init_offered |= (uint64_t)in->flags2 << 32;
		}
		break;
	case FUSE_WRITE:
		if (alen >= sizeof(struct fuse_write_in))
			t_kill_suidgid = ((const struct fuse_write_in *)arg)->write_flags &
					 FUSE_WRITE_KILL_SUIDGID;
		break;
	case FUSE_SETATTR:
		if (alen >= sizeof(struct fuse_setattr_in))
			t_kill_suidgid = ((const struct fuse_setattr_in *)arg)->valid &
					 FATTR_KILL_SUIDGID;
		break;
	case FUSE_OPEN:
		if (alen >= sizeof(struct fuse_open_in))
			t_kill_suidgid = ((const struct fuse_open_in *)arg)->open_flags &
					 FUSE_OPEN_KILL_SUIDGID;
		break;
	case FUSE_CREATE:
		if (alen >= sizeof(struct fuse_create_in))
			t_kill_suidgid = ((const struct fuse_create_in *)arg)->open_flags &
					 FUSE_OPEN_KILL_SUIDGID;
		break;
	default:
		break;
	}
	return n;
}

/*
 * The capabilities libfuse 3.14 does not know, added to its INIT reply
 * when the kernel offered them.  flags2 is read by the kernel only with
 * FUSE_INIT_EXT set; libfuse zeroes what it does not fill.  Parallel
 * direct writes also wait for the kernel's io modes (protocol 7.40, Linux
 * 6.9), which keep them apart from page-cache I/O on the same file.
 */
static void init_reply_add(struct sc_fuse *fs, struct iovec *arg)
{
	struct fuse_init_out *io = arg->iov_base;

	if (arg->iov_len < offsetof(struct fuse_init_out, flags) + sizeof(uint32_t))
		return;
	if (fs->killpriv_v2 && (fs->init_offered & FUSE_HANDLE_KILLPRIV_V2))
		io->flags |= FUSE_HANDLE_KILLPRIV_V2;
	if (fs->ask_parallel_dio && fs->init_minor >= 40 &&
	    (fs->init_offered & FUSE_INIT_EXT) &&
	    (fs->init_offered & SC_FUSE_DIRECT_IO_ALLOW_MMAP) &&
	    arg->iov_len >= offsetof(struct fuse_init_out, flags2) + sizeof(uint32_t)) {
		io->flags |= FUSE_INIT_EXT;
		io->flags2 |= (uint32_t)(SC_FUSE_DIRECT_IO_ALLOW_MMAP >> 32);
		fs->parallel_dio = true;
	}
}

static ssize_t sc_dev_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct sc_fuse *fs = userdata;
	const struct fuse_out_header *out = iov[0].iov_base;

	if (fs->init_unique && out->unique == fs->init_unique) {
		fs->init_unique = 0;
		if (count >= 2 && out->error == 0)
			init_reply_add(fs, &iov[1]);
	} else if (t_open_flags && count >= 2 && out->error == 0 &&
		   iov[count - 1].iov_len >= sizeof(struct fuse_open_out)) {
		/* OPEN's reply is a fuse_open_out, CREATE's ends with one. */
		struct fuse_open_out *oo = (void *)((char *)iov[count - 1].iov_base +
						    iov[count - 1].iov_len - sizeof(*oo));

		oo->open_flags |= t_open_flags;
	}
	t_open_flags = 0;
	return writev(fd, iov, count);
}

const struct fuse_custom_io sc_fuse_io = {
	.read	= sc_dev_read,
	.writev	= sc_dev_writev,
};

/* True if the caller of req is in group gid (primary or supplementary). */
static bool caller_in_group(fuse_req_t req, gid_t gid)
{
	gid_t groups[SC_MAX_GROUPS];
	int i, n;

	if (fuse_req_ctx(req)->gid == gid)
		return true;
	n = fuse_req_getgroups(req, SC_MAX_GROUPS, groups);
	for (i = 0; i < n && i < SC_MAX_GROUPS; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/*
 * Drops set-id bits when the kernel asked for it, by the kernel's own rule
 * (setattr_should_drop_suidgid): suid always; sgid if group-executable, or
 * if the caller is not in the file's group.
 */
static void kill_suidgid(fuse_req_t req, struct sc_fuse *fs, fuse_ino_t ino,
			 struct sc_obj *obj, struct sc_fh *fh)
{
	struct stat st, attr;
	mode_t kill;

	if (!t_kill_suidgid || !S_ISREG(obj->type))
		return;
	t_kill_suidgid = false;
	if (sc_xl_getattr(fs->top, obj, fh, &st) < 0)
		return;
	kill = st.st_mode & S_ISUID;
	if ((st.st_mode & S_ISGID) &&
	    ((st.st_mode & S_IXGRP) || !caller_in_group(req, st.st_gid)))
		kill |= S_ISGID;
	if (!kill)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.st_mode = st.st_mode & ~kill;
	if (sc_xl_setattr(fs->top, obj, fh, &attr, SC_SET_MODE, &st) < 0) {
		fuse_log(FUSE_LOG_WARNING, "stackcrypt: cannot clear set-id bits of backing "
			 "inode %llu\n", (unsigned long long)st.st_ino);
		return;
	}
	/*
	 * The kernel still caches the old mode (it did not send the change);
	 * drop its cached attributes.  Attributes only (offset < 0): no page
	 * or inode lock is taken, so this is safe inside a WRITE.
	 */
	fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
}

/* ---- session lifecycle ------------------------------------------------- */

/* Negotiates the connection; sends no reply (libfuse answers INIT). */
static void sc_ll_init(void *userdata, struct fuse_conn_info *conn)
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
static void sc_ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sc_fuse *fs = fs_of(req);
	struct fuse_entry_param e;
	struct sc_inode *inode;
	struct stat st;
	int fd, ret;

	ret = sc_xl_lookup(fs->top, obj_of(fs, parent), name, &fd, &st);
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
		ret = entry_from(fs, fd, &st, &e, &inode);
	if (ret < 0) {
		fuse_reply_err(req, -ret);
		return;
	}
	reply_entry(req, fs, inode, &e);
}

/* Replies none. */
static void sc_ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct sc_fuse *fs = fs_of(req);

	sc_inode_put(fs->itable, inode_of(fs, ino), nlookup);
	fuse_reply_none(req);
}

/* Replies none. */
static void sc_ll_forget_multi(fuse_req_t req, size_t count,
			       struct fuse_forget_data *forgets)
{
	struct sc_fuse *fs = fs_of(req);
	size_t i;

	for (i = 0; i < count; i++)
		sc_inode_put(fs->itable, inode_of(fs, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

/* Replies attr or err. */
static void sc_ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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
static void sc_ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			  int valid, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);
	struct stat st;
	int ret;

	kill_suidgid(req, fs, ino, obj_of(fs, ino), fh_of(fi));
	ret = sc_xl_setattr(fs->top, obj_of(fs, ino), fh_of(fi), attr, set_mask(valid), &st);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_attr(req, &st, fs->attr_timeout);
}

/* Replies readlink or err. */
static void sc_ll_readlink(fuse_req_t req, fuse_ino_t ino)
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

	ret = creds_enter(fs, req, &switched);
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
	creds_leave(fs, switched);
	if (ret == 0)
		ret = entry_from(fs, fd, &st, &e, &inode);
	if (ret < 0)
		goto out_err;
	reply_entry(req, fs, inode, &e);
	return;

out_err:
	fuse_reply_err(req, -ret);
}

static void sc_ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
			mode_t mode, dev_t rdev)
{
	make_node(req, parent, name, MK_NOD, mode, rdev, NULL);
}

static void sc_ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make_node(req, parent, name, MK_DIR, S_IFDIR | mode, 0, NULL);
}

static void sc_ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
			  const char *name)
{
	make_node(req, parent, name, MK_SYMLINK, S_IFLNK | 0777, 0, link);
}

/* Replies entry or err. */
static void sc_ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
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

/* Replies err (0 on success). */
static void sc_ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_unlink(fs->top, obj_of(fs, parent), name));
}

/* Replies err (0 on success). */
static void sc_ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_rmdir(fs->top, obj_of(fs, parent), name));
}

/* Replies err (0 on success).  flags: RENAME_NOREPLACE, RENAME_EXCHANGE. */
static void sc_ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			 fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_rename(fs->top, obj_of(fs, parent), name,
					  obj_of(fs, newparent), newname, flags));
}

/* Replies statfs or err. */
static void sc_ll_statfs(fuse_req_t req, fuse_ino_t ino)
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

/* Replies err (0 on success). */
static void sc_ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			   const char *value, size_t size, int flags)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_setxattr(fs->top, obj_of(fs, ino), name, value,
					    size, flags));
}

/* Replies xattr (size query), buf, or err. */
static void sc_ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct sc_fuse *fs = fs_of(req);
	void *buf = NULL;
	ssize_t n;

	if (size) {
		buf = thread_buf(fs, size);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	n = sc_xl_getxattr(fs->top, obj_of(fs, ino), name, buf, size);
	if (n < 0)
		fuse_reply_err(req, -n);
	else if (size == 0)
		fuse_reply_xattr(req, n);
	else
		fuse_reply_buf(req, buf, n);
}

/* Replies xattr (size query), buf, or err. */
static void sc_ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct sc_fuse *fs = fs_of(req);
	char *buf = NULL;
	ssize_t n;

	if (size) {
		buf = thread_buf(fs, size);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	n = sc_xl_listxattr(fs->top, obj_of(fs, ino), buf, size);
	if (n < 0)
		fuse_reply_err(req, -n);
	else if (size == 0)
		fuse_reply_xattr(req, n);
	else
		fuse_reply_buf(req, buf, n);
}

/* Replies err (0 on success). */
static void sc_ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct sc_fuse *fs = fs_of(req);

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

static void set_open_flags(struct sc_fuse *fs, struct fuse_file_info *fi)
{
	/*
	 * Keep the page cache across opens: dropping it at open races with
	 * writes in flight on other handles exactly as auto_inval_data does
	 * (see sc_ll_init), and every change to the data comes through here.
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
		t_open_flags = FOPEN_PARALLEL_DIRECT_WRITES;
	}
}

/* Replies open or err. */
static void sc_ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);
	struct sc_fh *fh = fh_new(stack_flags(fi->flags));
	int ret;

	if (!fh) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = sc_xl_open(fs->top, obj_of(fs, ino), fh);
	if (ret < 0) {
		free(fh);
		fuse_reply_err(req, -ret);
		return;
	}
	kill_suidgid(req, fs, ino, obj_of(fs, ino), fh);
	fi->fh = (uintptr_t)fh;
	set_open_flags(fs, fi);
	fh_publish(fs, fh, obj_of(fs, ino), false);
	ret = fuse_reply_open(req, fi);
	t_open_flags = 0;
	if (ret) {
		/* Interrupted: no release will come. */
		fh_unpublish(fs, fh);
		sc_xl_release(fs->top, obj_of(fs, ino), fh);
		free(fh);
	}
}

/* Replies create or err. */
static void sc_ll_create(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode, struct fuse_file_info *fi)
{
	struct sc_obj orphan = { .fd = -1, .type = S_IFREG };
	struct sc_fuse *fs = fs_of(req);
	struct fuse_entry_param e;
	struct sc_inode *inode;
	struct sc_fh *fh;
	struct stat st;
	bool switched;
	int fd, ret;

	fh = fh_new(stack_flags(fi->flags));
	if (!fh) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = creds_enter(fs, req, &switched);
	if (ret < 0)
		goto err_free_fh;
	ret = sc_xl_create(fs->top, obj_of(fs, parent), name, mode, fh, &fd, &st);
	creds_leave(fs, switched);
	if (ret < 0)
		goto err_free_fh;
	ret = entry_from(fs, fd, &st, &e, &inode);
	if (ret < 0)
		goto err_release;
	if (t_kill_suidgid) {
		/* An existing file opened with O_TRUNC: clear, then show the new mode. */
		kill_suidgid(req, fs, e.ino, &inode->obj, fh);
		sc_xl_getattr(fs->top, &inode->obj, fh, &e.attr);
	}
	fi->fh = (uintptr_t)fh;
	set_open_flags(fs, fi);
	fh_publish(fs, fh, &inode->obj, false);
	ret = fuse_reply_create(req, &e, fi);
	t_open_flags = 0;
	if (ret) {
		fh_unpublish(fs, fh);
		sc_xl_release(fs->top, &inode->obj, fh);
		free(fh);
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
static void sc_ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
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

/* Replies write or err. */
static void sc_ll_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in_buf,
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
	kill_suidgid(req, fs, ino, obj_of(fs, ino), fh_of(fi));
	n = sc_xl_write(fs->top, obj_of(fs, ino), fh_of(fi), data, size, off);
	if (n < 0)
		fuse_reply_err(req, -n);
	else
		fuse_reply_write(req, n);
}

/* Replies err (0 on success). */
static void sc_ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_flush(fs->top, obj_of(fs, ino), fh_of(fi)));
}

/* Replies err (0 on success); frees the struct sc_fh after the layers' release. */
static void sc_ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);
	struct sc_fh *fh = fh_of(fi);
	int ret;

	fh_unpublish(fs, fh);
	ret = sc_xl_release(fs->top, obj_of(fs, ino), fh);
	free(fh);
	fuse_reply_err(req, -ret);
}

/* Replies err (0 on success). */
static void sc_ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_fsync(fs->top, obj_of(fs, ino), fh_of(fi), datasync));
}

/* Replies err (0 on success). */
static void sc_ll_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
			    off_t len, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_fallocate(fs->top, obj_of(fs, ino), fh_of(fi),
					     mode, off, len));
}

/* Replies lseek or err (SEEK_DATA/SEEK_HOLE; the kernel does SET/CUR/END). */
static void sc_ll_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
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
static void sc_ll_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
				  struct fuse_file_info *fi_in, fuse_ino_t ino_out,
				  off_t off_out, struct fuse_file_info *fi_out,
				  size_t len, int flags)
{
	struct sc_fuse *fs = fs_of(req);
	ssize_t n;

	n = sc_xl_copy_file_range(fs->top, obj_of(fs, ino_in), fh_of(fi_in), off_in,
				  obj_of(fs, ino_out), fh_of(fi_out), off_out, len, flags);
	if (n < 0)
		fuse_reply_err(req, -n);
	else
		fuse_reply_write(req, n);
}

/* ---- directories ------------------------------------------------------- */

/* Replies open or err. */
static void sc_ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);
	struct sc_fh *fh = fh_new(fi->flags);
	int ret;

	if (!fh) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = sc_xl_opendir(fs->top, obj_of(fs, ino), fh);
	if (ret < 0) {
		free(fh);
		fuse_reply_err(req, -ret);
		return;
	}
	fi->fh = (uintptr_t)fh;
	fh_publish(fs, fh, obj_of(fs, ino), true);
	if (fuse_reply_open(req, fi)) {
		fh_unpublish(fs, fh);
		sc_xl_releasedir(fs->top, obj_of(fs, ino), fh);
		free(fh);
	}
}

struct rd_ctx {
	fuse_req_t		req;
	struct sc_fuse		*fs;
	struct sc_obj		*dir;
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
		ret = sc_xl_lookup(ctx->fs->top, ctx->dir, de->name, &fd, &st);
		if (ret == -ENOENT)
			return 0;	/* removed since the stream saw it: skip */
		if (ret == 0)
			ret = entry_from(ctx->fs, fd, &st, &e, &inode);
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

static void sc_ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			  struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

static void sc_ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			      struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

/* Replies err (0 on success); frees the struct sc_fh. */
static void sc_ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);
	struct sc_fh *fh = fh_of(fi);
	int ret;

	fh_unpublish(fs, fh);
	ret = sc_xl_releasedir(fs->top, obj_of(fs, ino), fh);
	free(fh);
	fuse_reply_err(req, -ret);
}

/* Replies err (0 on success). */
static void sc_ll_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			   struct fuse_file_info *fi)
{
	struct sc_fuse *fs = fs_of(req);

	fuse_reply_err(req, -sc_xl_fsyncdir(fs->top, obj_of(fs, ino), fh_of(fi), datasync));
}

const struct fuse_lowlevel_ops sc_fuse_ops = {
	.init			= sc_ll_init,
	.lookup			= sc_ll_lookup,
	.forget			= sc_ll_forget,
	.forget_multi		= sc_ll_forget_multi,
	.getattr		= sc_ll_getattr,
	.setattr		= sc_ll_setattr,
	.readlink		= sc_ll_readlink,
	.mknod			= sc_ll_mknod,
	.mkdir			= sc_ll_mkdir,
	.unlink			= sc_ll_unlink,
	.rmdir			= sc_ll_rmdir,
	.symlink		= sc_ll_symlink,
	.rename			= sc_ll_rename,
	.link			= sc_ll_link,
	.open			= sc_ll_open,
	.read			= sc_ll_read,
	.write_buf		= sc_ll_write_buf,
	.flush			= sc_ll_flush,
	.release		= sc_ll_release,
	.fsync			= sc_ll_fsync,
	.opendir		= sc_ll_opendir,
	.readdir		= sc_ll_readdir,
	.readdirplus		= sc_ll_readdirplus,
	.releasedir		= sc_ll_releasedir,
	.fsyncdir		= sc_ll_fsyncdir,
	.statfs			= sc_ll_statfs,
	.setxattr		= sc_ll_setxattr,
	.getxattr		= sc_ll_getxattr,
	.listxattr		= sc_ll_listxattr,
	.removexattr		= sc_ll_removexattr,
	.create			= sc_ll_create,
	.fallocate		= sc_ll_fallocate,
	.lseek			= sc_ll_lseek,
	.copy_file_range	= sc_ll_copy_file_range,
};

/* ---- setup ------------------------------------------------------------- */

static void release_obj(void *ctx, struct sc_obj *obj)
{
	struct sc_fuse *fs = ctx;

	sc_xl_stack_forget(fs->top, obj);
}

static void adopt_obj(void *ctx, struct sc_obj *obj, const struct stat *st)
{
	struct sc_fuse *fs = ctx;

	sc_xl_stack_adopt(fs->top, obj, st);
}

static bool same_obj(void *ctx, const struct sc_obj *obj, int fd)
{
	struct sc_fuse *fs = ctx;

	return sc_xl_same(fs->top, obj, fd);
}

/*
 * True when the backing directory is on a local filesystem that never
 * reports an error at close(2), so FLUSH has nothing to pass on.  NFS, CIFS,
 * FUSE and anything unknown keep FLUSH.
 */
static bool backing_is_local(int root_fd)
{
	struct statfs sfs;

	if (fstatfs(root_fd, &sfs) < 0)
		return false;
	switch ((unsigned long)sfs.f_type) {
	case EXT4_SUPER_MAGIC:		/* also ext2, ext3 */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case F2FS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

int sc_fuse_setup(struct sc_fuse *fs, const struct sc_fuse_opts *opts,
		  struct sc_xl *top, int root_fd)
{
	struct stat st;
	int ret;

	memset(fs, 0, sizeof(*fs));
	fs->conf = opts->conf;
	fs->attr_timeout = opts->attr_timeout;
	fs->entry_timeout = opts->entry_timeout;
	fs->killpriv_v2 = opts->killpriv_v2;
	fs->ask_parallel_dio = opts->ask_parallel_dio;
	fs->top = top;
	if (fstatat(root_fd, "", &st, AT_EMPTY_PATH) < 0) {
		ret = -errno;
		close(root_fd);
		return ret;
	}
	fs->local_backing = backing_is_local(root_fd);
	ret = sc_inode_table_new(root_fd, &st, release_obj, fs, &fs->itable);
	if (ret < 0) {
		close(root_fd);
		return ret;
	}
	sc_inode_table_set_adopt(fs->itable, adopt_obj, same_obj);
	pthread_mutex_init(&fs->fh_lock, NULL);
	fs->open_fhs = NULL;
	ret = pthread_key_create(&fs->buf_key, tbuf_free);
	if (ret) {
		ret = -ret;
		goto err_free_table;
	}
	fs->buf_key_ok = true;
	fs->switch_creds = geteuid() == 0;
	if (fs->switch_creds) {
		int n = getgroups(0, NULL);

		if (n < 0) {
			ret = -errno;
			goto err_free_table;
		}
		fs->groups = calloc(n ? n : 1, sizeof(gid_t));
		if (!fs->groups) {
			ret = -ENOMEM;
			goto err_free_table;
		}
		fs->ngroups = getgroups(n, fs->groups);
		if (fs->ngroups < 0) {
			ret = -errno;
			goto err_free_table;
		}
	}
	return 0;

err_free_table:
	sc_fuse_teardown(fs);
	return ret;
}

int sc_fuse_init_stack(struct sc_fuse *fs)
{
	return sc_xl_stack_init(fs->top, &sc_inode_root(fs->itable)->obj, &fs->conf);
}

void sc_fuse_teardown(struct sc_fuse *fs)
{
	/* Handles whose RELEASE the kernel dropped at unmount (see fe_fh). */
	while (fs->open_fhs) {
		struct fe_fh *fe = fs->open_fhs;

		fs->open_fhs = fe->next;
		if (fe->dir)
			sc_xl_releasedir(fs->top, fe->obj, &fe->fh);
		else
			sc_xl_release(fs->top, fe->obj, &fe->fh);
		free(fe);
	}
	sc_inode_table_free(fs->itable);
	fs->itable = NULL;
	if (fs->buf_key_ok) {
		struct tbuf *b = pthread_getspecific(fs->buf_key);

		/* The main thread's buffer, if it ran requests (-s). */
		if (b)
			tbuf_free(b);
		pthread_key_delete(fs->buf_key);
		fs->buf_key_ok = false;
	}
	free(fs->groups);
	fs->groups = NULL;
}
