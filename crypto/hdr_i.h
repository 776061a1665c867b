/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hdr_i.h - the per-file header's on-disk layout (docs/format.md
 * "Per-file header"): the two versions, their sizes and field offsets.
 *
 * Pure format facts, no code that needs a key: mkey.c checks a header
 * version against them without calling into header.c, which in turn needs
 * mkey.c for the keys.  That keeps the dependency one way (header.c ->
 * mkey.c -> this file).  Private to crypto/ and its tests (through
 * crypto_i.h).
 */
#ifndef SC_HDR_I_H
#define SC_HDR_I_H

#include <stddef.h>
#include <stdint.h>
#include "sc_crypto.h"

/*
 * The header on disk (docs/format.md), little-endian, version byte first.
 * Both versions share bytes 0..23 (the part the MAC covers); version 2
 * keeps 16 bytes of the HMAC-SHA256 instead of 32, and so fits in an ext4
 * inode.  The version byte is MACed, so one version cannot pass for the
 * other.
 */
struct sc_hdr_v1 {
	uint8_t		version;	/* 1 */
	uint8_t		cipher;
	uint8_t		log2_bs;
	uint8_t		flags;
	uint8_t		reserved[4];
	uint8_t		nonce[16];
	uint8_t		mac[32];	/* HMAC-SHA256(header-mac key, bytes 0..23) */
	uint8_t		tiny_iv[16];	/* not covered by the MAC */
} __attribute__((packed));

struct sc_hdr_v2 {
	uint8_t		version;	/* 2 */
	uint8_t		cipher;
	uint8_t		log2_bs;
	uint8_t		flags;
	uint8_t		reserved[4];
	uint8_t		nonce[16];
	uint8_t		mac[16];	/* the first 16 bytes of that HMAC */
	uint8_t		tiny_iv[16];	/* not covered by the MAC */
} __attribute__((packed));

#define SC_HDR_VERSION_LATEST	2
#define SC_HDR_MAC_OFF		24	/* MAC covers bytes 0..23; the MAC starts here */
#define SC_HDR_V1_TINY_IV_OFF	56
#define SC_HDR_V2_TINY_IV_OFF	40

/* The on-disk length of a header version, or 0 for one this build does not know. */
static inline size_t sc_hdr_version_size(unsigned version)
{
	switch (version) {
	case 1:
		return SC_HDR_V1_SIZE;
	case 2:
		return SC_HDR_V2_SIZE;
	default:
		return 0;
	}
}

#endif /* SC_HDR_I_H */
