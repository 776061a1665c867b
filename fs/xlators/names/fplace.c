/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fplace.c - the places of regular files on integrity volumes (see
 * fplace.h; docs/format.md 11.4).  One entry per regular file inode the
 * kernel holds, owned by its obj (obj->priv of the names layer) from
 * adopt to forget, and linked in a hash table by backing inode so that a
 * rename can find it.  One mutex guards the table and the places: taken
 * once per open, create, resize or rename of a file, never per read or
 * write.  Only integrity volumes make a table.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fplace.h"

#define BUCKETS	1024

struct fplace {
	struct fplace	*next;		/* in its bucket */
	dev_t		dev;
	ino_t		ino;
	size_t		enc_len;
	uint8_t		nonce[SC_DIRNONCE_LEN];
	char		enc[SC_NAME_ENC_MAX + 1];
};

struct sc_fplaces {
	pthread_mutex_t	lock;
	struct fplace	*b[BUCKETS];
};

/* What this thread's lookup or create saw last, for the adopt that follows. */
static __thread struct {
	const struct sc_fplaces	*t;	/* NULL: nothing */
	struct fplace		f;
} t_seen;

int sc_fplaces_new(struct sc_fplaces **out)
{
	struct sc_fplaces *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	*out = t;
	return 0;
}

void sc_fplaces_free(struct sc_fplaces *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t);	/* every entry is an obj's, freed at its forget */
}

static struct fplace **bucket(struct sc_fplaces *t, dev_t dev, ino_t ino)
{
	return &t->b[((uint64_t)ino ^ ((uint64_t)dev << 7)) % BUCKETS];
}

static void place_set(struct fplace *f, const uint8_t *nonce, const char *enc, size_t enc_len)
{
	memcpy(f->nonce, nonce, SC_DIRNONCE_LEN);
	memcpy(f->enc, enc, enc_len);
	f->enc[enc_len] = '\0';
	f->enc_len = enc_len;
}

void sc_fplace_seen(struct sc_fplaces *t, const struct stat *st, const uint8_t *nonce,
		    const char *enc, size_t enc_len)
{
	if (enc_len > SC_NAME_ENC_MAX)
		return;
	t_seen.t = t;
	t_seen.f.dev = st->st_dev;
	t_seen.f.ino = st->st_ino;
	place_set(&t_seen.f, nonce, enc, enc_len);
}

void sc_fplace_adopt(struct sc_fplaces *t, struct sc_obj *obj, unsigned slot,
		     const struct stat *st)
{
	struct fplace *f, **b;

	if (t_seen.t != t || t_seen.f.dev != st->st_dev || t_seen.f.ino != st->st_ino)
		return;
	t_seen.t = NULL;
	if (obj->priv[slot])
		return;	/* a test may adopt twice */
	f = malloc(sizeof(*f));
	if (!f)
		return;	/* no place: its opens are refused (EIO), never accepted unchecked */
	*f = t_seen.f;
	b = bucket(t, f->dev, f->ino);
	pthread_mutex_lock(&t->lock);
	f->next = *b;
	*b = f;
	obj->priv[slot] = f;
	pthread_mutex_unlock(&t->lock);
}

void sc_fplace_forget(struct sc_fplaces *t, struct sc_obj *obj, unsigned slot)
{
	struct fplace *f = obj->priv[slot], **p;

	if (!f)
		return;
	pthread_mutex_lock(&t->lock);
	for (p = bucket(t, f->dev, f->ino); *p; p = &(*p)->next) {
		if (*p == f) {
			*p = f->next;
			break;
		}
	}
	obj->priv[slot] = NULL;
	pthread_mutex_unlock(&t->lock);
	free(f);
}

int sc_fplace_get(struct sc_fplaces *t, const struct sc_obj *obj, unsigned slot,
		  struct sc_fplace_copy *c)
{
	const struct fplace *f = obj->priv[slot];

	if (!f)
		return -ENOENT;
	pthread_mutex_lock(&t->lock);
	memcpy(c->nonce, f->nonce, SC_DIRNONCE_LEN);
	memcpy(c->enc, f->enc, f->enc_len + 1);
	c->p = (struct sc_xl_place){ .nonce = c->nonce, .enc = c->enc, .enc_len = f->enc_len };
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void sc_fplace_moved(struct sc_fplaces *t, dev_t dev, ino_t ino, const uint8_t *nonce,
		     const char *enc, size_t enc_len)
{
	struct fplace *f;

	if (enc_len > SC_NAME_ENC_MAX)
		return;
	pthread_mutex_lock(&t->lock);
	for (f = *bucket(t, dev, ino); f; f = f->next)
		if (f->dev == dev && f->ino == ino)
			place_set(f, nonce, enc, enc_len);
	pthread_mutex_unlock(&t->lock);
}
