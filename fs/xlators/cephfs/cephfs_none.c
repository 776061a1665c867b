/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cephfs_none.c - cephfs_xl.h for a build without libcephfs
 * (-Dcephfs=disabled, or auto without libcephfs-dev): a cephfs:// backing
 * is recognised and refused with one line that says how to rebuild.
 */
#include <errno.h>
#include <stdio.h>

#include "cephfs_xl.h"

int sc_cephfs_connect(const char *url, const char *log, struct sc_cephfs **out, char *err,
		      size_t errlen)
{
	(void)log;
	(void)out;
	snprintf(err, errlen, "%s: %s", url, SC_CEPHFS_NOT_BUILT);
	return -EPROTONOSUPPORT;
}

/* No connection exists in this build: the rest is never reached. */
void sc_cephfs_disconnect(struct sc_cephfs *c)
{
	(void)c;
}

int sc_cephfs_xl_new(struct sc_cephfs *c, struct sc_xl **out)
{
	(void)c;
	(void)out;
	return -EPROTONOSUPPORT;
}
