/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gluster_none.c - gluster_xl.h for a build without libgfapi
 * (libglusterfs-dev missing and tests off): a gluster:// backing is
 * recognised and refused with one line, so the user learns why.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gluster_xl.h"

bool sc_gluster_is_url(const char *s)
{
	return s && !strncmp(s, SC_GLUSTER_SCHEME, sizeof(SC_GLUSTER_SCHEME) - 1);
}

int sc_gluster_connect(const char *url, const char *logfile, struct sc_gluster **out,
		       char *err, size_t errlen)
{
	(void)logfile;
	(void)out;
	snprintf(err, errlen, "%s: this stackcrypt was built without GlusterFS support "
		 "(libgfapi: install libglusterfs-dev and rebuild)", url);
	return -EPROTONOSUPPORT;
}

void sc_gluster_disconnect(struct sc_gluster *g)
{
	(void)g;
}

int sc_gluster_root(struct sc_gluster *g, struct stat *st)
{
	(void)g;
	(void)st;
	return -EPROTONOSUPPORT;
}

int sc_gluster_lock(struct sc_gluster *g, const char *name)
{
	(void)g;
	(void)name;
	return -EPROTONOSUPPORT;
}

int sc_gluster_lock_config(struct sc_gluster *g, const char *name)
{
	(void)g;
	(void)name;
	return -EPROTONOSUPPORT;
}

int sc_gluster_xl_new(struct sc_gluster *g, struct sc_xl **out)
{
	(void)g;
	(void)out;
	return -EPROTONOSUPPORT;
}
