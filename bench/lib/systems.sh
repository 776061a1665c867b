# SPDX-License-Identifier: GPL-2.0-or-later
# The systems under test (sourced by bench/run.sh). A system NAME is three
# functions, with '-' in NAME written '_':
#   sys_NAME_check        print why it cannot run and return 1, else return 0
#   sys_NAME_start B M    create a fresh volume in the empty backing dir B and
#                         mount its plaintext view on the empty dir M; return
#                         0 once mounted. The runner then finds the daemon by
#                         its argv and unmounts with fusermount3 -u M.
#   SYS_NAME_VIEW         "backing" if the view is B itself (raw, fscrypt:
#                         then sys_NAME_start B is called with no M, to
#                         prepare B)
# and, when a system runs on some backings only, sys_NAME_on FS: print why
# not and return 1 (the runner skips that system on FS, saying so once), and
# SYS_NAME_MKFS_FS: extra mkfs options it needs on FS (e.g. -O encrypt).
# plus a line in SYS_DESC below. Adding a system is these few lines; the
# runner needs no other change. SC_MOUNT_OPTS (e.g. "writeback") is passed
# to every stackcrypt mount as -o, for trying a lever. A variant of a
# stackcrypt system is a column of its own, run interleaved with its base in
# every repetition (sys_variant below): NAME+OPTS is mounted with -o OPTS too
# (e.g. aes-xts+max_threads=2, a lever against its base), NAME@BIN runs the
# binary that --bin=BIN=PATH names (e.g. aes-xts@base: two builds compared in
# one run), and NAME@BIN+OPTS both. Secrets: $KEYFILE (64 hex chars) and
# $PASSFILE (one line) are made fresh in the scratch dir for each run.

declare -A SYS_DESC=(
	[raw]="the backing filesystem itself, no FUSE"
	[passthrough]="stackcrypt --stack=passthrough (FUSE front end + posix layer, no crypt layer)"
	[null]="stackcrypt crypt layer, identity cipher, names in the clear (init --cipher=null [--plaintext-names])"
	[aes-xts]="stackcrypt crypt layer, AES-256-XTS, names in the clear (init --cipher=aes-xts [--plaintext-names])"
	[aes-cbc]="stackcrypt crypt layer, AES-256-CBC, names in the clear (init --cipher=aes-cbc [--plaintext-names])"
	[aes-gcm]="stackcrypt crypt layer, AES-256-GCM authenticated units, headers in the files, names in the clear (init --cipher=aes-gcm [--plaintext-names])"
	[null-names]="stackcrypt crypt layer, identity cipher, names encrypted (init --cipher=null --encrypt-names)"
	[aes-xts-names]="stackcrypt crypt layer, AES-256-XTS, names encrypted (init --cipher=aes-xts --encrypt-names)"
	[aes-gcm-names]="stackcrypt crypt layer, AES-256-GCM, names encrypted (init --cipher=aes-gcm --encrypt-names)"
	[default]="stackcrypt's default volume, what a bare 'stackcrypt init' makes: AES-256-GCM, names encrypted"
	[integrity]="stackcrypt integrity volume (init --integrity): the default, each file bound to its name, size and version (docs/format.md 11)"
	[passthrough-gfapi]="stackcrypt passthrough stack on its gluster translator (libgfapi, no second FUSE hop; --fs=gluster*)"
	[null-gfapi]="stackcrypt crypt layer, identity cipher, on the gluster translator (--fs=gluster*)"
	[aes-xts-gfapi]="stackcrypt crypt layer, AES-256-XTS, on the gluster translator (--fs=gluster*)"
	[aes-cbc-gfapi]="stackcrypt crypt layer, AES-256-CBC, on the gluster translator (--fs=gluster*)"
	[gocryptfs]="gocryptfs defaults (AES-256-GCM, 4 KiB blocks), -scryptn 10"
	[securefs]="securefs lite format (--format 4), key file, PBKDF2 1 round"
	[encfs]="EncFS --standard (AES-CBC 192-bit, 1 KiB blocks)"
	[cryfs]="CryFS defaults (xchacha20-poly1305, 16 KiB blocks; its scrypt runs at every mount, outside the timings)"
	[fscrypt]="the kernel's own encryption (fscrypt v2 policy: AES-256-XTS contents, AES-256-CTS names, raw key; ext4 -O encrypt), no FUSE"
)
ALL_SYSTEMS="raw passthrough null aes-xts aes-cbc default integrity aes-gcm null-names aes-xts-names aes-gcm-names gocryptfs securefs encfs cryfs fscrypt passthrough-gfapi null-gfapi aes-xts-gfapi aes-cbc-gfapi"
STACKCRYPT_SYSTEMS="passthrough null aes-xts aes-cbc default integrity aes-gcm null-names aes-xts-names aes-gcm-names passthrough-gfapi null-gfapi aes-xts-gfapi aes-cbc-gfapi"
# Through the gluster translator: only with --fs=gluster or gluster-dist.
GFAPI_SYSTEMS="passthrough-gfapi null-gfapi aes-xts-gfapi aes-cbc-gfapi"
# Offered only by a binary whose init lists --encrypt-names (issue #16).
NAMES_SYSTEMS="null-names aes-xts-names aes-gcm-names"
# Offered only by a binary whose init makes aes-gcm volumes (issue #17).
GCM_SYSTEMS="aes-gcm aes-gcm-names"
# Offered only by a binary whose bare init makes aes-gcm with names (issue
# #28; its init --help lists --plaintext-names): with an older one the
# column would be aes-xts under another name.
DEFAULT_SYSTEMS="default"
PEER_SYSTEMS="gocryptfs securefs encfs cryfs fscrypt"

# --bin=NAME=PATH: the binaries a NAME@BIN variant may name.
declare -A SC_BIN_OF=()

# sys_variant SPEC: 0 if SPEC is NAME@BIN, NAME+OPTS or NAME@BIN+OPTS with
# NAME a stackcrypt system, BIN a name given with --bin and OPTS mount
# options ([A-Za-z0-9_=.,]); gives it a SYS_DESC line.
sys_variant()
{
	local base bin opts desc
	case $1 in *+* | *@*) ;; *) return 1 ;; esac
	base=$(sys_base "$1") bin=$(sys_binname "$1") opts=$(sys_opts "$1")
	case " $STACKCRYPT_SYSTEMS " in *" $base "*) ;; *) return 1 ;; esac
	case $1 in *+*) case $opts in '' | *[!A-Za-z0-9_=.,]*) return 1 ;; esac ;; esac
	case $1 in *@*) [ -n "$bin" ] && [ -n "${SC_BIN_OF[$bin]:-}" ] || return 1 ;; esac
	desc=${SYS_DESC[$base]}
	[ -n "$bin" ] && desc="$desc, binary $bin (${SC_BIN_OF[$bin]})"
	[ -n "$opts" ] && desc="$desc, mounted with -o $opts"
	SYS_DESC[$1]=$desc
}
# The system a spec is a variant of: aes-xts@base+stats -> aes-xts.
sys_base()
{
	local b=${1%%+*}
	echo "${b%%@*}"
}
# The --bin name of a spec (empty: the default binary $SC_BIN).
sys_binname()
{
	local b=${1%%+*}
	case $b in *@*) echo "${b#*@}" ;; esac
}
# The stackcrypt binary a spec runs.
sys_bin()
{
	local n
	n=$(sys_binname "$1")
	if [ -n "$n" ]; then echo "${SC_BIN_OF[$n]}"; else echo "$SC_BIN"; fi
}
# The function-name stem of a system or variant: aes-xts@base+max_threads=2 -> aes_xts.
sys_fn()
{
	local b
	b=$(sys_base "$1")
	echo "${b//-/_}"
}
# The extra -o options of a variant (empty for a plain system).
sys_opts()
{
	case $1 in *+*) echo "${1#*+}" ;; esac
}
# sys_names_offered BIN: true if BIN's init can encrypt names. The help is
# read whole: under pipefail, grep -q quitting at the match could kill the
# writer with SIGPIPE and fail the pipeline, depending on timing.
sys_names_offered()
{
	local h
	h=$("$1" init --help 2>&1)
	[[ $h == *--encrypt-names* ]]
}

# sys_plain_names_offered BIN: true if BIN's init encrypts names unless told
# --plaintext-names (issue #28): then its default is aes-gcm with names.
sys_plain_names_offered()
{
	local h
	h=$("$1" init --help 2>&1)
	[[ $h == *--plaintext-names* ]]
}

# sys_new_key FILE: a fresh random key file (64 hex digits, mode 0600).
sys_new_key()
{
	head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$1" && chmod 600 "$1"
}

# sys_cipher_offered BIN CIPHER: true if BIN's init makes a CIPHER volume.
# Tried for real in a throw-away dir (a help text may list what init then
# refuses); when it fails, prints the first line init printed.
sys_cipher_offered()
{
	local d err rc
	d=$(mktemp -d "${TMPDIR:-/tmp}/sc-bench-probe.XXXXXX") || return 1
	mkdir "$d/b" && sys_new_key "$d/key" || { rm -rf "$d"; return 1; }
	err=$("$1" init --cipher="$2" --keyfile="$d/key" "$d/b" 2>&1 >/dev/null)
	rc=$?
	rm -rf "$d"
	[ "$rc" = 0 ] && return 0
	printf '%s\n' "${err:-init --cipher=$2 exited $rc}" | head -1
	return 1
}

# Wait up to 10 s for a daemon that returned before the mount was visible.
sys_wait_mounted()
{
	local i
	for ((i = 0; i < 100; i++)); do
		mountpoint -q "$1" && return 0
		sleep 0.1
	done
	return 1
}

# ------------------------------------------------------------------ raw
SYS_raw_VIEW=backing
sys_raw_check() { return 0; }
sys_raw_start() { return 0; }

# ------------------------------------------------------------------ fscrypt
# The in-kernel reference (issue #35): what encryption costs without a FUSE
# hop.  The filesystem is made with encryption enabled, and the empty
# backing dir, which is the view, gets a fresh raw key and a v2 policy
# (lib/fscrypt_policy.py); the key goes with the filesystem's unmount after
# the run.  Its data path is the kernel's AES (this machine's kernel may
# have no AES-NI driver: run.log's dmesg line names the implementation).
SYS_fscrypt_VIEW=backing
SYS_fscrypt_MKFS_ext4="-O encrypt"
# ext4 accepts O_DIRECT on an encrypted file but, without inline encryption
# hardware, serves it through the page cache: fio would time memory.  So
# fio runs buffered after a cache drop, as for a view that refuses O_DIRECT.
SYS_fscrypt_DIRECT=0
sys_fscrypt_check()
{
	if [ ! -e /sys/fs/ext4/features/encryption ]; then
		echo "this kernel's ext4 has no encryption (/sys/fs/ext4/features/encryption)"
		return 1
	fi
	command -v python3 >/dev/null || { echo "python3 not found"; return 1; }
}
sys_fscrypt_on()
{
	[ "$1" = ext4 ] && return 0
	echo "fscrypt runs on ext4 only here (XFS and GlusterFS refuse its key ioctl)"
	return 1
}
sys_fscrypt_start()
{
	python3 "$BENCH_DIR/lib/fscrypt_policy.py" "$FSMNT" "$1" || return 1
	dmesg 2>/dev/null | grep 'fscrypt: AES-256' | tail -2
	return 0
}

# ------------------------------------------------------------------ stackcrypt
# SC_SYS_BIN and SC_SYS_OPTS: the binary and the extra -o options of the
# system or variant at hand, set by the runner before each check and start.
sys_stackcrypt_check()
{
	if [ ! -x "$SC_SYS_BIN" ]; then
		echo "stackcrypt binary $SC_SYS_BIN not found (build it, or set SC_BIN / --bin)"
		return 1
	fi
}

sys_names_check()
{
	sys_stackcrypt_check || return 1
	if ! sys_names_offered "$SC_SYS_BIN"; then
		echo "$SC_SYS_BIN cannot encrypt names (its init --help lists no --encrypt-names)"
		return 1
	fi
}

sys_default_check()
{
	sys_stackcrypt_check || return 1
	if ! sys_plain_names_offered "$SC_SYS_BIN"; then
		echo "$SC_SYS_BIN's default volume is not aes-gcm with names (its init --help lists no --plaintext-names)"
		return 1
	fi
}

sys_integrity_check()
{
	local h
	sys_default_check || return 1
	h=$("$SC_SYS_BIN" init --help 2>&1)
	[[ $h == *--integrity* ]] && return 0
	echo "$SC_SYS_BIN makes no integrity volumes (its init --help lists no --integrity)"
	return 1
}

sys_gcm_check()
{
	local why
	if ! why=$(sys_cipher_offered "$SC_SYS_BIN" aes-gcm); then
		echo "$SC_SYS_BIN cannot make aes-gcm volumes ($why)"
		return 1
	fi
}

# sc_start CIPHER B M [INIT_OPTS...]: CIPHER empty = passthrough stack (no
# volume config), "default" = a bare init.  A system names what it measures:
# with a binary whose init encrypts names by default, the systems without
# -names ask for --plaintext-names (the "[--plaintext-names]" of SYS_DESC:
# older binaries keep names in the clear without it).
sc_start()
{
	local cipher=$1 b=$2 m=$3
	local opts=() o init=()
	shift 3
	case $cipher in
	default) ;;
	*)	init=(--cipher="$cipher")
		case " $* " in *" --encrypt-names "*) ;; *)
			sys_plain_names_offered "$SC_SYS_BIN" && init+=(--plaintext-names) ;;
		esac ;;
	esac
	o=${SC_MOUNT_OPTS:-}${SC_MOUNT_OPTS:+${SC_SYS_OPTS:+,}}${SC_SYS_OPTS:-}
	[ -n "$o" ] && opts=(-o "$o")
	if [ -z "$cipher" ]; then
		"$SC_SYS_BIN" mount --stack=passthrough "${opts[@]}" "$b" "$m" || return 1
	else
		# With a key file init shows no master key; its stdout stays quiet.
		"$SC_SYS_BIN" init "${init[@]}" "$@" --keyfile="$KEYFILE" "$b" >/dev/null || return 1
		"$SC_SYS_BIN" mount --keyfile="$KEYFILE" "${opts[@]}" "$b" "$m" || return 1
	fi
	sys_wait_mounted "$m"
}

sys_passthrough_check() { sys_stackcrypt_check; }
sys_passthrough_start() { sc_start "" "$1" "$2"; }
sys_null_check() { sys_stackcrypt_check; }
sys_null_start() { sc_start null "$1" "$2"; }
sys_aes_xts_check() { sys_stackcrypt_check; }
sys_aes_xts_start() { sc_start aes-xts "$1" "$2"; }
sys_aes_cbc_check() { sys_stackcrypt_check; }
sys_aes_cbc_start() { sc_start aes-cbc "$1" "$2"; }
sys_default_start() { sc_start default "$1" "$2"; }
sys_integrity_start() { sc_start default "$1" "$2" --integrity; }
sys_aes_gcm_check() { sys_stackcrypt_check && sys_gcm_check; }
sys_aes_gcm_start() { sc_start aes-gcm "$1" "$2"; }
sys_null_names_check() { sys_names_check; }
sys_null_names_start() { sc_start null "$1" "$2" --encrypt-names; }
sys_aes_xts_names_check() { sys_names_check; }
sys_aes_xts_names_start() { sc_start aes-xts "$1" "$2" --encrypt-names; }
sys_aes_gcm_names_check() { sys_names_check && sys_gcm_check; }
sys_aes_gcm_names_start() { sc_start aes-gcm "$1" "$2" --encrypt-names; }

# The same stacks with the gluster translator at the bottom: the backing is
# the backing dir's path inside the run's GlusterFS volume (run.sh's
# fs_fresh: the volume GLUSTER_VOL, FUSE-mounted on FSMNT for raw and the
# peers, and with gluster-2c on FSMNT2 too, client 2's), given to
# stackcrypt as gluster://127.0.0.1/VOLUME/PATH: each daemon is a libgfapi
# client of its own.
sys_gfapi_check()
{
	local f
	sys_stackcrypt_check || return 1
	for f in $FSLIST; do
		case $f in gluster | gluster-dist | gluster-2c) ;; *) echo "runs only with --fs=gluster, gluster-dist or gluster-2c (not $f)"; return 1 ;; esac
	done
	local help
	help=$("$SC_SYS_BIN" mount --help 2>&1)	# not piped into grep -q: SIGPIPE under pipefail
	if [[ $help != *gluster://* ]]; then
		echo "$SC_SYS_BIN has no gluster translator (its mount --help names no gluster://)"
		return 1
	fi
}
gfapi_url()
{
	local p=$1 m
	for m in "$FSMNT" "${FSMNT2:-}"; do
		case $p in "$m"/*) p=${p#"$m"}; break ;; esac
	done
	echo "gluster://127.0.0.1/$GLUSTER_VOL$p"
}
sys_passthrough_gfapi_check() { sys_gfapi_check; }
sys_passthrough_gfapi_start() { sc_start "" "$(gfapi_url "$1")" "$2"; }
sys_null_gfapi_check() { sys_gfapi_check; }
sys_null_gfapi_start() { sc_start null "$(gfapi_url "$1")" "$2"; }
sys_aes_xts_gfapi_check() { sys_gfapi_check; }
sys_aes_xts_gfapi_start() { sc_start aes-xts "$(gfapi_url "$1")" "$2"; }
sys_aes_cbc_gfapi_check() { sys_gfapi_check; }
sys_aes_cbc_gfapi_start() { sc_start aes-cbc "$(gfapi_url "$1")" "$2"; }

# ------------------------------------------------------------------ peers
sys_peer_check()
{
	if ! command -v "$1" >/dev/null; then
		echo "$1 not installed (apt-get install $1, or run with --full as root)"
		return 1
	fi
}

sys_gocryptfs_check() { sys_peer_check gocryptfs; }
sys_gocryptfs_start()
{
	gocryptfs -init -q -passfile "$PASSFILE" -scryptn 10 "$1" || return 1
	gocryptfs -q -passfile "$PASSFILE" "$1" "$2" || return 1
	sys_wait_mounted "$2"
}

sys_securefs_check() { sys_peer_check securefs; }
sys_securefs_start()
{
	# PBKDF2 with 1 round: the key file is random, and the default Argon2id
	# costs up to a minute of CPU on a loaded 2-core machine per volume.
	securefs create --format 4 --keyfile "$KEYFILE" \
		--pbkdf pkcs5-pbkdf2-hmac-sha256 --rounds 1 "$1" || return 1
	securefs mount -b --keyfile "$KEYFILE" "$1" "$2" || return 1
	sys_wait_mounted "$2"
}

sys_encfs_check() { sys_peer_check encfs; }
sys_encfs_start()
{
	encfs -S --standard "$1" "$2" <"$PASSFILE" || return 1
	sys_wait_mounted "$2"
}

sys_cryfs_check() { sys_peer_check cryfs; }
sys_cryfs_start()
{
	# CryFS remembers each base dir's filesystem id in its local state and
	# refuses a "replaced" one: every run mkfs's a new filesystem at the same
	# path, so each run starts with empty state (rep 2 failed without this).
	# One state dir per mount point: with two clients (gluster-2c) the
	# second instance must not wipe the first one's.
	local st
	st=$SCRATCH/cryfs-state-$(basename "$2")
	rm -rf "$st"
	mkdir -p "$st"
	CRYFS_FRONTEND=noninteractive CRYFS_NO_UPDATE_CHECK=true \
		CRYFS_LOCAL_STATE_DIR="$st" \
		cryfs "$1" "$2" <"$PASSFILE" || return 1
	sys_wait_mounted "$2"
}

# Version of the software behind a system, for the machine section.
sys_version()
{
	local b
	b=$(sys_base "$1")
	if [ "$b" = raw ]; then
		echo "-"
	elif [ "$b" = fscrypt ]; then
		echo "Linux $(uname -r)"
	elif [[ " $STACKCRYPT_SYSTEMS " == *" $b "* ]]; then
		"$(sys_bin "$1")" --version 2>/dev/null | head -1 || echo "?"
	else
		dpkg-query -W -f '${Version}' "$1" 2>/dev/null || echo "?"
	fi
}
