/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * setup.c - the front end's state for one session, from the backing root to
 * teardown: the inode table (and the stack hooks it calls), whether the
 * backing needs FLUSH (the stack says: ->close_is_silent), the per-thread
 * buffers, the handle registry and the daemon's credentials.  Nothing
 * here runs per request.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "creds_i.h"
#include "fuse_i.h"
#include "handlers_i.h"
#include "handles_i.h"
#include "inode.h"
#include "sc_stack.h"
#include "uring_i.h"
#include "xlator_i.h"

static void release_obj(void *ctx, struct sc_obj *obj)
{
	struct sc_fuse *fs = ctx;

	sc_xl_stack_forget(fs->top, obj);
}

static void adopt_obj(void *ctx, struct sc_obj *obj, const struct stat *st)
{
	struct sc_fuse *fs = ctx;

	sc_xl_stack_adopt(fs->top, obj, st);
}

static bool same_obj(void *ctx, const struct sc_obj *obj, int fd)
{
	struct sc_fuse *fs = ctx;

	return sc_xl_same(fs->top, obj, fd);
}

/* The layer's own fd, given back through it (inode.h, sc_inode_drop_fn). */
static void drop_obj_fd(void *ctx, int fd)
{
	struct sc_fuse *fs = ctx;

	sc_xl_drop_fd(fs->top, fd);
}

/*
 * sc_obj_path for the layers (include/sc_xlator.h): an obj in_table is
 * the first member of its entry.  The mount point goes first once the
 * session is mounted; before that the path is below the mount's root.
 */
static int obj_path(void *ctx, const struct sc_obj *obj, char *buf, size_t len)
{
	const struct sc_inode *e = (const struct sc_inode *)obj;
	struct sc_fuse *fs = ctx;
	/* "/" (a mount on the root): the path alone */
	size_t n = fs->mountpoint && strcmp(fs->mountpoint, "/") ? strlen(fs->mountpoint) : 0;
	int ret;

	if (n >= len)
		return -ENAMETOOLONG;
	ret = sc_inode_path(fs->itable, e, buf + n, len - n);
	if (ret < 0)
		return ret;
	if (n) {
		memcpy(buf, fs->mountpoint, n);
		if (!strcmp(buf + n, "/") && n > 1)
			buf[n] = '\0';		/* the root: the mount point itself */
	}
	return 0;
}

static struct sc_xl *bottom_of(struct sc_xl *xl)
{
	while (xl->below)
		xl = xl->below;
	return xl;
}

/* Undoes setup; every part may be missing (a setup that failed half-way). */
static void teardown(struct sc_fuse *fs)
{
	sc_obj_path_set_func(NULL, NULL);
	sc_uring_free(fs);
	sc_handle_release_all(fs);
	sc_inode_table_free(fs->itable);
	fs->itable = NULL;
	sc_handlers_bufs_fini(fs);
	sc_creds_fini(fs);
	free(fs->mountpoint);
	fs->mountpoint = NULL;
}

int sc_fuse_new(const struct sc_fuse_opts *opts, struct sc_xl *top, int root_fd,
		struct sc_fuse **out)
{
	struct sc_obj root = { .fd = root_fd, .type = S_IFDIR, .is_root = true };
	struct sc_xl *bottom = bottom_of(top);
	struct sc_fuse *fs;
	struct stat st;
	int ret;

	fs = calloc(1, sizeof(*fs));
	if (!fs) {
		sc_xl_drop_fd(top, root_fd);
		return -ENOMEM;
	}
	fs->conf = opts->conf;
	fs->attr_timeout = opts->attr_timeout;
	fs->entry_timeout = opts->entry_timeout;
	fs->killpriv_v2 = opts->killpriv_v2;
	fs->ask_parallel_dio = opts->ask_parallel_dio;
	fs->ask_uring = opts->ask_uring;
	fs->noxattr = opts->noxattr;
	fs->cache_dirs = opts->cache_dirs;
	fs->loop = opts->loop;
	fs->max_threads = opts->max_threads;
	fs->idle = opts->idle;
	fs->top = top;
	/* the bottom layer's getattr: root_fd is the bottom's, not a descriptor */
	ret = bottom->ops->getattr(bottom, &root, NULL, &st);
	if (ret < 0)
		goto err_drop_root;
	fs->local_backing = sc_xl_close_is_silent(top, &root);
	ret = sc_inode_table_new(root_fd, &st, release_obj, fs, &fs->itable);
	if (ret < 0)
		goto err_drop_root;
	sc_inode_table_set_adopt(fs->itable, adopt_obj, same_obj);
	sc_inode_table_set_drop(fs->itable, drop_obj_fd);
	sc_obj_path_set_func(obj_path, fs);
	pthread_mutex_init(&fs->fh_lock, NULL);
	fs->open_fhs = NULL;
	ret = sc_handlers_bufs_init(fs);
	if (ret < 0)
		goto err_teardown;
	ret = sc_creds_init(fs);
	if (ret < 0)
		goto err_teardown;
	*out = fs;
	return 0;

err_teardown:
	sc_fuse_free(fs);
	return ret;
err_drop_root:
	sc_xl_drop_fd(top, root_fd);
	free(fs);
	return ret;
}

void sc_fuse_free(struct sc_fuse *fs)
{
	if (!fs)
		return;
	teardown(fs);
	free(fs);
}

int sc_fuse_init_stack(struct sc_fuse *fs)
{
	return sc_xl_stack_init(fs->top, &sc_inode_root(fs->itable)->obj, &fs->conf);
}
