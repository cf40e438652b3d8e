/* fuzz_safetensors.c — libFuzzer target for the safetensors reader (a4w4_st_load_mem,
 * harness/io/safetensors.h; contracts §7).
 *
 * Input: a safetensors file image. The custom mutator keeps the 8-byte length + JSON header
 * + data section structure and mutates the header's fields (dtype, shape, data_offsets,
 * __metadata__, tensor names, unknown keys; st_mutator.c), so most inputs reach the
 * tensor-entry checks instead of dying at the length or the JSON syntax.
 *
 * Checked on every input: an accepted file keeps every promise of safetensors.h (sizes, F4
 * counting 4-bit elements with an even count, the packed-byte view of 2-D U8 / F8_E8M0 / F4
 * tensors, offsets inside the data section, no overlap, unique names, lookups, the buffer an
 * exact copy) and writes back (a4w4_st_write) to a file the reader accepts with the same
 * tensors and metadata; a refused one returns A4W4_ST_BADINPUT (or A4W4_ST_NOMEM), leaves the
 * struct zeroed and one error line naming the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "safetensors.h"
#include "st_mutator.h"

#define TARGET "safetensors"
#define NAME "fuzz.safetensors"

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* The packed-byte view (a4w4_st_packed_2d) of tensor t: offered exactly for 2-D U8, F8_E8M0
 * and F4 tensors (F4: an even row length) and covering the tensor's bytes. */
static void check_packed(const a4w4_st_tensor *t)
{
    size_t rows = 0, cols = 0;
    int bytes = t->dtype == A4W4_DT_U8 || t->dtype == A4W4_DT_F8_E8M0 || t->dtype == A4W4_DT_F4;
    int want = t->ndim == 2 && bytes && (t->dtype != A4W4_DT_F4 || t->shape[1] % 2 == 0);
    int rc = a4w4_st_packed_2d(t, &rows, &cols);
    fz_check((rc == 0) == want, TARGET, "tensor '%s': packed view %d, expected %s", t->name, rc,
             want ? "one" : "a refusal");
    if (want)
        fz_check(rows == t->shape[0] &&
                     cols == (t->dtype == A4W4_DT_F4 ? t->shape[1] / 2 : t->shape[1]) &&
                     rows * cols == t->nbytes,
                 TARGET, "tensor '%s': packed view %zu x %zu of %zu bytes", t->name, rows, cols,
                 t->nbytes);
}

/* Tensor i keeps the reader's promises: size from shape and dtype (F4: 4 bits per element, an
 * even count), data inside the data section, found by name, no overlap with earlier ones. */
static void check_tensor(const a4w4_st_file *f, size_t i)
{
    const a4w4_st_tensor *t = &f->tensors[i];
    size_t bits = a4w4_st_dtype_bits(t->dtype), count = 1;
    fz_check(t->name && bits && t->ndim >= 0 && t->ndim <= A4W4_ST_MAX_DIMS, TARGET,
             "tensor %zu: bad name, dtype or ndim %d", i, t->ndim);
    fz_check(a4w4_st_dtype_size(t->dtype) == (bits == 4 ? 0 : bits / 8), TARGET,
             "tensor %zu: dtype size disagrees with its bits", i);
    for (int d = 0; d < t->ndim; d++) {
        fz_check(t->shape[d] <= ((size_t)1 << 53), TARGET, "tensor %zu: dim above 2^53", i);
        fz_check(!t->shape[d] || count <= SIZE_MAX / t->shape[d], TARGET,
                 "tensor %zu: count overflow", i);
        count *= t->shape[d];
    }
    fz_check(bits % 8 == 0 || count % 2 == 0, TARGET, "tensor '%s': odd F4 count %zu accepted",
             t->name, count);
    fz_check(count <= SIZE_MAX / bits && count * bits / 8 == t->nbytes, TARGET,
             "tensor '%s': nbytes %zu is not product(shape) * %zu bits", t->name, t->nbytes,
             bits);
    check_packed(t);
    const uint8_t *data0 = f->buf + f->data_start, *end = f->buf + f->size;
    fz_check(t->data >= data0 && t->data <= end && t->nbytes <= (size_t)(end - t->data), TARGET,
             "tensor '%s': data outside the data section", t->name);
    fz_check(strcmp(t->name, "__metadata__") != 0, TARGET, "a tensor named __metadata__");
    fz_check(a4w4_st_find(f, t->name) == t, TARGET, "tensor '%s' not found by name (duplicate?)",
             t->name);
    for (size_t j = 0; j < i; j++) {
        const a4w4_st_tensor *o = &f->tensors[j];
        int disjoint = !t->nbytes || !o->nbytes || t->data + t->nbytes <= o->data ||
                       o->data + o->nbytes <= t->data;
        fz_check(disjoint, TARGET, "tensors '%s' and '%s' overlap", o->name, t->name);
    }
}

static void check_accepted(const a4w4_st_file *f, const uint8_t *data, size_t size)
{
    fz_check(f->size == size && !memcmp(f->buf, data, size), TARGET, "buffer is not the input");
    fz_check(f->data_start == 8 + le64(data) && f->data_len == size - f->data_start, TARGET,
             "data_start %zu / data_len %zu do not follow the header length", f->data_start,
             f->data_len);
    fz_check(((uintptr_t)(f->buf + f->data_start)) % 64 == 0, TARGET, "data section not 64-byte aligned");
    fz_check(f->ntensors <= 4096 && f->ntensors <= f->data_start, TARGET, "more tensors than header bytes");
    size_t limit = f->ntensors < 512 ? f->ntensors : 512; /* pairwise checks stay cheap */
    for (size_t i = 0; i < limit; i++)
        check_tensor(f, i);
    for (size_t i = 0; i < f->nmeta; i++)
        fz_check(f->meta_keys[i] && f->meta_vals[i] &&
                     a4w4_st_meta(f, f->meta_keys[i]) == f->meta_vals[i],
                 TARGET, "metadata key %zu missing or duplicated", i);
}

static int same_tensor(const a4w4_st_tensor *a, const a4w4_st_tensor *b)
{
    return a->dtype == b->dtype && a->ndim == b->ndim && a->nbytes == b->nbytes &&
           !memcmp(a->shape, b->shape, sizeof a->shape) &&
           (!a->nbytes || !memcmp(a->data, b->data, a->nbytes));
}

/* Write f back with a4w4_st_write and read it again: same tensors, same metadata. The writer
 * may refuse what the reader accepts (an empty tensor name): then nothing is compared. */
static void check_round_trip(const a4w4_st_file *f)
{
    size_t total = 0;
    for (size_t i = 0; i < f->ntensors; i++)
        total += f->tensors[i].nbytes;
    if (f->ntensors > 256 || f->nmeta > 256 || total > (1u << 20))
        return;
    a4w4_st_tensor_in in[256];
    for (size_t i = 0; i < f->ntensors; i++) {
        const a4w4_st_tensor *t = &f->tensors[i];
        in[i] = (a4w4_st_tensor_in){t->name, t->dtype, t->ndim, {0}, t->data, t->nbytes};
        memcpy(in[i].shape, t->shape, sizeof t->shape);
    }
    char path[1024], err[512];
    fz_scratch_path("roundtrip.safetensors", path, sizeof path);
    if (a4w4_st_write(path, in, f->ntensors, (const char *const *)f->meta_keys,
                      (const char *const *)f->meta_vals, f->nmeta, err, sizeof err))
        return;
    a4w4_st_file g;
    a4w4_hstatus rc = a4w4_st_load(path, &g, err, sizeof err);
    fz_check(rc == A4W4_ST_OK, TARGET, "the writer's file is refused: %s", err);
    fz_check(g.ntensors == f->ntensors && g.nmeta == f->nmeta, TARGET, "round trip changed counts");
    for (size_t i = 0; i < f->ntensors; i++) {
        const a4w4_st_tensor *t = a4w4_st_find(&g, f->tensors[i].name);
        fz_check(t && same_tensor(t, &f->tensors[i]), TARGET, "round trip changed tensor '%s'",
                 f->tensors[i].name);
    }
    for (size_t i = 0; i < f->nmeta; i++) {
        const char *v = a4w4_st_meta(&g, f->meta_keys[i]);
        fz_check(v && !strcmp(v, f->meta_vals[i]), TARGET, "round trip changed metadata '%s'",
                 f->meta_keys[i]);
    }
    a4w4_st_free(&g);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_tmp_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    a4w4_st_file f;
    char err[512] = "";
    a4w4_hstatus rc = a4w4_st_load_mem(NAME, data, size, &f, err, sizeof err);
    if (rc) {
        fz_check(rc == A4W4_ST_BADINPUT || rc == A4W4_ST_NOMEM, TARGET, "status %d", (int)rc);
        fz_check_err_line(err, NAME ": ", TARGET);
        fz_check(!f.buf && !f.tensors && !f.ntensors && !f.nmeta && !f.path, TARGET,
                 "a refused file left the struct filled");
        return 0;
    }
    check_accepted(&f, data, size);
    check_round_trip(&f);
    a4w4_st_free(&f);
    fz_accepted();
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return fz_st_mutate(data, size, max_size, seed);
}
