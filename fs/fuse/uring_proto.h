/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uring_proto.h - the FUSE-over-io_uring wire protocol (Linux 6.14,
 * protocol 7.42), written from the kernel's
 * Documentation/filesystems/fuse-io-uring.rst and include/uapi/linux/fuse.h:
 * Debian 12's <linux/fuse.h> (7.38) predates it.  The kernel reads and
 * writes these bytes in the daemon's memory, so their sizes are pinned.
 *
 * Per ring entry the daemon registers two buffers: a header
 * (struct sc_uring_req_header) and a payload.  A request arrives as its
 * fuse_in_header in in_out, its first argument (the per-opcode struct:
 * fuse_write_in, fuse_getattr_in...; nothing for LOOKUP, UNLINK...) in
 * op_in, and every further argument (names, write data) back to back in
 * the payload, ent_in_out.payload_sz bytes.  The reply goes back as a
 * fuse_out_header in in_out and all of its arguments in the payload, with
 * their length in ent_in_out.payload_sz.
 */
#ifndef SC_URING_PROTO_H
#define SC_URING_PROTO_H

#include <stdint.h>

/* INIT flags2 bit 9 (flags bit 41): both sides speak it. */
#define SC_FUSE_OVER_IO_URING		(1ULL << 41)

#define SC_FUSE_URING_IN_OUT_HEADER_SZ	128
#define SC_FUSE_URING_OP_IN_OUT_SZ	128

struct sc_uring_ent_in_out {
	uint64_t	flags;
	uint64_t	commit_id;	/* the request's unique: names it at commit */
	uint32_t	payload_sz;	/* bytes used in the payload buffer */
	uint32_t	padding;
	uint64_t	reserved;
};

struct sc_uring_req_header {
	char				in_out[SC_FUSE_URING_IN_OUT_HEADER_SZ];	/* fuse_in/out_header */
	char				op_in[SC_FUSE_URING_OP_IN_OUT_SZ];	/* per-opcode struct */
	struct sc_uring_ent_in_out	ring_ent_in_out;
};

/* IORING_OP_URING_CMD's cmd_op on the /dev/fuse fd. */
enum {
	SC_FUSE_IO_URING_CMD_REGISTER		= 1,	/* hand over an entry, fetch */
	SC_FUSE_IO_URING_CMD_COMMIT_AND_FETCH	= 2,	/* reply, fetch the next */
};

/* In the 80-byte command area of a 128-byte SQE. */
struct sc_uring_cmd_req {
	uint64_t	flags;
	uint64_t	commit_id;	/* COMMIT_AND_FETCH: the request replied to */
	uint16_t	qid;		/* the queue: one per possible CPU */
	uint8_t		padding[6];
};

_Static_assert(sizeof(struct sc_uring_ent_in_out) == 32, "fuse_uring_ent_in_out is 32 bytes");
_Static_assert(sizeof(struct sc_uring_req_header) == 288, "fuse_uring_req_header is 288 bytes");
_Static_assert(sizeof(struct sc_uring_cmd_req) == 24, "fuse_uring_cmd_req is 24 bytes");
_Static_assert(sizeof(struct sc_uring_cmd_req) <= 80, "fits the SQE128 command area");

#endif /* SC_URING_PROTO_H */
