/* test_bench.c — bench's measuring side (harness/commands/bench.h): the plan's methods in their
 * order, refused --tree texts, the first-rows sample of a large shape, a timed oracle writing
 * the oracle's output, sgemm's OpenBLAS thread count restored after its method. */
#include <criterion/criterion.h>
#include <cblas.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "bench.h"
#include "test_util.h"

static a4w4_bench_shape_spec spec(size_t M, size_t N, size_t K)
{
    a4w4_bench_shape_spec sp = {{M, N, K}, A4W4_REGIME_NORMAL, A4W4_ROUND_UP, "normal"};
    return sp;
}

Test(bench, tree_methods_follow_the_fixed_ones_fast_then_plain)
{
    static a4w4_bench_plan p;
    memset(&p, 0, sizeof p);
    const char *texts[] = {"tree(leaf=1,fuse=16,prec=26,round=rz)"};
    char err[1024] = "";
    a4w4_bench_fixed_methods(&p);
    cr_assert_eq(a4w4_bench_plan_trees(&p, texts, 1, err, sizeof err), 0, "%s", err);
    a4w4_bench_plan_methods(&p);
    cr_assert_eq(p.nmethods, A4W4_BENCH_NFIXED + 2);
    cr_assert_str_eq(p.methods[A4W4_BENCH_M_PLAIN].name, "plain exact oracle (1 thread)");
    cr_assert_eq(p.methods[A4W4_BENCH_M_SGEMM1].kind, A4W4_BENCH_SGEMM);
    const a4w4_bench_method *f = &p.methods[A4W4_BENCH_NFIXED], *pl = f + 1;
    cr_assert_eq(f->kind, A4W4_BENCH_TREE);
    cr_assert(!f->slow && pl->slow, "the plain tree oracle runs on the first rows");
    cr_assert(strstr(f->name, "fast tree oracle (1 thread) tree(leaf=1,") == f->name, "%s",
              f->name);
    cr_assert(strstr(pl->name, "plain tree oracle (1 thread) tree(leaf=1,") == pl->name, "%s",
              pl->name);
}

Test(bench, a_text_that_is_not_a_tree_contract_is_refused_naming_it)
{
    static a4w4_bench_plan p;
    const char *texts[] = {"ordered(2)"};
    char err[1024] = "";
    cr_assert_eq(a4w4_bench_plan_trees(&p, texts, 1, err, sizeof err), -1);
    cr_assert_str_eq(err, "bench: --tree 'ordered(2)': not a tree contract");
}

/* 8192 x 1024 x 128 is 2^30 MACs, twice A4W4_BENCH_SLOW_MACS: the slow methods' sample is the
 * first 2^29 / (1024 * 128) = 4096 rows, every column. */
Test(bench, a_large_shape_samples_its_first_rows_for_the_slow_methods)
{
    a4w4_bench_shape b;
    a4w4_bench_shape_spec sp = spec(8192, 1024, 128);
    cr_assert_eq(a4w4_bench_shape_make(&b, &sp, 1), 0);
    cr_assert_eq(b.sub_rows, 4096);
    cr_assert_eq(b.sub.nrows, 4096);
    cr_assert_eq(b.sub.ncols, 1024);
    cr_assert(!b.sub.full);
    cr_assert_eq(b.sub.rows[4095], 4095);
    cr_assert_eq(b.sub.cols[1023], 1023);
    a4w4_bench_shape_free(&b);
}

Test(bench, a_timed_fast_oracle_writes_the_exact_oracles_output_on_every_row)
{
    a4w4_bench_shape b;
    a4w4_bench_shape_spec sp = spec(9, 64, 256);
    cr_assert_eq(a4w4_bench_shape_make(&b, &sp, 0), 0);
    static const a4w4_bench_fast_arg exact1 = {0, 1, A4W4_FAST_AUTO};
    a4w4_bench_method m = {"fast", A4W4_BENCH_FAST, &exact1, 0};
    a4w4_bench_result r;
    a4w4_bench_time(&m, &b, 3, A4W4_BENCH_WALL, &r);
    cr_assert_eq(r.status, A4W4_OK, "%s", r.why);
    cr_assert_eq(r.rows, 9);
    cr_assert(r.min_s > 0 && r.min_s <= r.median_s);
    uint16_t want[9 * 64];
    const a4w4_case_data *d = &b.d;
    cr_assert_eq(a4w4_gemm_exact(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                 d->w_scale.data, 9, 64, 256, want, NULL), A4W4_OK);
    cr_assert_eq(memcmp(b.y, want, sizeof want), 0, "the fast oracle's output differs");
    a4w4_bench_shape_free(&b);
}

Test(bench, an_sgemm_method_restores_openblas_thread_count)
{
    a4w4_bench_shape b;
    a4w4_bench_shape_spec sp = spec(4, 32, 64);
    cr_assert_eq(a4w4_bench_shape_make(&b, &sp, 0), 0);
    int before = openblas_get_num_threads(), want = before == 1 ? 2 : 1;
    a4w4_bench_method m = {"sgemm", A4W4_BENCH_SGEMM, &want, 0};
    a4w4_bench_result r;
    a4w4_bench_time(&m, &b, 1, A4W4_BENCH_WALL, &r);
    cr_assert_eq(r.status, A4W4_OK);
    cr_assert_eq(openblas_get_num_threads(), before);
    a4w4_bench_shape_free(&b);
}

/* --isa: every path this build and CPU run is accepted and carried by the fast methods and the
 * fast tree method; a timed fast method runs on it (its stats name it) and writes the plain
 * oracle's output; an unknown name and a path not run here are refused naming the paths run. */
Test(bench, the_isa_path_is_carried_by_every_fast_method_and_runs)
{
    static a4w4_bench_plan p;
    a4w4_bench_shape b;
    a4w4_bench_shape_spec sp = spec(9, 64, 256);
    cr_assert_eq(a4w4_bench_shape_make(&b, &sp, 1), 0);
    uint16_t want[9 * 64];
    const a4w4_case_data *d = &b.d;
    cr_assert_eq(a4w4_gemm_exact(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                 d->w_scale.data, 9, 64, 256, want, NULL), A4W4_OK);
    const char *texts[] = {"tree(leaf=1,fuse=16,prec=26,round=rz)"};
    char err[1024] = "";
    int paths = 0;
    for (int isa = A4W4_FAST_AUTO + 1; isa < A4W4_FAST_ISA_COUNT; isa++) {
        const char *name = a4w4_fast_isa_name((a4w4_fast_isa)isa);
        memset(&p, 0, sizeof p);
        if (!a4w4_fast_isa_supported((a4w4_fast_isa)isa)) {
            cr_assert_eq(a4w4_bench_plan_isa(&p, name, err, sizeof err), -1);
            cr_assert(strstr(err, "a path this build and CPU cannot run (this build and CPU "
                                  "run: auto, ") != NULL, "%s", err);
            continue;
        }
        paths++;
        cr_assert_eq(a4w4_bench_plan_isa(&p, name, err, sizeof err), 0, "%s", err);
        a4w4_bench_fixed_methods(&p);
        cr_assert_eq(a4w4_bench_plan_trees(&p, texts, 1, err, sizeof err), 0, "%s", err);
        a4w4_bench_plan_methods(&p);
        for (int m = A4W4_BENCH_M_FAST1; m <= A4W4_BENCH_M_ORDERED1; m++)
            cr_assert_eq(((const a4w4_bench_fast_arg *)p.methods[m].arg)->isa, isa);
        cr_assert_eq(((const a4w4_bench_tree_arg *)p.methods[A4W4_BENCH_NFIXED].arg)->isa, isa);
        a4w4_bench_result r;
        memset(b.y, 0, sizeof want);
        a4w4_bench_time(&p.methods[A4W4_BENCH_M_FAST1], &b, 1, A4W4_BENCH_WALL, &r);
        cr_assert_eq(r.status, A4W4_OK, "%s: %s", name, r.why);
        cr_assert_eq(b.st.isa, isa, "%s ran %s", name, a4w4_fast_isa_name(b.st.isa));
        cr_assert_eq(memcmp(b.y, want, sizeof want), 0, "%s: the output differs", name);
    }
    cr_assert_geq(paths, 1, "portable runs everywhere");
    cr_assert_eq(a4w4_bench_plan_isa(&p, "avx512", err, sizeof err), -1);
    cr_assert(strstr(err, "bench: --isa 'avx512': not an instruction-set path (this build and "
                          "CPU run: auto, ") == err, "%s", err);
    a4w4_bench_shape_free(&b);
}

/* The thread CPU clock times the one-thread methods (the fast oracle writing its output) and
 * refuses, unrun, the ones on more than one thread. */
Test(bench, the_thread_cpu_clock_times_one_thread_methods_only)
{
    a4w4_bench_shape b;
    a4w4_bench_shape_spec sp = spec(9, 64, 256);
    cr_assert_eq(a4w4_bench_shape_make(&b, &sp, 0), 0);
    static const a4w4_bench_fast_arg one = {0, 1, A4W4_FAST_AUTO}, all = {0, 0, A4W4_FAST_AUTO};
    static const int two = 2;
    a4w4_bench_method m1 = {"fast", A4W4_BENCH_FAST, &one, 0};
    a4w4_bench_method mn = {"fast all", A4W4_BENCH_FAST, &all, 0};
    a4w4_bench_method s2 = {"sgemm 2", A4W4_BENCH_SGEMM, &two, 0};
    a4w4_bench_result r;
    a4w4_bench_time(&m1, &b, 3, A4W4_BENCH_THREAD_CPU, &r);
    cr_assert_eq(r.status, A4W4_OK, "%s", r.why);
    cr_assert(r.min_s > 0 && r.min_s <= r.median_s);
    uint16_t want[9 * 64];
    const a4w4_case_data *d = &b.d;
    cr_assert_eq(a4w4_gemm_exact(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                 d->w_scale.data, 9, 64, 256, want, NULL), A4W4_OK);
    cr_assert_eq(memcmp(b.y, want, sizeof want), 0);
    memset(b.y, 0, sizeof want);
    for (int i = 0; i < 2; i++) {
        a4w4_bench_time(i ? &s2 : &mn, &b, 1, A4W4_BENCH_THREAD_CPU, &r);
        cr_assert_eq(r.status, A4W4_EUNSUPPORTED);
        cr_assert(strstr(r.why, "more than one thread") != NULL, "%s", r.why);
    }
    uint16_t zero[9 * 64] = {0};
    cr_assert_eq(memcmp(b.y, zero, sizeof zero), 0, "a refused method does not run");
    a4w4_bench_shape_free(&b);
}
