/* options.c — the one option parser of the CLI (options.h): argv against a command's table,
 * values into the command's options struct, help generated from the same table. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "a4w4check.h"
#include "options.h"

const char *const a4w4_format_text_json[3] = {"text", "json", NULL};

/* An option-looking argument: '-' and more, except a negative number ("-1"). */
static int is_option(const char *a)
{
    return a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9');
}

static int takes_value(const a4w4_option *o)
{
    return o->kind != A4W4_OPT_FLAG && (o->kind != A4W4_OPT_CALLBACK || o->argh);
}

static const a4w4_option *find(const a4w4_option *opts, const char *name, size_t len)
{
    for (const a4w4_option *o = opts; o->kind != A4W4_OPT_END; o++)
        if (strlen(o->name) == len && !strncmp(o->name, name, len))
            return o;
    return NULL;
}

int a4w4_opt_list_split(const char *text, a4w4_opt_list *list, char *err, size_t errlen)
{
    list->text = text;
    list->n = 0;
    if (snprintf(list->buf, sizeof list->buf, "%s", text) >= (int)sizeof list->buf) {
        snprintf(err, errlen, "list is longer than %zu characters", sizeof list->buf - 1);
        return -1;
    }
    for (char *t = list->buf;; t++) {
        char *comma = strchr(t, ',');
        if (comma)
            *comma = '\0';
        if (!*t) { /* "a,,b", ",a", "a,": an item left out by mistake, never skipped */
            snprintf(err, errlen, "'%s' has an empty item (give comma-separated names)", text);
            return -1;
        }
        if (list->n == A4W4_OPT_LIST_MAX) {
            snprintf(err, errlen, "list has more than %d items", A4W4_OPT_LIST_MAX);
            return -1;
        }
        list->item[list->n++] = t;
        if (!comma)
            return 0;
        t = comma;
    }
}

int a4w4_parse_int(const char *s, size_t len, long long lo, long long hi, long long *out)
{
    size_t i = 0;
    int neg = len > 0 && s[0] == '-';
    i += (size_t)neg;
    if (i == len || (s[i] == '0' && len - i > 1) || (neg && s[i] == '0'))
        return -1; /* empty, a leading zero, or "-0" */
    unsigned long long mag = 0, limit = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1; /* '+', a space, a letter: not a plain decimal */
        unsigned d = (unsigned)(s[i] - '0');
        if (mag > (limit - d) / 10)
            return -1;
        mag = mag * 10 + d;
    }
    long long x = neg ? (mag == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)mag)
                      : (long long)mag;
    if (x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

int a4w4_parse_int_list(const char *s, long long lo, long long hi, long long step, int *v,
                        int max, int *n)
{
    *n = 0;
    for (const char *p = s;; p++) {
        size_t L = strcspn(p, ",");
        long long x;
        if (*n >= max || a4w4_parse_int(p, L, lo, hi, &x) || (step > 1 && x % step))
            return -1;
        v[(*n)++] = (int)x;
        p += L;
        if (!*p)
            return 0;
    }
}

int a4w4_parse_k_list(const char *cmd, const char *s, int *k, int max, int *n)
{
    if (a4w4_parse_int_list(s, 32, A4W4_DIM_MAX, 32, k, max, n) == 0)
        return 0;
    a4w4_errorf("%s: --k '%s': K values must be positive multiples of 32, comma-separated, at "
                "most %d", cmd, s, max);
    return -1;
}

/* OPT_INT and OPT_SIZE: the value (a4w4_parse_int), range- and step-checked into field. 0,
 * or -1 after the error. */
static int set_number(const a4w4_command_spec *spec, const a4w4_option *o, void *field,
                      const char *v)
{
    long long x = 0;
    int ok = a4w4_parse_int(v, strlen(v), o->lo, o->hi, &x) == 0;
    if (ok && o->kind == A4W4_OPT_SIZE)
        ok = o->step <= 1 || (unsigned long long)x % o->step == 0;
    if (ok && o->kind == A4W4_OPT_INT)
        *(int *)field = (int)x;
    else if (ok)
        *(size_t *)field = (size_t)x;
    if (ok)
        return 0;
    if (o->rule)
        a4w4_errorf("%s: --%s '%s' %s", spec->name, o->name, v, o->rule);
    else
        a4w4_errorf("%s: --%s '%s' is not an integer in %lld..%lld", spec->name, o->name, v,
                    o->lo, o->hi);
    return -1;
}

/* OPT_CHOICE: the index of v among the choices into field. 0, or -1 after the error. */
static int set_choice(const a4w4_command_spec *spec, const a4w4_option *o, void *field,
                      const char *v)
{
    char list[512];
    size_t u = 0;
    list[0] = '\0';
    for (int i = 0; o->choices[i]; i++) {
        if (!strcmp(o->choices[i], v)) {
            *(int *)field = i;
            return 0;
        }
        if (u < sizeof list)
            u += (size_t)snprintf(list + u, sizeof list - u, "%s%s", i ? ", " : "", o->choices[i]);
    }
    a4w4_errorf("%s: --%s '%s' is not one of %s", spec->name, o->name, v, list);
    return -1;
}

/* Store value (NULL for a flag) into o's field. 0, or -1 after the one-line error. */
static int set_value(const a4w4_command_spec *spec, const a4w4_option *o, void *opts,
                     const char *v)
{
    void *field = (char *)opts + o->offset;
    char err[512];
    switch (o->kind) {
    case A4W4_OPT_FLAG:
        *(int *)field = 1;
        return 0;
    case A4W4_OPT_INT:
    case A4W4_OPT_SIZE:
        return set_number(spec, o, field, v);
    case A4W4_OPT_STRING:
        *(const char **)field = v;
        return 0;
    case A4W4_OPT_STRINGS: {
        a4w4_opt_strings *s = field;
        if (s->n >= s->max) {
            a4w4_errorf("%s: --%s given more than %zu times", spec->name, o->name, s->max);
            return -1;
        }
        s->v[s->n++] = v;
        return 0;
    }
    case A4W4_OPT_LIST:
        if (a4w4_opt_list_split(v, field, err, sizeof err) == 0)
            return 0;
        a4w4_errorf("%s: --%s %s", spec->name, o->name, err);
        return -1;
    case A4W4_OPT_CHOICE:
        return set_choice(spec, o, field, v);
    case A4W4_OPT_CALLBACK:
        if (o->cb(o, field, v, err, sizeof err) == 0)
            return 0;
        a4w4_errorf("%s: %s", spec->name, err);
        return -1;
    case A4W4_OPT_END:
        break;
    }
    return -1;
}

/* An old spelling's one line on stderr, the first time it is given. */
static void note_old(const a4w4_command_spec *spec, const a4w4_option *o, unsigned char *noted)
{
    size_t k = (size_t)(o - spec->options);
    if (k < 128 && noted[k]++)
        return;
    if (*o->instead)
        a4w4_errorf("%s: --%s is deprecated, use %s", spec->name, o->name, o->instead);
    else
        a4w4_errorf("%s: --%s is deprecated and ignored", spec->name, o->name);
}

/* 1 when a looks like a long option ("--name", "--name=value"), not "--" alone. */
static int is_long_option(const char *a)
{
    return a[0] == '-' && a[1] == '-' &&
           ((a[2] >= 'a' && a[2] <= 'z') || (a[2] >= 'A' && a[2] <= 'Z'));
}

/* 1 when o takes one value, which a second occurrence would silently replace. */
static int single_valued(const a4w4_option *o)
{
    return o->kind != A4W4_OPT_FLAG && o->kind != A4W4_OPT_STRINGS && !o->repeatable &&
           (o->kind != A4W4_OPT_CALLBACK || o->argh);
}

/* The table index that stands for o among the options given: an old spelling's replacement
 * (the entry of the same field and kind that is not an old spelling), else o's own. */
static size_t given_index(const a4w4_command_spec *spec, const a4w4_option *o)
{
    if (o->instead)
        for (const a4w4_option *p = spec->options; p->kind != A4W4_OPT_END; p++)
            if (!p->instead && p->offset == o->offset && p->kind == o->kind)
                return (size_t)(p - spec->options);
    return (size_t)(o - spec->options);
}

/* argv[*i] is an option: find it, take its value (after '=' or the next argument) and store
 * it; *i moves past a value taken from the next argument. 0, or -1 after the error. */
static int parse_one(const a4w4_command_spec *spec, void *opts, int argc, char **argv, int *i,
                     unsigned char *noted, unsigned char *given)
{
    const char *a = argv[*i];
    const char *name = a + 2, *eq = strchr(a, '=');
    const a4w4_option *o = a[1] == '-' ? find(spec->options, name,
                                               eq ? (size_t)(eq - name) : strlen(name))
                                       : NULL;
    if (!o) {
        a4w4_errorf("%s: unknown option '%s' (see a4w4check %s --help)", spec->name, a,
                    spec->name);
        return -1;
    }
    const char *v = NULL;
    if (!takes_value(o)) {
        if (eq) {
            a4w4_errorf("%s: option --%s takes no value", spec->name, o->name);
            return -1;
        }
    } else if (eq) {
        v = eq + 1;
    } else if (*i + 1 < argc && is_long_option(argv[*i + 1])) {
        /* `--out --quiet`: the value was left out and the next option taken for it */
        a4w4_errorf("%s: option --%s needs a value, and the next argument '%s' is an option "
                    "(write --%s=%s for a value that starts with --)", spec->name, o->name,
                    argv[*i + 1], o->name, argv[*i + 1]);
        return -1;
    } else if (*i + 1 < argc) {
        v = argv[++*i];
    } else {
        a4w4_errorf("%s: option --%s needs a value", spec->name, o->name);
        return -1;
    }
    if (v && !*v) { /* `--out=` or `--out ''`: a value lost on the way (an unset variable) */
        a4w4_errorf("%s: option --%s needs a value, got an empty one", spec->name, o->name);
        return -1;
    }
    size_t k = given_index(spec, o);
    if (single_valued(o) && k < 128 && given[k]++) {
        a4w4_errorf("%s: --%s given twice (it takes one value; give it once)", spec->name,
                    spec->options[k].name);
        return -1;
    }
    if (o->instead)
        note_old(spec, o, noted);
    return set_value(spec, o, opts, v);
}

int a4w4_options_parse(const a4w4_command_spec *spec, void *opts, int argc, char **argv,
                       a4w4_args *args)
{
    if (a4w4_wants_help(argc, argv)) {
        a4w4_options_usage(spec, stdout);
        return A4W4_EXIT_PASS;
    }
    int npos = 0, options_end = 0;
    unsigned char noted[128] = {0}; /* old spellings already noted, by table index */
    unsigned char given[128] = {0}; /* options of one value given, by table index */
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (!options_end && !strcmp(a, "--")) {
            options_end = 1;
        } else if (!options_end && is_option(a)) {
            if (parse_one(spec, opts, argc, argv, &i, noted, given))
                return A4W4_EXIT_BADINPUT;
        } else if (!spec->args) {
            a4w4_errorf("%s: unexpected argument '%s' (see a4w4check %s --help)", spec->name, a,
                        spec->name);
            return A4W4_EXIT_BADINPUT;
        } else {
            argv[1 + npos++] = a; /* never ahead of i: nothing unread is overwritten */
        }
    }
    args->n = npos;
    args->v = argv + 1;
    return A4W4_OPTS_CONTINUE;
}

void a4w4_options_usage(const a4w4_command_spec *spec, FILE *out)
{
    fputs(spec->usage, out);
    int width = 0, any = 0;
    for (const a4w4_option *o = spec->options; o->kind != A4W4_OPT_END; o++) {
        if (o->instead)
            continue; /* an old spelling: not in the help */
        int w = (int)strlen(o->name) + 2 + (o->argh ? 1 + (int)strlen(o->argh) : 0);
        width = w > width ? w : width;
        any = 1;
    }
    width += 2;
    for (const a4w4_option *o = spec->options; o->kind != A4W4_OPT_END; o++) {
        if (o->instead)
            continue;
        char left[128];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->argh ? " " : "",
                 o->argh ? o->argh : "");
        const char *h = o->help ? o->help : "";
        for (int first = 1; first || *h; first = 0) {
            size_t L = strcspn(h, "\n");
            fprintf(out, "  %-*s%.*s\n", width, first ? left : "", (int)L, h);
            h += L + (h[L] == '\n');
        }
    }
    if (any)
        fputc('\n', out);
    if (spec->footer)
        fputs(spec->footer, out);
}

/* --shard i/n: 1 <= i <= n <= 1000000, each a4w4_parse_int. */
int a4w4_opt_cb_shard(const a4w4_option *opt, void *field, const char *v, char *err,
                       size_t errlen)
{
    (void)opt;
    a4w4_opt_shard *s = field;
    const char *slash = strchr(v, '/');
    long long si = 0, sn = 0;
    int ok = slash && !a4w4_parse_int(v, (size_t)(slash - v), 1, 1000000, &si) &&
             !a4w4_parse_int(slash + 1, strlen(slash + 1), 1, 1000000, &sn) && si <= sn;
    if (!ok) {
        snprintf(err, errlen, "--shard '%s' must be i/n with 1 <= i <= n <= 1000000", v);
        return -1;
    }
    s->i = (unsigned)si;
    s->n = (unsigned)sn;
    return 0;
}

/* Set a const char * option to NULL (e.g. --no-golden). */
int a4w4_opt_cb_unset(const a4w4_option *opt, void *field, const char *v, char *err,
                     size_t errlen)
{
    (void)opt, (void)v, (void)err, (void)errlen;
    *(const char **)field = NULL;
    return 0;
}
