/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse_i.h - the FUSE front end's state (private to fs/): shared by the
 * files of fs/fuse/ and by fs/cli/cmd_mount.c (which builds the stack, the
 * session and the loop).  A request takes this path through fs/fuse/:
 *
 *   wire.c      /dev/fuse read hook: notes what libfuse does not pass up
 *   handlers.c  one handler per request, calling the stack top, one reply
 *     creds.c     the caller's credentials, for creates
 *     setid.c     dropping set-id bits when the kernel asks
 *     handles.c   the open handles the kernel holds
 *     inode.c     the inode table (node ids, lookup counts)
 *   wire.c      /dev/fuse write hook: adds what libfuse cannot say
 *
 * setup.c prepares and tears down the state below for one session; loop.c
 * is the opt-in session loop; uring.c the opt-in io_uring transport.
 */
#ifndef SC_FUSE_I_H
#define SC_FUSE_I_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include <fuse_lowlevel.h>

#include "sc_xlator.h"

struct sc_itable;
struct sc_uring;

/* The session's userdata: everything a handler needs, no globals. */
struct sc_fuse {
	struct fuse_session	*se;
	struct sc_xl		*top;		/* top of the translator stack */
	struct sc_itable	*itable;	/* owned */
	struct sc_xl_conf	conf;
	double			attr_timeout;
	double			entry_timeout;
	bool			switch_creds;	/* daemon is root: create as the caller */
	bool			local_backing;	/* backing fs reports nothing at close: no FLUSH */
	int			ngroups;	/* the daemon's own supplementary groups */
	gid_t			*groups;
	bool			killpriv_v2;	/* ask for FUSE_HANDLE_KILLPRIV_V2 */
	bool			ask_parallel_dio;	/* unless -o no_parallel_dio */
	bool			ask_uring;	/* -o io_uring */
	struct sc_uring		*uring;		/* the io_uring queues, if serving (uring.c) */
	uint64_t		init_unique;	/* the INIT request, between the io hooks */
	uint64_t		init_offered;	/* its flags | flags2 << 32 */
	uint32_t		init_minor;	/* its protocol minor */
	bool			parallel_dio;	/* O_DIRECT opens: direct_io + parallel writes */
	pthread_key_t		buf_key;	/* per-thread I/O buffer */
	bool			buf_key_ok;
	pthread_mutex_t		fh_lock;	/* guards open_fhs */
	struct fe_fh		*open_fhs;	/* handles the kernel holds (handles.c) */
};

/* The request handlers (handlers.c). */
extern const struct fuse_lowlevel_ops sc_fuse_ops;
/* /dev/fuse I/O hooks (wire.c): install after fuse_session_mount(). */
extern const struct fuse_custom_io sc_fuse_io;

/* What the mount tells the front end (copied into struct sc_fuse). */
struct sc_fuse_opts {
	struct sc_xl_conf	conf;		/* handed to the stack's ->init */
	double			attr_timeout;
	double			entry_timeout;
	bool			killpriv_v2;
	bool			ask_parallel_dio;
	bool			ask_uring;
};

/*
 * Prepares fs (all of it: no field need be set before) for a session over
 * the stack top with opts: takes ownership of root_fd (the bottom layer's
 * fd on the backing root: posix's O_PATH fd, gluster's int) in a new inode
 * table.  Returns 0 or -errno (root_fd given back with ->drop_fd).
 */
int sc_fuse_setup(struct sc_fuse *fs, const struct sc_fuse_opts *opts,
		  struct sc_xl *top, int root_fd);

/*
 * Initialises the stack over the inode table's root (sc_xl_stack_init),
 * after sc_fuse_setup and before the session starts.  Returns 0 or the
 * first failing layer's -errno.
 */
int sc_fuse_init_stack(struct sc_fuse *fs);

/*
 * Frees the inode table (calling ->forget on every layer for every entry
 * still held) and the per-thread buffer key.  Call after the session is
 * destroyed, before the stack is freed.
 */
void sc_fuse_teardown(struct sc_fuse *fs);

#endif /* SC_FUSE_I_H */
