/* compare_parity.c — the kept outputs' parity of two runs, rendered (compare_parity.h). */
#include "compare_parity.h"

#include <stdio.h>

static void cells(rbuf *b, const cJSON *r, void (*esc)(rbuf *, const char *), const char *sep)
{
    rb_printf(b, "bit-equal %.0f of %.0f, %.0f differ, max %.0f ULP", jnum(r, "bit_equal", 0),
              jnum(r, "outputs", 0), jnum(r, "differ", 0), jnum(r, "max_ulp", 0));
    if (jnum(r, "nan_vs_number", 0) > 0)
        rb_printf(b, " (and %.0f NaN against a number)", jnum(r, "nan_vs_number", 0));
    rb_puts(b, sep);
    esc(b, jstr(r, "peers")); /* "aiter PASS, torch FAIL, ...", as recorded */
}

void compare_parity_md(rbuf *b, const cJSON *cmp)
{
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(cmp, "output_parity"), *r;
    if (!op)
        return;
    rb_puts(b, "## Parity of the kept outputs\n\n");
    if (*jstr(op, "why")) {
        rb_md(b, jstr(op, "why"));
        rb_puts(b, ".\n\n");
        return;
    }
    rb_printf(b, "%.0f entries compared output by output (CAND against BASE), %.0f with "
              "outputs that differ, %.0f not compared.\n\n", jnum(op, "compared", 0),
              jnum(op, "differ", 0), jnum(op, "not_compared", 0));
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(op, "rows")))
        rb_puts(b, "| case | backend (BASE → CAND) | M | N | parity | peers on the difference |\n"
                   "|---|---|---:|---:|---|---|\n");
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(op, "rows")) {
        rb_puts(b, "| ");
        rb_md(b, jstr(r, "name"));
        rb_puts(b, " | ");
        rb_md(b, jstr(r, "base_backend"));
        rb_puts(b, " → ");
        rb_md(b, jstr(r, "cand_backend"));
        rb_printf(b, " | %.0f | %.0f | ", jnum(r, "M", 0), jnum(r, "N", 0));
        cells(b, r, rb_md, " | ");
        rb_puts(b, " |\n");
    }
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(op, "skipped");
    if (cJSON_GetArraySize(s))
        rb_puts(b, "\nNot compared:\n\n");
    cJSON_ArrayForEach(r, s) {
        rb_puts(b, "- `");
        rb_md(b, jstr(r, "name"));
        rb_puts(b, "` on `");
        rb_md(b, jstr(r, "backend"));
        rb_puts(b, "`: ");
        rb_md(b, jstr(r, "why"));
        rb_puts(b, "\n");
    }
    rb_puts(b, "\n");
}

void compare_parity_html(rbuf *b, const cJSON *cmp)
{
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(cmp, "output_parity"), *r;
    if (!op)
        return;
    rb_puts(b, "<h2 id=\"output-parity\">Parity of the kept outputs</h2>\n<p>");
    if (*jstr(op, "why")) {
        rb_html(b, jstr(op, "why"));
        rb_puts(b, ".</p>\n");
        return;
    }
    rb_printf(b, "%.0f entries compared output by output (CAND against BASE), %.0f with outputs "
              "that differ, %.0f not compared.</p>\n<table class=\"sortable\"><thead><tr>"
              "<th>case</th><th>backend (BASE &#8594; CAND)</th><th class=\"n\">M</th>"
              "<th class=\"n\">N</th><th>parity</th><th>peers on the difference</th></tr>"
              "</thead><tbody>\n", jnum(op, "compared", 0), jnum(op, "differ", 0),
              jnum(op, "not_compared", 0));
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(op, "rows")) {
        rb_puts(b, "<tr><td><code>");
        rb_html(b, jstr(r, "name"));
        rb_puts(b, "</code></td><td>");
        rb_html(b, jstr(r, "base_backend"));
        rb_puts(b, " &#8594; ");
        rb_html(b, jstr(r, "cand_backend"));
        rb_printf(b, "</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td>",
                  jnum(r, "M", 0), jnum(r, "N", 0));
        cells(b, r, rb_html, "</td><td>");
        rb_puts(b, "</td></tr>\n");
    }
    rb_puts(b, "</tbody></table>\n");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(op, "skipped");
    if (cJSON_GetArraySize(s))
        rb_puts(b, "<p>Not compared:</p>\n<ul>\n");
    cJSON_ArrayForEach(r, s) {
        rb_puts(b, "<li><code>");
        rb_html(b, jstr(r, "name"));
        rb_puts(b, "</code> on <code>");
        rb_html(b, jstr(r, "backend"));
        rb_puts(b, "</code>: ");
        rb_html(b, jstr(r, "why"));
        rb_puts(b, "</li>\n");
    }
    if (cJSON_GetArraySize(s))
        rb_puts(b, "</ul>\n");
}
