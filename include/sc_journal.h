/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_journal.h - the gcm layer's intent journal (docs/format.md 10.10): the
 * file sc.journal in the backing root, where every in-place write of units
 * is announced (with the sealed new units it overwrites) before it is
 * made, so that a unit a kill -9 tears can be put back to its new content,
 * or an append cut back, before the file is used again.
 *
 * The module (fs/xlators/gcm/journal.c) knows the file format and the
 * rules; it does no I/O of its own: the gcm layer (through the layer
 * below) and fsck (through the backing interface) hand it callbacks.
 * Public because both use it: fsck includes no header private to a
 * translator.  Returns are 0 or -errno throughout.
 */
#ifndef SC_GCM_JOURNAL_H
#define SC_GCM_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sc_crypto.h"

#define SC_JRNL_NAME		"sc.journal"
#define SC_JRNL_HDR_BLOCK	4096	/* the header's block; slots follow it */
#define SC_JRNL_REC_SIZE	96	/* a record's header (version 2); its units follow */
#define SC_JRNL_SLOTS		16	/* slots of a new journal */
#define SC_JRNL_SLOTS_MAX	64	/* the pinned bitmap is 64 bits */

/* I/O of one file (the journal, or a data file being repaired). */
struct sc_jio {
	void	*ctx;
	/* Bytes read (short at EOF), or -errno. */
	ssize_t	(*pread)(void *ctx, void *buf, size_t len, uint64_t off);
	/* All of buf, or -errno. */
	int	(*pwrite)(void *ctx, const void *buf, size_t len, uint64_t off);
	int	(*truncate)(void *ctx, uint64_t size);
	int	(*sync)(void *ctx);
	int	(*size)(void *ctx, uint64_t *size);
};

enum sc_jrnl_mode {
	SC_JRNL_MOUNT,		/* read-write mount: pin, then mark DIRTY for this run */
	SC_JRNL_INSPECT,	/* fsck: read only, nothing written */
	SC_JRNL_REPAIR,		/* fsck --repair: pin; clean at a clean close */
};

struct sc_jrnl;

/*
 * Opens the journal through io (an empty file becomes a new journal,
 * not in INSPECT mode; anything else that is not a journal is left
 * alone).  After an unclean stop (DIRTY) every valid record of the
 * stopped run (its run id) is pinned; pinned records are loaded.  A
 * MOUNT starts a new run (a new random id, DIRTY).  mk: the volume's key
 * (must outlive the journal), bs its unit size.  ik: an integrity
 * volume's keys (docs/format.md 11.8), whose journal is version 3, with a
 * dirty table: its entries of the last run are pinned and carried into a
 * MOUNT's run (a version 2 journal holding records is kept as it is, with
 * no table, until they are resolved); NULL: version 2, no table, and a
 * version 3 journal is -EUCLEAN.  -EUCLEAN: not a journal
 * (of this unit size), -EBADMSG: a journal whose header fails its MAC
 * (put back from earlier, edited, or another volume's: no record of it
 * may be used), -EPROTO: an older build's (version 1) journal holding
 * crash records (MOUNT only: fsck shows and applies them), -ENOENT: empty
 * (INSPECT), -ENOMEM, or io's errors.
 */
int sc_jrnl_open(const struct sc_mkey *mk, const struct sc_ikey *ik, uint32_t bs,
		 const struct sc_jio *io, enum sc_jrnl_mode mode, struct sc_jrnl **out);
/*
 * As sc_jrnl_open; in MOUNT mode gate(ctx, run), when not NULL, is first
 * called with the run id of the journal as found (a version 2 or 3
 * journal whose MAC verified), before this run replaces it: a negative
 * return fails the open with it, nothing written.  The freshness record
 * uses it (format.md 11.9: a journal of an earlier run of this client was
 * put back with the volume).
 */
int sc_jrnl_open_gated(const struct sc_mkey *mk, const struct sc_ikey *ik, uint32_t bs,
		       const struct sc_jio *io, enum sc_jrnl_mode mode,
		       int (*gate)(void *ctx, const uint8_t run[16]), void *ctx,
		       struct sc_jrnl **out);
/* The run id in j's header: this run's (MOUNT), else the one found (16 bytes). */
void sc_jrnl_run(const struct sc_jrnl *j, uint8_t run[16]);

/*
 * Closes j.  clean: every write of the run completed (unmount): the
 * record headers the run wrote are cleared, then DIRTY; a REPAIR: nothing
 * the unclean stop left waits for a decision, so DIRTY is cleared.  A
 * REPAIR of a version 1 journal that resolved every record rewrites it as
 * a new version 2 journal.  Frees j.
 */
void sc_jrnl_close(struct sc_jrnl *j, bool clean);

/* Units (at most) whose new contents one record carries. */
uint32_t sc_jrnl_cap_units(const struct sc_jrnl *j);
/* The journal's length: its header block and every slot. */
uint64_t sc_jrnl_size(const struct sc_jrnl *j);

/*
 * Announces an in-place write of units [first, first + nunits) of the file
 * fid, whose first ndata units (those that existed: their stored bytes
 * are below old_stored) are the data_len sealed bytes at rec +
 * SC_JRNL_REC_SIZE; rec's first SC_JRNL_REC_SIZE bytes are overwritten
 * with the record.  One write into a free slot, kept until sc_jrnl_end.
 * Waits while every slot is busy.  *slot: the slot, or -1 when no slot
 * can ever be had (all pinned; logged once): the write goes unjournaled.
 */
int sc_jrnl_begin(struct sc_jrnl *j, const uint8_t fid[SC_GCM_FILE_ID_LEN], uint64_t first,
		  uint64_t nunits, uint32_t ndata, uint64_t old_stored, uint8_t *rec,
		  size_t data_len, int *slot);
/* The in-place write of slot's record is done (or failed): the slot is free again. */
void sc_jrnl_end(struct sc_jrnl *j, int slot);

/*
 * Whether the run before this open stopped uncleanly (DIRTY): a kill, a
 * crash, or a power loss, which may have lost writes that were not synced
 * (docs/format.md 11.8, --accept-unclean).
 */
bool sc_jrnl_unclean(const struct sc_jrnl *j);
/*
 * A MOUNT after an unclean stop refused a file that stop may have left
 * (its size ahead of its header): its clean close keeps DIRTY, so that
 * fsck --accept-unclean can still take the file (its records cleared).
 */
void sc_jrnl_keep_unclean(struct sc_jrnl *j);
/* Whether pinned records name the file fid (cheap; no lock needed for a stale no). */
bool sc_jrnl_has(struct sc_jrnl *j, const uint8_t fid[SC_GCM_FILE_ID_LEN]);
/* How many records are pinned. */
unsigned sc_jrnl_pinned(struct sc_jrnl *j);
/* The version of the journal as read: 1 (an older build's, read only by fsck) or 2. */
unsigned sc_jrnl_version(const struct sc_jrnl *j);

/* What resolution did, or would do, to one unit. */
struct sc_jfix {
	uint64_t	unit;
	bool		cut;	/* an append torn inside it: the file cut back to its start */
};

/*
 * Resolves the pinned records of the file gk opens (its file id), newest
 * first: a unit of a record that fails its tag (or that the file ends
 * inside) gets the record's sealed unit (a rewrite), or the file is cut
 * back to its start (an append); a unit that opens is left alone.  apply:
 * write (then sync the file, then unpin the records); else only report.
 * fix(ctx, &f) is called for each unit repaired (or to be).  Serialised
 * per journal: a second caller for the same file waits, then finds
 * nothing.  Returns the number of fixes, or -errno.
 */
int sc_jrnl_resolve(struct sc_jrnl *j, struct sc_gkey *gk, const struct sc_jio *file,
		    bool apply, void (*fix)(void *ctx, const struct sc_jfix *f), void *ctx);

/*
 * Drops every pinned record whose file id keep() does not know (fsck
 * --repair, after a whole walk: those files are gone).  The number dropped.
 */
int sc_jrnl_drop_unknown(struct sc_jrnl *j, bool (*keep)(void *ctx, const uint8_t *fid),
			 void *ctx);

/*
 * The dirty table (version 3 journals, docs/format.md 11.8).  A write
 * session of the file id, whose header had gen when it began, gets an
 * entry before its first change: *idx, 0, or -EOPNOTSUPP (no table) or
 * -ENOSPC (full: the caller commits at each change), or -errno.
 */
int sc_jrnl_dirty_begin(struct sc_jrnl *j, const uint8_t id[SC_GCM_FILE_ID_LEN], uint64_t gen,
			int *idx);
/*
 * Entries that name a place rather than a file (format.md 11.8), for the
 * windows where a kill would leave a file its place refuses: a create,
 * before its header is stored (tag: sc_integ_create_tag of the place, gen
 * 0), and a rename, before the file is rebound to its new place (tag:
 * sc_integ_rename_tag of the file and the new place, gen: its header's).
 * Each is written before the backing call and ended once the header is
 * stored.  *idx, or errors as sc_jrnl_dirty_begin.
 */
enum sc_jrnl_place {
	SC_JRNL_CREATE	= 3,
	SC_JRNL_RENAME	= 4,
};
int sc_jrnl_place_begin(struct sc_jrnl *j, enum sc_jrnl_place kind,
			const uint8_t tag[SC_INTEG_TAG_LEN], uint64_t gen, int *idx);
/* Entry idx (a session's after its commit, or a pinned one resolved) zeroed and freed.  0 or -errno. */
int sc_jrnl_dirty_end(struct sc_jrnl *j, int idx);
/*
 * The pinned file entry for a header with file id and gen (>= the entry's:
 * a rename's rebind may have raised it after the session began), or -1.
 */
int sc_jrnl_dirty_find(struct sc_jrnl *j, const uint8_t id[SC_GCM_FILE_ID_LEN], uint64_t gen);
/* The pinned entry of kind with tag, for a header of gen (>= the entry's), or -1. */
int sc_jrnl_place_find(struct sc_jrnl *j, enum sc_jrnl_place kind,
		       const uint8_t tag[SC_INTEG_TAG_LEN], uint64_t gen);
/* How many entries are pinned (0 without a table; cheap). */
unsigned sc_jrnl_dirty_pinned(struct sc_jrnl *j);
/* Whether the journal has a dirty table. */
bool sc_jrnl_has_table(const struct sc_jrnl *j);
/* Zeroes every pinned entry whose id keep() does not know (fsck --repair).  The number. */
int sc_jrnl_dirty_drop_unknown(struct sc_jrnl *j, bool (*keep)(void *ctx, const uint8_t *fid),
			       void *ctx);

#endif /* SC_GCM_JOURNAL_H */
