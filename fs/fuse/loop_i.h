/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * loop_i.h - the multi-threaded session loop (loop.c): like libfuse's
 * fuse_session_loop_mt, but an idle worker that was busy last takes the
 * next request, not the one idle longest.
 */
#ifndef SC_LOOP_I_H
#define SC_LOOP_I_H

#include <pthread.h>

struct fuse_session;

/*
 * Serves se with up to max_threads workers until the session exits
 * (unmount, or a signal caught by fuse_set_signal_handlers, which the
 * workers block so that the calling thread gets it).  Returns 0, or the
 * first error reading /dev/fuse (-errno).
 */
int sc_loop_run(struct fuse_session *se, unsigned int max_threads);

/*
 * Starts a worker thread running fn(arg) with the signals that end the
 * session blocked, so that they reach the thread waiting for the session
 * (loop.c's workers, uring.c's queues).  Returns 0 or -errno.
 */
int sc_loop_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg);

#endif /* SC_LOOP_I_H */
