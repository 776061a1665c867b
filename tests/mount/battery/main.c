// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * main.c - the mount syscall battery: its table of checks and the driver.
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
 * The checks are chk_* functions in the file of their area: names.c
 * (namespace, readdir), attrs.c (attributes, xattrs), data.c (reads,
 * writes, holes, fallocate), handles.c (open flags, locks, mmap,
 * O_DIRECT), perms.c (modes, access, errno, other uid) and stack.c (the
 * root, the config file, ENOSPC); compare.c holds the helpers they share
 * (battery_i.h).  Each check in the table below runs, in table order, in
 * its own subdirectory, created on both sides.  Inside a check, BOTH(c, label, EXPR) evaluates EXPR once
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
 * mount side only); with aes-gcm, a write that just fits the plain
 * directory's full filesystem may fail with ENOSPC on the mount, whose
 * units are longer.  (The per-file header xattr "user.stackcrypt" needs no
 * leeway: from above it is an ordinary name, stored escaped.)  Anything else must match the plain directory
 * exactly.  The EACCES check runs as uid/gid 65534, so MNT must be mounted
 * with -o allow_other (harness.sh does so); so does create_ro, which then
 * remounts with $SC_REMOUNT (harness.sh) and compares again, or notes that
 * it could not when run outside the harness.  The ENOSPC check fills the
 * filesystem, so it runs only when FSTYPE says ext4/xfs (the harness's
 * private loop image) and the filesystem is at most 8 GiB.
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "battery_i.h"

/* Every check, by the name -c and -l use, in the order they run. */
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

/* Is name in the comma-separated list (NULL: no list)? */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

static bool selected(const char *only, const char *except, const char *name)
{
	return (!only || listed(only, name)) && !listed(except, name);
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
		"usage: battery [-v] [-c CHECK[,CHECK...]] [-x CHECK[,CHECK...]] [-l] [-F]\n"
		"               [REF MNT]\n"
		"  Runs the same system calls in REF (a plain directory) and MNT (a\n"
		"  stackcrypt mount) and compares every outcome.  Without arguments,\n"
		"  REF and MNT come from the environment (as harness.sh exports them).\n"
		"  -v      print each check's name (-vv: every comparison)\n"
		"  -c LIST run only these checks\n"
		"  -x LIST run all checks but these (eacces,create_ro on a mount\n"
		"          without allow_other: they run as another user)\n"
		"  -l      list the checks\n"
		"  -F      self-test: treat one byte of every mount-side read as\n"
		"          flipped (the run must fail)\n"
		"  env CONFIG=passthrough|null|aes-xts|aes-cbc|aes-gcm (default passthrough):\n"
		"          crypt stacks get issue #4's documented leeway\n");
}

int main(int argc, char **argv)
{
	struct ctx c = { .dfd = { -1, -1 } };
	const char *only = NULL, *except = NULL, *config = getenv("CONFIG");
	int opt;

	while ((opt = getopt(argc, argv, "vc:x:lFh")) != -1) {
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
		case 'x':
			except = optarg;
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
	c.gcm = config && !strcmp(config, "aes-gcm");
	/*
	 * From the volume itself, not from a variable a run could forget: the
	 * root's directory nonce record, an xattr or (aes-gcm) the file sc.nonce.
	 */
	if (c.crypt && getenv("BACKING")) {
		char nonce_file[PATH_MAX];

		snprintf(nonce_file, sizeof(nonce_file), "%s/sc.nonce", getenv("BACKING"));
		c.names = getxattr(getenv("BACKING"), "user.stackcrypt.names", NULL, 0) >= 0 ||
			  access(nonce_file, F_OK) == 0;
	}
	/* Modes must not depend on the caller's umask. */
	umask(022);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("battery: ref=%s mnt=%s config=%s\n", c.root[REF], c.root[MNT],
	       config && *config ? config : "passthrough");

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		const struct check *k = &checks[i];
		unsigned failed_before = c.failed;
		struct timespec t0, t1;

		if (!selected(only, except, k->name))
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
			       k->name, (double)(bat_ns_of(t1) - bat_ns_of(t0)) / 1e9);
	}
	printf("%u passed, %u failed\n", c.passed, c.failed);
	return c.failed ? 1 : 0;
}
