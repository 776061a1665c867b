// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sc-smallfiles: the file-level half of the mongo-style small-file benchmark
 * and of the big-directory one (bench/lib/benchmarks.sh times both). One
 * process does every per-file
 * system call of a phase, so the measured time is the file system's and not
 * that of forking cat/mv/stat once per file, which would cost more than the
 * operations themselves on a fast file system.
 *
 * The tree is a pure function of (N, SEED): 16 top directories x 16
 * subdirectories, file i in d%02x/s%02x/f%07u, size floor(32768 * u^3) for u
 * uniform in [0,1) drawn from a fixed xorshift64* stream. That gives sizes in
 * 0..32 KiB, median 4 KiB, mean 8 KiB: skewed small like the mailbox/source
 * trees mongo modelled. awk is not used because mawk and gawk draw different
 * rand() streams for one seed. Each file's bytes are a function of its index,
 * so "read" verifies every byte, which proves a copy or a cipher round trip.
 *
 *   sc-smallfiles create DIR N SEED   mkdir the tree, create+write every file
 *   sc-smallfiles read   DIR N SEED   read and verify every file
 *   sc-smallfiles stat   DIR N SEED   lstat every file, check its size
 *   sc-smallfiles rename DIR N SEED   rename every fNNN to fNNN.r (same dir)
 *   sc-smallfiles delete DIR N SEED   unlink every file (renamed or not), rmdir
 *   sc-smallfiles list   DIR N SEED   print "path size" per file (debugging)
 *
 * The big directory is N empty files in DIR itself, named e%07u_ plus 0-24
 * letters drawn from the same stream (so name lengths vary, which matters to
 * a filesystem that encrypts names):
 *   sc-smallfiles bigdir-create DIR N SEED   create every entry
 *   sc-smallfiles bigdir-stat   DIR N SEED   lstat (look up) every name
 *   sc-smallfiles bigdir-list   DIR N SEED   getdents64 to the end, check N
 *   sc-smallfiles bigdir-delete DIR N SEED   unlink every entry
 *
 * Prints "files=N bytes=B" (bigdir: "entries=N") on success; exits 1 with
 * a message on any error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FANOUT   16u
#define MAXSIZE  32768u
#define PATTERN  (MAXSIZE + 256u)

static unsigned char pattern[PATTERN];
static unsigned char iobuf[MAXSIZE + 1];

static uint64_t rng_state;

/* xorshift64*: fixed, tiny, identical on every platform. */
static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static unsigned file_size(void)
{
	double u = (double)(rng_next() >> 11) / 9007199254740992.0;	/* 2^53 */

	return (unsigned)(MAXSIZE * u * u * u);
}

static void file_path(char *buf, size_t len, unsigned i, int renamed)
{
	snprintf(buf, len, "d%02x/s%02x/f%07u%s", i % FANOUT,
		 (i / FANOUT) % FANOUT, i, renamed ? ".r" : "");
}

/* Content of file i starts at a per-file offset of one shared pattern. */
static const unsigned char *file_data(unsigned i)
{
	return pattern + (i * 131u) % 256u;
}

static int die(const char *what, const char *path)
{
	fprintf(stderr, "sc-smallfiles: %s %s: %s\n", what, path,
		strerror(errno));
	return 1;
}

static int make_dirs(void)
{
	char p[64];

	for (unsigned a = 0; a < FANOUT; a++) {
		snprintf(p, sizeof(p), "d%02x", a);
		if (mkdir(p, 0755) && errno != EEXIST)
			return die("mkdir", p);
		for (unsigned b = 0; b < FANOUT; b++) {
			snprintf(p, sizeof(p), "d%02x/s%02x", a, b);
			if (mkdir(p, 0755) && errno != EEXIST)
				return die("mkdir", p);
		}
	}
	return 0;
}

static int remove_dirs(void)
{
	char p[64];

	for (unsigned a = 0; a < FANOUT; a++) {
		for (unsigned b = 0; b < FANOUT; b++) {
			snprintf(p, sizeof(p), "d%02x/s%02x", a, b);
			if (rmdir(p))
				return die("rmdir", p);
		}
		snprintf(p, sizeof(p), "d%02x", a);
		if (rmdir(p))
			return die("rmdir", p);
	}
	return 0;
}

static int do_create(unsigned i, unsigned size, const char *p)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return die("create", p);
	if (size && write(fd, file_data(i), size) != (ssize_t)size) {
		close(fd);
		return die("write", p);
	}
	if (close(fd))
		return die("close", p);
	return 0;
}

static int do_read(unsigned i, unsigned size, const char *p)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return die("open", p);
	/* Ask for one byte more than expected so a too-long file shows. */
	while ((n = read(fd, iobuf + got, sizeof(iobuf) - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (n < 0)
		return die("read", p);
	if (got != size || memcmp(iobuf, file_data(i), size)) {
		fprintf(stderr, "sc-smallfiles: %s: content differs "
			"(%zu bytes, want %u)\n", p, got, size);
		return 1;
	}
	return 0;
}

static int do_stat(unsigned size, const char *p)
{
	struct stat st;

	if (lstat(p, &st))
		return die("stat", p);
	if (!S_ISREG(st.st_mode) || st.st_size != (off_t)size) {
		fprintf(stderr, "sc-smallfiles: %s: size %lld, want %u\n", p,
			(long long)st.st_size, size);
		return 1;
	}
	return 0;
}

static void entry_name(char *buf, size_t len, unsigned i)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz";
	unsigned extra = (unsigned)(rng_next() % 25u);
	int n = snprintf(buf, len, "e%07u_", i);

	for (unsigned k = 0; k < extra && (size_t)n + 1 < len; k++)
		buf[n++] = letters[(i + k * 7u) % 26u];
	buf[n] = '\0';
}

/* Entries in "." as getdents64 returns them, without "." and "..". */
static int count_entries(unsigned long *count)
{
	static char buf[64 * 1024];
	int fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long got;

	if (fd < 0)
		return die("open", ".");
	*count = 0;
	/* glibc's readdir() would do the same calls; this counts without it. */
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
			unsigned short reclen;
			const char *name = buf + off + 19;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			if (strcmp(name, ".") && strcmp(name, ".."))
				(*count)++;
			off += reclen;
		}
	}
	close(fd);
	if (got < 0)
		return die("getdents64", ".");
	return 0;
}

static int bigdir(const char *mode, unsigned long n)
{
	char p[64];
	unsigned long count = 0;
	struct stat st;
	int fd;

	if (strcmp(mode, "bigdir-create") && strcmp(mode, "bigdir-stat") &&
	    strcmp(mode, "bigdir-list") && strcmp(mode, "bigdir-delete")) {
		fprintf(stderr, "sc-smallfiles: unknown mode %s\n", mode);
		return 2;
	}
	if (!strcmp(mode, "bigdir-list")) {
		if (count_entries(&count))
			return 1;
		if (count != n) {
			fprintf(stderr, "sc-smallfiles: %lu entries listed, want %lu\n",
				count, n);
			return 1;
		}
		printf("entries=%lu\n", n);
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		entry_name(p, sizeof(p), i);
		if (!strcmp(mode, "bigdir-create")) {
			fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			if (fd < 0)
				return die("create", p);
			if (close(fd))
				return die("close", p);
		} else if (!strcmp(mode, "bigdir-stat")) {
			if (lstat(p, &st))
				return die("stat", p);
			if (!S_ISREG(st.st_mode) || st.st_size != 0) {
				fprintf(stderr, "sc-smallfiles: %s: not an empty file\n", p);
				return 1;
			}
		} else if (unlink(p)) {	/* bigdir-delete */
			return die("unlink", p);
		}
	}
	printf("entries=%lu\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n;
	unsigned long long bytes = 0;
	char p[64], q[64];
	const char *mode;
	int rc = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: sc-smallfiles create|read|stat|rename|"
			"delete|list|bigdir-create|bigdir-stat|bigdir-list|"
			"bigdir-delete DIR N SEED\n");
		return 2;
	}
	mode = argv[1];
	n = strtoul(argv[3], NULL, 10);
	rng_state = strtoull(argv[4], NULL, 10) * 2654435761ULL + 1;
	for (unsigned k = 0; k < PATTERN; k++)
		pattern[k] = (unsigned char)(k * 7u + (k >> 8) * 13u + 1u);
	if (chdir(argv[2]))
		return die("chdir", argv[2]);
	if (!strncmp(mode, "bigdir-", 7))
		return bigdir(mode, n);

	if (!strcmp(mode, "create"))
		rc = make_dirs();
	for (unsigned i = 0; !rc && i < n; i++) {
		unsigned size = file_size();

		file_path(p, sizeof(p), i, 0);
		bytes += size;
		if (!strcmp(mode, "create")) {
			rc = do_create(i, size, p);
		} else if (!strcmp(mode, "read")) {
			rc = do_read(i, size, p);
		} else if (!strcmp(mode, "stat")) {
			rc = do_stat(size, p);
		} else if (!strcmp(mode, "rename")) {
			file_path(q, sizeof(q), i, 1);
			if (rename(p, q))
				rc = die("rename", p);
		} else if (!strcmp(mode, "delete")) {
			/* The rename phase may or may not have run before. */
			if (unlink(p) == 0)
				continue;
			if (errno != ENOENT) {
				rc = die("unlink", p);
			} else {
				file_path(q, sizeof(q), i, 1);
				if (unlink(q))
					rc = die("unlink", q);
			}
		} else if (!strcmp(mode, "list")) {
			printf("%s %u\n", p, size);
		} else {
			fprintf(stderr, "sc-smallfiles: unknown mode %s\n", mode);
			return 2;
		}
	}
	if (!rc && !strcmp(mode, "delete"))
		rc = remove_dirs();
	if (rc)
		return 1;
	printf("files=%lu bytes=%llu\n", n, bytes);
	return 0;
}
