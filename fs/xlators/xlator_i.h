/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xlator_i.h - stack lifecycle helpers (fs/xlators/xlator.c), for whoever
 * holds a stack: the front end, the mount, the builder and the in-process
 * tests.
 */
#ifndef SC_XLATOR_I_H
#define SC_XLATOR_I_H

#include "sc_xlator.h"

/*
 * Calls ->init on every layer that has one, bottom to top, so a layer may
 * use the layers below it while it initialises.  Returns 0 or the first
 * layer's -errno (the layers already initialised stay so; sc_xl_stack_free
 * destroys them).
 */
int sc_xl_stack_init(struct sc_xl *top, struct sc_obj *root, struct sc_xl_conf *conf);

/* Calls ->forget on every layer that has one, top to bottom. */
void sc_xl_stack_forget(struct sc_xl *top, struct sc_obj *obj);

/* Calls ->adopt on every layer that has one, bottom to top. */
void sc_xl_stack_adopt(struct sc_xl *top, struct sc_obj *obj, const struct stat *st);

/* Frees every layer, top to bottom (each ->destroy runs before the one below). */
void sc_xl_stack_free(struct sc_xl *top);

#endif /* SC_XLATOR_I_H */
