/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck_lists.c - directories' listing records (docs/format.md 11.7, 11.11;
 * volumes with SC_FEAT_DIR_LISTS).
 *
 * For each directory whose nonce the names walk read: its record
 * (SC_DIRLIST_FILE) decrypts, is its own, is no older than this client
 * has seen, and its count and digest are those of the names the mount
 * would list (short names that decrypt, long names whose side file holds
 * them), its pending change resolved as the mount resolves it.  A
 * mismatch is a problem: entries added or removed behind the mount, or a
 * power loss before the record was written, which --repair
 * --accept-unclean takes as found when the last mount stopped uncleanly.
 * --repair rewrites the record of a directory it moved a file out of (a
 * quarantine), as the mount would have.
 *
 * The record is rewritten in place, header and unit in one pwrite of 456
 * bytes (one sector): under the same file id with its header's gen + 1,
 * or, when its file is missing or unreadable, as a new file.  Repairs run
 * on local backing directories only (fsck refuses --repair elsewhere).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sc_crypto.h"
#include "sc_volume.h"
#include "sc_cli.h"
#include "sc_backing.h"
#include "sc_fresh.h"
#include "sc_journal.h"
#include "fsck_i.h"

#define REC_FILE_LEN	(SC_IHDR_SIZE + SC_DLIST_LEN + SC_GCM_OVERHEAD)

/* The names of one backing directory. */
struct names {
	char	**v;
	size_t	n, cap;
};

static int names_add(void *ctx, const char *name)
{
	struct names *ns = ctx;

	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? 2 * ns->cap : 64;
		char **v = realloc(ns->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ns->v = v;
		ns->cap = cap;
	}
	ns->v[ns->n] = strdup(name);
	return ns->v[ns->n] ? (ns->n++, 0) : -ENOMEM;
}

static void names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

static bool names_has(const struct names *ns, const char *name)
{
	for (size_t i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], name))
			return true;
	return false;
}

/* "DIR/name" (or "name" in the root) into out (PATH_MAX bytes); false if too long. */
static bool in_dir(const char *dir, const char *name, char *out)
{
	int n = snprintf(out, PATH_MAX, "%s%s%s", dir, dir[0] ? "/" : "", name);

	return n > 0 && n < PATH_MAX;
}

/* Whether the backing name is one the mount lists in the directory rel (nonce). */
static bool listed(struct fsck *f, const struct sc_nkey *nk, const char *rel,
		   const uint8_t *nonce, const char *name)
{
	char plain[SC_NAME_PLAIN_MAX + 1], enc[SC_NAME_ENC_MAX + 1], want[SC_NAME_LONG_LEN + 1];
	char side[SC_NAME_LONG_LEN + sizeof(SC_NAME_SIDE_SUFFIX)], path[PATH_MAX], why[160];
	size_t len = strlen(name);
	ssize_t n;

	switch (sc_name_kind(name, len)) {
	case SC_NAME_KIND_SHORT:
		return sc_name_decrypt(nk, nonce, name, len, plain) > 0;
	case SC_NAME_KIND_LONG:
		snprintf(side, sizeof(side), "%s%s", name, SC_NAME_SIDE_SUFFIX);
		if (!in_dir(rel, side, path))
			return false;
		n = sc_vol_read_small(f->b, f->vol->mkey, path, enc, SC_NAME_ENC_MAX, why,
				      sizeof(why));
		if (n <= SC_NAME_SHORT_MAX)
			return false;
		enc[n] = 0;
		return sc_name_long(enc, (size_t)n, want) == 0 && !strcmp(want, name) &&
		       sc_name_decrypt(nk, nonce, enc, (size_t)n, plain) > 0;
	default:
		return false;
	}
}

/* The count and digest of what the mount lists in rel (its names ns). */
static int found_state(struct fsck *f, const struct sc_nkey *nk, const char *rel,
		       const uint8_t *nonce, const struct names *ns, uint64_t *count,
		       uint8_t digest[SC_INTEG_TAG_LEN])
{
	uint8_t el[SC_INTEG_TAG_LEN];
	int r;

	*count = 0;
	memset(digest, 0, SC_INTEG_TAG_LEN);
	for (size_t i = 0; i < ns->n; i++) {
		if (!listed(f, nk, rel, nonce, ns->v[i]))
			continue;
		r = sc_dir_elem(f->vol->ikey, nonce, ns->v[i], strlen(ns->v[i]), el);
		if (r)
			return r;
		sc_dlist_xor(digest, el);
		(*count)++;
	}
	return 0;
}

/*
 * The record of rel into r, its pending change resolved against ns: 1, 0
 * (no record file, or an empty one), or -1 with why set (damaged, another
 * directory's).
 */
static int record_read(struct fsck *f, const char *rel, const uint8_t *nonce,
		       const struct names *ns, struct sc_dlist *r, char *why, size_t whylen)
{
	uint8_t buf[SC_DLIST_LEN + 1];
	char path[PATH_MAX];
	struct stat st;
	ssize_t n;
	int ret;

	if (!names_has(ns, SC_DIRLIST_FILE))
		return 0;
	if (!in_dir(rel, SC_DIRLIST_FILE, path)) {
		snprintf(why, whylen, "its path is too long");
		return -1;
	}
	/* empty, or a bare header: as none, as the mount reads it (a power cut after its create) */
	if (sc_backing_lstat(f->b, path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		return 0;
	n = sc_vol_read_small(f->b, f->vol->mkey, path, buf, sizeof(buf), why, whylen);
	if (n == 0)
		return 0;
	if (n < 0)
		return -1;
	ret = sc_dlist_parse(buf, (size_t)n, nonce, r);
	if (ret) {
		snprintf(why, whylen, "%s", ret == -EBADMSG ? "it is another directory's (copied "
			 "over this one's behind the mount)" : ret == -EPROTONOSUPPORT ?
			 "of a version this build cannot read" : "it is damaged");
		return -1;
	}
	if (r->pend != SC_DLIST_NONE &&
	    names_has(ns, r->pend_name) != (r->pend == SC_DLIST_ADDED)) {
		r->count = r->count_before;
		memcpy(r->digest, r->digest_before, sizeof(r->digest));
	}
	r->pend = SC_DLIST_NONE;
	r->pend_len = 0;
	memset(r->pend_name, 0, sizeof(r->pend_name));
	return 1;
}

/* The record file's header as stored: 0 with it, or -1 (none, or it does not verify). */
static int header_read(int fd, struct fsck *f, struct sc_ihdr *h)
{
	uint8_t hdr[SC_IHDR_SIZE];

	if (pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		return -1;
	return sc_ihdr_verify(f->vol->ikey, hdr, sizeof(hdr), h) ? -1 : 0;
}

/* Writes r as the record of rel (made if missing), durable.  0 or -errno (said). */
static int record_write(struct fsck *f, const char *rel, const struct sc_dlist *r)
{
	struct sc_ihdr h = { .flags = SC_IHDR_F_TRACKS | SC_IHDR_F_INTERNAL, .gen = 1,
			     .size = SC_DLIST_LEN };
	uint8_t buf[REC_FILE_LEN], plain[SC_DLIST_LEN];
	char rp[PATH_MAX], path[PATH_MAX];
	struct sc_gkey *gk = NULL;
	bool tree = sc_ikey_tree(f->vol->ikey);
	struct sc_ihdr old;
	int fd, ret;

	if (!in_dir(rel, SC_DIRLIST_FILE, rp) ||
	    snprintf(path, sizeof(path), "%s/%s", f->backing, rp) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		goto out_say;
	}
	if (header_read(fd, f, &old) == 0 && (old.flags & SC_IHDR_F_INTERNAL)) {
		memcpy(h.file_id, old.file_id, sizeof(h.file_id));
		h.gen = old.gen + 1;
		ret = 0;
	} else {
		ret = sc_random(h.file_id, sizeof(h.file_id));
	}
	/*
	 * A unit tree volume's header must carry a root (format.md 11.10): the
	 * tree of no unit until the unit is sealed (its associated data holds
	 * no root), then the root of its one leaf, its tag.
	 */
	if (!ret && tree) {
		h.flags |= SC_IHDR_F_TREE;
		ret = sc_tree_root(f->vol->ikey, h.file_id, 0, NULL, h.root);
	}
	if (!ret)
		ret = sc_ihdr_pack(f->vol->ikey, &h, buf);
	if (!ret)
		ret = sc_gkey_new_v2(f->vol->ikey, buf, SC_IHDR_SIZE, &h, &gk);
	if (!ret)
		ret = sc_dlist_pack(r, plain);
	if (!ret)
		ret = sc_gcm_seal(gk, 0, plain, sizeof(plain), buf + SC_IHDR_SIZE);
	sc_gkey_free(gk);
	sc_wipe(plain, sizeof(plain));	/* the count and digest: secret (11.7) */
	if (!ret && tree)
		ret = sc_tree_root_of(f->vol->ikey, h.file_id,
				      buf + sizeof(buf) - SC_INTEG_TAG_LEN, 1, h.root);
	if (!ret && tree)
		ret = sc_ihdr_pack(f->vol->ikey, &h, buf);
	if (!ret && pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		ret = -EIO;
	if (!ret && (ftruncate(fd, sizeof(buf)) || fsync(fd)))
		ret = -errno;
	close(fd);
	if (!ret)
		return 0;
out_say:
	sc_cli_err(cmd, "cannot write %s: %s", path, strerror(-ret));
	return ret;
}

/* Remembers rel's nonce for sc_fsck_list_refresh.  0 or -ENOMEM. */
static int ldir_add(struct fsck *f, const char *rel, const uint8_t *nonce)
{
	if (f->nldirs == f->capldirs) {
		size_t cap = f->capldirs ? 2 * f->capldirs : 64;
		struct fsck_ldir *v = realloc(f->ldirs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->ldirs = v;
		f->capldirs = cap;
	}
	f->ldirs[f->nldirs].rel = strdup(rel);
	if (!f->ldirs[f->nldirs].rel)
		return -ENOMEM;
	memcpy(f->ldirs[f->nldirs++].nonce, nonce, SC_DIRNONCE_LEN);
	return 0;
}

/* The found state written as rel's record, gen above the stored one.  0 or -errno. */
static int record_take(struct fsck *f, const char *rel, const uint8_t *nonce, uint64_t gen,
		       uint64_t count, const uint8_t *digest)
{
	struct sc_dlist r = { .gen = gen + 1, .count = count };

	memcpy(r.nonce, nonce, SC_DIRNONCE_LEN);
	memcpy(r.digest, digest, SC_INTEG_TAG_LEN);
	return record_write(f, rel, &r);
}

/* --repair --accept-unclean after an unclean stop: a record that differs is taken as found. */
static bool accepting(const struct fsck *f)
{
	return f->repair && f->accept_unclean && f->jr && sc_jrnl_unclean(f->jr);
}

/* record_take, noted why (rp: the record's path, for the note).  0 or -errno. */
static int take(struct fsck *f, const char *rel, const char *rp, const uint8_t *nonce,
		uint64_t gen, uint64_t count, const uint8_t *digest, const char *why)
{
	int ret = record_take(f, rel, nonce, gen, count, digest);

	if (!ret)
		sc_fsck_note(f, rp, "%s: the directory's listing record now counts its %llu "
			     "entries", why, (unsigned long long)count);
	return ret;
}

int sc_fsck_list_check(struct fsck *f, const struct sc_nkey *nk, const char *rel,
		       const uint8_t *nonce, const char *where)
{
	uint8_t digest[SC_INTEG_TAG_LEN];
	struct names ns = { 0 };
	struct sc_dlist r = { 0 };
	char rp[PATH_MAX], why[224];
	uint64_t count, seen = 0;
	int got, ret;

	if (!(f->vol->cfg.features & SC_FEAT_DIR_LISTS))
		return 0;
	if (!in_dir(rel, SC_DIRLIST_FILE, rp))
		return 0;
	ret = ldir_add(f, rel, nonce);
	if (!ret)
		ret = sc_backing_list(f->b, rel, names_add, &ns);
	if (!ret)
		ret = found_state(f, nk, rel, nonce, &ns, &count, digest);
	if (ret)
		goto out;
	got = record_read(f, rel, nonce, &ns, &r, why, sizeof(why));
	if (got < 0 && accepting(f)) {
		/* made by a change the power cut short, its header or unit lost */
		ret = take(f, rel, rp, nonce, 0, count, digest,
			   "accepted as found after the unclean stop (--accept-unclean)");
		goto out;
	}
	if (got < 0) {
		ret = sc_fsck_problem(f, rp, false, "directory listing record: %s%s: the mount "
				      "refuses the directory's listing and changes%s", why, where,
				      f->jr && sc_jrnl_unclean(f->jr) ? " (after the unclean stop, "
				      "--repair --accept-unclean makes it anew from the entries)" : "");
		goto out;
	}
	ret = f->fresh && got ? sc_fresh_check(f->fresh, SC_FRESH_DIR, nonce, r.gen, &seen) : 0;
	if (ret == -ESTALE || ret == -ENOENT) {
		ret = sc_fsck_problem(f, rp, false, "directory listing record rolled back: gen "
				      "%llu < %llu, seen on this machine (put back from an older "
				      "copy; --allow-rollback accepts it)%s",
				      (unsigned long long)r.gen, (unsigned long long)seen, where);
		goto out;
	}
	ret = 0;
	if (count == r.count && sc_memeq_ct(digest, r.digest, sizeof(digest)))
		goto out;
	if (accepting(f) || f->allow_rollback) {
		ret = take(f, rel, rp, nonce, r.gen, count, digest, accepting(f) ?
			   "accepted as found after the unclean stop (--accept-unclean)" :
			   "accepted as found (--allow-rollback)");
		goto out;
	}
	ret = sc_fsck_problem(f, rp, false, "the directory's entries differ from its listing "
			      "record (%llu found, %llu recorded): entries added or removed "
			      "behind the mount%s%s%s",
			      (unsigned long long)count, (unsigned long long)r.count,
			      f->jr && sc_jrnl_unclean(f->jr) ? ", or the power was lost before "
			      "the record was written (--repair --accept-unclean accepts it)" : "",
			      where, f->repair ? "; --repair rewrites the record with what is found "
			      "(its entries are checked one by one)" : "");
	/* every entry left is checked on its own; the record now says what is there */
	if (!ret && f->repair)
		ret = record_take(f, rel, nonce, r.gen, count, digest);
out:
	names_free(&ns);
	return ret;
}

int sc_fsck_list_refresh(struct fsck *f, const char *file_rel)
{
	const char *slash = strrchr(file_rel, '/');
	size_t dlen = slash ? (size_t)(slash - file_rel) : 0;
	uint8_t digest[SC_INTEG_TAG_LEN];
	struct names ns = { 0 };
	struct sc_dlist r = { 0 };
	struct sc_nkey *nk = NULL;
	char dir[PATH_MAX], why[224];
	uint64_t count;
	size_t i;
	int ret;

	if (!(f->vol->cfg.features & SC_FEAT_DIR_LISTS) || dlen >= sizeof(dir))
		return 0;
	memcpy(dir, file_rel, dlen);
	dir[dlen] = 0;
	for (i = 0; i < f->nldirs && strcmp(f->ldirs[i].rel, dir); i++)
		;
	if (i == f->nldirs)
		return 0;	/* no nonce known: its directory was reported */
	ret = sc_nkey_new(f->vol->mkey, &nk);
	if (!ret)
		ret = sc_backing_list(f->b, dir, names_add, &ns);
	if (!ret)
		ret = found_state(f, nk, dir, f->ldirs[i].nonce, &ns, &count, digest);
	if (!ret && record_read(f, dir, f->ldirs[i].nonce, &ns, &r, why, sizeof(why)) < 0)
		r.gen = 0;	/* a damaged record was reported; it is replaced */
	if (!ret)
		ret = record_take(f, dir, f->ldirs[i].nonce, r.gen, count, digest);
	sc_nkey_free(nk);
	names_free(&ns);
	return ret;
}

void sc_fsck_lists_free(struct fsck *f)
{
	for (size_t i = 0; i < f->nldirs; i++)
		free(f->ldirs[i].rel);
	free(f->ldirs);
	f->ldirs = NULL;
	f->nldirs = f->capldirs = 0;
}
