/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gluster_xl.h - the gluster translator's connection and constructor, for
 * the gluster backing (fs/backing/gluster.c) and the stack builder; the
 * commands reach a volume through sc_backing.h only.  A connection is one
 * libgfapi client of one volume, rooted at a directory of it, named by a
 * URL gluster://HOST[:PORT]/VOLUME[/PATH].  Everything else about the layer
 * goes through struct sc_xl_ops (include/sc_xlator.h).
 *
 * Connections are cached per process (one per URL) and end when the
 * process does (gluster.c says why): connect and disconnect are cheap after
 * the first.  A connection never crosses a fork(): the child makes its own.
 */
#ifndef SC_GLUSTER_XL_H
#define SC_GLUSTER_XL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct sc_gluster;
struct sc_xl;

#define SC_GLUSTER_SCHEME	"gluster://"

/* Whether s names a gluster backing (starts with gluster://). */
bool sc_gluster_is_url(const char *s);

/*
 * Connects to the volume url names and looks up its directory (which must
 * exist), or takes this process's connection to url.  libgfapi's own log
 * goes to logfile at warning level (NULL: /dev/null, or where it went).  Returns 0, or -EINVAL (bad URL), -EHOSTUNREACH / -ENOENT /
 * -ENOTCONN (no host, no volume, no answer: libgfapi's errno), -ENOTDIR
 * (PATH is not a directory), -ENOMEM; err gets a one-line reason.
 */
int sc_gluster_connect(const char *url, const char *logfile, struct sc_gluster **out,
		       char *err, size_t errlen);
void sc_gluster_disconnect(struct sc_gluster *g);

/*
 * The root directory as the front end's inode table takes it: an fd-shaped
 * int that only the gluster layer can use (give it back with the layer's
 * ->drop_fd), and its stat.  Returns the int or -errno.
 */
int sc_gluster_root(struct sc_gluster *g, struct stat *st);

/*
 * The one-mount lock over gluster://: a write lock on byte 0 of the root's
 * file name (the mount lock file, made if missing), held until the process
 * exits: the lock a mount over the volume's FUSE client takes too.  Take
 * it after the last read of that file, if any: GlusterFS drops a client's
 * locks on a file when any fd of it is closed, whatever the lock owner.
 * Returns 0, -EBUSY (another client holds it), or -errno (the volume has
 * no locks).
 */
int sc_gluster_lock(struct sc_gluster *g, const char *name);

/*
 * The config lock over gluster:// (sc_vol_lock's flock of the directory,
 * which libgfapi has no call for): a write lock on byte 1 of the same
 * file, apart from the mount's byte 0, so that a command may change the
 * config of a mounted volume as over a directory.  Held until the process
 * exits.  Returns 0, -EBUSY (another command holds it), or -errno.
 */
int sc_gluster_lock_config(struct sc_gluster *g, const char *name);

/*
 * What the gluster backing (fs/backing/gluster.c) does its own calls with:
 * the connection's URL, its libgfapi client and root object (both the
 * connection's: never closed by the caller), libgfapi's errno after a
 * failed call as -errno (ESTALE read as ENOENT; a lost connection logged
 * and the one-mount lock marked suspect, as for the translator's calls),
 * and a stat as the layers see it (one st_dev for the volume).
 */
struct glfs;
struct glfs_object;
const char *sc_gluster_url(const struct sc_gluster *g);
struct glfs *sc_gluster_fs(struct sc_gluster *g);
struct glfs_object *sc_gluster_root_object(struct sc_gluster *g);
int sc_gluster_errno(struct sc_gluster *g);
void sc_gluster_fix_stat(struct sc_gluster *g, struct stat *st);

/*
 * The bottom layer (id 0) over connection g, which must outlive it.
 * Returns 0 or -ENOMEM.
 */
int sc_gluster_xl_new(struct sc_gluster *g, struct sc_xl **out);

#endif /* SC_GLUSTER_XL_H */
