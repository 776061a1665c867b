/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crypt_i.h - private to the crypt translator (fs/xlators/crypt/crypt.c) and its tests:
 * the data-unit arithmetic, kept in pure functions (fs/xlators/crypt/crypt_span.c) so it
 * can be tested without FUSE, files or keys.
 *
 * Vocabulary (docs/format.md has the rules these follow):
 *  - a file of size sz is cut into units of bs bytes; the last one may be
 *    partial;
 *  - the "tail group": when the last unit holds 1..15 bytes and sz >= 16,
 *    the crypto library encrypts it together with the last 16 stored bytes
 *    of the unit before it, so those two units are only ever decrypted or
 *    re-encrypted together;
 *  - a "tiny" file (0 < sz < 16) is one short unit under a keystream whose
 *    IV lives in the header and must change on every write of it;
 *  - a unit whose stored bytes are all zero is a hole and reads as zeros,
 *    so units that were never written are simply left unallocated.
 */
#ifndef SC_CRYPT_I_H
#define SC_CRYPT_I_H

#include <stdbool.h>
#include <stdint.h>

/* Smallest non-tiny file; also the cipher block the tail rule borrows. */
#define SC_CRYPT_TINY	16u

/* Number of units of a file of size sz: ceil(sz / bs). */
static inline uint64_t sc_crypt_nunits(uint64_t bs, uint64_t sz)
{
	return (sz + bs - 1) / bs;
}

/* True when the last unit of a file of size sz is tied to the one before it. */
static inline bool sc_crypt_short_tail(uint64_t bs, uint64_t sz)
{
	return sz >= SC_CRYPT_TINY && sz % bs != 0 && sz % bs < SC_CRYPT_TINY;
}

/*
 * The stored range [*a, *b) that must be read and decrypted, under file
 * size sz, to obtain the plaintext range [off, end) (off < end <= sz): the
 * covering units, clipped to sz, widened to the whole tail group when it
 * touches it.
 */
void sc_crypt_dec_range(uint64_t bs, uint64_t sz, uint64_t off, uint64_t end,
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
struct sc_crypt_run {
	uint64_t	ua, ub;
	uint64_t	da, db;
};

#define SC_CRYPT_MAX_RUNS	4

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
struct sc_crypt_plan {
	unsigned		nruns;
	struct sc_crypt_run	run[SC_CRYPT_MAX_RUNS];
	bool			rekey;	/* tiny result: new keystream IV, new header after data */
};

/*
 * Fills *p.  direct_ok false forbids direct units (the write source is not
 * a buffer, e.g. zeroing).  Returns 0, or -EINVAL if the arguments are
 * inconsistent (we > new_sz, wo > we, new_sz < old_sz with a write past
 * new_sz).
 */
int sc_crypt_plan(uint64_t bs, uint64_t old_sz, uint64_t new_sz, uint64_t wo, uint64_t we,
		  bool direct_ok, struct sc_crypt_plan *p);

#endif /* SC_CRYPT_I_H */
