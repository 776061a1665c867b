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
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse_i.h"
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
}

static ssize_t dev_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct sc_wire_req *rq = sc_wire_req();
	struct sc_fuse *fs = userdata;
	const struct fuse_out_header *out = iov[0].iov_base;

	if (fs->init_unique && out->unique == fs->init_unique) {
		fs->init_unique = 0;
		if (count >= 2 && out->error == 0)
			init_reply_add(fs, &iov[1]);
	} else if (rq->parallel_writes && count >= 2 && out->error == 0 &&
		   iov[count - 1].iov_len >= sizeof(struct fuse_open_out)) {
		/* OPEN's reply is a fuse_open_out, CREATE's ends with one. */
		struct fuse_open_out *oo = (void *)((char *)iov[count - 1].iov_base +
						    iov[count - 1].iov_len - sizeof(*oo));

		oo->open_flags |= FOPEN_PARALLEL_DIRECT_WRITES;
	}
	rq->parallel_writes = false;
	return writev(fd, iov, count);
}

const struct fuse_custom_io sc_fuse_io = {
	.read	= dev_read,
	.writev	= dev_writev,
};
