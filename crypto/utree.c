/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * utree.c - a file's unit tree in memory (docs/format.md 11.10): its
 * leaves (each unit's tag, zeros for a hole) in groups of 64, under nodes
 * of 64 children, as sparse as the file: a subtree whose leaves are all
 * zero is no memory at all, and its node is 16 zero bytes with no HMAC.
 * So a file of 2^32 units with one written costs a few nodes, and its root
 * a few HMACs.
 *
 * Each node caches its value; setting a leaf marks the nodes above it
 * dirty, and the root rehashes only dirty nodes (the design's "dirty
 * groups rehashed at commit").  A node's value depends on how many
 * children it has, which the file's unit count n decides for the last
 * node of each level: a resize marks the paths of the old and the new
 * last unit dirty.
 *
 * Not thread-safe: the caller serialises (the data layer under the file's
 * tree lock, fsck alone).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "crypto_i.h"

struct unode {
	uint8_t		val[SC_INTEG_TAG_LEN];	/* the node's value, when !dirty */
	bool		dirty;
	union {
		struct unode	*kid[SC_TREE_FANOUT];		/* levels >= 2 */
		uint8_t		leaf[SC_TREE_FANOUT][SC_INTEG_TAG_LEN];	/* level 1 */
	};
};

struct sc_utree {
	struct unode	*top;	/* of level height, or NULL: every leaf zero */
	unsigned	height;	/* >= 1; the radix covers 64^height units */
	uint64_t	n;	/* the file's units */
};

/* 0, -ENOMEM. */
int sc_utree_new(struct sc_utree **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->height = 1;
	return 0;
}

static void node_free(struct unode *nd, unsigned level)
{
	if (!nd)
		return;
	for (unsigned i = 0; level > 1 && i < SC_TREE_FANOUT; i++)
		node_free(nd->kid[i], level - 1);
	free(nd);
}

void sc_utree_free(struct sc_utree *t)
{
	if (!t)
		return;
	node_free(t->top, t->height);
	free(t);
}

uint64_t sc_utree_units(const struct sc_utree *t)
{
	return t->n;
}

/* How many units the radix of height h covers (capped: 64^11 > 2^64). */
static uint64_t span(unsigned h)
{
	return h >= 11 ? UINT64_MAX : 1ull << (6 * h);
}

/* The radix grows until it covers unit u; the old top becomes child 0.  0, -ENOMEM. */
static int cover(struct sc_utree *t, uint64_t u)
{
	while (u >= span(t->height)) {
		struct unode *nt = NULL;

		if (t->top) {
			nt = calloc(1, sizeof(*nt));
			if (!nt)
				return -ENOMEM;
			nt->kid[0] = t->top;
			nt->dirty = true;
		}
		t->top = nt;
		t->height++;
	}
	return 0;
}

/*
 * The path to unit u marked dirty, made where make (else stopped at the
 * first missing node), and u's level-1 node into *out (NULL: none).
 * 0, -ENOMEM.
 */
static int path(struct sc_utree *t, uint64_t u, bool make, struct unode **out)
{
	struct unode **at = &t->top;
	int ret = cover(t, u);

	*out = NULL;
	for (unsigned l = t->height; ret == 0; l--) {
		if (!*at && make)
			*at = calloc(1, sizeof(**at));
		if (!*at)
			return make ? -ENOMEM : 0;
		(*at)->dirty = true;
		if (l == 1)
			break;
		at = &(*at)->kid[(u / span(l - 1)) % SC_TREE_FANOUT];
	}
	*out = ret == 0 ? *at : NULL;
	return ret;
}

/* Leaf u (u < n) set; a zero leaf makes no node.  0, -EINVAL (u >= n), -ENOMEM. */
int sc_utree_set(struct sc_utree *t, uint64_t u, const uint8_t leaf[SC_INTEG_TAG_LEN])
{
	static const uint8_t zero[SC_INTEG_TAG_LEN];
	bool z = memcmp(leaf, zero, sizeof(zero)) == 0;
	struct unode *g;
	int ret;

	if (u >= t->n)
		return -EINVAL;
	ret = path(t, u, !z, &g);
	if (ret == 0 && g)
		memcpy(g->leaf[u % SC_TREE_FANOUT], leaf, SC_INTEG_TAG_LEN);
	return ret;
}

/*
 * Every leaf of [a, b) zeroed in the subtree *at of level l whose first
 * unit is base: subtrees wholly inside freed, the others marked dirty.
 */
static void zero_range(struct unode **at, unsigned l, uint64_t base, uint64_t a, uint64_t b)
{
	struct unode *nd = *at;
	uint64_t end = span(l) == UINT64_MAX || base > UINT64_MAX - span(l) ? UINT64_MAX :
		       base + span(l);

	if (!nd || a >= end || b <= base)
		return;
	if (a <= base && b >= end) {
		node_free(nd, l);
		*at = NULL;
		return;
	}
	nd->dirty = true;
	if (l == 1) {
		uint64_t x = a > base ? a - base : 0, y = b < end ? b - base : SC_TREE_FANOUT;

		memset(nd->leaf[x], 0, (size_t)(y - x) * SC_INTEG_TAG_LEN);
		return;
	}
	for (unsigned i = 0; i < SC_TREE_FANOUT; i++)
		zero_range(&nd->kid[i], l - 1, base + i * span(l - 1), a, b);
}

/* The leaves of units [a, b) zeroed (holes).  0, -EINVAL (b past the units). */
int sc_utree_zero(struct sc_utree *t, uint64_t a, uint64_t b)
{
	if (b > t->n || a > b)
		return -EINVAL;
	zero_range(&t->top, t->height, 0, a, b);
	return 0;
}

/*
 * The file now has n units: leaves past n are gone (zero), new ones are
 * holes until set; the last node of each level changes its child count,
 * so the paths of the old and new last units are rehashed.  0, -ENOMEM.
 */
int sc_utree_resize(struct sc_utree *t, uint64_t n)
{
	struct unode *g;
	int ret = 0;

	if (n == t->n)
		return 0;
	if (n < t->n)
		zero_range(&t->top, t->height, 0, n, t->n);
	if (t->n > 0)
		ret = path(t, t->n - 1, false, &g);
	/* also grows the radix to the new height: node(h, 0) is on its left edge */
	if (ret == 0 && n > 0)
		ret = path(t, n - 1, false, &g);
	if (ret == 0)
		t->n = n;
	return ret;
}

/* The number of nodes at level l of a file of n units (level 0: its leaves). */
static uint64_t count_at(uint64_t n, unsigned l)
{
	while (l--)
		n = (n + SC_TREE_FANOUT - 1) / SC_TREE_FANOUT;
	return n;
}

/*
 * The value of node (l, j) -- nd, NULL for a subtree of zero leaves -- of
 * a file of n units, over the children that exist (format.md 11.10),
 * rehashed if dirty.  0, -EIO.
 */
static int node_val(struct unode *nd, const struct sc_ikey *ik, const uint8_t *id, unsigned l,
		    uint64_t j, uint64_t n, uint8_t out[SC_INTEG_TAG_LEN])
{
	uint8_t kids[SC_TREE_FANOUT][SC_INTEG_TAG_LEN];
	uint64_t k = count_at(n, l - 1) - j * SC_TREE_FANOUT;
	int ret = 0;

	if (!nd) {
		memset(out, 0, SC_INTEG_TAG_LEN);
		return 0;
	}
	if (nd->dirty) {
		k = k < SC_TREE_FANOUT ? k : SC_TREE_FANOUT;
		for (uint64_t i = 0; i < k && ret == 0; i++) {
			if (l == 1)
				memcpy(kids[i], nd->leaf[i], SC_INTEG_TAG_LEN);
			else
				ret = node_val(nd->kid[i], ik, id, l - 1, j * SC_TREE_FANOUT + i, n,
					       kids[i]);
		}
		if (ret == 0)
			ret = sc_tree_node_z(ik, id, l, j, kids[0], (size_t)k, nd->val);
		if (ret < 0)
			return ret;
		nd->dirty = false;
	}
	memcpy(out, nd->val, SC_INTEG_TAG_LEN);
	return 0;
}

/* The root of the file's n units (format.md 11.10), into out.  0, -EIO. */
int sc_utree_root(struct sc_utree *t, const struct sc_ikey *ik,
		  const uint8_t file_id[SC_GCM_FILE_ID_LEN], uint8_t out[SC_INTEG_TAG_LEN])
{
	uint8_t top[SC_INTEG_TAG_LEN];
	struct unode *nd = t->top;
	unsigned h = 1, l;
	int ret;

	if (t->n == 0)
		return sc_tree_root(ik, file_id, 0, NULL, out);
	while (count_at(t->n, h) > 1)
		h++;
	/* node(h, 0) is the radix's node of level h on its left edge (height >= h: resize) */
	for (l = t->height; nd && l > h; l--)
		nd = nd->kid[0];
	ret = node_val(nd, ik, file_id, h, 0, t->n, top);
	return ret < 0 ? ret : sc_tree_root(ik, file_id, t->n, top, out);
}

/* 0 when the tree's root is want, -EBADMSG when not (constant time), -EIO. */
int sc_utree_check(struct sc_utree *t, const struct sc_ikey *ik,
		   const uint8_t file_id[SC_GCM_FILE_ID_LEN], const uint8_t want[SC_INTEG_TAG_LEN])
{
	uint8_t root[SC_INTEG_TAG_LEN];
	int ret = sc_utree_root(t, ik, file_id, root);

	if (ret == 0 && CRYPTO_memcmp(root, want, sizeof(root)) != 0)
		ret = -EBADMSG;
	return ret;
}
