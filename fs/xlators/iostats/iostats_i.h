/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iostats_i.h - the io-stats translator's latency histogram
 * (fs/xlators/iostats/iostats.c), exposed for the unit test of its p99
 * arithmetic.  The constructor is in iostats_xl.h; what the layer answers
 * through a mount (names, record) is public: include/sc_iostats.h.
 *
 * An io-stats layer forwards every operation to the layer below and counts
 * it on the way back: calls, errors, bytes and latency (the time spent in
 * the layers below it).  It can sit at any boundary of a stack; its label
 * names the boundary ("fuse>crypt": under the front end, above crypt).
 */
#ifndef SC_IOSTATS_I_H
#define SC_IOSTATS_I_H

#include <stddef.h>
#include <stdint.h>

#include "sc_iostats.h"
#include "sc_xlator.h"

/*
 * Latency is sampled (the clock costs more than the counting): the first
 * SC_IOSTATS_TIME_ALL calls of each operation are timed, then the calls
 * whose number is a multiple of SC_IOSTATS_SAMPLE (a power of two).
 */
#define SC_IOSTATS_TIME_ALL	256
#define SC_IOSTATS_SAMPLE	8

/*
 * Latency histogram: log2 buckets, each power of two split into
 * 2^SC_IOSTATS_SUB_BITS linear sub-buckets (HDR-style).  Values below 8 ns
 * have a bucket each; above, a bucket spans at most 1/8 of its lowest
 * value, so a percentile read as its bucket's highest value is at most
 * 12.5 % above the true one, never below.  Values from 2^40 ns (18 min)
 * on all fall in the last bucket.
 */
#define SC_IOSTATS_SUB_BITS	3
#define SC_IOSTATS_MAX_LOG2	40
#define SC_IOSTATS_BUCKETS	((SC_IOSTATS_MAX_LOG2 - SC_IOSTATS_SUB_BITS + 1) << SC_IOSTATS_SUB_BITS)

/* The bucket of a latency of ns nanoseconds. */
unsigned int sc_iostats_bucket(uint64_t ns);

/* The highest latency (ns) that falls in bucket b. */
uint64_t sc_iostats_bucket_max(unsigned int b);

/*
 * The permille-th per-mille of the samples in hist (SC_IOSTATS_BUCKETS
 * counts): the highest value of the bucket that holds the sample of rank
 * ceil(total * permille / 1000).  0 when hist is empty.
 */
uint64_t sc_iostats_quantile(const uint64_t *hist, unsigned int permille);

#endif /* SC_IOSTATS_I_H */
