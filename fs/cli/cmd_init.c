/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_init.c - stackcrypt init: a new volume in BACKING (config, master key,
 * the root's nonce record when names are encrypted).  Its steps go through
 * sc_cli_parse and fs/volume (volume.c: secrets, the atomic config write),
 * its errors through sc_cli_err; it returns an exit status of include/sc_cmd.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sc_cmd.h"
#include "sc_volume.h"
#include "sc_cli.h"
#include "sc_backing.h"
#include "keyslot_i.h"
#include "volopts_i.h"


static const char init_help[] =
"Usage: stackcrypt init [OPTIONS] BACKING\n"
"Create an encrypted volume in the directory BACKING (which must exist and be\n"
"empty), or in gluster://HOST[:PORT]/VOLUME[/PATH], a directory of a GlusterFS\n"
"volume reached through libgfapi, or in cephfs://[ID@][HOST[:PORT]]/FS[/PATH], a\n"
"directory of a CephFS file system reached through libcephfs.  Asks for a new\n"
"password twice on the terminal unless a password file, a command or a key file\n"
"is given.\n"
"\n"
"The default volume is aes-gcm with encrypted names: contents authenticated,\n"
"headers inside the files (a copy without xattrs keeps working), file names\n"
"and symlink targets encrypted.\n"
"\n"
"Options:\n"
"  --cipher=NAME        aes-gcm (default: authenticated, headers inside the\n"
"                       files: docs/format.md section 10), or the length-\n"
"                       preserving aes-xts, aes-cbc (headers in xattrs,\n"
"                       contents not authenticated) and null (no encryption)\n"
"  --block-size=N       data unit in bytes: 512, 1024, ..., 65536 (default 4096)\n"
"  --kdf=NAME           the password's key derivation: argon2id (default;\n"
"                       its cost measured here for an unlock of about a\n"
"                       second, as cryptsetup does) or scrypt\n"
"  --scrypt-n=N         scrypt cost for the password, a power of two\n"
"                       (default 65536; lower is faster to unlock and to\n"
"                       attack); implies --kdf=scrypt\n"
"  --argon2-t=T         Argon2id passes, 1..16 (default: measured)\n"
"  --argon2-m=KIB       Argon2id memory in KiB, 8192..4194304 (default:\n"
"                       measured, at most 1 GiB or a quarter of RAM)\n"
"  --label=NAME         the label of the first key slot (default: password or\n"
"                       keyfile; more slots: stackcrypt key add)\n"
"  --passfile=FILE      password = first line of FILE (\"-\" = standard input)\n"
"  --extpass=CMD        password = first line printed by sh -c CMD\n"
"  --keyfile=FILE       unlock with a key file (64 hex digits) instead of a password\n"
"  --force              create the volume even if BACKING is not empty\n"
"                       (files already there are not encrypted)\n"
"  --abandon-files      with --force: even if BACKING holds files of a lost\n"
"                       volume (they become unreadable for good; recover\n"
"                       instead with 'stackcrypt passwd --masterkey BACKING')\n"
"  --header-version=N   per-file header of new files: 2 (default, 56 bytes: fits\n"
"                       in an ext4 inode) or 1 (72 bytes: the volume stays\n"
"                       readable by stackcrypt builds that predate version 2);\n"
"                       not with aes-gcm, whose headers are inside the files\n"
"  --plaintext-names    store file names and symlink targets as they are (the\n"
"                       default encrypts them with AES-256-SIV, per directory);\n"
"                       chosen now, names cannot be switched on or off later.\n"
"                       Encrypted names need an empty BACKING; names up to 255\n"
"                       bytes.  --header-version=1 implies it\n"
"  --encrypt-names      encrypt names (the default; kept for scripts)\n"
"  --integrity          bind every file to its name and its size: a file swapped,\n"
"                       moved, copied over another, cut or extended behind the\n"
"                       mount reads as EIO, and every directory to its entries:\n"
"                       one added, removed or put back behind the mount makes\n"
"                       its listing EIO (aes-gcm with encrypted names only;\n"
"                       docs/format.md 11)\n"
"  --no-dir-lists       with --integrity: directories keep no listing record\n"
"                       (entries added or removed behind the mount go\n"
"                       unnoticed), as volumes made before records existed\n"
"  --unit-tree          with --integrity: also bind every unit of a file to the\n"
"                       rest of it (a root over its units' tags in its header), so\n"
"                       one unit put back from an older version of the file reads\n"
"                       as EIO (docs/format.md 11.10); its directories keep\n"
"                       listing records too, unless --no-dir-lists\n"
"  --reverse            reverse mode: BACKING is a directory of plaintext\n"
"                       files; writes only the config (BACKING/\n"
"                       .stackcrypt.reverse.conf), for `stackcrypt mount\n"
"                       --reverse`, which shows the files encrypted (aes-gcm,\n"
"                       names encrypted), read-only, for backups\n"
"  --config=FILE        with --reverse: the config at FILE instead (a new file)\n"
"  --save-masterkey=FILE  write the master key to FILE, a new file (mode 0600;\n"
"                       an existing file is refused), in the form that\n"
"                       --masterkey=FILE reads\n"
"  -h, --help           show this help\n"
"\n"
"The master key opens the volume when the password or the config file is lost\n"
"('stackcrypt passwd --masterkey BACKING').  It is shown once on the terminal\n"
"when the password is typed there, or written to --save-masterkey's FILE; it\n"
"never goes to standard output, so with --passfile, --extpass or --keyfile and\n"
"no --save-masterkey nobody ever sees it.\n"
"A password is never accepted on the command line.\n";

/* A name init passes over: a leftover of an interrupted config write, the lock file. */
static bool leftover_name(const char *name)
{
	return !strncmp(name, SC_VOL_TMP_PREFIX, strlen(SC_VOL_TMP_PREFIX)) ||
	       !strcmp(name, SC_LOCK_NAME);
}

/*
 * The per-file header lives in a user.* xattr; a filesystem without them
 * (some FUSE and network filesystems, tmpfs before Linux 6.6, ext4 with
 * nouser_xattr) would fail on every file created later.  Try it now.
 */
static int check_xattrs(const char *cmd, const char *backing)
{
	uint8_t hdr[SC_HDR_MAX] = { 0 }, rnd[8];
	char name[64];
	int dfd, fd, r = SC_EXIT_OK;

	dfd = open(backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		sc_cli_err(cmd, "backing directory %s: %s", backing, strerror(errno));
		return SC_EXIT_BACKING;
	}
	if (sc_random(rnd, sizeof(rnd))) {
		sc_cli_err(cmd, "no randomness available");
		close(dfd);
		return SC_EXIT_FAIL;
	}
	snprintf(name, sizeof(name), ".stackcrypt-xattr-test-%02x%02x%02x%02x%02x%02x%02x%02x",
		 rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		sc_cli_err(cmd, "cannot create a file in %s: %s", backing, strerror(errno));
		close(dfd);
		return SC_EXIT_BACKING;
	}
	if (fsetxattr(fd, SC_HDR_XATTR, hdr, sizeof(hdr), XATTR_CREATE)) {
		if (errno == ENOTSUP)
			sc_cli_err(cmd, "the filesystem of %s does not support user extended "
				"attributes (xattrs), which hold each file's header; use "
				"ext4, XFS or btrfs (on ext4, do not mount with nouser_xattr)",
				backing);
		else
			sc_cli_err(cmd, "cannot set an extended attribute in %s: %s",
				backing, strerror(errno));
		r = SC_EXIT_BACKING;
	} else if (fremovexattr(fd, SC_HDR_XATTR)) {
		sc_cli_err(cmd, "cannot remove an extended attribute in %s: %s",
			backing, strerror(errno));
		r = SC_EXIT_BACKING;
	}
	close(fd);
	unlinkat(dfd, name, 0);
	close(dfd);
	return r;
}

/* Writes all of len bytes to fd, retrying short writes.  0 or -errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t m = write(fd, buf, len);

		if (m < 0 && errno == EINTR)
			continue;
		if (m < 0)
			return -errno;
		buf += m;
		len -= (size_t)m;
	}
	return 0;
}

/*
 * Whether directory dir is backing or lies anywhere below it: its parents
 * are climbed with ".." and compared by device and inode, so no symlink or
 * bind mount in either path hides it.  A BACKING reached by URL is not a local
 * directory (a FUSE mount of its volume cannot be told from another).
 */
static bool dir_inside(const char *dir, const char *backing)
{
	struct stat bst, st, up;
	int fd, pfd, depth;
	bool inside = false;

	if (!sc_backing_is_dir(backing) || stat(backing, &bst) != 0)
		return false;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (depth = 0; fd >= 0 && depth < PATH_MAX / 2; depth++) {
		if (fstat(fd, &st) != 0)
			break;
		if (st.st_dev == bst.st_dev && st.st_ino == bst.st_ino) {
			inside = true;
			break;
		}
		pfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0 || fstat(pfd, &up) != 0 ||
		    (up.st_dev == st.st_dev && up.st_ino == st.st_ino)) {	/* the root */
			if (pfd >= 0)
				close(pfd);
			break;
		}
		close(fd);
		fd = pfd;
	}
	if (fd >= 0)
		close(fd);
	return inside;
}

/*
 * Creates the file --save-masterkey names: new (O_EXCL: an existing file is
 * never replaced), mode 0600, not a symlink, not anywhere inside BACKING
 * (the key must live apart from the data: a copy or a backup of the
 * volume would carry its key).  Returns the fd, or -1 after an error
 * message.  Called before the password is asked, so a bad path costs nothing.
 */
static int save_key_open(const char *cmd, const char *path, const char *backing)
{
	char dir[PATH_MAX], *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	if (dir_inside(dir, backing)) {
		sc_cli_err(cmd, "--save-masterkey=%s is inside %s: keep the master key apart "
			"from the data", path, backing);
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			sc_cli_err(cmd, "--save-masterkey=%s: the file exists; refusing to "
				"overwrite it (name a new file)", path);
		else
			sc_cli_err(cmd, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	return fd;
}

/*
 * The master key as "8 groups of 8 hex digits" plus a newline (what
 * --masterkey=FILE reads) into fd with write(2): no stdio buffer keeps a
 * copy.  0 or -errno.
 */
static int write_master_key(int fd, const uint8_t *mk, bool sync)
{
	char text[80];
	int r, n = sc_mkey_to_text(mk, text, sizeof(text) - 1);

	if (n < 0)
		return n;
	text[n++] = '\n';
	r = write_all(fd, text, (size_t)n);
	sc_wipe(text, sizeof(text));
	if (!r && sync && fsync(fd))
		r = -errno;
	return r;
}

/*
 * Shows the master key on the terminal (/dev/tty), where the password was
 * typed: never on standard output, which scripts log.  Returns 0 or -errno.
 */
static int show_master_key(const char *backing, const uint8_t *mk)
{
	char note[PATH_MAX + 512];
	int fd, r, n;

	fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(note, sizeof(note),
		"\nIts master key follows, shown this once.  Write it down and keep it apart\n"
		"from the data: with it, 'stackcrypt passwd --masterkey %s' sets a new\n"
		"password if you forget yours or lose %s.  Anyone who has it can\n"
		"read the volume.\n\n", backing, SC_CONFIG_NAME);
	r = write_all(fd, note, n > 0 && (size_t)n < sizeof(note) ? (size_t)n : strlen(note));
	if (!r)
		r = write_master_key(fd, mk, false);
	if (!r)
		r = write_all(fd, "\n", 1);
	close(fd);
	return r;
}

/* What `stackcrypt init` was asked for. */
struct init_opts {
	struct sc_secret_src	src;
	const char		*backing;
	const char		*save_path;	/* --save-masterkey, or NULL */
	enum sc_cipher_id	cipher;
	bool			cipher_given;	/* --cipher */
	unsigned		hdr_version;
	bool			hdr_version_given;
	uint32_t		block_size;
	struct sc_cli_kdf	kdf;
	const char		*label;		/* --label, or NULL */
	bool			force, abandon;
	bool			names;		/* names encrypted (the default) */
	bool			names_given;	/* --encrypt-names */
	bool			plain_names;	/* --plaintext-names */
	bool			integrity;	/* --integrity (docs/format.md 11) */
	bool			no_lists;	/* --no-dir-lists: 0x10 without 0x100 (11.7) */
	bool			unit_tree;	/* --unit-tree (11.10), with --integrity */
	bool			src_given;	/* a secret option was given */
	bool			reverse;	/* --reverse: a config for mount --reverse */
	const char		*config;	/* --config=FILE (with --reverse), or NULL */
};

/* One of init's options into o (a struct init_opts).  0 or the exit status. */
static int init_option(void *o_, const char *cmd, int c, char *arg)
{
	struct init_opts *o = o_;

	switch (c) {
	case OPT_CIPHER:
		o->cipher_given = true;
		return sc_cli_parse_cipher(cmd, arg, &o->cipher);
	case OPT_BLOCK_SIZE:
		return sc_cli_parse_block_size(cmd, arg, &o->block_size);
	case OPT_KDF:
	case OPT_SCRYPT_N:
	case OPT_ARGON2_T:
	case OPT_ARGON2_M:
		return sc_cli_kdf_option(cmd, c, arg, &o->kdf);
	case OPT_LABEL:
		return sc_cli_label_option(cmd, arg, &o->label);
	case OPT_FORCE:
		o->force = true;
		return 0;
	case OPT_ABANDON_FILES:
		o->abandon = true;
		return 0;
	case OPT_ENCRYPT_NAMES:
		o->names_given = true;
		return 0;
	case OPT_PLAINTEXT_NAMES:
		o->plain_names = true;
		return 0;
	case OPT_INTEGRITY:
		o->integrity = true;
		return 0;
	case OPT_NO_DIR_LISTS:
		o->no_lists = true;
		return 0;
	case OPT_UNIT_TREE:
		o->unit_tree = true;
		return 0;
	case OPT_REVERSE:
		o->reverse = true;
		return 0;
	case OPT_CONFIG:
		if (!*arg)
			return sc_cli_usage(cmd, "--config needs a file name");
		o->config = arg;
		return 0;
	case OPT_SAVE_MASTERKEY:
		if (!*arg)
			return sc_cli_usage(cmd, "--save-masterkey needs a file name");
		o->save_path = arg;
		return 0;
	case OPT_HEADER_VERSION:
		if (strcmp(arg, "1") && strcmp(arg, "2"))
			return sc_cli_usage(cmd, "invalid header version '%s': valid values "
					    "are 1 and 2", arg);
		o->hdr_version = (unsigned)(arg[0] - '0');
		o->hdr_version_given = true;
		return 0;
	default:	/* OPT_KEYFILE .. OPT_PASSWORD */
		return sc_cli_secret_option(cmd, c, arg, &o->src, &o->src_given);
	}
}

/*
 * --reverse's rules: the view is an aes-gcm volume with encrypted names
 * (docs/format.md 12.1), and the plaintext directory is not emptied or
 * changed, so the options that choose another format or concern what
 * BACKING holds are refused.  SC_CLI_GO_ON or the exit status.
 */
static int reverse_options(const char *cmd, const struct init_opts *o)
{
	if (o->config && !o->reverse)
		return sc_cli_usage(cmd, "--config is for --reverse (a volume's config is "
				    "BACKING/%s)", SC_CONFIG_NAME);
	if (!o->reverse)
		return SC_CLI_GO_ON;
	if ((o->cipher_given && o->cipher != SC_CIPHER_AES_GCM) || o->plain_names ||
	    o->hdr_version_given)
		return sc_cli_usage(cmd, "--reverse makes an aes-gcm view with encrypted names: "
				    "--cipher, --plaintext-names and --header-version do not apply");
	if (o->force || o->abandon)
		return sc_cli_usage(cmd, "--reverse leaves BACKING's files as they are: "
				    "--force and --abandon-files do not apply");
	if (o->integrity)	/* its files have no header to bind (docs/format.md 11) */
		return sc_cli_usage(cmd, "--integrity does not apply to --reverse");
	return SC_CLI_GO_ON;
}

/* Parses init's command line into o.  SC_CLI_GO_ON, or the exit status (--help, usage). */
static int init_options(const char *cmd, int argc, char **argv, struct init_opts *o)
{
	static const struct option opts[] = {
		{ "cipher",	required_argument, NULL, OPT_CIPHER },
		{ "block-size",	required_argument, NULL, OPT_BLOCK_SIZE },
		SC_CLI_KDF_OPTIONS,
		{ "label",	required_argument, NULL, OPT_LABEL },
		SC_CLI_SECRET_OPTIONS,
		{ "force",	no_argument,	   NULL, OPT_FORCE },
		{ "header-version", required_argument, NULL, OPT_HEADER_VERSION },
		{ "save-masterkey", required_argument, NULL, OPT_SAVE_MASTERKEY },
		{ "abandon-files", no_argument,	   NULL, OPT_ABANDON_FILES },
		{ "encrypt-names", no_argument,	   NULL, OPT_ENCRYPT_NAMES },
		{ "plaintext-names", no_argument,  NULL, OPT_PLAINTEXT_NAMES },
		{ "integrity",	no_argument,	   NULL, OPT_INTEGRITY },
		{ "no-dir-lists", no_argument,	   NULL, OPT_NO_DIR_LISTS },
		{ "unit-tree",	no_argument,	   NULL, OPT_UNIT_TREE },
		{ "reverse",	no_argument,	   NULL, OPT_REVERSE },
		{ "config",	required_argument, NULL, OPT_CONFIG },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};

	int r;

	r = sc_cli_parse(cmd, argc, argv, ":h", opts, init_help, init_option, o, &o->backing);
	if (r == SC_CLI_GO_ON && sc_cli_kdf_done(cmd, &o->kdf))
		return SC_EXIT_USAGE;
	if (r == SC_CLI_GO_ON && o->src.kind == SC_SECRET_KEYFILE && sc_cli_kdf_given(&o->kdf))
		return sc_cli_usage(cmd, "a key file has no KDF: --kdf, --scrypt-n and --argon2-* "
				    "are a password's");
	if (r == SC_CLI_GO_ON && o->names_given && o->plain_names)
		return sc_cli_usage(cmd, "--encrypt-names and --plaintext-names exclude each other");
	/*
	 * Version 1 headers exist for builds that predate version 2; those do
	 * not know encrypted names either and refuse the volume, so the pair
	 * would only buy the larger header: asked for alone, version 1 means
	 * names in the clear.
	 */
	o->names = !o->plain_names && (o->names_given || o->hdr_version != 1);
	if (r == SC_CLI_GO_ON && o->names && o->hdr_version == 1)
		return sc_cli_usage(cmd, "--encrypt-names and --header-version=1 exclude each "
				    "other: the builds that need version 1 headers cannot read "
				    "encrypted names");
	if (r == SC_CLI_GO_ON)
		r = reverse_options(cmd, o);
	/* Header versions 1 and 2 are the xattr headers of the length-preserving formats. */
	if (r == SC_CLI_GO_ON && o->cipher == SC_CIPHER_AES_GCM && o->hdr_version_given)
		return sc_cli_usage(cmd, "--header-version does not apply to aes-gcm%s, whose "
				    "files carry their own header inside (docs/format.md section "
				    "10); the xattr headers are aes-xts's, aes-cbc's and null's",
				    o->cipher_given ? "" : " (the default cipher)");
	if (r == SC_CLI_GO_ON && o->no_lists && !o->integrity)
		return sc_cli_usage(cmd, "--no-dir-lists applies to --integrity only");
	/* files are bound to the places only encrypted names give (format.md 11.1) */
	if (r == SC_CLI_GO_ON && o->integrity && (o->cipher != SC_CIPHER_AES_GCM || !o->names))
		return o->cipher != SC_CIPHER_AES_GCM ?
		       sc_cli_usage(cmd, "--integrity needs cipher aes-gcm, not %s",
				    sc_cipher_name(o->cipher)) :
		       sc_cli_usage(cmd, "--integrity needs encrypted names: not with "
				    "--plaintext-names or --header-version=1");
	/* the tree's root lives in the version 2 header only integrity volumes have */
	if (r == SC_CLI_GO_ON && o->unit_tree && !o->integrity)
		return sc_cli_usage(cmd, "--unit-tree needs --integrity");
	return r;
}

/*
 * What init_check_backing refuses in a BACKING without a config that holds
 * n entries (the first one's name in first), over either bottom: files of
 * a volume whose config was lost (unless --abandon-files), anything with
 * --encrypt-names, anything without --force.  SC_CLI_GO_ON or the exit
 * status after the error.
 */
static int init_check_entries(const char *cmd, const struct init_opts *o, int n,
			      const char *first)
{
	const char *backing = o->backing;

	/*
	 * Files with a stackcrypt header and no config: a volume whose config
	 * was lost.  A new volume gets a new master key and would make them
	 * unreadable for good; recovery keeps them.  Only an explicit
	 * --abandon-files goes ahead.
	 */
	if (n > 0 && !o->abandon) {
		char rel[PATH_MAX];
		char err[512];
		int h = sc_vol_find_header(backing, rel, sizeof(rel), err, sizeof(err));

		if (h < 0) {
			sc_cli_err(cmd, "cannot read %s: %s", backing, err);
			return SC_EXIT_BACKING;
		}
		if (h > 0) {
			sc_cli_err(cmd, "%s holds files of a stackcrypt volume (e.g. '%s') but no "
				"config: recover it with 'stackcrypt passwd --masterkey %s'; a new "
				"volume would get a new master key and those files could never be "
				"read again (to abandon them, add --force --abandon-files)",
				backing, rel, backing);
			return SC_EXIT_BACKING;
		}
	}
	/*
	 * With encrypted names, what is already there has no encrypted name:
	 * the mount would hide it and fsck report it for good.
	 */
	if (n > 0 && !o->force) {
		sc_cli_err(cmd, "%s is not empty (%d entr%s, e.g. '%s'); files already there "
			"would stay unencrypted and unreadable through the mount. Use an empty "
			"directory, or --force%s", backing, n, n == 1 ? "y" : "ies", first,
			o->names ? " --plaintext-names" : "");
		return SC_EXIT_BACKING;
	}
	if (n > 0 && o->names) {
		sc_cli_err(cmd, "encrypted names need an empty %s (%d entr%s, e.g. '%s'): "
			"files already there have no encrypted name and could never be read "
			"through the mount, even with --force (--plaintext-names keeps names "
			"in the clear)", backing, n, n == 1 ? "y" : "ies", first);
		return SC_EXIT_BACKING;
	}
	return SC_CLI_GO_ON;
}

/*
 * Whether a volume may be created in BACKING: a directory (of any
 * backing) without a config, empty (or --force), holding no files of a
 * lost volume (or --abandon-files), on a filesystem with user xattrs
 * (unless it needs none).  SC_CLI_GO_ON or the exit status after the
 * error.
 */
static int init_check_backing(const char *cmd, const struct init_opts *o)
{
	char err[512], first[NAME_MAX + 1] = "";
	const char *backing = o->backing;
	struct sc_backing *b;
	struct stat st;
	int n, r;

	r = sc_backing_open(backing, NULL, &b, err, sizeof(err));
	if (r) {
		sc_cli_err(cmd, "%s", err);
		return r == -EINVAL ? SC_EXIT_USAGE : SC_EXIT_BACKING;
	}
	r = sc_backing_lstat(b, SC_CONFIG_NAME, &st);
	n = r ? sc_backing_entries(b, leftover_name, first, sizeof(first)) : 0;
	sc_backing_close(b);
	if (r == 0) {
		sc_cli_err(cmd, "%s already holds a stackcrypt volume (%s/%s exists); refusing "
			   "to replace its key, even with --force", backing, backing,
			   SC_CONFIG_NAME);
		return SC_EXIT_BACKING;
	}
	if (n < 0) {
		sc_cli_err(cmd, "cannot read %s: %s", backing, strerror(-n));
		return SC_EXIT_BACKING;
	}
	r = init_check_entries(cmd, o, n, first);
	if (r != SC_CLI_GO_ON)
		return r;
	/*
	 * An aes-gcm volume keeps its headers inside the files, and with
	 * encrypted names its directory nonces too (docs/format.md 9.2, 10):
	 * it needs no xattrs and may live where they are missing.  A backing
	 * reached by URL is a file system's own volume (GlusterFS's bricks
	 * keep xattrs themselves); a local directory may lack them.
	 */
	if (o->cipher == SC_CIPHER_AES_GCM || !sc_backing_is_dir(backing))
		return SC_CLI_GO_ON;
	r = check_xattrs(cmd, backing);
	return r ? r : SC_CLI_GO_ON;
}

/*
 * A new random master key into mk and the config whose slot 0 wraps it
 * under the secret, asked here (keyslot.c, as passwd and key add do):
 * format 3 for a scrypt or key-file slot of the default label, which
 * builds before key slots still open, else format 4.  SC_CLI_GO_ON or the
 * exit status after the error.
 */
static int init_new_config(const char *cmd, const struct init_opts *o, struct sc_config *cfg,
			   uint8_t *mk)
{
	bool keyfile = o->src.kind == SC_SECRET_KEYFILE;
	int r;

	r = sc_random(mk, SC_MASTER_KEY_LEN);
	if (!r)
		r = sc_config_init(cfg, o->cipher, o->block_size,
				   keyfile ? SC_KDF_KEYFILE : o->kdf.kdf, o->kdf.scrypt_n);
	if (!r && o->hdr_version == 1)
		cfg->features &= ~SC_FEAT_HDR_V2;
	if (!r && o->names)
		cfg->features |= SC_FEAT_NAMES | SC_FEAT_NAMES_BOUND | SC_FEAT_LINKS_BOUND;
	if (!r && o->integrity)
		cfg->features |= SC_FEAT_INTEGRITY |
				  (o->no_lists ? 0 : SC_FEAT_DIR_LISTS);
	if (!r && o->unit_tree)
		cfg->features |= SC_FEAT_UNIT_TREE;
	if (!r && o->label && strcmp(o->label, cfg->label)) {
		sc_config_upgrade(cfg);
		snprintf(cfg->label, sizeof(cfg->label), "%s", o->label);
	}
	if (r) {
		sc_cli_err(cmd, "cannot create the config: %s", strerror(-r));
		return SC_EXIT_FAIL;
	}
	r = sc_cli_slot_cost(cmd, &o->kdf, keyfile, &cfg->slots[0]);
	if (r == SC_CLI_GO_ON)
		r = sc_cli_slot_wrap(cmd, cfg, 0, &o->src, "New password: ", mk);
	return r;
}

/*
 * The root's nonce record of BACKING: as the file SC_DIRNONCE_FILE (file
 * true; written under a temporary name, then put in place without
 * replacing, so it appears whole) or as the xattr, which an existing
 * bound record of key nk keeps (XATTR_CREATE, then checked).  0 or -errno with a one-line
 * reason in err (the open's, or strerror).
 */
static int root_rec_write(const char *backing, const void *rec, size_t len, bool file,
			  const struct sc_nkey *nk, char *err, size_t errlen)
{
	static const struct sc_dirplace root = { 0 };
	struct sc_backing *b;
	int r;

	err[0] = 0;
	r = sc_backing_open(backing, NULL, &b, err, errlen);
	if (r)
		return r;
	if (file)
		r = sc_backing_write_file(b, SC_VOL_TMP_PREFIX, SC_DIRNONCE_FILE, rec, len, 0444,
					  false, err, errlen);
	else
		r = sc_backing_setxattr(b, "", SC_DIRNONCE_XATTR, rec, len, XATTR_CREATE);
	if (r == -EEXIST && !file) {
		uint8_t old[64], nonce[SC_DIRNONCE_LEN];
		ssize_t n = sc_backing_getxattr(b, "", SC_DIRNONCE_XATTR, old, sizeof(old));

		/* a bound record of this key is kept; another: BACKING is empty, nothing uses it */
		if (n >= 0 && sc_dirnonce_open(nk, old, (size_t)n, &root, nonce) == 2)
			r = 0;
		else
			r = sc_backing_setxattr(b, "", SC_DIRNONCE_XATTR, rec, len, XATTR_REPLACE);
	}
	sc_backing_close(b);
	if (r && !err[0])
		snprintf(err, errlen, "%s", strerror(-r));
	return r;
}

/*
 * Integrity volumes: the root's nonce file, a file of the layers
 * (INTERNAL: its record binds itself, 9.2): the version 2 header with the
 * size of the record (docs/format.md 11.3) and the record sealed as its
 * unit 0, into buf.  On a unit tree volume (tree) the header also holds
 * the root over that unit's tag (11.10); a unit's associated data and key
 * leave out the flags and the root, so it is sealed under the header
 * without them and the header packed again with the root.  0 or -errno.
 */
static int integ_root_nonce(const struct sc_mkey *mkey, bool tree,
			    const uint8_t rec[SC_DIRNONCE_REC2_LEN], uint8_t *buf)
{
	struct sc_ihdr h = { .flags = SC_IHDR_F_TRACKS | SC_IHDR_F_INTERNAL, .gen = 1,
			     .size = SC_DIRNONCE_REC2_LEN };
	const uint8_t *tag = buf + SC_IHDR_SIZE + SC_DIRNONCE_REC2_LEN + SC_GCM_OVERHEAD -
			     SC_INTEG_TAG_LEN;
	struct sc_ikey *ik = NULL, *tik = NULL;
	struct sc_gkey *gk = NULL;
	int r = sc_ikey_new(mkey, false, &ik);

	if (!r && tree)
		r = sc_ikey_new(mkey, true, &tik);
	if (!r)
		r = sc_random(h.file_id, sizeof(h.file_id));
	if (!r)
		r = sc_ihdr_pack(ik, &h, buf);
	if (!r)
		r = sc_gkey_new_v2(ik, buf, SC_IHDR_SIZE, &h, &gk);
	if (!r)
		r = sc_gcm_seal(gk, 0, rec, SC_DIRNONCE_REC2_LEN, buf + SC_IHDR_SIZE);
	if (!r && tree) {
		h.flags |= SC_IHDR_F_TREE;
		r = sc_tree_root_of(tik, h.file_id, tag, 1, h.root);
		if (!r)
			r = sc_ihdr_pack(tik, &h, buf);
	}
	sc_gkey_free(gk);
	sc_ikey_free(tik);
	sc_ikey_free(ik);
	return r;
}

/*
 * The root's nonce record of an aes-gcm volume as the names layer keeps it
 * there (docs/format.md 9.2): the file SC_DIRNONCE_FILE, mode 0444, stored
 * as aes-gcm file data (its in-file header, then one sealed unit), so the
 * volume needs no xattr and a read-only first mount finds it.  0 or -errno.
 */
static int write_root_nonce_file(const struct init_opts *o, const uint8_t *mk,
				 const uint8_t rec[SC_DIRNONCE_REC2_LEN], char *err, size_t errlen)
{
	uint8_t buf[SC_IHDR_SIZE + SC_DIRNONCE_REC2_LEN + SC_GCM_OVERHEAD];
	size_t hlen = o->integrity ? SC_IHDR_SIZE : SC_GHDR_SIZE;
	struct sc_mkey *mkey = NULL;
	struct sc_gkey *gk = NULL;
	int r;

	r = sc_mkey_new(mk, o->cipher, o->block_size, &mkey);
	if (!r && o->integrity) {
		r = integ_root_nonce(mkey, o->unit_tree, rec, buf);
	} else if (!r) {
		r = sc_ghdr_new(mkey, buf);
		if (!r)
			r = sc_gkey_new(mkey, buf, SC_GHDR_SIZE, &gk);
		if (!r)
			r = sc_gcm_seal(gk, 0, rec, SC_DIRNONCE_REC2_LEN, buf + hlen);
	}
	sc_gkey_free(gk);
	sc_mkey_free(mkey);
	if (r)
		return r;
	return root_rec_write(o->backing, buf, hlen + SC_DIRNONCE_REC2_LEN + SC_GCM_OVERHEAD,
			      true, NULL, err, errlen);
}

/*
 * --encrypt-names: gives BACKING's root its directory nonce record before
 * the config exists, so that every names volume has one from the start
 * (the names layer would make it at the first mount, which a read-only
 * mount cannot; recovery tells a names volume by it).  A record already
 * there is kept (XATTR_CREATE): one left by an earlier volume is as good
 * as a new one under another key, and one a racing init just made may
 * already name entries.  SC_CLI_GO_ON or the exit status after the error.
 */
static int init_names_root(const char *cmd, const struct init_opts *o, const uint8_t *mk)
{
	static const struct sc_dirplace root = { 0 };
	uint8_t rec[SC_DIRNONCE_REC2_LEN], nonce[SC_DIRNONCE_LEN];
	struct sc_nkey *nk = NULL;
	struct sc_mkey *mkey;
	char err[512] = "";
	int r;

	if (!o->names)
		return SC_CLI_GO_ON;
	/* The root's record is bound to the root (version 2) under this volume's key. */
	r = sc_mkey_new(mk, o->cipher, o->block_size, &mkey);
	if (!r) {
		r = sc_nkey_new(mkey, &nk);
		sc_mkey_free(mkey);
	}
	if (!r)
		r = sc_random(nonce, sizeof(nonce));
	if (!r)
		r = sc_dirnonce_seal(nk, nonce, &root, NULL, rec) < 0 ? -EIO : 0;
	if (r) {
		sc_nkey_free(nk);
		sc_cli_err(cmd, "cannot make the root's name nonce: %s", strerror(-r));
		return SC_EXIT_FAIL;
	}
	if (o->cipher == SC_CIPHER_AES_GCM) {
		r = write_root_nonce_file(o, mk, rec, err, sizeof(err));
		if (!r)
			goto out_free_nk;
		sc_nkey_free(nk);
		sc_cli_err(cmd, "cannot write %s/%s: %s", o->backing, SC_DIRNONCE_FILE,
			   err[0] ? err : strerror(-r));
		return SC_EXIT_BACKING;
	}
	r = root_rec_write(o->backing, rec, sizeof(rec), false, nk, err, sizeof(err));
	if (!r)
		goto out_free_nk;
	sc_nkey_free(nk);
	sc_cli_err(cmd, "cannot set %s on %s: %s", SC_DIRNONCE_XATTR, o->backing, err);
	return SC_EXIT_BACKING;

out_free_nk:
	sc_nkey_free(nk);
	return SC_CLI_GO_ON;
}

/* The master key into --save-masterkey's file keyfd, which is closed.  Exit status. */
static int init_save_key(const char *cmd, const struct init_opts *o, int keyfd,
			 const uint8_t *mk)
{
	int r = write_master_key(keyfd, mk, true);

	if (close(keyfd) && !r)
		r = -errno;
	if (r) {
		sc_cli_err(cmd, "cannot write the master key to %s: %s", o->save_path,
			   strerror(-r));
		return SC_EXIT_FAIL;
	}
	return SC_CLI_GO_ON;
}

/*
 * Says the volume exists and hands the user its master key: the file it
 * was saved in, or the terminal the password was typed on; never standard
 * output.  Without either, says that nobody has it.
 */
static void init_report(const char *cmd, const struct init_opts *o,
			const struct sc_config *cfg, const uint8_t *mk)
{
	const char *backing = o->backing;

	if (o->reverse)
		fprintf(stderr, "Created the reverse-mode config %s%s for %s (aes-gcm, %" PRIu32
			"-byte blocks, names encrypted): 'stackcrypt mount --reverse%s%s %s "
			"MOUNTPOINT' shows its files encrypted, read-only.\n",
			o->config ? o->config : backing, o->config ? "" : "/" SC_REVERSE_CONFIG_NAME,
			backing, cfg->block_size, o->config ? " --config=" : "",
			o->config ? o->config : "", backing);
	else
		fprintf(stderr, "Created a stackcrypt volume in %s (%s, %" PRIu32 "-byte blocks, "
			"names %s%s, config format %" PRIu32 "%s).\n", backing,
			sc_cipher_name(cfg->cipher), cfg->block_size,
			cfg->features & SC_FEAT_NAMES ? "encrypted" : "in the clear",
			cfg->features & SC_FEAT_UNIT_TREE ? ", files bound to their names, "
			"sizes and units (unit tree)" : cfg->features & SC_FEAT_INTEGRITY ?
			", files bound to their names and sizes" : "", cfg->format, o->cipher_given || o->integrity ||
			!(cfg->features & SC_FEAT_NAMES) ? "" : ": the default");
	sc_vol_warn_plaintext("stackcrypt init", backing, cfg);
	if (o->save_path) {
		fprintf(stderr, "Its master key is in %s (mode 0600).  Keep it apart from the "
			"data: with it, 'stackcrypt passwd --masterkey=%s %s' sets a new password "
			"if you forget yours or lose %s.  Anyone who has it can read the volume.\n",
			o->save_path, o->save_path, backing, SC_CONFIG_NAME);
	} else if (o->src.kind != SC_SECRET_TTY || show_master_key(backing, mk) != 0) {
		/* standard output may be a script's log: the key never goes there */
		sc_cli_err(cmd, "the master key was not shown (%s); to have one for recovery, "
			"delete %s%s%s (nothing is stored yet) and run init again with "
			"--save-masterkey=FILE",
			o->src.kind != SC_SECRET_TTY ? "the secret did not come from a terminal" :
			"cannot write to the terminal", o->config ? o->config : backing,
			o->config ? "" : "/", o->config ? "" :
			o->reverse ? SC_REVERSE_CONFIG_NAME : SC_CONFIG_NAME);
	}
}

/*
 * --reverse: BACKING must be a directory, local or gluster:// (the config
 * file is made O_EXCL later, through the same backing interface).
 */
static int reverse_check(const char *cmd, const struct init_opts *o)
{
	struct sc_backing *b;
	struct stat st;
	char err[512];
	int r;

	r = sc_backing_open(o->backing, NULL, &b, err, sizeof(err));
	if (r) {
		sc_cli_err(cmd, "%s", err);
		return r == -EINVAL ? SC_EXIT_USAGE : SC_EXIT_BACKING;
	}
	r = sc_backing_lstat(b, "", &st);
	sc_backing_close(b);
	if (r < 0) {
		sc_cli_err(cmd, "%s: %s", o->backing, strerror(-r));
		return SC_EXIT_BACKING;
	}
	if (!S_ISDIR(st.st_mode)) {
		sc_cli_err(cmd, "%s: not a directory", o->backing);
		return SC_EXIT_BACKING;
	}
	return SC_CLI_GO_ON;
}

/*
 * The new config where it goes: BACKING's (a volume), or reverse mode's,
 * BACKING/SC_REVERSE_CONFIG_NAME or --config's file.  Never replaces one.
 */
static int config_write(const struct init_opts *o, const struct sc_config *cfg, char *err,
			size_t errlen)
{
	char *copy, *slash;
	int r;

	if (!o->reverse)
		return sc_vol_config_write(o->backing, NULL, cfg, false, err, errlen);
	if (!o->config)
		return sc_vol_config_write_as(o->backing, SC_REVERSE_CONFIG_NAME, NULL, cfg, false,
					      err, errlen);
	copy = strdup(o->config);
	if (!copy)
		return -ENOMEM;
	slash = strrchr(copy, '/');
	if (slash)
		*slash = '\0';
	r = sc_vol_config_write_as(slash ? (*copy ? copy : "/") : ".", slash ? slash + 1 : copy,
				   NULL, cfg, false, err, errlen);
	free(copy);
	return r;
}

int sc_cmd_init(int argc, char **argv)
{
	static const char cmd[] = "init";
	struct init_opts o = {
		.src		= { .kind = SC_SECRET_TTY },
		.cipher		= SC_CIPHER_AES_GCM,	/* the default volume (issue #28) */
		.hdr_version	= 2,
		.block_size	= SC_BLOCK_DEFAULT,
	};
	struct sc_config cfg;
	char err[512];
	uint8_t *mk;
	int keyfd = -1, r;

	/* no core dump or ptrace attach while we hold the master key */
	prctl(PR_SET_DUMPABLE, 0);
	r = init_options(cmd, argc, argv, &o);
	if (r == SC_CLI_GO_ON)
		r = o.reverse ? reverse_check(cmd, &o) : init_check_backing(cmd, &o);
	if (r != SC_CLI_GO_ON)
		return r;
	if (o.save_path) {
		keyfd = save_key_open(cmd, o.save_path, o.backing);
		if (keyfd < 0)
			return SC_EXIT_FAIL;
	}

	mk = sc_secure_alloc(SC_MASTER_KEY_LEN);
	if (!mk) {
		sc_cli_err(cmd, "out of locked memory");
		r = SC_EXIT_FAIL;
		goto out_drop_keyfile;
	}
	r = init_new_config(cmd, &o, &cfg, mk);
	if (r != SC_CLI_GO_ON)
		goto out_free_mk;
	/* the key is on disk before the volume exists: never a volume without it */
	if (keyfd >= 0) {
		r = init_save_key(cmd, &o, keyfd, mk);
		keyfd = -1;
		if (r != SC_CLI_GO_ON)
			goto out_free_mk;
	}
	r = o.reverse ? SC_CLI_GO_ON : init_names_root(cmd, &o, mk);
	if (r != SC_CLI_GO_ON)
		goto out_free_mk;
	r = config_write(&o, &cfg, err, sizeof(err));
	if (r) {
		sc_cli_err(cmd, "%s", err);
		r = r == -EEXIST ? SC_EXIT_BACKING : SC_EXIT_FAIL;
		goto out_free_mk;
	}
	init_report(cmd, &o, &cfg, mk);
	r = SC_EXIT_OK;
out_free_mk:
	sc_secure_free(mk, SC_MASTER_KEY_LEN);
out_drop_keyfile:
	if (keyfd >= 0)
		close(keyfd);
	if (o.save_path && r != SC_EXIT_OK)
		unlink(o.save_path);	/* ours (O_EXCL): no key for a volume that does not exist */
	return r;
}
