/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * volume_i.h - private helpers shared by the volume commands (init, passwd,
 * info, fsck) and fs/volume/volume.c: reading and atomically writing the config
 * file, getting a secret from the terminal / a file / a command, and
 * mapping volume errors to exit codes.  Not part of the cross-module
 * contract (include/sc_volume.h is).
 */
#ifndef SC_VOLUME_I_H
#define SC_VOLUME_I_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include "sc_volume.h"

/* Temporary configs during a write: this prefix + 16 hex digits, in BACKING. */
#define SC_VOL_TMP_PREFIX	SC_CONFIG_NAME ".tmp-"

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

/*
 * Checks that BACKING exists and is a directory.  Returns 0 or -ENOTDIR
 * (missing, not a directory, not searchable) with err set.
 */
int sc_vol_backing_check(const char *backing, char *err, size_t errlen);

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
 * Recovery: the config of BACKING for a master key typed by the user.  A
 * config of format 3 whose MAC checks with the key is kept as it is (its
 * fields are authenticated).  Otherwise the key is checked against the
 * headers of the first files in BACKING, cfg is filled from the config if
 * it is still readable, else built fresh (new salt and uuid, nothing
 * wrapped) with the cipher and block size the headers were made with;
 * names count as encrypted if the config says so or any directory of the
 * tree carries a nonce record (a feature is never cleared).  Prints what
 * it found to stderr, prefixed by who.  Returns 0, -EKEYREJECTED (the key
 * opens none of the headers, or fails the config's MAC while no header
 * says the key is right), -EBADMSG (the config's MAC fails while the
 * files' headers take the key: the config was edited), -ENOENT (no
 * checked config and no encrypted file: nothing to recover), -ENOTDIR,
 * -errno; err set.
 */
int sc_vol_recover(const char *backing, const char *who, const uint8_t mk[SC_MASTER_KEY_LEN],
		   struct sc_config *cfg, char *err, size_t errlen);

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
 * Whether any directory of BACKING (the root included) carries a
 * directory nonce record, in either form (fs/volume/probe.c) — with
 * bound, a version 2 one (bound to its place, SC_FEAT_NAMES_BOUND): 1
 * with the first one's path relative to BACKING in where ("." for the
 * root), 0 if none, or -errno with err set.
 */
int sc_vol_tree_has_dirnonce(const char *backing, bool bound, char *where, size_t wlen,
			     char *err, size_t errlen);

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

#endif /* SC_VOLUME_I_H */
