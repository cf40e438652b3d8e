/* layer_parity.h — the section "Parity of the two paths" of summary.md and report.html, in
 * the format of m (rb_markdown or rb_htmlmarkup, report_common.h): a `layers` run's entries that carry a "parity" object (the ASM-layout
 * output against the same pair's fallback path on the same activation: bit-equal and
 * differing outputs, the largest bf16 ULP distance, the peers' criteria on the difference,
 * contracts §6). Rendered as recorded; nothing when no entry has one. */
#ifndef A4W4_LAYER_PARITY_H
#define A4W4_LAYER_PARITY_H

#include <cjson/cJSON.h>

#include "report_common.h"

void layer_parity(rbuf *b, const cJSON *cases, const rb_markup *m);

#endif
