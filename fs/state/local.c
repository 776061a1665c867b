/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * local.c - plain I/O on this machine's own files (include/sc_local.h).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sc_local.h"

int sc_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = pwrite(fd, (const uint8_t *)buf + done, len - done,
				   (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

int sc_mkdirs(const char *dir)
{
	size_t n = strlen(dir);
	char p[PATH_MAX];
	struct stat st;

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	if (stat(dir, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	memcpy(p, dir, n + 1);
	for (char *s = n ? strchr(p + 1, '/') : NULL; ; s = strchr(s + 1, '/')) {
		if (s)
			*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (!s)
			break;
		*s = '/';
	}
	return stat(p, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}
