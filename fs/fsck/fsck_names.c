/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck_names.c - the name checks of "stackcrypt fsck" on a volume whose
 * names are encrypted (SC_FEAT_NAMES; docs/format.md, "Names").
 *
 * It walks the backing tree as the file checks do (depth first, not
 * following symlinks, not crossing into other filesystems), through the
 * backing interface by path (sc_backing.h: a directory's or a GlusterFS
 * volume's alike), but directory by directory, since a name means something only under its directory's
 * nonce and a long name only beside its side file.  In each directory:
 *   - the directory has a valid nonce record: the xattr SC_DIRNONCE_XATTR,
 *     or on a volume that keeps nonces in files (aes-gcm; or a root that
 *     has a nonce file and no xattr record) its file SC_DIRNONCE_FILE,
 *     whose contents are file data encrypted by the layer below the names
 *     layer (read_small).  Only the root of a volume that holds nothing
 *     yet may lack one, and in the file form any directory that holds no
 *     names (the mount gives it a new one: what a crash inside rmdir
 *     leaves);
 *   - every entry is classified by its shape (sc_name_kind): a SHORT name
 *     decrypts under the directory's nonce; a LONG name has its side file,
 *     whose contents (file data, encrypted by the crypt layer like any
 *     file's) hash to the entry's name and decrypt; a SIDE file without
 *     its long name is an orphan and a TMP directory the leftover of an
 *     interrupted mkdir (what a kill -9 leaves: --repair removes them, a
 *     TMP directory only when empty); anything else is not a stackcrypt
 *     name and is never removed;
 *   - every symlink's target decrypts (sc_link_decrypt); with bound targets
 *     (SC_FEAT_LINKS_BOUND) it opens at its own place (sc_link_open: one
 *     bound to another entry is rebound by --repair), a long one's marker
 *     matches its side file, and a LINKSIDE file no link uses is a crash's
 *     leftover (--repair removes it).
 * The mount hides each entry reported here (and logs it once per
 * directory); the messages name the backing path and, where the names
 * above it decrypt, the path in the mount.  The mount path of every
 * regular file is kept (sc_fsck_plain_path) for the file checks that
 * follow, so their messages name it too.
 *
 * What the volume tools put in the backing tree is not a name and is
 * passed over: the config and its temporary copies and an ext4
 * lost+found in the root, fsck's own quarantined files and re-key
 * leftovers (the file checks report those).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sc_crypto.h"
#include "sc_volume.h"
#include "sc_cli.h"
#include "fsck_i.h"
#include "sc_backing.h"
#include "sc_journal.h"	/* SC_JRNL_NAME */

#define PLAIN_PATH_MAX	(4 * PATH_MAX)	/* escaped plaintext path of a message */
/* Encrypted names are longer than plaintext ones: a backing path outgrows PATH_MAX first. */
#define REL_PATH_MAX	(4 * PATH_MAX)

/* One directory entry, as readdir gave it. */
struct nent {
	char		*name;
};

/* A directory's nonce, for the check that no two directories share one. */
struct seen_nonce {
	uint8_t		nonce[SC_DIRNONCE_LEN];
	char		*rel;
};

struct nwalk {
	struct fsck	*f;
	struct sc_nkey	*nk;
	bool		nonce_file;		/* nonce records in SC_DIRNONCE_FILE files */
	bool		links_bound;		/* SC_FEAT_LINKS_BOUND: targets bound, long ones in side files */
	struct seen_nonce *seen;		/* every directory's nonce */
	size_t		nseen, capseen;
	dev_t		dev;
	char		rel[REL_PATH_MAX];	/* of the entry at hand, from BACKING */
	size_t		dir_len;		/* rel[0..dir_len): its directory */
	char		plain[PLAIN_PATH_MAX];	/* its directory in the mount, escaped */
	bool		plain_known;		/* every name above decrypted */
};

/*
 * A plaintext name as a message may print it: bytes below 0x20, 0x7f and
 * the backslash as \xNN (a name may hold any byte but '/' and NUL, a
 * newline too).  Appends to w->plain after a '/'; false if it does not fit.
 */
static bool plain_push(struct nwalk *w, size_t at, const char *name, size_t len)
{
	size_t i, o = at;

	if (o + 1 >= sizeof(w->plain))
		return false;
	w->plain[o++] = '/';
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (o + 5 >= sizeof(w->plain))
			return false;
		if (c < 0x20 || c == 0x7f || c == '\\')
			o += (size_t)snprintf(w->plain + o, 5, "\\x%02x", c);
		else
			w->plain[o++] = (char)c;
	}
	w->plain[o] = 0;
	return true;
}

/*
 * Where the entry at hand is in the mount, for a message: " (in the
 * mount: /a/b)" when own_name (w->plain is the entry's path), " (in the
 * mount's directory: /a)" when only its directory's path is known.
 */
static const char *where(const struct nwalk *w, char *buf, size_t len, bool own_name)
{
	if (!w->plain_known)
		return "";
	snprintf(buf, len, " (in the mount%s: %s)", own_name ? "" : "'s directory",
		 w->plain[0] ? w->plain : "/");
	return buf;
}

/* Reports the entry at hand (w->rel).  0 or -ENOMEM. */
static int report(struct nwalk *w, const char *what, const char *why, bool own_name)
{
	char at[PLAIN_PATH_MAX + 64];
	int r;

	r = sc_fsck_problem(w->f, w->rel, false, "%s%s%s", what, why,
			    where(w, at, sizeof(at), own_name));
	if (!r)
		w->f->bad[w->f->nbad - 1].name = true;
	return r;
}

static int nent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct nent *)a)->name, ((const struct nent *)b)->name);
}

static bool has_entry(const struct nent *ents, size_t n, const char *name)
{
	struct nent key = { .name = (char *)name };

	/* An empty directory has no array: bsearch must not see a NULL base. */
	return n > 0 && bsearch(&key, ents, n, sizeof(*ents), nent_cmp) != NULL;
}

/*
 * Whether ents holds a name that starts with prefix (ents sorted): the
 * first entry not below prefix is the only candidate.
 */
static bool has_prefix(const struct nent *ents, size_t n, const char *prefix)
{
	size_t lo = 0, hi = n, len = strlen(prefix);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ents[mid].name, prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strncmp(ents[lo].name, prefix, len);
}

static void nents_free(struct nent *ents, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(ents[i].name);
	free(ents);
}

/*
 * Whether name is something the volume tools keep in the backing tree,
 * not a name of the mount: the config and its temporary copies, the
 * mount lock, the gcm layer's crash journal and an ext4 lost+found (root
 * only), fsck's quarantined files and re-key
 * leftovers (the file checks count and report those).
 */
static bool tools_name(const char *name, bool root)
{
	if (root && (!strcmp(name, SC_CONFIG_NAME) || !strcmp(name, SC_LOCK_NAME) ||
		     !strcmp(name, "lost+found") || !strcmp(name, SC_JRNL_NAME) ||
		     !strncmp(name, SC_VOL_TMP_PREFIX, strlen(SC_VOL_TMP_PREFIX))))
		return true;
	return strstr(name, QUARANTINE_TAG) || !strncmp(name, REKEY_TAG, strlen(REKEY_TAG));
}

struct nents {
	struct nent	*ents;
	size_t		n, cap;
};

/* Adds name to l.  0 or -ENOMEM. */
static int nent_add(void *ctx, const char *name)
{
	struct nents *l = ctx;
	struct nent *ne;

	ne = sc_fsck_room(l->ents, &l->cap, l->n, sizeof(*ne), 64);
	if (!ne)
		return -ENOMEM;
	l->ents = ne;
	l->ents[l->n].name = strdup(name);
	if (!l->ents[l->n].name)
		return -ENOMEM;
	l->n++;
	return 0;
}

/*
 * The entries of the directory w->rel but "." and "..", sorted by name.
 * 0 or -errno.
 */
static int read_entries(struct nwalk *w, struct nent **out, size_t *nout)
{
	struct nents l = { 0 };
	int r;

	r = sc_backing_list(w->f->b, w->rel, nent_add, &l);
	if (r) {
		nents_free(l.ents, l.n);
		return r;
	}
	if (l.n)
		qsort(l.ents, l.n, sizeof(*l.ents), nent_cmp);
	*out = l.ents;
	*nout = l.n;
	return 0;
}

/*
 * name in the directory at hand (w->rel[0..w->dir_len)) as a path from
 * BACKING, for the backing's calls, into buf (REL_PATH_MAX bytes).
 * buf, or NULL when it does not fit.
 */
static const char *in_dir(const struct nwalk *w, const char *name, char *buf)
{
	int n = snprintf(buf, REL_PATH_MAX, "%.*s%s%s", (int)w->dir_len, w->rel,
			 w->dir_len ? "/" : "", name);

	return n < 0 || n >= REL_PATH_MAX ? NULL : buf;
}

/*
 * The contents of a file the names layer writes through the layer below
 * it (a side file, a nonce file) in the directory at hand, decrypted as
 * that layer stores file data (sc_vol_read_small), into buf: 1..max bytes
 * (max <= SC_LINK_BOUND_ENC_MAX + 1).  Its length, or -1 with why set.
 */
static int read_small(struct nwalk *w, const char *name, void *buf, size_t max,
		      char *why, size_t whylen)
{
	char path[REL_PATH_MAX];
	ssize_t r;

	if (!in_dir(w, name, path)) {
		snprintf(why, whylen, "cannot open it: %s", strerror(ENAMETOOLONG));
		return -1;
	}
	r = sc_vol_read_small(w->f->b, w->f->vol->mkey, path, buf, max, why, whylen);
	return r < 0 ? -1 : (int)r;
}

/*
 * The encoded name a long name's side file holds, decrypted as file data
 * with the volume's keys, into enc (SC_NAME_ENC_MAX + 1 bytes).  Its
 * length, or -1 with why set.
 */
static int read_side(struct nwalk *w, const char *side, char *enc, char *why,
		     size_t whylen)
{
	int len = read_small(w, side, enc, SC_NAME_ENC_MAX, why, whylen);

	if (len >= 0)
		enc[len] = 0;
	return len;
}

/*
 * A long name (w->rel): its side file is there, hashes
 * to the name and decrypts.  The plaintext into plain (SC_NAME_PLAIN_MAX +
 * 1 bytes), the encoded name into enc (SC_NAME_ENC_MAX + 1): its length,
 * 0 after reporting the entry, or -ENOMEM.
 */
static int check_long(struct nwalk *w, const char *name, const struct nent *ents,
		      size_t n, const uint8_t *nonce, char *plain, char *enc)
{
	char side[SC_NAME_LONG_LEN + sizeof(SC_NAME_SIDE_SUFFIX)];
	char why[128], msg[256], lf[SC_NAME_LONG_LEN + 1];
	int len, r;

	snprintf(side, sizeof(side), "%s%s", name, SC_NAME_SIDE_SUFFIX);
	if (!has_entry(ents, n, side)) {
		snprintf(msg, sizeof(msg), "long name without its side file %s", side);
		return report(w, msg, ": the mount hides it", false);
	}
	len = read_side(w, side, enc, why, sizeof(why));
	if (len < 0) {
		snprintf(msg, sizeof(msg), "the side file %s of this long name is unusable (%s)",
			 side, why);
		return report(w, msg, ": the mount hides it", false);
	}
	if (sc_name_long(enc, (size_t)len, lf) || strcmp(lf, name))
		return report(w, "the side file of this long name holds another name (its "
			      "hash is not this entry's name)", ": the mount hides it", false);
	if (!nonce)
		return 0;	/* the directory's record was reported */
	r = sc_name_decrypt(w->nk, nonce, enc, (size_t)len, plain);
	if (r > 0)
		return r;
	return report(w, "the name in this long name's side file does not decrypt under "
		      "its directory's nonce (edited, or moved from another directory)",
		      ": the mount hides it", false);
}

/*
 * Marks the problem just reported as one --repair fixes by giving the link
 * the backing target relink (and first moving the side file replacement
 * side_new, if not NULL, over side: names in the directory at hand).
 * 0 or -ENOMEM.
 */
static int set_relink(struct nwalk *w, const char *relink, const char *side_new,
		      const char *side)
{
	struct bad_file *bf = &w->f->bad[w->f->nbad - 1];
	char a[REL_PATH_MAX], b[REL_PATH_MAX];

	bf->relink = strdup(relink);
	if (!bf->relink)
		return -ENOMEM;
	if (!side_new)
		return 0;
	if (!in_dir(w, side_new, a) || !in_dir(w, side, b))
		return 0;	/* no room: reported, not repaired */
	bf->lside_new = strdup(a);
	bf->lside = strdup(b);
	return bf->lside_new && bf->lside ? 0 : -ENOMEM;
}

/*
 * A long target's side file (or its replacement, when new) of the link at
 * place into buf (SC_LINK_BOUND_ENC_MAX + 2 bytes): its length, or -1 with
 * why set (missing or unusable).
 */
static int read_lside(struct nwalk *w, const struct sc_dirplace *place, bool new, char *buf,
		      char *side, char *why, size_t whylen)
{
	int n;

	if (sc_name_long(place->enc, place->enc_len, side)) {
		snprintf(why, whylen, "cannot hash its name");
		return -1;
	}
	strcpy(side + SC_NAME_LONG_LEN, new ? SC_LINK_SIDE_NEW : SC_LINK_SIDE_SUFFIX);
	n = read_small(w, side, buf, SC_LINK_BOUND_ENC_MAX, why, whylen);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

/* Opens the stored target enc (n bytes) at place: sc_link_open's answer. */
static int open_at(struct nwalk *w, const char *enc, int n, const struct sc_dirplace *place)
{
	char *plain = malloc(SC_LINK_BOUND_PLAIN_MAX + 1);
	int r = plain ? sc_link_open(w->nk, enc, (size_t)n, place, plain) : -ENOMEM;

	if (plain)
		sc_wipe(plain, SC_LINK_BOUND_PLAIN_MAX + 1);
	free(plain);
	return r;
}

static const char bound_elsewhere[] = "symlink target bound to another entry: a crash "
				      "during a rename, or a copied target";
static const char mount_fails[] = ": reading the link through the mount fails";

/*
 * A marker (mark) of a long bound target at place: its side file is there,
 * matches it and opens there.  A rename that crashed after moving the link
 * left a side file (or its replacement) that opens here but another
 * marker: --repair points the link at it.  0 (also after reporting it) or
 * -ENOMEM.
 */
static int check_long_link(struct nwalk *w, bool plain_name, const struct sc_dirplace *place,
			   const char *mark)
{
	char side[SC_NAME_LONG_LEN + 16], side_new[SC_NAME_LONG_LEN + 16], why[128], msg[320];
	char want[SC_LINK_MARK_LEN + 1], *buf = malloc(SC_LINK_BOUND_ENC_MAX + 2);
	int n, r;

	if (!buf)
		return -ENOMEM;
	n = read_lside(w, place, false, buf, side, why, sizeof(why));
	if (n >= 0 && !sc_link_mark(buf, (size_t)n, want) && !strcmp(want, mark)) {
		r = open_at(w, buf, n, place);
		free(buf);
		if (r > 0 || r == -ENOMEM)
			return r > 0 ? 0 : r;
		return report(w, r == -ESTALE ? bound_elsewhere : "symlink target does not "
			      "decrypt (edited in the backing directory?)", r == -ESTALE ?
			      ": reading the link through the mount fails; --repair cannot "
			      "rebind a long target whose side file is bound elsewhere" :
			      mount_fails, plain_name);
	}
	/* The rename's new side file if it is there, else the side file: one that opens here. */
	n = read_lside(w, place, true, buf, side_new, why, sizeof(why));
	r = n >= 0;
	if (!r)
		n = read_lside(w, place, false, buf, side, why, sizeof(why));
	if (n > 0 && open_at(w, buf, n, place) > 0 && !sc_link_mark(buf, (size_t)n, want)) {
		free(buf);
		r = report(w, bound_elsewhere, ": a rename's new side file is ready; --repair "
			   "points the link at it", plain_name) ?: set_relink(w, want, r ? side_new :
									  NULL, side);
		return r;
	}
	free(buf);
	snprintf(msg, sizeof(msg), "the side file %s of this symlink's long target is missing, "
		 "unusable or holds another target", side);
	return report(w, msg, mount_fails, plain_name);
}

/*
 * A symlink's target decrypts; on a volume with bound targets (place: the
 * link's directory nonce and encoded name; NULL if unknown) it opens at
 * its place (--repair rebinds one bound to another entry), and a marker's
 * side file is there and matches it.  0 (also after reporting it) or
 * -ENOMEM.
 */
static int check_link(struct nwalk *w, bool plain_name, const struct sc_dirplace *place)
{
	char enc[SC_LINK_ENC_MAX + 2], why[128], *plain, *sealed;
	ssize_t n;
	int r;

	n = sc_backing_readlink(w->f->b, w->rel, enc, sizeof(enc));
	if (n < 0) {
		snprintf(why, sizeof(why), ": %s", strerror((int)-n));
		return report(w, "cannot read the symlink", why, plain_name);
	}
	if (!w->links_bound) {
		char old[SC_LINK_PLAIN_MAX + 1];

		if ((size_t)n <= SC_LINK_ENC_MAX && sc_link_decrypt(w->nk, enc, (size_t)n, old) > 0)
			return 0;
		return report(w, "symlink target does not decrypt (edited in the backing "
			      "directory?)", mount_fails, plain_name);
	}
	if (!place || !place->parent)
		return 0;	/* its name or directory was reported */
	if ((size_t)n > SC_LINK_ENC_MAX)
		return report(w, "symlink target longer than any stored one", mount_fails,
			      plain_name);
	enc[n] = 0;
	if (sc_link_is_mark(enc, (size_t)n))
		return check_long_link(w, plain_name, place, enc);
	r = open_at(w, enc, (int)n, place);
	if (r > 0 || r == -ENOMEM)
		return r > 0 ? 0 : r;
	if (r != -ESTALE)
		return report(w, "symlink target does not decrypt (edited in the backing "
			      "directory?)", mount_fails, plain_name);
	/* Bound elsewhere: sealed again for this entry, for --repair. */
	plain = malloc(SC_LINK_BOUND_PLAIN_MAX + 1);
	sealed = malloc(SC_LINK_BOUND_ENC_MAX + 1);
	r = plain && sealed ? sc_link_open(w->nk, enc, (size_t)n, NULL, plain) : -ENOMEM;
	if (r > 0)
		r = sc_link_seal(w->nk, plain, (size_t)r, place, sealed);
	if (plain)
		sc_wipe(plain, SC_LINK_BOUND_PLAIN_MAX + 1);
	free(plain);
	if (r == -ENOMEM) {
		free(sealed);
		return r;
	}
	/* A target opens elsewhere only if it was short there: it is short here too. */
	if (r > 0 && r <= SC_LINK_ENC_MAX)
		r = report(w, bound_elsewhere, ": reading the link through the mount fails; "
			   "--repair rebinds it", plain_name) ?: set_relink(w, sealed, NULL, NULL);
	else
		r = report(w, bound_elsewhere, mount_fails, plain_name);
	free(sealed);
	return r;
}

/*
 * Whether one of the entries ents[0..n) whose encoded name's long form
 * name begins with (a long name is that long form itself) has the file
 * type type (S_IFLNK, S_IFREG).
 */
static bool long_form_of(struct nwalk *w, const char *name, const struct nent *ents, size_t n,
			 mode_t type)
{
	char lf[SC_NAME_LONG_LEN + 1], path[REL_PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(ents[i].name);

		if (sc_name_kind(ents[i].name, len) == SC_NAME_KIND_LONG)
			memcpy(lf, ents[i].name, SC_NAME_LONG_LEN + 1);
		else if (sc_name_kind(ents[i].name, len) != SC_NAME_KIND_SHORT ||
			 sc_name_long(ents[i].name, len, lf))
			continue;
		if (strncmp(lf, name, SC_NAME_LONG_LEN) || !in_dir(w, ents[i].name, path))
			continue;
		if (sc_backing_lstat(w->f->b, path, &st) == 0 && (st.st_mode & S_IFMT) == type)
			return true;
	}
	return false;
}

/*
 * A long target's side file (name) in a directory whose entries are ents:
 * its link is the entry whose encoded name's long form the side file's
 * name begins with (a long name is that long form itself).  A side file
 * no symlink uses is a crash's leftover (--repair removes it), a
 * replacement (SC_LINK_SIDE_NEW) too.  0 or -ENOMEM.
 */
static int check_lside(struct nwalk *w, const char *name, const struct nent *ents, size_t n)
{
	int r;

	if (strcmp(name + SC_NAME_LONG_LEN, SC_LINK_SIDE_SUFFIX) == 0 &&
	    long_form_of(w, name, ents, n, S_IFLNK))
		return 0;	/* checked with its link */
	r = report(w, "side file of a long symlink target that no link uses (left by a "
		   "crash)", ": --repair removes it", false);
	if (!r)
		w->f->bad[w->f->nbad - 1].leftover = true;
	return r;
}

/*
 * A binding record (integrity volumes, format.md 11.5) in a directory
 * whose entries are ents: checked with the regular file it is named for
 * (fsck.c, when that file is a hard link's); one whose name is gone is
 * what a link, unlink or rename cut short leaves (--repair removes it).
 * 0 or -ENOMEM.
 */
static int check_bind(struct nwalk *w, const char *name, const struct nent *ents, size_t n)
{
	int r;

	if (long_form_of(w, name, ents, n, S_IFREG))
		return 0;
	r = report(w, "binding record of a name that does not exist (left by a link, unlink "
		   "or rename cut short)", ": the mount hides it; --repair removes it", false);
	if (!r)
		w->f->bad[w->f->nbad - 1].leftover = true;
	return r;
}

static int check_dir(struct nwalk *w, size_t rel_len, size_t plain_len,
		     const struct sc_dirplace *at);

/*
 * Remembers the mount path of the regular file at hand, for the file
 * checks' messages, and its place (at, when known) for integrity volumes.
 */
static int plain_add(struct nwalk *w, const struct sc_dirplace *at)
{
	return sc_fsck_plain_add(w->f, w->rel, w->plain, at);
}

/* check_side's and check_tmp's answer for an entry the mount never makes. */
#define NOT_OURS	1

/*
 * The side file name (of kind SC_NAME_KIND_SIDE, nlen bytes) in the
 * directory at hand, whose entries are ents[0..n): checked with its long
 * name when that exists, else a crash's leftover.  0, -errno, or NOT_OURS.
 */
static int check_side(struct nwalk *w, const char *name, size_t nlen, const struct nent *ents,
		      size_t n, const struct stat *st)
{
	char lname[NAME_MAX + 1];
	int r;

	snprintf(lname, sizeof(lname), "%.*s", (int)(nlen - strlen(SC_NAME_SIDE_SUFFIX)), name);
	if (has_entry(ents, n, lname))
		return 0;	/* checked with its long name */
	/*
	 * Its long name was quarantined by an earlier --repair
	 * (LONG.stackcrypt-quarantine-N): the side file is all that says
	 * what that file was called.  Kept, not a leftover.
	 */
	strcat(lname, QUARANTINE_TAG);
	if (has_prefix(ents, n, lname))
		return 0;
	if (!S_ISREG(st->st_mode))
		return NOT_OURS;	/* the mount makes none: not a crash's leftover */
	r = report(w, "side file of a long name that does not exist (left by a crash)",
		   ": --repair removes it", false);
	if (!r)
		w->f->bad[w->f->nbad - 1].leftover = true;
	return r;
}

/*
 * An entry under a temporary name (SC_NAME_KIND_TMP): only mkdir and a
 * bound link's rebind after a rename make them, and a crash leaves them.
 * 0, -errno, or NOT_OURS.
 */
static int check_tmp(struct nwalk *w, const struct stat *st)
{
	int r;

	if (S_ISDIR(st->st_mode)) {
		r = report(w, "directory left by an interrupted mkdir (killed before it got "
			   "its name)", ": the mount hides it; --repair removes it (and its nonce file)",
			   false);
		if (!r)
			w->f->bad[w->f->nbad - 1].tmpdir = true;
		return r;	/* never named: nothing in it was ever visible */
	}
	if (S_ISLNK(st->st_mode) && w->links_bound) {
		r = report(w, "symlink left by an interrupted rename (killed before it replaced "
			   "the renamed link)", ": the mount hides it; --repair removes it", false);
		if (!r)
			w->f->bad[w->f->nbad - 1].leftover = true;
		return r;
	}
	return NOT_OURS;
}

/*
 * One entry (w->rel set) of its directory, whose nonce is nonce (NULL:
 * the directory has none).  0 or -errno to stop.
 */
static int check_entry(struct nwalk *w, const char *name, const struct nent *ents,
		       size_t n, const uint8_t *nonce, size_t rel_len, size_t plain_len)
{
	size_t nlen = strlen(name), at = rel_len + nlen + !!rel_len;
	char plain[SC_NAME_PLAIN_MAX + 1], enc[SC_NAME_ENC_MAX + 1];
	struct sc_dirplace place = { nonce, name, nlen };
	bool known = false, own, was_known = w->plain_known;
	struct stat st;
	int r = 0;

	r = sc_backing_lstat(w->f->b, w->rel, &st);
	if (r)
		return r == -ENOENT ? 0 : report(w, "cannot stat", "", false);
	switch (sc_name_kind(name, nlen)) {
	case SC_NAME_KIND_SHORT:
		if (!nonce)
			break;
		r = sc_name_decrypt(w->nk, nonce, name, nlen, plain);
		if (r > 0)
			known = true;
		else
			r = report(w, "name does not decrypt under its directory's nonce "
				   "(edited, or moved from another directory)",
				   ": the mount hides it", false);
		break;
	case SC_NAME_KIND_LONG:
		r = check_long(w, name, ents, n, nonce, plain, enc);
		known = r > 0;
		place.enc = enc;
		place.enc_len = strlen(enc);
		break;
	case SC_NAME_KIND_SIDE:
		r = check_side(w, name, nlen, ents, n, &st);
		if (r != NOT_OURS)
			return r;
		goto other;
	case SC_NAME_KIND_TMP:
		r = check_tmp(w, &st);
		if (r != NOT_OURS)
			return r;
		goto other;
	case SC_NAME_KIND_LINKSIDE:
		if (w->links_bound && S_ISREG(st.st_mode))
			return check_lside(w, name, ents, n);
		goto other;
	case SC_NAME_KIND_NONCE:
		if (w->nonce_file)
			return 0;	/* checked with its directory */
		goto other;
	case SC_NAME_KIND_BIND:
		if (w->f->vol->ikey && S_ISLNK(st.st_mode))
			return check_bind(w, name, ents, n);
		goto other;
	case SC_NAME_KIND_OTHER:
other:
		r = report(w, "not a stackcrypt name (put into the backing directory by "
			   "hand?)", ": the mount hides it; fsck never removes it", false);
		break;
	}
	if (r < 0)
		return r;
	r = 0;
	/* w->plain: the entry's path when its name and all above decrypted, else its directory's */
	own = was_known && known && plain_push(w, plain_len, plain, strlen(plain));
	if (S_ISLNK(st.st_mode))
		r = check_link(w, own, known ? &place : NULL);
	if (S_ISREG(st.st_mode) && own)
		r = plain_add(w, known ? &place : NULL);
	if (!r && S_ISDIR(st.st_mode) && st.st_dev == w->dev) {
		w->plain_known = own;
		/* its place is known when its name decrypted in a directory with a nonce */
		r = check_dir(w, at, own ? strlen(w->plain) : plain_len, known ? &place : NULL);
	}
	w->plain_known = was_known;
	w->plain[plain_len] = 0;
	w->rel[rel_len] = 0;
	return r;
}

/* Remembers the nonce of the directory at hand (w->rel).  0 or -ENOMEM. */
static int seen_add(struct nwalk *w, const uint8_t *nonce)
{
	struct seen_nonce *sn;

	sn = sc_fsck_room(w->seen, &w->capseen, w->nseen, sizeof(*sn), 64);
	if (!sn)
		return -ENOMEM;
	w->seen = sn;
	sn = &w->seen[w->nseen];
	memcpy(sn->nonce, nonce, SC_DIRNONCE_LEN);
	sn->rel = strdup(w->rel);
	if (!sn->rel)
		return -ENOMEM;
	w->nseen++;
	return 0;
}

static int seen_cmp(const void *a, const void *b)
{
	const struct seen_nonce *x = a, *y = b;
	int c = memcmp(x->nonce, y->nonce, SC_DIRNONCE_LEN);

	return c ? c : strcmp(x->rel, y->rel);
}

/*
 * Directories that share a nonce (a record, or on aes-gcm a whole nonce
 * file with its file id, copied from one to another): every one after the
 * first of each group is reported, naming the first.  Nonces are random,
 * so two directories never share one by chance.  0 or -ENOMEM.
 */
static int seen_report(struct nwalk *w)
{
	size_t i, first = 0;
	int r = 0;

	if (w->nseen)
		qsort(w->seen, w->nseen, sizeof(*w->seen), seen_cmp);
	for (i = 1; i < w->nseen && !r; i++) {
		if (memcmp(w->seen[i].nonce, w->seen[first].nonce, SC_DIRNONCE_LEN)) {
			first = i;
			continue;
		}
		r = sc_fsck_problem(w->f, w->seen[i].rel, false, "directory has the same name "
				    "nonce as %s/ (its record copied from there, or the other way): "
				    "names moved between them read in both",
				    w->seen[first].rel[0] ? w->seen[first].rel : ".");
		if (!r)
			w->f->bad[w->f->nbad - 1].name = true;
	}
	for (i = 0; i < w->nseen; i++)
		free(w->seen[i].rel);
	free(w->seen);
	return r;
}

/*
 * The directory at w->rel[0..rel_len), in the mount at w->plain[0..plain_len),
 * found at the place at (its parent's nonce and its encoded name; the
 * root: no parent; NULL: not known, as its name or its parent's record
 * was reported): its nonce record, then every entry.  0 or -errno.
 */
static int check_dir(struct nwalk *w, size_t rel_len, size_t plain_len,
		     const struct sc_dirplace *at)
{
	const bool root = rel_len == 0;
	uint8_t nonce[SC_DIRNONCE_LEN];
	const uint8_t *np = nonce;
	struct nent *ents = NULL;
	size_t n = 0, i, names = 0;
	char why[224];
	bool copy;
	int r;

	r = read_entries(w, &ents, &n);
	if (r < 0) {
		return r == -ENOMEM ? r : report(w, "cannot read directory: ", strerror(-r),
						 w->plain_known);
	}
	w->dir_len = rel_len;
	for (i = 0; i < n; i++)
		names += !tools_name(ents[i].name, root) &&
			 !(w->nonce_file && (!strcmp(ents[i].name, SC_DIRNONCE_FILE) ||
					     !strcmp(ents[i].name, SC_DIRLIST_FILE)));
	r = sc_vol_dir_nonce(w->f->b, w->f->vol, w->nk, w->nonce_file, w->rel, at, nonce, &copy,
			     why, sizeof(why) - 64);
	if (!r && copy)
		sc_fsck_note(w->f, w->rel[0] ? w->rel : ".", "its nonce file " SC_DIRNONCE_FILE
			     " is missing, empty or damaged (as a crash leaves it before it "
			     "reached the disk); the copy in its xattr answers, and the next "
			     "mount writes the file again");
	if (!r) {
		r = seen_add(w, nonce);
		if (r == -ENOMEM)
			goto out;
	}
	if (r) {
		np = NULL;
		/*
		 * The root gets its record at init or at the first mount; in
		 * the file form, the mount gives any directory that holds no
		 * names a new one.
		 */
		if ((!root && !w->nonce_file) || names) {
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "): the mount "
				 "can neither read nor make names in it");
			r = report(w, w->nonce_file ? "directory has no valid name nonce file "
				   SC_DIRNONCE_FILE " (" : "directory has no valid name nonce "
				   SC_DIRNONCE_XATTR " (", why, w->plain_known);
			if (r < 0)
				goto out;
		}
	}
	r = 0;
	for (i = 0; i < n && r >= 0; i++) {
		const char *name = ents[i].name;

		if (tools_name(name, root))
			continue;
		if (rel_len + strlen(name) + 2 > sizeof(w->rel)) {
			r = -ENAMETOOLONG;
			break;
		}
		snprintf(w->rel + rel_len, sizeof(w->rel) - rel_len, "%s%s", rel_len ? "/" : "",
			 name);
		w->dir_len = rel_len;	/* a directory checked before moved it */
		r = check_entry(w, name, ents, n, np, rel_len, plain_len);
	}
	w->rel[rel_len] = 0;
	if (r >= 0 && np) {
		char in_mnt[PLAIN_PATH_MAX + 64];

		w->plain[plain_len] = 0;
		r = sc_fsck_list_check(w->f, w->nk, w->rel, np,
				       where(w, in_mnt, sizeof(in_mnt), true));
	}
out:
	nents_free(ents, n);
	w->rel[rel_len] = 0;
	return r < 0 ? r : 0;
}

int sc_fsck_names(struct fsck *f)
{
	static const struct sc_dirplace root = { 0 };
	struct nwalk *w;
	struct stat st;
	int r;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->f = f;
	w->plain_known = true;
	w->links_bound = f->vol->cfg.features & SC_FEAT_LINKS_BOUND;
	r = sc_nkey_new(f->vol->mkey, &w->nk);
	if (r)
		goto out_free;
	r = sc_backing_lstat(f->b, "", &st);
	if (r)
		goto out_free_nk;
	w->dev = st.st_dev;
	w->nonce_file = sc_vol_nonce_in_file(f->b, f->vol->mkey);
	r = check_dir(w, 0, 0, &root);
	if (r == 0)
		r = seen_report(w);
	else
		seen_report(w);	/* frees the list */
	if (r == 0)
		sc_fsck_plain_sort(f);
out_free_nk:
	sc_nkey_free(w->nk);
out_free:
	free(w);
	return r;
}
