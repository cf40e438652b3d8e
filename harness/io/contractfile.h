/* contractfile.h — reading a contract file (contracts §4.2 "The file form"): one rule per line,
 * `[when PRED[,PRED...]:] CONTRACT`, parsed by ref/a4w4_contract.h a4w4_contract_set_parse. */
#ifndef A4W4_CONTRACTFILE_H
#define A4W4_CONTRACTFILE_H

#include <stddef.h>

#include "a4w4_contract.h"
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

/* The departures of contract c from the reference numerics of contracts §4.1 (each block
 * value rounded once to fp32, fp32 adds rounded to nearest even, the total rounded to bf16 by
 * RNE): phrases joined by "; " into buf (len bytes, truncated; "" when none), in this order:
 * "truncates the final bf16 rounding" (final=rz), "rounds every add toward zero" (round=rz),
 * "accumulates in bf16" (acc=bf16), "adds at P bits of internal precision, truncated"
 * (prec > 0), "adds bf16 partials in any order, judged within a bound, never bit for
 * bit" (bounded(S)), "truncates each leaf's rounding to fp32" (lround=rz), "adds bf16 split
 * values in any order, judged against every order" (atomic(S)). The order of the
 * adds is no departure. Returns how many (contracts §4.2
 * "Departures from the reference numerics"). */
int a4w4_contract_departures(const a4w4_contract *c, char *buf, size_t len);

/* The same over every rule of set (each departure named once; rules judging some shapes
 * only still name theirs). */
int a4w4_contract_set_departures(const a4w4_contract_set *set, char *buf, size_t len);

#endif
