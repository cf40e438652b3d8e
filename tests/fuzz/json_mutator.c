/* json_mutator.c — structure-aware mutations of a cJSON tree (see json_mutator.h). */
#include "json_mutator.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 4096

/* Number texts at the edges of what readers check (2^53, size_t, int, sign, exponent). */
static const char *const numbers[] = {
    "0", "1", "-1", "2", "0.5", "-0", "1e308", "1e400", "-1e400", "1e-320", "1.0",
    "9007199254740991", "9007199254740992", "9007199254740993", "18446744073709551615",
    "18446744073709551616", "2147483647", "2147483648", "4294967296", "4294967297",
    "65536", "65537", "256", "255", "32", "33", "1e3", "-2147483649", "123456789012345678901234567890"};

typedef struct {
    cJSON *node[MAX_NODES];
    cJSON *parent[MAX_NODES];
    size_t n;
} node_list;

static void collect(node_list *l, cJSON *node, cJSON *parent)
{
    if (l->n == MAX_NODES)
        return;
    l->node[l->n] = node;
    l->parent[l->n] = parent;
    l->n++;
    for (cJSON *c = node->child; c; c = c->next)
        collect(l, c, node);
}

cJSON *fz_json_raw_number(fz_rng *r)
{
    cJSON *j = cJSON_CreateRaw(numbers[fz_below(r, sizeof numbers / sizeof numbers[0])]);
    if (!j)
        abort();
    return j;
}

static const char *dict_string(fz_rng *r, const fz_json_dict *d)
{
    return d->nstrings ? d->strings[fz_below(r, d->nstrings)] : "";
}

static const char *dict_key(fz_rng *r, const fz_json_dict *d)
{
    return d->nkeys ? d->keys[fz_below(r, d->nkeys)] : "k";
}

/* libFuzzer's byte mutator on a copy of s, NUL bytes dropped. */
static cJSON *mutated_string(const char *s)
{
    uint8_t buf[512];
    size_t n = strlen(s);
    if (n > 256)
        n = 256;
    memcpy(buf, s, n);
    n = LLVMFuzzerMutate(buf, n, sizeof buf - 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (buf[i])
            buf[k++] = buf[i];
    buf[k] = '\0';
    return cJSON_CreateString((const char *)buf);
}

/* A new value: scalar, empty container or a copy of a node of the tree. */
static cJSON *new_value(fz_rng *r, const fz_json_dict *d, const node_list *l)
{
    switch (fz_below(r, 9)) {
    case 0: case 1: return fz_json_raw_number(r);
    case 2: case 3: return cJSON_CreateString(dict_string(r, d));
    case 4: return cJSON_CreateBool(fz_one_in(r, 2));
    case 5: return cJSON_CreateNull();
    case 6: return fz_one_in(r, 2) ? cJSON_CreateObject() : cJSON_CreateArray();
    default: return cJSON_Duplicate(l->node[fz_below(r, l->n)], 1);
    }
}

/* Replace node (a member of parent) by with, keeping the member's key: cJSON's
 * ReplaceItemViaPointer does not copy it, and a keyless member stops cJSON's lookups. */
static void replace(cJSON *parent, cJSON *node, cJSON *with)
{
    if (!with)
        abort();
    if (node->string && !(node->type & cJSON_StringIsConst)) {
        if (with->string && !(with->type & cJSON_StringIsConst))
            cJSON_free(with->string);
        with->string = strdup(node->string);
        with->type &= ~cJSON_StringIsConst;
        if (!with->string)
            abort();
    }
    if (!cJSON_ReplaceItemViaPointer(parent, node, with))
        cJSON_Delete(with);
}

static void nudge_number(cJSON *node, fz_rng *r)
{
    double v = node->valuedouble;
    static const double add[] = {1, -1, 0.5, 1e-9};
    if (fz_one_in(r, 3))
        v = fz_one_in(r, 2) ? -v : v * 2;
    else
        v += add[fz_below(r, 4)];
    cJSON_SetNumberValue(node, v);
}

static cJSON *nth_child(cJSON *node, size_t i)
{
    cJSON *c = node->child;
    while (c && i--)
        c = c->next;
    return c;
}

static void container_op(cJSON *node, fz_rng *r, const fz_json_dict *d, const node_list *l)
{
    size_t n = (size_t)cJSON_GetArraySize(node);
    cJSON *c = n ? nth_child(node, fz_below(r, n)) : NULL;
    int obj = cJSON_IsObject(node);
    switch (fz_below(r, 4)) {
    case 0: /* delete a member */
        if (c)
            cJSON_Delete(cJSON_DetachItemViaPointer(node, c));
        return;
    case 1: /* duplicate a member (same key in an object) */
        if (c) {
            cJSON *copy = cJSON_Duplicate(c, 1);
            if (obj)
                cJSON_AddItemToObject(node, c->string ? c->string : "", copy);
            else
                cJSON_AddItemToArray(node, copy);
        }
        return;
    case 2: /* rename a member (objects) */
        if (c && obj) {
            cJSON_DetachItemViaPointer(node, c);
            cJSON_AddItemToObject(node, dict_key(r, d), c);
            return;
        }
        /* fall through */
    default: /* add a member */
        if (obj)
            cJSON_AddItemToObject(node, dict_key(r, d), new_value(r, d, l));
        else
            cJSON_AddItemToArray(node, new_value(r, d, l));
    }
}

void fz_json_mutate(cJSON *root, fz_rng *r, const fz_json_dict *d)
{
    static node_list l; /* large: off the stack */
    l.n = 0;
    collect(&l, root, NULL);
    size_t i = fz_below(r, l.n);
    cJSON *node = l.node[i], *parent = l.parent[i];
    if ((cJSON_IsObject(node) || cJSON_IsArray(node)) && (!parent || fz_one_in(r, 2))) {
        container_op(node, r, d, &l);
        return;
    }
    if (!parent)
        return;
    if (cJSON_IsNumber(node) && fz_one_in(r, 2))
        nudge_number(node, r);
    else if (cJSON_IsString(node) && fz_one_in(r, 2))
        replace(parent, node, fz_one_in(r, 2) ? mutated_string(node->valuestring)
                                              : cJSON_CreateString(dict_string(r, d)));
    else
        replace(parent, node, new_value(r, d, &l));
}

size_t fz_json_print(const cJSON *root, fz_rng *r, uint8_t *data, size_t max_size)
{
    char *text = fz_one_in(r, 8) ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
    if (!text)
        return 0;
    size_t n = strlen(text);
    if (n > max_size)
        n = 0;
    else
        memcpy(data, text, n);
    cJSON_free(text);
    return n;
}
