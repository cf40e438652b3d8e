/* plugin.c — the "plugin" backend type (`--backend plugin:/path/libmy.so`): a shared
 * library exporting the a4w4 plugin ABI (a4w4_plugin.h), so a real kernel (AITER's gemm_a4w4
 * on an MI355X) runs under the harness without changing it.
 *
 * Isolation (on unless a4w4_plugin_isolation(0, ...)): the plugin's code runs in children
 * (engine/isolate.h) so a crash or hang fails that entry and the run goes on. At open, a
 * probe child loads, queries, inits and finis it (a crash there refuses the backend); the
 * parent then only dlopens and queries it for its metadata and never calls init. Each gemm
 * call forks a child that is one instance (init, gemm, fini) writing into shared memory;
 * it returns A4W4_RUN_CRASHED (signal or nonzero exit) or A4W4_RUN_TIMEOUT past the
 * deadline (a4w4_plugin_timeout). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "a4w4_formats.h"
#include "a4w4_layout.h"
#include "a4w4_plugin.h"
#include "a4w4_quote.h"
#include "registry.h"
#include "bundle.h"
#include "integrity.h"
#include "isolate.h"

typedef struct {
    void *handle;
    const a4w4_plugin_info *info;
    void *state;
    char name[128]; /* the plugin's display name */
    pthread_mutex_t lock; /* serializes gemm calls into this instance (ABI "Threading") */
    int isolated;         /* 1: init / gemm / fini run in a child per call (engine/isolate.h) */
    char msg[512];        /* the last gemm's message (under lock) */
    int code0;            /* the E8M0 code-0 reading it declares (A4W4_CODE0_*, 0: none) */
} plugin_ctx;

/* ISO C forbids converting an object pointer to a function pointer; dlsym returns one. */
static a4w4_plugin_query_fn sym_to_fn(void *sym)
{
    a4w4_plugin_query_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

/* dlopen arg (a bare file name means ./name: dlopen would otherwise search the library path)
 * and look up the query symbol: the handle, or NULL with err set. */
static void *plugin_open(const char *arg, void **sym, char *err, size_t errlen)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s%s", strchr(arg, '/') ? "" : "./", arg) >=
        (int)sizeof path) {
        snprintf(err, errlen, "plugin %.200s...: path too long", arg);
        return NULL;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "plugin %s: file not found (%s)", arg, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "plugin %s: not a regular file (a plugin is a shared library)", arg);
        return NULL;
    }
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, errlen, "plugin %s: not a loadable shared object (dlopen: %s)", arg,
                 e ? e : "unknown error");
        return NULL;
    }
    dlerror();
    *sym = dlsym(h, A4W4_PLUGIN_QUERY_SYMBOL);
    if (!*sym) {
        snprintf(err, errlen, "plugin %s: does not export " A4W4_PLUGIN_QUERY_SYMBOL
                 "() (the plugin ABI, harness/backends/a4w4_plugin.h)", arg);
        dlclose(h);
        return NULL;
    }
    return h;
}

/* What is wrong with the plugin's info struct (why is scratch for the text), or NULL. */
static const char *info_problem(const a4w4_plugin_info *info, size_t contract_len, char *why,
                                size_t whylen)
{
    if (!info)
        return A4W4_PLUGIN_QUERY_SYMBOL "() returned NULL (the plugin refuses to load)";
    if (info->abi_version != A4W4_PLUGIN_ABI_VERSION) {
        snprintf(why, whylen, "plugin ABI version %u, this harness speaks version %u "
                 "(rebuild it against harness/backends/a4w4_plugin.h)", (unsigned)info->abi_version,
                 (unsigned)A4W4_PLUGIN_ABI_VERSION);
        return why;
    }
    if (info->contract && a4w4_contract_text_is_rules(info->contract)) {
        a4w4_contract_set set; /* the set parser's line says what is wrong with it */
        char rule[300];
        int rc = a4w4_contract_set_parse(info->contract, &set, rule, sizeof rule);
        a4w4_contract_set_free(&set);
        if (rc == A4W4_EINVAL) {
            snprintf(why, whylen, "declared rule set (contracts §4.2): %.200s", rule);
            return why;
        }
    }
    if (!info->contract)
        return "declares no contract (its info's contract is NULL): declare the order its kernel "
               "keeps, ordered(1), ordered(S), exact, bounded(S) or tree(key=value,...), or "
               "find it with `a4w4check discover` (contracts §4.2)";
    if (!a4w4_contract_valid(info->contract) ||
        strlen(info->contract) >= contract_len) {
        char shown[44], detail[240] = ""; /* the declared text, cut at 40 bytes, one line */
        a4w4_contract c; /* one line: the parser's reason names the part that is wrong */
        if (!a4w4_contract_text_is_rules(info->contract) &&
            a4w4_contract_parse(info->contract, &c, detail, sizeof detail) != A4W4_OK) {
            snprintf(why, whylen, "declared %s (contracts §4.2)", detail);
            return why;
        }
        snprintf(why, whylen, "contract '%.40s' is not one of ordered(1), ordered(S) or "
                 "bounded(S) with S in 1..65536, exact, bounded, tree(key=value,...) "
                 "(contracts §4.2)", a4w4_quote(info->contract, shown, sizeof shown));
        return why;
    }
    if (!info->gemm)
        return "the info struct has no gemm callback";
    if (info->asm_layout != 0 && info->asm_layout != 1) {
        snprintf(why, whylen, "asm_layout is %d, must be 0 or 1", info->asm_layout);
        return why;
    }
    return NULL;
}

/* The E8M0 code-0 reading plugin h declares through the optional a4w4_plugin_e8m0_code0()
 * (contracts §1) into *reading (A4W4_CODE0_*; BOTH when it exports none: an ABI 1 plugin
 * built before the symbol existed stays undeclared). NULL, or what is wrong (why is scratch). */
static const char *code0_problem(void *h, int *reading, char *why, size_t whylen)
{
    *reading = A4W4_CODE0_BOTH;
    dlerror();
    void *sym = dlsym(h, A4W4_PLUGIN_E8M0_CODE0_SYMBOL);
    if (!sym)
        return NULL;
    a4w4_plugin_e8m0_code0_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    const char *r = fn();
    if (r && !strcmp(r, "2^-127"))
        *reading = A4W4_CODE0_OCP;
    else if (r && !strcmp(r, "2^-126"))
        *reading = A4W4_CODE0_DRIVER;
    else {
        char shown[44];
        snprintf(why, whylen, A4W4_PLUGIN_E8M0_CODE0_SYMBOL "() returned '%.40s', not \"2^-127\" "
                 "or \"2^-126\" (contracts §1)", r ? a4w4_quote(r, shown, sizeof shown) : "NULL");
        return why;
    }
    return NULL;
}

/* A context for the opened plugin h, its init called unless isolated (then every call's
 * child makes its own instance): the context, or NULL with err set (h is then closed). */
static plugin_ctx *plugin_instance(const char *arg, void *h, const a4w4_plugin_info *info,
                                   int isolated, char *err, size_t errlen)
{
    plugin_ctx *c = calloc(1, sizeof *c);
    if (!c || pthread_mutex_init(&c->lock, NULL)) {
        free(c);
        dlclose(h);
        snprintf(err, errlen, "plugin %s: out of memory", arg);
        return NULL;
    }
    c->handle = h;
    c->info = info;
    c->isolated = isolated;
    const char *base = strrchr(arg, '/');
    /* the plugin's own text, quoted: a name or message with a line break or a byte that is
     * no printable ASCII would otherwise reach the one-line errors and results.json (whose
     * strings must be UTF-8) as it is */
    a4w4_quote_ascii(info->name && *info->name ? info->name : base ? base + 1 : arg, c->name,
                     sizeof c->name);
    if (info->init && !isolated) {
        char msg[256] = "", shown[256];
        int rc = info->init(&c->state, msg, sizeof msg);
        msg[sizeof msg - 1] = '\0'; /* a plugin that breaks the ABI's message rule */
        if (rc != 0) {
            snprintf(err, errlen, "plugin %s: init failed (%d): %s", arg, rc,
                     *msg ? a4w4_quote_ascii(msg, shown, sizeof shown) : "no message");
            pthread_mutex_destroy(&c->lock);
            free(c);
            dlclose(h);
            return NULL;
        }
    }
    return c;
}

/* Isolation settings (a4w4_plugin_isolation): on by default, automatic deadline. */
static int iso_on = 1;
static double iso_timeout = -1;

void a4w4_plugin_isolation(int on, double timeout_s)
{
    iso_on = on;
    iso_timeout = timeout_s;
}

double a4w4_plugin_timeout(size_t nrows, size_t ncols, size_t K)
{
    if (iso_timeout >= 0)
        return iso_timeout;
    return A4W4_PLUGIN_TIMEOUT_BASE_S + (double)nrows * (double)ncols * (double)K / 1e9;
}

/* What an isolated child hands back through shared memory (its outputs follow it). */
typedef struct {
    int rc;      /* gemm's return, or the probe's 0 / -1 */
    int stage;   /* where it stopped: 0 query/open, 1 init, 2 gemm done */
    char msg[512];
    char breach[256]; /* the child's integrity check after gemm (engine/integrity.h) */
} iso_reply;

#define ISO_HDR ((sizeof(iso_reply) + 63) / 64 * 64)

/* The probe child: open, query, validate, init and fini the plugin named arg, so that a
 * plugin whose loading crashes or hangs is refused instead of killing the harness. */
typedef struct {
    const char *arg;
    size_t contract_len;
    iso_reply *r;
} probe_job;

static int probe_child(void *v)
{
    probe_job *j = v;
    void *sym = NULL, *state = NULL;
    j->r->rc = -1;
    void *h = plugin_open(j->arg, &sym, j->r->msg, sizeof j->r->msg);
    if (!h)
        return 0;
    const a4w4_plugin_info *info = sym_to_fn(sym)();
    char why[256] = "";
    int code0;
    const char *bad = info_problem(info, j->contract_len, why, sizeof why);
    if (!bad)
        bad = code0_problem(h, &code0, why, sizeof why);
    if (bad) {
        snprintf(j->r->msg, sizeof j->r->msg, "plugin %s: %s", j->arg, bad);
        return 0;
    }
    j->r->stage = 1;
    if (info->init) {
        char m[256] = "";
        int rc = info->init(&state, m, sizeof m);
        if (rc != 0) {
            m[sizeof m - 1] = '\0';
            char shown[256];
            snprintf(j->r->msg, sizeof j->r->msg, "plugin %s: init failed (%d): %s", j->arg, rc,
                     *m ? a4w4_quote_ascii(m, shown, sizeof shown) : "no message");
            return 0;
        }
        if (info->fini)
            info->fini(state);
    }
    j->r->rc = 0;
    return 0;
}

/* Run probe_child for arg in a child: 0, or -1 with err (a crash, hang or exit names the
 * stage: "loading" or "init"). */
static int probe_isolated(const char *arg, size_t contract_len, char *err, size_t errlen)
{
    iso_reply *r = a4w4_shared_alloc(sizeof *r);
    if (!r) {
        snprintf(err, errlen, "plugin %s: out of memory (shared memory for the probe)", arg);
        return -1;
    }
    probe_job j = {arg, contract_len, r};
    char why[160];
    double t = iso_timeout >= 0 ? iso_timeout : A4W4_PLUGIN_TIMEOUT_BASE_S;
    a4w4_iso_status st = a4w4_isolate_run(probe_child, &j, t, why, sizeof why);
    int rc = 0;
    if (st != A4W4_ISO_OK) {
        snprintf(err, errlen, "plugin %s: %s %s: %s", arg, r->stage ? "init" : "loading",
                 st == A4W4_ISO_TIMEOUT ? "hung" : st == A4W4_ISO_ERROR ? "not isolated"
                                                                        : "crashed", why);
        rc = -1;
    } else if (r->rc != 0) {
        r->msg[sizeof r->msg - 1] = '\0';
        snprintf(err, errlen, "%s", r->msg);
        rc = -1;
    }
    a4w4_shared_free(r, sizeof *r);
    return rc;
}

static int plugin_prepare(const char *arg, void **vctx, char *contract, size_t contract_len,
                          int *asm_layout, char *err, size_t errlen)
{
    int isolated = iso_on;
    if (isolated && probe_isolated(arg, contract_len, err, errlen))
        return -1;
    void *sym = NULL;
    void *h = plugin_open(arg, &sym, err, errlen);
    if (!h)
        return -1;
    const a4w4_plugin_info *info = sym_to_fn(sym)();
    char why[256] = "";
    int code0;
    const char *bad = info_problem(info, contract_len, why, sizeof why);
    if (!bad)
        bad = code0_problem(h, &code0, why, sizeof why);
    if (bad) {
        snprintf(err, errlen, "plugin %s: %s", arg, bad);
        dlclose(h);
        return -1;
    }
    plugin_ctx *c = plugin_instance(arg, h, info, isolated, err, errlen);
    if (!c)
        return -1;
    c->code0 = code0;
    snprintf(contract, contract_len, "%s", info->contract);
    *asm_layout = info->asm_layout;
    *vctx = c;
    return 0;
}

/* One gemm in a child: its own instance (init, gemm, fini), outputs into shared memory. live
 * is the guarded output region the plugin writes (span values, y inside it), snap its copy
 * as gemm returned: the outputs the harness judges. */
typedef struct {
    const a4w4_plugin_info *info;
    a4w4_plugin_gemm_args *g;
    iso_reply *r;
    const a4w4_run_args *a;
    uint16_t *live, *snap;
    size_t span;
} gemm_job;

static int gemm_child(void *v)
{
    gemm_job *j = v;
    void *state = NULL;
    if (j->info->init) {
        int rc = j->info->init(&state, j->r->msg, sizeof j->r->msg);
        if (rc != 0) {
            j->r->rc = rc;
            return 0;
        }
    }
    j->r->stage = 1;
    j->r->rc = j->info->gemm(state, j->g);
    j->r->stage = 2;
    memcpy(j->snap, j->live, j->span * sizeof *j->snap);
    /* the plugin's writes into its operands land in this child's copy: check them here */
    if (j->a->inputs)
        a4w4_case_tampered(j->a->d, j->a->s, j->a->inputs, j->r->breach, sizeof j->r->breach);
    if (j->info->fini)
        j->info->fini(state);
    return 0;
}

/* After an isolated gemm: the outputs (guards included) as gemm returned them go back to the
 * caller, and a->breach gets the child's integrity finding and any output the plugin's code
 * still changed after gemm returned (work left running: a side thread or stream). */
static void gemm_outputs_back(const gemm_job *j, const a4w4_run_args *a)
{
    size_t late = 0;
    for (size_t k = 0; k < j->span; k++)
        late += j->live[k] != j->snap[k];
    memcpy(a->y - a->y_before, j->snap, j->span * sizeof *j->snap);
    if (!a->breach)
        return;
    j->r->breach[sizeof j->r->breach - 1] = '\0';
    snprintf(a->breach, a->breachlen, "%s%s", j->r->breach, j->r->breach[0] && late ? "; " : "");
    if (late) {
        size_t L = strlen(a->breach);
        snprintf(a->breach + L, a->breachlen - L, "%zu output value%s changed after gemm "
                 "returned (work still running at return: a side thread or stream)", late,
                 late == 1 ? "" : "s");
    }
}

/* g's gemm in a child with the deadline of the case; y (n outputs) poisoned on entry. Returns
 * the plugin's code in *prc, or a harness status (A4W4_RUN_CRASHED, _TIMEOUT, an error)
 * with a->why set. */
static int gemm_isolated(plugin_ctx *c, a4w4_plugin_gemm_args *g, const a4w4_run_args *a,
                         int *prc)
{
    size_t n = g->nrows * g->ncols, span = a->y_before + n + a->y_after;
    size_t bytes = ISO_HDR + 2 * span * sizeof(uint16_t);
    unsigned char *shm = a4w4_shared_alloc(bytes);
    if (!shm) {
        snprintf(a->why, a->whylen, "plugin %s: no shared memory for %zu outputs", c->name, n);
        return A4W4_ENOMEM;
    }
    iso_reply *r = (iso_reply *)shm;
    uint16_t *live = (uint16_t *)(shm + ISO_HDR), *y = live + a->y_before;
    memcpy(live, a->y - a->y_before, span * sizeof *live); /* y and its poisoned guards */
    g->y = y;
    g->msg = r->msg;
    g->msglen = sizeof r->msg;
    gemm_job j = {c->info, g, r, a, live, live + span, span};
    char why[160], shown[512];
    double t = a4w4_plugin_timeout(g->nrows, g->ncols, g->K);
    a4w4_iso_status st = a4w4_isolate_run(gemm_child, &j, t, why, sizeof why);
    int rc = A4W4_OK;
    r->msg[sizeof r->msg - 1] = '\0';
    if (st == A4W4_ISO_OK && r->stage == 0) {
        snprintf(a->why, a->whylen, "plugin %s: init failed (%d) in the case's child: %s",
                 c->name, r->rc, *r->msg ? a4w4_quote_ascii(r->msg, shown, sizeof shown)
                                         : "no message");
        rc = A4W4_EINVAL;
    } else if (st == A4W4_ISO_OK && r->stage == 1) {
        snprintf(a->why, a->whylen, "plugin %s crashed: its child exited 0 inside gemm "
                 "(exit() in the plugin)", c->name);
        rc = A4W4_RUN_CRASHED;
    } else if (st == A4W4_ISO_OK) {
        gemm_outputs_back(&j, a);
        snprintf(c->msg, sizeof c->msg, "%s", r->msg);
        *prc = r->rc;
    } else {
        snprintf(a->why, a->whylen, "plugin %s %s: %s%s", c->name,
                 st == A4W4_ISO_TIMEOUT ? "hung" : st == A4W4_ISO_ERROR ? "not run" : "crashed",
                 why, r->stage == 0 ? " (in init)" : r->stage == 2 ? " (in fini)" : "");
        rc = st == A4W4_ISO_TIMEOUT ? A4W4_RUN_TIMEOUT
             : st == A4W4_ISO_ERROR ? A4W4_EINVAL : A4W4_RUN_CRASHED;
    }
    a4w4_shared_free(shm, bytes);
    return rc;
}

/* The plugin's arguments for run a (its case, sample and outputs y). */
static void plugin_args(const a4w4_run_args *a, a4w4_plugin_gemm_args *g)
{
    const a4w4_case_data *d = a->d;
    const a4w4_sample *s = a->s;
    int all_r = s->full || !s->rows, all_c = s->full || !s->cols;
    *g = (a4w4_plugin_gemm_args){
        .M = d->M, .N = d->N, .K = d->K,
        .a_fp4 = d->a_fp4.data, .a_scale = d->a_scale.data,
        .a_scale_shuffled = d->a_scale_shuffled.data,
        .w_fp4 = d->w_fp4.data, .w_scale = d->w_scale.data,
        .w_fp4_shuffled = d->w_fp4_shuffled.data,
        .w_scale_swizzled = d->w_scale_swizzled.data,
        .rows = all_r ? NULL : s->rows, .nrows = all_r ? d->M : s->nrows,
        .cols = all_c ? NULL : s->cols, .ncols = all_c ? d->N : s->ncols,
        .y = a->y,
    };
    if (g->a_scale_shuffled) {
        g->a_scale_rows_padded = a4w4_act_scale_padded_rows(d->M);
        g->a_scale_cols_padded = a4w4_act_scale_padded_cols(d->K / 32);
    }
}

/* The harness status of the plugin's gemm return rc with message msg (a->why set). */
static int plugin_status(const plugin_ctx *c, int rc, const char *raw, const a4w4_run_args *a)
{
    if (rc == A4W4_PLUGIN_OK)
        return A4W4_OK;
    char shown[512];
    const char *msg = *raw ? a4w4_quote_ascii(raw, shown, sizeof shown) : "";
    if (rc == A4W4_PLUGIN_NOT_APPLICABLE) {
        snprintf(a->why, a->whylen, "%s", *msg ? msg : "the plugin says not applicable (no reason given)");
        return A4W4_EUNSUPPORTED;
    }
    snprintf(a->why, a->whylen, "plugin %s: gemm %s %d: %s", c->name,
             rc < 0 ? "failed with" : "returned the undefined code", rc,
             *msg ? msg : "no message");
    return A4W4_EINVAL;
}

static int plugin_run(void *vctx, const a4w4_run_args *a)
{
    plugin_ctx *c = vctx;
    a4w4_plugin_gemm_args g;
    plugin_args(a, &g);
    pthread_mutex_lock(&c->lock);
    int rc = 0, st = A4W4_OK;
    c->msg[0] = '\0';
    if (c->isolated) {
        st = gemm_isolated(c, &g, a, &rc);
    } else {
        g.msg = c->msg;
        g.msglen = sizeof c->msg;
        rc = c->info->gemm(c->state, &g);
    }
    char msg[512];
    c->msg[sizeof c->msg - 1] = '\0';
    snprintf(msg, sizeof msg, "%s", c->msg);
    pthread_mutex_unlock(&c->lock);
    return st != A4W4_OK ? st : plugin_status(c, rc, msg, a);
}

/* ---- the call sequence (engine/statecheck.h): several calls in one instance ------------- */

#define SEQ_MAX 16

/* What the sequence's child hands back: how many gemm calls returned, their codes, the
 * message of the last one, and where it stopped (0 init, 1 in a gemm, 2 past every gemm). */
typedef struct {
    int done, stage, init_rc;
    int rc[SEQ_MAX];
    char msg[512];
    char breach[SEQ_MAX][192]; /* each call's integrity finding (engine/integrity.h) */
} seq_reply;

typedef struct {
    const a4w4_plugin_info *info;
    a4w4_plugin_gemm_args *g; /* [n], y already in shared memory */
    const a4w4_run_args *calls;
    size_t n;
    seq_reply *r;
} seq_job;

/* After call a's gemm: the plugin's writes into its operands (where they land: the child's
 * copy when isolated) into breach. */
static void seq_tampered(const a4w4_run_args *a, char *breach, size_t len)
{
    breach[0] = '\0';
    if (a->inputs)
        a4w4_case_tampered(a->d, a->s, a->inputs, breach, len);
}

static int seq_child(void *v)
{
    seq_job *j = v;
    void *state = NULL;
    if (j->info->init && (j->r->init_rc = j->info->init(&state, j->r->msg, sizeof j->r->msg)))
        return 0;
    j->r->stage = 1;
    for (size_t i = 0; i < j->n; i++) {
        j->g[i].msg = j->r->msg;
        j->g[i].msglen = sizeof j->r->msg;
        j->r->msg[0] = '\0';
        j->r->rc[i] = j->info->gemm(state, &j->g[i]);
        seq_tampered(&j->calls[i], j->r->breach[i], sizeof j->r->breach[i]);
        j->r->done = (int)i + 1;
    }
    j->r->stage = 2;
    if (j->info->fini)
        j->info->fini(state);
    return 0;
}

/* Shared memory for the child of a sequence: the reply, then each call's outputs with their
 * poisoned guards (as the caller's); g[i].y set into it. Its size into *bytes. */
static unsigned char *seq_shared(const a4w4_run_args *calls, size_t n, a4w4_plugin_gemm_args *g,
                                 size_t *bytes)
{
    size_t off = (sizeof(seq_reply) + 63) / 64 * 64, at[SEQ_MAX];
    for (size_t i = 0; i < n; i++) {
        at[i] = off;
        off += (calls[i].y_before + g[i].nrows * g[i].ncols + calls[i].y_after) * 2;
        off = (off + 63) / 64 * 64;
    }
    unsigned char *shm = a4w4_shared_alloc(off);
    for (size_t i = 0; shm && i < n; i++) {
        size_t span = calls[i].y_before + g[i].nrows * g[i].ncols + calls[i].y_after;
        memcpy(shm + at[i], calls[i].y - calls[i].y_before, span * 2);
        g[i].y = (uint16_t *)(shm + at[i]) + calls[i].y_before;
    }
    *bytes = off;
    return shm;
}

/* calls[0..n) in one child: init, every gemm, fini; statuses into rcs (see backend.h). */
static int seq_isolated(plugin_ctx *c, const a4w4_run_args *calls, size_t n,
                        a4w4_plugin_gemm_args *g, int *rcs)
{
    size_t bytes;
    unsigned char *shm = seq_shared(calls, n, g, &bytes);
    if (!shm)
        return A4W4_ENOMEM;
    seq_reply *r = (seq_reply *)shm;
    double t = 0;
    for (size_t i = 0; i < n; i++)
        t += a4w4_plugin_timeout(g[i].nrows, g[i].ncols, g[i].K);
    seq_job j = {c->info, g, calls, n, r};
    char why[160];
    a4w4_iso_status st = a4w4_isolate_run(seq_child, &j, t, why, sizeof why);
    r->msg[sizeof r->msg - 1] = '\0';
    for (size_t i = 0; i < n; i++) {
        const a4w4_run_args *a = &calls[i];
        size_t span = a->y_before + g[i].nrows * g[i].ncols + a->y_after;
        memcpy(a->y - a->y_before, g[i].y - a->y_before, span * 2);
        if ((int)i < r->done && a->breach) {
            r->breach[i][sizeof r->breach[i] - 1] = '\0';
            snprintf(a->breach, a->breachlen, "%s", r->breach[i]);
        }
        if ((int)i < r->done)
            rcs[i] = plugin_status(c, r->rc[i], (int)i + 1 == r->done ? r->msg : "", a);
        else if ((int)i == r->done && st != A4W4_ISO_OK) {
            snprintf(a->why, a->whylen, "plugin %s %s: %s%s", c->name,
                     st == A4W4_ISO_TIMEOUT ? "hung" : "crashed", why,
                     r->stage == 0 ? " (in init)" : "");
            rcs[i] = st == A4W4_ISO_TIMEOUT ? A4W4_RUN_TIMEOUT : A4W4_RUN_CRASHED;
        } else if ((int)i == r->done && r->stage == 0) {
            char shown[512];
            snprintf(a->why, a->whylen, "plugin %s: init failed (%d) in the sequence's child: "
                     "%s", c->name, r->init_rc,
                     *r->msg ? a4w4_quote_ascii(r->msg, shown, sizeof shown) : "no message");
            rcs[i] = A4W4_EINVAL;
        } else {
            snprintf(a->why, a->whylen, "not called: an earlier call of the sequence ended it");
            rcs[i] = A4W4_RUN_SKIP;
        }
    }
    a4w4_shared_free(shm, bytes);
    return A4W4_OK;
}

static int plugin_run_sequence(void *vctx, const a4w4_run_args *calls, size_t n, int *rcs)
{
    plugin_ctx *c = vctx;
    a4w4_plugin_gemm_args g[SEQ_MAX];
    if (n > SEQ_MAX)
        return A4W4_EINVAL;
    for (size_t i = 0; i < n; i++)
        plugin_args(&calls[i], &g[i]);
    pthread_mutex_lock(&c->lock);
    int st = A4W4_OK;
    if (c->isolated)
        st = seq_isolated(c, calls, n, g, rcs);
    else
        for (size_t i = 0; i < n; i++) { /* this instance, after the run's other calls */
            c->msg[0] = '\0';
            g[i].msg = c->msg;
            g[i].msglen = sizeof c->msg;
            int rc = c->info->gemm(c->state, &g[i]);
            if (calls[i].breach)
                seq_tampered(&calls[i], calls[i].breach, calls[i].breachlen);
            c->msg[sizeof c->msg - 1] = '\0';
            rcs[i] = plugin_status(c, rc, c->msg, &calls[i]);
        }
    pthread_mutex_unlock(&c->lock);
    return st;
}

static void plugin_release(void *vctx)
{
    plugin_ctx *c = vctx;
    if (!c)
        return;
    if (!c->isolated && c->info->fini)
        c->info->fini(c->state);
    pthread_mutex_destroy(&c->lock);
    dlclose(c->handle);
    free(c);
}

static int plugin_code0(void *vctx)
{
    const plugin_ctx *c = vctx;
    return c ? c->code0 : A4W4_CODE0_BOTH;
}

const a4w4_backend_type a4w4_backend_plugin = {
    .name = "plugin",
    .what = "a shared library exporting the a4w4 plugin ABI (harness/backends/a4w4_plugin.h), e.g. AITER's gemm_a4w4",
    .contract = "ordered(1)",
    .needs_arg = 1,
    .arg_is_library = 1,
    .thread_safe = 1, /* plugin_run serializes the calls into one instance itself (ABI "Threading") */
    .prepare = plugin_prepare,
    .code0 = plugin_code0,
    .run = plugin_run,
    .run_sequence = plugin_run_sequence,
    .release = plugin_release};
