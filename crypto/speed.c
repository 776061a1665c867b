/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * speed.c - "stackcrypt speed": single-thread throughput of the data-unit
 * path exactly as the crypt translator calls it (sc_fkey_encrypt /
 * sc_fkey_decrypt on 128 KiB ranges, the size of a FUSE read-ahead or
 * large write), with a throwaway random key.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "crypto_i.h"

#define SPEED_CALL	(128 * 1024)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Runs enc or dec for about `seconds` of this thread's CPU time; MB/s
 * (10^6 bytes per CPU second) in *mbps.  Encrypt out of place, decrypt in
 * place, as the crypt translator does.
 */
static int run(struct sc_fkey *fk, uint8_t *buf, uint8_t *out, size_t len, int enc,
	       double seconds, double *mbps)
{
	double t0 = now(), t;
	uint64_t bytes = 0;
	int ret;

	do {
		for (int i = 0; i < 16; i++) {
			ret = enc ? sc_fkey_encrypt(fk, 0, buf, out, len, len)
				  : sc_fkey_decrypt(fk, 0, buf, buf, len, len);
			if (ret != 0)
				return ret;
			bytes += len;
		}
		t = now() - t0;
	} while (t < seconds);
	*mbps = (double)bytes / t / 1e6;
	return 0;
}

/* 0, -EINVAL (cipher, block size or seconds), -ENOMEM or -EIO. */
int sc_speed_measure(enum sc_cipher_id cipher, uint32_t block_size, double seconds,
		     double *enc_mbps, double *dec_mbps)
{
	uint8_t mk[SC_MASTER_KEY_LEN], hdr[SC_HDR_MAX];
	size_t len = block_size > SPEED_CALL ? block_size : SPEED_CALL;
	struct sc_mkey *m;
	struct sc_fkey *fk;
	uint8_t *buf;
	int ret;

	if (!(seconds > 0 && seconds < 3600))
		return -EINVAL;
	ret = sc_random(mk, sizeof(mk));
	if (ret != 0)
		return ret;
	ret = sc_mkey_new(mk, cipher, block_size, &m);
	sc_wipe(mk, sizeof(mk));
	if (ret != 0)
		return ret;
	ret = sc_hdr_new(m, hdr);
	if (ret > 0)
		ret = sc_fkey_new(m, hdr, (size_t)ret, &fk);
	if (ret != 0)
		goto out_free_mkey;
	buf = malloc(2 * len);
	if (buf == NULL) {
		ret = -ENOMEM;
		goto out_free_fkey;
	}
	ret = sc_random(buf, len);	/* random data: no all-zero (hole) units */
	if (ret == 0)
		ret = run(fk, buf, buf + len, len, 1, seconds, enc_mbps);
	if (ret == 0)
		ret = run(fk, buf, buf + len, len, 0, seconds, dec_mbps);
	free(buf);
out_free_fkey:
	sc_fkey_free(fk);
out_free_mkey:
	sc_mkey_free(m);
	return ret;
}
