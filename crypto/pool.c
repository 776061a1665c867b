/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pool.c - the one pool of keyed cipher contexts (crypto_i.h), for every
 * contents format: a file's sets of contexts are keyed once (the key
 * schedule, and for aes-gcm the GHASH table, at make time) and reused, so
 * a data unit costs an IV reset and the cipher work, never a key setup.
 * cipher.c pools the length-preserving formats' sets, gcm.c the aes-gcm
 * ones; each says how to make and drop a set.
 *
 * get takes a set off the free list under a mutex held for two pointer
 * moves, and makes one more only when more threads than sets use the
 * file at once; put returns it, or drops it when POOL_MAX_FREE are kept.
 */
#include <errno.h>
#include "crypto_i.h"

/* Keyed sets kept beyond this are dropped on put: about one per FUSE thread. */
#define POOL_MAX_FREE	16

/* 0, -ENOMEM, or -EIO (make failed: OpenSSL refused the key). */
int sc_pool_init(struct sc_pool *p, struct sc_pool_link *(*make)(const void *key),
		 void (*drop)(struct sc_pool_link *set), const void *key)
{
	p->make = make;
	p->drop = drop;
	p->key = key;
	p->free = NULL;
	p->nfree = 0;
	if (pthread_mutex_init(&p->lock, NULL) != 0)
		return -ENOMEM;
	/* Key one set now: a key OpenSSL rejects fails the open, not a read. */
	p->free = make(key);
	if (p->free == NULL) {
		pthread_mutex_destroy(&p->lock);
		return -EIO;
	}
	p->free->next = NULL;
	p->nfree = 1;
	return 0;
}

void sc_pool_destroy(struct sc_pool *p)
{
	while (p->free != NULL) {
		struct sc_pool_link *s = p->free;

		p->free = s->next;
		p->drop(s);
	}
	pthread_mutex_destroy(&p->lock);
}

/* A keyed set, or NULL when a new one could not be made. */
struct sc_pool_link *sc_pool_get(struct sc_pool *p)
{
	struct sc_pool_link *s;

	pthread_mutex_lock(&p->lock);
	s = p->free;
	if (s != NULL) {
		p->free = s->next;
		p->nfree--;
	}
	pthread_mutex_unlock(&p->lock);
	return s != NULL ? s : p->make(p->key);	/* more threads than sets: key one more */
}

void sc_pool_put(struct sc_pool *p, struct sc_pool_link *s)
{
	pthread_mutex_lock(&p->lock);
	if (p->nfree < POOL_MAX_FREE) {
		s->next = p->free;
		p->free = s;
		p->nfree++;
		s = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	if (s != NULL)
		p->drop(s);
}
