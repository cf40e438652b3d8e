/* test_shapelist.c — shape lists for `route --cases` (harness/io/shapelist.c): AITER's untuned
 * shape list loads with its row count, '#' comment lines are skipped, and every rule failure
 * names file, line and column with the message the CLI prints. Links a4w4_harness. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "shapelist.h"
#include "test_util.h"

#ifndef A4W4_SOURCE_DIR
#define A4W4_SOURCE_DIR "."
#endif
#ifndef A4W4_BINARY_DIR
#define A4W4_BINARY_DIR "."
#endif

#define UNTUNED A4W4_SOURCE_DIR "/cases/aiter/a4w4_blockscale_untuned_gemm.csv"
#define SCRATCH A4W4_BINARY_DIR "/test-shapelist"

static char err[1024];

/* Load text as a shape list that must fail; err must end with `tail` (after the path). */
static void expect_error(const char *name, const char *text, int status, const char *tail)
{
    static int dummy;
    int *s = &dummy; /* anything non-NULL: the loader must reset it */
    size_t n = 7;
    const char *path = tu_scratch_file(SCRATCH, name, text);
    cr_assert_eq(a4w4_shapelist_load(path, &s, &n, err, sizeof err), status, "%s: %s", name,
                 err);
    cr_assert_null(s, "%s", name);
    cr_assert_eq(n, 0, "%s", name);
    char want[1200];
    snprintf(want, sizeof want, "%s%s", path, tail);
    cr_assert_str_eq(err, want);
}

Test(shapelist, untuned_shape_list_loads)
{
    int *s = NULL;
    size_t n = 0;
    cr_assert_eq(a4w4_shapelist_load(UNTUNED, &s, &n, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(n, 194); /* blank lines (37, 155) are skipped */
    cr_assert_eq(s[0], 1);
    cr_assert_eq(s[1], 16384);
    cr_assert_eq(s[2], 16384);
    free(s);
}

Test(shapelist, comments_skipped_columns_found_by_name)
{
    int *s = NULL;
    size_t n = 0;
    const char *path = tu_scratch_file(SCRATCH, "cols.csv",
                                       "# a comment before the header\n"
                                       "name, K ,N,M\n"
                                       "a, 4096, 512 ,1\n"
                                       "# a comment between rows\n"
                                       "b,1024,256,32\n");
    cr_assert_eq(a4w4_shapelist_load(path, &s, &n, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(n, 2);
    static const int want[6] = {1, 512, 4096, 32, 256, 1024};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(s[i], want[i], "value %d is %d, want %d", i, s[i], want[i]);
    free(s);
}

Test(shapelist, rules_name_file_line_and_column)
{
    expect_error("sh.csv", "M,N,K\n1,2,64\n3,x,64\n", A4W4_EINVAL,
                 ":3:3: N is 'x', not an integer");
    expect_error("sh2.csv", "M,K\n1,64\n", A4W4_EINVAL,
                 ":1:1: header lacks column 'N' (a shape list names M, N and K)");
    expect_error("zero.csv", "M,N,K\n1,2,64\n0,2,64\n", A4W4_EINVAL,
                 ":3:1: M is 0, outside 1..1073741824");
    expect_error("wide.csv", "M,N,K\n1,2,64,5\n", A4W4_EINVAL,
                 ":2:8: 4 fields where the header has 3 (first extra field here)");
    expect_error("empty.csv", "", A4W4_EINVAL, ": empty shape list (no header, no rows)");
    expect_error("comments.csv", "# c\n# d\n", A4W4_EINVAL,
                 ": empty shape list (no header, no rows)");
    expect_error("hdr.csv", "M,N,K\n", A4W4_EINVAL, ": empty shape list (header only)");
    expect_error("quote.csv", "M,N,K\n\"1,2,64\n", A4W4_EINVAL,
                 ":2:1: unterminated quote (the quoted field opened here never closes)");
}

Test(shapelist, missing_file_and_null_arguments)
{
    int *s = NULL;
    size_t n = 0;
    cr_assert_eq(a4w4_shapelist_load(SCRATCH "/no-such.csv", &s, &n, err, sizeof err),
                 A4W4_EINVAL);
    cr_assert_str_eq(err, SCRATCH "/no-such.csv: cannot open: No such file or directory");
    cr_assert_eq(a4w4_shapelist_load(NULL, &s, &n, err, sizeof err), A4W4_EINVAL);
    cr_assert_str_eq(err, "shape list: NULL argument");
}
