/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gluster.c - the bottom translator on libgfapi's handle API: the stack
 * talks to a GlusterFS volume directly, with no second FUSE hop (as
 * NFS-Ganesha's and Samba's GlusterFS back ends do).
 *
 * The interface is fd-shaped: sc_obj.fd, sc_fh.fd and the fd_out of
 * ->lookup and friends are ints that the layers above only hand back down.
 * Here each such int names a slot of a table that holds a glfs_object (an
 * inode) or a glfs_fd (an open file or directory).  The ints start at
 * GL_FD_BASE (2^30), above any descriptor the kernel hands out here
 * (fs.nr_open: 2^20 by default), so a syscall made on one by mistake fails
 * with EBADF instead of hitting a real file.  Slots live in chunks
 * that never move, so finding one takes no lock; taking or freeing one
 * takes the table's mutex.
 *
 * Identity: an inode is its GFID (glfs_h_extract_handle); st_ino is what
 * libgfapi derives from the GFID, and st_dev is the root's for every
 * object (a distributed volume's bricks would give several), so the front
 * end's (st_dev, st_ino) key is the GFID's.  ->same compares GFIDs.
 *
 * Credentials: libgfapi sends the uid, gid and groups set with
 * glfs_setfs*() on the calling thread, not the thread's fsuid; the front
 * end switches the latter (fs/fuse/creds.c), so each call first copies the
 * thread's fsuid, fsgid and groups to libgfapi (sync_creds).
 *
 * Semantics kept as the posix layer has them (see posix.c): O_APPEND
 * dropped on the backing open, a write-only open widened with writeback;
 * RENAME_NOREPLACE, which libgfapi lacks, done by link+unlink (files) or
 * check+rename (directories); RENAME_EXCHANGE refused with EINVAL;
 * FALLOC_FL_ZERO_RANGE done as a punched hole then an allocation; symlinks
 * have no xattrs; flush waits for what write-behind holds (a close of a
 * duplicate, as the posix layer closes a dup for NFS).
 *
 * Round trips: the volume runs without md-cache (performance.stat-prefetch
 * off, docs/usage.md), so every call here is at least one at the brick.
 * Spared: the ->getattr right after a ->lookup takes the lookup's
 * attributes (fresh_take), the ->lookup of a name just listed takes what the
 * listing's READDIRP brought (stash_take), "." and ".." in a directory
 * listing take the directory's own inode number and its parent's (dot_ino),
 * and reads of pages read or written before come from the read cache
 * (cache.c).  docs/performance.md, section 17.
 *
 * Errors: libgfapi sets errno; gl_err() turns it into -errno, with ESTALE
 * (the object went away on the server) read as ENOENT with a warning, and
 * logs a lost connection (ENOTCONN) as an error line, each at most once a
 * second.
 */
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
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <linux/falloc.h>

#include <glusterfs/api/glfs.h>
#include <glusterfs/api/glfs-handles.h>

#include "sc_xlator.h"
#include "gluster_xl.h"
#include "cache_i.h"

#define GL_FD_BASE	(1 << 30)
#define GL_CHUNK	4096
#define GL_CHUNKS	4096		/* 16M slots */
#define GL_GFID_LEN	16
#define GL_LOG_LEVEL	5		/* GF_LOG_WARNING */
#define GL_PORT		24007
/* the read cache's budget (cache.c): a 16th of the RAM, at most this */
#define GL_CACHE_MAX	(256UL << 20)

enum gl_kind { GL_FREE, GL_OBJ, GL_FILE, GL_DIR };

/* The entries directory listings brought, for the lookups after them: stash_put. */
#define GL_STASH_MAX	1024	/* entries kept per connection: a ring, the oldest goes */

struct gl_stash_ent {
	unsigned char		dir[GL_GFID_LEN];	/* the directory's GFID */
	uint32_t		hash;	/* of dir and name: the scan's first test */
	struct glfs_object	*obj;	/* our own copy */
	struct stat		st;	/* fix_stat applied */
	unsigned long		gen;	/* the listing's */
	struct timespec		at;
	char			name[];
};

struct gl_stash {
	pthread_mutex_t		lock;
	int			head;	/* the next place, the oldest entry */
	int			n;	/* entries held */
	struct gl_stash_ent	*ent[GL_STASH_MAX];
};

struct gl_slot {
	enum gl_kind		kind;
	union {
		struct glfs_object	*obj;
		struct glfs_fd		*fd;
	};
	unsigned char		gfid[GL_GFID_LEN];	/* GL_OBJ */
	ino_t			ino;		/* GL_OBJ: its st_ino (the GFID's), 0: unknown */
	int			next_free;
	/*
	 * The open files of an object (GL_OBJ: fhs, the first; GL_FILE: owner,
	 * its object, and next, the owner's next), under the table's mutex:
	 * an unlinked file has no GFID handle on the bricks any more, only
	 * its open fds reach it (see gl_getattr).
	 */
	int			fhs;
	int			owner;
	int			next;
	/*
	 * GL_OBJ: the attributes its ->lookup got, for the one ->getattr that
	 * follows (see fresh_take), under the table's mutex.
	 */
	bool			has_fresh;
	unsigned long		fresh_gen;	/* g->mod_gen before the lookup */
	struct timespec		fresh_at;	/* CLOCK_MONOTONIC after it */
	struct stat		fresh;
	/*
	 * GL_DIR: fresh_gen and fresh_at are the listing's start (before its
	 * opendir, see stash_put), no_plus that READDIRP failed on it.
	 */
	bool			no_plus;
	/*
	 * GL_OBJ of a directory: its parent's st_ino, for ".." in its listings
	 * (dot_ino), while g->tree_gen is parent_gen; 0: unknown.
	 */
	ino_t			parent_ino;
	unsigned long		parent_gen;
};

struct sc_gluster {
	struct sc_gluster	*next;		/* in the connection cache */
	pid_t			pid;		/* the process that connected */
	int			refs;		/* users; 0: idle in the cache */
	glfs_t			*fs;
	char			url[PATH_MAX];
	char			volume[256];
	dev_t			dev;		/* the root's, given to every object */
	struct glfs_object	*root;		/* held by the connection */
	pthread_mutex_t		lock;		/* slot allocation */
	struct gl_slot		*chunks[GL_CHUNKS];
	atomic_int		nslots;		/* slots made so far */
	int			free_head;	/* -1: none */
	atomic_long		last_lost;	/* time of the last "not connected" line */
	atomic_long		last_stale;	/* time of the last ESTALE line */
	atomic_ulong		mod_gen;	/* calls that may have changed attributes */
	atomic_ulong		tree_gen;	/* renames done: directories may have moved */
	struct gl_stash		stash;		/* listed entries, its own mutex */
	struct gl_cache		cache;		/* file pages, its own mutex (cache.c) */
	/* the one-mount lock (sc_gluster_lock) and what is known of it */
	pthread_mutex_t		lk_mutex;	/* lk_fd's re-takes */
	struct glfs_fd		*lk_fd;		/* NULL: not taken */
	atomic_int		lk_state;	/* enum gl_lk */
	atomic_long		lk_last_err;	/* time of the last retake_failed line */
	char			lk_name[NAME_MAX + 1];
	const char		*lk_test_fifo;	/* test hook, see test_park */
};

/*
 * The one-mount lock across lost connections.  The bricks' locks
 * translator drops a client's locks when its connection ends, and a
 * restarted brick has none: GlusterFS 10 heals no lock (protocol/client
 * lost its lock recovery in release 7; AFR's lock healing is for replicas
 * only).  So a connection error while the lock is held makes it SUSPECT,
 * and the next modifying call takes it again first (lock_guard), as does
 * the keeper thread once a second when nothing else calls.  A re-take that
 * fails drops the lock's fd and looks the lock file up afresh the next
 * time, and says why in the log (a lost connection as every call does;
 * any other reason, e.g. the file gone stale or replaced, in a line of its
 * own, at most once a second): meanwhile modifying calls fail with
 * ENOTCONN.  If another client got the lock in between, the lock is LOST:
 * every modifying call fails with EIO from then on, after one error line,
 * rather than run unlocked.
 */
enum gl_lk { GL_LK_NONE, GL_LK_HELD, GL_LK_SUSPECT, GL_LK_LOST };
static int lock_guard(struct sc_gluster *g);
#define RET_IF_UNLOCKED(g)	do { int lk_ = lock_guard(g); if (lk_) return lk_; } while (0)

struct gl_priv {
	struct sc_gluster	*g;
	bool			writeback;
};

/*
 * LeakSanitizer (the sanitizer build's test pass) calls this for its
 * default suppressions: libgfapi leaks by itself (a failed glfs_init()
 * and glfs_fini() leave its context behind; connections are never
 * finished, see below), and those reports are GlusterFS's, not ours.
 * Allocations of our own are still reported.  Unused without LSan.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libglusterfs.so\nleak:libgfapi.so\nleak:libgfrpc.so\nleak:libgfxdr.so\n";
}

/* ... quietly: the table of suppressions used would read as a report. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}

/* ---- the URL ------------------------------------------------------------- */

bool sc_gluster_is_url(const char *s)
{
	return s && !strncmp(s, SC_GLUSTER_SCHEME, sizeof(SC_GLUSTER_SCHEME) - 1);
}

/*
 * gluster://HOST[:PORT]/VOLUME[/PATH] into its parts (path "/" when none).
 * 0 or -EINVAL with err set.
 */
static int parse_url(const char *url, char *host, size_t hostlen, int *port,
		     char *vol, size_t vollen, char *path, size_t pathlen,
		     char *err, size_t errlen)
{
	const char *p = url + sizeof(SC_GLUSTER_SCHEME) - 1, *slash, *colon, *v;
	size_t n;

	*port = GL_PORT;
	slash = strchr(p, '/');
	if (!slash || slash == p) {
		snprintf(err, errlen, "bad URL %s: expected gluster://HOST[:PORT]/VOLUME[/PATH]",
			 url);
		return -EINVAL;
	}
	colon = memchr(p, ':', slash - p);
	n = (colon ? colon : slash) - p;
	if (n == 0 || n >= hostlen) {
		snprintf(err, errlen, "bad URL %s: no host name", url);
		return -EINVAL;
	}
	memcpy(host, p, n);
	host[n] = 0;
	if (colon) {
		char *end;
		long v_port = strtol(colon + 1, &end, 10);

		if (end != slash || colon + 1 == slash || v_port < 1 || v_port > 65535) {
			snprintf(err, errlen, "bad URL %s: port must be 1-65535", url);
			return -EINVAL;
		}
		*port = (int)v_port;
	}
	v = slash + 1;
	slash = strchr(v, '/');
	n = slash ? (size_t)(slash - v) : strlen(v);
	if (n == 0 || n >= vollen) {
		snprintf(err, errlen, "bad URL %s: no volume name", url);
		return -EINVAL;
	}
	memcpy(vol, v, n);
	vol[n] = 0;
	if (strspn(vol, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.") != n) {
		snprintf(err, errlen, "bad URL %s: bad volume name '%s'", url, vol);
		return -EINVAL;
	}
	if (snprintf(path, pathlen, "%s", slash && slash[1] ? slash : "/") >= (int)pathlen) {
		snprintf(err, errlen, "bad URL %s: path too long", url);
		return -EINVAL;
	}
	return 0;
}

/* ---- errors and credentials ---------------------------------------------- */

/* libgfapi's errno after a failed call, as -errno (see the top of the file). */
static int gl_err(struct sc_gluster *g)
{
	int e = errno ? errno : EIO;

	if (e == ESTALE) {
		/* rare but for another client's removals: a mount that stops
		 * finding its files must say so (tests/gluster/brick_restart_test.py) */
		if (sc_log_due(&g->last_stale))
			sc_log(SC_LOG_WARNING, "stackcrypt: gluster: %s: an object went stale on "
			       "the bricks (ESTALE), answered as missing\n", g->url);
		return -ENOENT;
	}
	if (e == ENOTCONN) {
		int held = GL_LK_HELD;

		if (sc_log_due(&g->last_lost))
			sc_log(SC_LOG_ERR, "stackcrypt: gluster: error: %s: not connected to "
			       "the volume's bricks\n", g->url);
		atomic_compare_exchange_strong(&g->lk_state, &held, GL_LK_SUSPECT);
	}
	return -e;
}

/* Copies this thread's fsuid, fsgid and groups to libgfapi (top of file). */
static void sync_creds(void)
{
	gid_t groups[64], *many;
	int n;

	glfs_setfsuid((uid_t)setfsuid((uid_t)-1));
	glfs_setfsgid((gid_t)setfsgid((gid_t)-1));
	n = getgroups(64, groups);
	if (n >= 0) {
		glfs_setfsgroups((size_t)n, groups);
		return;
	}
	/* more than 64: rare enough for an allocation */
	n = getgroups(0, NULL);
	many = n > 0 ? malloc((size_t)n * sizeof(gid_t)) : NULL;
	if (many && (n = getgroups(n, many)) >= 0)
		glfs_setfsgroups((size_t)n, many);
	else
		glfs_setfsgroups(0, NULL);	/* none rather than another caller's */
	free(many);
}

/* ---- the slot table -------------------------------------------------------- */

static const unsigned char gfid_none[GL_GFID_LEN];

/* s names a file by its GFID in the read cache (a handle that failed to extract: never) */
static bool cache_keyed(const struct gl_slot *s)
{
	return s->kind == GL_OBJ && memcmp(s->gfid, gfid_none, GL_GFID_LEN);
}

static struct gl_slot *slot_at(struct sc_gluster *g, int fd)
{
	int i = fd - GL_FD_BASE;

	if (fd < GL_FD_BASE || i >= atomic_load_explicit(&g->nslots, memory_order_acquire))
		return NULL;
	return &g->chunks[i / GL_CHUNK][i % GL_CHUNK];
}

/* A new slot for kind/ptr.  Its int, or -ENOMEM. */
static int slot_new(struct sc_gluster *g, enum gl_kind kind, void *ptr)
{
	struct gl_slot *s;
	int i;

	pthread_mutex_lock(&g->lock);
	if (g->free_head >= 0) {
		i = g->free_head;
		s = &g->chunks[i / GL_CHUNK][i % GL_CHUNK];
		g->free_head = s->next_free;
	} else {
		i = atomic_load_explicit(&g->nslots, memory_order_relaxed);
		if (i / GL_CHUNK >= GL_CHUNKS)
			goto err_unlock;
		if (!g->chunks[i / GL_CHUNK]) {
			g->chunks[i / GL_CHUNK] = calloc(GL_CHUNK, sizeof(struct gl_slot));
			if (!g->chunks[i / GL_CHUNK])
				goto err_unlock;
		}
		s = &g->chunks[i / GL_CHUNK][i % GL_CHUNK];
		/* published after the slot's chunk exists: slot_at() takes no lock */
		atomic_store_explicit(&g->nslots, i + 1, memory_order_release);
	}
	s->kind = kind;
	s->fhs = s->owner = s->next = -1;
	s->has_fresh = false;
	s->no_plus = false;
	s->ino = 0;
	s->parent_ino = 0;
	if (kind == GL_OBJ) {
		s->obj = ptr;
		if (glfs_h_extract_handle(ptr, s->gfid, GL_GFID_LEN) < 0)
			memset(s->gfid, 0, GL_GFID_LEN);
	} else {
		s->fd = ptr;
	}
	pthread_mutex_unlock(&g->lock);
	if (cache_keyed(s))
		gl_cache_hold(&g->cache, s->gfid);	/* not handed out yet: no race on gfid */
	return GL_FD_BASE + i;

err_unlock:
	pthread_mutex_unlock(&g->lock);
	return -ENOMEM;
}

static void slot_free(struct sc_gluster *g, int fd)
{
	struct gl_slot *s = slot_at(g, fd);

	if (!s)
		return;
	if (cache_keyed(s))
		gl_cache_release(&g->cache, s->gfid);
	pthread_mutex_lock(&g->lock);
	s->kind = GL_FREE;
	s->obj = NULL;
	s->next_free = g->free_head;
	g->free_head = fd - GL_FD_BASE;
	pthread_mutex_unlock(&g->lock);
}

static struct glfs_object *obj_of(struct sc_gluster *g, int fd)
{
	struct gl_slot *s = slot_at(g, fd);

	return s && s->kind == GL_OBJ ? s->obj : NULL;
}

static struct glfs_fd *fd_of(struct sc_gluster *g, int fd)
{
	struct gl_slot *s = slot_at(g, fd);

	return s && (s->kind == GL_FILE || s->kind == GL_DIR) ? s->fd : NULL;
}

/* Files fh (a GL_FILE int) among the open files of obj (a GL_OBJ int). */
static void open_link(struct sc_gluster *g, int obj, int fh)
{
	struct gl_slot *o = slot_at(g, obj), *f = slot_at(g, fh);

	if (!o || !f)
		return;
	pthread_mutex_lock(&g->lock);
	f->owner = obj;
	f->next = o->fhs;
	o->fhs = fh;
	pthread_mutex_unlock(&g->lock);
}

static void open_unlink(struct sc_gluster *g, int fh)
{
	struct gl_slot *f = slot_at(g, fh), *o;
	int *pp;

	pthread_mutex_lock(&g->lock);
	o = f && f->owner >= 0 ? slot_at(g, f->owner) : NULL;
	for (pp = o ? &o->fhs : NULL; pp && *pp >= 0; pp = &slot_at(g, *pp)->next) {
		if (*pp == fh) {
			*pp = f->next;
			break;
		}
	}
	if (f)
		f->owner = f->next = -1;
	pthread_mutex_unlock(&g->lock);
}

/* An object going away: its open files no longer name it. */
static void open_orphan(struct sc_gluster *g, int obj)
{
	struct gl_slot *o = slot_at(g, obj), *f;

	pthread_mutex_lock(&g->lock);
	while (o && o->fhs >= 0) {
		f = slot_at(g, o->fhs);
		o->fhs = f->next;
		f->owner = f->next = -1;
	}
	pthread_mutex_unlock(&g->lock);
}

/* A duplicate of one open file of obj (glfs_dup: no network), or NULL. */
static struct glfs_fd *open_any(struct sc_gluster *g, int obj)
{
	struct gl_slot *o = slot_at(g, obj);
	struct glfs_fd *d = NULL;

	pthread_mutex_lock(&g->lock);
	if (o && o->kind == GL_OBJ && o->fhs >= 0)
		d = glfs_dup(slot_at(g, o->fhs)->fd);
	pthread_mutex_unlock(&g->lock);
	return d;
}

/* ---- the connection ------------------------------------------------------ */

/*
 * Connections are cached per process and never finished: glfs_fini() of
 * GlusterFS 9 and later waits 10 s for a frame of its own that never ends
 * (gluster/glusterfs#2606, closed wontfix), which would add 10 s to every
 * init and to every mount (the config is read before the stack is built)
 * and keep an unmounted daemon alive 10 s.  What a finished connection
 * would flush is flushed before: every glfs_fd is closed (write-behind
 * hands its writes over at close) before the process exits.  A connection
 * made by another process (the parent of a detaching mount) is never used:
 * libgfapi's threads do not survive fork().
 */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sc_gluster *cache;

static struct sc_gluster *cache_get(const char *url)
{
	struct sc_gluster *g;

	pthread_mutex_lock(&cache_lock);
	for (g = cache; g; g = g->next) {
		if (g->pid == getpid() && !strcmp(g->url, url)) {
			g->refs++;
			break;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	return g;
}

static void cache_put(struct sc_gluster *g)
{
	pthread_mutex_lock(&cache_lock);
	g->refs = 1;
	g->next = cache;
	cache = g;
	pthread_mutex_unlock(&cache_lock);
}

/* Whether this process holds a connection already (libgfapi's threads run). */
static bool cache_has_own(void)
{
	struct sc_gluster *g;
	bool own = false;

	pthread_mutex_lock(&cache_lock);
	for (g = cache; g && !own; g = g->next)
		own = g->pid == getpid();
	pthread_mutex_unlock(&cache_lock);
	return own;
}

/*
 * glfs_init() can crash the whole process when the volume does not exist
 * (gluster/glusterfs#649, closed wontfix: a race in libgfapi's own
 * threads as the failed connection is torn down), so a mistyped volume
 * name would now and then end in SIGSEGV instead of its error line.  The
 * first connection of a process is therefore tried in a child first: the
 * child reports glfs_init()'s errno through a pipe and exits without
 * glfs_fini(); a child that dies instead stands for the same failure.
 * 0 (the volume answers; the caller connects itself), or -errno with the
 * reason in err.  Only while the process has no libgfapi threads of its
 * own: a child forked beside them could inherit a lock one of them held.
 */
static int probe_volume(const char *url, const char *host, int port, const char *volume,
			char *err, size_t errlen)
{
	int pfd[2], status, child_err = 0, ret;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return 0;	/* no probe: connect as before */
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return 0;
	}
	if (pid == 0) {
		glfs_t *fs = glfs_new(volume);
		int e = ENOMEM;

		close(pfd[0]);
		if (fs && glfs_set_volfile_server(fs, "tcp", host, port) == 0 &&
		    glfs_set_logging(fs, "/dev/null", GL_LOG_LEVEL) == 0) {
			errno = 0;
			e = glfs_init(fs) < 0 ? (errno ? errno : ENOTCONN) : 0;
		} else if (fs) {
			e = errno ? errno : EINVAL;
		}
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(child_err) && child_err == 0)
		return 0;
	if (n == (ssize_t)sizeof(child_err)) {
		ret = -child_err;
		snprintf(err, errlen, "cannot connect to volume %s on %s:%d (%s): %s", volume,
			 host, port, url, strerror(child_err));
	} else {
		ret = -ENOTCONN;
		snprintf(err, errlen,
			 "cannot connect to volume %s on %s:%d (%s): the GlusterFS client "
			 "library failed (%s); does the volume exist?", volume, host, port, url,
			 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no answer");
	}
	return ret;
}

/* A 16th of the RAM, at most GL_CACHE_MAX. */
static size_t cache_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	size_t b = pages > 0 && psize > 0 ? (size_t)pages / 16 * (size_t)psize : 0;

	return b < GL_CACHE_MAX ? b : GL_CACHE_MAX;
}

int sc_gluster_connect(const char *url, const char *logfile, struct sc_gluster **out,
		       char *err, size_t errlen)
{
	char host[256], path[PATH_MAX];
	struct sc_gluster *g;
	struct stat st;
	int port, ret;

	g = cache_get(url);
	if (g) {
		if (logfile)
			glfs_set_logging(g->fs, logfile, GL_LOG_LEVEL);
		*out = g;
		return 0;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = parse_url(url, host, sizeof(host), &port, g->volume, sizeof(g->volume),
			path, sizeof(path), err, errlen);
	if (ret < 0)
		goto err_free;
	if (!cache_has_own()) {
		ret = probe_volume(url, host, port, g->volume, err, errlen);
		if (ret < 0)
			goto err_free;
	}
	snprintf(g->url, sizeof(g->url), "%s", url);
	ret = gl_cache_init(&g->cache, cache_budget());
	if (ret < 0) {
		snprintf(err, errlen, "out of memory");
		goto err_free;
	}
	pthread_mutex_init(&g->lock, NULL);
	pthread_mutex_init(&g->stash.lock, NULL);
	pthread_mutex_init(&g->lk_mutex, NULL);
	g->free_head = -1;
	g->fs = glfs_new(g->volume);
	if (!g->fs) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s: cannot start a GlusterFS client", url);
		goto err_free;
	}
	if (glfs_set_volfile_server(g->fs, "tcp", host, port) < 0 ||
	    glfs_set_logging(g->fs, logfile ? logfile : "/dev/null", GL_LOG_LEVEL) < 0) {
		ret = errno ? -errno : -EINVAL;
		snprintf(err, errlen, "%s: %s", url, strerror(-ret));
		goto err_fini;
	}
	errno = 0;
	if (glfs_init(g->fs) < 0) {
		ret = errno ? -errno : -ENOTCONN;
		snprintf(err, errlen, "cannot connect to volume %s on %s:%d (%s): %s", g->volume,
			 host, port, url, strerror(-ret));
		goto err_fini;
	}
	errno = 0;
	g->root = glfs_h_lookupat(g->fs, NULL, path, &st, 1);
	if (!g->root) {
		ret = errno ? -errno : -EIO;
		snprintf(err, errlen, "%s: directory %s of volume %s: %s", url, path, g->volume,
			 strerror(-ret));
		goto err_fini;
	}
	if (!S_ISDIR(st.st_mode)) {
		ret = -ENOTDIR;
		snprintf(err, errlen, "%s: %s is not a directory", url, path);
		goto err_close_root;
	}
	g->dev = st.st_dev;
	g->pid = getpid();
	cache_put(g);
	*out = g;
	return 0;

err_close_root:
	glfs_h_close(g->root);
err_fini:
	glfs_fini(g->fs);
err_free:
	gl_cache_fini(&g->cache);
	free(g);
	return ret;
}

void sc_gluster_disconnect(struct sc_gluster *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&cache_lock);
	g->refs--;	/* idle in the cache until the process exits (see above) */
	pthread_mutex_unlock(&cache_lock);
}

/* obj's bytes from off for len (0: to the end) changed: its cached pages go. */
static void cache_cut(struct sc_gluster *g, const struct sc_obj *obj, off_t off, off_t len)
{
	struct gl_slot *s = obj ? slot_at(g, obj->fd) : NULL;

	if (s && cache_keyed(s))
		gl_cache_cut(&g->cache, s->gfid, off, len);
}

/* st as the layers above see it: one device for the whole volume. */
static void fix_stat(struct sc_gluster *g, struct stat *st)
{
	st->st_dev = g->dev;
}

/*
 * An object of our own, as an int (consumes obj: closed on failure); st:
 * its attributes, whose st_ino (derived from the GFID) never changes.
 */
static int hand_up(struct sc_gluster *g, struct glfs_object *obj, const struct stat *st)
{
	int fd = slot_new(g, GL_OBJ, obj);

	if (fd < 0)
		glfs_h_close(obj);
	else
		slot_at(g, fd)->ino = st->st_ino;	/* not handed out yet */
	return fd;
}

/*
 * The attributes a lookup got, given to the ->getattr that follows it
 * without a round trip.  The crypt layer stats every file it opens first
 * (the header's cfile_fetch) right after the kernel's LOOKUP of it; over the
 * FUSE mount of the volume the kernel's attribute cache answers that stat,
 * here it was one more STAT at the brick per cold open (docs/performance.md,
 * section 17).  Kept safe by three rules: the attributes serve one
 * ->getattr only; any call below that may change attributes (every one
 * but lookup, getattr, readlink, statfs, the xattr reads and the directory
 * reads) bumps mod_gen after it returns, and attributes taken before such a
 * bump are not served; and they are served within FRESH_NS of the lookup
 * only, the kernel's own attribute timeout (no other client writes the
 * tree: the one-mount lock).
 */
#define FRESH_NS	1000000000L

static void mod_done(struct sc_gluster *g)
{
	atomic_fetch_add_explicit(&g->mod_gen, 1, memory_order_release);
}

/* at: when st was current (NULL: now) */
static void fresh_put(struct sc_gluster *g, int fd, unsigned long gen, const struct stat *st,
		      const struct timespec *at)
{
	struct gl_slot *s = slot_at(g, fd);
	struct timespec now;

	if (!s)
		return;
	if (!at)
		clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&g->lock);
	s->fresh = *st;
	s->fresh_gen = gen;
	s->fresh_at = at ? *at : now;
	s->has_fresh = true;
	pthread_mutex_unlock(&g->lock);
}

/* Attributes read at `at`, after gen was read, are still current `now`. */
static bool still_fresh(struct sc_gluster *g, unsigned long gen, const struct timespec *at,
			const struct timespec *now)
{
	long ns = (now->tv_sec - at->tv_sec) * 1000000000L + (now->tv_nsec - at->tv_nsec);

	return gen == atomic_load_explicit(&g->mod_gen, memory_order_acquire) &&
	       ns >= 0 && ns < FRESH_NS;
}

/* true with st filled if fd's lookup attributes may serve (and are used up) */
static bool fresh_take(struct sc_gluster *g, int fd, struct stat *st)
{
	struct gl_slot *s = slot_at(g, fd);
	struct timespec now;
	bool ok = false;

	if (!s)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&g->lock);
	if (s->kind == GL_OBJ && s->has_fresh) {
		s->has_fresh = false;
		ok = still_fresh(g, s->fresh_gen, &s->fresh_at, &now);
		if (ok)
			*st = s->fresh;
	}
	pthread_mutex_unlock(&g->lock);
	return ok;
}

/*
 * The entries a directory listing brought, for the ->lookup of each name
 * that follows it without a round trip.  The listing reads with READDIRP
 * (glfs_xreaddirplus_r), which gives every entry's attributes and object
 * with the names; the kernel then looks each name up (a READDIRPLUS reply
 * carries lookups, fs/fuse/handlers.c rd_fill; a plain READDIR is followed
 * by the LOOKUPs of ls -l or rm -r), which was one LOOKUP at the brick per
 * entry (docs/performance.md, 17.3).  fresh_take's rules keep it safe:
 * an entry serves one ->lookup; it is void once mod_gen moved after the
 * listing's opendir (a create, unlink or rename in between: any change goes
 * through this translator, the one-mount lock) or FRESH_NS after it.
 * Entries are keyed by the directory's GFID and the name (two objects of
 * one directory share them).  Bounded: a ring of GL_STASH_MAX entries per
 * connection, a new entry replacing the oldest (a void one, or one nobody
 * looked up: the rest are looked up at the brick as before); a directory's
 * go when an object of it is dropped, all of them at the translator's fini.
 */
static uint32_t stash_hash(const unsigned char *dir, const char *name)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	int i;

	for (i = 0; i < GL_GFID_LEN; i++)
		h = (h ^ dir[i]) * 16777619u;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h;
}

static void stash_ent_free(struct gl_stash_ent *e)
{
	if (e->obj)
		glfs_h_close(e->obj);	/* an inode reference and memory: no round trip */
	free(e);
}

/* The GFID of the directory object dirfd into dir; false if unknown. */
static bool dir_gfid(struct sc_gluster *g, int dirfd, unsigned char *dir)
{
	static const unsigned char none[GL_GFID_LEN];
	struct gl_slot *s = slot_at(g, dirfd);
	bool ok = false;

	pthread_mutex_lock(&g->lock);
	if (s && s->kind == GL_OBJ && memcmp(s->gfid, none, GL_GFID_LEN)) {
		memcpy(dir, s->gfid, GL_GFID_LEN);
		ok = true;
	}
	pthread_mutex_unlock(&g->lock);
	return ok;
}

/* Takes ownership of obj (closed if not kept). */
static void stash_put(struct sc_gluster *g, int dirfd, const char *name, struct glfs_object *obj,
		      const struct stat *st, unsigned long gen, const struct timespec *at)
{
	struct gl_stash *sh = &g->stash;
	size_t len = strlen(name) + 1;
	struct gl_stash_ent *e = malloc(sizeof(*e) + len), *old;

	if (!e) {
		glfs_h_close(obj);
		return;
	}
	e->obj = obj;
	if (!dir_gfid(g, dirfd, e->dir)) {
		stash_ent_free(e);
		return;
	}
	memcpy(e->name, name, len);
	e->hash = stash_hash(e->dir, name);
	e->st = *st;
	e->gen = gen;
	e->at = *at;
	pthread_mutex_lock(&sh->lock);
	old = sh->ent[sh->head];
	sh->ent[sh->head] = e;
	sh->head = (sh->head + 1) % GL_STASH_MAX;
	if (!old)
		sh->n++;
	pthread_mutex_unlock(&sh->lock);
	if (old)
		stash_ent_free(old);
}

/*
 * The listed object of name in the directory dirfd, with its attributes and
 * the listing's generation and time, if it may serve a lookup (used up), or
 * NULL.  The newest entry of the name is the one tried.
 */
static struct glfs_object *stash_take(struct sc_gluster *g, int dirfd, const char *name,
				      struct stat *st, unsigned long *gen, struct timespec *at)
{
	struct gl_stash *sh = &g->stash;
	struct gl_stash_ent *e = NULL;
	struct glfs_object *o = NULL;
	unsigned char dir[GL_GFID_LEN];
	struct timespec now;
	uint32_t h;
	int i, k;

	if (!dir_gfid(g, dirfd, dir))
		return NULL;
	h = stash_hash(dir, name);
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&sh->lock);
	for (k = 1; k <= GL_STASH_MAX && sh->n && !e; k++) {
		i = (sh->head - k + GL_STASH_MAX) % GL_STASH_MAX;
		if (sh->ent[i] && sh->ent[i]->hash == h &&
		    !memcmp(sh->ent[i]->dir, dir, GL_GFID_LEN) && !strcmp(sh->ent[i]->name, name)) {
			e = sh->ent[i];
			sh->ent[i] = NULL;
			sh->n--;
		}
	}
	pthread_mutex_unlock(&sh->lock);
	if (!e)
		return NULL;
	if (still_fresh(g, e->gen, &e->at, &now)) {
		o = e->obj;
		e->obj = NULL;
		*st = e->st;
		*gen = e->gen;
		*at = e->at;
	}
	stash_ent_free(e);
	return o;
}

/*
 * The directory object dirfd going away: its listed entries with it (they
 * hold inode references below).  All of them when dirfd is -1 (fini).
 */
static void stash_drop(struct sc_gluster *g, int dirfd)
{
	struct gl_stash_ent *gone[GL_STASH_MAX];
	struct gl_stash *sh = &g->stash;
	unsigned char dir[GL_GFID_LEN];
	int i, n = 0;

	if (dirfd >= 0 && !dir_gfid(g, dirfd, dir))
		return;
	pthread_mutex_lock(&sh->lock);
	for (i = 0; i < GL_STASH_MAX && sh->n; i++) {
		if (sh->ent[i] && (dirfd < 0 || !memcmp(sh->ent[i]->dir, dir, GL_GFID_LEN))) {
			gone[n++] = sh->ent[i];
			sh->ent[i] = NULL;
			sh->n--;
		}
	}
	pthread_mutex_unlock(&sh->lock);
	for (i = 0; i < n; i++)
		stash_ent_free(gone[i]);
}

int sc_gluster_root(struct sc_gluster *g, struct stat *st)
{
	struct glfs_object *o;
	unsigned char gfid[GL_GFID_LEN];

	/* a second object for the same inode: the table's, freed by ->drop_fd */
	if (glfs_h_extract_handle(g->root, gfid, GL_GFID_LEN) < 0)
		return gl_err(g);
	o = glfs_h_create_from_handle(g->fs, gfid, GL_GFID_LEN, st);
	if (!o)
		return gl_err(g);
	fix_stat(g, st);
	return hand_up(g, o, st);
}

/* The lock owners: one per lock, apart from every other fd's default. */
static char mount_owner[] = "stackcrypt one-mount lock";
static char config_owner[] = "stackcrypt config lock";

/*
 * Opens the lock file name (made if missing, as a mount over the FUSE
 * client does) and takes a write lock on its byte for owner: the fd into
 * *out and 0, or -EBUSY / -errno with nothing left open.
 */
static int lock_open(struct sc_gluster *g, const char *name, off_t byte, char *owner,
		     size_t ownerlen, struct glfs_fd **out)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1 };
	struct glfs_object *o;
	struct glfs_fd *fd;
	int ret;

	errno = 0;
	o = glfs_h_lookupat(g->fs, g->root, name, NULL, 0);
	if (!o && errno == ENOENT) {	/* made by the first mount, as over a directory */
		o = glfs_h_creat(g->fs, g->root, name, O_RDWR | O_CREAT, 0600, NULL);
		if (!o && errno == EEXIST)
			o = glfs_h_lookupat(g->fs, g->root, name, NULL, 0);
	}
	if (!o)
		return gl_err(g);
	fd = glfs_h_open(g->fs, o, O_RDWR);	/* a write lock needs a writable fd */
	glfs_h_close(o);
	if (!fd)
		return gl_err(g);
	/*
	 * An lk-owner of its own: GlusterFS keeps POSIX's rule that closing
	 * any fd of a file drops the owner's locks on it, and every other fd of
	 * this client (the config read just after) has the default owner.
	 */
	if (glfs_fd_set_lkowner(fd, owner, (int)ownerlen) < 0 ||
	    glfs_posix_lock(fd, F_SETLK, &fl) < 0) {
		ret = errno == EAGAIN || errno == EACCES ? -EBUSY : gl_err(g);
		glfs_close(fd);
		return ret;
	}
	*out = fd;
	return 0;
}

/*
 * Test hook: SC_TEST_GLUSTER_RETAKE_FIFO=PATH in a mount's environment
 * parks every re-take of the one-mount lock (the keeper's rounds and the
 * guard's), after a line saying so, until PATH (a FIFO) has been opened
 * for writing and closed: a test lets another client take the lock while
 * this one has lost it, without waiting for time to pass
 * (tests/gluster/lost_lock_test.sh).  Harmless: only a process whose own
 * environment asks for it is delayed, and only in taking the lock again.
 */
static void test_park(struct sc_gluster *g)
{
	char buf[64];
	int fd;

	if (!g->lk_test_fifo)
		return;
	sc_log(SC_LOG_WARNING, "stackcrypt: gluster: %s: test hook: the re-take of the "
	       "one-mount lock waits on %s\n", g->url, g->lk_test_fifo);
	fd = open(g->lk_test_fifo, O_RDONLY | O_CLOEXEC);	/* until a writer comes */
	if (fd < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

/* A re-take that failed other than by a lost connection: one line a second. */
static void retake_failed(struct sc_gluster *g, int e)
{
	if (sc_log_due(&g->lk_last_err))
		sc_log(SC_LOG_ERR, "stackcrypt: gluster: error: %s: cannot take the one-mount "
		       "lock on %s again: %s; modifying calls fail with ENOTCONN until it is\n",
		       g->url, g->lk_name, strerror(e));
}

/*
 * Takes the held lock again (top of file: after a lost connection), with
 * g->lk_mutex held: the same owner's lock on the same byte is a no-op
 * where the brick still has it.  An fd that fails the lock for any reason
 * but another owner's is replaced.  Updates lk_state; returns 0, -ENOTCONN
 * (still away, or the lock cannot be had yet: SUSPECT stays, the reason
 * logged), or -EIO (LOST).
 */
static int lock_retake(struct sc_gluster *g)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	int was, ret;

	if (atomic_load(&g->lk_state) == GL_LK_LOST)
		return -EIO;
	test_park(g);
	was = atomic_load(&g->lk_state);
	if (was == GL_LK_LOST)
		return -EIO;
	errno = 0;
	ret = !g->lk_fd ? -EBADF : glfs_posix_lock(g->lk_fd, F_SETLK, &fl) < 0 ?
	      (errno == EAGAIN || errno == EACCES ? -EBUSY : gl_err(g)) : 0;
	if (ret && ret != -EBUSY) {
		/*
		 * Whatever failed, the fd is not trusted to serve again: the
		 * reconnect may not have reopened it (EBADFD: it held a lock,
		 * client.strict-locks), or it may keep failing otherwise; a
		 * fresh lookup and open from the root, each round, is what
		 * lets the mount recover.  Closed first: a close drops the
		 * owner's locks on the file, and a lock is what it lacks.
		 */
		if (g->lk_fd)
			glfs_close(g->lk_fd);
		g->lk_fd = NULL;
		ret = lock_open(g, g->lk_name, 0, mount_owner, sizeof(mount_owner), &g->lk_fd);
	}
	if (ret == 0) {
		/*
		 * Not over a SUSPECT that a call's ENOTCONN set meanwhile: the
		 * lock this F_SETLK saw may have gone since; the next guard or
		 * keeper round takes it again.
		 */
		if (!atomic_compare_exchange_strong(&g->lk_state, &was, GL_LK_HELD))
			return 0;
		if (was == GL_LK_SUSPECT) {
			/* another client may have written before the re-take */
			gl_cache_drop_all(&g->cache);
			sc_log(SC_LOG_WARNING, "stackcrypt: gluster: %s: connected again; the "
			       "one-mount lock on %s is held again\n", g->url, g->lk_name);
		}
		return 0;
	}
	if (ret != -EBUSY) {
		/*
		 * Away (ENOTCONN, logged by gl_err) or failing otherwise: try
		 * again later.  The callers get ENOTCONN either way (the lock,
		 * not their object, is what failed), so any other reason is
		 * logged here: a mount failing every write must say why.
		 */
		atomic_store(&g->lk_state, GL_LK_SUSPECT);
		if (ret != -ENOTCONN)
			retake_failed(g, -ret);
		return -ENOTCONN;
	}
	atomic_store(&g->lk_state, GL_LK_LOST);
	sc_log(SC_LOG_ERR, "stackcrypt: gluster: error: %s: another client took the one-mount "
	       "lock on %s while this one was disconnected: every write fails with EIO from "
	       "now on (unmount; the other mount has the volume)\n", g->url, g->lk_name);
	return -EIO;
}

/*
 * Before every modifying call of the layer: 0 while the lock is held (or
 * none was taken), else what lock_retake says.
 */
static int lock_guard(struct sc_gluster *g)
{
	int s = atomic_load(&g->lk_state), ret;

	if (s == GL_LK_NONE || s == GL_LK_HELD)
		return 0;
	if (s == GL_LK_LOST)
		return -EIO;
	pthread_mutex_lock(&g->lk_mutex);
	ret = atomic_load(&g->lk_state) == GL_LK_HELD ? 0 : lock_retake(g);
	pthread_mutex_unlock(&g->lk_mutex);
	return ret;
}

/*
 * The keeper: once a second, the lock is taken again whatever the state
 * says, which also covers a brick restart that no call of this process
 * saw (an idle mount).  Ends when the lock is lost (the process lives on,
 * failing writes) and with the process.
 */
static void *lock_keeper(void *arg)
{
	struct sc_gluster *g = arg;
	const struct timespec second = { .tv_sec = 1 };

	while (atomic_load(&g->lk_state) != GL_LK_LOST) {
		nanosleep(&second, NULL);
		pthread_mutex_lock(&g->lk_mutex);
		lock_retake(g);
		pthread_mutex_unlock(&g->lk_mutex);
	}
	return NULL;
}

int sc_gluster_lock(struct sc_gluster *g, const char *name)
{
	pthread_attr_t attr;
	pthread_t t;
	int ret;

	if (g->lk_fd)
		return -EALREADY;
	if (strlen(name) >= sizeof(g->lk_name))
		return -ENAMETOOLONG;
	ret = lock_open(g, name, 0, mount_owner, sizeof(mount_owner), &g->lk_fd);
	if (ret)
		return ret;
	/*
	 * lk_fd stays open, and locked, while the process lives; the bricks'
	 * locks translator drops the lock when this client disconnects (the
	 * daemon exits or dies, or the brick restarts: the keeper's case).
	 */
	snprintf(g->lk_name, sizeof(g->lk_name), "%s", name);
	g->lk_test_fifo = getenv("SC_TEST_GLUSTER_RETAKE_FIFO");
	if (g->lk_test_fifo && !*g->lk_test_fifo)
		g->lk_test_fifo = NULL;
	atomic_store(&g->lk_state, GL_LK_HELD);
	ret = pthread_attr_init(&attr);
	if (ret == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ret = pthread_create(&t, &attr, lock_keeper, g);
		pthread_attr_destroy(&attr);
	}
	if (ret)	/* the guard alone still covers what this process saw */
		sc_log(SC_LOG_WARNING, "stackcrypt: gluster: %s: no thread to keep the lock "
		       "across brick restarts: %s\n", g->url, strerror(ret));
	return 0;
}

int sc_gluster_lock_config(struct sc_gluster *g, const char *name)
{
	struct glfs_fd *fd;

	/* left open, and locked, until the process exits (a command's) */
	return lock_open(g, name, 1, config_owner, sizeof(config_owner), &fd);
}

/* ---- what the gluster backing (fs/backing/gluster.c) uses of a connection -------- */

const char *sc_gluster_url(const struct sc_gluster *g)
{
	return g->url;
}

struct glfs *sc_gluster_fs(struct sc_gluster *g)
{
	return g->fs;
}

struct glfs_object *sc_gluster_root_object(struct sc_gluster *g)
{
	return g->root;
}

int sc_gluster_errno(struct sc_gluster *g)
{
	return gl_err(g);
}

void sc_gluster_fix_stat(struct sc_gluster *g, struct stat *st)
{
	fix_stat(g, st);
}

/* ---- lifecycle and identity ---------------------------------------------- */

#define G(xl)	(((struct gl_priv *)(xl)->priv)->g)

static int gl_init(struct sc_xl *xl, struct sc_obj *root, struct sc_xl_conf *conf)
{
	struct gl_priv *gp = xl->priv;

	gp->writeback = conf->writeback;
	return obj_of(gp->g, root->fd) ? 0 : -EBADF;
}

static void gl_destroy(struct sc_xl *xl)
{
	stash_drop(G(xl), -1);
	free(xl->priv);
	xl->priv = NULL;
}

/* Every object keeps its glfs_object: nothing to trade, nothing to count. */
static void gl_adopt(struct sc_xl *xl, struct sc_obj *obj, const struct stat *st)
{
	(void)xl;
	(void)obj;
	(void)st;
}

static void gl_forget(struct sc_xl *xl, struct sc_obj *obj)
{
	(void)xl;
	(void)obj;	/* ->drop_fd lets go of the object */
}

static bool gl_same(struct sc_xl *xl, const struct sc_obj *obj, int fd)
{
	struct gl_slot *a = slot_at(G(xl), obj->fd), *b = slot_at(G(xl), fd);

	if (!a || !b || a->kind != GL_OBJ || b->kind != GL_OBJ)
		return true;	/* cannot tell: one entry per (dev, ino) */
	return !memcmp(a->gfid, b->gfid, GL_GFID_LEN);
}

static void gl_drop_fd(struct sc_xl *xl, int fd)
{
	struct glfs_object *o = obj_of(G(xl), fd);

	if (!o)
		return;
	open_orphan(G(xl), fd);
	stash_drop(G(xl), fd);
	slot_free(G(xl), fd);
	glfs_h_close(o);
}

/* ---- namespace ------------------------------------------------------------ */

/*
 * Directory fd's parent is the directory whose st_ino is pino, as seen
 * when tree_gen was gen (read before the call that saw it): what ".." in
 * its listings takes (dot_ino).  Only a rename moves a directory, and each
 * one moves tree_gen after it ends.
 */
static void parent_put(struct sc_gluster *g, int fd, ino_t pino, unsigned long gen)
{
	struct gl_slot *s = slot_at(g, fd);

	if (!s || !pino)
		return;
	pthread_mutex_lock(&g->lock);
	if (s->kind == GL_OBJ) {
		s->parent_ino = pino;
		s->parent_gen = gen;
	}
	pthread_mutex_unlock(&g->lock);
}

static ino_t parent_get(struct sc_gluster *g, struct gl_slot *s)
{
	ino_t pino = 0;

	pthread_mutex_lock(&g->lock);
	if (s->kind == GL_OBJ &&
	    s->parent_gen == atomic_load_explicit(&g->tree_gen, memory_order_acquire))
		pino = s->parent_ino;
	pthread_mutex_unlock(&g->lock);
	return pino;
}

/* After a lookup or mkdir of name in dir that made *fd_out with st. */
static void parent_seen(struct sc_xl *xl, struct sc_obj *dir, const char *name, int fd,
			const struct stat *st, unsigned long gen)
{
	struct gl_slot *d = slot_at(G(xl), dir->fd);

	if (S_ISDIR(st->st_mode) && d && strcmp(name, ".") && strcmp(name, ".."))
		parent_put(G(xl), fd, d->ino, gen);
}

/* The directory object of dir, or NULL (the caller returns -EBADF). */
#define DIR_OBJ(xl, dir)	obj_of(G(xl), (dir)->fd)

static int child_out(struct sc_xl *xl, struct glfs_object *o, struct stat *st, int *fd_out)
{
	int fd;

	if (!o)
		return gl_err(G(xl));
	fix_stat(G(xl), st);
	fd = hand_up(G(xl), o, st);
	if (fd < 0)
		return fd;
	*fd_out = fd;
	return 0;
}

static int gl_lookup(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		     int *fd_out, struct stat *st)
{
	struct glfs_object *d = DIR_OBJ(xl, dir), *o;
	unsigned long gen, tgen;
	struct timespec at;
	int ret;

	if (!d)
		return -EBADF;
	/*
	 * Listed just before (stash_take): the kernel checked the search
	 * permission already (default_permissions), and the attributes are
	 * those the lookup would get, fixed.  Both serve one getattr, within
	 * the listing's time and generation still.
	 */
	/* before the listing's or the lookup's brick call: a rename that ends during it counts */
	tgen = atomic_load_explicit(&G(xl)->tree_gen, memory_order_acquire);
	o = stash_take(G(xl), dir->fd, name, st, &gen, &at);
	if (o) {
		ret = hand_up(G(xl), o, st);
		if (ret < 0)
			return ret;
		*fd_out = ret;
		fresh_put(G(xl), *fd_out, gen, st, &at);
		parent_seen(xl, dir, name, *fd_out, st, tgen);
		return 0;
	}
	sync_creds();
	errno = 0;
	/* read before the lookup: a change that ends during it counts (fresh_take) */
	gen = atomic_load_explicit(&G(xl)->mod_gen, memory_order_acquire);
	/* libgfapi answers a missing name with NULL and errno ENOENT */
	ret = child_out(xl, glfs_h_lookupat(G(xl)->fs, d, name, st, 0), st, fd_out);
	if (ret == 0) {
		fresh_put(G(xl), *fd_out, gen, st, NULL);
		parent_seen(xl, dir, name, *fd_out, st, tgen);
	}
	return ret;
}

static int gl_getattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      struct stat *st)
{
	struct glfs_fd *f = fh ? fd_of(G(xl), fh->fd) : NULL;
	struct glfs_object *o;
	int ret;

	sync_creds();
	if (f) {
		ret = glfs_fstat(f, st);
	} else {
		if (fresh_take(G(xl), obj->fd, st))
			return 0;	/* already fixed by gl_lookup */
		o = obj_of(G(xl), obj->fd);
		if (!o)
			return -EBADF;
		ret = glfs_h_stat(G(xl)->fs, o, st);
		if (ret < 0 && (errno == ENOENT || errno == ESTALE) &&
		    (f = open_any(G(xl), obj->fd))) {
			/* unlinked but open: fstat(2) on it must work, as on Linux */
			ret = glfs_fstat(f, st);
			glfs_close(f);
		}
	}
	if (ret < 0)
		return gl_err(G(xl));
	fix_stat(G(xl), st);
	return 0;
}

static int gl_setattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      const struct stat *attr, int valid, struct stat *st)
{
	struct glfs_object *o = obj_of(G(xl), obj->fd);
	struct glfs_fd *f = fh ? fd_of(G(xl), fh->fd) : NULL;
	struct stat sb = *attr;
	struct timespec now;
	int gv = 0;

	if (!o)
		return -EBADF;
	sync_creds();
	RET_IF_UNLOCKED(G(xl));
	if ((valid & SC_SET_MODE) && S_ISLNK(obj->type))
		return -EOPNOTSUPP;	/* Linux: symlink modes are fixed */
	if (valid & SC_SET_SIZE) {
		int r = f ? glfs_ftruncate(f, attr->st_size, NULL, NULL) :
			    glfs_h_truncate(G(xl)->fs, o, attr->st_size);

		cache_cut(G(xl), obj, attr->st_size, 0);	/* a failed one too: it may have cut */
		if (r < 0)
			return gl_err(G(xl));
	}
	if (valid & SC_SET_MODE)
		gv |= GFAPI_SET_ATTR_MODE;
	if (valid & SC_SET_UID)
		gv |= GFAPI_SET_ATTR_UID;
	if (valid & SC_SET_GID)
		gv |= GFAPI_SET_ATTR_GID;
	clock_gettime(CLOCK_REALTIME, &now);
	if (valid & (SC_SET_ATIME | SC_SET_ATIME_NOW)) {
		gv |= GFAPI_SET_ATTR_ATIME;
		if (valid & SC_SET_ATIME_NOW)
			sb.st_atim = now;
	}
	if (valid & (SC_SET_MTIME | SC_SET_MTIME_NOW)) {
		gv |= GFAPI_SET_ATTR_MTIME;
		if (valid & SC_SET_MTIME_NOW)
			sb.st_mtim = now;
	}
	if (gv && glfs_h_setattrs(G(xl)->fs, o, &sb, gv) < 0)
		return gl_err(G(xl));
	return gl_getattr(xl, obj, fh, st);
}

static int gl_mknod(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		    mode_t mode, dev_t rdev, int *fd_out, struct stat *st)
{
	struct glfs_object *d = DIR_OBJ(xl, dir);

	if (!d)
		return -EBADF;
	sync_creds();
	RET_IF_UNLOCKED(G(xl));
	errno = 0;
	return child_out(xl, glfs_h_mknod(G(xl)->fs, d, name, mode, rdev, st), st, fd_out);
}

static int gl_mkdir(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		    mode_t mode, int *fd_out, struct stat *st)
{
	struct glfs_object *d = DIR_OBJ(xl, dir);
	unsigned long tgen;
	int ret;

	if (!d)
		return -EBADF;
	sync_creds();
	RET_IF_UNLOCKED(G(xl));
	errno = 0;
	tgen = atomic_load_explicit(&G(xl)->tree_gen, memory_order_acquire);
	ret = child_out(xl, glfs_h_mkdir(G(xl)->fs, d, name, mode, st), st, fd_out);
	if (ret == 0)
		parent_seen(xl, dir, name, *fd_out, st, tgen);
	return ret;
}

static int gl_symlink(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      const char *target, int *fd_out, struct stat *st)
{
	struct glfs_object *d = DIR_OBJ(xl, dir);

	if (!d)
		return -EBADF;
	sync_creds();
	RET_IF_UNLOCKED(G(xl));
	errno = 0;
	return child_out(xl, glfs_h_symlink(G(xl)->fs, d, name, target, st), st, fd_out);
}

static int gl_link(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		   const char *newname, struct stat *st)
{
	struct glfs_object *o = obj_of(G(xl), obj->fd), *d = DIR_OBJ(xl, newdir);

	if (!o || !d)
		return -EBADF;
	sync_creds();
	RET_IF_UNLOCKED(G(xl));
	if (glfs_h_link(G(xl)->fs, o, d, newname) < 0)
		return gl_err(G(xl));
	if (glfs_h_stat(G(xl)->fs, o, st) < 0)
		return gl_err(G(xl));
	fix_stat(G(xl), st);
	return 0;
}

/*
 * glfs_h_unlink removes a name of any type; unlink(2) and rmdir(2) each
 * remove one kind, so the name is looked up first.  Another client could
 * swap the name's object between the two calls; this mount cannot (the
 * kernel holds the directory's lock across the whole call).
 */
static int remove_name(struct sc_xl *xl, struct sc_obj *dir, const char *name, bool want_dir)
{
	struct glfs_object *d = DIR_OBJ(xl, dir), *o;
	struct stat st;

	if (!d)
		return -EBADF;
	sync_creds();
	RET_IF_UNLOCKED(G(xl));
	errno = 0;
	o = glfs_h_lookupat(G(xl)->fs, d, name, &st, 0);
	if (!o)
		return gl_err(G(xl));
	glfs_h_close(o);
	if (want_dir && !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (!want_dir && S_ISDIR(st.st_mode))
		return -EISDIR;
	return glfs_h_unlink(G(xl)->fs, d, name) < 0 ? gl_err(G(xl)) : 0;
}

static int gl_unlink(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	return remove_name(xl, dir, name, false);
}

static int gl_rmdir(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	return remove_name(xl, dir, name, true);
}

/*
 * RENAME_NOREPLACE, which libgfapi has no call for: as the posix layer's
 * fallback (posix.c, rename_noreplace): a non-directory is linked to its
 * new name (which never replaces) and unlinked from the old; a directory
 * is renamed once its new name is seen free.
 */
static int rename_noreplace(struct sc_xl *xl, struct glfs_object *od, const char *old,
			    struct glfs_object *nd, const char *new)
{
	struct sc_gluster *g = G(xl);
	struct glfs_object *o, *n;
	struct stat st, nst;
	int ret;

	errno = 0;
	o = glfs_h_lookupat(g->fs, od, old, &st, 0);
	if (!o)
		return gl_err(g);
	if (!S_ISDIR(st.st_mode)) {
		ret = glfs_h_link(g->fs, o, nd, new) < 0 ? gl_err(g) : 0;
		glfs_h_close(o);
		if (ret)
			return ret;
		if (glfs_h_unlink(g->fs, od, old) < 0) {
			ret = gl_err(g);
			glfs_h_unlink(g->fs, nd, new);
		}
		return ret;
	}
	glfs_h_close(o);
	errno = 0;
	n = glfs_h_lookupat(g->fs, nd, new, &nst, 0);
	if (n) {
		glfs_h_close(n);
		return -EEXIST;
	}
	if (errno != ENOENT)
		return gl_err(g);
	return glfs_h_rename(g->fs, od, old, nd, new) < 0 ? gl_err(g) : 0;
}

static int rename_brick(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			struct sc_obj *newdir, const char *newname, unsigned int flags)
{
	struct glfs_object *od = DIR_OBJ(xl, dir), *nd = DIR_OBJ(xl, newdir);

	if (!od || !nd)
		return -EBADF;
	sync_creds();
	RET_IF_UNLOCKED(G(xl));
	if (flags == RENAME_NOREPLACE)
		return rename_noreplace(xl, od, name, nd, newname);
	if (flags)
		return -EINVAL;	/* RENAME_EXCHANGE, RENAME_WHITEOUT: no such call */
	return glfs_h_rename(G(xl)->fs, od, name, nd, newname) < 0 ? gl_err(G(xl)) : 0;
}

/* A directory may have moved, whatever came of it: every known parent is void (parent_get). */
static int gl_rename(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		     struct sc_obj *newdir, const char *newname, unsigned int flags)
{
	int ret = rename_brick(xl, dir, name, newdir, newname, flags);

	atomic_fetch_add_explicit(&G(xl)->tree_gen, 1, memory_order_release);
	return ret;
}

static ssize_t gl_readlink(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	struct glfs_object *o = obj_of(G(xl), obj->fd);
	char tmp[PATH_MAX + 1];
	int n;

	if (!o)
		return -EBADF;
	sync_creds();
	/* libgfapi NUL-terminates within bufsiz: read into room for one more */
	n = glfs_h_readlink(G(xl)->fs, o, tmp, sizeof(tmp));
	if (n < 0)
		return gl_err(G(xl));
	n = (int)strnlen(tmp, (size_t)n);
	if ((size_t)n > size)
		n = (int)size;
	memcpy(buf, tmp, n);
	return n;
}

/* libgfapi syncs per file only (glfs_fsync): the layers above sync each file they need. */
static int gl_syncfs(struct sc_xl *xl, struct sc_obj *obj)
{
	(void)xl;
	(void)obj;
	return -EOPNOTSUPP;
}

static int gl_statfs(struct sc_xl *xl, struct sc_obj *obj, struct statvfs *sv)
{
	struct glfs_object *o = obj_of(G(xl), obj->fd);

	if (!o)
		return -EBADF;
	sync_creds();
	return glfs_h_statfs(G(xl)->fs, o, sv) < 0 ? gl_err(G(xl)) : 0;
}

/* ---- extended attributes: none on symlinks, as in the posix layer ---------- */

static ssize_t gl_getxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
			   void *buf, size_t size)
{
	struct glfs_object *o = obj_of(G(xl), obj->fd);
	int n;

	if (S_ISLNK(obj->type))
		return -ENODATA;
	if (!o)
		return -EBADF;
	sync_creds();
	n = glfs_h_getxattrs(G(xl)->fs, o, name, buf, size);
	return n < 0 ? gl_err(G(xl)) : n;
}

static ssize_t gl_listxattr(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	struct glfs_object *o = obj_of(G(xl), obj->fd);
	int n;

	if (S_ISLNK(obj->type))
		return 0;
	if (!o)
		return -EBADF;
	sync_creds();
	n = glfs_h_getxattrs(G(xl)->fs, o, NULL, buf, size);
	return n < 0 ? gl_err(G(xl)) : n;
}

static int gl_setxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
		       const void *value, size_t size, int flags)
{
	struct glfs_object *o = obj_of(G(xl), obj->fd);

	if (S_ISLNK(obj->type))
		return -EPERM;
	if (!o)
		return -EBADF;
	sync_creds();
	RET_IF_UNLOCKED(G(xl));
	return glfs_h_setxattrs(G(xl)->fs, o, name, value, size, flags) < 0 ? gl_err(G(xl)) : 0;
}

static int gl_removexattr(struct sc_xl *xl, struct sc_obj *obj, const char *name)
{
	struct glfs_object *o = obj_of(G(xl), obj->fd);

	if (S_ISLNK(obj->type))
		return -EPERM;
	if (!o)
		return -EBADF;
	sync_creds();
	RET_IF_UNLOCKED(G(xl));
	return glfs_h_removexattrs(G(xl)->fs, o, name) < 0 ? gl_err(G(xl)) : 0;
}

/* ---- files ------------------------------------------------------------------ */

/* As the posix layer's backing_flags (posix.c says why); O_TRUNC done apart. */
static int backing_flags(const struct sc_xl *xl, int flags)
{
	const struct gl_priv *gp = xl->priv;

	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW | O_APPEND | O_TRUNC | O_CLOEXEC);
	if (gp->writeback && (flags & O_ACCMODE) == O_WRONLY)
		flags = (flags & ~O_ACCMODE) | O_RDWR;
	return flags;
}

/* fd handed up as fh->fd (closed on failure). */
static int fh_out(struct sc_xl *xl, struct glfs_fd *f, enum gl_kind kind, struct sc_fh *fh)
{
	int fd = slot_new(G(xl), kind, f);

	if (fd < 0) {
		if (kind == GL_DIR)
			glfs_closedir(f);
		else
			glfs_close(f);
		return fd;
	}
	fh->fd = fd;
	return 0;
}

static int gl_open(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct glfs_object *o = obj_of(G(xl), obj->fd);
	struct glfs_fd *f;
	int ret;

	if (!o)
		return -EBADF;
	sync_creds();
	f = glfs_h_open(G(xl)->fs, o, backing_flags(xl, fh->flags));
	if (!f)
		return gl_err(G(xl));
	/* Linux truncates on O_TRUNC whatever the access mode: by object, as
	 * a read-only fd cannot */
	if (fh->flags & O_TRUNC) {
		ret = glfs_h_truncate(G(xl)->fs, o, 0) < 0 ? gl_err(G(xl)) : 0;
		cache_cut(G(xl), obj, 0, 0);
		if (ret < 0) {
			glfs_close(f);
			return ret;
		}
	}
	ret = fh_out(xl, f, GL_FILE, fh);
	if (!ret)
		open_link(G(xl), obj->fd, fh->fd);
	return ret;
}

static int gl_create(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		     mode_t mode, struct sc_fh *fh, int *fd_out, struct stat *st)
{
	struct glfs_object *d = DIR_OBJ(xl, dir), *o;
	struct glfs_fd *f = NULL;
	int fd, ret;

	if (!d)
		return -EBADF;
	sync_creds();
	RET_IF_UNLOCKED(G(xl));
	errno = 0;
	o = glfs_h_creat_open(G(xl)->fs, d, name,
			      backing_flags(xl, fh->flags) | O_CREAT | (fh->flags & (O_EXCL | O_TRUNC)),
			      mode, st, &f);
	if (!o)
		return gl_err(G(xl));
	fix_stat(G(xl), st);
	fd = hand_up(G(xl), o, st);
	if (fd < 0) {
		glfs_close(f);
		return fd;
	}
	/* O_TRUNC on a file that was there: the front end's object of it may hold pages */
	if (fh->flags & O_TRUNC)
		gl_cache_cut(&G(xl)->cache, slot_at(G(xl), fd)->gfid, 0, 0);
	ret = fh_out(xl, f, GL_FILE, fh);
	if (ret < 0) {
		gl_drop_fd(xl, fd);
		return ret;
	}
	open_link(G(xl), fd, fh->fd);
	*fd_out = fd;
	return 0;
}

/* The GFID of obj for the read cache, or NULL (not an object of ours). */
static const unsigned char *cache_key(struct sc_gluster *g, const struct sc_obj *obj)
{
	struct gl_slot *s = obj ? slot_at(g, obj->fd) : NULL;

	return s && cache_keyed(s) ? s->gfid : NULL;
}

struct brick_read {
	struct sc_gluster	*g;
	struct glfs_fd		*f;
};

/* Reads until size bytes or EOF: a short count is not EOF. */
static ssize_t brick_read(void *arg, void *buf, size_t size, off_t off)
{
	struct brick_read *br = arg;
	size_t done = 0;

	while (done < size) {
		ssize_t n = glfs_pread(br->f, (char *)buf + done, size - done, off + done, 0, NULL);

		if (n < 0)
			return done ? (ssize_t)done : gl_err(br->g);
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

/* Through the read cache (cache.c), whole pages of the brick on a miss. */
static ssize_t gl_read(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		       void *buf, size_t size, off_t off)
{
	struct brick_read br = { G(xl), fd_of(G(xl), fh->fd) };
	const unsigned char *key = cache_key(G(xl), obj);

	if (!br.f)
		return -EBADF;
	/*
	 * Only the one-mount lock makes what the cache holds the bricks'
	 * bytes: without it (a lost connection, the lock lost, or a user of
	 * the layer that took none) the brick answers.
	 */
	if (!key || atomic_load(&G(xl)->lk_state) != GL_LK_HELD)
		return brick_read(&br, buf, size, off);
	return gl_cache_read(&G(xl)->cache, key, buf, size, off, brick_read, &br);
}

static ssize_t gl_write(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			const void *buf, size_t size, off_t off)
{
	struct glfs_fd *f = fd_of(G(xl), fh->fd);
	const unsigned char *key = cache_key(G(xl), obj);
	struct gl_cache_op w = { 0 };
	size_t done = 0;
	ssize_t ret = 0;

	if (!f)
		return -EBADF;
	RET_IF_UNLOCKED(G(xl));
	if (key)
		gl_cache_write_begin(&G(xl)->cache, key, size, off, &w);
	while (done < size) {
		ssize_t n = glfs_pwrite(f, (const char *)buf + done, size - done, off + done, 0,
					NULL, NULL);

		if (n <= 0) {
			ret = n < 0 ? gl_err(G(xl)) : -EIO;
			break;
		}
		done += n;
	}
	/* a failed write may have reached the brick in part: its range is cut */
	if (key)
		gl_cache_write_end(&G(xl)->cache, &w, ret ? NULL : buf);
	return done ? (ssize_t)done : ret;
}

/*
 * close(2) of the user's fd: close a duplicate of ours, which sends
 * GlusterFS's flush, so that write-behind hands over what it holds and
 * reports a failed write now rather than never.
 */
static int gl_flush(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct glfs_fd *f = fd_of(G(xl), fh->fd), *dup;

	(void)obj;
	if (!f)
		return -EBADF;
	dup = glfs_dup(f);
	if (!dup)
		return gl_err(G(xl));
	return glfs_close(dup) < 0 ? gl_err(G(xl)) : 0;
}

/* fsync and fsyncdir alike. */
static int gl_fsync(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int datasync)
{
	struct glfs_fd *f = fd_of(G(xl), fh->fd);

	(void)obj;
	if (!f)
		return -EBADF;
	return (datasync ? glfs_fdatasync(f, NULL, NULL) : glfs_fsync(f, NULL, NULL)) < 0 ?
	       gl_err(G(xl)) : 0;
}

static int gl_release(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct glfs_fd *f = fd_of(G(xl), fh->fd);

	(void)obj;
	if (f) {
		open_unlink(G(xl), fh->fd);
		slot_free(G(xl), fh->fd);
		glfs_close(f);
	}
	fh->fd = -1;
	return 0;
}

static int fallocate_brick(struct sc_xl *xl, struct sc_fh *fh, int mode, off_t off, off_t len)
{
	struct glfs_fd *f = fd_of(G(xl), fh->fd);
	int keep = !!(mode & FALLOC_FL_KEEP_SIZE);

	if (!f)
		return -EBADF;
	RET_IF_UNLOCKED(G(xl));
	if (off < 0 || len <= 0)
		return -EINVAL;
	switch (mode & ~FALLOC_FL_KEEP_SIZE) {
	case 0:
		break;
	case FALLOC_FL_PUNCH_HOLE:
		if (!keep)
			return -EOPNOTSUPP;	/* as Linux: a hole keeps the size */
		return glfs_discard(f, off, (size_t)len) < 0 ? gl_err(G(xl)) : 0;
	case FALLOC_FL_ZERO_RANGE:
		/* a punched hole, then the range allocated as asked (top of file) */
		if (glfs_discard(f, off, (size_t)len) < 0)
			return gl_err(G(xl));
		break;
	default:
		return -EOPNOTSUPP;
	}
	return glfs_fallocate(f, keep, off, (size_t)len) < 0 ? gl_err(G(xl)) : 0;
}

/* Holes and zeroed ranges change bytes: the range is cut, whatever came of the call. */
static int gl_fallocate(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			int mode, off_t off, off_t len)
{
	int ret = fallocate_brick(xl, fh, mode, off, len);

	if (ret != -EBADF && ret != -EINVAL)
		cache_cut(G(xl), obj, off, len);
	return ret;
}

static off_t gl_lseek(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      off_t off, int whence)
{
	struct glfs_fd *f = fd_of(G(xl), fh->fd);
	off_t r;

	(void)obj;
	if (!f)
		return -EBADF;
	r = glfs_lseek(f, off, whence);
	return r < 0 ? gl_err(G(xl)) : r;
}

static ssize_t gl_copy_file_range(struct sc_xl *xl,
				  struct sc_obj *obj_in, struct sc_fh *fh_in, off_t off_in,
				  struct sc_obj *obj_out, struct sc_fh *fh_out, off_t off_out,
				  size_t len, int flags)
{
	struct glfs_fd *in = fd_of(G(xl), fh_in->fd), *out = fd_of(G(xl), fh_out->fd);
	ssize_t n;

	off_t at = off_out;

	(void)obj_in;
	if (!in || !out)
		return -EBADF;
	RET_IF_UNLOCKED(G(xl));
	n = glfs_copy_file_range(in, &off_in, out, &off_out, len, (unsigned int)flags,
				 NULL, NULL, NULL);
	n = n < 0 ? gl_err(G(xl)) : n;
	cache_cut(G(xl), obj_out, at, (off_t)len);
	return n;
}

/* ---- directories ------------------------------------------------------------ */

static int gl_opendir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct glfs_object *o = obj_of(G(xl), obj->fd);
	unsigned long gen;
	struct timespec at;
	struct glfs_fd *f;
	int ret;

	if (!o)
		return -EBADF;
	sync_creds();
	/* the listing's start, for its entries (stash_put): before it reads */
	gen = atomic_load_explicit(&G(xl)->mod_gen, memory_order_acquire);
	clock_gettime(CLOCK_MONOTONIC, &at);
	f = glfs_h_opendir(G(xl)->fs, o);
	if (!f)
		return gl_err(G(xl));
	ret = fh_out(xl, f, GL_DIR, fh);
	if (ret == 0) {
		struct gl_slot *s = slot_at(G(xl), fh->fd);

		s->fresh_gen = gen;
		s->fresh_at = at;
	}
	return ret;
}

/*
 * The bricks give "." and ".." their own inode numbers, not the GFID's
 * that stat gives: ask for those, keeping the brick's when the lookup
 * fails.  "." is the directory itself, whose number its slot knows
 * (hand_up); ".." is its parent, whose number the lookup or mkdir that
 * made the slot saw (parent_seen) unless a rename came since: no lookup,
 * one LOOKUP less at the brick for each per directory listed (cp -a,
 * ls -R, find, rm -r).  A lookup of ".." is kept for the next listing.
 */
static ino_t dot_ino(struct sc_xl *xl, struct sc_obj *dir, const char *name, ino_t ino)
{
	struct glfs_object *d = obj_of(G(xl), dir->fd), *o;
	struct gl_slot *s = slot_at(G(xl), dir->fd);
	unsigned long tgen;
	struct stat st;
	ino_t pino;

	if (!d)
		return ino;
	if (!name[1])
		return s->ino ? s->ino : ino;
	pino = parent_get(G(xl), s);
	if (pino)
		return pino;
	tgen = atomic_load_explicit(&G(xl)->tree_gen, memory_order_acquire);
	o = glfs_h_lookupat(G(xl)->fs, d, name, &st, 0);
	if (!o)
		return ino;
	glfs_h_close(o);
	parent_put(G(xl), dir->fd, st.st_ino, tgen);
	return st.st_ino;
}

#define GL_XRDP_WANT	(GFAPI_XREADDIRP_STAT | GFAPI_XREADDIRP_HANDLE)

/*
 * The next entry of f into d (*res: NULL at the end), by READDIRP when the
 * stream allows it, with its attributes (fixed) in *st and its object (our
 * own copy) in *obj when the brick gave them (else *obj NULL, st_mode 0).
 * 0, or -1 with errno.
 */
static int next_entry(struct sc_gluster *g, struct gl_slot *ds, struct glfs_fd *f,
		      struct dirent *d, struct dirent **res, struct stat *st,
		      struct glfs_object **obj)
{
	glfs_xreaddirp_stat_t *xs = NULL;
	struct glfs_object *xo;
	struct stat *xst;
	off_t pos;
	int fl;

	*obj = NULL;
	st->st_mode = 0;
	if (ds->no_plus)
		return glfs_readdir_r(f, d, res);
	pos = glfs_telldir(f);
	fl = glfs_xreaddirplus_r(f, GL_XRDP_WANT, &xs, d, res);
	if (fl < 0) {
		/* as before: names only (READDIR), from where the stream stood */
		if (xs)
			glfs_free(xs);
		ds->no_plus = true;
		glfs_seekdir(f, pos);
		errno = 0;
		return glfs_readdir_r(f, d, res);
	}
	if (*res && xs && (fl & GFAPI_XREADDIRP_STAT) &&
	    (xst = glfs_xreaddirplus_get_stat(xs)) && xst->st_mode && xst->st_ino) {
		*st = *xst;
		fix_stat(g, st);
		if ((fl & GFAPI_XREADDIRP_HANDLE) && (xo = glfs_xreaddirplus_get_object(xs)))
			*obj = glfs_object_copy(xo);	/* an inode reference: no round trip */
	}
	if (xs)
		glfs_free(xs);
	return 0;
}

static int gl_readdir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off,
		      int (*fill)(void *ctx, const struct sc_dirent *de), void *ctx)
{
	struct glfs_fd *f = fd_of(G(xl), fh->fd);
	struct gl_slot *ds = slot_at(G(xl), fh->fd);

	if (!f)
		return -EBADF;
	/* seek only when asked for another place than where the stream stands */
	if (glfs_telldir(f) != off)
		glfs_seekdir(f, off);
	for (;;) {
		struct glfs_object *o;
		struct sc_dirent de;
		struct dirent d, *res;
		struct stat st;
		bool dot;

		errno = 0;
		if (next_entry(G(xl), ds, f, &d, &res, &st, &o) != 0)
			return gl_err(G(xl));
		if (!res)
			return 0;
		dot = d.d_name[0] == '.' && (!d.d_name[1] || (d.d_name[1] == '.' && !d.d_name[2]));
		de.name = d.d_name;
		de.ino = d.d_ino;
		de.type = d.d_type == DT_UNKNOWN ? 0 : DTTOIF(d.d_type);
		if (dot) {
			de.ino = dot_ino(xl, obj, d.d_name, d.d_ino);
			if (o)
				glfs_h_close(o);
		} else if (st.st_mode) {
			de.ino = st.st_ino;
			de.type = st.st_mode & S_IFMT;
			/* before fill: a READDIRPLUS reply looks the name up inside it */
			if (o)
				stash_put(G(xl), obj->fd, d.d_name, o, &st, ds->fresh_gen,
					  &ds->fresh_at);
		}
		de.next_off = d.d_off;
		if (fill(ctx, &de))
			return 0;	/* the stream stands past this entry: the next call seeks back */
	}
}

static int gl_releasedir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct glfs_fd *f = fd_of(G(xl), fh->fd);

	(void)obj;
	if (f) {
		slot_free(G(xl), fh->fd);
		glfs_closedir(f);
	}
	fh->fd = -1;
	return 0;
}

/*
 * The calls that may change attributes, each between two bumps of mod_gen
 * (fresh_take): the one before keeps a lookup's attributes from serving a
 * ->getattr made inside the call (gl_setattr's), the one after from serving
 * one made after a change that was under way during the lookup.
 */
#define GL_MOD_IF(cond, type, op, params, args) \
	static type op##_mod params \
	{ \
		bool mod_ = (cond); \
		type r_; \
		if (mod_) \
			mod_done(G(xl)); \
		r_ = op args; \
		if (mod_) \
			mod_done(G(xl)); \
		return r_; \
	}
#define GL_MOD(...)	GL_MOD_IF(true, __VA_ARGS__)
/*
 * A read-only open file changes nothing when it is opened, flushed or
 * released (the kernel sends RELEASE after close(2) returns, so it would
 * land between the LOOKUP and the OPEN of the next file a reader opens).
 */
#define FH_WRITES(fh)	(((fh)->flags & O_ACCMODE) != O_RDONLY || ((fh)->flags & O_TRUNC))
GL_MOD(int, gl_setattr, (struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 const struct stat *attr, int valid, struct stat *st),
       (xl, obj, fh, attr, valid, st))
GL_MOD(int, gl_mknod, (struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		       dev_t rdev, int *fd_out, struct stat *st),
       (xl, dir, name, mode, rdev, fd_out, st))
GL_MOD(int, gl_mkdir, (struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		       int *fd_out, struct stat *st),
       (xl, dir, name, mode, fd_out, st))
GL_MOD(int, gl_symlink, (struct sc_xl *xl, struct sc_obj *dir, const char *name,
			 const char *target, int *fd_out, struct stat *st),
       (xl, dir, name, target, fd_out, st))
GL_MOD(int, gl_link, (struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		      const char *newname, struct stat *st),
       (xl, obj, newdir, newname, st))
GL_MOD(int, gl_unlink, (struct sc_xl *xl, struct sc_obj *dir, const char *name),
       (xl, dir, name))
GL_MOD(int, gl_rmdir, (struct sc_xl *xl, struct sc_obj *dir, const char *name),
       (xl, dir, name))
GL_MOD(int, gl_rename, (struct sc_xl *xl, struct sc_obj *dir, const char *name,
			struct sc_obj *newdir, const char *newname, unsigned int flags),
       (xl, dir, name, newdir, newname, flags))
GL_MOD(int, gl_setxattr, (struct sc_xl *xl, struct sc_obj *obj, const char *name,
			  const void *value, size_t size, int flags),
       (xl, obj, name, value, size, flags))
GL_MOD(int, gl_removexattr, (struct sc_xl *xl, struct sc_obj *obj, const char *name),
       (xl, obj, name))
GL_MOD_IF(FH_WRITES(fh), int, gl_open, (struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh),
       (xl, obj, fh))
GL_MOD(int, gl_create, (struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
			struct sc_fh *fh, int *fd_out, struct stat *st),
       (xl, dir, name, mode, fh, fd_out, st))
/* a read moves the atime */
GL_MOD(ssize_t, gl_read, (struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, void *buf,
			  size_t size, off_t off),
       (xl, obj, fh, buf, size, off))
GL_MOD(ssize_t, gl_write, (struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			   const void *buf, size_t size, off_t off),
       (xl, obj, fh, buf, size, off))
/* these end what write-behind still holds */
GL_MOD_IF(FH_WRITES(fh), int, gl_flush, (struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh),
       (xl, obj, fh))
GL_MOD(int, gl_fsync, (struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int datasync),
       (xl, obj, fh, datasync))
GL_MOD_IF(FH_WRITES(fh), int, gl_release, (struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh),
       (xl, obj, fh))
GL_MOD(int, gl_fallocate, (struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int mode,
			   off_t off, off_t len),
       (xl, obj, fh, mode, off, len))
GL_MOD(ssize_t, gl_copy_file_range, (struct sc_xl *xl, struct sc_obj *obj_in,
				     struct sc_fh *fh_in, off_t off_in, struct sc_obj *obj_out,
				     struct sc_fh *fh_out, off_t off_out, size_t len, int flags),
       (xl, obj_in, fh_in, off_in, obj_out, fh_out, off_out, len, flags))

static const struct sc_xl_ops gl_ops = {
	.name			= "gluster",
	.init			= gl_init,
	.destroy		= gl_destroy,
	.forget			= gl_forget,
	.adopt			= gl_adopt,
	.same			= gl_same,
	.drop_fd		= gl_drop_fd,
	.lookup			= gl_lookup,
	.getattr		= gl_getattr,
	.setattr		= gl_setattr_mod,
	.mknod			= gl_mknod_mod,
	.mkdir			= gl_mkdir_mod,
	.symlink		= gl_symlink_mod,
	.link			= gl_link_mod,
	.unlink			= gl_unlink_mod,
	.rmdir			= gl_rmdir_mod,
	.rename			= gl_rename_mod,
	.readlink		= gl_readlink,
	.statfs			= gl_statfs,
	.syncfs			= gl_syncfs,
	.getxattr		= gl_getxattr,
	.listxattr		= gl_listxattr,
	.setxattr		= gl_setxattr_mod,
	.removexattr		= gl_removexattr_mod,
	.open			= gl_open_mod,
	.create			= gl_create_mod,
	.read			= gl_read_mod,
	.write			= gl_write_mod,
	.flush			= gl_flush_mod,
	.fsync			= gl_fsync_mod,
	.release		= gl_release_mod,
	.fallocate		= gl_fallocate_mod,
	.lseek			= gl_lseek,
	.copy_file_range	= gl_copy_file_range_mod,
	.opendir		= gl_opendir,
	.readdir		= gl_readdir,
	.fsyncdir		= gl_fsync_mod,
	.releasedir		= gl_releasedir,
};

int sc_gluster_xl_new(struct sc_gluster *g, struct sc_xl **out)
{
	struct gl_priv *gp;
	struct sc_xl *xl;

	if (!g)
		return -EINVAL;
	xl = calloc(1, sizeof(*xl));
	if (!xl)
		return -ENOMEM;
	gp = calloc(1, sizeof(*gp));
	if (!gp) {
		free(xl);
		return -ENOMEM;
	}
	gp->g = g;
	xl->priv = gp;
	xl->ops = &gl_ops;
	xl->below = NULL;
	xl->id = 0;
	*out = xl;
	return 0;
}
