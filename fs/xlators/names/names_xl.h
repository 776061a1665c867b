/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names_xl.h - the names translator's constructor, for the stack builder
 * (fs/xlators/stack.c).  Everything else about the layer goes through
 * struct sc_xl_ops (include/sc_xlator.h); what it stores is specified in
 * docs/format.md, "Names", and how it works in docs/design.md.
 */
#ifndef SC_NAMES_XL_H
#define SC_NAMES_XL_H

#include <stdbool.h>

struct sc_fresh;
struct sc_ikey;
struct sc_mkey;
struct sc_xl;

/* sc_names_xl_new's flags. */
#define SC_NAMES_PORTABLE	1u	/* nonce records in files (SC_DIRNONCE_FILE, through below) */
#define SC_NAMES_BOUND		2u	/* every record is bound to its place: version 1 refused */
#define SC_NAMES_LINKS_BOUND	4u	/* symlink targets bound to their entry, up to 4095 bytes */
#define SC_NAMES_INTEGRITY	8u	/* hands each regular file's place to the data layer (11.4) */

/*
 * The names layer over below (normally the crypt layer), encrypting names
 * and symlink targets with the names keys derived from mk (which need not
 * outlive the call: the keys are derived here).  flags: SC_NAMES_PORTABLE,
 * directory nonces are kept in files instead of the xattr
 * SC_DIRNONCE_XATTR; SC_NAMES_BOUND, the volume has SC_FEAT_NAMES_BOUND
 * (docs/format.md 9.2); SC_NAMES_LINKS_BOUND, it has SC_FEAT_LINKS_BOUND
 * (9.5); SC_NAMES_INTEGRITY, it has SC_FEAT_INTEGRITY: each regular file's
 * place goes to the data layer below around create, open, resize and
 * rename (sc_xl_place_set; docs/format.md 11.4).  Returns 0, -ENOMEM, -EIO (key derivation), or
 * -EINVAL if below or mk is missing or the stack is too deep.  *out is
 * freed with sc_xl_free().
 */
int sc_names_xl_new(struct sc_xl *below, const struct sc_mkey *mk, unsigned int flags,
		    struct sc_xl **out);

/*
 * The volume has SC_FEAT_DIR_LISTS (docs/format.md 11.7): the names layer
 * xl, made with SC_NAMES_INTEGRITY, keeps every directory's listing record
 * under the integrity keys ik, its gens checked against fresh (NULL: no
 * roll-back check); take: a listing that differs from its record is taken
 * as found (sc_stack_spec's dir_lists_take).  Before ->init.  0, -EINVAL,
 * -ENOMEM.
 */
int sc_names_xl_lists(struct sc_xl *xl, const struct sc_ikey *ik, struct sc_fresh *fresh,
		      bool take);

#endif /* SC_NAMES_XL_H */
