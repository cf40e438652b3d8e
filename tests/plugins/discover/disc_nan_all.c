/* disc_nan_all.c — a kernel whose every output is NaN (0x7FFF): no order explains any output,
 * so `discover` must find no contract (contracts §4.4: the defects would be every output).
 * Declares ordered(1). Built from gt/gt_kernel.h. */
#define GT_NAME "disc-nan-all"
#define GT_CONTRACT "ordered(1)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    (void)o;
    (void)gt_leaf; /* the plumbing's helpers, unused here */
    (void)gt_bf16_rne;
    return 0x7FFF;
}
