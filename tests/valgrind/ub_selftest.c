// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ub_selftest - one signed overflow, for the sanitizer build's self-test
 * (suite 'valgrind', ubsan-selftest-trap): CI builds its sanitizer tree
 * with -fsanitize-undefined-trap-on-error, so an undefined-behaviour check
 * that fails is a trap instruction, not a call into libubsan, and the
 * test shows that such a trap still ends the process with a report
 * (AddressSanitizer's SIGILL handler, handle_sigill=1) rather than going
 * unnoticed.  In a sanitizer build without the trap flag it is UBSan's
 * "runtime error" report instead (halt_on_error=1).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	/* from argv, so the compiler cannot fold the overflow away */
	volatile int x = argc > 1 ? atoi(argv[1]) : INT_MAX;

	printf("%d\n", x + 1);
	return 0;
}
