/* kept_outputs.h — `run --keep-outputs DIR`: the outputs of every GEMM entry of a generated
 * case, per backend, as output bundles (contracts §7: one BF16 y [M, N] per case; the files
 * `bundle:DIR` and `compare --outputs` read), so that two runs can later be compared output
 * by output (`compare A B`: bit-equal, differ, max ULP, the peers' criteria on the
 * difference). Layout: DIR/<backend dir>/<case>.safetensors, where the backend dir is the
 * backend name with every character outside [A-Za-z0-9._-] replaced by '_' and the file name
 * the case name with '/' as "__" (bundle.h). Each file's metadata: format "a4w4-outputs/1",
 * case, backend, contract, M, N, K, regime, seed, tool_version. Nothing here prints. */
#ifndef A4W4_KEPT_OUTPUTS_H
#define A4W4_KEPT_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "casefile.h"
#include "entry.h"

/* The most a --keep-outputs run writes unless told otherwise (bytes): 1 GiB. */
#define A4W4_KEEP_OUTPUTS_MAX_DEFAULT (1024.0 * 1024 * 1024)

/* Backend name b as its directory name under DIR (see the top) into buf [len]. */
void a4w4_kept_backend_dir(const char *b, char *buf, size_t len);

/* The bytes one kept file of an M x N output takes: 2 M N plus its header (at most 512). */
double a4w4_kept_file_bytes(size_t M, size_t N);

/* Write y (bf16 bits, row-major [c->M, c->N]) of backend b under contract as
 * dir/<backend dir>/<case>.safetensors (the backend's directory must exist). On success rel
 * [rellen] receives "<backend dir>/<case>.safetensors" and 0 is returned; else -1 with err
 * (the path and why: contracts §7's writer, fsutil's errors). */
int a4w4_kept_write(const char *dir, const char *b, const char *contract, const a4w4_case *c,
                    const uint16_t *y, char *rel, size_t rellen, char *err, size_t errlen);

/* The runner's side: entry e of backend b on case c keeps y (full [M, N] on the host) into
 * dir, recording the file in e->kept; with y NULL (sampled, on the device, not run) or a
 * write that fails, e->kept_why says why none was kept (why_not, or the write's error: a
 * kept-output failure never changes the entry's verdict). */
void a4w4_kept_entry(const char *dir, const char *b, const a4w4_case *c, const uint16_t *y,
                     const char *why_not, a4w4_entry_result *e);

#endif
