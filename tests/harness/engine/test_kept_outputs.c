/* test_kept_outputs.c — run --keep-outputs's files (harness/engine/kept_outputs.c): the
 * backend's directory name never leaves DIR, and a kept file is the output bundle contracts §7
 * describes (one BF16 y [M, N], the bits written, the metadata that identifies the operands). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kept_outputs.h"
#include "safetensors.h"

Test(kept_outputs, backend_names_become_one_directory_below_dir)
{
    char d[64];
    a4w4_kept_backend_dir("plugin:./build/lib my.so", d, sizeof d);
    cr_expect_str_eq(d, "plugin_._build_lib_my.so");
    a4w4_kept_backend_dir("..", d, sizeof d);
    cr_expect_str_eq(d, "_.");
    a4w4_kept_backend_dir("cpu-asm", d, sizeof d);
    cr_expect_str_eq(d, "cpu-asm");
    a4w4_kept_backend_dir("bundle:/tmp/x", d, 6); /* truncated, still terminated */
    cr_expect_str_eq(d, "bundl");
}

Test(kept_outputs, a_kept_file_is_an_output_bundle_of_the_case)
{
    char dir[] = "/tmp/a4w4_kept_XXXXXX", sub[64], rel[320], err[512];
    cr_assert(mkdtemp(dir));
    a4w4_kept_backend_dir("plugin:x", sub, sizeof sub);
    char path[640];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    cr_assert_eq(mkdir(path, 0700), 0);
    a4w4_case c = {.name = "grp/c1", .M = 2, .N = 3, .K = 64, .seed = 7};
    snprintf(c.regime_text, sizeof c.regime_text, "exact");
    const uint16_t y[6] = {0x3F80, 0x8000, 0x7FC0, 0x0001, 0xC2FB, 0x4179};
    cr_assert_eq(a4w4_kept_write(dir, "plugin:x", "ordered(2)", &c, y, rel, sizeof rel, err,
                                 sizeof err), 0, "%s", err);
    cr_expect_str_eq(rel, "plugin_x/grp__c1.safetensors");
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    a4w4_st_file f;
    cr_assert_eq(a4w4_st_load(path, &f, err, sizeof err), A4W4_ST_OK, "%s", err);
    const a4w4_st_tensor *t = a4w4_st_find(&f, "y");
    cr_assert(t && t->dtype == A4W4_DT_BF16 && t->ndim == 2 && t->shape[0] == 2 &&
              t->shape[1] == 3);
    const uint8_t *p = t->data;
    for (size_t k = 0; k < 6; k++)
        cr_expect_eq((uint16_t)(p[2 * k] | (p[2 * k + 1] << 8)), y[k], "output %zu", k);
    cr_expect_str_eq(a4w4_st_meta(&f, "format"), "a4w4-outputs/1");
    cr_expect_str_eq(a4w4_st_meta(&f, "case"), "grp/c1");
    cr_expect_str_eq(a4w4_st_meta(&f, "contract"), "ordered(2)");
    cr_expect_str_eq(a4w4_st_meta(&f, "seed"), "7");
    cr_expect_str_eq(a4w4_st_meta(&f, "K"), "64");
    a4w4_st_free(&f);
    remove(path);
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    rmdir(path);
    rmdir(dir);
}
