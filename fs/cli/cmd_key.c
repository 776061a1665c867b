/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_key.c - stackcrypt key list|add|remove: the key slots of a volume
 * (config format 4, docs/format.md 6.4).  list reads the config alone;
 * add and remove hold the config lock from reading the config to writing
 * the new one, unlock it with a secret it already takes, and write the
 * whole table back in one atomic replace of the config
 * (sc_vol_config_write): a kill at any point leaves the old table or the
 * new one.  A config of format 1 to 3 becomes format 4 when a slot is
 * added to it, and only then.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "sc_cmd.h"
#include "sc_volume.h"
#include "sc_cli.h"
#include "sc_backing.h"
#include "keyslot_i.h"
#include "volopts_i.h"

static const char key_help[] =
"Usage: stackcrypt key list BACKING\n"
"       stackcrypt key add [OPTIONS] BACKING\n"
"       stackcrypt key remove --slot=SLOT [OPTIONS] BACKING\n"
"The key slots of the volume in BACKING: up to 8 passwords or key files, any\n"
"one of which unlocks it.  list shows them (no secret needed); add makes a new\n"
"one and remove takes one away, each unlocked with a secret the volume already\n"
"takes; the last slot is never removed.  The change replaces the config\n"
"atomically.  A config made before slots becomes format 4 when a slot is\n"
"added (stackcrypt builds before 4 cannot open it then).\n"
"\n"
"A secret the volume takes (one of; default: asked on the terminal):\n"
"  --passfile=FILE      first line of FILE (\"-\" = standard input)\n"
"  --extpass=CMD        first line printed by sh -c CMD\n"
"  --keyfile=FILE       a key file of one of its slots\n"
"  --masterkey[=FILE]   the master key printed by init (format 4 configs)\n"
"The new secret of add (one of; default: asked twice on the terminal):\n"
"  --new-passfile=FILE  first line of FILE (\"-\" = standard input; with\n"
"                       --passfile=- too, the second line)\n"
"  --new-extpass=CMD    first line printed by sh -c CMD\n"
"  --new-keyfile=FILE   a key file (64 hex digits, or 32 random bytes)\n"
"Other:\n"
"  --label=NAME         add: the new slot's label, 1 to 32 printable\n"
"                       characters, not all digits (default: slotN)\n"
"  --slot=SLOT          remove: the slot, by label or number (key list)\n"
"  --kdf=NAME           add: argon2id (default) or scrypt for a password\n"
"  --scrypt-n=N         add: scrypt cost, a power of two (implies scrypt)\n"
"  --argon2-t=T         add: Argon2id passes (default: measured, see below)\n"
"  --argon2-m=KIB       add: Argon2id memory in KiB (default: measured)\n"
"  -h, --help           show this help\n"
"\n"
"An Argon2id cost not given is measured here for an unlock of about a second\n"
"(at most 1 GiB, or a quarter of RAM), as cryptsetup does.  A slot removed\n"
"no longer opens this config, but a copy of the config made before still\n"
"does: see docs/security.md, 4.1.\n";

/* The option table: one for the three subcommands, as their help is one. */
static int key_options(const char *cmd, int argc, char **argv, struct sc_cli_change *o)
{
	static const struct option opts[] = {
		SC_CLI_SECRET_OPTIONS,
		SC_CLI_NEW_SECRET_OPTIONS,
		{ "label",		required_argument, NULL, OPT_LABEL },
		{ "slot",		required_argument, NULL, OPT_SLOT },
		SC_CLI_KDF_OPTIONS,
		{ "help",		no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};

	return sc_cli_parse(cmd, argc, argv, ":h", opts, key_help, sc_cli_change_option, o,
			    &o->backing);
}

/* ---- list ---- */

static int key_list(const char *cmd, const struct sc_cli_change *o)
{
	struct sc_config cfg;
	char err[512], kind[96], when[32];
	struct tm tm;

	int r = sc_vol_config_read(o->backing, "stackcrypt key", &cfg, err, sizeof(err));

	if (r)
		return sc_cli_fail(cmd, r, err);
	printf("%-4s  %-*s  %-20s  %s\n", "slot", SC_SLOT_LABEL_MAX > 16 ? 16 : SC_SLOT_LABEL_MAX,
	       "label", "created (UTC)", "unlocked with");
	for (unsigned i = 0; i < SC_SLOTS_MAX; i++) {
		const struct sc_slot *s = &cfg.slots[i];
		time_t t = (time_t)s->slot_created;

		if (!s->used)
			continue;
		if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
			snprintf(when, sizeof(when), "%" PRId64, s->slot_created);
		sc_cli_slot_text(s, kind, sizeof(kind));
		printf("%-4u  %-16s  %-20s  %s\n", i, s->label, when, kind);
	}
	/* what an old config's one slot is called, since it has no label of its own */
	if (cfg.format < SC_CONFIG_FORMAT_SLOTS)
		printf("(config format %" PRIu32 ": one slot, named after its kind; adding one "
		       "makes it format 4)\n", cfg.format);
	return SC_EXIT_OK;
}

/* ---- add and remove ---- */

/* The config lock of backing, in *locked.  0, or the exit status after the error. */
static int key_lock(const char *cmd, const char *backing, struct sc_backing **locked)
{
	char err[512];
	int r = sc_vol_lock(backing, locked, err, sizeof(err));

	if (!r)
		return 0;
	sc_cli_err(cmd, "%s", err);
	return r == -EINVAL ? SC_EXIT_USAGE : r == -ENOTDIR || r == -EPROTONOSUPPORT ?
	       SC_EXIT_BACKING : SC_EXIT_FAIL;
}

/*
 * What add and remove would refuse, seen in cfg (read without a key
 * first, so a bad request costs no KDF run; checked again on the
 * authenticated config): SC_CLI_GO_ON, or the exit status after the
 * error.  For remove, the slot's index into *slot.
 */
static int key_refusal(const char *cmd, bool add, const struct sc_cli_change *o,
		       const struct sc_config *cfg, int *slot)
{
	if (add) {
		/* (a label is never all digits: find cannot take it for a number) */
		if (o->label && sc_config_slot_find(cfg, o->label) >= 0) {
			sc_cli_err(cmd, "a slot of %s is labelled '%s' already: labels name one "
				   "slot each", o->backing, o->label);
			return SC_EXIT_FAIL;
		}
		if (sc_config_slots(cfg) >= SC_SLOTS_MAX) {
			sc_cli_err(cmd, "the key slots of %s are full (%d): remove one first",
				   o->backing, SC_SLOTS_MAX);
			return SC_EXIT_FAIL;
		}
		return SC_CLI_GO_ON;
	}
	*slot = sc_config_slot_find(cfg, o->slot);
	if (*slot < 0) {
		sc_cli_err(cmd, "%s has no key slot '%s' ('stackcrypt key list %s' shows them)",
			   o->backing, o->slot, o->backing);
		return SC_EXIT_FAIL;
	}
	if (sc_config_slots(cfg) == 1) {
		sc_cli_err(cmd, "refusing to remove slot %d (%s), the last key slot of %s: "
			   "nothing would open the volume again (add another first)", *slot,
			   cfg->slots[*slot].label, o->backing);
		return SC_EXIT_FAIL;
	}
	return SC_CLI_GO_ON;
}

/*
 * A config of format 1 to 3 as format 4: its one slot wrapped anew with
 * the secret that just opened it (sec), since format 4 derives its keys
 * with other labels.  SC_CLI_GO_ON or the exit status after the error.
 */
static int key_upgrade(const char *cmd, struct sc_config *cfg, int opened,
		       const struct sc_vol_secret *sec, const uint8_t *mk)
{
	int r;

	if (cfg->format >= SC_CONFIG_FORMAT_SLOTS)
		return SC_CLI_GO_ON;
	if (opened != 0) {
		sc_cli_err(cmd, "a config of format %" PRIu32 " becomes format 4 when a slot is "
			   "added, and its password or key file must be wrapped anew: unlock "
			   "with it, not with the master key", cfg->format);
		return SC_EXIT_USAGE;
	}
	r = sc_config_upgrade(cfg);
	if (!r)
		r = sc_random(cfg->salt, sizeof(cfg->salt));
	if (!r)
		r = sc_config_wrap_slot(cfg, 0, sec->buf, sec->len, mk);
	if (r) {
		sc_cli_err(cmd, "cannot wrap the master key: %s", strerror(-r));
		return SC_EXIT_FAIL;
	}
	return SC_CLI_GO_ON;
}

/* add's new slot in cfg, its secret asked and the master key wrapped.  Exit status. */
static int key_add_slot(const char *cmd, const struct sc_cli_change *o, struct sc_config *cfg,
			const uint8_t *mk, int *slot)
{
	bool keyfile = o->new_src.kind == SC_SECRET_KEYFILE;
	char label[SC_SLOT_LABEL_MAX + 1];
	unsigned free_slot;
	int r;

	for (free_slot = 0; free_slot < SC_SLOTS_MAX && cfg->slots[free_slot].used; free_slot++)
		;
	snprintf(label, sizeof(label), "%s", o->label ? o->label : "");
	if (!o->label)
		snprintf(label, sizeof(label), "slot%u", free_slot);
	r = sc_config_slot_new(cfg, label, keyfile ? SC_KDF_KEYFILE : o->kdf.kdf);
	if (r == -EEXIST)
		sc_cli_err(cmd, "a slot of %s is labelled '%s' already: labels name one slot each",
			   o->backing, label);
	else if (r == -ENOSPC)
		sc_cli_err(cmd, "the key slots of %s are full (%d): remove one first", o->backing,
			   SC_SLOTS_MAX);
	else if (r < 0)
		sc_cli_err(cmd, "cannot make a slot: %s", strerror(-r));
	if (r < 0)
		return SC_EXIT_FAIL;
	*slot = r;
	r = sc_cli_slot_cost(cmd, &o->kdf, keyfile, &cfg->slots[*slot]);
	if (r == SC_CLI_GO_ON)
		r = sc_cli_slot_wrap(cmd, cfg, (unsigned)*slot, &o->new_src, "New password: ", mk);
	return r;
}

/* add or remove, o checked.  Exit status. */
static int key_change(const char *cmd, bool add, const struct sc_cli_change *o)
{
	struct sc_vol_secret sec = { 0 };
	struct sc_backing *locked = NULL;
	struct sc_config cfg;
	char err[512], label[SC_SLOT_LABEL_MAX + 1] = "";
	uint32_t was;
	int opened, slot = -1, r;
	uint8_t *mk;

	/*
	 * The config first, without the lock: over gluster:// the lock is a
	 * file, which a directory that holds no volume must not get.
	 */
	r = sc_vol_config_read(o->backing, NULL, &cfg, err, sizeof(err));
	if (r)
		return sc_cli_fail(cmd, r, err);
	r = key_refusal(cmd, add, o, &cfg, &slot);
	if (r != SC_CLI_GO_ON)
		return r;
	r = key_lock(cmd, o->backing, &locked);
	if (r)
		return r;
	mk = sc_secure_alloc(SC_MASTER_KEY_LEN);
	if (!mk) {
		sc_cli_err(cmd, "out of locked memory");
		r = SC_EXIT_FAIL;
		goto out_unlock;
	}
	r = sc_vol_unlock_slot(o->backing, &o->old_src, "stackcrypt key",
			       "Password (of a slot): ", &cfg, mk, &opened, &sec, err, sizeof(err));
	if (r) {
		r = sc_cli_fail(cmd, r, err);
		goto out_free_mk;
	}
	/* the authenticated table: the same checks again */
	r = key_refusal(cmd, add, o, &cfg, &slot);
	if (r != SC_CLI_GO_ON)
		goto out_free_mk;
	was = cfg.format;
	if (add) {
		r = key_upgrade(cmd, &cfg, opened, &sec, mk);
		if (r == SC_CLI_GO_ON)
			r = key_add_slot(cmd, o, &cfg, mk, &slot);
	} else {
		snprintf(label, sizeof(label), "%s", cfg.slots[slot].label);
		r = sc_config_slot_remove(&cfg, (unsigned)slot);
		r = r ? SC_EXIT_FAIL : sc_config_seal(&cfg, mk) ? SC_EXIT_FAIL : SC_CLI_GO_ON;
		if (r != SC_CLI_GO_ON)
			sc_cli_err(cmd, "cannot remove slot %d", slot);
	}
	if (r != SC_CLI_GO_ON)
		goto out_free_mk;
	r = sc_vol_config_write(o->backing, locked, &cfg, true, err, sizeof(err));
	if (r) {
		sc_cli_err(cmd, "%s; the old config is unchanged", err);
		r = SC_EXIT_FAIL;
		goto out_free_mk;
	}
	/* said after the write: a kill before it changed nothing */
	if (was < cfg.format)
		fprintf(stderr, "stackcrypt %s: note: the config went from format %" PRIu32
			" to %" PRIu32 " (key slots); stackcrypt builds older than this one "
			"cannot open the volume any more\n", cmd, was, cfg.format);
	if (add)
		fprintf(stderr, "stackcrypt %s: added slot %d (%s) to %s: %u key slots\n", cmd,
			slot, cfg.slots[slot].label, o->backing, sc_config_slots(&cfg));
	else
		fprintf(stderr, "stackcrypt %s: removed slot %d (%s) from %s: %u key slot%s "
			"left; copies of the config made before still open with it\n", cmd, slot,
			label, o->backing, sc_config_slots(&cfg),
			sc_config_slots(&cfg) == 1 ? "" : "s");
	r = SC_EXIT_OK;
out_free_mk:
	sc_vol_secret_free(&sec);
	sc_secure_free(mk, SC_MASTER_KEY_LEN);
out_unlock:
	sc_backing_close(locked);
	return r;
}

int sc_cmd_key(int argc, char **argv)
{
	static const char *const subs[] = { "list", "add", "remove" };
	struct sc_cli_change o = {
		.old_src = { .kind = SC_SECRET_TTY },
		.new_src = { .kind = SC_SECRET_TTY },
	};
	char cmd[16];
	size_t i;
	int r;

	/* no core dump or ptrace attach while we hold the master key */
	prctl(PR_SET_DUMPABLE, 0);
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(key_help, stdout);
		return SC_EXIT_OK;
	}
	for (i = 0; argc >= 2 && i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(argv[1], subs[i]))
			break;
	if (argc < 2)
		return sc_cli_usage("key", "missing subcommand: list, add or remove");
	if (i == sizeof(subs) / sizeof(subs[0]))
		return sc_cli_usage("key", "unknown subcommand '%.40s': list, add or remove",
				    argv[1]);
	snprintf(cmd, sizeof(cmd), "key %s", subs[i]);
	r = key_options(cmd, argc - 1, argv + 1, &o);
	if (r != SC_CLI_GO_ON)
		return r;
	if (i == 0 && (o.old_given || o.new_given || o.label || o.slot || sc_cli_kdf_given(&o.kdf)))
		return sc_cli_usage(cmd, "list takes no option but --help: it needs no secret");
	if (i == 1 && o.slot)
		return sc_cli_usage(cmd, "--slot is remove's: add takes the first free slot");
	if (i == 2 && (o.new_given || o.label || sc_cli_kdf_given(&o.kdf)))
		return sc_cli_usage(cmd, "remove takes --slot and a secret the volume takes, "
				    "no new secret, label or KDF");
	if (i == 2 && !o.slot)
		return sc_cli_usage(cmd, "missing --slot=SLOT: the label or number of the slot "
				    "to remove ('stackcrypt key list %s')", o.backing);
	if (i == 1 && sc_cli_kdf_done(cmd, &o.kdf))
		return SC_EXIT_USAGE;
	if (i == 1 && o.new_given && o.new_src.kind == SC_SECRET_KEYFILE &&
	    sc_cli_kdf_given(&o.kdf))
		return sc_cli_usage(cmd, "a key file has no KDF: --kdf, --scrypt-n and --argon2-* "
				    "are a password's");
	return i == 0 ? key_list(cmd, &o) : key_change(cmd, i == 1, &o);
}
