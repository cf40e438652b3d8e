/* safetensors_internal.h — what the safetensors reader (safetensors.c) and writer
 * (safetensors_write.c) share: names and shapes as messages show them, dtype checks and the
 * byte size of a shape (contracts §7). Header-only helpers (static inline). */
#ifndef A4W4_SAFETENSORS_INTERNAL_H
#define A4W4_SAFETENSORS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "safetensors.h"

/* A name as it appears in a message: at most 64 bytes, control bytes as '?', "..." when cut. */
typedef struct {
    char s[72];
} shown_name;

static inline shown_name show(const char *name)
{
    shown_name out;
    size_t i = 0;
    if (!name)
        name = "(null)";
    for (; name[i] && i < 64; i++) {
        unsigned char c = (unsigned char)name[i];
        out.s[i] = (c < 0x20 || c == 0x7F) ? '?' : (char)c;
    }
    if (name[i]) {
        memcpy(out.s + i, "...", 3);
        i += 3;
    }
    out.s[i] = '\0';
    return out;
}


/* "[1, 256]" for messages (cut with "..." if long). */
typedef struct {
    char s[200];
} shown_shape;

static inline shown_shape show_shape(int ndim, const size_t *shape)
{
    shown_shape out;
    size_t k = 0;
    out.s[k++] = '[';
    for (int d = 0; d < ndim; d++) {
        int w = snprintf(out.s + k, sizeof out.s - k, "%s%zu", d ? ", " : "", shape[d]);
        if (w < 0 || (size_t)w >= sizeof out.s - k - 2) {
            k = sizeof out.s - 6;
            memcpy(out.s + k, "...", 3);
            k += 3;
            break;
        }
        k += (size_t)w;
    }
    out.s[k++] = ']';
    out.s[k] = '\0';
    return out;
}

static inline int dtype_valid(a4w4_st_dtype dtype)
{
    return a4w4_st_dtype_bits(dtype) != 0;
}

/* product(shape) * elem_bits / 8 into *bytes; -1 on size_t overflow (*overflow_in_product 1
 * when the element count overflows, 0 when the byte count does) or, with *overflow_in_product
 * 2, when the bits do not fill whole bytes (an odd F4 element count). *bytes untouched then. */
static inline int shape_bytes(int ndim, const size_t *shape, size_t elem_bits, size_t *bytes,
                       int *overflow_in_product)
{
    size_t p = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] != 0 && p > SIZE_MAX / shape[d]) {
            *overflow_in_product = 1;
            return -1;
        }
        p *= shape[d];
    }
    if (elem_bits != 0 && p > SIZE_MAX / elem_bits) {
        *overflow_in_product = 0;
        return -1;
    }
    if (p * elem_bits % 8) {
        *overflow_in_product = 2;
        return -1;
    }
    *bytes = p * elem_bits / 8;
    return 0;
}

static inline int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

#endif
