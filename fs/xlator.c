/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TEMPORARY: being written. */
#include <errno.h>
#include "sc_xlator.h"
#include "sc_volume.h"
#include "sc_cmd.h"
