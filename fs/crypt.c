/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TEMPORARY: being written. */
#include <errno.h>
#include "sc_xlator.h"
#include "sc_volume.h"
#include "sc_cmd.h"
int sc_crypt_xl_new(struct sc_xl *below, const struct sc_volume *vol, struct sc_xl **out)
{ (void)below; (void)vol; (void)out; return -ENOSYS; }
