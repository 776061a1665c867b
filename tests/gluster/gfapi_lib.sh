# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# gfapi_lib.sh - what the gfapi tests of the volume tools share
# (gfapi_tools_test.sh, gfapi_fsck_test.sh), sourced after tests/cli/lib.sh
# under `tests/gluster/harness.sh --gfapi`: volumes made beside SRC, each
# reached by URL (URLD/NAME) and, only to damage or inspect it, by path on
# the volume's FUSE mount (DIRD/NAME).  Password $T/pw; the daemon's
# libgfapi log in $GLOG.

URLD=${SRC%/*}			# gluster://.../sc-mount.X/fs
DIRD=${BACKING%/*}		# the same directory on the FUSE mount
GLOG=$T/gfapi.log
M=(-o gluster_log="$GLOG")
(umask 077; printf 'correct horse\n' >"$T/pw"; printf 'wrong horse\n' >"$T/wrong")

# nv NAME [init options...]: a fresh volume at URLD/NAME (password $T/pw),
# its master key in $T/NAME.mk: aes-xts unless a --cipher is given, names in
# the clear unless --encrypt-names is (init's default is aes-gcm with names).
nv() {
	local name=$1
	shift
	case " $* " in *" --cipher="*) ;; *) set -- --cipher=aes-xts "$@" ;; esac
	case " $* " in *" --encrypt-names "*) ;; *) set -- --plaintext-names "$@" ;; esac
	mkdir "$DIRD/$name" || { fail "mkdir $DIRD/$name"; return 1; }
	"$SC_BIN" init --scrypt-n=1024 --passfile="$T/pw" --save-masterkey="$T/$name.mk" "$@" \
		"$URLD/$name" >"$T/init.out" 2>&1 || { fail "init $URLD/$name: $(cat "$T/init.out")"; return 1; }
}

# fill NAME FILE...: mounts URLD/NAME (password $T/pw) and writes each FILE
# (its own name as content, 5000 bytes past a unit), then unmounts.
fill() {
	local name=$1 f
	shift
	mkdir -p "$T/m"
	sc_mount_fg "$URLD/$name" "$T/m" --passfile="$T/pw" "${M[@]}" || return 1
	for f; do
		yes "$f" | head -c 5000 >"$T/m/$f" || fail "write $f through the mount"
	done
	sc_umount "$T/m"
}
