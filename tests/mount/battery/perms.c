// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * perms.c - the battery's permission and errno checks: creation modes and
 * umask, access/eaccess, errno of bad calls, and, as uid/gid 65534,
 * EACCES and files created without owner-write (create_ro, with a
 * remount).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/xattr.h>

#include "battery_i.h"

void chk_create_modes(struct ctx *c)
{
	static const mode_t modes[] = {
		0777, 0666, 0644, 0600, 0400, 0000, 04755, 02755, 01755, 0111
	};
	int fd[2];

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *name = bat_label("m%o", modes[i]);

		/* The creating fd may write even when the mode forbids it. */
		REQUIRE(BOTH_OK(c, bat_label("create %o", modes[i]),
				fd[S] = openat(D, name, O_CREAT | O_EXCL | O_RDWR, modes[i])));
		bat_pwrite2(c, bat_label("write %o", modes[i]), fd, 4090, 20, 30 + i);
		bat_cmp_fd_data(c, bat_label("read back %o", modes[i]), fd);
		BOTH(c, bat_label("close %o", modes[i]), close(fd[S]));
		bat_cmp_stat(c, bat_label("stat %o", modes[i]), name, 0);
	}
	mode_t old = umask(077);

	BOTH(c, "create under umask 077",
	     ({ int f = openat(D, "u077", O_CREAT | O_WRONLY, 0777); if (f >= 0) close(f); f < 0 ? -1 : 0; }));
	BOTH(c, "mkdir under umask 077", mkdirat(D, "d077", 0777));
	umask(old);
	bat_cmp_stat(c, "stat u077", "u077", 0);
	bat_cmp_stat(c, "stat d077", "d077", 0);
	BOTH(c, "creat() in missing dir", openat(D, "missing/f", O_CREAT | O_WRONLY, 0644));
}

void chk_access(struct ctx *c)
{
	static const int modes[] = { F_OK, R_OK, W_OK, X_OK, R_OK | W_OK, R_OK | W_OK | X_OK };
	static const char *const files[] = { "f644", "f755", "f000", "f100", "d", "missing", "l" };

	REQUIRE(bat_make_file(c, "f644", 1, 170, 0644));
	REQUIRE(bat_make_file(c, "f755", 1, 171, 0755));
	REQUIRE(bat_make_file(c, "f000", 1, 172, 0000));
	REQUIRE(bat_make_file(c, "f100", 1, 173, 0100));
	BOTH(c, "mkdir", mkdirat(D, "d", 0700));
	BOTH(c, "symlink", symlinkat("f000", D, "l"));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		for (size_t j = 0; j < sizeof(modes) / sizeof(modes[0]); j++) {
			BOTH(c, bat_label("access %s %d", files[i], modes[j]),
			     faccessat(D, files[i], modes[j], 0));
			BOTH(c, bat_label("eaccess %s %d", files[i], modes[j]),
			     faccessat(D, files[i], modes[j], AT_EACCESS | AT_SYMLINK_NOFOLLOW));
		}
}

void chk_errno(struct ctx *c)
{
	char name[300];

	REQUIRE(bat_make_file(c, "f", 10, 200, 0644));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	REQUIRE(bat_make_file(c, "d/x", 10, 201, 0644));
	/* ENOENT */
	BOTH(c, "open missing", openat(D, "missing", O_RDONLY));
	BOTH(c, "open in missing dir", openat(D, "missing/f", O_RDONLY));
	BOTH(c, "unlink missing", unlinkat(D, "missing", 0));
	bat_cmp_readlink(c, "readlink missing", "missing", 100);
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
	bat_cmp_stat(c, "stat 255-byte name", name, 0);
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
	bat_cmp_dir(c, "listing", ".");
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
	bat_sb_res(out, "open-0644", fd < 0 ? -1 : 0, errno);
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
	bat_sb_res(out, "create-in-0777", fd < 0 ? -1 : 0, errno);
	REC(out, "write-mine", write(fd, "abc", 3));
	close(fd);
	if (!fstatat(D, "open/mine", &st, 0))
		bat_sb_printf(out, "mine-owner=%u:%u mode=%o ", st.st_uid, st.st_gid, st.st_mode);
	REC(out, "mkdir-in-0777", mkdirat(D, "open/mydir", 0755));
	if (!fstatat(D, "open/mydir", &st, 0))
		bat_sb_printf(out, "mydir-owner=%u:%u ", st.st_uid, st.st_gid);
	REC(out, "symlink-in-0777", symlinkat("mine", D, "open/mylink"));
	if (!fstatat(D, "open/mylink", &st, AT_SYMLINK_NOFOLLOW))
		bat_sb_printf(out, "mylink-owner=%u:%u ", st.st_uid, st.st_gid);
	REC(out, "chmod-mine", fchmodat(D, "open/mine", 0600, 0));
	REC(out, "unlink-sticky-not-owner", unlinkat(D, "sticky/rootfile", 0));
	REC(out, "rename-sticky-not-owner", renameat(D, "sticky/rootfile", D, "sticky/r2"));
}

void chk_eacces(struct ctx *c)
{
	REQUIRE(bat_make_file(c, "secret", 10, 210, 0600));
	REQUIRE(bat_make_file(c, "public", 10, 211, 0644));
	BOTH(c, "mkdir rootdir", mkdirat(D, "rootdir", 0755));
	BOTH(c, "mkdir open", mkdirat(D, "open", 0777));
	BOTH(c, "chmod open 0777", fchmodat(D, "open", 0777, 0));
	BOTH(c, "mkdir private", mkdirat(D, "private", 0700));
	REQUIRE(bat_make_file(c, "private/f", 10, 212, 0644));
	BOTH(c, "mkdir sticky", mkdirat(D, "sticky", 0777));
	BOTH(c, "chmod sticky 1777", fchmodat(D, "sticky", 01777, 0));
	REQUIRE(bat_make_file(c, "sticky/rootfile", 10, 213, 0666));
	/* The check dir is root's 0755; the harness made the roots 0755. */
	BOTH(c, "chmod check dir 0755", fchmodat(D, ".", 0755, 0));
	struct sbuf out[2];

	for (int S = 0; S < 2; S++) {
		out[S].n = 0;
		out[S].s[0] = 0;
		bat_in_child(c, S, child_eacces, NULL, 65534, &out[S]);
	}
	if (strstr(out[MNT].s, "stat-dir=EACCES") && !strstr(out[REF].s, "stat-dir=EACCES"))
		bat_note(c, "as uid 65534", "the mount refuses other users: mount with -o allow_other");
	bat_cmp_str(c, "as uid 65534", out[REF].s, out[MNT].s);
	bat_cmp_dir(c, "listing open", "open");
	bat_cmp_data(c, "mine data", "open/mine");
	bat_cmp_data(c, "public untouched", "public");
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
	bat_sb_res(out, "open-n444", fd < 0 ? -1 : 0, errno);
	REC(out, "read-n444", read(fd, b, sizeof(b)));
	REC(out, "close-n444", close(fd));
	/* A umask that takes owner-write away: the mode arrives as 0444. */
	mode_t old = umask(0222);

	fd = openat(D, "open/u222", O_CREAT | O_RDWR, 0666);
	umask(old);
	bat_sb_res(out, "create-0666-umask-0222", fd < 0 ? -1 : 0, errno);
	REC(out, "write-u222", write(fd, data, sizeof(data)));
	if (!fstat(fd, &st))
		bat_sb_printf(out, "mode=%o ", st.st_mode);
	REC(out, "close-u222", close(fd));
	for (size_t i = 0; i <= sizeof(ro_modes) / sizeof(ro_modes[0]); i++) {
		bool sg = i == sizeof(ro_modes) / sizeof(ro_modes[0]);
		mode_t mode = sg ? 02555 : ro_modes[i];
		const char *name = sg ? "sg/m2555" : bat_label("open/m%o", mode);

		fd = openat(D, name, O_CREAT | O_RDWR, mode);
		bat_sb_res(out, bat_label("create-%o", mode), fd < 0 ? -1 : 0, errno);
		if (fd < 0)
			continue;
		REC(out, "write", write(fd, data, sizeof(data)));
		REC(out, "ftruncate-0", ftruncate(fd, 0));
		REC(out, "pwrite", pwrite(fd, data, 11, 3));
		if (!fstat(fd, &st))
			bat_sb_printf(out, "mode=%o uid=%u size=%lld ", st.st_mode, st.st_uid,
				      (long long)st.st_size);
		REC(out, "close", close(fd));
		/* The mode now applies: O_RDWR as ext4 decides it for this mode. */
		fd = openat(D, name, O_RDWR);
		bat_sb_res(out, "reopen-rdwr", fd < 0 ? -1 : 0, errno);
		if (fd >= 0)
			close(fd);
	}
}

/* What chk_create_ro left, compared on both sides. */
static void cmp_create_ro(struct ctx *c, const char *when)
{
	for (size_t i = 0; i < sizeof(ro_modes) / sizeof(ro_modes[0]); i++) {
		const char *name = bat_label("open/m%o", ro_modes[i]);

		bat_cmp_stat(c, bat_label("stat %s %s", name, when), name, 0);
		bat_cmp_data(c, bat_label("data %s %s", name, when), name);
	}
	bat_cmp_stat(c, bat_label("stat open/u222 %s", when), "open/u222", 0);
	bat_cmp_data(c, bat_label("data open/u222 %s", when), "open/u222");
	bat_cmp_stat(c, bat_label("stat open/n444 %s", when), "open/n444", 0);
	bat_cmp_data(c, bat_label("data open/n444 %s", when), "open/n444");
	bat_cmp_stat(c, bat_label("stat sg/m2555 %s", when), "sg/m2555", 0);
	bat_cmp_data(c, bat_label("data sg/m2555 %s", when), "sg/m2555");
}

void chk_create_ro(struct ctx *c)
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
		bat_in_child(c, S, child_create_ro, NULL, 65534, &out[S]);
	}
	bat_cmp_str(c, "as uid 65534", out[REF].s, out[MNT].s);
	/* The adopted file's first data, written by root (who may). */
	BOTH(c, "root writes open/n444",
	     ({ int f = openat(D, "open/n444", O_WRONLY);
		long r = f < 0 ? -1 : write(f, "root data", 9); if (f >= 0) close(f); r; }));
	cmp_create_ro(c, "before remount");
	if (!remount || !*remount) {
		bat_note(c, "remount", "skipped: no $SC_REMOUNT (run under harness.sh)");
		return;
	}
	/* The mount must not be busy: drop our directory fd on it meanwhile. */
	close(c->dfd[MNT]);
	c->dfd[MNT] = -1;
	fflush(stdout);
	if (system(remount) != 0) {
		bat_verdict(c, "remount", false, "ok", "failed");
		c->dfd[MNT] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return;
	}
	c->dfd[MNT] = open(bat_label("%s/%s", c->root[MNT], c->check), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!bat_verdict(c, "reopen after remount", c->dfd[MNT] >= 0, "ok", bat_ename(errno))) {
		c->dfd[MNT] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return;
	}
	cmp_create_ro(c, "after remount");
}
