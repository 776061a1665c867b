/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fresh.c - the freshness record's parser and rules (docs/format.md
 * 11.9, fs/state/freshness.c): the known-answer header and segment of
 * 11.13 (composed independently by tests/crypto/gen_integ_vectors.py)
 * read back; every cut of the last segment read as a torn append; every
 * byte of the header flipped refused; another volume's uuid refused; a
 * record made, imaged and parsed again keeps its gens, tombstones and
 * runs; the checks refuse older gens and, with SC_FRESH_ALLOW, accept and
 * lower them; a state file made on disk is 0600 in a 0700 directory and
 * remembers its runs across opens; a rekey's record (in memory, staged,
 * promoted) replaces the old key's, and a promote repeated after a stop
 * keeps it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "sc_crypto.h"
#include "sc_fresh.h"
#include "sc_hex.h"

/* format.md 11.13: master key 00..1f, volume uuid f0..ff, client 55.., run e0..ef, file b0..bf. */
#define MASTER_HEX "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define V_STATE_HDR "73637374617465310100000000000000f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff555555555555555555555555555555554b28d6e55fb3d042fb1485716fb8837e"
#define V_STATE_SEG "73637367010000000100000000000000e0e1e2e3e4e5e6e7e8e9eaebecedeeef0100000000000000b0b1b2b3b4b5b6b7b8b9babbbcbdbebf0300000000000000a9c2369a4593a996587d88f37bb327b0"

static struct sc_mkey *mk;
static struct sc_ikey *ik;
static uint8_t uuid[16], fid[16], vec[144];

static void fill(uint8_t *p, uint8_t first, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(first + i);
}

static void setup(void)
{
	uint8_t master[32];

	sc_unhex(MASTER_HEX, master, sizeof(master));
	cr_assert_eq(sc_mkey_new(master, SC_CIPHER_AES_GCM, 4096, &mk), 0);
	cr_assert_eq(sc_ikey_new(mk, false, &ik), 0);
	fill(uuid, 0xf0, 16);
	fill(fid, 0xb0, 16);
	cr_assert_eq(sc_unhex(V_STATE_HDR, vec, 64), 64);
	cr_assert_eq(sc_unhex(V_STATE_SEG, vec + 64, 80), 80);
}

static void teardown(void)
{
	sc_ikey_free(ik);
	sc_mkey_free(mk);
}

TestSuite(fresh, .init = setup, .fini = teardown);

Test(fresh, vectors_parse)
{
	struct sc_fresh *f;
	size_t valid = 0;

	cr_assert_eq(sc_fresh_parse(ik, uuid, vec, sizeof(vec), 0, &f, &valid), 0);
	cr_assert_eq(valid, sizeof(vec));
	cr_assert_eq(sc_fresh_seen(f, SC_FRESH_FILE, fid), 3);
	cr_assert_eq(sc_fresh_runs(f, NULL), 0, "a segment's run field is no kind 5 entry");
	cr_assert(!sc_fresh_refused(f));
	sc_fresh_close(f, false, false);
}

/* The last segment cut anywhere, or any byte of it flipped: the header alone counts. */
Test(fresh, torn_or_damaged_segment_dropped)
{
	uint8_t buf[sizeof(vec)];
	struct sc_fresh *f;
	size_t valid;

	for (size_t len = 64; len < sizeof(vec); len++) {
		valid = 0;
		cr_assert_eq(sc_fresh_parse(ik, uuid, vec, len, 0, &f, &valid), 0, "cut to %zu", len);
		cr_assert_eq(valid, 64, "cut to %zu", len);
		cr_assert_eq(sc_fresh_seen(f, SC_FRESH_FILE, fid), 0);
		sc_fresh_close(f, false, false);
	}
	for (size_t i = 64; i < sizeof(vec); i++) {
		memcpy(buf, vec, sizeof(buf));
		buf[i] ^= 1;
		cr_assert_eq(sc_fresh_parse(ik, uuid, buf, sizeof(buf), 0, &f, &valid), 0);
		cr_assert_eq(valid, 64, "byte %zu flipped", i);
		cr_assert_eq(sc_fresh_seen(f, SC_FRESH_FILE, fid), 0, "byte %zu flipped", i);
		sc_fresh_close(f, false, false);
	}
}

/* Every byte of the header flipped: refused, with the error its field gives. */
Test(fresh, header_byte_flipped_refused)
{
	uint8_t buf[sizeof(vec)];
	struct sc_fresh *f;
	size_t valid;
	int want, r;

	for (size_t i = 0; i < 64; i++) {
		memcpy(buf, vec, sizeof(buf));
		buf[i] ^= 1;
		want = i < 8 ? -EUCLEAN : i < 12 ? -EPROTONOSUPPORT : -EBADMSG;
		r = sc_fresh_parse(ik, uuid, buf, sizeof(buf), 0, &f, &valid);
		cr_assert_eq(r, want, "byte %zu: got %d, want %d", i, r, want);
		cr_assert_null(f);
	}
	cr_assert_eq(sc_fresh_parse(ik, uuid, vec, 63, 0, &f, &valid), -EUCLEAN);
}

Test(fresh, another_volume_refused)
{
	uint8_t other[16];
	struct sc_fresh *f;
	size_t valid;

	memcpy(other, uuid, 16);
	other[15] ^= 1;
	cr_assert_eq(sc_fresh_parse(ik, other, vec, sizeof(vec), 0, &f, &valid), -ESTALE);
}

/* Older refused (flag set), newer and equal accepted; ALLOW accepts and lowers. */
Test(fresh, checks)
{
	struct sc_fresh *f;
	uint64_t seen = 0;
	size_t valid;

	cr_assert_eq(sc_fresh_parse(ik, uuid, vec, sizeof(vec), 0, &f, &valid), 0);
	cr_assert_eq(sc_fresh_check(f, SC_FRESH_FILE, fid, 3, &seen), 0);
	cr_assert_eq(sc_fresh_check(f, SC_FRESH_FILE, fid, 9, &seen), 0);
	cr_assert_eq(sc_fresh_seen(f, SC_FRESH_FILE, fid), 3, "a gen read is recorded once durable");
	cr_assert_eq(sc_fresh_check(f, SC_FRESH_FILE, fid, 8, &seen), -ESTALE);
	cr_assert_eq(seen, 9);
	cr_assert(sc_fresh_refused(f));
	sc_fresh_close(f, false, false);

	cr_assert_eq(sc_fresh_parse(ik, uuid, vec, sizeof(vec), SC_FRESH_ALLOW, &f, &valid), 0);
	cr_assert_eq(sc_fresh_check(f, SC_FRESH_FILE, fid, 2, &seen), 1);
	cr_assert_eq(seen, 3);
	cr_assert_eq(sc_fresh_seen(f, SC_FRESH_FILE, fid), 2);
	cr_assert_eq(sc_fresh_check(f, SC_FRESH_FILE, fid, 2, &seen), 0);
	cr_assert(!sc_fresh_refused(f));
	sc_fresh_close(f, false, false);
}

/* Made, written, synced, imaged, parsed: gens and tombstones kept, pending ones not. */
Test(fresh, image_round_trip)
{
	uint8_t other[16], *buf;
	struct sc_fresh *f, *g;
	uint64_t seen;
	size_t len, valid;

	memcpy(other, fid, 16);
	other[0] ^= 0x80;
	cr_assert_eq(sc_fresh_new(ik, uuid, 0, &f), 0);
	sc_fresh_wrote(f, SC_FRESH_FILE, fid, 5);
	sc_fresh_synced(f, SC_FRESH_FILE, fid);
	sc_fresh_wrote(f, SC_FRESH_FILE, other, 7);	/* never synced: not recorded */
	sc_fresh_wrote(f, SC_FRESH_GONE, other, 4);
	sc_fresh_synced(f, SC_FRESH_GONE, other);
	cr_assert_eq(sc_fresh_check(f, SC_FRESH_FILE, other, 6, &seen), -ESTALE, "this run wrote 7");
	cr_assert_eq(sc_fresh_image(f, &buf, &len), 0);
	cr_assert_eq(len, 64 + 32 + 2 * 32 + 16);
	cr_assert_eq(sc_fresh_parse(ik, uuid, buf, len, 0, &g, &valid), 0);
	cr_assert_eq(valid, len);
	cr_assert_eq(sc_fresh_seen(g, SC_FRESH_FILE, fid), 5);
	cr_assert_eq(sc_fresh_seen(g, SC_FRESH_FILE, other), 0);
	cr_assert_eq(sc_fresh_seen(g, SC_FRESH_GONE, other), 4);
	cr_assert(sc_fresh_refused(g), "the refusal above is flag bit 0 of the image");
	/* deleted at gen 4: a header of that id at 4 or before is not current */
	cr_assert_eq(sc_fresh_check(g, SC_FRESH_FILE, other, 4, &seen), -ENOENT);
	cr_assert_eq(seen, 5);
	cr_assert_eq(sc_fresh_check(g, SC_FRESH_FILE, other, 5, &seen), 0);
	cr_assert_eq(sc_fresh_check(g, SC_FRESH_FILE, fid, 4, &seen), -ESTALE);
	free(buf);
	sc_fresh_close(g, false, false);
	sc_fresh_close(f, false, false);
}

/* On disk: 0700 directory, 0600 file; runs remembered; an earlier run's journal refused. */
Test(fresh, state_file_runs)
{
	char tmpl[] = "/tmp/sc-fresh.XXXXXX", dir[64], cmd[128];
	uint8_t r1[16], r2[16], r3[16];
	struct sc_fresh_info info;
	struct sc_fresh *f;
	struct stat st;

	cr_assert_not_null(mkdtemp(tmpl));
	snprintf(dir, sizeof(dir), "%s/a/b", tmpl);
	fill(r1, 1, 16);
	fill(r2, 2, 16);
	fill(r3, 3, 16);
	cr_assert_eq(sc_fresh_open(ik, uuid, dir, 0, &f, &info), -ENOENT);
	cr_assert_eq(sc_fresh_open(ik, uuid, dir, SC_FRESH_CREATE | SC_FRESH_WRITE, &f, &info), 0);
	cr_assert(info.made);
	cr_assert_eq(stat(dir, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0700);
	cr_assert_eq(stat(info.path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600);
	cr_assert_str_eq(strrchr(info.path, '/') + 1, "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff.state");
	cr_assert_eq(sc_fresh_run_begin(f, r1), 0);
	cr_assert_eq(sc_fresh_close(f, true, true), 0);
	cr_assert_eq(sc_fresh_open(ik, uuid, dir, SC_FRESH_CREATE | SC_FRESH_WRITE, &f, &info), 0);
	cr_assert(!info.made && !info.torn);
	cr_assert_eq(sc_fresh_run_check(f, r1), 0, "the last run");
	cr_assert_eq(sc_fresh_run_begin(f, r2), 0);
	/* killed: no close; the lock goes with the process, here with the fd */
	sc_fresh_close(f, false, false);
	cr_assert_eq(sc_fresh_open(ik, uuid, dir, 0, &f, &info), 0);
	cr_assert_eq(sc_fresh_runs(f, NULL), 2);
	cr_assert_eq(sc_fresh_run_check(f, r1), -ESTALE, "an earlier run of this client");
	cr_assert_eq(sc_fresh_run_check(f, r2), 0);
	cr_assert_eq(sc_fresh_run_check(f, r3), 0, "another client's run");
	sc_fresh_close(f, false, false);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
	cr_assert_eq(system(cmd), 0);
}

/*
 * stackcrypt rekey's record (format.md 6.5): one of the new key filled in
 * memory (its run kept there: no file to append to), staged with every
 * gen recorded, promoted over the old key's; a promote after a stop finds
 * none staged and keeps the new key's record; one of another key with
 * nothing staged is removed; a read-only record's run stays in memory.
 */
Test(fresh, rekey_stage_promote)
{
	char tmpl[] = "/tmp/sc-fresh-XXXXXX", dir[64], cmd[96];
	struct sc_fresh *f, *old;
	struct sc_fresh_info info;
	struct sc_mkey *mk2;
	struct sc_ikey *ik2;
	uint8_t master2[32], r1[16];
	uint64_t s;
	struct stat st;
	off_t size;

	cr_assert_not_null(mkdtemp(tmpl));
	snprintf(dir, sizeof(dir), "%s/sd", tmpl);
	fill(master2, 0x40, 32);
	fill(r1, 1, 16);
	cr_assert_eq(sc_mkey_new(master2, SC_CIPHER_AES_GCM, 4096, &mk2), 0);
	cr_assert_eq(sc_ikey_new(mk2, false, &ik2), 0);
	/* the old key's record on disk, with a run */
	cr_assert_eq(sc_fresh_open(ik, uuid, dir, SC_FRESH_CREATE | SC_FRESH_WRITE, &old, &info), 0);
	cr_assert_eq(sc_fresh_run_begin(old, r1), 0);
	cr_assert_eq(sc_fresh_close(old, true, true), 0);
	/* read only: a run begun is kept in memory, the file left as it was */
	cr_assert_eq(stat(info.path, &st), 0);
	size = st.st_size;
	cr_assert_eq(sc_fresh_open(ik, uuid, dir, 0, &old, &info), 0);
	cr_assert_eq(sc_fresh_run_begin(old, fid), 0);
	sc_fresh_close(old, false, false);
	cr_assert_eq(stat(info.path, &st), 0);
	cr_assert_eq(st.st_size, size, "a read-only record is not written");
	/* the new key's, in memory: a file written at gen 3, staged */
	cr_assert_eq(sc_fresh_new(ik2, uuid, 0, &f), 0);
	cr_assert_eq(sc_fresh_run_begin(f, r1), 0);
	sc_fresh_wrote(f, SC_FRESH_FILE, fid, 3);
	cr_assert_eq(sc_fresh_stage(f, dir), 0);
	sc_fresh_close(f, false, false);
	cr_assert_eq(sc_fresh_promote(ik2, uuid, dir), 1, "the staged record put in place");
	cr_assert_eq(sc_fresh_promote(ik2, uuid, dir), 1, "after a stop: the new key's kept");
	cr_assert_eq(sc_fresh_open(ik2, uuid, dir, 0, &f, &info), 0);
	cr_assert_eq(sc_fresh_check(f, SC_FRESH_FILE, fid, 2, &s), -ESTALE, "gen 3 recorded");
	cr_assert_eq(s, 3);
	sc_fresh_close(f, false, false);
	cr_assert_eq(sc_fresh_open(ik, uuid, dir, 0, &f, &info), -EBADMSG, "the old key's is gone");
	/* nothing staged and a record of another key: removed */
	cr_assert_eq(sc_fresh_promote(ik, uuid, dir), 0);
	cr_assert_eq(stat(info.path, &st), -1);
	cr_assert_eq(sc_fresh_unstage(uuid, dir), 0, "none staged: nothing to do");
	sc_ikey_free(ik2);
	sc_mkey_free(mk2);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
	cr_assert_eq(system(cmd), 0);
}
