/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_integ.c - the pure primitives of integrity volumes (docs/format.md
 * section 11, crypto/integ.c): known-answer vectors from an independent
 * composition of the format (tests/crypto/gen_integ_vectors.py, Python
 * hmac and hashlib), every bit of a version 2 header flipped, headers of
 * the wrong length, volume, unit size or tree mode, field rules, place
 * tags and binding records at the wrong place, directory records and
 * listing records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <openssl/evp.h>
#include "sc_crypto.h"
#include "crypto_i.h"
#include "sc_hex.h"

/* Output of `python3 tests/crypto/gen_integ_vectors.py`. */
#define V_K_H "8b534b643243694c093da1d36eead662a8431e3173772bc61cf0351fb73dcd2b"
#define V_K_E "306adcc6fe78682563f006a34ad04943949361d6f3aef9d916771072819aff66"
#define V_K_R "c13b8d6f8082f7be3d9f3524886092e074d6c64ea6feb2a6e7b9e90ee1b657e2"
#define V_K_D "ae9222c6a6bc2e73b20e37d6adc78a153684a7aafc165495cc15e507d2451f9a"
#define V_K_U "e07c4b1823413e351104eca77d9455a8ac90f397b7071bb001461da41b4dbf18"
#define V_K_J "dcc6a0d09638e331b0307c9ac18aeb1bc999f1aa1640de5a4efee327a47fc80d"
#define V_K_S "92d994e4777ed09f569fa4ddbbd195e56dc99dc0a1b5891a4b397a2cdc43cdcb"
#define V_FILE_KEY "286af62f47253819490b95ded39b8ced65a2224002b9213a4a95fa69b8b2e588"
#define V_TAG_E1 "1e3868f76267c62cb33c440f01fb00da"
#define V_NODE1_0_OF2 "bad5c446079c7d1d496775125f20f5c7"
#define V_ROOT2 "f05387a6a838f2e4f8b80486ca1cb921"
#define V_ROOT0 "90e876880bc0dde38b550deb14479b39"
#define V_ROOT65 "e9dedf022de4382dd2b01100e177c310"
#define V_HDR_BOUND "7363676d020c1100b0b1b2b3b4b5b6b7b8b9babbbcbdbebf03000000000000008813000000000000f05387a6a838f2e4f8b80486ca1cb9211e3868f76267c62cb33c440f01fb00dac6551bd767c2fadcd99f24eb0dbb0ab4"
#define V_HDR_LINKED "7363676d020c1500b0b1b2b3b4b5b6b7b8b9babbbcbdbebf0400000000000000000000000000000090e876880bc0dde38b550deb14479b39000000000000000000000000000000003b71c92ed683e74979791eb9220a2c5f"
#define V_AAD1 "7363676d020c0000b0b1b2b3b4b5b6b7b8b9babbbcbdbebf0100000000000000"
#define V_BIND_G3 "AbCxsrO0tba3uLm6u7y9vr8DAAAAAAAAAOlwU3-ZXxi2iTkNjmA8vgs"
#define V_BIND_G0 "AbCxsrO0tba3uLm6u7y9vr8AAAAAAAAAAAq9onAb2n7S67Z1TD-Mn-w"
#define V_ELEM_E1 "b0c5c5d46eb9f6032922b7475b8f286e"
#define V_ELEM_E15 "de55ae5b349293c15e7545e81cd5b1ec"
#define V_DIGEST "6e906b8f5a2b65c27757f2af475a9982"
#define V_DLIST "7363646c01012b00a0a1a2a3a4a5a6a7a8a9aaabacadaeaf050000000000000002000000000000006e906b8f5a2b65c27757f2af475a99820100000000000000b0c5c5d46eb9f6032922b7475b8f286e4a3139594f384d7556614f345673414f33744d664c3275626f752d69395568416c337571737661566d6749000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
#define V_DIRTY_ENTRY "73636a6401000000e0e1e2e3e4e5e6e7e8e9eaebecedeeefb0b1b2b3b4b5b6b7b8b9babbbcbdbebf03000000000000007895df3931b8b465d9dbab1593d9be0f"
#define V_CREATE_E1 "91eccdc762e1481266340a7b12659fe7"
#define V_DIRTY_CREATE "73636a6403000000e0e1e2e3e4e5e6e7e8e9eaebecedeeef91eccdc762e1481266340a7b12659fe700000000000000002568c82c6a46a5b0495c61e7208aa70b"
#define V_RENAME_E15 "88729f0a3547824bc37c201138ba885c"
#define V_STATE_HDR "73637374617465310100000000000000f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff555555555555555555555555555555554b28d6e55fb3d042fb1485716fb8837e"
#define V_STATE_SEG "73637367010000000100000000000000e0e1e2e3e4e5e6e7e8e9eaebecedeeef0100000000000000b0b1b2b3b4b5b6b7b8b9babbbcbdbebf0300000000000000a9c2369a4593a996587d88f37bb327b0"

#define MASTER_HEX "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define BS	4096
#define E1	"Y6G2dzFufoD2yW2ILP8RRG1Nno8o03BCj1YC6VQzScM"
#define E15	"J19YO8MuVaO4VsAO3tMfL2ubou-i9UhAl3uqsvaVmgI"

static uint8_t file_id[16], dir_nonce[16], child_nonce[16];

static struct sc_mkey *mkey_bs(const char *master_hex, uint32_t bs)
{
	uint8_t master[32];
	struct sc_mkey *m;

	sc_unhex(master_hex, master, sizeof(master));
	cr_assert_eq(sc_mkey_new(master, SC_CIPHER_AES_GCM, bs, &m), 0);
	for (int i = 0; i < 16; i++) {
		file_id[i] = (uint8_t)(0xb0 + i);
		dir_nonce[i] = (uint8_t)(0xa0 + i);
		child_nonce[i] = (uint8_t)(0xd0 + i);
	}
	return m;
}

static struct sc_ikey *ikey(struct sc_mkey *m, bool tree)
{
	struct sc_ikey *k;

	cr_assert_eq(sc_ikey_new(m, tree, &k), 0);
	return k;
}

static struct sc_dirplace place(const uint8_t *nonce, const char *enc)
{
	return (struct sc_dirplace){ .parent = nonce, .enc = enc, .enc_len = enc ? strlen(enc) : 0 };
}

static void leaf(uint64_t i, uint8_t out[16])
{
	for (int k = 0; k < 16; k++)
		out[k] = (uint8_t)(16 * i + k);
}

/* The root of a file of n units whose leaves are leaf(i), built level by level. */
static void tree_root(struct sc_ikey *k, uint64_t n, uint8_t root[16])
{
	uint8_t level_nodes[80][16], next[80][16];
	uint64_t cnt = n;
	unsigned level = 1;

	cr_assert_leq(n, 80);
	if (n == 0) {
		cr_assert_eq(sc_tree_root(k, file_id, 0, NULL, root), 0);
		return;
	}
	for (uint64_t i = 0; i < n; i++)
		leaf(i, level_nodes[i]);
	for (;;) {
		uint64_t m = (cnt + SC_TREE_FANOUT - 1) / SC_TREE_FANOUT;

		for (uint64_t j = 0; j < m; j++) {
			size_t nch = cnt - j * SC_TREE_FANOUT < SC_TREE_FANOUT ?
				     cnt - j * SC_TREE_FANOUT : SC_TREE_FANOUT;

			cr_assert_eq(sc_tree_node(k, file_id, level, j,
						  level_nodes[j * SC_TREE_FANOUT], nch, next[j]), 0);
		}
		memcpy(level_nodes, next, m * 16);
		cnt = m;
		if (cnt == 1)
			break;
		level++;
	}
	cr_assert_eq(sc_tree_root(k, file_id, n, level_nodes[0], root), 0);
}

/* The volume most tests use: the vectors' master key, bs 4096, with the unit tree. */
static struct sc_mkey *mk;
static struct sc_ikey *ik;

static void setup(void)
{
	mk = mkey_bs(MASTER_HEX, BS);
	ik = ikey(mk, true);
}

static void teardown(void)
{
	sc_ikey_free(ik);
	sc_mkey_free(mk);
	ik = NULL;
	mk = NULL;
}

/* Field by field: struct sc_ihdr has padding after file_id. */
static bool same_ihdr(const struct sc_ihdr *a, const struct sc_ihdr *b)
{
	return a->flags == b->flags && !memcmp(a->file_id, b->file_id, 16) &&
	       a->gen == b->gen && a->size == b->size && !memcmp(a->root, b->root, 16) &&
	       !memcmp(a->tag, b->tag, 16);
}

/* The bound header of the vectors: 2 units, gen 3, size 5000, at (a0..af, E1). */
static void bound_fields(struct sc_ikey *k, struct sc_ihdr *h)
{
	struct sc_dirplace at = place(dir_nonce, E1);

	memset(h, 0, sizeof(*h));
	h->flags = SC_IHDR_F_TRACKS | SC_IHDR_F_TREE;
	memcpy(h->file_id, file_id, 16);
	h->gen = 3;
	h->size = 5000;
	tree_root(k, 2, h->root);
	cr_assert_eq(sc_integ_place_tag(k, file_id, &at, h->tag), 0);
}

Test(integ_kat, keys, .init = setup, .fini = teardown)
{
	uint8_t fk[32];

	sc_expect_hex("K_h", sc_ikey_raw(ik, SC_IK_HEADER), 32, V_K_H);
	sc_expect_hex("K_e", sc_ikey_raw(ik, SC_IK_ENTRY), 32, V_K_E);
	sc_expect_hex("K_r", sc_ikey_raw(ik, SC_IK_DIRREC), 32, V_K_R);
	sc_expect_hex("K_d", sc_ikey_raw(ik, SC_IK_DIGEST), 32, V_K_D);
	sc_expect_hex("K_u", sc_ikey_raw(ik, SC_IK_TREE), 32, V_K_U);
	sc_expect_hex("K_j", sc_ikey_raw(ik, SC_IK_DIRTY), 32, V_K_J);
	sc_expect_hex("K_s", sc_ikey_raw(ik, SC_IK_STATE), 32, V_K_S);
	cr_assert_eq(sc_integ_file_key(ik, file_id, fk), 0);
	sc_expect_hex("file key", fk, 32, V_FILE_KEY);
}

/* n leaves leaf(0..n-1), on the heap. */
static uint8_t *leaves_of(uint64_t n)
{
	uint8_t *l = malloc((size_t)n * 16 + 1);

	cr_assert_not_null(l);
	for (uint64_t i = 0; i < n; i++)
		leaf(i, l + i * 16);
	return l;
}

/* sc_tree_root_of, the whole tree at once, gives the vectors' roots. */
Test(integ_kat, tree_root_of_all_leaves, .init = setup, .fini = teardown)
{
	uint8_t *l = leaves_of(65), root[16];

	cr_assert_eq(sc_tree_root_of(ik, file_id, l, 0, root), 0);
	sc_expect_hex("root of 0 leaves", root, 16, V_ROOT0);
	cr_assert_eq(sc_tree_root_of(ik, file_id, l, 2, root), 0);
	sc_expect_hex("root of 2 leaves", root, 16, V_ROOT2);
	cr_assert_eq(sc_tree_root_of(ik, file_id, l, 65, root), 0);
	sc_expect_hex("root of 65 leaves", root, 16, V_ROOT65);
	free(l);
}

/*
 * Three levels (4097 units: 65 nodes at level 1, 2 at level 2, 1 at 3),
 * built node by node here, against sc_tree_root_of; and one leaf changed
 * changes the root.
 */
Test(integ, tree_root_of_three_levels, .init = setup, .fini = teardown)
{
	const uint64_t n = 4097;
	uint8_t *l = leaves_of(n), l1[65][16], l2[2][16], l3[16], want[16], got[16];

	for (uint64_t j = 0; j < 65; j++)
		cr_assert_eq(sc_tree_node(ik, file_id, 1, j, l + j * 64 * 16,
					  j < 64 ? 64 : 1, l1[j]), 0);
	cr_assert_eq(sc_tree_node(ik, file_id, 2, 0, l1[0], 64, l2[0]), 0);
	cr_assert_eq(sc_tree_node(ik, file_id, 2, 1, l1[64], 1, l2[1]), 0);
	cr_assert_eq(sc_tree_node(ik, file_id, 3, 0, l2[0], 2, l3), 0);
	cr_assert_eq(sc_tree_root(ik, file_id, n, l3, want), 0);
	cr_assert_eq(sc_tree_root_of(ik, file_id, l, n, got), 0);
	cr_assert_arr_eq(got, want, 16, "the root of 4097 leaves, level by level");
	l[4000 * 16 + 3] ^= 0x01;
	cr_assert_eq(sc_tree_root_of(ik, file_id, l, n, got), 0);
	cr_assert_arr_neq(got, want, 16, "one flipped leaf bit changes the root");
	free(l);
}

/*
 * A node over children that are all zero is 16 zero bytes (format.md
 * 11.10); one non-zero child makes it the HMAC node; 0 or 65 children is
 * -EINVAL either way.
 */
Test(integ, tree_node_over_zeros_is_zero, .init = setup, .fini = teardown)
{
	uint8_t kids[SC_TREE_FANOUT + 1][16], got[16], want[16], zero[16] = { 0 };

	memset(kids, 0, sizeof(kids));
	cr_assert_eq(sc_tree_node_z(ik, file_id, 1, 5, kids[0], SC_TREE_FANOUT, got), 0);
	cr_assert_arr_eq(got, zero, 16, "64 zero leaves: a zero node");
	cr_assert_eq(sc_tree_node_z(ik, file_id, 3, 0, kids[0], 1, got), 0);
	cr_assert_arr_eq(got, zero, 16, "one zero node: a zero node");
	kids[63][15] ^= 0x01;
	cr_assert_eq(sc_tree_node_z(ik, file_id, 1, 5, kids[0], SC_TREE_FANOUT, got), 0);
	cr_assert_eq(sc_tree_node(ik, file_id, 1, 5, kids[0], SC_TREE_FANOUT, want), 0);
	cr_assert_arr_eq(got, want, 16, "a non-zero child: the HMAC node");
	cr_assert_arr_neq(got, zero, 16);
	cr_assert_eq(sc_tree_node_z(ik, file_id, 1, 0, kids[0], 0, got), -EINVAL);
	cr_assert_eq(sc_tree_node_z(ik, file_id, 1, 0, kids[0], SC_TREE_FANOUT + 1, got), -EINVAL);
}

/* xorshift64: the same draws every run */
static uint64_t draw(uint64_t *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

/*
 * The tree in memory (sc_utree) against the flat whole-tree build over a
 * model of the leaves, after each of 400 fixed pseudo-random sets (zero
 * leaves, holes, among them), zeroed ranges and resizes (shrinks and growths) of files
 * up to 5000 units (three levels past 4096).
 */
Test(integ, utree_follows_the_flat_tree, .init = setup, .fini = teardown)
{
	const uint64_t cap = 5000;
	uint8_t *model = calloc(cap, 16), got[16], want[16], l[16];
	struct sc_utree *t;
	uint64_t st = 0x9e3779b97f4a7c15ull, n = 0;

	cr_assert_not_null(model);
	cr_assert_eq(sc_utree_new(&t), 0);
	for (int op = 0; op < 400; op++) {
		uint64_t r = draw(&st);

		if (r % 5 == 0 || n == 0) {
			uint64_t m = draw(&st) % (cap + 1);

			if (m < n)
				memset(model + m * 16, 0, (size_t)(n - m) * 16);
			n = m;
			cr_assert_eq(sc_utree_resize(t, n), 0);
		} else if (r % 5 == 1) {	/* a punched hole */
			uint64_t a = draw(&st) % n, b = a + draw(&st) % (n - a + 1);

			memset(model + a * 16, 0, (size_t)(b - a) * 16);
			cr_assert_eq(sc_utree_zero(t, a, b), 0);
		} else {
			uint64_t u = draw(&st) % n;

			for (int k = 0; k < 16; k++)
				l[k] = r % 7 == 1 ? 0 : (uint8_t)draw(&st);
			memcpy(model + u * 16, l, 16);
			cr_assert_eq(sc_utree_set(t, u, l), 0);
		}
		cr_assert_eq(sc_utree_units(t), n);
		cr_assert_eq(sc_utree_root(t, ik, file_id, got), 0);
		cr_assert_eq(sc_tree_root_of(ik, file_id, model, n, want), 0);
		cr_assert_arr_eq(got, want, 16, "op %d, %llu units", op, (unsigned long long)n);
	}
	cr_assert_eq(sc_utree_set(t, n, l), -EINVAL, "a leaf past the units");
	sc_utree_free(t);
	free(model);
}

/*
 * A file of 2^32 units with two written (at its ends) is a few nodes and
 * a few HMACs; one leaf changed changes the root; cut by one unit, its
 * root is that of a new tree of those units with the first leaf alone.
 */
Test(integ, utree_sparse_huge_file, .init = setup, .fini = teardown)
{
	const uint64_t n = 1ull << 32;
	uint8_t a[16], b[16], r1[16], r2[16], r3[16];
	struct sc_utree *t, *u;

	leaf(1, a);
	leaf(2, b);
	cr_assert_eq(sc_utree_new(&t), 0);
	cr_assert_eq(sc_utree_resize(t, n), 0);
	cr_assert_eq(sc_utree_set(t, 0, a), 0);
	cr_assert_eq(sc_utree_set(t, n - 1, b), 0);
	cr_assert_eq(sc_utree_root(t, ik, file_id, r1), 0);
	b[5] ^= 0x01;
	cr_assert_eq(sc_utree_set(t, n - 1, b), 0);
	cr_assert_eq(sc_utree_root(t, ik, file_id, r2), 0);
	cr_assert_arr_neq(r1, r2, 16, "one flipped leaf bit changes the root");
	cr_assert_eq(sc_utree_resize(t, n - 1), 0);
	cr_assert_eq(sc_utree_root(t, ik, file_id, r1), 0);
	cr_assert_eq(sc_utree_new(&u), 0);
	cr_assert_eq(sc_utree_resize(u, n - 1), 0);
	cr_assert_eq(sc_utree_set(u, 0, a), 0);
	cr_assert_eq(sc_utree_root(u, ik, file_id, r3), 0);
	cr_assert_arr_eq(r1, r3, 16, "cut: the root of the units left");
	sc_utree_free(u);
	sc_utree_free(t);
}

Test(integ_kat, tree_and_headers, .init = setup, .fini = teardown)
{
	uint8_t leaves[2][16], node[16], root[16], hdr[SC_IHDR_SIZE], aad[32];
	struct sc_ihdr h, got;

	leaf(0, leaves[0]);
	leaf(1, leaves[1]);
	cr_assert_eq(sc_tree_node(ik, file_id, 1, 0, leaves[0], 2, node), 0);
	sc_expect_hex("node(1, 0) of 2 units", node, 16, V_NODE1_0_OF2);
	tree_root(ik, 2, root);
	sc_expect_hex("root, 2 units", root, 16, V_ROOT2);
	tree_root(ik, 0, root);
	sc_expect_hex("root, 0 units", root, 16, V_ROOT0);
	tree_root(ik, 65, root);
	sc_expect_hex("root, 65 units", root, 16, V_ROOT65);

	bound_fields(ik, &h);
	sc_expect_hex("place tag", h.tag, 16, V_TAG_E1);
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), 0);
	sc_expect_hex("bound header", hdr, sizeof(hdr), V_HDR_BOUND);
	cr_assert_eq(sc_ihdr_verify(ik, hdr, sizeof(hdr), &got), 0);
	cr_assert(same_ihdr(&got, &h), "verify gives the packed fields back");
	sc_ihdr_aad(hdr, 1, aad);
	sc_expect_hex("AAD of unit 1", aad, 32, V_AAD1);

	memset(&h, 0, sizeof(h));
	h.flags = SC_IHDR_F_TRACKS | SC_IHDR_F_LINKED | SC_IHDR_F_TREE;
	memcpy(h.file_id, file_id, 16);
	h.gen = 4;
	tree_root(ik, 0, h.root);
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), 0);
	sc_expect_hex("linked header", hdr, sizeof(hdr), V_HDR_LINKED);
	cr_assert_eq(sc_ihdr_verify(ik, hdr, sizeof(hdr), &got), 0);
	cr_assert_eq(got.gen, 4);
}

Test(integ_kat, binding_records, .init = setup, .fini = teardown)
{
	struct sc_dirplace at = place(dir_nonce, E1);
	char enc[SC_BINDREC_ENC_LEN + 1];
	uint8_t id[16];
	uint64_t g;

	cr_assert_eq(sc_bindrec_seal(ik, file_id, 3, &at, enc), 0);
	cr_assert_str_eq(enc, V_BIND_G3);
	cr_assert_eq(sc_bindrec_open(ik, enc, strlen(enc), &at, id, &g), 0);
	cr_assert(memcmp(id, file_id, 16) == 0 && g == 3);
	cr_assert_eq(sc_bindrec_seal(ik, file_id, 0, &at, enc), 0);
	cr_assert_str_eq(enc, V_BIND_G0);
	cr_assert_eq(sc_bindrec_open(ik, V_BIND_G0, strlen(V_BIND_G0), &at, id, &g), 0);
	cr_assert_eq(g, 0);
}

Test(integ_kat, listing_digest, .init = setup, .fini = teardown)
{
	uint8_t e1[16], e15[16], digest[16];

	cr_assert_eq(sc_dir_elem(ik, dir_nonce, E1, strlen(E1), e1), 0);
	sc_expect_hex("elem(E1)", e1, 16, V_ELEM_E1);
	cr_assert_eq(sc_dir_elem(ik, dir_nonce, E15, strlen(E15), e15), 0);
	sc_expect_hex("elem(E15)", e15, 16, V_ELEM_E15);
	for (int i = 0; i < 16; i++)
		digest[i] = e1[i] ^ e15[i];
	sc_expect_hex("digest", digest, 16, V_DIGEST);
}

/* A listing record (11.7): its bytes, read back, and every field a parse refuses. */
Test(integ_kat, listing_record, .init = setup, .fini = teardown)
{
	uint8_t e1[16], e15[16], buf[SC_DLIST_LEN], bad[SC_DLIST_LEN + 1], other[16];
	struct sc_dlist r = { .gen = 5, .count = 2, .count_before = 1,
			      .pend = SC_DLIST_ADDED }, got;

	cr_assert_eq(sc_dir_elem(ik, dir_nonce, E1, strlen(E1), e1), 0);
	cr_assert_eq(sc_dir_elem(ik, dir_nonce, E15, strlen(E15), e15), 0);
	memcpy(r.nonce, dir_nonce, 16);
	memcpy(r.digest_before, e1, 16);
	memcpy(r.digest, e1, 16);
	sc_dlist_xor(r.digest, e15);
	r.pend_len = (uint8_t)strlen(E15);
	memcpy(r.pend_name, E15, r.pend_len);
	cr_assert_eq(sc_dlist_pack(&r, buf), 0);
	sc_expect_hex("listing record", buf, SC_DLIST_LEN, V_DLIST);
	cr_assert_eq(sc_dlist_parse(buf, sizeof(buf), dir_nonce, &got), 0);
	cr_assert(memcmp(&got, &r, sizeof(r)) == 0);

	/* another directory's, another version, other lengths, bad fields */
	memset(other, 0x5a, sizeof(other));
	cr_assert_eq(sc_dlist_parse(buf, sizeof(buf), other, &got), -EBADMSG);
	memcpy(bad, buf, sizeof(buf));
	bad[4] = 2;
	cr_assert_eq(sc_dlist_parse(bad, SC_DLIST_LEN, dir_nonce, &got), -EPROTONOSUPPORT);
	cr_assert_eq(sc_dlist_parse(buf, SC_DLIST_LEN - 1, dir_nonce, &got), -EUCLEAN);
	memcpy(bad, buf, sizeof(buf));
	bad[SC_DLIST_LEN] = 0;
	cr_assert_eq(sc_dlist_parse(bad, SC_DLIST_LEN + 1, dir_nonce, &got), -EUCLEAN);
	cr_assert_eq(sc_dlist_parse(buf, 4, dir_nonce, &got), -EUCLEAN);
	for (size_t off = 0; off < 4; off++) {		/* the magic */
		memcpy(bad, buf, sizeof(buf));
		bad[off] ^= 0x20;
		cr_assert_eq(sc_dlist_parse(bad, SC_DLIST_LEN, dir_nonce, &got), -EUCLEAN);
	}
	memcpy(bad, buf, sizeof(buf));
	bad[5] = 3;					/* no such pending kind */
	cr_assert_eq(sc_dlist_parse(bad, SC_DLIST_LEN, dir_nonce, &got), -EUCLEAN);
	memcpy(bad, buf, sizeof(buf));
	bad[6] = 0;					/* pending, with no name */
	cr_assert_eq(sc_dlist_parse(bad, SC_DLIST_LEN, dir_nonce, &got), -EUCLEAN);
	memcpy(bad, buf, sizeof(buf));
	bad[7] = 1;					/* the zero byte */
	cr_assert_eq(sc_dlist_parse(bad, SC_DLIST_LEN, dir_nonce, &got), -EUCLEAN);
	memcpy(bad, buf, sizeof(buf));
	bad[80 + strlen(E15)] = 'x';			/* a byte after the name */
	cr_assert_eq(sc_dlist_parse(bad, SC_DLIST_LEN, dir_nonce, &got), -EUCLEAN);
	memcpy(bad, buf, sizeof(buf));
	bad[81] = '/';					/* a name no directory holds */
	cr_assert_eq(sc_dlist_parse(bad, SC_DLIST_LEN, dir_nonce, &got), -EUCLEAN);

	/* nothing pending: no name; a pack refuses what a parse would */
	r.pend = SC_DLIST_NONE;
	cr_assert_eq(sc_dlist_pack(&r, buf), -EINVAL);
	r.pend_len = 0;
	memset(r.pend_name, 0, sizeof(r.pend_name));
	cr_assert_eq(sc_dlist_pack(&r, buf), 0);
	cr_assert_eq(sc_dlist_parse(buf, sizeof(buf), dir_nonce, &got), 0);
	cr_assert_eq(got.pend, SC_DLIST_NONE);
	r.pend = 3;
	r.pend_len = 1;
	cr_assert_eq(sc_dlist_pack(&r, buf), -EINVAL);
}

Test(integ_kat, dirty_entry_and_state, .init = setup, .fini = teardown)
{
	uint8_t entry[SC_DIRTY_ENTRY_LEN], sh[SC_STATE_HDR_LEN], seg[80], mac[16];
	struct sc_dirplace at = place(dir_nonce, E1), at15 = place(dir_nonce, E15);
	uint8_t tag1[16];

	sc_unhex(V_DIRTY_ENTRY, entry, sizeof(entry));
	cr_assert_eq(sc_dirty_mac(ik, entry, mac), 0);
	sc_expect_hex("dirty entry MAC", mac, 16, V_DIRTY_ENTRY + 96);
	/* a create's entry: kind 3, the place's create tag where a file id goes */
	cr_assert_eq(sc_integ_create_tag(ik, &at, mac), 0);
	sc_expect_hex("create tag", mac, 16, V_CREATE_E1);
	cr_assert_eq(memcmp(V_DIRTY_CREATE + 48, V_CREATE_E1, 32), 0);
	sc_unhex(V_DIRTY_CREATE, entry, sizeof(entry));
	cr_assert_eq(sc_dirty_mac(ik, entry, mac), 0);
	sc_expect_hex("create entry MAC", mac, 16, V_DIRTY_CREATE + 96);
	/* a rename's: the file and where it goes */
	cr_assert_eq(sc_integ_rename_tag(ik, file_id, &at15, mac), 0);
	sc_expect_hex("rename tag", mac, 16, V_RENAME_E15);
	cr_assert_eq(sc_integ_rename_tag(ik, file_id, &at, tag1), 0);
	cr_assert_neq(memcmp(mac, tag1, 16), 0, "another place, another tag");
	sc_unhex(V_STATE_HDR, sh, sizeof(sh));
	cr_assert_eq(sc_state_mac(ik, NULL, sh, 48, mac), 0);
	sc_expect_hex("state header MAC", mac, 16, V_STATE_HDR + 96);
	cr_assert_eq(sc_unhex(V_STATE_SEG, seg, sizeof(seg)), 80);
	cr_assert_eq(sc_state_mac(ik, sh + 48, seg, 64, mac), 0);
	sc_expect_hex("state segment MAC", mac, 16, V_STATE_SEG + 128);
}

/* Every single bit of the header flipped: the version byte reads as another version, the rest fails the MAC. */
Test(ihdr, every_bit_flipped_is_refused, .init = setup, .fini = teardown)
{
	uint8_t hdr[SC_IHDR_SIZE], bad[SC_IHDR_SIZE];

	sc_unhex(V_HDR_BOUND, hdr, sizeof(hdr));
	cr_assert_eq(sc_ihdr_verify(ik, hdr, sizeof(hdr), NULL), 0);
	for (size_t bit = 0; bit < 8 * sizeof(hdr); bit++) {
		int ret;

		memcpy(bad, hdr, sizeof(bad));
		bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ret = sc_ihdr_verify(ik, bad, sizeof(bad), NULL);
		if (bit / 8 == 4)
			cr_assert_eq(ret, -EPROTONOSUPPORT, "bit %zu: %d", bit, ret);
		else
			cr_assert_eq(ret, -EUCLEAN, "bit %zu: %d", bit, ret);
	}
}

Test(ihdr, lengths_volumes_unit_sizes_and_versions, .init = setup, .fini = teardown)
{
	struct sc_mkey *other, *bs512, *xts;
	struct sc_ikey *flat = ikey(mk, false), *oik, *ik512, *none = NULL;
	uint8_t hdr[SC_IHDR_SIZE + 1], v1[SC_GHDR_SIZE];
	struct sc_ihdr h;
	uint8_t master[32];

	sc_unhex(V_HDR_BOUND, hdr, SC_IHDR_SIZE);
	hdr[SC_IHDR_SIZE] = 0;
	for (size_t len = 0; len <= SC_IHDR_SIZE + 1; len++)
		if (len != SC_IHDR_SIZE)
			cr_assert_eq(sc_ihdr_verify(ik, hdr, len, NULL), -EUCLEAN, "length %zu", len);
	/* Another volume's key: the MAC fails. */
	other = mkey_bs("ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", BS);
	oik = ikey(other, true);
	cr_assert_eq(sc_ihdr_verify(oik, hdr, SC_IHDR_SIZE, NULL), -EUCLEAN);
	/* The same key, another unit size, or a volume without the tree. */
	bs512 = mkey_bs(MASTER_HEX, 512);
	ik512 = ikey(bs512, true);
	cr_assert_eq(sc_ihdr_verify(ik512, hdr, SC_IHDR_SIZE, NULL), -EINVAL);
	cr_assert_eq(sc_ihdr_verify(flat, hdr, SC_IHDR_SIZE, NULL), -EINVAL);
	/* A version 1 header (a file of a volume without integrity): unbound, refused. */
	cr_assert_eq(sc_ghdr_new(mk, v1), 0);
	cr_assert_eq(sc_ihdr_verify(ik, v1, sizeof(v1), NULL), -EUCLEAN);
	/* ... and told from other refused headers, for the messages */
	cr_assert(sc_ghdr_is_v1(v1, sizeof(v1)));
	cr_assert_not(sc_ghdr_is_v1(v1, sizeof(v1) - 1), "cut");
	cr_assert_not(sc_ghdr_is_v1(hdr, SC_IHDR_SIZE), "version 2");
	/* An unknown version byte is reported as such, whatever the length. */
	hdr[4] = 3;
	cr_assert_eq(sc_ihdr_verify(ik, hdr, 7, NULL), -EPROTONOSUPPORT);
	/* Only aes-gcm volumes have these keys. */
	sc_unhex(MASTER_HEX, master, sizeof(master));
	cr_assert_eq(sc_mkey_new(master, SC_CIPHER_AES_XTS, BS, &xts), 0);
	cr_assert_eq(sc_ikey_new(xts, true, &none), -EINVAL);
	cr_assert_null(none);
	/* A tree volume's header packed for a volume without one is refused. */
	bound_fields(ik, &h);
	cr_assert_eq(sc_ihdr_pack(flat, &h, hdr), -EINVAL);
	sc_mkey_free(xts);
	sc_ikey_free(ik512);
	sc_mkey_free(bs512);
	sc_ikey_free(oik);
	sc_mkey_free(other);
	sc_ikey_free(flat);
}

/* The field rules of format.md 11.3 that the MAC cannot check are refused at pack. */
Test(ihdr, pack_refuses_bad_fields, .init = setup, .fini = teardown)
{
	struct sc_ikey *flat = ikey(mk, false);
	uint8_t hdr[SC_IHDR_SIZE];
	struct sc_ihdr good, h;

	bound_fields(ik, &good);
	cr_assert_eq(sc_ihdr_pack(ik, &good, hdr), 0);
	h = good, h.gen = 0;
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), -EINVAL, "gen 0");
	h = good, h.flags &= (uint16_t)~SC_IHDR_F_TRACKS;
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), -EINVAL, "no TRACKS");
	h = good, h.flags |= 0x0020;
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), -EINVAL, "unknown flag");
	h = good, h.flags |= SC_IHDR_F_LINKED;
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), 0, "LINKED with its first name's tag");
	h = good, h.flags |= SC_IHDR_F_INTERNAL;
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), -EINVAL, "INTERNAL with a place tag");
	h = good, memset(h.tag, 0, 16);
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), -EINVAL, "no place tag, not LINKED");
	h = good, memset(h.tag, 0, 16), h.flags |= SC_IHDR_F_LINKED | SC_IHDR_F_INTERNAL;
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), -EINVAL, "LINKED and INTERNAL");
	h = good, h.flags |= SC_IHDR_F_HOLES;
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), -EINVAL, "HOLES with TREE");
	h = good, memset(h.root, 0, 16);
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), -EINVAL, "TREE without a root");
	h = good, h.flags &= (uint16_t)~SC_IHDR_F_TREE;
	cr_assert_eq(sc_ihdr_pack(flat, &h, hdr), -EINVAL, "a root without TREE");
	memset(h.root, 0, 16);
	cr_assert_eq(sc_ihdr_pack(flat, &h, hdr), 0, "no tree, no root");
	cr_assert_eq(sc_ihdr_verify(flat, hdr, sizeof(hdr), NULL), 0);
	h = good, h.size = UINT64_MAX;
	cr_assert_eq(sc_ihdr_pack(ik, &h, hdr), -EINVAL, "size past the format's maximum");
	sc_ikey_free(flat);
}

/* The AAD leaves out the flags (a rebind or LINKED rewrites the header alone) and holds the index. */
Test(ihdr, aad_ignores_flags_and_binds_the_index, .init = setup, .fini = teardown)
{
	uint8_t a[SC_IHDR_SIZE], b[SC_IHDR_SIZE], aa[32], ab[32];
	struct sc_ihdr h;

	bound_fields(ik, &h);
	cr_assert_eq(sc_ihdr_pack(ik, &h, a), 0);
	h.flags |= SC_IHDR_F_LINKED;
	memset(h.tag, 0, 16);
	h.gen = 9;
	cr_assert_eq(sc_ihdr_pack(ik, &h, b), 0);
	sc_ihdr_aad(a, 5, aa);
	sc_ihdr_aad(b, 5, ab);
	cr_assert(memcmp(aa, ab, 32) == 0);
	sc_ihdr_aad(a, 6, ab);
	cr_assert(memcmp(aa, ab, 32) != 0);
}

/* A header is bound at its place only: another name, directory or file id is -ESTALE. */
Test(bind, wrong_place_is_refused, .init = setup, .fini = teardown)
{
	struct sc_dirplace at = place(dir_nonce, E1), name2 = place(dir_nonce, E15);
	struct sc_dirplace dir2 = place(child_nonce, E1), root = place(NULL, NULL);
	struct sc_ihdr h, other;
	char e[sizeof(E1)];

	bound_fields(ik, &h);
	cr_assert_eq(sc_ihdr_bound_at(ik, &h, &at), 0);
	cr_assert_eq(sc_ihdr_bound_at(ik, &h, &name2), -ESTALE);
	cr_assert_eq(sc_ihdr_bound_at(ik, &h, &dir2), -ESTALE);
	cr_assert_eq(sc_ihdr_bound_at(ik, &h, &root), -EINVAL);
	/* Each character of the name matters. */
	for (size_t i = 0; i < strlen(E1); i++) {
		struct sc_dirplace p;

		memcpy(e, E1, sizeof(e));
		e[i] = e[i] == 'A' ? 'B' : 'A';
		p = place(dir_nonce, e);
		cr_assert_eq(sc_ihdr_bound_at(ik, &h, &p), -ESTALE, "character %zu", i);
	}
	/* Another file's header carrying this place's tag is not bound here (the tag names the id). */
	other = h;
	other.file_id[0] ^= 1;
	cr_assert_eq(sc_ihdr_bound_at(ik, &other, &at), -ESTALE);
	/* A LINKED header with its first name's tag is bound there, elsewhere by records only. */
	other = h;
	other.flags |= SC_IHDR_F_LINKED;
	cr_assert_eq(sc_ihdr_bound_at(ik, &other, &at), 0);
	cr_assert_eq(sc_ihdr_bound_at(ik, &other, &name2), -ESTALE);
	/* LINKED without a tag and INTERNAL headers bind no place: a record must vouch. */
	memset(other.tag, 0, 16);
	cr_assert_eq(sc_ihdr_bound_at(ik, &other, &at), -ENOENT);
	other.flags = SC_IHDR_F_TRACKS | SC_IHDR_F_INTERNAL;
	cr_assert_eq(sc_ihdr_bound_at(ik, &other, &at), -ENOENT);
}

/* A binding record opens at its place only, every stored character counts, and it vouches by its rules. */
Test(bind, records_wrong_place_damage_and_rules, .init = setup, .fini = teardown)
{
	struct sc_dirplace at = place(dir_nonce, E1), name2 = place(dir_nonce, E15);
	struct sc_dirplace dir2 = place(child_nonce, E1);
	char enc[SC_BINDREC_ENC_LEN + 1], bad[SC_BINDREC_ENC_LEN + 1];
	struct sc_ihdr h, linked;
	uint8_t id[16];
	uint64_t g;

	cr_assert_eq(sc_bindrec_seal(ik, file_id, 3, &at, enc), 0);
	cr_assert_eq(strlen(enc), SC_BINDREC_ENC_LEN);
	cr_assert_eq(sc_bindrec_open(ik, enc, strlen(enc), &name2, id, &g), -EBADMSG);
	cr_assert_eq(sc_bindrec_open(ik, enc, strlen(enc), &dir2, id, &g), -EBADMSG);
	cr_assert_eq(sc_bindrec_open(ik, enc, strlen(enc) - 1, &at, id, &g), -EBADMSG);
	for (size_t i = 0; i < SC_BINDREC_ENC_LEN; i++) {
		memcpy(bad, enc, sizeof(bad));
		bad[i] = bad[i] == 'A' ? 'B' : 'A';
		cr_assert_eq(sc_bindrec_open(ik, bad, SC_BINDREC_ENC_LEN, &at, id, &g), -EBADMSG,
			     "character %zu", i);
	}
	/* The rules of 11.5: g >= 1 for that very unlinked header, g = 0 for LINKED ones. */
	bound_fields(ik, &h);
	cr_assert(sc_bindrec_vouches(&h, file_id, 3));
	cr_assert(!sc_bindrec_vouches(&h, file_id, 4));
	cr_assert(!sc_bindrec_vouches(&h, file_id, 0));
	linked = h;
	linked.flags |= SC_IHDR_F_LINKED;
	cr_assert(sc_bindrec_vouches(&linked, file_id, 0));
	cr_assert(!sc_bindrec_vouches(&linked, file_id, 3));
	id[0] = (uint8_t)(file_id[0] ^ 1);
	memcpy(id + 1, file_id + 1, 15);
	cr_assert(!sc_bindrec_vouches(&h, id, 3));
	linked.flags = SC_IHDR_F_TRACKS | SC_IHDR_F_INTERNAL | SC_IHDR_F_TREE;
	cr_assert(!sc_bindrec_vouches(&linked, file_id, 0));
}

/*
 * Units of a version 2 file (sc_gkey_new_v2): sealed under the vectors'
 * file key with the vectors' associated data, checked by opening them
 * with OpenSSL directly; a rewrite of the header's flags, gen, size or
 * binding (the same file id) leaves its units readable.
 */
static void open_raw(const uint8_t *st, size_t len, const char *aad_hex, uint8_t *out)
{
	uint8_t key[32], aad[32];
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n, f;

	sc_unhex(V_FILE_KEY, key, sizeof(key));
	sc_unhex(aad_hex, aad, sizeof(aad));
	cr_assert(c);
	cr_assert_eq(EVP_DecryptInit_ex2(c, EVP_aes_256_gcm(), NULL, NULL, NULL), 1);
	cr_assert_eq(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, 16, NULL), 1);
	cr_assert_eq(EVP_DecryptInit_ex2(c, NULL, key, st, NULL), 1);
	cr_assert_eq(EVP_DecryptUpdate(c, NULL, &n, aad, sizeof(aad)), 1);
	cr_assert_eq(EVP_DecryptUpdate(c, out, &n, st + 16, (int)len), 1);
	cr_assert_eq(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, (void *)(st + 16 + len)), 1);
	cr_assert_eq(EVP_DecryptFinal_ex(c, out + n, &f), 1, "the unit opens under the vectors");
	EVP_CIPHER_CTX_free(c);
}

Test(integ_kat, version2_units, .init = setup, .fini = teardown)
{
	static uint8_t pt[BS], st[BS + 32], back[BS];
	uint8_t hdr[SC_IHDR_SIZE], hdr2[SC_IHDR_SIZE];
	struct sc_gkey *gk, *gk2, *gk1;
	struct sc_ihdr h;

	for (size_t i = 0; i < sizeof(pt); i++)
		pt[i] = (uint8_t)(i * 7 + 3);
	sc_unhex(V_HDR_BOUND, hdr, sizeof(hdr));
	cr_assert_eq(sc_gkey_new_v2(ik, hdr, sizeof(hdr), &h, &gk), 0);
	cr_assert(h.gen == 3 && h.size == 5000 && !memcmp(h.file_id, file_id, 16));
	cr_assert_eq(sc_gkey_block_size(gk), BS);
	cr_assert_eq(memcmp(sc_gkey_file_id(gk), file_id, 16), 0);
	cr_assert_not(sc_gkey_holes_ok(gk), "TREE: no HOLES flag");
	cr_assert_eq(sc_gcm_seal(gk, 1, pt, sizeof(pt), st), 0);
	open_raw(st, sizeof(pt), V_AAD1, back);
	cr_assert_eq(memcmp(back, pt, sizeof(pt)), 0);
	/* the LINKED header of the same id (gen 4, no tag, another root) opens it too */
	sc_unhex(V_HDR_LINKED, hdr2, sizeof(hdr2));
	cr_assert_eq(sc_gkey_new_v2(ik, hdr2, sizeof(hdr2), &h, &gk2), 0);
	cr_assert_eq(sc_gcm_open(gk2, 1, st, sizeof(st), back, NULL), (int)sizeof(pt));
	cr_assert_eq(sc_gcm_open(gk2, 2, st, sizeof(st), back, NULL), -EBADMSG, "index bound");
	/* a version 1 gkey refuses the header; a version 2 one refuses damage */
	cr_assert_eq(sc_gkey_new(mk, hdr, sizeof(hdr), &gk1), -EPROTONOSUPPORT);
	hdr[40] ^= 1;
	cr_assert_eq(sc_gkey_new_v2(ik, hdr, sizeof(hdr), &h, &gk1), -EUCLEAN);
	cr_assert_eq(sc_gkey_new_v2(ik, hdr2, SC_IHDR_SIZE - 1, &h, &gk1), -EUCLEAN);
	sc_gkey_free(gk2);
	sc_gkey_free(gk);
}

/* HOLES in a version 2 header (a volume without the tree) lets zero units be holes. */
Test(integ_kat, version2_holes, .init = setup, .fini = teardown)
{
	struct sc_ikey *flat = ikey(mk, false);
	struct sc_dirplace at = place(dir_nonce, E1);
	static uint8_t zeros[BS + 32], back[BS];
	uint8_t hdr[SC_IHDR_SIZE];
	struct sc_ihdr h = { .flags = SC_IHDR_F_TRACKS, .gen = 1 }, got;
	struct sc_gkey *gk;

	memcpy(h.file_id, file_id, 16);
	cr_assert_eq(sc_integ_place_tag(flat, file_id, &at, h.tag), 0);
	cr_assert_eq(sc_ihdr_pack(flat, &h, hdr), 0);
	cr_assert_eq(sc_gkey_new_v2(flat, hdr, sizeof(hdr), &got, &gk), 0);
	cr_assert_not(sc_gkey_holes_ok(gk));
	cr_assert_eq(sc_gcm_open(gk, 0, zeros, sizeof(zeros), back, NULL), -EUCLEAN);
	sc_gkey_free(gk);
	h.flags |= SC_IHDR_F_HOLES;
	cr_assert_eq(sc_ihdr_pack(flat, &h, hdr), 0);
	cr_assert_eq(sc_gkey_new_v2(flat, hdr, sizeof(hdr), &got, &gk), 0);
	cr_assert(sc_gkey_holes_ok(gk));
	cr_assert_eq(sc_gcm_open(gk, 0, zeros, sizeof(zeros), back, NULL), BS);
	sc_gkey_free(gk);
	sc_ikey_free(flat);
}
