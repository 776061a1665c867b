/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mount_log_i.h - where a mount's daemon sends its messages (private to
 * fs/cli; mount_log.c): stderr in the foreground, syslog when something
 * listens on /dev/log, otherwise a file; -o log=FILE|syslog chooses.
 */
#ifndef SC_MOUNT_LOG_I_H
#define SC_MOUNT_LOG_I_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

enum sc_mount_log_where {
	SC_MOUNT_LOG_STDERR,	/* -f without -o log=: the terminal */
	SC_MOUNT_LOG_SYSLOG,
	SC_MOUNT_LOG_FILE,
};

struct sc_mount_log {
	enum sc_mount_log_where	where;
	int			fd;		/* the file, open for appending, or -1 */
	char			path[PATH_MAX];	/* the file's absolute path */
	bool			is_default;	/* the default file, not -o log=FILE */
};

/* True if syslog(3)'s socket, /dev/log, takes a connection (journald serves it too). */
bool sc_mount_log_syslog_usable(void);

/*
 * Chooses where messages go and opens the file: spec is -o log='s value
 * (NULL: not given; "syslog"; or a FILE, relative to the current
 * directory), foreground is -f, mountpoint the canonical mount point (the
 * default file's name).  Without spec: stderr in the foreground, syslog if
 * usable, else $XDG_STATE_HOME/stackcrypt/MNT.log (root without
 * XDG_STATE_HOME: /var/log/stackcrypt/, a user: ~/.local/state/
 * stackcrypt/), MNT the mount point with '/' as '-'; the default's
 * directories are created 0700, the file 0600.  Returns 0 and *out, or
 * -errno with a one-line reason in err (-o log= only: a default file
 * that cannot be made leaves syslog, 0, and a warning in err).
 */
int sc_mount_log_open(const char *spec, bool foreground, const char *mountpoint,
		      struct sc_mount_log *out, char *err, size_t errlen);

/*
 * Closes the file, if one is open.  The default file goes with it when it
 * is still empty and no other daemon has it open (a shared flock held by
 * each): a mount that had nothing to say leaves nothing behind.  A file
 * the user named with -o log= is always kept.
 */
void sc_mount_log_close(struct sc_mount_log *log);

#endif /* SC_MOUNT_LOG_I_H */
