/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * creds_i.h - the caller's credentials (creds.c): taking them on for the
 * requests that create objects, and asking whether the caller is in a group.
 */
#ifndef SC_CREDS_I_H
#define SC_CREDS_I_H

#include <stdbool.h>
#include <sys/types.h>

#include "fuse_i.h"

#define SC_MAX_GROUPS	64	/* supplementary groups carried into creates */

/*
 * Records the daemon's own credentials in fs (fs->switch_creds, and the
 * supplementary groups sc_creds_leave() restores).  Returns 0 or -errno;
 * on error fs->groups may be allocated: sc_creds_fini() frees it.
 */
int sc_creds_init(struct sc_fuse *fs);
void sc_creds_fini(struct sc_fuse *fs);

/*
 * Switches this thread's filesystem uid/gid and groups to the caller of
 * req when the daemon is root and the caller is not.  *switched says
 * whether sc_creds_leave() has anything to undo.  Returns 0 or -errno.
 */
int sc_creds_enter(struct sc_fuse *fs, fuse_req_t req, bool *switched);

/* Back to the daemon's credentials after sc_creds_enter(). */
void sc_creds_leave(struct sc_fuse *fs, bool switched);

/* True if the caller of req is in group gid (primary or supplementary). */
bool sc_creds_in_group(fuse_req_t req, gid_t gid);

struct stat;
/*
 * access(2) of the caller of req, mask of R_OK, W_OK, X_OK, on an object
 * with attributes st, judged from the mode bits as the kernel does without
 * ACLs: 0 or -EACCES.
 */
int sc_creds_access(fuse_req_t req, const struct stat *st, int mask);

#endif /* SC_CREDS_I_H */
