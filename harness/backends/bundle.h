/* bundle.h — outputs produced elsewhere, stored as safetensors (contracts §7), compared
 * like any backend's; and the exporter that writes such output bundles.
 *
 * Output bundle directory DIR (selected as `--backend bundle:DIR`):
 *   DIR/<file name of case>.safetensors  one per case: a BF16 tensor "y" of shape [M, N]
 *                                        (row-major, the whole output of the case); optional
 *                                        __metadata__ "contract" (must equal the directory's),
 *                                        "format" ("a4w4-output/1"), "name" (or "case"), "M",
 *                                        "N", and the identity of the operands it was computed
 *                                        from: "seed", "matrix_hash", "tool_version" (copied
 *                                        from the operand bundle by the producer).
 *   DIR/manifest.json                    optional (python -m a4w4check.external writes it):
 *                                        {"format": "a4w4-outputs/1", "kernel", "contract",
 *                                        "matrix_hash", "tool_version", "cases" (written),
 *                                        "failed" ({case: why})}.
 *   DIR/contract.txt                     optional: one line, the accumulation contract
 *                                        (after any "#" comment lines: discover's file).
 * A directory is one run of one kernel over one matrix (backends/bundle_dir.h reads it and
 * refuses every conflict with one line, exit 2: a manifest and contract.txt naming different
 * contracts, a manifest of another tool version or matrix, a file the manifest does not list
 * as written, a file or manifest case that is no item of the run). The contract (contracts
 * §4.1, §4.2: "ordered(S)", "exact", "bounded", "bounded(S)" or "tree(key=value,...)"; a
 * shape-dependent rule file is given with `run --contract`) is the directory's: manifest.json's
 * or contract.txt's, else "ordered(1)". Every output a file holds is checked (the runner does
 * not sample cases a bundle backend is in). With a manifest exactly the cases it lists are
 * read: a case it lists as failed is a failing entry (the kernel failed on it), a case it
 * does not list, or lists but whose file is missing, is "skip" (no result: the verdict is
 * INCOMPLETE). Without a manifest a case without a file is "skip". A file whose metadata names
 * another matrix hash, seed, tool version, kernel (the manifest's) or case than the run's, and
 * a file that holds no comparable outputs (empty, truncated, not safetensors, no tensor y, y
 * not BF16 [M, N], a metadata contract other than the directory's), is refused: the entry is
 * no kernel mismatch ("refused: <file>: <rule>", never "0 of 0 checked differ") and the run
 * is bad input (exit 2), said in one line naming the file and the rule.
 * File name of a case: its name with every '/' replaced by "__" (case "golden/g1" is stored
 * as DIR/golden__g1.safetensors), so every case of a directory lives flat in DIR.
 * Producers: any tool that writes safetensors (Python: safetensors.torch.save_file({"y":
 * y.to(torch.bfloat16).contiguous()}, path)); or a4w4_bundle_write_outputs below. The directory's
 * file names and format string: bundle_dir.h. */
#ifndef A4W4_BACKEND_BUNDLE_H
#define A4W4_BACKEND_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* Write y [M, N] (bf16 bits, row-major: the whole output of the case) to
 * dir/<file name of case_name> as an output bundle (tensor "y", BF16, metadata format, case,
 * M, N), atomically (a4w4_st_write: temporary file, fsync, rename); dir is created when
 * missing (mkdir -p). The directory's contract.txt is not written (callers whose producer
 * keeps a contract other than ordered(1) write it themselves). Returns A4W4_ST_OK, or with one
 * line in err naming the path and the rule: A4W4_ST_BADINPUT (empty name, M or N zero, M*N
 * overflowing, path too long), A4W4_ST_IO (directory not creatable, write failure) or
 * A4W4_ST_NOMEM. */
a4w4_hstatus a4w4_bundle_write_outputs(const char *dir, const char *case_name, size_t M,
                                       size_t N, const uint16_t *y, char *err, size_t errlen);

#endif
