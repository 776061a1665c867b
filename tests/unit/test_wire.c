/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_wire.c - the front end's one parser of raw /dev/fuse requests
 * (sc_wire_peek, fs/fuse/wire_i.h), shared by the read hook and loop.c: the
 * set-id flags of WRITE, SETATTR, OPEN and CREATE, the sizes loop.c sorts
 * on, INIT's offered flags (flags2 only with FUSE_INIT_EXT), and nothing
 * read past the end of a short request.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "wire_i.h"

/* A request as the kernel lays it out: the header, then the op's struct. */
struct req {
	struct fuse_in_header	h;
	union {
		struct fuse_write_in	write;
		struct fuse_read_in	read;
		struct fuse_setattr_in	setattr;
		struct fuse_open_in	open;
		struct fuse_create_in	create;
		struct fuse_init_in	init;
		char			bytes[256];
	} a;
};

static struct req new_req(uint32_t opcode)
{
	struct req r;

	memset(&r, 0, sizeof(r));
	r.h.opcode = opcode;
	r.h.unique = 42;
	return r;
}

/* Parses r as a request of header + alen bytes. */
static struct sc_wire_peek peek(const struct req *r, size_t alen)
{
	struct sc_wire_peek p;

	memset(&p, 0xa5, sizeof(p));	/* every field must be set, not left */
	sc_wire_peek(r, sizeof(r->h) + alen, &p);
	return p;
}

Test(wire, shorter_than_a_header_is_all_zero)
{
	struct req r = new_req(FUSE_WRITE);
	struct sc_wire_peek p;

	memset(&p, 0xa5, sizeof(p));
	sc_wire_peek(&r, sizeof(r.h) - 1, &p);
	cr_assert_eq(p.opcode, 0);
	cr_assert_eq(p.unique, 0);
	cr_assert(!p.kill_suidgid && !p.truncates && !p.init);
	cr_assert_eq(p.io_size, 0);
}

Test(wire, write_kill_flag_and_size)
{
	struct req r = new_req(FUSE_WRITE);
	struct sc_wire_peek p;

	r.a.write.size = 200000;
	p = peek(&r, sizeof(r.a.write));
	cr_assert_eq(p.opcode, FUSE_WRITE);
	cr_assert_eq(p.unique, 42);
	cr_assert_eq(p.io_size, 200000);
	cr_assert(!p.kill_suidgid);
	cr_assert(!p.truncates && !p.init);

	r.a.write.write_flags = FUSE_WRITE_KILL_SUIDGID;
	p = peek(&r, sizeof(r.a.write));
	cr_assert(p.kill_suidgid);
}

Test(wire, truncated_write_reads_no_argument)
{
	struct req r = new_req(FUSE_WRITE);
	struct sc_wire_peek p;

	r.a.write.size = 200000;
	r.a.write.write_flags = FUSE_WRITE_KILL_SUIDGID;
	p = peek(&r, sizeof(r.a.write) - 1);
	cr_assert_eq(p.opcode, FUSE_WRITE);
	cr_assert_eq(p.io_size, 0);
	cr_assert(!p.kill_suidgid);
}

Test(wire, read_size)
{
	struct req r = new_req(FUSE_READ);
	struct sc_wire_peek p;

	r.a.read.size = 131073;
	p = peek(&r, sizeof(r.a.read));
	cr_assert_eq(p.io_size, 131073);
	cr_assert(!p.kill_suidgid);
	p = peek(&r, sizeof(r.a.read) - 1);
	cr_assert_eq(p.io_size, 0);
}

Test(wire, setattr_size_and_kill)
{
	struct req r = new_req(FUSE_SETATTR);
	struct sc_wire_peek p;

	r.a.setattr.valid = FATTR_MODE;
	p = peek(&r, sizeof(r.a.setattr));
	cr_assert(!p.truncates && !p.kill_suidgid);

	r.a.setattr.valid = FATTR_SIZE | FATTR_KILL_SUIDGID;
	p = peek(&r, sizeof(r.a.setattr));
	cr_assert(p.truncates && p.kill_suidgid);
	cr_assert_eq(p.io_size, 0);

	p = peek(&r, sizeof(r.a.setattr) - 1);
	cr_assert(!p.truncates && !p.kill_suidgid);
}

Test(wire, open_and_create_kill)
{
	struct req r = new_req(FUSE_OPEN);
	struct sc_wire_peek p;

	r.a.open.open_flags = FUSE_OPEN_KILL_SUIDGID;
	p = peek(&r, sizeof(r.a.open));
	cr_assert(p.kill_suidgid);
	p = peek(&r, sizeof(r.a.open) - 1);
	cr_assert(!p.kill_suidgid);

	r = new_req(FUSE_CREATE);
	r.a.create.open_flags = FUSE_OPEN_KILL_SUIDGID;
	p = peek(&r, sizeof(r.a.create));
	cr_assert(p.kill_suidgid);
	r.a.create.open_flags = 0;
	p = peek(&r, sizeof(r.a.create));
	cr_assert(!p.kill_suidgid);
}

Test(wire, other_requests_carry_only_opcode_and_unique)
{
	struct req r = new_req(FUSE_FSYNC);
	struct sc_wire_peek p;

	memset(r.a.bytes, 0xff, sizeof(r.a.bytes));
	p = peek(&r, sizeof(r.a.bytes));
	cr_assert_eq(p.opcode, FUSE_FSYNC);
	cr_assert_eq(p.unique, 42);
	cr_assert(!p.kill_suidgid && !p.truncates && !p.init);
	cr_assert_eq(p.io_size, 0);
}

Test(wire, init_flags2_only_with_init_ext)
{
	struct req r = new_req(FUSE_INIT);
	struct sc_wire_peek p;

	r.a.init.minor = 40;
	r.a.init.flags = FUSE_HANDLE_KILLPRIV_V2;
	r.a.init.flags2 = 0x10;
	p = peek(&r, sizeof(r.a.init));
	cr_assert(p.init);
	cr_assert_eq(p.init_minor, 40);
	cr_assert_eq(p.init_offered, FUSE_HANDLE_KILLPRIV_V2, "flags2 without FUSE_INIT_EXT");

	r.a.init.flags |= FUSE_INIT_EXT;
	p = peek(&r, sizeof(r.a.init));
	cr_assert_eq(p.init_offered,
		     (uint64_t)(FUSE_HANDLE_KILLPRIV_V2 | FUSE_INIT_EXT) | (uint64_t)0x10 << 32);

	/* An old kernel's INIT ends before flags2: flags only. */
	p = peek(&r, offsetof(struct fuse_init_in, flags2));
	cr_assert(p.init);
	cr_assert_eq(p.init_offered, (uint64_t)(FUSE_HANDLE_KILLPRIV_V2 | FUSE_INIT_EXT));

	/* Shorter than flags: not an INIT the hooks can use. */
	p = peek(&r, offsetof(struct fuse_init_in, flags));
	cr_assert(!p.init);
	cr_assert_eq(p.init_offered, 0);
	cr_assert_eq(p.opcode, FUSE_INIT);
}
