/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * idle.c - -o idle=DURATION: the daemon unmounts its mount after DURATION
 * without a request and without an open file or directory (gocryptfs's
 * -idle), so that a volume mounted at login and left alone does not stay
 * readable for whoever comes to the machine later.
 *
 * The hot path pays one relaxed load per request (sc_idle_note, fuse_i.h:
 * the flag is stored only when it was clear); a watcher thread looks four
 * times per DURATION (at most once a second, at least every 50 ms), clears
 * the flag, and counts the handles the kernel holds (handles.c).  Quiet
 * for DURATION, it unmounts without MNT_DETACH: the kernel refuses
 * (EBUSY) while anything still uses the mount (an open file, a working
 * directory, a file opened between the look and the unmount), and the
 * watcher waits another DURATION.  A successful unmount ends the
 * connection, and the session loop returns as after fusermount3 -u.
 */
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuse_i.h"
#include "handles_i.h"
#include "idle_i.h"

extern char **environ;

struct sc_idle {
	struct sc_fuse	*fs;
	char		*mountpoint;
	pthread_t	tid;
	pthread_mutex_t	lock;		/* guards stop */
	pthread_cond_t	cond;		/* signalled at stop */
	bool		stop;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Unmounts mnt unless something uses it: umount2 as root, else
 * fusermount3 -u (never -z: a lazy unmount would pull the mount from
 * under its users).  Returns 0 or -errno (-EBUSY: in use).
 */
static int unmount_self(const char *mnt)
{
	const char *argv[] = { "fusermount3", "-u", "-q", "--", mnt, NULL };
	int status, ret;
	pid_t pid;

	if (geteuid() == 0)
		return umount2(mnt, UMOUNT_NOFOLLOW) == 0 ? 0 : -errno;
	/* posix_spawnp's argv is char *const[] for history's sake: it writes nothing */
	ret = posix_spawnp(&pid, "fusermount3", NULL, NULL, (char *const *)argv, environ);
	if (ret)
		return -ret;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EBUSY;
}

static void *watch(void *arg)
{
	struct sc_idle *id = arg;
	struct sc_fuse *fs = id->fs;
	double tick = fs->idle / 4, quiet_since = now_s(), t;
	bool told_busy = false;
	struct timespec until;
	int ret;

	if (tick > 1.0)
		tick = 1.0;
	if (tick < 0.05)
		tick = 0.05;
	pthread_mutex_lock(&id->lock);
	while (!id->stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		t = (double)until.tv_nsec / 1e9 + tick;
		until.tv_sec += (time_t)t;
		until.tv_nsec = (long)((t - (double)(time_t)t) * 1e9);
		pthread_cond_timedwait(&id->cond, &id->lock, &until);
		if (id->stop)
			break;
		t = now_s();
		if (atomic_exchange_explicit(&fs->used, false, memory_order_relaxed) ||
		    sc_handle_count(fs) > 0) {
			quiet_since = t;
			continue;
		}
		if (t - quiet_since < fs->idle)
			continue;
		pthread_mutex_unlock(&id->lock);
		ret = unmount_self(id->mountpoint);
		pthread_mutex_lock(&id->lock);
		if (ret == 0) {
			sc_log(SC_LOG_INFO, "stackcrypt: unused for %g s: unmounted %s\n",
			       fs->idle, id->mountpoint);
			break;
		}
		if (!told_busy)	/* once: a working directory may stay there for days */
			sc_log(SC_LOG_INFO, "stackcrypt: unused for %g s but %s is still in "
			       "use (%s): staying mounted\n", fs->idle, id->mountpoint,
			       strerror(-ret));
		told_busy = true;
		quiet_since = now_s();
	}
	pthread_mutex_unlock(&id->lock);
	return NULL;
}

int sc_idle_start(struct sc_fuse *fs, const char *mountpoint)
{
	pthread_condattr_t ca;
	struct sc_idle *id;
	int ret;

	if (!(fs->idle > 0))
		return 0;
	id = calloc(1, sizeof(*id));
	if (!id)
		return -ENOMEM;
	id->fs = fs;
	id->mountpoint = strdup(mountpoint);
	if (!id->mountpoint) {
		free(id);
		return -ENOMEM;
	}
	pthread_mutex_init(&id->lock, NULL);
	pthread_condattr_init(&ca);	/* timed waits on the monotonic clock */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&id->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&id->tid, NULL, watch, id);
	if (ret) {
		pthread_cond_destroy(&id->cond);
		pthread_mutex_destroy(&id->lock);
		free(id->mountpoint);
		free(id);
		return -ret;
	}
	fs->idle_watch = id;
	return 0;
}

void sc_idle_stop(struct sc_fuse *fs)
{
	struct sc_idle *id = fs->idle_watch;

	if (!id)
		return;
	pthread_mutex_lock(&id->lock);
	id->stop = true;
	pthread_cond_signal(&id->cond);
	pthread_mutex_unlock(&id->lock);
	pthread_join(id->tid, NULL);
	pthread_cond_destroy(&id->cond);
	pthread_mutex_destroy(&id->lock);
	free(id->mountpoint);
	free(id);
	fs->idle_watch = NULL;
}
