/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_stack.h - the stack builder (fs/xlators/stack.c): the one place that
 * makes translators, and the lifecycle of the stack it makes.
 *
 * A stack is described by a struct sc_stack_spec (its layers top to
 * bottom, and what the layers need: the master key and the names to hide
 * for the data layer), made by sc_stack_new(), started by
 * sc_xl_stack_init() over the backing root's sc_obj once the front end
 * holds it (the mount does that through sc_fuse_init_stack(), sc_fuse.h),
 * and freed by sc_xl_stack_free().  The mount (fs/cli/cmd_mount.c) and
 * the in-process tests (tests/unit/test_posix.c, tests/crypt/test_xl.c)
 * build their stacks only here; none of them includes a layer's header.
 */
#ifndef SC_STACK_H
#define SC_STACK_H

#include "sc_xlator.h"

struct sc_gluster;
struct sc_cephfs;
struct sc_mkey;
struct sc_ikey;
struct sc_fresh;

/*
 * Names in the backing root that the data layer (crypt or gcm) neither
 * shows nor lets anyone make, replace or move: up to four exact names and
 * every name that starts with a prefix (any may be NULL).  For a volume,
 * its config file, its mount lock file, the state and the directory of a
 * master-key rotation (stackcrypt rekey) and the volume tools' temporary
 * copies of the config.  The strings must outlive the stack.
 */
struct sc_stack_hide {
	const char	*names[4];
	const char	*prefix;
};

/* The stacks `stackcrypt mount --stack=` offers. */
enum sc_stack { SC_STACK_CRYPT = 0, SC_STACK_PASSTHROUGH, SC_STACK_REVERSE };

/* One kind of layer. */
enum sc_xl_kind {
	SC_XL_POSIX,	/* the bottom: every backing syscall */
	SC_XL_CRYPT,	/* plaintext above, ciphertext below */
	SC_XL_IOSTATS,	/* counts and times what passes, labelled by its boundary */
	SC_XL_NAMES,	/* plaintext names above, encrypted names below */
	SC_XL_GCM,	/* plaintext above, authenticated units below (aes-gcm) */
	SC_XL_GLUSTER,	/* the bottom on a GlusterFS volume, through libgfapi */
	SC_XL_REVERSE,	/* a plaintext tree above as a volume's ciphertext (mount --reverse) */
	SC_XL_CEPHFS,	/* the bottom on a CephFS file system, through libcephfs */
};

/* The name a layer of kind goes by (its ops->name): "posix", "crypt", ... */
const char *sc_stack_kind_name(enum sc_xl_kind kind);

struct sc_stack_spec {
	enum sc_xl_kind		layers[SC_XL_MAX];	/* top to bottom; the bottom (posix,
							   gluster or cephfs) last */
	unsigned int		nlayers;
	const struct sc_mkey	*mkey;		/* SC_XL_CRYPT/GCM (outlives the stack), SC_XL_NAMES */
	struct sc_stack_hide	hide;		/* SC_XL_CRYPT/GCM: root names the mount hides */
	/*
	 * aes-gcm volumes: nothing kept in xattrs -- the names layer keeps
	 * directory nonces in files (SC_DIRNONCE_FILE) instead of the xattr.
	 */
	bool			portable;
	/* SC_XL_NAMES: the volume has SC_FEAT_NAMES_BOUND (unbound nonce records refused). */
	bool			names_bound;
	/* SC_XL_NAMES: the volume has SC_FEAT_LINKS_BOUND (bound, long symlink targets). */
	bool			links_bound;
	/*
	 * SC_XL_GCM and SC_XL_NAMES of an integrity volume (SC_FEAT_INTEGRITY):
	 * its integrity keys (outlive the stack), else NULL.
	 */
	const struct sc_ikey	*ikey;
	/* SC_XL_NAMES of an integrity volume with SC_FEAT_DIR_LISTS (11.7): listing records. */
	bool			dir_lists;
	/*
	 * ... and a listing that differs from its record is taken as found
	 * (the record rewritten, a notice logged): the tree rekey and upgrade
	 * are copying into, which a power cut can leave with records behind
	 * their entries, and which the copy lists to go on.
	 */
	bool			dir_lists_take;
	/*
	 * SC_XL_GCM of an integrity volume: this client's freshness record
	 * (sc_fresh.h, docs/format.md 11.9; outlives the stack), or NULL: no
	 * roll-back check (the in-process tests).
	 */
	struct sc_fresh		*fresh;
	struct sc_gluster	*gluster;	/* SC_XL_GLUSTER's connection (outlives the stack) */
	struct sc_cephfs	*cephfs;	/* SC_XL_CEPHFS's connection (outlives the stack) */
	/* SC_XL_REVERSE: the config text it shows, and the root name it hides (or NULL). */
	const char		*rev_conf;
	size_t			rev_conf_len;
	const char		*rev_hide;
};

/*
 * Fills spec with the layers of kind (crypt: crypt over posix, or gcm over
 * posix when mkey's cipher is aes-gcm; passthrough: posix alone; reverse:
 * reverse over posix, the caller sets rev_conf and rev_hide), mkey and
 * hide (ignored by a stack without a data layer).  Returns 0 or -EINVAL
 * for an unknown kind.
 */
int sc_stack_spec_init(struct sc_stack_spec *spec, enum sc_stack kind,
		       const struct sc_mkey *mkey, const struct sc_stack_hide *hide);

/*
 * Puts a gluster layer over connection g (gluster_xl.h) at the bottom of
 * spec in place of the posix layer.  Returns 0.
 */
int sc_stack_spec_gluster(struct sc_stack_spec *spec, struct sc_gluster *g);

/*
 * Puts a cephfs layer over connection c (cephfs_xl.h) at the bottom of
 * spec in place of the posix layer.  Returns 0.
 */
int sc_stack_spec_cephfs(struct sc_stack_spec *spec, struct sc_cephfs *c);

/*
 * Inserts a layer of kind at position at (0: on top; nlayers - 1: just
 * above posix), so that a layer can be put at any boundary of a stack.
 * Returns 0, or -E2BIG when the stack would exceed SC_XL_MAX layers,
 * -EINVAL when at is past the posix layer.
 */
int sc_stack_spec_insert(struct sc_stack_spec *spec, unsigned int at, enum sc_xl_kind kind);

/*
 * The boundary that a layer at position i of spec sits in, as
 * "UPPER>LOWER" with the names of the layers either side ("fuse" for the
 * front end): "fuse>crypt", "crypt>posix".  What a layer that watches a
 * boundary (io-stats) is labelled with.  Returns 0, -EINVAL when nothing
 * is below position i, -ENAMETOOLONG when buf is too small.
 */
int sc_stack_boundary(const struct sc_stack_spec *spec, unsigned int i, char *buf, size_t len);

/*
 * Makes the layers of spec, bottom to top, and sets *top to the top one.
 * Returns 0 or -errno (nothing left allocated): -EINVAL for a spec that is
 * not a stack (empty, posix not last and only last, a crypt or names layer
 * without a key, a crypt layer with an unusable block size), -ENOMEM, -EIO
 * (the names layer's key derivation).
 */
int sc_stack_new(const struct sc_stack_spec *spec, struct sc_xl **top);

/*
 * Calls ->init on every layer that has one, bottom to top, so a layer may
 * use the layers below it while it initialises; root is the backing
 * root's object (fd: the bottom layer's), conf what the command line
 * asked for.  Returns 0 or the first layer's -errno (the layers already
 * initialised stay so; sc_xl_stack_free destroys them).
 */
int sc_xl_stack_init(struct sc_xl *top, struct sc_obj *root, struct sc_xl_conf *conf);

/* Frees every layer, top to bottom (each ->destroy runs before the one below). */
void sc_xl_stack_free(struct sc_xl *top);

#endif /* SC_STACK_H */
