/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xlator.c - lifecycle of translator stacks (see include/sc_xlator.h).
 *
 * A layer is a calloc'ed struct sc_xl whose ->priv its own ->destroy frees;
 * sc_xl_free() runs ->destroy and frees the struct.  The operations
 * themselves need no code here: the sc_xl_*() macros forward a NULL
 * operation to the layer below.  Lifecycle calls are not forwarded: every
 * layer's ->init, ->forget and ->destroy run, in the orders below.
 * sc_log() is here too: the one log function every translator uses, with
 * sc_obj_name() to name a file in it, the layers' per-thread buffers, and
 * the escaping of reserved extended attribute names (xlator_i.h), which
 * the crypt and names layers share.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sc_crypto.h"	/* sc_wipe */
#include "sc_stack.h"
#include "sc_xlator.h"
#include "xlator_i.h"

static void log_stderr(enum sc_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	vfprintf(stderr, fmt, ap);
}

static sc_log_func log_func = log_stderr;

void sc_log_set_func(sc_log_func func)
{
	log_func = func ? func : log_stderr;
}

void sc_log(enum sc_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_func(level, fmt, ap);
	va_end(ap);
}

/* ---- per-thread buffers ---------------------------------------------------- */

static pthread_key_t g_tbuf_key;
static pthread_once_t g_tbuf_once = PTHREAD_ONCE_INIT;
static bool g_tbuf_key_ok;

/* At a thread's end: its list of buffers (the key's value), wiped and freed. */
static void tbufs_free(void *head)
{
	for (struct sc_tbuf *b = head, *next; b != NULL; b = next) {
		next = b->next;
		if (b->p)
			sc_wipe(b->p, b->cap);
		free(b->p);
		memset(b, 0, sizeof(*b));
	}
}

static void tbuf_key_init(void)
{
	g_tbuf_key_ok = pthread_key_create(&g_tbuf_key, tbufs_free) == 0;
}

uint8_t *sc_tbuf_get(struct sc_tbuf *b, size_t need)
{
	size_t ncap;

	if (need <= b->cap)
		return b->p;
	pthread_once(&g_tbuf_once, tbuf_key_init);
	if (!b->listed && g_tbuf_key_ok) {
		b->next = pthread_getspecific(g_tbuf_key);
		b->listed = pthread_setspecific(g_tbuf_key, b) == 0;
		if (!b->listed)
			b->next = NULL;
	}
	ncap = ((need > b->cap * 2 ? need : b->cap * 2) + 65535) & ~(size_t)65535;
	if (b->p)
		sc_wipe(b->p, b->cap);
	free(b->p);
	b->p = malloc(ncap);
	b->cap = b->p ? ncap : 0;
	return b->p;
}

bool sc_log_due(atomic_long *last)
{
	long now = (long)time(NULL), was = atomic_load(last);

	return now != was && atomic_compare_exchange_strong(last, &was, now);
}

static sc_obj_path_func path_func;
static void *path_ctx;

void sc_obj_path_set_func(sc_obj_path_func func, void *ctx)
{
	path_func = func;
	path_ctx = ctx;
}

int sc_obj_path(const struct sc_obj *obj, char *buf, size_t len)
{
	if (!path_func || !obj->in_table)
		return -ENOENT;
	return path_func(path_ctx, obj, buf, len);
}

/* Per thread, not on the stack: the callers are error paths of hot functions. */
static _Thread_local char obj_name[PATH_MAX + 64];

/* The fallback, saying that it is one. */
static const char *no_path(unsigned long long ino)
{
	snprintf(obj_name, sizeof(obj_name), "backing inode %llu (no path known)", ino);
	return obj_name;
}

const char *sc_obj_name_ino(struct sc_obj *obj, unsigned long long ino)
{
	return sc_obj_path(obj, obj_name, sizeof(obj_name)) == 0 ? obj_name : no_path(ino);
}

/* "DIR/NAME" in obj_name: true, or false when dir's path is unknown (or too long). */
static bool child_path(struct sc_obj *dir, const char *name)
{
	size_t n;

	if (sc_obj_path(dir, obj_name, sizeof(obj_name)) < 0)
		return false;
	n = strlen(obj_name);
	if (n && obj_name[n - 1] == '/')
		n--;	/* the root of a mount on / */
	return snprintf(obj_name + n, sizeof(obj_name) - n, "/%s", name) <
	       (int)(sizeof(obj_name) - n);
}

const char *sc_obj_child_name(struct sc_obj *dir, const char *name, unsigned long long ino)
{
	return child_path(dir, name) ? obj_name : no_path(ino);
}

/* This thread's entry places (integrity volumes, sc_xl_place_set). */
static __thread const struct sc_xl_place *t_place_at, *t_place_to;

void sc_xl_place_set(const struct sc_xl_place *at, const struct sc_xl_place *to)
{
	t_place_at = at;
	t_place_to = to;
}

const struct sc_xl_place *sc_xl_place_at(void)
{
	return t_place_at;
}

const struct sc_xl_place *sc_xl_place_to(void)
{
	return t_place_to;
}

/* This thread's lookup (sc_obj_lookup_begin): two stores per lookup, read only to log. */
static _Thread_local struct sc_obj *lookup_dir;
static _Thread_local const char *lookup_name;

void sc_obj_lookup_begin(struct sc_obj *dir, const char *name)
{
	lookup_dir = dir;
	lookup_name = name;
}

const char *sc_obj_lookup_name(struct sc_xl *below, struct sc_obj *obj)
{
	if (lookup_dir && child_path(lookup_dir, lookup_name))
		return obj_name;
	return sc_obj_name(below, obj);
}

const char *sc_obj_name(struct sc_xl *below, struct sc_obj *obj)
{
	struct stat st;

	if (sc_obj_path(obj, obj_name, sizeof(obj_name)) == 0)
		return obj_name;
	if (sc_xl_getattr(below, obj, NULL, &st) < 0) {
		snprintf(obj_name, sizeof(obj_name), "a file (no path known, nor its backing inode)");
		return obj_name;
	}
	return no_path((unsigned long long)st.st_ino);
}

int sc_xl_map(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, uint64_t len)
{
	for (; xl; xl = xl->below)
		if (xl->ops->map)
			return xl->ops->map(xl, obj, fh, len);
	return -EOPNOTSUPP;
}

ssize_t sc_xl_no_copy_file_range(struct sc_xl *xl, struct sc_obj *obj_in, struct sc_fh *fh_in,
				 off_t off_in, struct sc_obj *obj_out, struct sc_fh *fh_out,
				 off_t off_out, size_t len, int flags)
{
	(void)xl;
	(void)obj_in;
	(void)fh_in;
	(void)off_in;
	(void)obj_out;
	(void)fh_out;
	(void)off_out;
	(void)len;
	(void)flags;
	return -EOPNOTSUPP;
}

bool sc_xl_close_is_silent(struct sc_xl *xl, struct sc_obj *root)
{
	for (; xl; xl = xl->below)
		if (xl->ops->close_is_silent)
			return xl->ops->close_is_silent(xl, root);
	return false;
}

bool sc_xl_meta_ordered(struct sc_xl *xl, struct sc_obj *root)
{
	for (; xl; xl = xl->below)
		if (xl->ops->meta_ordered)
			return xl->ops->meta_ordered(xl, root);
	return false;
}

struct sc_jrnl *sc_xl_journal(struct sc_xl *xl)
{
	for (; xl; xl = xl->below)
		if (xl->ops->journal)
			return xl->ops->journal(xl);
	return NULL;
}

void sc_xl_free(struct sc_xl *xl)
{
	if (!xl)
		return;
	if (xl->ops->destroy)
		xl->ops->destroy(xl);
	free(xl);
}

static int init_from(struct sc_xl *xl, struct sc_obj *root, struct sc_xl_conf *conf)
{
	int ret;

	if (!xl)
		return 0;
	ret = init_from(xl->below, root, conf);
	if (ret < 0)
		return ret;
	return xl->ops->init ? xl->ops->init(xl, root, conf) : 0;
}

int sc_xl_stack_init(struct sc_xl *top, struct sc_obj *root, struct sc_xl_conf *conf)
{
	return init_from(top, root, conf);
}

void sc_xl_stack_forget(struct sc_xl *top, struct sc_obj *obj)
{
	struct sc_xl *xl;

	for (xl = top; xl; xl = xl->below)
		if (xl->ops->forget)
			xl->ops->forget(xl, obj);
}

static void adopt_from(struct sc_xl *xl, struct sc_obj *obj, const struct stat *st)
{
	if (!xl)
		return;
	adopt_from(xl->below, obj, st);
	if (xl->ops->adopt)
		xl->ops->adopt(xl, obj, st);
}

void sc_xl_stack_adopt(struct sc_xl *top, struct sc_obj *obj, const struct stat *st)
{
	adopt_from(top, obj, st);
}

void sc_xl_stack_free(struct sc_xl *top)
{
	while (top) {
		struct sc_xl *below = top->below;

		sc_xl_free(top);
		top = below;
	}
}

/* ---- reserved extended attribute names (xlator_i.h) ---------------------- */

#define XNAME_ESC	'!'

/* The byte after R in name (0 if name is R), or -1 if name does not start with R. */
static int after_reserved(const char *reserved, size_t rlen, const char *name)
{
	if (strncmp(name, reserved, rlen) != 0)
		return -1;
	return (unsigned char)name[rlen];
}

const char *sc_xname_down(const char *reserved, const char *name, char esc[SC_XNAME_ESC_SIZE])
{
	size_t rlen = strlen(reserved);
	int c = after_reserved(reserved, rlen, name);
	size_t len = strnlen(name, XATTR_NAME_MAX + 1);

	if ((c != '\0' && c != XNAME_ESC) || len > XATTR_NAME_MAX)
		return name;	/* too long: the layer below refuses it (ERANGE) */
	memcpy(esc, name, rlen);
	esc[rlen] = XNAME_ESC;
	memcpy(esc + rlen + 1, name + rlen, len - rlen + 1);
	return esc;
}

/*
 * How the name below is shown above: *skip is how many bytes of it to
 * leave out after R (0 or 1), or the return is false when it is not shown
 * at all (the layer's own names).
 */
static bool xname_up(const char *reserved, size_t rlen, const char *name, size_t *skip)
{
	int c = after_reserved(reserved, rlen, name);

	*skip = 0;
	if (c == '\0')
		return false;
	if (c != XNAME_ESC)
		return true;
	c = (unsigned char)name[rlen + 1];
	*skip = 1;
	return c == '\0' || c == XNAME_ESC;
}

ssize_t sc_xl_getxattr_esc(struct sc_xl *xl, const char *reserved, struct sc_obj *obj,
			   const char *name, void *buf, size_t size)
{
	char esc[SC_XNAME_ESC_SIZE];

	return sc_xl_getxattr(xl->below, obj, sc_xname_down(reserved, name, esc), buf, size);
}

int sc_xl_setxattr_esc(struct sc_xl *xl, const char *reserved, struct sc_obj *obj,
		       const char *name, const void *value, size_t size, int flags)
{
	char esc[SC_XNAME_ESC_SIZE];

	return sc_xl_setxattr(xl->below, obj, sc_xname_down(reserved, name, esc), value, size,
			      flags);
}

int sc_xl_removexattr_esc(struct sc_xl *xl, const char *reserved, struct sc_obj *obj,
			  const char *name)
{
	char esc[SC_XNAME_ESC_SIZE];

	return sc_xl_removexattr(xl->below, obj, sc_xname_down(reserved, name, esc));
}

/* The whole list below a filter (xlator_i.h). */
ssize_t sc_xl_listxattr_all(struct sc_xl *xl, struct sc_obj *obj, char *small,
			    size_t small_size, char **list)
{
	char *heap = NULL;
	ssize_t n;

	*list = small;
	n = sc_xl_listxattr(xl, obj, small, small_size);
	for (int tries = 0; n == -ERANGE && tries < 4; tries++) {
		free(heap);
		heap = NULL;
		*list = small;
		n = sc_xl_listxattr(xl, obj, NULL, 0);
		if (n <= 0)
			return n;
		heap = malloc((size_t)n);
		if (!heap)
			return -ENOMEM;
		*list = heap;
		n = sc_xl_listxattr(xl, obj, heap, (size_t)n);
	}
	if (n < 0) {
		free(heap);
		*list = small;
	}
	return n;
}

/*
 * The list as seen from above (xname_up).  The full list is fetched
 * (sc_xl_listxattr_all) so that a size query and a buffer sized from it
 * agree with what is returned; a small one on the stack, which holds the
 * lists of nearly every file (the header's name and a few more), so that
 * a list costs one call below.
 */
ssize_t sc_xl_listxattr_esc(struct sc_xl *xl, const char *reserved, struct sc_obj *obj,
			    char *buf, size_t size)
{
	size_t rlen = strlen(reserved);
	char small[SC_XL_LIST_ON_STACK], *list;
	ssize_t n, out = 0;

	n = sc_xl_listxattr_all(xl->below, obj, small, sizeof(small), &list);
	if (n < 0)
		goto out_free_list;
	for (ssize_t i = 0; i < n; ) {
		size_t len = strnlen(list + i, (size_t)(n - i)) + 1, skip, keep;

		if (xname_up(reserved, rlen, list + i, &skip)) {
			/* Copied in two pieces around the skipped "!". */
			keep = skip ? rlen : len;
			if (size) {
				if ((size_t)out + len - skip > size) {
					n = -ERANGE;
					goto out_free_list;
				}
				memcpy(buf + out, list + i, keep);
				memcpy(buf + out + keep, list + i + keep + skip, len - keep - skip);
			}
			out += (ssize_t)(len - skip);
		}
		i += (ssize_t)len;
	}
	n = out;
out_free_list:
	if (list != small)
		free(list);
	return n;
}
