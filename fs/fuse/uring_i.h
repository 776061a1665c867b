/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uring_i.h - FUSE over io_uring (uring.c, -o io_uring): a second transport
 * beside /dev/fuse, one queue and one thread per possible CPU.  Requests
 * from the rings go through libfuse's fuse_session_process_buf like those
 * read from /dev/fuse, so the handlers do not know which transport a
 * request came by; the write hook (wire.c) sends the reply of a ring
 * request back through its entry (sc_uring_commit).
 */
#ifndef SC_URING_I_H
#define SC_URING_I_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

struct sc_fuse;
struct sc_uring_ent;

/*
 * Sets up the queues (rings, buffers, threads waiting for sc_uring_run)
 * over the session's /dev/fuse fd, before the INIT reply that will carry
 * FUSE_OVER_IO_URING; payload_sz is the largest request or reply argument
 * the kernel may send (from that reply).  Returns 0, or -errno with
 * nothing left (the reply must then not ask for io_uring).
 */
int sc_uring_prepare(struct sc_fuse *fs, size_t payload_sz);

/*
 * Releases the queue threads once the kernel has the INIT reply (go), or
 * lets them end when it could not be sent.  No-op without rings.
 */
void sc_uring_run(struct sc_fuse *fs, bool go);

/*
 * Stops the queue threads and closes their rings: after the session loop
 * and fuse_session_unmount, before fuse_session_destroy.  No-op without
 * rings.
 */
void sc_uring_stop(struct sc_fuse *fs);

/* Frees the entries' buffers: after fuse_session_destroy.  No-op without. */
void sc_uring_free(struct sc_fuse *fs);

/*
 * Sends the reply in iov (a fuse_out_header, then its arguments) of the
 * request that came in ent; the commit goes to the kernel with the fetch
 * of the entry's next request.  Returns the reply's length, or -1 with
 * errno set (as writev(2), for libfuse).
 */
ssize_t sc_uring_commit(struct sc_uring_ent *ent, const struct iovec *iov, int count);

#endif /* SC_URING_I_H */
