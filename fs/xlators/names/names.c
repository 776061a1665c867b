/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names.c - the names translator: plaintext names above, encrypted names
 * below (issue #16; docs/format.md "Names" has the bytes, docs/design.md
 * the picture).
 *
 * It sits between the front end and the crypt layer and intercepts only
 * what touches a name or a symlink target: lookup, the calls that make,
 * link, remove or move a name, readdir, readlink, the stat replies of
 * symlinks (their size is the plaintext target's), statfs (the plaintext
 * name limit) and the extended attribute calls (its reserved attribute).
 * File data, opens and everything else are left NULL and forwarded.  The
 * crypto library does the cipher work (sc_name_*, sc_link_*); this file
 * decides which backing names exist.
 *
 * Directory nonce: each backing directory carries a nonce record, the
 * associated data of every name in it: in the attribute SC_DIRNONCE_XATTR,
 * or on a portable volume (aes-gcm: nothing kept in xattrs) in the file
 * SC_DIRNONCE_FILE inside the directory, made and read through the layers
 * below like a side file (so the layer below encrypts and authenticates
 * it).  It is read once per inode (on the first name operation in it) and
 * kept in obj->priv[xl->id] until ->forget; a directory without a valid
 * record answers every name operation with EIO, logged once for the inode.
 * The root's record is made by ->init if missing.  File form only: a
 * directory that holds no names gets a fresh record when its own is
 * missing or damaged (nothing is lost: no name used the old one); that is
 * what heals a crash inside rmdir, which must remove the nonce file before
 * the directory (docs/format.md 9.2 has the orders).
 *
 * mkdir is crash-safe: the directory is made under a temporary name
 * (SC_NAME_TMP_PREFIX and random hex, hidden from readdir), given its
 * nonce (the attribute, or the nonce file written and fsynced), then
 * renamed to its encrypted name with RENAME_NOREPLACE.  A kill -9 at any
 * moment leaves no directory, or a hidden sc.new.* one for fsck, never a
 * visible directory without its nonce.
 *
 * Long names: an encoded name longer than SC_NAME_SHORT_MAX is stored
 * under its long form, and a side file (long form + SC_NAME_SIDE_SUFFIX,
 * an ordinary file made through the layers below, so encrypted like any
 * file) holds the encoded name.  The side file describes a name, not an
 * inode, and its contents follow from its name (the long form is a hash
 * of them), so any correct copy is as good as another: it is written
 * before the entry is made (an existing correct one is kept, a damaged one
 * replaced), and removed once the name no longer exists.  Failing calls
 * remove only a side file they made whose name did not come to exist.
 *
 * Symlink targets: on a volume with bound targets (SC_FEAT_LINKS_BOUND,
 * docs/format.md 9.5) each is tagged with its link's place, kept in a
 * side file when too long for a backing link, opened at lookup and kept
 * by the inode, and rebound when a rename moves the link ("symlink
 * targets" below).
 *
 * readdir hands up the below layer's entries with their names decrypted
 * and their cookies unchanged (seekdir/telldir work as below).  Side files
 * and directories being made are hidden silently; entries that are not
 * names of this directory (made behind the mount, damaged) are hidden and
 * logged once per directory inode.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "sc_crypto.h"
#include "sc_xlator.h"
#include "xlator_i.h"	/* reserved xattr name escape; adopt/forget of temporary objs */
#include "names_xl.h"
#include "fplace.h"
#include "dirlist.h"

#define SIDE_MODE	0444	/* side files are written once, then only read */
#define NONCE_MODE	0444	/* so are nonce files; any caller who may search the directory reads it */
#define SIDE_NAME_SIZE	(SC_NAME_LONG_LEN + sizeof(SC_NAME_SIDE_SUFFIX))
#define TMP_NAME_SIZE	(sizeof(SC_NAME_TMP_PREFIX) + 32)
#define NAMEMAX_PLAIN	SC_NAME_PLAIN_MAX

/*
 * Encodings this layer made or checked lately, shared by its threads, for
 * names of up to NC_PLAIN bytes (nearly all names).  An encoding is a
 * function of (key, directory nonce, name), so an entry is never stale
 * and nothing invalidates it; it saves the cipher work (about 2 700
 * instructions a name, docs/performance.md section 13) when the same name
 * comes again: the kernel's LOOKUP just before a create, rename or unlink
 * of it, the lookups of the names a readdir handed up, a listing of names
 * made or listed a little earlier.  Two direct-mapped tables hold the same
 * kind of entry, one indexed by name (to_backing), one by encoding
 * (readdir); a new entry replaces whatever hashed to its slot.  A slot is
 * taken with a try-lock: a thread that finds it busy treats it as a miss
 * (or does not store), so no thread ever waits on another.
 */
#define NC_SLOTS	32768u		/* per table, a power of two: 3.8 MB each */
#define NC_PLAIN	32		/* longest name kept: padded to 32 bytes... */
#define NC_ENC		64		/* ...its encoding is base64url of 16 + 32 bytes */
_Static_assert(NC_PLAIN % SC_NAME_PAD == 0 && (16 + NC_PLAIN) * 4 / 3 == NC_ENC,
	       "NC_ENC is the encoding length of an NC_PLAIN-byte name");
_Static_assert((NC_SLOTS & (NC_SLOTS - 1)) == 0, "NC_SLOTS is a power of two");

struct nc_slot {
	uint8_t		busy;			/* atomic: taken */
	uint8_t		plain_len;		/* 0: empty */
	uint8_t		enc_len;
	uint8_t		nonce[SC_DIRNONCE_LEN];
	char		plain[NC_PLAIN];
	char		enc[NC_ENC];
};

enum { NC_BY_NAME, NC_BY_ENC, NC_TABLES };

struct names_priv {
	struct nc_slot	nc[NC_TABLES][NC_SLOTS];	/* calloc'd: pages are touched as used */
	struct sc_nkey	*nk;
	uint64_t	serial;		/* this layer among all made (see last_name) */
	bool		portable;	/* nonce records in files, not in the xattr */
	bool		bound;		/* SC_FEAT_NAMES_BOUND: version 1 records refused */
	bool		links_bound;	/* SC_FEAT_LINKS_BOUND: targets bound, long ones in side files */
	/*
	 * File form over a backing that orders its metadata (->meta_ordered):
	 * a nonce file is not fsynced, its record is copied into the
	 * directory's xattr, read when the file is lost (rec_read).  Cleared
	 * for good when the backing refuses the xattr.  Atomic.
	 */
	bool		mirror;
	pthread_mutex_t	heal_lock;	/* one thread at a time gives a directory a new record */
	pthread_mutex_t	pend_lock;	/* one thread at a time reads a pending directory's record */
	/*
	 * Integrity volumes (SC_NAMES_INTEGRITY, docs/format.md 11.4): the
	 * places of regular files, handed to the data layer below (fplace.c);
	 * NULL elsewhere.  Such a layer uses integ_ops, names_ops with open.
	 */
	struct sc_fplaces *fp;
	struct sc_xl_ops integ_ops;
	/*
	 * Volumes with SC_FEAT_DIR_LISTS (docs/format.md 11.7): directories'
	 * listing records (dirlist.c), written before every call that adds or
	 * removes an entry and checked at every full listing; NULL elsewhere.
	 */
	struct sc_dlists *dl;
};

/*
 * The last name this thread decrypted in readdir, with its encoding.  The
 * front end's readdirplus looks every entry up right after handing it to
 * the kernel, and the encoding is a function of (layer, nonce, name), so
 * that lookup takes it from here instead of encrypting again.  Keyed by
 * the layer's serial, not its address: a layer freed and another made at
 * the same address never matches.
 */
struct last_name {
	uint64_t	serial;			/* 0: empty */
	uint8_t		nonce[SC_DIRNONCE_LEN];
	size_t		enc_len;
	char		plain[SC_NAME_PLAIN_MAX + 1];
	char		enc[SC_NAME_ENC_MAX + 1];
};

static __thread struct last_name t_last;
static uint64_t g_serial;	/* atomic: serials handed out */

/*
 * The place of a directory whose record this daemon could not read when
 * it was looked up (-EACCES: a daemon that is not root, a directory
 * without read or search permission for it): read there at its first use
 * (pend_load).
 */
struct dir_pend {
	uint8_t		pnonce[SC_DIRNONCE_LEN];
	size_t		enc_len;
	char		enc[SC_NAME_ENC_MAX + 1];
};

/*
 * The directory a lookup or mkdir of this thread has just handed up, with
 * its nonce record already read and checked at its place (its parent's
 * nonce and its encoded name, which only those calls know).  The front
 * end adopts a new inode right after, in the same thread (->adopt), and
 * names_adopt gives it this state, so its first use reads nothing more.
 * Keyed by the layer's serial and the backing inode.
 */
struct dir_seen {
	uint64_t	serial;			/* 0: empty */
	dev_t		dev;
	ino_t		ino;
	int		err;			/* 0, -EIO with why, or -EACCES with pend */
	const char	*why;
	uint8_t		nonce[SC_DIRNONCE_LEN];
	struct dir_pend	pend;
};

static __thread struct dir_seen t_seen;

/*
 * The same for a symlink: what this thread's lookup, symlink or link
 * found of it at its place (a bound target opens only there), for
 * names_adopt: its plaintext target, or -EIO with why.
 */
struct link_seen {
	uint64_t	serial;			/* 0: empty */
	dev_t		dev;
	ino_t		ino;
	int		err;
	const char	*why;
	size_t		len;
	char		plain[SC_LINK_BOUND_PLAIN_MAX + 1];
};

static __thread struct link_seen t_link;

/*
 * obj->priv[xl->id]: made once, fully, then read without locks (published
 * with a compare-and-swap; the loser of two concurrent loads frees its
 * copy); freed in ->forget.  Directories: the nonce; symlinks: the
 * plaintext target (immutable for the inode's life: a rename that rebinds
 * a bound target makes a new backing inode), kept in the same allocation.
 */
struct nstate {
	/*
	 * 0, or -EIO: not valid (logged when found); directories also -EACCES:
	 * not read yet (pend, pend_load), then 0 or -EIO once, set with the
	 * nonce under pend_lock and read atomically (dir_nonce).
	 */
	int		err;
	uint8_t		nonce[SC_DIRNONCE_LEN];	/* directories */
	struct dir_pend	*pend;			/* directories: where to read it, while -EACCES */
	off_t		link_size;		/* symlinks */
	int		junk_logged;		/* directories, atomic: readdir hid junk, said so */
	int		long_links;		/* directories, atomic: a long-target link was met */
	char		target[];		/* symlinks: link_size bytes and a NUL */
};

/* A name as stored below. */
struct bname {
	const char	*name;			/* enc or lng: the backing name */
	bool		is_long;
	bool		made;			/* side_ensure wrote its side file */
	size_t		enc_len;
	char		enc[SC_NAME_ENC_MAX + 1];
	char		lng[SC_NAME_LONG_LEN + 1];
	char		side[SIDE_NAME_SIZE];
	struct sc_dl_change ch;			/* new_entry's change of its directory's listing */
};

static const struct sc_nkey *nkey(const struct sc_xl *xl)
{
	return ((const struct names_priv *)xl->priv)->nk;
}

static uint64_t serial(const struct sc_xl *xl)
{
	return ((const struct names_priv *)xl->priv)->serial;
}

static struct sc_fplaces *fplaces(const struct sc_xl *xl)
{
	return ((const struct names_priv *)xl->priv)->fp;
}

static bool portable(const struct sc_xl *xl)
{
	return ((const struct names_priv *)xl->priv)->portable;
}

static bool mirror(const struct sc_xl *xl)
{
	return __atomic_load_n(&((const struct names_priv *)xl->priv)->mirror, __ATOMIC_RELAXED);
}

static bool bound(const struct sc_xl *xl)
{
	return ((const struct names_priv *)xl->priv)->bound;
}

static bool links_bound(const struct sc_xl *xl)
{
	return ((const struct names_priv *)xl->priv)->links_bound;
}

static struct sc_dlists *dlists(const struct sc_xl *xl)
{
	return ((const struct names_priv *)xl->priv)->dl;
}

/* Remembers that name (len bytes) is enc (enc_len bytes) under nonce, for this thread. */
static void last_name_set(const struct sc_xl *xl, const uint8_t *nonce, const char *name,
			  size_t len, const char *enc, size_t enc_len)
{
	t_last.serial = serial(xl);
	memcpy(t_last.nonce, nonce, SC_DIRNONCE_LEN);
	memcpy(t_last.plain, name, len);
	t_last.plain[len] = '\0';
	memcpy(t_last.enc, enc, enc_len);
	t_last.enc[enc_len] = '\0';
	t_last.enc_len = enc_len;
}

/* name's encoding under nonce into out if this thread has it: its length, else -1. */
static int last_name_get(const struct sc_xl *xl, const uint8_t *nonce, const char *name,
			 char *out)
{
	if (t_last.serial != serial(xl) || memcmp(t_last.nonce, nonce, SC_DIRNONCE_LEN) != 0 ||
	    strcmp(t_last.plain, name) != 0)
		return -1;
	memcpy(out, t_last.enc, t_last.enc_len + 1);
	return (int)t_last.enc_len;
}

/* ---- the encoding cache (struct names_priv) ------------------------------- */

/*
 * The slot of key (len bytes) under nonce: the nonce (random) read as two
 * words, then FNV-1a over the key.  Encodings are hashed on their first 8
 * characters only: they begin with the SIV tag, already pseudo-random.
 */
static uint32_t nc_hash(const uint8_t *nonce, const char *key, size_t len)
{
	uint64_t w[2], h;

	memcpy(w, nonce, sizeof(w));
	h = (w[0] ^ (w[1] << 32 | w[1] >> 32)) * 0x9e3779b97f4a7c15ULL;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)key[i]) * 0x100000001b3ULL;
	return (uint32_t)(h ^ (h >> 29) ^ (h >> 47)) & (NC_SLOTS - 1);
}

static struct nc_slot *nc_slot(const struct sc_xl *xl, int table, const uint8_t *nonce,
			       const char *key, size_t len)
{
	struct names_priv *np = xl->priv;

	if (table == NC_BY_ENC && len > 8)
		len = 8;
	return &np->nc[table][nc_hash(nonce, key, len)];
}

static bool nc_trylock(struct nc_slot *sl)
{
	return !__atomic_test_and_set(&sl->busy, __ATOMIC_ACQUIRE);
}

static void nc_unlock(struct nc_slot *sl)
{
	__atomic_clear(&sl->busy, __ATOMIC_RELEASE);
}

/* Remembers that name (len bytes) is enc (enc_len bytes) under nonce, if it fits. */
static void nc_put(const struct sc_xl *xl, const uint8_t *nonce, const char *name, size_t len,
		   const char *enc, size_t enc_len)
{
	if (len == 0 || len > NC_PLAIN || enc_len > NC_ENC)
		return;
	for (int t = 0; t < NC_TABLES; t++) {
		struct nc_slot *sl = t == NC_BY_NAME ? nc_slot(xl, t, nonce, name, len) :
						       nc_slot(xl, t, nonce, enc, enc_len);

		if (!nc_trylock(sl))
			continue;	/* another thread is at it: not worth waiting for */
		memcpy(sl->nonce, nonce, SC_DIRNONCE_LEN);
		memcpy(sl->plain, name, len);
		memcpy(sl->enc, enc, enc_len);
		sl->plain_len = (uint8_t)len;
		sl->enc_len = (uint8_t)enc_len;
		nc_unlock(sl);
	}
}

/*
 * Looks key (len bytes: a name, or an encoding) up in table under nonce;
 * on a hit copies the other half into out with a NUL and returns its
 * length, else -1.
 */
static int nc_get(const struct sc_xl *xl, int table, const uint8_t *nonce, const char *key,
		  size_t len, char *out)
{
	struct nc_slot *sl;
	bool by_name = table == NC_BY_NAME;
	int ret = -1;

	if (len == 0 || len > (by_name ? NC_PLAIN : NC_ENC))
		return -1;
	sl = nc_slot(xl, table, nonce, key, len);
	if (!nc_trylock(sl))
		return -1;
	if ((by_name ? sl->plain_len : sl->enc_len) == len &&
	    memcmp(by_name ? sl->plain : sl->enc, key, len) == 0 &&
	    memcmp(sl->nonce, nonce, SC_DIRNONCE_LEN) == 0) {
		ret = by_name ? sl->enc_len : sl->plain_len;
		memcpy(out, by_name ? sl->enc : sl->plain, (size_t)ret);
		out[ret] = '\0';
	}
	nc_unlock(sl);
	return ret;
}

static unsigned long long backing_ino(struct sc_xl *xl, struct sc_obj *obj)
{
	struct stat st;

	if (sc_xl_getattr(xl->below, obj, NULL, &st) < 0)
		return 0;
	return (unsigned long long)st.st_ino;
}

static struct nstate *ns_get(const struct sc_xl *xl, const struct sc_obj *obj)
{
	return __atomic_load_n((struct nstate *const *)&obj->priv[xl->id], __ATOMIC_ACQUIRE);
}

/*
 * Publishes *ns as obj's state unless another thread was first (then
 * frees it and sets *ns to the winner's).  The thread that publishes a
 * state with an error logs it, so each inode's is said once: "names:
 * KIND PATH WHY; CONSEQUENCE (stackcrypt fsck)", PATH the obj's path in
 * the mount, or its backing inode ino when it has no path yet (lookup).
 */
static void ns_install(const struct sc_xl *xl, struct sc_obj *obj, struct nstate **ns,
		       const char *kind, const char *why, const char *consequence, ino_t ino)
{
	void *expected = NULL;

	if (!__atomic_compare_exchange_n(&obj->priv[xl->id], &expected, *ns, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		free(*ns);
		*ns = expected;
		return;
	}
	if ((*ns)->err && (*ns)->err != -EACCES)
		sc_log(SC_LOG_ERR, "stackcrypt: names: %s %s %s; %s (stackcrypt fsck)\n", kind,
		       ino ? sc_obj_name_ino(obj, (unsigned long long)ino) :
			     sc_obj_name(xl->below, obj),
		       why, consequence);
}

/* ---- temporary objects --------------------------------------------------- */

/*
 * An obj for an O_PATH fd that the layers below handed up and that never
 * enters the front end's table (a side file being written or read).  It
 * is adopted and forgotten through the layers below as the front end does
 * with its inodes, so they may keep state on it (the crypt layer its file
 * key) and nothing is leaked or miscounted; tmp_put gives the fd back.
 */
static void tmp_get(struct sc_xl *xl, struct sc_obj *o, int fd, const struct stat *st)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->type = st->st_mode & S_IFMT;
	sc_xl_stack_adopt(xl->below, o, st);
}

static void tmp_put(struct sc_xl *xl, struct sc_obj *o)
{
	sc_xl_stack_forget(xl->below, o);
	if (o->fd >= 0)
		sc_xl_drop_fd(xl->below, o->fd);
	o->fd = -1;
}

/* ---- this layer's own files (side files, nonce files) ---------------------- */

/*
 * Reads the file name in dir through the layers below into buf, at most
 * max bytes.  Returns the bytes read, -ERANGE (larger than max: not read),
 * -EBADMSG (not a regular file, or one the layers below refuse to read:
 * EIO, a bad header or tag -- as damaged as bad bytes), -ENOENT, or
 * another -errno of the layers below.
 */
static ssize_t file_read(struct sc_xl *xl, struct sc_obj *dir, const char *name, void *buf,
			 size_t max)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDONLY };
	struct sc_obj f;
	struct stat st;
	ssize_t n;
	int fd, ret;

	ret = sc_xl_lookup(xl->below, dir, name, &fd, &st);
	if (ret < 0)
		return ret;
	tmp_get(xl, &f, fd, &st);
	if (!S_ISREG(st.st_mode)) {
		n = -EBADMSG;
		goto out_put;
	}
	if (st.st_size > (off_t)max) {
		n = -ERANGE;
		goto out_put;
	}
	/*
	 * Empty holds nothing in any format.  Not opened: the crypt layer
	 * gives an empty headerless file a header at its first open, and this
	 * one may be a nonce file another thread has just created and is
	 * about to give its own (rec_heal, vacate_done).
	 */
	n = 0;
	if (st.st_size == 0)
		goto out_put;
	n = sc_xl_open(xl->below, &f, &fh);
	if (n < 0)
		goto out_put;
	n = sc_xl_read(xl->below, &f, &fh, buf, max, 0);
	sc_xl_release(xl->below, &f, &fh);
out_put:
	tmp_put(xl, &f);
	return n == -EIO ? -EBADMSG : n;
}

/*
 * Writes a new file name in dir (O_EXCL, mode) through the layers below
 * holding len bytes of buf, fsynced if sync: on disk before whatever needs
 * it.  0, -EEXIST, or -errno with nothing left behind.
 */
static int file_write_s(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
			const void *buf, size_t len, bool sync)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR | O_CREAT | O_EXCL };
	struct sc_obj f;
	struct stat st;
	ssize_t n;
	int fd, ret;

	ret = sc_xl_create(xl->below, dir, name, S_IFREG | mode, &fh, &fd, &st);
	if (ret < 0)
		return ret;
	tmp_get(xl, &f, fd, &st);
	n = sc_xl_write(xl->below, &f, &fh, buf, len, 0);
	ret = n < 0 ? (int)n : (size_t)n != len ? -EIO : 0;
	if (ret == 0 && sync)
		ret = sc_xl_fsync(xl->below, &f, &fh, 0);
	sc_xl_release(xl->below, &f, &fh);
	tmp_put(xl, &f);
	if (ret < 0)
		goto err_unlink;
	return 0;

err_unlink:
	sc_xl_unlink(xl->below, dir, name);
	return ret;
}

/* file_write_s, fsynced: side files and every nonce file that has no copy. */
static int file_write(struct sc_xl *xl, struct sc_obj *dir, const char *name, mode_t mode,
		      const void *buf, size_t len)
{
	return file_write_s(xl, dir, name, mode, buf, len, true);
}

/* ---- directory nonces ---------------------------------------------------- */

/* Is n (rec_read's answer) a record of a version and length this build reads? */
static bool rec_valid(const uint8_t *rec, ssize_t n)
{
	uint8_t nonce[SC_DIRNONCE_LEN];

	return n >= 0 && sc_dirnonce_parse(rec, (size_t)n, nonce) == 0;
}

/*
 * Where rec_read_from's answer came from (file form).  REC_FILE: the
 * nonce file (or, xattr form, the xattr).  REC_COPY: the copy in the
 * xattr, read first on a mirrored mount, its nonce file there (not read).
 * REC_COPY_ONLY: the copy, its nonce file missing, empty or damaged (to be
 * written again: rec_restore).
 */
enum rec_src { REC_FILE, REC_COPY, REC_COPY_ONLY };

/*
 * The copy of dir's record in its xattr, if of a version and length this
 * build reads: its length, else -ENODATA.
 *
 * rec_copy_first, on mirrored mounts: dir's record from the copy, read first
 * because it costs one getxattr where the nonce file costs an open and a
 * read through the data layer (and, cold, a block read) on every lookup
 * of a directory.  The file is looked up, not read, so that one a crash
 * left missing or empty is written again (REC_COPY_ONLY); one damaged
 * behind the mount with its size kept is not noticed here (fsck reads
 * it), nor one in a directory the daemon may not search (a daemon that is
 * not root, a directory of mode 0600: then only the copy can be read, and
 * it answers).  Returns the copy's length, -ENODATA (no copy this build reads:
 * read the file), or another -errno of the lookup.
 */
static ssize_t rec_copy(struct sc_xl *xl, struct sc_obj *dir, uint8_t *rec)
{
	ssize_t c = sc_xl_getxattr(xl->below, dir, SC_DIRNONCE_XATTR, rec,
				   SC_DIRNONCE_REC_MAX + 1);

	return c >= 0 && rec_valid(rec, c) ? c : -ENODATA;
}

static ssize_t rec_copy_first(struct sc_xl *xl, struct sc_obj *dir, uint8_t *rec,
			      enum rec_src *src)
{
	struct stat st;
	ssize_t c;
	int fd, ret;

	c = rec_copy(xl, dir, rec);
	if (c < 0)
		return c;
	ret = sc_xl_lookup(xl->below, dir, SC_DIRNONCE_FILE, &fd, &st);
	if (ret == -EACCES) {
		/* a daemon that is not root, a directory without search permission */
		*src = REC_COPY;
		return c;
	}
	if (ret < 0 && ret != -ENOENT)
		return ret;
	if (ret == 0)
		sc_xl_drop_fd(xl->below, fd);
	*src = ret == 0 && S_ISREG(st.st_mode) && st.st_size > 0 ? REC_COPY : REC_COPY_ONLY;
	return c;
}

/*
 * dir's stored nonce record into rec (SC_DIRNONCE_REC_MAX + 1 bytes), in
 * the volume's form.  Returns as getxattr does: the record's length,
 * -ENODATA (none), -ERANGE (too long); file form also -EBADMSG (a nonce
 * file that is no regular file or does not decrypt); or another -errno,
 * which says nothing about the record (EACCES, ENOMEM).  *src: where the
 * answer came from; with copy_first on a mirrored mount the copy is read
 * before the file (rec_copy_first), else only when the file is missing,
 * empty or damaged.
 */
static ssize_t rec_read_from(struct sc_xl *xl, struct sc_obj *dir, uint8_t *rec,
			     enum rec_src *src, bool copy_first)
{
	ssize_t n, c;

	*src = REC_FILE;
	if (!portable(xl))
		return sc_xl_getxattr(xl->below, dir, SC_DIRNONCE_XATTR, rec,
				      SC_DIRNONCE_REC_MAX + 1);
	if (copy_first && mirror(xl)) {
		n = rec_copy_first(xl, dir, rec, src);
		if (n != -ENODATA)
			return n;
	}
	n = file_read(xl, dir, SC_DIRNONCE_FILE, rec, SC_DIRNONCE_REC_MAX + 1);
	if (n == -ENOENT)
		n = -ENODATA;
	/*
	 * A nonce file missing, empty or damaged -- what a crash leaves of
	 * one that had not reached the disk (mirror: not fsynced) -- is
	 * answered by the copy in the xattr, looked for on every file-form
	 * volume whatever this mount's backing, since a volume can move
	 * between backings.
	 */
	if (n != 0 && n != -ENODATA && n != -EBADMSG)
		return n;
	c = rec_copy(xl, dir, rec);
	if (c < 0)
		return n;
	*src = REC_COPY_ONLY;
	return c;
}

/* dir's record, the file read first (see rec_read_from). */
static ssize_t rec_read(struct sc_xl *xl, struct sc_obj *dir, uint8_t *rec)
{
	enum rec_src src;

	return rec_read_from(xl, dir, rec, &src, false);
}

/*
 * Copies rec (len bytes) into dir's xattr when the volume mirrors its
 * nonce files.  0: copied; 1: not copied, the file must be fsynced (the
 * volume does not mirror, or the backing does not take user xattrs: then
 * it never mirrors again, logged once); or -errno.
 */
static int rec_mirror(struct sc_xl *xl, struct sc_obj *dir, const uint8_t *rec, size_t len)
{
	struct names_priv *np = xl->priv;
	int ret;

	if (!mirror(xl))
		return 1;
	ret = sc_xl_setxattr(xl->below, dir, SC_DIRNONCE_XATTR, rec, len, 0);
	if (ret != -ENOTSUP && ret != -EOPNOTSUPP)
		return ret;
	if (__atomic_exchange_n(&np->mirror, false, __ATOMIC_RELAXED))
		sc_log(SC_LOG_INFO, "stackcrypt: names: the backing takes no xattr %s (%s): "
		       "directories' nonce files are fsynced when made instead\n",
		       SC_DIRNONCE_XATTR, strerror(-ret));
	return 1;
}

/*
 * Stores the new record rec (len bytes) on dir, which has none: 0,
 * -EEXIST, or -errno (nothing stored).  File form: the file decides who
 * was first (O_EXCL); then, mirrored, the copy (a crash before it leaves
 * the directory holding no names: mkdir's is still under its temporary
 * name, and rec_heal gives such a one a record again).  A file neither
 * fsynced nor copied (the backing took no xattr) is written again,
 * fsynced.
 */
static int rec_create(struct sc_xl *xl, struct sc_obj *dir, const uint8_t *rec, size_t len)
{
	bool lazy = mirror(xl);
	int ret;

	if (!portable(xl))
		return sc_xl_setxattr(xl->below, dir, SC_DIRNONCE_XATTR, rec, len, XATTR_CREATE);
	ret = file_write_s(xl, dir, SC_DIRNONCE_FILE, NONCE_MODE, rec, len, !lazy);
	if (ret < 0 || !lazy)
		return ret;
	ret = rec_mirror(xl, dir, rec, len);
	if (ret == 0)
		return 0;
	sc_xl_unlink(xl->below, dir, SC_DIRNONCE_FILE);
	return ret < 0 ? ret : file_write(xl, dir, SC_DIRNONCE_FILE, NONCE_MODE, rec, len);
}

/*
 * Replaces dir's record by rec (len bytes) in one step, so that a crash
 * leaves the old record or the new one: the xattr is set in place; the
 * nonce file is written whole under SC_DIRNONCE_TMP (a leftover of a crash
 * is removed first), then renamed over SC_DIRNONCE_FILE.  Mirrored, the
 * copy goes first and the file is not fsynced: a crash that loses the file
 * leaves the copy, which is the new record (the file is read first while
 * it lasts, so the old one until the rename).  0 or -errno (the old record
 * in place).
 */
static int rec_replace(struct sc_xl *xl, struct sc_obj *dir, const uint8_t *rec, size_t len)
{
	bool sync;
	int ret;

	if (!portable(xl))
		return sc_xl_setxattr(xl->below, dir, SC_DIRNONCE_XATTR, rec, len, 0);
	ret = rec_mirror(xl, dir, rec, len);
	if (ret < 0)
		return ret;
	sync = ret == 1;
	ret = file_write_s(xl, dir, SC_DIRNONCE_TMP, NONCE_MODE, rec, len, sync);
	if (ret == -EEXIST) {
		ret = sc_xl_unlink(xl->below, dir, SC_DIRNONCE_TMP);
		if (ret == 0 || ret == -ENOENT)
			ret = file_write_s(xl, dir, SC_DIRNONCE_TMP, NONCE_MODE, rec, len, sync);
	}
	if (ret < 0)
		return ret;
	ret = sc_xl_rename(xl->below, dir, SC_DIRNONCE_TMP, dir, SC_DIRNONCE_FILE, 0);
	if (ret < 0)
		sc_xl_unlink(xl->below, dir, SC_DIRNONCE_TMP);
	return ret;
}

/* Is n an answer about dir's record (rather than about reading it: EACCES, ENOMEM)? */
static bool rec_answer(ssize_t n)
{
	return n >= 0 || n == -ENODATA || n == -ERANGE || n == -EBADMSG;
}

/* readdir's fill for holds_no_names: counts the entries that may be names. */
struct name_count {
	const struct sc_obj	*dir;
	unsigned int		names;
};

static int count_names(void *ctx, const struct sc_dirent *de)
{
	struct name_count *c = ctx;

	if (strcmp(de->name, ".") && strcmp(de->name, "..") && strcmp(de->name, SC_DIRNONCE_FILE) &&
	    strcmp(de->name, SC_DIRNONCE_TMP) && strcmp(de->name, SC_DIRLIST_FILE) &&
	    !(c->dir->is_root && !strcmp(de->name, "lost+found")))
		c->names++;
	return 0;
}

/*
 * Whether dir holds no names: nothing below but ".", "..", its nonce file
 * and listing record (and in the root mkfs.ext4's lost+found; what the volume keeps there is
 * hidden by the layers below).  1, 0, or -errno.
 */
static int holds_no_names(struct sc_xl *xl, struct sc_obj *dir)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDONLY | O_DIRECTORY };
	struct name_count c = { .dir = dir };
	int ret;

	ret = sc_xl_opendir(xl->below, dir, &fh);
	if (ret < 0)
		return ret;
	ret = sc_xl_readdir(xl->below, dir, &fh, 0, count_names, &c);
	sc_xl_releasedir(xl->below, dir, &fh);
	return ret < 0 ? ret : c.names == 0;
}

/*
 * What the record rec (n bytes, or -errno from reading it) says of the
 * directory at the place at: 0 with its nonce, -EIO with why (no usable
 * record: missing, damaged, another directory's, or unbound on a volume
 * whose records are all bound), or another -errno that says nothing
 * about the record (EACCES, ENOMEM: not remembered).
 */
static int rec_judge(struct sc_xl *xl, const uint8_t *rec, ssize_t n,
		     const struct sc_dirplace *at, uint8_t *nonce, const char **why)
{
	int ret;

	if (!rec_answer(n))
		return (int)n;
	if (n == -ENODATA) {
		*why = "has no name nonce";
	} else if (n == -ERANGE) {
		*why = "has a name nonce record of the wrong size";
	} else if (n == -EBADMSG) {
		*why = "has a name nonce file that is not a regular file or does not decrypt";
	} else {
		ret = sc_dirnonce_open(nkey(xl), rec, (size_t)n, at, nonce);
		if (ret == 2 || (ret == 1 && !bound(xl)))
			return 0;
		if (ret == 1)
			*why = "has an unbound (version 1) name nonce record, which this volume "
			       "never makes: put there behind the mount";
		else if (ret == -EBADMSG)
			*why = "has the name nonce record of another directory (copied from it, "
			       "or the directory was moved behind the mount)";
		else if (ret == -EPROTONOSUPPORT)
			*why = "has a name nonce record of a version this build cannot read";
		else if (ret == -EUCLEAN)
			*why = "has a name nonce record of the wrong size";
		else
			return ret;
	}
	return -EIO;
}

/*
 * dir's record read (the copy first on a mirrored mount) and judged at the
 * place at: as rec_judge, the record in rec (*n bytes, as rec_read_from
 * answered) and where it came from in *src.  A copy read first that does
 * not open there gives way to the file.  A copy the mount wrote always
 * opens where the directory is (a rename writes it before the file, and
 * each record opens at both places while the rename is under way), so this
 * is for one damaged or put there behind the mount.
 */
static int rec_load(struct sc_xl *xl, struct sc_obj *dir, const struct sc_dirplace *at,
		    uint8_t *rec, ssize_t *n, uint8_t *nonce, const char **why, enum rec_src *src)
{
	int ret;

	*n = rec_read_from(xl, dir, rec, src, true);
	ret = rec_judge(xl, rec, *n, at, nonce, why);
	if (ret == -EIO && *src == REC_COPY) {
		*n = rec_read_from(xl, dir, rec, src, false);
		ret = rec_judge(xl, rec, *n, at, nonce, why);
	}
	return ret;
}

/*
 * File form: gives dir, at the place at, a fresh record in place of its
 * missing or unusable one (n: what rec_read answered) if it holds no
 * names; a name made under the old nonce would be lost, so a directory
 * holding anything keeps its answer (EIO follows).  One thread at a time,
 * reading again first: the one before may have healed it.  Returns what
 * rec_read would now answer, or -errno (not remembered).
 */
static ssize_t rec_heal(struct sc_xl *xl, struct sc_obj *dir, const struct sc_dirplace *at,
			uint8_t *rec, ssize_t n)
{
	struct names_priv *np = xl->priv;
	uint8_t nonce[SC_DIRNONCE_LEN];
	const char *why;
	int ret;

	pthread_mutex_lock(&np->heal_lock);
	n = rec_read(xl, dir, rec);
	if (rec_judge(xl, rec, n, at, nonce, &why) != -EIO)
		goto out_unlock;
	ret = holds_no_names(xl, dir);
	if (ret <= 0) {
		n = ret < 0 ? ret : n;
		goto out_unlock;
	}
	if (n != -ENODATA) {
		ret = sc_xl_unlink(xl->below, dir, SC_DIRNONCE_FILE);
		if (ret == -EISDIR || ret == -EPERM)
			goto out_unlock;	/* a directory made behind the mount: not ours */
		if (ret < 0 && ret != -ENOENT) {
			n = ret;
			goto out_unlock;
		}
	}
	ret = sc_random(nonce, sizeof(nonce));
	if (ret == 0)
		ret = sc_dirnonce_seal(nkey(xl), nonce, at, NULL, rec);
	if (ret > 0)
		ret = rec_create(xl, dir, rec, (size_t)ret);
	if (ret == -EEXIST)
		n = rec_read(xl, dir, rec);	/* another process was first */
	else
		n = ret < 0 ? ret : SC_DIRNONCE_REC2_LEN;
	if (ret == 0)
		sc_log(SC_LOG_INFO, "stackcrypt: names: directory %s holds no "
		       "names and had no usable nonce file; it has a new one\n",
		       sc_obj_name(xl->below, dir));
out_unlock:
	pthread_mutex_unlock(&np->heal_lock);
	return n;
}

/*
 * dir's nonce file, missing, empty or damaged (what a crash leaves before
 * it reached the disk), its record rec (n bytes) read from the copy in the
 * xattr and found right: the file written again from it, fsynced, so that a copy of
 * the backing without xattrs keeps working.  One thread at a time, reading
 * again first: the one before may have done it.  Logged; on a failure the
 * copy keeps answering.
 */
static void rec_restore(struct sc_xl *xl, struct sc_obj *dir, const uint8_t *rec, size_t n)
{
	struct names_priv *np = xl->priv;
	uint8_t now[SC_DIRNONCE_REC_MAX + 1];
	enum rec_src src;
	int ret = 0;

	pthread_mutex_lock(&np->heal_lock);
	if (rec_read_from(xl, dir, now, &src, false) < 0 || src != REC_COPY_ONLY)
		goto out_unlock;
	ret = sc_xl_unlink(xl->below, dir, SC_DIRNONCE_FILE);
	if (ret == 0 || ret == -ENOENT)
		ret = file_write(xl, dir, SC_DIRNONCE_FILE, NONCE_MODE, rec, n);
	if (ret == -EEXIST)
		goto out_unlock;	/* written back meanwhile by a failed rmdir (vacate_done) */
	if (ret == 0)
		sc_log(SC_LOG_WARNING, "stackcrypt: names: warning: directory %s: its nonce "
		       "file was missing, empty or damaged (as a crash leaves it before it "
		       "reached the disk); written again from the copy in its xattr\n",
		       sc_obj_name(xl->below, dir));
	else
		sc_log(SC_LOG_WARNING, "stackcrypt: names: warning: directory %s: its nonce "
		       "file was missing, empty or damaged (as a crash leaves it before it "
		       "reached the disk) and cannot be written again (%s); the copy in its "
		       "xattr answers\n", sc_obj_name(xl->below, dir), strerror(-ret));
out_unlock:
	pthread_mutex_unlock(&np->heal_lock);
}

/*
 * dir's record, read and checked at the place at (file form: healed if it
 * holds no names, its file restored from the copy): 0 with the nonce, -EIO
 * with why, or another -errno (nothing said about the record).
 */
static int dir_load(struct sc_xl *xl, struct sc_obj *dir, const struct sc_dirplace *at,
		    uint8_t *nonce, const char **why)
{
	uint8_t rec[SC_DIRNONCE_REC_MAX + 1];
	enum rec_src src;
	ssize_t n;
	int ret = rec_load(xl, dir, at, rec, &n, nonce, why, &src);

	if (ret == 0 && src == REC_COPY_ONLY)
		rec_restore(xl, dir, rec, (size_t)n);
	if (ret == -EIO && portable(xl)) {
		n = rec_heal(xl, dir, at, rec, n);
		ret = rec_judge(xl, rec, n, at, nonce, why);
	}
	return ret;
}

/*
 * Installs dir's state: its nonce, or err (-EIO) with why, logged by the
 * thread that installs it (once per inode), or -EACCES with the place
 * pend to read it at later.  0 or -ENOMEM.
 */
static int nonce_state(struct sc_xl *xl, struct sc_obj *dir, int err, const uint8_t *nonce,
		       const char *why, const struct dir_pend *pend, ino_t ino,
		       struct nstate **out)
{
	struct nstate *ns = calloc(1, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	if (err == -EACCES) {
		ns->pend = malloc(sizeof(*ns->pend));
		if (!ns->pend) {
			free(ns);
			return -ENOMEM;
		}
		*ns->pend = *pend;
	}
	ns->err = err;
	if (!err)
		memcpy(ns->nonce, nonce, SC_DIRNONCE_LEN);
	ns_install(xl, dir, &ns, "directory", why, "names in it return EIO", ino);
	*out = ns;
	return 0;
}

/*
 * A directory whose record could not be read when it was looked up
 * (-EACCES: a daemon that is not root, a directory without read or search
 * permission for it), so that the lookup still answered (`ls -l` of the
 * parent, a chmod that gives the permission back): read at its place now,
 * at its first use, which its mode may allow by then.  Its state becomes
 * the nonce, or -EIO (logged, as at a lookup); another -EACCES leaves it
 * pending.  One thread at a time.
 */
static void pend_load(struct sc_xl *xl, struct sc_obj *dir, struct nstate *ns)
{
	struct names_priv *np = xl->priv;
	uint8_t nonce[SC_DIRNONCE_LEN];
	const char *why = NULL;
	int ret;

	pthread_mutex_lock(&np->pend_lock);
	if (__atomic_load_n(&ns->err, __ATOMIC_ACQUIRE) == -EACCES) {
		struct sc_dirplace at = { ns->pend->pnonce, ns->pend->enc, ns->pend->enc_len };

		ret = dir_load(xl, dir, &at, nonce, &why);
		if (ret == 0)
			memcpy(ns->nonce, nonce, SC_DIRNONCE_LEN);
		if (ret == -EIO)
			sc_log(SC_LOG_ERR, "stackcrypt: names: directory %s %s; names in it "
			       "return EIO (stackcrypt fsck)\n", sc_obj_name(xl->below, dir), why);
		if (ret == 0 || ret == -EIO)
			__atomic_store_n(&ns->err, ret, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&np->pend_lock);
}

/*
 * dir's nonce, read on first use: for the root, checked at the root's
 * place; any other directory got its state when it was adopted, after
 * the lookup or mkdir that knew its place (names_adopt).  One without
 * (reached by no lookup of this layer) can have its record checked at no
 * place: only a version 1 record of a volume that is not bound is read.
 * Returns 0, -EIO (no usable record: logged once per inode), or the error
 * of reading it (not remembered).
 */
static int dir_nonce(struct sc_xl *xl, struct sc_obj *dir, const uint8_t **nonce)
{
	static const struct sc_dirplace root = { 0 };
	struct nstate *ns = ns_get(xl, dir);
	uint8_t rec[SC_DIRNONCE_REC_MAX + 1], n_[SC_DIRNONCE_LEN];
	const char *why = NULL;
	int ret;

	if (!ns) {
		if (!S_ISDIR(dir->type))
			return -ENOTDIR;
		if (dir->is_root) {
			ret = dir_load(xl, dir, &root, n_, &why);
		} else {
			ssize_t n = rec_read(xl, dir, rec);

			bool v2 = n > 0 && rec[0] != 1;

			ret = v2 ? -EIO : rec_judge(xl, rec, n, &root, n_, &why);
			if (v2)
				why = "was reached by no lookup of the names layer: its nonce record "
				      "cannot be checked";
		}
		if (ret < 0 && ret != -EIO)
			return ret;
		ret = nonce_state(xl, dir, ret, n_, why, NULL, 0, &ns);
		if (ret < 0)
			return ret;
	}
	if (__atomic_load_n(&ns->err, __ATOMIC_ACQUIRE) == -EACCES)
		pend_load(xl, dir, ns);
	ret = __atomic_load_n(&ns->err, __ATOMIC_ACQUIRE);
	if (ret)
		return ret;
	*nonce = ns->nonce;
	return 0;
}

/*
 * Remembers for names_adopt what this thread found of the directory st
 * (err: -EIO or 0; -EACCES: not read, at its place at).
 */
static void seen_set(const struct sc_xl *xl, const struct stat *st, int err,
		     const uint8_t *nonce, const char *why, const struct sc_dirplace *at)
{
	if (err == -EACCES) {
		memcpy(t_seen.pend.pnonce, at->parent, SC_DIRNONCE_LEN);
		t_seen.pend.enc_len = at->enc_len;
		memcpy(t_seen.pend.enc, at->enc, at->enc_len);
	}
	t_seen.serial = serial(xl);
	t_seen.dev = st->st_dev;
	t_seen.ino = st->st_ino;
	t_seen.err = err;
	t_seen.why = why;
	if (!err)
		memcpy(t_seen.nonce, nonce, SC_DIRNONCE_LEN);
}

/*
 * File form, before the backing name bname in dir goes away as a
 * directory (rmdir, or a rename over it): a names directory always holds
 * its nonce file, which the backing rmdir/rename would meet as an entry.
 * If bname is a directory (other than the inode src_ino, a rename's
 * source), this checks that it holds no names (-ENOTEMPTY, untouched,
 * otherwise), keeps its record, and removes its nonce file, with owner
 * read, write and search added for that if they were missing (as mkdir
 * does; put back by vacate_undo).  A crash right after leaves an empty
 * directory without a nonce file: dir_nonce gives it a new one.
 *
 * A directory with a copy of its record in its xattr that opens at its
 * place at (mirrored mounts, volumes without listing records) is not
 * listed first: its nonce file goes at once and, if it holds names, the
 * call below fails (ENOTEMPTY, EEXIST) and vacate_done writes the file
 * back.  No name can come in between: the kernel holds the directory
 * locked through rmdir and rename.  A crash before the file is back
 * leaves the copy, from which the directory's next lookup writes it again
 * (rec_restore).  This saves a listing of the directory per rmdir.
 */
struct vacated {
	struct sc_obj	dir;		/* the directory below; fd -1: nothing was done */
	struct sc_obj	*parent;	/* for messages: it is name in parent */
	const char	*name;
	mode_t		mode;		/* its mode before */
	bool		chmodded;
	bool		removed;	/* its nonce file is gone */
	bool		copied;		/* its record is in the copy too: put back lazily */
	ssize_t		len;		/* the record kept, or < 0: none readable */
	uint8_t		rec[SC_DIRNONCE_REC_MAX + 1];
};

/*
 * After the call vacate prepared: if it failed (failed), the nonce file
 * goes back with the same record and the mode as it was; the directory
 * below is let go either way.
 */
static void vacate_done(struct sc_xl *xl, struct vacated *v, bool failed)
{
	struct stat attr, st;
	int ret = 0;

	if (v->dir.fd < 0)
		return;
	if (failed && v->removed) {
		ret = rec_valid(v->rec, v->len) ?
		      file_write_s(xl, &v->dir, SC_DIRNONCE_FILE, NONCE_MODE, v->rec,
				   (size_t)v->len, !v->copied) : 0;
		if (ret == -EEXIST)
			ret = 0;	/* a lookup meanwhile wrote it from the copy (rec_restore) */
		if (ret < 0)
			sc_log(SC_LOG_ERR, "stackcrypt: names: directory %s: "
			       "cannot put its nonce file back (%s); names in it return EIO "
			       "(stackcrypt fsck)\n", sc_obj_child_name(v->parent, v->name,
			       backing_ino(xl, &v->dir)), strerror(-ret));
	}
	if (failed && v->chmodded) {
		attr.st_mode = v->mode;
		sc_xl_setattr(xl->below, &v->dir, NULL, &attr, SC_SET_MODE, &st);
	}
	tmp_put(xl, &v->dir);
}

/*
 * vacate's first removal: the listing record (volumes with
 * SC_FEAT_DIR_LISTS) goes before the nonce file, so that a crash between
 * them leaves an empty directory with its nonce and no record (an empty
 * listing, as after mkdir), never a record beside a nonce made anew.  The
 * record this layer kept of it (found by the nonce in v->rec) is let go.
 * 0 or -errno.
 */
static int list_remove(struct sc_xl *xl, struct vacated *v)
{
	uint8_t nonce[SC_DIRNONCE_LEN];
	int ret;

	if (!dlists(xl))
		return 0;
	ret = sc_xl_unlink(xl->below, &v->dir, SC_DIRLIST_FILE);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	if (v->len > 0 && sc_dirnonce_parse(v->rec, (size_t)v->len, nonce) == 0)
		sc_dl_gone(dlists(xl), nonce);
	return 0;
}

static int vacate(struct sc_xl *xl, struct sc_obj *dir, const char *bname,
		  const struct sc_dirplace *at, ino_t src_ino, struct vacated *v)
{
	const mode_t need = S_IRWXU;
	uint8_t nonce[SC_DIRNONCE_LEN];
	struct stat st, attr;
	const char *why;
	int fd, ret;

	memset(v, 0, sizeof(*v));
	v->dir.fd = -1;
	if (!portable(xl))
		return 0;
	ret = sc_xl_lookup(xl->below, dir, bname, &fd, &st);
	if (ret < 0)
		return ret == -ENOENT ? 0 : ret;	/* the call below answers ENOENT */
	if (!S_ISDIR(st.st_mode) || st.st_ino == src_ino) {
		sc_xl_drop_fd(xl->below, fd);
		return 0;
	}
	tmp_get(xl, &v->dir, fd, &st);
	v->mode = st.st_mode & 07777;
	if ((v->mode & need) != need) {
		attr.st_mode = v->mode | need;
		ret = sc_xl_setattr(xl->below, &v->dir, NULL, &attr, SC_SET_MODE, &st);
		if (ret == 0)
			v->chmodded = true;	/* else not its owner: try as we are */
	}
	if (!dlists(xl) && mirror(xl)) {
		v->len = rec_copy(xl, &v->dir, v->rec);
		if (v->len > 0 && rec_judge(xl, v->rec, v->len, at, nonce, &why) == 0) {
			v->copied = true;
			goto unlink;
		}
	}
	ret = holds_no_names(xl, &v->dir);
	if (ret == 0)
		ret = -ENOTEMPTY;
	if (ret < 0)
		goto err_undo;
	v->len = rec_read(xl, &v->dir, v->rec);
	ret = list_remove(xl, v);
	if (ret < 0)
		goto err_undo;
	if (v->len == -ENODATA)
		return 0;	/* a crash's leftover: nothing to remove */
unlink:
	ret = sc_xl_unlink(xl->below, &v->dir, SC_DIRNONCE_FILE);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		goto err_undo;
	v->removed = true;
	return 0;

err_undo:
	vacate_done(xl, v, true);
	return ret;
}

/* ---- names --------------------------------------------------------------- */

/* The backing name of name in dir.  0, -EIO (dir's nonce), -ENAMETOOLONG, -EINVAL. */
static int to_backing(struct sc_xl *xl, struct sc_obj *dir, const char *name, struct bname *b)
{
	const uint8_t *nonce;
	int ret;

	ret = dir_nonce(xl, dir, &nonce);
	if (ret < 0)
		return ret;
	ret = last_name_get(xl, nonce, name, b->enc);
	if (ret < 0)
		ret = nc_get(xl, NC_BY_NAME, nonce, name, strlen(name), b->enc);
	if (ret < 0) {
		ret = sc_name_encrypt(nkey(xl), nonce, name, strlen(name), b->enc);
		if (ret > 0)
			nc_put(xl, nonce, name, strlen(name), b->enc, (size_t)ret);
	}
	if (ret < 0)
		return ret;
	b->enc_len = (size_t)ret;
	b->is_long = b->enc_len > SC_NAME_SHORT_MAX;
	b->name = b->enc;
	if (!b->is_long)
		return 0;
	ret = sc_name_long(b->enc, b->enc_len, b->lng);
	if (ret < 0)
		return ret;
	memcpy(b->side, b->lng, SC_NAME_LONG_LEN);
	memcpy(b->side + SC_NAME_LONG_LEN, SC_NAME_SIDE_SUFFIX, sizeof(SC_NAME_SIDE_SUFFIX));
	b->name = b->lng;
	return 0;
}

/* Does the backing name exist in dir?  1, 0, or -errno (neither can be said). */
static int exists_below(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	struct stat st;
	int fd, ret;

	ret = sc_xl_lookup(xl->below, dir, name, &fd, &st);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	sc_xl_drop_fd(xl->below, fd);
	return 1;
}

/* ---- side files of long names --------------------------------------------- */

/*
 * Reads the side file side in dir into buf (SC_NAME_ENC_MAX + 2 bytes, NUL
 * added) and checks that it belongs to the long form lng.  Returns the
 * encoded name's length, -EBADMSG (not a side file of lng: wrong type,
 * size or contents, a file the crypt layer cannot read), -ENOENT, or
 * another -errno of the layers below.
 */
static int side_read(struct sc_xl *xl, struct sc_obj *dir, const char *side, const char *lng,
		     char *buf)
{
	char want[SC_NAME_LONG_LEN + 1];
	ssize_t n;

	n = file_read(xl, dir, side, buf, SC_NAME_ENC_MAX + 1);
	if (n == -ERANGE)
		return -EBADMSG;
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	if (n <= SC_NAME_SHORT_MAX || n > SC_NAME_ENC_MAX ||
	    sc_name_long(buf, (size_t)n, want) < 0 || strcmp(want, lng) != 0)
		return -EBADMSG;
	return (int)n;
}

/* Writes b's side file in dir (O_EXCL).  0, -EEXIST, or -errno with nothing left behind. */
static int side_write(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b)
{
	return file_write(xl, dir, b->side, SIDE_MODE, b->enc, b->enc_len);
}

/*
 * Makes sure b's side file in dir holds b's encoded name before an entry
 * is made under b's long form: writes it, keeps a correct one that is
 * there (the name exists, or a crash left it), replaces a damaged one.
 * b->made says whether this call wrote it (for side_undo).  0 or -errno.
 */
static int side_ensure(struct sc_xl *xl, struct sc_obj *dir, struct bname *b)
{
	char buf[SC_NAME_ENC_MAX + 2];
	int ret;

	b->made = false;
	if (!b->is_long)
		return 0;
	ret = side_write(xl, dir, b);
	if (ret == -EEXIST) {
		ret = side_read(xl, dir, b->side, b->lng, buf);
		if (ret >= 0)
			return 0;
		if (ret != -EBADMSG)
			return ret;
		/* Damaged: the name it describes (if any) is unreadable until it is rewritten. */
		ret = sc_xl_unlink(xl->below, dir, b->side);
		if (ret == 0 || ret == -ENOENT)
			ret = side_write(xl, dir, b);
		else if (ret == -EISDIR)
			ret = -EIO;	/* a directory made behind the mount: not ours to remove */
	}
	if (ret < 0)
		return ret;
	b->made = true;
	return 0;
}

/* Removes b's side file from dir (the name is gone).  A failure only leaves an orphan. */
static void side_remove(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b)
{
	int ret;

	if (!b->is_long)
		return;
	ret = sc_xl_unlink(xl->below, dir, b->side);
	if (ret < 0 && ret != -ENOENT)
		sc_log(SC_LOG_WARNING, "stackcrypt: names: directory %s: cannot "
		       "remove the side file of a removed long name (%s); it stays hidden\n",
		       sc_obj_name(xl->below, dir), strerror(-ret));
}

/*
 * After a call that failed to make b: removes the side file side_ensure
 * made, unless the name exists after all (its side file was missing or
 * damaged and is now repaired).
 */
static void side_undo(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b)
{
	if (b->made && exists_below(xl, dir, b->name) == 0)
		side_remove(xl, dir, b);
}

/*
 * The first half of every call that makes an entry (create, mknod, mkdir,
 * symlink, link, rename's target): name's backing name in b and, for a
 * long one, its side file in place.  0 or -errno (nothing made).
 */
static int new_name(struct sc_xl *xl, struct sc_obj *dir, const char *name, struct bname *b)
{
	int ret = to_backing(xl, dir, name, b);

	if (ret == 0)
		ret = side_ensure(xl, dir, b);
	return ret;
}

/* The second half: ret is what making the entry returned; returns it, unwound on failure. */
static int new_name_done(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b, int ret)
{
	if (ret < 0)
		side_undo(xl, dir, b);
	return ret;
}

/*
 * The listing record of dir (volumes with SC_FEAT_DIR_LISTS) around a call
 * that adds the backing name add, removes rm, or both: rewritten before
 * the call with its outcome pending (dl_begin), its state taken after it
 * (dl_end, ret: what the call returned; dirlist.c settles the record
 * later).  c->e NULL: nothing to do.
 */
static int dl_begin(struct sc_xl *xl, struct sc_obj *dir, const char *add, const char *rm,
		    struct sc_dl_change *c)
{
	c->e = NULL;
	if (!dlists(xl))
		return 0;
	return sc_dl_begin(dlists(xl), dir, ns_get(xl, dir)->nonce, add, rm, c);
}

static int dl_end(struct sc_xl *xl, struct sc_obj *dir, struct sc_dl_change *c, int ret)
{
	if (c->e)
		sc_dl_end(dlists(xl), dir, c, ret == 0);
	return ret;
}

/* new_name for a call that adds the entry b to dir: its listing record first. */
static int new_entry(struct sc_xl *xl, struct sc_obj *dir, const char *name, struct bname *b)
{
	int ret = new_name(xl, dir, name, b);

	b->ch.e = NULL;
	if (ret == 0) {
		ret = dl_begin(xl, dir, b->name, NULL, &b->ch);
		if (ret < 0)
			new_name_done(xl, dir, b, ret);
	}
	return ret;
}

static int new_entry_done(struct sc_xl *xl, struct sc_obj *dir, struct bname *b, int ret)
{
	return new_name_done(xl, dir, b, dl_end(xl, dir, &b->ch, ret));
}

/* ---- symlink targets ------------------------------------------------------- */

/*
 * Bound targets (SC_FEAT_LINKS_BOUND, docs/format.md 9.5) open only at the
 * place they were sealed for: the link's directory nonce and encoded
 * name.  Only a lookup, symlink or link knows that place, so the target is
 * opened there and handed to names_adopt (t_link), and the inode keeps
 * the plaintext: readlink and stat read nothing below.  A target whose
 * stored form exceeds SC_LINK_ENC_MAX lives in a side file named after
 * the link's encoded name (lside_name), and the backing symlink holds a
 * marker, the hash of that file's contents.
 */
#define LSIDE_NAME_SIZE	(SC_NAME_LONG_LEN + sizeof(SC_LINK_SIDE_NEW))

/*
 * Integrity volumes: a new entry b in dir made below with the entry's
 * place handed down (the place of a symlink made there; the destination
 * of a rename, dest, which is how mkdir's new directory gets its name),
 * so that the data layer can remove a binding record a kill left at that
 * name (format.md 11.5).  Other volumes: the call alone.
 */
static int entry_placed(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b, bool dest,
			int (*make)(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b,
				    void *arg), void *arg)
{
	struct sc_xl_place p;
	int ret;

	if (!fplaces(xl))
		return make(xl, dir, b, arg);
	p = (struct sc_xl_place){ ns_get(xl, dir)->nonce, b->enc, b->enc_len, false };
	sc_xl_place_set(dest ? NULL : &p, dest ? &p : NULL);
	ret = make(xl, dir, b, arg);
	sc_xl_place_set(NULL, NULL);
	return ret;
}

/* mkdir's last step: the directory made under the temporary name arg renamed to b. */
static int rename_into_place(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b, void *arg)
{
	return sc_xl_rename(xl->below, dir, arg, dir, b->name, RENAME_NOREPLACE);
}

struct symlink_arg {
	const char	*target;
	int		*fd_out;
	struct stat	*st;
};

static int symlink_below(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b, void *arg)
{
	struct symlink_arg *a = arg;

	return sc_xl_symlink(xl->below, dir, b->name, a->target, a->fd_out, a->st);
}

static int symlink_placed(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b,
			  const char *target, int *fd_out, struct stat *st)
{
	struct symlink_arg a = { target, fd_out, st };

	return entry_placed(xl, dir, b, false, symlink_below, &a);
}

/* The side file (new: its replacement) of the long target of the link named enc.  0 or -EIO. */
static int lside_name(const char *enc, size_t enc_len, bool new, char *out)
{
	int ret = sc_name_long(enc, enc_len, out);

	if (ret == 0)
		strcpy(out + SC_NAME_LONG_LEN, new ? SC_LINK_SIDE_NEW : SC_LINK_SIDE_SUFFIX);
	return ret;
}

/*
 * dir holds (or held) a link with a long target: met by a lookup, made or
 * moved in.  The kernel unlinks or renames over only names it looked up
 * (or made) in this mount, so a directory never marked has no long link to
 * remove and its unlinks skip the side file's removal (no syscall added to
 * unlinks of regular files).  A miss could only leave an orphan side file,
 * which fsck reports and --repair removes; nothing is lost.
 */
static void mark_long(struct sc_xl *xl, struct sc_obj *dir)
{
	struct nstate *ns = dir ? ns_get(xl, dir) : NULL;

	if (ns && !__atomic_load_n(&ns->long_links, __ATOMIC_RELAXED))
		__atomic_store_n(&ns->long_links, 1, __ATOMIC_RELAXED);
}

static bool has_long(struct sc_xl *xl, struct sc_obj *dir)
{
	struct nstate *ns = ns_get(xl, dir);

	return ns && __atomic_load_n(&ns->long_links, __ATOMIC_RELAXED);
}

/* Removes the side file (or replacement) of b's long target from dir, if any. */
static void lside_remove(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b, bool new)
{
	char side[LSIDE_NAME_SIZE];
	int ret = lside_name(b->enc, b->enc_len, new, side);

	if (ret == 0)
		ret = sc_xl_unlink(xl->below, dir, side);
	if (ret < 0 && ret != -ENOENT)
		sc_log(SC_LOG_WARNING, "stackcrypt: names: directory %s: cannot "
		       "remove the side file of a removed long symlink target (%s); it stays "
		       "hidden (stackcrypt fsck)\n", sc_obj_name(xl->below, dir), strerror(-ret));
}

/*
 * The stored target of the backing symlink fd, at the place at in dir,
 * into enc (SC_LINK_BOUND_ENC_MAX + 2 bytes, NUL added): the backing
 * link's own target or, for a marker, its side file's contents, checked
 * against the marker.  Returns the length, -EBADMSG with why, or another
 * -errno of the layers below.
 */
static int link_stored(struct sc_xl *xl, struct sc_obj *dir, int fd,
		       const struct sc_dirplace *at, char *enc, const char **why)
{
	/* No layer below keeps state for readlink: a bare obj is enough. */
	struct sc_obj o = { .fd = fd, .type = S_IFLNK };
	char side[LSIDE_NAME_SIZE], mark[SC_LINK_MARK_LEN + 1], want[SC_LINK_MARK_LEN + 1];
	ssize_t n;
	int ret;

	*why = "has a target that does not decrypt (made behind the mount, or damaged)";
	n = sc_xl_readlink(xl->below, &o, enc, SC_LINK_ENC_MAX + 1);
	if (n < 0)
		return (int)n;
	if (n > SC_LINK_ENC_MAX)
		return -EBADMSG;
	enc[n] = '\0';
	if (!links_bound(xl) || !sc_link_is_mark(enc, (size_t)n))
		return (int)n;
	mark_long(xl, dir);
	memcpy(mark, enc, SC_LINK_MARK_LEN + 1);
	ret = lside_name(at->enc, at->enc_len, false, side);
	if (ret < 0)
		return ret;
	n = file_read(xl, dir, side, enc, SC_LINK_BOUND_ENC_MAX + 1);
	if (n == -ENOENT || n == -ERANGE || n == -EBADMSG) {
		*why = n == -ENOENT ? "has a long target whose side file is missing" :
		       "has a long target whose side file is unusable";
		return -EBADMSG;
	}
	if (n < 0)
		return (int)n;
	enc[n] = '\0';
	ret = sc_link_mark(enc, (size_t)n, want);
	if (ret < 0)
		return ret;
	if (strcmp(want, mark) != 0) {
		*why = "has a long target whose side file holds another target (a crash "
		       "during a rename, or edited)";
		return -EBADMSG;
	}
	return (int)n;
}

/*
 * The plaintext target of the backing symlink fd at the place at in dir
 * (at is only read on a volume with bound targets) into plain
 * (SC_LINK_BOUND_PLAIN_MAX + 1 bytes).  Returns its length, -EBADMSG with
 * why (not usable here), or another -errno.
 */
static int link_read(struct sc_xl *xl, struct sc_obj *dir, int fd, const struct sc_dirplace *at,
		     char *plain, const char **why)
{
	char *enc = malloc(SC_LINK_BOUND_ENC_MAX + 2);
	int n;

	if (enc == NULL)
		return -ENOMEM;
	n = link_stored(xl, dir, fd, at, enc, why);
	if (n >= 0 && !links_bound(xl))
		n = sc_link_decrypt(nkey(xl), enc, (size_t)n, plain);
	else if (n >= 0)
		n = sc_link_open(nkey(xl), enc, (size_t)n, at, plain);
	if (n == -ESTALE) {
		*why = "has a target bound to another entry (a crash during a rename, or a "
		       "copied target)";
		n = -EBADMSG;
	}
	free(enc);
	return n;
}

/*
 * Installs the symlink obj's state: its target (len bytes), or err (-EIO)
 * with why, logged by the thread that installs it (once per inode).
 * Returns the state installed, or NULL (no memory).
 */
static struct nstate *link_install(struct sc_xl *xl, struct sc_obj *obj, int err,
				   const char *plain, size_t len, const char *why, ino_t ino)
{
	struct nstate *ns = calloc(1, sizeof(*ns) + len + 1);

	if (!ns)
		return NULL;
	ns->err = err;
	ns->link_size = (off_t)len;
	memcpy(ns->target, plain, len);
	ns_install(xl, obj, &ns, "symlink", why, "readlink returns EIO", ino);
	return ns;
}

/* Remembers for names_adopt what this thread found of the symlink st (n: length or -EIO). */
static void link_seen_set(const struct sc_xl *xl, const struct stat *st, int n,
			  const char *plain, const char *why)
{
	t_link.serial = serial(xl);
	t_link.dev = st->st_dev;
	t_link.ino = st->st_ino;
	t_link.err = n < 0 ? -EIO : 0;
	t_link.why = why;
	t_link.len = n < 0 ? 0 : (size_t)n;
	memcpy(t_link.plain, plain, t_link.len);
}

/*
 * The symlink obj's state, read on first use if no lookup gave it one:
 * an unbound target needs no place; a bound one is refused (-EIO state).
 * 0 or -errno.
 */
static int link_state(struct sc_xl *xl, struct sc_obj *obj, struct nstate **out)
{
	static const char unchecked[] = "was reached by no lookup of the names layer: its "
					"bound target cannot be checked";
	char *plain;
	struct nstate *ns = ns_get(xl, obj);
	const char *why = unchecked;
	int n = -EBADMSG;

	if (ns) {
		*out = ns;
		return 0;
	}
	plain = malloc(SC_LINK_BOUND_PLAIN_MAX + 1);
	if (!plain)
		return -ENOMEM;
	if (!links_bound(xl))
		n = link_read(xl, NULL, obj->fd, NULL, plain, &why);
	if (n < 0 && n != -EBADMSG) {
		free(plain);
		return n;
	}
	ns = link_install(xl, obj, n < 0 ? -EIO : 0, plain, n < 0 ? 0 : (size_t)n, why, 0);
	sc_wipe(plain, SC_LINK_BOUND_PLAIN_MAX + 1);
	free(plain);
	if (!ns)
		return -ENOMEM;
	*out = ns;
	return 0;
}

/* st of the symlink obj with the plaintext target's size (left as stored if unknown). */
static void link_size(struct sc_xl *xl, struct sc_obj *obj, struct stat *st)
{
	struct nstate *ns;

	if (link_state(xl, obj, &ns) == 0 && ns->err == 0)
		st->st_size = ns->link_size;
}

/*
 * The symlink b (fd, st) in dir, just looked up: its target opened at its
 * place, for names_adopt (t_link), and its size in st.  0, or -errno of
 * reading it that says nothing about the target.
 */
static int link_seen(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b, int fd,
		     struct stat *st)
{
	struct sc_dirplace at = { ns_get(xl, dir)->nonce, b->enc, b->enc_len };
	const char *why = NULL;
	int n = link_read(xl, dir, fd, &at, t_link.plain, &why);

	if (n < 0 && n != -EBADMSG)
		return n;
	link_seen_set(xl, st, n, t_link.plain, why);
	if (n >= 0)
		st->st_size = n;
	return 0;
}

/*
 * Makes the backing symlink b in dir holding the bound stored target enc
 * (n bytes): itself, or a marker with the target in b's side file, which
 * is written and fsynced first (a stale one, left by a crash, replaced;
 * not when b exists: EEXIST) and removed if the symlink is not made.
 * Returns what sc_xl_symlink returned.
 */
static int link_create(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b,
		       const char *enc, int n, int *fd_out, struct stat *st)
{
	char side[LSIDE_NAME_SIZE], mark[SC_LINK_MARK_LEN + 1];
	int ret;

	if (n <= SC_LINK_ENC_MAX) {
		ret = symlink_placed(xl, dir, b, enc, fd_out, st);
		/* A backing filesystem with shorter targets (XFS: 1024 bytes): a side file. */
		if (ret != -ENAMETOOLONG)
			return ret;
	}
	mark_long(xl, dir);
	ret = lside_name(b->enc, b->enc_len, false, side);
	if (ret == 0)
		ret = sc_link_mark(enc, (size_t)n, mark);
	if (ret == 0)
		ret = file_write(xl, dir, side, SIDE_MODE, enc, (size_t)n);
	if (ret == -EEXIST) {
		ret = exists_below(xl, dir, b->name);
		if (ret == 0)
			ret = sc_xl_unlink(xl->below, dir, side);
		if (ret == 0)
			ret = file_write(xl, dir, side, SIDE_MODE, enc, (size_t)n);
		else if (ret > 0)
			return -EEXIST;
	}
	if (ret < 0)
		return ret;
	ret = symlink_placed(xl, dir, b, mark, fd_out, st);
	if (ret < 0)
		sc_xl_unlink(xl->below, dir, side);
	return ret;
}

/* ---- operations ------------------------------------------------------------ */

/*
 * The root's nonce record: read and checked, or made if missing and the
 * root holds no names (XATTR_CREATE, or the nonce file O_EXCL; if another
 * process made one meanwhile, that one is read).  A root that holds names
 * without a record fails the mount in one line naming the record: a new
 * nonce would hide every name in it.  A root that cannot have one
 * (read-only backing) fails it too.  File form: a damaged one is replaced
 * if the root holds no names (a crash between the nonce file's create and
 * write).
 */
static int names_init(struct sc_xl *xl, struct sc_obj *root, struct sc_xl_conf *conf)
{
	static const struct sc_dirplace at = { 0 };
	const char *rec_name = portable(xl) ? SC_DIRNONCE_FILE : SC_DIRNONCE_XATTR;
	uint8_t rec[SC_DIRNONCE_REC_MAX + 1], nonce[SC_DIRNONCE_LEN];
	struct names_priv *np = xl->priv;
	const char *why = NULL;
	struct nstate *ns;
	enum rec_src src = REC_FILE;
	ssize_t n;
	int ret;

	(void)conf;
	np->mirror = portable(xl) && sc_xl_meta_ordered(xl->below, root);
	for (int tries = 0; tries < 2; tries++) {
		n = rec_read_from(xl, root, rec, &src, false);
		if (n != -ENODATA)
			break;
		ret = holds_no_names(xl, root);
		if (ret == 0) {
			sc_log(SC_LOG_ERR, "stackcrypt: names: the backing root holds names but "
			       "not its name nonce record (%s): a new one would hide them all; "
			       "restore it from a backup\n", rec_name);
			return -EIO;
		}
		if (ret > 0)
			ret = sc_random(nonce, sizeof(nonce));
		if (ret == 0)
			ret = sc_dirnonce_seal(nkey(xl), nonce, &at, NULL, rec);
		if (ret < 0)
			return ret;
		ret = rec_create(xl, root, rec, (size_t)ret);
		if (ret == -EEXIST)
			continue;
		if (ret < 0) {
			sc_log(SC_LOG_ERR, "stackcrypt: names: cannot store the backing root's name "
			       "nonce (%s: %s): the first mount of a volume with encrypted names "
			       "must be able to write its root\n", rec_name, strerror(-ret));
			return ret;
		}
		n = SC_DIRNONCE_REC2_LEN;
		break;
	}
	ret = rec_judge(xl, rec, n, &at, nonce, &why);
	if (ret == 0 && src == REC_COPY_ONLY)
		rec_restore(xl, root, rec, (size_t)n);
	if (ret == -EIO && portable(xl)) {
		n = rec_heal(xl, root, &at, rec, n);
		ret = rec_judge(xl, rec, n, &at, nonce, &why);
	}
	free(root->priv[xl->id]);	/* a stack initialised twice over one root */
	root->priv[xl->id] = NULL;
	if (ret < 0 && ret != -EIO) {
		sc_log(SC_LOG_ERR, "stackcrypt: names: cannot read the backing root's name nonce "
		       "(%s)\n", strerror(-ret));
		return ret;
	}
	ret = nonce_state(xl, root, ret, nonce, why, NULL, 0, &ns);
	if (ret < 0)
		return ret;
	return ns->err;		/* -EIO: logged by nonce_state */
}

static void names_destroy(struct sc_xl *xl)
{
	struct names_priv *np = xl->priv;

	if (np) {
		sc_dlists_free(np->dl);	/* its files closed through the layers below */
		sc_nkey_free(np->nk);
		sc_fplaces_free(np->fp);
		pthread_mutex_destroy(&np->heal_lock);
		pthread_mutex_destroy(&np->pend_lock);
	}
	free(np);
	xl->priv = NULL;
}

/*
 * A new inode: a directory that this thread's lookup or mkdir just handed
 * up gets the state they found at its place (t_seen), logged here if its
 * record is not usable; a symlink that a lookup, symlink or link handed up
 * gets its target (t_link) likewise.  No I/O: the front end holds its table lock.
 */
static void names_adopt(struct sc_xl *xl, struct sc_obj *obj, const struct stat *st)
{
	struct nstate *ns;

	if (fplaces(xl) && S_ISREG(st->st_mode)) {
		sc_fplace_adopt(fplaces(xl), obj, xl->id, st);
		return;
	}
	if (S_ISLNK(st->st_mode) && t_link.serial == serial(xl) && t_link.dev == st->st_dev &&
	    t_link.ino == st->st_ino) {
		t_link.serial = 0;
		free(obj->priv[xl->id]);
		obj->priv[xl->id] = NULL;
		link_install(xl, obj, t_link.err, t_link.plain, t_link.len, t_link.why,
			     st->st_ino);
		sc_wipe(t_link.plain, t_link.len);	/* targets are as secret as names */
		return;
	}
	if (!S_ISDIR(st->st_mode) || t_seen.serial != serial(xl) || t_seen.dev != st->st_dev ||
	    t_seen.ino != st->st_ino)
		return;
	t_seen.serial = 0;
	if (obj->priv[xl->id])	/* never set before adopt; a test may adopt twice */
		free(((struct nstate *)obj->priv[xl->id])->pend);
	free(obj->priv[xl->id]);
	obj->priv[xl->id] = NULL;
	nonce_state(xl, obj, t_seen.err, t_seen.nonce, t_seen.why, &t_seen.pend, st->st_ino, &ns);
}

static void names_forget(struct sc_xl *xl, struct sc_obj *obj)
{
	struct nstate *ns = obj->priv[xl->id];

	if (fplaces(xl) && S_ISREG(obj->type)) {
		sc_fplace_forget(fplaces(xl), obj, xl->id);
		return;
	}

	if (ns && S_ISLNK(obj->type))
		sc_wipe(ns->target, (size_t)ns->link_size);
	if (ns && S_ISDIR(obj->type))
		free(ns->pend);
	free(obj->priv[xl->id]);
	obj->priv[xl->id] = NULL;
}

/*
 * The directory b (O_PATH fd, st) in dir, just looked up: its record
 * read and checked at its place, for names_adopt (t_seen).  Only a new
 * inode takes the result: one the front end already holds keeps the
 * state of its first lookup, and no layer knows which inodes those are,
 * so every lookup of a directory reads its record (docs/security.md
 * 3.3.1 says what that leaves undetected while a mount runs).
 * 0, or -errno of reading it that says nothing about the record.
 */
static int child_seen(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b, int fd,
		      const struct stat *st)
{
	/* No layer below keeps state for a directory's xattrs or lookups: a bare obj is enough. */
	struct sc_obj c = { .fd = fd, .type = S_IFDIR };
	struct sc_dirplace at = { ns_get(xl, dir)->nonce, b->enc, b->enc_len };
	uint8_t nonce[SC_DIRNONCE_LEN];
	const char *why = NULL;
	int ret = dir_load(xl, &c, &at, nonce, &why);

	if (ret < 0 && ret != -EIO && ret != -EACCES)
		return ret;
	seen_set(xl, st, ret, nonce, why, &at);
	return 0;
}

/*
 * Integrity volumes: the place of the entry b in dir (in *at), set for the
 * call below that makes a regular file there, or looks the name up.
 */
static void place_new(struct sc_xl *xl, struct sc_obj *dir, const struct bname *b,
		      struct sc_xl_place *at)
{
	*at = (struct sc_xl_place){ ns_get(xl, dir)->nonce, b->enc, b->enc_len, false };
	sc_xl_place_set(at, NULL);
}

static int names_lookup(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			int *fd_out, struct stat *st)
{
	struct sc_xl_place at;
	struct bname b;
	int ret;

	ret = to_backing(xl, dir, name, &b);
	if (ret < 0)
		return ret;
	/*
	 * Integrity volumes: the name's place for the lookup below too, where
	 * the data layer refuses a name linked behind the mount to another
	 * entry's file (gcm_lookup): at the open, which carries no name, the
	 * refusal would hit the file's own name as well.
	 */
	if (fplaces(xl))
		place_new(xl, dir, &b, &at);
	ret = sc_xl_lookup(xl->below, dir, b.name, fd_out, st);
	if (fplaces(xl))
		sc_xl_place_set(NULL, NULL);
	if (ret == 0 && fplaces(xl) && S_ISREG(st->st_mode))
		sc_fplace_seen(fplaces(xl), st, ns_get(xl, dir)->nonce, b.enc, b.enc_len);
	if (ret == 0 && (S_ISDIR(st->st_mode) || S_ISLNK(st->st_mode))) {
		ret = S_ISDIR(st->st_mode) ? child_seen(xl, dir, &b, *fd_out, st) :
		      link_seen(xl, dir, &b, *fd_out, st);
		if (ret < 0) {
			sc_xl_drop_fd(xl->below, *fd_out);
			*fd_out = -1;
		}
	}
	return ret;
}

/*
 * Integrity volumes: sets this thread's place (sc_xl_place_set) to the
 * regular file obj's, for the call below.  One the table does not know
 * (its adopt ran out of memory) gets an empty place, which the data layer
 * refuses: never a file accepted unchecked.
 */
static void place_of(struct sc_xl *xl, const struct sc_obj *obj, struct sc_fplace_copy *c)
{
	if (sc_fplace_get(fplaces(xl), obj, xl->id, c) < 0)
		c->p = (struct sc_xl_place){ .nonce = NULL, .enc = "", .enc_len = 0 };
	sc_xl_place_set(&c->p, NULL);
}

/* Integrity volumes only (integ_ops): the file's place for the data layer's checks. */
static int names_open(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	struct sc_fplace_copy c;
	int ret;

	if (!S_ISREG(obj->type))
		return sc_xl_open(xl->below, obj, fh);
	place_of(xl, obj, &c);
	ret = sc_xl_open(xl->below, obj, fh);
	sc_xl_place_set(NULL, NULL);
	return ret;
}

/* Symlinks: the plaintext target's size.  Everything else passes. */
static int names_getattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 struct stat *st)
{
	int ret = sc_xl_getattr(xl->below, obj, fh, st);

	if (ret == 0 && S_ISLNK(obj->type))
		link_size(xl, obj, st);
	return ret;
}

/* As getattr: the reply of a setattr of a symlink (lchown, utimensat) carries its size too. */
static int names_setattr(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
			 const struct stat *attr, int valid, struct stat *st)
{
	struct sc_fplace_copy c;
	int ret;

	/* integrity volumes: a new size may renew the header, bound at the file's place */
	if (fplaces(xl) && S_ISREG(obj->type) && (valid & SC_SET_SIZE)) {
		place_of(xl, obj, &c);
		ret = sc_xl_setattr(xl->below, obj, fh, attr, valid, st);
		sc_xl_place_set(NULL, NULL);
		return ret;
	}
	ret = sc_xl_setattr(xl->below, obj, fh, attr, valid, st);

	if (ret == 0 && S_ISLNK(obj->type))
		link_size(xl, obj, st);
	return ret;
}

/* ... and after it (ret: its result): the file st is remembered at its place for adopt. */
static int place_made(struct sc_xl *xl, const struct sc_xl_place *at, const struct stat *st,
		      int ret)
{
	sc_xl_place_set(NULL, NULL);
	if (ret == 0)
		sc_fplace_seen(fplaces(xl), st, at->nonce, at->enc, at->enc_len);
	return ret;
}

static int names_mknod(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       mode_t mode, dev_t rdev, int *fd_out, struct stat *st)
{
	struct sc_xl_place at;
	struct bname b;
	int ret;

	ret = new_entry(xl, dir, name, &b);
	if (ret < 0)
		return ret;
	if (!fplaces(xl) || !S_ISREG(mode))
		return new_entry_done(xl, dir, &b, sc_xl_mknod(xl->below, dir, b.name, mode, rdev,
								fd_out, st));
	place_new(xl, dir, &b, &at);
	ret = sc_xl_mknod(xl->below, dir, b.name, mode, rdev, fd_out, st);
	return new_entry_done(xl, dir, &b, place_made(xl, &at, st, ret));
}

/* SC_NAME_TMP_PREFIX and 32 random lower-case hex digits. */
static int tmp_name(char out[TMP_NAME_SIZE])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t rnd[16];
	size_t p = sizeof(SC_NAME_TMP_PREFIX) - 1;
	int ret;

	ret = sc_random(rnd, sizeof(rnd));
	if (ret < 0)
		return ret;
	memcpy(out, SC_NAME_TMP_PREFIX, p);
	for (size_t i = 0; i < sizeof(rnd); i++) {
		out[p++] = hex[rnd[i] >> 4];
		out[p++] = hex[rnd[i] & 15];
	}
	out[p] = '\0';
	return 0;
}

/*
 * mkdir, crash-safe (top of file): made below under a temporary name, with
 * owner write and search added if the mode lacks them (a user.* attribute
 * needs write permission on the inode, a nonce file write and search
 * permission on the directory, and the caller's credentials are the ones
 * in force; a default ACL that denies the owner write is met by
 * a chmod, as the crypt layer's create does), given its nonce, its mode
 * put back, then renamed to its name with RENAME_NOREPLACE.  The mode put
 * back is the one the backing mkdir made minus the added bits, which is
 * what mkdir with the caller's mode makes (umask and default ACLs were
 * applied to both).  One exception, as chmod(2) has it: in a setgid
 * directory whose group the caller is not in, a directory made without
 * owner write or search loses the inherited setgid bit.  On failure the
 * temporary directory is removed.
 */
static int names_mkdir(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		       mode_t mode, int *fd_out, struct stat *st)
{
	const mode_t need = S_IWUSR | S_IXUSR, add = need & ~mode;
	struct sc_obj nd = { .type = S_IFDIR };
	uint8_t rec[SC_DIRNONCE_REC2_LEN], nonce[SC_DIRNONCE_LEN];
	struct sc_dirplace at;
	char tmp[TMP_NAME_SIZE];
	struct stat attr;
	struct bname b;
	mode_t want;
	int ret, len;

	ret = sc_random(nonce, sizeof(nonce));
	if (ret == 0)
		ret = tmp_name(tmp);
	if (ret == 0)
		ret = new_entry(xl, dir, name, &b);
	if (ret < 0)
		return ret;
	/* Bound to the place the rename below gives it, not to the temporary name. */
	at = (struct sc_dirplace){ ns_get(xl, dir)->nonce, b.enc, b.enc_len };
	len = sc_dirnonce_seal(nkey(xl), nonce, &at, NULL, rec);
	if (len < 0) {
		ret = len;
		goto err_side;
	}
	ret = sc_xl_mkdir(xl->below, dir, tmp, mode | add, fd_out, st);
	if (ret < 0)
		goto err_side;
	/* The new directory holds nothing below us yet: a bare obj on its fd is enough. */
	nd.fd = *fd_out;
	want = st->st_mode & 07777 & ~add;
	if ((st->st_mode & need) != need) {
		attr.st_mode = (st->st_mode & 07777) | need;
		ret = sc_xl_setattr(xl->below, &nd, NULL, &attr, SC_SET_MODE, st);
		if (ret < 0)
			goto err_rmdir;
	}
	ret = rec_create(xl, &nd, rec, (size_t)len);
	if (ret < 0)
		goto err_rmdir;
	if ((st->st_mode & 07777) != want) {
		attr.st_mode = want;
		ret = sc_xl_setattr(xl->below, &nd, NULL, &attr, SC_SET_MODE, st);
		if (ret < 0)
			goto err_rmdir;
	}
	ret = entry_placed(xl, dir, &b, true, rename_into_place, tmp);
	if (ret < 0)
		goto err_rmdir;
	/* The rename moved its ctime; the attributes before it are the fallback. */
	sc_xl_getattr(xl->below, &nd, NULL, st);
	seen_set(xl, st, 0, nonce, NULL, NULL);
	return new_entry_done(xl, dir, &b, 0);

err_rmdir:
	if (portable(xl)) {
		/* Its nonce file first (owner write and search back for that, if put back). */
		if ((st->st_mode & need) != need) {
			attr.st_mode = (st->st_mode & 07777) | need;
			sc_xl_setattr(xl->below, &nd, NULL, &attr, SC_SET_MODE, st);
		}
		sc_xl_unlink(xl->below, &nd, SC_DIRNONCE_FILE);
	}
	sc_xl_drop_fd(xl->below, *fd_out);
	*fd_out = -1;
	if (sc_xl_rmdir(xl->below, dir, tmp) < 0)
		sc_log(SC_LOG_WARNING, "stackcrypt: names: directory %s: cannot "
		       "remove the unfinished directory %s; it stays hidden (stackcrypt fsck "
		       "--repair removes it)\n", sc_obj_name(xl->below, dir), tmp);
err_side:
	return new_entry_done(xl, dir, &b, ret);
}

/*
 * A bound target for the new symlink name in dir (bound volumes): sealed
 * for its place and made by link_create, its target remembered for
 * names_adopt.  Returns what link_create returned, -ENAMETOOLONG, or the
 * error of new_name.
 */
static int link_make(struct sc_xl *xl, struct sc_obj *dir, const char *name,
		     const char *target, size_t tlen, int *fd_out, struct stat *st)
{
	char *enc = malloc(SC_LINK_BOUND_ENC_MAX + 1);
	struct sc_dirplace at;
	struct bname b;
	int n, ret;

	if (!enc)
		return -ENOMEM;
	ret = new_entry(xl, dir, name, &b);
	if (ret < 0)
		goto out_free;
	at = (struct sc_dirplace){ ns_get(xl, dir)->nonce, b.enc, b.enc_len };
	n = sc_link_seal(nkey(xl), target, tlen, &at, enc);
	ret = n < 0 ? n : link_create(xl, dir, &b, enc, n, fd_out, st);
	ret = new_entry_done(xl, dir, &b, ret);
	if (ret == 0) {
		st->st_size = (off_t)tlen;
		link_seen_set(xl, st, (int)tlen, target, NULL);
	}
out_free:
	free(enc);
	return ret;
}

/* The target is stored encrypted; the stat handed up has the plaintext size. */
static int names_symlink(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			 const char *target, int *fd_out, struct stat *st)
{
	char enc[SC_LINK_ENC_MAX + 1];
	size_t tlen = strlen(target);
	struct bname b;
	int ret;

	if (links_bound(xl))
		return link_make(xl, dir, name, target, tlen, fd_out, st);
	ret = sc_link_encrypt(nkey(xl), target, tlen, enc);
	if (ret >= 0)
		ret = new_entry(xl, dir, name, &b);
	if (ret < 0)
		return ret;
	ret = new_entry_done(xl, dir, &b, sc_xl_symlink(xl->below, dir, b.name, enc, fd_out, st));
	if (ret == 0)
		st->st_size = (off_t)tlen;
	return ret;
}

/*
 * Integrity volumes: the backing link of the regular file obj, told the
 * place it is known at and the new one b in newdir, where the data layer
 * below writes the binding records that let one file have several names
 * (format.md 11.5).
 */
static int link_placed(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		       const struct bname *b, struct stat *st)
{
	struct sc_xl_place to = { ns_get(xl, newdir)->nonce, b->enc, b->enc_len, false };
	struct sc_fplace_copy c;
	int ret;

	place_of(xl, obj, &c);
	sc_xl_place_set(&c.p, &to);
	ret = sc_xl_link(xl->below, obj, newdir, b->name, st);
	sc_xl_place_set(NULL, NULL);
	return ret;
}

/*
 * link(2).  A bound symlink cannot have two names (its target opens at
 * one place), so linking one makes an independent copy, a new symlink
 * with the same target bound to the new name (docs/format.md 9.5 says
 * why); the reply carries the source's attributes, as a link's does.
 */
static int names_link(struct sc_xl *xl, struct sc_obj *obj, struct sc_obj *newdir,
		      const char *newname, struct stat *st)
{
	struct nstate *ns;
	struct stat cst;
	struct bname b;
	int fd, ret;

	if (links_bound(xl) && S_ISLNK(obj->type)) {
		ret = link_state(xl, obj, &ns);
		if (ret == 0 && ns->err)
			ret = ns->err;
		if (ret == 0)
			ret = link_make(xl, newdir, newname, ns->target, (size_t)ns->link_size,
					&fd, &cst);
		if (ret < 0)
			return ret;
		t_link.serial = 0;	/* not adopted: the front end replies with obj */
		sc_wipe(t_link.plain, t_link.len);
		/* The copy takes the source's owner and times, as a second name would. */
		if (sc_xl_getattr(xl->below, obj, NULL, st) == 0) {
			struct sc_obj o = { .fd = fd, .type = S_IFLNK };
			struct stat attr = *st;

			sc_xl_setattr(xl->below, &o, NULL, &attr, SC_SET_UID | SC_SET_GID, &cst);
			sc_xl_setattr(xl->below, &o, NULL, &attr, SC_SET_ATIME | SC_SET_MTIME,
				      &cst);
		}
		sc_xl_drop_fd(xl->below, fd);
		ret = sc_xl_getattr(xl->below, obj, NULL, st);
		if (ret == 0)
			st->st_size = ns->link_size;
		return ret;
	}
	ret = new_entry(xl, newdir, newname, &b);
	if (ret < 0)
		return ret;
	if (fplaces(xl) && S_ISREG(obj->type))
		ret = link_placed(xl, obj, newdir, &b, st);
	else
		ret = sc_xl_link(xl->below, obj, newdir, b.name, st);
	ret = new_entry_done(xl, newdir, &b, ret);
	if (ret == 0 && S_ISLNK(obj->type))
		link_size(xl, obj, st);
	return ret;
}

/*
 * unlink and rmdir: the entry goes, then its side file if the name was
 * long.  File form: rmdir removes the directory's nonce file first, if it
 * holds no names (vacate; put back if the rmdir fails).
 */
static int remove_name(struct sc_xl *xl, struct sc_obj *dir, const char *name, bool is_dir)
{
	struct sc_dirplace at_b;
	struct vacated v;
	struct bname b;
	int ret;

	ret = to_backing(xl, dir, name, &b);
	if (ret == 0)
		ret = dl_begin(xl, dir, NULL, b.name, &b.ch);
	if (ret < 0)
		return ret;
	at_b = (struct sc_dirplace){ ns_get(xl, dir)->nonce, b.enc, b.enc_len };
	if (!is_dir && fplaces(xl)) {	/* the entry's binding record goes with it (11.5) */
		struct sc_xl_place at;

		place_new(xl, dir, &b, &at);
		ret = sc_xl_unlink(xl->below, dir, b.name);
		sc_xl_place_set(NULL, NULL);
	} else if (!is_dir)
		ret = sc_xl_unlink(xl->below, dir, b.name);
	else if ((ret = vacate(xl, dir, b.name, &at_b, 0, &v)) == 0) {
		v.parent = dir;
		v.name = name;
		ret = sc_xl_rmdir(xl->below, dir, b.name);
		vacate_done(xl, &v, ret < 0);
	}
	dl_end(xl, dir, &b.ch, ret);
	if (ret == 0)
		side_remove(xl, dir, &b);
	/* A long target's side file goes after its link (no lookup first: unlinks stay cheap). */
	if (ret == 0 && !is_dir && links_bound(xl) && has_long(xl, dir))
		lside_remove(xl, dir, &b, false);
	return ret;
}

static int names_unlink(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	return remove_name(xl, dir, name, false);
}

static int names_rmdir(struct sc_xl *xl, struct sc_obj *dir, const char *name)
{
	return remove_name(xl, dir, name, true);
}

/*
 * A directory a rename moves (docs/format.md 9.2): its record is bound to
 * its place, so the move rewrites it, each step in one piece
 * (rec_replace): before the rename, with the tags of both places, so a
 * crash on either side of the rename leaves a record that opens where the
 * directory is; after it, with the new place's tag alone (the old record
 * back if the rename failed).  A version 1 record is rewritten as version
 * 2 alike.
 */
struct moving {
	struct sc_obj		d;	/* bare obj on it; fd -1: not a directory, nothing to do */
	struct sc_obj		*parent;	/* for messages: it is name in parent */
	const char		*name;
	ino_t			ino;
	/* the inode of a regular file it moves (dev 0: none), for place_moved */
	dev_t			reg_dev;
	ino_t			reg_ino;
	struct sc_dirplace	to;
	uint8_t			nonce[SC_DIRNONCE_LEN];
	size_t			old_len;
	uint8_t			old[SC_DIRNONCE_REC_MAX + 1];
};

/*
 * A bound symlink a rename moves (docs/format.md 9.5): its target opens
 * only at its old place, so after the backing rename (which keeps
 * rename(2) atomic) it is rewritten for the new one: a new symlink made
 * under a temporary name beside it and renamed over it, so the name never
 * lacks a link.  A long target's new side file is written (and fsynced)
 * under its replacement name before the rename, and renamed into place
 * after it.  A crash in between leaves a link bound to its old entry,
 * which readlink refuses (EIO) and fsck --repair rebinds.
 */
struct relink {
	struct sc_obj		*dir;	/* where it lands; NULL: no bound symlink moves */
	const struct bname	*to;
	char			*enc;	/* its new stored target */
	int			n;
	bool			is_long;
	struct stat		st;	/* the link's: owner and times go to its new backing link */
};

/*
 * The symlink fd at the place from is to move to the place to (in newdir,
 * backing name to): its target opened at from and sealed for to, a long
 * one's new side file written.  0, -EIO (its target does not open at
 * from: logged, not moved), or -errno.
 */
static int relink_begin(struct sc_xl *xl, struct sc_obj *dir, int fd,
			const struct sc_dirplace *from, struct sc_obj *newdir,
			const struct bname *to, const struct sc_dirplace *at_to, struct relink *r)
{
	char *plain = malloc(SC_LINK_BOUND_PLAIN_MAX + 1), side[LSIDE_NAME_SIZE];
	const char *why = NULL;
	int n, ret;

	r->enc = malloc(SC_LINK_BOUND_ENC_MAX + 2);
	if (!plain || !r->enc) {
		ret = -ENOMEM;
		goto out_free;
	}
	n = link_read(xl, dir, fd, from, plain, &why);
	if (n == -EBADMSG) {
		sc_log(SC_LOG_ERR, "stackcrypt: names: a symlink in directory %s "
		       "%s; it is not moved (stackcrypt fsck)\n", sc_obj_name(xl->below, dir), why);
		n = -EIO;
	}
	ret = n < 0 ? n : sc_link_seal(nkey(xl), plain, (size_t)n, at_to, r->enc);
	if (ret < 0)
		goto out_free;
	r->n = ret;
	r->is_long = ret > SC_LINK_ENC_MAX;
	ret = 0;
	if (r->is_long) {
		mark_long(xl, newdir);
		ret = lside_name(to->enc, to->enc_len, true, side);
		if (ret == 0)
			ret = file_write(xl, newdir, side, SIDE_MODE, r->enc, (size_t)r->n);
		if (ret == -EEXIST) {	/* a crash's leftover: nothing uses it */
			ret = sc_xl_unlink(xl->below, newdir, side);
			if (ret == 0)
				ret = file_write(xl, newdir, side, SIDE_MODE, r->enc, (size_t)r->n);
		}
	}
	if (ret == 0) {
		r->dir = newdir;
		r->to = to;
	}
out_free:
	if (plain)
		sc_wipe(plain, SC_LINK_BOUND_PLAIN_MAX + 1);
	free(plain);
	if (ret < 0) {
		free(r->enc);
		r->enc = NULL;
	}
	return ret;
}

/*
 * A stored target that fits a symlink but not this backing filesystem's
 * (XFS: 1024 bytes): written to the side file of r's new place, which
 * nothing uses (the link there now is the moved one, holding its old
 * target itself), and its marker into mark.  0 or -errno.
 */
static int relink_to_side(struct sc_xl *xl, struct relink *r, char *mark)
{
	char side[LSIDE_NAME_SIZE];
	int ret = lside_name(r->to->enc, r->to->enc_len, false, side);

	if (ret == 0)
		ret = sc_xl_unlink(xl->below, r->dir, side);
	if (ret == 0 || ret == -ENOENT)
		ret = file_write(xl, r->dir, side, SIDE_MODE, r->enc, (size_t)r->n);
	if (ret == 0)
		ret = sc_link_mark(r->enc, (size_t)r->n, mark);
	if (ret == 0) {
		mark_long(xl, r->dir);
		r->is_long = true;
	}
	return ret;
}

/* After the rename relink_begin prepared (failed: it did not happen).  r->dir stays set. */
static void relink_end(struct sc_xl *xl, struct relink *r, bool failed)
{
	char side[LSIDE_NAME_SIZE], mark[SC_LINK_MARK_LEN + 1], tmp[TMP_NAME_SIZE];
	struct stat st;
	int fd, ret = 0;

	if (!r->dir)
		goto out_free;
	if (failed) {
		if (r->is_long)
			lside_remove(xl, r->dir, r->to, true);
		goto out_free;
	}
	if (r->is_long) {
		char side_new[LSIDE_NAME_SIZE];

		ret = lside_name(r->to->enc, r->to->enc_len, false, side);
		if (ret == 0)
			ret = lside_name(r->to->enc, r->to->enc_len, true, side_new);
		if (ret == 0)
			ret = sc_link_mark(r->enc, (size_t)r->n, mark);
		if (ret == 0)
			ret = sc_xl_rename(xl->below, r->dir, side_new, r->dir, side, 0);
	}
	if (ret == 0)
		ret = tmp_name(tmp);
	if (ret == 0)
		ret = sc_xl_symlink(xl->below, r->dir, tmp, r->is_long ? mark : r->enc, &fd, &st);
	if (ret == -ENAMETOOLONG && !r->is_long) {
		ret = relink_to_side(xl, r, mark);
		if (ret == 0)
			ret = sc_xl_symlink(xl->below, r->dir, tmp, mark, &fd, &st);
	}
	if (ret == 0) {
		/*
		 * The new backing link takes the old one's owner and times, as a
		 * rename keeps them (ctime moves, as a rename's does).  Not the
		 * owner's: a caller who may not chown keeps the link as its own.
		 */
		struct sc_obj o = { .fd = fd, .type = S_IFLNK };
		struct stat attr = r->st, got;

		if (sc_xl_setattr(xl->below, &o, NULL, &attr, SC_SET_UID | SC_SET_GID, &got) < 0)
			sc_log(SC_LOG_WARNING, "stackcrypt: names: directory %s: "
			       "a renamed symlink, rebound, cannot keep its owner (it is the "
			       "caller's)\n", sc_obj_name(xl->below, r->dir));
		sc_xl_setattr(xl->below, &o, NULL, &attr, SC_SET_ATIME | SC_SET_MTIME, &got);
		sc_xl_drop_fd(xl->below, fd);
		ret = sc_xl_rename(xl->below, r->dir, tmp, r->dir, r->to->name, 0);
		if (ret < 0)
			sc_xl_unlink(xl->below, r->dir, tmp);
	}
	if (ret < 0)
		sc_log(SC_LOG_ERR, "stackcrypt: names: directory %s: cannot "
		       "rebind a renamed symlink to its new name (%s); it stays bound to its "
		       "old one and reads as EIO (stackcrypt fsck --repair rebinds it)\n",
		       sc_obj_name(xl->below, r->dir), strerror(-ret));
out_free:
	free(r->enc);
	r->enc = NULL;
}

/*
 * The backing name bname in dir, at the place from, is to move to the
 * place to: if it is a directory, its record is checked at from and
 * rewritten for both places (m->d.fd >= 0 then, for move_end); if it is a
 * bound symlink, relink_begin prepares r (newdir, to_b: where it lands).
 * 0 (also when it is neither or cannot be looked up: the rename below
 * answers), -EIO (its record or target does not open at from: logged; it
 * is not moved), or -errno.
 */
static int move_begin(struct sc_xl *xl, struct sc_obj *dir, const char *bname,
		      const struct sc_dirplace *from, const struct sc_dirplace *to,
		      struct moving *m, struct sc_obj *newdir, const struct bname *to_b,
		      struct relink *r)
{
	uint8_t rec[SC_DIRNONCE_REC_MAX];
	const char *why = NULL;
	enum rec_src src;
	struct stat st;
	ssize_t n;
	int fd, ret;

	m->d.fd = -1;
	m->ino = 0;
	m->reg_dev = 0;
	if (sc_xl_lookup(xl->below, dir, bname, &fd, &st) < 0)
		return 0;
	if (S_ISREG(st.st_mode)) {
		m->reg_dev = st.st_dev;
		m->reg_ino = st.st_ino;
	}
	if (S_ISLNK(st.st_mode) && links_bound(xl)) {
		r->st = st;
		ret = relink_begin(xl, dir, fd, from, newdir, to_b, to, r);
		sc_xl_drop_fd(xl->below, fd);
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		sc_xl_drop_fd(xl->below, fd);
		return 0;
	}
	m->d = (struct sc_obj){ .fd = fd, .type = S_IFDIR };
	ret = rec_load(xl, &m->d, from, m->old, &n, m->nonce, &why, &src);
	if (ret == -EIO)
		sc_log(SC_LOG_ERR, "stackcrypt: names: directory %s %s; it is "
		       "not moved (stackcrypt fsck)\n",
		       sc_obj_child_name(m->parent, m->name, (unsigned long long)st.st_ino), why);
	if (ret == 0) {
		m->old_len = (size_t)n;
		m->to = *to;
		ret = sc_dirnonce_seal(nkey(xl), m->nonce, to, from, rec);
		if (ret > 0)
			ret = rec_replace(xl, &m->d, rec, (size_t)ret);
	}
	if (ret < 0) {
		sc_xl_drop_fd(xl->below, fd);
		m->d.fd = -1;
		return ret;
	}
	m->ino = st.st_ino;
	return 0;
}

/* After the rename move_begin prepared (failed: it did not happen). */
static void move_end(struct sc_xl *xl, struct moving *m, bool failed)
{
	uint8_t rec[SC_DIRNONCE_REC2_LEN];
	int ret;

	if (m->d.fd < 0)
		return;
	if (failed) {
		ret = rec_replace(xl, &m->d, m->old, m->old_len);
	} else {
		ret = sc_dirnonce_seal(nkey(xl), m->nonce, &m->to, NULL, rec);
		if (ret > 0)
			ret = rec_replace(xl, &m->d, rec, (size_t)ret);
	}
	/* The record with both tags stays: it opens where the directory is. */
	if (ret < 0)
		sc_log(SC_LOG_WARNING, "stackcrypt: names: directory %s: cannot "
		       "rewrite its nonce record after a rename (%s); it keeps the tags of "
		       "both places until its next rename\n", sc_obj_child_name(m->parent,
		       m->name, (unsigned long long)m->ino), strerror(-ret));
	sc_xl_drop_fd(xl->below, m->d.fd);
	m->d.fd = -1;
}

/*
 * After a rename (failed: it did not happen) on a volume with bound
 * targets: the moved links rebound (relink_end), then the side files of
 * long targets that no name uses any more removed: the source's (when it
 * moved away and no long target came back in its place) and, when an
 * entry without one replaced a long link, the destination's.
 */
static void relinks_end(struct sc_xl *xl, struct sc_obj *dir, const struct bname *from,
			struct sc_obj *newdir, const struct bname *to, unsigned int flags,
			struct relink *rsrc, struct relink *rdst, bool failed)
{
	bool src_long, dst_long;

	relink_end(xl, rsrc, failed);
	relink_end(xl, rdst, failed);
	src_long = rsrc->dir && rsrc->is_long;	/* relink_end may have made it long */
	dst_long = rdst->dir && rdst->is_long;
	rsrc->dir = rdst->dir = NULL;
	if (failed || !links_bound(xl))
		return;
	if (flags & RENAME_EXCHANGE) {
		if (src_long && !dst_long)
			lside_remove(xl, dir, from, false);
		if (dst_long && !src_long)
			lside_remove(xl, newdir, to, false);
		return;
	}
	if (!src_long && has_long(xl, newdir))
		lside_remove(xl, newdir, to, false);	/* a long link replaced, if any */
	if (src_long && exists_below(xl, dir, from->name) == 0)
		lside_remove(xl, dir, from, false);
}

/*
 * The regular file m found (move_begin) was moved to the place at: its
 * entry in the place table follows (integrity volumes).  The inode, not
 * the name, is what moved: no lookup after the rename.
 */
static void place_moved(struct sc_xl *xl, const struct moving *m, const struct sc_dirplace *at)
{
	if (m->reg_dev)
		sc_fplace_moved(fplaces(xl), m->reg_dev, m->reg_ino, at->parent, at->enc,
				at->enc_len);
}

/*
 * The backing rename.  On integrity volumes the data layer below rebinds
 * the regular files it moves (it is told both places), and the place table
 * follows them (src: what move_begin found at from; dst: at to, with
 * RENAME_EXCHANGE).
 */
static int rename_below(struct sc_xl *xl, struct sc_obj *dir, const struct bname *from,
			const struct sc_dirplace *at_from, struct sc_obj *newdir,
			const struct bname *to, const struct sc_dirplace *at_to, unsigned int flags,
			const struct moving *src, const struct moving *dst)
{
	struct sc_xl_place a = { at_from->parent, at_from->enc, at_from->enc_len, false },
			   b = { at_to->parent, at_to->enc, at_to->enc_len, false };
	int ret;

	if (!fplaces(xl))
		return sc_xl_rename(xl->below, dir, from->name, newdir, to->name, flags);
	sc_xl_place_set(&a, &b);
	ret = sc_xl_rename(xl->below, dir, from->name, newdir, to->name, flags);
	sc_xl_place_set(NULL, NULL);
	if (ret < 0)
		return ret;
	place_moved(xl, src, at_to);
	if (flags & RENAME_EXCHANGE)
		place_moved(xl, dst, at_from);
	return 0;
}

/*
 * The listing records a rename changes (volumes with SC_FEAT_DIR_LISTS):
 * the source's name leaves dir and the target's arrives in newdir, unless
 * it was there already (a rename over it).  A rename between two names of
 * one inode changes nothing (POSIX), nor does RENAME_EXCHANGE (both names
 * stay).  ch[0] is dir's change, ch[1] newdir's.  0 or -errno.
 */
static int rename_lists_begin(struct sc_xl *xl, struct sc_obj *dir, const struct bname *from,
			      struct sc_obj *newdir, const struct bname *to, unsigned int flags,
			      struct sc_dl_change ch[2])
{
	struct stat ts, ss;
	bool there;
	int fd, ret;

	ch[0].e = ch[1].e = NULL;
	if (!dlists(xl) || (flags & RENAME_EXCHANGE))
		return 0;
	ret = sc_xl_lookup(xl->below, newdir, to->name, &fd, &ts);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	there = ret == 0;
	if (there) {
		sc_xl_drop_fd(xl->below, fd);
		ret = sc_xl_lookup(xl->below, dir, from->name, &fd, &ss);
		if (ret < 0)
			return ret == -ENOENT ? 0 : ret;	/* the rename answers ENOENT */
		sc_xl_drop_fd(xl->below, fd);
		if (ss.st_ino == ts.st_ino && ss.st_dev == ts.st_dev)
			return 0;
	}
	if (dir == newdir)
		return dl_begin(xl, dir, there ? NULL : to->name, from->name, &ch[0]);
	ret = dl_begin(xl, dir, NULL, from->name, &ch[0]);
	if (ret == 0 && !there) {
		ret = dl_begin(xl, newdir, to->name, NULL, &ch[1]);
		if (ret < 0)
			dl_end(xl, dir, &ch[0], ret);
	}
	return ret;
}

/*
 * rename: the target's side file is made first; after the move, the
 * source's is removed if its name is gone.  It may not be: rename between
 * two hard links of one inode does nothing (POSIX), and RENAME_EXCHANGE
 * keeps both names (side files describe names, so none moves).  A
 * directory moved (both, with RENAME_EXCHANGE) gets its record rewritten
 * for its new place (struct moving).  File form: a directory moved over
 * an empty one removes the nonce file of the one it replaces first
 * (vacate; put back if the rename fails).
 */
static int names_rename(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			struct sc_obj *newdir, const char *newname, unsigned int flags)
{
	struct moving src = { .d.fd = -1, .parent = dir, .name = name },
		      dst = { .d.fd = -1, .parent = newdir, .name = newname };
	struct relink rsrc = { 0 }, rdst = { 0 };
	struct sc_dl_change ch[2] = { { 0 }, { 0 } };
	struct sc_dirplace at_from, at_to;
	struct bname from, to;
	struct vacated v;
	int ret;

	ret = to_backing(xl, dir, name, &from);
	if (ret == 0)
		ret = new_name(xl, newdir, newname, &to);
	if (ret < 0)
		return ret;
	/* A name renamed to itself stays as it is (a bound link needs no new place). */
	if (dir == newdir && !strcmp(from.name, to.name))
		return new_name_done(xl, newdir, &to, sc_xl_rename(xl->below, dir, from.name,
								   newdir, to.name, flags));
	memset(&v, 0, sizeof(v));
	v.dir.fd = -1;
	at_from = (struct sc_dirplace){ ns_get(xl, dir)->nonce, from.enc, from.enc_len };
	at_to = (struct sc_dirplace){ ns_get(xl, newdir)->nonce, to.enc, to.enc_len };
	ret = move_begin(xl, dir, from.name, &at_from, &at_to, &src, newdir, &to, &rsrc);
	if (ret == 0 && (flags & RENAME_EXCHANGE))
		ret = move_begin(xl, newdir, to.name, &at_to, &at_from, &dst, dir, &from, &rdst);
	if (ret == 0 && portable(xl) && !(flags & (RENAME_EXCHANGE | RENAME_NOREPLACE)) &&
	    src.ino != 0)
		ret = vacate(xl, newdir, to.name, &at_to, src.ino, &v);
	v.parent = newdir;
	v.name = newname;
	if (ret == 0)
		ret = rename_lists_begin(xl, dir, &from, newdir, &to, flags, ch);
	if (ret == 0)
		ret = rename_below(xl, dir, &from, &at_from, newdir, &to, &at_to, flags, &src,
				   &dst);
	vacate_done(xl, &v, ret < 0);	/* nothing to do if vacate did nothing */
	dl_end(xl, dir, &ch[0], ret);
	dl_end(xl, newdir, &ch[1], ret);
	if (ret == 0) {	/* where move_end's messages find them now */
		src.parent = newdir;
		src.name = newname;
		dst.parent = dir;
		dst.name = name;
	}
	move_end(xl, &src, ret < 0);
	move_end(xl, &dst, ret < 0);
	relinks_end(xl, dir, &from, newdir, &to, flags, &rsrc, &rdst, ret < 0);
	ret = new_name_done(xl, newdir, &to, ret);
	if (ret == 0 && from.is_long && !(flags & RENAME_EXCHANGE) &&
	    exists_below(xl, dir, from.name) == 0)
		side_remove(xl, dir, &from);
	return ret;
}

/* Returns the plaintext target (truncated to size, as readlink(2)), or -EIO if not ours. */
static ssize_t names_readlink(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	struct nstate *ns;
	size_t n;
	int ret;

	ret = link_state(xl, obj, &ns);	/* a target that is not usable was logged there, once */
	if (ret < 0)
		return ret;
	if (ns->err)
		return ns->err;
	n = (size_t)ns->link_size < size ? (size_t)ns->link_size : size;
	memcpy(buf, ns->target, n);
	return (ssize_t)n;
}

/* Every plaintext name up to NAME_MAX works, whatever the backing limit. */
static int names_statfs(struct sc_xl *xl, struct sc_obj *obj, struct statvfs *sv)
{
	int ret = sc_xl_statfs(xl->below, obj, sv);

	if (ret == 0)
		sv->f_namemax = NAMEMAX_PLAIN;
	return ret;
}

/* SC_DIRNONCE_XATTR is this layer's: names from above are escaped (xlator_i.h). */
static ssize_t names_getxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
			      void *buf, size_t size)
{
	return sc_xl_getxattr_esc(xl, SC_DIRNONCE_XATTR, obj, name, buf, size);
}

static ssize_t names_listxattr(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	return sc_xl_listxattr_esc(xl, SC_DIRNONCE_XATTR, obj, buf, size);
}

static int names_setxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
			  const void *value, size_t size, int flags)
{
	return sc_xl_setxattr_esc(xl, SC_DIRNONCE_XATTR, obj, name, value, size, flags);
}

static int names_removexattr(struct sc_xl *xl, struct sc_obj *obj, const char *name)
{
	return sc_xl_removexattr_esc(xl, SC_DIRNONCE_XATTR, obj, name);
}

static int names_create(struct sc_xl *xl, struct sc_obj *dir, const char *name,
			mode_t mode, struct sc_fh *fh, int *fd_out, struct stat *st)
{
	struct bname b;
	int ret;

	struct sc_xl_place at;

	ret = new_entry(xl, dir, name, &b);
	if (ret < 0)
		return ret;
	if (!fplaces(xl))
		return new_entry_done(xl, dir, &b, sc_xl_create(xl->below, dir, b.name, mode, fh,
								 fd_out, st));
	place_new(xl, dir, &b, &at);
	ret = sc_xl_create(xl->below, dir, b.name, mode, fh, fd_out, st);
	return new_entry_done(xl, dir, &b, place_made(xl, &at, st, ret));
}

/* readdir's fill(), wrapped: entries decrypted or hidden (top of file). */
struct names_fill {
	struct sc_xl	*xl;
	struct sc_obj	*dir;
	const uint8_t	*nonce;
	int		(*fill)(void *ctx, const struct sc_dirent *de);
	void		*ctx;
	int		err;		/* stops the listing: the entry comes again */
	unsigned int	junk;		/* entries hidden as not ours */
	uintptr_t	seen;		/* short names this listing has decoded (below) */
	struct sc_dl_listing *l;	/* the listing checked against its record, or NULL */
	off_t		next;		/* the offset after the last entry passed up or hidden */
	bool		full;		/* fill() took no more: the listing goes on later */
};

/* Entry de was passed up (r: what fill() said) or hidden (0): where the next call starts. */
static int consumed(struct names_fill *f, const struct sc_dirent *de, int r)
{
	if (r == 0)
		f->next = de->next_off;
	else
		f->full = true;
	return r;
}

/*
 * A listing that has decoded more short names than a table of the
 * encoding cache holds goes on without the cache: in a directory that
 * large each name evicts one that came before it, so a lookup (a random
 * slot of a 3.8 MB table) nearly always misses and the store evicts an
 * entry some other directory could use.  Measured on a 1 000 000-entry directory (docs/performance.md
 * section 18): the two calls took 27 % of the daemon's time in `ls -f`.
 * The count lives in the handle's slot of this layer (no allocation),
 * from offset 0 on.
 */
#define NC_LISTING_MAX	NC_SLOTS

static bool nc_listing(const struct names_fill *f)
{
	return f->seen <= NC_LISTING_MAX;
}

/*
 * The plaintext of the long-form entry lng in dir, from its side file (read
 * into enc): its length, -EBADMSG (junk), -ENOENT (gone meanwhile), or -errno.
 */
static int long_plain(struct names_fill *f, const char *lng, size_t len, char *enc,
		      size_t *enc_len, char *plain)
{
	char side[SIDE_NAME_SIZE];
	int n;

	if (len != SC_NAME_LONG_LEN)
		return -EBADMSG;
	memcpy(side, lng, SC_NAME_LONG_LEN);
	memcpy(side + SC_NAME_LONG_LEN, SC_NAME_SIDE_SUFFIX, sizeof(SC_NAME_SIDE_SUFFIX));
	n = side_read(f->xl, f->dir, side, lng, enc);
	/*
	 * No side file: junk if the long name is still there without it; but
	 * an unlink removes the name and then its side file, so one that went
	 * between the listing below and this read is simply gone (-ENOENT).
	 */
	if (n == -ENOENT)
		return exists_below(f->xl, f->dir, lng) == 0 ? -ENOENT : -EBADMSG;
	if (n < 0)
		return n;
	*enc_len = (size_t)n;
	return sc_name_decrypt(nkey(f->xl), f->nonce, enc, (size_t)n, plain);
}

static int names_fill_one(void *ctx, const struct sc_dirent *de)
{
	struct names_fill *f = ctx;
	char plain[SC_NAME_PLAIN_MAX + 1], enc[SC_NAME_ENC_MAX + 2];
	size_t len = strlen(de->name), enc_len = len;
	const char *encp = de->name;
	struct sc_dirent up;
	int n;

	if (!strcmp(de->name, ".") || !strcmp(de->name, ".."))
		return consumed(f, de, f->fill(f->ctx, de));
	/* mkfs.ext4's own directory, which init allows in the root: not junk. */
	if (f->dir->is_root && !strcmp(de->name, "lost+found"))
		return consumed(f, de, 0);
	switch (sc_name_kind(de->name, len)) {
	case SC_NAME_KIND_SIDE:
	case SC_NAME_KIND_TMP:
		return consumed(f, de, 0);
	case SC_NAME_KIND_LINKSIDE:
		if (links_bound(f->xl))
			return consumed(f, de, 0);
		n = -EBADMSG;	/* this volume makes none: junk */
		break;
	case SC_NAME_KIND_NONCE:
		if (portable(f->xl))
			return consumed(f, de, 0);
		n = -EBADMSG;	/* this volume keeps nonces in the xattr: junk */
		break;
	case SC_NAME_KIND_BIND:
		if (fplaces(f->xl))
			return consumed(f, de, 0);	/* binding records (format.md 11.5) */
		n = -EBADMSG;
		break;
	case SC_NAME_KIND_SHORT:
		f->seen++;
		n = nc_listing(f) ? nc_get(f->xl, NC_BY_ENC, f->nonce, de->name, len, plain) : -1;
		if (n >= 0)
			break;
		n = sc_name_decrypt(nkey(f->xl), f->nonce, de->name, len, plain);
		if (n > 0 && nc_listing(f))
			nc_put(f->xl, f->nonce, plain, (size_t)n, de->name, len);
		break;
	case SC_NAME_KIND_LONG:
		n = long_plain(f, de->name, len, enc, &enc_len, plain);
		encp = enc;
		break;
	default:
		n = -EBADMSG;
		break;
	}
	if (n == -EBADMSG) {
		f->junk++;
		return consumed(f, de, 0);
	}
	if (n == -ENOENT)
		return consumed(f, de, 0);	/* removed meanwhile (long_plain) */
	if (n < 0) {
		f->err = n;
		return 1;
	}
	last_name_set(f->xl, f->nonce, plain, (size_t)n, encp, enc_len);
	up = *de;
	up.name = plain;
	n = consumed(f, de, f->fill(f->ctx, &up));
	if (n == 0 && f->l)
		sc_dl_listing_add(dlists(f->xl), f->nonce, f->l, de->name, len);
	return n;
}

/*
 * Volumes with SC_FEAT_DIR_LISTS: the handle's listing (fh's slot of this
 * layer, freed by names_releasedir) begun at offset 0, followed while each
 * call starts where the one before stopped, and checked against the
 * directory's record when a call reaches the end.  Returns it (NULL: this
 * call is not part of a full listing), or sets *err.
 */
static struct sc_dl_listing *listing_of(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
					const uint8_t *nonce, off_t off, int *err)
{
	struct sc_dl_listing *l = fh->priv[xl->id];

	*err = 0;
	if (off != 0) {
		if (l && l->err) {
			*err = l->err;	/* the end of the listing said so: its answer until offset 0 */
			return NULL;
		}
		if (l && l->next != off)
			l->epoch = 0;	/* a seek: not one listing any more */
		return l && l->epoch ? l : NULL;
	}
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l) {
			*err = -ENOMEM;
			return NULL;
		}
		fh->priv[xl->id] = l;
	}
	*err = sc_dl_listing_begin(dlists(xl), obj, nonce, l);
	return *err ? NULL : l;
}

static int names_readdir_checked(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh,
				 off_t off, struct names_fill *f)
{
	struct sc_dl_listing *l;
	int ret;

	f->l = listing_of(xl, obj, fh, f->nonce, off, &ret);
	if (ret < 0)
		return ret;
	l = fh->priv[xl->id];
	f->seen = off == 0 || !l ? 0 : l->seen;
	f->next = off;
	ret = sc_xl_readdir(xl->below, obj, fh, off, names_fill_one, f);
	if (l) {
		l->seen = f->seen;
		l->next = f->next;
	}
	if (ret == 0)
		ret = f->err;
	/* below ran to the end of the directory with every entry taken */
	if (ret == 0 && f->l && !f->full)
		ret = sc_dl_listing_end(dlists(xl), obj, f->nonce, f->l);
	return ret;
}

static int names_readdir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off,
			 int (*fill)(void *ctx, const struct sc_dirent *de), void *ctx)
{
	struct names_fill f = { .xl = xl, .dir = obj, .fill = fill, .ctx = ctx };
	struct nstate *ns;
	int ret;

	ret = dir_nonce(xl, obj, &f.nonce);
	if (ret < 0)
		return ret;
	/* The kernel serializes readdir on one open directory: no race on the slot. */
	if (dlists(xl)) {
		ret = names_readdir_checked(xl, obj, fh, off, &f);
	} else {
		f.seen = off == 0 ? 0 : (uintptr_t)fh->priv[xl->id];
		ret = sc_xl_readdir(xl->below, obj, fh, off, names_fill_one, &f);
		fh->priv[xl->id] = (void *)f.seen;
		if (ret == 0)
			ret = f.err;
	}
	ns = ns_get(xl, obj);
	if (f.junk && !__atomic_exchange_n(&ns->junk_logged, 1, __ATOMIC_ACQ_REL))
		sc_log(SC_LOG_WARNING, "stackcrypt: names: directory %s holds "
		       "entries that are not names of this volume (made behind the mount, or "
		       "damaged); they are hidden (stackcrypt fsck lists them)\n",
		       sc_obj_name(xl->below, obj));
	return ret;
}

/* Volumes with SC_FEAT_DIR_LISTS: a listing's state goes with its handle. */
static int names_releasedir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh)
{
	free(fh->priv[xl->id]);
	fh->priv[xl->id] = NULL;
	return sc_xl_releasedir(xl->below, obj, fh);
}

/* Volumes with SC_FEAT_DIR_LISTS: the directory's listing record made durable first. */
static int names_fsyncdir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, int datasync)
{
	const uint8_t *nonce;
	int ret = dir_nonce(xl, obj, &nonce);

	if (ret == 0)
		ret = sc_dl_sync(dlists(xl), obj, nonce);
	return ret < 0 ? ret : sc_xl_fsyncdir(xl->below, obj, fh, datasync);
}

static const struct sc_xl_ops names_ops = {
	.name			= "names",
	.init			= names_init,
	.destroy		= names_destroy,
	.adopt			= names_adopt,
	.forget			= names_forget,
	.lookup			= names_lookup,
	.getattr		= names_getattr,
	.setattr		= names_setattr,
	.mknod			= names_mknod,
	.mkdir			= names_mkdir,
	.symlink		= names_symlink,
	.link			= names_link,
	.unlink			= names_unlink,
	.rmdir			= names_rmdir,
	.rename			= names_rename,
	.readlink		= names_readlink,
	.statfs			= names_statfs,
	.getxattr		= names_getxattr,
	.listxattr		= names_listxattr,
	.setxattr		= names_setxattr,
	.removexattr		= names_removexattr,
	.create			= names_create,
	.readdir		= names_readdir,
};

int sc_names_xl_new(struct sc_xl *below, const struct sc_mkey *mk, unsigned int flags,
		    struct sc_xl **out)
{
	struct names_priv *np;
	struct sc_xl *xl;
	int ret;

	if (!below || !mk || below->id + 1 >= SC_XL_MAX)
		return -EINVAL;
	xl = calloc(1, sizeof(*xl));
	np = calloc(1, sizeof(*np));
	if (!xl || !np) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = sc_nkey_new(mk, &np->nk);
	if (ret < 0)
		goto err_free;
	np->portable = flags & SC_NAMES_PORTABLE;
	np->bound = flags & SC_NAMES_BOUND;
	np->links_bound = flags & SC_NAMES_LINKS_BOUND;
	if (flags & SC_NAMES_INTEGRITY) {
		ret = sc_fplaces_new(&np->fp);
		if (ret < 0)
			goto err_free;
		np->integ_ops = names_ops;
		np->integ_ops.open = names_open;
	}
	pthread_mutex_init(&np->heal_lock, NULL);
	pthread_mutex_init(&np->pend_lock, NULL);
	np->serial = __atomic_add_fetch(&g_serial, 1, __ATOMIC_RELAXED);
	xl->ops = np->fp ? &np->integ_ops : &names_ops;
	xl->below = below;
	xl->id = below->id + 1;
	xl->priv = np;
	*out = xl;
	return 0;

err_free:
	free(np);
	free(xl);
	return ret;
}

int sc_names_xl_lists(struct sc_xl *xl, const struct sc_ikey *ik, struct sc_fresh *fresh,
		      bool take)
{
	struct names_priv *np = xl->priv;
	int ret;

	if (!np->fp || !ik || np->dl)
		return -EINVAL;
	ret = sc_dlists_new(xl, ik, fresh, take, &np->dl);
	if (ret < 0)
		return ret;
	np->integ_ops.releasedir = names_releasedir;
	np->integ_ops.fsyncdir = names_fsyncdir;
	return 0;
}
