/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_crypto.h - the crypto library (crypto/, built as libsc_crypto.a).
 *
 * Knows nothing of FUSE, fds or paths: callers hand it bytes (the header
 * xattr value, the config text, data units) and get bytes back.  The on-disk
 * formats are specified byte by byte in docs/format.md.
 *
 * Error convention: 0 (or a length) on success, -errno on failure, with
 * fixed meanings:
 *   -EINVAL        bad argument or unsupported parameter
 *   -ENOMEM        allocation failed
 *   -EIO           OpenSSL failed unexpectedly
 *   -EPROTONOSUPPORT  on-disk structure of a version this build cannot read
 *   -EUCLEAN       corrupt data (bad checksum, bad MAC on a file header)
 *   -EKEYREJECTED  wrong password or key
 *   -EBADMSG       config authenticated with the right key but its fields
 *                  were changed (tampered)
 */
#ifndef SC_CRYPTO_H
#define SC_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- ciphers ------------------------------------------------------------ */

enum sc_cipher_id {
	SC_CIPHER_NULL		= 0,	/* identity: everything but the cipher */
	SC_CIPHER_AES_XTS	= 1,	/* AES-256-XTS, tweak = unit index (LE) */
	SC_CIPHER_AES_CBC	= 2,	/* AES-256-CBC(-CTS), ESSIV per unit */
	/*
	 * AES-256-GCM units with in-file headers (docs/format.md section 10):
	 * not length-preserving, so not a cipher of struct sc_fkey (its
	 * files are served by the gcm translator through sc_gkey); its
	 * volumes have config format 2 or later.
	 */
	SC_CIPHER_AES_GCM	= 3,
};

#define SC_MASTER_KEY_LEN	32
#define SC_BLOCK_MIN		512
#define SC_BLOCK_MAX		65536
#define SC_BLOCK_DEFAULT	4096

/* "null", "aes-xts", "aes-cbc", "aes-gcm"; NULL for an unknown id. */
const char *sc_cipher_name(enum sc_cipher_id id);
/* 0, or -EINVAL for an unknown name. */
int sc_cipher_parse(const char *name, enum sc_cipher_id *out);
/* 0 if bs is a power of two in [SC_BLOCK_MIN, SC_BLOCK_MAX], else -EINVAL. */
int sc_block_size_check(uint64_t bs);

/* ---- secrets and randomness ---------------------------------------------- */

/* Zeroed memory, mlock()ed where the system allows; NULL on failure. */
void *sc_secure_alloc(size_t len);
/* Wipes (OPENSSL_cleanse) then unlocks and frees; NULL is a no-op. */
void sc_secure_free(void *p, size_t len);
void sc_wipe(void *p, size_t len);
/* 1 if equal, 0 if not; time independent of the contents. */
int sc_memeq_ct(const void *a, const void *b, size_t len);
/* OS CSPRNG.  0 or -EIO. */
int sc_random(void *buf, size_t len);

/*
 * What the library has to tell the user, handed to the program (the
 * library does no I/O).  SC_CRYPTO_NOTICE_MLOCK: key memory could not be
 * locked (err: mlock's errno, ENOMEM or EPERM); the keys still work and are
 * still wiped, but may reach swap.  Told once per process, from whichever
 * thread allocated; fn must not call back into the library.  Set it before
 * the first secret is allocated; NULL (the default) tells nothing.
 */
enum sc_crypto_notice {
	SC_CRYPTO_NOTICE_MLOCK,
};
typedef void (*sc_crypto_notice_fn)(enum sc_crypto_notice what, int err);
void sc_crypto_set_notice(sc_crypto_notice_fn fn);

/* ---- volume master key ----------------------------------------------------- */

/*
 * Holds the master key (copied into locked memory) and the keys derived
 * from it that are volume-wide (header MAC key).  Immutable after creation,
 * safe to share between threads.
 */
struct sc_mkey;
int sc_mkey_new(const uint8_t mk[SC_MASTER_KEY_LEN], enum sc_cipher_id cipher,
		uint32_t block_size, struct sc_mkey **out);
void sc_mkey_free(struct sc_mkey *mk);
enum sc_cipher_id sc_mkey_cipher(const struct sc_mkey *mk);
uint32_t sc_mkey_block_size(const struct sc_mkey *mk);

/* ---- per-file header ------------------------------------------------------ */

/*
 * The value of the header xattr (docs/format.md).  Every build reads both
 * versions; new files get the volume's version (sc_mkey_set_hdr_version).
 * Version 2 is 56 bytes so that, with its xattr name, it fits the free
 * space of a 256-byte ext4 inode (60 bytes of value): a version 1 header
 * costs every small file an extra 4 KiB xattr block, journaled.
 */
#define SC_HDR_XATTR	"user.stackcrypt"
#define SC_HDR_V1_SIZE	72
#define SC_HDR_V2_SIZE	56
#define SC_HDR_MAX	72	/* the largest header of any version: buffer size */

/* The on-disk length of a header version, or 0 for one this build does not know. */
size_t sc_hdr_size(unsigned version);

/*
 * What a header xattr's bytes are before any key is tried (nothing of this
 * is authenticated yet: sc_fkey_new checks the MAC).  The one place that
 * reads the version byte outside crypto/; version (if not NULL) gets it
 * for SC_HDR_SHAPE_OK and SC_HDR_SHAPE_WRONG_SIZE.
 */
enum sc_hdr_shape {
	SC_HDR_SHAPE_OK = 0,		/* a version this build reads, at its size */
	SC_HDR_SHAPE_UNKNOWN_VERSION,	/* a version byte this build does not know */
	SC_HDR_SHAPE_WRONG_SIZE,	/* empty, or a known version at another length */
};
enum sc_hdr_shape sc_hdr_probe(const void *hdr, size_t len, unsigned *version);

/*
 * Names in one line (for fsck's report) what is wrong with the header hdr
 * of len bytes: err is sc_fkey_new's result on it, -ENODATA (the file has
 * no header xattr) or -ERANGE (the header is larger than len, the size
 * tried; hdr may then be NULL).  Returns true when the header itself is at
 * fault (missing, wrong size, unknown version or flags, MAC mismatch,
 * another cipher or block size), false for any other error, which buf
 * names as "cannot derive the file key: ...".
 */
bool sc_hdr_explain(int err, const void *hdr, size_t len, char *buf, size_t buflen);

/* Which header version new files get: 1 or 2 (the default).  Call before
 * the mkey is shared.  0 or -EINVAL. */
int sc_mkey_set_hdr_version(struct sc_mkey *mk, unsigned version);
unsigned sc_mkey_hdr_version(const struct sc_mkey *mk);

/* A fresh header for a new file: version, cipher, block size, random nonce,
 * MAC.  Its length (SC_HDR_V1_SIZE or SC_HDR_V2_SIZE), or -EIO. */
int sc_hdr_new(const struct sc_mkey *mk, uint8_t hdr[SC_HDR_MAX]);

/* ---- per-file key ------------------------------------------------------------ */

/*
 * A file's key material, derived with HKDF from the master key and the
 * header's nonce, and the cipher contexts keyed with it (keyed once; reused
 * by any thread: the object keeps a small pool of keyed contexts, so
 * encrypt/decrypt may run concurrently from many threads).
 *
 * sc_fkey_new verifies the header: -EUCLEAN bad MAC (tampered, or from
 * another volume), -EPROTONOSUPPORT unknown version, -EINVAL wrong size or
 * a cipher/block size that differs from the volume's.
 */
struct sc_fkey;
int sc_fkey_new(const struct sc_mkey *mk, const void *hdr, size_t hdr_len,
		struct sc_fkey **out);
/*
 * Check order: version (1 or 2), the size of that version, then the MAC (so
 * a flipped cipher byte is -EUCLEAN), then cipher and block size; non-zero
 * flags or reserved bytes are -EPROTONOSUPPORT.  An fkey points at its
 * mkey: the mkey must outlive it.
 */
void sc_fkey_free(struct sc_fkey *fk);
uint32_t sc_fkey_block_size(const struct sc_fkey *fk);
/*
 * The 16-byte nonce of the (verified) header the fkey was made from: two
 * files whose headers carry the same nonce have the same keys (fsck looks
 * for them).  Valid as long as the fkey.
 */
#define SC_HDR_NONCE_LEN	16
const uint8_t *sc_fkey_nonce(const struct sc_fkey *fk);

/*
 * Files shorter than 16 bytes are encrypted with a one-block keystream
 * under a random IV kept in the header (docs/format.md, "tiny files").  The
 * IV must change on every write that leaves a file shorter than 16 bytes:
 * the caller (holding the file's write lock) calls this, encrypts the new
 * contents, and stores hdr_out (the updated header, same version and
 * length as the file's) after the data.  That length, or -EIO.
 */
int sc_fkey_tiny_rekey(struct sc_fkey *fk, uint8_t hdr_out[SC_HDR_MAX]);

/*
 * Encrypt or decrypt the plaintext range [off, off + len) of a file whose
 * size is file_size (the size after the write, for encrypt).
 *  - off is a multiple of the block size;
 *  - off + len is a multiple of the block size, or equals file_size;
 *  - if the range ends at file_size and its final unit is 1..15 bytes long
 *    while file_size >= 16, the range must also hold the unit before it
 *    (the cross-unit tail rule: the short unit is encrypted together with
 *    the last 16 stored bytes of the unit before it); such a range may
 *    also not end exactly where that short final unit starts (it would hold
 *    the previous unit without its tail).
 * in and out are equal (in place) or do not overlap.  On decrypt, a unit
 * whose stored bytes are all zero is a hole and yields zeros.
 * Returns 0, or -EINVAL when the range breaks these rules.
 */
int sc_fkey_encrypt(struct sc_fkey *fk, uint64_t off, const void *in, void *out,
		    size_t len, uint64_t file_size);
int sc_fkey_decrypt(struct sc_fkey *fk, uint64_t off, const void *in, void *out,
		    size_t len, uint64_t file_size);

/* ---- the authenticated format (aes-gcm) ------------------------------------ */

/*
 * docs/format.md section 10.  Specified and implemented in crypto/; the
 * mount offers it from issue #17's completion (until then no config names
 * it and sc_cipher_parse does not know "aes-gcm").
 *
 * A backing file is: nothing (0 bytes: an empty file whose header is not
 * written yet), or the SC_GHDR_SIZE-byte header followed by the units.
 * Unit i holds plaintext bytes [i*bs, (i+1)*bs) (bs = the volume's block
 * size, a power of two; the final unit may be shorter, never empty) and is
 * stored at sc_gcm_unit_off(bs, i) as nonce (16, random) || AES-256-GCM
 * ciphertext (as long as the plaintext) || tag (16): bs + 32 bytes for a
 * whole unit.  The associated data binds a unit to its file and position.
 * A whole stored unit of all zero bytes is a hole and reads as zeros.
 */
#define SC_GHDR_SIZE		40	/* the in-file header, at offset 0 */
#define SC_GHDR_AUTH_LEN	24	/* header bytes under its MAC and in every unit's AAD */
#define SC_GHDR_MAGIC		"scgm"
#define SC_GHDR_VERSION		1
#define SC_GCM_FILE_ID_LEN	16
/*
 * Header flags (bytes 6..7, little-endian; docs/format.md 10.2).  TRACKS:
 * the file was made by a build that tracks holes, so a whole stored unit
 * of zeros is a hole only once HOLES is set too (set, under the MAC, before
 * the first change that leaves a hole; cleared only with a new file id at
 * 0 bytes).  A header without TRACKS is from before: zero units are holes.
 * HOLES is left out of the units' associated data, so setting it rewrites
 * the header alone.
 */
#define SC_GHDR_F_TRACKS	0x0001
#define SC_GHDR_F_HOLES		0x0002
#define SC_GCM_NONCE_LEN	16
#define SC_GCM_TAG_LEN		16
#define SC_GCM_OVERHEAD		(SC_GCM_NONCE_LEN + SC_GCM_TAG_LEN)	/* per unit */

/* A new header for a new file (random file id).  0 or -EIO. */
int sc_ghdr_new(const struct sc_mkey *mk, uint8_t hdr[SC_GHDR_SIZE]);
/* A header with the file id given (reverse mode: derived ids).  0 or -EIO. */
int sc_ghdr_make(const struct sc_mkey *mk, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		 uint8_t hdr[SC_GHDR_SIZE]);
/*
 * Verifies a header (the first min(size, SC_GHDR_SIZE) bytes of a backing
 * file of size > 0): -EUCLEAN bad magic, truncated or bad MAC (tampered,
 * or from another volume); -EPROTONOSUPPORT unknown version or flags;
 * -EINVAL a unit size other than the volume's.  file_id may be NULL.
 */
int sc_ghdr_verify(const struct sc_mkey *mk, const void *hdr, size_t len,
		   uint8_t file_id[SC_GCM_FILE_ID_LEN]);

/*
 * Whether the len bytes hdr have a version 1 header's shape (magic,
 * version, length; not verified): in an integrity volume, a file bound to
 * no entry (docs/format.md 11.3), for messages.
 */
bool sc_ghdr_is_v1(const void *hdr, size_t len);

/* The flags of a header (not verified), and whether a build reads them. */
uint16_t sc_ghdr_flags(const void *hdr);
bool sc_ghdr_flags_known(uint16_t flags);
/* Sets SC_GHDR_F_HOLES in a verified header and re-MACs it.  0, -EINVAL (no TRACKS), -EIO. */
int sc_ghdr_mark_holes(const struct sc_mkey *mk, uint8_t hdr[SC_GHDR_SIZE]);

/*
 * A file's key (HKDF of the master key, salt = file id) keyed into a pool
 * of AES-256-GCM contexts: any number of threads may seal and open units
 * of one file at once.  sc_gkey_new verifies the header first (errors as
 * sc_ghdr_verify), then -ENOMEM or -EIO.  The mkey must outlive the gkey.
 */
struct sc_gkey;
int sc_gkey_new(const struct sc_mkey *mk, const void *hdr, size_t len, struct sc_gkey **out);
/*
 * The same for a version 2 header of an integrity volume (format.md 11.3:
 * verified under ik, errors as sc_ihdr_verify, its fields into *h; the key
 * of label integ-file-key; the units' associated data with all flags
 * zeroed).  Holes are allowed when its flags have HOLES.
 */
struct sc_ihdr;
struct sc_ikey;
int sc_gkey_new_v2(const struct sc_ikey *ik, const void *hdr, size_t len, struct sc_ihdr *h,
		   struct sc_gkey **out);
void sc_gkey_free(struct sc_gkey *gk);
uint32_t sc_gkey_block_size(const struct sc_gkey *gk);
const uint8_t *sc_gkey_file_id(const struct sc_gkey *gk);
/*
 * Whether a whole stored unit of zeros opens as a hole under gk: its
 * header lacks TRACKS (an old file) or has HOLES.  sc_gkey_allow_holes
 * makes it so once the header got HOLES (under the file's write lock).
 */
bool sc_gkey_holes_ok(const struct sc_gkey *gk);
void sc_gkey_allow_holes(struct sc_gkey *gk);

/*
 * Seals the plaintext of len bytes (len >= 1) that starts at unit first
 * into ceil(len / bs) consecutive stored units at out (sc_gcm_stored_len(bs,
 * len) bytes), each with a fresh random nonce.  pt and out do not overlap,
 * except for one unit (len <= bs) sealed in place: pt == out + 16.
 * 0, -EINVAL (len 0, or an index past SC_GCM_UNIT_MAX), -ENOMEM, -EIO.
 */
#define SC_GCM_UNIT_MAX		(UINT64_MAX >> 9)	/* unit indices stay below 2^55 */
int sc_gcm_seal(struct sc_gkey *gk, uint64_t first, const void *pt, size_t len, void *out);
/*
 * Opens in_len stored bytes holding consecutive units from unit first (all
 * whole but the last, which is whole or a final unit of 33..bs+31 bytes)
 * into out.  A whole unit of all zero bytes is a hole (zeros, no tag
 * checked) when sc_gkey_holes_ok, else -EUCLEAN (a zeroed unit of a file
 * that never had a hole).  Returns the plaintext length, or -EBADMSG: a
 * tag failed, or in_len ends inside a unit's nonce or tag (1..32 stored
 * bytes); on -EBADMSG or -EUCLEAN bad (if not NULL) gets the unit's index, that unit's bytes of out are zeroed
 * (never the unauthenticated plaintext) and later units are not opened.
 * The units before it were opened and verified.  in and out
 * do not overlap, except for one unit opened in place: out == in + 16.
 * -EINVAL (first past SC_GCM_UNIT_MAX, or in_len over INT32_MAX), -ENOMEM,
 * -EIO as for seal.
 */
int sc_gcm_open(struct sc_gkey *gk, uint64_t first, const void *in, size_t in_len, void *out,
		uint64_t *bad);
/*
 * The MAC of an intent journal record of the gcm layer (docs/format.md
 * 10.10): HMAC-SHA256 of msg under the volume's journal key (HKDF of the
 * master key, label "stackcrypt/v2 journal-mac").  0 or -EIO.
 */
int sc_jrnl_mac(const struct sc_mkey *mk, const void *msg, size_t len, uint8_t mac[32]);
/* The hole rule: true when a stored unit of len bytes is whole (bs + 32) and all zero. */
bool sc_gcm_is_hole(const void *unit, size_t len, uint32_t bs);

/*
 * Offset arithmetic (pure; bs a valid block size).  Valid for plaintext
 * sizes up to sc_gcm_plain_max(bs), whose stored size fits an off_t.
 */
/* Stored offset of unit idx (its nonce): 40 + idx * (bs + 32). */
uint64_t sc_gcm_unit_off(uint32_t bs, uint64_t idx);
/* Stored bytes of len plaintext bytes cut into units from a unit boundary. */
uint64_t sc_gcm_stored_len(uint32_t bs, uint64_t len);
/* Stored size of a file of plain bytes that has its header (plain 0: 40). */
uint64_t sc_gcm_stored_size(uint32_t bs, uint64_t plain);
/*
 * Plaintext size of a backing file of stored bytes: 0 for 0 (header not
 * written yet) and for 40 (header only); -EUCLEAN for 1..39 (a truncated
 * header); -EBADMSG when it ends 1..32 bytes into a unit (a truncated
 * unit: no whole nonce and tag).  0 with *plain set, or that error.
 */
int sc_gcm_plain_size(uint32_t bs, uint64_t stored, uint64_t *plain);
/* The largest plaintext size whose stored size is at most INT64_MAX. */
uint64_t sc_gcm_plain_max(uint32_t bs);
/*
 * The stored bytes [*soff, *soff + *slen) that hold the units covering the
 * plaintext range [off, off + len) of a file of plain bytes (the range is
 * clipped to the file; an empty result has *slen 0), and the first unit's
 * index in *first: what a read must fetch and sc_gcm_open.
 */
void sc_gcm_stored_span(uint32_t bs, uint64_t plain, uint64_t off, uint64_t len,
			uint64_t *first, uint64_t *soff, uint64_t *slen);
/*
 * The same for a header of hlen bytes: SC_GHDR_SIZE (the functions above)
 * or SC_IHDR_SIZE (version 2, format.md 11.3, whose files always hold
 * their header: sc_gcm_plain_size_h gives -EUCLEAN for a 0-byte file).
 */
uint64_t sc_gcm_unit_off_h(uint32_t hlen, uint32_t bs, uint64_t idx);
uint64_t sc_gcm_stored_size_h(uint32_t hlen, uint32_t bs, uint64_t plain);
int sc_gcm_plain_size_h(uint32_t hlen, uint32_t bs, uint64_t stored, uint64_t *plain);
uint64_t sc_gcm_plain_max_h(uint32_t hlen, uint32_t bs);
void sc_gcm_stored_span_h(uint32_t hlen, uint32_t bs, uint64_t plain, uint64_t off,
			  uint64_t len, uint64_t *first, uint64_t *soff, uint64_t *slen);

/* ---- names (filename and symlink target encryption) ------------------------ */

/*
 * Names are encrypted with AES-256-SIV (RFC 5297), deterministically per
 * directory: the associated data is the directory's 16-byte nonce, so one
 * name encrypts to one backing name in its directory and to another in
 * any other.  A plaintext name is padded with NUL bytes to a multiple of
 * SC_NAME_PAD bytes (names hold no NUL), so lengths leak only to that
 * granularity; the stored form is base64url (RFC 4648 section 5, no '='
 * padding) of tag || ciphertext.  An encoded name longer than
 * SC_NAME_SHORT_MAX does not fit a backing directory entry: it is stored
 * under its long form (sc_name_long), a fixed-length name derived from the
 * encoded name with SHA-256, and the encoded name is kept in a side file
 * beside it.  docs/format.md, "Names", specifies all of this byte by byte.
 *
 * Symlink targets are encrypted with AES-256-SIV under their own key, with
 * a fresh random 16-byte nonce as the associated data (a link keeps its
 * target wherever it is renamed or linked to); the stored target is
 * base64url(nonce || tag || ciphertext) of the NUL-padded target.
 * Bound targets (SC_FEAT_LINKS_BOUND) add a place tag after the SIV tag:
 * an HMAC over the nonce, the SIV tag and the link's place (its
 * directory's nonce and its own encoded name), so a target copied onto
 * another link no longer opens there, while the SIV part still tells a
 * target of this volume that is bound elsewhere (a crash inside a rename,
 * or a copy: fsck --repair rebinds it) from a damaged one.  A bound
 * target whose stored form is longer than SC_LINK_ENC_MAX is kept in a
 * side file, and the backing symlink holds its marker (sc_link_mark).
 */
#define SC_NAME_PLAIN_MAX	255	/* NAME_MAX: the longest plaintext name */
#define SC_NAME_PAD		16
#define SC_NAME_SHORT_MAX	255	/* longest encoded name stored as itself */
#define SC_NAME_ENC_MAX		363	/* base64url of 16 + 256 bytes: the longest encoded name */
#define SC_NAME_LONG_LEN	46	/* "sc." + base64url(SHA-256) */
#define SC_NAME_SIDE_SUFFIX	".name"	/* side file of a long name: sc_name_long + this */
#define SC_NAME_TMP_PREFIX	"sc.new."	/* a directory being made: this + 32 hex digits */
#define SC_DIRNONCE_LEN		16
#define SC_DIRNONCE_REC_LEN	17	/* version 1 record: version byte 1, then the nonce */
#define SC_DIRNONCE_REC2_LEN	33	/* version 2: version, nonce, the tag of its place */
#define SC_DIRNONCE_REC_MAX	49	/* version 2 while a rename moves it: two places' tags */
/*
 * Where a directory's nonce record is kept: the xattr SC_DIRNONCE_XATTR on
 * the directory, or, on volumes that keep nothing in xattrs (aes-gcm), the
 * regular file SC_DIRNONCE_FILE in it, stored as file data through the
 * layers below (docs/format.md 9.2).
 */
#define SC_DIRNONCE_XATTR	"user.stackcrypt.names"
#define SC_DIRNONCE_FILE	"sc.nonce"
#define SC_DIRNONCE_TMP		"sc.nonce.new"	/* a new nonce file, renamed over the old one */
#define SC_LINK_PLAIN_MAX	3024	/* longest plaintext symlink target (fits PATH_MAX encoded) */
#define SC_LINK_ENC_MAX		4095	/* longest stored target */
#define SC_LINK_BOUND_PLAIN_MAX	4095	/* PATH_MAX - 1: the longest bound target */
#define SC_LINK_BOUND_ENC_MAX	5526	/* base64url of 48 + 4096 bytes */
#define SC_LINK_MARK_PREFIX	"sc.link."
#define SC_LINK_MARK_LEN	51	/* "sc.link." + base64url(SHA-256) */
/* A long target's side file: the link's long form (of its encoded name) + this. */
#define SC_LINK_SIDE_SUFFIX	".link"
#define SC_LINK_SIDE_NEW	".link.new"	/* a side file being replaced (rename) */

/*
 * The names keys of a volume (names key, symlink key, nonce record tag
 * key), derived from the
 * master key with their own HKDF labels.  Immutable, safe to share between
 * threads.  0, -ENOMEM or -EIO.
 */
struct sc_nkey;
int sc_nkey_new(const struct sc_mkey *mk, struct sc_nkey **out);
void sc_nkey_free(struct sc_nkey *nk);

/* A fresh version 1 record (version byte and random nonce): old volumes, tests. 0 or -EIO. */
int sc_dirnonce_new(uint8_t rec[SC_DIRNONCE_REC_LEN]);
/*
 * The nonce of a stored record of either version, unchecked: 0, -EUCLEAN
 * (wrong length), -EPROTONOSUPPORT (version).
 */
int sc_dirnonce_parse(const void *rec, size_t len, uint8_t nonce[SC_DIRNONCE_LEN]);

/*
 * Where a directory is: its parent's nonce and its own encoded name
 * (sc_name_encrypt's output, before any long form).  The root has none
 * (parent NULL, enc_len 0).  A version 2 record carries a tag over its
 * nonce and its place, so a record copied to another directory, or a
 * directory moved behind the mount, no longer opens (docs/format.md 9.2).
 */
struct sc_dirplace {
	const uint8_t	*parent;	/* SC_DIRNONCE_LEN bytes, or NULL: the root */
	const char	*enc;
	size_t		enc_len;
};

/*
 * A version 2 record of nonce for the place at (and, while a rename moves
 * the directory, also: NULL otherwise) into rec (SC_DIRNONCE_REC2_LEN
 * bytes, SC_DIRNONCE_REC_MAX with also).  Returns its length
 * (SC_DIRNONCE_REC2_LEN, or SC_DIRNONCE_REC_MAX with also), or -EIO.
 */
int sc_dirnonce_seal(const struct sc_nkey *nk, const uint8_t nonce[SC_DIRNONCE_LEN],
		     const struct sc_dirplace *at, const struct sc_dirplace *also, uint8_t *rec);
/*
 * The nonce of a stored record found at the place at, into nonce.
 * Returns 2 (a version 2 record whose tag, or one of whose two tags, is
 * at's), 1 (a version 1 record: it names no place), -EBADMSG (a version 2
 * record of another place: copied or moved), -EUCLEAN (a length neither
 * version has), -EPROTONOSUPPORT (another version), -EIO.
 */
int sc_dirnonce_open(const struct sc_nkey *nk, const void *rec, size_t len,
		     const struct sc_dirplace *at, uint8_t nonce[SC_DIRNONCE_LEN]);

/*
 * Encrypts the plaintext name (len 1..SC_NAME_PLAIN_MAX bytes, no '/' or
 * NUL, not "." or "..") for the directory with nonce into out
 * (SC_NAME_ENC_MAX + 1 bytes, NUL-terminated).  Returns the encoded
 * length, or -EINVAL (not a name), -ENAMETOOLONG, -EIO.
 */
int sc_name_encrypt(const struct sc_nkey *nk, const uint8_t nonce[SC_DIRNONCE_LEN],
		    const char *name, size_t len, char *out);
/*
 * Decrypts an encoded name (any bytes; a backing directory may hold
 * anything) into out (SC_NAME_PLAIN_MAX + 1 bytes, NUL-terminated).
 * Returns the plaintext length, or -EBADMSG when enc is not a name this
 * directory's nonce and key encrypted (bad encoding, bad padding, or the
 * tag does not verify), -EIO.
 */
int sc_name_decrypt(const struct sc_nkey *nk, const uint8_t nonce[SC_DIRNONCE_LEN],
		    const char *enc, size_t len, char *out);
/* The long form of an encoded name into out (SC_NAME_LONG_LEN + 1 bytes). 0 or -EIO. */
int sc_name_long(const char *enc, size_t len, char *out);
/*
 * What a backing name is, by its shape only (nothing is decrypted):
 * SC_NAME_KIND_SHORT a possible encoded name, SC_NAME_KIND_LONG a long
 * form, SC_NAME_KIND_SIDE a long form's side file, SC_NAME_KIND_TMP a
 * directory being made (SC_NAME_TMP_PREFIX and 32 lower-case hex digits),
 * SC_NAME_KIND_NONCE the file form of the directory nonce record
 * (SC_DIRNONCE_FILE, or SC_DIRNONCE_TMP while it is replaced) and the
 * directory's listing record (SC_DIRLIST_FILE), SC_NAME_KIND_OTHER anything else ("." and ".."
 * included).
 */
enum sc_name_kind {
	SC_NAME_KIND_SHORT,
	SC_NAME_KIND_LONG,
	SC_NAME_KIND_SIDE,
	SC_NAME_KIND_LINKSIDE,
	SC_NAME_KIND_TMP,
	SC_NAME_KIND_NONCE,
	SC_NAME_KIND_BIND,	/* integrity volumes: a binding record, long form + SC_BINDREC_SUFFIX */
	SC_NAME_KIND_OTHER,
};
enum sc_name_kind sc_name_kind(const char *backing, size_t len);

/*
 * Encrypts a symlink target (len 1..SC_LINK_PLAIN_MAX bytes, no NUL) into
 * out (SC_LINK_ENC_MAX + 1 bytes, NUL-terminated).  Returns the stored
 * length, or -ENAMETOOLONG, -EINVAL, -EIO.
 */
int sc_link_encrypt(const struct sc_nkey *nk, const char *target, size_t len, char *out);
/*
 * Decrypts a stored target into out (SC_LINK_PLAIN_MAX + 1 bytes,
 * NUL-terminated).  Returns the plaintext length, or -EBADMSG, -EIO.
 */
int sc_link_decrypt(const struct sc_nkey *nk, const char *enc, size_t len, char *out);
/*
 * Bound targets (SC_FEAT_LINKS_BOUND).  Encrypts target (len
 * 1..SC_LINK_BOUND_PLAIN_MAX bytes, no NUL) for the link at the place at
 * (its directory's nonce and its encoded name) into out
 * (SC_LINK_BOUND_ENC_MAX + 1 bytes, NUL-terminated).  Returns the stored
 * length (over SC_LINK_ENC_MAX: it goes to a side file), or
 * -ENAMETOOLONG, -EINVAL, -EIO.
 */
int sc_link_seal(const struct sc_nkey *nk, const char *target, size_t len,
		 const struct sc_dirplace *at, char *out);
/*
 * As sc_link_seal with the nonce given instead of drawn: reverse mode,
 * whose nonce is derived from the link and its target (docs/format.md 12).
 */
int sc_link_seal_nonce(const struct sc_nkey *nk, const char *target, size_t len,
		       const struct sc_dirplace *at, const uint8_t nonce[SC_DIRNONCE_LEN],
		       char *out);
/*
 * Decrypts a bound stored target found at the place at into out
 * (SC_LINK_BOUND_PLAIN_MAX + 1 bytes, NUL-terminated).  Returns the
 * plaintext length, -ESTALE (a target of this volume, bound to another
 * entry: copied, or a crash inside a rename; at NULL skips this check, for
 * fsck --repair only), -EBADMSG (not a target of this volume: damaged),
 * -EIO.
 */
int sc_link_open(const struct sc_nkey *nk, const char *enc, size_t len,
		 const struct sc_dirplace *at, char *out);
/* The marker of the stored target enc into out (SC_LINK_MARK_LEN + 1 bytes).  0 or -EIO. */
int sc_link_mark(const char *enc, size_t len, char *out);
/* Has s[0..len) a marker's shape?  (Stored targets are base64url: no '.'.) */
bool sc_link_is_mark(const char *s, size_t len);

/* ---- reverse mode (docs/format.md section 12) ------------------------------ */

/*
 * The keys of reverse mode, from the master key (HKDF labels
 * "stackcrypt/v5 reverse-id" and "stackcrypt/v5 reverse-nonce"): one
 * derives the identity of every entry of a plaintext tree from its path
 * and what hangs off an identity (directory nonces, file ids, symlink
 * nonces), the other the synthetic nonce of each unit from its file, index
 * and plaintext.  Immutable, shared by threads.  0, -ENOMEM or -EIO.
 */
#define SC_REV_ID_LEN		32
struct sc_rkey;
int sc_rkey_new(const struct sc_mkey *mk, struct sc_rkey **out);
void sc_rkey_free(struct sc_rkey *rk);

/* What is derived from an entry's identity (the second byte of the MAC input). */
enum sc_rev_use {
	SC_REV_DIR_NONCE	= 1,	/* a directory's name nonce */
	SC_REV_FILE_ID		= 2,	/* a regular file's file id */
	SC_REV_NONCE_FILE_ID	= 3,	/* the file id of a directory's SC_DIRNONCE_FILE */
	SC_REV_NAME_SIDE_ID	= 4,	/* the file id of a long name's side file */
	SC_REV_LINK_NONCE	= 5,	/* a symlink's target nonce (extra: the target) */
	SC_REV_LINK_SIDE_ID	= 6,	/* the file id of a long target's side file */
};

/* The identity of the root.  0 or -EIO. */
int sc_rev_root(const struct sc_rkey *rk, uint8_t id[SC_REV_ID_LEN]);
/* The identity of the entry name (len bytes) in the directory of identity parent.  0 or -EIO. */
int sc_rev_child(const struct sc_rkey *rk, const uint8_t parent[SC_REV_ID_LEN],
		 const char *name, size_t len, uint8_t id[SC_REV_ID_LEN]);
/* The identity of the hard-linked file of plaintext inode number ino.  0 or -EIO. */
int sc_rev_inode(const struct sc_rkey *rk, uint64_t ino, uint8_t id[SC_REV_ID_LEN]);
/* 16 bytes for use of the entry id (extra: extra_len bytes after it, or none).  0 or -EIO. */
int sc_rev_derive(const struct sc_rkey *rk, const uint8_t id[SC_REV_ID_LEN], enum sc_rev_use use,
		  const void *extra, size_t extra_len, uint8_t out[16]);
/*
 * sc_gcm_seal with synthetic nonces: each unit's nonce is the first 16
 * bytes of HMAC-SHA256(nonce key, file id || LE64(index) || the unit's
 * plaintext), so the same plaintext gives the same stored bytes and
 * different plaintext a different nonce.  Errors as sc_gcm_seal.
 */
int sc_rev_seal(const struct sc_rkey *rk, struct sc_gkey *gk, uint64_t first, const void *pt,
		size_t len, void *out);

/* ---- integrity volumes (docs/format.md section 11; design) ------------------ */

/*
 * The pure parts of integrity volumes: version 2 file headers (size,
 * version, unit tree root, place tag, MAC), the tags that bind a file to
 * its entry, binding records (hard links, renames in flight), version 3
 * directory records with their listing digest, unit tree nodes, and the
 * MACs of the dirty table and the freshness record.  No layer uses them
 * yet and no config enables them: SC_FEAT_INTEGRITY is not in
 * SC_FEATURES_KNOWN until the mount serves such volumes.
 *
 * A place is struct sc_dirplace: the directory's nonce (parent) and the
 * entry's encoded name; for a file both are set, for a directory record
 * the root's place is (NULL, empty) as in section 9.2.
 */
#define SC_IHDR_SIZE		88	/* the version 2 header, at offset 0 */
#define SC_IHDR_ROOT_OFF	40	/* where its unit tree root is (11.3) */
#define SC_IHDR_VERSION		2
#define SC_IHDR_AUTH_LEN	72	/* bytes under the MAC */
#define SC_IHDR_F_TRACKS	0x0001	/* always set */
#define SC_IHDR_F_HOLES		0x0002	/* may hold holes (files without a tree) */
#define SC_IHDR_F_LINKED	0x0004	/* bound by binding records, one per name */
#define SC_IHDR_F_INTERNAL	0x0008	/* a file of the layers: binds itself */
#define SC_IHDR_F_TREE		0x0010	/* root holds the unit tree's root */
#define SC_INTEG_TAG_LEN	16
#define SC_BINDREC_LEN		41	/* version, file id, gen, tag */
#define SC_BINDREC_ENC_LEN	55	/* its base64url: a backing symlink's target */
#define SC_BINDREC_SUFFIX	".bind"	/* the record's name: the long form of E + this */
#define SC_TREE_FANOUT		64
#define SC_DIRTY_ENTRY_LEN	64
#define SC_STATE_HDR_LEN	64

/* The fields of a version 2 header (sc_ihdr_pack / sc_ihdr_verify). */
struct sc_ihdr {
	uint16_t	flags;		/* SC_IHDR_F_* */
	uint8_t		file_id[SC_GCM_FILE_ID_LEN];
	uint64_t	gen;		/* >= 1 */
	uint64_t	size;		/* plaintext size at the last commit */
	uint8_t		root[SC_INTEG_TAG_LEN];	/* zero unless TREE */
	uint8_t		tag[SC_INTEG_TAG_LEN];	/* zero iff LINKED or INTERNAL */
};

/*
 * The integrity keys of a volume (K_h, K_e, K_r, K_d, K_u, K_j, K_s of
 * format.md 11.2) for a volume whose files have a unit tree or not.
 * Immutable, shared by threads; the mkey must outlive it.  0, -EINVAL (a
 * cipher other than aes-gcm), -ENOMEM, -EIO.
 */
struct sc_ikey;
int sc_ikey_new(const struct sc_mkey *mk, bool tree, struct sc_ikey **out);
void sc_ikey_free(struct sc_ikey *ik);

/*
 * The 88 header bytes of h, MAC computed.  0, -EINVAL (h breaks a field
 * rule of 11.3: TRACKS missing, an unknown flag, LINKED with INTERNAL,
 * HOLES with TREE, TREE not the volume's, gen 0, a tag or root where none
 * belongs or none where one does), -EIO.
 */
int sc_ihdr_pack(const struct sc_ikey *ik, const struct sc_ihdr *h, uint8_t out[SC_IHDR_SIZE]);
/*
 * Verifies len header bytes (format.md 11.3, in its order) into out (may
 * be NULL): -EUCLEAN (not this format, a version 1 header, wrong length,
 * MAC, a field rule), -EPROTONOSUPPORT (another version, unknown flags),
 * -EINVAL (another unit size, or a tree where the volume has none or the
 * reverse), -EIO.
 */
int sc_ihdr_verify(const struct sc_ikey *ik, const void *buf, size_t len, struct sc_ihdr *out);
/* A unit's associated data (32 bytes): header bytes 0..23, flags zeroed, || LE64(idx). */
void sc_ihdr_aad(const uint8_t hdr[SC_IHDR_SIZE], uint64_t idx, uint8_t aad[32]);

/* tag(id, place) of 11.4 into tag.  0, -EINVAL (no place of an entry), -EIO. */
int sc_integ_place_tag(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		       const struct sc_dirplace *at, uint8_t tag[SC_INTEG_TAG_LEN]);
/*
 * The create tag of the entry at (11.8): a create's dirty table entry
 * names its place by it, as no file id exists yet.  0, -EINVAL, -EIO.
 */
int sc_integ_create_tag(const struct sc_ikey *ik, const struct sc_dirplace *at,
			uint8_t tag[SC_INTEG_TAG_LEN]);
/*
 * The rename tag of the file file_id moving to the entry to (11.8): a
 * rename's dirty table entry names the file and where it goes by it.  0,
 * -EINVAL, -EIO.
 */
int sc_integ_rename_tag(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
			const struct sc_dirplace *to, uint8_t tag[SC_INTEG_TAG_LEN]);
/*
 * Whether the verified header h is bound at the entry at by its own tag:
 * 0 yes; -ESTALE bound to another entry; -ENOENT its header binds no
 * place (LINKED or INTERNAL: a binding record must vouch for it); -EINVAL
 * (no place), -EIO.
 */
int sc_ihdr_bound_at(const struct sc_ikey *ik, const struct sc_ihdr *h,
		     const struct sc_dirplace *at);

/*
 * A binding record (11.5) for file_id with gen g (0: a hard link's, for
 * every LINKED header) at the entry at: its stored form into out
 * (SC_BINDREC_ENC_LEN + 1 bytes, NUL-terminated).  0, -EINVAL, -EIO.
 */
int sc_bindrec_seal(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		    uint64_t g, const struct sc_dirplace *at, char *out);
/*
 * Opens a stored record found at the entry at: file_id and *g get what it
 * vouches for.  0, -EBADMSG (another shape, version, or not this place's),
 * -EINVAL, -EIO.
 */
int sc_bindrec_open(const struct sc_ikey *ik, const char *enc, size_t len,
		    const struct sc_dirplace *at, uint8_t file_id[SC_GCM_FILE_ID_LEN],
		    uint64_t *g);
/* Whether an opened record (file_id, g) vouches for the verified header h (11.5). */
bool sc_bindrec_vouches(const struct sc_ihdr *h, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
			uint64_t g);

/* elem(B) of 11.7 for the backing name b of an entry of the directory with nonce. 0 or -EIO. */
int sc_dir_elem(const struct sc_ikey *ik, const uint8_t nonce[SC_DIRNONCE_LEN], const char *b,
		size_t len, uint8_t out[SC_INTEG_TAG_LEN]);

/*
 * A directory's listing record (11.7, SC_FEAT_DIR_LISTS): the contents of
 * its file SC_DIRLIST_FILE, a file of the layers that the data layer
 * encrypts and authenticates.  count and digest (the XOR of sc_dir_elem
 * over its entries) are the listing's after the pending change, if any;
 * count_before and digest_before before it.  A pending change names one
 * backing name, added or removed by the call that wrote the record
 * before making it: whether that name exists tells which of the two
 * states the directory is in after a kill (format.md 11.7).
 */
#define SC_DIRLIST_FILE		"sc.list"
#define SC_DLIST_LEN		336
#define SC_DLIST_NAME_MAX	255
enum { SC_DLIST_NONE, SC_DLIST_ADDED, SC_DLIST_REMOVED };
struct sc_dlist {
	uint8_t		nonce[SC_DIRNONCE_LEN];
	uint64_t	gen;		/* 1 at its first write, + 1 at every write */
	uint64_t	count;
	uint8_t		digest[SC_INTEG_TAG_LEN];
	uint64_t	count_before;
	uint8_t		digest_before[SC_INTEG_TAG_LEN];
	uint8_t		pend;		/* SC_DLIST_NONE, _ADDED, _REMOVED */
	uint8_t		pend_len;
	char		pend_name[SC_DLIST_NAME_MAX + 1];
};
/* r's bytes into out.  0, -EINVAL (a pending kind or name it cannot hold). */
int sc_dlist_pack(const struct sc_dlist *r, uint8_t out[SC_DLIST_LEN]);
/*
 * The record in buf (len bytes) of the directory with nonce into r.  0,
 * -EUCLEAN (not a listing record), -EPROTONOSUPPORT (another version),
 * -EBADMSG (another directory's).
 */
int sc_dlist_parse(const void *buf, size_t len, const uint8_t nonce[SC_DIRNONCE_LEN],
		   struct sc_dlist *r);
/* digest ^= elem: an entry added or removed. */
void sc_dlist_xor(uint8_t digest[SC_INTEG_TAG_LEN], const uint8_t elem[SC_INTEG_TAG_LEN]);

/*
 * Unit tree (11.10): node(level, index) over n children (1..SC_TREE_FANOUT
 * tags or nodes, 16 bytes each), and the root of a file of nunits units
 * from its top node (NULL when nunits is 0).  0, -EINVAL, -EIO.
 */
int sc_tree_node(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		 unsigned level, uint64_t index, const uint8_t *children, size_t n,
		 uint8_t out[SC_INTEG_TAG_LEN]);
int sc_tree_root(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		 uint64_t nunits, const uint8_t *top, uint8_t out[SC_INTEG_TAG_LEN]);
/*
 * The root of a file of n units from all of its leaves (n * 16 bytes; a
 * hole's leaf is 16 zero bytes), every level computed.  0, -ENOMEM, -EIO.
 */
int sc_tree_root_of(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		    const uint8_t *leaves, uint64_t n, uint8_t out[SC_INTEG_TAG_LEN]);
/* 0 when n leaves give the root want, -EBADMSG when not (constant time), -ENOMEM, -EIO. */
int sc_tree_check(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		  const uint8_t *leaves, uint64_t n, const uint8_t want[SC_INTEG_TAG_LEN]);
/* sc_tree_node, or 16 zero bytes (no HMAC) when all n children are zero (11.10). */
int sc_tree_node_z(const struct sc_ikey *ik, const uint8_t file_id[SC_GCM_FILE_ID_LEN],
		   unsigned level, uint64_t index, const uint8_t *children, size_t n,
		   uint8_t out[SC_INTEG_TAG_LEN]);
/*
 * A file's unit tree in memory (crypto/utree.c): its leaves, sparse (a
 * subtree of zero leaves takes no memory and no HMAC), nodes cached and
 * rehashed when dirty.  Not thread-safe (root rehashes in place).  new,
 * set (u < units), resize: 0, -EINVAL, -ENOMEM; root: 0, -EIO.
 */
struct sc_utree;
int sc_utree_new(struct sc_utree **out);
void sc_utree_free(struct sc_utree *t);
uint64_t sc_utree_units(const struct sc_utree *t);
int sc_utree_resize(struct sc_utree *t, uint64_t n);
int sc_utree_set(struct sc_utree *t, uint64_t u, const uint8_t leaf[SC_INTEG_TAG_LEN]);
int sc_utree_root(struct sc_utree *t, const struct sc_ikey *ik,
		  const uint8_t file_id[SC_GCM_FILE_ID_LEN], uint8_t out[SC_INTEG_TAG_LEN]);
/* sc_utree_root compared with want in constant time: 0, -EBADMSG (differs), -EIO. */
int sc_utree_check(struct sc_utree *t, const struct sc_ikey *ik,
		   const uint8_t file_id[SC_GCM_FILE_ID_LEN], const uint8_t want[SC_INTEG_TAG_LEN]);
/* The leaves of units [a, b) zeroed (holes; b <= units).  0, -EINVAL. */
int sc_utree_zero(struct sc_utree *t, uint64_t a, uint64_t b);
/* Whether ik's volume has the unit tree (SC_FEAT_UNIT_TREE): every header TREE. */
bool sc_ikey_tree(const struct sc_ikey *ik);

/*
 * The MAC of a dirty table entry (its first 48 bytes, 11.8), of a
 * freshness record's header (prev NULL: its first 48 bytes) or of one of
 * its segments (prev: the MAC before it; the segment's bytes before its
 * MAC), 11.9.  0, -EIO.
 */
int sc_dirty_mac(const struct sc_ikey *ik, const uint8_t entry[48], uint8_t out[SC_INTEG_TAG_LEN]);
int sc_state_mac(const struct sc_ikey *ik, const uint8_t *prev, const void *bytes, size_t len,
		 uint8_t out[SC_INTEG_TAG_LEN]);

/* ---- volume config --------------------------------------------------------- */

#define SC_CONFIG_NAME		".stackcrypt.conf"	/* in the backing root */
/* Beside it: the empty file a mount locks (one writer per volume, fs/cli/cmd_mount.c). */
#define SC_LOCK_NAME		".stackcrypt.lock"
/*
 * Config formats: 1 (KEK is the wrap key and the HKDF input of key_check),
 * 2 (the KEK is only an HKDF input; wrap key and key_check come from
 * their own labels), 3 (format 2 plus config_mac, an HMAC keyed from the
 * master key over the volume's fields: recovery with the master key
 * alone can check them) and 4 (key slots: up to SC_SLOTS_MAX unlockers,
 * each a password under its own KDF or a key file, each with a label and
 * a creation time; config_mac covers the slot table too).  All four are
 * read and unlocked.  sc_config_init writes SC_CONFIG_FORMAT, the newest
 * format that builds before slots read, for a config of one scrypt or
 * key-file slot; Argon2id, a label of one's own or a second slot need 4
 * (sc_config_upgrade).  sc_config_wrap keeps a config's format unless the
 * caller sets cfg->format before wrapping (passwd raises 1 and 2 to 3).
 */
#define SC_CONFIG_FORMAT	3
#define SC_CONFIG_FORMAT_MAX	4
#define SC_CONFIG_FORMAT_MAC	3	/* the first format with config_mac */
#define SC_CONFIG_FORMAT_SLOTS	4	/* the first format with key slots */
/*
 * Eight slots, as LUKS1: an unlock tries every password slot in turn, each
 * a KDF run of about a second, so a wrong password costs up to eight; and
 * eight slots with the longest labels and parameters keep the config
 * within SC_CONFIG_MAX_TEXT (docs/format.md 6.4), so a build that predates
 * format 4 reads it and says it needs a newer stackcrypt.
 */
#define SC_SLOTS_MAX		8
#define SC_SLOT_LABEL_MAX	32	/* bytes of printable ASCII, not all digits */
#define SC_SCRYPT_N_DEFAULT	(1u << 16)
#define SC_SCRYPT_R_DEFAULT	8
#define SC_SCRYPT_P_DEFAULT	1
/*
 * The most a config may ask of scrypt, checked before scrypt runs (a
 * writer of BACKING must not be able to make an unlock allocate 64 GiB or
 * run for hours): N up to 2^24, and together no more memory (128*r*N bytes)
 * and no more work (N*r*p) than the costliest config init and passwd write,
 * N = 2^24 with r = 8, p = 1: 16 GiB.
 */
#define SC_SCRYPT_N_MAX		(1u << 24)
#define SC_SCRYPT_MEM_MAX	(128ull * SC_SCRYPT_R_DEFAULT * SC_SCRYPT_N_MAX)
#define SC_SCRYPT_WORK_MAX	((uint64_t)SC_SCRYPT_N_MAX * SC_SCRYPT_R_DEFAULT)
/*
 * Argon2id (RFC 9106, libargon2): t passes over m KiB in p lanes.  The
 * bounds are checked when a config is read, before anything is allocated:
 * at most 4 GiB and 16 passes, and no more work (t*m) than 4 passes over
 * 4 GiB, whatever a writer of BACKING puts there; the least memory, 8 MiB,
 * keeps a tampered slot from being made cheap to guess without the
 * password failing (the GCM tag covers the cost, docs/format.md 6.4).
 */
#define SC_ARGON2_M_MIN		(8u * 1024)		/* KiB */
#define SC_ARGON2_M_MAX		(4u * 1024 * 1024)	/* KiB: 4 GiB */
#define SC_ARGON2_T_MAX		16
#define SC_ARGON2_P_MAX		16
#define SC_ARGON2_WORK_MAX	(4ull * SC_ARGON2_M_MAX)	/* t * m, KiB */
#define SC_CONFIG_MAX_TEXT	4096

enum sc_kdf_id {
	SC_KDF_SCRYPT	= 0,	/* KEK = scrypt(password, salt) */
	SC_KDF_KEYFILE	= 1,	/* KEK = HKDF(raw 256-bit key from a key file) */
	SC_KDF_ARGON2ID	= 2,	/* KEK = Argon2id(password, salt); format 4 only */
};

/* "scrypt", "keyfile", "argon2id"; NULL for an unknown id. */
const char *sc_kdf_name(enum sc_kdf_id id);

/* Feature flags (config "features"): bits this build does not know refuse the mount. */
#define SC_FEAT_HDR_V2		(1ull << 0)	/* new files get version 2 headers */
#define SC_FEAT_NAMES		(1ull << 1)	/* names and symlink targets encrypted */
/* Every directory nonce record is bound to its place (version 2): version 1 refused. */
#define SC_FEAT_NAMES_BOUND	(1ull << 2)
/* Symlink targets are bound to their entry and may be PATH_MAX - 1 long (sc_link_seal). */
#define SC_FEAT_LINKS_BOUND	(1ull << 3)
/*
 * Integrity volumes (docs/format.md section 11).  SC_FEAT_INTEGRITY is
 * served in part (11.1: bound files and their sizes) and needs aes-gcm with
 * SC_FEAT_NAMES, SC_FEAT_NAMES_BOUND and SC_FEAT_LINKS_BOUND
 * (sc_config_parse: -EINVAL otherwise).  SC_FEAT_UNIT_TREE (11.10: a root
 * over every file's unit tags in its header) needs SC_FEAT_INTEGRITY
 * (-EINVAL otherwise); builds before it refuse it as unknown.  SC_FEAT_UPGRADING marks a volume that
 * stackcrypt upgrade is converting (11.12): it needs what SC_FEAT_INTEGRITY
 * needs and none of 0x10, 0x20, 0x80 (-EINVAL); every command but upgrade
 * refuses it after the unlock, builds before it as unknown.
 */
#define SC_FEAT_INTEGRITY	(1ull << 4)	/* bound files, sizes, versions, freshness */
#define SC_FEAT_UNIT_TREE	(1ull << 5)	/* a tree over every file's unit tags */
#define SC_FEAT_UPGRADING	(1ull << 6)	/* stackcrypt upgrade is under way: no mount */
/*
 * stackcrypt rekey is under way (docs/format.md 6.5): the rekey state file
 * holds the new master key; every command but rekey refuses the volume.
 * Builds before it refuse it as needing a newer stackcrypt.
 */
#define SC_FEAT_REKEYING	(1ull << 7)
/*
 * Every directory of an integrity volume has a listing record
 * (SC_DIRLIST_FILE, docs/format.md 11.7): entries added or removed behind
 * the mount, and directories put back from older copies, are detected.
 * Needs SC_FEAT_INTEGRITY (-EINVAL).  init --integrity sets both; volumes
 * made with 0x10 alone before it keep working without listings.
 */
#define SC_FEAT_DIR_LISTS	(1ull << 8)
/*
 * stackcrypt upgrade is giving an integrity volume made without
 * SC_FEAT_DIR_LISTS its directories' listing records, in place
 * (docs/format.md 11.12): every command but upgrade refuses the volume.
 * Needs SC_FEAT_INTEGRITY (with or without SC_FEAT_UNIT_TREE) and none of
 * 0x40, 0x80, 0x100 (-EINVAL);
 * builds before it refuse it as needing a newer stackcrypt.
 */
#define SC_FEAT_LISTS_UPGRADING	(1ull << 9)
#define SC_FEATURES_KNOWN	(SC_FEAT_HDR_V2 | SC_FEAT_NAMES | SC_FEAT_NAMES_BOUND | \
				 SC_FEAT_LINKS_BOUND | SC_FEAT_INTEGRITY | SC_FEAT_UNIT_TREE | \
				 SC_FEAT_UPGRADING | SC_FEAT_REKEYING | SC_FEAT_DIR_LISTS | \
				 SC_FEAT_LISTS_UPGRADING)
/* What SC_FEAT_INTEGRITY needs besides cipher aes-gcm (docs/format.md 11.1). */
#define SC_FEATURES_INTEG_NEEDS	(SC_FEAT_NAMES | SC_FEAT_NAMES_BOUND | SC_FEAT_LINKS_BOUND)
#define SC_FEATURES_DEFAULT	SC_FEAT_HDR_V2	/* what init gives a new volume */

/*
 * One unlocker: its KDF and parameters, its salt, the check value that
 * tells a wrong secret, and the master key wrapped under it.  The fields
 * are a macro so that slot 0 is also reachable under the names format 3
 * gave them (cfg->kdf, cfg->salt...): formats 1 to 3 have exactly that
 * one slot, and the code and tests written before slots read it so.
 */
#define SC_SLOT_FIELDS \
	bool			used; \
	char			label[SC_SLOT_LABEL_MAX + 1];	/* NUL-terminated */ \
	int64_t			slot_created;	/* Unix seconds, UTC */ \
	enum sc_kdf_id		kdf; \
	uint64_t		scrypt_n; \
	uint32_t		scrypt_r, scrypt_p; \
	uint32_t		argon2_t, argon2_m, argon2_p;	/* passes, KiB, lanes */ \
	uint8_t			salt[32]; \
	uint8_t			key_check[16];	/* tells a wrong password from tampering */ \
	uint8_t			wrapped[12 + SC_MASTER_KEY_LEN + 16]; /* GCM nonce | ct | tag */

struct sc_slot {
	SC_SLOT_FIELDS
};

/* The parsed config: no secrets in here. */
struct sc_config {
	uint32_t		format;
	enum sc_cipher_id	cipher;
	uint32_t		block_size;
	uint64_t		features;
	uint8_t			uuid[16];
	int64_t			created;	/* Unix seconds, UTC */
	uint8_t			config_mac[32];	/* format >= 3: sc_config_mac_check */
	union {
		struct sc_slot	slots[SC_SLOTS_MAX];	/* format 4; 1-3: slot 0 only */
		struct { SC_SLOT_FIELDS };		/* slot 0 under its format 3 names */
	};
};

/*
 * Defaults, a random salt and uuid, created = now: slot 0 alone, labelled
 * "password" or "keyfile" after its kdf: scrypt with scrypt_n (0 for the
 * default) or a key file in format SC_CONFIG_FORMAT; argon2id in format 4
 * at the least cost sc_argon2_choose gives (the caller sets its own before
 * wrapping).  0 or -EINVAL / -EIO.
 */
int sc_config_init(struct sc_config *cfg, enum sc_cipher_id cipher,
		   uint32_t block_size, enum sc_kdf_id kdf, uint64_t scrypt_n);
/*
 * Wrap mk under a KEK derived from secret (the password, or the key file's
 * 32 raw bytes for SC_KDF_KEYFILE) into slot 0; sc_config_wrap_slot into
 * slot i, which must be in use (sc_config_slot_new).  The GCM associated
 * data covers the slot's other fields (formats 1-3: every other field of
 * the config).  Fresh GCM nonce each call; the salt is the slot's (the
 * caller makes it new when the secret changes).  In format 3 and 4 the
 * config MAC is made anew (format 4: over every slot).  0, -EINVAL,
 * -ENOMEM or -EIO.
 */
int sc_config_wrap(struct sc_config *cfg, const void *secret, size_t secret_len,
		   const uint8_t mk[SC_MASTER_KEY_LEN]);
int sc_config_wrap_slot(struct sc_config *cfg, unsigned slot, const void *secret,
			size_t secret_len, const uint8_t mk[SC_MASTER_KEY_LEN]);
/*
 * Tries every slot: -EKEYREJECTED wrong secret, -EBADMSG fields tampered
 * (the GCM tag, or in format 3 and 4 the config MAC under the unwrapped
 * key), else 0.
 */
int sc_config_unwrap(const struct sc_config *cfg, const void *secret, size_t secret_len,
		     uint8_t mk[SC_MASTER_KEY_LEN]);
/*
 * The unlock of the volume tools: the master key from the first slot of
 * the kind keyfile says (key-file slots, or password slots) that secret
 * opens, its index in *slot.  The config MAC is not checked here
 * (sc_config_mac_check, after).  0; -ENOKEY no slot of that kind;
 * -EKEYREJECTED none opens; -EBADMSG the slot in *slot took the secret
 * (its check value matched) but its GCM tag failed: its fields were
 * changed; -EINVAL, -ENOMEM, -EIO.
 */
int sc_config_open(const struct sc_config *cfg, bool keyfile, const void *secret,
		   size_t secret_len, uint8_t mk[SC_MASTER_KEY_LEN], int *slot);
/*
 * Format 3 and 4: whether config_mac matches the volume's fields (format,
 * cipher, block size, features, uuid, created; in format 4 every slot's
 * fields too) under a key derived from mk.  0, -EBADMSG (no match: fields
 * edited, or mk of another volume), -ENODATA (format 1 or 2: no MAC to
 * check), -ENOMEM or -EIO.
 */
int sc_config_mac_check(const struct sc_config *cfg, const uint8_t mk[SC_MASTER_KEY_LEN]);
/* config_mac made anew under mk (format 3 and 4; nothing for 1 and 2).  0, -ENOMEM, -EIO. */
int sc_config_seal(struct sc_config *cfg, const uint8_t mk[SC_MASTER_KEY_LEN]);

/* Text form (docs/format.md); returns its length or -ENOSPC. */
int sc_config_format(const struct sc_config *cfg, char *buf, size_t size);
/*
 * Parse and check the text form.  -EUCLEAN (checksum mismatch or
 * malformed), -EPROTONOSUPPORT (newer format / unknown feature), -EINVAL
 * (a field out of range).  err gets a one-line human reason.
 */
int sc_config_parse(const char *text, size_t len, struct sc_config *cfg,
		    char *err, size_t errlen);

/* ---- key slots (format 4) ---- */

/* Whether label is one a slot may carry (1..SC_SLOT_LABEL_MAX printable
 * ASCII bytes, no blank at either end, not all digits).  0 or -EINVAL. */
int sc_slot_label_check(const char *label);
/* The number of slots in use. */
unsigned sc_config_slots(const struct sc_config *cfg);
/*
 * The slot named by which: a label, or a slot number in decimal.
 * The index, or -ENOENT.
 */
int sc_config_slot_find(const struct sc_config *cfg, const char *which);
/*
 * A new slot in the first free place: label (checked; -EEXIST when a slot
 * carries it), created now, a random salt, kdf with no cost set (the
 * caller sets it: scrypt_*, argon2_*), nothing wrapped yet.  The index,
 * or -EINVAL, -EEXIST, -ENOSPC (the table is full), -EIO.
 */
int sc_config_slot_new(struct sc_config *cfg, const char *label, enum sc_kdf_id kdf);
/* Frees slot i: -EBUSY if it is the last one, -ENOENT if free.  0 otherwise;
 * the caller seals the config anew (sc_config_seal). */
int sc_config_slot_remove(struct sc_config *cfg, unsigned slot);
/*
 * A config of format 1 to 3 as format 4: its one slot keeps its label
 * ("password" or "keyfile") and gets the volume's creation time; its key
 * must be wrapped anew (the format 4 derivation), with the secret that
 * opened it.  0, or -EINVAL if cfg is format 4 already.
 */
int sc_config_upgrade(struct sc_config *cfg);
/* Range checks of one slot's KDF cost, as a config read applies them.
 * 0 or -EINVAL with a reason in *why. */
int sc_slot_cost_check(const struct sc_slot *s, const char **why);

/*
 * Argon2id (libargon2's reference implementation): t passes, m KiB, p
 * lanes, within the SC_ARGON2_* bounds (else -EINVAL, before anything is
 * allocated).  0, -EINVAL, -ENOMEM or -EIO.
 */
int sc_argon2id(const void *pass, size_t pass_len, const void *salt, size_t salt_len,
		uint32_t t, uint32_t m, uint32_t p, void *out, size_t out_len);
/*
 * Seconds of wall time of one KDF run of slot s's kind and cost on a
 * throwaway password and salt (stackcrypt speed, and init's choice of an
 * Argon2id cost).  0 or -errno.
 */
int sc_kdf_time(const struct sc_slot *s, double *seconds);
/*
 * The Argon2id cost for an unlock of about target seconds on this
 * machine, as cryptsetup benchmark chooses one: p = 1, t = 3 passes (RFC
 * 9106's second recommendation) over as much memory as fits the target,
 * from 64 MiB up to mem_max KiB; the memory at its cap, more passes.  The
 * least is t = 3, m = 64 MiB, however slow the machine.  Into s's argon2
 * fields.  0 or -errno.
 */
int sc_argon2_choose(double target, uint32_t mem_max, struct sc_slot *s);

/* Key file: 64 hex digits (optionally followed by a newline) or 32 raw bytes. */
int sc_keyfile_parse(const void *buf, size_t len, uint8_t key[32]);
/* Master key as 8 groups of 8 hex digits separated by '-', and back (64 hex
 * digits, any case; dashes and blanks between them optional). */
int sc_mkey_to_text(const uint8_t mk[SC_MASTER_KEY_LEN], char *buf, size_t size);
int sc_mkey_from_text(const char *text, uint8_t mk[SC_MASTER_KEY_LEN]);

/* ---- master-key rotation (crypto/rekey.c, docs/format.md 6.5) ---------- */

/* In the backing root beside the config: the state of a rekey under way. */
#define SC_REKEY_STATE_NAME	".stackcrypt.rekey"
/* The directory of its copies: new/ (the tree under the new key), old/. */
#define SC_REKEY_DIR_NAME	".stackcrypt.rekey.d"

enum sc_rekey_phase {
	SC_REKEY_COPY	  = 1,	/* the tree copied under the new key into new/ */
	SC_REKEY_SWAP_OUT = 2,	/* the root's entries moved into old/ */
	SC_REKEY_SWAP_IN  = 3,	/* new/'s entries moved into the root */
	SC_REKEY_CLEANUP  = 4,	/* old/ (the old key's files) deleted */
};

/* The state file's fixed part: header, wrapped key; the final config text follows. */
#define SC_REKEY_HDR_LEN	32
#define SC_REKEY_FIXED_LEN	(SC_REKEY_HDR_LEN + 12 + SC_MASTER_KEY_LEN + 16)
#define SC_REKEY_STATE_MAX	(SC_REKEY_FIXED_LEN + SC_CONFIG_MAX_TEXT)

/*
 * The rekey state file: phase, the new master key new_mk wrapped with
 * AES-256-GCM under a key derived from the old one old_mk, and the text
 * of the config the rekey will end with (len bytes), all under the GCM
 * tag (docs/format.md 6.5), into out (SC_REKEY_STATE_MAX bytes).  A fresh
 * nonce each call.  Returns the length, or -EINVAL, -ENOMEM, -EIO.
 */
int sc_rekey_state_seal(const uint8_t old_mk[SC_MASTER_KEY_LEN], const uint8_t uuid[16],
			enum sc_rekey_phase phase, const uint8_t new_mk[SC_MASTER_KEY_LEN],
			const char *text, size_t len, uint8_t *out);
/*
 * The other way: from the state file buf (len bytes) of the volume uuid,
 * its phase, the new master key (into locked memory of the caller) and
 * where the final config text is in buf.  0; -EUCLEAN not a state file
 * (size, magic), -EPROTONOSUPPORT a newer version or unknown phase,
 * -EBADMSG the tag fails (another key or volume, or edited), -ENOMEM, -EIO.
 */
int sc_rekey_state_open(const uint8_t old_mk[SC_MASTER_KEY_LEN], const uint8_t uuid[16],
			const void *buf, size_t len, enum sc_rekey_phase *phase,
			uint8_t new_mk[SC_MASTER_KEY_LEN], size_t *text_off, size_t *text_len);

/* ---- speed --------------------------------------------------------------- */

/* MB (10^6 bytes) per CPU-second of one thread, for about `seconds` each way. */
int sc_speed_measure(enum sc_cipher_id cipher, uint32_t block_size, double seconds,
		     double *enc_mbps, double *dec_mbps);

#endif /* SC_CRYPTO_H */
