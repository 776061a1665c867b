// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * attrs.c - the battery's attribute checks: getattr, chmod, chown,
 * truncate, utimens (UTIME_NOW in a time window), statfs and xattrs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>

#include "battery_i.h"

void chk_getattr(struct ctx *c)
{
	int fd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0640)));
	bat_cmp_fstat(c, "fstat empty", fd, 0);
	bat_pwrite2(c, "write 10000", fd, 0, 10000, 2);
	/* Size as seen while the file is open and dirty, then by path. */
	bat_cmp_fstat(c, "fstat dirty", fd, 0);
	bat_cmp_stat(c, "stat dirty", "f", 0);
	bat_pwrite2(c, "write at 70000", fd, 70000, 3, 3);
	bat_cmp_fstat(c, "fstat extended", fd, 0);
	BOTH(c, "close", close(fd[S]));
	bat_cmp_stat(c, "stat closed", "f", 0);
	BOTH(c, "mkdir", mkdirat(D, "d", 0700));
	bat_cmp_stat(c, "stat dir", "d", 0);
	BOTH(c, "symlink", symlinkat("f", D, "l"));
	bat_cmp_stat(c, "lstat symlink", "l", 0);
	struct stat st[2];
	struct res x[2];

	EACH_SIDE(x, fstatat(D, "l", &st[S], 0));
	bat_cmp_stats(c, "stat through symlink", x, st, 0);
	EACH_SIDE(x, fstatat(D, "", &st[S], AT_EMPTY_PATH));
	bat_cmp_stats(c, "fstatat AT_EMPTY_PATH", x, st, 0);
}

void chk_chmod(struct ctx *c)
{
	static const mode_t modes[] = { 0600, 0755, 0, 04755, 02755, 01777, 0444, 07777 };
	int fd[2];

	REQUIRE(bat_make_file(c, "f", 100, 4, 0644));
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		BOTH(c, bat_label("chmod %o", modes[i]), fchmodat(D, "f", modes[i], 0));
		bat_cmp_stat(c, bat_label("stat after chmod %o", modes[i]), "f", 0);
	}
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDONLY)));
	BOTH(c, "fchmod 0640", fchmod(fd[S], 0640));
	bat_cmp_fstat(c, "fstat after fchmod", fd, 0);
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "chmod dir 0711", fchmodat(D, "d", 0711, 0));
	bat_cmp_stat(c, "stat dir", "d", 0);
	BOTH(c, "symlink", symlinkat("f", D, "l"));
	BOTH(c, "chmod symlink nofollow", fchmodat(D, "l", 0600, AT_SYMLINK_NOFOLLOW));
	BOTH(c, "chmod through symlink", fchmodat(D, "l", 0604, 0));
	bat_cmp_stat(c, "stat target", "f", 0);
	BOTH(c, "chmod missing", fchmodat(D, "missing", 0644, 0));
}

void chk_chown(struct ctx *c)
{
	int fd[2];

	REQUIRE(bat_make_file(c, "f", 100, 5, 0644));
	BOTH(c, "chown 65534:65534", fchownat(D, "f", 65534, 65534, 0));
	bat_cmp_stat(c, "stat", "f", 0);
	BOTH(c, "chown -1:100", fchownat(D, "f", (uid_t)-1, 100, 0));
	bat_cmp_stat(c, "stat gid only", "f", 0);
	BOTH(c, "chown 1000:-1", fchownat(D, "f", 1000, (gid_t)-1, 0));
	bat_cmp_stat(c, "stat uid only", "f", 0);
	/* chown clears set-user-ID and set-group-ID on an executable. */
	BOTH(c, "chmod 06755", fchmodat(D, "f", 06755, 0));
	BOTH(c, "chown 0:0", fchownat(D, "f", 0, 0, 0));
	bat_cmp_stat(c, "suid cleared", "f", 0);
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "fchown 2:3", fchown(fd[S], 2, 3));
	bat_cmp_fstat(c, "fstat after fchown", fd, 0);
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "symlink", symlinkat("f", D, "l"));
	BOTH(c, "lchown symlink", fchownat(D, "l", 7, 8, AT_SYMLINK_NOFOLLOW));
	bat_cmp_stat(c, "stat symlink", "l", 0);
	bat_cmp_stat(c, "target unchanged", "f", 0);
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "chown dir", fchownat(D, "d", 65534, 65534, 0));
	bat_cmp_stat(c, "stat dir", "d", 0);
	bat_cmp_data(c, "data intact", "f");
}

void chk_truncate(struct ctx *c)
{
	static const off_t sizes[] = {
		5000, 4096, 4095, 4097, 1, 0, 17, 16, 15, 8195, 100000, 511,
		512, 513, 0, 40, 1 << 20, 12289,
	};
	int fd[2];

	REQUIRE(bat_make_file(c, "f", 10000, 6, 0644));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		BOTH(c, bat_label("truncate %lld", (long long)sizes[i]),
		     truncate(P("f"), sizes[i]));
		bat_cmp_stat(c, bat_label("stat %lld", (long long)sizes[i]), "f", 0);
		bat_cmp_data(c, bat_label("data %lld", (long long)sizes[i]), "f");
	}
	/* ftruncate through an O_WRONLY fd must still keep the kept bytes:
	 * a crypt stack has to read the tail unit it rewrites. */
	REQUIRE(bat_make_file(c, "w", 9000, 7, 0644));
	REQUIRE(BOTH_OK(c, "open wronly", fd[S] = openat(D, "w", O_WRONLY)));
	BOTH(c, "ftruncate 6001", ftruncate(fd[S], 6001));
	BOTH(c, "ftruncate 4099", ftruncate(fd[S], 4099));
	BOTH(c, "ftruncate 5000 (grow)", ftruncate(fd[S], 5000));
	bat_pwrite2(c, "write at 4097", fd, 4097, 3, 8);
	BOTH(c, "ftruncate -1", ftruncate(fd[S], -1));
	bat_cmp_fstat(c, "fstat", fd, 0);
	BOTH(c, "close", close(fd[S]));
	bat_cmp_data(c, "data", "w");
	REQUIRE(BOTH_OK(c, "open rdonly", fd[S] = openat(D, "w", O_RDONLY)));
	BOTH(c, "ftruncate on O_RDONLY", ftruncate(fd[S], 10));
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	REQUIRE(BOTH_OK(c, "open dir", fd[S] = openat(D, "d", O_RDONLY | O_DIRECTORY)));
	BOTH(c, "ftruncate dir", ftruncate(fd[S], 0));
	BOTH(c, "close dir", close(fd[S]));
	bat_cmp_data(c, "data unchanged", "w");
}

/* UTIME_NOW must land between two clock readings taken around the call. */
struct now_arg {
	const char *path;
	const struct timespec *ts;	/* NULL: both now */
	int flags;
	bool use_fd;
};

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
	bat_sb_res(out, "ret", r, errno);
	clock_gettime(CLOCK_REALTIME, &t1);
	if (fstatat(D, a->path, &st, AT_SYMLINK_NOFOLLOW)) {
		bat_sb_printf(out, "stat=%s", bat_ename(errno));
		return;
	}
	/* File times come from a coarse clock that may lag a tick. */
	long long lo = bat_ns_of(t0) - 50000000LL, hi = bat_ns_of(t1) + 50000000LL;

	for (int i = 0; i < 2; i++) {
		struct timespec got = i ? st.st_mtim : st.st_atim;
		struct timespec was = i ? before.st_mtim : before.st_atim;
		const char *name = i ? "mtime" : "atime";

		if (a->ts && a->ts[i].tv_nsec == UTIME_OMIT)
			bat_sb_printf(out, "%s=%s ", name, bat_ns_of(got) == bat_ns_of(was) ? "kept" : "changed");
		else if (!a->ts || a->ts[i].tv_nsec == UTIME_NOW)
			bat_sb_printf(out, "%s=%s ", name, bat_ns_of(got) >= lo && bat_ns_of(got) <= hi ?
				      "now" : bat_label("%lld not in [%lld,%lld]", bat_ns_of(got), lo, hi));
		else
			bat_sb_printf(out, "%s=%lld ", name, bat_ns_of(got));
	}
}

void chk_utimens(struct ctx *c)
{
	const struct timespec t1[2] = { { 1000000000, 123456789 }, { 1200000000, 987654321 } };
	const struct timespec t2[2] = { { 1300000000, 5 }, { 0, UTIME_OMIT } };
	const struct timespec t3[2] = { { 0, UTIME_OMIT }, { 1400000000, 999999999 } };
	const struct timespec t4[2] = { { 0, UTIME_OMIT }, { 0, UTIME_NOW } };
	const struct timespec t5[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
	const struct timespec told[2] = { { 12345, 0 }, { 23456, 0 } };
	int fd[2];

	REQUIRE(bat_make_file(c, "f", 3000, 9, 0644));
	BOTH(c, "utimensat explicit", utimensat(D, "f", t1, 0));
	bat_cmp_stat(c, "times explicit", "f", ST_MTIME | ST_ATIME);
	BOTH(c, "utimensat mtime OMIT", utimensat(D, "f", t2, 0));
	bat_cmp_stat(c, "times mtime kept", "f", ST_MTIME | ST_ATIME);
	BOTH(c, "utimensat atime OMIT", utimensat(D, "f", t3, 0));
	bat_cmp_stat(c, "times atime kept", "f", ST_MTIME | ST_ATIME);
	BOTH(c, "utimensat old times", utimensat(D, "f", told, 0));
	bat_cmp_stat(c, "times old", "f", ST_MTIME | ST_ATIME);

	struct now_arg a = { .path = "f" };

	a.ts = t4;
	bat_cmp_side(c, "mtime NOW atime OMIT", side_utime_now, &a);
	a.ts = t5;
	bat_cmp_side(c, "atime NOW mtime OMIT", side_utime_now, &a);
	a.ts = NULL;
	bat_cmp_side(c, "both NOW (times == NULL)", side_utime_now, &a);
	a.use_fd = true;
	a.ts = t4;
	bat_cmp_side(c, "futimens mtime NOW", side_utime_now, &a);

	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "futimens explicit", futimens(fd[S], t1));
	bat_cmp_fstat(c, "fstat times", fd, ST_MTIME | ST_ATIME);
	/* A write moves mtime forward from an old explicit value. */
	BOTH(c, "futimens old", futimens(fd[S], told));
	bat_pwrite2(c, "write", fd, 10, 10, 10);
	BOTH(c, "close", close(fd[S]));
	struct stat st;

	BOTH(c, "write updated mtime", ({
		fstatat(D, "f", &st, 0);
		st.st_mtim.tv_sec > 1000000000;
	}));

	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "utimensat dir", utimensat(D, "d", t1, 0));
	bat_cmp_stat(c, "dir times", "d", ST_MTIME | ST_ATIME);
	BOTH(c, "symlink", symlinkat("f", D, "l"));
	BOTH(c, "utimensat symlink nofollow", utimensat(D, "l", t3, AT_SYMLINK_NOFOLLOW));
	bat_cmp_stat(c, "symlink mtime", "l", ST_MTIME);
	BOTH(c, "utimensat missing", utimensat(D, "missing", t1, 0));
	BOTH(c, "utimensat bad nsec", utimensat(D, "f", (struct timespec[2]) {
		{ 0, 1000000000 }, { 0, 0 } }, 0));
}

void chk_statfs(struct ctx *c)
{
	struct statfs sf[2];
	struct statvfs sv[2];
	struct res x[2];
	char a[160], b[160];

	EACH_SIDE(x, statfs(bat_label("%s", c->root[S]), &sf[S]));
	REQUIRE(bat_cmp_res(c, "statfs", x, CMP_OK));
	EACH_SIDE(x, fstatvfs(D, &sv[S]));
	REQUIRE(bat_cmp_res(c, "fstatvfs", x, CMP_OK));
	for (int S = 0; S < 2; S++) {
		/* The mount reports the backing filesystem's geometry. */
		snprintf(S ? b : a, sizeof(a), "namelen=%ld blocks*frsize=%llu frsize=%ld",
			 (long)sf[S].f_namelen,
			 (unsigned long long)sf[S].f_blocks * (unsigned long long)sf[S].f_frsize,
			 (long)sf[S].f_frsize);
	}
	bat_cmp_str(c, "geometry", a, b);
	for (int S = 0; S < 2; S++) {
		long bs = sf[S].f_bsize;
		bool sane = bs >= 512 && bs <= (1 << 20) && !(bs & (bs - 1)) &&
			    sf[S].f_bfree <= sf[S].f_blocks &&
			    sf[S].f_bavail <= sf[S].f_bfree &&
			    sf[S].f_ffree <= sf[S].f_files &&
			    sv[S].f_namemax == 255;
		snprintf(S ? b : a, sizeof(a), "%s", sane ? "sane" :
			 bat_label("bsize=%ld blocks=%llu bfree=%llu bavail=%llu files=%llu ffree=%llu",
				   bs, (unsigned long long)sf[S].f_blocks,
				   (unsigned long long)sf[S].f_bfree,
				   (unsigned long long)sf[S].f_bavail,
				   (unsigned long long)sf[S].f_files,
				   (unsigned long long)sf[S].f_ffree));
	}
	bat_cmp_str(c, "bsize and counts", a, b);
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
	ok = bat_cmp_res(c, label, x, CMP_VALUE);
	if (ok && size && x[REF].r > 0)
		ok = bat_cmp_bytes(c, bat_label("%s value", label), (uint8_t *)v[REF], x[REF].r,
				   (uint8_t *)v[MNT], x[MNT].r);
	free(v[REF]);
	free(v[MNT]);
	return ok;
}

void chk_xattr(struct ctx *c)
{
	char big[2000], v[2][64];
	int fd[2];

	REQUIRE(bat_make_file(c, "f", 100, 120, 0644));
	bat_cmp_xattr_list(c, "list fresh file", "f");
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
	bat_fill((uint8_t *)big, sizeof(big), 121);
	BOTH(c, "set 2000-byte value", setxattr(P("f"), "user.big", big, sizeof(big), 0));
	cmp_getxattr(c, "get into small buffer", "f", "user.big", 10);
	cmp_getxattr(c, "get big", "f", "user.big", 4096);
	BOTH(c, "set empty value", setxattr(P("f"), "user.empty", "", 0, 0));
	cmp_getxattr(c, "get empty value", "f", "user.empty", 100);
	for (int i = 0; i < 20; i++)
		BOTH(c, bat_label("set user.n%d", i), setxattr(P("f"), bat_label("user.n%d", i), "x", 1, 0));
	bat_cmp_xattr_list(c, "list 23 attrs", "f");
	BOTH(c, "listxattr size 23", listxattr(P("f"), NULL, 0));
	BOTH(c, "listxattr small buffer", listxattr(P("f"), v[S], 5));
	BOTH(c, "remove user.a", removexattr(P("f"), "user.a"));
	cmp_getxattr(c, "get removed", "f", "user.a", 100);
	BOTH(c, "remove missing", removexattr(P("f"), "user.a"));
	BOTH(c, "remove big", removexattr(P("f"), "user.big"));
	BOTH(c, "set bad namespace", setxattr(P("f"), "bogus.a", "1", 1, 0));
	BOTH(c, "set trusted.t", setxattr(P("f"), "trusted.t", "t", 1, 0));
	cmp_getxattr(c, "get trusted.t", "f", "trusted.t", 100);
	bat_cmp_xattr_list(c, "list after", "f");
	/* Via an fd. */
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "fsetxattr", fsetxattr(fd[S], "user.fd", "abc", 3, 0));
	BOTH(c, "fgetxattr", fgetxattr(fd[S], "user.fd", v[S], sizeof(v[S])));
	bat_cmp_bytes(c, "fgetxattr value", (uint8_t *)v[REF], 3, (uint8_t *)v[MNT], 3);
	BOTH(c, "flistxattr size", flistxattr(fd[S], NULL, 0));
	BOTH(c, "fremovexattr", fremovexattr(fd[S], "user.fd"));
	BOTH(c, "close", close(fd[S]));
	bat_cmp_data(c, "data untouched by xattrs", "f");
	/* Directories and symlinks. */
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "set on dir", setxattr(P("d"), "user.d", "dd", 2, 0));
	cmp_getxattr(c, "get on dir", "d", "user.d", 100);
	bat_cmp_xattr_list(c, "list dir", "d");
	BOTH(c, "symlink", symlinkat("f", D, "l"));
	BOTH(c, "lsetxattr user on symlink", lsetxattr(P("l"), "user.l", "1", 1, 0));
	bat_cmp_xattr_list(c, "list symlink", "l");
	BOTH(c, "setxattr through symlink", setxattr(P("l"), "user.via", "1", 1, 0));
	bat_cmp_xattr_list(c, "list target via symlink", "f");
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

		cmp_getxattr(c, bat_label("get %s", h), "f", h, 4096);
		cmp_getxattr(c, bat_label("get %s size", h), "f", h, 0);
		BOTH(c, bat_label("remove missing %s", h), removexattr(P("f"), h));
		BOTH(c, bat_label("set %s", h), setxattr(P("f"), h, bat_label("v%zu", i), 2, XATTR_CREATE));
		BOTH(c, bat_label("set %s exclusive again", h), setxattr(P("f"), h, "w", 1, XATTR_CREATE));
		cmp_getxattr(c, bat_label("get %s after set", h), "f", h, 4096);
		bat_cmp_xattr_list(c, bat_label("list with %s", h), "f");
		BOTH(c, bat_label("listxattr size with %s", h), listxattr(P("f"), NULL, 0));
	}
	bat_cmp_data(c, "data with outer header names", "f");
	for (size_t i = 0; i < sizeof(hdr_names) / sizeof(hdr_names[0]); i++)
		BOTH(c, bat_label("remove %s", hdr_names[i]), removexattr(P("f"), hdr_names[i]));
	bat_cmp_xattr_list(c, "list after removing them", "f");
	bat_cmp_data(c, "data after header attempts", "f");
	/*
	 * A list longer than the crypt layer's first, on-stack fetch (2 KiB,
	 * fs/xlators/xlator.c): 60 names of 44 characters, 2 700 bytes of list,
	 * within ext4's one block of xattrs.
	 */
	for (int i = 0; i < 60; i++)
		BOTH(c, bat_label("set long name %d", i),
		     setxattr(P("f"), bat_label("user.a-rather-long-attribute-name-number-%03d", i),
			      "", 0, 0));
	bat_cmp_xattr_list(c, "list of 2 700 bytes", "f");
	BOTH(c, "listxattr size of a long list", listxattr(P("f"), NULL, 0));
	BOTH(c, "long list into a short buffer", listxattr(P("f"), big, 1024));
	for (int i = 0; i < 60; i++)
		BOTH(c, bat_label("remove long name %d", i),
		     removexattr(P("f"), bat_label("user.a-rather-long-attribute-name-number-%03d", i)));
	bat_cmp_xattr_list(c, "list after the long names", "f");
}
