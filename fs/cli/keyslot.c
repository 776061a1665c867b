/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * keyslot.c - a key slot given a new secret (keyslot_i.h): the one path
 * of init's slot 0, passwd's replaced slot and key add's new one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sc_cmd.h"
#include "sc_cli.h"
#include "keyslot_i.h"
#include "volopts_i.h"

int sc_cli_label_option(const char *cmd, const char *arg, const char **out)
{
	if (sc_slot_label_check(arg))
		return sc_cli_usage(cmd, "invalid label '%.40s': want 1 to %d printable characters, "
				    "no blank at either end, not all digits", arg, SC_SLOT_LABEL_MAX);
	*out = arg;
	return 0;
}

int sc_cli_change_option(void *o_, const char *cmd, int c, char *arg)
{
	struct sc_cli_change *o = o_;

	switch (c) {
	case OPT_NEW_KEYFILE:
	case OPT_NEW_PASSFILE:
	case OPT_NEW_EXTPASS:
	case OPT_NEW_PASSWORD:
		return sc_cli_secret_option(cmd, c, arg, &o->new_src, &o->new_given);
	case OPT_KDF:
	case OPT_SCRYPT_N:
	case OPT_ARGON2_T:
	case OPT_ARGON2_M:
		return sc_cli_kdf_option(cmd, c, arg, &o->kdf);
	case OPT_LABEL:
		return sc_cli_label_option(cmd, arg, &o->label);
	case OPT_SLOT:
		if (!*arg)
			return sc_cli_usage(cmd, "--slot needs a label or a slot number");
		o->slot = arg;
		return 0;
	default:	/* OPT_KEYFILE .. OPT_PASSWORD */
		return sc_cli_secret_option(cmd, c, arg, &o->old_src, &o->old_given);
	}
}

int sc_cli_kdf_option(const char *cmd, int c, const char *arg, struct sc_cli_kdf *k)
{
	uint64_t v;

	switch (c) {
	case OPT_KDF:
		k->kdf_given = true;
		if (!strcmp(arg, "argon2id"))
			k->kdf = SC_KDF_ARGON2ID;
		else if (!strcmp(arg, "scrypt"))
			k->kdf = SC_KDF_SCRYPT;
		else
			return sc_cli_usage(cmd, "unknown KDF '%s': valid values are argon2id, "
					    "scrypt", arg);
		return 0;
	case OPT_SCRYPT_N:
		return sc_cli_parse_scrypt_n(cmd, arg, &k->scrypt_n);
	case OPT_ARGON2_T:
		if (sc_cli_parse_u64(arg, &v) || v < 1 || v > SC_ARGON2_T_MAX)
			return sc_cli_usage(cmd, "invalid --argon2-t '%s': want 1 to %d passes",
					    arg, SC_ARGON2_T_MAX);
		k->argon2_t = (uint32_t)v;
		return 0;
	default:	/* OPT_ARGON2_M */
		if (sc_cli_parse_u64(arg, &v) || v < SC_ARGON2_M_MIN || v > SC_ARGON2_M_MAX)
			return sc_cli_usage(cmd, "invalid --argon2-m '%s': want %u to %u KiB "
					    "(8 MiB to 4 GiB)", arg, SC_ARGON2_M_MIN,
					    SC_ARGON2_M_MAX);
		k->argon2_m = (uint32_t)v;
		return 0;
	}
}

bool sc_cli_kdf_given(const struct sc_cli_kdf *k)
{
	return k->kdf_given || k->scrypt_n || k->argon2_t || k->argon2_m;
}

int sc_cli_kdf_done(const char *cmd, struct sc_cli_kdf *k)
{
	bool argon = k->argon2_t || k->argon2_m;

	if (k->scrypt_n && argon)
		return sc_cli_usage(cmd, "--scrypt-n and --argon2-t/--argon2-m name two KDFs: "
				    "give the costs of one");
	if (k->kdf_given && k->kdf == SC_KDF_SCRYPT && argon)
		return sc_cli_usage(cmd, "--argon2-t and --argon2-m do not apply to --kdf=scrypt");
	if (k->kdf_given && k->kdf == SC_KDF_ARGON2ID && k->scrypt_n)
		return sc_cli_usage(cmd, "--scrypt-n does not apply to --kdf=argon2id");
	if (!k->kdf_given)
		k->kdf = k->scrypt_n ? SC_KDF_SCRYPT : argon ? SC_KDF_ARGON2ID : SC_CLI_KDF_DEFAULT;
	if (k->kdf == SC_KDF_ARGON2ID && (uint64_t)(k->argon2_t ? k->argon2_t : 1) *
	    (k->argon2_m ? k->argon2_m : SC_ARGON2_M_MIN) > SC_ARGON2_WORK_MAX)
		return sc_cli_usage(cmd, "--argon2-t and --argon2-m ask for more work than 4 "
				    "passes over 4 GiB");
	return 0;
}

/* The memory cap of a measured Argon2id cost: SC_CLI_ARGON2_M_CAP, or a quarter of RAM. */
static uint32_t argon2_mem_cap(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	uint64_t quarter;

	if (pages <= 0 || size <= 0)
		return SC_CLI_ARGON2_M_CAP;
	quarter = (uint64_t)pages * (uint64_t)size / 4 / 1024;
	return quarter < SC_CLI_ARGON2_M_CAP ? (uint32_t)quarter : SC_CLI_ARGON2_M_CAP;
}

int sc_cli_slot_cost(const char *cmd, const struct sc_cli_kdf *k, bool keyfile,
		     struct sc_slot *s)
{
	const char *why;
	int r;

	s->scrypt_n = s->scrypt_r = s->scrypt_p = 0;
	s->argon2_t = s->argon2_m = s->argon2_p = 0;
	if (keyfile) {
		s->kdf = SC_KDF_KEYFILE;
		return SC_CLI_GO_ON;
	}
	s->kdf = k->kdf;
	if (k->kdf == SC_KDF_SCRYPT) {
		s->scrypt_n = k->scrypt_n ? k->scrypt_n : SC_SCRYPT_N_DEFAULT;
		s->scrypt_r = SC_SCRYPT_R_DEFAULT;
		s->scrypt_p = SC_SCRYPT_P_DEFAULT;
		return SC_CLI_GO_ON;
	}
	if (k->argon2_t && k->argon2_m) {
		s->argon2_t = k->argon2_t;
		s->argon2_m = k->argon2_m;
		s->argon2_p = 1;
	} else {
		/* measured here, as cryptsetup does; a cost given alone stays */
		r = sc_argon2_choose(SC_CLI_KDF_TARGET_S, k->argon2_m ? k->argon2_m :
				     argon2_mem_cap(), s);
		if (r) {
			sc_cli_err(cmd, "cannot measure Argon2id on this machine: %s", strerror(-r));
			return SC_EXIT_FAIL;
		}
		if (k->argon2_t)
			s->argon2_t = k->argon2_t;
		if (k->argon2_m)
			s->argon2_m = k->argon2_m;
	}
	if (sc_slot_cost_check(s, &why)) {
		sc_cli_err(cmd, "Argon2id cost t=%" PRIu32 " m=%" PRIu32 ": %s", s->argon2_t,
			   s->argon2_m, why);
		return SC_EXIT_USAGE;
	}
	return SC_CLI_GO_ON;
}

int sc_cli_slot_wrap(const char *cmd, struct sc_config *cfg, unsigned i,
		     const struct sc_secret_src *src, const char *prompt, const uint8_t *mk)
{
	struct sc_vol_secret sec = { 0 };
	char err[512];
	int r;

	r = sc_vol_secret_get(src, prompt, true, &sec, err, sizeof(err));
	if (r)
		return sc_cli_fail(cmd, r, err);
	/* nothing derived from an earlier secret survives */
	r = sc_random(cfg->slots[i].salt, sizeof(cfg->slots[i].salt));
	if (!r)
		r = sc_config_wrap_slot(cfg, i, sec.buf, sec.len, mk);
	sc_vol_secret_free(&sec);
	if (r) {
		sc_cli_err(cmd, "cannot wrap the master key: %s", strerror(-r));
		return SC_EXIT_FAIL;
	}
	return SC_CLI_GO_ON;
}

void sc_cli_slot_text(const struct sc_slot *s, char *buf, size_t len)
{
	if (s->kdf == SC_KDF_KEYFILE)
		snprintf(buf, len, "key file");
	else if (s->kdf == SC_KDF_ARGON2ID)
		snprintf(buf, len, "password, argon2id t=%" PRIu32 " m=%" PRIu32 " p=%" PRIu32,
			 s->argon2_t, s->argon2_m, s->argon2_p);
	else
		snprintf(buf, len, "password, scrypt N=%" PRIu64 " r=%" PRIu32 " p=%" PRIu32,
			 s->scrypt_n, s->scrypt_r, s->scrypt_p);
}
