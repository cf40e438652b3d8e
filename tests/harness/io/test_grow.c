/* test_grow.c — the one growable array (harness/io/grow.h): doubling from the first capacity,
 * a jump to a larger need, no change when there is room, and a refusal that leaves the array
 * and its capacity as they were. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"

Test(grow, doubles_from_first_and_keeps_the_elements)
{
    int *v = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(A4W4_GROW(v, n + 1, cap, 8), 0);
        v[n++] = i;
        cr_assert_geq(cap, n);
    }
    cr_assert_eq(cap, 128, "8, 16, 32, 64, 128: %zu", cap);
    for (int i = 0; i < 100; i++)
        cr_assert_eq(v[i], i);
    free(v);
}

Test(grow, room_enough_is_no_call_and_a_larger_need_jumps)
{
    char *p = NULL;
    size_t cap = 0;
    cr_assert_eq(A4W4_GROW(p, 3, cap, 4), 0);
    char *was = p;
    cr_assert_eq(cap, 4);
    cr_assert_eq(A4W4_GROW(p, 4, cap, 4), 0);
    cr_assert_eq(p, was, "room for 4: the array stays");
    cr_assert_eq(cap, 4);
    cr_assert_eq(A4W4_GROW(p, 33, cap, 4), 0);
    cr_assert_eq(cap, 64, "4 doubled past 33: %zu", cap);
    free(p);
}

Test(grow, an_impossible_size_leaves_the_array_as_it_was)
{
    uint64_t *v = NULL;
    size_t cap = 0;
    cr_assert_eq(A4W4_GROW(v, 2, cap, 2), 0);
    v[0] = 7, v[1] = 9;
    uint64_t *was = v;
    cr_assert_eq(A4W4_GROW(v, SIZE_MAX / 4, cap, 2), -1, "the bytes overflow size_t");
    cr_assert_eq(v, was);
    cr_assert_eq(cap, 2);
    cr_assert_eq(A4W4_GROW(v, SIZE_MAX, cap, 2), -1, "the count overflows doubling");
    cr_assert_eq(v, was);
    cr_assert_eq(v[0] + v[1], 16);
    free(v);
}
