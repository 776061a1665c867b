/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_cli.h - what the commands (init, passwd, info, speed, fsck) share on
 * the command line: the one way they report an error, getopt's errors,
 * the BACKING argument and the secret options (fs/cli/cli.c; fs/fsck is
 * a command too).
 *
 * The convention: whatever fails builds a one-line reason (volume.c fills
 * an err buffer; a command formats its own), and sc_cli_err prints it as
 * "stackcrypt CMD: reason" on stderr.  Usage errors add the --help hint
 * and return SC_EXIT_USAGE; volume errors go through sc_cli_fail, which
 * returns the exit status of sc_vol_exit_code.
 */
#ifndef SC_CLI_H
#define SC_CLI_H

#include <stdbool.h>
#include "sc_crypto.h"
#include "sc_volume.h"

/*
 * What a command's step returns to say "carry on": any other value is the
 * exit status the command returns at once (0 for --help, a usage error...).
 */
#define SC_CLI_GO_ON	(-1)

/* "stackcrypt CMD: reason\n" on stderr: every command error. */
void sc_cli_err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "stackcrypt CMD: warning: ...\n" on stderr. */
void sc_cli_warn(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* sc_cli_err, then "Try 'stackcrypt CMD --help'."; returns SC_EXIT_USAGE. */
int sc_cli_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * getopt_long's error c (':' missing value, else unknown) for the option at
 * argv[optind - 1], by name only (its value may be a secret).  Returns
 * SC_EXIT_USAGE.
 */
int sc_cli_bad_option(const char *cmd, char **argv, int c);

/*
 * One option c (getopt_long's value, arg its optarg) of a command, into
 * ctx.  0 to go on, or the exit status to return (a usage error).
 */
typedef int (*sc_cli_opt_fn)(void *ctx, const char *cmd, int c, char *arg);

/*
 * The command line of cmd, with getopt_long: -h/--help prints help and
 * returns SC_EXIT_OK; an unknown option or a missing value is a usage
 * error; every other option goes to fn (NULL: the command takes none).
 * With backing not NULL, then the one BACKING argument into *backing
 * (sc_cli_one_backing; it is argv[optind]).  Returns SC_CLI_GO_ON, or the
 * exit status to return.
 */
struct option;
int sc_cli_parse(const char *cmd, int argc, char **argv, const char *shortopts,
		 const struct option *opts, const char *help, sc_cli_opt_fn fn, void *ctx,
		 const char **backing);

/*
 * Prints err, the reason volume.c gave for r (strerror(-r) if err is
 * empty); returns sc_vol_exit_code(r).  Every command, mount included.
 */
int sc_cli_fail(const char *cmd, int r, const char *err);

/*
 * The one BACKING argument after the options, or NULL after a usage error
 * (then exit SC_EXIT_USAGE).  An argument that looks like a key and names
 * no file is refused without being shown.
 */
const char *sc_cli_one_backing(const char *cmd, int argc, char **argv);

/*
 * The getopt_long entries of the secret options every unlocking command
 * takes (--keyfile, --passfile, --extpass, --password), for a table in a
 * file whose enum names their values OPT_KEYFILE, OPT_PASSFILE,
 * OPT_EXTPASS and OPT_PASSWORD.
 */
#define SC_CLI_SECRET_OPTIONS \
	{ "keyfile",	required_argument, NULL, OPT_KEYFILE }, \
	{ "passfile",	required_argument, NULL, OPT_PASSFILE }, \
	{ "extpass",	required_argument, NULL, OPT_EXTPASS }, \
	{ "password",	optional_argument, NULL, OPT_PASSWORD }

/*
 * A secret option (name as sc_vol_secret_opt takes it) into src.  Returns
 * 0, or SC_EXIT_USAGE after the usage error.
 */
int sc_cli_secret_opt(const char *cmd, const char *name, const char *arg,
		      struct sc_secret_src *src, bool *given);

/*
 * The crypto library's notices (sc_crypto_set_notice), worded for the user
 * on stderr: the mlock refusal with the limit that caused it.  main() sets
 * it for every command.
 */
void sc_cli_crypto_notice(enum sc_crypto_notice what, int err);

#endif /* SC_CLI_H */
