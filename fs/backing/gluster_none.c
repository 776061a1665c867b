/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gluster_none.c - the GlusterFS engine of sc_backing.h in a build without
 * libgfapi (libglusterfs-dev missing and tests off): a gluster:// backing
 * is recognised and refused with one line, so the user learns why.
 */
#include <errno.h>
#include <stdio.h>

#include "gluster_xl.h"	/* SC_GLUSTER_SCHEME */
#include "backing_i.h"

static int none_open(const char *spec, const char *log, void **priv, char *err, size_t errlen)
{
	(void)log;
	(void)priv;
	snprintf(err, errlen, "%s: this stackcrypt was built without GlusterFS support "
		 "(libgfapi: install libglusterfs-dev and rebuild)", spec);
	return -EPROTONOSUPPORT;
}

/* Only open is ever called: it fails, so no backing of this engine exists. */
const struct sc_backing_ops sc_backing_gluster_ops = {
	.name	= "gluster",
	.scheme	= SC_GLUSTER_SCHEME,
	.open	= none_open,
};
