/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mount_i.h - command-line parsing of `stackcrypt mount` (private to fs/),
 * split from the mounting itself so tests/unit can check it without FUSE.
 */
#ifndef SC_MOUNT_I_H
#define SC_MOUNT_I_H

#include <stddef.h>

#include <fuse_lowlevel.h>

#include "sc_volume.h"
#include "sc_stack.h"	/* enum sc_stack */

/* Everything `stackcrypt mount` accepts; filled by the fuse_opt table in cmd_mount.c. */
struct sc_mount_opts {
	char		*stack;		/* --stack=crypt|passthrough */
	int		reverse;	/* --reverse: BACKING's plaintext shown encrypted */
	char		*config;	/* --config=FILE: reverse mode's config elsewhere */
	int		foreground;	/* -f */
	int		debug;		/* -d, -o debug (implies -f) */
	int		single_thread;	/* -s */
	int		help;		/* -h, --help */
	int		quiet;		/* -q, --quiet, -o quiet: no "mounted" line */
	int		read_only;	/* -o ro (also passed on to the mount) */
	int		nonempty;	/* -o nonempty: allow a non-empty mount point */
	int		writeback;	/* -o writeback: FUSE writeback cache */
	int		have_fsname;	/* the user gave -o fsname= */
	int		shared;		/* -o allow_other or allow_root: other users come in */
	int		default_perms;	/* -o default_permissions given */
	double		attr_timeout;	/* -o attr_timeout=SECONDS */
	double		entry_timeout;	/* -o entry_timeout=SECONDS */
	unsigned int	max_threads;	/* -o max_threads=N */
	long		max_path_fds;	/* -o max_path_fds=N, -1 = default */
	int		no_killpriv_v2;	/* -o no_killpriv_v2 */
	int		no_parallel_dio;	/* -o no_parallel_dio */
	int		noxattr;	/* -o noxattr: no xattr requests (ENOSYS) */
	int		io_uring;	/* -o io_uring: fs/fuse/uring.c */
	int		loop_lifo;	/* -o loop=lifo: fs/fuse/loop.c instead of libfuse's */
	char		*idle;		/* -o idle=DURATION, as given */
	double		idle_s;		/* ... in seconds (0: never unmount) */
	int		stats_on;	/* -o stats: an io-stats layer under the front end */
	char		*stats;		/* -o stats=WHERE[:WHERE...]: at those boundaries */
	char		*keyfile;	/* secret sources, at most one */
	char		*passfile;
	char		*extpass;
	char		*masterkey;	/* --masterkey=TEXT or FILE */
	int		masterkey_ask;	/* --masterkey: ask on the terminal */
	char		*gluster_log;	/* -o gluster_log=FILE: libgfapi's log (gluster://) */
	char		*log;		/* -o log=FILE|syslog: the daemon's messages */
	char		*state_dir;	/* --state-dir=DIR: the freshness record's (format.md 11.9) */
	int		allow_rollback;	/* --allow-rollback: older files and volume accepted */
	char		*backing;	/* positional arguments, as given */
	char		*mountpoint;

	/* Derived by the checks after parsing. */
	enum sc_stack	stack_kind;
	int		ro_forced;	/* read-only: BACKING's file system is */
	const char	*mnt_remote;	/* MOUNTPOINT's file system when it can drop us, else NULL */
	int		fstab_form;	/* run by mount(8): secrets are -o keyfile= */
	char		*backing_real;	/* realpath()s; a gluster:// URL as given */
	char		*mountpoint_real;
	char		err[512];	/* one-line reason of the last failure */
};

/*
 * A duration as gocryptfs's -idle takes it (Go's time.ParseDuration): one
 * or more NUMBER UNIT, NUMBER digits with at most one '.', UNIT ms, s, m
 * or h ("30s", "1.5h", "1h30m"), or a bare "0".  Sets *seconds (0:
 * never); returns 0, -EINVAL (not such a text) or -ERANGE (not 0 but
 * under 1 ms, or over 31 days).
 */
int sc_mount_parse_duration(const char *s, double *seconds);

/*
 * Parses argv (argv[0] is the command name) into o, with defaults set
 * first, and leaves in *fargs the arguments for fuse_session_new() (mount
 * options we do not handle ourselves, -d).  Then checks the options against
 * each other, and those for libfuse with a trial fuse_session_new() (so a
 * bad one is reported before any password is asked).  Returns 0, or
 * SC_EXIT_USAGE (SC_EXIT_FAIL: out of memory) with o->err set.  With
 * o->help set the caller prints the help and nothing else was checked.
 */
int sc_mount_parse(int argc, char **argv, struct sc_mount_opts *o, struct fuse_args *fargs);

/*
 * Checks BACKING and MOUNTPOINT on disk and fills the *_real fields; sets
 * read_only and ro_forced when BACKING's file system is read-only.
 * Returns 0, or SC_EXIT_BACKING / SC_EXIT_MOUNTPOINT with o->err set.
 */
int sc_mount_check_paths(struct sc_mount_opts *o);

/* Fills *src from the secret options (terminal when none). */
void sc_mount_secret(const struct sc_mount_opts *o, struct sc_secret_src *src);

/* Frees the strings parsing allocated; wipes the master key text. */
void sc_mount_opts_free(struct sc_mount_opts *o);

/* The text of `stackcrypt mount --help`. */
extern const char sc_mount_usage[];

#endif /* SC_MOUNT_I_H */
