/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck.c - "stackcrypt fsck": check every file of a volume offline.
 *
 * A tool, not the mount path: it unlocks the volume, walks the backing
 * directory with plain file I/O and uses the crypto library directly.  For
 * every regular backing file it checks, in order:
 *   1. the header xattr is present and has the right size;
 *   2. the header's MAC verifies under the volume's master key, and the
 *      header names the volume's cipher and block size (sc_fkey_new);
 *   3. every byte of the file can be read from the backing filesystem
 *      (pread; catches media errors, EIO);
 *   4. every data unit is accepted by sc_fkey_decrypt under the format's
 *      size and tail rules;
 *   5. for aes-xts and aes-cbc: no data unit is partly zeros.  A stored
 *      unit is either all zeros (a hole, reads as zeros) or ciphertext, in
 *      which a 512-byte run of zeros has probability 2^-4096; a unit that is
 *      both was torn (half written before a crash, or a hole punched into
 *      it) and decrypts to garbage.
 * aes-xts and aes-cbc carry no per-unit integrity tag, so a unit whose
 * ciphertext was altered in place decrypts to different plaintext without
 * any of these checks noticing; fsck does not claim to find that.
 *
 * Read-only unless --repair, which renames each file that failed 1-5 to
 * NAME.stackcrypt-quarantine-N beside it (never deletes anything); later
 * runs skip quarantined files and count them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "sc_cmd.h"
#include "sc_crypto.h"
#include "sc_volume.h"
#include "volume_i.h"

#define QUARANTINE_TAG	".stackcrypt-quarantine-"
#define CHUNK		(1u << 20)	/* read size; a multiple of every block size */
#define ZERO_RUN	512		/* torn-unit check granularity (bytes) */
#define HDR_READ_MAX	256		/* read more than SC_HDR_MAX to see oversize headers */

struct bad_file {
	char	*rel;
	bool	quarantine;	/* the file's contents are at fault: --repair moves it */
	bool	nohdr;		/* a regular file with data and no header */
};

struct fsck {
	const char		*backing;
	struct sc_volume	*vol;
	bool			repair, progress;
	uint32_t		bs;
	uint8_t			*buf;		/* CHUNK + bs */
	uint64_t		files, dirs, bytes, quarantined;
	uint64_t		with_data, no_header;	/* for the lost-xattrs hint */
	struct bad_file		*bad;
	size_t			nbad, capbad;
	bool			progress_shown;
	struct timespec		last;
};

static void progress_clear(struct fsck *f)
{
	if (f->progress_shown) {
		fputs("\r\033[K", stderr);
		f->progress_shown = false;
	}
}

static void progress(struct fsck *f)
{
	struct timespec now;

	if (!f->progress)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - f->last.tv_sec) * 1000000000ll + (now.tv_nsec - f->last.tv_nsec) <
	    250000000ll)
		return;
	f->last = now;
	fprintf(stderr, "\rchecked %" PRIu64 " file%s, %.1f MiB, %zu problem%s",
		f->files, f->files == 1 ? "" : "s", f->bytes / 1048576.0, f->nbad,
		f->nbad == 1 ? "" : "s");
	f->progress_shown = true;
}

/* Reports one problem (stdout, "BACKING/REL: reason") and remembers the file. */
static int problem(struct fsck *f, const char *rel, bool quarantine, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int problem(struct fsck *f, const char *rel, bool quarantine, const char *fmt, ...)
{
	va_list ap;

	progress_clear(f);
	printf("%s/%s: ", f->backing, rel);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (f->nbad == f->capbad) {
		size_t cap = f->capbad ? 2 * f->capbad : 64;
		struct bad_file *nb = realloc(f->bad, cap * sizeof(*nb));

		if (!nb)
			return -ENOMEM;
		f->bad = nb;
		f->capbad = cap;
	}
	f->bad[f->nbad].rel = strdup(rel);
	if (!f->bad[f->nbad].rel)
		return -ENOMEM;
	f->bad[f->nbad].quarantine = quarantine;
	f->bad[f->nbad].nohdr = false;
	f->nbad++;
	return 0;
}

static bool all_zero(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Check 5: in [off, off + len) of the stored bytes (off a multiple of the
 * block size), finds a unit that is not all zeros but has an all-zero
 * 512-byte run at a 512-byte boundary.  Returns its offset, or -1.
 */
static int64_t torn_unit(const struct fsck *f, const uint8_t *p, uint64_t off, size_t len)
{
	size_t u, s;

	for (u = 0; u < len; u += f->bs) {
		size_t ulen = len - u < f->bs ? len - u : f->bs;
		bool zero_run = false;

		if (ulen < 2 * ZERO_RUN)
			continue;	/* a one-sector unit is a hole or not: nothing torn */
		for (s = 0; s + ZERO_RUN <= ulen && !zero_run; s += ZERO_RUN)
			zero_run = all_zero(p + u + s, ZERO_RUN);
		if (zero_run && !all_zero(p + u, ulen))
			return (int64_t)(off + u);
	}
	return -1;
}

/* Checks 3-5 on an open file of size `size`.  0, or 1 after reporting a problem. */
static int check_contents(struct fsck *f, struct sc_fkey *fk, int fd, const char *rel,
			  uint64_t size)
{
	bool check_torn = sc_mkey_cipher(f->vol->mkey) != SC_CIPHER_NULL;
	uint64_t off = 0;
	int r;

	while (off < size) {
		uint64_t end = off + CHUNK;
		size_t len, got = 0;
		int64_t torn;

		/*
		 * A final unit of 1..15 bytes is decrypted together with the
		 * unit before it: never let a chunk end just before the last
		 * unit, so the last chunk holds both.
		 */
		if (end >= size || size - end <= f->bs)
			end = size;
		len = end - off;
		while (got < len) {
			ssize_t n = pread(fd, f->buf + got, len - got, off + got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return problem(f, rel, true, "read error at offset %" PRIu64 ": %s",
					       off + got, strerror(errno)) ?: 1;
			if (n == 0)
				return problem(f, rel, false, "file shrank to %" PRIu64 " bytes "
					       "while being checked (is the volume mounted?)",
					       off + got) ?: 1;
			got += n;
		}
		if (check_torn) {
			torn = torn_unit(f, f->buf, off, len);
			if (torn >= 0)
				return problem(f, rel, true, "data unit at offset %" PRId64 " is "
					       "partly zeros (torn write or a hole inside a unit): "
					       "it decrypts to garbage", torn) ?: 1;
		}
		r = sc_fkey_decrypt(fk, off, f->buf, f->buf, len, size);
		if (r)
			return problem(f, rel, true, "bytes %" PRIu64 "..%" PRIu64 " do not "
				       "decrypt under the format's rules: %s", off, end,
				       strerror(-r)) ?: 1;
		f->bytes += len;
		off = end;
		progress(f);
	}
	return 0;
}

/* Checks 1-5 on one regular file.  0 clean, 1 problem reported, -errno fatal. */
static int check_file(struct fsck *f, int dirfd, const char *name, const char *rel)
{
	uint8_t hdr[HDR_READ_MAX];
	struct sc_fkey *fk;
	struct stat st;
	ssize_t hlen;
	int fd, r;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return problem(f, rel, false, "cannot open: %s", strerror(errno)) ?: 1;
	if (fstat(fd, &st)) {
		r = problem(f, rel, false, "cannot stat: %s", strerror(errno)) ?: 1;
		goto out_close;
	}
	hlen = fgetxattr(fd, SC_HDR_XATTR, hdr, sizeof(hdr));
	if (hlen < 0 && errno == ENODATA && !strchr(rel, '/') &&
	    !strncmp(rel, SC_VOL_TMP_PREFIX, strlen(SC_VOL_TMP_PREFIX))) {
		r = 0;	/* a config write was interrupted; the next one sweeps it */
		goto out_close;
	}
	/*
	 * An empty file without a header is what a kill -9 between the backing
	 * create and the header write leaves; the mount adopts it (gives it a
	 * header on first open), so it is not damage.
	 */
	if (hlen < 0 && errno == ENODATA && st.st_size == 0) {
		r = 0;
		goto out_close;
	}
	if (st.st_size > 0)
		f->with_data++;
	if (hlen < 0) {
		if (errno == ENODATA) {
			r = problem(f, rel, true, "no header (xattr %s missing): not written "
				    "through stackcrypt, or its xattrs were lost in a copy",
				    SC_HDR_XATTR);
			if (!r) {
				f->bad[f->nbad - 1].nohdr = true;
				f->no_header++;
			}
		} else if (errno == ERANGE)
			r = problem(f, rel, true, "header is larger than %d bytes, want %d "
				    "or %d", HDR_READ_MAX, SC_HDR_V2_SIZE, SC_HDR_V1_SIZE);
		else
			r = problem(f, rel, false, "cannot read the header: %s", strerror(errno));
		r = r ?: 1;
		goto out_close;
	}
	r = sc_fkey_new(f->vol->mkey, hdr, hlen, &fk);
	if (r) {
		if (r == -EINVAL && hlen == 0)
			r = problem(f, rel, true, "header is empty (truncated or corrupt)");
		else if (r == -EINVAL && (size_t)hlen != sc_hdr_size(hdr[0]))
			r = problem(f, rel, true, "header is %zd bytes, want %zu for its "
				    "version %u (truncated or corrupt)", hlen,
				    sc_hdr_size(hdr[0]), hdr[0]);
		else if (r == -EINVAL)
			r = problem(f, rel, true, "header names another cipher or block size "
				    "than the volume's");
		else if (r == -EUCLEAN)
			r = problem(f, rel, true, "header MAC mismatch: the header was tampered "
				    "with, or the file comes from another volume");
		else if (r == -EPROTONOSUPPORT)
			r = problem(f, rel, true, "header of an unknown version (%u) or with "
				    "unknown flags", hlen > 0 ? hdr[0] : 0);
		else
			r = problem(f, rel, false, "cannot derive the file key: %s",
				    strerror(-r));
		r = r ?: 1;
		goto out_close;
	}
	r = check_contents(f, fk, fd, rel, (uint64_t)st.st_size);
	sc_fkey_free(fk);
out_close:
	close(fd);
	return r;
}

static int visit(void *ctx, int dirfd, const char *name, const char *rel,
		 const struct stat *st, int err)
{
	struct fsck *f = ctx;
	const char *tag;
	int r;

	if (err) {
		r = problem(f, rel, false, "%s: %s", !st ? "cannot stat" :
			    name ? "cannot open directory" : "cannot read directory",
			    strerror(-err));
		return r < 0 ? r : 0;
	}
	if (S_ISDIR(st->st_mode)) {
		f->dirs++;
		return 0;
	}
	if (!S_ISREG(st->st_mode))
		return 0;	/* symlinks, devices, fifos, sockets pass through as they are */
	tag = strstr(name, QUARANTINE_TAG);
	if (tag && strspn(tag + strlen(QUARANTINE_TAG), "0123456789") ==
		   strlen(tag + strlen(QUARANTINE_TAG))) {
		f->quarantined++;
		return 0;
	}
	f->files++;
	r = check_file(f, dirfd, name, rel);
	progress(f);
	return r < 0 ? r : 0;
}

/* Renames BACKING/rel to rel.stackcrypt-quarantine-N (first free N). */
static int quarantine(struct fsck *f, const char *rel)
{
	char from[PATH_MAX], to[PATH_MAX + 32];
	unsigned int n;

	snprintf(from, sizeof(from), "%s/%s", f->backing, rel);
	for (n = 1; n < 1000; n++) {
		snprintf(to, sizeof(to), "%s%s%u", from, QUARANTINE_TAG, n);
		if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) {
			printf("quarantined: %s -> %s\n", from, to);
			return 0;
		}
		if (errno == EINVAL || errno == ENOSYS) {
			/* no RENAME_NOREPLACE here: link never replaces */
			if (link(from, to) == 0) {
				if (unlink(from)) {
					fprintf(stderr, "stackcrypt fsck: %s: %s\n", from,
						strerror(errno));
					return -errno;
				}
				printf("quarantined: %s -> %s\n", from, to);
				return 0;
			}
		}
		if (errno != EEXIST) {
			fprintf(stderr, "stackcrypt fsck: cannot quarantine %s: %s\n", from,
				strerror(errno));
			return -errno;
		}
	}
	fprintf(stderr, "stackcrypt fsck: cannot quarantine %s: too many quarantined copies\n",
		from);
	return -EEXIST;
}

static const char fsck_help[] =
"Usage: stackcrypt fsck [OPTIONS] BACKING\n"
"Check every file of the volume in BACKING (unmounted): its header is present,\n"
"the right size and authentic, every byte can be read, and every data unit is\n"
"whole and decrypts under the format's rules.  aes-xts and aes-cbc have no\n"
"per-unit integrity tag: ciphertext changed in place is not detected.  Each bad\n"
"file is printed on standard output as BACKING/PATH: REASON.\n"
"Exit status: 0 clean, 1 problems found (also when repaired), or an error code.\n"
"\n"
"Options:\n"
"  --repair             rename each bad file to NAME" QUARANTINE_TAG "N\n"
"                       beside it (never deletes); later runs skip them\n"
"  --passfile=FILE      password = first line of FILE (\"-\" = standard input)\n"
"  --extpass=CMD        password = first line printed by sh -c CMD\n"
"  --keyfile=FILE       the volume's key file\n"
"  --masterkey[=FILE]   the master key (asked, or read from FILE / \"-\")\n"
"  -q, --quiet          no progress line on the terminal\n"
"  -h, --help           show this help\n";

int sc_cmd_fsck(int argc, char **argv)
{
	enum { OPT_KEYFILE = 0x100, OPT_PASSFILE, OPT_EXTPASS, OPT_MASTERKEY,
	       OPT_PASSWORD, OPT_REPAIR };
	static const struct option opts[] = {
		{ "keyfile",	required_argument, NULL, OPT_KEYFILE },
		{ "passfile",	required_argument, NULL, OPT_PASSFILE },
		{ "extpass",	required_argument, NULL, OPT_EXTPASS },
		{ "masterkey",	optional_argument, NULL, OPT_MASTERKEY },
		{ "password",	optional_argument, NULL, OPT_PASSWORD },
		{ "repair",	no_argument,	   NULL, OPT_REPAIR },
		{ "quiet",	no_argument,	   NULL, 'q' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct sc_secret_src src = { .kind = SC_SECRET_TTY };
	struct fsck f = { 0 };
	bool given = false, quiet = false, lost_xattrs;
	char err[512], mnt[PATH_MAX];
	size_t i, len, moved = 0;
	int c, r;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hq", opts, NULL)) != -1) {
		switch (c) {
		case OPT_KEYFILE:
		case OPT_PASSFILE:
		case OPT_EXTPASS:
		case OPT_MASTERKEY:
		case OPT_PASSWORD:
			if (sc_vol_secret_opt(opts[c - OPT_KEYFILE].name, optarg, &src, &given,
					      err, sizeof(err))) {
				fprintf(stderr, "stackcrypt fsck: %s\nTry 'stackcrypt fsck "
					"--help'.\n", err);
				return SC_EXIT_USAGE;
			}
			break;
		case OPT_REPAIR:
			f.repair = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(fsck_help, stdout);
			return SC_EXIT_OK;
		case ':':
			fprintf(stderr, "stackcrypt fsck: option '%s' needs a value\n"
				"Try 'stackcrypt fsck --help'.\n", argv[optind - 1]);
			return SC_EXIT_USAGE;
		default:
			fprintf(stderr, "stackcrypt fsck: unknown option '%s'\n"
				"Try 'stackcrypt fsck --help'.\n", argv[optind - 1]);
			return SC_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "stackcrypt fsck: %s\nTry 'stackcrypt fsck --help'.\n",
			optind >= argc ? "missing BACKING directory" : "too many arguments");
		return SC_EXIT_USAGE;
	}
	/* "dir/" and "dir" name the same volume: report paths as "dir/PATH" */
	len = strlen(argv[optind]);
	while (len > 1 && argv[optind][len - 1] == '/')
		argv[optind][--len] = 0;
	f.backing = argv[optind];
	f.progress = !quiet && isatty(STDERR_FILENO);
	prctl(PR_SET_DUMPABLE, 0);	/* we are about to hold the master key */

	/*
	 * Files change under a mounted volume while we read them, and a rename
	 * by --repair would pull a file from under the daemon's open handles.
	 */
	if (sc_vol_mounted_at(f.backing, mnt, sizeof(mnt))) {
		if (f.repair) {
			fprintf(stderr, "stackcrypt fsck: %s is mounted at %s; unmount it "
				"first (fusermount3 -u %s)\n", f.backing, mnt, mnt);
			return SC_EXIT_BACKING;
		}
		fprintf(stderr, "stackcrypt fsck: warning: %s is mounted at %s; files "
			"being written may be reported as bad\n", f.backing, mnt);
	}

	r = sc_volume_open(f.backing, &src, &f.vol, err, sizeof(err));
	if (r) {
		fprintf(stderr, "stackcrypt fsck: %s\n", err);
		return sc_vol_exit_code(r);
	}
	if (sc_mkey_cipher(f.vol->mkey) == SC_CIPHER_NULL)
		fprintf(stderr, "stackcrypt fsck: warning: %s is not encrypted (cipher null): "
			"files are stored in plaintext\n", f.backing);
	f.bs = sc_mkey_block_size(f.vol->mkey);
	f.buf = malloc(CHUNK + f.bs);
	if (!f.buf) {
		fprintf(stderr, "stackcrypt fsck: out of memory\n");
		r = SC_EXIT_FAIL;
		goto out_close_vol;
	}
	r = sc_vol_walk(f.backing, visit, &f);
	progress_clear(&f);
	if (r < 0) {
		fprintf(stderr, "stackcrypt fsck: walking %s: %s\n", f.backing, strerror(-r));
		r = SC_EXIT_FAIL;
		goto out_free;
	}
	/*
	 * Most files with data lacking a header is not damage file by file: the
	 * tree was copied by a tool that drops extended attributes (cp -r, tar
	 * without --xattrs, rsync without -X), and the copy's files cannot be
	 * decrypted.  Say so once; moving every file aside would not help.
	 */
	lost_xattrs = f.no_header > 0 && 2 * f.no_header > f.with_data;
	if (f.repair) {
		for (i = 0; i < f.nbad; i++)
			if (f.bad[i].quarantine && !(lost_xattrs && f.bad[i].nohdr) &&
			    quarantine(&f, f.bad[i].rel) == 0)
				moved++;
	}
	printf("%s: %" PRIu64 " file%s, %" PRIu64 " director%s, %" PRIu64 " bytes "
	       "(%.1f MiB) checked; %zu problem%s", f.backing, f.files,
	       f.files == 1 ? "" : "s", f.dirs, f.dirs == 1 ? "y" : "ies", f.bytes,
	       f.bytes / 1048576.0, f.nbad, f.nbad == 1 ? "" : "s");
	if (f.repair)
		printf(", %zu file%s quarantined", moved, moved == 1 ? "" : "s");
	if (f.quarantined)
		printf("; %" PRIu64 " file%s quarantined earlier (skipped)", f.quarantined,
		       f.quarantined == 1 ? "" : "s");
	printf("\n");
	if (lost_xattrs)
		printf("%" PRIu64 " of %" PRIu64 " file%s with data lack%s a file header: was "
		       "this tree copied without extended attributes? use cp -a, rsync -aX, or "
		       "tar --xattrs --xattrs-include='*'%s\n", f.no_header, f.with_data,
		       f.with_data == 1 ? "" : "s", f.no_header == 1 ? "s" : "",
		       f.repair ? " (nothing quarantined for it)" : "");
	else if (f.nbad && !f.repair)
		printf("Run 'stackcrypt fsck --repair' to move the bad files aside.\n");
	r = f.nbad ? SC_EXIT_FAIL : SC_EXIT_OK;
out_free:
	for (i = 0; i < f.nbad; i++)
		free(f.bad[i].rel);
	free(f.bad);
	free(f.buf);
out_close_vol:
	sc_volume_close(f.vol);
	return r;
}
