/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iostats.c - the io-stats translator, after GlusterFS's debug/io-stats.
 *
 * Every operation of struct sc_xl_ops is forwarded to the layer below and
 * counted on the way back: calls, errors (a negative return), bytes where
 * they mean something (data read, written or copied; names handed up by
 * readdir; values of readlink and the xattr calls) and latency, the time
 * the layers below took (CLOCK_MONOTONIC around the call).  The layer
 * changes nothing that passes through it, so `-o stats` can put it at any
 * boundary of a stack without another layer knowing.
 *
 * Cost: the counters are relaxed atomic adds on one cache-line-aligned
 * block per operation (no lock; concurrent readers may see a call counted
 * in one field and not yet in another), and the latency goes into a fixed
 * log2/linear histogram (iostats_i.h) from which p99 is read when asked.
 * Calls, errors and bytes are exact.  The clock is what costs (a
 * clock_gettime() took 220 ns on the loaded test VM, two per timed call,
 * against two relaxed adds for the counts), so latency is sampled: the
 * first SC_IOSTATS_TIME_ALL calls of each operation are all timed, then
 * one in SC_IOSTATS_SAMPLE, chosen by the call's number (deterministic,
 * no per-thread state).  Mean and p99 are those of the timed calls.
 *
 * Reading: getxattr on the mount root of SC_IOSTATS_XATTR (the labels of
 * all io-stats layers, this one first) or SC_IOSTATS_XATTR.LABEL (this
 * layer's record).  Those reads are not counted: they measure, they are
 * not the load.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sc_xlator.h"
#include "iostats_i.h"
#include "iostats_xl.h"

#define IOSTATS_OPS(X)							\
	X(lookup) X(getattr) X(setattr) X(mknod) X(mkdir) X(symlink)	\
	X(link) X(unlink) X(rmdir) X(rename) X(readlink) X(statfs)	\
	X(getxattr) X(listxattr) X(setxattr) X(removexattr)		\
	X(open) X(create) X(read) X(write) X(flush) X(fsync)		\
	X(release) X(fallocate) X(lseek) X(copy_file_range)		\
	X(opendir) X(readdir) X(fsyncdir) X(releasedir) X(same)

enum st_op {
#define X(op) OP_##op,
	IOSTATS_OPS(X)
#undef X
	OP_COUNT
};

/* Every operation has a line in a record that sc_iostats_record_parse takes. */
_Static_assert(OP_COUNT <= SC_IOSTATS_MAX_OPS, "more operations than a record holds");

static const char *const op_names[OP_COUNT] = {
#define X(op) [OP_##op] = #op,
	IOSTATS_OPS(X)
#undef X
};

/* One per operation, on cache lines of its own: two threads doing
 * different operations do not bounce a line between them. */
struct st_counters {
	uint64_t	count;
	uint64_t	errors;
	uint64_t	bytes;
	uint64_t	timed;		/* calls in sum_ns and hist */
	uint64_t	sum_ns;
	uint64_t	hist[SC_IOSTATS_BUCKETS];
} __attribute__((aligned(64)));

struct st_priv {
	struct st_counters	ops[OP_COUNT];
	char			label[SC_IOSTATS_LABEL_MAX];
	uint64_t		start_ns;
};

/* ---- the histogram ------------------------------------------------------ */

unsigned int sc_iostats_bucket(uint64_t ns)
{
	unsigned int e;

	if (ns < (1u << SC_IOSTATS_SUB_BITS))
		return (unsigned int)ns;
	e = 63u - (unsigned int)__builtin_clzll(ns);
	if (e >= SC_IOSTATS_MAX_LOG2)
		return SC_IOSTATS_BUCKETS - 1;
	return ((e - SC_IOSTATS_SUB_BITS + 1) << SC_IOSTATS_SUB_BITS) +
	       (unsigned int)((ns >> (e - SC_IOSTATS_SUB_BITS)) &
			      ((1u << SC_IOSTATS_SUB_BITS) - 1));
}

uint64_t sc_iostats_bucket_max(unsigned int b)
{
	unsigned int e, m, sub = 1u << SC_IOSTATS_SUB_BITS;

	if (b < sub)
		return b;
	if (b >= SC_IOSTATS_BUCKETS)
		b = SC_IOSTATS_BUCKETS - 1;
	e = (b >> SC_IOSTATS_SUB_BITS) + SC_IOSTATS_SUB_BITS - 1;
	m = b & (sub - 1);
	return ((uint64_t)(sub + m + 1) << (e - SC_IOSTATS_SUB_BITS)) - 1;
}

uint64_t sc_iostats_quantile(const uint64_t *hist, unsigned int permille)
{
	uint64_t total = 0, rank, seen = 0;
	unsigned int b;

	for (b = 0; b < SC_IOSTATS_BUCKETS; b++)
		total += hist[b];
	if (!total)
		return 0;
	/* ceil(total * permille / 1000) without overflow for any real count */
	rank = total / 1000 * permille + ((total % 1000) * permille + 999) / 1000;
	if (rank < 1)
		rank = 1;
	for (b = 0; b < SC_IOSTATS_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= rank)
			return sc_iostats_bucket_max(b);
	}
	return sc_iostats_bucket_max(SC_IOSTATS_BUCKETS - 1);
}

/* ---- counting ----------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void add(uint64_t *c, uint64_t v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

/*
 * Counts a call of op as it starts.  Returns its start time if it is one
 * of the calls timed, else 0 (CLOCK_MONOTONIC is never 0 once booted).
 */
static uint64_t start(struct sc_xl *xl, enum st_op op)
{
	struct st_counters *c = &((struct st_priv *)xl->priv)->ops[op];
	uint64_t n = __atomic_fetch_add(&c->count, 1, __ATOMIC_RELAXED);

	if (n < SC_IOSTATS_TIME_ALL || !(n & (SC_IOSTATS_SAMPLE - 1)))
		return now_ns();
	return 0;
}

/* Counts the end of a call of op that start() gave t0 and that returned ret. */
static void done(struct sc_xl *xl, enum st_op op, uint64_t t0, long long ret, uint64_t bytes)
{
	struct st_counters *c = &((struct st_priv *)xl->priv)->ops[op];
	uint64_t ns;

	if (ret < 0)
		add(&c->errors, 1);
	else if (bytes)
		add(&c->bytes, bytes);
	if (!t0)
		return;
	ns = now_ns() - t0;
	add(&c->timed, 1);
	add(&c->sum_ns, ns);
	add(&c->hist[sc_iostats_bucket(ns)], 1);
}

/* Bytes a call that returned a count moved: the count, none on error. */
static uint64_t moved(long long ret)
{
	return ret > 0 ? (uint64_t)ret : 0;
}

/* ---- reading: the virtual extended attributes ------------------------- */

/* 1 for SC_IOSTATS_XATTR itself, 2 for SC_IOSTATS_XATTR.LABEL, else 0. */
static int stats_name(const char *name)
{
	size_t n = sizeof(SC_IOSTATS_XATTR) - 1;

	if (strncmp(name, SC_IOSTATS_XATTR, n) != 0)
		return 0;
	if (name[n] == '\0')
		return 1;
	return name[n] == '.' ? 2 : 0;
}

static bool label_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len >= SC_IOSTATS_LABEL_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_>-", s[i]) || !s[i])
			return false;
	return true;
}

/* True if buf (n bytes) is a list of labels, one per line. */
static bool labels_ok(const char *buf, size_t n)
{
	size_t i = 0;

	while (i < n) {
		const char *nl = memchr(buf + i, '\n', n - i);

		if (!nl || !label_ok(buf + i, (size_t)(nl - buf - i)))
			return false;
		i = (size_t)(nl - buf) + 1;
	}
	return n > 0;
}

/* Copies the len bytes of text into buf as getxattr does (size 0: the length). */
static ssize_t answer(const char *text, size_t len, void *buf, size_t size)
{
	if (!size)
		return (ssize_t)len;
	if (size < len)
		return -ERANGE;
	memcpy(buf, text, len);
	return (ssize_t)len;
}

/*
 * Our label, then what the layers below answer for the same name if that
 * is a list of labels (another io-stats layer's); anything else below (no
 * such attribute, or a value stored while stats were off) is left out.
 */
static ssize_t answer_labels(struct sc_xl *xl, struct sc_obj *root, void *buf, size_t size)
{
	struct st_priv *sp = xl->priv;
	char text[SC_XL_MAX * 2 * SC_IOSTATS_LABEL_MAX + SC_IOSTATS_LABEL_MAX];
	size_t len = strlen(sp->label);
	ssize_t n;

	memcpy(text, sp->label, len);
	text[len++] = '\n';
	n = sc_xl_getxattr(xl->below, root, SC_IOSTATS_XATTR, text + len, sizeof(text) - len);
	if (n > 0 && labels_ok(text + len, (size_t)n))
		len += (size_t)n;
	return answer(text, len, buf, size);
}

/*
 * This layer's record (SC_IOSTATS_MAGIC); -ENOMEM or the length.  The
 * record changes from one call to the next (the uptime, and counters of
 * calls running meanwhile gain digits), so a size query (size 0) answers
 * the widest record there can be, not the current one: a buffer of that
 * size never gets ERANGE, and the read returns the real length.
 */
static ssize_t answer_record(struct sc_xl *xl, void *buf, size_t size)
{
	struct st_priv *sp = xl->priv;
	size_t cap = 128 + OP_COUNT * (32 + 6 * 21), len;
	uint64_t hist[SC_IOSTATS_BUCKETS];
	ssize_t ret;
	char *text;
	int op, n;

	if (!size)
		return (ssize_t)cap;
	text = malloc(cap);
	if (!text)
		return -ENOMEM;
	n = snprintf(text, cap, SC_IOSTATS_MAGIC "\nlabel %s\nuptime_ns %llu\n", sp->label,
		     (unsigned long long)(now_ns() - sp->start_ns));
	len = (size_t)n;
	for (op = 0; op < OP_COUNT; op++) {
		struct st_counters *c = &sp->ops[op];

		for (unsigned int b = 0; b < SC_IOSTATS_BUCKETS; b++)
			hist[b] = __atomic_load_n(&c->hist[b], __ATOMIC_RELAXED);
		n = snprintf(text + len, cap - len, "%s %llu %llu %llu %llu %llu %llu\n", op_names[op],
			     (unsigned long long)__atomic_load_n(&c->count, __ATOMIC_RELAXED),
			     (unsigned long long)__atomic_load_n(&c->errors, __ATOMIC_RELAXED),
			     (unsigned long long)__atomic_load_n(&c->bytes, __ATOMIC_RELAXED),
			     (unsigned long long)__atomic_load_n(&c->timed, __ATOMIC_RELAXED),
			     (unsigned long long)__atomic_load_n(&c->sum_ns, __ATOMIC_RELAXED),
			     (unsigned long long)sc_iostats_quantile(hist, 990));
		len += (size_t)n;	/* cap holds every line at its widest */
	}
	ret = answer(text, len, buf, size);
	free(text);
	return ret;
}

/* ---- the operations ----------------------------------------------------- */

static int st_init(struct sc_xl *xl, struct sc_obj *root, struct sc_xl_conf *conf)
{
	(void)root;
	(void)conf;
	((struct st_priv *)xl->priv)->start_ns = now_ns();
	return 0;
}

static void st_destroy(struct sc_xl *xl)
{
	free(xl->priv);
	xl->priv = NULL;
}

/*
 * ST_FORWARD(op, type, bytes, (params), (args)) defines st_op(): calls op
 * on the layer below with args, counts it with the bytes expression (which
 * may use ret), returns what the layer below returned.  The operations
 * that need more than that are written out after.
 */
#define ST_ARGS(...)	__VA_ARGS__
#define ST_FORWARD(op, type, bytes, params, args)				\
	static type st_##op(struct sc_xl *xl, ST_ARGS params)			\
	{									\
		uint64_t t0 = start(xl, OP_##op);				\
		type ret = sc_xl_##op(xl->below, ST_ARGS args);			\
										\
		done(xl, OP_##op, t0, ret, (bytes));				\
		return ret;							\
	}

ST_FORWARD(lookup, int, 0,
	   (struct sc_obj *dir, const char *name, int *fd_out, struct stat *st),
	   (dir, name, fd_out, st))
ST_FORWARD(getattr, int, 0,
	   (struct sc_obj *obj, struct sc_fh *fh, struct stat *st),
	   (obj, fh, st))
ST_FORWARD(setattr, int, 0,
	   (struct sc_obj *obj, struct sc_fh *fh, const struct stat *attr, int valid,
	    struct stat *st),
	   (obj, fh, attr, valid, st))
ST_FORWARD(mknod, int, 0,
	   (struct sc_obj *dir, const char *name, mode_t mode, dev_t rdev, int *fd_out,
	    struct stat *st),
	   (dir, name, mode, rdev, fd_out, st))
ST_FORWARD(mkdir, int, 0,
	   (struct sc_obj *dir, const char *name, mode_t mode, int *fd_out, struct stat *st),
	   (dir, name, mode, fd_out, st))
ST_FORWARD(symlink, int, 0,
	   (struct sc_obj *dir, const char *name, const char *target, int *fd_out,
	    struct stat *st),
	   (dir, name, target, fd_out, st))
ST_FORWARD(link, int, 0,
	   (struct sc_obj *obj, struct sc_obj *newdir, const char *newname, struct stat *st),
	   (obj, newdir, newname, st))
ST_FORWARD(unlink, int, 0, (struct sc_obj *dir, const char *name), (dir, name))
ST_FORWARD(rmdir, int, 0, (struct sc_obj *dir, const char *name), (dir, name))
ST_FORWARD(rename, int, 0,
	   (struct sc_obj *dir, const char *name, struct sc_obj *newdir, const char *newname,
	    unsigned int flags),
	   (dir, name, newdir, newname, flags))
ST_FORWARD(readlink, ssize_t, moved(ret),
	   (struct sc_obj *obj, char *buf, size_t size), (obj, buf, size))
ST_FORWARD(statfs, int, 0, (struct sc_obj *obj, struct statvfs *sv), (obj, sv))
ST_FORWARD(listxattr, ssize_t, size ? moved(ret) : 0,
	   (struct sc_obj *obj, char *buf, size_t size), (obj, buf, size))
ST_FORWARD(open, int, 0, (struct sc_obj *obj, struct sc_fh *fh), (obj, fh))
ST_FORWARD(create, int, 0,
	   (struct sc_obj *dir, const char *name, mode_t mode, struct sc_fh *fh, int *fd_out,
	    struct stat *st),
	   (dir, name, mode, fh, fd_out, st))
ST_FORWARD(read, ssize_t, moved(ret),
	   (struct sc_obj *obj, struct sc_fh *fh, void *buf, size_t size, off_t off),
	   (obj, fh, buf, size, off))
ST_FORWARD(write, ssize_t, moved(ret),
	   (struct sc_obj *obj, struct sc_fh *fh, const void *buf, size_t size, off_t off),
	   (obj, fh, buf, size, off))
ST_FORWARD(flush, int, 0, (struct sc_obj *obj, struct sc_fh *fh), (obj, fh))
ST_FORWARD(fsync, int, 0,
	   (struct sc_obj *obj, struct sc_fh *fh, int datasync), (obj, fh, datasync))
ST_FORWARD(release, int, 0, (struct sc_obj *obj, struct sc_fh *fh), (obj, fh))
ST_FORWARD(fallocate, int, 0,
	   (struct sc_obj *obj, struct sc_fh *fh, int mode, off_t off, off_t len),
	   (obj, fh, mode, off, len))
ST_FORWARD(lseek, off_t, 0,
	   (struct sc_obj *obj, struct sc_fh *fh, off_t off, int whence),
	   (obj, fh, off, whence))
ST_FORWARD(copy_file_range, ssize_t, moved(ret),
	   (struct sc_obj *obj_in, struct sc_fh *fh_in, off_t off_in, struct sc_obj *obj_out,
	    struct sc_fh *fh_out, off_t off_out, size_t len, int flags),
	   (obj_in, fh_in, off_in, obj_out, fh_out, off_out, len, flags))
ST_FORWARD(opendir, int, 0, (struct sc_obj *obj, struct sc_fh *fh), (obj, fh))
ST_FORWARD(fsyncdir, int, 0,
	   (struct sc_obj *obj, struct sc_fh *fh, int datasync), (obj, fh, datasync))
ST_FORWARD(releasedir, int, 0, (struct sc_obj *obj, struct sc_fh *fh), (obj, fh))

/* Never fails: counted as a call without error. */
static bool st_same(struct sc_xl *xl, const struct sc_obj *obj, int fd)
{
	uint64_t t0 = start(xl, OP_same);
	bool ret = sc_xl_same(xl->below, obj, fd);

	done(xl, OP_same, t0, 0, 0);
	return ret;
}

static ssize_t st_getxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
			   void *buf, size_t size)
{
	struct st_priv *sp = xl->priv;
	uint64_t t0;
	ssize_t ret;
	int which = obj->is_root ? stats_name(name) : 0;

	if (which == 1)
		return answer_labels(xl, obj, buf, size);
	if (which == 2) {
		if (!strcmp(name + sizeof(SC_IOSTATS_XATTR), sp->label))
			return answer_record(xl, buf, size);
		return sc_xl_getxattr(xl->below, obj, name, buf, size);	/* another layer's */
	}
	t0 = start(xl, OP_getxattr);
	ret = sc_xl_getxattr(xl->below, obj, name, buf, size);
	done(xl, OP_getxattr, t0, ret, size ? moved(ret) : 0);
	return ret;
}

static int st_setxattr(struct sc_xl *xl, struct sc_obj *obj, const char *name,
		       const void *value, size_t size, int flags)
{
	uint64_t t0 = start(xl, OP_setxattr);
	int ret;

	/* Our names on the root are read-only and never reach the backing directory. */
	if (obj->is_root && stats_name(name))
		ret = -EPERM;
	else
		ret = sc_xl_setxattr(xl->below, obj, name, value, size, flags);
	done(xl, OP_setxattr, t0, ret, size);
	return ret;
}

static int st_removexattr(struct sc_xl *xl, struct sc_obj *obj, const char *name)
{
	uint64_t t0 = start(xl, OP_removexattr);
	int ret;

	if (obj->is_root && stats_name(name))
		ret = -EPERM;
	else
		ret = sc_xl_removexattr(xl->below, obj, name);
	done(xl, OP_removexattr, t0, ret, 0);
	return ret;
}

/* readdir's fill(), wrapped to count the name bytes of the entries taken. */
struct st_fill {
	int		(*fill)(void *ctx, const struct sc_dirent *de);
	void		*ctx;
	uint64_t	bytes;
};

static int st_fill_one(void *ctx, const struct sc_dirent *de)
{
	struct st_fill *f = ctx;
	int full = f->fill(f->ctx, de);

	if (!full)
		f->bytes += strlen(de->name);
	return full;
}

static int st_readdir(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off,
		      int (*fill)(void *ctx, const struct sc_dirent *de), void *ctx)
{
	struct st_fill f = { fill, ctx, 0 };
	uint64_t t0 = start(xl, OP_readdir);
	int ret = sc_xl_readdir(xl->below, obj, fh, off, st_fill_one, &f);

	done(xl, OP_readdir, t0, ret, f.bytes);
	return ret;
}

/*
 * ->forget and ->adopt are left out: the stack calls them on every layer
 * itself (not forwarded), and this layer keeps no per-inode state.
 */
static const struct sc_xl_ops iostats_ops = {
	.name			= "iostats",
	.init			= st_init,
	.destroy		= st_destroy,
	.same			= st_same,
	.lookup			= st_lookup,
	.getattr		= st_getattr,
	.setattr		= st_setattr,
	.mknod			= st_mknod,
	.mkdir			= st_mkdir,
	.symlink		= st_symlink,
	.link			= st_link,
	.unlink			= st_unlink,
	.rmdir			= st_rmdir,
	.rename			= st_rename,
	.readlink		= st_readlink,
	.statfs			= st_statfs,
	.getxattr		= st_getxattr,
	.listxattr		= st_listxattr,
	.setxattr		= st_setxattr,
	.removexattr		= st_removexattr,
	.open			= st_open,
	.create			= st_create,
	.read			= st_read,
	.write			= st_write,
	.flush			= st_flush,
	.fsync			= st_fsync,
	.release		= st_release,
	.fallocate		= st_fallocate,
	.lseek			= st_lseek,
	.copy_file_range	= st_copy_file_range,
	.opendir		= st_opendir,
	.readdir		= st_readdir,
	.fsyncdir		= st_fsyncdir,
	.releasedir		= st_releasedir,
};

int sc_iostats_xl_new(struct sc_xl *below, const char *where, struct sc_xl **out)
{
	struct st_priv *sp;
	struct sc_xl *xl;

	if (!below || !where || !label_ok(where, strlen(where)))
		return -EINVAL;
	xl = calloc(1, sizeof(*xl));
	sp = aligned_alloc(64, (sizeof(*sp) + 63) & ~(size_t)63);
	if (!xl || !sp) {
		free(xl);
		free(sp);
		return -ENOMEM;
	}
	memset(sp, 0, sizeof(*sp));
	strcpy(sp->label, where);
	sp->start_ns = now_ns();
	xl->ops = &iostats_ops;
	xl->below = below;
	xl->id = below->id;	/* no private slot used: see iostats_i.h */
	xl->priv = sp;
	*out = xl;
	return 0;
}
