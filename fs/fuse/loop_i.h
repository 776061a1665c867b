/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * loop_i.h - the multi-threaded session loop (loop.c): like libfuse's
 * fuse_session_loop_mt, but an idle worker that was busy last takes the
 * next request, not the one idle longest.
 */
#ifndef SC_LOOP_I_H
#define SC_LOOP_I_H

struct fuse_session;

/*
 * Serves se with up to max_threads workers until the session exits
 * (unmount, or a signal caught by fuse_set_signal_handlers, which the
 * workers block so that the calling thread gets it).  Returns 0, or the
 * first error reading /dev/fuse (-errno).
 */
int sc_loop_run(struct fuse_session *se, unsigned int max_threads);

#endif /* SC_LOOP_I_H */
