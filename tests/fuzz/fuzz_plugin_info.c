/* fuzz_plugin_info.c — libFuzzer target for the checks the plugin backend makes on the
 * a4w4_plugin_info a plugin declares (harness/backends/plugin.c's prepare, reached through
 * a4w4_backend_open_type exactly as `--backend plugin:PATH` reaches it).
 *
 * The checks sit inside prepare, after dlopen, so the target loads a real shared library:
 * libfuzz_plugin.so (fuzz_plugin_lib.c) returns whatever info struct the target set. Each
 * input is decoded (every byte string is a valid encoding) into that info struct:
 *   byte 0      flags: 1 query returns NULL, 2 name NULL, 4 contract NULL, 8 gemm NULL,
 *               16 init present, 32 fini present, 64 abi_version from bytes 1..4 (else 1),
 *               128 asm_layout from bytes 5..8 (else byte 9 bit 5)
 *   bytes 1..8  abi_version, asm_layout (little-endian)
 *   byte 9      init: bits 0-1 return 0 / -1 / 1 / INT_MIN, bit 2 writes its message,
 *               bit 3 sets a state, bit 4 breaks the message rule (below); bit 5 asm_layout
 *   then        name, contract and init message, separated by NUL bytes
 * Checked against an independent reading of the ABI (a4w4_plugin.h), which the shared contract
 * validator (a4w4_contract_valid, a4w4_contract.h) must also agree with: the backend opens iff the
 * query gives a struct with abi_version 1, a contract that is "exact", "bounded",
 * "ordered(S)" or "bounded(S)" with S in 1..65536 without sign or leading zeros, or a tree
 * contract the parser takes (contracts §4.2; recorded in its canonical text), a gemm,
 * asm_layout 0 or 1 and init (if any) returning 0; then the instance carries the declared
 * contract, split and asm_layout, init ran once, and closing runs fini once; a refusal
 * returns A4W4_ST_BADINPUT with one error line naming the plugin and runs neither init
 * (unless it was init that failed) nor fini.
 * The init message follows the ABI (one line, NUL-terminated) unless bit 4 of byte 9 makes
 * init break it (no NUL in the whole buffer, or a newline): the harness must still read only
 * its buffer and report the failure in one line. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_plugin.h"
#include "a4w4_contract.h"
#include "fuzz_common.h"
#include "registry.h"

#define TARGET "plugin_info"

typedef void (*set_fn)(const a4w4_plugin_info *);

static set_fn plugin_set;

/* What init does this time, and what the harness did. */
static struct {
    int rc, write_msg, set_state, violate;
    const char *msg;
    int init_calls, fini_calls, gemm_calls;
    void *state_seen;
} ctl;

static int fake_init(void **state, char *msg, size_t msglen)
{
    ctl.init_calls++;
    if (ctl.set_state)
        *state = &ctl;
    if (ctl.violate && ctl.write_msg)
        memset(msg, 'x', msglen); /* no NUL anywhere */
    else if (ctl.violate)
        snprintf(msg, msglen, "line one\nline two");
    else if (ctl.write_msg) {
        snprintf(msg, msglen, "%s", ctl.msg);
        for (char *p = msg; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
    }
    return ctl.rc;
}

static int fake_gemm(void *state, const a4w4_plugin_gemm_args *a)
{
    (void)state;
    (void)a;
    ctl.gemm_calls++;
    return -1;
}

static void fake_fini(void *state)
{
    ctl.fini_calls++;
    ctl.state_seen = state;
}

/* "exact", "bounded", "ordered(S)" or "bounded(S)", S in 1..65536 without sign or leading
 * zeros. */
static int contract_ok(const char *s, unsigned *split)
{
    *split = 1;
    if (!strcmp(s, "exact") || !strcmp(s, "bounded"))
        return 1;
    if (a4w4_contract_text_is_rules(s)) { /* the file form's rules (contracts §4.2) */
        a4w4_contract_set set;
        if (a4w4_contract_set_parse(s, &set, NULL, 0) != A4W4_OK)
            return 0;
        a4w4_contract_set_free(&set);
        return 1;
    }
    if (!strncmp(s, "tree(", 5)) {
        a4w4_contract c;
        return a4w4_contract_parse(s, &c, NULL, 0) == A4W4_OK;
    }
    size_t n = strlen(s);
    if (n == 9 && !strncmp(s, "atomic(", 7) && s[7] >= '1' && s[7] <= '6' && s[8] == ')') {
        *split = (unsigned)(s[7] - '0'); /* atomic(S), S 1..6 (contracts §4.1) */
        return 1;
    }
    if (n < 10 || n > 14 || (strncmp(s, "ordered(", 8) && strncmp(s, "bounded(", 8)) ||
        s[n - 1] != ')' || s[8] == '0')
        return 0;
    unsigned v = 0;
    for (size_t i = 8; i < n - 1; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *split = v;
    return v >= 1 && v <= 65536;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Decode the input into info (strings point into text, a NUL-terminated copy). */
static int decode(const uint8_t *data, size_t size, char *text, a4w4_plugin_info *info)
{
    uint8_t h[10] = {0};
    memcpy(h, data, size < 10 ? size : 10);
    size_t tn = size > 10 ? size - 10 : 0;
    memcpy(text, data + (size > 10 ? 10 : size), tn);
    memset(text + tn, 0, 3);
    const char *name = text, *contract = name + strlen(name) + 1;
    ctl.msg = contract + strlen(contract) + 1; /* text[tn..tn+2] are NUL: all in bounds */
    static const int rcs[] = {0, -1, 1, INT_MIN};
    ctl.rc = rcs[h[9] & 3];
    ctl.write_msg = (h[9] >> 2) & 1;
    ctl.set_state = (h[9] >> 3) & 1;
    ctl.violate = (h[9] >> 4) & 1;
    info->abi_version = (h[0] & 64) ? le32(h + 1) : A4W4_PLUGIN_ABI_VERSION;
    info->name = (h[0] & 2) ? NULL : name;
    info->contract = (h[0] & 4) ? NULL : contract;
    info->asm_layout = (h[0] & 128) ? (int)le32(h + 5) : (h[9] >> 5) & 1;
    info->init = (h[0] & 16) ? fake_init : NULL;
    info->gemm = (h[0] & 8) ? NULL : fake_gemm;
    info->fini = (h[0] & 32) ? fake_fini : NULL;
    return !(h[0] & 1);
}

/* Whether the declared info passes the ABI's checks (before init runs). */
static int info_ok(const a4w4_plugin_info *info, int returned, unsigned *split)
{
    *split = 1;
    return returned && info->abi_version == A4W4_PLUGIN_ABI_VERSION && info->contract &&
           contract_ok(info->contract, split) && info->gemm &&
           (info->asm_layout == 0 || info->asm_layout == 1);
}

static void check_opened(a4w4_backend *b, const a4w4_plugin_info *info, unsigned split)
{
    /* recorded with its S: a declared plain "bounded" is bounded(1) (contracts §4.1) */
    if (a4w4_contract_text_is_rules(info->contract)) { /* rules: recorded as a set, S 1 */
        fz_check(b->contracts.n >= 1 && b->split == 1 && b->asm_layout == info->asm_layout,
                 TARGET, "opened rules '%s' as %zu rules, split %u asm_layout %d",
                 info->contract, b->contracts.n, b->split, b->asm_layout);
        return;
    }
    const char *want = strcmp(info->contract, "bounded") ? info->contract : "bounded(1)";
    char canonical[A4W4_CONTRACT_MAX];
    a4w4_contract tree;
    if (!strncmp(info->contract, "tree(", 5) &&
        a4w4_contract_parse(info->contract, &tree, NULL, 0) == A4W4_OK &&
        a4w4_contract_format(&tree, canonical, sizeof canonical) >= 0)
        want = canonical;
    fz_check(!strcmp(b->contract, want) && b->split == split &&
                 b->asm_layout == info->asm_layout,
             TARGET, "opened with contract '%s' split %u asm_layout %d, declared '%s' %u %d",
             b->contract, b->split, b->asm_layout, info->contract, split, info->asm_layout);
    fz_check(ctl.fini_calls == 0 && ctl.gemm_calls == 0, TARGET, "fini ran %d times before close",
             ctl.fini_calls);
    a4w4_backend_close(b);
    fz_check(ctl.fini_calls == (info->fini != NULL), TARGET, "fini ran %d times", ctl.fini_calls);
    if (info->fini)
        fz_check(ctl.state_seen == (info->init && ctl.set_state ? (void *)&ctl : NULL), TARGET,
                 "fini did not get init's state");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    void *h = dlopen(A4W4_FUZZ_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    fz_check(h != NULL, TARGET, "cannot load %s: %s", A4W4_FUZZ_PLUGIN_PATH, dlerror());
    void *sym = dlsym(h, "a4w4_fuzz_plugin_set");
    fz_check(sym != NULL, TARGET, "%s has no a4w4_fuzz_plugin_set", A4W4_FUZZ_PLUGIN_PATH);
    memcpy(&plugin_set, &sym, sizeof plugin_set);
    /* the in-process path (--no-isolate): the metadata checks are the same, and init/fini
     * run in this process where the counters above can see them (isolated, they run in a
     * forked child and the parent never calls init) */
    a4w4_plugin_isolation(0, 0);
    return 0; /* h stays open: the backend's dlopen / dlclose only count references */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 3);
    if (!text)
        return 0;
    a4w4_plugin_info info;
    ctl.init_calls = ctl.fini_calls = ctl.gemm_calls = 0;
    ctl.state_seen = NULL;
    int returned = decode(data, size, text, &info);
    plugin_set(returned ? &info : NULL);
    unsigned split;
    if (info.contract) /* the shared validator (bundle.h) agrees with the ABI's grammar */
        fz_check(a4w4_contract_valid(info.contract) == contract_ok(info.contract, &split), TARGET,
                 "a4w4_contract_valid('%s') disagrees with the ABI", info.contract);
    int ok = info_ok(&info, returned, &split), want = ok && (!info.init || ctl.rc == 0);
    a4w4_backend b;
    char err[1024] = "";
    a4w4_hstatus rc =
        a4w4_backend_open_type(&a4w4_backend_plugin, A4W4_FUZZ_PLUGIN_PATH, &b, err, sizeof err);
    fz_check((rc == A4W4_ST_OK) == want, TARGET, "open returned %d, the ABI says it should %s (%s)",
             (int)rc, want ? "open" : "be refused", err);
    fz_check(ctl.init_calls == (ok && info.init), TARGET, "init ran %d times (checks %s)",
             ctl.init_calls, ok ? "passed" : "failed");
    if (rc == A4W4_ST_OK) {
        check_opened(&b, &info, split);
        a4w4_backend_close(&b); /* frees a rule set's rules; fini runs as on any close */
        fz_accepted();
    } else {
        fz_check(rc == A4W4_ST_BADINPUT && ctl.fini_calls == 0, TARGET,
                 "refusal %d ran fini %d times", (int)rc, ctl.fini_calls);
        fz_check_err_line(err, "plugin " A4W4_FUZZ_PLUGIN_PATH ": ", TARGET);
    }
    plugin_set(NULL);
    free(text);
    return 0;
}
