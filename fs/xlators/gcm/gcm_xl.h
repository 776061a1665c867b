/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gcm_xl.h - the gcm translator's constructor, for the stack builder
 * (fs/xlators/stack.c).  Everything else about the layer goes through
 * struct sc_xl_ops (include/sc_xlator.h).
 */
#ifndef SC_GCM_XL_H
#define SC_GCM_XL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sc_crypt_hide;
struct sc_mkey;
struct sc_xl;

/*
 * The gcm layer over below: the authenticated format (docs/format.md
 * section 10) with mk, an aes-gcm master key that must outlive the layer,
 * hiding what hide says (as the crypt layer does).  Returns 0, -ENOMEM, or
 * -EINVAL if the stack is too deep, mk is not an aes-gcm key or its block
 * size is unusable.
 */
int sc_gcm_xl_new(struct sc_xl *below, const struct sc_mkey *mk,
		  const struct sc_crypt_hide *hide, struct sc_xl **out);

/*
 * Test hooks (tests/crypt/test_gcm_xl.c); NULL and false in production.
 * sc_gcm_test_tear: called before each in-place write of units (backing
 * offset off, len bytes) with the journal record already written; a
 * return below len makes that write store only that many bytes and the
 * layer act as a daemon killed at that instant (nothing more is written,
 * destroy leaves the journal as a kill -9 would).  sc_gcm_test_crashed:
 * destroy behaves as after a kill -9 (the journal stays DIRTY).
 */
extern size_t (*sc_gcm_test_tear)(uint64_t off, size_t len);
extern bool sc_gcm_test_crashed;

#endif /* SC_GCM_XL_H */
