/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_passwd.c - stackcrypt passwd: a new password or key file for one key
 * slot of a volume (the slot the old secret opens, or --slot), or the
 * recovery of its config with the master key (fs/volume/volume.c).  The
 * new secret goes in through keyslot.c, as init's and key add's do.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "sc_cmd.h"
#include "sc_volume.h"
#include "sc_cli.h"
#include "sc_backing.h"
#include "keyslot_i.h"
#include "volopts_i.h"


static const char passwd_help[] =
"Usage: stackcrypt passwd [OPTIONS] BACKING\n"
"Change the password (or key file) of the volume in BACKING, or of one of its\n"
"key slots (stackcrypt key list): the master key is re-wrapped under the new\n"
"secret, and the new config replaces the old one atomically (the old one stays\n"
"until the new one is on disk).  Files are not touched.  Asks on the terminal\n"
"for what no option gives.\n"
"\n"
"The current secret (one of):\n"
"  --passfile=FILE      first line of FILE (\"-\" = standard input)\n"
"  --extpass=CMD        first line printed by sh -c CMD\n"
"  --keyfile=FILE       the volume's key file\n"
"  --masterkey[=FILE]   the master key printed by init (asked on the terminal,\n"
"                       or read from FILE / \"-\"): recovery of a forgotten\n"
"                       password or a lost or damaged config\n"
"The new secret (one of):\n"
"  --new-passfile=FILE  first line of FILE (\"-\" = standard input; with\n"
"                       --passfile=- too, the second line)\n"
"  --new-extpass=CMD    first line printed by sh -c CMD\n"
"  --new-keyfile=FILE   switch to (or change) a key file\n"
"Other:\n"
"  --slot=SLOT          the key slot to change, by label or number (default:\n"
"                       the one the current secret opens; with --masterkey,\n"
"                       needed when the volume has several)\n"
"  --kdf=NAME           argon2id or scrypt for the new password (default: keep\n"
"                       the slot's; a format 4 config's new password slot:\n"
"                       argon2id; an older config's: scrypt)\n"
"  --scrypt-n=N         new scrypt cost, a power of two (default: keep; with\n"
"                       --masterkey on a config of format 3 or older, whose\n"
"                       cost is not authenticated: 65536)\n"
"  --argon2-t=T         Argon2id passes (default: measured for a 1 s unlock)\n"
"  --argon2-m=KIB       Argon2id memory in KiB (default: measured)\n"
"  -h, --help           show this help\n";

/* Parses passwd's command line into o.  SC_CLI_GO_ON, or the exit status. */
static int passwd_options(const char *cmd, int argc, char **argv, struct sc_cli_change *o)
{
	static const struct option opts[] = {
		SC_CLI_SECRET_OPTIONS,
		SC_CLI_NEW_SECRET_OPTIONS,
		{ "slot",		required_argument, NULL, OPT_SLOT },
		SC_CLI_KDF_OPTIONS,
		{ "help",		no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int r;

	r = sc_cli_parse(cmd, argc, argv, ":h", opts, passwd_help, sc_cli_change_option, o,
			 &o->backing);
	if (r == SC_CLI_GO_ON && sc_cli_kdf_done(cmd, &o->kdf))
		return SC_EXIT_USAGE;
	return r;
}

/*
 * The key derivation of slot i's new secret: none for a key file; for a
 * password, the KDF and cost the options give; else the slot's own cost
 * where it is authenticated (the old secret opened the config, or a
 * format 4 config's MAC, which covers every slot, checked with the master
 * key); else the default: Argon2id measured here in format 4, scrypt's
 * default N before (a config of format 3 or older stays readable by the
 * builds of its time).  SC_CLI_GO_ON or the exit status after the error.
 */
static int passwd_new_kdf(const char *cmd, const struct sc_cli_change *o, struct sc_config *cfg,
			  unsigned i)
{
	struct sc_slot *s = &cfg->slots[i];
	bool trusted = o->old_src.kind != SC_SECRET_MASTERKEY ||
		       cfg->format >= SC_CONFIG_FORMAT_SLOTS;
	struct sc_cli_kdf k = o->kdf;
	int r;

	if (o->new_src.kind == SC_SECRET_KEYFILE || sc_cli_kdf_given(&o->kdf)) {
		r = sc_cli_slot_cost(cmd, &k, o->new_src.kind == SC_SECRET_KEYFILE, s);
		goto out_check;
	}
	if (trusted && s->kdf != SC_KDF_KEYFILE) {
		/* keep the cost the old password was wrapped with */
		sc_cli_warn_weak_kdf(cmd, s);
		return SC_CLI_GO_ON;
	}
	if (!trusted && s->kdf == SC_KDF_SCRYPT && (s->scrypt_n != SC_SCRYPT_N_DEFAULT ||
	    s->scrypt_r != SC_SCRYPT_R_DEFAULT || s->scrypt_p != SC_SCRYPT_P_DEFAULT))
		fprintf(stderr, "stackcrypt passwd: note: the config's scrypt cost "
			"(N=%" PRIu64 " r=%" PRIu32 " p=%" PRIu32 ") is not "
			"authenticated without the password: using the defaults\n",
			s->scrypt_n, s->scrypt_r, s->scrypt_p);
	k.kdf = cfg->format >= SC_CONFIG_FORMAT_SLOTS ? SC_CLI_KDF_DEFAULT : SC_KDF_SCRYPT;
	r = sc_cli_slot_cost(cmd, &k, false, s);
out_check:
	if (r == SC_CLI_GO_ON && s->kdf == SC_KDF_ARGON2ID &&
	    cfg->format < SC_CONFIG_FORMAT_SLOTS) {
		/* Argon2id is format 4's; the one slot of an older config is this one */
		fprintf(stderr, "stackcrypt passwd: note: Argon2id needs config format 4; "
			"stackcrypt builds older than this one cannot open the volume any more\n");
		sc_config_upgrade(cfg);
	}
	if (r == SC_CLI_GO_ON)
		sc_cli_warn_weak_kdf(cmd, s);
	return r;
}

/*
 * The slot passwd changes: --slot's, else the one the old secret opened,
 * else (a master key) the only one.  Its index, or -1 after the error.
 */
static int passwd_slot(const char *cmd, const struct sc_cli_change *o,
		       const struct sc_config *cfg, int opened)
{
	int i;

	if (o->slot) {
		i = sc_config_slot_find(cfg, o->slot);
		if (i < 0)
			sc_cli_err(cmd, "%s has no key slot '%s' ('stackcrypt key list %s' shows "
				   "them)", o->backing, o->slot, o->backing);
		return i;
	}
	if (opened >= 0)
		return opened;
	if (sc_config_slots(cfg) == 1) {
		for (i = 0; !cfg->slots[i].used; i++)
			;
		return i;
	}
	sc_cli_usage(cmd, "%s has %u key slots: name the one to change with --slot=SLOT "
		     "('stackcrypt key list %s')", o->backing, sc_config_slots(cfg), o->backing);
	return -1;
}

/* A recovery says what it writes, before writing it. */
static void passwd_say_recovered(const struct sc_config *cfg, const char *backing)
{
	char feat[32];

	sc_vol_features_text(cfg->features, feat, sizeof(feat));
	fprintf(stderr, "stackcrypt passwd: writing the config of %s: format %" PRIu32 ", "
		"cipher %s, block size %" PRIu32 ", features %s\n", backing, cfg->format,
		sc_cipher_name(cfg->cipher), cfg->block_size, feat);
}

/*
 * Re-wraps mk in slot i of cfg under the new secret (keyslot.c), with a
 * new salt: nothing derived from the old secret survives.  A config of
 * format 1 or 2 becomes format 3: it gets the MAC that lets a later
 * recovery check its fields (it says so: older builds cannot open it any
 * more).  SC_CLI_GO_ON or the exit status after the error.
 */
static int passwd_rewrap(const char *cmd, const struct sc_cli_change *o, struct sc_config *cfg,
			 unsigned i, const uint8_t *mk)
{
	int r;

	r = passwd_new_kdf(cmd, o, cfg, i);
	if (r != SC_CLI_GO_ON)
		return r;
	if (cfg->format < SC_CONFIG_FORMAT) {
		fprintf(stderr, "stackcrypt passwd: note: the config goes from format %" PRIu32
			" to %d (a MAC under the master key over its fields); stackcrypt "
			"builds older than this one cannot open the volume any more\n",
			cfg->format, SC_CONFIG_FORMAT);
		cfg->format = SC_CONFIG_FORMAT;
	}
	return sc_cli_slot_wrap(cmd, cfg, i, &o->new_src, "New password: ", mk);
}

/* The config lock of backing, in *locked.  0, or the exit status after the error. */
static int passwd_lock(const char *cmd, const char *backing, struct sc_backing **locked)
{
	char err[512];
	int r;

	r = sc_vol_lock(backing, locked, err, sizeof(err));
	if (!r)
		return 0;
	sc_cli_err(cmd, "%s", err);
	return r == -EINVAL ? SC_EXIT_USAGE : r == -ENOTDIR || r == -EPROTONOSUPPORT ?
	       SC_EXIT_BACKING : SC_EXIT_FAIL;
}

int sc_cmd_passwd(int argc, char **argv)
{
	static const char cmd[] = "passwd";
	struct sc_cli_change o = {
		.old_src = { .kind = SC_SECRET_TTY },
		.new_src = { .kind = SC_SECRET_TTY },
	};
	struct sc_config cfg;
	struct sc_backing *locked = NULL;
	char err[512];
	bool recreate, keyfile;
	int opened, slot, r;
	uint8_t *mk;

	/* no core dump or ptrace attach while we hold the master key */
	prctl(PR_SET_DUMPABLE, 0);
	r = passwd_options(cmd, argc, argv, &o);
	if (r != SC_CLI_GO_ON)
		return r;
	/*
	 * The config lock is held from reading the old config to writing the
	 * new: no lost update.  Over gluster:// it is a file, which a
	 * directory that holds no config (perhaps no volume) must not get:
	 * there the lock waits for the recovery to find a volume, and the new
	 * config is written only if none appeared meanwhile.
	 */
	recreate = sc_vol_config_read(o.backing, NULL, &cfg, err, sizeof(err)) == -ENOENT;
	if (!recreate) {
		r = passwd_lock(cmd, o.backing, &locked);
		if (r)
			return r;
	}
	mk = sc_secure_alloc(SC_MASTER_KEY_LEN);
	if (!mk) {
		sc_cli_err(cmd, "out of locked memory");
		r = SC_EXIT_FAIL;
		goto out_unlock;
	}
	r = sc_vol_unlock_slot(o.backing, &o.old_src, "stackcrypt passwd", "Old password: ",
			       &cfg, mk, &opened, NULL, err, sizeof(err));
	if (r) {
		r = sc_cli_fail(cmd, r, err);
		goto out_free_mk;
	}
	if (recreate) {
		r = passwd_lock(cmd, o.backing, &locked);
		if (r)
			goto out_free_mk;
	}
	slot = passwd_slot(cmd, &o, &cfg, opened);
	if (slot < 0) {
		r = o.slot ? SC_EXIT_FAIL : SC_EXIT_USAGE;
		goto out_free_mk;
	}
	r = passwd_rewrap(cmd, &o, &cfg, (unsigned)slot, mk);
	if (r != SC_CLI_GO_ON)
		goto out_free_mk;
	if (o.old_src.kind == SC_SECRET_MASTERKEY)
		passwd_say_recovered(&cfg, o.backing);
	r = sc_vol_config_write(o.backing, locked, &cfg, !recreate, err, sizeof(err));
	if (r) {
		sc_cli_err(cmd, "%s; the old config is unchanged", err);
		r = SC_EXIT_FAIL;
		goto out_free_mk;
	}
	keyfile = cfg.slots[slot].kdf == SC_KDF_KEYFILE;
	if (recreate)
		fprintf(stderr, "stackcrypt passwd: config of %s recreated from the master key; "
			"the new %s opens it\n", o.backing, keyfile ? "key file" : "password");
	else if (cfg.format >= SC_CONFIG_FORMAT_SLOTS)
		fprintf(stderr, "stackcrypt passwd: %s changed for %s (slot %d, %s)\n",
			keyfile ? "key file" : "password", o.backing, slot, cfg.slots[slot].label);
	else
		fprintf(stderr, "stackcrypt passwd: %s changed for %s\n",
			keyfile ? "key file" : "password", o.backing);
	r = SC_EXIT_OK;
out_free_mk:
	sc_secure_free(mk, SC_MASTER_KEY_LEN);
out_unlock:
	sc_backing_close(locked);
	return r;
}
