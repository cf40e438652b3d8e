/* route_render.c — see route_render.h. */
#include "route_render.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- output --------------------------------------------------------------------------- */

static void label_of(const a4w4_kernel_table *kt, int idx, const char *fallback, char *buf,
                     size_t len)
{
    if (idx >= 0)
        a4w4_kernel_label(kt, idx, buf, len);
    else
        snprintf(buf, len, "%s", fallback);
}

static const char *name_of(const a4w4_kernel_table *kt, int idx, const char *fallback)
{
    return idx >= 0 ? kt->rows[idx].name : fallback;
}


/* The field bugs (ref/a4w4_hazard.h) whose rules flag routed shape r under policy pr. */

static void print_json(const a4w4_route_view *o, const a4w4_kernel_table *kt, const a4w4_route *r,
                       const a4w4_policy_result *pr, unsigned mask)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "M", r->M);
    cJSON_AddNumberToObject(j, "N", r->N);
    cJSON_AddNumberToObject(j, "K", r->K);
    cJSON_AddStringToObject(j, "gfx", o->hp.gfx);
    cJSON_AddNumberToObject(j, "cu_num", o->hp.num_cu);
    cJSON_AddStringToObject(j, "source", a4w4_route_source_name(r->source));
    if (r->row)
        cJSON_AddNumberToObject(j, "tuned_M", r->tuned_m);
    else
        cJSON_AddNullToObject(j, "tuned_M");
    cJSON_AddStringToObject(j, "path", r->is_asm ? "asm" : "ck");
    cJSON_AddStringToObject(j, "kernel", r->kernel);
    if (r->tile_m) {
        int tile[2] = {r->tile_m, r->tile_n};
        cJSON_AddItemToObject(j, "tile", cJSON_CreateIntArray(tile, 2));
    } else {
        cJSON_AddNullToObject(j, "tile");
    }
    cJSON_AddNumberToObject(j, "log2_k_split", r->log2_k_split);
    cJSON_AddNumberToObject(j, "split", r->split);
    if (r->k_per_tg)
        cJSON_AddNumberToObject(j, "k_per_tg", r->k_per_tg);
    else
        cJSON_AddNullToObject(j, "k_per_tg");
    if (r->tile_m) {
        int grid[3] = {r->grid_x, r->grid_y, r->grid_z};
        cJSON_AddItemToObject(j, "grid", cJSON_CreateIntArray(grid, 3));
    } else {
        cJSON_AddNullToObject(j, "grid");
    }
    cJSON *c = cJSON_AddArrayToObject(j, "candidates");
    for (size_t i = 0; i < r->ncand; i++)
        cJSON_AddItemToArray(c, cJSON_CreateString(name_of(kt, r->cand[i], r->kernel)));
    cJSON *ca = cJSON_AddArrayToObject(j, "candidates_any_order");
    for (size_t i = 0; i < r->ncand_any; i++)
        cJSON_AddItemToArray(ca, cJSON_CreateString(name_of(kt, r->cand_any[i], r->kernel)));
    cJSON *w = cJSON_AddArrayToObject(j, "warnings");
    for (size_t i = 0; i < a4w4_route_warning_count(r); i++) {
        char buf[512];
        a4w4_route_warning(r, kt, i, buf, sizeof buf);
        cJSON_AddItemToArray(w, cJSON_CreateString(buf));
    }
    cJSON *pj = cJSON_AddObjectToObject(j, "policy");
    cJSON_AddStringToObject(pj, "decision", a4w4_decision_name(pr->decision));
    cJSON_AddStringToObject(pj, "reason", a4w4_policy_reason_name(pr->reason));
    cJSON_AddStringToObject(pj, "input", o->kind_name);
    cJSON_AddBoolToObject(pj, "warn_once", pr->warn_once);
    cJSON_AddStringToObject(pj, "message", pr->message);
    cJSON *fb = cJSON_AddArrayToObject(j, "field_bugs");
    size_t nr;
    const a4w4_bug_rule *br = a4w4_bug_rules(&nr);
    for (size_t i = 0; i < nr; i++)
        if (mask & (1u << i))
            cJSON_AddItemToArray(fb, cJSON_CreateString(br[i].id));
    char *s = cJSON_PrintUnformatted(j);
    if (s)
        puts(s);
    free(s);
    cJSON_Delete(j);
}

/* Short codes of fit flags, comma-separated. */
static void fit_codes(unsigned f, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t u = 0;
    static const struct {
        unsigned bit;
        const char *code;
    } codes[] = {{A4W4_FIT_TILE_N_GT_N, "tile_N>N"},
                 {A4W4_FIT_N_PARTIAL, "N%tile_N!=0"},
                 {A4W4_FIT_TILE_M_GT_8M, "tile_M>8M"},
                 {A4W4_FIT_SPLIT_K, "split-K"}};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (f & codes[i].bit) {
            int n = snprintf(buf + u, len - u, "%s%s", u ? "," : "", codes[i].code);
            if (n < 0 || (size_t)n >= len - u)
                return;
            u += (size_t)n;
        }
}

static void print_human(const a4w4_kernel_table *kt, const a4w4_route *r,
                        const a4w4_policy_result *pr, unsigned mask)
{
    char lab[64], codes[96], bugs[512];
    label_of(kt, r->kernel_index, "?", lab, sizeof lab);
    printf("M=%d N=%d K=%d: %s", r->M, r->N, r->K, a4w4_route_source_name(r->source));
    if (r->row)
        printf(" (row M=%d, %s:%d)", r->tuned_m, r->row->file, r->row->line);
    if (r->is_asm && r->kernel_index >= 0)
        printf(" -> ASM %s %s, log2_k_split %d, grid %dx%dx%d", lab, r->kernel, r->log2_k_split,
               r->grid_x, r->grid_y, r->grid_z);
    else if (r->is_asm)
        printf(" -> ASM %s (not in the kernel table), log2_k_split %d", r->kernel,
               r->log2_k_split);
    else
        printf(" -> CK %s, splitK %d", r->kernel, r->log2_k_split);
    if (r->k_per_tg)
        printf(", k_per_tg %d", r->k_per_tg);
    printf("; possible winners %zu (sampled orders %zu)", r->ncand_any, r->ncand);
    if (r->source == A4W4_SRC_HEURISTIC) {
        printf(":");
        for (size_t i = 0; i < r->ncand_any; i++) {
            label_of(kt, r->cand_any[i], "?", lab, sizeof lab);
            printf("%s%s", i ? "," : " ", lab);
        }
    }
    fit_codes(r->fit, codes, sizeof codes);
    size_t nw = a4w4_route_warning_count(r);
    printf("; warnings %zu%s%s%s", nw, codes[0] ? " [" : "", codes,
           codes[0] ? "]" : "");
    if (r->ncand_any > 1)
        printf(" [order-dependent]");
    printf("; policy %s (%s)", a4w4_decision_name(pr->decision),
           a4w4_policy_reason_name(pr->reason));
    a4w4_bugs_text(mask, ", ", 1, bugs, sizeof bugs);
    printf("%s%s\n", bugs[0] ? "; field bugs: " : "", bugs);
}

/* ---- scan ----------------------------------------------------------------------------- */

static void set_labels(const a4w4_kernel_table *kt, const unsigned char *set, char *buf,
                       size_t len)
{
    size_t u = 0;
    buf[0] = '\0';
    int idx[A4W4_MAX_KERNELS];
    size_t n = a4w4_kernel_set_by_tile(kt, set, idx);
    for (size_t i = 0; i < n; i++) {
        char lab[64];
        a4w4_kernel_label(kt, idx[i], lab, sizeof lab);
        int w = snprintf(buf + u, len - u, "%s%s", i ? "," : "", lab);
        if (w < 0 || (size_t)w >= len - u)
            return;
        u += (size_t)w;
    }
}

static unsigned long long all_k_bits(const a4w4_route_view *o)
{
    return o->nscan_k >= 64 ? ~0ull : ((1ull << o->nscan_k) - 1);
}

static void k_set_text(const a4w4_route_view *o, unsigned long long bits, char *buf, size_t len)
{
    if (bits == all_k_bits(o)) {
        snprintf(buf, len, "all K");
        return;
    }
    size_t u = (size_t)snprintf(buf, len, "K=");
    int first = 1;
    for (int i = 0; i < o->nscan_k && u < len; i++)
        if (bits & (1ull << i)) {
            u += (size_t)snprintf(buf + u, len - u, "%s%d", first ? "" : ",", o->scan_k[i]);
            first = 0;
        }
}

static void m_range(int m0, int m1, char *buf, size_t len)
{
    if (m0 == m1)
        snprintf(buf, len, "M=%d", m0);
    else
        snprintf(buf, len, "M=%d..%d", m0, m1);
}

/* Policy text for layer N over the K bits: "asm" when one decision holds for every K, else
 * one "decision(reason) at K=..." group per distinct decision. */
static void policy_text(const a4w4_route_view *o, const a4w4_policy_result *pol_n,
                        unsigned long long kbits, char *buf, size_t len)
{
    size_t u = 0;
    buf[0] = '\0';
    unsigned long long done = 0;
    for (int k = 0; k < o->nscan_k && u < len; k++) {
        if (!(kbits & (1ull << k)) || (done & (1ull << k)))
            continue;
        unsigned long long same = 0;
        for (int j = k; j < o->nscan_k; j++)
            if ((kbits & (1ull << j)) && pol_n[j].decision == pol_n[k].decision &&
                pol_n[j].reason == pol_n[k].reason)
                same |= 1ull << j;
        done |= same;
        char ks[512];
        k_set_text(o, same == kbits ? all_k_bits(o) : same, ks, sizeof ks);
        if (pol_n[k].decision == A4W4_DECIDE_ASM)
            u += (size_t)snprintf(buf + u, len - u, "%sasm", u ? ", " : "");
        else
            u += (size_t)snprintf(buf + u, len - u, "%s%s(%s)", u ? ", " : "",
                                  a4w4_decision_name(pol_n[k].decision),
                                  a4w4_policy_reason_name(pol_n[k].reason));
        if (same != kbits && u < len)
            u += (size_t)snprintf(buf + u, len - u, " at %s", ks);
    }
}

static void print_json_line(cJSON *j)
{
    char *s = cJSON_PrintUnformatted(j);
    if (s)
        puts(s);
    free(s);
    cJSON_Delete(j);
}

/* The scan's opening lines: parameters, tables, what the columns mean. */
static void print_scan_head(const a4w4_route_view *o, const a4w4_tuned_table *tuned,
                            const a4w4_kernel_table *kt)
{
    char ks[512];
    {
        size_t u = 0;
        for (int i = 0; i < o->nscan_k && u < sizeof ks; i++)
            u += (size_t)snprintf(ks + u, sizeof ks - u, "%s%d", i ? "," : "", o->scan_k[i]);
    }
    char tunedtxt[1024] = "none";
    if (tuned && tuned->loaded) {
        size_t u = 0;
        for (int i = 0; i < tuned->loaded && u < sizeof tunedtxt; i++)
            u += (size_t)snprintf(tunedtxt + u, sizeof tunedtxt - u, "%s%s", i ? " + " : "",
                                  tuned->files[i]);
    }
    printf("route --scan: %s, %d CUs, log2_k_split %d, bpreshuffle %d; M 1..%d, N %d..%d "
           "step %d, K {%s}; policy with %s=%d, input %s\n",
           o->hp.gfx, o->hp.num_cu, o->hp.log2_k_split, o->hp.bpreshuffle, A4W4_SCAN_M_MAX,
           A4W4_SCAN_N_MIN, A4W4_SCAN_N_MAX, A4W4_SCAN_N_STEP, ks, A4W4_POLICY_FLAG, o->asm_flag,
           o->kind_name);
    printf("tables: tuned %s; kernels %s\n", tunedtxt, kt->file);
    printf("possible winners: every kernel that wins under some walk order of the kernel "
           "table (exact); 'sampled' counts those found by file order, its reverse and %d "
           "seeded permutations\n",
           A4W4_ROUTE_PERMUTATIONS);
    printf("a tile does not fit N when tile_N > N or N %% tile_N != 0\n");
    printf("\nhazards (untuned shapes with more than one possible winner, or a possible "
           "winner that does not fit N), runs over M:\n");
}

/* One hazard run (N, M..m1) as a JSON line. */
static void print_hazard_json(const a4w4_route_view *o, const a4w4_kernel_table *kt, const a4w4_scan_cell *c,
                              const a4w4_policy_result *pol_n, int N, int M, int m1)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "type", "hazard");
    cJSON_AddNumberToObject(j, "N", N);
    cJSON_AddNumberToObject(j, "M_min", M);
    cJSON_AddNumberToObject(j, "M_max", m1);
    cJSON *ka = cJSON_AddArrayToObject(j, "K");
    cJSON *pa = cJSON_AddArrayToObject(j, "policy");
    for (int k = 0; k < o->nscan_k; k++)
        if (c->untuned_k & (1ull << k)) {
            cJSON_AddItemToArray(ka, cJSON_CreateNumber(o->scan_k[k]));
            cJSON *p = cJSON_CreateObject();
            cJSON_AddStringToObject(p, "decision", a4w4_decision_name(pol_n[k].decision));
            cJSON_AddStringToObject(p, "reason", a4w4_policy_reason_name(pol_n[k].reason));
            cJSON_AddItemToArray(pa, p);
        }
    cJSON *wa = cJSON_AddArrayToObject(j, "candidates_any_order");
    cJSON *na = cJSON_AddArrayToObject(j, "not_fitting_N");
    for (size_t i = 0; i < kt->n; i++) {
        if (c->any[i])
            cJSON_AddItemToArray(wa, cJSON_CreateString(kt->rows[i].name));
        if (c->nofit[i])
            cJSON_AddItemToArray(na, cJSON_CreateString(kt->rows[i].name));
    }
    cJSON_AddStringToObject(j, "kernel", kt->rows[c->file_winner].name);
    cJSON_AddBoolToObject(j, "kernel_fits_N", !c->file_nofit);
    print_json_line(j);
}

/* One hazard run (N, M..m1) as a text line. */
static void print_hazard_text(const a4w4_route_view *o, const a4w4_kernel_table *kt,
                              const a4w4_scan_cell *c, const a4w4_policy_result *pol_n, int N, int M,
                              int m1)
{
    char mr[32], kset[512], win[4096], nf[4096], pt[1024], fwl[64];
    m_range(M, m1, mr, sizeof mr);
    k_set_text(o, c->untuned_k, kset, sizeof kset);
    set_labels(kt, c->any, win, sizeof win);
    set_labels(kt, c->nofit, nf, sizeof nf);
    policy_text(o, pol_n, c->untuned_k, pt, sizeof pt);
    a4w4_kernel_label(kt, c->file_winner, fwl, sizeof fwl);
    printf("N=%d %s %s: file order %s%s; %d possible winners: %s", N, mr, kset, fwl,
           c->file_nofit ? " (does not fit N)" : "", c->nany, win);
    if (c->n_nofit)
        printf("; not fitting N: %s", nf);
    printf("; policy %s\n", pt);
}

/* Every hazardous cell, runs of equal cells over M merged, per N. */
static void print_hazards(const a4w4_route_view *o, const a4w4_kernel_table *kt,
                          const a4w4_scan_cell *cells, const a4w4_policy_result *pol)
{
    for (int ni = 0; ni < A4W4_SCAN_NN; ni++) {
        int N = A4W4_SCAN_N_MIN + ni * A4W4_SCAN_N_STEP;
        const a4w4_policy_result *pol_n = &pol[(size_t)ni * (size_t)o->nscan_k];
        int M = 1;
        while (M <= A4W4_SCAN_M_MAX) {
            const a4w4_scan_cell *c = &cells[(size_t)ni * (A4W4_SCAN_M_MAX + 1) + (size_t)M];
            int m1 = M;
            while (m1 + 1 <= A4W4_SCAN_M_MAX &&
                   a4w4_scan_same_cell(c, &cells[(size_t)ni * (A4W4_SCAN_M_MAX + 1) + (size_t)m1 + 1], kt->n))
                m1++;
            if (c->hazard_k) {
                if (o->json)
                    print_hazard_json(o, kt, c, pol_n, N, M, m1);
                else
                    print_hazard_text(o, kt, c, pol_n, N, M, m1);
            }
            M = m1 + 1;
        }
    }
}

/* The summary: a JSON line, or the summary and fence paragraphs. */
static void print_scan_summary(const a4w4_route_view *o, const a4w4_scan_totals *t)
{
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "type", "summary");
        cJSON_AddNumberToObject(j, "shapes", (double)t->total);
        cJSON_AddNumberToObject(j, "untuned", (double)t->untuned);
        cJSON_AddNumberToObject(j, "hazardous", (double)t->hazard);
        cJSON_AddNumberToObject(j, "multiple_winners", (double)t->multi);
        cJSON_AddNumberToObject(j, "multiple_winners_asm", (double)t->multi_asm);
        cJSON_AddNumberToObject(j, "not_fitting_N", (double)t->nofit);
        cJSON_AddNumberToObject(j, "not_fitting_N_fenced_small_n", (double)t->nofit_small_n);
        cJSON_AddNumberToObject(j, "not_fitting_N_scale_unsupported", (double)t->nofit_scale);
        cJSON_AddNumberToObject(j, "not_fitting_N_other_triton", (double)t->nofit_other_triton);
        cJSON_AddNumberToObject(j, "not_fitting_N_asm", (double)t->nofit_asm);
        cJSON_AddNumberToObject(j, "not_fitting_N_asm_file_order", (double)t->file_nofit_asm);
        cJSON_AddNumberToObject(j, "not_fitting_N_asm_every_winner", (double)t->all_nofit_asm);
        cJSON_AddNumberToObject(j, "tile_M_gt_8M", (double)t->mfit);
        cJSON_AddNumberToObject(j, "tile_M_gt_8M_asm", (double)t->mfit_asm);
        cJSON_AddNumberToObject(j, "sampling_misses", (double)t->missed);
        cJSON_AddBoolToObject(j, "fence_covers_all", t->nofit_asm == 0);
        print_json_line(j);
        return;
    }
    printf("\nsummary: %zu shapes (M, N, K), %zu untuned, %zu hazardous; %zu have more than "
           "one possible winner (%zu of them on an ASM layer); a tile that does not fit N "
           "can win at %zu; a tile with tile_M > 8*M can win at %zu (%zu on an ASM layer); "
           "the sampled orders miss some winner at %zu\n",
           t->total, t->untuned, t->hazard, t->multi, t->multi_asm, t->nofit, t->mfit,
           t->mfit_asm, t->missed);
    printf("fence: of the %zu untuned shapes where a tile that does not fit N can win, the "
           "N <= 128 fence keeps %zu on Triton, the scale-swizzle rule (N %% 32, K/32 %% 8) "
           "%zu more, other policy steps %zu; %zu stay on the ASM path: the N <= 128 fence "
           "%s\n",
           t->nofit, t->nofit_small_n, t->nofit_scale, t->nofit_other_triton, t->nofit_asm,
           t->nofit_asm ? "does NOT cover every such shape" : "(with the scale rule) covers them all");
    if (t->nofit_asm)
        printf("fence: of those %zu ASM-path shapes, the file-order winner itself does not fit N "
               "at %zu, and no kernel that can win fits N at %zu\n",
               t->nofit_asm, t->file_nofit_asm, t->all_nofit_asm);
}

/* A per-cell set of K bits (bit i: scan_k[i]) the runs below print. */
typedef unsigned long long (*cell_mask)(const a4w4_scan_cell *c, int which);

static unsigned long long exposed_of(const a4w4_scan_cell *c, int which)
{
    (void)which;
    return c->exposed_k;
}

static unsigned long long bug_of(const a4w4_scan_cell *c, int which) { return c->bug_k[which]; }

/* "  N=160: M=1..256 (all K), ..." per N: runs over M of equal nonzero masks. */
static void print_runs(const a4w4_route_view *o, const a4w4_scan_cell *cells, cell_mask mask, int which)
{
    for (int ni = 0; ni < A4W4_SCAN_NN; ni++) {
        int N = A4W4_SCAN_N_MIN + ni * A4W4_SCAN_N_STEP, printed = 0;
        const a4w4_scan_cell *row = &cells[(size_t)ni * (A4W4_SCAN_M_MAX + 1)];
        for (int M = 1; M <= A4W4_SCAN_M_MAX;) {
            unsigned long long ks = mask(&row[M], which);
            int m1 = M;
            while (m1 + 1 <= A4W4_SCAN_M_MAX && mask(&row[m1 + 1], which) == ks)
                m1++;
            if (ks) {
                char mr[32], kset[512];
                m_range(M, m1, mr, sizeof mr);
                k_set_text(o, ks, kset, sizeof kset);
                if (!printed)
                    printf("  N=%d:", N);
                printf("%s %s (%s)", printed ? "," : "", mr, kset);
                printed = 1;
            }
            M = m1 + 1;
        }
        if (printed)
            printf("\n");
    }
}

/* The cells on the ASM path where a tile that does not fit N can win, runs over M, per N. */
static void print_uncovered(const a4w4_route_view *o, const a4w4_scan_cell *cells)
{
    printf("uncovered (ASM layer and a possible winner that does not fit N), runs over M:\n");
    print_runs(o, cells, exposed_of, 0);
}


/* Every shape of the scan each field bug's rule flags: runs over M per N, with the K set. */
static void print_bugs(const a4w4_route_view *o, const a4w4_scan_cell *cells)
{
    size_t nr;
    const a4w4_bug_rule *br = a4w4_bug_rules(&nr);
    if (!o->json)
        printf("\nfield bugs (ref/a4w4_hazard.c: each reported bug as a rule over the shape, "
               "its route and the layer decision), every shape of the scan each flags:\n");
    for (size_t b = 0; b < nr; b++) {
        size_t count = 0;
        for (size_t i = 0; i < (size_t)A4W4_SCAN_NN * (A4W4_SCAN_M_MAX + 1); i++)
            count += (size_t)__builtin_popcountll(cells[i].bug_k[b]);
        if (o->json) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "type", "field_bug");
            cJSON_AddStringToObject(j, "id", br[b].id);
            cJSON_AddStringToObject(j, "citation", br[b].citation);
            cJSON_AddStringToObject(j, "url", br[b].url);
            cJSON_AddStringToObject(j, "rule", br[b].rule);
            cJSON_AddBoolToObject(j, "shape_rule", br[b].shape_rule);
            cJSON_AddNumberToObject(j, "shapes", (double)count);
            print_json_line(j);
            continue;
        }
        printf("%s (%s): %s; %s: %zu shape%s\n", br[b].id, br[b].citation, br[b].what,
               br[b].rule, count, count == 1 ? "" : "s");
        if (count)
            print_runs(o, cells, bug_of, (int)b);
    }
}


void a4w4_route_scan_print(const a4w4_route_view *o, const a4w4_route_scan *s,
                           const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt)
{
    if (!o->json)
        print_scan_head(o, tuned, kt);
    print_hazards(o, kt, s->cells, s->pol);
    print_scan_summary(o, &s->totals);
    if (!o->json && s->totals.nofit_asm)
        print_uncovered(o, s->cells);
    print_bugs(o, s->cells);
}

void a4w4_route_chain_print(const a4w4_route_view *o, const a4w4_kernel_table *kt,
                            const a4w4_dispatch_chain *ch)
{
    if (o->json)
        print_json(o, kt, &ch->route, &ch->policy, ch->bugs);
    else
        print_human(kt, &ch->route, &ch->policy, ch->bugs);
}
