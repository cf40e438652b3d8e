/* registry.c — the backend table and instance handling (see registry.h). */
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"

#define MAX_TYPES 64

static const a4w4_backend_type *table[MAX_TYPES];
static size_t ntypes;

/* The table: CPU systems under test, the external ones, then the HIP ones when built. */
static void table_init(void)
{
    if (ntypes)
        return;
    static const a4w4_backend_type *const fixed[] = {&a4w4_backend_cpu_asm,
                                                     &a4w4_backend_cpu_fallback,
                                                     &a4w4_backend_bundle, &a4w4_backend_plugin};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        table[ntypes++] = fixed[i];
#ifdef A4W4_HAVE_GPU
    for (size_t i = 0; a4w4_backend_hip_types[i] && ntypes < MAX_TYPES; i++)
        table[ntypes++] = a4w4_backend_hip_types[i];
#endif
}

/* How many backend types the table holds (filled on the first call). */
static size_t type_count(void)
{
    table_init();
    return ntypes;
}

const a4w4_backend_type *const *a4w4_backend_types(size_t *count)
{
    *count = type_count();
    return table;
}

/* The text and S of b's contracts: a single unconditional rule is its canonical text (plain
 * "bounded" is recorded as bounded(1), contracts §4.1, so that every entry names the S its
 * bound was derived for); a shape-dependent set is "rules of SOURCE". */
static void describe_contracts(a4w4_backend *b)
{
    const a4w4_contract_set *set = &b->contracts;
    b->split = 1;
    if (set->n == 1 && set->rules[0].npreds == 0) {
        const a4w4_contract *c = &set->rules[0].contract;
        a4w4_contract_format(c, b->contract, sizeof b->contract);
        if (c->kind == A4W4_CONTRACT_ORDERED || c->kind == A4W4_CONTRACT_BOUNDED ||
            c->kind == A4W4_CONTRACT_ATOMIC)
            b->split = c->split;
    } else {
        snprintf(b->contract, sizeof b->contract, "rules of %s (%zu)",
                 b->contract_source[0] ? b->contract_source : "a contract set", set->n);
    }
}

/* b's contract from the text its type or prepare declared: parsed strictly (contracts §4.2),
 * a text of `when` lines as the file form's rules (a bundle's contract.txt of rules);
 * a type without GEMM outputs keeps its text ("bytes") and no rule. 0, or -1 with err. */
static int set_contract(a4w4_backend *b, const char *contract, char *err, size_t errlen)
{
    a4w4_contract c;
    char why[512];
    a4w4_contract_set_free(&b->contracts);
    if (!b->type->run) {
        snprintf(b->contract, sizeof b->contract, "%s", contract);
        b->split = 1;
        return 0;
    }
    int rules = a4w4_contract_text_is_rules(contract);
    if (!rules && a4w4_contract_parse(contract, &c, why, sizeof why)) {
        snprintf(err, errlen, "--backend %s: declared %s", b->name, why);
        return -1;
    }
    int rc = rules ? a4w4_contract_set_parse(contract, &b->contracts, why, sizeof why)
                   : a4w4_contract_set_single(&c, &b->contracts);
    if (rc) {
        snprintf(err, errlen, "--backend %s: declared %s", b->name,
                 rc == A4W4_ENOMEM ? "contract: out of memory" : why);
        return -1;
    }
    describe_contracts(b);
    return 0;
}

a4w4_hstatus a4w4_backend_override_contracts(a4w4_backend *b, const a4w4_contract_set *set,
                                             const char *source, char *err, size_t errlen)
{
    a4w4_contract_set copy;
    if (!b->type || !b->type->run) {
        snprintf(err, errlen, "--contract %s: backend %s has no GEMM outputs to judge "
                 "(its results are compared byte for byte)", b->name, b->name);
        return A4W4_ST_BADINPUT;
    }
    if (a4w4_contract_set_copy(set, &copy)) {
        snprintf(err, errlen, "--contract %s: out of memory", b->name);
        return A4W4_ST_NOMEM;
    }
    if (!b->declared[0])
        snprintf(b->declared, sizeof b->declared, "%s", b->contract);
    a4w4_contract_set_free(&b->contracts);
    b->contracts = copy;
    snprintf(b->contract_source, sizeof b->contract_source, "%s", source ? source : "");
    describe_contracts(b);
    return A4W4_ST_OK;
}

a4w4_hstatus a4w4_backend_open(const char *spec, a4w4_backend *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    const a4w4_backend_type *t = NULL;
    for (size_t i = 0; i < type_count(); i++)
        if (strlen(table[i]->name) == nlen && !strncmp(table[i]->name, spec, nlen))
            t = table[i];
#ifndef A4W4_HAVE_GPU
    if (!t && !strncmp(spec, "hip-", 4)) {
        snprintf(err, errlen, "--backend %s: this a4w4check was built without GPU support "
                 "(configure with -DA4W4_GPU=nvidia or amd); no GPU backend can run", spec);
        return A4W4_ST_NOGPU;
    }
#endif
    if (!t) {
        char names[512] = "";
        for (size_t i = 0; i < type_count(); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s%s",
                     i ? ", " : "", table[i]->name, table[i]->needs_arg ? ":ARG" : "");
        snprintf(err, errlen, "--backend '%s' is not a registered backend (%s)", spec, names);
        return A4W4_ST_BADINPUT;
    }
    return a4w4_backend_open_type(t, colon ? colon + 1 : NULL, b, err, errlen);
}

a4w4_hstatus a4w4_backend_open_type(const a4w4_backend_type *t, const char *arg,
                                    a4w4_backend *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    if (t->needs_arg && (!arg || !*arg)) {
        snprintf(err, errlen, "--backend %s needs an argument: %s:ARG", t->name, t->name);
        return A4W4_ST_BADINPUT;
    }
    if (!t->needs_arg && arg) {
        snprintf(err, errlen, "--backend %s takes no argument (got '%s:%s')", t->name, t->name,
                 arg);
        return A4W4_ST_BADINPUT;
    }
    char why[256] = "";
    if (t->available && t->available(why, sizeof why)) {
        snprintf(err, errlen, "--backend %s: %s", t->name, why);
        return t->gpu ? A4W4_ST_NOGPU : A4W4_ST_BADINPUT;
    }
    b->type = t;
    if (arg)
        snprintf(b->name, sizeof b->name, "%s:%s", t->name, arg);
    else
        snprintf(b->name, sizeof b->name, "%s", t->name);
    b->asm_layout = t->asm_layout;
    char contract[A4W4_CONTRACT_MAX];
    snprintf(contract, sizeof contract, "%s", t->contract);
    if (t->prepare &&
        t->prepare(arg, &b->ctx, contract, sizeof contract, &b->asm_layout, err, errlen)) {
        memset(b, 0, sizeof *b);
        return A4W4_ST_BADINPUT;
    }
    if (set_contract(b, contract, err, errlen)) {
        a4w4_backend_close(b);
        return A4W4_ST_BADINPUT;
    }
    b->code0_reading = t->code0 ? t->code0(b->ctx) : t->code0_reading;
    return A4W4_ST_OK;
}

void a4w4_backend_close(a4w4_backend *b)
{
    if (b->type && b->type->release)
        b->type->release(b->ctx);
    a4w4_contract_set_free(&b->contracts);
    memset(b, 0, sizeof *b);
}

size_t a4w4_backend_defaults(a4w4_backend *out, size_t max, char *skipped, size_t skippedlen)
{
    size_t n = 0;
    if (skipped && skippedlen)
        skipped[0] = 0;
    for (size_t i = 0; i < type_count() && n < max; i++) {
        if (table[i]->needs_arg)
            continue;
        char why[256] = "";
        if (table[i]->available && table[i]->available(why, sizeof why)) {
            if (skipped)
                snprintf(skipped + strlen(skipped), skippedlen - strlen(skipped), "%s: %s\n",
                         table[i]->name, why);
            continue;
        }
        char err[256];
        if (a4w4_backend_open(table[i]->name, &out[n], err, sizeof err) == A4W4_ST_OK)
            n++;
    }
    return n;
}

const a4w4_devjudge *a4w4_backend_devjudge(char *why, size_t whylen)
{
#if defined(A4W4_HAVE_GPU) && defined(A4W4_HAVE_JUDGE_GPU)
    return a4w4_hip_devjudge(why, whylen);
#else
    snprintf(why, whylen, "host (this build has no GPU judge)");
    return NULL;
#endif
}
