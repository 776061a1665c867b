/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_mount.c - `stackcrypt mount`: options, checks, and the phases of a
 * mount (sc_cmd_mount, at the end: one function each).
 *
 * Options live in one struct filled by a fuse_opt table built with offsetof
 * (help text beside it); defaults are set before parsing and the options are
 * checked against each other after.  The mount runs in a child process from
 * the start: the child asks for the secret (it keeps the terminal), unlocks
 * the volume (so its mlock()ed key lives in the process that uses it: locks
 * are not inherited across fork), builds the stack, has the front end mount
 * it (include/sc_fuse.h: the libfuse session is fs/fuse's), and only then
 * detaches and tells the waiting parent its exit status.  So exit status 0
 * means mounted, and every failure before that exits with the code of
 * include/sc_cmd.h and a one-line reason on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "sc_cmd.h"
#include "sc_fresh.h"
#include "sc_fuse.h"
#include "sc_stack.h"
#include "sc_volume.h"
#include "sc_xlator.h"
#include "sc_cli.h"
#include "mount_i.h"
#include "mount_log_i.h"
#include "sc_backing.h"

#define SC_MAX_IO		(1024 * 1024)	/* largest read/write request we ask for */
#define SC_DEFAULT_THREADS	10		/* libfuse's own default */
/*
 * attr_timeout and entry_timeout (seconds).  One daemon per volume (the
 * lock on BACKING/.stackcrypt.lock) sees every change, and the kernel drops
 * what each request it sends changes.  What the daemon changes on its own
 * is in a reply before the kernel caches it (the crash journal's repair
 * runs at lookup) or is told to the kernel (set-id bits: setid.c).  So the
 * caches stay right however long they are kept; 30 s is securefs's
 * default, and the request counts are in docs/performance.md 14.1.
 */
#define SC_DEFAULT_CACHE_TIMEOUT	30.0

enum {
	KEY_HELP,
	KEY_DEBUG,
	KEY_RO,
	KEY_FSNAME,
	KEY_SHARED,
	KEY_DEFAULT_PERMS,
	KEY_PASSWORD,
};

#define SC_OPT(t, field, v) { t, offsetof(struct sc_mount_opts, field), v }

static const struct fuse_opt mount_opts[] = {
	SC_OPT("--stack=%s",		stack, 0),
	SC_OPT("--reverse",		reverse, 1),
	SC_OPT("--config=%s",		config, 0),
	SC_OPT("--state-dir=%s",	state_dir, 0),
	SC_OPT("--allow-rollback",	allow_rollback, 1),
	SC_OPT("-f",			foreground, 1),
	SC_OPT("-s",			single_thread, 1),
	SC_OPT("-q",			quiet, 1),
	SC_OPT("--quiet",		quiet, 1),
	SC_OPT("--keyfile=%s",		keyfile, 0),
	SC_OPT("--passfile=%s",		passfile, 0),
	SC_OPT("--extpass=%s",		extpass, 0),
	SC_OPT("--masterkey=%s",	masterkey, 0),
	SC_OPT("--masterkey",		masterkey_ask, 1),	/* asked on the terminal */
	/* the same as -o options, for fstab lines (mount.fuse3 passes -o only) */
	SC_OPT("keyfile=%s",		keyfile, 0),
	SC_OPT("passfile=%s",		passfile, 0),
	SC_OPT("writeback",		writeback, 1),
	SC_OPT("nonempty",		nonempty, 1),
	SC_OPT("attr_timeout=%lf",	attr_timeout, 0),
	SC_OPT("entry_timeout=%lf",	entry_timeout, 0),
	SC_OPT("max_threads=%u",	max_threads, 0),
	SC_OPT("max_path_fds=%ld",	max_path_fds, 0),
	SC_OPT("no_killpriv_v2",	no_killpriv_v2, 1),
	SC_OPT("no_parallel_dio",	no_parallel_dio, 1),
	SC_OPT("noxattr",		noxattr, 1),
	SC_OPT("quiet",			quiet, 1),	/* -q for fstab lines */
	SC_OPT("loop=lifo",		loop_lifo, 1),
	SC_OPT("loop=libfuse",		loop_lifo, 0),
	SC_OPT("io_uring",		io_uring, 1),
	SC_OPT("idle=%s",		idle, 0),
	SC_OPT("stats",			stats_on, 1),
	SC_OPT("stats=%s",		stats, 0),
	SC_OPT("gluster_log=%s",	gluster_log, 0),
	SC_OPT("log=%s",		log, 0),
	SC_OPT("state_dir=%s",		state_dir, 0),
	SC_OPT("allow_rollback",	allow_rollback, 1),
	FUSE_OPT_KEY("-d",		KEY_DEBUG),
	FUSE_OPT_KEY("debug",		KEY_DEBUG),
	FUSE_OPT_KEY("ro",		KEY_RO),
	FUSE_OPT_KEY("fsname=",		KEY_FSNAME),
	FUSE_OPT_KEY("allow_other",	KEY_SHARED),
	FUSE_OPT_KEY("allow_root",	KEY_SHARED),
	FUSE_OPT_KEY("default_permissions", KEY_DEFAULT_PERMS),
	FUSE_OPT_KEY("-h",		KEY_HELP),
	FUSE_OPT_KEY("--help",		KEY_HELP),
	/* Passwords never on the command line: every process can read argv. */
	FUSE_OPT_KEY("--password",	KEY_PASSWORD),
	FUSE_OPT_KEY("--password=",	KEY_PASSWORD),
	FUSE_OPT_KEY("--passwd=",	KEY_PASSWORD),
	FUSE_OPT_KEY("--pass=",		KEY_PASSWORD),
	FUSE_OPT_KEY("password",	KEY_PASSWORD),
	FUSE_OPT_KEY("password=",	KEY_PASSWORD),
	FUSE_OPT_KEY("passwd=",		KEY_PASSWORD),
	FUSE_OPT_END
};

const char sc_mount_usage[] =
"usage: stackcrypt mount [options] BACKING MOUNTPOINT\n"
"\n"
"Mounts BACKING (a directory, or gluster://HOST[:PORT]/VOLUME[/PATH]: a\n"
"directory of a GlusterFS volume, reached through libgfapi, or\n"
"cephfs://[ID@][HOST[:PORT]]/FS[/PATH]: a directory of a CephFS file system,\n"
"reached through libcephfs with $CEPH_CONF's monitors and keyring) at MOUNTPOINT.\n"
"Exit status 0 means mounted.\n"
"Unmount with `fusermount3 -u MOUNTPOINT`, or SIGINT/SIGTERM to the daemon.\n"
"\n"
"Options:\n"
"  --stack=crypt|passthrough  crypt (default): the encrypted view of a volume\n"
"                             made by `stackcrypt init`; passthrough: plain\n"
"                             FUSE view of any directory, no crypt layer\n"
"  --reverse                  BACKING is a directory of plaintext files with\n"
"                             a reverse-mode config (init --reverse): shows\n"
"                             them as an aes-gcm volume with encrypted names,\n"
"                             read-only, the same bytes at every mount; a copy\n"
"                             of it mounts as an ordinary volume (backups)\n"
"  --config=FILE              with --reverse: the config made by init --reverse\n"
"                             --config=FILE (default BACKING/\n"
"                             .stackcrypt.reverse.conf)\n"
"  -f                         stay in the foreground\n"
"  -d                         debug output (implies -f)\n"
"  -s                         single-threaded\n"
"  -q, --quiet                no line saying what was mounted (warnings stay)\n"
"  --state-dir=DIR            integrity volumes: where this client keeps its\n"
"                             freshness record, DIR/UUID.state (default\n"
"                             $XDG_STATE_HOME/stackcrypt, else\n"
"                             ~/.local/state/stackcrypt)\n"
"  --allow-rollback           integrity volumes: accept files (and the volume)\n"
"                             older than this client saw, a restore made on\n"
"                             purpose; each is logged and the record lowered\n"
"  -h, --help                 this text\n"
"\n"
"Secret (crypt stack; at most one; default: ask on the terminal):\n"
"  --keyfile=FILE             raw key file (64 hex characters)\n"
"  --passfile=FILE            password from the first line of FILE (- = stdin)\n"
"  --extpass=CMD              password from the first line CMD prints (sh -c)\n"
"  --masterkey[=FILE]         the master key printed by init (recovery when the\n"
"                             password or the config is lost): asked on the\n"
"                             terminal, or read from FILE (- = stdin)\n"
"  Passwords are never accepted on the command line.\n"
"\n"
"Mount options (-o OPT[,OPT...]):\n"
"  ro                         read-only\n"
"  allow_other                let other users in (needs user_allow_other in\n"
"                             /etc/fuse.conf unless root)\n"
"  default_permissions        the kernel checks permissions (always on with\n"
"                             allow_other or allow_root; otherwise only this\n"
"                             user reaches the mount, and the backing checks\n"
"                             each call as that user)\n"
"  fsname=NAME                name in /proc/mounts (default: BACKING)\n"
"  subtype=TYPE               type suffix in /proc/mounts (default: stackcrypt)\n"
"  attr_timeout=SECONDS       attribute cache time (default 30)\n"
"  entry_timeout=SECONDS      name and missing-name cache time (default 30)\n"
"  writeback                  FUSE writeback cache (kernel merges small writes)\n"
"  nonempty                   allow a non-empty MOUNTPOINT\n"
"  max_threads=N              worker threads at most (default 10)\n"
"  loop=libfuse|lifo          libfuse's worker loop (default), or one reader\n"
"                             at a time, idle workers on a LIFO stack: faster\n"
"                             creating many small files (untar, cp -r), 3x\n"
"                             slower for one program's synchronous I/O\n"
"  io_uring                   FUSE over io_uring (Linux 6.14+, root sets\n"
"                             /sys/module/fuse/parameters/enable_uring): a\n"
"                             prototype; falls back to /dev/fuse with a notice\n"
"  idle=DURATION              unmount after DURATION without a request and\n"
"                             with no file or directory open (e.g. 30s, 10m,\n"
"                             1h30m; units ms, s, m, h; 0: never, the default)\n"
"  max_path_fds=N             cached files that keep an open O_PATH fd; the\n"
"                             rest are reached by file handle (root only;\n"
"                             default: half the open-file limit)\n"
"  no_killpriv_v2             let the kernel ask for security.capability\n"
"                             before every write (slower; for comparison)\n"
"  no_parallel_dio            O_DIRECT writers of one file wait for each\n"
"                             other in the kernel, as without stackcrypt's\n"
"                             direct_io handling (for comparison)\n"
"  noxattr                    no extended attributes through the mount, not\n"
"                             even user.* and trusted.* (the only ones served\n"
"                             without it): they fail with EOPNOTSUPP, and the\n"
"                             kernel stops asking\n"
"  stats[=WHERE]              count and time every operation (calls, errors,\n"
"                             bytes, mean and p99 latency) for `stackcrypt\n"
"                             stats MOUNTPOINT`: an io-stats layer under the\n"
"                             front end (WHERE=top, the default), at every\n"
"                             boundary (all), or just above the layers named\n"
"                             (names on a volume with encrypted names, crypt,\n"
"                             posix or gluster; several joined by ':')\n"
"  log=FILE|syslog            where the daemon's messages go (default: syslog\n"
"                             if /dev/log takes them, else the file the\n"
"                             \"mounted\" line names: see Messages in\n"
"                             `man stackcrypt`; -f without it: stderr)\n"
"  gluster_log=FILE           where libgfapi logs, warnings and worse, for a\n"
"                             gluster:// BACKING (default: /var/log/glusterfs/\n"
"                             stackcrypt-VOLUME.log, /dev/null if unwritable)\n"
"  keyfile=FILE, passfile=FILE  as --keyfile/--passfile (for fstab lines)\n"
"  state_dir=DIR, allow_rollback  as --state-dir/--allow-rollback\n"
"  quiet                      as -q (for fstab lines)\n"
"  auto_unmount               unmount when the daemon dies\n"
"  Other libfuse options are passed on (see `man mount.fuse3`); all are\n"
"  checked before the secret is asked for.\n"
"\n"
"Exit status: 0 mounted, 1 failure, 2 usage, 10 BACKING, 11 MOUNTPOINT,\n"
"12 wrong password or key, 13 config missing or corrupt, 14 no usable secret.\n";

static void set_err(struct sc_mount_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_err(struct sc_mount_opts *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->err, sizeof(o->err), fmt, ap);
	va_end(ap);
}

/* fuse_opt callback: 0 = consumed, 1 = keep for libfuse, -1 = error. */
static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct sc_mount_opts *o = data;

	(void)outargs;
	switch (key) {
	case KEY_HELP:
		o->help = 1;
		return 0;
	case KEY_DEBUG:
		o->debug = 1;
		o->foreground = 1;
		return 1;	/* libfuse prints the requests */
	case KEY_RO:
		o->read_only = 1;
		return 1;
	case KEY_FSNAME:
		o->have_fsname = 1;
		return 1;
	case KEY_SHARED:
		o->shared = 1;
		return 1;
	case KEY_DEFAULT_PERMS:
		o->default_perms = 1;
		return 0;	/* add_fuse_args adds it */
	case KEY_PASSWORD:
		set_err(o, "passwords are never taken on the command line (any user "
			"can read it); use --passfile=FILE, --extpass=CMD or the prompt");
		return -1;
	case FUSE_OPT_KEY_NONOPT:
		if (!o->backing)
			o->backing = strdup(arg);
		else if (!o->mountpoint)
			o->mountpoint = strdup(arg);
		else {
			set_err(o, "unexpected argument '%s'", arg);
			return -1;
		}
		return 0;
	case FUSE_OPT_KEY_OPT:
	default:
		if (arg[0] == '-') {
			set_err(o, "unknown option '%s'", arg);
			return -1;
		}
		return 1;	/* a mount option for libfuse, which checks it */
	}
}

/* ---- libfuse's options, checked before anything is asked ---------------- */

struct fuse_complaint {
	char	text[256];
};

static struct fuse_complaint *complaint;	/* set only during check_fuse_args */

static void capture_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	size_t n = strlen(complaint->text);

	if (level <= FUSE_LOG_ERR && n < sizeof(complaint->text) - 1)
		vsnprintf(complaint->text + n, sizeof(complaint->text) - n, fmt, ap);
}

/*
 * The part of a libfuse complaint between `...': "`-o foo,bar'" gives
 * "foo,bar".  Returns the text (in place) or NULL.
 */
static char *quoted_part(char *text)
{
	char *start = strchr(text, '`'), *end;

	if (!start)
		return NULL;
	start++;
	end = strrchr(start, '\'');
	if (!end)
		return NULL;
	*end = '\0';
	if (!strncmp(start, "-o ", 3))
		start += 3;
	return start;
}

/* Puts what libfuse said about an option (captured) in our words, in o->err. */
static void complaint_to_err(struct fuse_complaint *c, struct sc_mount_opts *o)
{
	char *what;

	c->text[strcspn(c->text, "\n")] = '\0';
	if (strstr(c->text, "unknown option") && (what = quoted_part(c->text)))
		set_err(o, what[0] ? "unknown mount option%s '%s'" : "empty mount option%s%s",
			strchr(what, ',') ? "s" : "", what);
	else if (strstr(c->text, "invalid parameter") && (what = quoted_part(c->text)))
		set_err(o, "bad value in option '%s'", what);
	else
		set_err(o, "libfuse refused the options: %s",
			c->text[0] ? c->text + (strncmp(c->text, "fuse: ", 6) ? 0 : 6) :
			"no reason given");
}

/*
 * libfuse checks its own options (allow_other, fsname=, max_read=, ...) in
 * fuse_session_new(), which the mount reaches only after the password and
 * the scrypt unlock.  So the front end makes a trial session here
 * (sc_fuse_args_check), with libfuse's complaint captured and put in our
 * words.
 */
static int check_fuse_args(const struct fuse_args *fargs, struct sc_mount_opts *o)
{
	struct fuse_complaint c = { "" };
	int ret;

	complaint = &c;
	fuse_set_log_func(capture_log);
	ret = sc_fuse_args_check(fargs);
	fuse_set_log_func(NULL);
	complaint = NULL;
	if (ret == -ENOMEM) {
		set_err(o, "out of memory");
		return SC_EXIT_FAIL;
	}
	if (ret < 0) {
		complaint_to_err(&c, o);
		return SC_EXIT_USAGE;
	}
	return 0;
}

/* ---- io-stats layers (-o stats) ----------------------------------------- */

/*
 * The boundaries of a stack of the n layers names[] (top first) that
 * -o stats=SPEC asks for: at[i] is the boundary just above names[i].
 * SPEC is a ':'-separated list (the comma separates mount options) of top
 * (under the front end), all, or a layer's name.  Returns 0, or -EINVAL
 * with err set.
 */
static int stats_plan(const char *spec, const char *const *names, size_t n, bool *at,
		      char *err, size_t errlen)
{
	const char *p = spec;
	size_t i, len;

	if (n == 0) {
		snprintf(err, errlen, "stats=%s: the stack has no layers", spec);
		return -EINVAL;
	}
	do {
		len = strcspn(p, ":");
		if (len == 3 && !strncmp(p, "top", 3)) {
			at[0] = true;
		} else if (len == 3 && !strncmp(p, "all", 3)) {
			for (i = 0; i < n; i++)
				at[i] = true;
		} else {
			for (i = 0; i < n; i++)
				if (strlen(names[i]) == len && !strncmp(p, names[i], len))
					break;
			if (i == n) {
				char known[64] = "";

				for (i = 0; i < n; i++)
					snprintf(known + strlen(known), sizeof(known) - strlen(known),
						 "%s%s", i ? ", " : "", names[i]);
				snprintf(err, errlen, "stats=%s: '%.*s' is no boundary of this "
					 "stack (top, all, or a layer: %s)", spec, (int)len, p, known);
				return -EINVAL;
			}
			at[i] = true;
		}
		p += len;
	} while (*p++ == ':');
	return 0;
}

/*
 * Whether the volume in backing encrypts names, and whether its cipher is
 * aes-gcm (its data layer is then "gcm"), from a quiet look at its config
 * (no secret needed).  A config that cannot be read says no: the unlock
 * reports it, and add_iostats checks the plan again on the stack the
 * unlocked config makes.
 */
static bool volume_peek(const char *backing, bool *gcm)
{
	struct sc_config cfg;
	char err[512];

	*gcm = false;
	if (sc_vol_config_read(backing, NULL, &cfg, err, sizeof(err)) != 0)
		return false;
	*gcm = cfg.cipher == SC_CIPHER_AES_GCM;
	return cfg.features & SC_FEAT_NAMES;
}

/*
 * The stack a mount builds for kind over a volume with these features
 * (names: the names layer on top, above every io-stats layer).  0 or -errno.
 */
static int mount_spec_init(struct sc_stack_spec *spec, enum sc_stack kind, bool names,
			   const struct sc_mkey *mkey, const struct sc_stack_hide *hide)
{
	int r = sc_stack_spec_init(spec, kind, mkey, hide);

	if (r == 0 && names)
		r = sc_stack_spec_insert(spec, 0, SC_XL_NAMES);
	return r;
}

/*
 * -o stats and -o noxattr exclude each other (the stats are read through
 * an extended attribute); the boundaries named must exist in the stack
 * asked for.  Both checked before the secret is asked for.  Returns 0 or
 * -EINVAL with o->err set.
 */
static int stats_check(struct sc_mount_opts *o)
{
	const char *lnames[SC_XL_MAX] = { NULL };
	bool at[SC_XL_MAX] = { false };
	struct sc_stack_spec spec;
	bool names = false, gcm = false;
	size_t n;

	if (!o->stats_on && !o->stats)
		return 0;
	if (o->noxattr) {
		set_err(o, "-o stats and -o noxattr exclude each other: the stats are "
			"read through an extended attribute");
		return -EINVAL;
	}
	/* The layers the mount will build: no key is needed to name them. */
	if (o->stack_kind == SC_STACK_CRYPT)
		names = volume_peek(o->backing, &gcm);
	if (mount_spec_init(&spec, o->stack_kind, names, NULL, NULL) < 0) {
		set_err(o, "unknown stack");
		return -EINVAL;
	}
	sc_backing_stack_bottom(o->backing, NULL, &spec);	/* names the bottom only */
	for (n = 0; n < spec.nlayers; n++)
		lnames[n] = sc_stack_kind_name(gcm && spec.layers[n] == SC_XL_CRYPT ?
					       SC_XL_GCM : spec.layers[n]);
	return stats_plan(o->stats ? o->stats : "top", lnames, n, at, o->err, sizeof(o->err));
}

/*
 * Adds an io-stats layer to spec at each boundary that plan names (NULL:
 * none); the builder labels each with its boundary ("fuse>crypt").  No
 * other layer changes.  Returns 0 or -errno with err set.
 */
static int add_iostats(struct sc_stack_spec *spec, const char *plan, char *err, size_t errlen)
{
	const char *names[SC_XL_MAX] = { NULL };
	bool at[SC_XL_MAX] = { false };
	size_t n = spec->nlayers, i, added = 0;
	int ret;

	if (!plan)
		return 0;
	for (i = 0; i < n; i++)
		names[i] = sc_stack_kind_name(spec->layers[i]);
	ret = stats_plan(plan, names, n, at, err, errlen);
	for (i = 0; ret == 0 && i < n; i++) {
		if (!at[i])
			continue;
		ret = sc_stack_spec_insert(spec, (unsigned int)(i + added++), SC_XL_IOSTATS);
		if (ret < 0)
			snprintf(err, errlen, "cannot add an io-stats layer above %s: %s",
				 names[i], strerror(-ret));
	}
	return ret;
}

int sc_mount_parse_duration(const char *s, double *seconds)
{
	static const struct { const char *name; double scale; } units[] = {
		{ "ms", 1e-3 }, { "s", 1 }, { "m", 60 }, { "h", 3600 },
	};
	double total = 0;
	const char *p = s;

	if (!strcmp(s, "0")) {	/* Go's time.ParseDuration takes a bare 0 too */
		*seconds = 0;
		return 0;
	}
	if (!*p)
		return -EINVAL;
	while (*p) {
		double v = 0, place = 1;
		bool digits = false;
		size_t i, len;

		/* by hand, not strtod: no sign, exponent or hex, and no locale's comma */
		for (; *p >= '0' && *p <= '9'; p++, digits = true)
			v = v * 10 + (*p - '0');
		if (*p == '.')
			for (p++; *p >= '0' && *p <= '9'; p++, digits = true)
				v += (*p - '0') * (place /= 10);
		if (!digits)
			return -EINVAL;
		len = strspn(p, "hms");
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strlen(units[i].name) == len && !strncmp(p, units[i].name, len))
				break;
		if (len == 0 || i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		total += v * units[i].scale;
		p += len;
	}
	/* 0 (0s, 0m) is never; a month at most: beyond it a typo is likelier than a wish */
	if (total != 0 && !(total >= 0.001 && total <= 31 * 86400.0))
		return -ERANGE;
	*seconds = total;
	return 0;
}

/*
 * --reverse: its own stack, always read-only; no --stack, no recovery by
 * master key (a reverse config stores nothing to recover).  Over a
 * directory or gluster://: the reverse layer reaches the tree only by the
 * bottom layer's operations.  0 or the exit status with o->err set.
 */
static int reverse_opts(struct sc_mount_opts *o)
{
	if (!o->reverse) {
		set_err(o, "--config is for --reverse (a volume's config is BACKING/%s)",
			SC_CONFIG_NAME);
		return SC_EXIT_USAGE;
	}
	if (o->stack) {
		set_err(o, "--reverse and --stack exclude each other");
		return SC_EXIT_USAGE;
	}
	if (o->masterkey || o->masterkey_ask) {
		set_err(o, "--reverse takes a password or key file, not --masterkey");
		return SC_EXIT_USAGE;
	}
	o->stack_kind = SC_STACK_REVERSE;
	o->read_only = 1;
	return 0;
}

int sc_mount_parse(int argc, char **argv, struct sc_mount_opts *o, struct fuse_args *fargs)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_complaint c = { "" };
	int nsecrets, ret;

	memset(o, 0, sizeof(*o));
	o->attr_timeout = SC_DEFAULT_CACHE_TIMEOUT;
	o->entry_timeout = SC_DEFAULT_CACHE_TIMEOUT;
	o->max_threads = SC_DEFAULT_THREADS;
	o->max_path_fds = -1;
	*fargs = (struct fuse_args)FUSE_ARGS_INIT(0, NULL);

	complaint = &c;		/* a bad value (attr_timeout=abc): libfuse logs it */
	fuse_set_log_func(capture_log);
	ret = fuse_opt_parse(&args, o, mount_opts, opt_proc);
	fuse_set_log_func(NULL);
	complaint = NULL;
	if (ret == -1) {
		if (!o->err[0])
			complaint_to_err(&c, o);
		fuse_opt_free_args(&args);
		return SC_EXIT_USAGE;
	}
	*fargs = args;
	if (o->help)
		return 0;

	if (o->reverse || o->config) {
		ret = reverse_opts(o);
		if (ret)
			return ret;
	} else if (!o->stack || !strcmp(o->stack, "crypt")) {
		o->stack_kind = SC_STACK_CRYPT;
	} else if (!strcmp(o->stack, "passthrough")) {
		o->stack_kind = SC_STACK_PASSTHROUGH;
	} else {
		set_err(o, "unknown stack '%s' (crypt or passthrough)", o->stack);
		return SC_EXIT_USAGE;
	}
	nsecrets = !!o->keyfile + !!o->passfile + !!o->extpass +
		   !!(o->masterkey || o->masterkey_ask);
	if (nsecrets > 1) {
		set_err(o, "give at most one of --keyfile, --passfile, --extpass, --masterkey");
		return SC_EXIT_USAGE;
	}
	if (nsecrets && o->stack_kind == SC_STACK_PASSTHROUGH) {
		set_err(o, "the passthrough stack takes no secret");
		return SC_EXIT_USAGE;
	}
	if (!o->backing || !o->mountpoint) {
		set_err(o, "BACKING and MOUNTPOINT are required");
		return SC_EXIT_USAGE;
	}
	if (!(o->attr_timeout >= 0) || !(o->entry_timeout >= 0)) {
		set_err(o, "attr_timeout and entry_timeout must be >= 0");
		return SC_EXIT_USAGE;
	}
	if (o->max_path_fds < -1) {
		set_err(o, "max_path_fds must be >= 0");
		return SC_EXIT_USAGE;
	}
	if (o->max_threads < 1 || o->max_threads > 1024) {
		set_err(o, "max_threads must be between 1 and 1024");
		return SC_EXIT_USAGE;
	}
	ret = o->idle ? sc_mount_parse_duration(o->idle, &o->idle_s) : 0;
	if (ret == -ERANGE) {
		set_err(o, "idle=%s: out of range (1ms to 744h, or 0 for never)", o->idle);
		return SC_EXIT_USAGE;
	}
	if (ret < 0) {
		set_err(o, "idle=%s: not a duration (numbers with a unit, ms, s, m or h, "
			"as in 30s, 10m, 1h30m; 0 for never)", o->idle);
		return SC_EXIT_USAGE;
	}
	if (stats_check(o) < 0)
		return SC_EXIT_USAGE;
	return check_fuse_args(fargs, o);
}

/* True if path is dir or lies below it (both canonical). */
static int path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return 1;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

static int is_mount_root(const char *path, int *yes)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx) < 0)
		return -errno;
	if (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) {
		*yes = !!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	} else {
		/* Kernels before 5.8: compare with the parent's device. */
		char parent[PATH_MAX + 4];
		struct stat a, b;

		snprintf(parent, sizeof(parent), "%s/..", path);
		if (stat(path, &a) < 0 || stat(parent, &b) < 0)
			return -errno;
		*yes = a.st_dev != b.st_dev || a.st_ino == b.st_ino;
	}
	return 0;
}

/* Returns 1 if the directory has entries besides . and .., 0, or -errno. */
static int dir_has_entries(const char *path)
{
	struct dirent *d;
	DIR *dp = opendir(path);
	int found = 0;

	if (!dp)
		return -errno;
	while ((d = readdir(dp))) {
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..")) {
			found = 1;
			break;
		}
	}
	closedir(dp);
	return found;
}

/*
 * The file system type of the mount at the canonical path mnt, from
 * /proc/self/mountinfo (mount points there escape ' ', '\t', '\n' and '\\'
 * as octal; such a path is simply not found).  Returns 1 and fills type,
 * or 0.
 */
static int mount_type_at(const char *mnt, char *type, size_t typelen)
{
	char *line = NULL, *point, *fstype, *save;
	size_t cap = 0;
	int i, found = 0;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		char *sep = strstr(line, " - ");

		if (!sep)
			continue;
		fstype = strtok_r(sep + 3, " \n", &save);
		point = strtok_r(line, " ", &save);
		for (i = 1; point && i < 5; i++)
			point = strtok_r(NULL, " ", &save);
		if (fstype && point && !strcmp(point, mnt)) {
			snprintf(type, typelen, "%s", fstype);
			found = 1;	/* the last one listed is the one on top */
		}
	}
	free(line);
	fclose(f);
	return found;
}

/*
 * Does errno e say a FUSE mount's daemon died?  ENOTCONN, or, for a mount
 * over io_uring, ECONNABORTED when the kernel aborted the connection
 * itself (the rings go with the daemon) or ECANCELED for a request that
 * reached a ring while its task was dying (the kernel ends it from the
 * dead task's work; which of the two a caller sees depends on the race).
 */
static bool dead_mount_errno(int e)
{
	return e == ENOTCONN || e == ECONNABORTED || e == ECANCELED;
}

/*
 * path (as the user gave it) failed as dead_mount_errno says: a FUSE mount
 * whose daemon died (killed, crashed).  The kernel keeps the mount until
 * someone unmounts it, and every access fails: name the way out.
 */
static void dead_mount_err(struct sc_mount_opts *o, const char *what, const char *path)
{
	char *copy = strdup(path), *dir = NULL, *slash, abs[PATH_MAX + NAME_MAX + 2], type[64];
	const char *base = copy;
	int stackcrypt = 0, known = 0;
	bool up = false;
	size_t n;

	/* The mount point itself cannot be resolved any more: its parent can. */
	if (copy) {
		n = strlen(copy);
		while (n > 1 && copy[n - 1] == '/')
			copy[--n] = '\0';
		slash = strrchr(copy, '/');
		if (!slash) {
			dir = realpath(".", NULL);
		} else {
			base = slash + 1;
			*slash = '\0';
			dir = realpath(slash == copy ? "/" : copy, NULL);
		}
		if (dir && snprintf(abs, sizeof(abs), "%s/%s", strcmp(dir, "/") ? dir : "",
				    base) < (int)sizeof(abs)) {
			/* path may lie below the dead mount point: name that one */
			while (!(known = mount_type_at(abs, type, sizeof(type))) &&
			       (slash = strrchr(abs, '/')) && slash != abs) {
				*slash = '\0';
				up = true;
			}
			stackcrypt = known && !strcmp(type, "fuse.stackcrypt");
		}
	}
	if (!known)
		set_err(o, "%s%s: a stackcrypt daemon died here; run 'fusermount3 -u %s' "
			"and mount again", what, path, path);
	else if (stackcrypt)
		set_err(o, "%s%s: a stackcrypt daemon died here; run 'fusermount3 -u %s' "
			"and mount again", what, path, up ? abs : path);
	else
		set_err(o, "%s%s: the daemon of this %s mount died; run 'fusermount3 -u %s' "
			"and mount again", what, path, type, up ? abs : path);
	free(dir);
	free(copy);
}

/*
 * stat(2) of path, asked of its file system, not of the kernel's cache:
 * a FUSE mount whose daemon died keeps answering a plain stat from its
 * attribute cache (30 s by default after the last access), and only a
 * request that reaches the connection says it is gone (ENOTCONN, or
 * dead_mount_errno's other codes).  AT_STATX_FORCE_SYNC makes FUSE send
 * that request; a local file system answers it as any stat.  Sets *mode;
 * returns 0 or -1 with errno set.
 */
static int stat_fresh(const char *path, mode_t *mode)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_STATX_FORCE_SYNC, STATX_TYPE | STATX_MODE, &stx) < 0)
		return -1;
	*mode = stx.stx_mode;
	return 0;
}

/*
 * The kind of MOUNTPOINT's file system when it is one that asks a server
 * (or a daemon) whether a cached directory still exists: FUSE and the
 * network file systems.  When that check fails (ENOENT, seen here: a
 * GlusterFS brick restarting, a server that lost a handle), the kernel
 * forgets the directory and detaches every mount below it, ours too,
 * without a word, and the daemon exits as after an unmount (seen in CI:
 * tests/gluster/brick_restart_test.py).  NULL for a local file system.
 */
static const char *remote_kind(const char *path)
{
	static const struct { unsigned long magic; const char *name; } kinds[] = {
		{ 0x65735546, "FUSE" }, { 0x6969, "NFS" }, { 0xff534d42, "CIFS" },
		{ 0xfe534d42, "SMB" }, { 0x517b, "SMB" }, { 0x00c36400, "Ceph" },
		{ 0x01021997, "9P" }, { 0x5346414f, "AFS" }, { 0x0bd00bd0, "Lustre" },
	};
	struct statfs sf;

	if (statfs(path, &sf) < 0)
		return NULL;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((unsigned long)sf.f_type == kinds[i].magic)
			return kinds[i].name;
	return NULL;
}

int sc_mount_check_paths(struct sc_mount_opts *o)
{
	struct statvfs sv;
	mode_t mode;
	int ret, mounted = 0;	/* is_mount_root sets it whenever it returns 0; -O3 cannot see that */

	/* a backing reached by URL is checked when the daemon connects to it */
	if (!sc_backing_is_dir(o->backing)) {
		o->backing_real = strdup(o->backing);
		if (!o->backing_real) {
			set_err(o, "out of memory");
			return SC_EXIT_FAIL;
		}
		goto check_mountpoint;
	}
	o->backing_real = realpath(o->backing, NULL);
	if (!o->backing_real || stat_fresh(o->backing_real, &mode) < 0) {
		if (dead_mount_errno(errno))
			dead_mount_err(o, "BACKING ", o->backing);
		else
			set_err(o, "BACKING %s: %s", o->backing, strerror(errno));
		return SC_EXIT_BACKING;
	}
	if (!S_ISDIR(mode)) {
		set_err(o, "BACKING %s: not a directory", o->backing);
		return SC_EXIT_BACKING;
	}
	/*
	 * On a read-only file system every write would fail with EROFS, after
	 * the user thought the volume writable: mount it read-only, as
	 * mount(8) does a write-protected device (the caller says so).
	 */
	if (!o->read_only && statvfs(o->backing_real, &sv) == 0 && (sv.f_flag & ST_RDONLY))
		o->read_only = o->ro_forced = 1;
check_mountpoint:
	o->mountpoint_real = realpath(o->mountpoint, NULL);
	if (!o->mountpoint_real || stat_fresh(o->mountpoint_real, &mode) < 0) {
		if (dead_mount_errno(errno))
			dead_mount_err(o, "", o->mountpoint);
		else
			set_err(o, "MOUNTPOINT %s: %s", o->mountpoint, strerror(errno));
		return SC_EXIT_MOUNTPOINT;
	}
	if (!S_ISDIR(mode)) {
		set_err(o, "MOUNTPOINT %s: not a directory", o->mountpoint);
		return SC_EXIT_MOUNTPOINT;
	}
	o->mnt_remote = remote_kind(o->mountpoint_real);
	if (sc_backing_is_dir(o->backing) &&
	    (path_within(o->backing_real, o->mountpoint_real) ||
	     path_within(o->mountpoint_real, o->backing_real))) {
		set_err(o, "BACKING %s and MOUNTPOINT %s must not contain each other",
			o->backing_real, o->mountpoint_real);
		return SC_EXIT_MOUNTPOINT;
	}
	ret = is_mount_root(o->mountpoint_real, &mounted);
	if (ret < 0) {
		set_err(o, "MOUNTPOINT %s: %s", o->mountpoint, strerror(-ret));
		return SC_EXIT_MOUNTPOINT;
	}
	if (mounted) {
		set_err(o, "MOUNTPOINT %s is already a mount point", o->mountpoint);
		return SC_EXIT_MOUNTPOINT;
	}
	if (!o->nonempty) {
		ret = dir_has_entries(o->mountpoint_real);
		if (ret < 0) {
			set_err(o, "MOUNTPOINT %s: %s", o->mountpoint, strerror(-ret));
			return SC_EXIT_MOUNTPOINT;
		}
		if (ret) {
			set_err(o, "MOUNTPOINT %s is not empty (-o nonempty to allow)",
				o->mountpoint);
			return SC_EXIT_MOUNTPOINT;
		}
	}
	return 0;
}

void sc_mount_secret(const struct sc_mount_opts *o, struct sc_secret_src *src)
{
	src->kind = SC_SECRET_TTY;
	src->arg = NULL;
	if (o->keyfile) {
		src->kind = SC_SECRET_KEYFILE;
		src->arg = o->keyfile;
	} else if (o->passfile) {
		src->kind = SC_SECRET_PASSFILE;
		src->arg = o->passfile;
	} else if (o->extpass) {
		src->kind = SC_SECRET_EXTPASS;
		src->arg = o->extpass;
	} else if (o->masterkey || o->masterkey_ask) {
		src->kind = SC_SECRET_MASTERKEY;
		src->arg = o->masterkey;	/* NULL: asked on the terminal */
	}
}

void sc_mount_opts_free(struct sc_mount_opts *o)
{
	if (o->masterkey)
		explicit_bzero(o->masterkey, strlen(o->masterkey));
	free(o->stack);
	free(o->config);
	free(o->stats);
	free(o->idle);
	free(o->keyfile);
	free(o->passfile);
	free(o->extpass);
	free(o->masterkey);
	free(o->gluster_log);
	free(o->log);
	free(o->state_dir);
	free(o->backing);
	free(o->mountpoint);
	free(o->backing_real);
	free(o->mountpoint_real);
	memset(o, 0, sizeof(*o));
}

/*
 * The master key text was in our argv: blank it so ps shows no secret.
 * (A bare --masterkey asks on the terminal: the next argument is BACKING.)
 */
static void wipe_masterkey_argv(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--masterkey=", 12))
			explicit_bzero(argv[i] + 12, strlen(argv[i] + 12));
}

/* ---- one daemon per volume ---------------------------------------------- */

/*
 * Two daemons on one volume would each cache file headers and sizes, and
 * each act on stale ones (a truncate re-keys a file under the other's
 * feet): a second mount is refused, read-only ones too, whether it runs on
 * this machine or on another client of a shared backing file system
 * (docs/usage.md, "Over GlusterFS": one writer per volume).
 *
 * The daemon holds an OFD write lock on byte 0 of BACKING/.stackcrypt.lock,
 * an empty file the first mount makes (the mount hides it; fsck and init
 * pass over it).  A regular file, because FUSE hands the locks of regular
 * files to the file system, whose lock server makes them hold across
 * clients (GlusterFS's locks translator on the bricks), while a lock on a
 * directory stays in this kernel; and not the config, which passwd
 * replaces by rename while a daemon runs.  F_OFD_SETLK tests and takes in
 * one step, so two mounts cannot both win.  The kernel drops the lock with
 * the daemon's last fd, so kill -9 leaves no stale lock; the bricks drop
 * the locks of a GlusterFS client that dies.
 *
 * A backing the mount cannot write (a read-only file system) gets a read
 * lock on the lock file if it is there: it still refuses, and is refused
 * by, a writer.  Two such read-only mounts may coexist.
 *
 * Anything else at that path (a FIFO, directory, symlink, socket or device,
 * made by mistake or by someone who may write BACKING) is refused in one
 * line: it is no lock file a mount made, a lock on it may stay in this
 * kernel (a directory's does), and opening it may block or have effects.
 *
 * Returns the fd that holds the lock (O_CLOEXEC: an --extpass command must
 * not inherit it), -1 when the lock cannot be taken (with a warning; the
 * mount goes on), or -2 with o->err set and *code the exit code.
 */
static int lock_volume(struct sc_mount_opts *o, int *code)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	char mnt[PATH_MAX];
	const char *kind;
	struct stat st;
	int dfd, fd, err;

	dfd = open(o->backing_real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		set_err(o, "BACKING %s: %s", o->backing, strerror(errno));
		*code = SC_EXIT_BACKING;
		return -2;
	}
	/*
	 * Only a regular file is a lock file.  O_NONBLOCK: a FIFO put there
	 * must not hold the open until a writer comes (O_RDONLY would wait);
	 * O_NOCTTY: a terminal device must not become ours; O_NOFOLLOW: a
	 * symlink fails (ELOOP), as a directory does (EISDIR).  What the open
	 * let through, or refused for its type, is told by fstat/fstatat.
	 */
	fd = openat(dfd, SC_LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
		    O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EROFS || errno == EACCES || errno == EPERM)) {
		fd = openat(dfd, SC_LOCK_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
			    O_NOCTTY | O_CLOEXEC);
		fl.l_type = F_RDLCK;
	}
	err = errno;
	if (fd >= 0 ? fstat(fd, &st) : fstatat(dfd, SC_LOCK_NAME, &st, AT_SYMLINK_NOFOLLOW))
		st.st_mode = S_IFREG;	/* nothing more to tell: err stands */
	close(dfd);
	if (!S_ISREG(st.st_mode)) {
		kind = S_ISFIFO(st.st_mode) ? "FIFO" : S_ISDIR(st.st_mode) ? "directory" :
		       S_ISLNK(st.st_mode) ? "symbolic link" : S_ISSOCK(st.st_mode) ? "socket" :
		       "device";
		set_err(o, "BACKING %s: %s/%s is a %s, not a regular file; remove it and "
			"mount again", o->backing, o->backing, SC_LOCK_NAME, kind);
		if (fd >= 0)
			close(fd);
		*code = SC_EXIT_BACKING;
		return -2;
	}
	if (fd < 0)
		goto out_unlockable;
	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return fd;
	err = errno;
	close(fd);
	if (err != EAGAIN && err != EACCES)
		goto out_unlockable;
	if (sc_vol_mounted_at(o->backing_real, mnt, sizeof(mnt)))
		set_err(o, "BACKING %s is already mounted at %s (one mount per volume: "
			"each daemon caches headers and sizes)", o->backing, mnt);
	else
		set_err(o, "BACKING %s is in use by another stackcrypt mount, on this or "
			"another client of its file system (one mount per volume: each "
			"daemon caches headers and sizes)", o->backing);
	*code = SC_EXIT_BACKING;
	return -2;

out_unlockable:
	fprintf(stderr, "stackcrypt mount: warning: cannot lock %s/%s against a second "
		"mount (%s); make sure it is mounted only once\n", o->backing, SC_LOCK_NAME,
		strerror(err));
	return -1;
}

/* ---- detaching ---------------------------------------------------------- */

/*
 * Forks; the parent waits for the child's exit status on a pipe and exits
 * with it (1 if the child died without saying).  The parent first wipes and
 * frees its copy of the options (a --masterkey=TEXT): the child has its
 * own, and the parent may wait long (a password prompt).  Returns the
 * pipe's write end in the child, -1 on failure.
 */
static int daemon_fork(struct sc_mount_opts *o)
{
	int fds[2], status;
	unsigned char code;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid > 0) {
		close(fds[1]);
		sc_mount_opts_free(o);
		if (read(fds[0], &code, 1) == 1)
			_exit(code);
		/* The child exited before reporting: take its own status. */
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status))
			_exit(WEXITSTATUS(status));
		_exit(SC_EXIT_FAIL);
	}
	close(fds[0]);
	return fds[1];
}

static void daemon_report(int *fd, unsigned char code)
{
	if (*fd < 0)
		return;
	if (write(*fd, &code, 1) != 1) {
		/* The parent is gone; nothing to tell. */
	}
	close(*fd);
	*fd = -1;
}

/* Detaches from the terminal once mounted; stdio goes to /dev/null. */
static int daemon_detach(void)
{
	int nul;

	if (setsid() < 0)
		return -errno;
	if (chdir("/") < 0)
		return -errno;
	nul = open("/dev/null", O_RDWR);
	if (nul < 0)
		return -errno;
	dup2(nul, STDIN_FILENO);
	dup2(nul, STDOUT_FILENO);
	dup2(nul, STDERR_FILENO);
	if (nul > STDERR_FILENO)
		close(nul);
	return 0;
}

/*
 * Every inode the kernel holds a lookup on costs us one O_PATH fd, and the
 * kernel caches as many inodes as memory allows: a 1024-fd soft limit runs
 * out after a few thousand files (lookups then fail with EMFILE).  Raise
 * the soft limit to the hard one, and as root both to the system maximum.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	unsigned long nr_open = 0;
	FILE *f;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	f = fopen("/proc/sys/fs/nr_open", "r");
	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (nr_open > rl.rlim_max) {
		struct rlimit want = { .rlim_cur = nr_open, .rlim_max = nr_open };

		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			return;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* ---- the session's options ---------------------------------------------- */

/* Replaces every from in s (of size len) by to, as far as it fits. */
static void replace_all(char *s, size_t len, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to);
	char *p = s;

	while ((p = strstr(p, from))) {
		size_t tail = strlen(p + nf);

		if ((size_t)(p - s) + nt + tail >= len)
			return;
		memmove(p + nt, p + nf, tail + 1);
		memcpy(p, to, nt);
		p += nt;
	}
}

/*
 * Run by mount(8) (an fstab line; main.c's `stackcrypt BACKING MNT -o ...`
 * form) the secret options are -o keyfile=FILE and -o passfile=FILE, and
 * there is no --extpass: a hint in volume.c's words is put in those.
 */
static void fstab_words(char *err, size_t len)
{
	replace_all(err, len, "--extpass=CMD or ", "");
	replace_all(err, len, ", --extpass=CMD", "");
	replace_all(err, len, "--extpass=CMD, ", "");
	replace_all(err, len, "--keyfile=", "-o keyfile=");
	replace_all(err, len, "--passfile=", "-o passfile=");
}

/*
 * Adds the mount options we always want to the libfuse arguments.
 *
 * default_permissions (the kernel checks each call against the attributes
 * we return) only when other users come in (allow_other, allow_root) or
 * when asked for.  Otherwise the kernel lets no process but the mounting
 * user's reach the mount, and every call below runs as that user (the
 * daemon is that user, or root serving root), so the backing file system
 * gives the answer the kernel would; the check cost a GETATTR of the
 * directory after every name created or removed in it, since the kernel
 * drops a directory's attributes then (docs/performance.md 14, 19).
 * access(2) and chdir(2) then reach the daemon (op_access in handlers.c).
 */
static int add_fuse_args(struct fuse_args *fargs, const struct sc_mount_opts *o)
{
	char *opts = NULL;
	int ret = 0;

	if (o->shared || o->default_perms)
		ret = fuse_opt_add_opt(&opts, "default_permissions");
	/* the kernel's mount read-only too (-o ro passes through itself) */
	if (!ret && (o->ro_forced || o->stack_kind == SC_STACK_REVERSE))
		ret = fuse_opt_add_opt(&opts, "ro");
	if (!ret)
		ret = fuse_opt_add_opt(&opts, "subtype=stackcrypt");
	if (!ret && !o->have_fsname) {
		char *fsname = malloc(strlen(o->backing_real) + 8);

		if (!fsname)
			ret = -1;
		else {
			sprintf(fsname, "fsname=%s", o->backing_real);
			ret = fuse_opt_add_opt_escaped(&opts, fsname);
			free(fsname);
		}
	}
	if (!ret)
		ret = fuse_opt_add_arg(fargs, "-o");
	if (!ret)
		ret = fuse_opt_add_arg(fargs, opts);
	free(opts);
	return ret ? -ENOMEM : 0;
}

/*
 * The backing the stack runs on, opened in the daemon (a connection never
 * crosses a fork) before the config is read so that the read uses it too:
 * for gluster://, the connection, logging to -o gluster_log or the
 * engine's default (libgfapi's own lines would land among the daemon's
 * errors otherwise).  Returns 0, or the exit status after one line on
 * stderr.
 */
static int backing_open(const struct sc_mount_opts *o, struct sc_backing **b)
{
	char err[512];
	int ret;

	ret = sc_backing_open(o->backing_real, o->gluster_log ? o->gluster_log : "", b, err,
			      sizeof(err));
	if (ret < 0) {
		*b = NULL;
		if (o->fstab_form)
			fstab_words(err, sizeof(err));
		fprintf(stderr, "stackcrypt mount: %s\n", err);
		return ret == -EINVAL ? SC_EXIT_USAGE : SC_EXIT_BACKING;
	}
	return 0;
}

struct mount_run {
	int			argc;		/* the command line, for parse_options */
	char			**argv;
	struct sc_mount_opts	o;
	struct fuse_args	fargs;		/* the options for libfuse */
	int			lock_fd;	/* BACKING/.stackcrypt.lock held, or -1 */
	bool			lock_deferred;	/* no config yet: lock after the unlock */
	int			report_fd;	/* to the waiting parent, or -1 */
	struct sc_backing	*b;		/* where the files are (sc_backing.h) */
	struct sc_volume	*vol;		/* unlocked (crypt stack) */
	struct sc_fresh		*fresh;		/* integrity volumes: the freshness record */
	struct sc_xl		*top;		/* the stack */
	struct sc_fuse		*fs;		/* the front end, its session */
	bool			mounted;	/* sc_fuse_mount succeeded */
	struct sc_mount_log	log;		/* where the daemon's messages go */
	char			what[96];	/* cipher, unit size, transport: the "mounted" line */
	char			rev_conf[SC_CONFIG_MAX_TEXT];	/* --reverse: the view's config */
	size_t			rev_conf_len;
	const char		*rev_hide;	/* --reverse: the tree's config, not shown */
};

/* Options and paths; --help.  Nothing is asked or opened yet. */
static int parse_options(struct mount_run *m)
{
	struct sc_mount_opts *o = &m->o;
	int code;

	/*
	 * Not dumpable from the start: argv may hold a --masterkey=TEXT that
	 * parsing copies, and the parent that waits for the daemon holds it
	 * until it forks (no core dump, no ptrace, /proc/PID/mem closed to
	 * the user).  -d makes the process dumpable again for debugging.
	 */
	prctl(PR_SET_DUMPABLE, 0);
	code = sc_mount_parse(m->argc, m->argv, o, &m->fargs);
	o->fstab_form = strcmp(m->argv[0], "mount") != 0;	/* main.c: the mount(8) form */
	wipe_masterkey_argv(m->argc, m->argv);
	if (code) {
		fprintf(stderr, "stackcrypt mount: %s\n"
			"Try 'stackcrypt mount --help'.\n", o->err);
		return code;
	}
	if (o->help) {
		fputs(sc_mount_usage, stdout);
		return SC_EXIT_OK;
	}
	code = sc_mount_check_paths(o);
	if (code) {
		fprintf(stderr, "stackcrypt mount: %s\n", o->err);
		return code;
	}
	if (o->ro_forced)
		fprintf(stderr, "stackcrypt mount: %s is on a read-only file system: "
			"mounting read-only\n", o->backing);
	if (o->mnt_remote)
		fprintf(stderr, "stackcrypt mount: warning: MOUNTPOINT %s is on a %s file "
			"system, which can make the kernel drop this mount without a word "
			"(docs/usage.md, \"Where to mount\"): a local directory is safer\n",
			o->mountpoint_real, o->mnt_remote);
	/* Before anything is asked or locked: a bad -o log= ends it here. */
	o->err[0] = '\0';
	if (sc_mount_log_open(o->log, o->foreground, o->mountpoint_real, &m->log,
			      o->err, sizeof(o->err)) < 0) {
		fprintf(stderr, "stackcrypt mount: %s\n", o->err);
		return SC_EXIT_USAGE;
	}
	if (o->err[0])
		fprintf(stderr, "stackcrypt mount: warning: %s\n", o->err);
	return SC_CLI_GO_ON;
}

/*
 * Whether BACKING (a directory) has no config at all: then it may be no
 * volume, and nothing may be written into it (not even the lock file)
 * before the unlock has found a volume there (a --masterkey recovery).
 */
static bool config_missing(const char *backing_real)
{
	char path[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", backing_real, SC_CONFIG_NAME) >=
	    sizeof(path))
		return false;	/* the unlock says the path is too long */
	return fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/*
 * The one-mount lock of a volume in a directory: before the daemon forks
 * (a second mount is refused before it asks for the secret), or, for a
 * directory without a config, once the unlock found a volume there
 * (lock_deferred).  Either way before the stack serves a request.
 */
static int lock_dir(struct mount_run *m)
{
	int code = SC_EXIT_FAIL;

	m->lock_deferred = false;
	m->lock_fd = lock_volume(&m->o, &code);
	if (m->lock_fd == -2) {
		fprintf(stderr, "stackcrypt mount: %s\n", m->o.err);
		return code;
	}
	return SC_CLI_GO_ON;
}

static int lock_backing(struct mount_run *m)
{
	/* A plain directory (passthrough) is no volume: no lock, none looked for. */
	if (m->o.stack_kind != SC_STACK_CRYPT || !sc_backing_is_dir(m->o.backing))
		return SC_CLI_GO_ON;
	/*
	 * The config's absence is no race to guard: the lock is the same
	 * file, taken the same way, whichever phase takes it.
	 */
	if (config_missing(m->o.backing_real)) {
		m->lock_deferred = true;
		return SC_CLI_GO_ON;
	}
	return lock_dir(m);
}

/* The daemon's process: forked unless -f; everything after runs in it. */
static int fork_daemon(struct mount_run *m)
{
	if (!m->o.foreground) {
		m->report_fd = daemon_fork(&m->o);
		if (m->report_fd < 0) {
			fprintf(stderr, "stackcrypt mount: fork: %s\n", strerror(errno));
			return SC_EXIT_FAIL;
		}
	}
	if (m->o.debug)
		prctl(PR_SET_DUMPABLE, 1);
	/* New objects get exactly the mode the caller asked for (the kernel applied its umask). */
	umask(0);
	sc_fuse_log_init();
	return SC_CLI_GO_ON;
}

/* The backing's connection, if it needs one: made before the config is read. */
static int open_backing(struct mount_run *m)
{
	int code = backing_open(&m->o, &m->b);

	return code ? code : SC_CLI_GO_ON;
}

/*
 * Reverse mode's config (BACKING/SC_REVERSE_CONFIG_NAME or --config) and
 * its unlock; its text, as the view shows it, is the parsed config
 * formatted again (the same fields, and a checksum of its own).  The
 * config must describe what the view is: aes-gcm, names encrypted and bound.
 */
static int unlock_reverse(struct mount_run *m)
{
	const uint64_t want = SC_FEAT_NAMES | SC_FEAT_NAMES_BOUND | SC_FEAT_LINKS_BOUND;
	struct sc_mount_opts *o = &m->o;
	char err[1024] = "", *dir = NULL, *slash;
	const char *name = SC_REVERSE_CONFIG_NAME;
	struct sc_secret_src src;
	int ret;

	if (o->config) {
		dir = realpath(o->config, NULL);
		if (!dir) {
			fprintf(stderr, "stackcrypt mount: --config=%s: %s\n", o->config,
				strerror(errno));
			return SC_EXIT_CONFIG;
		}
		slash = strrchr(dir, '/');
		*slash = '\0';
		name = slash + 1;
	}
	sc_mount_secret(o, &src);
	ret = sc_vol_open_as(dir ? (*dir ? dir : "/") : o->backing_real, name, &src, &m->vol,
			     err, sizeof(err));
	if (ret == 0 && (m->vol->cfg.cipher != SC_CIPHER_AES_GCM ||
			 (m->vol->cfg.features & want) != want)) {
		snprintf(err, sizeof(err), "%s is a volume's config, not a reverse-mode one "
			 "(aes-gcm with encrypted names: stackcrypt init --reverse)", name);
		ret = -EINVAL;
	}
	if (ret == 0) {
		m->rev_hide = dir ? NULL : SC_REVERSE_CONFIG_NAME;
		ret = sc_config_format(&m->vol->cfg, m->rev_conf, sizeof(m->rev_conf));
		m->rev_conf_len = ret < 0 ? 0 : (size_t)ret;
		if (ret < 0)
			snprintf(err, sizeof(err), "cannot format the config: %s", strerror(-ret));
		ret = ret < 0 ? ret : 0;
	}
	free(dir);
	return ret < 0 ? sc_cli_fail("mount", ret, err) : SC_CLI_GO_ON;
}

/*
 * The volume's secret and unlock (crypt stack); the key then lives in
 * vol's locked memory only.  Then the one-mount lock of a gluster://
 * volume.
 */
static int unlock_volume(struct mount_run *m)
{
	struct sc_mount_opts *o = &m->o;
	char err[1024] = "";	/* room for a gluster:// URL thrice */
	int ret;

	if (o->stack_kind == SC_STACK_REVERSE)
		return unlock_reverse(m);
	if (o->stack_kind == SC_STACK_CRYPT) {
		struct sc_secret_src src;

		sc_mount_secret(o, &src);
		ret = sc_vol_open(o->backing_real, &src, &m->vol, err, sizeof(err));
		if (o->masterkey)
			explicit_bzero(o->masterkey, strlen(o->masterkey));
		if (ret < 0) {
			if (o->fstab_form)
				fstab_words(err, sizeof(err));
			return sc_cli_fail("mount", ret, err);
		}
		if (m->lock_deferred) {	/* a recovery found a volume: lock it now */
			ret = lock_dir(m);
			if (ret != SC_CLI_GO_ON)
				return ret;
		}
	}
	if (o->stack_kind == SC_STACK_CRYPT) {
		/*
		 * lock_volume's rule over gluster://, on the same file, so that a
		 * mount through the volume's FUSE client and one through
		 * libgfapi exclude each other too.
		 */
		ret = sc_backing_lock_mount(m->b);	/* -ENOENT: a directory's, taken before */
		if (ret == -EBUSY) {
			fprintf(stderr, "stackcrypt mount: BACKING %s is in use by another stackcrypt "
				"mount, on this or another client of its file system (one mount per "
				"volume: each daemon caches headers and sizes)\n", o->backing);
			return SC_EXIT_BACKING;
		}
		if (ret < 0 && ret != -ENOENT)
			fprintf(stderr, "stackcrypt mount: warning: cannot lock %s against a second "
				"mount (%s); make sure it is mounted only once\n", o->backing,
				strerror(-ret));
	}
	return SC_CLI_GO_ON;
}

/*
 * An integrity volume's freshness record on this machine (format.md 11.9),
 * made on a first mount (trust on first use, said at notice level); a
 * torn tail is dropped and said, a damaged one refused.  SC_CLI_GO_ON or
 * the exit status.
 */
static int open_fresh(struct mount_run *m)
{
	uint32_t flags = SC_FRESH_CREATE | SC_FRESH_WRITE |
			 (m->o.allow_rollback ? SC_FRESH_ALLOW : 0);
	struct sc_fresh_info info;
	int ret;

	ret = sc_fresh_open(m->vol->ikey, m->vol->cfg.uuid, m->o.state_dir, flags, &m->fresh,
			    &info);
	if (ret < 0) {
		fprintf(stderr, "stackcrypt mount: %s: %s\n", info.path[0] ? info.path :
			"the state directory (--state-dir)", sc_fresh_strerror(ret));
		return SC_EXIT_FAIL;
	}
	if (info.made)
		sc_log(SC_LOG_INFO, "stackcrypt: notice: no freshness record for this volume on "
		       "this machine (first mount here, or the record was lost): roll-back before "
		       "now cannot be detected; recording from now on in %s\n", info.path);
	if (info.torn)
		sc_log(SC_LOG_WARNING, "stackcrypt: warning: %s: the last %llu bytes are a torn "
		       "append (a crash while it was written), dropped: the record lags that "
		       "much, which is safe\n", info.path, (unsigned long long)info.dropped);
	if (info.refused_before)
		sc_log(SC_LOG_WARNING, "stackcrypt: warning: an earlier run refused a roll-back "
		       "of this volume%s\n", m->o.allow_rollback ? "; --allow-rollback accepts "
		       "what this run finds" : ", not accepted since (mount --allow-rollback "
		       "accepts a restore made on purpose)");
	return SC_CLI_GO_ON;
}

static void rollback_ignored(const struct sc_mount_opts *o)
{
	fprintf(stderr, "stackcrypt mount: warning: %s ignored: not an integrity volume "
		"(init --integrity), which alone keeps a freshness record\n",
		o->allow_rollback ? "--allow-rollback" : "--state-dir");
}

/*
 * A volume without integrity (format.md 11.1) of which this machine holds
 * a freshness record, which only an integrity volume's mount makes: it was
 * one here, so its whole backing was put back from before a `stackcrypt
 * upgrade` (11.12), or its config replaced by an older one.  Refused
 * unless --allow-rollback accepts it.  SC_CLI_GO_ON or the exit status.
 */
static int downgraded(struct mount_run *m)
{
	const struct sc_mount_opts *o = &m->o;
	char path[PATH_MAX];
	int r = sc_fresh_held(m->vol->cfg.uuid, o->state_dir, path);

	if (r == 1 && !o->allow_rollback) {
		fprintf(stderr, "stackcrypt mount: this machine holds a freshness record of this "
			"volume (%s), which only an integrity volume makes, but the volume is not "
			"one: its backing put back from before 'stackcrypt upgrade'? "
			"--allow-rollback mounts it (or remove that record)\n", path);
		return SC_EXIT_FAIL;
	}
	if (r == 1)
		sc_log(SC_LOG_WARNING, "stackcrypt: warning: this volume was an integrity volume "
		       "on this machine (%s) and is not one now; accepted (--allow-rollback)\n",
		       path);
	else if (o->allow_rollback || o->state_dir)
		rollback_ignored(o);
	return SC_CLI_GO_ON;
}

/* The layers for the volume (or passthrough), io-stats where -o stats says. */
static int build_stack(struct mount_run *m)
{
	/* The volume's config, its lock, a rekey's, and the tools' temporary config copies. */
	static const struct sc_stack_hide hide = {
		.names	= { SC_CONFIG_NAME, SC_LOCK_NAME, SC_REKEY_STATE_NAME, SC_REKEY_DIR_NAME },
		.prefix	= SC_VOL_TMP_PREFIX,
	};
	const struct sc_mount_opts *o = &m->o;
	struct sc_volume *vol = m->vol;
	struct sc_stack_spec spec;
	char err[1024] = "";
	int ret;

	if (vol && o->stack_kind == SC_STACK_CRYPT)	/* an xattr-less copy: said now */
		sc_vol_warn_no_headers("stackcrypt mount", o->backing_real, &vol->cfg);
	/* the names layer first: io-stats layers go at the boundaries it makes */
	ret = mount_spec_init(&spec, o->stack_kind, o->stack_kind == SC_STACK_CRYPT && vol &&
			      (vol->cfg.features & SC_FEAT_NAMES), vol ? vol->mkey : NULL, &hide);
	spec.rev_conf = m->rev_conf;
	spec.rev_conf_len = m->rev_conf_len;
	spec.rev_hide = m->rev_hide;
	spec.names_bound = vol && (vol->cfg.features & SC_FEAT_NAMES_BOUND);
	spec.links_bound = vol && (vol->cfg.features & SC_FEAT_LINKS_BOUND);
	spec.ikey = vol ? vol->ikey : NULL;
	spec.dir_lists = vol && (vol->cfg.features & SC_FEAT_DIR_LISTS);
	if (ret == 0 && spec.ikey && o->stack_kind == SC_STACK_CRYPT) {
		int code = open_fresh(m);

		if (code != SC_CLI_GO_ON)
			return code;
		spec.fresh = m->fresh;
	} else if (ret == 0 && vol && o->stack_kind == SC_STACK_CRYPT) {
		int code = downgraded(m);

		if (code != SC_CLI_GO_ON)
			return code;
	} else if (ret == 0 && (o->allow_rollback || o->state_dir)) {
		rollback_ignored(o);
	}
	if (ret == 0)
		ret = sc_backing_stack_bottom(m->o.backing, m->b, &spec);
	if (ret == 0 &&
	    add_iostats(&spec, o->stats ? o->stats : o->stats_on ? "top" : NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "stackcrypt mount: %s\n", err);
		return SC_EXIT_FAIL;
	}
	if (ret == 0)
		ret = sc_stack_new(&spec, &m->top);
	if (ret == 0)
		return SC_CLI_GO_ON;
	m->top = NULL;
	if (!vol) {
		fprintf(stderr, "stackcrypt mount: %s\n", strerror(-ret));
		return SC_EXIT_FAIL;
	}
	snprintf(err, sizeof(err), "cannot start the crypt layer: %s", strerror(-ret));
	return sc_cli_fail("mount", ret, err);
}

/* The bottom layer's fd on the backing root (a gluster handle over gluster://). */
static int open_root(const struct mount_run *m, int *root_fd)
{
	struct stat st;

	*root_fd = sc_backing_root(m->b, &st);
	errno = -*root_fd;
	if (*root_fd < 0) {
		fprintf(stderr, "stackcrypt mount: BACKING %s: %s\n", m->o.backing,
			strerror(errno));
		return SC_EXIT_BACKING;
	}
	return SC_CLI_GO_ON;
}

/* The front end over the stack, the layers started, the session mounted. */
static int start_session(struct mount_run *m)
{
	const struct sc_mount_opts *o = &m->o;
	const struct sc_volume *vol = m->vol;
	struct sc_fuse_opts fopts = {
		.conf		= { .writeback = o->writeback, .max_io = SC_MAX_IO,
				    .max_path_fds = o->max_path_fds },
		.attr_timeout	= o->attr_timeout,
		.entry_timeout	= o->entry_timeout,
		.killpriv_v2	= !o->no_killpriv_v2,
		.ask_parallel_dio = !o->no_parallel_dio,
		.ask_uring	= o->io_uring,
		.noxattr	= o->noxattr,
		/*
		 * Not in reverse mode, whose backing changes behind the mount,
		 * nor with a zero timeout, which asks to see such changes at once.
		 */
		.cache_dirs	= o->stack_kind != SC_STACK_REVERSE && o->attr_timeout > 0 &&
				  o->entry_timeout > 0,
		.loop		= o->single_thread ? SC_FUSE_LOOP_SINGLE :
				  o->loop_lifo ? SC_FUSE_LOOP_LIFO : SC_FUSE_LOOP_LIBFUSE,
		.max_threads	= o->max_threads,
		.idle		= o->idle_s,
	};
	enum sc_fuse_step failed;
	int code, ret, root_fd;

	/* After the volume: an --extpass command need not inherit a huge limit. */
	raise_fd_limit();
	code = open_root(m, &root_fd);
	if (code != SC_CLI_GO_ON)
		return code;
	ret = sc_fuse_new(&fopts, m->top, root_fd, &m->fs);
	if (ret < 0) {
		m->fs = NULL;
		fprintf(stderr, "stackcrypt mount: %s\n", strerror(-ret));
		return SC_EXIT_FAIL;
	}
	ret = sc_fuse_init_stack(m->fs);
	if (ret == -ESTALE) {	/* logged by the gcm layer, with the way out */
		fprintf(stderr, "stackcrypt mount: refused: the volume was rolled back\n");
		return SC_EXIT_FAIL;
	}
	if (ret < 0) {
		fprintf(stderr, "stackcrypt mount: cannot start the stack: %s\n", strerror(-ret));
		return ret == -EIO || ret == -EUCLEAN ? SC_EXIT_CONFIG : SC_EXIT_FAIL;
	}
	if (vol)
		snprintf(m->what, sizeof(m->what), "%s%s%s, %u-byte units",
			 o->stack_kind == SC_STACK_REVERSE ? "reverse view, " : "",
			 sc_cipher_name(vol->cfg.cipher),
			 vol->cfg.cipher == SC_CIPHER_NULL ? ", not encrypted" : "",
			 (unsigned)vol->cfg.block_size);
	else
		snprintf(m->what, sizeof(m->what), "passthrough, not encrypted");
	if (add_fuse_args(&m->fargs, o) < 0) {
		fprintf(stderr, "stackcrypt mount: out of memory\n");
		return SC_EXIT_FAIL;
	}
	if (sc_fuse_mount(m->fs, &m->fargs, o->mountpoint_real, &failed) == 0) {
		m->mounted = true;
		/* INIT answered: the transport is known for the "mounted" line */
		ret = sc_fuse_handshake(m->fs);
		if (ret < 0) {
			fprintf(stderr, "stackcrypt mount: no INIT from the kernel: %s\n",
				strerror(-ret));
			return SC_EXIT_FAIL;
		}
		snprintf(m->what + strlen(m->what), sizeof(m->what) - strlen(m->what),
			 ", over %s", sc_fuse_transport(m->fs));
		return SC_CLI_GO_ON;
	}
	/* The options passed check_fuse_args(): out of memory, or the like. */
	if (failed == SC_FUSE_STEP_SESSION)
		fprintf(stderr, "stackcrypt mount: cannot start the FUSE session\n");
	else if (failed == SC_FUSE_STEP_HOOK)
		fprintf(stderr, "stackcrypt mount: cannot hook the FUSE device\n");
	else if (failed == SC_FUSE_STEP_IDLE)
		fprintf(stderr, "stackcrypt mount: cannot start the -o idle watcher\n");
	/* libfuse or fusermount3 said why the mount itself failed */
	return failed == SC_FUSE_STEP_MOUNT ? SC_EXIT_MOUNTPOINT : SC_EXIT_FAIL;
}

/*
 * Says what was mounted (cipher, unit size: one line, as gocryptfs does;
 * -q silences it), detaches unless -f, tells the parent it worked, and
 * serves until unmounted.  Returns the exit status.
 */
static int serve(struct mount_run *m)
{
	const struct sc_mount_opts *o = &m->o;
	const struct sc_mount_log *log = &m->log;
	int ret;

	if (!o->quiet) {
		/* Before detaching: stdout is the user's until then. */
		printf("stackcrypt: mounted %s on %s (%s%s)%s%s\n", o->backing_real,
		       o->mountpoint_real, m->what, o->read_only ? ", read-only" : "",
		       log->where == SC_MOUNT_LOG_STDERR ? "" :
		       log->where == SC_MOUNT_LOG_SYSLOG ? "; messages: syslog" : "; messages: ",
		       log->path);
		fflush(stdout);
	}
	if (!o->foreground) {
		ret = daemon_detach();
		if (ret < 0) {
			fprintf(stderr, "stackcrypt mount: cannot detach: %s\n", strerror(-ret));
			return SC_EXIT_FAIL;
		}
	}
	if (log->where == SC_MOUNT_LOG_SYSLOG)
		sc_fuse_log_to_syslog("stackcrypt");
	else if (log->where == SC_MOUNT_LOG_FILE)
		sc_fuse_log_to_fd(log->fd);
	daemon_report(&m->report_fd, SC_EXIT_OK);
	ret = sc_fuse_serve(m->fs);
	if (ret < 0) {
		sc_log(SC_LOG_ERR, "stackcrypt: session loop failed: %s\n", strerror(-ret));
		return SC_EXIT_FAIL;
	}
	return SC_EXIT_OK;
}

/*
 * Undoes what the phases made, in reverse, whichever phase ended the
 * mount; a parent still waiting learns code.
 */
static void mount_teardown(struct mount_run *m, int code)
{
	if (m->mounted)
		sc_fuse_unmount(m->fs);
	sc_fuse_free(m->fs);	/* every layer's ->forget for what the kernel held */
	sc_xl_stack_free(m->top);
	if (m->fresh) {
		/* every gen this run stored is durable once the backing is synced */
		bool synced = m->b && sc_backing_sync_all(m->b) == 0;
		int ret = sc_fresh_close(m->fresh, synced, code == SC_EXIT_OK && m->mounted);

		if (ret < 0)
			sc_log(SC_LOG_WARNING, "stackcrypt: warning: cannot rewrite the freshness "
			       "record (%s): it lags this run, which is safe\n", strerror(-ret));
	}
	sc_backing_close(m->b);	/* after the stack: its bottom layer used it */
	if (m->vol)
		sc_vol_close(m->vol);	/* wipes the key */
	daemon_report(&m->report_fd, code);
	if (m->lock_fd >= 0)
		close(m->lock_fd);	/* the daemon's end: the other mounts may go on */
	fuse_opt_free_args(&m->fargs);
	sc_mount_opts_free(&m->o);
	sc_mount_log_close(&m->log);	/* last: the teardown may still log */
}

int sc_cmd_mount(int argc, char **argv)
{
	/* In order; each returns SC_CLI_GO_ON, or the exit status that ends the mount. */
	static int (*const phases[])(struct mount_run *m) = {
		parse_options,
		lock_backing,
		fork_daemon,
		open_backing,
		unlock_volume,
		build_stack,
		start_session,
		serve,
	};
	struct mount_run m = {
		.argc		= argc,
		.argv		= argv,
		.fargs		= FUSE_ARGS_INIT(0, NULL),
		.lock_fd	= -1,
		.report_fd	= -1,
		.log		= { .fd = -1 },
	};
	int code = SC_CLI_GO_ON;

	for (size_t i = 0; code == SC_CLI_GO_ON && i < sizeof(phases) / sizeof(phases[0]); i++)
		code = phases[i](&m);
	mount_teardown(&m, code);
	return code;
}
