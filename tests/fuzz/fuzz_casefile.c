/* fuzz_casefile.c — libFuzzer target for the case-file reader (a4w4_casefile_read,
 * harness/io/casefile.h). The reader takes a path: each input is written to a file in the
 * process's scratch directory first.
 *
 * The custom mutator (csv_mutator.h) keeps the header `name,M,N,K,regime,seed,tags` and
 * mutates rows with values at the edges of the rules (2^22, 2^32, K % 32, regime names).
 * Checked: an accepted file has one case per non-comment row after the header, every case
 * within the documented rules (name characters, 1 <= M, N, K <= 2^22, K % 32 == 0, operand
 * bytes, regime text that parses back to the same regime and mode, unique names); a refused
 * one returns A4W4_ST_BADINPUT (or A4W4_ST_NOMEM), no cases and one error line naming the
 * file. */
#include <stdlib.h>
#include <string.h>

#include "casefile.h"
#include "csv_mutator.h"
#include "fuzz_common.h"

#define TARGET "casefile"

static const char *const header[] = {"name", "M", "N", "K", "regime", "seed", "tags", NULL};
static const char *const dims[] = {"1", "32", "64", "256", "4194304", "4194272", "4194305",
                                   "4294967296", "4294967297", "0", "-32", NULL};
static const char *const regimes[] = {"exact", "normal", "normal:even", "normal:ceil",
                                      "normal:round_down", "normal:round_up", "normal:",
                                      "normal:bogus", "wide", "special", "code0", "Exact",
                                      NULL};
static const char *const seeds[] = {"0", "1", "18446744073709551615", "18446744073709551616",
                                    "-1", "+1", "1 2", NULL};
static const char *const names[] = {"c1", "c2", "a.b", ".hidden", "a/b", "x y", "g-1_2", NULL};
static const char *const tags[] = {"", "real", "edge;k32-8", "a;;b", NULL};
static const fz_csv_column columns[] = {{"name", names}, {"M", dims}, {"N", dims},
                                        {"K", dims},     {"regime", regimes},
                                        {"seed", seeds}, {"tags", tags}};
static const fz_csv_dict dict = {header, columns, sizeof columns / sizeof columns[0]};

/* Rows the reader should turn into cases: lines after the header that are neither blank nor
 * comments once trimmed (the reader's view: text up to a NUL byte, a BOM on line 1). */
static size_t expected_rows(const uint8_t *data, size_t size)
{
    size_t rows = 0, start = 0, line = 0;
    int header = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != '\n')
            continue;
        const char *s = (const char *)data + start;
        size_t n = i - start;
        const char *nul = memchr(s, '\0', n);
        n = nul ? (size_t)(nul - s) : n;
        if (line++ == 0 && n >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) {
            s += 3;
            n -= 3;
        }
        while (n && (*s == ' ' || *s == '\t')) {
            s++;
            n--;
        }
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
            n--;
        if (n && s[0] != '#')
            header ? rows++ : (header = 1);
        start = i + 1;
    }
    return rows;
}

static int name_ok(const char *s)
{
    if (!*s || *s == '.')
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return 0;
    return 1;
}

static void check_case(const a4w4_case *c, const a4w4_case *all, size_t i)
{
    fz_check(memchr(c->name, 0, sizeof c->name) && memchr(c->tags, 0, sizeof c->tags) &&
                 memchr(c->regime_text, 0, sizeof c->regime_text),
             TARGET, "case %zu: a string without its NUL", i);
    fz_check(name_ok(c->name), TARGET, "case %zu: name '%s' breaks the name rule", i, c->name);
    fz_check(c->M >= 1 && c->N >= 1 && c->K >= 1 && c->M <= A4W4_CASE_DIM_MAX &&
                 c->N <= A4W4_CASE_DIM_MAX && c->K <= A4W4_CASE_DIM_MAX && c->K % 32 == 0,
             TARGET, "case %s: shape %zu x %zu x %zu breaks the shape rule", c->name, c->M, c->N,
             c->K);
    fz_check((double)(c->M + c->N) * (double)c->K / 2 <= A4W4_CASE_BYTES_MAX, TARGET,
             "case %s: operands past 2^36 bytes", c->name);
    a4w4_regime rg;
    a4w4_scale_mode md;
    fz_check(!a4w4_regime_parse(c->regime_text, &rg, &md) && rg == c->regime &&
                 (rg != A4W4_REGIME_NORMAL || md == c->mode),
             TARGET, "case %s: regime text '%s' does not parse back", c->name, c->regime_text);
    for (size_t j = 0; j < i; j++)
        fz_check(strcmp(all[j].name, c->name) != 0, TARGET, "name '%s' twice", c->name);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_tmp_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1024], err[1024] = "";
    fz_write_input("cases.csv", data, size, path, sizeof path);
    a4w4_case *cases = (a4w4_case *)1;
    size_t n = 1;
    a4w4_hstatus rc = a4w4_casefile_read(path, &cases, &n, err, sizeof err);
    if (rc) {
        fz_check((rc == A4W4_ST_BADINPUT || rc == A4W4_ST_NOMEM) && !cases && n == 0, TARGET,
                 "refusal returned %d with cases", (int)rc);
        fz_check_err_line(err, path, TARGET);
        return 0;
    }
    size_t want = expected_rows(data, size);
    fz_check(n >= 1 && n == want, TARGET, "%zu cases read, %zu rows in the file", n, want);
    for (size_t i = 0; i < n; i++)
        check_case(&cases[i], cases, i);
    free(cases);
    fz_accepted();
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return fz_csv_mutate(data, size, max_size, seed, &dict);
}
