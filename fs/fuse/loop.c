/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * loop.c - the opt-in session loop (-o loop=lifo): worker threads that
 * read requests from /dev/fuse and process them, as libfuse's
 * fuse_session_loop_mt does, with one difference: which idle worker takes
 * the next request.
 *
 * Measured (docs/performance.md section 8, bench/run.sh A1): 1.3-1.6x
 * faster than libfuse's loop on small-file create, untar and cp -a, about
 * 3x slower on one program's synchronous I/O (dd bs=4K, fio with 1 job,
 * cold stat): the next request of a synchronous caller arrives while the
 * one reader is still on its way back from the reply to read(2), where
 * libfuse always has another worker already waiting.  Hence not the
 * default.
 *
 * The idea it tests: in libfuse's loop every idle worker waits in read(2)
 * on /dev/fuse, and the kernel wakes them in FIFO order (an exclusive wait
 * queue), so each request goes to the worker that has waited longest,
 * whose cache is the coldest.  The measurement says that cost is smaller
 * than the one of having nobody in read(2) for a moment after each reply.
 *
 * Here one worker at a time waits in read(2): the reader.  The others wait
 * in user space on a LIFO stack.  The reader processes the request it got
 * itself, so a serial caller is served by one hot thread, and before that
 * it hands the reading over to the most recently idle worker (or starts a
 * new one, up to max_threads) only when more requests are already queued
 * (poll(2) on the fd, no wait): then there is real concurrency and workers
 * run in parallel.  A worker done with its request reads next if nobody
 * is reading, else it joins the stack.
 *
 * The price: a request that arrives just after the reader's check waits
 * until the reader has processed its current one (or another worker comes
 * free).  So that this wait stays the length of a quick request, the
 * reader also hands over before a request that may take long whatever the
 * queue holds (fsync, fallocate, copy_file_range, truncate, reads and
 * writes over 128 KiB): another program's stat must not wait behind a
 * fsync.
 *
 * Signals: workers block the ones libfuse's handlers catch, so they reach
 * the main thread, which waits in sem_wait (never restarted after a
 * handler) and then stops the loop, cancelling a reader still in read(2),
 * as libfuse's loop does.  Requests being processed finish first.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <fuse_lowlevel.h>

#include "loop_i.h"
#include "wire_i.h"

/* Reads and writes up to this size count as quick (a few units of cipher). */
#define QUICK_IO	(128u << 10)

struct worker {
	struct loop	*l;
	pthread_t	tid;
	pthread_cond_t	wake;		/* signalled when popped or stopping */
	bool		popped;		/* under l->lock: chosen to read next */
	struct worker	*next;		/* in the idle stack */
	struct fuse_buf	buf;		/* this worker's request buffer */
};

struct loop {
	struct fuse_session	*se;
	int			fd;
	pthread_mutex_t		lock;
	struct worker		**all;		/* every started worker, for join */
	unsigned int		nworkers, max_workers;
	struct worker		*idle;		/* LIFO: the most recently idle first */
	struct worker		*reader;	/* the worker in read(2), or NULL */
	bool			stop;
	int			error;		/* first receive error, -errno */
	sem_t			finish;		/* posted when a worker stops the loop */
};

static int start_worker(struct loop *l);

/* More requests queued right now?  Never waits. */
static bool requests_pending(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/*
 * May the request in buf take long (disk flushes, large I/O)?  Read with the
 * front end's one parser of raw requests (wire.c).
 */
static bool may_take_long(const struct fuse_buf *buf)
{
	struct sc_wire_peek p;

	sc_wire_peek(buf->mem, buf->size, &p);
	switch (p.opcode) {
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
	case FUSE_FALLOCATE:
	case FUSE_COPY_FILE_RANGE:
		return true;
	case FUSE_SETATTR:
		return p.truncates;
	case FUSE_READ:
	case FUSE_WRITE:
		return p.io_size > QUICK_IO;
	default:
		return false;
	}
}

/* Under l->lock: ends the loop; every worker leaves after its request. */
static void loop_stop(struct loop *l, int error)
{
	struct worker *w;

	if (l->stop)
		return;
	l->stop = true;
	if (error < 0 && l->error == 0)
		l->error = error;
	for (w = l->idle; w; w = w->next)
		pthread_cond_signal(&w->wake);
	sem_post(&l->finish);
}

/* Under l->lock: makes sure a worker reads next while this one processes. */
static void hand_over(struct loop *l)
{
	struct worker *w = l->idle;

	if (w) {
		l->idle = w->next;
		w->popped = true;
		l->reader = w;		/* reserved: nobody else starts reading */
		pthread_cond_signal(&w->wake);
	} else if (l->nworkers < l->max_workers && start_worker(l) == 0) {
		l->reader = l->all[l->nworkers - 1];
	}
}

static void free_buf(void *arg)
{
	struct worker *w = arg;

	free(w->buf.mem);
	w->buf.mem = NULL;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct loop *l = w->l;
	int res;

	/* Cancellation is enabled only while waiting in read(2) (loop end). */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_cleanup_push(free_buf, w);
	pthread_mutex_lock(&l->lock);
	for (;;) {
		/* Wait on the stack while someone else reads, unless chosen. */
		while (!l->stop && l->reader && l->reader != w) {
			w->popped = false;
			w->next = l->idle;
			l->idle = w;
			while (!w->popped && !l->stop)
				pthread_cond_wait(&w->wake, &l->lock);
		}
		if (l->stop)
			break;
		l->reader = w;
		pthread_mutex_unlock(&l->lock);

		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		res = fuse_session_receive_buf(l->se, &w->buf);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);

		pthread_mutex_lock(&l->lock);
		if (l->reader == w)
			l->reader = NULL;
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0 || fuse_session_exited(l->se)) {
			/* 0: unmounted (libfuse saw ENODEV and exited the session) */
			loop_stop(l, res);
			break;
		}
		if (!l->reader && (may_take_long(&w->buf) || requests_pending(l->fd)))
			hand_over(l);
		pthread_mutex_unlock(&l->lock);

		fuse_session_process_buf(l->se, &w->buf);

		pthread_mutex_lock(&l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	pthread_cleanup_pop(1);
	return NULL;
}

int sc_loop_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	sigset_t block, old;
	int ret;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	ret = pthread_create(tid, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -ret;
}

/* Under l->lock: a new worker; it blocks the signals the main thread takes. */
static int start_worker(struct loop *l)
{
	struct worker *w;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->l = l;
	if (pthread_cond_init(&w->wake, NULL) != 0) {
		free(w);
		return -ENOMEM;
	}
	ret = sc_loop_thread_start(&w->tid, worker_main, w);
	if (ret < 0) {
		pthread_cond_destroy(&w->wake);
		free(w);
		return ret;
	}
	l->all[l->nworkers++] = w;
	return 0;
}

int sc_loop_run(struct fuse_session *se, unsigned int max_threads)
{
	struct loop l = {
		.se		= se,
		.fd		= fuse_session_fd(se),
		.max_workers	= max_threads ? max_threads : 1,
	};
	int ret = 0;

	l.all = calloc(l.max_workers, sizeof(*l.all));
	if (!l.all)
		return -ENOMEM;
	if (sem_init(&l.finish, 0, 0) != 0) {
		ret = -errno;
		goto out_free_all;
	}
	pthread_mutex_init(&l.lock, NULL);

	pthread_mutex_lock(&l.lock);
	ret = start_worker(&l);
	pthread_mutex_unlock(&l.lock);
	if (ret < 0)
		goto out_destroy;

	/* A signal handler (fuse_set_signal_handlers) exits the session. */
	while (!fuse_session_exited(se)) {
		pthread_mutex_lock(&l.lock);
		if (l.stop) {
			pthread_mutex_unlock(&l.lock);
			break;
		}
		pthread_mutex_unlock(&l.lock);
		sem_wait(&l.finish);
	}

	pthread_mutex_lock(&l.lock);
	loop_stop(&l, 0);
	/* A reader blocked in read(2) has cancellation enabled only there. */
	if (l.reader)
		pthread_cancel(l.reader->tid);
	pthread_mutex_unlock(&l.lock);
	/* No worker starts another once stop is set: nworkers is final. */
	for (unsigned int i = 0; i < l.nworkers; i++) {
		pthread_join(l.all[i]->tid, NULL);
		pthread_cond_destroy(&l.all[i]->wake);
		free(l.all[i]);
	}
	ret = l.error;

out_destroy:
	pthread_mutex_destroy(&l.lock);
	sem_destroy(&l.finish);
out_free_all:
	free(l.all);
	return ret;
}
