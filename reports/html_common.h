/* html_common.h — internal: the page frame, style and small pieces shared by the HTML report
 * (html.c) and the HTML comparison (compare.c). */
#ifndef A4W4_HTML_COMMON_H
#define A4W4_HTML_COMMON_H

#include "report_common.h"

/* Okabe-Ito colours (readable with the common colour-vision deficiencies); every use is
 * doubled by a glyph, a pattern or text. */
#define OI_GREEN "#009E73"      /* pass */
#define OI_VERMILLION "#D55E00" /* fail */
#define OI_GREY "#BBBBBB"       /* n/a (not in Okabe-Ito: neutral) */
#define OI_YELLOW "#F0E442"     /* skip */
#define OI_BLUE "#0072B2"       /* timing bars, links */
#define OI_ORANGE "#E69F00"     /* ULP histogram bars */
#define OI_SKY "#56B4E9"
#define OI_PURPLE "#CC79A7" /* slower (compare) */

/* <!DOCTYPE html> ... <body>: title (escaped), inline style. */
void html_begin(rbuf *b, const char *title);
/* The sort script and </body></html>. */
void html_end(rbuf *b);
/* A verdict chip: <span class="v v-pass">PASS</span> with glyph and text. idx: verdict_index. */
void html_verdict_chip(rbuf *b, int idx);

#endif
