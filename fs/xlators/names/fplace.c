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

/*
 * Buckets at first; doubled whenever the table holds twice as many files
 * (the kernel may hold hundreds of thousands of inodes: a fixed 1 024
 * made chains of 20 after a 10 000-file tree's create and stat, and the
 * walk of one a visible part of a rename).
 */
#define BUCKETS_MIN	1024

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
	size_t		n;	/* files in the table */
	size_t		nb;	/* buckets: a power of two */
	struct fplace	**b;
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
	t->nb = BUCKETS_MIN;
	t->b = calloc(t->nb, sizeof(*t->b));
	if (!t->b) {
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->lock, NULL);
	*out = t;
	return 0;
}

void sc_fplaces_free(struct sc_fplaces *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t->b);
	free(t);	/* every entry is an obj's, freed at its forget */
}

static size_t hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino ^ ((uint64_t)dev << 7);

	return (size_t)((h * 0x9e3779b97f4a7c15ull) >> 32);
}

static struct fplace **bucket(struct sc_fplaces *t, dev_t dev, ino_t ino)
{
	return &t->b[hash(dev, ino) & (t->nb - 1)];
}

/* Twice the buckets, under the lock; left as it is when memory is short. */
static void grow(struct sc_fplaces *t)
{
	size_t nb = t->nb * 2, i;
	struct fplace **b = calloc(nb, sizeof(*b)), *f, *next;

	if (!b)
		return;
	for (i = 0; i < t->nb; i++) {
		for (f = t->b[i]; f; f = next) {
			size_t h = hash(f->dev, f->ino) & (nb - 1);

			next = f->next;
			f->next = b[h];
			b[h] = f;
		}
	}
	free(t->b);
	t->b = b;
	t->nb = nb;
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
	pthread_mutex_lock(&t->lock);
	if (++t->n > 2 * t->nb)
		grow(t);
	b = bucket(t, f->dev, f->ino);
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
			t->n--;
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
