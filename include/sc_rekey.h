/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_rekey.h - master-key rotation without a mount (fs/volume/rekey.c,
 * docs/format.md 6.5): the tree of a volume copied under a new master key
 * through two translator stacks over one backing (any engine of
 * sc_backing.h), then swapped in, and the state that makes each step
 * resumable.  stackcrypt rekey (fs/cli/cmd_rekey.c) drives the phases.
 */
#ifndef SC_REKEY_H
#define SC_REKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sc_crypto.h"

struct sc_backing;

/* What a rekey has done and has to do, for a progress line. */
struct sc_rekey_count {
	uint64_t	files, files_total;	/* entries of the tree */
	uint64_t	bytes, bytes_total;	/* bytes of regular files */
};

struct sc_rekey {
	struct sc_backing	*b;		/* opened, config lock held */
	const struct sc_config	*cfg;		/* the volume's (cipher, features) */
	/*
	 * The volume the copy makes, when it differs from cfg (stackcrypt
	 * upgrade: cfg's with SC_FEAT_INTEGRITY, docs/format.md 11.12); NULL:
	 * cfg.  The new stack, the hard-link check and the freshness record
	 * follow it.
	 */
	const struct sc_config	*new_cfg;
	const uint8_t		*old_mk, *new_mk;	/* SC_MASTER_KEY_LEN each */
	/* integrity volumes: this client's freshness records' directory (NULL: the default) */
	const char		*state_dir;
	/* called now and then while copying, and once at the end (done) */
	void			(*progress)(void *ctx, const struct sc_rekey_count *c, bool done);
	void			*ctx;
	struct sc_rekey_count	count;
};

/*
 * The work of phase (enum sc_rekey_phase) on k's backing: COPY the tree
 * under the new key into SC_REKEY_DIR_NAME/new (entries found there
 * already, from a run that was stopped, are checked and kept or made
 * again), SWAP_OUT the root's entries into .../old, SWAP_IN .../new's
 * into the root, CLEANUP .../old and the directory deleted.  Each phase
 * may be run again after a kill at any point of it.  Returns 0, or -errno
 * with a one-line reason in err.
 */
int sc_rekey_phase_run(struct sc_rekey *k, enum sc_rekey_phase phase, char *err, size_t errlen);

/*
 * stackcrypt upgrade of an integrity volume made without listing records
 * (docs/format.md 11.12): every directory's record (SC_DIRLIST_FILE, 11.7)
 * written in place by the layers of k->new_cfg (k->cfg's with
 * SC_FEAT_DIR_LISTS) under k->old_mk over the root, as a mount's names
 * layer writes it, each directory listed whole and its listing taken as
 * found; no file is copied or opened, no name changed.  A record a stopped
 * run wrote is kept when it is right, written again when it is not (or
 * does not read).  The backing is synced at the end (or each directory's
 * record fsynced with it, on an engine without a whole sync).  count.files
 * counts the directories done.  May be run again after a kill or a power
 * loss at any point.  0, or -errno with a one-line reason in err.
 */
int sc_rekey_lists_write(struct sc_rekey *k, char *err, size_t errlen);

/*
 * The rekey state file of k's backing: written (sc_rekey_state_seal, put
 * in place atomically), read and opened (into phase, k's new_mk buffer
 * and the final config text, text of SC_CONFIG_MAX_TEXT bytes), removed.
 * Return 0 or -errno (read: -ENOENT none) with err set.
 */
int sc_rekey_state_write(struct sc_backing *b, const struct sc_config *cfg, const uint8_t *old_mk,
			 enum sc_rekey_phase phase, const uint8_t *new_mk, const char *text,
			 size_t len, char *err, size_t errlen);
int sc_rekey_state_read(struct sc_backing *b, const struct sc_config *cfg, const uint8_t *old_mk,
			enum sc_rekey_phase *phase, uint8_t *new_mk, char *text, size_t *len,
			char *err, size_t errlen);
int sc_rekey_state_remove(struct sc_backing *b, char *err, size_t errlen);


/*
 * Integrity volumes (nothing on others): this client's freshness record
 * of the volume (docs/format.md 11.9), which the rotation re-makes under
 * the new key (staged by the copy phase).  sc_rekey_fresh_drop removes a
 * staged record (a rotation started afresh): 0 or -errno.
 * sc_rekey_fresh_finish, before the new config is written, puts the
 * staged record in place of the old key's (or, with none staged, removes
 * the old key's, of no use under the new): 1 a record under the new key
 * is in place, 0 none is, or -errno.  err says why on an error.
 */
int sc_rekey_fresh_drop(struct sc_rekey *k, char *err, size_t errlen);
int sc_rekey_fresh_finish(struct sc_rekey *k, char *err, size_t errlen);

/*
 * A point where a kill would leave the rekey half done: for the tests,
 * the environment variable SC_REKEY_FAULT=N kills the process (SIGKILL)
 * at the Nth such point, so that every step is killed in turn (no timing).
 */
void sc_rekey_step(void);

#endif /* SC_REKEY_H */
