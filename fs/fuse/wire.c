/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wire.c - the front end on /dev/fuse itself: the I/O hooks around the
 * device fd (sc_fuse_io), which read each request with the one parser of
 * raw requests (sc_wire_peek in wire_i.h, shared with loop.c) and keep the
 * per-request context they share with the handlers (sc_wire_req, see
 * wire_i.h for why it is the thread's).
 *
 * FUSE_HANDLE_KILLPRIV_V2: without this capability the kernel asks
 * getxattr("security.capability") before every write(2) (to know whether
 * the write must drop file capabilities): one extra round trip per write,
 * the largest cost of small writes.  With it, the kernel leaves the
 * clearing of privileges to us and flags the requests of callers without
 * CAP_FSETID: FUSE_WRITE_KILL_SUIDGID on WRITE, FATTR_KILL_SUIDGID on
 * SETATTR (truncate, chown), and FUSE_OPEN_KILL_SUIDGID on OPEN/CREATE with
 * O_TRUNC.
 *
 * libfuse 3.14 neither offers the capability nor passes those flags up, so
 * the front end hooks the /dev/fuse I/O (fuse_session_custom_io): the read
 * hook notes the flag of the request this worker thread is about to
 * process in its context (libfuse reads and processes a request on the
 * same thread), and the write hook adds the capability to the INIT reply
 * when the kernel offered it.  The handlers then drop suid, and sgid when
 * group-executable (the kernel's own rule), through the stack (setid.c).
 * security.capability needs nothing: the backing filesystem removes it
 * itself on every write, truncate and chown, whoever the caller is, and a
 * chown by root (all our backing calls) drops suid/sgid too.
 *
 * The write hook also adds what libfuse's fuse_file_info cannot carry to
 * an OPEN/CREATE reply (FOPEN_PARALLEL_DIRECT_WRITES, when the handler set
 * it in the request's context), and to the INIT reply the capability that
 * parallel direct writes need (FUSE_DIRECT_IO_ALLOW_MMAP).
 *
 * -o io_uring: the INIT reply asks for FUSE_OVER_IO_URING when the kernel
 * offered it and the queues could be set up (uring.c), and the write hook
 * sends the reply of a request that came by a ring back through its ring
 * entry instead of /dev/fuse; both transports share everything else here.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse_i.h"
#include "uring_i.h"
#include "uring_proto.h"
#include "wire_i.h"

/* Linux 6.6 (protocol 7.39); Debian 12's <linux/fuse.h> predates it. */
#define SC_FUSE_DIRECT_IO_ALLOW_MMAP	(1ULL << 36)

__thread struct sc_wire_req sc_wire_req_tls;

static ssize_t dev_read(int fd, void *buf, size_t len, void *userdata)
{
	struct sc_wire_req *rq = sc_wire_req();
	struct sc_fuse *fs = userdata;
	ssize_t n = read(fd, buf, len);
	struct sc_wire_peek p;

	rq->kill_suidgid = false;
	if (n < 0)
		return n;
	sc_idle_note(fs);
	sc_wire_peek(buf, (size_t)n, &p);
	if (p.init) {
		fs->init_unique = p.unique;
		fs->init_minor = p.init_minor;
		fs->init_offered = p.init_offered;
	}
	rq->kill_suidgid = p.kill_suidgid;
	return n;
}

/*
 * The capabilities libfuse 3.14 does not know, added to its INIT reply
 * when the kernel offered them.  flags2 is read by the kernel only with
 * FUSE_INIT_EXT set; libfuse zeroes what it does not fill.  Parallel
 * direct writes also wait for the kernel's io modes (protocol 7.40, Linux
 * 6.9), which keep them apart from page-cache I/O on the same file.
 */
/* Why the kernel did not offer FUSE over io_uring, for the notice. */
static const char *uring_absent_why(void)
{
	FILE *f = fopen("/sys/module/fuse/parameters/enable_uring", "re");
	int c;

	if (!f)
		return "this kernel has no FUSE over io_uring (Linux 6.14+)";
	c = fgetc(f);
	fclose(f);
	if (c != 'Y')
		return "/sys/module/fuse/parameters/enable_uring is off";
	return "the kernel did not offer it";
}

/*
 * -o io_uring: asks for FUSE_OVER_IO_URING in the INIT reply io (len bytes)
 * once the queues are ready for it, each sized for the largest argument
 * the kernel will send with this reply's limits (its max_payload_sz).
 * Anything else: one notice, and /dev/fuse serves as without the option.
 */
static void init_reply_uring(struct sc_fuse *fs, struct fuse_init_out *io, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), payload;
	int ret;

	if (!(fs->init_offered & SC_FUSE_OVER_IO_URING) ||
	    !(fs->init_offered & FUSE_INIT_EXT) ||
	    len < offsetof(struct fuse_init_out, flags2) + sizeof(uint32_t)) {
		fuse_log(FUSE_LOG_NOTICE, "stackcrypt: -o io_uring: %s; serving over /dev/fuse\n",
			 uring_absent_why());
		return;
	}
	payload = (io->flags & FUSE_MAX_PAGES) && io->max_pages ? io->max_pages : 32;
	payload *= page;
	if (payload < io->max_write)
		payload = io->max_write;
	if (payload < 8192)	/* the kernel's FUSE_MIN_READ_BUFFER */
		payload = 8192;
	ret = sc_uring_prepare(fs, payload);
	if (ret < 0) {
		fuse_log(FUSE_LOG_NOTICE, "stackcrypt: -o io_uring: cannot set up the queues: %s; "
			 "serving over /dev/fuse\n", strerror(-ret));
		return;
	}
	io->flags |= FUSE_INIT_EXT;
	io->flags2 |= (uint32_t)(SC_FUSE_OVER_IO_URING >> 32);
}

static void init_reply_add(struct sc_fuse *fs, struct iovec *arg)
{
	struct fuse_init_out *io = arg->iov_base;

	if (arg->iov_len < offsetof(struct fuse_init_out, flags) + sizeof(uint32_t))
		return;
	if (fs->killpriv_v2 && (fs->init_offered & FUSE_HANDLE_KILLPRIV_V2))
		io->flags |= FUSE_HANDLE_KILLPRIV_V2;
	if (fs->ask_parallel_dio && fs->init_minor >= 40 &&
	    (fs->init_offered & FUSE_INIT_EXT) &&
	    (fs->init_offered & SC_FUSE_DIRECT_IO_ALLOW_MMAP) &&
	    arg->iov_len >= offsetof(struct fuse_init_out, flags2) + sizeof(uint32_t)) {
		io->flags |= FUSE_INIT_EXT;
		io->flags2 |= (uint32_t)(SC_FUSE_DIRECT_IO_ALLOW_MMAP >> 32);
		fs->parallel_dio = true;
	}
	if (fs->ask_uring)
		init_reply_uring(fs, io, arg->iov_len);
}

static ssize_t dev_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct sc_wire_req *rq = sc_wire_req();
	struct sc_fuse *fs = userdata;
	const struct fuse_out_header *out = iov[0].iov_base;
	struct sc_uring_ent *ent = rq->uring_ent;
	ssize_t n;

	if (fs->init_unique && out->unique == fs->init_unique) {
		fs->init_unique = 0;
		if (count >= 2 && out->error == 0)
			init_reply_add(fs, &iov[1]);
		n = writev(fd, iov, count);
		fs->init_replied = true;
		fs->over_uring = n >= 0 && fs->uring;	/* init_reply_uring asked for it */
		/* The kernel has the reply (or never will): the queues may register. */
		sc_uring_run(fs, n >= 0);
		return n;
	} else if (rq->parallel_writes && count >= 2 && out->error == 0 &&
		   iov[count - 1].iov_len >= sizeof(struct fuse_open_out)) {
		/* OPEN's reply is a fuse_open_out, CREATE's ends with one. */
		struct fuse_open_out *oo = (void *)((char *)iov[count - 1].iov_base +
						    iov[count - 1].iov_len - sizeof(*oo));

		oo->open_flags |= FOPEN_PARALLEL_DIRECT_WRITES;
	}
	rq->parallel_writes = false;
	/* A notification (unique 0) from a ring thread still goes to /dev/fuse. */
	if (ent && out->unique != 0) {
		rq->uring_ent = NULL;
		return sc_uring_commit(ent, iov, count);
	}
	return writev(fd, iov, count);
}

const struct fuse_custom_io sc_fuse_io = {
	.read	= dev_read,
	.writev	= dev_writev,
};
