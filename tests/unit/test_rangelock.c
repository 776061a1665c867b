/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_rangelock.c - the crypt translator's unit range locks
 * (fs/xlators/data/rangelock.c): what may be held together, what must wait, arrival
 * order among overlapping requests, a full slot table, and a stress run
 * that checks exclusion on shared data.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "rangelock.h"
#include "sc_rand.h"

static struct sc_rlock rl;

static void setup(void)
{
	cr_assert_eq(sc_rlock_init(&rl), 0);
}

static void teardown(void)
{
	sc_rlock_destroy(&rl);
}

TestSuite(rangelock, .init = setup, .fini = teardown, .timeout = 60);

/* ---- a locker thread, and how to watch it ------------------------------- */

struct locker {
	pthread_t	th;
	uint64_t	lo, hi;
	bool		excl;
	atomic_int	state;	/* 0 started, 1 holds, 2 released */
	atomic_int	go;	/* set to release */
	atomic_int	order;	/* when it got the lock (global counter) */
};

static atomic_int g_order;

static void *locker_main(void *arg)
{
	struct locker *l = arg;
	int tok = sc_rlock_lock(&rl, l->lo, l->hi, l->excl);

	l->order = atomic_fetch_add(&g_order, 1);
	l->state = 1;
	while (!l->go)
		usleep(1000);
	sc_rlock_unlock(&rl, tok);
	l->state = 2;
	return NULL;
}

static void start(struct locker *l, uint64_t lo, uint64_t hi, bool excl)
{
	l->lo = lo;
	l->hi = hi;
	l->excl = excl;
	l->state = 0;
	l->go = 0;
	cr_assert_eq(pthread_create(&l->th, NULL, locker_main, l), 0);
}

/*
 * Waits for the locker to reach state s.  No deadline: on a loaded machine
 * a thread may wait seconds for a core, and a lock that is never granted
 * is a hang, which the suite's timeout fails.
 */
static void wait_state(struct locker *l, int s)
{
	while (l->state < s)
		usleep(1000);
}

/*
 * A locker that must be blocked: still not holding after 100 ms.  A broken
 * lock fails this at once; a working one can only pass.
 */
static void assert_blocked(struct locker *l, const char *what)
{
	usleep(100 * 1000);
	cr_assert_eq(l->state, 0, "%s was granted while it must wait", what);
}

static void finish(struct locker *l)
{
	l->go = 1;
	pthread_join(l->th, NULL);
}

/* ---- what may be held together ------------------------------------------ */

Test(rangelock, disjoint_exclusive_ranges_are_held_together)
{
	int a = sc_rlock_lock(&rl, 0, 4, true);
	int b = sc_rlock_lock(&rl, 4, 8, true);	/* adjacent, not overlapping */
	int c = sc_rlock_lock(&rl, 100, 101, true);

	cr_assert_neq(a, b);
	cr_assert_neq(b, c);
	sc_rlock_unlock(&rl, b);
	sc_rlock_unlock(&rl, a);
	sc_rlock_unlock(&rl, c);
}

Test(rangelock, overlapping_shared_ranges_are_held_together)
{
	int a = sc_rlock_lock(&rl, 0, 10, false);
	int b = sc_rlock_lock(&rl, 5, 15, false);

	sc_rlock_unlock(&rl, a);
	sc_rlock_unlock(&rl, b);
}

/* [lo, hi) held (excl or not) by this thread makes the request [rlo, rhi) wait until released. */
static void check_waits(uint64_t lo, uint64_t hi, bool excl, uint64_t rlo, uint64_t rhi,
			bool rexcl, const char *what)
{
	struct locker l;
	int held = sc_rlock_lock(&rl, lo, hi, excl);

	start(&l, rlo, rhi, rexcl);
	assert_blocked(&l, what);
	sc_rlock_unlock(&rl, held);
	wait_state(&l, 1);
	finish(&l);
}

Test(rangelock, a_writer_waits_for_a_reader_of_its_units)
{
	check_waits(0, 4, false, 3, 5, true, "a writer overlapping a held reader");
}

Test(rangelock, a_reader_waits_for_a_writer_of_its_units)
{
	check_waits(10, 11, true, 0, 11, false, "a reader overlapping a held writer");
}

Test(rangelock, later_readers_do_not_overtake_a_waiting_writer)
{
	struct locker w, r2, other;
	int r1 = sc_rlock_lock(&rl, 0, 8, false);

	start(&w, 0, 8, true);
	assert_blocked(&w, "the writer");
	start(&r2, 2, 3, false);
	assert_blocked(&r2, "a reader arriving after a waiting writer of its units");
	/* Other units are not held up by the queue. */
	start(&other, 8, 9, true);
	wait_state(&other, 1);
	finish(&other);

	sc_rlock_unlock(&rl, r1);
	wait_state(&w, 1);
	assert_blocked(&r2, "the later reader while the writer holds");
	finish(&w);
	wait_state(&r2, 1);
	cr_assert_lt(w.order, r2.order);
	finish(&r2);
}

Test(rangelock, a_full_table_makes_the_next_request_wait)
{
	int tok[SC_RLOCK_SLOTS];
	struct locker extra;

	for (int i = 0; i < SC_RLOCK_SLOTS; i++)
		tok[i] = sc_rlock_lock(&rl, (uint64_t)i, (uint64_t)i + 1, true);
	start(&extra, 1000, 1001, true);
	assert_blocked(&extra, "a request with every slot taken");
	sc_rlock_unlock(&rl, tok[7]);
	wait_state(&extra, 1);
	finish(&extra);
	for (int i = 0; i < SC_RLOCK_SLOTS; i++)
		if (i != 7)
			sc_rlock_unlock(&rl, tok[i]);
}

/* ---- stress: exclusion holds on shared data ----------------------------- */

#define NUNITS	32
#define NTHREADS 12
#define ROUNDS	4000

static int g_unit[NUNITS];	/* written only under an exclusive range */
static atomic_int g_violations;

static void *stress_main(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	int me = (int)(uintptr_t)arg + 1;

	for (int n = 0; n < ROUNDS; n++) {
		uint64_t lo = sc_splitmix64(&seed) % NUNITS;
		uint64_t hi = lo + 1 + sc_splitmix64(&seed) % 4;
		bool excl = sc_splitmix64(&seed) % 3 == 0;
		int snap[NUNITS], tok;

		if (hi > NUNITS)
			hi = NUNITS;
		tok = sc_rlock_lock(&rl, lo, hi, excl);
		for (uint64_t u = lo; u < hi; u++) {
			if (excl)
				__atomic_store_n(&g_unit[u], me, __ATOMIC_RELAXED);
			snap[u] = __atomic_load_n(&g_unit[u], __ATOMIC_RELAXED);
		}
		sched_yield();
		for (uint64_t u = lo; u < hi; u++)
			if (__atomic_load_n(&g_unit[u], __ATOMIC_RELAXED) != snap[u])
				atomic_fetch_add(&g_violations, 1);
		sc_rlock_unlock(&rl, tok);
	}
	return NULL;
}

Test(rangelock, stress_no_unit_changes_under_a_holder)
{
	pthread_t th[NTHREADS];

	for (uintptr_t i = 0; i < NTHREADS; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, stress_main, (void *)i), 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(g_violations, 0, "%d units changed under a holder", (int)g_violations);
	/* Every slot is free again: a whole-range writer is granted at once. */
	sc_rlock_unlock(&rl, sc_rlock_lock(&rl, 0, NUNITS, true));
}
