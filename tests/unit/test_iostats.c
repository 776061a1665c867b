/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_iostats.c - the io-stats translator (fs/xlators/iostats): the
 * latency histogram (buckets contiguous, exact below 8 ns, at most 12.5 %
 * wide above, saturating at 2^40 ns), the p99 read from it, and the layer
 * itself over the posix layer in a scratch directory: what it counts and
 * the record and label list it answers with on the root; and the record's
 * reader (sc_iostats_record_parse), on what the layer writes and on junk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sc_xlator.h"
#include "iostats_i.h"
#include "iostats_xl.h"
#include "posix_xl.h"
#include "sc_iostats.h"
#include "sc_stack.h"
#include "xlator_i.h"

Test(iostats_hist, exact_below_eight)
{
	for (uint64_t v = 0; v < 8; v++) {
		cr_assert_eq(sc_iostats_bucket(v), v);
		cr_assert_eq(sc_iostats_bucket_max((unsigned int)v), v);
	}
}

Test(iostats_hist, buckets_are_contiguous)
{
	for (unsigned int b = 0; b + 1 < SC_IOSTATS_BUCKETS; b++) {
		uint64_t hi = sc_iostats_bucket_max(b);

		cr_assert_eq(sc_iostats_bucket(hi), b, "bucket %u: max %llu falls in %u", b,
			     (unsigned long long)hi, sc_iostats_bucket(hi));
		cr_assert_eq(sc_iostats_bucket(hi + 1), b + 1, "bucket %u: %llu falls in %u", b,
			     (unsigned long long)(hi + 1), sc_iostats_bucket(hi + 1));
	}
}

Test(iostats_hist, resolution_is_an_eighth)
{
	uint64_t x = 88172645463325252ull;

	for (int i = 0; i < 100000; i++) {
		uint64_t v, hi;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = x >> (24 + i % 40);		/* every magnitude up to 2^40 */
		hi = sc_iostats_bucket_max(sc_iostats_bucket(v));
		cr_assert_geq(hi, v);
		cr_assert_leq((hi - v) * 8, v, "%llu reported as %llu", (unsigned long long)v,
			      (unsigned long long)hi);
	}
	/* the edges: 1000 ns is 1023's bucket [960, 1023] */
	cr_assert_eq(sc_iostats_bucket_max(sc_iostats_bucket(1000)), 1023);
	cr_assert_eq(sc_iostats_bucket_max(sc_iostats_bucket(960)), 1023);
	cr_assert_eq(sc_iostats_bucket_max(sc_iostats_bucket(959)), 959);
}

Test(iostats_hist, saturates)
{
	cr_assert_eq(sc_iostats_bucket((1ull << 40) - 1), SC_IOSTATS_BUCKETS - 1);
	cr_assert_eq(sc_iostats_bucket(1ull << 40), SC_IOSTATS_BUCKETS - 1);
	cr_assert_eq(sc_iostats_bucket(UINT64_MAX), SC_IOSTATS_BUCKETS - 1);
	cr_assert_eq(sc_iostats_bucket_max(SC_IOSTATS_BUCKETS - 1), (1ull << 40) - 1);
}

static uint64_t hist[SC_IOSTATS_BUCKETS];

static void put(uint64_t ns, uint64_t times)
{
	hist[sc_iostats_bucket(ns)] += times;
}

Test(iostats_p99, empty_is_zero)
{
	memset(hist, 0, sizeof(hist));
	cr_assert_eq(sc_iostats_quantile(hist, 990), 0);
}

Test(iostats_p99, rank_is_ceiling)
{
	/* 100 samples: p99 is the 99th; one slow sample is above it */
	memset(hist, 0, sizeof(hist));
	put(1000, 99);
	put(1000000, 1);
	cr_assert_eq(sc_iostats_quantile(hist, 990), 1023);
	/* two slow samples: the 99th is slow */
	memset(hist, 0, sizeof(hist));
	put(1000, 98);
	put(1000000, 2);
	cr_assert_eq(sc_iostats_quantile(hist, 990),
		     sc_iostats_bucket_max(sc_iostats_bucket(1000000)));
	/* 101 samples: rank ceil(99.99) = 100 */
	memset(hist, 0, sizeof(hist));
	put(100, 99);
	put(5000, 2);
	cr_assert_eq(sc_iostats_quantile(hist, 990), sc_iostats_bucket_max(sc_iostats_bucket(5000)));
	/* 1000 samples: rank 990 exactly */
	memset(hist, 0, sizeof(hist));
	put(100, 990);
	put(5000, 10);
	cr_assert_eq(sc_iostats_quantile(hist, 990), 103);
	cr_assert_eq(sc_iostats_quantile(hist, 1000), sc_iostats_bucket_max(sc_iostats_bucket(5000)));
	cr_assert_eq(sc_iostats_quantile(hist, 500), 103);
	/* one sample is every percentile */
	memset(hist, 0, sizeof(hist));
	put(7, 1);
	cr_assert_eq(sc_iostats_quantile(hist, 1), 7);
	cr_assert_eq(sc_iostats_quantile(hist, 990), 7);
}

/* ---- the layer over posix ------------------------------------------------ */

static char dir[64];
static struct sc_xl *top;
static struct sc_obj root;
static struct sc_xl_conf conf = { .max_io = 1 << 20 };

static void setup(void)
{
	struct sc_stack_spec spec;
	struct sc_xl *posix;

	strcpy(dir, "/tmp/sc-iostats.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	/* Built as the mount builds it: -o stats on the passthrough stack. */
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_PASSTHROUGH, NULL, NULL), 0);
	cr_assert_eq(sc_stack_spec_insert(&spec, 0, SC_XL_IOSTATS), 0);
	cr_assert_eq(sc_stack_new(&spec, &top), 0);
	posix = top->below;
	cr_assert_str_eq(posix->ops->name, "posix");
	cr_assert_eq(top->id, posix->id, "an io-stats layer takes no private slot");
	memset(&root, 0, sizeof(root));
	root.fd = open(dir, O_PATH | O_DIRECTORY);
	cr_assert_geq(root.fd, 0);
	root.type = S_IFDIR;
	root.is_root = true;
	cr_assert_eq(sc_xl_stack_init(top, &root, &conf), 0);
}

static void teardown(void)
{
	char cmd[128];

	close(root.fd);
	sc_xl_stack_free(top);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* The record line of op in the layer's record: "op count errors bytes". */
static void record_line(const char *op, char *out, size_t len)
{
	char rec[8192], *p, want[40];
	ssize_t n = sc_xl_getxattr(top, &root, SC_IOSTATS_XATTR ".fuse>posix", rec, sizeof(rec) - 1);
	unsigned long long c, e, b;

	cr_assert_gt(n, 0);
	/* The record moves between calls (uptime): a size query is an upper bound. */
	cr_assert_geq(sc_xl_getxattr(top, &root, SC_IOSTATS_XATTR ".fuse>posix", NULL, 0), n,
		      "a size query is at least what a read returns");
	rec[n] = '\0';
	static const char head[] = SC_IOSTATS_MAGIC "\nlabel fuse>posix\nuptime_ns ";

	cr_assert_eq(strncmp(rec, head, sizeof(head) - 1), 0, "record: %s", rec);
	snprintf(want, sizeof(want), "\n%s ", op);
	p = strstr(rec, want);
	cr_assert_not_null(p, "no %s in %s", op, rec);
	cr_assert_eq(sscanf(p + strlen(want), "%llu %llu %llu", &c, &e, &b), 3);
	snprintf(out, len, "%llu %llu %llu", c, e, b);
}

Test(iostats_layer, counts_forwards_and_answers, .init = setup, .fini = teardown)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR };
	struct sc_obj f = { .type = S_IFREG };
	struct stat st;
	char line[80], buf[64];
	int fd;

	cr_assert_eq(sc_xl_lookup(top, &root, "nope", &fd, &st), -ENOENT);
	cr_assert_eq(sc_xl_create(top, &root, "f", 0640, &fh, &fd, &st), 0);
	f.fd = fd;
	cr_assert_eq(sc_xl_write(top, &f, &fh, "hello", 5, 0), 5);
	cr_assert_eq(sc_xl_read(top, &f, &fh, buf, sizeof(buf), 0), 5);
	cr_assert_eq(memcmp(buf, "hello", 5), 0, "data passes unchanged");
	cr_assert_eq(sc_xl_release(top, &f, &fh), 0);
	close(fd);

	record_line("lookup", line, sizeof(line));
	cr_assert_str_eq(line, "1 1 0");
	record_line("create", line, sizeof(line));
	cr_assert_str_eq(line, "1 0 0");
	record_line("write", line, sizeof(line));
	cr_assert_str_eq(line, "1 0 5");
	record_line("read", line, sizeof(line));
	cr_assert_str_eq(line, "1 0 5");
	record_line("getxattr", line, sizeof(line));
	cr_assert_str_eq(line, "0 0 0", "reading the stats is not counted");

	/* the label list: ours alone (posix has no such attribute) */
	cr_assert_eq(sc_xl_getxattr(top, &root, SC_IOSTATS_XATTR, buf, sizeof(buf)), 11);
	cr_assert_eq(memcmp(buf, "fuse>posix\n", 11), 0);
	cr_assert_eq(sc_xl_getxattr(top, &root, SC_IOSTATS_XATTR, buf, 5), -ERANGE);
	/* another label is not ours: passed down, where nothing answers */
	cr_assert_eq(sc_xl_getxattr(top, &root, SC_IOSTATS_XATTR ".crypt>posix", buf,
				    sizeof(buf)), -ENODATA);
	/* never stored */
	cr_assert_eq(sc_xl_setxattr(top, &root, SC_IOSTATS_XATTR, "x", 1, 0), -EPERM);
	cr_assert_eq(sc_xl_removexattr(top, &root, SC_IOSTATS_XATTR ".fuse>posix"), -EPERM);
	record_line("setxattr", line, sizeof(line));
	cr_assert_str_eq(line, "1 1 0", "a refused call moves no bytes");
}

/* Looks up a missing name n times, then reads the layer's record into rec. */
static void failed_lookups_then_record(int n, char *rec, size_t len)
{
	struct stat st;
	ssize_t got;
	int fd;

	for (int i = 0; i < n; i++)
		cr_assert_eq(sc_xl_lookup(top, &root, "nope", &fd, &st), -ENOENT);
	got = sc_xl_getxattr(top, &root, SC_IOSTATS_XATTR ".fuse>posix", rec, len - 1);
	cr_assert_gt(got, 0);
	rec[got] = '\0';
}

/* The latency sample: the first 256 calls of an operation, then 1 in 8. */
Test(iostats_layer, latency_is_sampled_counts_are_not, .init = setup, .fini = teardown)
{
	char rec[8192], *p;
	unsigned long long c, e, b, timed;

	failed_lookups_then_record(300, rec, sizeof(rec));
	p = strstr(rec, "\nlookup ");
	cr_assert_not_null(p);
	cr_assert_eq(sscanf(p, "\nlookup %llu %llu %llu %llu", &c, &e, &b, &timed), 4);
	cr_assert_eq(c, 300);
	cr_assert_eq(e, 300);
	/* calls 0-255, then 256, 264, ..., 296 */
	cr_assert_eq(timed, SC_IOSTATS_TIME_ALL + 6, "timed %llu", timed);
}

Test(iostats_layer, labels_of_stacked_layers)
{
	struct sc_xl *posix, *low, *high;
	struct sc_obj r = { .fd = -1, .type = S_IFDIR, .is_root = true };
	char buf[64];

	cr_assert_eq(sc_posix_xl_new(&posix), 0);
	cr_assert_eq(sc_iostats_xl_new(posix, "Bad label", &low), -EINVAL);
	cr_assert_eq(sc_iostats_xl_new(posix, "", &low), -EINVAL);
	cr_assert_eq(sc_iostats_xl_new(NULL, "x>posix", &low), -EINVAL);
	cr_assert_eq(sc_iostats_xl_new(posix, "x>posix", &low), 0);
	cr_assert_eq(sc_iostats_xl_new(low, "fuse>x", &high), 0);
	r.fd = open("/", O_PATH | O_DIRECTORY);
	cr_assert_geq(r.fd, 0);
	cr_assert_eq(sc_xl_stack_init(high, &r, &conf), 0);
	cr_assert_eq(sc_xl_getxattr(high, &r, SC_IOSTATS_XATTR, buf, sizeof(buf)), 15);
	cr_assert_eq(memcmp(buf, "fuse>x\nx>posix\n", 15), 0);
	cr_assert_gt(sc_xl_getxattr(high, &r, SC_IOSTATS_XATTR ".x>posix", NULL, 0), 0,
		     "the lower layer answers for its own label through the upper");
	close(r.fd);
	sc_xl_stack_free(high);
}

/* ---- the record's reader (include/sc_iostats.h) ------------------------- */

/* What the layer writes, `stackcrypt stats` reads back: every operation, exact counts. */
Test(iostats_record, parses_what_the_layer_writes, .init = setup, .fini = teardown)
{
	struct sc_iostats_record r;
	char rec[8192];
	size_t i;

	failed_lookups_then_record(7, rec, sizeof(rec));
	cr_assert_eq(sc_iostats_record_parse(rec, &r), 0);
	cr_assert_str_eq(r.label, "fuse>posix");
	cr_assert_gt(r.uptime_ns, 0);
	cr_assert_geq(r.nops, 30, "one line per operation: %zu", r.nops);
	for (i = 0; i < r.nops && strcmp(r.ops[i].name, "lookup"); i++)
		;
	cr_assert_lt(i, r.nops, "no lookup line");
	cr_assert_eq(r.ops[i].count, 7);
	cr_assert_eq(r.ops[i].errors, 7);
	cr_assert_eq(r.ops[i].bytes, 0);
	cr_assert_eq(r.ops[i].timed, 7, "the first calls are all timed");
	cr_assert_gt(r.ops[i].sum_ns, 0);
	cr_assert_geq(r.ops[i].p99_ns, r.ops[i].sum_ns / 7, "p99 is at least the mean");
}

/* Anything else is refused, not half read. */
Test(iostats_record, refuses_what_is_not_a_record)
{
	static const char *const bad[] = {
		"",
		"stackcrypt-iostats 2\nlabel a>b\nuptime_ns 1\n",	/* another version */
		"stackcrypt-iostats 1\nlabel a>b\n",			/* no uptime */
		"stackcrypt-iostats 1\nlabel a>b\nuptime_ns x\n",
		"stackcrypt-iostats 1\nlabel a>b\nuptime_ns 1\nread 1 2 3\n",	/* short line */
	};
	struct sc_iostats_record r;
	char text[4096];
	size_t len;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s", bad[i]);
		cr_assert_eq(sc_iostats_record_parse(text, &r), -EBADMSG, "accepted: %s", bad[i]);
	}
	/* SC_IOSTATS_MAX_OPS lines fit, one more does not */
	len = (size_t)snprintf(text, sizeof(text), SC_IOSTATS_MAGIC "\nlabel a>b\nuptime_ns 5\n");
	for (int k = 0; k < SC_IOSTATS_MAX_OPS; k++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "op%d 1 0 0 1 9 9\n", k);
	cr_assert_lt(len + 32, sizeof(text));
	cr_assert_eq(sc_iostats_record_parse(strdupa(text), &r), 0);
	cr_assert_eq(r.nops, SC_IOSTATS_MAX_OPS);
	cr_assert_str_eq(r.ops[SC_IOSTATS_MAX_OPS - 1].name, "op63");
	snprintf(text + len, sizeof(text) - len, "one_more 1 0 0 1 9 9\n");
	cr_assert_eq(sc_iostats_record_parse(text, &r), -EBADMSG);
}
