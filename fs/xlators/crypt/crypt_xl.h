/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crypt_xl.h - the crypt translator's constructor, for the stack builder
 * (fs/xlators/stack.c).  Everything else about the layer goes through
 * struct sc_xl_ops (include/sc_xlator.h).
 */
#ifndef SC_CRYPT_XL_H
#define SC_CRYPT_XL_H

#include <stddef.h>

struct sc_mkey;
struct sc_xl;

/*
 * Names in the backing root that the crypt layer neither shows nor lets
 * anyone make, replace or move: up to two exact names and every name that
 * starts with a prefix (any may be NULL).  For a volume, its config file,
 * its mount lock file and the volume tools' temporary copies of the
 * config.  The strings must outlive the layer.
 */
struct sc_crypt_hide {
	const char	*names[2];
	const char	*prefix;
};

/*
 * The crypt layer over below, encrypting with mk (which must outlive the
 * layer) and hiding what hide says.  Returns 0, -ENOMEM, or -EINVAL if the
 * stack is too deep or mk's block size is unusable.
 */
int sc_crypt_xl_new(struct sc_xl *below, const struct sc_mkey *mk,
		    const struct sc_crypt_hide *hide, struct sc_xl **out);

#endif /* SC_CRYPT_XL_H */
