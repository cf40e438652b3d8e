/* test_errmsg.c — the harness's one error-buffer helper (harness/io/errmsg.c): the
 * "where: message" form, one line whatever the inputs held, truncation, the status passed
 * through. */
#include <criterion/criterion.h>

#include <string.h>

#include "errmsg.h"

Test(errmsg, the_place_comes_first_and_the_status_is_returned)
{
    char err[64];
    cr_expect_eq(a4w4_errmsg(err, sizeof err, 7, "cases/x.csv", "row %d: K %% 32 != 0", 3), 7);
    cr_expect_str_eq(err, "cases/x.csv: row 3: K % 32 != 0");
    cr_expect_eq(a4w4_errmsg(err, sizeof err, -1, NULL, "plain"), -1);
    cr_expect_str_eq(err, "plain");
}

Test(errmsg, line_breaks_in_the_inputs_become_spaces)
{
    char err[64];
    a4w4_errmsg(err, sizeof err, 0, "a\nb", "c\r\nd %s", "e\nf");
    cr_expect_str_eq(err, "a b: c  d e f");
}

Test(errmsg, a_small_buffer_is_truncated_and_terminated)
{
    char err[8];
    memset(err, 'Z', sizeof err);
    a4w4_errmsg(err, sizeof err, 0, "path/to/file", "message");
    cr_expect_str_eq(err, "path/to");
    memset(err, 'Z', sizeof err);
    a4w4_errmsg(err, 4, 0, NULL, "message");
    cr_expect_str_eq(err, "mes");
    cr_expect_eq(a4w4_errmsg(NULL, 0, 5, "p", "m"), 5); /* no buffer: nothing written */
}
