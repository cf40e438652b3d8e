/* layer_parity.c — the table of the two paths' parity in summary.md and report.html
 * (layer_parity.h): one function, both formats through report_common.h's rb_markup. */
#include "layer_parity.h"

/* One entry's row: case, backend, bit-equal, differ, max ULP, the peers' outcomes. */
static void parity_row(rbuf *b, const rb_markup *m, const cJSON *e, const cJSON *p)
{
    rb_puts(b, m->row);
    m->esc(b, jstr(e, "name"));
    rb_puts(b, m->name_end);
    m->esc(b, jstr(e, "backend"));
    rb_printf(b, "%s%.0f of %.0f%s%.0f%s%.0f%s", m->num, jnum(p, "bit_equal", 0),
              jnum(p, "outputs", 0), m->num, jnum(p, "differ", 0), m->num, jnum(p, "max_ulp", 0),
              m->cell);
    const cJSON *c;
    int j = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p, "tolerance_on_difference")) {
        rb_puts(b, j++ ? ", " : "");
        m->esc(b, jstr(c, "id"));
        rb_puts(b, " ");
        m->esc(b, jstr(c, "outcome"));
    }
    rb_puts(b, m->row_end);
}

void layer_parity(rbuf *b, const cJSON *cases, const rb_markup *m)
{
    static const char *const cols[] = {"case",   "backend", "bit-equal",
                                       "differ", "max ULP", "peers on the difference"};
    const cJSON *e;
    int k = 0;
    cJSON_ArrayForEach(e, cases) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "parity");
        if (!cJSON_IsObject(p))
            continue;
        if (!k++) {
            rb_heading(b, m, "parity", "Parity of the two paths");
            rb_printf(b, "%sThe ASM-layout output against the same pair's fallback path on the "
                      "same activation, and the peers' tolerance criteria on the difference "
                      "(docs/criteria.md).%s", m->para, m->para_end);
            rb_table_head(b, m, cols, 6, 1u << 2 | 1u << 3 | 1u << 4);
        }
        parity_row(b, m, e, p);
    }
    if (k)
        rb_puts(b, m->table_end);
}
