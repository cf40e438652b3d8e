/* contractfile.c — see contractfile.h. */
#include "contractfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_quote.h"
#include "fsutil.h"

a4w4_hstatus a4w4_contract_file_read(const char *path, a4w4_contract_set *set, char *err,
                                     size_t errlen)
{
    char shown[256];
    memset(set, 0, sizeof *set);
    a4w4_quote_ascii(path, shown, sizeof shown); /* a hidden byte shown: "exact\xe2\x80\x8b" */
    size_t n = 0;
    int missing;
    char why[4400];
    char *text = a4w4_read_regular(path, A4W4_CONTRACT_FILE_MAX, &n, &missing, why, sizeof why);
    if (!text) {
        size_t pl = strlen(path); /* why opens with the raw path: show ours, quoted */
        const char *rule = strncmp(why, path, pl) ? ": cannot read" : why + pl;
        snprintf(err, errlen, "contract file %s%s", shown, rule);
        return strstr(why, "out of memory") ? A4W4_ST_NOMEM : A4W4_ST_BADINPUT;
    }
    a4w4_hstatus st = A4W4_ST_BADINPUT;
    if (memchr(text, '\0', n))
        snprintf(err, errlen, "contract file %s: holds a NUL byte (a contract file is text)",
                 shown);
    else {
        int rc = a4w4_contract_set_parse(text, set, why, sizeof why);
        if (rc == A4W4_OK)
            st = A4W4_ST_OK;
        else if (rc == A4W4_ENOMEM) {
            snprintf(err, errlen, "contract file %s: out of memory", shown);
            st = A4W4_ST_NOMEM;
        } else
            snprintf(err, errlen, "contract file %s: %s", shown, why);
    }
    free(text);
    return st;
}

/* The departure phrases of c as a bit set (bit i: phrase i of departure_text). */
static unsigned departure_bits(const a4w4_contract *c)
{
    if (c->kind == A4W4_CONTRACT_BOUNDED)
        return 1u << 4;
    if (c->kind == A4W4_CONTRACT_ATOMIC) /* contracts §4.1 atomic(S) */
        return 1u << 6;
    if (c->kind != A4W4_CONTRACT_TREE)
        return 0;
    const a4w4_tree *t = &c->tree;
    return (t->final == A4W4_ROUND_RZ ? 1u : 0) | (t->round == A4W4_ROUND_RZ ? 2u : 0) |
           (t->acc == A4W4_ACC_BF16 ? 4u : 0) | (t->prec > 0 ? 8u : 0) |
           (t->lround == A4W4_ROUND_RZ ? 32u : 0);
}

/* The phrases of the bits set in bits (prec: P for phrase 3) into buf. */
static int departure_text(unsigned bits, unsigned prec, char *buf, size_t len)
{
    static const char *const phrase[7] = {
        "truncates the final bf16 rounding", "rounds every add toward zero",
        "accumulates in bf16", "adds at %u bits of internal precision, truncated",
        "adds bf16 partials in any order, judged within a bound, never bit for bit",
        "truncates each leaf's rounding to fp32",
        "adds bf16 split values in any order, judged against every order"};
    size_t k = 0;
    int n = 0;
    if (len)
        buf[0] = 0;
    for (int i = 0; i < 7; i++) {
        if (!(bits & (1u << i)) || k >= len)
            continue;
        k += (size_t)snprintf(buf + k, len - k, "%s", n++ ? "; " : "");
        if (k < len)
            k += (size_t)snprintf(buf + k, len - k, phrase[i], prec);
    }
    return n;
}

int a4w4_contract_departures(const a4w4_contract *c, char *buf, size_t len)
{
    return departure_text(departure_bits(c), c->tree.prec, buf, len);
}

int a4w4_contract_set_departures(const a4w4_contract_set *set, char *buf, size_t len)
{
    unsigned bits = 0, prec = 0;
    for (size_t i = 0; i < set->n; i++) {
        const a4w4_contract *c = &set->rules[i].contract;
        bits |= departure_bits(c);
        if (departure_bits(c) & 8u && c->tree.prec > prec)
            prec = c->tree.prec;
    }
    return departure_text(bits, prec, buf, len);
}
