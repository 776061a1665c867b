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
 * (bytes; LEN 0 means to the end of the disk).  Read back, ctl gives the
 * counters: "reads=N writes=N read_bytes=N write_bytes=N eio_reads=N
 * eio_writes=N mode=M start=S len=L".
 *
 * The counters and the fault window are read and changed under one mutex;
 * the data path holds it only to decide, not during pread/pwrite.
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

enum fmode { F_OK_ALL, F_ERROR, F_ERROR_READS, F_ERROR_WRITES };

static const char *const mode_names[] = { "ok", "error", "error-reads", "error-writes" };

static struct {
	pthread_mutex_t	lock;
	int		fd;
	off_t		size;
	enum fmode	mode;
	uint64_t	start, len;
	uint64_t	reads, writes, read_bytes, write_bytes, eio_reads, eio_writes;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

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

	pthread_mutex_lock(&g.lock);
	n = snprintf(buf, cap, "reads=%" PRIu64 " writes=%" PRIu64 " read_bytes=%" PRIu64
		     " write_bytes=%" PRIu64 " eio_reads=%" PRIu64 " eio_writes=%" PRIu64
		     " mode=%s start=%" PRIu64 " len=%" PRIu64 "\n",
		     g.reads, g.writes, g.read_bytes, g.write_bytes, g.eio_reads, g.eio_writes,
		     mode_names[g.mode], g.start, g.len);
	pthread_mutex_unlock(&g.lock);
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
	if (must_fail(false, (uint64_t)off, size))
		return -EIO;
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
	if (must_fail(true, (uint64_t)off, size))
		return -EIO;
	if (off >= g.size)
		return -ENOSPC;
	if (size > (size_t)(g.size - off))
		size = (size_t)(g.size - off);
	n = pwrite(g.fd, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

/* The loop driver flushes with fsync on REQ_OP_FLUSH; pass it on. */
static int fd_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, "/disk"))
		return 0;
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
	/* Foreground, multi-threaded: the data path is pread/pwrite on one fd. */
	if (fuse_opt_add_arg(&args, argv[0]) || fuse_opt_add_arg(&args, "-f") ||
	    fuse_opt_add_arg(&args, "-omax_threads=4") || fuse_opt_add_arg(&args, argv[2])) {
		fuse_opt_free_args(&args);
		return 1;
	}
	ret = fuse_main(args.argc, args.argv, &fd_ops, NULL);
	fuse_opt_free_args(&args);
	close(g.fd);
	return ret;
}
