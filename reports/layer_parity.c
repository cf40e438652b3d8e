/* layer_parity.c — report.html's table of the two paths' parity (layer_parity.h). */
#include "layer_parity.h"

void layer_parity_html(rbuf *b, const cJSON *cases)
{
    const cJSON *e, *c;
    int k = 0;
    cJSON_ArrayForEach(e, cases) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "parity");
        if (!cJSON_IsObject(p))
            continue;
        if (!k++)
            rb_puts(b, "<h2 id=\"parity\">Parity of the two paths</h2>\n<p>The ASM-layout "
                       "output against the same pair's fallback path on the same activation, "
                       "and the peers' tolerance criteria on the difference "
                       "(docs/criteria.md).</p>\n<table class=\"sortable\"><thead><tr>"
                       "<th>case</th><th>backend</th><th class=\"n\">bit-equal</th>"
                       "<th class=\"n\">differ</th><th class=\"n\">max ULP</th>"
                       "<th>peers on the difference</th></tr></thead><tbody>\n");
        rb_puts(b, "<tr><td><code>");
        rb_html(b, jstr(e, "name"));
        rb_puts(b, "</code></td><td>");
        rb_html(b, jstr(e, "backend"));
        rb_printf(b, "</td><td class=\"n\">%.0f of %.0f</td><td class=\"n\">%.0f</td>"
                  "<td class=\"n\">%.0f</td><td>", jnum(p, "bit_equal", 0), jnum(p, "outputs", 0),
                  jnum(p, "differ", 0), jnum(p, "max_ulp", 0));
        int j = 0;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p, "tolerance_on_difference")) {
            rb_puts(b, j++ ? ", " : "");
            rb_html(b, jstr(c, "id"));
            rb_puts(b, " ");
            rb_html(b, jstr(c, "outcome"));
        }
        rb_puts(b, "</td></tr>\n");
    }
    if (k)
        rb_puts(b, "</tbody></table>\n");
}
