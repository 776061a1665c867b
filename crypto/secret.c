/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secret.c - memory for secrets, wiping, constant-time comparison and the
 * OS random generator.
 *
 * Secrets live in anonymous mappings that are mlock()ed and excluded from
 * core dumps.  Small secrets (a file's keys: one per open file) come from
 * 256-byte slots carved out of 64 KiB locked chunks that are never
 * unlocked or unmapped: a mapping per secret cost about 5 us of syscalls and
 * a TLB shootdown per file open and close.  Larger secrets get a mapping of
 * their own (passwords and key texts being read).  mlock is best effort (an
 * unprivileged RLIMIT_MEMLOCK may refuse it): the key is still wiped on
 * free, and the first refusal goes to the program's notice function
 * (sc_crypto_set_notice), since the library itself does no I/O.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "sc_crypto.h"

static size_t page_round(size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (len + pg - 1) / pg * pg;
}

#define SLOT_SIZE	256
#define CHUNK_SIZE	(64 * 1024)

struct slot {
	struct slot	*next;
};

static pthread_mutex_t g_slab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *g_free_slots;

static atomic_bool g_mlock_warned;
static _Atomic(sc_crypto_notice_fn) g_notice;

void sc_crypto_set_notice(sc_crypto_notice_fn fn)
{
	atomic_store(&g_notice, fn);
}

/*
 * Only the first refused mlock is told: the first locked allocation
 * happens while a command or the mount unlocks the volume, in front of the
 * user (before the daemon detaches).  Later refusals say nothing new.
 */
static void mlock_failed(int err)
{
	sc_crypto_notice_fn fn = atomic_load(&g_notice);

	if (atomic_exchange(&g_mlock_warned, true))
		return;
	if (fn)
		fn(SC_CRYPTO_NOTICE_MLOCK, err);
}

static void *map_locked(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* best effort, see top: ENOMEM over RLIMIT_MEMLOCK, EPERM when it is 0 */
	if (mlock(p, len) != 0 && (errno == ENOMEM || errno == EPERM))
		mlock_failed(errno);
	(void)madvise(p, len, MADV_DONTDUMP);
	return p;
}

static void *slot_alloc(void)
{
	struct slot *s;

	pthread_mutex_lock(&g_slab_lock);
	if (g_free_slots == NULL) {
		uint8_t *chunk = map_locked(CHUNK_SIZE);

		if (chunk == NULL) {
			pthread_mutex_unlock(&g_slab_lock);
			return NULL;
		}
		for (size_t o = 0; o < CHUNK_SIZE; o += SLOT_SIZE) {
			s = (struct slot *)(chunk + o);
			s->next = g_free_slots;
			g_free_slots = s;
		}
	}
	s = g_free_slots;
	g_free_slots = s->next;
	pthread_mutex_unlock(&g_slab_lock);
	memset(s, 0, SLOT_SIZE);
	return s;
}

static void slot_free(void *p)
{
	struct slot *s = p;

	OPENSSL_cleanse(p, SLOT_SIZE);
	pthread_mutex_lock(&g_slab_lock);
	s->next = g_free_slots;
	g_free_slots = s;
	pthread_mutex_unlock(&g_slab_lock);
}

/* Zeroed, locked where allowed, excluded from core dumps; NULL on failure. */
void *sc_secure_alloc(size_t len)
{
	if (len <= SLOT_SIZE)
		return slot_alloc();
	return map_locked(page_round(len));
}

/* Wipes and releases; len must be the length given to sc_secure_alloc.  NULL is a no-op. */
void sc_secure_free(void *p, size_t len)
{
	if (p == NULL)
		return;
	if (len <= SLOT_SIZE) {
		slot_free(p);
		return;
	}
	OPENSSL_cleanse(p, len);
	(void)munlock(p, page_round(len));
	(void)munmap(p, page_round(len));
}

/* A wipe the compiler cannot drop as a dead store. */
void sc_wipe(void *p, size_t len)
{
	if (p != NULL && len != 0)
		OPENSSL_cleanse(p, len);
}

/* 1 if equal, 0 if not, in time independent of the contents. */
int sc_memeq_ct(const void *a, const void *b, size_t len)
{
	return CRYPTO_memcmp(a, b, len) == 0;
}

/* getrandom(2), which blocks only until the kernel pool is seeded.  0 or -EIO. */
int sc_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
