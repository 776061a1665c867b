/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fkey.c - property tests of the per-file header and the data-unit
 * range rules over random inputs: round trips for every file size from 0
 * to 3 blocks + 17 (every cipher, block sizes 512 and 4096) with random
 * valid range splits, in place and out of place; determinism across
 * splits; distinct ciphertext per file and per offset; null is the
 * identity; holes; header tampering; tiny-file rekeying; range rule
 * violations; concurrent use of one fkey.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "sc_crypto.h"
#include "crypto_i.h"

static const enum sc_cipher_id ciphers[] = {
	SC_CIPHER_NULL, SC_CIPHER_AES_XTS, SC_CIPHER_AES_CBC,
};

static void rnd(void *buf, size_t len)
{
	cr_assert_eq(sc_random(buf, len), 0);
}

static struct sc_mkey *mkey(enum sc_cipher_id c, uint32_t bs)
{
	uint8_t mk[SC_MASTER_KEY_LEN];
	struct sc_mkey *m;

	rnd(mk, sizeof(mk));
	cr_assert_eq(sc_mkey_new(mk, c, bs, &m), 0);
	return m;
}

static struct sc_fkey *fkey(const struct sc_mkey *m, uint8_t hdr[SC_HDR_MAX])
{
	uint8_t local[SC_HDR_MAX];
	struct sc_fkey *fk;
	int len;

	if (hdr == NULL)
		hdr = local;
	len = sc_hdr_new(m, hdr);
	cr_assert_eq(len, (int)sc_hdr_size(sc_mkey_hdr_version(m)));
	cr_assert_eq(sc_fkey_new(m, hdr, (size_t)len, &fk), 0);
	return fk;
}

/* Random cut points at unit boundaries that keep the tail pair together. */
static size_t split(uint64_t fsize, uint32_t bs, uint64_t *cuts, unsigned seed)
{
	uint64_t last_start = fsize ? (fsize - 1) / bs * bs : 0;
	int tail_rule = fsize >= 16 && fsize - last_start < 16;
	size_t n = 0;

	cuts[n++] = 0;
	for (uint64_t b = bs; b < fsize; b += bs) {
		if (tail_rule && b == last_start)
			continue;
		if ((rand_r(&seed) & 1) != 0)
			cuts[n++] = b;
	}
	cuts[n++] = fsize;
	return n;
}

static int run_split(struct sc_fkey *fk, int enc, const uint8_t *in, uint8_t *out,
		     uint64_t fsize, unsigned seed)
{
	uint64_t cuts[64];
	size_t n = split(fsize, sc_fkey_block_size(fk), cuts, seed);

	for (size_t i = 0; i + 1 < n; i++) {
		uint64_t o = cuts[i], l = cuts[i + 1] - cuts[i];
		int ret = enc ? sc_fkey_encrypt(fk, o, in + o, out + o, l, fsize)
			      : sc_fkey_decrypt(fk, o, in + o, out + o, l, fsize);
		if (ret != 0)
			return ret;
	}
	return 0;
}

static void roundtrip_all_sizes(enum sc_cipher_id c, uint32_t bs)
{
	size_t max = 3 * (size_t)bs + 17;
	uint8_t *pt = malloc(max), *ct = malloc(max), *ct2 = malloc(max), *back = malloc(max);
	struct sc_mkey *m = mkey(c, bs);
	struct sc_fkey *fk = fkey(m, NULL);

	for (size_t fsize = 0; fsize <= max; fsize++) {
		unsigned seed = (unsigned)fsize * 7919u;

		rnd(pt, fsize);
		/* whole file, out of place */
		cr_assert_eq(sc_fkey_encrypt(fk, 0, pt, ct, fsize, fsize), 0,
			     "%s bs %u size %zu encrypt", sc_cipher_name(c), bs, fsize);
		/* random split, in place: same ciphertext */
		memcpy(ct2, pt, fsize);
		cr_assert_eq(run_split(fk, 1, ct2, ct2, fsize, seed), 0);
		cr_assert(memcmp(ct, ct2, fsize) == 0, "%s bs %u size %zu: split changes ciphertext",
			  sc_cipher_name(c), bs, fsize);
		if (c == SC_CIPHER_NULL)
			cr_assert(memcmp(ct, pt, fsize) == 0, "null is not the identity at %zu", fsize);
		else if (fsize >= 8)
			cr_assert(memcmp(ct, pt, fsize) != 0, "%s size %zu: ciphertext == plaintext",
				  sc_cipher_name(c), fsize);
		/* another random split, out of place */
		cr_assert_eq(run_split(fk, 0, ct, back, fsize, seed * 31u + 1), 0);
		cr_assert(memcmp(back, pt, fsize) == 0, "%s bs %u size %zu: decrypt(encrypt(x)) != x",
			  sc_cipher_name(c), bs, fsize);
		/* whole file, in place */
		cr_assert_eq(sc_fkey_decrypt(fk, 0, ct2, ct2, fsize, fsize), 0);
		cr_assert(memcmp(ct2, pt, fsize) == 0, "%s bs %u size %zu: in-place decrypt",
			  sc_cipher_name(c), bs, fsize);
	}
	sc_fkey_free(fk);
	sc_mkey_free(m);
	free(pt);
	free(ct);
	free(ct2);
	free(back);
}

Test(fkey, roundtrip_512)
{
	for (size_t i = 0; i < 3; i++)
		roundtrip_all_sizes(ciphers[i], 512);
}

Test(fkey, roundtrip_4096)
{
	for (size_t i = 0; i < 3; i++)
		roundtrip_all_sizes(ciphers[i], 4096);
}

Test(fkey, distinct_ciphertext_per_file_and_offset)
{
	for (size_t ci = 1; ci < 3; ci++) {
		struct sc_mkey *m = mkey(ciphers[ci], 4096);
		struct sc_fkey *a = fkey(m, NULL), *b = fkey(m, NULL);
		static uint8_t pt[8192], ca[8192], cb[8192];

		rnd(pt, 4096);
		memcpy(pt + 4096, pt, 4096);	/* same plaintext in unit 0 and unit 1 */
		cr_assert_eq(sc_fkey_encrypt(a, 0, pt, ca, sizeof(pt), sizeof(pt)), 0);
		cr_assert_eq(sc_fkey_encrypt(b, 0, pt, cb, sizeof(pt), sizeof(pt)), 0);
		cr_assert(memcmp(ca, cb, 4096) != 0, "two files, same ciphertext");
		cr_assert(memcmp(ca, ca + 4096, 4096) != 0, "two offsets, same ciphertext");
		/* no 16-byte block of the second unit equals the first unit's */
		for (int i = 0; i < 4096; i += 16)
			cr_assert(memcmp(ca + i, ca + 4096 + i, 16) != 0);
		sc_fkey_free(a);
		sc_fkey_free(b);
		sc_mkey_free(m);
	}
}

Test(fkey, holes_read_as_zeros)
{
	for (size_t ci = 0; ci < 3; ci++) {
		for (uint32_t bs = 512; bs <= 4096; bs *= 8) {
			uint64_t sizes[] = { 16, bs, 2 * bs + 100, 3 * (uint64_t)bs + 5, 3 * (uint64_t)bs };
			struct sc_mkey *m = mkey(ciphers[ci], bs);
			struct sc_fkey *fk = fkey(m, NULL);

			for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
				uint64_t fsize = sizes[si];
				uint8_t *pt = malloc(fsize), *ct = malloc(fsize), *out = malloc(fsize);

				/* an entirely sparse file */
				memset(ct, 0, fsize);
				memset(out, 0xa5, fsize);
				cr_assert_eq(sc_fkey_decrypt(fk, 0, ct, out, fsize, fsize), 0);
				for (uint64_t i = 0; i < fsize; i++)
					cr_assert_eq(out[i], 0, "%s hole byte %lu", sc_cipher_name(ciphers[ci]),
						     (unsigned long)i);
				/* data, with unit 0 punched out */
				if (fsize > 2 * bs) {
					rnd(pt, fsize);
					memset(pt, 0, bs);
					cr_assert_eq(sc_fkey_encrypt(fk, 0, pt, ct, fsize, fsize), 0);
					memset(ct, 0, bs);
					cr_assert_eq(sc_fkey_decrypt(fk, 0, ct, out, fsize, fsize), 0);
					cr_assert(memcmp(out, pt, fsize) == 0, "hole + data");
				}
				free(pt);
				free(ct);
				free(out);
			}
			sc_fkey_free(fk);
			sc_mkey_free(m);
		}
	}
}

Test(fkey, header_versions)
{
	struct sc_mkey *m = mkey(SC_CIPHER_AES_XTS, 4096);

	cr_assert_eq(sc_mkey_hdr_version(m), 2, "new volumes default to version 2");
	cr_assert_eq(sc_hdr_size(1), 72);
	cr_assert_eq(sc_hdr_size(2), 56);
	cr_assert_eq(sc_hdr_size(0), 0);
	cr_assert_eq(sc_hdr_size(3), 0);
	cr_assert_eq(sc_mkey_set_hdr_version(m, 0), -EINVAL);
	cr_assert_eq(sc_mkey_set_hdr_version(m, 3), -EINVAL);
	cr_assert_eq(sc_mkey_hdr_version(m), 2, "a refused version changed the mkey");
	sc_mkey_free(m);
}

Test(fkey, header_tamper_each_byte)
{
	for (size_t k = 0; k < 6; k++) {
		unsigned hv = 1 + (unsigned)(k % 2), tiny_off = hv == 1 ? 56 : 40;
		struct sc_mkey *m = mkey(ciphers[k / 2], 4096);
		uint8_t hdr[SC_HDR_MAX], bad[SC_HDR_MAX];
		struct sc_fkey *fk;
		int len;

		cr_assert_eq(sc_mkey_set_hdr_version(m, hv), 0);
		memset(hdr, 0, sizeof(hdr));
		len = sc_hdr_new(m, hdr);
		cr_assert_eq(len, hv == 1 ? 72 : 56);
		for (int i = 0; i < len; i++) {
			for (int bit = 0; bit < 8; bit += 7) {
				int ret;

				memcpy(bad, hdr, sizeof(bad));
				bad[i] ^= (uint8_t)(1u << bit);
				ret = sc_fkey_new(m, bad, (size_t)len, &fk);
				if (i == 0)
					cr_assert_eq(ret, -EPROTONOSUPPORT, "v%u bit %d: %d", hv, bit, ret);
				else if (i < (int)tiny_off)
					cr_assert_eq(ret, -EUCLEAN, "v%u byte %d bit %d: %d", hv, i, bit, ret);
				else {	/* the tiny IV is not authenticated (format.md) */
					cr_assert_eq(ret, 0);
					sc_fkey_free(fk);
				}
			}
		}
		cr_assert_eq(sc_fkey_new(m, hdr, (size_t)len - 1, &fk), -EINVAL);
		cr_assert_eq(sc_fkey_new(m, hdr, (size_t)len + 1, &fk), -EINVAL);
		cr_assert_eq(sc_fkey_new(m, hdr, 0, &fk), -EINVAL);
		/* relabelled as the other version: that version's size is wrong, and
		 * even at the right size the MAC (over the version byte) would fail */
		memcpy(bad, hdr, sizeof(bad));
		bad[0] = (uint8_t)(3 - hv);
		cr_assert_eq(sc_fkey_new(m, bad, (size_t)len, &fk), -EINVAL);
		cr_assert_eq(sc_fkey_new(m, bad, sc_hdr_size(3 - hv), &fk), -EUCLEAN);
		sc_mkey_free(m);
	}
}

Test(fkey, foreign_volume_and_wrong_parameters)
{
	uint8_t mk[SC_MASTER_KEY_LEN], hdr[SC_HDR_MAX];
	struct sc_mkey *a, *b, *c_other, *bs_other;
	struct sc_fkey *fk;
	size_t len;

	rnd(mk, sizeof(mk));
	cr_assert_eq(sc_mkey_new(mk, SC_CIPHER_AES_XTS, 4096, &a), 0);
	cr_assert_eq(sc_mkey_new(mk, SC_CIPHER_AES_CBC, 4096, &c_other), 0);
	cr_assert_eq(sc_mkey_new(mk, SC_CIPHER_AES_XTS, 512, &bs_other), 0);
	b = mkey(SC_CIPHER_AES_XTS, 4096);
	len = (size_t)sc_hdr_new(a, hdr);
	cr_assert_eq(sc_fkey_new(b, hdr, len, &fk), -EUCLEAN, "foreign header accepted");
	/* same master key, authentic header, but the volume says another cipher/size */
	cr_assert_eq(sc_fkey_new(c_other, hdr, len, &fk), -EINVAL);
	cr_assert_eq(sc_fkey_new(bs_other, hdr, len, &fk), -EINVAL);
	cr_assert_eq(sc_fkey_new(a, hdr, len, &fk), 0);
	sc_fkey_free(fk);
	/* a volume writing version 1 headers reads version 2 ones, and back */
	cr_assert_eq(sc_mkey_set_hdr_version(b, 1), 0);
	cr_assert_eq(sc_mkey_set_hdr_version(a, 1), 0);
	cr_assert_eq(sc_fkey_new(a, hdr, len, &fk), 0, "version 2 header refused by a v1 volume");
	sc_fkey_free(fk);
	len = (size_t)sc_hdr_new(a, hdr);
	cr_assert_eq(len, 72);
	cr_assert_eq(sc_mkey_set_hdr_version(a, 2), 0);
	cr_assert_eq(sc_fkey_new(a, hdr, len, &fk), 0, "version 1 header refused by a v2 volume");
	sc_fkey_free(fk);
	sc_mkey_free(a);
	sc_mkey_free(b);
	sc_mkey_free(c_other);
	sc_mkey_free(bs_other);
}

Test(fkey, tiny_rekey)
{
	for (size_t k = 0; k < 6; k++) {
		unsigned hv = 1 + (unsigned)(k % 2), tiny_off = hv == 1 ? 56 : 40;
		struct sc_mkey *m = mkey(ciphers[k / 2], 4096);
		uint8_t hdr[SC_HDR_MAX], hdr2[SC_HDR_MAX], pt[15], c1[15], c2[15], back[15];
		struct sc_fkey *fk, *re;
		int len;

		cr_assert_eq(sc_mkey_set_hdr_version(m, hv), 0);
		fk = fkey(m, hdr);
		rnd(pt, sizeof(pt));
		cr_assert_eq(sc_fkey_encrypt(fk, 0, pt, c1, sizeof(pt), sizeof(pt)), 0);
		len = sc_fkey_tiny_rekey(fk, hdr2);
		cr_assert_eq(len, (int)sc_hdr_size(hv), "rekey changed the header's version or size");
		cr_assert(memcmp(hdr, hdr2, tiny_off) == 0, "rekey changed the MACed part");
		cr_assert(memcmp(hdr + tiny_off, hdr2 + tiny_off, 16) != 0);
		cr_assert_eq(sc_fkey_encrypt(fk, 0, pt, c2, sizeof(pt), sizeof(pt)), 0);
		if (ciphers[k / 2] == SC_CIPHER_NULL)
			cr_assert(memcmp(c1, pt, 15) == 0 && memcmp(c2, pt, 15) == 0);
		else
			cr_assert(memcmp(c1, c2, sizeof(c1)) != 0, "rekey kept the keystream");
		/* the stored header opens the file again and decrypts the new contents */
		cr_assert_eq(sc_fkey_new(m, hdr2, (size_t)len, &re), 0);
		cr_assert_eq(sc_fkey_decrypt(re, 0, c2, back, sizeof(pt), sizeof(pt)), 0);
		cr_assert(memcmp(back, pt, sizeof(pt)) == 0);
		sc_fkey_free(re);
		sc_fkey_free(fk);
		sc_mkey_free(m);
	}
}

Test(fkey, range_rules)
{
	struct sc_mkey *m = mkey(SC_CIPHER_AES_XTS, 512);
	struct sc_fkey *fk = fkey(m, NULL);
	static uint8_t buf[4096];

	cr_assert_eq(sc_fkey_encrypt(fk, 1, buf, buf, 511, 512), -EINVAL, "unaligned offset");
	cr_assert_eq(sc_fkey_encrypt(fk, 0, buf, buf, 100, 1024), -EINVAL, "unaligned end");
	cr_assert_eq(sc_fkey_encrypt(fk, 0, buf, buf, 1024, 1000), -EINVAL, "past EOF");
	/* 1029 = 2 units + 5: the 5-byte unit needs unit 1 in the same range */
	cr_assert_eq(sc_fkey_encrypt(fk, 1024, buf, buf, 5, 1029), -EINVAL, "tail alone");
	cr_assert_eq(sc_fkey_encrypt(fk, 0, buf, buf, 1024, 1029), -EINVAL, "pair split");
	cr_assert_eq(sc_fkey_decrypt(fk, 512, buf, buf, 512, 1029), -EINVAL, "pair split");
	cr_assert_eq(sc_fkey_encrypt(fk, 0, buf, buf, 512, 1029), 0);
	cr_assert_eq(sc_fkey_encrypt(fk, 512, buf, buf, 517, 1029), 0);
	cr_assert_eq(sc_fkey_encrypt(fk, 0, buf, buf, 0, 1029), 0, "empty range");
	sc_fkey_free(fk);
	sc_mkey_free(m);
}

/* ---- one fkey, several threads ---- */

struct worker {
	struct sc_fkey	*fk;
	const uint8_t	*pt, *want;	/* the whole file and its ciphertext */
	size_t		fsize;
	unsigned	seed;
	int		errors;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint8_t *buf = malloc(w->fsize);

	for (int it = 0; it < 300; it++) {
		uint32_t bs = sc_fkey_block_size(w->fk);
		uint64_t u = (uint64_t)(rand_r(&w->seed) % (w->fsize / bs - 2));
		uint64_t o = u * bs, l = (uint64_t)(1 + rand_r(&w->seed) % 8) * bs;

		if (o + l > w->fsize - 2 * bs)
			l = w->fsize - o;	/* ends at EOF: includes the tail pair */
		if (sc_fkey_encrypt(w->fk, o, w->pt + o, buf, l, w->fsize) != 0 ||
		    memcmp(buf, w->want + o, l) != 0)
			w->errors++;
		if (sc_fkey_decrypt(w->fk, o, w->want + o, buf, l, w->fsize) != 0 ||
		    memcmp(buf, w->pt + o, l) != 0)
			w->errors++;
	}
	free(buf);
	return NULL;
}

Test(fkey, concurrent_threads)
{
	for (size_t ci = 0; ci < 3; ci++) {
		struct sc_mkey *m = mkey(ciphers[ci], 4096);
		struct sc_fkey *fk = fkey(m, NULL);
		size_t fsize = 64 * 4096 + 7;
		uint8_t *pt = malloc(fsize), *want = malloc(fsize);
		struct worker w[6];
		pthread_t t[6];

		rnd(pt, fsize);
		cr_assert_eq(sc_fkey_encrypt(fk, 0, pt, want, fsize, fsize), 0);
		for (int i = 0; i < 6; i++) {
			w[i] = (struct worker){ fk, pt, want, fsize, (unsigned)i + 1, 0 };
			cr_assert_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
		}
		for (int i = 0; i < 6; i++)
			pthread_join(t[i], NULL);
		for (int i = 0; i < 6; i++)
			cr_assert_eq(w[i].errors, 0, "%s thread %d: %d wrong results",
				     sc_cipher_name(ciphers[ci]), i, w[i].errors);
		sc_fkey_free(fk);
		sc_mkey_free(m);
		free(pt);
		free(want);
	}
}

/* sc_hdr_probe classifies a header's bytes; sc_hdr_explain names each sc_fkey_new error. */
Test(fkey, header_probe_and_explain)
{
	struct sc_mkey *m = mkey(SC_CIPHER_AES_XTS, 4096), *other = mkey(SC_CIPHER_AES_CBC, 4096);
	uint8_t hdr[SC_HDR_MAX], bad[SC_HDR_MAX];
	struct sc_fkey *fk;
	unsigned version = 99;
	char why[256];
	int len, ret;

	len = sc_hdr_new(m, hdr);
	cr_assert_eq(sc_hdr_probe(hdr, (size_t)len, &version), SC_HDR_SHAPE_OK);
	cr_assert_eq(version, 2);
	cr_assert_eq(sc_hdr_probe(hdr, 0, NULL), SC_HDR_SHAPE_WRONG_SIZE);
	cr_assert_eq(sc_hdr_probe(hdr, (size_t)len - 1, &version), SC_HDR_SHAPE_WRONG_SIZE);
	cr_assert_eq(sc_hdr_probe(hdr, 72, NULL), SC_HDR_SHAPE_WRONG_SIZE);
	memcpy(bad, hdr, sizeof(bad));
	bad[0] = 3;
	cr_assert_eq(sc_hdr_probe(bad, (size_t)len, NULL), SC_HDR_SHAPE_UNKNOWN_VERSION);

	cr_assert(sc_hdr_explain(-ENODATA, NULL, 0, why, sizeof(why)));
	cr_assert_str_eq(why, "no header (xattr user.stackcrypt missing): not written through "
			 "stackcrypt, or its xattrs were lost in a copy");
	cr_assert(sc_hdr_explain(-ERANGE, NULL, 256, why, sizeof(why)));
	cr_assert_str_eq(why, "header is larger than 256 bytes, want 56 or 72");

	ret = sc_fkey_new(m, hdr, 0, &fk);
	cr_assert(sc_hdr_explain(ret, hdr, 0, why, sizeof(why)));
	cr_assert_str_eq(why, "header is empty (truncated or corrupt)");
	ret = sc_fkey_new(m, hdr, 40, &fk);
	cr_assert(sc_hdr_explain(ret, hdr, 40, why, sizeof(why)));
	cr_assert_str_eq(why, "header is 40 bytes, want 56 for its version 2 (truncated or corrupt)");
	ret = sc_fkey_new(m, bad, (size_t)len, &fk);
	cr_assert(sc_hdr_explain(ret, bad, (size_t)len, why, sizeof(why)));
	cr_assert_str_eq(why, "header of an unknown version (3) or with unknown flags");
	ret = sc_fkey_new(other, hdr, (size_t)len, &fk);
	cr_assert(sc_hdr_explain(ret, hdr, (size_t)len, why, sizeof(why)));
	cr_assert_str_eq(why, "header MAC mismatch: the header was tampered with, or the file "
			 "comes from another volume");
	cr_assert_not(sc_hdr_explain(-ENOMEM, hdr, (size_t)len, why, sizeof(why)));
	cr_assert_str_eq(why, "cannot derive the file key: Cannot allocate memory");
	sc_mkey_free(other);
	sc_mkey_free(m);
}
