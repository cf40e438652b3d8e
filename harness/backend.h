/* backend.h — the table every system under test registers in (STYLE: like BLIS's context).
 * The runner walks it; each backend names the accumulation contract it keeps (SPEC §4.1). */
#ifndef A4W4_BACKEND_H
#define A4W4_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "gen.h"

typedef struct {
    const char *name;     /* "cpu-asm", "cpu-fallback", ... */
    const char *what;     /* one line: what it runs */
    const char *contract; /* "ordered(1)", "ordered(S)", "bounded" */
    /* Run case d on the outputs rows x cols (NULL = all), writing bf16 bits to y
     * [nrows, ncols]. Returns A4W4_OK, A4W4_EUNSUPPORTED (not applicable to this shape: the
     * verdict is n/a, why names the rule) or another a4w4_status (an error). */
    int (*run)(const a4w4_case_data *d, const size_t *rows, size_t nrows, const size_t *cols,
               size_t ncols, uint16_t *y, char *why, size_t whylen);
} a4w4_backend;

/* The registered backends and their count. */
const a4w4_backend *a4w4_backends(size_t *count);
/* Look a backend up by name; NULL when unknown. */
const a4w4_backend *a4w4_backend_find(const char *name);

#endif
