/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_journal.c - the gcm layer's intent journal (fs/xlators/data/journal.c,
 * docs/format.md 10.10) on files held in memory: which records a clean and
 * an unclean stop leave pinned, that a forged or torn record is ignored,
 * and what resolution does to a torn rewrite, a torn append and a unit
 * that was never torn.  The layer's use of it is tested in test_gcm_xl.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <endian.h>
#include <string.h>

#include "sc_crypto.h"
#include "sc_journal.h"

#define BS	4096
#define SBS	(BS + SC_GCM_OVERHEAD)

/* A file in memory behind a struct sc_jio. */
struct mfile {
	uint8_t	*p;
	size_t	len;
	int	syncs;
};

static ssize_t m_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct mfile *f = ctx;

	if (off >= f->len)
		return 0;
	if (len > f->len - off)
		len = f->len - off;
	memcpy(buf, f->p + off, len);
	return (ssize_t)len;
}

static int m_truncate(void *ctx, uint64_t size)
{
	struct mfile *f = ctx;
	uint8_t *np = realloc(f->p, size ? size : 1);

	cr_assert_not_null(np);
	if (size > f->len)
		memset(np + f->len, 0, size - f->len);
	f->p = np;
	f->len = size;
	return 0;
}

static int m_pwrite(void *ctx, const void *buf, size_t len, uint64_t off)
{
	struct mfile *f = ctx;

	if (off + len > f->len)
		m_truncate(f, off + len);
	memcpy(f->p + off, buf, len);
	return 0;
}

static int m_sync(void *ctx)
{
	((struct mfile *)ctx)->syncs++;
	return 0;
}

static int m_size(void *ctx, uint64_t *size)
{
	*size = ((struct mfile *)ctx)->len;
	return 0;
}

static struct sc_jio mio(struct mfile *f)
{
	return (struct sc_jio){ .ctx = f, .pread = m_pread, .pwrite = m_pwrite,
				.truncate = m_truncate, .sync = m_sync, .size = m_size };
}

static struct sc_mkey *new_mkey(void)
{
	uint8_t mk[SC_MASTER_KEY_LEN];
	struct sc_mkey *k;

	cr_assert_eq(sc_random(mk, sizeof(mk)), 0);
	cr_assert_eq(sc_mkey_new(mk, SC_CIPHER_AES_GCM, BS, &k), 0);
	sc_wipe(mk, sizeof(mk));
	return k;
}

/* A data file of n whole units of byte value v, and its key. */
static struct sc_gkey *data_file(struct sc_mkey *mk, struct mfile *f, unsigned n, uint8_t v)
{
	uint8_t hdr[SC_GHDR_SIZE], *pt = malloc((size_t)n * BS);
	struct sc_gkey *gk;

	cr_assert_eq(sc_ghdr_new(mk, hdr), 0);
	cr_assert_eq(sc_gkey_new(mk, hdr, sizeof(hdr), &gk), 0);
	memset(f, 0, sizeof(*f));
	m_pwrite(f, hdr, sizeof(hdr), 0);
	memset(pt, v, (size_t)n * BS);
	m_truncate(f, SC_GHDR_SIZE + (size_t)n * SBS);
	cr_assert_eq(sc_gcm_seal(gk, 0, pt, (size_t)n * BS, f->p + SC_GHDR_SIZE), 0);
	free(pt);
	return gk;
}

/* Unit u of f opens to all v. */
static bool unit_is(struct sc_gkey *gk, const struct mfile *f, uint64_t u, uint8_t v)
{
	uint64_t off = sc_gcm_unit_off(BS, u);
	uint8_t pt[BS];

	if (off + SBS > f->len || sc_gcm_open(gk, u, f->p + off, SBS, pt, NULL) != BS)
		return false;
	for (int i = 0; i < BS; i++)
		if (pt[i] != v)
			return false;
	return true;
}

/*
 * Journals a rewrite of units [u, u + n) of f to byte value v: the record,
 * then (torn_at: bytes of the in-place write that land) the write itself.
 */
static void rewrite(struct sc_jrnl *j, struct sc_gkey *gk, struct mfile *f, uint64_t u,
		    unsigned n, uint8_t v, size_t torn_at)
{
	uint8_t *rec = malloc(SC_JRNL_REC_SIZE + (size_t)n * SBS), *pt = malloc((size_t)n * BS);
	int slot;

	memset(pt, v, (size_t)n * BS);
	cr_assert_eq(sc_gcm_seal(gk, u, pt, (size_t)n * BS, rec + SC_JRNL_REC_SIZE), 0);
	cr_assert_eq(sc_jrnl_begin(j, sc_gkey_file_id(gk), u, n, n, f->len, rec,
				   (size_t)n * SBS, &slot), 0);
	cr_assert_geq(slot, 0);
	m_pwrite(f, rec + SC_JRNL_REC_SIZE, torn_at, sc_gcm_unit_off(BS, u));
	sc_jrnl_end(j, slot);
	free(rec);
	free(pt);
}

static struct sc_jrnl *jopen(struct sc_mkey *mk, struct mfile *jf, enum sc_jrnl_mode mode)
{
	struct sc_jio io = mio(jf);
	struct sc_jrnl *j;

	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, mode, &j), 0);
	return j;
}

static void count_fix(void *ctx, const struct sc_jfix *f)
{
	(void)f;
	(*(int *)ctx)++;
}

Test(journal, a_clean_stop_pins_nothing_an_unclean_one_pins_the_runs_records)
{
	struct sc_mkey *mk = new_mkey();
	struct mfile jf = { 0 }, df;
	struct sc_gkey *gk = data_file(mk, &df, 4, 'a');
	struct sc_jrnl *j = jopen(mk, &jf, SC_JRNL_MOUNT);
	struct sc_jio dio = mio(&df);

	rewrite(j, gk, &df, 1, 1, 'b', SBS);
	sc_jrnl_close(j, true);
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_pinned(j), 0, "a clean stop left a pinned record");
	rewrite(j, gk, &df, 2, 1, 'c', SBS);
	sc_jrnl_close(j, false);	/* kill -9 */
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	/* only the crashed run's record: the clean run's stale one is not pinned */
	cr_assert_eq(sc_jrnl_pinned(j), 1);
	cr_assert(sc_jrnl_has(j, sc_gkey_file_id(gk)));
	sc_jrnl_close(j, false);	/* a second crash before resolution */
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_pinned(j), 1, "a second unclean stop lost the pinned record");
	/* nothing torn: resolution fixes nothing and drops the record */
	cr_assert_eq(sc_jrnl_resolve(j, gk, &dio, true, NULL, NULL), 0);
	cr_assert_eq(sc_jrnl_pinned(j), 0);
	sc_jrnl_close(j, true);
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_pinned(j), 0, "a resolved record came back");
	sc_jrnl_close(j, true);
	sc_gkey_free(gk);
	free(df.p);
	free(jf.p);
	sc_mkey_free(mk);
}

Test(journal, a_torn_rewrite_gets_its_new_content)
{
	struct sc_mkey *mk = new_mkey();
	struct mfile jf = { 0 }, df;
	struct sc_gkey *gk = data_file(mk, &df, 4, 'a');
	struct sc_jrnl *j = jopen(mk, &jf, SC_JRNL_MOUNT);
	struct sc_jio dio = mio(&df);
	int fixes = 0;

	/* unit 2 torn at the first page boundary inside it: new head, old tail */
	rewrite(j, gk, &df, 2, 1, 'b',
		4096 - sc_gcm_unit_off(BS, 2) % 4096);
	cr_assert(!unit_is(gk, &df, 2, 'a') && !unit_is(gk, &df, 2, 'b'));
	sc_jrnl_close(j, false);
	j = jopen(mk, &jf, SC_JRNL_INSPECT);
	cr_assert_eq(sc_jrnl_resolve(j, gk, &dio, false, count_fix, &fixes), 1);
	cr_assert(!unit_is(gk, &df, 2, 'b'), "report mode wrote");
	sc_jrnl_close(j, false);
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_resolve(j, gk, &dio, true, count_fix, &fixes), 1);
	cr_assert_eq(fixes, 2);
	cr_assert(unit_is(gk, &df, 2, 'b'), "the torn unit was not restored");
	cr_assert(unit_is(gk, &df, 1, 'a') && unit_is(gk, &df, 3, 'a'));
	cr_assert_eq(df.syncs, 1, "the repair was not synced");
	cr_assert_eq(sc_jrnl_pinned(j), 0);
	sc_jrnl_close(j, true);
	sc_gkey_free(gk);
	free(df.p);
	free(jf.p);
	sc_mkey_free(mk);
}

Test(journal, a_torn_append_is_cut_back_to_the_units_start)
{
	struct sc_mkey *mk = new_mkey();
	struct mfile jf = { 0 }, df;
	struct sc_gkey *gk = data_file(mk, &df, 2, 'a');
	struct sc_jrnl *j = jopen(mk, &jf, SC_JRNL_MOUNT);
	struct sc_jio dio = mio(&df);
	uint8_t rec[SC_JRNL_REC_SIZE], pt[2 * BS], st[2 * SBS];
	uint64_t old = df.len;
	int slot;

	memset(pt, 'n', sizeof(pt));
	cr_assert_eq(sc_gcm_seal(gk, 2, pt, sizeof(pt), st), 0);
	cr_assert_eq(sc_jrnl_begin(j, sc_gkey_file_id(gk), 2, 2, 0, old, rec, 0, &slot), 0);
	m_pwrite(&df, st, SBS + 100, old);	/* unit 3 cut after 100 bytes */
	sc_jrnl_end(j, slot);
	sc_jrnl_close(j, false);
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_resolve(j, gk, &dio, true, NULL, NULL), 1);
	cr_assert_eq(df.len, old + SBS, "not cut back to unit 3's start");
	cr_assert(unit_is(gk, &df, 2, 'n'));
	sc_jrnl_close(j, true);
	sc_gkey_free(gk);
	free(df.p);
	free(jf.p);
	sc_mkey_free(mk);
}

Test(journal, a_forged_record_is_ignored)
{
	struct sc_mkey *mk = new_mkey();
	struct mfile jf = { 0 }, df;
	struct sc_gkey *gk = data_file(mk, &df, 4, 'a');
	struct sc_jrnl *j = jopen(mk, &jf, SC_JRNL_MOUNT);

	rewrite(j, gk, &df, 1, 1, 'b', 100);
	sc_jrnl_close(j, false);
	jf.p[SC_JRNL_HDR_BLOCK + 40] ^= 1;	/* the record's "first" field, under its MAC */
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_pinned(j), 0, "a record with a bad MAC was pinned");
	cr_assert(!unit_is(gk, &df, 1, 'a') && !unit_is(gk, &df, 1, 'b'));
	sc_jrnl_close(j, true);
	sc_gkey_free(gk);
	free(df.p);
	free(jf.p);
	sc_mkey_free(mk);
}

/*
 * #28 finding 8: a header whose slot size is out of bounds (2 MiB, a
 * multiple of 4096 the old check let through) is not a journal of ours.
 */
Test(journal, a_slot_size_out_of_bounds_is_refused)
{
	struct sc_mkey *mk = new_mkey();
	struct mfile jf = { 0 };
	struct sc_jio io = mio(&jf);
	struct sc_jrnl *j = jopen(mk, &jf, SC_JRNL_MOUNT);
	uint32_t big = htole32(2u * 1024 * 1024);

	sc_jrnl_close(j, true);
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_INSPECT, &j), 0, "the clean journal opens");
	sc_jrnl_close(j, true);
	memcpy(jf.p + 24, &big, sizeof(big));	/* slot_size (docs/format.md 10.10) */
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_INSPECT, &j), -EUCLEAN,
		     "a 2 MiB slot size was accepted");
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_MOUNT, &j), -EUCLEAN);
	free(jf.p);
	sc_mkey_free(mk);
}

/* A file of that name that is no journal (made before journals) is never overwritten. */
Test(journal, only_an_empty_file_becomes_a_journal)
{
	static const char text[] = "a user's file that happens to be called sc.journal, "
				   "longer than a journal header";
	struct sc_mkey *mk = new_mkey();
	struct mfile jf = { 0 };
	struct sc_jio io = mio(&jf);
	struct sc_jrnl *j;

	m_pwrite(&jf, text, sizeof(text), 0);
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_INSPECT, &j), -EUCLEAN);
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_MOUNT, &j), -EUCLEAN);
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_REPAIR, &j), -EUCLEAN);
	cr_assert(jf.len == sizeof(text) && memcmp(jf.p, text, sizeof(text)) == 0,
		  "the file was changed");
	m_truncate(&jf, 0);
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_INSPECT, &j), -ENOENT);
	cr_assert_eq(sc_jrnl_open(mk, NULL, 512, &io, SC_JRNL_MOUNT, &j), 0);
	sc_jrnl_close(j, true);
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_MOUNT, &j), -EUCLEAN,
		     "a journal of another unit size was accepted");
	free(jf.p);
	sc_mkey_free(mk);
}

/* Byte off of f's copy, XORed with x (never a fixed value: that could be a no-op). */
static void flip(struct mfile *f, size_t off, uint8_t x)
{
	cr_assert_lt(off, f->len);
	f->p[off] ^= x;
}

/*
 * #28 finding 4: a journal of a clean run put back, with a pinned bit (or
 * DIRTY) set by hand, and a unit of the file damaged: no record of it may
 * roll the unit back; the header's MAC refuses the journal whole.
 */
static void stale_journal(size_t off, uint8_t x)
{
	struct sc_mkey *mk = new_mkey();
	struct mfile jf = { 0 }, df, old;
	struct sc_gkey *gk = data_file(mk, &df, 4, 'a');
	struct sc_jrnl *j = jopen(mk, &jf, SC_JRNL_MOUNT);
	struct sc_jio io;

	rewrite(j, gk, &df, 1, 1, 'b', SBS);
	sc_jrnl_close(j, true);
	old = (struct mfile){ .p = malloc(jf.len), .len = jf.len };
	memcpy(old.p, jf.p, jf.len);
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	rewrite(j, gk, &df, 1, 1, 'c', SBS);
	sc_jrnl_close(j, true);
	free(jf.p);
	jf = old;	/* put back */
	io = mio(&jf);
	flip(&jf, off, x);
	flip(&df, sc_gcm_unit_off(BS, 1) + 100, 0x20);
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_INSPECT, &j), -EBADMSG,
		     "a journal edited by hand was read");
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_MOUNT, &j), -EBADMSG,
		     "a journal edited by hand was used");
	cr_assert(!unit_is(gk, &df, 1, 'b') && !unit_is(gk, &df, 1, 'c'));
	sc_gkey_free(gk);
	free(df.p);
	free(jf.p);
	sc_mkey_free(mk);
}

Test(journal, a_stale_journal_with_a_pinned_bit_set_is_refused)
{
	stale_journal(48, 1);	/* pinned, bit 0 (docs/format.md 10.10) */
}

Test(journal, a_stale_journal_with_dirty_set_is_refused)
{
	stale_journal(12, 1);	/* flags: DIRTY */
}

/* A clean stop clears the record headers it wrote: nothing is left to pin. */
Test(journal, a_clean_stop_clears_its_records)
{
	static const uint8_t zero[SC_JRNL_REC_SIZE];
	struct sc_mkey *mk = new_mkey();
	struct mfile jf = { 0 }, df;
	struct sc_gkey *gk = data_file(mk, &df, 4, 'a');
	struct sc_jrnl *j = jopen(mk, &jf, SC_JRNL_MOUNT);
	uint32_t slot_size;

	rewrite(j, gk, &df, 1, 1, 'b', SBS);
	rewrite(j, gk, &df, 2, 1, 'b', SBS);
	cr_assert_eq(memcmp(jf.p + SC_JRNL_HDR_BLOCK, "scjr", 4), 0, "no record was written");
	sc_jrnl_close(j, true);
	memcpy(&slot_size, jf.p + 24, sizeof(slot_size));	/* docs/format.md 10.10 */
	for (size_t off = SC_JRNL_HDR_BLOCK; off + sizeof(zero) <= jf.len;
	     off += le32toh(slot_size))
		cr_assert_eq(memcmp(jf.p + off, zero, sizeof(zero)), 0,
			     "a record header at %zu survived a clean stop", off);
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_pinned(j), 0);
	sc_jrnl_close(j, false);
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_pinned(j), 0, "a record of a clean run was pinned after a crash");
	sc_jrnl_close(j, true);
	sc_gkey_free(gk);
	free(df.p);
	free(jf.p);
	sc_mkey_free(mk);
}

/* A pinned record swapped for another valid one breaks the header's MAC. */
Test(journal, a_pinned_record_cannot_be_swapped)
{
	struct sc_mkey *mk = new_mkey();
	struct mfile jf = { 0 }, df;
	struct sc_gkey *gk = data_file(mk, &df, 4, 'a');
	struct sc_jrnl *j = jopen(mk, &jf, SC_JRNL_MOUNT);
	struct sc_jio io = mio(&jf);
	uint32_t slot_size;
	size_t s1;

	rewrite(j, gk, &df, 1, 1, 'b', 100);	/* slot 0 */
	sc_jrnl_close(j, false);
	j = jopen(mk, &jf, SC_JRNL_MOUNT);	/* slot 0 pinned */
	cr_assert_eq(sc_jrnl_pinned(j), 1);
	rewrite(j, gk, &df, 3, 1, 'c', SBS);	/* slot 1, a valid record of this run */
	sc_jrnl_close(j, false);
	memcpy(&slot_size, jf.p + 24, sizeof(slot_size));	/* docs/format.md 10.10 */
	s1 = SC_JRNL_HDR_BLOCK + le32toh(slot_size);
	cr_assert_eq(memcmp(jf.p + s1, "scjr", 4), 0);
	memcpy(jf.p + SC_JRNL_HDR_BLOCK, jf.p + s1, SC_JRNL_REC_SIZE + SBS);
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_MOUNT, &j), -EBADMSG,
		     "a pinned slot's record was swapped unnoticed");
	sc_gkey_free(gk);
	free(df.p);
	free(jf.p);
	sc_mkey_free(mk);
}

/*
 * An older build's (version 1) journal, DIRTY (run 7) when dirty, holding
 * a record of that run for unit u of gk's file whose new content is the
 * sealed unit nw (docs/format.md 10.10, "Version 1").
 */
static void v1_journal(struct sc_mkey *mk, struct mfile *jf, struct sc_gkey *gk, uint64_t u,
		       const uint8_t *nw, bool dirty)
{
	uint8_t h[64] = "scjournl", r[80] = "scjr", mac[32];
	uint32_t v32;
	uint64_t v64;

	memset(jf, 0, sizeof(*jf));
#define PUT32(b, off, v) (v32 = htole32(v), memcpy((b) + (off), &v32, 4))
#define PUT64(b, off, v) (v64 = htole64(v), memcpy((b) + (off), &v64, 8))
	PUT32(h, 8, 1);
	PUT32(h, 12, dirty ? 1 : 0);
	PUT32(h, 16, BS);
	PUT32(h, 20, 16);
	PUT32(h, 24, 266240);
	PUT64(h, 32, 7);
	r[4] = 1;
	PUT32(r, 8, 1);
	PUT32(r, 12, SBS);
	PUT64(r, 16, UINT64_C(7) << 32 | 1);
	memcpy(r + 24, sc_gkey_file_id(gk), SC_GCM_FILE_ID_LEN);
	PUT64(r, 40, u);
	PUT64(r, 48, 1);
	PUT64(r, 56, SC_GHDR_SIZE + 4 * SBS);
#undef PUT32
#undef PUT64
	cr_assert_eq(sc_jrnl_mac(mk, r, 64, mac), 0);
	memcpy(r + 64, mac, 16);
	m_pwrite(jf, h, sizeof(h), 0);
	m_pwrite(jf, r, sizeof(r), SC_JRNL_HDR_BLOCK);
	m_pwrite(jf, nw, SBS, SC_JRNL_HDR_BLOCK + sizeof(r));
}

/*
 * A version 1 journal with crash records: the mount leaves it alone
 * (-EPROTO: its header proves nothing), fsck reports its record, and
 * fsck --repair applies it and leaves a version 2 journal.
 */
Test(journal, a_version_1_journal_with_records_is_only_for_fsck)
{
	struct sc_mkey *mk = new_mkey();
	struct mfile jf, df, before;
	struct sc_gkey *gk = data_file(mk, &df, 4, 'a');
	struct sc_jio io, dio = mio(&df);
	uint8_t pt[BS], nw[SBS];
	struct sc_jrnl *j;
	uint32_t ver;

	memset(pt, 'b', sizeof(pt));
	cr_assert_eq(sc_gcm_seal(gk, 2, pt, BS, nw), 0);
	v1_journal(mk, &jf, gk, 2, nw, true);
	io = mio(&jf);
	memcpy(df.p + sc_gcm_unit_off(BS, 2), nw, 1000);	/* torn: new head, old tail */
	before = (struct mfile){ .p = malloc(jf.len), .len = jf.len };
	memcpy(before.p, jf.p, jf.len);
	cr_assert_eq(sc_jrnl_open(mk, NULL, BS, &io, SC_JRNL_MOUNT, &j), -EPROTO);
	cr_assert(jf.len == before.len && !memcmp(jf.p, before.p, jf.len), "the mount wrote");
	j = jopen(mk, &jf, SC_JRNL_INSPECT);
	cr_assert_eq(sc_jrnl_pinned(j), 1);
	cr_assert_eq(sc_jrnl_resolve(j, gk, &dio, false, NULL, NULL), 1);
	sc_jrnl_close(j, true);
	j = jopen(mk, &jf, SC_JRNL_REPAIR);
	cr_assert_eq(sc_jrnl_resolve(j, gk, &dio, true, NULL, NULL), 1);
	sc_jrnl_close(j, true);
	cr_assert(unit_is(gk, &df, 2, 'b'), "the version 1 record was not applied");
	memcpy(&ver, jf.p + 8, sizeof(ver));
	cr_assert_eq(le32toh(ver), 2, "fsck --repair left a version 1 journal");
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_pinned(j), 0);
	sc_jrnl_close(j, true);
	free(before.p);
	sc_gkey_free(gk);
	free(df.p);
	free(jf.p);
	sc_mkey_free(mk);
}

/* A version 1 journal with nothing pending becomes a version 2 one at mount. */
Test(journal, a_clean_version_1_journal_is_replaced)
{
	struct sc_mkey *mk = new_mkey();
	struct mfile jf, df;
	struct sc_gkey *gk = data_file(mk, &df, 4, 'a');
	uint8_t nw[SBS] = { 0 };
	struct sc_jrnl *j;
	uint32_t ver;

	v1_journal(mk, &jf, gk, 2, nw, false);
	j = jopen(mk, &jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_pinned(j), 0);
	sc_jrnl_close(j, true);
	memcpy(&ver, jf.p + 8, sizeof(ver));
	cr_assert_eq(le32toh(ver), 2);
	sc_gkey_free(gk);
	free(df.p);
	free(jf.p);
	sc_mkey_free(mk);
}

/* ---- the dirty table (version 3, integrity volumes: docs/format.md 11.8) ---- */

static struct sc_jrnl *jopen_ik(struct sc_mkey *mk, const struct sc_ikey *ik, struct mfile *jf,
				enum sc_jrnl_mode mode)
{
	struct sc_jio io = mio(jf);
	struct sc_jrnl *j;

	cr_assert_eq(sc_jrnl_open(mk, ik, BS, &io, mode, &j), 0);
	return j;
}

/* A key, its integrity keys and a journal file in memory. */
struct dtfx {
	struct sc_mkey	*mk;
	struct sc_ikey	*ik;
	struct mfile	jf;
};

static void dtfx_init(struct dtfx *x)
{
	memset(x, 0, sizeof(*x));
	x->mk = new_mkey();
	cr_assert_eq(sc_ikey_new(x->mk, false, &x->ik), 0);
}

static void dtfx_free(struct dtfx *x)
{
	free(x->jf.p);
	sc_ikey_free(x->ik);
	sc_mkey_free(x->mk);
}

static uint32_t jversion(const struct mfile *jf)
{
	uint32_t v;

	memcpy(&v, jf->p + 8, sizeof(v));
	return le32toh(v);
}

Test(journal, an_entry_of_an_unclean_stop_is_pinned_until_resolved)
{
	struct dtfx x;
	uint8_t id[SC_GCM_FILE_ID_LEN], other[SC_GCM_FILE_ID_LEN];
	struct sc_jrnl *j;
	int idx, idx2, found;

	dtfx_init(&x);
	cr_assert_eq(sc_random(id, sizeof(id)), 0);
	memcpy(other, id, sizeof(id));
	other[0] ^= 1;
	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_MOUNT);
	cr_assert_eq(jversion(&x.jf), 3, "an integrity volume's journal is version 3");
	cr_assert(sc_jrnl_has_table(j));
	cr_assert_eq(sc_jrnl_dirty_begin(j, id, 5, &idx), 0);
	cr_assert_eq(sc_jrnl_dirty_begin(j, other, 2, &idx2), 0);
	cr_assert_eq(sc_jrnl_dirty_end(j, idx2), 0, "a committed session's entry is zeroed");
	cr_assert_eq(sc_jrnl_dirty_find(j, id, 5), -1, "a running session is not pinned");
	sc_jrnl_close(j, false);			/* killed with the session open */

	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_dirty_pinned(j), 1, "only the open session's entry is pinned");
	cr_assert_eq(sc_jrnl_dirty_find(j, other, 2), -1);
	cr_assert_eq(sc_jrnl_dirty_find(j, id, 4), -1, "a header older than the session");
	found = sc_jrnl_dirty_find(j, id, 6);
	cr_assert_geq(found, 0, "a header whose gen a rebind raised still matches");
	sc_jrnl_close(j, true);				/* a clean stop keeps it: never opened */

	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_INSPECT);
	cr_assert_eq(sc_jrnl_dirty_pinned(j), 1, "carried through a clean stop");
	sc_jrnl_close(j, false);
	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_MOUNT);
	found = sc_jrnl_dirty_find(j, id, 5);
	cr_assert_geq(found, 0);
	cr_assert_eq(sc_jrnl_dirty_end(j, found), 0, "reconciled");
	sc_jrnl_close(j, false);
	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_dirty_pinned(j), 0, "a resolved entry is gone, even after a kill");
	sc_jrnl_close(j, true);
	dtfx_free(&x);
}

/*
 * A create's entry names its place by the create tag, a rename's the file
 * and where it goes (format.md 11.8): each found as its own kind only,
 * never as a file session's or the other's of the same 16 bytes, a
 * rename's only for a header at its gen or later, and after a kill pinned
 * like any other until resolved.
 */
Test(journal, place_entries_are_kinds_of_their_own)
{
	static const uint8_t nonce[SC_DIRNONCE_LEN] = { 7 };
	struct sc_dirplace at = { nonce, "QUJD", 4 }, at2 = { nonce, "QUJE", 4 };
	uint8_t tag[SC_INTEG_TAG_LEN], tag2[SC_INTEG_TAG_LEN];
	struct dtfx x;
	struct sc_jrnl *j;
	int idx, idx2, found;

	dtfx_init(&x);
	cr_assert_eq(sc_integ_create_tag(x.ik, &at, tag), 0);
	cr_assert_eq(sc_integ_create_tag(x.ik, &at2, tag2), 0);
	cr_assert_neq(memcmp(tag, tag2, sizeof(tag)), 0, "another name, another tag");
	cr_assert_eq(sc_integ_create_tag(x.ik, &(struct sc_dirplace){ NULL, "QUJD", 4 }, tag2),
		     -EINVAL, "the root's place is no entry's");
	memcpy(tag2, tag, sizeof(tag));
	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_place_begin(j, SC_JRNL_CREATE, tag, 0, &idx), 0);
	cr_assert_eq(sc_jrnl_place_begin(j, SC_JRNL_CREATE, tag, 0, &idx2), 0);
	cr_assert_eq(sc_jrnl_dirty_end(j, idx2), 0, "a create whose header was stored");
	cr_assert_eq(sc_jrnl_place_find(j, SC_JRNL_CREATE, tag, 0), -1,
		     "a running create is not pinned");
	/* a rename's entry with the same 16 bytes: another kind */
	cr_assert_eq(sc_jrnl_place_begin(j, SC_JRNL_RENAME, tag2, 5, &idx2), 0);
	sc_jrnl_close(j, false);			/* killed inside both */

	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_dirty_pinned(j), 2);
	cr_assert_eq(sc_jrnl_dirty_find(j, tag, 0), -1, "not a file session's entry");
	cr_assert_eq(sc_jrnl_dirty_find(j, tag, UINT64_MAX), -1);
	cr_assert_eq(sc_jrnl_place_find(j, SC_JRNL_RENAME, tag2, 4), -1,
		     "a header older than the rename (the create's gen 0 is no match either)");
	found = sc_jrnl_place_find(j, SC_JRNL_CREATE, tag, 0);
	idx2 = sc_jrnl_place_find(j, SC_JRNL_RENAME, tag2, 6);
	cr_assert_geq(found, 0, "carried into the new run, pinned");
	cr_assert_geq(idx2, 0, "a header the rebind raised");
	cr_assert_neq(found, idx2, "each kind finds its own entry");
	cr_assert_eq(sc_jrnl_dirty_end(j, idx2), 0);
	cr_assert_eq(sc_jrnl_place_find(j, SC_JRNL_RENAME, tag2, 6), -1, "not the create's");
	cr_assert_eq(sc_jrnl_place_find(j, SC_JRNL_CREATE, tag, 0), found);
	cr_assert_eq(sc_jrnl_dirty_end(j, found), 0, "resolved at the file's first use");
	sc_jrnl_close(j, false);
	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_dirty_pinned(j), 0, "a resolved create is gone, even after a kill");
	sc_jrnl_close(j, true);
	dtfx_free(&x);
}

Test(journal, a_forged_or_foreign_entry_is_ignored)
{
	struct dtfx x;
	uint8_t id[SC_GCM_FILE_ID_LEN];
	struct sc_jrnl *j;
	int idx;

	dtfx_init(&x);
	cr_assert_eq(sc_random(id, sizeof(id)), 0);
	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_dirty_begin(j, id, 1, &idx), 0);
	sc_jrnl_close(j, false);
	/* the entry's gen raised by hand: its MAC fails */
	x.jf.p[SC_JRNL_HDR_BLOCK + (size_t)idx * SC_DIRTY_ENTRY_LEN + 40] ^= 0x01;
	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_MOUNT);
	cr_assert_eq(sc_jrnl_dirty_pinned(j), 0, "an edited entry counts for nothing");
	sc_jrnl_close(j, true);
	dtfx_free(&x);
}

Test(journal, versions_follow_the_volume)
{
	struct dtfx x;
	struct sc_jio io;
	uint8_t id[SC_GCM_FILE_ID_LEN] = { 1 };
	struct sc_jrnl *j;
	int idx;

	dtfx_init(&x);
	j = jopen(x.mk, &x.jf, SC_JRNL_MOUNT);
	cr_assert_eq(jversion(&x.jf), 2, "other volumes keep version 2");
	cr_assert_not(sc_jrnl_has_table(j));
	cr_assert_eq(sc_jrnl_dirty_begin(j, id, 1, &idx), -EOPNOTSUPP);
	sc_jrnl_close(j, true);
	j = jopen(x.mk, &x.jf, SC_JRNL_MOUNT);		/* mounts again as version 2 */
	cr_assert_eq(jversion(&x.jf), 2);
	sc_jrnl_close(j, true);
	/* an integrity volume's clean version 2 journal becomes version 3 */
	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_MOUNT);
	cr_assert_eq(jversion(&x.jf), 3);
	cr_assert(sc_jrnl_has_table(j));
	sc_jrnl_close(j, true);
	/* and a version 3 journal is none of another volume's */
	io = mio(&x.jf);
	cr_assert_eq(sc_jrnl_open(x.mk, NULL, BS, &io, SC_JRNL_MOUNT, &j), -EUCLEAN);
	dtfx_free(&x);
}

Test(journal, a_full_table_says_so_and_a_freed_entry_is_used_again)
{
	uint8_t id[SC_GCM_FILE_ID_LEN] = { 7 };
	struct dtfx x;
	struct sc_jrnl *j;
	int idx = -1, last = -1, n = 0;

	dtfx_init(&x);
	j = jopen_ik(x.mk, x.ik, &x.jf, SC_JRNL_MOUNT);
	while (sc_jrnl_dirty_begin(j, id, 1, &idx) == 0) {
		last = idx;
		n++;
		cr_assert_leq(n, 65536, "the table never fills");
	}
	cr_assert_eq(n, 4096, "a new table has 4096 entries, got %d", n);
	cr_assert_eq(sc_jrnl_dirty_begin(j, id, 1, &idx), -ENOSPC);
	cr_assert_eq(idx, -1);
	cr_assert_eq(sc_jrnl_dirty_end(j, last), 0);
	cr_assert_eq(sc_jrnl_dirty_begin(j, id, 1, &idx), 0, "a freed entry is taken again");
	cr_assert_eq(idx, last);
	sc_jrnl_close(j, true);
	dtfx_free(&x);
}
