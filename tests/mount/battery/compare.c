// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * compare.c - the battery's comparison helpers: verdicts and FAIL lines,
 * paired calls on both sides, data, stat, listing and xattr-list
 * comparisons, and per-side results built in a child process (another
 * uid) and compared as strings.
 */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "battery_i.h"

const char *bat_ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";

	return n ? n : "E?";
}

/* A label with printf arguments; a few rotating buffers so that one
 * statement may build more than one. */
const char *bat_label(const char *fmt, ...)
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
bool bat_verdict(struct ctx *c, const char *label, bool ok,
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
bool bat_cmp_str(struct ctx *c, const char *label, const char *ref,
		 const char *mnt)
{
	return bat_verdict(c, label, strcmp(ref, mnt) == 0, ref, mnt);
}

void bat_note(struct ctx *c, const char *label, const char *what)
{
	printf("NOTE %s/%s: %s\n", c->check, label, what);
}

void bat_sb_printf(struct sbuf *b, const char *fmt, ...)
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
void bat_sb_res(struct sbuf *b, const char *label, long r, int e)
{
	if (r < 0)
		bat_sb_printf(b, "%s=%s ", label, bat_ename(e));
	else
		bat_sb_printf(b, "%s=%ld ", label, r);
}

static void res_str(char *buf, size_t n, struct res x, bool value)
{
	if (x.r < 0)
		snprintf(buf, n, "%ld %s", x.r, bat_ename(x.e));
	else if (value)
		snprintf(buf, n, "%ld", x.r);
	else
		snprintf(buf, n, "ok");
}

/* Compares a pair of outcomes.  Returns true if they match. */
bool bat_cmp_res(struct ctx *c, const char *label, const struct res x[2],
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
	return bat_verdict(c, label, same, a, b);
}

/*
 * Like bat_cmp_res(CMP_VALUE), but in a crypt stack the mount may instead fail
 * with @alt (issue #4: fallocate modes that change contents may return
 * EOPNOTSUPP).  Returns SAME, ALT (leeway taken: the caller must not compare
 * what follows from the call) or DIFF.
 */
enum leeway bat_cmp_res_alt(struct ctx *c, const char *label,
			    const struct res x[2], int alt)
{
	if (c->crypt && x[MNT].r < 0 && x[MNT].e == alt &&
	    !(x[REF].r < 0 && x[REF].e == alt)) {
		c->passed++;
		bat_note(c, label, bat_label("mount returned %s (allowed for crypt stacks)",
					     bat_ename(alt)));
		return ALT;
	}
	return bat_cmp_res(c, label, x, CMP_VALUE) ? SAME : DIFF;
}

/* Deterministic bytes: no runs of zeros, different per salt. */
void bat_fill(uint8_t *buf, size_t len, unsigned salt)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)((((uint32_t)i + salt * 7919u) * 2654435761u) >> 24) | 1;
}

/* Reads all of fd from offset 0 into a malloc'd buffer.  Returns the size,
 * or -errno (then *out is NULL). */
ssize_t bat_slurp_fd(int fd, uint8_t **out)
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
bool bat_cmp_bytes(struct ctx *c, const char *label, const uint8_t *a,
		   ssize_t na, const uint8_t *b, ssize_t nb)
{
	char ra[96], rb[96];

	if (na < 0 || nb < 0) {
		snprintf(ra, sizeof(ra), "%s", na < 0 ? bat_ename((int)-na) : bat_label("size=%zd", na));
		snprintf(rb, sizeof(rb), "%s", nb < 0 ? bat_ename((int)-nb) : bat_label("size=%zd", nb));
		return bat_verdict(c, label, na == nb, ra, rb);
	}
	if (na != nb) {
		snprintf(ra, sizeof(ra), "size=%zd", na);
		snprintf(rb, sizeof(rb), "size=%zd", nb);
		return bat_verdict(c, label, false, ra, rb);
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
			return bat_verdict(c, label, false, ra, rb);
		}
	}
	snprintf(ra, sizeof(ra), "%zd bytes", na);
	return bat_verdict(c, label, true, ra, ra);
}

/* Compares the whole contents of an open file on both sides. */
bool bat_cmp_fd_data(struct ctx *c, const char *label, const int fd[2])
{
	uint8_t *buf[2];
	ssize_t n[2];
	bool ok;

	for (int S = 0; S < 2; S++)
		n[S] = bat_slurp_fd(fd[S], &buf[S]);
	ok = bat_cmp_bytes(c, label, buf[REF], n[REF], buf[MNT], n[MNT]);
	free(buf[REF]);
	free(buf[MNT]);
	return ok;
}

/* Compares the whole contents of PATH (opened afresh) on both sides. */
bool bat_cmp_data(struct ctx *c, const char *label, const char *path)
{
	int fd[2];
	bool ok;

	for (int S = 0; S < 2; S++)
		fd[S] = openat(D, path, O_RDONLY | O_CLOEXEC);
	if (fd[REF] < 0 || fd[MNT] < 0) {
		struct res x[2] = { { fd[REF], errno }, { fd[MNT], errno } };

		ok = bat_cmp_res(c, label, x, CMP_OK);
	} else {
		ok = bat_cmp_fd_data(c, label, fd);
	}
	for (int S = 0; S < 2; S++)
		if (fd[S] >= 0)
			close(fd[S]);
	return ok;
}

/* Compares one pread() on both sides: return value and bytes. */
bool bat_cmp_pread(struct ctx *c, const char *label, const int fd[2],
		   off_t off, size_t len)
{
	uint8_t *buf[2] = { malloc(len + 1), malloc(len + 1) };
	struct res x[2];
	bool ok;

	EACH_SIDE(x, pread(fd[S], buf[S], len, off));
	ok = bat_cmp_res(c, label, x, CMP_VALUE);
	if (ok && x[REF].r > 0)
		ok = bat_cmp_bytes(c, bat_label("%s data", label), buf[REF], x[REF].r,
				   buf[MNT], x[MNT].r);
	free(buf[REF]);
	free(buf[MNT]);
	return ok;
}

/* Writes LEN pattern bytes at OFF on both sides; compares the result. */
bool bat_pwrite2(struct ctx *c, const char *label, const int fd[2],
		 off_t off, size_t len, unsigned salt)
{
	uint8_t *buf = malloc(len + 1);
	bool ok;

	bat_fill(buf, len, salt);
	ok = BOTH(c, label, pwrite(fd[S], buf, len, off));
	free(buf);
	return ok;
}

/* Creates PATH with LEN pattern bytes on both sides. */
bool bat_make_file(struct ctx *c, const char *path, size_t len,
		   unsigned salt, mode_t mode)
{
	int fd[2];

	if (!BOTH_OK(c, bat_label("create %s", path),
		     fd[S] = openat(D, path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, mode)))
		return false;
	if (len)
		bat_pwrite2(c, bat_label("fill %s", path), fd, 0, len, salt);
	return BOTH(c, bat_label("close %s", path), close(fd[S]));
}

/* readlink()s PATH on both sides into a BUFSIZE buffer; compares the return
 * values and the text returned. */
bool bat_cmp_readlink(struct ctx *c, const char *label, const char *path,
		      size_t bufsize)
{
	char *buf[2] = { malloc(bufsize + 1), malloc(bufsize + 1) };
	struct res x[2];
	bool ok;

	EACH_SIDE(x, readlinkat(D, path, buf[S], bufsize));
	ok = bat_cmp_res(c, label, x, CMP_VALUE);
	if (ok && x[REF].r > 0)
		ok = bat_cmp_bytes(c, bat_label("%s text", label), (uint8_t *)buf[REF], x[REF].r,
				   (uint8_t *)buf[MNT], x[MNT].r);
	free(buf[REF]);
	free(buf[MNT]);
	return ok;
}

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

bool bat_cmp_stats(struct ctx *c, const char *label, const struct res x[2],
		   const struct stat st[2], unsigned what)
{
	char a[256], b[256];

	if (c->crypt)
		what &= ~ST_BLOCKS;
	if (!bat_cmp_res(c, bat_label("%s ret", label), x, CMP_OK) || x[REF].r < 0)
		return x[REF].r < 0 && x[MNT].r < 0;
	stat_str(a, sizeof(a), &st[REF], what);
	stat_str(b, sizeof(b), &st[MNT], what);
	return bat_cmp_str(c, label, a, b);
}

/* lstat()s PATH on both sides and compares the fields WHAT selects (mode,
 * nlink, uid, gid, size and rdev always). */
bool bat_cmp_stat(struct ctx *c, const char *label, const char *path,
		  unsigned what)
{
	struct stat st[2];
	struct res x[2];

	memset(st, 0, sizeof(st));
	EACH_SIDE(x, fstatat(D, path, &st[S], AT_SYMLINK_NOFOLLOW));
	return bat_cmp_stats(c, label, x, st, what);
}

/* fstat()s an open file on both sides; as bat_cmp_stat(). */
bool bat_cmp_fstat(struct ctx *c, const char *label, const int fd[2],
		   unsigned what)
{
	struct stat st[2];
	struct res x[2];

	memset(st, 0, sizeof(st));
	EACH_SIDE(x, fstat(fd[S], &st[S]));
	return bat_cmp_stats(c, label, x, st, what);
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
		snprintf(a, sizeof(a), "%s", n[REF] < 0 ? bat_ename(-n[REF]) : bat_label("%d entries", n[REF]));
		snprintf(b, sizeof(b), "%s", n[MNT] < 0 ? bat_ename(-n[MNT]) : bat_label("%d entries", n[MNT]));
		return bat_verdict(c, label, n[REF] == n[MNT], a, b);
	}
	for (i = 0; i < n[REF] && i < n[MNT]; i++)
		if (strcmp(v[REF][i], v[MNT][i]))
			break;
	if (i == n[REF] && i == n[MNT]) {
		snprintf(a, sizeof(a), "%d entries", n[REF]);
		return bat_verdict(c, label, true, a, a);
	}
	snprintf(a, sizeof(a), "%d entries, [%d]=%.200s", n[REF], i,
		 i < n[REF] ? v[REF][i] : "(end)");
	snprintf(b, sizeof(b), "%d entries, [%d]=%.200s", n[MNT], i,
		 i < n[MNT] ? v[MNT][i] : "(end)");
	return bat_verdict(c, label, false, a, b);
}

/* Lists PATH on both sides with LIST (list_dir or list_xattrs) and
 * compares the two sorted lists. */
static bool cmp_listed(struct ctx *c, const char *label, const char *path,
		       int (*list)(int dfd, const char *path, char ***out))
{
	char **v[2];
	int n[2];
	bool ok;

	for (int S = 0; S < 2; S++)
		n[S] = list(D, path, &v[S]);
	ok = cmp_lists(c, label, v, n);
	for (int S = 0; S < 2; S++)
		if (n[S] >= 0)
			free_list(v[S], n[S]);
	return ok;
}

/* Compares the sorted listing (names and d_type) of directory PATH. */
bool bat_cmp_dir(struct ctx *c, const char *label, const char *path)
{
	return cmp_listed(c, label, path, list_dir);
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
bool bat_cmp_xattr_list(struct ctx *c, const char *label, const char *path)
{
	return cmp_listed(c, label, path, list_xattrs);
}

/* Runs FN once per side and compares the strings it built. */
bool bat_cmp_side(struct ctx *c, const char *label, side_fn *fn, void *arg)
{
	static struct sbuf sb[2];

	for (int S = 0; S < 2; S++) {
		sb[S].n = 0;
		sb[S].s[0] = 0;
		fn(c, S, arg, &sb[S]);
	}
	return bat_cmp_str(c, label, sb[REF].s, sb[MNT].s);
}

/* Runs FN on side S in a child process (as uid/gid @uid if not -1) and
 * collects the string it built; a crash of the child is part of the result. */
void bat_in_child(struct ctx *c, int S, side_fn *fn, void *arg, uid_t uid,
		  struct sbuf *out)
{
	int p[2], status;
	pid_t pid;
	ssize_t k;

	fflush(stdout);
	if (pipe(p)) {
		bat_sb_printf(out, "pipe: %s", bat_ename(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		bat_sb_printf(out, "fork: %s", bat_ename(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		static struct sbuf sb;

		close(p[0]);
		if (uid != (uid_t)-1 &&
		    (setgroups(0, NULL) || setgid(uid) || setuid(uid))) {
			bat_sb_printf(&sb, "setuid: %s", bat_ename(errno));
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
		bat_sb_printf(out, " child-status=%#x", status);
}

long long bat_ns_of(struct timespec t)
{
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
