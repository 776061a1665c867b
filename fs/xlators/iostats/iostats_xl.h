/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iostats_xl.h - the io-stats translator's constructor, for the stack
 * builder (fs/xlators/stack.c).  Everything else about the layer goes
 * through struct sc_xl_ops (include/sc_xlator.h); what it answers through
 * a mount is include/sc_iostats.h.
 */
#ifndef SC_IOSTATS_XL_H
#define SC_IOSTATS_XL_H

struct sc_xl;

/*
 * An io-stats layer over below, labelled where (1 to SC_IOSTATS_LABEL_MAX-1
 * of [a-z0-9_>-]).  It uses no private slot of sc_obj/sc_fh, so it takes
 * below's id and leaves the depth of the stack unchanged.  Returns 0,
 * -EINVAL (bad label, no below) or -ENOMEM; *out is freed with sc_xl_free().
 */
int sc_iostats_xl_new(struct sc_xl *below, const char *where, struct sc_xl **out);

#endif /* SC_IOSTATS_XL_H */
