/* a4w4_gpu_table.h — internal helpers of a4w4_gpu_table.hip (no GPU runtime needed). */
#ifndef A4W4_GPU_TABLE_H
#define A4W4_GPU_TABLE_H

#include <stddef.h>

/* Every element count stays below 2^46 so int64 index products never overflow. */
#define A4W4G_MAX_ELEMS (1ULL << 46)

/* *out = a * b; 0 when the product exceeds A4W4G_MAX_ELEMS. */
int a4w4g_mul_ok(size_t a, size_t b, size_t *out);

#endif
