/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_xl.c - the crypt translator in process, over the real posix layer
 * and a temporary backing directory, without FUSE.
 *
 * Random writes, truncates (with and without a file handle) and fallocates
 * at offsets clustered around unit boundaries and the 16-byte tail rule,
 * checked against an in-memory model.  After almost every operation the
 * file is closed and its inode forgotten, so the next operation reloads
 * the header and key from disk: what is checked is what is stored, not a
 * cache.  The backing size must equal the model size after every
 * operation.  Runs for every cipher at block sizes 512 and 4096.
 * Also: threads sharing one file, hidden header and config, and that the
 * per-thread plaintext buffers are wiped before free (via --wrap=free).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sc_crypto.h"
#include "sc_volume.h"
#include "sc_xlator.h"
#include "sc_stack.h"
#include "sc_xl_env.h"

#define MAXSZ	(40 * 1024)

static void env_up(struct env *e, enum sc_cipher_id cipher, uint32_t bs)
{
	env_up_in(e, "/tmp/sc-test-xl.XXXXXX", cipher, bs);
}

/* Looks the file up again (fresh inode, state reloaded from disk) and opens it. */
static void file_open(struct env *e)
{
	struct stat st;
	int fd;

	cr_assert_eq(sc_xl_lookup(e->top, &e->root, "f", &fd, &st), 0);
	e->obj.fd = fd;
	e->obj.type = st.st_mode & S_IFMT;
	memset(&e->fh, 0, sizeof(e->fh));
	e->fh.flags = O_RDWR;
	cr_assert_eq(sc_xl_open(e->top, &e->obj, &e->fh), 0, "open failed");
	e->open = true;
}

static uint64_t backing_size(struct env *e)
{
	struct stat st;

	cr_assert_eq(fstat(e->fh.fd, &st), 0);
	return (uint64_t)st.st_size;
}

static uint64_t min_end(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Offsets where the arithmetic happens: unit edges +-17, small ones, anywhere. */
static uint64_t pick(struct env *e, uint64_t limit)
{
	return env_pick(e, limit, MAXSZ, 17);
}

static void check_all(struct env *e, const uint8_t *model, uint64_t size, int op)
{
	static uint8_t buf[MAXSZ + 8192];
	ssize_t n;

	cr_assert_eq(backing_size(e), size, "op %d: backing size %llu, model %llu", op,
		     (unsigned long long)backing_size(e), (unsigned long long)size);
	n = sc_xl_read(e->top, &e->obj, &e->fh, buf, sizeof(buf), 0);
	cr_assert_eq(n, (ssize_t)size, "op %d: read %zd of %llu", op, n, (unsigned long long)size);
	for (uint64_t i = 0; i < size; i++)
		if (buf[i] != model[i])
			cr_assert_fail("op %d (seed %u): byte %llu is %02x, model %02x", op, e->seed,
				       (unsigned long long)i, buf[i], model[i]);
}

static void run_random(enum sc_cipher_id cipher, uint32_t bs, unsigned seed, int nops)
{
	static uint8_t model[MAXSZ + 8192], data[MAXSZ];
	uint64_t size = 0;
	struct env e;
	struct stat st;

	env_up(&e, cipher, bs);
	e.seed = seed;
	memset(model, 0, sizeof(model));
	file_create(&e);
	for (int op = 0; op < nops; op++) {
		int kind = rand_r(&e.seed) % 10;

		if (kind < 5) {				/* write */
			uint64_t off = pick(&e, MAXSZ - 1);
			uint64_t len = 1 + pick(&e, MAXSZ - off - 1);

			for (uint64_t i = 0; i < len; i++)
				data[i] = (uint8_t)rand_r(&e.seed) | 1;
			cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, data, len, (off_t)off),
				     (ssize_t)len, "op %d: write", op);
			memcpy(model + off, data, len);
			if (off + len > size)
				size = off + len;
		} else if (kind < 7) {			/* truncate, with or without a handle */
			struct stat attr = { .st_size = (off_t)pick(&e, MAXSZ) };
			bool with_fh = rand_r(&e.seed) & 1;

			cr_assert_eq(sc_xl_setattr(e.top, &e.obj, with_fh ? &e.fh : NULL, &attr,
						   SC_SET_SIZE, &st), 0, "op %d: truncate", op);
			if ((uint64_t)attr.st_size < size)
				memset(model + attr.st_size, 0, size - (uint64_t)attr.st_size);
			size = (uint64_t)attr.st_size;
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
			if (!(mode & FALLOC_FL_KEEP_SIZE) && off + len > size)
				size = off + len;
		} else {				/* partial read */
			static uint8_t buf[MAXSZ];
			uint64_t off = pick(&e, MAXSZ - 1), len = 1 + pick(&e, MAXSZ - off - 1);
			ssize_t n = sc_xl_read(e.top, &e.obj, &e.fh, buf, len, (off_t)off);
			uint64_t want = off >= size ? 0 : (off + len > size ? size - off : len);

			cr_assert_eq(n, (ssize_t)want, "op %d: read returned %zd", op, n);
			cr_assert(memcmp(buf, model + off, want) == 0, "op %d: read [%llu,+%llu) "
				  "differs (seed %u)", op, (unsigned long long)off,
				  (unsigned long long)len, seed);
		}
		cr_assert_eq(backing_size(&e), size, "op %d: backing size %llu, model %llu", op,
			     (unsigned long long)backing_size(&e), (unsigned long long)size);
		/* Mostly reload from disk; sometimes keep the cache to mix both. */
		if (rand_r(&e.seed) % 4 != 0) {
			file_close(&e);
			file_open(&e);
		}
		if (op % 16 == 0)
			check_all(&e, model, size, op);
	}
	file_close(&e);
	file_open(&e);
	check_all(&e, model, size, nops);
	env_down(&e);
}

struct param {
	enum sc_cipher_id	cipher;
	uint32_t		bs;
};

/* Every cipher at the smallest and the default data unit. */
static struct param cipher_bs[] = {
	{ SC_CIPHER_NULL, 512 }, { SC_CIPHER_NULL, 4096 },
	{ SC_CIPHER_AES_XTS, 512 }, { SC_CIPHER_AES_XTS, 4096 },
	{ SC_CIPHER_AES_CBC, 512 }, { SC_CIPHER_AES_CBC, 4096 },
};

ParameterizedTestParameters(xl, random_ops)
{
	return cr_make_param_array(struct param, cipher_bs, sizeof(cipher_bs) / sizeof(cipher_bs[0]));
}

ParameterizedTest(struct param *p, xl, random_ops, .timeout = 120)
{
	run_random(p->cipher, p->bs, 1000 + p->bs + (unsigned)p->cipher, 4000);
}

/*
 * Threads sharing one file through the translator, no kernel in between:
 * each thread owns disjoint stripes of odd lengths (1, 7, 333 and bs+1
 * bytes, owner = stripe number % NTHR), so every unit is shared and every
 * write is an unaligned read-modify-write of a unit others write too; the
 * file ends in a short tail group (size % bs == 5).  Each thread writes
 * its stripes through its own handle and re-reads windows, checking its
 * own bytes; at the end the whole file must equal the model.  Two RMWs of
 * one unit interleaving, a read using a size or key that moves under it,
 * or crypto state shared between threads loses bytes here.  Then NTHR
 * threads only read random windows of the finished file at once (shared
 * lock: concurrent decryption), every byte checked.  (sc_concur
 * runs the same pattern through FUSE, where the kernel's page cache adds
 * effects of its own; this test isolates the translator.)
 */
#define NTHR	4
#define NREG	4

struct shared_file {
	struct env	*e;
	uint64_t	reg_end[NREG];
	uint64_t	stripe[NREG];
	uint64_t	size;
	uint8_t		*model;		/* each byte written only by its owner */
	int		iters;
};

struct worker {
	struct shared_file	*sf;
	unsigned		id;
	unsigned		seed;
	pthread_t		thr;
	char			err[256];	/* first failure, "" if none */
};

static unsigned stripe_owner(const struct shared_file *sf, uint64_t off, uint64_t *s0,
			     uint64_t *s1)
{
	uint64_t start = 0;

	for (unsigned r = 0; r < NREG; r++) {
		if (off < sf->reg_end[r]) {
			uint64_t k = (off - start) / sf->stripe[r];

			*s0 = start + k * sf->stripe[r];
			*s1 = min_end(*s0 + sf->stripe[r], sf->reg_end[r]);
			return (unsigned)(k % NTHR);
		}
		start = sf->reg_end[r];
	}
	*s0 = *s1 = off;
	return NTHR;
}

static void *stripe_worker(void *arg)
{
	struct worker *w = arg;
	struct shared_file *sf = w->sf;
	struct sc_fh fh = { .flags = O_RDWR };
	uint8_t *buf = malloc(sf->size), *data = malloc(sf->size);
	int ret;

	if (!buf || !data) {
		snprintf(w->err, sizeof(w->err), "thread %u: no memory", w->id);
		goto out_free;
	}
	ret = sc_xl_open(sf->e->top, &sf->e->obj, &fh);
	if (ret < 0) {
		snprintf(w->err, sizeof(w->err), "thread %u: open: %d", w->id, ret);
		goto out_free;
	}
	for (int it = 0; it < sf->iters && !w->err[0]; it++) {
		uint64_t off = (uint64_t)rand_r(&w->seed) % sf->size, s0, s1, len;
		ssize_t n;

		if (rand_r(&w->seed) % 3 == 0) {	/* re-read a window, check my bytes */
			len = 1 + (uint64_t)rand_r(&w->seed) % (3 * sf->e->bs);
			if (len > sf->size - off)
				len = sf->size - off;
			n = sc_xl_read(sf->e->top, &sf->e->obj, &fh, buf, len, (off_t)off);
			if (n != (ssize_t)len) {
				snprintf(w->err, sizeof(w->err), "thread %u it %d: read [%llu,+%llu) "
					 "returned %zd", w->id, it, (unsigned long long)off,
					 (unsigned long long)len, n);
				break;
			}
			for (uint64_t i = 0; i < len; i++) {
				if (stripe_owner(sf, off + i, &s0, &s1) == w->id &&
				    buf[i] != sf->model[off + i]) {
					snprintf(w->err, sizeof(w->err), "thread %u it %d: byte %llu "
						 "reads %02x, wrote %02x", w->id, it,
						 (unsigned long long)(off + i), buf[i],
						 sf->model[off + i]);
					break;
				}
			}
			continue;
		}
		/* the whole stripe of mine nearest to off (or a piece of it) */
		while (stripe_owner(sf, off, &s0, &s1) != w->id)
			off = (off + 1) % sf->size;
		if (rand_r(&w->seed) % 4 == 0 && s1 - s0 > 2) {
			uint64_t a = s0 + (uint64_t)rand_r(&w->seed) % (s1 - s0);

			s1 = a + 1 + (uint64_t)rand_r(&w->seed) % (s1 - a);
			s0 = a;
		}
		len = s1 - s0;
		for (uint64_t i = 0; i < len; i++)
			data[i] = (uint8_t)rand_r(&w->seed);
		n = sc_xl_write(sf->e->top, &sf->e->obj, &fh, data, len, (off_t)s0);
		if (n != (ssize_t)len) {
			snprintf(w->err, sizeof(w->err), "thread %u it %d: write [%llu,+%llu) "
				 "returned %zd", w->id, it, (unsigned long long)s0,
				 (unsigned long long)len, n);
			break;
		}
		memcpy(sf->model + s0, data, len);
	}
	sc_xl_release(sf->e->top, &sf->e->obj, &fh);
out_free:
	free(buf);
	free(data);
	return NULL;
}

/* Phase two: only readers, of the finished file, all bytes checked. */
static void *window_reader(void *arg)
{
	struct worker *w = arg;
	struct shared_file *sf = w->sf;
	struct sc_fh fh = { .flags = O_RDONLY };
	uint8_t *buf = malloc(sf->size);
	int ret;

	if (!buf) {
		snprintf(w->err, sizeof(w->err), "reader %u: no memory", w->id);
		return NULL;
	}
	ret = sc_xl_open(sf->e->top, &sf->e->obj, &fh);
	if (ret < 0) {
		snprintf(w->err, sizeof(w->err), "reader %u: open: %d", w->id, ret);
		free(buf);
		return NULL;
	}
	for (int it = 0; it < sf->iters && !w->err[0]; it++) {
		uint64_t off = (uint64_t)rand_r(&w->seed) % sf->size;
		uint64_t len = 1 + (uint64_t)rand_r(&w->seed) % (sf->size - off);
		ssize_t n = sc_xl_read(sf->e->top, &sf->e->obj, &fh, buf, len, (off_t)off);

		if (n != (ssize_t)len)
			snprintf(w->err, sizeof(w->err), "reader %u it %d: read [%llu,+%llu) "
				 "returned %zd", w->id, it, (unsigned long long)off,
				 (unsigned long long)len, n);
		else if (memcmp(buf, sf->model + off, len) != 0)
			snprintf(w->err, sizeof(w->err), "reader %u it %d: read [%llu,+%llu) "
				 "differs from the model", w->id, it, (unsigned long long)off,
				 (unsigned long long)len);
	}
	sc_xl_release(sf->e->top, &sf->e->obj, &fh);
	free(buf);
	return NULL;
}

static void run_stripes(enum sc_cipher_id cipher, uint32_t bs, unsigned seed)
{
	struct sc_fh cfh = { .flags = O_RDWR | O_CREAT | O_EXCL };
	struct worker w[NTHR];
	struct shared_file sf;
	struct stat attr = { 0 }, st;
	uint64_t end = 0;
	struct env e;
	uint8_t *buf;
	int fd;

	env_up(&e, cipher, bs);
	memset(&sf, 0, sizeof(sf));
	sf.e = &e;
	sf.iters = 3000;
	sf.stripe[0] = 1;
	sf.stripe[1] = 7;
	sf.stripe[2] = 333;
	sf.stripe[3] = bs + 1;
	for (unsigned r = 0; r < NREG; r++) {
		end += sf.stripe[r] * NTHR * (r == 0 ? 64 : 3);
		sf.reg_end[r] = end;
	}
	/* end in a short tail group: the last unit holds 5 bytes */
	end = (end / bs + 1) * bs + 5;
	sf.reg_end[NREG - 1] = end;
	sf.size = end;
	sf.model = calloc(1, end);
	buf = malloc(end + 1);
	cr_assert(sf.model && buf);

	cr_assert_eq(sc_xl_create(e.top, &e.root, "f", 0600, &cfh, &fd, &st), 0);
	e.obj.fd = fd;
	e.obj.type = S_IFREG;
	e.fh = cfh;
	e.open = true;
	attr.st_size = (off_t)end;
	cr_assert_eq(sc_xl_setattr(e.top, &e.obj, &e.fh, &attr, SC_SET_SIZE, &st), 0);
	for (unsigned t = 0; t < NTHR; t++) {
		w[t] = (struct worker){ .sf = &sf, .id = t, .seed = seed * 31 + t };
		cr_assert_eq(pthread_create(&w[t].thr, NULL, stripe_worker, &w[t]), 0);
	}
	for (unsigned t = 0; t < NTHR; t++)
		pthread_join(w[t].thr, NULL);
	for (unsigned t = 0; t < NTHR; t++)
		cr_assert_str_empty(w[t].err, "%s (seed %u)", w[t].err, seed);
	/* Concurrent decryption only: readers of the finished file. */
	for (unsigned t = 0; t < NTHR; t++) {
		w[t] = (struct worker){ .sf = &sf, .id = t, .seed = seed * 37 + t };
		cr_assert_eq(pthread_create(&w[t].thr, NULL, window_reader, &w[t]), 0);
	}
	for (unsigned t = 0; t < NTHR; t++)
		pthread_join(w[t].thr, NULL);
	for (unsigned t = 0; t < NTHR; t++)
		cr_assert_str_empty(w[t].err, "%s (seed %u)", w[t].err, seed);
	/* What is stored, reloaded from disk. */
	file_close(&e);
	file_open(&e);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, buf, end + 1, 0), (ssize_t)end);
	for (uint64_t i = 0; i < end; i++)
		if (buf[i] != sf.model[i])
			cr_assert_fail("byte %llu is %02x, model %02x (seed %u)",
				       (unsigned long long)i, buf[i], sf.model[i], seed);
	free(buf);
	free(sf.model);
	env_down(&e);
}

ParameterizedTestParameters(xl, concurrent_stripes)
{
	return cr_make_param_array(struct param, cipher_bs, sizeof(cipher_bs) / sizeof(cipher_bs[0]));
}

ParameterizedTest(struct param *p, xl, concurrent_stripes, .timeout = 120)
{
	run_stripes(p->cipher, p->bs, 7 + p->bs + (unsigned)p->cipher);
}

/* The header is hidden, protected, and a tampered one is EIO on the next load. */
Test(xl, header_hidden_and_checked)
{
	char list[256], path[128];
	uint8_t hdr[SC_HDR_MAX];
	struct stat st;
	struct env e;
	ssize_t n;
	int fd;

	env_up(&e, SC_CIPHER_AES_XTS, 4096);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "hello, world", 12, 0), 12);
	cr_assert_eq(sc_xl_getxattr(e.top, &e.obj, SC_HDR_XATTR, hdr, sizeof(hdr)), -ENODATA);
	/* Removing "the header" from above finds none (it would be the escaped name). */
	cr_assert_eq(sc_xl_removexattr(e.top, &e.obj, SC_HDR_XATTR), -ENODATA);
	cr_assert_eq(sc_xl_setxattr(e.top, &e.obj, "user.a", "1", 1, 0), 0);
	n = sc_xl_listxattr(e.top, &e.obj, NULL, 0);
	cr_assert_eq(n, 7, "size query %zd", n);
	cr_assert_eq(sc_xl_listxattr(e.top, &e.obj, list, sizeof(list)), 7);
	cr_assert_str_eq(list, "user.a");
	cr_assert_eq(sc_xl_listxattr(e.top, &e.obj, list, 6), -ERANGE);
	file_close(&e);

	/* Flip one byte of the stored header: the next load must refuse it. */
	snprintf(path, sizeof(path), "%s/f", e.dir);
	cr_assert_eq(getxattr(path, SC_HDR_XATTR, hdr, sizeof(hdr)), SC_HDR_V2_SIZE);
	hdr[9] ^= 0x80;
	cr_assert_eq(setxattr(path, SC_HDR_XATTR, hdr, SC_HDR_V2_SIZE, 0), 0);
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, "f", &fd, &st), 0);
	e.obj.fd = fd;
	e.obj.type = S_IFREG;
	memset(&e.fh, 0, sizeof(e.fh));
	e.fh.flags = O_RDONLY;
	cr_assert_eq(sc_xl_open(e.top, &e.obj, &e.fh), -EIO);
	hdr[9] ^= 0x80;
	cr_assert_eq(setxattr(path, SC_HDR_XATTR, hdr, SC_HDR_V2_SIZE, 0), 0);
	cr_assert_eq(sc_xl_open(e.top, &e.obj, &e.fh), 0, "restored header refused");
	e.open = true;
	{
		char buf[32];

		cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, buf, sizeof(buf), 0), 12);
		cr_assert(memcmp(buf, "hello, world", 12) == 0);
	}
	env_down(&e);
}

/* The root's config name is invisible and cannot be made. */
Test(xl, config_hidden)
{
	struct sc_fh cfh = { .flags = O_RDWR | O_CREAT };
	char path[128];
	struct stat st;
	struct env e;
	int fd;

	env_up(&e, SC_CIPHER_NULL, 4096);
	snprintf(path, sizeof(path), "%s/%s", e.dir, SC_CONFIG_NAME);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, SC_CONFIG_NAME, &fd, &st), -ENOENT);
	cr_assert_eq(sc_xl_create(e.top, &e.root, SC_CONFIG_NAME, 0600, &cfh, &fd, &st), -EPERM);
	cr_assert_eq(sc_xl_mkdir(e.top, &e.root, SC_CONFIG_NAME, 0700, &fd, &st), -EPERM);
	cr_assert_eq(sc_xl_rename(e.top, &e.root, SC_CONFIG_NAME, &e.root, "x", 0), -EPERM);
	cr_assert_eq(sc_xl_unlink(e.top, &e.root, SC_CONFIG_NAME), -ENOENT);
	env_down(&e);
}

struct names {
	char	seen[8][64];
	int	n;
};

static int collect(void *ctx, const struct sc_dirent *de)
{
	struct names *nm = ctx;

	cr_assert_lt(nm->n, 8, "too many entries");
	snprintf(nm->seen[nm->n++], sizeof(nm->seen[0]), "%s", de->name);
	return 0;
}

/*
 * The volume tools' temporary configs (init and passwd write one, then
 * rename it over the config) are as invisible and untouchable in the root
 * as the config itself; elsewhere the name is an ordinary one.
 */
Test(xl, config_tmp_hidden)
{
	static const char tmpname[] = SC_VOL_TMP_PREFIX "0123456789abcdef";
	static const char other[] = SC_VOL_TMP_PREFIX "fedcba9876543210";
	struct sc_fh cfh = { .flags = O_RDWR | O_CREAT }, dh;
	struct sc_obj sub = { .type = S_IFDIR };
	struct names nm = { .n = 0 };
	char path[160];
	struct stat st;
	struct env e;
	int fd;

	env_up(&e, SC_CIPHER_AES_XTS, 4096);
	snprintf(path, sizeof(path), "%s/%s", e.dir, tmpname);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/%s", e.dir, SC_CONFIG_NAME);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	/* a visible neighbour, made through the layer */
	cr_assert_eq(sc_xl_mknod(e.top, &e.root, "visible", S_IFREG | 0600, 0, &fd, &st), 0);
	close(fd);

	cr_assert_eq(sc_xl_lookup(e.top, &e.root, tmpname, &fd, &st), -ENOENT);
	cr_assert_eq(sc_xl_create(e.top, &e.root, other, 0600, &cfh, &fd, &st), -EPERM);
	cr_assert_eq(sc_xl_mknod(e.top, &e.root, other, S_IFREG | 0600, 0, &fd, &st), -EPERM);
	cr_assert_eq(sc_xl_mkdir(e.top, &e.root, other, 0700, &fd, &st), -EPERM);
	cr_assert_eq(sc_xl_symlink(e.top, &e.root, other, "visible", &fd, &st), -EPERM);
	cr_assert_eq(sc_xl_rename(e.top, &e.root, "visible", &e.root, other, 0), -EPERM);
	cr_assert_eq(sc_xl_rename(e.top, &e.root, tmpname, &e.root, "x", 0), -EPERM);
	cr_assert_eq(sc_xl_rename(e.top, &e.root, "visible", &e.root, SC_CONFIG_NAME, 0), -EPERM);
	cr_assert_eq(sc_xl_unlink(e.top, &e.root, tmpname), -ENOENT);
	snprintf(path, sizeof(path), "%s/%s", e.dir, other);
	cr_assert_eq(access(path, F_OK), -1, "%s was made in the backing root", other);
	snprintf(path, sizeof(path), "%s/%s", e.dir, tmpname);
	cr_assert_eq(access(path, F_OK), 0, "%s was touched", tmpname);

	memset(&dh, 0, sizeof(dh));
	cr_assert_eq(sc_xl_opendir(e.top, &e.root, &dh), 0);
	cr_assert_eq(sc_xl_readdir(e.top, &e.root, &dh, 0, collect, &nm), 0);
	cr_assert_eq(sc_xl_releasedir(e.top, &e.root, &dh), 0);
	for (int i = 0; i < nm.n; i++)
		cr_assert(strcmp(nm.seen[i], tmpname) != 0 && strcmp(nm.seen[i], SC_CONFIG_NAME) != 0,
			  "readdir of the root shows %s", nm.seen[i]);
	cr_assert_eq(nm.n, 3, "root lists %d entries, want . .. visible", nm.n);

	/* Only the root is special. */
	cr_assert_eq(sc_xl_mkdir(e.top, &e.root, "d", 0700, &fd, &st), 0);
	sub.fd = fd;
	cr_assert_eq(sc_xl_mknod(e.top, &sub, other, S_IFREG | 0600, 0, &fd, &st), 0);
	close(fd);
	cr_assert_eq(sc_xl_lookup(e.top, &sub, other, &fd, &st), 0);
	close(fd);
	close(sub.fd);
	env_down(&e);
}

/* Runs the calls that follow with fsuid/fsgid id (this thread only), as the front end does. */
static void as_user(uid_t id)
{
	setfsgid(id);
	setfsuid(id);
	cr_assert_eq((uid_t)setfsuid((uid_t)-1), id, "setfsuid(%u) did not take", (unsigned)id);
}

/*
 * Issue 13 item 1, in process: a caller who is not root creates files
 * whose mode lacks owner-write (the header xattr needs write permission on
 * the inode), gets a writable handle that then writes, cuts to 0 and reads
 * (as the front end does, with the daemon's root credentials), and the
 * file has exactly the mode asked for; and an empty file made by mknod
 * with mode 0444 can be opened read-only by its owner without root (as a
 * daemon that is not root opens its own files), its header stored by the
 * first caller who changes it.
 */
Test(xl, create_readonly_modes_as_other_user)
{
	static const mode_t modes[] = { 0, 0400, 0444, 0200 };
	char path[160], buf[32];
	uint8_t hdr[SC_HDR_MAX];
	struct sc_obj obj = { .type = S_IFREG };
	struct sc_fh fh;
	struct stat st, attr = { .st_size = 0 };
	struct env e;
	int fd;

	env_up(&e, SC_CIPHER_AES_XTS, 4096);
	cr_assert_eq(chmod(e.dir, 0777), 0);
	as_user(65534);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char name[16];

		snprintf(name, sizeof(name), "m%o", modes[i]);
		memset(&fh, 0, sizeof(fh));
		fh.flags = O_RDWR | O_CREAT;
		cr_assert_eq(sc_xl_create(e.top, &e.root, name, modes[i], &fh, &fd, &st), 0,
			     "create mode %o", modes[i]);
		cr_assert_eq(st.st_mode & 07777, modes[i], "mode %o after create", st.st_mode);
		obj.fd = fd;
		/* Data operations run with the daemon's credentials (fs/fuse/creds.c). */
		as_user(0);
		cr_assert_eq(sc_xl_write(e.top, &obj, &fh, "hello", 5, 0), 5);
		cr_assert_eq(sc_xl_setattr(e.top, &obj, &fh, &attr, SC_SET_SIZE, &st), 0);
		cr_assert_eq(sc_xl_write(e.top, &obj, &fh, "again", 5, 2), 5);
		cr_assert_eq(sc_xl_read(e.top, &obj, &fh, buf, sizeof(buf), 0), 7);
		cr_assert(memcmp(buf, "\0\0again", 7) == 0);
		cr_assert_eq(sc_xl_release(e.top, &obj, &fh), 0);
		e.top->ops->forget(e.top, &obj);
		close(fd);
		snprintf(path, sizeof(path), "%s/%s", e.dir, name);
		cr_assert_eq(stat(path, &st), 0);
		cr_assert_eq(st.st_mode & 07777, modes[i], "stored mode %o", st.st_mode);
		cr_assert_eq(st.st_uid, 65534);
		as_user(65534);
	}
	/* mknod 0444, first open read-only by the owner: no header can be set yet. */
	cr_assert_eq(sc_xl_mknod(e.top, &e.root, "n", S_IFREG | 0444, 0, &fd, &st), 0);
	close(fd);
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, "n", &fd, &st), 0);
	obj.fd = fd;
	memset(&fh, 0, sizeof(fh));
	fh.flags = O_RDONLY;
	cr_assert_eq(sc_xl_open(e.top, &obj, &fh), 0, "read-only first open of a 0444 file");
	cr_assert_eq(sc_xl_read(e.top, &obj, &fh, buf, sizeof(buf), 0), 0);
	cr_assert_eq(sc_xl_release(e.top, &obj, &fh), 0);
	/* root, who may write it, gives it data: the header goes first. */
	as_user(0);
	memset(&fh, 0, sizeof(fh));
	fh.flags = O_RDWR;
	cr_assert_eq(sc_xl_open(e.top, &obj, &fh), 0);
	cr_assert_eq(sc_xl_write(e.top, &obj, &fh, "root data", 9, 0), 9);
	cr_assert_eq(sc_xl_release(e.top, &obj, &fh), 0);
	e.top->ops->forget(e.top, &obj);
	snprintf(path, sizeof(path), "%s/n", e.dir);
	cr_assert_eq(getxattr(path, SC_HDR_XATTR, hdr, sizeof(hdr)), SC_HDR_V2_SIZE,
		     "header not stored before the data");
	memset(&fh, 0, sizeof(fh));
	fh.flags = O_RDONLY;
	cr_assert_eq(sc_xl_open(e.top, &obj, &fh), 0);
	cr_assert_eq(sc_xl_read(e.top, &obj, &fh, buf, sizeof(buf), 0), 9);
	cr_assert(memcmp(buf, "root data", 9) == 0);
	cr_assert_eq(sc_xl_release(e.top, &obj, &fh), 0);
	e.top->ops->forget(e.top, &obj);
	close(fd);
	env_down(&e);
}

/*
 * Issue 14 item 2: the header name and the escaped names of the layers
 * above (docs/format.md, "Extended attribute names").  From above, H,
 * H!x and Hx are ordinary names that get, set, list and remove like any
 * other; below they are H!, H!!x and Hx; this layer's own header H and its
 * other reserved names (H!y) are never reached or shown.
 */
Test(xl, xattr_names_escaped)
{
	static const char H[] = SC_HDR_XATTR;
	static const char *const shown[] = {
		SC_HDR_XATTR, SC_HDR_XATTR "!x", SC_HDR_XATTR "x", "user.z",
	};
	char path[128], list[512], v[64], name[300];
	uint8_t hdr0[SC_HDR_MAX], hdr1[SC_HDR_MAX];
	struct stat st;
	struct env e;
	ssize_t n, wn;
	int fd;

	env_up(&e, SC_CIPHER_AES_XTS, 4096);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, "nested data", 11, 0), 11);
	snprintf(path, sizeof(path), "%s/f", e.dir);
	cr_assert_eq(getxattr(path, H, hdr0, sizeof(hdr0)), SC_HDR_V2_SIZE);

	/* H from above: a header of the layer above, stored as H!. */
	cr_assert_eq(sc_xl_getxattr(e.top, &e.obj, H, v, sizeof(v)), -ENODATA);
	cr_assert_eq(sc_xl_setxattr(e.top, &e.obj, H, "outer", 5, XATTR_CREATE), 0);
	cr_assert_eq(sc_xl_setxattr(e.top, &e.obj, H, "again", 5, XATTR_CREATE), -EEXIST);
	cr_assert_eq(sc_xl_getxattr(e.top, &e.obj, H, NULL, 0), 5);
	cr_assert_eq(sc_xl_getxattr(e.top, &e.obj, H, v, sizeof(v)), 5);
	cr_assert(memcmp(v, "outer", 5) == 0);
	cr_assert_eq(getxattr(path, SC_HDR_XATTR "!", v, sizeof(v)), 5, "H not stored as H!");
	/* H!x and Hx from above. */
	cr_assert_eq(sc_xl_setxattr(e.top, &e.obj, SC_HDR_XATTR "!x", "bang", 4, 0), 0);
	cr_assert_eq(getxattr(path, SC_HDR_XATTR "!!x", v, sizeof(v)), 4, "H!x not stored as H!!x");
	cr_assert_eq(sc_xl_getxattr(e.top, &e.obj, SC_HDR_XATTR "!x", v, sizeof(v)), 4);
	cr_assert(memcmp(v, "bang", 4) == 0);
	cr_assert_eq(sc_xl_setxattr(e.top, &e.obj, SC_HDR_XATTR "x", "plain", 5, 0), 0);
	cr_assert_eq(getxattr(path, SC_HDR_XATTR "x", v, sizeof(v)), 5, "Hx not stored as is");
	cr_assert_eq(getxattr(path, SC_HDR_XATTR "!x", v, sizeof(v)), -1, "Hx stored escaped");
	/* This layer's reserved names below are out of reach and out of sight. */
	cr_assert_eq(setxattr(path, SC_HDR_XATTR "!y", "mine", 4, 0), 0);
	cr_assert_eq(sc_xl_getxattr(e.top, &e.obj, SC_HDR_XATTR "y", v, sizeof(v)), -ENODATA);
	cr_assert_eq(getxattr(path, H, hdr1, sizeof(hdr1)), SC_HDR_V2_SIZE);
	cr_assert(memcmp(hdr0, hdr1, SC_HDR_V2_SIZE) == 0, "the real header changed");

	/* The list: the three names as set from above, sizes consistent. */
	cr_assert_eq(sc_xl_setxattr(e.top, &e.obj, "user.z", "1", 1, 0), 0);
	n = sc_xl_listxattr(e.top, &e.obj, NULL, 0);
	cr_assert_eq(sc_xl_listxattr(e.top, &e.obj, list, sizeof(list)), n);
	wn = 0;
	for (const char *p = list; p < list + n; p += strlen(p) + 1) {
		cr_assert(strcmp(p, SC_HDR_XATTR "y") != 0 && strcmp(p, SC_HDR_XATTR "!") != 0 &&
			  strcmp(p, SC_HDR_XATTR "!!x") != 0, "listed %s", p);
		wn++;
	}
	cr_assert_eq(wn, 4, "listed %zd names, want H, H!x, Hx, user.z", wn);
	/* Order is the backing filesystem's: check membership. */
	for (size_t k = 0; k < sizeof(shown) / sizeof(shown[0]); k++) {
		bool found = false;

		for (const char *p = list; p < list + n; p += strlen(p) + 1)
			found |= strcmp(p, shown[k]) == 0;
		cr_assert(found, "%s not listed", shown[k]);
	}
	cr_assert_eq(n, (ssize_t)(sizeof(SC_HDR_XATTR) * 3 + 2 + 1 + 7), "list size %zd", n);
	cr_assert_eq(sc_xl_listxattr(e.top, &e.obj, list, (size_t)n - 1), -ERANGE);

	/* Remove from above: only the escaped names go. */
	cr_assert_eq(sc_xl_removexattr(e.top, &e.obj, H), 0);
	cr_assert_eq(sc_xl_removexattr(e.top, &e.obj, H), -ENODATA);
	cr_assert_eq(sc_xl_removexattr(e.top, &e.obj, SC_HDR_XATTR "!x"), 0);
	cr_assert_eq(sc_xl_removexattr(e.top, &e.obj, SC_HDR_XATTR "x"), 0);
	cr_assert_eq(sc_xl_removexattr(e.top, &e.obj, SC_HDR_XATTR "y"), -ENODATA);
	cr_assert_eq(getxattr(path, H, hdr1, sizeof(hdr1)), SC_HDR_V2_SIZE);
	cr_assert(memcmp(hdr0, hdr1, SC_HDR_V2_SIZE) == 0, "the real header changed");
	cr_assert_eq(getxattr(path, SC_HDR_XATTR "!y", v, sizeof(v)), 4, "reserved name removed");
	/* A name from above that is too long once escaped: refused below. */
	memset(name, 'a', sizeof(name));
	memcpy(name, SC_HDR_XATTR "!", sizeof(SC_HDR_XATTR));
	name[255] = 0;
	cr_assert_eq(sc_xl_setxattr(e.top, &e.obj, name, "1", 1, 0), -ERANGE);

	/* The data still decrypts after all that, from a fresh load. */
	file_close(&e);
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, "f", &fd, &st), 0);
	e.obj.fd = fd;
	e.obj.type = S_IFREG;
	memset(&e.fh, 0, sizeof(e.fh));
	e.fh.flags = O_RDONLY;
	cr_assert_eq(sc_xl_open(e.top, &e.obj, &e.fh), 0);
	e.open = true;
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, v, sizeof(v), 0), 11);
	cr_assert(memcmp(v, "nested data", 11) == 0);
	env_down(&e);
}

/*
 * The crypt layer's per-thread buffers (fs/xlators/data/common.c tbuf) hold plaintext:
 * the scratch buffer ends every unaligned read with the decrypted units in
 * it, the run buffer holds a write's plaintext until it is encrypted in
 * place.  Both are wiped before free(), when a buffer grows (the old one)
 * and when the thread exits (its key destructor), so that the allocator
 * never hands file contents to whoever allocates next.
 *
 * test_xl is linked with -Wl,--wrap=free (tests/crypt/meson.build), which
 * routes every free() of this file and of the static libraries sc_fs and
 * sc_crypto, the data layer's included, through __wrap_free.  While g_free_scan is
 * set it looks for the marker in the block about to be freed
 * (malloc_usable_size: the whole block, under ASan the requested size) and
 * counts the hits.  The cipher is aes-xts, so only plaintext can hold the
 * marker; the test's own copies of it are static arrays, never freed.
 */
void __real_free(void *p);
void __wrap_free(void *p);

#define WIPE_BIG	(64 * 1024)	/* tbuf's smallest buffer: what counts as one */

static const uint8_t wipe_marker[32] = "stackcrypt plaintext, not wiped";
static atomic_bool g_free_scan;
static atomic_uint g_free_hits;		/* blocks freed with the marker in them */
static atomic_uint g_free_big;		/* blocks of >= WIPE_BIG freed */

void __wrap_free(void *p)
{
	if (p && atomic_load(&g_free_scan)) {
		size_t n = malloc_usable_size(p);

		if (n >= WIPE_BIG)
			atomic_fetch_add(&g_free_big, 1);
		if (memmem(p, n, wipe_marker, sizeof(wipe_marker)))
			atomic_fetch_add(&g_free_hits, 1);
	}
	__real_free(p);
}

#define WIPE_SIZE	(75 * 4096 + 100)	/* > 4 * WIPE_BIG: both buffers grow */

struct wipe_run {
	struct env	*e;
	unsigned	hits, big;	/* counters as the thread finished its I/O */
	char		err[256];	/* first failure, "" if none */
};

/* One thread's I/O: small then large, writes then unaligned reads. */
static void *wipe_worker(void *arg)
{
	static uint8_t data[WIPE_SIZE], back[WIPE_SIZE];
	static const size_t wlen[] = { 5000, WIPE_SIZE };	/* the run buffer grows */
	static const size_t rlen[] = { 100, WIPE_SIZE - 1 };	/* the scratch buffer grows */
	struct wipe_run *w = arg;
	struct env *e = w->e;
	ssize_t n;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = wipe_marker[i % sizeof(wipe_marker)];
	for (unsigned i = 0; i < 2 && !w->err[0]; i++) {
		n = sc_xl_write(e->top, &e->obj, &e->fh, data, wlen[i], 0);
		if (n != (ssize_t)wlen[i])
			snprintf(w->err, sizeof(w->err), "write of %zu: %zd", wlen[i], n);
	}
	/* From offset 1: not where a unit starts, so decrypted in the scratch buffer. */
	for (unsigned i = 0; i < 2 && !w->err[0]; i++) {
		memset(back, 0, sizeof(back));
		n = sc_xl_read(e->top, &e->obj, &e->fh, back, rlen[i], 1);
		if (n != (ssize_t)rlen[i] || memcmp(back, data + 1, rlen[i]) != 0)
			snprintf(w->err, sizeof(w->err), "read of %zu from 1: %zd, %s", rlen[i],
				 n, n == (ssize_t)rlen[i] ? "wrong bytes" : "short");
	}
	w->hits = atomic_load(&g_free_hits);
	w->big = atomic_load(&g_free_big);
	return NULL;
}

Test(xl, plaintext_buffers_wiped_on_free)
{
	struct wipe_run w = { 0 };
	pthread_t thr;
	struct env e;
	unsigned hits, big;

	env_up(&e, SC_CIPHER_AES_XTS, 4096);
	file_create(&e);
	w.e = &e;
	atomic_store(&g_free_scan, true);
	/* A thread of its own: its exit runs the buffers' key destructor. */
	cr_assert_eq(pthread_create(&thr, NULL, wipe_worker, &w), 0);
	cr_assert_eq(pthread_join(thr, NULL), 0);
	atomic_store(&g_free_scan, false);
	hits = atomic_load(&g_free_hits);
	big = atomic_load(&g_free_big);
	env_down(&e);	/* first: a failure below leaves no directory behind */
	cr_assert_str_empty(w.err, "%s", w.err);
	/* Each buffer grew once (one old one freed each), then both at exit. */
	cr_assert_geq(w.big, 2, "the --wrap=free hook saw %u buffer frees before the exit, "
		      "expected the 2 grown-out ones", w.big);
	cr_assert_eq(big - w.big, 2, "the --wrap=free hook saw %u buffer frees at thread exit, "
		     "expected 2", big - w.big);
	cr_assert_eq(w.hits, 0, "%u buffers freed with plaintext in them when they grew",
		     w.hits);
	cr_assert_eq(hits - w.hits, 0, "%u buffers freed with plaintext in them at thread exit",
		     hits - w.hits);
}
