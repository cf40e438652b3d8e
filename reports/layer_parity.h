/* layer_parity.h — report.html's section "Parity of the two paths" (the Markdown summary has
 * the same table): a `layers` run's entries that carry a "parity" object (the ASM-layout
 * output against the same pair's fallback path on the same activation: bit-equal and
 * differing outputs, the largest bf16 ULP distance, the peers' criteria on the difference,
 * contracts §6). Rendered as recorded; nothing when no entry has one. */
#ifndef A4W4_LAYER_PARITY_H
#define A4W4_LAYER_PARITY_H

#include <cjson/cJSON.h>

#include "report_common.h"

void layer_parity_html(rbuf *b, const cJSON *cases);

#endif
