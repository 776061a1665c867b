/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_local.h - plain I/O on this machine's own files (fs/state/local.c).
 *
 * Shared by the local directory backing (fs/backing/dir.c) and by what a
 * client keeps outside any backing store: the daemon's log, the freshness
 * record, fsck's repair copies.  Never through a backing interface; the
 * data layer reaches the freshness record, so these sit below the
 * translators.
 */
#ifndef SC_LOCAL_H
#define SC_LOCAL_H

#include <stddef.h>
#include <stdint.h>

/*
 * sc_pwrite_all: all len bytes of buf at off of fd, over short writes and
 * EINTR; 0 or -errno (-EIO when a write wrote nothing).
 * sc_mkdirs: mkdir -p of dir, every directory it makes mode 0700 (they
 * hold a user's logs and records); 0, -ENOTDIR (dir is not a directory),
 * -ENAMETOOLONG or -errno.
 */
int sc_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
int sc_mkdirs(const char *dir);

#endif /* SC_LOCAL_H */
