/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fhdr.c - the in-file header of the authenticated format (docs/format.md
 * section 10.2): the first 40 bytes of every backing file of an aes-gcm
 * volume.  Creating one (random file id, HMAC under a volume-wide key) and
 * verifying one (magic, version, length, MAC, flags, unit size, in that
 * order).
 *
 * The header lives in the file, not in an extended attribute, so copies
 * that drop attributes (cp -r, tar without --xattrs, rsync without -X)
 * keep working files.  Its MAC binds it to the volume (the key is derived
 * from the master key); its file id, which is also in every unit's
 * associated data and salts the file key, binds the units to it.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "crypto_i.h"

/*
 * The header on disk.  Bytes 0..23 are what the MAC covers and what every
 * unit's associated data starts with (SC_GHDR_AUTH_LEN).
 */
struct sc_ghdr {
	char		magic[4];	/* "scgm" */
	uint8_t		version;	/* 1 */
	uint8_t		log2_bs;	/* 9..16, the volume's */
	uint8_t		flags[2];	/* little-endian u16: SC_GHDR_F_* */
	uint8_t		file_id[SC_GCM_FILE_ID_LEN];
	uint8_t		mac[16];	/* HMAC-SHA256(gcm header MAC key, bytes 0..23)[0..15] */
} __attribute__((packed));

_Static_assert(sizeof(struct sc_ghdr) == SC_GHDR_SIZE, "the aes-gcm header is 40 bytes");
_Static_assert(offsetof(struct sc_ghdr, file_id) == 8, "file id at byte 8");
_Static_assert(offsetof(struct sc_ghdr, mac) == SC_GHDR_AUTH_LEN, "MAC covers bytes 0..23");
_Static_assert(sizeof(SC_GHDR_MAGIC) - 1 == 4, "4-byte magic");

static unsigned log2u(uint32_t v)
{
	unsigned l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

static int ghdr_mac(const struct sc_mkey *mk, const uint8_t *auth, uint8_t mac[32])
{
	return sc_mkey_gcm_header_mac(mk, auth, SC_GHDR_AUTH_LEN, mac);
}

/* A new header: the volume's unit size, a random file id, the MAC.  0 or -EIO. */
int sc_ghdr_new(const struct sc_mkey *mk, uint8_t out[SC_GHDR_SIZE])
{
	uint8_t id[SC_GCM_FILE_ID_LEN];
	int ret;

	/* The file id salts the file key: it must never repeat, so it comes
	 * from the OS CSPRNG (one syscall per file create, not per unit). */
	ret = sc_random(id, sizeof(id));
	return ret != 0 ? ret : sc_ghdr_make(mk, id, out);
}

/*
 * A header with the file id given (reverse mode, whose file ids are
 * derived, not drawn: docs/format.md 12.3), flags TRACKS.  0 or -EIO.
 */
int sc_ghdr_make(const struct sc_mkey *mk, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		 uint8_t out[SC_GHDR_SIZE])
{
	struct sc_ghdr h;
	uint8_t mac[32];
	int ret;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SC_GHDR_MAGIC, sizeof(h.magic));
	h.version = SC_GHDR_VERSION;
	/* Made by a build that tracks holes: zero units of it are not holes until it has one. */
	h.flags[0] = SC_GHDR_F_TRACKS;
	h.log2_bs = (uint8_t)log2u(sc_mkey_block_size(mk));
	memcpy(h.file_id, file_id, sizeof(h.file_id));
	ret = ghdr_mac(mk, (const uint8_t *)&h, mac);
	if (ret != 0)
		return ret;
	memcpy(h.mac, mac, sizeof(h.mac));
	memcpy(out, &h, sizeof(h));
	return 0;
}

/*
 * Checks, in this order: the magic (-EUCLEAN: not a file of this format,
 * or its first bytes were damaged), the version (-EPROTONOSUPPORT: a newer
 * header may be longer, so before the length), the length (-EUCLEAN: a
 * truncated header), the MAC (-EUCLEAN: tampered, or a header from another
 * volume), the flags (-EPROTONOSUPPORT), the unit size (-EINVAL: not the
 * volume's).  On success, file_id (if not NULL) gets the file id.
 */
int sc_ghdr_verify(const struct sc_mkey *mk, const void *buf, size_t len,
		   uint8_t file_id[SC_GCM_FILE_ID_LEN])
{
	const uint8_t *b = buf;
	struct sc_ghdr h;
	uint8_t mac[32];
	int ret, ok;

	if (len < 5 || memcmp(b, SC_GHDR_MAGIC, 4) != 0)
		return -EUCLEAN;
	if (b[4] != SC_GHDR_VERSION)
		return -EPROTONOSUPPORT;
	if (len != SC_GHDR_SIZE)
		return -EUCLEAN;
	memcpy(&h, b, sizeof(h));
	ret = ghdr_mac(mk, b, mac);
	if (ret != 0)
		return ret;
	ok = sc_memeq_ct(mac, h.mac, sizeof(h.mac));
	sc_wipe(mac, sizeof(mac));
	if (!ok)
		return -EUCLEAN;
	if (!sc_ghdr_flags_known(sc_ghdr_flags(b)))
		return -EPROTONOSUPPORT;
	if (h.log2_bs != log2u(sc_mkey_block_size(mk)))
		return -EINVAL;
	if (file_id != NULL)
		memcpy(file_id, h.file_id, sizeof(h.file_id));
	return 0;
}

/* The flags of a header (bytes 6..7, little-endian); not verified. */
uint16_t sc_ghdr_flags(const void *hdr)
{
	const uint8_t *b = hdr;

	return (uint16_t)(b[6] | b[7] << 8);
}

bool sc_ghdr_is_v1(const void *hdr, size_t len)
{
	const uint8_t *p = hdr;

	return len >= SC_GHDR_SIZE && memcmp(p, SC_GHDR_MAGIC, 4) == 0 && p[4] == SC_GHDR_VERSION;
}

/*
 * The combinations a build reads: none (a file from before hole tracking),
 * TRACKS, TRACKS|HOLES.  HOLES alone means nothing and is refused, as is
 * any other bit (a later build's).
 */
bool sc_ghdr_flags_known(uint16_t flags)
{
	return flags == 0 || flags == SC_GHDR_F_TRACKS ||
	       flags == (SC_GHDR_F_TRACKS | SC_GHDR_F_HOLES);
}

/*
 * Sets "may hold holes" in the verified header hdr of a file that tracks
 * holes and recomputes its MAC (the units stay valid: their associated
 * data has that bit clear, gcm.c).  0, -EINVAL (hdr does not track holes)
 * or -EIO.
 */
int sc_ghdr_mark_holes(const struct sc_mkey *mk, uint8_t hdr[SC_GHDR_SIZE])
{
	uint8_t mac[32];
	int ret;

	if (!(sc_ghdr_flags(hdr) & SC_GHDR_F_TRACKS))
		return -EINVAL;
	hdr[6] |= SC_GHDR_F_HOLES;
	ret = ghdr_mac(mk, hdr, mac);
	if (ret == 0)
		memcpy(hdr + SC_GHDR_AUTH_LEN, mac, 16);
	sc_wipe(mac, sizeof(mac));
	return ret;
}
