/* csv_mutator.h — a structure-aware libFuzzer mutator for the CSV readers (case files, AITER
 * tuned / kernel tables, shape lists).
 *
 * The input is split into lines and fields (',' separated, '#' lines and blank lines kept as
 * they are); the first other line is the header. Each call applies one to three of: replace a
 * field with a value known to the column (by header name) or an interesting integer text,
 * copy a field from another row, duplicate a row (exactly, or with one field changed), delete
 * or move a row, swap / delete / add a column in every row (header included), give one row
 * one field too many or too few, rename a header field, decorate a field (quotes, spaces, an
 * embedded quote), add a BOM, CRLF endings, a comment or blank line, a line longer than the
 * readers' line buffer, a fresh row built from the column values, or let libFuzzer's byte
 * mutator loose on the whole text. So most inputs keep a header the reader accepts and the
 * row checks are reached. */
#ifndef A4W4_CSV_MUTATOR_H
#define A4W4_CSV_MUTATOR_H

#include <stddef.h>
#include <stdint.h>

/* Values a column should see besides the generic integer texts; values NULL-terminated. */
typedef struct {
    const char *column;
    const char *const *values;
} fz_csv_column;

typedef struct {
    const char *const *header;     /* column names the reader knows, NULL-terminated */
    const fz_csv_column *columns;  /* per-column values */
    size_t ncolumns;
} fz_csv_dict;

/* Mutate data[0..size) in place into at most max_size bytes; returns the new size. */
size_t fz_csv_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed,
                     const fz_csv_dict *dict);

#endif
