/* options.h — one options table per command, one parser (in the spirit of git's
 * parse-options.h). A command declares each option once: long name, kind, where the value
 * goes (a field of the command's options struct, by offset), the value placeholder for the
 * help ("DIR", "i/n") and the help text. a4w4_options_parse then does the parsing
 * (`--opt VALUE`, `--opt=VALUE`, `--` ends the options, positional arguments kept in order),
 * range and choice checks, repeated options, -h/--help (the command's usage text, generated
 * option lines included) and the one-line errors `a4w4check: <cmd>: ...` (exit 2).
 *
 *   typedef struct { const char *out; int quiet; } my_opts;
 *   static const a4w4_option my_options[] = {
 *       OPT_STRING("out", my_opts, out, "DIR", "where the results go"),
 *       OPT_FLAG("quiet", my_opts, quiet, "no progress output"),
 *       OPT_END(),
 *   };
 *   static const a4w4_command_spec my_spec = {"my", my_usage, my_options, "FILE...", my_exit};
 *   my_opts o = {"build/out", 0};
 *   a4w4_args args;
 *   int rc = a4w4_options_parse(&my_spec, &o, argc, argv, &args);
 *   if (rc != A4W4_OPTS_CONTINUE)
 *       return rc;   (0 after --help, 2 after a usage error)
 *
 * An option that takes one value (OPT_INT, OPT_SIZE, OPT_STRING, OPT_LIST, OPT_CHOICE, an
 * OPT_CALLBACK with a value) given twice is refused (`--out a --out b`: which one was meant is
 * not for the parser to guess), an old spelling and its replacement counting as one option;
 * an OPT_STRINGS option and an OPT_CALLBACKS one collect every occurrence, and a flag given
 * twice is the flag.
 *
 * Old spellings (OPT_OLD_*) stay accepted for one release: they store into the same field
 * as their replacement, are left out of --help, and the first use prints one line on stderr,
 * "a4w4check: <cmd>: --old is deprecated, use --new". The vocabulary every command shares:
 * --format (text, json, ...) for what is printed or written, --output FILE for a command that
 * writes one file, --out DIR for one that writes a directory, --quiet (A4W4_QUIET_HELP: no
 * progress and no "wrote FILE" lines on stderr; stdout, the verdict and the failures
 * unchanged), --verbose (more on stdout, where a command has more to say), --backend for
 * backends only, --no-X for every negation (docs/cli/README.md). */
#ifndef A4W4_OPTIONS_H
#define A4W4_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

typedef enum {
    A4W4_OPT_END = 0,  /* ends a table */
    A4W4_OPT_FLAG,     /* int: set to 1; takes no value */
    A4W4_OPT_INT,      /* int: a decimal integer in [lo, hi] */
    A4W4_OPT_SIZE,     /* size_t: an unsigned decimal integer in [lo, hi], a multiple of step */
    A4W4_OPT_STRING,   /* const char *: the value itself (points into argv) */
    A4W4_OPT_STRINGS,  /* a4w4_opt_strings: repeatable, every value in order */
    A4W4_OPT_LIST,     /* a4w4_opt_list: a comma-separated list (an empty item is refused) */
    A4W4_OPT_CHOICE,   /* int: the index of the value in choices */
    A4W4_OPT_CALLBACK  /* cb(opt, field, value, ...); takes a value when argh is set */
} a4w4_opt_kind;

typedef struct a4w4_option a4w4_option;

/* A callback option: opt is its table entry, field points at its field of the options
 * struct, value is the argument (NULL for an option without argh). Returns 0, or -1 with a
 * one-line message in err (the parser prints "a4w4check: <cmd>: <err>" and returns exit 2). */
typedef int (*a4w4_opt_cb)(const a4w4_option *opt, void *field, const char *value, char *err,
                           size_t errlen);

struct a4w4_option {
    a4w4_opt_kind kind;
    const char *name;   /* long name without the leading "--" */
    size_t offset;      /* the field in the command's options struct */
    const char *argh;   /* value placeholder for the help ("DIR"); NULL: no value */
    const char *help;   /* help text; '\n' starts a continuation line */
    long long lo, hi;   /* OPT_INT, OPT_SIZE: the accepted range */
    unsigned long long step;    /* OPT_SIZE: the value must be a multiple (0 or 1: any) */
    const char *rule;           /* OPT_INT, OPT_SIZE: replaces "is not an integer in lo..hi" */
    const char *const *choices; /* OPT_CHOICE: the accepted values, NULL-terminated */
    a4w4_opt_cb cb;             /* OPT_CALLBACK */
    int repeatable;             /* OPT_CALLBACKS: the callback collects every occurrence */
    const char *instead;        /* an old spelling (accepted for one release, left out of the
                                   help): what to give instead ("--format json"), or
                                   A4W4_OPT_IGNORED for an option that no longer does anything */
};

#define A4W4_OPT_IGNORED ""

/* Storage of an OPT_STRINGS option: v has room for max values (caller's array). */
typedef struct {
    const char **v;
    size_t n, max;
} a4w4_opt_strings;

/* An OPT_LIST option's items (pointers into buf); text is the option's value as given. */
#define A4W4_OPT_LIST_MAX 64
typedef struct {
    const char *text;
    char buf[2048];
    const char *item[A4W4_OPT_LIST_MAX];
    size_t n;
} a4w4_opt_list;

typedef struct {
    const char *name;            /* the command, for messages: "a4w4check: <name>: ..." */
    const char *usage;           /* the help before the option lines (usage, prose) */
    const a4w4_option *options;  /* ends with OPT_END() */
    const char *args;            /* positional arguments, e.g. "BUNDLE..."; NULL: none */
    const char *footer;          /* the help after the option lines (exit codes) */
} a4w4_command_spec;

/* The positional arguments, in order (v points into the caller's argv). */
typedef struct {
    int n;
    char **v;
} a4w4_args;

enum { A4W4_OPTS_CONTINUE = -1 };

/* Parse argv[1..argc) (argv[0] is the command name) into the options struct at opts, per
 * spec. Positional arguments are moved to the front of argv (after argv[0]) and described
 * by *args. Anything starting with '-' is an option, except "-" alone and negative numbers
 * ("-1"); after "--" everything is positional. -h or --help anywhere before "--" prints the
 * help on stdout. Returns A4W4_OPTS_CONTINUE, A4W4_EXIT_PASS after the help, or
 * A4W4_EXIT_BADINPUT after one line on stderr: an unknown option, a missing or empty value
 * (`--out=`), a value given to a flag, an option of one value given twice, a number that is not a4w4_parse_int's or out of range, a value not among the choices, an OPT_STRINGS or
 * OPT_LIST over capacity, a positional argument to a command that takes none, or a
 * callback's message. */
int a4w4_options_parse(const a4w4_command_spec *spec, void *opts, int argc, char **argv,
                       a4w4_args *args);

/* Print spec's help: usage, one line per option (name and placeholder in a column as wide
 * as the widest plus 2; continuation lines indented to it), a blank line, the footer. */
void a4w4_options_usage(const a4w4_command_spec *spec, FILE *out);

/* Split text at commas into list, keeping text. Returns 0, or -1 with a message in err: an
 * empty item ("a,,b", ",a", "a,", ""), longer than list->buf, or more than A4W4_OPT_LIST_MAX
 * items. */
int a4w4_opt_list_split(const char *text, a4w4_opt_list *list, char *err, size_t errlen);

/* The one integer rule of the CLI: s[0..len) is a plain decimal, an optional '-' then digits,
 * no '+', no space, no leading zero ("0" itself is fine, "-0" is not), within [lo, hi]. Every
 * integer an option, a list or a positional argument carries goes through it, so ' 5', '+5'
 * and '05' are refused everywhere alike. Returns 0 with *out, or -1. */
int a4w4_parse_int(const char *s, size_t len, long long lo, long long hi, long long *out);

/* A comma-separated list of a4w4_parse_int values in [lo, hi], each a multiple of step (<= 1:
 * any; lo..hi within int), at most max of them, into v[0..*n). Returns 0, or -1 (an empty
 * item, a bad or out-of-range value, more than max). */
int a4w4_parse_int_list(const char *s, long long lo, long long hi, long long step, int *v,
                        int max, int *n);

/* The K values of `--k LIST` (route --scan, hazards): positive multiples of 32, at most
 * A4W4_DIM_MAX, comma-separated, at most max of them, into k[0..*n). Returns 0, or -1 after
 * one line on stderr: "CMD: --k 'LIST': K values must be positive multiples of 32, ...". */
int a4w4_parse_k_list(const char *cmd, const char *s, int *k, int max, int *n);

/* The one meaning of --quiet (docs/cli/README.md): stderr carries no progress lines and no
 * "wrote FILE" lines; stdout (results, the verdict line, failures), errors and warnings are
 * unchanged. */
#define A4W4_QUIET_HELP "no progress and no \"wrote FILE\" lines on stderr"

/* --format's choices for a command that prints text or JSON lines: index 0 text, 1 json. */
extern const char *const a4w4_format_text_json[3];

/* A shard i/n of a matrix (1 <= i <= n <= 1000000; 1/1 is the whole). */
typedef struct {
    unsigned i, n;
} a4w4_opt_shard;

/* Callbacks shared by commands. a4w4_opt_cb_shard: field is an a4w4_opt_shard, value "i/n"
 * ("--shard 'V' must be i/n with 1 <= i <= n <= 1000000" otherwise). a4w4_opt_cb_unset:
 * field is a const char * set to NULL (e.g. --no-golden); takes no value. */
int a4w4_opt_cb_shard(const a4w4_option *opt, void *field, const char *value, char *err,
                      size_t errlen);
int a4w4_opt_cb_unset(const a4w4_option *opt, void *field, const char *value, char *err,
                      size_t errlen);

/* Table entries. T is the options struct type, f the field; a field of the wrong type draws
 * a compiler warning (comparison of distinct pointer types). */
#define A4W4_OPT_FIELD_(T, f, type) \
    (offsetof(T, f) + 0 * sizeof(&((T *)0)->f == (type *)0))
#define OPT_FLAG(nm, T, f, hl) \
    {.kind = A4W4_OPT_FLAG, .name = nm, .offset = A4W4_OPT_FIELD_(T, f, int), .help = hl}
#define OPT_INT(nm, T, f, ah, l, h, hl)                                                       \
    {.kind = A4W4_OPT_INT, .name = nm, .offset = A4W4_OPT_FIELD_(T, f, int), .argh = ah,     \
     .help = hl, .lo = l, .hi = h}
#define OPT_SIZE(nm, T, f, ah, l, h, st, rl, hl)                                              \
    {.kind = A4W4_OPT_SIZE, .name = nm, .offset = A4W4_OPT_FIELD_(T, f, size_t), .argh = ah, \
     .help = hl, .lo = l, .hi = h, .step = st, .rule = rl}
#define OPT_STRING(nm, T, f, ah, hl)                                                          \
    {.kind = A4W4_OPT_STRING, .name = nm, .offset = A4W4_OPT_FIELD_(T, f, const char *),     \
     .argh = ah, .help = hl}
#define OPT_STRINGS(nm, T, f, ah, hl)                                                         \
    {.kind = A4W4_OPT_STRINGS, .name = nm,                                                    \
     .offset = A4W4_OPT_FIELD_(T, f, a4w4_opt_strings), .argh = ah, .help = hl}
#define OPT_LIST(nm, T, f, ah, hl)                                                            \
    {.kind = A4W4_OPT_LIST, .name = nm, .offset = A4W4_OPT_FIELD_(T, f, a4w4_opt_list),      \
     .argh = ah, .help = hl}
#define OPT_CHOICE(nm, T, f, ah, ch, hl)                                                      \
    {.kind = A4W4_OPT_CHOICE, .name = nm, .offset = A4W4_OPT_FIELD_(T, f, int), .argh = ah,  \
     .help = hl, .choices = ch}
#define OPT_CALLBACK(nm, T, f, ah, fn, hl)                                                    \
    {.kind = A4W4_OPT_CALLBACK, .name = nm, .offset = offsetof(T, f), .argh = ah, .help = hl, \
     .cb = fn}
/* A callback that collects every occurrence (`compare --pair`, `invariance --switch`). */
#define OPT_CALLBACKS(nm, T, f, ah, fn, hl)                                                   \
    {.kind = A4W4_OPT_CALLBACK, .name = nm, .offset = offsetof(T, f), .argh = ah, .help = hl, \
     .cb = fn, .repeatable = 1}
#define OPT_END() {.kind = A4W4_OPT_END}

/* Old spellings: `use` is what to give instead (A4W4_OPT_IGNORED: nothing, it is ignored). */
#define OPT_OLD_FLAG(nm, T, f, use) \
    {.kind = A4W4_OPT_FLAG, .name = nm, .offset = A4W4_OPT_FIELD_(T, f, int), .instead = use}
#define OPT_OLD_STRING(nm, T, f, use)                                                         \
    {.kind = A4W4_OPT_STRING, .name = nm, .offset = A4W4_OPT_FIELD_(T, f, const char *),     \
     .argh = "X", .instead = use}
#define OPT_OLD_LIST(nm, T, f, use)                                                           \
    {.kind = A4W4_OPT_LIST, .name = nm, .offset = A4W4_OPT_FIELD_(T, f, a4w4_opt_list),      \
     .argh = "X", .instead = use}

#endif
