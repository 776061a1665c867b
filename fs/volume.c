/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TEMPORARY: being written. */
#include <errno.h>
#include "sc_xlator.h"
#include "sc_volume.h"
#include "sc_cmd.h"
int sc_volume_open(const char *backing, const struct sc_secret_src *src,
		   struct sc_volume **out, char *err, size_t errlen)
{ (void)backing; (void)src; (void)out; (void)err; (void)errlen; return -ENOSYS; }
void sc_volume_close(struct sc_volume *vol) { (void)vol; }
