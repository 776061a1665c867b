/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * session.c - the libfuse session of a mount (include/sc_fuse.h): the
 * trial of the options, the session over the handlers, its signal
 * handlers, the mount and the /dev/fuse hooks, the loop that serves it
 * and the unmount; and where the log goes.  The mount (fs/cli/
 * cmd_mount.c) calls these in order and words every failure itself.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>

#include <fuse_lowlevel.h>

#include "fuse_i.h"
#include "idle_i.h"
#include "loop_i.h"
#include "uring_i.h"

int sc_fuse_args_check(const struct fuse_args *args)
{
	static const struct fuse_lowlevel_ops no_ops;
	struct fuse_args copy = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se;
	int i;

	for (i = 0; i < args->argc; i++) {
		if (fuse_opt_add_arg(&copy, args->argv[i]) == -1) {
			fuse_opt_free_args(&copy);
			return -ENOMEM;
		}
	}
	/* fuse_session_mount() is what opens /dev/fuse: this mounts nothing. */
	se = fuse_session_new(&copy, &no_ops, sizeof(no_ops), NULL);
	fuse_opt_free_args(&copy);
	if (!se)
		return -EINVAL;
	fuse_session_destroy(se);
	return 0;
}

int sc_fuse_mount(struct sc_fuse *fs, struct fuse_args *args, const char *mountpoint,
		  enum sc_fuse_step *failed)
{
	struct fuse_lowlevel_ops ops = sc_fuse_ops;
	struct fuse_session *se;
	int ret;

	/*
	 * -o noxattr: libfuse answers ENOSYS for the missing handlers, and the
	 * kernel then fails every later call of that kind itself (EOPNOTSUPP)
	 * without a request: ls -l asks for security.selinux and
	 * system.posix_acl_access on every file, and each would be a round
	 * trip.  The crypt layer's own header xattr is unaffected (backing side).
	 */
	if (fs->noxattr) {
		ops.getxattr = NULL;
		ops.setxattr = NULL;
		ops.listxattr = NULL;
		ops.removexattr = NULL;
	}
	se = fuse_session_new(args, &ops, sizeof(ops), fs);
	if (!se) {
		*failed = SC_FUSE_STEP_SESSION;
		return -ENOMEM;
	}
	ret = -EIO;
	*failed = SC_FUSE_STEP_SIGNALS;
	if (fuse_set_signal_handlers(se) != 0)
		goto err_destroy;
	*failed = SC_FUSE_STEP_MOUNT;
	if (fuse_session_mount(se, mountpoint) != 0)
		goto err_remove_handlers;
	/* Same fd, our read/writev around it (FUSE_HANDLE_KILLPRIV_V2, wire.c). */
	*failed = SC_FUSE_STEP_HOOK;
	ret = fuse_session_custom_io(se, &sc_fuse_io, fuse_session_fd(se));
	if (ret != 0) {
		ret = ret < 0 ? ret : -EIO;
		goto err_unmount;
	}
	fs->se = se;
	/* The watcher of -o idle: its unmount ends the session as fusermount3 -u does. */
	ret = sc_idle_start(fs, mountpoint);
	if (ret < 0) {
		fs->se = NULL;
		*failed = SC_FUSE_STEP_IDLE;
		goto err_unmount;
	}
	return 0;

err_unmount:
	fuse_session_unmount(se);
err_remove_handlers:
	fuse_remove_signal_handlers(se);
err_destroy:
	fuse_session_destroy(se);
	return ret;
}

int sc_fuse_handshake(struct sc_fuse *fs)
{
	struct fuse_buf buf = { .mem = NULL };
	int ret = 0;

	/* The kernel queued INIT at mount(2): it is the first request read. */
	while (!fs->init_replied && !fuse_session_exited(fs->se)) {
		ret = fuse_session_receive_buf(fs->se, &buf);
		if (ret == -EINTR)
			continue;
		if (ret <= 0)
			break;
		fuse_session_process_buf(fs->se, &buf);
		ret = 0;
	}
	free(buf.mem);
	if (ret < 0)
		return ret;
	return fs->init_replied ? 0 : -ENOTCONN;
}

const char *sc_fuse_transport(const struct sc_fuse *fs)
{
	return fs->over_uring ? "io_uring" : "/dev/fuse read/write";
}

/* libfuse's multi-threaded loop, clone_fd off, up to max_threads workers. */
static int loop_libfuse(struct fuse_session *se, unsigned int max_threads)
{
	struct fuse_loop_config *cfg;
	int ret;

	cfg = fuse_loop_cfg_create();
	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	fuse_loop_cfg_set_max_threads(cfg, max_threads);
	ret = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return ret;
}

int sc_fuse_serve(struct sc_fuse *fs)
{
	int ret;

	switch (fs->loop) {
	case SC_FUSE_LOOP_SINGLE:
		ret = fuse_session_loop(fs->se);
		break;
	case SC_FUSE_LOOP_LIFO:
		ret = sc_loop_run(fs->se, fs->max_threads);
		break;
	case SC_FUSE_LOOP_LIBFUSE:
	default:
		ret = loop_libfuse(fs->se, fs->max_threads);
		break;
	}
	/* > 0: the signal that stopped the loop (a clean unmount); < 0: an error. */
	return ret < 0 ? ret : 0;
}

void sc_fuse_unmount(struct sc_fuse *fs)
{
	if (!fs->se)
		return;
	sc_idle_stop(fs);	/* before the unmount: not two at once */
	fuse_session_unmount(fs->se);
	/* The rings hold /dev/fuse: closed before the session closes it. */
	sc_uring_stop(fs);
	fuse_remove_signal_handlers(fs->se);
	fuse_session_destroy(fs->se);
	fs->se = NULL;
}

/*
 * The translators' sc_log(), into libfuse's log.  libfuse takes no
 * va_list: format first.  A line is one event (the longest, crypt's, is
 * under 200 bytes).
 */
static void xl_log(enum sc_log_level level, const char *fmt, va_list ap)
{
	static const enum fuse_log_level fl[] = {
		[SC_LOG_ERR]		= FUSE_LOG_ERR,
		[SC_LOG_WARNING]	= FUSE_LOG_WARNING,
		[SC_LOG_INFO]		= FUSE_LOG_INFO,
		[SC_LOG_DEBUG]		= FUSE_LOG_DEBUG,
	};
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	fuse_log(fl[level], "%s", line);
}

void sc_fuse_log_init(void)
{
	sc_log_set_func(xl_log);
}

/* libfuse's levels are syslog's. */
static void syslog_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	vsyslog((int)level, fmt, ap);
}

void sc_fuse_log_to_syslog(const char *ident)
{
	openlog(ident, LOG_PID, LOG_DAEMON);
	fuse_set_log_func(syslog_log);
}
