/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_rekey.c - stackcrypt rekey BACKING: a new master key for a volume,
 * every file, name and symlink target re-encrypted under it, offline
 * (docs/format.md 6.5, docs/usage.md).  Every key slot is kept: each
 * wraps the master key under its own secret, so each one's secret is
 * needed to wrap the new key (the one that unlocks, the others given
 * with --also-passfile / --also-keyfile or typed).  The new config is
 * made first and kept, with the new key, in the rekey state file under
 * the old key; the config gets SC_FEAT_REKEYING, which keeps every other
 * command away; then the phases of fs/volume/rekey.c run, each recorded
 * in the state file before the next; last the new config replaces the
 * old and the state file goes.  A run stopped anywhere resumes with any
 * one secret the volume takes.  On integrity volumes this client's
 * freshness record, which the copy re-made under the new key and staged,
 * is put in place just before the new config.  The run itself (struct
 * sc_cli_rot: locks, unlock, state, phases, resume, end) is shared with
 * stackcrypt upgrade (cmd_upgrade.c, rekey_i.h), which keeps the key.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "sc_backing.h"
#include "sc_cli.h"
#include "sc_cmd.h"
#include "sc_rekey.h"
#include "sc_volume.h"
#include "sc_xlator.h"
#include "rekey_i.h"
#include "volopts_i.h"

static const char cmd[] = "rekey";

static const char rekey_help[] =
"Usage: stackcrypt rekey [OPTIONS] BACKING\n"
"Replaces the master key of the volume in BACKING with a new random one:\n"
"every file, name and symlink target is re-encrypted under it, and every key\n"
"slot is kept, wrapping the new key.  The volume must not be mounted.  A\n"
"rekey stopped anywhere (a kill, a power loss) is finished by running it\n"
"again; until then no other command opens the volume.  It needs free space\n"
"for a second copy of the volume's files while it runs.\n"
"\n"
SC_CLI_ROT_HELP_SECRET
"  --masterkey[=FILE]   the master key printed by init\n"
"The secrets of the other slots (each slot wraps the master key under its\n"
"own secret, so rekey needs each one's; each may be given more than once):\n"
"  --also-passfile=FILE\n"
"                       a password of another slot, the first line of FILE\n"
"  --also-keyfile=FILE  a key file of another slot\n"
"  (a password slot not opened by these is asked for on the terminal; remove\n"
"  a slot whose secret is lost with 'stackcrypt key remove' first)\n"
"Other:\n"
"  --progress           a progress line on stderr (default: when stderr is a\n"
"                       terminal)\n"
"  --state-dir=DIR      integrity volumes: where this client keeps its\n"
"                       freshness records (as mount's), re-made under the new\n"
"                       key (default: $XDG_STATE_HOME/stackcrypt)\n"
"  -h, --help           show this help\n";

#define ALSO_MAX	(2 * SC_SLOTS_MAX)

struct rekey_opts {
	struct sc_cli_rot_opts	rot;		/* first: sc_cli_rot_option's */
	struct sc_secret_src	also[ALSO_MAX];
	unsigned		nalso;
};

/* The secrets that wrap the new key, one per slot in use. */
struct rekey_secrets {
	struct sc_vol_secret	s[SC_SLOTS_MAX];
	bool			have[SC_SLOTS_MAX];
};

static int rekey_option(void *ctx, const char *c, int opt, char *arg)
{
	struct rekey_opts *o = ctx;

	switch (opt) {
	case OPT_ALSO_PASSFILE:
	case OPT_ALSO_KEYFILE:
		if (o->nalso == ALSO_MAX)
			return sc_cli_usage(c, "at most %d --also-* options", ALSO_MAX);
		o->also[o->nalso].kind = opt == OPT_ALSO_KEYFILE ? SC_SECRET_KEYFILE :
					 SC_SECRET_PASSFILE;
		o->also[o->nalso++].arg = arg;
		return 0;
	default:
		return sc_cli_rot_option(&o->rot, c, opt, arg);
	}
}

int sc_cli_rot_option(void *ctx, const char *c, int opt, char *arg)
{
	struct sc_cli_rot_opts *o = ctx;

	switch (opt) {
	case OPT_PROGRESS:
		o->progress = true;
		return 0;
	case OPT_STATE_DIR:
		o->state_dir = arg;
		return 0;
	case OPT_MASTERKEY:
		return sc_cli_secret_opt(c, "masterkey", arg, &o->src, &o->given);
	default:
		return sc_cli_secret_option(c, opt, arg, &o->src, &o->given);
	}
}

/* ---- the progress line ------------------------------------------------------------ */

struct progress {
	const char	*cmd;
	bool		dirs;		/* c->files counts directories listed, no byte is copied */
	struct timespec	start, last;
	bool		shown;
};

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void progress_line(void *ctx, const struct sc_rekey_count *c, bool done)
{
	struct progress *p = ctx;
	struct timespec now;
	double t, mbps, left;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!done && p->shown && since(&p->last, &now) < 0.25)
		return;
	p->last = now;
	p->shown = true;
	t = since(&p->start, &now);
	mbps = t > 0 ? (double)c->bytes / 1e6 / t : 0;
	left = c->bytes && c->bytes_total > c->bytes ?
	       t * (double)(c->bytes_total - c->bytes) / (double)c->bytes : 0;
	if (p->dirs)
		fprintf(stderr, "\rstackcrypt %s: %" PRIu64 " of about %" PRIu64 " directories, "
			"%.0f s   %s", p->cmd, c->files, c->files_total, t, done ? "\n" : "");
	else
		fprintf(stderr, "\rstackcrypt %s: %" PRIu64 " of about %" PRIu64 " entries, %.1f "
			"of %.1f MB, %.1f MB/s, %.0f s left   %s", p->cmd, c->files, c->files_total,
			(double)c->bytes / 1e6, (double)c->bytes_total / 1e6, mbps, left,
			done ? "\n" : "");
}

/* ---- the secrets of every slot ----------------------------------------------------- */

/* Whether sec opens slot i of cfg to the master key mk.  0, -EKEYREJECTED, -errno. */
static int opens_slot(const struct sc_config *cfg, unsigned i, bool keyfile,
		      const struct sc_vol_secret *sec, const uint8_t *mk)
{
	struct sc_config one = *cfg;
	uint8_t *got;
	int r, slot;

	if ((cfg->slots[i].kdf == SC_KDF_KEYFILE) != keyfile)
		return -EKEYREJECTED;
	for (unsigned j = 0; j < SC_SLOTS_MAX; j++)
		one.slots[j].used = j == i;
	got = sc_secure_alloc(SC_MASTER_KEY_LEN);
	if (!got)
		return -ENOMEM;
	r = sc_config_open(&one, keyfile, sec->buf, sec->len, got, &slot);
	if (!r && !sc_memeq_ct(got, mk, SC_MASTER_KEY_LEN))
		r = -EKEYREJECTED;
	sc_secure_free(got, SC_MASTER_KEY_LEN);
	return r;
}

/* sec given to every slot without a secret that it opens.  0 or -errno. */
static int secret_assign(const struct sc_config *cfg, bool keyfile, const struct sc_vol_secret *sec,
			 const uint8_t *mk, struct rekey_secrets *ss, unsigned *opened)
{
	int r;

	*opened = 0;
	for (unsigned i = 0; i < SC_SLOTS_MAX; i++) {
		if (!cfg->slots[i].used || ss->have[i])
			continue;
		r = opens_slot(cfg, i, keyfile, sec, mk);
		if (r == -EKEYREJECTED || r == -ENOKEY)
			continue;
		if (r)
			return r;
		ss->s[i].buf = sc_secure_alloc(SC_VOL_SECRET_MAX + 1);
		if (!ss->s[i].buf)
			return -ENOMEM;
		memcpy(ss->s[i].buf, sec->buf, sec->len);
		ss->s[i].len = sec->len;
		ss->have[i] = true;
		(*opened)++;
	}
	return 0;
}

/* One secret from src assigned; an --also secret that opens nothing is an error. */
static int secret_from(const struct sc_config *cfg, const struct sc_secret_src *src,
		       const char *prompt, const uint8_t *mk, struct rekey_secrets *ss)
{
	struct sc_vol_secret sec = { 0 };
	char err[512];
	unsigned n;
	int r = sc_vol_secret_get(src, prompt, false, &sec, err, sizeof(err));

	if (r)
		return sc_cli_fail(cmd, r, err);
	r = secret_assign(cfg, src->kind == SC_SECRET_KEYFILE, &sec, mk, ss, &n);
	sc_vol_secret_free(&sec);
	if (r) {
		sc_cli_err(cmd, "cannot try the secret: %s", strerror(-r));
		return SC_EXIT_FAIL;
	}
	if (n == 0 && src->kind != SC_SECRET_TTY) {
		sc_cli_err(cmd, "%s %s opens no other key slot of the volume",
			   src->kind == SC_SECRET_KEYFILE ? "key file" : "the password in",
			   src->arg);
		return SC_EXIT_BADPASS;
	}
	return SC_CLI_GO_ON;
}

/*
 * A secret for every slot of cfg: the one that unlocked (keep, slot
 * opened), the --also ones, then the terminal for each password slot
 * left.  SC_CLI_GO_ON or the exit status after the error.
 */
static int secrets_collect(const struct rekey_opts *o, const struct sc_config *cfg,
			   const uint8_t *mk, int opened, const struct sc_vol_secret *keep,
			   struct rekey_secrets *ss)
{
	unsigned n;
	char prompt[96];
	int r;

	if (opened >= 0 && secret_assign(cfg, o->rot.src.kind == SC_SECRET_KEYFILE, keep, mk, ss, &n))
		return SC_EXIT_FAIL;
	for (unsigned i = 0; i < o->nalso; i++) {
		r = secret_from(cfg, &o->also[i], NULL, mk, ss);
		if (r != SC_CLI_GO_ON)
			return r;
	}
	for (unsigned i = 0; i < SC_SLOTS_MAX; i++) {
		if (!cfg->slots[i].used || ss->have[i])
			continue;
		if (cfg->slots[i].kdf == SC_KDF_KEYFILE || !isatty(STDIN_FILENO)) {
			sc_cli_err(cmd, "no secret given for slot %u (%s), which must wrap the new "
				   "master key: give it with --also-%s, or remove the slot first "
				   "(stackcrypt key remove --slot=%u)", i, cfg->slots[i].label,
				   cfg->slots[i].kdf == SC_KDF_KEYFILE ? "keyfile" : "passfile", i);
			return SC_EXIT_SECRET;
		}
		snprintf(prompt, sizeof(prompt), "Password of slot %u (%s): ", i,
			 cfg->slots[i].label);
		r = secret_from(cfg, &(struct sc_secret_src){ .kind = SC_SECRET_TTY }, prompt, mk,
				ss);
		if (r != SC_CLI_GO_ON)
			return r;
		if (!ss->have[i]) {
			sc_cli_err(cmd, "that password does not open slot %u (%s)", i,
				   cfg->slots[i].label);
			return SC_EXIT_BADPASS;
		}
	}
	return SC_CLI_GO_ON;
}

static void secrets_free(struct rekey_secrets *ss)
{
	for (unsigned i = 0; i < SC_SLOTS_MAX; i++)
		sc_vol_secret_free(&ss->s[i]);
}

/* ---- the run (rekey_i.h: upgrade's too) ------------------------------------------- */

/* The volume layer's view of run (no progress line). */
static struct sc_rekey rekey_of(const struct sc_cli_rot *run)
{
	return (struct sc_rekey){ .b = run->b, .cfg = &run->cfg, .new_cfg = run->new_cfg,
				  .old_mk = run->old_mk, .new_mk = run->new_mk,
				  .state_dir = run->state_dir };
}

int sc_cli_rot_config_put(struct sc_cli_rot *run, struct sc_config *cfg,
			  const struct sc_vol_secret *s0, char *err, size_t errlen)
{
	/* formats 1 to 3 wrap the key over every field, features too: wrapped anew */
	int r = cfg->format >= SC_CONFIG_FORMAT_SLOTS ? sc_config_seal(cfg, run->old_mk) :
		sc_config_wrap(cfg, s0->buf, s0->len, run->old_mk);

	return r ? r : sc_vol_config_write(run->backing, run->b, cfg, true, err, errlen);
}

int sc_cli_rot_begin(struct sc_cli_rot *run, const struct sc_vol_secret *s0)
{
	char err[1024] = "";
	int r;

	r = sc_rekey_state_write(run->b, &run->cfg, run->old_mk, SC_REKEY_COPY, run->new_mk,
				 run->text, run->len, err, sizeof(err));
	if (!r) {
		run->cfg.features |= run->mark;
		r = sc_cli_rot_config_put(run, &run->cfg, s0, err, sizeof(err));
	}
	if (r) {
		sc_cli_err(run->cmd, "%s; nothing was changed", err[0] ? err : strerror(-r));
		return SC_EXIT_FAIL;
	}
	sc_rekey_step();
	return SC_CLI_GO_ON;
}

/*
 * A new master key, the config that ends the rekey (every slot wrapping
 * the new key) in run->text, recorded in the state file; then the config
 * marked REKEYING.  SC_CLI_GO_ON or the exit status after the error.
 */
static int rekey_start(struct sc_cli_rot *run, const struct rekey_secrets *ss)
{
	struct sc_config fin = run->cfg;
	struct sc_rekey k = rekey_of(run);
	char err[1024];
	int r, n;

	/* a freshness record a stopped start staged removed */
	if (sc_rekey_fresh_drop(&k, err, sizeof(err))) {
		sc_cli_err(cmd, "%s; nothing was changed", err);
		return SC_EXIT_FAIL;
	}
	r = sc_random(run->new_mk, SC_MASTER_KEY_LEN);
	for (unsigned i = 0; !r && i < SC_SLOTS_MAX; i++)
		if (fin.slots[i].used)
			r = fin.format >= SC_CONFIG_FORMAT_SLOTS ?
			    sc_config_wrap_slot(&fin, i, ss->s[i].buf, ss->s[i].len, run->new_mk) :
			    sc_config_wrap(&fin, ss->s[i].buf, ss->s[i].len, run->new_mk);
	n = r ? r : sc_config_format(&fin, run->text, sizeof(run->text));
	if (n < 0) {
		sc_cli_err(cmd, "cannot wrap the new master key: %s", strerror(-n));
		return SC_EXIT_FAIL;
	}
	run->len = (size_t)n;
	return sc_cli_rot_begin(run, &ss->s[0]);
}

/*
 * k's progress line into p, as run asks for one (--progress, or stderr a
 * terminal); dirs: it counts directories (progress's dirs).
 */
static void progress_attach(const struct sc_cli_rot *run, struct sc_rekey *k, bool dirs,
			    struct progress *p)
{
	*p = (struct progress){ .cmd = run->cmd, .dirs = dirs };
	k->progress = run->progress || isatty(STDERR_FILENO) ? progress_line : NULL;
	k->ctx = p;
	clock_gettime(CLOCK_MONOTONIC, &p->start);
}

int sc_cli_rot_phases(struct sc_cli_rot *run, enum sc_rekey_phase phase)
{
	struct sc_rekey k = rekey_of(run);
	struct progress p;
	char err[1024];
	int r = 0;

	progress_attach(run, &k, false, &p);
	for (; !r && phase <= SC_REKEY_CLEANUP; phase++) {
		r = sc_rekey_phase_run(&k, phase, err, sizeof(err));
		if (!r && phase < SC_REKEY_CLEANUP)
			r = sc_rekey_state_write(run->b, &run->cfg, run->old_mk, phase + 1,
						 run->new_mk, run->text, run->len, err, sizeof(err));
	}
	if (r) {
		sc_cli_err(run->cmd, "%s; run 'stackcrypt %s %s' again to go on", err, run->cmd,
			   run->backing);
		return SC_EXIT_FAIL;
	}
	return SC_CLI_GO_ON;
}

/*
 * The layers' lines on stderr but their notices: here every directory's
 * listing differs from its record, none yet, and the names layer's notice
 * of each one taken as found is the work itself, not news.
 */
static void log_no_notices(enum sc_log_level level, const char *fmt, va_list ap)
{
	if (level < SC_LOG_INFO)
		vfprintf(stderr, fmt, ap);
}

int sc_cli_rot_lists(struct sc_cli_rot *run, uint64_t *dirs)
{
	struct sc_rekey k = rekey_of(run);
	struct progress p;
	char err[1024];
	int r;

	progress_attach(run, &k, true, &p);
	sc_log_set_func(log_no_notices);
	r = sc_rekey_lists_write(&k, err, sizeof(err));
	sc_log_set_func(NULL);
	if (r == 0) {
		*dirs = k.count.files;
		return SC_CLI_GO_ON;
	}
	sc_cli_err(run->cmd, "%s; run 'stackcrypt %s %s' again to go on", err, run->cmd,
		   run->backing);
	return SC_EXIT_FAIL;
}

int sc_cli_rot_finish(struct sc_cli_rot *run, struct sc_config *fin, int *fresh)
{
	struct sc_rekey k = rekey_of(run);
	char err[512];
	int r;

	/* before the config: no run after it may find a record of the old volume here */
	r = *fresh = sc_rekey_fresh_finish(&k, err, sizeof(err));
	if (r > 0)
		r = 0;
	if (!r)
		r = sc_config_parse(run->text, run->len, fin, err, sizeof(err));
	if (!r)
		r = sc_vol_config_write(run->backing, run->b, fin, true, err, sizeof(err));
	if (!r)
		sc_rekey_step();
	if (!r)
		r = sc_rekey_state_remove(run->b, err, sizeof(err));
	if (r) {
		sc_cli_err(run->cmd, "%s; run 'stackcrypt %s %s' again to go on", err, run->cmd,
			   run->backing);
		return SC_EXIT_FAIL;
	}
	return SC_CLI_GO_ON;
}

/* The new config in place of the old, the state file removed.  Exit status. */
static int rekey_finish(struct sc_cli_rot *run)
{
	struct sc_config fin;
	int r, fresh;

	r = sc_cli_rot_finish(run, &fin, &fresh);
	if (r != SC_CLI_GO_ON)
		return r;
	fprintf(stderr, "stackcrypt rekey: %s has a new master key; %u key slot%s wrap it. "
		"Copies of the old config, and backups of the backing, still open with the "
		"old one\n", run->backing, sc_config_slots(&fin),
		sc_config_slots(&fin) == 1 ? "" : "s");
	if (run->cfg.features & SC_FEAT_INTEGRITY)
		fprintf(stderr, "stackcrypt rekey: %s\n", fresh ? "this machine's freshness record "
			"of the volume is re-made under the new key, with every file the copy wrote" :
			"no freshness record of the volume is left on this machine (the copy ran on "
			"another, or its record was lost): the next mount here starts one");
	return SC_EXIT_OK;
}

/* A stopped start's or end's state removed, with what it made.  0 or -errno, err set. */
static int leftover_remove(struct sc_cli_rot *run, bool ended, char *err, size_t errlen)
{
	struct sc_rekey k = rekey_of(run);
	int r = sc_rekey_phase_run(&k, SC_REKEY_CLEANUP, err, errlen);

	if (!r && !ended)	/* a stopped start's; a stopped end's was put in place */
		r = sc_rekey_fresh_drop(&k, err, errlen);
	return r ? r : sc_rekey_state_remove(run->b, err, errlen);
}

int sc_cli_rot_resume_point(struct sc_cli_rot *run, enum sc_rekey_phase *phase)
{
	char err[1024];
	int r;

	*phase = 0;
	r = sc_rekey_state_read(run->b, &run->cfg, run->old_mk, phase, run->new_mk, run->text,
				&run->len, err, sizeof(err));
	if (run->cfg.features & run->mark) {
		if (r) {
			sc_cli_err(run->cmd, "%s is marked as being %s, but its state: %s",
				   run->backing, run->mark == SC_FEAT_REKEYING ? "rekeyed" : "upgraded",
				   r == -ENOENT ? "is missing" : err);
			return SC_EXIT_CONFIG;
		}
		fprintf(stderr, "stackcrypt %s: going on with the %s of %s that was stopped\n",
			run->cmd, run->cmd, run->backing);
		return SC_CLI_GO_ON;
	}
	*phase = 0;
	if (r == -ENOENT)
		return SC_CLI_GO_ON;
	/*
	 * not under way: what a stopped start or end left is of no use; an end
	 * wrote the final config: its key opens no rekey state, its features
	 * hold what an upgrade's gains
	 */
	if (r == -EBADMSG || (!r && (run->cfg.features & run->ended)))
		*phase = SC_REKEY_CLEANUP + 1;
	r = leftover_remove(run, *phase != 0, err, sizeof(err));
	if (r) {
		sc_cli_err(run->cmd, "%s", err);
		return SC_EXIT_FAIL;
	}
	if (*phase)
		fprintf(stderr, "stackcrypt %s: the %s of %s that was stopped had written its new "
			"config; its state is removed, and nothing is left to do\n", run->cmd,
			run->cmd, run->backing);
	return SC_CLI_GO_ON;
}

/*
 * Offline only: a mount of the volume (in this host's mountinfo, or
 * holding a URL's one-mount lock) is refused, and the lock is kept so
 * that none starts.  SC_CLI_GO_ON or the exit status after the error.
 */
static int rot_offline(const struct sc_cli_rot *run)
{
	char mnt[4096] = "";
	int r = sc_backing_lock_mount(run->b);

	if (r == -ENOENT && sc_vol_mounted_at(run->backing, mnt, sizeof(mnt)))
		r = -EBUSY;
	if (r == -EBUSY) {
		sc_cli_err(run->cmd, "%s is mounted%s%s; unmount it first (%s works offline)",
			   run->backing, mnt[0] ? " at " : "", mnt, run->cmd);
		return SC_EXIT_BACKING;
	}
	if (r && r != -ENOENT) {
		sc_cli_err(run->cmd, "%s: cannot take the one-mount lock: %s", run->backing,
			   strerror(-r));
		return SC_EXIT_BACKING;
	}
	return SC_CLI_GO_ON;
}

/* sc_cli_rot_main's first half: SC_CLI_GO_ON or the exit status after the error. */
static int rot_open(struct sc_cli_rot *run, const struct sc_secret_src *src, int *opened,
		    struct sc_vol_secret *keep)
{
	char err[512], who[64];
	int r;

	r = sc_vol_config_read(run->backing, NULL, &run->cfg, err, sizeof(err));
	if (r)
		return sc_cli_fail(run->cmd, r, err);
	r = sc_vol_lock(run->backing, &run->b, err, sizeof(err));
	if (r) {
		sc_cli_err(run->cmd, "%s", err);
		return r == -EINVAL ? SC_EXIT_USAGE : r == -EBUSY ? SC_EXIT_FAIL : SC_EXIT_BACKING;
	}
	r = rot_offline(run);
	if (r != SC_CLI_GO_ON)
		return r;
	run->old_mk = sc_secure_alloc(SC_MASTER_KEY_LEN);
	run->new_mk = sc_secure_alloc(SC_MASTER_KEY_LEN);
	if (!run->old_mk || !run->new_mk) {
		sc_cli_err(run->cmd, "out of locked memory");
		return SC_EXIT_FAIL;
	}
	snprintf(who, sizeof(who), "stackcrypt %s", run->cmd);
	r = sc_vol_unlock_resume(run->backing, src, who, run->mark, "Password (of a slot): ",
				 &run->cfg, run->old_mk, opened, keep, err, sizeof(err));
	return r ? sc_cli_fail(run->cmd, r, err) : SC_CLI_GO_ON;
}

int sc_cli_rot_main(struct sc_cli_rot *run, const struct sc_cli_rot_opts *o, sc_cli_rot_fn go,
		    void *ctx)
{
	struct sc_vol_secret keep = { 0 };
	int opened = -1, r;

	run->backing = o->backing;
	run->state_dir = o->state_dir;
	run->progress = o->progress;
	r = rot_open(run, &o->src, &opened, &keep);
	if (r == SC_CLI_GO_ON)
		r = go(run, opened, &keep, ctx);
	sc_vol_secret_free(&keep);
	sc_secure_free(run->old_mk, run->old_mk ? SC_MASTER_KEY_LEN : 0);
	sc_secure_free(run->new_mk, run->new_mk ? SC_MASTER_KEY_LEN : 0);
	sc_wipe(run->text, sizeof(run->text));
	sc_backing_close(run->b);
	return r;
}

/* Unlocked, locked and offline: the rekey started or resumed, run, finished (sc_cli_rot_fn). */
static int rekey_run(struct sc_cli_rot *run, int opened, const struct sc_vol_secret *keep,
		     void *ctx)
{
	const struct rekey_opts *o = ctx;
	struct rekey_secrets ss = { 0 };
	enum sc_rekey_phase phase;
	int r;

	r = sc_cli_rot_resume_point(run, &phase);
	if (r != SC_CLI_GO_ON || phase > SC_REKEY_CLEANUP)
		return r == SC_CLI_GO_ON ? SC_EXIT_OK : r;
	if (!phase) {
		r = secrets_collect(o, &run->cfg, run->old_mk, opened, keep, &ss);
		if (r == SC_CLI_GO_ON)
			r = rekey_start(run, &ss);
		secrets_free(&ss);
		if (r != SC_CLI_GO_ON)
			return r;
		phase = SC_REKEY_COPY;
	}
	r = sc_cli_rot_phases(run, phase);
	return r == SC_CLI_GO_ON ? rekey_finish(run) : r;
}

int sc_cmd_rekey(int argc, char **argv)
{
	static const struct option opts[] = {
		SC_CLI_ROT_OPTIONS,
		{ "also-passfile",	required_argument, NULL, OPT_ALSO_PASSFILE },
		{ "also-keyfile",	required_argument, NULL, OPT_ALSO_KEYFILE },
		{ NULL, 0, NULL, 0 }
	};
	struct rekey_opts o = { .rot.src = { .kind = SC_SECRET_TTY } };
	struct sc_cli_rot run = { .cmd = cmd, .mark = SC_FEAT_REKEYING };
	int r;

	prctl(PR_SET_DUMPABLE, 0);	/* no core dump or ptrace while we hold the keys */
	r = sc_cli_parse(cmd, argc, argv, ":h", opts, rekey_help, rekey_option, &o,
			 &o.rot.backing);
	return r == SC_CLI_GO_ON ? sc_cli_rot_main(&run, &o.rot, rekey_run, &o) : r;
}
