// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sc_concur.c - concurrency test: many threads, one file and many files.
 *
 * Part one: T threads write and read ONE file at the same time.  Every
 * thread owns disjoint byte ranges ("stripes" of odd lengths: 1, 7, 333 and
 * bs+1 bytes, owner = stripe number % T), so every data unit is shared by
 * several threads and every write is an unaligned read-modify-write of a
 * unit other threads are writing too.  The model is still exact: a byte
 * holds what its owner last wrote.  During the run each thread re-reads
 * windows of the file and checks its own bytes; at the end the whole file
 * must equal the model.  A translator that lets two RMWs of one unit
 * interleave, or shares per-operation crypto state between threads, loses
 * other threads' bytes here.
 *
 * Part two: each thread creates, writes at unaligned offsets, truncates,
 * renames, hard-links (a second name, the first unlinked, the second
 * renamed back), reads and unlinks its own files in one shared directory;
 * at the end every file equals its model and the directory lists exactly
 * the files the models say exist.
 *
 * Exit status: 0 pass, 1 mismatch or system call failure (with offsets and
 * a hex window on stderr), 2 bad command line.  With -F (self-test) 0 means
 * the lost updates were detected, 1 that they were not.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sc_rand.h"
#include "sc_tool.h"

#define MAX_THREADS	64
#define FILES_PER_THREAD 8

struct region {
	size_t	start;
	size_t	end;
	size_t	stripe;		/* odd */
};

/* What all threads share; each thread writes only the model bytes it owns. */
struct shared {
	const char	*dir;
	char		*one_path;
	char		*many_dir;
	unsigned	nthreads;
	unsigned long	iters;
	size_t		bs;
	uint64_t	seed;
	struct region	reg[4];
	unsigned	nreg;
	size_t		one_size;
	uint8_t		*one_model;
	bool		racy_rmw;	/* -F self-test */
	int		one_flags;	/* extra open flags in part one (-D: O_DIRECT) */
};

struct mfile {
	uint8_t		*data;
	size_t		size;
	bool		exists;
};

struct worker {
	struct shared	*sh;
	unsigned	id;
	pthread_t	thread;
	uint64_t	rng;
	uint8_t		*buf;
	uint8_t		*buf2;
	size_t		bufsize;
	struct mfile	files[FILES_PER_THREAD];
	unsigned long	nwrites;
	unsigned long	nreads;
};

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static bool selftest;	/* -F: a detected mismatch is the expected outcome */

static uint64_t rnd(struct worker *w, uint64_t n)
{
	return sc_rand_below(&w->rng, n);
}

static void fill(struct worker *w, uint8_t *p, size_t len)
{
	sc_rand_fill(&w->rng, p, len);
}

#define die(...) sc_die("sc_concur: FAILED: ", __VA_ARGS__)

/* Byte owner in part one, or -1 past the end. */
static int owner(const struct shared *sh, size_t off)
{
	unsigned r;

	for (r = 0; r < sh->nreg; r++)
		if (off < sh->reg[r].end)
			return (int)(((off - sh->reg[r].start) / sh->reg[r].stripe) % sh->nthreads);
	return -1;
}


/*
 * After a mismatch at off: read the byte again through fd (the page cache,
 * if the file system uses one) and through a fresh O_DIRECT fd (straight
 * from the file system's daemon), so the report says whether the data
 * itself is wrong or only a cached copy was stale.
 */
static void reread(const char *path, int fd, size_t off, uint8_t want)
{
	size_t pg = 4096, a = off & ~(pg - 1);
	uint8_t b, *al = NULL;
	int dfd;

	if (fd >= 0 && pread(fd, &b, 1, off) == 1)
		fprintf(stderr, "  re-read through the same fd: 0x%02x (%s)\n", b,
			b == want ? "now right" : "still wrong");
	dfd = open(path, O_RDONLY | O_DIRECT);
	if (dfd < 0 || posix_memalign((void **)&al, pg, pg) ||
	    pread(dfd, al, pg, a) <= (ssize_t)(off - a)) {
		fprintf(stderr, "  re-read with O_DIRECT: not possible (%s)\n", strerror(errno));
	} else {
		fprintf(stderr, "  re-read with O_DIRECT (bypassing the page cache): 0x%02x (%s)\n",
			al[off - a], al[off - a] == want ? "right: a stale cached copy" :
			"wrong: the stored data is wrong");
	}
	free(al);
	if (dfd >= 0)
		close(dfd);
}

/*
 * Reports a mismatch between got and want (len bytes at file offset base of
 * path) at index first and exits; mask_sh, when set, gives the byte owners
 * printed beside the windows; fd (or -1) is re-read for the diagnosis.
 */
static __attribute__((noreturn)) void mismatch(const char *what, const char *path,
		const struct shared *mask_sh, size_t base, const uint8_t *want,
		const uint8_t *got, size_t len, size_t first, int fd)
{
	size_t i, ndiff = 0, last = first, from, to;

	pthread_mutex_lock(&report_lock);
	fflush(stdout);
	for (i = first; i < len; i++)
		if (got[i] != want[i] &&
		    (!mask_sh || owner(mask_sh, base + i) == owner(mask_sh, base + first))) {
			ndiff++;
			last = i;
		}
	fprintf(stderr, "sc_concur: %s: %s: first difference at offset %zu "
		"(unit %zu + %zu), %zu bytes differ up to offset %zu\n",
		what, path, base + first, (base + first) / (mask_sh ? mask_sh->bs : 4096),
		(base + first) % (mask_sh ? mask_sh->bs : 4096), ndiff, base + last);
	from = first > 16 ? (first - 16) & ~(size_t)15 : 0;
	to = from + 48 < len ? from + 48 : len;
	sc_hexrow("expected", want, base, from, to, first);
	sc_hexrow("got", got, base, from, to, first);
	if (mask_sh) {
		fprintf(stderr, "  %-8s %8zu:", "owner", base + from);
		for (i = from; i < to; i++)
			fprintf(stderr, "%s%2d", i == first ? "[" : (i == first + 1 ? "]" : " "),
				owner(mask_sh, base + i));
		fputc('\n', stderr);
	}
	reread(path, fd, base + first, want[first]);
	if (selftest) {
		printf("sc_concur: self-test passed: the lost updates were detected\n");
		exit(0);
	}
	die("%s: data mismatch in %s at offset %zu", what, path, base + first);
}

static void pread_full(int fd, uint8_t *p, size_t len, size_t off, const char *path,
		       size_t *got)
{
	ssize_t n;

	*got = 0;
	while (*got < len) {
		n = pread(fd, p + *got, len - *got, off + *got);
		if (n < 0)
			die("pread %s off=%zu len=%zu: %s", path, off + *got, len - *got,
			    strerror(errno));
		if (n == 0)
			break;
		*got += n;
	}
}

static void pwrite_full(int fd, const uint8_t *p, size_t len, size_t off, const char *path)
{
	ssize_t n = pwrite(fd, p, len, off);

	if (n < 0)
		die("pwrite %s off=%zu len=%zu: %s", path, off, len, strerror(errno));
	if ((size_t)n != len)
		die("pwrite %s off=%zu len=%zu: short write of %zd", path, off, len, n);
}

/* ---- part one: one file ---- */

/*
 * The -F self-test: write [a, b) the way a broken translator would, by an
 * unlocked read-modify-write of the whole units around it, with a pause in
 * the window so that other threads' updates to those units get lost.  The
 * run must then fail.
 */
static void racy_write(struct worker *w, int fd, size_t a, size_t b)
{
	size_t bs = w->sh->bs, ua = a - a % bs, ub = (b + bs - 1) / bs * bs, got;
	uint8_t *unit = malloc(ub - ua);

	if (!unit)
		die("out of memory");
	if (ub > w->sh->one_size)
		ub = w->sh->one_size;
	pread_full(fd, unit, ub - ua, ua, w->sh->one_path, &got);
	usleep(50);
	memcpy(unit + (a - ua), w->buf, b - a);
	pwrite_full(fd, unit, got, ua, w->sh->one_path);
	free(unit);
}

static void *one_file_worker(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	unsigned long it;
	int fd;

	fd = open(sh->one_path, O_RDWR | sh->one_flags);
	if (fd < 0)
		die("open %s: %s", sh->one_path, strerror(errno));
	for (it = 0; it < sh->iters; it++) {
		const struct region *r = &sh->reg[rnd(w, sh->nreg)];
		size_t nstripes = (r->end - r->start + r->stripe - 1) / r->stripe;
		size_t k, s, e, a, b, off, len, got, i;
		unsigned n;

		/* write a few of our stripes, whole or in part */
		for (n = 1 + rnd(w, 4); n; n--) {
			k = rnd(w, nstripes);
			k -= k % sh->nthreads;
			k += w->id;
			if (k >= nstripes)
				continue;
			s = r->start + k * r->stripe;
			e = s + r->stripe < r->end ? s + r->stripe : r->end;
			a = s;
			b = e;
			if (rnd(w, 2)) {
				a = s + rnd(w, e - s);
				b = a + 1 + rnd(w, e - a);
			}
			fill(w, w->buf, b - a);
			if (sh->racy_rmw)
				racy_write(w, fd, a, b);
			else
				pwrite_full(fd, w->buf, b - a, a, sh->one_path);
			memcpy(sh->one_model + a, w->buf, b - a);
			w->nwrites++;
		}
		if (rnd(w, 64) == 0 && fdatasync(fd))
			die("fdatasync %s: %s", sh->one_path, strerror(errno));

		/* re-read a window spanning other threads' bytes; check ours */
		off = rnd(w, sh->one_size);
		len = 1 + rnd(w, w->bufsize < sh->one_size - off ? w->bufsize : sh->one_size - off);
		pread_full(fd, w->buf2, len, off, sh->one_path, &got);
		if (got != len)
			die("thread %u iteration %lu: pread %s off=%zu len=%zu returned %zu bytes"
			    " (file size %zu)", w->id, it, sh->one_path, off, len, got,
			    sh->one_size);
		for (i = 0; i < len; i++)
			if (owner(sh, off + i) == (int)w->id &&
			    w->buf2[i] != sh->one_model[off + i]) {
				char what[64];

				snprintf(what, sizeof(what), "one file, thread %u iteration %lu",
					 w->id, it);
				mismatch(what, sh->one_path, sh, off, sh->one_model + off,
					 w->buf2, len, i, fd);
			}
		w->nreads++;
	}
	if (close(fd))
		die("close %s: %s", sh->one_path, strerror(errno));
	return NULL;
}

static void one_file_final(struct shared *sh)
{
	uint8_t *buf = malloc(sh->one_size + 1);
	size_t got, i;
	struct stat st;
	int fd;

	if (!buf)
		die("out of memory");
	fd = open(sh->one_path, O_RDONLY);
	if (fd < 0)
		die("open %s: %s", sh->one_path, strerror(errno));
	if (fstat(fd, &st))
		die("fstat %s: %s", sh->one_path, strerror(errno));
	if ((size_t)st.st_size != sh->one_size)
		die("one file: st_size %lld, expected %zu", (long long)st.st_size, sh->one_size);
	pread_full(fd, buf, sh->one_size + 1, 0, sh->one_path, &got);
	if (got != sh->one_size)
		die("one file: read %zu bytes, expected %zu", got, sh->one_size);
	for (i = 0; i < got; i++)
		if (buf[i] != sh->one_model[i])
			mismatch("one file, final content", sh->one_path, sh, 0,
				 sh->one_model, buf, got, i, fd);
	close(fd);
	free(buf);
}

/* ---- part two: many files ---- */

static void mname(const struct worker *w, unsigned j, bool alt, char *p, size_t n)
{
	snprintf(p, n, "%s/t%u.f%u%s", w->sh->many_dir, w->id, j, alt ? ".renamed" : "");
}

static void mverify(struct worker *w, unsigned j, const char *what)
{
	struct mfile *m = &w->files[j];
	char path[512];
	size_t got, i;
	struct stat st;
	int fd;

	mname(w, j, false, path, sizeof(path));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("%s: open %s: %s", what, path, strerror(errno));
	if (fstat(fd, &st))
		die("%s: fstat %s: %s", what, path, strerror(errno));
	if ((size_t)st.st_size != m->size)
		die("%s: %s: st_size %lld, expected %zu", what, path,
		    (long long)st.st_size, m->size);
	pread_full(fd, w->buf2, m->size + 1, 0, path, &got);
	if (got != m->size)
		die("%s: %s: read %zu bytes, expected %zu", what, path, got, m->size);
	for (i = 0; i < got; i++)
		if (w->buf2[i] != m->data[i])
			mismatch(what, path, NULL, 0, m->data, w->buf2, got, i, fd);
	if (close(fd))
		die("close %s: %s", path, strerror(errno));
}

static void *many_files_worker(void *arg)
{
	struct worker *w = arg;
	size_t maxf = w->bufsize;
	unsigned long it;
	char path[512], alt[512], what[64];

	for (it = 0; it < w->sh->iters; it++) {
		unsigned j = rnd(w, FILES_PER_THREAD);
		struct mfile *m = &w->files[j];
		size_t off, len, bs = w->sh->bs;
		int fd;

		snprintf(what, sizeof(what), "many files, thread %u iteration %lu", w->id, it);
		mname(w, j, false, path, sizeof(path));
		if (!m->exists) {
			fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
			if (fd < 0)
				die("%s: create %s: %s", what, path, strerror(errno));
			m->size = rnd(w, 2) ? rnd(w, 41) : rnd(w, maxf + 1);
			fill(w, m->data, m->size);
			pwrite_full(fd, m->data, m->size, 0, path);
			m->exists = true;
			if (close(fd))
				die("close %s: %s", path, strerror(errno));
			continue;
		}
		switch (rnd(w, 8)) {
		case 0: case 1: case 2:	/* unaligned write, maybe past EOF */
			off = rnd(w, 2) ? rnd(w, maxf) : (rnd(w, maxf / bs + 1) * bs + rnd(w, 35)) % maxf;
			len = 1 + rnd(w, maxf - off);
			fd = open(path, rnd(w, 2) ? O_RDWR : O_WRONLY);
			if (fd < 0)
				die("%s: open %s: %s", what, path, strerror(errno));
			fill(w, w->buf, len);
			pwrite_full(fd, w->buf, len, off, path);
			if (off > m->size)
				memset(m->data + m->size, 0, off - m->size);
			memcpy(m->data + off, w->buf, len);
			if (off + len > m->size)
				m->size = off + len;
			if (close(fd))
				die("close %s: %s", path, strerror(errno));
			break;
		case 3:			/* truncate, growing or shrinking */
			len = rnd(w, 2) ? rnd(w, maxf + 1) : (rnd(w, maxf / bs) * bs + 1 + rnd(w, 15));
			if (truncate(path, len))
				die("%s: truncate %s to %zu: %s", what, path, len, strerror(errno));
			if (len > m->size)
				memset(m->data + m->size, 0, len - m->size);
			m->size = len;
			break;
		case 4: case 5:		/* read it all back */
			mverify(w, j, what);
			break;
		case 6:	/* rename away and back, or by a second name (a hard link) */
			mname(w, j, true, alt, sizeof(alt));
			if (rnd(w, 2) ? rename(path, alt) || rename(alt, path) :
			    link(path, alt) || unlink(path) || rename(alt, path))
				die("%s: rename or link %s: %s", what, path, strerror(errno));
			mverify(w, j, what);
			break;
		default:		/* unlink, recreated later */
			if (rnd(w, 4) == 0) {
				if (unlink(path))
					die("%s: unlink %s: %s", what, path, strerror(errno));
				m->exists = false;
			} else {
				mverify(w, j, what);
			}
		}
	}
	for (unsigned j = 0; j < FILES_PER_THREAD; j++)
		if (w->files[j].exists)
			mverify(w, j, "many files, final content");
	return NULL;
}

/* The shared directory must hold exactly the files the models say exist. */
static void many_files_listing(struct shared *sh, struct worker *ws)
{
	bool seen[MAX_THREADS][FILES_PER_THREAD] = { { false } };
	struct dirent *de;
	unsigned t, j;
	DIR *d;

	d = opendir(sh->many_dir);
	if (!d)
		die("opendir %s: %s", sh->many_dir, strerror(errno));
	while ((errno = 0, de = readdir(d))) {
		char tail;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (sscanf(de->d_name, "t%u.f%u%c", &t, &j, &tail) != 2 ||
		    t >= sh->nthreads || j >= FILES_PER_THREAD || !ws[t].files[j].exists ||
		    seen[t][j])
			die("many files: unexpected directory entry %s/%s", sh->many_dir,
			    de->d_name);
		seen[t][j] = true;
	}
	if (errno)
		die("readdir %s: %s", sh->many_dir, strerror(errno));
	closedir(d);
	for (t = 0; t < sh->nthreads; t++)
		for (j = 0; j < FILES_PER_THREAD; j++)
			if (ws[t].files[j].exists && !seen[t][j])
				die("many files: t%u.f%u missing from the listing", t, j);
}

static double since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void run_threads(struct shared *sh, struct worker *ws, void *(*fn)(void *))
{
	unsigned t;
	int e;

	for (t = 0; t < sh->nthreads; t++) {
		e = pthread_create(&ws[t].thread, NULL, fn, &ws[t]);
		if (e)
			die("pthread_create: %s", strerror(e));
	}
	for (t = 0; t < sh->nthreads; t++)
		pthread_join(ws[t].thread, NULL);
}

static void usage(void)
{
	fprintf(stderr,
"usage: sc_concur [-t threads] [-n iterations] [-b block_size] [-S seed] [-D] DIR\n"
"Concurrent unaligned writes and reads (DIR is created if missing):\n"
"DIR/concur.one shared by all threads\n"
"(disjoint odd-length stripes inside shared units), then DIR/concur.many/\n"
"with files private to each thread.  Final contents must equal the model.\n"
"  -t threads     4..%d (default 4)\n"
"  -n iterations  per thread and part (default 2000)\n"
"  -b block_size  data unit size the layout is built around (default 4096)\n"
"  -S seed        random seed (default: time and pid; printed at start)\n"
"  -D             part one through O_DIRECT fds, unaligned (FUSE mounts:\n"
"                 the kernel sends such writes of one file together)\n"
"  -F             self-test: write by unlocked whole-unit read-modify-write,\n"
"                 as a broken translator would; exits 0 only if caught\n",
		MAX_THREADS);
	exit(2);
}

int main(int argc, char **argv)
{
	struct shared sh = { .nthreads = 4, .iters = 2000, .bs = 4096 };
	struct worker *ws;
	struct timespec t0;
	unsigned long nw = 0, nr = 0;
	bool seeded = false;
	unsigned t, j;
	size_t pos;
	int c, fd;

	while ((c = getopt(argc, argv, "t:n:b:S:DFh")) != -1) {
		switch (c) {
		case 't': sh.nthreads = strtoul(optarg, NULL, 0); break;
		case 'n': sh.iters = strtoul(optarg, NULL, 0); break;
		case 'b': sh.bs = strtoul(optarg, NULL, 0); break;
		case 'S': sh.seed = strtoull(optarg, NULL, 0); seeded = true; break;
		case 'D': sh.one_flags = O_DIRECT; break;
		case 'F': sh.racy_rmw = selftest = true; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || sh.nthreads < 4 || sh.nthreads > MAX_THREADS ||
	    sh.iters == 0 || sh.bs < 16 || sh.bs > (1u << 20))
		usage();
	sh.dir = argv[optind];
	if (!seeded)
		sh.seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
	setvbuf(stdout, NULL, _IOLBF, 0);

	/*
	 * Layout of the shared file: stripes of 7 bytes over 8 units, 333 over
	 * 8 units, bs+1 over 8 units, 1 byte over one unit (every byte of a
	 * unit has a different owner than its neighbours), and a short tail of
	 * 3-byte stripes so the size follows the 16-byte tail rule.
	 */
	pos = 0;
	sh.reg[0] = (struct region){ pos, pos + 8 * sh.bs, 7 };
	pos += 8 * sh.bs;
	sh.reg[1] = (struct region){ pos, pos + 8 * sh.bs, 333 };
	pos += 8 * sh.bs;
	sh.reg[2] = (struct region){ pos, pos + 8 * sh.bs, sh.bs | 1 };
	pos += 8 * sh.bs;
	sh.reg[3] = (struct region){ pos, pos + sh.bs + 13, 1 };
	pos += sh.bs + 13;
	sh.nreg = 4;
	sh.one_size = pos;

	if (asprintf(&sh.one_path, "%s/concur.one", sh.dir) < 0 ||
	    asprintf(&sh.many_dir, "%s/concur.many", sh.dir) < 0)
		die("out of memory");
	sh.one_model = calloc(sh.one_size, 1);
	ws = calloc(sh.nthreads, sizeof(*ws));
	if (!sh.one_model || !ws)
		die("out of memory");
	for (t = 0; t < sh.nthreads; t++) {
		uint64_t s = sh.seed + t;

		ws[t].sh = &sh;
		ws[t].id = t;
		ws[t].rng = sc_splitmix64(&s);
		ws[t].bufsize = 3 * sh.bs + 17;
		ws[t].buf = malloc(ws[t].bufsize + 1);
		ws[t].buf2 = malloc(ws[t].bufsize + 1);
		if (!ws[t].buf || !ws[t].buf2)
			die("out of memory");
		for (j = 0; j < FILES_PER_THREAD; j++) {
			ws[t].files[j].data = malloc(ws[t].bufsize);
			if (!ws[t].files[j].data)
				die("out of memory");
		}
	}
	printf("sc_concur: seed=%" PRIu64 " dir=%s threads=%u iterations=%lu bs=%zu\n",
	       sh.seed, sh.dir, sh.nthreads, sh.iters, sh.bs);

	if (mkdir(sh.dir, 0755) && errno != EEXIST)
		die("mkdir %s: %s", sh.dir, strerror(errno));

	/* part one */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = open(sh.one_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, sh.one_size) || close(fd))
		die("create %s: %s", sh.one_path, strerror(errno));
	run_threads(&sh, ws, one_file_worker);
	one_file_final(&sh);
	if (selftest)
		die("self-test: racy read-modify-write went undetected");
	for (t = 0; t < sh.nthreads; t++) {
		nw += ws[t].nwrites;
		nr += ws[t].nreads;
	}
	printf("sc_concur: one file: %lu writes, %lu reads, %zu bytes OK in %.2f s\n",
	       nw, nr, sh.one_size, since(&t0));

	/* part two */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (mkdir(sh.many_dir, 0755) && errno != EEXIST)
		die("mkdir %s: %s", sh.many_dir, strerror(errno));
	{
		DIR *d = opendir(sh.many_dir);
		struct dirent *de;

		if (!d)
			die("opendir %s: %s", sh.many_dir, strerror(errno));
		/* leftovers of an earlier run would break the listing check */
		while ((de = readdir(d)))
			if (de->d_name[0] == 't' && unlinkat(dirfd(d), de->d_name, 0))
				die("unlink %s/%s: %s", sh.many_dir, de->d_name, strerror(errno));
		closedir(d);
	}
	run_threads(&sh, ws, many_files_worker);
	many_files_listing(&sh, ws);
	printf("sc_concur: many files: %u threads x %lu iterations OK in %.2f s\n",
	       sh.nthreads, sh.iters, since(&t0));

	for (t = 0; t < sh.nthreads; t++) {
		for (j = 0; j < FILES_PER_THREAD; j++)
			free(ws[t].files[j].data);
		free(ws[t].buf);
		free(ws[t].buf2);
	}
	free(ws);
	free(sh.one_model);
	free(sh.one_path);
	free(sh.many_dir);
	return 0;
}
