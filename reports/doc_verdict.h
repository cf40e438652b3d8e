/* doc_verdict.h — the verdict and completeness a results document records (results.json's
 * top-level "verdict", "verdict_reason" and "counts", written by the harness: contracts
 * §4.1), read for the renderers. A renderer shows them as recorded and never recomputes
 * them: a document written before they existed says "verdict not recorded". */
#ifndef A4W4_DOC_VERDICT_H
#define A4W4_DOC_VERDICT_H

#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct {
    const char *verdict; /* "PASS", "FAIL", "INCOMPLETE" (borrowed), or NULL: not recorded */
    const char *reason;  /* the recorded one-line reason, "" when absent (borrowed) */
    int has_counts;      /* 1 when "counts" is there with its item counts */
    double expected_items, recorded_items, outputs_checked;
    const cJSON *unchecked; /* counts.backends_unchecked (array) or NULL */
} doc_verdict;

/* Read doc's recorded verdict and counts into *v (borrowed pointers into doc). */
void doc_verdict_read(const cJSON *doc, doc_verdict *v);

/* "PASS", "FAIL", "INCOMPLETE", or "verdict not recorded". */
const char *doc_verdict_word(const doc_verdict *v);

/* Index for the renderers' styles: 0 PASS, 1 FAIL, 2 INCOMPLETE, 3 not recorded. */
int doc_verdict_index(const doc_verdict *v);

/* One sentence of completeness into buf (no final period): "84 of 84 expected items
 * recorded, 4858358 outputs checked" plus ", no comparison by X, Y" when a backend compared
 * nothing; "not recorded in this document" for an older one. Returns buf. */
const char *doc_completeness_text(const doc_verdict *v, char *buf, size_t len);

#endif
