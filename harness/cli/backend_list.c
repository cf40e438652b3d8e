/* backend_list.c — `--backend a,b,...` read once for every command (backend_list.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "a4w4_quote.h"
#include "backend_list.h"
#include "contractfile.h"
#include "fsutil.h"
#include "mutants.h"
#include "registry.h"

int a4w4_backend_list_check(const a4w4_backend_list_opts *o, const a4w4_opt_list *list)
{
    if (!list->n) {
        a4w4_errorf("%s: --backend '%s' names no backend", o->cmd, list->text);
        return A4W4_EXIT_BADINPUT;
    }
    if (list->n > o->max) {
        a4w4_errorf("%s: --backend names more than %zu backends", o->cmd, o->max);
        return A4W4_EXIT_BADINPUT;
    }
    for (size_t i = 0; i < list->n; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(list->item[i], list->item[j])) {
                a4w4_errorf("%s: --backend names %s twice", o->cmd, list->item[i]);
                return A4W4_EXIT_BADINPUT;
            }
    return A4W4_EXIT_PASS;
}

void a4w4_backend_list_close(a4w4_backend *bk, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a4w4_backend_close(&bk[i]);
}

/* The default selection, with a notice per skipped type unless quiet. */
static size_t open_defaults(const a4w4_backend_list_opts *o, a4w4_backend *bk)
{
    char skipped[2048];
    size_t n = a4w4_backend_defaults(bk, o->max, skipped, sizeof skipped);
    if (skipped[0] && !o->quiet)
        for (char *save = NULL, *l = strtok_r(skipped, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save))
            fprintf(stderr, "a4w4check %s: notice: skipping backend %s\n", o->cmd, l);
    return n;
}

int a4w4_backend_list_open(const a4w4_backend_list_opts *o, const a4w4_opt_list *list,
                           a4w4_backend *bk, size_t *n)
{
    *n = 0;
    if (!list->text) {
        *n = open_defaults(o, bk);
        return A4W4_EXIT_PASS;
    }
    int rc = a4w4_backend_list_check(o, list);
    for (size_t i = 0; i < list->n && rc == A4W4_EXIT_PASS; i++) {
        char err[512];
        const a4w4_backend_type *mt = o->mutants ? a4w4_mutant_find(list->item[i]) : NULL;
        rc = mt ? a4w4_backend_open_type(mt, NULL, &bk[i], err, sizeof err)
                : a4w4_backend_open(list->item[i], &bk[i], err, sizeof err);
        if (rc) {
            a4w4_errorf("%s: %s", o->cmd, err);
            rc = a4w4_exit_code(rc);
            a4w4_backend_list_close(bk, i);
        } else {
            *n = i + 1;
        }
    }
    if (rc != A4W4_EXIT_PASS)
        *n = 0;
    return rc;
}

int a4w4_backend_list_check_items(const char *cmd, a4w4_backend *bk, size_t n,
                                  const a4w4_run_identity *id, const char *const *items,
                                  size_t nitems)
{
    for (size_t i = 0; i < n; i++) {
        char err[1024];
        if (bk[i].type->check_items &&
            bk[i].type->check_items(bk[i].ctx, id, items, nitems, err, sizeof err)) {
            a4w4_errorf("%s: %s", cmd, err);
            return A4W4_EXIT_BADINPUT;
        }
    }
    return A4W4_EXIT_PASS;
}

int a4w4_isolation_options(const char *cmd, int no_isolate, int timeout_s)
{
    if (no_isolate && timeout_s >= 0) {
        a4w4_errorf("%s: --timeout %d with --no-isolate: a plugin running in this process "
                    "cannot be stopped, so no timeout would be enforced", cmd, timeout_s);
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_plugin_isolation(!no_isolate, timeout_s);
    return A4W4_EXIT_PASS;
}

/* 1 when value is written as one contract text rather than a file name. */
static int contract_text(const char *value)
{
    return !strcmp(value, "exact") || !strcmp(value, "bounded") ||
           !strncmp(value, "ordered(", 8) || !strncmp(value, "bounded(", 8) ||
           !strncmp(value, "atomic(", 7) || !strncmp(value, "tree(", 5);
}

/* The backend of bk[0..n) whose name, followed by '=', starts spec (the longest such name:
 * a backend's argument may itself hold a '='), or NULL. */
static a4w4_backend *named(const char *spec, a4w4_backend *bk, size_t n)
{
    a4w4_backend *best = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t L = strlen(bk[i].name);
        if (!strncmp(spec, bk[i].name, L) && spec[L] == '=' &&
            (!best || L > strlen(best->name)))
            best = &bk[i];
    }
    return best;
}

/* One `--contract` value into b: parsed (a text) or read (a file). */
static int apply_one(const char *cmd, a4w4_backend *b, const char *value)
{
    char err[1024], shown[128];
    a4w4_contract_set set;
    a4w4_hstatus st;
    if (contract_text(value)) {
        a4w4_contract c;
        if (a4w4_contract_parse(value, &c, err, sizeof err)) {
            a4w4_errorf("%s: --contract %s=...: %s", cmd, a4w4_quote(b->name, shown, sizeof shown),
                        err);
            return A4W4_EXIT_BADINPUT;
        }
        st = a4w4_contract_set_single(&c, &set) ? A4W4_ST_NOMEM : A4W4_ST_OK;
        if (st == A4W4_ST_OK)
            st = a4w4_backend_override_contracts(b, &set, NULL, err, sizeof err);
    } else {
        st = a4w4_contract_file_read(value, &set, err, sizeof err);
        if (st == A4W4_ST_OK)
            st = a4w4_backend_override_contracts(b, &set, value, err, sizeof err);
    }
    a4w4_contract_set_free(&set);
    if (st != A4W4_ST_OK) {
        a4w4_errorf("%s: --contract %s=...: %s", cmd, a4w4_quote(b->name, shown, sizeof shown),
                    err);
        return a4w4_exit_code(st);
    }
    return A4W4_EXIT_PASS;
}

const char *const a4w4_code0_names[] = {"both", "2^-127", "2^-126", NULL};

int a4w4_backend_contracts_apply(const char *cmd, const a4w4_opt_strings *specs,
                                 a4w4_backend *bk, size_t n)
{
    for (size_t i = 0; i < specs->n; i++) {
        char shown[256];
        const char *spec = specs->v[i];
        a4w4_backend *b = named(spec, bk, n);
        if (!b) {
            char names[1024] = "";
            for (size_t j = 0; j < n; j++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", j ? ", " : "",
                         bk[j].name);
            a4w4_errorf("%s: --contract '%s': must be B=FILE or B=TEXT with B one of the selected "
                        "backends (%s)", cmd, a4w4_quote_ascii(spec, shown, sizeof shown), names);
            return A4W4_EXIT_BADINPUT;
        }
        for (size_t j = 0; j < i; j++)
            if (named(specs->v[j], bk, n) == b) {
                a4w4_errorf("%s: --contract names backend %s twice", cmd,
                            a4w4_quote(b->name, shown, sizeof shown));
                return A4W4_EXIT_BADINPUT;
            }
        int rc = apply_one(cmd, b, spec + strlen(b->name) + 1);
        if (rc != A4W4_EXIT_PASS)
            return rc;
    }
    return A4W4_EXIT_PASS;
}

/* 1 when the contract file at path has a line starting "# discovered by" (discover's); 0 for
 * a FIFO or a device (a4w4_fopen_regular: never blocks). */
static int discovered_file(const char *path)
{
    char err[64];
    int not_regular;
    FILE *f = a4w4_fopen_regular(path, &not_regular, err, sizeof err);
    char line[256];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = !strncmp(line, "# discovered by", 15);
    if (f)
        fclose(f);
    return found;
}

/* Where b's contract came from, as "contract_sources" records it. */
static void source_text(const a4w4_backend *b, char *buf, size_t len)
{
    if (!b->declared[0])
        snprintf(buf, len, "declared by the backend");
    else if (!b->contract_source[0])
        snprintf(buf, len, "given with --contract (text)");
    else
        snprintf(buf, len, "%s with --contract %s", discovered_file(b->contract_source)
                 ? "discovered by discover, given" : "given", b->contract_source);
}

/* b's departures from the reference numerics (io/contractfile.h) into buf; how many. */
static int departures_of(const a4w4_backend *b, char *buf, size_t len)
{
    a4w4_contract c;
    if (b->contracts.n)
        return a4w4_contract_set_departures(&b->contracts, buf, len);
    if (!a4w4_contract_parse(b->contract, &c, NULL, 0))
        return a4w4_contract_departures(&c, buf, len);
    buf[0] = 0;
    return 0;
}

/* "contract_sources" and "contract_departures" of bk[0..n) into header. */
static void contract_provenance_json(cJSON *header, const a4w4_backend *bk, size_t n)
{
    cJSON *src = cJSON_AddObjectToObject(header, "contract_sources"), *dep = NULL;
    for (size_t i = 0; i < n; i++) {
        char text[1024];
        if (!bk[i].type || !bk[i].type->run) /* byte checks: no contract */
            continue;
        source_text(&bk[i], text, sizeof text);
        cJSON_AddStringToObject(src, bk[i].name, text);
        if (!departures_of(&bk[i], text, sizeof text))
            continue;
        if (!dep)
            dep = cJSON_AddObjectToObject(header, "contract_departures");
        cJSON_AddStringToObject(dep, bk[i].name, text);
    }
}

void a4w4_backends_contracts_json(cJSON *header, const a4w4_backend *bk, size_t n)
{
    cJSON *bc = cJSON_AddObjectToObject(header, "contracts");
    cJSON *c0 = cJSON_AddObjectToObject(header, "e8m0_code0_declared");
    cJSON *ov = NULL;
    contract_provenance_json(header, bk, n);
    for (size_t i = 0; i < n; i++) {
        const a4w4_backend *b = &bk[i];
        if (b->code0_reading)
            cJSON_AddStringToObject(c0, b->name, a4w4_code0_names[b->code0_reading]);
        char *text = malloc(A4W4_CONTRACT_FILE_MAX);
        int single = !b->contracts.n || (b->contracts.n == 1 && !b->contracts.rules[0].npreds);
        if (single || !text ||
            a4w4_contract_set_format(&b->contracts, text, A4W4_CONTRACT_FILE_MAX) < 0)
            cJSON_AddStringToObject(bc, b->name, b->contract);
        else
            cJSON_AddStringToObject(bc, b->name, text);
        free(text);
        if (!b->declared[0])
            continue;
        if (!ov)
            ov = cJSON_AddObjectToObject(header, "contract_overrides");
        cJSON *o = cJSON_AddObjectToObject(ov, b->name);
        cJSON_AddStringToObject(o, "declared", b->declared);
        cJSON_AddStringToObject(o, "source", b->contract_source[0] ? b->contract_source : "text");
    }
}
