/* compare_parity.c — the kept outputs' parity of two runs, rendered (compare_parity.h): one
 * function writes the section in both formats through report_common.h's rb_markup. */
#include "compare_parity.h"

#include <stdio.h>

/* One compared entry's row: case, BASE → CAND backends, M, N, parity, peers. */
static void parity_row(rbuf *b, const rb_markup *m, const cJSON *r)
{
    rb_puts(b, m->row);
    m->esc(b, jstr(r, "name"));
    rb_puts(b, m->name_end);
    m->esc(b, jstr(r, "base_backend"));
    rb_puts(b, m->arrow);
    m->esc(b, jstr(r, "cand_backend"));
    rb_printf(b, "%s%.0f%s%.0f%s", m->num, jnum(r, "M", 0), m->num, jnum(r, "N", 0), m->cell);
    rb_printf(b, "bit-equal %.0f of %.0f, %.0f differ, max %.0f ULP", jnum(r, "bit_equal", 0),
              jnum(r, "outputs", 0), jnum(r, "differ", 0), jnum(r, "max_ulp", 0));
    if (jnum(r, "nan_vs_number", 0) > 0)
        rb_printf(b, " (and %.0f NaN against a number)", jnum(r, "nan_vs_number", 0));
    rb_puts(b, m->cell);
    m->esc(b, jstr(r, "peers")); /* "aiter PASS, torch FAIL, ...", as recorded */
    rb_puts(b, m->row_end);
}

/* The entries not compared, each with why. */
static void not_compared(rbuf *b, const rb_markup *m, const cJSON *skipped)
{
    const cJSON *r;
    int any = cJSON_GetArraySize(skipped) > 0;
    if (any)
        rb_puts(b, m->html ? "<p>Not compared:</p>\n<ul>\n" : "\nNot compared:\n\n");
    cJSON_ArrayForEach(r, skipped) {
        rb_printf(b, "%s%s", m->item, m->code);
        m->esc(b, jstr(r, "name"));
        rb_printf(b, "%s on %s", m->code_end, m->code);
        m->esc(b, jstr(r, "backend"));
        rb_printf(b, "%s: ", m->code_end);
        m->esc(b, jstr(r, "why"));
        rb_puts(b, m->item_end);
    }
    rb_puts(b, m->html ? (any ? "</ul>\n" : "") : "\n");
}

static void parity_section(rbuf *b, const cJSON *cmp, const rb_markup *m)
{
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(cmp, "output_parity"), *r;
    if (!op)
        return;
    rb_heading(b, m, "output-parity", "Parity of the kept outputs");
    rb_puts(b, m->para);
    if (*jstr(op, "why")) {
        m->esc(b, jstr(op, "why"));
        rb_printf(b, ".%s", m->para_end);
        return;
    }
    rb_printf(b, "%.0f entries compared output by output (CAND against BASE), %.0f with outputs "
              "that differ, %.0f not compared.%s", jnum(op, "compared", 0), jnum(op, "differ", 0),
              jnum(op, "not_compared", 0), m->para_end);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(op, "rows");
    char backends[64];
    snprintf(backends, sizeof backends, "backend (BASE%sCAND)", m->arrow);
    const char *const cols[] = {"case", backends, "M", "N", "parity", "peers on the difference"};
    if (m->html || cJSON_GetArraySize(rows)) /* Markdown writes no empty table */
        rb_table_head(b, m, cols, 6, 1u << 2 | 1u << 3);
    cJSON_ArrayForEach(r, rows)
        parity_row(b, m, r);
    if (m->html)
        rb_puts(b, m->table_end);
    not_compared(b, m, cJSON_GetObjectItemCaseSensitive(op, "skipped"));
}

void compare_parity_md(rbuf *b, const cJSON *cmp)
{
    parity_section(b, cmp, &rb_markdown);
}

void compare_parity_html(rbuf *b, const cJSON *cmp)
{
    parity_section(b, cmp, &rb_htmlmarkup);
}
