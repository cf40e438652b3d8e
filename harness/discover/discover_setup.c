/* discover_setup.c — shapes, dispatch groups and the evidence document of `discover`
 * (discover_setup.h). */
#include "discover_setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "dispatch_chain.h"
#include "shapelist.h"

int a4w4_discover_parse_shapes(const char *text, a4w4_shape **shapes, size_t *n)
{
    size_t k = 1;
    for (const char *c = text; *c; c++)
        k += *c == ',';
    a4w4_shape *s = calloc(k, sizeof *s);
    *shapes = NULL;
    if (!s)
        return -2;
    const char *c = text;
    for (size_t i = 0; i < k; i++) {
        char tail;
        int used = 0;
        if (sscanf(c, "%zux%zux%zu%n", &s[i].M, &s[i].N, &s[i].K, &used) != 3 ||
            (c[used] != ',' && c[used] != 0) ||
            sscanf(c, "%*[0-9]x%*[0-9]x%*[0-9]%c", &tail) > 1) {
            free(s);
            return -1;
        }
        c += used + (c[used] == ',');
    }
    *shapes = s;
    *n = k;
    return 0;
}

a4w4_hstatus a4w4_discover_shapes_from_file(const char *path, a4w4_shape **shapes, size_t *n,
                                            char *err, size_t errlen)
{
    int *s;
    size_t ns;
    a4w4_hstatus st = a4w4_shapelist_load(path, &s, &ns, err, errlen);
    if (st != A4W4_ST_OK)
        return st;
    a4w4_shape *out = calloc(ns, sizeof *out);
    size_t k = 0;
    for (size_t i = 0; out && i < ns; i++) {
        a4w4_shape x = {(size_t)s[3 * i], (size_t)s[3 * i + 1], (size_t)s[3 * i + 2]};
        int dup = 0;
        for (size_t j = 0; j < k; j++)
            dup |= out[j].M == x.M && out[j].N == x.N && out[j].K == x.K;
        if (!dup)
            out[k++] = x;
    }
    free(s);
    *shapes = out;
    *n = k;
    if (!out && errlen)
        err[0] = 0;
    return out ? A4W4_ST_OK : A4W4_ST_NOMEM;
}

static size_t pad_m(size_t M)
{
    return (size_t)a4w4_padded_m((int)M, 1, 1, 0);
}

/* 1 when (M, N, K) is among x[0..n). */
static int has_shape(const a4w4_shape *x, size_t n, size_t M, size_t N, size_t K)
{
    for (size_t i = 0; i < n; i++)
        if (x[i].M == M && x[i].N == N && x[i].K == K)
            return 1;
    return 0;
}

/* 1 when family (N, bucket pm) already holds a shape at K among x[0..n). */
static int family_has_k(const a4w4_shape *x, size_t n, size_t N, size_t pm, size_t K)
{
    for (size_t i = 0; i < n; i++)
        if (x[i].N == N && pad_m(x[i].M) == pm && x[i].K == K)
            return 1;
    return 0;
}

/* The K step of the expansion: 32, or 256 for a backend that takes K % 256 == 0 only. */
static size_t kstep = 32;

/* A multiple of kstep in 64 .. A4W4_DISCOVER_MAX_K near k that family (N, pm) lacks, or 0. */
static size_t fresh_k(const a4w4_shape *x, size_t n, size_t N, size_t pm, size_t k)
{
    k = k / kstep * kstep;
    for (int t = 0; t < 64; t++, k += kstep) {
        size_t kk = k < 64 ? (kstep > 64 ? kstep : 64) : k;
        if (kk <= A4W4_DISCOVER_MAX_K && !family_has_k(x, n, N, pm, kk))
            return kk;
    }
    return 0;
}

/* Family (N, pm) of first shape f: the probed K (three distinct, one not a multiple of 256),
 * then the validated shapes, appended to x (room for 5 more). */
static size_t expand_family(a4w4_shape *x, size_t n, unsigned char *vo, const a4w4_shape *f)
{
    size_t pm = pad_m(f->M), nk = 0, odd = 0, kmin = f->K, kmax = f->K;
    for (size_t i = 0; i < n; i++)
        if (x[i].N == f->N && pad_m(x[i].M) == pm) {
            int fresh = 1;
            for (size_t j = 0; j < i; j++)
                fresh &= !(x[j].N == f->N && pad_m(x[j].M) == pm && x[j].K == x[i].K);
            nk += (size_t)fresh;
            odd |= x[i].K % 256 != 0;
            kmin = x[i].K < kmin ? x[i].K : kmin; /* every K of the family asked for */
            kmax = x[i].K > kmax ? x[i].K : kmax;
        }
    const size_t want[4] = {f->K / 2 + 32, f->K * 3 / 4 + 96, f->K + 288, f->K / 4 + 32};
    for (int t = 0; t < 4 && nk < 3; t++) {
        size_t k = fresh_k(x, n, f->N, pm, want[t]);
        if (k && !odd && nk == 2 && k % 256 == 0 && kstep < 256)
            k = fresh_k(x, n, f->N, pm, k + 32);
        if (!k)
            continue;
        x[n] = (a4w4_shape){f->M, f->N, k};
        vo[n++] = 0;
        nk++;
        odd |= k % 256 != 0;
        kmin = k < kmin ? k : kmin;
        kmax = k > kmax ? k : kmax;
    }
    size_t kv = fresh_k(x, n, f->N, pm, kmax + 160);
    if (kv) {
        x[n] = (a4w4_shape){f->M, f->N, kv};
        vo[n++] = 1;
    }
    size_t m2 = f->M + 1 <= pm ? f->M + 1 : f->M > 1 && pad_m(f->M - 1) == pm ? f->M - 1 : f->M;
    size_t kv2 = fresh_k(x, n, f->N, pm, (kmin + kmax) / 2 + 64);
    if (kv2 && !has_shape(x, n, m2, f->N, kv2)) {
        x[n] = (a4w4_shape){m2, f->N, kv2};
        vo[n++] = 1;
    }
    return n;
}

/* The buckets of the rules of M (contracts §4.4) of the N of requested shape f, appended to
 * x (validate_only 2): every padded-M bucket strictly between two consecutive requested
 * buckets of that N (A4W4_DISCOVER_MAX_CHECKS evenly spaced when more), each at its largest M
 * and the K of the lower requested bucket's first shape. Returns the new count. */
static size_t add_buckets(a4w4_shape *x, size_t n, unsigned char *vo, const a4w4_shape *req,
                          size_t nreq, const a4w4_shape *f)
{
    size_t lo = 0, klo = 0;
    for (;;) { /* the requested buckets of this N in ascending order */
        size_t next = 0, knext = 0;
        for (size_t i = 0; i < nreq; i++) {
            size_t pm = pad_m(req[i].M);
            if (req[i].N == f->N && pm > lo && (!next || pm < next))
                next = pm, knext = req[i].K;
        }
        if (!next)
            return n;
        size_t between = 0;
        for (size_t b = lo ? pad_m(lo + 1) : next; b < next; b = pad_m(b + 1))
            between++;
        size_t want = between < A4W4_DISCOVER_MAX_CHECKS ? between : A4W4_DISCOVER_MAX_CHECKS;
        size_t j = 0, taken = 0;
        for (size_t b = lo ? pad_m(lo + 1) : next; b < next; b = pad_m(b + 1), j++)
            if (taken < want && j == (taken + 1) * (between + 1) / (want + 1) - 1) {
                x[n] = (a4w4_shape){b, f->N, klo};
                vo[n++] = 2;
                taken++;
            }
        lo = next, klo = knext;
    }
}

int a4w4_discover_expand(const a4w4_shape *shapes, size_t n, size_t k_step, a4w4_shape **out,
                         size_t *nout, unsigned char **vo, char *err, size_t errlen)
{
    kstep = k_step == 256 ? 256 : 32;
    size_t cap = (6 + A4W4_DISCOVER_MAX_CHECKS) * n;
    *out = calloc(cap, sizeof **out);
    *vo = calloc(cap, 1);
    if (!*out || !*vo) {
        free(*out), free(*vo);
        *out = NULL, *vo = NULL;
        return -2;
    }
    memcpy(*out, shapes, n * sizeof *shapes);
    size_t k = n, families = 0;
    for (size_t i = 0; i < n; i++) {
        int first = 1;
        for (size_t j = 0; j < i; j++)
            first &= !(shapes[j].N == shapes[i].N && pad_m(shapes[j].M) == pad_m(shapes[i].M));
        if (first) {
            k = expand_family(*out, k, *vo, &shapes[i]);
            families++;
        }
    }
    for (size_t i = 0; i < n; i++) { /* the rules of M: once per N */
        int first = 1;
        for (size_t j = 0; j < i; j++)
            first &= shapes[j].N != shapes[i].N;
        if (first)
            k = add_buckets(*out, k, *vo, shapes, n, &shapes[i]);
    }
    *nout = k;
    if (k > A4W4_DISCOVER_MAX_SHAPES) {
        snprintf(err, errlen, "%zu shapes in %zu families of N and padded-M bucket make %zu "
                 "with the K probed and validated for a rule of K and the buckets checked for "
                 "the rules of M, over %d", n, families, k,
                 A4W4_DISCOVER_MAX_SHAPES);
        free(*out), free(*vo);
        *out = NULL, *vo = NULL;
        return -1;
    }
    return 0;
}

/* group[i] for routes r[0..n) (ok[i]: shape i routes to an ASM kernel). */
static void group_by_kernel(const a4w4_route *r, const int *ok, size_t n, size_t *group)
{
    for (size_t i = 0; i < n; i++) {
        group[i] = i;
        for (size_t j = 0; ok[i] && j < i; j++)
            if (ok[j] && !strcmp(r[i].kernel, r[j].kernel) && r[i].split == r[j].split &&
                group[j] == j) {
                group[i] = j;
                break;
            }
    }
}

int a4w4_discover_dispatch_groups(const a4w4_shape *shapes, size_t n, size_t *group, char *err,
                                  size_t errlen)
{
    char e[1024], t1[4096], t2[4096];
    a4w4_tuned_table tuned;
    a4w4_kernel_table kt;
    memset(&tuned, 0, sizeof tuned);
    memset(&kt, 0, sizeof kt);
    if (a4w4_tuned_load(&tuned, a4w4_data_path(A4W4_TUNED_TABLE_DEFAULT, t1, sizeof t1), err,
                        errlen) ||
        a4w4_kernels_load(&kt, a4w4_data_path(A4W4_KERNEL_TABLE_DEFAULT, t2, sizeof t2),
                          "gfx950", err, errlen))
        return -1;
    a4w4_heur_params hp = {"gfx950", 256, 0, 1};
    a4w4_route *r = calloc(n, sizeof *r);
    int *ok = calloc(n, sizeof *ok);
    for (size_t i = 0; r && ok && i < n; i++) {
        const a4w4_shape *s = &shapes[i];
        ok[i] = !a4w4_route_shape(&tuned, &kt, &hp, (int)s->M, (int)s->N, (int)s->K, &r[i], e,
                                  sizeof e) && r[i].is_asm;
    }
    if (r && ok)
        group_by_kernel(r, ok, n, group);
    int rc = r && ok ? 0 : -2;
    free(r);
    free(ok);
    a4w4_tuned_free(&tuned);
    a4w4_kernels_free(&kt);
    return rc;
}

char *a4w4_discover_evidence_doc(const a4w4_discovery *d, const a4w4_discover_opts *o,
                                 const char *backend, double seconds, const char *contract,
                                 size_t *len)
{
    size_t cap = 1 << 16, u = 0;
    char *doc = malloc(cap);
    if (!doc)
        return NULL;
    u += (size_t)snprintf(doc, cap, "# discover: %s\n\n%.2f s in all, seed %llu, %u run%s of "
                          "every call\n\n## Contract\n\n```\n%s```\n", backend, seconds,
                          (unsigned long long)o->seed, o->repeats, o->repeats == 1 ? "" : "s",
                          contract ? contract : "(none)\n");
    for (size_t i = 0; i < a4w4_discover_nshapes(d); i++) {
        const a4w4_shape *sh = a4w4_discover_shape(d, i);
        const char *ev = a4w4_discover_evidence(d, i), *df = a4w4_discover_defects(d, i);
        size_t need = u + strlen(ev) + strlen(df) + 512;
        if (need > cap) {
            char *q = realloc(doc, cap = 2 * need);
            if (!q) {
                free(doc);
                return NULL;
            }
            doc = q;
        }
        u += (size_t)snprintf(doc + u, cap - u, "\n## %zux%zux%zu\n\n%s%s%s", sh->M, sh->N,
                              sh->K, ev,
                              df[0] ? "\n### Defects (outputs no order can give)\n\n" : "", df);
    }
    *len = u;
    return doc;
}
