/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wire_i.h - what the front end reads and writes on /dev/fuse itself
 * (wire.c): the parsing of a raw request that the I/O hooks and the
 * session loop share, and the per-request context through which the hooks
 * and the handlers tell each other what libfuse 3.14 cannot carry.
 */
#ifndef SC_WIRE_I_H
#define SC_WIRE_I_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/fuse.h>		/* wire structs: used here, in wire.c and uring.c only */

struct sc_uring_ent;

/*
 * The fields of a raw request the front end acts on before libfuse parses
 * it.  Each is zero when the request is of another kind or too short to
 * hold it (a malformed request goes on to libfuse, which rejects it).
 */
struct sc_wire_peek {
	uint32_t	opcode;		/* 0: shorter than a fuse_in_header */
	uint64_t	unique;
	bool		kill_suidgid;	/* WRITE, SETATTR, OPEN, CREATE: drop set-id */
	bool		truncates;	/* SETATTR changing the size */
	uint32_t	io_size;	/* READ, WRITE: bytes asked for or sent */
	bool		init;		/* INIT with its flags: the three below */
	uint32_t	init_minor;
	uint64_t	init_offered;	/* flags | flags2 << 32 (flags2 if FUSE_INIT_EXT) */
};

/*
 * Parses the request of len bytes at buf into *p.  Never fails.  Inline:
 * it runs on every request, and each caller keeps only the fields it reads
 * (the compiler drops the rest), so sharing it costs nothing.
 */
static inline void sc_wire_peek(const void *buf, size_t len, struct sc_wire_peek *p)
{
	const struct fuse_in_header *h = buf;
	const void *arg = h + 1;
	size_t alen;

	*p = (struct sc_wire_peek){ 0 };
	if (len < sizeof(*h))
		return;
	alen = len - sizeof(*h);
	p->opcode = h->opcode;
	p->unique = h->unique;
	switch (h->opcode) {
	case FUSE_INIT:
		if (alen >= offsetof(struct fuse_init_in, flags) + sizeof(uint32_t)) {
			const struct fuse_init_in *in = arg;

			p->init = true;
			p->init_minor = in->minor;
			p->init_offered = in->flags;
			if ((in->flags & FUSE_INIT_EXT) &&
			    alen >= offsetof(struct fuse_init_in, flags2) + sizeof(uint32_t))
				p->init_offered |= (uint64_t)in->flags2 << 32;
		}
		break;
	case FUSE_WRITE:
		if (alen >= sizeof(struct fuse_write_in)) {
			const struct fuse_write_in *in = arg;

			p->kill_suidgid = in->write_flags & FUSE_WRITE_KILL_SUIDGID;
			p->io_size = in->size;
		}
		break;
	case FUSE_READ:
		if (alen >= sizeof(struct fuse_read_in))
			p->io_size = ((const struct fuse_read_in *)arg)->size;
		break;
	case FUSE_SETATTR:
		if (alen >= sizeof(struct fuse_setattr_in)) {
			const struct fuse_setattr_in *in = arg;

			p->kill_suidgid = in->valid & FATTR_KILL_SUIDGID;
			p->truncates = in->valid & FATTR_SIZE;
		}
		break;
	case FUSE_OPEN:
		if (alen >= sizeof(struct fuse_open_in))
			p->kill_suidgid = ((const struct fuse_open_in *)arg)->open_flags &
					  FUSE_OPEN_KILL_SUIDGID;
		break;
	case FUSE_CREATE:
		if (alen >= sizeof(struct fuse_create_in))
			p->kill_suidgid = ((const struct fuse_create_in *)arg)->open_flags &
					  FUSE_OPEN_KILL_SUIDGID;
		break;
	default:
		break;
	}
}


/*
 * The per-request context: what the /dev/fuse hooks and the handlers hand
 * each other about the request this thread is processing.
 *
 * Why a thread's context and not an argument: libfuse 3.14 gives the
 * handlers neither the raw request nor a place to hang data off a fuse_req,
 * and its reply reaches the write hook with nothing but the bytes.  What
 * both sides do share is the thread: every loop (libfuse's and loop.c)
 * reads a request, processes it and sends its reply on one thread before
 * it reads the next.  So the context lives in one thread-local struct,
 * reached only through sc_wire_req(); a handler takes it once and passes it
 * on explicitly.  It costs what the two separate thread-locals it replaces
 * cost: no allocation, lock or syscall.
 */
struct sc_wire_req {
	/*
	 * In: set by the read hook from the request's flags (see wire.c), read
	 * and cleared by the set-id policy (setid.c) of that request's handler.
	 */
	bool		kill_suidgid;
	/*
	 * Out: the OPEN/CREATE reply must carry FOPEN_PARALLEL_DIRECT_WRITES,
	 * which libfuse's fuse_file_info cannot; set by the handler before
	 * fuse_reply_open/create, added to the reply and cleared by the write
	 * hook.  The handler clears it too once the reply is sent or failed.
	 */
	bool		parallel_writes;
	/*
	 * Transport: the io_uring entry the request came in (uring.c), whose
	 * reply the write hook commits there; NULL for /dev/fuse.  Set by the
	 * queue thread before processing, cleared by the write hook.
	 */
	struct sc_uring_ent	*uring_ent;
};

/* Defined in wire.c; reach it only through sc_wire_req(). */
extern __thread struct sc_wire_req sc_wire_req_tls;

/* The context of the request this thread is processing; never NULL. */
static inline struct sc_wire_req *sc_wire_req(void)
{
	return &sc_wire_req_tls;
}

#endif /* SC_WIRE_I_H */
