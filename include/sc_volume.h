/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sc_volume.h - an unlocked volume: its config and master key, and the
 * ways a user hands us the secret.  fs/volume/volume.c reads the config file from
 * the backing directory and the secret from the terminal, a file or a
 * command; the crypto library does the rest.  Every function of the
 * volume module, public here or private in volume_i.h, is named sc_vol_*.
 */
#ifndef SC_VOLUME_H
#define SC_VOLUME_H

#include <stddef.h>
#include "sc_crypto.h"

enum sc_secret_kind {
	SC_SECRET_TTY = 0,	/* ask on the terminal, no echo */
	SC_SECRET_PASSFILE,	/* first line of a file ("-" = stdin) */
	SC_SECRET_EXTPASS,	/* first line printed by a command (sh -c) */
	SC_SECRET_KEYFILE,	/* raw 256-bit key file (sc_keyfile_parse) */
	SC_SECRET_MASTERKEY,	/* master key text, recovery without a config */
};

struct sc_secret_src {
	enum sc_secret_kind	kind;
	const char		*arg;	/* path or command; NULL for TTY */
};

struct sc_volume {
	struct sc_config	cfg;
	struct sc_mkey		*mkey;
};

/*
 * Reads BACKING/.stackcrypt.conf, gets the secret, unlocks.  Returns 0 or
 * -errno with a one-line reason in err:
 *   -ENOENT no config, -EUCLEAN/-EINVAL/-EPROTONOSUPPORT corrupt config,
 *   -EKEYREJECTED wrong password, -EBADMSG tampered config,
 *   -ECANCELED secret source failed (extpass exit status, empty password).
 */
int sc_vol_open(const char *backing, const struct sc_secret_src *src,
		struct sc_volume **out, char *err, size_t errlen);
void sc_vol_close(struct sc_volume *vol);

#endif /* SC_VOLUME_H */
