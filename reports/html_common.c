/* html_common.c — see html_common.h. */
#include "html_common.h"

static const char style[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "margin:0 auto;max-width:1320px;padding:16px 24px;color:#1a1a1a;background:#fff;"
    "line-height:1.4}\n"
    "h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;margin-top:1.6em;"
    "border-bottom:1px solid #ddd;padding-bottom:.2em}h3{font-size:1.05em}\n"
    "code,.mono{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:.92em}\n"
    "table{border-collapse:collapse;margin:.5em 0;font-size:.9em}\n"
    "th,td{border:1px solid #d0d0d0;padding:3px 7px;text-align:left;vertical-align:top}\n"
    "th{background:#f3f3f3}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "table.sortable th{cursor:pointer}table.sortable th:hover{background:#e6e6e6}\n"
    "th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' "
    "\\25BC'}\n"
    ".banner{font-size:1.25em;font-weight:700;padding:10px 14px;border-radius:6px;"
    "border-left:10px solid;margin:.6em 0}\n"
    ".banner.pass{background:#e3f4ee;border-color:" OI_GREEN "}"
    ".banner.fail{background:#fbe7dc;border-color:" OI_VERMILLION "}"
    ".banner.incomplete{background:#fbf8d0;border-color:#b8ad00}"
    ".banner.unknown{background:#eee;border-color:#999}\n"
    ".v{display:inline-block;min-width:4.2em;padding:0 6px;border-radius:3px;font-weight:600;"
    "font-size:.9em;border:1px solid #888}\n"
    ".v-pass{background:#e3f4ee;border-color:" OI_GREEN "}"
    ".v-fail{background:#fbe7dc;border-color:" OI_VERMILLION "}"
    ".v-na{background:#eee;border-color:#999}.v-skip{background:#fbf8d0;border-color:#b8ad00}\n"
    "details{margin:.35em 0}summary{cursor:pointer}\n"
    ".meta{color:#444;font-size:.92em}.note{color:#444}\n"
    "nav a{margin-right:1em;color:" OI_BLUE "}\n"
    "figure{margin:.8em 0 1.4em 0}figcaption{font-weight:600;margin-bottom:.3em}\n"
    ".bar{display:inline-block;height:.8em;background:" OI_BLUE ";vertical-align:middle}\n"
    ".legend svg{vertical-align:middle}\n";

void html_begin(rbuf *b, const char *title)
{
    rb_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
               "<title>");
    rb_html(b, title);
    rb_puts(b, "</title>\n<style>\n");
    rb_puts(b, style);
    rb_puts(b, "</style>\n</head>\n<body>\n");
}

/* Click a header of a table.sortable to sort its body (numbers by value, via data-v when
 * present). The page reads fine without it. */
static const char sort_script[] =
    "<script>\n"
    "document.querySelectorAll('table.sortable th').forEach(function(th){"
    "th.addEventListener('click',function(){"
    "var "
    "t=th.closest('table'),b=t.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th)"
    ","
    "asc=th.getAttribute('aria-sort')!=='ascending';"
    "var key=function(r){var c=r.cells[i];return c?(c.getAttribute('data-v')||c.textContent):'';};"
    "var rows=Array.prototype.slice.call(b.rows);"
    "rows.sort(function(x,y){var a=key(x),c=key(y),na=parseFloat(a),nc=parseFloat(c);"
    "var r=(!isNaN(na)&&!isNaN(nc))?na-nc:a.localeCompare(c);return asc?r:-r;});"
    "rows.forEach(function(r){b.appendChild(r);});"
    "th.parentNode.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort');});"
    "th.setAttribute('aria-sort',asc?'ascending':'descending');});});\n"
    "</script>\n";

void html_end(rbuf *b)
{
    rb_puts(b, sort_script);
    rb_puts(b, "</body>\n</html>\n");
}

void html_verdict_chip(rbuf *b, int idx)
{
    static const char *const chip[6] = {"<span class=\"v v-pass\">&#10004; PASS</span>",
                                        "<span class=\"v v-fail\">&#10008; FAIL</span>",
                                        "<span class=\"v v-na\">&#8211; n/a</span>",
                                        "<span class=\"v v-skip\">&#9675; skip</span>",
                                        "<span class=\"v v-na\">&#8856; XFAIL</span>",
                                        "<span class=\"v v-skip\">&#8776; ambiguous</span>"};
    rb_puts(b, chip[idx >= 0 && idx < 6 ? idx : 3]);
}
