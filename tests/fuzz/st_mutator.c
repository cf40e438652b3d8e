/* st_mutator.c — safetensors-aware mutations (see st_mutator.h). */
#include "st_mutator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz_common.h"
#include "json_mutator.h"

#define MAX_HEADER (1u << 20)
#define MAX_REPACK (1u << 16) /* bytes a repacked tensor may take (keeps inputs small) */

static const char *const dtypes[] = {"U8", "BF16", "F16", "F32", "F8_E8M0", "F4",
                                     "I8", "F64", "bf16", "", "U8 ", "F8_E4M3"};
static const char *const names[] = {"y", "y_exact", "y_ordered", "a_fp4", "a_scale",
                                    "w_fp4", "w_scale", "__metadata__", "", "x\ty",
                                    "a_scale_shuffled", "\xc3\xa9"};
static const char *const meta_keys[] = {"format", "M", "N", "K", "contract", "case",
                                        "activation", "round_mode", "producer", "rows"};
static const char *const meta_vals[] = {"a4w4-case/1", "a4w4-outputs/1", "1", "256", "+1",
                                        " 1", "ordered(1)", "bounded", "", "0", "4294967297"};
static const char *const entry_keys[] = {"dtype", "shape", "data_offsets", "extra"};

typedef struct {
    fz_rng rng;
    cJSON *root;
    size_t data_len; /* data section length the output gets */
} st_state;

#define PICK(r, a) (a)[fz_below((r), sizeof(a) / sizeof((a)[0]))]

/* ---------------------------------------------------------------- header access */

static int is_meta(const cJSON *c)
{
    return c->string && !strcmp(c->string, "__metadata__");
}

/* A random tensor entry (object member that is not __metadata__), or NULL. */
static cJSON *pick_tensor(st_state *s)
{
    cJSON *cand[256];
    size_t n = 0;
    for (cJSON *c = s->root->child; c && n < 256; c = c->next)
        if (!is_meta(c))
            cand[n++] = c;
    return n ? cand[fz_below(&s->rng, n)] : NULL;
}

/* Bits per element of the dtype string (4 for F4, safetensors.h), 0 when unknown. */
static size_t dtype_bits(const cJSON *dt)
{
    if (!cJSON_IsString(dt))
        return 0;
    const char *d = dt->valuestring;
    if (!strcmp(d, "F4"))
        return 4;
    if (!strcmp(d, "U8") || !strcmp(d, "F8_E8M0"))
        return 8;
    if (!strcmp(d, "BF16") || !strcmp(d, "F16"))
        return 16;
    return !strcmp(d, "F32") ? 32 : 0;
}

/* Bytes of count elements of bits each, rounded up: an odd F4 count gets its half byte (the
 * reader refuses those, and the repacked offsets then reach that check). */
static double elem_bytes(double count, size_t bits)
{
    return ceil(count * (double)bits / 8);
}

/* Bytes of entry e per its dtype and shape, or (size_t)-1 when not computable / too big. */
static size_t entry_bytes(const cJSON *e)
{
    size_t bits = dtype_bits(cJSON_GetObjectItemCaseSensitive(e, "dtype"));
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    if (!bits || !cJSON_IsArray(sh))
        return (size_t)-1;
    double p = 1;
    for (const cJSON *d = sh->child; d; d = d->next) {
        if (!cJSON_IsNumber(d) || d->valuedouble < 0 || d->valuedouble != floor(d->valuedouble))
            return (size_t)-1;
        p *= d->valuedouble;
    }
    p = elem_bytes(p, bits);
    return p <= MAX_REPACK ? (size_t)p : (size_t)-1;
}

static cJSON *offsets(size_t begin, size_t end)
{
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateNumber((double)begin));
    cJSON_AddItemToArray(a, cJSON_CreateNumber((double)end));
    return a;
}

static void set_member(cJSON *obj, const char *key, cJSON *v)
{
    if (!v)
        abort();
    if (!cJSON_GetObjectItemCaseSensitive(obj, key))
        cJSON_AddItemToObject(obj, key, v);
    else if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v))
        cJSON_Delete(v);
}

static void array_set(cJSON *arr, size_t i, cJSON *v)
{
    if (!v)
        abort();
    if (!cJSON_ReplaceItemInArray(arr, (int)i, v))
        cJSON_Delete(v);
}

/* ---------------------------------------------------------------- field mutations */

static void op_dtype(st_state *s, cJSON *e)
{
    cJSON *v = fz_one_in(&s->rng, 8) ? fz_json_raw_number(&s->rng)
                                      : cJSON_CreateString(PICK(&s->rng, dtypes));
    set_member(e, "dtype", v);
}

static cJSON *small_or_raw(st_state *s)
{
    static const double small[] = {0, 1, 2, 3, 8, 16, 32, 256};
    return fz_one_in(&s->rng, 2) ? cJSON_CreateNumber(PICK(&s->rng, small))
                                 : fz_json_raw_number(&s->rng);
}

static void op_shape(st_state *s, cJSON *e)
{
    cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    if (!cJSON_IsArray(sh) || fz_one_in(&s->rng, 16)) {
        set_member(e, "shape", fz_one_in(&s->rng, 2) ? cJSON_CreateArray()
                                                      : cJSON_CreateString("[1]"));
        return;
    }
    int n = cJSON_GetArraySize(sh);
    switch (fz_below(&s->rng, 4)) {
    case 0: /* add one or more dimensions (up to 10: past the limit of 8) */
        for (size_t k = 1 + (fz_one_in(&s->rng, 4) ? fz_below(&s->rng, 8) : 0); k && n < 10; k--, n++)
            cJSON_AddItemToArray(sh, small_or_raw(s));
        break;
    case 1:
        if (n)
            cJSON_DeleteItemFromArray(sh, (int)fz_below(&s->rng, (size_t)n));
        break;
    default:
        if (n)
            array_set(sh, fz_below(&s->rng, (size_t)n), small_or_raw(s));
    }
}

/* A number near the data section's edges or another tensor's range. */
static cJSON *offset_value(st_state *s)
{
    cJSON *o = pick_tensor(s);
    const cJSON *oo = o ? cJSON_GetObjectItemCaseSensitive(o, "data_offsets") : NULL;
    switch (fz_below(&s->rng, 5)) {
    case 0: return cJSON_CreateNumber((double)s->data_len);
    case 1: return cJSON_CreateNumber((double)s->data_len + 1);
    case 2:
        if (cJSON_IsArray(oo) && oo->child && cJSON_IsNumber(oo->child))
            return cJSON_CreateNumber(oo->child->valuedouble + (double)fz_below(&s->rng, 3));
        return cJSON_CreateNumber(0);
    case 3: return small_or_raw(s);
    default: return fz_json_raw_number(&s->rng);
    }
}

static void op_offsets(st_state *s, cJSON *e)
{
    cJSON *oo = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsArray(oo) || fz_one_in(&s->rng, 16)) {
        cJSON *a = cJSON_CreateArray();
        size_t n = fz_below(&s->rng, 4);
        for (size_t i = 0; i < n; i++)
            cJSON_AddItemToArray(a, offset_value(s));
        set_member(e, "data_offsets", a);
        return;
    }
    int n = cJSON_GetArraySize(oo);
    if (n == 2 && fz_one_in(&s->rng, 4)) { /* reversed */
        cJSON *a = cJSON_DetachItemFromArray(oo, 0);
        cJSON_AddItemToArray(oo, a);
        return;
    }
    if (n)
        array_set(oo, fz_below(&s->rng, (size_t)n), offset_value(s));
}

/* Give every computable tensor offsets back to back (sometimes with a gap) and size the data
 * section to fit: a mutated shape then meets a consistent file. */
static void op_repack(st_state *s)
{
    size_t at = 0;
    for (cJSON *c = s->root->child; c; c = c->next) {
        if (is_meta(c) || !cJSON_IsObject(c))
            continue;
        size_t nb = entry_bytes(c);
        if (nb == (size_t)-1)
            continue;
        if (fz_one_in(&s->rng, 8))
            at += fz_below(&s->rng, 8);
        set_member(c, "data_offsets", offsets(at, at + nb));
        at += nb;
    }
    s->data_len = at + (fz_one_in(&s->rng, 4) ? fz_below(&s->rng, 16) : 0);
}

static void op_new_tensor(st_state *s)
{
    cJSON *e = cJSON_CreateObject();
    const char *dt = PICK(&s->rng, dtypes);
    cJSON_AddItemToObject(e, "dtype", cJSON_CreateString(dt));
    cJSON *sh = cJSON_AddArrayToObject(e, "shape");
    size_t nd = fz_below(&s->rng, 4), count = 1;
    for (size_t d = 0; d < nd; d++) {
        size_t v = fz_below(&s->rng, 9);
        cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)v));
        count *= v;
    }
    size_t bits = dtype_bits(cJSON_GetObjectItemCaseSensitive(e, "dtype"));
    size_t nb = (size_t)elem_bytes((double)count, bits ? bits : 8);
    cJSON_AddItemToObject(e, "data_offsets", offsets(s->data_len, s->data_len + nb));
    s->data_len += nb;
    char name[32];
    snprintf(name, sizeof name, "t%u", (unsigned)fz_below(&s->rng, 1000));
    cJSON_AddItemToObject(s->root, fz_one_in(&s->rng, 4) ? PICK(&s->rng, names) : name, e);
}

static void op_tensor(st_state *s)
{
    cJSON *e = pick_tensor(s);
    if (!e || fz_one_in(&s->rng, 4)) {
        op_new_tensor(s);
        return;
    }
    switch (fz_below(&s->rng, 4)) {
    case 0:
        cJSON_Delete(cJSON_DetachItemViaPointer(s->root, e));
        break;
    case 1: /* rename */
        cJSON_DetachItemViaPointer(s->root, e);
        {
            cJSON *o = pick_tensor(s);
            const char *nm = o && fz_one_in(&s->rng, 2) ? o->string : PICK(&s->rng, names);
            cJSON_AddItemToObject(s->root, nm ? nm : "", e);
        }
        break;
    case 2: /* the same name twice */
        cJSON_AddItemToObject(s->root, e->string ? e->string : "", cJSON_Duplicate(e, 1));
        break;
    default: /* entry keys: add an unknown one, drop or duplicate a known one */
    {
        const char *k = PICK(&s->rng, entry_keys);
        if (fz_one_in(&s->rng, 2))
            cJSON_DeleteItemFromObjectCaseSensitive(e, k);
        else
            cJSON_AddItemToObject(e, k, small_or_raw(s));
    }
    }
}

static void op_meta(st_state *s)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(s->root, "__metadata__");
    if (!m) {
        m = cJSON_CreateObject();
        cJSON_AddItemToObject(s->root, "__metadata__", m);
    }
    if (!cJSON_IsObject(m) || fz_one_in(&s->rng, 16)) {
        set_member(s->root, "__metadata__",
                   fz_one_in(&s->rng, 2) ? cJSON_CreateObject() : small_or_raw(s));
        return;
    }
    cJSON *v = fz_one_in(&s->rng, 8) ? small_or_raw(s) : cJSON_CreateString(PICK(&s->rng, meta_vals));
    const char *k = PICK(&s->rng, meta_keys);
    if (fz_one_in(&s->rng, 4))
        cJSON_AddItemToObject(m, k, v); /* may add a duplicate key */
    else
        set_member(m, k, v);
}

static void apply_one(st_state *s)
{
    static const char *const keys[] = {"dtype", "shape", "data_offsets", "__metadata__", "y"};
    static const char *const strs[] = {"U8", "BF16", "F32", "F4", "a4w4-case/1"};
    static const fz_json_dict dict = {keys, 5, strs, 5};
    cJSON *e = pick_tensor(s);
    switch (fz_below(&s->rng, 12)) {
    case 0: case 1: if (e && cJSON_IsObject(e)) op_dtype(s, e); break;
    case 2: case 3: case 4: if (e && cJSON_IsObject(e)) op_shape(s, e); break;
    case 5: case 6: if (e && cJSON_IsObject(e)) op_offsets(s, e); break;
    case 7: op_repack(s); break;
    case 8: op_tensor(s); break;
    case 9: op_meta(s); break;
    default: fz_json_mutate(s->root, &s->rng, &dict);
    }
}

/* ---------------------------------------------------------------- assembly */

/* Header length n when data holds 8 + n bytes of it, else (size_t)-1. */
static size_t header_len(const uint8_t *data, size_t size)
{
    if (size < 8)
        return (size_t)-1;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | data[i];
    return n <= size - 8 && n <= MAX_HEADER ? (size_t)n : (size_t)-1;
}

/* out = length + header (+ padding) + data section (old bytes, then filler). */
static size_t assemble(st_state *s, const char *hdr, size_t hl, const uint8_t *old, size_t old_len,
                       uint8_t *out, size_t max_size)
{
    size_t pad = fz_one_in(&s->rng, 2) ? (8 - (8 + hl) % 8) % 8 : fz_below(&s->rng, 9);
    size_t total = 8 + hl + pad + s->data_len;
    if (total > max_size || total < 8 + hl)
        return 0;
    uint64_t n = hl + pad;
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(n >> (8 * i));
    memcpy(out + 8, hdr, hl);
    static const char pads[] = "    \t\n\r\0x";
    char pc = fz_one_in(&s->rng, 16) ? pads[fz_below(&s->rng, sizeof pads - 1)] : ' ';
    memset(out + 8 + hl, pc, pad);
    size_t keep = old_len < s->data_len ? old_len : s->data_len;
    memcpy(out + 8 + hl + pad, old, keep);
    for (size_t i = keep; i < s->data_len; i++)
        out[8 + hl + pad + i] = (uint8_t)fz_rng_next(&s->rng);
    return total;
}

/* libFuzzer's byte mutator on the header text alone; the length follows. */
static size_t mutate_header_bytes(uint8_t *data, size_t size, size_t hl, size_t max_size)
{
    size_t dl = size - 8 - hl;
    if (max_size < size)
        return LLVMFuzzerMutate(data, size, max_size);
    uint8_t *h = malloc(max_size - 8 - dl + 1), *d = malloc(dl + 1);
    if (!h || !d)
        abort();
    memcpy(h, data + 8, hl);
    memcpy(d, data + 8 + hl, dl);
    size_t nh = LLVMFuzzerMutate(h, hl, max_size - 8 - dl);
    for (int i = 0; i < 8; i++)
        data[i] = (uint8_t)((uint64_t)nh >> (8 * i));
    memcpy(data + 8, h, nh);
    memcpy(data + 8 + nh, d, dl);
    free(h);
    free(d);
    return 8 + nh + dl;
}

size_t fz_st_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    st_state s;
    fz_rng_seed(&s.rng, seed);
    size_t hl = header_len(data, size);
    if (hl == (size_t)-1 || hl == 0 || fz_one_in(&s.rng, 8))
        return LLVMFuzzerMutate(data, size, max_size);
    if (fz_one_in(&s.rng, 7))
        return mutate_header_bytes(data, size, hl, max_size);
    s.root = cJSON_ParseWithLength((const char *)data + 8, hl);
    if (!s.root || !cJSON_IsObject(s.root)) {
        cJSON_Delete(s.root);
        return mutate_header_bytes(data, size, hl, max_size);
    }
    s.data_len = size - 8 - hl;
    size_t nops = 1 + fz_below(&s.rng, 3);
    for (size_t k = 0; k < nops; k++)
        apply_one(&s);
    char *hdr = cJSON_PrintUnformatted(s.root);
    cJSON_Delete(s.root);
    uint8_t *out = malloc(max_size + 1);
    if (!hdr || !out)
        abort();
    size_t n = assemble(&s, hdr, strlen(hdr), data + 8 + hl, size - 8 - hl, out, max_size);
    cJSON_free(hdr);
    if (n)
        memcpy(data, out, n);
    free(out);
    return n ? n : LLVMFuzzerMutate(data, size, max_size);
}
