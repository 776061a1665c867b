/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * span.h - the data engine's unit arithmetic (span.c): which stored bytes
 * a read decrypts and which units a write, truncate or fallocate
 * re-encrypts, for both contents formats.  Pure functions on sizes and
 * offsets, no I/O, tested alone (tests/crypt/test_span.c).  The
 * vocabulary (units, the tail group, tiny files, holes) is engine.h's.
 */
#ifndef SC_DATA_SPAN_H
#define SC_DATA_SPAN_H

#include <stdbool.h>
#include <stdint.h>

/* Smallest non-tiny file; also the cipher block the tail rule borrows. */
#define SC_DATA_TINY	16u

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Number of units of a file of size sz: ceil(sz / bs). */
static inline uint64_t sc_data_nunits(uint64_t bs, uint64_t sz)
{
	return (sz + bs - 1) / bs;
}

/* True when the last unit of a file of size sz is tied to the one before it. */
static inline bool sc_data_short_tail(uint64_t bs, uint64_t sz)
{
	return sz >= SC_DATA_TINY && sz % bs != 0 && sz % bs < SC_DATA_TINY;
}

/*
 * The stored range [*a, *b) that must be read and decrypted, under file
 * size sz, to obtain the plaintext range [off, end) (off < end <= sz): the
 * covering units, clipped to sz, widened to the whole tail group when it
 * touches it.
 */
void sc_data_dec_range(uint64_t bs, uint64_t sz, uint64_t off, uint64_t end,
			uint64_t *a, uint64_t *b);

/*
 * A run of consecutive units [ua, ub) to re-encrypt under the new size and
 * write with one call.  Units [da, db) inside it are wholly overwritten by
 * the write and may be encrypted straight from the caller's buffer
 * ("direct"); da == db when there are none.  Units of the run outside
 * [da, db) are built in a scratch buffer from old plaintext (read and
 * decrypted under the old size where they held data), zeros beyond the old
 * size, and the write's bytes.
 */
struct sc_data_run {
	uint64_t	ua, ub;
	uint64_t	da, db;
};

#define SC_DATA_MAX_RUNS	4

/*
 * What a size change from old_sz to new_sz, with an optional write of
 * [wo, we) (wo == we: none; we <= new_sz), must re-encrypt: the written
 * units, every surviving unit whose encoding depends on the size and
 * changes (the old partial last unit, both tail groups), widened so a tail
 * group is always written whole.  Units beyond old_sz that nothing writes
 * stay holes.  Runs are in ascending order, which is also the crash-safe
 * write order: the old last unit is re-encrypted as a full unit before any
 * later unit extends the file past it.
 */
struct sc_data_plan {
	unsigned		nruns;
	struct sc_data_run	run[SC_DATA_MAX_RUNS];
	bool			rekey;	/* tiny result: new keystream IV, new header after data */
};

/*
 * Fills *p.  direct_ok false forbids direct units (the write source is not
 * a buffer, e.g. zeroing).  Returns 0, or -EINVAL if the arguments are
 * inconsistent (we > new_sz, wo > we, new_sz < old_sz with a write past
 * new_sz).
 */
int sc_data_plan(uint64_t bs, uint64_t old_sz, uint64_t new_sz, uint64_t wo, uint64_t we,
		  bool direct_ok, struct sc_data_plan *p);

/*
 * sc_data_plan for a format that encrypts every unit on its own, at any
 * length (aes-gcm, docs/format.md section 10): no tiny file, no tail group,
 * never a rekey.  A unit's encoding is its length alone, and only a whole
 * unit can be a hole, so a size change that leaves a partial last unit
 * past the old data plans it too (sealed as zeros).  Same arguments and
 * returns.
 */
int sc_data_plan_units(uint64_t bs, uint64_t old_sz, uint64_t new_sz, uint64_t wo, uint64_t we,
			bool direct_ok, struct sc_data_plan *p);

#endif /* SC_DATA_SPAN_H */
