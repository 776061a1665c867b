/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_speed.c - stackcrypt speed: the ciphers and the KDF timed on this machine
 * (crypto/speed.c).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_cmd.h"
#include "sc_cli.h"
#include "keyslot_i.h"
#include "volopts_i.h"


static const char speed_help[] =
"Usage: stackcrypt speed [OPTIONS]\n"
"Measure encryption and decryption speed on one thread (MB/s = 10^6 bytes per\n"
"second, i.e. per core) for each cipher, in data units of the block size; then\n"
"the CPU time of one unlock with each password KDF at the cost init would\n"
"give a new volume here (scrypt's default; Argon2id's measured for about a\n"
"second).\n"
"\n"
"Options:\n"
"  --block-size=N       data unit in bytes, 512..65536 (default 4096)\n"
"  --seconds=S          time per cipher and direction, 0.05..60 (default 1)\n"
"  --no-kdf             the ciphers only\n"
"  -h, --help           show this help\n";

/* What `stackcrypt speed` was asked for. */
struct speed_opts {
	uint32_t	block_size;
	double		seconds;
	bool		no_kdf;
};

/* One of speed's options into o (a struct speed_opts).  0 or the exit status. */
static int speed_option(void *o_, const char *cmd, int c, char *arg)
{
	struct speed_opts *o = o_;
	char *end;

	if (c == OPT_BLOCK_SIZE)
		return sc_cli_parse_block_size(cmd, arg, &o->block_size);
	if (c == OPT_NO_KDF) {
		o->no_kdf = true;
		return 0;
	}
	/* OPT_SECONDS */
	o->seconds = strtod(arg, &end);
	if (end == arg || *end || !(o->seconds >= 0.05 && o->seconds <= 60))
		return sc_cli_usage(cmd, "invalid --seconds '%s': want 0.05 to 60", arg);
	return 0;
}

/*
 * One unlock of each password KDF at init's cost for a new volume: scrypt
 * at its default, Argon2id at the cost measured here (keyslot.c's path).
 */
static int speed_kdfs(const char *cmd)
{
	struct sc_cli_kdf k[2] = { { .kdf = SC_KDF_SCRYPT }, { .kdf = SC_KDF_ARGON2ID } };
	struct sc_slot s;
	char text[96];
	double secs;
	int r;

	printf("\n%-9s %-34s %10s %10s\n", "kdf", "cost (init's for a new volume)", "memory",
	       "CPU s");
	fflush(stdout);
	for (size_t i = 0; i < 2; i++) {
		memset(&s, 0, sizeof(s));
		r = sc_cli_slot_cost(cmd, &k[i], false, &s);
		if (r != SC_CLI_GO_ON)
			return r;
		r = sc_kdf_time(&s, &secs);
		if (r) {
			sc_cli_err(cmd, "%s: %s", sc_kdf_name(s.kdf), strerror(-r));
			return SC_EXIT_FAIL;
		}
		sc_cli_slot_text(&s, text, sizeof(text));
		printf("%-9s %-34s %6" PRIu64 " MiB %10.2f\n", sc_kdf_name(s.kdf),
		       strchr(text, ' ') + 1 + strlen(sc_kdf_name(s.kdf)) + 1,
		       s.kdf == SC_KDF_SCRYPT ? 128 * s.scrypt_r * s.scrypt_n >> 20 :
		       (uint64_t)s.argon2_m >> 10, secs);
		fflush(stdout);
	}
	printf("(one unlock each, CPU seconds of this process; a wrong password costs the\n"
	       " same for every password slot it is tried on)\n");
	return SC_EXIT_OK;
}

int sc_cmd_speed(int argc, char **argv)
{
	static const char cmd[] = "speed";
	static const struct option opts[] = {
		{ "block-size",	required_argument, NULL, OPT_BLOCK_SIZE },
		{ "seconds",	required_argument, NULL, OPT_SECONDS },
		{ "no-kdf",	no_argument,	   NULL, OPT_NO_KDF },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const enum sc_cipher_id ciphers[] = {
		SC_CIPHER_NULL, SC_CIPHER_AES_XTS, SC_CIPHER_AES_CBC, SC_CIPHER_AES_GCM,
	};
	struct speed_opts o = { .block_size = SC_BLOCK_DEFAULT, .seconds = 1.0 };
	size_t i;
	int r;

	r = sc_cli_parse(cmd, argc, argv, ":h", opts, speed_help, speed_option, &o, NULL);
	if (r != SC_CLI_GO_ON)
		return r;
	if (optind < argc)
		return sc_cli_usage(cmd, "unexpected argument '%s'", argv[optind]);

	printf("%-9s %6s %14s %14s\n", "cipher", "block", "encrypt MB/s", "decrypt MB/s");
	fflush(stdout);
	for (i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++) {
		double enc, dec;

		r = sc_speed_measure(ciphers[i], o.block_size, o.seconds, &enc, &dec);
		if (r) {
			sc_cli_err(cmd, "%s: %s", sc_cipher_name(ciphers[i]), strerror(-r));
			return SC_EXIT_FAIL;
		}
		printf("%-9s %6" PRIu32 " %14.1f %14.1f\n", sc_cipher_name(ciphers[i]),
		       o.block_size, enc, dec);
		fflush(stdout);
	}
	printf("(one thread each; null does no work: its figure is the cost of the\n"
	       " loop around the cipher)\n");
	return o.no_kdf ? SC_EXIT_OK : speed_kdfs(cmd);
}
