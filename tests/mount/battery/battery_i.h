// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * battery_i.h - what the battery's files share: the per-run context, the
 * BOTH() family that runs one expression on each side, the comparison
 * helpers of compare.c and the checks main.c lists in its table.
 * Functions shared between the files carry the battery's prefix: bat_ for
 * the helpers (bat_verdict, bat_label, bat_cmp_stat...), chk_ for the
 * checks; the short macros (BOTH, D, P, REC...) stay short on purpose:
 * they stand in nearly every line of a check.
 */
#ifndef SC_BATTERY_I_H
#define SC_BATTERY_I_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

enum { REF = 0, MNT = 1 };

struct ctx {
	const char	*check;		/* running check: prefixes FAIL lines */
	const char	*root[2];	/* REF and MNT as given */
	int		dfd[2];		/* the check's own directory, per side */
	bool		crypt;		/* a crypt stack: issue #4's leeway applies */
	bool		gcm;		/* aes-gcm: every unit stores 32 bytes more (ENOSPC leeway) */
	bool		names;		/* the volume encrypts names (its backing root has a name nonce) */
	bool		inject;		/* self-test: corrupt the mount's data */
	unsigned	verbose;
	unsigned	passed, failed;
};

/* Inside BOTH() and friends: the current side's check directory, and the
 * side's absolute path of NAME in it (for calls without an *at() form). */
#define D (c->dfd[S])
#define P(name) bat_label("%s/%s/%s", c->root[S], c->check, (name))

/* A small string builder for results gathered on one side. */
struct sbuf {
	char	s[8192];
	size_t	n;
};

#define REC(sb, label, expr) do {					\
		errno = 0;						\
		long rec_r = (long)(expr);				\
		bat_sb_res((sb), (label), rec_r, errno);			\
	} while (0)

/* One call's outcome on one side. */
struct res {
	long	r;
	int	e;
};

enum how {
	CMP_VALUE,	/* equal return values (and errno if both failed) */
	CMP_OK,		/* both succeed, or both fail with the same errno */
};

enum leeway { SAME, ALT, DIFF };

#define EACH_SIDE(x, expr)						\
	for (int S = 0; S < 2; S++) {					\
		errno = 0;						\
		(x)[S].r = (long)(expr);				\
		(x)[S].e = errno;					\
	}

/* Evaluate EXPR per side; return values and errno must match. */
#define BOTH(c, label, expr) ({						\
		struct res both_x[2];					\
		EACH_SIDE(both_x, expr);				\
		bat_cmp_res((c), (label), both_x, CMP_VALUE);		\
	})

/* Evaluate EXPR per side; success/failure and errno must match. */
#define BOTH_OK(c, label, expr) ({					\
		struct res both_x[2];					\
		EACH_SIDE(both_x, expr);				\
		bat_cmp_res((c), (label), both_x, CMP_OK);			\
	})

/* BOTH(), but a crypt mount may fail with ALT instead (see bat_cmp_res_alt). */
#define BOTH_ALT(c, label, alt, expr) ({				\
		struct res both_x[2];					\
		EACH_SIDE(both_x, expr);				\
		bat_cmp_res_alt((c), (label), both_x, (alt));		\
	})

/* Leave the check if the pair did not match: what follows depends on it. */
#define REQUIRE(x) do { if (!(x)) return; } while (0)

enum {
	ST_MTIME  = 1,	/* compare mtime (only when set explicitly) */
	ST_ATIME  = 2,	/* compare atime (only when set explicitly) */
	ST_BLOCKS = 4,	/* compare st_blocks (not for crypt stacks) */
};

typedef void side_fn(struct ctx *c, int S, void *arg, struct sbuf *out);

/* compare.c */
const char *bat_ename(int e);

/* A label with printf arguments; a few rotating buffers so that one
 * statement may build more than one. */
const char *bat_label(const char *fmt, ...);

/* Counts one comparison; prints the FAIL line if !ok.  Returns ok. */
bool bat_verdict(struct ctx *c, const char *label, bool ok,
		 const char *ref, const char *mnt);

/* Counts one comparison of two strings.  Returns true if equal. */
bool bat_cmp_str(struct ctx *c, const char *label, const char *ref,
		 const char *mnt);
void bat_note(struct ctx *c, const char *label, const char *what);
void bat_sb_printf(struct sbuf *b, const char *fmt, ...);

/* Appends "label=VALUE " (or "label=ERRNO ") for a call's outcome. */
void bat_sb_res(struct sbuf *b, const char *label, long r, int e);

/* Compares a pair of outcomes.  Returns true if they match. */
bool bat_cmp_res(struct ctx *c, const char *label, const struct res x[2],
		 enum how how);

/*
 * Like bat_cmp_res(CMP_VALUE), but in a crypt stack the mount may instead fail
 * with @alt (issue #4: fallocate modes that change contents may return
 * EOPNOTSUPP).  Returns SAME, ALT (leeway taken: the caller must not compare
 * what follows from the call) or DIFF.
 */
enum leeway bat_cmp_res_alt(struct ctx *c, const char *label,
			    const struct res x[2], int alt);

/* Deterministic bytes: no runs of zeros, different per salt. */
void bat_fill(uint8_t *buf, size_t len, unsigned salt);

/* Reads all of fd from offset 0 into a malloc'd buffer.  Returns the size,
 * or -errno (then *out is NULL). */
ssize_t bat_slurp_fd(int fd, uint8_t **out);

/* Compares two byte strings; describes the first difference. */
bool bat_cmp_bytes(struct ctx *c, const char *label, const uint8_t *a,
		   ssize_t na, const uint8_t *b, ssize_t nb);

/* Compares the whole contents of an open file on both sides. */
bool bat_cmp_fd_data(struct ctx *c, const char *label, const int fd[2]);

/* Compares the whole contents of PATH (opened afresh) on both sides. */
bool bat_cmp_data(struct ctx *c, const char *label, const char *path);

/* Compares one pread() on both sides: return value and bytes. */
bool bat_cmp_pread(struct ctx *c, const char *label, const int fd[2],
		   off_t off, size_t len);

/* Writes LEN pattern bytes at OFF on both sides; compares the result. */
bool bat_pwrite2(struct ctx *c, const char *label, const int fd[2],
		 off_t off, size_t len, unsigned salt);

/* Creates PATH with LEN pattern bytes on both sides. */
bool bat_make_file(struct ctx *c, const char *path, size_t len,
		   unsigned salt, mode_t mode);

/* readlink()s PATH on both sides into a BUFSIZE buffer; compares the return
 * values and the text returned. */
bool bat_cmp_readlink(struct ctx *c, const char *label, const char *path,
		      size_t bufsize);
bool bat_cmp_stats(struct ctx *c, const char *label, const struct res x[2],
		   const struct stat st[2], unsigned what);

/* lstat()s PATH on both sides and compares the fields WHAT selects (mode,
 * nlink, uid, gid, size and rdev always). */
bool bat_cmp_stat(struct ctx *c, const char *label, const char *path,
		  unsigned what);

/* fstat()s an open file on both sides; as bat_cmp_stat(). */
bool bat_cmp_fstat(struct ctx *c, const char *label, const int fd[2],
		   unsigned what);

/* Compares the sorted listing (names and d_type) of directory PATH. */
bool bat_cmp_dir(struct ctx *c, const char *label, const char *path);

/* Compares the sorted xattr name lists of PATH. */
bool bat_cmp_xattr_list(struct ctx *c, const char *label, const char *path);

/* Runs FN once per side and compares the strings it built. */
bool bat_cmp_side(struct ctx *c, const char *label, side_fn *fn, void *arg);

/* Runs FN on side S in a child process (as uid/gid @uid if not -1) and
 * collects the string it built; a crash of the child is part of the result. */
void bat_in_child(struct ctx *c, int S, side_fn *fn, void *arg, uid_t uid,
		  struct sbuf *out);
long long bat_ns_of(struct timespec t);

/* The checks, by area: names.c, attrs.c, data.c, handles.c, perms.c, stack.c. */
void chk_lookup(struct ctx *c);
void chk_readdir_large(struct ctx *c);
void chk_readdir_churn(struct ctx *c);
void chk_readdir_seek(struct ctx *c);
void chk_mkdir_rmdir(struct ctx *c);
void chk_mknod(struct ctx *c);
void chk_symlink(struct ctx *c);
void chk_link_unlink(struct ctx *c);
void chk_rename(struct ctx *c);
void chk_rename_flags(struct ctx *c);
void chk_getattr(struct ctx *c);
void chk_chmod(struct ctx *c);
void chk_chown(struct ctx *c);
void chk_truncate(struct ctx *c);
void chk_utimens(struct ctx *c);
void chk_statfs(struct ctx *c);
void chk_xattr(struct ctx *c);
void chk_rw_offsets(struct ctx *c);
void chk_rw_tail_sizes(struct ctx *c);
void chk_rw_boundaries(struct ctx *c);
void chk_holes(struct ctx *c);
void chk_append(struct ctx *c);
void chk_sync(struct ctx *c);
void chk_fallocate(struct ctx *c);
void chk_seek_data_hole(struct ctx *c);
void chk_copy_file_range(struct ctx *c);
void chk_large_offsets(struct ctx *c);
void chk_open_flags(struct ctx *c);
void chk_flock(struct ctx *c);
void chk_posix_locks(struct ctx *c);
void chk_mmap(struct ctx *c);
void chk_o_direct(struct ctx *c);
void chk_create_modes(struct ctx *c);
void chk_access(struct ctx *c);
void chk_errno(struct ctx *c);
void chk_eacces(struct ctx *c);
void chk_create_ro(struct ctx *c);
void chk_root(struct ctx *c);
void chk_config_protected(struct ctx *c);
void chk_enospc(struct ctx *c);

#endif /* SC_BATTERY_I_H */
