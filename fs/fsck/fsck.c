/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck.c - "stackcrypt fsck": check every file of a volume offline.
 *
 * A tool, not the mount path: it unlocks the volume, walks the backing
 * and reads its files through the backing interface (sc_backing.h: a
 * directory's or a gluster:// volume's alike, by the same code), and uses
 * the crypto library directly.  --repair needs an engine that can write
 * files (a directory); it is refused whole elsewhere.  For every regular
 * backing file it checks, in order:
 *   1. the header xattr is present and has the right size;
 *   2. the header's MAC verifies under the volume's master key, and the
 *      header names the volume's cipher and block size (sc_fkey_new);
 *   3. every byte of the file can be read from the backing filesystem
 *      (pread; catches media errors, EIO);
 *   4. every data unit is accepted by sc_fkey_decrypt under the format's
 *      size and tail rules;
 *   5. for aes-xts and aes-cbc: no data unit is partly zeros.  A stored
 *      unit is either all zeros (a hole, reads as zeros) or ciphertext, in
 *      which a 512-byte run of zeros has probability 2^-4096; a unit that is
 *      both was torn (half written before a crash, or a hole punched into
 *      it) and decrypts to garbage.
 * aes-xts and aes-cbc carry no per-unit integrity tag, so a unit whose
 * ciphertext was altered in place decrypts to different plaintext without
 * any of these checks noticing; fsck does not claim to find that.
 *
 * On an aes-gcm volume (docs/format.md 10) the header is inside the file
 * and every unit carries a tag, so checks 1, 2, 4 and 5 become one
 * (check_gcm_file): the in-file header verifies (sc_gkey_new: magic,
 * version, MAC, flags, unit size), every byte can be read, every unit's
 * tag verifies (sc_gcm_open, which binds it to the file and its index),
 * and the file does not end inside a unit's nonce or tag.  A 0-byte file
 * and a header-only one are empty files; an all-zero whole unit is a hole,
 * counted (and listed with --verbose), not a problem: it is also what a
 * unit zeroed in the backing directory looks like (10.6).  Check 6 compares
 * file ids there, of the files that checked whole: two inodes whose headers
 * carry one id share a key and associated data, so a unit of one opens in
 * the other (#28 finding 5; they share no unit nonce: nothing to re-key,
 * and --repair changes neither).  The lost-xattrs hint does not apply
 * (nothing of the volume is in an xattr).  A unit that a
 * kill -9 of the mount tore (docs/format.md 10.10) and that the crash
 * journal sc.journal can put right is reported as such, not as damage;
 * --repair applies the journal to it, as the next mount's first open of
 * the file would.
 *
 * Across files it then checks
 *   6. that no two files (other than hard links of one inode) carry the same
 *      header nonce, so the same keys: a copy made in the backing directory
 *      (cp -a, a restore) or a header copied onto another file.  Two such
 *      files leak which 16-byte blocks of them are equal and, for tiny
 *      files, may share a keystream.  On a null volume a nonce derives no
 *      key and nothing is reported.  A volume can hold millions of files:
 *      the walk keeps (nonce, inode) alone, sorted once, and only the
 *      files of a shared nonce get their paths, by a second walk.
 * and, when more than half of the files with data lack a header, says once
 * that the tree was likely copied without its extended attributes.  On a
 * volume with encrypted names, fsck_names.c first checks every name
 * (directory nonces, names, long names' side files, symlink targets).
 *
 * Read-only unless --repair, which renames each file that failed 1-5 to
 * NAME.stackcrypt-quarantine-N beside it (later runs skip quarantined
 * files and count them), and re-keys every file of a shared-nonce group but
 * one: a copy with a fresh header and the data re-encrypted replaces it by
 * rename (crash-safe, rekey_file).  It deletes no file of the user's, only
 * leftovers of interrupted operations: its own re-key copies and, on a
 * volume with encrypted names, orphan side files of long names and the
 * empty directories of an interrupted mkdir.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "sc_cmd.h"
#include "sc_fresh.h"
#include "sc_journal.h"
#include "sc_crypto.h"
#include "sc_volume.h"
#include "sc_cli.h"
#include "fsck_i.h"
#include "sc_backing.h"
#include "sc_local.h"	/* sc_pwrite_all: the repair copy */


#define REKEY_NAME_SIZE	(sizeof(REKEY_TAG) + 2 * SC_HDR_NONCE_LEN)
#define CHUNK		(1u << 20)	/* read size; a multiple of every block size */
#define ZERO_RUN	512		/* torn-unit check granularity (bytes) */
#define HDR_READ_MAX	256		/* read more than SC_HDR_MAX to see oversize headers */

static bool all_zero(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Check 5: in [off, off + len) of the stored bytes (off a multiple of the
 * block size), finds a unit that is not all zeros but has an all-zero
 * 512-byte run at a 512-byte boundary.  Returns its offset, or -1.
 */
static int64_t torn_unit(const struct fsck *f, const uint8_t *p, uint64_t off, size_t len)
{
	size_t u, s;

	for (u = 0; u < len; u += f->bs) {
		size_t ulen = len - u < f->bs ? len - u : f->bs;
		bool zero_run = false;

		if (ulen < 2 * ZERO_RUN)
			continue;	/* a one-sector unit is a hole or not: nothing torn */
		for (s = 0; s + ZERO_RUN <= ulen && !zero_run; s += ZERO_RUN)
			zero_run = all_zero(p + u + s, ZERO_RUN);
		if (zero_run && !all_zero(p + u, ulen))
			return (int64_t)(off + u);
	}
	return -1;
}

/*
 * Where the chunk of a file of `size` bytes that starts at off ends.  A
 * final unit of 1..15 bytes is decrypted together with the unit before it:
 * never let a chunk end just before the last unit, so the last chunk holds
 * both (the rule of sc_fkey_encrypt/decrypt).
 */
static uint64_t chunk_end(const struct fsck *f, uint64_t off, uint64_t size)
{
	uint64_t end = off + CHUNK;

	if (end >= size || size - end <= f->bs)
		end = size;
	return end;
}


/* Checks 3-5 on an open file of size `size`.  0, or 1 after reporting a problem. */
static int check_contents(struct fsck *f, struct sc_fkey *fk, int fd, const char *rel,
			  uint64_t size)
{
	bool check_torn = sc_mkey_cipher(f->vol->mkey) != SC_CIPHER_NULL;
	uint64_t off = 0;
	int r;

	while (off < size) {
		uint64_t end = chunk_end(f, off, size);
		size_t len = end - off, got;
		int64_t torn;

		r = sc_backing_pread_full(f->b, fd, f->buf, len, off, &got);
		if (r == -ENODATA)
			return sc_fsck_problem(f, rel, false, "file shrank to %" PRIu64 " bytes "
				       "while being checked (is the volume mounted?)",
				       off + got) ?: 1;
		if (r)
			return sc_fsck_problem(f, rel, true, "read error at offset %" PRIu64 ": %s",
				       off + got, strerror(-r)) ?: 1;
		if (check_torn) {
			torn = torn_unit(f, f->buf, off, len);
			if (torn >= 0)
				return sc_fsck_problem(f, rel, true, "data unit at offset %" PRId64 " is "
					       "partly zeros (torn write or a hole inside a unit): "
					       "it decrypts to garbage", torn) ?: 1;
		}
		r = sc_fkey_decrypt(fk, off, f->buf, f->buf, len, size);
		if (r)
			return sc_fsck_problem(f, rel, true, "bytes %" PRIu64 "..%" PRIu64 " do not "
				       "decrypt under the format's rules: %s", off, end,
				       strerror(-r)) ?: 1;
		f->read += len;
		off = end;
		sc_fsck_progress(f);
	}
	return 0;
}

/*
 * Remembers a file whose header verified, for check 6 (nonce: its header
 * nonce, or an aes-gcm file's id; bad: checks 3-5 failed, --repair
 * quarantines it instead), by its inode alone: a volume can hold millions
 * of files, and only the few that share a nonce need their paths
 * (shared_keys looks them up).  0 or -ENOMEM.
 */
_Static_assert(SC_GCM_FILE_ID_LEN == SC_HDR_NONCE_LEN, "check 6 keeps either in keyed_file");
static int keyed_add(struct fsck *f, const uint8_t *nonce, const struct stat *st, bool bad)
{
	struct keyed_file *k;

	k = sc_fsck_room(f->keyed, &f->capkeyed, f->nkeyed, sizeof(*k), 256);
	if (!k)
		return -ENOMEM;
	f->keyed = k;
	k = &f->keyed[f->nkeyed];
	memcpy(k->nonce, nonce, SC_HDR_NONCE_LEN);
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->nlink = st->st_nlink;
	k->bad = bad;
	k->rekey = false;
	k->rel = NULL;
	f->nkeyed++;
	return 0;
}

/*
 * Why an aes-gcm header did not verify (err from sc_gkey_new on the first
 * len bytes, hdr), as a reason for the report.  The magic is looked at
 * first: a file that does not start with it is not of this format at all
 * (e.g. a file of an xattr volume copied in); one that does but fails the
 * MAC was changed, or comes from another volume.
 */
static void ghdr_explain(struct fsck *f, int err, const uint8_t *hdr, size_t len, char *why,
			 size_t whylen)
{
	if (memcmp(hdr, SC_GHDR_MAGIC, len < 4 ? len : 4))
		snprintf(why, whylen, "no aes-gcm file header (it does not start with \"%s\"): "
			 "not a file of this volume's format, or its header was damaged",
			 SC_GHDR_MAGIC);
	else if (len > 4 && hdr[4] != SC_GHDR_VERSION)
		snprintf(why, whylen, "aes-gcm file header of unknown version %u (this build "
			 "knows %u): damaged, or written by a newer stackcrypt", hdr[4],
			 SC_GHDR_VERSION);
	else if (len < SC_GHDR_SIZE)
		snprintf(why, whylen, "truncated aes-gcm file header: the file holds %zu bytes, "
			 "a header is %d", len, SC_GHDR_SIZE);
	else if (err == -EUCLEAN)
		snprintf(why, whylen, "aes-gcm file header MAC mismatch: the header was "
			 "tampered with, or comes from another volume");
	else if (err == -EPROTONOSUPPORT)
		snprintf(why, whylen, "aes-gcm file header has flags 0x%02x%02x this build does "
			 "not know: written by a newer stackcrypt", hdr[7], hdr[6]);
	else if (err == -EINVAL)
		snprintf(why, whylen, "aes-gcm file header says %u-byte units, the volume's are "
			 "%" PRIu32, hdr[5] < 32 ? 1u << hdr[5] : 0, f->bs);
	else
		snprintf(why, whylen, "cannot check its aes-gcm file header: %s", strerror(-err));
}

/*
 * Counts and, with --verbose, lists the holes among the whole stored units
 * at p (n of them, from unit first): all-zero units of a file that may
 * hold holes, which read as zeros without a tag (docs/format.md 10.6) --
 * legal, but in a file from before hole tracking also what someone who
 * zeroes a unit in the backing directory leaves, so a person may judge.
 */
static void gcm_holes(struct fsck *f, const char *rel, const uint8_t *p, uint64_t first,
		      size_t n)
{
	size_t u, ulen = (size_t)f->bs + SC_GCM_OVERHEAD;

	for (u = 0; u < n; u++) {
		if (!sc_gcm_is_hole(p + u * ulen, ulen, f->bs))
			continue;
		f->holes++;
		if (f->verbose) {
			sc_fsck_progress_end(f);
			printf("%s/%s: unit %" PRIu64 " is a hole (all zeros: reads as zeros, "
			       "not an error)\n", f->backing, rel, first + u);
		}
	}
}

/* ---- the crash journal (aes-gcm) ------------------------------------------ */

/* The journal's I/O on a file of the walk (sc_jio); writes only with --repair. */
static ssize_t fd_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	const struct fsck_fd *c = ctx;
	size_t got;
	int r = sc_backing_pread_full(c->f->b, c->fd, buf, len, off, &got);

	return r == 0 || r == -ENODATA ? (ssize_t)got : r;
}

static int fd_pwrite(void *ctx, const void *buf, size_t len, uint64_t off)
{
	const struct fsck_fd *c = ctx;

	return sc_backing_pwrite(c->f->b, c->fd, buf, len, off);
}

static int fd_truncate(void *ctx, uint64_t size)
{
	const struct fsck_fd *c = ctx;

	return sc_backing_truncate(c->f->b, c->fd, size);
}

static int fd_sync(void *ctx)
{
	const struct fsck_fd *c = ctx;

	return sc_backing_sync(c->f->b, c->fd);
}

static int fd_size(void *ctx, uint64_t *size)
{
	const struct fsck_fd *c = ctx;
	struct stat st;
	int r = sc_backing_fstat(c->f->b, c->fd, &st);

	if (r)
		return r;
	*size = (uint64_t)st.st_size;
	return 0;
}

static struct sc_jio fd_io(struct fsck_fd *c)
{
	return (struct sc_jio){ .ctx = c, .pread = fd_pread, .pwrite = fd_pwrite,
				.truncate = fd_truncate, .sync = fd_sync, .size = fd_size };
}

struct torn_ctx {
	struct fsck	*f;
	const char	*rel;
	uint64_t	*units;	/* the units the journal covers */
	size_t		n;
};

static void journal_fix(void *ctx, const struct sc_jfix *fix)
{
	struct torn_ctx *t = ctx;
	uint64_t *u = realloc(t->units, (t->n + 1) * sizeof(*u));

	if (u) {
		t->units = u;
		t->units[t->n++] = fix->unit;
	}
	t->f->torn++;
	printf("%s/%s: unit %" PRIu64 " was torn by a crash of the mount; %s%s\n",
	       t->f->backing, t->rel, fix->unit,
	       fix->cut ? "the journal says it was being appended: " :
	       "the journal holds its new content: ",
	       !t->f->repair ? (fix->cut ? "--repair (or the next mount) cuts it off" :
				"--repair (or the next mount) restores it") :
	       (fix->cut ? "cut off" : "restored"));
}

/* For sc_jrnl_drop_unknown: whether the walk found the file fid. */
static bool journal_seen(void *ctx, const uint8_t *fid)
{
	const struct fsck *f = ctx;

	for (size_t i = 0; i < f->njseen; i++)
		if (!memcmp(f->jseen[i], fid, SC_GCM_FILE_ID_LEN))
			return true;
	return false;
}

static bool torn_covers(const struct torn_ctx *t, uint64_t unit)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->units[i] == unit)
			return true;
	return false;
}

/*
 * A unit of the file gk opens (fd, rel) torn by a crash: repaired first
 * from the crash journal (--repair; *size is then the file's new size), or
 * noted in torn to be reported as such, not as damage.  0, or 1 after
 * reporting that the journal cannot be applied, or -errno.
 */
static int gcm_journal(struct fsck *f, int fd, const char *rel, struct sc_gkey *gk,
		       struct torn_ctx *torn, uint64_t *size)
{
	struct fsck_fd c = { f, fd };
	struct sc_jio io = fd_io(&c);
	uint8_t (*seen)[SC_GCM_FILE_ID_LEN];
	int r;

	if (!f->jr || !sc_jrnl_has(f->jr, sc_gkey_file_id(gk)))
		return 0;
	seen = realloc(f->jseen, (f->njseen + 1) * sizeof(*seen));
	if (seen) {
		f->jseen = seen;
		memcpy(seen[f->njseen++], sc_gkey_file_id(gk), SC_GCM_FILE_ID_LEN);
	}
	r = sc_jrnl_resolve(f->jr, gk, &io, f->repair, journal_fix, torn);
	if (r >= 0 && f->repair)
		r = fd_size(&c, size);
	if (r < 0)
		return sc_fsck_problem(f, rel, false, "cannot apply the crash journal: %s",
				       strerror(-r)) ?: 1;
	if (f->repair)
		torn->n = 0;	/* repaired: every unit must now open */
	return 0;
}

/* integ_check's *didx for a file --accept-unclean takes as found (no entry to zero). */
#define DIDX_UNCLEAN	(-2)

/*
 * --repair: the version 2 header h stored in the file fd, its mtime put
 * back (a header is no change of the file's contents: format.md 11.6,
 * difference 5, as the mount does), synced, then its pinned dirty table
 * entry didx zeroed.  0 or -errno.
 */
static int header_store(struct fsck *f, int fd, const struct sc_ihdr *h, int didx)
{
	struct fsck_fd c = { f, fd };
	struct sc_jio io = fd_io(&c);
	uint8_t hdr[SC_IHDR_SIZE];
	struct stat st;
	int r = sc_ihdr_pack(f->vol->ikey, h, hdr);

	if (r == 0)
		r = sc_backing_fstat(f->b, fd, &st);
	if (r == 0)
		r = io.pwrite(io.ctx, hdr, sizeof(hdr), 0);
	if (r == 0)
		r = sc_backing_futimens(f->b, fd, (const struct timespec[2]){
				{ .tv_nsec = UTIME_OMIT }, st.st_mtim });
	if (r == 0)
		r = io.sync(io.ctx);
	if (r == 0)
		r = sc_jrnl_dirty_end(f->jr, didx);
	return r;
}

/*
 * The file rel whose size differs from its header's (stored, want), on a
 * volume whose last mount stopped uncleanly (format.md 11.8, the power-loss
 * row: the dirty table is not synced, so a power loss can lose the entry
 * of a file being written, and leave its header behind its units).  A
 * problem (never moved aside: it may be whole), or with --repair
 * --accept-unclean *didx DIDX_UNCLEAN: taken as found once every unit
 * authenticates (check_gcm_file, integ_pinned).  0 or 1.
 */
static int integ_unclean(struct fsck *f, const char *rel, const struct sc_ihdr *h,
			 uint64_t size, uint64_t want, int *didx)
{
	if (f->accept_unclean) {
		*didx = DIDX_UNCLEAN;
		return 0;
	}
	f->unclean++;
	return sc_fsck_problem(f, rel, false, "is %" PRIu64 " bytes long where its "
			       "authenticated size (%" PRIu64 ") gives %" PRIu64 "; the last "
			       "mount stopped uncleanly, and a power loss can leave a file so: "
			       "--repair --accept-unclean accepts it as found if every unit "
			       "authenticates (else it was cut or extended behind the mount)",
			       size, h->size, want) ?: 1;
}

/*
 * The file rel (fd) found bound to another entry than its place at: a
 * rename cut short by the stop of the last run when the dirty table holds
 * a pinned rename entry for its id and at (format.md 11.8) -- a note, and
 * with --repair its header h bound at at (gen + 1), the entry zeroed; else
 * a problem.  0 (h bound here now, or to be by the next mount), 1 problem,
 * -errno.
 */
static int integ_renamed(struct fsck *f, int fd, const char *rel, struct sc_ihdr *h,
			 const struct sc_dirplace *at)
{
	uint8_t tag[SC_INTEG_TAG_LEN];
	int didx = -1, r;

	r = sc_integ_rename_tag(f->vol->ikey, h->file_id, at, tag);
	if (r < 0)
		return r;
	if (f->jr)
		didx = sc_jrnl_place_find(f->jr, SC_JRNL_RENAME, tag, h->gen);
	if (didx < 0)
		return sc_fsck_problem(f, rel, true, "is bound to another entry: a file moved, "
				       "swapped or copied over it behind the mount (a rename "
				       "cut short by a kill is in the crash journal's dirty "
				       "table, and is noted instead)") ?: 1;
	if (f->repair) {
		r = sc_integ_place_tag(f->vol->ikey, h->file_id, at, h->tag);
		h->gen++;
		if (r == 0)
			r = header_store(f, fd, h, didx);
		if (r < 0)
			return sc_fsck_problem(f, rel, false, "was being renamed when the mount "
					       "stopped, and cannot be bound to its new name: %s",
					       strerror(-r)) ?: 1;
	}
	f->renamed++;
	sc_fsck_note(f, rel, "was being renamed when the mount stopped, before it was bound to "
		     "its new name; %s", f->repair ? "bound to it" :
		     "the next mount (or --repair) binds it");
	return 0;
}

/*
 * The binding record beside rel (format.md 11.5: the long form of its
 * encoded name, then ".bind"), opened at the place at: 0 with what it
 * vouches for, -ENOENT (none), -EBADMSG (damaged, another place's, or
 * not a record); its path in path.
 */
static int record_at(struct fsck *f, const char *rel, const struct sc_dirplace *at,
		     char path[PATH_MAX], uint8_t id[SC_GCM_FILE_ID_LEN], uint64_t *g)
{
	const char *slash = strrchr(rel, '/');
	char lf[SC_NAME_LONG_LEN + 1], target[SC_BINDREC_ENC_LEN + 2];
	ssize_t n;

	if (sc_name_long(at->enc, at->enc_len, lf) < 0 ||
	    snprintf(path, PATH_MAX, "%.*s%s%s", slash ? (int)(slash - rel + 1) : 0, rel, lf,
		     SC_BINDREC_SUFFIX) >= PATH_MAX)
		return -EBADMSG;
	n = sc_backing_readlink(f->b, path, target, sizeof(target));
	if (n == -ENOENT)
		return -ENOENT;
	if (n <= 0)
		return -EBADMSG;
	return sc_bindrec_open(f->vol->ikey, target, (size_t)n, at, id, g) ? -EBADMSG : 0;
}

/*
 * The file rel's place at, for its verified header h (format.md 11.4,
 * 11.5): bound by its tag, or a LINKED file vouched for by the record
 * beside it; a record there that vouches for something else is what a
 * link, unlink or rename cut short leaves (--repair removes it).  0 bound,
 * -ESTALE bound elsewhere by its tag (integ_renamed's), 1 problem
 * reported, -errno.
 */
static int integ_place(struct fsck *f, const char *rel, const struct sc_ihdr *h,
		       const struct sc_dirplace *at)
{
	char path[PATH_MAX];
	uint8_t id[SC_GCM_FILE_ID_LEN];
	uint64_t g;
	int bound = sc_ihdr_bound_at(f->vol->ikey, h, at), rec = record_at(f, rel, at, path, id, &g);
	bool vouched = rec == 0 && sc_bindrec_vouches(h, id, g);
	int r = 0;

	if (rec != -ENOENT && !vouched) {
		r = sc_fsck_problem(f, path, false, "binding record that vouches for no file "
				    "here (left by a link, unlink or rename cut short): --repair "
				    "removes it");
		if (r < 0)
			return r;
		f->bad[f->nbad - 1].leftover = true;
		r = 1;
	}
	if (bound == 0 || vouched)
		return r;
	if (h->flags & SC_IHDR_F_LINKED)
		return sc_fsck_problem(f, rel, true, "is bound to another entry: a hard-linked "
				       "file that no binding record vouches for here (a name "
				       "linked, moved or copied over it behind the mount)") ?: 1;
	return bound == -ESTALE ? -ESTALE : r;
}

/*
 * The checks of one aes-gcm file (docs/format.md 10): its in-file header
 * (magic, version, MAC, flags, unit size: sc_gkey_new), every byte readable,
 * every unit's tag (sc_gcm_open over the file in chunks of whole units), and
 * a size that does not end inside a unit's nonce or tag.  A 0-byte file
 * (its header not written yet) and a 40-byte one (the header alone) are
 * empty files; an all-zero whole unit is a hole in a file whose header
 * allows holes (sc_gkey_holes_ok), else a problem (#28 finding 3: zeroed or
 * appended behind the mount).  fd is open, st its stat.  A clean file's
 * id is remembered for check 6 (keyed_add) and *plain_out set to its
 * plaintext size (without an appended unit that a crash cut inside its
 * nonce or tag: the journal's to put right).
 * 0 clean, 1 problem reported, -errno fatal.
 */
/*
 * Integrity volumes (docs/format.md 11.11): the verified version 2 header
 * h of the file rel, stored bytes long, is bound at the place its name
 * gives (11.4; a file of the layers is INTERNAL and found where the layers
 * keep theirs) and gives its size (11.6).  0, 1 problem reported, -errno.
 */
static int integ_check(struct fsck *f, int fd, const char *rel, struct sc_ihdr *h,
		       uint64_t size, int *didx)
{
	const struct plain_path *pp = sc_fsck_plain_entry(f, rel);
	const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	enum sc_name_kind kind = sc_name_kind(base, strlen(base));
	bool layers = kind == SC_NAME_KIND_NONCE || kind == SC_NAME_KIND_SIDE ||
		      kind == SC_NAME_KIND_LINKSIDE;
	uint64_t want = sc_gcm_stored_size_h(SC_IHDR_SIZE, f->bs, h->size);
	struct sc_dirplace at;

	if (layers != !!(h->flags & SC_IHDR_F_INTERNAL))
		return sc_fsck_problem(f, rel, true, "%s", layers ? "is the file of an entry, "
				       "found where the layers keep their own files: copied over "
				       "it behind the mount" : "is a file of the layers, found at "
				       "an entry: copied over it behind the mount") ?: 1;
	if (pp && pp->enc) {
		at = (struct sc_dirplace){ pp->nonce, pp->enc, strlen(pp->enc) };
		int r = integ_place(f, rel, h, &at);

		if (r == -ESTALE)
			r = integ_renamed(f, fd, rel, h, &at);
		if (r)
			return r;
	}
	if (f->fresh) {	/* format.md 11.9 */
		uint64_t seen = 0;
		int r = sc_fresh_check(f->fresh, SC_FRESH_FILE, h->file_id, h->gen, &seen);

		if (r == -ESTALE || r == -ENOENT)
			return sc_fsck_problem(f, rel, false, "was rolled back: gen %" PRIu64 " < "
					       "%" PRIu64 ", %s on this machine (put back from an "
					       "older copy behind the mount; --allow-rollback accepts "
					       "it)", h->gen, seen, r == -ENOENT ?
					       "seen deleted or emptied" : "seen") ?: 1;
		if (r == 1)
			sc_fsck_note(f, rel, "was rolled back (gen %" PRIu64 " < %" PRIu64 ", seen "
				     "on this machine); accepted (--allow-rollback)", h->gen, seen);
	}
	/*
	 * Being written when the mount stopped (format.md 11.8): the size is
	 * the backing's, if every unit authenticates (check_gcm_file).
	 */
	*didx = f->jr ? sc_jrnl_dirty_find(f->jr, h->file_id, h->gen) : -1;
	if (*didx >= 0) {
		uint8_t (*seen)[SC_GCM_FILE_ID_LEN] = realloc(f->jseen, (f->njseen + 1) *
							      sizeof(*seen));

		if (!seen)
			return -ENOMEM;
		f->jseen = seen;
		memcpy(seen[f->njseen++], h->file_id, SC_GCM_FILE_ID_LEN);
		return 0;
	}
	if (size != want && sc_jrnl_unclean(f->jr))
		return integ_unclean(f, rel, h, size, want, didx);
	if (size != want)
		return sc_fsck_problem(f, rel, true, "is %" PRIu64 " bytes long where its "
				       "authenticated size (%" PRIu64 ") gives %" PRIu64 ": cut or "
				       "extended behind the mount (a file being written when the "
				       "mount stopped is in the crash journal's dirty table, and "
				       "is not reported so)", size, h->size, want) ?: 1;
	return 0;
}

/* A unit tree file's leaves as read (format.md 11.10), and what they give. */
struct tree_found {
	struct sc_utree	*leaves;	/* the leaves of the file as found */
	uint8_t		root[SC_INTEG_TAG_LEN];
	bool		differs;	/* root is not the header's */
};

/* The leaves of the stored units at p (len bytes, from unit first): their last 16 bytes. */
static int tree_leaves(const struct fsck *f, struct tree_found *t, const uint8_t *p, size_t len,
		       uint64_t first)
{
	uint64_t ulen = (uint64_t)f->bs + SC_GCM_OVERHEAD;
	uint64_t n = t->leaves ? sc_utree_units(t->leaves) : 0;
	int r = 0;

	for (uint64_t at = 0, u = first; r == 0 && at < len && u < n; at += ulen, u++) {
		uint64_t l = len - at < ulen ? len - at : ulen;

		if (l >= SC_INTEG_TAG_LEN)
			r = sc_utree_set(t->leaves, u, p + at + l - SC_INTEG_TAG_LEN);
	}
	return r;
}

/* Room for the leaves of a TREE file of plain bytes (ih), else none.  0 or -ENOMEM. */
static int tree_start(const struct fsck *f, const struct sc_ihdr *ih, uint64_t plain,
		      struct tree_found *t)
{
	int r;

	if (!f->vol->ikey || !(ih->flags & SC_IHDR_F_TREE))
		return 0;
	r = sc_utree_new(&t->leaves);
	return r ? r : sc_utree_resize(t->leaves, (plain + f->bs - 1) / f->bs);
}

/*
 * A unit tree file rel whose units all opened: the root of its leaves t
 * against its header h's (format.md 11.11).  Being written when the mount
 * stopped (*didx pinned): the root found goes in at the reconcile
 * (integ_pinned).  Else a root that differs is a unit put back from an
 * older version (a problem, moved aside), or, after an unclean stop, what
 * a power loss can leave (as integ_unclean: --accept-unclean takes it).
 * 0, 1 problem reported, -errno.
 */
static int integ_tree(struct fsck *f, const char *rel, const struct sc_ihdr *h,
		      struct tree_found *t, int *didx)
{
	int r = sc_utree_root(t->leaves, f->vol->ikey, h->file_id, t->root);

	if (r == 0)
		r = sc_utree_check(t->leaves, f->vol->ikey, h->file_id, h->root);
	t->differs = r == -EBADMSG;
	if (r < 0 && r != -EBADMSG)
		return sc_fsck_problem(f, rel, false, "cannot compute its unit tree: %s",
				       strerror(-r)) ?: 1;
	if (!t->differs || *didx >= 0 || *didx == DIDX_UNCLEAN)
		return 0;
	if (sc_jrnl_unclean(f->jr) && f->accept_unclean) {
		*didx = DIDX_UNCLEAN;
		return 0;
	}
	if (sc_jrnl_unclean(f->jr)) {
		f->unclean++;
		return sc_fsck_problem(f, rel, false, "its units are not the ones its unit tree "
				       "records; the last mount stopped uncleanly, and a power loss "
				       "can leave a file so: --repair --accept-unclean accepts it as "
				       "found if every unit authenticates (else a unit was put back "
				       "from an older version of the file behind the mount)") ?: 1;
	}
	return sc_fsck_problem(f, rel, true, "its units are not the ones its unit tree records: "
			       "a unit put back from an older version of the file, or its tags "
			       "changed, behind the mount") ?: 1;
}

/*
 * The file rel (fd), whose pinned dirty table entry didx matched its
 * verified header h (or didx DIDX_UNCLEAN: --accept-unclean takes it), and
 * whose units all opened: reported as being written when the mount stopped
 * (not a problem), and with --repair reconciled as the mount does
 * (format.md 11.8): the header gets the size found, plain, the root of
 * the tags found (t, on a unit tree volume) and gen + 1, the entry is
 * zeroed.  0, or 1 when the repair failed
 * (reported), or -errno.
 */
static int integ_pinned(struct fsck *f, int fd, const char *rel, struct sc_ihdr *h, int didx,
			uint64_t plain, const struct tree_found *t)
{
	uint64_t old = h->size;
	int r = 0;

	/* committed, the entry not zeroed yet: nothing to tell */
	if (plain == h->size && !(t && t->differs)) {
		if (f->repair)
			sc_jrnl_dirty_end(f->jr, didx);
		return 0;
	}
	if (f->repair) {
		h->size = plain;
		h->gen++;
		if (t)	/* the tree of the units as found (format.md 11.10) */
			memcpy(h->root, t->root, sizeof(h->root));
		r = header_store(f, fd, h, didx);
		if (r < 0)
			return sc_fsck_problem(f, rel, false, "was being written when the mount "
					       "stopped, and its header cannot be committed: %s",
					       strerror(-r)) ?: 1;
	}
	if (didx == DIDX_UNCLEAN) {
		f->taken++;
		sc_fsck_note(f, rel, "accepted as found after the unclean stop (--accept-unclean): "
			     "%" PRIu64 " bytes where its header said %" PRIu64 ", every unit "
			     "authenticates", plain, old);
		return 0;
	}
	f->pinned++;
	sc_fsck_note(f, rel, "was being written when the mount stopped: %" PRIu64 " bytes "
		     "where its header says %" PRIu64 ", every unit authenticates; %s", plain,
		     old, f->repair ? "accepted as found" :
		     "the next mount (or --repair) accepts it as found");
	return 0;
}

/*
 * The 0-byte file rel (fd) of an integrity volume: a create cut short by
 * the stop of the last run when the dirty table holds a pinned create
 * entry for its place (format.md 11.8) -- a note, and with --repair the
 * header its create would have stored, the entry zeroed; else a problem,
 * the file cut to nothing.  0, 1 problem, -errno.
 */
static int integ_unborn(struct fsck *f, int fd, const char *rel)
{
	const struct plain_path *pp = sc_fsck_plain_entry(f, rel);
	struct sc_ihdr h = { .flags = SC_IHDR_F_TRACKS, .gen = 1 };
	uint8_t tag[SC_INTEG_TAG_LEN];
	struct sc_dirplace at;
	int didx = -1, r = 0;

	if (f->jr && pp && pp->enc) {
		at = (struct sc_dirplace){ pp->nonce, pp->enc, strlen(pp->enc) };
		r = sc_integ_create_tag(f->vol->ikey, &at, tag);
		if (r < 0)
			return r;
		didx = sc_jrnl_place_find(f->jr, SC_JRNL_CREATE, tag, 0);
	}
	if (didx < 0)
		return sc_fsck_problem(f, rel, true, "has no header: the file cut to nothing "
				       "behind the mount, or a create cut short by a power loss (one "
				       "cut short by a kill is in the crash journal's dirty table, "
				       "and is noted instead)") ?: 1;
	if (f->repair) {
		r = sc_random(h.file_id, sizeof(h.file_id));
		if (r == 0)
			r = sc_integ_place_tag(f->vol->ikey, h.file_id, &at, h.tag);
		if (r == 0 && sc_ikey_tree(f->vol->ikey)) {	/* the tree of no unit */
			h.flags |= SC_IHDR_F_TREE;
			r = sc_tree_root(f->vol->ikey, h.file_id, 0, NULL, h.root);
		}
		if (r == 0)
			r = header_store(f, fd, &h, didx);
		if (r < 0)
			return sc_fsck_problem(f, rel, false, "was being created when the mount "
					       "stopped, and its header cannot be stored: %s",
					       strerror(-r)) ?: 1;
	}
	f->unborn++;
	sc_fsck_note(f, rel, "was being created when the mount stopped, before its header was "
		     "stored; %s", f->repair ? "made an empty file" :
		     "the next mount (or --repair) makes it an empty file");
	return 0;
}

/*
 * The header of the aes-gcm file rel (fd, size bytes), verified, and its
 * key into *gk; integrity volumes: version 2 (11.3), checked by
 * integ_check.  *got: the header bytes read.  0, 1 problem, -errno.
 */
static int gcm_key(struct fsck *f, int fd, const char *rel, uint64_t size, size_t *got,
		   struct sc_gkey **gk, struct sc_ihdr *ih, int *didx)
{
	uint32_t hl = f->vol->ikey ? SC_IHDR_SIZE : SC_GHDR_SIZE;
	uint8_t hdr[SC_IHDR_SIZE];
	struct sc_ihdr h;
	char why[256];
	int r;

	*didx = -1;
	r = sc_backing_pread_full(f->b, fd, hdr, size < hl ? size : hl, 0, got);
	if (r == -ENODATA)
		return sc_fsck_problem(f, rel, false, "file shrank to %zu bytes while being "
				       "checked (is the volume mounted?)", *got) ?: 1;
	if (r)
		return sc_fsck_problem(f, rel, true, "read error at offset %zu: %s", *got,
				       strerror(-r)) ?: 1;
	if (f->vol->ikey) {
		r = sc_gkey_new_v2(f->vol->ikey, hdr, *got, &h, gk);
		if (r && sc_ghdr_is_v1(hdr, *got))	/* format.md 11.3: an unbound file */
			return sc_fsck_problem(f, rel, true, "is a file of a default volume (a "
					       "version 1 header, bound to no entry): copied in, or "
					       "put back from before the upgrade") ?: 1;
		if (r)
			return sc_fsck_problem(f, rel, r != -ENOMEM, "version 2 file header %s",
					       r == -EPROTONOSUPPORT ? "of another version or "
					       "flags" : r == -EINVAL ? "of another unit size" :
					       "fails authentication (damaged, tampered, cut, or from "
					       "another volume)") ?: 1;
		r = integ_check(f, fd, rel, &h, size, didx);
		if (r)
			sc_gkey_free(*gk);
		else if (h.flags & SC_IHDR_F_TREE)	/* the tree tells a hole (11.10) */
			sc_gkey_allow_holes(*gk);
		*ih = h;
		return r;
	}
	r = sc_gkey_new(f->vol->mkey, hdr, *got, gk);
	if (r) {
		ghdr_explain(f, r, hdr, *got, why, sizeof(why));
		return sc_fsck_problem(f, rel, r != -ENOMEM, "%s", why) ?: 1;
	}
	return 0;
}

static int check_gcm_file(struct fsck *f, int fd, const char *rel, const struct stat *st,
			  uint64_t *plain_out)
{
	uint64_t size = (uint64_t)st->st_size, ulen = (uint64_t)f->bs + SC_GCM_OVERHEAD;
	uint32_t hl = f->vol->ikey ? SC_IHDR_SIZE : SC_GHDR_SIZE;
	struct torn_ctx torn = { .f = f, .rel = rel };
	uint64_t plain, idx, off, per_chunk = CHUNK / ulen, cut;
	struct tree_found tree = { 0 };
	struct sc_gkey *gk;
	struct sc_ihdr ih;
	size_t got;
	int didx, r;

	if (size == 0)
		return f->vol->ikey ? integ_unborn(f, fd, rel) : 0;
	r = gcm_key(f, fd, rel, size, &got, &gk, &ih, &didx);
	if (r)
		return r;
	f->read += got;
	r = gcm_journal(f, fd, rel, gk, &torn, &size);
	if (r)
		goto out_free;
	/* -EBADMSG: the file ends inside a unit's nonce or tag; the units before it are checked */
	r = sc_gcm_plain_size_h(hl, f->bs, size, &plain);
	cut = r == -EBADMSG ? size - (size - hl) % ulen : size;
	if (r == -EBADMSG)
		plain = (cut - hl) / ulen * f->bs;
	r = tree_start(f, &ih, plain, &tree);
	if (r)
		goto out_free;
	for (idx = 0, off = hl; off < cut; idx += per_chunk) {
		size_t len = cut - off < per_chunk * ulen ? cut - off : per_chunk * ulen;
		uint64_t bad = 0;
		int n;

		r = sc_backing_pread_full(f->b, fd, f->buf, len, off, &got);
		if (r == -ENODATA) {
			r = sc_fsck_problem(f, rel, false, "file shrank to %" PRIu64 " bytes while "
					    "being checked (is the volume mounted?)", off + got) ?: 1;
			goto out_free;
		}
		if (r) {
			r = sc_fsck_problem(f, rel, true, "read error at offset %" PRIu64 ": %s",
					    off + got, strerror(-r)) ?: 1;
			goto out_free;
		}
		n = tree_leaves(f, &tree, f->buf, len, idx);
		if (n == 0)
			n = sc_gcm_open(gk, idx, f->buf, len, f->gbuf, &bad);
		if ((n == -EBADMSG || n == -EUCLEAN) && torn_covers(&torn, bad)) {
			/* reported by journal_fix; the units after it are checked on their own */
			gcm_holes(f, rel, f->buf, idx, bad - idx);
			f->read += sc_gcm_unit_off_h(hl, f->bs, bad + 1) - off;
			off = sc_gcm_unit_off_h(hl, f->bs, bad + 1);
			idx = bad + 1 - per_chunk;	/* the loop adds per_chunk */
			continue;
		}
		if (n == -EBADMSG || n == -EUCLEAN) {
			r = sc_fsck_problem(f, rel, true, "unit %" PRIu64 " (plaintext bytes from "
				    "%" PRIu64 ", stored at offset %" PRIu64 ") %s", bad, bad * f->bs,
				    sc_gcm_unit_off_h(hl, f->bs, bad), n == -EBADMSG ?
				    "fails its authentication tag: tampered with, moved, cut, or "
				    "from another file" : "is all zeros in a file that never had a "
				    "hole: zeroed or appended in the backing directory") ?: 1;
			goto out_free;
		}
		if (n < 0) {
			r = sc_fsck_problem(f, rel, false, "cannot check units from %" PRIu64 ": %s",
					    idx, strerror(-n)) ?: 1;
			goto out_free;
		}
		gcm_holes(f, rel, f->buf, idx, len / ulen);
		f->read += len;
		off += len;
		sc_fsck_progress(f);
	}
	if (cut < size && !torn_covers(&torn, (cut - hl) / ulen))
		r = sc_fsck_problem(f, rel, true, "the file ends %" PRIu64 " bytes into unit "
			    "%" PRIu64 ", inside its nonce and tag (at most %d bytes): truncated",
			    size - cut, (cut - hl) / ulen, SC_GCM_OVERHEAD) ?: 1;
	else
		r = tree.leaves ? integ_tree(f, rel, &ih, &tree, &didx) : 0;
	/*
	 * Every unit opened, and the file ends on a unit's end or inside an
	 * append the journal cuts back (plain leaves that unit out).
	 */
	if (r == 0 && (didx >= 0 || didx == DIDX_UNCLEAN))
		r = integ_pinned(f, fd, rel, &ih, didx, plain, tree.leaves ? &tree : NULL);
	if (r == 0) {
		*plain_out = plain;
		r = keyed_add(f, sc_gkey_file_id(gk), st, false);	/* check 6 */
	}
out_free:
	sc_utree_free(tree.leaves);
	free(torn.units);
	sc_gkey_free(gk);
	return r;
}

/*
 * check_file's checks: st gets the file's stat, *plain its plaintext size
 * when it checked whole.  0 clean, 1 problem reported, -errno fatal.
 */
static int check_one(struct fsck *f, int dirfd, const char *name, const char *rel,
		     struct stat *st, uint64_t *plain)
{
	uint8_t hdr[HDR_READ_MAX];
	char why[256];
	struct sc_fkey *fk;
	bool tmp_config;
	ssize_t hlen;
	int fd, r;

	/* --repair with a crash journal may rewrite a torn unit in place */
	fd = sc_backing_open_file(f->b, dirfd, name, rel, f->jr && f->repair ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return sc_fsck_problem(f, rel, false, "cannot open: %s", strerror(-fd)) ?: 1;
	r = sc_backing_fstat(f->b, fd, st);
	if (r) {
		r = sc_fsck_problem(f, rel, false, "cannot stat: %s", strerror(-r)) ?: 1;
		goto out_close;
	}
	/* a config write was interrupted; the next one sweeps it */
	tmp_config = !strchr(rel, '/') && !strncmp(rel, SC_VOL_TMP_PREFIX,
						    strlen(SC_VOL_TMP_PREFIX));
	if (sc_mkey_cipher(f->vol->mkey) == SC_CIPHER_AES_GCM) {
		r = tmp_config ? 0 : check_gcm_file(f, fd, rel, st, plain);
		goto out_close;
	}
	hlen = sc_backing_fgetxattr(f->b, fd, SC_HDR_XATTR, hdr, sizeof(hdr));
	if (hlen == -ENODATA && tmp_config) {
		r = 0;
		goto out_close;
	}
	/*
	 * An empty file without a header is what a kill -9 between the backing
	 * create and the header write leaves; the mount adopts it (gives it a
	 * header on first open), so it is not damage.
	 */
	if (hlen == -ENODATA && st->st_size == 0) {
		r = 0;
		goto out_close;
	}
	if (st->st_size > 0)
		f->with_data++;
	if (hlen < 0) {
		int e = (int)hlen;

		if (e == -ENODATA || e == -ERANGE) {
			/* crypto/ names what the header says; -ERANGE: more than we read */
			sc_hdr_explain(e, NULL, sizeof(hdr), why, sizeof(why));
			r = sc_fsck_problem(f, rel, true, "%s", why);
			if (!r && e == -ENODATA) {
				f->bad[f->nbad - 1].nohdr = true;
				f->no_header++;
			}
		} else {
			r = sc_fsck_problem(f, rel, false, "cannot read the header: %s", strerror(-e));
		}
		r = r ?: 1;
		goto out_close;
	}
	r = sc_fkey_new(f->vol->mkey, hdr, hlen, &fk);
	if (r) {
		bool fault = sc_hdr_explain(r, hdr, (size_t)hlen, why, sizeof(why));

		r = sc_fsck_problem(f, rel, fault, "%s", why) ?: 1;
		goto out_close;
	}
	r = check_contents(f, fk, fd, rel, (uint64_t)st->st_size);
	if (r == 0)
		*plain = (uint64_t)st->st_size;	/* length-preserving: the header is an xattr */
	if (r >= 0 && sc_mkey_cipher(f->vol->mkey) != SC_CIPHER_NULL) {
		int k = keyed_add(f, sc_fkey_nonce(fk), st, r == 1);

		if (k)
			r = k;
	}
	sc_fkey_free(fk);
out_close:
	sc_backing_close_file(f->b, fd);
	return r;
}

/*
 * Checks 1-5 on one regular file, and counts it: its plaintext bytes in
 * f->bytes when it checked whole, else it in f->damaged and its stored
 * bytes in f->damaged_bytes.  0 clean, 1 problem reported, -errno fatal.
 */
static int check_file(struct fsck *f, int dirfd, const char *name, const char *rel)
{
	struct stat st = { .st_size = 0 };
	uint64_t plain = 0;
	int r;

	r = check_one(f, dirfd, name, rel, &st, &plain);
	if (r == 1) {
		f->damaged++;
		f->damaged_bytes += (uint64_t)st.st_size;
	} else if (r == 0) {
		f->bytes += plain;
	}
	return r;
}

/* REKEY_TAG + the new header's nonce in hex: the temporary name of a re-key. */
static void rekey_name(char out[REKEY_NAME_SIZE], const uint8_t *nonce)
{
	size_t i;

	memcpy(out, REKEY_TAG, strlen(REKEY_TAG));
	for (i = 0; i < SC_HDR_NONCE_LEN; i++)
		snprintf(out + strlen(REKEY_TAG) + 2 * i, 3, "%02x", nonce[i]);
}

/*
 * A file named like a re-key's temporary file: it is one (what a kill
 * during "fsck --repair" leaves; the file it was re-keying is intact under
 * its own name) if its header verifies and carries the nonce its name
 * names, which no file written through a mount can arrange by accident --
 * or if it is empty and has no header yet (killed between its creation and
 * the header write, before any data).  Reported, and removed by --repair.
 * 1 if it was one, 0 if not, -ENOMEM.
 */
static int rekey_leftover(struct fsck *f, int dirfd, const char *name, const char *rel)
{
	size_t hexlen = 2 * SC_HDR_NONCE_LEN, taglen = strlen(REKEY_TAG);
	char want[REKEY_NAME_SIZE];
	uint8_t hdr[SC_HDR_MAX];
	struct sc_fkey *fk;
	struct stat st;
	ssize_t hlen;
	int fd, r;

	if (strlen(name) != taglen + hexlen ||
	    strspn(name + taglen, "0123456789abcdef") != hexlen)
		return 0;
	fd = sc_backing_open_file(f->b, dirfd, name, rel, O_RDONLY);
	if (fd < 0)
		return 0;	/* check_file reports it */
	hlen = sc_backing_fgetxattr(f->b, fd, SC_HDR_XATTR, hdr, sizeof(hdr));
	r = hlen == -ENODATA && !sc_backing_fstat(f->b, fd, &st) && st.st_size == 0;
	sc_backing_close_file(f->b, fd);
	if (!r) {
		if (hlen < 0 || sc_fkey_new(f->vol->mkey, hdr, hlen, &fk))
			return 0;
		rekey_name(want, sc_fkey_nonce(fk));
		sc_fkey_free(fk);
		if (strcmp(want, name))
			return 0;
	}
	r = sc_fsck_problem(f, rel, false, "left over by an interrupted re-key of 'fsck --repair' "
		    "(the file it re-keyed is intact); --repair removes it");
	if (r)
		return r;
	f->bad[f->nbad - 1].leftover = true;
	return 1;
}

/* A name --repair gave a bad file: NAME.stackcrypt-quarantine-N. */
static bool quarantined_name(const char *name)
{
	const char *tag = strstr(name, QUARANTINE_TAG);

	return tag && strspn(tag + strlen(QUARANTINE_TAG), "0123456789") ==
		      strlen(tag + strlen(QUARANTINE_TAG));
}

/*
 * Whether rel is inside a directory an interrupted mkdir left under a
 * temporary name (a volume with encrypted names): its nonce file, which
 * the names check reports with the directory and --repair removes with it.
 */
static bool in_tmpdir(const struct fsck *f, const char *rel)
{
	const char *slash = strrchr(rel, '/'), *p = slash;

	if (!slash || !(f->vol->cfg.features & SC_FEAT_NAMES))
		return false;
	while (p > rel && p[-1] != '/')
		p--;
	return sc_name_kind(p, (size_t)(slash - p)) == SC_NAME_KIND_TMP;
}

static int visit(void *ctx, int dirfd, const char *name, const char *rel,
		 const struct stat *st, int err)
{
	struct fsck *f = ctx;
	int r;

	if (err) {
		r = sc_fsck_problem(f, rel, false, "%s: %s", !st ? "cannot stat" :
			    name ? "cannot open directory" : "cannot read directory",
			    strerror(-err));
		return r < 0 ? r : 0;
	}
	if (S_ISDIR(st->st_mode)) {
		f->dirs++;
		return 0;
	}
	if (!S_ISREG(st->st_mode))
		return 0;	/* symlinks, devices, fifos, sockets pass through as they are */
	if ((f->jr || f->jbad) && !strcmp(rel, SC_JRNL_NAME))
		return 0;	/* the gcm layer's crash journal, read by journal_open */
	if (in_tmpdir(f, rel))
		return 0;
	if (quarantined_name(name)) {
		f->quarantined++;
		return 0;
	}
	/*
	 * Two aes-gcm files with one header (a copy) share a key but draw each
	 * unit's nonce at random (docs/format.md 10.4): fsck re-keys none.
	 */
	if (!strncmp(name, REKEY_TAG, strlen(REKEY_TAG)) &&
	    sc_mkey_cipher(f->vol->mkey) != SC_CIPHER_AES_GCM) {
		r = rekey_leftover(f, dirfd, name, rel);
		if (r)
			return r < 0 ? r : 0;
	}
	f->files++;
	r = check_file(f, dirfd, name, rel);
	sc_fsck_progress(f);
	return r < 0 ? r : 0;
}

/*
 * BACKING/rel into path (PATH_MAX bytes).  0, or -ENAMETOOLONG after
 * saying so: the walk reaches deeper than PATH_MAX (a volume with
 * encrypted names has longer backing paths than plaintext ones), and a
 * truncated path names another file, or one of its directories.
 */
static int full_path(const struct fsck *f, const char *rel, char *path, const char *what)
{
	if (snprintf(path, PATH_MAX, "%s/%s", f->backing, rel) < PATH_MAX)
		return 0;
	sc_cli_err(cmd, "cannot %s %s/%s: %s", what, f->backing, rel, strerror(ENAMETOOLONG));
	return -ENAMETOOLONG;
}

/*
 * Opens BACKING/sc.journal, if there is one: read-only to report, read-write
 * for --repair (whose records of an unclean stop are then pinned, as a
 * mount would pin them).  0, or an exit status after saying why.
 */
static int journal_open(struct fsck *f)
{
	struct sc_jio io;
	char path[PATH_MAX];
	int r;

	if (full_path(f, SC_JRNL_NAME, path, "open"))
		return SC_EXIT_FAIL;
	f->jfd.f = f;
	f->jfd.fd = sc_backing_open_file(f->b, -1, SC_JRNL_NAME, SC_JRNL_NAME,
					 f->repair ? O_RDWR : O_RDONLY);
	if (f->jfd.fd < 0) {
		if (f->jfd.fd == -ENOENT)
			return 0;
		sc_cli_err(cmd, "cannot open %s: %s", path, strerror(-f->jfd.fd));
		return SC_EXIT_FAIL;
	}
	io = fd_io(&f->jfd);
	r = sc_jrnl_open(f->vol->mkey, f->vol->ikey, f->bs, &io,
			 f->repair ? SC_JRNL_REPAIR : SC_JRNL_INSPECT, &f->jr);
	if (r == -EUCLEAN || r == -ENOENT) {	/* not one, or empty: checked as a file */
		sc_backing_close_file(f->b, f->jfd.fd);
		f->jfd.fd = -1;
		return 0;
	}
	if (r == -EBADMSG) {
		/* #28 finding 4: a stale or edited journal restores nothing, here or at mount */
		sc_backing_close_file(f->b, f->jfd.fd);
		f->jfd.fd = -1;
		f->jbad = true;
		r = sc_fsck_problem(f, SC_JRNL_NAME, true, "the crash journal's header fails its "
				    "MAC (put back from earlier, edited, or another volume's): none "
				    "of its records is used; --repair moves it aside, and the next "
				    "mount starts a new one");
		return r < 0 ? SC_EXIT_FAIL : 0;
	}
	if (r == 0 && sc_jrnl_version(f->jr) == 1 && sc_jrnl_pinned(f->jr) > 0)
		printf("%s: an older build's journal (version 1) holds crash records; the mount "
		       "does not apply them (its header has no MAC, so a copy put back cannot be "
		       "told apart); they are listed below and --repair applies them\n", path);
	if (r < 0) {
		sc_cli_err(cmd, "cannot read %s: %s", path, strerror(-r));
		return SC_EXIT_FAIL;
	}
	return 0;
}

/*
 * An integrity volume's freshness record on this machine (format.md 11.9):
 * read only, or rewritten (lowered) with --allow-rollback; fsck never
 * makes one.  None, or one in use by a mount: said, roll-back unchecked.
 * 0, or an exit status after saying why (a damaged record).
 */
static int fresh_open(struct fsck *f)
{
	uint32_t flags = f->allow_rollback ? SC_FRESH_WRITE | SC_FRESH_ALLOW : 0;
	struct sc_fresh_info info;
	int r;

	r = sc_fresh_open(f->vol->ikey, f->vol->cfg.uuid, f->state_dir, flags, &f->fresh, &info);
	if (r == -ENOENT || r == -EBUSY) {
		printf("%s: %s: roll-back is not checked\n", info.path[0] ? info.path :
		       "the state directory", r == -ENOENT ? "no freshness record for this volume "
		       "on this machine (no mount here yet, or the record was lost)" :
		       sc_fresh_strerror(r));
		return 0;
	}
	if (r < 0) {
		sc_cli_err(cmd, "%s: %s", info.path[0] ? info.path : "the state directory",
			   sc_fresh_strerror(r));
		return SC_EXIT_FAIL;
	}
	if (info.torn)
		printf("%s: the last %" PRIu64 " bytes are a torn append (a crash while it was "
		       "written), not read: the record lags that much, which is safe\n",
		       info.path, info.dropped);
	return 0;
}

/*
 * The whole volume against the record: a crash journal last written by an
 * earlier run of this client (format.md 11.9) is a problem.  0, or -ENOMEM.
 */
/*
 * A volume without integrity of which this machine holds a freshness
 * record, which only an integrity volume makes (format.md 11.12): its
 * backing put back from before an upgrade, as the mount refuses it.  A
 * problem, unless --allow-rollback.  0, or an exit status.
 */
static int fresh_downgraded(struct fsck *f)
{
	char path[PATH_MAX];
	int r = sc_fresh_held(f->vol->cfg.uuid, f->state_dir, path);

	if (r == 1 && f->allow_rollback)
		printf("%s: this volume was an integrity volume on this machine and is not one "
		       "now; accepted (--allow-rollback)\n", path);
	else if (r == 1 && sc_fsck_problem(f, SC_CONFIG_NAME, false, "this machine holds a "
					   "freshness record of this volume (%s), which only an "
					   "integrity volume makes, but the volume is not one: its "
					   "backing put back from before 'stackcrypt upgrade'? "
					   "--allow-rollback accepts it", path) < 0)
		return SC_EXIT_FAIL;
	return 0;
}

static int fresh_volume(struct fsck *f)
{
	uint8_t run[SC_FRESH_RUN_LEN];
	int r;

	sc_jrnl_run(f->jr, run);
	r = sc_fresh_run_check(f->fresh, run);
	if (r == 1)
		printf("%s/%s: the volume is older than this client last saw it; accepted "
		       "(--allow-rollback)\n", f->backing, SC_JRNL_NAME);
	if (r != -ESTALE)
		return 0;
	r = sc_fsck_problem(f, SC_JRNL_NAME, false, "the volume is older than this client last "
			    "saw it: its crash journal was last written by an earlier run of this "
			    "client, not its last (put back from an older copy?); --allow-rollback "
			    "accepts it");
	return r < 0 ? r : 0;
}

/* Renames BACKING/rel to rel.stackcrypt-quarantine-N (first free N). */
static int quarantine(struct fsck *f, const char *rel)
{
	char from[PATH_MAX], to[PATH_MAX + 32];
	unsigned int n;

	if (full_path(f, rel, from, "quarantine"))
		return -ENAMETOOLONG;
	for (n = 1; n < 1000; n++) {
		snprintf(to, sizeof(to), "%s%s%u", from, QUARANTINE_TAG, n);
		if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) {
			printf("quarantined: %s -> %s\n", from, to);
			return 0;
		}
		if (errno == EINVAL || errno == ENOSYS) {
			/* no RENAME_NOREPLACE here: link never replaces */
			if (link(from, to) == 0) {
				if (unlink(from)) {
					sc_cli_err(cmd, "%s: %s", from, strerror(errno));
					return -errno;
				}
				printf("quarantined: %s -> %s\n", from, to);
				return 0;
			}
		}
		if (errno != EEXIST) {
			sc_cli_err(cmd, "cannot quarantine %s: %s", from, strerror(errno));
			return -errno;
		}
	}
	sc_cli_err(cmd, "cannot quarantine %s: too many quarantined copies", from);
	return -EEXIST;
}

/*
 * Whether the stored unit at byte u of the chunk at off (old ciphertext in
 * f->buf) is a hole the copy may keep as one.  Never one of the last two
 * units: the final unit and the one whose tail it may share follow the
 * tail rule, where zeros are a hole only together.
 */
static bool keep_hole(const struct fsck *f, uint64_t off, size_t u, uint64_t size)
{
	uint64_t last = size ? (size - 1) / f->bs * f->bs : 0;

	return off + u + f->bs < last && all_zero(f->buf + u, f->bs);
}

/*
 * Re-encrypts the size bytes of sfd (keys ofk) into tfd (keys nfk) with the
 * library's own routines, so the tiny-file and tail rules are the ones the
 * mount uses, keeping holes sparse.  Each chunk is decrypted again under
 * the new keys and compared before it is written.  0, -EIO (no match),
 * -ENODATA (the file shrank) or -errno.
 */
static int rekey_data(struct fsck *f, struct sc_fkey *ofk, struct sc_fkey *nfk, int sfd,
		      int tfd, uint64_t size)
{
	uint64_t off = 0;
	size_t u, run, got;
	int r;

	if (ftruncate(tfd, (off_t)size))
		return -errno;
	while (off < size) {
		uint64_t end = chunk_end(f, off, size);
		size_t len = end - off;

		r = sc_backing_pread_full(f->b, sfd, f->buf, len, off, &got);
		if (r)
			return r;
		r = sc_fkey_decrypt(ofk, off, f->buf, f->rk_plain, len, size);
		if (!r)
			r = sc_fkey_encrypt(nfk, off, f->rk_plain, f->rk_out, len, size);
		if (r)
			return r;
		for (u = 0; u < len; u += f->bs)
			if (keep_hole(f, off, u, size))
				memset(f->rk_out + u, 0, f->bs);
		r = sc_fkey_decrypt(nfk, off, f->rk_out, f->rk_check, len, size);
		if (r || memcmp(f->rk_check, f->rk_plain, len))
			return -EIO;
		for (u = 0; u < len; u = run) {
			for (run = u; run < len && !keep_hole(f, off, run, size); run += f->bs)
				;
			if (run > len)
				run = len;
			if (run > u) {
				r = sc_pwrite_all(tfd, f->rk_out + u, run - u, off + u);
				if (r)
					return r;
			}
			while (run < len && keep_hole(f, off, run, size))
				run += f->bs;
		}
		off = end;
	}
	return 0;
}

/*
 * Gives the copy tfd what the original (stat st, fd sfd) has besides its
 * data and header: owner, every other xattr (ACLs too), mode, times.  The
 * order matters: chown clears set-id bits and security.capability, so it
 * comes first; the mode comes after the xattrs, which a read-only mode
 * would forbid a non-root caller to set.  0 or -errno, *what says which.
 */
static int copy_attrs(int sfd, int tfd, const struct stat *st, const char **what)
{
	struct timespec times[2] = { st->st_atim, st->st_mtim };
	char *names = NULL, *name;
	ssize_t nlen, vlen;
	void *val = NULL;
	int r = 0;

	*what = "chown";
	if (fchown(tfd, st->st_uid, st->st_gid))
		return -errno;
	*what = "list xattrs";
	nlen = flistxattr(sfd, NULL, 0);
	if (nlen > 0) {
		names = malloc(nlen);
		if (!names)
			return -ENOMEM;
		nlen = flistxattr(sfd, names, nlen);
	}
	if (nlen < 0) {
		r = -errno;
		goto out_free;
	}
	for (name = names; name && name < names + nlen; name += strlen(name) + 1) {
		if (!strcmp(name, SC_HDR_XATTR))
			continue;
		*what = "copy xattrs";
		vlen = fgetxattr(sfd, name, NULL, 0);
		if (vlen >= 0) {
			free(val);
			val = malloc(vlen ? vlen : 1);
			if (!val) {
				r = -ENOMEM;
				goto out_free;
			}
			vlen = fgetxattr(sfd, name, val, vlen);
		}
		if (vlen < 0 || fsetxattr(tfd, name, val, vlen, 0)) {
			r = -errno;
			goto out_free;
		}
	}
	*what = "chmod";
	if (fchmod(tfd, st->st_mode & 07777)) {
		r = -errno;
		goto out_free;
	}
	*what = "set times";
	if (futimens(tfd, times))
		r = -errno;
out_free:
	free(val);
	free(names);
	return r;
}

/* Opens BACKING/dir-of-rel as a directory; *base gets rel's last component. */
static int open_parent(const struct fsck *f, const char *rel, const char **base)
{
	const char *slash = strrchr(rel, '/');
	char dir[PATH_MAX];
	int fd;

	*base = slash ? slash + 1 : rel;
	if (snprintf(dir, sizeof(dir), "%s/%.*s", f->backing, slash ? (int)(slash - rel) : 0,
		     rel) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Opens the file to re-key (base in dfd) and makes its keys, checking that
 * it is still the inode and the header that were checked.  0 with *sfd,
 * *st and *ofk set, or -errno (-ESTALE: it changed) with *what naming the
 * step and nothing left open.
 */
static int rekey_open_source(struct fsck *f, const struct keyed_file *kf, int dfd,
			     const char *base, int *sfd, struct stat *st,
			     struct sc_fkey **ofk, const char **what)
{
	uint8_t ohdr[SC_HDR_MAX];
	ssize_t hlen;
	int r;

	*what = "open it";
	*sfd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (*sfd < 0)
		return -errno;
	*what = "read its header";
	hlen = fgetxattr(*sfd, SC_HDR_XATTR, ohdr, sizeof(ohdr));
	r = hlen < 0 || fstat(*sfd, st) ? -errno : sc_fkey_new(f->vol->mkey, ohdr, hlen, ofk);
	if (r)
		goto err_close;
	*what = "it changed since it was checked";
	if (st->st_dev != kf->dev || st->st_ino != kf->ino || !S_ISREG(st->st_mode) ||
	    memcmp(sc_fkey_nonce(*ofk), kf->nonce, SC_HDR_NONCE_LEN)) {
		r = -ESTALE;
		sc_fkey_free(*ofk);
		goto err_close;
	}
	return 0;

err_close:
	close(*sfd);
	return r;
}

/*
 * Fills the new copy tfd: its header nhdr, the data of sfd re-encrypted
 * from ofk to nfk, the original's attributes (st), then fsync.  0 or
 * -errno with *what naming the step.
 */
static int rekey_fill_copy(struct fsck *f, int sfd, int tfd, const struct stat *st,
			   const uint8_t *nhdr, size_t hlen, struct sc_fkey *ofk,
			   struct sc_fkey *nfk, const char **what)
{
	int r;

	*what = "set the new header";
	r = fsetxattr(tfd, SC_HDR_XATTR, nhdr, hlen, XATTR_CREATE) ? -errno : 0;
	if (!r) {
		*what = "re-encrypt its data";
		r = rekey_data(f, ofk, nfk, sfd, tfd, (uint64_t)st->st_size);
		sc_wipe(f->rk_plain, CHUNK + f->bs);
		sc_wipe(f->rk_check, CHUNK + f->bs);
	}
	if (!r)
		r = copy_attrs(sfd, tfd, st, what);
	if (!r) {
		*what = "fsync its new copy";
		r = fsync(tfd) ? -errno : 0;
	}
	return r;
}

/*
 * Re-keys one file crash-safely: a new file REKEY_TAG<its nonce> in the
 * same directory gets a fresh header (sc_hdr_new), the data re-encrypted
 * under its keys, and the original's owner, xattrs, mode and times; it is
 * fsynced and renamed over the original, then the directory is fsynced.  A
 * kill at any point leaves under the name either the original (old keys)
 * or the copy (new keys), both whole; a copy left beside it is what
 * rekey_leftover recognises.  new_nonce gets the copy's nonce.  0 or
 * -errno (reported on stderr).
 */
static int rekey_file(struct fsck *f, const struct keyed_file *kf,
		      uint8_t new_nonce[SC_HDR_NONCE_LEN])
{
	uint8_t nhdr[SC_HDR_MAX];
	struct sc_fkey *ofk, *nfk;
	char tmp[REKEY_NAME_SIZE];
	const char *base, *what = "open it";
	int dfd, sfd, tfd, r;
	struct stat st;
	size_t hlen;

	dfd = open_parent(f, kf->rel, &base);
	if (dfd < 0) {
		r = dfd;
		goto out_report;
	}
	r = rekey_open_source(f, kf, dfd, base, &sfd, &st, &ofk, &what);
	if (r)
		goto out_close_dir;
	what = "make a new header";
	r = sc_hdr_new(f->vol->mkey, nhdr);
	if (r < 0)
		goto out_free_ofk;
	hlen = (size_t)r;
	r = sc_fkey_new(f->vol->mkey, nhdr, hlen, &nfk);
	if (r)
		goto out_free_ofk;
	rekey_name(tmp, sc_fkey_nonce(nfk));
	what = "create its new copy";
	tfd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (tfd < 0) {
		r = -errno;
		goto out_free_nfk;
	}
	r = rekey_fill_copy(f, sfd, tfd, &st, nhdr, hlen, ofk, nfk, &what);
	if (!r) {
		what = "rename its new copy over it";
		r = renameat(dfd, tmp, dfd, base) ? -errno : 0;
	}
	if (r) {
		unlinkat(dfd, tmp, 0);
		goto out_close_tmp;
	}
	memcpy(new_nonce, sc_fkey_nonce(nfk), SC_HDR_NONCE_LEN);
	what = "fsync its directory";
	r = fsync(dfd) ? -errno : 0;
out_close_tmp:
	close(tfd);
out_free_nfk:
	sc_fkey_free(nfk);
out_free_ofk:
	sc_fkey_free(ofk);
	close(sfd);
out_close_dir:
	close(dfd);
out_report:
	if (r)
		sc_cli_err(cmd, "cannot re-key %s/%s: %s: %s", f->backing,
			kf->rel, what, strerror(-r));
	return r;
}

/*
 * Points rel, another hard link of the file just re-keyed at `to`, at the
 * re-keyed inode: a link named REKEY_TAG<nonce> in rel's directory,
 * renamed over rel, then the directory fsynced.  A kill in between leaves
 * rel on the old inode, whole (the next run re-keys it on its own), and the
 * link, which that run removes.  0 or -errno (reported on stderr).
 */
static int relink(struct fsck *f, const char *to, const char *rel, const uint8_t *nonce)
{
	char from[PATH_MAX], tmp[REKEY_NAME_SIZE];
	const char *base;
	int dfd, r;

	if (full_path(f, to, from, "link a re-keyed file from"))
		return -ENAMETOOLONG;
	rekey_name(tmp, nonce);
	dfd = open_parent(f, rel, &base);
	r = dfd < 0 ? dfd : linkat(AT_FDCWD, from, dfd, tmp, 0) ? -errno : 0;
	if (!r && renameat(dfd, tmp, dfd, base)) {
		r = -errno;
		unlinkat(dfd, tmp, 0);
	}
	if (!r && fsync(dfd))
		r = -errno;
	if (dfd >= 0)
		close(dfd);
	if (r)
		sc_cli_err(cmd, "cannot link %s/%s to its re-keyed name %s: %s",
			f->backing, rel, from, strerror(-r));
	return r;
}

static bool same_inode(const struct keyed_file *a, const struct keyed_file *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/* Paths in order, a path not known (NULL: not found again) after every other. */
static int rel_cmp(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b;
	return strcmp(a, b);
}

/* By nonce, then inode, then path: a nonce's files together, an inode's paths together. */
static int keyed_cmp(const void *pa, const void *pb)
{
	const struct keyed_file *a = pa, *b = pb;
	int c = memcmp(a->nonce, b->nonce, SC_HDR_NONCE_LEN);

	if (c)
		return c;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return rel_cmp(a->rel, b->rel);
}

/* An inode of a shared-nonce group whose paths the second walk looks up. */
struct keyed_run {
	dev_t	dev;
	ino_t	ino;
	size_t	at, n, got;	/* its entries f->keyed[at, at + n), got of them found */
};

struct keyed_walk {
	struct fsck		*f;
	struct keyed_run	*runs;	/* sorted by inode */
	size_t			nruns;
};

static int run_cmp(const void *pa, const void *pb)
{
	const struct keyed_run *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

/* The second walk: gives each entry of a looked-up inode one of its paths. */
static int keyed_path(void *ctx, int at, const char *name, const char *rel,
		      const struct stat *st, int err)
{
	struct keyed_walk *w = ctx;
	struct keyed_run key, *run;
	struct keyed_file *kf;

	(void)at;
	if (err || !S_ISREG(st->st_mode) || quarantined_name(name))
		return 0;	/* the first walk checked none of these */
	key.dev = st->st_dev;
	key.ino = st->st_ino;
	run = bsearch(&key, w->runs, w->nruns, sizeof(key), run_cmp);
	if (!run || run->got == run->n)
		return 0;
	kf = &w->f->keyed[run->at + run->got];
	kf->rel = strdup(rel);
	if (!kf->rel)
		return -ENOMEM;
	run->got++;
	return 0;
}

/*
 * The paths of the inodes of every group of f->keyed (sorted) that holds
 * more than one inode, by a second walk of the tree (nothing to do when
 * no nonce is shared, as on almost every volume); each inode's entries
 * then sorted by path.  An entry whose path was not found (removed since)
 * keeps rel NULL.  0 or -errno.
 */
static int keyed_paths(struct fsck *f)
{
	struct keyed_file *kf = f->keyed;
	struct keyed_walk w = { .f = f };
	size_t i, j, k, cap = 0;
	int r = 0;

	for (i = 0; i < f->nkeyed; i = j) {
		for (j = i + 1; j < f->nkeyed && !memcmp(kf[j].nonce, kf[i].nonce,
							 SC_HDR_NONCE_LEN); j++)
			;
		if (same_inode(&kf[i], &kf[j - 1]))
			continue;
		for (k = i; k < j; k++) {
			struct keyed_run *run;

			if (k > i && same_inode(&kf[k], &kf[k - 1])) {
				w.runs[w.nruns - 1].n++;
				continue;
			}
			run = sc_fsck_room(w.runs, &cap, w.nruns, sizeof(*run), 16);
			if (!run) {
				r = -ENOMEM;
				goto out_free;
			}
			w.runs = run;
			w.runs[w.nruns++] = (struct keyed_run){ .dev = kf[k].dev, .ino = kf[k].ino,
								 .at = k, .n = 1 };
		}
	}
	if (!w.nruns)
		goto out_free;
	qsort(w.runs, w.nruns, sizeof(*w.runs), run_cmp);
	r = sc_backing_walk(f->b, keyed_path, &w);
	for (i = 0; i < w.nruns; i++)
		qsort(kf + w.runs[i].at, w.runs[i].n, sizeof(*kf), keyed_cmp);
out_free:
	free(w.runs);
	return r < 0 ? r : 0;
}

/* A path for a message: an entry whose path the second walk did not find was removed. */
static const char *rel_or_gone(const struct keyed_file *kf)
{
	return kf->rel ? kf->rel : "(a file removed while fsck ran)";
}

/*
 * Reports k, which shares the nonce (aes-gcm: the file id) of keep, in one
 * line naming both, by their mount paths too (sc_fsck_problem adds k's).
 * On aes-xts and aes-cbc, k is marked for --repair's re-key and counted in
 * *nshared; an aes-gcm file is not re-keyed (its unit nonces are random:
 * no keystream is shared), and which of the two is the right file is the
 * user's to say.  0 or -ENOMEM.
 */
static int report_shared(struct fsck *f, struct keyed_file *k, const struct keyed_file *keep,
			 size_t *nshared)
{
	const char *plain = keep->rel ? sc_fsck_plain_path(f, keep->rel) : NULL;
	const char *pre = plain ? " (in the mount: " : "", *post = plain ? ")" : "";
	int r;

	if (sc_mkey_cipher(f->vol->mkey) == SC_CIPHER_AES_GCM) {
		r = sc_fsck_problem(f, k->rel, false, "has the same aes-gcm file id (so the same "
				    "key) as %s/%s%s%s%s: a copy made in the backing directory or "
				    "a file put back; a unit of either opens in the other at the "
				    "same place.  Copy one through the mount (cp, then mv over it) "
				    "to give it an id of its own", f->backing, rel_or_gone(keep),
				    pre, plain ? plain : "", post);
		if (!r)
			f->bad[f->nbad - 1].shared_id = true;
		return r;
	}
	r = sc_fsck_problem(f, k->rel, false, "shares its header nonce (so its keys) with "
			    "%s/%s%s%s%s: a copy made in the backing directory, or a copied "
			    "header", f->backing, rel_or_gone(keep), pre, plain ? plain : "", post);
	if (!r) {
		k->rekey = true;
		(*nshared)++;
	}
	return r;
}

/*
 * Finds the files whose headers carry the same nonce, so the same keys, and
 * are not hard links of one inode: a copy made in the backing directory
 * (cp -a, a restore) or a header copied onto another file.  Of each group
 * one inode keeps its header (a good one, with the most links so that
 * fewest names move, then the first path); each other inode is reported
 * against it by its first path and marked for --repair.  Adds the number
 * reported to *nshared.  0 or -errno (keyed_paths' walk).
 */
static int shared_keys(struct fsck *f, size_t *nshared)
{
	struct keyed_file *kf = f->keyed;
	size_t i, j, k, keep;
	int r;

	if (f->nkeyed)
		qsort(kf, f->nkeyed, sizeof(*kf), keyed_cmp);
	r = keyed_paths(f);
	if (r)
		return r;
	for (i = 0; i < f->nkeyed; i = j) {
		for (j = i + 1; j < f->nkeyed && !memcmp(kf[j].nonce, kf[i].nonce,
							 SC_HDR_NONCE_LEN); j++)
			;
		if (same_inode(&kf[i], &kf[j - 1]))
			continue;	/* one file, or hard links of one */
		keep = i;
		for (k = i + 1; k < j; k++)
			if (!same_inode(&kf[k], &kf[k - 1]) &&
			    (kf[keep].bad > kf[k].bad || (kf[keep].bad == kf[k].bad &&
			     (kf[k].nlink > kf[keep].nlink || (kf[k].nlink == kf[keep].nlink &&
			      rel_cmp(kf[k].rel, kf[keep].rel) < 0)))))
				keep = k;
		for (k = i; k < j; k++) {
			if ((k > i && same_inode(&kf[k], &kf[k - 1])) || same_inode(&kf[k], &kf[keep]) ||
			    !kf[k].rel)
				continue;	/* a removed file shares nothing now */
			r = report_shared(f, &kf[k], &kf[keep], nshared);
			if (r)
				return r;
		}
	}
	return 0;
}

/* --repair: re-keys every file shared_keys marked.  The number re-keyed. */
static size_t rekey_shared(struct fsck *f)
{
	uint8_t nonce[SC_HDR_NONCE_LEN];
	size_t k, l, n, done = 0;

	for (k = 0; k < f->nkeyed; k++) {
		struct keyed_file *kf = &f->keyed[k];

		if (!kf->rekey || kf->bad)
			continue;	/* a bad file was quarantined instead */
		for (n = 1; k + n < f->nkeyed && same_inode(kf, &f->keyed[k + n]); n++)
			;
		/* a link outside the volume would keep the old keys after the rename */
		if (kf->nlink != n) {
			sc_cli_err(cmd, "not re-keying %s/%s: it has %ju hard "
				"links, %zu of them in %s", f->backing, kf->rel,
				(uintmax_t)kf->nlink, n, f->backing);
			continue;
		}
		/* unknown paths sort last: one of its links went between the two walks */
		if (!f->keyed[k + n - 1].rel) {
			sc_cli_err(cmd, "not re-keying %s/%s: one of its hard links was removed "
				   "while fsck ran", f->backing, kf->rel);
			continue;
		}
		if (rekey_file(f, kf, nonce))
			continue;
		printf("re-keyed: %s/%s\n", f->backing, kf->rel);
		done++;
		for (l = 1; l < n; l++)
			if (relink(f, kf->rel, f->keyed[k + l].rel, nonce) == 0)
				printf("re-keyed: %s/%s (a hard link of %s/%s)\n", f->backing,
				       f->keyed[k + l].rel, f->backing, kf->rel);
	}
	return done;
}

/*
 * --repair: removes a directory an interrupted mkdir left under a
 * temporary name, with its nonce file if it has one (the mkdir writes it
 * before the rename that names the directory); one that holds anything
 * else was not made by a mkdir alone and is left for a look.
 */
static void remove_tmpdir(struct fsck *f, const char *rel)
{
	char path[PATH_MAX], nonce[PATH_MAX];

	if (full_path(f, rel, path, "remove"))
		return;
	if (snprintf(nonce, sizeof(nonce), "%s/%s", path, SC_DIRNONCE_FILE) < (int)sizeof(nonce))
		unlink(nonce);	/* ENOENT: the nonce is in an attribute, or not written */
	if (rmdir(path) == 0)
		printf("removed: %s\n", path);
	else if (errno == ENOTEMPTY || errno == EEXIST)
		sc_cli_err(cmd, "not removing %s: it holds more than its nonce file (an "
			"interrupted mkdir leaves no more; look inside)", path);
	else
		sc_cli_err(cmd, "cannot remove %s: %s", path, strerror(errno));
}

/* --repair: deletes a leftover file: a re-key's temporary file (rekey_leftover), an orphan side file. */
static void remove_leftover(struct fsck *f, const char *rel)
{
	char path[PATH_MAX];

	if (full_path(f, rel, path, "remove"))
		return;
	if (unlink(path))
		sc_cli_err(cmd, "cannot remove %s: %s", path, strerror(errno));
	else
		printf("removed: %s\n", path);
}

/*
 * --repair: gives a symlink bound to another entry the target fsck_names.c
 * sealed for its own (a long target: its new side file moved into place
 * first), by a new symlink beside it renamed over it, so the name never
 * lacks a link.
 */
static void rebind_link(struct fsck *f, const struct bad_file *bf)
{
	char path[PATH_MAX], tmp[PATH_MAX + 64], a[PATH_MAX], b[PATH_MAX];
	uint8_t rnd[16];
	size_t dl;
	int o;

	if (full_path(f, bf->rel, path, "rebind"))
		return;
	if (bf->lside_new) {
		if (full_path(f, bf->lside_new, a, "rename") || full_path(f, bf->lside, b, "rename"))
			return;
		if (rename(a, b)) {
			sc_cli_err(cmd, "cannot rename %s to %s: %s", a, b, strerror(errno));
			return;
		}
	}
	if (sc_random(rnd, sizeof(rnd)))
		return;
	/* The mount's own temporary name (a crash leaves what the mount's would). */
	dl = (size_t)(strrchr(path, '/') - path);
	o = snprintf(tmp, sizeof(tmp), "%.*s/%s", (int)dl, path, SC_NAME_TMP_PREFIX);
	for (size_t i = 0; i < sizeof(rnd); i++)
		o += snprintf(tmp + o, sizeof(tmp) - (size_t)o, "%02x", rnd[i]);
	if (symlink(bf->relink, tmp)) {
		sc_cli_err(cmd, "cannot make %s: %s", tmp, strerror(errno));
		return;
	}
	if (rename(tmp, path)) {
		sc_cli_err(cmd, "cannot rename %s over %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
		return;
	}
	printf("rebound: %s (its target is now bound to this entry)\n", path);
}

static const char fsck_help[] =
"Usage: stackcrypt fsck [OPTIONS] BACKING\n"
"Check every file of the volume in BACKING (unmounted; a directory, or\n"
"gluster://HOST[:PORT]/VOLUME[/PATH] or cephfs://[ID@][HOST[:PORT]]/FS[/PATH],\n"
"read through libgfapi or libcephfs, where --repair is refused): its header is present, the right size and authentic, every byte\n"
"can be read, and every data unit is whole and decrypts under the format's\n"
"rules.  aes-xts and aes-cbc have no per-unit integrity tag: ciphertext changed\n"
"in place is not detected.  Each bad file is printed on standard output as\n"
"BACKING/PATH: REASON.\n"
"Files that share keys (the same header nonce: a copy made in BACKING with\n"
"cp -a, a restore, a copied header) are reported by pairs; hard links are not.\n"
"On an aes-gcm volume every file's in-file header is verified (foreign,\n"
"truncated or tampered) and every unit's authentication tag: a changed, moved\n"
"or swapped unit, one from another file, a file cut inside a unit is reported\n"
"with its unit number; files (not hard links) that carry the same file id, so\n"
"the same key (a backing file copied with cp, one put back), are reported by\n"
"pairs, each line naming both.  Whole units of zeros are holes (they read as\n"
"zeros) in files that had a hole or predate hole tracking: counted, listed\n"
"with --verbose, not problems; in any other file they are reported.  A unit torn\n"
"by a crash of the mount that the crash journal (sc.journal) can put right is\n"
"reported as such, not as a problem; --repair applies the journal, as the next mount would.\n"
"On a volume with encrypted names, every name is checked too: each directory's\n"
"nonce, each name decrypts, each long name has its side file, each symlink\n"
"target decrypts; entries that are no stackcrypt name are reported.\n"
"The summary counts every file: the plaintext bytes of the whole ones, and\n"
"the damaged ones apart, with their stored bytes.\n"
"Exit status: 0 clean, 1 problems found (also when repaired), or an error code.\n"
"\n"
"Options:\n"
"  --repair             rename each bad file to NAME" QUARANTINE_TAG "N\n"
"                       beside it (deletes none of your files; later runs\n"
"                       skip them), and give each file that shares keys a\n"
"                       new header and re-encrypt its data (crash-safe: a\n"
"                       new file renamed over it; a leftover of that,\n"
"                       " REKEY_TAG "<hex>, is removed); with encrypted\n"
"                       names, also remove orphan side files of long names\n"
"                       and long symlink targets, the sc.new.* directories\n"
"                       of an interrupted mkdir (with their nonce file) and\n"
"                       sc.new.* symlinks of an interrupted rename, and\n"
"                       rebind each symlink bound to another entry (nothing\n"
"                       else)\n"
"  --accept-unclean     with --repair, integrity volumes whose last mount\n"
"                       stopped uncleanly (a power loss can lose a header\n"
"                       write): accept each file whose size differs from its\n"
"                       header and whose units all authenticate, as found,\n"
"                       listing each\n"
"  --passfile=FILE      password = first line of FILE (\"-\" = standard input)\n"
"  --extpass=CMD        password = first line printed by sh -c CMD\n"
"  --keyfile=FILE       the volume's key file\n"
"  --masterkey[=FILE]   the master key (asked, or read from FILE / \"-\")\n"
"  --state-dir=DIR      integrity volumes: this client's freshness record is\n"
"                       DIR/UUID.state (default $XDG_STATE_HOME/stackcrypt,\n"
"                       else ~/.local/state/stackcrypt); a file older than it\n"
"                       is reported as rolled back\n"
"  --allow-rollback     integrity volumes: accept the older files found (a\n"
"                       restore made on purpose): the record is lowered; a\n"
"                       volume put back from before its upgrade: accept it\n"
"  -q, --quiet          no progress line on the terminal\n"
"  -v, --verbose        aes-gcm: list every hole (a whole unit of zeros)\n"
"  -h, --help           show this help\n";

enum { OPT_KEYFILE = 0x100, OPT_PASSFILE, OPT_EXTPASS, OPT_PASSWORD, OPT_MASTERKEY,
       OPT_REPAIR, OPT_STATE_DIR, OPT_ALLOW_ROLLBACK, OPT_ACCEPT_UNCLEAN };

static const struct option fsck_opts[] = {	/* the secrets first, in OPT_ order */
	SC_CLI_SECRET_OPTIONS,
	{ "masterkey",	optional_argument, NULL, OPT_MASTERKEY },
	{ "repair",	no_argument,	   NULL, OPT_REPAIR },
	{ "state-dir",	required_argument, NULL, OPT_STATE_DIR },
	{ "allow-rollback", no_argument,   NULL, OPT_ALLOW_ROLLBACK },
	{ "accept-unclean", no_argument,   NULL, OPT_ACCEPT_UNCLEAN },
	{ "quiet",	no_argument,	   NULL, 'q' },
	{ "verbose",	no_argument,	   NULL, 'v' },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* What the command line gives fsck besides what struct fsck keeps. */
struct fsck_opts {
	struct fsck		*f;
	struct sc_secret_src	*src;
	bool			given, quiet;
};

/* One of fsck's options.  0 or the exit status. */
static int fsck_option(void *o_, const char *cmd_, int c, char *arg)
{
	struct fsck_opts *o = o_;

	switch (c) {
	case OPT_REPAIR:
		o->f->repair = true;
		return 0;
	case OPT_STATE_DIR:
		o->f->state_dir = arg;
		return 0;
	case OPT_ALLOW_ROLLBACK:
		o->f->allow_rollback = true;
		return 0;
	case OPT_ACCEPT_UNCLEAN:
		o->f->accept_unclean = true;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'v':
		o->f->verbose = true;
		return 0;
	default:	/* OPT_KEYFILE .. OPT_MASTERKEY */
		return sc_cli_secret_opt(cmd_, fsck_opts[c - OPT_KEYFILE].name, arg, o->src,
					 &o->given);
	}
}

/* The shortest form of a BACKING spec: "/" for a path, the scheme of a URL ("gluster://"). */
static size_t url_min(const char *spec)
{
	const char *sep = strstr(spec, "://");

	return sc_backing_is_dir(spec) || !sep ? 1 : (size_t)(sep + 3 - spec);
}

/*
 * Parses the command line into f (backing, repair, progress) and src.
 * Returns SC_CLI_GO_ON, or the exit status for --help or a usage error.
 */
static int fsck_options(int argc, char **argv, struct fsck *f, struct sc_secret_src *src)
{
	struct fsck_opts o = { .f = f, .src = src };
	size_t len;
	int r;

	r = sc_cli_parse(cmd, argc, argv, ":hqv", fsck_opts, fsck_help, fsck_option, &o,
			 &f->backing);
	if (r != SC_CLI_GO_ON)
		return r;
	if (f->accept_unclean && !f->repair)
		return sc_cli_usage(cmd, "--accept-unclean goes with --repair: it changes headers");
	/* "dir/" and "dir" name the same volume: report paths as "dir/PATH" (a URL's too) */
	len = strlen(argv[optind]);
	while (len > url_min(argv[optind]) && argv[optind][len - 1] == '/')
		argv[optind][--len] = 0;
	f->progress = !o.quiet && isatty(STDERR_FILENO);
	return SC_CLI_GO_ON;
}

/*
 * Files change under a mounted volume while we read them, and a rename by
 * --repair would pull a file from under the daemon's open handles: a
 * check warns, a repair is refused.  SC_CLI_GO_ON or an exit status.
 */
static int fsck_mounted(const struct fsck *f)
{
	char mnt[PATH_MAX];

	if (!sc_backing_is_dir(f->backing))
		return SC_CLI_GO_ON;	/* fsck_lock_mount, once the volume is open */

	if (!sc_vol_mounted_at(f->backing, mnt, sizeof(mnt)))
		return SC_CLI_GO_ON;
	if (f->repair) {
		sc_cli_err(cmd, "%s is mounted at %s; unmount it first (fusermount3 -u %s)",
			   f->backing, mnt, mnt);
		return SC_EXIT_BACKING;
	}
	sc_cli_warn(cmd, "%s is mounted at %s; files being written may be reported as bad",
		    f->backing, mnt);
	return SC_CLI_GO_ON;
}

/*
 * Opens the backing f->b before anything else, as passwd does, so that a
 * bad URL is a usage error (status 2) and an unreachable volume status
 * 10, each in the open's line.  A backing whose engine cannot write files
 * (gluster:// today) has no calls to move, re-key or remove one: --repair
 * is refused whole there rather than done in part.  SC_CLI_GO_ON or an
 * exit status.
 */
static int fsck_connect(struct fsck *f)
{
	char err[512];
	int r;

	r = sc_backing_open(f->backing, NULL, &f->b, err, sizeof(err));
	if (r) {
		sc_cli_err(cmd, "%s", err);
		return r == -EINVAL ? SC_EXIT_USAGE : SC_EXIT_BACKING;
	}
	if (!f->repair || sc_backing_writable(f->b))
		return SC_CLI_GO_ON;
	sc_cli_err(cmd, "%s: --repair cannot change a volume over %.*s yet: run it on the "
		   "volume's directory on a FUSE mount of its file system, with no mount of "
		   "the volume running", f->backing, (int)url_min(f->backing), f->backing);
	sc_backing_close(f->b);
	f->b = NULL;
	return SC_EXIT_USAGE;
}

/*
 * fsck_mounted over a backing reached by URL, after sc_vol_open (so that a
 * URL that holds no volume is told so and gets no lock file): a mount
 * there shows in no mountinfo (it may be another host's), the one-mount
 * lock says it.  fsck takes that lock, so that no mount starts while it
 * reads, or warns as over a directory when a mount holds it (--repair is
 * refused earlier, in fsck_connect).  Nothing for a directory (-ENOENT).
 */
static void fsck_lock_mount(struct fsck *f)
{
	int r;

	r = sc_backing_lock_mount(f->b);
	if (r == -ENOENT)
		return;
	if (r == -EBUSY)
		sc_cli_warn(cmd, "%s is mounted (a client holds its one-mount lock); files "
			    "being written may be reported as bad", f->backing);
	else if (r)
		sc_cli_warn(cmd, "%s: cannot take the one-mount lock (%s): a mount started "
			    "now would change files while they are read", f->backing,
			    strerror(-r));
}

/*
 * --repair: quarantines the bad files (not those that merely lack a header
 * when the whole tree lost its xattrs), removes re-key leftovers, re-keys
 * the files that share keys.  SC_CLI_GO_ON or an exit status.
 */
static int fsck_repair(struct fsck *f, bool lost_xattrs, size_t nshared, size_t *moved,
		       size_t *rekeyed)
{
	size_t i;

	for (i = 0; i < f->nbad; i++)
		if (f->bad[i].quarantine && !(lost_xattrs && f->bad[i].nohdr) &&
		    quarantine(f, f->bad[i].rel) == 0) {
			(*moved)++;
			/* its name left the directory's listing, as an unlink would take it */
			sc_fsck_list_refresh(f, f->bad[i].rel);
		}
	for (i = 0; i < f->nbad; i++)	/* before the leftovers: a crash's tmp link is one */
		if (f->bad[i].relink)
			rebind_link(f, &f->bad[i]);
	for (i = 0; i < f->nbad; i++)
		if (f->bad[i].leftover)
			remove_leftover(f, f->bad[i].rel);
	for (i = f->nbad; i-- > 0;)	/* deepest first: one inside another goes first */
		if (f->bad[i].tmpdir)
			remove_tmpdir(f, f->bad[i].rel);
	if (!nshared)
		return SC_CLI_GO_ON;
	f->rk_plain = sc_secure_alloc(CHUNK + f->bs);
	f->rk_check = sc_secure_alloc(CHUNK + f->bs);
	f->rk_out = malloc(CHUNK + f->bs);
	if (!f->rk_plain || !f->rk_check || !f->rk_out) {
		sc_cli_err(cmd, "out of memory");
		return SC_EXIT_FAIL;
	}
	*rekeyed = rekey_shared(f);
	return SC_CLI_GO_ON;
}

/*
 * What --repair would do about the problems found, as one line: move the
 * bad files aside, remove leftovers, re-key the files that share keys.
 * Nothing when it can do nothing (names that are not stackcrypt names are
 * the user's to look at).
 */
static void repair_advice(const struct fsck *f, size_t nshared)
{
	size_t i, n = 0, nquar = 0, nleft = 0, nname = 0, nid = 0, nrebind = 0;
	const char *what[4];

	for (i = 0; i < f->nbad; i++) {
		nquar += f->bad[i].quarantine;
		nleft += f->bad[i].leftover || f->bad[i].tmpdir;
		nrebind += f->bad[i].relink != NULL;
		nname += f->bad[i].name && !f->bad[i].leftover && !f->bad[i].tmpdir &&
			 !f->bad[i].relink;
		nid += f->bad[i].shared_id;	/* its line says what to do: --repair does not */
	}
	/* what is none of these nor a shared key: a bad file as before */
	if (nquar || f->nbad > nleft + nname + nid + nrebind + nshared)
		what[n++] = "move the bad files aside";
	if (nleft)
		what[n++] = "remove the leftovers of interrupted operations";
	if (nrebind)
		what[n++] = "rebind the symlinks bound to other entries";
	if (nshared)
		what[n++] = "re-key the files that share keys";
	if (!n)
		return;
	printf("Run 'stackcrypt fsck --repair' to");
	for (i = 0; i < n; i++)
		printf("%s %s", i == 0 ? "" : i + 1 < n ? "," : " and", what[i]);
	printf(".\n");
}

/* The summary on stdout, and what to do next. */
static void fsck_summary(const struct fsck *f, bool lost_xattrs, size_t nshared, size_t moved,
			 size_t rekeyed)
{
	uint64_t whole = f->files - f->damaged;

	/* every file in one count or the other: a damaged one is never dropped silently */
	printf("%s: %" PRIu64 " file%s, %" PRIu64 " director%s checked: %" PRIu64 " bytes "
	       "(%.1f MiB) of plaintext in %" PRIu64 " whole file%s, %" PRIu64 " file%s "
	       "damaged (%" PRIu64 " stored bytes); %zu problem%s", f->backing, f->files,
	       f->files == 1 ? "" : "s", f->dirs, f->dirs == 1 ? "y" : "ies", f->bytes,
	       f->bytes / 1048576.0, whole, whole == 1 ? "" : "s", f->damaged,
	       f->damaged == 1 ? "" : "s", f->damaged_bytes, f->nbad, f->nbad == 1 ? "" : "s");
	if (f->repair)
		printf(", %zu file%s quarantined", moved, moved == 1 ? "" : "s");
	if (f->repair && nshared)
		printf(", %zu of %zu file%s re-keyed", rekeyed, nshared, nshared == 1 ? "" : "s");
	if (f->quarantined)
		printf("; %" PRIu64 " file%s quarantined earlier (skipped)", f->quarantined,
		       f->quarantined == 1 ? "" : "s");
	if (f->torn)
		printf("; %" PRIu64 " unit%s %s from the crash journal", f->torn,
		       f->torn == 1 ? "" : "s", f->repair ? "restored" : "to restore");
	if (f->pinned)
		printf("; %" PRIu64 " file%s being written when the mount stopped, %s",
		       f->pinned, f->pinned == 1 ? "" : "s", f->repair ? "accepted as found" :
		       "to accept as found");
	if (f->unborn)
		printf("; %" PRIu64 " file%s being created when the mount stopped, %s",
		       f->unborn, f->unborn == 1 ? "" : "s", f->repair ? "made empty files" :
		       "to make empty files");
	if (f->taken)
		printf("; %" PRIu64 " file%s accepted as found after the unclean stop", f->taken,
		       f->taken == 1 ? "" : "s");
	if (f->renamed)
		printf("; %" PRIu64 " file%s being renamed when the mount stopped, %s",
		       f->renamed, f->renamed == 1 ? "" : "s", f->repair ? "bound to the new "
		       "names" : "to bind to the new names");
	if (f->holes)
		printf("; %" PRIu64 " hole%s (whole units of zeros in files that had a hole "
		       "or predate hole tracking: they read as zeros, and in those files so "
		       "does a unit zeroed in %s%s)", f->holes, f->holes == 1 ? "" : "s",
		       f->backing, f->verbose ? "" : "; --verbose lists them");
	printf("\n");
	if (lost_xattrs)
		printf("%" PRIu64 " of %" PRIu64 " file%s with data lack%s a file header: was "
		       "this tree copied without extended attributes? use cp -a, rsync -aX, or "
		       "tar --xattrs --xattrs-include='*'%s\n", f->no_header, f->with_data,
		       f->with_data == 1 ? "" : "s", f->no_header == 1 ? "s" : "",
		       f->repair ? " (nothing quarantined for it)" : "");
	else if (f->nbad && !f->repair)
		repair_advice(f, nshared);
}

/* Frees what the walk and the repair gathered (not the volume). */
static void fsck_free(struct fsck *f)
{
	size_t i;

	for (i = 0; i < f->nbad; i++) {
		free(f->bad[i].rel);
		free(f->bad[i].relink);
		free(f->bad[i].lside_new);
		free(f->bad[i].lside);
	}
	free(f->bad);
	for (i = 0; i < f->nkeyed; i++)
		free(f->keyed[i].rel);
	free(f->keyed);
	sc_fsck_plain_free(f);
	sc_fsck_lists_free(f);
	sc_secure_free(f->rk_plain, f->rk_plain ? CHUNK + f->bs : 0);
	sc_secure_free(f->rk_check, f->rk_check ? CHUNK + f->bs : 0);
	free(f->rk_out);
	free(f->buf);
	free(f->gbuf);
}

/*
 * The walk's buffers, the freshness record (integrity volumes) and the
 * crash journal (aes-gcm), and the whole-volume roll-back check.  0, or the
 * exit status (said on stderr).
 */
static int fsck_prepare(struct fsck *f)
{
	bool gcm = sc_mkey_cipher(f->vol->mkey) == SC_CIPHER_AES_GCM;
	int r;

	f->jfd.fd = -1;
	f->buf = malloc(CHUNK + f->bs);
	if (gcm)
		f->gbuf = malloc(CHUNK);
	if (!f->buf || (gcm && !f->gbuf)) {
		sc_cli_err(cmd, "out of memory");
		return SC_EXIT_FAIL;
	}
	r = f->vol->ikey ? fresh_open(f) : fresh_downgraded(f);
	if (r)
		return r;
	if (f->gbuf) {
		r = journal_open(f);
		if (r)
			return r;
	}
	if (f->fresh && f->jr && fresh_volume(f) < 0)
		return SC_EXIT_FAIL;
	return 0;
}

int sc_cmd_fsck(int argc, char **argv)
{
	struct sc_secret_src src = { .kind = SC_SECRET_TTY };
	size_t moved = 0, nshared = 0, rekeyed = 0;
	struct fsck f = { 0 };
	bool lost_xattrs;
	char err[512];
	int r;

	r = fsck_options(argc, argv, &f, &src);
	if (r != SC_CLI_GO_ON)
		return r;
	prctl(PR_SET_DUMPABLE, 0);	/* we are about to hold the master key */
	r = fsck_mounted(&f);
	if (r == SC_CLI_GO_ON)
		r = fsck_connect(&f);
	if (r != SC_CLI_GO_ON)
		return r;
	r = sc_vol_open(f.backing, &src, &f.vol, err, sizeof(err));
	if (r) {
		sc_backing_close(f.b);
		return sc_cli_fail(cmd, r, err);
	}
	/* sc_vol_open has said so if the volume is not encrypted (null). */
	f.bs = sc_mkey_block_size(f.vol->mkey);
	fsck_lock_mount(&f);
	r = fsck_prepare(&f);
	if (r)
		goto out_free;
	if (f.vol->cfg.features & SC_FEAT_NAMES)
		r = sc_fsck_names(&f);
	if (r >= 0)
		r = sc_backing_walk(f.b, visit, &f);
	sc_fsck_progress_end(&f);
	if (r < 0) {
		sc_cli_err(cmd, "walking %s: %s", f.backing, strerror(-r));
		r = SC_EXIT_FAIL;
		goto out_free;
	}
	/*
	 * Most files with data lacking a header is not damage file by file: the
	 * tree was copied by a tool that drops extended attributes (cp -r, tar
	 * without --xattrs, rsync without -X), and the copy's files cannot be
	 * decrypted.  Say so once; moving every file aside would not help.
	 */
	lost_xattrs = f.no_header > 0 && 2 * f.no_header > f.with_data;
	r = shared_keys(&f, &nshared);
	if (r < 0) {
		sc_cli_err(cmd, "%s", strerror(-r));
		r = SC_EXIT_FAIL;
		goto out_free;
	}
	/* --repair: records of files the whole walk did not find are of deleted files */
	if (f.repair && f.jr && sc_jrnl_drop_unknown(f.jr, journal_seen, &f) > 0)
		printf("%s/%s: dropped the crash records of files no longer in the volume\n",
		       f.backing, SC_JRNL_NAME);
	if (f.repair && f.jr && sc_jrnl_dirty_drop_unknown(f.jr, journal_seen, &f) > 0)
		printf("%s/%s: dropped the dirty table entries of files no longer in the volume\n",
		       f.backing, SC_JRNL_NAME);
	if (f.repair) {
		r = fsck_repair(&f, lost_xattrs, nshared, &moved, &rekeyed);
		if (r != SC_CLI_GO_ON)
			goto out_free;
	}
	fsck_summary(&f, lost_xattrs, nshared, moved, rekeyed);
	if (f.torn && !f.repair)
		printf("%" PRIu64 " unit%s torn by a crash of the mount, not damage: 'stackcrypt "
		       "fsck --repair' or the next mount repairs %s from the journal.\n", f.torn,
		       f.torn == 1 ? "" : "s", f.torn == 1 ? "it" : "them");
	if (f.pinned && !f.repair)
		printf("%" PRIu64 " file%s being written when the mount stopped, not damage: "
		       "%s authenticate%s, and 'stackcrypt fsck --repair' or the next mount "
		       "accepts %s at the size found.\n", f.pinned, f.pinned == 1 ? "" : "s",
		       f.pinned == 1 ? "its units" : "their units", "",
		       f.pinned == 1 ? "it" : "them");
	r = f.nbad ? SC_EXIT_FAIL : SC_EXIT_OK;
out_free:
	if (f.fresh && sc_fresh_close(f.fresh, false, false) < 0)
		sc_cli_warn(cmd, "cannot rewrite the freshness record: it keeps what it held");
	/* --repair: the journal stays unclean while a file of that stop waits for --accept-unclean */
	sc_jrnl_close(f.jr, f.unclean == 0);
	if (f.jfd.fd >= 0)
		sc_backing_close_file(f.b, f.jfd.fd);
	free(f.jseen);
	fsck_free(&f);
	sc_vol_close(f.vol);
	sc_backing_close(f.b);
	return r;
}
