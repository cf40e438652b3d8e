/* a4w4check_api.h — the judge as a library (liba4w4check, shared and static; pkg-config
 * a4w4check): generate a case's operands exactly as `a4w4check run` does, judge a kernel's
 * bf16 outputs against a contract as `run` judges a backend's, and save a failing case as a
 * bundle that `a4w4check verify` and `a4w4check run --bundle` read.
 *
 * Plain C11, no printing, no exit, no global state: every function returns an
 * a4w4check_status and, on an error, one line naming the input and the rule in err (errlen
 * bytes, always NUL-terminated when errlen > 0). Safe to call from several threads on
 * different handles.
 *
 * Units and layouts. Every operand is bytes, row-major (contracts §3 for the others):
 *   a_fp4 [M, K/2]    fp4x2 (E2M1 codes, element 2i in the low nibble; contracts §1)
 *   a_scale [M, K/32] E8M0 codes, one per 1x32 block of a row (contracts §1, §2)
 *   w_fp4 [N, K/2], w_scale [N, K/32]: the same for W; the GEMM is y = A x W^T
 *   a_scale_shuffled [rows256(M), cols8(K/32)]  contracts §3.3 (pad fills 0x7F)
 *   w_fp4_shuffled [N, K/2]                      contracts §3.1 (N % 16 == 0, K % 64 == 0)
 *   w_scale_swizzled [N, K/32]                   contracts §3.2 (N % 32 == 0, K/32 % 8 == 0)
 * Outputs y [M, N] are bf16 bits (uint16_t), row-major. */
#ifndef A4W4CHECK_API_H
#define A4W4CHECK_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API's version: bumped on any change of a declaration below. A caller built against
 * version V checks a4w4check_api_version() == V before the first call; it never fails
 * (docs/api.md). */
#define A4W4CHECK_API_VERSION 1
int a4w4check_api_version(void);

/* The tool version the library was built from ("0.4.0": `a4w4check --version`'s, a static
 * NUL-terminated string the caller must not free); it never fails (docs/api.md). */
const char *a4w4check_tool_version(void);

typedef enum {
    A4W4CHECK_OK = 0,
    A4W4CHECK_EINVAL = 2, /* bad input: a shape, regime, contract, tensor or argument (err) */
    A4W4CHECK_ENOMEM = 3, /* out of memory (err) */
    A4W4CHECK_EIO = 4     /* a file could not be written (err; no partial file is left) */
} a4w4check_status;

/* One case, as a line of a case file (docs/cases.md): name and seed key the generator (every
 * row of A and W comes from its own stream keyed by seed, name, tensor and row), regime is
 * "exact", "normal", "normal:<scale mode>", "wide", "special", "code0", "tiny" or "range".
 * M, N, K >= 1, K % 32 == 0, within the shape rule (each <= 2^22, (M + N) * K / 2 bytes of
 * operands <= 64 GiB). */
typedef struct {
    const char *name;
    size_t M, N, K;
    const char *regime;
    uint64_t seed;
} a4w4check_case;

/* The generated operands of one case (opaque). */
typedef struct a4w4check_operands a4w4check_operands;

/* The tensors of a4w4check_operands (layouts above). */
typedef enum {
    A4W4CHECK_A_FP4 = 0,
    A4W4CHECK_A_SCALE = 1,
    A4W4CHECK_W_FP4 = 2,
    A4W4CHECK_W_SCALE = 3,
    A4W4CHECK_A_SCALE_SHUFFLED = 4,
    A4W4CHECK_W_FP4_SHUFFLED = 5,
    A4W4CHECK_W_SCALE_SWIZZLED = 6,
    A4W4CHECK_NTENSORS = 7
} a4w4check_tensor;

/* Generate case c's operands, every row, byte for byte as `a4w4check run` generates them
 * (contracts §3 layouts derived from the row-major ones). *out receives a handle to free with
 * a4w4check_operands_free. A4W4CHECK_OK; A4W4CHECK_EINVAL (a NULL argument, an empty or
 * over-long name (95 bytes), a shape breaking the rule above, an unknown regime);
 * A4W4CHECK_ENOMEM. */
a4w4check_status a4w4check_generate(const a4w4check_case *c, a4w4check_operands **out,
                                    char *err, size_t errlen);

/* Tensor t of o: its bytes (owned by o, valid until a4w4check_operands_free), rows and cols
 * into shape[0], shape[1]. NULL with shape {0, 0} when the shape does not allow that layout
 * (w_fp4_shuffled, w_scale_swizzled: contracts §3.1, §3.2) or t is out of range. */
const uint8_t *a4w4check_operands_tensor(const a4w4check_operands *o, a4w4check_tensor t,
                                         size_t shape[2]);

/* The name of tensor t ("a_fp4", ..., "w_scale_swizzled": the layouts above, contracts §3; as
 * operand bundles name them), a static string; NULL when t is out of range. */
const char *a4w4check_tensor_name(a4w4check_tensor t);

/* Free o (from a4w4check_generate) and every tensor of it (the pointers from
 * a4w4check_operands_tensor die with it; contracts §3 layouts). NULL: nothing is done. It
 * never fails. */
void a4w4check_operands_free(a4w4check_operands *o);

/* How the kernel reads E8M0 scale code 0 (contracts §1). BOTH: not declared, the outputs are
 * judged under both readings (a match of one only is "ambiguous", never a pass). */
typedef enum {
    A4W4CHECK_CODE0_BOTH = 0,
    A4W4CHECK_CODE0_2M127 = 1, /* 2^-127, the OCP reading */
    A4W4CHECK_CODE0_2M126 = 2  /* 2^-126, the driver's reading */
} a4w4check_code0;

typedef enum {
    A4W4CHECK_PASS = 0,
    A4W4CHECK_FAIL = 1,
    A4W4CHECK_NA = 2,
    A4W4CHECK_SKIP = 3,
    A4W4CHECK_AMBIGUOUS = 4
} a4w4check_verdict_kind;

#define A4W4CHECK_MAX_FIRST 5

/* One mismatching output: y[row * N + col] was got, the contract's oracle expected. */
typedef struct {
    size_t row, col;
    uint16_t got, expected;
} a4w4check_mismatch;

/* The verdict on one case's outputs, as `run` records a backend's entry (results.json's
 * fields of the same names). outputs = M * N; checked + (outputs - checked) = every output:
 * judged_bit_exact + judged_in_bound + not_judged == outputs. */
typedef struct {
    a4w4check_verdict_kind verdict;
    char verdict_name[16];   /* "pass", "fail", "n/a", "skip", "ambiguous" */
    char contract[1024];     /* the contract applied, canonical text (contracts §4.2) */
    char departures[256];    /* its departures from the reference numerics ("" none;
                                contracts §4.2 "Departures from the reference numerics") */
    size_t outputs, checked, mismatches, unwritten;
    size_t judged_bit_exact, judged_in_bound, not_judged;
    unsigned max_ulp;        /* largest bf16 ULP distance; UINT_MAX: NaN against a number */
    size_t nfirst;           /* first mismatches (row-major order of their finding) */
    a4w4check_mismatch first[A4W4CHECK_MAX_FIRST];
    char signature[384];     /* a failing case's mismatch-map hypothesis ("" none) */
    char signature_class[24];
    char note[768];          /* why n/a, skip or fail, or extra context ("" none) */
    char line[1024];         /* the verdict as `verify` prints it: one line */
} a4w4check_verdict;

/* What to judge against. contract: every text `run --contract` takes as one contract
 * ("exact", "ordered(S)", "bounded", "bounded(S)", "tree(key=value,...)"; contracts §4.1,
 * §4.2), or NULL: none declared, judged as exact inside the exact regime only and recorded
 * "undeclared". backend: the name the verdict and a saved bundle record (NULL: "api"). */
typedef struct {
    const char *contract;
    a4w4check_code0 code0;
    const char *backend;
} a4w4check_judge_opts;

/* Judge y [M, N] (bf16 bits, row-major) on o's operands as `run` judges a backend's outputs
 * on the generated case (every output; contracts §4.1: exact and ordered(S) and tree
 * contracts bit for bit, exact inside the exact regime, bounded(S) within its bound; NaN
 * blocks; E8M0 code 0 under opts->code0) into *v. y_len: the elements y holds (must be
 * M * N). A4W4CHECK_OK (the verdict in *v, whatever it is); A4W4CHECK_EINVAL (a NULL
 * argument, y_len wrong, a contract that does not parse or does not apply to K: err names
 * the text and the rule); A4W4CHECK_ENOMEM. */
a4w4check_status a4w4check_judge(const a4w4check_operands *o, const uint16_t *y, size_t y_len,
                                 const a4w4check_judge_opts *opts, a4w4check_verdict *v,
                                 char *err, size_t errlen);

/* Save o's case with outputs y as a failing-case bundle (the `run --save-failing` format,
 * engine/failing.h: every operand layout (contracts §3), y_got, y_expected (the contract's
 * oracle, contracts §4.1, E8M0 code 0 read as 2^-127; exact for bounded(S)), y_exact,
 * backend, contract, mismatches, signature) into directory dir (created when missing), for
 * `a4w4check verify FILE` and `a4w4check run --bundle FILE --backend B` (`shrink` takes the
 * case's case-file line instead). v: the verdict of a4w4check_judge on the same o, y and
 * opts. path receives the file's path (pathlen bytes; NULL or 0: not wanted).
 * A4W4CHECK_OK; A4W4CHECK_EINVAL (NULL arguments, y_len wrong, bad contract, or a path
 * longer than pathlen: the file is saved, its path not returned); A4W4CHECK_EIO (dir cannot
 * be made or written; no partial file); A4W4CHECK_ENOMEM. */
a4w4check_status a4w4check_save_failing(const a4w4check_operands *o, const uint16_t *y,
                                        size_t y_len, const a4w4check_judge_opts *opts,
                                        const a4w4check_verdict *v, const char *dir,
                                        char *path, size_t pathlen, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
