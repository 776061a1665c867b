/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * links.c - binding records and the inodes found vouched for (links.h;
 * docs/format.md 11.5).  A record is a backing symlink whose 55-character
 * target fits an ext4 or XFS inode: one metadata operation, no data block.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "links.h"

static int brec_name(const struct sc_dirplace *p, char out[SC_BREC_NAME_SIZE])
{
	int ret = sc_name_long(p->enc, p->enc_len, out);

	if (ret == 0)
		memcpy(out + SC_NAME_LONG_LEN, SC_BINDREC_SUFFIX, sizeof(SC_BINDREC_SUFFIX));
	return ret;
}

int sc_brec_read(struct sc_xl *below, const struct sc_ikey *ik, struct sc_obj *dir,
		 const struct sc_dirplace *p, uint8_t id[SC_GCM_FILE_ID_LEN], uint64_t *g)
{
	char name[SC_BREC_NAME_SIZE], target[SC_BINDREC_ENC_LEN + 2];
	struct sc_obj o = { .fd = -1, .type = S_IFLNK };
	struct stat st;
	ssize_t n;
	int ret;

	ret = brec_name(p, name);
	if (ret == 0)
		ret = sc_xl_lookup(below, dir, name, &o.fd, &st);
	if (ret < 0)
		return ret;
	n = S_ISLNK(st.st_mode) ? sc_xl_readlink(below, &o, target, sizeof(target)) : -EBADMSG;
	sc_xl_drop_fd(below, o.fd);
	if (n < 0)
		return n == -ENOENT ? -EBADMSG : (int)n;
	return sc_bindrec_open(ik, target, (size_t)n, p, id, g);
}

int sc_brec_write(struct sc_xl *below, const struct sc_ikey *ik, struct sc_obj *dir,
		  const struct sc_dirplace *p, const uint8_t id[SC_GCM_FILE_ID_LEN], uint64_t g)
{
	char name[SC_BREC_NAME_SIZE], target[SC_BINDREC_ENC_LEN + 1];
	struct stat st;
	int fd = -1, ret;

	ret = brec_name(p, name);
	if (ret == 0)
		ret = sc_bindrec_seal(ik, id, g, p, target);
	if (ret == 0)
		ret = sc_xl_symlink(below, dir, name, target, &fd, &st);
	if (ret == -EEXIST) {	/* a stale record, left by a crash: replaced */
		ret = sc_xl_unlink(below, dir, name);
		if (ret == 0)
			ret = sc_xl_symlink(below, dir, name, target, &fd, &st);
	}
	if (ret == 0)
		sc_xl_drop_fd(below, fd);
	return ret;
}

int sc_brec_remove(struct sc_xl *below, struct sc_obj *dir, const struct sc_dirplace *p)
{
	char name[SC_BREC_NAME_SIZE];
	int ret = brec_name(p, name);

	if (ret == 0)
		ret = sc_xl_unlink(below, dir, name);
	return ret == -ENOENT ? 0 : ret;
}

static int bind_seen(void *ctx, const struct sc_dirent *de)
{
	bool *found = ctx;

	*found = sc_name_kind(de->name, strlen(de->name)) == SC_NAME_KIND_BIND;
	return *found;	/* 1: enough, stop */
}

int sc_brec_dir_scan(struct sc_xl *below, struct sc_obj *dir)
{
	struct sc_fh fh = { .fd = -1, .flags = O_RDONLY | O_DIRECTORY };
	bool found = false;
	struct stat st;
	int ret = sc_xl_getattr(below, dir, NULL, &st);

	if (ret == 0 && (uint64_t)st.st_size > SC_BREC_SCAN_MAX)
		return -EFBIG;
	if (ret == 0)
		ret = sc_xl_opendir(below, dir, &fh);
	if (ret < 0)
		return ret;
	ret = sc_xl_readdir(below, dir, &fh, 0, bind_seen, &found);
	sc_xl_releasedir(below, dir, &fh);
	return ret < 0 ? ret : found;
}

/* ---- the inodes found vouched for --------------------------------------------- */

#define SEEN_BUCKETS	256

struct seen {
	struct seen	*next;
	uint64_t	ino;
	uint8_t		id[SC_GCM_FILE_ID_LEN];
};

struct sc_brec_seen {
	pthread_mutex_t	lock;
	struct seen	*b[SEEN_BUCKETS];
};

int sc_brec_seen_new(struct sc_brec_seen **out)
{
	struct sc_brec_seen *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return 0;
}

void sc_brec_seen_free(struct sc_brec_seen *s)
{
	struct seen *e, *next;

	if (!s)
		return;
	for (size_t i = 0; i < SEEN_BUCKETS; i++)
		for (e = s->b[i]; e; e = next) {
			next = e->next;
			free(e);
		}
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static struct seen *seen_find(struct sc_brec_seen *s, uint64_t ino)
{
	struct seen *e;

	for (e = s->b[ino % SEEN_BUCKETS]; e; e = e->next)
		if (e->ino == ino)
			return e;
	return NULL;
}

int sc_brec_seen_add(struct sc_brec_seen *s, uint64_t ino, const uint8_t id[SC_GCM_FILE_ID_LEN])
{
	struct seen *e;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	e = seen_find(s, ino);
	if (!e && (e = calloc(1, sizeof(*e))) != NULL) {
		e->ino = ino;
		e->next = s->b[ino % SEEN_BUCKETS];
		s->b[ino % SEEN_BUCKETS] = e;
	}
	if (e)
		memcpy(e->id, id, SC_GCM_FILE_ID_LEN);
	else
		ret = -ENOMEM;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

bool sc_brec_seen_has(struct sc_brec_seen *s, uint64_t ino, const uint8_t id[SC_GCM_FILE_ID_LEN])
{
	const struct seen *e;
	bool has;

	pthread_mutex_lock(&s->lock);
	e = seen_find(s, ino);
	has = e && memcmp(e->id, id, SC_GCM_FILE_ID_LEN) == 0;
	pthread_mutex_unlock(&s->lock);
	return has;
}
