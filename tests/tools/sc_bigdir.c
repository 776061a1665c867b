// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sc_bigdir.c - the 100 000-entry directory, in the mount and on the
 * backing filesystem side by side (issue #16: "behave as on ext4").
 *
 *   sc_bigdir [-n N] [-b BACKING] MNTDIR REFDIR
 *
 * MNTDIR (in the mount) and REFDIR (a plain directory, on the same
 * filesystem as the backing directory) must not exist; both get a
 * directory "big" and "other" and the same operations, and every outcome
 * is compared, with the expected set kept here as the model:
 *
 *  1. N entries in big: regular files (made by open and by mknod), one in
 *     40 a directory, one in 40 a symlink (targets of mixed lengths);
 *     names of mixed lengths (1..160 bytes) and one in 333 longer than
 *     160 bytes (161..255: the long-name form of an encrypting mount).
 *  2. The full listing: every name exactly once with the right d_type,
 *     "." and ".." once, nothing else (both directories against the model).
 *  3. telldir/seekdir: the listing with telldir() before each entry; then
 *     at 300 positions spread over it, seekdir() and read on: the next 500
 *     entries (every sixtieth position: the whole tail) equal the
 *     listing's from that point.  Every other position is read in a
 *     stream opened anew (a listing restarted from a saved offset), the
 *     others in one stream that seeks on.
 *  4. lstat of every name: type, permissions, link count, size (files and
 *     symlinks: st_size of a symlink is its target's length) equal in both
 *     and as made; readlink of every symlink.
 *  5. rename: one entry in 50 within big to a new name (short names to
 *     long ones and long to short), one in 100 to other, one in 500 over
 *     an existing file (which goes); then both listings of big and other,
 *     and lstat of every renamed entry.
 *  6. Listings of big in the mount while a child process creates and
 *     removes entries in it (short and long names): every entry present
 *     throughout is seen exactly once, a churned one at most once, nothing
 *     else.  The child starts before the first listing (a pipe says it has
 *     made its first entry) and stops when told; no timing.
 *  7. unlink/rmdir of everything: both listings empty; with -b BACKING
 *     (the mount's backing directory) the backing directory of big is
 *     empty too (no side file or other leftover) but for the directory's
 *     nonce file sc.nonce on a volume that keeps it in a file (aes-gcm).
 *
 * Exit status: 0 pass, 1 a difference or a failed system call (what and
 * where on stderr), 2 bad command line.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include "sc_tool.h"

#define die(...)	sc_die("sc_bigdir: ", __VA_ARGS__)

enum { K_REG, K_DIR, K_LNK };

struct ent {
	char *name;		/* NULL once removed */
	int kind;
	size_t lsize;		/* symlink target length */
	bool moved;		/* renamed (checked again after the renames) */
};

struct dent {
	char *name;
	unsigned char type;
	long off;		/* telldir() before it */
};

static struct ent *ents;
static size_t nents;
static int fails;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
{
	va_list ap;

	if (++fails > 20)
		return;		/* the first ones say it */
	va_start(ap, fmt);
	fputs("sc_bigdir: FAIL: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The name of entry I: its number first (unique), then filler to length
 * LEN; bytes beyond ASCII too. */
static char *make_name(const char *prefix, size_t i, size_t len)
{
	char *s = malloc(len + 1);
	int n;
	size_t j;

	if (!s)
		die("out of memory");
	n = snprintf(s, len + 1, "%s%zu", prefix, i);
	if ((size_t)n >= len) {
		free(s);
		if (asprintf(&s, "%s%zu", prefix, i) < 0)
			die("out of memory");
		return s;
	}
	for (j = (size_t)n; j < len; j++) {
		unsigned v = (unsigned)(i * 7 + j * 13) % 70;

		s[j] = v < 26 ? 'a' + v : v < 52 ? 'A' + v - 26 : v < 62 ? '0' + v - 52 :
		       v < 66 ? "._- "[v - 62] : (char)(0x80 + v);
	}
	s[len] = '\0';
	return s;
}

static size_t name_len(size_t i)
{
	if (i % 333 == 7)
		return 161 + (i * 7919) % 95;		/* 161..255 */
	return 1 + (i * 31) % 160;			/* 1..160 */
}

static void xsnprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void xsnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		die("path too long");
}

static void make_entry(const char *dir, struct ent *e, size_t i)
{
	char path[4096], target[400];
	int fd;

	xsnprintf(path, sizeof(path), "%s/%s", dir, e->name);
	switch (e->kind) {
	case K_DIR:
		if (mkdir(path, 0750))
			die("mkdir %s: %s", path, strerror(errno));
		break;
	case K_LNK:
		memset(target, 'T', sizeof(target));
		xsnprintf(target, sizeof(target), "target-%zu/", i);
		target[strlen(target)] = 'x';
		target[e->lsize] = '\0';
		if (symlink(target, path))
			die("symlink %s: %s", path, strerror(errno));
		break;
	default:
		if (i % 2) {
			if (mknod(path, S_IFREG | 0640, 0))
				die("mknod %s: %s", path, strerror(errno));
		} else {
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0640);
			if (fd < 0)
				die("create %s: %s", path, strerror(errno));
			close(fd);
		}
	}
}

static int cmp_dent(const void *a, const void *b)
{
	return strcmp(((const struct dent *)a)->name, ((const struct dent *)b)->name);
}

/* Reads DIR whole: entries with the telldir() before each. */
static struct dent *list_dir(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dent *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	long off;

	if (!d)
		die("opendir %s: %s", dir, strerror(errno));
	*n = 0;
	for (;;) {
		off = telldir(d);
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				die("readdir %s: %s", dir, strerror(errno));
			break;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				die("out of memory");
		}
		v[*n].name = strdup(de->d_name);
		if (!v[*n].name)
			die("out of memory");
		v[*n].type = de->d_type;
		v[*n].off = off;
		(*n)++;
	}
	closedir(d);
	return v;
}

static void free_dents(struct dent *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static unsigned char dtype(int kind)
{
	return kind == K_DIR ? DT_DIR : kind == K_LNK ? DT_LNK : DT_REG;
}

/*
 * The model's entries of directory WHICH (0 big, 1 other) as sorted dents.
 * ents[] holds both: other's entries have kind | 0x100.
 */
#define IN_OTHER 0x100
static struct dent *model(int which, size_t *n)
{
	struct dent *v = malloc((nents + 2) * sizeof(*v));
	size_t i;

	if (!v)
		die("out of memory");
	*n = 0;
	v[(*n)++] = (struct dent){ strdup("."), DT_DIR, 0 };
	v[(*n)++] = (struct dent){ strdup(".."), DT_DIR, 0 };
	for (i = 0; i < nents; i++) {
		if (!ents[i].name || !!(ents[i].kind & IN_OTHER) != which)
			continue;
		v[*n].name = strdup(ents[i].name);
		v[*n].type = dtype(ents[i].kind & 0xff);
		v[*n].off = 0;
		(*n)++;
	}
	qsort(v, *n, sizeof(*v), cmp_dent);
	return v;
}

/*
 * Compares listing GOT (any order) with the sorted WANT: each wanted name
 * once with its type, nothing else.
 */
static void compare_listing(const char *what, struct dent *got, size_t ngot,
			    const struct dent *want, size_t nwant)
{
	size_t i = 0, j = 0;

	qsort(got, ngot, sizeof(*got), cmp_dent);
	while (i < ngot || j < nwant) {
		int c = i == ngot ? 1 : j == nwant ? -1 : strcmp(got[i].name, want[j].name);

		if (c < 0) {
			if (i > 0 && !strcmp(got[i].name, got[i - 1].name))
				problem("%s: '%s' listed twice", what, got[i].name);
			else
				problem("%s: '%s' listed, not expected", what, got[i].name);
			i++;
		} else if (c > 0) {
			problem("%s: '%s' missing from the listing", what, want[j].name);
			j++;
		} else {
			if (got[i].type != want[j].type)
				problem("%s: '%s' has d_type %d, want %d", what, got[i].name,
					got[i].type, want[j].type);
			i++;
			j++;
		}
	}
}

static void check_listing(const char *what, const char *dir, int which)
{
	size_t ngot, nwant;
	struct dent *got = list_dir(dir, &ngot), *want = model(which, &nwant);
	int before = fails;

	compare_listing(what, got, ngot, want, nwant);
	if (fails == before)
		printf("sc_bigdir: %s: %zu entries listed, as expected\n", what, ngot);
	free_dents(got, ngot);
	free_dents(want, nwant);
}

/* opendir(dir), or die. */
static DIR *xopendir(const char *dir)
{
	DIR *d = opendir(dir);

	if (!d)
		die("opendir %s: %s", dir, strerror(errno));
	return d;
}

/*
 * seekdir to 300 positions of DIR's listing; the tail read from there must
 * equal the listing's (500 entries, or all of it at every sixtieth).  Odd
 * positions in a stream opened for that seek alone.
 */
static void check_seek(const char *what, const char *dir)
{
	size_t n, k, p, want, j;
	struct dent *v = list_dir(dir, &n);
	DIR *d = xopendir(dir), *s;
	struct dirent *de;
	int before = fails;

	for (p = 0; p < 300; p++) {
		k = (p * n) / 300 + (p * 37) % (n / 300 ? n / 300 : 1);
		if (k >= n)
			k = n - 1;
		want = p % 60 == 0 ? n - k : (n - k < 500 ? n - k : 500);
		s = p % 2 ? xopendir(dir) : d;
		seekdir(s, v[k].off);
		for (j = 0; j < want; j++) {
			errno = 0;
			de = readdir(s);
			if (!de) {
				problem("%s: seekdir to entry %zu: the listing ends after %zu entries, "
					"want %zu (%s)", what, k, j, want, errno ? strerror(errno) : "EOF");
				break;
			}
			if (strcmp(de->d_name, v[k + j].name)) {
				problem("%s: seekdir to entry %zu: entry %zu after it is '%s', the "
					"listing has '%s'", what, k, j, de->d_name, v[k + j].name);
				break;
			}
		}
		if (j == n - k && readdir(s))
			problem("%s: seekdir to entry %zu: more entries after the listing's end",
				what, k);
		if (s != d)
			closedir(s);
	}
	closedir(d);
	if (fails == before)
		printf("sc_bigdir: %s: seekdir at 300 positions of %zu (150 in a new stream), "
		       "tails as listed\n", what, n);
	free_dents(v, n);
}

static void check_stat(const char *mnt, const char *ref, bool moved_only)
{
	char pm[4096], pr[4096], lm[400], lr[400];
	struct stat sm, sr;
	size_t i;
	ssize_t a, b;
	int before = fails;

	for (i = 0; i < nents; i++) {
		const struct ent *e = &ents[i];
		const char *sub = e->kind & IN_OTHER ? "other" : "big";
		int kind = e->kind & 0xff;

		if (!e->name || (moved_only && !e->moved))
			continue;
		xsnprintf(pm, sizeof(pm), "%s/%s/%s", mnt, sub, e->name);
		xsnprintf(pr, sizeof(pr), "%s/%s/%s", ref, sub, e->name);
		if (lstat(pm, &sm)) {
			problem("lstat %s: %s", pm, strerror(errno));
			continue;
		}
		if (lstat(pr, &sr))
			die("lstat %s: %s", pr, strerror(errno));
		if ((sm.st_mode & S_IFMT) != (sr.st_mode & S_IFMT) ||
		    (sm.st_mode & S_IFMT) != (kind == K_DIR ? S_IFDIR : kind == K_LNK ? S_IFLNK : S_IFREG))
			problem("%s: type %o, reference %o", pm, sm.st_mode & S_IFMT, sr.st_mode & S_IFMT);
		if (kind != K_LNK && (sm.st_mode & 07777) != (sr.st_mode & 07777))
			problem("%s: mode %o, reference %o", pm, sm.st_mode & 07777, sr.st_mode & 07777);
		if (sm.st_nlink != sr.st_nlink)
			problem("%s: %ju links, reference %ju", pm, (uintmax_t)sm.st_nlink,
				(uintmax_t)sr.st_nlink);
		if (kind != K_DIR && sm.st_size != sr.st_size)
			problem("%s: size %jd, reference %jd", pm, (intmax_t)sm.st_size,
				(intmax_t)sr.st_size);
		if (kind == K_LNK) {
			a = readlink(pm, lm, sizeof(lm));
			b = readlink(pr, lr, sizeof(lr));
			if (a != b || a < 0 || memcmp(lm, lr, (size_t)a) || (size_t)a != e->lsize)
				problem("readlink %s: %zd bytes, reference %zd", pm, a, b);
		}
	}
	if (fails == before)
		printf("sc_bigdir: lstat of every %sname: as in the reference\n",
		       moved_only ? "renamed " : "");
}

/* rename(2) in both trees; the outcome must be the same. */
static void rename_both(const char *mnt, const char *ref, const char *from, const char *to)
{
	char a[4096], b[4096];
	int rm, rr;

	xsnprintf(a, sizeof(a), "%s/%s", mnt, from);
	xsnprintf(b, sizeof(b), "%s/%s", mnt, to);
	rm = rename(a, b) ? errno : 0;
	xsnprintf(a, sizeof(a), "%s/%s", ref, from);
	xsnprintf(b, sizeof(b), "%s/%s", ref, to);
	rr = rename(a, b) ? errno : 0;
	if (rr)
		die("rename %s -> %s in the reference: %s", from, to, strerror(rr));
	if (rm)
		problem("rename %s -> %s in the mount: %s", from, to, strerror(rm));
}

static void renames(const char *mnt, const char *ref)
{
	char from[600], to[600];
	size_t i, n50 = 0, n100 = 0, nover = 0;
	char *nn;

	for (i = 0; i < nents; i++) {
		struct ent *e = &ents[i];

		if (!e->name)
			continue;
		if (i % 500 == 3 && i + 1 < nents && ents[i + 1].name &&
		    ents[i + 1].kind == K_REG && e->kind == K_REG) {
			/* over an existing file, which goes */
			xsnprintf(from, sizeof(from), "big/%s", e->name);
			xsnprintf(to, sizeof(to), "big/%s", ents[i + 1].name);
			rename_both(mnt, ref, from, to);
			free(e->name);
			e->name = NULL;
			ents[++i].moved = true;	/* i + 1 now holds i's file: same kind */
			nover++;
		} else if (i % 100 == 13) {
			xsnprintf(from, sizeof(from), "big/%s", e->name);
			xsnprintf(to, sizeof(to), "other/%s", e->name);
			rename_both(mnt, ref, from, to);
			e->kind |= IN_OTHER;
			e->moved = true;
			n100++;
		} else if (i % 50 == 9) {
			/* short names get long ones (200 bytes) and long names short ones */
			nn = make_name("R", i, strlen(e->name) > 160 ? 1 : 200);
			xsnprintf(from, sizeof(from), "big/%s", e->name);
			xsnprintf(to, sizeof(to), "big/%s", nn);
			rename_both(mnt, ref, from, to);
			free(e->name);
			e->name = nn;
			e->moved = true;
			n50++;
		}
	}
	printf("sc_bigdir: renamed %zu within big, %zu to other, %zu over an existing name\n",
	       n50, n100, nover);
}

/* The child of the churn test: creates and removes churn.K in DIR until
 * STOP is readable (closed), keeping 20 alive; says READY once. */
static void churn_child(const char *dir, int ready, int stop)
{
	char path[4096], *nm;
	size_t k, j;
	struct pollfd pfd = { .fd = stop, .events = POLLIN };
	int fd;

	for (k = 0;; k++) {
		nm = make_name("churn.", k, k % 10 == 0 ? 200 : 12);
		xsnprintf(path, sizeof(path), "%s/%s", dir, nm);
		free(nm);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0)
			die("churn: create %s: %s", path, strerror(errno));
		close(fd);
		if (k == 0 && write(ready, "r", 1) != 1)
			die("churn: write: %s", strerror(errno));
		if (k >= 20) {
			nm = make_name("churn.", k - 20, (k - 20) % 10 == 0 ? 200 : 12);
			xsnprintf(path, sizeof(path), "%s/%s", dir, nm);
			free(nm);
			if (unlink(path))
				die("churn: unlink %s: %s", path, strerror(errno));
		}
		if (poll(&pfd, 1, 0) > 0)
			break;
	}
	for (j = k >= 19 ? k - 19 : 0; j <= k; j++) {
		nm = make_name("churn.", j, j % 10 == 0 ? 200 : 12);
		xsnprintf(path, sizeof(path), "%s/%s", dir, nm);
		free(nm);
		if (unlink(path))
			die("churn: unlink %s: %s", path, strerror(errno));
	}
	printf("sc_bigdir: churn: %zu entries made and removed during the listings\n", k + 1);
	exit(0);
}

static void check_churn(const char *dir)
{
	int ready[2], stop[2], st, round, before = fails;
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(stop))
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(ready[0]);
		close(stop[1]);
		churn_child(dir, ready[1], stop[0]);
	}
	close(ready[1]);
	close(stop[0]);
	if (read(ready[0], &c, 1) != 1)
		die("the churn child failed before its first entry");
	for (round = 0; round < 3; round++) {
		size_t ngot, nwant, i, kept = 0;
		struct dent *got = list_dir(dir, &ngot), *want = model(0, &nwant);

		/* churn.* names may be there, once; the rest is the model exactly */
		qsort(got, ngot, sizeof(*got), cmp_dent);
		for (i = 0; i < ngot; i++) {
			if (strncmp(got[i].name, "churn.", 6)) {
				got[kept++] = got[i];
				continue;
			}
			if (i + 1 < ngot && !strcmp(got[i].name, got[i + 1].name))
				problem("listing during churn: '%s' listed twice", got[i].name);
			free(got[i].name);
		}
		compare_listing("listing during churn", got, kept, want, nwant);
		free_dents(got, kept);
		free_dents(want, nwant);
	}
	close(stop[1]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		problem("the churn child failed (status %d)", st);
	close(ready[0]);
	if (fails == before)
		printf("sc_bigdir: 3 listings during churn: every lasting entry once\n");
	check_listing("mount big after churn", dir, 0);
}

static void remove_all(const char *mnt, const char *ref)
{
	char p[4096];
	size_t i;
	int w;

	for (i = 0; i < nents; i++) {
		struct ent *e = &ents[i];
		const char *sub = e->kind & IN_OTHER ? "other" : "big";

		if (!e->name)
			continue;
		for (w = 0; w < 2; w++) {
			xsnprintf(p, sizeof(p), "%s/%s/%s", w ? ref : mnt, sub, e->name);
			if ((e->kind & 0xff) == K_DIR ? rmdir(p) : unlink(p)) {
				if (w)
					die("remove %s: %s", p, strerror(errno));
				problem("remove %s: %s", p, strerror(errno));
			}
		}
		free(e->name);
		e->name = NULL;
	}
}

/* The backing directory of MNTDIR/big, found by its inode among BACKING's
 * entries (the mount reports the backing inode numbers), must be empty. */
static void check_backing_empty(const char *backing, const char *mntdir)
{
	char p[4096];
	struct stat st, sb;
	DIR *d;
	struct dirent *de;
	size_t n, i, left, first = 0;
	struct dent *v;

	xsnprintf(p, sizeof(p), "%s/big", mntdir);
	if (stat(p, &st))
		die("stat %s: %s", p, strerror(errno));
	/* MNTDIR is a directory of the mount root: its backing is one level down */
	d = opendir(backing);
	if (!d)
		die("opendir %s: %s", backing, strerror(errno));
	while ((de = readdir(d))) {
		char q[4096], sub[4096];
		DIR *d2;
		struct dirent *de2;

		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		xsnprintf(q, sizeof(q), "%s/%s", backing, de->d_name);
		if (lstat(q, &sb) || !S_ISDIR(sb.st_mode))
			continue;
		d2 = opendir(q);
		if (!d2)
			continue;
		while ((de2 = readdir(d2))) {
			if (de2->d_ino != st.st_ino)
				continue;
			xsnprintf(sub, sizeof(sub), "%s/%s", q, de2->d_name);
			closedir(d2);
			closedir(d);
			v = list_dir(sub, &n);
			left = 0;
			for (i = 0; i < n; i++)
				if (strcmp(v[i].name, ".") && strcmp(v[i].name, "..") &&
				    strcmp(v[i].name, "sc.nonce") && !left++)
					first = i;
			if (left)
				problem("backing directory of big (%s) holds %zu entries after "
					"everything was removed, e.g. '%s'", sub, left, v[first].name);
			else
				printf("sc_bigdir: the backing directory of big is empty\n");
			free_dents(v, n);
			return;
		}
		closedir(d2);
	}
	closedir(d);
	problem("no backing directory with the inode of %s (%ju) in %s", p, (uintmax_t)st.st_ino,
		backing);
}

/* The listings of big and other in the mount and in the reference. */
static void check_both(const char *mnt, const char *ref, const char *when)
{
	char dir[4096], what[200];
	int w, which;

	for (w = 0; w < 2; w++) {
		for (which = 0; which < 2; which++) {
			xsnprintf(dir, sizeof(dir), "%s/%s", w ? ref : mnt, which ? "other" : "big");
			xsnprintf(what, sizeof(what), "%s %s %s", w ? "reference" : "mount",
				  which ? "other" : "big", when);
			check_listing(what, dir, which);
		}
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void phase(const char *what, double *t)
{
	double t1 = now();

	printf("sc_bigdir: %s: %.1f s\n", what, t1 - *t);
	fflush(stdout);
	*t = t1;
}

int main(int argc, char **argv)
{
	const char *backing = NULL, *mnt, *ref;
	char big[2][4096], other[4096];
	size_t i;
	int opt, w;
	double t;

	nents = 100000;
	while ((opt = getopt(argc, argv, "n:b:")) != -1) {
		switch (opt) {
		case 'n': nents = strtoul(optarg, NULL, 10); break;
		case 'b': backing = optarg; break;
		default: goto usage;
		}
	}
	if (argc - optind != 2 || nents < 1000)
		goto usage;
	mnt = argv[optind];
	ref = argv[optind + 1];
	setvbuf(stdout, NULL, _IOLBF, 0);

	ents = calloc(nents, sizeof(*ents));
	if (!ents)
		die("out of memory");
	for (i = 0; i < nents; i++) {
		ents[i].kind = i % 40 == 1 ? K_DIR : i % 40 == 2 ? K_LNK : K_REG;
		ents[i].name = make_name("", i, name_len(i));
		ents[i].lsize = 12 + (i * 53) % 300;
	}
	t = now();
	for (w = 0; w < 2; w++) {
		const char *root = w ? ref : mnt;

		if (mkdir(root, 0755))
			die("mkdir %s: %s", root, strerror(errno));
		xsnprintf(big[w], sizeof(big[w]), "%s/big", root);
		xsnprintf(other, sizeof(other), "%s/other", root);
		if (mkdir(big[w], 0755) || mkdir(other, 0755))
			die("mkdir in %s: %s", root, strerror(errno));
		for (i = 0; i < nents; i++)
			make_entry(big[w], &ents[i], i);
	}
	phase("made the entries", &t);
	check_listing("mount big", big[0], 0);
	check_listing("reference big", big[1], 0);
	phase("listings", &t);
	check_seek("mount big", big[0]);
	check_seek("reference big", big[1]);
	phase("seekdir", &t);
	check_stat(mnt, ref, false);
	phase("lstat", &t);
	renames(mnt, ref);
	check_both(mnt, ref, "after renames");
	check_stat(mnt, ref, true);
	phase("renames", &t);
	check_churn(big[0]);
	phase("listings during churn", &t);
	remove_all(mnt, ref);
	check_both(mnt, ref, "emptied");
	if (backing)
		check_backing_empty(backing, mnt);
	phase("removal", &t);
	free(ents);
	if (fails) {
		fprintf(stderr, "sc_bigdir: %d differences\n", fails);
		return 1;
	}
	printf("sc_bigdir: %zu entries: as on the backing filesystem\n", nents);
	return 0;
usage:
	fprintf(stderr, "usage: sc_bigdir [-n N (>= 1000)] [-b BACKING] MNTDIR REFDIR\n");
	return 2;
}
