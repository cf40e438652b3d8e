/* entry.h — results entries (one per case x backend, fields as in io/results.h) built
 * from comparisons. */
#ifndef A4W4_ENTRY_H
#define A4W4_ENTRY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "check.h"

/* A new entry object with the identifying fields; add it to an array with cJSON. */
cJSON *a4w4_entry_new(const char *name, size_t M, size_t N, size_t K, const char *regime,
                      unsigned long long seed, const char *backend, const char *contract);

/* Fill verdict, counts and first mismatch from a check. */
void a4w4_entry_set_check(cJSON *e, const a4w4_check *c);

#endif
