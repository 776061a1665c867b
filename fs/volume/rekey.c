/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rekey.c - master-key rotation without a mount (docs/format.md 6.5).
 *
 * The tree is copied, not rewritten in place: a stack of the old key over
 * the backing root reads every entry, a stack of the new key over
 * SC_REKEY_DIR_NAME/new writes it (contents, names, directory records,
 * symlink targets: everything the layers derive from the master key is
 * made by the new stack itself, so nothing here knows a format).  So at
 * every moment each backing entry is under exactly one key, and where it
 * lies says which: the root and old/ under the old, new/ under the new.
 * Then the root's entries move into old/, new/'s into the root, old/ is
 * deleted -- renames of raw backing entries through the bottom layer
 * alone, which each phase repeats until none is left after a kill.
 *
 * The copy is resumable.  A regular file is made under its own name, so
 * a run after a kill or a power loss may find one short of data or of
 * attributes: it compares each file it finds with the original's plaintext,
 * copies it again in place if they differ, and sets its attributes again
 * (a check only a resumed run pays, where a temporary name, its lookup
 * and a rename per file cost every run: docs/benchmarks.md).  Any other
 * entry is made under a temporary name in its directory (one that no
 * entry of the old directory has) and renamed into place when whole; a run
 * after a kill removes the temporary leftovers and goes on, and hard links
 * find their first copy again by walking in the same sorted order.  The
 * backing is synced once, at the end of the copy (sc_backing_sync_all; an
 * engine without it gets an fsync per file and directory).
 *
 * The layers reach the backing only through the bottom translator the
 * stack builder picks for it (posix or gluster): nothing here knows the
 * engine.
 *
 * Integrity volumes (docs/format.md 11, 6.5 "Integrity volumes"): each
 * stack gets the integrity keys of its master key.  A file is bound to
 * its directory's nonce and its encoded name, never to a path, and the
 * new stack's root record is bound to the root's place, so the raw moves
 * of the swap keep every place the copy bound.  The old stack checks
 * each file against this client's freshness record (read only), so no
 * rolled-back file is copied as current; the new stack fills a record of
 * its own in memory, staged beside the client's at the copy's end and put
 * in its place by sc_rekey_fresh_finish.
 *
 * stackcrypt upgrade of an integrity volume without listing records
 * (sc_rekey_lists_write, docs/format.md 11.12) copies nothing: the old
 * stack alone, built for the config with SC_FEAT_DIR_LISTS in the copy's
 * take mode, lists every directory once, and its names layer writes each
 * record as it finds the directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sc_backing.h"
#include "sc_fresh.h"
#include "sc_rekey.h"
#include "sc_stack.h"
#include "sc_volume.h"
#include "sc_xlator.h"
#include "xlator_i.h"

#define COPY_BUF	(1u << 20)
#define ZERO_GRAIN	4096u		/* runs of zeros this long stay holes */
#define TMP_BASE	".sc-rekey-tmp"

/* The names the data layer hides in a stack's root (the mount's list, and ours). */
static const struct sc_stack_hide rk_hide = {
	.names	= { SC_CONFIG_NAME, SC_LOCK_NAME, SC_REKEY_STATE_NAME, SC_REKEY_DIR_NAME },
	.prefix	= SC_VOL_TMP_PREFIX,
};

/* What a stack of an integrity volume does with this client's freshness record (11.9). */
enum rk_fresh {
	RK_FRESH_NONE,		/* none: the raw stack, a clean-up, another kind of volume */
	RK_FRESH_CHECK,		/* the old key's record, read only: each file checked against it */
	RK_FRESH_STAGE,		/* a record of the new key in memory, staged at the copy's end */
	/*
	 * as CHECK, over the volume whose listing records an upgrade writes
	 * in place (sc_rekey_lists_write): a listing that differs from its
	 * record, none yet, is taken as found
	 */
	RK_FRESH_LISTS,
};

/* A stack and its root. */
struct rk_stack {
	struct sc_xl	*top;
	struct sc_obj	root;
	struct sc_mkey	*mkey;
	struct sc_ikey	*ikey;		/* integrity volumes */
	struct sc_fresh	*fresh;		/* integrity volumes: as enum rk_fresh says, or NULL */
	int		fresh_err;	/* the record's -errno, when it did not open */
};

/* An inode of the old tree with more than one link, and where its copy is. */
struct rk_link {
	ino_t	ino;
	char	*path;		/* in the new tree, "/"-separated, no leading "/" */
};

struct rk_run {
	struct sc_rekey		*k;
	struct rk_stack		old, new;
	struct rk_link		*links;
	size_t			nlinks, links_cap;
	char			*buf, *buf2;
	struct rk_stack		*raw;		/* the bottom layer alone, over the root */
	bool			sync_each;	/* no sync of the whole backing: each file */
	char			*why;
	size_t			whylen;
};

/* The sorted names of a directory. */
struct rk_names {
	char	**v;
	size_t	n, cap;
	int	err;
	bool	dirs;	/* kept: only the directories (and entries of a type not told) */
};

void sc_rekey_step(void)
{
	static long n, at = -1;

	if (at < 0) {
		const char *v = getenv("SC_REKEY_FAULT");

		at = v ? strtol(v, NULL, 10) : 0;
	}
	if (at > 0 && ++n == at)
		raise(SIGKILL);
}

/* The config of the volume the copy makes (stackcrypt upgrade: an integrity volume). */
static const struct sc_config *made_cfg(const struct sc_rekey *k)
{
	return k->new_cfg ? k->new_cfg : k->cfg;
}

static int fail(struct rk_run *r, int err, const char *fmt, const char *path)
{
	snprintf(r->why, r->whylen, fmt, path, strerror(-err));
	return err;
}

/* ---- stacks ------------------------------------------------------------------------ */

/*
 * The keys of mk for the layers into s (integrity volumes: theirs too),
 * and, as how says, the freshness record (fresh_err: why it did not
 * open).  0 or -errno.
 */
static int keys_make(const struct sc_config *cfg, const uint8_t *mk, enum rk_fresh how,
		     const char *state_dir, struct rk_stack *s)
{
	struct sc_fresh_info info;
	int r = sc_mkey_new(mk, cfg->cipher, cfg->block_size, &s->mkey);

	if (!r)
		r = sc_mkey_set_hdr_version(s->mkey, cfg->features & SC_FEAT_HDR_V2 ? 2 : 1);
	if (r || !(cfg->features & SC_FEAT_INTEGRITY))
		return r;
	r = sc_ikey_new(s->mkey, (cfg->features & SC_FEAT_UNIT_TREE) != 0, &s->ikey);
	if (r || how == RK_FRESH_NONE)
		return r;
	if (how == RK_FRESH_STAGE)
		return sc_fresh_new(s->ikey, cfg->uuid, 0, &s->fresh);
	r = sc_fresh_open(s->ikey, cfg->uuid, state_dir, 0, &s->fresh, &info);
	/* none on this machine: nothing to check against (as fsck) */
	if (r == -ENOENT || r == -EBUSY)
		r = 0;
	s->fresh_err = r;
	return r;
}

/*
 * A stack over b: raw (the bottom layer alone) or the volume's layers
 * under mk, rooted at root_fd (taken); how: its freshness record, on
 * integrity volumes.  0 or -errno.
 */
static int stack_make(struct sc_backing *b, const struct sc_config *cfg, const uint8_t *mk,
		      int root_fd, enum rk_fresh how, const char *state_dir, struct rk_stack *s)
{
	struct sc_xl_conf conf = { .max_io = COPY_BUF, .max_path_fds = -1 };
	struct sc_stack_spec spec;
	int r = 0;

	memset(s, 0, sizeof(*s));
	s->root.fd = root_fd;
	s->root.type = S_IFDIR;
	s->root.is_root = true;
	if (mk)
		r = keys_make(cfg, mk, how, state_dir, s);
	if (!r)
		r = sc_stack_spec_init(&spec, mk ? SC_STACK_CRYPT : SC_STACK_PASSTHROUGH, s->mkey,
				       &rk_hide);
	if (!r && mk && (cfg->features & SC_FEAT_NAMES))
		r = sc_stack_spec_insert(&spec, 0, SC_XL_NAMES);
	if (!r && mk) {
		spec.names_bound = cfg->features & SC_FEAT_NAMES_BOUND;
		spec.links_bound = cfg->features & SC_FEAT_LINKS_BOUND;
		spec.ikey = s->ikey;
		spec.dir_lists = cfg->features & SC_FEAT_DIR_LISTS;
		spec.dir_lists_take = how == RK_FRESH_STAGE || how == RK_FRESH_LISTS;
		spec.fresh = s->fresh;
	}
	if (!r)
		r = sc_backing_stack_bottom(sc_backing_spec(b), b, &spec);
	if (!r)
		r = sc_stack_new(&spec, &s->top);
	if (!r)
		r = sc_xl_stack_init(s->top, &s->root, &conf);
	return r;
}

/* The layers of s freed (the gcm layer's journal marked clean); its keys and record kept. */
static void layers_free(struct rk_stack *s)
{
	if (s->top) {
		sc_xl_stack_forget(s->top, &s->root);
		if (s->root.fd >= 0)
			sc_xl_drop_fd(s->top, s->root.fd);
		sc_xl_stack_free(s->top);
	}
	s->top = NULL;
	s->root.fd = -1;
}

static void stack_free(struct rk_stack *s)
{
	layers_free(s);
	sc_fresh_close(s->fresh, false, false);	/* read only, or in memory: nothing written */
	sc_ikey_free(s->ikey);
	sc_mkey_free(s->mkey);
	memset(s, 0, sizeof(*s));
	s->root.fd = -1;
}

/* name in dir as an inode of the stack (adopted by every layer).  0 or -errno. */
static int obj_get(struct sc_xl *top, struct sc_obj *dir, const char *name, struct sc_obj *o,
		   struct stat *st)
{
	int fd, r = sc_xl_lookup(top, dir, name, &fd, st);

	if (r)
		return r;
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->type = st->st_mode & S_IFMT;
	sc_xl_stack_adopt(top, o, st);
	return 0;
}

static void obj_put(struct sc_xl *top, struct sc_obj *o)
{
	sc_xl_stack_forget(top, o);
	if (o->fd >= 0)
		sc_xl_drop_fd(top, o->fd);
	o->fd = -1;
}

/* ---- directory listings ------------------------------------------------------------ */

static int names_add(void *ctx, const struct sc_dirent *de)
{
	struct rk_names *l = ctx;
	char **v;

	if (!strcmp(de->name, ".") || !strcmp(de->name, ".."))
		return 0;
	if (l->dirs && de->type && !S_ISDIR(de->type))
		return 0;	/* passed up whole all the same: the listing counts it */
	if (l->n == l->cap) {
		v = realloc(l->v, (l->cap ? 2 * l->cap : 32) * sizeof(*v));
		if (!v) {
			l->err = -ENOMEM;
			return 1;
		}
		l->v = v;
		l->cap = l->cap ? 2 * l->cap : 32;
	}
	l->v[l->n] = strdup(de->name);
	if (!l->v[l->n]) {
		l->err = -ENOMEM;
		return 1;
	}
	l->n++;
	return 0;
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(struct rk_names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/*
 * The entries of dir but . and .. (dirs: its directories, and those of a
 * type the layers do not tell), sorted (the same order on every run), read
 * in one listing from offset 0 to the end.  0 or -errno.
 */
static int names_read(struct sc_xl *top, struct sc_obj *dir, bool dirs, struct rk_names *l)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDONLY | O_DIRECTORY };
	int r;

	memset(l, 0, sizeof(*l));
	l->dirs = dirs;
	r = sc_xl_opendir(top, dir, &fh);
	if (r)
		return r;
	r = sc_xl_readdir(top, dir, &fh, 0, names_add, l);
	sc_xl_releasedir(top, dir, &fh);
	if (!r)
		r = l->err;
	if (r)
		names_free(l);
	else if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), names_cmp);
	return r;
}

static int names_list(struct sc_xl *top, struct sc_obj *dir, struct rk_names *l)
{
	return names_read(top, dir, false, l);
}

static bool names_has(const struct rk_names *l, const char *name)
{
	return l->n && bsearch(&name, l->v, l->n, sizeof(*l->v), names_cmp);
}

/* ---- hard links -------------------------------------------------------------------- */

static const char *link_find(const struct rk_run *r, ino_t ino)
{
	for (size_t i = 0; i < r->nlinks; i++)
		if (r->links[i].ino == ino)
			return r->links[i].path;
	return NULL;
}

static int link_add(struct rk_run *r, ino_t ino, const char *path)
{
	struct rk_link *v;

	if (link_find(r, ino))
		return 0;
	if (r->nlinks == r->links_cap) {
		v = realloc(r->links, (r->links_cap ? 2 * r->links_cap : 16) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->links = v;
		r->links_cap = r->links_cap ? 2 * r->links_cap : 16;
	}
	r->links[r->nlinks].ino = ino;
	r->links[r->nlinks].path = strdup(path);
	if (!r->links[r->nlinks].path)
		return -ENOMEM;
	r->nlinks++;
	return 0;
}

/* The object at path (from the root) of stack s.  0 or -errno. */
static int obj_at(struct rk_stack *s, const char *path, struct sc_obj *o, struct stat *st)
{
	char *copy = strdup(path), *save = NULL, *name;
	struct sc_obj objs[2], *dir = &s->root;
	unsigned cur = 0;
	int r = copy ? 0 : -ENOMEM;

	for (name = copy ? strtok_r(copy, "/", &save) : NULL; !r && name;
	     name = strtok_r(NULL, "/", &save)) {
		r = obj_get(s->top, dir, name, &objs[cur], st);
		if (dir != &s->root)
			obj_put(s->top, dir);
		dir = r ? &s->root : &objs[cur];
		cur ^= 1;
	}
	free(copy);
	if (!r && dir == &s->root)
		r = -EINVAL;	/* an empty path: never a hard link's */
	if (!r)
		*o = *dir;
	return r;
}

/* ---- copying one entry ------------------------------------------------------------- */

static void progress(struct rk_run *r)
{
	if (r->k->progress)
		r->k->progress(r->k->ctx, &r->k->count, false);
}

/*
 * ost's owner, mode and times given to no (open as fh, or NULL), whose
 * attributes are now nst (NULL: not known): the owner first (a chown
 * clears the set-id bits), and only when it differs (a rekey run as the
 * files' owner makes none); then the mode when it differs or a chown ran,
 * and the times.  0 or -errno.
 */
static int attrs_copy(struct sc_xl *top, struct sc_obj *no, struct sc_fh *fh,
		      const struct stat *ost, const struct stat *nst)
{
	int valid = SC_SET_ATIME | SC_SET_MTIME;
	bool chown = !nst || nst->st_uid != ost->st_uid || nst->st_gid != ost->st_gid;
	struct stat out;
	int r = 0;

	if (chown)
		r = sc_xl_setattr(top, no, fh, ost, SC_SET_UID | SC_SET_GID, &out);
	if (!S_ISLNK(ost->st_mode) && (chown || (nst->st_mode ^ ost->st_mode) & 07777))
		valid |= SC_SET_MODE;
	return r ? r : sc_xl_setattr(top, no, fh, ost, valid, &out);
}

/* The extended attributes of oo (as the old stack shows them) set on no.  0 or -errno. */
static int xattrs_copy(struct rk_run *r, struct sc_obj *oo, struct sc_obj *no)
{
	char small[SC_XL_LIST_ON_STACK], *list;
	ssize_t n, v;
	int ret = 0;

	n = sc_xl_listxattr_all(r->old.top, oo, small, sizeof(small), &list);
	if (n == -EOPNOTSUPP || n == -ENOTSUP)
		return 0;
	if (n < 0)
		return (int)n;
	for (char *p = list; !ret && p < list + n; p += strlen(p) + 1) {
		v = sc_xl_getxattr(r->old.top, oo, p, r->buf, COPY_BUF);
		if (v == -ENODATA)
			continue;
		ret = v < 0 ? (int)v : sc_xl_setxattr(r->new.top, no, p, r->buf, (size_t)v, 0);
	}
	if (list != small)
		free(list);
	return ret;
}

static bool all_zero(const char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/*
 * buf (n bytes at off) written to no, but for aligned runs of zeros, which
 * stay holes; *end moved to the end of the last write.  0 or -errno.
 */
static int write_nonzero(struct rk_run *r, struct sc_obj *no, struct sc_fh *nfh,
			 const char *buf, size_t n, off_t off, off_t *end)
{
	size_t i = 0, j, g;
	ssize_t w;

	while (i < n) {
		g = ZERO_GRAIN - (size_t)(off + (off_t)i) % ZERO_GRAIN;
		g = g < n - i ? g : n - i;
		if (all_zero(buf + i, g)) {
			i += g;
			continue;
		}
		for (j = i + g; j < n; j += g) {
			g = n - j < ZERO_GRAIN ? n - j : ZERO_GRAIN;
			if (all_zero(buf + j, g))
				break;
		}
		w = sc_xl_write(r->new.top, no, nfh, buf + i, j - i, off + (off_t)i);
		if (w != (ssize_t)(j - i))
			return w < 0 ? (int)w : -EIO;
		i = j;
		*end = off + (off_t)j;
	}
	return 0;
}

/*
 * The plaintext of oo (size bytes) into no, empty; the size set last when
 * the writes did not reach it (a hole at the end stays).  0 or -errno.
 */
static int data_copy(struct rk_run *r, struct sc_obj *oo, off_t size, struct sc_obj *no,
		     struct sc_fh *nfh)
{
	struct sc_fh ofh = { .fd = -1, .flags = O_RDONLY };
	struct stat want = { .st_size = size }, out;
	int ret = sc_xl_open(r->old.top, oo, &ofh);
	bool opened = !ret;
	off_t end = 0;
	ssize_t n;

	for (off_t off = 0; !ret && off < size; off += n) {
		n = sc_xl_read(r->old.top, oo, &ofh, r->buf, COPY_BUF, off);
		if (n <= 0) {
			ret = n < 0 ? (int)n : -ENODATA;	/* shorter than its size: offline? */
			break;
		}
		ret = write_nonzero(r, no, nfh, r->buf, (size_t)n, off, &end);
		r->k->count.bytes += (uint64_t)n;
		progress(r);
	}
	if (opened)
		sc_xl_release(r->old.top, oo, &ofh);
	if (!ret && end < size)
		ret = sc_xl_setattr(r->new.top, no, nfh, &want, SC_SET_SIZE, &out);
	return ret;
}

/*
 * A regular file copied as name in ndir: data, extended attributes,
 * fsynced when files are synced one by one (so no write is left to a
 * close, which would move the times), then the attributes.  Made under its
 * own name, not a temporary one: a run that finds it checks it
 * (file_check).  Made with the permissions it will have, but never without
 * the owner's read and write (the layers may open it again).  0 or -errno.
 */
static int file_make(struct rk_run *r, struct sc_obj *oo, const struct stat *ost,
		     struct sc_obj *ndir, const char *name)
{
	struct sc_fh nfh = { .fd = -1, .flags = O_RDWR | O_CREAT | O_EXCL };
	struct sc_obj no = { .type = S_IFREG };
	struct stat st;
	int ret, rel;

	ret = sc_xl_create(r->new.top, ndir, name, S_IFREG | (ost->st_mode & 0777) | 0600, &nfh,
			   &no.fd, &st);
	if (ret)
		return ret;
	sc_xl_stack_adopt(r->new.top, &no, &st);
	sc_rekey_step();
	ret = data_copy(r, oo, ost->st_size, &no, &nfh);
	if (!ret)
		ret = xattrs_copy(r, oo, &no);
	if (!ret && r->sync_each)
		ret = sc_xl_fsync(r->new.top, &no, &nfh, 0);
	/* what close(2) would store (integrity volumes: the header), before the times */
	if (!ret)
		ret = sc_xl_flush(r->new.top, &no, &nfh);
	if (!ret) {
		sc_rekey_step();	/* its data in, its attributes not */
		ret = attrs_copy(r->new.top, &no, &nfh, ost, &st);
	}
	rel = sc_xl_release(r->new.top, &no, &nfh);
	ret = ret ? ret : rel;
	obj_put(r->new.top, &no);
	return ret;
}

/*
 * An entry other than a regular file as tmp in ndir (a directory empty,
 * with its attributes to come).  0 or -errno.
 */
static int entry_make(struct rk_run *r, struct sc_obj *oo, const struct stat *ost,
		      struct sc_obj *ndir, const char *tmp)
{
	struct sc_obj no = { .fd = -1 };
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;
	int ret;

	if (S_ISLNK(ost->st_mode)) {
		n = sc_xl_readlink(r->old.top, oo, target, sizeof(target) - 1);
		if (n < 0)
			return (int)n;
		target[n] = 0;
		ret = sc_xl_symlink(r->new.top, ndir, tmp, target, &no.fd, &st);
	} else if (S_ISDIR(ost->st_mode)) {
		ret = sc_xl_mkdir(r->new.top, ndir, tmp, 0700, &no.fd, &st);
	} else {
		ret = sc_xl_mknod(r->new.top, ndir, tmp, ost->st_mode, ost->st_rdev, &no.fd, &st);
	}
	if (ret)
		return ret;
	no.type = st.st_mode & S_IFMT;
	sc_xl_stack_adopt(r->new.top, &no, &st);
	/* a directory's own attributes are set once its entries are in it */
	if (!S_ISDIR(ost->st_mode))
		ret = attrs_copy(r->new.top, &no, NULL, ost, &st);
	if (!ret && !S_ISDIR(ost->st_mode) && !S_ISLNK(ost->st_mode))
		ret = xattrs_copy(r, oo, &no);
	obj_put(r->new.top, &no);
	return ret;
}

/* ---- the tree ---------------------------------------------------------------------- */

/* fsync of directory o of stack top.  0 or -errno. */
static int dir_sync(struct sc_xl *top, struct sc_obj *o)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDONLY | O_DIRECTORY };
	int r = sc_xl_opendir(top, o, &fh), s;

	if (r)
		return r;
	r = sc_xl_fsyncdir(top, o, &fh, 0);
	s = sc_xl_releasedir(top, o, &fh);
	return r ? r : s;
}

/* A name for temporaries in a directory that holds the names of want: none of them. */
static void tmp_name(const struct rk_names *want, char tmp[64])
{
	snprintf(tmp, 64, "%s", TMP_BASE);
	for (unsigned i = 1; names_has(want, tmp); i++)
		snprintf(tmp, 64, "%s%u", TMP_BASE, i);
}

static int tree_copy(struct rk_run *r, struct sc_obj *odir, struct sc_obj *ndir,
		     const char *path);

/* Directory name of ndir (made already) filled from oo, then given oo's attributes. */
static int dir_fill(struct rk_run *r, struct sc_obj *oo, const struct stat *ost,
		    struct sc_obj *ndir, const char *name, const char *path)
{
	struct sc_obj no;
	struct stat nst;
	int ret;

	ret = obj_get(r->new.top, ndir, name, &no, &nst);
	if (ret)
		return fail(r, ret, "cannot look up the copy of %s: %s", path);
	if (!S_ISDIR(nst.st_mode))
		ret = fail(r, -ENOTDIR, "the copy of directory %s is not one: %s", path);
	if (!ret)
		ret = tree_copy(r, oo, &no, path);
	if (!ret && (ret = xattrs_copy(r, oo, &no)))
		fail(r, ret, "cannot copy the extended attributes of %s: %s", path);
	if (!ret && (ret = attrs_copy(r->new.top, &no, NULL, ost, &nst)))
		fail(r, ret, "cannot set the attributes of %s: %s", path);
	if (!ret && r->sync_each && (ret = dir_sync(r->new.top, &no)))
		fail(r, ret, "cannot sync %s: %s", path);
	obj_put(r->new.top, &no);
	return ret;
}

/* Another link to the copy at first, as name in ndir.  0 or -errno. */
static int link_make(struct rk_run *r, const char *first, struct sc_obj *ndir, const char *name)
{
	struct sc_obj t;
	struct stat st;
	int ret = obj_at(&r->new, first, &t, &st);

	if (ret)
		return ret;
	ret = sc_xl_link(r->new.top, &t, ndir, name, &st);
	obj_put(r->new.top, &t);
	return ret;
}

/*
 * A later link name of ndir, left by a stopped run, to the copy at first:
 * 0 if it is that inode, else (the first copy was made again) it is
 * removed and 1 returned, make it anew.  -errno.
 */
static int link_check(struct rk_run *r, const char *first, struct sc_obj *ndir, const char *name)
{
	struct sc_obj t, o;
	struct stat tst, st;
	int ret = obj_at(&r->new, first, &t, &tst);

	if (ret)
		return ret;
	obj_put(r->new.top, &t);
	ret = obj_get(r->new.top, ndir, name, &o, &st);
	if (ret)
		return ret;
	obj_put(r->new.top, &o);
	if (st.st_ino == tst.st_ino && st.st_dev == tst.st_dev)
		return 0;
	return (ret = sc_xl_unlink(r->new.top, ndir, name)) ? ret : 1;
}

/*
 * 1 when oo and no (open as nfh) hold the same size bytes of plaintext, 0
 * when not or when no does not read; -errno when oo does not read.
 */
static int files_equal(struct rk_run *r, struct sc_obj *oo, struct sc_obj *no, struct sc_fh *nfh,
		       off_t size)
{
	struct sc_fh ofh = { .fd = -1, .flags = O_RDONLY };
	int ret = sc_xl_open(r->old.top, oo, &ofh), same = 1;
	ssize_t n, m;

	if (ret)
		return ret;
	for (off_t off = 0; same == 1 && off < size; off += n) {
		n = sc_xl_read(r->old.top, oo, &ofh, r->buf, COPY_BUF, off);
		if (n <= 0) {
			same = n < 0 ? (int)n : -ENODATA;
			break;
		}
		m = sc_xl_read(r->new.top, no, nfh, r->buf2, (size_t)n, off);
		same = m == n && !memcmp(r->buf, r->buf2, (size_t)n);
	}
	sc_xl_release(r->old.top, oo, &ofh);
	return same;
}

/*
 * A regular file that a stopped run left under its name.  Files are made
 * under their own name (file_make), so a kill may have left it short of
 * data or of its attributes; and files are synced together at the end of
 * the copy, not one by one, so after a power loss its data may be short
 * too.  Its plaintext is compared with the original's, and a difference
 * copied again in place (its hard links with it); its extended attributes
 * and attributes are set again either way.  A copy that does not open (its
 * header lost after a power loss) is removed: 1, make it anew (its other
 * links, later in the walk, then name another inode than the first
 * copy's: link_check makes them again).  0 or -errno.
 */
static int file_check(struct rk_run *r, struct sc_obj *oo, const struct stat *ost,
		      struct sc_obj *ndir, const char *name)
{
	struct sc_fh nfh = { .fd = -1, .flags = O_RDWR };
	struct stat nst, zero = { .st_size = 0 }, out;
	struct sc_obj no;
	int ret, same = 0, rel;

	ret = obj_get(r->new.top, ndir, name, &no, &nst);
	if (ret)
		return ret;
	ret = sc_xl_open(r->new.top, &no, &nfh);
	if (ret) {
		/* its other links, if any, are made again by link_check */
		obj_put(r->new.top, &no);
		return (ret = sc_xl_unlink(r->new.top, ndir, name)) ? ret : 1;
	}
	if (nst.st_size == ost->st_size)
		same = files_equal(r, oo, &no, &nfh, ost->st_size);
	if (same == 0) {
		ret = sc_xl_setattr(r->new.top, &no, &nfh, &zero, SC_SET_SIZE, &out);
		if (!ret)
			ret = data_copy(r, oo, ost->st_size, &no, &nfh);
		if (!ret && r->sync_each)
			ret = sc_xl_fsync(r->new.top, &no, &nfh, 0);
		if (!ret)
			ret = sc_xl_flush(r->new.top, &no, &nfh);
	} else if (same == 1) {
		r->k->count.bytes += (uint64_t)ost->st_size;
	}
	if (!ret && same >= 0)
		ret = xattrs_copy(r, oo, &no);
	/* a write by one without CAP_FSETID clears set-id bits: nst is old then */
	if (!ret && same >= 0)
		ret = attrs_copy(r->new.top, &no, &nfh, ost, same ? &nst : NULL);
	rel = sc_xl_release(r->new.top, &no, &nfh);
	ret = ret ? ret : rel;
	obj_put(r->new.top, &no);
	return same < 0 ? same : ret;
}

/*
 * Entry name of odir copied into ndir, unless a stopped run copied it
 * already (have: ndir's entries; a directory is entered either way).
 * 0 or -errno with r->why set.
 */
static int entry_copy(struct rk_run *r, struct sc_obj *odir, struct sc_obj *ndir,
		      const char *name, const char *tmp, const struct rk_names *have,
		      const char *path)
{
	bool there = names_has(have, name), linked;
	const char *first = NULL;
	struct sc_obj oo;
	struct stat ost;
	int ret;

	ret = obj_get(r->old.top, odir, name, &oo, &ost);
	if (ret)
		return fail(r, ret, "cannot look up %s: %s", path);
	linked = !S_ISDIR(ost.st_mode) && ost.st_nlink > 1;
	if (there && S_ISREG(ost.st_mode) && !(linked && link_find(r, ost.st_ino))) {
		ret = file_check(r, &oo, &ost, ndir, name);
		there = ret != 1;
		ret = ret == 1 ? 0 : ret;
	}
	if (there && linked && !ret && (first = link_find(r, ost.st_ino))) {
		ret = link_check(r, first, ndir, name);
		there = ret != 1;
		ret = ret == 1 ? 0 : ret;
	}
	first = NULL;
	if (linked && !there)
		first = link_find(r, ost.st_ino);
	if (ret) {
		;	/* said below */
	} else if (first) {
		ret = link_make(r, first, ndir, name);
	} else if (!there && S_ISREG(ost.st_mode)) {
		ret = file_make(r, &oo, &ost, ndir, name);
	} else if (!there) {
		/* checked by no run that finds it: made whole, then named */
		ret = entry_make(r, &oo, &ost, ndir, tmp);
		if (!ret) {
			sc_rekey_step();
			ret = sc_xl_rename(r->new.top, ndir, tmp, ndir, name, 0);
		}
	}
	if (ret)
		fail(r, ret, "cannot copy %s: %s", path);
	if (!ret && linked)
		ret = link_add(r, ost.st_ino, path);
	if (!ret)
		sc_rekey_step();
	if (!ret && S_ISDIR(ost.st_mode))
		ret = dir_fill(r, &oo, &ost, ndir, name, path);
	obj_put(r->old.top, &oo);
	r->k->count.files++;
	return ret;
}

/* What a stopped run left in ndir that odir does not hold: its temporaries. */
static int leftovers_remove(struct rk_run *r, struct sc_obj *ndir, const struct rk_names *want,
			    const struct rk_names *have, const char *path)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < have->n; i++) {
		if (names_has(want, have->v[i]))
			continue;
		ret = sc_xl_unlink(r->new.top, ndir, have->v[i]);
		if (ret == -EISDIR || ret == -EPERM)
			ret = sc_xl_rmdir(r->new.top, ndir, have->v[i]);
		if (ret)
			fail(r, ret, "cannot remove a temporary copy in %s: %s", *path ? path : "/");
	}
	return ret;
}

static int raw_delete(struct rk_stack *raw, struct sc_obj *dir, const char *name);

/*
 * The layers' own temporaries in ndir, which they hide: a directory the
 * names layer was making (SC_NAME_TMP_PREFIX) when the stopped run was
 * killed or, after a power loss, whose rename to its name was lost.  Seen
 * and removed through the bottom layer (nothing in new/ is the only copy
 * of anything).  0 or -errno with why set.
 */
static int mkdir_leftovers_remove(struct rk_run *r, struct sc_obj *ndir, const char *path)
{
	struct sc_obj d = { .fd = ndir->fd, .type = S_IFDIR };
	struct rk_names l;
	int ret = names_list(r->raw->top, &d, &l);

	for (size_t i = 0; !ret && i < l.n; i++)
		if (!strncmp(l.v[i], SC_NAME_TMP_PREFIX, strlen(SC_NAME_TMP_PREFIX)))
			ret = raw_delete(r->raw, &d, l.v[i]);
	names_free(&l);
	return ret ? fail(r, ret, "cannot remove a stopped mkdir in the copy of %s: %s",
			  *path ? path : "/") : 0;
}

/* Every entry of odir into ndir, in name order.  0 or -errno with r->why set. */
static int tree_copy(struct rk_run *r, struct sc_obj *odir, struct sc_obj *ndir,
		     const char *path)
{
	struct rk_names want, have;
	char tmp[64], *child;
	int ret;

	ret = names_list(r->old.top, odir, &want);
	if (ret)
		return fail(r, ret, "cannot list %s: %s", *path ? path : "/");
	ret = names_list(r->new.top, ndir, &have);
	if (ret) {
		names_free(&want);
		return fail(r, ret, "cannot list the copy of %s: %s", *path ? path : "/");
	}
	tmp_name(&want, tmp);
	ret = leftovers_remove(r, ndir, &want, &have, path);
	if (!ret)
		ret = mkdir_leftovers_remove(r, ndir, path);
	for (size_t i = 0; !ret && i < want.n; i++) {
		/* the backing file system's own, left where it is */
		if (odir->is_root && !strcmp(want.v[i], "lost+found"))
			continue;
		if (asprintf(&child, "%s%s%s", path, *path ? "/" : "", want.v[i]) < 0) {
			ret = fail(r, -ENOMEM, "%s%s", "");
			break;
		}
		ret = entry_copy(r, odir, ndir, want.v[i], tmp, &have, child);
		free(child);
	}
	names_free(&want);
	names_free(&have);
	return ret;
}

/* ---- raw entries: the swap and the cleanup ------------------------------------------ */

/* Whether a name of the backing root is the volume's own, never moved. */
static bool root_own(const char *name)
{
	return !strcmp(name, SC_CONFIG_NAME) || !strcmp(name, SC_LOCK_NAME) ||
	       !strcmp(name, SC_REKEY_STATE_NAME) || !strcmp(name, SC_REKEY_DIR_NAME) ||
	       !strcmp(name, "lost+found") ||
	       !strncmp(name, SC_VOL_TMP_PREFIX, strlen(SC_VOL_TMP_PREFIX));
}

/* Directory name of dir (made if missing) as o, in the raw stack.  0 or -errno. */
static int raw_dir(struct rk_stack *raw, struct sc_obj *dir, const char *name, struct sc_obj *o)
{
	struct stat st;
	int fd, r;

	r = sc_xl_mkdir(raw->top, dir, name, 0700, &fd, &st);
	if (r == 0) {
		sc_xl_drop_fd(raw->top, fd);
		sc_rekey_step();
		r = dir_sync(raw->top, dir);
	}
	if (r && r != -EEXIST)
		return r;
	r = obj_get(raw->top, dir, name, o, &st);
	if (!r && !S_ISDIR(st.st_mode)) {
		obj_put(raw->top, o);
		r = -ENOTDIR;
	}
	return r;
}

/*
 * Entry name of dir and all below it removed (raw).  An unlink first, with
 * no lookup: most entries are files; one that is a directory refuses it
 * (EISDIR, or EPERM as POSIX allows) and is emptied, then removed.
 * 0 or -errno.
 */
static int raw_delete(struct rk_stack *raw, struct sc_obj *dir, const char *name)
{
	struct rk_names l;
	struct sc_obj o;
	struct stat st;
	int r, un;

	r = un = sc_xl_unlink(raw->top, dir, name);
	if (r != -EISDIR && r != -EPERM)
		goto out;
	r = obj_get(raw->top, dir, name, &o, &st);
	if (r)
		goto out;
	if (!S_ISDIR(st.st_mode)) {
		r = un;		/* a file that refuses its unlink */
	} else {
		r = names_list(raw->top, &o, &l);
		for (size_t i = 0; !r && i < l.n; i++)
			r = raw_delete(raw, &o, l.v[i]);
		names_free(&l);
	}
	obj_put(raw->top, &o);
	if (!r)
		r = sc_xl_rmdir(raw->top, dir, name);
out:
	if (!r)
		sc_rekey_step();
	return r == -ENOENT ? 0 : r;
}

/* Every entry of from but the volume's own renamed into to (raw), then both synced. */
static int raw_move_all(struct rk_stack *raw, struct sc_obj *from, struct sc_obj *to)
{
	struct rk_names l;
	int r = names_list(raw->top, from, &l);

	for (size_t i = 0; !r && i < l.n; i++) {
		if (from->is_root && root_own(l.v[i]))
			continue;
		r = sc_xl_rename(raw->top, from, l.v[i], to, l.v[i], 0);
		if (!r)
			sc_rekey_step();
	}
	names_free(&l);
	if (!r)
		r = dir_sync(raw->top, from);
	return r ? r : dir_sync(raw->top, to);
}

/*
 * The root's directory nonce record, when it is an extended attribute
 * (not aes-gcm): the new tree's, from new/, on the root, whose entries
 * are new/'s from now on.  0 or -errno.
 */
static int raw_root_record(struct sc_backing *b)
{
	static const char newdir[] = SC_REKEY_DIR_NAME "/new";
	uint8_t rec[SC_DIRNONCE_REC_MAX];
	ssize_t n = sc_backing_getxattr(b, newdir, SC_DIRNONCE_XATTR, rec, sizeof(rec));

	if (n == -ENODATA || n == -EOPNOTSUPP)
		return 0;
	if (n < 0)
		return (int)n;
	return sc_backing_setxattr(b, "", SC_DIRNONCE_XATTR, rec, (size_t)n, 0);
}

/* SWAP_OUT, SWAP_IN or CLEANUP over the raw stack.  0 or -errno with why set. */
static int raw_phase(struct rk_run *r, struct rk_stack *raw, enum sc_rekey_phase phase)
{
	struct sc_obj d, sub;
	int ret;

	if (phase == SC_REKEY_CLEANUP) {
		ret = raw_delete(raw, &raw->root, SC_REKEY_DIR_NAME);
		if (!ret)
			ret = dir_sync(raw->top, &raw->root);
		return ret ? fail(r, ret, "cannot delete %s: %s", SC_REKEY_DIR_NAME) : 0;
	}
	ret = raw_dir(raw, &raw->root, SC_REKEY_DIR_NAME, &d);
	if (ret)
		return fail(r, ret, "cannot make %s: %s", SC_REKEY_DIR_NAME);
	ret = raw_dir(raw, &d, phase == SC_REKEY_SWAP_OUT ? "old" : "new", &sub);
	if (ret) {
		obj_put(raw->top, &d);
		return fail(r, ret, "cannot make a directory in %s: %s", SC_REKEY_DIR_NAME);
	}
	if (phase == SC_REKEY_SWAP_OUT) {
		ret = raw_move_all(raw, &raw->root, &sub);
	} else {
		ret = raw_root_record(r->k->b);
		if (!ret)
			ret = raw_move_all(raw, &sub, &raw->root);
	}
	obj_put(raw->top, &sub);
	obj_put(raw->top, &d);
	return ret ? fail(r, ret, "cannot move the entries of the root (%s): %s",
			  phase == SC_REKEY_SWAP_OUT ? "old ones out" : "new ones in") : 0;
}

/* ---- the phases -------------------------------------------------------------------- */

/* Entries and bytes of the backing tree, for the progress line's totals. */
static int count_entry(void *ctx, int at, const char *name, const char *rel,
		       const struct stat *st, int err)
{
	struct sc_rekey_count *c = ctx;

	(void)at;
	(void)name;
	if (err || !st || !strncmp(rel, SC_REKEY_DIR_NAME, strlen(SC_REKEY_DIR_NAME)))
		return 0;
	c->files_total++;
	if (S_ISREG(st->st_mode))
		c->bytes_total += (uint64_t)st->st_size;
	return 0;
}

/*
 * The volume's layers under the old key over the root into s, as cfg
 * says (how: RK_FRESH_CHECK or RK_FRESH_LISTS, this client's freshness
 * record read only).  0 or -errno with r->why set.
 */
static int volume_stack(struct rk_run *r, const struct sc_config *cfg, enum rk_fresh how,
			struct rk_stack *s)
{
	struct sc_backing *b = r->k->b;
	struct stat st;
	int fd = sc_backing_root(b, &st);
	int ret = fd < 0 ? fd : stack_make(b, cfg, r->k->old_mk, fd, how, r->k->state_dir, s);

	if (ret && s->fresh_err) {
		snprintf(r->why, r->whylen, "this machine's freshness record of the volume: %s",
			 sc_fresh_strerror(ret));
		return ret;
	}
	if (ret == -ESTALE && s->fresh) {
		snprintf(r->why, r->whylen, "%s: the volume is older than this client last saw "
			 "it (its crash journal was last written by an earlier run of this client: "
			 "put back from an older copy?); to accept it, move this machine's "
			 "freshness record aside and run the command again", sc_backing_spec(b));
		return ret;
	}
	if (ret)
		return fail(r, ret, "cannot start the volume's layers over %s: %s",
			    sc_backing_spec(b));
	return 0;
}

/* COPY: the old stack over the root, the new one over new/, the tree copied. */
static int copy_phase(struct rk_run *r, struct rk_stack *raw)
{
	struct sc_backing *b = r->k->b;
	struct sc_obj d, sub;
	struct stat st;
	int ret, fd;

	ret = raw_dir(raw, &raw->root, SC_REKEY_DIR_NAME, &d);
	if (ret)
		return fail(r, ret, "cannot make %s: %s", SC_REKEY_DIR_NAME);
	ret = raw_dir(raw, &d, "new", &sub);
	if (!ret) {
		obj_put(raw->top, &sub);
		ret = sc_xl_lookup(raw->top, &d, "new", &fd, &st);
	}
	obj_put(raw->top, &d);
	if (ret)
		return fail(r, ret, "cannot open %s/new: %s", SC_REKEY_DIR_NAME);
	ret = stack_make(b, made_cfg(r->k), r->k->new_mk, fd, RK_FRESH_STAGE, r->k->state_dir,
			 &r->new);
	if (ret)
		return fail(r, ret, "cannot start the new key's layers over %s: %s",
			    SC_REKEY_DIR_NAME "/new");
	ret = volume_stack(r, r->k->cfg, RK_FRESH_CHECK, &r->old);
	if (ret)
		return ret;
	r->raw = raw;
	memset(&r->k->count, 0, sizeof(r->k->count));
	ret = sc_backing_walk(b, count_entry, &r->k->count);
	/* a whole-backing sync at the end, or else one per file and directory */
	if (!ret) {
		ret = sc_backing_sync_all(b);
		r->sync_each = ret == -EOPNOTSUPP;
		ret = r->sync_each ? 0 : ret;
	}
	if (!ret)
		ret = tree_copy(r, &r->old.root, &r->new.root, "");
	if (!ret && !r->sync_each && (ret = sc_backing_sync_all(b)))
		fail(r, ret, "cannot sync %s: %s", sc_backing_spec(b));
	if (!ret && (ret = dir_sync(r->new.top, &r->new.root)))
		fail(r, ret, "cannot sync %s: %s", SC_REKEY_DIR_NAME "/new");
	return ret;
}

int sc_rekey_phase_run(struct sc_rekey *k, enum sc_rekey_phase phase, char *err, size_t errlen)
{
	struct rk_run r = { .k = k, .why = err, .whylen = errlen };
	struct rk_stack raw;
	struct stat st;
	int ret, fd;

	err[0] = 0;
	r.old.root.fd = r.new.root.fd = raw.root.fd = -1;
	fd = sc_backing_root(k->b, &st);
	ret = fd < 0 ? fd : stack_make(k->b, k->cfg, NULL, fd, RK_FRESH_NONE, NULL, &raw);
	if (ret) {
		snprintf(err, errlen, "cannot open %s: %s", sc_backing_spec(k->b), strerror(-ret));
		return ret;
	}
	if (phase == SC_REKEY_COPY) {
		r.buf = malloc(COPY_BUF);
		r.buf2 = malloc(COPY_BUF);
		ret = r.buf && r.buf2 ? copy_phase(&r, &raw) : fail(&r, -ENOMEM, "%s%s", "");
		layers_free(&r.old);
		layers_free(&r.new);	/* its journal closed before its run is staged */
		if (!ret && r.new.fresh && (ret = sc_fresh_stage(r.new.fresh, k->state_dir)))
			snprintf(err, errlen, "cannot stage this machine's freshness record of the "
				 "volume under the new key: %s", strerror(-ret));
		if (!ret && r.new.fresh)
			sc_rekey_step();
	} else {
		ret = raw_phase(&r, &raw, phase);
	}
	stack_free(&r.new);
	stack_free(&r.old);
	stack_free(&raw);
	for (size_t i = 0; i < r.nlinks; i++)
		free(r.links[i].path);
	free(r.links);
	free(r.buf);
	free(r.buf2);
	if (!ret && k->progress && phase == SC_REKEY_COPY)
		k->progress(k->ctx, &k->count, true);
	return ret;
}

/* ---- listing records written in place (upgrade of an integrity volume) ------------- */

/*
 * Every directory from dir (its attributes dst; path: its path, "" the
 * root) down listed whole through s, whose names layer takes a listing
 * that differs from its record as found (RK_FRESH_LISTS): the record is
 * written where it is missing, damaged or differs, and kept where it is
 * right, as a stopped run left it.  The directory's times are set back
 * after: the record's create moved its mtime, its listing its atime.
 * 0 or -errno with r->why set.
 */
static int lists_walk(struct rk_run *r, struct rk_stack *s, struct sc_obj *dir,
		      const struct stat *dst, const char *path)
{
	struct rk_names l;
	struct sc_obj o;
	struct stat st;
	char *child;
	int ret = names_read(s->top, dir, true, &l);

	if (ret)
		return fail(r, ret, "cannot list %s: %s", *path ? path : "/");
	if ((ret = sc_xl_setattr(s->top, dir, NULL, dst, SC_SET_ATIME | SC_SET_MTIME, &st)))
		fail(r, ret, "cannot set the times of %s back: %s", *path ? path : "/");
	if (!ret && r->sync_each && (ret = dir_sync(s->top, dir)))
		fail(r, ret, "cannot sync %s: %s", *path ? path : "/");
	r->k->count.files++;
	progress(r);
	if (!ret)
		sc_rekey_step();	/* this directory's record written, those below it not */
	for (size_t i = 0; !ret && i < l.n; i++) {
		if (asprintf(&child, "%s%s%s", path, *path ? "/" : "", l.v[i]) < 0) {
			ret = fail(r, -ENOMEM, "%s%s", "");
			break;
		}
		ret = obj_get(s->top, dir, l.v[i], &o, &st);
		if (ret) {
			fail(r, ret, "cannot look up %s: %s", child);
		} else {
			if (S_ISDIR(st.st_mode))
				ret = lists_walk(r, s, &o, &st, child);
			obj_put(s->top, &o);
		}
		free(child);
	}
	names_free(&l);
	return ret;
}

/* Directories of the backing tree, for the progress line's total. */
static int count_dir(void *ctx, int at, const char *name, const char *rel,
		     const struct stat *st, int err)
{
	struct sc_rekey_count *c = ctx;

	(void)at;
	(void)name;
	(void)rel;
	if (!err && st && S_ISDIR(st->st_mode))
		c->files_total++;
	return 0;
}

int sc_rekey_lists_write(struct sc_rekey *k, char *err, size_t errlen)
{
	struct rk_run r = { .k = k, .why = err, .whylen = errlen };
	struct rk_stack s = { .root.fd = -1 };
	struct stat st;
	int ret;

	err[0] = 0;
	memset(&k->count, 0, sizeof(k->count));
	k->count.files_total = 1;	/* the root, which the walk does not pass */
	ret = sc_backing_walk(k->b, count_dir, &k->count);
	/* a whole-backing sync at the end, or else an fsyncdir per directory (its record first) */
	if (!ret) {
		ret = sc_backing_sync_all(k->b);
		r.sync_each = ret == -EOPNOTSUPP;
		ret = r.sync_each ? 0 : ret;
	}
	if (ret)
		return fail(&r, ret, "cannot read %s: %s", sc_backing_spec(k->b));
	ret = volume_stack(&r, made_cfg(k), RK_FRESH_LISTS, &s);
	if (!ret && (ret = sc_xl_getattr(s.top, &s.root, NULL, &st)))
		fail(&r, ret, "cannot stat %s: %s", "/");
	if (!ret)
		ret = lists_walk(&r, &s, &s.root, &st, "");
	layers_free(&s);	/* its journal marked clean: synced below with the records */
	if (!ret && !r.sync_each && (ret = sc_backing_sync_all(k->b)))
		fail(&r, ret, "cannot sync %s: %s", sc_backing_spec(k->b));
	stack_free(&s);
	if (!ret && k->progress)
		k->progress(k->ctx, &k->count, true);
	return ret;
}

/* ---- the state file ---------------------------------------------------------------- */

int sc_rekey_state_write(struct sc_backing *b, const struct sc_config *cfg, const uint8_t *old_mk,
			 enum sc_rekey_phase phase, const uint8_t *new_mk, const char *text,
			 size_t len, char *err, size_t errlen)
{
	uint8_t *buf = malloc(SC_REKEY_STATE_MAX);
	int n, r;

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	n = sc_rekey_state_seal(old_mk, cfg->uuid, phase, new_mk, text, len, buf);
	r = n < 0 ? n : sc_backing_write_file(b, SC_VOL_TMP_PREFIX, SC_REKEY_STATE_NAME, buf,
					      (size_t)n, 0600, true, err, errlen);
	if (n < 0)
		snprintf(err, errlen, "cannot seal the rekey state: %s", strerror(-n));
	sc_wipe(buf, SC_REKEY_STATE_MAX);
	free(buf);
	if (!r)
		sc_rekey_step();
	return r;
}

int sc_rekey_state_read(struct sc_backing *b, const struct sc_config *cfg, const uint8_t *old_mk,
			enum sc_rekey_phase *phase, uint8_t *new_mk, char *text, size_t *len,
			char *err, size_t errlen)
{
	char *buf = malloc(SC_REKEY_STATE_MAX);
	size_t off = 0;
	struct stat st;
	ssize_t n;
	int r;

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	n = sc_backing_read_file(b, SC_REKEY_STATE_NAME, buf, SC_REKEY_STATE_MAX, &st);
	r = n < 0 ? (int)n : sc_rekey_state_open(old_mk, cfg->uuid, buf, (size_t)n, phase,
						  new_mk, &off, len);
	if (!r)
		memcpy(text, buf + off, *len);
	else if (r != -ENOENT)
		snprintf(err, errlen, "%s/%s: %s", sc_backing_spec(b), SC_REKEY_STATE_NAME,
			 r == -EBADMSG ? "does not open under this volume's key (another "
			 "volume's, or edited)" : r == -EUCLEAN ? "not a rekey state file, or "
			 "damaged" : strerror(-r));
	sc_wipe(buf, SC_REKEY_STATE_MAX);
	free(buf);
	return r;
}

int sc_rekey_state_remove(struct sc_backing *b, char *err, size_t errlen)
{
	struct rk_stack raw;
	struct stat st;
	int fd, r;

	raw.top = NULL;
	fd = sc_backing_root(b, &st);
	r = fd < 0 ? fd : stack_make(b, NULL, NULL, fd, RK_FRESH_NONE, NULL, &raw);
	if (!r)
		r = sc_xl_unlink(raw.top, &raw.root, SC_REKEY_STATE_NAME);
	if (r == -ENOENT)
		r = 0;
	if (!r)
		r = dir_sync(raw.top, &raw.root);
	if (r)
		snprintf(err, errlen, "cannot remove %s/%s: %s", sc_backing_spec(b),
			 SC_REKEY_STATE_NAME, strerror(-r));
	stack_free(&raw);
	return r;
}

/* ---- this client's freshness record (integrity volumes) ----------------------------- */

int sc_rekey_fresh_drop(struct sc_rekey *k, char *err, size_t errlen)
{
	int r;

	if (!(made_cfg(k)->features & SC_FEAT_INTEGRITY))
		return 0;
	r = sc_fresh_unstage(k->cfg->uuid, k->state_dir);
	if (r)
		snprintf(err, errlen, "cannot remove the freshness record a stopped rekey "
			 "staged: %s", strerror(-r));
	return r;
}

int sc_rekey_fresh_finish(struct sc_rekey *k, char *err, size_t errlen)
{
	struct rk_stack s = { .root.fd = -1 };
	int r;

	if (!(made_cfg(k)->features & SC_FEAT_INTEGRITY))
		return 0;
	r = keys_make(made_cfg(k), k->new_mk, RK_FRESH_NONE, NULL, &s);
	if (!r)
		r = sc_fresh_promote(s.ikey, k->cfg->uuid, k->state_dir);
	if (r >= 0)
		sc_rekey_step();
	else
		snprintf(err, errlen, "cannot put this machine's freshness record of the volume "
			 "under the new key in place: %s", strerror(-r));
	stack_free(&s);
	return r;
}
