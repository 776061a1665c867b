/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * freshness.c - the per-client freshness record of an integrity volume
 * (docs/format.md 11.9).
 *
 * Why: a file's version 2 header carries a gen that grows at every
 * commit, under the header MAC, but a header put back from an older copy
 * is as authentic as the current one.  Only something outside the backing
 * store can tell them apart: this client's record of the newest gen it has
 * seen per file id, in DIR/<uuid>.state on this machine.  A file older
 * than the record is refused at its first open; a crash journal last
 * written by one of this client's earlier runs says the whole volume was
 * put back (the root directory's gen stands for that in 11.9 once 11.7
 * serves directory gens; until then the journal's run id does it).
 *
 * The file is a 64-byte header and MAC-chained segments, appended in
 * order; a reader stops at the first segment whose MAC fails (a torn
 * append: the record lags, which is safe).  Only durable gens are
 * recorded: a gen read from the store, or one this run wrote once its
 * file was fsynced or the whole backing synced (a clean unmount), so a
 * power loss of the backing never makes the client refuse the store's
 * true state.  Its MAC (K_s) keeps anyone without the volume's key from
 * lowering it; removing it only makes the next mount a first one.
 *
 * The state file is the client's, not the volume's: plain local I/O on
 * the state directory, never through the backing interface.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sc_fresh.h"
#include "sc_local.h"	/* sc_mkdirs, sc_pwrite_all */

#define HDR_MAGIC	"scstate1"
#define SEG_MAGIC	"scsg"
#define STATE_VERSION	1
#define FLAG_REFUSED	1u	/* a roll-back was refused and not yet accepted */
#define FLAGS_KNOWN	FLAG_REFUSED
#define SEG_MAX_N	(1u << 24)	/* entries in one segment: 512 MiB, far past any volume */

/* The header, little-endian (format.md 11.9). */
struct hdr_disk {
	char		magic[8];
	uint32_t	version;
	uint32_t	flags;
	uint8_t		uuid[16];
	uint8_t		client[16];
	uint8_t		mac[16];
} __attribute__((packed));
_Static_assert(sizeof(struct hdr_disk) == SC_STATE_HDR_LEN, "state header is 64 bytes");

struct seg_disk {
	char		magic[4];
	uint32_t	n;
	uint64_t	seq;
	uint8_t		run[SC_FRESH_RUN_LEN];
} __attribute__((packed));
_Static_assert(sizeof(struct seg_disk) == SC_FRESH_SEG_HDR, "segment header is 32 bytes");

struct ent_disk {
	uint8_t		kind;
	uint8_t		zero[7];
	uint8_t		id[16];
	uint64_t	gen;
} __attribute__((packed));
_Static_assert(sizeof(struct ent_disk) == SC_FRESH_ENTRY_LEN, "entry is 32 bytes");

/* One (kind, id) of the table: kinds 1-3. */
struct fent {
	uint8_t		kind;		/* 0: a free slot */
	uint8_t		id[16];
	uint64_t	gen;		/* recorded (durable), in the file or to be appended */
	uint64_t	wrote;		/* stored by this run, not yet durable */
	bool		out;		/* gen not in the file yet */
};

struct frun {
	uint8_t		id[SC_FRESH_RUN_LEN];
	bool		clean;
};

struct sc_fresh {
	const struct sc_ikey	*ik;
	uint8_t			uuid[16], client[16];
	uint32_t		flags;		/* SC_FRESH_* */
	uint32_t		hflags;		/* the header's */
	bool			refused;	/* flag bit 0 since this open */
	uint8_t			chain[SC_INTEG_TAG_LEN];	/* the last MAC of the file */
	uint64_t		seq;		/* the last segment's */
	struct fent		*tab;		/* open addressing, a power of two */
	size_t			cap, n;
	struct frun		*runs;		/* in file order */
	size_t			nruns, capruns;
	uint8_t			run[SC_FRESH_RUN_LEN];	/* this run's, when begun */
	bool			begun;
	int			fd;		/* the state file, or -1 */
	char			path[PATH_MAX], dir[PATH_MAX];
	pthread_mutex_t		lock;
};

static size_t slot_of(const struct sc_fresh *f, uint8_t kind, const uint8_t id[16])
{
	uint64_t h;

	memcpy(&h, id, sizeof(h));	/* ids are random (file ids, nonces) */
	h ^= (uint64_t)kind * 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	return (size_t)(h * 0xbf58476d1ce4e5b9ull) & (f->cap - 1);
}

static struct fent *find(struct sc_fresh *f, uint8_t kind, const uint8_t id[16])
{
	for (size_t i = slot_of(f, kind, id);; i = (i + 1) & (f->cap - 1)) {
		struct fent *e = &f->tab[i];

		if (!e->kind || (e->kind == kind && !memcmp(e->id, id, 16)))
			return e;
	}
}

/* The entry of (kind, id), made (gen 0) if absent.  NULL: out of memory. */
static struct fent *get(struct sc_fresh *f, uint8_t kind, const uint8_t id[16])
{
	struct fent *e;

	if ((f->n + 1) * 2 > f->cap) {
		struct fent *old = f->tab;
		size_t ocap = f->cap, ncap = f->cap ? f->cap * 2 : 64;

		f->tab = calloc(ncap, sizeof(*f->tab));
		if (!f->tab) {
			f->tab = old;
			return NULL;
		}
		f->cap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].kind)
				*find(f, old[i].kind, old[i].id) = old[i];
		free(old);
	}
	e = find(f, kind, id);
	if (!e->kind) {
		e->kind = kind;
		memcpy(e->id, id, 16);
		f->n++;
	}
	return e;
}

static struct frun *run_find(struct sc_fresh *f, const uint8_t id[SC_FRESH_RUN_LEN])
{
	for (size_t i = f->nruns; i-- > 0;)
		if (!memcmp(f->runs[i].id, id, SC_FRESH_RUN_LEN))
			return &f->runs[i];
	return NULL;
}

static int run_add(struct sc_fresh *f, const uint8_t id[SC_FRESH_RUN_LEN])
{
	if (f->nruns == f->capruns) {
		size_t ncap = f->capruns ? f->capruns * 2 : 16;
		struct frun *r = realloc(f->runs, ncap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		f->runs = r;
		f->capruns = ncap;
	}
	memcpy(f->runs[f->nruns].id, id, SC_FRESH_RUN_LEN);
	f->runs[f->nruns++].clean = false;
	return 0;
}

static struct sc_fresh *fresh_alloc(const struct sc_ikey *ik, const uint8_t uuid[16],
				    uint32_t flags)
{
	struct sc_fresh *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->ik = ik;
	memcpy(f->uuid, uuid, 16);
	f->flags = flags;
	f->fd = -1;
	pthread_mutex_init(&f->lock, NULL);
	return f;
}

static void fresh_free(struct sc_fresh *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);	/* drops the lock */
	pthread_mutex_destroy(&f->lock);
	free(f->tab);
	free(f->runs);
	free(f);
}

/* The header's bytes of f (flags as given), MAC computed, into h.  0 or -errno. */
static int hdr_make(struct sc_fresh *f, uint32_t flags, struct hdr_disk *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, HDR_MAGIC, 8);
	h->version = htole32(STATE_VERSION);
	h->flags = htole32(flags);
	memcpy(h->uuid, f->uuid, 16);
	memcpy(h->client, f->client, 16);
	return sc_state_mac(f->ik, NULL, h, 48, h->mac);
}

/* One entry read from a verified segment into the table.  0, -EUCLEAN, -ENOMEM. */
static int apply(struct sc_fresh *f, const struct ent_disk *d)
{
	static const uint8_t z[7];
	uint64_t gen = le64toh(d->gen);
	struct fent *e;
	struct frun *r;

	if (memcmp(d->zero, z, sizeof(z)) || d->kind < SC_FRESH_FILE || d->kind > SC_FRESH_RUN)
		return -EUCLEAN;
	if (d->kind == SC_FRESH_RUN || d->kind == SC_FRESH_CLEAN) {
		if (gen)
			return -EUCLEAN;
		if (d->kind == SC_FRESH_RUN)
			return run_add(f, d->id);
		r = run_find(f, d->id);
		if (r)
			r->clean = true;
		return 0;	/* a run compaction dropped: nothing to mark */
	}
	if (!gen)
		return -EUCLEAN;
	e = get(f, d->kind, d->id);
	if (!e)
		return -ENOMEM;
	if (gen > e->gen)
		e->gen = gen;
	return 0;
}

/* Returns as sc_fresh.h says. */
int sc_fresh_parse(const struct sc_ikey *ik, const uint8_t uuid[16], const void *buf, size_t len,
		   uint32_t flags, struct sc_fresh **out, size_t *valid)
{
	const uint8_t *p = buf;
	struct hdr_disk h;
	struct sc_fresh *f;
	uint8_t mac[SC_INTEG_TAG_LEN];
	size_t off;
	int ret;

	*out = NULL;
	if (len < sizeof(h))
		return -EUCLEAN;
	memcpy(&h, p, sizeof(h));
	if (memcmp(h.magic, HDR_MAGIC, 8))
		return -EUCLEAN;
	if (le32toh(h.version) != STATE_VERSION)
		return -EPROTONOSUPPORT;
	ret = sc_state_mac(ik, NULL, &h, 48, mac);
	if (ret < 0)
		return ret;
	if (!sc_memeq_ct(mac, h.mac, sizeof(mac)))
		return -EBADMSG;
	if (le32toh(h.flags) & ~FLAGS_KNOWN)
		return -EPROTONOSUPPORT;
	if (memcmp(h.uuid, uuid, 16))
		return -ESTALE;
	f = fresh_alloc(ik, uuid, flags);
	if (!f)
		return -ENOMEM;
	memcpy(f->client, h.client, 16);
	f->hflags = le32toh(h.flags);
	memcpy(f->chain, h.mac, sizeof(f->chain));
	for (off = sizeof(h); len - off >= SC_FRESH_SEG_HDR + SC_INTEG_TAG_LEN;) {
		struct seg_disk s;
		size_t n, body;

		memcpy(&s, p + off, sizeof(s));
		n = le32toh(s.n);
		if (memcmp(s.magic, SEG_MAGIC, 4) || n == 0 || n > SEG_MAX_N ||
		    le64toh(s.seq) != f->seq + 1)
			break;	/* not a segment: what a torn append leaves */
		body = SC_FRESH_SEG_HDR + n * SC_FRESH_ENTRY_LEN;
		if (len - off - SC_INTEG_TAG_LEN < body)
			break;	/* cut short */
		ret = sc_state_mac(ik, f->chain, p + off, body, mac);
		if (ret < 0)
			goto err_free;
		if (!sc_memeq_ct(mac, p + off + body, sizeof(mac)))
			break;	/* torn, or written over */
		for (size_t i = 0; i < n; i++) {
			struct ent_disk d;

			memcpy(&d, p + off + SC_FRESH_SEG_HDR + i * SC_FRESH_ENTRY_LEN, sizeof(d));
			ret = apply(f, &d);
			if (ret < 0)
				goto err_free;
		}
		memcpy(f->chain, mac, sizeof(mac));
		f->seq++;
		off += body + SC_INTEG_TAG_LEN;
	}
	*valid = off;
	*out = f;
	return 0;

err_free:
	fresh_free(f);
	return ret;
}

/* Returns as sc_fresh.h says. */
int sc_fresh_new(const struct sc_ikey *ik, const uint8_t uuid[16], uint32_t flags,
		 struct sc_fresh **out)
{
	struct sc_fresh *f = fresh_alloc(ik, uuid, flags);
	struct hdr_disk h;
	int ret;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	ret = sc_random(f->client, sizeof(f->client));
	if (ret == 0)
		ret = hdr_make(f, 0, &h);
	if (ret < 0) {
		fresh_free(f);
		return ret;
	}
	memcpy(f->chain, h.mac, sizeof(f->chain));
	*out = f;
	return 0;
}

/*
 * A segment of seq after the MAC chain, for run, of the n entries at ents
 * into *buf (malloc'd; *len).  0, -ENOMEM, -EIO.
 */
static int seg_make(const struct sc_ikey *ik, const uint8_t chain[SC_INTEG_TAG_LEN], uint64_t seq,
		    const uint8_t *run, const struct ent_disk *ents, size_t n, uint8_t **buf,
		    size_t *len)
{
	size_t body = SC_FRESH_SEG_HDR + n * SC_FRESH_ENTRY_LEN;
	uint8_t *b = malloc(body + SC_INTEG_TAG_LEN);
	struct seg_disk s = { .n = htole32((uint32_t)n), .seq = htole64(seq) };
	int ret;

	if (!b)
		return -ENOMEM;
	memcpy(s.magic, SEG_MAGIC, 4);
	if (run)
		memcpy(s.run, run, sizeof(s.run));
	memcpy(b, &s, sizeof(s));
	if (n)
		memcpy(b + SC_FRESH_SEG_HDR, ents, n * SC_FRESH_ENTRY_LEN);
	ret = sc_state_mac(ik, chain, b, body, b + body);
	if (ret < 0) {
		free(b);
		return ret;
	}
	*buf = b;
	*len = body + SC_INTEG_TAG_LEN;
	return 0;
}

static struct ent_disk ent(uint8_t kind, const uint8_t id[16], uint64_t gen)
{
	struct ent_disk d = { .kind = kind, .gen = htole64(gen) };

	memcpy(d.id, id, 16);
	return d;
}

/* Returns as sc_fresh.h says.  Under f->lock, or before f is shared. */
static int image(struct sc_fresh *f, uint8_t **buf, size_t *len)
{
	size_t first = f->nruns > SC_FRESH_RUNS_KEPT ? f->nruns - SC_FRESH_RUNS_KEPT : 0;
	size_t n = 0, segl = 0;
	uint32_t flags = (f->hflags | (f->refused ? FLAG_REFUSED : 0)) & FLAGS_KNOWN;
	struct ent_disk *ents = malloc((f->n + 2 * (f->nruns - first) + 1) * sizeof(*ents));
	uint8_t *seg = NULL, *b;
	struct hdr_disk h;
	int ret;

	if (!ents)
		return -ENOMEM;
	if ((f->flags & SC_FRESH_ALLOW) && !f->refused)
		flags &= ~FLAG_REFUSED;	/* what was refused is accepted by this run */
	for (size_t i = first; i < f->nruns; i++) {
		ents[n++] = ent(SC_FRESH_RUN, f->runs[i].id, 0);
		if (f->runs[i].clean)
			ents[n++] = ent(SC_FRESH_CLEAN, f->runs[i].id, 0);
	}
	for (size_t i = 0; i < f->cap; i++)
		if (f->tab[i].kind && f->tab[i].gen)
			ents[n++] = ent(f->tab[i].kind, f->tab[i].id, f->tab[i].gen);
	ret = hdr_make(f, flags, &h);
	if (ret == 0 && n)
		ret = seg_make(f->ik, h.mac, 1, f->begun ? f->run : NULL, ents, n, &seg, &segl);
	free(ents);
	if (ret < 0)
		return ret;
	b = malloc(sizeof(h) + segl);
	if (!b) {
		free(seg);
		return -ENOMEM;
	}
	memcpy(b, &h, sizeof(h));
	if (segl)
		memcpy(b + sizeof(h), seg, segl);
	free(seg);
	*buf = b;
	*len = sizeof(h) + segl;
	return 0;
}

/* Returns as sc_fresh.h says. */
int sc_fresh_image(struct sc_fresh *f, uint8_t **buf, size_t *len)
{
	int ret;

	pthread_mutex_lock(&f->lock);
	ret = image(f, buf, len);
	pthread_mutex_unlock(&f->lock);
	return ret;
}

/* Returns as sc_fresh.h says. */
int sc_fresh_dir(const char *dir, char *out, size_t len)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int n;

	if (dir)
		n = snprintf(out, len, "%s", dir);
	else if (xdg && xdg[0] == '/')	/* the XDG rule: a relative one is ignored */
		n = snprintf(out, len, "%s/stackcrypt", xdg);
	else if (home && home[0])
		n = snprintf(out, len, "%s/.local/state/stackcrypt", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The whole file fd into *buf (malloc'd), *len.  0 or -errno. */
static int read_all(int fd, uint8_t **buf, size_t *len)
{
	struct stat st;
	uint8_t *b;
	size_t got = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	b = malloc((size_t)st.st_size + 1);
	if (!b)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, b + got, (size_t)st.st_size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(b);
			return n < 0 ? -errno : -EIO;
		}
		got += (size_t)n;
	}
	*buf = b;
	*len = got;
	return 0;
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

/*
 * len bytes of buf as the file path in directory dir: a temporary file
 * beside it, fsynced, renamed over it, the directory fsynced.  *fdp (when
 * not NULL) gets the new file's fd, locked exclusive.  0 or -errno (the
 * old file stays).
 */
static int put_file(const char *dir, const char *path, const uint8_t *buf, size_t len, int *fdp)
{
	char tmp[PATH_MAX + 8];
	int fd, dfd, ret;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = sc_pwrite_all(fd, buf, len, 0);
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (ret == 0 && fdp && flock(fd, LOCK_EX | LOCK_NB) < 0)
		ret = -errno;
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	if (ret < 0) {
		close(fd);
		unlink(tmp);
		return ret;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return 0;
}

/*
 * The compacted image of f in place of its file (put_file); f->fd is then
 * the new file (locked).  Under f->lock.  0 or -errno (the old file stays).
 */
static int compact(struct sc_fresh *f)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int fd, ret;

	ret = image(f, &buf, &len);
	if (ret < 0)
		return ret;
	ret = put_file(f->dir, f->path, buf, len, &fd);
	free(buf);
	if (ret < 0)
		return ret;
	close(f->fd);
	f->fd = fd;
	return 0;
}

/*
 * The state directory (sc_fresh_dir of dir) into sdir, and the path of the
 * volume uuid's file in it, with suffix after SC_FRESH_SUFFIX, into path
 * (PATH_MAX each).  0, -ENOENT, -ENAMETOOLONG.
 */
static int state_path(const uint8_t uuid[16], const char *dir, const char *suffix, char *sdir,
		      char *path)
{
	char name[2 * 16 + 1];
	int ret = sc_fresh_dir(dir, sdir, PATH_MAX), n;

	if (ret < 0)
		return ret;
	hex(uuid, 16, name);
	n = snprintf(path, PATH_MAX, "%s/%s%s%s", sdir, name, SC_FRESH_SUFFIX, suffix);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Returns as sc_fresh.h says. */
int sc_fresh_held(const uint8_t uuid[16], const char *dir, char *path)
{
	char sdir[PATH_MAX];
	struct stat st;
	int ret = state_path(uuid, dir, "", sdir, path);

	if (ret < 0)
		return ret;
	if (stat(path, &st) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

/* Returns as sc_fresh.h says. */
int sc_fresh_open(const struct sc_ikey *ik, const uint8_t uuid[16], const char *dir,
		  uint32_t flags, struct sc_fresh **out, struct sc_fresh_info *info)
{
	char sdir[PATH_MAX];
	struct sc_fresh *f = NULL;
	uint8_t *buf = NULL;
	size_t len = 0, valid = 0;
	int fd, ret;

	_Static_assert(sizeof(info->path) == PATH_MAX, "state_path writes PATH_MAX bytes");
	*out = NULL;
	memset(info, 0, sizeof(*info));
	ret = state_path(uuid, dir, "", sdir, info->path);
	if (ret < 0) {
		info->path[0] = 0;
		return ret;
	}
	if (flags & SC_FRESH_CREATE) {
		ret = sc_mkdirs(sdir);
		if (ret < 0)
			return ret;
	}
	fd = open(info->path, ((flags & SC_FRESH_WRITE) ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && (flags & SC_FRESH_CREATE))
		fd = open(info->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, ((flags & SC_FRESH_WRITE) ? LOCK_EX : LOCK_SH) | LOCK_NB) < 0) {
		ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
		goto err_close;
	}
	ret = read_all(fd, &buf, &len);
	if (ret < 0)
		goto err_close;
	if (len == 0 && (flags & SC_FRESH_CREATE)) {
		info->made = true;
		ret = sc_fresh_new(ik, uuid, flags, &f);
	} else {
		ret = sc_fresh_parse(ik, uuid, buf, len, flags, &f, &valid);
	}
	free(buf);
	if (ret < 0)
		goto err_close;
	f->fd = fd;
	snprintf(f->path, sizeof(f->path), "%s", info->path);
	snprintf(f->dir, sizeof(f->dir), "%.*s", (int)(strrchr(info->path, '/') - info->path),
		 info->path);
	info->refused_before = f->hflags & FLAG_REFUSED;
	if (!info->made && valid < len) {
		info->torn = true;
		info->dropped = len - valid;
		/* later appends must follow the last valid segment to be read */
		if ((flags & SC_FRESH_WRITE) && ftruncate(fd, (off_t)valid) < 0) {
			ret = -errno;
			f->fd = -1;
			fresh_free(f);
			goto err_close;
		}
	}
	if (info->made && (flags & SC_FRESH_WRITE)) {
		pthread_mutex_lock(&f->lock);
		ret = compact(f);	/* the header, durable, before anything is recorded */
		pthread_mutex_unlock(&f->lock);
		if (ret < 0) {
			f->fd = -1;
			fresh_free(f);
			unlink(info->path);
			goto err_close;
		}
	}
	*out = f;
	return 0;

err_close:
	close(fd);
	return ret;
}

/* Returns as sc_fresh.h says. */
const char *sc_fresh_strerror(int err)
{
	switch (err) {
	case -EUCLEAN:
		return "freshness record damaged (not a state file of this format): move it "
		       "aside to start a new one";
	case -EBADMSG:
		return "freshness record damaged (its header fails its MAC: edited, or another "
		       "volume's): move it aside to start a new one";
	case -ESTALE:
		return "freshness record of another volume under this volume's name: move it "
		       "aside to start a new one";
	case -EPROTONOSUPPORT:
		return "freshness record of a newer stackcrypt (another version or flag)";
	case -EBUSY:
		return "freshness record in use by another stackcrypt process";
	default:
		return strerror(-err);
	}
}

/* Appends the n entries at ents as one segment, synced.  Under f->lock.  0 or -errno. */
static int append(struct sc_fresh *f, const uint8_t *run, const struct ent_disk *ents, size_t n)
{
	uint8_t *seg, mac[SC_INTEG_TAG_LEN];
	size_t len;
	off_t end;
	int ret;

	if (f->fd < 0 || !(f->flags & SC_FRESH_WRITE))
		return -EBADF;
	ret = seg_make(f->ik, f->chain, f->seq + 1, run, ents, n, &seg, &len);
	if (ret < 0)
		return ret;
	memcpy(mac, seg + len - sizeof(mac), sizeof(mac));
	end = lseek(f->fd, 0, SEEK_END);
	ret = end < 0 ? -errno : sc_pwrite_all(f->fd, seg, len, (uint64_t)end);
	free(seg);
	if (ret == 0 && fdatasync(f->fd) < 0)
		ret = -errno;
	/* whatever part landed is cut off, or left as a torn tail the next reader drops */
	if (ret < 0 && end >= 0 && ftruncate(f->fd, end) < 0)
		return ret;
	if (ret < 0)
		return ret;
	memcpy(f->chain, mac, sizeof(mac));
	f->seq++;
	return 0;
}

/* Returns as sc_fresh.h says. */
int sc_fresh_check(struct sc_fresh *f, enum sc_fresh_kind kind, const uint8_t id[16],
		   uint64_t gen, uint64_t *seen)
{
	struct fent *e, *gone;
	bool deleted = false;
	uint64_t have;
	int ret = 0;

	pthread_mutex_lock(&f->lock);
	e = f->cap ? find(f, (uint8_t)kind, id) : NULL;
	gone = f->cap && kind == SC_FRESH_FILE ? find(f, SC_FRESH_GONE, id) : NULL;
	have = e && e->kind ? (e->gen > e->wrote ? e->gen : e->wrote) : 0;
	if (gone && gone->kind) {
		uint64_t g = gone->gen > gone->wrote ? gone->gen : gone->wrote;

		if (g && g >= gen && g + 1 > have) {
			have = g + 1;	/* deleted at that gen: no header of it is current */
			deleted = true;
		}
	}
	if (gen < have) {
		*seen = have;
		if (f->flags & SC_FRESH_ALLOW) {
			if (e && e->kind) {
				e->gen = gen;
				e->wrote = 0;
				e->out = true;
			}
			if (gone && gone->kind)
				gone->gen = gone->wrote = 0;	/* not written by the compaction */
			ret = 1;
		} else {
			f->refused = true;
			ret = deleted ? -ENOENT : -ESTALE;
		}
	} else if (gen > have) {
		/*
		 * Read from the store: recorded once durable, as this run's own
		 * writes (a kill -9 leaves headers in the page cache that a power
		 * loss after it would take back).
		 */
		e = get(f, (uint8_t)kind, id);
		if (e)
			e->wrote = gen;
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

void sc_fresh_wrote(struct sc_fresh *f, enum sc_fresh_kind kind, const uint8_t id[16],
		    uint64_t gen)
{
	struct fent *e;

	pthread_mutex_lock(&f->lock);
	e = get(f, (uint8_t)kind, id);
	if (e && gen > e->wrote)
		e->wrote = gen;
	pthread_mutex_unlock(&f->lock);
}

void sc_fresh_synced(struct sc_fresh *f, enum sc_fresh_kind kind, const uint8_t id[16])
{
	struct fent *e;

	pthread_mutex_lock(&f->lock);
	e = f->cap ? find(f, (uint8_t)kind, id) : NULL;
	if (e && e->kind && e->wrote > e->gen) {
		e->gen = e->wrote;
		e->out = true;
	}
	pthread_mutex_unlock(&f->lock);
}

/* Returns as sc_fresh.h says. */
int sc_fresh_run_check(struct sc_fresh *f, const uint8_t run[SC_FRESH_RUN_LEN])
{
	struct frun *r;
	int ret = 0;

	pthread_mutex_lock(&f->lock);
	r = run_find(f, run);
	if (r && r != &f->runs[f->nruns - 1]) {
		if (f->flags & SC_FRESH_ALLOW) {
			ret = 1;
		} else {
			f->refused = true;
			ret = -ESTALE;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

/* Returns as sc_fresh.h says. */
int sc_fresh_run_begin(struct sc_fresh *f, const uint8_t run[SC_FRESH_RUN_LEN])
{
	struct ent_disk d = ent(SC_FRESH_RUN, run, 0);
	int ret;

	pthread_mutex_lock(&f->lock);
	ret = run_add(f, run);
	if (ret == 0) {
		memcpy(f->run, run, SC_FRESH_RUN_LEN);
		f->begun = true;
		/* read only, or without a file (a rekey's): kept in memory alone */
		if (f->fd >= 0 && (f->flags & SC_FRESH_WRITE))
			ret = append(f, run, &d, 1);
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

uint64_t sc_fresh_seen(struct sc_fresh *f, enum sc_fresh_kind kind, const uint8_t id[16])
{
	struct fent *e;
	uint64_t g = 0;

	pthread_mutex_lock(&f->lock);
	e = f->cap ? find(f, (uint8_t)kind, id) : NULL;
	if (e && e->kind)
		g = e->gen;
	pthread_mutex_unlock(&f->lock);
	return g;
}

size_t sc_fresh_runs(struct sc_fresh *f, uint8_t last[SC_FRESH_RUN_LEN])
{
	size_t n;

	pthread_mutex_lock(&f->lock);
	n = f->nruns;
	if (n && last)
		memcpy(last, f->runs[n - 1].id, SC_FRESH_RUN_LEN);
	pthread_mutex_unlock(&f->lock);
	return n;
}

bool sc_fresh_refused(struct sc_fresh *f)
{
	bool r;

	pthread_mutex_lock(&f->lock);
	r = f->refused || (f->hflags & FLAG_REFUSED);
	pthread_mutex_unlock(&f->lock);
	return r;
}

bool sc_fresh_allows(const struct sc_fresh *f)
{
	return f && (f->flags & SC_FRESH_ALLOW);
}

/* What became durable and is not in the file yet, appended.  Under f->lock.  0 or -errno. */
static int append_out(struct sc_fresh *f)
{
	struct ent_disk *ents;
	size_t n = 0;
	int ret = 0;

	for (size_t i = 0; i < f->cap; i++)
		n += f->tab[i].kind && f->tab[i].out && f->tab[i].gen;
	if (!n)
		return 0;
	ents = malloc(n * sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < f->cap; i++)
		if (f->tab[i].kind && f->tab[i].out && f->tab[i].gen)
			ents[n++] = ent(f->tab[i].kind, f->tab[i].id, f->tab[i].gen);
	ret = append(f, f->begun ? f->run : NULL, ents, n);
	free(ents);
	return ret;
}

/* Returns as sc_fresh.h says. */
int sc_fresh_close(struct sc_fresh *f, bool synced, bool clean)
{
	struct frun *r;
	int ret = 0;

	if (!f)
		return 0;
	pthread_mutex_lock(&f->lock);
	if (f->flags & SC_FRESH_WRITE) {
		if (synced)
			for (size_t i = 0; i < f->cap; i++)
				if (f->tab[i].kind && f->tab[i].wrote > f->tab[i].gen) {
					f->tab[i].gen = f->tab[i].wrote;
					f->tab[i].out = true;
				}
		r = f->begun ? run_find(f, f->run) : NULL;
		if (r && synced && clean)
			r->clean = true;
		ret = compact(f);
		if (ret < 0 && append_out(f) == 0 && r && r->clean) {
			struct ent_disk d = ent(SC_FRESH_CLEAN, f->run, 0);

			append(f, f->run, &d, 1);
		}
	}
	pthread_mutex_unlock(&f->lock);
	fresh_free(f);
	return ret;
}

/* ---- a master-key rotation (stackcrypt rekey, format.md 6.5) --------------------- */

/* The suffix, after SC_FRESH_SUFFIX, of the record a rekey stages. */
#define STAGED_SUFFIX	".rekey"

/* Returns as sc_fresh.h says. */
int sc_fresh_stage(struct sc_fresh *f, const char *dir)
{
	char sdir[PATH_MAX], path[PATH_MAX];
	uint8_t *buf = NULL;
	size_t len = 0;
	int ret;

	ret = state_path(f->uuid, dir, STAGED_SUFFIX, sdir, path);
	if (ret == 0)
		ret = sc_mkdirs(sdir);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < f->cap; i++)
		if (f->tab[i].kind && f->tab[i].wrote > f->tab[i].gen)
			f->tab[i].gen = f->tab[i].wrote;
	ret = image(f, &buf, &len);
	pthread_mutex_unlock(&f->lock);
	if (ret == 0)
		ret = put_file(sdir, path, buf, len, NULL);
	free(buf);
	return ret;
}

/* Returns as sc_fresh.h says. */
int sc_fresh_promote(const struct sc_ikey *ik, const uint8_t uuid[16], const char *dir)
{
	char sdir[PATH_MAX], path[PATH_MAX], staged[PATH_MAX];
	struct sc_fresh *f = NULL;
	uint8_t *buf = NULL;
	size_t len = 0, valid;
	int fd, dfd, ret;

	ret = state_path(uuid, dir, "", sdir, path);
	if (ret == 0)
		ret = state_path(uuid, dir, STAGED_SUFFIX, sdir, staged);
	if (ret < 0)
		return ret == -ENOENT ? 0 : ret;	/* no state directory: no record */
	/* no lock taken: the rekey holds the volume's, so no mount or fsck holds this one */
	if (rename(staged, path) == 0) {
		ret = 1;
	} else if (errno != ENOENT) {
		return -errno;
	} else {
		/* promoted by a run stopped after it, or a record of the old key: removed */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return errno == ENOENT ? 0 : -errno;
		ret = read_all(fd, &buf, &len);
		close(fd);
		if (ret < 0)
			return ret;
		ret = sc_fresh_parse(ik, uuid, buf, len, 0, &f, &valid);
		free(buf);
		fresh_free(f);
		if (ret == 0)
			return 1;
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
		ret = 0;
	}
	dfd = open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return ret;
}

/* Returns as sc_fresh.h says. */
int sc_fresh_unstage(const uint8_t uuid[16], const char *dir)
{
	char sdir[PATH_MAX], path[PATH_MAX];
	int ret = state_path(uuid, dir, STAGED_SUFFIX, sdir, path);

	if (ret < 0)
		return ret == -ENOENT ? 0 : ret;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}
