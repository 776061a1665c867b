/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_xl_env.h - the one harness of the in-process data layer tests
 * (tests/crypt/test_xl.c: the length-preserving format; test_gcm_xl.c: the
 * authenticated one): a stack built by the builder for a fresh master key
 * over a temporary backing directory, one file under test in it, whose
 * inode can be forgotten so that the next operation reloads its state from
 * the backing file, and the random offsets the model tests draw.  Static
 * functions: each test program includes it once.
 */
#ifndef SC_XL_ENV_H
#define SC_XL_ENV_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sc_crypto.h"
#include "sc_volume.h"
#include "sc_xlator.h"
#include "sc_stack.h"

struct env {
	char		dir[64];
	struct sc_mkey	*mkey;
	struct sc_xl	*top;
	struct sc_obj	root;
	struct sc_obj	obj;	/* the file under test */
	struct sc_fh	fh;
	bool		open;
	uint32_t	bs;
	unsigned	seed;
};

/*
 * A crypt stack (the builder's choice of data layer for cipher) over a
 * new directory made from tmpl (mkdtemp), hiding the volume config.
 */
static void env_up_in(struct env *e, const char *tmpl, enum sc_cipher_id cipher, uint32_t bs)
{
	static const struct sc_stack_hide hide = {
		.names	= { SC_CONFIG_NAME, SC_LOCK_NAME },
		.prefix	= SC_VOL_TMP_PREFIX,
	};
	struct sc_xl_conf conf = { .max_io = 1 << 20 };
	uint8_t mk[SC_MASTER_KEY_LEN];
	struct sc_stack_spec spec;

	memset(e, 0, sizeof(*e));
	e->bs = bs;
	snprintf(e->dir, sizeof(e->dir), "%s", tmpl);
	cr_assert_not_null(mkdtemp(e->dir));
	cr_assert_eq(sc_random(mk, sizeof(mk)), 0);
	cr_assert_eq(sc_mkey_new(mk, cipher, bs, &e->mkey), 0);
	sc_wipe(mk, sizeof(mk));
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, e->mkey, &hide), 0);
	cr_assert_eq(sc_stack_new(&spec, &e->top), 0);
	e->root.fd = open(e->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	e->root.type = S_IFDIR;
	e->root.is_root = true;
	cr_assert_geq(e->root.fd, 0);
	cr_assert_eq(sc_xl_stack_init(e->top, &e->root, &conf), 0);
}

/* Releases the file under test and forgets its inode (state dropped). */
static void file_close(struct env *e)
{
	if (e->open) {
		cr_assert_eq(sc_xl_release(e->top, &e->obj, &e->fh), 0);
		e->open = false;
	}
	if (e->obj.fd > 0) {
		if (e->top->ops->forget)
			e->top->ops->forget(e->top, &e->obj);
		close(e->obj.fd);
		memset(&e->obj, 0, sizeof(e->obj));
	}
}

/* Creates the file under test, "f", and keeps it open read-write. */
static void file_create(struct env *e)
{
	struct sc_fh cfh = { .flags = O_RDWR | O_CREAT | O_EXCL };
	struct stat st;
	int fd;

	cr_assert_eq(sc_xl_create(e->top, &e->root, "f", 0600, &cfh, &fd, &st), 0);
	e->obj.fd = fd;
	e->obj.type = S_IFREG;
	e->fh = cfh;
	e->open = true;
}

static void env_down(struct env *e)
{
	char cmd[128];

	file_close(e);
	sc_xl_stack_free(e->top);
	sc_mkey_free(e->mkey);
	close(e->root.fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
	cr_assert_eq(system(cmd), 0);
}

/*
 * An offset in [0, limit] where the arithmetic happens, from e's seed:
 * small ones, unit edges (of a file up to maxsz) +-jitter, or anywhere.
 */
static inline uint64_t env_pick(struct env *e, uint64_t limit, uint64_t maxsz, unsigned jitter)
{
	uint64_t v;

	if (limit == 0)
		return 0;
	switch (rand_r(&e->seed) % 4) {
	case 0:
		v = (uint64_t)rand_r(&e->seed) % 41;
		break;
	case 1:
	case 2:
		v = (uint64_t)(rand_r(&e->seed) % (maxsz / e->bs + 1)) * e->bs +
		    (uint64_t)rand_r(&e->seed) % (2 * jitter + 1) - jitter;
		break;
	default:
		v = (uint64_t)rand_r(&e->seed) % limit;
	}
	return v > limit ? limit : v;
}

#endif /* SC_XL_ENV_H */
