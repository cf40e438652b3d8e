/* discover_probe.c — the probe patterns of `discover` (contracts §4.4): which E2M1 codes and
 * E8M0 scales one patterned row holds. The other operand is 1.0 in every element at scale 2^0,
 * so element k of the pattern is the product at k and the output is the pattern's sum under
 * the kernel's tree. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "discover_internal.h"
#include "grow.h"

/* ---- evidence text ------------------------------------------------------------------------ */

void dc_text_add(dc_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0)
        return;
    if (A4W4_GROW(t->s, t->len + (size_t)need + 1, t->cap, 1024))
        return; /* the evidence loses a line; the result does not depend on it */
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)need;
}

void dc_text_free(dc_text *t)
{
    free(t->s);
    memset(t, 0, sizeof *t);
}

float dc_bf16_value(uint16_t h)
{
    return a4w4_bf16_to_f32(h);
}

/* ---- probe lists --------------------------------------------------------------------------- */

void dc_plist_add(dc_plist *L, dc_kind kind, int32_t a, int32_t b, int32_t c, int32_t d,
                  int32_t e, int32_t f)
{
    if (A4W4_GROW(L->v, L->n + 1, L->cap, 256)) {
        L->oom = 1;
        return;
    }
    L->v[L->n++] = (dc_probe){kind, {a, b, c, d, e, f}};
}

int dc_install_probes(dc_shape *s, dc_plist *L)
{
    if (L->oom) {
        free(L->v);
        return -2;
    }
    free(s->probes);
    s->probes = L->v;
    s->nprobes = L->n;
    return 0;
}

/* ---- one row ------------------------------------------------------------------------------ */

/* E2M1 codes (contracts §1): 1.0 = 2, 1.5 = 3, 2.0 = 4, 3.0 = 5, 6.0 = 7, 0.5 = 1; sign 8. */
enum { C_HALF = 1, C_ONE = 2, C_ONE_HALF = 3, C_TWO = 4, C_THREE = 5, C_SIX = 7, C_NEG = 8 };

typedef struct {
    uint8_t *fp4, *scale;
    size_t K;
} row;

/* Element k of block b gets code at block scale 2^s (every element of a block shares s). */
static void put(row *r, size_t b, int s, size_t k, uint8_t code)
{
    if (b >= r->K / 32 || k >= 32)
        return;
    r->scale[b] = (uint8_t)(127 + s);
    a4w4_fp4_set(r->fp4, b * 32 + k, code);
}

/* sign * 2^e as one element (element 0, code 1.0 at scale 2^e). */
static void power(row *r, int32_t b, int e, int negative)
{
    if (b >= 0)
        put(r, (size_t)b, e, 0, (uint8_t)(C_ONE | (negative ? C_NEG : 0)));
}

/* n half-units (n * 0.5 * 2^s, n <= 384) in block b, greedily from E2M1 magnitudes. */
static void half_units(row *r, int32_t b, unsigned n, int s, int negative)
{
    static const unsigned units[7] = {12, 8, 6, 4, 3, 2, 1};
    static const uint8_t codes[7] = {C_SIX, 6, C_THREE, C_TWO, C_ONE_HALF, C_ONE, C_HALF};
    size_t k = 0;
    for (int i = 0; i < 7 && n; i++)
        while (n >= units[i] && k < 32) {
            put(r, (size_t)b, s, k++, (uint8_t)(codes[i] | (negative ? C_NEG : 0)));
            n -= units[i];
        }
}

void dc_probe_write(const dc_probe *pr, size_t K, uint8_t *fp4, uint8_t *scale)
{
    row r = {fp4, scale, K};
    memset(fp4, 0, K / 2);
    memset(scale, 127, K / 32);
    const int32_t *p = pr->p;
    switch (pr->kind) {
    case DC_ZERO:
        break;
    case DC_GAP_COUNT:
        power(&r, p[0] - 1, DC_E_COUNT, 0);
        power(&r, p[0], DC_E_COUNT, 1);
        for (int32_t k = p[2]; k < p[3]; k++)
            power(&r, k, 0, p[1] != 0);
        break;
    case DC_GAP_PAIR:
        power(&r, p[0] - 1, DC_E_PAIR, 0);
        power(&r, p[0], DC_E_PAIR, 1);
        power(&r, p[2], 0, p[1] != 0);
        power(&r, p[3], 1, p[1] != 0);
        break;
    case DC_N1:
        half_units(&r, p[0], 259, 0, p[1] < 0); /* 129.5 = 1.00000011b * 2^7 */
        break;
    case DC_N2:
        power(&r, p[0], 10, 0);
        power(&r, p[1], 0, 0);
        power(&r, p[2], 10, 1);
        break;
    case DC_N3:
        power(&r, p[0], 24, p[3] < 0);
        half_units(&r, p[1], 6, 0, p[3] < 0); /* 3 */
        power(&r, p[2], 24, p[3] > 0);
        break;
    case DC_N4A:
        power(&r, p[0], 60, 0);
        power(&r, p[4] ? p[2] : p[1], 60, 1);
        power(&r, p[4] ? p[1] : p[2], 60 - p[3], 0);
        break;
    case DC_N4B: /* sign * (1 + 2^-d) = (2^(d+1) + 2) half-units at 2^-d */
        power(&r, p[0], p[5], 0);
        half_units(&r, p[1], (1u << (p[3] + 1)) + 2, -p[3], p[4] < 0);
        power(&r, p[2], p[5], 1);
        break;
    case DC_N4E:
        power(&r, p[0], p[5], 0);
        if (p[4]) { /* RNE: a tie (+1) and a tail (+0.5) in one node */
            put(&r, (size_t)p[1], 0, 0, C_ONE);
            put(&r, (size_t)p[1], 0, 1, C_HALF);
        } else {
            put(&r, (size_t)p[1], p[5] - p[3], 0, C_ONE | C_NEG);
        }
        power(&r, p[2], p[5], 1);
        break;
    case DC_E:
        power(&r, p[0], p[5], 0);
        put(&r, (size_t)p[1], 0, (size_t)p[3], C_ONE);
        put(&r, (size_t)p[1], 0, (size_t)p[4], C_ONE | C_NEG);
        power(&r, p[2], p[5], 1);
        break;
    case DC_G_BLOCK:
        power(&r, p[0], 60, 0);
        power(&r, p[1], 60, 1);
        put(&r, (size_t)p[2], 60 - p[4], 0, C_ONE_HALF);
        put(&r, (size_t)p[2], 60 - p[4], (size_t)p[3], C_ONE_HALF);
        break;
    case DC_G_ELEM:
        power(&r, p[0], p[5], 0);
        put(&r, (size_t)p[1], p[5] - p[4], 0, C_ONE_HALF | C_NEG);
        put(&r, (size_t)p[1], p[5] - p[4], (size_t)p[3], C_ONE_HALF | C_NEG);
        power(&r, p[2], p[5], 1);
        break;
    case DC_FPREV_PAIR:
        for (int32_t b = 0; b < (int32_t)(K / 32); b++)
            power(&r, b, b == p[0] || b == p[1] ? DC_E_FPREV : 0, b == p[1]);
        break;
    }
}

void dc_probe_describe(const dc_probe *pr, char *buf, size_t len)
{
    const int32_t *p = pr->p;
    switch (pr->kind) {
    case DC_ZERO:
        snprintf(buf, len, "filler (all zero)");
        break;
    case DC_GAP_COUNT:
        snprintf(buf, len, "gap (%d,%d) %s window [%d,%d)", p[0] - 1, p[0],
                 p[1] ? "above" : "below", p[2], p[3]);
        break;
    case DC_GAP_PAIR:
        snprintf(buf, len, "gap (%d,%d) %s units at %d,%d", p[0] - 1, p[0],
                 p[1] ? "above" : "below", p[2], p[3]);
        break;
    case DC_N1:
        snprintf(buf, len, "block %d alone = %s129.5", p[0], p[1] < 0 ? "-" : "+");
        break;
    case DC_N2:
        snprintf(buf, len, "2^10 at %d, 1 at %d, -2^10 at %d", p[0], p[1], p[2]);
        break;
    case DC_N3:
        snprintf(buf, len, "%s2^24 at %d, %s3 at %d, %s2^24 at %d", p[3] < 0 ? "-" : "+", p[0],
                 p[3] < 0 ? "-" : "+", p[1], p[3] < 0 ? "+" : "-", p[2]);
        break;
    case DC_N4A:
        snprintf(buf, len, "2^60 at %d, -2^60 at %d, 2^(60-%d) at %d", p[0], p[4] ? p[2] : p[1],
                 p[3], p[4] ? p[1] : p[2]);
        break;
    case DC_N4B:
        snprintf(buf, len, "2^%d at %d, %s(1+2^-%d) at %d, -2^%d at %d", p[5], p[0],
                 p[4] < 0 ? "-" : "+", p[3], p[1], p[5], p[2]);
        break;
    case DC_N4E:
        if (p[4])
            snprintf(buf, len, "2^%d at %d, 1 and 0.5 at elements 0,1 of %d, -2^%d at %d", p[5],
                     p[0], p[1], p[5], p[2]);
        else
            snprintf(buf, len, "2^%d at %d, -2^(%d-%d) at %d, -2^%d at %d", p[5], p[0], p[5],
                     p[3], p[1], p[5], p[2]);
        break;
    case DC_E:
        snprintf(buf, len, "2^%d at %d, +1/-1 at elements %d/%d of %d, -2^%d at %d", p[5], p[0],
                 p[3], p[4], p[1], p[5], p[2]);
        break;
    case DC_G_BLOCK:
        snprintf(buf, len, "2^60 at %d, -2^60 at %d, 1.5*2^(60-%d) at elements 0,%d of %d", p[0],
                 p[1], p[4], p[3], p[2]);
        break;
    case DC_G_ELEM:
        snprintf(buf, len, "2^%d at %d, -1.5*2^(%d-%d) at elements 0,%d of %d, -2^%d at %d",
                 p[5], p[0], p[5], p[4], p[3], p[1], p[5], p[2]);
        break;
    case DC_FPREV_PAIR:
        snprintf(buf, len, "2^%d at %d, -2^%d at %d, 1 at every other block", DC_E_FPREV, p[0],
                 DC_E_FPREV, p[1]);
        break;
    }
}

void dc_probe_where(const dc_shape *s, size_t i, char *buf, size_t len)
{
    snprintf(buf, len, "round %u, call c%zu, %s %zu", s->round_no, i / s->slots,
             s->w_side ? "column" : "row", i % s->slots);
}
