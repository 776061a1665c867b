/* TEMPORARY during the first integration: replaced by the crypto module files. */
#include <errno.h>
#include "sc_crypto.h"
int sc_block_size_check(uint64_t bs) { (void)bs; return -ENOSYS; }
