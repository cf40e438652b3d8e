/* casefile.c — case matrix reader (see casefile.h). */
#include "casefile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int a4w4_regime_parse(const char *text, a4w4_regime *regime, a4w4_scale_mode *mode)
{
    *mode = A4W4_ROUND_UP;
    if (!strcmp(text, "exact"))
        *regime = A4W4_REGIME_EXACT;
    else if (!strcmp(text, "wide"))
        *regime = A4W4_REGIME_WIDE;
    else if (!strcmp(text, "special"))
        *regime = A4W4_REGIME_SPECIAL;
    else if (!strcmp(text, "code0"))
        *regime = A4W4_REGIME_CODE0;
    else if (!strcmp(text, "normal"))
        *regime = A4W4_REGIME_NORMAL;
    else if (!strncmp(text, "normal:", 7)) {
        int m = a4w4_scale_mode_parse(text + 7);
        if (m < 0)
            return -1;
        *regime = A4W4_REGIME_NORMAL;
        *mode = (a4w4_scale_mode)m;
    } else
        return -1;
    return 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = 0;
    return s;
}

static int parse_u64(const char *s, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

int a4w4_casefile_read(const char *path, a4w4_case **cases, size_t *n, char *err, size_t errlen)
{
    static const char *const cols[] = {"name", "M", "N", "K", "regime", "seed", "tags"};
    FILE *f = fopen(path, "r");
    *cases = NULL;
    *n = 0;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open case file (%s)", path, strerror(errno));
        return 2;
    }
    char line[1024];
    size_t lineno = 0, cap = 0;
    int header = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%zu: line longer than %zu characters", path, lineno, sizeof line - 2);
            rc = 2;
            break;
        }
        char *s = line;
        if (lineno == 1 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
            (unsigned char)s[2] == 0xBF)
            s += 3; /* a UTF-8 byte order mark */
        s = trim(s);
        if (!*s || *s == '#')
            continue;
        char *field[8];
        int nf = 0;
        for (char *p = s;; ) {
            char *comma = strchr(p, ',');
            if (nf < 8)
                field[nf] = trim(p);
            nf++;
            if (!comma)
                break;
            *comma = 0;
            p = comma + 1;
        }
        if (!header) {
            if (nf != 7) {
                snprintf(err, errlen, "%s:%zu: header must be name,M,N,K,regime,seed,tags", path, lineno);
                rc = 2;
                break;
            }
            for (int i = 0; i < 7; i++)
                if (strcmp(field[i], cols[i])) {
                    snprintf(err, errlen, "%s:%zu: column %d must be '%s', found '%s'", path, lineno, i + 1, cols[i], field[i]);
                    rc = 2;
                }
            if (rc)
                break;
            header = 1;
            continue;
        }
        if (nf != 7) {
            snprintf(err, errlen, "%s:%zu: %d columns, the header has 7", path, lineno, nf);
            rc = 2;
            break;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            a4w4_case *p = realloc(*cases, cap * sizeof *p);
            if (!p) {
                snprintf(err, errlen, "%s: out of memory", path);
                rc = 2;
                break;
            }
            *cases = p;
        }
        a4w4_case *c = &(*cases)[*n];
        memset(c, 0, sizeof *c);
        if (!*field[0] || strlen(field[0]) >= sizeof c->name) {
            snprintf(err, errlen, "%s:%zu: column 1 (name) must be 1..%zu characters", path, lineno, sizeof c->name - 1);
            rc = 2;
            break;
        }
        for (const char *q = field[0]; *q; q++)
            if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
                  *q == '_' || *q == '-' || *q == '.') || field[0][0] == '.') {
                snprintf(err, errlen, "%s:%zu: column 1 (name) '%s' may hold only letters, digits, "
                         "'_', '-' and '.' (not first): names become file names", path, lineno, field[0]);
                rc = 2;
                break;
            }
        if (rc)
            break;
        snprintf(c->name, sizeof c->name, "%s", field[0]);
        uint64_t v[3];
        for (int i = 0; i < 3; i++)
            if (parse_u64(field[1 + i], &v[i]) || v[i] == 0 || v[i] > (1ull << 32)) {
                snprintf(err, errlen, "%s:%zu: column %d (%s) must be an integer in 1..2^32, found '%s'",
                         path, lineno, 2 + i, cols[1 + i], field[1 + i]);
                rc = 2;
                break;
            }
        if (rc)
            break;
        c->M = (size_t)v[0];
        c->N = (size_t)v[1];
        c->K = (size_t)v[2];
        /* a case must be generable here: each dimension <= 2^22 and the operands
         * (M + N) * K / 2 bytes <= 2^36 (they are allocated, if mostly untouched) */
        if (c->M > A4W4_CASE_DIM_MAX || c->N > A4W4_CASE_DIM_MAX || c->K > A4W4_CASE_DIM_MAX ||
            (double)(c->M + c->N) * (double)c->K / 2 > A4W4_CASE_BYTES_MAX) {
            snprintf(err, errlen, "%s:%zu: case %s: M=%zu N=%zu K=%zu breaks the shape rule "
                     "(each of M, N, K <= 4194304 and (M+N)*K/2 <= 64 GiB of operands)",
                     path, lineno, c->name, c->M, c->N, c->K);
            rc = 2;
            break;
        }
        if (c->K % 32) {
            snprintf(err, errlen, "%s:%zu: K=%zu breaks the rule K %% 32 == 0 (one E8M0 scale per 32 elements)",
                     path, lineno, c->K);
            rc = 2;
            break;
        }
        if (a4w4_regime_parse(field[4], &c->regime, &c->mode)) {
            snprintf(err, errlen, "%s:%zu: column 5 (regime) '%s' is not exact, normal[:mode], wide, special or code0",
                     path, lineno, field[4]);
            rc = 2;
            break;
        }
        snprintf(c->regime_text, sizeof c->regime_text, "%s", field[4]);
        if (parse_u64(field[5], &c->seed)) {
            snprintf(err, errlen, "%s:%zu: column 6 (seed) must be a decimal integer, found '%s'", path, lineno, field[5]);
            rc = 2;
            break;
        }
        snprintf(c->tags, sizeof c->tags, "%s", field[6]);
        for (size_t j = 0; j < *n; j++)
            if (!strcmp((*cases)[j].name, c->name)) {
                snprintf(err, errlen, "%s:%zu: case name '%s' already used", path, lineno, c->name);
                rc = 2;
            }
        if (rc)
            break;
        (*n)++;
    }
    if (!rc && !header) {
        snprintf(err, errlen, "%s: no header line (name,M,N,K,regime,seed,tags)", path);
        rc = 2;
    } else if (!rc && *n == 0) {
        snprintf(err, errlen, "%s: no cases after the header", path);
        rc = 2;
    }
    fclose(f);
    if (rc) {
        free(*cases);
        *cases = NULL;
        *n = 0;
    }
    return rc;
}
