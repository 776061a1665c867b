/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dirlist.c - directories' listing records (docs/format.md 11.7).
 *
 * Each directory of a volume with SC_FEAT_DIR_LISTS has a file of the
 * layers, SC_DIRLIST_FILE, holding the count and the digest (an XOR of
 * keyed PRFs, sc_dir_elem) of its entries' backing names, and its gen.
 * The data layer below encrypts and authenticates it like any file; the
 * gen, checked against the client's freshness record (kind 2), catches an
 * older record put back; a full listing whose names do not add up to the
 * record catches an entry added or removed behind the mount.
 *
 * Written through: every call that adds or removes an entry rewrites the
 * record first (one unit, in place, through a handle kept open), with the
 * state after the call and the change pending, so a kill at any point
 * leaves a record one of whose two states is the directory's; the next
 * load tells which by whether the pending name exists.  The change stays
 * pending until the next change, the directory's fsyncdir, or the record
 * being let go settles it (format.md 11.7 says what that window leaves).
 * The kernel already serializes the calls that change one directory; the
 * entry's lock makes that a rule here too.
 *
 * The records in use live in a table by directory nonce (not with the
 * inode: the kernel may forget a directory while this layer still has its
 * file open), at most DL_MAX of them, the least recently used let go
 * (settled, closed) first.  Its file is named (looked up, made, opened)
 * with the daemon's credentials (a create runs as its caller), so whoever
 * changes a directory later can write it too.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>

#include "sc_crypto.h"
#include "sc_fresh.h"
#include "sc_journal.h"
#include "sc_xlator.h"
#include "xlator_i.h"	/* adopt/forget of the record file's obj */
#include "dirlist.h"

#define DL_MAX		256u	/* records kept; each holds one open file below, outside posix.c's budget */
#define DL_BUCKETS	2048u	/* a power of two */
#define LIST_MODE	0600

struct dl_ent {
	struct dl_ent	*hnext;			/* bucket chain (table lock) */
	struct dl_ent	*prev, *next;		/* LRU, most recent first (table lock) */
	unsigned int	refs;			/* table lock */
	pthread_mutex_t	lock;			/* everything below */
	uint8_t		nonce[SC_DIRNONCE_LEN];
	bool		loaded;
	int		err;			/* -EIO: refused, logged */
	bool		mismatch_logged;
	uint64_t	epoch;			/* changes mark: new at load and at every change */
	struct sc_dlist	rec;			/* as on disk, the pending change resolved */
	/*
	 * Its file below, open (read-write) when open is set.  Not told by
	 * f.fd: the posix layer may keep a file handle in place of an O_PATH
	 * fd for an obj adopted past its descriptor budget (posix.c), and
	 * sets f.fd to -1 then.
	 */
	struct sc_obj	f;
	struct sc_fh	fh;
	bool		open;
	bool		flush;			/* the next write moves its size: flushed after */
	bool		pending;		/* on disk with a change pending: settle before closing */
	bool		written;		/* written by this run: its gen recorded once durable */
};

struct sc_dlists {
	struct sc_xl		*xl;		/* the names layer */
	const struct sc_ikey	*ik;
	struct sc_fresh		*fresh;
	pthread_mutex_t		lock;
	struct dl_ent		*buckets[DL_BUCKETS];
	struct dl_ent		*head, *tail;
	unsigned int		n;
	uint64_t		epoch;		/* atomic: marks handed out */
	bool			take;		/* a listing that differs is taken as found */
};

static int settle(struct sc_dlists *t, struct dl_ent *e, struct sc_obj *dir);

static struct sc_xl *below(const struct sc_dlists *t)
{
	return t->xl->below;
}

static uint64_t new_epoch(struct sc_dlists *t)
{
	return __atomic_add_fetch(&t->epoch, 1, __ATOMIC_RELAXED);
}

/* ---- the daemon's credentials and no place, around the record's I/O ---- */

struct io_ctx {
	const struct sc_xl_place	*at, *to;
	bool				creds;
	uid_t				uid;
	gid_t				gid;
};

/*
 * The record is a file of the layers: no entry's place may reach the data
 * layer with it (a create would bind it there), and it belongs to the
 * daemon, not to the caller of the call that first wrote it (creds: the
 * calls that name it, lookup, create, open, unlink; a write or fsync
 * through its open handle needs none).
 */
static void io_enter(struct io_ctx *c, bool creds)
{
	c->at = sc_xl_place_at();
	c->to = sc_xl_place_to();
	sc_xl_place_set(NULL, NULL);
	c->creds = creds;
	if (creds) {
		c->uid = (uid_t)setfsuid(0);
		c->gid = (gid_t)setfsgid(0);
	}
}

static void io_leave(const struct io_ctx *c)
{
	if (c->creds) {
		setfsgid(c->gid);
		setfsuid(c->uid);
	}
	sc_xl_place_set(c->at, c->to);
}

/* ---- the table ------------------------------------------------------------ */

static struct dl_ent **bucket(struct sc_dlists *t, const uint8_t *nonce)
{
	uint32_t h;

	memcpy(&h, nonce, sizeof(h));	/* random: its bytes are the hash */
	return &t->buckets[h & (DL_BUCKETS - 1)];
}

static void lru_unlink(struct sc_dlists *t, struct dl_ent *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		t->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		t->tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_front(struct sc_dlists *t, struct dl_ent *e)
{
	e->next = t->head;
	e->prev = NULL;
	if (t->head)
		t->head->prev = e;
	t->head = e;
	if (!t->tail)
		t->tail = e;
}

static void unhash(struct sc_dlists *t, struct dl_ent *e)
{
	struct dl_ent **p = bucket(t, e->nonce);

	while (*p && *p != e)
		p = &(*p)->hnext;
	if (*p)
		*p = e->hnext;
	lru_unlink(t, e);
	t->n--;
}

/* Closes e's record file, if open (its commit below). */
static void file_close(struct sc_dlists *t, struct dl_ent *e)
{
	struct io_ctx io;

	if (!e->open)
		return;
	io_enter(&io, false);
	if (e->fh.fd >= 0)
		sc_xl_release(below(t), &e->f, &e->fh);
	sc_xl_stack_forget(below(t), &e->f);
	if (e->f.fd >= 0)
		sc_xl_drop_fd(below(t), e->f.fd);
	io_leave(&io);
	e->f.fd = e->fh.fd = -1;
	e->open = false;
}

/* Closes e's file (settled first) and frees e, which no one can reach. */
static void ent_free(struct sc_dlists *t, struct dl_ent *e)
{
	if (e->pending && e->open && !t->take)
		settle(t, e, NULL);
	file_close(t, e);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* The entry of nonce, referenced (made, not loaded, if new); NULL: no memory. */
static struct dl_ent *ent_get(struct sc_dlists *t, const uint8_t *nonce)
{
	struct dl_ent *e, *evict = NULL;

	pthread_mutex_lock(&t->lock);
	for (e = *bucket(t, nonce); e; e = e->hnext)
		if (!memcmp(e->nonce, nonce, SC_DIRNONCE_LEN))
			break;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			goto out_unlock;
		pthread_mutex_init(&e->lock, NULL);
		memcpy(e->nonce, nonce, SC_DIRNONCE_LEN);
		e->f.fd = e->fh.fd = -1;
		e->hnext = *bucket(t, nonce);
		*bucket(t, nonce) = e;
		t->n++;
	} else {
		lru_unlink(t, e);
	}
	lru_front(t, e);
	e->refs++;
	/* one let go per entry made keeps the table at DL_MAX */
	if (t->n > DL_MAX) {
		for (evict = t->tail; evict && evict->refs; evict = evict->prev)
			;
		if (evict)
			unhash(t, evict);
	}
out_unlock:
	pthread_mutex_unlock(&t->lock);
	if (evict)
		ent_free(t, evict);
	return e;
}

static void ent_put(struct sc_dlists *t, struct dl_ent *e)
{
	pthread_mutex_lock(&t->lock);
	e->refs--;
	pthread_mutex_unlock(&t->lock);
}

/* ---- the record's file ----------------------------------------------------- */

/* e's obj on the record file's O_PATH fd (st), adopted by the layers below. */
static void obj_take(struct sc_dlists *t, struct dl_ent *e, int fd, const struct stat *st)
{
	memset(&e->f, 0, sizeof(e->f));
	e->f.fd = fd;
	e->f.type = st->st_mode & S_IFMT;
	sc_xl_stack_adopt(below(t), &e->f, st);
}

/* Opens the record file found as fd (st) read-write into e.  0 or -errno. */
static int file_take(struct sc_dlists *t, struct dl_ent *e, int fd, const struct stat *st)
{
	int ret;

	obj_take(t, e, fd, st);
	e->fh = (struct sc_fh){ .fd = -1, .flags = O_RDWR };
	ret = S_ISREG(st->st_mode) ? sc_xl_open(below(t), &e->f, &e->fh) : -EUCLEAN;
	if (ret < 0) {
		e->fh.fd = -1;
		sc_xl_stack_forget(below(t), &e->f);
		if (e->f.fd >= 0)
			sc_xl_drop_fd(below(t), e->f.fd);
		e->f.fd = -1;
		return ret;
	}
	e->open = true;
	return 0;
}

/*
 * Writes r as e's record, into its file, which is made if missing; commit:
 * its header stored after (a settle on a unit tree volume).  0 or -errno.
 */
static int rec_write(struct sc_dlists *t, struct dl_ent *e, struct sc_obj *dir,
		     const struct sc_dlist *r, bool commit)
{
	uint8_t buf[SC_DLIST_LEN];
	struct io_ctx io;
	struct stat st;
	bool made = false;
	ssize_t n;
	int fd, ret;

	ret = sc_dlist_pack(r, buf);
	if (ret < 0)
		return ret;
	io_enter(&io, !e->open);
	if (!e->open) {
		e->fh = (struct sc_fh){ .fd = -1, .flags = O_RDWR | O_CREAT | O_EXCL };
		ret = sc_xl_create(below(t), dir, SC_DIRLIST_FILE, S_IFREG | LIST_MODE, &e->fh,
				   &fd, &st);
		made = ret == 0;
		if (made) {
			obj_take(t, e, fd, &st);
			e->open = true;
		}
		else if (ret == -EEXIST &&
			 (ret = sc_xl_lookup(below(t), dir, SC_DIRLIST_FILE, &fd, &st)) == 0)
			ret = file_take(t, e, fd, &st);
		if (ret < 0)
			e->fh.fd = -1;
	}
	if (ret == 0) {
		n = sc_xl_write(below(t), &e->f, &e->fh, buf, sizeof(buf), 0);
		ret = n < 0 ? (int)n : n != (ssize_t)sizeof(buf) ? -EIO : 0;
	}
	/*
	 * Its size into its header now: every later write keeps it, and on a
	 * volume without the unit tree holds no dirty entry.  With it, every
	 * write moves the root, and the file is open for change (a dirty
	 * entry, reconciled at its next open after a kill) until a commit:
	 * the settle's, so that a settled record holds no entry and its
	 * header vouches for its unit (format.md 11.7, "With the unit tree").
	 */
	if (ret == 0 && (made || e->flush || commit))
		ret = sc_xl_flush(below(t), &e->f, &e->fh);
	if (ret == 0)
		e->flush = false;
	if (ret == 0)
		e->written = true;
	io_leave(&io);
	return ret;
}

/*
 * e's gen, on disk and durable now (its file fsynced, or the backing
 * synced), into the client's record (format.md 11.9).  Only then: a gen
 * recorded before a power cut took its write would make the record that
 * is there look rolled back.
 */
static void gen_durable(struct sc_dlists *t, struct dl_ent *e)
{
	if (!t->fresh || !e->loaded || e->err || !e->rec.gen)
		return;
	sc_fresh_wrote(t->fresh, SC_FRESH_DIR, e->nonce, e->rec.gen);
	sc_fresh_synced(t->fresh, SC_FRESH_DIR, e->nonce);
}

/* ---- loading ---------------------------------------------------------------- */

static int refuse(struct sc_dlists *t, struct dl_ent *e, struct sc_obj *dir, const char *why)
{
	sc_log(SC_LOG_ERR, "stackcrypt: names: directory %s %s; its listing and changes return "
	       "EIO (stackcrypt fsck)\n", sc_obj_name(below(t), dir), why);
	e->err = -EIO;
	e->loaded = true;
	return -EIO;
}

/* Whether the backing name exists in dir: 1, 0, or -errno. */
static int name_exists(struct sc_dlists *t, struct sc_obj *dir, const char *name)
{
	struct stat st;
	int fd, ret = sc_xl_lookup(below(t), dir, name, &fd, &st);

	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	sc_xl_drop_fd(below(t), fd);
	return 1;
}

/*
 * The record as read (n bytes of buf): parsed, checked against the
 * client's record, its pending change resolved.  0, -EIO (refused,
 * logged), -errno.
 */
static int rec_judge(struct sc_dlists *t, struct dl_ent *e, struct sc_obj *dir,
		     const uint8_t *buf, ssize_t n)
{
	char why[160];
	uint64_t seen = 0;
	int ret, present;

	ret = sc_dlist_parse(buf, (size_t)n, e->nonce, &e->rec);
	if (ret == -EBADMSG)
		return refuse(t, e, dir, "has the listing record of another directory (copied "
			      "over its own behind the mount)");
	if (ret == -EPROTONOSUPPORT)
		return refuse(t, e, dir, "has a listing record of a version this build cannot read");
	if (ret < 0)
		return refuse(t, e, dir, "has a damaged listing record");
	ret = t->fresh ? sc_fresh_check(t->fresh, SC_FRESH_DIR, e->nonce, e->rec.gen, &seen) : 0;
	if (ret == 1)
		sc_log(SC_LOG_WARNING, "stackcrypt: names: warning: directory %s: was rolled "
		       "back (gen %llu < %llu, seen on this machine); accepted (--allow-rollback)\n",
		       sc_obj_name(below(t), dir), (unsigned long long)e->rec.gen,
		       (unsigned long long)seen);
	if (ret == -ESTALE || ret == -ENOENT) {
		snprintf(why, sizeof(why), "was rolled back: its listing record has gen %llu < "
			 "%llu, seen on this machine (put back from an older copy behind the "
			 "mount; mount --allow-rollback accepts it)",
			 (unsigned long long)e->rec.gen, (unsigned long long)seen);
		return refuse(t, e, dir, why);
	}
	if (e->rec.pend != SC_DLIST_NONE) {
		present = name_exists(t, dir, e->rec.pend_name);
		if (present < 0)
			return present;
		/* the state before the change, if the change did not happen */
		if (present != (e->rec.pend == SC_DLIST_ADDED)) {
			e->rec.count = e->rec.count_before;
			memcpy(e->rec.digest, e->rec.digest_before, sizeof(e->rec.digest));
		}
		e->rec.pend = SC_DLIST_NONE;
		e->rec.pend_len = 0;
		memset(e->rec.pend_name, 0, sizeof(e->rec.pend_name));
	}
	return 0;
}

/*
 * The copy of rekey and upgrade, and upgrade's records made in place
 * (t->take): a record file a power cut left unreadable (made, its header
 * or unit never written), or one that is not this directory's record
 * (another's copied over it, one of a version this build cannot read:
 * only a writer of the backing store puts such a one there, in a tree
 * whose records the run is making), is removed, and the listing that
 * follows takes what it finds.  -ENOENT (as if there were none), or the
 * error of removing it.
 */
static int drop_damaged(struct sc_dlists *t, struct dl_ent *e, struct sc_obj *dir)
{
	struct io_ctx io;
	int ret;

	file_close(t, e);
	io_enter(&io, true);
	ret = sc_xl_unlink(below(t), dir, SC_DIRLIST_FILE);
	io_leave(&io);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	sc_log(SC_LOG_INFO, "stackcrypt: names: directory %s: its listing record file did not "
	       "read (a power cut while the copy ran), or was not its own; made anew from its "
	       "listing\n", sc_obj_name(below(t), dir));
	return -ENOENT;
}

/*
 * e's record read from dir (under e's lock), once.  No file: the
 * directory has had no entry since it was made (count 0, gen 0; a listing
 * that finds one says so).  An empty one counts as none: a power cut
 * after the file was made and before its unit was written leaves it so
 * (0 bytes: removed here; a bare header: written over), and a writer who
 * empties it gains nothing a removal would not give (the listing differs
 * if the directory holds entries, the gen is older than the client saw).
 * 0, -EIO (refused, logged), or -errno (not remembered: tried again at
 * the next use).
 */
static int ent_load(struct sc_dlists *t, struct dl_ent *e, struct sc_obj *dir)
{
	uint8_t buf[SC_DLIST_LEN + 1];
	struct io_ctx io;
	struct stat st;
	ssize_t n = 0;
	int fd, ret;

	if (e->loaded)
		return e->err;
	file_close(t, e);	/* read again after a failed settle: its handle goes first */
	io_enter(&io, true);
	ret = sc_xl_lookup(below(t), dir, SC_DIRLIST_FILE, &fd, &st);
	if (ret == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
		sc_xl_drop_fd(below(t), fd);
		ret = sc_xl_unlink(below(t), dir, SC_DIRLIST_FILE);
		ret = ret == 0 ? -ENOENT : ret;
	} else if (ret == 0) {
		ret = file_take(t, e, fd, &st);
		if (ret == 0) {
			n = sc_xl_read(below(t), &e->f, &e->fh, buf, sizeof(buf), 0);
			ret = n < 0 ? (int)n : 0;
		}
		e->flush = ret == 0 && n == 0;	/* its first write moves its size */
	}
	io_leave(&io);
	if (ret == 0 && n > 0 && t->take && sc_dlist_parse(buf, (size_t)n, e->nonce, &e->rec) < 0)
		ret = -EUCLEAN;		/* not this directory's record: dropped below */
	if ((ret == -EUCLEAN || ret == -EIO) && t->take)
		ret = drop_damaged(t, e, dir);
	if (ret == 0 && n == 0)
		ret = -ENOENT;
	if (ret == -ENOENT) {
		memset(&e->rec, 0, sizeof(e->rec));
		memcpy(e->rec.nonce, e->nonce, SC_DIRNONCE_LEN);
		ret = 0;
	} else if (ret == -EUCLEAN || ret == -EIO) {
		return refuse(t, e, dir, "has a listing record file that is not a regular file "
			      "or does not decrypt");
	} else if (ret == 0) {
		ret = rec_judge(t, e, dir, buf, n);
	}
	if (ret < 0)
		return ret;
	e->loaded = true;
	e->epoch = new_epoch(t);
	return 0;
}

/* ---- changes ----------------------------------------------------------------- */

static int elem(struct sc_dlists *t, const uint8_t *nonce, const char *name, uint8_t out[16])
{
	return sc_dir_elem(t->ik, nonce, name, strlen(name), out);
}

int sc_dl_begin(struct sc_dlists *t, struct sc_obj *dir, const uint8_t *nonce,
		const char *add, const char *rm, struct sc_dl_change *c)
{
	const char *pend = rm ? rm : add;
	uint8_t el[SC_INTEG_TAG_LEN];
	struct sc_dlist r;
	struct dl_ent *e;
	int ret;

	c->e = NULL;
	if (!add && !rm)
		return 0;
	e = ent_get(t, nonce);
	if (!e)
		return -ENOMEM;
	pthread_mutex_lock(&e->lock);
	ret = ent_load(t, e, dir);
	if (ret < 0)
		goto err_unlock;
	r = e->rec;
	r.gen++;
	r.count_before = r.count;
	memcpy(r.digest_before, r.digest, sizeof(r.digest));
	ret = 0;
	if (add && (ret = elem(t, nonce, add, el)) == 0) {
		sc_dlist_xor(r.digest, el);
		r.count++;
	}
	if (ret == 0 && rm && (ret = elem(t, nonce, rm, el)) == 0) {
		sc_dlist_xor(r.digest, el);
		r.count--;
	}
	if (ret < 0)
		goto err_unlock;
	r.pend = rm ? SC_DLIST_REMOVED : SC_DLIST_ADDED;
	r.pend_len = (uint8_t)strlen(pend);
	memset(r.pend_name, 0, sizeof(r.pend_name));
	memcpy(r.pend_name, pend, r.pend_len);
	ret = rec_write(t, e, dir, &r, false);
	if (ret < 0)
		goto err_unlock;
	e->rec.gen = r.gen;
	e->pending = true;
	e->epoch = new_epoch(t);
	c->e = e;
	c->count = r.count;
	memcpy(c->digest, r.digest, sizeof(c->digest));
	return 0;

err_unlock:
	pthread_mutex_unlock(&e->lock);
	ent_put(t, e);
	return ret;
}

/*
 * The record written again with the state reached and nothing pending.
 * 0, or -errno logged (the record on disk still resolves right unless a
 * writer of the backing store steps in, and is read again at its next use).
 */
static int settle(struct sc_dlists *t, struct dl_ent *e, struct sc_obj *dir)
{
	struct sc_dlist r = e->rec;
	int ret;

	r.gen++;
	ret = rec_write(t, e, dir, &r, sc_ikey_tree(t->ik));
	if (ret == 0) {
		e->rec.gen = r.gen;
		e->pending = false;
		return 0;
	}
	sc_log(SC_LOG_WARNING, "stackcrypt: names: %s: cannot settle a directory's listing "
	       "record (%s); it is read again at its next use\n",
	       dir ? sc_obj_name(below(t), dir) : "backing", strerror(-ret));
	e->loaded = false;
	return ret;
}

/*
 * After the call.  Done: the record on disk stays as sc_dl_begin wrote it,
 * the change pending, until the next change writes it anyway, the
 * directory's fsyncdir, or the record is let go (the clean unmount among
 * them) settle it: one write per change.  A writer of the backing store
 * who undoes that last change (puts the removed entry back, takes the
 * added one away) while the daemon is killed before then has it taken
 * (format.md 11.7, "Crash windows").  Not done: settled at once, with the
 * state before (a failed create of a name that was there would otherwise
 * resolve as added).
 */
void sc_dl_end(struct sc_dlists *t, struct sc_obj *dir, struct sc_dl_change *c, bool done)
{
	struct dl_ent *e = c->e;

	if (!e)
		return;
	if (done) {
		e->rec.count = c->count;
		memcpy(e->rec.digest, c->digest, sizeof(e->rec.digest));
	} else {
		settle(t, e, dir);
	}
	e->epoch = new_epoch(t);
	pthread_mutex_unlock(&e->lock);
	ent_put(t, e);
	c->e = NULL;
}

void sc_dl_gone(struct sc_dlists *t, const uint8_t *nonce)
{
	struct dl_ent *e;

	pthread_mutex_lock(&t->lock);
	for (e = *bucket(t, nonce); e; e = e->hnext)
		if (!memcmp(e->nonce, nonce, SC_DIRNONCE_LEN))
			break;
	if (e && e->refs == 0) {
		unhash(t, e);
		e->pending = false;	/* its file is gone */
	} else {
		e = NULL;	/* in use: a failed rmdir's directory, still there */
	}
	pthread_mutex_unlock(&t->lock);
	if (e)
		ent_free(t, e);
}

int sc_dl_sync(struct sc_dlists *t, struct sc_obj *dir, const uint8_t *nonce)
{
	struct io_ctx io;
	struct dl_ent *e = ent_get(t, nonce);
	int ret = 0;

	if (!e)
		return -ENOMEM;
	pthread_mutex_lock(&e->lock);
	/* loaded here if it was let go: its file's last writes may not be durable yet */
	ret = ent_load(t, e, dir);
	if (ret == 0 && e->pending)
		ret = settle(t, e, dir);
	if (ret == 0 && e->open) {
		io_enter(&io, false);
		ret = sc_xl_fsync(below(t), &e->f, &e->fh, 1);
		io_leave(&io);
		if (ret == 0)
			gen_durable(t, e);
	}
	pthread_mutex_unlock(&e->lock);
	ent_put(t, e);
	return ret;
}

/* ---- listings ------------------------------------------------------------------ */

int sc_dl_listing_begin(struct sc_dlists *t, struct sc_obj *dir, const uint8_t *nonce,
			struct sc_dl_listing *l)
{
	struct dl_ent *e = ent_get(t, nonce);
	int ret;

	memset(l, 0, sizeof(*l));
	if (!e)
		return -ENOMEM;
	pthread_mutex_lock(&e->lock);
	ret = ent_load(t, e, dir);
	if (ret == 0)
		l->epoch = e->epoch;
	pthread_mutex_unlock(&e->lock);
	ent_put(t, e);
	return ret;
}

void sc_dl_listing_add(struct sc_dlists *t, const uint8_t *nonce, struct sc_dl_listing *l,
		       const char *name, size_t len)
{
	uint8_t el[SC_INTEG_TAG_LEN];

	if (!l->epoch)
		return;
	if (sc_dir_elem(t->ik, nonce, name, len, el) < 0) {
		l->epoch = 0;	/* cannot be compared */
		return;
	}
	sc_dlist_xor(l->digest, el);
	l->count++;
}

int sc_dl_listing_end(struct sc_dlists *t, struct sc_obj *dir, const uint8_t *nonce,
		      struct sc_dl_listing *l)
{
	struct sc_jrnl *jr = sc_xl_journal(below(t));
	bool differ = false, log = false, unclean = sc_jrnl_unclean(jr);
	uint64_t recorded = 0;
	struct dl_ent *e;

	if (!l->epoch)
		return 0;
	e = ent_get(t, nonce);
	if (!e)
		return -ENOMEM;
	pthread_mutex_lock(&e->lock);
	/* an entry reloaded or changed since offset 0 has another mark: nothing to compare */
	if (e->loaded && !e->err && e->epoch == l->epoch) {
		differ = l->count != e->rec.count ||
			 !sc_memeq_ct(l->digest, e->rec.digest, sizeof(l->digest));
		recorded = e->rec.count;
		if (differ && (t->take || sc_fresh_allows(t->fresh))) {
			e->rec.count = l->count;
			memcpy(e->rec.digest, l->digest, sizeof(e->rec.digest));
			settle(t, e, dir);
			e->epoch = new_epoch(t);
			differ = false;
			sc_log(t->take ? SC_LOG_INFO : SC_LOG_WARNING, "stackcrypt: names: %sdirectory "
			       "%s: its listing record counted %llu entries, %llu found: taken as "
			       "found (%s)\n", t->take ? "" : "warning: ", sc_obj_name(below(t), dir),
			       (unsigned long long)recorded, (unsigned long long)l->count,
			       t->take ? "the copy a stopped run left" : "--allow-rollback");
		}
		log = differ && !e->mismatch_logged;
		e->mismatch_logged |= differ;
	}
	pthread_mutex_unlock(&e->lock);
	ent_put(t, e);
	l->epoch = 0;
	l->err = differ ? -EIO : 0;
	/* as a file whose size lost its header (format.md 11.8): fsck can still take it */
	if (differ)
		sc_jrnl_keep_unclean(jr);
	if (log)
		sc_log(SC_LOG_ERR, "stackcrypt: names: directory %s: its entries differ from its "
		       "listing record (%llu found, %llu recorded): %s; returning EIO\n",
		       sc_obj_name(below(t), dir), (unsigned long long)l->count,
		       (unsigned long long)recorded, unclean ? "the last mount stopped "
		       "uncleanly, and a power loss can leave a directory so ('stackcrypt fsck "
		       "--repair --accept-unclean' accepts it), else entries were added or "
		       "removed behind the mount" : "entries added or removed behind the mount");
	return differ ? -EIO : 0;
}

/* ---- the table's life ------------------------------------------------------------ */

int sc_dlists_new(struct sc_xl *xl, const struct sc_ikey *ik, struct sc_fresh *fresh,
		  bool take, struct sc_dlists **out)
{
	struct sc_dlists *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->xl = xl;
	t->ik = ik;
	t->fresh = fresh;
	t->take = take;
	pthread_mutex_init(&t->lock, NULL);
	*out = t;
	return 0;
}

/*
 * The records still pending settled, and those this run wrote made durable
 * and their gens recorded: a layer's destroy runs before the layers below
 * sync (a mount's clean unmount), and rekey and upgrade stage the new
 * tree's freshness record right after freeing its stack, past their own
 * last sync.  One syncfs below, or an fsync of each where there is none
 * (over gluster://).  A record let go earlier (the table's limit) has its
 * gen recorded at its directory's next fsyncdir, or not at all (the
 * client's record lags, which is safe).
 */
static void settle_all(struct sc_dlists *t)
{
	struct io_ctx io;
	struct dl_ent *e;
	bool any = false;

	/*
	 * The copy of rekey and upgrade: its records stay as written (the
	 * copy synced them itself), pending changes resolved at their next
	 * load; its freshness record, staged right after, takes no
	 * directory's gen (each is recorded at the first mount that reads
	 * it).  Settled here, two records of the new tree came back a gen
	 * behind what was recorded after a power cut and a resumed copy
	 * (rel-rekey-power-integrity), cause not found: see format.md 11.7.
	 */
	if (t->take)
		return;
	for (e = t->head; e; e = e->next) {
		if (e->pending && e->open)
			settle(t, e, NULL);
		any |= e->written;
	}
	if (!any)
		return;
	io_enter(&io, false);
	if (sc_xl_syncfs(below(t), NULL) == 0) {
		for (e = t->head; e; e = e->next)
			if (e->written)
				gen_durable(t, e);
	} else {
		for (e = t->head; e; e = e->next)
			if (e->written && e->open &&
			    sc_xl_fsync(below(t), &e->f, &e->fh, 1) == 0)
				gen_durable(t, e);
	}
	io_leave(&io);
}

void sc_dlists_free(struct sc_dlists *t)
{
	struct dl_ent *e;

	if (!t)
		return;
	settle_all(t);
	while ((e = t->head)) {
		unhash(t, e);
		ent_free(t, e);
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}
