/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stack.c - the stack builder (see include/sc_stack.h).
 *
 * The only file that knows the concrete layers: each kind has a maker that
 * calls its constructor over the layer below, and sc_stack_new() runs
 * them bottom to top.  A new layer kind is one enum value, its name in
 * kind_name[] and one case in make_layer(); where it sits is the caller's
 * choice (sc_stack_spec_insert), so no other layer changes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sc_crypto.h"
#include "sc_iostats.h"	/* SC_IOSTATS_LABEL_MAX */
#include "sc_stack.h"
#include "xlator_i.h"
#include "cephfs_xl.h"
#include "data_xl.h"
#include "gluster_xl.h"
#include "iostats_xl.h"
#include "names_xl.h"
#include "posix_xl.h"
#include "reverse_xl.h"

int sc_stack_spec_init(struct sc_stack_spec *spec, enum sc_stack kind,
		       const struct sc_mkey *mkey, const struct sc_stack_hide *hide)
{
	memset(spec, 0, sizeof(*spec));
	switch (kind) {
	case SC_STACK_CRYPT:
		/*
		 * aes-gcm is not length-preserving: its files are the gcm
		 * layer's, and its volumes keep nothing in xattrs (portable).
		 */
		spec->portable = mkey && sc_mkey_cipher(mkey) == SC_CIPHER_AES_GCM;
		spec->layers[spec->nlayers++] = spec->portable ? SC_XL_GCM : SC_XL_CRYPT;
		break;
	case SC_STACK_PASSTHROUGH:
		break;
	case SC_STACK_REVERSE:
		spec->layers[spec->nlayers++] = SC_XL_REVERSE;
		break;
	default:
		return -EINVAL;
	}
	spec->layers[spec->nlayers++] = SC_XL_POSIX;
	spec->mkey = mkey;
	if (hide)
		spec->hide = *hide;
	return 0;
}

int sc_stack_spec_gluster(struct sc_stack_spec *spec, struct sc_gluster *g)
{
	spec->layers[spec->nlayers - 1] = SC_XL_GLUSTER;
	spec->gluster = g;
	return 0;
}

int sc_stack_spec_cephfs(struct sc_stack_spec *spec, struct sc_cephfs *c)
{
	spec->layers[spec->nlayers - 1] = SC_XL_CEPHFS;
	spec->cephfs = c;
	return 0;
}

int sc_stack_spec_insert(struct sc_stack_spec *spec, unsigned int at, enum sc_xl_kind kind)
{
	if (spec->nlayers >= SC_XL_MAX)
		return -E2BIG;
	if (at >= spec->nlayers)
		return -EINVAL;
	memmove(&spec->layers[at + 1], &spec->layers[at],
		(spec->nlayers - at) * sizeof(spec->layers[0]));
	spec->layers[at] = kind;
	spec->nlayers++;
	return 0;
}

/* As the layer's ops->name says. */
static const char *const kind_name[] = {
	[SC_XL_POSIX]	= "posix",
	[SC_XL_CRYPT]	= "crypt",
	[SC_XL_IOSTATS]	= "iostats",
	[SC_XL_NAMES]	= "names",
	[SC_XL_GCM]	= "gcm",
	[SC_XL_GLUSTER]	= "gluster",
	[SC_XL_REVERSE]	= "reverse",
	[SC_XL_CEPHFS]	= "cephfs",
};

const char *sc_stack_kind_name(enum sc_xl_kind kind)
{
	return kind_name[kind];
}

int sc_stack_boundary(const struct sc_stack_spec *spec, unsigned int i, char *buf, size_t len)
{
	int n;

	if (i + 1 >= spec->nlayers)
		return -EINVAL;
	n = snprintf(buf, len, "%s>%s", i ? kind_name[spec->layers[i - 1]] : "fuse",
		     kind_name[spec->layers[i + 1]]);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The names layer of spec over below. */
static int make_names(const struct sc_stack_spec *spec, struct sc_xl *below, struct sc_xl **out)
{
	int ret;

	/* Names are keyed from the crypt layer's master key: none, no layer. */
	if (!below || !spec->mkey || (spec->dir_lists && !spec->ikey))
		return -EINVAL;
	ret = sc_names_xl_new(below, spec->mkey,
			      (spec->portable ? SC_NAMES_PORTABLE : 0) |
			      (spec->names_bound ? SC_NAMES_BOUND : 0) |
			      (spec->links_bound ? SC_NAMES_LINKS_BOUND : 0) |
			      (spec->ikey ? SC_NAMES_INTEGRITY : 0), out);
	if (ret == 0 && spec->dir_lists) {
		ret = sc_names_xl_lists(*out, spec->ikey, spec->fresh, spec->dir_lists_take);
		if (ret < 0)
			sc_xl_free(*out);
	}
	return ret;
}

/* The layer at position i of spec (top = 0) over below. */
static int make_layer(const struct sc_stack_spec *spec, unsigned int i,
		      struct sc_xl *below, struct sc_xl **out)
{
	switch (spec->layers[i]) {
	case SC_XL_POSIX:
		return below ? -EINVAL : sc_posix_xl_new(out);
	case SC_XL_GLUSTER:
		return below || !spec->gluster ? -EINVAL : sc_gluster_xl_new(spec->gluster, out);
	case SC_XL_CEPHFS:
		return below || !spec->cephfs ? -EINVAL : sc_cephfs_xl_new(spec->cephfs, out);
	case SC_XL_CRYPT:
		return below ? sc_crypt_xl_new(below, spec->mkey, &spec->hide, out) : -EINVAL;
	case SC_XL_GCM:
		if (!below)
			return -EINVAL;
		return spec->ikey ? sc_gcm_integ_xl_new(below, spec->mkey, spec->ikey, spec->fresh,
							&spec->hide, out) :
		       sc_gcm_xl_new(below, spec->mkey, &spec->hide, out);
	case SC_XL_IOSTATS: {
		char where[SC_IOSTATS_LABEL_MAX];
		int ret;

		if (!below)
			return -EINVAL;
		ret = sc_stack_boundary(spec, i, where, sizeof(where));
		return ret < 0 ? ret : sc_iostats_xl_new(below, where, out);
	}
	case SC_XL_NAMES:
		return make_names(spec, below, out);
	case SC_XL_REVERSE: {
		struct sc_reverse_conf rc = { spec->rev_conf, spec->rev_conf_len, spec->rev_hide };

		return below && spec->mkey && spec->rev_conf ?
		       sc_reverse_xl_new(below, spec->mkey, &rc, out) : -EINVAL;
	}
	}
	return -EINVAL;
}

int sc_stack_new(const struct sc_stack_spec *spec, struct sc_xl **top)
{
	struct sc_xl *xl = NULL, *up;
	unsigned int i;
	int ret;

	if (spec->nlayers == 0 || spec->nlayers > SC_XL_MAX)
		return -EINVAL;
	for (i = spec->nlayers; i-- > 0; ) {
		ret = make_layer(spec, i, xl, &up);
		if (ret < 0)
			goto err_free_stack;
		xl = up;
	}
	*top = xl;
	return 0;

err_free_stack:
	sc_xl_stack_free(xl);
	return ret;
}
