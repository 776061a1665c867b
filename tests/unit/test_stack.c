/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_stack.c - the stack builder (fs/xlators/stack.c): the layers a
 * stack kind makes, in order and with their slot ids; a layer inserted at
 * any boundary; the names layer (#16) and the boundaries around it; specs
 * that are not stacks refused with nothing leaked (the ASan run checks
 * that); and, over a scratch directory, that the crypt
 * layer hides exactly the root names it was given and hands O_PATH fds
 * back to posix through ->drop_fd; and that whether close(2) can report
 * errors (FLUSH) is the bottom layer's answer, through the layers above.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sc_crypto.h"
#include "sc_xlator.h"
#include "sc_iostats.h"
#include "sc_stack.h"

static struct sc_mkey *mkey;

static void setup(void)
{
	uint8_t mk[SC_MASTER_KEY_LEN];

	cr_assert_eq(sc_random(mk, sizeof(mk)), 0);
	cr_assert_eq(sc_mkey_new(mk, SC_CIPHER_AES_XTS, SC_BLOCK_DEFAULT, &mkey), 0);
	sc_wipe(mk, sizeof(mk));
}

static void teardown(void)
{
	sc_mkey_free(mkey);
}

TestSuite(stack, .init = setup, .fini = teardown);

/* Asserts that top's layers are names[0..n-1], top to bottom, ids n-1..0. */
static void assert_layers(struct sc_xl *top, const char *const *names, unsigned int n)
{
	struct sc_xl *xl = top;
	unsigned int i;

	for (i = 0; i < n; i++, xl = xl->below) {
		cr_assert_not_null(xl, "layer %u missing", i);
		cr_assert_str_eq(xl->ops->name, names[i], "layer %u", i);
		cr_assert_eq(xl->id, n - 1 - i, "layer %u id", i);
	}
	cr_assert_null(xl, "more than %u layers", n);
}

Test(stack, kinds)
{
	static const char *const crypt[] = { "crypt", "posix" };
	static const char *const pass[] = { "posix" };
	struct sc_stack_spec spec;
	struct sc_xl *top;

	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, mkey, NULL), 0);
	cr_assert_eq(sc_stack_new(&spec, &top), 0);
	assert_layers(top, crypt, 2);
	sc_xl_stack_free(top);

	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_PASSTHROUGH, NULL, NULL), 0);
	cr_assert_eq(sc_stack_new(&spec, &top), 0);
	assert_layers(top, pass, 1);
	sc_xl_stack_free(top);

	cr_assert_eq(sc_stack_spec_init(&spec, (enum sc_stack)7, mkey, NULL), -EINVAL);
}

/*
 * An aes-gcm key gets the gcm layer in the crypt layer's place, with its
 * boundaries named after it; each data layer refuses the other's key.
 */
Test(stack, gcm_for_an_aes_gcm_key)
{
	static const char *const gcm[] = { "gcm", "posix" };
	static const char *const names_gcm[] = { "names", "gcm", "posix" };
	uint8_t mk[SC_MASTER_KEY_LEN] = { 0 };
	struct sc_stack_spec spec;
	struct sc_mkey *gkey;
	struct sc_xl *top;
	char b[32];

	cr_assert_eq(sc_mkey_new(mk, SC_CIPHER_AES_GCM, SC_BLOCK_DEFAULT, &gkey), 0);
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, gkey, NULL), 0);
	cr_assert_eq(spec.layers[0], SC_XL_GCM);
	cr_assert(spec.portable, "aes-gcm volumes keep directory nonces in files");
	cr_assert_str_eq(sc_stack_kind_name(SC_XL_GCM), "gcm");
	cr_assert_eq(sc_stack_new(&spec, &top), 0);
	assert_layers(top, gcm, 2);
	sc_xl_stack_free(top);
	cr_assert_eq(sc_stack_spec_insert(&spec, 0, SC_XL_NAMES), 0);
	cr_assert_eq(sc_stack_boundary(&spec, 1, b, sizeof(b)), 0);
	cr_assert_str_eq(b, "names>posix");
	cr_assert_eq(sc_stack_new(&spec, &top), 0);
	assert_layers(top, names_gcm, 3);
	sc_xl_stack_free(top);
	/* the wrong key for each data layer: refused, nothing leaked */
	spec.layers[1] = SC_XL_CRYPT;
	cr_assert_eq(sc_stack_new(&spec, &top), -EINVAL);
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, mkey, NULL), 0);
	cr_assert(!spec.portable, "the length-preserving formats keep them in xattrs");
	spec.layers[0] = SC_XL_GCM;
	cr_assert_eq(sc_stack_new(&spec, &top), -EINVAL);
	sc_mkey_free(gkey);
}

/* Any boundary: on top, in the middle, just above posix; no deeper than SC_XL_MAX. */
Test(stack, insert)
{
	static const char *const three[] = { "crypt", "crypt", "posix" };
	struct sc_stack_spec spec;
	struct sc_xl *top;
	unsigned int at;

	for (at = 0; at < 2; at++) {
		cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, mkey, NULL), 0);
		cr_assert_eq(sc_stack_spec_insert(&spec, at, SC_XL_CRYPT), 0);
		cr_assert_eq(spec.nlayers, 3);
		cr_assert_eq(spec.layers[2], SC_XL_POSIX, "insert at %u moved posix", at);
		cr_assert_eq(sc_stack_new(&spec, &top), 0);
		assert_layers(top, three, 3);
		sc_xl_stack_free(top);
	}
	/* Below posix is no boundary. */
	cr_assert_eq(sc_stack_spec_insert(&spec, spec.nlayers, SC_XL_CRYPT), -EINVAL);
	while (spec.nlayers < SC_XL_MAX)
		cr_assert_eq(sc_stack_spec_insert(&spec, 0, SC_XL_CRYPT), 0);
	cr_assert_eq(sc_stack_spec_insert(&spec, 0, SC_XL_CRYPT), -E2BIG);
	cr_assert_eq(spec.nlayers, SC_XL_MAX);
}

/* The label of each boundary, as io-stats shows it. */
Test(stack, boundary)
{
	struct sc_stack_spec spec;
	char buf[32];

	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, mkey, NULL), 0);
	cr_assert_eq(sc_stack_spec_insert(&spec, 1, SC_XL_CRYPT), 0);	/* crypt crypt posix */
	cr_assert_eq(sc_stack_boundary(&spec, 0, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "fuse>crypt");
	cr_assert_eq(sc_stack_boundary(&spec, 1, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "crypt>posix");
	cr_assert_eq(sc_stack_boundary(&spec, 2, buf, sizeof(buf)), -EINVAL);
	cr_assert_eq(sc_stack_boundary(&spec, 1, buf, 11), -ENAMETOOLONG);
	cr_assert_eq(sc_stack_boundary(&spec, 1, buf, 12), 0);
}

/*
 * The names layer goes on top of crypt (as the mount of an encrypt-names
 * volume puts it, before -o stats adds its layers): a slot of its own,
 * the boundaries "fuse>names" and "names>crypt" for io-stats, and no layer
 * without a key to derive its names keys from.
 */
Test(stack, names_layer)
{
	static const char *const three[] = { "names", "crypt", "posix" };
	static const char *const five[] = { "iostats", "names", "iostats", "crypt", "posix" };
	static const unsigned int five_ids[] = { 2, 2, 1, 1, 0 };
	struct sc_stack_spec spec;
	struct sc_xl *top = NULL, *xl;
	char buf[SC_IOSTATS_LABEL_MAX];
	unsigned int i;

	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, mkey, NULL), 0);
	cr_assert_eq(sc_stack_spec_insert(&spec, 0, SC_XL_NAMES), 0);
	cr_assert_eq(sc_stack_new(&spec, &top), 0);
	assert_layers(top, three, 3);
	sc_xl_stack_free(top);

	/* -o stats at both boundaries the names layer makes. */
	cr_assert_eq(sc_stack_spec_insert(&spec, 0, SC_XL_IOSTATS), 0);
	cr_assert_eq(sc_stack_boundary(&spec, 0, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "fuse>names");
	cr_assert_eq(sc_stack_spec_insert(&spec, 2, SC_XL_IOSTATS), 0);
	cr_assert_eq(sc_stack_boundary(&spec, 2, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "names>crypt");
	cr_assert_eq(sc_stack_boundary(&spec, 0, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "fuse>names");
	cr_assert_eq(sc_stack_new(&spec, &top), 0);
	for (i = 0, xl = top; i < 5; i++, xl = xl->below) {
		cr_assert_not_null(xl);
		cr_assert_str_eq(xl->ops->name, five[i], "layer %u", i);
		cr_assert_eq(xl->id, five_ids[i], "layer %u id %u", i, xl->id);
	}
	cr_assert_null(xl);
	sc_xl_stack_free(top);

	/* No key, no names layer: refused whether or not a crypt layer is there. */
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_PASSTHROUGH, NULL, NULL), 0);
	cr_assert_eq(sc_stack_spec_insert(&spec, 0, SC_XL_NAMES), 0);
	top = NULL;
	cr_assert_eq(sc_stack_new(&spec, &top), -EINVAL);
	cr_assert_null(top);
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, mkey, NULL), 0);
	cr_assert_eq(sc_stack_spec_insert(&spec, 0, SC_XL_NAMES), 0);
	spec.mkey = NULL;
	cr_assert_eq(sc_stack_new(&spec, &top), -EINVAL);
	/* Not at the bottom. */
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, mkey, NULL), 0);
	spec.layers[1] = SC_XL_NAMES;
	cr_assert_eq(sc_stack_new(&spec, &top), -EINVAL);
}

/* Specs that are not stacks: refused, and whatever was made is freed. */
Test(stack, refused)
{
	struct sc_stack_spec spec;
	struct sc_xl *top = NULL;

	/* A crypt layer without a key (made after posix: posix is freed). */
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, NULL, NULL), 0);
	cr_assert_eq(sc_stack_new(&spec, &top), -EINVAL);
	/* posix not at the bottom. */
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, mkey, NULL), 0);
	spec.layers[0] = SC_XL_POSIX;
	spec.layers[1] = SC_XL_CRYPT;
	cr_assert_eq(sc_stack_new(&spec, &top), -EINVAL);
	/* posix twice. */
	spec.layers[1] = SC_XL_POSIX;
	cr_assert_eq(sc_stack_new(&spec, &top), -EINVAL);
	/* Empty. */
	spec.nlayers = 0;
	cr_assert_eq(sc_stack_new(&spec, &top), -EINVAL);
	cr_assert_null(top);
}

/* The crypt layer hides the root names it was given, and only those. */
Test(stack, hide_rule_and_drop_fd)
{
	static const struct sc_stack_hide hide = {
		.names = { "keep.out", "keep.out2" }, .prefix = "tmp-"
	};
	struct sc_xl_conf conf = { .max_io = 1 << 20 };
	struct sc_stack_spec spec;
	struct sc_obj root = { .type = S_IFDIR, .is_root = true };
	struct sc_fh fh = { .fd = -1, .flags = O_RDWR | O_CREAT | O_EXCL };
	struct sc_obj f = { .type = S_IFREG };
	char dir[] = "/tmp/sc_stack_XXXXXX", path[96], cmd[128];
	struct sc_xl *top;
	struct stat st;
	int fd;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/keep.out", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_CRYPT, mkey, &hide), 0);
	cr_assert_eq(sc_stack_new(&spec, &top), 0);
	root.fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(root.fd, 0);
	cr_assert_eq(sc_xl_stack_init(top, &root, &conf), 0);

	cr_assert_eq(sc_xl_lookup(top, &root, "keep.out", &fd, &st), -ENOENT);
	cr_assert_eq(sc_xl_create(top, &root, "tmp-1", 0600, &fh, &fd, &st), -EPERM);
	cr_assert_eq(sc_xl_mkdir(top, &root, "keep.out", 0700, &fd, &st), -EPERM);
	/* The volume's own config name is an ordinary name under this rule. */
	cr_assert_eq(sc_xl_create(top, &root, SC_CONFIG_NAME, 0600, &fh, &fd, &st), 0);
	f.fd = fd;
	cr_assert_eq(sc_xl_release(top, &f, &fh), 0);
	/* The O_PATH fd goes back to posix, which closes it. */
	sc_xl_drop_fd(top, fd);
	cr_assert_eq(fcntl(fd, F_GETFD), -1);
	cr_assert_eq(errno, EBADF);

	sc_xl_stack_free(top);
	close(root.fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* The root of a stack over path: its fd the posix layer's O_PATH fd. */
static struct sc_obj root_at(const char *path)
{
	struct sc_obj root = { .type = S_IFDIR, .is_root = true };

	root.fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(root.fd, 0, "%s", path);
	return root;
}

/*
 * Whether the kernel need send FLUSH is the backing's to say: the posix
 * layer answers through any layer above it (tmpfs: nothing to report at
 * close; procfs: not a file system it knows), and a stack where no layer
 * answers keeps FLUSH.
 */
Test(stack, close_is_silent_is_the_bottoms_answer)
{
	static const struct sc_xl_ops bare_ops = { .name = "bare" };
	struct sc_xl bare = { .ops = &bare_ops };
	struct sc_stack_spec spec;
	struct sc_obj shm = root_at("/dev/shm"), proc = root_at("/proc");
	struct sc_xl *top;

	cr_assert_eq(sc_stack_spec_init(&spec, SC_STACK_PASSTHROUGH, NULL, NULL), 0);
	cr_assert_eq(sc_stack_spec_insert(&spec, 0, SC_XL_IOSTATS), 0);
	cr_assert_eq(sc_stack_new(&spec, &top), 0);
	cr_assert_null(top->ops->close_is_silent, "io-stats forwards it, as a layer that has no say");
	cr_assert(sc_xl_close_is_silent(top, &shm), "tmpfs reports nothing at close");
	cr_assert_not(sc_xl_close_is_silent(top, &proc), "procfs is no file system posix knows");
	cr_assert_not(sc_xl_close_is_silent(&bare, &shm), "no layer answers: keep FLUSH");
	sc_xl_stack_free(top);
	close(shm.fd);
	close(proc.fd);
}
