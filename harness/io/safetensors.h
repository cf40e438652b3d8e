/* safetensors.h — strict reader and atomic writer for case bundles (contracts §7).
 *
 * File layout (safetensors): an 8-byte little-endian header length n, n bytes of JSON
 * header (an object starting with '{', optionally padded with trailing spaces), then the
 * data section. The header maps each tensor name to {"dtype", "shape", "data_offsets":
 * [begin, end]} (byte offsets relative to the start of the data section, end exclusive),
 * plus an optional "__metadata__" object of string values.
 *
 * Dtypes: U8, BF16, F16, F32, F8_E8M0 (one byte per element) and F4 (4 bits per element,
 * as the safetensors format counts them: a shape counts E2M1 elements, two per byte, so an F4
 * tensor [R, C] holds R*C/2 bytes and its element count must be even; contracts §7).
 * bf16/f16/f32 data is little-endian raw bits. Consumers of packed bytes read U8, F8_E8M0
 * and F4 tensors alike through a4w4_st_packed_2d.
 *
 * This module prints nothing; every failure returns a status (io/status.h) with one line in err
 * of the form "<path>: <rule broken>" (truncated to errlen; err may be NULL when errlen is 0):
 * A4W4_ST_BADINPUT (a broken rule, a NULL argument), A4W4_ST_IO (the file system refused)
 * or A4W4_ST_NOMEM. */
#ifndef A4W4_SAFETENSORS_H
#define A4W4_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define A4W4_ST_MAX_DIMS 8

typedef enum {
    A4W4_DT_U8,
    A4W4_DT_BF16,
    A4W4_DT_F16,
    A4W4_DT_F32,
    A4W4_DT_F8_E8M0, /* E8M0 scale codes, one byte each */
    A4W4_DT_F4       /* E2M1 codes, 4 bits each, two per byte (fp4x2: element 2i low nibble) */
} a4w4_st_dtype;

/* One tensor of a loaded file. shape[0..ndim-1] in elements (ndim 0 = scalar, one element);
 * nbytes = product(shape) * dtype size = end - begin. data points into the file's buffer
 * (valid until a4w4_st_free). The data section starts 64-byte aligned in memory, so a
 * tensor whose begin offset is a multiple of its dtype size (always true for files written
 * by a4w4_st_write and by the Python safetensors library) is naturally aligned. */
typedef struct {
    char *name;
    a4w4_st_dtype dtype;
    int ndim;
    size_t shape[A4W4_ST_MAX_DIMS]; /* in elements (F4: 4-bit elements) */
    size_t nbytes;
    const uint8_t *data;
} a4w4_st_tensor;

/* A loaded file. buf holds the whole file (size bytes); tensors[] in header order;
 * meta_keys[i] / meta_vals[i] in header order (all "__metadata__" entries, known or not).
 * data_start = 8 + header length (file offset of the data section), data_len = size -
 * data_start. alloc_ is private. A zero-initialized struct is a valid empty file. */
typedef struct {
    char *path;
    uint8_t *buf;
    size_t size;
    a4w4_st_tensor *tensors;
    size_t ntensors;
    char **meta_keys;
    char **meta_vals;
    size_t nmeta;
    size_t data_start;
    size_t data_len;
    void *alloc_;
} a4w4_st_file;

/* Read the whole file at path and validate it (contracts §7 + the safetensors format rules):
 *   file at least 8 bytes; header length n in [1, size - 8]; header has no NUL byte, is one
 *   valid JSON object with only JSON whitespace after it and starts with '{'; each tensor
 *   entry is an object with dtype (known string), shape (array of <= 8 non-negative
 *   integers <= 2^53, product * dtype size not overflowing size_t) and data_offsets
 *   ([begin, end], non-negative integers, begin <= end <= data section length, end - begin
 *   = product(shape) * dtype size); no key appears twice in any object (duplicate tensor
 *   names included); non-empty tensors do not overlap; "__metadata__" is an object whose
 *   values are all strings. Unknown keys inside a tensor entry are ignored. Gaps between
 *   tensors and unused bytes at the end of the data section are allowed.
 * On success fills *f and returns A4W4_ST_OK; on failure returns A4W4_ST_BADINPUT (a rule
 * broken), A4W4_ST_IO (cannot open or read) or A4W4_ST_NOMEM, leaves *f zeroed (safe to pass
 * to a4w4_st_free) and writes "<path>: <rule>" to err. */
a4w4_hstatus a4w4_st_load(const char *path, a4w4_st_file *f, char *err, size_t errlen);

/* Same as a4w4_st_load, from size bytes at data (copied; the caller keeps data). name is
 * used in messages and stored as f->path. */
a4w4_hstatus a4w4_st_load_mem(const char *name, const void *data, size_t size, a4w4_st_file *f,
                              char *err, size_t errlen);

/* Tensor by exact (case-sensitive) name, or NULL. */
const a4w4_st_tensor *a4w4_st_find(const a4w4_st_file *f, const char *name);

/* "__metadata__" value for key (case-sensitive), or NULL if absent. */
const char *a4w4_st_meta(const a4w4_st_file *f, const char *key);

/* Release everything a4w4_st_load allocated and zero *f. NULL and zeroed structs are fine. */
void a4w4_st_free(a4w4_st_file *f);

/* Bits per element: 4 (F4), 8 (U8, F8_E8M0), 16 (BF16, F16), 32 (F32); 0 outside the enum. */
size_t a4w4_st_dtype_bits(a4w4_st_dtype dtype);

/* Bytes per element for whole-byte dtypes (bits / 8); 0 for F4 and outside the enum. */
size_t a4w4_st_dtype_size(a4w4_st_dtype dtype);

/* Canonical header name: "U8", "BF16", "F16", "F32", "F8_E8M0", "F4"; "?" outside the enum. */
const char *a4w4_st_dtype_name(a4w4_st_dtype dtype);

/* The packed-byte view of a 2-D tensor of U8, F8_E8M0 or F4: *rows rows of *cols bytes (an F4
 * row of C elements is C/2 bytes). Returns 0, or -1 (other dtype, not 2-D, or an F4 row with
 * an odd element count). */
int a4w4_st_packed_2d(const a4w4_st_tensor *t, size_t *rows, size_t *cols);

/* Writer input. shape as in a4w4_st_tensor; data holds product(shape) * dtype size bytes
 * (may be NULL only when that is 0). nbytes is an optional cross-check: 0 = not checked,
 * otherwise it must equal product(shape) * dtype size or the write fails. */
typedef struct {
    const char *name;
    a4w4_st_dtype dtype;
    int ndim;
    size_t shape[A4W4_ST_MAX_DIMS];
    const void *data;
    size_t nbytes;
} a4w4_st_tensor_in;

/* Write n tensors and nmeta metadata strings to path as a safetensors file (contracts §7).
 * Validates everything first (names non-empty, unique, not "__metadata__"; dtype known;
 * 0 <= ndim <= 8; sizes consistent and not overflowing; metadata keys unique, keys and
 * values non-NULL). Layout: tensors sorted by dtype size, largest first (input order kept
 * within a size), packed without gaps; header padded with spaces to a multiple of 8 bytes;
 * "__metadata__" omitted when nmeta is 0. The bytes go to path.tmp.XXXXXX in the same
 * directory (created with mode 0666 & ~umask), which is fsynced and renamed over path;
 * the directory is then fsynced (best effort). On any error the temp file is removed and
 * an existing file at path is left untouched. Returns A4W4_ST_OK, or with err
 * A4W4_ST_BADINPUT (invalid inputs), A4W4_ST_IO (the write failed) or A4W4_ST_NOMEM. */
a4w4_hstatus a4w4_st_write(const char *path, const a4w4_st_tensor_in *t, size_t n,
                           const char *const *meta_keys, const char *const *meta_vals,
                           size_t nmeta, char *err, size_t errlen);

/* Write size raw bytes to path with the same temp-file / fsync / rename / cleanup rules
 * as a4w4_st_write (no validation of the bytes). Same returns. */
a4w4_hstatus a4w4_st_write_raw(const char *path, const void *data, size_t size, char *err,
                               size_t errlen);

#endif
