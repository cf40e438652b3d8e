/* html.c — a4w4_report_html: one self-contained page (no network: inline CSS and SVG, a few
 * lines of optional script). Order: verdict and the line per (backend, contract); the
 * environment; the hazard map; mismatch details; ULP histograms of bounded backends; timing;
 * every case by group. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "doc_verdict.h"
#include "entry_dispatch.h"
#include "html_common.h"
#include "layer_parity.h"

static const a4w4_report_opts default_opts = {0, NULL};

/* ---- sorted distinct integers --------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* Distinct values of field k over the entries of cases whose backend is not skip (NULL: all),
 * sorted (malloc'ed). */
static int *distinct_ints(const cJSON *cases, const char *k, const char *skip, size_t *n)
{
    size_t cap = (size_t)cJSON_GetArraySize(cases) + 1, m = 0;
    int *v = malloc(cap * sizeof *v);
    *n = 0;
    if (!v)
        return NULL;
    const cJSON *e;
    cJSON_ArrayForEach(e, cases)
        if (!skip || strcmp(jstr(e, "backend"), skip))
            v[m++] = jint(e, k, 0);
    qsort(v, m, sizeof *v, cmp_int);
    for (size_t i = 0; i < m; i++)
        if (!*n || v[*n - 1] != v[i])
            v[(*n)++] = v[i];
    return v;
}

static long index_of(const int *v, size_t n, int x)
{
    const int *p = bsearch(&x, v, n, sizeof *v, cmp_int);
    return p ? (long)(p - v) : -1;
}

/* ---- hazard map ----------------------------------------------------------------------- */

static const char *const fill_of[NVERDICTS] = {OI_GREEN, "url(#pat-fail)", "url(#pat-na)",
                                               "url(#pat-skip)", "url(#pat-na)",
                                               "url(#pat-skip)"};

/* The fill patterns, once per page: inline SVGs share the document's ids. */
static void svg_defs(rbuf *b)
{
    rb_puts(b,
            "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>"
            "<pattern id=\"pat-fail\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\">"
            "<rect width=\"8\" height=\"8\" fill=\"" OI_VERMILLION "\"/>"
            "<path d=\"M0 0L8 8M8 0L0 8\" stroke=\"#fff\" stroke-width=\"1.6\"/></pattern>"
            "<pattern id=\"pat-na\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
            "<rect width=\"6\" height=\"6\" fill=\"" OI_GREY "\"/>"
            "<circle cx=\"3\" cy=\"3\" r=\"1.1\" fill=\"#555\"/></pattern>"
            "<pattern id=\"pat-skip\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
            "<rect width=\"6\" height=\"6\" fill=\"" OI_YELLOW "\"/>"
            "<path d=\"M0 3H6\" stroke=\"#6b6300\" stroke-width=\"1\"/></pattern>"
            "</defs></svg>\n");
}

static void legend(rbuf *b)
{
    static const char *const lab[4] = {"pass (solid green)", "fail (vermillion, crossed)",
                                       "n/a (grey, dotted)", "skip (yellow, striped)"};
    rb_puts(b, "<p class=\"legend\">");
    for (int v = 0; v < 4; v++) {
        rb_puts(b, "<svg width=\"18\" height=\"18\" aria-hidden=\"true\">");
        rb_printf(b,
                  "<rect x=\"1\" y=\"1\" width=\"16\" height=\"16\" fill=\"%s\" stroke=\"#555\"/>"
                  "</svg> %s &nbsp; ",
                  fill_of[v], lab[v]);
    }
    rb_puts(
        b,
        "<svg width=\"18\" height=\"18\" aria-hidden=\"true\"><rect x=\"1\" y=\"1\" "
        "width=\"16\" height=\"16\" fill=\"#f4f4f4\" stroke=\"#555\"/></svg> no case &nbsp; "
        "<svg width=\"18\" height=\"18\" aria-hidden=\"true\"><rect x=\"1\" y=\"1\" width=\"16\" "
        "height=\"16\" fill=\"#fff\" stroke=\"#555\"/><path d=\"M9 1H17V9Z\" fill=\"#000\"/>"
        "</svg> black corner: untuned shape on the ASM path where a tile that does not fit N "
        "can win (docs/findings.md, finding 3) &nbsp; "
        "<svg width=\"30\" height=\"18\" aria-hidden=\"true\"><path d=\"M15 0V18\" "
        "stroke=\"#000\" stroke-width=\"3\" stroke-dasharray=\"5 3\"/></svg> the layer "
        "policy's N &#8804; 128 fence (left of it SGLang keeps the layer on Triton)</p>\n");
}

typedef struct {
    int worst; /* verdict_index of the most severe entry, -1 when empty */
    int first; /* first entry index in the cell's list, -1 when empty */
    int count;
    int hazard;
} cell;

static void cell_title(rbuf *b, const cJSON *const *ent, const int *next, const cell *c, int M,
                       int N, const char *backend)
{
    static const char *const up[NVERDICTS] = {"PASS", "FAIL", "N/A", "SKIP", "XFAIL",
                                              "AMBIGUOUS"};
    rb_printf(b, "<title>M=%d N=%d on ", M, N);
    rb_html(b, backend);
    rb_printf(b, ": %s (%d entr%s)", up[c->worst], c->count, c->count == 1 ? "y" : "ies");
    int shown = 0, lastK = -1;
    for (int i = c->first; i >= 0; i = next[i]) {
        const cJSON *e = ent[i];
        if (shown == 8) {
            rb_printf(b, "\n... and %d more (see Every case)", c->count - shown);
            break;
        }
        int K = jint(e, "K", 0);
        rb_puts(b, "\n");
        rb_html(b, jstr(e, "name"));
        rb_printf(b, " K=%d ", K);
        rb_html(b, jstr(e, "regime"));
        rb_printf(b, ": %s", jstr(e, "verdict"));
        char counts[160];
        if (!strcmp(jstr(e, "verdict"), "fail") &&
            !a4w4_report_differ_text(e, counts, sizeof counts)) /* never "0 of 0" */
            rb_printf(b, ", %s", counts);
        else if (!strcmp(jstr(e, "verdict"), "fail"))
            rb_printf(b, ", %.0f of %.0f differ", jnum(e, "mismatches", 0),
                      jnum(e, "checked_outputs", 0));
        char pick[512];
        if (K != lastK && entry_dispatch_text(e, pick, sizeof pick)) {
            rb_puts(b, "\n  dispatch: ");
            rb_html(b, pick);
        }
        lastK = K;
        shown++;
    }
    rb_puts(b, "</title>");
}

/* The layer policy's N <= 128 fence (contracts §6 step 3) where the entries' policy fields put
 * it: after the last column with policy reason small_n; yb is the bottom of the cells. */
static void draw_fence(rbuf *b, const fence_pos *fp, size_t nN, double L, double T, double cw,
                       double yb)
{
    if (fp->nle > 0) {
        double x = L + cw * (double)fp->nle;
        rb_printf(b,
                  "<path d=\"M%.1f %.0fV%.0f\" stroke=\"#000\" stroke-width=\"3\" "
                  "stroke-dasharray=\"6 3\"/>",
                  x, T - 2, yb + 6);
        rb_printf(b,
                  "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"end\">&#9664; Triton (N &#8804; 128)"
                  "</text>",
                  x - 4, yb + 18);
        if (fp->nle < nN)
            rb_printf(b, "<text x=\"%.1f\" y=\"%.0f\">ASM path (N &gt; 128) &#9654;</text>",
                      x + 4, yb + 18);
    } else if (!fp->known) {
        rb_printf(b,
                  "<text x=\"%.0f\" y=\"%.0f\">no layer-policy decisions in these results: "
                  "the N &#8804; 128 fence is not drawn</text>",
                  L, yb + 18);
    } else if (fp->all_asm) {
        rb_printf(b,
                  "<text x=\"%.0f\" y=\"%.0f\">every N here is &gt; 128: the N &#8804; 128 fence "
                  "keeps none of these shapes on Triton</text>",
                  L, yb + 18);
    } else {
        rb_printf(b,
                  "<text x=\"%.0f\" y=\"%.0f\">the N &#8804; 128 fence keeps none of these "
                  "shapes on Triton (no policy reason small_n)</text>",
                  L, yb + 18);
    }
}

typedef struct {
    double cw, ch;   /* cell width and height, px */
    double L, T;     /* left and top margins */
    double pw, ph;   /* plot width and height */
    int horiz;       /* N labels horizontal (wide cells) */
} map_geom;

static map_geom geometry(size_t nM, size_t nN)
{
    map_geom g;
    double cw = 900.0 / (double)nN, ch = 560.0 / (double)nM;
    cw = cw > 44 ? 44 : cw < 6 ? 6 : cw;
    ch = ch > 28 ? 28 : ch < 6 ? 6 : ch;
    g.cw = floor(cw);
    g.ch = floor(ch);
    g.horiz = g.cw >= 34;
    g.L = 64;
    g.T = g.horiz ? 44 : 64;
    g.pw = g.cw * (double)nN;
    g.ph = g.ch * (double)nM;
    return g;
}

/* Axis titles and the N and M labels. */
static void map_axes(rbuf *b, const map_geom *g, const int *Ms, size_t nM, const int *Ns,
                     size_t nN)
{
    rb_printf(b, "<text x=\"%.0f\" y=\"12\" font-weight=\"600\">N (output features) &#8594;</text>",
              g->L);
    rb_printf(b,
              "<text transform=\"translate(12,%.0f) rotate(-90)\" text-anchor=\"end\" "
              "font-weight=\"600\">M (rows) &#8594;</text>",
              g->T);
    /* N labels */
    int stepN = g->horiz ? 1 : (int)ceil(13.0 / g->cw);
    for (size_t i = 0; i < nN; i++) {
        /* every stepN-th label, and the last one when it does not crowd its neighbour */
        if (i % (size_t)stepN && (i != nN - 1 || i % (size_t)stepN < (size_t)stepN / 2 + 1))
            continue;
        double x = g->L + g->cw * ((double)i + 0.5);
        if (g->horiz)
            rb_printf(b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d</text>", x,
                      g->T - 6, Ns[i]);
        else
            rb_printf(b, "<text transform=\"translate(%.1f,%.0f) rotate(-90)\" dy=\"4\">%d</text>",
                      x, g->T - 4, Ns[i]);
    }
    /* M labels */
    int stepM = (int)ceil(12.0 / g->ch);
    for (size_t i = 0; i < nM; i++) {
        if (i % (size_t)stepM && (i != nM - 1 || i % (size_t)stepM < (size_t)stepM / 2 + 1))
            continue;
        rb_printf(b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%d</text>", g->L - 5,
                  g->T + g->ch * ((double)i + 0.5) + 4, Ms[i]);
    }
}

/* One <g> per non-empty cell: tooltip, verdict fill, the exposed corner. */
static void map_cells(rbuf *b, const map_geom *g, const cell *cells, const cJSON *const *ent,
                      const int *next, const int *Ms, size_t nM, const int *Ns, size_t nN,
                      const char *backend)
{
    for (size_t mi = 0; mi < nM; mi++)
        for (size_t ni = 0; ni < nN; ni++) {
            const cell *c = &cells[mi * nN + ni];
            if (c->worst < 0)
                continue;
            double x = g->L + g->cw * (double)ni, y = g->T + g->ch * (double)mi;
            rb_puts(b, "<g>");
            cell_title(b, ent, next, c, Ms[mi], Ns[ni], backend);
            rb_printf(b,
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                      "stroke=\"#fff\" stroke-width=\"%s\"/>",
                      x, y, g->cw, g->ch, fill_of[c->worst],
                      g->cw >= 10 && g->ch >= 10 ? "1" : "0.4");
            if (c->hazard) {
                double s = (g->cw < g->ch ? g->cw : g->ch) * 0.5;
                s = s < 3 ? 3 : s;
                rb_printf(b, "<path d=\"M%.1f %.1fH%.1fV%.1fZ\" fill=\"#000\"/>",
                          x + g->cw - s, y, x + g->cw, y + s);
            }
            rb_puts(b, "</g>");
        }
}

static void hazard_map(rbuf *b, const cJSON *cases, const char *backend, const char *contract,
                       const int *Ms, size_t nM, const int *Ns, size_t nN, const fence_pos *fp)
{
    size_t ncell = nM * nN;
    int ncases = cJSON_GetArraySize(cases);
    cell *cells = malloc(ncell * sizeof *cells);
    int *next = malloc(((size_t)ncases + 1) * sizeof *next);
    int *last = malloc(ncell * sizeof *last);
    const cJSON **ent = malloc(((size_t)ncases + 1) * sizeof *ent);
    if (!cells || !next || !last || !ent) {
        free(cells);
        free(next);
        free(last);
        free((void *)ent);
        b->oom = 1;
        return;
    }
    for (size_t i = 0; i < ncell; i++) {
        cells[i].worst = -1;
        cells[i].first = -1;
        cells[i].count = 0;
        cells[i].hazard = 0;
        last[i] = -1;
    }
    int counts[NVERDICTS] = {0, 0, 0, 0, 0};
    const cJSON *e;
    int idx = 0;
    cJSON_ArrayForEach(e, cases) {
        next[idx] = -1;
        ent[idx] = e;
        if (!strcmp(jstr(e, "backend"), backend) && !strcmp(jstr(e, "contract"), contract)) {
            int M = jint(e, "M", 0), N = jint(e, "N", 0);
            long mi = index_of(Ms, nM, M), ni = index_of(Ns, nN, N);
            if (mi >= 0 && ni >= 0) {
                size_t c = (size_t)mi * nN + (size_t)ni;
                int v = entry_verdict_index(e);
                counts[v]++;
                if (cells[c].worst < 0 || verdict_severity(v) > verdict_severity(cells[c].worst))
                    cells[c].worst = v;
                if (last[c] < 0)
                    cells[c].first = idx;
                else
                    next[last[c]] = idx;
                last[c] = idx;
                cells[c].count++;
                cells[c].hazard |= entry_exposed(e);
            }
        }
        idx++;
    }
    map_geom g = geometry(nM, nN);
    double L = g.L, T = g.T, pw = g.pw, ph = g.ph, W = L + pw + 24, H = T + ph + 44;
    rb_puts(b, "<figure><figcaption>");
    rb_html(b, backend);
    rb_puts(b, " &#8212; ");
    rb_html(b, contract);
    rb_printf(b, ": %d pass, %d fail, %d n/a, %d skip", counts[0], counts[1], counts[2],
              counts[3]);
    if (counts[VERDICT_XFAIL])
        rb_printf(b, ", %d xfail", counts[VERDICT_XFAIL]);
    rb_puts(b, "</figcaption>\n");
    rb_printf(b,
              "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
              "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"hazard map of ",
              W, H, W, H);
    rb_html(b, backend);
    rb_printf(b,
              ": M by N, %d failing entries\" font-size=\"11\" "
              "font-family=\"DejaVu Sans,Arial,sans-serif\">",
              counts[1]);
    rb_printf(b,
              "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#f4f4f4\" "
              "stroke=\"#999\"/>",
              L, T, pw, ph);
    map_axes(b, &g, Ms, nM, Ns, nN);
    map_cells(b, &g, cells, ent, next, Ms, nM, Ns, nN, backend);
    draw_fence(b, fp, nN, g.L, g.T, g.cw, g.T + g.ph);
    rb_puts(b, "</svg></figure>\n");
    free(cells);
    free(next);
    free(last);
    free((void *)ent);
}

/* ---- sections ------------------------------------------------------------------------- */

/* The verdict banner and the completeness line, as the document records them (never
 * recomputed; an older document says "verdict not recorded"). */
static void banner(rbuf *b, const cJSON *doc, const cJSON *cases, const int n[NVERDICTS])
{
    static const char *const cls[4] = {"pass", "fail", "incomplete", "unknown"};
    static const char *const glyph[4] = {"&#10004;", "&#10008;", "&#9888;", "?"};
    doc_verdict v;
    doc_verdict_read(doc, &v);
    int k = doc_verdict_index(&v);
    rb_printf(b,
              "<p class=\"banner %s\" id=\"verdict\">%s %s%s &#8212; %d failing entr%s of %d "
              "(%d pass, %d n/a, %d skip, %d ambiguous; %zu cases)</p>\n",
              cls[k], glyph[k], v.verdict ? "Verdict: " : "", doc_verdict_word(&v), n[1],
              n[1] == 1 ? "y" : "ies", cJSON_GetArraySize(cases), n[0], n[2], n[3],
              n[VERDICT_AMBIGUOUS],
              distinct_cases(cases));
    char comp[1200];
    rb_puts(b, "<p id=\"completeness\">Completeness: ");
    rb_html(b, doc_completeness_text(&v, comp, sizeof comp));
    if (*v.reason) {
        rb_puts(b, ". Verdict reason: ");
        rb_html(b, v.reason);
    }
    rb_puts(b, ".</p>\n");
}

static void section_summary(rbuf *b, const cJSON *doc, const cJSON *cases,
                            const a4w4_report_opts *o)
{
    int n[NVERDICTS];
    verdict_counts(cases, n);
    rb_printf(b, "<h1>a4w4check report: ");
    rb_html(b, jstr(doc, "set"));
    rb_puts(b, "</h1>\n");
    banner(b, doc, cases, n);
    rb_puts(b, "<p class=\"meta\">Results schema <code>");
    rb_html(b, jstr(doc, "schema"));
    rb_puts(b, "</code>, a4w4check ");
    rb_html(b, jstr(doc, "tool_version"));
    if (*jstr(doc, "cases_file")) {
        rb_puts(b, ", cases file <code>");
        rb_html(b, jstr(doc, "cases_file"));
        rb_puts(b, "</code>");
    }
    if (*jstr(doc, "matrix_hash")) {
        rb_puts(b, " (matrix ");
        rb_html(b, jstr(doc, "matrix_hash"));
        rb_puts(b, ")");
    }
    if (*jstr(doc, "shard") && strcmp(jstr(doc, "shard"), "1/1")) {
        rb_puts(b, ", shard ");
        rb_html(b, jstr(doc, "shard"));
    }
    if (jhas(doc, "full"))
        rb_puts(b, jtrue(doc, "full") ? ", every output checked"
                                      : ", outputs sampled above 2^26 MACs");
    if (jnum(doc, "budget_seconds", 0) > 0)
        rb_printf(b, " unless the run's budget of %g s of host checking (at its own measured "
                     "rates) covers the case",
                  jnum(doc, "budget_seconds", 0));
    if (o->source && !o->reproducible) {
        rb_puts(b, "; from <code>");
        rb_html(b, o->source);
        rb_puts(b, "</code>");
    }
    rb_puts(b, ". Contracts (contracts §4.1): bit-exact against ordered(S) or exact; bounded "
               "backends within the derived bound, never called bit-exact.</p>\n");
    rb_puts(b, "<nav><a href=\"#backends\">Backends</a><a href=\"#environment\">Environment</a>"
               "<a href=\"#hazard\">Hazard map</a><a href=\"#mismatches\">Mismatches</a>"
               "<a href=\"#ulp\">ULP distance</a><a href=\"#timing\">Timing</a>"
               "<a href=\"#cases\">Every case</a></nav>\n");
    size_t nt = 0;
    tally *t = tally_build(cases, &nt);
    rb_puts(b, "<h2 id=\"backends\">Verdict per backend and contract</h2>\n<table>\n<thead><tr>"
               "<th>verdict</th><th>backend</th><th>contract</th><th class=\"n\">pass</th>"
               "<th class=\"n\">fail</th><th class=\"n\">n/a</th><th class=\"n\">skip</th>"
               "<th class=\"n\">max ULP</th><th>meaning</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < nt; i++) {
        rb_puts(b, "<tr><td>");
        html_verdict_chip(b, t[i].n[1] ? 1 : t[i].n[0] ? 0 : 2);
        rb_puts(b, "</td><td><code>");
        rb_html(b, t[i].backend);
        rb_puts(b, "</code></td><td>");
        rb_html(b, t[i].contract);
        rb_printf(b,
                  "</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d</td>"
                  "<td class=\"n\">%d</td><td class=\"n\">",
                  t[i].n[0], t[i].n[1], t[i].n[2], t[i].n[3] + t[i].n[VERDICT_AMBIGUOUS]);
        ulp_cell(b, t[i].max_ulp, t[i].nan_ulp, "&#8211;");
        rb_puts(b, "</td><td>");
        if (t[i].n[1])
            rb_printf(b, "%d entr%s differ from the contract", t[i].n[1],
                      t[i].n[1] == 1 ? "y" : "ies");
        else if (!t[i].n[0])
            rb_puts(b, "nothing applicable was checked");
        else if (contract_bounded(t[i].contract))
            rb_puts(b, "within the derived bound on every checked output (not bit-exact)");
        else
            rb_puts(b, "bit-exact on every checked output");
        rb_puts(b, "</td></tr>\n");
    }
    rb_puts(b, "</tbody></table>\n");
    free(t);
}

static void section_environment(rbuf *b, const cJSON *doc, const cJSON *cases,
                                const a4w4_report_opts *o)
{
    rb_puts(b, "<h2 id=\"environment\">Environment</h2>\n");
    if (o->reproducible) {
        rb_puts(b, "<p class=\"note\">Left out (reproducible rendering).</p>\n");
    } else {
        const char *labels[16], *values[16];
        char scratch[8][160];
        size_t ne = environment_rows(doc, labels, values, 16, scratch);
        if (!ne)
            rb_puts(b, "<p class=\"note\">Not recorded in this results file.</p>\n");
        else {
            rb_puts(b, "<table><tbody>\n");
            for (size_t i = 0; i < ne; i++) {
                rb_printf(b, "<tr><th>%s</th><td class=\"mono\">", labels[i]);
                rb_html(b, values[i]);
                rb_puts(b, "</td></tr>\n");
            }
            rb_puts(b, "</tbody></table>\n");
        }
    }
    rb_puts(b, "<p class=\"note\">Hazard map picks: ");
    if (entries_with_dispatch(cases))
        rb_puts(b, "the route, policy and hazard fields of the results entries, written by the "
                   "run: dispatch oracle (contracts §5) with gfx950, 256 CUs, log2_k_split 0, "
                   "preshuffled weights and the tables under cases/aiter/; layer policy "
                   "(contracts §6) with the flag on and 2-D activations; golden bundles carry "
                   "none");
    else
        rb_puts(b, "not shown: no entry of this results document has route and policy fields "
                   "(written before they existed, or golden bundles only)");
    rb_puts(b, ".</p>\n");
}

static void section_hazard(rbuf *b, const cJSON *cases)
{
    rb_puts(b, "<h2 id=\"hazard\">Hazard map</h2>\n<p>One map per backend: rows M, columns N, "
               "each cell coloured by the most severe verdict of that backend's entries at (M, N) "
               "(fail over pass over n/a over skip, every K together). Hover a cell for its cases "
               "and the dispatch oracle's pick (AITER's gemm_a4w4 routing, contracts §5) with "
               "SGLang's layer decision.</p>\n");
    legend(b);
    size_t nM = 0, nN = 0, nt = 0;
    tally *t = tally_build(cases, &nt);
    size_t non_oracle = 0;
    for (size_t i = 0; i < nt; i++)
        non_oracle += strcmp(t[i].backend, "oracle") != 0;
    /* the axes: every M and N of the mapped backends (the oracle's golden entries include
     * quantization-only bundles with N = 0) */
    const char *skip = non_oracle ? "oracle" : NULL;
    int *Ms = distinct_ints(cases, "M", skip, &nM), *Ns = distinct_ints(cases, "N", skip, &nN);
    if (!Ms || !Ns || !nM || !nN)
        rb_puts(b, "<p>No cases.</p>\n");
    fence_pos fp = fence_find(cases, Ns, Ns ? nN : 0);
    for (size_t i = 0; Ms && Ns && nM && nN && i < nt; i++) {
        if (non_oracle && !strcmp(t[i].backend, "oracle"))
            continue;
        hazard_map(b, cases, t[i].backend, t[i].contract, Ms, nM, Ns, nN, &fp);
    }
    if (non_oracle && non_oracle < nt)
        rb_puts(b, "<p class=\"note\">The oracle's own checks (ordered(1) == exact, golden "
                   "tensors) are in the tables below, not mapped.</p>\n");
    free(t);
    free(Ms);
    free(Ns);
}

static void mismatch_table(rbuf *b, const cJSON *e)
{
    const cJSON *fm = cJSON_GetObjectItemCaseSensitive(e, "first_mismatches");
    if (!cJSON_GetArraySize(fm)) {
        rb_puts(b, "<p class=\"note\">No mismatch coordinates recorded (the failure is in the "
                   "note).</p>\n");
        return;
    }
    rb_puts(b, "<table><thead><tr><th>tensor</th><th class=\"n\">row</th><th class=\"n\">col</th>"
               "<th>got</th><th>expected</th><th class=\"n\">bf16 ULP "
               "distance</th></tr></thead><tbody>\n");
    const cJSON *m;
    cJSON_ArrayForEach(m, fm) {
        long u = bf16_hex_ulp(jstr(m, "got"), jstr(m, "expected"));
        rb_puts(b, "<tr><td>");
        rb_html(b, *jstr(m, "tensor") ? jstr(m, "tensor") : "y");
        rb_printf(b, "</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td class=\"mono\">",
                  jnum(m, "row", 0), jnum(m, "col", 0));
        rb_html(b, jstr(m, "got"));
        rb_puts(b, "</td><td class=\"mono\">");
        rb_html(b, jstr(m, "expected"));
        if (u >= 0)
            rb_printf(b, "</td><td class=\"n\">%ld</td></tr>\n", u);
        else
            rb_puts(b, "</td><td class=\"n\">&#8211;</td></tr>\n");
    }
    rb_puts(b, "</tbody></table>\n");
}

static void section_mismatches(rbuf *b, const cJSON *cases)
{
    int n[NVERDICTS];
    verdict_counts(cases, n);
    rb_printf(b, "<h2 id=\"mismatches\">Mismatches (%d failing entr%s)</h2>\n", n[1],
              n[1] == 1 ? "y" : "ies");
    if (!n[1]) {
        rb_puts(b, "<p>None: every checked output met its contract.</p>\n");
        return;
    }
    const cJSON *e;
    /* an overview of every failing entry, then one collapsible detail each */
    rb_puts(b, "<table class=\"sortable\"><thead><tr><th>case</th><th>backend</th><th>contract</th>"
               "<th class=\"n\">M</th><th class=\"n\">N</th><th class=\"n\">K</th>"
               "<th class=\"n\">differ</th><th class=\"n\">checked</th><th class=\"n\">max ULP</th>"
               "<th>first mismatch</th></tr></thead><tbody>\n");
    cJSON_ArrayForEach(e, cases) {
        if (strcmp(jstr(e, "verdict"), "fail"))
            continue;
        rb_puts(b, "<tr><td><code>");
        rb_html(b, jstr(e, "name"));
        rb_puts(b, "</code></td><td>");
        rb_html(b, jstr(e, "backend"));
        rb_puts(b, "</td><td>");
        rb_html(b, jstr(e, "contract"));
        rb_printf(b,
                  "</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td>"
                  "<td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td class=\"n\">",
                  jnum(e, "M", 0), jnum(e, "N", 0), jnum(e, "K", 0), jnum(e, "mismatches", 0),
                  jnum(e, "checked_outputs", 0));
        int nan, mu = entry_max_ulp(e, &nan);
        ulp_cell(b, mu, nan, "&#8211;");
        if (jhas(e, "bound_use"))
            rb_printf(b, " (%.3g of the bound, strength %.3g)", jnum(e, "bound_use", 0),
                      jnum(e, "bound_strength", 1));
        rb_puts(b, "</td><td class=\"mono\">");
        const cJSON *m =
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "first_mismatches"), 0);
        if (m) {
            rb_html(b, *jstr(m, "tensor") ? jstr(m, "tensor") : "y");
            rb_printf(b, "(%.0f, %.0f) got ", jnum(m, "row", 0), jnum(m, "col", 0));
            rb_html(b, jstr(m, "got"));
            rb_puts(b, " expected ");
            rb_html(b, jstr(m, "expected"));
        } else
            rb_html(b, jstr(e, "note"));
        rb_puts(b, "</td></tr>\n");
    }
    rb_puts(b, "</tbody></table>\n");
    int k = 0;
    cJSON_ArrayForEach(e, cases) {
        if (strcmp(jstr(e, "verdict"), "fail"))
            continue;
        rb_printf(b, "<details%s><summary>", k++ < 3 ? " open" : "");
        html_verdict_chip(b, 1);
        rb_puts(b, " <code>");
        rb_html(b, jstr(e, "name"));
        rb_puts(b, "</code> on <code>");
        rb_html(b, jstr(e, "backend"));
        rb_puts(b, "</code> (");
        rb_html(b, jstr(e, "contract"));
        char counts[160];
        a4w4_report_differ_text(e, counts, sizeof counts);
        rb_printf(b, "): %s</summary>\n", counts);
        rb_printf(b, "<p>M=%.0f N=%.0f K=%.0f, regime ", jnum(e, "M", 0), jnum(e, "N", 0),
                  jnum(e, "K", 0));
        rb_html(b, jstr(e, "regime"));
        rb_puts(b, ", seed ");
        rb_html(b, jstr(e, "seed"));
        rb_printf(b, ", %s; %.0f never written; largest distance ",
                  jtrue(e, "sampled") ? "sampled" : "full", jnum(e, "unwritten", 0));
        double mu = jnum(e, "max_ulp", -1);
        if (mu >= 0)
            rb_printf(b, "%.0f ULP", mu);
        else
            rb_puts(b, "not measurable (NaN against a number)");
        rb_puts(b, ".");
        if (*jstr(e, "pad_dependent")) {
            rb_puts(b, " <b>Pad-dependent:</b> ");
            rb_html(b, jstr(e, "pad_dependent"));
            rb_puts(b, ".");
        }
        if (*jstr(e, "note")) {
            rb_puts(b, " <span class=\"note\">");
            rb_html(b, jstr(e, "note"));
            rb_puts(b, "</span>");
        }
        char pick[512];
        if (entry_dispatch_text(e, pick, sizeof pick)) {
            rb_puts(b, " AITER would route this shape: ");
            rb_html(b, pick);
            rb_puts(b, ".");
        }
        static const char *const forensic[3][2] = {
            {"signature", "Signature"}, {"repro", "Repro"}, {"saved", "Operands saved as"}};
        for (int i = 0; i < 3; i++)
            if (*jstr(e, forensic[i][0])) {
                rb_printf(b, " <b>%s:</b> <code>", forensic[i][1]);
                rb_html(b, jstr(e, forensic[i][0]));
                rb_puts(b, "</code>");
            }
        tolerance_text(b, e, rb_html);
        rb_puts(b, "</p>\n");
        mismatch_table(b, e);
        rb_puts(b, "</details>\n");
    }
}

#define ULP_BINS 17
static void ulp_bin_label(int i, char *buf, size_t len)
{
    if (i == 0)
        snprintf(buf, len, "0");
    else if (i == 1)
        snprintf(buf, len, "1");
    else if (i == ULP_BINS - 1)
        snprintf(buf, len, "%ld+", 1L << (i - 1));
    else
        snprintf(buf, len, "%ld-%ld", 1L << (i - 1), (1L << i) - 1);
}

static int ulp_bin(long d)
{
    int i = 0;
    while (d > 0 && i < ULP_BINS - 1) {
        d >>= 1;
        i++;
    }
    return i;
}

/* Bars per ULP bin, the count written over each; logscale: heights by log10(1 + count), for
 * output counts where distance 0 dwarfs the rest. */
static void histogram_svg(rbuf *b, const double *bins, const char *what, int logscale)
{
    int top = 0;
    double mx = 0;
    for (int i = 0; i < ULP_BINS; i++) {
        if (bins[i] > 0)
            top = i;
        if (bins[i] > mx)
            mx = bins[i];
    }
    int nb = top + 1 < 4 ? 4 : top + 1;
    double bw = 44, L = 48, T = 18, ph = 140, W = L + bw * nb + 16, H = T + ph + 34;
    W = W < 300 ? 300 : W; /* room for the axis title */
    rb_printf(
        b,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" role=\"img\" "
        "aria-label=\"%s\" font-size=\"11\" font-family=\"DejaVu Sans,Arial,sans-serif\">",
        W, H, what);
    rb_printf(b, "<path d=\"M%.0f %.0fV%.0fH%.0f\" stroke=\"#555\" fill=\"none\"/>", L, T, T + ph,
              W - 8);
    for (int i = 0; i < nb; i++) {
        double h = mx <= 0    ? 0
                   : logscale ? ph * log10(1 + bins[i]) / log10(1 + mx)
                              : ph * bins[i] / mx;
        double x = L + bw * i + 6;
        char lab[32];
        ulp_bin_label(i, lab, sizeof lab);
        rb_printf(b,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"" OI_ORANGE
                  "\" stroke=\"#7a5500\"><title>%s ULP: %.0f</title></rect>",
                  x, T + ph - h, bw - 12, h, lab, bins[i]);
        rb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>",
                  x + (bw - 12) / 2, T + ph - h - 3, bins[i]);
        rb_printf(b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>",
                  x + (bw - 12) / 2, T + ph + 14, lab);
    }
    rb_printf(b, "<text x=\"%.0f\" y=\"%.0f\">ULP distance from the exact result</text>", L,
              T + ph + 30);
    rb_puts(b, "</svg>\n");
}

static void section_ulp(rbuf *b, const cJSON *cases)
{
    rb_puts(b, "<h2 id=\"ulp\">ULP distance of bounded backends</h2>\n");
    size_t nt = 0;
    tally *t = tally_build(cases, &nt);
    int any = 0;
    for (size_t i = 0; i < nt; i++) {
        if (!contract_bounded(t[i].contract))
            continue;
        any = 1;
        double out_bins[ULP_BINS] = {0}, case_bins[ULP_BINS] = {0};
        int have_hist = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, cases) {
            if (strcmp(jstr(e, "backend"), t[i].backend) ||
                strcmp(jstr(e, "contract"), t[i].contract))
                continue;
            const cJSON *h = cJSON_GetObjectItemCaseSensitive(e, "ulp_histogram"), *x;
            int k = 0;
            if (cJSON_IsArray(h)) {
                have_hist = 1;
                cJSON_ArrayForEach(x, h) {
                    out_bins[k < ULP_BINS ? k : ULP_BINS - 1] += x->valuedouble;
                    k++;
                }
            }
            double mu = jnum(e, "max_ulp", -1);
            if (mu >= 0 && strcmp(jstr(e, "verdict"), "n/a") && strcmp(jstr(e, "verdict"), "skip"))
                case_bins[ulp_bin(jint(e, "max_ulp", -1))] += 1;
        }
        rb_puts(b, "<figure><figcaption><code>");
        rb_html(b, t[i].backend);
        rb_puts(b, "</code> &#8212; ");
        rb_html(b, t[i].contract);
        rb_printf(b, ": largest distance %d ULP</figcaption>\n", t[i].max_ulp);
        if (have_hist) {
            rb_puts(
                b,
                "<p>Checked outputs per ULP distance (bins 0, 1, 2-3, 4-7, ...; bar heights on a "
                "log scale, counts written over the bars):</p>\n");
            histogram_svg(b, out_bins, "checked outputs per ULP distance", 1);
        }
        rb_puts(b, "<p>Entries per largest ULP distance:</p>\n");
        histogram_svg(b, case_bins, "entries per largest ULP distance", 0);
        rb_puts(b, "</figure>\n");
    }
    if (!any)
        rb_puts(b,
                "<p>No bounded backend in this run: every backend declared a bit-exact contract "
                "(ordered(S) or exact), so any difference at all is a failure and is listed under "
                "Mismatches.</p>\n");
    free(t);
}

typedef struct {
    double ms;
    int idx; /* document order, for a stable sort */
    const cJSON *e;
} timed_entry;

static int cmp_timed(const void *a, const void *b)
{
    const timed_entry *x = a, *y = b;
    if (x->ms != y->ms)
        return x->ms > y->ms ? -1 : 1;
    return x->idx - y->idx;
}

static void section_timing(rbuf *b, const cJSON *cases, const a4w4_report_opts *o)
{
    rb_puts(b, "<h2 id=\"timing\">Timing</h2>\n");
    if (o->reproducible) {
        rb_puts(b, "<p class=\"note\">Left out (reproducible rendering).</p>\n");
        return;
    }
    int n = cJSON_GetArraySize(cases);
    timed_entry *te = malloc(((size_t)n + 1) * sizeof *te);
    if (!te) {
        b->oom = 1;
        return;
    }
    size_t nt = 0;
    tally *t = tally_build(cases, &nt);
    rb_puts(b,
            "<p>Wall time of each backend call (the first run of a case; pad variants not "
            "counted); golden entries share their bundle's verify time.</p>\n<table>\n<thead><tr>"
            "<th>backend</th><th>contract</th><th class=\"n\">timed entries</th>"
            "<th class=\"n\">total ms</th><th class=\"n\">median ms</th><th class=\"n\">max ms</th>"
            "<th>slowest case</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < nt; i++) {
        size_t m = 0;
        const cJSON *e;
        int idx = 0;
        cJSON_ArrayForEach(e, cases) {
            if (!strcmp(jstr(e, "backend"), t[i].backend) &&
                !strcmp(jstr(e, "contract"), t[i].contract) && jnum(e, "time_ms", 0) > 0) {
                te[m].ms = jnum(e, "time_ms", 0);
                te[m].e = e;
                te[m++].idx = idx;
            }
            idx++;
        }
        if (!m)
            continue;
        qsort(te, m, sizeof *te, cmp_timed);
        double med = m % 2 ? te[m / 2].ms : (te[m / 2 - 1].ms + te[m / 2].ms) / 2;
        rb_puts(b, "<tr><td><code>");
        rb_html(b, t[i].backend);
        rb_puts(b, "</code></td><td>");
        rb_html(b, t[i].contract);
        rb_printf(b,
                  "</td><td class=\"n\">%zu</td><td class=\"n\">%.1f</td><td class=\"n\">%.3f</td>"
                  "<td class=\"n\">%.1f</td><td><code>",
                  m, t[i].time_ms, med, te[0].ms);
        rb_html(b, jstr(te[0].e, "name"));
        rb_puts(b, "</code></td></tr>\n");
    }
    rb_puts(b, "</tbody></table>\n");
    free(t);
    size_t m = 0;
    const cJSON *e;
    int idx = 0;
    cJSON_ArrayForEach(e, cases) {
        if (jnum(e, "time_ms", 0) > 0) {
            te[m].ms = jnum(e, "time_ms", 0);
            te[m].e = e;
            te[m++].idx = idx;
        }
        idx++;
    }
    qsort(te, m, sizeof *te, cmp_timed);
    rb_printf(b,
              "<details><summary>Per-case timing: %zu timed entries, slowest first (click a "
              "header to sort)</summary>\n<table class=\"sortable\"><thead><tr><th>case</th>"
              "<th>backend</th><th class=\"n\">M</th><th class=\"n\">N</th><th class=\"n\">K</th>"
              "<th class=\"n\">checked outputs</th><th class=\"n\">time ms</th>"
              "<th class=\"n\">ns per output</th><th>relative</th></tr></thead><tbody>\n",
              m);
    double top = m ? te[0].ms : 1;
    for (size_t i = 0; i < m; i++) {
        const cJSON *x = te[i].e;
        double co = jnum(x, "checked_outputs", 0);
        rb_puts(b, "<tr><td><code>");
        rb_html(b, jstr(x, "name"));
        rb_puts(b, "</code></td><td>");
        rb_html(b, jstr(x, "backend"));
        rb_printf(b,
                  "</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td>"
                  "<td class=\"n\">%.0f</td><td class=\"n\">%.3f</td><td class=\"n\">",
                  jnum(x, "M", 0), jnum(x, "N", 0), jnum(x, "K", 0), co, te[i].ms);
        if (co > 0)
            rb_printf(b, "%.1f", te[i].ms * 1e6 / co);
        rb_printf(b,
                  "</td><td data-v=\"%.6f\"><span class=\"bar\" "
                  "style=\"width:%.0fpx\"></span></td></tr>\n",
                  te[i].ms, 1 + 160 * te[i].ms / top);
    }
    rb_puts(b, "</tbody></table></details>\n");
    free(te);
}

static void section_cases(rbuf *b, const cJSON *cases, const a4w4_report_opts *o)
{
    size_t ng = 0;
    group *g = groups_build(cases, &ng);
    rb_puts(b, "<h2 id=\"cases\">Every case</h2>\n<p>One table per group: golden bundles, real "
               "layer shapes by (N, K), other cases by their first tag. Groups with a failure are "
               "open; click a header to sort.</p>\n");
    for (size_t i = 0; i < ng; i++) {
        rb_printf(b, "<details%s><summary>", g[i].n_by_verdict[1] ? " open" : "");
        html_verdict_chip(b, g[i].n_by_verdict[1] ? 1 : g[i].n_by_verdict[0] ? 0 : 2);
        rb_puts(b, " <b>");
        rb_html(b, g[i].key);
        rb_printf(b, "</b>: %zu entries, %d pass, %d fail, %d n/a, %d skip, %d ambiguous"
                  "</summary>\n", g[i].n, g[i].n_by_verdict[0], g[i].n_by_verdict[1],
                  g[i].n_by_verdict[2], g[i].n_by_verdict[3], g[i].n_by_verdict[VERDICT_AMBIGUOUS]);
        rb_printf(b,
                  "<table class=\"sortable\"><thead><tr><th>case</th><th class=\"n\">M</th>"
                  "<th class=\"n\">N</th><th class=\"n\">K</th><th>regime</th><th>backend</th>"
                  "<th>contract</th><th class=\"n\">checked outputs</th><th>sampled</th>"
                  "<th>verdict</th><th class=\"n\">mismatches</th><th class=\"n\">max ULP</th>%s"
                  "<th>note</th></tr></thead><tbody>\n",
                  o->reproducible ? "" : "<th class=\"n\">time ms</th>");
        for (size_t j = 0; j < g[i].n; j++) {
            const cJSON *e = g[i].e[j];
            rb_puts(b, "<tr><td><code>");
            rb_html(b, jstr(e, "name"));
            if (*jstr(e, "layer") || *jstr(e, "call_site")) { /* a capture's layer and line */
                rb_puts(b, "</code> <small>layer ");
                rb_html(b, jstr(e, "layer"));
                rb_puts(b, " at ");
                rb_html(b, jstr(e, "call_site"));
                rb_puts(b, "</small><code>");
            }
            rb_printf(b,
                      "</code></td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td>"
                      "<td class=\"n\">%.0f</td><td>",
                      jnum(e, "M", 0), jnum(e, "N", 0), jnum(e, "K", 0));
            rb_html(b, jstr(e, "regime"));
            rb_puts(b, "</td><td>");
            rb_html(b, jstr(e, "backend"));
            rb_puts(b, "</td><td>");
            rb_html(b, jstr(e, "contract"));
            rb_printf(b, "</td><td class=\"n\">%.0f</td><td>%s</td><td data-v=\"%s\">",
                      jnum(e, "checked_outputs", 0), jtrue(e, "sampled") ? "sampled" : "full",
                      jstr(e, "verdict"));
            html_verdict_chip(b, entry_verdict_index(e));
            rb_printf(b, "</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td>",
                      jnum(e, "mismatches", 0), jnum(e, "max_ulp", -1));
            if (!o->reproducible)
                rb_printf(b, "<td class=\"n\">%.3f</td>", jnum(e, "time_ms", 0));
            rb_puts(b, "<td class=\"note\">");
            rb_html(b, jstr(e, "note"));
            rb_puts(b, "</td></tr>\n");
        }
        rb_puts(b, "</tbody></table></details>\n");
    }
    groups_free(g, ng);
}

/* One invariance map as recorded: (N, K) rows, M-bucket columns, each cell's colour doubled
 * by its text. */
static void invariance_map(rbuf *b, const cJSON *m)
{
    static const char *const names[] = {"invariant", "variant", "nondeterministic", "unknown"};
    static const char *const marks[] = {"inv", "VAR", "nondet", "?"};
    static const char *const colour[] = {"#009E73", "#D55E00", "#E69F00", "#BBBBBB"};
    const cJSON *x, *q;
    rb_puts(b, "<h3>");
    rb_html(b, jstr(m, "title"));
    rb_puts(b, "</h3>\n<table><tr><th>N</th><th>K</th>");
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(m, "buckets")) {
        double lo = cJSON_GetArrayItem(x, 0)->valuedouble, hi = cJSON_GetArrayItem(x, 1)->valuedouble;
        rb_printf(b, lo == hi ? "<th>%.0f</th>" : "<th>%.0f-%.0f</th>", lo, hi);
    }
    rb_puts(b, "<th>first break</th></tr>\n");
    cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(m, "pairs")) {
        rb_printf(b, "<tr><td>%.0f</td><td>%.0f</td>", jnum(q, "N", 0), jnum(q, "K", 0));
        cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(q, "cells"))
            for (int k = 0; k < 4; k++)
                if (cJSON_IsString(x) && !strcmp(x->valuestring, names[k]))
                    rb_printf(b, "<td style=\"background:%s;color:#fff\">%s</td>", colour[k],
                              marks[k]);
        rb_puts(b, "<td>");
        rb_html(b, jstr(q, "cause"));
        rb_puts(b, "</td></tr>\n");
    }
    rb_puts(b, "</table>\n");
}

/* `invariance --out`'s maps and measurements, as recorded (docs/cli/invariance.md). */
static void section_invariance(rbuf *b, const cJSON *doc)
{
    const cJSON *inv = cJSON_GetObjectItemCaseSensitive(doc, "invariance"), *x;
    if (!cJSON_IsObject(inv))
        return;
    rb_puts(b, "<h2 id=\"invariance\">Batch invariance</h2>\n<p>Cells: inv (every M of the "
               "bucket gives row i the bits it gets at M = 1), VAR (variant), nondet (bf16 "
               "atomics), ? (no declared contract decides).</p>\n");
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(inv, "maps"))
        invariance_map(b, x);
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(inv, "measurements");
    if (cJSON_GetArraySize(ms) > 0)
        rb_puts(b, "<h3>Measured</h3>\n<table><tr><th>backend</th><th>N</th><th>K</th><th>M</th>"
                   "<th>measurement</th></tr>\n");
    cJSON_ArrayForEach(x, ms) {
        rb_puts(b, "<tr><td>");
        rb_html(b, jstr(x, "backend"));
        rb_printf(b, "</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>", jnum(x, "N", 0),
                  jnum(x, "K", 0), jnum(x, "M", 0));
        rb_html(b, jstr(x, "line"));
        rb_puts(b, "</td></tr>\n");
    }
    rb_puts(b, cJSON_GetArraySize(ms) > 0 ? "</table>\n" : "");
}

char *a4w4_report_html(const cJSON *doc, const a4w4_report_opts *o)
{
    if (!o)
        o = &default_opts;
    rbuf b = {0};
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    char title[256];
    doc_verdict v;
    doc_verdict_read(doc, &v);
    snprintf(title, sizeof title, "a4w4check report: %.120s - %s", jstr(doc, "set"),
             doc_verdict_word(&v));
    html_begin(&b, title);
    svg_defs(&b);
    section_summary(&b, doc, cases, o);
    section_environment(&b, doc, cases, o);
    section_hazard(&b, cases);
    section_invariance(&b, doc);
    layer_parity(&b, cases, &rb_htmlmarkup);
    section_mismatches(&b, cases);
    section_ulp(&b, cases);
    section_timing(&b, cases, o);
    section_cases(&b, cases, o);
    rb_puts(&b, "<footer class=\"meta\"><p>Rendered by <code>a4w4check report</code> from the "
                "results document alone; self-contained (no network).</p></footer>\n");
    html_end(&b);
    return rb_take(&b);
}
