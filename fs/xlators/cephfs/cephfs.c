/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cephfs.c - the bottom translator on libcephfs's low-level (ll) API: the
 * stack talks to a CephFS file system directly, as ceph-fuse and
 * NFS-Ganesha's FSAL_CEPH do, with no second FUSE hop.
 *
 * Why the ll API and not the path API: the front end hands every layer
 * objects, never paths, and the ll calls take an Inode (a client-side
 * inode reference) and a name, as a FUSE request does: each request here
 * is one ll call (lookup, getattr, setattr, create, read, write, ...) on
 * the client's caches, with one MDS or OSD round trip only where the
 * client holds no capability.  The path API would walk the path from the
 * mount's root on every call, and the layer would have to keep paths
 * that a rename elsewhere in the tree makes stale.  docs/design.md,
 * "The cephfs translator".
 *
 * The interface is fd-shaped, as the gluster translator's: sc_obj.fd,
 * sc_fh.fd and the fd_out of ->lookup and friends are ints from
 * CF_FD_BASE (2^30) up that name slots of a table holding an Inode (a
 * reference the layer owns: ceph_ll_put at ->drop_fd), an Fh (an open
 * file) or a ceph_dir_result (an open directory); a syscall made on one by
 * mistake fails with EBADF.  Slots live in chunks that never move.
 *
 * Identity: st_ino is the Ceph inode number, st_dev the root's for every
 * object; ->same compares inode numbers.
 *
 * Credentials: every ll call takes a UserPerm; each thread keeps one that
 * matches its fsuid, fsgid and groups (the front end switches those,
 * fs/fuse/creds.c), rebuilt only when they change.
 *
 * Semantics kept as the posix layer has them: O_APPEND dropped on the
 * backing open and a write-only open widened under writeback (posix.c says
 * why); RENAME_NOREPLACE, which libcephfs lacks, by link+unlink (files) or
 * check+rename (directories); RENAME_EXCHANGE refused with EINVAL;
 * FALLOC_FL_ZERO_RANGE as a punched hole and an allocation; symlinks have
 * no xattrs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/falloc.h>

#include <cephfs/libcephfs.h>

#include "sc_xlator.h"
#include "cephfs_xl.h"

#define CF_FD_BASE	(1 << 30)
#define CF_CHUNK	4096
#define CF_CHUNKS	4096		/* 16M slots */
#define CF_PORT		3300		/* msgr2 */
#define CF_WANT		CEPH_STATX_BASIC_STATS
#define CF_GROUPS	256

enum cf_kind { CF_FREE, CF_INODE, CF_FILE, CF_DIR };

struct cf_slot {
	enum cf_kind	kind;
	void		*p;		/* Inode *, Fh *, struct ceph_dir_result * */
	uint64_t	ino;		/* CF_INODE */
	int		next_free;
};

struct sc_cephfs {
	struct sc_cephfs		*next;	/* in the connection cache */
	pid_t				pid;	/* the process that connected */
	int				refs;
	struct ceph_mount_info		*cm;
	char				url[PATH_MAX];
	dev_t				dev;	/* the root's, given to every object */
	pthread_mutex_t			lock;	/* slot allocation */
	struct cf_slot			*chunks[CF_CHUNKS];
	atomic_int			nslots;
	int				free_head;
	atomic_long			last_gone;	/* time of the last "evicted" line */
	atomic_long			last_stale;	/* time of the last ESTALE line */
	Fh				*lk_fh;		/* the one-mount lock's file */
	Fh				*cfg_fh;	/* the config lock's */
};

struct cf_priv {
	struct sc_cephfs	*c;
	bool			writeback;
};

/* ---- errors, attributes, credentials --------------------------------------- */

int sc_cephfs_err(struct sc_cephfs *c, int r)
{
	if (r >= 0)
		return r;
	if (r == -ESTALE) {
		/* as the gluster translator's: a mount that stops finding its
		 * files says so */
		if (sc_log_due(&c->last_stale))
			sc_log(SC_LOG_WARNING, "stackcrypt: cephfs: %s: an object went stale on "
			       "the MDS (ESTALE), answered as missing\n", c->url);
		return -ENOENT;
	}
	if (r == -ESHUTDOWN || r == -ENOTCONN) {
		/* blocklisted (evicted) or no session: every call fails alike */
		if (sc_log_due(&c->last_gone))
			sc_log(SC_LOG_ERR, "stackcrypt: cephfs: error: %s: the client's MDS "
			       "session is gone (%s): evicted or cut off; unmount and mount "
			       "again\n", c->url, strerror(-r));
	}
	return r;
}

void sc_cephfs_stat(const struct sc_cephfs *c, const struct ceph_statx *x, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = c->dev;
	st->st_ino = x->stx_ino;
	st->st_mode = x->stx_mode;
	st->st_nlink = x->stx_nlink;
	st->st_uid = x->stx_uid;
	st->st_gid = x->stx_gid;
	st->st_rdev = x->stx_rdev;
	st->st_size = (off_t)x->stx_size;
	st->st_blksize = x->stx_blksize;
	st->st_blocks = (blkcnt_t)x->stx_blocks;
	st->st_atim = x->stx_atime;
	st->st_mtim = x->stx_mtime;
	st->st_ctim = x->stx_ctime;
}

/* This thread's credentials as libcephfs takes them (top of file). */
struct cf_cred {
	UserPerm	*perm;
	uid_t		uid;
	gid_t		gid;
	int		ngroups;
	gid_t		groups[CF_GROUPS];	/* the UserPerm points here */
};

static pthread_key_t cred_key;
static pthread_once_t cred_once = PTHREAD_ONCE_INIT;

static void cred_free(void *p)
{
	struct cf_cred *cr = p;

	if (cr->perm)
		ceph_userperm_destroy(cr->perm);
	free(cr);
}

static void cred_key_make(void)
{
	pthread_key_create(&cred_key, cred_free);
}

/* The UserPerm of this thread's fsuid, fsgid and groups; NULL: out of memory. */
static const UserPerm *perms(void)
{
	gid_t groups[CF_GROUPS];
	struct cf_cred *cr;
	uid_t uid = (uid_t)setfsuid((uid_t)-1);
	gid_t gid = (gid_t)setfsgid((gid_t)-1);
	int n;

	pthread_once(&cred_once, cred_key_make);
	n = getgroups(CF_GROUPS, groups);
	if (n < 0)
		n = 0;	/* more than CF_GROUPS: none rather than another caller's */
	cr = pthread_getspecific(cred_key);
	if (cr && cr->perm && cr->uid == uid && cr->gid == gid && cr->ngroups == n &&
	    !memcmp(cr->groups, groups, (size_t)n * sizeof(gid_t)))
		return cr->perm;
	if (!cr) {
		cr = calloc(1, sizeof(*cr));
		if (!cr || pthread_setspecific(cred_key, cr)) {
			free(cr);
			return NULL;
		}
	}
	if (cr->perm)
		ceph_userperm_destroy(cr->perm);
	cr->uid = uid;
	cr->gid = gid;
	cr->ngroups = n;
	memcpy(cr->groups, groups, (size_t)n * sizeof(gid_t));
	cr->perm = ceph_userperm_new(uid, gid, n, cr->groups);
	return cr->perm;
}

#define PERMS_OR_RET(p)	do { (p) = perms(); if (!(p)) return -ENOMEM; } while (0)

/* ---- the slot table ----------------------------------------------------------- */

static struct cf_slot *slot_at(struct sc_cephfs *c, int fd)
{
	int i = fd - CF_FD_BASE;

	if (fd < CF_FD_BASE || i >= atomic_load_explicit(&c->nslots, memory_order_acquire))
		return NULL;
	return &c->chunks[i / CF_CHUNK][i % CF_CHUNK];
}

/* A slot for p of kind: its int, or -ENOMEM. */
static int slot_new(struct sc_cephfs *c, enum cf_kind kind, void *p, uint64_t ino)
{
	struct cf_slot *s;
	int i;

	pthread_mutex_lock(&c->lock);
	if (c->free_head >= 0) {
		i = c->free_head;
		s = &c->chunks[i / CF_CHUNK][i % CF_CHUNK];
		c->free_head = s->next_free;
	} else {
		i = atomic_load_explicit(&c->nslots, memory_order_relaxed);
		if (i / CF_CHUNK >= CF_CHUNKS ||
		    (!c->chunks[i / CF_CHUNK] &&
		     !(c->chunks[i / CF_CHUNK] = calloc(CF_CHUNK, sizeof(struct cf_slot))))) {
			pthread_mutex_unlock(&c->lock);
			return -ENOMEM;
		}
		s = &c->chunks[i / CF_CHUNK][i % CF_CHUNK];
		/* published once its chunk exists: slot_at takes no lock */
		atomic_store_explicit(&c->nslots, i + 1, memory_order_release);
	}
	s->kind = kind;
	s->p = p;
	s->ino = ino;
	pthread_mutex_unlock(&c->lock);
	return CF_FD_BASE + i;
}

static void slot_free(struct sc_cephfs *c, int fd)
{
	struct cf_slot *s = slot_at(c, fd);

	if (!s)
		return;
	pthread_mutex_lock(&c->lock);
	s->kind = CF_FREE;
	s->p = NULL;
	s->next_free = c->free_head;
	c->free_head = fd - CF_FD_BASE;
	pthread_mutex_unlock(&c->lock);
}

static void *slot_ptr(struct sc_cephfs *c, int fd, enum cf_kind kind)
{
	struct cf_slot *s = slot_at(c, fd);

	return s && s->kind == kind ? s->p : NULL;
}

/* ---- the connection ------------------------------------------------------------- */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sc_cephfs *cache;
static bool cache_atexit;

/*
 * At exit: every connection this process made unmounted, which closes
 * its MDS session and so drops its locks at once.  Left to the process's
 * end instead, the MDS would keep the session, and the one-mount lock,
 * until the session times out (mds_session_autoclose, 300 s).  Files
 * still open are flushed by the unmount.
 */
static void cache_unmount_all(void)
{
	struct sc_cephfs *c;

	pthread_mutex_lock(&cache_lock);
	for (c = cache; c; c = c->next) {
		if (c->pid == getpid() && c->cm) {
			ceph_shutdown(c->cm);
			c->cm = NULL;
		}
	}
	pthread_mutex_unlock(&cache_lock);
}

static struct sc_cephfs *cache_get(const char *url)
{
	struct sc_cephfs *c;

	pthread_mutex_lock(&cache_lock);
	for (c = cache; c; c = c->next) {
		if (c->pid == getpid() && c->cm && !strcmp(c->url, url)) {
			c->refs++;
			break;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	return c;
}

static void cache_put(struct sc_cephfs *c)
{
	pthread_mutex_lock(&cache_lock);
	c->refs = 1;
	c->next = cache;
	cache = c;
	if (!cache_atexit)
		cache_atexit = atexit(cache_unmount_all) == 0;
	pthread_mutex_unlock(&cache_lock);
}

struct cf_url {
	char	id[64];
	char	mon[300];	/* "" or [v2:HOST:PORT] */
	char	fs[128];
	char	path[PATH_MAX];
};

static bool name_ok(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.",
			    s[i]))
			return false;
	return n > 0;
}

/* cephfs://[ID@][HOST[:PORT]]/FS[/PATH] into u.  0 or -EINVAL with err set. */
static int parse_url(const char *url, struct cf_url *u, char *err, size_t errlen)
{
	const char *p = url + sizeof(SC_CEPHFS_SCHEME) - 1, *slash, *at, *colon, *f;
	long port = CF_PORT;
	size_t n;

	memset(u, 0, sizeof(*u));
	slash = strchr(p, '/');
	if (!slash) {
		snprintf(err, errlen, "bad URL %s: expected cephfs://[ID@][HOST[:PORT]]/FS[/PATH]",
			 url);
		return -EINVAL;
	}
	at = memchr(p, '@', (size_t)(slash - p));
	if (at) {
		n = (size_t)(at - p);
		if (!name_ok(p, n) || n >= sizeof(u->id)) {
			snprintf(err, errlen, "bad URL %s: bad client id", url);
			return -EINVAL;
		}
		memcpy(u->id, p, n);
		p = at + 1;
	} else {
		snprintf(u->id, sizeof(u->id), "admin");
	}
	if (p < slash) {
		colon = memchr(p, ':', (size_t)(slash - p));
		n = (size_t)((colon ? colon : slash) - p);
		if (!name_ok(p, n)) {
			snprintf(err, errlen, "bad URL %s: bad host name", url);
			return -EINVAL;
		}
		if (colon) {
			char *end;

			port = strtol(colon + 1, &end, 10);
			if (end != slash || colon + 1 == slash || port < 1 || port > 65535) {
				snprintf(err, errlen, "bad URL %s: port must be 1-65535", url);
				return -EINVAL;
			}
		}
		snprintf(u->mon, sizeof(u->mon), "[v2:%.*s:%ld]", (int)n, p, port);
	}
	f = slash + 1;
	slash = strchr(f, '/');
	n = slash ? (size_t)(slash - f) : strlen(f);
	if (!name_ok(f, n) || n >= sizeof(u->fs)) {
		snprintf(err, errlen, "bad URL %s: no file system name (cephfs://[ID@][HOST[:PORT]]"
			 "/FS[/PATH])", url);
		return -EINVAL;
	}
	memcpy(u->fs, f, n);
	if (snprintf(u->path, sizeof(u->path), "%s", slash && slash[1] ? slash : "/") >=
	    (int)sizeof(u->path)) {
		snprintf(err, errlen, "bad URL %s: path too long", url);
		return -EINVAL;
	}
	return 0;
}

/*
 * A client configured as Ceph's tools are (cephfs_xl.h), then u's
 * monitor and log over that, mounted at u's directory.  0 or -errno with
 * err set; *cm NULL on failure.
 */
static int client_mount(const char *url, const struct cf_url *u, const char *log,
			struct ceph_mount_info **cm, char *err, size_t errlen)
{
	const char *step = "start a client";
	int r;

	r = ceph_create(cm, u->id);
	if (r < 0) {
		*cm = NULL;
		snprintf(err, errlen, "%s: cannot start a Ceph client: %s", url, strerror(-r));
		return r;
	}
	/* a monitor that never answers: an error line in 30 s, not Ceph's 300 */
	ceph_conf_set(*cm, "client_mount_timeout", "30");
	/*
	 * No client-side write-back cache (ObjectCacher): a write this layer
	 * acknowledged is on the OSDs, as a write to a kernel file system is
	 * in the kernel, so a kill -9 of the daemon loses nothing it wrote
	 * and keeps the order of its writes (the gcm layer's header before
	 * its units, its journal before the data).  With the cache, a killed
	 * daemon took its dirty buffers with it while the MDS kept the new
	 * sizes: a new file's header read back as zeros
	 * (ceph-libcephfs-tools-aes-xts).  Before the config file is read,
	 * which may turn it on again.
	 */
	ceph_conf_set(*cm, "client_oc", "false");
	r = ceph_conf_read_file(*cm, NULL);
	if (r < 0 && !*u->mon) {
		snprintf(err, errlen, "%s: no Ceph config file ($CEPH_CONF or /etc/ceph/ceph.conf) "
			 "and no monitor in the URL: %s", url, strerror(-r));
		goto err_release;
	}
	r = ceph_conf_parse_env(*cm, NULL);	/* CEPH_ARGS */
	if (r == 0 && *u->mon) {
		step = "set the monitor";
		r = ceph_conf_set(*cm, "mon_host", u->mon);
	}
	if (r == 0 && log && *log) {
		step = "set the log file";
		r = ceph_conf_set(*cm, "log_file", log);
	}
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot %s: %s", url, step, strerror(-r));
		goto err_release;
	}
	r = ceph_init(*cm);
	if (r == 0)
		r = ceph_select_filesystem(*cm, u->fs);
	if (r == 0)
		r = ceph_mount(*cm, u->path);
	if (r < 0) {
		snprintf(err, errlen, "cannot mount directory %s of CephFS %s as client.%s (%s): %s%s",
			 u->path, u->fs, u->id, url, strerror(-r),
			 r == -ENOENT ? " (no such file system or directory)" :
			 r == -EACCES || r == -EPERM ? " (check the keyring and the client's caps)" :
			 "");
		goto err_release;
	}
	return 0;

err_release:
	ceph_shutdown(*cm);
	*cm = NULL;
	return r;
}

int sc_cephfs_connect(const char *url, const char *log, struct sc_cephfs **out, char *err,
		      size_t errlen)
{
	struct ceph_statx stx;
	struct sc_cephfs *c;
	struct cf_url u;
	Inode *root;
	int r;

	c = cache_get(url);
	if (c) {
		*out = c;
		return 0;
	}
	r = parse_url(url, &u, err, errlen);
	if (r)
		return r;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(c->url, sizeof(c->url), "%s", url);
	pthread_mutex_init(&c->lock, NULL);
	c->free_head = -1;
	r = client_mount(url, &u, log, &c->cm, err, errlen);
	if (r)
		goto err_free;
	r = ceph_ll_lookup_root(c->cm, &root);
	if (r == 0) {
		r = ceph_ll_getattr(c->cm, root, &stx, CF_WANT, 0, ceph_mount_perms(c->cm));
		ceph_ll_put(c->cm, root);
	}
	if (r < 0) {
		snprintf(err, errlen, "%s: directory %s: %s", url, u.path, strerror(-r));
		goto err_unmount;
	}
	if (!S_ISDIR(stx.stx_mode)) {
		r = -ENOTDIR;
		snprintf(err, errlen, "%s: %s is not a directory", url, u.path);
		goto err_unmount;
	}
	c->dev = stx.stx_dev;
	c->pid = getpid();
	cache_put(c);
	*out = c;
	return 0;

err_unmount:
	ceph_shutdown(c->cm);
err_free:
	pthread_mutex_destroy(&c->lock);
	free(c);
	return r;
}

void sc_cephfs_disconnect(struct sc_cephfs *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&cache_lock);
	c->refs--;	/* kept until the process exits: its locks are the session's */
	pthread_mutex_unlock(&cache_lock);
}

const char *sc_cephfs_url(const struct sc_cephfs *c)
{
	return c->url;
}

struct ceph_mount_info *sc_cephfs_mount(struct sc_cephfs *c)
{
	return c->cm;
}

/* An Inode reference of ours as an int (consumes in: put on failure). */
static int hand_up(struct sc_cephfs *c, Inode *in, uint64_t ino)
{
	int fd = slot_new(c, CF_INODE, in, ino);

	if (fd < 0)
		ceph_ll_put(c->cm, in);
	return fd;
}

int sc_cephfs_root(struct sc_cephfs *c, struct stat *st)
{
	struct ceph_statx stx;
	Inode *root;
	int r;

	r = ceph_ll_lookup_root(c->cm, &root);
	if (r < 0)
		return sc_cephfs_err(c, r);
	r = ceph_ll_getattr(c->cm, root, &stx, CF_WANT, 0, ceph_mount_perms(c->cm));
	if (r < 0) {
		ceph_ll_put(c->cm, root);
		return sc_cephfs_err(c, r);
	}
	sc_cephfs_stat(c, &stx, st);
	return hand_up(c, root, stx.stx_ino);
}

/* ---- the locks ------------------------------------------------------------------ */

/* The lock owners: one per lock, apart from each other and every other fd. */
static const char mount_owner[] = "stackcrypt one-mount lock";
static const char config_owner[] = "stackcrypt config lock";

/*
 * Opens the lock file name of the root (made if missing, as a mount over
 * a ceph-fuse mount of the directory does) and takes a write lock on byte
 * for owner, without waiting: the open file into *out and 0, or -EBUSY /
 * -errno with nothing left open.  The MDS holds the lock for this
 * client's session: it goes when the session closes (the unmount at
 * exit), or when a dead client's session is evicted (docs/usage.md).
 */
static int lock_take(struct sc_cephfs *c, const char *name, off_t byte, const void *owner,
		     Fh **out)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1 };
	const UserPerm *p = ceph_mount_perms(c->cm);
	struct ceph_statx stx;
	Inode *root, *in = NULL;
	Fh *fh = NULL;
	int r;

	r = ceph_ll_lookup_root(c->cm, &root);
	if (r < 0)
		return sc_cephfs_err(c, r);
	r = ceph_ll_create(c->cm, root, name, 0600, O_RDWR | O_CREAT, &in, &fh, &stx, CF_WANT,
			   AT_SYMLINK_NOFOLLOW, p);
	ceph_ll_put(c->cm, root);
	if (r < 0)
		return sc_cephfs_err(c, r);
	if (!S_ISREG(stx.stx_mode)) {
		r = -EUCLEAN;
		goto err_close;
	}
	fl.l_pid = getpid();
	r = ceph_ll_setlk(c->cm, fh, &fl, (uint64_t)(uintptr_t)owner, 0);
	if (r < 0) {
		r = r == -EAGAIN || r == -EACCES || r == -EWOULDBLOCK ? -EBUSY : sc_cephfs_err(c, r);
		goto err_close;
	}
	ceph_ll_put(c->cm, in);
	*out = fh;
	return 0;

err_close:
	ceph_ll_close(c->cm, fh);
	ceph_ll_put(c->cm, in);
	return r;
}

int sc_cephfs_lock(struct sc_cephfs *c, const char *name)
{
	if (c->lk_fh)
		return -EALREADY;
	return lock_take(c, name, 0, mount_owner, &c->lk_fh);
}

int sc_cephfs_lock_config(struct sc_cephfs *c, const char *name)
{
	if (c->cfg_fh)
		return 0;	/* held already by this process */
	return lock_take(c, name, 1, config_owner, &c->cfg_fh);
}

/* ---- lifecycle and identity ----------------------------------------------------- */

#define C(xl)	(((struct cf_priv *)(xl)->priv)->c)
#define CM(xl)	(C(xl)->cm)
#define INODE(xl, fd)	((Inode *)slot_ptr(C(xl), (fd), CF_INODE))
#define FH(xl, fd)	((Fh *)slot_ptr(C(xl), (fd), CF_FILE))

static int cf_init(struct sc_xl *xl, struct sc_obj *root, struct sc_xl_conf *conf)
{
	struct cf_priv *cp = xl->priv;

	cp->writeback = conf->writeback;
	return INODE(xl, root->fd) ? 0 : -EBADF;
}

static void cf_destroy(struct sc_xl *xl)
{
	free(xl->priv);
	xl->priv = NULL;
}

/* Every object keeps its Inode reference: nothing to trade. */
static void cf_adopt(struct sc_xl *xl, struct sc_obj *obj, const struct stat *st)
{
	(void)xl;
	(void)obj;
	(void)st;
}

static void cf_forget(struct sc_xl *xl, struct sc_obj *obj)
{
	(void)xl;
	(void)obj;	/* ->drop_fd puts the reference */
}

static bool cf_same(struct sc_xl *xl, const struct sc_obj *obj, int fd)
{
	struct cf_slot *a = slot_at(C(xl), obj->fd), *b = slot_at(C(xl), fd);

	if (!a || !b || a->kind != CF_INODE || b->kind != CF_INODE)
		return true;	/* cannot tell: one entry per (dev, ino) */
	return a->ino == b->ino;
}

static void cf_drop_fd(struct sc_xl *xl, int fd)
{
	Inode *in = INODE(xl, fd);

	if (!in)
		return;
	slot_free(C(xl), fd);
	ceph_ll_put(CM(xl), in);
}

/* ---- namespace ------------------------------------------------------------------- */

/* A new Inode reference and its statx handed up (r: the call's result). */
static int child_out(struct sc_xl *xl, int r, Inode *in, const struct ceph_statx *stx,
		     struct stat *st, int *fd_out)
{
	int fd;

	if (r < 0)
		return sc_cephfs_err(C(xl), r);
	sc_cephfs_stat(C(xl), stx, st);
	fd = hand_up(C(xl), in, stx->stx_ino);
	if (fd < 0)
		return fd;
	*fd_out = fd;
	return 0;
}

static int cf_lookup(struct sc_xl *xl, struct sc_obj *dir, const char *name, int *fd_out,
		     struct stat *st)
{
	Inode *d = INODE(xl, dir->fd), *in = NULL;
	struct ceph_statx stx;
	const UserPerm *p;
	int r;

	if (!d)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_lookup(CM(xl), d, name, &in, &stx, CF_WANT, AT_SYMLINK_NOFOLLOW, p);
	return child_out(xl, r, in, &stx, st, fd_out);
}

static int cf_getattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct stat *st)
{
	Inode *in = INODE(xl, obj->fd);
	struct ceph_statx stx;
	const UserPerm *p;
	int r;

	(void)fh;	/* an unlinked file's Inode answers too: the reference holds it */
	if (!in)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_getattr(CM(xl), in, &stx, CF_WANT, 0, p);
	if (r < 0)
		return sc_cephfs_err(C(xl), r);
	sc_cephfs_stat(C(xl), &stx, st);
	return 0;
}

static int cf_setattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      const struct stat *attr, int valid, struct stat *st)
{
	static const struct { int sc, ceph; } map[] = {
		{ SC_SET_MODE, CEPH_SETATTR_MODE }, { SC_SET_UID, CEPH_SETATTR_UID },
		{ SC_SET_GID, CEPH_SETATTR_GID }, { SC_SET_SIZE, CEPH_SETATTR_SIZE },
		{ SC_SET_ATIME, CEPH_SETATTR_ATIME }, { SC_SET_MTIME, CEPH_SETATTR_MTIME },
		{ SC_SET_ATIME_NOW, CEPH_SETATTR_ATIME },
		{ SC_SET_MTIME_NOW, CEPH_SETATTR_MTIME },
	};
	struct timespec now;
	Inode *in = INODE(xl, obj->fd);
	struct ceph_statx stx = { 0 };
	const UserPerm *p;
	size_t i;
	int mask = 0, r;

	if (!in)
		return -EBADF;
	if ((valid & SC_SET_MODE) && S_ISLNK(obj->type))
		return -EOPNOTSUPP;	/* Linux: symlink modes are fixed */
	PERMS_OR_RET(p);
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (valid & map[i].sc)
			mask |= map[i].ceph;
	stx.stx_mode = attr->st_mode;
	stx.stx_uid = attr->st_uid;
	stx.stx_gid = attr->st_gid;
	stx.stx_size = (uint64_t)attr->st_size;
	stx.stx_atime = attr->st_atim;
	stx.stx_mtime = attr->st_mtim;
	/*
	 * *_NOW: this client's clock, as the posix layer's utimensat(UTIME_NOW)
	 * takes the kernel's; ll_setattr leaves the time as it was when asked
	 * for CEPH_SETATTR_*TIME_NOW (Pacific).
	 */
	clock_gettime(CLOCK_REALTIME, &now);
	if (valid & SC_SET_ATIME_NOW)
		stx.stx_atime = now;
	if (valid & SC_SET_MTIME_NOW)
		stx.stx_mtime = now;
	if (mask) {
		r = ceph_ll_setattr(CM(xl), in, &stx, mask, p);
		if (r < 0)
			return sc_cephfs_err(C(xl), r);
	}
	return cf_getattr(xl, obj, fh, st);
}

static int cf_mknod(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		    dev_t rdev, int *fd_out, struct stat *st)
{
	Inode *d = INODE(xl, dir->fd), *in = NULL;
	struct ceph_statx stx;
	const UserPerm *p;
	int r;

	if (!d)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_mknod(CM(xl), d, name, mode, rdev, &in, &stx, CF_WANT, 0, p);
	return child_out(xl, r, in, &stx, st, fd_out);
}

static int cf_mkdir(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		    int *fd_out, struct stat *st)
{
	Inode *d = INODE(xl, dir->fd), *in = NULL;
	struct ceph_statx stx;
	const UserPerm *p;
	int r;

	if (!d)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_mkdir(CM(xl), d, name, mode, &in, &stx, CF_WANT, 0, p);
	return child_out(xl, r, in, &stx, st, fd_out);
}

static int cf_symlink(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      const char *target, int *fd_out, struct stat *st)
{
	Inode *d = INODE(xl, dir->fd), *in = NULL;
	struct ceph_statx stx;
	const UserPerm *p;
	int r;

	if (!d)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_symlink(CM(xl), d, name, target, &in, &stx, CF_WANT, 0, p);
	return child_out(xl, r, in, &stx, st, fd_out);
}

static int cf_link(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		   const char *newname, struct stat *st)
{
	Inode *in = INODE(xl, obj->fd), *d = INODE(xl, newdir->fd);
	const UserPerm *p;
	int r;

	if (!in || !d)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_link(CM(xl), in, d, newname, p);
	if (r < 0)
		return sc_cephfs_err(C(xl), r);
	return cf_getattr(xl, obj, NULL, st);
}

static int cf_unlink(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	Inode *d = INODE(xl, dir->fd);
	const UserPerm *p;

	if (!d)
		return -EBADF;
	PERMS_OR_RET(p);
	return sc_cephfs_err(C(xl), ceph_ll_unlink(CM(xl), d, name, p));
}

static int cf_rmdir(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	Inode *d = INODE(xl, dir->fd);
	const UserPerm *p;

	if (!d)
		return -EBADF;
	PERMS_OR_RET(p);
	return sc_cephfs_err(C(xl), ceph_ll_rmdir(CM(xl), d, name, p));
}

/*
 * RENAME_NOREPLACE, which libcephfs has no call for (as posix.c's
 * fallback): a non-directory is linked to its new name, which never
 * replaces, then unlinked from the old; a directory is renamed once its
 * new name is seen free (no other client changes the tree: the one-mount
 * lock).
 */
static int rename_noreplace(struct sc_xl *xl, Inode *od, const char *old, Inode *nd,
			    const char *new, const UserPerm *p)
{
	struct ceph_statx stx;
	Inode *in = NULL;
	int r;

	r = ceph_ll_lookup(CM(xl), od, old, &in, &stx, CEPH_STATX_MODE, AT_SYMLINK_NOFOLLOW, p);
	if (r < 0)
		return sc_cephfs_err(C(xl), r);
	if (!S_ISDIR(stx.stx_mode)) {
		r = ceph_ll_link(CM(xl), in, nd, new, p);
		ceph_ll_put(CM(xl), in);
		if (r < 0)
			return sc_cephfs_err(C(xl), r);
		r = ceph_ll_unlink(CM(xl), od, old, p);
		if (r < 0)
			ceph_ll_unlink(CM(xl), nd, new, p);
		return sc_cephfs_err(C(xl), r);
	}
	ceph_ll_put(CM(xl), in);
	in = NULL;
	r = ceph_ll_lookup(CM(xl), nd, new, &in, &stx, CEPH_STATX_MODE, AT_SYMLINK_NOFOLLOW, p);
	if (r == 0) {
		ceph_ll_put(CM(xl), in);
		return -EEXIST;
	}
	if (r != -ENOENT)
		return sc_cephfs_err(C(xl), r);
	return sc_cephfs_err(C(xl), ceph_ll_rename(CM(xl), od, old, nd, new, p));
}

static int cf_rename(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		     struct sc_obj *newdir, const char *newname, unsigned int flags)
{
	Inode *od = INODE(xl, dir->fd), *nd = INODE(xl, newdir->fd);
	const UserPerm *p;

	if (!od || !nd)
		return -EBADF;
	PERMS_OR_RET(p);
	if (flags == RENAME_NOREPLACE)
		return rename_noreplace(xl, od, name, nd, newname, p);
	if (flags)
		return -EINVAL;	/* RENAME_EXCHANGE, RENAME_WHITEOUT: no such call */
	return sc_cephfs_err(C(xl), ceph_ll_rename(CM(xl), od, name, nd, newname, p));
}

static ssize_t cf_readlink(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	Inode *in = INODE(xl, obj->fd);
	const UserPerm *p;
	int r;

	if (!in)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_readlink(CM(xl), in, buf, size, p);
	return r < 0 ? sc_cephfs_err(C(xl), r) : r;
}

static int cf_statfs(struct sc_xl *xl, struct sc_obj *obj, struct statvfs *sv)
{
	Inode *in = INODE(xl, obj->fd);

	if (!in)
		return -EBADF;
	return sc_cephfs_err(C(xl), ceph_ll_statfs(CM(xl), in, sv));
}

static int cf_syncfs(struct sc_xl *xl, struct sc_obj *obj)
{
	return obj ? sc_cephfs_err(C(xl), ceph_sync_fs(CM(xl))) : 0;
}

/* ---- extended attributes: none on symlinks, as in the posix layer ---------------- */

static ssize_t cf_getxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name, void *buf,
			   size_t size)
{
	Inode *in = INODE(xl, obj->fd);
	const UserPerm *p;
	int r;

	if (S_ISLNK(obj->type))
		return -ENODATA;
	if (!in)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_getxattr(CM(xl), in, name, buf, size, p);
	return r < 0 ? sc_cephfs_err(C(xl), r) : r;
}

static ssize_t cf_listxattr(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	Inode *in = INODE(xl, obj->fd);
	const UserPerm *p;
	size_t len = 0;
	int r;

	if (S_ISLNK(obj->type))
		return 0;
	if (!in)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_listxattr(CM(xl), in, buf, size, &len, p);
	return r < 0 ? sc_cephfs_err(C(xl), r) : (ssize_t)len;
}

static int cf_setxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
		       const void *value, size_t size, int flags)
{
	Inode *in = INODE(xl, obj->fd);
	const UserPerm *p;

	if (S_ISLNK(obj->type))
		return -EPERM;
	if (!in)
		return -EBADF;
	PERMS_OR_RET(p);
	return sc_cephfs_err(C(xl), ceph_ll_setxattr(CM(xl), in, name, value, size, flags, p));
}

static int cf_removexattr(struct sc_xl *xl, struct sc_obj *obj, const char *name)
{
	Inode *in = INODE(xl, obj->fd);
	const UserPerm *p;

	if (S_ISLNK(obj->type))
		return -EPERM;
	if (!in)
		return -EBADF;
	PERMS_OR_RET(p);
	return sc_cephfs_err(C(xl), ceph_ll_removexattr(CM(xl), in, name, p));
}

/* ---- files ------------------------------------------------------------------------ */

/* As the posix layer's backing_flags (posix.c says why). */
static int backing_flags(const struct sc_xl *xl, int flags)
{
	const struct cf_priv *cp = xl->priv;

	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW | O_APPEND | O_CLOEXEC);
	if (cp->writeback && (flags & O_ACCMODE) == O_WRONLY)
		flags = (flags & ~O_ACCMODE) | O_RDWR;
	return flags;
}

static int cf_open(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	Inode *in = INODE(xl, obj->fd);
	const UserPerm *p;
	Fh *f = NULL;
	int r;

	if (!in)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_open(CM(xl), in, backing_flags(xl, fh->flags), &f, p);
	if (r < 0)
		return sc_cephfs_err(C(xl), r);
	r = slot_new(C(xl), CF_FILE, f, 0);
	if (r < 0) {
		ceph_ll_close(CM(xl), f);
		return r;
	}
	fh->fd = r;
	return 0;
}

static int cf_create(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		     struct sc_fh *fh, int *fd_out, struct stat *st)
{
	Inode *d = INODE(xl, dir->fd), *in = NULL;
	struct ceph_statx stx;
	const UserPerm *p;
	Fh *f = NULL;
	int fd, r;

	if (!d)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_create(CM(xl), d, name, mode,
			   backing_flags(xl, fh->flags) | O_CREAT | (fh->flags & O_EXCL), &in, &f,
			   &stx, CF_WANT, 0, p);
	if (r < 0)
		return sc_cephfs_err(C(xl), r);
	sc_cephfs_stat(C(xl), &stx, st);
	fd = hand_up(C(xl), in, stx.stx_ino);
	if (fd < 0) {
		ceph_ll_close(CM(xl), f);
		return fd;
	}
	r = slot_new(C(xl), CF_FILE, f, 0);
	if (r < 0) {
		ceph_ll_close(CM(xl), f);
		cf_drop_fd(xl, fd);
		return r;
	}
	fh->fd = r;
	*fd_out = fd;
	return 0;
}

/* Reads until size bytes or EOF: a short count is not EOF. */
static ssize_t cf_read(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, void *buf,
		       size_t size, off_t off)
{
	Fh *f = FH(xl, fh->fd);
	size_t done = 0;

	(void)obj;
	if (!f)
		return -EBADF;
	while (done < size) {
		int n = ceph_ll_read(CM(xl), f, off + (off_t)done, size - done, (char *)buf + done);

		if (n < 0)
			return done ? (ssize_t)done : sc_cephfs_err(C(xl), n);
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static ssize_t cf_write(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			const void *buf, size_t size, off_t off)
{
	Fh *f = FH(xl, fh->fd);
	size_t done = 0;

	(void)obj;
	if (!f)
		return -EBADF;
	while (done < size) {
		int n = ceph_ll_write(CM(xl), f, off + (off_t)done, size - done,
				      (const char *)buf + done);

		if (n < 0)
			return done ? (ssize_t)done : sc_cephfs_err(C(xl), n);
		if (n == 0)
			return done ? (ssize_t)done : -EIO;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/*
 * close(2) of the user's fd.  libcephfs's ll API has no flush of its own
 * (ceph-fuse's FLUSH hands buffered data to the OSDs without waiting);
 * an error of the OSD writes is reported by the next fsync, and at
 * release, which the kernel does not wait for: as ceph-fuse without
 * fsync.
 */
static int cf_flush(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	(void)obj;
	return FH(xl, fh->fd) ? 0 : -EBADF;
}

static int cf_fsync(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int datasync)
{
	Fh *f = FH(xl, fh->fd);

	if (f)
		return sc_cephfs_err(C(xl), ceph_ll_fsync(CM(xl), f, datasync));
	/* a directory: its Inode's metadata */
	if (!INODE(xl, obj->fd))
		return -EBADF;
	return sc_cephfs_err(C(xl), ceph_ll_sync_inode(CM(xl), INODE(xl, obj->fd), datasync));
}

static int cf_release(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	Fh *f = FH(xl, fh->fd);
	int r = 0;

	(void)obj;
	if (f) {
		slot_free(C(xl), fh->fd);
		r = sc_cephfs_err(C(xl), ceph_ll_close(CM(xl), f));
	}
	fh->fd = -1;
	return r;
}

static int cf_fallocate(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int mode,
			off_t off, off_t len)
{
	Fh *f = FH(xl, fh->fd);
	int keep = mode & FALLOC_FL_KEEP_SIZE, r;

	(void)obj;
	if (!f)
		return -EBADF;
	if (off < 0 || len <= 0)
		return -EINVAL;
	switch (mode & ~FALLOC_FL_KEEP_SIZE) {
	case 0:
	case FALLOC_FL_PUNCH_HOLE:
		return sc_cephfs_err(C(xl), ceph_ll_fallocate(CM(xl), f, mode, off, len));
	case FALLOC_FL_ZERO_RANGE:
		/* a punched hole, then the range allocated as asked (top of file) */
		r = ceph_ll_fallocate(CM(xl), f, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
				      len);
		if (r == 0)
			r = ceph_ll_fallocate(CM(xl), f, keep, off, len);
		return sc_cephfs_err(C(xl), r);
	default:
		return -EOPNOTSUPP;
	}
}

static off_t cf_lseek(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off,
		      int whence)
{
	Fh *f = FH(xl, fh->fd);
	off_t r;

	(void)obj;
	if (!f)
		return -EBADF;
	r = ceph_ll_lseek(CM(xl), f, off, whence);
	return r < 0 ? sc_cephfs_err(C(xl), (int)r) : r;
}

/* ---- directories -------------------------------------------------------------------- */

static int cf_opendir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	Inode *in = INODE(xl, obj->fd);
	struct ceph_dir_result *d = NULL;
	const UserPerm *p;
	int r;

	if (!in)
		return -EBADF;
	PERMS_OR_RET(p);
	r = ceph_ll_opendir(CM(xl), in, &d, p);
	if (r < 0)
		return sc_cephfs_err(C(xl), r);
	r = slot_new(C(xl), CF_DIR, d, 0);
	if (r < 0) {
		ceph_ll_releasedir(CM(xl), d);
		return r;
	}
	fh->fd = r;
	return 0;
}

static int cf_readdir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off,
		      int (*fill)(void *ctx, const struct sc_dirent *de), void *ctx)
{
	struct ceph_dir_result *d = slot_ptr(C(xl), fh->fd, CF_DIR);
	struct sc_dirent de;
	struct dirent ent;
	int r;

	(void)obj;
	if (!d)
		return -EBADF;
	/* seek only when asked for another place than where the stream stands */
	if (ceph_telldir(CM(xl), d) != off)
		ceph_seekdir(CM(xl), d, off);
	for (;;) {
		r = ceph_readdir_r(CM(xl), d, &ent);
		if (r < 0)
			return sc_cephfs_err(C(xl), r);
		if (r == 0)
			return 0;
		de.name = ent.d_name;
		de.ino = ent.d_ino;
		de.type = ent.d_type == DT_UNKNOWN ? 0 : DTTOIF(ent.d_type);
		de.next_off = ceph_telldir(CM(xl), d);
		if (fill(ctx, &de))
			return 0;	/* the stream stands past it: the next call seeks back */
	}
}

static int cf_releasedir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct ceph_dir_result *d = slot_ptr(C(xl), fh->fd, CF_DIR);

	(void)obj;
	if (d) {
		slot_free(C(xl), fh->fd);
		ceph_ll_releasedir(CM(xl), d);
	}
	fh->fd = -1;
	return 0;
}

static const struct sc_xl_ops cf_ops = {
	.name			= "cephfs",
	.init			= cf_init,
	.destroy		= cf_destroy,
	.forget			= cf_forget,
	.adopt			= cf_adopt,
	.same			= cf_same,
	.drop_fd		= cf_drop_fd,
	.lookup			= cf_lookup,
	.getattr		= cf_getattr,
	.setattr		= cf_setattr,
	.mknod			= cf_mknod,
	.mkdir			= cf_mkdir,
	.symlink		= cf_symlink,
	.link			= cf_link,
	.unlink			= cf_unlink,
	.rmdir			= cf_rmdir,
	.rename			= cf_rename,
	.readlink		= cf_readlink,
	.statfs			= cf_statfs,
	.syncfs			= cf_syncfs,
	.getxattr		= cf_getxattr,
	.listxattr		= cf_listxattr,
	.setxattr		= cf_setxattr,
	.removexattr		= cf_removexattr,
	.open			= cf_open,
	.create			= cf_create,
	.read			= cf_read,
	.write			= cf_write,
	.flush			= cf_flush,
	.fsync			= cf_fsync,
	.release		= cf_release,
	.fallocate		= cf_fallocate,
	.lseek			= cf_lseek,
	.copy_file_range	= sc_xl_no_copy_file_range,	/* libcephfs has no copy offload */
	.opendir		= cf_opendir,
	.readdir		= cf_readdir,
	.fsyncdir		= cf_fsync,
	.releasedir		= cf_releasedir,
};

int sc_cephfs_xl_new(struct sc_cephfs *c, struct sc_xl **out)
{
	struct cf_priv *cp;
	struct sc_xl *xl;

	if (!c)
		return -EINVAL;
	xl = calloc(1, sizeof(*xl));
	cp = calloc(1, sizeof(*cp));
	if (!xl || !cp) {
		free(xl);
		free(cp);
		return -ENOMEM;
	}
	cp->c = c;
	xl->priv = cp;
	xl->ops = &cf_ops;
	xl->id = 0;
	*out = xl;
	return 0;
}
