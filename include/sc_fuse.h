/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_fuse.h - the FUSE front end (fs/fuse) as a mount drives it: one
 * session over a built stack, from the trial of libfuse's options to the
 * teardown.  The front end owns everything libfuse: the session, its
 * request handlers and /dev/fuse hooks, the transport (/dev/fuse or
 * io_uring), the worker loop and the log.  The caller (fs/cli/
 * cmd_mount.c) owns the process: the options, the backing, the stack, the
 * detaching, and the words of every message.
 *
 * The lifecycle, in the order a mount calls it:
 *
 *   sc_fuse_args_check     while parsing: would libfuse take these options?
 *   sc_fuse_new            the front end's state over the stack and root fd
 *   sc_fuse_init_stack     each layer's ->init over the inode table's root
 *   sc_fuse_mount          session, signal handlers, mount, /dev/fuse hooks
 *   sc_fuse_serve          the worker loop, until unmount or a signal
 *   sc_fuse_unmount        undoes sc_fuse_mount (after a successful one)
 *   sc_fuse_free           undoes sc_fuse_new; then free the stack
 */
#ifndef SC_FUSE_H
#define SC_FUSE_H

#include <stdbool.h>

#include "sc_xlator.h"

struct fuse_args;
struct sc_fuse;

/* Which loop serves the requests (-s, -o loop=). */
enum sc_fuse_loop {
	SC_FUSE_LOOP_LIBFUSE = 0,	/* libfuse's multi-threaded loop (default) */
	SC_FUSE_LOOP_LIFO,		/* fs/fuse/loop.c: idle workers on a LIFO stack */
	SC_FUSE_LOOP_SINGLE,		/* one thread (-s) */
};

/* What the mount asks of the front end (copied by sc_fuse_new). */
struct sc_fuse_opts {
	struct sc_xl_conf	conf;		/* handed to the stack's ->init */
	double			attr_timeout;	/* seconds */
	double			entry_timeout;	/* seconds, negative entries too */
	bool			killpriv_v2;	/* ask for FUSE_HANDLE_KILLPRIV_V2 */
	bool			ask_parallel_dio;	/* parallel O_DIRECT writes */
	bool			ask_uring;	/* -o io_uring */
	bool			noxattr;	/* no xattr handlers: the kernel stops asking */
	/*
	 * The kernel keeps each directory's listing between opens
	 * (FOPEN_CACHE_DIR, FOPEN_KEEP_CACHE), dropped when a name in it
	 * changes through the mount: for a backing nothing else changes.
	 */
	bool			cache_dirs;
	enum sc_fuse_loop	loop;
	unsigned int		max_threads;	/* workers at most (the multi-threaded loops) */
	double			idle;		/* -o idle: unmount after so many seconds
						 * without a request or an open handle; 0: never */
};

/*
 * A trial session over args (a copy: args is left as it is), so that an
 * option libfuse refuses is reported before anything is asked or
 * mounted; it mounts nothing.  libfuse says why through its log (the
 * caller may capture it with fuse_set_log_func).  Returns 0, -EINVAL
 * (refused) or -ENOMEM.
 */
int sc_fuse_args_check(const struct fuse_args *args);

/*
 * The front end's state for one session over the stack top with opts:
 * takes ownership of root_fd (the bottom layer's fd on the backing root:
 * posix's O_PATH fd, gluster's int) in a new inode table.  Returns 0 and
 * *out, or -errno (root_fd given back with ->drop_fd).
 */
int sc_fuse_new(const struct sc_fuse_opts *opts, struct sc_xl *top, int root_fd,
		struct sc_fuse **out);

/*
 * Initialises the stack over the inode table's root (sc_xl_stack_init),
 * after sc_fuse_new and before sc_fuse_mount.  Returns 0 or the first
 * failing layer's -errno.
 */
int sc_fuse_init_stack(struct sc_fuse *fs);

/* The step of sc_fuse_mount that failed, for the caller's words and exit status. */
enum sc_fuse_step {
	SC_FUSE_STEP_SESSION,	/* fuse_session_new: out of memory or the like */
	SC_FUSE_STEP_SIGNALS,	/* SIGINT/SIGTERM/SIGHUP handlers (libfuse said why) */
	SC_FUSE_STEP_MOUNT,	/* the mount itself (libfuse or fusermount3 said why) */
	SC_FUSE_STEP_HOOK,	/* our read/writev hooks on /dev/fuse */
	SC_FUSE_STEP_IDLE,	/* the -o idle watcher's thread */
};

/*
 * Creates the session from args (the options sc_fuse_args_check passed),
 * installs the signal handlers that end it, mounts it at mountpoint and
 * hooks /dev/fuse (fs/fuse/wire.c).  Returns 0, or -errno with *failed
 * set and nothing left of the session.
 */
int sc_fuse_mount(struct sc_fuse *fs, struct fuse_args *args, const char *mountpoint,
		  enum sc_fuse_step *failed);

/*
 * Serves the mounted session with the loop opts asked for (over io_uring
 * too when the kernel took it) until it is unmounted or a signal ends it.
 * Returns 0 (a clean end) or the loop's -errno.
 */
int sc_fuse_serve(struct sc_fuse *fs);

/*
 * Reads and answers the kernel's INIT request, the first of a new mount,
 * before sc_fuse_serve: then the transport is known (sc_fuse_transport)
 * when the mount says what it mounted.  After sc_fuse_mount.  Returns 0,
 * -ENOTCONN when the session ended before INIT (unmounted), or -errno.
 */
int sc_fuse_handshake(struct sc_fuse *fs);

/*
 * The transport the kernel serves the mount's requests by, once
 * sc_fuse_handshake returned 0: "io_uring" (-o io_uring, taken) or
 * "/dev/fuse read/write".
 */
const char *sc_fuse_transport(const struct sc_fuse *fs);

/*
 * Unmounts and destroys the session of a successful sc_fuse_mount: the
 * io_uring queues stop first (they hold /dev/fuse), then the signal
 * handlers go.
 */
void sc_fuse_unmount(struct sc_fuse *fs);

/*
 * Frees the inode table (calling ->forget on every layer for every entry
 * still held) and the rest of fs.  After sc_fuse_unmount, before the
 * stack is freed.  NULL: nothing.
 */
void sc_fuse_free(struct sc_fuse *fs);

/*
 * Routes the translators' sc_log() to libfuse's log, so that their lines
 * go wherever the daemon's go: stderr, or syslog after
 * sc_fuse_log_to_syslog, or a file after sc_fuse_log_to_fd.  Call before the stack is built.
 */
void sc_fuse_log_init(void);

/* Sends libfuse's log (so sc_log's too) to syslog as ident, for a detached daemon. */
void sc_fuse_log_to_syslog(const char *ident);

/*
 * Sends libfuse's log (so sc_log's too) to fd, a file open for appending
 * that the caller keeps open while the session runs: one line per write,
 * each prefixed with the UTC time and the daemon's PID.
 */
void sc_fuse_log_to_fd(int fd);

#endif /* SC_FUSE_H */
