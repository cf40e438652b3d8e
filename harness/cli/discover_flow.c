/* discover_flow.c — the rounds of `discover` through a backend in this process, or as operand
 * bundles for an outside runner (discover_flow.h). */
#include "discover_flow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "a4w4check.h"
#include "casefile.h"
#include "discover_plan.h"
#include "discover_setup.h"
#include "fsutil.h"
#include "isolate.h"
#include "registry.h"
#include "stream.h"

/* The progress of a round on stderr: one line rewritten in place on a terminal; elsewhere (a
 * log, a pipe) whole lines, one per eighth of the round and one at its end. */
static void progress(void *ctx, size_t done, size_t total)
{
    const unsigned *round = ctx;
    static int tty = -1;
    if (tty < 0)
        tty = isatty(2);
    size_t step = tty ? 16 : (total / 8 > 16 ? total / 8 : 16);
    if (done != total && done % step != 0)
        return;
    fprintf(stderr, "%sa4w4check discover: round %u: %zu/%zu calls%s", tty ? "\r" : "", *round,
            done, total, tty && done != total ? "" : "\n");
}

/* Every round through the open backend b. */
static int run_rounds(a4w4_discovery *d, a4w4_backend *b, int quiet)
{
    char err[1024];
    size_t n;
    unsigned round;
    while (a4w4_discover_round(d, &n, &round)) {
        a4w4_hstatus st = a4w4_discover_run_round(d, b, NULL, quiet ? NULL : progress, &round,
                                                  err, sizeof err);
        if (st != A4W4_ST_OK) {
            a4w4_errorf("discover: round %u: %s", round, err);
            return st == A4W4_ST_NA ? A4W4_EXIT_INCOMPLETE : a4w4_exit_code(st);
        }
    }
    return A4W4_EXIT_PASS;
}

int a4w4_dflow_backend(a4w4_discovery *d, const char *backend, int quiet)
{
    char err[1024];
    a4w4_backend b;
    a4w4_hstatus st = a4w4_backend_open(backend, &b, err, sizeof err);
    if (st != A4W4_ST_OK) {
        a4w4_errorf("discover: %s", err);
        return a4w4_exit_code(st);
    }
    int rc = run_rounds(d, &b, quiet);
    a4w4_backend_close(&b);
    return rc;
}

/* ---- the shapes -------------------------------------------------------------------------- */

/* The shapes of a rule of K around *sh (a4w4_discover_expand): *sh and o->nshapes replaced,
 * *vo set. An exit code. */
static int expand(a4w4_discover_opts *o, a4w4_shape **sh, unsigned char **vo, size_t kstep)
{
    char err[512];
    a4w4_shape *x;
    size_t n;
    int rc = a4w4_discover_expand(*sh, o->nshapes, kstep, &x, &n, vo, err, sizeof err);
    if (rc == -1)
        a4w4_errorf("discover: --shapes: %s", err);
    if (rc)
        return A4W4_EXIT_BADINPUT;
    free(*sh);
    *sh = x;
    o->nshapes = n;
    o->validate_only = *vo;
    return A4W4_EXIT_PASS;
}

int a4w4_dflow_shapes(const char *shapes, const char *cases, const char *backend,
                      a4w4_discover_opts *o, a4w4_shape **sh, size_t **groups,
                      unsigned char **vo, size_t *requested)
{
    char err[1024];
    int dispatch = backend && !strcmp(backend, "hip-asm:dispatch");
    *vo = NULL;
    if (cases) {
        a4w4_hstatus st = a4w4_discover_shapes_from_file(cases, sh, &o->nshapes, err,
                                                         sizeof err);
        if (st != A4W4_ST_OK && st != A4W4_ST_NOMEM)
            a4w4_errorf("discover: --cases %s", err);
        if (st != A4W4_ST_OK)
            return A4W4_EXIT_BADINPUT;
    } else {
        const char *text = shapes ? shapes : "16x64x2048,256x64x2048";
        int rc = a4w4_discover_parse_shapes(text, sh, &o->nshapes);
        if (rc == -1)
            a4w4_errorf("discover: --shapes '%s': each shape is MxNxK with decimal M, N, K", text);
        if (rc)
            return A4W4_EXIT_BADINPUT;
        for (size_t i = 0; i < o->nshapes; i++) /* as run refuses it: nothing is allocated */
            if (a4w4_case_shape_rule((*sh)[i].M, (*sh)[i].N, (*sh)[i].K, err, sizeof err)) {
                a4w4_errorf("discover: --shapes: %s", err);
                return A4W4_EXIT_BADINPUT;
            }
    }
    *requested = o->nshapes;
    /* the ASM-layout backends take K % 256 == 0 only (the scale swizzle, contracts §3.2) */
    int asm_k = backend && (!strncmp(backend, "cpu-asm", 7) || !strncmp(backend, "hip-asm", 7));
    if (!dispatch && expand(o, sh, vo, asm_k ? 256 : 32))
        return A4W4_EXIT_BADINPUT;
    if (!(*groups = calloc(o->nshapes, sizeof **groups)))
        return A4W4_EXIT_BADINPUT;
    for (size_t i = 0; i < o->nshapes; i++)
        (*groups)[i] = i;
    if (dispatch) {
        int rc = a4w4_discover_dispatch_groups(*sh, o->nshapes, *groups, err, sizeof err);
        if (rc == -1)
            a4w4_errorf("discover: hip-asm:dispatch needs the dispatch tables: %s", err);
        if (rc)
            return A4W4_EXIT_BADINPUT;
    }
    return A4W4_EXIT_PASS;
}

/* ---- the plan file ------------------------------------------------------------------------ */

int a4w4_dflow_write_plan(const char *dir, const a4w4_discover_opts *o)
{
    char err[1024];
    if (a4w4_mkdir_p(dir, err, sizeof err)) {
        a4w4_errorf("discover: --write-probes %s", err);
        return A4W4_EXIT_IO;
    }
    if (a4w4_discover_plan_write(dir, o, A4W4_TOOL_VERSION, err, sizeof err)) {
        a4w4_errorf("discover: %s", err);
        return A4W4_EXIT_IO;
    }
    return A4W4_EXIT_PASS;
}

int a4w4_dflow_write_probes(const a4w4_discovery *d, const char *dir,
                            const a4w4_discover_opts *o)
{
    char r1[4200], err[1024];
    snprintf(r1, sizeof r1, "%s/r1", dir);
    int rc = A4W4_EXIT_PASS, had_dir = access(dir, F_OK) == 0;
    /* the round first, the plan last: a failure leaves no plan naming a round that is not
     * there (the round removes its own files), and a directory it made is removed */
    if (a4w4_discover_write_round(d, r1, A4W4_TOOL_VERSION, err, sizeof err)) {
        a4w4_errorf("discover: %s", err);
        rc = A4W4_EXIT_IO;
    } else if ((rc = a4w4_dflow_write_plan(dir, o)) != A4W4_EXIT_PASS) {
        a4w4_discover_remove_round(d, r1);
    }
    if (rc && !had_dir)
        rmdir(dir);
    if (!rc)
        printf("discover: round 1's probes are in %s; run the kernel on them, e.g.\n"
               "  python3 -m a4w4check.external --ops %s --out OUT/r1 --kernel NAME "
               "--contract exact\nthen: a4w4check discover --backend bundle:OUT --probes %s "
               "--out FILE\n", r1, r1, dir);
    return rc;
}

int a4w4_dflow_read_plan(const char *dir, a4w4_discover_opts *o, a4w4_shape **shapes,
                         size_t **groups, unsigned char **vonly)
{
    char err[8800];
    if (a4w4_discover_plan_read(dir, o, shapes, groups, vonly, err, sizeof err)) {
        a4w4_errorf("discover: --probes %s: %s", dir, err);
        return A4W4_EXIT_BADINPUT;
    }
    return 0;
}

/* ---- the runner ----------------------------------------------------------------------------- */

/* s with every ' written as '\'' , inside single quotes, into buf. */
static void quote(const char *s, char *buf, size_t len)
{
    size_t o = 0;
    if (o < len)
        buf[o++] = '\'';
    for (; *s && o + 5 < len; s++) {
        if (*s == '\'') {
            memcpy(buf + o, "'\\''", 4);
            o += 4;
        } else {
            buf[o++] = *s;
        }
    }
    if (o + 1 < len)
        buf[o++] = '\'';
    buf[o < len ? o : len - 1] = 0;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Round k's operands in DIR/r<k> (written unless already there with this round's hash). A
 * manifest there that cannot be read (a FIFO, too large, unreadable) is refused: exit 2. */
static int ensure_operands(a4w4_discovery *d, const char *dir, int quiet)
{
    char err[1024], man[4200];
    snprintf(man, sizeof man, "%s/manifest.json", dir);
    if (exists(man)) {
        char hash[32], why[4400], *text = a4w4_discover_read_json(man, why, sizeof why);
        if (!text) {
            a4w4_errorf("discover: --probes: %s", why);
            return A4W4_EXIT_BADINPUT;
        }
        a4w4_discover_round_hash(d, hash, sizeof hash);
        int same = strstr(text, hash) != NULL;
        free(text);
        if (same)
            return A4W4_EXIT_PASS;
    }
    if (!quiet)
        fprintf(stderr, "a4w4check discover: writing the probes to %s\n", dir);
    if (a4w4_discover_write_round(d, dir, A4W4_TOOL_VERSION, err, sizeof err)) {
        a4w4_errorf("discover: %s", err);
        return A4W4_EXIT_IO;
    }
    return A4W4_EXIT_PASS;
}

/* Read round k's outputs from out through a bundle: backend. */
static int read_outputs(a4w4_discovery *d, const char *out, unsigned round, int quiet)
{
    char spec[4200], err[1024], hash[32];
    snprintf(spec, sizeof spec, "bundle:%s", out);
    a4w4_backend b;
    a4w4_hstatus st = a4w4_backend_open(spec, &b, err, sizeof err);
    if (st != A4W4_ST_OK) {
        a4w4_errorf("discover: %s", err);
        return a4w4_exit_code(st);
    }
    a4w4_discover_round_hash(d, hash, sizeof hash);
    a4w4_run_identity id = {hash, A4W4_TOOL_VERSION};
    st = a4w4_discover_run_round(d, &b, &id, quiet ? NULL : progress, &round, err, sizeof err);
    a4w4_backend_close(&b);
    if (st != A4W4_ST_OK) {
        a4w4_errorf("discover: round %u outputs in %s: %s", round, out, err);
        return st == A4W4_ST_NA ? A4W4_EXIT_INCOMPLETE : a4w4_exit_code(st);
    }
    return A4W4_EXIT_PASS;
}

int a4w4_dflow_bundle(a4w4_discovery *d, const char *probes_dir, const char *out_dir,
                      const char *runner, int timeout_s, int quiet)
{
    size_t n;
    unsigned round;
    while (a4w4_discover_round(d, &n, &round)) {
        char ops[4096], out[4096], man[4200], qo[8300], qd[8300], cmd[20000];
        snprintf(ops, sizeof ops, "%s/r%u", probes_dir, round);
        snprintf(out, sizeof out, "%s/r%u", out_dir, round);
        snprintf(man, sizeof man, "%s/manifest.json", out);
        int rc = ensure_operands(d, ops, quiet);
        if (rc)
            return rc;
        if (runner) {
            quote(ops, qo, sizeof qo);
            quote(out, qd, sizeof qd);
            snprintf(cmd, sizeof cmd, "%s --ops %s --out %s", runner, qo, qd);
            if (!quiet)
                fprintf(stderr, "a4w4check discover: round %u: %s\n", round, cmd);
            char why[256];
            int st = a4w4_isolate_command(cmd, timeout_s, why, sizeof why);
            if (st != 0) {
                a4w4_errorf("discover: round %u: the runner %s (%s)", round, st == 124 ?
                            "timed out" : "failed", cmd);
                return st == 124 ? A4W4_EXIT_INCOMPLETE : A4W4_EXIT_BADINPUT;
            }
        }
        if (!exists(man)) {
            a4w4_errorf("discover: round %u's probes are in %s; run the kernel on them into %s "
                        "(e.g. python3 -m a4w4check.external --ops %s --out %s --kernel NAME) "
                        "and run this command again", round, ops, out, ops, out);
            return A4W4_EXIT_INCOMPLETE;
        }
        rc = read_outputs(d, out, round, quiet);
        if (rc)
            return rc;
    }
    return A4W4_EXIT_PASS;
}
