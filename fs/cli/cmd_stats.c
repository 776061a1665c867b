/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_stats.c - `stackcrypt stats [--json] MOUNTPOINT`: what the io-stats
 * layers of a mount made with -o stats counted (fs/xlators/iostats), one
 * table per layer boundary, or JSON.
 *
 * The daemon is asked through the virtual extended attributes of
 * include/sc_iostats.h on the mount's root: first the list of labels,
 * then each label's record (parsed by sc_iostats_record_parse).  Nothing is stored anywhere; a mount without io-stats
 * answers ENODATA (the attribute does not exist), and that is said in one
 * line with exit status 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "sc_cmd.h"
#include "sc_iostats.h"

#define MAX_LAYERS	8

static const char stats_help[] =
"Usage: stackcrypt stats [--json] MOUNTPOINT\n"
"Show what the io-stats layers of a mount made with -o stats counted: for\n"
"each layer boundary (fuse>crypt: under the front end, above the crypt\n"
"layer) and each operation, the calls, errors, bytes and the mean and 99th\n"
"percentile latency in microseconds (p99 is read from a histogram: at most\n"
"12.5 % above the true value).  Counts and bytes are exact; latency is that\n"
"of the first 256 calls of each operation and one in 8 after.  Operations\n"
"not called yet are left out of the table.  The first line names the\n"
"transport the kernel serves the mount by (io_uring or /dev/fuse read/write).\n"
"\n"
"Options:\n"
"  --json               one JSON object, every operation of every layer\n"
"                       (timed: the calls behind mean and p99)\n"
"  -h, --help           show this help\n"
"\n"
"Exit status: 0 shown, 1 no io-stats on that mount (or not its root),\n"
"2 usage, 11 MOUNTPOINT unreachable.\n";

static void stats_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void stats_err(const char *fmt, ...)
{
	va_list ap;

	fputs("stackcrypt stats: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int stats_usage(const char *fmt, const char *arg)
{
	fputs("stackcrypt stats: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'stackcrypt stats --help'.\n", stderr);
	return SC_EXIT_USAGE;
}

/*
 * The value of the extended attribute name of path, NUL-terminated, in a
 * malloc'ed *out.  Returns its length or -errno.  The record grows while
 * it is read (counters get digits): asked again on ERANGE.
 */
static ssize_t read_xattr(const char *path, const char *name, char **out)
{
	ssize_t n;
	char *buf;

	for (int tries = 0; tries < 8; tries++) {
		n = getxattr(path, name, NULL, 0);
		if (n < 0)
			return -errno;
		buf = malloc((size_t)n + 1024);
		if (!buf)
			return -ENOMEM;
		n = getxattr(path, name, buf, (size_t)n + 1023);
		if (n >= 0) {
			buf[n] = '\0';
			*out = buf;
			return n;
		}
		n = -errno;
		free(buf);
		if (n != -ERANGE)
			return n;
	}
	return -ERANGE;
}

static double mean_us(const struct sc_iostats_op *r)
{
	return r->timed ? (double)r->sum_ns / (double)r->timed / 1000.0 : 0.0;
}

static void print_table(const char *transport, const struct sc_iostats_record *l, size_t n)
{
	if (transport)
		printf("transport: %s\n\n", transport);
	for (size_t i = 0; i < n; i++, l++) {
		size_t shown = 0;

		printf("%s%s (up %.1f s)\n", i ? "\n" : "", l->label, (double)l->uptime_ns / 1e9);
		printf("  %-16s %10s %8s %14s %10s %10s\n", "operation", "count", "errors",
		       "bytes", "mean us", "p99 us");
		for (size_t j = 0; j < l->nops; j++) {
			const struct sc_iostats_op *r = &l->ops[j];

			if (!r->count)
				continue;
			printf("  %-16s %10llu %8llu %14llu %10.1f %10.1f\n", r->name, r->count,
			       r->errors, r->bytes, mean_us(r), (double)r->p99_ns / 1000.0);
			shown++;
		}
		if (!shown)
			printf("  (no calls yet)\n");
	}
}

/* s as a JSON string (labels and operation names need no more than this). */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(const char *mnt, const char *transport, const struct sc_iostats_record *l,
		       size_t n)
{
	printf("{\"mountpoint\": ");
	json_str(mnt);
	if (transport) {
		printf(", \"transport\": ");
		json_str(transport);
	}
	printf(", \"layers\": [");
	for (size_t i = 0; i < n; i++, l++) {
		printf("%s\n  {\"label\": ", i ? "," : "");
		json_str(l->label);
		printf(", \"uptime_s\": %.3f, \"ops\": {", (double)l->uptime_ns / 1e9);
		for (size_t j = 0; j < l->nops; j++) {
			const struct sc_iostats_op *r = &l->ops[j];

			printf("%s\n    ", j ? "," : "");
			json_str(r->name);
			printf(": {\"count\": %llu, \"errors\": %llu, \"bytes\": %llu, "
			       "\"timed\": %llu, \"mean_us\": %.3f, \"p99_us\": %.3f}", r->count,
			       r->errors, r->bytes, r->timed, mean_us(r), (double)r->p99_ns / 1000.0);
		}
		printf("}}");
	}
	printf("\n]}\n");
}

/* Reads every layer's record into layers[] (*n of them).  Returns an exit status. */
static int read_layers(const char *mnt, struct sc_iostats_record *layers, size_t *n)
{
	char name[sizeof(SC_IOSTATS_XATTR) + SC_IOSTATS_LABEL_MAX], *labels, *label, *save = NULL;
	ssize_t len;
	int code = SC_EXIT_OK;

	len = read_xattr(mnt, SC_IOSTATS_XATTR, &labels);
	if (len == -ENODATA || len == -EOPNOTSUPP || len == -EPERM) {
		stats_err("%s: no io-stats here (not the root of a mount made with -o stats)",
			  mnt);
		return SC_EXIT_FAIL;
	}
	if (len < 0) {
		stats_err("%s: %s", mnt, strerror((int)-len));
		return len == -ENOMEM ? SC_EXIT_FAIL : SC_EXIT_MOUNTPOINT;
	}
	*n = 0;
	for (label = strtok_r(labels, "\n", &save); label; label = strtok_r(NULL, "\n", &save)) {
		char *rec;

		if (*n == MAX_LAYERS || strlen(label) >= SC_IOSTATS_LABEL_MAX) {
			stats_err("%s: unexpected list of io-stats layers", mnt);
			code = SC_EXIT_FAIL;
			break;
		}
		snprintf(name, sizeof(name), "%s.%s", SC_IOSTATS_XATTR, label);
		len = read_xattr(mnt, name, &rec);
		if (len < 0) {
			stats_err("%s: reading the io-stats of %s: %s", mnt, label,
				  strerror((int)-len));
			code = SC_EXIT_FAIL;
			break;
		}
		if (sc_iostats_record_parse(rec, &layers[*n]) < 0) {
			stats_err("%s: the io-stats record of %s is not understood", mnt, label);
			free(rec);
			code = SC_EXIT_FAIL;
			break;
		}
		free(rec);
		(*n)++;
	}
	free(labels);
	return code;
}

int sc_cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json",	no_argument,	NULL, 'j' },
		{ "help",	no_argument,	NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct sc_iostats_record *layers;
	char *transport = NULL;
	size_t n = 0;
	int c, json = 0, code;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(stats_help, stdout);
			return SC_EXIT_OK;
		default:
			return stats_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return stats_usage("missing MOUNTPOINT%s", "");
	if (optind + 1 < argc)
		return stats_usage("unexpected argument '%s'", argv[optind + 1]);

	layers = calloc(MAX_LAYERS, sizeof(*layers));
	if (!layers) {
		stats_err("out of memory");
		return SC_EXIT_FAIL;
	}
	code = read_layers(argv[optind], layers, &n);
	/* the daemon's transport: a daemon older than this build has none to tell */
	if (code == SC_EXIT_OK && read_xattr(argv[optind], SC_TRANSPORT_XATTR, &transport) < 0)
		transport = NULL;
	if (code == SC_EXIT_OK) {
		if (json)
			print_json(argv[optind], transport, layers, n);
		else
			print_table(transport, layers, n);
	}
	free(transport);
	free(layers);
	return code;
}
