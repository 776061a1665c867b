/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_rand.h - the test tools' deterministic PRNG (splitmix64): small, fast,
 * every seed gives a full-period stream, and a printed seed replays a run
 * exactly.  Not for anything secret.
 */
#ifndef SC_RAND_H
#define SC_RAND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t sc_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform enough in [0, n) for tests; 0 when n is 0. */
static inline uint64_t sc_rand_below(uint64_t *s, uint64_t n)
{
	return n ? sc_splitmix64(s) % n : 0;
}

/* Fills p with the stream from *s, 8 bytes per step (the last step partly). */
static inline void sc_rand_fill(uint64_t *s, void *p, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = sc_splitmix64(s);

		memcpy((char *)p + i, &v, len - i < 8 ? len - i : 8);
	}
}

#endif /* SC_RAND_H */
