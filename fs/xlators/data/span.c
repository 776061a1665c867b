/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * span.c - the data engine's unit arithmetic (span.h): which stored
 * bytes a read must decrypt, and which units a write, truncate or
 * fallocate must re-encrypt (see engine.h for the vocabulary).  Pure
 * functions, no I/O: tests/crypt/test_span.c checks them.
 *
 * How a unit is encrypted depends on the file size only through its
 * "encoding": its stored length, and whether it is a tiny file, the head or
 * the tail of the tail group, or a plain unit.  Only the last two units of
 * the old and of the new size can change encoding, so a resize touches at
 * most four units besides the written ones; everything else keeps its
 * stored bytes, and units past the old end that nothing writes stay holes.
 */
#include <errno.h>

#include "span.h"

enum role { ROLE_PLAIN, ROLE_HEAD, ROLE_TAIL, ROLE_TINY };

struct enc {
	uint64_t	len;
	enum role	role;
};

/*
 * The encoding of unit u (u < nunits(sz)) in a file of size sz.  lp: the
 * length-preserving rules (tiny file, tail group); without them a unit's
 * encoding is its length alone.
 */
static struct enc unit_enc(uint64_t bs, uint64_t sz, uint64_t u, bool lp)
{
	uint64_t n = sc_data_nunits(bs, sz);
	struct enc e = { .len = min_u64(bs, sz - u * bs), .role = ROLE_PLAIN };

	if (!lp)
		return e;
	if (sz < SC_DATA_TINY)
		e.role = ROLE_TINY;
	else if (sc_data_short_tail(bs, sz) && u == n - 2)
		e.role = ROLE_HEAD;
	else if (sc_data_short_tail(bs, sz) && u == n - 1)
		e.role = ROLE_TAIL;
	return e;
}

void sc_data_dec_range(uint64_t bs, uint64_t sz, uint64_t off, uint64_t end,
			uint64_t *a, uint64_t *b)
{
	uint64_t ra = off / bs * bs;
	uint64_t rb = min_u64(sc_data_nunits(bs, end) * bs, sz);

	if (sc_data_short_tail(bs, sz)) {
		uint64_t g = (sc_data_nunits(bs, sz) - 2) * bs;

		if (rb > g) {
			ra = min_u64(ra, g);
			rb = sz;
		}
	}
	*a = ra;
	*b = rb;
}

/* A set of unit intervals, small enough to scan linearly. */
struct uset {
	unsigned	n;
	uint64_t	lo[8], hi[8];
};

static void uset_add(struct uset *s, uint64_t lo, uint64_t hi)
{
	if (lo < hi && s->n < 8) {
		s->lo[s->n] = lo;
		s->hi[s->n] = hi;
		s->n++;
	}
}

static bool uset_has(const struct uset *s, uint64_t u)
{
	for (unsigned i = 0; i < s->n; i++)
		if (u >= s->lo[i] && u < s->hi[i])
			return true;
	return false;
}

/* Adds the group [g, g + 2) clipped to [0, limit) when the set touches it. */
static bool close_group(struct uset *s, uint64_t g, uint64_t limit)
{
	bool h0 = uset_has(s, g), h1 = uset_has(s, g + 1);
	uint64_t hi = min_u64(g + 2, limit);

	if (!(h0 || h1))
		return false;
	if ((g < hi && !h0) || (g + 1 < hi && !h1)) {
		uset_add(s, g, hi);
		return true;
	}
	return false;
}

/* Sorts and merges adjacent or overlapping intervals into p->run[]. */
static void to_runs(struct uset *s, uint64_t limit, struct sc_data_plan *p)
{
	for (unsigned i = 0; i < s->n; i++)
		s->hi[i] = min_u64(s->hi[i], limit);
	for (;;) {
		unsigned best = s->n;

		for (unsigned i = 0; i < s->n; i++)
			if (s->lo[i] < s->hi[i] && (best == s->n || s->lo[i] < s->lo[best]))
				best = i;
		if (best == s->n)
			return;
		if (p->nruns > 0 && s->lo[best] <= p->run[p->nruns - 1].ub) {
			struct sc_data_run *r = &p->run[p->nruns - 1];

			r->ub = max_u64(r->ub, s->hi[best]);
		} else {
			/* At most 8 intervals, hence at most 8 runs; 4 are ever reachable. */
			if (p->nruns == SC_DATA_MAX_RUNS)
				return;
			p->run[p->nruns].ua = s->lo[best];
			p->run[p->nruns].ub = s->hi[best];
			p->nruns++;
		}
		s->hi[best] = s->lo[best];	/* consumed */
	}
}

/* The units of run r wholly overwritten by [wo, we), kept apart from a split group. */
static void direct_units(uint64_t bs, uint64_t new_sz, uint64_t wo, uint64_t we, bool lp,
			 struct sc_data_run *r)
{
	uint64_t n = sc_data_nunits(bs, new_sz);
	uint64_t da = max_u64(r->ua, sc_data_nunits(bs, wo));
	uint64_t db = min_u64(r->ub, we == new_sz ? n : we / bs);

	if (lp && da < db && sc_data_short_tail(bs, new_sz)) {
		uint64_t g = n - 2;
		bool in0 = g >= da && g < db, in1 = g + 1 >= da && g + 1 < db;

		/* The group's two units go through one encrypt call, so both or neither. */
		if (in1 && !in0)
			db = da;
		else if (in0 && !in1)
			db = g;
	}
	if (da >= db)
		da = db = r->ua;
	r->da = da;
	r->db = db;
}

/*
 * The length-preserving rules' extra units: a tiny file grown by truncate
 * or fallocate, and every tail group (old or new) the set touches.
 */
static void add_lp_units(struct uset *s, uint64_t bs, uint64_t old_sz, uint64_t new_sz)
{
	uint64_t no = sc_data_nunits(bs, old_sz), nn = sc_data_nunits(bs, new_sz);

	/*
	 * A tiny file grown by truncate or fallocate: its zeros must be
	 * encrypted, since a 1..15-byte keystream ciphertext may well be
	 * all zeros and the hole rule cannot apply to it.
	 */
	if (new_sz > old_sz && new_sz < SC_DATA_TINY)
		uset_add(s, 0, 1);
	/* A tail group, old or new, is rewritten whole or not at all. */
	for (int pass = 0; pass < 3; pass++) {
		bool grew = false;

		if (sc_data_short_tail(bs, new_sz))
			grew |= close_group(s, nn - 2, nn);
		if (sc_data_short_tail(bs, old_sz))
			grew |= close_group(s, no - 2, nn);
		if (!grew)
			break;
	}
}

/* sc_data_plan (lp: the length-preserving rules) or sc_data_plan_units. */
static int plan(uint64_t bs, uint64_t old_sz, uint64_t new_sz, uint64_t wo, uint64_t we,
		bool direct_ok, bool lp, struct sc_data_plan *p)
{
	uint64_t no = sc_data_nunits(bs, old_sz), nn = sc_data_nunits(bs, new_sz);
	uint64_t cand[4] = { no - 2, no - 1, nn - 2, nn - 1 };
	struct uset s = { 0 };

	p->nruns = 0;
	p->rekey = false;
	if (wo > we || we > new_sz || bs == 0)
		return -EINVAL;
	if (wo < we)
		uset_add(&s, wo / bs, sc_data_nunits(bs, we));
	/* Surviving units that held data and whose encoding the new size changes. */
	for (unsigned i = 0; i < 4; i++) {
		uint64_t u = cand[i];
		struct enc eo, en;

		if (u >= no || u >= nn)	/* also catches the wrapped "negative" ones */
			continue;
		eo = unit_enc(bs, old_sz, u, lp);
		en = unit_enc(bs, new_sz, u, lp);
		if (eo.len != en.len || eo.role != en.role)
			uset_add(&s, u, u + 1);
	}
	/*
	 * Without the length-preserving rules only a whole unit can be a
	 * hole: a new partial last unit past the old data is sealed (zeros).
	 */
	if (!lp && new_sz > old_sz && new_sz % bs != 0 && nn - 1 >= no)
		uset_add(&s, nn - 1, nn);
	if (lp)
		add_lp_units(&s, bs, old_sz, new_sz);
	to_runs(&s, nn, p);
	for (unsigned i = 0; i < p->nruns; i++) {
		struct sc_data_run *r = &p->run[i];

		if (direct_ok && wo < we)
			direct_units(bs, new_sz, wo, we, lp, r);
		else
			r->da = r->db = r->ua;
		if (lp && new_sz < SC_DATA_TINY && r->ua == 0)
			p->rekey = true;
	}
	return 0;
}

int sc_data_plan(uint64_t bs, uint64_t old_sz, uint64_t new_sz, uint64_t wo, uint64_t we,
		  bool direct_ok, struct sc_data_plan *p)
{
	return plan(bs, old_sz, new_sz, wo, we, direct_ok, true, p);
}

int sc_data_plan_units(uint64_t bs, uint64_t old_sz, uint64_t new_sz, uint64_t wo, uint64_t we,
			bool direct_ok, struct sc_data_plan *p)
{
	return plan(bs, old_sz, new_sz, wo, we, direct_ok, false, p);
}
