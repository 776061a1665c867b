/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TEMPORARY: being written. */
#include "sc_cmd.h"
int main(int argc, char **argv) { return sc_cmd_mount(argc, argv); }
