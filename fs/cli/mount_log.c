/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mount_log.c - where a mount's daemon sends its messages (mount_log_i.h).
 *
 * A detached daemon has no terminal, and syslog(3) drops every line on a
 * machine where nothing listens on /dev/log (a container, a minimal
 * install): the aes-gcm tamper lines were lost that way.  So the place
 * is chosen before the daemon forks, where a failure can still be said
 * on the terminal: syslog only when /dev/log takes a connection (journald
 * serves it too), otherwise a file whose path the "mounted" line names.
 * The file is opened here, so a bad -o log= is refused before anything is
 * asked or mounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sc_local.h"	/* sc_mkdirs */
#include "mount_log_i.h"

#define SC_SYSLOG_SOCKET	"/dev/log"	/* glibc's _PATH_LOG: where syslog(3) writes */

bool sc_mount_log_syslog_usable(void)
{
	static const int types[] = { SOCK_DGRAM, SOCK_STREAM };	/* syslog(3) tries both */
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = SC_SYSLOG_SOCKET };
	struct stat st;

	if (stat(SC_SYSLOG_SOCKET, &st) < 0 || !S_ISSOCK(st.st_mode))
		return false;
	/* A socket file left by a dead daemon refuses the connection. */
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0);
		int ok;

		if (fd < 0)
			return false;
		ok = connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) == 0;
		close(fd);
		if (ok)
			return true;
	}
	return false;
}

/*
 * The default file's directory: $XDG_STATE_HOME/stackcrypt when set, else
 * /var/log/stackcrypt for root and ~/.local/state/stackcrypt for a user
 * (the XDG base directory specification's place for logs).  0 or -ENOENT
 * (no home to put it in).
 */
static int default_dir(char *dir, size_t len)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int n;

	if (state && state[0] == '/')
		n = snprintf(dir, len, "%s/stackcrypt", state);
	else if (geteuid() == 0)
		n = snprintf(dir, len, "/var/log/stackcrypt");
	else if (home && home[0] == '/')
		n = snprintf(dir, len, "%s/.local/state/stackcrypt", home);
	else
		return -ENOENT;
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* The file's name: the mount point with '/' as '-' (/home/u/plain: home-u-plain.log). */
static int default_name(const char *mountpoint, char *name, size_t len)
{
	size_t j = 0;

	for (const char *s = mountpoint + strspn(mountpoint, "/"); *s; s++) {
		if (j + 1 >= len)
			return -ENAMETOOLONG;
		name[j++] = *s == '/' ? '-' : *s;
	}
	if (j == 0)
		name[j++] = '-';	/* mounted on / itself */
	name[j] = '\0';
	return 0;
}

/* Opens out->path for appending: 0 (out->where: the file) or -errno. */
static int open_file(struct sc_mount_log *out)
{
	/* 0600: the lines name the user's files. */
	out->fd = open(out->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
	if (out->fd < 0)
		return -errno;
	/*
	 * Held for the daemon's life (the fork shares it): the close of an
	 * empty default file removes it only when no other daemon has the
	 * file (a second mount on the same point) -- its EX upgrade fails.
	 */
	(void)flock(out->fd, LOCK_SH | LOCK_NB);
	out->where = SC_MOUNT_LOG_FILE;
	return 0;
}

int sc_mount_log_open(const char *spec, bool foreground, const char *mountpoint,
		      struct sc_mount_log *out, char *err, size_t errlen)
{
	char dir[PATH_MAX - NAME_MAX - 8], name[NAME_MAX - 4];
	int ret;

	out->fd = -1;
	out->path[0] = '\0';
	out->is_default = false;
	if (spec && !strcmp(spec, "syslog")) {
		out->where = SC_MOUNT_LOG_SYSLOG;
		return 0;
	}
	if (spec && !spec[0]) {
		snprintf(err, errlen, "-o log= needs a FILE (or syslog)");
		return -EINVAL;
	}
	if (!spec && foreground) {
		out->where = SC_MOUNT_LOG_STDERR;
		return 0;
	}
	if (!spec && sc_mount_log_syslog_usable()) {
		out->where = SC_MOUNT_LOG_SYSLOG;
		return 0;
	}
	if (!spec) {
		const char *what = "no XDG_STATE_HOME or HOME";	/* where it failed */

		ret = default_dir(dir, sizeof(dir));
		if (ret == 0)
			ret = default_name(mountpoint, name, sizeof(name));
		if (ret == 0) {
			what = dir;
			ret = sc_mkdirs(dir);
		}
		if (ret == 0) {
			snprintf(out->path, sizeof(out->path), "%s/%s.log", dir, name);
			what = out->path;
			ret = open_file(out);
			out->is_default = ret == 0;
		}
		if (ret < 0) {
			/*
			 * Not what the user asked for: the mount goes on (it did
			 * before there was a file), and says what that costs.
			 */
			out->where = SC_MOUNT_LOG_SYSLOG;
			snprintf(err, errlen, "no log file (%s: %s) and nothing listens on "
				 "/dev/log: the daemon's messages are lost; use -o log=FILE",
				 what, strerror(-ret));
			out->path[0] = '\0';
		}
		return 0;
	} else if (spec[0] == '/') {
		if (strlen(spec) >= sizeof(out->path)) {
			snprintf(err, errlen, "-o log=: path too long");
			return -ENAMETOOLONG;
		}
		strcpy(out->path, spec);
	} else {
		/* The daemon chdirs to / when it detaches: say the full path. */
		if (!getcwd(dir, sizeof(dir)) ||
		    snprintf(out->path, sizeof(out->path), "%s/%s", dir, spec) >=
		    (int)sizeof(out->path)) {
			snprintf(err, errlen, "-o log=%s: path too long", spec);
			return -ENAMETOOLONG;
		}
	}
	ret = open_file(out);
	if (ret < 0)
		snprintf(err, errlen, "-o log=: cannot open the log file %s: %s", out->path,
			 strerror(-ret));
	return ret;
}

/* True if the open default file is empty, ours alone, and still at its path. */
static bool removable(const struct sc_mount_log *log)
{
	struct stat fst, pst;

	if (!log->is_default || flock(log->fd, LOCK_EX | LOCK_NB) < 0)
		return false;
	return fstat(log->fd, &fst) == 0 && fst.st_size == 0 &&
	       stat(log->path, &pst) == 0 && pst.st_dev == fst.st_dev && pst.st_ino == fst.st_ino;
}

void sc_mount_log_close(struct sc_mount_log *log)
{
	if (log->fd < 0)
		return;
	if (removable(log))
		(void)unlink(log->path);
	close(log->fd);
	log->fd = -1;
}
