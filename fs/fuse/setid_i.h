/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * setid_i.h - the set-id policy (setid.c): dropping suid/sgid when the
 * kernel flags a request with FUSE_HANDLE_KILLPRIV_V2 (see wire.c).
 */
#ifndef SC_SETID_I_H
#define SC_SETID_I_H

#include "fuse_i.h"
#include "wire_i.h"

/*
 * If rq says the kernel asked for it and obj is a regular file, clears
 * rq->kill_suidgid and drops obj's set-id bits through the stack by the
 * kernel's rule, then invalidates the kernel's cached attributes of ino.
 * Failures are logged, never replied: the request itself goes on.
 */
void sc_setid_drop(fuse_req_t req, struct sc_fuse *fs, struct sc_wire_req *rq,
		   fuse_ino_t ino, struct sc_obj *obj, struct sc_fh *fh);

#endif /* SC_SETID_I_H */
