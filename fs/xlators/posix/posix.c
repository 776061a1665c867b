/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix.c - the bottom translator: all backing I/O.
 *
 * Every object is reached through the O_PATH fd its sc_obj holds, with *at()
 * calls relative to it, so no path strings are kept and renames in the
 * backing tree never leave us pointing at a stale name.  Where the kernel
 * offers no *at() form that works on an O_PATH fd (reopen, chmod, truncate,
 * xattrs), the fd's /proc/self/fd/N link is used, as libfuse's
 * passthrough_ll does.  Errors of the backing filesystem are returned
 * unchanged as -errno.
 *
 * Descriptors.  Holding an O_PATH fd per cached inode would make a tree of
 * 100 000 files need 100 000 descriptors, more than RLIMIT_NOFILE allows on
 * many systems (this project's CI machine: 20 000, hard).  So only the first
 * max_path_fds inodes keep theirs (half the descriptor limit by default,
 * -o max_path_fds=N): a regular file adopted after that keeps a file handle
 * (name_to_handle_at) in its obj->priv slot instead, and each call that
 * needs a path fd opens one with open_by_handle_at and closes it after
 * (get_fd/put_fd).  Directories always keep their fds (every *at() call
 * starts from one), as do symlinks, devices and anything on another
 * filesystem mounted under the backing root.  Handles need
 * CAP_DAC_READ_SEARCH: a mount without it keeps every fd, as before.
 *
 * A backing directory on a FUSE filesystem (a GlusterFS FUSE mount) is
 * probed at init for what such a filesystem may lack, and each gap found
 * gets one notice line and a fallback that keeps the semantics:
 *  - file handles: FUSE encodes them, but without export support (GlusterFS
 *    has none) open_by_handle_at fails with ESTALE once the inode has left
 *    the kernel's cache, which would read as ENOENT on a file that exists.
 *    So every cached inode keeps its O_PATH fd there (max_path_fds unused).
 *  - RENAME_NOREPLACE (the names layer gives every new directory its name
 *    with it; GlusterFS answers EINVAL): a non-directory is linked to its
 *    new name, which never replaces (EEXIST), then unlinked from the old; a
 *    directory, which cannot be linked, is renamed after a check that the
 *    new name is free.  The check cannot race with this mount: the kernel
 *    holds the new parent's lock across the whole rename (and across a
 *    mkdir, whose names-layer rename is this one); only another writer of
 *    the backing directory could slip in between, and lose an empty
 *    directory it made there.  RENAME_EXCHANGE has no such equivalent and
 *    keeps the backing filesystem's answer (EINVAL).
 *  - FALLOC_FL_ZERO_RANGE: GlusterFS's FUSE client returns 0 and zeroes
 *    nothing (it allocates instead), which the crypt layer, whose zeroed
 *    units read as holes, would turn into garbage; CephFS's ceph-fuse
 *    refuses it (EOPNOTSUPP) but punches holes.  It is done as a punched
 *    hole (which works) and then an allocation of the range with the
 *    caller's KEEP_SIZE: zeros, allocated, the size extended as asked.
 * The probes make and remove a directory and a file named like the volume
 * tools' hidden temporary files, .stackcrypt.conf.tmp-probe-PID-*, in the
 * root.
 *
 * fh->priv holds a directory's stream (struct px_dir, from opendir to
 * releasedir); for a file, the mapping ->map made (mapped.c), from ->map
 * to ->release.
 */
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "sc_xlator.h"
#include "posix_xl.h"
#include "mapped.h"

struct px_priv {
	bool		writeback;
	bool		handles;	/* file handles work here (see top of file) */
	int		mount_fd;	/* O_RDONLY fd on the root, for open_by_handle_at */
	dev_t		dev;		/* the root's filesystem */
	long		budget;		/* O_PATH fds to keep before using handles */
	atomic_long	kept;		/* O_PATH fds kept by adopted objects */
	bool		no_noreplace;	/* RENAME_NOREPLACE by link or check+rename */
	bool		no_zero_range;	/* ZERO_RANGE by punch hole + allocate */
	bool		on_fuse;	/* the backing is a FUSE filesystem: no ->map */
};

#define PROC_FD_LEN	32

static void proc_path(char buf[PROC_FD_LEN], int fd)
{
	snprintf(buf, PROC_FD_LEN, "/proc/self/fd/%d", fd);
}

static int stat_fd(int fd, struct stat *st)
{
	if (fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

/* Opens an O_PATH fd on dir/name and stats it. */
static int open_child(int dirfd, const char *name, int *fd_out, struct stat *st)
{
	int fd, ret;

	fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = stat_fd(fd, st);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	*fd_out = fd;
	return 0;
}

/* Allocates a file handle for the object fd refers to, or returns NULL. */
static struct file_handle *handle_of(int fd, int *mount_id)
{
	struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ), *fit;

	if (!h)
		return NULL;
	h->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", h, mount_id, AT_EMPTY_PATH) < 0) {
		free(h);
		return NULL;
	}
	fit = realloc(h, sizeof(*h) + h->handle_bytes);
	return fit ? fit : h;
}

/* Can this process reach the backing root by handle (CAP_DAC_READ_SEARCH)? */
static bool handles_work(int root_fd, int mount_fd)
{
	struct file_handle *h;
	int mid, fd;

	h = handle_of(root_fd, &mid);
	if (!h)
		return false;
	fd = open_by_handle_at(mount_fd, h, O_PATH | O_CLOEXEC);
	free(h);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * The type mountinfo gives the filesystem of dev ("fuse.glusterfs"), or ""
 * when it cannot tell.
 */
static void fstype_of(dev_t dev, char *out, size_t size)
{
	char line[4096], type[256];
	unsigned int maj, min;
	FILE *f;

	out[0] = '\0';
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 ||
		    makedev(maj, min) != dev || sscanf(sep + 3, "%255s", type) != 1)
			continue;
		snprintf(out, size, "%s", type);
		break;
	}
	fclose(f);
}

/*
 * Does the backing filesystem do RENAME_NOREPLACE?  Tried on a directory of
 * our own in the root; true when it cannot tell (a read-only backing
 * renames nothing anyway).
 */
static bool noreplace_works(int root_fd)
{
	char a[64], b[64];
	bool works = true;

	snprintf(a, sizeof(a), ".stackcrypt.conf.tmp-probe-%ld-a", (long)getpid());
	snprintf(b, sizeof(b), ".stackcrypt.conf.tmp-probe-%ld-b", (long)getpid());
	if (mkdirat(root_fd, a, 0700) < 0)
		return true;
	if (renameat2(root_fd, a, root_fd, b, RENAME_NOREPLACE) == 0)
		unlinkat(root_fd, b, AT_REMOVEDIR);
	else
		works = errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP;
	unlinkat(root_fd, a, AT_REMOVEDIR);
	return works;
}

/*
 * Does FALLOC_FL_ZERO_RANGE zero?  Tried on a file of our own in the root:
 * 8 KiB of 0xa5, the second 4 KiB zeroed, read back.  Refused
 * (EOPNOTSUPP: CephFS's ceph-fuse), it counts as not zeroing when
 * PUNCH_HOLE zeroes instead, so that the fallback serves it; else the
 * caller gets that refusal.  True when it cannot tell.
 */
static bool zero_range_works(int root_fd)
{
	uint8_t buf[8192];
	char name[64];
	bool works = true;
	int fd;

	snprintf(name, sizeof(name), ".stackcrypt.conf.tmp-probe-%ld-z", (long)getpid());
	fd = openat(root_fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return true;
	memset(buf, 0xa5, sizeof(buf));
	if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		goto out_close;
	if (fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 4096, 4096) == 0) {
		if (pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf))
			works = buf[4096] == 0 && buf[8191] == 0 && buf[4095] == 0xa5;
	} else if (errno == EOPNOTSUPP &&
		   fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 4096) == 0 &&
		   pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf)) {
		works = !(buf[4096] == 0 && buf[8191] == 0 && buf[4095] == 0xa5);
	}
out_close:
	close(fd);
	unlinkat(root_fd, name, 0);
	return works;
}

#ifdef SC_TEST_HOOKS
/*
 * Test hook: SC_TEST_KILL_STEP=N with SC_TEST_KILL_ARM=PATH kills the
 * daemon before the Nth change it makes to the backing store (a create,
 * write, rename, sync, truncate, xattr... through this layer), counted from
 * the first change after PATH exists: the crash points of one operation,
 * each in turn, with no timing (tests/cli/t_steps.sh).  Built
 * into stackcrypt-testhooks only.
 */
static void px_step(void)
{
	static const char *arm;
	static long n, at = -1;
	static bool armed;

	if (__atomic_load_n(&at, __ATOMIC_ACQUIRE) < 0) {
		const char *v = getenv("SC_TEST_KILL_STEP");

		arm = getenv("SC_TEST_KILL_ARM");
		__atomic_store_n(&at, v && arm ? strtol(v, NULL, 10) : 0, __ATOMIC_RELEASE);
	}
	if (at <= 0)
		return;
	if (!__atomic_load_n(&armed, __ATOMIC_ACQUIRE)) {
		if (access(arm, F_OK) != 0)
			return;
		__atomic_store_n(&armed, true, __ATOMIC_RELEASE);
	}
	if (__atomic_add_fetch(&n, 1, __ATOMIC_RELAXED) == at)
		raise(SIGKILL);
}

/*
 * Test hook: SC_TEST_SHADOW=DIR keeps, after every fsync or fdatasync of a
 * regular file, a copy of its contents as DIR/DEV-INO (hex): what a power
 * loss would leave of it.  tests/lib/powerloss.py puts those copies back
 * over the backing store after a kill (tests/cli/t_powerloss.sh).  Built
 * into stackcrypt-testhooks only.
 */
static const char *shadow_dir(void)
{
	static const char *dir;
	static int init;

	if (!__atomic_load_n(&init, __ATOMIC_ACQUIRE)) {
		dir = getenv("SC_TEST_SHADOW");
		__atomic_store_n(&init, 1, __ATOMIC_RELEASE);
	}
	return dir && *dir ? dir : NULL;
}

/*
 * A file just made: its inode number may be one a removed file had, whose
 * copy must not stand for it (never synced yet: nothing of it is durable).
 */
static void px_shadow_new(const struct stat *st)
{
	const char *dir = shadow_dir();
	char path[PATH_MAX];

	if (!dir || !S_ISREG(st->st_mode))
		return;
	snprintf(path, sizeof(path), "%s/%llx-%llx", dir, (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	unlink(path);
}

static void px_shadow(int fd)
{
	const char *dir = shadow_dir();
	char path[PATH_MAX], tmp[PATH_MAX + 32], buf[65536];
	int in, out, ok;
	struct stat st;
	off_t off = 0;
	ssize_t n = 0;

	if (!dir || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	snprintf(path, sizeof(path), "%s/%llx-%llx", dir, (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)gettid());
	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", fd);	/* the fd may be write-only */
	in = open(buf, O_RDONLY | O_CLOEXEC);
	out = in < 0 ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ok = out >= 0;
	while (ok && (n = pread(in, buf, sizeof(buf), off)) > 0) {
		ok = write(out, buf, (size_t)n) == n;
		off += n;
	}
	if (in >= 0)
		close(in);
	if (out >= 0 && (close(out) < 0 || !ok || n < 0 || rename(tmp, path) < 0))
		unlink(tmp);
}

/* After a syncfs: every regular file below dirfd (the root), as px_shadow. */
static void px_shadow_tree(int top)
{
	DIR *d;
	struct dirent *e;
	int fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (e->d_type == DT_DIR)
			px_shadow_tree(fd);
		else
			px_shadow(fd);
		close(fd);
	}
	closedir(d);
}
#else
static void px_step(void)
{
}

static void px_shadow(int fd)
{
	(void)fd;
}

static void px_shadow_tree(int top)
{
	(void)top;
}

static void px_shadow_new(const struct stat *st)
{
	(void)st;
}
#endif

/* The FUSE probe of the top of this file: sets the fallbacks, one notice each. */
static void probe_fuse_backing(struct px_priv *pp, int root_fd)
{
	char type[256];

	fstype_of(pp->dev, type, sizeof(type));
	if (!type[0])
		snprintf(type, sizeof(type), "fuse");
	pp->handles = false;
	sc_log(SC_LOG_INFO, "stackcrypt: posix: notice: the backing directory is on %s, whose "
	       "file handles go stale out of cache: every cached inode keeps an O_PATH fd\n",
	       type);
	if (!noreplace_works(root_fd)) {
		pp->no_noreplace = true;
		sc_log(SC_LOG_INFO, "stackcrypt: posix: notice: %s refuses RENAME_NOREPLACE: "
		       "done by link+unlink (files) or check+rename (directories)\n", type);
	}
	if (!zero_range_works(root_fd)) {
		pp->no_zero_range = true;
		sc_log(SC_LOG_INFO, "stackcrypt: posix: notice: %s does not zero on (or refuses) "
		       "FALLOC_FL_ZERO_RANGE: done by punching a hole, then allocating\n", type);
	}
	if (!strcmp(type, "fuse.glusterfs"))
		sc_log(SC_LOG_INFO, "stackcrypt: posix: notice: GlusterFS backing: its volume needs "
		       "performance.stat-prefetch off, or sizes read back after a write can be "
		       "stale (docs/usage.md, \"Over GlusterFS\")\n");
}

static int px_init(struct sc_xl *xl, struct sc_obj *root, struct sc_xl_conf *conf)
{
	struct px_priv *pp = xl->priv;
	struct statfs sfs;
	struct rlimit rl;
	struct stat st;
	int ret;

	pp->writeback = conf->writeback;
	pp->mount_fd = -1;
	ret = stat_fd(root->fd, &st);
	if (ret < 0)
		return ret;
	pp->dev = st.st_dev;
	if (conf->max_path_fds >= 0)
		pp->budget = conf->max_path_fds;
	else if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		pp->budget = (long)(rl.rlim_cur / 2);
	else
		pp->budget = 1L << 20;
	atomic_init(&pp->kept, 0);
	pp->mount_fd = openat(root->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pp->mount_fd >= 0)
		pp->handles = handles_work(root->fd, pp->mount_fd);
	if (fstatfs(root->fd, &sfs) == 0 && (unsigned long)sfs.f_type == FUSE_SUPER_MAGIC) {
		pp->on_fuse = true;
		probe_fuse_backing(pp, root->fd);
	}
	return 0;
}

static void px_destroy(struct sc_xl *xl)
{
	struct px_priv *pp = xl->priv;

	if (pp && pp->mount_fd >= 0)
		close(pp->mount_fd);
	free(xl->priv);
	xl->priv = NULL;
}

/*
 * A new inode: keep its O_PATH fd while the budget lasts, else trade a
 * regular file's fd for a handle.  Runs before the object is visible to
 * any other thread, so nobody can be using the fd being closed.
 */
static void px_adopt(struct sc_xl *xl, struct sc_obj *obj, const struct stat *st)
{
	struct px_priv *pp = xl->priv;
	struct file_handle *h;
	int mid;

	if (obj->fd < 0)
		return;
	if (!pp->handles || !S_ISREG(st->st_mode) || st->st_dev != pp->dev ||
	    atomic_load(&pp->kept) < pp->budget)
		goto keep_fd;
	h = handle_of(obj->fd, &mid);
	if (!h)
		goto keep_fd;
	close(obj->fd);
	obj->fd = -1;
	obj->priv[xl->id] = h;
	return;

keep_fd:
	atomic_fetch_add(&pp->kept, 1);
}

static void px_forget(struct sc_xl *xl, struct sc_obj *obj)
{
	struct px_priv *pp = xl->priv;

	if (obj->priv[xl->id]) {
		free(obj->priv[xl->id]);
		obj->priv[xl->id] = NULL;
	} else if (obj->fd >= 0 && !obj->is_root) {
		atomic_fetch_sub(&pp->kept, 1);
	}
}

static bool px_same(struct sc_xl *xl, const struct sc_obj *obj, int fd)
{
	const struct file_handle *h = obj->priv[xl->id];
	struct file_handle *nh;
	bool same;
	int mid;

	if (!h)
		return true;	/* it holds an fd: its inode cannot have been reused */
	nh = handle_of(fd, &mid);
	if (!nh)
		return true;	/* cannot tell: one entry per (dev, ino) as without handles */
	same = nh->handle_type == h->handle_type && nh->handle_bytes == h->handle_bytes &&
	       memcmp(nh->f_handle, h->f_handle, h->handle_bytes) == 0;
	free(nh);
	return same;
}

/*
 * An O_PATH fd on obj for the duration of one call: its own, or one opened
 * from its handle.  Release with put_fd().  A handle whose object is gone
 * (ESTALE) reads as ENOENT, as a vanished name would.
 */
static int get_fd(struct sc_xl *xl, const struct sc_obj *obj)
{
	struct px_priv *pp = xl->priv;
	struct file_handle *h = obj->priv[xl->id];
	int fd;

	if (obj->fd >= 0)
		return obj->fd;
	if (!h)
		return -EBADF;
	fd = open_by_handle_at(pp->mount_fd, h, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ESTALE ? -ENOENT : -errno;
	return fd;
}

static void put_fd(const struct sc_obj *obj, int fd)
{
	if (fd >= 0 && fd != obj->fd)
		close(fd);
}

/* Every O_PATH fd handed up was opened here. */
static void px_drop_fd(struct sc_xl *xl, int fd)
{
	(void)xl;
	if (fd >= 0)
		close(fd);
}

static int px_lookup(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			int *fd_out, struct stat *st)
{
	(void)xl;
	return open_child(dir->fd, name, fd_out, st);
}

static int px_getattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 struct stat *st)
{
	int fd, ret;

	if (fh && fh->fd >= 0) {
		if (fstat(fh->fd, st) < 0)
			return -errno;
		return 0;
	}
	fd = get_fd(xl, obj);
	if (fd < 0)
		return fd;
	ret = stat_fd(fd, st);
	put_fd(obj, fd);
	return ret;
}

static int set_times(int pfd, struct sc_obj *obj, struct sc_fh *fh,
		     const struct stat *attr, int valid)
{
	struct timespec tv[2];
	char proc[PROC_FD_LEN];

	tv[0].tv_sec = 0;
	tv[1].tv_sec = 0;
	tv[0].tv_nsec = UTIME_OMIT;
	tv[1].tv_nsec = UTIME_OMIT;
	if (valid & SC_SET_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (valid & SC_SET_ATIME)
		tv[0] = attr->st_atim;
	if (valid & SC_SET_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (valid & SC_SET_MTIME)
		tv[1] = attr->st_mtim;

	if (fh && fh->fd >= 0)
		return futimens(fh->fd, tv) < 0 ? -errno : 0;
	if (utimensat(pfd, "", tv, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != EINVAL || S_ISLNK(obj->type))
		return -errno;
	/* Kernels before 5.8 refuse AT_EMPTY_PATH here. */
	proc_path(proc, pfd);
	return utimensat(AT_FDCWD, proc, tv, 0) < 0 ? -errno : 0;
}

static int px_setattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 const struct stat *attr, int valid, struct stat *st)
{
	char proc[PROC_FD_LEN];
	bool have_fd = fh && fh->fd >= 0;
	int pfd, ret = 0;

	px_step();
	pfd = get_fd(xl, obj);
	if (pfd < 0)
		return pfd;
	if (valid & SC_SET_MODE) {
		if (have_fd)
			ret = fchmod(fh->fd, attr->st_mode);
		else if (S_ISLNK(obj->type))
			ret = (errno = EOPNOTSUPP, -1);	/* Linux: symlink modes are fixed */
		else {
			proc_path(proc, pfd);
			ret = chmod(proc, attr->st_mode);
		}
		if (ret < 0)
			goto out_errno;
	}
	if (valid & (SC_SET_UID | SC_SET_GID)) {
		uid_t uid = (valid & SC_SET_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & SC_SET_GID) ? attr->st_gid : (gid_t)-1;

		if (fchownat(pfd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			goto out_errno;
	}
	if (valid & SC_SET_SIZE) {
		if (have_fd)
			ret = ftruncate(fh->fd, attr->st_size);
		else {
			proc_path(proc, pfd);
			ret = truncate(proc, attr->st_size);
		}
		if (ret < 0)
			goto out_errno;
	}
	if (valid & (SC_SET_ATIME | SC_SET_MTIME |
		     SC_SET_ATIME_NOW | SC_SET_MTIME_NOW)) {
		ret = set_times(pfd, obj, fh, attr, valid);
		if (ret < 0)
			goto out_put_fd;
	}
	/* ctime cannot be set; the changes above moved it. */
	if (have_fd)
		ret = fstat(fh->fd, st) < 0 ? -errno : 0;
	else
		ret = stat_fd(pfd, st);
	goto out_put_fd;

out_errno:
	ret = -errno;
out_put_fd:
	put_fd(obj, pfd);
	return ret;
}

static int px_mknod(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       mode_t mode, dev_t rdev, int *fd_out, struct stat *st)
{
	int ret;

	(void)xl;
	px_step();
	if (mknodat(dir->fd, name, mode, rdev) < 0)
		return -errno;
	ret = open_child(dir->fd, name, fd_out, st);
	if (ret == 0)
		px_shadow_new(st);
	return ret;
}

static int px_mkdir(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       mode_t mode, int *fd_out, struct stat *st)
{
	(void)xl;
	px_step();
	if (mkdirat(dir->fd, name, mode) < 0)
		return -errno;
	return open_child(dir->fd, name, fd_out, st);
}

static int px_symlink(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			 const char *target, int *fd_out, struct stat *st)
{
	(void)xl;
	px_step();
	if (symlinkat(target, dir->fd, name) < 0)
		return -errno;
	return open_child(dir->fd, name, fd_out, st);
}

static int px_link(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		      const char *newname, struct stat *st)
{
	char proc[PROC_FD_LEN];
	int fd, ret;

	px_step();
	fd = get_fd(xl, obj);
	if (fd < 0)
		return fd;
	if (linkat(fd, "", newdir->fd, newname, AT_EMPTY_PATH) < 0) {
		/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; a user mount has not. */
		if (errno != ENOENT && errno != EPERM)
			goto out_errno;
		proc_path(proc, fd);
		if (linkat(AT_FDCWD, proc, newdir->fd, newname, AT_SYMLINK_FOLLOW) < 0)
			goto out_errno;
	}
	ret = stat_fd(fd, st);
	put_fd(obj, fd);
	return ret;

out_errno:
	ret = -errno;
	put_fd(obj, fd);
	return ret;
}

static int px_unlink(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	(void)xl;
	px_step();
	return unlinkat(dir->fd, name, 0) < 0 ? -errno : 0;
}

static int px_rmdir(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	(void)xl;
	px_step();
	return unlinkat(dir->fd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/*
 * RENAME_NOREPLACE where the backing filesystem refuses it (top of file):
 * link(2) never replaces, so a file's new name is taken atomically or
 * EEXIST comes back, as from renameat2; killed half way, the file is left
 * with both names (nothing lost).  A directory is renamed once its new name
 * is seen free, in one step, so a crash leaves it under one name or the
 * other (an empty placeholder made first would, killed half way, leave a
 * directory without the names layer's nonce record under the new name).
 */
static int rename_noreplace(int olddir, const char *old, int newdir, const char *new)
{
	struct stat st;
	int ret;

	if (fstatat(olddir, old, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode)) {
		if (linkat(olddir, old, newdir, new, 0) < 0)
			return -errno;
		if (unlinkat(olddir, old, 0) < 0) {
			ret = -errno;
			unlinkat(newdir, new, 0);
			return ret;
		}
		return 0;
	}
	if (fstatat(newdir, new, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	if (errno != ENOENT)
		return -errno;
	return renameat(olddir, old, newdir, new) < 0 ? -errno : 0;
}

static int px_rename(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			struct sc_obj *newdir, const char *newname, unsigned int flags)
{
	const struct px_priv *pp = xl->priv;
	int ret;

	px_step();
	if (flags == RENAME_NOREPLACE && pp->no_noreplace)
		return rename_noreplace(dir->fd, name, newdir->fd, newname);
	if (flags)
		ret = renameat2(dir->fd, name, newdir->fd, newname, flags);
	else
		ret = renameat(dir->fd, name, newdir->fd, newname);
	return ret < 0 ? -errno : 0;
}

static ssize_t px_readlink(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = get_fd(xl, obj);
	if (fd < 0)
		return fd;
	n = readlinkat(fd, "", buf, size);
	if (n < 0)
		n = -errno;
	put_fd(obj, fd);
	return n;
}

static int px_statfs(struct sc_xl *xl, struct sc_obj *obj, struct statvfs *sv)
{
	int fd, ret;

	fd = get_fd(xl, obj);
	if (fd < 0)
		return fd;
	ret = fstatvfs(fd, sv) < 0 ? -errno : 0;
	put_fd(obj, fd);
	return ret;
}

/*
 * Extended attributes go through /proc/self/fd/N, which resolves to the
 * object itself for files and directories.  For a symlink it would resolve
 * to the link and then follow it, and there is no race-free way to reach the
 * link's own xattrs from an O_PATH fd: report none and refuse changes (user.*
 * xattrs are not allowed on symlinks anyway).  One function does the four
 * calls so that this rule and the fd handling stand once.
 */
enum px_xattr_op { PX_XA_GET, PX_XA_LIST, PX_XA_SET, PX_XA_REMOVE };

static ssize_t px_xattr(struct sc_xl *xl, struct sc_obj *obj, enum px_xattr_op op,
			const char *name, void *out, const void *in, size_t size, int flags)
{
	char proc[PROC_FD_LEN];
	ssize_t n;
	int fd;

	if (S_ISLNK(obj->type))
		return op == PX_XA_GET ? -ENODATA : op == PX_XA_LIST ? 0 : -EPERM;
	fd = get_fd(xl, obj);
	if (fd < 0)
		return fd;
	proc_path(proc, fd);
	switch (op) {
	case PX_XA_GET:
		n = getxattr(proc, name, out, size);
		break;
	case PX_XA_LIST:
		n = listxattr(proc, out, size);
		break;
	case PX_XA_SET:
		n = setxattr(proc, name, in, size, flags);
		break;
	default:
		n = removexattr(proc, name);
		break;
	}
	if (n < 0)
		n = -errno;
	put_fd(obj, fd);
	return n;
}

static ssize_t px_getxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
			      void *buf, size_t size)
{
	return px_xattr(xl, obj, PX_XA_GET, name, buf, NULL, size, 0);
}

static ssize_t px_listxattr(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	return px_xattr(xl, obj, PX_XA_LIST, NULL, buf, NULL, size, 0);
}

static int px_setxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
			  const void *value, size_t size, int flags)
{
	px_step();
	return (int)px_xattr(xl, obj, PX_XA_SET, name, NULL, value, size, flags);
}

static int px_removexattr(struct sc_xl *xl, struct sc_obj *obj, const char *name)
{
	px_step();
	return (int)px_xattr(xl, obj, PX_XA_REMOVE, name, NULL, NULL, 0, 0);
}

/*
 * Flags for the backing open: creation flags are handled by ->create.
 * O_APPEND is always dropped: the kernel resolves O_APPEND itself and sends
 * every WRITE with an explicit offset, but it also writes back dirty mmap
 * pages through any writable handle, and pwrite() on an O_APPEND backing fd
 * would append those pages at EOF instead (found by sc_fsx: mapwrite after
 * a reopen with O_RDWR|O_APPEND grew the file by the mapping's length).
 */
static int backing_flags(const struct sc_xl *xl, int flags)
{
	const struct px_priv *pp = xl->priv;

	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW | O_APPEND);
	if (pp->writeback) {
		/* The kernel may read pages of a file opened write-only. */
		if ((flags & O_ACCMODE) == O_WRONLY)
			flags = (flags & ~O_ACCMODE) | O_RDWR;
	}
	return flags | O_CLOEXEC;
}

static int px_open(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct px_priv *pp = xl->priv;
	char proc[PROC_FD_LEN];
	int fd;

	if (obj->fd >= 0) {
		proc_path(proc, obj->fd);
		fd = open(proc, backing_flags(xl, fh->flags));
	} else if (obj->priv[xl->id]) {
		fd = open_by_handle_at(pp->mount_fd, obj->priv[xl->id],
				       backing_flags(xl, fh->flags));
		if (fd < 0 && errno == ESTALE)
			errno = ENOENT;
	} else {
		errno = EBADF;
		fd = -1;
	}
	if (fd < 0)
		return -errno;
	fh->fd = fd;
	return 0;
}

static int px_create(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			mode_t mode, struct sc_fh *fh, int *fd_out, struct stat *st)
{
	char proc[PROC_FD_LEN];
	int fd, pfd, ret;

	px_step();
	fd = openat(dir->fd, name, backing_flags(xl, fh->flags) | O_CREAT |
		    (fh->flags & O_EXCL), mode);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0)
		goto err_close_fd;
	if (fh->flags & O_EXCL)
		px_shadow_new(st);
	/* The O_PATH fd must be the object we opened, not whatever has the name now. */
	proc_path(proc, fd);
	pfd = open(proc, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		goto err_close_fd;
	fh->fd = fd;
	*fd_out = pfd;
	return 0;

err_close_fd:
	ret = -errno;
	close(fd);
	return ret;
}

/* Reads until size bytes or EOF: a short count from pread is not EOF. */
static ssize_t px_read(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  void *buf, size_t size, off_t off)
{
	size_t done = 0;

	(void)xl;
	(void)obj;
	while (done < size) {
		ssize_t n = pread(fh->fd, (char *)buf + done, size - done, off + done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

static ssize_t px_write(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			   const void *buf, size_t size, off_t off)
{
	size_t done = 0;

	(void)obj;
	px_step();
	if (fh->priv[xl->id] && off >= 0 &&
	    px_map_write(fh->priv[xl->id], buf, size, (uint64_t)off))
		return (ssize_t)size;
	while (done < size) {
		ssize_t n = pwrite(fh->fd, (const char *)buf + done, size - done, off + done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (n == 0)
			return done ? (ssize_t)done : -EIO;
		done += n;
	}
	return done;
}

static int px_flush(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	int fd;

	(void)xl;
	(void)obj;
	/*
	 * close(2) of the user's fd: close a duplicate of ours so a backing
	 * filesystem that reports errors at close (NFS) gets to report them.
	 */
	fd = dup(fh->fd);
	if (fd < 0)
		return -errno;
	return close(fd) < 0 ? -errno : 0;
}

/* fsync and fsyncdir: both handles keep their open fd in fh->fd. */
static int px_fsync(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int datasync)
{
	(void)xl;
	(void)obj;
	px_step();
	if ((datasync ? fdatasync(fh->fd) : fsync(fh->fd)) < 0)
		return -errno;
	px_shadow(fh->fd);
	return 0;
}

/* Through a readable fd of obj's directory (syncfs(2) refuses O_PATH fds). */
static int px_syncfs(struct sc_xl *xl, struct sc_obj *obj)
{
	struct px_priv *pp = xl->priv;
	int fd, dfd, ret;

	if (!obj)
		return 0;
	fd = get_fd(xl, obj);
	if (fd < 0)
		return fd;
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = dfd < 0 ? -errno : 0;
	put_fd(obj, fd);
	if (ret < 0)
		return ret;
	px_step();
	ret = syncfs(dfd) < 0 ? -errno : 0;
	close(dfd);
	if (ret == 0 && pp->mount_fd >= 0)
		px_shadow_tree(pp->mount_fd);
	return ret;
}

static int px_map(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, uint64_t len)
{
	struct px_map *m;
	int ret;

	(void)obj;
	/*
	 * Not on a FUSE backing (a GlusterFS FUSE mount): there a pwrite goes
	 * to the filesystem's daemon at once, while a store into a mapping
	 * waits in this kernel's page cache for writeback, so a record could
	 * be lost with that daemon where a pwrite would not have been.
	 */
	if (((struct px_priv *)xl->priv)->on_fuse)
		return -EOPNOTSUPP;
	if (fh->fd < 0 || fh->priv[xl->id])
		return -EINVAL;
	ret = px_map_new(fh->fd, len, &m);
	if (ret == 0)
		fh->priv[xl->id] = m;
	return ret;
}

static int px_release(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	(void)obj;
	px_map_free(fh->priv[xl->id]);
	fh->priv[xl->id] = NULL;
	if (fh->fd >= 0)
		close(fh->fd);
	fh->fd = -1;
	return 0;
}

static int px_fallocate(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			   int mode, off_t off, off_t len)
{
	const struct px_priv *pp = xl->priv;

	(void)obj;
	px_step();
	if ((mode & FALLOC_FL_ZERO_RANGE) && pp->no_zero_range) {
		/* ZERO_RANGE alone or with KEEP_SIZE (top of file) */
		if (mode & ~(FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE))
			return -EOPNOTSUPP;
		if (fallocate(fh->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) < 0)
			return -errno;
		mode &= FALLOC_FL_KEEP_SIZE;
	}
	return fallocate(fh->fd, mode, off, len) < 0 ? -errno : 0;
}

static off_t px_lseek(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 off_t off, int whence)
{
	off_t r;

	(void)xl;
	(void)obj;
	r = lseek(fh->fd, off, whence);
	return r < 0 ? -errno : r;
}

static ssize_t px_copy_file_range(struct sc_xl *xl,
				     struct sc_obj *obj_in, struct sc_fh *fh_in, off_t off_in,
				     struct sc_obj *obj_out, struct sc_fh *fh_out, off_t off_out,
				     size_t len, int flags)
{
	ssize_t n;

	(void)xl;
	(void)obj_in;
	(void)obj_out;
	px_step();
	n = copy_file_range(fh_in->fd, &off_in, fh_out->fd, &off_out, len, flags);
	return n < 0 ? -errno : n;
}

/*
 * A directory's stream, and the entry the layer above refused when its
 * reply buffer filled.  That entry has been read from the stream, so the
 * next call, which asks for it by its cookie, would have to seek back:
 * seekdir drops libc's 32 KiB of entries already read, and on ext4 the
 * next getdents hashes the whole leaf block again.  Instead it is kept
 * here and handed first, and the stream goes on where it stands (one
 * lseek and one getdents fewer per FUSE reply; docs/performance.md 18).
 */
struct px_dir {
	DIR		*dp;
	bool		held;		/* an entry is kept */
	off_t		held_at;	/* the cookie that asks for it */
	off_t		after;		/* where the stream stands: its next_off */
	ino_t		ino;
	mode_t		type;
	char		name[NAME_MAX + 1];
};

static int px_opendir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct px_dir *pd;
	int fd, ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	/* Directories always keep their O_PATH fd (see px_adopt). */
	fd = openat(obj->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto err_free;
	}
	pd->dp = fdopendir(fd);
	if (!pd->dp) {
		ret = -errno;
		close(fd);
		goto err_free;
	}
	fh->fd = fd;
	fh->priv[xl->id] = pd;
	return 0;

err_free:
	free(pd);
	return ret;
}

/* Keeps de, refused by the layer above, for the call that asks for it at cookie at. */
static void px_hold(struct px_dir *pd, const struct sc_dirent *de, off_t at)
{
	size_t len = strlen(de->name);

	if (len > NAME_MAX)
		return;	/* cannot happen (d_name is NAME_MAX + 1); the next call seeks */
	memcpy(pd->name, de->name, len + 1);
	pd->ino = de->ino;
	pd->type = de->type;
	pd->held_at = at;
	pd->after = de->next_off;
	pd->held = true;
}

static int px_readdir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off,
			 int (*fill)(void *ctx, const struct sc_dirent *de), void *ctx)
{
	struct px_dir *pd = fh->priv[xl->id];
	DIR *dp = pd->dp;
	struct sc_dirent de;
	off_t at = off;		/* the cookie of the next entry handed up */

	(void)obj;
	/*
	 * Not at offset 0: a listing started again must see the directory as
	 * it is now (rewinddir), not an entry read before.
	 */
	if (pd->held && off != 0 && off == pd->held_at && telldir(dp) == pd->after) {
		pd->held = false;
		de.name = pd->name;
		de.ino = pd->ino;
		de.type = pd->type;
		de.next_off = pd->after;
		if (fill(ctx, &de)) {
			pd->held = true;	/* refused again: the same call will come */
			return 0;
		}
		at = pd->after;
	} else {
		pd->held = false;
		/*
		 * telldir() costs no syscall in glibc; seek only when the kernel
		 * asks for another position than where the stream stands
		 * (rewinddir, or a seek by the user), not on the first call.
		 */
		if (telldir(dp) != off) {
			if (off == 0)
				rewinddir(dp);
			else
				seekdir(dp, off);
		}
	}

	for (;;) {
		struct dirent *d;

		errno = 0;
		d = readdir(dp);
		if (!d)
			return errno ? -errno : 0;
		de.name = d->d_name;
		de.ino = d->d_ino;
		de.type = d->d_type == DT_UNKNOWN ? 0 : DTTOIF(d->d_type);
		de.next_off = d->d_off;
		if (fill(ctx, &de)) {
			px_hold(pd, &de, at);	/* the stream stands past this entry */
			return 0;
		}
		at = d->d_off;
	}
}

static int px_releasedir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct px_dir *pd = fh->priv[xl->id];

	(void)obj;
	if (pd) {
		closedir(pd->dp);	/* closes fh->fd too */
		free(pd);
	} else if (fh->fd >= 0) {
		close(fh->fd);
	}
	fh->priv[xl->id] = NULL;
	fh->fd = -1;
	return 0;
}

/*
 * Is root on a local kernel file system we know: ext4 (also ext2, ext3),
 * XFS, btrfs, tmpfs, f2fs?  They never report an error at close(2), and
 * their journals (or checkpoints) commit metadata changes in the order
 * they were made.  NFS, CIFS, FUSE (a GlusterFS FUSE mount) and anything
 * unknown are not.
 */
static bool px_local(struct sc_obj *root)
{
	struct statfs sfs;

	if (fstatfs(root->fd, &sfs) < 0)
		return false;
	switch ((unsigned long)sfs.f_type) {
	case EXT4_SUPER_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case F2FS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

/* The front end asks for no FLUSH over a local file system. */
static bool px_close_is_silent(struct sc_xl *xl, struct sc_obj *root)
{
	(void)xl;
	return px_local(root);
}

static bool px_meta_ordered(struct sc_xl *xl, struct sc_obj *root)
{
	(void)xl;
	return px_local(root);
}

static const struct sc_xl_ops px_ops = {
	.name			= "posix",
	.init			= px_init,
	.destroy		= px_destroy,
	.forget			= px_forget,
	.adopt			= px_adopt,
	.same			= px_same,
	.drop_fd		= px_drop_fd,
	.close_is_silent	= px_close_is_silent,
	.meta_ordered		= px_meta_ordered,
	.lookup			= px_lookup,
	.getattr		= px_getattr,
	.setattr		= px_setattr,
	.mknod			= px_mknod,
	.mkdir			= px_mkdir,
	.symlink		= px_symlink,
	.link			= px_link,
	.unlink			= px_unlink,
	.rmdir			= px_rmdir,
	.rename			= px_rename,
	.readlink		= px_readlink,
	.statfs			= px_statfs,
	.syncfs			= px_syncfs,
	.getxattr		= px_getxattr,
	.listxattr		= px_listxattr,
	.setxattr		= px_setxattr,
	.removexattr		= px_removexattr,
	.open			= px_open,
	.create			= px_create,
	.read			= px_read,
	.write			= px_write,
	.flush			= px_flush,
	.fsync			= px_fsync,
	.release		= px_release,
	.fallocate		= px_fallocate,
	.lseek			= px_lseek,
	.copy_file_range	= px_copy_file_range,
	.map			= px_map,
	.opendir		= px_opendir,
	.readdir		= px_readdir,
	.fsyncdir		= px_fsync,	/* a directory's fh->fd syncs alike */
	.releasedir		= px_releasedir,
};

int sc_posix_xl_new(struct sc_xl **out)
{
	struct sc_xl *xl;

	xl = calloc(1, sizeof(*xl));
	if (!xl)
		return -ENOMEM;
	xl->priv = calloc(1, sizeof(struct px_priv));
	if (!xl->priv) {
		free(xl);
		return -ENOMEM;
	}
	xl->ops = &px_ops;
	xl->below = NULL;
	xl->id = 0;
	*out = xl;
	return 0;
}
