/* json_mutator.h — structure-aware mutations of a parsed JSON tree (cJSON), for the targets
 * whose input is or contains JSON: the results-document loader and the safetensors header.
 *
 * One call picks a node of the tree and changes it: replace it by an interesting number text
 * (kept verbatim: 2^53 + 1, 1e400, -0, ...), a dictionary string, a boolean, null, an empty
 * object or array, or a copy of another node of the tree; nudge a number; change a string
 * (dictionary or libFuzzer's byte mutator); in an object delete, duplicate (same key: a
 * duplicate key), add (dictionary key) or rename a member; in an array delete, duplicate or
 * append an element. Keys and strings come from the caller's dictionary (the results target
 * takes them from the embedded results schema). */
#ifndef A4W4_JSON_MUTATOR_H
#define A4W4_JSON_MUTATOR_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "fuzz_common.h"

typedef struct {
    const char *const *keys; /* object keys worth trying */
    size_t nkeys;
    const char *const *strings; /* string values worth trying */
    size_t nstrings;
} fz_json_dict;

/* Change one node under root (root itself is never replaced). d may have empty lists. */
void fz_json_mutate(cJSON *root, fz_rng *r, const fz_json_dict *d);

/* A number node holding text verbatim (cJSON raw), e.g. "9007199254740993". */
cJSON *fz_json_raw_number(fz_rng *r);

/* Print the tree (unformatted, or now and then formatted) into data[0..max_size); returns
 * the length, or 0 when it does not fit. */
size_t fz_json_print(const cJSON *root, fz_rng *r, uint8_t *data, size_t max_size);

#endif
