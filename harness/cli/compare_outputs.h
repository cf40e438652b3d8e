/* compare_outputs.h — `compare --outputs BASE_DIR CAND_DIR`: parity of two paths from their
 * outputs. Two output bundle directories (backends/bundle.h: one BF16 y [M, N] per case, as
 * `python -m a4w4check.external` writes them) of the same operands are compared case by
 * case: bit-equal outputs, differing outputs, the largest bf16 ULP distance, and the peers'
 * tolerance criteria on the difference with BASE as reference (engine/criteria.h
 * a4w4_parity_diff, contracts §4). Results documents hold output hashes only; the outputs
 * themselves are in such directories. */
#ifndef A4W4_COMPARE_OUTPUTS_H
#define A4W4_COMPARE_OUTPUTS_H

/* Compare output directories base and cand; print the Markdown table on standard output, or
 * with out (non-NULL) write out/compare.md and out/compare.json. Returns the exit code: 0
 * every case of both bit-equal; 1 some case differs; 2 bad input (a directory that is no
 * output bundle directory, a file without a BF16 [M, N] y, the same case of two shapes or of
 * other operands: another matrix hash or seed); 4 a file could not be written; 5 nothing
 * differs but a case is in one directory only (or in neither: no case at all). */
int a4w4_compare_outputs(const char *base, const char *cand, const char *out, int quiet);

#endif
