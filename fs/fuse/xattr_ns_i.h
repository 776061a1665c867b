/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xattr_ns_i.h - which xattr namespaces the mount serves (xattr_ns.c):
 * user.* and trusted.* only (less XFS's names of the POSIX ACLs,
 * trusted.SGI_ACL_FILE and trusted.SGI_ACL_DEFAULT).  The handlers answer every other name
 * (security.*, system.* with the POSIX ACLs, unknown prefixes) with
 * EOPNOTSUPP before the stack is called, and leave such names out of
 * every list.  Why: docs/usage.md ("Extended attributes and ACLs").
 */
#ifndef SC_XATTR_NS_I_H
#define SC_XATTR_NS_I_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sc_xlator.h"

/* Whether the mount serves the xattr name (its namespace prefix). */
bool sc_xattr_ns_served(const char *name);

/*
 * listxattr of obj through top as the mount shows it: only served names.
 * The whole list is fetched from top (sc_xl_listxattr_all, into small
 * first) and filtered in place, so a size query (size 0) answers the
 * length of the filtered list.  Returns that length with *list pointing
 * at it, -ERANGE when size is not 0 and the filtered list is longer than
 * size, or another -errno.  *list is small or a buffer the caller frees,
 * whatever the return.
 */
ssize_t sc_xattr_ns_list(struct sc_xl *top, struct sc_obj *obj, char *small,
			 size_t small_size, char **list, size_t size);

#endif /* SC_XATTR_NS_I_H */
