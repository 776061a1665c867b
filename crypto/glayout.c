/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * glayout.c - offset arithmetic of the authenticated format (docs/format.md
 * section 10.3): where unit i is stored, how many stored bytes a plaintext
 * size needs and back, and which stored bytes a read of a plaintext range
 * must fetch.  Pure functions of the block size; no keys, no I/O.
 *
 * Plaintext units are bs bytes (a power of two), exactly as in the
 * length-preserving formats, so the crypt layer's unit arithmetic carries
 * over; only the stored position of a unit changes: hlen + i * (bs + 32),
 * hlen the header's length: 40 (version 1, section 10.2) or 88 (version 2,
 * integrity volumes, section 11.3).  The functions without _h are the
 * version 1 ones.
 */
#include <errno.h>
#include <stdint.h>
#include "sc_crypto.h"

static uint64_t sbs(uint32_t bs)
{
	return (uint64_t)bs + SC_GCM_OVERHEAD;
}

uint64_t sc_gcm_unit_off_h(uint32_t hlen, uint32_t bs, uint64_t idx)
{
	return hlen + idx * sbs(bs);
}

uint64_t sc_gcm_unit_off(uint32_t bs, uint64_t idx)
{
	return sc_gcm_unit_off_h(SC_GHDR_SIZE, bs, idx);
}

uint64_t sc_gcm_stored_len(uint32_t bs, uint64_t len)
{
	uint64_t rem = len % bs;

	return len / bs * sbs(bs) + (rem != 0 ? rem + SC_GCM_OVERHEAD : 0);
}

uint64_t sc_gcm_stored_size_h(uint32_t hlen, uint32_t bs, uint64_t plain)
{
	return hlen + sc_gcm_stored_len(bs, plain);
}

uint64_t sc_gcm_stored_size(uint32_t bs, uint64_t plain)
{
	return sc_gcm_stored_size_h(SC_GHDR_SIZE, bs, plain);
}

/*
 * 0 with *plain, -EUCLEAN (truncated header; with a version 2 header an
 * empty backing file too: create writes the header, format.md 11.3) or
 * -EBADMSG (truncated unit).
 */
int sc_gcm_plain_size_h(uint32_t hlen, uint32_t bs, uint64_t stored, uint64_t *plain)
{
	uint64_t body, rem;

	if (stored == 0 && hlen == SC_GHDR_SIZE) {	/* created, header not written yet: empty */
		*plain = 0;
		return 0;
	}
	if (stored < hlen)
		return -EUCLEAN;
	body = stored - hlen;
	rem = body % sbs(bs);
	if (rem != 0 && rem <= SC_GCM_OVERHEAD)
		return -EBADMSG;
	*plain = body / sbs(bs) * bs + (rem != 0 ? rem - SC_GCM_OVERHEAD : 0);
	return 0;
}

int sc_gcm_plain_size(uint32_t bs, uint64_t stored, uint64_t *plain)
{
	return sc_gcm_plain_size_h(SC_GHDR_SIZE, bs, stored, plain);
}

uint64_t sc_gcm_plain_max_h(uint32_t hlen, uint32_t bs)
{
	uint64_t body = (uint64_t)INT64_MAX - hlen, rem = body % sbs(bs);

	return body / sbs(bs) * bs + (rem > SC_GCM_OVERHEAD ? rem - SC_GCM_OVERHEAD : 0);
}

uint64_t sc_gcm_plain_max(uint32_t bs)
{
	return sc_gcm_plain_max_h(SC_GHDR_SIZE, bs);
}

void sc_gcm_stored_span_h(uint32_t hlen, uint32_t bs, uint64_t plain, uint64_t off,
			  uint64_t len, uint64_t *first, uint64_t *soff, uint64_t *slen)
{
	uint64_t end, a, b;

	end = off < plain ? (len < plain - off ? off + len : plain) : off;
	*first = off / bs;
	if (end <= off) {
		*soff = sc_gcm_unit_off_h(hlen, bs, *first);
		*slen = 0;
		return;
	}
	a = off / bs * bs;				/* the first unit's start */
	b = (end - 1) / bs * bs + bs;			/* the last unit's end ... */
	if (b > plain)
		b = plain;				/* ... or the file's */
	*soff = sc_gcm_unit_off_h(hlen, bs, *first);
	*slen = sc_gcm_stored_len(bs, b - a);
}

void sc_gcm_stored_span(uint32_t bs, uint64_t plain, uint64_t off, uint64_t len,
			uint64_t *first, uint64_t *soff, uint64_t *slen)
{
	sc_gcm_stored_span_h(SC_GHDR_SIZE, bs, plain, off, len, first, soff, slen);
}
