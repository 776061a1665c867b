/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fplace.h - the places of regular files on integrity volumes (names
 * layer, fplace.c; docs/format.md 11.4): where each file the kernel holds
 * is named (its directory's nonce and its encoded name), by backing inode,
 * so that the names layer can hand the place to the data layer below
 * around the calls that read, make or move a file's header, and a rename
 * (which has no obj of the file it moves) can update it.
 */
#ifndef SC_NAMES_FPLACE_H
#define SC_NAMES_FPLACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "sc_crypto.h"
#include "sc_xlator.h"

struct sc_fplaces;

/* A place copied out for one call below (the table's may change meanwhile). */
struct sc_fplace_copy {
	struct sc_xl_place	p;
	uint8_t			nonce[SC_DIRNONCE_LEN];
	char			enc[SC_NAME_ENC_MAX + 1];
};

/* 0 or -ENOMEM. */
int sc_fplaces_new(struct sc_fplaces **out);
void sc_fplaces_free(struct sc_fplaces *t);

/*
 * This thread's lookup or create just found the regular file st at the
 * place (nonce, enc): remembered for sc_fplace_adopt, which the front end
 * calls next in the same thread for a new inode.
 */
void sc_fplace_seen(struct sc_fplaces *t, const struct stat *st, const uint8_t *nonce,
		    const char *enc, size_t enc_len);
/* A new inode: takes what this thread saw of it.  obj->priv[slot] holds it. */
void sc_fplace_adopt(struct sc_fplaces *t, struct sc_obj *obj, unsigned slot,
		     const struct stat *st);
void sc_fplace_forget(struct sc_fplaces *t, struct sc_obj *obj, unsigned slot);
/* obj's place into c (c->p ready for sc_xl_place_set).  0, or -ENOENT: none known. */
int sc_fplace_get(struct sc_fplaces *t, const struct sc_obj *obj, unsigned slot,
		  struct sc_fplace_copy *c);
/* The file of backing inode (dev, ino) is now at (nonce, enc): a rename. */
void sc_fplace_moved(struct sc_fplaces *t, dev_t dev, ino_t ino, const uint8_t *nonce,
		     const char *enc, size_t enc_len);

#endif /* SC_NAMES_FPLACE_H */
