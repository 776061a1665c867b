/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uring.c - FUSE over io_uring (-o io_uring, Linux 6.14+ with the fuse
 * module's enable_uring on): the prototype of issue #19, step 1.  See
 * uring_proto.h for the bytes and docs/performance.md for what it measured.
 *
 * The kernel keeps one queue per possible CPU and hands a request to the
 * queue of the CPU its caller runs on; so here one thread per queue, pinned
 * to that CPU, with its own ring of 128-byte SQEs.  Each queue registers
 * QUEUE_DEPTH entries (IORING_OP_URING_CMD REGISTER on the /dev/fuse fd):
 * a header and a payload buffer the kernel writes a request into, and
 * completes the command.  The thread rebuilds the request's /dev/fuse form
 * in place (fuse_in_header and the per-opcode struct copied just before the
 * payload, which is where the headroom of each buffer is for: the payload,
 * write data included, is never copied) and hands it to libfuse's
 * fuse_session_process_buf, as a /dev/fuse loop would.  The handler's
 * reply reaches the write hook (wire.c), which sees the thread's entry in
 * the request context and calls sc_uring_commit: the reply goes into the
 * entry's buffers and a COMMIT_AND_FETCH SQE is queued, submitted with the
 * wait for the next completion: one io_uring_enter per reply-and-fetch,
 * where /dev/fuse costs a writev and a read.
 *
 * INIT, FORGET, INTERRUPT and notifications stay on /dev/fuse, served by
 * the usual loop: the kernel never puts them on a ring.
 *
 * No queue blocked behind a long request.  A queue's requests come from
 * the callers on one CPU, and any request may take long (fsync, a read of
 * a slow backing such as GlusterFS, a blocking lock): the others queued on
 * that CPU must not wait for it.  So each queue has a few threads, one
 * role each at a time, under the queue's lock:
 *   leader    the one that takes completions (new requests) off the ring;
 *             it serves each request itself, inline (the fast path: no
 *             wake of another thread, one io_uring_enter per reply and
 *             wait), but first gives up the lead and turns on the ring's
 *             eventfd (a flag in the CQ ring, no syscall);
 *   standby   waits in read(2) on that eventfd: the kernel signals it when
 *             a request arrives while nobody leads, the standby becomes
 *             the leader and serves that one, and so on;
 *   server    done with its request: takes the lead back if nobody took
 *             it (turning the eventfd off: a quick request costs two flag
 *             writes), else becomes the standby, or idles on a condition
 *             variable.
 * Threads are started when a standby is wanted and none is idle, up to
 * QUEUE_DEPTH + 1 per queue (every entry served at once, and a standby);
 * if one cannot be started the queue serves inline as before.  Replies
 * are committed out of order, each by the thread that served it: the SQ
 * is shared under the queue's lock (SQE, then the tail), and a server
 * that does not lead submits its commit itself; the leader submits its
 * own with its wait.  Why a lock and not IORING_OP_MSG_RING or a
 * hand-back to the leader: the commit would then wait for another
 * thread's wake, which is the cost this transport removes, while the lock
 * is never held across a syscall that waits.

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
 * Entries per queue: requests the kernel may hand to one CPU's queue at
 * once, served at once (one thread each); more wait in the kernel for an
 * entry.  The payload buffers are touched only as far as requests fill
 * them.
 */
#define QUEUE_DEPTH	16
/* Threads per queue at most: every entry served at once, and a standby. */
#define QUEUE_THREADS	(QUEUE_DEPTH + 1)
/* Room before the payload for a fuse_in_header and the per-opcode struct. */
#define HEADROOM	256

_Static_assert(HEADROOM >= sizeof(struct fuse_in_header) + SC_FUSE_URING_OP_IN_OUT_SZ,
	       "the /dev/fuse form of a request fits before its payload");

struct queue;

struct sc_uring_ent {
	struct queue			*q;
	struct sc_uring_req_header	*hdr;		/* registered */
	char				*buf;		/* HEADROOM + payload */
	char				*payload;	/* buf + HEADROOM, registered */
	uint64_t			commit_id;	/* the request being served */
	bool				replied;	/* the reply is in the buffers */
	struct iovec			iov[2];		/* REGISTER's header, payload */
};

struct queue {
	struct sc_uring		*u;
	unsigned int		qid;
	bool			ring_ok;	/* ring set up: to exit */
	struct io_uring		ring;
	int			cq_fd;		/* eventfd: a completion while nobody leads */
	struct sc_uring_ent	ents[QUEUE_DEPTH];
	/* The lock guards the roles below and the SQ (see the top). */
	pthread_mutex_t		lock;
	bool			lock_ok;
	pthread_cond_t		idle_cond;	/* idle threads wait here */
	bool			leader;		/* a thread leads */
	bool			standby;	/* a thread waits on cq_fd */
	bool			stop;		/* every thread leaves */
	unsigned int		nidle;
	unsigned int		nthreads;	/* started: tids[0..nthreads) to join */
	pthread_t		tids[QUEUE_THREADS];
};

enum { WAIT, GO, QUIT };

struct sc_uring {
	struct sc_fuse		*fs;
	int			fd;		/* /dev/fuse */
	int			stop_fd;	/* eventfd: readable = stop */
	size_t			payload_sz;
	unsigned int		nqueues;
	struct queue		*queues;
	pthread_mutex_t		lock;
	pthread_cond_t		cond;
	int			state;		/* under lock: WAIT until the INIT reply */
	const char		*block_xattr;	/* test hook, see sc_uring_prepare */
	const char		*block_fifo;
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
	cmd->qid = (uint16_t)ent->q->qid;
}

ssize_t sc_uring_commit(struct sc_uring_ent *ent, const struct iovec *iov, int count)
{
	struct fuse_out_header *oh = (struct fuse_out_header *)ent->hdr->in_out;
	size_t len = 0;

	if (count < 1 || iov[0].iov_len < sizeof(*oh) || ent->replied) {
		errno = EINVAL;
		return -1;
	}
	memcpy(oh, iov[0].iov_base, sizeof(*oh));
	for (int i = 1; i < count; i++) {
		if (iov[i].iov_len > ent->q->u->payload_sz - len) {
			/* Never: the kernel sized the payload for the largest reply. */
			oh->error = -EIO;
			len = 0;
			break;
		}
		memcpy(ent->payload + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	ent->hdr->ring_ent_in_out.payload_sz = (uint32_t)len;
	/* The serving thread queues the commit once the handler has returned. */
	ent->replied = true;
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

/*
 * Test hook (SC_TEST_BLOCK_XATTR, see sc_uring_prepare): holds a GETXATTR
 * of that name, in its /dev/fuse form at buf, until the test has opened
 * the FIFO SC_TEST_BLOCK_FIFO for writing and closed it again; so the test
 * knows, without waiting for time to pass, that a request is being served
 * and when it ends.  Harmless: the variables are the daemon's own
 * environment, and the hook only ever delays the named getxattr.
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

/* Serves the request the kernel put in ent; its reply is in ent on return. */
static void serve(struct sc_uring_ent *ent)
{
	struct sc_uring *u = ent->q->u;
	struct sc_wire_req *rq = sc_wire_req();
	const struct fuse_in_header *ih = (const void *)ent->hdr->in_out;
	uint32_t payload_sz = ent->hdr->ring_ent_in_out.payload_sz;
	uint64_t unique = ih->unique;
	struct fuse_buf fbuf = { .size = ih->len };
	struct sc_wire_peek p;
	size_t op_sz;

	ent->commit_id = ent->hdr->ring_ent_in_out.commit_id;
	ent->replied = false;
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
	if (u->block_xattr)
		test_block(u, &fbuf);

	/* What the /dev/fuse read hook notes for the handlers (wire.c). */
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
static void queue_failed(struct queue *q, int res)
{
	switch (res) {
	case -ENOTCONN:		/* unmounted */
	case -ECONNABORTED:	/* aborted */
	case -ECANCELED:	/* ring closing */
		break;
	default:
		/* A failed REGISTER has turned the connection's io_uring off. */
		fuse_log(FUSE_LOG_ERR, "stackcrypt: io_uring queue %u: %s\n", q->qid,
			 strerror(-res));
		break;
	}
}

/*
 * Under q->lock: publishes the SQEs prepared so far to the kernel, as
 * liburing's submit does before its io_uring_enter; here apart, so that a
 * leader can make its io_uring_enter, which waits, without the lock.  The
 * SQ array maps slot i to SQE i (queue_setup).  Returns how many SQEs the
 * kernel has yet to take.
 */
static unsigned int sq_flush(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned int tail = sq->sqe_tail;

	if (sq->sqe_head != tail) {
		sq->sqe_head = tail;
		io_uring_smp_store_release(sq->ktail, tail);
	}
	return tail - io_uring_smp_load_acquire(sq->khead);
}

/* Under q->lock: queues the COMMIT_AND_FETCH of ent's reply. */
static void queue_commit(struct queue *q, struct sc_uring_ent *ent)
{
	/* One SQE per entry, never more in flight: the SQ has room. */
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);

	ent->replied = false;
	if (!sqe) {
		fuse_log(FUSE_LOG_ERR, "stackcrypt: io_uring queue %u: no SQE for a reply\n",
			 q->qid);
		return;
	}
	prep_cmd(sqe, ent, SC_FUSE_IO_URING_CMD_COMMIT_AND_FETCH, ent->commit_id);
}

/* Under q->lock: every thread of q leaves (its request served first). */
static void queue_set_stop(struct queue *q)
{
	q->stop = true;
	q->leader = false;
	pthread_cond_broadcast(&q->idle_cond);
	if (q->standby && eventfd_write(q->cq_fd, 1) < 0)
		fuse_log(FUSE_LOG_ERR, "stackcrypt: io_uring queue %u: %s\n", q->qid,
			 strerror(errno));
}

static void *queue_main(void *arg);

/*
 * Under q->lock: makes sure a thread will take the lead if a request comes
 * while this one serves: an idle one, else a new one.  Without either the
 * queue serves inline, as with one thread.
 */
static void call_standby(struct queue *q)
{
	if (q->standby || q->stop)
		return;
	if (q->nidle) {
		pthread_cond_signal(&q->idle_cond);
	} else if (q->nthreads < QUEUE_THREADS &&
		   sc_loop_thread_start(&q->tids[q->nthreads], queue_main, q) == 0) {
		q->nthreads++;
	}
}

/*
 * Under q->lock, with nobody leading: leads until a request comes, which
 * it returns after giving up the lead; NULL when the queue stops.  The
 * commits queued meanwhile go to the kernel with the wait.
 */
static struct sc_uring_ent *lead(struct queue *q)
{
	struct sc_uring_ent *ent;

	q->leader = true;
	io_uring_cq_eventfd_toggle(&q->ring, false);
	for (;;) {
		struct io_uring_cqe *cqe;
		unsigned int n;
		void *data;
		int ret, res;

		if (io_uring_peek_cqe(&q->ring, &cqe) == 0) {
			data = io_uring_cqe_get_data(cqe);
			res = cqe->res;
			io_uring_cqe_seen(&q->ring, cqe);
			if (data == &stop_tag) {
				queue_set_stop(q);
				return NULL;
			}
			if (res < 0) {
				queue_failed(q, res);
				queue_set_stop(q);
				return NULL;
			}
			ent = data;
			break;
		}
		n = sq_flush(&q->ring);
		pthread_mutex_unlock(&q->lock);
		ret = io_uring_enter(q->ring.ring_fd, n, 1, IORING_ENTER_GETEVENTS, NULL);
		pthread_mutex_lock(&q->lock);
		if (ret < 0 && ret != -EINTR) {
			queue_failed(q, ret);
			queue_set_stop(q);
			return NULL;
		}
	}
	q->leader = false;
	call_standby(q);
	io_uring_cq_eventfd_toggle(&q->ring, true);
	/*
	 * A request already completed before the eventfd was on signals
	 * nobody: wake the standby for it.  The fence orders the flag's store
	 * before the load of the CQ's tail.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (io_uring_cq_ready(&q->ring) && q->standby && eventfd_write(q->cq_fd, 1) < 0)
		fuse_log(FUSE_LOG_ERR, "stackcrypt: io_uring queue %u: %s\n", q->qid,
			 strerror(errno));
	return ent;
}

/* Under q->lock: waits on the eventfd until a request comes with no leader. */
static void stand_by(struct queue *q)
{
	eventfd_t v;

	q->standby = true;
	pthread_mutex_unlock(&q->lock);
	if (eventfd_read(q->cq_fd, &v) < 0 && errno != EINTR)
		fuse_log(FUSE_LOG_ERR, "stackcrypt: io_uring queue %u: %s\n", q->qid,
			 strerror(errno));
	pthread_mutex_lock(&q->lock);
	q->standby = false;
}

/* Under q->lock: serves ent without the lock, then queues its commit. */
static void serve_commit(struct queue *q, struct sc_uring_ent *ent)
{
	unsigned int n;
	int ret;

	pthread_mutex_unlock(&q->lock);
	serve(ent);
	pthread_mutex_lock(&q->lock);
	queue_commit(q, ent);
	/* Nobody leads: the commit goes with this thread's wait as leader. */
	if (!q->leader && !q->stop)
		return;
	n = sq_flush(&q->ring);
	pthread_mutex_unlock(&q->lock);
	ret = io_uring_enter(q->ring.ring_fd, n, 0, 0, NULL);
	pthread_mutex_lock(&q->lock);
	if (ret < 0 && ret != -EINTR && !q->stop) {
		queue_failed(q, ret);
		queue_set_stop(q);
	}
}

static void *queue_main(void *arg)
{
	struct queue *q = arg;
	struct sc_uring *u = q->u;
	struct sc_uring_ent *ent;
	cpu_set_t cpus;
	char name[16];
	int state;

	/* The name tells the queues in /proc (tests/mount/uring_test.sh). */
	snprintf(name, sizeof(name), "sc-uring-%u", q->qid);
	pthread_setname_np(pthread_self(), name);
	/* Requests come from this CPU's callers: serve them on it. */
	CPU_ZERO(&cpus);
	CPU_SET(q->qid, &cpus);
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);

	pthread_mutex_lock(&u->lock);
	while (u->state == WAIT)
		pthread_cond_wait(&u->cond, &u->lock);
	state = u->state;
	pthread_mutex_unlock(&u->lock);
	if (state != GO)
		return NULL;

	pthread_mutex_lock(&q->lock);
	while (!q->stop) {
		if (!q->leader) {
			ent = lead(q);
			if (ent)
				serve_commit(q, ent);
		} else if (!q->standby) {
			stand_by(q);
		} else {
			q->nidle++;
			pthread_cond_wait(&q->idle_cond, &q->lock);
			q->nidle--;
		}
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Sets up q's ring, buffers and REGISTER SQEs (not submitted).  0 or -errno. */
static int queue_setup(struct sc_uring *u, struct queue *q)
{
	struct io_uring_params par = { .flags = IORING_SETUP_SQE128 };
	struct io_uring_sqe *sqe;
	int ret;

	ret = -pthread_mutex_init(&q->lock, NULL);
	if (ret < 0)
		return ret;
	ret = -pthread_cond_init(&q->idle_cond, NULL);
	if (ret < 0) {
		pthread_mutex_destroy(&q->lock);
		return ret;
	}
	q->lock_ok = true;
	q->cq_fd = eventfd(0, EFD_CLOEXEC);
	if (q->cq_fd < 0)
		return -errno;
	/* One SQE per entry, one for the stop poll. */
	ret = io_uring_queue_init_params(QUEUE_DEPTH + 1, &q->ring, &par);
	if (ret < 0)
		return ret;
	q->ring_ok = true;
	/* sq_flush publishes slots in order: slot i holds SQE i, always. */
	for (unsigned int i = 0; i < q->ring.sq.ring_entries; i++)
		q->ring.sq.array[i] = i;
	ret = io_uring_register_files(&q->ring, &u->fd, 1);
	if (ret < 0)
		return ret;
	/* Signalled only while nobody leads (lead() turns it on and off). */
	ret = io_uring_register_eventfd(&q->ring, q->cq_fd);
	if (ret < 0)
		return ret;
	io_uring_cq_eventfd_toggle(&q->ring, false);
	for (unsigned int i = 0; i < QUEUE_DEPTH; i++) {
		struct sc_uring_ent *ent = &q->ents[i];

		ent->q = q;
		ent->hdr = map(sizeof(*ent->hdr));
		ent->buf = map(HEADROOM + u->payload_sz);
		if (!ent->hdr || !ent->buf)
			return -ENOMEM;
		ent->payload = ent->buf + HEADROOM;
		ent->iov[0] = (struct iovec){ ent->hdr, sizeof(*ent->hdr) };
		ent->iov[1] = (struct iovec){ ent->payload, u->payload_sz };
		sqe = io_uring_get_sqe(&q->ring);
		if (!sqe)
			return -EIO;
		prep_cmd(sqe, ent, SC_FUSE_IO_URING_CMD_REGISTER, 0);
		sqe->addr = (uintptr_t)ent->iov;
		sqe->len = 2;
	}
	sqe = io_uring_get_sqe(&q->ring);
	if (!sqe)
		return -EIO;
	io_uring_prep_poll_add(sqe, u->stop_fd, POLLIN);
	io_uring_sqe_set_data(sqe, &stop_tag);
	return 0;
}

/*
 * Starts q's first two threads (a leader and a standby), which wait for
 * sc_uring_run; more start when wanted.  0 or -errno.
 */
static int queue_start(struct queue *q)
{
	int ret = 0;

	pthread_mutex_lock(&q->lock);
	while (q->nthreads < 2) {
		ret = sc_loop_thread_start(&q->tids[q->nthreads], queue_main, q);
		if (ret < 0)
			break;
		q->nthreads++;
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
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
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	u->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (u->stop_fd < 0) {
		ret = -errno;
		goto err_free;
	}
	/* The kernel's queue count: num_possible_cpus(). */
	u->nqueues = (unsigned int)get_nprocs_conf();
	u->queues = calloc(u->nqueues, sizeof(*u->queues));
	if (!u->queues) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (unsigned int i = 0; i < u->nqueues; i++)
		u->queues[i].cq_fd = -1;
	for (unsigned int i = 0; i < u->nqueues; i++) {
		u->queues[i].u = u;
		u->queues[i].qid = i;
		ret = queue_setup(u, &u->queues[i]);
		if (ret < 0)
			goto err_free;
	}
	for (unsigned int i = 0; i < u->nqueues; i++) {
		ret = queue_start(&u->queues[i]);
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
	for (unsigned int i = 0; u->queues && i < u->nqueues; i++) {
		struct queue *q = &u->queues[i];

		/* Threads start threads only before they stop: count read each time. */
		for (unsigned int t = 0; q->lock_ok; t++) {
			pthread_t tid;

			pthread_mutex_lock(&q->lock);
			if (t >= q->nthreads) {
				q->nthreads = 0;
				pthread_mutex_unlock(&q->lock);
				break;
			}
			tid = q->tids[t];
			pthread_mutex_unlock(&q->lock);
			pthread_join(tid, NULL);
		}
		if (q->ring_ok)
			io_uring_queue_exit(&q->ring);
		q->ring_ok = false;
	}
}

void sc_uring_free(struct sc_fuse *fs)
{
	struct sc_uring *u = fs->uring;

	if (!u)
		return;
	for (unsigned int i = 0; u->queues && i < u->nqueues; i++) {
		struct queue *q = &u->queues[i];

		for (unsigned int j = 0; j < QUEUE_DEPTH; j++) {
			struct sc_uring_ent *ent = &q->ents[j];

			if (ent->hdr)
				munmap(ent->hdr, sizeof(*ent->hdr));
			if (ent->buf)
				munmap(ent->buf, HEADROOM + u->payload_sz);
		}
		if (q->cq_fd >= 0)
			close(q->cq_fd);
		if (q->lock_ok) {
			pthread_cond_destroy(&q->idle_cond);
			pthread_mutex_destroy(&q->lock);
		}
	}
	free(u->queues);
	if (u->stop_fd >= 0)
		close(u->stop_fd);
	pthread_cond_destroy(&u->cond);
	pthread_mutex_destroy(&u->lock);
	free(u);
	fs->uring = NULL;
}
