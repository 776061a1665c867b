/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.c - the command-line pieces init, passwd, info, speed and fsck share
 * (sc_cli.h): one error format, getopt's errors, the BACKING argument and
 * the secret options, so every command words them the same; and the words
 * for what the crypto library tells (it does no I/O itself).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sc_cmd.h"
#include "sc_volume.h"
#include "sc_cli.h"

static void vreport(const char *cmd, const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "stackcrypt %s: %s", cmd, what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void sc_cli_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cmd, "", fmt, ap);
	va_end(ap);
}

void sc_cli_warn(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cmd, "warning: ", fmt, ap);
	va_end(ap);
}

int sc_cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cmd, "", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'stackcrypt %s --help'.\n", cmd);
	return SC_EXIT_USAGE;
}

void sc_cli_crypto_notice(enum sc_crypto_notice what, int err)
{
	struct rlimit rl;
	char lim[32] = "?";

	if (what != SC_CRYPTO_NOTICE_MLOCK)
		return;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
		if (rl.rlim_cur == RLIM_INFINITY)
			snprintf(lim, sizeof(lim), "unlimited");
		else
			snprintf(lim, sizeof(lim), "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
	}
	fprintf(stderr, "stackcrypt: warning: cannot lock key memory in RAM (mlock: %s; "
		"RLIMIT_MEMLOCK is %s): keys may be written to swap; raise the limit "
		"(ulimit -l, LimitMEMLOCK=) to keep them out\n", strerror(err), lim);
}

int sc_cli_bad_option(const char *cmd, char **argv, int c)
{
	const char *opt = argv[optind - 1], *eq = strchr(opt, '=');
	/* the name only: the value may be a secret (--masterkey=KEY to init) */
	int len = eq ? (int)(eq - opt) : (int)strlen(opt);

	if (c == ':')
		return sc_cli_usage(cmd, "option '%.*s' needs a value", len, opt);
	if (optopt && optopt != '?')
		return sc_cli_usage(cmd, "unknown option '-%c'", optopt);
	return sc_cli_usage(cmd, "unknown option '%.*s'", len, opt);
}

int sc_cli_fail(const char *cmd, int r, const char *err)
{
	/* volume.c always says why; strerror only if a caller did not */
	sc_cli_err(cmd, "%s", err[0] ? err : strerror(-r));
	return sc_vol_exit_code(r);
}

const char *sc_cli_one_backing(const char *cmd, int argc, char **argv)
{
	for (int i = optind; i < argc; i++)
		if (sc_vol_looks_like_key(argv[i]) && access(argv[i], F_OK) != 0) {
			sc_cli_usage(cmd, "argument %d looks like a key (not shown): give a master "
				     "key with --masterkey=FILE, or --masterkey to type it",
				     i - optind + 1);
			return NULL;
		}
	if (optind >= argc) {
		sc_cli_usage(cmd, "missing BACKING directory");
		return NULL;
	}
	if (optind + 1 < argc) {
		sc_cli_usage(cmd, "unexpected argument '%s'", argv[optind + 1]);
		return NULL;
	}
	return argv[optind];
}

int sc_cli_secret_opt(const char *cmd, const char *name, const char *arg,
		      struct sc_secret_src *src, bool *given)
{
	char err[256];

	if (sc_vol_secret_opt(name, arg, src, given, err, sizeof(err)) == 0)
		return 0;
	return sc_cli_usage(cmd, "%s", err);
}

int sc_cli_parse(const char *cmd, int argc, char **argv, const char *shortopts,
		 const struct option *opts, const char *help, sc_cli_opt_fn fn, void *ctx,
		 const char **backing)
{
	int c, r;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(help, stdout);
			return SC_EXIT_OK;
		}
		if (c == ':' || c == '?' || !fn)
			return sc_cli_bad_option(cmd, argv, c);
		r = fn(ctx, cmd, c, optarg);
		if (r)
			return r;
	}
	if (!backing)
		return SC_CLI_GO_ON;
	*backing = sc_cli_one_backing(cmd, argc, argv);
	return *backing ? SC_CLI_GO_ON : SC_EXIT_USAGE;
}
