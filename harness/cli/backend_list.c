/* backend_list.c — `--backend a,b,...` read once for every command (backend_list.h). */
#include <stdio.h>
#include <string.h>

#include "a4w4check.h"
#include "backend_list.h"
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
