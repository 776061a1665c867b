// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sc_crash.c - the writer and the checker of the kill -9 test
 * (tests/tools/crash_test.sh).
 *
 *   sc_crash write  [-b bs] [-S seed] [-n ops] DIR LOG
 *   sc_crash verify [-b bs] DIR LOG
 *   sc_crash corrupt [-b bs] DIR LOG	(self-test: verify must then fail)
 *
 * The writer runs a mixed workload over files f0..f15 in DIR (rewrite via
 * tmp file + fsync + rename, unsynced unaligned writes, truncates, punched
 * and zeroed ranges, unlinks, fsyncs) until it is killed.  LOG lives on a
 * plain directory outside the mount; every operation is appended to it
 * BEFORE it is issued, "D" once it returned, and "Y k" only after fsync of
 * fk returned.  All data comes from seeds in the log, so the checker can
 * rebuild what each file held at its last fsync and what every later
 * operation could have put there.
 *
 * After the daemon was killed and the volume remounted, the checker
 * requires, for every file:
 *  - it reads without error, all st_size bytes;
 *  - no operation after its last fsync: content equals the fsynced content
 *    exactly (XXH3 of the whole file and a byte compare);
 *  - later operations (writes may show old or new content): each byte holds
 *    its fsynced value, zero, or a value some later write put there, except
 *    inside the data units of the one operation in flight at the kill;
 *    st_size is no larger than the largest size the operations produced;
 *  - a completed unlink or rename is visible, an interrupted rewrite shows
 *    the old file or the complete new one.
 *
 * Exit status: 0 pass, 1 a check failed (details on stderr), 2 usage or
 * unreadable log; the writer exits 1 on any error but a dead mount
 * (ENOTCONN, ECONNABORTED, ECANCELED, ENODEV; EINTR when the mount is then
 * seen dead), 3 on a dead mount, 0 after -n operations.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <xxhash.h>

#include "sc_rand.h"
#include "sc_tool.h"

#define NFILES	16

static size_t bs = 4096;

static size_t max_size(void)
{
	return 16 * bs + 40;
}

static void fill(uint8_t *p, size_t len, uint64_t dseed)
{
	sc_rand_fill(&dseed, p, len);
}

#define die(...) sc_die("sc_crash: ", __VA_ARGS__)

/* ---- writer ---- */

struct wfile {
	bool	exists;
	size_t	size;
};

struct writer {
	const char	*dir;
	int		logfd;
	uint64_t	rng;
	uint8_t		*buf;
	struct wfile	f[NFILES];
};

static uint64_t rnd(struct writer *w, uint64_t n)
{
	return sc_rand_below(&w->rng, n);
}

static void wlog(struct writer *w, const char *fmt, ...)
{
	char line[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one write(2) per record on an O_APPEND fd: a record is never split */
	if (write(w->logfd, line, n) != n)
		die("log write: %s", strerror(errno));
}

static bool dead_mount_errno(int e)
{
	return e == ENOTCONN || e == ECONNABORTED || e == ECANCELED || e == ENODEV;
}

/*
 * A failed call on the mount: a dead daemon ends the writer quietly.  Over
 * FUSE over io_uring the request in flight at the kill ends in ECANCELED
 * (the daemon's rings are torn down with it), or in EINTR (a rename on
 * kernel 6.18, 1 run in about 60 under load), later ones in ECONNABORTED.  The writer has no
 * signal handler, so EINTR can come only from the connection's end; it
 * counts as the kill only if the mount is then seen dead: a statfs(2) of
 * it, which the kernel always sends to the daemon (a stat could be served
 * from the attribute cache), fails with one of the errnos above; it waits
 * for the connection's end if that is still under way.
 */
static void werr(const struct writer *w, const char *call, const char *path)
{
	int e = errno;
	struct statfs sfs;

	if (e == EINTR && statfs(w->dir, &sfs) < 0 && dead_mount_errno(errno)) {
		fprintf(stderr, "sc_crash: writer: %s %s: %s, and then %s: %s (daemon gone)\n",
			call, path, strerror(e), w->dir, strerror(errno));
		exit(3);
	}
	if (dead_mount_errno(e)) {
		fprintf(stderr, "sc_crash: writer: %s %s: %s (daemon gone)\n", call, path,
			strerror(e));
		exit(3);
	}
	die("writer: %s %s: %s", call, path, strerror(e));
}

static size_t gen_size(struct writer *w)
{
	switch (rnd(w, 4)) {
	case 0:
		return rnd(w, 41);
	case 1:
		return rnd(w, 17) * bs + 1 + rnd(w, 15);
	case 2:
		return rnd(w, 17) * bs;
	default:
		return rnd(w, max_size() + 1);
	}
}

/*
 * A write the kill cuts short returns the part done before the connection
 * died (the kernel sends a write in page-bounded pieces): write the rest,
 * and the next call reports the dead mount.
 */
static void pwrite_all(const struct writer *w, int fd, const uint8_t *p, size_t len, size_t off, const char *path)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pwrite(fd, p + done, len - done, off + done);
		if (n < 0)
			werr(w, "pwrite", path);
		if (n == 0)
			die("writer: %s: pwrite returned 0 at %zu of %zu", path, done, len);
		done += n;
	}
}

static void w_rewrite(struct writer *w, unsigned k)
{
	char path[512], tmp[520];
	uint64_t dseed = sc_splitmix64(&w->rng);
	size_t size = gen_size(w);
	int fd, dfd;

	snprintf(path, sizeof(path), "%s/f%u", w->dir, k);
	snprintf(tmp, sizeof(tmp), "%s/f%u.tmp", w->dir, k);
	wlog(w, "B %u %#" PRIx64 " %zu\n", k, dseed, size);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		werr(w, "open", tmp);
	fill(w->buf, size, dseed);
	pwrite_all(w, fd, w->buf, size, 0, tmp);
	if (fsync(fd))
		werr(w, "fsync", tmp);
	if (close(fd))
		werr(w, "close", tmp);
	if (rename(tmp, path))
		werr(w, "rename", tmp);
	dfd = open(w->dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		werr(w, "open", w->dir);
	if (fsync(dfd) && errno != EINVAL && errno != ENOSYS)
		werr(w, "fsync", w->dir);
	close(dfd);
	wlog(w, "S %u\n", k);
	w->f[k].exists = true;
	w->f[k].size = size;
}

static void w_modify(struct writer *w, unsigned k)
{
	struct wfile *f = &w->f[k];
	char path[512];
	size_t off, len;
	uint64_t dseed;
	unsigned r = rnd(w, 100);
	int fd;

	snprintf(path, sizeof(path), "%s/f%u", w->dir, k);
	fd = open(path, O_RDWR);
	if (fd < 0)
		werr(w, "open", path);
	if (r < 45) {		/* unsynced unaligned write, maybe extending */
		if (rnd(w, 2)) {
			off = rnd(w, f->size + 1);
		} else {	/* around a unit boundary */
			int64_t v = (int64_t)(rnd(w, 17) * bs) + (int64_t)rnd(w, 35) - 17;

			off = v < 0 ? 0 : (size_t)v;
		}
		if (off > max_size() - 1)
			off = max_size() - 1;
		len = 1 + rnd(w, rnd(w, 2) ? 2 * bs + 17 : 40);
		if (off + len > max_size())
			len = max_size() - off;
		dseed = sc_splitmix64(&w->rng);
		wlog(w, "W %u %zu %zu %#" PRIx64 "\n", k, off, len, dseed);
		fill(w->buf, len, dseed);
		pwrite_all(w, fd, w->buf, len, off, path);
		wlog(w, "D\n");
		if (off + len > f->size)
			f->size = off + len;
	} else if (r < 70) {	/* fsync: everything before is now durable */
		if (rnd(w, 2) ? fsync(fd) : fdatasync(fd))
			werr(w, "fsync", path);
		wlog(w, "Y %u\n", k);
	} else if (r < 85) {	/* truncate, growing or shrinking */
		len = gen_size(w);
		wlog(w, "T %u %zu\n", k, len);
		if (ftruncate(fd, len))
			werr(w, "ftruncate", path);
		wlog(w, "D\n");
		f->size = len;
	} else {		/* punch or zero a range */
		int mode = rnd(w, 2) ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
				     : FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;

		off = rnd(w, f->size + 1);
		len = 1 + rnd(w, 2 * bs + 17);
		wlog(w, "P %u %d %zu %zu\n", k, mode, off, len);
		if (fallocate(fd, mode, off, len)) {
			if (errno != EOPNOTSUPP)
				werr(w, "fallocate", path);
			wlog(w, "X\n");
		} else {
			wlog(w, "D\n");
		}
	}
	if (close(fd))
		werr(w, "close", path);
}

static int cmd_write(const char *dir, const char *log, uint64_t seed, unsigned long nops)
{
	struct writer w = { .dir = dir, .rng = seed };
	unsigned long i;

	w.buf = malloc(max_size());
	if (!w.buf)
		die("out of memory");
	if (mkdir(dir, 0755) && errno != EEXIST)
		werr(&w, "mkdir", dir);
	w.logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (w.logfd < 0)
		die("%s: %s", log, strerror(errno));
	for (i = 0; !nops || i < nops; i++) {
		unsigned k = rnd(&w, NFILES);
		char path[512];

		if (!w.f[k].exists || rnd(&w, 100) < 12) {
			w_rewrite(&w, k);
		} else if (rnd(&w, 100) < 4) {
			snprintf(path, sizeof(path), "%s/f%u", dir, k);
			wlog(&w, "U %u\n", k);
			if (unlink(path))
				werr(&w, "unlink", path);
			wlog(&w, "D\n");
			w.f[k].exists = false;
		} else {
			w_modify(&w, k);
		}
	}
	close(w.logfd);
	free(w.buf);
	return 0;
}

/* ---- checker ---- */

enum pop_type { P_WRITE, P_TRUNC, P_ZERO };

struct pop {
	enum pop_type	type;
	size_t		off;
	size_t		len;		/* write/zero length, truncate: new size */
	uint8_t		*data;
};

struct cfile {
	int		exists;		/* 1 yes, 0 no */
	uint8_t		*model;		/* content at the last fsync (max_size bytes) */
	size_t		size;
	struct pop	*pend;		/* operations after it */
	size_t		npend;
	/* an interrupted rewrite: the file may hold this new content instead */
	bool		rewrite_inflight;
	uint64_t	rw_seed;
	size_t		rw_size;
	bool		unlink_inflight;
	/* the last operation, not known to have completed: its units may be torn */
	bool		inflight;
	size_t		if_lo, if_hi;
};

static void pend_add(struct cfile *c, struct pop p)
{
	c->pend = realloc(c->pend, (c->npend + 1) * sizeof(*c->pend));
	if (!c->pend)
		die("out of memory");
	c->pend[c->npend++] = p;
}

static void model_apply(struct cfile *c)
{
	size_t i;

	for (i = 0; i < c->npend; i++) {
		struct pop *p = &c->pend[i];

		switch (p->type) {
		case P_WRITE:
			sc_model_write(c->model, &c->size, p->off, p->data, p->len);
			break;
		case P_TRUNC:
			sc_model_truncate(c->model, &c->size, p->len);
			break;
		case P_ZERO:
			sc_model_zero(c->model, c->size, p->off, p->len);
			break;
		}
		free(p->data);
	}
	c->npend = 0;
}

static void pend_clear(struct cfile *c)
{
	size_t i;

	for (i = 0; i < c->npend; i++)
		free(c->pend[i].data);
	c->npend = 0;
}

static void cf_alloc(struct cfile *cf)
{
	unsigned k;

	for (k = 0; k < NFILES; k++) {
		cf[k].model = calloc(max_size(), 1);
		if (!cf[k].model)
			die("out of memory");
	}
}

static void cf_free(struct cfile *cf)
{
	unsigned k;

	for (k = 0; k < NFILES; k++) {
		pend_clear(&cf[k]);
		free(cf[k].pend);
		free(cf[k].model);
	}
}

static int parse_log(const char *log, struct cfile *cf)
{
	char line[256];
	FILE *lf = fopen(log, "r");
	struct cfile *last = NULL;
	unsigned long lineno = 0;
	char last_type = 0;

	if (!lf) {
		fprintf(stderr, "sc_crash: %s: %s\n", log, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), lf)) {
		unsigned k;
		size_t off, len;
		uint64_t seed;
		int mode;
		struct cfile *c;

		lineno++;
		if (!strchr(line, '\n'))
			break;	/* a record cut by the kill: the op never started */
		if (line[0] == 'D' || line[0] == 'X') {
			if (!last)
				goto bad;
			c = last;
			if (line[0] == 'X') {	/* EOPNOTSUPP: no effect */
				if (last_type != 'P')
					goto bad;
				c->npend--;
			} else if (last_type == 'U') {
				/* gone, and nothing pending matters */
				pend_clear(c);
				c->exists = 0;
				c->size = 0;
			}
			c->inflight = false;
			c->unlink_inflight = false;
			last = NULL;
			continue;
		}
		if (sscanf(line + 1, " %u", &k) != 1 || k >= NFILES)
			goto bad;
		c = &cf[k];
		if (last && line[0] != 'Y' && line[0] != 'S')
			goto bad;	/* a new op while another was in flight */
		switch (line[0]) {
		case 'B':
			if (sscanf(line, "B %u %" SCNx64 " %zu", &k, &seed, &len) != 3 ||
			    len > max_size())
				goto bad;
			c->rewrite_inflight = true;
			c->rw_seed = seed;
			c->rw_size = len;
			last = NULL;	/* the old file is untouched until the rename */
			continue;
		case 'S':
			if (!c->rewrite_inflight)
				goto bad;
			pend_clear(c);
			fill(c->model, c->rw_size, c->rw_seed);
			c->size = c->rw_size;
			c->exists = 1;
			c->rewrite_inflight = false;
			c->inflight = false;
			continue;
		case 'Y':
			model_apply(c);
			continue;
		case 'U':
			/* until "D" the file may still be there, as it was */
			c->unlink_inflight = true;
			last = c;
			last_type = 'U';
			continue;
		case 'W':
			if (sscanf(line, "W %u %zu %zu %" SCNx64, &k, &off, &len, &seed) != 4 ||
			    off + len > max_size())
				goto bad;
			{
				struct pop p = { P_WRITE, off, len, malloc(len ? len : 1) };

				if (!p.data)
					die("out of memory");
				fill(p.data, len, seed);
				pend_add(c, p);
			}
			c->if_lo = off;
			c->if_hi = off + len;
			break;
		case 'T':
			if (sscanf(line, "T %u %zu", &k, &len) != 2 || len > max_size())
				goto bad;
			pend_add(c, (struct pop){ P_TRUNC, 0, len, NULL });
			/* a shrinking or growing truncate rewrites at most the unit at the cut */
			c->if_lo = len;
			c->if_hi = len + 1;
			break;
		case 'P':
			if (sscanf(line, "P %u %d %zu %zu", &k, &mode, &off, &len) != 4)
				goto bad;
			pend_add(c, (struct pop){ P_ZERO, off, len, NULL });
			c->if_lo = off;
			c->if_hi = off + len;
			break;
		default:
			goto bad;
		}
		c->inflight = true;
		last = c;
		last_type = line[0];
	}
	fclose(lf);
	return 0;
bad:
	fprintf(stderr, "sc_crash: %s:%lu: bad record: %s", log, lineno, line);
	fclose(lf);
	return -1;
}

static int read_file(const char *path, uint8_t *buf, size_t cap, size_t *size)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		n = -errno;
		close(fd);
		return n;
	}
	if ((size_t)st.st_size > cap) {
		close(fd);
		fprintf(stderr, "sc_crash: %s: size %lld is larger than any write made it\n",
			path, (long long)st.st_size);
		return -EFBIG;
	}
	while (got <= cap) {
		n = read(fd, buf + got, cap + 1 - got);
		if (n < 0) {
			n = -errno;
			fprintf(stderr, "sc_crash: %s: read at %zu: %s\n", path, got,
				strerror(errno));
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	if (got != (size_t)st.st_size) {
		fprintf(stderr, "sc_crash: %s: read %zu bytes, st_size %lld\n", path, got,
			(long long)st.st_size);
		return -EIO;
	}
	*size = got;
	return 0;
}

static void hexrow(const char *tag, const uint8_t *p, size_t from, size_t to, size_t mark,
		   size_t lim)
{
	size_t i;

	fprintf(stderr, "  %-9s %8zu:", tag, from);
	for (i = from; i < to; i++) {
		if (i < lim)
			fprintf(stderr, "%s%02x", i == mark ? "[" : (i == mark + 1 ? "]" : " "), p[i]);
		else
			fprintf(stderr, "%s--", i == mark ? "[" : (i == mark + 1 ? "]" : " "));
	}
	fputc('\n', stderr);
}

/* Is byte o of a file that had pending operations a value they allow? */
static bool byte_ok(const struct cfile *c, size_t o, uint8_t v)
{
	size_t i;

	if (v == 0 || (o < c->size && v == c->model[o]))
		return true;
	for (i = 0; i < c->npend; i++) {
		const struct pop *p = &c->pend[i];

		if (p->type == P_WRITE && o >= p->off && o < p->off + p->len &&
		    p->data[o - p->off] == v)
			return true;
	}
	/* the in-flight op's data units may hold anything */
	return c->inflight && o >= c->if_lo / bs * bs &&
	       o < (c->if_hi + bs - 1) / bs * bs;
}

static int check_file(const char *dir, unsigned k, struct cfile *c, uint8_t *buf)
{
	char path[512];
	size_t size = 0, i, maxsz = c->size;
	int r;

	snprintf(path, sizeof(path), "%s/f%u", dir, k);
	r = read_file(path, buf, max_size(), &size);
	if (r == -ENOENT) {
		if (c->exists && !c->unlink_inflight) {
			fprintf(stderr, "sc_crash: %s: missing (created and renamed into place "
				"before the kill)\n", path);
			return -1;
		}
		return 0;
	}
	if (r) {
		fprintf(stderr, "sc_crash: %s: unreadable: %s\n", path, strerror(-r));
		return -1;
	}
	if (!c->exists && !c->unlink_inflight && !c->rewrite_inflight) {
		fprintf(stderr, "sc_crash: %s: exists, but its unlink completed\n", path);
		return -1;
	}
	/* an interrupted rewrite may have completed its rename */
	if (c->rewrite_inflight && size == c->rw_size) {
		fill(buf + max_size() + 1, size, c->rw_seed);
		if (!memcmp(buf, buf + max_size() + 1, size))
			return 0;
	}
	if (!c->exists)	{
		/* only an unfinished rewrite could have put it here, and it did not */
		fprintf(stderr, "sc_crash: %s: exists with content that no completed "
			"rename gave it\n", path);
		return -1;
	}
	if (c->npend == 0) {
		if (size != c->size || XXH3_64bits(buf, size) != XXH3_64bits(c->model, size) ||
		    memcmp(buf, c->model, size)) {
			for (i = 0; i < size && i < c->size && buf[i] == c->model[i]; i++)
				;
			fprintf(stderr, "sc_crash: %s: fsynced content damaged: size %zu "
				"(fsynced %zu), first difference at offset %zu\n",
				path, size, c->size, i);
			hexrow("fsynced", c->model, i & ~(size_t)15, (i & ~(size_t)15) + 32, i, c->size);
			hexrow("found", buf, i & ~(size_t)15, (i & ~(size_t)15) + 32, i, size);
			return -1;
		}
		return 0;
	}
	for (i = 0; i < c->npend; i++) {
		const struct pop *p = &c->pend[i];
		size_t end = p->type == P_TRUNC ? p->len :
			     p->type == P_WRITE ? p->off + p->len : 0;

		if (end > maxsz)
			maxsz = end;
	}
	if (size > maxsz) {
		fprintf(stderr, "sc_crash: %s: size %zu, but no operation made it larger "
			"than %zu\n", path, size, maxsz);
		return -1;
	}
	for (i = 0; i < size; i++)
		if (!byte_ok(c, i, buf[i])) {
			fprintf(stderr, "sc_crash: %s: byte at offset %zu (unit %zu) is %#04x: "
				"neither its fsynced value nor anything written since "
				"(%zu operations after the last fsync%s)\n", path, i, i / bs,
				buf[i], c->npend, c->inflight ? ", the last in flight" : "");
			hexrow("fsynced", c->model, i & ~(size_t)15, (i & ~(size_t)15) + 32, i,
			       c->size);
			hexrow("found", buf, i & ~(size_t)15, (i & ~(size_t)15) + 32, i, size);
			return -1;
		}
	return 0;
}

static int cmd_verify(const char *dir, const char *log)
{
	struct cfile cf[NFILES] = { { 0 } };
	unsigned k, nsynced = 0, npend = 0, nabsent = 0;
	uint8_t *buf = malloc(2 * max_size() + 2);
	int bad = 0;

	if (!buf)
		die("out of memory");
	cf_alloc(cf);
	if (parse_log(log, cf)) {
		cf_free(cf);
		free(buf);
		return 2;
	}
	for (k = 0; k < NFILES; k++) {
		if (check_file(dir, k, &cf[k], buf))
			bad++;
		else if (!cf[k].exists)
			nabsent++;
		else if (cf[k].npend)
			npend++;
		else
			nsynced++;
	}
	cf_free(cf);
	free(buf);
	if (bad) {
		fprintf(stderr, "sc_crash: %s: %d of %d files FAILED the check (log %s)\n",
			dir, bad, NFILES, log);
		return 1;
	}
	printf("sc_crash: %s: OK: %u files intact as fsynced, %u with unsynced changes "
	       "within bounds, %u absent as expected\n", dir, nsynced, npend, nabsent);
	return 0;
}

/*
 * Self-test of the checker: flip one byte of the first file whose content
 * the log says was fsynced and untouched since; verify must then fail.
 */
static int cmd_corrupt(const char *dir, const char *log)
{
	struct cfile cf[NFILES] = { { 0 } };
	char path[512];
	unsigned k;
	uint8_t b;
	int fd;

	cf_alloc(cf);
	if (parse_log(log, cf)) {
		cf_free(cf);
		return 2;
	}
	for (k = 0; k < NFILES; k++)
		if (cf[k].exists && !cf[k].npend && !cf[k].inflight && !cf[k].rewrite_inflight &&
		    cf[k].size)
			break;
	if (k == NFILES) {
		cf_free(cf);
		die("corrupt: no fsynced file in %s", log);
	}
	snprintf(path, sizeof(path), "%s/f%u", dir, k);
	b = cf[k].model[cf[k].size / 2] ^ 0x5a;
	fd = open(path, O_WRONLY);
	if (fd < 0 || pwrite(fd, &b, 1, cf[k].size / 2) != 1 || close(fd))
		die("corrupt %s: %s", path, strerror(errno));
	printf("sc_crash: flipped the byte at offset %zu of %s\n", cf[k].size / 2, path);
	cf_free(cf);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
"usage: sc_crash write  [-b block_size] [-S seed] [-n ops] DIR LOG\n"
"       sc_crash verify [-b block_size] DIR LOG\n"
"       sc_crash corrupt [-b block_size] DIR LOG\n"
"write: run a mixed workload on DIR/f0..f%d, logging each operation to LOG\n"
"       (on a directory outside the mount) before it starts and after it\n"
"       completes; runs until killed, or for -n ops.\n"
"verify: after a crash and remount, check DIR against LOG: fsynced content\n"
"       intact, later changes within bounds, every file readable.\n"
"corrupt: self-test of verify: damage one fsynced file (verify must fail).\n",
		NFILES - 1);
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 20;
	unsigned long nops = 0;
	const char *cmd;
	int c;

	if (argc < 2)
		usage();
	cmd = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "b:S:n:h")) != -1) {
		switch (c) {
		case 'b': bs = strtoul(optarg, NULL, 0); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'n': nops = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc - 2 || bs < 16 || bs > (1u << 20))
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "write"))
		return cmd_write(argv[optind], argv[optind + 1], seed, nops);
	if (!strcmp(cmd, "verify"))
		return cmd_verify(argv[optind], argv[optind + 1]);
	if (!strcmp(cmd, "corrupt"))
		return cmd_corrupt(argv[optind], argv[optind + 1]);
	usage();
}
