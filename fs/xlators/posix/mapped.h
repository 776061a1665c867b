/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mapped.h - writes into a shared mapping of a file, for the posix
 * translator's ->map (include/sc_xlator.h): the file's first len bytes
 * mapped once, each write a copy, a fault caught.
 */
#ifndef SC_PX_MAPPED_H
#define SC_PX_MAPPED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct px_map;

/*
 * Maps fd's first len bytes (the file grows to len if shorter, without
 * allocating).  0, or -errno.
 */
int px_map_new(int fd, uint64_t len, struct px_map **out);
/*
 * Copies buf to [off, off + n) of the mapping.  False when the range is
 * not inside it or the copy faulted (then no later copy is tried: the
 * caller writes with a system call, which reports what went wrong).
 */
bool px_map_write(struct px_map *m, const void *buf, size_t n, uint64_t off);
void px_map_free(struct px_map *m);

#endif /* SC_PX_MAPPED_H */
