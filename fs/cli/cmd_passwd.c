/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_passwd.c - stackcrypt passwd: a new password or key file for a volume, or
 * the recovery of its config with the master key (fs/volume/volume.c).
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
#include "volopts_i.h"


static const char passwd_help[] =
"Usage: stackcrypt passwd [OPTIONS] BACKING\n"
"Change the password (or key file) of the volume in BACKING: the master key is\n"
"re-wrapped under the new secret, and the new config replaces the old one\n"
"atomically (the old one stays until the new one is on disk).  Files are not\n"
"touched.  Asks on the terminal for what no option gives.\n"
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
"  --scrypt-n=N         new scrypt cost, a power of two (default: keep; with\n"
"                       --masterkey, whose config is not authenticated: 65536)\n"
"  -h, --help           show this help\n";

/* What `stackcrypt passwd` was asked for. */
struct passwd_opts {
	struct sc_secret_src	old_src, new_src;
	const char		*backing;
	uint64_t		scrypt_n;	/* --scrypt-n, or 0 */
	bool			old_given, new_given;	/* a secret option was given */
};

/* One of passwd's options into o (a struct passwd_opts).  0 or the exit status. */
static int passwd_option(void *o_, const char *cmd, int c, char *arg)
{
	struct passwd_opts *o = o_;

	switch (c) {
	case OPT_NEW_KEYFILE:
	case OPT_NEW_PASSFILE:
	case OPT_NEW_EXTPASS:
	case OPT_NEW_PASSWORD:
		return sc_cli_secret_option(cmd, c, arg, &o->new_src, &o->new_given);
	case OPT_SCRYPT_N:
		return sc_cli_parse_scrypt_n(cmd, arg, &o->scrypt_n);
	default:	/* OPT_KEYFILE .. OPT_PASSWORD */
		return sc_cli_secret_option(cmd, c, arg, &o->old_src, &o->old_given);
	}
}

/* Parses passwd's command line into o.  SC_CLI_GO_ON, or the exit status. */
static int passwd_options(const char *cmd, int argc, char **argv, struct passwd_opts *o)
{
	static const struct option opts[] = {
		SC_CLI_SECRET_OPTIONS,
		{ "masterkey",		optional_argument, NULL, OPT_MASTERKEY },
		{ "new-keyfile",	required_argument, NULL, OPT_NEW_KEYFILE },
		{ "new-passfile",	required_argument, NULL, OPT_NEW_PASSFILE },
		{ "new-extpass",	required_argument, NULL, OPT_NEW_EXTPASS },
		{ "new-password",	optional_argument, NULL, OPT_NEW_PASSWORD },
		{ "scrypt-n",		required_argument, NULL, OPT_SCRYPT_N },
		{ "help",		no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};

	return sc_cli_parse(cmd, argc, argv, ":h", opts, passwd_help, passwd_option, o,
			    &o->backing);
}

/*
 * The key derivation of the new config: none for a key file; for a
 * password, scrypt with the config's cost, --scrypt-n's N, or the
 * defaults where the old cost is not to be trusted.
 */
static void passwd_new_kdf(const char *cmd, const struct passwd_opts *o, struct sc_config *cfg)
{
	if (o->new_src.kind == SC_SECRET_KEYFILE) {
		cfg->kdf = SC_KDF_KEYFILE;
		cfg->scrypt_n = 0;	/* a key file has no scrypt cost */
		cfg->scrypt_r = 0;
		cfg->scrypt_p = 0;
		return;
	}
	/*
	 * Keep the scrypt cost only of a config the old password opened (the
	 * GCM tag covers it).  A recovery has not authenticated the config:
	 * whoever can write BACKING could have lowered N and r (the password
	 * then fails, which is what sends the user here), so it gets the
	 * defaults.
	 */
	if (o->old_src.kind == SC_SECRET_MASTERKEY || cfg->kdf != SC_KDF_SCRYPT) {
		if (o->old_src.kind == SC_SECRET_MASTERKEY && !o->scrypt_n &&
		    cfg->kdf == SC_KDF_SCRYPT && (cfg->scrypt_n != SC_SCRYPT_N_DEFAULT ||
		    cfg->scrypt_r != SC_SCRYPT_R_DEFAULT || cfg->scrypt_p != SC_SCRYPT_P_DEFAULT))
			fprintf(stderr, "stackcrypt passwd: note: the config's scrypt cost "
				"(N=%" PRIu64 " r=%" PRIu32 " p=%" PRIu32 ") is not "
				"authenticated without the password: using the defaults\n",
				cfg->scrypt_n, cfg->scrypt_r, cfg->scrypt_p);
		cfg->scrypt_n = SC_SCRYPT_N_DEFAULT;
		cfg->scrypt_r = SC_SCRYPT_R_DEFAULT;
		cfg->scrypt_p = SC_SCRYPT_P_DEFAULT;
	}
	cfg->kdf = SC_KDF_SCRYPT;
	if (o->scrypt_n)
		cfg->scrypt_n = o->scrypt_n;
	sc_cli_warn_weak_kdf(cmd, cfg);
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
 * Asks for the new secret and re-wraps mk under it in cfg, with a new
 * salt: nothing derived from the old secret survives.  A config of an
 * older format becomes format SC_CONFIG_FORMAT: it gets the MAC that lets
 * a later recovery check its fields (it says so: older builds cannot open
 * it any more).  SC_CLI_GO_ON or
 * the exit status after the error.
 */
static int passwd_rewrap(const char *cmd, const struct passwd_opts *o, struct sc_config *cfg,
			 const uint8_t *mk)
{
	struct sc_vol_secret sec = { 0 };
	char err[512];
	int r;

	r = sc_vol_secret_get(&o->new_src, "New password: ", true, &sec, err, sizeof(err));
	if (r)
		return sc_cli_fail(cmd, r, err);
	passwd_new_kdf(cmd, o, cfg);
	if (cfg->format < SC_CONFIG_FORMAT) {
		fprintf(stderr, "stackcrypt passwd: note: the config goes from format %" PRIu32
			" to %d (a MAC under the master key over its fields); stackcrypt "
			"builds older than this one cannot open the volume any more\n",
			cfg->format, SC_CONFIG_FORMAT);
		cfg->format = SC_CONFIG_FORMAT;
	}
	r = sc_random(cfg->salt, sizeof(cfg->salt));
	if (!r)
		r = sc_config_wrap(cfg, sec.buf, sec.len, mk);
	sc_vol_secret_free(&sec);
	if (r) {
		sc_cli_err(cmd, "cannot wrap the master key: %s", strerror(-r));
		return SC_EXIT_FAIL;
	}
	return SC_CLI_GO_ON;
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
	struct passwd_opts o = {
		.old_src = { .kind = SC_SECRET_TTY },
		.new_src = { .kind = SC_SECRET_TTY },
	};
	struct sc_config cfg;
	struct sc_backing *locked = NULL;
	char err[512];
	bool recreate;
	uint8_t *mk;
	int r;

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
	r = sc_vol_unlock(o.backing, &o.old_src, "stackcrypt passwd", "Old password: ", &cfg,
			  mk, err, sizeof(err));
	if (r) {
		r = sc_cli_fail(cmd, r, err);
		goto out_free_mk;
	}
	if (recreate) {
		r = passwd_lock(cmd, o.backing, &locked);
		if (r)
			goto out_free_mk;
	}
	r = passwd_rewrap(cmd, &o, &cfg, mk);
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
	if (recreate)
		fprintf(stderr, "stackcrypt passwd: config of %s recreated from the master key; "
			"the new %s opens it\n", o.backing,
			cfg.kdf == SC_KDF_KEYFILE ? "key file" : "password");
	else
		fprintf(stderr, "stackcrypt passwd: %s changed for %s\n",
			cfg.kdf == SC_KDF_KEYFILE ? "key file" : "password", o.backing);
	r = SC_EXIT_OK;
out_free_mk:
	sc_secure_free(mk, SC_MASTER_KEY_LEN);
out_unlock:
	sc_backing_close(locked);
	return r;
}
