// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_config.c - libFuzzer target for the volume config parser
 * (sc_config_parse, crypto/config.c).
 *
 * The config's last line is a SHA-256 checksum of everything before it, so
 * almost every mutation of a valid config stops at the checksum check.  To
 * reach the field parsing, each input is parsed twice: as given, and with
 * its checksum line recomputed (any existing "checksum = " last line is
 * replaced, a missing final newline added).  When a parse succeeds the
 * config must survive a round trip: sc_config_format of the parsed struct
 * must parse back to the same struct, byte for byte, and every field it
 * prints must have the value written in the input.  Anything else the
 * parser does (its return code and message) is free, but it must not
 * crash, leak, read out of bounds, return 0 without a complete struct, or
 * accept scrypt or Argon2id parameters beyond their bounds (SC_SCRYPT_*_MAX,
 * SC_ARGON2_*_MAX) in any key slot.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#include "sc_crypto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The value of key in a config text (lines "key = value"; blanks around '='
 * and a trailing CR trimmed), copied to val; 0 if found, -1 if not. */
static int value_of(const char *text, size_t len, const char *key, char *val, size_t vsize)
{
	const char *l = text, *end = text + len;
	size_t klen = strlen(key);

	while (l < end) {
		const char *nl = memchr(l, '\n', (size_t)(end - l)), *v, *ve, *ke;

		if (nl == NULL)
			nl = end;
		ke = memchr(l, '=', (size_t)(nl - l));
		if (l[0] != '#' && ke != NULL) {
			v = ke + 1;
			while (ke > l && (ke[-1] == ' ' || ke[-1] == '\t'))
				ke--;
			while (v < nl && (*v == ' ' || *v == '\t'))
				v++;
			ve = nl;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
				ve--;
			if ((size_t)(ke - l) == klen && memcmp(l, key, klen) == 0 &&
			    (size_t)(ve - v) < vsize) {
				memcpy(val, v, (size_t)(ve - v));
				val[ve - v] = '\0';
				return 0;
			}
		}
		l = nl + 1;
	}
	return -1;
}

/*
 * A config the parser accepted must say what its text says: every field,
 * formatted back by sc_config_format, has exactly the value written in the
 * input (features compared as a number: "0x00" and "0x0" are one value).
 * Catches a parser that accepts a value it then silently truncates.
 */
static void same_values(const char *in, size_t inlen, const char *out, size_t outlen)
{
	static const char *const keys[] = {
		"format", "cipher", "block_size", "features", "kdf", "scrypt_n", "scrypt_r",
		"scrypt_p", "salt", "uuid", "created", "key_check", "wrapped_key",
	};
	char a[300], b[300];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		int ha = value_of(in, inlen, keys[i], a, sizeof(a));
		int hb = value_of(out, outlen, keys[i], b, sizeof(b));

		if (ha != hb) {
			fprintf(stderr, "key %s: %s in the input, %s after format\n", keys[i],
				ha ? "absent" : "present", hb ? "absent" : "present");
			abort();
		}
		if (ha != 0)
			continue;
		if (!strcmp(keys[i], "features") ? strtoull(a, NULL, 16) != strtoull(b, NULL, 16)
						  : strcmp(a, b) != 0) {
			fprintf(stderr, "key %s: \"%s\" in the input, parsed as \"%s\"\n",
				keys[i], a, b);
			abort();
		}
	}
}

/* Parses text; on success checks the format/parse round trip.  Aborts on a violation. */
static void parse_and_check(const char *text, size_t len)
{
	struct sc_config cfg, again;
	char err[256], out[SC_CONFIG_MAX_TEXT + 1];
	int ret, n;

	memset(err, 0x55, sizeof(err));
	ret = sc_config_parse(text, len, &cfg, err, sizeof(err));
	if (memchr(err, '\0', sizeof(err)) == NULL) {
		fprintf(stderr, "sc_config_parse left err unterminated (ret %d)\n", ret);
		abort();
	}
	if (ret > 0 || (ret < 0 && ret != -EUCLEAN && ret != -EPROTONOSUPPORT &&
			ret != -EINVAL && ret != -ENOMEM)) {
		fprintf(stderr, "sc_config_parse returned %d, not in its contract\n", ret);
		abort();
	}
	if (ret < 0) {
		if (err[0] == '\0') {
			fprintf(stderr, "sc_config_parse failed (%d) without a reason\n", ret);
			abort();
		}
		return;
	}
	/* no accepted config makes an unlock run a KDF beyond the bounds (issue 13, #32) */
	for (unsigned i = 0; i < SC_SLOTS_MAX; i++) {
		const struct sc_slot *s = &cfg.slots[i];

		if (s->used && s->kdf == SC_KDF_SCRYPT &&
		    (s->scrypt_n > SC_SCRYPT_N_MAX ||
		     128ull * s->scrypt_r * s->scrypt_n > SC_SCRYPT_MEM_MAX ||
		     s->scrypt_n * s->scrypt_r * s->scrypt_p > SC_SCRYPT_WORK_MAX)) {
			fprintf(stderr, "accepted scrypt N=%llu r=%u p=%u beyond the bounds\n",
				(unsigned long long)s->scrypt_n, s->scrypt_r, s->scrypt_p);
			abort();
		}
		if (s->used && s->kdf == SC_KDF_ARGON2ID &&
		    (s->argon2_m > SC_ARGON2_M_MAX || s->argon2_t > SC_ARGON2_T_MAX ||
		     s->argon2_p > SC_ARGON2_P_MAX ||
		     (uint64_t)s->argon2_t * s->argon2_m > SC_ARGON2_WORK_MAX)) {
			fprintf(stderr, "accepted argon2id t=%u m=%u p=%u beyond the bounds\n",
				s->argon2_t, s->argon2_m, s->argon2_p);
			abort();
		}
	}
	n = sc_config_format(&cfg, out, sizeof(out));
	if (n < 0) {
		fprintf(stderr, "parsed config does not format back: %d\n", n);
		abort();
	}
	same_values(text, len, out, (size_t)n);
	ret = sc_config_parse(out, (size_t)n, &again, err, sizeof(err));
	if (ret != 0 || memcmp(&cfg, &again, sizeof(cfg)) != 0) {
		fprintf(stderr, "round trip changed the config (ret %d: %s)\n", ret, err);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char tag[] = "checksum = ";
	unsigned char md[32];
	unsigned int mdlen = 0;
	size_t body, i;
	char *text;

	if (size > SC_CONFIG_MAX_TEXT + 64)
		return -1;	/* the parser refuses these by length alone */

	/* Exactly size bytes, no terminator: the parser takes a length. */
	text = malloc(size ? size : 1);
	if (text == NULL)
		abort();
	memcpy(text, data, size);
	parse_and_check(text, size);
	free(text);

	/* The same body with a correct checksum line. */
	body = size;
	if (body > 0 && data[body - 1] == '\n') {
		size_t ls = body - 1;

		while (ls > 0 && data[ls - 1] != '\n')
			ls--;
		if (body - ls >= sizeof(tag) - 1 && memcmp(data + ls, tag, sizeof(tag) - 1) == 0)
			body = ls;
	}
	text = malloc(body + 1 + sizeof(tag) - 1 + 64 + 1);
	if (text == NULL)
		abort();
	memcpy(text, data, body);
	if (body > 0 && text[body - 1] != '\n')
		text[body++] = '\n';
	if (EVP_Digest(text, body, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
		abort();
	memcpy(text + body, tag, sizeof(tag) - 1);
	body += sizeof(tag) - 1;
	for (i = 0; i < 32; i++) {
		text[body++] = "0123456789abcdef"[md[i] >> 4];
		text[body++] = "0123456789abcdef"[md[i] & 15];
	}
	text[body++] = '\n';
	parse_and_check(text, body);
	free(text);
	return 0;
}
