/* a4w4_csv.h — CSV documents whose every field knows its line and column, for the tables of
 * contracts §5 (AITER's tuned table, the ASM kernel table) and shape lists.
 *
 * Read with libcsv in strict mode (a quote inside a quoted field must be doubled; a closing
 * quote is followed by a delimiter or a line end). Blank lines are skipped; spaces and tabs
 * around fields are dropped; positions are 1-based, the column counts bytes. Every failing
 * function writes one line "path:line:col: rule" (or "path: rule") into the caller's err
 * buffer (may be NULL) and returns an a4w4_status (a4w4_formats.h); nothing here prints. */
#ifndef A4W4_CSV_H
#define A4W4_CSV_H

#include <stddef.h>

#include "a4w4_formats.h"

typedef struct {
    char *text;     /* NUL-terminated, owned by the record */
    int line, col;  /* first non-blank byte of the field (1-based) */
} a4w4_csv_field;

typedef struct {
    a4w4_csv_field *f;
    size_t n, cap;
    int line;              /* line of the record's first field */
    int end_line, end_col; /* where the record ended (terminator, or end of file) */
} a4w4_csv_record;

typedef struct {
    a4w4_csv_record *r; /* r[0] is the header when the document has one */
    size_t n, cap;
} a4w4_csv_doc;

/* Parse the whole file at path into doc (overwritten). Errors: A4W4_EINVAL ("cannot open",
 * "read error", "path:line:col: malformed quoting", "path:line:col: unterminated quote"
 * naming the opening quote), A4W4_ENOMEM. On error doc is empty. */
int a4w4_csv_read(const char *path, a4w4_csv_doc *doc, char *err, size_t errlen);

/* Release one record's fields and zero it (the doc's slot stays). */
void a4w4_csv_record_free(a4w4_csv_record *r);

/* Release every record and zero doc (NULL is fine). */
void a4w4_csv_doc_free(a4w4_csv_doc *doc);

/* Column index of `name` in header h (exact match), or -1. */
int a4w4_csv_header_col(const a4w4_csv_record *h, const char *name);

/* The column index of each of the n names into col[] (header d->r[0]); on the first missing
 * one frees d and fails with "<path>:<line>:1: header lacks column 'X' (<needs>)",
 * A4W4_EINVAL. d must hold at least the header. */
int a4w4_csv_required_cols(const char *path, a4w4_csv_doc *d, const char *const *names, int n,
                           const char *needs, int *col, char *err, size_t errlen);

/* At least one record after the header (else "<path>: <header_only>") and every record as
 * wide as the header ("<path>:<line>:<col>: F fields where the header has W (...)"); frees
 * d on failure, A4W4_EINVAL. d must hold at least the header. */
int a4w4_csv_rows_present(const char *path, a4w4_csv_doc *d, const char *header_only,
                          char *err, size_t errlen);

/* Field col of record r as a base-10 integer in [lo, hi] into *out. Errors (A4W4_EINVAL):
 * "<path>:<line>:<col>: <name> is V, outside lo..hi" for an integer out of range,
 * "<path>:<line>:<col>: <name> is 'V', not an integer" otherwise. */
int a4w4_csv_field_int(const char *path, const a4w4_csv_record *r, int col, const char *name,
                       long lo, long hi, int *out, char *err, size_t errlen);

#endif
