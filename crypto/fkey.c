/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fkey.c - a file's key and the range rules of docs/format.md: which bytes
 * of a file are encrypted as whole units, as a final short unit (>= 16
 * bytes, ciphertext stealing inside the unit), as the cross-unit tail (a
 * final unit of 1..15 bytes re-encrypted together with the 16 bytes
 * before it), or as a tiny file (< 16 bytes, one keystream block under a
 * header IV that changes on every write), and which stored ranges are holes.
 *
 * Thread safety: the data keys are immutable; cipher contexts come from
 * the fkey's pool (one set per concurrent call); the tiny IV and the tiny
 * key (derived on first use: most files never need it, and each HKDF costs
 * about 2.5 us at open) are the only mutable state and have their own lock.
 * The fkey keeps a pointer to its sc_mkey for that: the volume's master
 * key object must outlive the files' keys, as a volume outlives its files.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "crypto_i.h"

struct sc_fkey {
	struct sc_keys		*keys;		/* sc_secure_alloc */
	struct sc_ctxpool	pool;
	uint32_t		bs;
	pthread_mutex_t		tiny_lock;	/* guards hdr.tiny_iv, keys->tiny, tiny_ready */
	bool			tiny_ready;	/* keys->tiny derived */
	const struct sc_mkey	*mk;		/* for the tiny key; NULL if given */
	struct sc_hdr		hdr;
};

static int fkey_make(uint32_t bs, const struct sc_keys *keys, const struct sc_hdr *h,
		     const struct sc_mkey *mk, struct sc_fkey **out)
{
	struct sc_fkey *fk = calloc(1, sizeof(*fk));
	int ret = -ENOMEM;

	if (fk == NULL)
		return -ENOMEM;
	fk->keys = sc_secure_alloc(sizeof(*fk->keys));
	if (fk->keys == NULL)
		goto err_free_fk;
	memcpy(fk->keys, keys, sizeof(*keys));
	fk->bs = bs;
	fk->hdr = *h;
	fk->mk = mk;
	fk->tiny_ready = mk == NULL;	/* given keys include the tiny key */
	if (pthread_mutex_init(&fk->tiny_lock, NULL) != 0)
		goto err_free_keys;
	ret = sc_ctxpool_init(&fk->pool, fk->keys);
	if (ret != 0)
		goto err_destroy_lock;
	*out = fk;
	return 0;

err_destroy_lock:
	pthread_mutex_destroy(&fk->tiny_lock);
err_free_keys:
	sc_secure_free(fk->keys, sizeof(*fk->keys));
err_free_fk:
	free(fk);
	return ret;
}

/*
 * Verifies the header and derives the file's keys.  0, or -EUCLEAN (bad
 * MAC), -EPROTONOSUPPORT (version/flags), -EINVAL (size, cipher or block
 * size not the volume's), -ENOMEM, -EIO.
 */
int sc_fkey_new(const struct sc_mkey *mk, const void *hdr, size_t hdr_len,
		struct sc_fkey **out)
{
	struct sc_keys keys;
	struct sc_hdr h;
	int ret;

	ret = sc_hdr_verify(mk, hdr, hdr_len, &h);
	if (ret != 0)
		return ret;
	ret = sc_hdr_file_keys(mk, &h, &keys);
	if (ret != 0)
		return ret;
	ret = fkey_make(sc_mkey_block_size(mk), &keys, &h, mk, out);
	sc_wipe(&keys, sizeof(keys));
	return ret;
}

/* Test hook (crypto_i.h): an fkey from explicit keys.  0 or -errno. */
int sc_fkey_new_keys(enum sc_cipher_id cipher, uint32_t block_size,
		     const struct sc_keys *keys, const uint8_t tiny_iv[16],
		     struct sc_fkey **out)
{
	struct sc_hdr h;

	if (sc_cipher_name(cipher) == NULL || keys->cipher != cipher ||
	    sc_block_size_check(block_size) != 0)
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	h.version = SC_HDR_VERSION_LATEST;
	h.cipher = (uint8_t)cipher;
	memcpy(h.tiny_iv, tiny_iv, 16);
	return fkey_make(block_size, keys, &h, NULL, out);
}

void sc_fkey_free(struct sc_fkey *fk)
{
	if (fk == NULL)
		return;
	sc_ctxpool_destroy(&fk->pool);
	sc_secure_free(fk->keys, sizeof(*fk->keys));
	pthread_mutex_destroy(&fk->tiny_lock);
	free(fk);
}

/* The file's data-unit size. */
uint32_t sc_fkey_block_size(const struct sc_fkey *fk)
{
	return fk->bs;
}

_Static_assert(sizeof(((struct sc_hdr *)0)->nonce) == SC_HDR_NONCE_LEN, "16-byte nonce");

const uint8_t *sc_fkey_nonce(const struct sc_fkey *fk)
{
	return fk->hdr.nonce;
}

/* New random tiny IV; the updated header (the file's version, its MAC
 * unchanged: the IV is outside it) goes to hdr_out.  Its length or -EIO. */
int sc_fkey_tiny_rekey(struct sc_fkey *fk, uint8_t hdr_out[SC_HDR_MAX])
{
	uint8_t iv[16];
	size_t len;
	int ret = sc_random(iv, sizeof(iv));

	if (ret != 0)
		return ret;
	pthread_mutex_lock(&fk->tiny_lock);
	memcpy(fk->hdr.tiny_iv, iv, sizeof(iv));
	len = sc_hdr_encode(&fk->hdr, hdr_out);
	pthread_mutex_unlock(&fk->tiny_lock);
	return (int)len;
}

/* All zero?  Real ciphertext almost always differs in its first byte, so the
 * common case costs one load; the memcmp of p against p+1 checks the rest
 * with the libc's vector code. */
static bool all_zero(const uint8_t *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

static int do_tiny(struct sc_fkey *fk, struct sc_ctxset *set, const uint8_t *in,
		   uint8_t *out, size_t len)
{
	uint8_t iv[16];
	int ret = 0;

	pthread_mutex_lock(&fk->tiny_lock);
	if (!fk->tiny_ready && fk->keys->cipher != SC_CIPHER_NULL) {
		ret = sc_hdr_tiny_key(fk->mk, &fk->hdr, fk->keys->tiny);
		fk->tiny_ready = ret == 0;
	}
	memcpy(iv, fk->hdr.tiny_iv, sizeof(iv));
	pthread_mutex_unlock(&fk->tiny_lock);
	if (ret != 0)
		return ret;
	return sc_cipher_tiny(&fk->pool, set, iv, in, out, len);
}

/*
 * Decrypt whole/partial units of [0, len) of in (the first unit has index
 * first), treating each all-zero stored unit as a hole.  Runs of data units
 * go to the cipher in one call.
 */
static int decrypt_units(struct sc_fkey *fk, struct sc_ctxset *set, uint64_t first,
			 const uint8_t *in, uint8_t *out, size_t len)
{
	size_t bs = fk->bs, pos = 0;
	int ret = 0;

	while (pos < len && ret == 0) {
		size_t run = pos;

		while (run < len && !all_zero(in + run, len - run < bs ? len - run : bs))
			run += len - run < bs ? len - run : bs;
		if (run > pos) {
			size_t full = (run - pos) / bs, part = (run - pos) % bs;

			ret = sc_cipher_units(&fk->pool, set, first + pos / bs, in + pos,
					      out + pos, bs, full, 0);
			if (ret == 0 && part != 0)
				ret = sc_cipher_units(&fk->pool, set, first + run / bs,
						      in + pos + full * bs, out + pos + full * bs,
						      part, 1, 0);
			pos = run;
		} else {	/* a hole unit */
			size_t n = len - pos < bs ? len - pos : bs;

			memset(out + pos, 0, n);
			pos += n;
		}
	}
	return ret;
}

/*
 * Checks the range rules (sc_crypto.h) and splits the range into: plain
 * units [off, plain_end), and the tail pair [plain_end, file_size) when
 * the final unit is 1..15 bytes in a file of >= 16 bytes.
 */
/*
 * Checks the range rules (sc_crypto.h) for [off, off + len) of a file of
 * fsize bytes and finds how it splits: units up to *plain_end go through
 * as they are, and *tail > 0 when the range ends with the tail pair (the
 * unit before a short final unit of *tail bytes, then that unit).  0 or
 * -EINVAL.
 */
static int range_split(uint64_t bs, uint64_t off, size_t len, uint64_t fsize,
		       uint64_t *plain_end, size_t *tail)
{
	uint64_t end = off + len, last_start;

	if (off % bs != 0 || end < off || end > fsize || (end % bs != 0 && end != fsize))
		return -EINVAL;
	*plain_end = end;
	*tail = 0;
	if (len == 0 || fsize < 16)
		return 0;	/* an empty range is fine anywhere */
	last_start = (fsize - 1) / bs * bs;
	if (fsize - last_start >= 16)
		return 0;
	/* The unit before the short one is only ever processed with it. */
	if (end == last_start || (end == fsize && off + bs > last_start))
		return -EINVAL;
	if (end == fsize) {
		*plain_end = last_start - bs;
		*tail = fsize - last_start;
	}
	return 0;
}

/*
 * The tail pair at byte p of in/out, which starts at file offset
 * plain_end: the previous unit (bs bytes), whose last 16 bytes are
 * encrypted again together with the short unit (tail bytes).
 */
static int crypt_tail_pair(struct sc_fkey *fk, struct sc_ctxset *set, uint64_t plain_end,
			   size_t p, const uint8_t *in, uint8_t *out, size_t tail, int enc)
{
	size_t bs = fk->bs, r = p + bs - 16, rlen = 16 + tail;
	uint64_t idx = (plain_end + bs) / bs;	/* the short unit's index */
	int ret;

	if (enc) {
		ret = sc_cipher_units(&fk->pool, set, plain_end / bs, in + p, out + p, bs, 1, 1);
		if (ret == 0 && in != out)
			memcpy(out + p + bs, in + p + bs, tail);
		if (ret == 0)
			ret = sc_cipher_msg(&fk->pool, set, idx, out + r, out + r, rlen, 1);
		return ret;
	}
	if (all_zero(in + p, bs + tail)) {
		memset(out + p, 0, bs + tail);
		return 0;
	}
	ret = sc_cipher_msg(&fk->pool, set, idx, in + r, out + r, rlen, 0);
	if (ret == 0 && in != out)
		memcpy(out + p, in + p, bs - 16);
	if (ret == 0)
		ret = sc_cipher_units(&fk->pool, set, plain_end / bs, out + p, out + p, bs, 1, 0);
	return ret;
}

static int crypt_range(struct sc_fkey *fk, uint64_t off, const uint8_t *in, uint8_t *out,
		       size_t len, uint64_t fsize, int enc)
{
	uint64_t bs = fk->bs, plain_end;
	struct sc_ctxset *set;
	size_t tail;
	int ret;

	ret = range_split(bs, off, len, fsize, &plain_end, &tail);
	if (ret != 0 || len == 0)
		return ret;
	set = sc_ctxpool_get(&fk->pool);
	if (set == NULL)
		return -ENOMEM;

	if (fsize < 16) {
		/* Tiny file: off == 0 and end == fsize follow from the checks above. */
		ret = do_tiny(fk, set, in, out, len);
		goto out_put_set;
	}
	if (enc) {
		size_t plen = plain_end - off, full = plen / bs, part = plen % bs;

		ret = sc_cipher_units(&fk->pool, set, off / bs, in, out, bs, full, 1);
		if (ret == 0 && part != 0)
			ret = sc_cipher_units(&fk->pool, set, off / bs + full, in + full * bs,
					      out + full * bs, part, 1, 1);
	} else {
		ret = decrypt_units(fk, set, off / bs, in, out, plain_end - off);
	}
	if (ret == 0 && tail != 0)
		ret = crypt_tail_pair(fk, set, plain_end, plain_end - off, in, out, tail, enc);
out_put_set:
	sc_ctxpool_put(&fk->pool, set);
	return ret;
}

/* 0, -EINVAL (range rules), -ENOMEM or -EIO. */
int sc_fkey_encrypt(struct sc_fkey *fk, uint64_t off, const void *in, void *out,
		    size_t len, uint64_t file_size)
{
	return crypt_range(fk, off, in, out, len, file_size, 1);
}

/* 0, -EINVAL (range rules), -ENOMEM or -EIO.  All-zero stored units read as zeros. */
int sc_fkey_decrypt(struct sc_fkey *fk, uint64_t off, const void *in, void *out,
		    size_t len, uint64_t file_size)
{
	return crypt_range(fk, off, in, out, len, file_size, 0);
}
