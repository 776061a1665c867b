/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_upgrade.c - stackcrypt upgrade BACKING: a default volume (aes-gcm,
 * bound encrypted names) converted into an integrity volume (feature
 * 0x10, docs/format.md 11.12), offline.  It is a rekey that keeps the
 * master key and gains a feature: the tree is copied through two stacks
 * (fs/volume/rekey.c), the old volume's over the root and an integrity
 * volume's over BACKING/.stackcrypt.rekey.d/new, so every file of the new
 * tree is made by the mount's own code (a version 2 header bound to its
 * place, a new journal), then swapped in.  The config carries
 * SC_FEAT_UPGRADING meanwhile, which every other command refuses and
 * builds before it do not know.  Any one secret of the volume does; the
 * key slots are kept as they are.  A run stopped anywhere resumes.
 *
 * An integrity volume made without listing records (feature 0x10 without
 * 0x100: init --integrity --no-dir-lists, or any build before 0x100; with
 * the unit tree 0x20 or without) is given them in place instead, nothing
 * copied: the config is marked SC_FEAT_LISTS_UPGRADING, every directory is
 * listed whole through the volume's own layers, whose names layer writes
 * each record as it finds the directory (fs/volume/rekey.c,
 * sc_rekey_lists_write; on a tree volume a record's settle commits its
 * root, format.md 11.7 "With the unit tree"), the backing is synced, and
 * last the config gains 0x100 and loses the mark.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "sc_cli.h"
#include "sc_cmd.h"
#include "sc_rekey.h"
#include "sc_volume.h"
#include "rekey_i.h"
#include "volopts_i.h"

static const char cmd[] = "upgrade";

static const char upgrade_help[] =
"Usage: stackcrypt upgrade [OPTIONS] BACKING\n"
"Converts the volume in BACKING (cipher aes-gcm with encrypted names, what a\n"
"bare 'stackcrypt init' makes) into an integrity volume, as 'init --integrity'\n"
"makes: every file bound to its name, its size and its version checked, every\n"
"directory's entries counted in its listing record.  The master key and the\n"
"key slots stay.  The volume must not be mounted.  An upgrade stopped anywhere\n"
"(a kill, a power loss) is finished by running it again; until then no other\n"
"command opens the volume.  It needs free space for a second copy of the\n"
"volume's files while it runs.\n"
"An integrity volume without directory listing records (made with 'init\n"
"--integrity --no-dir-lists', with or without --unit-tree, or before they\n"
"existed) is given them in place: no file is copied, each directory gets its\n"
"record of the entries it holds.\n"
"\n"
SC_CLI_ROT_HELP_SECRET
"  --masterkey[=FILE]   the master key printed by init (not for a config of\n"
"                       format 1 to 3, whose features its one slot's secret seals)\n"
"Other:\n"
"  --progress           a progress line on stderr (default: when stderr is a\n"
"                       terminal)\n"
"  --state-dir=DIR      where this client keeps its freshness records (as\n"
"                       mount's); the upgrade makes the volume's\n"
"                       (default: $XDG_STATE_HOME/stackcrypt)\n"
"  -h, --help           show this help\n";

/*
 * What no upgrade can convert, known from the config alone (before the
 * unlock): another cipher, names in the clear or unbound.  SC_CLI_GO_ON
 * or the exit status after the error.
 */
static int upgrade_convertible(const char *backing, const struct sc_config *cfg)
{
	static const char instead[] = "integrity needs cipher aes-gcm and encrypted names: make "
		"a new volume with 'stackcrypt init --integrity' and copy the files into it "
		"through mounts of both";

	if (cfg->features & (SC_FEAT_INTEGRITY | SC_FEAT_UPGRADING))
		return SC_CLI_GO_ON;	/* done, or under way: told after the unlock */
	if (cfg->cipher != SC_CIPHER_AES_GCM) {
		sc_cli_err(cmd, "%s uses cipher %s; %s", backing, sc_cipher_name(cfg->cipher),
			   instead);
		return SC_EXIT_FAIL;
	}
	if ((cfg->features & SC_FEATURES_INTEG_NEEDS) != SC_FEATURES_INTEG_NEEDS) {
		sc_cli_err(cmd, "%s keeps its names %s; %s", backing,
			   cfg->features & SC_FEAT_NAMES ? "encrypted but not bound to their "
			   "places (made by an older stackcrypt)" : "in the clear", instead);
		return SC_EXIT_FAIL;
	}
	return SC_CLI_GO_ON;
}

/*
 * Whether the config's features can be changed with the secret that
 * opened it (formats 1 to 3 seal them with their one slot's, not with the
 * master key).  SC_CLI_GO_ON or the exit status after the error.
 */
static int upgrade_sealable(const struct sc_cli_rot *run, int opened)
{
	if (run->cfg.format < SC_CONFIG_FORMAT_SLOTS && opened != 0) {
		sc_cli_err(cmd, "the config of %s (format %u) seals its features with its "
			   "password or key file, not with the master key: run upgrade with that "
			   "secret; nothing was changed", run->backing, run->cfg.format);
		return SC_EXIT_SECRET;
	}
	return SC_CLI_GO_ON;
}

/*
 * The config the upgrade ends with (fin: run's with SC_FEAT_INTEGRITY,
 * sealed under the same master key, or wrapped again with the one slot's
 * secret keep for formats 1 to 3) in run->text, recorded in the state
 * file, then the config marked UPGRADING.  SC_CLI_GO_ON or exit status.
 */
static int upgrade_start(struct sc_cli_rot *run, struct sc_config *fin, int opened,
			 const struct sc_vol_secret *keep)
{
	struct sc_rekey k = { .b = run->b, .cfg = &run->cfg, .new_cfg = fin,
			      .state_dir = run->state_dir };
	char err[1024];
	int r, n;

	r = upgrade_sealable(run, opened);
	if (r != SC_CLI_GO_ON)
		return r;
	/* a freshness record a stopped start staged removed */
	if (sc_rekey_fresh_drop(&k, err, sizeof(err))) {
		sc_cli_err(cmd, "%s; nothing was changed", err);
		return SC_EXIT_FAIL;
	}
	memcpy(run->new_mk, run->old_mk, SC_MASTER_KEY_LEN);
	r = fin->format >= SC_CONFIG_FORMAT_SLOTS ? sc_config_seal(fin, run->old_mk) :
	    sc_config_wrap(fin, keep->buf, keep->len, run->old_mk);
	n = r ? r : sc_config_format(fin, run->text, sizeof(run->text));
	if (n < 0) {
		sc_cli_err(cmd, "cannot seal the integrity volume's config: %s", strerror(-n));
		return SC_EXIT_FAIL;
	}
	run->len = (size_t)n;
	return sc_cli_rot_begin(run, keep);
}

/*
 * A stopped upgrade's final config, from its state, into fin: an
 * integrity volume's under the same key.  SC_CLI_GO_ON or exit status.
 */
static int upgrade_resumed(struct sc_cli_rot *run, struct sc_config *fin)
{
	char err[512];
	int r = sc_config_parse(run->text, run->len, fin, err, sizeof(err));

	if (!r && (!(fin->features & SC_FEAT_INTEGRITY) ||
		   !sc_memeq_ct(run->new_mk, run->old_mk, SC_MASTER_KEY_LEN))) {
		r = -EINVAL;
		snprintf(err, sizeof(err), "not an upgrade's (another master key, or no "
			 "integrity)");
	}
	if (r) {
		sc_cli_err(cmd, "%s/%s: the config it ends with: %s", run->backing,
			   SC_REKEY_STATE_NAME, err);
		return SC_EXIT_CONFIG;
	}
	return SC_CLI_GO_ON;
}

/*
 * An integrity volume without listing records given them in place:
 * marked (SC_FEAT_LISTS_UPGRADING) unless a stopped run did, every
 * directory's record written and synced, then the config with
 * SC_FEAT_DIR_LISTS for the mark.  Exit status.
 */
static int upgrade_lists(struct sc_cli_rot *run, int opened, const struct sc_vol_secret *keep)
{
	struct sc_config fin = run->cfg;
	char err[1024] = "";
	uint64_t dirs = 0;
	int r;

	r = upgrade_sealable(run, opened);
	if (r != SC_CLI_GO_ON)
		return r;
	fin.features = (fin.features & ~SC_FEAT_LISTS_UPGRADING) | SC_FEAT_DIR_LISTS;
	run->new_cfg = &fin;
	if (run->cfg.features & SC_FEAT_LISTS_UPGRADING) {
		fprintf(stderr, "stackcrypt upgrade: going on with the upgrade of %s that was "
			"stopped\n", run->backing);
	} else {
		/* the mark first: no mount may change a directory whose record is half made */
		run->cfg.features |= SC_FEAT_LISTS_UPGRADING;
		r = sc_cli_rot_config_put(run, &run->cfg, keep, err, sizeof(err));
		if (r) {
			sc_cli_err(cmd, "%s; nothing was changed", err[0] ? err : strerror(-r));
			return SC_EXIT_FAIL;
		}
		sc_rekey_step();
	}
	r = sc_cli_rot_lists(run, &dirs);
	if (r != SC_CLI_GO_ON)
		return r;
	/* last, once every record is durable: the volume is one with listings from here */
	r = sc_cli_rot_config_put(run, &fin, keep, err, sizeof(err));
	if (r) {
		sc_cli_err(cmd, "%s; run 'stackcrypt upgrade %s' again to go on",
			   err[0] ? err : strerror(-r), run->backing);
		return SC_EXIT_FAIL;
	}
	fprintf(stderr, "stackcrypt upgrade: %s has directory listing records now (feature "
		"0x100): each of its %llu directories counts its entries; no file was copied or "
		"changed\n", run->backing, (unsigned long long)dirs);
	return SC_EXIT_OK;
}

/* Unlocked, locked and offline: the upgrade started or resumed, run, finished (sc_cli_rot_fn). */
static int upgrade_run(struct sc_cli_rot *run, int opened, const struct sc_vol_secret *keep,
		       void *ctx)
{
	struct sc_config fin = run->cfg;
	enum sc_rekey_phase phase;
	int r, fresh;

	(void)ctx;
	/* the config as the unlock read it again, under the lock */
	r = upgrade_convertible(run->backing, &run->cfg);
	if (r != SC_CLI_GO_ON)
		return r;
	if (run->mark == SC_FEAT_LISTS_UPGRADING &&
	    (run->cfg.features & (SC_FEAT_INTEGRITY | SC_FEAT_DIR_LISTS)) == SC_FEAT_INTEGRITY)
		return upgrade_lists(run, opened, keep);
	fin.features = (fin.features & ~SC_FEAT_UPGRADING) | SC_FEAT_INTEGRITY | SC_FEAT_DIR_LISTS;
	run->new_cfg = &fin;
	r = sc_cli_rot_resume_point(run, &phase);
	if (r != SC_CLI_GO_ON || phase > SC_REKEY_CLEANUP)
		return r == SC_CLI_GO_ON ? SC_EXIT_OK : r;
	if (!phase && (run->cfg.features & SC_FEAT_INTEGRITY)) {
		sc_cli_err(cmd, "%s is an integrity volume already (feature 0x10)%s: nothing to "
			   "upgrade", run->backing, run->cfg.features & SC_FEAT_DIR_LISTS ?
			   ", with directory listing records (feature 0x100)" : "");
		return SC_EXIT_FAIL;
	}
	r = phase ? upgrade_resumed(run, &fin) : upgrade_start(run, &fin, opened, keep);
	if (r == SC_CLI_GO_ON)
		r = sc_cli_rot_phases(run, phase ? phase : SC_REKEY_COPY);
	if (r == SC_CLI_GO_ON)
		r = sc_cli_rot_finish(run, &fin, &fresh);
	if (r != SC_CLI_GO_ON)
		return r;
	fprintf(stderr, "stackcrypt upgrade: %s is an integrity volume now: every file is bound "
		"to its name, with its size and version; its master key and key slots are "
		"unchanged. %s\n", run->backing, fresh ? "This machine's freshness record of the "
		"volume holds every file the copy wrote" : "No freshness record of it is kept on "
		"this machine yet: the next mount here starts one");
	return SC_EXIT_OK;
}

int sc_cmd_upgrade(int argc, char **argv)
{
	static const struct option opts[] = {
		SC_CLI_ROT_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	struct sc_cli_rot_opts o = { .src = { .kind = SC_SECRET_TTY } };
	struct sc_cli_rot run = { .cmd = cmd };
	char err[512];
	int r;

	prctl(PR_SET_DUMPABLE, 0);	/* no core dump or ptrace while we hold the keys */
	r = sc_cli_parse(cmd, argc, argv, ":h", opts, upgrade_help, sc_cli_rot_option, &o,
			 &o.backing);
	if (r != SC_CLI_GO_ON)
		return r;
	/* what no upgrade converts, said before a secret is asked for */
	r = sc_vol_config_read(o.backing, NULL, &run.cfg, err, sizeof(err));
	if (r)
		return sc_cli_fail(cmd, r, err);
	r = upgrade_convertible(o.backing, &run.cfg);
	if (r != SC_CLI_GO_ON)
		return r;
	/*
	 * the bit a stopped run leaves, which the unlock lets through: an
	 * integrity volume without listings is given them in place, any
	 * other is copied (upgrade_run tells them apart again under the lock)
	 */
	if ((run.cfg.features & (SC_FEAT_INTEGRITY | SC_FEAT_DIR_LISTS)) == SC_FEAT_INTEGRITY) {
		run.mark = SC_FEAT_LISTS_UPGRADING;
		run.ended = SC_FEAT_DIR_LISTS;
	} else {
		run.mark = SC_FEAT_UPGRADING;
		run.ended = SC_FEAT_INTEGRITY;
	}
	return sc_cli_rot_main(&run, &o, upgrade_run, NULL);
}
