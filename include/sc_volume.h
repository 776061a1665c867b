/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_volume.h - an unlocked volume: its config and master key, and the
 * ways a user hands us the secret.  fs/volume/volume.c reads the config file from
 * the backing directory and the secret from the terminal, a file or a
 * command; the crypto library does the rest.  What the commands (fs/cli,
 * fs/fsck) use of the module is here: the config file read and written
 * atomically, secrets from the terminal / a file / a command, the unlock,
 * the one map from volume errors to exit codes; what only fs/volume's own
 * files share is in fs/volume/volume_i.h.  Every function of the module is
 * named sc_vol_*.
 */
#ifndef SC_VOLUME_H
#define SC_VOLUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sc_crypto.h"

enum sc_secret_kind {
	SC_SECRET_TTY = 0,	/* ask on the terminal, no echo */
	SC_SECRET_PASSFILE,	/* first line of a file ("-" = stdin) */
	SC_SECRET_EXTPASS,	/* first line printed by a command (sh -c) */
	SC_SECRET_KEYFILE,	/* raw 256-bit key file (sc_keyfile_parse) */
	SC_SECRET_MASTERKEY,	/* master key text, recovery without a config */
};

struct sc_secret_src {
	enum sc_secret_kind	kind;
	const char		*arg;	/* path or command; NULL for TTY */
};

struct sc_volume {
	struct sc_config	cfg;
	struct sc_mkey		*mkey;
	/* The integrity keys (docs/format.md 11.2) when cfg has SC_FEAT_INTEGRITY, else NULL. */
	struct sc_ikey		*ikey;
};

/*
 * Reads BACKING/.stackcrypt.conf, gets the secret, unlocks.  Returns 0 or
 * -errno with a one-line reason in err:
 *   -ENOENT no config, -EUCLEAN/-EINVAL/-EPROTONOSUPPORT corrupt config,
 *   -EKEYREJECTED wrong password, -EBADMSG tampered config,
 *   -ECANCELED secret source failed (extpass exit status, empty password).
 */
int sc_vol_open(const char *backing, const struct sc_secret_src *src,
		struct sc_volume **out, char *err, size_t errlen);
/*
 * As sc_vol_open, for the config called name in the directory backing
 * (name NULL: the volume's, SC_CONFIG_NAME, with its recovery); reverse
 * mode's config (SC_REVERSE_CONFIG_NAME, or --config).  A master key is
 * refused there (-EINVAL): it recovers a volume's config, and reverse
 * mode's stores nothing but the config.
 */
int sc_vol_open_as(const char *backing, const char *name, const struct sc_secret_src *src,
		   struct sc_volume **out, char *err, size_t errlen);
void sc_vol_close(struct sc_volume *vol);

/* Temporary configs during a write: this prefix + 16 hex digits, in BACKING. */
#define SC_VOL_TMP_PREFIX	SC_CONFIG_NAME ".tmp-"
/* Reverse mode's config in the plaintext tree's root (docs/format.md 12.1). */
#define SC_REVERSE_CONFIG_NAME	".stackcrypt.reverse.conf"

/* Longest password or key file line we accept (bytes, without newline). */
#define SC_VOL_SECRET_MAX	1024

/*
 * A secret in locked memory: a password (kdf SCRYPT) or the 32 raw bytes of
 * a key file (kdf KEYFILE), or the 32 raw bytes of a master key typed for
 * recovery.  Freed (wiped) with sc_vol_secret_free.
 */
struct sc_vol_secret {
	unsigned char	*buf;	/* sc_secure_alloc(SC_VOL_SECRET_MAX + 1) */
	size_t		len;
};

/*
 * Gets a secret from src.  prompt is shown on the terminal for
 * SC_SECRET_TTY; with confirm, the terminal asks twice and refuses a
 * mismatch.  Key files are parsed (sc_keyfile_parse): the result is the 32
 * raw key bytes.  Returns 0, or -ECANCELED (empty password, mismatch,
 * extpass failed, no terminal, interrupted), -ENOENT/-EACCES/... (file
 * unreadable), -EINVAL (bad key file); err gets a one-line reason.
 */
int sc_vol_secret_get(const struct sc_secret_src *src, const char *prompt,
		      bool confirm, struct sc_vol_secret *out,
		      char *err, size_t errlen);
void sc_vol_secret_free(struct sc_vol_secret *s);

/*
 * Reads and parses BACKING/.stackcrypt.conf (at most SC_CONFIG_MAX_TEXT
 * bytes), warning on stderr (prefixed by who; who NULL: no warning) when
 * group or others may read it.  Returns 0; -ENOTDIR BACKING missing or not a directory;
 * -ENOENT no config; -EACCES unreadable; -EUCLEAN truncated, oversized or
 * corrupt; -EPROTONOSUPPORT newer format; -EINVAL field out of range.
 */
int sc_vol_config_read(const char *backing, const char *who,
		       struct sc_config *cfg, char *err, size_t errlen);

/*
 * Opens BACKING and takes its config lock (sc_backing_lock_config: a
 * flock of a directory, a lock byte of a GlusterFS volume; without
 * waiting) for a read-modify-write of the config.  Returns 0 with the
 * backing in *out (sc_backing_close it to unlock; a GlusterFS lock stays
 * until the process exits), -EBUSY when another command holds it, or
 * -errno (-ENOTDIR: no such backing, -EINVAL: a bad URL); err set.
 */
struct sc_backing;
int sc_vol_lock(const char *backing, struct sc_backing **out, char *err, size_t errlen);

/*
 * Writes cfg as BACKING/.stackcrypt.conf atomically (sc_backing_write_file:
 * a new file, mode 0600, written, fsynced, renamed over the config, then
 * the directory synced).  The old config stays until the new one is
 * durable.  locked is the caller's sc_vol_lock() backing, or NULL to take
 * the lock for just this write where the backing has one that waits.  With
 * replace false, an existing config is never overwritten (-EEXIST).
 * Returns 0 or -errno with err set.
 */
int sc_vol_config_write(const char *backing, struct sc_backing *locked,
			const struct sc_config *cfg, bool replace, char *err, size_t errlen);
/* The same under the name given (reverse mode's config), in the directory backing. */
int sc_vol_config_write_as(const char *backing, const char *name, struct sc_backing *locked,
			   const struct sc_config *cfg, bool replace, char *err, size_t errlen);

/*
 * Handles one secret option of a command line.  name is the long option
 * ("keyfile", "passfile", "extpass", "masterkey", "password"); a second
 * secret source, or a password on the command line, is refused.  Returns 0
 * or -EINVAL with err set.
 */
int sc_vol_secret_opt(const char *name, const char *arg,
		      struct sc_secret_src *src, bool *given,
		      char *err, size_t errlen);

/*
 * Whether s could be (most of) a key: hex digits and separators only, at
 * least 48 digits.  Messages print such a string (when no file of that name
 * exists) as "(not shown)": a key mistyped as a file name or an argument
 * must not land on a terminal or in a log.
 */
bool sc_vol_looks_like_key(const char *s);

/*
 * For a volume whose file headers live in xattrs (every cipher but
 * aes-gcm), over a directory: samples a few files with data near the root
 * of BACKING (fs/volume/probe.c; no walk of the tree) and, if some carry no
 * header, says so in one line on stderr prefixed by who (a copy made
 * without xattrs mounts, and its files then fail with EIO).  Returns the
 * number of sampled files without a header, 0 when there is nothing to
 * say, or -ENOMEM.
 */
int sc_vol_warn_no_headers(const char *who, const char *backing, const struct sc_config *cfg);

/* The features as recovery and passwd print them: "hdr-v2, names", "none" for 0. */
void sc_vol_features_text(uint64_t features, char *buf, size_t len);

/*
 * The unlock every command shares (mount and fsck through sc_vol_open,
 * passwd directly): the config of BACKING and its master key into cfg and
 * mk (SC_MASTER_KEY_LEN bytes of the caller's locked memory).  A master
 * key (SC_SECRET_MASTERKEY) is a recovery (sc_vol_recover); otherwise the
 * config is read (warnings prefixed by who), the secret asked with prompt
 * and the master key unwrapped.  Returns 0 or -errno (sc_vol_open's
 * codes) with err set.
 */
int sc_vol_unlock(const char *backing, const struct sc_secret_src *src, const char *who,
		  const char *prompt, struct sc_config *cfg, uint8_t *mk,
		  char *err, size_t errlen);
/*
 * The same, for the commands that change key slots: which slot opened the
 * volume in *slot (-1 for a master key), and the secret that did in *keep
 * (if not NULL; the caller frees it), which an upgrade to format 4 wraps
 * anew.  A password is tried on every password slot, a key file on every
 * key-file slot, in slot order.
 */
int sc_vol_unlock_slot(const char *backing, const struct sc_secret_src *src, const char *who,
		       const char *prompt, struct sc_config *cfg, uint8_t *mk, int *slot,
		       struct sc_vol_secret *keep, char *err, size_t errlen);

/*
 * sc_vol_unlock_slot refuses a volume a stopped command left half done
 * (-EBUSY, "run stackcrypt CMD to finish it"): SC_FEAT_REKEYING (rekey),
 * SC_FEAT_UPGRADING or SC_FEAT_LISTS_UPGRADING (upgrade).  This one, for
 * those commands, opens the volume that has the bits opens (who:
 * "stackcrypt rekey", ...).
 */
int sc_vol_unlock_resume(const char *backing, const struct sc_secret_src *src, const char *who,
			 uint64_t opens, const char *prompt, struct sc_config *cfg, uint8_t *mk,
			 int *slot, struct sc_vol_secret *keep, char *err, size_t errlen);

/*
 * Whether some regular file below BACKING carries a stackcrypt header
 * (SC_HDR_XATTR, any value): files of a volume, whose config may be lost.
 * Returns 1 with the first one's path relative to BACKING in rel, 0 if
 * none, or -errno with a one-line reason in err.
 */
int sc_vol_find_header(const char *backing, char *rel, size_t rellen, char *err,
		       size_t errlen);

/*
 * Whether a stackcrypt daemon has BACKING mounted (a fuse.stackcrypt entry
 * of /proc/self/mountinfo whose source is BACKING's real path, the default
 * fsname).  Returns 1 with the mount point in mnt, else 0.
 */
int sc_vol_mounted_at(const char *backing, char *mnt, size_t mntlen);
/*
 * The other way: whether mnt is the mount point of a stackcrypt daemon
 * (a fuse.stackcrypt entry of /proc/self/mountinfo), with its source (the
 * BACKING it was mounted from, unless mounted with -o fsname=) in
 * backing.  1 if so, else 0.
 */
int sc_vol_mount_source(const char *mnt, char *backing, size_t len);

/*
 * For a null-cipher volume, one line on stderr: "WHO: warning: BACKING is
 * not encrypted (cipher null): files are stored in plaintext".  Printed by
 * init, info and every sc_vol_open() (mount, fsck); nothing otherwise.
 */
void sc_vol_warn_plaintext(const char *who, const char *backing, const struct sc_config *cfg);

/*
 * Exit status (enum sc_exit) for an error of sc_vol_open, the above, or
 * the stack a mount builds on the volume: the one map every command uses.
 */
int sc_vol_exit_code(int err);

/* ---- encrypted names without a mount (fs/volume/names.c) ------------------- */

/* A name's side file holds up to SC_NAME_ENC_MAX bytes; room for larger small files. */
#define SC_VOL_SMALL_MAX	8192

/*
 * The contents of a small file the names layer stores through the data
 * layer below it (a long name's side file, a directory's nonce file): rel
 * in b, decrypted with mk as that layer stores file data, 1..max bytes
 * (max <= SC_VOL_SMALL_MAX) into buf.  Returns the length, or -errno
 * with a reason ("its header does not verify") in why: -EUCLEAN not a
 * regular file or a size no such file has, -EBADMSG header or contents do
 * not verify, -EINVAL max too large, else the open's or read's error.
 */
struct sc_backing;
ssize_t sc_vol_read_small(struct sc_backing *b, const struct sc_mkey *mk, const char *rel,
			  void *buf, size_t max, char *why, size_t whylen);

/*
 * Whether the directory nonce records of the volume of mk in b are files
 * (SC_DIRNONCE_FILE: aes-gcm, or a root holding such a file and no xattr
 * record) rather than the xattr SC_DIRNONCE_XATTR.
 */
bool sc_vol_nonce_in_file(struct sc_backing *b, const struct sc_mkey *mk);

/*
 * The nonce of the directory rel of vol found at the place at
 * (sc_dirnonce_open; at NULL, a place not known: sc_dirnonce_parse, the
 * record unchecked), from its record in the form in_file says
 * (sc_vol_nonce_in_file).  File form: a file lost or left empty by a crash
 * is answered by the copy in the directory's xattr, and *copy (if not
 * NULL) says so.  Returns 0, or -errno with a reason in why: -ENOENT no
 * record, -EBADMSG the record of another place, -EIO a version 1 record
 * on a volume that binds them, -EUCLEAN / -EPROTONOSUPPORT a damaged
 * record, else the read's error.
 */
int sc_vol_dir_nonce(struct sc_backing *b, const struct sc_volume *vol,
		     const struct sc_nkey *nk, bool in_file, const char *rel,
		     const struct sc_dirplace *at, uint8_t nonce[SC_DIRNONCE_LEN], bool *copy,
		     char *why, size_t whylen);

#endif /* SC_VOLUME_H */
