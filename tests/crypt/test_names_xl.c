/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_names_xl.c - the names translator in process: stacks names > crypt
 * > posix made by the stack builder over a temporary backing directory,
 * without FUSE, for the null and aes-xts ciphers.  Every check compares
 * what the layer answers with what the backing directory holds: no
 * plaintext name or symlink target below; long names with exactly one
 * side file per long entry through create, mknod, mkdir, symlink, link,
 * rename (plain, NOREPLACE, EXCHANGE, between hard links, over a long
 * name, failing) and unlink/rmdir; mkdir's nonce, modes and temporary
 * names; directories whose nonce is missing or damaged; junk entries;
 * readdir with a small reply budget; symlink sizes; the reserved
 * attribute; every byte value in names; side files replaced by what a
 * side file never is; long-named directories moved across parents.  Objects are adopted and
 * forgotten through the stack as the front end does, and the test's open
 * descriptors are counted so that a leaked fd fails it.
 *
 * Every case runs with the nonce records in the xattr, and again (meson's
 * names-xl-portable: SC_NAMES_PORTABLE=1) with them in nonce files, as on
 * an aes-gcm volume; the nonce file's own cases (hidden, crash order of
 * mkdir and rmdir with a fault at each step under the names layer, healing
 * of empty directories, fsck of both forms) are at the end.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sc_cmd.h"
#include "sc_crypto.h"
#include "sc_volume.h"
#include "sc_xlator.h"
#include "sc_journal.h"
#include "names_xl.h"
#include "sc_stack.h"
#include "xlator_i.h"

struct env {
	char		dir[64];
	struct sc_mkey	*mkey;
	struct sc_xl	*top;
	struct sc_obj	root;
	int		fds;	/* open descriptors after setup */
	bool		portable;	/* nonce records in files (g_portable unless a test says) */
	bool		bound;		/* SC_FEAT_NAMES_BOUND: version 1 records refused */
	bool		links;		/* SC_FEAT_LINKS_BOUND: bound targets, long ones in side files */
};

/*
 * SC_NAMES_PORTABLE=1 (meson's names-xl-portable): every case with nonce
 * files; SC_NAMES_GCM=1 too (names-xl-gcm): over the gcm layer, the
 * aes-gcm volume's stack, where the cases say aes-xts.
 */
static bool g_portable, g_gcm;

static void __attribute__((constructor)) portable_from_env(void)
{
	const char *v = getenv("SC_NAMES_PORTABLE"), *g = getenv("SC_NAMES_GCM");

	g_portable = v && !strcmp(v, "1");
	g_gcm = g && !strcmp(g, "1");
}

/* ---- the log, captured ------------------------------------------------------ */

static char g_log[16384];
static size_t g_log_len;
/*
 * The racing lookups of nonce_first_use_raced log from several threads at
 * once: unlocked, two lines could land at one offset (one's NUL inside the
 * other's) and the count come out short, as in one fresh-clone CI run.
 */
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;

static void capture(enum sc_log_level level, const char *fmt, va_list ap)
{
	int n;

	(void)level;
	pthread_mutex_lock(&g_log_lock);
	n = vsnprintf(g_log + g_log_len, sizeof(g_log) - g_log_len, fmt, ap);
	if (n > 0)
		g_log_len = g_log_len + (size_t)n < sizeof(g_log) ? g_log_len + (size_t)n :
			    sizeof(g_log) - 1;
	pthread_mutex_unlock(&g_log_lock);
}

/* Lines of the captured log that hold what. */
static int log_lines(const char *what)
{
	int n = 0;

	for (const char *p = g_log; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* ---- the stack ------------------------------------------------------------ */

/* Builds and starts the stack over e->dir with e->mkey; returns ->init's result. */
static int env_try(struct env *e)
{
	static const struct sc_stack_hide hide = {
		.names	= { SC_CONFIG_NAME, SC_LOCK_NAME },
		.prefix	= SC_VOL_TMP_PREFIX,
	};
	struct sc_xl_conf conf = { .max_io = 1 << 20, .max_path_fds = -1 };
	struct sc_stack_spec spec;
	int ret;

	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, e->mkey, &hide), 0);
	cr_assert_eq(sc_stack_spec_insert(&spec, 0, SC_XL_NAMES), 0);
	spec.portable = e->portable;
	spec.names_bound = e->bound;
	spec.links_bound = e->links;
	cr_assert_eq(sc_stack_new(&spec, &e->top), 0);
	cr_assert_str_eq(e->top->ops->name, "names");
	e->root.fd = open(e->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	e->root.type = S_IFDIR;
	e->root.is_root = true;
	cr_assert_geq(e->root.fd, 0);
	ret = sc_xl_stack_init(e->top, &e->root, &conf);
	e->fds = fd_count();
	return ret;
}

/* A fresh backing directory and key; the log captured; the daemon's umask (0). */
static void env_prepare(struct env *e, enum sc_cipher_id cipher)
{
	uint8_t mk[SC_MASTER_KEY_LEN];

	memset(e, 0, sizeof(*e));
	e->portable = g_portable;
	if (g_gcm && cipher == SC_CIPHER_AES_XTS)
		cipher = SC_CIPHER_AES_GCM;
	umask(0);
	strcpy(e->dir, "/tmp/sc-test-names.XXXXXX");
	cr_assert_not_null(mkdtemp(e->dir));
	cr_assert_eq(sc_random(mk, sizeof(mk)), 0);
	cr_assert_eq(sc_mkey_new(mk, cipher, SC_BLOCK_DEFAULT, &e->mkey), 0);
	sc_wipe(mk, sizeof(mk));
	g_log_len = 0;
	g_log[0] = '\0';
	sc_log_set_func(capture);
}

static void env_up(struct env *e, enum sc_cipher_id cipher)
{
	env_prepare(e, cipher);
	cr_assert_eq(env_try(e), 0);
}

/* Unmount: the root forgotten, the stack freed (the key and directory stay). */
static void env_stop(struct env *e)
{
	sc_xl_stack_forget(e->top, &e->root);
	sc_xl_stack_free(e->top);
	close(e->root.fd);
	e->top = NULL;
}

static void env_down(struct env *e)
{
	char cmd[128];

	cr_assert_eq(fd_count(), e->fds, "descriptors leaked: %d open, %d after setup",
		     fd_count(), e->fds);
	env_stop(e);
	sc_mkey_free(e->mkey);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
	cr_assert_eq(system(cmd), 0);
}

/* An inode as the front end makes one: adopted by every layer, forgotten by every layer. */
static void obj_make(struct env *e, struct sc_obj *o, int fd, const struct stat *st)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->type = st->st_mode & S_IFMT;
	sc_xl_stack_adopt(e->top, o, st);
}

static void obj_put(struct env *e, struct sc_obj *o)
{
	sc_xl_stack_forget(e->top, o);
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

static int do_lookup(struct env *e, struct sc_obj *dir, const char *name, struct sc_obj *o,
		     struct stat *st)
{
	int fd, ret = sc_xl_lookup(e->top, dir, name, &fd, st);

	if (ret == 0)
		obj_make(e, o, fd, st);
	return ret;
}

/* Creates dir/name holding "data:" + its first 16 bytes. */
static int do_create(struct env *e, struct sc_obj *dir, const char *name)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR | O_CREAT | O_EXCL };
	char data[32];
	struct sc_obj o;
	struct stat st;
	int fd, ret, n;

	ret = sc_xl_create(e->top, dir, name, S_IFREG | 0644, &fh, &fd, &st);
	if (ret < 0)
		return ret;
	obj_make(e, &o, fd, &st);
	n = snprintf(data, sizeof(data), "data:%.16s", name);
	cr_assert_eq(sc_xl_write(e->top, &o, &fh, data, (size_t)n, 0), n);
	cr_assert_eq(sc_xl_release(e->top, &o, &fh), 0);
	obj_put(e, &o);
	return 0;
}

/* The contents of dir/name, NUL-terminated into buf (64 bytes). */
static void read_file(struct env *e, struct sc_obj *dir, const char *name, char *buf)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDONLY };
	struct sc_obj o;
	struct stat st;
	ssize_t n;

	cr_assert_eq(do_lookup(e, dir, name, &o, &st), 0, "lookup of a %zu-byte name",
		     strlen(name));
	cr_assert_eq(sc_xl_open(e->top, &o, &fh), 0);
	n = sc_xl_read(e->top, &o, &fh, buf, 63, 0);
	cr_assert_geq(n, 0);
	buf[n] = '\0';
	cr_assert_eq(sc_xl_release(e->top, &o, &fh), 0);
	obj_put(e, &o);
}

static int do_mkdir(struct env *e, struct sc_obj *dir, const char *name, mode_t mode,
		    struct sc_obj *o)
{
	struct stat st;
	int fd, ret = sc_xl_mkdir(e->top, dir, name, S_IFDIR | mode, &fd, &st);

	if (ret == 0)
		obj_make(e, o, fd, &st);
	return ret;
}

/* ---- nonce records, in the form the stack keeps them ------------------------ */

/* "/proc/self/fd/N" of o, for the *xattr calls. */
static const char *proc_of(const struct sc_obj *o, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", o->fd);
	return buf;
}

/*
 * dir's stored record into rec (64 bytes), read as the names layer reads
 * it: the xattr, or the nonce file through the layer below (the crypt
 * layer decrypts it).  Its length or -errno (-ENODATA: none).
 */
static ssize_t rec_get(struct env *e, struct sc_obj *dir, uint8_t *rec)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDONLY };
	struct sc_xl *below = e->top->below;
	struct sc_obj f;
	struct stat st;
	char proc[64];
	ssize_t n;
	int fd, ret;

	if (!e->portable) {
		n = getxattr(proc_of(dir, proc, sizeof(proc)), SC_DIRNONCE_XATTR, rec, 64);
		return n < 0 ? -errno : n;
	}
	ret = sc_xl_lookup(below, dir, SC_DIRNONCE_FILE, &fd, &st);
	if (ret < 0)
		return ret == -ENOENT ? -ENODATA : ret;
	memset(&f, 0, sizeof(f));
	f.fd = fd;
	f.type = st.st_mode & S_IFMT;
	sc_xl_stack_adopt(below, &f, &st);
	n = sc_xl_open(below, &f, &fh);
	if (n == 0) {
		n = sc_xl_read(below, &f, &fh, rec, 64, 0);
		sc_xl_release(below, &f, &fh);
	}
	sc_xl_stack_forget(below, &f);
	close(fd);
	return n;
}

/* The copy of dir's record in its xattr removed (file form, format.md 9.2): the file alone counts. */
static void copy_drop(struct sc_obj *dir)
{
	char proc[64];

	cr_assert(removexattr(proc_of(dir, proc, sizeof(proc)), SC_DIRNONCE_XATTR) == 0 ||
		  errno == ENODATA);
}

/*
 * Replaces dir's record with len bytes of rec (the nonce file written
 * through the layer below; its copy in the xattr removed).
 */
static void rec_put(struct env *e, struct sc_obj *dir, const void *rec, size_t len)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR | O_CREAT | O_EXCL };
	struct sc_xl *below = e->top->below;
	struct sc_obj f;
	struct stat st;
	char proc[64];
	int fd;

	if (!e->portable) {
		cr_assert_eq(setxattr(proc_of(dir, proc, sizeof(proc)), SC_DIRNONCE_XATTR, rec, len,
				      0), 0);
		return;
	}
	unlinkat(dir->fd, SC_DIRNONCE_FILE, 0);
	copy_drop(dir);
	cr_assert_eq(sc_xl_create(below, dir, SC_DIRNONCE_FILE, S_IFREG | 0444, &fh, &fd, &st), 0);
	memset(&f, 0, sizeof(f));
	f.fd = fd;
	f.type = S_IFREG;
	sc_xl_stack_adopt(below, &f, &st);
	if (len)
		cr_assert_eq(sc_xl_write(below, &f, &fh, rec, len, 0), (ssize_t)len);
	cr_assert_eq(sc_xl_release(below, &f, &fh), 0);
	sc_xl_stack_forget(below, &f);
	close(fd);
}

/* Removes dir's record behind the mount (the file form: its file and the copy). */
static void rec_drop(struct env *e, struct sc_obj *dir)
{
	char proc[64];

	if (e->portable) {
		cr_assert_eq(unlinkat(dir->fd, SC_DIRNONCE_FILE, 0), 0);
		copy_drop(dir);
	} else
		cr_assert_eq(removexattr(proc_of(dir, proc, sizeof(proc)), SC_DIRNONCE_XATTR), 0);
}

/* The stored size of a record of len bytes in e's file form. */
static uint64_t rec_file_size(const struct env *e, size_t len)
{
	/* aes-xts and null keep a file's length; aes-gcm adds its header and one unit's 32 */
	return sc_mkey_cipher(e->mkey) == SC_CIPHER_AES_GCM ?
	       sc_gcm_stored_size(SC_BLOCK_DEFAULT, len) : len;
}

/*
 * Does the backing directory dirfd have a stored record of a right size
 * (looked at raw): one place's, or two places' while a rename moves it?
 */
static bool rec_there(const struct env *e, int dirfd)
{
	struct stat st;
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);	/* dirfd may be O_PATH */
	if (!e->portable) {
		n = getxattr(proc, SC_DIRNONCE_XATTR, NULL, 0);
		return n == SC_DIRNONCE_REC2_LEN || n == SC_DIRNONCE_REC_MAX;
	}
	return fstatat(dirfd, SC_DIRNONCE_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode) &&
	       ((uint64_t)st.st_size == rec_file_size(e, SC_DIRNONCE_REC2_LEN) ||
		(uint64_t)st.st_size == rec_file_size(e, SC_DIRNONCE_REC_MAX));
}

/* ---- listings --------------------------------------------------------------- */

struct listing {
	char	(*name)[SC_NAME_PLAIN_MAX + 1];
	off_t	*off;
	size_t	n, cap;
	long	budget;		/* bytes of reply one readdir call takes, -1: no limit */
	long	used;
	int	taken;
};

/*
 * As the front end's fill with a reply buffer of budget bytes: an entry
 * costs what a struct fuse_dirent of its name does; one that does not fit
 * is refused ("buffer full": it must come again next call), and a later
 * shorter one may still fit, so a layer that ignores the refusal and goes
 * on loses the refused entry.
 */
static int collect(void *ctx, const struct sc_dirent *de)
{
	struct listing *l = ctx;
	long cost = (long)((24 + strlen(de->name) + 7) & ~(size_t)7);

	if (l->budget >= 0 && l->used + cost > l->budget)
		return 1;
	l->used += cost;
	l->taken++;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->name = realloc(l->name, l->cap * sizeof(*l->name));
		l->off = realloc(l->off, l->cap * sizeof(*l->off));
		cr_assert(l->name && l->off);
	}
	cr_assert_leq(strlen(de->name), SC_NAME_PLAIN_MAX);
	strcpy(l->name[l->n], de->name);
	l->off[l->n++] = de->next_off;
	return 0;
}

/* Lists dir through the stack, budget bytes per call (-1: one call), from off. */
static int list_from(struct env *e, struct sc_obj *dir, long budget, off_t off, struct listing *l)
{
	struct sc_fh fh = { .fd = -1 };
	int ret;

	memset(l, 0, sizeof(*l));
	l->budget = budget;
	ret = sc_xl_opendir(e->top, dir, &fh);
	if (ret < 0)
		return ret;
	for (;;) {
		l->taken = 0;
		l->used = 0;
		ret = sc_xl_readdir(e->top, dir, &fh, off, collect, l);
		if (ret < 0 || l->taken == 0 || budget < 0)
			break;
		off = l->off[l->n - 1];
	}
	cr_assert_eq(sc_xl_releasedir(e->top, dir, &fh), 0);
	return ret;
}

static void list_free(struct listing *l)
{
	free(l->name);
	free(l->off);
}

/* How many times name is listed (and that "." and ".." are). */
static int listed(const struct listing *l, const char *name)
{
	int n = 0;

	for (size_t i = 0; i < l->n; i++)
		n += strcmp(l->name[i], name) == 0;
	return n;
}

/* got lists what want does, in its order and with its cookies. */
static void same_listing(const struct listing *got, const struct listing *want)
{
	for (size_t i = 0; i < want->n && i < got->n; i++) {
		cr_assert_str_eq(got->name[i], want->name[i], "entry %zu differs", i);
		cr_assert_eq(got->off[i], want->off[i], "cookie %zu differs", i);
	}
}

/*
 * Every entry of l but "." and ".." ends in its number k < n (after
 * lowercase letters), and each k is listed exactly once.
 */
static void each_once(const struct listing *l, int n)
{
	unsigned char *seen = calloc((size_t)n, 1);

	cr_assert_not_null(seen);
	for (size_t i = 0; i < l->n; i++) {
		const char *digits;
		int k;

		if (l->name[i][0] == '.')
			continue;
		for (digits = l->name[i]; *digits >= 'a' && *digits <= 'z'; digits++)
			;
		k = atoi(digits);
		cr_assert(k >= 0 && k < n, "stray entry %s", l->name[i]);
		cr_assert_eq(seen[k], 0, "entry %d listed twice", k);
		seen[k] = 1;
	}
	for (int k = 0; k < n; k++)
		cr_assert_eq(seen[k], 1, "entry %d not listed", k);
	free(seen);
}

/* A listing of the backing directory dirfd (which may be O_PATH). */
static DIR *dir_open(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dp;

	cr_assert_geq(fd, 0);
	dp = fdopendir(fd);
	cr_assert_not_null(dp);
	return dp;
}

/* What a backing directory holds, by kind. */
struct backing {
	int	shorts, longs, sides, tmps, nonces, others;
	char	side[64][64];	/* the side files' names */
	char	lng[64][64];	/* the long entries' names */
};

static void scan_backing(int dirfd, struct backing *b)
{
	DIR *dp = dir_open(dirfd);
	struct dirent *d;

	memset(b, 0, sizeof(*b));
	while ((d = readdir(dp))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if (!strcmp(d->d_name, "sc.journal"))
			continue;	/* the gcm layer's crash journal (docs/format.md 10.10) */
		switch (sc_name_kind(d->d_name, strlen(d->d_name))) {
		case SC_NAME_KIND_SHORT:
			b->shorts++;
			break;
		case SC_NAME_KIND_LONG:
			cr_assert_lt(b->longs, 64);
			strcpy(b->lng[b->longs++], d->d_name);
			break;
		case SC_NAME_KIND_SIDE:
			cr_assert_lt(b->sides, 64);
			strcpy(b->side[b->sides++], d->d_name);
			break;
		case SC_NAME_KIND_TMP:
			b->tmps++;
			break;
		case SC_NAME_KIND_NONCE:
			b->nonces++;
			break;
		default:
			b->others++;
			break;
		}
	}
	closedir(dp);
}

/* Every long entry has its side file and every side file its long entry; no sc.new.*. */
static void check_sides(int dirfd, int longs, const char *when)
{
	struct backing b;

	scan_backing(dirfd, &b);
	cr_assert_eq(b.longs, longs, "%s: %d long entries below, want %d", when, b.longs, longs);
	cr_assert_eq(b.sides, b.longs, "%s: %d side files for %d long entries", when, b.sides,
		     b.longs);
	for (int i = 0; i < b.longs; i++) {
		char side[64];
		bool found = false;

		snprintf(side, sizeof(side), "%s%s", b.lng[i], SC_NAME_SIDE_SUFFIX);
		for (int k = 0; k < b.sides; k++)
			found |= strcmp(b.side[k], side) == 0;
		cr_assert(found, "%s: long entry %s has no side file", when, b.lng[i]);
	}
	cr_assert_eq(b.tmps, 0, "%s: a directory being made was left behind", when);
	cr_assert_eq(b.nonces, g_portable, "%s: %d nonce files", when, b.nonces);
}

/* No backing name under dirfd, recursively, nor symlink target, holds needle. */
static void assert_not_below(int dirfd, const char *needle)
{
	struct dirent *d;
	DIR *dp;

	dp = dir_open(dirfd);
	while ((d = readdir(dp))) {
		char target[4096];
		ssize_t n;

		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		cr_assert_null(strstr(d->d_name, needle), "plaintext \"%s\" in backing name %s",
			       needle, d->d_name);
		n = readlinkat(dirfd, d->d_name, target, sizeof(target) - 1);
		if (n >= 0) {
			target[n] = '\0';
			cr_assert_null(strstr(target, needle), "plaintext \"%s\" in a backing "
				       "symlink target", needle);
		}
		if (d->d_type == DT_DIR) {
			int sub = openat(dirfd, d->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);

			cr_assert_geq(sub, 0);
			assert_not_below(sub, needle);
			close(sub);
		}
	}
	closedir(dp);
}

/* A name of len bytes: tag, then letters cycling from c. */
static void make_name(char *out, size_t len, char c)
{
	for (size_t i = 0; i < len; i++)
		out[i] = (char)('a' + (c - 'a' + (int)i) % 26);
	out[len] = '\0';
}

/* ---- tests ------------------------------------------------------------------- */

static enum sc_cipher_id ciphers[] = { SC_CIPHER_NULL, SC_CIPHER_AES_XTS };

ParameterizedTestParameters(names, long_names)
{
	return cr_make_param_array(enum sc_cipher_id, ciphers, 2);
}

/*
 * Names of 1..255 bytes through create/readdir/lookup/rename/unlink: those
 * whose encoding exceeds 255 bytes (161 and up) live under a long form
 * with one side file each, made and removed with the name.
 */
ParameterizedTest(enum sc_cipher_id *cipher, names, long_names)
{
	static const size_t lens[] = { 1, 16, 143, 144, 160, 161, 175, 176, 255 };
	const size_t nl = sizeof(lens) / sizeof(lens[0]);
	char name[SC_NAME_PLAIN_MAX + 1], other[SC_NAME_PLAIN_MAX + 1], buf[64], want[64];
	struct listing l;
	struct env e;
	int longs = 0;

	env_up(&e, *cipher);
	for (size_t i = 0; i < nl; i++) {
		make_name(name, lens[i], 'a' + (char)i);
		cr_assert_eq(do_create(&e, &e.root, name), 0, "create of %zu bytes", lens[i]);
		longs += lens[i] > 160;
		check_sides(e.root.fd, longs, "create");
	}
	cr_assert_eq(list_from(&e, &e.root, -1, 0, &l), 0);
	cr_assert_eq(l.n, nl + 2, "%zu entries listed", l.n);
	cr_assert_eq(listed(&l, "."), 1);
	cr_assert_eq(listed(&l, ".."), 1);
	for (size_t i = 0; i < nl; i++) {
		make_name(name, lens[i], 'a' + (char)i);
		cr_assert_eq(listed(&l, name), 1, "%zu-byte name listed %d times", lens[i],
			     listed(&l, name));
		read_file(&e, &e.root, name, buf);
		snprintf(want, sizeof(want), "data:%.16s", name);
		cr_assert_str_eq(buf, want);
		if (lens[i] >= 8)	/* shorter ones occur in base64 by chance */
			assert_not_below(e.root.fd, name + lens[i] - 8);
	}
	list_free(&l);
	/* Rename each to a name of the next length: the side files follow the names. */
	for (size_t i = 0; i < nl; i++) {
		make_name(name, lens[i], 'a' + (char)i);
		make_name(other, lens[(i + 1) % nl], 'm' + (char)i);
		other[0] = 'R';
		cr_assert_eq(sc_xl_rename(e.top, &e.root, name, &e.root, other, 0), 0,
			     "rename %zu -> %zu bytes", lens[i], lens[(i + 1) % nl]);
		longs += (lens[(i + 1) % nl] > 160) - (lens[i] > 160);
		check_sides(e.root.fd, longs, "rename");
		cr_assert_eq(sc_xl_lookup(e.top, &e.root, name, &(int){ 0 }, &(struct stat){ 0 }),
			     -ENOENT);
		read_file(&e, &e.root, other, buf);
		snprintf(want, sizeof(want), "data:%.16s", name);
		cr_assert_str_eq(buf, want);
	}
	for (size_t i = 0; i < nl; i++) {
		make_name(other, lens[(i + 1) % nl], 'm' + (char)i);
		other[0] = 'R';
		cr_assert_eq(sc_xl_unlink(e.top, &e.root, other), 0);
		longs -= lens[(i + 1) % nl] > 160;
		check_sides(e.root.fd, longs, "unlink");
	}
	cr_assert_eq(list_from(&e, &e.root, -1, 0, &l), 0);
	cr_assert_eq(l.n, 2, "%zu entries left", l.n);
	list_free(&l);
	/* 256 bytes is past NAME_MAX (FUSE passes names up to 1024 bytes). */
	{
		char big[257];

		memset(big, 'x', 256);
		big[256] = '\0';
		cr_assert_eq(sc_xl_lookup(e.top, &e.root, big, &(int){ 0 }, &(struct stat){ 0 }),
			     -ENAMETOOLONG);
		cr_assert_eq(do_create(&e, &e.root, big), -ENAMETOOLONG);
	}
	env_down(&e);
}

/* Names holding every byte value but '/' and NUL, alone and in runs. */
Test(names, every_byte_value)
{
	char name[SC_NAME_PLAIN_MAX + 1], buf[64];
	struct listing l;
	struct env e;
	int made = 0;

	env_up(&e, SC_CIPHER_AES_XTS);
	for (int c = 1; c < 256; c++) {
		if (c == '/')
			continue;
		snprintf(name, sizeof(name), "b%c", c);
		cr_assert_eq(do_create(&e, &e.root, name), 0, "byte %#x", c);
		made++;
	}
	/* Runs of 200 bytes: long names of high bytes and of control bytes. */
	for (int run = 0; run < 2; run++) {
		for (int i = 0; i < 200; i++)
			name[i] = (char)(run ? 128 + i % 128 : 1 + i % 31);
		name[200] = '\0';
		cr_assert_eq(do_create(&e, &e.root, name), 0, "run %d", run);
		read_file(&e, &e.root, name, buf);
		made++;
	}
	cr_assert_eq(list_from(&e, &e.root, -1, 0, &l), 0);
	cr_assert_eq(l.n, (size_t)made + 2);
	for (int c = 1; c < 256; c++) {
		if (c == '/')
			continue;
		snprintf(name, sizeof(name), "b%c", c);
		cr_assert_eq(listed(&l, name), 1, "byte %#x listed %d times", c, listed(&l, name));
		read_file(&e, &e.root, name, buf);
		cr_assert_eq(sc_xl_unlink(e.top, &e.root, name), 0);
	}
	list_free(&l);
	/* "." and ".." and names with '/' are not names. */
	cr_assert_eq(do_create(&e, &e.root, "a/b"), -EINVAL);
	env_down(&e);
}

/*
 * The root's nonce is made by ->init and kept across mounts; statfs
 * reports the plaintext limit; the same name encrypts differently in two
 * directories.
 */
Test(names, root_nonce_statfs_and_per_directory_names)
{
	uint8_t rec[64], rec2[64];
	struct statvfs sv;
	struct backing b1, b2;
	struct sc_obj d;
	struct env e;
	ssize_t n;

	env_up(&e, SC_CIPHER_AES_XTS);
	n = rec_get(&e, &e.root, rec);
	cr_assert_eq(n, SC_DIRNONCE_REC2_LEN, "root nonce record of %zd bytes", n);
	cr_assert_eq(rec[0], 2, "record version %u", rec[0]);
	cr_assert_eq(sc_xl_statfs(e.top, &e.root, &sv), 0);
	cr_assert_eq(sv.f_namemax, 255);
	cr_assert_eq(do_mkdir(&e, &e.root, "d", 0755, &d), 0);
	cr_assert_eq(do_create(&e, &e.root, "same"), 0);
	cr_assert_eq(do_create(&e, &d, "same"), 0);
	scan_backing(e.root.fd, &b1);
	scan_backing(d.fd, &b2);
	cr_assert_eq(b1.shorts, 2);
	cr_assert_eq(b2.shorts, 1);
	{
		/* The one name in d must not be a name in the root. */
		int fd = openat(d.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *dp = fdopendir(fd);
		struct dirent *de;

		cr_assert_not_null(dp);
		while ((de = readdir(dp)))
			if (sc_name_kind(de->d_name, strlen(de->d_name)) == SC_NAME_KIND_SHORT)
				cr_assert_neq(faccessat(e.root.fd, de->d_name, F_OK,
							AT_SYMLINK_NOFOLLOW), 0,
					      "same backing name in two directories");
		closedir(dp);
	}
	/*
	 * A name just listed in one directory, looked up in another (the
	 * encoding a listing leaves for readdirplus's lookup is that
	 * directory's only).
	 */
	{
		struct sc_obj p, q, o1, o2;
		struct listing l;
		struct stat st1, st2;

		cr_assert_eq(do_mkdir(&e, &e.root, "p", 0755, &p), 0);
		cr_assert_eq(do_mkdir(&e, &e.root, "q", 0755, &q), 0);
		cr_assert_eq(do_create(&e, &p, "one"), 0);
		cr_assert_eq(do_create(&e, &q, "one"), 0);
		/* "one" is the only name decrypted ("." and ".." pass as they are). */
		cr_assert_eq(list_from(&e, &p, -1, 0, &l), 0);
		cr_assert_eq(listed(&l, "one"), 1);
		list_free(&l);
		cr_assert_eq(do_lookup(&e, &q, "one", &o2, &st2), 0, "lookup in q after listing p");
		cr_assert_eq(do_lookup(&e, &p, "one", &o1, &st1), 0);
		cr_assert_neq(st1.st_ino, st2.st_ino);
		obj_put(&e, &o1);
		obj_put(&e, &o2);
		obj_put(&e, &p);
		obj_put(&e, &q);
	}
	obj_put(&e, &d);
	/* Mounted again: the record is read, not replaced. */
	env_stop(&e);
	cr_assert_eq(env_try(&e), 0);
	cr_assert_eq(rec_get(&e, &e.root, rec2), SC_DIRNONCE_REC2_LEN);
	cr_assert(memcmp(rec, rec2, SC_DIRNONCE_REC2_LEN) == 0, "the root nonce changed");
	cr_assert_eq(do_lookup(&e, &e.root, "d", &d, &(struct stat){ 0 }), 0);
	{
		char buf[64];

		read_file(&e, &d, "same", buf);
		cr_assert_str_eq(buf, "data:same");
	}
	obj_put(&e, &d);
	env_down(&e);
}

static int short_statfs(struct sc_xl *xl, struct sc_obj *obj, struct statvfs *sv)
{
	(void)xl;
	(void)obj;
	memset(sv, 0, sizeof(*sv));
	sv->f_namemax = 143;	/* eCryptfs-like: less than NAME_MAX */
	sv->f_bsize = 4096;
	return 0;
}

/* statfs says the plaintext limit, 255, whatever the backing limit is. */
Test(names, statfs_namemax_over_a_shorter_backing)
{
	static const struct sc_xl_ops short_ops = { .name = "short", .statfs = short_statfs };
	struct sc_xl below = { .ops = &short_ops, .id = 0 }, *xl;
	struct sc_obj root = { .fd = -1, .type = S_IFDIR, .is_root = true };
	struct statvfs sv;
	struct sc_mkey *mk;
	uint8_t raw[SC_MASTER_KEY_LEN] = { 1 };

	cr_assert_eq(sc_mkey_new(raw, SC_CIPHER_NULL, SC_BLOCK_DEFAULT, &mk), 0);
	cr_assert_eq(sc_names_xl_new(&below, mk, g_portable, &xl), 0);
	cr_assert_eq(sc_names_xl_new(&below, NULL, g_portable, &xl), -EINVAL);
	cr_assert_eq(sc_xl_statfs(xl, &root, &sv), 0);
	cr_assert_eq(sv.f_namemax, 255);
	cr_assert_eq(sv.f_bsize, 4096);
	sc_xl_free(xl);
	sc_mkey_free(mk);
}

/* Runs the calls that follow with fsuid/fsgid id (this thread only), as the front end does. */
static void as_user(uid_t id)
{
	setfsgid(id);
	setfsuid(id);
	cr_assert_eq((uid_t)setfsuid((uid_t)-1), id, "setfsuid(%u) did not take", (unsigned)id);
}

/* A root without a record that cannot be given one: init fails, saying why once. */
Test(names, init_without_writable_root_fails)
{
	struct env e;
	int ret;

	if (geteuid() != 0)
		cr_skip_test("needs root to act as another user");
	env_prepare(&e, SC_CIPHER_NULL);
	cr_assert_eq(chmod(e.dir, 0755), 0);
	as_user(65534);
	ret = env_try(&e);
	as_user(0);
	cr_assert_eq(ret, -EACCES, "init returned %d", ret);
	cr_assert_eq(log_lines("cannot store the backing root's name nonce"), 1, "log: %s", g_log);
	cr_assert(!rec_there(&e, e.root.fd), "a record was stored");
	cr_assert_eq(faccessat(e.root.fd, SC_DIRNONCE_FILE, F_OK, AT_SYMLINK_NOFOLLOW), -1);
	env_stop(&e);
	sc_mkey_free(e.mkey);
	cr_assert_eq(rmdir(e.dir), 0);
}

/*
 * mkdir: the directory has its nonce, no sc.new.* is left, and the mode
 * asked for -- also modes without owner write or search, made by a user
 * who is not root (the nonce is set as the caller).
 */
Test(names, mkdir_nonce_modes_as_other_user)
{
	static const mode_t modes[] = { 0500, 0, 0555, 0700, 0777, 01500 };
	uint8_t rec[64];
	struct sc_obj d, sub;
	struct stat st, bst;
	struct env e;
	int fd;

	if (geteuid() != 0)
		cr_skip_test("needs root to act as another user");
	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(chmod(e.dir, 0777), 0);
	as_user(65534);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char name[16];

		snprintf(name, sizeof(name), "m%o", modes[i]);
		cr_assert_eq(sc_xl_mkdir(e.top, &e.root, name, S_IFDIR | modes[i], &fd, &st), 0,
			     "mkdir mode %o", modes[i]);
		cr_assert_eq(st.st_mode & 07777, modes[i], "mode %o after mkdir %o",
			     st.st_mode & 07777, modes[i]);
		cr_assert(S_ISDIR(st.st_mode));
		cr_assert_eq(st.st_uid, 65534);
		cr_assert_eq(fstat(fd, &bst), 0);
		cr_assert_eq(bst.st_mode & 07777, modes[i], "stored mode %o", bst.st_mode & 07777);
		cr_assert_eq(bst.st_ino, st.st_ino);
		obj_make(&e, &d, fd, &st);
		as_user(0);	/* read the record as root: mode 0 hides it from its owner */
		cr_assert_eq(rec_get(&e, &d, rec), SC_DIRNONCE_REC2_LEN, "mode %o: no nonce record",
			     modes[i]);
		as_user(65534);
		obj_put(&e, &d);
		check_sides(e.root.fd, 0, "mkdir");
	}
	/* A usable directory: made, listed, entered. */
	cr_assert_eq(do_mkdir(&e, &e.root, "u", 0700, &d), 0);
	cr_assert_eq(do_create(&e, &d, "inside"), 0);
	cr_assert_eq(do_mkdir(&e, &d, "deeper", 0500, &sub), 0);
	obj_put(&e, &sub);
	as_user(0);
	{
		struct listing l;

		cr_assert_eq(list_from(&e, &d, -1, 0, &l), 0);
		cr_assert_eq(l.n, 4);
		cr_assert_eq(listed(&l, "inside") + listed(&l, "deeper"), 2);
		list_free(&l);
	}
	/* An existing name: EEXIST, and no temporary directory left. */
	cr_assert_eq(do_mkdir(&e, &d, "deeper", 0700, &sub), -EEXIST);
	cr_assert_eq(do_mkdir(&e, &d, "inside", 0700, &sub), -EEXIST);
	check_sides(d.fd, 0, "mkdir over an existing name");
	obj_put(&e, &d);
	env_down(&e);
}

/* A directory whose nonce is missing or damaged: EIO for names in it, logged once, no crash. */
Test(names, directory_without_valid_nonce)
{
	static const uint8_t bad_version[SC_DIRNONCE_REC2_LEN] = { 3 };
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR | O_CREAT };
	struct sc_obj d, x;
	struct stat st;
	struct env e;
	int fd;

	uint8_t saved[SC_DIRNONCE_REC2_LEN];

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "d", 0755, &d), 0);
	cr_assert_eq(do_create(&e, &d, "f"), 0);
	cr_assert_eq(do_mkdir(&e, &d, "sub", 0755, &x), 0);
	obj_put(&e, &x);
	cr_assert_eq(rec_get(&e, &d, saved), sizeof(saved));
	obj_put(&e, &d);
	cr_assert_eq(log_lines("stackcrypt: "), 0, "log: %s", g_log);

	for (int round = 0; round < 2; round++) {
		cr_assert_eq(do_lookup(&e, &e.root, "d", &d, &st), 0);
		if (round == 0)
			rec_drop(&e, &d);
		else
			rec_put(&e, &d, bad_version, sizeof(bad_version));
		/* The record is read when the directory is looked up: a new inode life. */
		obj_put(&e, &d);
		g_log_len = 0;
		g_log[0] = '\0';
		cr_assert_eq(do_lookup(&e, &e.root, "d", &d, &st), 0);
		for (int again = 0; again < 2; again++) {
			struct listing l;

			cr_assert_eq(sc_xl_lookup(e.top, &d, "f", &fd, &st), -EIO);
			cr_assert_eq(list_from(&e, &d, -1, 0, &l), -EIO);
			list_free(&l);
			cr_assert_eq(sc_xl_create(e.top, &d, "g", 0644, &fh, &fd, &st), -EIO);
			cr_assert_eq(sc_xl_mkdir(e.top, &d, "h", S_IFDIR | 0755, &fd, &st), -EIO);
			cr_assert_eq(sc_xl_unlink(e.top, &d, "f"), -EIO);
			cr_assert_eq(sc_xl_rmdir(e.top, &d, "sub"), -EIO);
			cr_assert_eq(sc_xl_rename(e.top, &d, "f", &e.root, "g", 0), -EIO);
			cr_assert_eq(sc_xl_symlink(e.top, &d, "l", "t", &fd, &st), -EIO);
		}
		cr_assert_eq(log_lines("names in it return EIO"), 1, "round %d log: %s", round,
			     g_log);
		/* Attributes of the directory itself still work. */
		cr_assert_eq(sc_xl_getattr(e.top, &d, NULL, &st), 0);
		cr_assert_not_null(d.priv[e.top->id]);
		obj_put(&e, &d);
		cr_assert_null(d.priv[e.top->id], "->forget left the nonce state");
	}
	/* Repaired below: the next inode life reads it again, and the names decrypt. */
	cr_assert_eq(do_lookup(&e, &e.root, "d", &d, &st), 0);
	rec_put(&e, &d, saved, sizeof(saved));
	obj_put(&e, &d);
	cr_assert_eq(do_lookup(&e, &e.root, "d", &d, &st), 0);
	{
		char buf[64];

		read_file(&e, &d, "f", buf);
		cr_assert_str_eq(buf, "data:f");
	}
	obj_put(&e, &d);
	env_down(&e);
}

/* Threads that meet a directory's nonce for the first time together. */
#define NRACE	8

struct racer {
	struct env		*e;
	const char		*name;
	pthread_barrier_t	*go;
	int			ret;
};

/* Looks the directory up in the root (its record read and checked), then "f" in it. */
static void *race_lookup(void *arg)
{
	struct racer *r = arg;
	struct sc_obj d;
	struct stat st;
	int fd;

	pthread_barrier_wait(r->go);
	r->ret = do_lookup(r->e, &r->e->root, r->name, &d, &st);
	if (r->ret != 0)
		return NULL;
	r->ret = sc_xl_lookup(r->e->top, &d, "f", &fd, &st);
	if (r->ret == 0)
		close(fd);
	obj_put(r->e, &d);
	return NULL;
}

/*
 * NRACE threads look up a directory whose record nobody has read yet,
 * each its own inode (the front end would share one: here each thread
 * adopts its own, so that every one reads the record), then a name in
 * it: all agree, and in an empty directory of the file form, one thread
 * gives it a new record and the others read that one.
 */
Test(names, nonce_first_use_raced)
{
	struct racer r[NRACE];
	pthread_t thr[NRACE];
	pthread_barrier_t go;
	struct sc_obj d, x;
	struct stat st;
	struct env e;

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "d", 0755, &x), 0);
	cr_assert_eq(do_create(&e, &x, "f"), 0);
	obj_put(&e, &x);
	cr_assert_eq(do_mkdir(&e, &e.root, "empty", 0755, &x), 0);
	obj_put(&e, &x);
	for (int round = 0; round < 3; round++) {
		/* round 2: an empty directory; the file form gives it one new record */
		static const int want[2][3] = { { 0, -EIO, -EIO }, { 0, -EIO, -ENOENT } };

		cr_assert_eq(do_lookup(&e, &e.root, round < 2 ? "d" : "empty", &d, &st), 0);
		if (round > 0)
			rec_drop(&e, &d);
		obj_put(&e, &d);
		cr_assert_eq(pthread_barrier_init(&go, NULL, NRACE), 0);
		for (int i = 0; i < NRACE; i++) {
			r[i] = (struct racer){ .e = &e, .name = round < 2 ? "d" : "empty", .go = &go };
			cr_assert_eq(pthread_create(&thr[i], NULL, race_lookup, &r[i]), 0);
		}
		for (int i = 0; i < NRACE; i++) {
			cr_assert_eq(pthread_join(thr[i], NULL), 0);
			cr_assert_eq(r[i].ret, want[g_portable][round], "round %d thread %d: %d; log: %s",
				     round, i, r[i].ret, g_log);
		}
		pthread_barrier_destroy(&go);
	}
	cr_assert_eq(log_lines("names in it return EIO"), g_portable ? NRACE : 2 * NRACE,
		     "log: %s", g_log);
	cr_assert_eq(log_lines("it has a new one"), g_portable, "log: %s", g_log);
	env_down(&e);
}

/* Every operation that makes, moves or removes a long name keeps one side file per long entry. */
ParameterizedTestParameters(names, side_files)
{
	return cr_make_param_array(enum sc_cipher_id, ciphers, 2);
}

ParameterizedTest(enum sc_cipher_id *cipher, names, side_files)
{
	char A[256], B[256], C[256], T[256], buf[64];
	struct sc_obj d, o, t;
	struct listing l;
	struct stat st;
	struct env e;
	int fd;

	env_up(&e, *cipher);
	make_name(A, 200, 'a');
	make_name(B, 220, 'b');
	make_name(C, 255, 'c');
	make_name(T, 170, 't');
	cr_assert_eq(do_mkdir(&e, &e.root, "d", 0755, &d), 0);

	/* mknod, symlink, mkdir of long names; then rmdir and unlink. */
	cr_assert_eq(sc_xl_mknod(e.top, &d, A, S_IFIFO | 0644, 0, &fd, &st), 0);
	close(fd);
	cr_assert_eq(sc_xl_symlink(e.top, &d, B, "target", &fd, &st), 0);
	close(fd);
	cr_assert_eq(do_mkdir(&e, &d, C, 0755, &o), 0);
	obj_put(&e, &o);
	check_sides(d.fd, 3, "mknod/symlink/mkdir");
	cr_assert_eq(sc_xl_mknod(e.top, &d, A, S_IFIFO | 0644, 0, &fd, &st), -EEXIST);
	cr_assert_eq(do_mkdir(&e, &d, C, 0755, &o), -EEXIST);
	check_sides(d.fd, 3, "EEXIST");
	cr_assert_eq(sc_xl_rmdir(e.top, &d, C), 0);
	cr_assert_eq(sc_xl_unlink(e.top, &d, B), 0);
	cr_assert_eq(sc_xl_unlink(e.top, &d, A), 0);
	check_sides(d.fd, 0, "rmdir/unlink");

	/* link across directories, then rename between the two links of one inode: a no-op. */
	cr_assert_eq(do_create(&e, &d, A), 0);
	cr_assert_eq(do_lookup(&e, &d, A, &o, &st), 0);
	cr_assert_eq(sc_xl_link(e.top, &o, &e.root, B, &st), 0);
	cr_assert_eq(st.st_nlink, 2);
	cr_assert_eq(sc_xl_link(e.top, &o, &d, B, &st), 0);
	check_sides(e.root.fd, 1, "link");
	check_sides(d.fd, 2, "link");
	cr_assert_eq(sc_xl_rename(e.top, &d, A, &d, B, 0), 0);
	check_sides(d.fd, 2, "rename between hard links");
	cr_assert_eq(sc_xl_rename(e.top, &d, A, &d, A, 0), 0);
	check_sides(d.fd, 2, "rename onto itself");
	read_file(&e, &d, A, buf);
	read_file(&e, &d, B, buf);
	cr_assert_eq(sc_xl_unlink(e.top, &e.root, B), 0);
	cr_assert_eq(sc_xl_unlink(e.top, &d, B), 0);
	obj_put(&e, &o);
	check_sides(e.root.fd, 0, "unlink of a link");
	check_sides(d.fd, 1, "unlink of a link");

	/* Rename over an existing long name: the source's side file goes, the target's stays. */
	cr_assert_eq(do_create(&e, &d, C), 0);
	cr_assert_eq(sc_xl_rename(e.top, &d, A, &d, C, 0), 0);
	check_sides(d.fd, 1, "rename over a long name");
	read_file(&e, &d, C, buf);
	cr_assert_str_eq(buf, "data:abcdefghijklmnop");
	/* Across directories, long to long. */
	cr_assert_eq(sc_xl_rename(e.top, &d, C, &e.root, T, 0), 0);
	check_sides(d.fd, 0, "rename out");
	check_sides(e.root.fd, 1, "rename in");

	/* NOREPLACE onto a name that exists: EEXIST, nothing changes. */
	cr_assert_eq(do_create(&e, &e.root, A), 0);
	cr_assert_eq(sc_xl_rename(e.top, &e.root, A, &e.root, T, RENAME_NOREPLACE), -EEXIST);
	check_sides(e.root.fd, 2, "NOREPLACE");
	cr_assert_eq(sc_xl_rename(e.top, &e.root, A, &d, B, RENAME_NOREPLACE), 0);
	check_sides(e.root.fd, 1, "NOREPLACE move");
	check_sides(d.fd, 1, "NOREPLACE move");

	/* EXCHANGE of a long and a short name: both names stay, so do the side files. */
	cr_assert_eq(do_create(&e, &e.root, "short"), 0);
	cr_assert_eq(sc_xl_rename(e.top, &e.root, T, &e.root, "short", RENAME_EXCHANGE), 0);
	check_sides(e.root.fd, 1, "EXCHANGE");
	read_file(&e, &e.root, T, buf);
	cr_assert_str_eq(buf, "data:short");
	read_file(&e, &e.root, "short", buf);
	cr_assert_str_eq(buf, "data:abcdefghijklmnop");
	cr_assert_eq(sc_xl_rename(e.top, &e.root, T, &d, B, RENAME_EXCHANGE), 0);
	check_sides(e.root.fd, 1, "EXCHANGE across");
	check_sides(d.fd, 1, "EXCHANGE across");
	read_file(&e, &d, B, buf);
	cr_assert_str_eq(buf, "data:short");

	/*
	 * A rename that fails after the target's side file was written: the
	 * old name stays intact and readable, no side file is left over.
	 */
	cr_assert_eq(sc_xl_rename(e.top, &d, "missing", &d, C, 0), -ENOENT);
	check_sides(d.fd, 1, "failed rename");
	cr_assert_eq(do_mkdir(&e, &d, A, 0755, &t), 0);
	cr_assert_eq(do_create(&e, &t, "full"), 0);
	cr_assert_eq(sc_xl_rename(e.top, &d, B, &d, A, 0), -EISDIR);
	cr_assert_eq(sc_xl_rename(e.top, &e.root, T, &d, C, RENAME_EXCHANGE), -ENOENT);
	check_sides(d.fd, 2, "failed rename onto a directory");
	read_file(&e, &d, B, buf);
	cr_assert_str_eq(buf, "data:short");
	obj_put(&e, &t);

	/* Names are hidden below; listing shows each once. */
	cr_assert_eq(list_from(&e, &d, -1, 0, &l), 0);
	cr_assert_eq(l.n, 4);
	cr_assert_eq(listed(&l, A) + listed(&l, B), 2);
	list_free(&l);
	assert_not_below(e.root.fd, "abcdefghijklmnopqrst");
	assert_not_below(e.root.fd, "short");
	obj_put(&e, &d);
	env_down(&e);
}

/*
 * Side files a crash left: a correct one is kept, a damaged one replaced;
 * either way the name is made and reads back.
 */
Test(names, leftover_side_files)
{
	char A[256], buf[64], side[64];
	struct backing b;
	struct stat st, st2;
	struct env e;
	int fd;

	env_up(&e, SC_CIPHER_AES_XTS);
	make_name(A, 180, 'q');
	cr_assert_eq(do_create(&e, &e.root, A), 0);
	scan_backing(e.root.fd, &b);
	cr_assert_eq(b.sides, 1);
	strcpy(side, b.side[0]);
	/* Keep a copy (a hard link) of the correct side file, remove the name. */
	cr_assert_eq(linkat(e.root.fd, side, e.root.fd, "keep", 0), 0);
	cr_assert_eq(sc_xl_unlink(e.top, &e.root, A), 0);
	cr_assert_eq(faccessat(e.root.fd, side, F_OK, 0), -1);
	cr_assert_eq(renameat(e.root.fd, "keep", e.root.fd, side), 0);
	cr_assert_eq(fstatat(e.root.fd, side, &st, 0), 0);
	cr_assert_eq(do_create(&e, &e.root, A), 0);
	cr_assert_eq(fstatat(e.root.fd, side, &st2, 0), 0);
	cr_assert_eq(st.st_ino, st2.st_ino, "a correct leftover side file was replaced");
	read_file(&e, &e.root, A, buf);
	cr_assert_eq(sc_xl_unlink(e.top, &e.root, A), 0);

	/* Damaged leftovers: garbage, and an empty file. */
	for (int k = 0; k < 2; k++) {
		fd = openat(e.root.fd, side, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		cr_assert_geq(fd, 0);
		if (k == 0)
			cr_assert_eq(write(fd, "garbage", 7), 7);
		close(fd);
		cr_assert_eq(do_create(&e, &e.root, A), 0, "create over damaged side file %d", k);
		check_sides(e.root.fd, 1, "damaged leftover");
		read_file(&e, &e.root, A, buf);
		{
			struct listing l;

			cr_assert_eq(list_from(&e, &e.root, -1, 0, &l), 0);
			cr_assert_eq(listed(&l, A), 1);
			list_free(&l);
		}
		cr_assert_eq(sc_xl_unlink(e.top, &e.root, A), 0);
		check_sides(e.root.fd, 0, "unlink");
	}
	/* The crypt layer says once that the garbage had no header; this layer nothing. */
	cr_assert_eq(log_lines("stackcrypt: names"), 0, "log: %s", g_log);
	env_down(&e);
}

/*
 * mkfs.ext4's lost+found, which init allows in the backing root: hidden
 * and not logged there; anywhere else it is junk like any other name.
 */
Test(names, root_lost_found_not_junk)
{
	struct sc_obj d;
	struct listing l;
	struct env e;

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "d", 0755, &d), 0);
	cr_assert_eq(mkdirat(e.root.fd, "lost+found", 0700), 0);
	cr_assert_eq(mkdirat(d.fd, "lost+found", 0700), 0);
	cr_assert_eq(list_from(&e, &e.root, -1, 0, &l), 0);
	cr_assert_eq(l.n, 3, "%zu entries listed", l.n);
	cr_assert_eq(listed(&l, "lost+found"), 0);
	list_free(&l);
	cr_assert_eq(log_lines("stackcrypt: "), 0, "log: %s", g_log);
	cr_assert_eq(list_from(&e, &d, -1, 0, &l), 0);
	cr_assert_eq(l.n, 2, "%zu entries listed", l.n);
	list_free(&l);
	cr_assert_eq(log_lines("not names of this volume"), 1, "log: %s", g_log);
	obj_put(&e, &d);
	env_down(&e);
}

/*
 * Junk in a backing directory: names that are not ours, a short name that
 * does not verify, a long entry without its side file, an orphan side
 * file, a directory being made.  All hidden; one log line per directory.
 */
Test(names, readdir_hides_junk)
{
	static const char *const junk[] = {
		"plain.txt", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"sc.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"sc.BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.name",
	};
	struct sc_obj d;
	struct listing l;
	struct env e;

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "d", 0755, &d), 0);
	cr_assert_eq(do_create(&e, &d, "real"), 0);
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		int fd = openat(d.fd, junk[i], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		cr_assert_geq(fd, 0, "%s", junk[i]);
		close(fd);
	}
	cr_assert_eq(mkdirat(d.fd, SC_NAME_TMP_PREFIX "0123456789abcdef0123456789abcdef", 0700), 0);
	cr_assert_eq(sc_name_kind(junk[2], strlen(junk[2])), SC_NAME_KIND_LONG);
	cr_assert_eq(sc_name_kind(junk[3], strlen(junk[3])), SC_NAME_KIND_SIDE);
	for (int again = 0; again < 3; again++) {
		cr_assert_eq(list_from(&e, &d, again == 2 ? 40 : -1, 0, &l), 0);
		cr_assert_eq(l.n, 3, "%zu entries listed", l.n);
		cr_assert_eq(listed(&l, "real"), 1);
		list_free(&l);
	}
	cr_assert_eq(log_lines("not names of this volume"), 1, "log: %s", g_log);
	/* The root lists its own entries only, and logs nothing. */
	cr_assert_eq(list_from(&e, &e.root, -1, 0, &l), 0);
	cr_assert_eq(l.n, 3);
	list_free(&l);
	cr_assert_eq(log_lines("stackcrypt: "), 1, "log: %s", g_log);
	obj_put(&e, &d);
	env_down(&e);
}

/* The one short backing name in dirfd, into name (64 bytes). */
static void only_short(int dirfd, char name[64])
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *d;
	int n = 0;
	DIR *dp;

	cr_assert_geq(fd, 0);
	dp = fdopendir(fd);
	cr_assert_not_null(dp);
	while ((d = readdir(dp)))
		if (sc_name_kind(d->d_name, strlen(d->d_name)) == SC_NAME_KIND_SHORT) {
			cr_assert_lt(strlen(d->d_name), 64);
			strcpy(name, d->d_name);
			n++;
		}
	closedir(dp);
	cr_assert_eq(n, 1, "%d short names", n);
}

/*
 * The layer's encoding cache (names made or listed lately) belongs to
 * the directory nonce: an encoding made and listed in p, copied behind
 * the mount into q, is not a name of q (it does not decrypt under q's
 * nonce) and stays hidden however often p and q are listed; the same
 * name made in q gets q's own encoding.
 */
Test(names, encoding_cache_is_per_directory)
{
	char in_p[64], in_q[64];
	struct sc_obj p, q, o;
	struct listing l;
	struct stat st;
	struct env e;
	int fd;

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "p", 0755, &p), 0);
	cr_assert_eq(do_mkdir(&e, &e.root, "q", 0755, &q), 0);
	cr_assert_eq(do_create(&e, &p, "n1"), 0);
	only_short(p.fd, in_p);
	fd = openat(q.fd, in_p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	close(fd);
	for (int again = 0; again < 2; again++) {
		cr_assert_eq(list_from(&e, &p, -1, 0, &l), 0);
		cr_assert_eq(listed(&l, "n1"), 1);
		list_free(&l);
		cr_assert_eq(list_from(&e, &q, -1, 0, &l), 0);
		cr_assert_eq(l.n, 2, "%zu entries listed in q", l.n);
		cr_assert_eq(listed(&l, "n1"), 0, "p's encoding listed as a name of q");
		list_free(&l);
	}
	cr_assert_eq(log_lines("not names of this volume"), 1, "log: %s", g_log);
	cr_assert_eq(do_lookup(&e, &q, "n1", &o, &st), -ENOENT);
	cr_assert_eq(unlinkat(q.fd, in_p, 0), 0);
	cr_assert_eq(do_create(&e, &q, "n1"), 0);
	only_short(q.fd, in_q);
	cr_assert_str_neq(in_p, in_q, "q's name has p's encoding");
	cr_assert_eq(list_from(&e, &q, -1, 0, &l), 0);
	cr_assert_eq(listed(&l, "n1"), 1);
	list_free(&l);
	obj_put(&e, &p);
	obj_put(&e, &q);
	env_down(&e);
}

/*
 * A fresh aes-xts stack whose directory "big" (d) holds n entries of type
 * mode, the i-th named by name_of(name, i).
 */
static void big_dir_up(struct env *e, struct sc_obj *d, int n, mode_t mode,
		       void (*name_of)(char *name, int i))
{
	char name[SC_NAME_PLAIN_MAX + 1];

	env_up(e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(e, &e->root, "big", 0755, d), 0);
	for (int i = 0; i < n; i++) {
		struct stat st;
		int fd;

		name_of(name, i);
		cr_assert_eq(sc_xl_mknod(e->top, d, name, mode, 0, &fd, &st), 0, "mknod %s", name);
		close(fd);
	}
}

/* big_dir_up's end: its three listings freed, and nothing logged. */
static void big_dir_down(struct env *e, struct sc_obj *d, struct listing *a, struct listing *b,
			 struct listing *c)
{
	list_free(a);
	list_free(b);
	list_free(c);
	obj_put(e, d);
	cr_assert_eq(log_lines("stackcrypt: "), 0, "log: %s", g_log);
	env_down(e);
}

/* readdir_small_budget's: the number, one in 100 after a long run of 'k'. */
static void budget_name(char *name, int i)
{
	if (i % 100 == 7)
		make_name(name, 170 + (size_t)(i % 80), 'k');
	else
		name[0] = '\0';
	snprintf(name + strlen(name), 16, "%d", i);
}

/* readdir_past_cache's: 1 to 57 bytes (the cache keeps names up to 32), one in 997 long. */
static void past_cache_name(char *name, int i)
{
	make_name(name, i % 997 == 5 ? 200 : (size_t)(i % 53), 'a' + (char)(i % 26));
	snprintf(name + strlen(name), 16, "%d", i);
}

/*
 * 2000 entries (some long), listed through a 300-byte reply buffer (a few
 * entries per readdir call): each name exactly once, in the order and with
 * the cookies of one full listing, and a listing resumed from any cookie
 * continues where it stopped.
 */
Test(names, readdir_small_budget, .timeout = 120)
{
	enum { N = 2000 };
	struct listing all, part, rest;
	struct sc_obj d;
	struct env e;

	big_dir_up(&e, &d, N, S_IFREG | 0644, budget_name);
	cr_assert_eq(mkdirat(d.fd, SC_NAME_TMP_PREFIX "00000000000000000000000000000000", 0700), 0);
	cr_assert_eq(list_from(&e, &d, -1, 0, &all), 0);
	cr_assert_eq(all.n, N + 2);
	cr_assert_eq(list_from(&e, &d, 300, 0, &part), 0);
	cr_assert_eq(part.n, all.n, "a 300-byte buffer listed %zu of %zu", part.n, all.n);
	same_listing(&part, &all);
	each_once(&part, N);
	/* telldir/seekdir: resume from the cookie of entry 1234. */
	cr_assert_eq(list_from(&e, &d, -1, all.off[1234], &rest), 0);
	cr_assert_eq(rest.n, all.n - 1235);
	cr_assert_str_eq(rest.name[0], all.name[1235]);
	big_dir_down(&e, &d, &all, &part, &rest);
}

/*
 * A listing longer than the encoding cache (names.c: a listing that has
 * decoded more short names than one table holds, 32 768, goes on without
 * it): 34 000 entries of 1 to 57 bytes and a few long ones, listed twice
 * through a 4 KiB reply buffer (the second listing meets the cache as the
 * first left it) and once resumed from a cookie past the switch.  Each
 * name exactly once, both listings in one order with the same cookies.
 * FIFOs: the names layer handles them as any entry, and no file header
 * is made for them, so the setup stays short.  No .timeout (meson's
 * bounds the file): two timed Criterion tests running at once leak 48
 * bytes inside libcriterion, which LeakSanitizer reports.
 */
Test(names, readdir_past_cache)
{
	enum { N = 34000, RESUME = 33000 };
	struct listing one, two, rest;
	struct sc_obj d;
	struct env e;

	big_dir_up(&e, &d, N, S_IFIFO | 0644, past_cache_name);
	cr_assert_eq(list_from(&e, &d, 4096, 0, &one), 0);
	cr_assert_eq(list_from(&e, &d, 4096, 0, &two), 0);
	cr_assert_eq(one.n, N + 2, "listed %zu of %d", one.n, N + 2);
	cr_assert_eq(two.n, one.n, "second listing: %zu of %zu", two.n, one.n);
	same_listing(&two, &one);
	each_once(&one, N);
	cr_assert_eq(list_from(&e, &d, 4096, one.off[RESUME], &rest), 0);
	cr_assert_eq(rest.n, one.n - RESUME - 1);
	for (size_t i = 0; i < rest.n; i++)
		cr_assert_str_eq(rest.name[i], one.name[RESUME + 1 + i], "resumed entry %zu", i);
	big_dir_down(&e, &d, &one, &two, &rest);
}

/* Symlink targets are encrypted; sizes and readlink are the plaintext's. */
Test(names, symlinks)
{
	static char big[SC_LINK_PLAIN_MAX + 2];
	const char *targets[] = { "t", "../some/where/else", big };
	char buf[SC_LINK_PLAIN_MAX + 8], enc[4096], name[16];
	struct sc_obj l;
	struct stat st;
	struct env e;
	ssize_t n;
	int fd;

	memset(big, 'z', SC_LINK_PLAIN_MAX);
	env_up(&e, SC_CIPHER_AES_XTS);
	for (size_t i = 0; i < 3; i++) {
		size_t len = strlen(targets[i]);

		snprintf(name, sizeof(name), "l%zu", i);
		cr_assert_eq(sc_xl_symlink(e.top, &e.root, name, targets[i], &fd, &st), 0);
		cr_assert(S_ISLNK(st.st_mode));
		cr_assert_eq(st.st_size, (off_t)len, "symlink reply size %lld", (long long)st.st_size);
		close(fd);
		cr_assert_eq(do_lookup(&e, &e.root, name, &l, &st), 0);
		cr_assert_eq(st.st_size, (off_t)len, "lookup size %lld", (long long)st.st_size);
		cr_assert_eq(sc_xl_getattr(e.top, &l, NULL, &st), 0);
		cr_assert_eq(st.st_size, (off_t)len, "getattr size %lld", (long long)st.st_size);
		n = sc_xl_readlink(e.top, &l, buf, sizeof(buf));
		cr_assert_eq(n, (ssize_t)len);
		cr_assert(memcmp(buf, targets[i], len) == 0);
		n = readlinkat(l.fd, "", enc, sizeof(enc));
		cr_assert_gt(n, (ssize_t)len, "stored target not longer than the plaintext");
		/* setattr's reply (touch -h) carries the plaintext size too. */
		{
			struct stat attr = { 0 };

			cr_assert_eq(sc_xl_setattr(e.top, &l, NULL, &attr, SC_SET_MTIME_NOW, &st), 0);
			cr_assert_eq(st.st_size, (off_t)len);
		}
		obj_put(&e, &l);
	}
	assert_not_below(e.root.fd, "some/where");
	assert_not_below(e.root.fd, "zzzz");
	big[SC_LINK_PLAIN_MAX] = 'z';
	cr_assert_eq(sc_xl_symlink(e.top, &e.root, "toolong", big, &fd, &st), -ENAMETOOLONG);
	check_sides(e.root.fd, 0, "symlink too long");

	/* A target replaced behind the mount: readlink EIO, logged once; stat still works. */
	cr_assert_eq(do_lookup(&e, &e.root, "l1", &l, &st), 0);
	n = readlinkat(l.fd, "", enc, sizeof(enc));
	cr_assert_gt(n, 0);
	obj_put(&e, &l);
	{
		struct backing b;
		int dfd = openat(e.root.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *dp = fdopendir(dfd);
		struct dirent *de;

		cr_assert_not_null(dp);
		while ((de = readdir(dp))) {
			char t[4096];
			ssize_t m = readlinkat(e.root.fd, de->d_name, t, sizeof(t));

			if (m == n && memcmp(t, enc, (size_t)n) == 0) {
				cr_assert_eq(unlinkat(e.root.fd, de->d_name, 0), 0);
				cr_assert_eq(symlinkat("plain/target", e.root.fd, de->d_name), 0);
			}
		}
		closedir(dp);
		scan_backing(e.root.fd, &b);
		cr_assert_eq(b.shorts, 3);
	}
	cr_assert_eq(do_lookup(&e, &e.root, "l1", &l, &st), 0);
	for (int again = 0; again < 2; again++) {
		cr_assert_eq(sc_xl_readlink(e.top, &l, buf, sizeof(buf)), -EIO);
		cr_assert_eq(sc_xl_getattr(e.top, &l, NULL, &st), 0);
	}
	cr_assert_eq(log_lines("does not decrypt"), 1, "log: %s", g_log);
	obj_put(&e, &l);
	env_down(&e);
}

/*
 * The nonce attribute is this layer's: from above, that name is an
 * ordinary one, stored escaped; the record itself is out of reach.
 */
Test(names, reserved_xattr_escaped)
{
	uint8_t rec[64], rec2[64];
	char list[512], v[64], proc[64];
	struct sc_obj d;
	struct env e;
	ssize_t n;
	int count = 0;

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "d", 0755, &d), 0);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", d.fd);
	cr_assert_eq(rec_get(&e, &d, rec), SC_DIRNONCE_REC2_LEN);
	cr_assert_eq(sc_xl_getxattr(e.top, &d, SC_DIRNONCE_XATTR, v, sizeof(v)), -ENODATA);
	cr_assert_eq(sc_xl_setxattr(e.top, &d, SC_DIRNONCE_XATTR, "mine", 4, XATTR_CREATE), 0);
	cr_assert_eq(getxattr(proc, SC_DIRNONCE_XATTR "!", v, sizeof(v)), 4, "not stored escaped");
	cr_assert_eq(sc_xl_getxattr(e.top, &d, SC_DIRNONCE_XATTR, v, sizeof(v)), 4);
	cr_assert(memcmp(v, "mine", 4) == 0);
	cr_assert_eq(sc_xl_setxattr(e.top, &d, "user.other", "1", 1, 0), 0);
	n = sc_xl_listxattr(e.top, &d, list, sizeof(list));
	cr_assert_gt(n, 0);
	for (const char *p = list; p < list + n; p += strlen(p) + 1) {
		cr_assert(strcmp(p, SC_DIRNONCE_XATTR "!") != 0, "escaped name listed");
		count++;
	}
	cr_assert_eq(count, 2, "%d names listed", count);
	cr_assert_eq(sc_xl_listxattr(e.top, &d, NULL, 0), n);
	cr_assert_eq(sc_xl_removexattr(e.top, &d, SC_DIRNONCE_XATTR), 0);
	cr_assert_eq(sc_xl_removexattr(e.top, &d, SC_DIRNONCE_XATTR), -ENODATA);
	cr_assert_eq(rec_get(&e, &d, rec2), SC_DIRNONCE_REC2_LEN);
	cr_assert(memcmp(rec, rec2, SC_DIRNONCE_REC2_LEN) == 0, "the record changed");
	/* The directory still works. */
	cr_assert_eq(do_create(&e, &d, "f"), 0);
	obj_put(&e, &d);
	env_down(&e);
}

/* The one side file in dirfd (a directory holding one long name): its name into out. */
static void only_side(int dirfd, char *out)
{
	struct backing b;

	scan_backing(dirfd, &b);
	cr_assert_eq(b.sides, 1, "%d side files", b.sides);
	strcpy(out, b.side[0]);
}

/*
 * Side files replaced behind the mount by what a side file never is: a
 * directory, a symlink (to a copy of the right contents: never followed),
 * a FIFO (never opened, so never blocks), a 1 GiB file, and the side file
 * of another long name (a name swap).  Each long name is hidden from
 * readdir (logged once per directory), still found by lookup, and made
 * again after an unlink; only a directory cannot be replaced, which is
 * EIO (damaged backing), not the EISDIR of a call that made no directory.
 */
Test(names, hostile_side_files)
{
	enum { NDIR = 5 };
	char A[256], side[NDIR][64], swap[64], buf[64];
	struct sc_obj d[NDIR];
	struct listing l;
	struct stat st;
	struct env e;
	int fd;

	env_up(&e, SC_CIPHER_AES_XTS);
	make_name(A, 200, 'h');
	for (int i = 0; i < NDIR; i++) {
		char dn[8];

		snprintf(dn, sizeof(dn), "d%d", i);
		cr_assert_eq(do_mkdir(&e, &e.root, dn, 0755, &d[i]), 0);
		cr_assert_eq(do_create(&e, &d[i], A), 0);
		only_side(d[i].fd, side[i]);
	}
	cr_assert_eq(unlinkat(d[0].fd, side[0], 0), 0);
	cr_assert_eq(mkdirat(d[0].fd, side[0], 0755), 0);
	cr_assert_eq(linkat(d[1].fd, side[1], d[1].fd, "copy", 0), 0);
	cr_assert_eq(unlinkat(d[1].fd, side[1], 0), 0);
	cr_assert_eq(symlinkat("copy", d[1].fd, side[1]), 0);
	cr_assert_eq(unlinkat(d[2].fd, side[2], 0), 0);
	cr_assert_eq(mkfifoat(d[2].fd, side[2], 0644), 0);
	fd = openat(d[3].fd, side[3], O_WRONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 1L << 30), 0);
	close(fd);
	{
		/* d4 gets a correct side file of another long name of its own directory. */
		char B[256];

		make_name(B, 210, 'w');
		cr_assert_eq(unlinkat(d[4].fd, side[4], 0), 0);
		cr_assert_eq(do_create(&e, &d[4], B), 0);
		only_side(d[4].fd, swap);
		cr_assert_eq(linkat(d[4].fd, swap, d[4].fd, side[4], 0), 0);
		cr_assert_eq(sc_xl_unlink(e.top, &d[4], B), 0);
	}
	for (int i = 0; i < NDIR; i++) {
		cr_assert_eq(list_from(&e, &d[i], -1, 0, &l), 0, "listing d%d", i);
		cr_assert_eq(listed(&l, A), 0, "d%d: the long name is listed", i);
		list_free(&l);
		cr_assert_eq(sc_xl_lookup(e.top, &d[i], A, &fd, &st), 0, "lookup in d%d", i);
		close(fd);
	}
	cr_assert_eq(log_lines("not names of this volume"), NDIR, "log: %s", g_log);
	for (int i = 0; i < NDIR; i++) {
		cr_assert_eq(sc_xl_unlink(e.top, &d[i], A), 0, "unlink in d%d", i);
		cr_assert_eq(do_create(&e, &d[i], A), i == 0 ? -EIO : 0, "create in d%d", i);
		if (i == 0)
			continue;
		read_file(&e, &d[i], A, buf);
		cr_assert_eq(list_from(&e, &d[i], -1, 0, &l), 0);
		cr_assert_eq(listed(&l, A), 1, "d%d: the name made again is not listed", i);
		list_free(&l);
	}
	/* Nonce records of every wrong size: EIO, as a missing one. */
	for (int k = 0; k < 4; k++) {
		static const size_t sizes[] = { 0, 16, 18, 4000 };
		static uint8_t rec[4000];
		struct sc_obj x;
		char dn[8];

		snprintf(dn, sizeof(dn), "x%d", k);
		cr_assert_eq(do_mkdir(&e, &e.root, dn, 0755, &x), 0);
		/* not empty: the file form gives an empty directory a new record */
		cr_assert_eq(do_create(&e, &x, "f"), 0);
		rec_put(&e, &x, rec, sizes[k]);
		obj_put(&e, &x);
		cr_assert_eq(do_lookup(&e, &e.root, dn, &x, &st), 0);
		cr_assert_eq(sc_xl_lookup(e.top, &x, "f", &fd, &st), -EIO, "%zu bytes", sizes[k]);
		cr_assert_eq(list_from(&e, &x, -1, 0, &l), -EIO);
		list_free(&l);
		obj_put(&e, &x);
	}
	for (int i = 0; i < NDIR; i++)
		obj_put(&e, &d[i]);
	env_down(&e);
}

/*
 * Directories under long names moved across parents: over an empty
 * directory (its name stays, with its side file; the source's goes), onto
 * a non-empty one (ENOTEMPTY: nothing changes), and exchanged with a short
 * name across parents; what the moved directory holds stays readable.
 */
Test(names, long_directories_across_parents)
{
	char A[256], B[256], C[256], buf[64];
	struct sc_obj p1, p2, a, b, c;
	struct listing l;
	struct stat st;
	struct env e;

	env_up(&e, SC_CIPHER_AES_XTS);
	make_name(A, 230, 'a');
	make_name(B, 240, 'b');
	make_name(C, 250, 'c');
	cr_assert_eq(do_mkdir(&e, &e.root, "p1", 0755, &p1), 0);
	cr_assert_eq(do_mkdir(&e, &e.root, "p2", 0755, &p2), 0);
	cr_assert_eq(do_mkdir(&e, &p1, A, 0755, &a), 0);
	cr_assert_eq(do_create(&e, &a, C), 0);
	cr_assert_eq(do_mkdir(&e, &p2, B, 0755, &b), 0);
	cr_assert_eq(do_mkdir(&e, &p2, C, 0755, &c), 0);
	cr_assert_eq(do_create(&e, &c, "inside"), 0);
	obj_put(&e, &b);
	obj_put(&e, &c);
	check_sides(p1.fd, 1, "made");
	check_sides(p2.fd, 2, "made");
	cr_assert_eq(sc_xl_rename(e.top, &p1, A, &p2, C, 0), -ENOTEMPTY);
	check_sides(p1.fd, 1, "ENOTEMPTY");
	check_sides(p2.fd, 2, "ENOTEMPTY");
	cr_assert_eq(sc_xl_rename(e.top, &p1, A, &p2, B, 0), 0);
	check_sides(p1.fd, 0, "over an empty directory");
	check_sides(p2.fd, 2, "over an empty directory");
	cr_assert_eq(do_lookup(&e, &p2, B, &b, &st), 0);
	{
		struct stat sa;

		cr_assert_eq(fstat(a.fd, &sa), 0);
		cr_assert_eq(st.st_ino, sa.st_ino, "the name is not the moved directory");
	}
	read_file(&e, &b, C, buf);
	cr_assert_str_eq(buf, "data:cdefghijklmnopqr");
	obj_put(&e, &b);
	/* The moved directory's own names still decrypt: its nonce moved with it. */
	cr_assert_eq(list_from(&e, &a, -1, 0, &l), 0);
	cr_assert_eq(listed(&l, C), 1);
	list_free(&l);
	cr_assert_eq(do_mkdir(&e, &p1, "s", 0755, &c), 0);
	obj_put(&e, &c);
	cr_assert_eq(sc_xl_rename(e.top, &p1, "s", &p2, B, RENAME_EXCHANGE), 0);
	check_sides(p1.fd, 0, "EXCHANGE across parents");
	check_sides(p2.fd, 2, "EXCHANGE across parents");
	read_file(&e, &a, C, buf);
	cr_assert_eq(list_from(&e, &p1, -1, 0, &l), 0);
	cr_assert_eq(listed(&l, "s"), 1);
	list_free(&l);
	cr_assert_eq(do_lookup(&e, &p1, "s", &c, &st), 0);
	read_file(&e, &c, C, buf);
	obj_put(&e, &c);
	obj_put(&e, &a);
	obj_put(&e, &p1);
	obj_put(&e, &p2);
	env_down(&e);
}

/* ---- nonce files ---------------------------------------------------------------- */

/*
 * A hook under the names layer: the crypt layer's calls that change the
 * backing tree, wrapped.  The g_fail_at-th of them (counted from 1 after
 * hook_arm) fails with EIO without being made; after every one of them the
 * backing directory g_watch is checked as a kill -9 would leave it there:
 * every visible (encrypted-name) directory has its nonce record, or, where
 * g_bare_empty_ok, holds nothing at all.
 */
static const struct sc_xl_ops *g_orig;
static struct sc_xl_ops g_hooked;
static int g_fail_at, g_calls, g_watch = -1;
static bool g_bare_empty_ok;
static struct env *g_env;

/* Only ".", ".." and a nonce file in the backing directory dirfd? */
static bool bare_empty(int dirfd)
{
	struct dirent *d;
	bool empty = true;
	DIR *dp;

	dp = dir_open(dirfd);
	while ((d = readdir(dp)))
		empty &= !strcmp(d->d_name, ".") || !strcmp(d->d_name, "..") ||
			 !strcmp(d->d_name, SC_DIRNONCE_FILE);
	closedir(dp);
	return empty;
}

static void crash_state_check(void)
{
	struct dirent *d;
	DIR *dp;

	dp = dir_open(g_watch);
	while ((d = readdir(dp))) {
		enum sc_name_kind k = sc_name_kind(d->d_name, strlen(d->d_name));
		struct stat st;
		int sub;

		if ((k != SC_NAME_KIND_SHORT && k != SC_NAME_KIND_LONG) ||
		    fstatat(g_watch, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue;
		sub = openat(g_watch, d->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		cr_assert_geq(sub, 0);
		cr_assert(rec_there(g_env, sub) || (g_bare_empty_ok && bare_empty(sub)),
			  "after hooked call %d a crash leaves a visible directory without its "
			  "nonce record", g_calls);
		close(sub);
	}
	closedir(dp);
}

/* Is this the call that fails?  Counts it either way. */
static bool hook_fails(void)
{
	return ++g_calls == g_fail_at;
}

#define HOOK_BODY(op, ...) do {							\
	int _r;									\
	if (hook_fails())							\
		return -EIO;							\
	_r = g_orig->op ? g_orig->op(xl, __VA_ARGS__) : SC_XL_CALL(xl->below, op, __VA_ARGS__); \
	if (g_watch >= 0)							\
		crash_state_check();						\
	return _r;								\
} while (0)

static int hk_mkdir(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		    int *fd_out, struct stat *st)
{
	HOOK_BODY(mkdir, dir, name, mode, fd_out, st);
}

static int hk_setattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      const struct stat *attr, int valid, struct stat *st)
{
	HOOK_BODY(setattr, obj, fh, attr, valid, st);
}

static int hk_setxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
		       const void *value, size_t size, int flags)
{
	HOOK_BODY(setxattr, obj, name, value, size, flags);
}

static int hk_create(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		     struct sc_fh *fh, int *fd_out, struct stat *st)
{
	HOOK_BODY(create, dir, name, mode, fh, fd_out, st);
}

static ssize_t hk_write(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			const void *buf, size_t size, off_t off)
{
	HOOK_BODY(write, obj, fh, buf, size, off);
}

static int hk_fsync(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int datasync)
{
	HOOK_BODY(fsync, obj, fh, datasync);
}

static int hk_rename(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		     struct sc_obj *newdir, const char *newname, unsigned int flags)
{
	HOOK_BODY(rename, dir, name, newdir, newname, flags);
}

static int hk_unlink(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	HOOK_BODY(unlink, dir, name);
}

static int hk_rmdir(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	HOOK_BODY(rmdir, dir, name);
}

/* Wraps the layer under the names layer (once per stack). */
static void hook_install(struct env *e)
{
	struct sc_xl *below = e->top->below;

	g_orig = below->ops;
	g_hooked = *g_orig;
	g_hooked.mkdir = hk_mkdir;
	g_hooked.setattr = hk_setattr;
	g_hooked.setxattr = hk_setxattr;
	g_hooked.create = hk_create;
	g_hooked.write = hk_write;
	g_hooked.fsync = hk_fsync;
	g_hooked.rename = hk_rename;
	g_hooked.unlink = hk_unlink;
	g_hooked.rmdir = hk_rmdir;
	below->ops = &g_hooked;
	g_env = e;
}

/* From now, the fail_at-th hooked call fails (0: none), and watch (-1: none) is checked. */
static void hook_arm(int fail_at, int watch, bool bare_empty_ok)
{
	g_fail_at = fail_at;
	g_calls = 0;
	g_watch = watch;
	g_bare_empty_ok = bare_empty_ok;
}

/*
 * The nonce file is the layer's: hidden from readdir without a word, one
 * per directory, never reachable by a plaintext name (a file called
 * "sc.nonce" from above is an ordinary encrypted name).  Where the volume
 * keeps the xattr, such an entry made behind the mount is junk.
 */
Test(names, nonce_file_hidden)
{
	struct sc_obj d;
	struct listing l;
	struct backing b;
	struct env e;
	char buf[64];

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "d", 0755, &d), 0);
	cr_assert_eq(do_create(&e, &d, SC_DIRNONCE_FILE), 0);
	read_file(&e, &d, SC_DIRNONCE_FILE, buf);
	cr_assert_str_eq(buf, "data:" SC_DIRNONCE_FILE);
	scan_backing(d.fd, &b);
	cr_assert_eq(b.shorts, 1);
	cr_assert_eq(b.nonces, g_portable);
	cr_assert(rec_there(&e, d.fd));
	if (!g_portable) {
		int fd = openat(d.fd, SC_DIRNONCE_FILE, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		cr_assert_geq(fd, 0);
		close(fd);
	}
	cr_assert_eq(list_from(&e, &d, -1, 0, &l), 0);
	cr_assert_eq(l.n, 3, "%zu entries listed", l.n);
	cr_assert_eq(listed(&l, SC_DIRNONCE_FILE), 1);
	list_free(&l);
	cr_assert_eq(list_from(&e, &e.root, -1, 0, &l), 0);
	cr_assert_eq(l.n, 3, "%zu entries listed in the root", l.n);
	list_free(&l);
	cr_assert_eq(log_lines("not names of this volume"), !g_portable, "log: %s", g_log);
	cr_assert_eq(sc_xl_unlink(e.top, &d, SC_DIRNONCE_FILE), 0);
	cr_assert(rec_there(&e, d.fd), "unlink from above reached the record");
	obj_put(&e, &d);
	env_down(&e);
}

/*
 * mkdir with a fault at each call it makes below, in turn: each fails
 * cleanly (no visible directory, no sc.new.*, no fd), and after every call
 * below a crash would leave no visible directory without its record.  The
 * mode without owner write and search takes the longest path.
 */
Test(names, mkdir_crash_order)
{
	struct sc_obj d;
	struct stat st;
	struct env e;
	int k, fd, ret;

	env_up(&e, SC_CIPHER_AES_XTS);
	hook_install(&e);
	for (k = 1; k < 30; k++) {
		char name[16];

		snprintf(name, sizeof(name), "d%d", k);
		hook_arm(k, e.root.fd, false);
		ret = sc_xl_mkdir(e.top, &e.root, name, S_IFDIR | 0500, &fd, &st);
		hook_arm(0, -1, false);
		if (ret == 0) {
			obj_make(&e, &d, fd, &st);
			break;
		}
		cr_assert_eq(ret, -EIO, "fault at call %d: mkdir returned %d", k, ret);
		cr_assert_eq(sc_xl_lookup(e.top, &e.root, name, &fd, &st), -ENOENT);
		check_sides(e.root.fd, 0, "failed mkdir");
	}
	/* mkdir (owner write, search added), record (xattr; or create, write, fsync),
	 * chmod back, rename */
	cr_assert_eq(k - 1, g_portable ? 6 : 4, "mkdir made %d calls below", k - 1);
	cr_assert(rec_there(&e, d.fd));
	cr_assert_eq(fstat(d.fd, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0500);
	cr_assert_eq(do_create(&e, &d, "in"), 0);
	obj_put(&e, &d);
	env_down(&e);
}

/*
 * rmdir: an empty directory goes with its nonce file; one holding a name,
 * or anything put there behind the mount, gives ENOTEMPTY and keeps its
 * record; empty directories of modes without owner access go too (as
 * their owner); a fault at each call below leaves the directory with the
 * same record, and a crash at any point no visible directory that holds
 * something without its record.  rename over an empty directory likewise.
 */
Test(names, rmdir_nonce_file)
{
	static const mode_t modes[] = { 0, 0500, 0300 };
	uint8_t rec[64], rec2[64];
	struct sc_obj d;
	struct backing b;
	struct stat st;
	struct env e;
	char buf[64];
	int k, ret, fd;

	if (geteuid() != 0)
		cr_skip_test("needs root to act as another user");
	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "empty", 0755, &d), 0);
	obj_put(&e, &d);
	cr_assert_eq(sc_xl_rmdir(e.top, &e.root, "empty"), 0);
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, "empty", &fd, &st), -ENOENT);
	scan_backing(e.root.fd, &b);
	cr_assert_eq(b.shorts + b.others, 0, "the directory is still below");

	cr_assert_eq(do_mkdir(&e, &e.root, "full", 0755, &d), 0);
	cr_assert_eq(do_create(&e, &d, "f"), 0);
	cr_assert_eq(rec_get(&e, &d, rec), SC_DIRNONCE_REC2_LEN);
	cr_assert_eq(sc_xl_rmdir(e.top, &e.root, "full"), -ENOTEMPTY);
	cr_assert_eq(rec_get(&e, &d, rec2), SC_DIRNONCE_REC2_LEN);
	cr_assert(memcmp(rec, rec2, SC_DIRNONCE_REC2_LEN) == 0, "the record changed");
	read_file(&e, &d, "f", buf);
	obj_put(&e, &d);

	cr_assert_eq(do_mkdir(&e, &e.root, "junk", 0755, &d), 0);
	fd = openat(d.fd, "plain.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(sc_xl_rmdir(e.top, &e.root, "junk"), -ENOTEMPTY);
	cr_assert(rec_there(&e, d.fd));
	obj_put(&e, &d);

	cr_assert_eq(chmod(e.dir, 0777), 0);
	as_user(65534);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		cr_assert_eq(do_mkdir(&e, &e.root, "m", modes[i], &d), 0, "mode %o", modes[i]);
		obj_put(&e, &d);
		cr_assert_eq(sc_xl_rmdir(e.top, &e.root, "m"), 0, "rmdir of mode %o", modes[i]);
	}
	as_user(0);
	check_sides(e.root.fd, 0, "rmdir of every mode");

	hook_install(&e);
	cr_assert_eq(do_mkdir(&e, &e.root, "r", 0755, &d), 0);
	cr_assert_eq(rec_get(&e, &d, rec), SC_DIRNONCE_REC2_LEN);
	obj_put(&e, &d);
	for (k = 1; k < 30; k++) {
		hook_arm(k, e.root.fd, g_portable);
		ret = sc_xl_rmdir(e.top, &e.root, "r");
		hook_arm(0, -1, false);
		if (ret == 0)
			break;
		cr_assert_eq(ret, -EIO, "fault at call %d: rmdir returned %d", k, ret);
		cr_assert_eq(do_lookup(&e, &e.root, "r", &d, &st), 0);
		cr_assert_eq(rec_get(&e, &d, rec2), SC_DIRNONCE_REC2_LEN, "fault at call %d", k);
		cr_assert(memcmp(rec, rec2, SC_DIRNONCE_REC2_LEN) == 0, "the record changed");
		obj_put(&e, &d);
	}
	/* (unlink of the nonce file,) rmdir */
	cr_assert_eq(k - 1, g_portable ? 2 : 1, "rmdir made %d calls below", k - 1);

	/* rename over an empty directory, and onto a non-empty one */
	cr_assert_eq(do_mkdir(&e, &e.root, "src", 0755, &d), 0);
	cr_assert_eq(do_create(&e, &d, "kept"), 0);
	obj_put(&e, &d);
	cr_assert_eq(do_mkdir(&e, &e.root, "dst", 0755, &d), 0);
	cr_assert_eq(do_create(&e, &d, "f"), 0);
	obj_put(&e, &d);
	cr_assert_eq(sc_xl_rename(e.top, &e.root, "src", &e.root, "dst", 0), -ENOTEMPTY);
	cr_assert_eq(do_lookup(&e, &e.root, "dst", &d, &st), 0);
	read_file(&e, &d, "f", buf);
	cr_assert_eq(sc_xl_unlink(e.top, &d, "f"), 0);
	obj_put(&e, &d);
	hook_arm(0, e.root.fd, g_portable);
	cr_assert_eq(sc_xl_rename(e.top, &e.root, "src", &e.root, "dst", 0), 0);
	hook_arm(0, -1, false);
	cr_assert_eq(do_lookup(&e, &e.root, "dst", &d, &st), 0);
	read_file(&e, &d, "kept", buf);
	cr_assert_str_eq(buf, "data:kept");
	cr_assert(rec_there(&e, d.fd));
	/* onto itself: nothing happens, the record stays */
	cr_assert_eq(sc_xl_unlink(e.top, &d, "kept"), 0);
	cr_assert_eq(sc_xl_rename(e.top, &e.root, "dst", &e.root, "dst", 0), 0);
	cr_assert(rec_there(&e, d.fd), "rename onto itself removed the record");
	obj_put(&e, &d);
	check_sides(e.root.fd, 0, "renames");
	env_down(&e);
}

/*
 * A directory whose record was removed or damaged behind the mount, as a
 * crash inside rmdir leaves it: holding names, EIO (logged once); empty,
 * the file form gives it a new record and it works (the xattr form: EIO).
 */
Test(names, nonce_removed_behind_the_mount)
{
	struct sc_obj d;
	struct listing l;
	struct stat st;
	struct env e;
	char buf[64];
	int fd;

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "n", 0755, &d), 0);
	cr_assert_eq(do_create(&e, &d, "f"), 0);
	rec_drop(&e, &d);
	obj_put(&e, &d);
	cr_assert_eq(do_mkdir(&e, &e.root, "e", 0755, &d), 0);
	rec_drop(&e, &d);
	obj_put(&e, &d);
	cr_assert_eq(do_mkdir(&e, &e.root, "g", 0755, &d), 0);
	if (g_portable) {
		/* garbage: no header, so the crypt layer cannot read it */
		cr_assert_eq(unlinkat(d.fd, SC_DIRNONCE_FILE, 0), 0);
		copy_drop(&d);
		fd = openat(d.fd, SC_DIRNONCE_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
		cr_assert_geq(fd, 0);
		cr_assert_eq(write(fd, "garbage", 7), 7);
		close(fd);
	} else {
		rec_drop(&e, &d);
	}
	obj_put(&e, &d);

	cr_assert_eq(do_lookup(&e, &e.root, "n", &d, &st), 0);
	for (int again = 0; again < 2; again++) {
		cr_assert_eq(sc_xl_lookup(e.top, &d, "f", &fd, &st), -EIO);
		cr_assert_eq(list_from(&e, &d, -1, 0, &l), -EIO);
		list_free(&l);
	}
	cr_assert_eq(log_lines("names in it return EIO"), 1, "log: %s", g_log);
	cr_assert(!rec_there(&e, d.fd), "a directory holding names got a new record");
	obj_put(&e, &d);

	for (int i = 0; i < 2; i++) {
		cr_assert_eq(do_lookup(&e, &e.root, i ? "g" : "e", &d, &st), 0);
		cr_assert_eq(sc_xl_lookup(e.top, &d, "x", &fd, &st), g_portable ? -ENOENT : -EIO);
		if (g_portable) {
			cr_assert_eq(do_create(&e, &d, "new"), 0);
			cr_assert(rec_there(&e, d.fd));
		}
		obj_put(&e, &d);
	}
	cr_assert_eq(log_lines("it has a new one"), g_portable ? 2 : 0, "log: %s", g_log);
	cr_assert_eq(log_lines("names in it return EIO"), g_portable ? 1 : 3, "log: %s", g_log);
	if (g_portable) {
		/* the new records are stored: the names read back after a new mount */
		env_stop(&e);
		cr_assert_eq(env_try(&e), 0);
		for (int i = 0; i < 2; i++) {
			cr_assert_eq(do_lookup(&e, &e.root, i ? "g" : "e", &d, &st), 0);
			read_file(&e, &d, "new", buf);
			cr_assert_str_eq(buf, "data:new");
			obj_put(&e, &d);
		}
	}
	env_down(&e);
}

/*
 * Finding 2 of #28: directory A's nonce record copied onto an empty
 * directory C (the xattr, or the nonce file), and A's one backing entry
 * moved into C.  The record names A's place, so C's lookup finds it is
 * not C's: names in C return EIO, with one line in the log.  Before
 * records were bound, the entry read in C as if made there.
 */
Test(names, nonce_record_copied_to_another_directory)
{
	uint8_t rec[64];
	char ent[64];
	struct sc_obj a, c;
	struct stat st;
	struct env e;
	ssize_t n;
	int fd;

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "A", 0755, &a), 0);
	cr_assert_eq(do_create(&e, &a, "f"), 0);
	cr_assert_eq(do_mkdir(&e, &e.root, "C", 0755, &c), 0);
	n = rec_get(&e, &a, rec);
	cr_assert_gt(n, 0);
	rec_put(&e, &c, rec, (size_t)n);
	only_short(a.fd, ent);
	cr_assert_eq(renameat(a.fd, ent, c.fd, ent), 0);
	obj_put(&e, &a);
	obj_put(&e, &c);
	g_log_len = 0;
	g_log[0] = '\0';
	cr_assert_eq(do_lookup(&e, &e.root, "C", &c, &st), 0);
	cr_assert_eq(sc_xl_lookup(e.top, &c, "f", &fd, &st), -EIO,
		     "the entry moved from A reads in C");
	cr_assert_eq(log_lines("has the name nonce record of another directory"), 1, "log: %s",
		     g_log);
	obj_put(&e, &c);
	/* A itself still reads: its record is its own (and now empty of names). */
	cr_assert_eq(do_lookup(&e, &e.root, "A", &a, &st), 0);
	cr_assert_eq(sc_xl_lookup(e.top, &a, "f", &fd, &st), -ENOENT);
	obj_put(&e, &a);
	env_down(&e);
}

/*
 * Records of volumes made before they were bound (version 1, 17 bytes):
 * read as before where the volume is not bound, rewritten bound by a
 * rename; refused (EIO, logged) on a volume that is (SC_FEAT_NAMES_BOUND),
 * where nothing makes them.
 */
Test(names, unbound_records_of_old_volumes)
{
	uint8_t rec[64], old[SC_DIRNONCE_REC_LEN];
	struct sc_obj d;
	struct stat st;
	struct env e;
	char buf[64];
	int fd;

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "d", 0755, &d), 0);
	cr_assert_eq(do_create(&e, &d, "f"), 0);
	cr_assert_eq(rec_get(&e, &d, rec), SC_DIRNONCE_REC2_LEN);
	old[0] = 1;	/* what an older build wrote: version 1 and the same nonce */
	memcpy(old + 1, rec + 1, SC_DIRNONCE_LEN);
	rec_put(&e, &d, old, sizeof(old));
	obj_put(&e, &d);
	for (int round = 0; round < 2; round++) {
		cr_assert_eq(do_lookup(&e, &e.root, round ? "e" : "d", &d, &st), 0);
		read_file(&e, &d, "f", buf);
		cr_assert_str_eq(buf, "data:f");
		cr_assert_eq(rec_get(&e, &d, rec), round ? SC_DIRNONCE_REC2_LEN : SC_DIRNONCE_REC_LEN);
		obj_put(&e, &d);
		if (!round)
			cr_assert_eq(sc_xl_rename(e.top, &e.root, "d", &e.root, "e", 0), 0);
	}
	cr_assert_eq(log_lines("stackcrypt: "), 0, "log: %s", g_log);
	/* On a bound volume a version 1 record is not one of ours. */
	cr_assert_eq(do_lookup(&e, &e.root, "e", &d, &st), 0);
	rec_put(&e, &d, old, sizeof(old));
	obj_put(&e, &d);
	env_stop(&e);
	e.bound = true;
	cr_assert_eq(env_try(&e), 0);
	cr_assert_eq(do_lookup(&e, &e.root, "e", &d, &st), 0);
	cr_assert_eq(sc_xl_lookup(e.top, &d, "f", &fd, &st), -EIO);
	cr_assert_eq(log_lines("has an unbound (version 1) name nonce record"), 1, "log: %s",
		     g_log);
	obj_put(&e, &d);
	env_down(&e);
}

/*
 * A directory renamed keeps its names: its record is rewritten for its
 * new place, and a fresh inode of it (as after the kernel forgot it)
 * reads them there.  The record a rename leaves is one place's (33
 * bytes), opening at the new place only: put back where it was, the
 * directory's names return EIO.
 */
Test(names, renamed_directory_rebound)
{
	uint8_t rec[64];
	struct sc_obj d, p, q;
	struct stat st;
	struct env e;
	char buf[64];
	ssize_t n;
	int fd;

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_mkdir(&e, &e.root, "p", 0755, &p), 0);
	cr_assert_eq(do_mkdir(&e, &e.root, "q", 0755, &q), 0);
	cr_assert_eq(do_mkdir(&e, &p, "d", 0755, &d), 0);
	cr_assert_eq(do_create(&e, &d, "f"), 0);
	n = rec_get(&e, &d, rec);
	cr_assert_eq(n, SC_DIRNONCE_REC2_LEN);
	obj_put(&e, &d);
	cr_assert_eq(sc_xl_rename(e.top, &p, "d", &q, "renamed", 0), 0);
	cr_assert_eq(do_lookup(&e, &q, "renamed", &d, &st), 0);
	read_file(&e, &d, "f", buf);
	cr_assert_str_eq(buf, "data:f");
	/* the old record (p/d's) put back: it does not open at q/renamed */
	rec_put(&e, &d, rec, (size_t)n);
	obj_put(&e, &d);
	cr_assert_eq(do_lookup(&e, &q, "renamed", &d, &st), 0);
	cr_assert_eq(sc_xl_lookup(e.top, &d, "f", &fd, &st), -EIO);
	cr_assert_eq(log_lines("has the name nonce record of another directory"), 1, "log: %s",
		     g_log);
	obj_put(&e, &d);
	obj_put(&e, &p);
	obj_put(&e, &q);
	env_down(&e);
}

/*
 * Finding 7 of #28: a root whose record is gone while it holds names is
 * not given a new one (every name in it would be lost): the mount fails
 * with one line naming the record.  A root that holds no names gets one.
 */
Test(names, root_record_missing)
{
	struct env e;

	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(do_create(&e, &e.root, "f"), 0);
	rec_drop(&e, &e.root);
	env_stop(&e);
	g_log_len = 0;
	g_log[0] = '\0';
	cr_assert_eq(env_try(&e), -EIO);
	cr_assert_eq(log_lines("the backing root holds names but not its name nonce record ("), 1,
		     "log: %s", g_log);
	cr_assert_not_null(strstr(g_log, e.portable ? "(" SC_DIRNONCE_FILE ")" :
					 "(" SC_DIRNONCE_XATTR ")"), "log: %s", g_log);
	cr_assert(!rec_there(&e, e.root.fd), "a new root record was made");
	env_stop(&e);
	/* Emptied, the root gets a new record. */
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "find %s -mindepth 1 -delete", e.dir);
		cr_assert_eq(system(cmd), 0);
	}
	cr_assert_eq(env_try(&e), 0);
	cr_assert(rec_there(&e, e.root.fd));
	env_down(&e);
}

/*
 * The root's nonce file: made at init when missing, kept across mounts;
 * a damaged one is replaced at init when the root holds no names, and
 * fails the mount (EIO, one line) when it does.
 */
Test(names, root_nonce_file)
{
	uint8_t rec[64], rec2[64];
	struct env e;
	int fd;

	if (!g_portable)
		cr_skip_test("the file form (names-xl-portable)");
	env_up(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(rec_get(&e, &e.root, rec), SC_DIRNONCE_REC2_LEN);
	for (int damaged = 0; damaged < 2; damaged++) {
		env_stop(&e);
		{
			char path[128];

			snprintf(path, sizeof(path), "%s/%s", e.dir, SC_DIRNONCE_FILE);
			cr_assert_eq(unlink(path), 0);
			cr_assert(removexattr(e.dir, SC_DIRNONCE_XATTR) == 0 || errno == ENODATA);
			if (damaged) {
				fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
				cr_assert_geq(fd, 0);
				close(fd);
			}
		}
		cr_assert_eq(env_try(&e), 0);
		cr_assert_eq(rec_get(&e, &e.root, rec2), SC_DIRNONCE_REC2_LEN);
		cr_assert(memcmp(rec, rec2, SC_DIRNONCE_REC2_LEN) != 0, "the same record again");
		memcpy(rec, rec2, sizeof(rec));
	}
	cr_assert_eq(do_create(&e, &e.root, "name"), 0);
	env_stop(&e);
	cr_assert_eq(env_try(&e), 0);
	cr_assert_eq(rec_get(&e, &e.root, rec2), SC_DIRNONCE_REC2_LEN);
	cr_assert(memcmp(rec, rec2, SC_DIRNONCE_REC2_LEN) == 0, "the root's record changed");
	rec_put(&e, &e.root, "\3bad version record, 33 bytes long", SC_DIRNONCE_REC2_LEN);
	env_stop(&e);
	g_log_len = 0;
	g_log[0] = '\0';
	cr_assert_eq(env_try(&e), -EIO);
	cr_assert_eq(log_lines("names in it return EIO"), 1, "log: %s", g_log);
	env_stop(&e);
	sc_mkey_free(e.mkey);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", e.dir);
		cr_assert_eq(system(cmd), 0);
	}
}

/*
 * Runs "stackcrypt fsck [--repair] --passfile=pw dir" in this process: its
 * exit status, its standard output into out (len bytes, NUL-terminated).
 */
static int run_fsck(const char *dir, const char *pw, bool repair, char *out, size_t len)
{
	char pwopt[128], path[] = "/tmp/sc-test-fsck.XXXXXX";
	char *argv[5];
	int argc = 0, saved, fd, ret;
	ssize_t n;

	snprintf(pwopt, sizeof(pwopt), "--passfile=%s", pw);
	argv[argc++] = (char *)"fsck";
	if (repair)
		argv[argc++] = (char *)"--repair";
	argv[argc++] = pwopt;
	argv[argc++] = (char *)dir;
	argv[argc] = NULL;
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	fflush(stdout);
	saved = dup(1);
	cr_assert_eq(dup2(fd, 1), 1);
	ret = sc_cmd_fsck(argc, argv);
	fflush(stdout);
	cr_assert_eq(dup2(saved, 1), 1);
	close(saved);
	n = pread(fd, out, len - 1, 0);
	cr_assert_geq(n, 0);
	out[n] = '\0';
	close(fd);
	unlink(path);
	return ret;
}

/* The lines of fsck's output out that report a problem of names (fsck_names.c's). */
static int name_problems(const char *out)
{
	static const char *const phrases[] = {
		"no valid name nonce", "side file", "does not decrypt", "not a stackcrypt name",
		"interrupted mkdir",
	};
	char *copy = strdup(out), *save = NULL;
	int n = 0;

	cr_assert_not_null(copy);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (size_t i = 0; i < sizeof(phrases) / sizeof(phrases[0]); i++)
			if (strstr(line, phrases[i])) {
				n++;
				break;
			}
	free(copy);
	return n;
}

/*
 * fsck of dir: exit status status, its output holding want (NULL: any)
 * and names lines about names.  On an aes-gcm volume the status is not
 * checked: the file checks of aes-gcm data are the volume engineer's
 * (h-gvol), not on this branch, and call every file headerless.
 */
static void fsck_expect(const char *dir, const char *pw, bool repair, int status,
			const char *want, int names, char *out, size_t len)
{
	int ret = run_fsck(dir, pw, repair, out, len);

	if (!g_gcm)
		cr_assert_eq(ret, status, "fsck exit %d: %s", ret, out);
	if (want)
		cr_assert_not_null(strstr(out, want), "no \"%s\" in: %s", want, out);
	cr_assert_eq(name_problems(out), names, "%d problems of names, not %d: %s",
		     name_problems(out), names, out);
}

/* The one directory with an encrypted name in the backing directory dirfd: its name into out. */
static void only_dir(int dirfd, char *out)
{
	DIR *dp = dir_open(dirfd);
	struct dirent *d;
	int n = 0;

	while ((d = readdir(dp)))
		if (sc_name_kind(d->d_name, strlen(d->d_name)) == SC_NAME_KIND_SHORT &&
		    d->d_type == DT_DIR) {
			strcpy(out, d->d_name);
			n++;
		}
	closedir(dp);
	cr_assert_eq(n, 1, "%d directories", n);
}

/*
 * fsck of a volume whose nonce records are files (an aes-xts volume made
 * by `init --encrypt-names` whose root's xattr record was dropped, mounted
 * in process with nonce files): clean as made; an empty directory without
 * its nonce file is no problem (the mount gives it one); one holding names
 * without it, or with one that does not decrypt, is reported; --repair
 * quarantines a nonce file without its header as any such file, and the
 * directory stays reported.
 */
Test(names, fsck_nonce_files, .timeout = 60)
{
	char pw[96], err[256], out[8192], A[256], a[256], bdir[256], want[512], path[640];
	char *init_argv[] = { (char *)"init", NULL, (char *)"--scrypt-n=1024",
			      (char *)"--encrypt-names", NULL, NULL, NULL, NULL };
	char mk[96], mkopt[128], pwopt[128];
	struct sc_volume *vol;
	struct sc_obj d, sub;
	struct env e;
	int fd, adir;
	FILE *f;

	env_prepare(&e, SC_CIPHER_AES_XTS);
	sc_mkey_free(e.mkey);
	snprintf(pw, sizeof(pw), "%s.pw", e.dir);
	f = fopen(pw, "w");
	cr_assert_not_null(f);
	fputs("a password\n", f);
	fclose(f);
	cr_assert_eq(chmod(pw, 0600), 0);
	snprintf(mk, sizeof(mk), "%s.mk", e.dir);
	snprintf(mkopt, sizeof(mkopt), "--save-masterkey=%s", mk);
	snprintf(pwopt, sizeof(pwopt), "--passfile=%s", pw);
	init_argv[1] = pwopt;
	init_argv[4] = mkopt;
	init_argv[5] = g_gcm ? (char *)"--cipher=aes-gcm" : (char *)"--cipher=aes-xts";
	init_argv[6] = e.dir;
	cr_assert_eq(sc_cmd_init(7, init_argv), 0);
	removexattr(e.dir, SC_DIRNONCE_XATTR);	/* aes-gcm: init need not make it */
	cr_assert_eq(sc_vol_open(e.dir, &(struct sc_secret_src){ SC_SECRET_PASSFILE, pw }, &vol,
				 err, sizeof(err)), 0, "%s", err);
	e.mkey = vol->mkey;
	vol->mkey = NULL;
	sc_vol_close(vol);
	e.portable = true;
	cr_assert_eq(env_try(&e), 0);
	make_name(A, 200, 'f');
	cr_assert_eq(do_mkdir(&e, &e.root, "a", 0755, &d), 0);
	cr_assert_eq(do_create(&e, &d, "f"), 0);
	cr_assert_eq(do_create(&e, &d, A), 0);
	cr_assert_eq(do_mkdir(&e, &d, "b", 0755, &sub), 0);
	obj_put(&e, &sub);
	obj_put(&e, &d);
	env_stop(&e);

	fsck_expect(e.dir, pw, false, SC_EXIT_OK, g_gcm ? NULL : "; 0 problems", 0, out, sizeof(out));
	adir = openat(AT_FDCWD, e.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(adir, 0);
	only_dir(adir, a);
	fd = openat(adir, a, O_PATH | O_DIRECTORY | O_CLOEXEC);
	close(adir);
	adir = fd;
	cr_assert_geq(adir, 0);
	only_dir(adir, bdir);
	snprintf(path, sizeof(path), "%s/%s", bdir, SC_DIRNONCE_FILE);
	cr_assert_eq(unlinkat(adir, path, 0), 0);
	fsck_expect(e.dir, pw, false, SC_EXIT_OK, g_gcm ? NULL : "; 0 problems", 0, out, sizeof(out));
	/* with a damaged one: the file checks name the file, not the directory */
	fd = openat(adir, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "garbage", 7), 7);
	close(fd);
	fsck_expect(e.dir, pw, false, SC_EXIT_FAIL, g_gcm ? NULL : "/" SC_DIRNONCE_FILE ": no header",
		    0, out, sizeof(out));
	cr_assert_eq(unlinkat(adir, path, 0), 0);

	cr_assert_eq(unlinkat(adir, SC_DIRNONCE_FILE, 0), 0);
	/* the copy of the record in the xattr answers for a lost file (format.md 9.2) */
	snprintf(want, sizeof(want), "/%s: its nonce file " SC_DIRNONCE_FILE " is missing, empty "
		 "or damaged", a);
	fsck_expect(e.dir, pw, false, SC_EXIT_OK, want, 0, out, sizeof(out));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", adir);
	cr_assert_eq(removexattr(path, SC_DIRNONCE_XATTR), 0, "the mount kept no copy");
	snprintf(want, sizeof(want), "/%s: directory has no valid name nonce file " SC_DIRNONCE_FILE
		 " (missing): the mount can neither read nor make names in it", a);
	fsck_expect(e.dir, pw, false, SC_EXIT_FAIL, want, 1, out, sizeof(out));
	cr_assert(g_gcm || strstr(out, "; 1 problem"), "%s", out);

	fd = openat(adir, SC_DIRNONCE_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "garbage", 7), 7);
	close(fd);
	snprintf(want, sizeof(want), "/%s: directory has no valid name nonce file " SC_DIRNONCE_FILE
		 " (%s", a, g_gcm ? "its 7 stored bytes are no contents of 1 to 50 bytes" :
		 "cannot read its header");
	fsck_expect(e.dir, pw, false, SC_EXIT_FAIL, want, 1, out, sizeof(out));
	if (g_gcm) {
		/* --repair and recovery of aes-gcm volumes: h-gvol's */
		close(adir);
		cr_assert_eq(env_try(&e), 0);
		env_down(&e);
		unlink(pw);
		unlink(mk);
		return;
	}
	fsck_expect(e.dir, pw, true, SC_EXIT_FAIL, want, 1, out, sizeof(out));
	/* as any file without its header: quarantined by the file checks, its bytes kept */
	cr_assert_not_null(strstr(out, "quarantined: "), "%s", out);
	cr_assert_eq(faccessat(adir, SC_DIRNONCE_FILE ".stackcrypt-quarantine-1", F_OK, 0), 0);
	snprintf(want, sizeof(want), "/%s: directory has no valid name nonce file " SC_DIRNONCE_FILE
		 " (missing)", a);
	fsck_expect(e.dir, pw, false, SC_EXIT_FAIL, want, 1, out, sizeof(out));
	close(adir);

	/* Recovery without the config tells the names from the root's nonce file. */
	{
		char cfg[128], newpw[160];
		char *argv[] = { (char *)"passwd", mkopt, newpw, e.dir, NULL };

		snprintf(cfg, sizeof(cfg), "%s/%s", e.dir, SC_CONFIG_NAME);
		cr_assert_eq(unlink(cfg), 0);
		snprintf(mkopt, sizeof(mkopt), "--masterkey=%s", mk);
		snprintf(newpw, sizeof(newpw), "--new-passfile=%s", pw);
		cr_assert_eq(sc_cmd_passwd(4, argv), 0);
		cr_assert_eq(sc_vol_open(e.dir, &(struct sc_secret_src){ SC_SECRET_PASSFILE, pw },
					 &vol, err, sizeof(err)), 0, "%s", err);
		cr_assert(vol->cfg.features & SC_FEAT_NAMES, "recovered without names");
		sc_vol_close(vol);
	}
	cr_assert_eq(env_try(&e), 0);
	env_down(&e);
	unlink(pw);
	unlink(mk);
}

/*
 * A volume made before bound targets (no SC_FEAT_LINKS_BOUND) keeps its
 * format: a new link's stored target is the unbound one (sc_link_decrypt
 * opens it as it is in the backing), 3025 bytes stay ENAMETOOLONG, and
 * its links read after a restart.  A layer with the bit over such a link
 * reads EIO (the formats never pass for each other), and one without it
 * over a bound link likewise.
 */
Test(names, old_volume_links_keep_their_format)
{
	static char big[SC_LINK_PLAIN_MAX + 2];
	char enc[SC_LINK_ENC_MAX + 2], plain[SC_LINK_PLAIN_MAX + 1], buf[64];
	struct sc_nkey *nk;
	struct sc_obj l;
	struct stat st;
	struct env e;
	ssize_t n;
	int fd;

	env_prepare(&e, SC_CIPHER_AES_XTS);
	cr_assert_eq(env_try(&e), 0);
	cr_assert_eq(sc_xl_symlink(e.top, &e.root, "old", "old/format/target", &fd, &st), 0);
	close(fd);
	memset(big, 'z', SC_LINK_PLAIN_MAX + 1);
	cr_assert_eq(sc_xl_symlink(e.top, &e.root, "toolong", big, &fd, &st), -ENAMETOOLONG);
	cr_assert_eq(do_lookup(&e, &e.root, "old", &l, &st), 0);
	n = readlinkat(l.fd, "", enc, sizeof(enc) - 1);
	cr_assert_gt(n, 0);
	cr_assert_eq(sc_nkey_new(e.mkey, &nk), 0);
	cr_assert_eq(sc_link_decrypt(nk, enc, (size_t)n, plain), 17, "the unbound format");
	cr_assert_str_eq(plain, "old/format/target");
	obj_put(&e, &l);
	env_stop(&e);

	cr_assert_eq(env_try(&e), 0);	/* restarted, still without the bit */
	cr_assert_eq(do_lookup(&e, &e.root, "old", &l, &st), 0);
	cr_assert_eq(st.st_size, 17);
	n = sc_xl_readlink(e.top, &l, buf, sizeof(buf));
	cr_assert_eq(n, 17);
	cr_assert(memcmp(buf, "old/format/target", 17) == 0);
	obj_put(&e, &l);
	env_stop(&e);

	e.links = true;			/* the bit over an unbound target: EIO, logged */
	cr_assert_eq(env_try(&e), 0);
	cr_assert_eq(do_lookup(&e, &e.root, "old", &l, &st), 0);
	cr_assert_eq(sc_xl_readlink(e.top, &l, buf, sizeof(buf)), -EIO);
	cr_assert_eq(log_lines("does not decrypt"), 1, "log: %s", g_log);
	obj_put(&e, &l);
	cr_assert_eq(sc_xl_symlink(e.top, &e.root, "new", "new/format", &fd, &st), 0);
	close(fd);
	env_stop(&e);

	e.links = false;		/* and a bound target without it: EIO too */
	cr_assert_eq(env_try(&e), 0);
	cr_assert_eq(do_lookup(&e, &e.root, "new", &l, &st), 0);
	cr_assert_eq(sc_xl_readlink(e.top, &l, buf, sizeof(buf)), -EIO);
	obj_put(&e, &l);
	sc_nkey_free(nk);
	env_down(&e);
}

/*
 * Bound targets in process: a link renamed keeps reading through the
 * inode the kernel holds (its target is kept) and through a new lookup of
 * its new name (a new backing link, bound there); the old backing link is
 * gone, and no side file or temporary name is left.
 */
Test(names, bound_link_rename_rebinds)
{
	static char t[4096];
	char buf[4200];
	struct sc_obj l, m;
	struct stat st, bst;
	struct env e;
	int fd;

	memset(t, 'q', 4095);
	env_prepare(&e, SC_CIPHER_AES_XTS);
	e.links = true;
	cr_assert_eq(env_try(&e), 0);
	cr_assert_eq(sc_xl_symlink(e.top, &e.root, "a", t, &fd, &st), 0);
	close(fd);
	cr_assert_eq(st.st_size, 4095);
	cr_assert_eq(do_lookup(&e, &e.root, "a", &l, &st), 0);
	cr_assert_eq(fstatat(l.fd, "", &bst, AT_EMPTY_PATH), 0);
	cr_assert_eq(sc_xl_rename(e.top, &e.root, "a", &e.root, "b", 0), 0);
	cr_assert_eq(sc_xl_readlink(e.top, &l, buf, sizeof(buf)), 4095);
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, "a", &fd, &st), -ENOENT);
	cr_assert_eq(do_lookup(&e, &e.root, "b", &m, &st), 0);
	cr_assert_eq(st.st_size, 4095);
	cr_assert_neq(st.st_ino, bst.st_ino, "a new backing link, bound to b");
	cr_assert_eq(sc_xl_readlink(e.top, &m, buf, sizeof(buf)), 4095);
	cr_assert(memcmp(buf, t, 4095) == 0);
	obj_put(&e, &m);
	obj_put(&e, &l);
	cr_assert_eq(sc_xl_unlink(e.top, &e.root, "b"), 0);
	{
		DIR *d = fdopendir(openat(e.root.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		struct dirent *de;

		cr_assert_not_null(d);
		while ((de = readdir(d)))
			cr_assert(!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
				  !strcmp(de->d_name, SC_DIRNONCE_FILE) ||
				  !strcmp(de->d_name, SC_JRNL_NAME), "left below: %s", de->d_name);
		closedir(d);
	}
	cr_assert_eq(log_lines("stackcrypt: "), 0, "log: %s", g_log);
	env_down(&e);
}
