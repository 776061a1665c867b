/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * faultdev.c - a disk image that fails on command, for the backing I/O
 * error tests when the kernel has no device-mapper.
 *
 *   faultdev IMAGE MOUNTPOINT        (stays in the foreground)
 *
 * Serves two files at MOUNTPOINT: "disk", the bytes of IMAGE, and "ctl".
 * A loop device attached to MOUNTPOINT/disk is then a block device whose
 * requests all pass through this program (the file is opened with
 * direct_io, so no page cache sits between the loop driver and us), and a
 * filesystem made on it sees real block I/O errors -- the same thing a
 * device-mapper `error` table gives (dm-error fails bios with -EIO; so do
 * we, the loop driver turns our EIO into BLK_STS_IOERR).
 *
 * ctl, written with one line:
 *   ok                       no faults
 *   error START LEN          reads and writes touching [START, START+LEN) fail
 *   error-reads START LEN    only reads fail
 *   error-writes START LEN   only writes fail (nothing is stored)
 *   hold                     power-loss mode, from now on (below)
 *   powercut                 the power fails (power-loss mode only)
 * (bytes; LEN 0 means to the end of the disk).  Read back, ctl gives the
 * counters: "reads=N writes=N read_bytes=N write_bytes=N eio_reads=N
 * eio_writes=N mode=M start=S len=L fsyncs=N power=on|hold|cut
 * held_sectors=N flushed_sectors=N cut_sectors=N eio_dead=N".
 *
 * Power-loss mode, for a power cut under a filesystem (dm-log-writes and
 * dm-flakey's drop_writes do it with device-mapper): a disk with a
 * volatile write cache.  A write goes to an overlay (a sparse unlinked
 * file beside IMAGE, whole 512-byte sectors, and a bitmap of the sectors
 * it holds); a read sees the overlay over the image; a flush moves the
 * held sectors into the image and fsyncs it.  The loop driver announces a
 * write cache without FUA, so the block layer turns every REQ_PREFLUSH
 * and REQ_FUA into a flush request, which it serves with vfs_fsync() of
 * its backing file: a FUSE fsync here, counted in fsyncs (ext4, with its
 * default barriers, asks for them at each journal commit; the test checks
 * they arrive).  `powercut` throws the overlay away and fails every later
 * request with EIO (counted in eio_dead), so IMAGE is left as a disk
 * that lost all its cache: what was flushed, nothing after.  That is the
 * harshest of the states a power loss can leave, not every one: a disk
 * may also write back part of its cache, in any order, which this model
 * does not replay (dm-log-writes can).  tests/reliability/t_rekey_power.sh
 * cuts the power under stackcrypt rekey at each of its steps.
 *
 * The counters and the fault window are read and changed under one mutex
 * (lock); the data path holds it only to decide, not during pread/pwrite.
 * In power-loss mode the overlay, its bitmap and the image are changed
 * under a second one (plock, taken before lock), so a flush or a cut sees
 * no request half done.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fuse.h>

#define SECTOR		512u

enum fmode { F_OK_ALL, F_ERROR, F_ERROR_READS, F_ERROR_WRITES };

static const char *const mode_names[] = { "ok", "error", "error-reads", "error-writes" };

static struct {
	pthread_mutex_t	lock;
	int		fd;
	off_t		size;
	enum fmode	mode;
	uint64_t	start, len;
	uint64_t	reads, writes, read_bytes, write_bytes, eio_reads, eio_writes;
	/* power-loss mode ("hold", "powercut") */
	pthread_mutex_t	plock;		/* the overlay, bitmap and image, in that mode */
	bool		hold, dead;
	int		ovl_fd;		/* sparse, unlinked: the sectors not yet flushed */
	uint8_t		*held;		/* a bit per sector of the image: in the overlay */
	uint64_t	nheld;		/* bits set in held */
	uint64_t	fsyncs, flushed_sectors, cut_sectors, eio_dead;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .plock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1, .ovl_fd = -1 };

static bool is_held(uint64_t s)
{
	return g.held[s / 8] & (1u << (s % 8));
}

static void set_held(uint64_t s)
{
	if (!is_held(s)) {
		g.held[s / 8] |= (uint8_t)(1u << (s % 8));
		g.nheld++;
	}
}

/* Empties the overlay (its sectors are already in the image, or discarded). */
static int overlay_clear(void)
{
	memset(g.held, 0, (size_t)((g.size / SECTOR + 7) / 8));
	g.nheld = 0;
	return ftruncate(g.ovl_fd, 0) < 0 ? -errno : 0;
}

/* True in power-loss mode (from "hold" on). */
static bool holding(void)
{
	bool h;

	pthread_mutex_lock(&g.lock);
	h = g.hold;
	pthread_mutex_unlock(&g.lock);
	return h;
}

/* Counts a request refused after a power cut; true if it must fail. */
static bool after_cut(void)
{
	bool dead;

	pthread_mutex_lock(&g.lock);
	dead = g.dead;
	g.eio_dead += dead;
	pthread_mutex_unlock(&g.lock);
	return dead;
}

/* pread/pwrite of exactly len bytes.  0 or -errno (-EIO on a short count). */
static int full_io(bool is_write, int fd, void *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t n = is_write ? pwrite(fd, buf, len, off) : pread(fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			if (is_write)
				return -EIO;
			memset(buf, 0, len);	/* past the overlay's end: a hole */
			return 0;
		}
		buf = (char *)buf + n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Read in power-loss mode: the image, then the held sectors over it. */
static int held_read(char *buf, size_t size, off_t off)
{
	uint64_t s, first, last;
	ssize_t n;
	int r = 0;

	if (g.dead)
		return -EIO;	/* cut while this request waited for plock */
	if (off >= g.size)
		return 0;
	if (size > (size_t)(g.size - off))
		size = (size_t)(g.size - off);
	n = pread(g.fd, buf, size, off);
	if (n < 0)
		return -errno;
	first = (uint64_t)off / SECTOR;
	last = ((uint64_t)off + size - 1) / SECTOR;
	for (s = first; s <= last && !r; s++) {
		uint64_t a = s * SECTOR, b = a + SECTOR;

		if (!is_held(s))
			continue;
		if (a < (uint64_t)off)
			a = (uint64_t)off;
		if (b > (uint64_t)off + size)
			b = (uint64_t)off + size;
		r = full_io(false, g.ovl_fd, buf + (a - (uint64_t)off), b - a, (off_t)a);
	}
	return r ? r : (int)size;
}

/*
 * Write in power-loss mode: into the overlay only.  A sector written in
 * part and not yet held is first copied from the image, so the overlay
 * holds whole sectors.
 */
static int held_write(const char *buf, size_t size, off_t off)
{
	uint64_t s, first, last;
	char sec[SECTOR];
	int r = 0;

	if (g.dead)
		return -EIO;
	if (off >= g.size)
		return -ENOSPC;
	if (size > (size_t)(g.size - off))
		size = (size_t)(g.size - off);
	first = (uint64_t)off / SECTOR;
	last = ((uint64_t)off + size - 1) / SECTOR;
	for (s = first; s <= last && !r; s += last > first ? last - first : 1) {
		bool partial = s * SECTOR < (uint64_t)off ||
			       (s + 1) * SECTOR > (uint64_t)off + size;

		if (partial && !is_held(s)) {
			r = full_io(false, g.fd, sec, SECTOR, (off_t)(s * SECTOR));
			if (!r)
				r = full_io(true, g.ovl_fd, sec, SECTOR, (off_t)(s * SECTOR));
		}
	}
	if (!r)
		r = full_io(true, g.ovl_fd, (void *)buf, size, off);
	if (r)
		return r;
	for (s = first; s <= last; s++)
		set_held(s);
	return (int)size;
}

/* A flush in power-loss mode: the held sectors into the image, synced. */
static int held_flush(int datasync)
{
	char sec[SECTOR];
	uint64_t s, nsect = (uint64_t)g.size / SECTOR, moved = 0;
	int r = 0;

	for (s = 0; s < nsect && !r && moved < g.nheld; s++) {
		if (!is_held(s))
			continue;
		r = full_io(false, g.ovl_fd, sec, SECTOR, (off_t)(s * SECTOR));
		if (!r)
			r = full_io(true, g.fd, sec, SECTOR, (off_t)(s * SECTOR));
		moved++;
	}
	if (!r && (datasync ? fdatasync(g.fd) : fsync(g.fd)) < 0)
		r = -errno;
	if (r)
		return r;
	pthread_mutex_lock(&g.lock);
	g.flushed_sectors += moved;
	pthread_mutex_unlock(&g.lock);
	return overlay_clear();
}

/* True if an I/O of len bytes at off must fail; counts it either way. */
static bool must_fail(bool is_write, uint64_t off, size_t len)
{
	bool hit;

	pthread_mutex_lock(&g.lock);
	hit = g.mode == F_ERROR || (g.mode == F_ERROR_READS && !is_write) ||
	      (g.mode == F_ERROR_WRITES && is_write);
	if (hit) {
		uint64_t end = g.len ? g.start + g.len : UINT64_MAX;

		hit = off < end && off + len > g.start;
	}
	if (is_write) {
		g.writes++;
		g.write_bytes += len;
		g.eio_writes += hit;
	} else {
		g.reads++;
		g.read_bytes += len;
		g.eio_reads += hit;
	}
	pthread_mutex_unlock(&g.lock);
	return hit;
}

/* Renders the counters into buf; returns the length. */
static int ctl_text(char *buf, size_t cap)
{
	int n;

	pthread_mutex_lock(&g.plock);	/* nheld is the overlay's */
	pthread_mutex_lock(&g.lock);
	n = snprintf(buf, cap, "reads=%" PRIu64 " writes=%" PRIu64 " read_bytes=%" PRIu64
		     " write_bytes=%" PRIu64 " eio_reads=%" PRIu64 " eio_writes=%" PRIu64
		     " mode=%s start=%" PRIu64 " len=%" PRIu64 " fsyncs=%" PRIu64
		     " power=%s held_sectors=%" PRIu64 " flushed_sectors=%" PRIu64
		     " cut_sectors=%" PRIu64 " eio_dead=%" PRIu64 "\n",
		     g.reads, g.writes, g.read_bytes, g.write_bytes, g.eio_reads, g.eio_writes,
		     mode_names[g.mode], g.start, g.len, g.fsyncs,
		     g.dead ? "cut" : g.hold ? "hold" : "on", g.nheld, g.flushed_sectors,
		     g.cut_sectors, g.eio_dead);
	pthread_mutex_unlock(&g.lock);
	pthread_mutex_unlock(&g.plock);
	return n;
}

static int fd_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (!strcmp(path, "/disk")) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = g.size;
	} else if (!strcmp(path, "/ctl")) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = 4096;
	} else {
		return -ENOENT;
	}
	return 0;
}

static int fd_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOTDIR;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, "disk", NULL, 0, 0);
	fill(buf, "ctl", NULL, 0, 0);
	return 0;
}

static int fd_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/disk") && strcmp(path, "/ctl"))
		return -ENOENT;
	/* Every loop request must reach us: no page cache in between. */
	fi->direct_io = 1;
	return 0;
}

/* Truncate of disk or ctl (O_TRUNC on `echo > ctl`): nothing to do. */
static int fd_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)size;
	(void)fi;
	return strcmp(path, "/disk") && strcmp(path, "/ctl") ? -ENOENT : 0;
}

static int fd_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	ssize_t n;
	int ret;

	(void)fi;
	if (!strcmp(path, "/ctl")) {
		char text[512];
		int len = ctl_text(text, sizeof(text));

		if (off >= len)
			return 0;
		if (size > (size_t)(len - off))
			size = (size_t)(len - off);
		memcpy(buf, text + off, size);
		return (int)size;
	}
	if (after_cut() || must_fail(false, (uint64_t)off, size))
		return -EIO;
	if (holding()) {
		pthread_mutex_lock(&g.plock);
		ret = held_read(buf, size, off);
		pthread_mutex_unlock(&g.plock);
		return ret;
	}
	n = pread(g.fd, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

/* Parses one ctl command.  Returns 0 or -EINVAL. */
static int ctl_command(const char *buf, size_t size)
{
	char line[256], word[32];
	unsigned long long start = 0, len = 0;
	enum fmode m;
	int k;

	if (size >= sizeof(line))
		return -EINVAL;
	memcpy(line, buf, size);
	line[size] = 0;
	k = sscanf(line, "%31s %llu %llu", word, &start, &len);
	if (k < 1)
		return -EINVAL;
	if (!strcmp(word, "hold") || !strcmp(word, "powercut")) {
		bool cut = word[0] == 'p';
		int r = 0;

		if (k != 1)
			return -EINVAL;
		/* plock first: no request is between its overlay and image steps */
		pthread_mutex_lock(&g.plock);
		pthread_mutex_lock(&g.lock);
		if (cut && !g.hold) {
			r = -EINVAL;	/* nothing held: a cut would lose nothing */
		} else if (cut) {
			g.cut_sectors += g.nheld;
			g.dead = true;
		} else {
			g.hold = true;
		}
		pthread_mutex_unlock(&g.lock);
		if (!r && cut)
			r = overlay_clear();
		pthread_mutex_unlock(&g.plock);
		return r;
	}
	for (m = F_OK_ALL; m <= F_ERROR_WRITES; m++)
		if (!strcmp(word, mode_names[m]))
			break;
	if (m > F_ERROR_WRITES || (m != F_OK_ALL && k != 3))
		return -EINVAL;
	pthread_mutex_lock(&g.lock);
	g.mode = m;
	g.start = start;
	g.len = len;
	pthread_mutex_unlock(&g.lock);
	return 0;
}

static int fd_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	ssize_t n;
	int ret;

	(void)fi;
	if (!strcmp(path, "/ctl")) {
		ret = ctl_command(buf, size);
		return ret < 0 ? ret : (int)size;
	}
	if (after_cut() || must_fail(true, (uint64_t)off, size))
		return -EIO;
	if (holding()) {
		pthread_mutex_lock(&g.plock);
		ret = held_write(buf, size, off);
		pthread_mutex_unlock(&g.plock);
		return ret;
	}
	if (off >= g.size)
		return -ENOSPC;
	if (size > (size_t)(g.size - off))
		size = (size_t)(g.size - off);
	n = pwrite(g.fd, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

/*
 * The loop driver flushes with fsync on REQ_OP_FLUSH (a REQ_PREFLUSH or
 * REQ_FUA write becomes one: it announces a write cache without FUA);
 * pass it on, counted, and in power-loss mode move the held sectors in.
 */
static int fd_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	int ret;

	(void)fi;
	if (strcmp(path, "/disk"))
		return 0;
	pthread_mutex_lock(&g.lock);
	g.fsyncs++;
	pthread_mutex_unlock(&g.lock);
	if (after_cut())
		return -EIO;
	if (holding()) {
		pthread_mutex_lock(&g.plock);
		ret = g.dead ? -EIO : held_flush(datasync);
		pthread_mutex_unlock(&g.plock);
		return ret;
	}
	return (datasync ? fdatasync(g.fd) : fsync(g.fd)) < 0 ? -errno : 0;
}

static const struct fuse_operations fd_ops = {
	.getattr	= fd_getattr,
	.readdir	= fd_readdir,
	.open		= fd_open,
	.truncate	= fd_truncate,
	.read		= fd_read,
	.write		= fd_write,
	.fsync		= fd_fsync,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct stat st;
	char ovl[4096];
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: faultdev IMAGE MOUNTPOINT\n");
		return 2;
	}
	g.fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (g.fd < 0 || fstat(g.fd, &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	g.size = st.st_size;
	if (g.size % SECTOR) {
		fprintf(stderr, "faultdev: %s: size is not a multiple of %u\n", argv[1], SECTOR);
		return 1;
	}
	/* The overlay: unlinked at once, beside the image (same filesystem). */
	ret = snprintf(ovl, sizeof(ovl), "%s.overlay.XXXXXX", argv[1]);
	g.held = calloc((size_t)((g.size / SECTOR + 7) / 8) + 1, 1);
	if (ret < 0 || (size_t)ret >= sizeof(ovl) || !g.held ||
	    (g.ovl_fd = mkostemp(ovl, O_CLOEXEC)) < 0) {
		perror("faultdev: overlay");
		return 1;
	}
	unlink(ovl);
	/* Foreground, multi-threaded: the data path is pread/pwrite on one fd. */
	if (fuse_opt_add_arg(&args, argv[0]) || fuse_opt_add_arg(&args, "-f") ||
	    fuse_opt_add_arg(&args, "-omax_threads=4") || fuse_opt_add_arg(&args, argv[2])) {
		fuse_opt_free_args(&args);
		return 1;
	}
	ret = fuse_main(args.argc, args.argv, &fd_ops, NULL);
	fuse_opt_free_args(&args);
	close(g.ovl_fd);
	free(g.held);
	close(g.fd);
	return ret;
}
