/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_iostats.h - what the io-stats layers of a mount (fs/xlators/iostats,
 * -o stats) answer, for a program that reads them through the mount
 * (`stackcrypt stats`, fs/cli/cmd_stats.c): the extended attribute names,
 * the record's text and its one parser (fs/xlators/iostats/record.c),
 * beside the layer that writes it.
 *
 * Read on the root of the mount only, never stored: every io-stats layer
 * answers getxattr of SC_IOSTATS_XATTR with the labels of itself and of
 * the io-stats layers below it (one per line, top first), and getxattr of
 * SC_IOSTATS_XATTR "." LABEL with its record if LABEL is its own.  On the
 * root, setxattr and removexattr of these names fail with EPERM, so none
 * reaches the backing directory while stats are on.  The crypt layer
 * passes such names unchanged (they are not its header name H nor H!s).
 * A label names the layer's boundary: "fuse>crypt" (under the front end,
 * above crypt).
 */
#ifndef SC_IOSTATS_H
#define SC_IOSTATS_H

#include <stddef.h>

#define SC_IOSTATS_XATTR	"user.stackcrypt.stats"
#define SC_IOSTATS_LABEL_MAX	32	/* bytes of a label, NUL included */
/*
 * Answered by the front end (fs/fuse/handlers.c) on the root of every
 * mount, read-only: the transport the kernel serves it by, "io_uring" or
 * "/dev/fuse read/write" (sc_fuse_transport), which `stackcrypt stats`
 * shows above the counts.
 */
#define SC_TRANSPORT_XATTR	"user.stackcrypt.transport"

/*
 * The record, text, one item per line:
 *   stackcrypt-iostats 1
 *   label LABEL
 *   uptime_ns N
 *   OP COUNT ERRORS BYTES TIMED SUM_NS P99_NS      (one line per operation)
 * COUNT includes calls still running.  SUM_NS / TIMED is the mean latency
 * of the TIMED calls; P99_NS is read from their histogram.
 */
#define SC_IOSTATS_MAGIC	"stackcrypt-iostats 1"
#define SC_IOSTATS_OP_NAME_MAX	32	/* bytes of an operation's name, NUL included */
#define SC_IOSTATS_MAX_OPS	64	/* operations in one record, at most */

/* One operation's line of a record. */
struct sc_iostats_op {
	char			name[SC_IOSTATS_OP_NAME_MAX];
	unsigned long long	count, errors, bytes, timed, sum_ns, p99_ns;
};

/* A record, parsed. */
struct sc_iostats_record {
	char			label[SC_IOSTATS_LABEL_MAX];
	unsigned long long	uptime_ns;
	struct sc_iostats_op	ops[SC_IOSTATS_MAX_OPS];
	size_t			nops;
};

/*
 * Parses the record in text (NUL-terminated; cut into lines in place)
 * into *r.  Returns 0, or -EBADMSG when text is no record of this version
 * (another magic line, a line that does not parse, no uptime, more than
 * SC_IOSTATS_MAX_OPS operations).
 */
int sc_iostats_record_parse(char *text, struct sc_iostats_record *r);

#endif /* SC_IOSTATS_H */
