/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * data_xl.h - the data layer's constructors, for the stack builder
 * (fs/xlators/stack.c): one data engine (engine.c) under either contents
 * format, the length-preserving one (null, aes-xts, aes-cbc: fmt_lp.c) or
 * the authenticated one (aes-gcm: fmt_gcm.c).  Everything else about the
 * layer goes through struct sc_xl_ops (include/sc_xlator.h).
 */
#ifndef SC_DATA_XL_H
#define SC_DATA_XL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sc_stack.h"	/* struct sc_stack_hide: the names the layer hides (copied) */

struct sc_mkey;
struct sc_xl;

/*
 * The data layer over below in the length-preserving format, encrypting
 * with mk (which must outlive the layer) and hiding what hide says.
 * Returns 0, -ENOMEM, or -EINVAL if the stack is too deep, mk's block size
 * is unusable or mk is an aes-gcm key.
 */
int sc_crypt_xl_new(struct sc_xl *below, const struct sc_mkey *mk,
		    const struct sc_stack_hide *hide, struct sc_xl **out);

/*
 * The data layer over below in the authenticated format (docs/format.md
 * section 10) with mk, an aes-gcm master key that must outlive the layer,
 * hiding what hide says.  Returns 0, -ENOMEM, or -EINVAL if the stack is
 * too deep, mk is not an aes-gcm key or its block size is unusable.
 */
int sc_gcm_xl_new(struct sc_xl *below, const struct sc_mkey *mk,
		  const struct sc_stack_hide *hide, struct sc_xl **out);

/*
 * The same on an integrity volume (docs/format.md section 11, served in
 * part: version 2 headers bound to their entry with their size), with ik,
 * the volume's integrity keys, which must outlive the layer.  The layer
 * above sets each entry's place (sc_xl_place_set) around create, open,
 * setattr and rename.  fresh: this client's freshness record (format.md
 * 11.9), checked at each file's first open and told the gens the layer
 * stores, or NULL.  Returns 0, -ENOMEM or -EINVAL (as above, or no ik).
 */
struct sc_ikey;
struct sc_fresh;
int sc_gcm_integ_xl_new(struct sc_xl *below, const struct sc_mkey *mk, const struct sc_ikey *ik,
			struct sc_fresh *fresh, const struct sc_stack_hide *hide,
			struct sc_xl **out);

/*
 * Test hooks of the authenticated format (tests/crypt/test_gcm_tear.c);
 * NULL and false in production.  sc_gcm_test_tear: called before each
 * in-place write of units (backing offset off, len bytes) with the journal
 * record already written; a return below len makes that write store only
 * that many bytes and the layer act as a daemon killed at that instant
 * (nothing more is written, destroy leaves the journal as a kill -9
 * would).  sc_gcm_test_crashed: destroy behaves as after a kill -9 (the
 * journal stays DIRTY).
 */
extern size_t (*sc_gcm_test_tear)(uint64_t off, size_t len);
extern bool sc_gcm_test_crashed;

#endif /* SC_DATA_XL_H */
