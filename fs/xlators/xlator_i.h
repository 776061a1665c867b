/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xlator_i.h - stack lifecycle helpers (fs/xlators/xlator.c) for the front
 * end and the in-process tests (the start and the end of a stack are in
 * include/sc_stack.h, with the builder); and, for the layers themselves, the escaping of a layer's
 * reserved extended attribute names (the crypt and names layers).  A layer
 * holding a temporary object of the layers below it (one that never
 * enters the front end's table) adopts and forgets it through the same
 * lifecycle calls, from the layer below it down.
 */
#ifndef SC_XLATOR_I_H
#define SC_XLATOR_I_H

#include <linux/limits.h>	/* XATTR_NAME_MAX */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sc_xlator.h"

/* Calls ->forget on every layer that has one, top to bottom. */
void sc_xl_stack_forget(struct sc_xl *top, struct sc_obj *obj);

/* Calls ->adopt on every layer that has one, bottom to top. */
void sc_xl_stack_adopt(struct sc_xl *top, struct sc_obj *obj, const struct stat *st);

/*
 * Reserved extended attribute names (docs/format.md, "Extended attribute
 * names"), for a layer that keeps data of its own in an attribute R of
 * the objects below it (the crypt layer its file header, the names layer
 * a directory's nonce).  R is the layer's, and so is every R + "!" + s
 * with s neither empty nor starting with "!".  Names from above that
 * would land on them are escaped on the way down:
 *
 *   from above  R, R!s        stored as  R!, R!!s   (one "!" inserted after R)
 *   any other name            stored unchanged
 *
 * and on the way up R!s is shown as R + s when s is empty or starts with
 * "!", R and the layer's other reserved names are never shown, and every
 * other name is shown unchanged.  The two maps are inverse, so every name
 * from above is stored under exactly one name below and none of them is
 * a name of the layer: nothing from above reaches its data.
 *
 * The four forwarders below are the layer's xattr operations with that
 * map applied: each calls the same operation on the layer below xl.  They
 * return what the layer below returns (listxattr: the length of the list
 * as shown, -ERANGE when it does not fit in size, -ENOMEM).
 */
#define SC_XNAME_ESC_SIZE	(XATTR_NAME_MAX + 2)	/* an escaped name and its NUL */

/* The name below for name from above: name itself, or its escaped form in esc. */
const char *sc_xname_down(const char *reserved, const char *name, char esc[SC_XNAME_ESC_SIZE]);
ssize_t sc_xl_getxattr_esc(struct sc_xl *xl, const char *reserved, struct sc_obj *obj,
			   const char *name, void *buf, size_t size);
ssize_t sc_xl_listxattr_esc(struct sc_xl *xl, const char *reserved, struct sc_obj *obj,
			    char *buf, size_t size);
int sc_xl_setxattr_esc(struct sc_xl *xl, const char *reserved, struct sc_obj *obj,
		       const char *name, const void *value, size_t size, int flags);
int sc_xl_removexattr_esc(struct sc_xl *xl, const char *reserved, struct sc_obj *obj,
			  const char *name);

/*
 * The whole list of obj's xattr names as xl itself answers it, for a
 * caller that shows only some of them: it must fetch all to know the
 * length of what it shows.  Into small (small_size bytes) when it fits,
 * else into a buffer sized by a query and fetched again (a bounded number
 * of times if the list grew in between).  Returns the length and sets
 * *list to small or to a malloc'd buffer the caller frees (when *list !=
 * small), or -errno (-ERANGE if it kept growing, -ENOMEM) with *list ==
 * small.  SC_XL_LIST_ON_STACK holds the lists of nearly every file.
 */
#define SC_XL_LIST_ON_STACK	2048
ssize_t sc_xl_listxattr_all(struct sc_xl *xl, struct sc_obj *obj, char *small,
			    size_t small_size, char **list);

#endif /* SC_XLATOR_I_H */
