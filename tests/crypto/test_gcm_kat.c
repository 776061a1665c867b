/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_gcm_kat.c - known-answer tests of the authenticated format
 * (docs/format.md section 10.9): the header MAC key, the header, the file
 * key, the AAD, two sealed units and a hole, and the whole example backing
 * file, against constants produced by an independent implementation of
 * the format, tests/crypto/gen_gcm_vectors.py (Python `cryptography`).
 * Also one bare AES-256-GCM encryption under a 128-bit IV through EVP, so
 * that OpenSSL's non-96-bit IV path is pinned.  A mismatch prints got/want.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <openssl/evp.h>
#include "sc_crypto.h"
#include "crypto_i.h"
#include "kdf_labels_i.h"
#include "sc_hex.h"

/* Output of `python3 tests/crypto/gen_gcm_vectors.py`. */
#define V_MASTER "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define V_FILE_ID "b0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
#define V_MAC_KEY "a6f8e68902f0233d21b0260c8d9893b699ac9c23443d4d0ec2df4849797af015"
#define V_FILE_KEY "84118679ca88eb2fd1e6ba1ec1a6a4611aa351e98e61c6e53be43a2c9ff04a7c"
#define V_HEADER "7363676d01090000b0b1b2b3b4b5b6b7b8b9babbbcbdbebff50f21ebf197cca9d94dd01844e9fe43"
#define V_AAD1 "7363676d01090000b0b1b2b3b4b5b6b7b8b9babbbcbdbebf0100000000000000"
#define V_UNIT1 "101112131415161718191a1b1c1d1e1f57044b03ebfeb5ebc2692d92f21fd140b9eb51ff768c524c545f288e43f62ab59618515e684287191acf2af9715f21fb7bf079fdc59d888f38627382ed0d44ca688e8d766f1da5f9dfcdde5cbf2965b478276259a727c3d0b5a278cbb5759fc969ed9e34ffaa726582ed61f617ea7279360cb3148a28f0097cfdc6dfed4fc10973c7510436d00cc4a443bd9dd8632e92b495677dd1075a279f658498ed83b22a9280906b3a62ca64bdc06563c72ddf227134713b03a43c4798e4eefa5389c3ee95d5bceba4fac6bc15592716b07fe522fe46bbc578ada80046ea897c983970f0b60a4976dd4b3e55ee2b5b0b2626c3fe01a1c5ca7a9cc2160ac33927c86019191f985b5d7b7bcf283772a2fb9cd097fd4905b2c13b4f4251a07fca2f004f70ff6416484c273e9ee0901636639d5c201df4720cfafcb24fb36715e2c579b7867b2125a28a8e58d068f4e5f12b3913c9a16f16a1031239073274bee778d2589545141daee374cc61a99f99951012c179fd28553fc512d434124cfc9969e004a124d2ad1e4b4fe15c4e38b7bfefe67478374d80bdc6149d56f17c6c7cd80d0ed7a6b3be974e97ed8cc5c0b0a47891fd22f3d43f5d61f309a5dfde8bed8044f52a5712a3549482900717acda335c8f57fcd8f7368946d4a5b18ec18ebc0429a30e40c2b8a3f64f48118886820f2d60d5c75dcf0c0e323264d01ecaaa4068f27e458684fc570e6c413b6f2937e475dd7baf68"
#define V_UNIT2 "202122232425262728292a2b2c2d2e2ff8e2cb70f4aad03cf14d76793e067030805f7f12fb1f1c8c1badd72f9c"
#define V_STORED_SHA256 "e29f054127f39c81759866ae8a0c8d1c8830ddec6a74f613c9cacf596a2dce78"
#define V_STORED_LEN 1173
#define V_GCM16_CHECK "a5739c4ae3adf569cffa73e5058e360df7661054d1b77d65873adebd69a804e7"

#define BS	512

static struct sc_mkey *vec_mkey(void)
{
	uint8_t master[32];
	struct sc_mkey *mk;

	sc_unhex(V_MASTER, master, sizeof(master));
	/* the mkey's own cipher plays no part in the gcm format */
	cr_assert_eq(sc_mkey_new(master, SC_CIPHER_AES_XTS, BS, &mk), 0);
	return mk;
}

static struct sc_gkey *vec_gkey(struct sc_mkey *mk)
{
	uint8_t hdr[SC_GHDR_SIZE];
	struct sc_gkey *gk;

	sc_unhex(V_HEADER, hdr, sizeof(hdr));
	cr_assert_eq(sc_gkey_new(mk, hdr, sizeof(hdr), &gk), 0);
	return gk;
}

static void unit1_plain(uint8_t pt[BS])
{
	for (int i = 0; i < BS; i++)
		pt[i] = (uint8_t)((i * 7 + 1) % 256);
}

Test(gcm_kat, gcm_with_a_128_bit_iv)
{
	uint8_t key[32] = { 0 }, iv[16], pt[16] = { 0 }, out[32];
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int l, f;

	for (int i = 0; i < 16; i++)
		iv[i] = (uint8_t)i;
	cr_assert_eq(EVP_EncryptInit_ex2(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL), 1);
	cr_assert_eq(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 16, NULL), 1);
	cr_assert_eq(EVP_EncryptInit_ex2(ctx, NULL, key, iv, NULL), 1);
	cr_assert_eq(EVP_EncryptUpdate(ctx, out, &l, pt, 16), 1);
	cr_assert_eq(EVP_EncryptFinal_ex(ctx, out + l, &f), 1);
	cr_assert_eq(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out + 16), 1);
	EVP_CIPHER_CTX_free(ctx);
	sc_expect_hex("AES-256-GCM, 128-bit IV", out, 32, V_GCM16_CHECK);
}

Test(gcm_kat, keys_and_header)
{
	struct sc_mkey *mk = vec_mkey();
	uint8_t fid[16], key[32], hdr[SC_GHDR_SIZE];
	struct sc_gkey *gk;

	sc_unhex(V_FILE_ID, fid, sizeof(fid));
	sc_expect_hex("gcm header MAC key", sc_mkey_gcm_header_mac_key(mk), 32, V_MAC_KEY);
	cr_assert_eq(sc_hkdf_sha256(sc_mkey_master(mk), 32, fid, 16, SC_LABEL_GCM_FILE_KEY,
				    strlen(SC_LABEL_GCM_FILE_KEY), key, 32), 0);
	sc_expect_hex("file key", key, 32, V_FILE_KEY);
	sc_unhex(V_HEADER, hdr, sizeof(hdr));
	cr_assert_eq(sc_ghdr_verify(mk, hdr, sizeof(hdr), key), 0);
	sc_expect_hex("file id from the header", key, 16, V_FILE_ID);
	gk = vec_gkey(mk);
	sc_expect_hex("sc_gkey_file_id", sc_gkey_file_id(gk), 16, V_FILE_ID);
	cr_assert_eq(sc_gkey_block_size(gk), BS);
	sc_gkey_free(gk);
	sc_mkey_free(mk);
}

Test(gcm_kat, header_new_has_the_documented_shape)
{
	struct sc_mkey *mk = vec_mkey();
	uint8_t a[SC_GHDR_SIZE], b[SC_GHDR_SIZE], want[8] = { 's', 'c', 'g', 'm', 1, 9, 1, 0 };

	cr_assert_eq(sc_ghdr_new(mk, a), 0);
	cr_assert_eq(sc_ghdr_new(mk, b), 0);
	/* flags 0x0001: tracks holes, has none yet (docs/format.md 10.2) */
	sc_expect_hex("magic, version, log2_bs, flags", a, 8, "7363676d01090100");
	cr_assert_eq(memcmp(a, want, 8), 0);
	cr_assert_neq(memcmp(a + 8, b + 8, 16), 0, "two files share a file id");
	cr_assert_eq(sc_ghdr_verify(mk, a, sizeof(a), NULL), 0);
	sc_mkey_free(mk);
}

Test(gcm_kat, two_units_and_a_hole)
{
	struct sc_mkey *mk = vec_mkey();
	struct sc_gkey *gk = vec_gkey(mk);
	uint8_t nonces[32], pt[BS + 13], file[V_STORED_LEN], back[3 * BS], md[32];
	uint64_t bad = 0;
	unsigned int mdlen;

	for (int i = 0; i < 32; i++)
		nonces[i] = (uint8_t)(0x10 + i);
	unit1_plain(pt);
	memcpy(pt + BS, "hello, world\n", 13);
	/* the example backing file: header, hole, unit 1, unit 2 */
	sc_unhex(V_HEADER, file, SC_GHDR_SIZE);
	memset(file + sc_gcm_unit_off(BS, 0), 0, BS + 32);
	cr_assert_eq(sc_gcm_seal_nonces(gk, 1, pt, sizeof(pt), file + sc_gcm_unit_off(BS, 1),
					nonces), 0);
	sc_expect_hex("unit 1", file + sc_gcm_unit_off(BS, 1), BS + 32, V_UNIT1);
	sc_expect_hex("unit 2", file + sc_gcm_unit_off(BS, 2), 13 + 32, V_UNIT2);
	cr_assert_eq(sc_gcm_stored_size(BS, 2 * BS + 13), V_STORED_LEN);
	cr_assert_eq(EVP_Digest(file, sizeof(file), md, &mdlen, EVP_sha256(), NULL), 1);
	sc_expect_hex("SHA-256 of the backing file", md, 32, V_STORED_SHA256);

	/* read back: hole, unit 1, unit 2 in one call */
	memset(back, 0xee, sizeof(back));
	cr_assert_eq(sc_gcm_open(gk, 0, file + SC_GHDR_SIZE, sizeof(file) - SC_GHDR_SIZE, back,
				 &bad), 2 * BS + 13);
	for (int i = 0; i < BS; i++)
		cr_assert_eq(back[i], 0, "hole byte %d", i);
	cr_assert_eq(memcmp(back + BS, pt, sizeof(pt)), 0);
	sc_gkey_free(gk);
	sc_mkey_free(mk);
}

Test(gcm_kat, vectors_open_in_place)
{
	struct sc_mkey *mk = vec_mkey();
	struct sc_gkey *gk = vec_gkey(mk);
	uint8_t u1[BS + 32], u2[13 + 32], pt[BS];

	sc_unhex(V_UNIT1, u1, sizeof(u1));
	sc_unhex(V_UNIT2, u2, sizeof(u2));
	cr_assert_eq(sc_gcm_open(gk, 1, u1, sizeof(u1), u1 + 16, NULL), BS);
	unit1_plain(pt);
	cr_assert_eq(memcmp(u1 + 16, pt, BS), 0);
	cr_assert_eq(sc_gcm_open(gk, 2, u2, sizeof(u2), u2 + 16, NULL), 13);
	cr_assert_eq(memcmp(u2 + 16, "hello, world\n", 13), 0);
	sc_gkey_free(gk);
	sc_mkey_free(mk);
}

/*
 * The intent journal's record MAC (docs/format.md 10.10): HMAC-SHA256 under
 * HKDF(master, no salt, "stackcrypt/v2 journal-mac").  The constants come
 * from Python's hmac/hashlib (RFC 5869 written out), not from this library.
 */
#define V_JRNL_KEY "2921b5c79f05654d0683c12c63b743b8fd906324774711bff36228347f312be0"
#define V_JRNL_MAC "7dc4ca436bb941c5a141cd5230c9ed2c85129480149a8fb769474c244f1d304b"

Test(gcm_kat, journal_record_mac)
{
	struct sc_mkey *mk = vec_mkey();
	uint8_t key[32], msg[80], mac[32];

	memcpy(msg, "scjr", 4);
	for (int i = 0; i < 76; i++)
		msg[4 + i] = (uint8_t)i;
	cr_assert_eq(sc_hkdf_sha256(sc_mkey_master(mk), 32, NULL, 0, SC_LABEL_JOURNAL_MAC,
				    strlen(SC_LABEL_JOURNAL_MAC), key, 32), 0);
	sc_expect_hex("journal key", key, 32, V_JRNL_KEY);
	cr_assert_eq(sc_jrnl_mac(mk, msg, sizeof(msg), mac), 0);
	sc_expect_hex("journal record MAC", mac, 32, V_JRNL_MAC);
	msg[79] ^= 1;
	cr_assert_eq(sc_jrnl_mac(mk, msg, sizeof(msg), key), 0);
	cr_assert_neq(memcmp(key, mac, 32), 0, "the MAC ignores the record's last byte");
	msg[79] ^= 1;	/* a pooled context restarted after use gives the first MAC again */
	cr_assert_eq(sc_jrnl_mac(mk, msg, sizeof(msg), key), 0);
	sc_expect_hex("journal record MAC, again", key, 32, V_JRNL_MAC);
	sc_mkey_free(mk);
}

/*
 * sc_jrnl_mac from more threads than its context pool holds (so some take
 * the dup path), each over messages of its own, against HMAC-SHA256 made
 * with the key alone (sc_hmac_sha256, no shared context).
 */
#define MAC_THREADS	24
#define MAC_ROUNDS	400

struct mac_job {
	const struct sc_mkey	*mk;
	const uint8_t		*key;
	int			id, bad;
};

static void *mac_worker(void *arg)
{
	struct mac_job *jb = arg;
	uint8_t msg[64], got[32], want[32];

	for (int r = 0; r < MAC_ROUNDS; r++) {
		for (int i = 0; i < 64; i++)
			msg[i] = (uint8_t)(jb->id * 131 + r * 7 + i);
		if (sc_jrnl_mac(jb->mk, msg, sizeof(msg), got) != 0 ||
		    sc_hmac_sha256(jb->key, 32, msg, sizeof(msg), want) != 0 ||
		    memcmp(got, want, 32) != 0)
			jb->bad++;
	}
	return NULL;
}

Test(gcm_kat, journal_mac_concurrent)
{
	struct sc_mkey *mk = vec_mkey();
	struct mac_job jobs[MAC_THREADS];
	pthread_t th[MAC_THREADS];
	uint8_t key[32];

	cr_assert_eq(sc_hkdf_sha256(sc_mkey_master(mk), 32, NULL, 0, SC_LABEL_JOURNAL_MAC,
				    strlen(SC_LABEL_JOURNAL_MAC), key, 32), 0);
	for (int t = 0; t < MAC_THREADS; t++) {
		jobs[t] = (struct mac_job){ .mk = mk, .key = key, .id = t };
		cr_assert_eq(pthread_create(&th[t], NULL, mac_worker, &jobs[t]), 0);
	}
	for (int t = 0; t < MAC_THREADS; t++) {
		cr_assert_eq(pthread_join(th[t], NULL), 0);
		cr_expect_eq(jobs[t].bad, 0, "thread %d: %d of %d MACs wrong", t, jobs[t].bad,
			     MAC_ROUNDS);
	}
	sc_mkey_free(mk);
}

/*
 * The journal MAC's contexts are made at first use (mkey.c): on fresh keys,
 * MAC_THREADS threads released at once by a barrier each make their key's
 * first MAC, so they race to key the template and fill the pool's slots
 * (some take the dup path).  Every MAC must be right; the asan build sees
 * a template that a losing thread frees or leaks.
 */
#define FIRST_KEYS	32

struct first_job {
	const struct sc_mkey	*mk;
	const uint8_t		*key;
	pthread_barrier_t	*go;
	int			id, bad;
};

static void *first_worker(void *arg)
{
	struct first_job *jb = arg;
	uint8_t msg[64], got[32], want[32];

	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)(jb->id * 37 + i);
	pthread_barrier_wait(jb->go);
	if (sc_jrnl_mac(jb->mk, msg, sizeof(msg), got) != 0 ||
	    sc_hmac_sha256(jb->key, 32, msg, sizeof(msg), want) != 0 ||
	    memcmp(got, want, 32) != 0)
		jb->bad++;
	return NULL;
}

Test(gcm_kat, journal_mac_first_use_concurrent)
{
	struct first_job jobs[MAC_THREADS];
	pthread_t th[MAC_THREADS];
	pthread_barrier_t go;
	uint8_t key[32];

	for (int k = 0; k < FIRST_KEYS; k++) {
		struct sc_mkey *mk = vec_mkey();

		if (k == 0)
			cr_assert_eq(sc_hkdf_sha256(sc_mkey_master(mk), 32, NULL, 0,
						    SC_LABEL_JOURNAL_MAC,
						    strlen(SC_LABEL_JOURNAL_MAC), key, 32), 0);
		cr_assert_eq(pthread_barrier_init(&go, NULL, MAC_THREADS), 0);
		for (int t = 0; t < MAC_THREADS; t++) {
			jobs[t] = (struct first_job){ .mk = mk, .key = key, .go = &go, .id = t };
			cr_assert_eq(pthread_create(&th[t], NULL, first_worker, &jobs[t]), 0);
		}
		for (int t = 0; t < MAC_THREADS; t++) {
			cr_assert_eq(pthread_join(th[t], NULL), 0);
			cr_expect_eq(jobs[t].bad, 0, "key %d, thread %d: its first MAC is wrong",
				     k, t);
		}
		pthread_barrier_destroy(&go);
		sc_mkey_free(mk);
	}
}
