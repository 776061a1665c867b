/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rangelock.h - shared/exclusive locks on ranges of one file's data units,
 * granted in arrival order among overlapping requests (private to fs/).
 *
 * The data engine holds its per-file rwlock shared for reads and for
 * writes that change no size, and one of these on the units each of them
 * decrypts or re-encrypts: readers of a unit exclude its writers, writers
 * of a unit exclude everyone else on it, and requests on disjoint units
 * run in parallel (O_DIRECT writers of one file, see fs/fuse/wire.c).
 */
#ifndef SC_RANGELOCK_H
#define SC_RANGELOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Requests held or waiting at once.  More than the FUSE workers that can
 * hold the file's rwlock: a request finding no free slot waits for one.
 */
#define SC_RLOCK_SLOTS	16

struct sc_rlock {
	pthread_mutex_t	mu;
	pthread_cond_t	cv;
	uint64_t	next_seq;	/* arrival order */
	unsigned	nwait;		/* threads in pthread_cond_wait */
	struct {
		uint64_t	lo, hi;	/* [lo, hi); hi == 0: slot free */
		uint64_t	seq;
		bool		excl;
	} slot[SC_RLOCK_SLOTS];
};

/* Returns 0 or -ENOMEM. */
int sc_rlock_init(struct sc_rlock *rl);
void sc_rlock_destroy(struct sc_rlock *rl);

/*
 * Blocks until [lo, hi) (lo < hi) is granted: no earlier request that
 * overlaps it is exclusive, and none at all if this one is exclusive.
 * Returns the token for sc_rlock_unlock().
 */
int sc_rlock_lock(struct sc_rlock *rl, uint64_t lo, uint64_t hi, bool excl);
void sc_rlock_unlock(struct sc_rlock *rl, int token);

#endif /* SC_RANGELOCK_H */
