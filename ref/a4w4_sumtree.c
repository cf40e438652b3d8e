/* a4w4_sumtree.c — the general form of a tree contract, tree(...,sum=(...)) (contracts §4.2
 * "The general form"): its text read into prefix tokens, checked, and written back. A node
 * is '(' then its inputs, ','-separated, then ')'; an input is a block index (a decimal, no
 * sign, no leading zero) or a node. Read without recursion: an explicit stack of the open
 * nodes, each node token patched with its input count at its ')'. */
#include <stdio.h>
#include <string.h>

#include "a4w4_errf.h"
#include "a4w4_tree.h"

int a4w4_sumtree_check(const a4w4_tree *t, char *err, size_t errlen)
{
    unsigned n = t->sum_blocks;
    uint8_t seen[A4W4_SUMTREE_MAX_BLOCKS] = {0};
    size_t nodes = 0, need = 1;
    if (n < 1 || n > A4W4_SUMTREE_MAX_BLOCKS || t->nsum < 2 || t->nsum > A4W4_SUMTREE_MAX_TOKENS ||
        !(t->sum[0] & A4W4_SUMTREE_NODE))
        return errf(err, errlen, A4W4_EINVAL, "sum: a tree over 1..%u blocks whose root is a node",
                    A4W4_SUMTREE_MAX_BLOCKS);
    for (size_t i = 0; i < t->nsum; i++) {
        unsigned tok = t->sum[i];
        if (need == 0)
            return errf(err, errlen, A4W4_EINVAL, "sum: tokens past the root node");
        need--;
        if (tok & A4W4_SUMTREE_NODE) {
            unsigned a = tok & ~A4W4_SUMTREE_NODE;
            if (a < 1 || ++nodes > A4W4_SUMTREE_MAX_NODES)
                return errf(err, errlen, A4W4_EINVAL, "sum: a node has 1 or more inputs, a tree "
                            "at most %u nodes", A4W4_SUMTREE_MAX_NODES);
            need += a;
        } else if (tok >= n || seen[tok]++) {
            return errf(err, errlen, A4W4_EINVAL, "sum: block %u %s (blocks 0..%u each appear "
                        "once)", tok, tok >= n ? "is past the tree's blocks" : "appears twice",
                        n - 1);
        }
    }
    if (need)
        return errf(err, errlen, A4W4_EINVAL, "sum: a node lacks %zu of its inputs", need);
    for (unsigned b = 0; b < n; b++)
        if (!seen[b])
            return errf(err, errlen, A4W4_EINVAL, "sum: block %u is missing (blocks 0..%u each "
                        "appear once)", b, n - 1);
    return A4W4_OK;
}

/* One input at v[*i]: a block index into the tokens; 0, or -1 with why. */
static int read_index(const char *v, size_t len, size_t *i, a4w4_tree *t, unsigned *top,
                      char *why, size_t whylen)
{
    size_t j = *i;
    unsigned long x = 0;
    while (j < len && v[j] >= '0' && v[j] <= '9' && x < 100000)
        x = x * 10 + (unsigned long)(v[j++] - '0');
    if (j == *i || (v[*i] == '0' && j - *i > 1))
        return errf(why, whylen, -1, "sum: at offset %zu an input is a block index (a decimal, "
                    "no sign or leading zero) or a '(' node", *i);
    if (x >= A4W4_SUMTREE_MAX_BLOCKS)
        return errf(why, whylen, -1, "sum: block %lu is past the %u blocks a tree may hold "
                    "(K <= %u)", x, A4W4_SUMTREE_MAX_BLOCKS, 32 * A4W4_SUMTREE_MAX_BLOCKS);
    if (t->nsum == A4W4_SUMTREE_MAX_TOKENS)
        return errf(why, whylen, -1, "sum: more than %u tokens", A4W4_SUMTREE_MAX_TOKENS);
    t->sum[t->nsum++] = (uint16_t)x;
    *top = (unsigned)x > *top ? (unsigned)x : *top;
    *i = j;
    return 0;
}

int a4w4_sumtree_parse(const char *v, size_t len, a4w4_tree *t, char *why, size_t whylen)
{
    size_t open[A4W4_SUMTREE_MAX_NODES], depth = 0, nodes = 0, i = 0;
    unsigned top = 0;
    t->nsum = 0;
    if (len == 0 || v[0] != '(')
        return errf(why, whylen, -1, "sum: the value is one node, '(' then its inputs "
                    "(block indices or nodes) ','-separated, then ')'");
    do {
        if (v[i] == '(') {
            if (nodes == A4W4_SUMTREE_MAX_NODES)
                return errf(why, whylen, -1, "sum: more than %u nodes", A4W4_SUMTREE_MAX_NODES);
            nodes++;
            open[depth++] = t->nsum;
            t->sum[t->nsum++] = A4W4_SUMTREE_NODE; /* its input count, +1 per input */
            i++;
            continue; /* an input follows */
        }
        if (read_index(v, len, &i, t, &top, why, whylen))
            return -1;
        for (;;) { /* after an input: ',' and the next, or ')' closing the node */
            t->sum[open[depth - 1]]++;
            if (i < len && v[i] == ',') {
                i++;
                break;
            }
            if (i >= len || v[i] != ')')
                return errf(why, whylen, -1, "sum: at offset %zu a node's inputs are "
                            "','-separated and ')' closes it", i);
            i++;
            if (--depth == 0)
                break;
        }
    } while (depth);
    if (i != len)
        return errf(why, whylen, -1, "sum: text after the root node's ')' at offset %zu", i);
    t->sum_blocks = top + 1;
    return a4w4_sumtree_check(t, why, whylen) ? -1 : 0;
}

int a4w4_sumtree_format(const a4w4_tree *t, char *buf, size_t len)
{
    size_t left[A4W4_SUMTREE_MAX_NODES + 1], depth = 0, o = 0;
    for (size_t i = 0; i < t->nsum; i++) {
        unsigned tok = t->sum[i];
        int w = tok & A4W4_SUMTREE_NODE ? snprintf(buf + o, len - o, "(")
                                        : snprintf(buf + o, len - o, "%u", tok);
        if (w < 0 || (size_t)w >= len - o || depth > A4W4_SUMTREE_MAX_NODES)
            return -1;
        o += (size_t)w;
        if (tok & A4W4_SUMTREE_NODE) {
            left[depth++] = tok & ~A4W4_SUMTREE_NODE;
            continue;
        }
        while (depth && --left[depth - 1] == 0) { /* close every node this input completes */
            if (o + 1 >= len)
                return -1;
            buf[o++] = ')';
            depth--;
        }
        if (depth) {
            if (o + 1 >= len)
                return -1;
            buf[o++] = ',';
        }
        buf[o] = 0;
    }
    return depth ? -1 : (int)o;
}
