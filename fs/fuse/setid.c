/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * setid.c - the set-id policy of the front end.
 *
 * With FUSE_HANDLE_KILLPRIV_V2 (negotiated in wire.c) the kernel no longer
 * clears suid/sgid itself on a write, truncate, chown or O_TRUNC open by a
 * caller without CAP_FSETID: it flags the request, the read hook notes the
 * flag in the request's context, and the handler calls sc_setid_drop()
 * before passing the request down the stack.
 */
#include <string.h>
#include <sys/stat.h>

#include "creds_i.h"
#include "setid_i.h"

/*
 * The kernel's own rule (setattr_should_drop_suidgid): suid always; sgid if
 * group-executable, or if the caller is not in the file's group.
 */
void sc_setid_drop(fuse_req_t req, struct sc_fuse *fs, struct sc_wire_req *rq,
		   fuse_ino_t ino, struct sc_obj *obj, struct sc_fh *fh)
{
	struct stat st, attr;
	mode_t kill;

	if (!rq->kill_suidgid || !S_ISREG(obj->type))
		return;
	rq->kill_suidgid = false;
	if (sc_xl_getattr(fs->top, obj, fh, &st) < 0)
		return;
	kill = st.st_mode & S_ISUID;
	if ((st.st_mode & S_ISGID) &&
	    ((st.st_mode & S_IXGRP) || !sc_creds_in_group(req, st.st_gid)))
		kill |= S_ISGID;
	if (!kill)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.st_mode = st.st_mode & ~kill;
	if (sc_xl_setattr(fs->top, obj, fh, &attr, SC_SET_MODE, &st) < 0) {
		fuse_log(FUSE_LOG_WARNING, "stackcrypt: cannot clear set-id bits of backing "
			 "inode %llu\n", (unsigned long long)st.st_ino);
		return;
	}
	/*
	 * The kernel still caches the old mode (it did not send the change);
	 * drop its cached attributes.  Attributes only (offset < 0): no page
	 * or inode lock is taken, so this is safe inside a WRITE.
	 */
	fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
}
