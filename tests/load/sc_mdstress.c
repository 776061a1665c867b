// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sc_mdstress.c - mixed metadata + data stress: T threads (default 8) race on
 * one directory tree, then the final tree is compared with an exact model,
 * before and after a remount.
 *
 *   sc_mdstress [-t THREADS] [-n OPS_PER_THREAD] [-S SEED] [-m MAX_FILE]
 *               [-R REMOUNT_CMD] [-F] DIR
 *
 * The tree: DIR/d0..d3 (fixed), each holding names n0..n15 that come and go
 * as regular files (with hard links) or empty directories.  Every thread
 * runs OPS_PER_THREAD random operations drawn from its own PRNG (seed + the
 * thread number; the seed is printed): create (O_EXCL), reopen (sometimes
 * O_TRUNC), close, pwrite at random offsets and lengths, pread (checked),
 * ftruncate, truncate by path, fsync, lstat (checked), unlink, rename
 * (within and across directories, over files, over empty directories, onto
 * hard links of itself), link, mkdir, rmdir.  All threads draw names from
 * the same 64 slots, so they collide on names constantly.
 *
 * Why the model is exact (checked state, not linearizability):
 *   - Namespace.  Each directory has a mutex.  A namespace operation locks
 *     the directory (or both, in index order, for rename/link across two)
 *     and holds the lock across the system call AND the model update, so the
 *     model of those directories is exactly what the kernel saw when it ran
 *     the call.  The expected result, errno included, is therefore known in
 *     advance and is checked for every call.  Operations on different
 *     directories run concurrently with each other.
 *   - Contents.  A regular file (an inode, the model "object") belongs to
 *     the thread that created it.  Only the owner writes, truncates or reads
 *     it, through its own open fds, without any lock -- so content operations
 *     of all threads run in parallel with each other and with renames,
 *     unlinks and links of the very same files by other threads.  A file
 *     unlinked or renamed over while its owner has it open stays writable
 *     and is checked through that fd.  Truncate-by-path and reopen go
 *     through a name and so also hold that directory's lock, which pins the
 *     name to the owner's object.
 *   - Link counts change only under the locks of the directories involved,
 *     and are compared with st_nlink only at the end.
 * At the end, with all threads joined: every open file is compared with its
 * model through its fd, then closed; then DIR is walked -- exact name sets,
 * types, sizes, st_nlink, hard links sharing one st_ino and distinct files
 * not sharing one, and every file's contents (XXH3 of the whole file against
 * XXH3 of the model, first differing byte on a mismatch).  With -R the
 * command (e.g. "$SC_REMOUNT") runs after that and the walk is repeated, so
 * the data is read back through a fresh mount.
 *
 * -F (self-test) flips one byte of one live file's model before the final
 * check: the run must then fail (exit 1; registered with should_fail).  So
 * that any other failure cannot pass for the expected one, with -F a
 * failure during the run itself, or no mismatch found, exits 0.
 *
 * Exit status: 0 pass, 1 mismatch or unexpected system call result (all
 * printed), 2 bad command line or setup failure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "sc_rand.h"

#define NDIRS		4
#define NNAMES		16
#define MAX_THREADS	64
#define MAX_OPEN	12	/* open fds per thread */
#define MAX_IO		16384	/* longest single write/read */

enum obj_type { OBJ_FILE, OBJ_DIR };

/*
 * One inode of the model.  type/owner/id are set once; fd, data and size
 * are touched only by the owner thread (or after all threads joined); nlink
 * and refs change atomically under the directory locks of other threads.
 * refs = nlink + (fd open): whoever drops it to zero frees data -- after
 * that no thread can reach the object again (no name, no fd), because a
 * name can only be added (link) from an existing name.
 */
struct obj {
	uint64_t id;
	enum obj_type type;
	int owner;
	int nlink;
	int refs;
	int fd;
	unsigned char *data;	/* max_file bytes, zero beyond size */
	size_t size;
	ino_t ino;		/* seen during a final walk, 0 = not yet */
	struct obj *all_next;	/* owner's list of every object it made */
};

struct dir {
	pthread_mutex_t lock;
	struct obj *ent[NNAMES];
};

enum op {
	OP_CREATE, OP_REOPEN, OP_CLOSE, OP_WRITE, OP_READ, OP_FTRUNC,
	OP_PTRUNC, OP_FSYNC, OP_STAT, OP_UNLINK, OP_RENAME, OP_LINK,
	OP_MKDIR, OP_RMDIR, OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
	"create", "reopen", "close", "write", "read", "ftruncate",
	"truncate", "fsync", "lstat", "unlink", "rename", "link",
	"mkdir", "rmdir",
};
/* Weights (sum 100): data ops about half, so both kinds overlap. */
static const int op_weight[OP_COUNT] = {
	11, 6, 4, 21, 9, 6, 3, 1, 6, 7, 13, 5, 4, 4,
};

struct thread {
	pthread_t tid;
	int no;
	uint64_t rng;
	struct obj *open[MAX_OPEN];
	int nopen;
	struct obj *all;
	unsigned char buf[MAX_IO];
	unsigned char rbuf[MAX_IO];
	uint64_t ops[OP_COUNT];		/* calls that succeeded */
	uint64_t errs[OP_COUNT];	/* calls that failed as the model said */
	uint64_t bytes_written, bytes_read;
	uint64_t nlink_races;		/* see kernel_nlink_race() */
};

static const char *root;
static size_t max_file = 128 * 1024;
static int nthreads = 8;
static long ops_per_thread = 2500;
static struct dir dirs[NDIRS];
static pthread_barrier_t start_barrier;
static uint64_t next_id = 1;
static int failures;		/* atomic */
static int stop;		/* atomic: a thread failed, the others stop */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sc_mdstress: FAIL: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	__atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
}

static uint64_t rnd(struct thread *t)
{
	return sc_splitmix64(&t->rng);
}

static size_t rnd_below(struct thread *t, size_t n)
{
	return (size_t)sc_rand_below(&t->rng, n);
}

/* A length that hits the interesting cases: tiny, unit-sized, odd, large. */
static size_t rnd_len(struct thread *t)
{
	switch (rnd_below(t, 4)) {
	case 0: return 1 + rnd_below(t, 64);
	case 1: return 4096;
	case 2: return 1 + rnd_below(t, 4096);
	default: return 1 + rnd_below(t, MAX_IO);
	}
}

static void path_of(char *out, size_t len, int d, int n)
{
	snprintf(out, len, "%s/d%d/n%d", root, d, n);
}

static struct obj *obj_new(struct thread *t, enum obj_type type)
{
	struct obj *o = calloc(1, sizeof(*o));

	if (!o) {
		perror("calloc");
		exit(2);
	}
	o->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_SEQ_CST);
	o->type = type;
	o->owner = t->no;
	o->fd = -1;
	if (type == OBJ_FILE) {
		o->data = calloc(1, max_file);
		if (!o->data) {
			perror("calloc");
			exit(2);
		}
	}
	o->all_next = t->all;
	t->all = o;
	return o;
}

static void obj_unref(struct obj *o)
{
	if (__atomic_sub_fetch(&o->refs, 1, __ATOMIC_SEQ_CST) == 0) {
		free(o->data);
		o->data = NULL;
	}
}

/* Lock one or two directories, always in index order (no deadlock). */
static void lock2(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	pthread_mutex_lock(&dirs[lo].lock);
	if (hi != lo)
		pthread_mutex_lock(&dirs[hi].lock);
}

static void unlock2(int a, int b)
{
	pthread_mutex_unlock(&dirs[a].lock);
	if (a != b)
		pthread_mutex_unlock(&dirs[b].lock);
}

/*
 * Compare a call's outcome with the model's prediction.  want_err 0 means
 * success expected.  Returns true if they agree (and counts the op).
 */
static bool expect(struct thread *t, enum op op, long i, int rc, int want_err,
		   const char *what)
{
	int got = rc < 0 ? errno : 0;

	if (got != want_err) {
		fail("thread %d op %ld %s %s: got %s, model expects %s", t->no, i,
		     op_names[op], what, got ? strerror(got) : "success",
		     want_err ? strerror(want_err) : "success");
		return false;
	}
	if (want_err)
		t->errs[op]++;
	else
		t->ops[op]++;
	return true;
}

static void forget_open(struct thread *t, int k)
{
	struct obj *o = t->open[k];

	t->open[k] = t->open[--t->nopen];
	o->fd = -1;
	obj_unref(o);
}

static bool do_close(struct thread *t, long i, int k)
{
	struct obj *o = t->open[k];
	char what[64];
	int rc = close(o->fd);

	snprintf(what, sizeof(what), "object %" PRIu64, o->id);
	forget_open(t, k);
	return expect(t, OP_CLOSE, i, rc, 0, what);
}

static bool do_create(struct thread *t, long i)
{
	int d = (int)rnd_below(t, NDIRS), n = (int)rnd_below(t, NNAMES);
	struct dir *dp = &dirs[d];
	char path[4096];
	bool ok;
	int fd;

	if (t->nopen == MAX_OPEN && !do_close(t, i, (int)rnd_below(t, MAX_OPEN)))
		return false;
	path_of(path, sizeof(path), d, n);
	pthread_mutex_lock(&dp->lock);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	ok = expect(t, OP_CREATE, i, fd, dp->ent[n] ? EEXIST : 0, path);
	if (ok && fd >= 0) {
		struct obj *o = obj_new(t, OBJ_FILE);

		o->nlink = 1;
		o->refs = 2;
		o->fd = fd;
		dp->ent[n] = o;
		t->open[t->nopen++] = o;
	} else if (fd >= 0) {
		close(fd);
	}
	pthread_mutex_unlock(&dp->lock);
	return ok;
}

/* Open one of my own files by name again (its name pinned by the dir lock). */
static bool do_reopen(struct thread *t, long i)
{
	int d = (int)rnd_below(t, NDIRS), n = (int)rnd_below(t, NNAMES);
	bool trunc = rnd_below(t, 4) == 0;
	struct dir *dp = &dirs[d];
	char path[4096];
	struct obj *o;
	bool ok = true;
	int fd;

	if (t->nopen == MAX_OPEN && !do_close(t, i, (int)rnd_below(t, MAX_OPEN)))
		return false;
	path_of(path, sizeof(path), d, n);
	pthread_mutex_lock(&dp->lock);
	o = dp->ent[n];
	if (o && o->type == OBJ_FILE && o->owner == t->no && o->fd < 0) {
		fd = open(path, O_RDWR | (trunc ? O_TRUNC : 0));
		ok = expect(t, OP_REOPEN, i, fd, 0, path);
		if (ok) {
			__atomic_add_fetch(&o->refs, 1, __ATOMIC_SEQ_CST);
			o->fd = fd;
			t->open[t->nopen++] = o;
			if (trunc) {
				memset(o->data, 0, o->size);
				o->size = 0;
			}
		}
	} else if (!o || o->type == OBJ_DIR) {
		fd = open(path, O_RDWR);
		ok = expect(t, OP_REOPEN, i, fd, o ? EISDIR : ENOENT, path);
		if (fd >= 0)
			close(fd);
	}
	pthread_mutex_unlock(&dp->lock);
	return ok;
}

static void model_truncate(struct obj *o, size_t size)
{
	if (size < o->size)
		memset(o->data + size, 0, o->size - size);
	o->size = size;
}

static bool do_write(struct thread *t, long i, struct obj *o)
{
	size_t len = rnd_len(t);
	size_t off = rnd_below(t, max_file - len + 1);
	char what[96];
	ssize_t rc;

	for (size_t k = 0; k < len; k += 8) {
		uint64_t r = rnd(t);

		memcpy(t->buf + k, &r, len - k < 8 ? len - k : 8);
	}
	rc = pwrite(o->fd, t->buf, len, (off_t)off);
	snprintf(what, sizeof(what), "object %" PRIu64 " [%zu, +%zu)", o->id, off, len);
	if (rc >= 0 && (size_t)rc != len) {
		fail("thread %d op %ld write %s: short write %zd", t->no, i, what, rc);
		return false;
	}
	if (!expect(t, OP_WRITE, i, (int)(rc < 0 ? -1 : 0), 0, what))
		return false;
	memcpy(o->data + off, t->buf, len);
	if (off + len > o->size)
		o->size = off + len;
	t->bytes_written += len;
	return true;
}

static bool do_read(struct thread *t, long i, struct obj *o)
{
	size_t len = rnd_len(t);
	size_t off = rnd_below(t, max_file);
	size_t want = off >= o->size ? 0 : (o->size - off < len ? o->size - off : len);
	char what[96];
	ssize_t rc;

	rc = pread(o->fd, t->rbuf, len, (off_t)off);
	snprintf(what, sizeof(what), "object %" PRIu64 " [%zu, +%zu) size %zu", o->id, off,
		 len, o->size);
	if (!expect(t, OP_READ, i, (int)(rc < 0 ? -1 : 0), 0, what))
		return false;
	if ((size_t)rc != want) {
		fail("thread %d op %ld read %s: got %zd bytes, model %zu", t->no, i, what, rc,
		     want);
		return false;
	}
	if (memcmp(t->rbuf, o->data + off, want)) {
		size_t k = 0;

		while (t->rbuf[k] == o->data[off + k])
			k++;
		fail("thread %d op %ld read %s: byte %zu is %02x, model %02x", t->no, i, what,
		     off + k, t->rbuf[k], o->data[off + k]);
		return false;
	}
	t->bytes_read += want;
	return true;
}

static bool do_ftrunc(struct thread *t, long i, struct obj *o)
{
	size_t size = rnd_below(t, 2) ? rnd_below(t, o->size + 1) : rnd_below(t, max_file + 1);
	char what[96];

	snprintf(what, sizeof(what), "object %" PRIu64 " %zu -> %zu", o->id, o->size, size);
	if (!expect(t, OP_FTRUNC, i, ftruncate(o->fd, (off_t)size), 0, what))
		return false;
	model_truncate(o, size);
	return true;
}

static bool do_fsync(struct thread *t, long i, struct obj *o)
{
	char what[64];

	snprintf(what, sizeof(what), "object %" PRIu64, o->id);
	return expect(t, OP_FSYNC, i, fsync(o->fd), 0, what);
}

/* truncate(2) by name; only on my own files, so no content op races it. */
static bool do_ptrunc(struct thread *t, long i)
{
	int d = (int)rnd_below(t, NDIRS), n = (int)rnd_below(t, NNAMES);
	size_t size = rnd_below(t, max_file + 1);
	struct dir *dp = &dirs[d];
	char path[4096];
	struct obj *o;
	bool ok = true;

	path_of(path, sizeof(path), d, n);
	pthread_mutex_lock(&dp->lock);
	o = dp->ent[n];
	if (!o) {
		ok = expect(t, OP_PTRUNC, i, truncate(path, 0), ENOENT, path);
	} else if (o->type == OBJ_DIR) {
		ok = expect(t, OP_PTRUNC, i, truncate(path, 0), EISDIR, path);
	} else if (o->owner == t->no) {
		ok = expect(t, OP_PTRUNC, i, truncate(path, (off_t)size), 0, path);
		if (ok)
			model_truncate(o, size);
	}
	pthread_mutex_unlock(&dp->lock);
	return ok;
}

static bool do_stat(struct thread *t, long i)
{
	int d = (int)rnd_below(t, NDIRS), n = (int)rnd_below(t, NNAMES);
	struct dir *dp = &dirs[d];
	char path[4096];
	struct stat st;
	struct obj *o;
	bool ok;
	int rc;

	path_of(path, sizeof(path), d, n);
	pthread_mutex_lock(&dp->lock);
	o = dp->ent[n];
	rc = lstat(path, &st);
	ok = expect(t, OP_STAT, i, rc, o ? 0 : ENOENT, path);
	if (ok && o) {
		if (o->type == OBJ_DIR ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
			fail("thread %d op %ld lstat %s: mode %o, model a %s", t->no, i, path,
			     (unsigned)st.st_mode, o->type == OBJ_DIR ? "directory" : "file");
			ok = false;
		} else if (o->type == OBJ_FILE && o->owner == t->no &&
			   (size_t)st.st_size != o->size) {
			fail("thread %d op %ld lstat %s: size %lld, model %zu", t->no, i, path,
			     (long long)st.st_size, o->size);
			ok = false;
		}
	}
	pthread_mutex_unlock(&dp->lock);
	return ok;
}

/* Drop the link the directory entry held on o (unlink, or renamed over). */
static void drop_entry(struct obj *o)
{
	if (o->type == OBJ_FILE) {
		__atomic_sub_fetch(&o->nlink, 1, __ATOMIC_SEQ_CST);
		obj_unref(o);
	}
}

static bool do_unlink(struct thread *t, long i)
{
	int d = (int)rnd_below(t, NDIRS), n = (int)rnd_below(t, NNAMES);
	struct dir *dp = &dirs[d];
	char path[4096];
	struct obj *o;
	bool ok;

	path_of(path, sizeof(path), d, n);
	pthread_mutex_lock(&dp->lock);
	o = dp->ent[n];
	ok = expect(t, OP_UNLINK, i, unlink(path),
		    !o ? ENOENT : o->type == OBJ_DIR ? EISDIR : 0, path);
	if (ok && o && o->type == OBJ_FILE) {
		dp->ent[n] = NULL;
		drop_entry(o);
	}
	pthread_mutex_unlock(&dp->lock);
	return ok;
}

static bool do_mkdir(struct thread *t, long i)
{
	int d = (int)rnd_below(t, NDIRS), n = (int)rnd_below(t, NNAMES);
	struct dir *dp = &dirs[d];
	char path[4096];
	bool ok;

	path_of(path, sizeof(path), d, n);
	pthread_mutex_lock(&dp->lock);
	ok = expect(t, OP_MKDIR, i, mkdir(path, 0755), dp->ent[n] ? EEXIST : 0, path);
	if (ok && !dp->ent[n])
		dp->ent[n] = obj_new(t, OBJ_DIR);
	pthread_mutex_unlock(&dp->lock);
	return ok;
}

static bool do_rmdir(struct thread *t, long i)
{
	int d = (int)rnd_below(t, NDIRS), n = (int)rnd_below(t, NNAMES);
	struct dir *dp = &dirs[d];
	char path[4096];
	struct obj *o;
	bool ok;

	path_of(path, sizeof(path), d, n);
	pthread_mutex_lock(&dp->lock);
	o = dp->ent[n];
	ok = expect(t, OP_RMDIR, i, rmdir(path),
		    !o ? ENOENT : o->type == OBJ_FILE ? ENOTDIR : 0, path);
	if (ok && o && o->type == OBJ_DIR)
		dp->ent[n] = NULL;
	pthread_mutex_unlock(&dp->lock);
	return ok;
}

/*
 * The kernel's FUSE client keeps i_nlink in its inode cache and, after an
 * unlink (or a rename over) of one name, drops it by one locally.  A GETATTR
 * or LOOKUP of the same inode through another name does not take the inode
 * lock; if its reply was computed after the backing unlink but is applied
 * before the unlinking thread's drop, the link is counted off twice.  With
 * the last name left the cached count then reads 0, and link(2) of that name
 * fails with ENOENT in the VFS ("linking an unlinked inode") before any
 * request reaches the daemon.  Seen on 6.18 with every stack, passthrough
 * included; the next attribute refresh corrects the count.
 *
 * So a link the model expects to succeed and that fails with ENOENT is
 * accepted only with proof that it was this: the kernel's cached count
 * (statx AT_STATX_DONT_SYNC) is 0, a forced refresh (AT_STATX_FORCE_SYNC)
 * shows the same inode with links left, and the retried link succeeds.
 * Each occurrence is counted and printed; anything else is a failure.
 */
static bool kernel_nlink_race(const char *path)
{
	struct statx cached, fresh;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
		  STATX_NLINK | STATX_INO, &cached) < 0 || cached.stx_nlink != 0)
		return false;
	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_STATX_FORCE_SYNC,
		  STATX_NLINK | STATX_INO, &fresh) < 0)
		return false;
	return fresh.stx_ino == cached.stx_ino && fresh.stx_nlink > 0;
}

/*
 * Link and rename: the kernel's order of checks decides the errno when
 * several apply -- source lookup (ENOENT) first, then for link the target
 * (EEXIST) before the directory check (EPERM); for rename, the same inode
 * on both sides is a successful no-op before any type check.
 */
static bool do_link(struct thread *t, long i)
{
	int sd = (int)rnd_below(t, NDIRS), sn = (int)rnd_below(t, NNAMES);
	int dd = (int)rnd_below(t, NDIRS), dn = (int)rnd_below(t, NNAMES);
	char sp[4096], dpath[4096], what[8300];
	struct obj *src, *dst;
	int want, rc;
	bool ok;

	path_of(sp, sizeof(sp), sd, sn);
	path_of(dpath, sizeof(dpath), dd, dn);
	snprintf(what, sizeof(what), "%s -> %s", sp, dpath);
	lock2(sd, dd);
	src = dirs[sd].ent[sn];
	dst = dirs[dd].ent[dn];
	want = !src ? ENOENT : dst ? EEXIST : src->type == OBJ_DIR ? EPERM : 0;
	rc = link(sp, dpath);
	if (rc < 0 && errno == ENOENT && want == 0 && kernel_nlink_race(sp)) {
		t->nlink_races++;
		rc = link(sp, dpath);
	}
	ok = expect(t, OP_LINK, i, rc, want, what);
	if (ok && !want) {
		__atomic_add_fetch(&src->nlink, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&src->refs, 1, __ATOMIC_SEQ_CST);
		dirs[dd].ent[dn] = src;
	}
	unlock2(sd, dd);
	return ok;
}

static bool do_rename(struct thread *t, long i)
{
	int sd = (int)rnd_below(t, NDIRS), sn = (int)rnd_below(t, NNAMES);
	int dd = rnd_below(t, 2) ? sd : (int)rnd_below(t, NDIRS);
	int dn = (int)rnd_below(t, NNAMES);
	char sp[4096], dpath[4096], what[8300];
	struct obj *src, *dst;
	int want;
	bool ok;

	path_of(sp, sizeof(sp), sd, sn);
	path_of(dpath, sizeof(dpath), dd, dn);
	snprintf(what, sizeof(what), "%s -> %s", sp, dpath);
	lock2(sd, dd);
	src = dirs[sd].ent[sn];
	dst = dirs[dd].ent[dn];
	if (!src)
		want = ENOENT;
	else if (src == dst)
		want = 0;
	else if (dst && src->type == OBJ_FILE && dst->type == OBJ_DIR)
		want = EISDIR;
	else if (dst && src->type == OBJ_DIR && dst->type == OBJ_FILE)
		want = ENOTDIR;
	else
		want = 0;
	ok = expect(t, OP_RENAME, i, rename(sp, dpath), want, what);
	if (ok && !want && src != dst) {
		if (dst)
			drop_entry(dst);
		dirs[dd].ent[dn] = src;
		dirs[sd].ent[sn] = NULL;
	}
	unlock2(sd, dd);
	return ok;
}

static enum op pick_op(struct thread *t)
{
	int r = (int)rnd_below(t, 100), op = 0;

	while (r >= op_weight[op]) {
		r -= op_weight[op];
		op++;
	}
	return (enum op)op;
}

static void *worker(void *arg)
{
	struct thread *t = arg;

	pthread_barrier_wait(&start_barrier);
	for (long i = 0; i < ops_per_thread; i++) {
		enum op op = pick_op(t);
		struct obj *o = NULL;
		bool ok;

		if (__atomic_load_n(&stop, __ATOMIC_SEQ_CST))
			break;
		if (op == OP_CLOSE || op == OP_WRITE || op == OP_READ || op == OP_FTRUNC ||
		    op == OP_FSYNC) {
			if (!t->nopen)
				op = OP_CREATE;
			else
				o = t->open[rnd_below(t, (size_t)t->nopen)];
		}
		switch (op) {
		case OP_CREATE: ok = do_create(t, i); break;
		case OP_REOPEN: ok = do_reopen(t, i); break;
		case OP_CLOSE: {
			int k = 0;

			while (t->open[k] != o)
				k++;
			ok = do_close(t, i, k);
			break;
		}
		case OP_WRITE: ok = do_write(t, i, o); break;
		case OP_READ: ok = do_read(t, i, o); break;
		case OP_FTRUNC: ok = do_ftrunc(t, i, o); break;
		case OP_PTRUNC: ok = do_ptrunc(t, i); break;
		case OP_FSYNC: ok = do_fsync(t, i, o); break;
		case OP_STAT: ok = do_stat(t, i); break;
		case OP_UNLINK: ok = do_unlink(t, i); break;
		case OP_RENAME: ok = do_rename(t, i); break;
		case OP_LINK: ok = do_link(t, i); break;
		case OP_MKDIR: ok = do_mkdir(t, i); break;
		case OP_RMDIR: ok = do_rmdir(t, i); break;
		default: ok = false; break;
		}
		if (!ok)
			break;
	}
	return NULL;
}

/* Read a whole file by fd (from offset 0); compare with o's model. */
static void check_content(int fd, const struct obj *o, const char *what, unsigned char *buf)
{
	size_t got = 0;
	ssize_t rc;

	while ((rc = pread(fd, buf + got, max_file + 1 - got, (off_t)got)) > 0) {
		got += (size_t)rc;
		if (got > max_file)
			break;
	}
	if (rc < 0) {
		fail("%s: read: %s", what, strerror(errno));
		return;
	}
	if (got != o->size) {
		fail("%s: %zu bytes readable, model size %zu", what, got, o->size);
		return;
	}
	if (XXH3_64bits(buf, got) != XXH3_64bits(o->data, o->size)) {
		size_t k = 0;

		while (k < got && buf[k] == o->data[k])
			k++;
		fail("%s: content differs from the model (XXH3), first at byte %zu: %02x, "
		     "model %02x", what, k, buf[k], o->data[k]);
	}
}

/* The sorted-free way: names in a dir must be exactly the model's set. */
static void check_listing(const char *path, const char *const *want, int nwant)
{
	bool seen[NNAMES > NDIRS ? NNAMES : NDIRS] = { false };
	struct dirent *de;
	DIR *dh = opendir(path);

	if (!dh) {
		fail("opendir %s: %s", path, strerror(errno));
		return;
	}
	while ((de = readdir(dh))) {
		int k;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		for (k = 0; k < nwant; k++)
			if (!strcmp(de->d_name, want[k]))
				break;
		if (k == nwant)
			fail("%s: unexpected entry '%s'", path, de->d_name);
		else if (seen[k])
			fail("%s: entry '%s' listed twice", path, de->d_name);
		else
			seen[k] = true;
	}
	closedir(dh);
	for (int k = 0; k < nwant; k++)
		if (!seen[k])
			fail("%s: entry '%s' missing from the listing", path, want[k]);
}

static void reset_inos(struct thread *ts)
{
	for (int k = 0; k < nthreads; k++)
		for (struct obj *o = ts[k].all; o; o = o->all_next)
			o->ino = 0;
}

/* Walk the tree and compare everything with the model; returns files seen. */
static long check_tree(struct thread *ts, const char *when)
{
	static const char *const dnames[NDIRS] = { "d0", "d1", "d2", "d3" };
	unsigned char *buf = malloc(max_file + 1);
	long files = 0, dirs_seen = 0;
	char path[4096];
	int before = __atomic_load_n(&failures, __ATOMIC_SEQ_CST);

	if (!buf) {
		perror("malloc");
		exit(2);
	}
	reset_inos(ts);
	check_listing(root, dnames, NDIRS);
	for (int d = 0; d < NDIRS; d++) {
		const char *want[NNAMES];
		char names[NNAMES][8];
		int nwant = 0;

		for (int n = 0; n < NNAMES; n++) {
			if (!dirs[d].ent[n])
				continue;
			snprintf(names[nwant], sizeof(names[nwant]), "n%d", n);
			want[nwant] = names[nwant];
			nwant++;
		}
		snprintf(path, sizeof(path), "%s/d%d", root, d);
		check_listing(path, want, nwant);
		for (int n = 0; n < NNAMES; n++) {
			struct obj *o = dirs[d].ent[n];
			struct stat st;

			if (!o)
				continue;
			path_of(path, sizeof(path), d, n);
			if (lstat(path, &st)) {
				fail("%s: %s: lstat: %s", when, path, strerror(errno));
				continue;
			}
			if (o->type == OBJ_DIR) {
				dirs_seen++;
				if (!S_ISDIR(st.st_mode))
					fail("%s: %s: mode %o, model an empty directory", when,
					     path, (unsigned)st.st_mode);
				else
					check_listing(path, NULL, 0);
				continue;
			}
			if (!S_ISREG(st.st_mode)) {
				fail("%s: %s: mode %o, model a regular file", when, path,
				     (unsigned)st.st_mode);
				continue;
			}
			if ((size_t)st.st_size != o->size)
				fail("%s: %s: size %lld, model %zu", when, path,
				     (long long)st.st_size, o->size);
			if (st.st_nlink != (nlink_t)o->nlink)
				fail("%s: %s: st_nlink %lu, model %d", when, path,
				     (unsigned long)st.st_nlink, o->nlink);
			if (o->ino && o->ino != st.st_ino)
				fail("%s: %s: st_ino %lu, but another link of the same file "
				     "has %lu", when, path, (unsigned long)st.st_ino,
				     (unsigned long)o->ino);
			if (o->ino)
				continue;	/* contents already checked via another link */
			o->ino = st.st_ino;
			files++;
			/* distinct files must not share an inode number */
			for (int k = 0; k < nthreads; k++)
				for (struct obj *p = ts[k].all; p; p = p->all_next)
					if (p != o && p->ino == st.st_ino)
						fail("%s: %s: st_ino %lu also belongs to another "
						     "file of the model", when, path,
						     (unsigned long)st.st_ino);
			int fd = open(path, O_RDONLY);

			if (fd < 0) {
				fail("%s: %s: open: %s", when, path, strerror(errno));
				continue;
			}
			char what[4200];

			snprintf(what, sizeof(what), "%s: %s", when, path);
			check_content(fd, o, what, buf);
			close(fd);
		}
	}
	free(buf);
	printf("sc_mdstress: %s: %ld files, %ld directories checked, %d mismatches\n", when,
	       files, dirs_seen, __atomic_load_n(&failures, __ATOMIC_SEQ_CST) - before);
	return files;
}

/* -F: change one byte of the model of one live, non-empty file. */
static bool corrupt_model(void)
{
	for (int d = 0; d < NDIRS; d++)
		for (int n = 0; n < NNAMES; n++) {
			struct obj *o = dirs[d].ent[n];

			if (o && o->type == OBJ_FILE && o->size) {
				o->data[o->size / 2] ^= 0x5a;
				printf("sc_mdstress: self-test: model of d%d/n%d changed at "
				       "byte %zu\n", d, n, o->size / 2);
				return true;
			}
		}
	return false;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "usage: sc_mdstress [-t THREADS] [-n OPS_PER_THREAD] [-S SEED] "
		"[-m MAX_FILE] [-R REMOUNT_CMD] [-F] DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	const char *remount = NULL;
	bool selftest = false;
	struct thread *ts;
	char path[4096];
	uint64_t tot_ops = 0, tot_errs = 0, wr = 0, rd = 0, races = 0;
	int c, run_failures;
	double t0, t1;

	while ((c = getopt(argc, argv, "t:n:S:m:R:F")) != -1) {
		switch (c) {
		case 't': nthreads = atoi(optarg); break;
		case 'n': ops_per_thread = atol(optarg); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'm': max_file = strtoul(optarg, NULL, 0); break;
		case 'R': remount = optarg; break;
		case 'F': selftest = true; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || nthreads < 1 || nthreads > MAX_THREADS ||
	    ops_per_thread < 1 || max_file < MAX_IO)
		usage();
	root = argv[optind];
	printf("sc_mdstress: seed %" PRIu64 " (replay the per-thread op streams with -S %"
	       PRIu64 "), %d threads x %ld ops, files up to %zu bytes\n", seed, seed, nthreads,
	       ops_per_thread, max_file);
	fflush(stdout);

	if (mkdir(root, 0755) && errno != EEXIST) {
		fprintf(stderr, "sc_mdstress: mkdir %s: %s\n", root, strerror(errno));
		return 2;
	}
	for (int d = 0; d < NDIRS; d++) {
		snprintf(path, sizeof(path), "%s/d%d", root, d);
		if (mkdir(path, 0755)) {
			fprintf(stderr, "sc_mdstress: mkdir %s: %s (DIR must be new or empty)\n",
				path, strerror(errno));
			return 2;
		}
		pthread_mutex_init(&dirs[d].lock, NULL);
	}
	ts = calloc((size_t)nthreads, sizeof(*ts));
	if (!ts) {
		perror("calloc");
		return 2;
	}
	pthread_barrier_init(&start_barrier, NULL, (unsigned)nthreads);
	t0 = now();
	for (int k = 0; k < nthreads; k++) {
		ts[k].no = k;
		ts[k].rng = seed * 0x100000001b3ULL + (uint64_t)k;
		if (pthread_create(&ts[k].tid, NULL, worker, &ts[k])) {
			fprintf(stderr, "sc_mdstress: pthread_create failed\n");
			return 2;
		}
	}
	for (int k = 0; k < nthreads; k++)
		pthread_join(ts[k].tid, NULL);
	t1 = now();

	for (int k = 0; k < nthreads; k++) {
		for (int op = 0; op < OP_COUNT; op++) {
			tot_ops += ts[k].ops[op];
			tot_errs += ts[k].errs[op];
		}
		wr += ts[k].bytes_written;
		rd += ts[k].bytes_read;
		races += ts[k].nlink_races;
	}
	printf("sc_mdstress: run: %" PRIu64 " calls succeeded, %" PRIu64 " failed as the model "
	       "predicted, %" PRIu64 " bytes written, %" PRIu64 " read and checked, %.2f s\n",
	       tot_ops, tot_errs, wr, rd, t1 - t0);
	printf("sc_mdstress: per op (ok/expected errno):");
	for (int op = 0; op < OP_COUNT; op++) {
		uint64_t ok = 0, er = 0;

		for (int k = 0; k < nthreads; k++) {
			ok += ts[k].ops[op];
			er += ts[k].errs[op];
		}
		printf(" %s %" PRIu64 "/%" PRIu64, op_names[op], ok, er);
	}
	printf("\n");
	if (races)
		printf("sc_mdstress: %" PRIu64 " link(2) ENOENT from the kernel's cached link "
		       "count (0 while links remained), retried (see kernel_nlink_race)\n",
		       races);

	run_failures = __atomic_load_n(&failures, __ATOMIC_SEQ_CST);
	if (selftest && (run_failures || !corrupt_model())) {
		printf("sc_mdstress: self-test INVALID: %s\n", run_failures ?
		       "the run itself failed" : "no non-empty file to corrupt the model of");
		return 0;
	}

	/* Open files first, through their fds (this covers unlinked ones). */
	{
		unsigned char *buf = malloc(max_file + 1);
		long nopen = 0;

		if (!buf) {
			perror("malloc");
			return 2;
		}
		for (int k = 0; k < nthreads; k++) {
			while (ts[k].nopen) {
				struct obj *o = ts[k].open[0];
				char what[96];
				struct stat st;

				snprintf(what, sizeof(what), "open fd of object %" PRIu64
					 " (%d links)", o->id, o->nlink);
				if (fstat(o->fd, &st))
					fail("%s: fstat: %s", what, strerror(errno));
				else if ((size_t)st.st_size != o->size)
					fail("%s: fstat size %lld, model %zu", what,
					     (long long)st.st_size, o->size);
				check_content(o->fd, o, what, buf);
				if (close(o->fd))
					fail("%s: close: %s", what, strerror(errno));
				forget_open(&ts[k], 0);
				nopen++;
			}
		}
		free(buf);
		printf("sc_mdstress: %ld open files checked through their fds\n", nopen);
	}
	check_tree(ts, "final tree");
	if (remount) {
		fflush(stdout);
		int rc = system(remount);

		if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc)) {
			fail("remount command '%s' failed (status %d)", remount, rc);
		} else {
			check_tree(ts, "after remount");
		}
	}

	for (int k = 0; k < nthreads; k++) {
		while (ts[k].all) {
			struct obj *o = ts[k].all;

			ts[k].all = o->all_next;
			free(o->data);	/* NULL if its last reference went */
			free(o);
		}
	}
	free(ts);
	pthread_barrier_destroy(&start_barrier);
	c = __atomic_load_n(&failures, __ATOMIC_SEQ_CST);
	printf("sc_mdstress: %s (seed %" PRIu64 ")\n", c ? "FAILED" : "passed", seed);
	return c ? 1 : 0;
}
