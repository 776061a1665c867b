/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * handles_i.h - the open-handle registry (handles.c): the struct sc_fh the
 * front end hangs off fi->fh, and the list of those the kernel holds, so
 * that teardown releases what an unmount left behind.
 */
#ifndef SC_HANDLES_I_H
#define SC_HANDLES_I_H

#include <stdbool.h>

#include "fuse_i.h"

/* A new handle with open flags flags and no fd (-1), or NULL (ENOMEM).  free() it. */
struct sc_fh *sc_handle_new(int flags);

/*
 * Registers fh, open on obj (a directory if dir), before the reply that
 * hands it to the kernel.  From then on free it only after
 * sc_handle_release().
 */
void sc_handle_publish(struct sc_fuse *fs, struct sc_fh *fh, struct sc_obj *obj, bool dir);

/*
 * Takes a published fh, open on obj, off the list, releases it through the
 * stack (->releasedir for a directory, else ->release) and frees it: at
 * release, or after a reply the kernel lost.  Returns the layers' 0 or
 * -errno; fh is freed either way.
 */
int sc_handle_release(struct sc_fuse *fs, struct sc_obj *obj, struct sc_fh *fh);

/* Releases (through the stack) and frees every handle still published. */
void sc_handle_release_all(struct sc_fuse *fs);

/* How many handles (files and directories) the kernel holds open now. */
size_t sc_handle_count(struct sc_fuse *fs);

#endif /* SC_HANDLES_I_H */
