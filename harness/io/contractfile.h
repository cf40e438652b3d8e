/* contractfile.h — reading a contract file (contracts §4.2 "The file form"): one rule per line,
 * `[when PRED[,PRED...]:] CONTRACT`, parsed by ref/a4w4_tree.h a4w4_contract_set_parse. */
#ifndef A4W4_CONTRACTFILE_H
#define A4W4_CONTRACTFILE_H

#include <stddef.h>

#include "a4w4_tree.h"
#include "status.h"

/* The largest contract file read (bytes). */
#define A4W4_CONTRACT_FILE_MAX (1u << 20)

/* Read the contract file at path into *set (free with a4w4_contract_set_free). Returns
 * A4W4_ST_OK; A4W4_ST_BADINPUT with one line in err naming the file and the rule ("contract
 * file F: cannot read (reason)", "contract file F: not a regular file (a FIFO); give a file"
 * (read through a4w4_read_regular: a FIFO never blocks), "contract file F: larger than 1048576 bytes", "contract file
 * F: holds a NUL byte", "contract file F: line L: ..."), *set then empty; A4W4_ST_NOMEM. */
a4w4_hstatus a4w4_contract_file_read(const char *path, a4w4_contract_set *set, char *err,
                                     size_t errlen);

#endif
