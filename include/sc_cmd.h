/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_cmd.h - the subcommands of the stackcrypt binary and their exit codes.
 * fs/cli/main.c dispatches on argv[1]; each command parses its own options,
 * prints its own one-line errors ("stackcrypt CMD: ...") and returns an
 * exit status.
 */
#ifndef SC_CMD_H
#define SC_CMD_H

enum sc_exit {
	SC_EXIT_OK		= 0,
	SC_EXIT_FAIL		= 1,	/* generic failure; fsck: problems found */
	SC_EXIT_USAGE		= 2,	/* bad command line */
	SC_EXIT_BACKING		= 10,	/* backing dir missing / unusable */
	SC_EXIT_MOUNTPOINT	= 11,	/* mountpoint missing / busy / not empty */
	SC_EXIT_BADPASS		= 12,	/* wrong password or key */
	SC_EXIT_CONFIG		= 13,	/* config missing, corrupt or tampered */
	SC_EXIT_SECRET		= 14,	/* no usable secret: empty, mismatch, extpass failed */
};

int sc_cmd_mount(int argc, char **argv);
int sc_cmd_init(int argc, char **argv);
int sc_cmd_passwd(int argc, char **argv);
int sc_cmd_key(int argc, char **argv);
int sc_cmd_rekey(int argc, char **argv);
int sc_cmd_upgrade(int argc, char **argv);
int sc_cmd_info(int argc, char **argv);
int sc_cmd_fsck(int argc, char **argv);
int sc_cmd_speed(int argc, char **argv);
int sc_cmd_stats(int argc, char **argv);
int sc_cmd_path(int argc, char **argv);

#endif /* SC_CMD_H */
