// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * battery.c - the mount syscall battery.
 *
 *     battery [-v] [-c CHECK[,CHECK...]] [-l] [-F] [REF MNT]  (default: $REF $MNT)
 *
 * Runs the same sequence of system calls in REF (a plain directory on the
 * backing filesystem) and in MNT (a stackcrypt mount) and compares every
 * outcome: return values and errno, data read back, stat fields, directory
 * listings, xattr lists.  The plain directory is the specification; nothing
 * here hard-codes what a call should return, except the few invariants that
 * cannot be compared (UTIME_NOW lands in a time window, readdir under
 * concurrent change sees every stable entry once).
 *
 * Each check in the table at the bottom runs in its own subdirectory, created
 * on both sides.  Inside a check, BOTH(c, label, EXPR) evaluates EXPR once
 * per side, first with S == REF then with S == MNT; D is that side's check
 * directory fd, so the same expression (openat(D, ...), fd[S], ...) names the
 * same object on either side.  Every comparison counts as one check; a
 * mismatch prints
 *
 *     FAIL <check>/<label>: ref=<...> mnt=<...>
 *
 * and the run ends with "N passed, N failed" (exit 1 if any failed).
 *
 * CONFIG in the environment (set by harness.sh) selects the leeway issue #4
 * grants the crypt stacks (null, aes-xts, aes-cbc): st_blocks is not
 * compared, SEEK_DATA/SEEK_HOLE need only consistent (not identical)
 * offsets, fallocate modes that change contents or size may return
 * EOPNOTSUPP; the root's config file cannot be touched (checked on the
 * mount side only).  (The per-file header xattr "user.stackcrypt" needs no
 * leeway: from above it is an ordinary name, stored escaped.)  Anything else must match the plain directory
 * exactly.  The EACCES check runs as uid/gid 65534, so MNT must be mounted
 * with -o allow_other (harness.sh does so); so does create_ro, which then
 * remounts with $SC_REMOUNT (harness.sh) and compares again, or notes that
 * it could not when run outside the harness.  The ENOSPC check fills the
 * filesystem, so it runs only when FSTYPE says ext4/xfs (the harness's
 * private loop image) and the filesystem is at most 8 GiB.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>

enum { REF = 0, MNT = 1 };

struct ctx {
	const char	*check;		/* running check: prefixes FAIL lines */
	const char	*root[2];	/* REF and MNT as given */
	int		dfd[2];		/* the check's own directory, per side */
	bool		crypt;		/* a crypt stack: issue #4's leeway applies */
	bool		inject;		/* self-test: corrupt the mount's data */
	unsigned	verbose;
	unsigned	passed, failed;
};

/* Inside BOTH() and friends: the current side's check directory, and the
 * side's absolute path of NAME in it (for calls without an *at() form). */
#define D (c->dfd[S])
#define P(name) L("%s/%s/%s", c->root[S], c->check, (name))

/* ---------------------------------------------------------------------
 * Formatting and verdicts
 */

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";

	return n ? n : "E?";
}

/* A label with printf arguments; a few rotating buffers so that one
 * statement may build more than one. */
static const char *L(const char *fmt, ...)
{
	static char buf[8][192];
	static unsigned next;
	char *b = buf[next++ % 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(buf[0]), fmt, ap);
	va_end(ap);
	return b;
}

/* Counts one comparison; prints the FAIL line if !ok.  Returns ok. */
static bool verdict(struct ctx *c, const char *label, bool ok,
		    const char *ref, const char *mnt)
{
	if (ok) {
		c->passed++;
		if (c->verbose > 1)
			printf("ok   %s/%s: %s\n", c->check, label, ref);
		return true;
	}
	c->failed++;
	printf("FAIL %s/%s: ref=%s mnt=%s\n", c->check, label, ref, mnt);
	fflush(stdout);
	return false;
}

/* Counts one comparison of two strings.  Returns true if equal. */
static bool cmp_str(struct ctx *c, const char *label, const char *ref,
		    const char *mnt)
{
	return verdict(c, label, strcmp(ref, mnt) == 0, ref, mnt);
}

static void note(struct ctx *c, const char *label, const char *what)
{
	printf("NOTE %s/%s: %s\n", c->check, label, what);
}

/* A small string builder for results gathered on one side. */
struct sbuf {
	char	s[8192];
	size_t	n;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (b->n >= sizeof(b->s) - 1)
		return;
	va_start(ap, fmt);
	k = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		b->n = b->n + k < sizeof(b->s) ? b->n + k : sizeof(b->s) - 1;
}

/* Appends "label=VALUE " (or "label=ERRNO ") for a call's outcome. */
static void sb_res(struct sbuf *b, const char *label, long r, int e)
{
	if (r < 0)
		sb_printf(b, "%s=%s ", label, ename(e));
	else
		sb_printf(b, "%s=%ld ", label, r);
}

#define REC(sb, label, expr) do {					\
		errno = 0;						\
		long rec_r = (long)(expr);				\
		sb_res((sb), (label), rec_r, errno);			\
	} while (0)

/* ---------------------------------------------------------------------
 * Paired calls
 */

/* One call's outcome on one side. */
struct res {
	long	r;
	int	e;
};

static void res_str(char *buf, size_t n, struct res x, bool value)
{
	if (x.r < 0)
		snprintf(buf, n, "%ld %s", x.r, ename(x.e));
	else if (value)
		snprintf(buf, n, "%ld", x.r);
	else
		snprintf(buf, n, "ok");
}

enum how {
	CMP_VALUE,	/* equal return values (and errno if both failed) */
	CMP_OK,		/* both succeed, or both fail with the same errno */
};

/* Compares a pair of outcomes.  Returns true if they match. */
static bool cmp_res(struct ctx *c, const char *label, const struct res x[2],
		    enum how how)
{
	bool value = how == CMP_VALUE, same;
	char a[64], b[64];

	if (x[REF].r < 0 || x[MNT].r < 0)
		same = x[REF].r < 0 && x[MNT].r < 0 && x[REF].e == x[MNT].e;
	else
		same = !value || x[REF].r == x[MNT].r;
	res_str(a, sizeof(a), x[REF], value);
	res_str(b, sizeof(b), x[MNT], value);
	return verdict(c, label, same, a, b);
}

enum leeway { SAME, ALT, DIFF };

/*
 * Like cmp_res(CMP_VALUE), but in a crypt stack the mount may instead fail
 * with @alt (issue #4: fallocate modes that change contents may return
 * EOPNOTSUPP).  Returns SAME, ALT (leeway taken: the caller must not compare
 * what follows from the call) or DIFF.
 */
static enum leeway cmp_res_alt(struct ctx *c, const char *label,
			       const struct res x[2], int alt)
{
	if (c->crypt && x[MNT].r < 0 && x[MNT].e == alt &&
	    !(x[REF].r < 0 && x[REF].e == alt)) {
		c->passed++;
		note(c, label, L("mount returned %s (allowed for crypt stacks)",
				 ename(alt)));
		return ALT;
	}
	return cmp_res(c, label, x, CMP_VALUE) ? SAME : DIFF;
}

#define EACH_SIDE(x, expr)						\
	for (int S = 0; S < 2; S++) {					\
		errno = 0;						\
		(x)[S].r = (long)(expr);				\
		(x)[S].e = errno;					\
	}

/* Evaluate EXPR per side; return values and errno must match. */
#define BOTH(c, label, expr) ({						\
		struct res both_x[2];					\
		EACH_SIDE(both_x, expr);				\
		cmp_res((c), (label), both_x, CMP_VALUE);		\
	})

/* Evaluate EXPR per side; success/failure and errno must match. */
#define BOTH_OK(c, label, expr) ({					\
		struct res both_x[2];					\
		EACH_SIDE(both_x, expr);				\
		cmp_res((c), (label), both_x, CMP_OK);			\
	})

/* BOTH(), but a crypt mount may fail with ALT instead (see cmp_res_alt). */
#define BOTH_ALT(c, label, alt, expr) ({				\
		struct res both_x[2];					\
		EACH_SIDE(both_x, expr);				\
		cmp_res_alt((c), (label), both_x, (alt));		\
	})

/* Leave the check if the pair did not match: what follows depends on it. */
#define REQUIRE(x) do { if (!(x)) return; } while (0)

/* ---------------------------------------------------------------------
 * Data helpers
 */

/* Deterministic bytes: no runs of zeros, different per salt. */
static void fill(uint8_t *buf, size_t len, unsigned salt)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)((((uint32_t)i + salt * 7919u) * 2654435761u) >> 24) | 1;
}

/* Reads all of fd from offset 0 into a malloc'd buffer.  Returns the size,
 * or -errno (then *out is NULL). */
static ssize_t slurp_fd(int fd, uint8_t **out)
{
	size_t cap = 65536, n = 0;
	uint8_t *buf = malloc(cap);

	*out = NULL;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t k;

		if (n == cap) {
			uint8_t *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		k = pread(fd, buf + n, cap - n, (off_t)n);
		if (k < 0) {
			int e = errno;

			free(buf);
			return -e;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	*out = buf;
	return (ssize_t)n;
}

/* Compares two byte strings; describes the first difference. */
static bool cmp_bytes(struct ctx *c, const char *label, const uint8_t *a,
		      ssize_t na, const uint8_t *b, ssize_t nb)
{
	char ra[96], rb[96];

	if (na < 0 || nb < 0) {
		snprintf(ra, sizeof(ra), "%s", na < 0 ? ename((int)-na) : L("size=%zd", na));
		snprintf(rb, sizeof(rb), "%s", nb < 0 ? ename((int)-nb) : L("size=%zd", nb));
		return verdict(c, label, na == nb, ra, rb);
	}
	if (na != nb) {
		snprintf(ra, sizeof(ra), "size=%zd", na);
		snprintf(rb, sizeof(rb), "size=%zd", nb);
		return verdict(c, label, false, ra, rb);
	}
	/* -F (self-test): pretend one byte of every mount-side read flipped;
	 * the run must then fail. */
	ssize_t flip = c->inject && nb > 0 ? nb / 2 : -1;

	for (ssize_t i = 0; i < na; i++) {
		if (a[i] != (b[i] ^ (i == flip))) {
			ssize_t j = i;

			while (j < na && a[j] != (b[j] ^ (j == flip)))
				j++;
			snprintf(ra, sizeof(ra), "byte[%zd]=0x%02x (differs in [%zd,%zd))",
				 i, a[i], i, j);
			snprintf(rb, sizeof(rb), "byte[%zd]=0x%02x", i, b[i] ^ (i == flip));
			return verdict(c, label, false, ra, rb);
		}
	}
	snprintf(ra, sizeof(ra), "%zd bytes", na);
	return verdict(c, label, true, ra, ra);
}

/* Compares the whole contents of an open file on both sides. */
static bool cmp_fd_data(struct ctx *c, const char *label, const int fd[2])
{
	uint8_t *buf[2];
	ssize_t n[2];
	bool ok;

	for (int S = 0; S < 2; S++)
		n[S] = slurp_fd(fd[S], &buf[S]);
	ok = cmp_bytes(c, label, buf[REF], n[REF], buf[MNT], n[MNT]);
	free(buf[REF]);
	free(buf[MNT]);
	return ok;
}

/* Compares the whole contents of PATH (opened afresh) on both sides. */
static bool cmp_data(struct ctx *c, const char *label, const char *path)
{
	int fd[2];
	bool ok;

	for (int S = 0; S < 2; S++)
		fd[S] = openat(D, path, O_RDONLY | O_CLOEXEC);
	if (fd[REF] < 0 || fd[MNT] < 0) {
		struct res x[2] = { { fd[REF], errno }, { fd[MNT], errno } };

		ok = cmp_res(c, label, x, CMP_OK);
	} else {
		ok = cmp_fd_data(c, label, fd);
	}
	for (int S = 0; S < 2; S++)
		if (fd[S] >= 0)
			close(fd[S]);
	return ok;
}

/* Compares one pread() on both sides: return value and bytes. */
static bool cmp_pread(struct ctx *c, const char *label, const int fd[2],
		      off_t off, size_t len)
{
	uint8_t *buf[2] = { malloc(len + 1), malloc(len + 1) };
	struct res x[2];
	bool ok;

	EACH_SIDE(x, pread(fd[S], buf[S], len, off));
	ok = cmp_res(c, label, x, CMP_VALUE);
	if (ok && x[REF].r > 0)
		ok = cmp_bytes(c, L("%s data", label), buf[REF], x[REF].r,
			       buf[MNT], x[MNT].r);
	free(buf[REF]);
	free(buf[MNT]);
	return ok;
}

/* Writes LEN pattern bytes at OFF on both sides; compares the result. */
static bool pwrite2(struct ctx *c, const char *label, const int fd[2],
		    off_t off, size_t len, unsigned salt)
{
	uint8_t *buf = malloc(len + 1);
	bool ok;

	fill(buf, len, salt);
	ok = BOTH(c, label, pwrite(fd[S], buf, len, off));
	free(buf);
	return ok;
}

/* Creates PATH with LEN pattern bytes on both sides. */
static bool make_file(struct ctx *c, const char *path, size_t len,
		      unsigned salt, mode_t mode)
{
	int fd[2];

	if (!BOTH_OK(c, L("create %s", path),
		     fd[S] = openat(D, path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, mode)))
		return false;
	if (len)
		pwrite2(c, L("fill %s", path), fd, 0, len, salt);
	return BOTH(c, L("close %s", path), close(fd[S]));
}

/* readlink()s PATH on both sides into a BUFSIZE buffer; compares the return
 * values and the text returned. */
static bool cmp_readlink(struct ctx *c, const char *label, const char *path,
			 size_t bufsize)
{
	char *buf[2] = { malloc(bufsize + 1), malloc(bufsize + 1) };
	struct res x[2];
	bool ok;

	EACH_SIDE(x, readlinkat(D, path, buf[S], bufsize));
	ok = cmp_res(c, label, x, CMP_VALUE);
	if (ok && x[REF].r > 0)
		ok = cmp_bytes(c, L("%s text", label), (uint8_t *)buf[REF], x[REF].r,
			       (uint8_t *)buf[MNT], x[MNT].r);
	free(buf[REF]);
	free(buf[MNT]);
	return ok;
}

/* ---------------------------------------------------------------------
 * Stat, listings, xattr lists
 */

enum {
	ST_MTIME  = 1,	/* compare mtime (only when set explicitly) */
	ST_ATIME  = 2,	/* compare atime (only when set explicitly) */
	ST_BLOCKS = 4,	/* compare st_blocks (not for crypt stacks) */
};

static void stat_str(char *buf, size_t n, const struct stat *st, unsigned what)
{
	size_t k = (size_t)snprintf(buf, n, "mode=0%o nlink=%lu uid=%u gid=%u",
				    (unsigned)st->st_mode,
				    (unsigned long)st->st_nlink, st->st_uid,
				    st->st_gid);

	/* Directory sizes are the backing filesystem's business (and the
	 * crypt stack's root holds a hidden config file). */
	if (!S_ISDIR(st->st_mode) && k < n)
		k += (size_t)snprintf(buf + k, n - k, " size=%lld",
				      (long long)st->st_size);
	if ((S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) && k < n)
		k += (size_t)snprintf(buf + k, n - k, " rdev=%#llx",
				      (unsigned long long)st->st_rdev);
	if ((what & ST_BLOCKS) && k < n)
		k += (size_t)snprintf(buf + k, n - k, " blocks=%lld",
				      (long long)st->st_blocks);
	if ((what & ST_MTIME) && k < n)
		k += (size_t)snprintf(buf + k, n - k, " mtime=%lld.%09ld",
				      (long long)st->st_mtim.tv_sec,
				      st->st_mtim.tv_nsec);
	if ((what & ST_ATIME) && k < n)
		snprintf(buf + k, n - k, " atime=%lld.%09ld",
			 (long long)st->st_atim.tv_sec, st->st_atim.tv_nsec);
}

static bool cmp_stats(struct ctx *c, const char *label, const struct res x[2],
		      const struct stat st[2], unsigned what)
{
	char a[256], b[256];

	if (c->crypt)
		what &= ~ST_BLOCKS;
	if (!cmp_res(c, L("%s ret", label), x, CMP_OK) || x[REF].r < 0)
		return x[REF].r < 0 && x[MNT].r < 0;
	stat_str(a, sizeof(a), &st[REF], what);
	stat_str(b, sizeof(b), &st[MNT], what);
	return cmp_str(c, label, a, b);
}

/* lstat()s PATH on both sides and compares the fields WHAT selects (mode,
 * nlink, uid, gid, size and rdev always). */
static bool cmp_stat(struct ctx *c, const char *label, const char *path,
		     unsigned what)
{
	struct stat st[2];
	struct res x[2];

	memset(st, 0, sizeof(st));
	EACH_SIDE(x, fstatat(D, path, &st[S], AT_SYMLINK_NOFOLLOW));
	return cmp_stats(c, label, x, st, what);
}

/* fstat()s an open file on both sides; as cmp_stat(). */
static bool cmp_fstat(struct ctx *c, const char *label, const int fd[2],
		      unsigned what)
{
	struct stat st[2];
	struct res x[2];

	memset(st, 0, sizeof(st));
	EACH_SIDE(x, fstat(fd[S], &st[S]));
	return cmp_stats(c, label, x, st, what);
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists directory PATH under dfd as sorted "name:d_type" strings.  Returns
 * the count, or -errno. */
static int list_dir(int dfd, const char *path, char ***out)
{
	int fd = openat(dfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = 0, cap = 256;
	char **v = malloc(cap * sizeof(*v));
	struct dirent *de;
	DIR *d;

	*out = NULL;
	if (fd < 0 || !v) {
		int e = errno;

		free(v);
		if (fd >= 0)
			close(fd);
		return -e;
	}
	d = fdopendir(fd);
	if (!d) {
		int e = errno;

		free(v);
		close(fd);
		return -e;
	}
	errno = 0;
	while ((de = readdir(d))) {
		if (n == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
		}
		if (asprintf(&v[n], "%s:%u", de->d_name, de->d_type) < 0)
			abort();
		n++;
	}
	if (errno) {
		int e = errno;

		while (n)
			free(v[--n]);
		free(v);
		closedir(d);
		return -e;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), strp_cmp);
	*out = v;
	return (int)n;
}

static void free_list(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Compares two sorted name lists; on a mismatch names the first difference. */
static bool cmp_lists(struct ctx *c, const char *label, char **v[2],
		      const int n[2])
{
	char a[320], b[320];
	int i;

	if (n[REF] < 0 || n[MNT] < 0) {
		snprintf(a, sizeof(a), "%s", n[REF] < 0 ? ename(-n[REF]) : L("%d entries", n[REF]));
		snprintf(b, sizeof(b), "%s", n[MNT] < 0 ? ename(-n[MNT]) : L("%d entries", n[MNT]));
		return verdict(c, label, n[REF] == n[MNT], a, b);
	}
	for (i = 0; i < n[REF] && i < n[MNT]; i++)
		if (strcmp(v[REF][i], v[MNT][i]))
			break;
	if (i == n[REF] && i == n[MNT]) {
		snprintf(a, sizeof(a), "%d entries", n[REF]);
		return verdict(c, label, true, a, a);
	}
	snprintf(a, sizeof(a), "%d entries, [%d]=%.200s", n[REF], i,
		 i < n[REF] ? v[REF][i] : "(end)");
	snprintf(b, sizeof(b), "%d entries, [%d]=%.200s", n[MNT], i,
		 i < n[MNT] ? v[MNT][i] : "(end)");
	return verdict(c, label, false, a, b);
}

/* Compares the sorted listing (names and d_type) of directory PATH. */
static bool cmp_dir(struct ctx *c, const char *label, const char *path)
{
	char **v[2];
	int n[2];
	bool ok;

	for (int S = 0; S < 2; S++)
		n[S] = list_dir(D, path, &v[S]);
	ok = cmp_lists(c, label, v, n);
	for (int S = 0; S < 2; S++)
		if (n[S] >= 0)
			free_list(v[S], n[S]);
	return ok;
}

/* Lists PATH's xattr names, sorted.  Returns the count or -errno. */
static int list_xattrs(int dfd, const char *path, char ***out)
{
	char buf[65536], proc[64];
	int fd = openat(dfd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	ssize_t len;
	int n = 0;
	char **v;

	*out = NULL;
	if (fd < 0)
		return -errno;
	/* listxattr on an O_PATH fd needs the /proc path. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	len = llistxattr(proc, buf, sizeof(buf));
	if (len < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	v = malloc((size_t)(len + 1) * sizeof(*v));
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1)
		v[n++] = strdup(buf + i);
	qsort(v, (size_t)n, sizeof(*v), strp_cmp);
	*out = v;
	return n;
}

/* Compares the sorted xattr name lists of PATH. */
static bool cmp_xattr_list(struct ctx *c, const char *label, const char *path)
{
	char **v[2];
	int n[2];
	bool ok;

	for (int S = 0; S < 2; S++)
		n[S] = list_xattrs(D, path, &v[S]);
	ok = cmp_lists(c, label, v, n);
	for (int S = 0; S < 2; S++)
		if (n[S] >= 0)
			free_list(v[S], n[S]);
	return ok;
}

/* ---------------------------------------------------------------------
 * Per-side results: computed separately on each side, then compared
 */

typedef void side_fn(struct ctx *c, int S, void *arg, struct sbuf *out);

/* Runs FN once per side and compares the strings it built. */
static bool cmp_side(struct ctx *c, const char *label, side_fn *fn, void *arg)
{
	static struct sbuf sb[2];

	for (int S = 0; S < 2; S++) {
		sb[S].n = 0;
		sb[S].s[0] = 0;
		fn(c, S, arg, &sb[S]);
	}
	return cmp_str(c, label, sb[REF].s, sb[MNT].s);
}

/* Runs FN on side S in a child process (as uid/gid @uid if not -1) and
 * collects the string it built; a crash of the child is part of the result. */
static void in_child(struct ctx *c, int S, side_fn *fn, void *arg, uid_t uid,
		     struct sbuf *out)
{
	int p[2], status;
	pid_t pid;
	ssize_t k;

	fflush(stdout);
	if (pipe(p)) {
		sb_printf(out, "pipe: %s", ename(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		sb_printf(out, "fork: %s", ename(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		static struct sbuf sb;

		close(p[0]);
		if (uid != (uid_t)-1 &&
		    (setgroups(0, NULL) || setgid(uid) || setuid(uid))) {
			sb_printf(&sb, "setuid: %s", ename(errno));
		} else {
			fn(c, S, arg, &sb);
		}
		if (write(p[1], sb.s, sb.n) != (ssize_t)sb.n)
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	while (out->n < sizeof(out->s) - 1 &&
	       (k = read(p[0], out->s + out->n, sizeof(out->s) - 1 - out->n)) > 0)
		out->n += (size_t)k;
	out->s[out->n] = 0;
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		sb_printf(out, " child-status=%#x", status);
}

/* ---------------------------------------------------------------------
 * The checks
 */

static void chk_lookup(struct ctx *c)
{
	REQUIRE(make_file(c, "f", 5, 1, 0644));
	cmp_stat(c, "stat f", "f", 0);
	cmp_stat(c, "stat missing", "missing", 0);
	cmp_stat(c, "stat f/x", "f/x", 0);
	cmp_stat(c, "stat .", ".", 0);
	cmp_stat(c, "stat ..", "..", 0);
	BOTH(c, "mkdir -p a/b/c/d", mkdirat(D, "a", 0755) | mkdirat(D, "a/b", 0755) |
	     mkdirat(D, "a/b/c", 0755) | mkdirat(D, "a/b/c/d", 0755));
	cmp_stat(c, "stat deep", "a/b/c/d", 0);
	cmp_stat(c, "stat dotdot path", "a/b/../b/c/./d/..", 0);
	BOTH(c, "link f g", linkat(D, "f", D, "a/g", 0));

	/* Two names of one file are one inode, on each side. */
	struct stat st1, st2;

	BOTH(c, "same inode", ({
		fstatat(D, "f", &st1, 0);
		fstatat(D, "a/g", &st2, 0);
		st1.st_ino == st2.st_ino && st1.st_dev == st2.st_dev;
	}));
	/* The mount's directories and files are one device (st_dev). */
	BOTH(c, "same st_dev", ({
		fstatat(D, "a", &st1, 0);
		fstatat(D, "f", &st2, 0);
		st1.st_dev == st2.st_dev;
	}));
	cmp_data(c, "data via link", "a/g");
}

static void chk_getattr(struct ctx *c)
{
	int fd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0640)));
	cmp_fstat(c, "fstat empty", fd, 0);
	pwrite2(c, "write 10000", fd, 0, 10000, 2);
	/* Size as seen while the file is open and dirty, then by path. */
	cmp_fstat(c, "fstat dirty", fd, 0);
	cmp_stat(c, "stat dirty", "f", 0);
	pwrite2(c, "write at 70000", fd, 70000, 3, 3);
	cmp_fstat(c, "fstat extended", fd, 0);
	BOTH(c, "close", close(fd[S]));
	cmp_stat(c, "stat closed", "f", 0);
	BOTH(c, "mkdir", mkdirat(D, "d", 0700));
	cmp_stat(c, "stat dir", "d", 0);
	BOTH(c, "symlink", symlinkat("f", D, "l"));
	cmp_stat(c, "lstat symlink", "l", 0);
	struct stat st[2];
	struct res x[2];

	EACH_SIDE(x, fstatat(D, "l", &st[S], 0));
	cmp_stats(c, "stat through symlink", x, st, 0);
	EACH_SIDE(x, fstatat(D, "", &st[S], AT_EMPTY_PATH));
	cmp_stats(c, "fstatat AT_EMPTY_PATH", x, st, 0);
}

static void chk_chmod(struct ctx *c)
{
	static const mode_t modes[] = { 0600, 0755, 0, 04755, 02755, 01777, 0444, 07777 };
	int fd[2];

	REQUIRE(make_file(c, "f", 100, 4, 0644));
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		BOTH(c, L("chmod %o", modes[i]), fchmodat(D, "f", modes[i], 0));
		cmp_stat(c, L("stat after chmod %o", modes[i]), "f", 0);
	}
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDONLY)));
	BOTH(c, "fchmod 0640", fchmod(fd[S], 0640));
	cmp_fstat(c, "fstat after fchmod", fd, 0);
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "chmod dir 0711", fchmodat(D, "d", 0711, 0));
	cmp_stat(c, "stat dir", "d", 0);
	BOTH(c, "symlink", symlinkat("f", D, "l"));
	BOTH(c, "chmod symlink nofollow", fchmodat(D, "l", 0600, AT_SYMLINK_NOFOLLOW));
	BOTH(c, "chmod through symlink", fchmodat(D, "l", 0604, 0));
	cmp_stat(c, "stat target", "f", 0);
	BOTH(c, "chmod missing", fchmodat(D, "missing", 0644, 0));
}

static void chk_chown(struct ctx *c)
{
	int fd[2];

	REQUIRE(make_file(c, "f", 100, 5, 0644));
	BOTH(c, "chown 65534:65534", fchownat(D, "f", 65534, 65534, 0));
	cmp_stat(c, "stat", "f", 0);
	BOTH(c, "chown -1:100", fchownat(D, "f", (uid_t)-1, 100, 0));
	cmp_stat(c, "stat gid only", "f", 0);
	BOTH(c, "chown 1000:-1", fchownat(D, "f", 1000, (gid_t)-1, 0));
	cmp_stat(c, "stat uid only", "f", 0);
	/* chown clears set-user-ID and set-group-ID on an executable. */
	BOTH(c, "chmod 06755", fchmodat(D, "f", 06755, 0));
	BOTH(c, "chown 0:0", fchownat(D, "f", 0, 0, 0));
	cmp_stat(c, "suid cleared", "f", 0);
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "fchown 2:3", fchown(fd[S], 2, 3));
	cmp_fstat(c, "fstat after fchown", fd, 0);
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "symlink", symlinkat("f", D, "l"));
	BOTH(c, "lchown symlink", fchownat(D, "l", 7, 8, AT_SYMLINK_NOFOLLOW));
	cmp_stat(c, "stat symlink", "l", 0);
	cmp_stat(c, "target unchanged", "f", 0);
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "chown dir", fchownat(D, "d", 65534, 65534, 0));
	cmp_stat(c, "stat dir", "d", 0);
	cmp_data(c, "data intact", "f");
}

static void chk_truncate(struct ctx *c)
{
	static const off_t sizes[] = {
		5000, 4096, 4095, 4097, 1, 0, 17, 16, 15, 8195, 100000, 511,
		512, 513, 0, 40, 1 << 20, 12289,
	};
	int fd[2];

	REQUIRE(make_file(c, "f", 10000, 6, 0644));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		BOTH(c, L("truncate %lld", (long long)sizes[i]),
		     truncate(P("f"), sizes[i]));
		cmp_stat(c, L("stat %lld", (long long)sizes[i]), "f", 0);
		cmp_data(c, L("data %lld", (long long)sizes[i]), "f");
	}
	/* ftruncate through an O_WRONLY fd must still keep the kept bytes:
	 * a crypt stack has to read the tail unit it rewrites. */
	REQUIRE(make_file(c, "w", 9000, 7, 0644));
	REQUIRE(BOTH_OK(c, "open wronly", fd[S] = openat(D, "w", O_WRONLY)));
	BOTH(c, "ftruncate 6001", ftruncate(fd[S], 6001));
	BOTH(c, "ftruncate 4099", ftruncate(fd[S], 4099));
	BOTH(c, "ftruncate 5000 (grow)", ftruncate(fd[S], 5000));
	pwrite2(c, "write at 4097", fd, 4097, 3, 8);
	BOTH(c, "ftruncate -1", ftruncate(fd[S], -1));
	cmp_fstat(c, "fstat", fd, 0);
	BOTH(c, "close", close(fd[S]));
	cmp_data(c, "data", "w");
	REQUIRE(BOTH_OK(c, "open rdonly", fd[S] = openat(D, "w", O_RDONLY)));
	BOTH(c, "ftruncate on O_RDONLY", ftruncate(fd[S], 10));
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	REQUIRE(BOTH_OK(c, "open dir", fd[S] = openat(D, "d", O_RDONLY | O_DIRECTORY)));
	BOTH(c, "ftruncate dir", ftruncate(fd[S], 0));
	BOTH(c, "close dir", close(fd[S]));
	cmp_data(c, "data unchanged", "w");
}

/* UTIME_NOW must land between two clock readings taken around the call. */
struct now_arg {
	const char *path;
	const struct timespec *ts;	/* NULL: both now */
	int flags;
	bool use_fd;
};

static long long ns_of(struct timespec t)
{
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void side_utime_now(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	const struct now_arg *a = arg;
	struct timespec t0, t1;
	struct stat st;
	int r;

	struct stat before;

	fstatat(D, a->path, &before, AT_SYMLINK_NOFOLLOW);
	clock_gettime(CLOCK_REALTIME, &t0);
	errno = 0;
	if (a->use_fd) {
		int fd = openat(D, a->path, O_RDWR);

		r = futimens(fd, a->ts);
		close(fd);
	} else {
		r = utimensat(D, a->path, a->ts, a->flags);
	}
	sb_res(out, "ret", r, errno);
	clock_gettime(CLOCK_REALTIME, &t1);
	if (fstatat(D, a->path, &st, AT_SYMLINK_NOFOLLOW)) {
		sb_printf(out, "stat=%s", ename(errno));
		return;
	}
	/* File times come from a coarse clock that may lag a tick. */
	long long lo = ns_of(t0) - 50000000LL, hi = ns_of(t1) + 50000000LL;

	for (int i = 0; i < 2; i++) {
		struct timespec got = i ? st.st_mtim : st.st_atim;
		struct timespec was = i ? before.st_mtim : before.st_atim;
		const char *name = i ? "mtime" : "atime";

		if (a->ts && a->ts[i].tv_nsec == UTIME_OMIT)
			sb_printf(out, "%s=%s ", name, ns_of(got) == ns_of(was) ? "kept" : "changed");
		else if (!a->ts || a->ts[i].tv_nsec == UTIME_NOW)
			sb_printf(out, "%s=%s ", name, ns_of(got) >= lo && ns_of(got) <= hi ?
				  "now" : L("%lld not in [%lld,%lld]", ns_of(got), lo, hi));
		else
			sb_printf(out, "%s=%lld ", name, ns_of(got));
	}
}

static void chk_utimens(struct ctx *c)
{
	const struct timespec t1[2] = { { 1000000000, 123456789 }, { 1200000000, 987654321 } };
	const struct timespec t2[2] = { { 1300000000, 5 }, { 0, UTIME_OMIT } };
	const struct timespec t3[2] = { { 0, UTIME_OMIT }, { 1400000000, 999999999 } };
	const struct timespec t4[2] = { { 0, UTIME_OMIT }, { 0, UTIME_NOW } };
	const struct timespec t5[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
	const struct timespec told[2] = { { 12345, 0 }, { 23456, 0 } };
	int fd[2];

	REQUIRE(make_file(c, "f", 3000, 9, 0644));
	BOTH(c, "utimensat explicit", utimensat(D, "f", t1, 0));
	cmp_stat(c, "times explicit", "f", ST_MTIME | ST_ATIME);
	BOTH(c, "utimensat mtime OMIT", utimensat(D, "f", t2, 0));
	cmp_stat(c, "times mtime kept", "f", ST_MTIME | ST_ATIME);
	BOTH(c, "utimensat atime OMIT", utimensat(D, "f", t3, 0));
	cmp_stat(c, "times atime kept", "f", ST_MTIME | ST_ATIME);
	BOTH(c, "utimensat old times", utimensat(D, "f", told, 0));
	cmp_stat(c, "times old", "f", ST_MTIME | ST_ATIME);

	struct now_arg a = { .path = "f" };

	a.ts = t4;
	cmp_side(c, "mtime NOW atime OMIT", side_utime_now, &a);
	a.ts = t5;
	cmp_side(c, "atime NOW mtime OMIT", side_utime_now, &a);
	a.ts = NULL;
	cmp_side(c, "both NOW (times == NULL)", side_utime_now, &a);
	a.use_fd = true;
	a.ts = t4;
	cmp_side(c, "futimens mtime NOW", side_utime_now, &a);

	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "futimens explicit", futimens(fd[S], t1));
	cmp_fstat(c, "fstat times", fd, ST_MTIME | ST_ATIME);
	/* A write moves mtime forward from an old explicit value. */
	BOTH(c, "futimens old", futimens(fd[S], told));
	pwrite2(c, "write", fd, 10, 10, 10);
	BOTH(c, "close", close(fd[S]));
	struct stat st;

	BOTH(c, "write updated mtime", ({
		fstatat(D, "f", &st, 0);
		st.st_mtim.tv_sec > 1000000000;
	}));

	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "utimensat dir", utimensat(D, "d", t1, 0));
	cmp_stat(c, "dir times", "d", ST_MTIME | ST_ATIME);
	BOTH(c, "symlink", symlinkat("f", D, "l"));
	BOTH(c, "utimensat symlink nofollow", utimensat(D, "l", t3, AT_SYMLINK_NOFOLLOW));
	cmp_stat(c, "symlink mtime", "l", ST_MTIME);
	BOTH(c, "utimensat missing", utimensat(D, "missing", t1, 0));
	BOTH(c, "utimensat bad nsec", utimensat(D, "f", (struct timespec[2]) {
		{ 0, 1000000000 }, { 0, 0 } }, 0));
}

static void chk_readdir_large(struct ctx *c)
{
	enum { N = 5000 };

	BOTH(c, "mkdir big", mkdirat(D, "big", 0755));
	BOTH(c, L("create %d files", N), ({
		int bad = 0;
		for (int i = 0; i < N && !bad; i++) {
			char name[64];
			int fd;

			snprintf(name, sizeof(name), "big/entry-with-a-longish-name-%05d", i);
			fd = openat(D, name, O_CREAT | O_EXCL | O_WRONLY, 0644);
			if (fd < 0)
				bad = -1;
			else
				close(fd);
		}
		bad;
	}));
	BOTH(c, "create 40 subdirs", ({
		int bad = 0;
		for (int i = 0; i < 40; i++)
			bad |= mkdirat(D, L("big/dir%02d", i), 0755);
		bad;
	}));
	cmp_dir(c, "listing", "big");
	cmp_stat(c, "stat big", "big", 0);
	BOTH(c, "remove every other file", ({
		int bad = 0;
		for (int i = 0; i < N; i += 2)
			bad |= unlinkat(D, L("big/entry-with-a-longish-name-%05d", i), 0);
		bad;
	}));
	cmp_dir(c, "listing after removal", "big");
}

/*
 * Lists a directory with small getdents64 batches while, between batches,
 * removing and adding entries.  Entries that exist throughout must be seen
 * exactly once; nothing may be seen twice.
 */
static void side_readdir_churn(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	enum { KEEP = 1500, CHURN = 600 };
	char buf[1024];
	static unsigned char seen_keep[KEEP];
	unsigned dup = 0, missing = 0, added = 0, removed = 0, batches = 0;
	char first_dup[64] = "";
	int fd, dfd;
	ssize_t k;

	(void)arg;
	dfd = openat(D, "churn", O_RDONLY | O_DIRECTORY);
	if (dfd < 0) {
		sb_printf(out, "open=%s", ename(errno));
		return;
	}
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY);
	memset(seen_keep, 0, sizeof(seen_keep));
	/* Times each name was seen, per kind and index. */
	static unsigned char seen_churn[CHURN], seen_new[CHURN * 4];

	memset(seen_churn, 0, sizeof(seen_churn));
	memset(seen_new, 0, sizeof(seen_new));
	while ((k = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		batches++;
		for (ssize_t off = 0; off < k;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *de = (void *)(buf + off);
			unsigned char *slot = NULL;
			unsigned idx;

			off += de->reclen;
			if (sscanf(de->name, "keep%u", &idx) == 1 && idx < KEEP)
				slot = &seen_keep[idx];
			else if (sscanf(de->name, "churn%u", &idx) == 1 && idx < CHURN)
				slot = &seen_churn[idx];
			else if (sscanf(de->name, "new%u", &idx) == 1 && idx < CHURN * 4)
				slot = &seen_new[idx];
			if (slot && (*slot)++ && !dup++)
				snprintf(first_dup, sizeof(first_dup), "%s", de->name);
		}
		/* Churn: drop some original entries, add new ones. */
		for (int j = 0; j < 8 && removed < CHURN; j++)
			unlinkat(dfd, L("churn%u", removed++), 0);
		for (int j = 0; j < 16 && added < CHURN * 4; j++) {
			int nfd = openat(dfd, L("new%u", added++), O_CREAT | O_WRONLY, 0644);

			if (nfd >= 0)
				close(nfd);
		}
	}
	if (k < 0)
		sb_printf(out, "getdents=%s ", ename(errno));
	/* Finish the churn so the final listing does not depend on how many
	 * batches each side's getdents took. */
	while (removed < CHURN)
		unlinkat(dfd, L("churn%u", removed++), 0);
	while (added < CHURN * 4) {
		int nfd = openat(dfd, L("new%u", added++), O_CREAT | O_WRONLY, 0644);

		if (nfd >= 0)
			close(nfd);
	}
	for (unsigned i = 0; i < KEEP; i++)
		missing += !seen_keep[i];
	sb_printf(out, "%s", dup || missing ? "" : "ok");
	if (dup)
		sb_printf(out, "duplicates=%u (first %s) ", dup, first_dup);
	if (missing)
		sb_printf(out, "missing-stable=%u ", missing);
	if (batches < 10)
		sb_printf(out, "too-few-batches=%u", batches);
	close(fd);
	close(dfd);
}

static void chk_readdir_churn(struct ctx *c)
{
	BOTH(c, "populate", ({
		int bad = mkdirat(D, "churn", 0755);
		for (int i = 0; i < 1500 && !bad; i++)
			bad = mknodat(D, L("churn/keep%u", i), S_IFREG | 0644, 0);
		for (int i = 0; i < 600 && !bad; i++)
			bad = mknodat(D, L("churn/churn%u", i), S_IFREG | 0644, 0);
		bad;
	}));
	cmp_side(c, "list while changing", side_readdir_churn, NULL);
	/* Listing after the churn is a plain comparison again. */
	cmp_dir(c, "listing after", "churn");
}

/* telldir/seekdir: resuming at a saved position yields the same tail. */
static void side_seekdir(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	int fd = openat(D, "d", O_RDONLY | O_DIRECTORY);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	char first[2][64];
	struct dirent *de;
	long pos = -1;
	int n = 0, tail = 0, again = 0, same = 1;

	(void)arg;
	if (!d) {
		sb_printf(out, "opendir=%s", ename(errno));
		return;
	}
	first[0][0] = first[1][0] = 0;
	while ((de = readdir(d))) {
		if (++n == 100)
			pos = telldir(d);
		else if (n > 100 && !tail++)
			snprintf(first[0], sizeof(first[0]), "%.63s", de->d_name);
	}
	if (pos >= 0) {
		seekdir(d, pos);
		while ((de = readdir(d)))
			if (!again++)
				snprintf(first[1], sizeof(first[1]), "%.63s", de->d_name);
		same = !strcmp(first[0], first[1]);
	}
	rewinddir(d);
	int n2 = 0;

	while (readdir(d))
		n2++;
	sb_printf(out, "n=%d tail=%d again=%d same-first=%d rewind-n=%d", n, tail,
		  again, same, n2);
	closedir(d);
}

/* readdir's d_ino is the st_ino that lstat() reports for the same entry
 * (find, ls -i, du and pwd rely on it). */
static void side_dino(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	int fd = openat(D, (const char *)arg, O_RDONLY | O_DIRECTORY);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	unsigned n = 0, bad = 0;
	char first[128] = "";
	struct dirent *de;

	if (!d) {
		sb_printf(out, "opendir=%s", ename(errno));
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;

		n++;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    st.st_ino != de->d_ino) {
			if (!bad++)
				snprintf(first, sizeof(first), " first=%.60s d_ino=%llu st_ino=%llu",
					 de->d_name, (unsigned long long)de->d_ino,
					 (unsigned long long)st.st_ino);
		}
	}
	sb_printf(out, "entries=%u ino-mismatch=%u%s", n, bad, first);
	closedir(d);
}

static void chk_readdir_seek(struct ctx *c)
{
	BOTH(c, "populate", ({
		int bad = mkdirat(D, "d", 0755);
		for (int i = 0; i < 300 && !bad; i++)
			bad = mknodat(D, L("d/n%d", i), S_IFREG | 0600, 0);
		bad;
	}));
	cmp_side(c, "telldir/seekdir/rewinddir", side_seekdir, NULL);
	BOTH(c, "mkdir d/sub", mkdirat(D, "d/sub", 0755));
	BOTH(c, "symlink d/sl", symlinkat("n1", D, "d/sl"));
	BOTH(c, "mkfifo d/fifo", mkfifoat(D, "d/fifo", 0644));
	cmp_side(c, "d_ino == st_ino", side_dino, (void *)"d");
	BOTH(c, "mkdir empty", mkdirat(D, "e", 0755));
	cmp_dir(c, "empty dir listing", "e");
}

static void chk_mkdir_rmdir(struct ctx *c)
{
	static const mode_t modes[] = { 0755, 0700, 0777, 01777, 02755, 0 };

	BOTH(c, "mkdir d", mkdirat(D, "d", 0755));
	cmp_stat(c, "stat d", "d", 0);
	BOTH(c, "mkdir d again", mkdirat(D, "d", 0755));
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		BOTH(c, L("mkdir mode %o", modes[i]), mkdirat(D, L("m%zu", i), modes[i]));
		cmp_stat(c, L("stat mode %o", modes[i]), L("m%zu", i), 0);
	}
	BOTH(c, "mkdir d/e", mkdirat(D, "d/e", 0755));
	cmp_stat(c, "nlink of d", "d", 0);
	BOTH(c, "rmdir d (not empty)", unlinkat(D, "d", AT_REMOVEDIR));
	REQUIRE(make_file(c, "d/e/f", 10, 11, 0644));
	BOTH(c, "rmdir d/e (not empty)", unlinkat(D, "d/e", AT_REMOVEDIR));
	BOTH(c, "rmdir file", unlinkat(D, "d/e/f", AT_REMOVEDIR));
	BOTH(c, "unlink d/e/f", unlinkat(D, "d/e/f", 0));
	BOTH(c, "rmdir d/e", unlinkat(D, "d/e", AT_REMOVEDIR));
	cmp_stat(c, "nlink of d after", "d", 0);
	BOTH(c, "rmdir d", unlinkat(D, "d", AT_REMOVEDIR));
	cmp_stat(c, "d gone", "d", 0);
	BOTH(c, "rmdir missing", unlinkat(D, "d", AT_REMOVEDIR));
	BOTH(c, "mkdir in missing parent", mkdirat(D, "nope/x", 0755));
	BOTH(c, "rmdir .", unlinkat(D, ".", AT_REMOVEDIR));
	BOTH(c, "mkdir m0/x as root", mkdirat(D, "m0/x", 0755));
	/* A set-group-ID directory passes its group and the bit on. */
	BOTH(c, "mkdir sg", mkdirat(D, "sg", 0755));
	BOTH(c, "chown sg", fchownat(D, "sg", 0, 100, 0));
	BOTH(c, "chmod sg 2775", fchmodat(D, "sg", 02775, 0));
	BOTH(c, "mkdir sg/sub", mkdirat(D, "sg/sub", 0755));
	REQUIRE(make_file(c, "sg/file", 1, 12, 0644));
	cmp_stat(c, "sg/sub inherits", "sg/sub", 0);
	cmp_stat(c, "sg/file inherits", "sg/file", 0);
	cmp_dir(c, "listing", ".");
}

/* A UNIX socket bound in the directory works (agents keep theirs in $HOME). */
static void side_unix_socket(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int srv = socket(AF_UNIX, SOCK_STREAM, 0), cli = socket(AF_UNIX, SOCK_STREAM, 0);
	int acc;
	char b = '-';

	(void)arg;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", P("sock"));
	REC(out, "bind", bind(srv, (struct sockaddr *)&sa, sizeof(sa)));
	REC(out, "listen", listen(srv, 1));
	REC(out, "connect", connect(cli, (struct sockaddr *)&sa, sizeof(sa)));
	acc = accept(srv, NULL, NULL);
	sb_res(out, "accept", acc < 0 ? -1 : 0, errno);
	REC(out, "send", write(cli, "z", 1));
	REC(out, "recv", read(acc, &b, 1));
	sb_printf(out, "byte=%c ", b);
	REC(out, "bind-again", bind(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&sa, sizeof(sa)));
	close(acc);
	close(cli);
	close(srv);
}

static void chk_mknod(struct ctx *c)
{
	int rfd[2], wfd[2];
	char b[2][4];

	BOTH(c, "mknod fifo", mknodat(D, "fifo", S_IFIFO | 0644, 0));
	cmp_stat(c, "stat fifo", "fifo", 0);
	BOTH(c, "mkfifo again", mkfifoat(D, "fifo", 0600));
	BOTH(c, "mknod regular", mknodat(D, "reg", S_IFREG | 0600, 0));
	cmp_stat(c, "stat regular", "reg", 0);
	cmp_data(c, "regular empty", "reg");
	BOTH(c, "open fifo wr nonblock, no reader",
	     ({ int f = openat(D, "fifo", O_WRONLY | O_NONBLOCK); if (f >= 0) close(f); f; }));
	REQUIRE(BOTH_OK(c, "open fifo rd nonblock", rfd[S] = openat(D, "fifo", O_RDONLY | O_NONBLOCK)));
	REQUIRE(BOTH_OK(c, "open fifo wr", wfd[S] = openat(D, "fifo", O_WRONLY | O_NONBLOCK)));
	BOTH(c, "write fifo", write(wfd[S], "abc", 3));
	BOTH(c, "read fifo", read(rfd[S], b[S], 3));
	cmp_bytes(c, "fifo bytes", (uint8_t *)b[REF], 3, (uint8_t *)b[MNT], 3);
	BOTH(c, "close w", close(wfd[S]));
	BOTH(c, "close r", close(rfd[S]));
	cmp_side(c, "unix socket", side_unix_socket, NULL);
	cmp_stat(c, "stat socket", "sock", 0);
	cmp_dir(c, "listing", ".");
	BOTH(c, "unlink fifo", unlinkat(D, "fifo", 0));
	BOTH(c, "unlink socket", unlinkat(D, "sock", 0));
}

static void chk_symlink(struct ctx *c)
{
	char target[4096];
	int fd[2];

	REQUIRE(make_file(c, "f", 33, 13, 0644));
	BOTH(c, "symlink rel", symlinkat("f", D, "l"));
	cmp_readlink(c, "readlink", "l", 4096);
	cmp_stat(c, "lstat", "l", 0);
	cmp_data(c, "read through link", "l");
	BOTH(c, "symlink dangling", symlinkat("does/not/exist", D, "dang"));
	BOTH(c, "open dangling", openat(D, "dang", O_RDONLY));
	BOTH(c, "symlink exists", symlinkat("x", D, "l"));
	cmp_readlink(c, "readlink on file", "f", 4096);
	cmp_readlink(c, "readlink short buffer", "dang", 4);
	BOTH(c, "O_NOFOLLOW", openat(D, "l", O_RDONLY | O_NOFOLLOW));
	REQUIRE(BOTH_OK(c, "O_PATH|O_NOFOLLOW", fd[S] = openat(D, "l", O_PATH | O_NOFOLLOW)));
	cmp_fstat(c, "fstat O_PATH link", fd, 0);
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "symlink loop", symlinkat("loop", D, "loop"));
	BOTH(c, "open loop", openat(D, "loop", O_RDONLY));
	memset(target, 'x', sizeof(target) - 1);
	target[sizeof(target) - 1] = 0;
	for (int i = 100; i < 4000; i += 101)
		target[i] = '/';
	BOTH(c, "symlink 4095-byte target", symlinkat(target, D, "long"));
	BOTH(c, "symlink 1024-byte target", ({
		char t[1025];
		memcpy(t, target, 1024);
		t[1024] = 0;
		symlinkat(t, D, "long1024");
	}));
	cmp_readlink(c, "readlink 1024", "long1024", 4200);
	/* (XFS allows 1024 bytes: both sides fail alike there.) */
	cmp_readlink(c, "readlink long", "long", 4200);
	cmp_stat(c, "lstat long", "long", 0);
	target[4095] = 'y';
	BOTH(c, "symlink 4096-byte target", ({
		char t[4097];
		memcpy(t, target, 4096);
		t[4096] = 0;
		symlinkat(t, D, "toolong");
	}));
	target[4095] = 0;
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "symlink to dir", symlinkat("../d", D, "d/up"));
	cmp_stat(c, "stat via ../", "d/up/up", 0);
	BOTH(c, "absolute-looking target", symlinkat("/nonexistent/abs", D, "abs"));
	cmp_readlink(c, "readlink abs", "abs", 4096);
	cmp_dir(c, "listing", ".");
}

static void chk_link_unlink(struct ctx *c)
{
	int fd[2];

	REQUIRE(make_file(c, "f", 5000, 14, 0644));
	BOTH(c, "link f g", linkat(D, "f", D, "g", 0));
	cmp_stat(c, "stat f nlink 2", "f", 0);
	cmp_stat(c, "stat g nlink 2", "g", 0);
	REQUIRE(BOTH_OK(c, "open g", fd[S] = openat(D, "g", O_RDWR)));
	pwrite2(c, "write via g", fd, 4000, 3000, 15);
	BOTH(c, "close g", close(fd[S]));
	cmp_data(c, "read via f", "f");
	BOTH(c, "unlink f", unlinkat(D, "f", 0));
	cmp_stat(c, "g nlink 1", "g", 0);
	cmp_data(c, "g data", "g");
	BOTH(c, "link exists", linkat(D, "g", D, "g", 0));
	BOTH(c, "link missing", linkat(D, "nope", D, "x", 0));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "link dir", linkat(D, "d", D, "d2", 0));
	BOTH(c, "unlink dir", unlinkat(D, "d", 0));
	BOTH(c, "unlink missing", unlinkat(D, "nope", 0));
	/* Hard links and renames keep the file readable. */
	BOTH(c, "link into d", linkat(D, "g", D, "d/h", 0));
	BOTH(c, "rename link", renameat(D, "d/h", D, "h2"));
	cmp_data(c, "data via renamed link", "h2");
	BOTH(c, "symlink", symlinkat("g", D, "sl"));
	BOTH(c, "link symlink itself", linkat(D, "sl", D, "sl2", 0));
	cmp_stat(c, "stat sl2", "sl2", 0);
	BOTH(c, "link following symlink", linkat(D, "sl", D, "sl3", AT_SYMLINK_FOLLOW));
	cmp_stat(c, "stat sl3", "sl3", 0);
	/* An open, unlinked file stays usable through its fd. */
	REQUIRE(BOTH_OK(c, "open h2", fd[S] = openat(D, "h2", O_RDWR)));
	BOTH(c, "unlink g", unlinkat(D, "g", 0));
	BOTH(c, "unlink sl3", unlinkat(D, "sl3", 0));
	BOTH(c, "unlink h2", unlinkat(D, "h2", 0));
	cmp_fstat(c, "fstat unlinked", fd, 0);
	pwrite2(c, "write unlinked", fd, 100, 5000, 16);
	cmp_fd_data(c, "read unlinked", fd);
	BOTH(c, "ftruncate unlinked", ftruncate(fd[S], 6001));
	cmp_fd_data(c, "read unlinked after truncate", fd);
	BOTH(c, "close unlinked", close(fd[S]));
	cmp_dir(c, "listing", ".");
}

static void chk_rename(struct ctx *c)
{
	int fd[2];

	REQUIRE(make_file(c, "a", 1000, 17, 0644));
	REQUIRE(make_file(c, "b", 2000, 18, 0600));
	BOTH(c, "rename a c", renameat(D, "a", D, "c"));
	cmp_stat(c, "a gone", "a", 0);
	cmp_data(c, "c data", "c");
	BOTH(c, "rename c over b", renameat(D, "c", D, "b"));
	cmp_stat(c, "b replaced", "b", 0);
	cmp_data(c, "b data", "b");
	BOTH(c, "rename to self", renameat(D, "b", D, "b"));
	BOTH(c, "rename missing", renameat(D, "nope", D, "x"));
	BOTH(c, "mkdir d1", mkdirat(D, "d1", 0755));
	BOTH(c, "mkdir d2", mkdirat(D, "d2", 0755));
	BOTH(c, "mkdir d3", mkdirat(D, "d3", 0755));
	REQUIRE(make_file(c, "d3/x", 10, 19, 0644));
	BOTH(c, "rename dir over empty dir", renameat(D, "d1", D, "d2"));
	BOTH(c, "rename dir over non-empty dir", renameat(D, "d2", D, "d3"));
	BOTH(c, "rename file over dir", renameat(D, "b", D, "d3"));
	BOTH(c, "rename dir over file", renameat(D, "d3", D, "b"));
	BOTH(c, "rename dir into itself", renameat(D, "d3", D, "d3/sub"));
	BOTH(c, "rename across dirs", renameat(D, "b", D, "d3/b"));
	cmp_data(c, "moved data", "d3/b");
	BOTH(c, "rename dir", renameat(D, "d3", D, "d4"));
	cmp_data(c, "data after dir rename", "d4/b");
	cmp_stat(c, "stat after dir rename", "d4/x", 0);
	/* An open file survives a rename of itself. */
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "d4/b", O_RDWR)));
	BOTH(c, "rename open file", renameat(D, "d4/b", D, "moved"));
	pwrite2(c, "write after rename", fd, 500, 4000, 20);
	BOTH(c, "close", close(fd[S]));
	cmp_data(c, "data after rename", "moved");
	BOTH(c, "rename . ", renameat(D, ".", D, "dot"));
	BOTH(c, "rename over ..", renameat(D, "moved", D, "d4/.."));
	BOTH(c, "rename into missing dir", renameat(D, "moved", D, "nodir/x"));
	BOTH(c, "rename file/x", renameat(D, "moved/x", D, "y"));
	cmp_dir(c, "listing", ".");
	cmp_dir(c, "listing d4", "d4");
}

static void chk_rename_flags(struct ctx *c)
{
	REQUIRE(make_file(c, "a", 1111, 21, 0644));
	REQUIRE(make_file(c, "b", 2222, 22, 0600));
	BOTH(c, "NOREPLACE onto existing", renameat2(D, "a", D, "b", RENAME_NOREPLACE));
	cmp_data(c, "b untouched", "b");
	BOTH(c, "NOREPLACE onto new", renameat2(D, "a", D, "c", RENAME_NOREPLACE));
	cmp_stat(c, "a gone", "a", 0);
	BOTH(c, "EXCHANGE files", renameat2(D, "b", D, "c", RENAME_EXCHANGE));
	cmp_data(c, "b now old c", "b");
	cmp_data(c, "c now old b", "c");
	cmp_stat(c, "stat b", "b", 0);
	cmp_stat(c, "stat c", "c", 0);
	BOTH(c, "mkdir d", mkdirat(D, "d", 0700));
	REQUIRE(make_file(c, "d/in", 7, 23, 0644));
	BOTH(c, "EXCHANGE file and dir", renameat2(D, "b", D, "d", RENAME_EXCHANGE));
	cmp_stat(c, "b is dir", "b", 0);
	cmp_stat(c, "d is file", "d", 0);
	cmp_data(c, "b/in data", "b/in");
	BOTH(c, "EXCHANGE with missing", renameat2(D, "c", D, "missing", RENAME_EXCHANGE));
	BOTH(c, "EXCHANGE|NOREPLACE", renameat2(D, "c", D, "d", RENAME_EXCHANGE | RENAME_NOREPLACE));
	BOTH(c, "EXCHANGE across dirs", renameat2(D, "c", D, "b/in", RENAME_EXCHANGE));
	cmp_data(c, "c after cross exchange", "c");
	cmp_data(c, "b/in after cross exchange", "b/in");
	BOTH(c, "bad flag", renameat2(D, "c", D, "e", 1u << 30));
	cmp_dir(c, "listing", ".");
}

static void chk_open_flags(struct ctx *c)
{
	int fd[2];
	char b[2][8];

	REQUIRE(make_file(c, "f", 3000, 24, 0644));
	BOTH(c, "O_CREAT|O_EXCL existing", openat(D, "f", O_CREAT | O_EXCL | O_WRONLY, 0644));
	REQUIRE(BOTH_OK(c, "O_CREAT|O_EXCL new", fd[S] = openat(D, "n", O_CREAT | O_EXCL | O_RDWR, 0640)));
	pwrite2(c, "write new", fd, 0, 100, 25);
	BOTH(c, "close new", close(fd[S]));
	cmp_stat(c, "stat new", "n", 0);
	REQUIRE(BOTH_OK(c, "O_TRUNC", fd[S] = openat(D, "f", O_WRONLY | O_TRUNC)));
	cmp_fstat(c, "size after O_TRUNC", fd, 0);
	pwrite2(c, "write after O_TRUNC", fd, 7, 9, 26);
	BOTH(c, "read on O_WRONLY", read(fd[S], b[S], 4));
	BOTH(c, "close", close(fd[S]));
	cmp_data(c, "data after O_TRUNC", "f");
	REQUIRE(BOTH_OK(c, "O_RDONLY|O_TRUNC", fd[S] = openat(D, "n", O_RDONLY | O_TRUNC)));
	cmp_fstat(c, "size after O_RDONLY|O_TRUNC", fd, 0);
	BOTH(c, "write on O_RDONLY", write(fd[S], "x", 1));
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "O_CREAT without O_EXCL existing", ({
		int f = openat(D, "f", O_CREAT | O_RDONLY, 0600);
		if (f >= 0)
			close(f);
		f < 0 ? -1 : 0;
	}));
	cmp_stat(c, "mode kept on existing", "f", 0);
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "O_CREAT on dir", openat(D, "d", O_CREAT | O_WRONLY, 0644));
	BOTH(c, "O_WRONLY on dir", openat(D, "d", O_WRONLY));
	BOTH(c, "O_RDWR on dir", openat(D, "d", O_RDWR));
	BOTH(c, "O_DIRECTORY on file", openat(D, "f", O_RDONLY | O_DIRECTORY));
	BOTH(c, "O_DIRECTORY|O_CREAT", openat(D, "x", O_RDONLY | O_DIRECTORY | O_CREAT, 0644));
	REQUIRE(BOTH_OK(c, "O_PATH", fd[S] = openat(D, "f", O_PATH)));
	BOTH(c, "read on O_PATH", read(fd[S], b[S], 1));
	cmp_fstat(c, "fstat O_PATH", fd, 0);
	BOTH(c, "close O_PATH", close(fd[S]));
	/* Read and write through the same fd move one file offset. */
	REQUIRE(BOTH_OK(c, "O_RDWR", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "write 5", write(fd[S], "hello", 5));
	BOTH(c, "lseek CUR", lseek(fd[S], 0, SEEK_CUR));
	BOTH(c, "lseek 1", lseek(fd[S], 1, SEEK_SET));
	BOTH(c, "read 6", read(fd[S], b[S], 6));
	cmp_bytes(c, "read bytes", (uint8_t *)b[REF], 6, (uint8_t *)b[MNT], 6);
	BOTH(c, "lseek END", lseek(fd[S], 0, SEEK_END));
	BOTH(c, "lseek END+10", lseek(fd[S], 10, SEEK_END));
	BOTH(c, "lseek negative", lseek(fd[S], -100, SEEK_SET));
	BOTH(c, "close", close(fd[S]));
}

static void chk_create_modes(struct ctx *c)
{
	static const mode_t modes[] = {
		0777, 0666, 0644, 0600, 0400, 0000, 04755, 02755, 01755, 0111
	};
	int fd[2];

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *name = L("m%o", modes[i]);

		/* The creating fd may write even when the mode forbids it. */
		REQUIRE(BOTH_OK(c, L("create %o", modes[i]),
				fd[S] = openat(D, name, O_CREAT | O_EXCL | O_RDWR, modes[i])));
		pwrite2(c, L("write %o", modes[i]), fd, 4090, 20, 30 + i);
		cmp_fd_data(c, L("read back %o", modes[i]), fd);
		BOTH(c, L("close %o", modes[i]), close(fd[S]));
		cmp_stat(c, L("stat %o", modes[i]), name, 0);
	}
	mode_t old = umask(077);

	BOTH(c, "create under umask 077",
	     ({ int f = openat(D, "u077", O_CREAT | O_WRONLY, 0777); if (f >= 0) close(f); f < 0 ? -1 : 0; }));
	BOTH(c, "mkdir under umask 077", mkdirat(D, "d077", 0777));
	umask(old);
	cmp_stat(c, "stat u077", "u077", 0);
	cmp_stat(c, "stat d077", "d077", 0);
	BOTH(c, "creat() in missing dir", openat(D, "missing/f", O_CREAT | O_WRONLY, 0644));
}

/* Reads and writes at assorted offsets and sizes, with holes. */
static void chk_rw_offsets(struct ctx *c)
{
	static const struct { off_t off; size_t len; } w[] = {
		{ 0, 1 }, { 1, 2 }, { 4095, 2 }, { 4096, 4096 }, { 10000, 1 },
		{ 100, 50000 }, { 1 << 20, 3 }, { 12345, 0 }, { 196625, 131072 },
		{ 65536, 65536 }, { 3, 1 << 20 }, { (1 << 21) + 5, 4091 },
	};
	static const struct { off_t off; size_t len; } r[] = {
		{ 0, 4096 }, { 1, 1 }, { 4095, 2 }, { 4000, 200000 }, { 1 << 20, 4096 },
		{ (1 << 21) + 4000, 200 }, { (1 << 21) + 4096, 100 },
		{ (1 << 21) + 100000, 10 }, { 0, 4 << 20 }, { 17, 0 },
	};
	int fd[2], rfd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0644)));
	REQUIRE(BOTH_OK(c, "open rdonly", rfd[S] = openat(D, "f", O_RDONLY)));
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		pwrite2(c, L("pwrite %lld+%zu", (long long)w[i].off, w[i].len), fd,
			w[i].off, w[i].len, 40 + i);
		cmp_fstat(c, L("fstat after %zu", i), fd, 0);
	}
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		cmp_pread(c, L("pread %lld+%zu", (long long)r[i].off, r[i].len), rfd,
			  r[i].off, r[i].len);
	cmp_fd_data(c, "whole file", rfd);
	/* Sequential write() and read() with a moving offset. */
	BOTH(c, "lseek 4090", lseek(fd[S], 4090, SEEK_SET));
	for (int i = 0; i < 5; i++) {
		uint8_t b[1000];

		fill(b, sizeof(b), 60 + i);
		BOTH(c, L("write #%d", i), write(fd[S], b, sizeof(b) - 7 * i));
	}
	BOTH(c, "lseek 0", lseek(rfd[S], 4000, SEEK_SET));
	for (int i = 0; i < 5; i++) {
		uint8_t b[2][1500];

		BOTH(c, L("read #%d", i), read(rfd[S], b[S], sizeof(b[S]) - 13 * i));
		cmp_bytes(c, L("read #%d data", i), b[REF], 200, b[MNT], 200);
	}
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "close r", close(rfd[S]));
	cmp_data(c, "data", "f");
	/* Reads after EOF. */
	REQUIRE(make_file(c, "small", 10, 70, 0644));
	REQUIRE(BOTH_OK(c, "open small", fd[S] = openat(D, "small", O_RDONLY)));
	cmp_pread(c, "pread across EOF", fd, 5, 100);
	cmp_pread(c, "pread at EOF", fd, 10, 100);
	cmp_pread(c, "pread past EOF", fd, 5000, 100);
	BOTH(c, "pread negative", pread(fd[S], (char[4]){0}, 4, -1));
	BOTH(c, "close small", close(fd[S]));
}

/* Files of every small size (the crypt tail rules: sizes below and around
 * one cipher block and one unit). */
static void chk_rw_tail_sizes(struct ctx *c)
{
	static const size_t big[] = {
		255, 256, 257, 511, 512, 513, 1023, 1024, 4079, 4080, 4081, 4095,
		4096, 4097, 4111, 4112, 4113, 8191, 8192, 8193,
	};
	int fd[2];

	for (size_t i = 0; i < 41 + sizeof(big) / sizeof(big[0]); i++) {
		size_t n = i <= 40 ? i : big[i - 41];
		const char *name = L("s%zu", n);

		REQUIRE(make_file(c, name, n, (unsigned)n, 0644));
		cmp_stat(c, L("stat %zu", n), name, 0);
		cmp_data(c, L("data %zu", n), name);
		REQUIRE(BOTH_OK(c, L("reopen %zu", n), fd[S] = openat(D, name, O_RDWR)));
		pwrite2(c, L("append 1 at %zu", n), fd, (off_t)n, 1, 1000 + (unsigned)n);
		cmp_fd_data(c, L("data %zu+1", n), fd);
		pwrite2(c, L("overwrite middle of %zu", n), fd, (off_t)n / 2, 1, 2000 + (unsigned)n);
		cmp_fd_data(c, L("data %zu mid", n), fd);
		if (n > 0) {
			BOTH(c, L("truncate %zu-1", n), ftruncate(fd[S], (off_t)n - 1));
			cmp_fd_data(c, L("data %zu-1", n), fd);
		}
		BOTH(c, L("close %zu", n), close(fd[S]));
		cmp_stat(c, L("stat %zu final", n), name, 0);
		cmp_data(c, L("data %zu final (fresh open)", n), name);
	}
	/* N bytes straddling the first unit boundary. */
	for (size_t n = 1; n <= 40; n += 3) {
		const char *name = L("x%zu", n);

		REQUIRE(BOTH_OK(c, L("create %s", name),
				fd[S] = openat(D, name, O_CREAT | O_WRONLY, 0644)));
		pwrite2(c, L("straddle %zu", n), fd, 4096 - (off_t)n / 2, n, 3000 + (unsigned)n);
		BOTH(c, L("close %s", name), close(fd[S]));
		cmp_stat(c, L("stat %s", name), name, 0);
		cmp_data(c, L("data %s", name), name);
	}
}

/* Unaligned and sub-unit writes around 16-, 512- and 4096-byte boundaries,
 * through an O_WRONLY fd (a crypt stack must still read what it rewrites). */
static void chk_rw_boundaries(struct ctx *c)
{
	static const off_t offs[] = {
		0, 1, 15, 16, 17, 255, 511, 512, 513, 1000, 4080, 4095, 4096,
		4097, 8191, 8192, 12300, 12387, 12388, 12400, 20000,
	};
	static const size_t lens[] = { 1, 15, 16, 17, 511, 512, 513, 4095, 4096, 4097, 8193 };
	int fd[2], rfd[2];
	unsigned salt = 100;

	REQUIRE(make_file(c, "f", 3 * 4096 + 100, 99, 0644));
	REQUIRE(BOTH_OK(c, "open wronly", fd[S] = openat(D, "f", O_WRONLY)));
	REQUIRE(BOTH_OK(c, "open rdonly", rfd[S] = openat(D, "f", O_RDONLY)));
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			pwrite2(c, L("pwrite %lld+%zu", (long long)offs[i], lens[j]),
				fd, offs[i], lens[j], salt++);
			if (!cmp_fd_data(c, L("data after %lld+%zu", (long long)offs[i], lens[j]),
					 rfd))
				goto out;	/* one diverging file is enough noise */
		}
		/* Shrink back so later offsets still land around EOF. */
		BOTH(c, L("truncate back %zu", i), ftruncate(fd[S], 3 * 4096 + 100 + (off_t)i));
	}
	cmp_fstat(c, "fstat", fd, 0);
out:
	BOTH(c, "close w", close(fd[S]));
	BOTH(c, "close r", close(rfd[S]));
	cmp_data(c, "fresh read", "f");
}

/* Writes past EOF leave holes that read as zeros. */
static void chk_holes(struct ctx *c)
{
	int fd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0644)));
	pwrite2(c, "write 10 at 1M", fd, 1 << 20, 10, 80);
	cmp_fstat(c, "fstat", fd, 0);
	cmp_pread(c, "hole at 0", fd, 0, 4096);
	cmp_pread(c, "hole before data", fd, (1 << 20) - 100, 200);
	pwrite2(c, "write into hole", fd, 5000, 3, 81);
	cmp_fd_data(c, "whole file", fd);
	BOTH(c, "grow to 3M", ftruncate(fd[S], 3 << 20));
	cmp_pread(c, "grown region", fd, (2 << 20) + 7, 8192);
	pwrite2(c, "write 1 past EOF", fd, (3 << 20) + 1, 1, 82);
	cmp_fd_data(c, "whole file after", fd);
	BOTH(c, "fsync", fsync(fd[S]));
	/* The file stays sparse (well below its size in blocks). */
	BOTH(c, "sparse", ({
		struct stat st;
		fstat(fd[S], &st);
		st.st_blocks * 512 < st.st_size / 2;
	}));
	cmp_fstat(c, "fstat after fsync", fd, ST_BLOCKS);
	BOTH(c, "close", close(fd[S]));
	cmp_data(c, "fresh read", "f");
	/* A hole exactly one unit long between two units of data. */
	REQUIRE(BOTH_OK(c, "create g", fd[S] = openat(D, "g", O_CREAT | O_RDWR, 0644)));
	pwrite2(c, "unit 0", fd, 0, 4096, 83);
	pwrite2(c, "unit 2", fd, 8192, 4096, 84);
	cmp_pread(c, "unit 1", fd, 4096, 4096);
	BOTH(c, "close g", close(fd[S]));
	cmp_data(c, "g data", "g");
}

static void chk_append(struct ctx *c)
{
	int fd[2], fd2[2];

	REQUIRE(make_file(c, "f", 4090, 90, 0644));
	REQUIRE(BOTH_OK(c, "open append", fd[S] = openat(D, "f", O_WRONLY | O_APPEND)));
	REQUIRE(BOTH_OK(c, "open append 2", fd2[S] = openat(D, "f", O_RDWR | O_APPEND)));
	for (int i = 0; i < 6; i++) {
		uint8_t b[40];

		fill(b, sizeof(b), 91 + i);
		BOTH(c, L("append #%d", i), write((i & 1 ? fd2 : fd)[S], b, 3 + 7 * i));
		BOTH(c, L("offset #%d", i), lseek((i & 1 ? fd2 : fd)[S], 0, SEEK_CUR));
	}
	/* Linux appends even for pwrite on an O_APPEND fd. */
	pwrite2(c, "pwrite on O_APPEND", fd, 0, 5, 97);
	cmp_fstat(c, "fstat", fd, 0);
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "close 2", close(fd2[S]));
	cmp_data(c, "data", "f");
	REQUIRE(BOTH_OK(c, "create append", fd[S] = openat(D, "n", O_CREAT | O_WRONLY | O_APPEND, 0644)));
	for (int i = 0; i < 30; i++)
		pwrite2(c, L("append small #%d", i), fd, 0, (size_t)i, 200 + i);
	BOTH(c, "close", close(fd[S]));
	cmp_data(c, "data n", "n");
}

static void chk_sync(struct ctx *c)
{
	int fd[2], dfd[2], dup_fd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0644)));
	pwrite2(c, "write", fd, 0, 100000, 110);
	BOTH(c, "fsync", fsync(fd[S]));
	pwrite2(c, "write 2", fd, 5, 5000, 111);
	BOTH(c, "fdatasync", fdatasync(fd[S]));
	BOTH(c, "sync_file_range", sync_file_range(fd[S], 0, 0, SYNC_FILE_RANGE_WRITE));
	BOTH_OK(c, "dup", dup_fd[S] = dup(fd[S]));
	/* Each close of a duplicate is a flush. */
	BOTH(c, "close dup", close(dup_fd[S]));
	BOTH(c, "close", close(fd[S]));
	REQUIRE(BOTH_OK(c, "open rdonly", fd[S] = openat(D, "f", O_RDONLY)));
	BOTH(c, "fsync rdonly", fsync(fd[S]));
	BOTH(c, "syncfs", syncfs(fd[S]));
	cmp_fd_data(c, "data", fd);
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	REQUIRE(BOTH_OK(c, "open dir", dfd[S] = openat(D, "d", O_RDONLY | O_DIRECTORY)));
	BOTH(c, "fsyncdir", fsync(dfd[S]));
	BOTH(c, "fdatasync dir", fdatasync(dfd[S]));
	BOTH(c, "close dir", close(dfd[S]));
	BOTH(c, "fsync bad fd", fsync(-1));
}

static void chk_statfs(struct ctx *c)
{
	struct statfs sf[2];
	struct statvfs sv[2];
	struct res x[2];
	char a[160], b[160];

	EACH_SIDE(x, statfs(L("%s", c->root[S]), &sf[S]));
	REQUIRE(cmp_res(c, "statfs", x, CMP_OK));
	EACH_SIDE(x, fstatvfs(D, &sv[S]));
	REQUIRE(cmp_res(c, "fstatvfs", x, CMP_OK));
	for (int S = 0; S < 2; S++) {
		/* The mount reports the backing filesystem's geometry. */
		snprintf(S ? b : a, sizeof(a), "namelen=%ld blocks*frsize=%llu frsize=%ld",
			 (long)sf[S].f_namelen,
			 (unsigned long long)sf[S].f_blocks * (unsigned long long)sf[S].f_frsize,
			 (long)sf[S].f_frsize);
	}
	cmp_str(c, "geometry", a, b);
	for (int S = 0; S < 2; S++) {
		long bs = sf[S].f_bsize;
		bool sane = bs >= 512 && bs <= (1 << 20) && !(bs & (bs - 1)) &&
			    sf[S].f_bfree <= sf[S].f_blocks &&
			    sf[S].f_bavail <= sf[S].f_bfree &&
			    sf[S].f_ffree <= sf[S].f_files &&
			    sv[S].f_namemax == 255;
		snprintf(S ? b : a, sizeof(a), "%s", sane ? "sane" :
			 L("bsize=%ld blocks=%llu bfree=%llu bavail=%llu files=%llu ffree=%llu",
			   bs, (unsigned long long)sf[S].f_blocks,
			   (unsigned long long)sf[S].f_bfree,
			   (unsigned long long)sf[S].f_bavail,
			   (unsigned long long)sf[S].f_files,
			   (unsigned long long)sf[S].f_ffree));
	}
	cmp_str(c, "bsize and counts", a, b);
}

/* getxattr()s NAME of PATH on both sides into a SIZE buffer; compares the
 * return values and the value bytes. */
static bool cmp_getxattr(struct ctx *c, const char *label, const char *path,
			 const char *name, size_t size)
{
	char *v[2] = { malloc(size + 1), malloc(size + 1) };
	struct res x[2];
	bool ok;

	EACH_SIDE(x, lgetxattr(P(path), name, size ? v[S] : NULL, size));
	ok = cmp_res(c, label, x, CMP_VALUE);
	if (ok && size && x[REF].r > 0)
		ok = cmp_bytes(c, L("%s value", label), (uint8_t *)v[REF], x[REF].r,
			       (uint8_t *)v[MNT], x[MNT].r);
	free(v[REF]);
	free(v[MNT]);
	return ok;
}

static void chk_xattr(struct ctx *c)
{
	char big[2000], v[2][64];
	int fd[2];

	REQUIRE(make_file(c, "f", 100, 120, 0644));
	cmp_xattr_list(c, "list fresh file", "f");
	BOTH(c, "listxattr size", listxattr(P("f"), NULL, 0));
	BOTH(c, "set user.a", setxattr(P("f"), "user.a", "1", 1, 0));
	cmp_getxattr(c, "get user.a", "f", "user.a", 100);
	cmp_getxattr(c, "get size only", "f", "user.a", 0);
	cmp_getxattr(c, "get missing", "f", "user.nope", 100);
	BOTH(c, "XATTR_CREATE existing", setxattr(P("f"), "user.a", "2", 1, XATTR_CREATE));
	BOTH(c, "XATTR_REPLACE missing", setxattr(P("f"), "user.b", "2", 1, XATTR_REPLACE));
	BOTH(c, "XATTR_REPLACE existing", setxattr(P("f"), "user.a", "22", 2, XATTR_REPLACE));
	cmp_getxattr(c, "get replaced", "f", "user.a", 100);
	/* Well inside ext4's one-block limit, even with a header xattr there. */
	fill((uint8_t *)big, sizeof(big), 121);
	BOTH(c, "set 2000-byte value", setxattr(P("f"), "user.big", big, sizeof(big), 0));
	cmp_getxattr(c, "get into small buffer", "f", "user.big", 10);
	cmp_getxattr(c, "get big", "f", "user.big", 4096);
	BOTH(c, "set empty value", setxattr(P("f"), "user.empty", "", 0, 0));
	cmp_getxattr(c, "get empty value", "f", "user.empty", 100);
	for (int i = 0; i < 20; i++)
		BOTH(c, L("set user.n%d", i), setxattr(P("f"), L("user.n%d", i), "x", 1, 0));
	cmp_xattr_list(c, "list 23 attrs", "f");
	BOTH(c, "listxattr size 23", listxattr(P("f"), NULL, 0));
	BOTH(c, "listxattr small buffer", listxattr(P("f"), v[S], 5));
	BOTH(c, "remove user.a", removexattr(P("f"), "user.a"));
	cmp_getxattr(c, "get removed", "f", "user.a", 100);
	BOTH(c, "remove missing", removexattr(P("f"), "user.a"));
	BOTH(c, "remove big", removexattr(P("f"), "user.big"));
	BOTH(c, "set bad namespace", setxattr(P("f"), "bogus.a", "1", 1, 0));
	BOTH(c, "set trusted.t", setxattr(P("f"), "trusted.t", "t", 1, 0));
	cmp_getxattr(c, "get trusted.t", "f", "trusted.t", 100);
	cmp_xattr_list(c, "list after", "f");
	/* Via an fd. */
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "fsetxattr", fsetxattr(fd[S], "user.fd", "abc", 3, 0));
	BOTH(c, "fgetxattr", fgetxattr(fd[S], "user.fd", v[S], sizeof(v[S])));
	cmp_bytes(c, "fgetxattr value", (uint8_t *)v[REF], 3, (uint8_t *)v[MNT], 3);
	BOTH(c, "flistxattr size", flistxattr(fd[S], NULL, 0));
	BOTH(c, "fremovexattr", fremovexattr(fd[S], "user.fd"));
	BOTH(c, "close", close(fd[S]));
	cmp_data(c, "data untouched by xattrs", "f");
	/* Directories and symlinks. */
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "set on dir", setxattr(P("d"), "user.d", "dd", 2, 0));
	cmp_getxattr(c, "get on dir", "d", "user.d", 100);
	cmp_xattr_list(c, "list dir", "d");
	BOTH(c, "symlink", symlinkat("f", D, "l"));
	BOTH(c, "lsetxattr user on symlink", lsetxattr(P("l"), "user.l", "1", 1, 0));
	cmp_xattr_list(c, "list symlink", "l");
	BOTH(c, "setxattr through symlink", setxattr(P("l"), "user.via", "1", 1, 0));
	cmp_xattr_list(c, "list target via symlink", "f");
	/*
	 * The crypt stacks store the header names of the layers above under
	 * escaped names (issue 14 item 2, docs/format.md): from above,
	 * user.stackcrypt, user.stackcrypt!x and user.stackcryptx are
	 * ordinary names, as in the plain directory, and this layer's own
	 * header is never reached.
	 */
	static const char *const hdr_names[] = {
		"user.stackcrypt", "user.stackcrypt!x", "user.stackcryptx", "user.stackcrypt!",
	};

	for (size_t i = 0; i < sizeof(hdr_names) / sizeof(hdr_names[0]); i++) {
		const char *h = hdr_names[i];

		cmp_getxattr(c, L("get %s", h), "f", h, 4096);
		cmp_getxattr(c, L("get %s size", h), "f", h, 0);
		BOTH(c, L("remove missing %s", h), removexattr(P("f"), h));
		BOTH(c, L("set %s", h), setxattr(P("f"), h, L("v%zu", i), 2, XATTR_CREATE));
		BOTH(c, L("set %s exclusive again", h), setxattr(P("f"), h, "w", 1, XATTR_CREATE));
		cmp_getxattr(c, L("get %s after set", h), "f", h, 4096);
		cmp_xattr_list(c, L("list with %s", h), "f");
		BOTH(c, L("listxattr size with %s", h), listxattr(P("f"), NULL, 0));
	}
	cmp_data(c, "data with outer header names", "f");
	for (size_t i = 0; i < sizeof(hdr_names) / sizeof(hdr_names[0]); i++)
		BOTH(c, L("remove %s", hdr_names[i]), removexattr(P("f"), hdr_names[i]));
	cmp_xattr_list(c, "list after removing them", "f");
	cmp_data(c, "data after header attempts", "f");
}

static void chk_fallocate(struct ctx *c)
{
	int fd[2];

	REQUIRE(make_file(c, "f", 5000, 130, 0644));
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	/* KEEP_SIZE changes neither contents nor size: no leeway. */
	BOTH(c, "KEEP_SIZE beyond EOF", fallocate(fd[S], FALLOC_FL_KEEP_SIZE, 200000, 8192));
	cmp_fstat(c, "size kept", fd, 0);
	cmp_fd_data(c, "data after KEEP_SIZE", fd);
	/* Writing past the preallocated range leaves a gap that reads as
	 * zeros, although the backing blocks there are allocated. */
	pwrite2(c, "write past prealloc", fd, 300000, 100, 131);
	cmp_fd_data(c, "gap reads zeros", fd);
	BOTH(c, "KEEP_SIZE inside", fallocate(fd[S], FALLOC_FL_KEEP_SIZE, 0, 4096));
	cmp_fd_data(c, "data after KEEP_SIZE inside", fd);
	BOTH(c, "fallocate on bad args", fallocate(fd[S], 0, -1, 10));
	BOTH(c, "fallocate zero length", fallocate(fd[S], 0, 0, 0));
	if (BOTH_ALT(c, "mode 0 inside", EOPNOTSUPP, fallocate(fd[S], 0, 1000, 3000)) == SAME)
		cmp_fd_data(c, "data after mode 0 inside", fd);
	if (BOTH_ALT(c, "mode 0 beyond EOF", EOPNOTSUPP, fallocate(fd[S], 0, 400000, 10000)) != SAME)
		goto out_close;
	cmp_fstat(c, "size after mode 0", fd, 0);
	cmp_fd_data(c, "data after mode 0", fd);
	if (BOTH_ALT(c, "PUNCH_HOLE", EOPNOTSUPP,
		     fallocate(fd[S], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1000, 6000)) != SAME)
		goto out_close;
	cmp_fstat(c, "size after punch", fd, 0);
	cmp_fd_data(c, "data after punch", fd);
	BOTH(c, "PUNCH_HOLE without KEEP_SIZE", fallocate(fd[S], FALLOC_FL_PUNCH_HOLE, 0, 10));
	if (BOTH_ALT(c, "ZERO_RANGE", EOPNOTSUPP,
		     fallocate(fd[S], FALLOC_FL_ZERO_RANGE, 299990, 30)) != SAME)
		goto out_close;
	cmp_fd_data(c, "data after zero range", fd);
out_close:
	BOTH(c, "close", close(fd[S]));
	REQUIRE(BOTH_OK(c, "open rdonly", fd[S] = openat(D, "f", O_RDONLY)));
	BOTH(c, "fallocate on O_RDONLY", fallocate(fd[S], 0, 0, 10));
	BOTH(c, "close rdonly", close(fd[S]));
}

/* SEEK_DATA/SEEK_HOLE in a crypt stack: no exact offsets, but consistent
 * answers.  As lseek(2) allows, a hole may be reported as data (zeros), but
 * not the other way round: bytes skipped by SEEK_DATA and bytes of a hole
 * reported by SEEK_HOLE must read as zeros, results stay inside the file, and
 * ENXIO comes exactly at or beyond EOF (SEEK_DATA also when only zeros
 * follow).  Each side prints its verdict; the plain directory must agree. */
struct seek_q {
	int whence;
	off_t off;
};

/* True if [from, to) of fd reads as zeros. */
static bool zeros(int fd, off_t from, off_t to)
{
	size_t len = to > from ? (size_t)(to - from) : 0;
	uint8_t *b = malloc(len + 1);
	bool z = pread(fd, b, len, from) == (ssize_t)len;

	for (size_t i = 0; z && i < len; i++)
		z = !b[i];
	free(b);
	return z;
}

static void side_seek_consistent(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	const struct seek_q *q = arg;
	int fd = openat(D, "f", O_RDONLY);
	struct stat st;
	off_t r, size;
	int e;

	fstat(fd, &st);
	size = st.st_size;
	errno = 0;
	r = lseek(fd, q->off, q->whence);
	e = errno;
	if (q->off < 0 || q->off >= size) {
		sb_printf(out, "%s", r < 0 ? ename(e) : L("bad:%lld", (long long)r));
	} else if (r < 0) {
		bool ok = q->whence == SEEK_DATA && e == ENXIO && zeros(fd, q->off, size);

		sb_printf(out, ok ? "ok" : L("bad:%s", ename(e)));
	} else if (r < q->off || r > size || (q->whence == SEEK_DATA && r == size)) {
		sb_printf(out, "out-of-range:%lld", (long long)r);
	} else if (q->whence == SEEK_DATA) {
		sb_printf(out, zeros(fd, q->off, r) ? "ok" : "skipped-nonzero");
	} else {
		off_t next = lseek(fd, r, SEEK_DATA);

		sb_printf(out, zeros(fd, r, next < 0 ? size : next) ? "ok" : "hole-nonzero");
	}
	close(fd);
}

static void chk_seek_data_hole(struct ctx *c)
{
	static const struct seek_q q[] = {
		{ SEEK_DATA, 0 }, { SEEK_DATA, 100 }, { SEEK_DATA, 4096 },
		{ SEEK_DATA, 8192 }, { SEEK_DATA, (1 << 20) - 1 },
		{ SEEK_DATA, (1 << 20) + 4096 }, { SEEK_DATA, (1 << 20) + 8192 },
		{ SEEK_DATA, 2 << 20 }, { SEEK_DATA, 3 << 20 },
		{ SEEK_HOLE, 0 }, { SEEK_HOLE, 100 }, { SEEK_HOLE, 1 << 20 },
		{ SEEK_HOLE, (2 << 20) - 1 }, { SEEK_HOLE, 2 << 20 },
		{ SEEK_HOLE, 3 << 20 }, { SEEK_DATA, -1 },
	};
	int fd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0644)));
	pwrite2(c, "data at 0", fd, 0, 4096, 140);
	pwrite2(c, "data at 1M", fd, 1 << 20, 8192, 141);
	BOTH(c, "truncate 2M", ftruncate(fd[S], 2 << 20));
	BOTH(c, "fsync", fsync(fd[S]));
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		const char *label = L("%s %lld", q[i].whence == SEEK_DATA ? "SEEK_DATA" : "SEEK_HOLE",
				      (long long)q[i].off);

		if (!c->crypt)
			BOTH(c, label, lseek(fd[S], q[i].off, q[i].whence));
		else
			cmp_side(c, label, side_seek_consistent, (void *)&q[i]);
	}
	BOTH(c, "close", close(fd[S]));
	/* A file without holes: data at 0, hole only at EOF. */
	REQUIRE(make_file(c, "full", 10000, 142, 0644));
	REQUIRE(BOTH_OK(c, "open full", fd[S] = openat(D, "full", O_RDONLY)));
	BOTH(c, "full SEEK_DATA 0", lseek(fd[S], 0, SEEK_DATA));
	BOTH(c, "full SEEK_HOLE 0", lseek(fd[S], 0, SEEK_HOLE));
	BOTH(c, "full SEEK_HOLE 9999", lseek(fd[S], 9999, SEEK_HOLE));
	BOTH(c, "full SEEK_DATA 10000", lseek(fd[S], 10000, SEEK_DATA));
	BOTH(c, "close full", close(fd[S]));
}

/* copy_file_range until done; returns bytes copied or -1. */
static ssize_t copy_all(int in, off_t off_in, int out, off_t off_out, size_t len)
{
	size_t done = 0;

	while (done < len) {
		loff_t oi = off_in + (off_t)done, oo = off_out + (off_t)done;
		ssize_t k = copy_file_range(in, &oi, out, &oo, len - done, 0);

		if (k < 0)
			return -1;
		if (k == 0)
			break;
		done += (size_t)k;
	}
	return (ssize_t)done;
}

static void chk_copy_file_range(struct ctx *c)
{
	int in[2], out[2];

	REQUIRE(make_file(c, "src", 300000, 150, 0644));
	REQUIRE(make_file(c, "dst", 9000, 151, 0644));
	REQUIRE(BOTH_OK(c, "open src", in[S] = openat(D, "src", O_RDONLY)));
	REQUIRE(BOTH_OK(c, "open dst", out[S] = openat(D, "dst", O_RDWR)));
	BOTH(c, "copy whole", copy_all(in[S], 0, out[S], 0, 300000));
	cmp_fd_data(c, "dst after whole", out);
	BOTH(c, "copy unaligned", copy_all(in[S], 1000 + 7, out[S], 5555, 70001));
	cmp_fd_data(c, "dst after unaligned", out);
	BOTH(c, "copy past src EOF", copy_all(in[S], 299990, out[S], 400000, 100));
	cmp_fd_data(c, "dst after past EOF", out);
	BOTH(c, "copy creating hole", copy_all(in[S], 17, out[S], 1 << 20, 4096));
	cmp_fd_data(c, "dst after hole", out);
	BOTH(c, "copy from EOF", copy_all(in[S], 300000, out[S], 0, 10));
	BOTH(c, "copy overlapping same file", ({
		loff_t a = 0, b = 100;
		copy_file_range(out[S], &a, out[S], &b, 1000, 0);
	}));
	BOTH(c, "copy bad flags", ({
		loff_t a = 0, b = 0;
		copy_file_range(in[S], &a, out[S], &b, 10, 1);
	}));
	BOTH(c, "copy into O_RDONLY", ({
		loff_t a = 0, b = 0;
		copy_file_range(out[S], &a, in[S], &b, 10, 0);
	}));
	/* Small copies inside one file, non-overlapping. */
	BOTH(c, "copy within file", copy_all(out[S], 0, out[S], 500000, 4097));
	cmp_fd_data(c, "dst after within", out);
	BOTH(c, "close src", close(in[S]));
	BOTH(c, "close dst", close(out[S]));
	cmp_data(c, "dst fresh read", "dst");
	cmp_stat(c, "dst stat", "dst", 0);
}

/* flock: a second open file description conflicts until unlock. */
static void child_flock(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	int fd = openat(D, "f", O_RDONLY);

	(void)arg;
	REC(out, "ex-nb", flock(fd, LOCK_EX | LOCK_NB));
	REC(out, "sh-nb", flock(fd, LOCK_SH | LOCK_NB));
	close(fd);
}

static void side_flock(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	int fd = openat(D, "f", O_RDWR), fd2;

	(void)arg;
	REC(out, "lock-ex", flock(fd, LOCK_EX));
	sb_printf(out, "[while EX: ");
	in_child(c, S, child_flock, NULL, (uid_t)-1, out);
	REC(out, "] downgrade-sh", flock(fd, LOCK_SH));
	sb_printf(out, "[while SH: ");
	in_child(c, S, child_flock, NULL, (uid_t)-1, out);
	REC(out, "] unlock", flock(fd, LOCK_UN));
	sb_printf(out, "[unlocked: ");
	in_child(c, S, child_flock, NULL, (uid_t)-1, out);
	/* A second fd in the same process is a separate description too. */
	fd2 = openat(D, "f", O_RDONLY);
	REC(out, "] lock-sh", flock(fd, LOCK_SH));
	REC(out, "fd2-ex-nb", flock(fd2, LOCK_EX | LOCK_NB));
	REC(out, "fd2-sh-nb", flock(fd2, LOCK_SH | LOCK_NB));
	close(fd2);
	close(fd);
}

static void chk_flock(struct ctx *c)
{
	REQUIRE(make_file(c, "f", 10, 160, 0644));
	cmp_side(c, "flock", side_flock, NULL);
}

/* POSIX locks: F_GETLK from another process sees the parent's lock. */
static void child_getlk(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	pid_t parent = *(const pid_t *)arg;
	int fd = openat(D, "f", O_RDWR);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };

	REC(out, "getlk", fcntl(fd, F_GETLK, &fl));
	sb_printf(out, "type=%s start=%lld len=%lld pid=%s ",
		  fl.l_type == F_WRLCK ? "WR" : fl.l_type == F_RDLCK ? "RD" :
		  fl.l_type == F_UNLCK ? "UN" : "?", (long long)fl.l_start,
		  (long long)fl.l_len, fl.l_type == F_UNLCK ? "-" :
		  fl.l_pid == parent ? "parent" : L("%d", fl.l_pid));
	struct flock in = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 150, .l_len = 10 };

	errno = 0;
	long r = fcntl(fd, F_SETLK, &in);

	/* POSIX allows EACCES or EAGAIN for a conflict. */
	sb_printf(out, "setlk-overlap=%s ", r == 0 ? "0" :
		  errno == EACCES || errno == EAGAIN ? "conflict" : ename(errno));
	struct flock away = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 300, .l_len = 100 };

	REC(out, "setlk-disjoint", fcntl(fd, F_SETLK, &away));
	struct flock ofd = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 100, .l_len = 1 };

	errno = 0;
	r = fcntl(fd, F_OFD_SETLK, &ofd);
	sb_printf(out, "ofd-setlk=%s ", r == 0 ? "0" :
		  errno == EACCES || errno == EAGAIN ? "conflict" : ename(errno));
	close(fd);
}

static void side_posix_locks(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	int fd = openat(D, "f", O_RDWR);
	pid_t me = getpid();
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 100, .l_len = 100 };

	(void)arg;
	REC(out, "setlk", fcntl(fd, F_SETLK, &fl));
	sb_printf(out, "[locked: ");
	in_child(c, S, child_getlk, &me, (uid_t)-1, out);
	fl.l_type = F_RDLCK;
	REC(out, "] downgrade", fcntl(fd, F_SETLK, &fl));
	sb_printf(out, "[read-locked: ");
	in_child(c, S, child_getlk, &me, (uid_t)-1, out);
	fl.l_type = F_UNLCK;
	REC(out, "] unlock", fcntl(fd, F_SETLK, &fl));
	sb_printf(out, "[unlocked: ");
	in_child(c, S, child_getlk, &me, (uid_t)-1, out);
	sb_printf(out, "]");
	/* Closing any fd of the file drops the process's POSIX locks. */
	int fd2 = openat(D, "f", O_RDONLY);

	fl.l_type = F_WRLCK;
	REC(out, "relock", fcntl(fd, F_SETLKW, &fl));
	close(fd2);
	sb_printf(out, "[after close of other fd: ");
	in_child(c, S, child_getlk, &me, (uid_t)-1, out);
	sb_printf(out, "]");
	close(fd);
}

static void chk_posix_locks(struct ctx *c)
{
	REQUIRE(make_file(c, "f", 1000, 161, 0644));
	cmp_side(c, "fcntl locks", side_posix_locks, NULL);
}

static void chk_access(struct ctx *c)
{
	static const int modes[] = { F_OK, R_OK, W_OK, X_OK, R_OK | W_OK, R_OK | W_OK | X_OK };
	static const char *const files[] = { "f644", "f755", "f000", "f100", "d", "missing", "l" };

	REQUIRE(make_file(c, "f644", 1, 170, 0644));
	REQUIRE(make_file(c, "f755", 1, 171, 0755));
	REQUIRE(make_file(c, "f000", 1, 172, 0000));
	REQUIRE(make_file(c, "f100", 1, 173, 0100));
	BOTH(c, "mkdir", mkdirat(D, "d", 0700));
	BOTH(c, "symlink", symlinkat("f000", D, "l"));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		for (size_t j = 0; j < sizeof(modes) / sizeof(modes[0]); j++) {
			BOTH(c, L("access %s %d", files[i], modes[j]),
			     faccessat(D, files[i], modes[j], 0));
			BOTH(c, L("eaccess %s %d", files[i], modes[j]),
			     faccessat(D, files[i], modes[j], AT_EACCESS | AT_SYMLINK_NOFOLLOW));
		}
}

static void side_mmap_read(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	int fd = openat(D, "f", O_RDONLY);
	uint8_t *m, *b = malloc(20000);
	bool same;

	(void)arg;
	m = mmap(NULL, 20000, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		sb_printf(out, "mmap=%s", ename(errno));
	} else {
		same = pread(fd, b, 20000, 0) == 20000 && !memcmp(b, m, 20000);
		/* The tail of the last page beyond EOF reads as zeros. */
		bool tail0 = true;

		for (size_t i = 20000; i < 20480; i++)
			tail0 = tail0 && !m[i];
		sb_printf(out, "mmap-equals-read=%d tail-zero=%d", same, tail0);
		munmap(m, 20000);
	}
	free(b);
	close(fd);
}

static void chk_mmap(struct ctx *c)
{
	int fd[2];
	uint8_t *m[2];

	REQUIRE(make_file(c, "f", 20000, 180, 0644));
	cmp_side(c, "mmap read", side_mmap_read, NULL);
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	REQUIRE(BOTH_OK(c, "mmap shared rw", ({
		m[S] = mmap(NULL, 20000, PROT_READ | PROT_WRITE, MAP_SHARED, fd[S], 0);
		m[S] == MAP_FAILED ? -1 : 0;
	})));
	for (int S = 0; S < 2; S++) {
		m[S][1] = 0xaa;
		memset(m[S] + 4095, 0xbb, 3);
		fill(m[S] + 10000, 101, 181);
		m[S][19999] = 0;
	}
	BOTH(c, "msync", msync(m[S], 20000, MS_SYNC));
	cmp_fd_data(c, "read after msync", fd);
	BOTH(c, "munmap", munmap(m[S], 20000));
	BOTH(c, "close", close(fd[S]));
	cmp_data(c, "fresh read after mmap write", "f");
	/* Grow with ftruncate, then fill the new area through a mapping. */
	REQUIRE(BOTH_OK(c, "reopen", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "ftruncate 40000", ftruncate(fd[S], 40000));
	REQUIRE(BOTH_OK(c, "mmap grown", ({
		m[S] = mmap(NULL, 40000, PROT_READ | PROT_WRITE, MAP_SHARED, fd[S], 0);
		m[S] == MAP_FAILED ? -1 : 0;
	})));
	for (int S = 0; S < 2; S++)
		fill(m[S] + 20000, 20000, 182);
	BOTH(c, "munmap grown (no msync)", munmap(m[S], 40000));
	BOTH(c, "fsync", fsync(fd[S]));
	cmp_fd_data(c, "read grown", fd);
	/* MAP_PRIVATE writes stay private. */
	REQUIRE(BOTH_OK(c, "mmap private", ({
		m[S] = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd[S], 0);
		m[S] == MAP_FAILED ? -1 : 0;
	})));
	for (int S = 0; S < 2; S++)
		memset(m[S], 0x11, 4096);
	BOTH(c, "munmap private", munmap(m[S], 4096));
	cmp_fd_data(c, "private write invisible", fd);
	BOTH(c, "close", close(fd[S]));
	REQUIRE(BOTH_OK(c, "open wronly", fd[S] = openat(D, "f", O_WRONLY)));
	BOTH(c, "mmap on O_WRONLY", ({
		void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd[S], 0);
		p == MAP_FAILED ? -1 : (munmap(p, 4096), 0);
	}));
	BOTH(c, "close wronly", close(fd[S]));
	cmp_data(c, "final data", "f");
}

static void chk_o_direct(struct ctx *c)
{
	int fd[2], cfd[2];
	uint8_t *b[2], *m[2];

	REQUIRE(make_file(c, "f", 10000, 190, 0644));
	REQUIRE(BOTH_OK(c, "open O_DIRECT", fd[S] = openat(D, "f", O_RDWR | O_DIRECT)));
	for (int S = 0; S < 2; S++) {
		if (posix_memalign((void **)&b[S], 4096, 16384))
			abort();
		fill(b[S], 16384, 191);
	}
	BOTH(c, "direct write 4096@4096", pwrite(fd[S], b[S], 4096, 4096));
	BOTH(c, "direct write 8192@12288", pwrite(fd[S], b[S], 8192, 12288));
	BOTH(c, "direct read 16384@0", pread(fd[S], b[S], 16384, 0));
	cmp_bytes(c, "direct read data", b[REF], 16384, b[MNT], 16384);
	cmp_fstat(c, "fstat", fd, 0);
	/*
	 * The mount opens O_DIRECT handles as FUSE direct_io files: a shared
	 * mapping of one must still work (FUSE_DIRECT_IO_ALLOW_MMAP) and show
	 * the direct writes; its stores must reach direct reads after msync.
	 */
	REQUIRE(BOTH_OK(c, "mmap O_DIRECT handle shared", ({
		m[S] = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_SHARED, fd[S], 0);
		m[S] == MAP_FAILED ? -1 : 0;
	})));
	cmp_bytes(c, "mapping shows direct writes", m[REF], 16384, m[MNT], 16384);
	for (int S = 0; S < 2; S++)
		memset(m[S] + 100, 0x5a, 5000);
	BOTH(c, "msync", msync(m[S], 16384, MS_SYNC));
	BOTH(c, "munmap", munmap(m[S], 16384));
	BOTH(c, "direct read after mmap write", pread(fd[S], b[S], 16384, 0));
	cmp_bytes(c, "direct read of mapped stores", b[REF], 16384, b[MNT], 16384);
	/* Past EOF and while a cached handle is open (the kernel serialises these). */
	REQUIRE(BOTH_OK(c, "open cached beside", cfd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "cached read", pread(cfd[S], b[S], 100, 50));
	BOTH(c, "direct write past EOF", pwrite(fd[S], b[S], 4096, 24576));
	BOTH(c, "cached read after direct", pread(cfd[S], b[S], 8192, 20480));
	cmp_bytes(c, "cached read sees direct write", b[REF], 8192, b[MNT], 8192);
	cmp_fstat(c, "fstat after extending", fd, 0);
	BOTH(c, "close cached", close(cfd[S]));
	BOTH(c, "close", close(fd[S]));
	cmp_data(c, "buffered read after direct", "f");
	free(b[REF]);
	free(b[MNT]);
}

static void chk_errno(struct ctx *c)
{
	char name[300];

	REQUIRE(make_file(c, "f", 10, 200, 0644));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	REQUIRE(make_file(c, "d/x", 10, 201, 0644));
	/* ENOENT */
	BOTH(c, "open missing", openat(D, "missing", O_RDONLY));
	BOTH(c, "open in missing dir", openat(D, "missing/f", O_RDONLY));
	BOTH(c, "unlink missing", unlinkat(D, "missing", 0));
	cmp_readlink(c, "readlink missing", "missing", 100);
	BOTH(c, "chmod missing", fchmodat(D, "missing", 0600, 0));
	BOTH(c, "open O_WRONLY missing", openat(D, "missing", O_WRONLY));
	/* EEXIST */
	BOTH(c, "mkdir existing", mkdirat(D, "d", 0755));
	BOTH(c, "mkdir over file", mkdirat(D, "f", 0755));
	BOTH(c, "O_EXCL existing", openat(D, "f", O_CREAT | O_EXCL | O_RDWR, 0644));
	BOTH(c, "symlink existing", symlinkat("t", D, "f"));
	BOTH(c, "link existing", linkat(D, "f", D, "d/x", 0));
	BOTH(c, "mknod existing", mknodat(D, "f", S_IFIFO | 0644, 0));
	/* ENOTEMPTY */
	BOTH(c, "rmdir non-empty", unlinkat(D, "d", AT_REMOVEDIR));
	/* ENOTDIR */
	BOTH(c, "open f/x", openat(D, "f/x", O_RDONLY));
	BOTH(c, "mkdir f/x", mkdirat(D, "f/x", 0755));
	BOTH(c, "create f/x", openat(D, "f/x", O_CREAT | O_WRONLY, 0644));
	BOTH(c, "rmdir file", unlinkat(D, "f", AT_REMOVEDIR));
	BOTH(c, "opendir file", openat(D, "f", O_RDONLY | O_DIRECTORY));
	BOTH(c, "stat f/", fstatat(D, "f/", &(struct stat){ 0 }, 0));
	/* EISDIR */
	BOTH(c, "open dir O_WRONLY", openat(D, "d", O_WRONLY));
	BOTH(c, "unlink dir", unlinkat(D, "d", 0));
	BOTH(c, "read dir fd", ({
		int f = openat(D, "d", O_RDONLY);
		char b;
		long r = read(f, &b, 1);
		int e = errno;
		close(f);
		errno = e;
		r;
	}));
	/* ENAMETOOLONG (255 is the limit, 256 fails) */
	memset(name, 'n', sizeof(name));
	name[255] = 0;
	BOTH(c, "create 255-byte name", ({ int f = openat(D, name, O_CREAT | O_WRONLY, 0644); if (f >= 0) close(f); f < 0 ? -1 : 0; }));
	cmp_stat(c, "stat 255-byte name", name, 0);
	name[255] = 'n';
	name[256] = 0;
	BOTH(c, "create 256-byte name", openat(D, name, O_CREAT | O_WRONLY, 0644));
	BOTH(c, "stat 256-byte name", fstatat(D, name, &(struct stat){ 0 }, 0));
	BOTH(c, "mkdir 256-byte name", mkdirat(D, name, 0755));
	BOTH(c, "symlink 256-byte name", symlinkat("f", D, name));
	BOTH(c, "rename to 256-byte name", renameat(D, "f", D, name));
	/* ELOOP, EINVAL, EBADF, EXDEV-free cases */
	BOTH(c, "symlink self", symlinkat("self", D, "self"));
	BOTH(c, "open self-loop", openat(D, "self", O_RDONLY));
	BOTH(c, "rename dir into own child", renameat(D, "d", D, "d/x/y"));
	BOTH(c, "write on closed fd", write(1000, "x", 1));
	cmp_dir(c, "listing", ".");
}

/* As uid/gid 65534: permission checks must be those of the plain dir. */
static void child_eacces(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	const struct timespec t[2] = { { 1, 0 }, { 2, 0 } };
	struct stat st;
	char b[16];
	int fd;

	(void)arg;
	REC(out, "stat-dir", fstatat(D, ".", &st, 0));
	REC(out, "open-0600", openat(D, "secret", O_RDONLY));
	fd = openat(D, "public", O_RDONLY);
	sb_res(out, "open-0644", fd < 0 ? -1 : 0, errno);
	REC(out, "read-0644", read(fd, b, sizeof(b)));
	close(fd);
	REC(out, "open-0644-wr", openat(D, "public", O_WRONLY));
	REC(out, "create-in-0755", openat(D, "rootdir/x", O_CREAT | O_WRONLY, 0644));
	REC(out, "mkdir-in-0755", mkdirat(D, "rootdir/y", 0755));
	REC(out, "unlink-in-0755", unlinkat(D, "public", 0));
	REC(out, "rename-in-0755", renameat(D, "public", D, "p2"));
	REC(out, "symlink-in-0755", symlinkat("x", D, "rootdir/l"));
	REC(out, "chmod-not-owner", fchmodat(D, "public", 0777, 0));
	REC(out, "chown-not-owner", fchownat(D, "public", 65534, 65534, 0));
	REC(out, "utimes-explicit-not-owner", utimensat(D, "public", t, 0));
	REC(out, "utimes-now-not-writable", utimensat(D, "public", NULL, 0));
	REC(out, "truncate-0644", truncate(P("public"), 0));
	REC(out, "access-0600-R", faccessat(D, "secret", R_OK, 0));
	REC(out, "access-0644-R", faccessat(D, "public", R_OK, 0));
	REC(out, "access-0644-W", faccessat(D, "public", W_OK, 0));
	REC(out, "setxattr-not-owner", fsetxattr(fd = openat(D, "public", O_RDONLY), "user.x", "1", 1, 0));
	close(fd);
	REC(out, "list-0700-dir", openat(D, "private", O_RDONLY | O_DIRECTORY));
	REC(out, "lookup-in-0700-dir", fstatat(D, "private/f", &st, 0));
	/* Things the user may do, with the result owned by the user. */
	fd = openat(D, "open/mine", O_CREAT | O_WRONLY, 0644);
	sb_res(out, "create-in-0777", fd < 0 ? -1 : 0, errno);
	REC(out, "write-mine", write(fd, "abc", 3));
	close(fd);
	if (!fstatat(D, "open/mine", &st, 0))
		sb_printf(out, "mine-owner=%u:%u mode=%o ", st.st_uid, st.st_gid, st.st_mode);
	REC(out, "mkdir-in-0777", mkdirat(D, "open/mydir", 0755));
	if (!fstatat(D, "open/mydir", &st, 0))
		sb_printf(out, "mydir-owner=%u:%u ", st.st_uid, st.st_gid);
	REC(out, "symlink-in-0777", symlinkat("mine", D, "open/mylink"));
	if (!fstatat(D, "open/mylink", &st, AT_SYMLINK_NOFOLLOW))
		sb_printf(out, "mylink-owner=%u:%u ", st.st_uid, st.st_gid);
	REC(out, "chmod-mine", fchmodat(D, "open/mine", 0600, 0));
	REC(out, "unlink-sticky-not-owner", unlinkat(D, "sticky/rootfile", 0));
	REC(out, "rename-sticky-not-owner", renameat(D, "sticky/rootfile", D, "sticky/r2"));
}

static void chk_eacces(struct ctx *c)
{
	REQUIRE(make_file(c, "secret", 10, 210, 0600));
	REQUIRE(make_file(c, "public", 10, 211, 0644));
	BOTH(c, "mkdir rootdir", mkdirat(D, "rootdir", 0755));
	BOTH(c, "mkdir open", mkdirat(D, "open", 0777));
	BOTH(c, "chmod open 0777", fchmodat(D, "open", 0777, 0));
	BOTH(c, "mkdir private", mkdirat(D, "private", 0700));
	REQUIRE(make_file(c, "private/f", 10, 212, 0644));
	BOTH(c, "mkdir sticky", mkdirat(D, "sticky", 0777));
	BOTH(c, "chmod sticky 1777", fchmodat(D, "sticky", 01777, 0));
	REQUIRE(make_file(c, "sticky/rootfile", 10, 213, 0666));
	/* The check dir is root's 0755; the harness made the roots 0755. */
	BOTH(c, "chmod check dir 0755", fchmodat(D, ".", 0755, 0));
	struct sbuf out[2];

	for (int S = 0; S < 2; S++) {
		out[S].n = 0;
		out[S].s[0] = 0;
		in_child(c, S, child_eacces, NULL, 65534, &out[S]);
	}
	if (strstr(out[MNT].s, "stat-dir=EACCES") && !strstr(out[REF].s, "stat-dir=EACCES"))
		note(c, "as uid 65534", "the mount refuses other users: mount with -o allow_other");
	cmp_str(c, "as uid 65534", out[REF].s, out[MNT].s);
	cmp_dir(c, "listing open", "open");
	cmp_data(c, "mine data", "open/mine");
	cmp_data(c, "public untouched", "public");
}

/* The modes chk_create_ro gives its files, as uid 65534. */
static const mode_t ro_modes[] = { 0, 0400, 0444, 0200 };

/*
 * As uid/gid 65534 in a 0777 directory: a create whose mode lacks
 * owner-write returns a writable fd, as on ext4 (issue 13 item 1: the
 * crypt layer's header xattr needs write permission on the inode); the
 * file is written, cut to 0 and written again through that fd.  Also in a
 * setgid 02777 directory of another group, where creation drops S_ISGID;
 * under a umask that removes owner-write; and a mknod'ed 0444 file whose
 * first open only reads.
 */
static void child_create_ro(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	static const char data[] = "written through the creating fd";
	struct stat st;
	char b[16];
	int fd;

	(void)arg;
	/* mknod, then a first open that may only read adopts the empty file. */
	REC(out, "mknod-0444", mknodat(D, "open/n444", S_IFREG | 0444, 0));
	fd = openat(D, "open/n444", O_RDONLY);
	sb_res(out, "open-n444", fd < 0 ? -1 : 0, errno);
	REC(out, "read-n444", read(fd, b, sizeof(b)));
	REC(out, "close-n444", close(fd));
	/* A umask that takes owner-write away: the mode arrives as 0444. */
	mode_t old = umask(0222);

	fd = openat(D, "open/u222", O_CREAT | O_RDWR, 0666);
	umask(old);
	sb_res(out, "create-0666-umask-0222", fd < 0 ? -1 : 0, errno);
	REC(out, "write-u222", write(fd, data, sizeof(data)));
	if (!fstat(fd, &st))
		sb_printf(out, "mode=%o ", st.st_mode);
	REC(out, "close-u222", close(fd));
	for (size_t i = 0; i <= sizeof(ro_modes) / sizeof(ro_modes[0]); i++) {
		bool sg = i == sizeof(ro_modes) / sizeof(ro_modes[0]);
		mode_t mode = sg ? 02555 : ro_modes[i];
		const char *name = sg ? "sg/m2555" : L("open/m%o", mode);

		fd = openat(D, name, O_CREAT | O_RDWR, mode);
		sb_res(out, L("create-%o", mode), fd < 0 ? -1 : 0, errno);
		if (fd < 0)
			continue;
		REC(out, "write", write(fd, data, sizeof(data)));
		REC(out, "ftruncate-0", ftruncate(fd, 0));
		REC(out, "pwrite", pwrite(fd, data, 11, 3));
		if (!fstat(fd, &st))
			sb_printf(out, "mode=%o uid=%u size=%lld ", st.st_mode, st.st_uid,
				  (long long)st.st_size);
		REC(out, "close", close(fd));
		/* The mode now applies: O_RDWR as ext4 decides it for this mode. */
		fd = openat(D, name, O_RDWR);
		sb_res(out, "reopen-rdwr", fd < 0 ? -1 : 0, errno);
		if (fd >= 0)
			close(fd);
	}
}

/* What chk_create_ro left, compared on both sides. */
static void cmp_create_ro(struct ctx *c, const char *when)
{
	for (size_t i = 0; i < sizeof(ro_modes) / sizeof(ro_modes[0]); i++) {
		const char *name = L("open/m%o", ro_modes[i]);

		cmp_stat(c, L("stat %s %s", name, when), name, 0);
		cmp_data(c, L("data %s %s", name, when), name);
	}
	cmp_stat(c, L("stat open/u222 %s", when), "open/u222", 0);
	cmp_data(c, L("data open/u222 %s", when), "open/u222");
	cmp_stat(c, L("stat open/n444 %s", when), "open/n444", 0);
	cmp_data(c, L("data open/n444 %s", when), "open/n444");
	cmp_stat(c, L("stat sg/m2555 %s", when), "sg/m2555", 0);
	cmp_data(c, L("data sg/m2555 %s", when), "sg/m2555");
}

static void chk_create_ro(struct ctx *c)
{
	const char *remount = getenv("SC_REMOUNT");
	struct sbuf out[2];

	BOTH(c, "mkdir open", mkdirat(D, "open", 0777));
	BOTH(c, "chmod open 0777", fchmodat(D, "open", 0777, 0));
	BOTH(c, "mkdir sg", mkdirat(D, "sg", 0777));
	BOTH(c, "chmod sg 02777", fchmodat(D, "sg", 02777, 0));
	BOTH(c, "chmod check dir 0755", fchmodat(D, ".", 0755, 0));
	for (int S = 0; S < 2; S++) {
		out[S].n = 0;
		out[S].s[0] = 0;
		in_child(c, S, child_create_ro, NULL, 65534, &out[S]);
	}
	cmp_str(c, "as uid 65534", out[REF].s, out[MNT].s);
	/* The adopted file's first data, written by root (who may). */
	BOTH(c, "root writes open/n444",
	     ({ int f = openat(D, "open/n444", O_WRONLY);
		long r = f < 0 ? -1 : write(f, "root data", 9); if (f >= 0) close(f); r; }));
	cmp_create_ro(c, "before remount");
	if (!remount || !*remount) {
		note(c, "remount", "skipped: no $SC_REMOUNT (run under harness.sh)");
		return;
	}
	/* The mount must not be busy: drop our directory fd on it meanwhile. */
	close(c->dfd[MNT]);
	c->dfd[MNT] = -1;
	fflush(stdout);
	if (system(remount) != 0) {
		verdict(c, "remount", false, "ok", "failed");
		c->dfd[MNT] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return;
	}
	c->dfd[MNT] = open(L("%s/%s", c->root[MNT], c->check), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!verdict(c, "reopen after remount", c->dfd[MNT] >= 0, "ok", ename(errno))) {
		c->dfd[MNT] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return;
	}
	cmp_create_ro(c, "after remount");
}

/* Offsets beyond 32 bits and near the backing filesystem's limits (unit
 * index and tweak arithmetic must not wrap). */
static void chk_large_offsets(struct ctx *c)
{
	static const off_t offs[] = {
		(1LL << 32) - 1, (1LL << 32) + 4093, 5LL << 30, (1LL << 40) + 3,
	};
	int fd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0644)));
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		pwrite2(c, L("pwrite at %lld", (long long)offs[i]), fd, offs[i], 5000, 230 + i);
		cmp_fstat(c, L("fstat after %lld", (long long)offs[i]), fd, 0);
		cmp_pread(c, L("pread around %lld", (long long)offs[i]), fd, offs[i] - 100, 5200);
	}
	cmp_pread(c, "pread earlier data again", fd, (1LL << 32) - 50, 100);
	cmp_pread(c, "pread hole at 3G", fd, 3LL << 30, 8192);
	BOTH(c, "ftruncate 2^44", ftruncate(fd[S], 1LL << 44));
	cmp_fstat(c, "fstat after 2^44", fd, 0);
	BOTH(c, "ftruncate 2^40+1", ftruncate(fd[S], (1LL << 40) + 1));
	cmp_pread(c, "tail after cut", fd, (1LL << 40) - 10, 100);
	BOTH(c, "lseek SEEK_END", lseek(fd[S], 0, SEEK_END));
	BOTH(c, "pwrite at 2^63-2", pwrite(fd[S], "x", 1, INT64_MAX - 1));
	BOTH(c, "ftruncate 2^62", ftruncate(fd[S], 1LL << 62));
	cmp_fstat(c, "fstat final", fd, 0);
	BOTH(c, "close", close(fd[S]));
}

/* The roots: same entries (a crypt stack hides its config file). */
static void chk_root(struct ctx *c)
{
	cmp_dir(c, "root listing", "..");
	cmp_stat(c, "root .stackcrypt.conf", "../.stackcrypt.conf", 0);
	BOTH(c, "open root .stackcrypt.conf", openat(D, "../.stackcrypt.conf", O_RDONLY));
}

/* Reads a whole file by path into a malloc'd buffer.  Returns the size or
 * -errno. */
static ssize_t slurp_path(const char *path, uint8_t **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	*out = NULL;
	if (fd < 0)
		return -errno;
	n = slurp_fd(fd, out);
	close(fd);
	return n;
}

/* Expects a mount-side call to fail (any errno): the crypt stack's config
 * file cannot be made, replaced or removed through the mount. */
#define REFUSED(c, label, expr) ({					\
		errno = 0;						\
		long ref_r = (long)(expr);				\
		verdict((c), (label), ref_r < 0, "(refused)",		\
			ref_r < 0 ? ename(errno) : "succeeded");	\
	})

/*
 * Crypt stacks: BACKING/.stackcrypt.conf is invisible at the mount's root
 * and nothing done through the mount may create, replace or remove it.
 * Mount side only (the plain directory has no such file); with BACKING in
 * the environment (harness.sh) the config's bytes must be unchanged after.
 */
static void chk_config_protected(struct ctx *c)
{
	const char *backing = getenv("BACKING");
	char conf[PATH_MAX];
	uint8_t *before = NULL, *after = NULL;
	ssize_t nb = 0, na;
	int root;

	if (!c->crypt)
		return;
	root = openat(c->dfd[MNT], "..", O_RDONLY | O_DIRECTORY);
	REQUIRE(verdict(c, "open root", root >= 0, "ok", ename(errno)));
	if (backing) {
		snprintf(conf, sizeof(conf), "%s/.stackcrypt.conf", backing);
		nb = slurp_path(conf, &before);
		verdict(c, "backing config readable", nb > 0, "> 0 bytes",
			nb < 0 ? ename((int)-nb) : L("%zd bytes", nb));
	}
	REQUIRE(make_file(c, "f", 10, 240, 0644));
	BOTH(c, "mkdir d", mkdirat(D, "d", 0755));
	REFUSED(c, "create", openat(root, ".stackcrypt.conf", O_CREAT | O_WRONLY | O_TRUNC, 0644));
	REFUSED(c, "create O_EXCL", openat(root, ".stackcrypt.conf", O_CREAT | O_EXCL | O_WRONLY, 0644));
	REFUSED(c, "mkdir", mkdirat(root, ".stackcrypt.conf", 0755));
	REFUSED(c, "mknod", mknodat(root, ".stackcrypt.conf", S_IFREG | 0644, 0));
	REFUSED(c, "symlink", symlinkat("x", root, ".stackcrypt.conf"));
	int dir = c->dfd[MNT];

	REFUSED(c, "link onto", linkat(dir, "f", root, ".stackcrypt.conf", 0));
	REFUSED(c, "rename onto", renameat(dir, "f", root, ".stackcrypt.conf"));
	REFUSED(c, "rename dir onto", renameat(dir, "d", root, ".stackcrypt.conf"));
	REFUSED(c, "exchange", renameat2(dir, "f", root, ".stackcrypt.conf", RENAME_EXCHANGE));
	REFUSED(c, "rename away", renameat(root, ".stackcrypt.conf", dir, "stolen"));
	REFUSED(c, "unlink", unlinkat(root, ".stackcrypt.conf", 0));
	REFUSED(c, "open", openat(root, ".stackcrypt.conf", O_RDONLY));
	REFUSED(c, "setxattr", setxattr(L("%s/.stackcrypt.conf", c->root[MNT]), "user.x", "1", 1, 0));
	REFUSED(c, "chmod", fchmodat(root, ".stackcrypt.conf", 0666, 0));
	REFUSED(c, "truncate", truncate(L("%s/.stackcrypt.conf", c->root[MNT]), 0));
	cmp_data(c, "f intact", "f");
	if (backing && nb > 0) {
		na = slurp_path(conf, &after);
		cmp_bytes(c, "backing config unchanged", before, nb, after, na);
	}
	free(before);
	free(after);
	close(root);
}

/* Fills the filesystem under dfd with one preallocated file.  Returns its
 * fd, or -1. */
static int fill_fs(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY, 0600);
	off_t off = 0, chunk = (off_t)1 << 30;

	if (fd < 0)
		return -1;
	while (chunk >= 4096) {
		if (fallocate(fd, 0, off, chunk) == 0)
			off += chunk;
		else if (errno == ENOSPC)
			chunk /= 2;
		else
			break;
	}
	return fd;
}

/*
 * ENOSPC from the backing filesystem reaches the caller unchanged, and
 * space freed afterwards is usable again.  Fills the filesystem, so it runs
 * only on the harness's small loop image (FSTYPE ext4/xfs, at most 8 GiB),
 * never on a shared /tmp.
 */
static void chk_enospc(struct ctx *c)
{
	const char *fstype = getenv("FSTYPE");
	int fd[2], nfd[2], filler, filler2;
	struct statfs sf;

	if (!fstype || (strcmp(fstype, "ext4") && strcmp(fstype, "xfs")) ||
	    fstatfs(c->dfd[REF], &sf) ||
	    (unsigned long long)sf.f_blocks * (unsigned long long)sf.f_bsize > (8ULL << 30)) {
		note(c, "skipped", "needs the harness's small ext4/xfs image (FSTYPE)");
		return;
	}
	REQUIRE(make_file(c, "f", 100, 220, 0644));
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	/* Files and directories made while there is room. */
	REQUIRE(BOTH_OK(c, "create n", nfd[S] = openat(D, "n", O_CREAT | O_RDWR, 0644)));
	BOTH(c, "syncfs", syncfs(fd[S]));
	filler = fill_fs(c->dfd[REF], "filler");
	if (filler < 0) {
		verdict(c, "fill the filesystem", false, strerror(errno), "-");
		goto out_close;
	}
	/* Blocks freed late (XFS frees unlinked inodes in the background)
	 * must not reach one side only: flush, then top up. */
	syncfs(filler);
	filler2 = fill_fs(c->dfd[REF], "filler2");

	pwrite2(c, "fill f's last block when full", fd, 100, 65536, 221);
	pwrite2(c, "write past EOF when full", fd, 12288, 4096, 225);
	pwrite2(c, "write n when full", nfd, 0, 65536, 222);
	BOTH(c, "fsync f when full", fsync(fd[S]));
	cmp_fstat(c, "f unchanged", fd, 0);
	cmp_fd_data(c, "f data when full", fd);
	BOTH(c, "fallocate when full", fallocate(fd[S], 0, 0, 1 << 20));
	/* Room again. */
	close(filler);
	if (filler2 >= 0)
		close(filler2);
	unlinkat(c->dfd[REF], "filler", 0);
	unlinkat(c->dfd[REF], "filler2", 0);
	BOTH(c, "syncfs after free", syncfs(fd[S]));
	pwrite2(c, "extend f after free", fd, 100, 65536, 223);
	pwrite2(c, "write n after free", nfd, 0, 65536, 224);
	cmp_fd_data(c, "f data after free", fd);
	cmp_fd_data(c, "n data after free", nfd);
out_close:
	BOTH(c, "close f", close(fd[S]));
	BOTH(c, "close n", close(nfd[S]));
}

/* ---------------------------------------------------------------------
 * The table and the driver
 */

static const struct check {
	const char *name;
	void (*run)(struct ctx *c);
} checks[] = {
	{ "lookup",		chk_lookup },
	{ "getattr",		chk_getattr },
	{ "chmod",		chk_chmod },
	{ "chown",		chk_chown },
	{ "truncate",		chk_truncate },
	{ "utimens",		chk_utimens },
	{ "readdir_large",	chk_readdir_large },
	{ "readdir_churn",	chk_readdir_churn },
	{ "readdir_seek",	chk_readdir_seek },
	{ "mkdir_rmdir",	chk_mkdir_rmdir },
	{ "mknod",		chk_mknod },
	{ "symlink",		chk_symlink },
	{ "link_unlink",	chk_link_unlink },
	{ "rename",		chk_rename },
	{ "rename_flags",	chk_rename_flags },
	{ "open_flags",		chk_open_flags },
	{ "create_modes",	chk_create_modes },
	{ "rw_offsets",		chk_rw_offsets },
	{ "rw_tail_sizes",	chk_rw_tail_sizes },
	{ "rw_boundaries",	chk_rw_boundaries },
	{ "holes",		chk_holes },
	{ "append",		chk_append },
	{ "sync",		chk_sync },
	{ "statfs",		chk_statfs },
	{ "xattr",		chk_xattr },
	{ "fallocate",		chk_fallocate },
	{ "seek_data_hole",	chk_seek_data_hole },
	{ "copy_file_range",	chk_copy_file_range },
	{ "flock",		chk_flock },
	{ "posix_locks",	chk_posix_locks },
	{ "access",		chk_access },
	{ "mmap",		chk_mmap },
	{ "o_direct",		chk_o_direct },
	{ "errno",		chk_errno },
	{ "eacces",		chk_eacces },
	{ "create_ro",		chk_create_ro },
	{ "large_offsets",	chk_large_offsets },
	{ "root",		chk_root },
	{ "config_protected",	chk_config_protected },
	{ "enospc",		chk_enospc },	/* last: it fills the filesystem */
};

static bool selected(const char *only, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = only; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return !only;
}

/* Makes the check's directory on both sides.  Returns 0 or -1. */
static int enter_check(struct ctx *c, const struct check *k)
{
	for (int S = 0; S < 2; S++) {
		int root = open(c->root[S], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (root < 0 || mkdirat(root, k->name, 0755) ||
		    (c->dfd[S] = openat(root, k->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
			printf("FAIL %s/setup: cannot make %s/%s: %s\n", k->name,
			       c->root[S], k->name, strerror(errno));
			if (root >= 0)
				close(root);
			if (S == MNT)
				close(c->dfd[REF]);
			return -1;
		}
		close(root);
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: battery [-v] [-c CHECK[,CHECK...]] [-l] [-F] [REF MNT]\n"
		"  Runs the same system calls in REF (a plain directory) and MNT (a\n"
		"  stackcrypt mount) and compares every outcome.  Without arguments,\n"
		"  REF and MNT come from the environment (as harness.sh exports them).\n"
		"  -v      print each check's name (-vv: every comparison)\n"
		"  -c LIST run only these checks\n"
		"  -l      list the checks\n"
		"  -F      self-test: treat one byte of every mount-side read as\n"
		"          flipped (the run must fail)\n"
		"  env CONFIG=passthrough|null|aes-xts|aes-cbc (default passthrough):\n"
		"          crypt stacks get issue #4's documented leeway\n");
}

int main(int argc, char **argv)
{
	struct ctx c = { .dfd = { -1, -1 } };
	const char *only = NULL, *config = getenv("CONFIG");
	int opt;

	while ((opt = getopt(argc, argv, "vc:lFh")) != -1) {
		switch (opt) {
		case 'F':
			c.inject = true;
			break;
		case 'v':
			c.verbose++;
			break;
		case 'c':
			only = optarg;
			break;
		case 'l':
			for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
				puts(checks[i].name);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind == 2) {
		c.root[REF] = argv[optind];
		c.root[MNT] = argv[optind + 1];
	} else if (argc == optind) {
		/* Under harness.sh: its exported REF and MNT. */
		c.root[REF] = getenv("REF");
		c.root[MNT] = getenv("MNT");
	}
	if (!c.root[REF] || !c.root[MNT]) {
		usage(stderr);
		return 2;
	}
	c.crypt = config && *config && strcmp(config, "passthrough");
	/* Modes must not depend on the caller's umask. */
	umask(022);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("battery: ref=%s mnt=%s config=%s\n", c.root[REF], c.root[MNT],
	       config && *config ? config : "passthrough");

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		const struct check *k = &checks[i];
		unsigned failed_before = c.failed;
		struct timespec t0, t1;

		if (!selected(only, k->name))
			continue;
		c.check = k->name;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (enter_check(&c, k)) {
			c.failed++;
			continue;
		}
		k->run(&c);
		close(c.dfd[REF]);
		close(c.dfd[MNT]);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (c.verbose)
			printf("%-4s %-16s %.2fs\n", c.failed == failed_before ? "ok" : "FAIL",
			       k->name, (double)(ns_of(t1) - ns_of(t0)) / 1e9);
	}
	printf("%u passed, %u failed\n", c.passed, c.failed);
	return c.failed ? 1 : 0;
}
