/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_path.c - stackcrypt path: which backing entry holds a file of the
 * mount, and which file of the mount a backing entry is (after a log
 * line, a backup restore, a sync conflict).
 *
 * Three ways, cheapest first:
 *   - names in the clear: the path is the same on both sides; each
 *     component is checked in the backing, and the volume's own files in
 *     the root (config, lock, journal), which the mount hides, are refused;
 *   - a mounted volume, no secret option given: no password.  The mount
 *     reports the backing's inode numbers (the front end passes st_ino and
 *     d_ino up unchanged), so each component is matched by inode number
 *     and type between a directory of the mount and the same directory of
 *     the backing.  Nothing is asked of the daemon and nothing is written:
 *     no control socket whose permissions could let another user translate
 *     names.  Two hard links in one directory share an inode and cannot be
 *     told apart this way: then the command says to give the password
 *     (--unlock);
 *   - otherwise (unmounted, a gluster:// backing, or a secret option
 *     given): the volume is unlocked and each component is followed from
 *     the root through its directory's nonce record, as the names layer
 *     does (fs/volume/names.c reads the records and long names' side
 *     files through the backing interface).
 * Paths are taken and printed relative to the volume's root.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "sc_backing.h"
#include "sc_cli.h"
#include "sc_cmd.h"
#include "sc_journal.h"	/* SC_JRNL_NAME */
#include "sc_volume.h"

static const char cmd[] = "path";

static const char path_help[] =
"Usage: stackcrypt path [--to-backing | --to-plain] [options] BACKING|MOUNTPOINT PATH\n"
"Translate a path between the mount and the backing directory and print it,\n"
"relative to the volume's root.\n"
"\n"
"  --to-backing         PATH is a path in the mount: print the backing entry\n"
"                       that holds it (the default)\n"
"  --to-plain           PATH is a backing entry: print its path in the mount\n"
"\n"
"PATH is relative to the volume's root, or absolute inside BACKING or\n"
"MOUNTPOINT; any other absolute path is from the volume's root (\"/docs/a\",\n"
"as the mount's and fsck's messages name files).  Options come before\n"
"BACKING: a PATH may begin with '-' (encrypted names do).\n"
"\n"
"With encrypted names and the volume mounted, no password is asked: entries\n"
"are matched by inode number through the mount.  Otherwise, or with --unlock\n"
"or a secret option, the password unlocks the volume and names are encrypted\n"
"or decrypted from the root down.  With names in the clear the path is the\n"
"same on both sides (said on stderr); no password is asked.\n"
"\n"
"Options:\n"
"  --passfile=FILE      password = first line of FILE (\"-\" = standard input)\n"
"  --extpass=CMD        password = first line printed by sh -c CMD\n"
"  --keyfile=FILE       the volume's key file\n"
"  --unlock             unlock the volume (asks for the password unless another\n"
"                       option gives it) even when it is mounted\n"
"  -z, --zero           end the path with a NUL byte, not a newline (names may\n"
"                       hold newlines)\n"
"  -h, --help           show this help\n";

enum { OPT_KEYFILE = 0x100, OPT_PASSFILE, OPT_EXTPASS, OPT_PASSWORD, OPT_TO_BACKING,
       OPT_TO_PLAIN, OPT_UNLOCK };

static const struct option path_opts[] = {	/* the secrets first, in OPT_ order */
	SC_CLI_SECRET_OPTIONS,
	{ "to-backing",	no_argument,	NULL, OPT_TO_BACKING },
	{ "to-plain",	no_argument,	NULL, OPT_TO_PLAIN },
	{ "unlock",	no_argument,	NULL, OPT_UNLOCK },
	{ "zero",	no_argument,	NULL, 'z' },
	{ "help",	no_argument,	NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* Longest path either side: encrypted names are longer than plaintext ones. */
#define PTH_MAX		(4 * PATH_MAX)

struct pth {
	bool			to_plain;
	bool			given;		/* a secret option */
	bool			unlock;		/* --unlock */
	bool			zero;		/* -z: NUL after the path */
	struct sc_secret_src	src;
	const char		*arg;		/* BACKING or MOUNTPOINT as given */
	char			backing[PATH_MAX];
	char			mnt[PATH_MAX];	/* "" when not mounted */
	struct sc_backing	*b;
	struct sc_config	cfg;
	/* the path, one component after another */
	char			*comp[PTH_MAX / 2];
	size_t			ncomp;
	/* the translation so far: rel from BACKING, plain from the root of the mount */
	char			rel[PTH_MAX], plain[PTH_MAX];
};

static int path_option(void *o_, const char *cmd_, int c, char *arg)
{
	struct pth *p = o_;

	switch (c) {
	case OPT_TO_BACKING:
		p->to_plain = false;
		return 0;
	case OPT_TO_PLAIN:
		p->to_plain = true;
		return 0;
	case OPT_UNLOCK:
		p->unlock = true;
		return 0;
	case 'z':
		p->zero = true;
		return 0;
	default:	/* OPT_KEYFILE .. OPT_PASSWORD */
		return sc_cli_secret_opt(cmd_, path_opts[c - OPT_KEYFILE].name, arg, &p->src,
					 &p->given);
	}
}

/* Appends /name to a path buffer of PTH_MAX bytes.  0 or -ENAMETOOLONG. */
static int push(char *path, const char *name)
{
	size_t len = strlen(path);
	int n = snprintf(path + len, PTH_MAX - len, "%s%s", len ? "/" : "", name);

	return n < 0 || (size_t)n >= PTH_MAX - len ? -ENAMETOOLONG : 0;
}

/* The path printed in a message: "." for the root. */
static const char *shown(const char *path)
{
	return path[0] ? path : ".";
}

/* path less root (trailing slashes of root ignored), or NULL if not inside it. */
static char *inside(char *path, const char *root)
{
	size_t len = strlen(root);

	while (len > 1 && root[len - 1] == '/')
		len--;
	if (!len || strncmp(path, root, len) || (path[len] != '/' && path[len]))
		return NULL;
	return path + len;
}

/*
 * PATH less the root it may name (absolute: inside p->arg, the backing or
 * the mount point, as given or resolved; any other absolute path is from
 * the volume's root, as fsck and the mount's messages print paths), split
 * into p->comp.  "." and empty components drop; ".." is refused.
 * SC_CLI_GO_ON or an exit status.
 */
static int split(struct pth *p, char *path)
{
	char *save, *c;

	if (path[0] == '/') {
		const char *roots[] = { p->arg, p->backing, p->mnt };
		char *rest = NULL, *real;
		size_t i;

		for (i = 0; !rest && i < sizeof(roots) / sizeof(roots[0]); i++) {
			rest = inside(path, roots[i]);
			real = rest || !sc_backing_is_dir(roots[i]) ? NULL : realpath(roots[i], NULL);
			if (real)
				rest = inside(path, real);
			free(real);
		}
		if (rest)
			path = rest;
	}
	for (c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, ".."))
			return sc_cli_usage(cmd, "'..' in PATH: give the path without it");
		if (p->ncomp == sizeof(p->comp) / sizeof(p->comp[0]))
			return sc_cli_usage(cmd, "PATH has too many components");
		p->comp[p->ncomp++] = c;
	}
	return SC_CLI_GO_ON;
}

/*
 * Which volume p->arg names: a mount point of stackcrypt (its BACKING from
 * mountinfo), or a BACKING (mounted or not), directory or URL.  A mount
 * whose daemon died (its root cannot be stat'ed) counts as none: the
 * volume is then unlocked, as when unmounted.
 */
static void locate(struct pth *p)
{
	struct stat st;

	snprintf(p->backing, sizeof(p->backing), "%s", p->arg);
	p->mnt[0] = 0;
	if (!sc_backing_is_dir(p->arg))
		return;		/* a mount over a URL may be another host's */
	if (sc_vol_mount_source(p->arg, p->backing, sizeof(p->backing))) {
		/* mountinfo names the mount point by its real path, as given there */
		if (!realpath(p->arg, p->mnt))
			snprintf(p->mnt, sizeof(p->mnt), "%s", p->arg);
	} else if (!sc_vol_mounted_at(p->arg, p->mnt, sizeof(p->mnt))) {
		return;
	}
	if (stat(p->mnt, &st) == 0)
		return;
	sc_cli_warn(cmd, "the mount at %s does not answer (%s): the volume is unlocked instead "
		    "(fusermount3 -u %s clears it)", p->mnt, strerror(errno), p->mnt);
	p->mnt[0] = 0;
}

/* The volume's own files in the root, which the mount hides. */
static bool own_file(const char *name)
{
	return !strcmp(name, SC_CONFIG_NAME) || !strcmp(name, SC_LOCK_NAME) ||
	       !strcmp(name, SC_JRNL_NAME) ||
	       !strncmp(name, SC_VOL_TMP_PREFIX, strlen(SC_VOL_TMP_PREFIX));
}

/* The path given, as far as the walk has gone: what an error names. */
static const char *given(const struct pth *p)
{
	return shown(p->to_plain ? p->rel : p->plain);
}

/* "PATH: no such entry ..." and friends, for the path given so far.  Exit status. */
static int no_entry(const struct pth *p, int err)
{
	sc_cli_err(cmd, "%s: %s%s", given(p), err == -ENOENT ? "no such entry" :
		   err == -ENOTDIR ? "not a directory" : strerror(-err),
		   err == -ENOENT ? (p->to_plain ? " in the backing directory" :
				     " in the volume") : "");
	return SC_EXIT_FAIL;
}

/*
 * Whether the backing entry name (of encrypted names) is one the mount
 * shows: a short or a long name.  SC_CLI_GO_ON, or the exit status after
 * saying what it is.
 */
static int shows(const struct pth *p, const char *name)
{
	enum sc_name_kind k = sc_name_kind(name, strlen(name));

	if (k == SC_NAME_KIND_SHORT || k == SC_NAME_KIND_LONG)
		return SC_CLI_GO_ON;
	sc_cli_err(cmd, "%s: not an entry of the mount (%s)", given(p),
		   k == SC_NAME_KIND_SIDE ? "the side file of a long name: ask for the entry "
		   "without .name" : k == SC_NAME_KIND_NONCE ?
		   "a directory's name nonce file or listing record" :
		   k == SC_NAME_KIND_TMP ? "a directory an interrupted mkdir left" :
		   "not an encrypted name; the mount hides it");
	return SC_EXIT_FAIL;
}

/*
 * One step of the walk: component i, already added to the path given
 * (p->plain, or p->rel with --to-plain), translated and added to the
 * other; the backing entry's stat (its type at least) into *st.
 * SC_CLI_GO_ON or an exit status.
 */
typedef int (*step_fn)(struct pth *p, void *ctx, size_t i, struct stat *st);

/* Every component through step, then the translation on stdout.  Exit status. */
static int walk(struct pth *p, step_fn step, void *ctx)
{
	struct stat st;
	size_t i;
	int r;

	for (i = 0; i < p->ncomp; i++) {
		if (push(p->to_plain ? p->rel : p->plain, p->comp[i]))
			return no_entry(p, -ENAMETOOLONG);
		r = step(p, ctx, i, &st);
		if (r != SC_CLI_GO_ON)
			return r;
		if (i + 1 < p->ncomp && !S_ISDIR(st.st_mode))
			return no_entry(p, -ENOTDIR);
	}
	printf("%s%c", shown(p->to_plain ? p->plain : p->rel), p->zero ? '\0' : '\n');
	return SC_EXIT_OK;
}

/* Names in the clear: the component exists in the backing. */
static int step_same(struct pth *p, void *ctx, size_t i, struct stat *st)
{
	int r;

	(void)ctx;
	if (i == 0 && own_file(p->comp[0])) {
		sc_cli_err(cmd, "%s is the volume's own file, hidden in the mount", p->comp[0]);
		return SC_EXIT_FAIL;
	}
	if (push(p->to_plain ? p->plain : p->rel, p->comp[i]))
		return no_entry(p, -ENAMETOOLONG);
	r = sc_backing_lstat(p->b, p->rel, st);
	return r ? no_entry(p, r) : SC_CLI_GO_ON;
}

static int same_path(struct pth *p)
{
	int r = walk(p, step_same, NULL);

	if (r == SC_EXIT_OK)
		fprintf(stderr, "stackcrypt path: names are not encrypted on this volume: the "
			"path is the same in the mount and in the backing directory\n");
	return r;
}

/* ---- a mounted volume: inode numbers ---------------------------------------- */

struct ino_match {
	struct pth	*p;
	const char	*dir;		/* backing directory listed */
	ino_t		ino;
	mode_t		type;
	char		found[NAME_MAX + 1];
	int		n;
};

/*
 * One entry of a backing directory: counted if the mount shows it (a
 * mount of encrypted names shows short and long names only) and it is
 * of the inode.  Always 0: the listing goes on.
 */
static int match_backing(void *ctx, const char *name)
{
	enum sc_name_kind k = sc_name_kind(name, strlen(name));
	struct ino_match *m = ctx;
	char rel[PTH_MAX];
	struct stat st;

	if (k != SC_NAME_KIND_SHORT && k != SC_NAME_KIND_LONG)
		return 0;
	snprintf(rel, sizeof(rel), "%s%s%s", m->dir, m->dir[0] ? "/" : "", name);
	if (sc_backing_lstat(m->p->b, rel, &st) || st.st_ino != m->ino ||
	    (st.st_mode & S_IFMT) != m->type)
		return 0;
	if (m->n++ == 0)
		snprintf(m->found, sizeof(m->found), "%s", name);
	return 0;
}

/* Two entries of one directory with the inode: hard links, no way to choose. */
static int ambiguous(const struct pth *p)
{
	sc_cli_err(cmd, "%s: two hard links in one directory have this inode: give the "
		   "password (--unlock) to tell them apart", given(p));
	return SC_EXIT_FAIL;
}

/* Mount path of plain (relative to the mount's root) into buf. */
static const char *in_mount(const struct pth *p, const char *plain, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", p->mnt, plain[0] ? "/" : "", plain);
	return buf;
}

/* The entry of the mount's inode among the backing directory's. */
static int step_mounted_to_backing(struct pth *p, void *ctx, size_t i, struct stat *st)
{
	char mp[PTH_MAX + PATH_MAX];
	struct ino_match m = { .p = p, .dir = p->rel };
	int r;

	(void)ctx;
	(void)i;
	if (lstat(in_mount(p, p->plain, mp, sizeof(mp)), st))
		return no_entry(p, -errno);
	m.ino = st->st_ino;
	m.type = st->st_mode & S_IFMT;
	r = sc_backing_list(p->b, p->rel, match_backing, &m);
	if (r) {
		sc_cli_err(cmd, "cannot read %s/%s: %s", p->backing, p->rel, strerror(-r));
		return SC_EXIT_FAIL;
	}
	if (m.n > 1)
		return ambiguous(p);
	if (m.n == 0) {
		sc_cli_err(cmd, "%s: found in the mount but in no entry of %s/%s (changed "
			   "meanwhile, or not the mount of this backing?)", p->plain, p->backing,
			   p->rel);
		return SC_EXIT_FAIL;
	}
	return push(p->rel, m.found) ? no_entry(p, -ENAMETOOLONG) : SC_CLI_GO_ON;
}

/* The entry of the backing's inode among the mount directory's. */
static int step_mounted_to_plain(struct pth *p, void *ctx, size_t i, struct stat *st)
{
	char mp[PTH_MAX + PATH_MAX], found[NAME_MAX + 1];
	struct dirent *de;
	int r, n = 0;
	DIR *d;

	(void)ctx;
	r = sc_backing_lstat(p->b, p->rel, st);
	if (r)
		return no_entry(p, r);
	r = shows(p, p->comp[i]);
	if (r != SC_CLI_GO_ON)
		return r;
	d = opendir(in_mount(p, p->plain, mp, sizeof(mp)));
	if (!d) {
		sc_cli_err(cmd, "cannot read %s: %s", mp, strerror(errno));
		return SC_EXIT_FAIL;
	}
	while ((de = readdir(d)))
		if (de->d_ino == st->st_ino && strcmp(de->d_name, ".") &&
		    strcmp(de->d_name, "..") && n++ == 0)
			snprintf(found, sizeof(found), "%s", de->d_name);
	closedir(d);
	if (n > 1)
		return ambiguous(p);
	if (n == 0) {
		sc_cli_err(cmd, "%s: the mount shows no entry of it in %s (hidden as damaged: "
			   "see stackcrypt fsck)", p->rel, mp);
		return SC_EXIT_FAIL;
	}
	return push(p->plain, found) ? no_entry(p, -ENAMETOOLONG) : SC_CLI_GO_ON;
}

/* ---- with the key: nonces from the root down -------------------------------- */

/* What the walk with the key keeps between one component and the next. */
struct kwalk {
	struct sc_volume	*vol;
	struct sc_nkey		*nk;
	bool			in_file;
	uint8_t			nonce[SC_DIRNONCE_LEN];		/* of the directory at hand */
	uint8_t			pnonce[SC_DIRNONCE_LEN];	/* of its parent */
	char			enc[SC_NAME_ENC_MAX + 1];	/* its encoded name */
	struct sc_dirplace	place;				/* root: all zero */
};

/* The nonce of the directory p->rel at w->place into w->nonce.  SC_CLI_GO_ON or exit. */
static int dir_nonce(struct pth *p, struct kwalk *w)
{
	char why[224];
	int r;

	r = sc_vol_dir_nonce(p->b, w->vol, w->nk, w->in_file, p->rel, &w->place, w->nonce, NULL,
			     why, sizeof(why));
	if (!r)
		return SC_CLI_GO_ON;
	sc_cli_err(cmd, "%s/%s: the directory's name nonce record is unusable (%s): run "
		   "stackcrypt fsck", p->backing, p->rel, why);
	return SC_EXIT_FAIL;
}

/*
 * Into the directory p->rel, whose encoded name is enc, when a component
 * follows (i is not the last): its place, then its nonce.
 */
static int descend(struct pth *p, struct kwalk *w, size_t i, const struct stat *st,
		   const char *enc)
{
	if (i + 1 == p->ncomp || !S_ISDIR(st->st_mode))
		return SC_CLI_GO_ON;
	memcpy(w->pnonce, w->nonce, SC_DIRNONCE_LEN);
	snprintf(w->enc, sizeof(w->enc), "%s", enc);
	w->place.parent = w->pnonce;
	w->place.enc = w->enc;
	w->place.enc_len = strlen(w->enc);
	return dir_nonce(p, w);
}

/* The name encrypted under its directory's nonce (a long name: its long form). */
static int step_key_to_backing(struct pth *p, void *ctx, size_t i, struct stat *st)
{
	char enc[SC_NAME_ENC_MAX + 1], lf[SC_NAME_LONG_LEN + 1];
	struct kwalk *w = ctx;
	int r;

	r = sc_name_encrypt(w->nk, w->nonce, p->comp[i], strlen(p->comp[i]), enc);
	if (r < 0)
		return no_entry(p, r);
	if ((size_t)r > SC_NAME_SHORT_MAX && sc_name_long(enc, (size_t)r, lf))
		return no_entry(p, -EIO);
	if (push(p->rel, (size_t)r > SC_NAME_SHORT_MAX ? lf : enc))
		return no_entry(p, -ENAMETOOLONG);
	r = sc_backing_lstat(p->b, p->rel, st);
	if (r)
		return no_entry(p, r);
	return descend(p, w, i, st, enc);
}

/*
 * The encoded name of the backing entry p->rel, whose last component is
 * name: itself, or a long name's from its side file.  SC_CLI_GO_ON or exit.
 */
static int encoded(struct pth *p, struct kwalk *w, const char *name, char *enc)
{
	char side[PTH_MAX + sizeof(SC_NAME_SIDE_SUFFIX)], why[160], lf[SC_NAME_LONG_LEN + 1];
	ssize_t len;
	int r;

	r = shows(p, name);
	if (r != SC_CLI_GO_ON)
		return r;
	if (sc_name_kind(name, strlen(name)) == SC_NAME_KIND_SHORT) {
		snprintf(enc, SC_NAME_ENC_MAX + 1, "%s", name);
		return SC_CLI_GO_ON;
	}
	snprintf(side, sizeof(side), "%s%s", p->rel, SC_NAME_SIDE_SUFFIX);
	len = sc_vol_read_small(p->b, w->vol->mkey, side, enc, SC_NAME_ENC_MAX, why, sizeof(why));
	if (len >= 0) {
		enc[len] = 0;
		if (!sc_name_long(enc, (size_t)len, lf) && !strcmp(lf, name))
			return SC_CLI_GO_ON;
		snprintf(why, sizeof(why), "it holds another name");
	}
	sc_cli_err(cmd, "%s: the side file of this long name is unusable (%s): run stackcrypt "
		   "fsck", p->rel, why);
	return SC_EXIT_FAIL;
}

/* The backing name decrypted under its directory's nonce. */
static int step_key_to_plain(struct pth *p, void *ctx, size_t i, struct stat *st)
{
	char enc[SC_NAME_ENC_MAX + 1], plain[SC_NAME_PLAIN_MAX + 1];
	struct kwalk *w = ctx;
	int r;

	r = sc_backing_lstat(p->b, p->rel, st);
	if (r)
		return no_entry(p, r);
	r = encoded(p, w, p->comp[i], enc);
	if (r != SC_CLI_GO_ON)
		return r;
	if (sc_name_decrypt(w->nk, w->nonce, enc, strlen(enc), plain) <= 0) {
		sc_cli_err(cmd, "%s: the name does not decrypt under its directory's nonce "
			   "(edited, or moved from another directory): run stackcrypt fsck", p->rel);
		return SC_EXIT_FAIL;
	}
	if (push(p->plain, plain))
		return no_entry(p, -ENAMETOOLONG);
	return descend(p, w, i, st, enc);
}

/* Unlocks the volume and follows the path with its names keys.  Exit status. */
static int with_key(struct pth *p)
{
	struct kwalk w = { 0 };
	char err[512];
	int r;

	prctl(PR_SET_DUMPABLE, 0);	/* we are about to hold the master key */
	r = sc_vol_open(p->backing, &p->src, &w.vol, err, sizeof(err));
	if (r)
		return sc_cli_fail(cmd, r, err);
	r = sc_nkey_new(w.vol->mkey, &w.nk);
	if (r) {
		sc_cli_err(cmd, "cannot derive the names keys: %s", strerror(-r));
		r = SC_EXIT_FAIL;
		goto out_close;
	}
	w.in_file = sc_vol_nonce_in_file(p->b, w.vol->mkey);
	r = p->ncomp ? dir_nonce(p, &w) : SC_CLI_GO_ON;		/* the root's */
	if (r == SC_CLI_GO_ON)
		r = walk(p, p->to_plain ? step_key_to_plain : step_key_to_backing, &w);
	sc_nkey_free(w.nk);
out_close:
	sc_vol_close(w.vol);
	return r;
}

int sc_cmd_path(int argc, char **argv)
{
	struct pth *p;
	char err[512];
	int r;

	p = calloc(1, sizeof(*p));
	if (!p) {
		sc_cli_err(cmd, "out of memory");
		return SC_EXIT_FAIL;
	}
	p->src.kind = SC_SECRET_TTY;
	/*
	 * '+': options end at BACKING, since an encrypted name may begin
	 * with '-' (base64url) and must not read as one.
	 */
	r = sc_cli_parse(cmd, argc, argv, "+:hz", path_opts, path_help, path_option, p, NULL);
	if (r != SC_CLI_GO_ON)
		goto out_free;
	if (argc - optind != 2) {
		r = argc - optind < 2 ? sc_cli_usage(cmd, "want BACKING (or MOUNTPOINT) and PATH") :
		    sc_cli_usage(cmd, "unexpected argument '%s'", argv[optind + 2]);
		goto out_free;
	}
	p->arg = argv[optind];
	locate(p);
	r = split(p, argv[optind + 1]);
	if (r != SC_CLI_GO_ON)
		goto out_free;
	r = sc_vol_config_read(p->backing, "stackcrypt path", &p->cfg, err, sizeof(err));
	if (r) {
		r = sc_cli_fail(cmd, r, err);
		goto out_free;
	}
	r = sc_backing_open(p->backing, NULL, &p->b, err, sizeof(err));
	if (r) {
		sc_cli_err(cmd, "%s", err);
		r = r == -EINVAL ? SC_EXIT_USAGE : SC_EXIT_BACKING;
		goto out_free;
	}
	if (!(p->cfg.features & SC_FEAT_NAMES))
		r = same_path(p);
	else if (p->mnt[0] && !p->given && !p->unlock)
		r = walk(p, p->to_plain ? step_mounted_to_plain : step_mounted_to_backing, NULL);
	else
		r = with_key(p);
	sc_backing_close(p->b);
out_free:
	free(p);
	return r;
}
