/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * volopts.c - the option parsers the volume commands share (volopts_i.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "sc_cli.h"
#include "volopts_i.h"

int sc_cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int sc_cli_parse_cipher(const char *cmd, const char *arg, enum sc_cipher_id *out)
{
	if (sc_cipher_parse(arg, out) == 0)
		return 0;
	return sc_cli_usage(cmd, "unknown cipher '%s': valid values are null, aes-xts, aes-cbc, aes-gcm", arg);
}

int sc_cli_parse_block_size(const char *cmd, const char *arg, uint32_t *out)
{
	uint64_t v;

	if (sc_cli_parse_u64(arg, &v) == 0 && sc_block_size_check(v) == 0) {
		*out = (uint32_t)v;
		return 0;
	}
	return sc_cli_usage(cmd, "invalid block size '%s': valid values are 512, 1024, 2048, "
			 "4096, 8192, 16384, 32768, 65536", arg);
}

/* scrypt cost: a power of two in the range the config accepts (N KiB per unlock, r = 8). */

int sc_cli_parse_scrypt_n(const char *cmd, const char *arg, uint64_t *out)
{
	uint64_t v;

	if (sc_cli_parse_u64(arg, &v) == 0 && v >= SCRYPT_N_MIN && v <= SCRYPT_N_MAX &&
	    (v & (v - 1)) == 0) {
		*out = v;
		return 0;
	}
	return sc_cli_usage(cmd, "invalid scrypt cost '%s': want a power of two from %u to %u "
			 "(default %u)", arg, SCRYPT_N_MIN, SCRYPT_N_MAX, SC_SCRYPT_N_DEFAULT);
}

/* A password wrapped with a cost below the defaults makes each guess cheaper: say so. */
void sc_cli_warn_weak_kdf(const char *cmd, const struct sc_slot *s)
{
	if (s->kdf != SC_KDF_SCRYPT ||
	    (s->scrypt_n >= SC_SCRYPT_N_DEFAULT && s->scrypt_r >= SC_SCRYPT_R_DEFAULT))
		return;
	sc_cli_warn(cmd, "scrypt N=%" PRIu64 " r=%" PRIu32 " is below "
		"the default (N=%u r=%u): each guess of the password is cheaper for an "
		"attacker", s->scrypt_n, s->scrypt_r, SC_SCRYPT_N_DEFAULT,
		SC_SCRYPT_R_DEFAULT);
}


/* The secret option each OPT_* stands for (sc_vol_secret_opt's names). */
static const char *const secret_names[] = {
	[OPT_KEYFILE - OPT_KEYFILE]		= "keyfile",
	[OPT_PASSFILE - OPT_KEYFILE]		= "passfile",
	[OPT_EXTPASS - OPT_KEYFILE]		= "extpass",
	[OPT_MASTERKEY - OPT_KEYFILE]		= "masterkey",
	[OPT_PASSWORD - OPT_KEYFILE]		= "password",
	[OPT_NEW_KEYFILE - OPT_KEYFILE]		= "keyfile",
	[OPT_NEW_PASSFILE - OPT_KEYFILE]	= "passfile",
	[OPT_NEW_EXTPASS - OPT_KEYFILE]		= "extpass",
	[OPT_NEW_PASSWORD - OPT_KEYFILE]	= "password",
};

/* c is one of OPT_KEYFILE .. OPT_NEW_PASSWORD. */
int sc_cli_secret_option(const char *cmd, int c, const char *arg,
			 struct sc_secret_src *src, bool *given)
{
	return sc_cli_secret_opt(cmd, secret_names[c - OPT_KEYFILE], arg, src, given);
}
