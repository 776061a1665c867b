/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rekey_i.h - what stackcrypt rekey and stackcrypt upgrade share
 * (cmd_rekey.c): both copy the volume's tree through two stacks and swap
 * it in (fs/volume/rekey.c, docs/format.md 6.5 and 11.12), with the same
 * state file, phases and resume rules; they differ in the config they end
 * with (rekey: a new master key; upgrade: the same key, SC_FEAT_INTEGRITY)
 * and in the mark the config carries meanwhile (SC_FEAT_REKEYING,
 * SC_FEAT_UPGRADING).  Each function prints its own one-line error as
 * "stackcrypt CMD: ..." and returns SC_CLI_GO_ON or the exit status.
 */
#ifndef SC_CLI_REKEY_I_H
#define SC_CLI_REKEY_I_H

#include <stdbool.h>
#include <stdint.h>

#include "sc_cli.h"
#include "sc_crypto.h"
#include "sc_rekey.h"

/* One run of rekey or upgrade on one volume. */
struct sc_cli_rot {
	const char		*cmd;		/* "rekey", "upgrade" */
	const char		*backing;
	const char		*state_dir;	/* --state-dir, or NULL */
	bool			progress;	/* --progress */
	uint64_t		mark;		/* SC_FEAT_REKEYING, or upgrade's (format.md 11.12) */
	uint64_t		ended;		/* a feature the final config has and cfg had not */
	struct sc_backing	*b;		/* config lock held */
	struct sc_config	cfg;		/* as read; mark set once started */
	const struct sc_config	*new_cfg;	/* upgrade: the volume the copy makes; else NULL */
	uint8_t			*old_mk, *new_mk;	/* locked memory */
	char			text[SC_CONFIG_MAX_TEXT];	/* the config it ends with */
	size_t			len;
};

/* The options rekey and upgrade share (rekey's own struct holds them first). */
struct sc_cli_rot_opts {
	struct sc_secret_src	src;
	bool			given, progress;
	const char		*backing;
	const char		*state_dir;	/* --state-dir, or NULL */
};

/* Their getopt_long entries, for a table in a file that uses volopts_i.h's codes. */
#define SC_CLI_ROT_OPTIONS \
	SC_CLI_SECRET_OPTIONS, \
	{ "masterkey",	optional_argument, NULL, OPT_MASTERKEY }, \
	{ "progress",	no_argument,	   NULL, OPT_PROGRESS }, \
	{ "state-dir",	required_argument, NULL, OPT_STATE_DIR }, \
	{ "help",	no_argument,	   NULL, 'h' }

/* The lines of their --help for the secret that unlocks, but --masterkey's. */
#define SC_CLI_ROT_HELP_SECRET \
"A secret the volume takes (one of; default: asked on the terminal):\n" \
"  --passfile=FILE      first line of FILE (\"-\" = standard input)\n" \
"  --extpass=CMD        first line printed by sh -c CMD\n" \
"  --keyfile=FILE       a key file of one of its slots\n"

/* One of those options into ctx (a struct sc_cli_rot_opts): sc_cli_opt_fn. */
int sc_cli_rot_option(void *ctx, const char *cmd, int opt, char *arg);

/* The command's work on the volume, unlocked, locked, offline: its exit status. */
typedef int (*sc_cli_rot_fn)(struct sc_cli_rot *run, int opened, const struct sc_vol_secret *keep,
			     void *ctx);

/*
 * The config read, the volume's lock taken (a mount refused, none let
 * start), the key buffers allocated, the volume unlocked with o's secret
 * (which slot opened it: opened, -1 a master key; its secret: keep), then
 * go(run, opened, keep, ctx); everything undone after.  Exit status.
 */
int sc_cli_rot_main(struct sc_cli_rot *run, const struct sc_cli_rot_opts *o, sc_cli_rot_fn go,
		    void *ctx);

/*
 * Where a run stands (*phase: 0 start afresh, SC_REKEY_CLEANUP + 1 a
 * stopped run had written its final config, nothing left to do); a
 * state a stopped start or end left is removed with what it made.
 */
int sc_cli_rot_resume_point(struct sc_cli_rot *run, enum sc_rekey_phase *phase);

/*
 * run->text (the final config) recorded in the state file with
 * run->new_mk, then the config marked (run->mark), sealed under the old
 * key or, formats 1 to 3, wrapped again with s0, the secret of slot 0.
 */
int sc_cli_rot_begin(struct sc_cli_rot *run, const struct sc_vol_secret *s0);

/* The phases from phase on, each recorded in the state file before the next. */
int sc_cli_rot_phases(struct sc_cli_rot *run, enum sc_rekey_phase phase);

/*
 * cfg (its features as the caller set them) sealed under run->old_mk or,
 * formats 1 to 3, wrapped again with s0, the secret of slot 0, and
 * written in place of the config, durable.  0 or -errno (err set when the
 * write failed, else empty).
 */
int sc_cli_rot_config_put(struct sc_cli_rot *run, struct sc_config *cfg,
			  const struct sc_vol_secret *s0, char *err, size_t errlen);

/*
 * upgrade of an integrity volume without listing records: every
 * directory's record written in place under the layers of run->new_cfg
 * (sc_rekey_lists_write), with the progress line; *dirs: the directories
 * done.
 */
int sc_cli_rot_lists(struct sc_cli_rot *run, uint64_t *dirs);

/*
 * The final config in place (into *fin), the state removed; *fresh: 1 this
 * client's freshness record of the new volume is in place, 0 none.
 */
int sc_cli_rot_finish(struct sc_cli_rot *run, struct sc_config *fin, int *fresh);

#endif /* SC_CLI_REKEY_I_H */
