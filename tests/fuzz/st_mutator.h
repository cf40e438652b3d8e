/* st_mutator.h — structure-aware libFuzzer mutator for safetensors images.
 *
 * When the input has a valid 8-byte length and a JSON object header, one to three of these
 * are applied to the parsed header: set a tensor's dtype (known, alias, unknown, not a
 * string); set, add or drop a shape dimension (small values, 0, 2^53 + 1, negatives,
 * fractions, huge exponents, non-numbers); set data_offsets (past the data section, reversed,
 * overlapping another tensor, wrong arity); repack every tensor consistently (offsets back to
 * back, data section sized to fit: reaches the accept path with mutated shapes); add a new
 * consistent tensor; delete, rename (to "__metadata__", "", another tensor's name) or
 * duplicate a tensor; add, duplicate or break __metadata__ entries; add or drop entry keys;
 * or a generic JSON mutation (json_mutator.h). The header is printed back, padded with
 * spaces (sometimes other bytes), its length rewritten, and the data section kept (resized
 * when asked). Otherwise (and one time in eight) libFuzzer's byte mutator runs on the whole
 * image or on the header text alone, with the length fixed up. */
#ifndef A4W4_ST_MUTATOR_H
#define A4W4_ST_MUTATOR_H

#include <stddef.h>
#include <stdint.h>

/* Mutate data[0..size) in place into at most max_size bytes; returns the new size. */
size_t fz_st_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#endif
