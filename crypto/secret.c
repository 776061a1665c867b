/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secret.c - memory for secrets, wiping, constant-time comparison and the
 * OS random generator.
 *
 * Secrets get their own anonymous mapping: mlock() works on whole pages, so
 * two secrets sharing a page would unlock each other on free; a mapping of
 * their own also lets us exclude them from core dumps.  mlock is best
 * effort (an unprivileged RLIMIT_MEMLOCK may refuse it): the key is still
 * wiped on free.
 */
#include <errno.h>
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

/* Zeroed, page-aligned, locked where allowed; NULL on failure. */
void *sc_secure_alloc(size_t len)
{
	void *p;

	if (len == 0)
		len = 1;
	p = mmap(NULL, page_round(len), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	(void)mlock(p, page_round(len));		/* best effort, see top */
	(void)madvise(p, page_round(len), MADV_DONTDUMP);
	return p;
}

/* Wipes, unlocks and unmaps; NULL is a no-op. */
void sc_secure_free(void *p, size_t len)
{
	if (p == NULL)
		return;
	if (len == 0)
		len = 1;
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
