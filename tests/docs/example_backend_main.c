/* example_backend_main.c — runs the worked backend example of docs/architecture.md ("Adding a
 * backend"; extracted at build time by extract_examples.cmake into mygemm.c) the way `run`
 * does: it must declare whether it may run concurrently as every registered CPU type does
 * (registry::every_type_declares_whether_it_may_run_concurrently), open like any type, and
 * pass its declared contract on every case of example_cases.csv (every regime but code0, one
 * case sampled) with outputs checked, the oracles' cross-check not failing. Exit 0 pass, 1 with one line per failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile.h"
#include "registry.h"
#include "runner.h"

extern const a4w4_backend_type a4w4_backend_mygemm;

static const char *const verdict_names[] = {"pass", "fail", "n/a", "skip"};

/* Run case c through b; count the failures into *bad. */
static void judge_case(const a4w4_runner *r, const a4w4_case *c, int *bad)
{
    a4w4_entry_list l = {0};
    char err[512] = "";
    if (a4w4_run_case(r, c, &l, err, sizeof err) != A4W4_ST_OK) {
        printf("FAIL %s: the runner refused it: %s\n", c->name, err);
        ++*bad;
    }
    for (size_t i = 0; i < l.n; i++) {
        const a4w4_entry_result *e = &l.items[i];
        /* the example's entry passes with outputs checked; the oracles' own cross-check
         * (n/a where no output is in the exact regime) does not fail */
        int ok = strcmp(e->backend, r->backends[0].name) == 0
                     ? e->verdict == A4W4_VERDICT_PASS && e->checked > 0
                     : e->verdict != A4W4_VERDICT_FAIL;
        printf("%s %s %s (%s): %s, %zu outputs checked%s%s\n", ok ? "PASS" : "FAIL", c->name,
               e->backend, e->contract, verdict_names[e->verdict], e->checked,
               e->sampled ? " (sampled)" : "", e->mismatches ? ", mismatches" : "");
        *bad += !ok;
    }
    if (l.n < 2) {
        printf("FAIL %s: %zu entries, expected the oracle's and the backend's\n", c->name, l.n);
        ++*bad;
    }
    a4w4_entry_list_free(&l);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: docs_example_backend CASES.csv\n");
        return 2;
    }
    const a4w4_backend_type *t = &a4w4_backend_mygemm;
    int bad = 0;
    if (t->thread_safe != (t->gpu ? 0 : 1)) {
        printf("FAIL %s: a %s type must declare .thread_safe = %d\n", t->name,
               t->gpu ? "GPU" : "CPU", t->gpu ? 0 : 1);
        bad++;
    }
    a4w4_case *cases = NULL;
    size_t n = 0;
    char err[512] = "";
    a4w4_backend b;
    if (a4w4_casefile_read(argv[1], &cases, &n, err, sizeof err) != A4W4_ST_OK ||
        a4w4_backend_open_type(t, NULL, &b, err, sizeof err) != A4W4_ST_OK) {
        printf("FAIL: %s\n", err);
        return 1;
    }
    a4w4_runner r = {.backends = &b, .nbackends = 1};
    for (size_t i = 0; i < n; i++)
        judge_case(&r, &cases[i], &bad);
    a4w4_backend_close(&b);
    free(cases);
    printf("docs_example_backend: %zu cases, %d failures\n", n, bad);
    return bad ? 1 : 0;
}
