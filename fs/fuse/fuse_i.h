/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse_i.h - the FUSE front end's state, shared by the files of fs/fuse/
 * (private: the mount drives the front end through include/sc_fuse.h).
 * A request takes this path through fs/fuse/:
 *
 *   wire.c      /dev/fuse read hook: notes what libfuse does not pass up
 *   handlers.c  one handler per request, calling the stack top, one reply
 *     creds.c     the caller's credentials, for creates
 *     setid.c     dropping set-id bits when the kernel asks
 *     handles.c   the open handles the kernel holds (idle.c counts them)
 *     inode.c     the inode table (node ids, lookup counts)
 *   wire.c      /dev/fuse write hook: adds what libfuse cannot say
 *
 * setup.c prepares and tears down the state below for one session;
 * session.c makes, mounts, serves and ends the libfuse session; loop.c is
 * the opt-in session loop; uring.c the opt-in io_uring transport.
 */
#ifndef SC_FUSE_I_H
#define SC_FUSE_I_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include <fuse_lowlevel.h>

#include "sc_fuse.h"
#include "sc_xlator.h"

struct sc_idle;
struct sc_itable;
struct sc_uring;

/* The session's userdata: everything a handler needs, no globals. */
struct sc_fuse {
	struct fuse_session	*se;
	struct sc_xl		*top;		/* top of the translator stack */
	struct sc_itable	*itable;	/* owned */
	char			*mountpoint;	/* once mounted: what paths in messages start with */
	struct sc_xl_conf	conf;
	double			attr_timeout;
	double			entry_timeout;
	bool			switch_creds;	/* daemon is root: create as the caller */
	bool			local_backing;	/* backing fs reports nothing at close: no FLUSH */
	int			ngroups;	/* the daemon's own supplementary groups */
	gid_t			*groups;
	bool			killpriv_v2;	/* ask for FUSE_HANDLE_KILLPRIV_V2 */
	bool			cache_dirs;	/* sc_fuse_opts.cache_dirs */
	bool			ask_parallel_dio;	/* unless -o no_parallel_dio */
	bool			ask_uring;	/* -o io_uring */
	bool			noxattr;	/* -o noxattr: no xattr handlers */
	enum sc_fuse_loop	loop;		/* which loop sc_fuse_serve runs */
	unsigned int		max_threads;	/* its workers at most */
	struct sc_uring		*uring;		/* the io_uring queues, if serving (uring.c) */
	uint64_t		init_unique;	/* the INIT request, between the io hooks */
	uint64_t		init_offered;	/* its flags | flags2 << 32 */
	uint32_t		init_minor;	/* its protocol minor */
	bool			init_replied;	/* the INIT reply went out (wire.c) */
	bool			over_uring;	/* ... and took FUSE over io_uring */
	bool			parallel_dio;	/* O_DIRECT opens: direct_io + parallel writes */
	pthread_key_t		buf_key;	/* per-thread I/O buffer */
	bool			buf_key_ok;
	pthread_mutex_t		fh_lock;	/* guards open_fhs, nopen */
	struct fe_fh		*open_fhs;	/* handles the kernel holds (handles.c) */
	atomic_size_t		nopen;		/* how many */
	double			idle;		/* -o idle: seconds unused, or 0 (idle.c) */
	atomic_bool		used;		/* a request came since idle.c looked */
	struct sc_idle		*idle_watch;	/* its watcher, while mounted */
};

/* A request came: for -o idle (idle.c).  A store only when the flag was clear. */
static inline void sc_idle_note(struct sc_fuse *fs)
{
	if (fs->idle > 0 && !atomic_load_explicit(&fs->used, memory_order_relaxed))
		atomic_store_explicit(&fs->used, true, memory_order_relaxed);
}

/* The request handlers (handlers.c). */
extern const struct fuse_lowlevel_ops sc_fuse_ops;
/* /dev/fuse I/O hooks (wire.c): install after fuse_session_mount(). */
extern const struct fuse_custom_io sc_fuse_io;

#endif /* SC_FUSE_I_H */
