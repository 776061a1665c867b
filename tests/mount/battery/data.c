// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * data.c - the battery's data checks: reads and writes at assorted
 * offsets, tail sizes and unit boundaries, holes, O_APPEND, sync,
 * fallocate, SEEK_DATA/SEEK_HOLE, copy_file_range and offsets past 32 bits.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/falloc.h>

#include "battery_i.h"

/* Reads and writes at assorted offsets and sizes, with holes. */
void chk_rw_offsets(struct ctx *c)
{
	static const struct { off_t off; size_t len; } w[] = {
		{ 0, 1 }, { 1, 2 }, { 4095, 2 }, { 4096, 4096 }, { 10000, 1 },
		{ 100, 50000 }, { 1 << 20, 3 }, { 12345, 0 }, { 196625, 131072 },
		{ 65536, 65536 }, { 3, 1 << 20 }, { (1 << 21) + 5, 4091 },
	};
	static const struct { off_t off; size_t len; } r[] = {
		{ 0, 4096 }, { 1, 1 }, { 4095, 2 }, { 4000, 200000 }, { 1 << 20, 4096 },
		{ (1 << 21) + 4000, 200 }, { (1 << 21) + 4096, 100 },
		{ (1 << 21) + 100000, 10 }, { 0, 4 << 20 }, { 17, 0 },
	};
	int fd[2], rfd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0644)));
	REQUIRE(BOTH_OK(c, "open rdonly", rfd[S] = openat(D, "f", O_RDONLY)));
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		bat_pwrite2(c, bat_label("pwrite %lld+%zu", (long long)w[i].off, w[i].len), fd,
			    w[i].off, w[i].len, 40 + i);
		bat_cmp_fstat(c, bat_label("fstat after %zu", i), fd, 0);
	}
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		bat_cmp_pread(c, bat_label("pread %lld+%zu", (long long)r[i].off, r[i].len), rfd,
			      r[i].off, r[i].len);
	bat_cmp_fd_data(c, "whole file", rfd);
	/* Sequential write() and read() with a moving offset. */
	BOTH(c, "lseek 4090", lseek(fd[S], 4090, SEEK_SET));
	for (int i = 0; i < 5; i++) {
		uint8_t b[1000];

		bat_fill(b, sizeof(b), 60 + i);
		BOTH(c, bat_label("write #%d", i), write(fd[S], b, sizeof(b) - 7 * i));
	}
	BOTH(c, "lseek 0", lseek(rfd[S], 4000, SEEK_SET));
	for (int i = 0; i < 5; i++) {
		uint8_t b[2][1500];

		BOTH(c, bat_label("read #%d", i), read(rfd[S], b[S], sizeof(b[S]) - 13 * i));
		bat_cmp_bytes(c, bat_label("read #%d data", i), b[REF], 200, b[MNT], 200);
	}
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "close r", close(rfd[S]));
	bat_cmp_data(c, "data", "f");
	/* Reads after EOF. */
	REQUIRE(bat_make_file(c, "small", 10, 70, 0644));
	REQUIRE(BOTH_OK(c, "open small", fd[S] = openat(D, "small", O_RDONLY)));
	bat_cmp_pread(c, "pread across EOF", fd, 5, 100);
	bat_cmp_pread(c, "pread at EOF", fd, 10, 100);
	bat_cmp_pread(c, "pread past EOF", fd, 5000, 100);
	BOTH(c, "pread negative", pread(fd[S], (char[4]){0}, 4, -1));
	BOTH(c, "close small", close(fd[S]));
}

/* Files of every small size (the crypt tail rules: sizes below and around
 * one cipher block and one unit). */
void chk_rw_tail_sizes(struct ctx *c)
{
	static const size_t big[] = {
		255, 256, 257, 511, 512, 513, 1023, 1024, 4079, 4080, 4081, 4095,
		4096, 4097, 4111, 4112, 4113, 8191, 8192, 8193,
	};
	int fd[2];

	for (size_t i = 0; i < 41 + sizeof(big) / sizeof(big[0]); i++) {
		size_t n = i <= 40 ? i : big[i - 41];
		const char *name = bat_label("s%zu", n);

		REQUIRE(bat_make_file(c, name, n, (unsigned)n, 0644));
		bat_cmp_stat(c, bat_label("stat %zu", n), name, 0);
		bat_cmp_data(c, bat_label("data %zu", n), name);
		REQUIRE(BOTH_OK(c, bat_label("reopen %zu", n), fd[S] = openat(D, name, O_RDWR)));
		bat_pwrite2(c, bat_label("append 1 at %zu", n), fd, (off_t)n, 1, 1000 + (unsigned)n);
		bat_cmp_fd_data(c, bat_label("data %zu+1", n), fd);
		bat_pwrite2(c, bat_label("overwrite middle of %zu", n), fd, (off_t)n / 2, 1, 2000 + (unsigned)n);
		bat_cmp_fd_data(c, bat_label("data %zu mid", n), fd);
		if (n > 0) {
			BOTH(c, bat_label("truncate %zu-1", n), ftruncate(fd[S], (off_t)n - 1));
			bat_cmp_fd_data(c, bat_label("data %zu-1", n), fd);
		}
		BOTH(c, bat_label("close %zu", n), close(fd[S]));
		bat_cmp_stat(c, bat_label("stat %zu final", n), name, 0);
		bat_cmp_data(c, bat_label("data %zu final (fresh open)", n), name);
	}
	/* N bytes straddling the first unit boundary. */
	for (size_t n = 1; n <= 40; n += 3) {
		const char *name = bat_label("x%zu", n);

		REQUIRE(BOTH_OK(c, bat_label("create %s", name),
				fd[S] = openat(D, name, O_CREAT | O_WRONLY, 0644)));
		bat_pwrite2(c, bat_label("straddle %zu", n), fd, 4096 - (off_t)n / 2, n, 3000 + (unsigned)n);
		BOTH(c, bat_label("close %s", name), close(fd[S]));
		bat_cmp_stat(c, bat_label("stat %s", name), name, 0);
		bat_cmp_data(c, bat_label("data %s", name), name);
	}
}

/* Unaligned and sub-unit writes around 16-, 512- and 4096-byte boundaries,
 * through an O_WRONLY fd (a crypt stack must still read what it rewrites). */
void chk_rw_boundaries(struct ctx *c)
{
	static const off_t offs[] = {
		0, 1, 15, 16, 17, 255, 511, 512, 513, 1000, 4080, 4095, 4096,
		4097, 8191, 8192, 12300, 12387, 12388, 12400, 20000,
	};
	static const size_t lens[] = { 1, 15, 16, 17, 511, 512, 513, 4095, 4096, 4097, 8193 };
	int fd[2], rfd[2];
	unsigned salt = 100;

	REQUIRE(bat_make_file(c, "f", 3 * 4096 + 100, 99, 0644));
	REQUIRE(BOTH_OK(c, "open wronly", fd[S] = openat(D, "f", O_WRONLY)));
	REQUIRE(BOTH_OK(c, "open rdonly", rfd[S] = openat(D, "f", O_RDONLY)));
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			bat_pwrite2(c, bat_label("pwrite %lld+%zu", (long long)offs[i], lens[j]),
				    fd, offs[i], lens[j], salt++);
			if (!bat_cmp_fd_data(c, bat_label("data after %lld+%zu", (long long)offs[i], lens[j]),
					     rfd))
				goto out;	/* one diverging file is enough noise */
		}
		/* Shrink back so later offsets still land around EOF. */
		BOTH(c, bat_label("truncate back %zu", i), ftruncate(fd[S], 3 * 4096 + 100 + (off_t)i));
	}
	bat_cmp_fstat(c, "fstat", fd, 0);
out:
	BOTH(c, "close w", close(fd[S]));
	BOTH(c, "close r", close(rfd[S]));
	bat_cmp_data(c, "fresh read", "f");
}

/* Writes past EOF leave holes that read as zeros. */
void chk_holes(struct ctx *c)
{
	int fd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0644)));
	bat_pwrite2(c, "write 10 at 1M", fd, 1 << 20, 10, 80);
	bat_cmp_fstat(c, "fstat", fd, 0);
	bat_cmp_pread(c, "hole at 0", fd, 0, 4096);
	bat_cmp_pread(c, "hole before data", fd, (1 << 20) - 100, 200);
	bat_pwrite2(c, "write into hole", fd, 5000, 3, 81);
	bat_cmp_fd_data(c, "whole file", fd);
	BOTH(c, "grow to 3M", ftruncate(fd[S], 3 << 20));
	bat_cmp_pread(c, "grown region", fd, (2 << 20) + 7, 8192);
	bat_pwrite2(c, "write 1 past EOF", fd, (3 << 20) + 1, 1, 82);
	bat_cmp_fd_data(c, "whole file after", fd);
	BOTH(c, "fsync", fsync(fd[S]));
	/* The file stays sparse (well below its size in blocks). */
	BOTH(c, "sparse", ({
		struct stat st;
		fstat(fd[S], &st);
		st.st_blocks * 512 < st.st_size / 2;
	}));
	bat_cmp_fstat(c, "fstat after fsync", fd, ST_BLOCKS);
	BOTH(c, "close", close(fd[S]));
	bat_cmp_data(c, "fresh read", "f");
	/* A hole exactly one unit long between two units of data. */
	REQUIRE(BOTH_OK(c, "create g", fd[S] = openat(D, "g", O_CREAT | O_RDWR, 0644)));
	bat_pwrite2(c, "unit 0", fd, 0, 4096, 83);
	bat_pwrite2(c, "unit 2", fd, 8192, 4096, 84);
	bat_cmp_pread(c, "unit 1", fd, 4096, 4096);
	BOTH(c, "close g", close(fd[S]));
	bat_cmp_data(c, "g data", "g");
}

void chk_append(struct ctx *c)
{
	int fd[2], fd2[2];

	REQUIRE(bat_make_file(c, "f", 4090, 90, 0644));
	REQUIRE(BOTH_OK(c, "open append", fd[S] = openat(D, "f", O_WRONLY | O_APPEND)));
	REQUIRE(BOTH_OK(c, "open append 2", fd2[S] = openat(D, "f", O_RDWR | O_APPEND)));
	for (int i = 0; i < 6; i++) {
		uint8_t b[40];

		bat_fill(b, sizeof(b), 91 + i);
		BOTH(c, bat_label("append #%d", i), write((i & 1 ? fd2 : fd)[S], b, 3 + 7 * i));
		BOTH(c, bat_label("offset #%d", i), lseek((i & 1 ? fd2 : fd)[S], 0, SEEK_CUR));
	}
	/* Linux appends even for pwrite on an O_APPEND fd. */
	bat_pwrite2(c, "pwrite on O_APPEND", fd, 0, 5, 97);
	bat_cmp_fstat(c, "fstat", fd, 0);
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "close 2", close(fd2[S]));
	bat_cmp_data(c, "data", "f");
	REQUIRE(BOTH_OK(c, "create append", fd[S] = openat(D, "n", O_CREAT | O_WRONLY | O_APPEND, 0644)));
	for (int i = 0; i < 30; i++)
		bat_pwrite2(c, bat_label("append small #%d", i), fd, 0, (size_t)i, 200 + i);
	BOTH(c, "close", close(fd[S]));
	bat_cmp_data(c, "data n", "n");
}

void chk_sync(struct ctx *c)
{
	int fd[2], dfd[2], dup_fd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0644)));
	bat_pwrite2(c, "write", fd, 0, 100000, 110);
	BOTH(c, "fsync", fsync(fd[S]));
	bat_pwrite2(c, "write 2", fd, 5, 5000, 111);
	BOTH(c, "fdatasync", fdatasync(fd[S]));
	BOTH(c, "sync_file_range", sync_file_range(fd[S], 0, 0, SYNC_FILE_RANGE_WRITE));
	BOTH_OK(c, "dup", dup_fd[S] = dup(fd[S]));
	/* Each close of a duplicate is a flush. */
	BOTH(c, "close dup", close(dup_fd[S]));
	BOTH(c, "close", close(fd[S]));
	REQUIRE(BOTH_OK(c, "open rdonly", fd[S] = openat(D, "f", O_RDONLY)));
	BOTH(c, "fsync rdonly", fsync(fd[S]));
	BOTH(c, "syncfs", syncfs(fd[S]));
	bat_cmp_fd_data(c, "data", fd);
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	REQUIRE(BOTH_OK(c, "open dir", dfd[S] = openat(D, "d", O_RDONLY | O_DIRECTORY)));
	BOTH(c, "fsyncdir", fsync(dfd[S]));
	BOTH(c, "fdatasync dir", fdatasync(dfd[S]));
	BOTH(c, "close dir", close(dfd[S]));
	BOTH(c, "fsync bad fd", fsync(-1));
}

void chk_fallocate(struct ctx *c)
{
	int fd[2];

	REQUIRE(bat_make_file(c, "f", 5000, 130, 0644));
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	/* KEEP_SIZE changes neither contents nor size: no leeway. */
	BOTH(c, "KEEP_SIZE beyond EOF", fallocate(fd[S], FALLOC_FL_KEEP_SIZE, 200000, 8192));
	bat_cmp_fstat(c, "size kept", fd, 0);
	bat_cmp_fd_data(c, "data after KEEP_SIZE", fd);
	/* Writing past the preallocated range leaves a gap that reads as
	 * zeros, although the backing blocks there are allocated. */
	bat_pwrite2(c, "write past prealloc", fd, 300000, 100, 131);
	bat_cmp_fd_data(c, "gap reads zeros", fd);
	BOTH(c, "KEEP_SIZE inside", fallocate(fd[S], FALLOC_FL_KEEP_SIZE, 0, 4096));
	bat_cmp_fd_data(c, "data after KEEP_SIZE inside", fd);
	BOTH(c, "fallocate on bad args", fallocate(fd[S], 0, -1, 10));
	BOTH(c, "fallocate zero length", fallocate(fd[S], 0, 0, 0));
	if (BOTH_ALT(c, "mode 0 inside", EOPNOTSUPP, fallocate(fd[S], 0, 1000, 3000)) == SAME)
		bat_cmp_fd_data(c, "data after mode 0 inside", fd);
	if (BOTH_ALT(c, "mode 0 beyond EOF", EOPNOTSUPP, fallocate(fd[S], 0, 400000, 10000)) != SAME)
		goto out_close;
	bat_cmp_fstat(c, "size after mode 0", fd, 0);
	bat_cmp_fd_data(c, "data after mode 0", fd);
	if (BOTH_ALT(c, "PUNCH_HOLE", EOPNOTSUPP,
		     fallocate(fd[S], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1000, 6000)) != SAME)
		goto out_close;
	bat_cmp_fstat(c, "size after punch", fd, 0);
	bat_cmp_fd_data(c, "data after punch", fd);
	BOTH(c, "PUNCH_HOLE without KEEP_SIZE", fallocate(fd[S], FALLOC_FL_PUNCH_HOLE, 0, 10));
	if (BOTH_ALT(c, "ZERO_RANGE", EOPNOTSUPP,
		     fallocate(fd[S], FALLOC_FL_ZERO_RANGE, 299990, 30)) != SAME)
		goto out_close;
	bat_cmp_fd_data(c, "data after zero range", fd);
out_close:
	BOTH(c, "close", close(fd[S]));
	REQUIRE(BOTH_OK(c, "open rdonly", fd[S] = openat(D, "f", O_RDONLY)));
	BOTH(c, "fallocate on O_RDONLY", fallocate(fd[S], 0, 0, 10));
	BOTH(c, "close rdonly", close(fd[S]));
}

/* SEEK_DATA/SEEK_HOLE in a crypt stack: no exact offsets, but consistent
 * answers.  As lseek(2) allows, a hole may be reported as data (zeros), but
 * not the other way round: bytes skipped by SEEK_DATA and bytes of a hole
 * reported by SEEK_HOLE must read as zeros, results stay inside the file, and
 * ENXIO comes exactly at or beyond EOF (SEEK_DATA also when only zeros
 * follow).  Each side prints its verdict; the plain directory must agree. */
struct seek_q {
	int whence;
	off_t off;
};

/* True if [from, to) of fd reads as zeros. */
static bool zeros(int fd, off_t from, off_t to)
{
	size_t len = to > from ? (size_t)(to - from) : 0;
	uint8_t *b = malloc(len + 1);
	bool z = pread(fd, b, len, from) == (ssize_t)len;

	for (size_t i = 0; z && i < len; i++)
		z = !b[i];
	free(b);
	return z;
}

static void side_seek_consistent(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	const struct seek_q *q = arg;
	int fd = openat(D, "f", O_RDONLY);
	struct stat st;
	off_t r, size;
	int e;

	fstat(fd, &st);
	size = st.st_size;
	errno = 0;
	r = lseek(fd, q->off, q->whence);
	e = errno;
	if (q->off < 0 || q->off >= size) {
		bat_sb_printf(out, "%s", r < 0 ? bat_ename(e) : bat_label("bad:%lld", (long long)r));
	} else if (r < 0) {
		bool ok = q->whence == SEEK_DATA && e == ENXIO && zeros(fd, q->off, size);

		bat_sb_printf(out, ok ? "ok" : bat_label("bad:%s", bat_ename(e)));
	} else if (r < q->off || r > size || (q->whence == SEEK_DATA && r == size)) {
		bat_sb_printf(out, "out-of-range:%lld", (long long)r);
	} else if (q->whence == SEEK_DATA) {
		bat_sb_printf(out, zeros(fd, q->off, r) ? "ok" : "skipped-nonzero");
	} else {
		off_t next = lseek(fd, r, SEEK_DATA);

		bat_sb_printf(out, zeros(fd, r, next < 0 ? size : next) ? "ok" : "hole-nonzero");
	}
	close(fd);
}

/* Copies "w" as cp(1) does, SEEK_DATA then SEEK_HOLE from each end, and
 * checks that every step moves on (a SEEK_HOLE that returns the offset
 * SEEK_DATA just returned makes cp loop forever) and that the pieces read
 * give the file back. */
static void side_seek_walk(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	int fd = openat(D, "w", O_RDONLY);
	struct stat st;
	uint8_t *got, *want;
	off_t pos = 0, d, h;
	size_t size;
	int steps = 0;

	(void)c;
	(void)S;
	(void)arg;
	if (fd < 0 || fstat(fd, &st)) {
		bat_sb_printf(out, "open:%s", bat_ename(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	size = (size_t)st.st_size;
	got = calloc(1, size + 1);
	want = malloc(size + 1);
	if (!got || !want || pread(fd, want, size, 0) != (ssize_t)size) {
		bat_sb_printf(out, "read:%s", bat_ename(errno));
		goto out_free;
	}
	for (;;) {
		d = lseek(fd, pos, SEEK_DATA);
		if (d < 0)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h <= d || h > (off_t)size || ++steps > 100000) {
			bat_sb_printf(out, "stuck:%lld:%lld", (long long)d, (long long)h);
			goto out_free;
		}
		if (pread(fd, got + d, (size_t)(h - d), d) != h - d) {
			bat_sb_printf(out, "short-read:%lld", (long long)d);
			goto out_free;
		}
		pos = h;
	}
	if (errno != ENXIO)
		bat_sb_printf(out, "bad:%s", bat_ename(errno));
	else
		bat_sb_printf(out, "%s", memcmp(got, want, size) ? "differs" : "ok");
out_free:
	free(got);
	free(want);
	close(fd);
}

void chk_seek_data_hole(struct ctx *c)
{
	static const struct seek_q q[] = {
		{ SEEK_DATA, 0 }, { SEEK_DATA, 100 }, { SEEK_DATA, 4096 },
		{ SEEK_DATA, 8192 }, { SEEK_DATA, (1 << 20) - 1 },
		{ SEEK_DATA, (1 << 20) + 4096 }, { SEEK_DATA, (1 << 20) + 8192 },
		{ SEEK_DATA, 2 << 20 }, { SEEK_DATA, 3 << 20 },
		{ SEEK_HOLE, 0 }, { SEEK_HOLE, 100 }, { SEEK_HOLE, 1 << 20 },
		{ SEEK_HOLE, (2 << 20) - 1 }, { SEEK_HOLE, 2 << 20 },
		{ SEEK_HOLE, 3 << 20 }, { SEEK_DATA, -1 },
	};
	int fd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0644)));
	bat_pwrite2(c, "data at 0", fd, 0, 4096, 140);
	bat_pwrite2(c, "data at 1M", fd, 1 << 20, 8192, 141);
	BOTH(c, "truncate 2M", ftruncate(fd[S], 2 << 20));
	BOTH(c, "fsync", fsync(fd[S]));
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		const char *label = bat_label("%s %lld", q[i].whence == SEEK_DATA ? "SEEK_DATA" : "SEEK_HOLE",
					      (long long)q[i].off);

		if (!c->crypt)
			BOTH(c, label, lseek(fd[S], q[i].off, q[i].whence));
		else
			bat_cmp_side(c, label, side_seek_consistent, (void *)&q[i]);
	}
	BOTH(c, "close", close(fd[S]));
	/* A file without holes: data at 0, hole only at EOF. */
	REQUIRE(bat_make_file(c, "full", 10000, 142, 0644));
	REQUIRE(BOTH_OK(c, "open full", fd[S] = openat(D, "full", O_RDONLY)));
	BOTH(c, "full SEEK_DATA 0", lseek(fd[S], 0, SEEK_DATA));
	BOTH(c, "full SEEK_HOLE 0", lseek(fd[S], 0, SEEK_HOLE));
	BOTH(c, "full SEEK_HOLE 9999", lseek(fd[S], 9999, SEEK_HOLE));
	BOTH(c, "full SEEK_DATA 10000", lseek(fd[S], 10000, SEEK_DATA));
	BOTH(c, "close full", close(fd[S]));
	/* Small writes in a large hole, unaligned to units and (aes-gcm) to
	 * the backing blocks its 32-byte longer stored units straddle. */
	REQUIRE(BOTH_OK(c, "create w", fd[S] = openat(D, "w", O_CREAT | O_RDWR, 0644)));
	BOTH(c, "truncate w 20M", ftruncate(fd[S], 20 << 20));
	bat_pwrite2(c, "6 bytes at 9000000", fd, 9000000, 6, 143);
	bat_pwrite2(c, "4096 bytes at 5000001", fd, 5000001, 4096, 144);
	bat_pwrite2(c, "100 bytes near EOF", fd, (20 << 20) - 1000, 100, 145);
	BOTH(c, "fsync w", fsync(fd[S]));
	bat_cmp_side(c, "cp-style SEEK_DATA/SEEK_HOLE walk", side_seek_walk, NULL);
	BOTH(c, "close w", close(fd[S]));
}

/* copy_file_range until done; returns bytes copied or -1. */
static ssize_t copy_all(int in, off_t off_in, int out, off_t off_out, size_t len)
{
	size_t done = 0;

	while (done < len) {
		loff_t oi = off_in + (off_t)done, oo = off_out + (off_t)done;
		ssize_t k = copy_file_range(in, &oi, out, &oo, len - done, 0);

		if (k < 0)
			return -1;
		if (k == 0)
			break;
		done += (size_t)k;
	}
	return (ssize_t)done;
}

void chk_copy_file_range(struct ctx *c)
{
	int in[2], out[2];

	REQUIRE(bat_make_file(c, "src", 300000, 150, 0644));
	REQUIRE(bat_make_file(c, "dst", 9000, 151, 0644));
	REQUIRE(BOTH_OK(c, "open src", in[S] = openat(D, "src", O_RDONLY)));
	REQUIRE(BOTH_OK(c, "open dst", out[S] = openat(D, "dst", O_RDWR)));
	BOTH(c, "copy whole", copy_all(in[S], 0, out[S], 0, 300000));
	bat_cmp_fd_data(c, "dst after whole", out);
	BOTH(c, "copy unaligned", copy_all(in[S], 1000 + 7, out[S], 5555, 70001));
	bat_cmp_fd_data(c, "dst after unaligned", out);
	BOTH(c, "copy past src EOF", copy_all(in[S], 299990, out[S], 400000, 100));
	bat_cmp_fd_data(c, "dst after past EOF", out);
	BOTH(c, "copy creating hole", copy_all(in[S], 17, out[S], 1 << 20, 4096));
	bat_cmp_fd_data(c, "dst after hole", out);
	BOTH(c, "copy from EOF", copy_all(in[S], 300000, out[S], 0, 10));
	BOTH(c, "copy overlapping same file", ({
		loff_t a = 0, b = 100;
		copy_file_range(out[S], &a, out[S], &b, 1000, 0);
	}));
	BOTH(c, "copy bad flags", ({
		loff_t a = 0, b = 0;
		copy_file_range(in[S], &a, out[S], &b, 10, 1);
	}));
	BOTH(c, "copy into O_RDONLY", ({
		loff_t a = 0, b = 0;
		copy_file_range(out[S], &a, in[S], &b, 10, 0);
	}));
	/* Small copies inside one file, non-overlapping. */
	BOTH(c, "copy within file", copy_all(out[S], 0, out[S], 500000, 4097));
	bat_cmp_fd_data(c, "dst after within", out);
	BOTH(c, "close src", close(in[S]));
	BOTH(c, "close dst", close(out[S]));
	bat_cmp_data(c, "dst fresh read", "dst");
	bat_cmp_stat(c, "dst stat", "dst", 0);
}

/* Offsets beyond 32 bits and near the backing filesystem's limits (unit
 * index and tweak arithmetic must not wrap). */
void chk_large_offsets(struct ctx *c)
{
	static const off_t offs[] = {
		(1LL << 32) - 1, (1LL << 32) + 4093, 5LL << 30, (1LL << 40) + 3,
	};
	int fd[2];

	REQUIRE(BOTH_OK(c, "create", fd[S] = openat(D, "f", O_CREAT | O_RDWR, 0644)));
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		bat_pwrite2(c, bat_label("pwrite at %lld", (long long)offs[i]), fd, offs[i], 5000, 230 + i);
		bat_cmp_fstat(c, bat_label("fstat after %lld", (long long)offs[i]), fd, 0);
		bat_cmp_pread(c, bat_label("pread around %lld", (long long)offs[i]), fd, offs[i] - 100, 5200);
	}
	bat_cmp_pread(c, "pread earlier data again", fd, (1LL << 32) - 50, 100);
	bat_cmp_pread(c, "pread hole at 3G", fd, 3LL << 30, 8192);
	BOTH(c, "ftruncate 2^44", ftruncate(fd[S], 1LL << 44));
	bat_cmp_fstat(c, "fstat after 2^44", fd, 0);
	BOTH(c, "ftruncate 2^40+1", ftruncate(fd[S], (1LL << 40) + 1));
	bat_cmp_pread(c, "tail after cut", fd, (1LL << 40) - 10, 100);
	BOTH(c, "lseek SEEK_END", lseek(fd[S], 0, SEEK_END));
	if (c->gcm) {
		/* aes-gcm's stored size must fit an off_t: plaintext ends 0.8 % short of it. */
		struct res x[2];

		EACH_SIDE(x, pwrite(fd[S], "x", 1, INT64_MAX - 1));
		bat_cmp_res_alt(c, "pwrite at 2^63-2", x, EFBIG);
	} else {
		BOTH(c, "pwrite at 2^63-2", pwrite(fd[S], "x", 1, INT64_MAX - 1));
	}
	BOTH(c, "ftruncate 2^62", ftruncate(fd[S], 1LL << 62));
	bat_cmp_fstat(c, "fstat final", fd, 0);
	BOTH(c, "close", close(fd[S]));
}
