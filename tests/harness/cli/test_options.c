/* test_options.c — the CLI's one option parser (harness/cli/options.c) and its --backend
 * reader (harness/cli/backend_list.c): each kind of option, ranges, `--x=v`, `--`, repeated
 * options, unknown options, missing values, the generated help and the one-line errors. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "a4w4check.h"
#include "backend_list.h"
#include "options.h"

typedef struct {
    int quiet, n, fmt, cb_calls;
    size_t size;
    const char *out;
    const char *tuned_v[2];
    a4w4_opt_strings tuned;
    a4w4_opt_list list;
} t_opts;

static int t_callback(const a4w4_option *opt, void *field, const char *v, char *err,
                      size_t errlen)
{
    if (!strcmp(v, "bad")) {
        snprintf(err, errlen, "--%s '%s' is refused by the callback", opt->name, v);
        return -1;
    }
    ++*(int *)field;
    return 0;
}

static const char *const t_formats[] = {"md", "html", "all", NULL};

static const a4w4_option t_options[] = {
    OPT_FLAG("quiet", t_opts, quiet, "no progress"),
    OPT_INT("n", t_opts, n, "N", -1, 4, "a small integer"),
    OPT_SIZE("size", t_opts, size, "S", 145, 1 << 20, 4, NULL, "a size,\nmultiple of 4"),
    OPT_STRING("out", t_opts, out, "DIR", "where"),
    OPT_STRINGS("tuned", t_opts, tuned, "CSV", "repeatable"),
    OPT_LIST("backend", t_opts, list, "LIST", "comma-separated"),
    OPT_CHOICE("format", t_opts, fmt, "F", t_formats, "md, html or all"),
    OPT_CALLBACK("cb", t_opts, cb_calls, "V", t_callback, "counted"),
    OPT_END(),
};

static const a4w4_command_spec t_spec = {"demo", "usage: demo [options] FILE...\n\n", t_options,
                                         "FILE...", "exit: 0 ok\n"};
static const a4w4_command_spec t_spec_noargs = {"demo", "usage: demo\n\n", t_options, NULL,
                                                "exit: 0 ok\n"};

static void t_init(t_opts *o)
{
    memset(o, 0, sizeof *o);
    o->fmt = -1;
    o->tuned = (a4w4_opt_strings){o->tuned_v, 0, 2};
}

#define ARGC(a) ((int)(sizeof(a) / sizeof(a)[0]))

/* What a call writes on stderr, through a temporary file in place of fd 2. */
typedef struct {
    int saved;
    FILE *tmp;
} capture;

static void capture_begin(capture *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    cr_assert_not_null(c->tmp);
    c->saved = dup(2);
    dup2(fileno(c->tmp), 2);
}

static void capture_end(capture *c, char *buf, size_t len)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    rewind(c->tmp);
    size_t n = fread(buf, 1, len - 1, c->tmp);
    buf[n] = '\0';
    fclose(c->tmp);
}

/* Parse argv with spec; the exit and what went to stderr. */
static int parse_capture(const a4w4_command_spec *spec, t_opts *o, int argc, char **argv,
                         a4w4_args *args, char *err, size_t len)
{
    capture c;
    capture_begin(&c);
    int rc = a4w4_options_parse(spec, o, argc, argv, args);
    capture_end(&c, err, len);
    return rc;
}

Test(options, parses_each_kind_and_keeps_positionals_in_order)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "a.json", "--quiet", "--n", "-1", "--size", "256", "b.json",
                    "--out", "dir", "--format", "html", "--cb", "x", "c.json"};
    a4w4_args args;
    cr_assert_eq(a4w4_options_parse(&t_spec, &o, ARGC(argv), argv, &args), A4W4_OPTS_CONTINUE);
    cr_assert_eq(o.quiet, 1);
    cr_assert_eq(o.n, -1);
    cr_assert_eq(o.size, 256);
    cr_assert_str_eq(o.out, "dir");
    cr_assert_eq(o.fmt, 1);
    cr_assert_eq(o.cb_calls, 1);
    cr_assert_eq(args.n, 3);
    cr_assert_str_eq(args.v[0], "a.json");
    cr_assert_str_eq(args.v[1], "b.json");
    cr_assert_str_eq(args.v[2], "c.json");
}

Test(options, takes_the_value_after_an_equals_sign)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "--out=a=b", "--n=4", "--backend=x,y"};
    a4w4_args args;
    cr_assert_eq(a4w4_options_parse(&t_spec, &o, ARGC(argv), argv, &args), A4W4_OPTS_CONTINUE);
    cr_assert_str_eq(o.out, "a=b");
    cr_assert_eq(o.n, 4);
    cr_assert_eq(o.list.n, 2);
    cr_assert_eq(args.n, 0);
}

Test(options, double_dash_ends_the_options)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "--quiet", "--", "--out", "-h", "--bogus"};
    a4w4_args args;
    cr_assert_eq(a4w4_options_parse(&t_spec, &o, ARGC(argv), argv, &args), A4W4_OPTS_CONTINUE);
    cr_assert_eq(o.quiet, 1);
    cr_assert_null(o.out);
    cr_assert_eq(args.n, 3);
    cr_assert_str_eq(args.v[0], "--out");
    cr_assert_str_eq(args.v[1], "-h");
    cr_assert_str_eq(args.v[2], "--bogus");
}

Test(options, negative_numbers_and_a_lone_dash_are_positional)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "-5", "-", "--n", "-1"};
    a4w4_args args;
    cr_assert_eq(a4w4_options_parse(&t_spec, &o, ARGC(argv), argv, &args), A4W4_OPTS_CONTINUE);
    cr_assert_eq(args.n, 2);
    cr_assert_str_eq(args.v[0], "-5");
    cr_assert_str_eq(args.v[1], "-");
    cr_assert_eq(o.n, -1);
}

/* The table of the repeat tests: every kind once, an old spelling of --out, and a callback
 * that collects every occurrence. */
static const a4w4_option t_rep_options[] = {
    OPT_FLAG("quiet", t_opts, quiet, "no progress"),
    OPT_INT("n", t_opts, n, "N", -1, 4, "a small integer"),
    OPT_SIZE("size", t_opts, size, "S", 145, 1 << 20, 4, NULL, "a size"),
    OPT_STRING("out", t_opts, out, "DIR", "where"),
    OPT_OLD_STRING("output-dir", t_opts, out, "--out"),
    OPT_STRINGS("tuned", t_opts, tuned, "CSV", "repeatable"),
    OPT_LIST("backend", t_opts, list, "LIST", "comma-separated"),
    OPT_CHOICE("format", t_opts, fmt, "F", t_formats, "md, html or all"),
    OPT_CALLBACK("cb", t_opts, cb_calls, "V", t_callback, "counted"),
    OPT_CALLBACKS("cbs", t_opts, cb_calls, "V", t_callback, "counted, repeatable"),
    OPT_END(),
};
static const a4w4_command_spec t_rep_spec = {"demo", "usage: demo\n\n", t_rep_options,
                                             "FILE...", "exit: 0 ok\n"};

Test(options, a_single_value_given_twice_is_refused_a_repeatable_one_collected)
{
    static const char *const twice[][5] = {
        {"--out", "a", "--out", "b", "out"},        {"--out", "a", "--output-dir", "b", "out"},
        {"--n", "1", "--n=2", NULL, "n"},           {"--size", "148", "--size", "152", "size"},
        {"--backend", "x", "--backend", "y", "backend"}, {"--format", "md", "--format", "md", "format"},
        {"--cb", "1", "--cb", "2", "cb"}};
    for (size_t i = 0; i < sizeof twice / sizeof twice[0]; i++) {
        t_opts o;
        t_init(&o);
        char *argv[6] = {"demo"};
        int argc = 1;
        for (int k = 0; k < 4 && twice[i][k]; k++)
            argv[argc++] = (char *)twice[i][k];
        a4w4_args args;
        char err[512], want[200];
        cr_assert_eq(parse_capture(&t_rep_spec, &o, argc, argv, &args, err, sizeof err),
                     A4W4_EXIT_BADINPUT, "%s twice", twice[i][0]);
        snprintf(want, sizeof want, "a4w4check: demo: --%s given twice (it takes one value; "
                 "give it once)\n", twice[i][4]);
        cr_assert_str_eq(err, want);
    }
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "--quiet", "--tuned", "t1", "--cbs", "1", "--quiet", "--tuned",
                    "t2", "--cbs", "2", "--out", "a"};
    a4w4_args args;
    cr_assert_eq(a4w4_options_parse(&t_rep_spec, &o, ARGC(argv), argv, &args),
                 A4W4_OPTS_CONTINUE);
    cr_assert_str_eq(o.out, "a");
    cr_assert_eq(o.quiet, 1);
    cr_assert_eq(o.cb_calls, 2);
    cr_assert_eq(o.tuned.n, 2);
    cr_assert_str_eq(o.tuned.v[0], "t1");
    cr_assert_str_eq(o.tuned.v[1], "t2");
}

Test(options, repeatable_over_capacity_is_refused)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "--tuned", "1", "--tuned", "2", "--tuned", "3"};
    a4w4_args args;
    char err[512];
    cr_assert_eq(parse_capture(&t_spec, &o, ARGC(argv), argv, &args, err, sizeof err),
                 A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: --tuned given more than 2 times\n");
}

Test(options, unknown_option_is_one_line_and_exit_2)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "--bogus", "--out"};
    a4w4_args args;
    char err[512];
    cr_assert_eq(parse_capture(&t_spec, &o, ARGC(argv), argv, &args, err, sizeof err),
                 A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: unknown option '--bogus' (see a4w4check demo --help)\n");
}

Test(options, single_dash_letters_are_unknown_options)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "-x"};
    a4w4_args args;
    char err[512];
    cr_assert_eq(parse_capture(&t_spec, &o, ARGC(argv), argv, &args, err, sizeof err),
                 A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: unknown option '-x' (see a4w4check demo --help)\n");
}

Test(options, missing_value_is_one_line_and_exit_2)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "--quiet", "--out"};
    a4w4_args args;
    char err[512];
    cr_assert_eq(parse_capture(&t_spec, &o, ARGC(argv), argv, &args, err, sizeof err),
                 A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: option --out needs a value\n");
}

Test(options, a_flag_takes_no_value)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "--quiet=1"};
    a4w4_args args;
    char err[512];
    cr_assert_eq(parse_capture(&t_spec, &o, ARGC(argv), argv, &args, err, sizeof err),
                 A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: option --quiet takes no value\n");
}

/* One argv of one option and its value: the parser's exit and its message. */
static int parse_one_value(const char *opt, const char *value, t_opts *o, char *err, size_t len)
{
    char *argv[] = {"demo", (char *)opt, (char *)value};
    a4w4_args args;
    t_init(o);
    return parse_capture(&t_spec, o, ARGC(argv), argv, &args, err, len);
}

Test(options, integers_outside_the_range_are_refused)
{
    t_opts o;
    char err[512];
    cr_assert_eq(parse_one_value("--n", "4", &o, err, sizeof err), A4W4_OPTS_CONTINUE);
    cr_assert_eq(o.n, 4);
    cr_assert_eq(parse_one_value("--n", "5", &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_eq(parse_one_value("--n", "-2", &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_eq(parse_one_value("--n", "", &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_eq(parse_one_value("--n", "1x", &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: --n '1x' is not an integer in -1..4\n");
}

Test(options, sizes_check_range_step_and_sign)
{
    t_opts o;
    char err[512];
    cr_assert_eq(parse_one_value("--size", "148", &o, err, sizeof err), A4W4_OPTS_CONTINUE);
    cr_assert_eq(o.size, 148);
    cr_assert_eq(parse_one_value("--size", "150", &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_eq(parse_one_value("--size", "144", &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_eq(parse_one_value("--size", "1048580", &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_eq(parse_one_value("--size", "-148", &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_eq(parse_one_value("--size", "1048576", &o, err, sizeof err), A4W4_OPTS_CONTINUE);
}

Test(options, choices_give_their_index_or_the_list)
{
    t_opts o;
    char err[512];
    cr_assert_eq(parse_one_value("--format", "all", &o, err, sizeof err), A4W4_OPTS_CONTINUE);
    cr_assert_eq(o.fmt, 2);
    cr_assert_eq(parse_one_value("--format", "pdf", &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: --format 'pdf' is not one of md, html, all\n");
}

Test(options, a_callback_message_is_the_error)
{
    t_opts o;
    char err[512];
    cr_assert_eq(parse_one_value("--cb", "bad", &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: --cb 'bad' is refused by the callback\n");
}

Test(options, lists_split_at_commas)
{
    t_opts o;
    char err[512];
    cr_assert_eq(parse_one_value("--backend", "a,b:x", &o, err, sizeof err), A4W4_OPTS_CONTINUE);
    cr_assert_str_eq(o.list.text, "a,b:x");
    cr_assert_eq(o.list.n, 2);
    cr_assert_str_eq(o.list.item[0], "a");
    cr_assert_str_eq(o.list.item[1], "b:x");
}

/* An empty item is a name left out by mistake, never skipped (reproducer: `run --backend
 * 'a,,b'` ran a and b). */
Test(options, a_list_with_an_empty_item_is_refused)
{
    t_opts o;
    char err[512];
    static const char *const bad[] = {"a,,b", ",a", "a,", ","};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(parse_one_value("--backend", bad[i], &o, err, sizeof err),
                     A4W4_EXIT_BADINPUT, "%s", bad[i]);
        char want[128];
        snprintf(want, sizeof want, "a4w4check: demo: --backend '%s' has an empty item (give "
                 "comma-separated names)\n", bad[i]);
        cr_assert_str_eq(err, want);
    }
}

/* An empty value is bad usage, exit 2 (reproducer: `run --out=` exited 4, mkdir ''). */
Test(options, an_empty_value_is_refused)
{
    t_opts o;
    char err[512];
    cr_assert_eq(parse_one_value("--out", "", &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: option --out needs a value, got an empty one\n");
    char *argv[] = {"demo", "--out="};
    a4w4_args args;
    t_init(&o);
    cr_assert_eq(parse_capture(&t_spec, &o, ARGC(argv), argv, &args, err, sizeof err),
                 A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: option --out needs a value, got an empty one\n");
}

/* A value left out takes no option for it (reproducer: `run --out --quiet` made a folder named
 * --quiet); the value may still start with -- when given after '='. */
Test(options, an_option_is_not_taken_as_the_value_before_it)
{
    t_opts o;
    char err[512];
    a4w4_args args;
    char *argv[] = {"demo", "--out", "--quiet"};
    t_init(&o);
    cr_assert_eq(parse_capture(&t_spec, &o, ARGC(argv), argv, &args, err, sizeof err),
                 A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: option --out needs a value, and the next argument "
                          "'--quiet' is an option (write --out=--quiet for a value that starts "
                          "with --)\n");
    char *argv2[] = {"demo", "--out=--quiet"};
    t_init(&o);
    cr_assert_eq(parse_capture(&t_spec, &o, ARGC(argv2), argv2, &args, err, sizeof err),
                 A4W4_OPTS_CONTINUE);
    cr_assert_str_eq(o.out, "--quiet");
}

/* One integer rule for every option (reproducer: ' 5' and '+5' were accepted by --timeout and
 * refused by --shard). */
Test(options, integers_are_plain_decimals_for_every_option)
{
    t_opts o;
    char err[512];
    static const char *const bad[] = {" 4", "+4", "04", "4 ", "-0", "0x4", "4e0", "--1", "-"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(parse_one_value("--n", bad[i], &o, err, sizeof err), A4W4_EXIT_BADINPUT,
                     "--n '%s'", bad[i]);
        cr_assert_eq(parse_one_value("--size", bad[i], &o, err, sizeof err),
                     A4W4_EXIT_BADINPUT, "--size '%s'", bad[i]);
    }
    cr_assert_eq(parse_one_value("--n", "0", &o, err, sizeof err), A4W4_OPTS_CONTINUE);
    cr_assert_eq(parse_one_value("--n", "-1", &o, err, sizeof err), A4W4_OPTS_CONTINUE);
    cr_assert_eq(o.n, -1);
    long long x;
    cr_assert_eq(a4w4_parse_int("9223372036854775807", 19, LLONG_MIN, LLONG_MAX, &x), 0);
    cr_assert_eq(x, LLONG_MAX);
    cr_assert_eq(a4w4_parse_int("-9223372036854775808", 20, LLONG_MIN, LLONG_MAX, &x), 0);
    cr_assert_eq(x, LLONG_MIN);
    cr_assert_eq(a4w4_parse_int("9223372036854775808", 19, LLONG_MIN, LLONG_MAX, &x), -1);
    a4w4_opt_shard sh;
    static const char *const shards[] = {" 1/2", "+1/2", "1/ 2", "01/2", "1/02", "1/2 ", "2/1"};
    for (size_t i = 0; i < sizeof shards / sizeof shards[0]; i++)
        cr_assert_eq(a4w4_opt_cb_shard(NULL, &sh, shards[i], err, sizeof err), -1, "%s",
                     shards[i]);
    cr_assert_eq(a4w4_opt_cb_shard(NULL, &sh, "3/1000000", err, sizeof err), 0);
    cr_assert(sh.i == 3 && sh.n == 1000000);
    int v[4], n;
    cr_assert_eq(a4w4_parse_int_list("64,128", 32, 1 << 30, 32, v, 4, &n), 0);
    cr_assert(n == 2 && v[0] == 64 && v[1] == 128);
    cr_assert_eq(a4w4_parse_int_list("64, 128", 32, 1 << 30, 32, v, 4, &n), -1);
    cr_assert_eq(a4w4_parse_int_list("64,,128", 32, 1 << 30, 32, v, 4, &n), -1);
    cr_assert_eq(a4w4_parse_int_list("64,96", 32, 1 << 30, 64, v, 4, &n), -1);
}

Test(options, a_list_of_too_many_items_is_refused)
{
    char text[400] = "";
    for (int i = 0; i <= A4W4_OPT_LIST_MAX; i++)
        strcat(text, "x,");
    t_opts o;
    char err[512];
    cr_assert_eq(parse_one_value("--backend", text, &o, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: --backend list has more than 64 items\n");
}

Test(options, a_positional_argument_needs_a_command_that_takes_one)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "--quiet", "extra"};
    a4w4_args args;
    char err[512];
    cr_assert_eq(parse_capture(&t_spec_noargs, &o, ARGC(argv), argv, &args, err, sizeof err),
                 A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: unexpected argument 'extra' (see a4w4check demo --help)\n");
}

Test(options, help_prints_usage_aligned_options_and_footer, .init = cr_redirect_stdout)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "--out", "--help"};
    a4w4_args args;
    cr_assert_eq(a4w4_options_parse(&t_spec, &o, ARGC(argv), argv, &args), A4W4_EXIT_PASS);
    fflush(stdout);
    cr_assert_stdout_eq_str("usage: demo [options] FILE...\n"
                            "\n"
                            "  --quiet         no progress\n"
                            "  --n N           a small integer\n"
                            "  --size S        a size,\n"
                            "                  multiple of 4\n"
                            "  --out DIR       where\n"
                            "  --tuned CSV     repeatable\n"
                            "  --backend LIST  comma-separated\n"
                            "  --format F      md, html or all\n"
                            "  --cb V          counted\n"
                            "\n"
                            "exit: 0 ok\n");
}

Test(options, short_help_after_double_dash_is_an_argument)
{
    t_opts o;
    t_init(&o);
    char *argv[] = {"demo", "--", "-h"};
    a4w4_args args;
    cr_assert_eq(a4w4_options_parse(&t_spec, &o, ARGC(argv), argv, &args), A4W4_OPTS_CONTINUE);
    cr_assert_eq(args.n, 1);
}

/* ---- backend_list ----------------------------------------------------------------------- */

static int check_list(const char *text, size_t max, char *err, size_t len)
{
    a4w4_opt_list list;
    char e[128];
    cr_assert_eq(a4w4_opt_list_split(text, &list, e, sizeof e), 0);
    a4w4_backend_list_opts bo = {"demo", max, 0, 1};
    capture c;
    capture_begin(&c);
    int rc = a4w4_backend_list_check(&bo, &list);
    capture_end(&c, err, len);
    return rc;
}

Test(backend_list, refuses_a_name_given_twice)
{
    char err[512];
    cr_assert_eq(check_list("cpu-asm,cpu-fallback,cpu-asm", 8, err, sizeof err),
                 A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: --backend names cpu-asm twice\n");
}

Test(backend_list, refuses_a_list_naming_nothing_or_too_much)
{
    char err[512];
    cr_assert_eq(check_list("a,b,c", 2, err, sizeof err), A4W4_EXIT_BADINPUT);
    cr_assert_str_eq(err, "a4w4check: demo: --backend names more than 2 backends\n");
    cr_assert_eq(check_list("a,b", 2, err, sizeof err), A4W4_EXIT_PASS);
}

Test(backend_list, opens_the_named_backends_or_closes_them_all)
{
    a4w4_opt_list list;
    char e[128];
    a4w4_backend bk[4];
    size_t n = 9;
    a4w4_backend_list_opts bo = {"demo", 4, 0, 1};
    cr_assert_eq(a4w4_opt_list_split("cpu-asm,cpu-fallback", &list, e, sizeof e), 0);
    cr_assert_eq(a4w4_backend_list_open(&bo, &list, bk, &n), A4W4_EXIT_PASS);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(bk[1].name, "cpu-fallback");
    a4w4_backend_list_close(bk, n);
    cr_assert_eq(a4w4_opt_list_split("cpu-asm,no-such", &list, e, sizeof e), 0);
    cr_assert_eq(a4w4_backend_list_open(&bo, &list, bk, &n), A4W4_EXIT_BADINPUT);
    cr_assert_eq(n, 0);
    bo.mutants = 1;
    cr_assert_eq(a4w4_opt_list_split("mut-pad-ff", &list, e, sizeof e), 0);
    cr_assert_eq(a4w4_backend_list_open(&bo, &list, bk, &n), A4W4_EXIT_PASS);
    cr_assert_eq(n, 1);
    a4w4_backend_list_close(bk, n);
}
