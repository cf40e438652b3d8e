/* registry.h — the table of backend types (backends/registry.c) and opening instances of
 * them. The engine sees only the interface in engine/backend.h. */
#ifndef A4W4_REGISTRY_H
#define A4W4_REGISTRY_H

#include "backend.h"
#include "devjudge.h"
#include "status.h"

/* The registered types and their count. */
const a4w4_backend_type *const *a4w4_backend_types(size_t *count);

/* Open "name" or "name:ARG" into b. Returns A4W4_ST_OK; A4W4_ST_BADINPUT for an unknown
 * name, a missing/extra ARG or a failed prepare; A4W4_ST_NOGPU when the type needs a GPU and
 * none is usable, or for a hip-* name in a build without GPU support (err says so). */
a4w4_hstatus a4w4_backend_open(const char *spec, a4w4_backend *b, char *err, size_t errlen);
/* Open type t (looked up elsewhere, e.g. the selftest's mutant table) with arg (NULL when
 * none) into b, exactly as a4w4_backend_open does after its name lookup; b->name becomes
 * "name" or "name:ARG". Same returns (A4W4_ST_BADINPUT for a missing/extra ARG or a failed
 * prepare; A4W4_ST_NOGPU for a GPU type without a usable GPU). */
a4w4_hstatus a4w4_backend_open_type(const a4w4_backend_type *t, const char *arg,
                                    a4w4_backend *b, char *err, size_t errlen);
void a4w4_backend_close(a4w4_backend *b);

/* Judge b by set instead of the contract it declares (`run --contract B=...`, contracts §4.2):
 * b's rules become a copy of set, source names where they came from (a file, or NULL for a
 * text), b->declared keeps the declared text. A4W4_ST_OK; A4W4_ST_BADINPUT for a backend
 * without GEMM outputs (layout and quantizer types); A4W4_ST_NOMEM. err: one line. */
a4w4_hstatus a4w4_backend_override_contracts(a4w4_backend *b, const a4w4_contract_set *set,
                                             const char *source, char *err, size_t errlen);

/* The default selection: every type that needs no ARG and is available here; the others'
 * names and reasons go to skipped (one "name: why" per line, may be NULL). Returns count. */
size_t a4w4_backend_defaults(a4w4_backend *out, size_t max, char *skipped, size_t skippedlen);

/* Backend types defined in the files of harness/backends/. */
extern const a4w4_backend_type a4w4_backend_cpu_asm, a4w4_backend_cpu_fallback,
    a4w4_backend_bundle, a4w4_backend_plugin;

/* Plugin isolation (plugin.c, engine/isolate.h): with on = 1 (the default) every call into a
 * plugin's code runs in a child process; a crash fails that entry (A4W4_RUN_CRASHED) and a
 * call past its deadline is killed (A4W4_RUN_TIMEOUT). timeout_s: seconds per call, 0 none,
 * < 0 automatic (a4w4_plugin_timeout). on = 0: the plugin runs in this process (the old path:
 * a crash ends the harness). Set before opening plugin backends; not thread-safe. */
void a4w4_plugin_isolation(int on, double timeout_s);

/* The deadline of one gemm call computing nrows x ncols outputs over K, in seconds: the set
 * timeout, or automatically A4W4_PLUGIN_TIMEOUT_BASE_S plus 1 s per 1e9 multiply-adds (a
 * scalar CPU kernel's pace: a full M=4096 N=4096 K=16384 case gets 335 s). */
#define A4W4_PLUGIN_TIMEOUT_BASE_S 60.0
double a4w4_plugin_timeout(size_t nrows, size_t ncols, size_t K);

/* The device judge of this build (engine/devjudge.h) when it can judge here: a GPU build, a
 * usable device and the GPU judge library; else NULL with why (one line). */
const a4w4_devjudge *a4w4_backend_devjudge(char *why, size_t whylen);

#ifdef A4W4_HAVE_GPU
/* The HIP backends (hip.c), built when A4W4_GPU != off; null-terminated list. */
extern const a4w4_backend_type *const a4w4_backend_hip_types[];
/* Device-to-device copy bandwidth in GB/s (bytes read + written per second), median of reps
 * timed copies of a 1 GiB buffer; 0 when it cannot be measured. */
double a4w4_hip_copy_bandwidth_gbs(int reps);
/* bench's GPU rows (backends/hip/bench_hip.c): the GPU judge's passes on case d (the ordered
 * pass for ordered(1) and ordered(S); ordered(1) with the exact pass and the prover;
 * everything a case with ordered(S) and bounded(S) backends needs), and cuBLAS's bf16 GEMM of
 * shape M x N x K (NVIDIA builds with cuBLAS); medians in ms. 0, or nonzero with why. */
int a4w4_hip_bench_judge(const a4w4_case_data *d, unsigned S, int reps, double *ordered_ms,
                         double *exact_ms, double *all_ms, char *why, size_t whylen);
int a4w4_hip_bench_cublas(size_t M, size_t N, size_t K, int reps, double *ms, char *why,
                          size_t whylen);
/* The GPU judge of backends/hip/devjudge_hip.c, or NULL with why (no device, no judge). */
const a4w4_devjudge *a4w4_hip_devjudge(char *why, size_t whylen);
#endif

#endif
