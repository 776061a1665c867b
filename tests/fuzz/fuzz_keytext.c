// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_keytext.c - libFuzzer target for the two key texts a person hands
 * stackcrypt (crypto/mkey.c): the key file (sc_keyfile_parse: 64 hex
 * digits with an optional newline, or 32 raw bytes) and the master key
 * recovery text (sc_mkey_from_text: 64 hex digits, dashes and blanks optional).
 *
 * Checks: both return 0 or -EINVAL; a key they accept prints back
 * (sc_mkey_to_text) to a text that parses to the same key; a refused
 * master key text leaves no key bytes behind (the output is untouched or
 * wiped, never half filled).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_crypto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, int ret)
{
	fprintf(stderr, "fuzz_keytext: %s (%d)\n", what, ret);
	abort();
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t key[32], back[32];
	char text[80], *s;
	int ret;

	if (size > 256)
		return -1;
	ret = sc_keyfile_parse(data, size, key);
	if (ret != 0 && ret != -EINVAL)
		fail("sc_keyfile_parse: errno outside its contract", ret);
	if (ret == 0 && size != 32) {
		if (sc_mkey_to_text(key, text, sizeof(text)) != 71)
			fail("sc_mkey_to_text length", ret);
		if (sc_mkey_from_text(text, back) != 0 || memcmp(key, back, 32) != 0)
			fail("key file key does not round-trip through the master key text", ret);
	}

	s = malloc(size + 1);	/* a C string: the input up to its first NUL */
	if (s == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	memset(key, 0xa5, sizeof(key));
	ret = sc_mkey_from_text(s, key);
	free(s);
	if (ret != 0 && ret != -EINVAL)
		fail("sc_mkey_from_text: errno outside its contract", ret);
	if (ret == 0) {
		if (sc_mkey_to_text(key, text, sizeof(text)) != 71 ||
		    sc_mkey_from_text(text, back) != 0 || memcmp(key, back, 32) != 0)
			fail("master key text does not round-trip", ret);
	} else {
		static const uint8_t untouched[32] = {
			[0 ... 31] = 0xa5,
		};

		/* untouched, or wiped: never half a key */
		if (!all_zero(key, sizeof(key)) && memcmp(key, untouched, sizeof(key)) != 0)
			fail("a refused master key text left key bytes behind", ret);
	}
	return 0;
}
