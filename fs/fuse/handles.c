/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * handles.c - the open-handle registry: file and directory handles as the
 * front end allocates them, and the list of those the kernel holds.
 *
 * Once the kernel has a handle (open/create/opendir replied) it is on
 * fs->open_fhs until its release: at unmount the kernel may drop
 * RELEASE/RELEASEDIR requests still queued in the background, and
 * sc_fuse_free() releases what is left through the layers so nothing
 * leaks (valgrind memcheck caught an opendir handle lost that way).  Before
 * publishing, plain free() of the struct sc_fh is enough: it is the first
 * member.  The list lock is taken at open and release only, never on I/O.
 */
#include <pthread.h>
#include <stdlib.h>

#include "handles_i.h"

struct fe_fh {
	struct sc_fh	fh;
	struct fe_fh	*prev, *next;
	struct sc_obj	*obj;
	bool		dir;
};

struct sc_fh *sc_handle_new(int flags)
{
	struct fe_fh *fe = calloc(1, sizeof(*fe));

	if (!fe)
		return NULL;
	fe->fh.fd = -1;
	fe->fh.flags = flags;
	return &fe->fh;
}

void sc_handle_publish(struct sc_fuse *fs, struct sc_fh *fh, struct sc_obj *obj, bool dir)
{
	struct fe_fh *fe = (struct fe_fh *)fh;

	fe->obj = obj;
	fe->dir = dir;
	pthread_mutex_lock(&fs->fh_lock);
	fe->prev = NULL;
	fe->next = fs->open_fhs;
	if (fe->next)
		fe->next->prev = fe;
	fs->open_fhs = fe;
	fs->nopen++;
	pthread_mutex_unlock(&fs->fh_lock);
}

/* Takes a published fh off the list. */
static void unpublish(struct sc_fuse *fs, struct fe_fh *fe)
{
	pthread_mutex_lock(&fs->fh_lock);
	if (fe->prev)
		fe->prev->next = fe->next;
	else
		fs->open_fhs = fe->next;
	if (fe->next)
		fe->next->prev = fe->prev;
	fs->nopen--;
	pthread_mutex_unlock(&fs->fh_lock);
}

size_t sc_handle_count(struct sc_fuse *fs)
{
	/* changed under fh_lock; one word read without it is exact enough for idle.c */
	return atomic_load_explicit(&fs->nopen, memory_order_relaxed);
}

/* Releases fe through the stack and frees it; returns the layers' 0 or -errno. */
static int release(struct sc_fuse *fs, struct sc_obj *obj, struct fe_fh *fe)
{
	int ret;

	if (fe->dir)
		ret = sc_xl_releasedir(fs->top, obj, &fe->fh);
	else
		ret = sc_xl_release(fs->top, obj, &fe->fh);
	free(fe);
	return ret;
}

int sc_handle_release(struct sc_fuse *fs, struct sc_obj *obj, struct sc_fh *fh)
{
	struct fe_fh *fe = (struct fe_fh *)fh;

	unpublish(fs, fe);
	return release(fs, obj, fe);
}

void sc_handle_release_all(struct sc_fuse *fs)
{
	/* Handles whose RELEASE the kernel dropped at unmount. */
	while (fs->open_fhs) {
		struct fe_fh *fe = fs->open_fhs;

		fs->open_fhs = fe->next;
		release(fs, fe->obj, fe);
	}
}
