/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rev_i.h - what the reverse translator's two files share: the state of
 * each object of the view (struct rev_node, in the obj's slot of this
 * layer), the layer's mount-wide state, and the calls between the
 * namespace side (reverse.c) and the data side (rev_data.c).  Private to
 * fs/xlators/reverse/.
 */
#ifndef SC_REV_I_H
#define SC_REV_I_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "sc_crypto.h"
#include "sc_xlator.h"

/*
 * The device number of the objects the view makes up (nonce files, side
 * files, the config) and of the names of hard-linked symlinks, each of
 * which is its own symlink in the view: no backing file system reports
 * it, so the front end's table, keyed by (device, inode), never meets a
 * real object under such a key.
 */
#define REV_DEV		((dev_t)0x5c5cfeedULL)

enum rev_kind {
	REV_DIR,	/* a directory of the plaintext tree */
	REV_FILE,	/* a regular file: units sealed on the fly */
	REV_LINK,	/* a symlink: its target sealed for its place */
	REV_OTHER,	/* a device, fifo or socket: shown as it is */
	REV_BLOB,	/* made up: a nonce file, a long name's side file, the config */
};

struct rev_long {
	char	form[SC_NAME_LONG_LEN + 1];	/* sc_name_long of the encoded name */
	bool	link;				/* a symlink with a link side file, not a long name */
	char	*plain;				/* the plaintext name */
};

struct rev_node {
	enum rev_kind		kind;
	uint8_t			id[SC_REV_ID_LEN];	/* the entry's identity (format.md 12.2) */
	dev_t			dev;		/* the key the front end got: (dev, ino) */
	ino_t			ino;
	bool			own_ino;	/* a made-up key: getattr reports it, nlink 1 */
	/* REV_DIR */
	uint8_t			nonce[SC_DIRNONCE_LEN];
	uint8_t			rec[SC_DIRNONCE_REC2_LEN];	/* its nonce record */
	pthread_mutex_t		lock;		/* guards longs */
	struct rev_long		*longs;		/* its long names, found by scanning */
	size_t			nlongs;
	/* REV_FILE */
	uint8_t			hdr[SC_GHDR_SIZE];
	struct sc_gkey		*gk;		/* made at the first open, kept (atomic) */
	/* REV_LINK: its place */
	uint8_t			pnonce[SC_DIRNONCE_LEN];
	char			*enc;
	size_t			enc_len;
	/* REV_BLOB */
	uint8_t			*blob;
	size_t			blob_len;
	struct stat		st;
};

struct rev_priv {
	const struct sc_mkey	*mk;
	struct sc_nkey		*nk;
	struct sc_rkey		*rk;
	uint32_t		bs;
	const char		*conf;		/* the config text the view shows */
	size_t			conf_len;
	const char		*hide;		/* the plaintext root name not shown, or NULL */
};

/* rev_data.c */
/* Stored size of a file of plain bytes in the view (0 for 0). */
uint64_t rev_stored_size(uint32_t bs, uint64_t plain);
/* A made-up file holding len bytes sealed under a file id derived from id by use. */
int rev_blob_sealed(struct rev_priv *rp, struct rev_node *n, const uint8_t *id,
		    enum sc_rev_use use, const void *pt, size_t len);
/* The view's size of a symlink whose target has plain bytes: S (9.5), or its marker. */
off_t rev_link_size(off_t plain);
/*
 * The stored target of the link of identity id at its place at with target
 * (len bytes) into out (SC_LINK_BOUND_ENC_MAX + 1 bytes): its length, or -errno.
 */
ssize_t rev_link_sealed(struct rev_priv *rp, const uint8_t *id, const struct sc_dirplace *at,
			const char *target, size_t len, char *out);
/* open, read, release of files of the view; -EROFS for anything but reading. */
int rev_open(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh);
ssize_t rev_read(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, void *buf,
		 size_t size, off_t off);
int rev_release(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh);
int rev_flush(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh);
off_t rev_lseek(struct sc_xl *xl, struct sc_obj *obj, struct sc_fh *fh, off_t off, int whence);
ssize_t rev_readlink(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size);

#endif /* SC_REV_I_H */
