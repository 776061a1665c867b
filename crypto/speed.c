/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * speed.c - "stackcrypt speed": single-thread throughput of the data-unit
 * path exactly as the translators call it (sc_fkey_encrypt /
 * sc_fkey_decrypt for the length-preserving ciphers, sc_gcm_seal /
 * sc_gcm_open for aes-gcm, on 128 KiB ranges, the size of a FUSE
 * read-ahead or large write), with a throwaway random key.  And the
 * password KDFs: the time of one unlock at a cost, and the Argon2id cost
 * that takes a given time here (init's choice, as cryptsetup benchmark
 * makes it).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "crypto_i.h"

#define SPEED_CALL	(128 * 1024)

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
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

/* ---- password KDFs ---- */

/*
 * The process's CPU time, not the wall clock: like cryptsetup's benchmark,
 * a loaded machine must not make the cost chosen lower (an unlock here,
 * later and idle, would take less than the target, and so would a guess).
 * The page faults of the KDF's memory are system time, counted too.
 */
int sc_kdf_time(const struct sc_slot *s, double *seconds)
{
	static const char pass[] = "stackcrypt speed";
	uint8_t salt[32], out[32];
	double t0;
	int ret;

	ret = sc_random(salt, sizeof(salt));
	if (ret != 0)
		return ret;
	t0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	if (s->kdf == SC_KDF_ARGON2ID)
		ret = sc_argon2id(pass, sizeof(pass) - 1, salt, sizeof(salt), s->argon2_t,
				  s->argon2_m, s->argon2_p, out, sizeof(out));
	else if (s->kdf == SC_KDF_SCRYPT)
		ret = sc_scrypt(pass, sizeof(pass) - 1, salt, sizeof(salt), s->scrypt_n,
				s->scrypt_r, s->scrypt_p, out, sizeof(out));
	else
		ret = -EINVAL;	/* a key file has no KDF to time */
	*seconds = clock_s(CLOCK_PROCESS_CPUTIME_ID) - t0;
	sc_wipe(out, sizeof(out));
	return ret;
}

#define ARGON2_T_LEAST	3
#define ARGON2_M_LEAST	(64u * 1024)	/* KiB */

/* m KiB scaled by target / took, whole MiB, within [ARGON2_M_LEAST, max]. */
static uint32_t scale_m(uint32_t m, double took, double target, uint32_t max)
{
	double want = (double)m * target / (took > 1e-6 ? took : 1e-6);

	if (want >= (double)max)
		return max;
	if (want <= ARGON2_M_LEAST)
		return ARGON2_M_LEAST;
	return (uint32_t)want / 1024 * 1024;
}

int sc_argon2_choose(double target, uint32_t mem_max, struct sc_slot *s)
{
	double took;
	int ret;

	if (!(target > 0 && target < 3600) || mem_max < ARGON2_M_LEAST)
		return -EINVAL;
	if (mem_max > SC_ARGON2_M_MAX)
		mem_max = SC_ARGON2_M_MAX;
	s->kdf = SC_KDF_ARGON2ID;
	s->scrypt_n = s->scrypt_r = s->scrypt_p = 0;
	s->argon2_t = ARGON2_T_LEAST;
	s->argon2_p = 1;
	s->argon2_m = ARGON2_M_LEAST;
	/* a short run to scale from, then one at the scaled cost to correct it */
	ret = sc_kdf_time(s, &took);
	if (ret != 0 || took >= target)
		return ret;
	s->argon2_m = scale_m(s->argon2_m, took, target, mem_max);
	ret = sc_kdf_time(s, &took);
	if (ret != 0)
		return ret;
	if (s->argon2_m < mem_max || took > target) {
		s->argon2_m = scale_m(s->argon2_m, took, target, mem_max);
		return 0;
	}
	/* the memory at its cap: more passes over it, as far as the bounds allow */
	{
		double t = (double)s->argon2_t * target / took;
		uint64_t tmax = SC_ARGON2_WORK_MAX / s->argon2_m;

		if (tmax > SC_ARGON2_T_MAX)
			tmax = SC_ARGON2_T_MAX;
		s->argon2_t = t >= (double)tmax ? (uint32_t)tmax : (uint32_t)t;
		if (s->argon2_t < ARGON2_T_LEAST)
			s->argon2_t = ARGON2_T_LEAST;
	}
	return 0;
}
