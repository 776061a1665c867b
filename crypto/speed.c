/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * speed.c - "stackcrypt speed": single-thread throughput of the data-unit
 * path exactly as the translators call it (sc_fkey_encrypt /
 * sc_fkey_decrypt for the length-preserving ciphers, sc_gcm_seal /
 * sc_gcm_open for aes-gcm, on 128 KiB ranges, the size of a FUSE
 * read-ahead or large write), with a throwaway random key.
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

/* What one measurement works on: a file key of one kind, len plaintext bytes. */
struct speed_ctx {
	struct sc_fkey	*fk;	/* the length-preserving ciphers */
	struct sc_gkey	*gk;	/* aes-gcm */
	uint8_t		*buf;	/* len bytes of plaintext */
	uint8_t		*out;	/* the stored form, slen bytes */
	size_t		len, slen;
};

/*
 * One call of the data path.  The length-preserving ciphers encrypt out of
 * place and decrypt in place, as the crypt translator does; aes-gcm seals
 * into out and opens what the sealing left there (enc runs first).  0 or
 * -errno.
 */
static int one_call(const struct speed_ctx *c, int enc)
{
	int ret;

	if (c->gk) {
		ret = enc ? sc_gcm_seal(c->gk, 0, c->buf, c->len, c->out)
			  : sc_gcm_open(c->gk, 0, c->out, c->slen, c->buf, NULL);
		return ret < 0 ? ret : 0;
	}
	return enc ? sc_fkey_encrypt(c->fk, 0, c->buf, c->out, c->len, c->len)
		   : sc_fkey_decrypt(c->fk, 0, c->buf, c->buf, c->len, c->len);
}

/*
 * Runs enc or dec for about `seconds` of this thread's CPU time; MB/s of
 * plaintext (10^6 bytes per CPU second) in *mbps.
 */
static int run(const struct speed_ctx *c, int enc, double seconds, double *mbps)
{
	double t0 = now(), t;
	uint64_t bytes = 0;
	int ret;

	do {
		for (int i = 0; i < 16; i++) {
			ret = one_call(c, enc);
			if (ret != 0)
				return ret;
			bytes += c->len;
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
	struct speed_ctx c = { .len = block_size > SPEED_CALL ? block_size : SPEED_CALL };
	struct sc_mkey *m;
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
	c.slen = c.len;
	if (cipher == SC_CIPHER_AES_GCM) {
		c.slen = sc_gcm_stored_len(block_size, c.len);
		ret = sc_ghdr_new(m, hdr);
		if (ret == 0)
			ret = sc_gkey_new(m, hdr, SC_GHDR_SIZE, &c.gk);
	} else {
		ret = sc_hdr_new(m, hdr);
		if (ret > 0)
			ret = sc_fkey_new(m, hdr, (size_t)ret, &c.fk);
	}
	if (ret != 0)
		goto out_free_mkey;
	c.buf = malloc(c.len + c.slen);
	if (c.buf == NULL) {
		ret = -ENOMEM;
		goto out_free_key;
	}
	c.out = c.buf + c.len;
	ret = sc_random(c.buf, c.len);	/* random data: no all-zero (hole) units */
	if (ret == 0)
		ret = run(&c, 1, seconds, enc_mbps);
	if (ret == 0)
		ret = run(&c, 0, seconds, dec_mbps);
	free(c.buf);
out_free_key:
	sc_fkey_free(c.fk);
	sc_gkey_free(c.gk);
out_free_mkey:
	sc_mkey_free(m);
	return ret;
}
