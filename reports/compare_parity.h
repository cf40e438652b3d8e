/* compare_parity.h — the "output_parity" section of a compare document (harness/cli
 * compare_kept.h: two runs that kept their outputs) in Markdown and HTML: per entry the
 * outputs bit-equal, those that differ, the largest bf16 ULP distance and the peers'
 * criteria on the difference (contracts §4), then every entry not compared and why. Renders
 * what the document says; recomputes nothing. Nothing when the document has no such section. */
#ifndef A4W4_COMPARE_PARITY_H
#define A4W4_COMPARE_PARITY_H

#include <cjson/cJSON.h>

#include "report_common.h"

void compare_parity_md(rbuf *b, const cJSON *cmp);
void compare_parity_html(rbuf *b, const cJSON *cmp);

#endif
