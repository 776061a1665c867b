// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_mount_opts.c - libFuzzer target for `stackcrypt mount` option
 * parsing (sc_mount_parse, fs/cli/cmd_mount.c; libfuse's fuse_opt_parse does
 * the matching).
 *
 * The input is split at NUL bytes into argv[1..] (argv[0] = "mount"), at
 * most 64 arguments.  Checks, besides no crash and no leak once
 * sc_mount_opts_free and fuse_opt_free_args ran:
 *  - the result is 0 or SC_EXIT_USAGE, and a usage error has a reason;
 *  - a success (without --help) has BACKING and MOUNTPOINT, at most one
 *    secret source, none with the passthrough stack, max_threads in
 *    1..1024 and non-negative timeouts (the cross-option checks);
 *  - a password option anywhere before "--" (--password, --password=,
 *    --passwd=, --pass=, or password=/passwd= inside -o) is refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fuse_lowlevel.h>

#include "sc_cmd.h"
#include "mount_i.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS	64

/* True if one -o option list (comma separated) names a password. */
static int opt_list_has_password(const char *list)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");

		if ((n == 8 && !strncmp(p, "password", 8)) ||
		    (n >= 9 && !strncmp(p, "password=", 9)) ||
		    (n >= 7 && !strncmp(p, "passwd=", 7)))
			return 1;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* Whether argv[1..argc) offers a password that the parser must refuse. */
static int offers_password(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return 0;
		if (!strcmp(a, "--password") || !strncmp(a, "--password=", 11) ||
		    !strncmp(a, "--passwd=", 9) || !strncmp(a, "--pass=", 7))
			return 1;
		if (!strcmp(a, "-o") && i + 1 < argc) {
			if (opt_list_has_password(argv[++i]))
				return 1;
		} else if (!strncmp(a, "-o", 2) && a[2] && opt_list_has_password(a + 2)) {
			return 1;
		}
	}
	return 0;
}

static void fail(const char *what, int ret, const struct sc_mount_opts *o)
{
	fprintf(stderr, "fuzz_mount_opts: %s (ret %d, err \"%s\")\n", what, ret, o->err);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2], *buf;
	struct sc_mount_opts o;
	struct fuse_args fargs;
	int argc = 1, ret, password;
	size_t i, start = 0;

	if (size > 4096)
		return -1;
	buf = malloc(size + 1);
	if (buf == NULL)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = (char *)"mount";
	for (i = 0; i <= size && argc <= MAX_ARGS; i++) {
		if (i == size || buf[i] == '\0') {
			if (i > start || i < size)	/* empty args count, a final one does not */
				argv[argc++] = buf + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;
	/* Each argument its own allocation: ASan then sees a read past any of them. */
	for (int a = 1; a < argc; a++) {
		argv[a] = strdup(argv[a]);
		if (argv[a] == NULL)
			abort();
	}
	free(buf);
	password = offers_password(argc, argv);

	ret = sc_mount_parse(argc, argv, &o, &fargs);
	if (ret != 0 && ret != SC_EXIT_USAGE)
		fail("result is neither 0 nor SC_EXIT_USAGE", ret, &o);
	if (ret != 0 && o.err[0] == '\0')
		fail("usage error without a reason", ret, &o);
	if (memchr(o.err, '\0', sizeof(o.err)) == NULL)
		fail("err not terminated", ret, &o);
	if (ret == 0 && !o.help) {
		int nsecrets = !!o.keyfile + !!o.passfile + !!o.extpass +
			       !!(o.masterkey || o.masterkey_ask);

		if (!o.backing || !o.mountpoint)
			fail("accepted without BACKING and MOUNTPOINT", ret, &o);
		if (nsecrets > 1)
			fail("accepted two secret sources", ret, &o);
		if (nsecrets && o.stack_kind == SC_STACK_PASSTHROUGH)
			fail("accepted a secret with the passthrough stack", ret, &o);
		if (o.max_threads < 1 || o.max_threads > 1024)
			fail("accepted max_threads out of range", ret, &o);
		if (!(o.attr_timeout >= 0) || !(o.entry_timeout >= 0))
			fail("accepted a negative or NaN timeout", ret, &o);
	}
	if (password && ret == 0 && !o.help)
		fail("a password on the command line was accepted", ret, &o);

	sc_mount_opts_free(&o);
	fuse_opt_free_args(&fargs);
	for (int a = 1; a < argc; a++)
		free(argv[a]);
	return 0;
}
