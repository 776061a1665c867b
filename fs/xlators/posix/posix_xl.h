/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix_xl.h - the posix translator's constructor, for the stack builder
 * (fs/xlators/stack.c).  Everything else about the layer goes through
 * struct sc_xl_ops (include/sc_xlator.h).
 */
#ifndef SC_POSIX_XL_H
#define SC_POSIX_XL_H

struct sc_xl;

/* The bottom layer (id 0).  Returns 0 or -ENOMEM. */
int sc_posix_xl_new(struct sc_xl **out);

#endif /* SC_POSIX_XL_H */
