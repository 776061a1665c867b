/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cephfs_xl.h - the cephfs translator's connection and constructor, for
 * the cephfs backing (fs/backing/cephfs.c) and the stack builder; the
 * commands reach a file system through sc_backing.h only.  A connection
 * is one libcephfs client (one MDS session) mounted at a directory of one
 * CephFS file system, named by a URL
 *
 *     cephfs://[ID@][HOST[:PORT]]/FS[/PATH]
 *
 * ID the cephx client id (client.ID; default admin), HOST[:PORT] a
 * monitor's msgr2 address (default port 3300; none: the monitors of the
 * Ceph config file), FS the file system's name, PATH a directory of it
 * (default its root).  The config file is Ceph's own search ($CEPH_CONF,
 * else /etc/ceph/ceph.conf ...), and CEPH_ARGS is read as every Ceph tool
 * reads it (e.g. CEPH_ARGS="--keyring FILE"): the keyring and every other
 * client setting stay where Ceph users keep them.
 *
 * Connections are cached per process (one per URL) and unmounted when
 * the process exits (atexit): that ends the MDS session at once, and with
 * it the session's locks (the one-mount lock).  A connection never
 * crosses a fork(): the child makes its own.
 */
#ifndef SC_CEPHFS_XL_H
#define SC_CEPHFS_XL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct sc_cephfs;
struct sc_xl;
struct ceph_mount_info;
struct ceph_statx;

#define SC_CEPHFS_SCHEME	"cephfs://"

/*
 * The refusal of cephfs:// by a build without libcephfs (-Dcephfs=disabled,
 * or auto without libcephfs-dev; both cephfs_none.c print it).
 */
#define SC_CEPHFS_NOT_BUILT \
	"this stackcrypt was built without CephFS support (no libcephfs): " \
	"install libcephfs-dev, then rebuild with `meson configure " SC_BUILD_DIR \
	" -Dcephfs=enabled && ninja -C " SC_BUILD_DIR " && sudo meson install -C " \
	SC_BUILD_DIR "`"

/*
 * Connects to the file system url names and mounts its directory (which
 * must exist), or takes this process's connection to url.  log: where
 * libcephfs logs (NULL or "": where the Ceph config says).  Returns 0, or
 * -EINVAL (bad URL), -ENOENT (no such file system or directory),
 * -ENOTDIR, -EACCES / -EPERM (cephx refused), -ETIMEDOUT / -ENOTCONN (no
 * monitor answers), -ENOMEM; err gets a one-line reason.
 */
int sc_cephfs_connect(const char *url, const char *log, struct sc_cephfs **out, char *err,
		      size_t errlen);
void sc_cephfs_disconnect(struct sc_cephfs *c);

/*
 * The root directory as the front end's inode table takes it: an
 * fd-shaped int only the cephfs layer can use (given back with the
 * layer's ->drop_fd), and its stat.  The int or -errno.
 */
int sc_cephfs_root(struct sc_cephfs *c, struct stat *st);

/*
 * The one-mount lock: a POSIX write lock on byte 0 of the root's file
 * name (made if missing), held by this client's MDS session until the
 * process exits -- the very lock (file, byte, kind) a mount over a
 * ceph-fuse or kernel mount of the directory takes, so the two exclude
 * each other.  Returns 0, -EBUSY (another client holds it; err names how
 * to find and evict a dead holder), or -errno.
 */
int sc_cephfs_lock(struct sc_cephfs *c, const char *name);

/*
 * The config lock: a write lock on byte 1 of the same file, under its own
 * owner, held until the process exits.  0, -EBUSY or -errno.
 */
int sc_cephfs_lock_config(struct sc_cephfs *c, const char *name);

/*
 * What the cephfs backing does its own calls with: the URL, the mounted
 * client (the connection's: never unmounted by the caller), a libcephfs
 * return value as -errno (ESTALE read as ENOENT; an eviction logged), and
 * a statx as the layers see it (one st_dev for the file system).
 */
const char *sc_cephfs_url(const struct sc_cephfs *c);
struct ceph_mount_info *sc_cephfs_mount(struct sc_cephfs *c);
int sc_cephfs_err(struct sc_cephfs *c, int r);
void sc_cephfs_stat(const struct sc_cephfs *c, const struct ceph_statx *x, struct stat *st);

/* The bottom layer (id 0) over connection c, which must outlive it.  0 or -ENOMEM. */
int sc_cephfs_xl_new(struct sc_cephfs *c, struct sc_xl **out);

#endif /* SC_CEPHFS_XL_H */
