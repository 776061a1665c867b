/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fmt_gcm.c - the authenticated contents format (aes-gcm, docs/format.md
 * section 10) under the data engine (engine.c); the layer is named "gcm".
 *
 * The stack builder picks it when the volume's cipher is aes-gcm
 * (fs/xlators/stack.c).  The crypto library seals and opens units
 * (crypto/gcm.c) and does the offset arithmetic (crypto/glayout.c); the
 * engine decides which units a change re-seals (span.c without the
 * length-preserving rules), under which locks and in which order; this
 * file loads plaintext, seals and stores runs through the journal, keeps
 * the header, and maps stored sizes and offsets to plaintext ones.
 *
 * A backing file is empty, or the 40-byte header followed by units of
 * bs + 32 bytes (nonce, ciphertext, tag).  A new file is created empty;
 * its header is made in memory and stored with the first data, in the
 * same pwrite as unit 0 when the first change touches it, else just
 * before.  No extended attribute is read or written: a 4 KiB aligned
 * write inside a file costs one seal and one pwrite, a read one pread and
 * one open, as in the length-preserving format.
 *
 * Per-file state (struct gfile) starts with the engine's (plaintext size,
 * locks, cut unit) and adds the file's key (struct sc_gkey, from the
 * header).  The size is authoritative while cached: every stat this layer
 * hands up for a regular file carries the plaintext size, from the state
 * when there is one, else from the stored size (sc_gcm_plain_size).
 *
 * Crash order (what a kill -9 of the daemon can leave behind):
 *  - a unit run is stored with one pwrite, nonce, ciphertext and tag
 *    together, so each unit is old or new, never a new ciphertext under
 *    an old tag; runs go in ascending order, so the old partial last unit
 *    is re-sealed as a whole unit before anything extends the file past
 *    it, and a growing truncate seals the new partial last unit before the
 *    size changes below (a partial unit of zeros would fail its tag);
 *  - a shrinking truncate re-seals the new last unit before it cuts;
 *  - the header is written before or with the first unit: a file of 0
 *    bytes, or of the header alone, is an empty file;
 *  - a cut to 0 bytes keeps the stored header until the first data, which
 *    comes with a fresh one (a new file id, renew_header): killed in
 *    between, the file is its old header alone, an empty file.
 * What one pwrite does not give: the kernel may stop a buffered write at
 * a page boundary when the daemon gets SIGKILL, and a stored unit spans
 * two or three pages, so a unit being written at that very instant may be
 * left torn (new head, old tail), or a growing file cut inside a unit.
 * So every in-place write of units is announced first in the intent
 * journal (journal.c, docs/format.md 10.10; store_run): one record with
 * the sealed new units that existed, one extra pwrite, no fsync.  After an
 * unclean stop the records are pinned, and the first open of a file they
 * name repairs a torn unit from its record, or cuts a torn append back to
 * the unit's start (jrnl_resolve, before the file's state exists).  Units
 * not being written, fsynced ones among them, are never touched.
 * Errors, not crashes: a growing change that fails part way is undone back
 * to the old size (undo_growth), best effort.
 *
 * A tag that fails is -EIO to the reader, never zeros, logged once per
 * file with its path in the mount (or its backing inode) and the unit.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "sc_crypto.h"
#include "sc_xlator.h"
#include "engine.h"
#include "data_xl.h"
#include "sc_fresh.h"
#include "sc_journal.h"
#include "rangelock.h"
#include "links.h"

size_t (*sc_gcm_test_tear)(uint64_t off, size_t len);
bool sc_gcm_test_crashed;

/* A backing file reached through the layer below: the journal's, or a file being repaired. */
struct bfile {
	struct sc_xl	*xl;	/* this layer; I/O goes to xl->below */
	struct sc_obj	*obj;
	struct sc_fh	*fh;
	bool		looked_up;	/* obj is the lookup's own: named by sc_obj_lookup_name */
};

struct gcm_priv {
	struct sc_data		d;	/* first: the engine's part of the layer */
	/* The intent journal (journal.c), NULL without one (read-only backing). */
	struct sc_jrnl		*jr;
	struct sc_obj		jobj;
	struct sc_fh		jfh;
	struct bfile		jbf;
	bool			torn;	/* test only: "killed" by sc_gcm_test_tear */
	/*
	 * Backing inodes (+ 1; 0 is free) whose tag failure was logged, the
	 * oldest overwritten first: a file's state is dropped when the kernel
	 * forgets its inode (a cache drop anywhere on the machine does that),
	 * and the next read of the same damage must not log it again.
	 */
	uint64_t		logged[64];
	unsigned int		logged_next;
	/*
	 * Integrity volumes (docs/format.md 11; "integrity volumes" below): their keys,
	 * NULL on every other volume, whose paths never look further.
	 */
	const struct sc_ikey	*ik;
	struct sc_fresh		*fresh;	/* this client's freshness record (11.9), or NULL */
	struct sc_brec_seen	*seen;	/* LINKED files found vouched for (links.h, 11.5) */
	uint32_t		hl;	/* header length: SC_GHDR_SIZE, or SC_IHDR_SIZE with ik */
	/* One header rewrite at a time (commit, rebind, holes): each reads the stored one. */
	pthread_mutex_t		hdr_lock;
	/* One reconcile at a time (format.md 11.8): a second opener finds the entry gone. */
	pthread_mutex_t		rec_lock;
	bool			dt_full_logged;	/* atomic */
	/*
	 * A rename's rebind is not synced (that would add a disk flush to
	 * every rename); the next fsync of a directory syncs the backing file
	 * system first (syncfs), so that a rename made durable the POSIX way
	 * (fsync the directory) keeps its file readable after a power loss
	 * (format.md 11.6).  Below layers without syncfs (GlusterFS): each
	 * rebind syncs its file.  rebind_sync: 0 unknown, 1 syncfs, -1 none;
	 * rebinds_unsynced: 1 after a rebind since the last syncfs.  Atomics.
	 */
	int			rebind_sync;
	int			rebinds_unsynced;
	struct sc_data_fmt	integ_fmt;	/* with ik: the tables this layer uses */
	struct sc_xl_ops	integ_ops;
};

/* Per-file state; see the top of the file. */
struct gfile {
	struct sc_dfile		d;	/* first: the engine's part (size, locks, cut unit) */
	struct sc_gkey		*gk;
	uint8_t			hdr[SC_IHDR_SIZE];	/* hl bytes of it */
	bool			hdr_stored;	/* hdr is in the file; under lock */
	/* Integrity volumes: the header's fields at fetch, and a size not committed yet. */
	struct sc_ihdr		ih;
	bool			dirty;	/* under lock */
	int			didx;	/* its dirty table entry (format.md 11.8), or -1; under lock */
	int			bad_logged;	/* atomic: a tag failure was logged */
	/*
	 * Unit tree volumes (format.md 11.10): the file's tree in memory, its
	 * leaves (each unit's tag, zeros for a hole), once checked against the
	 * header's root (tree_ok, atomic, set under tree_lock).  Resized under
	 * the write lock; leaves set under tree_lock (a write in place holds
	 * only the read lock); its root taken under the write lock.
	 */
	struct sc_utree		*tree;
	bool			tree_ok;
	bool			tree_bad;	/* atomic: refused (logged); not read again */
	pthread_mutex_t		tree_lock;
};

static struct gfile *gfile_of(struct sc_dfile *df)
{
	return (struct gfile *)df;
}

static struct gcm_priv *gpriv(const struct sc_xl *xl)
{
	return xl->priv;	/* struct sc_data first */
}

static uint64_t sbs(const struct sc_xl *xl)
{
	return gpriv(xl)->d.bs + SC_GCM_OVERHEAD;
}

static uint32_t hl(const struct sc_xl *xl)
{
	return gpriv(xl)->hl;
}

/* Stored offset of unit u. */
static uint64_t uoff(const struct sc_xl *xl, uint64_t u)
{
	return sc_gcm_unit_off_h(hl(xl), (uint32_t)gpriv(xl)->d.bs, u);
}

static uint64_t gf_cut(const struct gfile *gf)
{
	return __atomic_load_n(&gf->d.cut_unit, __ATOMIC_RELAXED);
}

/* unit u was stored whole again: it is no longer cut. */
static void gf_uncut(struct gfile *gf, uint64_t u)
{
	if (gf_cut(gf) == u)
		__atomic_store_n(&gf->d.cut_unit, SC_DATA_NO_CUT, __ATOMIC_RELAXED);
}

/* The stored size of gf at plaintext size plain (0 keeps the header if it is stored). */
static uint64_t stored_of(const struct sc_xl *xl, const struct gfile *gf, uint64_t plain)
{
	if (plain == 0)
		return gf->hdr_stored ? hl(xl) : 0;
	return sc_gcm_stored_size_h(hl(xl), (uint32_t)gpriv(xl)->d.bs, plain);
}

/*
 * The plaintext size of a backing file of stored bytes, as stat shows it.
 * A file cut inside a unit's nonce or tag (1..32 of its bytes left) shows
 * its whole units and one byte of the cut unit, so that a reader reaches
 * that unit and gets EIO (a cut inside the ciphertext fails the tag the
 * same way); showing only the whole units would make the cut a silent
 * truncation.  A truncated header shows 0 (its open is -EIO, logged).
 * *cut is set when the stored size is not one of this format.
 */
static uint64_t plain_of(const struct sc_xl *xl, uint64_t stored, bool *cut)
{
	uint64_t plain = 0;
	int ret = sc_gcm_plain_size_h(hl(xl), (uint32_t)gpriv(xl)->d.bs, stored, &plain);

	*cut = ret < 0;
	if (ret == -EBADMSG)
		plain = (stored - hl(xl)) / sbs(xl) * gpriv(xl)->d.bs + 1;
	return ret == 0 || ret == -EBADMSG ? plain : 0;
}

static uint64_t gcm_plain_of(const struct sc_xl *xl, uint64_t stored)
{
	bool cut;

	return plain_of(xl, stored, &cut);
}

/* ---- per-file state ------------------------------------------------------- */

static void gfile_free(struct gfile *gf)
{
	if (!gf)
		return;
	sc_utree_free(gf->tree);
	pthread_mutex_destroy(&gf->tree_lock);
	sc_gkey_free(gf->gk);
	sc_data_dfile_destroy(&gf->d);
	free(gf);
}

/*
 * A new gfile for the len header bytes hdr of a file of plaintext size
 * size (stored: hdr is in the file).  Returns 0, -ENOMEM, or -EIO when the
 * header does not verify (logged, naming the file).
 */
static int gfile_new(struct sc_xl *xl, struct sc_obj *obj, const uint8_t *hdr, size_t len,
		     uint64_t size, bool stored, struct gfile **out)
{
	struct gfile *gf;
	int ret;

	gf = calloc(1, sizeof(*gf));
	if (!gf)
		return -ENOMEM;
	ret = gpriv(xl)->ik ? sc_gkey_new_v2(gpriv(xl)->ik, hdr, len, &gf->ih, &gf->gk) :
	      sc_gkey_new(gpriv(xl)->d.mk, hdr, len, &gf->gk);
	if (ret < 0) {
		const char *why = gpriv(xl)->ik && sc_ghdr_is_v1(hdr, len) ? "is a default volume's (version 1, bound to no entry): "
				  "copied in, or put back from before the upgrade" :
				  ret == -EUCLEAN ? "is not of this format, or fails "
				  "authentication (damaged, tampered, or from another volume)" :
				  ret == -EPROTONOSUPPORT ? "has a version or flags this build "
				  "cannot read" :
				  ret == -EINVAL ? "was made with another unit size" : "cannot be used";

		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: file header %s; "
			 "returning EIO\n", sc_obj_name(xl->below, obj), why);
		free(gf);
		return ret == -ENOMEM ? ret : -EIO;
	}
	ret = sc_data_dfile_init(&gf->d, size);
	if (ret < 0) {
		sc_gkey_free(gf->gk);
		free(gf);
		return ret;
	}
	memcpy(gf->hdr, hdr, len);
	gf->hdr_stored = stored;
	gf->didx = -1;
	pthread_mutex_init(&gf->tree_lock, NULL);
	*out = gf;
	return 0;
}

/* A gfile for a file that has no header yet (new, or 0 bytes): one made now. */
static int gfile_fresh(struct sc_xl *xl, struct sc_obj *obj, struct gfile **out)
{
	uint8_t hdr[SC_GHDR_SIZE];
	int ret = sc_ghdr_new(gpriv(xl)->d.mk, hdr);

	return ret < 0 ? ret : gfile_new(xl, obj, hdr, sizeof(hdr), 0, false, out);
}

/*
 * A file that drops to 0 bytes, or is found holding its header alone,
 * gets a fresh header in memory: a new file id, so a new key and new
 * associated data for what is written next, and no unit of what it held
 * before opens in it (#28 finding 5: a unit of the old contents spliced
 * into the rewritten file).  The new header is stored with the first
 * data, as a created file's is (hdr_stored false); until then the old
 * header alone is an empty file, which reads correctly whatever happens.
 * Under the write lock, or before the state is shared.  0 or -errno.
 */
static int renew_header(struct sc_xl *xl, struct gfile *gf)
{
	uint8_t hdr[SC_GHDR_SIZE];
	struct sc_gkey *gk;
	int ret = sc_ghdr_new(gpriv(xl)->d.mk, hdr);

	if (ret >= 0)
		ret = sc_gkey_new(gpriv(xl)->d.mk, hdr, sizeof(hdr), &gk);
	if (ret < 0)
		return ret;
	sc_gkey_free(gf->gk);
	gf->gk = gk;
	memcpy(gf->hdr, hdr, sizeof(hdr));
	gf->hdr_stored = false;
	return 0;
}

/* ---- integrity volumes (docs/format.md 11.3-11.6) ----------------------------- */

static bool first_report(struct gcm_priv *gp, unsigned long long ino);

/* The place p as the crypto library takes it. */
static struct sc_dirplace dplace(const struct sc_xl_place *p)
{
	return (struct sc_dirplace){ .parent = p->nonce, .enc = p->enc, .enc_len = p->enc_len };
}

/*
 * Whether the place p (this thread's, sc_xl_place_at) is none of an entry:
 * the layers' own files (sc.nonce, side files) are reached with no place
 * or an internal one.  So a call below that no layer gave a place can only
 * make or open a file of the layers, and an entry's file opened that way
 * is refused, never accepted unchecked.
 */
static bool place_internal(const struct sc_xl_place *p)
{
	return !p || p->internal;
}

/*
 * Whether the verified header h carries a place tag (format.md 11.3:
 * every entry's file but a LINKED one whose first name went; never a file
 * of the layers, INTERNAL, which sc_ihdr_verify enforces).
 */
static bool has_tag(const struct sc_ihdr *h)
{
	static const uint8_t zero[SC_INTEG_TAG_LEN];

	return memcmp(h->tag, zero, sizeof(zero)) != 0;
}

/*
 * Whether the verified header h of the backing file obj is bound at the
 * entry dp: by its own tag, or, a LINKED file, by the binding record this
 * mount found it vouched for at the lookup of one of its names, or made at
 * a link (format.md 11.5; an open carries no name, so the record is read
 * at the lookup, which has the directory).  0, or sc_ihdr_bound_at's
 * -ESTALE (bound to another entry) or -ENOENT (no tag, no record seen).
 * Only a LINKED file its tag does not bind costs a getattr below (its
 * inode number).
 */
static int bound_here(struct sc_xl *xl, struct sc_obj *obj, const struct sc_ihdr *h,
		      const struct sc_dirplace *dp)
{
	int r = sc_ihdr_bound_at(gpriv(xl)->ik, h, dp);

	if (r < 0 && (h->flags & SC_IHDR_F_LINKED) &&
	    sc_brec_seen_has(gpriv(xl)->seen, sc_data_backing_ino(xl, obj), h->file_id))
		return 0;
	return r;
}

/*
 * What this mount knows of a directory's binding records, in the
 * directory's slot of this layer (obj->priv; a file's holds its state):
 * nothing yet (NULL), none (one listing found none, and no record was
 * made since), some, or "look for each name" (too large to list).  A
 * lookup of a file with one link looks for its record only where there
 * may be one: one listing per directory instead of one lookup below per
 * file (format.md 11.5).  A record is made only after its directory is
 * marked, so a listing that missed it cannot leave "none" behind.
 */
static char drec_none, drec_some, drec_each;

static bool dir_may_hold_records(struct sc_xl *xl, struct sc_obj *dir)
{
	void *s = __atomic_load_n(&dir->priv[xl->id], __ATOMIC_ACQUIRE), *want;
	int r;

	if (!s) {
		r = sc_brec_dir_scan(xl->below, dir);
		want = r == 0 ? &drec_none : r == 1 ? &drec_some : &drec_each;
		__atomic_compare_exchange_n(&dir->priv[xl->id], &s, want, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		s = __atomic_load_n(&dir->priv[xl->id], __ATOMIC_ACQUIRE);
	}
	return s != &drec_none;
}

/* The binding record (id, g) made at dp in dir, its directory marked first. */
static int record_write(struct sc_xl *xl, struct sc_obj *dir, const struct sc_dirplace *dp,
			const uint8_t id[SC_GCM_FILE_ID_LEN], uint64_t g)
{
	void *s = __atomic_load_n(&dir->priv[xl->id], __ATOMIC_ACQUIRE);

	if (s != &drec_each)
		__atomic_store_n(&dir->priv[xl->id], &drec_some, __ATOMIC_RELEASE);
	return sc_brec_write(xl->below, gpriv(xl)->ik, dir, dp, id, g);
}

/* forget: a directory's slot holds no state to free. */
static void integ_forget(struct sc_xl *xl, struct sc_obj *obj)
{
	if (S_ISDIR(obj->type))
		obj->priv[xl->id] = NULL;
	else
		sc_data_op_forget(xl, obj);
}

/*
 * Whether the verified version 2 header of gf may be used at this thread's
 * place, its backing file being stored bytes long (format.md 11.4 and
 * 11.6, "The size"): 0, or -EIO, logged once per file with the cause.
 */
static int integ_check(struct sc_xl *xl, struct sc_obj *obj, struct gfile *gf, uint64_t stored)
{
	const struct sc_xl_place *at = sc_xl_place_at();
	const struct sc_ihdr *h = &gf->ih;
	uint64_t want = sc_gcm_stored_size_h(SC_IHDR_SIZE, (uint32_t)gpriv(xl)->d.bs, h->size);
	struct sc_dirplace dp;
	char why[384] = "";
	int r;

	if (h->flags & SC_IHDR_F_INTERNAL) {
		if (!place_internal(at))
			snprintf(why, sizeof(why), "is a file of the layers, found at an entry");
	} else if (place_internal(at)) {
		snprintf(why, sizeof(why), "is the file of an entry, found where the layers "
			 "keep their own files");
	} else {
		dp = dplace(at);
		r = bound_here(xl, obj, h, &dp);
		if (r == -ESTALE || (r == -ENOENT && (h->flags & SC_IHDR_F_LINKED)))
			snprintf(why, sizeof(why), "is bound to another entry%s: a file moved, "
				 "swapped, copied or hard-linked over it behind the mount",
				 h->flags & SC_IHDR_F_LINKED ? " (a hard-linked file whose binding "
				 "record does not vouch for it here)" : "");
		else if (r < 0)
			snprintf(why, sizeof(why), "cannot be checked at its place (%s)",
				 strerror(-r));
	}
	if (!why[0] && stored != want) {
		sc_jrnl_keep_unclean(gpriv(xl)->jr);	/* only after an unclean stop */
		snprintf(why, sizeof(why), "is %llu bytes long where its authenticated size "
			 "(%llu) gives %llu: %s", (unsigned long long)stored,
			 (unsigned long long)h->size, (unsigned long long)want,
			 sc_jrnl_unclean(gpriv(xl)->jr) ? "the last mount stopped uncleanly, "
			 "and a power loss can leave a file so ('stackcrypt fsck --repair "
			 "--accept-unclean' accepts it if every unit authenticates), else it "
			 "was cut or extended behind the mount" :
			 "cut or extended behind the mount");
	}
	if (!why[0])
		return 0;
	if (first_report(gpriv(xl), sc_data_backing_ino(xl, obj)))
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: %s; returning EIO\n",
			 sc_obj_name(xl->below, obj), why);
	return -EIO;
}

/*
 * A header edit for ihdr_rmw: changes the verified fields *h; returns 0
 * (store them), 1 (nothing to store) or -errno.
 */
typedef int (*ihdr_edit_fn)(struct sc_xl *xl, struct sc_ihdr *h, void *arg);

/*
 * Reads obj's stored version 2 header, verifies it, lets edit change it
 * and stores it again with a new MAC (88 bytes at 0, one pwrite; synced
 * when sync), into out when not NULL.  Through fh unless it is NULL or
 * read-only, else a read-write open of its own.  One rewrite at a time
 * (hdr_lock): a rename's rebind and a commit each start from what the
 * other stored.
 *
 * The backing file's mtime is the plaintext file's, and a header rewrite
 * is no change of its contents: the mtime the file had before is put
 * back after the pwrite.  Else a rename (the rebind), or a close after
 * `cp -p`'s futimens (the commit), would show the time of the rewrite.
 * A data write racing the rewrite may see its mtime put back to the
 * moment before the rewrite; ctime moves, as a rename moves it.  0 or
 * -errno.
 */
static int ihdr_rmw(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, ihdr_edit_fn edit,
		    void *arg, bool sync, uint8_t out[SC_IHDR_SIZE])
{
	struct gcm_priv *gp = gpriv(xl);
	struct sc_fh tmp = { .fd = -1, .flags = O_RDWR }, *use = fh;
	uint8_t hdr[SC_IHDR_SIZE];
	struct sc_ihdr h;
	struct stat st, now;
	ssize_t n;
	int ret;

	if (!use || (use->flags & O_ACCMODE) == O_RDONLY) {
		ret = sc_xl_open(xl->below, obj, &tmp);
		if (ret < 0)
			return ret;
		use = &tmp;
	}
	pthread_mutex_lock(&gp->hdr_lock);
	n = sc_xl_read(xl->below, obj, use, hdr, sizeof(hdr), 0);
	ret = n < 0 ? (int)n : sc_ihdr_verify(gp->ik, hdr, (size_t)n, &h);
	if (ret == 0)
		ret = edit(xl, &h, arg);
	if (ret == 0)
		ret = sc_ihdr_pack(gp->ik, &h, hdr);
	if (ret == 0)
		ret = sc_xl_getattr(xl->below, obj, use, &st);
	if (ret == 0)
		ret = sc_data_write_exact(xl, obj, use, hdr, sizeof(hdr), 0);
	if (ret == 0)
		ret = sc_xl_setattr(xl->below, obj, use, &st, SC_SET_MTIME, &now);
	if (ret == 0 && sync)
		ret = sc_xl_fsync(xl->below, obj, use, 1);
	if (ret == 0 && gp->fresh)	/* recorded once durable (format.md 11.9) */
		sc_fresh_wrote(gp->fresh, SC_FRESH_FILE, h.file_id, h.gen);
	pthread_mutex_unlock(&gp->hdr_lock);
	if (use == &tmp)
		sc_xl_release(xl->below, obj, &tmp);
	if (ret == 0 && out)
		memcpy(out, hdr, sizeof(hdr));
	return ret == 1 ? 0 : ret;
}

/*
 * The commit's edit (arg: the gfile): the next gen, the size in memory
 * and, on tree volumes, the root of the leaves in memory, which were
 * checked at their load and follow every unit this state stored.
 */
static int edit_commit(struct sc_xl *xl, struct sc_ihdr *h, void *arg)
{
	struct gfile *gf = arg;

	if (memcmp(h->file_id, sc_gkey_file_id(gf->gk), SC_GCM_FILE_ID_LEN) != 0)
		return -EIO;	/* not the file this state was made for: never overwritten */
	h->gen++;
	h->size = gf->d.size;
	if (!(h->flags & SC_IHDR_F_TREE))
		return 0;
	/* never a root over leaves that were not checked, or that miss units */
	if (!gf->tree_ok || !gf->tree ||
	    sc_utree_units(gf->tree) != sc_data_nunits(gpriv(xl)->d.bs, gf->d.size))
		return -EIO;
	return sc_utree_root(gf->tree, gpriv(xl)->ik, h->file_id, h->root);
}

/* The first hole's edit: HOLES (format.md 11.3), the next gen. */
static int edit_holes(struct sc_xl *xl, struct sc_ihdr *h, void *arg)
{
	(void)xl;
	(void)arg;
	h->flags |= SC_IHDR_F_HOLES;
	h->gen++;
	return 0;
}

/* The gen of a version 2 header's bytes (LE64 at 24), read before or without its MAC check. */
static uint64_t hdr_gen(const uint8_t *hdr)
{
	uint64_t g;

	memcpy(&g, hdr + 24, sizeof(g));
	return le64toh(g);
}

/*
 * Before a change that moves gf's size (write lock held): the file enters
 * the dirty table (format.md 11.8) if it is not in it yet, with the gen of
 * its header as this state last stored or read it (a lower bound of the
 * stored one: a rename's rebind raises it behind the state).  It is then
 * open for change (dirty) until a commit.  Without an entry (no table,
 * the table full) the change commits at once (integ_commit), which is
 * logged once when the table is full.
 */
static void session_begin(struct sc_xl *xl, struct gfile *gf)
{
	struct gcm_priv *gp = gpriv(xl);
	int ret;

	if (gf->didx >= 0 || !gp->jr)
		return;
	ret = sc_jrnl_dirty_begin(gp->jr, sc_gkey_file_id(gf->gk), hdr_gen(gf->hdr), &gf->didx);
	if (ret == 0) {
		gf->dirty = true;
		return;
	}
	if (ret != -EOPNOTSUPP && !__atomic_exchange_n(&gp->dt_full_logged, true, __ATOMIC_RELAXED))
		sc_log(SC_LOG_WARNING, "stackcrypt: gcm: %s; from now on each change of a "
			 "file's size commits its header at once\n", ret == -ENOSPC ?
			 "the journal's dirty table is full" : "cannot write to the journal's "
			 "dirty table");
}

/* After a commit: gf's entry zeroed, the file no longer open for change. */
static void session_end(struct sc_xl *xl, struct gfile *gf)
{
	if (gf->didx < 0)
		return;
	sc_jrnl_dirty_end(gpriv(xl)->jr, gf->didx);
	gf->didx = -1;
}

/* ---- the unit tree (format.md 11.10) ----------------------------------------- */

/* Whether the volume's files carry a unit tree (feature 0x20): never on any other path. */
static bool tree_on(const struct sc_xl *xl)
{
	return gpriv(xl)->ik && sc_ikey_tree(gpriv(xl)->ik);
}

/*
 * gf's tree covers n units; units new to it are holes (zero leaves) until
 * a run stores them.  0 or -ENOMEM.  Write lock, or before the tree is
 * shared (tree_load).
 */
static int leaves_fit(struct gfile *gf, uint64_t n)
{
	int ret = gf->tree ? 0 : sc_utree_new(&gf->tree);

	return ret < 0 ? ret : sc_utree_resize(gf->tree, n);
}

/* The leaves of the len stored bytes at buf, from unit u on, into t: their last 16 bytes. */
static int leaves_take(struct sc_xl *xl, struct sc_utree *t, const uint8_t *buf, size_t len,
		       uint64_t u)
{
	size_t ulen;
	int ret = 0;

	for (size_t p = 0; ret == 0 && p < len; p += ulen, u++) {
		ulen = (size_t)min_u64(len - p, sbs(xl));
		ret = ulen > SC_GCM_OVERHEAD ? sc_utree_set(t, u, buf + p + ulen - SC_INTEG_TAG_LEN) :
		      -EIO;
	}
	return ret;
}

/*
 * The leaves of obj's stored units (stored bytes long) into t, which
 * covers them: each unit's last 16 bytes, its tag, which a hole has as
 * zeros (so a zeroed unit's leaf is zero, and the root tells a hole from
 * a unit zeroed behind the mount).  Read in runs of 64 units; after a run
 * that ends in a zero tag the next starts at the next data the layer
 * below reports (SEEK_DATA), so a sparse file's holes are not read.
 * Through fh, or a read-only open of its own when fh cannot read.  0,
 * -EIO (the file ends inside a unit's overhead), or -errno.
 */
static int leaves_read(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, uint64_t stored,
		       struct sc_utree *t)
{
	static const uint8_t zero[SC_INTEG_TAG_LEN];
	struct sc_fh tmp = { .fd = -1, .flags = O_RDONLY }, *use = fh;
	size_t cap = (size_t)(SC_TREE_FANOUT * sbs(xl)), len;
	uint8_t *buf = malloc(cap);
	uint64_t off = hl(xl);
	off_t data;
	int ret = buf ? 0 : -ENOMEM;

	if (ret == 0 && (!fh || (fh->flags & O_ACCMODE) == O_WRONLY)) {
		ret = sc_xl_open(xl->below, obj, &tmp);
		use = &tmp;
	}
	while (ret == 0 && off < stored) {
		len = (size_t)min_u64(stored - off, cap);
		ret = sc_data_read_exact(xl, obj, use, buf, len, off);
		if (ret == 0)
			ret = leaves_take(xl, t, buf, len, (off - hl(xl)) / sbs(xl));
		off += len;
		if (ret < 0 || off >= stored || memcmp(buf + len - SC_INTEG_TAG_LEN, zero,
						       sizeof(zero)) != 0)
			continue;
		data = sc_xl_lseek(xl->below, obj, use, (off_t)off, SEEK_DATA);
		if (data == -ENXIO)
			break;	/* a hole to the end */
		if (data > (off_t)off)	/* from the start of the unit the data is in */
			off = uoff(xl, ((uint64_t)data - hl(xl)) / sbs(xl));
	}
	if (use == &tmp && tmp.fd >= 0)
		sc_xl_release(xl->below, obj, &tmp);
	free(buf);
	return ret;
}

/*
 * Before the first read or change of gf's units in this state: its
 * leaves read from the file and checked against its header's root
 * (format.md 11.10).  Then a zero unit whose leaf is zero is a hole.  0,
 * -EIO (logged once per file: a unit put back from an older version of
 * the file, or its units otherwise not the ones the header vouches for),
 * or -errno.  Under gf's lock, either mode: until tree_ok nothing else
 * uses the tree.
 */
static int tree_load(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile *gf)
{
	uint64_t size = sc_data_size(&gf->d), n = sc_data_nunits(gpriv(xl)->d.bs, size);
	int ret = 0;

	if (!tree_on(xl) || __atomic_load_n(&gf->tree_ok, __ATOMIC_ACQUIRE))
		return 0;
	/* refused once: every later use of this state is EIO without reading the file again */
	if (__atomic_load_n(&gf->tree_bad, __ATOMIC_ACQUIRE))
		return -EIO;
	pthread_mutex_lock(&gf->tree_lock);
	if (gf->tree_ok || gf->tree_bad) {
		ret = gf->tree_ok ? 0 : -EIO;
		goto out_unlock;
	}
	sc_utree_free(gf->tree);	/* what a failed load or reread left */
	gf->tree = NULL;
	ret = leaves_fit(gf, n);
	if (ret == 0)
		ret = leaves_read(xl, obj, fh, stored_of(xl, gf, size), gf->tree);
	if (ret == 0)
		ret = sc_utree_check(gf->tree, gpriv(xl)->ik, sc_gkey_file_id(gf->gk),
				     gf->hdr + SC_IHDR_ROOT_OFF);
	if (ret == 0) {
		sc_gkey_allow_holes(gf->gk);
		__atomic_store_n(&gf->tree_ok, true, __ATOMIC_RELEASE);
		goto out_unlock;
	}
	/* a power loss can lose a dirty entry and keep the units (11.8): as for the size */
	if (ret == -EBADMSG) {
		sc_jrnl_keep_unclean(gpriv(xl)->jr);
		__atomic_store_n(&gf->tree_bad, true, __ATOMIC_RELEASE);
	}
	if ((ret == -EBADMSG || ret == -EIO) &&
	    first_report(gpriv(xl), sc_data_backing_ino(xl, obj)))
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: its units are not the ones its unit tree "
			 "records: %s; returning EIO\n", sc_obj_name(xl->below, obj),
			 sc_jrnl_unclean(gpriv(xl)->jr) ? "the last mount stopped uncleanly, and "
			 "a power loss can leave a file so ('stackcrypt fsck --repair "
			 "--accept-unclean' accepts it if every unit authenticates), else a unit "
			 "was put back from an older version of the file behind the mount" :
			 "a unit put back from an older version of the file, or its tags "
			 "changed, behind the mount");
	ret = ret == -EBADMSG ? -EIO : ret;
out_unlock:
	pthread_mutex_unlock(&gf->tree_lock);
	return ret;
}

/*
 * A change of gf's units is coming (tree volumes, where any change moves
 * the root): the file enters the dirty table first if it is not in it
 * (session_begin) and is open for change until the commit stores the
 * root.  A write in place holds only the read lock: tree_lock keeps two
 * of them from both taking an entry.
 */
static void tree_touch(struct sc_xl *xl, struct gfile *gf)
{
	if (__atomic_load_n(&gf->dirty, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&gf->tree_lock);
	if (!gf->dirty) {
		session_begin(xl, gf);
		/* no entry (the table full): the root waits for the close all the same */
		__atomic_store_n(&gf->dirty, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&gf->tree_lock);
}

/* The leaves of the stored run from unit ua at o (slen bytes) set in gf's tree.  0 or -ENOMEM. */
static int leaves_set(struct sc_xl *xl, struct gfile *gf, uint64_t ua, const uint8_t *o,
		      uint64_t slen)
{
	int ret;

	pthread_mutex_lock(&gf->tree_lock);
	ret = leaves_take(xl, gf->tree, o, (size_t)slen, ua);
	pthread_mutex_unlock(&gf->tree_lock);
	return ret;
}

/*
 * After a failed growth was undone (the old partial last unit put back):
 * the tree read again from the file as it is now, not checked (this
 * session's own writes are in it).  Unreadable: the next use loads it
 * again and checks it.  Write lock.
 */
static void tree_reread(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile *gf)
{
	uint64_t size = sc_data_size(&gf->d);
	struct sc_utree *t = gf->tree;

	gf->tree = NULL;
	sc_utree_free(t);
	if (leaves_fit(gf, sc_data_nunits(gpriv(xl)->d.bs, size)) < 0 ||
	    leaves_read(xl, obj, fh, stored_of(xl, gf, size), gf->tree) < 0)
		__atomic_store_n(&gf->tree_ok, false, __ATOMIC_RELEASE);
}

/*
 * Commit (format.md 11.6): the header gets gen + 1 and the size of gf,
 * whose write lock is held.  0 or -errno.
 */
static int integ_store(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile *gf)
{
	uint8_t hdr[SC_IHDR_SIZE];
	int ret = ihdr_rmw(xl, obj, fh, edit_commit, gf, false, hdr);

	if (ret == 0) {
		memcpy(gf->hdr, hdr, sizeof(hdr));
		gf->dirty = false;
		session_end(xl, gf);
	}
	return ret;
}

/* A cut to 0 bytes: the new file id and its place tag (arg: the new id). */
struct renew_arg {
	uint8_t				id[SC_GCM_FILE_ID_LEN];
	const struct sc_xl_place	*at;
	uint8_t				old_id[SC_GCM_FILE_ID_LEN];	/* set by the edit */
	uint64_t			old_gen;
};

static int edit_renew(struct sc_xl *xl, struct sc_ihdr *h, void *arg)
{
	struct renew_arg *a = arg;
	struct sc_dirplace dp;
	int ret = 0;

	memcpy(a->old_id, h->file_id, sizeof(a->old_id));
	a->old_gen = h->gen;
	/*
	 * A LINKED file keeps its id, which its names' records vouch for; its
	 * authenticated size (0 now) refuses the old units appended back.
	 */
	if (h->flags & SC_IHDR_F_LINKED)
		memcpy(a->id, h->file_id, sizeof(a->id));
	else if (!(h->flags & SC_IHDR_F_INTERNAL)) {
		if (place_internal(a->at))
			return -EIO;
		dp = dplace(a->at);
		/* never rebind a file found bound elsewhere: that would accept a swap */
		ret = sc_ihdr_bound_at(gpriv(xl)->ik, h, &dp);
		if (ret == 0)
			ret = sc_integ_place_tag(gpriv(xl)->ik, a->id, &dp, h->tag);
	}
	memcpy(h->file_id, a->id, sizeof(a->id));
	h->flags &= SC_IHDR_F_TRACKS | SC_IHDR_F_INTERNAL | SC_IHDR_F_LINKED | SC_IHDR_F_TREE;
	h->gen++;
	h->size = 0;
	/* the tree of no unit under the new id */
	if (ret == 0 && (h->flags & SC_IHDR_F_TREE))
		ret = sc_tree_root(gpriv(xl)->ik, h->file_id, 0, NULL, h->root);
	return ret < 0 ? -EIO : 0;
}

/*
 * A file cut to 0 bytes gets a new file id at once (as 10.7, so no unit
 * of what it held opens in what it holds next), bound at this thread's
 * place, gen continuing.  Under gf's write lock.  0 or -errno.
 */
static int integ_renew(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile *gf)
{
	struct renew_arg a = { .at = sc_xl_place_at() };
	uint8_t hdr[SC_IHDR_SIZE];
	struct sc_gkey *gk;
	int ret = sc_random(a.id, sizeof(a.id));

	if (ret == 0)
		ret = ihdr_rmw(xl, obj, fh, edit_renew, &a, false, hdr);
	/* the old id's headers are gone: a tombstone, recorded once durable (11.9) */
	if (ret == 0 && gpriv(xl)->fresh && memcmp(a.old_id, a.id, sizeof(a.id)) != 0)
		sc_fresh_wrote(gpriv(xl)->fresh, SC_FRESH_GONE, a.old_id, a.old_gen);
	if (ret == 0)
		ret = sc_gkey_new_v2(gpriv(xl)->ik, hdr, sizeof(hdr), &gf->ih, &gk);
	if (ret < 0)
		return ret;
	sc_gkey_free(gf->gk);
	gf->gk = gk;
	memcpy(gf->hdr, hdr, sizeof(hdr));
	gf->dirty = false;
	session_end(xl, gf);
	if (tree_on(xl)) {	/* no unit: nothing to check, every later one a hole or stored */
		ret = leaves_fit(gf, 0);
		sc_gkey_allow_holes(gk);
		__atomic_store_n(&gf->tree_ok, ret == 0, __ATOMIC_RELEASE);
	}
	return ret;
}

/*
 * After change ch of gf (write lock held): a cut to 0 bytes renews the
 * header, a resize (truncate, fallocate) commits at once, a write that
 * moved the size leaves the commit to the release or fsync (dirty).
 */
static int integ_commit(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile *gf,
			const struct sc_dchange *ch)
{
	int ret;

	if (ch->new_sz == 0 && ch->old_sz > 0)
		return integ_renew(xl, obj, fh, gf);
	if (tree_on(xl)) {	/* a shrink, or a growth that stored no unit past the old end */
		ret = leaves_fit(gf, sc_data_nunits(gpriv(xl)->d.bs, ch->new_sz));
		if (ret < 0)
			return ret;
	}
	if (ch->new_sz == ch->old_sz && !tree_on(xl))
		return 0;
	/* no dirty entry covers the header's lag: stored now (format.md 11.8, table full) */
	if (ch->resize || gf->didx < 0)
		return integ_store(xl, obj, fh, gf);
	gf->dirty = true;
	return 0;
}

/* Stores a size the header does not have yet (release, fsync).  Logged on failure. */
static int integ_flush(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct sc_dfile *df)
{
	struct gfile *gf = gfile_of(df);
	int ret = 0;

	if (!df || !__atomic_load_n(&gf->dirty, __ATOMIC_RELAXED))
		return 0;
	pthread_rwlock_wrlock(&df->lock);
	if (gf->dirty)
		ret = integ_store(xl, obj, fh, gf);
	pthread_rwlock_unlock(&df->lock);
	if (ret < 0)
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: cannot store the file's size in its "
			 "header (%s)\n", sc_obj_name(xl->below, obj), strerror(-ret));
	return ret;
}

static void integ_release(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  struct sc_dfile *df)
{
	integ_flush(xl, obj, fh, df);
}

/*
 * close(2) of a handle: the size a write moved goes into the header now,
 * before close returns, not at the release, which the kernel sends later
 * on its own: a header stored then changed the backing file's mtime after
 * the caller had moved on, so a utimensat(2) right after the close was
 * undone (the battery's "times mtime kept" failed so, 1 run in 3).  The
 * release still commits what a shared mapping wrote after the close.
 */
static int integ_flush_op(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	int ret = 0;

	if (S_ISREG(obj->type))
		ret = integ_flush(xl, obj, fh, sc_data_state(xl, obj));
	return ret < 0 ? ret : sc_xl_flush(xl->below, obj, fh);
}

/* The kernel must send FLUSH at close(2): integ_flush_op has work to do. */
static bool integ_close_is_silent(struct sc_xl *xl, struct sc_obj *root)
{
	(void)xl;
	(void)root;
	return false;
}

/*
 * fsync: the commit first, so what the backing fsync makes durable holds
 * the size; then the file's gen is durable, for the freshness record.
 */
static int integ_fsync(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int datasync)
{
	struct sc_dfile *df = S_ISREG(obj->type) ? sc_data_state(xl, obj) : NULL;
	int ret = 0;

	if (S_ISREG(obj->type))
		ret = integ_flush(xl, obj, fh, df);
	if (ret == 0)
		ret = sc_xl_fsync(xl->below, obj, fh, datasync);
	if (ret == 0 && df && gpriv(xl)->fresh) {
		pthread_rwlock_rdlock(&df->lock);
		sc_fresh_synced(gpriv(xl)->fresh, SC_FRESH_FILE, sc_gkey_file_id(gfile_of(df)->gk));
		pthread_rwlock_unlock(&df->lock);
	}
	return ret;
}

/*
 * Whether the verified header of gf is no older than this client has seen
 * (format.md 11.9): 0, or -EIO logged once per file.  Accepted under
 * --allow-rollback, logged.
 */
static int fresh_check(struct sc_xl *xl, struct sc_obj *obj, struct gfile *gf)
{
	struct gcm_priv *gp = gpriv(xl);
	uint64_t seen = 0;
	int r = sc_fresh_check(gp->fresh, SC_FRESH_FILE, gf->ih.file_id, gf->ih.gen, &seen);

	if (r == 1)
		sc_log(SC_LOG_WARNING, "stackcrypt: gcm: warning: %s: was rolled back (gen %llu < "
		       "%llu, seen on this machine); accepted (--allow-rollback)\n",
		       sc_obj_name(xl->below, obj), (unsigned long long)gf->ih.gen,
		       (unsigned long long)seen);
	if (r != -ESTALE && r != -ENOENT)
		return 0;
	if (first_report(gp, sc_data_backing_ino(xl, obj)))
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: was rolled back: gen %llu < %llu, %s "
		       "on this machine (put back from an older copy behind the mount; mount "
		       "--allow-rollback accepts it); returning EIO\n",
		       sc_obj_name(xl->below, obj), (unsigned long long)gf->ih.gen,
		       (unsigned long long)seen, r == -ENOENT ? "seen deleted or emptied" : "seen");
	return -EIO;
}

#ifdef SC_TEST_HOOKS
/*
 * Test hook: SC_TEST_KILL_CREATE=N kills the daemon at the Nth header of a
 * new entry's file, after the backing file was made and before its header
 * is stored: the crash window of format.md 11.8 that a kill -9 from
 * outside hits only by chance (tests/cli/t_integrity.sh).  Built into
 * stackcrypt-testhooks only.
 */
static void test_kill_create(void)
{
	static long n, at = -1;
	const char *v;

	if (__atomic_load_n(&at, __ATOMIC_RELAXED) < 0) {
		v = getenv("SC_TEST_KILL_CREATE");
		__atomic_store_n(&at, v ? strtol(v, NULL, 10) : 0, __ATOMIC_RELAXED);
	}
	if (at > 0 && __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED) == at)
		raise(SIGKILL);
}
#else
static void test_kill_create(void)
{
}
#endif

/*
 * A new file at this thread's place: its header (gen 1, size 0, bound
 * there, or INTERNAL for a file of the layers) into hdr and stored at once
 * through fh, or an open of its own when fh is NULL or read-only
 * (format.md 11.6: a version 2 file always holds its header).
 * 0 or -errno.
 */
static int integ_header(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			uint8_t hdr[SC_IHDR_SIZE])
{
	const struct sc_xl_place *at = sc_xl_place_at();
	struct sc_fh tmp = { .fd = -1, .flags = O_RDWR }, *use = fh;
	struct sc_ihdr h = { .flags = SC_IHDR_F_TRACKS, .gen = 1 };
	struct sc_dirplace dp;
	int ret;

	ret = sc_random(h.file_id, sizeof(h.file_id));
	if (ret == 0 && place_internal(at)) {
		h.flags |= SC_IHDR_F_INTERNAL;
	} else if (ret == 0) {
		dp = dplace(at);
		ret = sc_integ_place_tag(gpriv(xl)->ik, h.file_id, &dp, h.tag);
		test_kill_create();
	}
	if (ret == 0 && tree_on(xl)) {	/* the tree of no unit */
		h.flags |= SC_IHDR_F_TREE;
		ret = sc_tree_root(gpriv(xl)->ik, h.file_id, 0, NULL, h.root);
	}
	if (ret == 0)
		ret = sc_ihdr_pack(gpriv(xl)->ik, &h, hdr);
	if (ret == 0 && (!fh || (fh->flags & O_ACCMODE) == O_RDONLY)) {
		ret = sc_xl_open(xl->below, obj, &tmp);
		use = &tmp;
	}
	if (ret == 0)
		ret = sc_data_write_exact(xl, obj, use, hdr, SC_IHDR_SIZE, 0);
	if (use == &tmp && tmp.fd >= 0)
		sc_xl_release(xl->below, obj, &tmp);
	return ret;
}

static int integ_made(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile **out)
{
	uint8_t hdr[SC_IHDR_SIZE];
	int ret = integ_header(xl, obj, fh, hdr);

	return ret < 0 ? ret : gfile_new(xl, obj, hdr, sizeof(hdr), 0, true, out);
}

/*
 * A create at this thread's place, of an entry's file, gets a dirty table
 * entry before its backing file is made (format.md 11.8), ended by the
 * caller once the header is stored: a kill in between leaves a 0-byte
 * file that create_resolve can tell from one cut to nothing.  *idx: the
 * entry, or -1 (a file of the layers; no table, or a full one, when the
 * window stays as it was).
 */
static void create_pin(struct sc_xl *xl, int *idx)
{
	const struct sc_xl_place *at = sc_xl_place_at();
	uint8_t tag[SC_INTEG_TAG_LEN];
	struct sc_dirplace dp;

	*idx = -1;
	if (place_internal(at) || !gpriv(xl)->jr)
		return;
	dp = dplace(at);
	if (sc_integ_create_tag(gpriv(xl)->ik, &dp, tag) == 0)
		sc_jrnl_place_begin(gpriv(xl)->jr, SC_JRNL_CREATE, tag, 0, idx);
}

/*
 * The file at this thread's place, while entries are pinned: one whose
 * create was cut short by the stop of the last run (a pinned create entry
 * for the place, the file still 0 bytes) gets the header its create would
 * have stored, logged; a pinned create entry is zeroed either way (a file
 * with its header was pinned after the store).  0 or -errno.
 */
static int create_resolve(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	const struct sc_xl_place *at = sc_xl_place_at();
	struct gcm_priv *gp = gpriv(xl);
	uint8_t tag[SC_INTEG_TAG_LEN], hdr[SC_IHDR_SIZE];
	struct sc_dirplace dp;
	bool made = false;
	struct stat st;
	int idx, ret;

	if (place_internal(at) || sc_jrnl_dirty_pinned(gp->jr) == 0)
		return 0;
	dp = dplace(at);
	ret = sc_integ_create_tag(gp->ik, &dp, tag);
	if (ret < 0)
		return ret;
	/* one thread at a time: a second one finds the entry gone, the header there */
	pthread_mutex_lock(&gp->rec_lock);
	idx = sc_jrnl_place_find(gp->jr, SC_JRNL_CREATE, tag, 0);
	if (idx >= 0)
		ret = sc_xl_getattr(xl->below, obj, fh, &st);
	if (idx >= 0 && ret == 0 && st.st_size == 0) {
		ret = integ_header(xl, obj, fh, hdr);
		made = ret == 0;
	}
	if (idx >= 0 && ret == 0)
		ret = sc_jrnl_dirty_end(gp->jr, idx);
	pthread_mutex_unlock(&gp->rec_lock);
	if (made)
		sc_log(SC_LOG_WARNING, "stackcrypt: gcm: warning: %s: was being created when "
			 "the mount stopped, before its header was stored; accepted as an empty "
			 "file\n", sc_obj_name(xl->below, obj));
	else if (ret < 0)
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: was being created when the mount "
		       "stopped, and its header cannot be stored (%s); returning EIO\n",
		       sc_obj_name(xl->below, obj), strerror(-ret));
	return ret < 0 ? -EIO : 0;
}

/* The rebind of a file a kill left renamed (ihdr_rmw edit; arg: its place). */
static int edit_bind_here(struct sc_xl *xl, struct sc_ihdr *h, void *arg)
{
	const struct sc_dirplace *here = arg;
	int ret;

	if (sc_ihdr_bound_at(gpriv(xl)->ik, h, here) == 0)
		return 1;
	ret = sc_integ_place_tag(gpriv(xl)->ik, h->file_id, here, h->tag);
	if (ret == 0)
		h->gen++;
	return ret;
}

/*
 * The file at this thread's place, its header hdr read, while entries are
 * pinned: one a kill left renamed but still bound where it was (a pinned
 * rename entry for its id and this place, at most its gen: format.md 11.8)
 * is bound here, hdr read again, logged; the entry is zeroed either way
 * (a file bound here already was killed after its rebind).  0 or -EIO
 * (logged).
 */
static int rename_resolve(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  uint8_t hdr[SC_IHDR_SIZE])
{
	const struct sc_xl_place *at = sc_xl_place_at();
	struct gcm_priv *gp = gpriv(xl);
	uint8_t tag[SC_INTEG_TAG_LEN];
	struct sc_dirplace dp;
	struct sc_ihdr h;
	bool moved = false;
	int idx, ret = 0;

	if (place_internal(at) || sc_jrnl_dirty_pinned(gp->jr) == 0 ||
	    sc_ihdr_verify(gp->ik, hdr, SC_IHDR_SIZE, &h) < 0)
		return 0;	/* a header that does not verify: integ_check says so */
	dp = dplace(at);
	if (!has_tag(&h) || sc_integ_rename_tag(gp->ik, h.file_id, &dp, tag) < 0)
		return 0;
	pthread_mutex_lock(&gp->rec_lock);
	idx = sc_jrnl_place_find(gp->jr, SC_JRNL_RENAME, tag, h.gen);
	if (idx >= 0 && sc_ihdr_bound_at(gp->ik, &h, &dp) != 0) {
		ret = ihdr_rmw(xl, obj, fh, edit_bind_here, &dp, false, hdr);
		moved = ret == 0;
	}
	if (idx >= 0 && ret == 0)
		ret = sc_jrnl_dirty_end(gp->jr, idx);
	pthread_mutex_unlock(&gp->rec_lock);
	if (moved)
		sc_log(SC_LOG_WARNING, "stackcrypt: gcm: warning: %s: was being renamed when "
			 "the mount stopped, before it was bound to its new name; bound to it\n",
			 sc_obj_name(xl->below, obj));
	else if (ret < 0)
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: was being renamed when the mount "
		       "stopped, and cannot be bound to its new name (%s); returning EIO\n",
		       sc_obj_name(xl->below, obj), strerror(-ret));
	return ret < 0 ? -EIO : 0;
}

static void settle_record(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			  const struct sc_xl_place *p);

static int integ_create(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
			struct sc_fh *fh, int *fd_out, struct stat *st)
{
	int idx, ret;

	create_pin(xl, &idx);
	ret = sc_data_op_create(xl, dir, name, mode, fh, fd_out, st);
	sc_jrnl_dirty_end(gpriv(xl)->jr, idx);
	if (ret == 0)
		settle_record(xl, dir, name, sc_xl_place_at());
	return ret;
}

/* symlink: a new entry (settle_record), at the place the names layer gives. */
static int integ_symlink(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			 const char *target, int *fd_out, struct stat *st)
{
	int ret = sc_data_op_symlink(xl, dir, name, target, fd_out, st);

	if (ret == 0)
		settle_record(xl, dir, name, sc_xl_place_at());
	return ret;
}

/*
 * mknod of a regular file: made as create makes it (O_EXCL, then its
 * header through a handle of the create's, which a mode without write
 * permission does not stop), so that no entry's file is ever without
 * one.  Other types pass.  Returns 0 or -errno; a file half made is
 * removed.
 */
static int integ_mknod(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		       dev_t rdev, int *fd_out, struct stat *st)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR | O_CREAT | O_EXCL };
	struct sc_obj o = { .type = S_IFREG };
	uint8_t hdr[SC_IHDR_SIZE];
	int idx, ret;

	if (!S_ISREG(mode))
		return sc_data_op_mknod(xl, dir, name, mode, rdev, fd_out, st);
	if (sc_data_is_hidden(xl, dir, name))
		return -EPERM;
	create_pin(xl, &idx);
	ret = sc_xl_create(xl->below, dir, name, mode, &fh, fd_out, st);
	if (ret < 0)
		goto out_unpin;
	o.fd = *fd_out;
	ret = integ_header(xl, &o, &fh, hdr);
	if (ret == 0)
		ret = sc_xl_getattr(xl->below, &o, &fh, st);
	sc_xl_release(xl->below, &o, &fh);
	if (ret < 0) {
		sc_xl_drop_fd(xl->below, *fd_out);
		*fd_out = -1;
		sc_xl_unlink(xl->below, dir, name);
		goto out_unpin;
	}
	sc_data_fix_stat(xl, NULL, st);
	settle_record(xl, dir, name, sc_xl_place_at());
out_unpin:
	sc_jrnl_dirty_end(gpriv(xl)->jr, idx);
	return ret;
}

/* A rename's rebind (format.md 11.6): from the place it left to the one it reached. */
struct rebind_arg {
	struct sc_dirplace	from, to;
};

static int edit_rebind(struct sc_xl *xl, struct sc_ihdr *h, void *arg)
{
	struct rebind_arg *a = arg;
	const struct sc_ikey *ik = gpriv(xl)->ik;
	int ret;

	if (!has_tag(h))
		return 1;	/* bound by no tag */
	if (sc_ihdr_bound_at(ik, h, &a->to) == 0)
		return 1;	/* already there (a rename onto itself) */
	/* bound neither where it was nor where it goes: left to be reported at open */
	ret = sc_ihdr_bound_at(ik, h, &a->from);
	if (ret == 0)
		ret = sc_integ_place_tag(ik, h->file_id, &a->to, h->tag);
	if (ret == 0)
		h->gen++;
	return ret;
}

/*
 * A file a rename moves (format.md 11.5, 11.6, 11.8): looked up before the
 * backing rename (its O_PATH fd stays with the inode when the name
 * changes).  Bound where it was by its tag: given a dirty table entry for
 * it and the place it goes, so that a kill between the backing rename and
 * the rebind leaves a file its new place accepts (rename_resolve), not one
 * bound to another entry.  A LINKED file vouched for where it was by a
 * binding record (recmove): the record goes with the name, no rebind.
 */
struct rename_file {
	struct sc_obj	o;	/* fd -1: no regular file (nothing to rebind) */
	struct sc_fh	fh;	/* read-write, kept for the rebind; fd -1: none */
	ino_t		ino;	/* the backing inode of the name (any type); 0: not looked up */
	int		idx;	/* its entry, or -1 */
	bool		recmove;	/* moved by its record: id is the file's */
	uint8_t		id[SC_GCM_FILE_ID_LEN];
};

static void rename_pin(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       const struct sc_xl_place *from, const struct sc_xl_place *to,
		       struct rename_file *rf)
{
	const struct sc_ikey *ik = gpriv(xl)->ik;
	struct sc_dirplace was = dplace(from), goes = dplace(to);
	uint8_t hdr[SC_IHDR_SIZE], tag[SC_INTEG_TAG_LEN], rid[SC_GCM_FILE_ID_LEN];
	struct sc_ihdr h;
	struct stat st;
	uint64_t rg;
	int fd = -1;

	rf->o = (struct sc_obj){ .fd = -1, .type = S_IFREG };
	rf->fh = (struct sc_fh){ .fd = -1, .flags = O_RDWR };
	rf->ino = 0;
	rf->idx = -1;
	rf->recmove = false;
	if (sc_xl_lookup(xl->below, dir, name, &fd, &st) < 0)
		return;
	rf->ino = st.st_ino;
	if (!S_ISREG(st.st_mode)) {
		sc_xl_drop_fd(xl->below, fd);
		return;
	}
	rf->o.fd = fd;
	/* one read-write open for the header read here and the rebind after */
	if (!gpriv(xl)->jr || sc_xl_open(xl->below, &rf->o, &rf->fh) < 0) {
		rf->fh.fd = -1;
		return;
	}
	if (sc_xl_read(xl->below, &rf->o, &rf->fh, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    sc_ihdr_verify(ik, hdr, sizeof(hdr), &h) < 0)
		return;
	if (sc_ihdr_bound_at(ik, &h, &was) == 0) {
		if (sc_integ_rename_tag(ik, h.file_id, &goes, tag) == 0)
			sc_jrnl_place_begin(gpriv(xl)->jr, SC_JRNL_RENAME, tag, h.gen, &rf->idx);
	} else if ((h.flags & SC_IHDR_F_LINKED) &&
		   sc_brec_read(xl->below, ik, dir, &was, rid, &rg) == 0 &&
		   sc_bindrec_vouches(&h, rid, rg)) {
		rf->recmove = true;
		memcpy(rf->id, h.file_id, sizeof(rf->id));
	}
}

/* Whether rebinds may wait for the next directory fsync (the gcm_priv fields above). */
static bool rebind_may_wait(struct sc_xl *xl)
{
	struct gcm_priv *gp = gpriv(xl);
	int s = __atomic_load_n(&gp->rebind_sync, __ATOMIC_ACQUIRE);

	if (s == 0) {
		s = sc_xl_syncfs(xl->below, NULL) == 0 ? 1 : -1;
		__atomic_store_n(&gp->rebind_sync, s, __ATOMIC_RELEASE);
	}
	return s > 0;
}

/* fsyncdir on an integrity volume: the rebinds since the last syncfs made durable first. */
static int integ_fsyncdir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int datasync)
{
	int ret = 0;

	if (__atomic_exchange_n(&gpriv(xl)->rebinds_unsynced, 0, __ATOMIC_ACQ_REL)) {
		ret = sc_xl_syncfs(xl->below, obj);
		if (ret < 0)	/* a later fsync tries again */
			__atomic_store_n(&gpriv(xl)->rebinds_unsynced, 1, __ATOMIC_RELEASE);
	}
	return ret < 0 ? ret : sc_xl_fsyncdir(xl->below, obj, fh, datasync);
}

/* The volume's crash journal, for the names layer's listing records (sc_xl_ops.journal). */
static struct sc_jrnl *integ_journal(struct sc_xl *xl)
{
	return gpriv(xl)->jr;
}

/*
 * ihdr_rmw for a header rewrite that goes with a change of names (a
 * rebind, a file made LINKED, a first name's tag dropped): made durable by
 * the next fsync of a directory, as the names are (the backing's syncfs
 * then), or at once below a layer without syncfs.  0 or -errno.
 */
static int ihdr_rmw_named(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  ihdr_edit_fn edit, void *arg)
{
	bool wait = rebind_may_wait(xl);
	int ret = ihdr_rmw(xl, obj, fh, edit, arg, !wait, NULL);

	if (ret == 0 && wait)
		__atomic_store_n(&gpriv(xl)->rebinds_unsynced, 1, __ATOMIC_RELEASE);
	return ret;
}

/*
 * After the backing rename (done: it succeeded): the file of rf, now named
 * name in dir, rebound from place from to place to (a file moved by its
 * record needs none); then its entry ended and its fd dropped.
 */
static void rename_done(struct sc_xl *xl, struct rename_file *rf, bool done,
			struct sc_obj *dir, const char *name,
			const struct sc_xl_place *from, const struct sc_xl_place *to)
{
	struct rebind_arg a;
	int ret = 0;

	if (rf->o.fd < 0)	/* nothing looked up: no file, or a place of the layers */
		return;
	a = (struct rebind_arg){ .from = dplace(from), .to = dplace(to) };
	if (done && rf->recmove) {
		sc_brec_seen_add(gpriv(xl)->seen, (uint64_t)rf->ino, rf->id);
	} else if (done) {
		ret = ihdr_rmw_named(xl, &rf->o, rf->fh.fd >= 0 ? &rf->fh : NULL, edit_rebind, &a);
	}
	if (rf->fh.fd >= 0)
		sc_xl_release(xl->below, &rf->o, &rf->fh);
	if (ret < 0)
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: not rebound to its new name (%s); "
			 "it reads as EIO until %s\n",
			 sc_obj_child_name(dir, name, (unsigned long long)rf->ino),
			 strerror(-ret), rf->idx >= 0 ? "the next mount or fsck --repair binds "
			 "it (its rename entry is kept)" : "fsck reports it");
	/* kept on a failed rebind: the next mount binds the file where it is */
	if (ret == 0)
		sc_jrnl_dirty_end(gpriv(xl)->jr, rf->idx);
	sc_xl_drop_fd(xl->below, rf->o.fd);
}

/* The tag drop of a LINKED file's first name, which goes (arg: that place). */
static int edit_untag(struct sc_xl *xl, struct sc_ihdr *h, void *arg)
{
	if (!(h->flags & SC_IHDR_F_LINKED) || sc_ihdr_bound_at(gpriv(xl)->ik, h, arg) != 0)
		return 1;
	memset(h->tag, 0, sizeof(h->tag));
	h->gen++;
	return 0;
}

/*
 * An entry that goes, by an unlink or a rename over it (format.md 11.5,
 * 11.9).  Every step leaves each name readable: before the removal, the
 * first name of a LINKED file that keeps other names gets a binding
 * record and then loses the tag (so it is a name like the others); after
 * it, the name's record is removed, and a file's last link with a
 * verified header gets a tombstone.  A kill after the removal leaves a
 * record whose name is gone: fsck reports it, --repair removes it.
 */
struct leaving {
	struct sc_ihdr	h;
	const char	*name;	/* the entry's backing name, for messages */
	ino_t		ino;	/* backing inode; 0: none, or not a regular file */
	bool		last;	/* its last link, header verified: a tombstone */
	bool		rec;	/* a record is there (found, or made for the tag): removed after */
};

/* The header of the regular file o into *h (a read-only open below). */
static bool header_of(struct sc_xl *xl, struct sc_obj *o, struct sc_ihdr *h)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDONLY };
	uint8_t hdr[SC_IHDR_SIZE];
	bool ok;

	if (sc_xl_open(xl->below, o, &fh) < 0)
		return false;
	ok = sc_xl_read(xl->below, o, &fh, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) &&
	     sc_ihdr_verify(gpriv(xl)->ik, hdr, sizeof(hdr), h) == 0;
	sc_xl_release(xl->below, o, &fh);
	return ok;
}

/*
 * Removes a binding record that vouches for no file at its name, what a
 * link, unlink or rename cut short by a kill leaves (format.md 11.5), and
 * logs it (who: the name, where: how it was found).  Removing a record
 * never makes the mount accept more.
 */
static void record_drop(struct sc_xl *xl, struct sc_obj *dir, const struct sc_dirplace *dp,
			const char *who, const char *where)
{
	if (sc_brec_remove(xl->below, dir, dp) == 0)
		sc_log(SC_LOG_WARNING, "stackcrypt: gcm: warning: %s: removed a binding record "
		       "%s (left by a link, unlink or rename cut short)\n", who, where);
}

/*
 * A new entry at this thread's place p, name in dir (a create, mknod,
 * symlink, or a rename to a name that held nothing): a binding record
 * there is stale (a link, unlink or rename of a hard link's name cut short
 * by a kill, format.md 11.5) unless it vouches for the file now at name,
 * and a stale one would accept that hard-linked file put in place of the
 * new entry.  Removed, logged.  Costs nothing in a directory without
 * records; one lookup below in one with them.
 */
static void settle_record(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			  const struct sc_xl_place *p)
{
	struct sc_obj o = { .fd = -1, .type = S_IFREG };
	uint8_t rid[SC_GCM_FILE_ID_LEN];
	struct sc_dirplace dp;
	struct sc_ihdr h;
	bool keep = false;
	struct stat st;
	uint64_t rg;

	if (place_internal(p) || !dir_may_hold_records(xl, dir))
		return;
	dp = dplace(p);
	if (sc_brec_read(xl->below, gpriv(xl)->ik, dir, &dp, rid, &rg) == -ENOENT)
		return;
	if (sc_xl_lookup(xl->below, dir, name, &o.fd, &st) == 0) {
		keep = S_ISREG(st.st_mode) && header_of(xl, &o, &h) &&
		       sc_bindrec_vouches(&h, rid, rg);
		sc_xl_drop_fd(xl->below, o.fd);
	}
	if (!keep)
		record_drop(xl, dir, &dp, sc_obj_child_name(dir, name, 0), "left beside a new entry");
}

/* The entry name in dir below, looked up (*fd, *st): 0, or -ENOENT (none, or hidden). */
static int entry_find(struct sc_xl *xl, struct sc_obj *dir, const char *name, int *fd,
		      struct stat *st)
{
	*fd = -1;
	if (sc_data_is_hidden(xl, dir, name))
		return -ENOENT;
	return sc_xl_lookup(xl->below, dir, name, fd, st);
}

/*
 * The entry name in dir, found below as fd (its stat st; the caller drops
 * fd), is to go.  0, or -errno: the entry must stay (nothing that makes it
 * unreadable was done).
 */
static int leaving_begin(struct sc_xl *xl, struct sc_obj *dir, const char *name, int fd,
			 const struct stat *stp, const struct sc_xl_place *p, struct leaving *l)
{
	struct gcm_priv *gp = gpriv(xl);
	struct sc_obj o = { .fd = fd, .type = S_IFREG };
	uint8_t rid[SC_GCM_FILE_ID_LEN];
	struct sc_dirplace dp = { 0 };
	const struct stat st = *stp;
	bool hv = false;
	uint64_t rg;
	int ret = 0;

	memset(l, 0, sizeof(*l));
	l->name = name;
	if (!S_ISREG(st.st_mode))
		return 0;
	l->ino = st.st_ino;
	if (!place_internal(p)) {
		dp = dplace(p);
		/* any record there goes with the name, a damaged one too */
		l->rec = dir_may_hold_records(xl, dir) &&
			 sc_brec_read(xl->below, gp->ik, dir, &dp, rid, &rg) != -ENOENT;
	}
	if ((gp->fresh && st.st_nlink == 1) || st.st_nlink > 1)
		hv = header_of(xl, &o, &l->h);
	if (hv && st.st_nlink > 1 && !place_internal(p) && (l->h.flags & SC_IHDR_F_LINKED) &&
	    sc_ihdr_bound_at(gp->ik, &l->h, &dp) == 0) {
		ret = record_write(xl, dir, &dp, l->h.file_id, 0);
		l->rec = l->rec || ret == 0;
		if (ret == 0)
			ret = ihdr_rmw_named(xl, &o, NULL, edit_untag, &dp);
		/* the file stays vouched for by this inode's other names */
		if (ret == 0)
			sc_brec_seen_add(gp->seen, (uint64_t)st.st_ino, l->h.file_id);
	}
	l->last = hv && st.st_nlink == 1;
	return ret;
}

/* After the removal (done: it happened). */
static void leaving_end(struct sc_xl *xl, struct sc_obj *dir, const struct sc_xl_place *p,
			struct leaving *l, bool done)
{
	struct gcm_priv *gp = gpriv(xl);
	struct sc_dirplace dp;

	if (done && l->rec && !place_internal(p)) {
		dp = dplace(p);
		if (sc_brec_remove(xl->below, dir, &dp) < 0)
			sc_log(SC_LOG_WARNING, "stackcrypt: gcm: warning: %s: the binding record "
			       "of a removed name cannot be removed (fsck --repair removes it)\n",
			       sc_obj_child_name(dir, l->name, (unsigned long long)l->ino));
	}
	if (done && l->last && gp->fresh)
		sc_fresh_wrote(gp->fresh, SC_FRESH_GONE, l->h.file_id, l->h.gen);
}

/*
 * unlink on an integrity volume (this thread's place: the entry's): as
 * leaving_begin and leaving_end say: the removed file's id gets a
 * tombstone at its gen (format.md 11.9), recorded once durable, so that
 * its backing file put back is refused.  0 or the unlink's -errno.
 */
static int integ_unlink(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	const struct sc_xl_place *at = sc_xl_place_at();
	struct leaving l = { 0 };
	struct stat st;
	int fd, ret = 0;

	if (entry_find(xl, dir, name, &fd, &st) == 0) {
		ret = leaving_begin(xl, dir, name, fd, &st, at, &l);
		sc_xl_drop_fd(xl->below, fd);
	}
	if (ret == 0)
		ret = sc_data_op_unlink(xl, dir, name);
	leaving_end(xl, dir, at, &l, ret == 0);
	return ret;
}

/*
 * Whether the entry name in dir is the backing inode ino: from rf, when
 * rename_pin looked the name up already, else by a lookup of its own.
 */
static bool names_inode(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			const struct rename_file *rf, ino_t ino)
{
	struct stat st;
	bool same;
	int fd = -1;

	if (rf->ino)
		return rf->ino == ino;
	if (sc_xl_lookup(xl->below, dir, name, &fd, &st) < 0)
		return false;
	same = st.st_ino == ino;
	sc_xl_drop_fd(xl->below, fd);
	return same;
}

/*
 * The binding record at one place of a rename: the record of the file
 * that arrives there by its record (comer), made before the backing
 * rename; what was there kept, to be put back if the rename fails.  Its
 * old record, where a file that left by its record leaves none behind,
 * is removed after the rename (record_left).
 */
struct rec_swap {
	bool		made, had;
	uint8_t		id[SC_GCM_FILE_ID_LEN];
	uint64_t	g;
};

static int rec_arrive(struct sc_xl *xl, struct sc_obj *dir, const struct sc_xl_place *p,
		      const struct rename_file *comer, struct rec_swap *r)
{
	const struct sc_ikey *ik = gpriv(xl)->ik;
	struct sc_dirplace dp = dplace(p);
	int ret;

	if (!comer->recmove)
		return 0;	/* the common case: no lookup below */
	r->had = sc_brec_read(xl->below, ik, dir, &dp, r->id, &r->g) == 0;
	ret = record_write(xl, dir, &dp, comer->id, 0);
	r->made = ret == 0;
	return ret;
}

/* A failed rename: the place as it was. */
static void rec_restore(struct sc_xl *xl, struct sc_obj *dir, const struct sc_xl_place *p,
			const struct rec_swap *r)
{
	struct sc_dirplace dp = dplace(p);

	if (!r->made)
		return;
	if (r->had)
		record_write(xl, dir, &dp, r->id, r->g);
	else
		sc_brec_remove(xl->below, dir, &dp);
}

/*
 * A rename done: a place that a file left by its record, and that no file
 * reached by its record (RENAME_EXCHANGE), keeps no record (a place whose
 * file was replaced: leaving_end).
 */
static void record_left(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			const struct sc_xl_place *p, const struct rename_file *left,
			const struct rename_file *came)
{
	struct sc_dirplace dp = dplace(p);

	if (left->recmove && !came->recmove && sc_brec_remove(xl->below, dir, &dp) < 0)
		sc_log(SC_LOG_WARNING, "stackcrypt: gcm: warning: %s: the binding record of a "
		       "renamed name cannot be removed (fsck --repair removes it)\n",
		       sc_obj_child_name(dir, name, (unsigned long long)left->ino));
}

/*
 * rename on an integrity volume (format.md 11.5, 11.6): each regular file
 * it moves gets a dirty table entry (rename_pin); the entry it replaces
 * gets ready to go (leaving_begin); a file moved by its binding record
 * gets one where it arrives; the backing rename; then each file moved by
 * its tag is rebound to the place it reached and its entry ended, and
 * records left where nothing of theirs is are removed (the names layer set
 * both places: at the source, to the destination; RENAME_EXCHANGE moves
 * two files).  Every name reads after a kill at any step but two: a file
 * replaced at a name it held by a record, and files exchanged both by
 * records, read EIO between the new record and the rename (fsck names
 * them).  0 or the rename's -errno (records put back); a failed rebind is
 * logged.
 */
static int integ_rename(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			struct sc_obj *newdir, const char *newname, unsigned int flags)
{
	const struct sc_xl_place *from = sc_xl_place_at(), *to = sc_xl_place_to();
	struct rename_file moved = { .o.fd = -1, .fh.fd = -1 };
	struct rename_file swapped = { .o.fd = -1, .fh.fd = -1 };
	struct rec_swap rs[2] = { { 0 } };
	struct leaving z = { 0 };
	bool entries = !place_internal(from) && !place_internal(to), same = false;
	struct stat zst;
	ino_t zino = 0;
	int zfd = -1, ret = 0;

	if (entries) {
		rename_pin(xl, dir, name, from, to, &moved);
		if (flags & RENAME_EXCHANGE)
			rename_pin(xl, newdir, newname, to, from, &swapped);
	}
	/*
	 * The entry renamed over goes as an unlink's does, unless it is the
	 * file moved: a rename between two names of one inode does nothing
	 * (POSIX), so neither its records nor its tag change.
	 */
	if (!(flags & (RENAME_EXCHANGE | RENAME_NOREPLACE)) &&
	    entry_find(xl, newdir, newname, &zfd, &zst) == 0)
		zino = zst.st_ino;
	same = zino && names_inode(xl, dir, name, &moved, zino);
	if (zino && !same)
		ret = leaving_begin(xl, newdir, newname, zfd, &zst, entries ? to : NULL, &z);
	if (zfd >= 0)
		sc_xl_drop_fd(xl->below, zfd);
	if (ret == 0 && entries && !same)
		ret = rec_arrive(xl, newdir, to, &moved, &rs[1]);
	if (ret == 0 && entries && !same)
		ret = rec_arrive(xl, dir, from, &swapped, &rs[0]);
	if (ret == 0)
		ret = sc_data_op_rename(xl, dir, name, newdir, newname, flags);
	if (ret < 0) {
		rec_restore(xl, newdir, to, &rs[1]);
		rec_restore(xl, dir, from, &rs[0]);
	}
	z.rec = z.rec && !moved.recmove;	/* the record at the destination is the mover's now */
	leaving_end(xl, newdir, to, &z, ret == 0);
	if (ret == 0 && entries && !same) {
		record_left(xl, dir, name, from, &moved, &swapped);
		record_left(xl, newdir, newname, to, &swapped, &moved);
	}
	/* a name that held nothing (mkdir's rename of its new directory into place too) */
	if (ret == 0 && !zino && !same && !moved.recmove && !(flags & RENAME_EXCHANGE))
		settle_record(xl, newdir, newname, to);
	rename_done(xl, &moved, ret == 0 && !same, newdir, newname, from, to);
	rename_done(xl, &swapped, ret == 0, dir, name, to, from);
	return ret;
}

/* ---- the journal ------------------------------------------------------------ */

static ssize_t bf_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct bfile *b = ctx;

	return sc_xl_read(b->xl->below, b->obj, b->fh, buf, len, (off_t)off);
}

static int bf_pwrite(void *ctx, const void *buf, size_t len, uint64_t off)
{
	struct bfile *b = ctx;

	return sc_data_write_exact(b->xl, b->obj, b->fh, buf, len, off);
}

static int bf_truncate(void *ctx, uint64_t size)
{
	struct bfile *b = ctx;
	struct stat st, attr = { .st_size = (off_t)size };

	return sc_xl_setattr(b->xl->below, b->obj, b->fh, &attr, SC_SET_SIZE, &st);
}

static int bf_sync(void *ctx)
{
	struct bfile *b = ctx;

	return sc_xl_fsync(b->xl->below, b->obj, b->fh, 1);
}

static int bf_size(void *ctx, uint64_t *size)
{
	struct bfile *b = ctx;
	struct stat st;
	int ret = sc_xl_getattr(b->xl->below, b->obj, b->fh, &st);

	*size = (uint64_t)st.st_size;
	return ret;
}

static struct sc_jio bf_io(struct bfile *b)
{
	return (struct sc_jio){ .ctx = b, .pread = bf_pread, .pwrite = bf_pwrite,
				.truncate = bf_truncate, .sync = bf_sync, .size = bf_size };
}

static void log_fix(void *ctx, const struct sc_jfix *f)
{
	struct bfile *b = ctx;

	/* a warning, not an error: the journal did its job, but a restore is worth seeing */
	sc_log(SC_LOG_WARNING, "stackcrypt: gcm: warning: %s: unit %llu was torn "
		 "by a crash; %s from the journal\n", b->looked_up ?
		 sc_obj_lookup_name(b->xl->below, b->obj) : sc_obj_name(b->xl->below, b->obj),
		 (unsigned long long)f->unit, f->cut ? "cut back to its start" :
		 "its new content restored");
}

/*
 * Before obj's state is first set up: if pinned journal records name the
 * file of header hdr, resolve them (journal.c: a torn unit gets its new
 * content, a torn append is cut back), through a read-write handle of its
 * own.  A failure is logged; the torn unit then reads as EIO, as it would
 * without a journal.
 */
static void jrnl_resolve(struct sc_xl *xl, struct sc_obj *obj, const uint8_t *hdr,
			 bool looked_up)
{
	struct sc_fh rw = { .fd = -1, .flags = O_RDWR };
	struct bfile b = { .xl = xl, .obj = obj, .fh = &rw, .looked_up = looked_up };
	struct sc_jio io = bf_io(&b);
	struct sc_gkey *gk;
	struct sc_ihdr ih;
	int ret;

	if (!sc_jrnl_has(gpriv(xl)->jr, hdr + 8))	/* the file id (docs/format.md 10.2, 11.3) */
		return;
	if ((gpriv(xl)->ik ? sc_gkey_new_v2(gpriv(xl)->ik, hdr, SC_IHDR_SIZE, &ih, &gk) :
	     sc_gkey_new(gpriv(xl)->d.mk, hdr, SC_GHDR_SIZE, &gk)) < 0)
		return;	/* gfile_new says why */
	/* No write access (a read-only file): the records wait for fsck --repair. */
	if (sc_xl_open(xl->below, obj, &rw) == 0) {
		ret = sc_jrnl_resolve(gpriv(xl)->jr, gk, &io, true, log_fix, &b);
		sc_xl_release(xl->below, obj, &rw);
		if (ret < 0)
			sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: cannot apply "
				 "the journal's crash records (%s); a torn unit reads as EIO\n",
				 looked_up ? sc_obj_lookup_name(xl->below, obj) :
				 sc_obj_name(xl->below, obj), strerror(-ret));
	}
	sc_gkey_free(gk);
}

/*
 * The journal as found was last written by run (format.md 11.9): one of
 * this client's earlier runs means the volume was put back from an older
 * copy, refused (-ESTALE, logged) before this run writes anything, or
 * accepted under --allow-rollback (logged).
 */
static int fresh_gate(void *ctx, const uint8_t run[16])
{
	int r = sc_fresh_run_check(ctx, run);

	if (r == 1)
		sc_log(SC_LOG_WARNING, "stackcrypt: gcm: warning: the volume is older than this "
		       "client last saw it (its crash journal is of an earlier run of this "
		       "client); accepted (--allow-rollback)\n");
	else if (r < 0)
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: the volume is older than this client last "
		       "saw it: its crash journal was last written by an earlier run of this "
		       "client, not its last (put back from an older copy?); mount "
		       "--allow-rollback accepts it\n");
	return r < 0 ? r : 0;
}

/*
 * Opens (or creates) the journal in the backing root through the layer
 * below, at mount.  A backing that cannot hold it (read-only) runs without
 * one: nothing is written there, and a unit torn by an earlier crash
 * reads as EIO until a read-write mount or fsck --repair resolves it.
 * With a freshness record, the run the journal names is checked first
 * (fresh_gate), then this run recorded: 0, or -ESTALE (the mount is
 * refused).
 */
static int jrnl_setup(struct sc_xl *xl, struct sc_obj *root)
{
	struct gcm_priv *gp = gpriv(xl);
	struct sc_jio io;
	struct stat st;
	int fd = -1, ret;

	gp->jfh = (struct sc_fh){ .fd = -1, .flags = O_RDWR };
	gp->jobj = (struct sc_obj){ .fd = -1, .type = S_IFREG };
	ret = sc_xl_lookup(xl->below, root, SC_JRNL_NAME, &fd, &st);
	if (ret == 0 && !S_ISREG(st.st_mode)) {
		sc_xl_drop_fd(xl->below, fd);
		sc_log(SC_LOG_WARNING, "stackcrypt: gcm: %s in the backing root is not a "
			 "regular file; running without the crash journal\n", SC_JRNL_NAME);
		return 0;
	}
	if (ret == -ENOENT) {
		gp->jfh.flags = O_RDWR | O_CREAT | O_EXCL;
		ret = sc_xl_create(xl->below, root, SC_JRNL_NAME, 0600, &gp->jfh, &fd, &st);
		gp->jfh.flags = O_RDWR;
	} else if (ret == 0) {
		gp->jobj.fd = fd;
		ret = sc_xl_open(xl->below, &gp->jobj, &gp->jfh);
		if (ret < 0)
			sc_xl_drop_fd(xl->below, fd);
	}
	if (ret < 0) {
		if (ret != -EROFS && ret != -EACCES && ret != -EPERM)
			sc_log(SC_LOG_WARNING, "stackcrypt: gcm: cannot open %s (%s); running "
				 "without the crash journal\n", SC_JRNL_NAME, strerror(-ret));
		return 0;
	}
	gp->jobj.fd = fd;
	gp->jbf = (struct bfile){ .xl = xl, .obj = &gp->jobj, .fh = &gp->jfh };
	io = bf_io(&gp->jbf);
	ret = sc_jrnl_open_gated(gp->d.mk, gp->ik, (uint32_t)gp->d.bs, &io, SC_JRNL_MOUNT,
				 gp->fresh ? fresh_gate : NULL, gp->fresh, &gp->jr);
	if (ret == -ESTALE) {
		sc_xl_release(xl->below, &gp->jobj, &gp->jfh);
		sc_xl_drop_fd(xl->below, fd);
		gp->jr = NULL;
		return ret;
	}
	if (ret < 0) {
		/* not ours (a file of that name from before), or damaged: left alone, shown */
		sc_log(SC_LOG_WARNING, "stackcrypt: gcm: %s in the backing root %s; running "
			 "without the crash journal (fsck checks it as a file)\n", SC_JRNL_NAME,
			 ret == -EUCLEAN ? "is not a crash journal of this volume" :
			 ret == -EBADMSG ? "fails its MAC (put back, edited, or another "
			 "volume's): none of its records is used" :
			 ret == -EPROTO ? "holds crash records of an older build, which "
			 "only fsck --repair applies" : strerror(-ret));
		sc_xl_release(xl->below, &gp->jobj, &gp->jfh);
		sc_xl_drop_fd(xl->below, fd);
		gp->jr = NULL;
		return 0;
	}
	/*
	 * Records as copies into a mapping of the journal where the layer
	 * below offers one (posix): no system call and no inode lock per
	 * in-place write (docs/benchmarks.md, "The journal's cost,
	 * attributed").  Where it does not (gluster), or it fails, records
	 * stay pwrites: the same bytes in the same page cache either way.
	 */
	ret = sc_xl_map(xl->below, &gp->jobj, &gp->jfh, sc_jrnl_size(gp->jr));
	if (ret < 0 && ret != -EOPNOTSUPP)
		sc_log(SC_LOG_DEBUG, "stackcrypt: gcm: %s not mapped (%s); records are "
			 "written\n", SC_JRNL_NAME, strerror(-ret));
	gp->d.hidden.also = SC_JRNL_NAME;	/* ours: hidden from the mount as the config is */
	if (gp->fresh) {
		uint8_t run[16];

		sc_jrnl_run(gp->jr, run);
		ret = sc_fresh_run_begin(gp->fresh, run);
		if (ret < 0)	/* the record lags: safe */
			sc_log(SC_LOG_WARNING, "stackcrypt: gcm: warning: cannot append to the "
			       "freshness record (%s); this run's state is recorded at unmount\n",
			       strerror(-ret));
	}
	return 0;
}

/* init: the journal, whose name the mount then hides as it hides the config. */
static int gcm_init(struct sc_xl *xl, struct sc_obj *root, struct sc_xl_conf *conf)
{
	(void)conf;
	return jrnl_setup(xl, root);
}

/* destroy (unmount, every request done): the journal is marked clean, unless "killed". */
static void gcm_destroy(struct sc_xl *xl)
{
	struct gcm_priv *gp = gpriv(xl);

	if (gp) {
		pthread_mutex_destroy(&gp->hdr_lock);
		pthread_mutex_destroy(&gp->rec_lock);
		sc_brec_seen_free(gp->seen);
	}
	if (gp && gp->jr) {
		sc_jrnl_close(gp->jr, !gp->torn && !sc_gcm_test_crashed);
		sc_xl_release(xl->below, &gp->jobj, &gp->jfh);
		sc_xl_drop_fd(xl->below, gp->jobj.fd);
	}
	sc_data_op_destroy(xl);
}

/* The first n <= SC_IHDR_SIZE bytes of obj, through fh or a read-only open of its own. */
static ssize_t read_head(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, uint8_t *hdr,
			 size_t n)
{
	struct sc_fh tmp = { .fd = -1, .flags = O_RDONLY };
	ssize_t got = -EBADF;
	int ret;

	if (fh && (fh->flags & O_ACCMODE) != O_WRONLY)
		got = sc_xl_read(xl->below, obj, fh, hdr, n, 0);
	if (got == -EBADF) {	/* a write-only handle */
		ret = sc_xl_open(xl->below, obj, &tmp);
		if (ret < 0)
			return ret;
		got = sc_xl_read(xl->below, obj, &tmp, hdr, n, 0);
		sc_xl_release(xl->below, obj, &tmp);
	}
	return got;
}

/* The reconcile's edit: the size found, the next gen (format.md 11.8). */
struct reconcile_arg {
	uint8_t		id[SC_GCM_FILE_ID_LEN];
	uint64_t	gen, size;	/* the header's gen as verified */
	uint8_t		root[SC_INTEG_TAG_LEN];	/* tree volumes: the root of the tags found */
};

static int edit_reconcile(struct sc_xl *xl, struct sc_ihdr *h, void *arg)
{
	struct reconcile_arg *a = arg;

	(void)xl;
	if (memcmp(h->file_id, a->id, SC_GCM_FILE_ID_LEN) != 0 || h->gen != a->gen)
		return -ESTALE;	/* changed since it was checked: not this reconcile's to store */
	h->size = a->size;
	h->gen++;
	if (h->flags & SC_IHDR_F_TREE)
		memcpy(h->root, a->root, sizeof(h->root));
	return 0;
}

/*
 * Whether every unit of the file gk opens, stored bytes long, opens: 0, or
 * -EIO with *bad the first that does not (its tag, or all zeros where no
 * hole may be), or -errno.  Read through fh in runs of 64 units.
 */
static int units_open(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      struct sc_gkey *gk, uint64_t stored, uint64_t *bad)
{
	const uint64_t per = 64;
	size_t cap = (size_t)(per * sbs(xl));
	uint8_t *ct = malloc(cap), *pt = malloc(cap);
	uint64_t u = 0, off = hl(xl);
	int ret = ct && pt ? 0 : -ENOMEM;

	for (; ret == 0 && off < stored; u += per, off += cap) {
		size_t len = (size_t)min_u64(stored - off, cap);

		ret = sc_data_read_exact(xl, obj, fh, ct, len, off);
		if (ret == 0)
			ret = sc_gcm_open(gk, u, ct, len, pt, bad);
		if (ret == -EBADMSG || ret == -EUCLEAN)
			ret = -EIO;
	}
	if (pt)
		sc_wipe(pt, cap);	/* plaintext */
	free(pt);
	free(ct);
	return ret;
}

/*
 * The root of the units of the file h heads as found (size plaintext
 * bytes, stored long): a reconcile accepts them as the tree's.  0, -EIO
 * (it ends inside a unit's overhead), or -errno.
 */
static int reconcile_root(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  const struct sc_ihdr *h, uint64_t size, uint64_t stored,
			  uint8_t root[SC_INTEG_TAG_LEN])
{
	struct sc_utree *t;
	int ret = sc_utree_new(&t);

	if (ret == 0)
		ret = sc_utree_resize(t, sc_data_nunits(gpriv(xl)->d.bs, size));
	if (ret == 0)
		ret = leaves_read(xl, obj, fh, stored, t);
	if (ret == 0)
		ret = sc_utree_root(t, gpriv(xl)->ik, h->file_id, root);
	sc_utree_free(t);
	return ret;
}

/*
 * A file the last run was writing when it stopped (a pinned entry of the
 * dirty table, format.md 11.8), first opened since: reconciled -- its size
 * taken from its backing size, each unit authenticated, the header
 * committed with that size, the entry zeroed, one warning logged.  Bound
 * elsewhere, or found at the wrong kind of place (a file of the layers at
 * an entry, or the reverse): left alone (integ_check says why).  0
 * (reconciled, nothing to do, or left to integ_check; the caller reads
 * the header again), or -EIO (a unit fails, or the file ends inside
 * a unit's overhead: logged, the entry kept for fsck), or -errno.
 */
static int integ_reconcile(struct sc_xl *xl, struct sc_obj *obj)
{
	struct gcm_priv *gp = gpriv(xl);
	const struct sc_xl_place *at = sc_xl_place_at();
	struct sc_fh rw = { .fd = -1, .flags = O_RDWR };
	struct reconcile_arg a;
	uint8_t hdr[SC_IHDR_SIZE];
	struct sc_gkey *gk = NULL;
	struct sc_dirplace dp;
	struct sc_ihdr h;
	struct stat st;
	uint64_t bad = 0;
	char why[160] = "";
	ssize_t n;
	int idx, ret = 0;

	pthread_mutex_lock(&gp->rec_lock);
	/* no write access: the entry waits for fsck --repair, the open is refused */
	if (sc_xl_open(xl->below, obj, &rw) < 0)
		goto out_unlock;
	n = sc_xl_read(xl->below, obj, &rw, hdr, sizeof(hdr), 0);
	if (n != (ssize_t)sizeof(hdr) || sc_gkey_new_v2(gp->ik, hdr, sizeof(hdr), &h, &gk) < 0)
		goto out_release;	/* gfile_new says why */
	idx = sc_jrnl_dirty_find(gp->jr, h.file_id, h.gen);
	if (idx < 0 || !(h.flags & SC_IHDR_F_INTERNAL) != !place_internal(at))
		goto out_free;	/* reconciled meanwhile, or at the wrong kind of place */
	/*
	 * A file of the layers is bound to no entry: its entry vouches for its
	 * id at its gen, as for any file.  On a unit tree volume a listing
	 * record held open is one (format.md 11.7: each change's write moves
	 * its root, stored at its settle), so every kill leaves some.
	 */
	if (!(h.flags & SC_IHDR_F_INTERNAL)) {
		dp = dplace(at);
		if (bound_here(xl, obj, &h, &dp) < 0)
			goto out_free;	/* never accept a file bound elsewhere */
	}
	ret = sc_xl_getattr(xl->below, obj, &rw, &st);
	if (ret < 0)
		goto out_free;
	memcpy(a.id, h.file_id, sizeof(a.id));
	a.gen = h.gen;
	ret = sc_gcm_plain_size_h(hl(xl), (uint32_t)gp->d.bs, (uint64_t)st.st_size, &a.size);
	if (ret == 0 && (h.flags & SC_IHDR_F_TREE)) {
		/* the tree as found: a zero unit is a hole (its leaf zero) */
		sc_gkey_allow_holes(gk);
		ret = reconcile_root(xl, obj, &rw, &h, a.size, (uint64_t)st.st_size, a.root);
		if (ret < 0 && ret != -EIO)
			goto out_free;
	}
	/* not a check (either way the units are accepted): no constant time needed */
	if (ret == 0 && a.size == h.size &&
	    (!(h.flags & SC_IHDR_F_TREE) || memcmp(a.root, h.root, sizeof(a.root)) == 0)) {
		/* committed, and killed before the entry was zeroed: nothing to accept */
		sc_jrnl_dirty_end(gp->jr, idx);
		goto out_free;
	}
	if (ret < 0)
		snprintf(why, sizeof(why), "it ends inside a unit's nonce or tag");
	else if ((ret = units_open(xl, obj, &rw, gk, (uint64_t)st.st_size, &bad)) == -EIO)
		snprintf(why, sizeof(why), "unit %llu fails authentication",
			 (unsigned long long)bad);
	else if (ret < 0)
		goto out_free;
	if (why[0]) {
		if (first_report(gp, sc_data_backing_ino(xl, obj)))
			sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: was being written when the mount "
				 "stopped, but %s; returning EIO (fsck names it)\n",
				 sc_obj_name(xl->below, obj), why);
		ret = -EIO;
		goto out_free;
	}
	ret = ihdr_rmw(xl, obj, &rw, edit_reconcile, &a, false, NULL);
	if (ret == 0)
		sc_jrnl_dirty_end(gp->jr, idx);
	/* a file of the layers has no path here: say what it is (a listing record, 11.7) */
	if (ret == 0)
		sc_log(SC_LOG_WARNING, "stackcrypt: gcm: warning: %s%s: was being written when "
			 "the mount stopped; accepted as found (%llu bytes, its header said %llu%s), "
			 "units authenticated one by one\n", sc_obj_name(xl->below, obj),
			 (h.flags & SC_IHDR_F_INTERNAL) ? " (a file of the layers: a directory's "
			 "listing record, nonce or side file)" : "",
			 (unsigned long long)a.size, (unsigned long long)h.size,
			 (h.flags & SC_IHDR_F_TREE) ? "; the root of its units' tags as found" : "");
	else
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: was being written when the mount "
			 "stopped, and its header cannot be committed (%s)\n",
			 sc_obj_name(xl->below, obj), strerror(-ret));
out_free:
	sc_gkey_free(gk);
out_release:
	sc_xl_release(xl->below, obj, &rw);
out_unlock:
	pthread_mutex_unlock(&gp->rec_lock);
	return ret == -EIO ? -EIO : 0;
}

/*
 * Reads and verifies the header of the backing file obj, through fh (or a
 * read-only open of its own when fh is NULL or cannot read), and returns a
 * new gfile for it.  A 0-byte file gets a header in memory, stored with
 * its first data (version 1; a version 2 file without its header is cut).
 * On integrity volumes the header must be bound at this thread's place
 * and give the backing size (integ_check).  Returns 0 or -errno (-EIO:
 * not a file of this format, or refused; logged).
 */
static int gfile_fetch(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile **out)
{
	uint8_t hdr[SC_IHDR_SIZE];
	uint64_t plain;
	struct stat st;
	/*
	 * Looked at before the stat: a thread that finds no pinned record here
	 * stats after any other thread's repair of this file was done (the
	 * records are dropped only after it), so its size is not stale.
	 */
	bool pins = gpriv(xl)->jr && sc_jrnl_pinned(gpriv(xl)->jr) > 0, cut;
	ssize_t n;
	int ret;

	*out = NULL;
	ret = gpriv(xl)->ik ? create_resolve(xl, obj, fh) : 0;
	if (ret == 0)
		ret = sc_xl_getattr(xl->below, obj, fh, &st);
	if (ret < 0)
		return ret;
	if (st.st_size == 0 && !gpriv(xl)->ik)
		return gfile_fresh(xl, obj, out);
	n = st.st_size == 0 ? 0 : read_head(xl, obj, fh, hdr, hl(xl));
	if (n < 0)
		return (int)n;
	/* integrity volumes log a refused file once (first_report), as integ_check */
	if ((uint64_t)st.st_size < hl(xl) &&
	    (!gpriv(xl)->ik || first_report(gpriv(xl), sc_data_backing_ino(xl, obj))))
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: file header cut to "
			 "%lld of %u bytes%s; returning EIO\n", sc_obj_name(xl->below, obj),
			 (long long)st.st_size, hl(xl), gpriv(xl)->ik ? " (the file cut to "
			 "nothing behind the mount, or a create cut short by a power loss)" : "");
	if ((uint64_t)st.st_size < hl(xl))
		return -EIO;
	if (gpriv(xl)->ik && (size_t)n == hl(xl)) {
		ret = rename_resolve(xl, obj, fh, hdr);
		if (ret < 0)
			return ret;
	}
	/* A crash may have torn a unit of this file: repaired before anything reads it. */
	if (pins && (size_t)n == hl(xl)) {
		jrnl_resolve(xl, obj, hdr, false);
		ret = sc_xl_getattr(xl->below, obj, fh, &st);
		if (ret < 0)
			return ret;
	}
	/* A file being written when the last run stopped: reconciled, then read again. */
	if (gpriv(xl)->ik && (size_t)n == hl(xl) &&
	    sc_jrnl_dirty_find(gpriv(xl)->jr, hdr + 8, hdr_gen(hdr)) >= 0) {
		ret = integ_reconcile(xl, obj);
		if (ret == 0)
			n = read_head(xl, obj, fh, hdr, hl(xl));
		if (ret == 0 && n >= 0)
			ret = sc_xl_getattr(xl->below, obj, fh, &st);
		if (ret < 0 || n < 0)
			return ret < 0 ? ret : (int)n;
		if ((size_t)n != hl(xl))
			return -EIO;
	}
	plain = plain_of(xl, (uint64_t)st.st_size, &cut);
	ret = gfile_new(xl, obj, hdr, (size_t)n, plain, true, out);
	if (ret == 0 && gpriv(xl)->ik)
		ret = integ_check(xl, obj, *out, (uint64_t)st.st_size);
	if (ret == 0 && gpriv(xl)->fresh)
		ret = fresh_check(xl, obj, *out);
	/* Cut inside a nonce or tag: reading that unit is EIO, logged then (unit_failed). */
	if (ret == 0 && cut && (uint64_t)st.st_size > hl(xl))
		(*out)->d.cut_unit = plain / gpriv(xl)->d.bs;
	/* The header alone (emptied, perhaps by a build that kept the file id): a new id. */
	if (ret == 0 && !gpriv(xl)->ik && (uint64_t)st.st_size == SC_GHDR_SIZE)
		ret = renew_header(xl, *out);
	if (ret < 0 && *out) {
		gfile_free(*out);
		*out = NULL;
	}
	return ret;
}

/* ---- the data path ---------------------------------------------------------- */

/*
 * Whether ino's failure is news: not among the last 64 files logged, and
 * now it is.  Two states of one inode failing at the same instant may
 * both log; nothing worse.
 */
static bool first_report(struct gcm_priv *gp, unsigned long long ino)
{
	const size_t n = sizeof(gp->logged) / sizeof(gp->logged[0]);
	uint64_t key = (uint64_t)ino + 1;

	for (size_t i = 0; i < n; i++)
		if (__atomic_load_n(&gp->logged[i], __ATOMIC_RELAXED) == key)
			return false;
	__atomic_store_n(&gp->logged[__atomic_fetch_add(&gp->logged_next, 1, __ATOMIC_RELAXED) % n],
			 key, __ATOMIC_RELAXED);
	return true;
}

/*
 * A unit failed its tag, or (zeroed) is all zeros in a file that never had
 * a hole: -EIO to the reader, logged once per file.
 */
static int unit_failed(struct sc_xl *xl, struct sc_obj *obj, struct gfile *gf, uint64_t unit,
		       bool zeroed)
{
	unsigned long long ino;

	if (__atomic_exchange_n(&gf->bad_logged, 1, __ATOMIC_RELAXED))
		return -EIO;
	ino = sc_data_backing_ino(xl, obj);
	if (first_report(gpriv(xl), ino))
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: unit %llu %s; "
			 "returning EIO\n", sc_obj_name(xl->below, obj), (unsigned long long)unit, zeroed ?
			 "is all zeros in a file that never had a hole (zeroed behind the mount)" :
			 "fails authentication (tampered, moved or cut)");
	return -EIO;
}

/* Opens in_len stored bytes from unit first into out: 0, -EIO (tag or zeros, logged), -errno. */
static int open_units(struct sc_xl *xl, struct sc_obj *obj, struct gfile *gf, uint64_t first,
		      const uint8_t *in, size_t in_len, uint8_t *out)
{
	uint64_t bad = first;
	int ret = sc_gcm_open(gf->gk, first, in, in_len, out, &bad);

	if (ret == -EBADMSG || ret == -EUCLEAN)
		return unit_failed(xl, obj, gf, bad, ret == -EUCLEAN);
	if (ret < 0)
		return sc_data_crypto_err(xl, ret, "open", first, in_len, sc_data_size(&gf->d));
	return 0;
}

/*
 * Plaintext [off, end) of a file of size sz (end <= sz) into dst, which
 * has room for cap >= end - off bytes: one read below, one open.  When the
 * covered units start at off and fit in dst, they are opened straight into
 * it (the common aligned read); otherwise through a scratch buffer.
 */
static int gcm_load(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct sc_dfile *df,
		    uint64_t sz, uint64_t off, uint64_t end, uint8_t *dst, size_t cap)
{
	struct gfile *gf = gfile_of(df);
	uint64_t bs = gpriv(xl)->d.bs, first, soff, slen, a, plen;
	uint8_t *ct, *pt;
	int ret;

	if ((end - 1) / bs >= gf_cut(gf))	/* a unit the file ends inside the nonce or tag of */
		return unit_failed(xl, obj, gf, gf_cut(gf), false);
	ret = tree_load(xl, obj, fh, gf);
	if (ret < 0)
		return ret;
	sc_gcm_stored_span_h(hl(xl), (uint32_t)bs, sz, off, end - off, &first, &soff, &slen);
	a = first * bs;
	plen = min_u64(sc_data_nunits(bs, end) * bs, sz) - a;
	ct = sc_data_tbuf_scr(slen);
	pt = a == off && plen <= cap ? dst : sc_data_tbuf_out(plen);
	if (!ct || !pt)
		return -ENOMEM;
	ret = sc_data_read_exact(xl, obj, fh, ct, slen, soff);
	if (ret == 0)
		ret = open_units(xl, obj, gf, first, ct, slen, pt);
	if (ret == 0 && pt != dst)
		memcpy(dst, pt + (off - a), end - off);
	return ret;
}

/*
 * The stored bytes of the partial last unit of a file about to grow, kept
 * so that a growth that fails part way (ENOSPC) can put them back: the
 * growth re-seals that unit as a whole one, and a write cut short may
 * leave it half written.
 */
struct old_tail {
	uint64_t	u;
	size_t		len;	/* 0: none (the file ends on a unit boundary) */
	const uint8_t	*st;	/* this thread's scratch buffer */
};
_Static_assert(sizeof(struct old_tail) <= SC_DATA_CHANGE_SCRATCH, "old_tail fits");

/* A change's scratch (struct sc_dchange.fmt): the saved tail of a growth, else len 0. */
static struct old_tail *tailc(struct sc_dchange *ch)
{
	return (struct old_tail *)ch->fmt;
}

/* Fills *t for a file of plaintext size sz.  0 or -errno.  Under the write lock. */
static int save_tail(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, uint64_t sz,
		     struct old_tail *t)
{
	uint64_t bs = gpriv(xl)->d.bs;
	uint8_t *buf;
	int ret;

	t->len = 0;
	if (sz % bs == 0)
		return 0;
	t->u = sz / bs;
	buf = sc_data_tbuf_scr(sz % bs + SC_GCM_OVERHEAD);
	if (!buf)
		return -ENOMEM;
	ret = sc_data_read_exact(xl, obj, fh, buf, sz % bs + SC_GCM_OVERHEAD, uoff(xl, t->u));
	if (ret < 0)
		return ret;
	t->st = buf;
	t->len = sz % bs + SC_GCM_OVERHEAD;
	return 0;
}

/*
 * The plaintext of unit u for a change from old_sz (the file's size as
 * stored) with the write [wo, we) from src (NULL: zeros), [x, y) in
 * plaintext, built at su + 16 where su has room for the stored unit: the
 * old plaintext unless the write covers it (read into su and opened in
 * place; from *t when it holds that unit), zeros past old_sz, then the
 * write's bytes.
 */
static int build_unit(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile *gf,
		      uint64_t old_sz, const struct old_tail *t, uint64_t u, uint64_t x,
		      uint64_t y, uint8_t *su, const uint8_t *src, uint64_t wo, uint64_t we)
{
	uint64_t old_end = min_u64(y, old_sz);
	uint8_t *pt = su + SC_GCM_NONCE_LEN;
	int ret;

	if (x < old_end && !(wo <= x && we >= old_end)) {
		size_t slen = min_u64(x + gpriv(xl)->d.bs, old_sz) - x + SC_GCM_OVERHEAD;

		if (t && t->len == slen && t->u == u) {
			memcpy(su, t->st, slen);
			ret = 0;
		} else {
			ret = sc_data_read_exact(xl, obj, fh, su, slen, uoff(xl, u));
		}
		if (ret == 0)
			ret = open_units(xl, obj, gf, u, su, slen, pt);
		if (ret < 0)
			return ret;
	}
	sc_data_overlay(pt, x, y, old_sz, src, wo, we);
	return 0;
}

/* Stores the header before any unit (a file of the header alone is empty).  Under lock. */
static int hdr_settle(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile *gf)
{
	int ret;

	if (gf->hdr_stored)
		return 0;
	ret = sc_data_write_exact(xl, obj, fh, gf->hdr, SC_GHDR_SIZE, 0);
	if (ret == 0)
		gf->hdr_stored = true;
	return ret;
}

/*
 * Before a change that leaves a hole (a whole stored unit of zeros) in a
 * file that tracks holes: the header gets "may hold holes" (docs/format.md
 * 10.2), so the hole reads as zeros and fsck accepts it.  A stored header
 * is rewritten (40 bytes at 0, inside one page and one sector) and synced
 * before the change is stored: whatever a crash or power loss keeps of the
 * change, the file never rejects its own hole.  A header not stored yet
 * (a new or emptied file) just changes in memory: it is stored before or
 * with the first unit, as always.  Once per file id.  Under the write lock.
 */
static int mark_holes(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile *gf)
{
	uint8_t hdr[SC_IHDR_SIZE];
	int ret;

	if (sc_gkey_holes_ok(gf->gk) || tree_on(xl))
		return 0;	/* the flag is set, an old file, or the tree tells holes (11.10) */
	if (gpriv(xl)->ik) {
		ret = ihdr_rmw(xl, obj, fh, edit_holes, NULL, true, hdr);
		if (ret == 0) {
			memcpy(gf->hdr, hdr, SC_IHDR_SIZE);
			sc_gkey_allow_holes(gf->gk);
		}
		return ret;
	}
	memcpy(hdr, gf->hdr, SC_GHDR_SIZE);
	ret = sc_ghdr_mark_holes(gpriv(xl)->d.mk, hdr);
	if (ret < 0)
		return ret;
	if (gf->hdr_stored) {
		ret = sc_data_write_exact(xl, obj, fh, hdr, SC_GHDR_SIZE, 0);
		if (ret == 0)
			ret = sc_xl_fsync(xl->below, obj, fh, 1);
		if (ret < 0)
			return ret;
	}
	memcpy(gf->hdr, hdr, SC_GHDR_SIZE);
	sc_gkey_allow_holes(gf->gk);
	return 0;
}

/*
 * Whether change ch leaves a whole unit past the old end unwritten (a
 * hole): a write that starts past the unit after the old last one, or a
 * resize whose new whole units start past it (the new partial last unit
 * is sealed, docs/format.md 10.3).
 */
static bool makes_hole(uint64_t bs, const struct sc_dchange *ch)
{
	uint64_t first_new = sc_data_nunits(bs, ch->old_sz);

	if (ch->new_sz <= ch->old_sz)
		return false;
	return ch->resize ? ch->new_sz / bs > first_new : ch->wo / bs > first_new;
}

/* The backing write of len bytes at off, through the test hook (see gcm_xl.h). */
static int store_in_place(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			  const uint8_t *buf, size_t len, uint64_t off)
{
	size_t keep = sc_gcm_test_tear ? sc_gcm_test_tear(off, len) : len;

	if (gpriv(xl)->torn)
		return -EIO;
	if (keep < len) {
		gpriv(xl)->torn = true;
		if (keep > 0)
			sc_data_write_exact(xl, obj, fh, buf, keep, off);
		return -EIO;
	}
	return sc_data_write_exact(xl, obj, fh, buf, len, off);
}

/*
 * Stores the sealed units [ua, ub) at o (slen bytes; with_hdr: the header
 * goes in the same write, ua == 0) of a file whose stored size was
 * old_st.  Each write in place is announced first by a journal record
 * (journal.c): the units that existed (below old_st: a kill -9 may tear
 * one into new head and old tail) travel in it, the appended ones (a kill
 * may cut the file inside one) are only named.  A record holds at most
 * sc_jrnl_cap_units units of data, so a long rewrite goes in chunks, each
 * journaled then written; appended units never need splitting.  The
 * SC_JRNL_REC_SIZE bytes before each chunk are scratch: the record is
 * built there (before the first, the buffer's own room; before the
 * others, units already stored).  0 or -errno.
 */
static int store_run(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile *gf,
		     uint64_t ua, uint64_t ub, uint8_t *o, uint64_t slen, bool with_hdr,
		     uint64_t old_st)
{
	struct sc_jrnl *jr = gpriv(xl)->jr;
	uint64_t sub = sbs(xl), base = uoff(xl, ua), end = base + slen;
	uint64_t cap = jr ? sc_jrnl_cap_units(jr) : UINT64_MAX, dend, ce;
	int ret;

	dend = old_st <= base ? ua : min_u64(ub, ua + (old_st - base + sub - 1) / sub);
	for (uint64_t c = ua; c < ub; c = ce) {
		uint64_t coff = uoff(xl, c), nd, dlen;
		uint8_t *p = o + (c - ua) * sub;
		int slot = -1;

		ce = c < dend && dend - c > cap ? c + cap : ub;
		nd = min_u64(ce, dend) - min_u64(c, dend);
		dlen = nd ? min_u64(uoff(xl, c + nd), end) - coff : 0;
		if (jr) {
			ret = sc_jrnl_begin(jr, sc_gkey_file_id(gf->gk), c, ce - c, (uint32_t)nd,
					    old_st, p - SC_JRNL_REC_SIZE, dlen, &slot);
			if (ret < 0)
				return ret;
		}
		if (with_hdr && c == 0) {
			/* version 1 only: a version 2 header is stored at create */
			memcpy(p - SC_GHDR_SIZE, gf->hdr, SC_GHDR_SIZE);
			ret = store_in_place(xl, obj, fh, p - SC_GHDR_SIZE,
					     SC_GHDR_SIZE + min_u64(uoff(xl, ce), end) - coff, 0);
		} else {
			ret = store_in_place(xl, obj, fh, p, min_u64(uoff(xl, ce), end) - coff, coff);
		}
		if (jr)
			sc_jrnl_end(jr, slot);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * Tree volumes, before change ch stores runs: the leaves checked (a write
 * in place comes here without begin), the file open for change, and
 * room for the leaves of a growth (the write lock is held then).  0 or
 * -errno.
 */
static int tree_prepare(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct gfile *gf,
			const struct sc_dchange *ch)
{
	int ret = ch->new_sz == 0 && ch->old_sz > 0 ? 0 : tree_load(xl, obj, fh, gf);

	if (ret < 0)
		return ret;
	tree_touch(xl, gf);
	if (ch->new_sz > ch->old_sz)
		ret = leaves_fit(gf, sc_data_nunits(gpriv(xl)->d.bs, ch->new_sz));
	return ret;
}

/*
 * Carries out plan p for a change from old_sz to new_sz with the write
 * [wo, we) from src (NULL: zeros), under gf's write lock, or (a write
 * inside the file) its read lock and an exclusive range lock on the
 * plan's units.  Each run is built, sealed and stored with one write, in
 * ascending order; a header not stored yet goes in the same write as unit
 * 0, or alone before the first run.  The old partial last unit comes
 * from the change's saved tail when it holds it (a growth).  Returns 0 or
 * -errno.
 */
static int gcm_apply(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct sc_dfile *df,
		     const struct sc_data_plan *p, struct sc_dchange *ch)
{
	struct gfile *gf = gfile_of(df);
	uint64_t old_sz = ch->old_sz, new_sz = ch->new_sz, wo = ch->wo, we = ch->we;
	const struct old_tail *t = tailc(ch);
	const uint8_t *src = ch->src;
	uint32_t bs = (uint32_t)gpriv(xl)->d.bs;
	uint64_t ub = sbs(xl);
	int ret;

	if (tree_on(xl)) {
		ret = tree_prepare(xl, obj, fh, gf, ch);
		if (ret < 0)
			return ret;
	}
	if (!gf->hdr_stored && p->nruns > 0 && p->run[0].ua > 0) {
		ret = hdr_settle(xl, obj, fh, gf);
		if (ret < 0)
			return ret;
	}
	for (unsigned i = 0; i < p->nruns; i++) {
		const struct sc_data_run *r = &p->run[i];
		uint64_t A = r->ua * bs, B = min_u64(r->ub * bs, new_sz);
		uint64_t slen = sc_gcm_stored_len(bs, B - A);
		bool with_hdr = !gf->hdr_stored;	/* then r->ua == 0 */
		/*
		 * Room for whole stored units, not just slen: build_unit reads a
		 * unit's old stored bytes into its slot, and a shrink's new last
		 * unit is shorter than the old one it is built from.
		 */
		uint8_t *out = sc_data_tbuf_out(SC_JRNL_REC_SIZE + (r->ub - r->ua) * ub), *o;

		if (!out)
			return -ENOMEM;
		o = out + SC_JRNL_REC_SIZE;	/* room for a journal record, or the header */
		for (uint64_t u = r->ua; u < r->ub; u++) {
			uint64_t x = u * bs, y = min_u64(x + bs, new_sz);
			uint8_t *su = o + (u - r->ua) * ub;

			if (u >= r->da && u < r->db)
				continue;
			ret = build_unit(xl, obj, fh, gf, old_sz, t, u, x, y, su, src, wo, we);
			if (ret < 0)
				return ret;
			/* One unit in place: its plaintext was built at su + 16. */
			ret = sc_gcm_seal(gf->gk, u, su + SC_GCM_NONCE_LEN, y - x, su);
			if (ret < 0)
				return sc_data_crypto_err(xl, ret, "seal", x, y - x, new_sz);
		}
		if (r->da < r->db) {
			/* Whole units of the write: sealed straight from the caller's buffer. */
			uint64_t DA = r->da * bs, DB = min_u64(r->db * bs, new_sz);

			ret = sc_gcm_seal(gf->gk, r->da, src + (DA - wo), DB - DA,
					  o + (r->da - r->ua) * ub);
			if (ret < 0)
				return sc_data_crypto_err(xl, ret, "seal", DA, DB - DA, new_sz);
		}
		ret = store_run(xl, obj, fh, gf, r->ua, r->ub, o, slen, with_hdr,
				stored_of(xl, gf, old_sz));
		if (ret < 0)
			return ret;
		if (tree_on(xl)) {
			ret = leaves_set(xl, gf, r->ua, o, slen);
			if (ret < 0)
				return ret;
		}
		gf->hdr_stored = true;
		if (gf_cut(gf) >= r->ua && gf_cut(gf) < r->ub)
			gf_uncut(gf, gf_cut(gf));
	}
	return 0;
}

/*
 * A growing change failed, perhaps after part of it was stored (EFBIG,
 * ENOSPC): cut the file back to its old stored size and put its old
 * partial last unit back (t), so a failed write, truncate or fallocate
 * leaves the file it found.  Best effort, under the write lock; the size
 * follows the backing file whatever happens.
 */
static void gcm_undo_growth(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			    struct sc_dfile *df, struct sc_dchange *ch)
{
	struct gfile *gf = gfile_of(df);
	uint64_t old_sz = ch->old_sz;
	const struct old_tail *t = tailc(ch);
	struct stat st, attr = { .st_size = (off_t)stored_of(xl, gf, old_sz) };
	int ret;

	if (gpriv(xl)->torn)	/* test: the daemon is "dead" */
		return;
	ret = sc_xl_setattr(xl->below, obj, fh, &attr, SC_SET_SIZE, &st);
	if (ret == 0 && t->len)
		ret = sc_data_write_exact(xl, obj, fh, t->st, t->len, uoff(xl, t->u));
	if (ret == 0) {
		sc_data_set_size(xl, df, old_sz);
		if (tree_on(xl))
			tree_reread(xl, obj, fh, gf);
		return;
	}
	sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: undoing a failed growth "
		 "failed too (%s)\n", sc_obj_name(xl->below, obj), strerror(-ret));
	sc_data_resync_size(xl, obj, fh, df);
}

/* ---- operations ----------------------------------------------------------- */

/*
 * While journal records are pinned, the file just looked up (fd from the
 * layer below, not yet in the front end's table) gets the repair its first
 * open would make, before its size is read: the kernel caches the size
 * this lookup reports for attr_timeout and appends (O_APPEND) at it, and a
 * torn append is cut back by the repair, which no reply would tell it.
 * Costs a header read per lookup of a regular file, only after an unclean
 * stop and until the records are resolved.
 */
static void lookup_resolve(struct sc_xl *xl, int fd, struct stat *st)
{
	struct sc_obj obj = { .fd = fd, .type = S_IFREG };
	struct sc_fh ro = { .fd = -1, .flags = O_RDONLY };
	uint8_t hdr[SC_IHDR_SIZE];
	struct stat now;
	ssize_t n;

	if ((uint64_t)st->st_size < hl(xl) || sc_xl_open(xl->below, &obj, &ro) < 0)
		return;	/* no header, or no read access: the first open decides */
	n = sc_xl_read(xl->below, &obj, &ro, hdr, hl(xl), 0);
	sc_xl_release(xl->below, &obj, &ro);
	if (n != hl(xl))
		return;
	jrnl_resolve(xl, &obj, hdr, true);
	if (sc_xl_getattr(xl->below, &obj, NULL, &now) == 0)
		*st = now;
}

/*
 * Integrity volumes: the regular file just looked up (fd, st) at this
 * thread's place in dir, checked where it has a name (format.md 11.4,
 * 11.5).  Its binding record is looked for (one lookup below: an open
 * carries no name, so only here can a hard link's record be read); a
 * LINKED file it vouches for is remembered by inode for the opens.  A
 * file with more than one backing link is checked here, not at the open:
 * the kernel makes all its names one inode, so a refusal at the open of a
 * name linked behind the mount would refuse the file's own names too.
 * Refused (EIO): a file with several links bound to another entry (by its
 * tag, or LINKED and vouched for by no record here), unless a kill cut
 * its rename short (a pinned rename entry: left to its open,
 * rename_resolve).  A file with one link and no record: as before, its
 * open decides.
 */
static int lookup_bound(struct sc_xl *xl, struct sc_obj *dir, int fd, const struct stat *st)
{
	const struct sc_xl_place *at = sc_xl_place_at();
	struct gcm_priv *gp = gpriv(xl);
	struct sc_obj obj = { .fd = fd, .type = S_IFREG };
	uint8_t tag[SC_INTEG_TAG_LEN], rid[SC_GCM_FILE_ID_LEN];
	struct sc_dirplace dp;
	struct sc_ihdr h;
	bool vouched;
	uint64_t rg;
	int rec, r;

	if (place_internal(at) || (st->st_nlink < 2 && !dir_may_hold_records(xl, dir)))
		return 0;
	dp = dplace(at);
	rec = sc_brec_read(xl->below, gp->ik, dir, &dp, rid, &rg);
	if ((rec < 0 && st->st_nlink < 2) || (uint64_t)st->st_size < SC_IHDR_SIZE ||
	    !header_of(xl, &obj, &h))
		return 0;	/* the open decides */
	r = sc_ihdr_bound_at(gp->ik, &h, &dp);
	vouched = rec == 0 && sc_bindrec_vouches(&h, rid, rg);
	if (r == 0 && rec == 0 && !vouched)	/* beside a file its own tag binds */
		record_drop(xl, dir, &dp, sc_obj_lookup_name(xl->below, &obj),
			    "beside it that vouched for another file");
	if (r == 0)
		return 0;
	if (vouched && (h.flags & SC_IHDR_F_LINKED))
		return sc_brec_seen_add(gp->seen, (uint64_t)st->st_ino, h.file_id) < 0 ? -EIO : 0;
	if (st->st_nlink < 2 || (r != -ESTALE && !(h.flags & SC_IHDR_F_LINKED)))
		return 0;	/* the open decides */
	if (sc_jrnl_dirty_pinned(gp->jr) > 0 &&
	    sc_integ_rename_tag(gp->ik, h.file_id, &dp, tag) == 0 &&
	    sc_jrnl_place_find(gp->jr, SC_JRNL_RENAME, tag, h.gen) >= 0)
		return 0;
	/* once per name: the kernel may ask again, and each name of an inode is refused alone */
	if (first_report(gp, (unsigned long long)st->st_ino ^ XXH3_64bits(dp.enc, dp.enc_len)))
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: is bound to another entry: a hard "
		       "link made behind the mount, or a file copied or moved over it; "
		       "returning EIO\n", sc_obj_lookup_name(xl->below, &obj));
	return -EIO;
}

static int gcm_lookup(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		      int *fd_out, struct stat *st)
{
	int ret = sc_data_op_lookup(xl, dir, name, fd_out, st);

	if (ret == 0 && S_ISREG(st->st_mode) && gpriv(xl)->ik) {
		ret = lookup_bound(xl, dir, *fd_out, st);
		if (ret < 0) {
			sc_xl_drop_fd(xl->below, *fd_out);
			*fd_out = -1;
			return ret;
		}
	}
	if (ret == 0 && S_ISREG(st->st_mode) && gpriv(xl)->jr &&
	    sc_jrnl_pinned(gpriv(xl)->jr) > 0)
		lookup_resolve(xl, *fd_out, st);
	if (ret == 0)
		sc_data_fix_stat(xl, NULL, st);
	return ret;
}

static int gcm_getattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct stat *st)
{
	int ret = sc_xl_getattr(xl->below, obj, fh, st);

	if (ret == 0)
		sc_data_fix_stat(xl, sc_data_state(xl, obj), st);
	return ret;
}

static int gcm_link(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		    const char *newname, struct stat *st)
{
	int ret = sc_data_op_link(xl, obj, newdir, newname, st);

	if (ret == 0)
		sc_data_fix_stat(xl, sc_data_state(xl, obj), st);
	return ret;
}

/* A link's header edit (arg: link_arg): the file made LINKED, its tag kept. */
struct link_arg {
	struct sc_dirplace	from;
	struct sc_obj		*obj;
	uint8_t			id[SC_GCM_FILE_ID_LEN];	/* set by the edit */
};

static int edit_link(struct sc_xl *xl, struct sc_ihdr *h, void *arg)
{
	struct link_arg *a = arg;

	/* only a file this mount found bound where it is named gets a second name */
	if (bound_here(xl, a->obj, h, &a->from) < 0)
		return -EIO;
	memcpy(a->id, h->file_id, sizeof(a->id));
	if (h->flags & SC_IHDR_F_LINKED)
		return 1;
	h->flags |= SC_IHDR_F_LINKED;
	h->gen++;
	return 0;
}

/*
 * link(2) of a regular file on an integrity volume (format.md 11.5), from
 * the place it is known at (at) to the new one (to): the header made
 * LINKED (the first time; it keeps the tag of the name it has), a binding
 * record at the new name, the backing link.  A crash between leaves a
 * LINKED file with one name (valid), or a record without its name (fsck
 * reports it, --repair removes it).  0 or -errno; a failed link takes its
 * record back.
 */
static int integ_link(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		      const char *newname, struct stat *st)
{
	const struct sc_xl_place *from = sc_xl_place_at(), *to = sc_xl_place_to();
	struct link_arg a = { .obj = obj };
	struct sc_dirplace dp;
	int ret;

	if (!S_ISREG(obj->type) || place_internal(from) || place_internal(to))
		return gcm_link(xl, obj, newdir, newname, st);
	if (sc_data_is_hidden(xl, newdir, newname))
		return -EPERM;
	a.from = dplace(from);
	dp = dplace(to);
	ret = ihdr_rmw_named(xl, obj, NULL, edit_link, &a);
	if (ret == -EIO && first_report(gpriv(xl), sc_data_backing_ino(xl, obj)))
		sc_log(SC_LOG_ERR, "stackcrypt: gcm: %s: not linked: it is not bound where "
		       "it is named; returning EIO\n", sc_obj_name(xl->below, obj));
	if (ret == 0)
		ret = record_write(xl, newdir, &dp, a.id, 0);
	if (ret < 0)
		return ret;
	ret = gcm_link(xl, obj, newdir, newname, st);
	if (ret < 0)
		sc_brec_remove(xl->below, newdir, &dp);
	else	/* out of memory: its opens are refused, never accepted unchecked */
		sc_brec_seen_add(gpriv(xl)->seen, (uint64_t)st->st_ino, a.id);
	return ret;
}

/*
 * The layer below's fallocate(mode) of the stored bytes of plaintext
 * [off, end): from the start of off's unit; to the end of end's unit when
 * the size is kept, else to the exact stored size of end (the call sets
 * it); never into the stored last unit of the file when past its end.
 */
static int gcm_falloc(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct sc_dfile *df,
		      int mode, uint64_t off, uint64_t end)
{
	uint32_t bs = (uint32_t)gpriv(xl)->d.bs;
	uint64_t sa = uoff(xl, off / bs), sb;
	int ret;

	sb = mode & FALLOC_FL_KEEP_SIZE ? uoff(xl, sc_data_nunits(bs, end)) :
	     sc_gcm_stored_size_h(hl(xl), bs, end);
	if (off >= df->size)
		sa = max_u64(sa, stored_of(xl, gfile_of(df), df->size));
	if (sa >= sb)
		return 0;
	/* whole units punched or zeroed inside the file become holes: marked first */
	if ((mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) && off < df->size) {
		ret = tree_on(xl) ? tree_load(xl, obj, fh, gfile_of(df)) :
		      mark_holes(xl, obj, fh, gfile_of(df));
		if (ret < 0)
			return ret;
		if (tree_on(xl))
			tree_touch(xl, gfile_of(df));
	}
	ret = sc_xl_fallocate(xl->below, obj, fh, mode, (off_t)sa, (off_t)(sb - sa));
	/* the punched whole units' leaves are a hole's (zero); the write lock is held */
	if (ret == 0 && tree_on(xl) && (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) &&
	    off < df->size)
		ret = sc_utree_zero(gfile_of(df)->tree, off / bs,
				    min_u64(end / bs, sc_utree_units(gfile_of(df)->tree)));
	return ret;
}

/* The first unit whose stored span starts at or after stored offset @p. */
static uint64_t unit_from(const struct sc_xl *xl, uint64_t p)
{
	uint64_t ub = sbs(xl);

	return p <= hl(xl) ? 0 : (p - hl(xl) + ub - 1) / ub;
}

/*
 * The first plaintext hole at or after unit @u, or @sz.  A unit is a hole
 * only when its whole stored span is a backing hole: a stored unit
 * (bs + 32 bytes) straddles backing blocks, so the unit beside a written
 * one holds part of a data block, and a backing hole that starts on a
 * unit's first byte may end inside it.  Each round starts further on (a
 * hole's start, then data found in the candidate unit), so it ends.
 */
static off_t gcm_seek_hole(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			   uint64_t u, uint64_t sz)
{
	uint64_t bs = gpriv(xl)->d.bs, pos = uoff(xl, u);
	off_t h, d;

	for (;;) {
		if (u * bs >= sz)
			return (off_t)sz;
		h = sc_xl_lseek(xl->below, obj, fh, (off_t)pos, SEEK_HOLE);
		if (h == -ENXIO)	/* cut behind the mount: no hole but EOF */
			return (off_t)sz;
		if (h < 0)
			return h;
		u = unit_from(xl, (uint64_t)h);
		if (u * bs >= sz)
			return (off_t)sz;
		d = sc_xl_lseek(xl->below, obj, fh, (off_t)uoff(xl, u), SEEK_DATA);
		if (d == -ENXIO || (d >= 0 && (uint64_t)d >= uoff(xl, u + 1)))
			return (off_t)(u * bs);
		if (d < 0)
			return d;
		pos = (uint64_t)d;
	}
}

/*
 * SEEK_DATA/SEEK_HOLE on unit bounds, both with one rule: a unit is data
 * when any byte of its stored span is backing data (gcm_seek_hole).  So
 * SEEK_DATA and SEEK_HOLE at one offset never both return it, which made
 * cp(1) loop on a file with one small write in a hole.  Results are
 * clipped to the plaintext size.
 */
static off_t gcm_lseek(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		       off_t off, int whence)
{
	uint64_t bs = gpriv(xl)->d.bs, ub = sbs(xl), sz, u;
	struct sc_dfile *df;
	off_t r;
	int ret;

	if (!S_ISREG(obj->type) || (whence != SEEK_DATA && whence != SEEK_HOLE))
		return sc_xl_lseek(xl->below, obj, fh, off, whence);
	if (off < 0)
		return -ENXIO;
	ret = sc_data_load(xl, obj, fh, &df);
	if (ret < 0)
		return ret;
	pthread_rwlock_rdlock(&df->lock);
	sz = df->size;
	r = -ENXIO;
	if ((uint64_t)off >= sz)
		goto out_unlock;
	u = (uint64_t)off / bs;
	if (whence == SEEK_HOLE) {
		r = gcm_seek_hole(xl, obj, fh, u, sz);
		if (r >= 0 && r < off)
			r = off;
		goto out_unlock;
	}
	r = sc_xl_lseek(xl->below, obj, fh, (off_t)uoff(xl, u), SEEK_DATA);
	if (r < 0)
		goto out_unlock;
	u = (uint64_t)r <= hl(xl) ? 0 : ((uint64_t)r - hl(xl)) / ub;
	r = u * bs >= sz ? -ENXIO : (off_t)max_u64((uint64_t)off, u * bs);
out_unlock:
	pthread_rwlock_unlock(&df->lock);
	return r;
}

/* ---- the format's operations (engine.h) ---------------------------------- */

static int gcm_fetch(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct sc_dfile **out)
{
	struct gfile *gf;
	int ret = gfile_fetch(xl, obj, fh, &gf);

	if (ret == 0)
		*out = &gf->d;
	return ret;
}

/*
 * A created file is 0 bytes: its header is made in memory, stored with its
 * first data.  On integrity volumes it is stored now (integ_made).
 */
static int gcm_made(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, mode_t mode,
		    struct stat *st, struct sc_dfile **out)
{
	struct gfile *gf;
	int ret;

	(void)mode;
	(void)st;
	ret = gpriv(xl)->ik ? integ_made(xl, obj, fh, &gf) : gfile_fresh(xl, obj, &gf);
	if (ret == 0)
		*out = &gf->d;
	return ret;
}

static void gcm_free(struct sc_dfile *df)
{
	gfile_free(gfile_of(df));
}

static uint64_t gcm_stored_of(const struct sc_xl *xl, const struct sc_dfile *df, uint64_t plain)
{
	return stored_of(xl, (const struct gfile *)df, plain);
}

/*
 * Before a change: one that leaves a hole marks the header first
 * (mark_holes); a growth saves the old partial last unit (for
 * undo_growth); a resize to a non-empty size stores the header first (it
 * may re-seal no unit, and the stored size it sets counts the header).  A
 * write's header goes with its first run instead (apply).
 */
static int gcm_begin(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct sc_dfile *df,
		     struct sc_dchange *ch)
{
	/* a cut to 0 reads no leaf: the renewed header holds the tree of no unit */
	int ret = ch->new_sz == 0 && ch->old_sz > 0 ? 0 : tree_load(xl, obj, fh, gfile_of(df));

	if (ret < 0)
		return ret;
	/* integrity volumes: into the dirty table before the units move ahead of the header */
	if (tree_on(xl))
		tree_touch(xl, gfile_of(df));
	else if (gpriv(xl)->ik && ch->new_sz != ch->old_sz)
		session_begin(xl, gfile_of(df));
	if (makes_hole(gpriv(xl)->d.bs, ch))
		ret = mark_holes(xl, obj, fh, gfile_of(df));
	if (ret == 0 && ch->new_sz > ch->old_sz)
		ret = save_tail(xl, obj, fh, ch->old_sz, tailc(ch));
	if (ret == 0 && ch->resize && ch->new_sz > 0)
		ret = hdr_settle(xl, obj, fh, gfile_of(df));
	return ret;
}

/*
 * After a cut to 0 bytes: a new file id for what comes next (renew_header).
 * Integrity volumes: integ_commit.
 */
static int gcm_commit(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      struct sc_dfile *df, struct sc_dchange *ch)
{
	if (gpriv(xl)->ik)
		return integ_commit(xl, obj, fh, gfile_of(df), ch);
	if (ch->new_sz == 0 && ch->old_sz > 0)
		return renew_header(xl, gfile_of(df));
	return 0;
}

static const struct sc_data_fmt gcm_fmt = {
	.tail_rule		= false,
	.sizes_differ		= true,
	.create_owner_write	= false,
	.fetch			= gcm_fetch,
	.made			= gcm_made,
	.free			= gcm_free,
	.stored_of		= gcm_stored_of,
	.plain_of		= gcm_plain_of,
	.load			= gcm_load,
	.begin			= gcm_begin,
	.apply			= gcm_apply,
	.commit			= gcm_commit,
	.abort			= NULL,
	.undo_growth		= gcm_undo_growth,
	.falloc			= gcm_falloc,
};

static const struct sc_xl_ops gcm_ops = {
	.name			= "gcm",
	.init			= gcm_init,
	.destroy		= gcm_destroy,
	.lookup			= gcm_lookup,
	.getattr		= gcm_getattr,
	.link			= gcm_link,
	.lseek			= gcm_lseek,
	SC_DATA_XL_OPS,	/* mknod: a new file is 0 bytes either way */
};

/*
 * The layer, with ik (integrity volumes) or without (NULL).  Integrity
 * volumes get tables of their own, copies of the usual ones with their
 * release, fsync and rename, so no other volume's path looks at them.
 */
static int gcm_new(struct sc_xl *below, const struct sc_mkey *mk, const struct sc_ikey *ik,
		   struct sc_fresh *fresh, const struct sc_stack_hide *hide, struct sc_xl **out)
{
	const struct sc_data_fmt *fmt = &gcm_fmt;
	const struct sc_xl_ops *ops = &gcm_ops;
	struct gcm_priv *gp;
	struct sc_xl *xl;
	int ret;

	if (!mk || sc_mkey_cipher(mk) != SC_CIPHER_AES_GCM)
		return -EINVAL;
	xl = calloc(1, sizeof(*xl));
	gp = calloc(1, sizeof(*gp));
	if (xl && gp && ik) {
		gp->integ_fmt = gcm_fmt;
		gp->integ_fmt.release = integ_release;
		gp->integ_ops = gcm_ops;
		gp->integ_ops.fsync = integ_fsync;
		gp->integ_ops.flush = integ_flush_op;
		gp->integ_ops.close_is_silent = integ_close_is_silent;
		gp->integ_ops.journal = integ_journal;
		gp->integ_ops.rename = integ_rename;
		gp->integ_ops.fsyncdir = integ_fsyncdir;
		gp->integ_ops.mknod = integ_mknod;
		gp->integ_ops.create = integ_create;
		gp->integ_ops.unlink = integ_unlink;
		gp->integ_ops.link = integ_link;
		gp->integ_ops.forget = integ_forget;
		gp->integ_ops.symlink = integ_symlink;
		fmt = &gp->integ_fmt;
		ops = &gp->integ_ops;
	}
	ret = xl && gp ? 0 : -ENOMEM;
	if (ret == 0 && ik)
		ret = sc_brec_seen_new(&gp->seen);
	if (ret == 0)
		ret = sc_data_layer_init(xl, below, ops, &gp->d, fmt, mk, hide);
	if (ret < 0) {
		if (gp)
			sc_brec_seen_free(gp->seen);
		free(xl);
		free(gp);
		return ret;
	}
	gp->ik = ik;
	gp->fresh = ik ? fresh : NULL;
	gp->hl = ik ? SC_IHDR_SIZE : SC_GHDR_SIZE;
	pthread_mutex_init(&gp->hdr_lock, NULL);
	pthread_mutex_init(&gp->rec_lock, NULL);
	gp->d.max_size = sc_gcm_plain_max_h(gp->hl, (uint32_t)gp->d.bs);
	*out = xl;
	return 0;
}

/* Returns 0, -ENOMEM or -EINVAL (see data_xl.h). */
int sc_gcm_xl_new(struct sc_xl *below, const struct sc_mkey *mk,
		  const struct sc_stack_hide *hide, struct sc_xl **out)
{
	return gcm_new(below, mk, NULL, NULL, hide, out);
}

/* Returns 0, -ENOMEM or -EINVAL (see data_xl.h). */
int sc_gcm_integ_xl_new(struct sc_xl *below, const struct sc_mkey *mk, const struct sc_ikey *ik,
			struct sc_fresh *fresh, const struct sc_stack_hide *hide,
			struct sc_xl **out)
{
	return ik ? gcm_new(below, mk, ik, fresh, hide, out) : -EINVAL;
}
