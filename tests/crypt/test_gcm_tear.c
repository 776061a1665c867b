/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_gcm_tear.c - units torn by a kill -9, and the intent journal that
 * repairs them (issue #17: "after kill -9 at any moment, every unit reads
 * back either its old or its new content").
 *
 * The kernel may stop a buffered pwrite at a page boundary when the daemon
 * is killed; the gcm layer's test hook (sc_gcm_test_tear, gcm_xl.h) makes
 * its in-place write stop exactly there, after the journal record, and
 * the layer then behaves as a dead daemon (writes nothing more; destroy
 * leaves the journal DIRTY).  The stack is freed and a new one built over
 * the same backing directory and key, as the next mount would: the file
 * must read back, without EIO, unit by unit as its old or its new content
 * -- the tear at every page boundary of a multi-unit rewrite and of a
 * growing write, at block sizes 512, 4096 and 65536.  Then: the records
 * survive a second unclean stop before the file is opened; a forged
 * record is ignored (the torn unit stays EIO); after a clean stop no
 * record repairs anything (a unit damaged later stays EIO), not even with
 * a pinned bit or DIRTY set by hand in the header (#28 finding 4); the
 * journal is hidden from the mount.
 */
#include <criterion/criterion.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sc_crypto.h"
#include "sc_volume.h"
#include "sc_xlator.h"
#include "data_xl.h"
#include "sc_journal.h"
#include "sc_stack.h"
#include "sc_xl_env.h"

#define PAGE	4096

/* Tear the next in-place write at its g_tear_k-th page boundary (0: the first); -1: never. */
static long g_tear_k = -1;
static bool g_torn;

static size_t tear_hook(uint64_t off, size_t len)
{
	uint64_t b;

	if (g_tear_k < 0)
		return len;
	b = (off / PAGE + 1 + (uint64_t)g_tear_k) * PAGE;
	if (b >= off + len)
		return len;	/* no such boundary in this write: it goes whole */
	g_tear_k = -1;
	g_torn = true;
	return (size_t)(b - off);
}

static void env_up(struct env *e, uint32_t bs)
{
	env_up_in(e, "/tmp/sc-test-gtear.XXXXXX", SC_CIPHER_AES_GCM, bs);
	cr_assert_str_eq(e->top->ops->name, "gcm");
	sc_gcm_test_tear = tear_hook;
}

/* Stops the stack: an unmount, or (crash) as a kill -9 would leave things. */
static void env_stop(struct env *e, bool crash)
{
	file_close(e);
	sc_gcm_test_crashed = crash;
	sc_xl_stack_free(e->top);
	sc_gcm_test_crashed = false;
	close(e->root.fd);
}

/* Builds the next stack on the same backing and key: the next mount. */
static void env_start(struct env *e)
{
	static const struct sc_stack_hide hide = {
		.names	= { SC_CONFIG_NAME, SC_LOCK_NAME },
		.prefix	= SC_VOL_TMP_PREFIX,
	};
	struct sc_xl_conf conf = { .max_io = 1 << 20 };
	struct sc_stack_spec spec;

	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, e->mkey, &hide), 0);
	cr_assert_eq(sc_stack_new(&spec, &e->top), 0);
	e->root.fd = open(e->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(e->root.fd, 0);
	cr_assert_eq(sc_xl_stack_init(e->top, &e->root, &conf), 0);
}

static void env_restart(struct env *e, bool crash)
{
	env_stop(e, crash);
	env_start(e);
}

/* Opens "f" afresh; its size through the mount. */
static uint64_t file_open(struct env *e)
{
	struct stat st;
	int fd;

	cr_assert_eq(sc_xl_lookup(e->top, &e->root, "f", &fd, &st), 0);
	e->obj.fd = fd;
	e->obj.type = S_IFREG;
	memset(&e->fh, 0, sizeof(e->fh));
	e->fh.flags = O_RDWR;
	cr_assert_eq(sc_xl_open(e->top, &e->obj, &e->fh), 0);
	e->open = true;
	cr_assert_eq(sc_xl_getattr(e->top, &e->obj, &e->fh, &st), 0);
	return (uint64_t)st.st_size;
}

static uint8_t *pattern(size_t len, uint8_t seed)
{
	uint8_t *p = malloc(len);

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 13 + i / 4099);
	return p;
}

/*
 * The file (size sz) reads back whole, and each of its units is the old
 * content (old, old_sz bytes) or the new (nw, new_sz bytes) over that
 * unit's range.
 */
static void check_old_or_new(struct env *e, uint64_t sz, const uint8_t *old, uint64_t old_sz,
			     const uint8_t *nw, uint64_t new_sz, const char *what)
{
	uint8_t *got = malloc(sz + 1);
	ssize_t n = sc_xl_read(e->top, &e->obj, &e->fh, got, sz, 0);

	cr_assert_eq(n, (ssize_t)sz, "%s: read of %llu bytes: %zd", what,
		     (unsigned long long)sz, n);
	for (uint64_t u = 0; u * e->bs < sz; u++) {
		uint64_t a = u * e->bs, l = sz - a < e->bs ? sz - a : e->bs;
		bool is_old = a + l <= old_sz && memcmp(got + a, old + a, l) == 0;
		bool is_new = a + l <= new_sz && memcmp(got + a, nw + a, l) == 0;

		cr_assert(is_old || is_new, "%s: unit %llu is neither old nor new", what,
			  (unsigned long long)u);
	}
	free(got);
}

/*
 * A file of old_sz bytes, then the write [wo, wo + wl) torn at its k-th
 * page boundary, a crash, a new stack: old or new, never EIO.  Returns
 * false when the write has no k-th boundary (the caller's loop ends).
 */
static bool tear_one(uint32_t bs, uint64_t old_sz, uint64_t wo, uint64_t wl, long k)
{
	uint64_t new_sz = wo + wl > old_sz ? wo + wl : old_sz, sz;
	uint8_t *old = pattern(new_sz, 1), *data = pattern(wl, 101), *nw = calloc(1, new_sz);
	char what[96];
	struct env e;
	bool torn;

	memcpy(nw, old, old_sz);	/* a gap between old_sz and wo reads as zeros */
	memcpy(nw + wo, data, wl);
	env_up(&e, bs);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, old, old_sz, 0), (ssize_t)old_sz);
	env_restart(&e, false);
	cr_assert_eq(file_open(&e), old_sz);
	g_torn = false;
	g_tear_k = k;
	sz = (uint64_t)sc_xl_write(e.top, &e.obj, &e.fh, data, wl, (off_t)wo);
	g_tear_k = -1;
	torn = g_torn;
	snprintf(what, sizeof(what), "bs %u, write [%llu, +%llu) torn at boundary %ld", bs,
		 (unsigned long long)wo, (unsigned long long)wl, k);
	if (torn) {
		cr_assert_eq((ssize_t)sz, -EIO, "%s: the torn write returned %zd", what,
			     (ssize_t)sz);
		env_restart(&e, true);
		sz = file_open(&e);
		cr_assert(sz >= old_sz && sz <= new_sz, "%s: size %llu", what,
			  (unsigned long long)sz);
		check_old_or_new(&e, sz, old, old_sz, nw, new_sz, what);
	}
	env_down(&e);
	free(old);
	free(data);
	free(nw);
	return torn;
}

/* Every page boundary of one write. */
static void tear_everywhere(uint32_t bs, uint64_t old_sz, uint64_t wo, uint64_t wl)
{
	long k = 0;

	while (tear_one(bs, old_sz, wo, wl, k))
		k++;
	cr_assert_gt(k, 0, "bs %u: the write never crossed a page boundary", bs);
}

static uint64_t span(uint32_t bs)
{
	return bs < 3 * PAGE ? (3 * PAGE / bs) * bs : 2 * (uint64_t)bs;
}

Test(gcm_tear, rewrite_bs512)
{
	tear_everywhere(512, 40 * 512 + 100, 3 * 512 + 7, span(512));
}

Test(gcm_tear, rewrite_bs4096)
{
	tear_everywhere(4096, 8 * 4096 + 100, 4096, span(4096));
}

Test(gcm_tear, rewrite_bs65536, .timeout = 120)
{
	tear_everywhere(65536, 3 * 65536 + 100, 65536 + 5, 65536);
}

/* A growing write: the old partial last unit re-sealed whole, new units appended. */
Test(gcm_tear, append_bs512)
{
	tear_everywhere(512, 5 * 512 + 200, 5 * 512 + 300, span(512));
}

Test(gcm_tear, append_bs4096)
{
	tear_everywhere(4096, 2 * 4096 + 1000, 2 * 4096 + 1000, span(4096));
}

Test(gcm_tear, append_bs65536, .timeout = 120)
{
	tear_everywhere(65536, 65536 + 1000, 65536 + 1000, 2 * 65536);
}

/* A first write into a new file (header and units in one write) torn. */
Test(gcm_tear, first_write)
{
	tear_everywhere(4096, 0, 0, 3 * 4096 + 10);
}

/* Unit 1 of a 4-unit file at bs 4096 torn by a rewrite; the file is "f". */
static void torn_rewrite(struct env *e, uint8_t *old, uint8_t *nw)
{
	memset(old, 'a', 4 * 4096);
	memcpy(nw, old, 4 * 4096);
	memset(nw + 4096, 'b', 4096);
	env_up(e, 4096);
	file_create(e);
	cr_assert_eq(sc_xl_write(e->top, &e->obj, &e->fh, old, 4 * 4096, 0), 4 * 4096);
	g_tear_k = 0;
	cr_assert_eq(sc_xl_write(e->top, &e->obj, &e->fh, nw + 4096, 4096, 4096), -EIO);
	g_tear_k = -1;
}

Test(gcm_tear, records_survive_a_second_unclean_stop)
{
	static uint8_t old[4 * 4096], nw[4 * 4096];
	struct env e;

	torn_rewrite(&e, old, nw);
	env_restart(&e, true);
	env_restart(&e, true);	/* pinned, never resolved, then killed again */
	env_restart(&e, false);
	cr_assert_eq(file_open(&e), sizeof(old));
	check_old_or_new(&e, sizeof(old), old, sizeof(old), nw, sizeof(nw), "two crashes");
	/* resolved once, then dropped: a later clean run has nothing pinned */
	env_restart(&e, false);
	cr_assert_eq(file_open(&e), sizeof(old));
	check_old_or_new(&e, sizeof(old), old, sizeof(old), nw, sizeof(nw), "after");
	env_down(&e);
}

Test(gcm_tear, a_forged_record_repairs_nothing)
{
	static uint8_t old[4 * 4096], nw[4 * 4096], got[4096];
	char path[128];
	uint8_t b;
	struct env e;
	int fd;

	torn_rewrite(&e, old, nw);
	env_restart(&e, true);	/* records pinned now */
	env_stop(&e, true);	/* and killed before the file was opened */
	/*
	 * One byte of each pinned record's old_stored field (bytes 72..79; a
	 * rewrite does not use it, so only the MACs can tell), below the mount.
	 */
	snprintf(path, sizeof(path), "%s/%s", e.dir, SC_JRNL_NAME);
	fd = open(path, O_RDWR);
	cr_assert_geq(fd, 0);
	for (off_t off = SC_JRNL_HDR_BLOCK; pread(fd, &b, 1, off) == 1;
	     off += SC_JRNL_HDR_BLOCK) {
		uint8_t m[4];

		if (pread(fd, m, 4, off) == 4 && memcmp(m, "scjr", 4) == 0) {
			b = 0;
			cr_assert_eq(pread(fd, &b, 1, off + 72), 1);
			b ^= 0x10;
			cr_assert_eq(pwrite(fd, &b, 1, off + 72), 1);
		}
	}
	close(fd);
	env_start(&e);
	cr_assert_eq(file_open(&e), sizeof(old));
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, got, 4096, 0), 4096);
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, got, 4096, 4096), -EIO,
		     "a unit was restored from a forged record");
	env_down(&e);
}

/* Byte off of the backing file rel, XORed with x (never a fixed value). */
static void flip_at(struct env *e, const char *rel, off_t off, uint8_t x)
{
	char path[128];
	uint8_t b;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", e->dir, rel);
	fd = open(path, O_RDWR);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, &b, 1, off), 1);
	b ^= x;
	cr_assert_eq(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

/* A new stack and a file "f" of 4 units of 'd' whose unit 1 was then rewritten. */
static void four_units_unit_1_rewritten(struct env *e, uint8_t data[4 * 4096])
{
	memset(data, 'd', 4 * 4096);
	env_up(e, 4096);
	file_create(e);
	cr_assert_eq(sc_xl_write(e->top, &e->obj, &e->fh, data, 4 * 4096, 0), 4 * 4096);
	cr_assert_eq(sc_xl_write(e->top, &e->obj, &e->fh, data, 4096, 4096), 4096);
}

/* After a clean stop the run's records mean nothing: later damage stays EIO. */
static void damage_after_stop(bool crash, bool want_repaired)
{
	static uint8_t data[4 * 4096], got[4 * 4096];
	struct env e;

	four_units_unit_1_rewritten(&e, data);
	env_restart(&e, crash);
	file_close(&e);
	flip_at(&e, "f", (off_t)sc_gcm_unit_off(4096, 1) + 4000, 1);
	cr_assert_eq(file_open(&e), sizeof(data));
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, got, sizeof(got), 0),
		     want_repaired ? (ssize_t)sizeof(got) : -EIO);
	env_down(&e);
}

Test(gcm_tear, a_clean_stop_leaves_no_record)
{
	damage_after_stop(false, false);
}

/* The control of the test above: after a crash the same damage is within the journal's reach. */
Test(gcm_tear, an_unclean_stop_leaves_the_records)
{
	damage_after_stop(true, true);
}

/*
 * #28 finding 4, through the layer: after a clean stop, the journal's
 * header edited by hand (a pinned bit, or DIRTY) and a unit the last run
 * rewrote damaged: the next stack must not roll the unit back from the
 * run's record (the header's MAC refuses the journal; the unit is EIO).
 */
static void stale_header(off_t off)
{
	static uint8_t data[4 * 4096], got[4 * 4096];
	char path[128];
	uint32_t ver;
	struct env e;
	int fd;

	four_units_unit_1_rewritten(&e, data);
	env_stop(&e, false);
	snprintf(path, sizeof(path), "%s/%s", e.dir, SC_JRNL_NAME);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, &ver, sizeof(ver), 8), sizeof(ver));
	close(fd);
	if (off < 0)	/* the pinned bitmap: offset 48 (version 2), 40 (version 1) */
		off = le32toh(ver) == 1 ? 40 : 48;
	flip_at(&e, SC_JRNL_NAME, off, 1);
	flip_at(&e, "f", (off_t)sc_gcm_unit_off(4096, 1) + 4000, 1);
	env_start(&e);
	cr_assert_eq(file_open(&e), sizeof(data));
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, got, sizeof(got), 0), -EIO,
		     "a journal edited by hand rolled a damaged unit back");
	env_down(&e);
}

Test(gcm_tear, a_pinned_bit_set_by_hand_repairs_nothing)
{
	stale_header(-1);	/* pinned, bit 0 (docs/format.md 10.10) */
}

Test(gcm_tear, dirty_set_by_hand_repairs_nothing)
{
	stale_header(12);	/* flags: DIRTY */
}

Test(gcm_tear, the_journal_is_hidden)
{
	struct sc_fh cfh = { .flags = O_RDWR | O_CREAT | O_EXCL };
	struct stat st;
	struct env e;
	int fd;

	env_up(&e, 4096);
	cr_assert_eq(stat(e.dir, &st), 0);
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/%s", e.dir, SC_JRNL_NAME);
		cr_assert_eq(stat(path, &st), 0, "the mount made no journal");
	}
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, SC_JRNL_NAME, &fd, &st), -ENOENT);
	cr_assert_eq(sc_xl_create(e.top, &e.root, SC_JRNL_NAME, 0600, &cfh, &fd, &st), -EPERM);
	cr_assert_eq(sc_xl_unlink(e.top, &e.root, SC_JRNL_NAME), -ENOENT);
	env_down(&e);
}

/*
 * A file called sc.journal that is no journal (one a user made through a
 * mount before journals existed) is left alone: not truncated, not
 * hidden; the mount runs without a journal.
 */
Test(gcm_tear, a_file_named_like_the_journal_is_left_alone)
{
	static const char text[] = "not a journal: a user's file from an older mount";
	char path[128], got[sizeof(text)];
	struct stat st;
	struct env e;
	int fd;

	env_up(&e, 4096);
	env_stop(&e, false);
	snprintf(path, sizeof(path), "%s/%s", e.dir, SC_JRNL_NAME);
	fd = open(path, O_WRONLY | O_TRUNC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, sizeof(text)), (ssize_t)sizeof(text));
	close(fd);
	env_start(&e);
	cr_assert_eq(sc_xl_lookup(e.top, &e.root, SC_JRNL_NAME, &fd, &st), 0,
		     "the user's file is hidden");
	close(fd);
	env_stop(&e, false);
	fd = open(path, O_RDONLY);
	cr_assert_eq(read(fd, got, sizeof(got)), (ssize_t)sizeof(text));
	close(fd);
	cr_assert_eq(memcmp(got, text, sizeof(text)), 0, "the user's file was changed");
	env_start(&e);
	env_down(&e);
}

/*
 * A shrinking truncate re-seals its new partial last unit in place, then
 * cuts: torn inside that re-seal, the next open finishes the truncate
 * (the record's unit, then the cut), so the file reads as truncated.
 */
Test(gcm_tear, shrink)
{
	const uint64_t old_sz = 5 * 4096 + 100, new_sz = 2 * 4096 + 4000;
	uint8_t *old = pattern(old_sz, 7), *got = malloc(old_sz);
	struct stat attr = { .st_size = (off_t)new_sz }, st;
	struct env e;

	env_up(&e, 4096);
	file_create(&e);
	cr_assert_eq(sc_xl_write(e.top, &e.obj, &e.fh, old, old_sz, 0), (ssize_t)old_sz);
	g_torn = false;
	g_tear_k = 0;	/* unit 2's new 4032 stored bytes from 8296 cross 12288 */
	cr_assert_eq(sc_xl_setattr(e.top, &e.obj, &e.fh, &attr, SC_SET_SIZE, &st), -EIO);
	g_tear_k = -1;
	cr_assert(g_torn, "the re-seal was not torn");
	env_restart(&e, true);
	cr_assert_eq(file_open(&e), new_sz, "the truncate was not finished");
	cr_assert_eq(sc_xl_read(e.top, &e.obj, &e.fh, got, old_sz, 0), (ssize_t)new_sz);
	cr_assert_eq(memcmp(got, old, new_sz), 0);
	env_down(&e);
	free(old);
	free(got);
}
