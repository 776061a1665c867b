// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_names.c - libFuzzer target for the name and symlink target decoders
 * (sc_name_decrypt, sc_link_decrypt, sc_name_kind in crypto/names.c): what
 * a backing directory may hold, under a fixed master key and directory
 * nonce.
 *
 * Input layout:
 *   [0]      flags: bit 0 link target (else name); bit 1 encrypt the rest
 *            as a plaintext first ('/' and NUL mapped away for a name),
 *            then xor byte [1] into the stored form at position [2] * 2
 *            (so mutations reach the checks behind the tag)
 *   [1..2]   the change (bit 1 only)
 *   [3..]    the stored form (bit 1 clear) or the plaintext (bit 1 set)
 *
 * Checks: the decoders return a length or -EBADMSG, nothing else; what a
 * name decoder accepts is a valid name whose encryption is exactly the
 * input (one stored form per name: canonical base64url, canonical padding)
 * and whose shape sc_name_kind calls SHORT when it fits a directory entry;
 * an accepted target holds no NUL; a changed stored form is refused.  The
 * stored form is copied to a buffer of its exact length so that ASan sees
 * any read past it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_crypto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t nonce[SC_DIRNONCE_LEN] = {
	0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
	0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
};
static struct sc_mkey *mk;	/* made on first use, kept for the run */
static struct sc_nkey *nk;

static void fail(const char *what, int a, int b)
{
	fprintf(stderr, "fuzz_names: %s (%d, %d)\n", what, a, b);
	abort();
}

/*
 * At exit: a key holds OpenSSL objects (the journal's keyed MAC) that
 * LeakSanitizer cannot find through the key's locked memory, which it does
 * not scan.
 */
static void free_keys(void)
{
	sc_nkey_free(nk);
	sc_mkey_free(mk);
}

static void setup(void)
{
	static const uint8_t master[SC_MASTER_KEY_LEN] = { 0x11, 0x22, 0x33, 0x44 };
	if (nk != NULL)
		return;
	if (sc_mkey_new(master, SC_CIPHER_AES_XTS, 4096, &mk) != 0 || sc_nkey_new(mk, &nk) != 0)
		abort();
	atexit(free_keys);
}

/* Decodes the len bytes at s (exactly that long in memory) as a name. */
static int check_name(const char *s, size_t len)
{
	char *enc = malloc(len ? len : 1), plain[SC_NAME_PLAIN_MAX + 1];
	char again[SC_NAME_ENC_MAX + 1];
	enum sc_name_kind kind;
	int r, e;

	if (enc == NULL)
		abort();
	memcpy(enc, s, len);
	kind = sc_name_kind(enc, len);
	r = sc_name_decrypt(nk, nonce, enc, len, plain);
	if (r != -EBADMSG && (r < 1 || r > SC_NAME_PLAIN_MAX))
		fail("sc_name_decrypt returned outside its contract", r, (int)len);
	if (r > 0) {
		if (plain[r] != '\0' || memchr(plain, '\0', (size_t)r) || memchr(plain, '/', (size_t)r) ||
		    strcmp(plain, ".") == 0 || strcmp(plain, "..") == 0)
			fail("decrypted to something that is not a name", r, 0);
		e = sc_name_encrypt(nk, nonce, plain, (size_t)r, again);
		if (e != (int)len || memcmp(again, enc, len) != 0)
			fail("a name decrypted from a form its encryption does not give", e, (int)len);
		if ((kind == SC_NAME_KIND_SHORT) != (len <= SC_NAME_SHORT_MAX))
			fail("a name's shape and its length disagree", (int)kind, (int)len);
	}
	free(enc);
	return r;
}

static int check_link(const char *s, size_t len)
{
	char *enc = malloc(len ? len : 1), plain[SC_LINK_PLAIN_MAX + 1];
	int r;

	if (enc == NULL)
		abort();
	memcpy(enc, s, len);
	r = sc_link_decrypt(nk, enc, len, plain);
	if (r != -EBADMSG && (r < 1 || r > SC_LINK_PLAIN_MAX))
		fail("sc_link_decrypt returned outside its contract", r, (int)len);
	if (r > 0 && (plain[r] != '\0' || memchr(plain, '\0', (size_t)r)))
		fail("a target decrypted with a NUL inside", r, 0);
	free(enc);
	return r;
}

/* The same stored bytes as a bound target (format.md 9.5), at a fixed place and at none. */
static void check_bound(const char *s, size_t len)
{
	static char plain[SC_LINK_BOUND_PLAIN_MAX + 1];
	const struct sc_dirplace at = { nonce, "fuzzlink", 8 };
	char *enc = malloc(len ? len : 1);
	int r;

	if (enc == NULL)
		abort();
	memcpy(enc, s, len);
	for (int i = 0; i < 2; i++) {
		r = sc_link_open(nk, enc, len, i ? NULL : &at, plain);
		if (r != -EBADMSG && r != -ESTALE && (r < 1 || r > SC_LINK_BOUND_PLAIN_MAX))
			fail("sc_link_open returned outside its contract", r, (int)len);
		if (i && r == -ESTALE)
			fail("sc_link_open without a place answered -ESTALE", r, (int)len);
		if (r > 0 && (plain[r] != '\0' || memchr(plain, '\0', (size_t)r)))
			fail("a bound target opened with a NUL inside", r, 0);
	}
	free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t flags = size > 0 ? data[0] : 0, x = size > 1 ? data[1] : 0;
	size_t pos = size > 2 ? (size_t)data[2] * 2 : 0, len = size > 3 ? size - 3 : 0;
	const char *rest = (const char *)data + (size > 3 ? 3 : size);
	char plain[SC_LINK_PLAIN_MAX], enc[SC_LINK_ENC_MAX + 1];
	int e, r;

	setup();
	if (!(flags & 2)) {
		if (flags & 1) {
			check_link(rest, len);
			check_bound(rest, len);
		} else
			check_name(rest, len);
		return 0;
	}
	if (flags & 1) {
		len = len > SC_LINK_PLAIN_MAX ? SC_LINK_PLAIN_MAX : len;
		for (size_t i = 0; i < len; i++)
			plain[i] = rest[i] ? rest[i] : '@';
		e = sc_link_encrypt(nk, plain, len, enc);
	} else {
		len = len > SC_NAME_PLAIN_MAX ? SC_NAME_PLAIN_MAX : len;
		for (size_t i = 0; i < len; i++)
			plain[i] = rest[i] && rest[i] != '/' ? rest[i] : '_';
		e = sc_name_encrypt(nk, nonce, plain, len, enc);
	}
	if (e == -EINVAL)	/* empty, ".", "..": not a name or target */
		return 0;
	if (e < 0)
		fail("encrypt failed", e, (int)len);
	r = flags & 1 ? check_link(enc, (size_t)e) : check_name(enc, (size_t)e);
	if (r != (int)len)
		fail("decrypt(encrypt(x)) does not give x back", r, (int)len);
	if (x != 0 && pos < (size_t)e) {
		enc[pos] = (char)(enc[pos] ^ x);
		r = flags & 1 ? check_link(enc, (size_t)e) : check_name(enc, (size_t)e);
		if (r != -EBADMSG)
			fail("a changed stored form was accepted", r, (int)pos);
	}
	return 0;
}
