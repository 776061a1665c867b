// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sc-scale: the small-file half of the thread-scaling benchmark (issue #19,
 * bench/lib/benchmarks.sh bench_scale). T application threads each work in
 * a directory of their own, so the figure is what the file system does with
 * T independent callers, not how one directory's lock serialises them (the
 * kernel holds a directory's i_rwsem across a create in it, on every file
 * system). The 4 KiB random-write column of the same table is fio's.
 *
 *   sc-scale create DIR T N   mkdir DIR/tNN per thread, then each thread
 *                             creates N/T files of 4 KiB there (open
 *                             O_CREAT|O_EXCL, one write, close)
 *   sc-scale stat   DIR T N   each thread lstats its N/T files, checking
 *                             that each is a 4 KiB regular file
 *   ... GATE READY            (either command; absolute paths) start only
 *                             when told: once its threads wait at the
 *                             start line, create the file READY, then read
 *                             one byte from the FIFO GATE (end of file: the
 *                             runner gave up; exit 1 without working)
 *
 * N must be a multiple of T. Only the operations are timed: the threads are
 * started and the directories made before a barrier, and the clock stops
 * when the last thread is done. Prints "ops=N sec=S ops_per_sec=R start=A
 * end=B" on success, A and B the clock's start and stop on CLOCK_MONOTONIC
 * (seconds, shared by every process of the host: the runner forms the wall
 * time of two drivers run at once from them, bench/lib/benchmarks.sh
 * bl_scale_files); exits 1 with a one-line message on any error (a thread
 * stops at its first failure, the others finish their share).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FILE_BYTES 4096u
#define MAX_THREADS 1024u

struct worker {
	pthread_t tid;
	unsigned idx;
	unsigned nfiles;
	int create;
	int err;		/* errno of the first failure, 0 if none */
	char what[32];		/* the call that failed */
	char path[64];		/* and its path, relative to DIR */
};

static pthread_barrier_t start_line;
static unsigned char content[FILE_BYTES];

static void fail(struct worker *w, const char *what, const char *path)
{
	w->err = errno ? errno : EIO;
	snprintf(w->what, sizeof(w->what), "%s", what);
	snprintf(w->path, sizeof(w->path), "%s", path);
}

static int create_one(struct worker *w, const char *p)
{
	ssize_t n;
	int fd;

	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		fail(w, "open", p);
		return -1;
	}
	n = write(fd, content, FILE_BYTES);
	if (n != (ssize_t)FILE_BYTES) {
		if (n >= 0)
			errno = EIO;	/* a short write of 4 KiB is a failure here */
		fail(w, "write", p);
		close(fd);
		return -1;
	}
	if (close(fd)) {
		fail(w, "close", p);
		return -1;
	}
	return 0;
}

static int stat_one(struct worker *w, const char *p)
{
	struct stat st;

	if (lstat(p, &st)) {
		fail(w, "lstat", p);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size != (off_t)FILE_BYTES) {
		errno = EIO;
		fail(w, "lstat (not a 4 KiB file)", p);
		return -1;
	}
	return 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char p[64];

	/* Every thread waits here, so none starts before all exist. */
	pthread_barrier_wait(&start_line);
	for (unsigned i = 0; i < w->nfiles; i++) {
		snprintf(p, sizeof(p), "t%02u/f%07u", w->idx, i);
		if ((w->create ? create_one(w, p) : stat_one(w, p)) < 0)
			break;
	}
	return NULL;
}

/* Announce "ready" by creating READY, then wait for the runner's byte on
 * GATE: two drivers released by one write start within microseconds. */
static int wait_gate(int gate, const char *gate_path, const char *ready)
{
	ssize_t n;
	char c;
	int fd;

	fd = open(ready, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "sc-scale: create %s: %s\n", ready, strerror(errno));
		return -1;
	}
	close(fd);
	do
		n = read(gate, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1) {
		fprintf(stderr, "sc-scale: %s: %s\n", gate_path,
			n == 0 ? "closed before the start (the runner gave up)" : strerror(errno));
		return -1;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: sc-scale create|stat DIR THREADS FILES [GATE READY] "
		"(FILES a multiple of THREADS, THREADS 1-%u)\n", MAX_THREADS);
	return 2;
}

static int parse_count(const char *s, unsigned long max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v == 0 || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int main(int argc, char **argv)
{
	struct worker *ws;
	struct timespec t0, t1;
	unsigned nthreads, nfiles, started = 0;
	int create, rc = 0, err, gate = -1;
	double sec;

	if (argc != 5 && argc != 7)
		return usage();
	if (!strcmp(argv[1], "create"))
		create = 1;
	else if (!strcmp(argv[1], "stat"))
		create = 0;
	else
		return usage();
	if (parse_count(argv[3], MAX_THREADS, &nthreads) ||
	    parse_count(argv[4], 1000000000ul, &nfiles) || nfiles % nthreads)
		return usage();
	/* The runner holds the FIFO open for reading and writing, so this
	 * open does not wait; it is made before any work so a bad path fails
	 * before a directory is made. */
	if (argc == 7) {
		gate = open(argv[5], O_RDONLY | O_CLOEXEC);
		if (gate < 0) {
			fprintf(stderr, "sc-scale: open %s: %s\n", argv[5], strerror(errno));
			return 1;
		}
	}
	if (chdir(argv[2])) {
		fprintf(stderr, "sc-scale: chdir %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	for (unsigned i = 0; i < FILE_BYTES; i++)
		content[i] = (unsigned char)(i * 131u + 7u);

	ws = calloc(nthreads, sizeof(*ws));
	if (!ws) {
		fprintf(stderr, "sc-scale: out of memory\n");
		return 1;
	}
	for (unsigned t = 0; t < nthreads; t++) {
		char d[16];

		snprintf(d, sizeof(d), "t%02u", t);
		if (create && mkdir(d, 0755)) {
			fprintf(stderr, "sc-scale: mkdir %s/%s: %s\n", argv[2], d,
				strerror(errno));
			rc = 1;
			goto out_free;
		}
		ws[t].idx = t;
		ws[t].nfiles = nfiles / nthreads;
		ws[t].create = create;
	}
	/* The main thread is the last one at the barrier: it starts the clock. */
	err = pthread_barrier_init(&start_line, NULL, nthreads + 1);
	if (err) {
		fprintf(stderr, "sc-scale: pthread_barrier_init: %s\n", strerror(err));
		rc = 1;
		goto out_free;
	}
	for (; started < nthreads; started++) {
		err = pthread_create(&ws[started].tid, NULL, work, &ws[started]);
		if (err) {
			/* The barrier counts nthreads + 1: the ones started would
			 * wait forever, so this is fatal for the process. */
			fprintf(stderr, "sc-scale: pthread_create: %s\n", strerror(err));
			exit(1);
		}
	}
	if (gate >= 0 && wait_gate(gate, argv[5], argv[6]))
		exit(1);	/* the threads wait at the barrier: end them all */
	pthread_barrier_wait(&start_line);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned t = 0; t < nthreads; t++)
		pthread_join(ws[t].tid, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_barrier_destroy(&start_line);

	for (unsigned t = 0; t < nthreads; t++) {
		if (ws[t].err) {
			fprintf(stderr, "sc-scale: %s %s/%s: %s\n", ws[t].what, argv[2],
				ws[t].path, strerror(ws[t].err));
			rc = 1;
		}
	}
	if (rc == 0) {
		sec = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		printf("ops=%u sec=%.6f ops_per_sec=%.1f start=%lld.%09ld end=%lld.%09ld\n",
		       nfiles, sec, sec > 0 ? nfiles / sec : 0.0,
		       (long long)t0.tv_sec, t0.tv_nsec, (long long)t1.tv_sec, t1.tv_nsec);
	}
out_free:
	free(ws);
	if (gate >= 0)
		close(gate);
	return rc;
}
