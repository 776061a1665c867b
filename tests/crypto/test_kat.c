/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_kat.c - known-answer tests, run through the library's own code
 * paths: IEEE 1619-2007 XTS-AES-256 vectors 10-14 through sc_fkey_encrypt
 * (unit size 512, unit index = data unit sequence number), NIST SP 800-38A
 * F.2.5/F.2.6 CBC-AES256 and OpenSSL's AES-256-CBC-CTS CS3 vectors through
 * sc_cbc_msg, RFC 5869 HKDF-SHA256 test cases 1-3, RFC 7914 scrypt vectors;
 * then format conformance: the bytes stackcrypt writes are recomputed here
 * from docs/format.md with plain OpenSSL calls (labels, tweaks, ESSIV,
 * cross-unit tail, tiny files, header MAC).
 *
 * Vector bytes come from OpenSSL's test/recipes/30-test_evp_data files
 * (evpciph_aes_common.txt, evpciph_aes_cts.txt, evpkdf_hkdf.txt,
 * evpkdf_scrypt.txt) and a published copy of IEEE 1619-2007 Annex B.
 * A mismatch prints got/want in hex.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include "sc_crypto.h"
#include "crypto_i.h"
#include "kdf_labels_i.h"
#include "sc_hex.h"

static char *tohex(const uint8_t *p, size_t n)
{
	char *s = malloc(2 * n + 1);

	for (size_t i = 0; i < n; i++)
		sprintf(s + 2 * i, "%02x", p[i]);
	s[2 * n] = '\0';
	return s;
}

static void expect(const char *what, const uint8_t *got, const uint8_t *want, size_t n)
{
	if (memcmp(got, want, n) != 0) {
		char *g = tohex(got, n), *w = tohex(want, n);

		cr_log_error("%s\n  got  %s\n  want %s", what, g, w);
		free(g);
		free(w);
		cr_assert_fail("%s: mismatch", what);
	}
}

/* ---- IEEE 1619-2007 Annex B, XTS-AES-256, 512-byte data units ---- */

static const char xts_key1[] = "2718281828459045235360287471352662497757247093699959574966967627";
static const char xts_key2[] = "3141592653589793238462643383279502884197169399375105820974944592";

static const struct { int vec; uint64_t dusn; const char *ct; } xts_vectors[] = {
	{ 10, 0xffull,
	  "1c3b3a102f770386e4836c99e370cf9bea00803f5e482357a4ae12d414a3e63b"
	  "5d31e276f8fe4a8d66b317f9ac683f44680a86ac35adfc3345befecb4bb188fd"
	  "5776926c49a3095eb108fd1098baec70aaa66999a72a82f27d848b21d4a741b0"
	  "c5cd4d5fff9dac89aeba122961d03a757123e9870f8acf1000020887891429ca"
	  "2a3e7a7d7df7b10355165c8b9a6d0a7de8b062c4500dc4cd120c0f7418dae3d0"
	  "b5781c34803fa75421c790dfe1de1834f280d7667b327f6c8cd7557e12ac3a0f"
	  "93ec05c52e0493ef31a12d3d9260f79a289d6a379bc70c50841473d1a8cc81ec"
	  "583e9645e07b8d9670655ba5bbcfecc6dc3966380ad8fecb17b6ba02469a020a"
	  "84e18e8f84252070c13e9f1f289be54fbc481457778f616015e1327a02b140f1"
	  "505eb309326d68378f8374595c849d84f4c333ec4423885143cb47bd71c5edae"
	  "9be69a2ffeceb1bec9de244fbe15992b11b77c040f12bd8f6a975a44a0f90c29"
	  "a9abc3d4d893927284c58754cce294529f8614dcd2aba991925fedc4ae74ffac"
	  "6e333b93eb4aff0479da9a410e4450e0dd7ae4c6e2910900575da401fc07059f"
	  "645e8b7e9bfdef33943054ff84011493c27b3429eaedb4ed5376441a77ed4385"
	  "1ad77f16f541dfd269d50d6a5f14fb0aab1cbb4c1550be97f7ab4066193c4caa"
	  "773dad38014bd2092fa755c824bb5e54c4f36ffda9fcea70b9c6e693e148c151" },
	{ 11, 0xffffull,
	  "77a31251618a15e6b92d1d66dffe7b50b50bad552305ba0217a610688eff7e11"
	  "e1d0225438e093242d6db274fde801d4cae06f2092c728b2478559df58e837c2"
	  "469ee4a4fa794e4bbc7f39bc026e3cb72c33b0888f25b4acf56a2a9804f1ce6d"
	  "3d6e1dc6ca181d4b546179d55544aa7760c40d06741539c7e3cd9d2f6650b201"
	  "3fd0eeb8c2b8e3d8d240ccae2d4c98320a7442e1c8d75a42d6e6cfa4c2eca179"
	  "8d158c7aecdf82490f24bb9b38e108bcda12c3faf9a21141c3613b58367f922a"
	  "aa26cd22f23d708dae699ad7cb40a8ad0b6e2784973dcb605684c08b8d6998c6"
	  "9aac049921871ebb65301a4619ca80ecb485a31d744223ce8ddc2394828d6a80"
	  "470c092f5ba413c3378fa6054255c6f9df4495862bbb3287681f931b687c888a"
	  "bf844dfc8fc28331e579928cd12bd2390ae123cf03818d14dedde5c0c24c8ab0"
	  "18bfca75ca096f2d531f3d1619e785f1ada437cab92e980558b3dce1474afb75"
	  "bfedbf8ff54cb2618e0244c9ac0d3c66fb51598cd2db11f9be39791abe447c63"
	  "094f7c453b7ff87cb5bb36b7c79efb0872d17058b83b15ab0866ad8a58656c5a"
	  "7e20dbdf308b2461d97c0ec0024a2715055249cf3b478ddd4740de654f75ca68"
	  "6e0d7345c69ed50cdc2a8b332b1f8824108ac937eb050585608ee734097fc090"
	  "54fbff89eeaeea791f4a7ab1f9868294a4f9e27b42af8100cb9d59cef9645803" },
	{ 12, 0xffffffull,
	  "e387aaa58ba483afa7e8eb469778317ecf4cf573aa9d4eac23f2cdf914e4e200"
	  "a8b490e42ee646802dc6ee2b471b278195d60918ececb44bf79966f83faba049"
	  "9298ebc699c0c8634715a320bb4f075d622e74c8c932004f25b41e361025b5a8"
	  "7815391f6108fc4afa6a05d9303c6ba68a128a55705d415985832fdeaae6c8e1"
	  "9110e84d1b1f199a2692119edc96132658f09da7c623efcec712537a3d94c0bf"
	  "5d7e352ec94ae5797fdb377dc1551150721adf15bd26a8efc2fcaad56881fa9e"
	  "62462c28f30ae1ceaca93c345cf243b73f542e2074a705bd2643bb9f7cc79bb6"
	  "e7091ea6e232df0f9ad0d6cf502327876d82207abf2115cdacf6d5a48f6c1879"
	  "a65b115f0f8b3cb3c59d15dd8c769bc014795a1837f3901b5845eb491adfefe0"
	  "97b1fa30a12fc1f65ba22905031539971a10f2f36c321bb51331cdefb39e3964"
	  "c7ef079994f5b69b2edd83a71ef549971ee93f44eac3938fcdd61d01fa71799d"
	  "a3a8091c4c48aa9ed263ff0749df95d44fef6a0bb578ec69456aa5408ae32c7a"
	  "f08ad7ba8921287e3bbee31b767be06a0e705c864a769137df28292283ea81a2"
	  "480241b44d9921cdbec1bc28dc1fda114bd8e5217ac9d8ebafa720e9da4f9ace"
	  "231cc949e5b96fe76ffc21063fddc83a6b8679c00d35e09576a875305bed5f36"
	  "ed242c8900dd1fa965bc950dfce09b132263a1eef52dd6888c309f5a7d712826" },
	{ 13, 0xffffffffull,
	  "bf53d2dade78e822a4d949a9bc6766b01b06a8ef70d26748c6a7fc36d80ae4c5"
	  "520f7c4ab0ac8544424fa405162fef5a6b7f229498063618d39f0003cb5fb8d1"
	  "c86b643497da1ff945c8d3bedeca4f479702a7a735f043ddb1d6aaade3c4a0ac"
	  "7ca7f3fa5279bef56f82cd7a2f38672e824814e10700300a055e1630b8f1cb0e"
	  "919f5e942010a416e2bf48cb46993d3cb6a51c19bacf864785a00bc2ecff15d3"
	  "50875b246ed53e68be6f55bd7e05cfc2b2ed6432198a6444b6d8c247fab941f5"
	  "69768b5c429366f1d3f00f0345b96123d56204c01c63b22ce78baf116e525ed9"
	  "0fdea39fa469494d3866c31e05f295ff21fea8d4e6e13d67e47ce722e9698a1c"
	  "1048d68ebcde76b86fcf976eab8aa9790268b7068e017a8b9b749409514f1053"
	  "027fd16c3786ea1bac5f15cb79711ee2abe82f5cf8b13ae73030ef5b9e4457e7"
	  "5d1304f988d62dd6fc4b94ed38ba831da4b7634971b6cd8ec325d9c61c00f1df"
	  "73627ed3745a5e8489f3a95c69639c32cd6e1d537a85f75cc844726e8a72fc00"
	  "77ad22000f1d5078f6b866318c668f1ad03d5a5fced5219f2eabbd0aa5c0f460"
	  "d183f04404a0d6f469558e81fab24a167905ab4c7878502ad3e38fdbe62a4155"
	  "6cec37325759533ce8f25f367c87bb5578d667ae93f9e2fd99bcbc5f2fbba88c"
	  "f6516139420fcff3b7361d86322c4bd84c82f335abb152c4a93411373aaa8220" },
	{ 14, 0xffffffffffull,
	  "64497e5a831e4a932c09be3e5393376daa599548b816031d224bbf50a818ed23"
	  "50eae7e96087c8a0db51ad290bd00c1ac1620857635bf246c176ab463be30b80"
	  "8da548081ac847b158e1264be25bb0910bbc92647108089415d45fab1b3d2604"
	  "e8a8eff1ae4020cfa39936b66827b23f371b92200be90251e6d73c5f86de5fd4"
	  "a950781933d79a28272b782a2ec313efdfcc0628f43d744c2dc2ff3dcb66999b"
	  "50c7ca895b0c64791eeaa5f29499fb1c026f84ce5b5c72ba1083cddb5ce45434"
	  "631665c333b60b11593fb253c5179a2c8db813782a004856a1653011e93fb6d8"
	  "76c18366dd8683f53412c0c180f9c848592d593f8609ca736317d356e13e2bff"
	  "3a9f59cd9aeb19cd482593d8c46128bb32423b37a9adfb482b99453fbe25a41b"
	  "f6feb4aa0bef5ed24bf73c762978025482c13115e4015aac992e5613a3b5c2f6"
	  "85b84795cb6e9b2656d8c88157e52c42f978d8634c43d06fea928f2822e465aa"
	  "6576e9bf419384506cc3ce3c54ac1a6f67dc66f3b30191e698380bc999b05abc"
	  "e19dc0c6dcc2dd001ec535ba18deb2df1a101023108318c75dc98611a09dc48a"
	  "0acdec676fabdf222f07e026f059b672b56e5cbc8e1d21bbd867dd9272120546"
	  "81d70ea737134cdfce93b6f82ae22423274e58a0821cc5502e2d0ab4585e94de"
	  "6975be5e0b4efce51cd3e70c25a1fbbbd609d273ad5b0d59631c531f6a0a57b9" },
};

Test(kat, ieee1619_xts_aes256_vectors_10_to_14)
{
	static const uint8_t tiny_iv[16];
	struct sc_keys keys = { .cipher = SC_CIPHER_AES_XTS };
	uint8_t pt[512], ct[512], want[512], back[512];
	struct sc_fkey *fk;

	sc_unhex(xts_key1, keys.data, 32);
	sc_unhex(xts_key2, keys.data + 32, 32);
	cr_assert_eq(sc_fkey_new_keys(SC_CIPHER_AES_XTS, 512, &keys, tiny_iv, &fk), 0);
	for (int i = 0; i < 512; i++)	/* Annex B plaintext: bytes 00..ff twice */
		pt[i] = (uint8_t)i;
	for (size_t v = 0; v < sizeof(xts_vectors) / sizeof(xts_vectors[0]); v++) {
		uint64_t off = xts_vectors[v].dusn * 512;
		char what[64];

		cr_assert_eq(sc_unhex(xts_vectors[v].ct, want, sizeof(want)), 512);
		cr_assert_eq(sc_fkey_encrypt(fk, off, pt, ct, 512, off + 512), 0);
		snprintf(what, sizeof(what), "IEEE 1619 vector %d encrypt", xts_vectors[v].vec);
		expect(what, ct, want, 512);
		cr_assert_eq(sc_fkey_decrypt(fk, off, want, back, 512, off + 512), 0);
		snprintf(what, sizeof(what), "IEEE 1619 vector %d decrypt", xts_vectors[v].vec);
		expect(what, back, pt, 512);
	}
	sc_fkey_free(fk);
}

/* ---- CBC: NIST SP 800-38A F.2.5 / F.2.6, and CS3 ciphertext stealing ---- */

static void cbc_case(const char *what, const char *key, const char *iv_hex, const char *pt_hex,
		     const char *ct_hex)
{
	struct sc_keys keys = { .cipher = SC_CIPHER_AES_CBC };
	struct sc_ctxpool pool;
	struct sc_ctxset *set;
	uint8_t iv[16], pt[64], want[64], got[64];
	size_t n;

	sc_unhex(key, keys.data, 32);
	sc_unhex(iv_hex, iv, 16);
	n = sc_unhex(pt_hex, pt, sizeof(pt));
	cr_assert_eq(sc_unhex(ct_hex, want, sizeof(want)), n);
	cr_assert_eq(sc_ctxpool_init(&pool, &keys), 0);
	set = sc_ctxpool_get(&pool);
	cr_assert_not_null(set);
	cr_assert_eq(sc_cbc_msg(&pool, set, iv, pt, got, n, 1), 0);
	expect(what, got, want, n);
	cr_assert_eq(sc_cbc_msg(&pool, set, iv, want, got, n, 0), 0);
	expect(what, got, pt, n);
	sc_ctxpool_put(&pool, set);
	sc_ctxpool_destroy(&pool);
}

Test(kat, nist_sp800_38a_cbc_aes256)
{
	cbc_case("SP 800-38A F.2.5/F.2.6 CBC-AES256",
		 "603DEB1015CA71BE2B73AEF0857D77811F352C073B6108D72D9810A30914DFF4",
		 "000102030405060708090A0B0C0D0E0F",
		 "6BC1BEE22E409F96E93D7E117393172A" "AE2D8A571E03AC9C9EB76FAC45AF8E51"
		 "30C81C46A35CE411E5FBC1191A0A52EF" "F69F2445DF4F9B17AD2B417BE66C3710",
		 "F58C4C04D6E5F1BA779EABFB5F7BFBD6" "9CFC4E967EDB808D679F777BC6702C7D"
		 "39F23369A9D9BACFA530E26304231461" "B2EB05E2C39BE9FCDA6C19078C6A9D1B");
}

Test(kat, aes256_cbc_cts_cs3)
{
	static const char key[] = "636869636b656e207465726979616b69636869636b656e207465726979616b69";
	static const char iv[] = "000102030405060708090A0B0C0D0E0F";

	cbc_case("AES-256-CBC-CTS CS3, 17 bytes", key, iv,
		 "4920776f756c64206c696b652074686520",
		 "6b5f5abc21c4d04156c73850da3bba29e9");
	cbc_case("AES-256-CBC-CTS CS3, 31 bytes", key, iv,
		 "4920776f756c64206c696b65207468652047656e6572616c20476175277320",
		 "f22553af78ee4f468f02fbe6f0f2168ee954e79fae9310dc75b6070e1d6253");
}

/* ---- RFC 5869 HKDF-SHA256 test cases 1-3 ---- */

Test(kat, rfc5869_hkdf_sha256)
{
	static const struct { const char *ikm, *salt, *info, *okm; } tc[] = {
		{ "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "000102030405060708090a0b0c",
		  "f0f1f2f3f4f5f6f7f8f9",
		  "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865" },
		{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
		  "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
		  "404142434445464748494a4b4c4d4e4f",
		  "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
		  "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
		  "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
		  "b0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecf"
		  "d0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef"
		  "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
		  "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
		  "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
		  "cc30c58179ec3e87c14c01d5c1f3434f1d87" },
		{ "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "", "",
		  "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8" },
	};

	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		uint8_t ikm[128], salt[128], info[128], want[128], got[128];
		size_t ni = sc_unhex(tc[i].ikm, ikm, sizeof(ikm)), ns = sc_unhex(tc[i].salt, salt, sizeof(salt));
		size_t nf = sc_unhex(tc[i].info, info, sizeof(info)), no = sc_unhex(tc[i].okm, want, sizeof(want));
		char what[40];

		cr_assert_eq(sc_hkdf_sha256(ikm, ni, salt, ns, info, nf, got, no), 0);
		snprintf(what, sizeof(what), "RFC 5869 test case %zu", i + 1);
		expect(what, got, want, no);
	}
}

/*
 * sc_hkdf_sha256 is composed of HMACs (crypto/kdf.c); OpenSSL's own HKDF
 * must agree on every shape the RFC allows: no salt, no info, an empty
 * key, outputs that end inside, on and after a block, the 255-block
 * maximum; and one byte more is refused.
 */
Test(kat, hkdf_sha256_matches_openssl_hkdf)
{
	static const size_t ikm_lens[] = { 0, 1, 32, 64, 100 };
	static const size_t salt_lens[] = { 0, 16, 32, 65 };
	static const size_t info_lens[] = { 0, 1, 30, 80 };
	static const size_t out_lens[] = { 1, 16, 31, 32, 33, 64, 65, 96, 255 * 32 };
	static uint8_t ikm[100], salt[65], info[80], got[255 * 32], want[255 * 32];
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	unsigned int cases = 0;

	cr_assert_not_null(kdf);
	for (size_t i = 0; i < sizeof(ikm); i++)
		ikm[i] = (uint8_t)(3 * i + 1);
	for (size_t i = 0; i < sizeof(salt); i++)
		salt[i] = (uint8_t)(7 * i + 5);
	for (size_t i = 0; i < sizeof(info); i++)
		info[i] = (uint8_t)(11 * i + 9);
	for (size_t a = 0; a < sizeof(ikm_lens) / sizeof(ikm_lens[0]); a++)
	for (size_t b = 0; b < sizeof(salt_lens) / sizeof(salt_lens[0]); b++)
	for (size_t c = 0; c < sizeof(info_lens) / sizeof(info_lens[0]); c++)
	for (size_t d = 0; d < sizeof(out_lens) / sizeof(out_lens[0]); d++) {
		OSSL_PARAM params[5], *p = params;
		EVP_KDF_CTX *kctx = EVP_KDF_CTX_new(kdf);
		size_t n = out_lens[d];

		cr_assert_not_null(kctx);
		*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, ikm, ikm_lens[a]);
		if (salt_lens[b])
			*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt, salt_lens[b]);
		if (info_lens[c])
			*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, info_lens[c]);
		*p = OSSL_PARAM_construct_end();
		cr_assert_eq(EVP_KDF_derive(kctx, want, n, params), 1);
		EVP_KDF_CTX_free(kctx);
		memset(got, 0xa5, sizeof(got));
		cr_assert_eq(sc_hkdf_sha256(ikm, ikm_lens[a], salt_lens[b] ? salt : NULL, salt_lens[b],
					    info, info_lens[c], got, n), 0);
		cr_assert(memcmp(got, want, n) == 0,
			  "HKDF differs from OpenSSL's: ikm %zu, salt %zu, info %zu, out %zu bytes",
			  ikm_lens[a], salt_lens[b], info_lens[c], n);
		if (n < sizeof(got))
			cr_assert_eq(got[n], 0xa5, "HKDF wrote past %zu bytes", n);
		cases++;
	}
	cr_assert_eq(cases, 5 * 4 * 4 * 9);
	EVP_KDF_free(kdf);
	cr_assert_eq(sc_hkdf_sha256(ikm, 32, NULL, 0, info, 1, got, 255 * 32 + 1), -EINVAL);
}

/* ---- RFC 7914 section 12 scrypt (the cheap ones) ---- */

Test(kat, rfc7914_scrypt)
{
	static const struct { const char *pass, *salt; uint64_t n; uint32_t r, p; const char *dk; } tc[] = {
		{ "", "", 16, 1, 1,
		  "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
		  "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906" },
		{ "password", "NaCl", 1024, 8, 16,
		  "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
		  "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640" },
		{ "pleaseletmein", "SodiumChloride", 16384, 8, 1,
		  "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2"
		  "d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887" },
	};

	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		uint8_t want[64], got[64];
		char what[40];

		sc_unhex(tc[i].dk, want, sizeof(want));
		cr_assert_eq(sc_scrypt(tc[i].pass, strlen(tc[i].pass), tc[i].salt, strlen(tc[i].salt),
				       tc[i].n, tc[i].r, tc[i].p, got, 64), 0);
		snprintf(what, sizeof(what), "RFC 7914 scrypt vector %zu", i + 1);
		expect(what, got, want, 64);
	}
}

/* ---- format conformance: recompute docs/format.md with plain OpenSSL ---- */

static void hkdf(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len,
		 const char *label, uint8_t *out, size_t out_len)
{
	EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);

	cr_assert_not_null(pctx);
	cr_assert_eq(EVP_PKEY_derive_init(pctx), 1);
	cr_assert_eq(EVP_PKEY_CTX_set_hkdf_md(pctx, EVP_sha256()), 1);
	if (salt_len)
		cr_assert_eq(EVP_PKEY_CTX_set1_hkdf_salt(pctx, salt, (int)salt_len), 1);
	cr_assert_eq(EVP_PKEY_CTX_set1_hkdf_key(pctx, ikm, (int)ikm_len), 1);
	cr_assert_eq(EVP_PKEY_CTX_add1_hkdf_info(pctx, (const uint8_t *)label, (int)strlen(label)), 1);
	cr_assert_eq(EVP_PKEY_derive(pctx, out, &out_len), 1);
	EVP_PKEY_CTX_free(pctx);
}

static void evp_crypt(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv,
		      const uint8_t *in, uint8_t *out, size_t len, const char *cts)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	OSSL_PARAM params[2] = { OSSL_PARAM_END, OSSL_PARAM_END };
	int outl;

	if (cts != NULL)
		params[0] = OSSL_PARAM_construct_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, (char *)cts, 0);
	cr_assert_eq(EVP_CipherInit_ex2(ctx, c, key, iv, 1, params), 1);
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	cr_assert_eq(EVP_CipherUpdate(ctx, out, &outl, in, (int)len), 1);
	cr_assert_eq((size_t)outl, len);
	EVP_CIPHER_CTX_free(ctx);
}

static void le128(uint8_t out[16], uint64_t v)
{
	memset(out, 0, 16);
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(v >> (8 * i));
}

/* The IV (CBC) or tweak (XTS) of unit / tail index idx. */
static void unit_iv(enum sc_cipher_id c, const uint8_t *essiv_key, uint64_t idx, uint8_t iv[16])
{
	uint8_t blk[16];

	le128(blk, idx);
	if (c == SC_CIPHER_AES_XTS)
		memcpy(iv, blk, 16);
	else
		evp_crypt(EVP_aes_256_ecb(), essiv_key, NULL, blk, iv, 16, NULL);
}

static void unit_enc(enum sc_cipher_id c, const uint8_t *data_key, const uint8_t *essiv_key,
		     uint64_t idx, const uint8_t *in, uint8_t *out, size_t len)
{
	uint8_t iv[16];

	unit_iv(c, essiv_key, idx, iv);
	if (c == SC_CIPHER_AES_XTS)
		evp_crypt(EVP_aes_256_xts(), data_key, iv, in, out, len, NULL);
	else if (len % 16 == 0)
		evp_crypt(EVP_aes_256_cbc(), data_key, iv, in, out, len, NULL);
	else {
		EVP_CIPHER *cts = EVP_CIPHER_fetch(NULL, "AES-256-CBC-CTS", NULL);

		evp_crypt(cts, data_key, iv, in, out, len, "CS3");
		EVP_CIPHER_free(cts);
	}
}

Test(format, bytes_match_the_spec)
{
	static const uint32_t bs = 512;
	/* ... up to 71 units: two ESSIV batches, several interleaved-CBC lane groups */
	static const size_t sizes[] = { 5, 16, 100, 512, 1000, 1029, 1043, 1536,
					33 * 512, 70 * 512 + 100, 70 * 512 + 7 };

	for (int k = 0; k < 4; k++) {
		/* version 1: 72 bytes, all 32 MAC bytes, tiny IV at 56;
		 * version 2: 56 bytes, the MAC's first 16 bytes, tiny IV at 40 */
		int c = SC_CIPHER_AES_XTS + k / 2;
		unsigned hv = 1 + k % 2, mlen = hv == 1 ? 32 : 16, hsize = 24 + mlen + 16;
		uint8_t mk[32], hdr[SC_HDR_MAX], mac_key[32], mac[32], data_key[64], essiv[32], tiny[32];
		struct sc_mkey *m;
		struct sc_fkey *fk;
		unsigned int maclen = 0;

		for (int i = 0; i < 32; i++)
			mk[i] = (uint8_t)(0xa0 + i);
		cr_assert_eq(sc_mkey_new(mk, (enum sc_cipher_id)c, bs, &m), 0);
		cr_assert_eq(sc_mkey_set_hdr_version(m, hv), 0);
		cr_assert_eq(sc_hdr_new(m, hdr), (int)hsize);
		cr_assert_eq(hsize, hv == 1 ? 72 : 56);
		/* header: version, cipher, log2 block size, flags, reserved, MAC over 0..23 */
		cr_assert_eq(hdr[0], hv);
		cr_assert_eq(hdr[1], c);
		cr_assert_eq(hdr[2], 9);
		cr_assert(hdr[3] == 0 && hdr[4] == 0 && hdr[5] == 0 && hdr[6] == 0 && hdr[7] == 0);
		hkdf(mk, 32, NULL, 0, "stackcrypt/v1 header-mac", mac_key, 32);
		HMAC(EVP_sha256(), mac_key, 32, hdr, 24, mac, &maclen);
		expect("header MAC", hdr + 24, mac, mlen);
		/* file keys: HKDF(master, salt = nonce, label) */
		hkdf(mk, 32, hdr + 8, 16, "stackcrypt/v1 data-key", data_key, c == SC_CIPHER_AES_XTS ? 64 : 32);
		hkdf(mk, 32, hdr + 8, 16, "stackcrypt/v1 essiv-key", essiv, 32);
		hkdf(mk, 32, hdr + 8, 16, "stackcrypt/v1 tiny-key", tiny, 32);
		cr_assert_eq(sc_fkey_new(m, hdr, hsize, &fk), 0);

		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			size_t fsize = sizes[si], last = (fsize - 1) / bs * bs, tail = fsize - last;
			uint8_t *pt = malloc(fsize), *got = malloc(fsize), *want = malloc(fsize);

			for (size_t i = 0; i < fsize; i++)
				pt[i] = (uint8_t)(i * 7 + si);
			cr_assert_eq(sc_fkey_encrypt(fk, 0, pt, got, fsize, fsize), 0);
			if (fsize < 16) {	/* tiny: XOR with AES-ECB(tiny key, tiny IV) */
				uint8_t ks[16];

				evp_crypt(EVP_aes_256_ecb(), tiny, NULL, hdr + 24 + mlen, ks, 16, NULL);
				for (size_t i = 0; i < fsize; i++)
					want[i] = pt[i] ^ ks[i];
			} else {
				size_t whole_end = tail < 16 ? last : fsize;

				for (size_t o = 0; o < whole_end; o += bs)
					unit_enc((enum sc_cipher_id)c, data_key, essiv, o / bs, pt + o, want + o,
						 whole_end - o < bs ? whole_end - o : bs);
				if (tail < 16) {	/* cross-unit tail: 16 + tail bytes, index | 2^63 */
					uint8_t region[32];

					memcpy(region, want + last - 16, 16);
					memcpy(region + 16, pt + last, tail);
					unit_enc((enum sc_cipher_id)c, data_key, essiv,
						 (last / bs) | (1ull << 63), region, want + last - 16, 16 + tail);
				}
			}
			{
				char what[64];

				snprintf(what, sizeof(what), "%s file of %zu bytes, header v%u",
					 sc_cipher_name(c), fsize, hv);
				expect(what, got, want, fsize);
			}
			free(pt);
			free(got);
			free(want);
		}
		sc_fkey_free(fk);
		sc_mkey_free(m);
	}
}
