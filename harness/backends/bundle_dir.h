/* bundle_dir.h — what an output bundle directory (bundle.h) says about itself, read once when
 * `bundle:DIR` is opened and checked for conflicts: a bundle directory is one run of one
 * kernel over one matrix, so everything in it must agree.
 *
 * Read: DIR/contract.txt (one contract line after any blank or "#" comment lines, such as the
 * "# discovered by" line of discover's file; optional), DIR/manifest.json (optional; python -m
 * a4w4check.external writes it: {"format": "a4w4-outputs/1", "kernel", "contract",
 * "e8m0_code0" (optional: "2^-127" or "2^-126", the reading of E8M0 code 0 the kernel
 * declares, contracts §1), "matrix_hash", "tool_version", "cases": [names written], "failed":
 * {name: why}}) and the
 * names of DIR's *.safetensors files. Refused (one line naming the file and the rule):
 *   - a manifest that breaks its format (fields of the wrong type, "cases" missing, a case
 *     named twice or both written and failed);
 *   - a manifest whose tool_version is not this a4w4check's (outputs of operands another
 *     version exported);
 *   - contract.txt and the manifest naming different contracts (contracts §4.1; plain
 *     "bounded" is bounded(1)): neither overrides the other;
 *   - with a manifest, a *.safetensors file it does not list as written (a stale output of an
 *     earlier run, or of a case the kernel failed on);
 *   - against the run's items (a4w4_bundle_dir_check_items): a manifest of another matrix
 *     hash, a manifest case that is no item of the run, and (with or without a manifest) a
 *     file that is the output of no item of the run.
 * Files are found by case name: a4w4_bundle_file_name below ('/' -> "__", then ".safetensors"). */
#ifndef A4W4_BUNDLE_DIR_H
#define A4W4_BUNDLE_DIR_H

#include <stddef.h>

#include "a4w4_contract.h"
#include "a4w4_tree.h"

/* The format string the exporter writes to __metadata__ "format". */
#define A4W4_BUNDLE_OUTPUTS_FORMAT "a4w4-outputs/1"

/* File name (no directory) of case_name's output bundle: '/' -> "__", then ".safetensors".
 * Returns 0, or -1 when it does not fit in len or the name is empty. */
int a4w4_bundle_file_name(const char *case_name, char *buf, size_t len);

typedef struct {
    char *name; /* case name */
    char *why;  /* manifest's failure text (failed cases), else NULL */
} a4w4_bundle_case;

typedef struct {
    char *dir;
    char contract[A4W4_CONTRACT_MAX]; /* the directory's contract; "ordered(1)" when none is named */
    int has_manifest;          /* DIR/manifest.json was read */
    int code0;                 /* manifest's e8m0_code0 as A4W4_CODE0_* (engine/backend.h;
                                  0: none declared) */
    char kernel[128];          /* manifest's kernel ("" none) */
    char hash[40], version[40]; /* manifest's matrix_hash, tool_version ("" none) */
    a4w4_bundle_case *cases;   /* manifest's cases, sorted by name */
    size_t ncases;
    a4w4_bundle_case *failed;  /* manifest's failed cases, sorted by name */
    size_t nfailed;
    char **files;              /* DIR's *.safetensors file names, sorted */
    size_t nfiles;
} a4w4_bundle_dir;

/* Read and check directory dir into *d (see the top). 0, or -1 with err ("bundle <path>:
 * <rule>", one line; text from the files is quoted, a4w4_quote.h). *d is valid for
 * a4w4_bundle_dir_free either way. */
int a4w4_bundle_dir_read(const char *dir, a4w4_bundle_dir *d, char *err, size_t errlen);

/* The manifest's entry for case_name among its written cases (listed) or failed ones;
 * NULL when it names it in neither (or there is no manifest). */
const a4w4_bundle_case *a4w4_bundle_dir_listed(const a4w4_bundle_dir *d, const char *case_name);
const a4w4_bundle_case *a4w4_bundle_dir_failed(const a4w4_bundle_dir *d, const char *case_name);

/* Check d against a run: matrix_hash (NULL: not checked) and the names of every item of the
 * run's matrix (items[0..n), all shards). 0, or -1 with err naming the first conflict. */
int a4w4_bundle_dir_check_items(const a4w4_bundle_dir *d, const char *matrix_hash,
                                const char *const *items, size_t n, char *err, size_t errlen);

void a4w4_bundle_dir_free(a4w4_bundle_dir *d);

#endif
