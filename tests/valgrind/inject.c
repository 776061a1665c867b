// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * inject.c - a preload library for the self-tests of the memory checks:
 * when the process it is loaded into starts, it makes the error that
 * SC_INJECT names, so a test can show that memcheck (or LeakSanitizer in a
 * sanitizer build) reports it and that the report fails the mount run.
 *
 *   SC_INJECT=leak      64 bytes allocated, the only pointer dropped
 *                       (a definite leak at exit)
 *   SC_INJECT=overread  one byte read past the end of a heap block
 *
 * Anything else, or unset: nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sc_inject_ctor(void) __attribute__((constructor));

/* Where the overread byte goes, so the read cannot be optimised away. */
volatile char sc_inject_sink;

void sc_inject_ctor(void)
{
	const char *what = getenv("SC_INJECT");
	char *volatile p;

	if (what == NULL)
		return;
	if (strcmp(what, "leak") == 0) {
		p = malloc(64);
		if (p != NULL)
			memset(p, 1, 64);
		p = NULL;
	} else if (strcmp(what, "overread") == 0) {
		p = malloc(16);
		if (p != NULL) {
			memset(p, 1, 16);
			sc_inject_sink = p[16];
			free(p);
		}
	}
}
