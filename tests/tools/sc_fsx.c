// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sc_fsx.c - an fsx-like random-operation exerciser for one file.
 *
 * It drives one file (plus FILE.src, the source of copy_file_range) through
 * random writes, reads, truncates, fallocates, shared-mmap writes and reads,
 * copy_file_range, fsync and close/reopen with varying open flags (O_APPEND,
 * O_WRONLY, and with -D unaligned O_DIRECT), and keeps
 * an in-memory model of both files.  Every read is checked against the
 * model, st_size is checked after every operation, and the XXH3 of the whole
 * file is compared with the model's every -c operations and at the end.
 *
 * Offsets and lengths cluster where an encrypting layer does its arithmetic:
 * around data-unit boundaries (k*bs +- 0..17), the 16-byte tail rule (file
 * sizes 0..40 and k*bs + 1..15) and the current end of file, mixed with
 * uniform random values.
 *
 * Every operation is fully described by one log record (its data comes from
 * a per-operation seed), so a run is reproducible from its seed, and a
 * failing run writes a log that `sc_fsx -R LOG FILE` replays exactly.
 *
 * Exit status: 0 all checks passed, 1 a check or a system call failed,
 * 2 bad command line or unreadable log.  With -F (self-test) 0 means the
 * injected damage was detected, 1 that it was not.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <xxhash.h>

#include "sc_rand.h"
#include "sc_tool.h"

enum op_type {
	OP_WRITE, OP_READ, OP_TRUNCATE, OP_FALLOC, OP_MAPWRITE, OP_MAPREAD,
	OP_COPY, OP_FSYNC, OP_REOPEN, OP_SRCWRITE, OP_CHECK, OP_NR
};

static const char *const op_names[OP_NR] = {
	[OP_WRITE] = "write",	[OP_READ] = "read",	[OP_TRUNCATE] = "truncate",
	[OP_FALLOC] = "fallocate", [OP_MAPWRITE] = "mapwrite", [OP_MAPREAD] = "mapread",
	[OP_COPY] = "copy",	[OP_FSYNC] = "fsync",	[OP_REOPEN] = "reopen",
	[OP_SRCWRITE] = "srcwrite", [OP_CHECK] = "check",
};

/* fallocate modes, indexed by op.arg of OP_FALLOC */
#define NR_FALLOC 5
static const int falloc_modes[NR_FALLOC] = {
	0,
	FALLOC_FL_KEEP_SIZE,
	FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	FALLOC_FL_ZERO_RANGE,
	FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
};
static const char *const falloc_names[NR_FALLOC] = {
	"0", "KEEP_SIZE", "PUNCH_HOLE|KEEP_SIZE", "ZERO_RANGE", "ZERO_RANGE|KEEP_SIZE",
};

/* open modes, indexed by op.arg of OP_REOPEN */
#define NR_OPEN 5
static const int open_flags[NR_OPEN] = {
	O_RDWR, O_RDWR | O_APPEND, O_WRONLY, O_WRONLY | O_APPEND, O_RDWR | O_DIRECT,
};
static const char *const open_names[NR_OPEN] = {
	"O_RDWR", "O_RDWR|O_APPEND", "O_WRONLY", "O_WRONLY|O_APPEND", "O_RDWR|O_DIRECT",
};

/*
 * One operation.  off/len: the file range (copy: destination range; write
 * in append mode: off is ignored, the data goes to EOF).  off2: copy source
 * offset.  arg: fallocate mode / open mode / fdatasync / msync flag.
 * dseed: seed of the data written.
 */
struct op {
	uint64_t	off;
	uint64_t	len;
	uint64_t	off2;
	uint64_t	dseed;
	uint32_t	arg;
	uint8_t		type;
};

struct fsx {
	const char	*path;
	char		*src_path;
	const char	*logpath;
	int		fd;		/* the file, opened with open_flags[mode] */
	int		rfd;		/* readable fd: fd, or an O_RDONLY one */
	int		sfd;		/* FILE.src, O_RDWR */
	unsigned	mode;
	uint8_t		*model;
	size_t		size;
	uint8_t		*smodel;
	size_t		ssize;
	uint32_t	*writer;	/* per byte: 1 + number of the op that last set it */
	uint8_t		*buf;		/* data to write / data read */
	uint8_t		*buf2;
	size_t		maxsize;
	size_t		maxlen;
	size_t		bs;
	size_t		pagesize;
	unsigned	check_every;
	uint64_t	seed;
	uint64_t	rng;
	struct op	*ops;
	size_t		nops;
	size_t		cap;
	size_t		cur;		/* index of the op being run */
	bool		falloc_off[NR_FALLOC];
	bool		copy_off;
	bool		verbose;
	bool		direct;		/* -D: O_DIRECT opens too */
	size_t		inject_at;	/* -F: corrupt the file after this op (self-test) */
	bool		injected;
	unsigned long	count[OP_NR];
	double		secs[OP_NR];	/* time spent per op type, for tuning */
};

static sigjmp_buf map_fault_jmp;
static volatile sig_atomic_t map_fault_armed;

static void map_fault(int sig)
{
	if (map_fault_armed)
		siglongjmp(map_fault_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static uint64_t rnd(struct fsx *f, uint64_t n)
{
	return sc_rand_below(&f->rng, n);
}

static void fill(uint8_t *p, size_t len, uint64_t dseed)
{
	sc_rand_fill(&dseed, p, len);
}

static void op_str(const struct op *o, char *s, size_t n)
{
	switch (o->type) {
	case OP_FALLOC:
		snprintf(s, n, "fallocate off=%" PRIu64 " len=%" PRIu64 " mode=%s",
			 o->off, o->len, falloc_names[o->arg]);
		break;
	case OP_REOPEN:
		snprintf(s, n, "reopen %s", open_names[o->arg]);
		break;
	case OP_COPY:
		snprintf(s, n, "copy src_off=%" PRIu64 " dst_off=%" PRIu64 " len=%" PRIu64,
			 o->off2, o->off, o->len);
		break;
	case OP_FSYNC:
		snprintf(s, n, "%s", o->arg ? "fdatasync" : "fsync");
		break;
	case OP_CHECK:
		snprintf(s, n, "check (whole-file XXH3)");
		break;
	case OP_TRUNCATE:
		snprintf(s, n, "truncate size=%" PRIu64, o->len);
		break;
	case OP_MAPWRITE:
		snprintf(s, n, "mapwrite off=%" PRIu64 " len=%" PRIu64 "%s",
			 o->off, o->len, o->arg ? " +msync" : "");
		break;
	default:
		snprintf(s, n, "%s off=%" PRIu64 " len=%" PRIu64,
			 op_names[o->type], o->off, o->len);
	}
}

/* Writes the op log; returns 0 or -1 (reported). */
static int write_log(struct fsx *f, size_t upto)
{
	FILE *lf;
	size_t i;

	if (!f->logpath)
		return 0;
	lf = fopen(f->logpath, "w");
	if (!lf) {
		fprintf(stderr, "sc_fsx: %s: %s\n", f->logpath, strerror(errno));
		return -1;
	}
	fprintf(lf, "# sc_fsx v1 seed=%" PRIu64 " bs=%zu maxsize=%zu maxlen=%zu\n",
		f->seed, f->bs, f->maxsize, f->maxlen);
	fprintf(lf, "# type off len off2 arg dseed\n");
	for (i = 0; i < upto && i < f->nops; i++) {
		const struct op *o = &f->ops[i];

		fprintf(lf, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %#" PRIx64 "\n",
			op_names[o->type], o->off, o->len, o->off2, o->arg, o->dseed);
	}
	if (fclose(lf)) {
		fprintf(stderr, "sc_fsx: %s: %s\n", f->logpath, strerror(errno));
		return -1;
	}
	return 0;
}

static void fail(struct fsx *f, const char *fmt, ...)
{
	char s[160];
	va_list ap;
	size_t i;

	fflush(stdout);
	op_str(&f->ops[f->cur], s, sizeof(s));
	fprintf(stderr, "sc_fsx: FAILED at op %zu (%s), seed %" PRIu64 ": ",
		f->cur + 1, s, f->seed);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fprintf(stderr, "sc_fsx: last operations:\n");
	for (i = f->cur > 12 ? f->cur - 12 : 0; i <= f->cur; i++) {
		op_str(&f->ops[i], s, sizeof(s));
		fprintf(stderr, "  %6zu %s\n", i + 1, s);
	}
	if (write_log(f, f->cur + 1) == 0 && f->logpath)
		fprintf(stderr, "sc_fsx: op log written; replay with: sc_fsx -R %s %s\n",
			f->logpath, f->path);
	if (f->injected) {
		printf("sc_fsx: self-test passed: the injected damage was detected\n");
		exit(0);
	}
	exit(1);
}

static void syserr(struct fsx *f, const char *call)
{
	fail(f, "%s: %s", call, strerror(errno));
}


/*
 * Compares len bytes read at file offset off with the model; on a mismatch
 * reports the first differing offset, how many bytes differ, which op last
 * wrote that byte, and a hex window, then fails.
 */
static void verify(struct fsx *f, const uint8_t *got, size_t off, size_t len,
		   const char *what)
{
	const uint8_t *want = f->model + off;
	size_t first, last, ndiff = 0, i, from, to;
	uint32_t w;

	if (memcmp(got, want, len) == 0)
		return;
	for (first = 0; got[first] == want[first]; first++)
		;
	last = first;
	for (i = first; i < len; i++)
		if (got[i] != want[i]) {
			ndiff++;
			last = i;
		}
	from = first > 16 ? (first - 16) & ~(size_t)15 : 0;
	to = from + 48 < len ? from + 48 : len;
	fprintf(stderr, "sc_fsx: %s mismatch: first difference at file offset %zu "
		"(unit %zu + %zu), %zu bytes differ up to offset %zu\n",
		what, off + first, (off + first) / f->bs, (off + first) % f->bs,
		ndiff, off + last);
	w = f->writer[off + first];
	if (w) {
		char s[160];

		op_str(&f->ops[w - 1], s, sizeof(s));
		fprintf(stderr, "sc_fsx: offset %zu was last set by op %u (%s)\n",
			off + first, w, s);
	} else {
		fprintf(stderr, "sc_fsx: offset %zu was never written (expected zero)\n",
			off + first);
	}
	sc_hexrow("expected", want, off, from, to, first);
	sc_hexrow("got", got, off, from, to, first);
	fail(f, "%s: data mismatch at offset %zu", what, off + first);
}

static void set_writer(struct fsx *f, size_t off, size_t len)
{
	uint32_t w = (uint32_t)(f->cur + 1);
	size_t i;

	for (i = 0; i < len; i++)
		f->writer[off + i] = w;
}

/* Grows the model with zeros up to newsize (a no-op when not growing). */
static void model_grow(struct fsx *f, size_t newsize)
{
	if (newsize <= f->size)
		return;
	memset(f->model + f->size, 0, newsize - f->size);
	set_writer(f, f->size, newsize - f->size);
	f->size = newsize;
}

static void model_zero(struct fsx *f, size_t off, size_t len)
{
	if (off >= f->size)
		return;
	if (off + len > f->size)
		len = f->size - off;
	memset(f->model + off, 0, len);
	set_writer(f, off, len);
}

static void check_size(struct fsx *f)
{
	struct stat st;

	if (fstat(f->fd, &st))
		syserr(f, "fstat");
	if ((size_t)st.st_size != f->size)
		fail(f, "st_size is %lld, model size is %zu", (long long)st.st_size, f->size);
}

static void do_open(struct fsx *f, unsigned mode)
{
	if (f->rfd >= 0 && f->rfd != f->fd)
		close(f->rfd);
	if (f->fd >= 0)
		close(f->fd);
	f->rfd = f->fd = -1;
	f->mode = mode;
	f->fd = open(f->path, open_flags[mode]);
	if (f->fd < 0)
		syserr(f, "open");
	if ((open_flags[mode] & O_ACCMODE) == O_RDWR) {
		f->rfd = f->fd;
	} else {
		f->rfd = open(f->path, O_RDONLY);
		if (f->rfd < 0)
			syserr(f, "open O_RDONLY");
	}
}

static void op_write(struct fsx *f, const struct op *o)
{
	size_t off = o->off, len = o->len;
	ssize_t n;

	fill(f->buf, len, o->dseed);
	if (open_flags[f->mode] & O_APPEND) {
		/* pwrite() on an O_APPEND fd appends on Linux anyway; say what we mean */
		off = f->size;
		n = write(f->fd, f->buf, len);
	} else {
		n = pwrite(f->fd, f->buf, len, off);
	}
	if (n < 0)
		syserr(f, "write");
	if ((size_t)n != len)
		fail(f, "short write: %zd of %zu bytes", n, len);
	if (off + len > f->maxsize)
		fail(f, "bad log: write beyond maxsize");
	model_grow(f, off);
	memcpy(f->model + off, f->buf, len);
	set_writer(f, off, len);
	if (off + len > f->size)
		f->size = off + len;
}

static void op_read(struct fsx *f, const struct op *o)
{
	size_t want = 0, got = 0;
	ssize_t n;

	if (o->off < f->size)
		want = f->size - o->off < o->len ? f->size - o->off : o->len;
	/* read until EOF or len: a short read is not an error, a wrong total is */
	while (got < o->len) {
		n = pread(f->rfd, f->buf + got, o->len - got, o->off + got);
		if (n < 0)
			syserr(f, "pread");
		if (n == 0)
			break;
		got += n;
	}
	if (got != want)
		fail(f, "read returned %zu bytes, expected %zu (size %zu)", got, want, f->size);
	verify(f, f->buf, o->off, got, "read");
}

static void op_truncate(struct fsx *f, const struct op *o)
{
	if (ftruncate(f->fd, o->len))
		syserr(f, "ftruncate");
	if (o->len > f->size)
		model_grow(f, o->len);
	else
		f->size = o->len;
}

static void op_falloc(struct fsx *f, const struct op *o)
{
	size_t end = o->off + o->len;
	int mode = falloc_modes[o->arg];

	if (f->falloc_off[o->arg])
		return;
	if (fallocate(f->fd, mode, o->off, o->len)) {
		if (errno == EOPNOTSUPP) {
			printf("sc_fsx: fallocate mode %s: EOPNOTSUPP, mode disabled\n",
			       falloc_names[o->arg]);
			f->falloc_off[o->arg] = true;
			return;
		}
		syserr(f, "fallocate");
	}
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		model_zero(f, o->off, o->len);
	if (!(mode & FALLOC_FL_KEEP_SIZE))
		model_grow(f, end);
}

static void op_mapwrite(struct fsx *f, const struct op *o)
{
	size_t pg = o->off & ~(f->pagesize - 1);
	size_t maplen = o->off + o->len - pg;
	uint8_t *p;

	if ((open_flags[f->mode] & O_ACCMODE) != O_RDWR)
		fail(f, "bad log: mapwrite needs an O_RDWR open");
	fill(f->buf, o->len, o->dseed);
	/* a store past EOF would SIGBUS: grow first, as fsx does */
	if (o->off + o->len > f->size) {
		if (ftruncate(f->fd, o->off + o->len))
			syserr(f, "ftruncate (mapwrite)");
		model_grow(f, o->off + o->len);
	}
	p = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, pg);
	if (p == MAP_FAILED)
		syserr(f, "mmap");
	if (sigsetjmp(map_fault_jmp, 1)) {
		map_fault_armed = 0;
		fail(f, "SIGBUS/SIGSEGV storing into the shared mapping");
	}
	map_fault_armed = 1;
	memcpy(p + (o->off - pg), f->buf, o->len);
	map_fault_armed = 0;
	if (o->arg && msync(p, maplen, MS_SYNC))
		syserr(f, "msync");
	if (munmap(p, maplen))
		syserr(f, "munmap");
	memcpy(f->model + o->off, f->buf, o->len);
	set_writer(f, o->off, o->len);
}

static void op_mapread(struct fsx *f, const struct op *o)
{
	size_t pg = o->off & ~(f->pagesize - 1);
	size_t maplen = o->off + o->len - pg;
	uint8_t *p;

	if (o->off + o->len > f->size)
		fail(f, "bad log: mapread beyond EOF");
	p = mmap(NULL, maplen, PROT_READ, MAP_SHARED, f->rfd, pg);
	if (p == MAP_FAILED)
		syserr(f, "mmap");
	if (sigsetjmp(map_fault_jmp, 1)) {
		map_fault_armed = 0;
		fail(f, "SIGBUS/SIGSEGV loading from the shared mapping");
	}
	map_fault_armed = 1;
	memcpy(f->buf, p + (o->off - pg), o->len);
	map_fault_armed = 0;
	if (munmap(p, maplen))
		syserr(f, "munmap");
	verify(f, f->buf, o->off, o->len, "mapread");
}

static void op_copy(struct fsx *f, const struct op *o)
{
	loff_t soff = o->off2, doff = o->off;
	size_t done = 0;
	ssize_t n;

	if (f->copy_off)
		return;
	if (o->off2 + o->len > f->ssize)
		fail(f, "bad log: copy beyond source EOF");
	while (done < o->len) {
		n = copy_file_range(f->sfd, &soff, f->fd, &doff, o->len - done, 0);
		if (n < 0) {
			if (done == 0 && (errno == EOPNOTSUPP || errno == EXDEV ||
					  errno == ENOSYS)) {
				printf("sc_fsx: copy_file_range: %s, copies disabled\n",
				       strerror(errno));
				f->copy_off = true;
				return;
			}
			syserr(f, "copy_file_range");
		}
		if (n == 0)
			fail(f, "copy_file_range returned 0 after %zu of %" PRIu64 " bytes",
			     done, o->len);
		done += n;
	}
	model_grow(f, o->off);
	memcpy(f->model + o->off, f->smodel + o->off2, o->len);
	set_writer(f, o->off, o->len);
	if (o->off + o->len > f->size)
		f->size = o->off + o->len;
}

static void op_srcwrite(struct fsx *f, const struct op *o)
{
	ssize_t n;

	fill(f->buf, o->len, o->dseed);
	n = pwrite(f->sfd, f->buf, o->len, o->off);
	if (n < 0)
		syserr(f, "pwrite (source file)");
	if ((size_t)n != o->len)
		fail(f, "short write to the source file: %zd of %" PRIu64, n, o->len);
	sc_model_write(f->smodel, &f->ssize, o->off, f->buf, o->len);
}

/* Reads the whole file and the source file and compares them with the models. */
static void op_check(struct fsx *f)
{
	size_t got = 0;
	ssize_t n;
	uint8_t extra;

	while (got < f->size) {
		n = pread(f->rfd, f->buf2 + got, f->size - got, got);
		if (n < 0)
			syserr(f, "pread (check)");
		if (n == 0)
			fail(f, "check: EOF at %zu, model size %zu", got, f->size);
		got += n;
	}
	n = pread(f->rfd, &extra, 1, f->size);
	if (n != 0)
		fail(f, "check: pread at EOF (%zu) returned %zd, expected 0", f->size, n);
	if (XXH3_64bits(f->buf2, f->size) != XXH3_64bits(f->model, f->size))
		verify(f, f->buf2, 0, f->size, "check");

	for (got = 0; got < f->ssize; got += n) {
		n = pread(f->sfd, f->buf2 + got, f->ssize - got, got);
		if (n <= 0)
			fail(f, "check: source file read at %zu: %s", got,
			     n ? strerror(errno) : "early EOF");
	}
	if (memcmp(f->buf2, f->smodel, f->ssize))
		fail(f, "check: the source file differs from its model");
}

/*
 * Self-test of the checks (-F): flip one byte of the file behind the model's
 * back, through a separate fd, as a corrupting layer would, then check
 * the whole file at once (later ops could overwrite the byte).  The run
 * must fail here.
 */
static void op_check(struct fsx *f);

static void inject(struct fsx *f)
{
	size_t off = f->size / 2;
	uint8_t b = f->model[off] ^ 0x5a;
	int fd = open(f->path, O_WRONLY);

	if (fd < 0 || pwrite(fd, &b, 1, off) != 1 || close(fd))
		syserr(f, "inject");
	printf("sc_fsx: injected a corrupt byte at offset %zu after op %zu\n",
	       off, f->cur + 1);
	f->inject_at = 0;
	f->injected = true;
	op_check(f);
	fail(f, "self-test: the injected damage was NOT detected");
}

static void run_op(struct fsx *f)
{
	const struct op *o = &f->ops[f->cur];
	struct timespec t0, t1;

	if (f->verbose) {
		char s[160];

		op_str(o, s, sizeof(s));
		printf("%zu %s\n", f->cur + 1, s);
	}
	f->count[o->type]++;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	switch (o->type) {
	case OP_WRITE:		op_write(f, o); break;
	case OP_READ:		op_read(f, o); break;
	case OP_TRUNCATE:	op_truncate(f, o); break;
	case OP_FALLOC:		op_falloc(f, o); break;
	case OP_MAPWRITE:	op_mapwrite(f, o); break;
	case OP_MAPREAD:	op_mapread(f, o); break;
	case OP_COPY:		op_copy(f, o); break;
	case OP_SRCWRITE:	op_srcwrite(f, o); break;
	case OP_CHECK:		op_check(f); break;
	case OP_FSYNC:
		if ((o->arg ? fdatasync(f->fd) : fsync(f->fd)))
			syserr(f, o->arg ? "fdatasync" : "fsync");
		break;
	case OP_REOPEN:
		do_open(f, o->arg);
		break;
	}
	check_size(f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	f->secs[o->type] += (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (f->inject_at && f->cur + 1 >= f->inject_at && f->size)
		inject(f);
}

/* ---- generation of random operations ---- */

static int64_t jitter(struct fsx *f, int64_t max)
{
	return (int64_t)rnd(f, 2 * max + 1) - max;
}

static size_t clamp(int64_t v, size_t lo, size_t hi)
{
	if (v < (int64_t)lo)
		return lo;
	if (v > (int64_t)hi)
		return hi;
	return (size_t)v;
}

/* An offset in [0, limit], clustered around unit boundaries, EOF and the tail rule. */
static size_t gen_off(struct fsx *f, size_t limit)
{
	size_t units = limit / f->bs + 1;

	switch (rnd(f, 10)) {
	case 0: case 1: case 2:
		return rnd(f, limit + 1);
	case 3: case 4:
		return clamp((int64_t)(rnd(f, units) * f->bs) + jitter(f, 17), 0, limit);
	case 5: case 6:
		return clamp((int64_t)f->size + jitter(f, 17), 0, limit);
	case 7:
		return clamp(rnd(f, 41), 0, limit);
	case 8:
		return clamp(rnd(f, units) * f->bs + 1 + rnd(f, 15), 0, limit);
	default:	/* 16-byte cipher-block boundaries inside a unit */
		return clamp((int64_t)(rnd(f, limit / 16 + 1) * 16) + jitter(f, 1), 0, limit);
	}
}

/* A length in [1, max], clustered around unit sizes and ends of units. */
static size_t gen_len(struct fsx *f, size_t off, size_t max)
{
	int64_t v;

	if (max == 0)
		return 0;
	switch (rnd(f, 9)) {
	case 0: case 1: case 2:
		v = 1 + rnd(f, max);
		break;
	case 3:
		v = 1 + rnd(f, 40);
		break;
	case 4:
		v = (int64_t)f->bs + jitter(f, 17);
		break;
	case 5:
		v = (int64_t)((1 + rnd(f, f->maxlen / f->bs + 1)) * f->bs) + jitter(f, 17);
		break;
	case 6:
		v = (int64_t)(16 * (1 + rnd(f, 8))) + jitter(f, 1);
		break;
	default:	/* up to the next unit boundary, give or take */
		v = (int64_t)(f->bs - off % f->bs) + jitter(f, 2);
		break;
	}
	return clamp(v, 1, max);
}

/* A new file size for truncate. */
static size_t gen_size(struct fsx *f)
{
	size_t units = f->maxsize / f->bs + 1;

	switch (rnd(f, 6)) {
	case 0:
		return rnd(f, 41);
	case 1:
		return clamp(rnd(f, units) * f->bs + 1 + rnd(f, 15), 0, f->maxsize);
	case 2:
		return clamp((int64_t)(rnd(f, units) * f->bs) + jitter(f, 17), 0, f->maxsize);
	case 3:
		return clamp((int64_t)f->size + jitter(f, 17), 0, f->maxsize);
	default:
		return rnd(f, f->maxsize + 1);
	}
}

static void gen_op(struct fsx *f, struct op *o, size_t idx)
{
	bool append = open_flags[f->mode] & O_APPEND;
	bool rdwr = (open_flags[f->mode] & O_ACCMODE) == O_RDWR;
	unsigned r;

	memset(o, 0, sizeof(*o));
	if (f->check_every && (idx + 1) % f->check_every == 0) {
		o->type = OP_CHECK;
		return;
	}
	/*
	 * Weights in 1/1000.  Over FUSE a round trip costs ~70 us on the CI
	 * box; truncate and mapwrite cost 1-2 ms each and fsync 3-4 ms on a
	 * loop-mounted ext4 (ordered truncate, msync and fsync wait for
	 * writeback, on plain ext4 too), so they are rarer than in fsx to keep
	 * 100 000 ops well under a minute while still running hundreds to
	 * thousands of each.
	 */
	r = rnd(f, 1000);
	if (r < 300)
		o->type = OP_WRITE;
	else if (r < 570)
		o->type = OP_READ;
	else if (r < 615)
		o->type = OP_TRUNCATE;
	else if (r < 710)
		o->type = OP_FALLOC;
	else if (r < 760)
		o->type = OP_MAPWRITE;
	else if (r < 850)
		o->type = OP_MAPREAD;
	else if (r < 945)
		o->type = OP_COPY;
	else if (r < 950)
		o->type = OP_FSYNC;
	else if (r < 970)
		o->type = OP_REOPEN;
	else
		o->type = OP_SRCWRITE;

	/* steer around what the current state cannot do */
	if (o->type == OP_MAPWRITE && !rdwr)
		o->type = OP_WRITE;
	if (o->type == OP_COPY && (append || f->copy_off))
		o->type = OP_WRITE;
	if ((o->type == OP_MAPREAD) && f->size == 0)
		o->type = OP_WRITE;
	if (o->type == OP_WRITE && append && f->size >= f->maxsize)
		o->type = OP_TRUNCATE;

	switch (o->type) {
	case OP_WRITE:
		o->dseed = sc_splitmix64(&f->rng);
		if (append) {
			o->off = f->size;
			o->len = gen_len(f, o->off, f->maxsize - f->size < f->maxlen ?
					 f->maxsize - f->size : f->maxlen);
			break;
		}
		/* fall through */
	case OP_MAPWRITE:
		o->dseed = sc_splitmix64(&f->rng);
		o->off = gen_off(f, f->maxsize - 1);
		o->len = gen_len(f, o->off, f->maxsize - o->off < f->maxlen ?
				 f->maxsize - o->off : f->maxlen);
		o->arg = o->type == OP_MAPWRITE ? rnd(f, 4) == 0 : 0;
		break;
	case OP_READ:
		/* mostly inside the file, sometimes across or past EOF */
		o->off = gen_off(f, rnd(f, 8) ? (f->size ? f->size - 1 : 0) : f->maxsize);
		o->len = gen_len(f, o->off, f->maxlen);
		break;
	case OP_MAPREAD:
		o->off = gen_off(f, f->size - 1);
		o->len = gen_len(f, o->off, f->size - o->off < f->maxlen ?
				 f->size - o->off : f->maxlen);
		break;
	case OP_TRUNCATE:
		o->len = gen_size(f);
		break;
	case OP_FALLOC:
		o->arg = rnd(f, NR_FALLOC);
		o->off = gen_off(f, f->maxsize - 1);
		o->len = gen_len(f, o->off, f->maxsize - o->off < f->maxlen ?
				 f->maxsize - o->off : f->maxlen);
		break;
	case OP_COPY:
		o->off2 = rnd(f, 2) ? gen_off(f, f->ssize - 1) : rnd(f, f->ssize);
		o->off = gen_off(f, f->maxsize - 1);
		o->len = gen_len(f, o->off, f->ssize - o->off2);
		if (o->len > f->maxsize - o->off)
			o->len = f->maxsize - o->off;
		break;
	case OP_FSYNC:
		o->arg = rnd(f, 2);
		break;
	case OP_REOPEN:
		/* O_DIRECT ops cost ~3x (no page cache, and they invalidate it): 1 in 20 */
		r = rnd(f, f->direct ? 200 : 190);
		o->arg = r < 95 ? 0 : r < 133 ? 1 : r < 171 ? 2 : r < 190 ? 3 : 4;
		break;
	case OP_SRCWRITE:
		o->dseed = sc_splitmix64(&f->rng);
		o->off = rnd(f, f->maxsize);
		o->len = gen_len(f, o->off, f->maxsize - o->off < f->maxlen ?
				 f->maxsize - o->off : f->maxlen);
		break;
	}
}

/* ---- replay ---- */

static int load_log(struct fsx *f, const char *path)
{
	char line[256], name[32];
	FILE *lf = fopen(path, "r");
	unsigned long lineno = 0;

	if (!lf) {
		fprintf(stderr, "sc_fsx: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!fgets(line, sizeof(line), lf) ||
	    sscanf(line, "# sc_fsx v1 seed=%" SCNu64 " bs=%zu maxsize=%zu maxlen=%zu",
		   &f->seed, &f->bs, &f->maxsize, &f->maxlen) != 4) {
		fprintf(stderr, "sc_fsx: %s: not an sc_fsx v1 log\n", path);
		fclose(lf);
		return -1;
	}
	lineno = 1;
	while (fgets(line, sizeof(line), lf)) {
		struct op o = { 0 };
		unsigned t;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%31s %" SCNu64 " %" SCNu64 " %" SCNu64 " %u %" SCNx64,
			   name, &o.off, &o.len, &o.off2, &o.arg, &o.dseed) != 6)
			goto bad;
		for (t = 0; t < OP_NR && strcmp(name, op_names[t]); t++)
			;
		if (t == OP_NR)
			goto bad;
		o.type = t;
		if ((t == OP_FALLOC && o.arg >= NR_FALLOC) ||
		    (t == OP_REOPEN && o.arg >= NR_OPEN) ||
		    o.off > f->maxsize || o.len > f->maxsize || o.off2 > f->maxsize ||
		    (t != OP_READ && t != OP_TRUNCATE && o.off + o.len > f->maxsize) ||
		    (t == OP_COPY && o.off2 + o.len > f->maxsize))
			goto bad;	/* would run past the model's buffers */
		if (f->nops == f->cap) {
			f->cap = f->cap ? 2 * f->cap : 4096;
			f->ops = realloc(f->ops, f->cap * sizeof(*f->ops));
			if (!f->ops) {
				perror("sc_fsx");
				exit(1);
			}
		}
		f->ops[f->nops++] = o;
	}
	fclose(lf);
	if (!f->nops) {
		fprintf(stderr, "sc_fsx: %s: no operations\n", path);
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "sc_fsx: %s:%lu: bad record\n", path, lineno);
	fclose(lf);
	return -1;
}

static void usage(void)
{
	fprintf(stderr,
"usage: sc_fsx [-N ops] [-S seed] [-b block_size] [-l max_len] [-m max_size]\n"
"              [-c check_every] [-o logfile] [-v] [-D] FILE\n"
"       sc_fsx -R logfile [-o logfile] [-v] FILE\n"
"Random-operation exerciser: FILE and FILE.src are created (truncated).\n"
"  -N ops         operations to run (default 10000)\n"
"  -S seed        random seed (default: time and pid; printed at start)\n"
"  -b block_size  data unit size offsets cluster around (default 4096)\n"
"  -l max_len     largest single read/write/copy (default 65536)\n"
"  -m max_size    largest file size (default 262144)\n"
"  -c N           compare the whole file's XXH3 with the model every N ops\n"
"                 (default 500, 0 = only at the end)\n"
"  -o logfile     op log, written on failure (and at the end with -o)\n"
"                 (default /tmp/sc_fsx.<seed>.log, on failure only)\n"
"  -R logfile     replay a log instead of generating operations\n"
"  -v             print every operation\n"
"  -D             reopen with O_DIRECT too (unaligned: for FUSE mounts;\n"
"                 most local file systems refuse unaligned direct I/O)\n"
"  -F N           self-test: corrupt one byte of FILE after op N; exits 0\n"
"                 only if the checks catch it\n");
	exit(2);
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v == 0)
		usage();
	return (size_t)v;
}

int main(int argc, char **argv)
{
	struct fsx fx = { .fd = -1, .rfd = -1, .sfd = -1, .bs = 4096,
			  .maxlen = 65536, .maxsize = 262144, .check_every = 500 };
	struct fsx *f = &fx;
	const char *replay = NULL;
	bool user_log = false, seeded = false;
	unsigned long nops = 10000;
	struct timespec t0, t1;
	char deflog[64];
	size_t i;
	int c;

	while ((c = getopt(argc, argv, "N:S:b:l:m:c:o:R:F:vDh")) != -1) {
		switch (c) {
		case 'N': nops = parse_size(optarg); break;
		case 'S': f->seed = strtoull(optarg, NULL, 0); seeded = true; break;
		case 'b': f->bs = parse_size(optarg); break;
		case 'l': f->maxlen = parse_size(optarg); break;
		case 'm': f->maxsize = parse_size(optarg); break;
		case 'c': f->check_every = strcmp(optarg, "0") ? parse_size(optarg) : 0; break;
		case 'o': f->logpath = optarg; user_log = true; break;
		case 'R': replay = optarg; break;
		case 'v': f->verbose = true; break;
		case 'D': f->direct = true; break;
		case 'F': f->inject_at = parse_size(optarg); break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	f->path = argv[optind];
	if (replay && load_log(f, replay))
		return 2;
	if (!seeded && !replay)
		f->seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
	if (f->maxlen > f->maxsize)
		f->maxlen = f->maxsize;
	if (f->maxsize > UINT32_MAX || f->bs > f->maxsize) {
		fprintf(stderr, "sc_fsx: need block_size <= max_size < 4 GiB\n");
		return 2;
	}
	if (!f->logpath) {
		snprintf(deflog, sizeof(deflog), "/tmp/sc_fsx.%" PRIu64 ".log", f->seed);
		f->logpath = deflog;
	}
	f->pagesize = sysconf(_SC_PAGESIZE);
	f->model = calloc(f->maxsize, 1);
	f->smodel = calloc(f->maxsize, 1);
	f->writer = calloc(f->maxsize, sizeof(*f->writer));
	f->buf = malloc(f->maxsize);
	f->buf2 = malloc(f->maxsize);
	if (!replay) {
		f->cap = nops + 1;
		f->ops = calloc(f->cap, sizeof(*f->ops));
	}
	if (asprintf(&f->src_path, "%s.src", f->path) < 0 || !f->model || !f->smodel ||
	    !f->writer || !f->buf || !f->buf2 || !f->ops) {
		perror("sc_fsx");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGBUS, map_fault);
	signal(SIGSEGV, map_fault);

	printf("sc_fsx: seed=%" PRIu64 " file=%s ops=%lu bs=%zu maxsize=%zu maxlen=%zu%s%s\n",
	       f->seed, f->path, replay ? (unsigned long)f->nops : nops, f->bs,
	       f->maxsize, f->maxlen, replay ? " replay=" : "", replay ? replay : "");
	fflush(stdout);

	/* a fresh empty file, a source file of random content */
	f->cur = 0;
	if (!f->nops) {	/* so fail() has an op to print during setup */
		f->ops[0].type = OP_REOPEN;
	}
	c = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (c < 0 || close(c)) {
		fprintf(stderr, "sc_fsx: %s: %s\n", f->path, strerror(errno));
		return 1;
	}
	f->sfd = open(f->src_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (f->sfd < 0) {
		fprintf(stderr, "sc_fsx: %s: %s\n", f->src_path, strerror(errno));
		return 1;
	}
	f->ssize = f->maxsize / 2 + 13;
	fill(f->smodel, f->ssize, f->seed ^ 0x5c5c5c5c5c5c5c5cULL);
	if (pwrite(f->sfd, f->smodel, f->ssize, 0) != (ssize_t)f->ssize) {
		fprintf(stderr, "sc_fsx: %s: write failed\n", f->src_path);
		return 1;
	}
	f->rng = f->seed;
	do_open(f, 0);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (replay) {
		for (f->cur = 0; f->cur < f->nops; f->cur++)
			run_op(f);
	} else {
		/* the last op is always a whole-file check */
		for (f->cur = 0; f->cur < nops; f->cur++) {
			gen_op(f, &f->ops[f->cur], f->cur);
			if (f->cur == nops - 1)
				f->ops[f->cur] = (struct op){ .type = OP_CHECK };
			f->nops = f->cur + 1;
			run_op(f);
		}
	}
	f->cur = f->nops ? f->nops - 1 : 0;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (f->nops) {
		op_check(f);
		f->count[OP_CHECK]++;
	}
	if (user_log && !replay)
		write_log(f, f->nops);
	if (f->inject_at) {
		fprintf(stderr, "sc_fsx: self-test: the file never became non-empty after "
			"op %zu, nothing injected\n", f->inject_at);
		return 1;
	}

	printf("sc_fsx: %zu ops OK in %.2f s, final size %zu:", f->nops,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, f->size);
	for (i = 0; i < OP_NR; i++)
		printf(" %s=%lu", op_names[i], f->count[i]);
	printf("\nsc_fsx: seconds per op type (incl. fstat):");
	for (i = 0; i < OP_NR; i++)
		printf(" %s=%.2f", op_names[i], f->secs[i]);
	printf("\n");

	close(f->sfd);
	if (f->rfd != f->fd)
		close(f->rfd);
	close(f->fd);
	free(f->src_path);
	free(f->model);
	free(f->smodel);
	free(f->writer);
	free(f->buf);
	free(f->buf2);
	free(f->ops);
	return 0;
}
