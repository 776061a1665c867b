/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * probe.c - what the backing tree itself says about a volume, where the
 * config cannot be trusted to say it, or says nothing:
 *  - whether its names are encrypted (a directory nonce record anywhere in
 *    the tree), for the recovery of a config that carries no MAC (formats
 *    1 and 2) or is gone;
 *  - whether the files of a volume whose headers live in xattrs still
 *    carry them, from a small sample at mount time: a copy made without
 *    xattrs (cp -r, rsync without -X, tar) mounts, and every file then
 *    fails with EIO; the mount says so at once instead.
 *
 * The root alone is not enough: whoever can write BACKING can delete the
 * root's record, and recovery would then write a config without names
 * (issue #28, finding 1).  Every directory of the tree is looked at, in
 * both forms of the record (the xattr, or the file of a volume that keeps
 * nothing in xattrs), through the backing interface (a directory or
 * gluster://).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sc_crypto.h"
#include "volume_i.h"
#include "sc_backing.h"

struct nonce_find {
	struct sc_backing	*b;	/* first: vol_walk's ctx rule */
	char			*any;	/* the first directory with a record, relative to the root */
	char			*bound;	/* the first with a version 2 record (bound to its place) */
	size_t			len;
};

/* The plaintext length of the file form of a record, stored as aes-gcm file data. */
static uint64_t nonce_file_len(const struct stat *st)
{
	uint64_t plain = 0;

	if (sc_gcm_plain_size(SC_BLOCK_DEFAULT, (uint64_t)st->st_size, &plain))
		return 0;
	return plain;
}

/*
 * rel holds a nonce record of len bytes (file: rel is the record's file
 * form, in the directory that holds it).  The length tells the versions
 * apart without the key (SC_DIRNONCE_REC_LEN against SC_DIRNONCE_REC2_LEN
 * or more); recovery asks no more than whether the volume ever wrote one.
 * 1 (stop: both questions answered) once a version 2 record is met.
 */
static int nonce_found(struct nonce_find *f, const char *rel, bool file, uint64_t len)
{
	const char *slash = strrchr(rel, '/');
	char dir[PATH_MAX];

	if (!file)
		snprintf(dir, sizeof(dir), "%s", rel);
	else if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
	else
		snprintf(dir, sizeof(dir), ".");
	if (!f->any[0])
		snprintf(f->any, f->len, "%s", dir);
	if (len < SC_DIRNONCE_REC2_LEN)
		return 0;
	snprintf(f->bound, f->len, "%s", dir);
	return 1;
}

static int nonce_visit(void *ctx, int at, const char *name, const char *rel,
		       const struct stat *st, int err)
{
	struct nonce_find *f = ctx;

	(void)at;
	if (err || !st)
		return 0;
	if (S_ISREG(st->st_mode) && !strcmp(name, SC_DIRNONCE_FILE))
		return nonce_found(f, rel, true, nonce_file_len(st));
	if (S_ISDIR(st->st_mode)) {
		ssize_t n = sc_backing_getxattr(f->b, rel, SC_DIRNONCE_XATTR, NULL, 0);

		if (n >= 0)
			return nonce_found(f, rel, false, (uint64_t)n);
	}
	return 0;
}

int sc_vol_tree_dirnonces(const char *backing, char *any, char *bound, size_t len,
			  char *err, size_t errlen)
{
	struct nonce_find f = { NULL, any, bound, len };
	ssize_t n;
	int r;

	any[0] = bound[0] = 0;
	r = sc_backing_open(backing, NULL, &f.b, err, errlen);
	if (r)
		return r;
	n = sc_backing_getxattr(f.b, "", SC_DIRNONCE_XATTR, NULL, 0);
	r = n >= 0 ? nonce_found(&f, ".", false, (uint64_t)n) : 0;
	if (r == 0)
		r = sc_backing_walk(f.b, nonce_visit, &f);
	sc_backing_close(f.b);
	if (r < 0) {
		snprintf(err, errlen, "cannot scan %s: %s", backing, strerror(-r));
		return r;
	}
	return 0;
}

/* The first symlink of a tree whose name has a name's shape. */
struct link_find {
	struct sc_backing	*b;	/* first: vol_walk's ctx rule */
	char			*target;
	size_t			len;
	ssize_t			n;	/* its target's length; -1: none met */
};

static int link_visit(void *ctx, int at, const char *name, const char *rel,
		      const struct stat *st, int err)
{
	struct link_find *f = ctx;
	enum sc_name_kind k = sc_name_kind(name, strlen(name));

	(void)at;
	if (err || !st || !S_ISLNK(st->st_mode) ||
	    (k != SC_NAME_KIND_SHORT && k != SC_NAME_KIND_LONG))
		return 0;
	f->n = sc_backing_readlink(f->b, rel, f->target, f->len - 1);
	if (f->n < 0)
		return (int)f->n;
	f->target[f->n] = 0;
	return 1;
}

int sc_vol_tree_link(const char *backing, char *target, size_t len, char *err, size_t errlen)
{
	struct link_find f = { NULL, target, len, -1 };
	int r;

	r = sc_backing_open(backing, NULL, &f.b, err, errlen);
	if (r)
		return r;
	r = sc_backing_walk(f.b, link_visit, &f);
	sc_backing_close(f.b);
	if (r < 0) {
		snprintf(err, errlen, "cannot scan %s: %s", backing, strerror(-r));
		return r;
	}
	return (int)f.n;
}

/* ---- headers of a sample of files ------------------------------------------------ */

/*
 * The sample: at most SAMPLE_FILES files with data, found among at most
 * SAMPLE_ENTRIES entries of the root and of the first SAMPLE_DIRS
 * directories met (breadth first): a few syscalls at mount, whatever the
 * size of the tree.
 */
#define SAMPLE_FILES	8
#define SAMPLE_ENTRIES	512
#define SAMPLE_DIRS	16

struct sample {
	struct sc_backing *b;		/* first: the walk's ctx rule */
	const char	*rel;		/* the directory being listed ("" for the root) */
	bool		names;
	unsigned	entries, files, bare;
	char		first[PATH_MAX];	/* the first file without a header */
	char		dirs[SAMPLE_DIRS][PATH_MAX];
	unsigned	ndirs;
};

/* Whether name, in the root (top) or below, is a file of the volume. */
static bool volume_file(const char *name, bool top, bool names)
{
	enum sc_name_kind k;

	if (top && (!strcmp(name, SC_CONFIG_NAME) || !strcmp(name, SC_LOCK_NAME) ||
		    !strncmp(name, SC_VOL_TMP_PREFIX, strlen(SC_VOL_TMP_PREFIX))))
		return false;
	if (!strcmp(name, SC_DIRNONCE_FILE))
		return false;
	if (!names)
		return true;
	/* with names: side files of long names carry no header of their own */
	k = sc_name_kind(name, strlen(name));
	return k == SC_NAME_KIND_SHORT || k == SC_NAME_KIND_LONG;
}

/* One entry of the directory being listed into the sample; non-0 ends the listing. */
static int sample_entry(void *ctx, const char *name)
{
	struct sample *s = ctx;
	const char *rel = s->rel;
	char path[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (s->files >= SAMPLE_FILES || s->entries >= SAMPLE_ENTRIES)
		return 1;
	s->entries++;
	if (snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "", name) >=
	    (int)sizeof(path) || sc_backing_lstat(s->b, path, &st))
		return 0;
	if (S_ISDIR(st.st_mode) && s->ndirs < SAMPLE_DIRS) {
		snprintf(s->dirs[s->ndirs++], PATH_MAX, "%s", path);
	} else if (S_ISREG(st.st_mode) && st.st_size > 0 && volume_file(name, !*rel, s->names)) {
		s->files++;
		n = sc_backing_getxattr(s->b, path, SC_HDR_XATTR, NULL, 0);
		if ((n == -ENODATA || n == -ENOTSUP) && s->bare++ == 0)
			snprintf(s->first, sizeof(s->first), "%s", path);
	}
	return 0;
}

/* The entries of directory rel ("" for the root) into the sample. */
static void sample_dir(struct sample *s, const char *rel)
{
	s->rel = rel;
	sc_backing_list(s->b, rel, sample_entry, s);
}

int sc_vol_warn_no_headers(const char *who, const char *backing, const struct sc_config *cfg)
{
	struct sample *s;
	char err[256];
	unsigned i;
	int bare;

	/* aes-gcm's headers are inside the files; gluster:// is not a copy */
	if (cfg->cipher == SC_CIPHER_AES_GCM || !sc_backing_is_dir(backing))
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->names = cfg->features & SC_FEAT_NAMES;
	if (sc_backing_open(backing, NULL, &s->b, err, sizeof(err))) {
		free(s);
		return 0;	/* the mount itself says what is wrong with BACKING */
	}
	sample_dir(s, "");
	for (i = 0; i < s->ndirs && s->files < SAMPLE_FILES && s->entries < SAMPLE_ENTRIES; i++)
		sample_dir(s, s->dirs[i]);
	sc_backing_close(s->b);
	if (s->bare)
		fprintf(stderr, "%s: warning: %u of the %u files sampled in %s carry no header "
			"(e.g. '%s'): a copy made without extended attributes (cp -r, rsync "
			"without -X, tar without --xattrs)?  They cannot be read (EIO); see "
			"\"Backups\" in docs/usage.md\n", who, s->bare, s->files, backing,
			s->first);
	bare = (int)s->bare;
	free(s);
	return bare;
}
