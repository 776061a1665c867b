/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * idle_i.h - the watcher of -o idle (idle.c), private to fs/fuse/: started
 * once the session is mounted, stopped before it is unmounted.
 */
#ifndef SC_IDLE_I_H
#define SC_IDLE_I_H

#include "fuse_i.h"

/*
 * Starts the watcher of fs->idle seconds (nothing when it is 0) for the
 * mount at mountpoint.  Returns 0 or -errno.
 */
int sc_idle_start(struct sc_fuse *fs, const char *mountpoint);

/* Stops and frees the watcher, if one runs (waits for an unmount it is doing). */
void sc_idle_stop(struct sc_fuse *fs);

#endif /* SC_IDLE_I_H */
