/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_inode.c - the front end's inode table (fs/fuse/inode.c): one entry per
 * backing (dev, ino), lookup counting, freeing at zero with the release
 * callback, abort on underflow, growth, and concurrent get/put; and the
 * names kept for messages (sc_inode_path): through lookups, renames,
 * exchanges, unlinks, hard links, forgotten parents and table growth.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "inode.h"

struct rel_log {
	int		calls;
	int		last_fd;
	bool		last_is_root;
	bool		fd_open_at_release;
};

static void on_release(void *ctx, struct sc_obj *obj)
{
	struct rel_log *log = ctx;

	__atomic_add_fetch(&log->calls, 1, __ATOMIC_SEQ_CST);
	log->last_fd = obj->fd;
	log->last_is_root = obj->is_root;
	log->fd_open_at_release = fcntl(obj->fd, F_GETFD) >= 0;
}

static int new_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	return fd;
}

static bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static struct stat fake_st(dev_t dev, ino_t ino, mode_t type)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_dev = dev;
	st.st_ino = ino;
	st.st_mode = type | 0644;
	return st;
}

static struct sc_itable *new_table(struct rel_log *log)
{
	struct stat rst = fake_st(1, 2, S_IFDIR);
	struct sc_itable *it;

	cr_assert_eq(sc_inode_table_new(new_fd(), &rst, on_release, log, &it), 0);
	return it;
}

Test(inode, root_is_not_hashed_and_never_freed)
{
	struct rel_log log = { 0 };
	struct sc_itable *it = new_table(&log);
	struct sc_inode *root = sc_inode_root(it);

	cr_assert(root->obj.is_root);
	cr_assert_eq(root->obj.type, S_IFDIR);
	sc_inode_put(it, root, 1000);
	cr_assert_eq(log.calls, 0);
	cr_assert_eq(sc_inode_count(it), 0);
	sc_inode_table_free(it);
	cr_assert_eq(log.calls, 1);
	cr_assert(log.last_is_root);
}

Test(inode, table_refuses_non_directory_root)
{
	struct stat st = fake_st(1, 2, S_IFREG);
	struct sc_itable *it;
	int fd = new_fd();

	cr_assert_eq(sc_inode_table_new(fd, &st, NULL, NULL, &it), -EINVAL);
	close(fd);
}

Test(inode, same_key_same_entry_and_duplicate_fd_closed)
{
	struct rel_log log = { 0 };
	struct sc_itable *it = new_table(&log);
	struct stat st = fake_st(7, 100, S_IFREG);
	struct sc_inode *a, *b;
	int fa = new_fd(), fb = new_fd();

	cr_assert_eq(sc_inode_get(it, fa, &st, &a), 0);
	cr_assert_eq(sc_inode_get(it, fb, &st, &b), 0);
	cr_assert_eq(a, b);
	cr_assert_eq(a->obj.fd, fa, "the first fd is kept");
	cr_assert(fd_is_open(fa));
	cr_assert_not(fd_is_open(fb), "the duplicate fd must be closed");
	cr_assert_eq(atomic_load(&a->nlookup), 2);
	cr_assert_eq(a->obj.type, S_IFREG);
	cr_assert_eq(sc_inode_count(it), 1);
	sc_inode_table_free(it);
	cr_assert_not(fd_is_open(fa));
}

Test(inode, same_ino_other_device_is_another_entry)
{
	struct rel_log log = { 0 };
	struct sc_itable *it = new_table(&log);
	struct stat s1 = fake_st(1, 55, S_IFREG), s2 = fake_st(2, 55, S_IFREG);
	struct sc_inode *a, *b;

	cr_assert_eq(sc_inode_get(it, new_fd(), &s1, &a), 0);
	cr_assert_eq(sc_inode_get(it, new_fd(), &s2, &b), 0);
	cr_assert_neq(a, b);
	cr_assert_eq(sc_inode_count(it), 2);
	sc_inode_table_free(it);
	cr_assert_eq(log.calls, 3);
}

Test(inode, freed_at_zero_after_release_then_fd_closed)
{
	struct rel_log log = { 0 };
	struct sc_itable *it = new_table(&log);
	struct stat st = fake_st(7, 9, S_IFDIR);
	struct sc_inode *e;
	int fd = new_fd();

	cr_assert_eq(sc_inode_get(it, fd, &st, &e), 0);
	sc_inode_ref(e, 2);			/* link replies */
	cr_assert_eq(sc_inode_get(it, new_fd(), &st, &e), 0);
	cr_assert_eq(atomic_load(&e->nlookup), 4);
	sc_inode_put(it, e, 3);			/* forget_multi with nlookup 3 */
	cr_assert_eq(log.calls, 0);
	cr_assert_eq(sc_inode_count(it), 1);
	sc_inode_put(it, e, 1);			/* last forget */
	cr_assert_eq(log.calls, 1);
	cr_assert_eq(log.last_fd, fd);
	cr_assert(log.fd_open_at_release, "layers must see a live fd in ->forget");
	cr_assert_not(fd_is_open(fd));
	cr_assert_eq(sc_inode_count(it), 0);

	/* A new lookup of the same key makes a fresh entry. */
	fd = new_fd();
	cr_assert_eq(sc_inode_get(it, fd, &st, &e), 0);
	cr_assert_eq(e->obj.fd, fd);
	cr_assert_eq(atomic_load(&e->nlookup), 1);
	sc_inode_table_free(it);
	cr_assert_eq(log.calls, 3);
}

/* adopt/same stand-ins: drop the fd of every new entry, and say "same" as told. */
static bool same_answer;
static int adopt_calls, same_calls;

static void drop_fd(void *ctx, struct sc_obj *obj, const struct stat *st)
{
	(void)ctx;
	(void)st;
	adopt_calls++;
	close(obj->fd);
	obj->fd = -1;
}

static bool answer_same(void *ctx, const struct sc_obj *obj, int fd)
{
	(void)ctx;
	(void)obj;
	cr_assert(fd_is_open(fd), "same() must see the new, still open fd");
	same_calls++;
	return same_answer;
}

Test(inode, entry_without_fd_matched_or_replaced_by_same)
{
	struct rel_log log = { 0 };
	struct sc_itable *it = new_table(&log);
	struct stat st = fake_st(7, 21, S_IFREG);
	struct sc_inode *a, *b, *c;
	int fd;

	adopt_calls = same_calls = 0;
	sc_inode_table_set_adopt(it, drop_fd, answer_same);
	cr_assert_eq(sc_inode_get(it, new_fd(), &st, &a), 0);
	cr_assert_eq(adopt_calls, 1);
	cr_assert_eq(a->obj.fd, -1);

	/* Same object again: one entry, the new fd closed. */
	same_answer = true;
	fd = new_fd();
	cr_assert_eq(sc_inode_get(it, fd, &st, &b), 0);
	cr_assert_eq(b, a);
	cr_assert_eq(same_calls, 1);
	cr_assert_not(fd_is_open(fd));
	cr_assert_eq(atomic_load(&a->nlookup), 2);

	/* Reused inode number: a new entry; the old one lives until forgotten. */
	same_answer = false;
	cr_assert_eq(sc_inode_get(it, new_fd(), &st, &c), 0);
	cr_assert_neq(c, a);
	cr_assert_eq(adopt_calls, 2);
	cr_assert_eq(sc_inode_count(it), 1, "only the new entry is hashed");
	same_answer = true;
	cr_assert_eq(sc_inode_get(it, new_fd(), &st, &b), 0);
	cr_assert_eq(b, c, "lookups now find the new entry");
	sc_inode_put(it, a, 2);
	cr_assert_eq(log.calls, 1, "the old entry is freed at its last forget");
	cr_assert_eq(sc_inode_count(it), 1);

	/* An unhashed entry still held at unmount is freed with the table. */
	same_answer = false;
	cr_assert_eq(sc_inode_get(it, new_fd(), &st, &a), 0);
	cr_assert_neq(a, c);
	sc_inode_table_free(it);
	cr_assert_eq(log.calls, 4, "old, replaced, newest and root entries");
}

Test(inode, forget_below_zero_aborts, .signal = SIGABRT)
{
	struct rel_log log = { 0 };
	struct sc_itable *it = new_table(&log);
	struct stat st = fake_st(7, 11, S_IFREG);
	struct sc_inode *e;

	cr_assert_eq(sc_inode_get(it, new_fd(), &st, &e), 0);
	cr_assert_eq(sc_inode_get(it, new_fd(), &st, &e), 0);
	sc_inode_put(it, e, 3);
}

Test(inode, grows_and_finds_every_entry)
{
	struct rel_log log = { 0 };
	struct sc_itable *it = new_table(&log);
	enum { N = 20000 };
	static struct sc_inode *ents[N];
	struct sc_inode *e;
	int devnull = new_fd();
	size_t i;

	for (i = 0; i < N; i++) {
		struct stat st = fake_st(3 + (i & 1), 1000 + i, S_IFREG);

		cr_assert_eq(sc_inode_get(it, dup(devnull), &st, &ents[i]), 0);
	}
	cr_assert_eq(sc_inode_count(it), N);
	for (i = 0; i < N; i++) {
		struct stat st = fake_st(3 + (i & 1), 1000 + i, S_IFREG);

		cr_assert_eq(sc_inode_get(it, dup(devnull), &st, &e), 0);
		cr_assert_eq(e, ents[i], "entry %zu moved or duplicated", i);
		cr_assert_eq(atomic_load(&e->nlookup), 2);
	}
	for (i = 0; i < N; i += 2)
		sc_inode_put(it, ents[i], 2);
	cr_assert_eq(sc_inode_count(it), N / 2);
	cr_assert_eq(log.calls, N / 2);
	sc_inode_table_free(it);
	cr_assert_eq(log.calls, N + 1);
	close(devnull);
}

struct race_arg {
	struct sc_itable	*it;
	int			seed;
};

#define RACE_KEYS	8
#define RACE_ITERS	20000

/* Each iteration: look up a key (fresh fd), then forget that one lookup. */
static void *race_thread(void *p)
{
	struct race_arg *a = p;
	unsigned int r = a->seed;
	int i;

	for (i = 0; i < RACE_ITERS; i++) {
		struct stat st;
		struct sc_inode *e;

		r = r * 1103515245 + 12345;
		st = fake_st(9, 1 + (r >> 16) % RACE_KEYS, S_IFREG);
		if (sc_inode_get(a->it, open("/dev/null", O_RDONLY | O_CLOEXEC), &st, &e))
			return (void *)1;
		if (e->ino != st.st_ino)
			return (void *)1;
		sc_inode_put(a->it, e, 1);
	}
	return NULL;
}

Test(inode, concurrent_lookup_and_forget)
{
	struct rel_log log = { 0 };
	struct sc_itable *it = new_table(&log);
	struct race_arg args[4];
	pthread_t th[4];
	int i, before;

	for (i = 0; i < 4; i++) {
		args[i].it = it;
		args[i].seed = i * 7919 + 1;
		cr_assert_eq(pthread_create(&th[i], NULL, race_thread, &args[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		void *ret;

		pthread_join(th[i], &ret);
		cr_assert_null(ret, "thread %d saw a wrong entry", i);
	}
	cr_assert_eq(sc_inode_count(it), 0, "every entry must be freed at zero");
	before = log.calls;
	cr_assert_gt(before, 0);
	sc_inode_table_free(it);
	cr_assert_eq(log.calls, before + 1, "only the root is left at the end");
}

/* The path of e, or the errno as text: one string to compare. */
static const char *path_of(struct sc_itable *it, const struct sc_inode *e)
{
	static char buf[256];
	int ret = sc_inode_path(it, e, buf, sizeof(buf));

	if (ret < 0)
		snprintf(buf, sizeof(buf), "error %d", ret);
	return buf;
}

/* An entry found as name in parent: (7, ino), a directory or a file. */
static struct sc_inode *named(struct sc_itable *it, struct sc_inode *parent, const char *name,
			      ino_t ino, mode_t type)
{
	struct stat st = fake_st(7, ino, type);
	struct sc_inode *e;

	cr_assert_eq(sc_inode_get_named(it, new_fd(), &st, parent, name, &e), 0);
	return e;
}

/* Every test of the names starts from a table holding the directory /a. */
struct tree {
	struct rel_log		log;
	struct sc_itable	*it;
	struct sc_inode		*root;
	struct sc_inode		*a;
};

static void tree_new(struct tree *t)
{
	memset(t, 0, sizeof(*t));
	t->it = new_table(&t->log);
	t->root = sc_inode_root(t->it);
	t->a = named(t->it, t->root, "a", 10, S_IFDIR);
}

Test(inode_path, lookups_make_paths)
{
	struct stat st = fake_st(7, 12, S_IFREG);
	struct sc_inode *f, *anon, *root, *a;
	struct sc_itable *it;
	struct tree t;
	char small[6];

	tree_new(&t);
	it = t.it, root = t.root, a = t.a;
	f = named(it, a, "file", 11, S_IFREG);

	cr_assert_str_eq(path_of(it, root), "/");
	cr_assert_str_eq(path_of(it, a), "/a");
	cr_assert_str_eq(path_of(it, f), "/a/file");
	/* a second lookup by another name (a hard link) keeps the first */
	cr_assert_eq(named(it, root, "link", 11, S_IFREG), f);
	cr_assert_str_eq(path_of(it, f), "/a/file");
	/* an entry made without a name has no path */
	cr_assert_eq(sc_inode_get(it, new_fd(), &st, &anon), 0);
	cr_assert_str_eq(path_of(it, anon), "error -2");
	cr_assert_eq(sc_inode_path(it, f, small, sizeof(small)), -ENAMETOOLONG);
	sc_inode_table_free(it);
}

Test(inode_path, renames_and_exchanges_follow)
{
	struct sc_inode *b, *f, *g;
	struct tree t;

	tree_new(&t);
	b = named(t.it, t.root, "b", 11, S_IFDIR);
	f = named(t.it, t.a, "f", 12, S_IFREG);
	g = named(t.it, b, "g", 13, S_IFREG);

	sc_inode_moved(t.it, t.a, "f", b, "f2", false);
	cr_assert_str_eq(path_of(t.it, f), "/b/f2");
	sc_inode_moved(t.it, t.root, "b", t.root, "c", false);
	cr_assert_str_eq(path_of(t.it, f), "/c/f2");	/* the parent's rename carries it */
	cr_assert_str_eq(path_of(t.it, g), "/c/g");
	sc_inode_moved(t.it, b, "f2", b, "g", true);	/* RENAME_EXCHANGE */
	cr_assert_str_eq(path_of(t.it, f), "/c/g");
	cr_assert_str_eq(path_of(t.it, g), "/c/f2");
	sc_inode_moved(t.it, b, "g", b, "f2", false);	/* f over g: g has no name left */
	cr_assert_str_eq(path_of(t.it, f), "/c/f2");
	cr_assert_str_eq(path_of(t.it, g), "error -2");
	/* a new lookup names g again (it is another link's now) */
	cr_assert_eq(named(t.it, t.a, "again", 13, S_IFREG), g);
	cr_assert_str_eq(path_of(t.it, g), "/a/again");
	sc_inode_table_free(t.it);
}

Test(inode_path, unlinks_and_forgotten_parents_leave_no_path)
{
	struct sc_inode *f, *g, *f2;
	struct tree t;

	tree_new(&t);
	f = named(t.it, t.a, "f", 11, S_IFREG);
	g = named(t.it, t.a, "g", 12, S_IFREG);

	sc_inode_unlinked(t.it, t.a, "f");
	cr_assert_str_eq(path_of(t.it, f), "error -2");
	/* a new file under the old name is found under it, not the old one */
	f2 = named(t.it, t.a, "f", 13, S_IFREG);
	sc_inode_moved(t.it, t.a, "f", t.root, "moved", false);
	cr_assert_str_eq(path_of(t.it, f2), "/moved");
	cr_assert_str_eq(path_of(t.it, f), "error -2");
	sc_inode_put(t.it, t.a, 1);	/* the parent forgotten */
	cr_assert_str_eq(path_of(t.it, g), "error -2");
	sc_inode_table_free(t.it);
}

Test(inode_path, names_survive_growth)
{
	struct sc_inode *d, *e = NULL, *root;
	struct sc_itable *it;
	struct tree t;
	char name[32], want[40];
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);

	tree_new(&t);
	it = t.it, root = t.root, d = t.a;
	/* more entries than the table's first buckets: both hashes are rebuilt */
	for (int i = 0; i < 3000; i++) {
		struct stat st = fake_st(7, 100 + i, S_IFREG);

		snprintf(name, sizeof(name), "f%d", i);
		cr_assert_eq(sc_inode_get_named(it, dup(devnull), &st, d, name, &e), 0);
	}
	close(devnull);
	cr_assert_str_eq(path_of(it, e), "/a/f2999");
	for (int i = 0; i < 3000; i += 499) {
		snprintf(name, sizeof(name), "f%d", i);
		snprintf(want, sizeof(want), "/g%d", i);
		sc_inode_moved(it, d, name, root, want + 1, false);
	}
	cr_assert_str_eq(path_of(it, e), "/a/f2999");
	{
		struct stat st = fake_st(7, 100 + 998, S_IFREG);
		struct sc_inode *x;

		cr_assert_eq(sc_inode_get(it, open("/dev/null", O_RDONLY | O_CLOEXEC), &st, &x), 0);
		cr_assert_str_eq(path_of(it, x), "/g998");
	}
	sc_inode_table_free(it);
}
