/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_tool.h - what the C test tools (tests/tools, tests/load) share beyond
 * the PRNG (sc_rand.h): the fatal-error exit, the hex row of a mismatch
 * report, and the in-memory model of one file's bytes that writes,
 * truncates and hole punches keep up to date.  Header-only, like
 * sc_rand.h: each tool is one .c file.
 */
#ifndef SC_TOOL_H
#define SC_TOOL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints PREFIX and the message on stderr (after flushing stdout, so the
 * two keep their order in a log) and exits with status 1. */
static inline __attribute__((noreturn, format(printf, 2, 3))) void
sc_die(const char *prefix, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* One row of a mismatch report on stderr: bytes [from, to) of p, labelled
 * TAG and the file offset base + from, the byte at MARK in brackets. */
static inline void sc_hexrow(const char *tag, const uint8_t *p, size_t base, size_t from,
			     size_t to, size_t mark)
{
	size_t i;

	fprintf(stderr, "  %-8s %8zu:", tag, base + from);
	for (i = from; i < to; i++)
		fprintf(stderr, "%s%02x", i == mark ? "[" : (i == mark + 1 ? "]" : " "), p[i]);
	if (to == mark + 1)
		fputc(']', stderr);
	fputc('\n', stderr);
}

/*
 * The model of a file: its bytes in MODEL (as large as the file may grow)
 * and its size in *SIZE.  A write past the end reads back zeros in the gap;
 * a truncate up reads back zeros; a punched hole inside the file reads back
 * zeros and never changes the size.
 */
static inline void sc_model_write(uint8_t *model, size_t *size, size_t off,
				  const void *data, size_t len)
{
	if (off > *size)
		memset(model + *size, 0, off - *size);
	memcpy(model + off, data, len);
	if (off + len > *size)
		*size = off + len;
}

static inline void sc_model_truncate(uint8_t *model, size_t *size, size_t newsize)
{
	if (newsize > *size)
		memset(model + *size, 0, newsize - *size);
	*size = newsize;
}

static inline void sc_model_zero(uint8_t *model, size_t size, size_t off, size_t len)
{
	if (off < size)
		memset(model + off, 0, off + len > size ? size - off : len);
}

#endif /* SC_TOOL_H */
