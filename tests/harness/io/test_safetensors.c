/* test_safetensors.c — the bundle reader and writer (harness/io/safetensors.c, contracts §7):
 * every golden bundle against what its header says (expected values written down here
 * from the files, not recomputed by the code under test), write -> load round trips, one
 * crafted malformed file per validation rule, the writer's no-partial-file promise, and
 * the mutate_bundle test tool. Scratch files go under A4W4_BINARY_DIR/st-test-tmp. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "safetensors.h"
#include "test_util.h"

#define GOLDEN_DIR A4W4_SOURCE_DIR "/cases/golden"
#define TMP_DIR A4W4_BINARY_DIR "/st-test-tmp"
#define TOOL A4W4_BINARY_DIR "/tools/mutate_bundle"

/* ---------------------------------------------------------------- helpers */

/* Number of entries in dir (besides . and ..), and whether any name contains ".tmp" (the
 * writer's temporary "<name>.tmpXXXXXX"). */
static size_t dir_entries(const char *dir, int *has_tmp)
{
    size_t n = 0;
    *has_tmp = 0;
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "opendir %s", dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        if (strstr(e->d_name, ".tmp"))
            *has_tmp = 1;
    }
    closedir(d);
    return n;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A safetensors file whose 8-byte length field says hlen, followed by hdr_n header bytes
 * and data_n data bytes (pattern i*7+3). */
static void craft_raw(const char *path, uint64_t hlen, const char *hdr, size_t hdr_n,
                      size_t data_n)
{
    size_t n = 8 + hdr_n + data_n;
    uint8_t *b = malloc(n);
    cr_assert_not_null(b);
    put_le64(b, hlen);
    memcpy(b + 8, hdr, hdr_n);
    for (size_t i = 0; i < data_n; i++)
        b[8 + hdr_n + i] = (uint8_t)(i * 7 + 3);
    tu_write_file(path, b, n);
    free(b);
}

/* Well-framed file: the length field matches the header text. */
static const char *craft(const char *name, const char *hdr, size_t data_n)
{
    static char path[4096];
    tu_mkdir_p(TMP_DIR "/rules");
    snprintf(path, sizeof path, "%s/rules/%s.safetensors", TMP_DIR, name);
    craft_raw(path, strlen(hdr), hdr, strlen(hdr), data_n);
    return path;
}

/* Load must fail: -1, *f zeroed, one line naming the file and holding every key word;
 * loading the same bytes from memory must give the same message. */
static void expect_fail_words(const char *path, const char *const *words, size_t nwords)
{
    a4w4_st_file f;
    memset(&f, 0xA5, sizeof f);
    char err[512] = "";
    int rc = a4w4_st_load(path, &f, err, sizeof err);
    /* a file that cannot be opened is an I/O failure; every other refusal a broken rule */
    int want = strstr(err, "cannot open") ? A4W4_ST_IO : A4W4_ST_BADINPUT;
    cr_assert_eq(rc, want, "%s: load should fail with %d, got %d (%s)", path, want, rc, err);
    cr_assert_null(f.tensors, "tensors not reset on failure");
    cr_assert_null(f.buf, "buf not reset on failure");
    cr_assert_eq(f.ntensors, 0);
    cr_assert_eq(f.nmeta, 0);
    a4w4_st_free(&f); /* must be harmless */
    cr_assert_neq(err[0], '\0', "empty message");
    cr_assert_null(strchr(err, '\n'), "message is not one line: %s", err);
    cr_assert_eq(strncmp(err, path, strlen(path)), 0, "message does not name the file: %s",
                 err);
    for (size_t i = 0; i < nwords; i++)
        cr_assert_not_null(strstr(err, words[i]), "message lacks '%s': %s", words[i], err);

    if (is_regular(path)) {
        size_t n;
        uint8_t *b = tu_read_file(path, &n);
        char err2[512] = "";
        memset(&f, 0x5A, sizeof f);
        cr_assert_eq(a4w4_st_load_mem(path, b, n, &f, err2, sizeof err2), A4W4_ST_BADINPUT);
        cr_assert_null(f.tensors);
        cr_assert_str_eq(err2, err, "load_mem and load disagree");
        free(b);
    }
}

#define EXPECT_FAIL(path, ...)                                                              \
    do {                                                                                    \
        const char *const w_[] = {__VA_ARGS__};                                             \
        expect_fail_words((path), w_, sizeof w_ / sizeof w_[0]);                            \
    } while (0)

/* Load must succeed. */
static void expect_ok(const char *path, a4w4_st_file *f)
{
    char err[512] = "";
    int rc = a4w4_st_load(path, f, err, sizeof err);
    cr_assert_eq(rc, 0, "%s: load failed: %s", path, err);
}

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 0x811c9dc5u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x01000193u;
    }
    return h;
}

/* ---------------------------------------------------------------- golden bundles */

typedef struct {
    const char *name;
    a4w4_st_dtype dtype;
    int ndim;
    size_t shape[2];
    size_t begin, end;
    uint32_t fnv; /* FNV-1a of the tensor's bytes, computed from the file by Python */
} exp_tensor;

typedef struct {
    const char *file;
    size_t header_len, file_size;
    exp_tensor t[24];
    size_t nt;
    const char *meta[8][2];
    size_t nmeta;
} exp_bundle;

/* Written down from each file's JSON header (python3 json.loads of bytes [8, 8+n)). */
static const exp_bundle golden[] = {
    {"g1_m1_n256_k512.safetensors", 928, 145592, {
         {"y_exact", A4W4_DT_BF16, 2, {1, 256}, 0, 512, 0x124d0d99u},
         {"y_ordered", A4W4_DT_BF16, 2, {1, 256}, 512, 1024, 0x124d0d99u},
         {"a_fp4", A4W4_DT_U8, 2, {1, 256}, 1024, 1280, 0x22ad5f24u},
         {"a_scale", A4W4_DT_U8, 2, {1, 16}, 1280, 1296, 0xe69bf9ddu},
         {"a_scale_shuffled", A4W4_DT_U8, 2, {256, 16}, 1296, 5392, 0x396e0ef3u},
         {"w_fp4", A4W4_DT_U8, 2, {256, 256}, 5392, 70928, 0x97821abcu},
         {"w_fp4_shuffled", A4W4_DT_U8, 2, {256, 256}, 70928, 136464, 0xcdefaaa8u},
         {"w_scale", A4W4_DT_U8, 2, {256, 16}, 136464, 140560, 0x7db7cb47u},
         {"w_scale_swizzled", A4W4_DT_U8, 2, {256, 16}, 140560, 144656, 0x20890137u},
     }, 9, {
         {"format", "a4w4-case/1"},
         {"M", "1"},
         {"N", "256"},
         {"K", "512"},
         {"scale_swizzle_supported", "true"},
         {"round_mode", "round_up"},
     }, 11},
    {"g2_m16_n1024_k5120.safetensors", 1088, 5885512, {
         {"x", A4W4_DT_BF16, 2, {16, 5120}, 0, 163840, 0x19c208dfu},
         {"y_exact", A4W4_DT_BF16, 2, {16, 1024}, 163840, 196608, 0xa1f1a08au},
         {"y_ordered", A4W4_DT_BF16, 2, {16, 1024}, 196608, 229376, 0xa1f1a08au},
         {"a_fp4", A4W4_DT_U8, 2, {16, 2560}, 229376, 270336, 0x0f0b35beu},
         {"a_scale", A4W4_DT_U8, 2, {16, 160}, 270336, 272896, 0xa84a50b1u},
         {"a_scale_shuffled", A4W4_DT_U8, 2, {256, 160}, 272896, 313856, 0xdbcbef77u},
         {"w_fp4", A4W4_DT_U8, 2, {1024, 2560}, 313856, 2935296, 0x3db515cau},
         {"w_fp4_shuffled", A4W4_DT_U8, 2, {1024, 2560}, 2935296, 5556736, 0x7b5b8586u},
         {"w_scale", A4W4_DT_U8, 2, {1024, 160}, 5556736, 5720576, 0xcfba3882u},
         {"w_scale_swizzled", A4W4_DT_U8, 2, {1024, 160}, 5720576, 5884416, 0x18f10294u},
     }, 10, {
         {"format", "a4w4-case/1"},
         {"M", "16"},
         {"N", "1024"},
         {"K", "5120"},
         {"scale_swizzle_supported", "true"},
         {"round_mode", "round_up"},
     }, 11},
    {"g3_m33_n256_k768.safetensors", 944, 263248, {
         {"y_exact", A4W4_DT_BF16, 2, {33, 256}, 0, 16896, 0x5707fbf0u},
         {"y_ordered", A4W4_DT_BF16, 2, {33, 256}, 16896, 33792, 0x5707fbf0u},
         {"a_fp4", A4W4_DT_U8, 2, {33, 384}, 33792, 46464, 0x6a4775e6u},
         {"a_scale", A4W4_DT_U8, 2, {33, 24}, 46464, 47256, 0xdaf39aa3u},
         {"a_scale_shuffled", A4W4_DT_U8, 2, {256, 24}, 47256, 53400, 0x4952f265u},
         {"w_fp4", A4W4_DT_U8, 2, {256, 384}, 53400, 151704, 0x2975ad11u},
         {"w_fp4_shuffled", A4W4_DT_U8, 2, {256, 384}, 151704, 250008, 0xefe2f215u},
         {"w_scale", A4W4_DT_U8, 2, {256, 24}, 250008, 256152, 0x76570b5au},
         {"w_scale_swizzled", A4W4_DT_U8, 2, {256, 24}, 256152, 262296, 0x6299e508u},
     }, 9, {
         {"format", "a4w4-case/1"},
         {"M", "33"},
         {"N", "256"},
         {"K", "768"},
         {"scale_swizzle_supported", "true"},
         {"round_mode", "round_up"},
     }, 11},
    {"g4_m4_n128_k2048.safetensors", 936, 302256, {
         {"y_exact", A4W4_DT_BF16, 2, {4, 128}, 0, 1024, 0x1463d49bu},
         {"y_ordered", A4W4_DT_BF16, 2, {4, 128}, 1024, 2048, 0x1463d49bu},
         {"a_fp4", A4W4_DT_U8, 2, {4, 1024}, 2048, 6144, 0x66ee2e9au},
         {"a_scale", A4W4_DT_U8, 2, {4, 64}, 6144, 6400, 0xc8d0cec4u},
         {"a_scale_shuffled", A4W4_DT_U8, 2, {256, 64}, 6400, 22784, 0xfde6fa1au},
         {"w_fp4", A4W4_DT_U8, 2, {128, 1024}, 22784, 153856, 0x84801ce5u},
         {"w_fp4_shuffled", A4W4_DT_U8, 2, {128, 1024}, 153856, 284928, 0x4db9f7f1u},
         {"w_scale", A4W4_DT_U8, 2, {128, 64}, 284928, 293120, 0x12b4f2b8u},
         {"w_scale_swizzled", A4W4_DT_U8, 2, {128, 64}, 293120, 301312, 0xad29af6au},
     }, 9, {
         {"format", "a4w4-case/1"},
         {"M", "4"},
         {"N", "128"},
         {"K", "2048"},
         {"scale_swizzle_supported", "true"},
         {"round_mode", "round_up"},
     }, 11},
    {"g5_m8_n48_k320.safetensors", 840, 23680, {
         {"y_exact", A4W4_DT_BF16, 2, {8, 48}, 0, 768, 0x3a672768u},
         {"y_ordered", A4W4_DT_BF16, 2, {8, 48}, 768, 1536, 0x3a672768u},
         {"a_fp4", A4W4_DT_U8, 2, {8, 160}, 1536, 2816, 0x55393b22u},
         {"a_scale", A4W4_DT_U8, 2, {8, 10}, 2816, 2896, 0x59621e98u},
         {"a_scale_shuffled", A4W4_DT_U8, 2, {256, 16}, 2896, 6992, 0xb2af6df4u},
         {"w_fp4", A4W4_DT_U8, 2, {48, 160}, 6992, 14672, 0x4050eb45u},
         {"w_fp4_shuffled", A4W4_DT_U8, 2, {48, 160}, 14672, 22352, 0xdb1dfea1u},
         {"w_scale", A4W4_DT_U8, 2, {48, 10}, 22352, 22832, 0xc730fe04u},
     }, 8, {
         {"format", "a4w4-case/1"},
         {"M", "8"},
         {"N", "48"},
         {"K", "320"},
         {"scale_swizzle_supported", "false"},
         {"round_mode", "round_up"},
     }, 11},
    {"q1_quant_modes.safetensors", 1928, 178064, {
         {"x_f32", A4W4_DT_F32, 2, {64, 256}, 0, 65536, 0xec838b61u},
         {"x_bf16", A4W4_DT_BF16, 2, {64, 256}, 65536, 98304, 0xea8e9093u},
         {"a_fp4_ceil", A4W4_DT_U8, 2, {64, 128}, 98304, 106496, 0x4dd91467u},
         {"a_fp4_ceil_from_bf16", A4W4_DT_U8, 2, {64, 128}, 106496, 114688, 0xfa3e2355u},
         {"a_fp4_even", A4W4_DT_U8, 2, {64, 128}, 114688, 122880, 0xde4613f9u},
         {"a_fp4_even_from_bf16", A4W4_DT_U8, 2, {64, 128}, 122880, 131072, 0x3c4e6d8fu},
         {"a_fp4_round_down", A4W4_DT_U8, 2, {64, 128}, 131072, 139264, 0xe50eea1au},
         {"a_fp4_round_down_from_bf16", A4W4_DT_U8, 2, {64, 128}, 139264, 147456, 0xa63173deu},
         {"a_fp4_round_up", A4W4_DT_U8, 2, {64, 128}, 147456, 155648, 0xa9be03d7u},
         {"a_fp4_round_up_from_bf16", A4W4_DT_U8, 2, {64, 128}, 155648, 163840, 0xf4653033u},
         {"a_scale_ceil", A4W4_DT_U8, 2, {64, 8}, 163840, 164352, 0x99db2696u},
         {"a_scale_ceil_from_bf16", A4W4_DT_U8, 2, {64, 8}, 164352, 164864, 0x7d002c8fu},
         {"a_scale_ceil_shuffled", A4W4_DT_U8, 2, {256, 8}, 164864, 166912, 0x02846e40u},
         {"a_scale_even", A4W4_DT_U8, 2, {64, 8}, 166912, 167424, 0xbb626df3u},
         {"a_scale_even_from_bf16", A4W4_DT_U8, 2, {64, 8}, 167424, 167936, 0x59e40fe8u},
         {"a_scale_even_shuffled", A4W4_DT_U8, 2, {256, 8}, 167936, 169984, 0x4994d63bu},
         {"a_scale_round_down", A4W4_DT_U8, 2, {64, 8}, 169984, 170496, 0x72c13fd4u},
         {"a_scale_round_down_from_bf16", A4W4_DT_U8, 2, {64, 8}, 170496, 171008, 0xb8d91428u},
         {"a_scale_round_down_shuffled", A4W4_DT_U8, 2, {256, 8}, 171008, 173056, 0xae22fa56u},
         {"a_scale_round_up", A4W4_DT_U8, 2, {64, 8}, 173056, 173568, 0x4e457402u},
         {"a_scale_round_up_from_bf16", A4W4_DT_U8, 2, {64, 8}, 173568, 174080, 0x395416bcu},
         {"a_scale_round_up_shuffled", A4W4_DT_U8, 2, {256, 8}, 174080, 176128, 0xf9b33892u},
     }, 22, {
         {"format", "a4w4-quant/1"},
         {"K", "256"},
         {"rows", "64"},
     }, 4},
};

static void check_bundle(const exp_bundle *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, e->file);
    a4w4_st_file f;
    expect_ok(path, &f);
    cr_assert_eq(f.size, e->file_size, "%s size", e->file);
    cr_assert_eq(f.data_start, 8 + e->header_len, "%s data_start", e->file);
    cr_assert_eq(f.data_len, e->file_size - 8 - e->header_len);
    cr_assert_eq(f.ntensors, e->nt, "%s: %zu tensors, header has %zu", e->file, f.ntensors,
                 e->nt);
    for (size_t i = 0; i < e->nt; i++) {
        const exp_tensor *x = &e->t[i];
        const a4w4_st_tensor *t = a4w4_st_find(&f, x->name);
        cr_assert_not_null(t, "%s: tensor %s missing", e->file, x->name);
        cr_assert_str_eq(f.tensors[i].name, x->name, "%s: header order", e->file);
        cr_assert_eq(t->dtype, x->dtype, "%s/%s dtype", e->file, x->name);
        cr_assert_eq(t->ndim, x->ndim, "%s/%s ndim", e->file, x->name);
        for (int d = 0; d < x->ndim; d++)
            cr_assert_eq(t->shape[d], x->shape[d], "%s/%s shape[%d]", e->file, x->name, d);
        cr_assert_eq(t->nbytes, x->end - x->begin, "%s/%s nbytes", e->file, x->name);
        cr_assert_eq(t->data, f.buf + 8 + e->header_len + x->begin, "%s/%s data pointer",
                     e->file, x->name);
        cr_assert_eq(fnv1a(t->data, t->nbytes), x->fnv, "%s/%s bytes", e->file, x->name);
        cr_assert_eq((uintptr_t)t->data % a4w4_st_dtype_size(t->dtype), 0,
                     "%s/%s misaligned", e->file, x->name);
    }
    cr_assert_eq(f.nmeta, e->nmeta, "%s: %zu metadata entries", e->file, f.nmeta);
    for (size_t i = 0; i < 8 && e->meta[i][0]; i++) {
        const char *v = a4w4_st_meta(&f, e->meta[i][0]);
        cr_assert_not_null(v, "%s: metadata %s missing", e->file, e->meta[i][0]);
        cr_assert_str_eq(v, e->meta[i][1], "%s: metadata %s", e->file, e->meta[i][0]);
    }
    cr_assert_null(a4w4_st_meta(&f, "no_such_key"));
    cr_assert_null(a4w4_st_find(&f, "no_such_tensor"));
    cr_assert_null(a4w4_st_find(&f, "Y_EXACT"), "lookup must be case-sensitive");
    a4w4_st_free(&f);
    cr_assert_null(f.buf);
    a4w4_st_free(&f); /* twice is fine */
}

Test(golden, every_bundle_matches_its_header)
{
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++)
        check_bundle(&golden[i]);
}

Test(golden, g1_spot_values)
{
    a4w4_st_file f;
    expect_ok(GOLDEN_DIR "/g1_m1_n256_k512.safetensors", &f);
    const a4w4_st_tensor *y = a4w4_st_find(&f, "y_exact");
    cr_assert_not_null(y);
    cr_assert_eq(y->dtype, A4W4_DT_BF16);
    cr_assert_eq(y->ndim, 2);
    cr_assert_eq(y->shape[0], 1);
    cr_assert_eq(y->shape[1], 256);
    cr_assert_eq(y->nbytes, 512);
    cr_assert_str_eq(a4w4_st_meta(&f, "M"), "1");
    cr_assert_str_eq(a4w4_st_meta(&f, "format"), "a4w4-case/1");
    /* unknown metadata keys are kept, not rejected */
    cr_assert_str_eq(a4w4_st_meta(&f, "agree_exact_ordered"), "256/256");
    /* y_exact and y_ordered agree in g1 (exact regime): same bytes at different places */
    const a4w4_st_tensor *yo = a4w4_st_find(&f, "y_ordered");
    cr_assert_not_null(yo);
    cr_assert_neq(y->data, yo->data);
    cr_assert_eq(memcmp(y->data, yo->data, 512), 0);
    /* the data section is 64-byte aligned in memory */
    cr_assert_eq((uintptr_t)(f.buf + f.data_start) % 64, 0);
    a4w4_st_free(&f);
}

/* Shapes agree with M, N, K metadata as contracts §7 lays bundles out. */
Test(golden, case_shapes_follow_metadata)
{
    DIR *d = opendir(GOLDEN_DIR);
    cr_assert_not_null(d);
    struct dirent *e;
    size_t nfiles = 0, ncases = 0;
    while ((e = readdir(d))) {
        size_t L = strlen(e->d_name);
        if (L < 12 || strcmp(e->d_name + L - 12, ".safetensors"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, e->d_name);
        a4w4_st_file f;
        expect_ok(path, &f);
        nfiles++;
        const char *fmt = a4w4_st_meta(&f, "format");
        cr_assert_not_null(fmt, "%s: no format", e->d_name);
        if (!strcmp(fmt, "a4w4-case/1")) {
            ncases++;
            size_t M = strtoul(a4w4_st_meta(&f, "M"), NULL, 10);
            size_t N = strtoul(a4w4_st_meta(&f, "N"), NULL, 10);
            size_t K = strtoul(a4w4_st_meta(&f, "K"), NULL, 10);
            const struct {
                const char *name;
                a4w4_st_dtype dt;
                size_t r, c;
            } want[] = {{"y_exact", A4W4_DT_BF16, M, N}, {"y_ordered", A4W4_DT_BF16, M, N},
                        {"a_fp4", A4W4_DT_U8, M, K / 2},  {"a_scale", A4W4_DT_U8, M, K / 32},
                        {"w_fp4", A4W4_DT_U8, N, K / 2},  {"w_scale", A4W4_DT_U8, N, K / 32},
                        {"w_fp4_shuffled", A4W4_DT_U8, N, K / 2}};
            for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
                const a4w4_st_tensor *t = a4w4_st_find(&f, want[i].name);
                cr_assert_not_null(t, "%s: %s missing", e->d_name, want[i].name);
                cr_assert_eq(t->dtype, want[i].dt, "%s/%s", e->d_name, want[i].name);
                cr_assert_eq(t->ndim, 2);
                cr_assert_eq(t->shape[0], want[i].r, "%s/%s rows", e->d_name, want[i].name);
                cr_assert_eq(t->shape[1], want[i].c, "%s/%s cols", e->d_name, want[i].name);
            }
            const a4w4_st_tensor *x = a4w4_st_find(&f, "x");
            if (x)
                cr_assert(x->dtype == A4W4_DT_BF16 && x->shape[0] == M && x->shape[1] == K);
            int swz = !strcmp(a4w4_st_meta(&f, "scale_swizzle_supported"), "true");
            cr_assert_eq(a4w4_st_find(&f, "w_scale_swizzled") != NULL, swz,
                         "%s: w_scale_swizzled presence vs scale_swizzle_supported",
                         e->d_name);
        }
        a4w4_st_free(&f);
    }
    closedir(d);
    cr_assert_geq(nfiles, 6, "expected at least 6 golden bundles, found %zu", nfiles);
    cr_assert_geq(ncases, 5);
}

/* ---------------------------------------------------------------- round trip */

Test(roundtrip, write_then_load_is_identity)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "roundtrip");
    char path[4096];
    TU_SNPRINTF(path, "%s/rt.safetensors", dir);

    uint8_t u8[15], u8b[256];
    uint16_t bf16[6] = {0x3f80, 0xbf80, 0x7fc0, 0x0001, 0x8000, 0x4049};
    uint16_t f16[4] = {0x3c00, 0xfc00, 0x7e00, 0x0400};
    float f32[8] = {1.0f, -2.5f, 3.25e-38f, 1e30f, 0.0f, -0.0f, 7.0f, 0.1f};
    float scalar = 42.5f;
    for (size_t i = 0; i < sizeof u8; i++)
        u8[i] = (uint8_t)(200 + i);
    for (size_t i = 0; i < sizeof u8b; i++)
        u8b[i] = (uint8_t)(i ^ 0x5A);
    const a4w4_st_tensor_in in[] = {
        {"u8_odd", A4W4_DT_U8, 2, {3, 5}, u8, 15},
        {"bf16", A4W4_DT_BF16, 2, {2, 3}, bf16, 0},
        {"f16", A4W4_DT_F16, 1, {4}, f16, 8},
        {"f32", A4W4_DT_F32, 3, {2, 2, 2}, f32, 32},
        {"scalar", A4W4_DT_F32, 0, {0}, &scalar, 4},
        {"empty", A4W4_DT_BF16, 2, {0, 7}, NULL, 0},
        {"eight_dims", A4W4_DT_U8, 8, {2, 2, 2, 2, 2, 2, 2, 2}, u8b, 256},
        {"name with \"quotes\" and \\ and \xc2\xb5", A4W4_DT_U8, 1, {3}, u8, 3},
    };
    const size_t n = sizeof in / sizeof in[0];
    const char *keys[] = {"format", "M", "tricky", "utf8", "empty"};
    const char *vals[] = {"a4w4-case/1", "1", "a \"q\" \\ back\nnl\ttab\x01", "\xc2\xb5\xe2\x86\x92",
                          ""};
    char err[512] = "";
    cr_assert_eq(a4w4_st_write(path, in, n, keys, vals, 5, err, sizeof err), 0, "%s", err);

    int has_tmp;
    cr_assert_eq(dir_entries(dir, &has_tmp), 1);
    cr_assert_eq(has_tmp, 0);

    /* framing, read independently of the loader */
    size_t fsz;
    uint8_t *raw = tu_read_file(path, &fsz);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = (hlen << 8) | raw[i];
    cr_assert_eq(hlen % 8, 0, "header length %llu not padded to 8", (unsigned long long)hlen);
    cr_assert_eq(raw[8], '{');
    cr_assert_eq(fsz, 8 + hlen + 15 + 12 + 8 + 32 + 4 + 0 + 256 + 3, "file size %zu", fsz);
    free(raw);

    a4w4_st_file f;
    expect_ok(path, &f);
    cr_assert_eq(f.ntensors, n);
    for (size_t i = 0; i < n; i++) {
        const a4w4_st_tensor *t = a4w4_st_find(&f, in[i].name);
        cr_assert_not_null(t, "tensor %s lost", in[i].name);
        cr_assert_eq(t->dtype, in[i].dtype, "%s dtype", in[i].name);
        cr_assert_eq(t->ndim, in[i].ndim, "%s ndim", in[i].name);
        for (int d = 0; d < in[i].ndim; d++)
            cr_assert_eq(t->shape[d], in[i].shape[d]);
        size_t want = i == 1 ? 12 : in[i].nbytes;
        cr_assert_eq(t->nbytes, want, "%s nbytes %zu", in[i].name, t->nbytes);
        if (want)
            cr_assert_eq(memcmp(t->data, in[i].data, want), 0, "%s bytes", in[i].name);
        cr_assert_eq((uintptr_t)t->data % a4w4_st_dtype_size(t->dtype), 0, "%s misaligned",
                     in[i].name);
    }
    cr_assert_eq(f.nmeta, 5);
    for (size_t i = 0; i < 5; i++) {
        cr_assert_str_eq(f.meta_keys[i], keys[i], "metadata order");
        cr_assert_str_eq(a4w4_st_meta(&f, keys[i]), vals[i], "metadata %s", keys[i]);
    }
    a4w4_st_free(&f);

    /* overwrite in place with different content */
    const a4w4_st_tensor_in one = {"only", A4W4_DT_U8, 1, {4}, "abcd", 4};
    cr_assert_eq(a4w4_st_write(path, &one, 1, NULL, NULL, 0, err, sizeof err), 0, "%s", err);
    expect_ok(path, &f);
    cr_assert_eq(f.ntensors, 1);
    cr_assert_eq(f.nmeta, 0);
    cr_assert_eq(memcmp(a4w4_st_find(&f, "only")->data, "abcd", 4), 0);
    a4w4_st_free(&f);
    cr_assert_eq(dir_entries(dir, &has_tmp), 1);
    cr_assert_eq(has_tmp, 0);
}

/* The exact bytes of a tiny file: the format as the safetensors spec writes it. */
Test(roundtrip, writer_bytes_exact)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "exact");
    char path[4096];
    TU_SNPRINTF(path, "%s/tiny.safetensors", dir);
    const uint8_t data[2] = {1, 2};
    const a4w4_st_tensor_in in = {"a", A4W4_DT_U8, 1, {2}, data, 0};
    const char *k[] = {"M"}, *v[] = {"1"};
    char err[512];
    cr_assert_eq(a4w4_st_write(path, &in, 1, k, v, 1, err, sizeof err), 0, "%s", err);
    const char json[] =
        "{\"__metadata__\":{\"M\":\"1\"},\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}";
    size_t jl = strlen(json), hl = (jl + 7) / 8 * 8;
    uint8_t want[256];
    put_le64(want, hl);
    memcpy(want + 8, json, jl);
    memset(want + 8 + jl, ' ', hl - jl);
    want[8 + hl] = 1;
    want[8 + hl + 1] = 2;
    size_t n;
    uint8_t *got = tu_read_file(path, &n);
    cr_assert_eq(n, 8 + hl + 2, "size %zu", n);
    cr_assert_eq(memcmp(got, want, n), 0, "bytes differ: %.*s", (int)(n - 8), got + 8);
    free(got);
}

Test(roundtrip, empty_file_and_big_offsets)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "empty");
    char path[4096];
    TU_SNPRINTF(path, "%s/none.safetensors", dir);
    char err[512];
    cr_assert_eq(a4w4_st_write(path, NULL, 0, NULL, NULL, 0, err, sizeof err), 0, "%s", err);
    a4w4_st_file f;
    expect_ok(path, &f);
    cr_assert_eq(f.ntensors, 0);
    cr_assert_eq(f.nmeta, 0);
    cr_assert_eq(f.data_len, 0);
    a4w4_st_free(&f);
    /* a dimension cJSON's %g printer would write as 1e+15: must come back exact */
    const a4w4_st_tensor_in z = {"z", A4W4_DT_F32, 2, {1000000000000001u, 0}, NULL, 0};
    cr_assert_eq(a4w4_st_write(path, &z, 1, NULL, NULL, 0, err, sizeof err), 0, "%s", err);
    expect_ok(path, &f);
    cr_assert_eq(a4w4_st_find(&f, "z")->shape[0], 1000000000000001u);
    a4w4_st_free(&f);
}

/* ---------------------------------------------------------------- load rules (one each) */

/* A valid one-tensor entry, for files that break a rule elsewhere. */
#define T_OK "\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}"

Test(load_rules, valid_baseline)
{
    a4w4_st_file f;
    expect_ok(craft("baseline", "{" T_OK "}   ", 4), &f);
    cr_assert_eq(f.ntensors, 1);
    cr_assert_eq(f.tensors[0].data[0], 3); /* pattern i*7+3 */
    cr_assert_eq(f.tensors[0].data[3], 24);
    a4w4_st_free(&f);
}

Test(load_rules, file_shorter_than_8_bytes)
{
    tu_mkdir_p(TMP_DIR "/rules");
    const char *p = TMP_DIR "/rules/short.safetensors";
    tu_write_file(p, "", 0);
    EXPECT_FAIL(p, "shorter than 8 bytes");
    tu_write_file(p, "\x02\0\0\0\0\0\0", 7);
    EXPECT_FAIL(p, "shorter than 8 bytes", "(7 bytes)");
}

Test(load_rules, header_length_zero)
{
    tu_mkdir_p(TMP_DIR "/rules");
    const char *p = TMP_DIR "/rules/hlen0.safetensors";
    craft_raw(p, 0, "{}", 2, 0);
    EXPECT_FAIL(p, "header length is 0");
}

Test(load_rules, header_length_past_end)
{
    tu_mkdir_p(TMP_DIR "/rules");
    const char *p = TMP_DIR "/rules/hlenbig.safetensors";
    craft_raw(p, 3, "{}", 2, 0); /* one byte past */
    EXPECT_FAIL(p, "header length 3", "past the end of the file", "(2 bytes");
    craft_raw(p, UINT64_MAX, "{}", 2, 100);
    EXPECT_FAIL(p, "past the end of the file");
    craft_raw(p, (uint64_t)1 << 63, "{}", 2, 100);
    EXPECT_FAIL(p, "past the end of the file");
}

Test(load_rules, header_not_valid_json)
{
    EXPECT_FAIL(craft("badjson1", "{\"t\":", 0), "not valid JSON");
    EXPECT_FAIL(craft("badjson2", "{\"t\":{\"dtype\":\"U8\",}}", 0), "not valid JSON");
    EXPECT_FAIL(craft("badjson3", "{'t':1}", 0), "not valid JSON");
    EXPECT_FAIL(craft("badjson4", "{\"t\":\"unterminated}", 0), "not valid JSON");
}

Test(load_rules, header_not_an_object)
{
    EXPECT_FAIL(craft("notobj1", "[1,2]", 0), "not a JSON object", "an array");
    EXPECT_FAIL(craft("notobj2", "\"str\"", 0), "not a JSON object", "a string");
    EXPECT_FAIL(craft("notobj3", "42   ", 0), "not a JSON object", "a number");
}

Test(load_rules, header_must_start_with_brace)
{
    EXPECT_FAIL(craft("brace1", " {" T_OK "}", 4), "must start with '{'", "0x20");
    EXPECT_FAIL(craft("brace2", "\n{}", 0), "must start with '{'", "0x0a");
}

Test(load_rules, header_nul_byte)
{
    tu_mkdir_p(TMP_DIR "/rules");
    const char *p = TMP_DIR "/rules/nul.safetensors";
    craft_raw(p, 8, "{}\0     ", 8, 0);
    EXPECT_FAIL(p, "NUL byte", "offset 2");
}

Test(load_rules, header_trailing_bytes)
{
    EXPECT_FAIL(craft("trail1", "{}x", 0), "trailing bytes", "offset 2");
    EXPECT_FAIL(craft("trail2", "{} {}", 0), "trailing bytes", "offset 3");
    a4w4_st_file f; /* trailing JSON whitespace is padding, allowed */
    expect_ok(craft("trail_ok", "{" T_OK "} \t\r\n  ", 4), &f);
    a4w4_st_free(&f);
}

Test(load_rules, entry_missing_dtype)
{
    EXPECT_FAIL(craft("nodtype", "{\"t\":{\"shape\":[4],\"data_offsets\":[0,4]}}", 4),
                "tensor 't'", "missing dtype");
}

Test(load_rules, entry_missing_shape)
{
    EXPECT_FAIL(craft("noshape", "{\"t\":{\"dtype\":\"U8\",\"data_offsets\":[0,4]}}", 4),
                "tensor 't'", "missing shape");
}

Test(load_rules, entry_missing_data_offsets)
{
    EXPECT_FAIL(craft("nooffs", "{\"t\":{\"dtype\":\"U8\",\"shape\":[4]}}", 4), "tensor 't'",
                "missing data_offsets");
    /* keys are case-sensitive: "Data_Offsets" is an unknown key, so data_offsets is missing */
    EXPECT_FAIL(craft("nooffs2",
                      "{\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"Data_Offsets\":[0,4]}}", 4),
                "missing data_offsets");
}

Test(load_rules, entry_wrong_json_types)
{
    EXPECT_FAIL(craft("type_entry", "{\"t\":[1,2]}", 0), "tensor 't'",
                "entry must be an object", "an array");
    EXPECT_FAIL(craft("type_dtype", "{\"t\":{\"dtype\":8,\"shape\":[4],\"data_offsets\":[0,4]}}", 4),
                "dtype must be a string", "a number");
    EXPECT_FAIL(craft("type_shape",
                      "{\"t\":{\"dtype\":\"U8\",\"shape\":\"4\",\"data_offsets\":[0,4]}}", 4),
                "shape must be an array", "a string");
    EXPECT_FAIL(craft("type_shape_el",
                      "{\"t\":{\"dtype\":\"U8\",\"shape\":[[4]],\"data_offsets\":[0,4]}}", 4),
                "shape[0] is not a number", "an array");
    EXPECT_FAIL(craft("type_shape_null",
                      "{\"t\":{\"dtype\":\"U8\",\"shape\":[2,null],\"data_offsets\":[0,4]}}", 4),
                "shape[1] is not a number", "null");
    EXPECT_FAIL(craft("type_offs",
                      "{\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":{\"a\":0}}}", 4),
                "data_offsets must be [begin, end]", "an object");
    EXPECT_FAIL(craft("type_offs_el",
                      "{\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[\"0\",4]}}", 4),
                "data_offsets[0] is not a number", "a string");
    EXPECT_FAIL(craft("type_offs_bool",
                      "{\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,true]}}", 4),
                "data_offsets[1] is not a number", "a boolean");
}

Test(load_rules, unknown_dtype)
{
    EXPECT_FAIL(craft("dt_f64", "{\"t\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8),
                "tensor 't'", "unknown dtype 'F64'");
    EXPECT_FAIL(craft("dt_lower", "{\"t\":{\"dtype\":\"u8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4),
                "unknown dtype 'u8'");
    EXPECT_FAIL(craft("dt_empty", "{\"t\":{\"dtype\":\"\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4),
                "unknown dtype ''");
}

Test(load_rules, f8_e8m0_counts_bytes_and_f4_counts_nibbles)
{
    a4w4_st_file f;
    expect_ok(craft("aliases",
                    "{\"s\":{\"dtype\":\"F8_E8M0\",\"shape\":[2],\"data_offsets\":[0,2]},"
                    "\"q\":{\"dtype\":\"F4\",\"shape\":[2,1],\"data_offsets\":[2,3]},"
                    "\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[4,8]}}",
                    8),
              &f);
    cr_assert_eq(a4w4_st_find(&f, "s")->dtype, A4W4_DT_F8_E8M0);
    cr_assert_eq(a4w4_st_find(&f, "s")->nbytes, 2);
    cr_assert_eq(a4w4_st_find(&f, "q")->dtype, A4W4_DT_F4);
    cr_assert_eq(a4w4_st_find(&f, "q")->nbytes, 1, "F4 [2, 1]: two 4-bit elements, one byte");
    cr_assert_eq(a4w4_st_find(&f, "h")->dtype, A4W4_DT_F16);
    a4w4_st_free(&f);
}

Test(load_rules, shape_negative)
{
    EXPECT_FAIL(craft("shape_neg", "{\"t\":{\"dtype\":\"U8\",\"shape\":[4,-1],\"data_offsets\":[0,4]}}", 4),
                "tensor 't'", "shape[1] is negative", "(-1)");
}

Test(load_rules, shape_non_integer)
{
    EXPECT_FAIL(craft("shape_frac", "{\"t\":{\"dtype\":\"U8\",\"shape\":[2.5],\"data_offsets\":[0,4]}}", 4),
                "shape[0] is not an integer", "(2.5)");
    EXPECT_FAIL(craft("shape_huge", "{\"t\":{\"dtype\":\"U8\",\"shape\":[1e300],\"data_offsets\":[0,4]}}", 4),
                "shape[0] is too large");
    EXPECT_FAIL(craft("shape_2p53p2",
                      "{\"t\":{\"dtype\":\"U8\",\"shape\":[9007199254740994],\"data_offsets\":[0,4]}}", 4),
                "shape[0] is too large");
}

Test(load_rules, shape_more_than_8_dims)
{
    EXPECT_FAIL(craft("shape_9d",
                      "{\"t\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,4],\"data_offsets\":[0,4]}}", 4),
                "shape has 9 dims", "more than 8");
    a4w4_st_file f; /* 8 dims and 0 dims (a scalar, one element) are fine */
    expect_ok(craft("shape_8d",
                    "{\"t\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,2,2],\"data_offsets\":[0,4]},"
                    "\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[4,8]}}",
                    8),
              &f);
    cr_assert_eq(a4w4_st_find(&f, "t")->ndim, 8);
    cr_assert_eq(a4w4_st_find(&f, "s")->ndim, 0);
    cr_assert_eq(a4w4_st_find(&f, "s")->nbytes, 4);
    a4w4_st_free(&f);
}

Test(load_rules, shape_product_overflow)
{
    /* 2^53 * 2^53 elements */
    EXPECT_FAIL(craft("ovf_elems",
                      "{\"t\":{\"dtype\":\"U8\",\"shape\":[9007199254740992,9007199254740992],"
                      "\"data_offsets\":[0,4]}}", 4),
                "tensor 't'", "element count overflows");
    /* 2^53 * 2^9 = 2^62 elements fit, times 4 bytes does not */
    EXPECT_FAIL(craft("ovf_bytes",
                      "{\"t\":{\"dtype\":\"F32\",\"shape\":[9007199254740992,512],"
                      "\"data_offsets\":[0,4]}}", 4),
                "byte count overflows");
    /* a zero dimension makes the product 0 whatever the others are */
    a4w4_st_file f;
    expect_ok(craft("ovf_zero",
                    "{\"t\":{\"dtype\":\"F32\",\"shape\":[9007199254740992,0,9007199254740992],"
                    "\"data_offsets\":[0,0]}}", 0),
              &f);
    a4w4_st_free(&f);
}

Test(load_rules, data_offsets_not_begin_end)
{
    EXPECT_FAIL(craft("offs_len1", "{\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4]}}", 4),
                "data_offsets must be [begin, end]", "array of 1");
    EXPECT_FAIL(craft("offs_len3", "{\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4,8]}}", 8),
                "data_offsets must be [begin, end]", "array of 3");
    EXPECT_FAIL(craft("offs_rev", "{\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[8,4]}}", 8),
                "data_offsets [8, 4] has begin > end");
    EXPECT_FAIL(craft("offs_neg", "{\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[-4,0]}}", 8),
                "data_offsets[0] is negative");
    EXPECT_FAIL(craft("offs_frac", "{\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4.5]}}", 8),
                "data_offsets[1] is not an integer");
}

Test(load_rules, data_offsets_past_data_section)
{
    const char *p = craft("y_past",
                          "{\"__metadata__\":{\"M\":\"1\"},"
                          "\"y_exact\":{\"dtype\":\"BF16\",\"shape\":[1,300],\"data_offsets\":[0,600]}}",
                          512);
    EXPECT_FAIL(p, "tensor 'y_exact' data_offsets [0, 600] past the data section (512 bytes)");
    char want[4200];
    snprintf(want, sizeof want,
             "%s: tensor 'y_exact' data_offsets [0, 600] past the data section (512 bytes)", p);
    a4w4_st_file f;
    char err[512];
    cr_assert_eq(a4w4_st_load(p, &f, err, sizeof err), A4W4_ST_BADINPUT);
    cr_assert_str_eq(err, want);
    /* an empty tensor starting past the end is outside too */
    EXPECT_FAIL(craft("empty_past", "{\"e\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[9,9]}}", 8),
                "data_offsets [9, 9] past the data section (8 bytes)");
    /* ending exactly at the end is inside */
    expect_ok(craft("end_at_end", "{\"e\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]}}", 8),
              &f);
    a4w4_st_free(&f);
}

Test(load_rules, tensors_overlap)
{
    EXPECT_FAIL(craft("overlap1",
                      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[256],\"data_offsets\":[0,512]},"
                      "\"b\":{\"dtype\":\"BF16\",\"shape\":[256],\"data_offsets\":[256,768]}}", 768),
                "tensors 'a' [0, 512] and 'b' [256, 768] overlap");
    /* header order does not matter; containment and equal ranges count */
    EXPECT_FAIL(craft("overlap2",
                      "{\"in\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[8,12]},"
                      "\"out\":{\"dtype\":\"U8\",\"shape\":[32],\"data_offsets\":[0,32]}}", 32),
                "'out' [0, 32] and 'in' [8, 12] overlap");
    EXPECT_FAIL(craft("overlap3",
                      "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                      "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4),
                "overlap");
    /* a long tensor overlapping a later, non-adjacent one */
    EXPECT_FAIL(craft("overlap4",
                      "{\"long\":{\"dtype\":\"U8\",\"shape\":[100],\"data_offsets\":[0,100]},"
                      "\"x\":{\"dtype\":\"U8\",\"shape\":[10],\"data_offsets\":[100,110]},"
                      "\"y\":{\"dtype\":\"U8\",\"shape\":[10],\"data_offsets\":[50,60]}}", 110),
                "'long' [0, 100] and 'y' [50, 60] overlap");
    /* adjacent tensors, gaps, and empty tensors inside others are fine */
    a4w4_st_file f;
    expect_ok(craft("adjacent",
                    "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                    "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]},"
                    "\"gap\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[10,12]},"
                    "\"e\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[2,2]}}", 16),
              &f);
    cr_assert_eq(f.ntensors, 4);
    a4w4_st_free(&f);
}

Test(load_rules, size_mismatch)
{
    EXPECT_FAIL(craft("size_bf16",
                      "{\"y\":{\"dtype\":\"BF16\",\"shape\":[1,256],\"data_offsets\":[0,510]}}", 512),
                "tensor 'y' shape [1, 256] x BF16 is 512 bytes but data_offsets [0, 510] span 510 bytes");
    EXPECT_FAIL(craft("size_f32",
                      "{\"y\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,16]}}", 16),
                "is 8 bytes", "span 16 bytes");
    EXPECT_FAIL(craft("size_f4",
                      "{\"q\":{\"dtype\":\"F4\",\"shape\":[4,8],\"data_offsets\":[0,32]}}", 32),
                "x F4 is 16 bytes", "span 32 bytes");
    EXPECT_FAIL(craft("odd_f4",
                      "{\"q\":{\"dtype\":\"F4\",\"shape\":[3,1],\"data_offsets\":[0,2]}}", 2),
                "tensor 'q' shape [3, 1] x F4 has an odd element count");
}

Test(load_rules, duplicate_tensor_names)
{
    EXPECT_FAIL(craft("dup_name", "{" T_OK "," T_OK "}", 4), "duplicate tensor name 't'");
    EXPECT_FAIL(craft("dup_meta",
                      "{\"__metadata__\":{},\"__metadata__\":{}," T_OK "}", 4),
                "duplicate key '__metadata__'");
    EXPECT_FAIL(craft("dup_field",
                      "{\"t\":{\"dtype\":\"U8\",\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4),
                "tensor 't' has key 'dtype' twice");
    a4w4_st_file f; /* names differing only in case are distinct */
    expect_ok(craft("case_names",
                    "{\"t\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
                    "\"T\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2,4]}}", 4),
              &f);
    cr_assert_eq(a4w4_st_find(&f, "T")->data, a4w4_st_find(&f, "t")->data + 2);
    a4w4_st_free(&f);
}

Test(load_rules, metadata_object_of_strings)
{
    EXPECT_FAIL(craft("meta_arr", "{\"__metadata__\":[\"M\",\"1\"]," T_OK "}", 4),
                "__metadata__ must be an object of strings", "an array");
    EXPECT_FAIL(craft("meta_str", "{\"__metadata__\":\"M=1\"," T_OK "}", 4),
                "__metadata__ must be an object of strings", "a string");
    EXPECT_FAIL(craft("meta_num", "{\"__metadata__\":{\"format\":\"a4w4-case/1\",\"M\":1}," T_OK "}", 4),
                "__metadata__ must be an object of strings", "value of 'M' is a number");
    EXPECT_FAIL(craft("meta_nested", "{\"__metadata__\":{\"x\":{\"y\":\"z\"}}," T_OK "}", 4),
                "value of 'x' is an object");
    EXPECT_FAIL(craft("meta_dupkey", "{\"__metadata__\":{\"M\":\"1\",\"M\":\"2\"}," T_OK "}", 4),
                "duplicate __metadata__ key 'M'");
    /* unknown keys are kept; metadata may come anywhere; tensor entries' unknown keys ignored */
    a4w4_st_file f;
    expect_ok(craft("meta_ok",
                    "{\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4],\"extra\":[1,{}]},"
                    "\"__metadata__\":{\"M\":\"7\",\"whatever\":\"kept\",\"e\":\"\"}}", 4),
              &f);
    cr_assert_str_eq(a4w4_st_meta(&f, "M"), "7");
    cr_assert_str_eq(a4w4_st_meta(&f, "whatever"), "kept");
    cr_assert_str_eq(a4w4_st_meta(&f, "e"), "");
    cr_assert_eq(f.ntensors, 1);
    a4w4_st_free(&f);
}

Test(load_rules, io_errors)
{
    EXPECT_FAIL(TMP_DIR "/rules/does-not-exist.safetensors", "cannot open",
                "No such file");
    tu_mkdir_p(TMP_DIR "/rules/a-directory.safetensors");
    EXPECT_FAIL(TMP_DIR "/rules/a-directory.safetensors", "not a regular file");
    a4w4_st_file f;
    char err[256];
    cr_assert_eq(a4w4_st_load(NULL, &f, err, sizeof err), A4W4_ST_BADINPUT);
    cr_assert_eq(a4w4_st_load("x", NULL, err, sizeof err), A4W4_ST_BADINPUT);
    cr_assert_eq(a4w4_st_load("/nonexistent/x", &f, NULL, 0), A4W4_ST_IO); /* no err buffer is fine */
    char tiny[8];
    cr_assert_eq(a4w4_st_load("/nonexistent/x", &f, tiny, sizeof tiny), A4W4_ST_IO);
    cr_assert_eq(strlen(tiny), 7, "message must be truncated to the buffer");
}

Test(load_rules, names_in_messages_stay_one_line)
{
    EXPECT_FAIL(craft("ctl_name",
                      "{\"bad\\nname\":{\"dtype\":\"X\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4),
                "tensor 'bad?name'", "unknown dtype 'X'");
}

/* Every truncation of a real bundle fails cleanly, and bit flips in its header never crash
 * the loader (run under ASan/UBSan to make this mean something). */
Test(load_rules, truncations_and_header_flips)
{
    size_t n;
    uint8_t *b = tu_read_file(GOLDEN_DIR "/g5_m8_n48_k320.safetensors", &n);
    char err[512];
    a4w4_st_file f;
    for (size_t len = 0; len < n; len += (len < 1200 ? 1 : 997)) {
        err[0] = '\0';
        cr_assert_eq(a4w4_st_load_mem("g5", b, len, &f, err, sizeof err), A4W4_ST_BADINPUT,
                     "truncation to %zu bytes loaded", len);
        cr_assert_eq(strncmp(err, "g5: ", 4), 0, "%s", err);
    }
    cr_assert_eq(a4w4_st_load_mem("g5", b, n, &f, err, sizeof err), 0, "%s", err);
    size_t hend = f.data_start;
    a4w4_st_free(&f);
    size_t ok = 0, bad = 0;
    static const uint8_t masks[] = {0x01, 0x02, 0x20, 0x80};
    for (size_t i = 0; i < hend; i++)
        for (size_t m = 0; m < sizeof masks; m++) {
            b[i] ^= masks[m];
            err[0] = '\0';
            int rc = a4w4_st_load_mem("g5", b, n, &f, err, sizeof err);
            if (rc == 0) {
                ok++;
                a4w4_st_free(&f);
            } else {
                bad++;
                cr_assert_eq(strncmp(err, "g5: ", 4), 0, "%s", err);
                cr_assert_null(strchr(err, '\n'));
            }
            b[i] ^= masks[m];
        }
    cr_assert_gt(bad, ok, "most header flips must be rejected (%zu ok, %zu rejected)", ok, bad);
    free(b);
}

/* ---------------------------------------------------------------- writer failures */

static const char *const OLD = "old content\n";

/* dir holds exactly `path` with OLD in it, and nothing else. */
static void expect_untouched(const char *dir, const char *path)
{
    int has_tmp;
    cr_assert_eq(dir_entries(dir, &has_tmp), 1, "stray files left in %s", dir);
    cr_assert_eq(has_tmp, 0, "temp file left in %s", dir);
    size_t n;
    uint8_t *b = tu_read_file(path, &n);
    cr_assert_eq(n, strlen(OLD));
    cr_assert_eq(memcmp(b, OLD, n), 0, "existing file was modified");
    free(b);
}

Test(writer_fail, directory_missing_or_not_a_directory)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "wfail-dir");
    char path[4096], err[512];
    const a4w4_st_tensor_in t = {"t", A4W4_DT_U8, 1, {4}, "abcd", 0};
    TU_SNPRINTF(path, "%s/no-such-dir/x.safetensors", dir);
    cr_assert_eq(a4w4_st_write(path, &t, 1, NULL, NULL, 0, err, sizeof err), A4W4_ST_IO);
    cr_assert_not_null(strstr(err, "cannot create temporary file"), "%s", err);
    cr_assert_eq(strncmp(err, path, strlen(path)), 0, "%s", err);
    cr_assert(!file_exists(path));

    char file_as_dir[4096];
    TU_SNPRINTF(file_as_dir, "%s/plain-file", dir);
    tu_write_file(file_as_dir, OLD, strlen(OLD));
    TU_SNPRINTF(path, "%s/plain-file/x.safetensors", dir);
    cr_assert_eq(a4w4_st_write(path, &t, 1, NULL, NULL, 0, err, sizeof err), A4W4_ST_IO);
    cr_assert_not_null(strstr(err, "Not a directory"), "%s", err);
    expect_untouched(dir, file_as_dir);
}

Test(writer_fail, directory_not_writable)
{
    if (geteuid() == 0)
        cr_skip_test("running as root: permission bits do not stop root");
    const char *dir = tu_scratch_dir(TMP_DIR, "wfail-ro");
    char path[4096], err[512];
    TU_SNPRINTF(path, "%s/x.safetensors", dir);
    tu_write_file(path, OLD, strlen(OLD));
    cr_assert_eq(chmod(dir, 0555), 0);
    const a4w4_st_tensor_in t = {"t", A4W4_DT_U8, 1, {4}, "abcd", 0};
    int rc = a4w4_st_write(path, &t, 1, NULL, NULL, 0, err, sizeof err);
    chmod(dir, 0755);
    cr_assert_eq(rc, A4W4_ST_IO);
    cr_assert_not_null(strstr(err, "Permission denied"), "%s", err);
    expect_untouched(dir, path);
}

Test(writer_fail, inconsistent_tensor_size)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "wfail-size");
    char path[4096], err[512];
    TU_SNPRINTF(path, "%s/x.safetensors", dir);
    tu_write_file(path, OLD, strlen(OLD));
    uint16_t y[6] = {0};
    const a4w4_st_tensor_in t[] = {{"ok", A4W4_DT_U8, 1, {4}, "abcd", 4},
                                   {"y", A4W4_DT_BF16, 2, {2, 3}, y, 6}};
    cr_assert_eq(a4w4_st_write(path, t, 2, NULL, NULL, 0, err, sizeof err), A4W4_ST_BADINPUT);
    cr_assert_not_null(strstr(err, "tensor 'y' nbytes 6 does not match shape [2, 3] x BF16 = 12 bytes"),
                       "%s", err);
    expect_untouched(dir, path);
}

Test(writer_fail, invalid_inputs_create_nothing)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "wfail-inputs");
    char path[4096], err[512];
    TU_SNPRINTF(path, "%s/x.safetensors", dir);
    tu_write_file(path, OLD, strlen(OLD));
    const uint8_t d[4] = {0};
    const struct {
        a4w4_st_tensor_in t[2];
        size_t n;
        const char *words;
    } bad[] = {
        {{{"a", A4W4_DT_U8, 1, {4}, d, 0}, {"a", A4W4_DT_U8, 1, {4}, d, 0}}, 2,
         "duplicate tensor name 'a'"},
        {{{"__metadata__", A4W4_DT_U8, 1, {4}, d, 0}}, 1, "may not be named '__metadata__'"},
        {{{"", A4W4_DT_U8, 1, {4}, d, 0}}, 1, "empty name"},
        {{{NULL, A4W4_DT_U8, 1, {4}, d, 0}}, 1, "empty name"},
        {{{"a", (a4w4_st_dtype)7, 1, {4}, d, 0}}, 1, "unknown dtype 7"},
        {{{"a", A4W4_DT_U8, 9, {4}, d, 0}}, 1, "ndim 9 outside [0, 8]"},
        {{{"a", A4W4_DT_U8, -1, {4}, d, 0}}, 1, "ndim -1"},
        {{{"a", A4W4_DT_U8, 1, {4}, NULL, 0}}, 1, "NULL data for 4 bytes"},
        {{{"a", A4W4_DT_F32, 2, {SIZE_MAX / 2, 2}, d, 0}}, 1, "overflows"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        cr_assert_eq(a4w4_st_write(path, bad[i].t, bad[i].n, NULL, NULL, 0, err, sizeof err),
                     A4W4_ST_BADINPUT,
                     "case %zu accepted", i);
        cr_assert_not_null(strstr(err, bad[i].words), "case %zu: %s", i, err);
        expect_untouched(dir, path);
    }
    const a4w4_st_tensor_in t = {"a", A4W4_DT_U8, 1, {4}, d, 0};
    const char *k2[] = {"M", "M"}, *v2[] = {"1", "2"};
    cr_assert_eq(a4w4_st_write(path, &t, 1, k2, v2, 2, err, sizeof err), A4W4_ST_BADINPUT);
    cr_assert_not_null(strstr(err, "duplicate metadata key 'M'"), "%s", err);
    const char *k1[] = {"M"}, *v1[] = {NULL};
    cr_assert_eq(a4w4_st_write(path, &t, 1, k1, v1, 1, err, sizeof err), A4W4_ST_BADINPUT);
    cr_assert_not_null(strstr(err, "NULL key or value"), "%s", err);
    expect_untouched(dir, path);
}

/* A write that fails half-way (file size limit) removes its temp file and keeps the old one. */
Test(writer_fail, write_error_midway_removes_temp)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "wfail-fsize");
    char path[4096], err[512];
    TU_SNPRINTF(path, "%s/x.safetensors", dir);
    tu_write_file(path, OLD, strlen(OLD));
    size_t big = 1 << 20;
    uint8_t *d = calloc(big, 1);
    cr_assert_not_null(d);
    const a4w4_st_tensor_in t = {"big", A4W4_DT_U8, 1, {big}, d, 0};
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old_lim, lim;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
    lim = old_lim;
    lim.rlim_cur = 64 * 1024;
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int rc = a4w4_st_write(path, &t, 1, NULL, NULL, 0, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old_lim);
    free(d);
    cr_assert_eq(rc, A4W4_ST_IO);
    cr_assert_not_null(strstr(err, "write to temporary file"), "%s", err);
    cr_assert_not_null(strstr(err, "File too large"), "%s", err);
    expect_untouched(dir, path);
}

/* ---------------------------------------------------------------- mutate_bundle tool */

static int run_cmd(const char *cmd, char *out, size_t outlen)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t k = fread(out, 1, outlen - 1, p);
    out[k] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(mutate_bundle, all_verbs)
{
    if (access(TOOL, X_OK))
        cr_skip_test("%s not built (build target mutate_bundle)", TOOL);
    const char *dir = tu_scratch_dir(TMP_DIR, "mutate");
    const char *g1 = GOLDEN_DIR "/g1_m1_n256_k512.safetensors";
    char cmd[8192], out[1024], o[4096], err[512];
    a4w4_st_file a, b;
    expect_ok(g1, &a);

    /* flip: low byte of BF16 element (0, 5) of y_exact = byte 10 */
    TU_SNPRINTF(o, "%s/flip.safetensors", dir);
    snprintf(cmd, sizeof cmd, "%s flip %s %s y_exact 10", TOOL, g1, o);
    cr_assert_eq(run_cmd(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_not_null(strstr(out, "(0, 5)"), "flip output: %s", out);
    expect_ok(o, &b);
    cr_assert_eq(b.size, a.size);
    size_t diffs = 0, at = 0;
    for (size_t i = 0; i < a.size; i++)
        if (a.buf[i] != b.buf[i]) {
            diffs++;
            at = i;
        }
    cr_assert_eq(diffs, 1);
    cr_assert_eq(a.buf + at, a4w4_st_find(&a, "y_exact")->data + 10);
    cr_assert_eq(a.buf[at] ^ b.buf[at], 0x01);
    a4w4_st_free(&b);

    /* truncate */
    TU_SNPRINTF(o, "%s/trunc.safetensors", dir);
    snprintf(cmd, sizeof cmd, "%s truncate %s %s 1000", TOOL, g1, o);
    cr_assert_eq(run_cmd(cmd, out, sizeof out), 0, "%s", out);
    size_t n;
    uint8_t *t = tu_read_file(o, &n);
    cr_assert_eq(n, 1000);
    cr_assert_eq(memcmp(t, a.buf, 1000), 0);
    free(t);
    EXPECT_FAIL(o, "past the data section");

    /* lie-offset */
    TU_SNPRINTF(o, "%s/lie.safetensors", dir);
    snprintf(cmd, sizeof cmd, "%s lie-offset %s %s w_scale", TOOL, g1, o);
    cr_assert_eq(run_cmd(cmd, out, sizeof out), 0, "%s", out);
    EXPECT_FAIL(o, "tensor 'w_scale' data_offsets", "past the data section (144656 bytes)");

    /* drop */
    TU_SNPRINTF(o, "%s/drop.safetensors", dir);
    snprintf(cmd, sizeof cmd, "%s drop %s %s w_scale_swizzled", TOOL, g1, o);
    cr_assert_eq(run_cmd(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_eq(a4w4_st_load(o, &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.ntensors, a.ntensors - 1);
    cr_assert_null(a4w4_st_find(&b, "w_scale_swizzled"));
    cr_assert_eq(b.nmeta, a.nmeta);
    cr_assert_str_eq(a4w4_st_meta(&b, "M"), "1");
    for (size_t i = 0; i < b.ntensors; i++) {
        const a4w4_st_tensor *x = &b.tensors[i], *y = a4w4_st_find(&a, x->name);
        cr_assert_not_null(y);
        cr_assert_eq(x->nbytes, y->nbytes);
        cr_assert_eq(memcmp(x->data, y->data, x->nbytes), 0, "%s changed", x->name);
    }
    a4w4_st_free(&b);

    /* bad usage: exit 2, one line */
    const char *bad[] = {"", "frob a b", "flip a b", "truncate x y z",
                         "flip IN OUT no_such_tensor 0", "flip IN OUT y_exact 512",
                         "drop IN OUT no_such_tensor", "truncate IN OUT 99999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[1024], full[4096];
        snprintf(args, sizeof args, "%s", bad[i]);
        const char *argp = args;
        char *in = strstr(args, "IN");
        if (in) {
            *in = '\0';
            TU_SNPRINTF(full, "%s%s %s/bad.safetensors%s", args, g1, dir, in + 6);
            argp = full;
        }
        snprintf(cmd, sizeof cmd, "%s %s 2>&1", TOOL, argp);
        cr_assert_eq(run_cmd(cmd, out, sizeof out), 2, "'%s' -> %s", bad[i], out);
        cr_assert_neq(out[0], '\0');
    }
    TU_SNPRINTF(o, "%s/bad.safetensors", dir);
    cr_assert(!file_exists(o), "bad usage must not write OUT");
    a4w4_st_free(&a);
}

/* ---------------------------------------------------------------- the real library's files */

#define ST_REAL A4W4_SOURCE_DIR "/tests/data/st_real"

/* Every file the safetensors library wrote (tests/data/st_real/NOTICE) loads, F4 shapes count
 * 4-bit elements (the byte count is half the element count), and writing the loaded tensors
 * and metadata back through a4w4_st_write in the file's own order gives the same bytes: the
 * reader and the writer agree with the library on dtype names, sizes, layout and header. */
Test(real_library, files_load_and_write_back_byte_equal)
{
    static const char *const files[] = {"mixed", "names", "multi_meta", "operands",
                                        "f4_e8m0_only", "empty"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char in[4096], out[4096], err[512];
        snprintf(in, sizeof in, ST_REAL "/%s.safetensors", files[i]);
        TU_SNPRINTF(out, "%s/%s.safetensors", tu_scratch_dir(TMP_DIR, "st-real"), files[i]);
        a4w4_st_file f;
        cr_assert_eq(a4w4_st_load(in, &f, err, sizeof err), 0, "%s", err);
        a4w4_st_tensor_in t[16];
        cr_assert_leq(f.ntensors, 16);
        for (size_t k = 0; k < f.ntensors; k++) {
            const a4w4_st_tensor *x = &f.tensors[k];
            t[k] = (a4w4_st_tensor_in){x->name, x->dtype, x->ndim, {0}, x->data, x->nbytes};
            memcpy(t[k].shape, x->shape, sizeof x->shape);
            if (x->dtype == A4W4_DT_F4) {
                size_t n = 1;
                for (int d = 0; d < x->ndim; d++)
                    n *= x->shape[d];
                cr_expect_eq(x->nbytes * 2, n, "%s: F4 tensor %s: %zu bytes for %zu elements",
                             files[i], x->name, x->nbytes, n);
            }
        }
        cr_assert_eq(a4w4_st_write(out, t, f.ntensors, (const char *const *)f.meta_keys,
                                   (const char *const *)f.meta_vals, f.nmeta, err, sizeof err),
                     0, "%s", err);
        size_t na, nb;
        uint8_t *a = tu_read_file(in, &na), *b = tu_read_file(out, &nb);
        cr_assert(na == nb && !memcmp(a, b, na), "%s: written back differs from the library's "
                  "file (%zu vs %zu bytes)", files[i], nb, na);
        free(a);
        free(b);
        a4w4_st_free(&f);
    }
}

Test(real_library, operand_bundle_f4_and_e8m0_read_as_packed_bytes)
{
    char err[512];
    a4w4_st_file f;
    cr_assert_eq(a4w4_st_load(ST_REAL "/operands.safetensors", &f, err, sizeof err), 0, "%s",
                 err);
    const a4w4_st_tensor *a = a4w4_st_find(&f, "a_fp4"), *s = a4w4_st_find(&f, "a_scale");
    cr_assert(a && s);
    cr_expect_eq(a->dtype, A4W4_DT_F4);
    cr_expect_eq(a->shape[0], 5);
    cr_expect_eq(a->shape[1], 128, "64 bytes a row: 128 E2M1 elements");
    cr_expect_eq(s->dtype, A4W4_DT_F8_E8M0);
    size_t r, c;
    cr_assert_eq(a4w4_st_packed_2d(a, &r, &c), 0);
    cr_expect(r == 5 && c == 64);
    cr_assert_eq(a4w4_st_packed_2d(s, &r, &c), 0);
    cr_expect(r == 5 && c == 4);
    cr_expect_neq(a4w4_st_packed_2d(a4w4_st_find(&f, "y_exact"), &r, &c), 0, "BF16 is no bytes");
    a4w4_st_free(&f);
}
