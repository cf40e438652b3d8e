/* a4w4_contract.c — the text forms of accumulation contracts (contracts §4.1, §4.2): the one
 * strict parser, the canonical printer, the check of a tree's fields against a K, and
 * contract sets (the file form), the oracle of a contract, and the text checks (valid, same)
 * the backends share. Numbers are read
 * with strtoull and end-pointer checks after a digits-only scan, so a sign, a space, a
 * leading zero, trailing text or an overflow is refused with a line naming the key. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "a4w4_errf.h"
#include "a4w4_quote.h"
#include "a4w4_atomic.h"
#include "a4w4_contract.h"

/* ---- errors ----------------------------------------------------------------------------- */

/* "contract 'TEXT'" with TEXT quoted (one line, at most 60 bytes of TEXT shown, every byte
 * outside printable ASCII as \xNN: a4w4_quote_ascii). */
static const char *shown(const char *text, char buf[96])
{
    char q[64];
    snprintf(buf, 96, "contract '%s'", a4w4_quote_ascii(text, q, sizeof q));
    return buf;
}

/* ---- a tree against a K ---------------------------------------------------------------- */

int a4w4_tree_check(const a4w4_tree *t, size_t K, char *err, size_t errlen)
{
    if (!t)
        return errf(err, errlen, A4W4_EINVAL, "no tree");
    unsigned G = t->leaf;
    if (G < 1 || G > 128 || (G & (G - 1)))
        return errf(err, errlen, A4W4_EINVAL, "leaf=%u: leaf is one of 1, 2, 4, 8, 16, 32, 64, 128",
                    G);
    if (t->fuse < 1)
        return errf(err, errlen, A4W4_EINVAL, "fuse=0: fuse is at least 1");
    if (t->prec != 0 && (t->prec < 8 || t->prec > 64))
        return errf(err, errlen, A4W4_EINVAL, "prec=%u: prec is 0 or 8..64", t->prec);
    if ((unsigned)t->order > 1 || (unsigned)t->reduce > 1 || (unsigned)t->round > 1 ||
        (unsigned)t->acc > 1 || (unsigned)t->combine > 1 || (unsigned)t->final > 1 ||
        (unsigned)t->lround > 1 || (unsigned)t->lanecomb > 2)
        return errf(err, errlen, A4W4_EINVAL, "a key holds a value outside its set");
    if (t->lanecomb == A4W4_REDUCE_XOR && (t->lanes < 2 || (t->lanes & (t->lanes - 1))))
        return errf(err, errlen, A4W4_EINVAL, "lanecomb=xor: the xor shuffle needs lanes a "
                    "power of two, 2 or more (lanes=%u)", t->lanes);
    if (t->lanes < 1 || t->lanes > A4W4_TREE_LANES_MAX)
        return errf(err, errlen, A4W4_EINVAL, "lanes=%u: lanes is 1..%u", t->lanes,
                    A4W4_TREE_LANES_MAX);
    int small = t->chunk < 32 && (t->chunk & (t->chunk - 1)) == 0; /* 1, 2, 4, 8, 16 */
    if (t->chunk == 0 || (t->chunk % 32 && !small) || (small && t->lanes < 2) ||
        (t->lanes > 1 && t->chunk % (G > 32 ? G : small ? G : 32)))
        return errf(err, errlen, A4W4_EINVAL, "chunk=%u: chunk is a positive multiple of 32, or "
                    "with lanes > 1 a power of two below 32; with lanes > 1 a multiple of the "
                    "leaf", t->chunk);
    if (t->tile % 32 || (t->tile && (t->nbounds || t->split != 1)))
        return errf(err, errlen, A4W4_EINVAL, "tile=%u: tile is a positive multiple of 32 and "
                    "replaces split (split=1)", t->tile);
    if (t->align % 32 || t->align > A4W4_TREE_BOUND_MAX) /* 0: 256, ordered(S)'s */
        return errf(err, errlen, A4W4_EINVAL, "align=%u: align is a positive multiple of 32 "
                    "(elements)", t->align);
    if (t->align && t->align != 256 && (t->tile || t->nbounds || t->split < 2))
        return errf(err, errlen, A4W4_EINVAL, "align=%u: align rounds the parts of split=S, "
                    "S >= 2 (not with tile or split boundaries)", t->align);
    if (t->nbounds == 0 && (t->split < 1 || t->split > A4W4_SPLIT_MAX))
        return errf(err, errlen, A4W4_EINVAL, "split=%u: split is 1..%u or boundaries", t->split,
                    A4W4_SPLIT_MAX);
    if (t->nbounds > A4W4_TREE_MAX_BOUNDS)
        return errf(err, errlen, A4W4_EINVAL, "split: at most %u boundaries", A4W4_TREE_MAX_BOUNDS);
    for (size_t i = 0; i < t->nbounds; i++)
        if (t->bounds[i] == 0 || t->bounds[i] % 32 || (i && t->bounds[i] <= t->bounds[i - 1]))
            return errf(err, errlen, A4W4_EINVAL, "split boundary %u: boundaries are strictly increasing "
                        "positive multiples of 32", (unsigned)t->bounds[i]);
    if (t->sum_blocks || t->nsum) { /* the general form: the tree is the whole order */
        if (G != 32 || t->order || t->fuse != 1 || t->reduce || t->split != 1 || t->nbounds ||
            t->combine || t->lanes != 1 || t->chunk != 32 || t->lanecomb || t->tile ||
            (t->align && t->align != 256))
            return errf(err, errlen, A4W4_EINVAL, "sum: the sum tree is the whole order; only "
                        "prec, round, acc, final and lround go with it");
        int rc = a4w4_sumtree_check(t, err, errlen);
        if (rc)
            return rc;
    }
    if (K == 0 || K % 32)
        return errf(err, errlen, A4W4_EINVAL, "K=%zu: K is a positive multiple of 32", K);
    if (t->sum_blocks && K != 32 * (size_t)t->sum_blocks)
        return errf(err, errlen, A4W4_EINVAL, "sum names %u blocks (K=%u), not K=%zu: a sum "
                    "tree applies to one K", t->sum_blocks, 32 * t->sum_blocks, K);
    if (t->nbounds && t->bounds[t->nbounds - 1] >= K)
        return errf(err, errlen, A4W4_EINVAL, "split boundary %u is not below K=%zu",
                    (unsigned)t->bounds[t->nbounds - 1], K);
    return A4W4_OK;
}

/* ---- numbers ---------------------------------------------------------------------------- */

/* s[0..len) as a decimal in [lo, hi]: digits only, no leading zero (but "0" itself), no
 * overflow. 0 with *out, or -1. */
static int parse_uint(const char *s, size_t len, unsigned long long lo, unsigned long long hi,
                      unsigned long long *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf || (s[0] == '0' && len > 1))
        return -1;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno || end != buf + len || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* ---- tree(key=value,...) -------------------------------------------------------------- */

static const char *const key_names[] = {"leaf",  "order",  "fuse",  "reduce", "prec",
                                        "round", "acc",    "split", "combine", "final",
                                        "lround", "lanes", "chunk", "lanecomb", "tile",
                                        "sum", "align"};
#define NKEYS (sizeof key_names / sizeof key_names[0])
#define KEY_LIST "leaf, order, fuse, reduce, prec, round, acc, split, combine, final, lround, " \
                 "lanes, chunk, lanecomb, tile, sum, align"
#define KEY_SUM 15
#define KEY_ALIGN 16

/* v[0..len) equals word. */
static int is(const char *v, size_t len, const char *word)
{
    return strlen(word) == len && !memcmp(v, word, len);
}

/* Either of two words into *out (0 for a, 1 for b); 0, or -1. */
static int parse_word(const char *v, size_t len, const char *a, const char *b, int *out)
{
    if (is(v, len, a) || is(v, len, b)) {
        *out = is(v, len, b);
        return 0;
    }
    return -1;
}

/* split=S, or split=[0/]b1/b2/...: the first element of each split after the first (a list
 * holds a '/'; its leading 0, the first split's start, may be written). 0, or -1 with why. */
static int parse_split(const char *v, size_t len, a4w4_tree *t, const char **why)
{
    unsigned long long x;
    if (!memchr(v, '/', len)) {
        *why = "split is S in 1..65536, or split starts 0/b1/b2/... (multiples of 32)";
        if (parse_uint(v, len, 1, A4W4_SPLIT_MAX, &x))
            return -1;
        t->split = (unsigned)x;
        t->nbounds = 0;
        return 0;
    }
    *why = "split boundaries are '/'-separated, strictly increasing positive multiples of 32 "
           "up to 4294967264, at most 63";
    size_t nb = 0, i = 0;
    int first = 1;
    while (i <= len) {
        size_t j = i;
        while (j < len && v[j] != '/')
            j++;
        if (parse_uint(v + i, j - i, 0, A4W4_TREE_BOUND_MAX, &x) || x % 32)
            return -1;
        if (!(first && x == 0)) {
            if (x == 0 || nb == A4W4_TREE_MAX_BOUNDS || (nb && x <= t->bounds[nb - 1]))
                return -1;
            t->bounds[nb++] = (uint32_t)x;
        }
        first = 0;
        i = j + 1;
    }
    if (nb == 0)
        return -1;
    t->nbounds = nb;
    t->split = 1;
    return 0;
}

/* One key=value into t. 0, or -1 with *why the rule. */
static int set_key(a4w4_tree *t, size_t key, const char *v, size_t len, const char **why)
{
    unsigned long long x;
    int w;
    switch (key) {
    case 0:
        *why = "leaf is one of 1, 2, 4, 8, 16, 32, 64, 128";
        if (parse_uint(v, len, 1, 128, &x) || (x & (x - 1)))
            return -1;
        t->leaf = (unsigned)x;
        return 0;
    case 1:
        *why = "order is asc or desc";
        if (parse_word(v, len, "asc", "desc", &w))
            return -1;
        t->order = w ? A4W4_ORDER_DESC : A4W4_ORDER_ASC;
        return 0;
    case 2:
        *why = "fuse is a decimal 1..4294967295";
        if (parse_uint(v, len, 1, A4W4_TREE_FUSE_MAX, &x))
            return -1;
        t->fuse = (unsigned)x;
        return 0;
    case 3:
    case 8:
    case 13:
        *why = key == 3 ? "reduce is chain or pairwise" : key == 8 ? "combine is chain or pairwise"
                                                                   : "lanecomb is chain, pairwise or xor";
        if (key == 13 && is(v, len, "xor")) {
            t->lanecomb = A4W4_REDUCE_XOR;
            return 0;
        }
        if (parse_word(v, len, "chain", "pairwise", &w))
            return -1;
        *(key == 3 ? &t->reduce : key == 8 ? &t->combine : &t->lanecomb) =
            w ? A4W4_REDUCE_PAIRWISE : A4W4_REDUCE_CHAIN;
        return 0;
    case 4:
        *why = "prec is 0 or 8..64";
        if (parse_uint(v, len, 0, 64, &x) || (x && x < 8))
            return -1;
        t->prec = (unsigned)x;
        return 0;
    case 5:
    case 9:
    case 10:
        *why = key == 5 ? "round is rne or rz" : key == 9 ? "final is rne or rz"
                                                          : "lround is rne or rz";
        if (parse_word(v, len, "rne", "rz", &w))
            return -1;
        *(key == 5 ? &t->round : key == 9 ? &t->final : &t->lround) =
            w ? A4W4_ROUND_RZ : A4W4_ROUND_RNE;
        return 0;
    case 11:
        *why = "lanes is a decimal 1..65536";
        if (parse_uint(v, len, 1, A4W4_TREE_LANES_MAX, &x))
            return -1;
        t->lanes = (unsigned)x;
        return 0;
    case 12:
    case 14:
        *why = key == 12 ? "chunk is a positive multiple of 32 or a power of two below it "
                           "(elements)"
                         : "tile is a positive multiple of 32 (elements per split)";
        if (parse_uint(v, len, key == 12 ? 1 : 32, A4W4_TREE_BOUND_MAX, &x) ||
            (x % 32 && (key == 14 || (x & (x - 1)))))
            return -1;
        *(key == 12 ? &t->chunk : &t->tile) = (unsigned)x;
        return 0;
    case KEY_ALIGN:
        *why = "align is a positive multiple of 32 (elements)";
        if (parse_uint(v, len, 32, A4W4_TREE_BOUND_MAX, &x) || x % 32)
            return -1;
        t->align = (unsigned)x;
        return 0;
    case 6:
        *why = "acc is fp32 or bf16";
        if (parse_word(v, len, "fp32", "bf16", &w))
            return -1;
        t->acc = w ? A4W4_ACC_BF16 : A4W4_ACC_FP32;
        return 0;
    default:
        return parse_split(v, len, t, why);
    }
}

/* One "key=value" item s[0..len) into t, seen[] marking keys given. 0 or EINVAL with err. */
static int tree_item(const char *text, const char *s, size_t len, a4w4_tree *t, int *seen,
                     char *err, size_t errlen)
{
    char c[96];
    const char *eq = memchr(s, '=', len);
    if (len == 0)
        return errf(err, errlen, A4W4_EINVAL, "%s: an empty item (items are key=value, ','-separated)",
                     shown(text, c));
    size_t klen = eq ? (size_t)(eq - s) : len;
    size_t key = NKEYS;
    for (size_t k = 0; k < NKEYS; k++)
        if (is(s, klen, key_names[k]))
            key = k;
    if (key == NKEYS)
        return errf(err, errlen, A4W4_EINVAL, "%s: unknown key '%.*s' (keys: " KEY_LIST ")", shown(text, c),
                     (int)(klen > 32 ? 32 : klen), s);
    if (!eq)
        return errf(err, errlen, A4W4_EINVAL, "%s: key %s has no '=value'", shown(text, c), key_names[key]);
    if (seen[key])
        return errf(err, errlen, A4W4_EINVAL, "%s: key %s given twice (each key at most once)",
                     shown(text, c), key_names[key]);
    seen[key] = 1;
    const char *why = "";
    if (key == KEY_SUM) {
        char w[160];
        if (a4w4_sumtree_parse(eq + 1, len - klen - 1, t, w, sizeof w))
            return errf(err, errlen, A4W4_EINVAL, "%s: %s", shown(text, c), w);
        return A4W4_OK;
    }
    if (set_key(t, key, eq + 1, len - klen - 1, &why))
        return errf(err, errlen, A4W4_EINVAL, "%s: %.*s%s: %s", shown(text, c), (int)(len > 40 ? 37 : len),
                     s, len > 40 ? "..." : "", why);
    return A4W4_OK;
}

/* 1 when s[0..len) never closes more '(' than it opened, closes every one, and opens one
 * outside all others only as a value of sum= (the general form's nodes). */
static int balanced(const char *s, size_t len)
{
    long depth = 0;
    for (size_t i = 0; i < len && depth >= 0; i++) {
        if (s[i] == '(' && depth == 0 && (i < 4 || memcmp(s + i - 4, "sum=", 4)))
            return 0;
        depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    }
    return depth == 0;
}

/* The ',' ending the item at s (outside any parentheses: sum's nodes hold commas), or NULL
 * when the item runs to end. */
static const char *item_end(const char *s, const char *end)
{
    long depth = 0;
    for (; s < end; s++) {
        depth += *s == '(' ? 1 : *s == ')' ? -1 : 0;
        if (*s == ',' && depth == 0)
            return s;
    }
    return NULL;
}

static int parse_tree(const char *text, a4w4_contract *c, char *err, size_t errlen)
{
    char q[96];
    size_t L = strlen(text);
    if (L < 6 || text[L - 1] != ')' || !balanced(text + 5, L - 6))
        return errf(err, errlen, A4W4_EINVAL, "%s: a tree is tree(key=value,...) with nothing after ')'",
                     shown(text, q));
    const char *ws = strpbrk(text, " \t\r\n\v\f");
    if (ws)
        return errf(err, errlen, A4W4_EINVAL, "%s: whitespace at offset %zu (contract text has none)",
                     shown(text, q), (size_t)(ws - text));
    a4w4_tree t;
    a4w4_tree_defaults(&t);
    int seen[NKEYS] = {0};
    const char *s = text + 5, *end = text + L - 1;
    if (s < end)
        for (;;) {
            const char *comma = item_end(s, end);
            const char *stop = comma ? comma : end;
            if (tree_item(text, s, (size_t)(stop - s), &t, seen, err, errlen))
                return A4W4_EINVAL;
            if (!comma)
                break;
            s = comma + 1;
        }
    if (t.lanes == 1 && (seen[12] || seen[13]))
        return errf(err, errlen, A4W4_EINVAL, "%s: chunk and lanecomb need lanes > 1 (one lane is "
                    "the split itself)", shown(text, q));
    for (size_t k = 0; seen[KEY_SUM] && k < NKEYS; k++)
        if (seen[k] && k != KEY_SUM && k != 4 && k != 5 && k != 6 && k != 9 &&
            k != 10) /* prec round acc final lround */
            return errf(err, errlen, A4W4_EINVAL, "%s: key %s does not go with sum (the sum tree is "
                        "the whole order; only prec, round, acc, final and lround do)",
                        shown(text, q), key_names[k]);
    char why[256];
    size_t K = t.nbounds ? (size_t)t.bounds[t.nbounds - 1] + 32 : 32; /* applies any bounds */
    K = t.sum_blocks ? 32 * (size_t)t.sum_blocks : K;
    if (a4w4_tree_check(&t, K, why, sizeof why))
        return errf(err, errlen, A4W4_EINVAL, "%s: %s", shown(text, q), why);
    c->kind = A4W4_CONTRACT_TREE;
    c->split = 1;
    c->tree = t;
    return A4W4_OK;
}

/* ---- the named contracts -------------------------------------------------------------- */

int a4w4_contract_parse(const char *text, a4w4_contract *c, char *err, size_t errlen)
{
    char q[96];
    if (!text || !c)
        return errf(err, errlen, A4W4_EINVAL, "contract: none given");
    for (const char *p = text; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7F)
            return errf(err, errlen, A4W4_EINVAL, "%s: a control byte at offset %zu", shown(text, q),
                         (size_t)(p - text));
    for (const char *p = text; *p; p++)
        if ((unsigned char)*p >= 0x80)
            return errf(err, errlen, A4W4_EINVAL, "%s: a non-ASCII byte \\x%02x at offset %zu "
                         "(contract text is ASCII%s)", shown(text, q), (unsigned char)*p,
                         (size_t)(p - text), strncmp(p, "\xef\xbb\xbf", 3) ? "" :
                         "; a UTF-8 byte-order mark?");
    a4w4_contract r;
    memset(&r, 0, sizeof r);
    r.split = 1;
    if (!strcmp(text, "exact") || !strcmp(text, "bounded")) {
        r.kind = text[0] == 'e' ? A4W4_CONTRACT_EXACT : A4W4_CONTRACT_BOUNDED;
    } else if (!strncmp(text, "ordered(", 8) || !strncmp(text, "bounded(", 8)) {
        const char *close = strchr(text + 8, ')');
        unsigned long long S;
        if (!close || close[1] || parse_uint(text + 8, (size_t)(close - text - 8), 1,
                                             A4W4_SPLIT_MAX, &S))
            return errf(err, errlen, A4W4_EINVAL, "%s: S of %.7s(S) is a decimal 1..65536 (no sign, space or "
                         "leading zero) and ')' ends the text", shown(text, q), text);
        r.kind = text[0] == 'o' ? A4W4_CONTRACT_ORDERED : A4W4_CONTRACT_BOUNDED;
        r.split = (unsigned)S;
    } else if (!strncmp(text, "atomic(", 7)) {
        const char *close = strchr(text + 7, ')');
        unsigned long long S;
        if (!close || close[1] || parse_uint(text + 7, (size_t)(close - text - 7), 1,
                                             A4W4_ATOMIC_SPLIT_MAX, &S))
            return errf(err, errlen, A4W4_EINVAL, "%s: S of atomic(S) is a decimal 1..%u (its "
                        "S! orders of adds are each enumerated, never sampled; no sign, space or "
                        "leading zero) and ')' ends the text", shown(text, q),
                        A4W4_ATOMIC_SPLIT_MAX);
        r.kind = A4W4_CONTRACT_ATOMIC;
        r.split = (unsigned)S;
    } else if (!strncmp(text, "tree(", 5)) {
        if (parse_tree(text, &r, err, errlen))
            return A4W4_EINVAL;
    } else {
        return errf(err, errlen, A4W4_EINVAL, "%s: not one of exact, ordered(S), bounded, bounded(S), "
                     "atomic(S), tree(key=value,...)", shown(text, q));
    }
    *c = r;
    return A4W4_OK;
}

/* Append printf-style text at *o of buf[len]; -1 once it no longer fits. */
static int put(char *buf, size_t len, size_t *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int put(char *buf, size_t len, size_t *o, const char *fmt, ...)
{
    if (*o >= len)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *o, len - *o, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len - *o)
        return -1;
    *o += (size_t)n;
    return 0;
}

static int format_tree(const a4w4_tree *t, char *buf, size_t len, size_t *o)
{
    static const char *const red[3] = {"chain", "pairwise", "xor"}, *const rnd[2] = {"rne", "rz"};
    if (t->sum_blocks) { /* the general form: its node keys, then the tree */
        int bad = put(buf, len, o, "tree(prec=%u,round=%s,acc=%s,final=%s%s,sum=", t->prec,
                      rnd[t->round], t->acc ? "bf16" : "fp32", rnd[t->final],
                      t->lround ? ",lround=rz" : "");
        int w = bad ? -1 : a4w4_sumtree_format(t, buf + *o, len - *o);
        if (w < 0)
            return -1;
        *o += (size_t)w;
        return put(buf, len, o, ")");
    }
    int bad = put(buf, len, o, "tree(leaf=%u,order=%s,fuse=%u,reduce=%s,prec=%u,round=%s,"
                  "acc=%s,split=", t->leaf, t->order ? "desc" : "asc", t->fuse, red[t->reduce],
                  t->prec, rnd[t->round], t->acc ? "bf16" : "fp32");
    if (t->nbounds == 0)
        bad |= put(buf, len, o, "%u", t->split);
    else
        bad |= put(buf, len, o, "0");
    for (size_t i = 0; i < t->nbounds; i++)
        bad |= put(buf, len, o, "/%u", (unsigned)t->bounds[i]);
    bad |= put(buf, len, o, ",combine=%s,final=%s", red[t->combine], rnd[t->final]);
    if (t->lround != A4W4_ROUND_RNE)
        bad |= put(buf, len, o, ",lround=%s", rnd[t->lround]);
    if (t->lanes > 1)
        bad |= put(buf, len, o, ",lanes=%u,chunk=%u,lanecomb=%s", t->lanes, t->chunk,
                   red[t->lanecomb]);
    if (t->tile)
        bad |= put(buf, len, o, ",tile=%u", t->tile);
    if (t->align && t->align != 256)
        bad |= put(buf, len, o, ",align=%u", t->align);
    bad |= put(buf, len, o, ")");
    return bad;
}

/* 1 when c holds a contract the parser could have produced. */
static int contract_ok(const a4w4_contract *c)
{
    switch (c->kind) {
    case A4W4_CONTRACT_EXACT:
        return 1;
    case A4W4_CONTRACT_ORDERED:
    case A4W4_CONTRACT_BOUNDED:
        return c->split >= 1 && c->split <= A4W4_SPLIT_MAX;
    case A4W4_CONTRACT_ATOMIC:
        return c->split >= 1 && c->split <= A4W4_ATOMIC_SPLIT_MAX;
    case A4W4_CONTRACT_TREE: {
        /* every field in range; K = the largest bound + 32 applies any boundaries */
        size_t K = c->tree.nbounds && c->tree.nbounds <= A4W4_TREE_MAX_BOUNDS
                       ? (size_t)c->tree.bounds[c->tree.nbounds - 1] + 32
                       : 32;
        K = c->tree.sum_blocks ? 32 * (size_t)c->tree.sum_blocks : K;
        return a4w4_tree_check(&c->tree, K, NULL, 0) == A4W4_OK;
    }
    default:
        return 0;
    }
}

int a4w4_contract_format(const a4w4_contract *c, char *buf, size_t len)
{
    size_t o = 0;
    int bad = !c || !buf || !len || !contract_ok(c);
    if (!bad) {
        if (c->kind == A4W4_CONTRACT_EXACT)
            bad = put(buf, len, &o, "exact");
        else if (c->kind == A4W4_CONTRACT_TREE)
            bad = format_tree(&c->tree, buf, len, &o);
        else
            bad = put(buf, len, &o, "%s(%u)",
                      c->kind == A4W4_CONTRACT_ORDERED   ? "ordered"
                      : c->kind == A4W4_CONTRACT_ATOMIC ? "atomic"
                                                        : "bounded",
                      c->split);
    }
    if (bad) {
        if (buf && len)
            buf[0] = 0;
        return -1;
    }
    return (int)o;
}

int a4w4_contract_same(const a4w4_contract *a, const a4w4_contract *b)
{
    char x[A4W4_CONTRACT_MAX], y[A4W4_CONTRACT_MAX];
    return a4w4_contract_format(a, x, sizeof x) >= 0 && a4w4_contract_format(b, y, sizeof y) >= 0 &&
           !strcmp(x, y);
}

/* ---- contract sets ------------------------------------------------------------------------ */

static const char *const op_names[] = {"==", "!=", "<", "<=", ">", ">="};

/* s[0..len) trimmed of spaces and tabs at both ends. */
static void trim(const char **s, size_t *len)
{
    while (*len && (**s == ' ' || **s == '\t'))
        (*s)++, (*len)--;
    while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
        (*len)--;
}

/* One predicate s[0..len): M|N|K|Mpad then an operator and a decimal, or X%D==R. 0 or -1.
 * "Mpad" is stored as dim 'P'; s is advanced past the dimension's name. */
static int parse_pred(const char *s, size_t len, a4w4_shape_pred *p)
{
    if (len < 3 || (s[0] != 'M' && s[0] != 'N' && s[0] != 'K'))
        return -1;
    p->dim = s[0];
    p->mod = 0;
    if (len > 4 && !memcmp(s, "Mpad", 4)) { /* the padded-M bucket: s[1] becomes its operator */
        p->dim = 'P';
        s += 3;
        len -= 3;
    }
    unsigned long long v;
    if (s[1] == '%') {
        const char *eq = NULL;
        for (size_t i = 2; i + 1 < len; i++)
            if (s[i] == '=' && s[i + 1] == '=') {
                eq = s + i;
                break;
            }
        unsigned long long D;
        if (!eq || parse_uint(s + 2, (size_t)(eq - s - 2), 1, UINT64_MAX, &D) ||
            parse_uint(eq + 2, (size_t)(s + len - eq - 2), 0, D - 1, &v))
            return -1;
        p->op = A4W4_PRED_MOD;
        p->mod = D;
        p->value = v;
        return 0;
    }
    static const a4w4_pred_op tried[] = {A4W4_PRED_EQ, A4W4_PRED_NE, A4W4_PRED_LE,
                                         A4W4_PRED_GE, A4W4_PRED_LT, A4W4_PRED_GT};
    for (size_t i = 0; i < sizeof tried / sizeof tried[0]; i++) { /* "<=" before "<" */
        const char *name = op_names[tried[i]];
        size_t ol = strlen(name);
        if (len > 1 + ol && !memcmp(s + 1, name, ol)) {
            if (parse_uint(s + 1 + ol, len - 1 - ol, 0, UINT64_MAX, &v))
                return -1;
            p->op = tried[i];
            p->value = v;
            return 0;
        }
    }
    return -1;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* 1 when some x = lo + step*j (j >= 0; lo a multiple of step, or step 1) has x % D == R: an
 * x of that progression is R modulo D exactly when gcd(step, D) divides R - lo (mod D). */
static int progression_meets(uint64_t lo, uint64_t step, uint64_t D, uint64_t R)
{
    uint64_t t = lo % D, diff = R >= t ? R - t : D - (t - R);
    return diff % gcd_u64(step, D) == 0;
}

/* 1 when some value x of dimension p->dim satisfies comparison p: x in lo, lo+step, ...
 * (unbounded above). */
static int compare_meets(const a4w4_shape_pred *p, uint64_t lo, uint64_t step)
{
    uint64_t v = p->value;
    switch (p->op) {
    case A4W4_PRED_EQ: return v >= lo && (v - lo) % step == 0;
    case A4W4_PRED_LT: return v > lo;
    case A4W4_PRED_LE: return v >= lo;
    case A4W4_PRED_GT: return v < UINT64_MAX;
    default: return 1; /* NE, GE: some larger value always */
    }
}

static uint64_t padded_m(size_t M);

/* 1 when some padded-M bucket Mpad (getPaddedM(M, ., ., 0), contracts §5.1: 16, 32, .., 256;
 * 288, .., 1024 by 32; 1088, .., 4096 by 64; 4224, 4352, .. by 128) satisfies p. */
static int mpad_meets(const a4w4_shape_pred *p)
{
    uint64_t v = p->value;
    if (p->op == A4W4_PRED_EQ)
        return v >= 1 && v <= UINT64_MAX - 128 && padded_m((size_t)v) == v;
    if (p->op != A4W4_PRED_MOD)
        return compare_meets(p, 16, 16); /* the smallest is 16; no largest */
    for (uint64_t x = 16; x <= 4096; x = padded_m((size_t)x + 1)) /* the 88 below the tail */
        if (x % p->mod == v)
            return 1;
    return progression_meets(4224, 128, p->mod, v);
}

/* Why no shape reaches predicate p, into why[len] (contracts §4.2 "The file form": M and N
 * are at least 1, K a positive multiple of 32 (§4: one E8M0 scale per 32 elements), Mpad a
 * padded-M bucket of §5.1); returns 1, or 0 when some shape does. */
static int pred_unreachable(const a4w4_shape_pred *p, char *why, size_t len)
{
    int meets = p->dim == 'P' ? mpad_meets(p)
                : p->op == A4W4_PRED_MOD
                    ? progression_meets(p->dim == 'K' ? 32 : 1, p->dim == 'K' ? 32 : 1, p->mod,
                                        p->value)
                    : compare_meets(p, p->dim == 'K' ? 32 : 1, p->dim == 'K' ? 32 : 1);
    if (meets)
        return 0;
    snprintf(why, len, "%s",
             p->dim == 'P' ? "Mpad, getPaddedM(M, N, K, 0) of contracts §5.1, is 16, 32, .., "
                             "256, then a multiple of 32 up to 1024, of 64 up to 4096, of 128 "
                             "past it"
             : p->dim == 'K' ? "K is a positive multiple of 32 (one E8M0 scale per 32 "
                               "elements, contracts §4)"
                             : p->dim == 'M' ? "M is at least 1" : "N is at least 1");
    return 1;
}

/* s[0..len) into out[0..cap) without the blanks that stand between a name, an operator and a
 * number (contracts §4.2, the file form: `Mpad <= 32`, `K % 256 == 0`); a blank between two
 * letters or digits, or inside an operator, is kept, so `K<=3 2` and `K> =4` stay malformed.
 * The length, or -1 if too long. */
static int squeeze_pred(const char *s, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ' || s[i] == '\t') {
            size_t j = i;
            while (j < len && (s[j] == ' ' || s[j] == '\t'))
                j++;
            int same_class = n && j < len && !isalnum((unsigned char)out[n - 1]) ==
                                                 !isalnum((unsigned char)s[j]);
            if (!same_class) {
                i = j - 1;
                continue;
            }
        }
        if (n + 1 >= cap)
            return -1;
        out[n++] = s[i];
    }
    out[n] = '\0';
    return (int)n;
}

/* "when PRED[,PRED...]" s[0..len) (after "when") into r. 0, or with *bad the predicate: -1
 * malformed, -2 well-formed but reached by no shape (why[whylen] says why). */
static int parse_preds(const char *s, size_t len, a4w4_contract_rule *r, const char **bad,
                       size_t *badlen, char *why, size_t whylen)
{
    r->npreds = 0;
    for (;;) {
        const char *comma = memchr(s, ',', len);
        size_t pl = comma ? (size_t)(comma - s) : len;
        const char *p = s;
        size_t plen = pl;
        trim(&p, &plen);
        *bad = p;
        *badlen = plen;
        char sq[64];
        int sl = squeeze_pred(p, plen, sq, sizeof sq);
        if (r->npreds == A4W4_RULE_MAX_PREDS || sl < 0 ||
            parse_pred(sq, (size_t)sl, &r->preds[r->npreds]))
            return -1;
        if (pred_unreachable(&r->preds[r->npreds], why, whylen))
            return -2;
        r->npreds++;
        if (!comma)
            return 0;
        s = comma + 1;
        len -= pl + 1;
    }
}

/* One non-blank line s[0..len) (comment removed, trimmed) into r. 0 or EINVAL with err. */
static int parse_rule(const char *s, size_t len, unsigned line, a4w4_contract_rule *r, char *err,
                      size_t errlen)
{
    memset(r, 0, sizeof r[0]);
    r->line = line;
    if (len >= 5 && !memcmp(s, "when", 4) && (s[4] == ' ' || s[4] == '\t')) {
        const char *colon = memchr(s, ':', len);
        if (!colon)
            return errf(err, errlen, A4W4_EINVAL, "line %u: a 'when' rule is `when PRED[,PRED...]: "
                         "CONTRACT` (no ':' found)", line);
        const char *bad;
        size_t badlen;
        char why[200];
        int prc = parse_preds(s + 5, (size_t)(colon - s - 5), r, &bad, &badlen, why, sizeof why);
        if (prc) {
            char q[64], raw[64];
            snprintf(raw, sizeof raw, "%.*s", (int)(badlen > 60 ? 60 : badlen), bad);
            if (prc == -2)
                return errf(err, errlen, A4W4_EINVAL, "line %u: predicate '%s' holds for no "
                            "shape: %s (contracts §4.2, the file form)", line,
                            a4w4_quote(raw, q, sizeof q), why);
            return errf(err, errlen, A4W4_EINVAL, "line %u: predicate '%s' is not M|N|K|Mpad followed by ==, "
                         "!=, <, <=, >, >= and a decimal, or X%%D==R with 0 <= R < D (at most "
                         "%d per rule)", line, a4w4_quote(raw, q, sizeof q), A4W4_RULE_MAX_PREDS);
        }
        len -= (size_t)(colon + 1 - s);
        s = colon + 1;
        trim(&s, &len);
    }
    char text[A4W4_CONTRACT_MAX * 2], e[512];
    if (len >= sizeof text)
        return errf(err, errlen, A4W4_EINVAL, "line %u: the contract text is longer than %zu bytes", line,
                     sizeof text - 1);
    memcpy(text, s, len);
    text[len] = 0;
    if (a4w4_contract_parse(text, &r->contract, e, sizeof e))
        return errf(err, errlen, A4W4_EINVAL, "line %u: %s", line, e);
    return A4W4_OK;
}

/* Append rule r to set (growing its array). A4W4_OK or A4W4_ENOMEM. */
static int set_append(a4w4_contract_set *set, const a4w4_contract_rule *r, size_t *cap)
{
    if (set->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 4;
        a4w4_contract_rule *p = realloc(set->rules, nc * sizeof *p);
        if (!p)
            return A4W4_ENOMEM;
        set->rules = p;
        *cap = nc;
    }
    set->rules[set->n++] = *r;
    return A4W4_OK;
}

/* The earlier rule of set that holds for every shape r holds for (its predicates are all among
 * r's, the same text: an unconditional rule has none), or NULL. */
static const a4w4_contract_rule *covered_by(const a4w4_contract_set *set,
                                            const a4w4_contract_rule *r)
{
    for (size_t j = 0; j < set->n; j++) {
        const a4w4_contract_rule *e = &set->rules[j];
        size_t found = 0;
        for (size_t a = 0; a < e->npreds; a++)
            for (size_t b = 0; b < r->npreds; b++) {
                const a4w4_shape_pred *x = &e->preds[a], *y = &r->preds[b];
                if (x->dim == y->dim && x->op == y->op && x->value == y->value &&
                    x->mod == y->mod) {
                    found++;
                    break;
                }
            }
        if (found == e->npreds)
            return e;
    }
    return NULL;
}

/* The refusal of rule s[0..len) on line `line`, which the earlier rule e covers: the first
 * rule that holds is a shape's contract (contracts §4.2), so it never holds for any shape.
 * Returns A4W4_EINVAL. */
static int never_matches(const char *s, size_t len, unsigned line, const a4w4_contract_rule *e,
                         char *err, size_t errlen)
{
    char raw[72], q[72];
    snprintf(raw, sizeof raw, "%.*s%s", (int)(len > 60 ? 60 : len), s, len > 60 ? "..." : "");
    return errf(err, errlen, A4W4_EINVAL, "line %u: rule '%s' can never match: line %u before "
                "it %s (the first rule that holds is a shape's contract)", line,
                a4w4_quote(raw, q, sizeof q), e->line,
                e->npreds ? "holds wherever it does (its predicates are among this one's)"
                          : "has no 'when'");
}

int a4w4_contract_set_parse(const char *text, a4w4_contract_set *set, char *err, size_t errlen)
{
    memset(set, 0, sizeof *set);
    if (!text)
        return errf(err, errlen, A4W4_EINVAL, "contract set: no text");
    size_t cap = 0;
    unsigned line = 0;
    for (const char *s = text; *s;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        const char *next = nl ? nl + 1 : s + len;
        line++;
        const char *hash = memchr(s, '#', len);
        if (hash)
            len = (size_t)(hash - s);
        if (len && s[len - 1] == '\r')
            len--;
        trim(&s, &len);
        if (len) {
            a4w4_contract_rule r;
            int rc = parse_rule(s, len, line, &r, err, errlen);
            const a4w4_contract_rule *e = rc == A4W4_OK ? covered_by(set, &r) : NULL;
            if (e)
                rc = never_matches(s, len, line, e, err, errlen);
            if (rc == A4W4_OK && set_append(set, &r, &cap)) {
                errf(err, errlen, A4W4_EINVAL, "line %u: out of memory", line);
                rc = A4W4_ENOMEM;
            }
            if (rc) {
                a4w4_contract_set_free(set);
                return rc;
            }
        }
        s = next;
    }
    if (set->n == 0)
        return errf(err, errlen, A4W4_EINVAL, "no rule: the text has no contract line");
    return A4W4_OK;
}

/* AITER's getPaddedM(M, ., ., 0) (contracts §5.1): the dispatcher's padded-M bucket; past
 * A4W4_DIM_MAX the same rule (a multiple of 128). */
static uint64_t padded_m(size_t M)
{
    if (M >= 1 && M <= A4W4_DIM_MAX)
        return (uint64_t)a4w4_padded_m((int)M, 1, 1, 0);
    return ((uint64_t)M + 127) / 128 * 128;
}

static int pred_holds(const a4w4_shape_pred *p, size_t M, size_t N, size_t K)
{
    uint64_t x = p->dim == 'M' ? M : p->dim == 'N' ? N : p->dim == 'P' ? padded_m(M) : K;
    switch (p->op) {
    case A4W4_PRED_EQ: return x == p->value;
    case A4W4_PRED_NE: return x != p->value;
    case A4W4_PRED_LT: return x < p->value;
    case A4W4_PRED_LE: return x <= p->value;
    case A4W4_PRED_GT: return x > p->value;
    case A4W4_PRED_GE: return x >= p->value;
    case A4W4_PRED_MOD: return x % p->mod == p->value;
    }
    return 0;
}

const a4w4_contract *a4w4_contract_set_find(const a4w4_contract_set *set, size_t M, size_t N,
                                            size_t K)
{
    for (size_t i = 0; set && i < set->n; i++) {
        const a4w4_contract_rule *r = &set->rules[i];
        size_t k = 0;
        while (k < r->npreds && pred_holds(&r->preds[k], M, N, K))
            k++;
        if (k == r->npreds)
            return &r->contract;
    }
    return NULL;
}

int a4w4_contract_set_format(const a4w4_contract_set *set, char *buf, size_t len)
{
    size_t o = 0;
    int bad = !set || !buf || !len;
    for (size_t i = 0; !bad && i < set->n; i++) {
        const a4w4_contract_rule *r = &set->rules[i];
        char c[A4W4_CONTRACT_MAX];
        bad |= i ? put(buf, len, &o, "\n") : 0;
        for (size_t k = 0; k < r->npreds && !bad; k++) {
            const a4w4_shape_pred *p = &r->preds[k];
            const char *dim = p->dim == 'P' ? "Mpad" : p->dim == 'M' ? "M" : p->dim == 'N' ? "N" : "K";
            bad |= put(buf, len, &o, "%s", k ? "," : "when ");
            if (p->op == A4W4_PRED_MOD)
                bad |= put(buf, len, &o, "%s%%%llu==%llu", dim, (unsigned long long)p->mod,
                           (unsigned long long)p->value);
            else
                bad |= put(buf, len, &o, "%s%s%llu", dim, op_names[p->op],
                           (unsigned long long)p->value);
        }
        bad |= r->npreds ? put(buf, len, &o, ": ") : 0;
        bad |= a4w4_contract_format(&r->contract, c, sizeof c) < 0 || put(buf, len, &o, "%s", c);
    }
    if (bad) {
        if (buf && len)
            buf[0] = 0;
        return -1;
    }
    return (int)o;
}

int a4w4_contract_set_single(const a4w4_contract *c, a4w4_contract_set *set)
{
    memset(set, 0, sizeof *set);
    set->rules = calloc(1, sizeof *set->rules);
    if (!set->rules)
        return A4W4_ENOMEM;
    set->rules[0].line = 1;
    set->rules[0].contract = *c;
    set->n = 1;
    return A4W4_OK;
}

int a4w4_contract_set_copy(const a4w4_contract_set *src, a4w4_contract_set *dst)
{
    memset(dst, 0, sizeof *dst);
    if (!src->n)
        return A4W4_OK;
    dst->rules = malloc(src->n * sizeof *dst->rules);
    if (!dst->rules)
        return A4W4_ENOMEM;
    memcpy(dst->rules, src->rules, src->n * sizeof *dst->rules);
    dst->n = src->n;
    return A4W4_OK;
}

void a4w4_contract_set_free(a4w4_contract_set *set)
{
    if (!set)
        return;
    free(set->rules);
    memset(set, 0, sizeof *set);
}

/* ---- the oracle of a contract ------------------------------------------------------------ */

/* atomic(S)'s split values added in split order, one member of each output's set
 * (contracts §4.1 "atomic(S)"); y_f32 gets the same values. */
static int atomic_in_order(unsigned S, const uint8_t *a_fp4, const uint8_t *a_scale,
                           const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N,
                           size_t K, uint16_t *y_bf16, float *y_f32)
{
    if (!a_fp4 || !a_scale || !w_fp4 || !w_scale || !y_bf16 || !M || !N || !K || K % 32)
        return A4W4_EINVAL;
    for (size_t m = 0; m < M; m++)
        for (size_t j = 0; j < N; j++) {
            const a4w4_dot_operands op = {a_fp4 + m * (K / 2), a_scale + m * (K / 32),
                                          w_fp4 + j * (K / 2), w_scale + j * (K / 32), K};
            uint16_t q[A4W4_ATOMIC_SPLIT_MAX];
            const unsigned n = a4w4_dot_atomic_splits(&op, S, q);
            y_bf16[m * N + j] = a4w4_atomic_fold(q, NULL, n);
            if (y_f32)
                y_f32[m * N + j] = a4w4_bf16_to_f32(y_bf16[m * N + j]);
        }
    return A4W4_OK;
}

int a4w4_gemm_contract(const a4w4_contract *c, const uint8_t *a_fp4, const uint8_t *a_scale,
                       const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N,
                       size_t K, uint16_t *y_bf16, float *y_f32)
{
    if (!c)
        return A4W4_EINVAL;
    switch (c->kind) {
    case A4W4_CONTRACT_EXACT:
        return a4w4_gemm_exact(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16, y_f32);
    case A4W4_CONTRACT_ORDERED:
        return a4w4_gemm_ordered(a_fp4, a_scale, w_fp4, w_scale, M, N, K, c->split, y_bf16,
                                 y_f32);
    case A4W4_CONTRACT_TREE:
        return a4w4_gemm_tree(a_fp4, a_scale, w_fp4, w_scale, M, N, K, &c->tree, y_bf16, y_f32);
    case A4W4_CONTRACT_ATOMIC:
        return atomic_in_order(c->split, a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16, y_f32);
    default:
        return A4W4_EUNSUPPORTED;
    }
}

/* ---- contract texts: valid, rules, the same contract ------------------------------------ */

int a4w4_contract_text_is_rules(const char *s)
{
    int lines = 0; /* rule lines seen: a second one makes rules of any first one */
    while (s && *s) {
        s += strspn(s, " \t\r\n");
        if (*s && *s != '#') {
            if (lines++ || (!strncmp(s, "when", 4) && (s[4] == ' ' || s[4] == '\t')))
                return 1;
        }
        s += strcspn(s, "\n");
    }
    return 0;
}

int a4w4_contract_valid(const char *s)
{
    a4w4_contract c;
    a4w4_contract_set set;
    if (!a4w4_contract_text_is_rules(s))
        return s && a4w4_contract_parse(s, &c, NULL, 0) == A4W4_OK;
    if (a4w4_contract_set_parse(s, &set, NULL, 0) != A4W4_OK)
        return 0;
    a4w4_contract_set_free(&set);
    return 1;
}

/* The canonical text of contract or rule-set text s into buf (contracts §4.2). 0 or -1. */
static int canonical_set(const char *s, char *buf, size_t len)
{
    a4w4_contract_set set;
    if (!a4w4_contract_valid(s) || a4w4_contract_set_parse(s, &set, NULL, 0) != A4W4_OK)
        return -1;
    int n = a4w4_contract_set_format(&set, buf, len);
    a4w4_contract_set_free(&set);
    return n < 0 ? -1 : 0;
}

/* 1 when contract texts a and b name the same contract: the same canonical form (plain
 * "bounded" is "bounded(1)", contracts §4.1; a tree's keys in any order, contracts §4.2; a
 * rule set's rules in the same order, comments and spacing aside). */
int a4w4_contract_text_same(const char *a, const char *b)
{
    /* a bundle's text is at most A4W4_CONTRACT_MAX bytes: 60 or so rules, each canonical
     * tree at most ~160 bytes */
    static _Thread_local char ca[16384], cb[16384];
    return !canonical_set(a, ca, sizeof ca) && !canonical_set(b, cb, sizeof cb) && !strcmp(ca, cb);
}
