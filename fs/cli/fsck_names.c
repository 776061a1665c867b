/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck_names.c - the name checks of "stackcrypt fsck" on a volume whose
 * names are encrypted (SC_FEAT_NAMES; docs/format.md, "Names").
 *
 * It walks the backing tree as the file checks do (depth first, not
 * following symlinks, not crossing into other filesystems), but directory
 * by directory, since a name means something only under its directory's
 * nonce and a long name only beside its side file.  In each directory:
 *   - the directory has a valid nonce record (SC_DIRNONCE_XATTR); only the
 *     root of a volume that holds nothing yet may lack one;
 *   - every entry is classified by its shape (sc_name_kind): a SHORT name
 *     decrypts under the directory's nonce; a LONG name has its side file,
 *     whose contents (file data, encrypted by the crypt layer like any
 *     file's) hash to the entry's name and decrypt; a SIDE file without
 *     its long name is an orphan and a TMP directory the leftover of an
 *     interrupted mkdir (what a kill -9 leaves: --repair removes them, a
 *     TMP directory only when empty); anything else is not a stackcrypt
 *     name and is never removed;
 *   - every symlink's target decrypts (sc_link_decrypt).
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
#include "volume_i.h"
#include "cli_i.h"
#include "fsck_i.h"

#define PLAIN_PATH_MAX	(4 * PATH_MAX)	/* escaped plaintext path of a message */
/* Encrypted names are longer than plaintext ones: a backing path outgrows PATH_MAX first. */
#define REL_PATH_MAX	(4 * PATH_MAX)
#define HDR_BUF		256		/* more than SC_HDR_MAX: oversize headers show */

/* One directory entry, as readdir gave it. */
struct nent {
	char		*name;
	unsigned char	type;	/* d_type; DT_UNKNOWN is resolved by fstatat */
};

struct nwalk {
	struct fsck	*f;
	struct sc_nkey	*nk;
	dev_t		dev;
	char		rel[REL_PATH_MAX];	/* of the entry at hand, from BACKING */
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

	return bsearch(&key, ents, n, sizeof(*ents), nent_cmp) != NULL;
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
 * not a name of the mount: the config and its temporary copies and an
 * ext4 lost+found (root only), fsck's quarantined files and re-key
 * leftovers (the file checks count and report those).
 */
static bool tools_name(const char *name, bool root)
{
	if (root && (!strcmp(name, SC_CONFIG_NAME) || !strcmp(name, "lost+found") ||
		     !strncmp(name, SC_VOL_TMP_PREFIX, strlen(SC_VOL_TMP_PREFIX))))
		return true;
	return strstr(name, QUARANTINE_TAG) || !strncmp(name, REKEY_TAG, strlen(REKEY_TAG));
}

/*
 * The entries of the directory d, but "." and "..", sorted by name.  0 or
 * -errno.
 */
static int read_entries(DIR *d, struct nent **out, size_t *nout)
{
	struct nent *ents = NULL, *ne;
	size_t n = 0, cap = 0;
	struct dirent *de;

	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			ne = realloc(ents, cap * sizeof(*ents));
			if (!ne)
				goto err_nomem;
			ents = ne;
		}
		ents[n].name = strdup(de->d_name);
		if (!ents[n].name)
			goto err_nomem;
		ents[n++].type = de->d_type;
	}
	if (errno) {
		int e = -errno;

		nents_free(ents, n);
		return e;
	}
	if (n)
		qsort(ents, n, sizeof(*ents), nent_cmp);
	*out = ents;
	*nout = n;
	return 0;

err_nomem:
	nents_free(ents, n);
	return -ENOMEM;
}

/*
 * read_side on an aes-gcm volume: the side file (open as fd, st_size size)
 * is a file of that format (docs/format.md 10), its header inside it.  An
 * encoded name fits one unit (SC_NAME_ENC_MAX < the smallest block size).
 * Its length, or -1 with why set.
 */
static int read_side_gcm(struct nwalk *w, int fd, uint64_t size, char *enc, char *why,
			 size_t whylen)
{
	uint8_t st[SC_GHDR_SIZE + SC_NAME_ENC_MAX + SC_GCM_OVERHEAD];
	struct sc_gkey *gk;
	uint64_t plain;
	size_t got;
	int n;

	if (sc_gcm_plain_size(w->f->bs, size, &plain) || plain < 1 || plain > SC_NAME_ENC_MAX) {
		snprintf(why, whylen, "it holds %llu bytes, not an encrypted name",
			 (unsigned long long)size);
		return -1;
	}
	if (sc_fsck_read_full(fd, st, (size_t)size, 0, &got)) {
		snprintf(why, whylen, "its contents cannot be read");
		return -1;
	}
	if (sc_gkey_new(w->f->vol->mkey, st, SC_GHDR_SIZE, &gk)) {
		snprintf(why, whylen, "its header does not verify");
		return -1;
	}
	n = sc_gcm_open(gk, 0, st + SC_GHDR_SIZE, (size_t)size - SC_GHDR_SIZE, enc, NULL);
	sc_gkey_free(gk);
	if (n != (int)plain) {
		snprintf(why, whylen, "its contents fail their authentication tag");
		return -1;
	}
	enc[n] = 0;
	return n;
}

/*
 * The encoded name a long name's side file holds, decrypted as file data
 * with the volume's keys, into enc (SC_NAME_ENC_MAX + 1 bytes).  Its
 * length, or -1 with why set.
 */
static int read_side(struct nwalk *w, int dfd, const char *side, char *enc, char *why,
		     size_t whylen)
{
	uint8_t hdr[HDR_BUF], ct[SC_NAME_ENC_MAX];
	struct sc_fkey *fk;
	struct stat st;
	ssize_t hlen;
	size_t got;
	int fd, r = -1;

	fd = openat(dfd, side, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open it: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "it is not a regular file");
		goto out_close;
	}
	if (sc_mkey_cipher(w->f->vol->mkey) == SC_CIPHER_AES_GCM) {
		r = read_side_gcm(w, fd, (uint64_t)st.st_size, enc, why, whylen);
		goto out_close;
	}
	if (st.st_size < 1 || st.st_size > SC_NAME_ENC_MAX) {
		snprintf(why, whylen, "it holds %lld bytes, not an encrypted name",
			 (long long)st.st_size);
		goto out_close;
	}
	hlen = fgetxattr(fd, SC_HDR_XATTR, hdr, sizeof(hdr));
	if (hlen < 0) {
		snprintf(why, whylen, "cannot read its header: %s", strerror(errno));
		goto out_close;
	}
	if (sc_fkey_new(w->f->vol->mkey, hdr, (size_t)hlen, &fk)) {
		snprintf(why, whylen, "its header does not verify");
		goto out_close;
	}
	if (sc_fsck_read_full(fd, ct, (size_t)st.st_size, 0, &got) ||
	    sc_fkey_decrypt(fk, 0, ct, enc, (size_t)st.st_size, (uint64_t)st.st_size)) {
		snprintf(why, whylen, "its contents cannot be read or decrypted");
	} else {
		enc[st.st_size] = 0;
		r = (int)st.st_size;
	}
	sc_fkey_free(fk);
out_close:
	close(fd);
	return r;
}

/*
 * A long name (w->rel, base name in dfd): its side file is there, hashes
 * to the name and decrypts.  The plaintext into plain (SC_NAME_PLAIN_MAX +
 * 1 bytes): its length, 0 after reporting the entry, or -ENOMEM.
 */
static int check_long(struct nwalk *w, int dfd, const char *name, const struct nent *ents,
		      size_t n, const uint8_t *nonce, char *plain)
{
	char side[SC_NAME_LONG_LEN + sizeof(SC_NAME_SIDE_SUFFIX)], enc[SC_NAME_ENC_MAX + 1];
	char why[128], msg[256], lf[SC_NAME_LONG_LEN + 1];
	int len, r;

	snprintf(side, sizeof(side), "%s%s", name, SC_NAME_SIDE_SUFFIX);
	if (!has_entry(ents, n, side)) {
		snprintf(msg, sizeof(msg), "long name without its side file %s", side);
		return report(w, msg, ": the mount hides it", false);
	}
	len = read_side(w, dfd, side, enc, why, sizeof(why));
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

/* A symlink's target decrypts.  0 (also after reporting it) or -ENOMEM. */
static int check_link(struct nwalk *w, int dfd, const char *name, bool plain_name)
{
	char enc[SC_LINK_ENC_MAX + 2], plain[SC_LINK_PLAIN_MAX + 1], why[64];
	ssize_t n;

	n = readlinkat(dfd, name, enc, sizeof(enc));
	if (n < 0) {
		snprintf(why, sizeof(why), ": %s", strerror(errno));
		return report(w, "cannot read the symlink", why, plain_name);
	}
	if ((size_t)n <= SC_LINK_ENC_MAX && sc_link_decrypt(w->nk, enc, (size_t)n, plain) > 0)
		return 0;
	return report(w, "symlink target does not decrypt (edited in the backing directory?)",
		      ": reading the link through the mount fails", plain_name);
}

static int check_dir(struct nwalk *w, int dfd, size_t rel_len, size_t plain_len, bool root);

/* Remembers the mount path of the regular file at hand, for the file checks' messages. */
static int plain_add(struct nwalk *w)
{
	struct fsck *f = w->f;
	struct plain_path *pp;

	if (f->nplain == f->capplain) {
		size_t cap = f->capplain ? 2 * f->capplain : 256;

		pp = realloc(f->plain, cap * sizeof(*pp));
		if (!pp)
			return -ENOMEM;
		f->plain = pp;
		f->capplain = cap;
	}
	pp = &f->plain[f->nplain];
	pp->rel = strdup(w->rel);
	pp->plain = strdup(w->plain);
	if (!pp->rel || !pp->plain) {
		free(pp->rel);
		free(pp->plain);
		return -ENOMEM;
	}
	f->nplain++;
	return 0;
}

static int plain_cmp(const void *a, const void *b)
{
	return strcmp(((const struct plain_path *)a)->rel, ((const struct plain_path *)b)->rel);
}

const char *sc_fsck_plain_path(const struct fsck *f, const char *rel)
{
	struct plain_path key = { .rel = (char *)rel }, *pp;

	if (!f->plain_sorted || !f->nplain)
		return NULL;
	pp = bsearch(&key, f->plain, f->nplain, sizeof(*pp), plain_cmp);
	return pp ? pp->plain : NULL;
}

void sc_fsck_plain_free(struct fsck *f)
{
	size_t i;

	for (i = 0; i < f->nplain; i++) {
		free(f->plain[i].rel);
		free(f->plain[i].plain);
	}
	free(f->plain);
	f->plain = NULL;
	f->nplain = f->capplain = 0;
}

/*
 * One entry (w->rel set) of the directory dfd whose nonce is nonce (NULL:
 * the directory has none).  0 or -errno to stop.
 */
static int check_entry(struct nwalk *w, int dfd, const char *name, const struct nent *ents,
		       size_t n, const uint8_t *nonce, size_t rel_len, size_t plain_len)
{
	size_t nlen = strlen(name), at = rel_len + nlen + !!rel_len;
	char plain[SC_NAME_PLAIN_MAX + 1];
	bool known = false, own, was_known = w->plain_known;
	struct stat st;
	int r = 0, cfd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : report(w, "cannot stat", "", false);
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
		r = check_long(w, dfd, name, ents, n, nonce, plain);
		known = r > 0;
		break;
	case SC_NAME_KIND_SIDE:
		{
			char lname[NAME_MAX + 1];

			snprintf(lname, sizeof(lname), "%.*s",
				 (int)(nlen - strlen(SC_NAME_SIDE_SUFFIX)), name);
			if (has_entry(ents, n, lname))
				return 0;	/* checked with its long name */
			/*
			 * Its long name was quarantined by an earlier --repair
			 * (LONG.stackcrypt-quarantine-N): the side file is all that
			 * says what that file was called.  Kept, not a leftover.
			 */
			strcat(lname, QUARANTINE_TAG);
			if (has_prefix(ents, n, lname))
				return 0;
			if (!S_ISREG(st.st_mode))
				goto other;	/* the mount makes none: not a crash's leftover */
			r = report(w, "side file of a long name that does not exist (left by "
				   "a crash)", ": --repair removes it", false);
			if (!r)
				w->f->bad[w->f->nbad - 1].leftover = true;
			return r;
		}
	case SC_NAME_KIND_TMP:
		if (S_ISDIR(st.st_mode)) {
			r = report(w, "directory left by an interrupted mkdir (killed before it "
				   "got its name)", ": the mount hides it; --repair removes it "
				   "when empty", false);
			if (!r)
				w->f->bad[w->f->nbad - 1].tmpdir = true;
			return r;	/* never named: nothing in it was ever visible */
		}
		/* only mkdir makes such names */
		__attribute__((fallthrough));
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
		r = check_link(w, dfd, name, own);
	if (S_ISREG(st.st_mode) && own)
		r = plain_add(w);
	if (!r && S_ISDIR(st.st_mode) && st.st_dev == w->dev) {
		cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			r = report(w, "cannot open directory: ", strerror(errno), own);
		} else {
			w->plain_known = own;
			r = check_dir(w, cfd, at, own ? strlen(w->plain) : plain_len, false);
		}
	}
	w->plain_known = was_known;
	w->plain[plain_len] = 0;
	w->rel[rel_len] = 0;
	return r;
}

/*
 * The directory dfd (consumed) at w->rel[0..rel_len), in the mount at
 * w->plain[0..plain_len): its nonce record, then every entry.  0 or -errno.
 */
static int check_dir(struct nwalk *w, int dfd, size_t rel_len, size_t plain_len, bool root)
{
	uint8_t rec[64], nonce[SC_DIRNONCE_LEN];
	const uint8_t *np = nonce;
	struct nent *ents = NULL;
	size_t n = 0, i, names = 0;
	char why[160];
	ssize_t rlen;
	DIR *d;
	int r;

	d = fdopendir(dfd);
	if (!d) {
		r = -errno;
		close(dfd);
		return report(w, "cannot read directory: ", strerror(-r), w->plain_known);
	}
	r = read_entries(d, &ents, &n);
	if (r < 0) {
		closedir(d);
		return r == -ENOMEM ? r : report(w, "cannot read directory: ", strerror(-r),
						 w->plain_known);
	}
	for (i = 0; i < n; i++)
		names += !tools_name(ents[i].name, root);
	rlen = fgetxattr(dirfd(d), SC_DIRNONCE_XATTR, rec, sizeof(rec));
	if (rlen < 0)
		snprintf(why, sizeof(why), "%s", errno == ENODATA ? "missing" :
			 errno == ERANGE ? "wrong length" : strerror(errno));
	else if ((r = sc_dirnonce_parse(rec, (size_t)rlen, nonce)))
		snprintf(why, sizeof(why), "%s", r == -EPROTONOSUPPORT ? "unknown version" :
			 "wrong length");
	if (rlen < 0 || r) {
		np = NULL;
		/* the root gets its record at init or at the first mount */
		if (!root || names) {
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "): the mount "
				 "can neither read nor make names in it");
			r = report(w, "directory has no valid name nonce " SC_DIRNONCE_XATTR
				   " (", why, w->plain_known);
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
		r = check_entry(w, dirfd(d), name, ents, n, np, rel_len, plain_len);
	}
out:
	nents_free(ents, n);
	closedir(d);
	w->rel[rel_len] = 0;
	return r < 0 ? r : 0;
}

int sc_fsck_names(struct fsck *f)
{
	struct nwalk *w;
	struct stat st;
	int dfd, r;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->f = f;
	w->plain_known = true;
	r = sc_nkey_new(f->vol->mkey, &w->nk);
	if (r)
		goto out_free;
	dfd = open(f->backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st)) {
		r = -errno;
		if (dfd >= 0)
			close(dfd);
		goto out_free_nk;
	}
	w->dev = st.st_dev;
	r = check_dir(w, dfd, 0, 0, true);
	if (r == 0 && f->nplain) {
		qsort(f->plain, f->nplain, sizeof(*f->plain), plain_cmp);
		f->plain_sorted = true;
	}
out_free_nk:
	sc_nkey_free(w->nk);
out_free:
	free(w);
	return r;
}
