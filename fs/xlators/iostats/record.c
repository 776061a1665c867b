/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record.c - the reader of an io-stats layer's record (include/
 * sc_iostats.h), beside the layer that writes it (iostats.c), so that the
 * text has one owner and `stackcrypt stats` none of its details.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sc_iostats.h"

/* The widths of sscanf's %s below: one less than the arrays they fill. */
_Static_assert(SC_IOSTATS_LABEL_MAX == 32 && SC_IOSTATS_OP_NAME_MAX == 32,
	       "the %31s conversions of sc_iostats_record_parse");

int sc_iostats_record_parse(char *text, struct sc_iostats_record *r)
{
	char *line, *save = NULL;
	int i = 0;

	memset(r, 0, sizeof(*r));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
		struct sc_iostats_op *op = &r->ops[r->nops];

		if (i == 0) {
			if (strcmp(line, SC_IOSTATS_MAGIC))
				return -EBADMSG;
		} else if (i == 1) {
			if (sscanf(line, "label %31s", r->label) != 1)
				return -EBADMSG;
		} else if (i == 2) {
			if (sscanf(line, "uptime_ns %llu", &r->uptime_ns) != 1)
				return -EBADMSG;
		} else {
			if (r->nops == SC_IOSTATS_MAX_OPS ||
			    sscanf(line, "%31s %llu %llu %llu %llu %llu %llu", op->name, &op->count,
				   &op->errors, &op->bytes, &op->timed, &op->sum_ns,
				   &op->p99_ns) != 7)
				return -EBADMSG;
			r->nops++;
		}
	}
	return i >= 3 ? 0 : -EBADMSG;
}
