// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * names.c - the battery's namespace checks: lookup, readdir (large,
 * under concurrent change, telldir/seekdir), mkdir/rmdir, mknod, symlink,
 * link/unlink, rename and renameat2 flags.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "battery_i.h"

void chk_lookup(struct ctx *c)
{
	REQUIRE(bat_make_file(c, "f", 5, 1, 0644));
	bat_cmp_stat(c, "stat f", "f", 0);
	bat_cmp_stat(c, "stat missing", "missing", 0);
	bat_cmp_stat(c, "stat f/x", "f/x", 0);
	bat_cmp_stat(c, "stat .", ".", 0);
	bat_cmp_stat(c, "stat ..", "..", 0);
	BOTH(c, "mkdir -p a/b/c/d", mkdirat(D, "a", 0755) | mkdirat(D, "a/b", 0755) |
	     mkdirat(D, "a/b/c", 0755) | mkdirat(D, "a/b/c/d", 0755));
	bat_cmp_stat(c, "stat deep", "a/b/c/d", 0);
	bat_cmp_stat(c, "stat dotdot path", "a/b/../b/c/./d/..", 0);
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
	bat_cmp_data(c, "data via link", "a/g");
}

void chk_readdir_large(struct ctx *c)
{
	enum { N = 5000 };

	BOTH(c, "mkdir big", mkdirat(D, "big", 0755));
	BOTH(c, bat_label("create %d files", N), ({
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
			bad |= mkdirat(D, bat_label("big/dir%02d", i), 0755);
		bad;
	}));
	bat_cmp_dir(c, "listing", "big");
	bat_cmp_stat(c, "stat big", "big", 0);
	BOTH(c, "remove every other file", ({
		int bad = 0;
		for (int i = 0; i < N; i += 2)
			bad |= unlinkat(D, bat_label("big/entry-with-a-longish-name-%05d", i), 0);
		bad;
	}));
	bat_cmp_dir(c, "listing after removal", "big");
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
		bat_sb_printf(out, "open=%s", bat_ename(errno));
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
			unlinkat(dfd, bat_label("churn%u", removed++), 0);
		for (int j = 0; j < 16 && added < CHURN * 4; j++) {
			int nfd = openat(dfd, bat_label("new%u", added++), O_CREAT | O_WRONLY, 0644);

			if (nfd >= 0)
				close(nfd);
		}
	}
	if (k < 0)
		bat_sb_printf(out, "getdents=%s ", bat_ename(errno));
	/* Finish the churn so the final listing does not depend on how many
	 * batches each side's getdents took. */
	while (removed < CHURN)
		unlinkat(dfd, bat_label("churn%u", removed++), 0);
	while (added < CHURN * 4) {
		int nfd = openat(dfd, bat_label("new%u", added++), O_CREAT | O_WRONLY, 0644);

		if (nfd >= 0)
			close(nfd);
	}
	for (unsigned i = 0; i < KEEP; i++)
		missing += !seen_keep[i];
	bat_sb_printf(out, "%s", dup || missing ? "" : "ok");
	if (dup)
		bat_sb_printf(out, "duplicates=%u (first %s) ", dup, first_dup);
	if (missing)
		bat_sb_printf(out, "missing-stable=%u ", missing);
	if (batches < 10)
		bat_sb_printf(out, "too-few-batches=%u", batches);
	close(fd);
	close(dfd);
}

void chk_readdir_churn(struct ctx *c)
{
	BOTH(c, "populate", ({
		int bad = mkdirat(D, "churn", 0755);
		for (int i = 0; i < 1500 && !bad; i++)
			bad = mknodat(D, bat_label("churn/keep%u", i), S_IFREG | 0644, 0);
		for (int i = 0; i < 600 && !bad; i++)
			bad = mknodat(D, bat_label("churn/churn%u", i), S_IFREG | 0644, 0);
		bad;
	}));
	bat_cmp_side(c, "list while changing", side_readdir_churn, NULL);
	/* Listing after the churn is a plain comparison again. */
	bat_cmp_dir(c, "listing after", "churn");
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
		bat_sb_printf(out, "opendir=%s", bat_ename(errno));
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
	bat_sb_printf(out, "n=%d tail=%d again=%d same-first=%d rewind-n=%d", n, tail,
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
		bat_sb_printf(out, "opendir=%s", bat_ename(errno));
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
	bat_sb_printf(out, "entries=%u ino-mismatch=%u%s", n, bad, first);
	closedir(d);
}

void chk_readdir_seek(struct ctx *c)
{
	BOTH(c, "populate", ({
		int bad = mkdirat(D, "d", 0755);
		for (int i = 0; i < 300 && !bad; i++)
			bad = mknodat(D, bat_label("d/n%d", i), S_IFREG | 0600, 0);
		bad;
	}));
	bat_cmp_side(c, "telldir/seekdir/rewinddir", side_seekdir, NULL);
	BOTH(c, "mkdir d/sub", mkdirat(D, "d/sub", 0755));
	BOTH(c, "symlink d/sl", symlinkat("n1", D, "d/sl"));
	BOTH(c, "mkfifo d/fifo", mkfifoat(D, "d/fifo", 0644));
	bat_cmp_side(c, "d_ino == st_ino", side_dino, (void *)"d");
	BOTH(c, "mkdir empty", mkdirat(D, "e", 0755));
	bat_cmp_dir(c, "empty dir listing", "e");
}

void chk_mkdir_rmdir(struct ctx *c)
{
	static const mode_t modes[] = { 0755, 0700, 0777, 01777, 02755, 0 };

	BOTH(c, "mkdir d", mkdirat(D, "d", 0755));
	bat_cmp_stat(c, "stat d", "d", 0);
	BOTH(c, "mkdir d again", mkdirat(D, "d", 0755));
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		BOTH(c, bat_label("mkdir mode %o", modes[i]), mkdirat(D, bat_label("m%zu", i), modes[i]));
		bat_cmp_stat(c, bat_label("stat mode %o", modes[i]), bat_label("m%zu", i), 0);
	}
	BOTH(c, "mkdir d/e", mkdirat(D, "d/e", 0755));
	bat_cmp_stat(c, "nlink of d", "d", 0);
	BOTH(c, "rmdir d (not empty)", unlinkat(D, "d", AT_REMOVEDIR));
	REQUIRE(bat_make_file(c, "d/e/f", 10, 11, 0644));
	BOTH(c, "rmdir d/e (not empty)", unlinkat(D, "d/e", AT_REMOVEDIR));
	BOTH(c, "rmdir file", unlinkat(D, "d/e/f", AT_REMOVEDIR));
	BOTH(c, "unlink d/e/f", unlinkat(D, "d/e/f", 0));
	BOTH(c, "rmdir d/e", unlinkat(D, "d/e", AT_REMOVEDIR));
	bat_cmp_stat(c, "nlink of d after", "d", 0);
	BOTH(c, "rmdir d", unlinkat(D, "d", AT_REMOVEDIR));
	bat_cmp_stat(c, "d gone", "d", 0);
	BOTH(c, "rmdir missing", unlinkat(D, "d", AT_REMOVEDIR));
	BOTH(c, "mkdir in missing parent", mkdirat(D, "nope/x", 0755));
	BOTH(c, "rmdir .", unlinkat(D, ".", AT_REMOVEDIR));
	BOTH(c, "mkdir m0/x as root", mkdirat(D, "m0/x", 0755));
	/* A set-group-ID directory passes its group and the bit on. */
	BOTH(c, "mkdir sg", mkdirat(D, "sg", 0755));
	BOTH(c, "chown sg", fchownat(D, "sg", 0, 100, 0));
	BOTH(c, "chmod sg 2775", fchmodat(D, "sg", 02775, 0));
	BOTH(c, "mkdir sg/sub", mkdirat(D, "sg/sub", 0755));
	REQUIRE(bat_make_file(c, "sg/file", 1, 12, 0644));
	bat_cmp_stat(c, "sg/sub inherits", "sg/sub", 0);
	bat_cmp_stat(c, "sg/file inherits", "sg/file", 0);
	bat_cmp_dir(c, "listing", ".");
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
	bat_sb_res(out, "accept", acc < 0 ? -1 : 0, errno);
	REC(out, "send", write(cli, "z", 1));
	REC(out, "recv", read(acc, &b, 1));
	bat_sb_printf(out, "byte=%c ", b);
	REC(out, "bind-again", bind(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&sa, sizeof(sa)));
	close(acc);
	close(cli);
	close(srv);
}

void chk_mknod(struct ctx *c)
{
	int rfd[2], wfd[2];
	char b[2][4];

	BOTH(c, "mknod fifo", mknodat(D, "fifo", S_IFIFO | 0644, 0));
	bat_cmp_stat(c, "stat fifo", "fifo", 0);
	BOTH(c, "mkfifo again", mkfifoat(D, "fifo", 0600));
	BOTH(c, "mknod regular", mknodat(D, "reg", S_IFREG | 0600, 0));
	bat_cmp_stat(c, "stat regular", "reg", 0);
	bat_cmp_data(c, "regular empty", "reg");
	BOTH(c, "open fifo wr nonblock, no reader",
	     ({ int f = openat(D, "fifo", O_WRONLY | O_NONBLOCK); if (f >= 0) close(f); f; }));
	REQUIRE(BOTH_OK(c, "open fifo rd nonblock", rfd[S] = openat(D, "fifo", O_RDONLY | O_NONBLOCK)));
	REQUIRE(BOTH_OK(c, "open fifo wr", wfd[S] = openat(D, "fifo", O_WRONLY | O_NONBLOCK)));
	BOTH(c, "write fifo", write(wfd[S], "abc", 3));
	BOTH(c, "read fifo", read(rfd[S], b[S], 3));
	bat_cmp_bytes(c, "fifo bytes", (uint8_t *)b[REF], 3, (uint8_t *)b[MNT], 3);
	BOTH(c, "close w", close(wfd[S]));
	BOTH(c, "close r", close(rfd[S]));
	bat_cmp_side(c, "unix socket", side_unix_socket, NULL);
	bat_cmp_stat(c, "stat socket", "sock", 0);
	bat_cmp_dir(c, "listing", ".");
	BOTH(c, "unlink fifo", unlinkat(D, "fifo", 0));
	BOTH(c, "unlink socket", unlinkat(D, "sock", 0));
}

/*
 * A long symlink target, made on both sides.  With encrypted names the
 * backing holds the encrypted target, longer than the plaintext
 * (format.md, "Names"): a volume without bound targets (made before them)
 * refuses with ENAMETOOLONG one over 3024 bytes, and on XFS (whose targets
 * stop at 1024 bytes) one that no longer fits once encrypted; the plain
 * directory's link is then removed too, so that what follows compares
 * alike.  With bound targets a target that does not fit the backing link
 * goes to a side file (format.md 9.5), so the mount takes up to 4095 bytes
 * where the backing filesystem takes fewer (XFS, a GlusterFS brick): the
 * mount's link is then removed.
 */
static void symlink_long(struct ctx *c, const char *label, const char *t, const char *name)
{
	const char *fstype = getenv("FSTYPE");
	struct res x[2];

	EACH_SIDE(x, symlinkat(t, D, name));
	if (c->names && x[REF].r == 0 && x[MNT].r < 0 && x[MNT].e == ENAMETOOLONG &&
	    (strlen(t) > 3024 || (fstype && !strcmp(fstype, "xfs")))) {
		bat_verdict(c, bat_label("%s (names: ENAMETOOLONG)", label), unlinkat(c->dfd[REF], name, 0) == 0,
			"ok", bat_ename(errno));
		return;
	}
	if (c->names && x[REF].r < 0 && x[REF].e == ENAMETOOLONG && x[MNT].r == 0 &&
	    strlen(t) <= 4095) {
		bat_verdict(c, bat_label("%s (names: kept in a side file)", label),
			    unlinkat(c->dfd[MNT], name, 0) == 0, "ok", bat_ename(errno));
		return;
	}
	bat_cmp_res(c, label, x, CMP_VALUE);
}

void chk_symlink(struct ctx *c)
{
	char target[4096];
	int fd[2];

	REQUIRE(bat_make_file(c, "f", 33, 13, 0644));
	BOTH(c, "symlink rel", symlinkat("f", D, "l"));
	bat_cmp_readlink(c, "readlink", "l", 4096);
	bat_cmp_stat(c, "lstat", "l", 0);
	bat_cmp_data(c, "read through link", "l");
	BOTH(c, "symlink dangling", symlinkat("does/not/exist", D, "dang"));
	BOTH(c, "open dangling", openat(D, "dang", O_RDONLY));
	BOTH(c, "symlink exists", symlinkat("x", D, "l"));
	bat_cmp_readlink(c, "readlink on file", "f", 4096);
	bat_cmp_readlink(c, "readlink short buffer", "dang", 4);
	BOTH(c, "O_NOFOLLOW", openat(D, "l", O_RDONLY | O_NOFOLLOW));
	REQUIRE(BOTH_OK(c, "O_PATH|O_NOFOLLOW", fd[S] = openat(D, "l", O_PATH | O_NOFOLLOW)));
	bat_cmp_fstat(c, "fstat O_PATH link", fd, 0);
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "symlink loop", symlinkat("loop", D, "loop"));
	BOTH(c, "open loop", openat(D, "loop", O_RDONLY));
	memset(target, 'x', sizeof(target) - 1);
	target[sizeof(target) - 1] = 0;
	for (int i = 100; i < 4000; i += 101)
		target[i] = '/';
	symlink_long(c, "symlink 4095-byte target", target, "long");
	{
		char t[1025];

		memcpy(t, target, 1024);
		t[1024] = 0;
		symlink_long(c, "symlink 1024-byte target", t, "long1024");
	}
	bat_cmp_readlink(c, "readlink 1024", "long1024", 4200);
	/* (XFS allows 1024 bytes: both sides fail alike there.) */
	bat_cmp_readlink(c, "readlink long", "long", 4200);
	bat_cmp_stat(c, "lstat long", "long", 0);
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
	bat_cmp_stat(c, "stat via ../", "d/up/up", 0);
	BOTH(c, "absolute-looking target", symlinkat("/nonexistent/abs", D, "abs"));
	bat_cmp_readlink(c, "readlink abs", "abs", 4096);
	bat_cmp_dir(c, "listing", ".");
}

void chk_link_unlink(struct ctx *c)
{
	int fd[2];

	REQUIRE(bat_make_file(c, "f", 5000, 14, 0644));
	BOTH(c, "link f g", linkat(D, "f", D, "g", 0));
	bat_cmp_stat(c, "stat f nlink 2", "f", 0);
	bat_cmp_stat(c, "stat g nlink 2", "g", 0);
	REQUIRE(BOTH_OK(c, "open g", fd[S] = openat(D, "g", O_RDWR)));
	bat_pwrite2(c, "write via g", fd, 4000, 3000, 15);
	BOTH(c, "close g", close(fd[S]));
	bat_cmp_data(c, "read via f", "f");
	BOTH(c, "unlink f", unlinkat(D, "f", 0));
	bat_cmp_stat(c, "g nlink 1", "g", 0);
	bat_cmp_data(c, "g data", "g");
	BOTH(c, "link exists", linkat(D, "g", D, "g", 0));
	BOTH(c, "link missing", linkat(D, "nope", D, "x", 0));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "link dir", linkat(D, "d", D, "d2", 0));
	BOTH(c, "unlink dir", unlinkat(D, "d", 0));
	BOTH(c, "unlink missing", unlinkat(D, "nope", 0));
	/* Hard links and renames keep the file readable. */
	BOTH(c, "link into d", linkat(D, "g", D, "d/h", 0));
	BOTH(c, "rename link", renameat(D, "d/h", D, "h2"));
	bat_cmp_data(c, "data via renamed link", "h2");
	BOTH(c, "symlink", symlinkat("g", D, "sl"));
	BOTH(c, "link symlink itself", linkat(D, "sl", D, "sl2", 0));
	/*
	 * With encrypted names a symlink's target is bound to its one name, so
	 * link(2) of a symlink makes an independent copy (docs/format.md 9.5):
	 * the same target, but a link count of 1.
	 */
	if (c->names)
		bat_cmp_readlink(c, "readlink sl2 (names: a copy of sl)", "sl2", 4096);
	else
		bat_cmp_stat(c, "stat sl2", "sl2", 0);
	BOTH(c, "link following symlink", linkat(D, "sl", D, "sl3", AT_SYMLINK_FOLLOW));
	bat_cmp_stat(c, "stat sl3", "sl3", 0);
	/* An open, unlinked file stays usable through its fd. */
	REQUIRE(BOTH_OK(c, "open h2", fd[S] = openat(D, "h2", O_RDWR)));
	BOTH(c, "unlink g", unlinkat(D, "g", 0));
	BOTH(c, "unlink sl3", unlinkat(D, "sl3", 0));
	BOTH(c, "unlink h2", unlinkat(D, "h2", 0));
	bat_cmp_fstat(c, "fstat unlinked", fd, 0);
	bat_pwrite2(c, "write unlinked", fd, 100, 5000, 16);
	bat_cmp_fd_data(c, "read unlinked", fd);
	BOTH(c, "ftruncate unlinked", ftruncate(fd[S], 6001));
	bat_cmp_fd_data(c, "read unlinked after truncate", fd);
	BOTH(c, "close unlinked", close(fd[S]));
	bat_cmp_dir(c, "listing", ".");
}

void chk_rename(struct ctx *c)
{
	int fd[2];

	REQUIRE(bat_make_file(c, "a", 1000, 17, 0644));
	REQUIRE(bat_make_file(c, "b", 2000, 18, 0600));
	BOTH(c, "rename a c", renameat(D, "a", D, "c"));
	bat_cmp_stat(c, "a gone", "a", 0);
	bat_cmp_data(c, "c data", "c");
	BOTH(c, "rename c over b", renameat(D, "c", D, "b"));
	bat_cmp_stat(c, "b replaced", "b", 0);
	bat_cmp_data(c, "b data", "b");
	BOTH(c, "rename to self", renameat(D, "b", D, "b"));
	BOTH(c, "rename missing", renameat(D, "nope", D, "x"));
	BOTH(c, "mkdir d1", mkdirat(D, "d1", 0755));
	BOTH(c, "mkdir d2", mkdirat(D, "d2", 0755));
	BOTH(c, "mkdir d3", mkdirat(D, "d3", 0755));
	REQUIRE(bat_make_file(c, "d3/x", 10, 19, 0644));
	BOTH(c, "rename dir over empty dir", renameat(D, "d1", D, "d2"));
	BOTH(c, "rename dir over non-empty dir", renameat(D, "d2", D, "d3"));
	BOTH(c, "rename file over dir", renameat(D, "b", D, "d3"));
	BOTH(c, "rename dir over file", renameat(D, "d3", D, "b"));
	BOTH(c, "rename dir into itself", renameat(D, "d3", D, "d3/sub"));
	BOTH(c, "rename across dirs", renameat(D, "b", D, "d3/b"));
	bat_cmp_data(c, "moved data", "d3/b");
	BOTH(c, "rename dir", renameat(D, "d3", D, "d4"));
	bat_cmp_data(c, "data after dir rename", "d4/b");
	bat_cmp_stat(c, "stat after dir rename", "d4/x", 0);
	/* An open file survives a rename of itself. */
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "d4/b", O_RDWR)));
	BOTH(c, "rename open file", renameat(D, "d4/b", D, "moved"));
	bat_pwrite2(c, "write after rename", fd, 500, 4000, 20);
	BOTH(c, "close", close(fd[S]));
	bat_cmp_data(c, "data after rename", "moved");
	BOTH(c, "rename . ", renameat(D, ".", D, "dot"));
	BOTH(c, "rename over ..", renameat(D, "moved", D, "d4/.."));
	BOTH(c, "rename into missing dir", renameat(D, "moved", D, "nodir/x"));
	BOTH(c, "rename file/x", renameat(D, "moved/x", D, "y"));
	bat_cmp_dir(c, "listing", ".");
	bat_cmp_dir(c, "listing d4", "d4");
}

void chk_rename_flags(struct ctx *c)
{
	REQUIRE(bat_make_file(c, "a", 1111, 21, 0644));
	REQUIRE(bat_make_file(c, "b", 2222, 22, 0600));
	BOTH(c, "NOREPLACE onto existing", renameat2(D, "a", D, "b", RENAME_NOREPLACE));
	bat_cmp_data(c, "b untouched", "b");
	BOTH(c, "NOREPLACE onto new", renameat2(D, "a", D, "c", RENAME_NOREPLACE));
	bat_cmp_stat(c, "a gone", "a", 0);
	BOTH(c, "EXCHANGE files", renameat2(D, "b", D, "c", RENAME_EXCHANGE));
	bat_cmp_data(c, "b now old c", "b");
	bat_cmp_data(c, "c now old b", "c");
	bat_cmp_stat(c, "stat b", "b", 0);
	bat_cmp_stat(c, "stat c", "c", 0);
	BOTH(c, "mkdir d", mkdirat(D, "d", 0700));
	REQUIRE(bat_make_file(c, "d/in", 7, 23, 0644));
	BOTH(c, "EXCHANGE file and dir", renameat2(D, "b", D, "d", RENAME_EXCHANGE));
	bat_cmp_stat(c, "b is dir", "b", 0);
	bat_cmp_stat(c, "d is file", "d", 0);
	bat_cmp_data(c, "b/in data", "b/in");
	BOTH(c, "EXCHANGE with missing", renameat2(D, "c", D, "missing", RENAME_EXCHANGE));
	BOTH(c, "EXCHANGE|NOREPLACE", renameat2(D, "c", D, "d", RENAME_EXCHANGE | RENAME_NOREPLACE));
	BOTH(c, "EXCHANGE across dirs", renameat2(D, "c", D, "b/in", RENAME_EXCHANGE));
	bat_cmp_data(c, "c after cross exchange", "c");
	bat_cmp_data(c, "b/in after cross exchange", "b/in");
	BOTH(c, "bad flag", renameat2(D, "c", D, "e", 1u << 30));
	bat_cmp_dir(c, "listing", ".");
}
