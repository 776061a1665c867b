/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_info.c - stackcrypt info: what a volume's config says, without a secret.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "sc_cmd.h"
#include "sc_volume.h"
#include "sc_cli.h"
#include "keyslot_i.h"


static const char info_help[] =
"Usage: stackcrypt info BACKING\n"
"Show the volume's config without asking for the password: format version,\n"
"cipher, block size, key derivation and its parameters (of each key slot),\n"
"feature flags, whether names are encrypted, uuid, creation time.\n"
"\n"
"Options:\n"
"  -h, --help           show this help\n";

int sc_cmd_info(int argc, char **argv)
{
	static const char cmd[] = "info";
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct sc_config cfg;
	const char *backing;
	char err[512], when[64];
	const uint8_t *u;
	struct tm tm;
	time_t t;
	int r;

	r = sc_cli_parse(cmd, argc, argv, ":h", opts, info_help, NULL, NULL, &backing);
	if (r != SC_CLI_GO_ON)
		return r;
	r = sc_vol_config_read(backing, "stackcrypt info", &cfg, err, sizeof(err));
	if (r)
		return sc_cli_fail(cmd, r, err);
	sc_vol_warn_plaintext("stackcrypt info", backing, &cfg);
	t = (time_t)cfg.created;
	if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(when, sizeof(when), "%" PRId64 " (Unix time)", cfg.created);
	u = cfg.uuid;
	printf("volume:      %s\n", backing);
	printf("format:      %" PRIu32 " (of this config file)\n", cfg.format);
	printf("cipher:      %s\n", sc_cipher_name(cfg.cipher) ? sc_cipher_name(cfg.cipher) : "?");
	printf("block size:  %" PRIu32 "\n", cfg.block_size);
	if (cfg.format < SC_CONFIG_FORMAT_SLOTS && cfg.kdf == SC_KDF_KEYFILE)
		printf("key:         key file (KEK = HKDF-SHA256 of the file's 256-bit key)\n");
	else if (cfg.format < SC_CONFIG_FORMAT_SLOTS)
		printf("key:         password, scrypt N=%" PRIu64 " r=%" PRIu32 " p=%" PRIu32 "\n",
		       cfg.scrypt_n, cfg.scrypt_r, cfg.scrypt_p);
	for (unsigned i = 0; cfg.format >= SC_CONFIG_FORMAT_SLOTS && i < SC_SLOTS_MAX; i++) {
		char kind[96];

		if (!cfg.slots[i].used)
			continue;
		sc_cli_slot_text(&cfg.slots[i], kind, sizeof(kind));
		printf("key slot %u:  %s: %s\n", i, cfg.slots[i].label, kind);
	}
	printf("features:    0x%" PRIx64 "%s%s\n", cfg.features,
	       cfg.cipher == SC_CIPHER_AES_GCM ?
	       " (authenticated units; the per-file headers are inside the files: "
	       "docs/format.md section 10" :
	       cfg.features & SC_FEAT_HDR_V2 ?
	       " (new files get version 2 headers: the per-file header format" :
	       " (none: new files get version 1 headers: the per-file header format",
	       cfg.features & SC_FEAT_NAMES_BOUND ?
	       "; encrypt-names; nonce records bound to their directories)" :
	       cfg.features & SC_FEAT_NAMES ? "; encrypt-names)" : ")");
	if (cfg.features & SC_FEAT_INTEGRITY)
		printf("integrity:   files bound to their entries and their sizes%s%s "
		       "(docs/format.md section 11)\n", cfg.features & SC_FEAT_UNIT_TREE ?
		       ", and their units to a unit tree (feature 0x20, 11.10)" : "",
		       cfg.features & SC_FEAT_DIR_LISTS ? "; directories' listings and versions" : "");
	if (cfg.features & (SC_FEAT_UPGRADING | SC_FEAT_LISTS_UPGRADING))
		printf("upgrade:     under way, stopped%s: no command but 'stackcrypt upgrade' opens "
		       "the volume, which finishes it (docs/format.md 11.12)\n",
		       cfg.features & SC_FEAT_LISTS_UPGRADING ? " (directories' listing records)" : "");
	printf("names:       %s\n", cfg.features & SC_FEAT_LINKS_BOUND ?
	       "encrypted (AES-256-SIV, per-directory nonce; symlink targets too, bound to "
	       "their entry, up to 4095 bytes)" :
	       cfg.features & SC_FEAT_NAMES ?
	       "encrypted (AES-256-SIV, per-directory nonce; symlink targets too)" :
	       "in the clear (names and symlink targets are stored as they are)");
	printf("uuid:        %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	       "%02x%02x%02x%02x%02x%02x\n", u[0], u[1], u[2], u[3], u[4], u[5], u[6],
	       u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	printf("created:     %s\n", when);
	return SC_EXIT_OK;
}
