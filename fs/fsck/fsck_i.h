/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck_i.h - what the parts of "stackcrypt fsck" share: fsck.c (the
 * command, the file checks and the repairs), fsck_names.c (the checks of
 * encrypted names) and report.c (what both use).  Both report through
 * sc_fsck_problem, so every problem is one line "BACKING/PATH: reason" on
 * stdout, counted in the summary and acted on by --repair as its flags
 * say.  Every backing file is read through sc_backing.h.  Private to
 * fs/fsck/.
 */
#ifndef SC_FSCK_I_H
#define SC_FSCK_I_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "sc_crypto.h"
#include "sc_volume.h"

#define QUARANTINE_TAG	".stackcrypt-quarantine-"
#define REKEY_TAG	".stackcrypt-rekey-"	/* + 32 hex digits: a re-key's new file */

static const char cmd[] = "fsck";	/* sc_cli_err's CMD */

struct bad_file {
	char	*rel;
	bool	quarantine;	/* the file's contents are at fault: --repair moves it */
	bool	nohdr;		/* a regular file with data and no header */
	bool	leftover;	/* a leftover file (re-key, orphan side file): --repair removes it */
	bool	tmpdir;		/* a directory an interrupted mkdir left: --repair removes it if empty */
	bool	name;		/* a problem of names (fsck_names.c) */
	bool	shared_id;	/* an aes-gcm file id of two inodes: --repair leaves it */
	/*
	 * A symlink bound to another entry that --repair rebinds (fsck_names.c):
	 * the backing target it gets (its bound stored target, or a long one's
	 * marker), put in place by a new symlink renamed over it; first, if
	 * set, a long target's new side file renamed over its side file (rel
	 * paths of both).  Freed with rel.
	 */
	char	*relink;
	char	*lside_new, *lside;
};

/* A directory with a listing record and its nonce (fsck_lists.c). */
struct fsck_ldir {
	char	*rel;
	uint8_t	nonce[SC_DIRNONCE_LEN];
};

/* A regular file of a volume with encrypted names and its path in the mount. */
struct plain_path {
	char	*rel;		/* from BACKING */
	char	*plain;		/* in the mount, escaped for a message */
	/* its place (integrity volumes check files against it, format.md 11.4) */
	uint8_t	nonce[SC_DIRNONCE_LEN];
	char	*enc;		/* NULL: not known */
};

/*
 * A file whose header verified: what the shared-nonce check compares.  No
 * path while the walk runs (millions of files): shared_keys looks up the
 * paths of the files of a shared nonce only.
 */
struct keyed_file {
	uint8_t		nonce[SC_HDR_NONCE_LEN];
	dev_t		dev;
	ino_t		ino;
	nlink_t		nlink;
	char		*rel;		/* NULL but in a group that shares a nonce */
	bool		bad;		/* reported by checks 3-5: left to quarantine */
	bool		rekey;		/* first path of an inode that --repair re-keys */
};

struct sc_jrnl;
struct sc_backing;
struct sc_fresh;
struct fsck;

/* A file of the walk open for the crash journal's I/O (fsck.c, fd_io). */
struct fsck_fd {
	struct fsck	*f;
	int		fd;		/* a file of f->b (sc_backing_open_file) */
};

struct fsck {
	const char		*backing;
	struct sc_backing	*b;		/* where the files are: a directory, gluster:// */
	struct sc_volume	*vol;
	bool			repair, progress, verbose;
	uint32_t		bs;
	uint8_t			*buf;		/* CHUNK + bs */
	uint8_t			*gbuf;		/* aes-gcm: CHUNK, the units opened */
	uint64_t		holes;		/* aes-gcm: all-zero whole units seen */
	uint8_t			*rk_plain, *rk_out, *rk_check;	/* re-key buffers, CHUNK + bs */
	uint64_t		files, dirs, quarantined;
	uint64_t		bytes;		/* plaintext bytes of the files that checked whole */
	uint64_t		read;		/* stored bytes read (the progress line) */
	uint64_t		damaged, damaged_bytes;	/* files with a problem, their stored bytes */
	uint64_t		with_data, no_header;	/* for the lost-xattrs hint */
	struct bad_file		*bad;
	size_t			nbad, capbad;
	struct keyed_file	*keyed;
	size_t			nkeyed, capkeyed;
	bool			progress_shown;
	struct timespec		last;
	struct plain_path	*plain;		/* encrypted names: file -> mount path */
	size_t			nplain, capplain;
	bool			plain_sorted;	/* complete: sc_fsck_plain_path answers */
	struct sc_jrnl		*jr;		/* aes-gcm: the crash journal, if any */
	struct fsck_fd		jfd;		/* the journal's file; fd -1: none */
	uint64_t		torn;		/* aes-gcm: torn units the journal repairs */
	uint64_t		pinned;		/* integrity: files being written when the mount stopped */
	uint64_t		unborn;		/* integrity: files whose create the stop cut short */
	uint64_t		renamed;	/* integrity: files whose rename the stop cut short */
	bool			jbad;		/* aes-gcm: sc.journal fails its MAC (reported) */
	uint8_t			(*jseen)[SC_GCM_FILE_ID_LEN];	/* files the journal names, found */
	size_t			njseen;
	/* integrity: this client's freshness record (format.md 11.9), or NULL */
	struct sc_fresh		*fresh;
	const char		*state_dir;	/* --state-dir */
	bool			allow_rollback;	/* --allow-rollback */
	bool			accept_unclean;	/* --accept-unclean (with --repair) */
	uint64_t		unclean;	/* integrity: sizes an unclean stop may have left */
	uint64_t		taken;		/* ... and --accept-unclean took as found */
	struct fsck_ldir	*ldirs;		/* SC_FEAT_DIR_LISTS: directories checked */
	size_t			nldirs, capldirs;
};

/*
 * Reports one problem (stdout, "BACKING/REL: reason") and remembers rel
 * with no repair flag but quarantine set (the caller sets the others on
 * f->bad[f->nbad - 1]).  0 or -ENOMEM.
 */
int sc_fsck_problem(struct fsck *f, const char *rel, bool quarantine, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * A note on the file rel that is no problem (what the next mount, or
 * --repair, accepts): one line "BACKING/REL (in the mount: PATH): ...".
 */
void sc_fsck_note(struct fsck *f, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The progress line on stderr (with --progress on a terminal; at most
 * four times a second), and its end before anything else is printed.
 */
void sc_fsck_progress(struct fsck *f);
void sc_fsck_progress_end(struct fsck *f);

/*
 * Checks every name of a volume with SC_FEAT_NAMES (fsck_names.c): each
 * directory's nonce record, each entry's name by its kind, each symlink's
 * target.  Problems go through sc_fsck_problem.  0, or -errno when the
 * check cannot go on (no memory, the names keys).
 */
int sc_fsck_names(struct fsck *f);

/*
 * Room for element n of arr, an array of *cap elements of elem bytes:
 * arr itself while n < *cap, else arr grown (doubled; first elements the
 * first time) with *cap updated, or NULL (-ENOMEM: arr is left as it was).
 */
void *sc_fsck_room(void *arr, size_t *cap, size_t n, size_t elem, size_t first);

/*
 * The path in the mount of the regular file rel, once sc_fsck_names has
 * walked the whole tree (NULL before, on a volume without encrypted names,
 * or where a name above rel does not decrypt).  plain_add remembers one
 * (0 or -ENOMEM), plain_sort makes them answer, plain_free forgets them.
 */
int sc_fsck_plain_add(struct fsck *f, const char *rel, const char *plain,
		      const struct sc_dirplace *at);
void sc_fsck_plain_sort(struct fsck *f);
const char *sc_fsck_plain_path(const struct fsck *f, const char *rel);
/* The same entry with its place (at->enc set), or NULL. */
const struct plain_path *sc_fsck_plain_entry(const struct fsck *f, const char *rel);
void sc_fsck_plain_free(struct fsck *f);

/*
 * Volumes with SC_FEAT_DIR_LISTS (fsck_lists.c, docs/format.md 11.7): the
 * listing record of the directory rel, whose nonce the names walk read
 * (where: " (in the mount: PATH)" or ""), checked against its entries;
 * --repair --accept-unclean takes what it finds after an unclean stop.
 * 0 or -errno (problems are reported, not returned).
 */
int sc_fsck_list_check(struct fsck *f, const struct sc_nkey *nk, const char *rel,
		       const uint8_t *nonce, const char *where);
/* --repair moved the file file_rel out of its directory's listing: its record follows. */
int sc_fsck_list_refresh(struct fsck *f, const char *file_rel);
void sc_fsck_lists_free(struct fsck *f);

#endif /* SC_FSCK_I_H */
