/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rangelock.c - unit range locks for one file (see rangelock.h).
 *
 * A request takes a slot, stamped with its arrival number, and waits while
 * an earlier slot conflicts with it, whether that one is granted yet or
 * not.  So a writer waiting for readers of its units is not overtaken by
 * later readers of them (no starvation), while requests on other units
 * never wait for either.  The table is a handful of slots scanned under one
 * mutex: the critical sections are a few dozen instructions, against the
 * backing I/O and cipher work done while the range is held.
 */
#include <errno.h>

#include "rangelock.h"

int sc_rlock_init(struct sc_rlock *rl)
{
	*rl = (struct sc_rlock){ 0 };
	if (pthread_mutex_init(&rl->mu, NULL) != 0)
		return -ENOMEM;
	if (pthread_cond_init(&rl->cv, NULL) != 0) {
		pthread_mutex_destroy(&rl->mu);
		return -ENOMEM;
	}
	return 0;
}

void sc_rlock_destroy(struct sc_rlock *rl)
{
	pthread_cond_destroy(&rl->cv);
	pthread_mutex_destroy(&rl->mu);
}

/* True if slot i arrived before request t and the two may not be held together. */
static bool blocks(const struct sc_rlock *rl, int i, int t)
{
	if (i == t || rl->slot[i].hi == 0 || rl->slot[i].seq > rl->slot[t].seq)
		return false;
	if (rl->slot[i].hi <= rl->slot[t].lo || rl->slot[t].hi <= rl->slot[i].lo)
		return false;
	return rl->slot[i].excl || rl->slot[t].excl;
}

static bool grantable(const struct sc_rlock *rl, int t)
{
	for (int i = 0; i < SC_RLOCK_SLOTS; i++)
		if (blocks(rl, i, t))
			return false;
	return true;
}

static int free_slot(const struct sc_rlock *rl)
{
	for (int i = 0; i < SC_RLOCK_SLOTS; i++)
		if (rl->slot[i].hi == 0)
			return i;
	return -1;
}

static void wait_locked(struct sc_rlock *rl)
{
	rl->nwait++;
	pthread_cond_wait(&rl->cv, &rl->mu);
	rl->nwait--;
}

int sc_rlock_lock(struct sc_rlock *rl, uint64_t lo, uint64_t hi, bool excl)
{
	int t;

	pthread_mutex_lock(&rl->mu);
	while ((t = free_slot(rl)) < 0)
		wait_locked(rl);
	rl->slot[t].lo = lo;
	rl->slot[t].hi = hi;
	rl->slot[t].excl = excl;
	rl->slot[t].seq = rl->next_seq++;
	while (!grantable(rl, t))
		wait_locked(rl);
	pthread_mutex_unlock(&rl->mu);
	return t;
}

void sc_rlock_unlock(struct sc_rlock *rl, int token)
{
	pthread_mutex_lock(&rl->mu);
	rl->slot[token].hi = 0;
	if (rl->nwait)
		pthread_cond_broadcast(&rl->cv);
	pthread_mutex_unlock(&rl->mu);
}
