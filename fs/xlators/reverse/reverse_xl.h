/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reverse_xl.h - the reverse translator's constructor, for the stack
 * builder (fs/xlators/stack.c).  What the layer shows is specified in
 * docs/format.md section 12, how it works in docs/design.md.
 */
#ifndef SC_REVERSE_XL_H
#define SC_REVERSE_XL_H

#include <stddef.h>

struct sc_mkey;
struct sc_xl;

/* What the view shows besides the tree. */
struct sc_reverse_conf {
	const char	*conf;		/* the config text, shown as SC_CONFIG_NAME in the root */
	size_t		conf_len;
	const char	*hide;		/* a root entry of the tree not shown (the config), or NULL */
};

/*
 * The reverse layer over below (posix or gluster, over the plaintext
 * tree): a read-only view of it as an aes-gcm volume with encrypted names
 * under mk (which must outlive the layer, as must rc's strings).  Returns
 * 0, -ENOMEM, -EIO (key derivation), or -EINVAL (no below, key or rc, a
 * cipher other than aes-gcm, a stack too deep).  Freed with sc_xl_free().
 */
int sc_reverse_xl_new(struct sc_xl *below, const struct sc_mkey *mk,
		      const struct sc_reverse_conf *rc, struct sc_xl **out);

#endif /* SC_REVERSE_XL_H */
