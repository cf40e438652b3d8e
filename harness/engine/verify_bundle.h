/* verify_bundle.h — recompute every tensor of a case or quantization bundle (contracts §7) with
 * the ref/ oracles and the CPU systems under test, one a4w4_check per tensor. */
#ifndef A4W4_VERIFY_BUNDLE_H
#define A4W4_VERIFY_BUNDLE_H

#include <stddef.h>

#include "check.h"

typedef struct {
    a4w4_check *items;
    size_t n, cap;
} a4w4_check_list;

/* Append a zeroed check and return it (NULL when out of memory). */
a4w4_check *a4w4_check_list_add(a4w4_check_list *l);
void a4w4_check_list_free(a4w4_check_list *l);

/* Verify one bundle. Returns 0 when every check passes or is N/A, 1 on any mismatch, 2 on bad
 * input (err holds one line naming the file and the rule: malformed safetensors, unknown
 * format, missing metadata, a tensor the format or metadata promises but the file lacks,
 * shapes disagreeing with M/N/K). Checks done so far stay in `out` whatever the result. */
/* dims (optional, 3 entries) receives M, N, K of a case bundle (rows, 0, K of a
 * quantization bundle; zeros when unreadable). */
int a4w4_verify_bundle(const char *path, a4w4_check_list *out, size_t *dims, char *err,
                       size_t errlen);

#endif
