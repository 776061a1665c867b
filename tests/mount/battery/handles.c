// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * handles.c - the battery's open-handle checks: open flags, flock and
 * POSIX locks (taken against a child process), mmap and O_DIRECT.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>

#include "battery_i.h"

void chk_open_flags(struct ctx *c)
{
	int fd[2];
	char b[2][8];

	REQUIRE(bat_make_file(c, "f", 3000, 24, 0644));
	BOTH(c, "O_CREAT|O_EXCL existing", openat(D, "f", O_CREAT | O_EXCL | O_WRONLY, 0644));
	REQUIRE(BOTH_OK(c, "O_CREAT|O_EXCL new", fd[S] = openat(D, "n", O_CREAT | O_EXCL | O_RDWR, 0640)));
	bat_pwrite2(c, "write new", fd, 0, 100, 25);
	BOTH(c, "close new", close(fd[S]));
	bat_cmp_stat(c, "stat new", "n", 0);
	REQUIRE(BOTH_OK(c, "O_TRUNC", fd[S] = openat(D, "f", O_WRONLY | O_TRUNC)));
	bat_cmp_fstat(c, "size after O_TRUNC", fd, 0);
	bat_pwrite2(c, "write after O_TRUNC", fd, 7, 9, 26);
	BOTH(c, "read on O_WRONLY", read(fd[S], b[S], 4));
	BOTH(c, "close", close(fd[S]));
	bat_cmp_data(c, "data after O_TRUNC", "f");
	REQUIRE(BOTH_OK(c, "O_RDONLY|O_TRUNC", fd[S] = openat(D, "n", O_RDONLY | O_TRUNC)));
	bat_cmp_fstat(c, "size after O_RDONLY|O_TRUNC", fd, 0);
	BOTH(c, "write on O_RDONLY", write(fd[S], "x", 1));
	BOTH(c, "close", close(fd[S]));
	BOTH(c, "O_CREAT without O_EXCL existing", ({
		int f = openat(D, "f", O_CREAT | O_RDONLY, 0600);
		if (f >= 0)
			close(f);
		f < 0 ? -1 : 0;
	}));
	bat_cmp_stat(c, "mode kept on existing", "f", 0);
	BOTH(c, "mkdir", mkdirat(D, "d", 0755));
	BOTH(c, "O_CREAT on dir", openat(D, "d", O_CREAT | O_WRONLY, 0644));
	BOTH(c, "O_WRONLY on dir", openat(D, "d", O_WRONLY));
	BOTH(c, "O_RDWR on dir", openat(D, "d", O_RDWR));
	BOTH(c, "O_DIRECTORY on file", openat(D, "f", O_RDONLY | O_DIRECTORY));
	BOTH(c, "O_DIRECTORY|O_CREAT", openat(D, "x", O_RDONLY | O_DIRECTORY | O_CREAT, 0644));
	REQUIRE(BOTH_OK(c, "O_PATH", fd[S] = openat(D, "f", O_PATH)));
	BOTH(c, "read on O_PATH", read(fd[S], b[S], 1));
	bat_cmp_fstat(c, "fstat O_PATH", fd, 0);
	BOTH(c, "close O_PATH", close(fd[S]));
	/* Read and write through the same fd move one file offset. */
	REQUIRE(BOTH_OK(c, "O_RDWR", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "write 5", write(fd[S], "hello", 5));
	BOTH(c, "lseek CUR", lseek(fd[S], 0, SEEK_CUR));
	BOTH(c, "lseek 1", lseek(fd[S], 1, SEEK_SET));
	BOTH(c, "read 6", read(fd[S], b[S], 6));
	bat_cmp_bytes(c, "read bytes", (uint8_t *)b[REF], 6, (uint8_t *)b[MNT], 6);
	BOTH(c, "lseek END", lseek(fd[S], 0, SEEK_END));
	BOTH(c, "lseek END+10", lseek(fd[S], 10, SEEK_END));
	BOTH(c, "lseek negative", lseek(fd[S], -100, SEEK_SET));
	BOTH(c, "close", close(fd[S]));
}

/* flock: a second open file description conflicts until unlock. */
static void child_flock(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	int fd = openat(D, "f", O_RDONLY);

	(void)arg;
	REC(out, "ex-nb", flock(fd, LOCK_EX | LOCK_NB));
	REC(out, "sh-nb", flock(fd, LOCK_SH | LOCK_NB));
	close(fd);
}

static void side_flock(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	int fd = openat(D, "f", O_RDWR), fd2;

	(void)arg;
	REC(out, "lock-ex", flock(fd, LOCK_EX));
	bat_sb_printf(out, "[while EX: ");
	bat_in_child(c, S, child_flock, NULL, (uid_t)-1, out);
	REC(out, "] downgrade-sh", flock(fd, LOCK_SH));
	bat_sb_printf(out, "[while SH: ");
	bat_in_child(c, S, child_flock, NULL, (uid_t)-1, out);
	REC(out, "] unlock", flock(fd, LOCK_UN));
	bat_sb_printf(out, "[unlocked: ");
	bat_in_child(c, S, child_flock, NULL, (uid_t)-1, out);
	/* A second fd in the same process is a separate description too. */
	fd2 = openat(D, "f", O_RDONLY);
	REC(out, "] lock-sh", flock(fd, LOCK_SH));
	REC(out, "fd2-ex-nb", flock(fd2, LOCK_EX | LOCK_NB));
	REC(out, "fd2-sh-nb", flock(fd2, LOCK_SH | LOCK_NB));
	close(fd2);
	close(fd);
}

void chk_flock(struct ctx *c)
{
	REQUIRE(bat_make_file(c, "f", 10, 160, 0644));
	bat_cmp_side(c, "flock", side_flock, NULL);
}

/* POSIX locks: F_GETLK from another process sees the parent's lock. */
static void child_getlk(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	pid_t parent = *(const pid_t *)arg;
	int fd = openat(D, "f", O_RDWR);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };

	REC(out, "getlk", fcntl(fd, F_GETLK, &fl));
	bat_sb_printf(out, "type=%s start=%lld len=%lld pid=%s ",
		      fl.l_type == F_WRLCK ? "WR" : fl.l_type == F_RDLCK ? "RD" :
		      fl.l_type == F_UNLCK ? "UN" : "?", (long long)fl.l_start,
		      (long long)fl.l_len, fl.l_type == F_UNLCK ? "-" :
		      fl.l_pid == parent ? "parent" : bat_label("%d", fl.l_pid));
	struct flock in = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 150, .l_len = 10 };

	errno = 0;
	long r = fcntl(fd, F_SETLK, &in);

	/* POSIX allows EACCES or EAGAIN for a conflict. */
	bat_sb_printf(out, "setlk-overlap=%s ", r == 0 ? "0" :
		      errno == EACCES || errno == EAGAIN ? "conflict" : bat_ename(errno));
	struct flock away = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 300, .l_len = 100 };

	REC(out, "setlk-disjoint", fcntl(fd, F_SETLK, &away));
	struct flock ofd = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 100, .l_len = 1 };

	errno = 0;
	r = fcntl(fd, F_OFD_SETLK, &ofd);
	bat_sb_printf(out, "ofd-setlk=%s ", r == 0 ? "0" :
		      errno == EACCES || errno == EAGAIN ? "conflict" : bat_ename(errno));
	close(fd);
}

static void side_posix_locks(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	int fd = openat(D, "f", O_RDWR);
	pid_t me = getpid();
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 100, .l_len = 100 };

	(void)arg;
	REC(out, "setlk", fcntl(fd, F_SETLK, &fl));
	bat_sb_printf(out, "[locked: ");
	bat_in_child(c, S, child_getlk, &me, (uid_t)-1, out);
	fl.l_type = F_RDLCK;
	REC(out, "] downgrade", fcntl(fd, F_SETLK, &fl));
	bat_sb_printf(out, "[read-locked: ");
	bat_in_child(c, S, child_getlk, &me, (uid_t)-1, out);
	fl.l_type = F_UNLCK;
	REC(out, "] unlock", fcntl(fd, F_SETLK, &fl));
	bat_sb_printf(out, "[unlocked: ");
	bat_in_child(c, S, child_getlk, &me, (uid_t)-1, out);
	bat_sb_printf(out, "]");
	/* Closing any fd of the file drops the process's POSIX locks. */
	int fd2 = openat(D, "f", O_RDONLY);

	fl.l_type = F_WRLCK;
	REC(out, "relock", fcntl(fd, F_SETLKW, &fl));
	close(fd2);
	bat_sb_printf(out, "[after close of other fd: ");
	bat_in_child(c, S, child_getlk, &me, (uid_t)-1, out);
	bat_sb_printf(out, "]");
	close(fd);
}

void chk_posix_locks(struct ctx *c)
{
	REQUIRE(bat_make_file(c, "f", 1000, 161, 0644));
	bat_cmp_side(c, "fcntl locks", side_posix_locks, NULL);
}

static void side_mmap_read(struct ctx *c, int S, void *arg, struct sbuf *out)
{
	int fd = openat(D, "f", O_RDONLY);
	uint8_t *m, *b = malloc(20000);
	bool same;

	(void)arg;
	m = mmap(NULL, 20000, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		bat_sb_printf(out, "mmap=%s", bat_ename(errno));
	} else {
		same = pread(fd, b, 20000, 0) == 20000 && !memcmp(b, m, 20000);
		/* The tail of the last page beyond EOF reads as zeros. */
		bool tail0 = true;

		for (size_t i = 20000; i < 20480; i++)
			tail0 = tail0 && !m[i];
		bat_sb_printf(out, "mmap-equals-read=%d tail-zero=%d", same, tail0);
		munmap(m, 20000);
	}
	free(b);
	close(fd);
}

void chk_mmap(struct ctx *c)
{
	int fd[2];
	uint8_t *m[2];

	REQUIRE(bat_make_file(c, "f", 20000, 180, 0644));
	bat_cmp_side(c, "mmap read", side_mmap_read, NULL);
	REQUIRE(BOTH_OK(c, "open", fd[S] = openat(D, "f", O_RDWR)));
	REQUIRE(BOTH_OK(c, "mmap shared rw", ({
		m[S] = mmap(NULL, 20000, PROT_READ | PROT_WRITE, MAP_SHARED, fd[S], 0);
		m[S] == MAP_FAILED ? -1 : 0;
	})));
	for (int S = 0; S < 2; S++) {
		m[S][1] = 0xaa;
		memset(m[S] + 4095, 0xbb, 3);
		bat_fill(m[S] + 10000, 101, 181);
		m[S][19999] = 0;
	}
	BOTH(c, "msync", msync(m[S], 20000, MS_SYNC));
	bat_cmp_fd_data(c, "read after msync", fd);
	BOTH(c, "munmap", munmap(m[S], 20000));
	BOTH(c, "close", close(fd[S]));
	bat_cmp_data(c, "fresh read after mmap write", "f");
	/* Grow with ftruncate, then fill the new area through a mapping. */
	REQUIRE(BOTH_OK(c, "reopen", fd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "ftruncate 40000", ftruncate(fd[S], 40000));
	REQUIRE(BOTH_OK(c, "mmap grown", ({
		m[S] = mmap(NULL, 40000, PROT_READ | PROT_WRITE, MAP_SHARED, fd[S], 0);
		m[S] == MAP_FAILED ? -1 : 0;
	})));
	for (int S = 0; S < 2; S++)
		bat_fill(m[S] + 20000, 20000, 182);
	BOTH(c, "munmap grown (no msync)", munmap(m[S], 40000));
	BOTH(c, "fsync", fsync(fd[S]));
	bat_cmp_fd_data(c, "read grown", fd);
	/* MAP_PRIVATE writes stay private. */
	REQUIRE(BOTH_OK(c, "mmap private", ({
		m[S] = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd[S], 0);
		m[S] == MAP_FAILED ? -1 : 0;
	})));
	for (int S = 0; S < 2; S++)
		memset(m[S], 0x11, 4096);
	BOTH(c, "munmap private", munmap(m[S], 4096));
	bat_cmp_fd_data(c, "private write invisible", fd);
	BOTH(c, "close", close(fd[S]));
	REQUIRE(BOTH_OK(c, "open wronly", fd[S] = openat(D, "f", O_WRONLY)));
	BOTH(c, "mmap on O_WRONLY", ({
		void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd[S], 0);
		p == MAP_FAILED ? -1 : (munmap(p, 4096), 0);
	}));
	BOTH(c, "close wronly", close(fd[S]));
	bat_cmp_data(c, "final data", "f");
}

void chk_o_direct(struct ctx *c)
{
	int fd[2], cfd[2];
	uint8_t *b[2], *m[2];

	REQUIRE(bat_make_file(c, "f", 10000, 190, 0644));
	REQUIRE(BOTH_OK(c, "open O_DIRECT", fd[S] = openat(D, "f", O_RDWR | O_DIRECT)));
	for (int S = 0; S < 2; S++) {
		if (posix_memalign((void **)&b[S], 4096, 16384))
			abort();
		bat_fill(b[S], 16384, 191);
	}
	BOTH(c, "direct write 4096@4096", pwrite(fd[S], b[S], 4096, 4096));
	BOTH(c, "direct write 8192@12288", pwrite(fd[S], b[S], 8192, 12288));
	BOTH(c, "direct read 16384@0", pread(fd[S], b[S], 16384, 0));
	bat_cmp_bytes(c, "direct read data", b[REF], 16384, b[MNT], 16384);
	bat_cmp_fstat(c, "fstat", fd, 0);
	/*
	 * The mount opens O_DIRECT handles as FUSE direct_io files: a shared
	 * mapping of one must still work (FUSE_DIRECT_IO_ALLOW_MMAP) and show
	 * the direct writes; its stores must reach direct reads after msync.
	 */
	REQUIRE(BOTH_OK(c, "mmap O_DIRECT handle shared", ({
		m[S] = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_SHARED, fd[S], 0);
		m[S] == MAP_FAILED ? -1 : 0;
	})));
	bat_cmp_bytes(c, "mapping shows direct writes", m[REF], 16384, m[MNT], 16384);
	for (int S = 0; S < 2; S++)
		memset(m[S] + 100, 0x5a, 5000);
	BOTH(c, "msync", msync(m[S], 16384, MS_SYNC));
	BOTH(c, "munmap", munmap(m[S], 16384));
	BOTH(c, "direct read after mmap write", pread(fd[S], b[S], 16384, 0));
	bat_cmp_bytes(c, "direct read of mapped stores", b[REF], 16384, b[MNT], 16384);
	/* Past EOF and while a cached handle is open (the kernel serialises these). */
	REQUIRE(BOTH_OK(c, "open cached beside", cfd[S] = openat(D, "f", O_RDWR)));
	BOTH(c, "cached read", pread(cfd[S], b[S], 100, 50));
	BOTH(c, "direct write past EOF", pwrite(fd[S], b[S], 4096, 24576));
	BOTH(c, "cached read after direct", pread(cfd[S], b[S], 8192, 20480));
	bat_cmp_bytes(c, "cached read sees direct write", b[REF], 8192, b[MNT], 8192);
	bat_cmp_fstat(c, "fstat after extending", fd, 0);
	BOTH(c, "close cached", close(cfd[S]));
	BOTH(c, "close", close(fd[S]));
	bat_cmp_data(c, "buffered read after direct", "f");
	free(b[REF]);
	free(b[MNT]);
}
