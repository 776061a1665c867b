/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xlator.c - lifecycle of translator stacks (see include/sc_xlator.h).
 *
 * A layer is a calloc'ed struct sc_xl whose ->priv its own ->destroy frees;
 * sc_xl_free() runs ->destroy and frees the struct.  The operations
 * themselves need no code here: the sc_xl_*() macros forward a NULL
 * operation to the layer below.  Lifecycle calls are not forwarded: every
 * layer's ->init, ->forget and ->destroy run, in the orders below.
 * sc_log() is here too: the one log function every translator uses.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
