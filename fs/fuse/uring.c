/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uring.c - FUSE over io_uring (-o io_uring, Linux 6.14+ with the fuse
 * module's enable_uring on), issue #19.  See uring_proto.h for the bytes
 * and docs/performance.md section 15 for what it measured.
 *
 * The kernel keeps one queue per possible CPU and hands a request to the
 * queue of the CPU its caller runs on; so here QUEUE_WORKERS threads per
 * queue, pinned to that CPU, each with its own ring of 128-byte SQEs and
 * one entry registered on the queue (IORING_OP_URING_CMD REGISTER on the
 * /dev/fuse fd): a header and a payload buffer the kernel writes a request
 * into, and completes the command.  The thread rebuilds the request's
 * /dev/fuse form in place (fuse_in_header and the per-opcode struct copied
 * just before the payload, which is where the headroom of each buffer is
 * for: the payload, write data included, is never copied) and hands it to
 * libfuse's fuse_session_process_buf, as a /dev/fuse loop would.  The
 * handler's reply reaches the write hook (wire.c), which sees the thread's
 * entry in the request context and calls sc_uring_commit: the reply goes
 * into the entry's buffers and a COMMIT_AND_FETCH SQE is queued, submitted
 * with the wait for the next completion: one io_uring_enter per
 * reply-and-fetch, where /dev/fuse costs a writev and a read.
 *
 * Why a thread and a ring per entry (no queue waits behind a long request,
 * and no thread woken for nothing).  The kernel puts a request into an
 * available entry of the queue (6.18's fs/fuse/dev_uring.c: the one most
 * recently committed first), and copies it in by task work of the thread
 * that submitted that entry's command.  A worker busy with a long request (fsync, a read of a slow
 * backing, a held lock) has no entry available, so the kernel gives the
 * next request to another worker; a serial caller is served by the worker
 * that has just replied, already waiting in io_uring_enter.  A shared ring
 * with a pool of threads was measured first (a leader serving inline, a
 * standby woken by the ring's eventfd, commits under a lock) and was
 * slower than one thread per queue (docs/performance.md 15.1), most
 * likely because the task work of each entry lands on whichever thread
 * last submitted for it, often one asleep elsewhere, which must then be
 * woken to copy the request in.
 *
 * INIT, FORGET, INTERRUPT and notifications stay on /dev/fuse, served by
 * the usual loop: the kernel never puts them on a ring.
 *
 * Failure without a hang: once the INIT reply carries FUSE_OVER_IO_URING,
 * the kernel holds every new request until all queues have an entry
 * registered, and turns io_uring off for the connection (releasing them to
 * /dev/fuse) only when a REGISTER fails.  So everything that can fail here
 * otherwise (rings, buffers, threads) is done before the INIT reply is
 * sent (sc_uring_prepare), and the flag is set only when it all succeeded.
 * After the reply the threads only submit their REGISTERs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <liburing.h>

#include "fuse_i.h"
#include "loop_i.h"
#include "uring_i.h"
#include "uring_proto.h"
#include "wire_i.h"

/*
 * Workers per queue: requests of one CPU served at once; more wait in the
 * kernel for a worker's entry to come free.  One entry per worker: a worker
 * busy with a long request has no other entry for the kernel to fill.
 */
#define QUEUE_WORKERS	8
#define WORKER_DEPTH	1
/* Room before the payload for a fuse_in_header and the per-opcode struct. */
#define HEADROOM	256

_Static_assert(HEADROOM >= sizeof(struct fuse_in_header) + SC_FUSE_URING_OP_IN_OUT_SZ,
	       "the /dev/fuse form of a request fits before its payload");

struct worker;

struct sc_uring_ent {
	struct worker			*w;
	struct sc_uring_req_header	*hdr;		/* registered */
	char				*buf;		/* HEADROOM + payload */
	char				*payload;	/* buf + HEADROOM, registered */
	uint64_t			commit_id;	/* the request being served */
	struct iovec			iov[2];		/* REGISTER's header, payload */
};

struct worker {
	struct sc_uring		*u;
	unsigned int		qid;
	pthread_t		tid;
	bool			thread;		/* tid is a thread to join */
	bool			ring_ok;	/* ring set up: to exit */
	struct io_uring		ring;
	struct sc_uring_ent	ents[WORKER_DEPTH];
};

enum { WAIT, GO, QUIT };

struct sc_uring {
	struct sc_fuse		*fs;
	int			fd;		/* /dev/fuse */
	int			stop_fd;	/* eventfd: readable = stop */
	size_t			payload_sz;
	unsigned int		nqueues;
	unsigned int		nworkers;	/* nqueues * QUEUE_WORKERS */
	struct worker		*workers;	/* queue i's: i * QUEUE_WORKERS on */
	pthread_mutex_t		lock;
	pthread_cond_t		cond;
	int			state;		/* under lock: WAIT until the INIT reply */
#ifdef SC_TEST_HOOKS
	const char		*block_xattr;	/* test hook, see sc_uring_prepare */
	const char		*block_fifo;
#endif
};

/* The user_data of the stop poll; entries are never at this address. */
static char stop_tag;

/* A URING_CMD SQE for ent on the registered /dev/fuse (fixed file 0). */
static void prep_cmd(struct io_uring_sqe *sqe, struct sc_uring_ent *ent, uint32_t op,
		     uint64_t commit_id)
{
	struct sc_uring_cmd_req *cmd;

	/* SQE128: the slot is two struct io_uring_sqe long. */
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->fd = 0;
	sqe->cmd_op = op;
	io_uring_sqe_set_data(sqe, ent);
	cmd = (struct sc_uring_cmd_req *)sqe->cmd;
	cmd->commit_id = commit_id;
	cmd->qid = (uint16_t)ent->w->qid;
}

ssize_t sc_uring_commit(struct sc_uring_ent *ent, const struct iovec *iov, int count)
{
	struct worker *w = ent->w;
	struct fuse_out_header *oh = (struct fuse_out_header *)ent->hdr->in_out;
	struct io_uring_sqe *sqe;
	size_t len = 0;

	if (count < 1 || iov[0].iov_len < sizeof(*oh)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(oh, iov[0].iov_base, sizeof(*oh));
	for (int i = 1; i < count; i++) {
		if (iov[i].iov_len > w->u->payload_sz - len) {
			/* Never: the kernel sized the payload for the largest reply. */
			oh->error = -EIO;
			len = 0;
			break;
		}
		memcpy(ent->payload + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	ent->hdr->ring_ent_in_out.payload_sz = (uint32_t)len;
	/* One SQE per entry, and an entry is committed once per request. */
	sqe = io_uring_get_sqe(&w->ring);
	if (!sqe) {
		errno = EIO;
		return -1;
	}
	prep_cmd(sqe, ent, SC_FUSE_IO_URING_CMD_COMMIT_AND_FETCH, ent->commit_id);
	return (ssize_t)(sizeof(*oh) + len);
}

/* Replies err to the request in ent, unique, without libfuse. */
static void commit_err(struct sc_uring_ent *ent, uint64_t unique, int err)
{
	struct fuse_out_header oh = {
		.len	= sizeof(oh),
		.error	= err,
		.unique	= unique,
	};
	struct iovec iov = { .iov_base = &oh, .iov_len = sizeof(oh) };

	sc_uring_commit(ent, &iov, 1);
}

#ifdef SC_TEST_HOOKS
/*
 * Test hook (SC_TEST_BLOCK_XATTR, see sc_uring_prepare): holds a GETXATTR
 * of that name, in its /dev/fuse form at buf, until the test has opened
 * the FIFO SC_TEST_BLOCK_FIFO for writing and closed it again; so the test
 * knows, without waiting for time to pass, that a request is being served
 * and when it ends.  Compiled only into the test daemon
 * (stackcrypt-testhooks, tests/mount/meson.build): the shipped binary
 * reads no test variable from its environment.
 */
static void test_block(const struct sc_uring *u, const struct fuse_buf *buf)
{
	const struct fuse_in_header *ih = buf->mem;
	const char *name = (const char *)(ih + 1) + sizeof(struct fuse_getxattr_in);
	size_t len = strlen(u->block_xattr) + 1;
	char c;
	int fd;

	if (ih->opcode != FUSE_GETXATTR ||
	    ih->len < sizeof(*ih) + sizeof(struct fuse_getxattr_in) + len ||
	    memcmp(name, u->block_xattr, len) != 0)
		return;
	fd = open(u->block_fifo, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fuse_log(FUSE_LOG_ERR, "stackcrypt: SC_TEST_BLOCK_FIFO %s: %s\n", u->block_fifo,
			 strerror(errno));
		return;
	}
	while (read(fd, &c, 1) > 0)
		;
	close(fd);
}
#endif

/* Serves the request the kernel put in ent; the reply is queued on return. */
static void serve(struct sc_uring_ent *ent)
{
	struct sc_uring *u = ent->w->u;
	struct sc_wire_req *rq = sc_wire_req();
	const struct fuse_in_header *ih = (const void *)ent->hdr->in_out;
	uint32_t payload_sz = ent->hdr->ring_ent_in_out.payload_sz;
	uint64_t unique = ih->unique;
	struct fuse_buf fbuf = { .size = ih->len };
	struct sc_wire_peek p;
	size_t op_sz;

	ent->commit_id = ent->hdr->ring_ent_in_out.commit_id;
	/* The header's length counts every argument: the rest of it is op_in's. */
	if (payload_sz > u->payload_sz || ih->len < sizeof(*ih) + payload_sz ||
	    ih->len - sizeof(*ih) - payload_sz > SC_FUSE_URING_OP_IN_OUT_SZ) {
		fuse_log(FUSE_LOG_ERR, "stackcrypt: io_uring: malformed request "
			 "(opcode %u, length %u, payload %u)\n",
			 ih->opcode, ih->len, payload_sz);
		commit_err(ent, unique, -EIO);
		return;
	}
	op_sz = ih->len - sizeof(*ih) - payload_sz;
	fbuf.mem = ent->payload - op_sz - sizeof(*ih);
	memcpy(fbuf.mem, ih, sizeof(*ih));
	memcpy((char *)fbuf.mem + sizeof(*ih), ent->hdr->op_in, op_sz);
#ifdef SC_TEST_HOOKS
	if (u->block_xattr)
		test_block(u, &fbuf);
#endif

	/* What the /dev/fuse read hook notes for the handlers (wire.c). */
	sc_idle_note(u->fs);
	sc_wire_peek(fbuf.mem, fbuf.size, &p);
	rq->kill_suidgid = p.kill_suidgid;
	rq->uring_ent = ent;
	fuse_session_process_buf(u->fs->se, &fbuf);
	if (rq->uring_ent) {
		/* Only FORGET and the like go unanswered, and they never come here. */
		rq->uring_ent = NULL;
		commit_err(ent, unique, -ENOSYS);
	}
}

/* A queue's failed completion (res < 0), after which it stops: says why. */
static void worker_failed(struct worker *w, int res)
{
	switch (res) {
	case -ENOTCONN:		/* unmounted */
	case -ECONNABORTED:	/* aborted */
	case -ECANCELED:	/* ring closing */
		break;
	default:
		/* A failed REGISTER has turned the connection's io_uring off. */
		fuse_log(FUSE_LOG_ERR, "stackcrypt: io_uring queue %u: %s\n", w->qid,
			 strerror(-res));
		break;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct sc_uring *u = w->u;
	bool stop = false;
	cpu_set_t cpus;
	char name[16];
	int state;

	/* The name tells the queues in /proc (tests/mount/uring_check.sh). */
	snprintf(name, sizeof(name), "sc-uring-%u", w->qid);
	pthread_setname_np(pthread_self(), name);
	/*
	 * Requests come from this CPU's callers: serve them on it.  The price,
	 * when another CPU is idle: the reply wakes the caller while this
	 * thread still holds the CPU, so the scheduler moves the caller to the
	 * idle one, and its next request goes to that CPU's queue.  Threads
	 * left unpinned, or kept off their queue's CPU, spare the caller that
	 * move but were no faster where measured (docs/performance.md 15.2).
	 */
	CPU_ZERO(&cpus);
	CPU_SET(w->qid, &cpus);
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);

	pthread_mutex_lock(&u->lock);
	while (u->state == WAIT)
		pthread_cond_wait(&u->cond, &u->lock);
	state = u->state;
	pthread_mutex_unlock(&u->lock);
	if (state != GO)
		return NULL;

	while (!stop) {
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;
		int ret;

		/* Commits queued by the replies below go with this wait. */
		ret = io_uring_submit_and_wait(&w->ring, 1);
		if (ret < 0 && ret != -EINTR) {
			worker_failed(w, ret);
			break;
		}
		io_uring_for_each_cqe(&w->ring, head, cqe) {
			struct sc_uring_ent *ent = io_uring_cqe_get_data(cqe);

			seen++;
			if ((void *)ent == &stop_tag)
				stop = true;
			else if (cqe->res < 0) {
				worker_failed(w, cqe->res);
				stop = true;
			} else {
				serve(ent);
			}
		}
		io_uring_cq_advance(&w->ring, seen);
	}
	/* Replies to the last requests served. */
	io_uring_submit(&w->ring);
	return NULL;
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Sets up w's ring, buffers and REGISTER SQEs (not submitted).  0 or -errno. */
static int worker_setup(struct sc_uring *u, struct worker *w)
{
	struct io_uring_params par = { .flags = IORING_SETUP_SQE128 };
	struct io_uring_sqe *sqe;
	int ret;

	/* One SQE per entry, one for the stop poll. */
	ret = io_uring_queue_init_params(WORKER_DEPTH + 1, &w->ring, &par);
	if (ret < 0)
		return ret;
	w->ring_ok = true;
	ret = io_uring_register_files(&w->ring, &u->fd, 1);
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < WORKER_DEPTH; i++) {
		struct sc_uring_ent *ent = &w->ents[i];

		ent->w = w;
		ent->hdr = map(sizeof(*ent->hdr));
		ent->buf = map(HEADROOM + u->payload_sz);
		if (!ent->hdr || !ent->buf)
			return -ENOMEM;
		ent->payload = ent->buf + HEADROOM;
		ent->iov[0] = (struct iovec){ ent->hdr, sizeof(*ent->hdr) };
		ent->iov[1] = (struct iovec){ ent->payload, u->payload_sz };
		sqe = io_uring_get_sqe(&w->ring);
		if (!sqe)
			return -EIO;
		prep_cmd(sqe, ent, SC_FUSE_IO_URING_CMD_REGISTER, 0);
		sqe->addr = (uintptr_t)ent->iov;
		sqe->len = 2;
	}
	sqe = io_uring_get_sqe(&w->ring);
	if (!sqe)
		return -EIO;
	io_uring_prep_poll_add(sqe, u->stop_fd, POLLIN);
	io_uring_sqe_set_data(sqe, &stop_tag);
	return 0;
}

/* Starts w's thread, which waits for sc_uring_run.  0 or -errno. */
static int worker_start(struct worker *w)
{
	int ret = sc_loop_thread_start(&w->tid, worker_main, w);

	if (ret < 0)
		return ret;
	w->thread = true;
	return 0;
}

int sc_uring_prepare(struct sc_fuse *fs, size_t payload_sz)
{
	struct sc_uring *u;
	int ret;

	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	fs->uring = u;
	u->fs = fs;
	u->fd = fuse_session_fd(fs->se);
	u->payload_sz = payload_sz;
	u->state = WAIT;
#ifdef SC_TEST_HOOKS
	/*
	 * Test hook: SC_TEST_BLOCK_XATTR=NAME and SC_TEST_BLOCK_FIFO=PATH hold
	 * a getxattr of NAME that comes by a ring until PATH (a FIFO) has been
	 * opened for writing and closed (test_block): the test that no queue
	 * waits behind a long request (tests/mount/uring_block_test.sh).
	 */
	u->block_xattr = getenv("SC_TEST_BLOCK_XATTR");
	u->block_fifo = getenv("SC_TEST_BLOCK_FIFO");
	if (!u->block_xattr || !*u->block_xattr || !u->block_fifo)
		u->block_xattr = NULL;
#endif
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	u->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (u->stop_fd < 0) {
		ret = -errno;
		goto err_free;
	}
	/* The kernel's queue count: num_possible_cpus(). */
	u->nqueues = (unsigned int)get_nprocs_conf();
	u->nworkers = u->nqueues * QUEUE_WORKERS;
	u->workers = calloc(u->nworkers, sizeof(*u->workers));
	if (!u->workers) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (unsigned int i = 0; i < u->nworkers; i++) {
		u->workers[i].u = u;
		u->workers[i].qid = i / QUEUE_WORKERS;
		ret = worker_setup(u, &u->workers[i]);
		if (ret < 0)
			goto err_free;
	}
	for (unsigned int i = 0; i < u->nworkers; i++) {
		ret = worker_start(&u->workers[i]);
		if (ret < 0)
			goto err_free;
	}
	return 0;

err_free:
	sc_uring_run(fs, false);
	sc_uring_stop(fs);
	sc_uring_free(fs);
	return ret;
}

void sc_uring_run(struct sc_fuse *fs, bool go)
{
	struct sc_uring *u = fs->uring;

	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	u->state = go ? GO : QUIT;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
}

void sc_uring_stop(struct sc_fuse *fs)
{
	struct sc_uring *u = fs->uring;
	uint64_t one = 1;

	if (!u)
		return;
	sc_uring_run(fs, false);	/* threads never released: quit */
	if (u->stop_fd >= 0 && write(u->stop_fd, &one, sizeof(one)) != sizeof(one))
		fuse_log(FUSE_LOG_ERR, "stackcrypt: io_uring: cannot stop the queues: %s\n",
			 strerror(errno));
	for (unsigned int i = 0; u->workers && i < u->nworkers; i++) {
		struct worker *w = &u->workers[i];

		if (w->thread)
			pthread_join(w->tid, NULL);
		w->thread = false;
		if (w->ring_ok)
			io_uring_queue_exit(&w->ring);
		w->ring_ok = false;
	}
}

void sc_uring_free(struct sc_fuse *fs)
{
	struct sc_uring *u = fs->uring;

	if (!u)
		return;
	for (unsigned int i = 0; u->workers && i < u->nworkers; i++) {
		for (unsigned int j = 0; j < WORKER_DEPTH; j++) {
			struct sc_uring_ent *ent = &u->workers[i].ents[j];

			if (ent->hdr)
				munmap(ent->hdr, sizeof(*ent->hdr));
			if (ent->buf)
				munmap(ent->buf, HEADROOM + u->payload_sz);
		}
	}
	free(u->workers);
	if (u->stop_fd >= 0)
		close(u->stop_fd);
	pthread_cond_destroy(&u->cond);
	pthread_mutex_destroy(&u->lock);
	free(u);
	fs->uring = NULL;
}
