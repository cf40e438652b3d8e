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
 * A scalar option given twice keeps the last value (as `--out a --out b` always did); an
 * OPT_STRINGS option collects every occurrence. */
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
};

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
 * (`--out=`), a value given to a flag, a number that is not a4w4_parse_int's or out of range, a value not among the choices, an OPT_STRINGS or
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
#define OPT_FLAG(name, T, f, help) \
    {A4W4_OPT_FLAG, name, A4W4_OPT_FIELD_(T, f, int), NULL, help, 0, 0, 0, NULL, NULL, NULL}
#define OPT_INT(name, T, f, argh, lo, hi, help) \
    {A4W4_OPT_INT, name, A4W4_OPT_FIELD_(T, f, int), argh, help, lo, hi, 0, NULL, NULL, NULL}
#define OPT_SIZE(name, T, f, argh, lo, hi, step, rule, help)                                  \
    {A4W4_OPT_SIZE, name, A4W4_OPT_FIELD_(T, f, size_t), argh, help, lo, hi, step, rule, NULL, \
     NULL}
#define OPT_STRING(name, T, f, argh, help) \
    {A4W4_OPT_STRING, name, A4W4_OPT_FIELD_(T, f, const char *), argh, help, 0, 0, 0, NULL, NULL, NULL}
#define OPT_STRINGS(name, T, f, argh, help)                                                   \
    {A4W4_OPT_STRINGS, name, A4W4_OPT_FIELD_(T, f, a4w4_opt_strings), argh, help, 0, 0, 0,   \
     NULL, NULL, NULL}
#define OPT_LIST(name, T, f, argh, help) \
    {A4W4_OPT_LIST, name, A4W4_OPT_FIELD_(T, f, a4w4_opt_list), argh, help, 0, 0, 0, NULL, NULL, NULL}
#define OPT_CHOICE(name, T, f, argh, choices, help) \
    {A4W4_OPT_CHOICE, name, A4W4_OPT_FIELD_(T, f, int), argh, help, 0, 0, 0, NULL, choices, NULL}
#define OPT_CALLBACK(name, T, f, argh, cb, help) \
    {A4W4_OPT_CALLBACK, name, offsetof(T, f), argh, help, 0, 0, 0, NULL, NULL, cb}
#define OPT_END() {A4W4_OPT_END, NULL, 0, NULL, NULL, 0, 0, 0, NULL, NULL, NULL}

#endif
