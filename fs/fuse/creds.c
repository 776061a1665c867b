/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * creds.c - the caller's credentials, for the front end.
 *
 * New objects belong to the caller, not to the root daemon: switch this
 * thread's filesystem uid/gid and groups (per-thread syscalls; glibc's
 * setgroups() would change every thread, hence the raw syscall) around the
 * call, so the backing filesystem applies ownership, setgid directories and
 * ACL inheritance itself.  Root callers, the common case, cost nothing.
 * The caller's supplementary groups come from /proc (caller_groups below).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include "creds_i.h"

int sc_creds_init(struct sc_fuse *fs)
{
	int n;

	fs->switch_creds = geteuid() == 0;
	if (!fs->switch_creds)
		return 0;
	n = getgroups(0, NULL);
	if (n < 0)
		return -errno;
	fs->groups = calloc(n ? n : 1, sizeof(gid_t));
	if (!fs->groups)
		return -ENOMEM;
	fs->ngroups = getgroups(n, fs->groups);
	if (fs->ngroups < 0)
		return -errno;
	return 0;
}

void sc_creds_fini(struct sc_fuse *fs)
{
	free(fs->groups);
	fs->groups = NULL;
}

/*
 * The caller's supplementary groups, from the "Groups:" line of
 * /proc/TID/status.  Ours, not fuse_req_getgroups(): libfuse 3.14's scans
 * a buffer it never NUL-terminates (AddressSanitizer's strict string checks
 * catch the over-read).  Returns the count or -errno.
 */
static int caller_groups(pid_t tid, gid_t *list, int size)
{
	char path[64], buf[16384], *s, *end;
	ssize_t len;
	int fd, n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -errno;
	buf[len] = '\0';
	s = strstr(buf, "\nGroups:");
	if (!s)
		return -EIO;
	s += strlen("\nGroups:");
	while (n < size) {
		unsigned long g = strtoul(s, &end, 10);

		if (end == s)
			break;
		list[n++] = (gid_t)g;
		s = end;
	}
	return n;
}

int sc_creds_enter(struct sc_fuse *fs, fuse_req_t req, bool *switched)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	gid_t groups[SC_MAX_GROUPS];
	int n;

	*switched = false;
	if (!fs->switch_creds || (ctx->uid == 0 && ctx->gid == 0))
		return 0;
	n = caller_groups(ctx->pid, groups, SC_MAX_GROUPS);
	if (n < 0) {
		groups[0] = ctx->gid;
		n = 1;
	}
	if (syscall(SYS_setgroups, (size_t)n, groups) < 0)
		return -errno;
	setfsgid(ctx->gid);
	setfsuid(ctx->uid);
	*switched = true;
	return 0;
}

void sc_creds_leave(struct sc_fuse *fs, bool switched)
{
	if (!switched)
		return;
	setfsuid(0);
	setfsgid(0);
	syscall(SYS_setgroups, (size_t)fs->ngroups, fs->groups);
}

bool sc_creds_in_group(fuse_req_t req, gid_t gid)
{
	gid_t groups[SC_MAX_GROUPS];
	int i, n;

	if (fuse_req_ctx(req)->gid == gid)
		return true;
	n = caller_groups(fuse_req_ctx(req)->pid, groups, SC_MAX_GROUPS);
	for (i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/*
 * access(2), faccessat(2) and chdir(2) of the caller of req on the object
 * whose attributes are st: mode bits against the caller's uid, gid and
 * supplementary groups, as the kernel's generic_permission() judges them
 * without ACLs -- root may do anything but execute a file no one may.
 * Asked only on mounts without default_permissions (cmd_mount.c), where
 * the caller is the mounting user or root.  0 or -EACCES.
 */
int sc_creds_access(fuse_req_t req, const struct stat *st, int mask)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	unsigned int bits;

	mask &= R_OK | W_OK | X_OK;
	if (ctx->uid == 0) {
		if ((mask & X_OK) && !S_ISDIR(st->st_mode) && !(st->st_mode & 0111))
			return -EACCES;
		return 0;
	}
	if (ctx->uid == st->st_uid)
		bits = (st->st_mode >> 6) & 7;
	else if (sc_creds_in_group(req, st->st_gid))
		bits = (st->st_mode >> 3) & 7;
	else
		bits = st->st_mode & 7;
	return (mask & (int)bits) == mask ? 0 : -EACCES;
}
