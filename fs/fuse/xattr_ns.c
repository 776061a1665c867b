/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xattr_ns.c - the xattr namespace policy of the front end: the mount
 * serves user.* and trusted.*, nothing else.
 *
 * Why not pass every name through: the kernel enforces no ACL of a FUSE
 * daemon that does not negotiate FUSE_POSIX_ACL (and default_permissions
 * checks the mode bits only), so a system.posix_acl_access stored on the
 * backing file would look set and protect nobody; security.* names
 * (selinux labels, file capabilities) would land as real labels on the
 * ciphertext backing files.  Refusing them with EOPNOTSUPP is what ext4
 * answers for a namespace it does not support, so tools treat the mount
 * as such a filesystem (coreutils ls stops asking per file for the
 * device), and never ENOSYS, which would make the kernel refuse every
 * xattr call, user.* included.
 *
 * The filter sits above the stack, so it holds for every bottom (posix,
 * gluster) and composes with the layers' escape of their reserved names
 * (xlator_i.h): those are user.* names, and an escaped name keeps its
 * prefix.  Of trusted.*, XFS's names of the POSIX ACLs are not served
 * (below).  Names already stored on a backing file by an older version
 * stay there, unserved.
 */
#include <errno.h>
#include <string.h>

#include "xattr_ns_i.h"
#include "xlator_i.h"

#define TRUSTED_NS	"trusted."

/*
 * XFS keeps a file's POSIX ACLs in its trusted namespace under these
 * names and shows them to root as trusted.* names (setting one sets the
 * ACL): on an XFS backing they are system.posix_acl_* by another name.
 */
static const char *const xfs_acl_names[] = {
	TRUSTED_NS "SGI_ACL_FILE", TRUSTED_NS "SGI_ACL_DEFAULT",
};

bool sc_xattr_ns_served(const char *name)
{
	if (strncmp(name, "user.", 5) == 0)
		return true;
	if (strncmp(name, TRUSTED_NS, sizeof(TRUSTED_NS) - 1) != 0)
		return false;
	for (size_t i = 0; i < sizeof(xfs_acl_names) / sizeof(xfs_acl_names[0]); i++)
		if (strcmp(name, xfs_acl_names[i]) == 0)
			return false;
	return true;
}

ssize_t sc_xattr_ns_list(struct sc_xl *top, struct sc_obj *obj, char *small,
			 size_t small_size, char **list, size_t size)
{
	ssize_t n = sc_xl_listxattr_all(top, obj, small, small_size, list);
	size_t out = 0;

	if (n < 0)
		return n;
	/* In place: a kept name moves down over the dropped ones before it. */
	for (size_t i = 0; i < (size_t)n; ) {
		size_t len = strnlen(*list + i, (size_t)n - i) + 1;

		if (len > (size_t)n - i)
			break;	/* an unterminated tail is no name */
		if (sc_xattr_ns_served(*list + i)) {
			memmove(*list + out, *list + i, len);
			out += len;
		}
		i += len;
	}
	if (size && out > size)
		return -ERANGE;
	return (ssize_t)out;
}
