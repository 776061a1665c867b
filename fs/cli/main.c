/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - the stackcrypt binary: dispatches `stackcrypt COMMAND ...` to the
 * sc_cmd_*() functions of include/sc_cmd.h.  Each command gets argv from
 * its own name on (argv[0] = "mount", ...), parses its own options and
 * returns its exit status.
 */
#include <stdio.h>
#include <string.h>

#include <fuse_lowlevel.h>

#include "sc_cmd.h"
#include "sc_cli.h"

#ifndef SC_VERSION
#define SC_VERSION "0.1.0"
#endif

static const struct {
	const char	*name;
	int		(*fn)(int argc, char **argv);
	const char	*help;
} commands[] = {
	{ "mount",	sc_cmd_mount,	"mount a volume (or any directory with --stack=passthrough)" },
	{ "init",	sc_cmd_init,	"create a volume in an empty backing directory" },
	{ "passwd",	sc_cmd_passwd,	"change a volume's password (one key slot's secret)" },
	{ "key",	sc_cmd_key,	"list, add or remove a volume's key slots" },
	{ "rekey",	sc_cmd_rekey,	"replace a volume's master key, re-encrypting every file" },
	{ "upgrade",	sc_cmd_upgrade,	"convert a default volume into an integrity volume" },
	{ "info",	sc_cmd_info,	"show a volume's configuration" },
	{ "fsck",	sc_cmd_fsck,	"check (and with --repair, repair) a volume" },
	{ "speed",	sc_cmd_speed,	"measure the ciphers on this machine" },
	{ "path",	sc_cmd_path,	"translate a path between the mount and the backing directory" },
	{ "stats",	sc_cmd_stats,	"show the io-stats of a mount made with -o stats" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: stackcrypt COMMAND [options] ...\n"
		"       stackcrypt --version | --help\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n`stackcrypt COMMAND --help` lists the options of a command.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	/* before any command unlocks a volume: the library does no I/O */
	sc_crypto_set_notice(sc_cli_crypto_notice);
	if (argc < 2) {
		usage(stderr);
		return SC_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return SC_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		/* the optional parts, as meson.build configured them (new ones last) */
		printf("stackcrypt %s (libfuse %s)\nfeatures: %cgfapi %cio_uring %ccephfs\n",
		       SC_VERSION, fuse_pkgversion(), SC_HAVE_GFAPI ? '+' : '-',
		       SC_HAVE_IO_URING ? '+' : '-', SC_HAVE_CEPHFS ? '+' : '-');
		return SC_EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	/* mount.fuse3 (fstab type fuse.stackcrypt) runs `stackcrypt BACKING MOUNTPOINT -o OPTS` */
	if (strchr(argv[1], '/') && argc >= 3)
		return sc_cmd_mount(argc, argv);
	fprintf(stderr, "stackcrypt: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return SC_EXIT_USAGE;
}
