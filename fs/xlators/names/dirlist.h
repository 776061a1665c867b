/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dirlist.h - directories' listing records on integrity volumes with
 * SC_FEAT_DIR_LISTS (names layer, dirlist.c; docs/format.md 11.7): the
 * count and digest of each directory's entries, kept current by every
 * call of the names layer that adds or removes one, and checked against
 * every full listing.
 */
#ifndef SC_NAMES_DIRLIST_H
#define SC_NAMES_DIRLIST_H

#include <stdbool.h>
#include <stdint.h>

#include "sc_crypto.h"
#include "sc_fresh.h"
#include "sc_xlator.h"

struct sc_dlists;
struct dl_ent;

/*
 * The records of the directories the names layer xl (whose ->below reads
 * and writes them) has used, keyed under ik, their gens checked against
 * and recorded in fresh (NULL: none); take: a listing that differs from
 * its record is taken as found.  0 or -ENOMEM.
 */
int sc_dlists_new(struct sc_xl *xl, const struct sc_ikey *ik, struct sc_fresh *fresh,
		  bool take, struct sc_dlists **out);
/* Writes nothing (every change was written when made); lets every file go. */
void sc_dlists_free(struct sc_dlists *t);

/* A change of one directory's entries, from sc_dl_begin to sc_dl_end. */
struct sc_dl_change {
	struct dl_ent	*e;		/* NULL: nothing to do */
	uint64_t	count;		/* the state the change leads to */
	uint8_t		digest[SC_INTEG_TAG_LEN];
};

/*
 * Before a call that adds the backing name add to dir (nonce) or removes
 * rm from it, or both (a rename within it; either may be NULL): the
 * directory's record rewritten with the state after the call and the
 * change pending, so that a kill at any point leaves a record that either
 * state matches (the pending name's existence tells which).  Takes the
 * directory's lock until sc_dl_end.  0, -EIO (its record is unusable,
 * logged once), or -errno of writing it (the call must not be made).
 */
int sc_dl_begin(struct sc_dlists *t, struct sc_obj *dir, const uint8_t *nonce,
		const char *add, const char *rm, struct sc_dl_change *c);
/* After the call (done: it changed the entries as announced; else it changed nothing). */
void sc_dl_end(struct sc_dlists *t, struct sc_obj *dir, struct sc_dl_change *c, bool done);

/* The directory of nonce was removed (its record with it): forgotten. */
void sc_dl_gone(struct sc_dlists *t, const uint8_t *nonce);

/* fsyncdir: dir's record made durable first (its gen then recorded).  0 or -errno. */
int sc_dl_sync(struct sc_dlists *t, struct sc_obj *dir, const uint8_t *nonce);

/* A full listing of one directory handle, from offset 0 (names_readdir). */
struct sc_dl_listing {
	uint64_t	epoch;		/* the record's change mark at offset 0; 0: not checked */
	uint64_t	count;
	uint8_t		digest[SC_INTEG_TAG_LEN];
	off_t		next;		/* the offset the next call must start at */
	uintptr_t	seen;		/* names_readdir's count of short names decoded */
	int		err;		/* -EIO: the listing ended in a mismatch, until offset 0 */
};

/*
 * A listing of dir begins at offset 0: its record loaded (0), or -EIO
 * (unusable, logged once: the listing is refused), or -errno.
 */
int sc_dl_listing_begin(struct sc_dlists *t, struct sc_obj *dir, const uint8_t *nonce,
			struct sc_dl_listing *l);
/* The backing name (len bytes) of an entry that listing handed up. */
void sc_dl_listing_add(struct sc_dlists *t, const uint8_t *nonce, struct sc_dl_listing *l,
		       const char *name, size_t len);
/*
 * The listing reached the end: 0 when it matches the record, or when this
 * mount changed the directory meanwhile (nothing to compare); -EIO,
 * logged once per directory, when entries differ (kept in l->err: the
 * front end may send the entries of that call and the error with the next).
 */
int sc_dl_listing_end(struct sc_dlists *t, struct sc_obj *dir, const uint8_t *nonce,
		      struct sc_dl_listing *l);

#endif /* SC_NAMES_DIRLIST_H */
