/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_gcm_xl.c - the gcm translator in process, over the real posix layer
 * and a temporary backing directory, without FUSE (as test_xl.c does for
 * the crypt translator).
 *
 * Random writes, truncates (with and without a file handle), fallocates
 * and reads at offsets clustered around unit boundaries, checked against
 * an in-memory model at several block sizes.  After most operations the
 * file is closed and its inode forgotten, so the next one reloads the
 * header and key from the backing file: what is checked is what is
 * stored.  After every operation the backing size must be the format's
 * stored size of the model size (docs/format.md 10.3: 0 before the first
 * data, 40 for an emptied file, sc_gcm_stored_size otherwise), stat must
 * show the plaintext size, and the stored bytes must be laid out as units
 * that open on their own.  Then the rules one by one: a new file stays
 * empty until data arrives and then carries its header at 0; truncation
 * to 0 keeps the header; holes stay holes; growth past a partial last
 * unit; a tag failure is -EIO (never zeros), and so is a zeroed or
 * appended whole unit of zeros in a file that never had a hole, while real
 * holes and the zero units of files from before hole tracking read as
 * zeros (#28 finding 3); a bad or cut header is -EIO; lseek and no xattr ever; threads
 * rewriting shared units of one file.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sc_crypto.h"
#include "sc_volume.h"
#include "sc_xlator.h"
#include "sc_stack.h"
#include "sc_xl_env.h"
#include "crypto_i.h"	/* sc_mkey_gcm_header_mac: a header from before hole tracking */

#define MAXSZ	(40 * 1024)

static void env_up(struct env *e, uint32_t bs)
{
	env_up_in(e, "/tmp/sc-test-gxl.XXXXXX", SC_CIPHER_AES_GCM, bs);
	cr_assert_str_eq(e->top->ops->name, "gcm", "an aes-gcm key must get the gcm layer");
}

/* Looks the file up again (fresh inode, state reloaded from disk) and opens it: 0 or -errno. */
static int file_open_ret(struct env *e, uint64_t want_size)
{
	struct stat st;
	int fd;

	cr_assert_eq(sc_xl_lookup(e->top, &e->root, "f", &fd, &st), 0);
	cr_assert_eq((uint64_t)st.st_size, want_size, "lookup shows size %lld, want %llu",
		     (long long)st.st_size, (unsigned long long)want_size);
	e->obj.fd = fd;
	e->obj.type = st.st_mode & S_IFMT;
	memset(&e->fh, 0, sizeof(e->fh));
	e->fh.flags = O_RDWR;
	fd = sc_xl_open(e->top, &e->obj, &e->fh);
	e->open = fd == 0;
	return fd;
}

static void file_open(struct env *e, uint64_t want_size)
{
	cr_assert_eq(file_open_ret(e, want_size), 0, "open failed");
}

static char *backing_path(struct env *e)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/f", e->dir);
	return p;
}

static uint64_t backing_size(struct env *e)
{
	struct stat st;

	cr_assert_eq(stat(backing_path(e), &st), 0);
	return (uint64_t)st.st_size;
}

/* The whole backing file, *len bytes (malloc'd). */
static uint8_t *backing_bytes(struct env *e, size_t *len)
{
	size_t n = backing_size(e);
	uint8_t *b = malloc(n + 1);
	int fd = open(backing_path(e), O_RDONLY);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, b, n, 0), (ssize_t)n);
	close(fd);
	*len = n;
	return b;
}

static uint8_t backing_byte(struct env *e, off_t off)
{
	int fd = open(backing_path(e), O_RDONLY);
	uint8_t b = 0;

	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, &b, 1, off), 1);
	close(fd);
	return b;
}

static void backing_pwrite(struct env *e, const void *buf, size_t len, off_t off)
{
	int fd = open(backing_path(e), O_WRONLY);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

static uint64_t min_u(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * The backing file against the model: its size, the header's MAC (the
 * file verifies under the key), and every stored unit opened by itself
 * with the crypto library equals the model's plaintext of that unit.
 */
static void check_stored(struct env *e, const uint8_t *model, uint64_t size, bool hdr, int op)
{
	uint64_t want = size ? sc_gcm_stored_size(e->bs, size) : hdr ? SC_GHDR_SIZE : 0;
	size_t n;
	uint8_t *b = backing_bytes(e, &n);
	static uint8_t pt[65536];
	struct sc_gkey *gk;

	cr_assert_eq(n, want, "op %d: backing size %zu, want %llu (plain %llu)", op, n,
		     (unsigned long long)want, (unsigned long long)size);
	if (n > 0) {
		cr_assert_eq(memcmp(b, SC_GHDR_MAGIC, 4), 0, "op %d: no header at 0", op);
		cr_assert_eq(sc_gkey_new(e->mkey, b, SC_GHDR_SIZE, &gk), 0);
		for (uint64_t u = 0; u * e->bs < size; u++) {
			uint64_t plen = min_u(e->bs, size - u * e->bs);
			uint64_t so = sc_gcm_unit_off(e->bs, u);
			int r = sc_gcm_open(gk, u, b + so, plen + SC_GCM_OVERHEAD, pt, NULL);

			cr_assert_eq(r, (int)plen, "op %d: stored unit %llu does not open (%d)", op,
				     (unsigned long long)u, r);
			cr_assert(memcmp(pt, model + u * e->bs, plen) == 0,
				  "op %d: stored unit %llu differs from the model", op,
				  (unsigned long long)u);
		}
		sc_gkey_free(gk);
	}
	free(b);
}

/* Offsets where the arithmetic happens: unit edges +-40, small ones, anywhere. */
static uint64_t pick(struct env *e, uint64_t limit)
{
	return env_pick(e, limit, MAXSZ, 40);
}

static void run_random(uint32_t bs, unsigned seed, int nops)
{
	static uint8_t model[MAXSZ + 8192], data[MAXSZ], buf[MAXSZ + 8192];
	uint64_t size = 0;
	bool hdr = false;	/* the header is stored: the file has had data */
	struct env e;
	struct stat st;

	env_up(&e, bs);
	e.seed = seed;
	memset(model, 0, sizeof(model));
	file_create(&e);
	for (int op = 0; op < nops; op++) {
		int kind = rand_r(&e.seed) % 10;

		if (kind < 5) {				/* write */
			uint64_t off = pick(&e, MAXSZ - 1);
			uint64_t len = 1 + pick(&e, MAXSZ - off - 1);

			for (uint64_t i = 0; i < len; i++)
				data[i] = (uint8_t)rand_r(&e.seed);
			cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, data, len, (off_t)off),
				     (ssize_t)len, "op %d: write", op);
			memcpy(model + off, data, len);
			if (off + len > size)
				size = off + len;
			hdr = true;
		} else if (kind < 7) {			/* truncate, with or without a handle */
			struct stat attr = { .st_size = (off_t)pick(&e, MAXSZ) };
			bool with_fh = rand_r(&e.seed) & 1;

			cr_assert_eq(sc_xl_setattr(e.top, &e.obj, with_fh ? &e.fh : NULL, &attr,
						   SC_SET_SIZE, &st), 0, "op %d: truncate", op);
			cr_assert_eq(st.st_size, attr.st_size, "op %d: setattr's stat", op);
			if ((uint64_t)attr.st_size < size)
				memset(model + attr.st_size, 0, size - (uint64_t)attr.st_size);
			size = (uint64_t)attr.st_size;
			hdr |= size > 0;
		} else if (kind < 9) {			/* fallocate */
			static const int modes[] = {
				0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				FALLOC_FL_ZERO_RANGE, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
			};
			int mode = modes[rand_r(&e.seed) % 5];
			uint64_t off = pick(&e, MAXSZ - 1);
			uint64_t len = 1 + pick(&e, MAXSZ - off - 1);
			int ret = sc_xl_fallocate(e.top, &e.obj, &e.fh, mode, (off_t)off, (off_t)len);

			cr_assert_eq(ret, 0, "op %d: fallocate mode %#x: %d", op, mode, ret);
			if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
				memset(model + off, 0, off + len < size ? len :
				       (off < size ? size - off : 0));
			if (!(mode & FALLOC_FL_KEEP_SIZE) && off + len > size) {
				size = off + len;
				hdr = true;
			}
		} else {				/* partial read */
			uint64_t off = pick(&e, MAXSZ - 1), len = 1 + pick(&e, MAXSZ - off - 1);
			ssize_t n = sc_xl_read(e.top, &e.obj, &e.fh, buf, len, (off_t)off);
			uint64_t want = off >= size ? 0 : (off + len > size ? size - off : len);

			cr_assert_eq(n, (ssize_t)want, "op %d: read returned %zd", op, n);
			cr_assert(memcmp(buf, model + off, want) == 0, "op %d: read [%llu,+%llu) "
				  "differs (seed %u)", op, (unsigned long long)off,
				  (unsigned long long)len, seed);
		}
		cr_assert_eq(sc_xl_getattr(e.top, &e.obj, &e.fh, &st), 0);
		cr_assert_eq((uint64_t)st.st_size, size, "op %d: stat shows %lld, model %llu", op,
			     (long long)st.st_size, (unsigned long long)size);
		check_stored(&e, model, size, hdr, op);
		/* Mostly reload from disk; sometimes keep the cache to mix both. */
		if (rand_r(&e.seed) % 4 != 0) {
			file_close(&e);
			file_open(&e, size);
		}
	}
	file_close(&e);
	file_open(&e, size);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, buf, sizeof(buf), 0), (ssize_t)size);
	cr_assert(memcmp(buf, model, size) == 0, "final read differs from the model");
	cr_assert_eq(listxattr(backing_path(&e), (char *)buf, sizeof(buf)), 0,
		     "the backing file carries extended attributes");
	env_down(&e);
}

/* At the smallest block size, one between, and the default. */
Test(gcm_xl, random_ops_bs512, .timeout = 240)
{
	run_random(512, 2512, 1500);
}

Test(gcm_xl, random_ops_bs1024, .timeout = 240)
{
	run_random(1024, 3024, 1500);
}

Test(gcm_xl, random_ops_bs4096, .timeout = 240)
{
	run_random(4096, 6096, 1500);
}

/* A file is empty (0 bytes below) until data arrives; then header at 0 and the unit. */
Test(gcm_xl, header_comes_with_the_first_data)
{
	struct stat st;
	struct env e;
	uint8_t out[100];
	size_t n;
	uint8_t *b;

	env_up(&e, 4096);
	file_create(&e);
	cr_assert_eq(sc_xl_getattr(e.top, &e.obj, &e.fh, &st), 0);
	cr_assert_eq(st.st_size, 0);
	cr_assert_eq(backing_size(&e), 0);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, sizeof(out), 0), 0);
	file_close(&e);
	file_open(&e, 0);		/* a 0-byte file opens as an empty one */
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "hello", 5, 0), 5);
	b = backing_bytes(&e, &n);
	cr_assert_eq(n, SC_GHDR_SIZE + 5 + SC_GCM_OVERHEAD);
	cr_assert_eq(memcmp(b, SC_GHDR_MAGIC, 4), 0);
	cr_assert_null(memmem(b, n, "hello", 5), "plaintext in the backing file");
	free(b);
	file_close(&e);
	file_open(&e, 5);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, sizeof(out), 0), 5);
	cr_assert_eq(memcmp(out, "hello", 5), 0);
	env_down(&e);
}

/* Truncation to 0 (setattr and O_TRUNC) keeps the header: same file id, 40 bytes. */
/* The file id of the stored header (docs/format.md 10.2: bytes 8..23). */
static void stored_file_id(struct env *e, uint8_t id[SC_GCM_FILE_ID_LEN])
{
	size_t n;
	uint8_t *b = backing_bytes(e, &n);

	cr_assert_geq(n, SC_GHDR_SIZE);
	memcpy(id, b + 8, SC_GCM_FILE_ID_LEN);
	free(b);
}

/*
 * A cut to 0 bytes leaves the stored header alone (an empty file) until
 * the first data, which brings a new file id: by truncate, by O_TRUNC,
 * and for a file found holding its header alone (#28 finding 5).
 */
Test(gcm_xl, truncate_to_zero_renews_the_file_id)
{
	struct stat attr = { .st_size = 0 }, st;
	uint8_t before[SC_GHDR_SIZE], id0[SC_GCM_FILE_ID_LEN], id1[SC_GCM_FILE_ID_LEN];
	uint8_t id2[SC_GCM_FILE_ID_LEN], *b, out[16];
	struct env e;
	size_t n;

	env_up(&e, 512);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "0123456789", 10, 1000), 10);
	b = backing_bytes(&e, &n);
	memcpy(before, b, sizeof(before));
	free(b);
	stored_file_id(&e, id0);
	cr_assert_eq(sc_xl_setattr(e.top, &e.obj, &e.fh, &attr, SC_SET_SIZE, &st), 0);
	cr_assert_eq(st.st_size, 0);
	b = backing_bytes(&e, &n);
	cr_assert_eq(n, SC_GHDR_SIZE);
	cr_assert_eq(memcmp(b, before, SC_GHDR_SIZE), 0, "the stored header changed before data");
	free(b);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "abc", 3, 0), 3);
	stored_file_id(&e, id1);
	cr_assert_neq(memcmp(id0, id1, sizeof(id0)), 0, "truncate to 0 kept the file id");
	file_close(&e);
	/* O_TRUNC through open */
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, "f", &e.obj.fd, &st), 0);
	cr_assert_eq(st.st_size, 3);
	e.obj.type = S_IFREG;
	e.fh = (struct sc_fh){ .flags = O_RDWR | O_TRUNC };
	cr_assert_eq(sc_xl_open(e.top, &e.obj, &e.fh), 0);
	e.open = true;
	cr_assert_eq(backing_size(&e), SC_GHDR_SIZE);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, sizeof(out), 0), 0);
	file_close(&e);
	/* the header alone, reopened from disk: its first data brings a new id too */
	file_open(&e, 0);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "xyz", 3, 700), 3);
	stored_file_id(&e, id2);
	cr_assert_neq(memcmp(id1, id2, sizeof(id1)), 0, "O_TRUNC kept the file id");
	file_close(&e);
	file_open(&e, 703);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, 3, 700), 3);
	cr_assert_eq(memcmp(out, "xyz", 3), 0);
	env_down(&e);
}

/*
 * #28 finding 5, the attack: a file of two units is kept (its stored unit
 * 1 copied aside), rewritten through O_TRUNC and written again, and the
 * old unit 1 is put back in place of the new one below the mount.  Under
 * the file's old id it would open, and the old contents would read as
 * part of the new file; under a fresh id it fails its tag: EIO.
 */
Test(gcm_xl, old_unit_does_not_splice_into_a_rewritten_file)
{
	const uint32_t bs = 1024;
	static uint8_t v1[2 * 1024], v2[2 * 1024], out[2 * 1024], old1[1024 + 32];
	struct stat st;
	struct env e;
	size_t n;
	uint8_t *b;

	memset(v1, 0x31, sizeof(v1));
	memset(v2, 0x32, sizeof(v2));
	env_up(&e, bs);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, v1, sizeof(v1), 0), (ssize_t)sizeof(v1));
	b = backing_bytes(&e, &n);
	cr_assert_eq(n, sc_gcm_stored_size(bs, sizeof(v1)));
	memcpy(old1, b + sc_gcm_unit_off(bs, 1), sizeof(old1));
	free(b);
	file_close(&e);
	/* rewritten: open with O_TRUNC, the same length written again */
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, "f", &e.obj.fd, &st), 0);
	e.obj.type = S_IFREG;
	e.fh = (struct sc_fh){ .flags = O_RDWR | O_TRUNC };
	cr_assert_eq(sc_xl_open(e.top, &e.obj, &e.fh), 0);
	e.open = true;
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, v2, sizeof(v2), 0), (ssize_t)sizeof(v2));
	file_close(&e);
	/* the old unit 1 spliced in below the mount */
	backing_pwrite(&e, old1, sizeof(old1), (off_t)sc_gcm_unit_off(bs, 1));
	file_open(&e, sizeof(v2));
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, bs, 0), bs, "unit 0 is the new one");
	cr_assert_eq(memcmp(out, v2, bs), 0);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, bs, bs), -EIO,
		     "the old unit 1 opened in the rewritten file");
	env_down(&e);
}

/*
 * A shrink to a size inside the first unit, done by a thread whose
 * buffers are new (so as small as this change asks): the new last unit is
 * built from the old one, whose stored bytes are a whole unit.  Its slot
 * once had room only for the new, shorter unit, and the read overran the
 * heap (ASan: heap-buffer-overflow; glibc: "double free or corruption"
 * when the thread's buffers were freed at its exit).
 */
struct shrink_arg {
	struct env	*e;
	int		ret;
};

static void *shrink_to_511(void *p)
{
	struct shrink_arg *a = p;
	struct stat attr = { .st_size = 511 }, st;

	a->ret = sc_xl_setattr(a->e->top, &a->e->obj, &a->e->fh, &attr, SC_SET_SIZE, &st);
	return NULL;
}

Test(gcm_xl, shrink_builds_the_last_unit_from_a_longer_one)
{
	static uint8_t data[100000], back[100000];
	struct shrink_arg a;
	struct env e;
	pthread_t t;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 5);
	env_up(&e, 65536);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, data, sizeof(data), 0), (ssize_t)sizeof(data));
	a.e = &e;
	cr_assert_eq(pthread_create(&t, NULL, shrink_to_511, &a), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(a.ret, 0);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, back, sizeof(back), 0), 511);
	cr_assert_eq(memcmp(back, data, 511), 0);
	cr_assert_eq(backing_size(&e), sc_gcm_stored_size(65536, 511));
	env_down(&e);
}

/*
 * Holes: a write at unit 3 of an empty file leaves units 0..2 all zero
 * below (unwritten) and reading them gives zeros; growth by truncate to a
 * size inside a unit seals that last unit (it cannot be a hole) and leaves
 * the whole units before it holes; lseek sees the holes.
 */
Test(gcm_xl, holes_and_growth)
{
	const uint32_t bs = 4096, sbs = bs + SC_GCM_OVERHEAD;
	static uint8_t zero[3 * (4096 + 32)], out[6 * 4096];
	struct stat attr = { .st_size = 6 * bs + 7 }, st;
	struct env e;
	uint8_t *b;
	size_t n;

	env_up(&e, bs);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "x", 1, 3 * bs), 1);
	b = backing_bytes(&e, &n);
	cr_assert_eq(n, sc_gcm_stored_size(bs, 3 * bs + 1));
	cr_assert_eq(memcmp(b + SC_GHDR_SIZE, zero, 3 * sbs), 0, "units 0..2 are not holes");
	free(b);
	/*
	 * Backing holes are pages, units are not: a page shared by a hole
	 * unit and a data unit is data, so SEEK_DATA may answer a unit early
	 * (allowed: holes may be reported as data), never late.
	 */
	for (int w = SEEK_DATA; w <= SEEK_HOLE; w++) {
		off_t r = sc_xl_lseek(e.top, &e.obj, &e.fh, 0, w);

		cr_assert(r >= 0 && r <= 3 * bs && r % bs == 0, "lseek %d: %lld", w, (long long)r);
	}
	cr_assert_eq(sc_xl_lseek(e.top, &e.obj, &e.fh, 3 * bs + 1, SEEK_DATA), -ENXIO);
	cr_assert_eq(sc_xl_setattr(e.top, &e.obj, NULL, &attr, SC_SET_SIZE, &st), 0);
	cr_assert_eq(st.st_size, attr.st_size);
	b = backing_bytes(&e, &n);
	cr_assert_eq(n, sc_gcm_stored_size(bs, 6 * bs + 7));
	/* unit 3 re-sealed whole, 4 and 5 holes, 6 sealed (7 bytes of zeros) */
	cr_assert_neq(memcmp(b + sc_gcm_unit_off(bs, 3), zero, sbs), 0);
	cr_assert_eq(memcmp(b + sc_gcm_unit_off(bs, 4), zero, 2 * sbs), 0);
	cr_assert_neq(memcmp(b + sc_gcm_unit_off(bs, 6), zero, 7 + SC_GCM_OVERHEAD), 0,
		      "the new partial last unit was left a (forbidden) hole");
	free(b);
	file_close(&e);
	file_open(&e, 6 * bs + 7);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, sizeof(out), 0), (ssize_t)sizeof(out));
	for (size_t i = 0; i < sizeof(out); i++)
		cr_assert_eq(out[i], i == 3 * bs ? 'x' : 0, "byte %zu", i);
	/* growth past a partial last unit by a write beyond it */
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "y", 1, 9 * bs), 1);
	file_close(&e);
	file_open(&e, 9 * bs + 1);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, 16, 6 * bs), 16);
	for (size_t i = 0; i < 16; i++)
		cr_assert_eq(out[i], 0);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, 16, 9 * bs), 1);
	cr_assert_eq(out[0], 'y');
	env_down(&e);
}

/* A unit that fails its tag is -EIO, never zeros; so is a zeroed whole unit. */
Test(gcm_xl, tag_failure_is_eio)
{
	const uint32_t bs = 1024;
	static uint8_t data[4 * 1024], out[4 * 1024], zero[1024 + 32];
	struct env e;
	uint8_t byte;

	memset(data, 0x5a, sizeof(data));
	env_up(&e, bs);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, data, sizeof(data), 0), (ssize_t)sizeof(data));
	file_close(&e);
	/* one ciphertext byte of unit 1 flipped below */
	byte = backing_byte(&e, (off_t)sc_gcm_unit_off(bs, 1) + 100) ^ 1;
	backing_pwrite(&e, &byte, 1, (off_t)sc_gcm_unit_off(bs, 1) + 100);
	file_open(&e, sizeof(data));
	memset(out, 0x77, sizeof(out));
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, bs, 0), bs, "unit 0 is intact");
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, bs, bs), -EIO);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, sizeof(out), 0), -EIO);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, 10, bs + 500), -EIO);
	/* a write that must read unit 1 (partial) fails too, and changes nothing */
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "z", 1, bs + 1), -EIO);
	/* the whole of unit 1 overwritten: readable again */
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, data, bs, bs), bs);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, sizeof(out), 0), (ssize_t)sizeof(out));
	cr_assert_eq(memcmp(out, data, sizeof(out)), 0);
	file_close(&e);
	/* unit 2 zeroed below, in a file that never had a hole: EIO too (#28 finding 3) */
	cr_assert_neq(backing_byte(&e, (off_t)sc_gcm_unit_off(bs, 2)) |
		      backing_byte(&e, (off_t)sc_gcm_unit_off(bs, 2) + 1), 0);
	backing_pwrite(&e, zero, sizeof(zero), (off_t)sc_gcm_unit_off(bs, 2));
	file_open(&e, sizeof(data));
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, bs, 2 * bs), -EIO);
	file_close(&e);
	/* the last unit zeroed below: not whole, so a tag failure, not zeros */
	backing_pwrite(&e, zero, bs + 32, (off_t)sc_gcm_unit_off(bs, 3));
	cr_assert_eq(truncate(backing_path(&e), (off_t)sc_gcm_unit_off(bs, 3) + 500), 0);
	file_open(&e, 3 * bs + 500 - 32);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, 100, 3 * bs), -EIO);
	env_down(&e);
}

static int logged_errors;

static void count_errors(enum sc_log_level level, const char *fmt, va_list ap)
{
	(void)fmt;
	(void)ap;
	if (level == SC_LOG_ERR)
		__atomic_fetch_add(&logged_errors, 1, __ATOMIC_RELAXED);
}

/*
 * A tag failure is logged once per file, also when the file's state is
 * dropped in between (the kernel forgets inodes under a cache drop: the
 * rel-gcm-tamper test once saw two lines for one file under load).
 */
Test(gcm_xl, failure_logged_once_across_forgets)
{
	const uint32_t bs = 1024;
	static uint8_t data[2 * 1024], out[1024];
	struct env e;
	uint8_t byte;

	memset(data, 0x3c, sizeof(data));
	env_up(&e, bs);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, data, sizeof(data), 0), (ssize_t)sizeof(data));
	file_close(&e);
	byte = backing_byte(&e, (off_t)sc_gcm_unit_off(bs, 1) + 7) ^ 0x80;
	backing_pwrite(&e, &byte, 1, (off_t)sc_gcm_unit_off(bs, 1) + 7);
	sc_log_set_func(count_errors);
	for (int round = 0; round < 3; round++) {
		file_open(&e, sizeof(data));
		cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, bs, bs), -EIO);
		cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, bs, bs), -EIO);
		file_close(&e);		/* the state goes with the forget */
	}
	sc_log_set_func(NULL);
	cr_assert_eq(logged_errors, 1, "%d error lines for one damaged file", logged_errors);
	env_down(&e);
}

/* A bad, foreign or cut header is -EIO at open; a file cut inside a tag shows whole units. */
Test(gcm_xl, bad_headers_and_cut_files)
{
	const uint32_t bs = 512;
	static uint8_t data[3 * 512], buf[3 * 512];
	struct stat st, attr = { 0 };
	struct env e;
	uint8_t byte;
	int fd;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(7 * i + 1);
	env_up(&e, bs);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, data, sizeof(data), 0), (ssize_t)sizeof(data));
	file_close(&e);
	/*
	 * Cut 10 bytes into unit 2's nonce: stat shows the 2 whole units and
	 * one byte of unit 2, which reads as EIO (a cut is never a silent
	 * truncation) until a write stores it whole again; a truncation to
	 * the whole units drops it.
	 */
	cr_assert_eq(truncate(backing_path(&e), (off_t)sc_gcm_unit_off(bs, 2) + 10), 0);
	file_open(&e, 2 * bs + 1);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, buf, 2 * bs, 0), 2 * bs);
	cr_assert_eq(memcmp(buf, data, 2 * bs), 0);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, buf, 1, 2 * bs), -EIO);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, buf, 3 * bs, 0), -EIO);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, buf, 1, 2 * bs + 1), -EIO,
		     "a partial write needs the cut unit's old bytes");
	memset(buf, 7, bs);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, buf, bs, 2 * bs), bs);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, buf, bs, 2 * bs), bs);
	cr_assert_eq(buf[0], 7);
	cr_assert_eq(buf[bs - 1], 7);
	file_close(&e);
	cr_assert_eq(truncate(backing_path(&e), (off_t)sc_gcm_unit_off(bs, 2) + 32), 0);
	file_open(&e, 2 * bs + 1);
	attr.st_size = 2 * bs;
	cr_assert_eq(sc_xl_setattr(e.top, &e.obj, &e.fh, &attr, SC_SET_SIZE, &st), 0);
	cr_assert_eq(st.st_size, 2 * bs);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, buf, 3 * bs, 0), 2 * bs);
	cr_assert_eq(memcmp(buf, data, 2 * bs), 0);
	file_close(&e);
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, "f", &fd, &st), 0);
	cr_assert_eq(st.st_size, 2 * bs);
	close(fd);
	/* a flipped MAC byte */
	byte = backing_byte(&e, 30) ^ 0x80;
	backing_pwrite(&e, &byte, 1, 30);
	cr_assert_eq(file_open_ret(&e, 2 * bs), -EIO);
	file_close(&e);
	/* the header cut to 20 bytes */
	cr_assert_eq(truncate(backing_path(&e), 20), 0);
	cr_assert_eq(file_open_ret(&e, 0), -EIO);
	file_close(&e);
	/* a header alone (40 bytes of a real one) is an empty file */
	cr_assert_eq(unlink(backing_path(&e)), 0);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "q", 1, 0), 1);
	file_close(&e);
	cr_assert_eq(truncate(backing_path(&e), SC_GHDR_SIZE), 0);
	file_open(&e, 0);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, data, 10, 0), 0);
	env_down(&e);
}

/* The hidden config: not listed, not opened, not made. */
Test(gcm_xl, config_is_hidden)
{
	struct sc_fh cfh = { .flags = O_RDWR | O_CREAT | O_EXCL };
	struct env e;
	struct stat st;
	int fd;

	env_up(&e, 4096);
	fd = open(e.dir, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(close(openat(fd, SC_CONFIG_NAME, O_CREAT | O_WRONLY, 0600)), 0);
	close(fd);
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, SC_CONFIG_NAME, &fd, &st), -ENOENT);
	cr_assert_eq(sc_xl_create(e.top, &e.root, SC_CONFIG_NAME, 0600, &cfh, &fd, &st), -EPERM);
	env_down(&e);
}

/*
 * Threads sharing one file through the layer, no kernel in between: each
 * thread owns the stripes k with k % NTHR == its id (stripes of 333 bytes
 * at bs 512, so every unit is shared by two or three owners and every
 * write is a read-modify-write of units others rewrite too), writes them
 * through its own handle and re-reads windows, checking its own bytes.
 * The file ends inside a unit, so the writes near its end move no size but
 * rewrite the partial last unit.  Two RMWs of one unit interleaving lose
 * bytes (or, here, fail a tag); at the end the file must equal the model.
 */
#define NTHR	4
#define STRIPE	333
#define FSIZE	(64 * STRIPE + 100)

struct shared {
	struct env	*e;
	uint8_t		model[FSIZE];
};

struct worker {
	struct shared	*sh;
	unsigned	id, seed;
	pthread_t	thr;
	char		err[200];
};

static void *stripe_worker(void *arg)
{
	struct worker *w = arg;
	struct env *e = w->sh->e;
	struct sc_fh fh = { .flags = O_RDWR };
	uint8_t data[STRIPE], buf[3 * STRIPE];

	if (sc_xl_open(e->top, &e->obj, &fh) < 0) {
		snprintf(w->err, sizeof(w->err), "thread %u: open", w->id);
		return NULL;
	}
	for (int it = 0; it < 1500 && !w->err[0]; it++) {
		uint64_t k = (uint64_t)(rand_r(&w->seed) % (FSIZE / STRIPE)) / NTHR * NTHR + w->id;
		uint64_t off = k * STRIPE, len = min_u(STRIPE, FSIZE - min_u(off, FSIZE));
		ssize_t n;

		if (len == 0)
			continue;
		for (uint64_t i = 0; i < len; i++)
			data[i] = (uint8_t)rand_r(&w->seed);
		n = sc_xl_write(e->top, &e->obj, &fh, data, len, (off_t)off);
		if (n != (ssize_t)len) {
			snprintf(w->err, sizeof(w->err), "thread %u: write at %llu: %zd", w->id,
				 (unsigned long long)off, n);
			break;
		}
		memcpy(w->sh->model + off, data, len);
		n = sc_xl_read(e->top, &e->obj, &fh, buf, len, (off_t)off);
		if (n != (ssize_t)len || memcmp(buf, data, len) != 0)
			snprintf(w->err, sizeof(w->err), "thread %u: read back at %llu: %zd%s",
				 w->id, (unsigned long long)off, n, n == (ssize_t)len ? ", differs" : "");
	}
	sc_xl_release(e->top, &e->obj, &fh);
	return NULL;
}

Test(gcm_xl, threads_share_a_file)
{
	static struct shared sh;
	struct worker w[NTHR];
	static uint8_t out[FSIZE];
	struct env e;

	env_up(&e, 512);
	file_create(&e);
	sh.e = &e;
	for (size_t i = 0; i < FSIZE; i++)
		sh.model[i] = (uint8_t)(i * 7 + 1);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, sh.model, FSIZE, 0), FSIZE);
	for (unsigned t = 0; t < NTHR; t++) {
		w[t] = (struct worker){ .sh = &sh, .id = t, .seed = 77 + t };
		cr_assert_eq(pthread_create(&w[t].thr, NULL, stripe_worker, &w[t]), 0);
	}
	for (unsigned t = 0; t < NTHR; t++) {
		pthread_join(w[t].thr, NULL);
		cr_assert_eq(w[t].err[0], 0, "%s", w[t].err);
	}
	file_close(&e);
	file_open(&e, FSIZE);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, sizeof(out), 0), FSIZE);
	cr_assert(memcmp(out, sh.model, FSIZE) == 0, "the file differs from the model");
	env_down(&e);
}

/* ---- zero units and holes (#28 finding 3) ----------------------------------- */

/* The header flags of the backing file. */
static uint16_t backing_flags(struct env *e)
{
	return (uint16_t)(backing_byte(e, 6) | backing_byte(e, 7) << 8);
}

/* Stored unit u of the backing file overwritten with zeros; it held other bytes. */
static void zero_stored_unit(struct env *e, uint64_t u)
{
	static uint8_t zero[65536 + SC_GCM_OVERHEAD];
	size_t n;
	uint8_t *b = backing_bytes(e, &n);
	uint64_t so = sc_gcm_unit_off(e->bs, u), sbs = e->bs + SC_GCM_OVERHEAD;

	cr_assert_geq(n, so + sbs, "unit %llu is not whole", (unsigned long long)u);
	cr_assert_not(sc_gcm_is_hole(b + so, sbs, e->bs), "unit %llu is zeros already",
		      (unsigned long long)u);
	free(b);
	backing_pwrite(e, zero, sbs, (off_t)so);
}

/* A file of size bytes: a script line, then a pattern. */
static void fill_script(uint8_t *buf, size_t size)
{
	static const char line[] = "#!/bin/sh\necho installed\n";

	for (size_t i = 0; i < size; i++)
		buf[i] = (uint8_t)('a' + i % 23);
	memcpy(buf, line, sizeof(line) - 1);
}

/* e up at bs with "f" holding data (size bytes) written in one go: no hole, unmarked. */
static void written_file(struct env *e, uint32_t bs, uint8_t *data, size_t size)
{
	fill_script(data, size);
	env_up(e, bs);
	file_create(e);
	cr_assert_eq(sc_xl_write(e->top, &e->obj, &e->fh, data, size, 0), (ssize_t)size);
	file_close(e);
	cr_assert_eq(backing_flags(e), SC_GHDR_F_TRACKS, "a written file has no hole");
}

/* Zeroing unit 0 of a script that never had a hole: EIO, one log line, other units read. */
Test(gcm_zeros, zeroed_first_unit_of_a_script_is_eio)
{
	const uint32_t bs = 4096;
	static uint8_t data[3 * 4096 + 100], out[sizeof(data)];
	struct env e;

	written_file(&e, bs, data, sizeof(data));
	zero_stored_unit(&e, 0);
	logged_errors = 0;
	sc_log_set_func(count_errors);
	file_open(&e, sizeof(data));
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, 64, 0), -EIO);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, sizeof(out), 0), -EIO);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, bs, bs), bs, "unit 1 is intact");
	cr_assert_eq(memcmp(out, data + bs, bs), 0);
	/* a write that must read unit 0 (partial) fails and changes nothing */
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "#", 1, 5), -EIO);
	sc_log_set_func(NULL);
	cr_assert_eq(logged_errors, 1, "%d error lines", logged_errors);
	env_down(&e);
}

/* A whole unit of zeros appended below (the stored size grown by one unit): EIO. */
Test(gcm_zeros, appended_zero_unit_is_eio)
{
	const uint32_t bs = 1024;
	static uint8_t data[2 * 1024], out[3 * 1024], zero[1024 + SC_GCM_OVERHEAD];
	struct env e;

	written_file(&e, bs, data, sizeof(data));
	cr_assert_eq(backing_size(&e), sc_gcm_stored_size(bs, 2 * bs));
	backing_pwrite(&e, zero, sizeof(zero), (off_t)sc_gcm_stored_size(bs, 2 * bs));
	file_open(&e, 3 * bs);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, bs, 2 * bs), -EIO);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, sizeof(out), 0), -EIO);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, 2 * bs, 0), 2 * bs);
	cr_assert_eq(memcmp(out, data, 2 * bs), 0);
	env_down(&e);
}

/* Reads [off, off + len) after a reload and expects zeros. */
static void expect_zeros(struct env *e, uint64_t size, uint64_t off, size_t len)
{
	static uint8_t out[8 * 4096];

	file_close(e);
	file_open(e, size);
	cr_assert_eq(sc_xl_read(e->top, &e->obj, &e->fh, out, len, (off_t)off), (ssize_t)len);
	for (size_t i = 0; i < len; i++)
		cr_assert_eq(out[i], 0, "byte %llu", (unsigned long long)(off + i));
}

/*
 * Every way the layer makes a hole marks the header first, and the hole
 * reads as zeros: a write past the end, a growing truncate, a growing
 * fallocate, PUNCH_HOLE, ZERO_RANGE.  A growth that leaves no whole unit
 * unwritten marks nothing; a cut to 0 bytes clears the mark.
 */
Test(gcm_zeros, real_holes_read_as_zeros)
{
	const uint32_t bs = 4096;
	static uint8_t data[4 * 4096];
	struct stat st, attr;
	struct env e;

	fill_script(data, sizeof(data));
	env_up(&e, bs);
	/* a write past the end of a new file */
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "x", 1, 3 * bs), 1);
	cr_assert_eq(backing_flags(&e), SC_GHDR_F_TRACKS | SC_GHDR_F_HOLES);
	expect_zeros(&e, 3 * bs + 1, 0, 3 * bs);
	/* a cut to 0 bytes: a new file id without the mark */
	attr = (struct stat){ .st_size = 0 };
	cr_assert_eq(sc_xl_setattr(e.top, &e.obj, &e.fh, &attr, SC_SET_SIZE, &st), 0);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, data, bs + 10, 0), bs + 10);
	cr_assert_eq(backing_flags(&e), SC_GHDR_F_TRACKS, "the mark survived a cut to 0");
	/* growth into the next unit only: no whole unit left unwritten, no mark */
	attr.st_size = 2 * bs - 5;
	cr_assert_eq(sc_xl_setattr(e.top, &e.obj, &e.fh, &attr, SC_SET_SIZE, &st), 0);
	cr_assert_eq(backing_flags(&e), SC_GHDR_F_TRACKS);
	/* a growing truncate past whole units */
	attr.st_size = 5 * bs;
	cr_assert_eq(sc_xl_setattr(e.top, &e.obj, &e.fh, &attr, SC_SET_SIZE, &st), 0);
	cr_assert_eq(backing_flags(&e), SC_GHDR_F_TRACKS | SC_GHDR_F_HOLES);
	expect_zeros(&e, 5 * bs, bs + 10, 4 * bs - 10);
	file_close(&e);
	env_down(&e);

	/* PUNCH_HOLE and ZERO_RANGE of whole units inside a written file */
	for (int m = 0; m < 2; m++) {
		int mode = (m ? FALLOC_FL_ZERO_RANGE : FALLOC_FL_PUNCH_HOLE) | FALLOC_FL_KEEP_SIZE;

		env_up(&e, bs);
		file_create(&e);
		cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, data, sizeof(data), 0),
			     (ssize_t)sizeof(data));
		cr_assert_eq(backing_flags(&e), SC_GHDR_F_TRACKS);
		cr_assert_eq(sc_xl_fallocate(e.top, &e.obj, &e.fh, mode, bs, 2 * bs), 0);
		cr_assert_eq(backing_flags(&e), SC_GHDR_F_TRACKS | SC_GHDR_F_HOLES, "mode %d", mode);
		expect_zeros(&e, sizeof(data), bs, 2 * bs);
		env_down(&e);
	}
	/* a growing fallocate past whole units */
	env_up(&e, bs);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, data, 100, 0), 100);
	cr_assert_eq(sc_xl_fallocate(e.top, &e.obj, &e.fh, 0, 0, 4 * bs), 0);
	cr_assert_eq(backing_flags(&e), SC_GHDR_F_TRACKS | SC_GHDR_F_HOLES);
	expect_zeros(&e, 4 * bs, 100, 4 * bs - 100);
	env_down(&e);
}

/*
 * A file from before hole tracking (header flags 0, made here as such a
 * build made it) keeps its rule: a zeroed unit reads as zeros, and the
 * layer's writes leave its header alone.
 */
Test(gcm_zeros, old_file_reads_zeros_as_a_hole)
{
	const uint32_t bs = 1024;
	static uint8_t data[3 * 1024], out[3 * 1024], file[SC_GHDR_SIZE + 3 * (1024 + 32)];
	uint8_t hdr[SC_GHDR_SIZE], mac[32];
	struct sc_gkey *gk;
	struct env e;
	size_t n;
	uint8_t *b;
	int fd;

	fill_script(data, sizeof(data));
	env_up(&e, bs);
	cr_assert_eq(sc_ghdr_new(e.mkey, hdr), 0);
	hdr[6] = 0;
	cr_assert_eq(sc_mkey_gcm_header_mac(e.mkey, hdr, SC_GHDR_AUTH_LEN, mac), 0);
	memcpy(hdr + SC_GHDR_AUTH_LEN, mac, 16);
	cr_assert_eq(sc_gkey_new(e.mkey, hdr, sizeof(hdr), &gk), 0);
	cr_assert(sc_gkey_holes_ok(gk));
	memcpy(file, hdr, sizeof(hdr));
	cr_assert_eq(sc_gcm_seal(gk, 0, data, sizeof(data), file + SC_GHDR_SIZE), 0);
	sc_gkey_free(gk);
	fd = open(backing_path(&e), O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, file, sizeof(file)), (ssize_t)sizeof(file));
	close(fd);
	file_open(&e, sizeof(data));
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, sizeof(out), 0), (ssize_t)sizeof(out));
	cr_assert_eq(memcmp(out, data, sizeof(out)), 0);
	file_close(&e);
	zero_stored_unit(&e, 1);
	file_open(&e, sizeof(data));
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, out, sizeof(out), 0), (ssize_t)sizeof(out));
	cr_assert_eq(memcmp(out, data, bs), 0);
	for (uint32_t i = 0; i < bs; i++)
		cr_assert_eq(out[bs + i], 0);
	/* writes, a hole past the end among them: the header stays as it was */
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "y", 1, 6 * bs), 1);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "z", 1, 10), 1);
	file_close(&e);
	b = backing_bytes(&e, &n);
	cr_assert_eq(memcmp(b, hdr, sizeof(hdr)), 0, "the old header was rewritten");
	free(b);
	expect_zeros(&e, 6 * bs + 1, 3 * bs, 3 * bs);
	env_down(&e);
}
