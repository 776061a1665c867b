/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * volopts_i.h - what the volume commands (cmd_init.c, cmd_passwd.c,
 * cmd_info.c, cmd_speed.c) share: their long option codes and the parsers
 * of the values they take (volopts.c).  Each parser prints its own
 * one-line error and returns SC_EXIT_USAGE on a bad value, 0 otherwise.
 */
#ifndef SC_CLI_VOLOPTS_I_H
#define SC_CLI_VOLOPTS_I_H

#include <stdbool.h>
#include <stdint.h>

#include "sc_crypto.h"
#include "sc_volume.h"

/* Long options shared by the commands that take a secret. */
enum {
	OPT_KEYFILE = 0x100,
	OPT_PASSFILE,
	OPT_EXTPASS,
	OPT_MASTERKEY,
	OPT_PASSWORD,
	OPT_NEW_KEYFILE,
	OPT_NEW_PASSFILE,
	OPT_NEW_EXTPASS,
	OPT_NEW_PASSWORD,
	OPT_CIPHER,
	OPT_BLOCK_SIZE,
	OPT_SCRYPT_N,
	OPT_FORCE,
	OPT_HEADER_VERSION,
	OPT_SECONDS,
	OPT_REPAIR,
	OPT_SAVE_MASTERKEY,
	OPT_ABANDON_FILES,
	OPT_ENCRYPT_NAMES,
	OPT_PLAINTEXT_NAMES,
	OPT_KDF,
	OPT_ARGON2_T,
	OPT_ARGON2_M,
	OPT_LABEL,
	OPT_SLOT,
	OPT_NO_KDF,
	OPT_INTEGRITY,
	OPT_NO_DIR_LISTS,
	OPT_UNIT_TREE,
	OPT_ALSO_PASSFILE,
	OPT_ALSO_KEYFILE,
	OPT_PROGRESS,
	OPT_REVERSE,
	OPT_CONFIG,
	OPT_STATE_DIR,
};

/* scrypt cost: a power of two in the range the config accepts (N KiB per unlock, r = 8). */
#define SCRYPT_N_MIN	(1u << 10)
#define SCRYPT_N_MAX	SC_SCRYPT_N_MAX

/* Strict unsigned parse: digits only, no overflow.  0 or -EINVAL (prints nothing). */
int sc_cli_parse_u64(const char *s, uint64_t *out);
int sc_cli_parse_cipher(const char *cmd, const char *arg, enum sc_cipher_id *out);
int sc_cli_parse_block_size(const char *cmd, const char *arg, uint32_t *out);
int sc_cli_parse_scrypt_n(const char *cmd, const char *arg, uint64_t *out);
/* A password wrapped with a cost below the defaults makes each guess cheaper: say so. */
void sc_cli_warn_weak_kdf(const char *cmd, const struct sc_slot *s);
/* c is one of OPT_KEYFILE .. OPT_NEW_PASSWORD: sc_cli_secret_opt with its name. */
int sc_cli_secret_option(const char *cmd, int c, const char *arg, struct sc_secret_src *src,
			 bool *given);

#endif
