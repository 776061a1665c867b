/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_mount_opts.c - `stackcrypt mount` option parsing and path checks
 * (fs/cli/cmd_mount.c) without mounting: defaults, what reaches libfuse, the
 * refusals (passwords on the command line, conflicting secrets, unknown
 * options) and the BACKING / MOUNTPOINT checks with their exit codes.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mount_i.h"
#include "sc_cmd.h"

static struct sc_mount_opts o;
static struct fuse_args fa;

static int parse(int argc, const char **argv)
{
	return sc_mount_parse(argc, (char **)argv, &o, &fa);
}

/* The libfuse arguments joined with spaces (argv[0] excluded). */
static const char *fuse_argstr(void)
{
	static char buf[1024];
	int i;

	buf[0] = '\0';
	for (i = 1; i < fa.argc; i++) {
		strcat(buf, fa.argv[i]);
		strcat(buf, " ");
	}
	return buf;
}

static void cleanup(void)
{
	fuse_opt_free_args(&fa);
	sc_mount_opts_free(&o);
}

TestSuite(parse, .fini = cleanup);

Test(parse, defaults)
{
	const char *argv[] = { "mount", "/b", "/m" };

	cr_assert_eq(parse(3, argv), 0, "%s", o.err);
	cr_assert_eq(o.stack_kind, SC_STACK_CRYPT);
	cr_assert_eq(o.foreground, 0);
	cr_assert_eq(o.debug, 0);
	cr_assert_eq(o.single_thread, 0);
	cr_assert_eq(o.read_only, 0);
	cr_assert_eq(o.writeback, 0);
	cr_assert_float_eq(o.attr_timeout, 30.0, 1e-9);
	cr_assert_float_eq(o.entry_timeout, 30.0, 1e-9);
	cr_assert_eq(o.max_threads, 10);
	cr_assert_eq(o.max_path_fds, -1);
	cr_assert_eq(o.no_killpriv_v2, 0);
	cr_assert_str_eq(o.backing, "/b");
	cr_assert_str_eq(o.mountpoint, "/m");
	cr_assert_eq(fa.argc, 1, "nothing for libfuse: '%s'", fuse_argstr());
}

Test(parse, everything)
{
	const char *argv[] = { "mount", "--stack=passthrough", "-f", "-s",
		"-o", "ro,allow_other,attr_timeout=2.5", "-oentry_timeout=0,writeback",
		"-o", "nonempty,max_threads=3,fsname=x,no_killpriv_v2,max_path_fds=0", "/b", "/m" };

	cr_assert_eq(parse(11, argv), 0, "%s", o.err);
	cr_assert_eq(o.no_killpriv_v2, 1);
	cr_assert_eq(o.stack_kind, SC_STACK_PASSTHROUGH);
	cr_assert_eq(o.foreground, 1);
	cr_assert_eq(o.single_thread, 1);
	cr_assert_eq(o.read_only, 1);
	cr_assert_eq(o.writeback, 1);
	cr_assert_eq(o.nonempty, 1);
	cr_assert_eq(o.have_fsname, 1);
	cr_assert_eq(o.max_threads, 3);
	cr_assert_eq(o.max_path_fds, 0);
	cr_assert_float_eq(o.attr_timeout, 2.5, 1e-9);
	cr_assert_float_eq(o.entry_timeout, 0.0, 1e-9);
	/* Mount options go on to libfuse; ours do not. */
	cr_assert_str_eq(fuse_argstr(), "-o ro,allow_other,fsname=x ");
}

Test(parse, debug_implies_foreground_and_reaches_libfuse)
{
	const char *argv[] = { "mount", "-d", "/b", "/m" };

	cr_assert_eq(parse(4, argv), 0, "%s", o.err);
	cr_assert_eq(o.debug, 1);
	cr_assert_eq(o.foreground, 1);
	cr_assert_str_eq(fuse_argstr(), "-d ");
}

Test(parse, help)
{
	const char *argv[] = { "mount", "--help" };

	cr_assert_eq(parse(2, argv), 0);
	cr_assert_eq(o.help, 1);
	cr_assert_not_null(strstr(sc_mount_usage, "--stack=crypt|passthrough"));
	cr_assert_not_null(strstr(sc_mount_usage, "--extpass=CMD"));
	cr_assert_not_null(strstr(sc_mount_usage, "allow_other"));
}

static void expect_usage(int argc, const char **argv, const char *needle)
{
	cr_assert_eq(parse(argc, argv), SC_EXIT_USAGE, "'%s' accepted", argv[1]);
	cr_assert_not_null(strstr(o.err, needle), "error '%s' lacks '%s'", o.err, needle);
}

Test(parse, refuses_password_options)
{
	const char *a1[] = { "mount", "--password=hunter2", "/b", "/m" };
	const char *a2[] = { "mount", "--password", "/b", "/m" };
	const char *a3[] = { "mount", "-o", "password=hunter2", "/b", "/m" };
	const char *a4[] = { "mount", "-o", "ro,passwd=hunter2", "/b", "/m" };

	expect_usage(4, a1, "never");
	cleanup();
	expect_usage(4, a2, "never");
	cleanup();
	expect_usage(5, a3, "never");
	cleanup();
	expect_usage(5, a4, "never");
}

Test(parse, one_secret_at_most_and_none_for_passthrough)
{
	const char *a1[] = { "mount", "--keyfile=k", "--passfile=p", "/b", "/m" };
	const char *a2[] = { "mount", "--stack=passthrough", "--keyfile=k", "/b", "/m" };

	expect_usage(5, a1, "at most one");
	cleanup();
	expect_usage(5, a2, "no secret");
}

Test(parse, unknown_things)
{
	const char *a1[] = { "mount", "--frobnicate", "/b", "/m" };
	const char *a2[] = { "mount", "--stack=rot13", "/b", "/m" };
	const char *a3[] = { "mount", "/b" };
	const char *a4[] = { "mount", "/b", "/m", "/x" };
	const char *a5[] = { "mount", "-o", "max_threads=0", "/b", "/m" };
	const char *a6[] = { "mount", "-o", "attr_timeout=-1", "/b", "/m" };
	const char *a7[] = { "mount", "-o", "max_path_fds=-2", "/b", "/m" };

	expect_usage(4, a1, "unknown option");
	cleanup();
	expect_usage(4, a2, "unknown stack");
	cleanup();
	expect_usage(2, a3, "required");
	cleanup();
	expect_usage(4, a4, "unexpected argument");
	cleanup();
	expect_usage(5, a5, "max_threads");
	cleanup();
	expect_usage(5, a6, "timeout");
	cleanup();
	expect_usage(5, a7, "max_path_fds");
}

Test(parse, quiet_three_ways_none_for_libfuse)
{
	const char *forms[][2] = { { "-q", NULL }, { "--quiet", NULL }, { "-o", "quiet" } };
	size_t i;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const char *argv[5] = { "mount", forms[i][0] };
		int argc = 2;

		if (forms[i][1])
			argv[argc++] = forms[i][1];
		argv[argc++] = "/b";
		argv[argc++] = "/m";
		cr_assert_eq(parse(argc, argv), 0, "%s: %s", forms[i][0], o.err);
		cr_assert_eq(o.quiet, 1, "%s", forms[i][0]);
		cr_assert_eq(fa.argc, 1, "%s reached libfuse: '%s'", forms[i][0], fuse_argstr());
		cleanup();
	}
}

/* libfuse's own options are tried at parse time, before any secret. */
Test(parse, libfuse_options_checked_up_front)
{
	const char *a1[] = { "mount", "-o", "frobnicate", "/b", "/m" };
	const char *a2[] = { "mount", "-o", "ro,foo,bar=1", "/b", "/m" };
	const char *a3[] = { "mount", "-o", "max_read=abc", "/b", "/m" };
	const char *a4[] = { "mount", "-o", "rw,dev,suid,nodev,noexec,noatime,auto_unmount,"
		"allow_root,max_read=65536,subtype=x,default_permissions", "/b", "/m" };

	expect_usage(5, a1, "unknown mount option 'frobnicate'");
	cleanup();
	expect_usage(5, a2, "unknown mount options 'foo,bar=1'");
	cleanup();
	expect_usage(5, a3, "bad value in option 'max_read=abc'");
	cleanup();
	{
		/* Ours too: fuse_opt_parse's complaint, in our words. */
		const char *a5[] = { "mount", "-o", "attr_timeout=abc", "/b", "/m" };
		const char *a6[] = { "mount", "-o", "", "/b", "/m" };

		expect_usage(5, a5, "bad value in option 'attr_timeout=abc'");
		cleanup();
		expect_usage(5, a6, "empty mount option");
		cleanup();
	}
	cr_assert_eq(parse(5, a4), 0, "libfuse's own options refused: %s", o.err);
}

Test(parse, secret_sources)
{
	struct { const char *opt; enum sc_secret_kind kind; const char *arg; } cases[] = {
		{ "--keyfile=/k",	SC_SECRET_KEYFILE,	"/k" },
		{ "--passfile=-",	SC_SECRET_PASSFILE,	"-" },
		{ "--extpass=echo pw",	SC_SECRET_EXTPASS,	"echo pw" },
		{ "--masterkey=abcd",	SC_SECRET_MASTERKEY,	"abcd" },
	};
	struct sc_secret_src src;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[] = { "mount", cases[i].opt, "/b", "/m" };

		cr_assert_eq(parse(4, argv), 0, "%s: %s", cases[i].opt, o.err);
		sc_mount_secret(&o, &src);
		cr_assert_eq(src.kind, cases[i].kind, "%s", cases[i].opt);
		cr_assert_str_eq(src.arg, cases[i].arg);
		cleanup();
	}
	{
		const char *argv[] = { "mount", "/b", "/m" };

		cr_assert_eq(parse(3, argv), 0);
		sc_mount_secret(&o, &src);
		cr_assert_eq(src.kind, SC_SECRET_TTY);
		cr_assert_null(src.arg);
		cleanup();
	}
	{
		/* --masterkey alone asks on the terminal, as passwd's does. */
		const char *argv[] = { "mount", "--masterkey", "/b", "/m" };

		cr_assert_eq(parse(4, argv), 0, "%s", o.err);
		sc_mount_secret(&o, &src);
		cr_assert_eq(src.kind, SC_SECRET_MASTERKEY);
		cr_assert_null(src.arg);
		cr_assert_str_eq(o.backing, "/b");
	}
}

Test(parse, masterkey_asked_counts_as_a_secret)
{
	const char *a1[] = { "mount", "--masterkey", "--keyfile=k", "/b", "/m" };
	const char *a2[] = { "mount", "--stack=passthrough", "--masterkey", "/b", "/m" };

	expect_usage(5, a1, "at most one");
	cleanup();
	expect_usage(5, a2, "no secret");
}

/* ---- path checks on a scratch tree ---- */

/* -o idle=DURATION: gocryptfs's -idle durations (Go's time.ParseDuration). */
Test(parse, idle_durations)
{
	static const struct { const char *text; double seconds; } good[] = {
		{ "0", 0 }, { "30s", 30 }, { "10m", 600 }, { "1h", 3600 }, { "1h30m", 5400 },
		{ "1.5h", 5400 }, { "250ms", 0.25 }, { "2m3s", 123 }, { ".5s", 0.5 },
		{ "744h", 744 * 3600.0 }, { "1ms", 0.001 }, { "0s", 0 }, { "0h0m", 0 },
	};
	static const struct { const char *text; int err; } bad[] = {
		{ "", -EINVAL }, { "30", -EINVAL }, { "s", -EINVAL }, { "1x", -EINVAL },
		{ "-1s", -EINVAL }, { "+1s", -EINVAL }, { "1e3s", -EINVAL }, { "1.s5", -EINVAL },
		{ "5sm", -EINVAL }, { "1h 2m", -EINVAL }, { ".s", -EINVAL }, { "1,5s", -EINVAL },
		{ "0.0001s", -ERANGE }, { "745h", -ERANGE },
	};
	const char *argv[] = { "mount", "-o", "idle=1h30m", "/b", "/m" };
	double v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = -1;
		cr_assert_eq(sc_mount_parse_duration(good[i].text, &v), 0, "'%s'", good[i].text);
		cr_assert_float_eq(v, good[i].seconds, 1e-9, "'%s': %g", good[i].text, v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(sc_mount_parse_duration(bad[i].text, &v), bad[i].err, "'%s'",
			     bad[i].text);
	cr_assert_eq(parse(5, argv), 0, "%s", o.err);
	cr_assert_float_eq(o.idle_s, 5400, 1e-9);
	cr_assert_eq(fa.argc, 1, "idle= is ours, not libfuse's: '%s'", fuse_argstr());
}

static char root[64];

static void mk_tree(void)
{
	char p[128];

	strcpy(root, "/tmp/sc_unit_XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/b", root);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/m", root);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/full", root);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/full/x", root);
	fclose(fopen(p, "w"));
	snprintf(p, sizeof(p), "%s/file", root);
	fclose(fopen(p, "w"));
	snprintf(p, sizeof(p), "%s/b2", root);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/b/inner", root);
	cr_assert_eq(mkdir(p, 0755), 0);
}

static void rm_tree(void)
{
	char cmd[128];

	cleanup();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
}

TestSuite(paths, .init = mk_tree, .fini = rm_tree);

static int check(const char *backing, const char *mnt, const char *extra)
{
	char b[128], m[128];
	const char *argv[5] = { "mount", "-o", extra, b, m };
	int ret;

	snprintf(b, sizeof(b), backing[0] == '/' ? "%.0s%s" : "%s/%s", root, backing);
	snprintf(m, sizeof(m), mnt[0] == '/' ? "%.0s%s" : "%s/%s", root, mnt);
	fuse_opt_free_args(&fa);
	sc_mount_opts_free(&o);
	if (extra)
		ret = parse(5, argv);
	else {
		argv[1] = b;
		argv[2] = m;
		ret = parse(3, argv);
	}
	cr_assert_eq(ret, 0, "%s", o.err);
	return sc_mount_check_paths(&o);
}

Test(paths, good_pair_resolves_real_paths)
{
	char want[128];

	cr_assert_eq(check("b", "m", NULL), 0, "%s", o.err);
	snprintf(want, sizeof(want), "%s/b", root);
	cr_assert_str_eq(o.backing_real, want);
	cr_assert_eq(check("b/../b/.", "m/", NULL), 0, "%s", o.err);
	cr_assert_str_eq(o.backing_real, want);
}

Test(paths, backing_missing_or_not_a_directory)
{
	cr_assert_eq(check("nope", "m", NULL), SC_EXIT_BACKING);
	cr_assert_not_null(strstr(o.err, "No such file"), "%s", o.err);
	cr_assert_eq(check("file", "m", NULL), SC_EXIT_BACKING);
	cr_assert_not_null(strstr(o.err, "not a directory"), "%s", o.err);
}

Test(paths, mountpoint_missing_not_dir_not_empty)
{
	cr_assert_eq(check("b", "nope", NULL), SC_EXIT_MOUNTPOINT);
	cr_assert_eq(check("b", "file", NULL), SC_EXIT_MOUNTPOINT);
	cr_assert_not_null(strstr(o.err, "not a directory"), "%s", o.err);
	cr_assert_eq(check("b", "full", NULL), SC_EXIT_MOUNTPOINT);
	cr_assert_not_null(strstr(o.err, "not empty"), "%s", o.err);
	cr_assert_eq(check("b", "full", "nonempty"), 0, "%s", o.err);
}

Test(paths, nested_either_way)
{
	cr_assert_eq(check("b", "b/inner", "nonempty"), SC_EXIT_MOUNTPOINT);
	cr_assert_not_null(strstr(o.err, "contain"), "%s", o.err);
	cr_assert_eq(check("b/inner", "b", "nonempty"), SC_EXIT_MOUNTPOINT);
	cr_assert_eq(check("b", "b", "nonempty"), SC_EXIT_MOUNTPOINT);
	/* A common prefix is not nesting. */
	cr_assert_eq(check("b", "b2", NULL), 0, "%s", o.err);
	cr_assert_eq(check("b2", "b", "nonempty"), 0, "%s", o.err);
}

Test(paths, already_a_mount_point)
{
	cr_assert_eq(check("b", "/proc", "nonempty"), SC_EXIT_MOUNTPOINT);
	cr_assert_not_null(strstr(o.err, "mount point"), "%s", o.err);
}
