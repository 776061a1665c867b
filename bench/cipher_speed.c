/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cipher_speed - single-core throughput of the stackcrypt data-unit path
 * (sc_fkey_encrypt / sc_fkey_decrypt) for null, aes-xts and aes-cbc at a
 * given unit size, beside what OpenSSL itself does on the same core:
 *
 *   openssl  `openssl speed -evp <cipher> -bytes <unit>` (run via popen):
 *            one EVP_CipherUpdate per unit on an initialised context, no
 *            per-unit IV/tweak - the ceiling;
 *   evp      the same loop as openssl speed, in this process and measured
 *            with this program's clock (checks the two clocks agree);
 *   evp+iv   a plain EVP loop here that also resets the IV/tweak per unit
 *            through EVP_CipherInit_ex2 (what a straightforward EVP
 *            implementation of per-unit tweaks pays);
 *   sc/call  our path with many units per call (128 KiB, a FUSE
 *            read-ahead or large write) and with one unit per call.
 *
 * The aes-gcm row is the authenticated format (docs/format.md section 10):
 * sc_gcm_seal / sc_gcm_open of units of UNIT plaintext bytes (each stored
 * with a random 16-byte nonce and a tag; MB/s count plaintext bytes),
 * beside `openssl speed -evp aes-256-gcm` and a bare EVP loop (no tag, no
 * per-unit IV: the ceiling).  Last, the cost of a 16-byte nonce from
 * getrandom(2) and from OpenSSL's RAND_bytes.
 *
 * Usage: cipher_speed [-s SECONDS] [-b UNIT] [-r REPEAT] [-n (no openssl speed)]
 * Output: one table, MB/s = 10^6 bytes per second of CPU time of one
 * thread (CLOCK_THREAD_CPUTIME_ID; `openssl speed` also counts CPU time), so
 * other load on the machine does not count as our cost; each cell is the
 * best of REPEAT runs (default 3), interleaved across columns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include "sc_crypto.h"
#include "crypto_i.h"	/* sc_cipher_fast_path() */

#define CALL_BYTES	(128 * 1024)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double max(double a, double b)
{
	return a > b ? a : b;
}

/*
 * sc_fkey path: calls of `call` bytes over a file of `call` bytes; encrypt
 * out of place and decrypt in place, as the crypt translator does (so null
 * encrypt is a memcpy and null decrypt only the hole check).
 */
static double sc_rate(struct sc_fkey *fk, uint8_t *buf, uint8_t *out, size_t call, int enc,
		      double secs)
{
	double t0 = now(), t;
	uint64_t bytes = 0;

	do {
		for (int i = 0; i < 64; i++) {
			int ret = enc ? sc_fkey_encrypt(fk, 0, buf, out, call, call)
				      : sc_fkey_decrypt(fk, 0, buf, buf, call, call);
			if (ret != 0) {
				fprintf(stderr, "cipher_speed: sc_fkey: %s\n", strerror(-ret));
				exit(1);
			}
			bytes += call;
		}
		t = now() - t0;
	} while (t < secs);
	return (double)bytes / t / 1e6;
}

/* sc_gcm path, as sc_rate: seal pt -> st out of place, open st -> pt. */
static double gcm_rate(struct sc_gkey *gk, uint8_t *pt, uint8_t *st, size_t call, int enc,
		       double secs)
{
	size_t slen = (size_t)sc_gcm_stored_len(sc_gkey_block_size(gk), call);
	double t0 = now(), t;
	uint64_t bytes = 0;

	if (sc_gcm_seal(gk, 0, pt, call, st) != 0)
		return -1;
	t0 = now();
	do {
		for (int i = 0; i < 64; i++) {
			int ret = enc ? sc_gcm_seal(gk, 0, pt, call, st)
				      : sc_gcm_open(gk, 0, st, slen, pt, NULL);
			if (ret < 0) {
				fprintf(stderr, "cipher_speed: sc_gcm: %s\n", strerror(-ret));
				exit(1);
			}
			bytes += call;
		}
		t = now() - t0;
	} while (t < secs);
	return (double)bytes / t / 1e6;
}

/* Nanoseconds per 16-byte draw: getrandom (sc_random) or RAND_bytes. */
static double nonce_ns(int ossl, double secs)
{
	uint8_t n[16];
	double t0 = now(), t;
	uint64_t calls = 0;

	do {
		for (int i = 0; i < 256; i++)
			if ((ossl ? RAND_bytes(n, 16) != 1 : sc_random(n, 16) != 0))
				return -1;
		calls += 256;
		t = now() - t0;
	} while (t < secs);
	return t / (double)calls * 1e9;
}

/* Plain EVP; with reset_iv, the IV/tweak is set per unit (ESSIV not included for CBC). */
static double evp_rate(const char *name, size_t unit, uint8_t *buf, int enc, int reset_iv,
		       double secs)
{
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, NULL);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	uint8_t key[64], iv[16] = { 0 };
	double t0, t;
	uint64_t bytes = 0, idx = 0;
	int outl;

	for (int i = 0; i < 64; i++)
		key[i] = (uint8_t)(i * 13 + 1);
	if (c == NULL || ctx == NULL || EVP_CipherInit_ex2(ctx, c, key, iv, enc, NULL) != 1)
		return -1;
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	t0 = now();
	do {
		for (int i = 0; i < 1024; i++) {
			memcpy(iv, &idx, sizeof(idx));
			idx++;
			if ((reset_iv && EVP_CipherInit_ex2(ctx, NULL, NULL, iv, -1, NULL) != 1) ||
			    EVP_CipherUpdate(ctx, buf, &outl, buf, (int)unit) != 1)
				return -1;
			bytes += unit;
		}
		t = now() - t0;
	} while (t < secs);
	EVP_CIPHER_CTX_free(ctx);
	EVP_CIPHER_free(c);
	return (double)bytes / t / 1e6;
}

/* `openssl speed -evp NAME -bytes UNIT [-decrypt]`; MB/s or -1. */
static double openssl_rate(const char *name, size_t unit, int enc, double secs)
{
	char cmd[256], line[512], last[512] = "";
	double kbps = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "openssl speed -evp %s -bytes %zu -seconds %d %s 2>/dev/null",
		 name, unit, secs < 1 ? 1 : (int)secs, enc ? "" : "-decrypt");
	p = popen(cmd, "r");
	if (p == NULL)
		return -1;
	while (fgets(line, sizeof(line), p) != NULL)
		if (strncasecmp(line, name, strlen(name)) == 0)
			memcpy(last, line, sizeof(last));
	pclose(p);
	/* "AES-256-XTS   4718723.21k": thousands of bytes per second */
	if (sscanf(last + strlen(name), " %lfk", &kbps) != 1)
		return -1;
	return kbps * 1000 / 1e6;
}

int main(int argc, char **argv)
{
	static const struct { enum sc_cipher_id id; const char *evp; } ciphers[] = {
		{ SC_CIPHER_NULL, NULL },
		{ SC_CIPHER_AES_XTS, "aes-256-xts" },
		{ SC_CIPHER_AES_CBC, "aes-256-cbc" },
	};
	double secs = 1.0;
	size_t unit = 4096;
	int use_openssl = 1, repeat = 3, opt;
	uint8_t *buf, *out;

	while ((opt = getopt(argc, argv, "s:b:r:nh")) != -1) {
		switch (opt) {
		case 's': secs = atof(optarg); break;
		case 'r': repeat = atoi(optarg); break;
		case 'b': unit = (size_t)atol(optarg); break;
		case 'n': use_openssl = 0; break;
		default:
			fprintf(stderr, "usage: %s [-s SECONDS] [-b UNIT] [-r REPEAT] [-n]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (sc_block_size_check(unit) != 0 || secs <= 0 || repeat < 1) {
		fprintf(stderr, "cipher_speed: bad unit size or duration\n");
		return 2;
	}
	buf = malloc(CALL_BYTES > unit ? CALL_BYTES : unit);
	out = malloc(CALL_BYTES > unit ? CALL_BYTES : unit);
	if (buf == NULL || out == NULL || sc_random(buf, CALL_BYTES > unit ? CALL_BYTES : unit) != 0)
		return 1;
	printf("unit %zu bytes, MB/s (10^6 B) per CPU-second of one thread, best of %d x %.1f s\n",
	       unit, repeat, secs);
	printf("per-unit IV reset: %s\n", sc_cipher_fast_path() ? "provider dispatch (fast path)"
							     : "EVP_CipherInit_ex2");
	printf("%-8s %-4s %9s %9s %9s %9s %9s %8s\n", "cipher", "dir", "openssl", "evp",
	       "evp+iv", "sc/128K", "sc/unit", "sc/evp");
	for (size_t i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++) {
		uint8_t mk[SC_MASTER_KEY_LEN], hdr[SC_HDR_MAX];
		int hlen;
		struct sc_mkey *m;
		struct sc_fkey *fk;

		if (sc_random(mk, sizeof(mk)) != 0 ||
		    sc_mkey_new(mk, ciphers[i].id, (uint32_t)unit, &m) != 0 ||
		    (hlen = sc_hdr_new(m, hdr)) <= 0 ||
		    sc_fkey_new(m, hdr, (size_t)hlen, &fk) != 0) {
			fprintf(stderr, "cipher_speed: key setup failed\n");
			return 1;
		}
		for (int enc = 1; enc >= 0; enc--) {
			double ossl = -1, evp = -1, evpiv = -1, big = 0, one = 0;

			for (int r = 0; r < repeat; r++) {
				if (ciphers[i].evp != NULL) {
					if (use_openssl)
						ossl = max(ossl, openssl_rate(ciphers[i].evp, unit, enc, secs));
					evp = max(evp, evp_rate(ciphers[i].evp, unit, buf, enc, 0, secs));
					evpiv = max(evpiv, evp_rate(ciphers[i].evp, unit, buf, enc, 1, secs));
				}
				big = max(big, sc_rate(fk, buf, out, CALL_BYTES > unit ? CALL_BYTES : unit,
							 enc, secs));
				one = max(one, sc_rate(fk, buf, out, unit, enc, secs));
			}
			printf("%-8s %-4s %9.0f %9.0f %9.0f %9.0f %9.0f %7.0f%%\n",
			       sc_cipher_name(ciphers[i].id), enc ? "enc" : "dec", ossl, evp, evpiv,
			       big, one, evp > 0 ? 100.0 * big / evp : 0.0);
			fflush(stdout);
		}
		sc_fkey_free(fk);
		sc_mkey_free(m);
	}
	{
		/* the authenticated format: stored buffer holds 32 more bytes per unit */
		size_t call = CALL_BYTES > unit ? CALL_BYTES : unit;
		uint8_t mk[SC_MASTER_KEY_LEN], hdr[SC_GHDR_SIZE];
		uint8_t *st = malloc((size_t)sc_gcm_stored_len((uint32_t)unit, call));
		struct sc_mkey *m;
		struct sc_gkey *gk;

		if (st == NULL || sc_random(mk, sizeof(mk)) != 0 ||
		    sc_mkey_new(mk, SC_CIPHER_AES_XTS, (uint32_t)unit, &m) != 0 ||
		    sc_ghdr_new(m, hdr) != 0 || sc_gkey_new(m, hdr, sizeof(hdr), &gk) != 0) {
			fprintf(stderr, "cipher_speed: aes-gcm key setup failed\n");
			return 1;
		}
		for (int enc = 1; enc >= 0; enc--) {
			double ossl = -1, evp = -1, evpiv = -1, big = 0, one = 0;

			for (int r = 0; r < repeat; r++) {
				if (use_openssl)
					ossl = max(ossl, openssl_rate("aes-256-gcm", unit, enc, secs));
				evp = max(evp, evp_rate("aes-256-gcm", unit, buf, enc, 0, secs));
				evpiv = max(evpiv, evp_rate("aes-256-gcm", unit, buf, enc, 1, secs));
				big = max(big, gcm_rate(gk, buf, st, call, enc, secs));
				one = max(one, gcm_rate(gk, buf, st, unit, enc, secs));
			}
			printf("%-8s %-4s %9.0f %9.0f %9.0f %9.0f %9.0f %7.0f%%\n", "aes-gcm",
			       enc ? "enc" : "dec", ossl, evp, evpiv, big, one,
			       evp > 0 ? 100.0 * big / evp : 0.0);
			fflush(stdout);
		}
		printf("16-byte nonce: getrandom %.0f ns, RAND_bytes %.0f ns\n",
		       nonce_ns(0, secs / 4), nonce_ns(1, secs / 4));
		sc_gkey_free(gk);
		sc_mkey_free(m);
		free(st);
	}
	free(buf);
	free(out);
	return 0;
}
