/* bench_gen_normal.c — host cost of the normal regime's A (contracts §2 quantization of bf16
 * Box-Muller rows): one path per run, so `perf stat -e task-clock` measures it alone. Not a
 * unit test: it prints CPU ns per A element (process CPU time of the generation alone) and a checksum
 * of the bytes (taken after the clock stops).
 *
 *   bench_gen_normal plain|dev [M K mode]      (default 256 65536 round_up)
 *
 * plain: every A row by a4w4_gen_normal_a_row_plain (the generator's previous path: scratch x,
 * a4w4_quantize, x copied out). dev: a4w4_case_generate_dev of the M x 16 x K normal case (the
 * fast path; W's 16 rows cost ~6% of A's time at M = 256). Run with OMP_NUM_THREADS=1 for one
 * core. The checksums of the two runs agree (same bytes). Exit 0, 1 on bad arguments or a
 * failed allocation. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001B3ull;
    return h;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); /* CPU time: load-proof */
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Each path: generation timed into *ns, the checksum taken afterwards (not timed). */
static int run_plain(const a4w4_case *c, uint64_t *h, double *ns)
{
    size_t K = c->K, M = c->M;
    uint8_t *fp4 = malloc(M * K / 2), *sc = malloc(M * K / 32);
    uint16_t *x = malloc(M * K * sizeof *x);
    int rc = !fp4 || !sc || !x;
    double t0 = now_ns();
    for (size_t m = 0; !rc && m < M; m++)
        rc = a4w4_gen_normal_a_row_plain(c, m, fp4 + m * K / 2, sc + m * K / 32, x + m * K) != 0;
    *ns = now_ns() - t0;
    for (size_t m = 0; !rc && m < M; m++)
        *h = fnv(fnv(fnv(*h, fp4 + m * K / 2, K / 2), sc + m * K / 32, K / 32), x + m * K,
                 K * sizeof *x);
    free(fp4);
    free(sc);
    free(x);
    return rc;
}

static int run_dev(const a4w4_case *c, uint64_t *h, double *ns)
{
    a4w4_sample s;
    a4w4_case_data d;
    if (a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, 0, &s))
        return 1;
    double t0 = now_ns();
    int rc = a4w4_case_generate_dev(c, &s, &d) != 0;
    *ns = now_ns() - t0;
    size_t K = c->K;
    for (size_t m = 0; !rc && m < c->M; m++)
        *h = fnv(fnv(fnv(*h, d.a_fp4.data + m * K / 2, K / 2), d.a_scale.data + m * K / 32,
                     K / 32),
                 d.x + m * K, K * sizeof *d.x);
    if (!rc)
        a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return rc;
}

int main(int argc, char **argv)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "bench_normal");
    c.M = argc > 2 ? strtoul(argv[2], NULL, 10) : 256;
    c.K = argc > 3 ? strtoul(argv[3], NULL, 10) : 65536;
    int mode = argc > 4 ? a4w4_scale_mode_parse(argv[4]) : A4W4_ROUND_UP;
    c.N = 16;
    c.seed = 1;
    c.regime = A4W4_REGIME_NORMAL;
    if (argc < 2 || (strcmp(argv[1], "plain") && strcmp(argv[1], "dev")) || !c.M || !c.K ||
        c.K % 32 || mode < 0) {
        fprintf(stderr, "usage: bench_gen_normal plain|dev [M K mode]\n");
        return 1;
    }
    c.mode = (a4w4_scale_mode)mode;
    uint64_t h = 0xCBF29CE484222325ull;
    double ns = 0;
    int rc = strcmp(argv[1], "plain") ? run_dev(&c, &h, &ns) : run_plain(&c, &h, &ns);
    printf("%s %zux%zu %s: %.2f ns CPU per A element, bytes fnv %016llx\n", argv[1], c.M, c.K,
           a4w4_scale_mode_name(c.mode), ns / ((double)c.M * (double)c.K),
           (unsigned long long)h);
    return rc;
}
