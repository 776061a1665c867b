/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c - what both halves of fsck (fsck.c: files; fsck_names.c:
 * names) use, and what neither owns: the one way a problem is reported
 * and remembered, the progress line it clears, the full read of a backing
 * file, and the mount path of each regular file that the name checks
 * learn and the file checks' messages print.  It calls neither half, so
 * the two depend on it and fsck.c on fsck_names.c, never back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sc_backing.h"
#include "fsck_i.h"

static void progress_clear(struct fsck *f)
{
	if (f->progress_shown) {
		fputs("\r\033[K", stderr);
		f->progress_shown = false;
	}
}

void sc_fsck_progress(struct fsck *f)
{
	struct timespec now;

	if (!f->progress)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - f->last.tv_sec) * 1000000000ll + (now.tv_nsec - f->last.tv_nsec) <
	    250000000ll)
		return;
	f->last = now;
	fprintf(stderr, "\rchecked %" PRIu64 " file%s, %.1f MiB read, %zu problem%s",
		f->files, f->files == 1 ? "" : "s", f->read / 1048576.0, f->nbad,
		f->nbad == 1 ? "" : "s");
	f->progress_shown = true;
}

void sc_fsck_progress_end(struct fsck *f)
{
	progress_clear(f);
}

void sc_fsck_note(struct fsck *f, const char *rel, const char *fmt, ...)
{
	const char *plain = sc_fsck_plain_path(f, rel);
	va_list ap;

	progress_clear(f);
	printf("%s/%s%s%s%s: ", f->backing, rel, plain ? " (in the mount: " : "",
	       plain ? plain : "", plain ? ")" : "");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int sc_fsck_problem(struct fsck *f, const char *rel, bool quarantine, const char *fmt, ...)
{
	struct bad_file *nb;
	const char *plain;
	va_list ap;

	progress_clear(f);
	printf("%s/%s: ", f->backing, rel);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	plain = sc_fsck_plain_path(f, rel);
	if (plain)
		printf(" (in the mount: %s)", plain);
	putchar('\n');
	fflush(stdout);
	nb = sc_fsck_room(f->bad, &f->capbad, f->nbad, sizeof(*f->bad), 64);
	if (!nb)
		return -ENOMEM;
	f->bad = nb;
	memset(&f->bad[f->nbad], 0, sizeof(f->bad[f->nbad]));
	f->bad[f->nbad].rel = strdup(rel);
	if (!f->bad[f->nbad].rel)
		return -ENOMEM;
	f->bad[f->nbad].quarantine = quarantine;
	f->nbad++;
	return 0;
}

/* ---- growing arrays ---------------------------------------------------------- */

void *sc_fsck_room(void *arr, size_t *cap, size_t n, size_t elem, size_t first)
{
	size_t ncap;
	void *na;

	if (n < *cap)
		return arr;
	ncap = *cap ? 2 * *cap : first;
	na = realloc(arr, ncap * elem);
	if (na)
		*cap = ncap;
	return na;
}

/* ---- mount paths of the regular files (volumes with encrypted names) ------------ */

int sc_fsck_plain_add(struct fsck *f, const char *rel, const char *plain,
		      const struct sc_dirplace *at)
{
	struct plain_path *pp;

	pp = sc_fsck_room(f->plain, &f->capplain, f->nplain, sizeof(*pp), 256);
	if (!pp)
		return -ENOMEM;
	f->plain = pp;
	pp = &f->plain[f->nplain];
	pp->rel = strdup(rel);
	pp->plain = strdup(plain);
	pp->enc = at && at->parent && at->enc ? strndup(at->enc, at->enc_len) : NULL;
	if (pp->enc)
		memcpy(pp->nonce, at->parent, SC_DIRNONCE_LEN);
	if (!pp->rel || !pp->plain || (at && at->parent && at->enc && !pp->enc)) {
		free(pp->rel);
		free(pp->plain);
		free(pp->enc);
		return -ENOMEM;
	}
	f->nplain++;
	return 0;
}

static int plain_cmp(const void *a, const void *b)
{
	return strcmp(((const struct plain_path *)a)->rel, ((const struct plain_path *)b)->rel);
}

void sc_fsck_plain_sort(struct fsck *f)
{
	if (!f->nplain)
		return;
	qsort(f->plain, f->nplain, sizeof(*f->plain), plain_cmp);
	f->plain_sorted = true;
}

const struct plain_path *sc_fsck_plain_entry(const struct fsck *f, const char *rel)
{
	struct plain_path key = { .rel = (char *)rel };

	if (!f->plain_sorted || !f->nplain)
		return NULL;
	return bsearch(&key, f->plain, f->nplain, sizeof(key), plain_cmp);
}

const char *sc_fsck_plain_path(const struct fsck *f, const char *rel)
{
	const struct plain_path *pp = sc_fsck_plain_entry(f, rel);

	return pp ? pp->plain : NULL;
}

void sc_fsck_plain_free(struct fsck *f)
{
	size_t i;

	for (i = 0; i < f->nplain; i++) {
		free(f->plain[i].rel);
		free(f->plain[i].plain);
		free(f->plain[i].enc);
	}
	free(f->plain);
	f->plain = NULL;
	f->nplain = f->capplain = 0;
}
