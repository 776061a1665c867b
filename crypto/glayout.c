/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * glayout.c - offset arithmetic of the authenticated format (docs/format.md
 * section 10.3): where unit i is stored, how many stored bytes a plaintext
 * size needs and back, and which stored bytes a read of a plaintext range
 * must fetch.  Pure functions of the block size; no keys, no I/O.
 *
 * Plaintext units are bs bytes (a power of two), exactly as in the
 * length-preserving formats, so the crypt layer's unit arithmetic carries
 * over; only the stored position of a unit changes: 40 + i * (bs + 32).
 */
#include <errno.h>
#include <stdint.h>
#include "sc_crypto.h"

static uint64_t sbs(uint32_t bs)
{
	return (uint64_t)bs + SC_GCM_OVERHEAD;
}

uint64_t sc_gcm_unit_off(uint32_t bs, uint64_t idx)
{
	return SC_GHDR_SIZE + idx * sbs(bs);
}

uint64_t sc_gcm_stored_len(uint32_t bs, uint64_t len)
{
	uint64_t rem = len % bs;

	return len / bs * sbs(bs) + (rem != 0 ? rem + SC_GCM_OVERHEAD : 0);
}

uint64_t sc_gcm_stored_size(uint32_t bs, uint64_t plain)
{
	return SC_GHDR_SIZE + sc_gcm_stored_len(bs, plain);
}

/* 0 with *plain, -EUCLEAN (truncated header) or -EBADMSG (truncated unit). */
int sc_gcm_plain_size(uint32_t bs, uint64_t stored, uint64_t *plain)
{
	uint64_t body, rem;

	if (stored == 0) {	/* created, header not written yet: empty */
		*plain = 0;
		return 0;
	}
	if (stored < SC_GHDR_SIZE)
		return -EUCLEAN;
	body = stored - SC_GHDR_SIZE;
	rem = body % sbs(bs);
	if (rem != 0 && rem <= SC_GCM_OVERHEAD)
		return -EBADMSG;
	*plain = body / sbs(bs) * bs + (rem != 0 ? rem - SC_GCM_OVERHEAD : 0);
	return 0;
}

uint64_t sc_gcm_plain_max(uint32_t bs)
{
	uint64_t body = (uint64_t)INT64_MAX - SC_GHDR_SIZE, rem = body % sbs(bs);

	return body / sbs(bs) * bs + (rem > SC_GCM_OVERHEAD ? rem - SC_GCM_OVERHEAD : 0);
}

void sc_gcm_stored_span(uint32_t bs, uint64_t plain, uint64_t off, uint64_t len,
			uint64_t *first, uint64_t *soff, uint64_t *slen)
{
	uint64_t end, a, b;

	end = off < plain ? (len < plain - off ? off + len : plain) : off;
	*first = off / bs;
	if (end <= off) {
		*soff = sc_gcm_unit_off(bs, *first);
		*slen = 0;
		return;
	}
	a = off / bs * bs;				/* the first unit's start */
	b = (end - 1) / bs * bs + bs;			/* the last unit's end ... */
	if (b > plain)
		b = plain;				/* ... or the file's */
	*soff = sc_gcm_unit_off(bs, *first);
	*slen = sc_gcm_stored_len(bs, b - a);
}
