/* test_util.h — helpers the Criterion unit tests share: deterministic RNGs, scratch files, and
 * hand-built fp4 blocks, and (after io/casefile.h) a case.
 *
 * Header only (static inline), no project library: a test that includes it still links only
 * the library it tests. Include it after <criterion/criterion.h>; the scratch helpers fail
 * the running test (cr_assert) when the file system refuses. */
#ifndef A4W4_TEST_UTIL_H
#define A4W4_TEST_UTIL_H

#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* TU_SNPRINTF(buf, fmt, ...): snprintf into the array buf, failing the test when the text
 * does not fit (a truncated path would name another file). */
#define TU_SNPRINTF(buf, ...) \
    cr_assert(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf), \
              "%s: text longer than %zu bytes", #buf, sizeof(buf))

/* ---- sweep weight ---------------------------------------------------------------------- */

/* The coverage and sanitizer builds (A4W4_TEST_REDUCED, set by tests/CMakeLists.txt) run
 * the long shape sweeps on every A4W4_SWEEP_STRIDE-th point, rotating which point of each
 * group is kept so every axis value is still visited; the optimized build runs every point.
 * tu_sweep_skip(i): 1 when sweep point i is left out in this build. */
#ifdef A4W4_TEST_REDUCED
#define A4W4_SWEEP_STRIDE 4u
#else
#define A4W4_SWEEP_STRIDE 1u
#endif
static inline int tu_sweep_skip(size_t i)
{
    return i % A4W4_SWEEP_STRIDE != 0;
}

/* ---- RNGs ------------------------------------------------------------------------------ */

/* State of one generator; each test file keeps its own, seeded with its constant, so the
 * sequences (and the cases a test generates) do not depend on other files. */
typedef struct {
    uint64_t s;
} tu_rng;

/* splitmix64 (Steele, Lea, Flood): add the golden-ratio increment, then mix. Any seed. */
static inline uint64_t tu_splitmix64(tu_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* splitmix64 reduced to [0, n) by modulo (n >= 1). */
static inline unsigned tu_splitmix64_below(tu_rng *r, unsigned n)
{
    return (unsigned)(tu_splitmix64(r) % n);
}

/* Marsaglia's xorshift64 with shifts 13, 7, 17; returns the new state. The state must not be
 * 0 (use tu_xorshift64_seed). */
static inline uint64_t tu_xorshift64(tu_rng *r)
{
    uint64_t x = r->s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    r->s = x;
    return x;
}

/* xorshift64 reduced to [0, n) by modulo (n >= 1). */
static inline unsigned tu_xorshift64_below(tu_rng *r, unsigned n)
{
    return (unsigned)(tu_xorshift64(r) % n);
}

/* Seed an xorshift64 state: s, or 0x9E3779B97F4A7C15 for s == 0 (0 is a fixed point). */
static inline void tu_xorshift64_seed(tu_rng *r, uint64_t s)
{
    r->s = s ? s : 0x9E3779B97F4A7C15ull;
}

/* ---- scratch files --------------------------------------------------------------------- */

/* mkdir -p d (at most 4095 bytes); fails the test when the last component cannot be made. */
static inline void tu_mkdir_p(const char *d)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", d);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0777);
            *p = '/';
        }
    if (mkdir(buf, 0777) && errno != EEXIST)
        cr_assert_fail("mkdir %s: %s", buf, strerror(errno));
}

/* A fresh, empty scratch directory root/name (flat: the files in it are removed, not
 * subdirectories). Returns its path in a static buffer, valid until the next call. */
static inline const char *tu_scratch_dir(const char *root, const char *name)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    tu_mkdir_p(dir);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "opendir %s", dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[4096 + 256];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    return dir;
}

/* Write n bytes to path (created or truncated); fails the test on any error. */
static inline void tu_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
    cr_assert_eq(fwrite(data, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* The whole file at path (malloc'ed, *n bytes, then a NUL so text can be parsed as a C
 * string); fails the test when it cannot be read. */
static inline uint8_t *tu_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    cr_assert_geq(len, 0);
    rewind(f);
    uint8_t *buf = malloc((size_t)len + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    buf[len] = 0;
    *n = (size_t)len;
    return buf;
}

/* Write the text content to dir/name (dir made when missing) and return the path. Paths come
 * from a ring of 8 static buffers: the last 8 returned stay valid. */
static inline const char *tu_scratch_file(const char *dir, const char *name, const char *content)
{
    static char paths[8][512];
    static int slot;
    char *p = paths[slot++ % 8];
    tu_mkdir_p(dir);
    snprintf(p, 512, "%s/%s", dir, name);
    tu_write_file(p, content, strlen(content));
    return p;
}

/* ---- hand-built blocks --------------------------------------------------------------------- */

/* One 32-element block of each operand, a[16] and w[16] fp4x2 bytes, whose exact dot is
 * `units` (0..384) units of the block's quantum 2^(sa+sb-256), negated when neg (contracts §4:
 * A's elements are 0.5, twice-value 1; W's twice-values are 12 while at least 12 are left, then
 * the rest as one or two of 1, 2, 3, 4, 6, 8). */
static inline void tu_units_block(uint8_t *a, uint8_t *w, unsigned units, int neg)
{
    static const uint8_t code_of[13] = {0, 1, 2, 3, 4, 0, 5, 0, 6, 0, 0, 0, 7};
    for (unsigned e = 0; e < 32; e++) {
        unsigned v = units >= 12 ? 12 : units;
        while (v && !code_of[v])
            v--;
        units -= v;
        uint8_t cw = (uint8_t)(code_of[v] | (neg && v ? 8 : 0)), sh = (uint8_t)(4 * (e % 2));
        a[e / 2] = (uint8_t)((a[e / 2] & ~(0x0F << sh)) | (1 << sh));
        w[e / 2] = (uint8_t)((w[e / 2] & ~(0x0F << sh)) | (cw << sh));
    }
    cr_assert_eq(units, 0, "tu_units_block: more than 384 units");
}

/* malloc(n) (1 byte for n = 0), failing the test when out of memory. */
static inline void *tu_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    cr_assert_not_null(p, "out of memory (%zu bytes)", n);
    return p;
}

/* The first offset where a and b (n bytes each) differ, or n when they are equal. */
static inline size_t tu_first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return i;
    return n;
}

/* One output of K = 1024 (32 blocks) built block by block: a[512], w[512] fp4x2 bytes and
 * as[32], ws[32] E8M0 scales, every code 0 and every scale 127 after tu_row_init. */
typedef struct {
    uint8_t a[512], as[32], w[512], ws[32];
} tu_row;

static inline void tu_row_init(tu_row *r)
{
    memset(r, 0, sizeof *r);
    memset(r->as, 127, sizeof r->as);
    memset(r->ws, 127, sizeof r->ws);
}

/* Block b of r gets `units` (0..384) units of 2^(sa+sw-256) with sign neg (tu_units_block). */
static inline void tu_row_block(tu_row *r, size_t b, unsigned units, int neg, uint8_t sa,
                                uint8_t sw)
{
    tu_units_block(r->a + b * 16, r->w + b * 16, units, neg);
    r->as[b] = sa;
    r->ws[b] = sw;
}

/* ---- cases (harness tests) ------------------------------------------------------------- */

#ifdef A4W4_CASEFILE_H
/* Declared only where io/casefile.h was included first (the harness's tests; ref/'s tests link
 * a4w4_ref alone and never see a4w4_case). A case as a case file would give it: name, M x N
 * x K, regime r with regime text "r<r>", scale mode, seed; no tags. */
static inline a4w4_case tu_case(const char *name, size_t M, size_t N, size_t K, a4w4_regime r,
                                a4w4_scale_mode mode, uint64_t seed)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.M = M;
    c.N = N;
    c.K = K;
    c.regime = r;
    c.mode = mode;
    snprintf(c.regime_text, sizeof c.regime_text, "r%d", (int)r);
    c.seed = seed;
    return c;
}
#endif

#endif
