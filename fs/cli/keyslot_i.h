/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * keyslot_i.h - one key slot given a new secret, the way init (slot 0),
 * passwd (the slot it replaces) and key add (a new slot) all do it
 * (keyslot.c): the KDF options they share, the cost chosen or measured,
 * the secret asked for, the master key wrapped.
 */
#ifndef SC_CLI_KEYSLOT_I_H
#define SC_CLI_KEYSLOT_I_H

#include <stdbool.h>
#include <stdint.h>

#include "sc_crypto.h"
#include "sc_volume.h"

/*
 * The KDF of a new password when no option names one: Argon2id, whose cost
 * init measures (docs/security.md, "Password KDF", has the numbers that
 * chose it).  An explicit --scrypt-n means scrypt.
 */
#define SC_CLI_KDF_DEFAULT	SC_KDF_ARGON2ID
/* The unlock time an Argon2id cost is measured for (cryptsetup's is 2 s). */
#define SC_CLI_KDF_TARGET_S	1.0
/* The most memory a measured Argon2id cost takes: 1 GiB, or a quarter of RAM. */
#define SC_CLI_ARGON2_M_CAP	(1024u * 1024)	/* KiB */

/* The KDF options of a command that sets a new password (--kdf, --scrypt-n, --argon2-*). */
struct sc_cli_kdf {
	enum sc_kdf_id	kdf;		/* of a new password, once sc_cli_kdf_done ran */
	bool		kdf_given;	/* --kdf */
	uint64_t	scrypt_n;	/* --scrypt-n, or 0 */
	uint32_t	argon2_t;	/* --argon2-t, or 0 (measured) */
	uint32_t	argon2_m;	/* --argon2-m in KiB, or 0 (measured) */
};

/* The getopt_long entries of those options, for a table whose enum is volopts_i.h's. */
#define SC_CLI_KDF_OPTIONS \
	{ "kdf",	required_argument, NULL, OPT_KDF }, \
	{ "scrypt-n",	required_argument, NULL, OPT_SCRYPT_N }, \
	{ "argon2-t",	required_argument, NULL, OPT_ARGON2_T }, \
	{ "argon2-m",	required_argument, NULL, OPT_ARGON2_M }

/*
 * The options of a command that takes a new secret beside the current one
 * (passwd, key): the master key as the current one, and the new secret.
 */
#define SC_CLI_NEW_SECRET_OPTIONS \
	{ "masterkey",		optional_argument, NULL, OPT_MASTERKEY }, \
	{ "new-keyfile",	required_argument, NULL, OPT_NEW_KEYFILE }, \
	{ "new-passfile",	required_argument, NULL, OPT_NEW_PASSFILE }, \
	{ "new-extpass",	required_argument, NULL, OPT_NEW_EXTPASS }, \
	{ "new-password",	optional_argument, NULL, OPT_NEW_PASSWORD }

/* --label's value (sc_slot_label_check) into *out.  0 or SC_EXIT_USAGE. */
int sc_cli_label_option(const char *cmd, const char *arg, const char **out);

/* What passwd and key are told on their command line. */
struct sc_cli_change {
	struct sc_secret_src	old_src, new_src;	/* the current secret, the new one */
	struct sc_cli_kdf	kdf;
	const char		*backing;
	const char		*label;		/* --label, or NULL */
	const char		*slot;		/* --slot, or NULL */
	bool			old_given, new_given;	/* a secret option was given */
};
/*
 * One of their options (an sc_cli_opt_fn): the secret options (OPT_KEYFILE
 * .. OPT_NEW_PASSWORD), the KDF's, OPT_LABEL and OPT_SLOT, into the struct
 * sc_cli_change o.  0 or the exit status.
 */
int sc_cli_change_option(void *o, const char *cmd, int c, char *arg);

/* c is OPT_KDF, OPT_SCRYPT_N, OPT_ARGON2_T or OPT_ARGON2_M.  0 or SC_EXIT_USAGE. */
int sc_cli_kdf_option(const char *cmd, int c, const char *arg, struct sc_cli_kdf *k);
/*
 * After the options: the KDF they name (an explicit cost names its KDF;
 * a cost of the other one is refused), else SC_CLI_KDF_DEFAULT.
 * 0 or SC_EXIT_USAGE.
 */
int sc_cli_kdf_done(const char *cmd, struct sc_cli_kdf *k);
/* Whether any of the options was given. */
bool sc_cli_kdf_given(const struct sc_cli_kdf *k);

/*
 * Slot s gets the cost of a new secret: none for a key file; for a
 * password, k's KDF at the cost given, or scrypt's default N, or an
 * Argon2id cost measured here (SC_CLI_KDF_TARGET_S).  SC_CLI_GO_ON, or
 * the exit status after the error.
 */
int sc_cli_slot_cost(const char *cmd, const struct sc_cli_kdf *k, bool keyfile,
		     struct sc_slot *s);

/*
 * The new secret from src (asked twice on a terminal) into slot i of cfg,
 * whose cost is set: a fresh salt, the master key mk wrapped, the config
 * MAC made anew.  SC_CLI_GO_ON, or the exit status after the error.
 */
int sc_cli_slot_wrap(const char *cmd, struct sc_config *cfg, unsigned i,
		     const struct sc_secret_src *src, const char *prompt, const uint8_t *mk);

/* "password, argon2id t=3 m=1048576 p=1" / "key file": slot s as info and key list show it. */
void sc_cli_slot_text(const struct sc_slot *s, char *buf, size_t len);

#endif
