/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * handlers_i.h - what setup (setup.c) needs of the request handlers
 * (handlers.c, which also defines sc_fuse_ops, declared in fuse_i.h): the
 * per-thread I/O buffers they read into and reply from.
 */
#ifndef SC_HANDLERS_I_H
#define SC_HANDLERS_I_H

#include "fuse_i.h"

/* Creates the key of the per-thread I/O buffers.  Returns 0 or -errno. */
int sc_handlers_bufs_init(struct sc_fuse *fs);

/*
 * Frees the calling thread's buffer (the main thread's, if it ran
 * requests: -s) and deletes the key.  A no-op if the key was never made.
 */
void sc_handlers_bufs_fini(struct sc_fuse *fs);

#endif /* SC_HANDLERS_I_H */
