/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_xattr_ns.c - the front end's xattr namespace policy
 * (fs/fuse/xattr_ns.c) over a fake layer whose list is set by each test:
 * which names are served, and listxattr as the mount answers it -- only
 * served names, a size query that equals the filtered length, ERANGE for
 * a short buffer, a list longer than the on-stack buffer, a list that
 * keeps growing between the query and the fetch, an error from below.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sc_xlator.h"
#include "xattr_ns_i.h"
#include "xlator_i.h"

/* The fake layer's list, and what it does on each call. */
static char below[8192];
static size_t below_len;
static int below_calls;
static int below_err;		/* returned instead of the list when not 0 */
static int below_grows;		/* each call adds a name before answering */

static void add_name(const char *name)
{
	size_t len = strlen(name) + 1;

	cr_assert_leq(below_len + len, sizeof(below));
	memcpy(below + below_len, name, len);
	below_len += len;
}

static ssize_t fake_listxattr(struct sc_xl *xl, struct sc_obj *obj, char *buf, size_t size)
{
	(void)xl;
	(void)obj;
	below_calls++;
	if (below_err)
		return below_err;
	if (below_grows) {
		char name[32];

		snprintf(name, sizeof(name), "user.grown%04d", below_calls);
		add_name(name);
	}
	if (size == 0)
		return (ssize_t)below_len;
	if (below_len > size)
		return -ERANGE;
	memcpy(buf, below, below_len);
	return (ssize_t)below_len;
}

static const struct sc_xl_ops fake_ops = { .name = "fake", .listxattr = fake_listxattr };
static struct sc_xl fake = { .ops = &fake_ops };
static struct sc_obj obj;

static void reset(void)
{
	below_len = 0;
	below_calls = 0;
	below_err = 0;
	below_grows = 0;
}

/* sc_xattr_ns_list with a size query (0) or a buffer of size; frees the list. */
static ssize_t list(size_t size, char *out, size_t out_size)
{
	char small[SC_XL_LIST_ON_STACK], *l;
	ssize_t n = sc_xattr_ns_list(&fake, &obj, small, sizeof(small), &l, size);

	if (n > 0 && out) {
		cr_assert_leq((size_t)n, out_size);
		memcpy(out, l, (size_t)n);
	}
	if (l != small)
		free(l);
	return n;
}

TestSuite(xattr_ns, .init = reset);

Test(xattr_ns, served_namespaces)
{
	static const char *const yes[] = {
		"user.a", "user.stackcrypt", "user.stackcrypt!", "trusted.t",
		"trusted.SGI_ACL_FILEX", "trusted.overlay.opaque",
	};
	static const char *const no[] = {
		"security.selinux", "security.capability", "system.posix_acl_access",
		"system.posix_acl_default", "system.nfs4_acl", "trusted.SGI_ACL_FILE",
		"trusted.SGI_ACL_DEFAULT", "foo.bar", "user", "usera", "trusted", "", "USER.a",
	};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		cr_expect(sc_xattr_ns_served(yes[i]), "%s not served", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		cr_expect(!sc_xattr_ns_served(no[i]), "%s served", no[i]);
}

Test(xattr_ns, list_filtered_and_size_query_agrees)
{
	static const char want[] = "user.a\0trusted.t\0user.b";	/* + its NUL */
	char out[64];

	add_name("security.selinux");
	add_name("user.a");
	add_name("system.posix_acl_access");
	add_name("trusted.t");
	add_name("trusted.SGI_ACL_FILE");
	add_name("user.b");
	add_name("foo.bar");
	cr_assert_eq(list(0, NULL, 0), (ssize_t)sizeof(want));
	cr_assert_eq(list(sizeof(want), out, sizeof(out)), (ssize_t)sizeof(want));
	cr_assert_eq(memcmp(out, want, sizeof(want)), 0);
	cr_assert_eq(list(sizeof(want) - 1, NULL, 0), -ERANGE);
	/* A buffer bigger than the filtered list but smaller than the whole one. */
	cr_assert_lt(sizeof(want), below_len);
	cr_assert_eq(list(sizeof(want), NULL, 0), (ssize_t)sizeof(want));
}

Test(xattr_ns, list_of_nothing_served)
{
	add_name("security.selinux");
	add_name("system.posix_acl_access");
	cr_assert_eq(list(0, NULL, 0), 0);
	cr_assert_eq(list(100, NULL, 0), 0);
	reset();
	cr_assert_eq(list(0, NULL, 0), 0);	/* no names at all */
}

/* More than SC_XL_LIST_ON_STACK from below: sized by a query, fetched again. */
Test(xattr_ns, list_longer_than_stack_buffer)
{
	char name[64], *out = malloc(sizeof(below));
	size_t want = 0;

	cr_assert(out);
	for (int i = 0; below_len < 3 * SC_XL_LIST_ON_STACK; i++) {
		snprintf(name, sizeof(name), "security.label%04d", i);
		add_name(name);
		snprintf(name, sizeof(name), "user.name%04d", i);
		add_name(name);
		want += strlen(name) + 1;
	}
	cr_assert_gt(want, SC_XL_LIST_ON_STACK);
	cr_assert_eq(list(0, NULL, 0), (ssize_t)want);
	cr_assert_eq(list(want, out, sizeof(below)), (ssize_t)want);
	for (size_t off = 0, i = 0; off < want; i++) {
		snprintf(name, sizeof(name), "user.name%04zu", i);
		cr_assert_str_eq(out + off, name);
		off += strlen(name) + 1;
	}
	free(out);
}

/* A list that grows between every query and fetch: ERANGE after a bounded number of tries. */
Test(xattr_ns, list_that_keeps_growing)
{
	for (int i = 0; below_len <= SC_XL_LIST_ON_STACK; i++) {
		char name[32];

		snprintf(name, sizeof(name), "user.n%04d", i);
		add_name(name);
	}
	below_grows = 1;
	cr_assert_eq(list(0, NULL, 0), -ERANGE);
	cr_assert_leq(below_calls, 10, "%d calls below", below_calls);
}

Test(xattr_ns, error_from_below)
{
	below_err = -EIO;
	cr_assert_eq(list(0, NULL, 0), -EIO);
	cr_assert_eq(list(100, NULL, 0), -EIO);
}

/* A last name without its NUL is no name. */
Test(xattr_ns, unterminated_tail_dropped)
{
	memcpy(below, "user.a\0user.b", 13);
	below_len = 13;
	cr_assert_eq(list(0, NULL, 0), 7);
}
