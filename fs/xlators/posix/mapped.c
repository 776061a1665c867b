/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mapped.c - writes into a shared mapping of a file (the posix layer's
 * ->map, asked for by the gcm layer for its crash journal).
 *
 * Why: the journal gets one record written before every in-place write of
 * an aes-gcm volume.  As a pwrite(2), that is a second system call per
 * request and, on XFS, a second round on an inode lock that every writer
 * thread of the volume takes in turn (docs/benchmarks.md, "The journal's
 * cost, attributed").  A copy into a MAP_SHARED mapping of the same file
 * lands in the same page cache, so it has the meaning of the pwrite it
 * replaces: it outlives a kill -9 of the daemon, and it is no more
 * durable against a power cut than the unsynced pwrite was.
 *
 * A store into a mapping reports a failure the kernel cannot satisfy (an
 * I/O error reading a page back in, no space to allocate the page of a
 * hole, the file cut short by someone else) as SIGBUS, which would kill
 * the daemon where pwrite(2) would have returned an errno.  So each copy
 * runs with a per-thread jump buffer armed, and a SIGBUS handler that
 * finds one armed returns there: the copy is abandoned, the mapping is
 * marked broken, and the caller writes with pwrite(2) instead, which
 * reports the real error (or succeeds, extending a cut file again).  A
 * SIGBUS with no copy armed is not ours: it goes to the handler that was
 * there before (a sanitizer's), or kills the process as it would have.
 * The handler is installed with SA_NODEFER, so that leaving it by a jump
 * leaves SIGBUS unblocked without a sigprocmask call per copy.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapped.h"

struct px_map {
	uint8_t		*addr;
	uint64_t	len;
	int		broken;		/* a copy faulted: atomic */
};

static pthread_once_t px_bus_once = PTHREAD_ONCE_INIT;
static struct sigaction px_bus_prev;
static int px_bus_err;
static __thread sigjmp_buf *px_bus_jmp;

static void px_bus_handler(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *jb = px_bus_jmp;

	if (jb) {
		px_bus_jmp = NULL;
		siglongjmp(*jb, 1);
	}
	if (px_bus_prev.sa_flags & SA_SIGINFO) {
		px_bus_prev.sa_sigaction(sig, si, uc);
	} else if (px_bus_prev.sa_handler != SIG_IGN && px_bus_prev.sa_handler != SIG_DFL) {
		px_bus_prev.sa_handler(sig);
	} else {
		/* returning re-runs the faulting access, which now kills */
		signal(SIGBUS, SIG_DFL);
	}
}

static void px_bus_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = px_bus_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &px_bus_prev) != 0)
		px_bus_err = errno;
}

int px_map_new(int fd, uint64_t len, struct px_map **out)
{
	struct px_map *m;
	struct stat st;
	void *addr;

	*out = NULL;
	if (len == 0 || len > SIZE_MAX)
		return -EINVAL;
	pthread_once(&px_bus_once, px_bus_install);
	if (px_bus_err)
		return -px_bus_err;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	/* a hole, not an allocation: a page is allocated at its first store */
	if ((uint64_t)st.st_size < len && ftruncate(fd, (off_t)len) != 0)
		return -errno;
	addr = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED)
		return -errno;
	m = calloc(1, sizeof(*m));
	if (!m) {
		munmap(addr, (size_t)len);
		return -ENOMEM;
	}
	m->addr = addr;
	m->len = len;
	*out = m;
	return 0;
}

bool px_map_write(struct px_map *m, const void *buf, size_t n, uint64_t off)
{
	sigjmp_buf jb;

	if (off > m->len || n > m->len - off || __atomic_load_n(&m->broken, __ATOMIC_RELAXED))
		return false;
	if (sigsetjmp(jb, 0)) {
		/* the handler disarmed px_bus_jmp before jumping here */
		__atomic_store_n(&m->broken, 1, __ATOMIC_RELAXED);
		return false;
	}
	px_bus_jmp = &jb;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* armed before the first store */
	memcpy(m->addr + off, buf, n);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* disarmed after the last */
	px_bus_jmp = NULL;
	return true;
}

void px_map_free(struct px_map *m)
{
	if (!m)
		return;
	munmap(m->addr, (size_t)m->len);
	free(m);
}
