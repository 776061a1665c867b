// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * stack.c - the battery's checks of what a stack adds: the roots (a crypt
 * stack hides its config file), the config file protected from the
 * mount, and a full backing filesystem (ENOSPC).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statfs.h>
#include <sys/xattr.h>

#include "battery_i.h"

/* The roots: same entries (a crypt stack hides its config file). */
void chk_root(struct ctx *c)
{
	bat_cmp_dir(c, "root listing", "..");
	bat_cmp_stat(c, "root .stackcrypt.conf", "../.stackcrypt.conf", 0);
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
	n = bat_slurp_fd(fd, out);
	close(fd);
	return n;
}

/* Expects a mount-side call to fail (any errno): the crypt stack's config
 * file cannot be made, replaced or removed through the mount. */
#define REFUSED(c, label, expr) ({					\
		errno = 0;						\
		long ref_r = (long)(expr);				\
		bat_verdict((c), (label), ref_r < 0, "(refused)",		\
			    ref_r < 0 ? bat_ename(errno) : "succeeded");	\
	})

/*
 * Crypt stacks: BACKING/.stackcrypt.conf is invisible at the mount's root
 * and nothing done through the mount may create, replace or remove it.
 * Mount side only (the plain directory has no such file); with BACKING in
 * the environment (harness.sh) the config's bytes must be unchanged after.
 */
void chk_config_protected(struct ctx *c)
{
	const char *backing = getenv("BACKING");
	char conf[PATH_MAX];
	uint8_t *before = NULL, *after = NULL;
	ssize_t nb = 0, na;
	int root;

	if (!c->crypt)
		return;
	root = openat(c->dfd[MNT], "..", O_RDONLY | O_DIRECTORY);
	REQUIRE(bat_verdict(c, "open root", root >= 0, "ok", bat_ename(errno)));
	if (backing) {
		snprintf(conf, sizeof(conf), "%s/.stackcrypt.conf", backing);
		nb = slurp_path(conf, &before);
		bat_verdict(c, "backing config readable", nb > 0, "> 0 bytes",
			    nb < 0 ? bat_ename((int)-nb) : bat_label("%zd bytes", nb));
	}
	REQUIRE(bat_make_file(c, "f", 10, 240, 0644));
	BOTH(c, "mkdir d", mkdirat(D, "d", 0755));
	if (c->names) {
		/*
		 * Encrypted names: ".stackcrypt.conf" in the mount is a name like
		 * any other, stored under its encrypted form; the config below is
		 * out of the mount's reach.
		 */
		int fd = openat(root, ".stackcrypt.conf", O_CREAT | O_EXCL | O_WRONLY, 0644);

		bat_verdict(c, "names: create", fd >= 0 && write(fd, "x", 1) == 1, "ok", bat_ename(errno));
		if (fd >= 0)
			close(fd);
		bat_verdict(c, "names: unlink", unlinkat(root, ".stackcrypt.conf", 0) == 0, "ok",
			bat_ename(errno));
		goto out_compare;
	}
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
	REFUSED(c, "setxattr", setxattr(bat_label("%s/.stackcrypt.conf", c->root[MNT]), "user.x", "1", 1, 0));
	REFUSED(c, "chmod", fchmodat(root, ".stackcrypt.conf", 0666, 0));
	REFUSED(c, "truncate", truncate(bat_label("%s/.stackcrypt.conf", c->root[MNT]), 0));
	/* The mount's lock file beside it (fs/cli/cmd_mount.c), hidden the same way. */
	REFUSED(c, "lock: open", openat(root, ".stackcrypt.lock", O_RDONLY));
	REFUSED(c, "lock: create", openat(root, ".stackcrypt.lock", O_CREAT | O_WRONLY | O_TRUNC, 0644));
	REFUSED(c, "lock: rename onto", renameat(dir, "f", root, ".stackcrypt.lock"));
	REFUSED(c, "lock: unlink", unlinkat(root, ".stackcrypt.lock", 0));
out_compare:
	bat_cmp_data(c, "f intact", "f");
	if (backing && nb > 0) {
		na = slurp_path(conf, &after);
		bat_cmp_bytes(c, "backing config unchanged", before, nb, after, na);
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
void chk_enospc(struct ctx *c)
{
	const char *fstype = getenv("FSTYPE");
	int fd[2], nfd[2], filler, filler2;
	struct statfs sf;

	if (!fstype || (strcmp(fstype, "ext4") && strcmp(fstype, "xfs")) ||
	    fstatfs(c->dfd[REF], &sf) ||
	    (unsigned long long)sf.f_blocks * (unsigned long long)sf.f_bsize > (8ULL << 30)) {
		bat_note(c, "skipped", "needs the harness's small ext4/xfs image (FSTYPE)");
		return;
	}
	REQUIRE(bat_make_file(c, "f", 100, 220, 0644));
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	/* Files and directories made while there is room. */
	REQUIRE(BOTH_OK(c, "create n", nfd[S] = openat(D, "n", O_CREAT | O_RDWR, 0644)));
	BOTH(c, "syncfs", syncfs(fd[S]));
	filler = fill_fs(c->dfd[REF], "filler");
	if (filler < 0) {
		bat_verdict(c, "fill the filesystem", false, strerror(errno), "-");
		goto out_close;
	}
	/* Blocks freed late (XFS frees unlinked inodes in the background)
	 * must not reach one side only: flush, then top up. */
	syncfs(filler);
	filler2 = fill_fs(c->dfd[REF], "filler2");

	if (c->gcm) {
		/*
		 * aes-gcm stores every unit with 32 bytes more: what fills the
		 * plain file's last block may not fit the mount's, which then
		 * writes nothing (ENOSPC) and must leave f as it was (below).
		 */
		uint8_t *buf = malloc(65536);
		struct res x[2];

		bat_fill(buf, 65536, 221);
		EACH_SIDE(x, pwrite(fd[S], buf, 65536, 100));
		/* Leeway taken: the plain f back to what the mount's must still be. */
		if (bat_cmp_res_alt(c, "fill f's last block when full", x, ENOSPC) == ALT &&
		    x[REF].r > 0 && ftruncate(fd[REF], 100) < 0)
			bat_verdict(c, "cut the plain f back", false, strerror(errno), "-");
		free(buf);
	} else {
		bat_pwrite2(c, "fill f's last block when full", fd, 100, 65536, 221);
	}
	bat_pwrite2(c, "write past EOF when full", fd, 12288, 4096, 225);
	bat_pwrite2(c, "write n when full", nfd, 0, 65536, 222);
	BOTH(c, "fsync f when full", fsync(fd[S]));
	bat_cmp_fstat(c, "f unchanged", fd, 0);
	bat_cmp_fd_data(c, "f data when full", fd);
	BOTH(c, "fallocate when full", fallocate(fd[S], 0, 0, 1 << 20));
	/* Room again. */
	close(filler);
	if (filler2 >= 0)
		close(filler2);
	unlinkat(c->dfd[REF], "filler", 0);
	unlinkat(c->dfd[REF], "filler2", 0);
	BOTH(c, "syncfs after free", syncfs(fd[S]));
	bat_pwrite2(c, "extend f after free", fd, 100, 65536, 223);
	bat_pwrite2(c, "write n after free", nfd, 0, 65536, 224);
	bat_cmp_fd_data(c, "f data after free", fd);
	bat_cmp_fd_data(c, "n data after free", nfd);
out_close:
	BOTH(c, "close f", close(fd[S]));
	BOTH(c, "close n", close(nfd[S]));
}
