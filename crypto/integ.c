/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * integ.c - the pure parts of integrity volumes (docs/format.md section 11,
 * a design no layer serves yet): the version 2 file header that carries a
 * file's version, size, unit tree root and the tag of the entry it belongs
 * to; the place tags and binding records that bind a file to its entries
 * (several, for hard links); version 3 directory records with the count
 * and digest of their listing; unit tree nodes; and the MACs of the
 * journal's dirty table and of a client's freshness record.
 *
 * Each structure has its own HMAC-SHA256 key (HKDF of the master key, one
 * label each, kdf_labels_i.h) and every MAC input starts with a domain
 * byte of its own, so no tag of one structure is valid as another's.  The
 * binding is separate from the header's content MAC (as a bound symlink's
 * place tag is from its SIV tag, section 9.5): fsck can tell an authentic
 * header bound elsewhere (-ESTALE) from a damaged one (-EUCLEAN).
 *
 * Nothing here does I/O; the layers that will read and write these bytes
 * are described in format.md 11.6-11.9.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include "crypto_i.h"
#include "kdf_labels_i.h"

/* Domain bytes (format.md 11): the first byte of every MAC input. */
#define DOM_PLACE	0x05	/* tag(id, place) */
#define DOM_BINDREC	0x06	/* a binding record's tag */
#define DOM_ELEM	0x07	/* a listing digest element */
#define DOM_DIRTY	0x08	/* a dirty table entry */
#define DOM_STATE_HDR	0x09	/* a freshness record's header */
#define DOM_STATE_SEG	0x0a	/* a freshness record's segment */
#define DOM_CREATE	0x0b	/* a create's dirty table entry: its place */
#define DOM_RENAME	0x0c	/* a rename's dirty table entry: the file, where it goes */
#define DOM_NODE	0x11	/* a unit tree node */
#define DOM_ROOT	0x12	/* a unit tree root */
#define DOM_HDR		0x21	/* a version 2 file header */
/* 0x03: the version 3 directory records of 11.7's first design, never made */
#define BINDREC_VERSION	1

#define F_KNOWN		(SC_IHDR_F_TRACKS | SC_IHDR_F_HOLES | SC_IHDR_F_LINKED | \
			 SC_IHDR_F_INTERNAL | SC_IHDR_F_TREE)

/* The version 2 header on disk (format.md 11.3). */
struct sc_ihdr_disk {
	char		magic[4];	/* "scgm" */
	uint8_t		version;	/* 2 */
	uint8_t		log2_bs;
	uint8_t		flags[2];	/* u16 LE */
	uint8_t		file_id[SC_GCM_FILE_ID_LEN];
	uint8_t		gen[8];		/* u64 LE */
	uint8_t		size[8];	/* u64 LE */
	uint8_t		root[SC_INTEG_TAG_LEN];
	uint8_t		tag[SC_INTEG_TAG_LEN];
	uint8_t		mac[SC_INTEG_TAG_LEN];
} __attribute__((packed));
_Static_assert(offsetof(struct sc_ihdr_disk, root) == SC_IHDR_ROOT_OFF, "root at 40");

_Static_assert(sizeof(struct sc_ihdr_disk) == SC_IHDR_SIZE, "version 2 header: 88 bytes");
_Static_assert(offsetof(struct sc_ihdr_disk, file_id) == 8, "file id at 8, as version 1");
_Static_assert(offsetof(struct sc_ihdr_disk, gen) == 24, "gen at 24");
_Static_assert(offsetof(struct sc_ihdr_disk, size) == 32, "size at 32");
_Static_assert(offsetof(struct sc_ihdr_disk, root) == 40, "root at 40");
_Static_assert(offsetof(struct sc_ihdr_disk, tag) == 56, "place tag at 56");
_Static_assert(offsetof(struct sc_ihdr_disk, mac) == SC_IHDR_AUTH_LEN, "MAC after 72 bytes");

/* A binding record before its base64url (format.md 11.5). */
struct sc_bindrec_disk {
	uint8_t		version;	/* 1 */
	uint8_t		file_id[SC_GCM_FILE_ID_LEN];
	uint8_t		gen[8];		/* u64 LE; 0: a hard link's */
	uint8_t		tag[SC_INTEG_TAG_LEN];
} __attribute__((packed));

_Static_assert(sizeof(struct sc_bindrec_disk) == SC_BINDREC_LEN, "binding record: 41 bytes");
_Static_assert((4 * SC_BINDREC_LEN + 2) / 3 == SC_BINDREC_ENC_LEN, "55 base64url characters");
_Static_assert(SC_BINDREC_ENC_LEN <= 59, "fits an ext4 fast symlink");

_Static_assert(SC_IHDR_SIZE == SC_IHDR_AUTH_LEN + SC_INTEG_TAG_LEN, "the MAC ends the header");

struct sc_ikey {
	uint8_t			k[SC_IK_COUNT][32];	/* format.md 11.2, in enum sc_ik order */
	const struct sc_mkey	*mk;
	unsigned		log2_bs;
	bool			tree;
};

static const char *const labels[SC_IK_COUNT] = {
	[SC_IK_HEADER]	= SC_LABEL_INTEG_HEADER_MAC,
	[SC_IK_ENTRY]	= SC_LABEL_ENTRY_TAG,
	[SC_IK_DIRREC]	= SC_LABEL_DIRREC_TAG,
	[SC_IK_DIGEST]	= SC_LABEL_DIR_DIGEST,
	[SC_IK_TREE]	= SC_LABEL_UNIT_TREE,
	[SC_IK_DIRTY]	= SC_LABEL_DIRTY_MAC,
	[SC_IK_STATE]	= SC_LABEL_STATE_MAC,
};

/* 0, -EINVAL (not an aes-gcm volume), -ENOMEM, -EIO. */
int sc_ikey_new(const struct sc_mkey *mk, bool tree, struct sc_ikey **out)
{
	const uint8_t *master = sc_mkey_master(mk);
	struct sc_ikey *ik;
	int ret = 0;

	if (sc_mkey_cipher(mk) != SC_CIPHER_AES_GCM)
		return -EINVAL;
	ik = sc_secure_alloc(sizeof(*ik));
	if (ik == NULL)
		return -ENOMEM;
	for (int i = 0; i < SC_IK_COUNT && ret == 0; i++)
		ret = sc_hkdf_sha256(master, SC_MASTER_KEY_LEN, NULL, 0, labels[i],
				     strlen(labels[i]), ik->k[i], sizeof(ik->k[i]));
	if (ret != 0) {
		sc_secure_free(ik, sizeof(*ik));
		return ret;
	}
	ik->mk = mk;
	ik->tree = tree;
	for (ik->log2_bs = 0; (1u << ik->log2_bs) < sc_mkey_block_size(mk); ik->log2_bs++)
		;
	*out = ik;
	return 0;
}

void sc_ikey_free(struct sc_ikey *ik)
{
	sc_secure_free(ik, sizeof(*ik));
}

/* The raw key which (tests: known-answer vectors). */
const uint8_t *sc_ikey_raw(const struct sc_ikey *ik, enum sc_ik which)
{
	return ik->k[which];
}

/* The file key of a version 2 file (format.md 11.2).  0 or -EIO. */
int sc_integ_file_key(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		      uint8_t key[32])
{
	return sc_hkdf_sha256(sc_mkey_master(ik->mk), SC_MASTER_KEY_LEN, file_id,
			      SC_GCM_FILE_ID_LEN, SC_LABEL_INTEG_FILE_KEY,
			      strlen(SC_LABEL_INTEG_FILE_KEY), key, 32);
}

/*
 * HMAC-SHA256 under key which of dom || the parts, cut to 16 bytes.  The
 * message is assembled on the stack: every input of this file is short
 * (the longest, a tree node: 26 + 64 * 16 bytes).  0, -EINVAL, -EIO.
 */
struct part {
	const void	*p;
	size_t		len;
};

#define MSG_MAX		(1 + SC_GCM_FILE_ID_LEN + 1 + 8 + SC_TREE_FANOUT * SC_INTEG_TAG_LEN)

static int mac16(const struct sc_ikey *ik, enum sc_ik which, uint8_t dom,
		 const struct part *parts, size_t n, uint8_t out[SC_INTEG_TAG_LEN])
{
	uint8_t msg[MSG_MAX], md[32];
	size_t len = 1;
	int ret;

	msg[0] = dom;
	for (size_t i = 0; i < n; i++) {
		if (parts[i].len > sizeof(msg) - len)
			return -EINVAL;
		if (parts[i].len)	/* an empty part may have a NULL pointer */
			memcpy(msg + len, parts[i].p, parts[i].len);
		len += parts[i].len;
	}
	ret = sc_hmac_sha256(ik->k[which], sizeof(ik->k[which]), msg, len, md);
	if (ret == 0)
		memcpy(out, md, SC_INTEG_TAG_LEN);
	sc_wipe(md, sizeof(md));
	return ret;
}

/* The place of an entry: a directory nonce and a non-empty encoded name. */
static bool entry_place(const struct sc_dirplace *at)
{
	return at && at->parent && at->enc_len > 0 && at->enc_len <= SC_NAME_ENC_MAX;
}

static bool zero16(const uint8_t *p)
{
	static const uint8_t z[SC_INTEG_TAG_LEN];

	return CRYPTO_memcmp(p, z, sizeof(z)) == 0;
}

/* ---- the header ---- */

/* The field rules of format.md 11.3 that the MAC cannot check: 0 or -1. */
static int fields_ok(const struct sc_ikey *ik, const struct sc_ihdr *h)
{
	/* INTERNAL: no tag; LINKED: the tag of its first name while that name lasts, or none */
	if (h->gen == 0 || ((h->flags & SC_IHDR_F_INTERNAL) && !zero16(h->tag)) ||
	    (!(h->flags & (SC_IHDR_F_LINKED | SC_IHDR_F_INTERNAL)) && zero16(h->tag)))
		return -1;
	if (!(h->flags & SC_IHDR_F_TREE) != zero16(h->root))
		return -1;
	return h->size <= sc_gcm_plain_max(1u << ik->log2_bs) ? 0 : -1;
}

/* The flags a build reads (format.md 11.3). */
static bool flags_known(uint16_t f)
{
	return (f & SC_IHDR_F_TRACKS) && !(f & ~F_KNOWN) &&
	       (f & (SC_IHDR_F_LINKED | SC_IHDR_F_INTERNAL)) !=
	       (SC_IHDR_F_LINKED | SC_IHDR_F_INTERNAL) &&
	       (f & (SC_IHDR_F_HOLES | SC_IHDR_F_TREE)) != (SC_IHDR_F_HOLES | SC_IHDR_F_TREE);
}

static int hdr_mac(const struct sc_ikey *ik, const uint8_t *auth, uint8_t out[SC_INTEG_TAG_LEN])
{
	struct part p = { auth, SC_IHDR_AUTH_LEN };

	return mac16(ik, SC_IK_HEADER, DOM_HDR, &p, 1, out);
}

/* 0, -EINVAL, -EIO (sc_crypto.h). */
int sc_ihdr_pack(const struct sc_ikey *ik, const struct sc_ihdr *h, uint8_t out[SC_IHDR_SIZE])
{
	struct sc_ihdr_disk d;
	int ret;

	if (!flags_known(h->flags) || !(h->flags & SC_IHDR_F_TREE) != !ik->tree ||
	    fields_ok(ik, h) != 0)
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	memcpy(d.magic, SC_GHDR_MAGIC, sizeof(d.magic));
	d.version = SC_IHDR_VERSION;
	d.log2_bs = (uint8_t)ik->log2_bs;
	d.flags[0] = (uint8_t)h->flags;
	d.flags[1] = (uint8_t)(h->flags >> 8);
	memcpy(d.file_id, h->file_id, sizeof(d.file_id));
	sc_le64(d.gen, h->gen);
	sc_le64(d.size, h->size);
	memcpy(d.root, h->root, sizeof(d.root));
	memcpy(d.tag, h->tag, sizeof(d.tag));
	ret = hdr_mac(ik, (const uint8_t *)&d, d.mac);
	if (ret == 0)
		memcpy(out, &d, sizeof(d));
	return ret;
}

/*
 * The order of format.md 11.3: magic, version, length, MAC, flags, unit
 * size and tree, field rules.  Version and flags are read before the MAC
 * would fail so that a newer format says so.
 */
int sc_ihdr_verify(const struct sc_ikey *ik, const void *buf, size_t len, struct sc_ihdr *out)
{
	const uint8_t *b = buf;
	struct sc_ihdr_disk d;
	struct sc_ihdr h;
	uint8_t mac[SC_INTEG_TAG_LEN];
	int ret;

	if (len < 5 || memcmp(b, SC_GHDR_MAGIC, 4) != 0)
		return -EUCLEAN;
	if (b[4] != SC_IHDR_VERSION)
		return b[4] == SC_GHDR_VERSION ? -EUCLEAN : -EPROTONOSUPPORT;
	if (len != SC_IHDR_SIZE)
		return -EUCLEAN;
	memcpy(&d, b, sizeof(d));
	ret = hdr_mac(ik, b, mac);
	if (ret != 0)
		return ret;
	if (CRYPTO_memcmp(mac, d.mac, sizeof(mac)) != 0)
		return -EUCLEAN;
	h.flags = (uint16_t)(d.flags[0] | d.flags[1] << 8);
	if (!flags_known(h.flags))
		return -EPROTONOSUPPORT;
	if (d.log2_bs != ik->log2_bs || !(h.flags & SC_IHDR_F_TREE) != !ik->tree)
		return -EINVAL;
	memcpy(h.file_id, d.file_id, sizeof(h.file_id));
	h.gen = sc_get_le64(d.gen);
	h.size = sc_get_le64(d.size);
	memcpy(h.root, d.root, sizeof(h.root));
	memcpy(h.tag, d.tag, sizeof(h.tag));
	if (fields_ok(ik, &h) != 0)
		return -EUCLEAN;
	if (out)
		*out = h;
	return 0;
}

/* Bytes 0..23 with the flags zeroed, then the unit's index (format.md 11.3). */
void sc_ihdr_aad(const uint8_t hdr[SC_IHDR_SIZE], uint64_t idx, uint8_t aad[32])
{
	memcpy(aad, hdr, 24);
	aad[6] = aad[7] = 0;
	sc_le64(aad + 24, idx);
}

/* ---- places and binding records ---- */

/* 0, -EINVAL (not an entry's place), -EIO. */
int sc_integ_place_tag(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		       const struct sc_dirplace *at, uint8_t tag[SC_INTEG_TAG_LEN])
{
	struct part p[] = {
		{ file_id, SC_GCM_FILE_ID_LEN }, { at ? at->parent : NULL, SC_DIRNONCE_LEN },
		{ at ? at->enc : NULL, at ? at->enc_len : 0 },
	};

	if (!entry_place(at))
		return -EINVAL;
	return mac16(ik, SC_IK_ENTRY, DOM_PLACE, p, 3, tag);
}

int sc_integ_create_tag(const struct sc_ikey *ik, const struct sc_dirplace *at,
			uint8_t tag[SC_INTEG_TAG_LEN])
{
	struct part p[] = {
		{ at ? at->parent : NULL, SC_DIRNONCE_LEN },
		{ at ? at->enc : NULL, at ? at->enc_len : 0 },
	};

	if (!entry_place(at))
		return -EINVAL;
	return mac16(ik, SC_IK_DIRTY, DOM_CREATE, p, 2, tag);
}

int sc_integ_rename_tag(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
			const struct sc_dirplace *to, uint8_t tag[SC_INTEG_TAG_LEN])
{
	struct part p[] = {
		{ file_id, SC_GCM_FILE_ID_LEN }, { to ? to->parent : NULL, SC_DIRNONCE_LEN },
		{ to ? to->enc : NULL, to ? to->enc_len : 0 },
	};

	if (!entry_place(to))
		return -EINVAL;
	return mac16(ik, SC_IK_DIRTY, DOM_RENAME, p, 3, tag);
}

/* 0, -ESTALE, -ENOENT, -EINVAL, -EIO (sc_crypto.h). */
int sc_ihdr_bound_at(const struct sc_ikey *ik, const struct sc_ihdr *h,
		     const struct sc_dirplace *at)
{
	uint8_t want[SC_INTEG_TAG_LEN];
	int ret;

	if ((h->flags & SC_IHDR_F_INTERNAL) || zero16(h->tag))
		return entry_place(at) ? -ENOENT : -EINVAL;
	ret = sc_integ_place_tag(ik, h->file_id, at, want);
	if (ret != 0)
		return ret;
	return CRYPTO_memcmp(want, h->tag, sizeof(want)) == 0 ? 0 : -ESTALE;
}

static int bindrec_tag(const struct sc_ikey *ik, const uint8_t *file_id, const uint8_t gen[8],
		       const struct sc_dirplace *at, uint8_t tag[SC_INTEG_TAG_LEN])
{
	struct part p[] = {
		{ file_id, SC_GCM_FILE_ID_LEN }, { gen, 8 }, { at->parent, SC_DIRNONCE_LEN },
		{ at->enc, at->enc_len },
	};

	return mac16(ik, SC_IK_ENTRY, DOM_BINDREC, p, 4, tag);
}

/* 0, -EINVAL, -EIO. */
int sc_bindrec_seal(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		    uint64_t g, const struct sc_dirplace *at, char *out)
{
	struct sc_bindrec_disk r;
	int ret;

	if (!entry_place(at))
		return -EINVAL;
	r.version = BINDREC_VERSION;
	memcpy(r.file_id, file_id, sizeof(r.file_id));
	sc_le64(r.gen, g);
	ret = bindrec_tag(ik, r.file_id, r.gen, at, r.tag);
	if (ret == 0)
		sc_b64u_encode((const uint8_t *)&r, sizeof(r), out);
	return ret;
}

/* 0, -EBADMSG, -EINVAL, -EIO. */
int sc_bindrec_open(const struct sc_ikey *ik, const char *enc, size_t len,
		    const struct sc_dirplace *at, uint8_t file_id[SC_GCM_FILE_ID_LEN],
		    uint64_t *g)
{
	uint8_t buf[SC_BINDREC_LEN + 2], want[SC_INTEG_TAG_LEN];
	struct sc_bindrec_disk r;
	int ret;

	if (!entry_place(at))
		return -EINVAL;
	if (len != SC_BINDREC_ENC_LEN ||
	    sc_b64u_decode(enc, len, buf, SC_BINDREC_LEN) != SC_BINDREC_LEN)
		return -EBADMSG;
	memcpy(&r, buf, sizeof(r));
	if (r.version != BINDREC_VERSION)
		return -EBADMSG;
	ret = bindrec_tag(ik, r.file_id, r.gen, at, want);
	if (ret != 0)
		return ret;
	if (CRYPTO_memcmp(want, r.tag, sizeof(want)) != 0)
		return -EBADMSG;
	memcpy(file_id, r.file_id, sizeof(r.file_id));
	*g = sc_get_le64(r.gen);
	return 0;
}

/* g 0 vouches for LINKED headers of the id; g >= 1 for the one unlinked header of gen g. */
bool sc_bindrec_vouches(const struct sc_ihdr *h, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
			uint64_t g)
{
	if (h->flags & SC_IHDR_F_INTERNAL ||
	    CRYPTO_memcmp(h->file_id, file_id, SC_GCM_FILE_ID_LEN) != 0)
		return false;
	if (g == 0)
		return h->flags & SC_IHDR_F_LINKED;
	return !(h->flags & SC_IHDR_F_LINKED) && h->gen == g;
}

/* ---- directories' listings ---- */

/* 0, -EINVAL (a name longer than any backing name), -EIO. */
int sc_dir_elem(const struct sc_ikey *ik, const uint8_t nonce[SC_DIRNONCE_LEN], const char *b,
		size_t len, uint8_t out[SC_INTEG_TAG_LEN])
{
	struct part p[] = { { nonce, SC_DIRNONCE_LEN }, { b, len } };

	if (len == 0 || len > 255)
		return -EINVAL;
	return mac16(ik, SC_IK_DIGEST, DOM_ELEM, p, 2, out);
}

/* ---- the unit tree ---- */

/* 0, -EINVAL (no child, too many, level 0 or over 255), -EIO. */
int sc_tree_node(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		 unsigned level, uint64_t index, const uint8_t *children, size_t n,
		 uint8_t out[SC_INTEG_TAG_LEN])
{
	uint8_t lv = (uint8_t)level, ix[8];
	struct part p[] = {
		{ file_id, SC_GCM_FILE_ID_LEN }, { &lv, 1 }, { ix, 8 },
		{ children, n * SC_INTEG_TAG_LEN },
	};

	if (n == 0 || n > SC_TREE_FANOUT || level == 0 || level > 255)
		return -EINVAL;
	sc_le64(ix, index);
	return mac16(ik, SC_IK_TREE, DOM_NODE, p, 4, out);
}

/* 0, -EINVAL (top given iff nunits > 0), -EIO. */
int sc_tree_root(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		 uint64_t nunits, const uint8_t *top, uint8_t out[SC_INTEG_TAG_LEN])
{
	uint8_t n8[8];
	struct part p[] = {
		{ file_id, SC_GCM_FILE_ID_LEN }, { n8, 8 },
		{ top, top ? SC_INTEG_TAG_LEN : 0 },
	};

	if ((top == NULL) != (nunits == 0))
		return -EINVAL;
	sc_le64(n8, nunits);
	return mac16(ik, SC_IK_TREE, DOM_ROOT, p, 3, out);
}

/*
 * node(l, j) over n children, or 16 zero bytes with no HMAC when every
 * child is zero (format.md 11.10): holes, however many, cost nothing.
 * 0, -EINVAL, -EIO.
 */
int sc_tree_node_z(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		   unsigned level, uint64_t index, const uint8_t *children, size_t n,
		   uint8_t out[SC_INTEG_TAG_LEN])
{
	for (size_t i = 0; i < n; i++)
		if (!zero16(children + i * SC_INTEG_TAG_LEN))
			return sc_tree_node(ik, file_id, level, index, children, n, out);
	memset(out, 0, SC_INTEG_TAG_LEN);
	return n > 0 && n <= SC_TREE_FANOUT ? 0 : -EINVAL;
}

/*
 * The root of a file of n units from its n leaves, level by level (format.md
 * 11.10): each level's nodes overwrite the scratch of the level below, so
 * ceil(n / 64) nodes of scratch do for every level.  0, -ENOMEM, -EIO.
 */
int sc_tree_root_of(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		    const uint8_t *leaves, uint64_t n, uint8_t out[SC_INTEG_TAG_LEN])
{
	const uint8_t *below = leaves;
	uint64_t cnt = n, m;
	uint8_t *nodes;
	unsigned level = 1;
	int ret = 0;

	if (n == 0)
		return sc_tree_root(ik, file_id, 0, NULL, out);
	nodes = malloc((size_t)((n + SC_TREE_FANOUT - 1) / SC_TREE_FANOUT) * SC_INTEG_TAG_LEN);
	if (!nodes)
		return -ENOMEM;
	for (;; level++) {
		m = (cnt + SC_TREE_FANOUT - 1) / SC_TREE_FANOUT;
		/* node j reads children 64j.. and writes slot j <= 64j: never ahead of its reads */
		for (uint64_t j = 0; j < m && ret == 0; j++)
			ret = sc_tree_node_z(ik, file_id, level, j, below + j * SC_TREE_FANOUT *
					   SC_INTEG_TAG_LEN, (size_t)(cnt - j * SC_TREE_FANOUT <
					   SC_TREE_FANOUT ? cnt - j * SC_TREE_FANOUT : SC_TREE_FANOUT),
					   nodes + j * SC_INTEG_TAG_LEN);
		below = nodes;
		cnt = m;
		if (ret != 0 || cnt == 1)
			break;
	}
	if (ret == 0)
		ret = sc_tree_root(ik, file_id, n, nodes, out);
	free(nodes);
	return ret;
}

/* 0 when the n leaves give root want, -EBADMSG when not (constant time), -ENOMEM, -EIO. */
int sc_tree_check(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		  const uint8_t *leaves, uint64_t n, const uint8_t want[SC_INTEG_TAG_LEN])
{
	uint8_t root[SC_INTEG_TAG_LEN];
	int ret = sc_tree_root_of(ik, file_id, leaves, n, root);

	if (ret == 0 && CRYPTO_memcmp(root, want, sizeof(root)) != 0)
		ret = -EBADMSG;
	return ret;
}

/* Whether ik's volume has the unit tree (SC_FEAT_UNIT_TREE). */
bool sc_ikey_tree(const struct sc_ikey *ik)
{
	return ik->tree;
}

/* ---- the dirty table and the freshness record ---- */

int sc_dirty_mac(const struct sc_ikey *ik, const uint8_t entry[48], uint8_t out[SC_INTEG_TAG_LEN])
{
	struct part p = { entry, 48 };

	return mac16(ik, SC_IK_DIRTY, DOM_DIRTY, &p, 1, out);
}

/*
 * The header's MAC (prev NULL, bytes: its first 48) or a segment's (prev:
 * the MAC before it in the chain).  Segments are long (32 bytes per
 * entry), so this one is not assembled on the stack.  0, -ENOMEM, -EIO.
 */
int sc_state_mac(const struct sc_ikey *ik, const uint8_t *prev, const void *bytes, size_t len,
		 uint8_t out[SC_INTEG_TAG_LEN])
{
	size_t n = 1 + (prev ? SC_INTEG_TAG_LEN : 0) + len;
	uint8_t *msg = malloc(n), md[32];
	int ret;

	if (msg == NULL)
		return -ENOMEM;
	msg[0] = prev ? DOM_STATE_SEG : DOM_STATE_HDR;
	if (prev)
		memcpy(msg + 1, prev, SC_INTEG_TAG_LEN);
	if (len)
		memcpy(msg + n - len, bytes, len);
	ret = sc_hmac_sha256(ik->k[SC_IK_STATE], 32, msg, n, md);
	if (ret == 0)
		memcpy(out, md, SC_INTEG_TAG_LEN);
	sc_wipe(md, sizeof(md));
	free(msg);
	return ret;
}
