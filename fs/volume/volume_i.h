/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * volume_i.h - what only the volume module's own files (volume.c,
 * probe.c) share: the backing check, the recovery of a config with the
 * master key, and the tree scan for directory nonce records.  The
 * module's interface to the commands is include/sc_volume.h.
 */
#ifndef SC_VOLUME_I_H
#define SC_VOLUME_I_H

#include <stdbool.h>
#include <stddef.h>
#include "sc_volume.h"

/*
 * Checks that BACKING exists and is a directory.  Returns 0 or -ENOTDIR
 * (missing, not a directory, not searchable) with err set.
 */
int sc_vol_backing_check(const char *backing, char *err, size_t errlen);

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
 * The directory nonce records of BACKING's tree, the root included, in
 * either form (fs/volume/probe.c), in one walk that ends at the first
 * version 2 record (bound to its place, SC_FEAT_NAMES_BOUND): the first
 * directory with any record into any and the first with a version 2 one
 * into bound (len bytes each; "" for none, "." for the root).  Returns 0,
 * or -errno with err set.
 */
int sc_vol_tree_dirnonces(const char *backing, char *any, char *bound, size_t len,
			  char *err, size_t errlen);
/*
 * The stored target of the first symlink of BACKING's tree (named like a
 * name) into target (len bytes, NUL added).  Its length, -1 (none), or
 * -errno with err set.
 */
int sc_vol_tree_link(const char *backing, char *target, size_t len, char *err, size_t errlen);

#endif /* SC_VOLUME_I_H */
