/* plugin.c — the "plugin" backend type (`--backend plugin:/path/libmy.so`): a shared
 * library exporting the a4w4 plugin ABI (a4w4_plugin.h), so a real kernel (AITER's gemm_a4w4
 * on an MI355X) runs under the harness without changing it. */
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

typedef struct {
    void *handle;
    const a4w4_plugin_info *info;
    void *state;
    char name[128]; /* the plugin's display name */
    pthread_mutex_t lock; /* serializes gemm calls into this instance (ABI "Threading") */
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
    if (!info->contract || !a4w4_contract_valid(info->contract) ||
        strlen(info->contract) >= contract_len) {
        char shown[44]; /* the declared text, cut at 40 bytes as before, one line */
        snprintf(why, whylen, "contract '%.40s' is not one of ordered(1), ordered(S) or "
                 "bounded(S) with S in 1..65536, exact, bounded",
                 a4w4_quote(info->contract, shown, sizeof shown));
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

/* A context for the opened plugin h, its init called: the context, or NULL with err set (h
 * is then closed). */
static plugin_ctx *plugin_instance(const char *arg, void *h, const a4w4_plugin_info *info,
                                   char *err, size_t errlen)
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
    const char *base = strrchr(arg, '/');
    snprintf(c->name, sizeof c->name, "%s", info->name && *info->name ? info->name
                                                                      : base ? base + 1 : arg);
    if (info->init) {
        char msg[256] = "", shown[256];
        int rc = info->init(&c->state, msg, sizeof msg);
        msg[sizeof msg - 1] = '\0'; /* a plugin that breaks the ABI's message rule */
        if (rc != 0) {
            snprintf(err, errlen, "plugin %s: init failed (%d): %s", arg, rc,
                     *msg ? a4w4_quote(msg, shown, sizeof shown) : "no message");
            pthread_mutex_destroy(&c->lock);
            free(c);
            dlclose(h);
            return NULL;
        }
    }
    return c;
}

static int plugin_prepare(const char *arg, void **vctx, char *contract, size_t contract_len,
                          int *asm_layout, char *err, size_t errlen)
{
    void *sym = NULL;
    void *h = plugin_open(arg, &sym, err, errlen);
    if (!h)
        return -1;
    const a4w4_plugin_info *info = sym_to_fn(sym)();
    char why[256] = "";
    const char *bad = info_problem(info, contract_len, why, sizeof why);
    if (bad) {
        snprintf(err, errlen, "plugin %s: %s", arg, bad);
        dlclose(h);
        return -1;
    }
    plugin_ctx *c = plugin_instance(arg, h, info, err, errlen);
    if (!c)
        return -1;
    snprintf(contract, contract_len, "%s", info->contract);
    *asm_layout = info->asm_layout;
    *vctx = c;
    return 0;
}

static int plugin_run(void *vctx, const a4w4_run_args *a)
{
    plugin_ctx *c = vctx;
    const a4w4_case_data *d = a->d;
    const a4w4_sample *s = a->s;
    int all_r = s->full || !s->rows, all_c = s->full || !s->cols;
    a4w4_plugin_gemm_args g = {
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
    if (g.a_scale_shuffled) {
        g.a_scale_rows_padded = a4w4_act_scale_padded_rows(d->M);
        g.a_scale_cols_padded = a4w4_act_scale_padded_cols(d->K / 32);
    }
    char msg[512] = "";
    g.msg = msg;
    g.msglen = sizeof msg;
    pthread_mutex_lock(&c->lock);
    int rc = c->info->gemm(c->state, &g);
    pthread_mutex_unlock(&c->lock);
    msg[sizeof msg - 1] = '\0';
    if (rc == A4W4_PLUGIN_OK)
        return A4W4_OK;
    if (rc == A4W4_PLUGIN_NOT_APPLICABLE) {
        snprintf(a->why, a->whylen, "%s", *msg ? msg : "the plugin says not applicable (no reason given)");
        return A4W4_EUNSUPPORTED;
    }
    snprintf(a->why, a->whylen, "plugin %s: gemm %s %d: %s", c->name,
             rc < 0 ? "failed with" : "returned the undefined code", rc,
             *msg ? msg : "no message");
    return A4W4_EINVAL;
}

static void plugin_release(void *vctx)
{
    plugin_ctx *c = vctx;
    if (!c)
        return;
    if (c->info->fini)
        c->info->fini(c->state);
    pthread_mutex_destroy(&c->lock);
    dlclose(c->handle);
    free(c);
}

const a4w4_backend_type a4w4_backend_plugin = {
    .name = "plugin",
    .what = "a shared library exporting the a4w4 plugin ABI (harness/backends/a4w4_plugin.h), e.g. AITER's gemm_a4w4",
    .contract = "ordered(1)",
    .needs_arg = 1,
    .thread_safe = 1, /* plugin_run serializes the calls into one instance itself (ABI "Threading") */
    .prepare = plugin_prepare,
    .run = plugin_run,
    .release = plugin_release};
