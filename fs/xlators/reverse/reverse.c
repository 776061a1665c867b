/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reverse.c - the reverse translator, namespace side: over a plaintext
 * tree (the posix or gluster layer), it shows the tree as the backing
 * directory of an ordinary aes-gcm volume with encrypted names, read-only
 * (docs/format.md section 12).  A copy of the view mounted forward reads
 * back the tree.
 *
 * Everything the forward format draws at random is derived instead, from
 * each entry's identity (an HMAC chained down its path), so two mounts of
 * one tree show the same bytes.  Directories get their nonce records as
 * made-up files (SC_DIRNONCE_FILE), long names their side files, the root
 * the volume's config.  Names are encrypted at readdir and decrypted at
 * lookup; the data side (rev_data.c) seals units on the fly.  Each object's
 * state (struct rev_node) is made by the lookup that finds it and handed to
 * ->adopt through the calling thread: the front end adopts what a lookup
 * returned in the same thread, right after it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rev_i.h"
#include "reverse_xl.h"

/* ---- per-thread: the node a lookup made, until ->adopt takes it ---------- */

struct rev_tls {
	struct rev_node	*pending;
};

static pthread_key_t g_tls_key;
static pthread_once_t g_tls_once = PTHREAD_ONCE_INIT;

static void node_free(struct rev_node *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->nlongs; i++)
		free(n->longs[i].plain);
	free(n->longs);
	sc_gkey_free(n->gk);
	free(n->blob);
	free(n->enc);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

static void tls_free(void *p)
{
	struct rev_tls *t = p;

	node_free(t->pending);
	free(t);
}

static void tls_key_make(void)
{
	pthread_key_create(&g_tls_key, tls_free);
}

static struct rev_tls *tls_get(void)
{
	struct rev_tls *t;

	pthread_once(&g_tls_once, tls_key_make);
	t = pthread_getspecific(g_tls_key);
	if (t == NULL) {
		t = calloc(1, sizeof(*t));
		if (t != NULL && pthread_setspecific(g_tls_key, t) != 0) {
			free(t);
			t = NULL;
		}
	}
	return t;
}

/* Hands n to the ->adopt of this thread's next new inode (a stale one is dropped). */
static int stash(struct rev_node *n)
{
	struct rev_tls *t = tls_get();

	if (t == NULL) {
		node_free(n);
		return -ENOMEM;
	}
	node_free(t->pending);
	t->pending = n;
	return 0;
}

static struct rev_node *node_new(enum rev_kind kind)
{
	struct rev_node *n = calloc(1, sizeof(*n));

	if (n != NULL) {
		n->kind = kind;
		pthread_mutex_init(&n->lock, NULL);
	}
	return n;
}

static struct rev_node *node_of(struct sc_xl *xl, const struct sc_obj *obj)
{
	return obj->priv[xl->id];
}

/* The config's inode number: one per view; a made-up one equals it with chance 2^-63. */
#define REV_CONFIG_INO	2

/* ---- directories: their nonce and record ---------------------------------- */

/*
 * n (a directory of identity n->id at place at) gets its nonce and its
 * version 2 record.  0 or -EIO.
 */
static int dir_setup(struct rev_priv *rp, struct rev_node *n, const struct sc_dirplace *at)
{
	int ret = sc_rev_derive(rp->rk, n->id, SC_REV_DIR_NONCE, NULL, 0, n->nonce);

	if (ret == 0 && sc_dirnonce_seal(rp->nk, n->nonce, at, NULL, n->rec) < 0)
		ret = -EIO;
	return ret;
}

/* The 64 bits of a made-up inode number for the entry id's use. */
static int made_up_ino(struct rev_priv *rp, const uint8_t *id, enum sc_rev_use use, ino_t *ino)
{
	uint8_t v[16];
	uint64_t x = 0;
	int ret = sc_rev_derive(rp->rk, id, use, NULL, 0, v);

	for (unsigned i = 0; i < 8; i++)
		x |= (uint64_t)v[i] << (8 * i);
	*ino = (ino_t)(x | 1);	/* never 0 */
	return ret;
}

/* ---- scanning a plaintext directory ---------------------------------------- */

struct scan {
	struct sc_xl	*xl;
	struct sc_obj	*obj;		/* the directory scanned */
	struct rev_node	*dir;
	bool		root;
	int		(*each)(struct scan *s, const struct sc_dirent *de, const char *enc,
				size_t elen);
	void		*ctx;
	int		err;
};

/* Whether the plaintext entry name is shown (the reverse config is not). */
static bool shown(const struct rev_priv *rp, bool root, const char *name)
{
	return !(root && rp->hide != NULL && strcmp(name, rp->hide) == 0);
}

static int scan_one(void *ctx, const struct sc_dirent *de)
{
	struct scan *s = ctx;
	struct rev_priv *rp = s->xl->priv;
	char enc[SC_NAME_ENC_MAX + 1];
	int n;

	if (!strcmp(de->name, ".") || !strcmp(de->name, ".."))
		return s->each(s, de, NULL, 0);
	if (!shown(rp, s->root, de->name))
		return 0;
	n = sc_name_encrypt(rp->nk, s->dir->nonce, de->name, strlen(de->name), enc);
	if (n < 0) {
		s->err = n;
		return 1;
	}
	return s->each(s, de, enc, (size_t)n);
}

/* Calls s->each for every entry of the plaintext directory obj.  0 or -errno. */
static int scan_dir(struct scan *s, struct sc_obj *obj)
{
	struct sc_xl *below = s->xl->below;
	struct sc_fh fh = { .fd = -1 };
	int ret;

	ret = sc_xl_opendir(below, obj, &fh);
	if (ret < 0)
		return ret;
	ret = sc_xl_readdir(below, obj, &fh, 0, scan_one, s);
	sc_xl_releasedir(below, obj, &fh);
	return ret < 0 ? ret : s->err;
}

/*
 * Whether the entry de of the scanned directory is a symlink whose stored
 * target needs a link side file (9.5): its target's length, from a lookup
 * below.  0 (no), 1 (yes) or -errno.
 */
static int long_target(struct scan *s, const struct sc_dirent *de)
{
	struct stat st;
	int fd, ret;

	if (de->type != S_IFLNK && de->type != 0)
		return 0;
	ret = sc_xl_lookup(s->xl->below, s->obj, de->name, &fd, &st);
	if (ret < 0)
		return ret == -ENOENT ? 0 : ret;	/* gone since the listing */
	sc_xl_drop_fd(s->xl->below, fd);
	return S_ISLNK(st.st_mode) && rev_link_size(st.st_size) == SC_LINK_MARK_LEN;
}

/* One entry of the list s->ctx (struct rev_node's longs, being rebuilt). */
static int long_push(struct scan *s, const char *name, const char *enc, size_t elen, bool link)
{
	struct rev_node *tmp = s->ctx;
	struct rev_long *l = realloc(tmp->longs, (tmp->nlongs + 1) * sizeof(*l));

	if (l == NULL)
		return -ENOMEM;
	tmp->longs = l;
	l += tmp->nlongs;
	l->plain = strdup(name);
	if (l->plain == NULL)
		return -ENOMEM;
	l->link = link;
	tmp->nlongs++;
	return sc_name_long(enc, elen, l->form);
}

/* Adds a long name, and a symlink with a link side file, to the list s->ctx. */
static int long_add(struct scan *s, const struct sc_dirent *de, const char *enc, size_t elen)
{
	int t;

	if (enc == NULL)
		return 0;
	if (elen > NAME_MAX)
		s->err = long_push(s, de->name, enc, elen, false);
	t = s->err ? 0 : long_target(s, de);
	if (t < 0)
		s->err = t;
	else if (t > 0)
		s->err = long_push(s, de->name, enc, elen, true);
	return s->err != 0;
}

/*
 * The plaintext name whose long form is form (46 characters) in dir into
 * plain (link: of a symlink whose target is in a link side file): from the
 * list of dir's long names, scanned again on a miss (a name made since).
 * 0, -ENOENT or -errno.
 */
static int long_find(struct sc_xl *xl, struct sc_obj *obj, const char *form, bool link,
		     char *plain)
{
	struct rev_node *d = node_of(xl, obj), tmp = { .kind = REV_DIR };
	struct scan s = { .xl = xl, .obj = obj, .dir = d, .root = obj->is_root, .each = long_add,
			  .ctx = &tmp };
	int ret = -ENOENT;

	pthread_mutex_lock(&d->lock);
	for (int pass = 0; pass < 2 && ret == -ENOENT; pass++) {
		for (size_t i = 0; i < d->nlongs; i++) {
			if (d->longs[i].link == link && strcmp(d->longs[i].form, form) == 0) {
				strcpy(plain, d->longs[i].plain);
				ret = 0;
				break;
			}
		}
		if (ret == 0 || pass == 1)
			break;
		ret = scan_dir(&s, obj);
		for (size_t i = 0; i < d->nlongs; i++)
			free(d->longs[i].plain);
		free(d->longs);
		d->longs = tmp.longs;
		d->nlongs = tmp.nlongs;
		tmp.longs = NULL;
		tmp.nlongs = 0;
		ret = ret < 0 ? ret : -ENOENT;
	}
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; i < tmp.nlongs; i++)
		free(tmp.longs[i].plain);
	free(tmp.longs);
	return ret;
}

/* ---- lookup ---------------------------------------------------------------- */

/* The attributes of a made-up file of len bytes in dir (owner and times its). */
static int blob_stat(struct sc_xl *xl, struct sc_obj *dir, struct rev_node *n, mode_t mode)
{
	int ret = sc_xl_getattr(xl->below, dir, NULL, &n->st);

	if (ret < 0)
		return ret;
	n->st.st_mode = S_IFREG | mode;
	n->st.st_nlink = 1;
	n->st.st_size = (off_t)n->blob_len;
	n->st.st_blocks = (blkcnt_t)((n->blob_len + 511) / 512);
	n->st.st_dev = n->dev = REV_DEV;
	n->st.st_ino = n->ino;
	n->st.st_rdev = 0;
	n->own_ino = true;
	return 0;
}

/* Hands a made-up node up: its stat, no fd. */
static int blob_reply(struct sc_xl *xl, struct sc_obj *dir, struct rev_node *n, mode_t mode,
		      int *fd_out, struct stat *st)
{
	int ret = blob_stat(xl, dir, n, mode);

	if (ret < 0) {
		node_free(n);
		return ret;
	}
	*st = n->st;
	*fd_out = -1;
	return stash(n);
}

/* The root's config file, as the forward volume's (its bytes as they are). */
static int lookup_config(struct sc_xl *xl, struct sc_obj *dir, int *fd_out, struct stat *st)
{
	struct rev_priv *rp = xl->priv;
	struct rev_node *n = node_new(REV_BLOB);

	if (n == NULL || (n->blob = malloc(rp->conf_len ? rp->conf_len : 1)) == NULL) {
		node_free(n);
		return -ENOMEM;
	}
	memcpy(n->blob, rp->conf, rp->conf_len);
	n->blob_len = rp->conf_len;
	n->ino = REV_CONFIG_INO;
	return blob_reply(xl, dir, n, 0600, fd_out, st);
}

/* dir's nonce file: its record, sealed as a file of the volume. */
static int lookup_nonce(struct sc_xl *xl, struct sc_obj *dir, int *fd_out, struct stat *st)
{
	struct rev_priv *rp = xl->priv;
	struct rev_node *d = node_of(xl, dir), *n = node_new(REV_BLOB);
	int ret = n ? 0 : -ENOMEM;

	if (ret == 0)
		ret = made_up_ino(rp, d->id, SC_REV_NONCE_FILE_ID, &n->ino);
	if (ret == 0)
		ret = rev_blob_sealed(rp, n, d->id, SC_REV_NONCE_FILE_ID, d->rec, sizeof(d->rec));
	if (ret < 0) {
		node_free(n);
		return ret;
	}
	return blob_reply(xl, dir, n, 0444, fd_out, st);
}

/* The side file of the long name plain in dir: its encoded name, sealed. */
static int lookup_side(struct sc_xl *xl, struct sc_obj *dir, const char *plain, int *fd_out,
		       struct stat *st)
{
	struct rev_priv *rp = xl->priv;
	struct rev_node *d = node_of(xl, dir), *n = node_new(REV_BLOB);
	char enc[SC_NAME_ENC_MAX + 1];
	uint8_t id[SC_REV_ID_LEN];
	int ret = n ? 0 : -ENOMEM, elen = 0;

	if (ret == 0)
		ret = sc_rev_child(rp->rk, d->id, plain, strlen(plain), id);
	if (ret == 0)
		ret = elen = sc_name_encrypt(rp->nk, d->nonce, plain, strlen(plain), enc);
	if (ret >= 0)
		ret = made_up_ino(rp, id, SC_REV_NAME_SIDE_ID, &n->ino);
	if (ret == 0)
		ret = rev_blob_sealed(rp, n, id, SC_REV_NAME_SIDE_ID, enc, (size_t)elen);
	if (ret < 0) {
		node_free(n);
		return ret;
	}
	return blob_reply(xl, dir, n, 0444, fd_out, st);
}

/*
 * The stored target S of the symlink plain in dir (found below) into enc:
 * its length, or -errno (-ENOENT: no longer such a symlink).
 */
static ssize_t link_stored(struct sc_xl *xl, struct sc_obj *dir, const char *plain,
			   const uint8_t *id, char *enc)
{
	struct rev_priv *rp = xl->priv;
	struct rev_node *d = node_of(xl, dir);
	struct sc_obj tmp = { .fd = -1, .type = S_IFLNK };	/* below's fd: no slot of ours */
	char *target = malloc(PATH_MAX + 1), name[SC_NAME_ENC_MAX + 1];
	struct stat st;
	ssize_t n = target ? 0 : -ENOMEM;
	int elen = 0;

	if (n == 0)
		n = elen = sc_name_encrypt(rp->nk, d->nonce, plain, strlen(plain), name);
	if (n >= 0)
		n = sc_xl_lookup(xl->below, dir, plain, &tmp.fd, &st);
	if (n < 0)
		tmp.fd = -1;
	if (n == 0 && !S_ISLNK(st.st_mode))
		n = -ENOENT;
	if (n == 0)
		n = sc_xl_readlink(xl->below, &tmp, target, PATH_MAX);
	if (n > 0) {
		struct sc_dirplace at = { d->nonce, name, (size_t)elen };

		n = rev_link_sealed(rp, id, &at, target, (size_t)n, enc);
	}
	if (tmp.fd >= 0)
		sc_xl_drop_fd(xl->below, tmp.fd);
	free(target);
	return n;
}

/* The link side file of the symlink plain in dir: its stored target, sealed. */
static int lookup_linkside(struct sc_xl *xl, struct sc_obj *dir, const char *plain, int *fd_out,
			   struct stat *st)
{
	struct rev_priv *rp = xl->priv;
	struct rev_node *d = node_of(xl, dir), *n = node_new(REV_BLOB);
	char *enc = malloc(SC_LINK_BOUND_ENC_MAX + 1);
	uint8_t id[SC_REV_ID_LEN];
	ssize_t len = n && enc ? 0 : -ENOMEM;

	if (len == 0)
		len = sc_rev_child(rp->rk, d->id, plain, strlen(plain), id) ? -EIO : 0;
	if (len == 0)
		len = link_stored(xl, dir, plain, id, enc);
	if (len > 0 && len <= SC_LINK_ENC_MAX)
		len = -ENOENT;	/* its target got short since: no side file */
	if (len > 0)
		len = made_up_ino(rp, id, SC_REV_LINK_SIDE_ID, &n->ino);
	if (len == 0)
		len = rev_blob_sealed(rp, n, id, SC_REV_LINK_SIDE_ID, enc, strlen(enc));
	free(enc);
	if (len < 0) {
		node_free(n);
		return (int)len;
	}
	return blob_reply(xl, dir, n, 0444, fd_out, st);
}

/* st of a real object (below's) as the view shows it. */
static void real_stat(const struct rev_priv *rp, const struct rev_node *n, struct stat *st)
{
	if (n->kind == REV_FILE) {
		st->st_size = (off_t)rev_stored_size(rp->bs, (uint64_t)st->st_size);
		st->st_blocks = (st->st_size + 511) / 512;
	} else if (n->kind == REV_LINK) {
		st->st_size = rev_link_size(st->st_size);
	}
	if (n->own_ino) {
		st->st_dev = n->dev;
		st->st_ino = n->ino;
		st->st_nlink = 1;
	}
}

/*
 * The state of the real entry plain (encoded enc) in dir d, found as st:
 * identity, and what its kind needs.  A hard-linked regular file keeps its
 * key (one inode of the view for all its names) and takes the identity of
 * its inode number, so every name shows one header; a hard-linked symlink
 * gets a made-up key per name, since its stored target is bound to one
 * place (format.md 9.5, 12.4).
 */
static int real_node(struct rev_priv *rp, const struct rev_node *d, const char *plain,
		     const char *enc, size_t elen, const struct stat *st, struct rev_node *n)
{
	struct sc_dirplace at = { d->nonce, enc, elen };
	uint8_t fid[SC_GCM_FILE_ID_LEN];
	int ret = sc_rev_child(rp->rk, d->id, plain, strlen(plain), n->id);

	n->dev = st->st_dev;
	n->ino = st->st_ino;
	if (ret == 0 && n->kind == REV_DIR)
		return dir_setup(rp, n, &at);
	if (ret == 0 && n->kind == REV_FILE && st->st_nlink > 1)
		ret = sc_rev_inode(rp->rk, (uint64_t)st->st_ino, n->id);
	if (ret == 0 && n->kind == REV_LINK && st->st_nlink > 1) {
		n->own_ino = true;
		n->dev = REV_DEV;
		ret = made_up_ino(rp, n->id, SC_REV_FILE_ID, &n->ino);
	}
	if (ret == 0 && n->kind == REV_FILE) {
		ret = sc_rev_derive(rp->rk, n->id, SC_REV_FILE_ID, NULL, 0, fid);
		if (ret == 0)
			ret = sc_ghdr_make(rp->mk, fid, n->hdr);
	}
	if (ret == 0 && n->kind == REV_LINK) {
		memcpy(n->pnonce, d->nonce, sizeof(n->pnonce));
		n->enc = strndup(enc, elen);
		n->enc_len = elen;
		ret = n->enc ? 0 : -ENOMEM;
	}
	return ret;
}

static enum rev_kind kind_of(mode_t mode)
{
	return S_ISDIR(mode) ? REV_DIR : S_ISREG(mode) ? REV_FILE :
	       S_ISLNK(mode) ? REV_LINK : REV_OTHER;
}

/* The real entry plain of dir, looked up below. */
static int lookup_real(struct sc_xl *xl, struct sc_obj *dir, const char *plain, int *fd_out,
		       struct stat *st)
{
	struct rev_priv *rp = xl->priv;
	struct rev_node *d = node_of(xl, dir), *n;
	char enc[SC_NAME_ENC_MAX + 1];
	int ret, elen;

	if (!shown(rp, dir->is_root, plain))
		return -ENOENT;
	elen = sc_name_encrypt(rp->nk, d->nonce, plain, strlen(plain), enc);
	if (elen < 0)
		return elen == -EINVAL ? -ENOENT : elen;
	ret = sc_xl_lookup(xl->below, dir, plain, fd_out, st);
	if (ret < 0)
		return ret;
	n = node_new(kind_of(st->st_mode));
	ret = n ? real_node(rp, d, plain, enc, (size_t)elen, st, n) : -ENOMEM;
	if (ret == 0) {
		real_stat(rp, n, st);
		ret = stash(n);
		n = NULL;
	}
	node_free(n);
	if (ret < 0) {
		sc_xl_drop_fd(xl->below, *fd_out);
		*fd_out = -1;
	}
	return ret;
}

/* Replies for every name of the view: made-up files, long and short names. */
static int rev_lookup(struct sc_xl *xl, struct sc_obj *dir, const char *name, int *fd_out,
		      struct stat *st)
{
	struct rev_priv *rp = xl->priv;
	struct rev_node *d = node_of(xl, dir);
	char plain[SC_NAME_PLAIN_MAX + 1], form[SC_NAME_LONG_LEN + 1];
	size_t len = strlen(name);
	int ret;

	if (d == NULL || d->kind != REV_DIR)
		return -EIO;
	if (dir->is_root && strcmp(name, SC_CONFIG_NAME) == 0)
		return lookup_config(xl, dir, fd_out, st);
	if (strcmp(name, SC_DIRNONCE_FILE) == 0)
		return lookup_nonce(xl, dir, fd_out, st);
	switch (sc_name_kind(name, len)) {
	case SC_NAME_KIND_SHORT:
		ret = sc_name_decrypt(rp->nk, d->nonce, name, len, plain);
		if (ret < 0)
			return ret == -EBADMSG ? -ENOENT : ret;
		return lookup_real(xl, dir, plain, fd_out, st);
	case SC_NAME_KIND_LONG:
		ret = long_find(xl, dir, name, false, plain);
		return ret < 0 ? ret : lookup_real(xl, dir, plain, fd_out, st);
	case SC_NAME_KIND_SIDE:
		if (len != SC_NAME_LONG_LEN + strlen(SC_NAME_SIDE_SUFFIX))
			return -ENOENT;
		memcpy(form, name, SC_NAME_LONG_LEN);
		form[SC_NAME_LONG_LEN] = '\0';
		ret = long_find(xl, dir, form, false, plain);
		return ret < 0 ? ret : lookup_side(xl, dir, plain, fd_out, st);
	case SC_NAME_KIND_LINKSIDE:
		if (len != SC_NAME_LONG_LEN + strlen(SC_LINK_SIDE_SUFFIX) ||
		    strcmp(name + SC_NAME_LONG_LEN, SC_LINK_SIDE_SUFFIX) != 0)
			return -ENOENT;
		memcpy(form, name, SC_NAME_LONG_LEN);
		form[SC_NAME_LONG_LEN] = '\0';
		ret = long_find(xl, dir, form, true, plain);
		return ret < 0 ? ret : lookup_linkside(xl, dir, plain, fd_out, st);
	default:
		return -ENOENT;
	}
}

/* Takes the node this thread's lookup made for the new inode (matched by its key). */
static void rev_adopt(struct sc_xl *xl, struct sc_obj *obj, const struct stat *st)
{
	struct rev_tls *t = tls_get();
	struct rev_node *n = t ? t->pending : NULL;

	if (n == NULL || n->dev != st->st_dev || n->ino != st->st_ino)
		return;
	obj->priv[xl->id] = n;
	t->pending = NULL;
}

static void rev_forget(struct sc_xl *xl, struct sc_obj *obj)
{
	node_free(obj->priv[xl->id]);
	obj->priv[xl->id] = NULL;
}

static void rev_drop_fd(struct sc_xl *xl, int fd)
{
	if (fd >= 0)
		sc_xl_drop_fd(xl->below, fd);
}

static int rev_getattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, struct stat *st)
{
	struct rev_node *n = node_of(xl, obj);
	int ret;

	if (n != NULL && n->kind == REV_BLOB) {
		*st = n->st;
		return 0;
	}
	ret = sc_xl_getattr(xl->below, obj, fh && fh->fd >= 0 ? fh : NULL, st);
	if (ret == 0 && n != NULL)
		real_stat(xl->priv, n, st);
	return ret;
}

/* ---- readdir: the whole listing of the view, made at offset 0 ---------------- */

struct listing {
	struct sc_dirent	*de;
	char			**names;
	size_t			n, cap;
};

static void listing_free(struct listing *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l->de);
	free(l);
}

static int listing_add(struct listing *l, const char *name, size_t len, ino_t ino, mode_t type)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct sc_dirent *de = realloc(l->de, cap * sizeof(*de));
		char **names;

		if (de == NULL)
			return -ENOMEM;
		l->de = de;
		names = realloc(l->names, cap * sizeof(*names));
		if (names == NULL)
			return -ENOMEM;
		l->names = names;
		l->cap = cap;
	}
	l->names[l->n] = strndup(name, len);
	if (l->names[l->n] == NULL)
		return -ENOMEM;
	l->de[l->n] = (struct sc_dirent){ .ino = ino, .type = type, .next_off = (off_t)l->n + 1 };
	l->n++;
	return 0;
}

/* The link side file of the symlink de (encoded enc) in the listing s->ctx. */
static int list_link_side(struct scan *s, const struct sc_dirent *de, const char *enc,
			  size_t elen)
{
	struct rev_priv *rp = s->xl->priv;
	char form[SC_NAME_LONG_LEN + sizeof(SC_LINK_SIDE_SUFFIX)];
	uint8_t id[SC_REV_ID_LEN];
	ino_t ino;
	int ret = sc_name_long(enc, elen, form);

	if (ret == 0)
		ret = sc_rev_child(rp->rk, s->dir->id, de->name, strlen(de->name), id);
	if (ret == 0)
		ret = made_up_ino(rp, id, SC_REV_LINK_SIDE_ID, &ino);
	strcat(form, SC_LINK_SIDE_SUFFIX);
	return ret ? ret : listing_add(s->ctx, form, strlen(form), ino, S_IFREG);
}

/* One plaintext entry as the view lists it: its name (a long one with its side file). */
static int list_one(struct scan *s, const struct sc_dirent *de, const char *enc, size_t elen)
{
	struct listing *l = s->ctx;
	char form[SC_NAME_LONG_LEN + sizeof(SC_NAME_SIDE_SUFFIX)];

	struct rev_priv *rp = s->xl->priv;
	uint8_t id[SC_REV_ID_LEN];
	ino_t ino;

	int t = enc ? long_target(s, de) : 0;

	if (t > 0)
		s->err = list_link_side(s, de, enc, elen);
	else if (t < 0)
		s->err = t;
	if (s->err != 0)
		return 1;
	if (enc == NULL)
		s->err = listing_add(l, de->name, strlen(de->name), de->ino, de->type);
	else if (elen <= NAME_MAX)
		s->err = listing_add(l, enc, elen, de->ino, de->type);
	else if ((s->err = sc_name_long(enc, elen, form)) == 0) {
		s->err = listing_add(l, form, SC_NAME_LONG_LEN, de->ino, de->type);
		strcat(form, SC_NAME_SIDE_SUFFIX);
		if (s->err == 0)
			s->err = sc_rev_child(rp->rk, s->dir->id, de->name, strlen(de->name), id);
		if (s->err == 0)
			s->err = made_up_ino(rp, id, SC_REV_NAME_SIDE_ID, &ino);
		if (s->err == 0)
			s->err = listing_add(l, form, strlen(form), ino, S_IFREG);
	}
	return s->err != 0;
}

/* The listing of obj in the view. */
static int listing_make(struct sc_xl *xl, struct sc_obj *obj, struct listing **out)
{
	struct listing *l = calloc(1, sizeof(*l));
	struct scan s = { .xl = xl, .obj = obj, .dir = node_of(xl, obj), .root = obj->is_root,
			  .each = list_one, .ctx = l };
	int ret = l ? 0 : -ENOMEM;

	ino_t ino = 0;

	if (ret == 0)
		ret = scan_dir(&s, obj);
	if (ret == 0)
		ret = made_up_ino(xl->priv, s.dir->id, SC_REV_NONCE_FILE_ID, &ino);
	if (ret == 0)
		ret = listing_add(l, SC_DIRNONCE_FILE, strlen(SC_DIRNONCE_FILE), ino, S_IFREG);
	if (ret == 0 && obj->is_root)
		ret = listing_add(l, SC_CONFIG_NAME, strlen(SC_CONFIG_NAME), REV_CONFIG_INO, S_IFREG);
	if (ret < 0) {
		listing_free(l);
		return ret;
	}
	*out = l;
	return 0;
}

static int rev_readdir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off,
		       int (*fill)(void *ctx, const struct sc_dirent *de), void *ctx)
{
	struct listing *l = fh->priv[xl->id];
	int ret;

	if (node_of(xl, obj) == NULL)
		return -EIO;
	if (off == 0 || l == NULL) {
		listing_free(l);
		fh->priv[xl->id] = NULL;
		ret = listing_make(xl, obj, &l);
		if (ret < 0)
			return ret;
		fh->priv[xl->id] = l;
	}
	for (size_t i = (size_t)off; i < l->n; i++) {
		struct sc_dirent de = l->de[i];

		de.name = l->names[i];
		if (fill(ctx, &de))
			break;
	}
	return 0;
}

static int rev_releasedir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	listing_free(fh->priv[xl->id]);
	fh->priv[xl->id] = NULL;
	return sc_xl_releasedir(xl->below, obj, fh);
}

/* ---- the rest: read-only, no extended attributes --------------------------- */

static int ro_setattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
		      const struct stat *attr, int valid, struct stat *st)
{
	(void)xl, (void)obj, (void)fh, (void)attr, (void)valid, (void)st;
	return -EROFS;
}

static int ro_mknod(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		    dev_t rdev, int *fd_out, struct stat *st)
{
	(void)xl, (void)dir, (void)name, (void)mode, (void)rdev, (void)fd_out, (void)st;
	return -EROFS;
}

static int ro_mkdir(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		    int *fd_out, struct stat *st)
{
	(void)xl, (void)dir, (void)name, (void)mode, (void)fd_out, (void)st;
	return -EROFS;
}

static int ro_symlink(struct sc_xl *xl, struct sc_obj *dir, const char *name, const char *target,
		      int *fd_out, struct stat *st)
{
	(void)xl, (void)dir, (void)name, (void)target, (void)fd_out, (void)st;
	return -EROFS;
}

static int ro_link(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		   const char *newname, struct stat *st)
{
	(void)xl, (void)obj, (void)newdir, (void)newname, (void)st;
	return -EROFS;
}

static int ro_unlink(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	(void)xl, (void)dir, (void)name;
	return -EROFS;
}

static int ro_rename(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		     struct sc_obj *newdir, const char *newname, unsigned int flags)
{
	(void)xl, (void)dir, (void)name, (void)newdir, (void)newname, (void)flags;
	return -EROFS;
}

static int ro_setxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
		       const void *value, size_t size, int flags)
{
	(void)xl, (void)obj, (void)name, (void)value, (void)size, (void)flags;
	return -EROFS;
}

static int ro_removexattr(struct sc_xl *xl, struct sc_obj *obj, const char *name)
{
	(void)xl, (void)obj, (void)name;
	return -EROFS;
}

static int ro_create(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		     struct sc_fh *fh, int *fd_out, struct stat *st)
{
	(void)xl, (void)dir, (void)name, (void)mode, (void)fh, (void)fd_out, (void)st;
	return -EROFS;
}

static ssize_t ro_write(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			const void *buf, size_t size, off_t off)
{
	(void)xl, (void)obj, (void)fh, (void)buf, (void)size, (void)off;
	return -EROFS;
}

static int ro_fallocate(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int mode,
			off_t off, off_t len)
{
	(void)xl, (void)obj, (void)fh, (void)mode, (void)off, (void)len;
	return -EROFS;
}

static ssize_t ro_copy_file_range(struct sc_xl *xl, struct sc_obj *obj_in, struct sc_fh *fh_in,
				  off_t off_in, struct sc_obj *obj_out, struct sc_fh *fh_out,
				  off_t off_out, size_t len, int flags)
{
	(void)xl, (void)obj_in, (void)fh_in, (void)off_in, (void)obj_out, (void)fh_out;
	(void)off_out, (void)len, (void)flags;
	return -EROFS;	/* its destination is in the view */
}

static int rev_fsync(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int datasync)
{
	(void)xl, (void)obj, (void)fh, (void)datasync;
	return 0;	/* nothing is ever written */
}

/* The view shows no extended attributes: the plaintext tree's would be in the clear. */
static ssize_t rev_getxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name, void *buf,
			    size_t size)
{
	(void)xl, (void)obj, (void)name, (void)buf, (void)size;
	return -ENODATA;
}

static ssize_t rev_listxattr(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	(void)xl, (void)obj, (void)buf, (void)size;
	return 0;
}

/* The root's state: its identity, nonce and record (the root's place: none). */
static int rev_init(struct sc_xl *xl, struct sc_obj *root, struct sc_xl_conf *conf)
{
	static const struct sc_dirplace top = { 0 };
	struct rev_priv *rp = xl->priv;
	struct rev_node *n = node_new(REV_DIR);
	int ret = n ? sc_rev_root(rp->rk, n->id) : -ENOMEM;

	(void)conf;
	if (ret == 0)
		ret = dir_setup(rp, n, &top);
	if (ret < 0) {
		node_free(n);
		return ret;
	}
	root->priv[xl->id] = n;
	return 0;
}

static void rev_destroy(struct sc_xl *xl)
{
	struct rev_priv *rp = xl->priv;

	sc_nkey_free(rp->nk);
	sc_rkey_free(rp->rk);
	free(rp);
	xl->priv = NULL;
}

static const struct sc_xl_ops rev_ops = {
	.name			= "reverse",
	.init			= rev_init,
	.destroy		= rev_destroy,
	.adopt			= rev_adopt,
	.forget			= rev_forget,
	.drop_fd		= rev_drop_fd,
	.lookup			= rev_lookup,
	.getattr		= rev_getattr,
	.setattr		= ro_setattr,
	.mknod			= ro_mknod,
	.mkdir			= ro_mkdir,
	.symlink		= ro_symlink,
	.link			= ro_link,
	.unlink			= ro_unlink,
	.rmdir			= ro_unlink,
	.rename			= ro_rename,
	.readlink		= rev_readlink,
	.getxattr		= rev_getxattr,
	.listxattr		= rev_listxattr,
	.setxattr		= ro_setxattr,
	.removexattr		= ro_removexattr,
	.open			= rev_open,
	.create			= ro_create,
	.read			= rev_read,
	.write			= ro_write,
	.flush			= rev_flush,
	.fsync			= rev_fsync,
	.release		= rev_release,
	.fallocate		= ro_fallocate,
	.lseek			= rev_lseek,
	.copy_file_range	= ro_copy_file_range,
	.readdir		= rev_readdir,
	.fsyncdir		= rev_fsync,
	.releasedir		= rev_releasedir,
};

int sc_reverse_xl_new(struct sc_xl *below, const struct sc_mkey *mk,
		      const struct sc_reverse_conf *rc, struct sc_xl **out)
{
	struct rev_priv *rp;
	struct sc_xl *xl;
	int ret = -ENOMEM;

	if (!below || !mk || !rc || below->id + 1 >= SC_XL_MAX ||
	    sc_mkey_cipher(mk) != SC_CIPHER_AES_GCM)
		return -EINVAL;
	xl = calloc(1, sizeof(*xl));
	rp = calloc(1, sizeof(*rp));
	if (!xl || !rp)
		goto err_free;
	ret = sc_nkey_new(mk, &rp->nk);
	if (ret == 0)
		ret = sc_rkey_new(mk, &rp->rk);
	if (ret < 0)
		goto err_free;
	rp->mk = mk;
	rp->bs = sc_mkey_block_size(mk);
	rp->conf = rc->conf;
	rp->conf_len = rc->conf_len;
	rp->hide = rc->hide;
	xl->ops = &rev_ops;
	xl->below = below;
	xl->id = below->id + 1;
	xl->priv = rp;
	*out = xl;
	return 0;

err_free:
	if (rp) {
		sc_nkey_free(rp->nk);
		sc_rkey_free(rp->rk);
	}
	free(rp);
	free(xl);
	return ret;
}
