/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_posix.c - the posix translator (fs/xlators/posix/posix.c) driven directly, without
 * FUSE, over a scratch directory: every operation of struct sc_xl_ops, the
 * backing errno passed through unchanged, readdir resumed from next_off
 * cookies, and reads/writes larger than one syscall is guaranteed to do.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sc_xlator.h"
#include "sc_stack.h"

static char dir[64];
static struct sc_xl *xl;
static struct sc_obj root;
static struct sc_xl_conf conf = { .max_io = 1 << 20 };

static void setup(void)
{
	struct sc_stack_spec spec;

	strcpy(dir, "/tmp/sc_posix_XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_PASSTHROUGH, NULL, NULL), 0);
	cr_assert_eq(sc_stack_new(&spec, &xl), 0);
	memset(&root, 0, sizeof(root));
	root.fd = open(dir, O_PATH | O_DIRECTORY);
	cr_assert_geq(root.fd, 0);
	root.type = S_IFDIR;
	root.is_root = true;
	cr_assert_eq(sc_xl_stack_init(xl, &root, &conf), 0);
}

static void teardown(void)
{
	char cmd[128];

	close(root.fd);
	sc_xl_stack_free(xl);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(posix, .init = setup, .fini = teardown);

/* An sc_obj for an O_PATH fd the test owns. */
static struct sc_obj obj_of(int fd, const struct stat *st)
{
	struct sc_obj o;

	memset(&o, 0, sizeof(o));
	o.fd = fd;
	o.type = st->st_mode & S_IFMT;
	return o;
}

static struct sc_obj new_file(const char *name, struct sc_fh *fh, int flags)
{
	struct stat st;
	int fd;

	memset(fh, 0, sizeof(*fh));
	fh->fd = -1;
	fh->flags = flags;
	cr_assert_eq(sc_xl_create(xl, &root, name, 0640, fh, &fd, &st), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0640);
	return obj_of(fd, &st);
}

Test(posix, lookup_and_errors_pass_through)
{
	struct stat st;
	int fd;

	cr_assert_eq(sc_xl_lookup(xl, &root, "nope", &fd, &st), -ENOENT);
	cr_assert_eq(sc_xl_unlink(xl, &root, "nope"), -ENOENT);
	cr_assert_eq(sc_xl_mkdir(xl, &root, "d", S_IFDIR | 0750, &fd, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	close(fd);
	cr_assert_eq(sc_xl_mkdir(xl, &root, "d", S_IFDIR | 0750, &fd, &st), -EEXIST);
	cr_assert_eq(sc_xl_lookup(xl, &root, "d", &fd, &st), 0);
	{
		struct sc_obj d = obj_of(fd, &st);
		struct stat st2;
		int fd2;

		cr_assert_eq(sc_xl_mkdir(xl, &d, "sub", S_IFDIR | 0700, &fd2, &st2), 0);
		close(fd2);
		cr_assert_eq(sc_xl_rmdir(xl, &root, "d"), -ENOTEMPTY);
		cr_assert_eq(sc_xl_rmdir(xl, &d, "sub"), 0);
		cr_assert_eq(sc_xl_unlink(xl, &root, "d"), -EISDIR);
	}
	close(fd);
	cr_assert_eq(sc_xl_rmdir(xl, &root, "d"), 0);
}

Test(posix, large_write_and_read_back_with_short_tail)
{
	enum { N = 3 << 20 };
	char *buf = malloc(N), *back = malloc(N);
	struct sc_fh fh;
	struct sc_obj f = new_file("big", &fh, O_RDWR);
	struct stat st;
	size_t i;

	for (i = 0; i < N; i++)
		buf[i] = (char)(i * 31 + (i >> 12));
	cr_assert_eq(sc_xl_write(xl, &f, &fh, buf, N, 12345), N);
	cr_assert_eq(sc_xl_getattr(xl, &f, NULL, &st), 0);
	cr_assert_eq(st.st_size, N + 12345);
	cr_assert_eq(sc_xl_read(xl, &f, &fh, back, N, 12345), N);
	cr_assert_eq(memcmp(buf, back, N), 0);
	/* Past EOF: the count is what exists, then 0. */
	cr_assert_eq(sc_xl_read(xl, &f, &fh, back, 4096, N + 12345 - 100), 100);
	cr_assert_eq(sc_xl_read(xl, &f, &fh, back, 4096, N + 12345), 0);
	cr_assert_eq(sc_xl_fsync(xl, &f, &fh, 0), 0);
	cr_assert_eq(sc_xl_fsync(xl, &f, &fh, 1), 0);
	cr_assert_eq(sc_xl_flush(xl, &f, &fh), 0);
	cr_assert_eq(sc_xl_release(xl, &f, &fh), 0);
	cr_assert_eq(fh.fd, -1);
	close(f.fd);
	free(buf);
	free(back);
}

Test(posix, open_drops_o_append_and_o_excl_create_fails)
{
	struct sc_fh fh, fh2;
	struct sc_obj f = new_file("a", &fh, O_WRONLY | O_APPEND);
	char got[8] = "";
	struct stat st;
	int fd;

	/* Offsets are the kernel's: an O_APPEND handle still writes where told. */
	cr_assert_eq(sc_xl_write(xl, &f, &fh, "abcdef", 6, 0), 6);
	cr_assert_eq(sc_xl_write(xl, &f, &fh, "XY", 2, 1), 2);
	sc_xl_release(xl, &f, &fh);
	memset(&fh2, 0, sizeof(fh2));
	fh2.flags = O_RDONLY;
	cr_assert_eq(sc_xl_open(xl, &f, &fh2), 0);
	cr_assert_eq(sc_xl_read(xl, &f, &fh2, got, 8, 0), 6);
	cr_assert_eq(memcmp(got, "aXYdef", 6), 0);
	sc_xl_release(xl, &f, &fh2);
	memset(&fh2, 0, sizeof(fh2));
	fh2.flags = O_RDWR | O_CREAT | O_EXCL;
	cr_assert_eq(sc_xl_create(xl, &root, "a", 0600, &fh2, &fd, &st), -EEXIST);
	close(f.fd);
}

Test(posix, setattr_mode_size_times_owner)
{
	struct sc_fh fh;
	struct sc_obj f = new_file("s", &fh, O_RDWR);
	struct stat attr, st;

	memset(&attr, 0, sizeof(attr));
	attr.st_mode = 0604;
	cr_assert_eq(sc_xl_setattr(xl, &f, NULL, &attr, SC_SET_MODE, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0604);
	attr.st_size = 70000;
	cr_assert_eq(sc_xl_setattr(xl, &f, NULL, &attr, SC_SET_SIZE, &st), 0);
	cr_assert_eq(st.st_size, 70000);
	attr.st_size = 10;
	cr_assert_eq(sc_xl_setattr(xl, &f, &fh, &attr, SC_SET_SIZE, &st), 0);
	cr_assert_eq(st.st_size, 10);
	attr.st_atim.tv_sec = 1000000000;
	attr.st_atim.tv_nsec = 123;
	attr.st_mtim.tv_sec = 1100000000;
	attr.st_mtim.tv_nsec = 456;
	cr_assert_eq(sc_xl_setattr(xl, &f, NULL, &attr,
				   SC_SET_ATIME | SC_SET_MTIME, &st), 0);
	cr_assert_eq(st.st_atim.tv_sec, 1000000000);
	cr_assert_eq(st.st_atim.tv_nsec, 123);
	cr_assert_eq(st.st_mtim.tv_nsec, 456);
	/* mtime = now, atime omitted (kept). */
	cr_assert_eq(sc_xl_setattr(xl, &f, NULL, &attr, SC_SET_MTIME_NOW, &st), 0);
	cr_assert_eq(st.st_atim.tv_sec, 1000000000);
	cr_assert_gt(st.st_mtim.tv_sec, 1600000000);
	if (geteuid() == 0) {
		attr.st_uid = 1234;
		attr.st_gid = 4321;
		cr_assert_eq(sc_xl_setattr(xl, &f, NULL, &attr,
					   SC_SET_UID | SC_SET_GID, &st), 0);
		cr_assert_eq(st.st_uid, 1234);
		cr_assert_eq(st.st_gid, 4321);
	}
	sc_xl_release(xl, &f, &fh);
	close(f.fd);
}

Test(posix, symlink_link_rename_flags)
{
	struct sc_fh fh;
	struct sc_obj f = new_file("f", &fh, O_RDWR);
	struct stat st;
	char buf[64];
	int fd;

	sc_xl_release(xl, &f, &fh);
	cr_assert_eq(sc_xl_symlink(xl, &root, "sl", "target/path", &fd, &st), 0);
	cr_assert(S_ISLNK(st.st_mode));
	{
		struct sc_obj sl = obj_of(fd, &st);

		cr_assert_eq(sc_xl_readlink(xl, &sl, buf, sizeof(buf)), 11);
		cr_assert_eq(memcmp(buf, "target/path", 11), 0);
		cr_assert_eq(sc_xl_getxattr(xl, &sl, "user.x", buf, sizeof(buf)), -ENODATA);
		cr_assert_eq(sc_xl_listxattr(xl, &sl, buf, sizeof(buf)), 0);
		close(fd);
	}
	cr_assert_eq(sc_xl_link(xl, &f, &root, "hl", &st), 0);
	cr_assert_eq(st.st_nlink, 2);
	cr_assert_eq(sc_xl_link(xl, &f, &root, "hl", &st), -EEXIST);
	cr_assert_eq(sc_xl_rename(xl, &root, "hl", &root, "sl", RENAME_NOREPLACE), -EEXIST);
	cr_assert_eq(sc_xl_rename(xl, &root, "hl", &root, "sl", RENAME_EXCHANGE), 0);
	cr_assert_eq(sc_xl_lookup(xl, &root, "hl", &fd, &st), 0);
	cr_assert(S_ISLNK(st.st_mode), "exchange must swap the two names");
	close(fd);
	cr_assert_eq(sc_xl_rename(xl, &root, "sl", &root, "moved", 0), 0);
	cr_assert_eq(sc_xl_lookup(xl, &root, "sl", &fd, &st), -ENOENT);
	cr_assert_eq(sc_xl_getattr(xl, &f, NULL, &st), 0);
	cr_assert_eq(st.st_nlink, 2, "the O_PATH fd follows the inode, not the name");
	cr_assert_eq(sc_xl_mknod(xl, &root, "fifo", S_IFIFO | 0600, 0, &fd, &st), 0);
	cr_assert(S_ISFIFO(st.st_mode));
	close(fd);
	close(f.fd);
}

Test(posix, xattrs)
{
	struct sc_fh fh;
	struct sc_obj f = new_file("x", &fh, O_RDWR);
	char buf[256];
	ssize_t n;

	sc_xl_release(xl, &f, &fh);
	cr_assert_eq(sc_xl_getxattr(xl, &f, "user.k", buf, sizeof(buf)), -ENODATA);
	cr_assert_eq(sc_xl_setxattr(xl, &f, "user.k", "value", 5, XATTR_CREATE), 0);
	cr_assert_eq(sc_xl_setxattr(xl, &f, "user.k", "v", 1, XATTR_CREATE), -EEXIST);
	cr_assert_eq(sc_xl_getxattr(xl, &f, "user.k", NULL, 0), 5);
	cr_assert_eq(sc_xl_getxattr(xl, &f, "user.k", buf, 2), -ERANGE);
	cr_assert_eq(sc_xl_getxattr(xl, &f, "user.k", buf, sizeof(buf)), 5);
	cr_assert_eq(memcmp(buf, "value", 5), 0);
	n = sc_xl_listxattr(xl, &f, buf, sizeof(buf));
	cr_assert_eq(n, 7);
	cr_assert_str_eq(buf, "user.k");
	cr_assert_eq(sc_xl_removexattr(xl, &f, "user.k"), 0);
	cr_assert_eq(sc_xl_removexattr(xl, &f, "user.k"), -ENODATA);
	close(f.fd);
}

Test(posix, holes_fallocate_copy_range)
{
	struct sc_fh fh, fh2;
	struct sc_obj f = new_file("h", &fh, O_RDWR);
	struct sc_obj g = new_file("g", &fh2, O_RDWR);
	char buf[8192];

	memset(buf, 'A', sizeof(buf));
	cr_assert_eq(sc_xl_write(xl, &f, &fh, buf, 4096, 1 << 20), 4096);
	cr_assert_eq(sc_xl_lseek(xl, &f, &fh, 0, SEEK_DATA), 1 << 20);
	cr_assert_eq(sc_xl_lseek(xl, &f, &fh, 0, SEEK_HOLE), 0);
	cr_assert_eq(sc_xl_lseek(xl, &f, &fh, (1 << 20) + 4096, SEEK_DATA), -ENXIO);
	cr_assert_eq(sc_xl_fallocate(xl, &f, &fh, 0, 0, 8192), 0);
	cr_assert_eq(sc_xl_fallocate(xl, &f, &fh, 0x1000 /* no such mode */, 0, 8192), -EOPNOTSUPP);
	cr_assert_eq(sc_xl_copy_file_range(xl, &f, &fh, 1 << 20, &g, &fh2, 100, 4096, 0), 4096);
	cr_assert_eq(sc_xl_read(xl, &g, &fh2, buf, sizeof(buf), 0), 4196);
	cr_assert_eq(buf[99], 0);
	cr_assert_eq(buf[100], 'A');
	cr_assert_eq(buf[4195], 'A');
	sc_xl_release(xl, &f, &fh);
	sc_xl_release(xl, &g, &fh2);
	close(f.fd);
	close(g.fd);
}

struct rd {
	int	taken;
	int	limit;		/* entries to take per call */
	off_t	last_off;
	char	names[1200][16];
	int	n;
};

static int take(void *ctx, const struct sc_dirent *de)
{
	struct rd *r = ctx;

	if (r->taken == r->limit)
		return 1;
	r->taken++;
	cr_assert_lt(r->n, 1200);
	snprintf(r->names[r->n++], 16, "%s", de->name);
	r->last_off = de->next_off;
	return 0;
}

Test(posix, readdir_resumes_from_cookies)
{
	static struct rd r;
	struct sc_fh dh;
	int i, j, fd, calls = 0;
	struct stat st;
	char name[16];

	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "f%04d", i);
		cr_assert_eq(sc_xl_mknod(xl, &root, name, S_IFREG | 0600, 0, &fd, &st), 0);
		close(fd);
	}
	memset(&dh, 0, sizeof(dh));
	cr_assert_eq(sc_xl_opendir(xl, &root, &dh), 0);
	memset(&r, 0, sizeof(r));
	r.limit = 37;
	do {
		int before = r.n;

		r.taken = 0;
		cr_assert_eq(sc_xl_readdir(xl, &root, &dh, r.n ? r.last_off : 0, take, &r), 0);
		calls++;
		if (r.n == before)
			break;
	} while (calls < 100);
	cr_assert_eq(r.n, 1002, "got %d entries", r.n);
	for (i = 0; i < r.n; i++)
		for (j = i + 1; j < r.n; j++)
			cr_assert_str_neq(r.names[i], r.names[j], "duplicate %s", r.names[i]);
	/* From the start again (rewinddir). */
	r.n = 0;
	r.taken = 0;
	r.limit = 5;
	cr_assert_eq(sc_xl_readdir(xl, &root, &dh, 0, take, &r), 0);
	cr_assert_eq(r.n, 5);
	cr_assert_eq(sc_xl_fsyncdir(xl, &root, &dh, 0), 0);
	cr_assert_eq(sc_xl_releasedir(xl, &root, &dh), 0);
	cr_assert_null(dh.priv[xl->id]);
}

Test(posix, statfs)
{
	struct statvfs sv;

	cr_assert_eq(sc_xl_statfs(xl, &root, &sv), 0);
	cr_assert_gt(sv.f_blocks, 0);
	cr_assert_gt(sv.f_bsize, 0);
}

/*
 * ->map (the gcm journal's records): writes inside the mapped range land
 * in the file as a pwrite would put them; a write past it is a pwrite.
 * Then the file is cut behind the layer's back, so the next copy into the
 * mapping faults (SIGBUS): the layer must catch it and write with a system
 * call instead -- without the catch this test dies of SIGBUS.
 */
Test(posix, mapped_writes_and_a_file_cut_behind_the_mapping)
{
	struct sc_fh fh;
	struct sc_obj f = new_file("mapped", &fh, O_RDWR);
	char path[128], back[8];
	struct stat st;
	int fd;

	cr_assert_eq(sc_xl_map(xl, &f, &fh, 16384), 0);
	cr_assert_eq(sc_xl_getattr(xl, &f, NULL, &st), 0);
	cr_assert_eq(st.st_size, 16384, "the file grows to the mapped length");
	cr_assert_eq(sc_xl_write(xl, &f, &fh, "abc", 3, 5000), 3);
	cr_assert_eq(sc_xl_write(xl, &f, &fh, "tail", 4, 16382), 4);	/* crosses the end */
	snprintf(path, sizeof(path), "%s/mapped", dir);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, back, 3, 5000), 3);
	cr_assert_eq(memcmp(back, "abc", 3), 0);
	cr_assert_eq(pread(fd, back, 4, 16382), 4);
	cr_assert_eq(memcmp(back, "tail", 4), 0);
	close(fd);

	cr_assert_eq(truncate(path, 0), 0);
	cr_assert_eq(sc_xl_write(xl, &f, &fh, "xyz", 3, 100), 3, "a faulting copy is rewritten");
	cr_assert_eq(sc_xl_write(xl, &f, &fh, "uvw", 3, 200), 3);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(st.st_size, 203);
	cr_assert_eq(pread(fd, back, 3, 100), 3);
	cr_assert_eq(memcmp(back, "xyz", 3), 0);
	cr_assert_eq(pread(fd, back, 3, 200), 3);
	cr_assert_eq(memcmp(back, "uvw", 3), 0);
	close(fd);
	cr_assert_eq(sc_xl_release(xl, &f, &fh), 0);
	close(f.fd);
}

/*
 * A SIGBUS that is not a mapped write's stays fatal: the layer's handler
 * passes it on (a child touches a page past the end of a file it mapped).
 */
Test(posix, a_foreign_sigbus_still_kills)
{
	struct sc_fh fh;
	struct sc_obj f = new_file("armed", &fh, O_RDWR);
	char path[128];
	int status;
	pid_t pid;

	cr_assert_eq(sc_xl_map(xl, &f, &fh, 4096), 0);	/* installs the handler */
	snprintf(path, sizeof(path), "%s/victim", dir);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd = open(path, O_RDWR | O_CREAT, 0600);
		volatile char *p;

		if (fd < 0 || ftruncate(fd, 4096) != 0)
			_exit(2);
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED || ftruncate(fd, 0) != 0)
			_exit(2);
		p[0] = 1;	/* past EOF: SIGBUS */
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status), "the child %s %d", WIFEXITED(status) ? "exited" :
		  "stopped", WIFEXITED(status) ? WEXITSTATUS(status) : 0);
	cr_assert_eq(sc_xl_release(xl, &f, &fh), 0);
	close(f.fd);
}
