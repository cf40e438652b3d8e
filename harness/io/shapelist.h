/* shapelist.h — shape lists for `route --cases` (contracts §5): a CSV whose header names M, N
 * and K. */
#ifndef A4W4_SHAPELIST_H
#define A4W4_SHAPELIST_H

#include <stddef.h>

/* Read the shape list at path: a CSV whose header names M, N and K (any order, other columns
 * ignored, spaces around fields allowed, lines whose first field starts with '#' are
 * comments), e.g. AITER's a4w4_blockscale_untuned_gemm.csv or cases/route_shapes.csv.
 * *shapes receives 3*n ints (M, N, K per shape, element counts, in file order), owned by the
 * caller (free()). Values must be integers in 1..A4W4_DIM_MAX (a4w4_dispatch.h); the file
 * needs a header and at least one row, every row as wide as the header. Returns A4W4_OK, or
 * A4W4_EINVAL / A4W4_ENOMEM (a4w4_formats.h) with one line "path:line:col: rule" in err
 * (*shapes NULL, *n 0). Prints nothing. */
int a4w4_shapelist_load(const char *path, int **shapes, size_t *n, char *err, size_t errlen);

#endif
