/* field_bugs.c — the field's bug rules over lists of shapes (field_bugs.h). */
#include "field_bugs.h"

#include <stdio.h>
#include <stdlib.h>

#include "a4w4_policy.h"
#include "grow.h"

static int push(a4w4_bug_shapes *s, int M, int N, int K)
{
    if (A4W4_GROW(s->shape, s->n + 1, s->cap, 16))
        return -1;
    s->shape[s->n][0] = M;
    s->shape[s->n][1] = N;
    s->shape[s->n][2] = K;
    s->n++;
    return 0;
}

int a4w4_field_bugs_of(const int (*shapes)[3], size_t n, const a4w4_tuned_table *tuned,
                       const a4w4_kernel_table *kt, const a4w4_heur_params *hp,
                       a4w4_bug_shapes *out)
{
    for (size_t i = 0; i < n; i++) {
        int M = shapes[i][0], N = shapes[i][1], K = shapes[i][2];
        a4w4_route r;
        a4w4_policy_result pr;
        a4w4_bug_shape s;
        int routed = !a4w4_route_shape(tuned, kt, hp, M, N, K, &r, NULL, 0);
        int decided = !a4w4_policy_decide(1, hp->gfx, (size_t)N, 2, (size_t)N, (size_t)K / 32,
                                          A4W4_INPUT_TENSOR_2D, 0, &pr);
        a4w4_bug_shape_of(M, N, K, routed ? &r : NULL, kt, hp->bpreshuffle,
                          decided ? &pr : NULL, &s);
        unsigned mask = a4w4_bugs_of(&s);
        for (int b = 0; b < A4W4_BUG_COUNT; b++)
            if (((mask >> b) & 1u) && push(&out[b], M, N, K))
                return -1;
    }
    return 0;
}

int (*a4w4_tuned_shapes(const a4w4_tuned_table *t, size_t *n))[3]
{
    *n = 0;
    int(*v)[3] = t && t->n ? malloc(t->n * sizeof *v) : NULL;
    for (size_t i = 0; v && i < t->n; i++) {
        v[i][0] = t->rows[i].M;
        v[i][1] = t->rows[i].N;
        v[i][2] = t->rows[i].K;
        (*n)++;
    }
    return v;
}

void a4w4_print_field_bugs(FILE *f, const a4w4_bug_shapes *out, const char *what, size_t total,
                           size_t max)
{
    size_t nr;
    const a4w4_bug_rule *r = a4w4_bug_rules(&nr);
    fprintf(f, "field bugs (ref/a4w4_hazard.c), over %s:\n", what);
    for (size_t b = 0; b < nr; b++) {
        fprintf(f, "  %-13s %s: %s; %s: %zu of %zu shapes", r[b].id, r[b].citation, r[b].what,
               r[b].rule, out[b].n, total);
        for (size_t i = 0; i < out[b].n && i < max; i++)
            fprintf(f, "%s%dx%dx%d", i ? ", " : ": ", out[b].shape[i][0], out[b].shape[i][1],
                   out[b].shape[i][2]);
        fprintf(f, "%s\n", out[b].n > max ? ", ..." : "");
    }
}

cJSON *a4w4_field_bugs_json(const a4w4_bug_shapes *out)
{
    size_t nr;
    const a4w4_bug_rule *r = a4w4_bug_rules(&nr);
    cJSON *a = cJSON_CreateArray();
    for (size_t b = 0; b < nr; b++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", r[b].id);
        cJSON_AddStringToObject(o, "citation", r[b].citation);
        cJSON_AddStringToObject(o, "url", r[b].url);
        cJSON_AddStringToObject(o, "what", r[b].what);
        cJSON_AddStringToObject(o, "rule", r[b].rule);
        cJSON_AddBoolToObject(o, "shape_rule", r[b].shape_rule);
        cJSON_AddNumberToObject(o, "count", (double)out[b].n);
        cJSON *sh = cJSON_AddArrayToObject(o, "shapes");
        for (size_t i = 0; i < out[b].n; i++)
            cJSON_AddItemToArray(sh, cJSON_CreateIntArray(out[b].shape[i], 3));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

void a4w4_field_bugs_free(a4w4_bug_shapes *out)
{
    for (int b = 0; b < A4W4_BUG_COUNT; b++) {
        free(out[b].shape);
        out[b].shape = NULL;
        out[b].n = out[b].cap = 0;
    }
}
