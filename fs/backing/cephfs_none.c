/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cephfs_none.c - the CephFS engine of sc_backing.h in a build without
 * libcephfs: a cephfs:// backing is recognised and refused with one line,
 * so the user learns why and how to rebuild.
 */
#include <errno.h>
#include <stdio.h>

#include "cephfs_xl.h"	/* SC_CEPHFS_SCHEME, SC_CEPHFS_NOT_BUILT */
#include "backing_i.h"

static int none_open(const char *spec, const char *log, void **priv, char *err, size_t errlen)
{
	(void)log;
	(void)priv;
	snprintf(err, errlen, "%s: %s", spec, SC_CEPHFS_NOT_BUILT);
	return -EPROTONOSUPPORT;
}

/* Only open is ever called: it fails, so no backing of this engine exists. */
const struct sc_backing_ops sc_backing_cephfs_ops = {
	.name	= "cephfs",
	.scheme	= SC_CEPHFS_SCHEME,
	.open	= none_open,
};
