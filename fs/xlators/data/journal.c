/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * journal.c - the gcm layer's intent journal (docs/format.md 10.10).
 *
 * Why: the kernel may stop a buffered pwrite at a page boundary when the
 * daemon gets SIGKILL, and every stored unit (bs + 32 bytes) spans two
 * pages, so the unit being written at that instant can be left torn (new
 * head, old tail: it fails its tag), or a growing file cut inside a unit.
 * Before each in-place write of units, the layer writes one record into a
 * free slot of sc.journal: which units of which file the write covers,
 * and the sealed new bytes of those that already existed.  Records are
 * not cleared after the write (that would cost a second write): a DIRTY
 * flag in the journal header says whether the last run stopped cleanly.
 * After an unclean stop the records of that run are pinned (their slots
 * are no longer handed out) until the file they name is first opened and
 * resolved, or fsck --repair resolves it.  Resolution only ever touches a
 * unit that fails to open: it gets the record's sealed unit (its new
 * content), or an append torn inside it is cut back to the unit's start
 * (its old content: nothing).
 *
 * No fsync per write: the journal is for kill -9 (the page cache outlives
 * the process).  Records are MACed under their own key (sc_jrnl_mac) and
 * their units carry their own tags, so a record can only restore a unit to
 * something the key holder wrote for that file and index.
 *
 * Integrity volumes (docs/format.md 11.8) get version 3: the same header
 * and records, and a dirty table between the header block and the slots.
 * A file's entry (its id and the gen of its header) is written before the
 * first change of a write session moves its size and zeroed after the
 * commit that stores the size in its header; the entries the last run
 * left (all after an unclean stop, the pinned ones after a clean one) are
 * carried into the new run, pinned, until the file is reconciled at its
 * first open (fmt_gcm.c) or by fsck --repair.  Entries are not fsynced
 * either: they cover kill -9, as records do.
 *
 * Locking: j->lock guards the slot bitmaps, the pinned table, the
 * sequence counter, the dirty table and header writes; j->resolve
 * serialises resolutions (a second opener of a file waits until the
 * first has repaired it).
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sc_xlator.h"	/* sc_log */
#include "sc_journal.h"

#define JRNL_MAGIC	"scjournl"
#define JRNL_VERSION	2	/* 1: the header unauthenticated, runs counted (below) */
#define JRNL_VERSION_DT	3	/* 2 with a dirty table (integrity volumes) */
#define JRNL_DIRTY	1u
#define REC_MAGIC	"scjr"
#define RUN_ID_LEN	16
#define SLOT_DATA	(256u * 1024)	/* sealed bytes a slot holds, about */
/*
 * The largest slot a journal may have (#28 finding 8): a header is read
 * before anything of the journal is authenticated, and a slot size up to
 * 4 GiB would size the records read into memory and the journal's mapping
 * (64 slots: 256 GiB).  Slots this build makes are at most 282 624 bytes
 * (bs 512); 1 MiB leaves room for a later build to make larger ones.
 */
#define SLOT_SIZE_MAX	(1024u * 1024)

#define DIRTY_MAGIC	"scjd"
#define DIRTY_N		4096u	/* entries of a new table */
#define DIRTY_N_MAX	65536u	/* a table read before anything is authenticated: bounded */
#define DIRTY_PINNED	0x80u	/* kind | this: carried from an earlier run */
#define DIRTY_CARRIED	0x40u	/* in memory only, while carrying */
#define DIRTY_FILE	1u
#define DIRTY_DIR	2u
#define DIRTY_CREATE	3u	/* SC_JRNL_CREATE */
#define DIRTY_RENAME	4u	/* SC_JRNL_RENAME */
_Static_assert(SC_JRNL_CREATE == DIRTY_CREATE && SC_JRNL_RENAME == DIRTY_RENAME,
	       "the place kinds are the entry's kind byte (docs/format.md 11.8)");

/*
 * The journal header, at offset 0 (its block is SC_JRNL_HDR_BLOCK bytes).
 * Version 2 (#28 finding 4): a MAC from the master key binds the header
 * and the record headers of the pinned slots, and each run of a mount has
 * a random id its records carry, so a journal put back from earlier, or a
 * flag or pinned bit set by hand, makes no stale record count.
 */
struct jhdr {
	char		magic[8];	/* "scjournl" */
	uint32_t	version;	/* 2 */
	uint32_t	flags;		/* JRNL_DIRTY: a run is going on, or stopped uncleanly */
	uint32_t	bs;		/* the volume's unit size */
	uint32_t	nslots;		/* slots after the header block */
	uint32_t	slot_size;	/* bytes per slot, a multiple of 4096 */
	uint32_t	dirty_off;	/* version 3: the dirty table's offset (4096); else 0 */
	uint8_t		run[RUN_ID_LEN];	/* random, new at every read-write mount */
	uint64_t	pinned;		/* bit i: slot i holds a record to resolve */
	uint32_t	dirty_n;	/* version 3: its entries; else 0 */
	uint8_t		zero[4];
	uint8_t		mac[16];	/* HMAC-SHA256(journal key, 0..63 || pinned records)[0..15] */
} __attribute__((packed));

/* A record, at the start of a slot; its ndata units' sealed bytes follow. */
struct jrec {
	char		magic[4];	/* "scjr" */
	uint8_t		version;	/* 2 */
	uint8_t		reserved[3];	/* 0 */
	uint32_t	ndata;		/* units with data: the first ndata of the write */
	uint32_t	data_len;	/* their sealed bytes after the record */
	uint64_t	seq;		/* number of the record in its run */
	uint8_t		run[RUN_ID_LEN];	/* the run that wrote it */
	uint8_t		file_id[SC_GCM_FILE_ID_LEN];
	uint64_t	first;		/* the write's first unit */
	uint64_t	nunits;		/* units the write covers */
	uint64_t	old_stored;	/* the file's stored size before the write */
	uint8_t		mac[16];	/* HMAC-SHA256(journal key, bytes 0..79)[0..15] */
} __attribute__((packed));

/*
 * Version 1 (before #28 finding 4), read so that the crash records of an
 * older build are not lost: only fsck shows and applies them (load_records).
 */
struct jhdr1 {
	char		magic[8];
	uint32_t	version;	/* 1 */
	uint32_t	flags, bs, nslots, slot_size, reserved;
	uint64_t	run;		/* bumped by every read-write mount */
	uint64_t	pinned;
	uint8_t		zero[16];
} __attribute__((packed));

struct jrec1 {
	char		magic[4];
	uint8_t		version;	/* 1 */
	uint8_t		reserved[3];
	uint32_t	ndata, data_len;
	uint64_t	seq;		/* run << 32 | count in the run */
	uint8_t		file_id[SC_GCM_FILE_ID_LEN];
	uint64_t	first, nunits, old_stored;
	uint8_t		mac[16];	/* HMAC-SHA256(journal key, bytes 0..63)[0..15] */
} __attribute__((packed));

_Static_assert(sizeof(struct jhdr) == 80, "journal header is 80 bytes");
_Static_assert(offsetof(struct jhdr, mac) == 64, "the header's MAC follows bytes 0..63");
_Static_assert(sizeof(struct jrec) == SC_JRNL_REC_SIZE, "journal record is 96 bytes");
_Static_assert(offsetof(struct jrec, mac) == 80, "the MAC covers bytes 0..79");
_Static_assert(sizeof(struct jhdr1) == 64 && sizeof(struct jrec1) == 80, "version 1 sizes");
_Static_assert(offsetof(struct jhdr, dirty_off) == 28 && offsetof(struct jhdr, dirty_n) == 56,
	       "the table's fields are under the header MAC (docs/format.md 11.8)");

/* A dirty table entry (docs/format.md 11.8). */
struct jdent {
	char		magic[4];	/* "scjd" */
	uint8_t		kind;		/* DIRTY_FILE, _DIR, _CREATE or _RENAME, | DIRTY_PINNED */
	uint8_t		zero[3];
	uint8_t		run[RUN_ID_LEN];	/* the run that wrote it */
	uint8_t		id[SC_GCM_FILE_ID_LEN];	/* the file id (or directory nonce) */
	uint64_t	gen;		/* the header's gen when the session began */
	uint8_t		mac[SC_INTEG_TAG_LEN];	/* sc_dirty_mac of bytes 0..47 */
} __attribute__((packed));

_Static_assert(sizeof(struct jdent) == SC_DIRTY_ENTRY_LEN, "a dirty entry is 64 bytes");
_Static_assert(offsetof(struct jdent, mac) == 48, "the entry's MAC covers bytes 0..47");

/* An entry in use, in memory: kind 0 is a free index. */
struct jdmem {
	uint8_t		kind;
	uint8_t		id[SC_GCM_FILE_ID_LEN];
	uint64_t	gen;
};
_Static_assert(SC_JRNL_SLOTS_MAX == 64, "one 64-bit pinned bitmap");
_Static_assert(SC_JRNL_REC_SIZE + (SLOT_DATA / 512) * (512 + SC_GCM_OVERHEAD) + 4095 <=
	       SLOT_SIZE_MAX, "the slots this build makes (bs 512 the largest) are in bounds");

/* A pinned record, in memory. */
struct jpin {
	int		slot;
	uint64_t	seq;
	uint8_t		fid[SC_GCM_FILE_ID_LEN];
	uint64_t	first, nunits, old_stored;
	uint32_t	ndata, data_len;
	uint8_t		*data;
	uint8_t		raw[SC_JRNL_REC_SIZE];	/* as stored: the header's MAC covers it */
};

/* The header, in host byte order. */
struct jstate {
	uint32_t	version;
	uint32_t	flags;
	uint32_t	bs, nslots, slot_size;
	uint32_t	dirty_off, dirty_n;	/* version 3 */
	uint8_t		run[RUN_ID_LEN];	/* versions 2 and 3 */
	uint64_t	run1;			/* version 1 */
	uint64_t	pinned;
};

struct sc_jrnl {
	const struct sc_mkey	*mk;
	struct sc_jio		io;
	enum sc_jrnl_mode	mode;
	bool			unclean;	/* the run before this open stopped uncleanly */
	bool			keep_unclean;	/* sc_jrnl_keep_unclean: a clean close keeps DIRTY */
	uint32_t		bs;
	uint32_t		hlen;	/* the files' header length: where their units start */
	struct jstate		h;	/* under lock */
	uint64_t		busy;	/* slots with a write in flight; under lock */
	uint64_t		used;	/* slots this run wrote a record to; under lock */
	uint64_t		count;	/* records of this run; under lock */
	pthread_mutex_t		lock;
	pthread_cond_t		freed;
	pthread_mutex_t		resolve;
	struct jpin		*pins;	/* under lock, in slot order */
	unsigned		npins;	/* under lock; also read atomically */
	bool			full_logged;
	/* Version 3 (ik set: integrity volumes): the dirty table. */
	const struct sc_ikey	*ik;
	struct jdmem		*dt;	/* h.dirty_n entries; under lock */
	uint32_t		dt_next;	/* where the search for a free entry starts */
	unsigned		dt_pinned;	/* pinned entries; under lock, read atomically */
};

static uint64_t sbs_of(uint32_t bs)
{
	return (uint64_t)bs + SC_GCM_OVERHEAD;
}

/* Version 3: the table follows the header block, the slots follow it (whole blocks). */
static uint64_t slots_base(const struct jstate *h)
{
	if (h->version != JRNL_VERSION_DT)
		return SC_JRNL_HDR_BLOCK;
	return h->dirty_off + (((uint64_t)h->dirty_n * SC_DIRTY_ENTRY_LEN + 4095) & ~4095ull);
}

static uint64_t slot_off(const struct sc_jrnl *j, int slot)
{
	return slots_base(&j->h) + (uint64_t)slot * j->h.slot_size;
}

static uint64_t slots_mask(uint32_t n)
{
	return n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

/* ---- encoding ---------------------------------------------------------------- */

/*
 * The version 2 header's MAC: bytes 0..63 of le, then the stored record
 * header of every pinned slot in slot order (j->pins is kept so), so that
 * neither a pinned bit nor the record it keeps can be changed or put back.
 */
static int hdr_mac(const struct sc_jrnl *j, const struct jhdr *le, uint64_t pinned,
		   uint8_t mac[16])
{
	uint8_t msg[offsetof(struct jhdr, mac) + SC_JRNL_SLOTS_MAX * SC_JRNL_REC_SIZE];
	uint8_t full[32];
	size_t len = offsetof(struct jhdr, mac);
	int ret;

	memcpy(msg, le, len);
	for (unsigned i = 0; i < j->npins; i++)
		if (pinned & (UINT64_C(1) << j->pins[i].slot)) {
			memcpy(msg + len, j->pins[i].raw, SC_JRNL_REC_SIZE);
			len += SC_JRNL_REC_SIZE;
		}
	ret = sc_jrnl_mac(j->mk, msg, len, full);
	memcpy(mac, full, 16);
	return ret;
}

static int hdr_write(struct sc_jrnl *j)
{
	struct jhdr le;
	int ret;

	if (j->h.version == 1) {
		/* fsck --repair of an older build's journal: kept in its own format */
		struct jhdr1 le1 = { .version = htole32(1), .flags = htole32(j->h.flags),
				     .bs = htole32(j->h.bs), .nslots = htole32(j->h.nslots),
				     .slot_size = htole32(j->h.slot_size),
				     .run = htole64(j->h.run1), .pinned = htole64(j->h.pinned) };

		memcpy(le1.magic, JRNL_MAGIC, sizeof(le1.magic));
		return j->io.pwrite(j->io.ctx, &le1, sizeof(le1), 0);
	}
	memset(&le, 0, sizeof(le));
	memcpy(le.magic, JRNL_MAGIC, sizeof(le.magic));
	le.version = htole32(j->h.version);
	le.dirty_off = htole32(j->h.dirty_off);
	le.dirty_n = htole32(j->h.dirty_n);
	le.flags = htole32(j->h.flags);
	le.bs = htole32(j->h.bs);
	le.nslots = htole32(j->h.nslots);
	le.slot_size = htole32(j->h.slot_size);
	memcpy(le.run, j->h.run, RUN_ID_LEN);
	le.pinned = htole64(j->h.pinned);
	ret = hdr_mac(j, &le, j->h.pinned, le.mac);
	if (ret == 0)
		ret = j->io.pwrite(j->io.ctx, &le, sizeof(le), 0);
	return ret;
}

/*
 * A header read from disk (its MAC is checked once the pinned records are
 * read: check_hdr_mac): 0, or -EUCLEAN when it is not one this build reads.
 */
static int hdr_decode(const struct jhdr *le, uint32_t bs, bool dt, struct jstate *h)
{
	const struct jhdr1 *le1 = (const struct jhdr1 *)le;

	memset(h, 0, sizeof(*h));
	if (memcmp(le->magic, JRNL_MAGIC, sizeof(le->magic)) != 0)
		return -EUCLEAN;
	h->version = le32toh(le->version);
	h->flags = le32toh(le->flags);
	h->bs = le32toh(le->bs);
	h->nslots = le32toh(le->nslots);
	h->slot_size = le32toh(le->slot_size);
	if (h->version == 1) {
		h->run1 = le64toh(le1->run);
		h->pinned = le64toh(le1->pinned);
	} else if (h->version == JRNL_VERSION || (h->version == JRNL_VERSION_DT && dt)) {
		/* version 3 only where a table is kept: integrity volumes */
		memcpy(h->run, le->run, RUN_ID_LEN);
		h->pinned = le64toh(le->pinned);
		h->dirty_off = le32toh(le->dirty_off);
		h->dirty_n = le32toh(le->dirty_n);
		if (h->version == JRNL_VERSION_DT ?
		    h->dirty_off != SC_JRNL_HDR_BLOCK || h->dirty_n == 0 || h->dirty_n > DIRTY_N_MAX :
		    h->dirty_off != 0 || h->dirty_n != 0)
			return -EUCLEAN;
	} else {
		return -EUCLEAN;
	}
	if (h->bs != bs || h->nslots == 0 || h->nslots > SC_JRNL_SLOTS_MAX ||
	    h->slot_size % 4096 != 0 || h->slot_size < SC_JRNL_REC_SIZE + sbs_of(bs) ||
	    h->slot_size > SLOT_SIZE_MAX ||
	    (h->flags & ~JRNL_DIRTY) != 0 || (h->pinned & ~slots_mask(h->nslots)) != 0)
		return -EUCLEAN;
	return 0;
}

static int rec_mac(const struct sc_jrnl *j, const void *r, size_t len, uint8_t mac[16])
{
	uint8_t full[32];
	int ret = sc_jrnl_mac(j->mk, r, len, full);

	memcpy(mac, full, 16);
	return ret;
}

/* The fields versions 1 and 2 share (same names, other offsets), into a pin. */
#define REC_FIELDS(p, r) do {						\
		(p)->seq = le64toh((r)->seq);				\
		memcpy((p)->fid, (r)->file_id, sizeof((p)->fid));	\
		(p)->first = le64toh((r)->first);			\
		(p)->nunits = le64toh((r)->nunits);			\
		(p)->old_stored = le64toh((r)->old_stored);		\
		(p)->ndata = le32toh((r)->ndata);			\
		(p)->data_len = le32toh((r)->data_len);			\
	} while (0)

/*
 * Reads and checks the record in slot; 0 with *p filled (data allocated),
 * -EUCLEAN when the slot holds no valid record, or -errno.  *run: the
 * run that wrote it (version 2), or its run number (version 1) in its
 * first 8 bytes.
 */
static int rec_load(struct sc_jrnl *j, int slot, struct jpin *p, uint8_t run[RUN_ID_LEN])
{
	uint64_t sbs = sbs_of(j->bs);
	uint8_t mac[16];
	ssize_t n;
	int ret;

	memset(p, 0, sizeof(*p));
	n = j->io.pread(j->io.ctx, p->raw, sizeof(p->raw), slot_off(j, slot));
	if (n < 0)
		return (int)n;
	if (j->h.version == 1) {
		const struct jrec1 *r = (const struct jrec1 *)p->raw;
		uint64_t run1;

		if ((size_t)n < sizeof(*r) || memcmp(r->magic, REC_MAGIC, 4) != 0 ||
		    r->version != 1)
			return -EUCLEAN;
		ret = rec_mac(j, r, offsetof(struct jrec1, mac), mac);
		if (ret < 0)
			return ret;
		if (!sc_memeq_ct(mac, r->mac, sizeof(mac)))
			return -EUCLEAN;
		REC_FIELDS(p, r);
		run1 = p->seq >> 32;
		memset(run, 0, RUN_ID_LEN);
		memcpy(run, &run1, sizeof(run1));
	} else {
		const struct jrec *r = (const struct jrec *)p->raw;

		if ((size_t)n < sizeof(*r) || memcmp(r->magic, REC_MAGIC, 4) != 0 ||
		    r->version != JRNL_VERSION)
			return -EUCLEAN;
		ret = rec_mac(j, r, offsetof(struct jrec, mac), mac);
		if (ret < 0)
			return ret;
		if (!sc_memeq_ct(mac, r->mac, sizeof(mac)))
			return -EUCLEAN;
		REC_FIELDS(p, r);
		memcpy(run, r->run, RUN_ID_LEN);
	}
	p->slot = slot;
	/* MACed, so these hold unless the key holder wrote nonsense: check anyway. */
	if (p->ndata > p->nunits || p->first > SC_GCM_UNIT_MAX ||
	    p->nunits > SC_GCM_UNIT_MAX - p->first ||
	    p->data_len > j->h.slot_size - SC_JRNL_REC_SIZE ||
	    p->data_len > (uint64_t)p->ndata * sbs ||
	    (p->ndata > 0 && p->data_len <= (uint64_t)(p->ndata - 1) * sbs + SC_GCM_OVERHEAD))
		return -EUCLEAN;
	if (p->data_len == 0)
		return 0;
	p->data = malloc(p->data_len);
	if (!p->data)
		return -ENOMEM;
	n = j->io.pread(j->io.ctx, p->data, p->data_len, slot_off(j, slot) +
			(j->h.version == 1 ? sizeof(struct jrec1) : SC_JRNL_REC_SIZE));
	if (n < 0 || (size_t)n < p->data_len) {
		free(p->data);
		p->data = NULL;
		/* a record torn while it was written: its write never started */
		return n < 0 ? (int)n : -EUCLEAN;
	}
	return 0;
}

static int pin_add(struct sc_jrnl *j, const struct jpin *p)
{
	struct jpin *np = realloc(j->pins, (j->npins + 1) * sizeof(*np));

	if (!np)
		return -ENOMEM;
	j->pins = np;
	j->pins[j->npins] = *p;
	__atomic_store_n(&j->npins, j->npins + 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Loads the pinned records, and (after an unclean stop: DIRTY) the records
 * the stopped run wrote, which become pinned.  Version 2: a pinned slot
 * must hold a valid record (the header's MAC covers it: checked by the
 * caller), and a slot not pinned counts only with the run id of the
 * header.  0 or -errno.
 */
static int load_records(struct sc_jrnl *j)
{
	bool dirty = j->h.flags & JRNL_DIRTY;
	uint8_t want[RUN_ID_LEN] = { 0 };

	if (j->h.version == 1)
		memcpy(want, &j->h.run1, sizeof(j->h.run1));
	else
		memcpy(want, j->h.run, RUN_ID_LEN);
	for (uint32_t i = 0; i < j->h.nslots; i++) {
		bool pinned = j->h.pinned & (UINT64_C(1) << i);
		uint8_t run[RUN_ID_LEN];
		struct jpin p;
		int ret;

		if (!pinned && !dirty)
			continue;
		ret = rec_load(j, (int)i, &p, run);
		if (ret == -EUCLEAN && pinned && j->h.version != 1)
			return -EBADMSG;	/* the header promised a record */
		if (ret == -EUCLEAN || (ret == 0 && !pinned && memcmp(run, want, RUN_ID_LEN))) {
			/* no record, a torn or forged one, or a stale one of a clean run */
			if (ret == 0)
				free(p.data);
			if (pinned)
				sc_log(SC_LOG_WARNING, "stackcrypt: gcm: journal slot %u is pinned "
					 "but holds no valid record; ignored\n", i);
			j->h.pinned &= ~(UINT64_C(1) << i);
			continue;
		}
		if (ret < 0)
			return ret;
		ret = pin_add(j, &p);
		if (ret < 0) {
			free(p.data);
			return ret;
		}
		j->h.pinned |= UINT64_C(1) << i;
	}
	return 0;
}

/*
 * Version 2: the header read (le) against its MAC over the records its
 * pinned bits name (loaded first).  0, or -EBADMSG: not the header the
 * last mount wrote with this key (put back, edited, or another volume's).
 */
static int check_hdr_mac(struct sc_jrnl *j, const struct jhdr *le, uint64_t pinned)
{
	uint8_t mac[16];
	int ret = hdr_mac(j, le, pinned, mac);

	if (ret < 0)
		return ret;
	return sc_memeq_ct(mac, le->mac, sizeof(mac)) ? 0 : -EBADMSG;
}

static void pins_free(struct sc_jrnl *j)
{
	for (unsigned i = 0; i < j->npins; i++)
		free(j->pins[i].data);
	free(j->pins);
	j->pins = NULL;
	j->npins = 0;
}

/* ---- the dirty table (version 3) -------------------------------------------- */

static uint64_t dent_off(const struct sc_jrnl *j, uint32_t i)
{
	return j->h.dirty_off + (uint64_t)i * SC_DIRTY_ENTRY_LEN;
}

/* Writes entry i (kind 0: zeroes it) under run.  0 or -errno. */
static int dent_write(struct sc_jrnl *j, uint32_t i, uint8_t kind,
		      const uint8_t id[SC_GCM_FILE_ID_LEN], uint64_t gen, const uint8_t *run)
{
	struct jdent e;
	int ret = 0;

	memset(&e, 0, sizeof(e));
	if (kind) {
		memcpy(e.magic, DIRTY_MAGIC, sizeof(e.magic));
		e.kind = kind;
		memcpy(e.run, run, RUN_ID_LEN);
		memcpy(e.id, id, SC_GCM_FILE_ID_LEN);
		e.gen = htole64(gen);
		ret = sc_dirty_mac(j->ik, (const uint8_t *)&e, e.mac);
	}
	if (ret == 0)
		ret = j->io.pwrite(j->io.ctx, &e, sizeof(e), dent_off(j, i));
	return ret;
}

/*
 * Loads the table of the run the header names: its valid entries (magic,
 * MAC, that run, a known kind), all of them after an unclean stop, only
 * the pinned ones after a clean one (format.md 11.8).  Each is kept
 * pinned.  0 or -errno.
 */
static int dirty_load(struct sc_jrnl *j)
{
	size_t len = (size_t)j->h.dirty_n * SC_DIRTY_ENTRY_LEN;
	bool dirty = j->h.flags & JRNL_DIRTY;
	struct jdent *t;
	uint8_t mac[SC_INTEG_TAG_LEN];
	ssize_t n;
	int ret = 0;

	j->dt = calloc(j->h.dirty_n, sizeof(*j->dt));
	t = calloc(1, len);
	if (!j->dt || !t) {
		free(t);
		return -ENOMEM;
	}
	n = j->io.pread(j->io.ctx, t, len, j->h.dirty_off);
	if (n < 0)
		ret = (int)n;
	for (uint32_t i = 0; ret == 0 && i < (uint32_t)n / SC_DIRTY_ENTRY_LEN; i++) {
		const struct jdent *e = &t[i];
		unsigned k = e->kind & ~DIRTY_PINNED;

		if (memcmp(e->magic, DIRTY_MAGIC, 4) != 0 || k < DIRTY_FILE || k > DIRTY_RENAME ||
		    e->zero[0] || e->zero[1] || e->zero[2] ||
		    memcmp(e->run, j->h.run, RUN_ID_LEN) != 0 ||
		    (!dirty && !(e->kind & DIRTY_PINNED)))
			continue;
		ret = sc_dirty_mac(j->ik, (const uint8_t *)e, mac);
		if (ret < 0 || !sc_memeq_ct(mac, e->mac, sizeof(mac)))
			continue;
		j->dt[i].kind = (uint8_t)(k | DIRTY_PINNED);
		memcpy(j->dt[i].id, e->id, SC_GCM_FILE_ID_LEN);
		j->dt[i].gen = le64toh(e->gen);
		j->dt_pinned++;
	}
	free(t);
	return ret;
}

/*
 * A read-write open carries the pinned entries into this run before the
 * header names it: a MOUNT, under its new run id, into other entries
 * (where the table has room), so that until the header switch the old
 * ones still count, and after it the new ones; a REPAIR, whose run stays,
 * in place.  *old: the entries to zero once the header is written
 * (allocated, or NULL).  0 or -errno.
 */
static int dirty_carry(struct sc_jrnl *j, uint32_t **old, uint32_t *nold)
{
	uint32_t n = j->h.dirty_n, to = 0;
	int ret = 0;

	*old = NULL;
	*nold = 0;
	if (j->dt_pinned == 0)
		return 0;
	if (j->mode == SC_JRNL_MOUNT && j->dt_pinned <= n / 2) {
		*old = calloc(j->dt_pinned, sizeof(**old));
		if (!*old)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < n && ret == 0; i++) {
		struct jdmem m = j->dt[i];

		if (!(m.kind & DIRTY_PINNED) || (m.kind & DIRTY_CARRIED))
			continue;
		if (!*old) {
			ret = dent_write(j, i, m.kind, m.id, m.gen, j->h.run);
			continue;
		}
		/* a free entry: neither an old one nor one carried already */
		while (to < n && j->dt[to].kind)
			to++;
		if (to == n) {
			ret = -ENOSPC;	/* cannot be: half the table is free */
			break;
		}
		j->dt[to] = m;
		j->dt[to].kind |= DIRTY_CARRIED;
		(*old)[(*nold)++] = i;
		ret = dent_write(j, to, m.kind, m.id, m.gen, j->h.run);
	}
	for (uint32_t i = 0; i < n; i++)
		j->dt[i].kind &= (uint8_t)~DIRTY_CARRIED;
	for (uint32_t k = 0; k < *nold; k++)
		memset(&j->dt[(*old)[k]], 0, sizeof(j->dt[0]));
	if (ret == 0 && j->dt_pinned * 4 >= n)
		sc_log(SC_LOG_WARNING, "stackcrypt: gcm: %u entries of the dirty table are "
			 "pinned by files being written when earlier mounts stopped and not opened "
			 "since; run 'stackcrypt fsck --repair' to resolve them\n", j->dt_pinned);
	return ret;
}

/* ---- open and close -------------------------------------------------------- */

static void jrnl_free(struct sc_jrnl *j)
{
	pins_free(j);
	free(j->dt);
	pthread_cond_destroy(&j->freed);
	pthread_mutex_destroy(&j->resolve);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

/* A new journal's header (nothing written). */
static void hdr_fresh(struct sc_jrnl *j)
{
	uint64_t cap = j->bs >= SLOT_DATA / 4 ? 4 : SLOT_DATA / j->bs;

	memset(&j->h, 0, sizeof(j->h));
	j->h.version = j->ik ? JRNL_VERSION_DT : JRNL_VERSION;
	if (j->ik) {
		j->h.dirty_off = SC_JRNL_HDR_BLOCK;
		j->h.dirty_n = DIRTY_N;
	}
	j->h.bs = j->bs;
	j->h.nslots = SC_JRNL_SLOTS;
	j->h.slot_size = (uint32_t)((SC_JRNL_REC_SIZE + cap * sbs_of(j->bs) + 4095) & ~4095ull);
}

/* Reads the header and the records it keeps; 0, or -errno as sc_jrnl_open says. */
static int jrnl_read(struct sc_jrnl *j)
{
	struct jhdr le;
	uint64_t pinned;
	ssize_t n;
	int ret;

	memset(&le, 0, sizeof(le));
	n = j->io.pread(j->io.ctx, &le, sizeof(le), 0);
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ENOENT;
	if ((size_t)n < sizeof(struct jhdr1))
		return -EUCLEAN;
	ret = hdr_decode(&le, j->bs, j->ik != NULL, &j->h);
	if (ret < 0)
		return ret;
	if (j->h.version == 1) {
		/*
		 * An older build's journal: its header has no MAC and its runs
		 * are counted, so a copy put back later cannot be told from
		 * the real one.  With nothing pending it is replaced; with
		 * records pending only fsck uses them, saying so (the mount
		 * refuses it: -EPROTO).
		 */
		if (!(j->h.flags & JRNL_DIRTY) && j->h.pinned == 0)
			return j->mode == SC_JRNL_INSPECT ? 0 : -ENOENT;
		if (j->mode == SC_JRNL_MOUNT)
			return -EPROTO;
		return load_records(j);
	}
	if ((size_t)n < sizeof(le))
		return -EUCLEAN;
	pinned = j->h.pinned;
	ret = load_records(j);
	if (ret == 0)
		ret = check_hdr_mac(j, &le, pinned);
	/*
	 * An integrity volume's version 2 journal (made before the table):
	 * with nothing pending it becomes a version 3 one; holding records it
	 * is kept until they are resolved, without a table meanwhile.
	 */
	if (ret == 0 && j->ik && j->h.version == JRNL_VERSION && j->mode != SC_JRNL_INSPECT &&
	    !(j->h.flags & JRNL_DIRTY) && j->npins == 0)
		return -ENOENT;
	if (ret == 0 && j->h.version == JRNL_VERSION_DT)
		ret = dirty_load(j);
	return ret;
}

int sc_jrnl_open(const struct sc_mkey *mk, const struct sc_ikey *ik, uint32_t bs,
		 const struct sc_jio *io, enum sc_jrnl_mode mode, struct sc_jrnl **out)
{
	return sc_jrnl_open_gated(mk, ik, bs, io, mode, NULL, NULL, out);
}

void sc_jrnl_run(const struct sc_jrnl *j, uint8_t run[16])
{
	memcpy(run, j->h.run, RUN_ID_LEN);
}

int sc_jrnl_open_gated(const struct sc_mkey *mk, const struct sc_ikey *ik, uint32_t bs,
		       const struct sc_jio *io, enum sc_jrnl_mode mode,
		       int (*gate)(void *ctx, const uint8_t run[16]), void *ctx,
		       struct sc_jrnl **out)
{
	uint32_t *old = NULL, nold = 0;
	struct sc_jrnl *j;
	int ret;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->mk = mk;
	j->io = *io;
	j->mode = mode;
	j->bs = bs;
	j->ik = ik;
	j->hlen = ik ? SC_IHDR_SIZE : SC_GHDR_SIZE;
	pthread_mutex_init(&j->lock, NULL);
	pthread_mutex_init(&j->resolve, NULL);
	pthread_cond_init(&j->freed, NULL);
	/*
	 * Only an empty file (or an older build's journal with nothing
	 * pending) becomes a journal: anything else that is not one (a file
	 * of that name made before journals existed, a damaged journal) is
	 * left as it is, never truncated.
	 */
	ret = jrnl_read(j);
	j->unclean = ret == 0 && (j->h.flags & JRNL_DIRTY);
	if (ret == 0 && gate && mode == SC_JRNL_MOUNT && j->h.version >= JRNL_VERSION)
		ret = gate(ctx, j->h.run);
	if (ret == -ENOENT && mode != SC_JRNL_INSPECT) {
		pins_free(j);
		hdr_fresh(j);
		ret = 0;
		if (j->h.version == JRNL_VERSION_DT) {
			j->dt = calloc(j->h.dirty_n, sizeof(*j->dt));
			ret = j->dt ? 0 : -ENOMEM;
		}
	}
	if (ret < 0)
		goto err_free;
	if (mode == SC_JRNL_INSPECT) {
		*out = j;
		return 0;
	}
	/* Room for this run's writes beside the pinned records. */
	if ((unsigned)__builtin_popcountll(j->h.pinned) + 8 > j->h.nslots)
		j->h.nslots = (uint32_t)__builtin_popcountll(j->h.pinned) + SC_JRNL_SLOTS <
			      SC_JRNL_SLOTS_MAX ? (uint32_t)__builtin_popcountll(j->h.pinned) +
			      SC_JRNL_SLOTS : SC_JRNL_SLOTS_MAX;
	if (mode == SC_JRNL_MOUNT) {
		/* a new run: only its own records count after it stops uncleanly */
		ret = sc_random(j->h.run, RUN_ID_LEN);
		if (ret < 0)
			goto err_free;
		j->h.flags |= JRNL_DIRTY;
	}
	/*
	 * A REPAIR keeps DIRTY until its close says nothing the unclean stop
	 * left is waiting for a decision (sc_jrnl_close): a --repair that
	 * accepted no file of a power loss must not make the next fsck take it
	 * for tampering.
	 */
	if (j->dt)
		ret = dirty_carry(j, &old, &nold);
	/* The pins must be on disk before anything can reuse those slots. */
	if (ret == 0)
		ret = hdr_write(j);
	if (ret == 0)
		ret = io->sync(io->ctx);
	/* the header names this run: the entries carried from are stale, zeroed */
	for (uint32_t k = 0; ret == 0 && k < nold; k++)
		ret = dent_write(j, old[k], 0, NULL, 0, NULL);
	free(old);
	if (ret < 0)
		goto err_free;
	*out = j;
	return 0;

err_free:
	jrnl_free(j);
	return ret;
}

/*
 * Clears the record headers of the slots this run wrote and no pin keeps
 * (unmount: every write completed, so they can repair nothing).  A failure
 * is harmless once DIRTY is cleared: records of a clean run never count.
 */
static void clear_used(struct sc_jrnl *j)
{
	static const uint8_t zero[SC_JRNL_REC_SIZE];
	uint64_t used = j->used & ~j->h.pinned;

	for (int s = 0; used; s++, used >>= 1)
		if ((used & 1) && j->io.pwrite(j->io.ctx, zero, sizeof(zero), slot_off(j, s)) < 0)
			return;
}

void sc_jrnl_close(struct sc_jrnl *j, bool clean)
{
	if (!j)
		return;
	if (clean && j->mode == SC_JRNL_MOUNT) {
		clear_used(j);
		/* a session whose commit failed (logged then): its entry counts on, pinned */
		for (uint32_t i = 0; j->dt && i < j->h.dirty_n; i++)
			if (j->dt[i].kind && !(j->dt[i].kind & DIRTY_PINNED))
				dent_write(j, i, j->dt[i].kind | DIRTY_PINNED, j->dt[i].id,
					   j->dt[i].gen, j->h.run);
		if (!j->keep_unclean)
			j->h.flags &= ~JRNL_DIRTY;
		if (hdr_write(j) < 0)
			sc_log(SC_LOG_WARNING, "stackcrypt: gcm: cannot mark %s clean; the next "
				 "mount rechecks this run's records\n", SC_JRNL_NAME);
	}
	if (clean && j->mode == SC_JRNL_REPAIR && (j->h.flags & JRNL_DIRTY)) {
		j->h.flags &= ~JRNL_DIRTY;
		if (hdr_write(j) < 0 || j->io.sync(j->io.ctx) < 0)
			sc_log(SC_LOG_WARNING, "stackcrypt: gcm: cannot mark %s clean; the next "
				 "mount rechecks the last run's records\n", SC_JRNL_NAME);
	}
	if (j->mode == SC_JRNL_REPAIR && j->h.version == 1 && j->npins == 0) {
		/* an older build's journal, every record resolved: from now on version 2 */
		hdr_fresh(j);
		if (hdr_write(j) < 0)
			sc_log(SC_LOG_WARNING, "stackcrypt: gcm: cannot rewrite %s\n",
				 SC_JRNL_NAME);
	}
	jrnl_free(j);
}

bool sc_jrnl_unclean(const struct sc_jrnl *j)
{
	return j && j->unclean;
}

void sc_jrnl_keep_unclean(struct sc_jrnl *j)
{
	if (j && j->unclean)
		__atomic_store_n(&j->keep_unclean, true, __ATOMIC_RELAXED);
}

uint64_t sc_jrnl_size(const struct sc_jrnl *j)
{
	return slot_off(j, (int)j->h.nslots);
}

uint32_t sc_jrnl_cap_units(const struct sc_jrnl *j)
{
	return (uint32_t)((j->h.slot_size - SC_JRNL_REC_SIZE) / sbs_of(j->bs));
}

/* ---- the write path -------------------------------------------------------- */

int sc_jrnl_begin(struct sc_jrnl *j, const uint8_t fid[SC_GCM_FILE_ID_LEN], uint64_t first,
		  uint64_t nunits, uint32_t ndata, uint64_t old_stored, uint8_t *rec,
		  size_t data_len, int *slot)
{
	struct jrec *r = (struct jrec *)rec;
	uint64_t mask, avail;
	int s, ret;

	*slot = -1;
	if (data_len > j->h.slot_size - SC_JRNL_REC_SIZE)
		return -EINVAL;
	pthread_mutex_lock(&j->lock);
	mask = slots_mask(j->h.nslots);
	for (;;) {
		avail = ~(j->busy | j->h.pinned) & mask;
		if (avail)
			break;
		if ((j->h.pinned & mask) == mask) {	/* never a slot: unjournaled */
			if (!j->full_logged)
				sc_log(SC_LOG_WARNING, "stackcrypt: gcm: every journal slot is "
					 "pinned by an unresolved crash record; writes go "
					 "unjournaled (run fsck --repair)\n");
			j->full_logged = true;
			pthread_mutex_unlock(&j->lock);
			return 0;
		}
		pthread_cond_wait(&j->freed, &j->lock);
	}
	s = __builtin_ctzll(avail);
	j->busy |= UINT64_C(1) << s;
	j->used |= UINT64_C(1) << s;
	memset(r, 0, sizeof(*r));
	r->seq = htole64(++j->count);
	memcpy(r->run, j->h.run, RUN_ID_LEN);
	pthread_mutex_unlock(&j->lock);

	memcpy(r->magic, REC_MAGIC, 4);
	r->version = JRNL_VERSION;
	r->ndata = htole32(ndata);
	r->data_len = htole32((uint32_t)data_len);
	memcpy(r->file_id, fid, SC_GCM_FILE_ID_LEN);
	r->first = htole64(first);
	r->nunits = htole64(nunits);
	r->old_stored = htole64(old_stored);
	ret = rec_mac(j, r, offsetof(struct jrec, mac), r->mac);
	if (ret == 0)
		ret = j->io.pwrite(j->io.ctx, rec, SC_JRNL_REC_SIZE + data_len, slot_off(j, s));
	if (ret < 0) {
		sc_jrnl_end(j, s);
		return ret;
	}
	*slot = s;
	return 0;
}

void sc_jrnl_end(struct sc_jrnl *j, int slot)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&j->lock);
	j->busy &= ~(UINT64_C(1) << slot);
	pthread_cond_signal(&j->freed);
	pthread_mutex_unlock(&j->lock);
}

/* ---- resolution -------------------------------------------------------------- */

bool sc_jrnl_has(struct sc_jrnl *j, const uint8_t fid[SC_GCM_FILE_ID_LEN])
{
	bool found = false;

	if (__atomic_load_n(&j->npins, __ATOMIC_ACQUIRE) == 0)
		return false;
	pthread_mutex_lock(&j->lock);
	for (unsigned i = 0; i < j->npins && !found; i++)
		found = memcmp(j->pins[i].fid, fid, SC_GCM_FILE_ID_LEN) == 0;
	pthread_mutex_unlock(&j->lock);
	return found;
}

unsigned sc_jrnl_pinned(struct sc_jrnl *j)
{
	return __atomic_load_n(&j->npins, __ATOMIC_ACQUIRE);
}

unsigned sc_jrnl_version(const struct sc_jrnl *j)
{
	return j->h.version;
}

/* Removes the pins of slots in drop (their records resolved) and saves the bitmap. */
static int pins_drop(struct sc_jrnl *j, uint64_t drop)
{
	unsigned k = 0;
	int ret = 0;

	pthread_mutex_lock(&j->lock);
	for (unsigned i = 0; i < j->npins; i++) {
		if (drop & (UINT64_C(1) << j->pins[i].slot))
			free(j->pins[i].data);
		else
			j->pins[k++] = j->pins[i];
	}
	__atomic_store_n(&j->npins, k, __ATOMIC_RELEASE);
	j->h.pinned &= ~drop;
	if (j->mode != SC_JRNL_INSPECT)
		ret = hdr_write(j);
	pthread_cond_broadcast(&j->freed);
	pthread_mutex_unlock(&j->lock);
	return ret;
}

static int by_seq_desc(const void *a, const void *b)
{
	const struct jpin *x = a, *y = b;

	return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

/* Whether the len stored bytes at buf are unit u of gk and open. */
static bool unit_opens(struct sc_gkey *gk, uint64_t u, const uint8_t *buf, size_t len,
		       uint8_t *scratch)
{
	return len > SC_GCM_OVERHEAD && sc_gcm_open(gk, u, buf, len, scratch, NULL) >= 0;
}

/* The resolution state of one file: its stored size as repaired so far. */
struct rstate {
	struct sc_gkey		*gk;
	const struct sc_jio	*file;
	bool			apply;
	uint64_t		size;
	uint64_t		*done;	/* units repaired in this pass (report mode) */
	size_t			ndone;
	uint8_t			*buf, *scr;
};

static bool done_has(const struct rstate *s, uint64_t u)
{
	for (size_t i = 0; i < s->ndone; i++)
		if (s->done[i] == u)
			return true;
	return false;
}

/* Resolves unit u of record p: 1 repaired, 0 nothing to do, -errno. */
static int resolve_unit(struct sc_jrnl *j, struct rstate *s, const struct jpin *p, uint64_t u,
			struct sc_jfix *fix)
{
	uint64_t sbs = sbs_of(j->bs), uoff = sc_gcm_unit_off_h(j->hlen, j->bs, u), k = u - p->first;
	size_t len;
	ssize_t n;
	uint64_t *nd;

	if (uoff >= s->size || done_has(s, u))
		return 0;	/* gone since (a later cut), or repaired by a newer record */
	len = (size_t)(s->size - uoff < sbs ? s->size - uoff : sbs);
	n = s->file->pread(s->file->ctx, s->buf, len, uoff);
	if (n < 0)
		return (int)n;
	if ((size_t)n == len && unit_opens(s->gk, u, s->buf, len, s->scr))
		return 0;	/* old or new already: the write completed, or never began */
	fix->unit = u;
	if (k < p->ndata) {
		const uint8_t *rd = p->data + k * sbs;
		size_t rl = (size_t)(p->data_len - k * sbs < sbs ? p->data_len - k * sbs : sbs);

		/* the record's own unit must open: a record torn while written is useless */
		if (!unit_opens(s->gk, u, rd, rl, s->scr))
			return 0;
		fix->cut = false;
		if (s->apply) {
			int ret = s->file->pwrite(s->file->ctx, rd, rl, uoff);

			/* a shrink's new last unit: the cut that was to follow it */
			if (ret == 0 && rl < sbs && s->size > uoff + rl)
				ret = s->file->truncate(s->file->ctx, uoff + rl);
			if (ret < 0)
				return ret;
		}
		s->size = rl < sbs ? uoff + rl : (s->size > uoff + rl ? s->size : uoff + rl);
	} else {
		/* an appended unit: only the one the file ends inside, never an older unit */
		if (len == sbs || uoff < p->old_stored)
			return 0;
		fix->cut = true;
		if (s->apply) {
			int ret = s->file->truncate(s->file->ctx, uoff);

			if (ret < 0)
				return ret;
		}
		s->size = uoff;
	}
	nd = realloc(s->done, (s->ndone + 1) * sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	s->done = nd;
	s->done[s->ndone++] = u;
	return 1;
}

int sc_jrnl_resolve(struct sc_jrnl *j, struct sc_gkey *gk, const struct sc_jio *file,
		    bool apply, void (*fix)(void *ctx, const struct sc_jfix *f), void *ctx)
{
	const uint8_t *fid = sc_gkey_file_id(gk);
	struct rstate s = { .gk = gk, .file = file, .apply = apply };
	struct jpin *mine = NULL;
	unsigned nmine = 0;
	uint64_t drop = 0;
	int ret, fixes = 0;

	pthread_mutex_lock(&j->resolve);
	/* Copies: the table may change under j->lock while we do I/O. */
	pthread_mutex_lock(&j->lock);
	for (unsigned i = 0; i < j->npins; i++) {
		struct jpin *m;

		if (memcmp(j->pins[i].fid, fid, SC_GCM_FILE_ID_LEN) != 0)
			continue;
		m = realloc(mine, (nmine + 1) * sizeof(*m));
		if (!m) {
			pthread_mutex_unlock(&j->lock);
			ret = -ENOMEM;
			goto out;
		}
		mine = m;
		mine[nmine++] = j->pins[i];	/* data stays owned by the table */
		drop |= UINT64_C(1) << j->pins[i].slot;
	}
	pthread_mutex_unlock(&j->lock);
	ret = 0;
	if (nmine == 0)
		goto out;
	qsort(mine, nmine, sizeof(*mine), by_seq_desc);
	ret = file->size(file->ctx, &s.size);
	s.buf = malloc(sbs_of(j->bs));
	s.scr = malloc(sbs_of(j->bs));
	if (ret == 0 && (!s.buf || !s.scr))
		ret = -ENOMEM;
	for (unsigned i = 0; i < nmine && ret == 0; i++)
		for (uint64_t u = mine[i].first; u < mine[i].first + mine[i].nunits; u++) {
			struct sc_jfix f;
			int r = resolve_unit(j, &s, &mine[i], u, &f);

			if (r < 0) {
				ret = r;
				break;
			}
			if (r > 0) {
				fixes++;
				if (fix)
					fix(ctx, &f);
			}
		}
	/* The repairs are on disk before the records that could redo them go. */
	if (ret == 0 && apply && fixes > 0)
		ret = file->sync(file->ctx);
	if (ret == 0 && apply)
		ret = pins_drop(j, drop);
out:
	free(s.done);
	free(s.buf);
	if (s.scr)
		sc_wipe(s.scr, sbs_of(j->bs));	/* plaintext */
	free(s.scr);
	free(mine);
	pthread_mutex_unlock(&j->resolve);
	return ret < 0 ? ret : fixes;
}

int sc_jrnl_drop_unknown(struct sc_jrnl *j, bool (*keep)(void *ctx, const uint8_t *fid),
			 void *ctx)
{
	uint64_t drop = 0;
	int n = 0, ret;

	pthread_mutex_lock(&j->resolve);
	pthread_mutex_lock(&j->lock);
	for (unsigned i = 0; i < j->npins; i++)
		if (!keep(ctx, j->pins[i].fid)) {
			drop |= UINT64_C(1) << j->pins[i].slot;
			n++;
		}
	pthread_mutex_unlock(&j->lock);
	ret = drop ? pins_drop(j, drop) : 0;
	pthread_mutex_unlock(&j->resolve);
	return ret < 0 ? ret : n;
}

/* ---- the dirty table's calls ------------------------------------------------ */

/* An entry of kind for (id, gen) in a free index: *idx, 0, -EOPNOTSUPP, -ENOSPC, -errno. */
static int dirty_begin(struct sc_jrnl *j, uint8_t kind, const uint8_t id[SC_GCM_FILE_ID_LEN],
		       uint64_t gen, int *idx)
{
	uint32_t n, i;
	int ret;

	*idx = -1;
	if (!j || !j->dt)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&j->lock);
	n = j->h.dirty_n;
	for (i = 0; i < n && j->dt[(j->dt_next + i) % n].kind; i++)
		;
	if (i == n) {
		pthread_mutex_unlock(&j->lock);
		return -ENOSPC;
	}
	i = (j->dt_next + i) % n;
	j->dt_next = (i + 1) % n;
	j->dt[i].kind = kind;
	memcpy(j->dt[i].id, id, SC_GCM_FILE_ID_LEN);
	j->dt[i].gen = gen;
	pthread_mutex_unlock(&j->lock);
	/* the entry is this session's alone until it ends: written unlocked */
	ret = dent_write(j, i, kind, id, gen, j->h.run);
	if (ret < 0) {
		pthread_mutex_lock(&j->lock);
		j->dt[i].kind = 0;
		pthread_mutex_unlock(&j->lock);
		return ret;
	}
	*idx = (int)i;
	return 0;
}

int sc_jrnl_dirty_begin(struct sc_jrnl *j, const uint8_t id[SC_GCM_FILE_ID_LEN], uint64_t gen,
			int *idx)
{
	return dirty_begin(j, DIRTY_FILE, id, gen, idx);
}

int sc_jrnl_place_begin(struct sc_jrnl *j, enum sc_jrnl_place kind,
			const uint8_t tag[SC_INTEG_TAG_LEN], uint64_t gen, int *idx)
{
	_Static_assert(SC_INTEG_TAG_LEN == SC_GCM_FILE_ID_LEN, "a place tag fills an entry's id");
	return dirty_begin(j, (uint8_t)kind, tag, gen, idx);
}

int sc_jrnl_dirty_end(struct sc_jrnl *j, int idx)
{
	bool pinned;
	int ret;

	if (!j || !j->dt || idx < 0 || (uint32_t)idx >= j->h.dirty_n)
		return 0;
	/* zeroed first: an entry freed before would be another session's to write */
	ret = j->mode == SC_JRNL_INSPECT ? 0 : dent_write(j, (uint32_t)idx, 0, NULL, 0, NULL);
	pthread_mutex_lock(&j->lock);
	pinned = j->dt[idx].kind & DIRTY_PINNED;
	memset(&j->dt[idx], 0, sizeof(j->dt[idx]));
	if (pinned)
		__atomic_store_n(&j->dt_pinned, j->dt_pinned - 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&j->lock);
	return ret;
}

/* The pinned entry of kind for id whose gen is at most gen, or -1. */
static int dirty_find(struct sc_jrnl *j, uint8_t kind, const uint8_t id[SC_GCM_FILE_ID_LEN],
		      uint64_t gen)
{
	int found = -1;

	if (!j || !j->dt || __atomic_load_n(&j->dt_pinned, __ATOMIC_ACQUIRE) == 0)
		return -1;
	pthread_mutex_lock(&j->lock);
	for (uint32_t i = 0; i < j->h.dirty_n && found < 0; i++)
		if ((j->dt[i].kind & DIRTY_PINNED) &&
		    (j->dt[i].kind & ~DIRTY_PINNED) == kind &&
		    !memcmp(j->dt[i].id, id, SC_GCM_FILE_ID_LEN) && gen >= j->dt[i].gen)
			found = (int)i;
	pthread_mutex_unlock(&j->lock);
	return found;
}

int sc_jrnl_dirty_find(struct sc_jrnl *j, const uint8_t id[SC_GCM_FILE_ID_LEN], uint64_t gen)
{
	return dirty_find(j, DIRTY_FILE, id, gen);
}

int sc_jrnl_place_find(struct sc_jrnl *j, enum sc_jrnl_place kind,
		       const uint8_t tag[SC_INTEG_TAG_LEN], uint64_t gen)
{
	return dirty_find(j, (uint8_t)kind, tag, gen);
}

unsigned sc_jrnl_dirty_pinned(struct sc_jrnl *j)
{
	return j && j->dt ? __atomic_load_n(&j->dt_pinned, __ATOMIC_ACQUIRE) : 0;
}

bool sc_jrnl_has_table(const struct sc_jrnl *j)
{
	return j && j->dt;
}

int sc_jrnl_dirty_drop_unknown(struct sc_jrnl *j, bool (*keep)(void *ctx, const uint8_t *fid),
			       void *ctx)
{
	int n = 0, ret = 0;

	for (uint32_t i = 0; j->dt && i < j->h.dirty_n && ret == 0; i++) {
		bool drop;

		pthread_mutex_lock(&j->lock);
		drop = (j->dt[i].kind & DIRTY_PINNED) && !keep(ctx, j->dt[i].id);
		pthread_mutex_unlock(&j->lock);
		if (drop) {
			ret = sc_jrnl_dirty_end(j, (int)i);
			n++;
		}
	}
	return ret < 0 ? ret : n;
}
