/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_gluster_xl.c - the gluster translator (fs/xlators/gluster/gluster.c)
 * driven directly, without FUSE, through the stack builder, over a
 * directory of a real volume: the errno of each refusal (unlink of a
 * directory, rmdir of a file, RENAME_NOREPLACE onto a name, RENAME_EXCHANGE,
 * a missing name, ...), GFID identity, data through open files, the
 * fd-shaped ints that are no descriptors, and the round trips the
 * translator spares (counted by wrapping libgfapi calls, see below)
 * without serving stale attributes.  Run by
 * `tests/gluster/harness.sh --gfapi single passthrough`, which starts the
 * volume; SC_XL_URL names a fresh directory of it (gluster://...).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sc_xlator.h"
#include "sc_stack.h"
#include "gluster_xl.h"

#include <glusterfs/api/glfs.h>
#include <glusterfs/api/glfs-handles.h>

static struct sc_gluster *g;
static struct sc_xl *xl;
static struct sc_obj root;
static struct sc_xl_conf conf = { .max_io = 1 << 20 };
static char sub[64];	/* this test's own directory under the root */
static struct sc_obj dir;

static void setup(void)
{
	struct sc_stack_spec spec;
	const char *url = getenv("SC_XL_URL");
	char err[512];
	struct stat st;
	int fd;

	cr_assert_not_null(url, "SC_XL_URL is not set: run me under tests/gluster/harness.sh");
	cr_assert_eq(sc_gluster_connect(url, NULL, &g, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_PASSTHROUGH, NULL, NULL), 0);
	cr_assert_eq(sc_stack_spec_gluster(&spec, g), 0);
	cr_assert_eq(sc_stack_new(&spec, &xl), 0);
	memset(&root, 0, sizeof(root));
	root.fd = sc_gluster_root(g, &st);
	cr_assert_geq(root.fd, 1 << 30, "an int above every descriptor: %d", root.fd);
	root.type = S_IFDIR;
	root.is_root = true;
	cr_assert_eq(sc_xl_stack_init(xl, &root, &conf), 0);
	snprintf(sub, sizeof(sub), "t%ld", (long)getpid());
	cr_assert_eq(sc_xl_mkdir(xl, &root, sub, 0755, &fd, &st), 0);
	memset(&dir, 0, sizeof(dir));
	dir.fd = fd;
	dir.type = S_IFDIR;
}

static void teardown(void)
{
	sc_xl_drop_fd(xl, dir.fd);
	sc_xl_drop_fd(xl, root.fd);
	sc_xl_stack_free(xl);
	sc_gluster_disconnect(g);
}

TestSuite(gluster, .init = setup, .fini = teardown);

/*
 * Round trips counted: this executable's glfs_h_stat, glfs_fstat and
 * glfs_h_lookupat stand before libgfapi's (the translator is linked in
 * statically), count, and call libgfapi's.
 */
static int (*real_h_stat)(glfs_t *, glfs_object_t *, struct stat *);
static int (*real_fstat)(glfs_fd_t *, struct stat *);
static glfs_object_t *(*real_lookupat)(glfs_t *, glfs_object_t *, const char *, struct stat *,
				       int);
static atomic_int stats_made, lookups_made;

glfs_object_t *glfs_h_lookupat(glfs_t *fs, glfs_object_t *parent, const char *path,
			       struct stat *st, int follow)
{
	if (!real_lookupat)
		real_lookupat = (glfs_object_t *(*)(glfs_t *, glfs_object_t *, const char *,
						    struct stat *, int))
			dlsym(RTLD_NEXT, "glfs_h_lookupat");
	atomic_fetch_add(&lookups_made, 1);
	return real_lookupat(fs, parent, path, st, follow);
}

int glfs_h_stat(glfs_t *fs, glfs_object_t *o, struct stat *st)
{
	if (!real_h_stat)
		real_h_stat = (int (*)(glfs_t *, glfs_object_t *, struct stat *))
			dlsym(RTLD_NEXT, "glfs_h_stat");
	atomic_fetch_add(&stats_made, 1);
	return real_h_stat(fs, o, st);
}

int glfs_fstat(glfs_fd_t *fd, struct stat *st)
{
	if (!real_fstat)
		real_fstat = (int (*)(glfs_fd_t *, struct stat *))dlsym(RTLD_NEXT, "glfs_fstat");
	atomic_fetch_add(&stats_made, 1);
	return real_fstat(fd, st);
}

/* A new regular file name in dir, written with data and closed; its obj. */
static struct sc_obj make_file(const char *name, const void *data, size_t len)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR | O_CREAT | O_EXCL };
	struct sc_obj o = { .type = S_IFREG };
	struct stat st;

	cr_assert_eq(sc_xl_create(xl, &dir, name, 0644, &fh, &o.fd, &st), 0);
	cr_assert_eq(sc_xl_write(xl, &o, &fh, data, len, 0), (ssize_t)len);
	cr_assert_eq(sc_xl_flush(xl, &o, &fh), 0);
	cr_assert_eq(sc_xl_release(xl, &o, &fh), 0);
	cr_assert_eq(st.st_size, 0);
	return o;
}

/* make_file of len patterned bytes (into buf), opened as fh asks */
static struct sc_obj make_open(const char *name, char *buf, size_t len, struct sc_fh *fh)
{
	struct sc_obj o;
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (char)(i * 7 + 1);
	o = make_file(name, buf, len);
	cr_assert_eq(sc_xl_open(xl, &o, fh), 0);
	return o;
}

/* name looked up afresh, as the kernel's LOOKUP of a cold inode does */
static struct sc_obj lookup_file(const char *name, struct stat *st)
{
	struct sc_obj o = { .type = S_IFREG };

	cr_assert_eq(sc_xl_lookup(xl, &dir, name, &o.fd, st), 0);
	return o;
}

Test(gluster, errnos_of_refusals)
{
	struct sc_obj f = make_file("f", "x", 1), d = { .type = S_IFDIR };
	struct stat st;
	int fd;

	cr_assert_eq(sc_xl_lookup(xl, &dir, "missing", &fd, &st), -ENOENT);
	cr_assert_eq(sc_xl_mkdir(xl, &dir, "d", 0755, &d.fd, &st), 0);
	cr_assert_eq(sc_xl_mkdir(xl, &dir, "d", 0755, &fd, &st), -EEXIST);
	cr_assert_eq(sc_xl_unlink(xl, &dir, "d"), -EISDIR);
	cr_assert_eq(sc_xl_rmdir(xl, &dir, "f"), -ENOTDIR);
	cr_assert_eq(sc_xl_unlink(xl, &dir, "missing"), -ENOENT);
	cr_assert_eq(sc_xl_rename(xl, &dir, "f", &dir, "d", RENAME_NOREPLACE), -EEXIST);
	cr_assert_eq(sc_xl_rename(xl, &dir, "f", &dir, "d", RENAME_EXCHANGE), -EINVAL);
	cr_assert_eq(sc_xl_rename(xl, &dir, "missing", &dir, "n", RENAME_NOREPLACE), -ENOENT);
	cr_assert_eq(sc_xl_mkdir(xl, &d, "inner", 0755, &fd, &st), 0);
	sc_xl_drop_fd(xl, fd);
	cr_assert_eq(sc_xl_rmdir(xl, &dir, "d"), -ENOTEMPTY);
	cr_assert_eq(sc_xl_getxattr(xl, &f, "user.none", NULL, 0), -ENODATA);
	sc_xl_drop_fd(xl, d.fd);
	sc_xl_drop_fd(xl, f.fd);
}

Test(gluster, noreplace_moves_files_and_directories)
{
	struct sc_obj f = make_file("a", "abc", 3), o = { .type = S_IFREG };
	struct stat st, st2;
	int fd;

	cr_assert_eq(sc_xl_getattr(xl, &f, NULL, &st), 0);
	cr_assert_eq(sc_xl_rename(xl, &dir, "a", &dir, "b", RENAME_NOREPLACE), 0);
	cr_assert_eq(sc_xl_lookup(xl, &dir, "a", &fd, &st2), -ENOENT);
	cr_assert_eq(sc_xl_lookup(xl, &dir, "b", &o.fd, &st2), 0);
	cr_assert_eq(st2.st_ino, st.st_ino, "the same object (GFID) under its new name");
	cr_assert_eq(st2.st_nlink, 1);
	cr_assert(sc_xl_same(xl, &f, o.fd));
	cr_assert_eq(sc_xl_mkdir(xl, &dir, "dd", 0755, &fd, &st), 0);
	sc_xl_drop_fd(xl, fd);
	cr_assert_eq(sc_xl_rename(xl, &dir, "dd", &dir, "de", RENAME_NOREPLACE), 0);
	cr_assert_eq(sc_xl_lookup(xl, &dir, "de", &fd, &st2), 0);
	cr_assert_eq(st2.st_ino, st.st_ino);
	sc_xl_drop_fd(xl, fd);
	sc_xl_drop_fd(xl, o.fd);
	sc_xl_drop_fd(xl, f.fd);
}

Test(gluster, data_trunc_zero_range_and_unlinked_open_files)
{
	static char buf[3 * 65536], back[sizeof(buf)];
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR };
	struct sc_obj f = make_open("data", buf, sizeof(buf), &fh);
	struct stat st;
	size_t i;

	cr_assert_geq(fh.fd, 1 << 30, "an fd-shaped int of the layer: %d", fh.fd);
	cr_assert_eq(sc_xl_read(xl, &f, &fh, back, sizeof(back), 0), (ssize_t)sizeof(buf));
	cr_assert_eq(memcmp(back, buf, sizeof(buf)), 0);
	cr_assert_eq(sc_xl_fallocate(xl, &f, &fh, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
				     4096, 8192), 0);
	cr_assert_eq(sc_xl_read(xl, &f, &fh, back, 16384, 0), 16384);
	for (i = 4096; i < 12288; i++)
		cr_assert_eq(back[i], 0, "byte %zu not zeroed", i);
	cr_assert_eq(back[12288], buf[12288]);
	cr_assert_eq(sc_xl_fallocate(xl, &f, &fh, FALLOC_FL_COLLAPSE_RANGE, 0, 4096), -EOPNOTSUPP);
	/* unlinked while open: still stat-able by object, through its open fd */
	cr_assert_eq(sc_xl_unlink(xl, &dir, "data"), 0);
	cr_assert_eq(sc_xl_getattr(xl, &f, NULL, &st), 0);
	cr_assert_eq(st.st_size, (off_t)sizeof(buf));
	cr_assert_eq(sc_xl_release(xl, &f, &fh), 0);
	/* O_RDONLY|O_TRUNC truncates, as on Linux */
	sc_xl_drop_fd(xl, f.fd);
	f = make_file("t", buf, 100);
	fh.fd = -1;
	fh.flags = O_RDONLY | O_TRUNC;
	cr_assert_eq(sc_xl_open(xl, &f, &fh), 0);
	cr_assert_eq(sc_xl_getattr(xl, &f, &fh, &st), 0);
	cr_assert_eq(st.st_size, 0);
	cr_assert_eq(sc_xl_release(xl, &f, &fh), 0);
	sc_xl_drop_fd(xl, f.fd);
}

struct names { int n; ino_t dot, dotdot; };

static int fill(void *ctx, const struct sc_dirent *de)
{
	struct names *nm = ctx;

	nm->n++;
	if (!strcmp(de->name, "."))
		nm->dot = de->ino;
	if (!strcmp(de->name, ".."))
		nm->dotdot = de->ino;
	return 0;
}

/* dir listed whole by a fresh open: the lookups it made */
static int list_dots(struct names *nm)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDONLY | O_DIRECTORY };

	memset(nm, 0, sizeof(*nm));
	cr_assert_eq(sc_xl_opendir(xl, &dir, &fh), 0);
	atomic_store(&lookups_made, 0);
	cr_assert_eq(sc_xl_readdir(xl, &dir, &fh, 0, fill, nm), 0);
	cr_assert_eq(sc_xl_releasedir(xl, &dir, &fh), 0);
	return atomic_load(&lookups_made);
}

Test(gluster, readdir_dots_have_the_gfid_inodes)
{
	struct stat st, rst;
	struct names nm;
	int lookups;

	cr_assert_eq(sc_xl_getattr(xl, &dir, NULL, &st), 0);
	cr_assert_eq(sc_xl_getattr(xl, &root, NULL, &rst), 0);
	sc_xl_drop_fd(xl, make_file("x", "1", 1).fd);
	/* "." is the slot's own, ".." what the mkdir of dir saw: no round trip */
	lookups = list_dots(&nm);
	cr_assert_eq(nm.n, 3, ". .. x: %d entries", nm.n);
	cr_assert_eq(nm.dot, st.st_ino, "\".\" has the inode number stat gives");
	cr_assert_eq(nm.dotdot, rst.st_ino, "\"..\" has the parent's");
	cr_assert_eq(lookups, 0, "lookups: %d", lookups);
	/* a rename anywhere may have moved dir: ".." is asked once, then known again */
	cr_assert_eq(sc_xl_rename(xl, &dir, "x", &dir, "y", 0), 0);
	lookups = list_dots(&nm);
	cr_assert_eq(nm.dotdot, rst.st_ino);
	cr_assert_eq(lookups, 1, "lookups after a rename: %d", lookups);
	lookups = list_dots(&nm);
	cr_assert_eq(nm.dotdot, rst.st_ino);
	cr_assert_eq(lookups, 0, "lookups the second time: %d", lookups);
}

/* ---- the read cache (cache.c) ------------------------------------------------ */

static ssize_t (*real_pread)(glfs_fd_t *, void *, size_t, off_t, int, struct glfs_stat *);
static atomic_int preads_made;

ssize_t glfs_pread(glfs_fd_t *fd, void *buf, size_t count, off_t offset, int flags,
		   struct glfs_stat *poststat)
{
	if (!real_pread)
		real_pread = (ssize_t (*)(glfs_fd_t *, void *, size_t, off_t, int,
					  struct glfs_stat *))dlsym(RTLD_NEXT, "glfs_pread");
	atomic_fetch_add(&preads_made, 1);
	return real_pread(fd, buf, count, offset, flags, poststat);
}

/* len bytes at off through o's fh equal want's; the brick reads it took */
static int read_same(struct sc_obj *o, struct sc_fh *fh, const char *want, size_t len,
		     off_t off)
{
	static char back[4 * 4096];

	atomic_store(&preads_made, 0);
	cr_assert_eq(sc_xl_read(xl, o, fh, back, len, off), (ssize_t)len, "read at %lld",
		     (long long)off);
	cr_assert_eq(memcmp(back, want, len), 0, "the bytes at %lld", (long long)off);
	return atomic_load(&preads_made);
}

/* What another client reads: the brick's bytes, by a libgfapi fd of its own. */
static void brick_has(const char *name, const char *want, size_t len)
{
	static char back[4 * 4096];
	glfs_object_t *d, *o;
	glfs_fd_t *f;
	struct stat st;

	d = glfs_h_lookupat(sc_gluster_fs(g), sc_gluster_root_object(g), sub, &st, 0);
	cr_assert_not_null(d);
	o = glfs_h_lookupat(sc_gluster_fs(g), d, name, &st, 0);
	cr_assert_not_null(o);
	cr_assert_eq(st.st_size, (off_t)len);
	f = glfs_h_open(sc_gluster_fs(g), o, O_RDONLY);
	cr_assert_not_null(f);
	cr_assert_eq(real_pread(f, back, sizeof(back), 0, 0, NULL), (ssize_t)len);
	cr_assert_eq(memcmp(back, want, len), 0, "the brick's bytes of %s", name);
	glfs_close(f);
	glfs_h_close(o);
	glfs_h_close(d);
}

Test(gluster, reads_come_from_the_cache_and_see_every_change)
{
	static char buf[3 * 4096 + 100], zero[4096];
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR };
	/* a write brings no page in: only what a read brought in is patched */
	struct sc_obj f = make_open("c", buf, sizeof(buf), &fh), p;
	struct stat st;
	char lock[32];
	size_t i;

	/* they serve under the one-mount lock only (a lock file of this test's own) */
	cr_assert_eq(read_same(&f, &fh, buf, 4096, 0), 1);
	snprintf(lock, sizeof(lock), "lock-%ld", (long)getpid());
	cr_assert_eq(sc_gluster_lock(g, lock), 0);
	cr_assert_geq(read_same(&f, &fh, buf, 3 * 4096, 0), 1);
	cr_assert_eq(read_same(&f, &fh, buf, 3 * 4096, 0), 0);
	/* the cut last page is the brick's, and the file ends there */
	cr_assert_geq(read_same(&f, &fh, buf + 3 * 4096, 100, 3 * 4096), 1);
	cr_assert_eq(sc_xl_read(xl, &f, &fh, zero, 4096, 3 * 4096 + 100), 0);
	/* a write inside a page: patched, and on the brick for everyone else */
	for (i = 5000; i < 5100; i++)
		buf[i] ^= 0x5a;
	cr_assert_eq(sc_xl_write(xl, &f, &fh, buf + 5000, 100, 5000), 100);
	cr_assert_eq(read_same(&f, &fh, buf, 3 * 4096, 0), 0);
	cr_assert_eq(sc_xl_flush(xl, &f, &fh), 0);
	brick_has("c", buf, sizeof(buf));
	/* a truncate cuts: what is left, then EOF */
	st.st_size = 6000;
	cr_assert_eq(sc_xl_setattr(xl, &f, &fh, &st, SC_SET_SIZE, &st), 0);
	cr_assert_eq(read_same(&f, &fh, buf, 4096, 0), 0);
	cr_assert_eq(sc_xl_read(xl, &f, &fh, zero, 4096, 4096), 6000 - 4096);
	cr_assert_eq(memcmp(zero, buf + 4096, 6000 - 4096), 0);
	/* a zeroed range, and a file grown again past the cut: zeros where it was cut */
	memset(zero, 0, sizeof(zero));
	cr_assert_eq(sc_xl_fallocate(xl, &f, &fh, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
				     0, 4096), 0);
	cr_assert_geq(read_same(&f, &fh, zero, 4096, 0), 1);
	st.st_size = 3 * 4096;
	cr_assert_eq(sc_xl_setattr(xl, &f, &fh, &st, SC_SET_SIZE, &st), 0);
	cr_assert_geq(read_same(&f, &fh, zero, 4096, 2 * 4096), 1);
	cr_assert_eq(read_same(&f, &fh, zero, 4096, 2 * 4096), 0);
	/* O_TRUNC by another open file of it */
	p = lookup_file("c", &st);
	cr_assert(sc_xl_same(xl, &f, p.fd));
	{
		struct sc_fh t = { .fd = -1, .flags = O_WRONLY | O_TRUNC };

		cr_assert_eq(sc_xl_open(xl, &p, &t), 0);
		cr_assert_eq(sc_xl_release(xl, &p, &t), 0);
	}
	cr_assert_eq(sc_xl_read(xl, &f, &fh, zero, 4096, 0), 0);
	sc_xl_drop_fd(xl, p.fd);
	cr_assert_eq(sc_xl_write(xl, &f, &fh, buf, 2 * 4096, 0), 2 * 4096);
	cr_assert_eq(sc_xl_release(xl, &f, &fh), 0);
	/* the last object of the file let go of: its pages go with it */
	sc_xl_drop_fd(xl, f.fd);
	f = lookup_file("c", &st);
	fh.fd = -1;
	fh.flags = O_RDONLY;
	cr_assert_eq(sc_xl_open(xl, &f, &fh), 0);
	cr_assert_geq(read_same(&f, &fh, buf, 2 * 4096, 0), 1);
	cr_assert_eq(read_same(&f, &fh, buf + 4096, 4096, 4096), 0);
	cr_assert_eq(sc_xl_release(xl, &f, &fh), 0);
	sc_xl_drop_fd(xl, f.fd);
	brick_has("c", buf, 2 * 4096);
}

Test(gluster, getattr_after_lookup_takes_no_round_trip)
{
	struct stat lst, st;
	struct sc_obj o;

	struct timespec t0, t1;

	sc_xl_drop_fd(xl, make_file("s", "hello", 5).fd);
	/*
	 * The attributes serve within 1 s of the lookup only: a try that took
	 * longer (a stalled machine) proves nothing and is made again.
	 */
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		o = lookup_file("s", &lst);
		atomic_store(&stats_made, 0);
		cr_assert_eq(sc_xl_getattr(xl, &o, NULL, &st), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 1000000000L)
			break;
		sc_xl_drop_fd(xl, o.fd);
	}
	cr_assert_eq(atomic_load(&stats_made), 0, "the lookup's attributes served the getattr");
	cr_assert_eq(st.st_size, 5);
	cr_assert_eq(st.st_ino, lst.st_ino);
	cr_assert_eq(st.st_dev, lst.st_dev);
	/* served once: the next getattr asks the brick */
	cr_assert_eq(sc_xl_getattr(xl, &o, NULL, &st), 0);
	cr_assert_eq(atomic_load(&stats_made), 1);
	cr_assert_eq(st.st_size, 5);
	sc_xl_drop_fd(xl, o.fd);
}

Test(gluster, getattr_after_a_change_asks_the_brick)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR };
	struct stat st, set = { .st_mode = 0600 };
	struct sc_obj o, p;

	sc_xl_drop_fd(xl, make_file("w", "hello", 5).fd);
	/* a write through another object of the same file, after the lookup */
	o = lookup_file("w", &st);
	p = lookup_file("w", &st);
	cr_assert_eq(sc_xl_open(xl, &p, &fh), 0);
	cr_assert_eq(sc_xl_write(xl, &p, &fh, "0123456789", 10, 5), 10);
	cr_assert_eq(sc_xl_release(xl, &p, &fh), 0);
	atomic_store(&stats_made, 0);
	cr_assert_eq(sc_xl_getattr(xl, &o, NULL, &st), 0);
	cr_assert_eq(st.st_size, 15, "size after the write: %lld", (long long)st.st_size);
	cr_assert_eq(atomic_load(&stats_made), 1);
	sc_xl_drop_fd(xl, p.fd);
	sc_xl_drop_fd(xl, o.fd);

	/* setattr's own reply is the brick's, not the lookup's */
	o = lookup_file("w", &st);
	cr_assert_eq(st.st_mode & 07777, 0644);
	cr_assert_eq(sc_xl_setattr(xl, &o, NULL, &set, SC_SET_MODE, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", (unsigned)st.st_mode);
	cr_assert_eq(sc_xl_getattr(xl, &o, NULL, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600);
	sc_xl_drop_fd(xl, o.fd);

	/* an unlink of the name after the lookup: nlink from the brick */
	o = lookup_file("w", &st);
	cr_assert_eq(sc_xl_link(xl, &o, &dir, "w2", &st), 0);
	cr_assert_eq(st.st_nlink, 2);
	sc_xl_drop_fd(xl, o.fd);
	o = lookup_file("w", &st);
	cr_assert_eq(st.st_nlink, 2);
	cr_assert_eq(sc_xl_unlink(xl, &dir, "w2"), 0);
	cr_assert_eq(sc_xl_getattr(xl, &o, NULL, &st), 0);
	cr_assert_eq(st.st_nlink, 1);
	sc_xl_drop_fd(xl, o.fd);
}

/* ---- lookups after a listing (gl_readdir's READDIRP, stash_take) ---------- */

#define LISTED	20

struct listed { int n; char name[LISTED][16]; ino_t ino[LISTED]; mode_t type[LISTED]; };

static int fill_names(void *ctx, const struct sc_dirent *de)
{
	struct listed *l = ctx;

	if (de->name[0] == '.' || l->n == LISTED)
		return 0;
	snprintf(l->name[l->n], sizeof(l->name[0]), "%s", de->name);
	l->ino[l->n] = de->ino;
	l->type[l->n++] = de->type;
	return 0;
}

/* dir listed whole from its start by a fresh open; the lookups made counted from here */
static void list_dir(struct listed *l)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDONLY | O_DIRECTORY };

	memset(l, 0, sizeof(*l));
	cr_assert_eq(sc_xl_opendir(xl, &dir, &fh), 0);
	cr_assert_eq(sc_xl_readdir(xl, &dir, &fh, 0, fill_names, l), 0);
	cr_assert_eq(sc_xl_releasedir(xl, &dir, &fh), 0);
	atomic_store(&lookups_made, 0);
	atomic_store(&stats_made, 0);
}

static long since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000000000L + (t1.tv_nsec - t0->tv_nsec);
}

static void same_attrs(const struct stat *a, const struct stat *b, const char *name)
{
	cr_assert_eq(a->st_ino, b->st_ino, "%s", name);
	cr_assert_eq(a->st_dev, b->st_dev, "%s", name);
	cr_assert_eq(a->st_mode, b->st_mode, "%s", name);
	cr_assert_eq(a->st_nlink, b->st_nlink, "%s", name);
	cr_assert_eq(a->st_uid, b->st_uid, "%s", name);
	cr_assert_eq(a->st_gid, b->st_gid, "%s", name);
	cr_assert_eq(a->st_size, b->st_size, "%s", name);
	cr_assert_eq(a->st_blocks, b->st_blocks, "%s", name);
	cr_assert_eq(a->st_mtim.tv_sec, b->st_mtim.tv_sec, "%s", name);
	cr_assert_eq(a->st_mtim.tv_nsec, b->st_mtim.tv_nsec, "%s", name);
	cr_assert_eq(a->st_ctim.tv_sec, b->st_ctim.tv_sec, "%s", name);
	cr_assert_eq(a->st_ctim.tv_nsec, b->st_ctim.tv_nsec, "%s", name);
}

Test(gluster, lookups_after_a_listing_take_no_round_trip)
{
	struct stat lst[LISTED], st;
	struct sc_obj o[LISTED], p;
	struct timespec t0;
	struct listed l;
	int i, lookups, stats;

	for (i = 0; i < LISTED; i++) {
		static const char data[LISTED] = "abcdefghijklmnopqrs";
		char name[16];

		snprintf(name, sizeof(name), "f%02d", i);
		/* file i holds i + 1 bytes: the listed sizes tell the files apart */
		sc_xl_drop_fd(xl, make_file(name, data, (size_t)i + 1).fd);
	}
	/*
	 * Entries serve within 1 s of the listing only: a try that took longer
	 * (a stalled machine) proves nothing and is made again.
	 */
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		list_dir(&l);
		cr_assert_eq(l.n, LISTED, "%d names listed", l.n);
		for (i = 0; i < LISTED; i++) {
			o[i] = lookup_file(l.name[i], &lst[i]);
			cr_assert_eq(sc_xl_getattr(xl, &o[i], NULL, &st), 0);
			same_attrs(&st, &lst[i], l.name[i]);
		}
		lookups = atomic_load(&lookups_made);
		stats = atomic_load(&stats_made);
		if (since(&t0) < 1000000000L)
			break;
		for (i = 0; i < LISTED; i++)
			sc_xl_drop_fd(xl, o[i].fd);
	}
	cr_assert_eq(lookups, 0, "lookups after the listing: %d", lookups);
	cr_assert_eq(stats, 0, "stats after the listing: %d", stats);
	for (i = 0; i < LISTED; i++) {
		/* what was served is what the brick says now */
		cr_assert_eq(sc_xl_getattr(xl, &o[i], NULL, &st), 0);
		same_attrs(&lst[i], &st, l.name[i]);
		cr_assert_eq(st.st_size, atoi(l.name[i] + 1) + 1, "%s", l.name[i]);
		cr_assert_eq(l.ino[i], st.st_ino, "%s: d_ino is stat's", l.name[i]);
		cr_assert_eq(l.type[i], S_IFREG, "%s: d_type", l.name[i]);
		/* each entry serves once: a second lookup asks the brick, same GFID */
		p = lookup_file(l.name[i], &st);
		cr_assert_eq(atomic_load(&lookups_made), i + 1);
		cr_assert(sc_xl_same(xl, &o[i], p.fd), "%s: the same object", l.name[i]);
		sc_xl_drop_fd(xl, p.fd);
		sc_xl_drop_fd(xl, o[i].fd);
	}
}

Test(gluster, lookup_after_a_change_since_the_listing_asks_the_brick)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR | O_CREAT | O_EXCL };
	struct sc_obj o, n = { .type = S_IFREG };
	struct listed l;
	struct stat st;
	int fd;

	sc_xl_drop_fd(xl, make_file("a", "1", 1).fd);
	sc_xl_drop_fd(xl, make_file("b", "22", 2).fd);
	sc_xl_drop_fd(xl, make_file("c", "333", 3).fd);

	/* an unlink after the listing: the name is gone */
	list_dir(&l);
	cr_assert_eq(sc_xl_unlink(xl, &dir, "a"), 0);
	atomic_store(&lookups_made, 0);	/* unlink's own lookup of the name */
	cr_assert_eq(sc_xl_lookup(xl, &dir, "a", &fd, &st), -ENOENT);
	cr_assert_eq(atomic_load(&lookups_made), 1);

	/* a rename after the listing: the old name is gone, the new one found */
	list_dir(&l);
	cr_assert_eq(sc_xl_rename(xl, &dir, "b", &dir, "d", 0), 0);
	cr_assert_eq(sc_xl_lookup(xl, &dir, "b", &fd, &st), -ENOENT);
	o = lookup_file("d", &st);
	cr_assert_eq(st.st_size, 2);
	sc_xl_drop_fd(xl, o.fd);

	/* a create after the listing: the brick answers the listed names too */
	list_dir(&l);
	cr_assert_eq(sc_xl_create(xl, &dir, "e", 0644, &fh, &n.fd, &st), 0);
	cr_assert_eq(sc_xl_release(xl, &n, &fh), 0);
	sc_xl_drop_fd(xl, n.fd);
	atomic_store(&lookups_made, 0);
	o = lookup_file("c", &st);
	cr_assert_eq(atomic_load(&lookups_made), 1);
	cr_assert_eq(st.st_size, 3);
	sc_xl_drop_fd(xl, o.fd);

	/* a write after the listing: the size is the brick's */
	list_dir(&l);
	o = lookup_file("c", &st);	/* an object to write through: listed, not asked */
	fh.fd = -1;
	fh.flags = O_RDWR;
	cr_assert_eq(sc_xl_open(xl, &o, &fh), 0);
	cr_assert_eq(sc_xl_write(xl, &o, &fh, "4444", 4, 3), 4);
	cr_assert_eq(sc_xl_release(xl, &o, &fh), 0);
	sc_xl_drop_fd(xl, o.fd);
	atomic_store(&lookups_made, 0);
	o = lookup_file("d", &st);
	cr_assert_eq(atomic_load(&lookups_made), 1);
	sc_xl_drop_fd(xl, o.fd);
	o = lookup_file("c", &st);
	cr_assert_eq(st.st_size, 7, "size %lld", (long long)st.st_size);
	sc_xl_drop_fd(xl, o.fd);
}
