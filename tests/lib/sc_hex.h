/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_hex.h - hex-written test vectors for the Criterion tests: decode one,
 * and assert that bytes equal one (the failure shows both in hex).  Shared
 * by the known-answer tests of every format (test_kat, test_names_kat,
 * test_gcm_kat) so that each compares vectors the same way.
 */
#ifndef SC_HEX_H
#define SC_HEX_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

/* Decodes the hex string s into out (room for max bytes); its length. */
static inline size_t sc_unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s) / 2;

	cr_assert_leq(n, max);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		cr_assert_eq(sscanf(s + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

/* Asserts that the n bytes at got are the vector want_hex. */
static inline void sc_expect_hex(const char *what, const uint8_t *got, size_t n,
				 const char *want_hex)
{
	size_t wn = strlen(want_hex) / 2;
	uint8_t *want = malloc(wn + 1);
	char *g = malloc(2 * n + 1);

	cr_assert(want && g);
	cr_assert_eq(sc_unhex(want_hex, want, wn), n, "%s: length", what);
	if (memcmp(got, want, n) != 0) {
		for (size_t i = 0; i < n; i++)
			sprintf(g + 2 * i, "%02x", got[i]);
		cr_assert_fail("%s\n  got  %s\n  want %s", what, g, want_hex);
	}
	free(g);
	free(want);
}

#endif /* SC_HEX_H */
