/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * volume.c - unlocking a volume: the config file in the backing directory,
 * the secret from the user, and the master key built from both.
 *
 * The secret comes from exactly one source (struct sc_secret_src): the
 * terminal with echo off, the first line of a file or of a command's
 * output, a raw key file, or the master key itself (recovery when the
 * config is lost).  Passwords and keys only ever live in sc_secure_alloc()
 * memory (locked, wiped on free); the stack buffers that touch them are
 * wiped before returning.  Passwords on the command line are refused: argv
 * is readable by every user through ps and /proc.
 *
 * The config file is small (SC_CONFIG_MAX_TEXT); it is read with a size
 * limit so a wrong file cannot make us allocate without bound, and written
 * only through sc_vol_config_write(), which never leaves a moment where
 * neither the old nor the new config is complete on disk.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <unistd.h>

#include "sc_cmd.h"
#include "sc_crypto.h"
#include "sc_volume.h"
#include "volume_i.h"
#include "sc_backing.h"

#define SC_KEYFILE_MAX	4096	/* a key file is 64 hex digits or 32 bytes */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- secrets ---------------------------------------------------------------- */

void sc_vol_secret_free(struct sc_vol_secret *s)
{
	if (!s)
		return;
	sc_secure_free(s->buf, SC_VOL_SECRET_MAX + 1);
	s->buf = NULL;
	s->len = 0;
}

/*
 * Reads one line (up to '\n' or EOF) from fd into buf, one byte at a time
 * so nothing after the line is consumed (a second secret may follow on the
 * same stdin).  Strips "\n" and a trailing "\r".  Returns the length, or
 * -E2BIG when the line does not fit, -EINTR when a signal arrived with
 * *stop set, -errno on a read error.  *eof (if given) tells whether the
 * line ended at end of file (Ctrl-D on a terminal) rather than a newline.
 */
static ssize_t read_line(int fd, unsigned char *buf, size_t cap,
			 volatile sig_atomic_t *stop, bool *eof)
{
	size_t n = 0;
	bool too_long = false;
	unsigned char c;

	if (eof)
		*eof = false;
	for (;;) {
		ssize_t r = read(fd, &c, 1);

		if (r < 0) {
			if (errno == EINTR && !(stop && *stop))
				continue;
			c = 0;
			return -errno;
		}
		if (r == 0 && eof)
			*eof = true;
		if (r == 0 || c == '\n')
			break;
		if (n < cap)
			buf[n++] = c;
		else
			too_long = true;
	}
	c = 0;
	if (too_long)
		return -E2BIG;
	if (n && buf[n - 1] == '\r')
		buf[--n] = 0;
	return n;
}

static volatile sig_atomic_t tty_signal;

static void tty_on_signal(int sig)
{
	tty_signal = sig;
}

/*
 * Asks on /dev/tty with echo off (the newline is still echoed, ECHONL).
 * The terminal settings are restored before returning, also when a signal
 * (Ctrl-C, hangup, Ctrl-Z) interrupts the read: we catch those without
 * SA_RESTART so read() returns, and report "interrupted".  Echo goes off
 * with TCSANOW, not TCSAFLUSH: input typed or pasted ahead of the prompt
 * (the lines after 'stackcrypt init' in a pasted walkthrough) is kept.
 */
static int tty_ask(int fd, const char *prompt, unsigned char *buf, size_t cap,
		   size_t *len, char *err, size_t errlen)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP };
	struct sigaction sa, old_sa[sizeof(sigs) / sizeof(sigs[0])];
	struct termios old_tio, tio;
	bool eof;
	ssize_t n;
	size_t i;
	int r = 0;

	if (tcgetattr(fd, &old_tio)) {
		set_err(err, errlen, "cannot read terminal settings: %s", strerror(errno));
		return -ECANCELED;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tty_on_signal;
	sigemptyset(&sa.sa_mask);
	tty_signal = 0;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, &old_sa[i]);

	tio = old_tio;
	tio.c_lflag &= ~(tcflag_t)ECHO;
	tio.c_lflag |= ECHONL;
	if (tcsetattr(fd, TCSANOW, &tio)) {
		set_err(err, errlen, "cannot turn off terminal echo: %s", strerror(errno));
		r = -ECANCELED;
		goto out_restore_signals;
	}
	if (write(fd, prompt, strlen(prompt)) < 0) {
		/* the read below still works; the user just sees no prompt */
	}
	n = read_line(fd, buf, cap, &tty_signal, &eof);
	tcsetattr(fd, TCSANOW, &old_tio);
	if (eof && !tty_signal && write(fd, "\n", 1) < 0) {
		/* Ctrl-D echoes no newline: without one, the next message would
		 * follow the prompt on its line.  Cosmetic only. */
	}
	if (tty_signal) {
		if (write(fd, "\n", 1) < 0) {
			/* cosmetic only */
		}
		set_err(err, errlen, "interrupted");
		r = -ECANCELED;
	} else if (n == -E2BIG) {
		set_err(err, errlen, "password longer than %d bytes", SC_VOL_SECRET_MAX);
		r = -ECANCELED;
	} else if (n < 0) {
		set_err(err, errlen, "cannot read from the terminal: %s", strerror((int)-n));
		r = -ECANCELED;
	} else {
		*len = n;
	}
out_restore_signals:
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &old_sa[i], NULL);
	return r;
}

static int secret_from_tty(const char *prompt, bool confirm, struct sc_vol_secret *s,
			   char *err, size_t errlen)
{
	unsigned char *again = NULL;
	size_t again_len = 0;
	int fd, r;

	fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		set_err(err, errlen, "no terminal to ask for the password on; "
			"use --passfile=FILE, --extpass=CMD or --keyfile=FILE");
		return -ECANCELED;
	}
	r = tty_ask(fd, prompt, s->buf, SC_VOL_SECRET_MAX, &s->len, err, errlen);
	if (r)
		goto out_close;
	if (s->len == 0) {
		set_err(err, errlen, "empty password refused");
		r = -ECANCELED;
		goto out_close;
	}
	if (!confirm)
		goto out_close;

	again = sc_secure_alloc(SC_VOL_SECRET_MAX + 1);
	if (!again) {
		set_err(err, errlen, "out of locked memory");
		r = -ENOMEM;
		goto out_close;
	}
	r = tty_ask(fd, "Repeat password: ", again, SC_VOL_SECRET_MAX, &again_len,
		    err, errlen);
	if (r)
		goto out_free_again;
	if (again_len != s->len || !sc_memeq_ct(again, s->buf, s->len)) {
		set_err(err, errlen, "passwords do not match");
		r = -ECANCELED;
	}
out_free_again:
	sc_secure_free(again, SC_VOL_SECRET_MAX + 1);
out_close:
	close(fd);
	return r;
}

/*
 * A secret or config file that group or others may read or write: works,
 * with a one-line warning (prefixed by who) naming what and its mode.
 */
static void warn_mode(mode_t mode, const char *who, const char *what)
{
	if (!who)
		return;		/* a quiet look (sc_vol_config_read's who NULL) */
	if (S_ISREG(mode) && (mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH)))
		fprintf(stderr, "%s: warning: %s is accessible by group or others "
			"(mode %04o); run chmod 600 on it\n", who, what, (unsigned)(mode & 07777));
}

static void warn_shared(int fd, const char *who, const char *what)
{
	struct stat st;

	if (fstat(fd, &st) == 0)
		warn_mode(st.st_mode, who, what);
}

/* Opens path for reading, "-" meaning stdin; returns the fd or -errno. */
static int open_input(const char *path)
{
	int fd;

	if (!strcmp(path, "-"))
		return STDIN_FILENO;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

/* what names the file in messages (the caller decides whether it shows the path). */
static int secret_from_file(const char *path, const char *what, struct sc_vol_secret *s,
			    char *err, size_t errlen)
{
	ssize_t n;
	int fd;

	fd = open_input(path);
	if (fd < 0) {
		set_err(err, errlen, "cannot open %s: %s", what, strerror(-fd));
		return -ECANCELED;
	}
	warn_shared(fd, "stackcrypt", what);
	n = read_line(fd, s->buf, SC_VOL_SECRET_MAX, NULL, NULL);
	if (fd != STDIN_FILENO)
		close(fd);
	if (n == -E2BIG) {
		set_err(err, errlen, "%s: first line longer than %d bytes", what, SC_VOL_SECRET_MAX);
		return -ECANCELED;
	}
	if (n < 0) {
		set_err(err, errlen, "cannot read %s: %s", what, strerror((int)-n));
		return -ECANCELED;
	}
	if (n == 0) {
		set_err(err, errlen, "empty password refused (first line of %s is empty)", what);
		return -ECANCELED;
	}
	s->len = n;
	return 0;
}

/*
 * Runs cmd with sh -c and takes the first line of its standard output.  The
 * rest of the output is read and discarded, so the command does not die of
 * SIGPIPE, and its exit status is checked: a command that fails gives no
 * secret even if it printed one.
 */
static int secret_from_cmd(const char *cmd, struct sc_vol_secret *s,
			   char *err, size_t errlen)
{
	unsigned char sink[256];
	int pipefd[2], status;
	ssize_t n, m;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC)) {
		set_err(err, errlen, "extpass: pipe: %s", strerror(errno));
		return -ECANCELED;
	}
	pid = fork();
	if (pid < 0) {
		set_err(err, errlen, "extpass: fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -ECANCELED;
	}
	if (pid == 0) {
		if (dup2(pipefd[1], STDOUT_FILENO) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	n = read_line(pipefd[0], s->buf, SC_VOL_SECRET_MAX, NULL, NULL);
	do
		m = read(pipefd[0], sink, sizeof(sink));
	while (m > 0 || (m < 0 && errno == EINTR));
	sc_wipe(sink, sizeof(sink));
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			set_err(err, errlen, "extpass: waitpid: %s", strerror(errno));
			return -ECANCELED;
		}
	}
	if (WIFSIGNALED(status)) {
		set_err(err, errlen, "extpass command failed (killed by signal %d)",
			WTERMSIG(status));
		return -ECANCELED;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		set_err(err, errlen, "extpass command failed (exit %d)",
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -ECANCELED;
	}
	if (n == -E2BIG) {
		set_err(err, errlen, "extpass: first line longer than %d bytes",
			SC_VOL_SECRET_MAX);
		return -ECANCELED;
	}
	if (n < 0) {
		set_err(err, errlen, "extpass: read: %s", strerror((int)-n));
		return -ECANCELED;
	}
	if (n == 0) {
		set_err(err, errlen, "empty password refused (extpass command printed an empty line)");
		return -ECANCELED;
	}
	s->len = n;
	return 0;
}

static bool is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * Why n bytes at raw are not a key file (sc_keyfile_parse refused them),
 * in a few words for "key file PATH ...": no byte of the key is shown.
 */
static void keyfile_why(const unsigned char *raw, size_t n, char *why, size_t len)
{
	size_t end = n, i, digits = 0;

	if (n == 0) {
		snprintf(why, len, "is empty");
		return;
	}
	for (i = 0; i < n; i++)		/* not text at all: say so, whatever its first bytes */
		if ((raw[i] < 0x20 || raw[i] >= 0x7f) && raw[i] != '\n' && raw[i] != '\r' &&
		    raw[i] != '\t') {
			snprintf(why, len, "is %zu bytes, not text of 64 hex digits", n);
			return;
		}
	if (end >= 1 && raw[end - 1] == '\n')
		end--;
	if (end >= 1 && raw[end - 1] == '\r')
		end--;
	for (i = 0; i < end && is_hex(raw[i]); i++)
		digits++;
	if (i == end) {
		snprintf(why, len, "holds %zu hex digits", digits);
		return;
	}
	if (raw[i] == '\n' || raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r')
		snprintf(why, len, "has a blank or a line break after %zu hex digits (one line of "
			 "64 digits only)", digits);
	else
		snprintf(why, len, "has a character that is not a hex digit at byte %zu", i + 1);
}

/*
 * A new key (init, passwd --new-keyfile) is refused where an old one is
 * still read: exactly 32 hex digits read as 32 raw bytes, but look like a
 * 128-bit key in hex; and 32 equal bytes are no random key.  0, or
 * -ECANCELED with err set.
 */
static int keyfile_new_check(const char *path, const unsigned char *raw, size_t n,
			     const uint8_t *key, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; n == 32 && i < 32 && is_hex(raw[i]); i++)
		;
	if (n == 32 && i == 32) {
		set_err(err, errlen, "key file %s holds 32 hex digits (a 128-bit key?): want 64 hex "
			"digits (256 bits) or 32 random raw bytes", path);
		return -ECANCELED;
	}
	for (i = 1; i < 32 && key[i] == key[0]; i++)
		;
	if (i == 32) {
		set_err(err, errlen, "key file %s is one byte repeated 32 times: not a random key "
			"(make one with: head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \\n')",
			path);
		return -ECANCELED;
	}
	return 0;
}

/* A key file becomes its 32 raw bytes (sc_keyfile_parse); a new one is checked harder. */
static int secret_from_keyfile(const char *path, bool new_key, struct sc_vol_secret *s,
			       char *err, size_t errlen)
{
	unsigned char *raw;
	size_t n = 0;
	int fd, r = 0;

	raw = sc_secure_alloc(SC_KEYFILE_MAX + 1);
	if (!raw) {
		set_err(err, errlen, "out of locked memory");
		return -ENOMEM;
	}
	fd = open_input(path);
	if (fd < 0) {
		set_err(err, errlen, "cannot open key file %s: %s", path, strerror(-fd));
		r = -ECANCELED;
		goto out_free;
	}
	{
		char what[PATH_MAX + 16];

		snprintf(what, sizeof(what), "key file %s", path);
		warn_shared(fd, "stackcrypt", what);
	}
	while (n <= SC_KEYFILE_MAX) {
		ssize_t m = read(fd, raw + n, SC_KEYFILE_MAX + 1 - n);

		if (m < 0 && errno == EINTR)
			continue;
		if (m < 0) {
			set_err(err, errlen, "cannot read key file %s: %s", path, strerror(errno));
			r = -ECANCELED;
			goto out_close;
		}
		if (m == 0)
			break;
		n += m;
	}
	if (n > SC_KEYFILE_MAX) {
		set_err(err, errlen, "key file %s is too large: want 64 hex digits or 32 bytes", path);
		r = -ECANCELED;
		goto out_close;
	}
	if (sc_keyfile_parse(raw, n, s->buf)) {
		char why[96];

		keyfile_why(raw, n, why, sizeof(why));
		set_err(err, errlen, "%s is not a key file: it %s; want 64 hex digits "
			"(one line) or 32 raw bytes", path, why);
		r = -ECANCELED;
		goto out_close;
	}
	if (new_key) {
		r = keyfile_new_check(path, raw, n, s->buf, err, errlen);
		if (r)
			goto out_close;
	}
	s->len = 32;
out_close:
	if (fd != STDIN_FILENO)
		close(fd);
out_free:
	sc_secure_free(raw, SC_KEYFILE_MAX + 1);
	return r;
}

/*
 * The master key as text: on the command line (accepted for recovery, with
 * a warning), in a file or on stdin ("-"), or typed on the terminal (arg
 * NULL or empty).  Result: the 32 raw bytes.
 */
static int secret_from_masterkey(const char *arg, struct sc_vol_secret *s,
				 char *err, size_t errlen)
{
	struct sc_vol_secret text = { 0 };
	int r;

	if (arg && *arg && strcmp(arg, "-") &&
	    sc_mkey_from_text(arg, s->buf) == 0) {
		fprintf(stderr, "stackcrypt: warning: a master key on the command line "
			"is visible to other users (ps); prefer --masterkey=FILE, a file "
			"only you can read\n");
		s->len = SC_MASTER_KEY_LEN;
		return 0;
	}
	if (arg && *arg && sc_vol_looks_like_key(arg) && access(arg, F_OK) != 0) {
		/* a key with a typo, not a file name: say so, never echo it */
		set_err(err, errlen, "the --masterkey value is not a valid master key (want 64 "
			"hex digits, as printed by stackcrypt init); not shown here");
		return -ECANCELED;
	}
	text.buf = sc_secure_alloc(SC_VOL_SECRET_MAX + 1);
	if (!text.buf) {
		set_err(err, errlen, "out of locked memory");
		return -ENOMEM;
	}
	if (!arg || !*arg)
		r = secret_from_tty("Master key: ", false, &text, err, errlen);
	else
		/* never the path: a mistyped key lands here as a "file name" */
		r = secret_from_file(arg, "the master key file given with --masterkey",
				     &text, err, errlen);
	if (r)
		goto out_free;
	text.buf[text.len] = 0;
	if (sc_mkey_from_text((const char *)text.buf, s->buf)) {
		set_err(err, errlen, "not a master key: want 8 groups of 8 hex digits "
			"separated by '-', as printed by stackcrypt init");
		r = -ECANCELED;
		goto out_free;
	}
	s->len = SC_MASTER_KEY_LEN;
out_free:
	sc_vol_secret_free(&text);
	return r;
}

int sc_vol_secret_get(const struct sc_secret_src *src, const char *prompt,
		      bool confirm, struct sc_vol_secret *out,
		      char *err, size_t errlen)
{
	int r = -EINVAL;

	out->len = 0;
	out->buf = sc_secure_alloc(SC_VOL_SECRET_MAX + 1);
	if (!out->buf) {
		set_err(err, errlen, "out of locked memory");
		return -ENOMEM;
	}
	switch (src->kind) {
	case SC_SECRET_TTY:
		r = secret_from_tty(prompt, confirm, out, err, errlen);
		break;
	case SC_SECRET_PASSFILE: {
		char what[PATH_MAX + 32];

		snprintf(what, sizeof(what), "password file %s", src->arg);
		r = secret_from_file(src->arg, what, out, err, errlen);
		break;
	}
	case SC_SECRET_EXTPASS:
		r = secret_from_cmd(src->arg, out, err, errlen);
		break;
	case SC_SECRET_KEYFILE:
		r = secret_from_keyfile(src->arg, confirm, out, err, errlen);
		break;
	case SC_SECRET_MASTERKEY:
		r = secret_from_masterkey(src->arg, out, err, errlen);
		break;
	}
	if (r)
		sc_vol_secret_free(out);
	return r;
}

bool sc_vol_looks_like_key(const char *s)
{
	size_t hex = 0;

	for (; *s; s++) {
		if (isxdigit((unsigned char)*s))
			hex++;
		else if (*s != '-' && *s != ' ' && *s != ':' && *s != '\t' && *s != '\n')
			return false;
	}
	/* a key is 64 digits; 48 catches one with many missing and no UUID (32) or SHA-1 (40) */
	return hex >= 48;
}

int sc_vol_secret_opt(const char *name, const char *arg,
		      struct sc_secret_src *src, bool *given,
		      char *err, size_t errlen)
{
	static const struct {
		const char		*name;
		enum sc_secret_kind	kind;
		bool			needs_arg;
	} opts[] = {
		{ "keyfile",	SC_SECRET_KEYFILE,	true },
		{ "passfile",	SC_SECRET_PASSFILE,	true },
		{ "extpass",	SC_SECRET_EXTPASS,	true },
		{ "masterkey",	SC_SECRET_MASTERKEY,	false },
	};
	size_t i;

	if (!strcmp(name, "password") || !strcmp(name, "passphrase") ||
	    !strcmp(name, "pass")) {
		set_err(err, errlen, "a password on the command line is refused (other "
			"users can read it with ps); type it on the terminal or use "
			"--passfile=FILE, --extpass=CMD or --keyfile=FILE");
		return -EINVAL;
	}
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		if (strcmp(name, opts[i].name))
			continue;
		if (*given) {
			set_err(err, errlen, "give only one of --keyfile, --passfile, "
				"--extpass, --masterkey");
			return -EINVAL;
		}
		if (opts[i].needs_arg && (!arg || !*arg)) {
			set_err(err, errlen, "--%s needs a value", name);
			return -EINVAL;
		}
		src->kind = opts[i].kind;
		src->arg = arg;
		*given = true;
		return 0;
	}
	set_err(err, errlen, "unknown secret option --%s", name);
	return -EINVAL;
}

/* ---- the config file ------------------------------------------------------------ */

int sc_vol_backing_check(const char *backing, char *err, size_t errlen)
{
	struct stat st;

	if (!sc_backing_is_dir(backing))
		return 0;	/* one reached by URL is checked when connected to */
	if (stat(backing, &st)) {
		set_err(err, errlen, "backing directory %s: %s", backing, strerror(errno));
		return -ENOTDIR;
	}
	if (!S_ISDIR(st.st_mode)) {
		set_err(err, errlen, "backing directory %s: not a directory", backing);
		return -ENOTDIR;
	}
	if (access(backing, X_OK)) {
		set_err(err, errlen, "backing directory %s: %s", backing, strerror(errno));
		return -ENOTDIR;
	}
	return 0;
}

/*
 * BACKING's config text into text (SC_CONFIG_MAX_TEXT + 1 bytes), through
 * b; path names it in messages, and a shared mode is warned of (prefixed
 * by who).  Its length, or -errno in sc_vol_config_read's codes with err
 * set.
 */
static int config_text(struct sc_backing *b, const char *name, const char *backing,
		       const char *path, const char *who, char *text, char *err, size_t errlen)
{
	struct stat st;
	ssize_t n;

	n = sc_backing_read_file(b, name, text, SC_CONFIG_MAX_TEXT, &st);
	if (n == -ENOENT)
		set_err(err, errlen, "no stackcrypt volume in %s (%s is missing); if "
			"files were stored here, recover it with 'stackcrypt passwd "
			"--masterkey %s' (the master key init showed); for a new "
			"volume, 'stackcrypt init %s'", backing, path, backing, backing);
	else if (n == -ELOOP)
		set_err(err, errlen, "config %s is a symbolic link; refused", path);
	else if (n == -EUCLEAN)
		set_err(err, errlen, "config %s is not a regular file", path);
	else if (n == -EFBIG)
		set_err(err, errlen, "config %s is larger than %d bytes: not a stackcrypt "
			"config", path, SC_CONFIG_MAX_TEXT);
	else if (n < 0)
		set_err(err, errlen, "cannot read config %s: %s", path, strerror((int)-n));
	else if (n == 0)
		set_err(err, errlen, "config %s is empty (truncated?)", path);
	if (n == 0)
		return -EUCLEAN;
	if (n < 0)
		return n == -ENOENT || n == -EACCES ? (int)n : -EUCLEAN;
	warn_mode(st.st_mode, who, path);
	text[n] = 0;
	return (int)n;
}

/*
 * Opens BACKING for a volume command: sc_backing_open, with its one-line
 * reason in err.  0 or -errno (-ENOTDIR for a backing that is not there,
 * -EINVAL for a bad URL).
 */
static int vol_backing(const char *backing, struct sc_backing **b, char *err, size_t errlen)
{
	int r = sc_backing_open(backing, NULL, b, err, errlen);

	return r == -ENOENT || r == -EHOSTUNREACH || r == -ENOTCONN ? -ENOTDIR : r;
}

/* sc_vol_config_read of the config called name in the directory backing. */
static int config_read_as(const char *backing, const char *name, const char *who,
			  struct sc_config *cfg, char *err, size_t errlen)
{
	char path[PATH_MAX], text[SC_CONFIG_MAX_TEXT + 1], why[256] = "";
	struct sc_backing *b;
	int n, r;

	if ((size_t)snprintf(path, PATH_MAX, "%s/%s", backing, name) >= PATH_MAX) {
		set_err(err, errlen, "backing path too long");
		return -ENOTDIR;
	}
	r = vol_backing(backing, &b, err, errlen);
	if (r)
		return r;
	n = config_text(b, name, backing, path, who, text, err, errlen);
	sc_backing_close(b);
	if (n < 0)
		return n;
	r = sc_config_parse(text, (size_t)n, cfg, why, sizeof(why));
	if (r == -EPROTONOSUPPORT)
		set_err(err, errlen, "config %s needs a newer stackcrypt: %s", path,
			why[0] ? why : "unknown format or feature");
	else if (r)
		set_err(err, errlen, "config %s is corrupt: %s", path,
			why[0] ? why : "cannot parse");
	if (r && r != -EPROTONOSUPPORT && r != -EINVAL)
		r = -EUCLEAN;
	return r;
}

int sc_vol_config_read(const char *backing, const char *who,
		       struct sc_config *cfg, char *err, size_t errlen)
{
	return config_read_as(backing, SC_CONFIG_NAME, who, cfg, err, errlen);
}

int sc_vol_lock(const char *backing, struct sc_backing **out, char *err, size_t errlen)
{
	int r;

	r = vol_backing(backing, out, err, errlen);
	if (r)
		return r;
	r = sc_backing_lock_config(*out);
	if (r == 0)
		return 0;
	if (r == -EBUSY)
		set_err(err, errlen, "another stackcrypt command is changing the config "
			"of %s; try again when it is done", backing);
	else
		set_err(err, errlen, "cannot lock %s: %s", backing, strerror(-r));
	sc_backing_close(*out);
	*out = NULL;
	return r;
}

int sc_vol_config_write(const char *backing, struct sc_backing *locked,
			const struct sc_config *cfg, bool replace, char *err, size_t errlen)
{
	return sc_vol_config_write_as(backing, SC_CONFIG_NAME, locked, cfg, replace, err, errlen);
}

int sc_vol_config_write_as(const char *backing, const char *name, struct sc_backing *locked,
			   const struct sc_config *cfg, bool replace, char *err, size_t errlen)
{
	char text[SC_CONFIG_MAX_TEXT];
	struct sc_backing *b = locked;
	int len, r;

	len = sc_config_format(cfg, text, sizeof(text));
	if (len < 0) {
		set_err(err, errlen, "cannot format config: %s", strerror(-len));
		return len;
	}
	r = b ? 0 : vol_backing(backing, &b, err, errlen);
	if (r)
		goto out_wipe;
	/* the old config stays until the new one is durable under its temporary name */
	r = sc_backing_write_file(b, SC_VOL_TMP_PREFIX, name, text, (size_t)len, 0600,
				  replace, err, errlen);
	if (r == -EEXIST)
		set_err(err, errlen, "%s already holds a stackcrypt %s (%s)", backing,
			strcmp(name, SC_CONFIG_NAME) ? "config" : "volume", name);
	if (!locked)
		sc_backing_close(b);
out_wipe:
	sc_wipe(text, sizeof(text));	/* no secret, but the wrapped key need not linger */
	return r;
}

/* ---- recovery with the master key ------------------------------------------------ */

/*
 * Files whose header we test a master key against: the first few regular
 * files found with a header of the right size, in the xattr or, on an
 * aes-gcm volume, at the start of the file.  A master key typed for
 * recovery must match one of them, and their headers name the cipher and
 * block size when the config is gone.
 */
#define PROBE_FILES	16

struct probe {
	uint8_t		hdr[PROBE_FILES][SC_HDR_MAX];
	uint8_t		len[PROBE_FILES];
	bool		gcm[PROBE_FILES];	/* an aes-gcm in-file header (format.md 10.2) */
	unsigned int	n;
};

/*
 * Whether the regular file fd starts with what an aes-gcm header starts
 * with (magic and version, at least a header long), its first
 * SC_GHDR_SIZE bytes then in hdr: a file of an aes-gcm volume, whose
 * header is inside the file, not in an xattr.
 */
static bool gcm_head(const uint8_t *head, ssize_t n)
{
	return n >= SC_GHDR_SIZE && !memcmp(head, SC_GHDR_MAGIC, 4) &&
	       head[4] == SC_GHDR_VERSION;
}

/*
 * The header of the regular file rel (at, name: where the walk found it)
 * of b: its header xattr into xval (at most xcap bytes; *xlen its length,
 * or -errno), and when it has none, whether its first SC_GHDR_SIZE bytes
 * (into head) are an aes-gcm header.  Returns that, or false when the
 * file cannot be opened (*xlen -errno).
 */
static bool file_header(struct sc_backing *b, int at, const char *name, const char *rel,
			const struct stat *st, uint8_t *xval, size_t xcap, ssize_t *xlen,
			uint8_t *head)
{
	bool gcm = false;
	int fd;

	fd = sc_backing_open_file(b, at, name, rel, O_RDONLY);
	if (fd < 0) {
		*xlen = fd;
		return false;
	}
	*xlen = sc_backing_fgetxattr(b, fd, SC_HDR_XATTR, xval, xcap);
	if (*xlen < 0 && st->st_size >= SC_GHDR_SIZE)
		gcm = gcm_head(head, sc_backing_pread(b, fd, head, SC_GHDR_SIZE, 0));
	sc_backing_close_file(b, fd);
	return gcm;
}

struct probe_walk {
	struct sc_backing	*b;
	struct probe		*p;
};

/*
 * One regular file's header into p if it has one of the right shape: its
 * header xattr (len bytes at hdr, or len < 0), else (gcm true) an aes-gcm
 * header already at hdr.  > 0 once p is full.
 */
static int probe_add(struct probe *p, ssize_t len, bool gcm)
{
	p->gcm[p->n] = len < 0 && gcm;
	if (p->gcm[p->n])
		p->len[p->n++] = SC_GHDR_SIZE;
	else if (len >= 0 && sc_hdr_probe(p->hdr[p->n], (size_t)len, NULL) == SC_HDR_SHAPE_OK)
		p->len[p->n++] = (uint8_t)len;
	return p->n == PROBE_FILES;
}

static int probe_visit(void *ctx, int at, const char *name, const char *rel,
		       const struct stat *st, int err)
{
	struct probe_walk *w = ctx;
	struct probe *p = w->p;
	ssize_t len;
	bool gcm;

	if (err || !S_ISREG(st->st_mode))
		return 0;
	gcm = file_header(w->b, at, name, rel, st, p->hdr[p->n], SC_HDR_MAX, &len, p->hdr[p->n]);
	return probe_add(p, len, gcm);
}

/* The version of probed header i (all passed sc_hdr_probe). */
static unsigned probe_version(const struct probe *p, unsigned int i)
{
	unsigned version = 0;

	sc_hdr_probe(p->hdr[i], p->len[i], &version);
	return version;
}

struct find_hdr {
	struct sc_backing	*b;
	char			*rel;
	size_t			rellen;
};

static int find_hdr_visit(void *ctx, int at, const char *name, const char *rel,
			  const struct stat *st, int err)
{
	struct find_hdr *f = ctx;
	uint8_t hdr[SC_GHDR_SIZE];
	ssize_t len;

	if (err || !S_ISREG(st->st_mode))
		return 0;
	if (!file_header(f->b, at, name, rel, st, NULL, 0, &len, hdr) && len < 0)
		return 0;
	snprintf(f->rel, f->rellen, "%s", rel);
	return 1;
}

/*
 * fn over every entry of BACKING (sc_backing_walk) with a backing in the
 * ctx's first member.  0 (also when fn stopped it), fn's negative value
 * or -errno, with a one-line reason in err when negative.
 */
static int vol_walk(const char *backing, sc_backing_walk_fn fn, void *ctx, char *err,
		    size_t errlen)
{
	struct sc_backing **b = ctx;
	int r;

	err[0] = 0;
	r = vol_backing(backing, b, err, errlen);
	if (r)
		return r;
	r = sc_backing_walk(*b, fn, ctx);
	sc_backing_close(*b);
	*b = NULL;
	if (r < 0 && !err[0])
		set_err(err, errlen, "%s", strerror(-r));
	return r;
}

int sc_vol_find_header(const char *backing, char *rel, size_t rellen, char *err,
		       size_t errlen)
{
	struct find_hdr f = { NULL, rel, rellen };
	int r;

	rel[0] = 0;
	r = vol_walk(backing, find_hdr_visit, &f, err, errlen);
	return r < 0 ? r : rel[0] != 0;
}

/* 0 if mk opens one of the probed headers, -EUCLEAN if none, -errno. */
static int probe_match(const struct probe *p, const uint8_t *mk,
		       enum sc_cipher_id cipher, uint32_t bs)
{
	struct sc_mkey *m;
	unsigned int i;
	int r;

	r = sc_mkey_new(mk, cipher, bs, &m);
	if (r)
		return r;
	r = -EUCLEAN;
	for (i = 0; i < p->n && r; i++) {
		struct sc_fkey *fk;

		if (p->gcm[i] != (cipher == SC_CIPHER_AES_GCM))
			continue;	/* a header of the other kind names another cipher */
		if (p->gcm[i]) {
			if (sc_ghdr_verify(m, p->hdr[i], p->len[i], NULL) == 0)
				r = 0;
		} else if (sc_fkey_new(m, p->hdr[i], p->len[i], &fk) == 0) {
			sc_fkey_free(fk);
			r = 0;
		}
	}
	sc_mkey_free(m);
	return r;
}

/*
 * Without a config: the cipher and block size under which mk opens one of
 * the probed headers, tried in turn.  0, or -EUCLEAN when none does.
 */
static int probe_search(const struct probe *p, const uint8_t *mk,
			enum sc_cipher_id *cipher, uint32_t *bs)
{
	static const enum sc_cipher_id ciphers[] = {
		SC_CIPHER_AES_XTS, SC_CIPHER_AES_CBC, SC_CIPHER_NULL, SC_CIPHER_AES_GCM,
	};
	size_t i;
	uint32_t b;

	for (i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++)
		for (b = SC_BLOCK_MIN; b <= SC_BLOCK_MAX; b <<= 1)
			if (probe_match(p, mk, ciphers[i], b) == 0) {
				*cipher = ciphers[i];
				*bs = b;
				return 0;
			}
	return -EUCLEAN;
}

/*
 * A fresh config (new salt and uuid, nothing wrapped yet) for the cipher
 * and block size found, with version 1 headers for new files when the
 * probed headers are all version 1: a volume older builds must still read.
 */
static int recover_config(const struct probe *p, enum sc_cipher_id cipher, uint32_t bs,
			  struct sc_config *cfg, char *err, size_t errlen)
{
	unsigned int i;
	int r;

	r = sc_config_init(cfg, cipher, bs, SC_KDF_SCRYPT, SC_SCRYPT_N_DEFAULT);
	if (r)
		set_err(err, errlen, "cannot build a config: %s", strerror(-r));
	for (i = 0; i < p->n && probe_version(p, i) == 1; i++)
		;
	if (i == p->n)
		cfg->features &= ~SC_FEAT_HDR_V2;
	return r;
}

void sc_vol_features_text(uint64_t f, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", f & SC_FEAT_HDR_V2 ? "hdr-v2" : "",
		 (f & SC_FEAT_HDR_V2) && (f & SC_FEAT_NAMES) ? ", " : "",
		 f & SC_FEAT_NAMES ? "names" : f & SC_FEAT_HDR_V2 ? "" : "none");
}

/*
 * A config of format 3 and its MAC under mk.  0: the fields are the
 * volume's, taken as they are.  Else the error, told apart by the files'
 * headers (probe p): if they take mk the config was edited (-EBADMSG),
 * else mk is not this volume's (-EKEYREJECTED).
 */
static int recover_by_mac(const char *backing, const char *who, const struct probe *p,
			  const uint8_t *mk, const struct sc_config *cfg, char *err,
			  size_t errlen)
{
	int r = sc_config_mac_check(cfg, mk);

	if (r == 0) {
		fprintf(stderr, "%s: the config's MAC checks with this master key: its "
			"fields are kept\n", who);
		return 0;
	}
	if (r != -EBADMSG) {
		set_err(err, errlen, "cannot check the config's MAC: %s", strerror(-r));
		return r;
	}
	if (p->n > 0 && probe_match(p, mk, cfg->cipher, cfg->block_size) == 0) {
		set_err(err, errlen, "config %s/%s was edited: its MAC does not match the "
			"master key the files were made with (move it aside to rebuild it "
			"from the files)", backing, SC_CONFIG_NAME);
		return -EBADMSG;
	}
	set_err(err, errlen, "the master key does not match the config of %s: its MAC "
		"fails (a key of another volume, or mistyped?)", backing);
	return -EKEYREJECTED;
}

/*
 * Names of a volume whose config carries no MAC (or none is left): on if
 * the config says so, or if any directory of the tree carries a nonce
 * record; never switched off.  0 or -errno with err set.
 */
static int recover_names(const char *backing, const char *who, struct sc_config *cfg,
			 char *err, size_t errlen)
{
	char any[PATH_MAX], bound[PATH_MAX];
	int r;

	if ((cfg->features & SC_FEAT_NAMES) && (cfg->features & SC_FEAT_NAMES_BOUND))
		return 0;
	r = sc_vol_tree_dirnonces(backing, any, bound, sizeof(any), err, errlen);
	if (r < 0)
		return r;
	if (!(cfg->features & SC_FEAT_NAMES)) {
		if (!any[0]) {
			fprintf(stderr, "%s: names are in the clear: no directory of %s carries "
				"a nonce record\n", who, backing);
			return 0;
		}
		cfg->features |= SC_FEAT_NAMES;
		fprintf(stderr, "%s: names are encrypted: directory %s of %s carries a "
			"nonce record\n", who, any, backing);
	}
	/*
	 * A volume that ever wrote a bound record refuses unbound ones; a
	 * recovery that dropped the bit would let a record copied from
	 * another directory in again (a config rewritten as format 2 and a
	 * spoiled salt are all it takes).  Version 1 records alone: an old
	 * volume, whose records the bit would make unreadable.
	 */
	if (bound[0]) {
		cfg->features |= SC_FEAT_NAMES_BOUND;
		fprintf(stderr, "%s: directory records are bound to their place: directory "
			"%s of %s carries a version 2 record\n", who, bound, backing);
	}
	return 0;
}

/*
 * Recovery: whether symlink targets are bound (SC_FEAT_LINKS_BOUND), when
 * the config does not say so: a volume with names whose first symlink
 * holds a long target's marker, or a target that opens as a bound one
 * under mk.  Never switched off.  0 or -errno with err set.
 */
static int recover_links(const char *backing, const char *who,
			 const uint8_t mk[SC_MASTER_KEY_LEN], struct sc_config *cfg,
			 char *err, size_t errlen)
{
	char target[SC_LINK_ENC_MAX + 2], *plain;
	struct sc_mkey *m = NULL;
	struct sc_nkey *nk = NULL;
	int n, r;

	if (!(cfg->features & SC_FEAT_NAMES) || (cfg->features & SC_FEAT_LINKS_BOUND))
		return 0;
	n = sc_vol_tree_link(backing, target, sizeof(target), err, errlen);
	if (n < 0)
		return n == -1 ? 0 : n;
	r = sc_link_is_mark(target, (size_t)n);
	if (!r) {
		plain = malloc(SC_LINK_BOUND_PLAIN_MAX + 1);
		if (!plain || sc_mkey_new(mk, cfg->cipher, cfg->block_size, &m) ||
		    sc_nkey_new(m, &nk)) {
			free(plain);
			sc_mkey_free(m);
			set_err(err, errlen, "cannot derive the names keys");
			return -ENOMEM;
		}
		r = sc_link_open(nk, target, (size_t)n, NULL, plain) > 0;
		sc_wipe(plain, SC_LINK_BOUND_PLAIN_MAX + 1);
		free(plain);
		sc_nkey_free(nk);
		sc_mkey_free(m);
	}
	if (r) {
		cfg->features |= SC_FEAT_LINKS_BOUND;
		fprintf(stderr, "%s: symlink targets are bound to their entries: a symlink of "
			"%s holds a bound target\n", who, backing);
	}
	return 0;
}

int sc_vol_recover(const char *backing, const char *who, const uint8_t mk[SC_MASTER_KEY_LEN],
		   struct sc_config *cfg, char *err, size_t errlen)
{
	enum sc_cipher_id cipher = SC_CIPHER_AES_XTS;
	uint32_t bs = SC_BLOCK_DEFAULT;
	char cfgerr[512], scanerr[512], feat[32];
	struct probe_walk w = { NULL, NULL };
	struct probe *p;
	bool have_cfg;
	int r;

	r = sc_vol_backing_check(backing, err, errlen);
	if (r)
		return r;
	have_cfg = sc_vol_config_read(backing, who, cfg, cfgerr, sizeof(cfgerr)) == 0;
	if (!have_cfg && !strstr(cfgerr, "is missing"))
		fprintf(stderr, "%s: warning: %s; taking cipher and block size "
			"from the file headers\n", who, cfgerr);

	p = calloc(1, sizeof(*p));
	if (!p) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w.p = p;
	r = vol_walk(backing, probe_visit, &w, scanerr, sizeof(scanerr));
	if (r < 0) {
		set_err(err, errlen, "cannot scan %s: %s", backing,
			scanerr[0] ? scanerr : strerror(-r));
		goto out_free;
	}
	/* The master key authenticates a format 3 config by itself: files or not. */
	if (have_cfg && cfg->format >= SC_CONFIG_FORMAT_MAC) {
		r = recover_by_mac(backing, who, p, mk, cfg, err, errlen);
		goto out_free;
	}
	if (p->n == 0) {
		/*
		 * The master key does not authenticate an old config's fields;
		 * only a file header (whose MAC covers cipher and block size)
		 * can.  Trusting an unchecked config would let whoever edited
		 * it turn the cipher to null (security review, commit ffd2785).
		 */
		if (have_cfg)
			set_err(err, errlen, "no encrypted file in %s to check the master "
				"key and the config's cipher against: nothing to recover",
				backing);
		else
			set_err(err, errlen, "no config and no encrypted file in %s: the "
				"cipher and block size are unknown, and there is nothing to "
				"recover", backing);
		r = -ENOENT;
		goto out_free;
	}
	if (have_cfg)
		r = probe_match(p, mk, cfg->cipher, cfg->block_size);
	else
		r = probe_search(p, mk, &cipher, &bs);
	if (r) {
		set_err(err, errlen, "the master key does not match the files in %s: none of "
			"the %u file headers checked was made with it (a key of another "
			"volume, or mistyped?)", backing, p->n);
		r = -EKEYREJECTED;
		goto out_free;
	}
	if (!have_cfg)
		r = recover_config(p, cipher, bs, cfg, err, errlen);
	if (!r)
		r = recover_names(backing, who, cfg, err, errlen);
	if (!r)
		r = recover_links(backing, who, mk, cfg, err, errlen);
	if (!r) {
		sc_vol_features_text(cfg->features, feat, sizeof(feat));
		fprintf(stderr, "%s: %s: cipher %s, block size %" PRIu32 ", features %s "
			"(the cipher and block size checked against %u file header%s)\n", who,
			have_cfg ? "the config's fields, unauthenticated (format 1 or 2)" :
			"no config: from the files", sc_cipher_name(cfg->cipher),
			cfg->block_size, feat, p->n, p->n == 1 ? "" : "s");
	}
out_free:
	free(p);
	return r;
}

/* The volume's mkey: new files get the header version its features name. */
static int vol_mkey_new(const uint8_t *mk, const struct sc_config *cfg, struct sc_mkey **out)
{
	struct sc_mkey *m;
	int r = sc_mkey_new(mk, cfg->cipher, cfg->block_size, &m);

	if (r != 0)
		return r;
	r = sc_mkey_set_hdr_version(m, cfg->features & SC_FEAT_HDR_V2 ? 2 : 1);
	if (r != 0) {
		sc_mkey_free(m);
		return r;
	}
	*out = m;
	return 0;
}

/* Recovery: the master key typed by the user, checked against the file headers. */
static int unlock_with_master_key(const char *backing, const struct sc_secret_src *src,
				  const char *who, struct sc_config *cfg, uint8_t *mk, char *err,
				  size_t errlen)
{
	struct sc_vol_secret sec = { 0 };
	int r;

	r = sc_vol_backing_check(backing, err, errlen);
	if (r)
		return r;
	r = sc_vol_secret_get(src, "Master key: ", false, &sec, err, errlen);
	if (r)
		return r;
	memcpy(mk, sec.buf, SC_MASTER_KEY_LEN);
	sc_vol_secret_free(&sec);
	return sc_vol_recover(backing, who, mk, cfg, err, errlen);
}

/* A key file opens a key-file slot, a password the others: one of that kind must exist. */
static int check_secret_kind(const struct sc_config *cfg, const struct sc_secret_src *src,
			     char *err, size_t errlen)
{
	bool keyfile = src->kind == SC_SECRET_KEYFILE, any = false;

	for (unsigned i = 0; i < SC_SLOTS_MAX; i++)
		if (cfg->slots[i].used && (cfg->slots[i].kdf == SC_KDF_KEYFILE) == keyfile)
			any = true;
	if (any)
		return 0;
	if (!keyfile)
		set_err(err, errlen, "this volume is unlocked with a key file: use --keyfile=FILE");
	else
		set_err(err, errlen, "this volume is unlocked with a password, not a key file");
	return -ECANCELED;
}

/* The label of slot i as messages name it: "slot 1 (phone)". */
static void slot_name(const struct sc_config *cfg, int i, char *buf, size_t len)
{
	snprintf(buf, len, "slot %d (%s)", i, i >= 0 && i < SC_SLOTS_MAX ?
		 cfg->slots[i].label : "?");
}

/*
 * The master key unwrapped from cfg with the secret from src, by the
 * first slot of its kind that takes it (*slot), and the config MAC
 * checked.  The secret goes to keep (if not NULL) on success.
 */
static int unwrap_master_key(const char *backing, const char *cname, const struct sc_config *cfg,
			     const struct sc_secret_src *src, const char *prompt,
			     uint8_t *mk, int *slot, struct sc_vol_secret *keep,
			     char *err, size_t errlen)
{
	bool keyfile = src->kind == SC_SECRET_KEYFILE;
	struct sc_vol_secret sec = { 0 };
	char name[64];
	int r;

	r = sc_vol_secret_get(src, prompt, false, &sec, err, errlen);
	if (r)
		return r;
	r = sc_config_open(cfg, keyfile, sec.buf, sec.len, mk, slot);
	slot_name(cfg, *slot, name, sizeof(name));
	if (r == -EKEYREJECTED || r == -ENOKEY) {
		r = -EKEYREJECTED;
		set_err(err, errlen, keyfile ? "wrong key file" : "wrong password");
	} else if (r == -EBADMSG && cfg->format >= SC_CONFIG_FORMAT_SLOTS) {
		set_err(err, errlen, "config %s/%s was tampered with: %s takes the %s, but its "
			"fields do not match what the key was wrapped with", backing,
			cname, name, keyfile ? "key file" : "password");
	} else if (r == -EBADMSG) {
		set_err(err, errlen, "config %s/%s was tampered with: its fields do not "
			"match what the key was wrapped with", backing, cname);
	} else if (r) {
		set_err(err, errlen, "cannot unwrap the master key: %s", strerror(-r));
	}
	/* the secret opened a slot; the volume's fields (and slots) must be the key's */
	if (!r && cfg->format >= SC_CONFIG_FORMAT_MAC) {
		r = sc_config_mac_check(cfg, mk);
		if (r == -EBADMSG)
			set_err(err, errlen, "config %s/%s was tampered with: %s opens, but the "
				"config's %s do not match its MAC under the master key", backing,
				cname, name, cfg->format >= SC_CONFIG_FORMAT_SLOTS ?
				"fields or key slots" : "fields");
		else if (r)
			set_err(err, errlen, "cannot check the config's MAC: %s", strerror(-r));
		if (r)
			sc_wipe(mk, SC_MASTER_KEY_LEN);
	}
	if (!r && keep)
		*keep = sec;
	else
		sc_vol_secret_free(&sec);
	return r;
}

static int unlock_slot(const char *backing, const struct sc_secret_src *src, const char *who,
		       const char *prompt, struct sc_config *cfg, uint8_t *mk, int *slot,
		       struct sc_vol_secret *keep, char *err, size_t errlen)
{
	int r, dummy;

	if (!slot)
		slot = &dummy;
	*slot = -1;
	if (src->kind == SC_SECRET_MASTERKEY)
		return unlock_with_master_key(backing, src, who, cfg, mk, err, errlen);
	r = sc_vol_config_read(backing, who, cfg, err, errlen);
	if (r == -EACCES)
		r = -EUCLEAN;	/* sc_volume.h's codes: an unreadable config is unusable */
	if (!r)
		r = check_secret_kind(cfg, src, err, errlen);
	if (!r)
		r = unwrap_master_key(backing, SC_CONFIG_NAME, cfg, src, prompt, mk, slot, keep, err,
				      errlen);
	return r;
}

/*
 * A volume a stopped command left half done opens only for that command
 * (opens: the bit it may find): SC_FEAT_REKEYING, its master key being
 * replaced, its tree half in a copy under the new key (docs/format.md
 * 6.5); SC_FEAT_UPGRADING, its files being converted into an integrity
 * volume's, and SC_FEAT_LISTS_UPGRADING, an integrity volume's directories
 * being given their listing records (11.12).  0, or -EBUSY with err set
 * and mk wiped.
 */
static int refuse_under_way(const char *backing, const struct sc_config *cfg, uint64_t opens,
			    uint8_t *mk, char *err, size_t errlen)
{
	uint64_t f = cfg->features & ~opens;

	if (!(f & (SC_FEAT_REKEYING | SC_FEAT_UPGRADING | SC_FEAT_LISTS_UPGRADING)))
		return 0;
	sc_wipe(mk, SC_MASTER_KEY_LEN);
	if (f & SC_FEAT_REKEYING)
		set_err(err, errlen, "a change of the master key of %s is under way (stackcrypt "
			"rekey was stopped): run 'stackcrypt rekey %s' to finish it", backing,
			backing);
	else if (f & SC_FEAT_UPGRADING)
		set_err(err, errlen, "an upgrade of %s to an integrity volume is under way "
			"(stackcrypt upgrade was stopped): run 'stackcrypt upgrade %s' to finish it",
			backing, backing);
	else
		set_err(err, errlen, "an upgrade of %s to directory listing records is under way "
			"(stackcrypt upgrade was stopped): run 'stackcrypt upgrade %s' to finish it",
			backing, backing);
	return -EBUSY;
}

int sc_vol_unlock_resume(const char *backing, const struct sc_secret_src *src, const char *who,
			 uint64_t opens, const char *prompt, struct sc_config *cfg, uint8_t *mk,
			 int *slot, struct sc_vol_secret *keep, char *err, size_t errlen)
{
	int r = unlock_slot(backing, src, who, prompt, cfg, mk, slot, keep, err, errlen);

	if (!r)
		r = refuse_under_way(backing, cfg, opens, mk, err, errlen);
	if (r == -EBUSY)
		sc_vol_secret_free(keep);
	return r;
}

int sc_vol_unlock_slot(const char *backing, const struct sc_secret_src *src, const char *who,
		       const char *prompt, struct sc_config *cfg, uint8_t *mk, int *slot,
		       struct sc_vol_secret *keep, char *err, size_t errlen)
{
	return sc_vol_unlock_resume(backing, src, who, 0, prompt, cfg, mk, slot, keep, err,
				    errlen);
}

int sc_vol_unlock(const char *backing, const struct sc_secret_src *src, const char *who,
		  const char *prompt, struct sc_config *cfg, uint8_t *mk,
		  char *err, size_t errlen)
{
	return sc_vol_unlock_slot(backing, src, who, prompt, cfg, mk, NULL, NULL, err, errlen);
}

/* ---- opening a volume -------------------------------------------------------------- */

/*
 * The master key of the config name in backing, with the secret from src
 * (no recovery: a config must be there).  0 or -errno with err set.
 */
static int unlock_as(const char *backing, const char *name, const struct sc_secret_src *src,
		     struct sc_config *cfg, uint8_t *mk, char *err, size_t errlen)
{
	int r, slot;

	if (src->kind == SC_SECRET_MASTERKEY) {
		set_err(err, errlen, "%s/%s: --masterkey is for recovering a volume's config, "
			"not for this one", backing, name);
		return -EINVAL;
	}
	r = config_read_as(backing, name, "stackcrypt", cfg, err, errlen);
	if (r == -EACCES)
		r = -EUCLEAN;
	if (!r)
		r = check_secret_kind(cfg, src, err, errlen);
	if (!r)
		r = unwrap_master_key(backing, name, cfg, src, "Password: ", mk, &slot, NULL, err,
				      errlen);
	return r;
}

int sc_vol_open(const char *backing, const struct sc_secret_src *src,
		struct sc_volume **out, char *err, size_t errlen)
{
	return sc_vol_open_as(backing, NULL, src, out, err, errlen);
}

int sc_vol_open_as(const char *backing, const char *name, const struct sc_secret_src *src,
		   struct sc_volume **out, char *err, size_t errlen)
{
	struct sc_volume *vol;
	uint8_t *mk;
	int r;

	*out = NULL;
	vol = calloc(1, sizeof(*vol));
	mk = sc_secure_alloc(SC_MASTER_KEY_LEN);
	if (!vol || !mk) {
		set_err(err, errlen, !vol ? "out of memory" : "out of locked memory");
		r = -ENOMEM;
		goto err_free;
	}
	r = name ? unlock_as(backing, name, src, &vol->cfg, mk, err, errlen) :
		   sc_vol_unlock(backing, src, "stackcrypt", "Password: ", &vol->cfg, mk, err, errlen);
	if (r)
		goto err_free;
	r = vol_mkey_new(mk, &vol->cfg, &vol->mkey);
	if (r == 0 && (vol->cfg.features & SC_FEAT_INTEGRITY)) {
		r = sc_ikey_new(vol->mkey, (vol->cfg.features & SC_FEAT_UNIT_TREE) != 0, &vol->ikey);
		if (r)
			sc_mkey_free(vol->mkey);
	}
	if (r) {
		set_err(err, errlen, "cannot set up the master key: %s", strerror(-r));
		goto err_free;
	}
	sc_secure_free(mk, SC_MASTER_KEY_LEN);
	/* every unlock (mount, fsck) says it, so nobody mistakes it for encrypted */
	sc_vol_warn_plaintext("stackcrypt", backing, &vol->cfg);
	*out = vol;
	return 0;

err_free:
	sc_secure_free(mk, mk ? SC_MASTER_KEY_LEN : 0);
	free(vol);
	return r;
}

void sc_vol_warn_plaintext(const char *who, const char *backing, const struct sc_config *cfg)
{
	if (cfg->cipher == SC_CIPHER_NULL)
		fprintf(stderr, "%s: warning: %s is not encrypted (cipher null): files are "
			"stored in plaintext\n", who, backing);
}

void sc_vol_close(struct sc_volume *vol)
{
	if (!vol)
		return;
	sc_ikey_free(vol->ikey);
	sc_mkey_free(vol->mkey);
	sc_wipe(vol, sizeof(*vol));
	free(vol);
}

int sc_vol_exit_code(int err)
{
	switch (err) {
	case 0:
		return SC_EXIT_OK;
	case -ENOTDIR:
		return SC_EXIT_BACKING;
	case -ENOENT:
	case -EACCES:
	case -EUCLEAN:
	case -EINVAL:
	case -EPROTONOSUPPORT:
	case -EBADMSG:
		return SC_EXIT_CONFIG;
	case -EKEYREJECTED:
		return SC_EXIT_BADPASS;
	case -ECANCELED:
		return SC_EXIT_SECRET;
	default:
		return SC_EXIT_FAIL;
	}
}

/* ---- is the volume mounted? ------------------------------------------------------ */

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape_octal(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = 0;
}

/*
 * The fuse.stackcrypt entry of /proc/self/mountinfo whose source is src
 * (or, with src NULL, whose mount point is point): the other of the two
 * into out.  1 if found, else 0.
 */
static int mountinfo_find(const char *src_want, const char *point_want, char *out,
			  size_t outlen)
{
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return 0;
	while (!found && getline(&line, &cap, f) > 0) {
		char *sep = strstr(line, " - "), *point, *type, *src, *save;
		int i;

		if (!sep)
			continue;
		*sep = 0;
		type = strtok_r(sep + 3, " \n", &save);
		src = type ? strtok_r(NULL, " \n", &save) : NULL;
		if (!src || strcmp(type, "fuse.stackcrypt"))
			continue;
		unescape_octal(src);
		if (src_want && strcmp(src, src_want))
			continue;
		point = strtok_r(line, " ", &save);
		for (i = 1; point && i < 5; i++)
			point = strtok_r(NULL, " ", &save);
		if (!point)
			continue;
		unescape_octal(point);
		if (point_want && strcmp(point, point_want))
			continue;
		snprintf(out, outlen, "%s", src_want ? point : src);
		found = 1;
	}
	free(line);
	fclose(f);
	return found;
}

/* mountinfo_find for the real path of path, as a source (by_source) or a mount point. */
static int mountinfo_of(const char *path, bool by_source, char *out, size_t outlen)
{
	char *real;
	int found;

	real = realpath(path, NULL);
	if (!real)
		return 0;
	found = mountinfo_find(by_source ? real : NULL, by_source ? NULL : real, out, outlen);
	free(real);
	return found;
}

int sc_vol_mounted_at(const char *backing, char *mnt, size_t mntlen)
{
	return mountinfo_of(backing, true, mnt, mntlen);
}

int sc_vol_mount_source(const char *mnt, char *backing, size_t len)
{
	return mountinfo_of(mnt, false, backing, len);
}
