/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_span.c - the data engine's unit arithmetic (fs/xlators/data/span.c).
 *
 * Besides hand-picked cases, a model check: every stored unit carries the
 * "encoding" it was written with (its length, and whether it is tiny, or
 * the head or tail of a 16-byte tail group).  For size changes and writes
 * over all small sizes (exhaustively for truncates, randomly for writes),
 * it applies a plan to a model disk on which every old unit holds data, and
 * checks that afterwards every unit holds data encoded for the new size or
 * is a hole the hole rule can represent, that every range handed to the
 * crypto library obeys the range rules of sc_crypto.h (checked by a copy of
 * those rules), that the write's units are all stored, that runs ascend,
 * and that no more than the written units plus four are re-encrypted.
 * A small block size (64) keeps the search small; the arithmetic does not
 * depend on it beyond bs > 16.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "span.h"

#define MAXU	16

struct unit {
	bool		data;
	uint64_t	len;
	int		role;	/* 0 plain, 1 group head, 2 group tail, 3 tiny */
};

static int role_of(uint64_t bs, uint64_t sz, uint64_t u)
{
	uint64_t n = sc_data_nunits(bs, sz);

	if (sz < 16)
		return 3;
	if (sc_data_short_tail(bs, sz) && u == n - 2)
		return 1;
	if (sc_data_short_tail(bs, sz) && u == n - 1)
		return 2;
	return 0;
}

static uint64_t len_of(uint64_t bs, uint64_t sz, uint64_t u)
{
	return sz - u * bs < bs ? sz - u * bs : bs;
}

/* The range rules of sc_fkey_encrypt/decrypt (sc_crypto.h), restated. */
static bool range_ok(uint64_t bs, uint64_t off, uint64_t end, uint64_t sz)
{
	uint64_t last;

	if (off % bs || end <= off || end > sz || (end % bs && end != sz))
		return false;
	if (sz < 16)
		return off == 0 && end == sz;
	last = (sz - 1) / bs * bs;
	if (sz - last < 16) {
		if (end == last)	/* the group head without its tail */
			return false;
		if (end == sz && off + bs > last)	/* the tail without its head */
			return false;
	}
	return true;
}

static char ctx[200];

#define EXPECT(cond, ...) do {						\
	if (!(cond)) {							\
		cr_log_error("%s", ctx);				\
		cr_assert_fail(__VA_ARGS__);				\
	}								\
} while (0)

/* Applies plan p (old -> new, write [wo, we)) to a model disk and checks it. */
static void check_plan(uint64_t bs, uint64_t old_sz, uint64_t new_sz, uint64_t wo, uint64_t we,
		       bool direct_ok)
{
	struct unit disk[MAXU] = { 0 };
	struct sc_data_plan p;
	uint64_t no = sc_data_nunits(bs, old_sz), nn = sc_data_nunits(bs, new_sz);
	uint64_t written = 0, wunits = 0;
	bool unit0 = false;

	snprintf(ctx, sizeof(ctx), "bs %llu old %llu new %llu write [%llu, %llu) direct %d",
		 (unsigned long long)bs, (unsigned long long)old_sz, (unsigned long long)new_sz,
		 (unsigned long long)wo, (unsigned long long)we, direct_ok);
	for (uint64_t u = 0; u < no; u++)
		disk[u] = (struct unit){ true, len_of(bs, old_sz, u), role_of(bs, old_sz, u) };

	EXPECT(sc_data_plan(bs, old_sz, new_sz, wo, we, direct_ok, &p) == 0, "plan failed");
	for (unsigned i = 0; i < p.nruns; i++) {
		const struct sc_data_run *r = &p.run[i];
		uint64_t A = r->ua * bs, B = r->ub * bs < new_sz ? r->ub * bs : new_sz;
		uint64_t DA = r->da * bs, DB = r->db * bs < new_sz ? r->db * bs : new_sz;

		EXPECT(r->ua < r->ub && r->ub <= nn, "run %u [%llu, %llu) out of range", i,
		       (unsigned long long)r->ua, (unsigned long long)r->ub);
		EXPECT(i == 0 || p.run[i - 1].ub < r->ua, "runs not ascending and apart");
		EXPECT(r->ua <= r->da && r->da <= r->db && r->db <= r->ub, "direct outside run");
		if (r->da < r->db) {
			EXPECT(direct_ok, "direct units although not allowed");
			EXPECT(DA >= wo && DB <= we, "direct units not wholly written");
			EXPECT(range_ok(bs, DA, DB, new_sz), "direct range breaks the rules");
			if (A < DA)
				EXPECT(range_ok(bs, A, DA, new_sz), "head segment breaks the rules");
			if (DB < B)
				EXPECT(range_ok(bs, DB, B, new_sz), "tail segment breaks the rules");
		} else {
			EXPECT(range_ok(bs, A, B, new_sz), "run [%llu, %llu) breaks the rules",
			       (unsigned long long)A, (unsigned long long)B);
		}
		/* Old plaintext of a unit not wholly rewritten is decrypted under old_sz. */
		for (uint64_t u = r->ua; u < r->ub; u++) {
			uint64_t x = u * bs, y = x + bs < old_sz ? x + bs : old_sz;

			if (u < no && !(wo <= x && we >= y)) {
				uint64_t a, b;

				sc_data_dec_range(bs, old_sz, x, y, &a, &b);
				EXPECT(a <= x && b >= y, "dec_range does not cover the unit");
				EXPECT(range_ok(bs, a, b, old_sz), "old unit %llu: decrypt range "
				       "[%llu, %llu) breaks the rules", (unsigned long long)u,
				       (unsigned long long)a, (unsigned long long)b);
			}
			disk[u] = (struct unit){ true, len_of(bs, new_sz, u), role_of(bs, new_sz, u) };
			written++;
			unit0 |= u == 0;
		}
	}
	EXPECT(p.rekey == (new_sz > 0 && new_sz < 16 && unit0), "rekey flag wrong");
	for (uint64_t u = nn; u < MAXU; u++)	/* the cut */
		disk[u].data = false;

	for (uint64_t u = 0; u < nn; u++) {
		if (disk[u].data) {
			EXPECT(disk[u].len == len_of(bs, new_sz, u) &&
			       disk[u].role == role_of(bs, new_sz, u),
			       "unit %llu keeps an encoding for the wrong size", (unsigned long long)u);
		} else {
			EXPECT(!(wo < we && u * bs < we && (u + 1) * bs > wo),
			       "written unit %llu not stored", (unsigned long long)u);
			EXPECT(role_of(bs, new_sz, u) != 3, "tiny file left a hole");
		}
	}
	if (sc_data_short_tail(bs, new_sz))
		EXPECT(disk[nn - 2].data == disk[nn - 1].data, "tail group half hole, half data");
	if (wo < we)
		wunits = sc_data_nunits(bs, we) - wo / bs;
	EXPECT(written <= wunits + 4, "%llu units re-encrypted for %llu written",
	       (unsigned long long)written, (unsigned long long)wunits);
}

Test(span, dec_range_cases)
{
	static const struct { uint64_t sz, off, end, a, b; } c[] = {
		{ 10000, 0, 10, 0, 4096 },
		{ 10000, 4095, 4097, 0, 8192 },
		{ 10000, 8192, 10000, 8192, 10000 },
		{ 4101, 0, 1, 0, 4101 },		/* tail group 0+1 */
		{ 4101, 4100, 4101, 0, 4101 },
		{ 8197, 0, 10, 0, 4096 },		/* outside the group */
		{ 8197, 4096, 4100, 4096, 8197 },
		{ 8192 + 16, 8192, 8200, 8192, 8208 },	/* 16-byte last unit: no group */
		{ 5, 1, 3, 0, 5 },			/* tiny */
		{ 20, 3, 4, 0, 20 },
	};

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t a, b;

		sc_data_dec_range(4096, c[i].sz, c[i].off, c[i].end, &a, &b);
		cr_expect(a == c[i].a && b == c[i].b, "sz %llu [%llu,%llu): got [%llu,%llu) want "
			  "[%llu,%llu)", (unsigned long long)c[i].sz, (unsigned long long)c[i].off,
			  (unsigned long long)c[i].end, (unsigned long long)a,
			  (unsigned long long)b, (unsigned long long)c[i].a,
			  (unsigned long long)c[i].b);
	}
}

Test(span, plan_cases)
{
	struct sc_data_plan p;

	/* Aligned overwrite inside the file: exactly the written units, all direct. */
	cr_assert(sc_data_plan(4096, 40960, 40960, 8192, 16384, true, &p) == 0);
	cr_expect(p.nruns == 1 && p.run[0].ua == 2 && p.run[0].ub == 4 &&
		  p.run[0].da == 2 && p.run[0].db == 4 && !p.rekey);
	/* Unaligned: head and tail units by RMW, the middle direct. */
	cr_assert(sc_data_plan(4096, 40960, 40960, 100, 20000, true, &p) == 0);
	cr_expect(p.nruns == 1 && p.run[0].ua == 0 && p.run[0].ub == 5 &&
		  p.run[0].da == 1 && p.run[0].db == 4);
	/* Write past EOF with a gap: old partial unit first, the gap stays a hole. */
	cr_assert(sc_data_plan(4096, 100, 10 * 4096 + 100, 10 * 4096, 10 * 4096 + 100, true, &p) == 0);
	cr_expect(p.nruns == 2 && p.run[0].ua == 0 && p.run[0].ub == 1 &&
		  p.run[1].ua == 10 && p.run[1].ub == 11);
	/* ... but a 10-byte last unit ties the hole before it into its tail group. */
	cr_assert(sc_data_plan(4096, 100, 10 * 4096 + 10, 10 * 4096, 10 * 4096 + 10, true, &p) == 0);
	cr_expect(p.nruns == 2 && p.run[1].ua == 9 && p.run[1].ub == 11);
	/* Growing truncate of a unit-aligned file: nothing to re-encrypt. */
	cr_assert(sc_data_plan(4096, 8192, 1 << 20, 0, 0, false, &p) == 0);
	cr_expect(p.nruns == 0);
	/* Shrinking truncate into a unit: that unit only. */
	cr_assert(sc_data_plan(4096, 1 << 20, 5000, 0, 0, false, &p) == 0);
	cr_expect(p.nruns == 1 && p.run[0].ua == 1 && p.run[0].ub == 2 && p.run[0].da == p.run[0].db);
	/* Shrinking truncate leaving a 3-byte last unit: the group of two. */
	cr_assert(sc_data_plan(4096, 1 << 20, 8195, 0, 0, false, &p) == 0);
	cr_expect(p.nruns == 1 && p.run[0].ua == 1 && p.run[0].ub == 3);
	/* Tiny results rekey; growing from empty to tiny materializes. */
	cr_assert(sc_data_plan(4096, 0, 5, 0, 0, false, &p) == 0);
	cr_expect(p.nruns == 1 && p.rekey);
	cr_assert(sc_data_plan(4096, 0, 20, 0, 0, false, &p) == 0);
	cr_expect(p.nruns == 0, "a 20-byte hole is a hole");
	/* Bad arguments. */
	cr_expect(sc_data_plan(4096, 0, 10, 5, 20, true, &p) == -EINVAL);
	cr_expect(sc_data_plan(4096, 0, 10, 6, 5, true, &p) == -EINVAL);
}

Test(span, model_truncate_exhaustive)
{
	const uint64_t bs = 64, top = 4 * 64 + 20;

	for (uint64_t o = 0; o <= top; o++)
		for (uint64_t n = 0; n <= top; n++)
			check_plan(bs, o, n, 0, 0, false);
}

Test(span, model_write_exhaustive_small)
{
	const uint64_t bs = 64, top = 3 * 64 + 18;

	/* All old sizes, all writes [wo, we) with we <= top: new = max(old, we). */
	for (uint64_t o = 0; o <= top; o += 1)
		for (uint64_t wo = 0; wo < top; wo += 3)
			for (uint64_t we = wo + 1; we <= top; we += 5) {
				check_plan(bs, o, o > we ? o : we, wo, we, true);
				uint64_t z0 = wo < o ? wo : o, z1 = we < o ? we : o;

				/* Zeroing inside the file (punch edges): no direct units. */
				check_plan(bs, o, o, z0 < z1 ? z0 : 0, z0 < z1 ? z1 : 0, false);
			}
}

Test(span, model_write_random)
{
	const uint64_t bs = 64, top = (MAXU - 1) * 64;
	unsigned seed = 12345;

	for (int i = 0; i < 200000; i++) {
		uint64_t o = (uint64_t)rand_r(&seed) % top;
		uint64_t wo = (uint64_t)rand_r(&seed) % top;
		uint64_t we = wo + 1 + (uint64_t)rand_r(&seed) % (top - wo);

		/* Cluster around unit edges and the 16-byte rule half of the time. */
		if (rand_r(&seed) & 1)
			o = o / bs * bs + (uint64_t)rand_r(&seed) % 18;
		if (o > top)
			o = top;
		check_plan(bs, o, o > we ? o : we, wo, we, true);
	}
}

/*
 * sc_data_plan_units (aes-gcm: any length encrypts on its own, only a
 * whole unit may be a hole), on a model disk of units that remember their
 * stored length: afterwards every unit with data is stored at its length
 * under the new size, the write's units are all stored, a partial last
 * unit is never a hole, runs ascend, direct units are wholly written, and
 * at most two units besides the written ones are re-sealed (the old and
 * the new last unit).
 */
static void check_plan_units(uint64_t bs, uint64_t old_sz, uint64_t new_sz, uint64_t wo,
			     uint64_t we, bool direct_ok)
{
	struct unit disk[MAXU] = { 0 };
	struct sc_data_plan p;
	uint64_t no = sc_data_nunits(bs, old_sz), nn = sc_data_nunits(bs, new_sz);
	uint64_t written = 0, wunits = wo < we ? sc_data_nunits(bs, we) - wo / bs : 0;

	snprintf(ctx, sizeof(ctx), "units: bs %llu old %llu new %llu write [%llu, %llu) direct %d",
		 (unsigned long long)bs, (unsigned long long)old_sz, (unsigned long long)new_sz,
		 (unsigned long long)wo, (unsigned long long)we, direct_ok);
	for (uint64_t u = 0; u < no; u++)
		disk[u] = (struct unit){ true, len_of(bs, old_sz, u), 0 };
	EXPECT(sc_data_plan_units(bs, old_sz, new_sz, wo, we, direct_ok, &p) == 0, "plan failed");
	EXPECT(!p.rekey, "a rekey without the tiny rule");
	for (unsigned i = 0; i < p.nruns; i++) {
		const struct sc_data_run *r = &p.run[i];
		uint64_t DA = r->da * bs, DB = r->db * bs < new_sz ? r->db * bs : new_sz;

		EXPECT(r->ua < r->ub && r->ub <= nn, "run %u out of range", i);
		EXPECT(i == 0 || p.run[i - 1].ub < r->ua, "runs not ascending and apart");
		EXPECT(r->ua <= r->da && r->da <= r->db && r->db <= r->ub, "direct outside run");
		if (r->da < r->db)
			EXPECT(direct_ok && DA >= wo && DB <= we, "direct units not wholly written");
		for (uint64_t u = r->ua; u < r->ub; u++) {
			disk[u] = (struct unit){ true, len_of(bs, new_sz, u), 0 };
			written++;
		}
	}
	for (uint64_t u = nn; u < MAXU; u++)	/* the cut */
		disk[u].data = false;
	for (uint64_t u = 0; u < nn; u++) {
		if (disk[u].data) {
			EXPECT(disk[u].len == len_of(bs, new_sz, u),
			       "unit %llu stored at the wrong length", (unsigned long long)u);
		} else {
			EXPECT(!(wo < we && u * bs < we && (u + 1) * bs > wo),
			       "written unit %llu not stored", (unsigned long long)u);
			EXPECT(len_of(bs, new_sz, u) == bs, "partial unit %llu left a hole",
			       (unsigned long long)u);
		}
	}
	EXPECT(written <= wunits + 2, "%llu units re-sealed for %llu written",
	       (unsigned long long)written, (unsigned long long)wunits);
}

Test(span, units_plan_cases)
{
	struct sc_data_plan p;

	/* A 4 KiB aligned write inside the file: that unit, direct, nothing else. */
	cr_assert(sc_data_plan_units(4096, 40960, 40960, 8192, 12288, true, &p) == 0);
	cr_expect(p.nruns == 1 && p.run[0].ua == 2 && p.run[0].ub == 3 &&
		  p.run[0].da == 2 && p.run[0].db == 3 && !p.rekey);
	/* Write past EOF with a gap: old partial unit, then the write; no tail group. */
	cr_assert(sc_data_plan_units(4096, 100, 10 * 4096 + 10, 10 * 4096, 10 * 4096 + 10,
				      true, &p) == 0);
	cr_expect(p.nruns == 2 && p.run[0].ua == 0 && p.run[0].ub == 1 &&
		  p.run[1].ua == 10 && p.run[1].ub == 11 && p.run[1].da == 10 && p.run[1].db == 11);
	/* A short file written whole: direct, no tiny rule, no rekey. */
	cr_assert(sc_data_plan_units(4096, 0, 5, 0, 5, true, &p) == 0);
	cr_expect(p.nruns == 1 && p.run[0].da == 0 && p.run[0].db == 1 && !p.rekey);
	/* Growing truncate to a size inside a unit: that last unit is sealed. */
	cr_assert(sc_data_plan_units(4096, 8192, 5 * 4096 + 7, 0, 0, false, &p) == 0);
	cr_expect(p.nruns == 1 && p.run[0].ua == 5 && p.run[0].ub == 6);
	/* ... to a unit boundary: nothing (whole units may be holes). */
	cr_assert(sc_data_plan_units(4096, 8192, 1 << 20, 0, 0, false, &p) == 0);
	cr_expect(p.nruns == 0);
	/* From a partial last unit: it becomes whole, and the new last one is sealed. */
	cr_assert(sc_data_plan_units(4096, 100, 5 * 4096 + 7, 0, 0, false, &p) == 0);
	cr_expect(p.nruns == 2 && p.run[0].ua == 0 && p.run[0].ub == 1 &&
		  p.run[1].ua == 5 && p.run[1].ub == 6);
	/* Shrinking truncate leaving 3 bytes in the last unit: that unit only. */
	cr_assert(sc_data_plan_units(4096, 1 << 20, 8195, 0, 0, false, &p) == 0);
	cr_expect(p.nruns == 1 && p.run[0].ua == 2 && p.run[0].ub == 3);
	cr_expect(sc_data_plan_units(4096, 0, 10, 5, 20, true, &p) == -EINVAL);
}

Test(span, units_model_exhaustive)
{
	const uint64_t bs = 64, top = 3 * 64 + 18;

	for (uint64_t o = 0; o <= top; o++)
		for (uint64_t n = 0; n <= top; n++)
			check_plan_units(bs, o, n, 0, 0, false);
	for (uint64_t o = 0; o <= top; o++)
		for (uint64_t wo = 0; wo < top; wo += 3)
			for (uint64_t we = wo + 1; we <= top; we += 5) {
				uint64_t z0 = wo < o ? wo : o, z1 = we < o ? we : o;

				check_plan_units(bs, o, o > we ? o : we, wo, we, true);
				check_plan_units(bs, o, o, z0 < z1 ? z0 : 0, z0 < z1 ? z1 : 0, false);
			}
}
