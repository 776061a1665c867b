/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_fresh.h - the per-client freshness record of an integrity volume
 * (docs/format.md 11.9): the newest file gens this client has seen, kept
 * outside the backing store (DIR/<uuid>.state), so that a file put back
 * from an older copy, or the whole volume, is refused on every client
 * that saw the newer state.
 *
 * The module (fs/state/freshness.c) owns the state file: its format, the
 * MAC chain under K_s, its place on this machine, its appends and its
 * compaction.  The gcm layer asks it about each file it opens and tells it
 * the gens it writes and makes durable; the mount and fsck open and close
 * it.  Public because the mount, fsck and the gcm layer share it.  Returns
 * are 0 or -errno throughout; the record is shared by threads (one lock).
 */
#ifndef SC_FRESH_H
#define SC_FRESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sc_crypto.h"

#define SC_FRESH_SUFFIX		".state"
#define SC_FRESH_SEG_HDR	32	/* a segment's fixed part; its entries follow */
#define SC_FRESH_ENTRY_LEN	32
#define SC_FRESH_RUN_LEN	16
#define SC_FRESH_RUNS_KEPT	64	/* runs a compaction keeps (their kind 5 and 4 entries) */

/* The kinds of an entry (format.md 11.9). */
enum sc_fresh_kind {
	SC_FRESH_FILE	= 1,	/* a file id at a gen */
	SC_FRESH_DIR	= 2,	/* a directory nonce at a gen (11.7: not served, carried) */
	SC_FRESH_GONE	= 3,	/* a file id deleted at a gen (carried) */
	SC_FRESH_CLEAN	= 4,	/* a run ended clean */
	SC_FRESH_RUN	= 5,	/* a run begun */
};

/* sc_fresh_open's flags. */
#define SC_FRESH_CREATE	1u	/* no state file: make one (trust on first use) */
#define SC_FRESH_WRITE	2u	/* the file is written (appends, compaction); else read only */
#define SC_FRESH_ALLOW	4u	/* --allow-rollback: older objects accepted, the record lowered */

struct sc_fresh;

/* What sc_fresh_open found, for the caller to tell the user. */
struct sc_fresh_info {
	bool	made;		/* there was no state file: a new one (first mount here, or lost) */
	bool	torn;		/* bytes after the last valid segment were dropped */
	uint64_t dropped;	/* ... how many */
	bool	refused_before;	/* flag bit 0: a roll-back refused earlier, not accepted since */
	char	path[4096];	/* the state file's path */
};

/*
 * The record in the bytes buf (len) of the state file of the volume uuid
 * under ik's K_s, with no file behind it (tests; sc_fresh_open uses it).
 * *valid: the bytes of the header and of the segments whose MACs chain
 * (the rest is a torn append, dropped).  0, -EUCLEAN (not a state file: too
 * short, another magic, or a segment written with the key that breaks a
 * field rule), -EPROTONOSUPPORT (another version, an unknown flag),
 * -EBADMSG (the header's MAC fails: damaged, edited, another volume's),
 * -ESTALE (another volume's uuid), -ENOMEM.
 */
int sc_fresh_parse(const struct sc_ikey *ik, const uint8_t uuid[16], const void *buf, size_t len,
		   uint32_t flags, struct sc_fresh **out, size_t *valid);

/*
 * A new, empty record (no file): a random client id.  0, -ENOMEM, -EIO.
 */
int sc_fresh_new(const struct sc_ikey *ik, const uint8_t uuid[16], uint32_t flags,
		 struct sc_fresh **out);

/*
 * The bytes of a compacted state file of f (its header, then one segment
 * of every entry, the last SC_FRESH_RUNS_KEPT runs) into *buf (malloc'd),
 * *len.  0, -ENOMEM, -EIO.
 */
int sc_fresh_image(struct sc_fresh *f, uint8_t **buf, size_t *len);

/*
 * The state directory: dir when given, else $XDG_STATE_HOME/stackcrypt
 * (an absolute one), else $HOME/.local/state/stackcrypt.  0, -ENOENT (no
 * HOME), -ENAMETOOLONG.
 */
int sc_fresh_dir(const char *dir, char *out, size_t len);

/*
 * Opens the record of the volume uuid in the state directory dir
 * (sc_fresh_dir), with SC_FRESH_* flags: the directory is made (0700,
 * parents too) and the file (0600) when CREATE finds none; a torn tail is
 * cut off the file when WRITE (logged by the caller from *info); the file
 * is locked (shared, or exclusive when WRITE).  0, -ENOENT (no state file
 * and no CREATE), -EBUSY (another process holds it), sc_fresh_parse's
 * errors for a damaged file, or -errno.
 */
int sc_fresh_open(const struct sc_ikey *ik, const uint8_t uuid[16], const char *dir,
		  uint32_t flags, struct sc_fresh **out, struct sc_fresh_info *info);

/*
 * Whether the state directory dir holds a record of the volume uuid
 * (only an integrity volume's mount makes one): 1 with its path in path
 * (PATH_MAX), 0 none, -errno.
 */
int sc_fresh_held(const uint8_t uuid[16], const char *dir, char *path);

/* One line for a -errno of sc_fresh_open (or parse): what is wrong and what to do. */
const char *sc_fresh_strerror(int err);

/*
 * Whether the object (kind, id) found at gen is fresh: 0 yes (a gen newer
 * than the record, read from the store, is recorded: it is durable);
 * -ESTALE older than the record (*seen: the record's gen; flag bit 0 set),
 * -ENOENT a file this client saw deleted at gen or later (a tombstone;
 * *seen: that gen + 1), or, with SC_FRESH_ALLOW, 1: accepted, the record
 * lowered to gen (the caller logs it).
 */
int sc_fresh_check(struct sc_fresh *f, enum sc_fresh_kind kind, const uint8_t id[16],
		   uint64_t gen, uint64_t *seen);

/* This run stored (kind, id) at gen: recorded once durable (sc_fresh_synced, or a clean close). */
void sc_fresh_wrote(struct sc_fresh *f, enum sc_fresh_kind kind, const uint8_t id[16],
		    uint64_t gen);
/* What this run stored of (kind, id) is durable now (its file was fsynced). */
void sc_fresh_synced(struct sc_fresh *f, enum sc_fresh_kind kind, const uint8_t id[16]);

/*
 * The volume's crash journal was last written by run (the journal's run
 * id, found before this run replaces it): 0 when run is this client's
 * last run or none of its runs (another client's, or one it did not
 * record); -ESTALE when it is one of its earlier runs (the volume was put
 * back from an older copy; flag bit 0 set), or 1 with SC_FRESH_ALLOW.
 */
int sc_fresh_run_check(struct sc_fresh *f, const uint8_t run[SC_FRESH_RUN_LEN]);
/*
 * This client begins run (kind 5): appended and synced when f is written
 * (SC_FRESH_WRITE, with a file); kept in memory alone when f is read only
 * or has no file (sc_fresh_new).  0 or -errno.
 */
int sc_fresh_run_begin(struct sc_fresh *f, const uint8_t run[SC_FRESH_RUN_LEN]);

/* The record's gen of (kind, id), or 0. */
uint64_t sc_fresh_seen(struct sc_fresh *f, enum sc_fresh_kind kind, const uint8_t id[16]);
/* Runs recorded (kind 5), the last one into last when not NULL. */
size_t sc_fresh_runs(struct sc_fresh *f, uint8_t last[SC_FRESH_RUN_LEN]);
/* Whether a roll-back was refused (flag bit 0, as loaded or set since). */
bool sc_fresh_refused(struct sc_fresh *f);
/* Whether f was opened with SC_FRESH_ALLOW (--allow-rollback); false for NULL. */
bool sc_fresh_allows(const struct sc_fresh *f);

/*
 * Closes f.  With WRITE: synced (the whole backing was made durable:
 * every gen this run stored is recorded) adds the run's kind 4 entry
 * when clean; then the file is compacted (a temporary file, fsync,
 * rename, the directory fsynced), or, if that fails, what became durable
 * is appended.  Flag bit 0 is kept, or cleared by SC_FRESH_ALLOW.  0 or
 * -errno (the record lags: safe); f is freed either way.
 */
int sc_fresh_close(struct sc_fresh *f, bool synced, bool clean);

/*
 * A master-key rotation (stackcrypt rekey, docs/format.md 6.5) changes K_s,
 * under which the old record no longer opens.  The copy under the new key
 * fills a record without a file (sc_fresh_new under the new keys) with the
 * gens it writes and reads; once the backing is synced they are durable,
 * and sc_fresh_stage writes it whole, as the volume's staged record
 * DIR/<uuid>.state.rekey (a temporary file, fsync, rename, the directory
 * fsynced): every gen recorded, the run begun and not said clean (its
 * journal's clean mark is not synced: a DIRTY journal of this run is
 * then used, never taken for one put back).  0 or -errno.
 */
int sc_fresh_stage(struct sc_fresh *f, const char *dir);

/*
 * At the rotation's end, before the new config is written: the staged
 * record renamed over the record (1); with none staged, a record that
 * opens under ik (the new keys: promoted by a stopped run) is kept (1)
 * and any other (the old key's, of no use under the new) removed (0),
 * so the next mount here starts a record anew.  0 also when there is no
 * state directory.  -errno.
 */
int sc_fresh_promote(const struct sc_ikey *ik, const uint8_t uuid[16], const char *dir);

/* A staged record removed (a rotation started afresh).  0 or -errno. */
int sc_fresh_unstage(const uint8_t uuid[16], const char *dir);

#endif /* SC_FRESH_H */
