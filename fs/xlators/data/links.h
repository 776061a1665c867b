/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * links.h - hard links of integrity volumes (private to the data layer;
 * docs/format.md 11.5): the binding records, backing symlinks beside an
 * entry that vouch for a LINKED file at that entry, read, written and
 * removed through the layer below; and the mount's memory of which
 * LINKED file each backing inode was found vouched for at a lookup, so
 * that its open, which carries no name, can accept it.
 */
#ifndef SC_DATA_LINKS_H
#define SC_DATA_LINKS_H

#include <stdbool.h>
#include <stdint.h>

#include "sc_crypto.h"
#include "sc_xlator.h"

/* A record's backing name: the long form of the entry's encoded name, then ".bind". */
#define SC_BREC_NAME_SIZE	(SC_NAME_LONG_LEN + sizeof(SC_BINDREC_SUFFIX))

/*
 * The record at the entry p of the backing directory dir: 0 with the
 * file id and gen it vouches for, -ENOENT (none), -EBADMSG (something
 * else under its name, or a record of another place or key), -errno.
 * One lookup below when there is none; a lookup and a readlink when
 * there is.
 */
int sc_brec_read(struct sc_xl *below, const struct sc_ikey *ik, struct sc_obj *dir,
		 const struct sc_dirplace *p, uint8_t id[SC_GCM_FILE_ID_LEN], uint64_t *g);

/* Makes the record (id, g) at p in dir, in place of whatever is there.  0 or -errno. */
int sc_brec_write(struct sc_xl *below, const struct sc_ikey *ik, struct sc_obj *dir,
		  const struct sc_dirplace *p, const uint8_t id[SC_GCM_FILE_ID_LEN], uint64_t g);

/* Removes the record at p in dir, if any.  0 (removed, or there was none) or -errno. */
int sc_brec_remove(struct sc_xl *below, struct sc_obj *dir, const struct sc_dirplace *p);

/*
 * Whether the backing directory dir holds any binding record: one listing
 * below (1 yes, 0 no), or -EFBIG for a directory whose listing would cost
 * more than the lookups it saves (larger than SC_BREC_SCAN_MAX bytes: its
 * names are looked for one by one), or -errno.
 */
#define SC_BREC_SCAN_MAX	(1u << 20)
int sc_brec_dir_scan(struct sc_xl *below, struct sc_obj *dir);

/*
 * Which LINKED file each backing inode was last found vouched for (by a
 * record at the name it was looked up by, or by the link that made the
 * name): one entry per inode, kept for the mount.  Thread-safe.
 */
struct sc_brec_seen;

int sc_brec_seen_new(struct sc_brec_seen **out);
void sc_brec_seen_free(struct sc_brec_seen *s);
/* 0 or -ENOMEM (then the file's opens are refused, never accepted unchecked). */
int sc_brec_seen_add(struct sc_brec_seen *s, uint64_t ino, const uint8_t id[SC_GCM_FILE_ID_LEN]);
bool sc_brec_seen_has(struct sc_brec_seen *s, uint64_t ino, const uint8_t id[SC_GCM_FILE_ID_LEN]);

#endif /* SC_DATA_LINKS_H */
