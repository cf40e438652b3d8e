/* example_command_main.c — runs the worked command example of docs/architecture.md ("Adding a
 * command"; extracted at build time into cmd_hello.c) as main.c would: `hello --help` prints
 * the usage with the option lines the options table generates (exit 0); `hello` lists every
 * registered backend type; `hello --contract ordered(1)` only the ordered(1) ones, cpu-asm
 * among them; an unknown option and a stray argument are usage errors (exit 2). Exit 0 when
 * every expectation holds, 1 with one line per failure. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "a4w4check.h"
#include "registry.h"

int cmd_hello(int argc, char **argv);

/* Run cmd_hello on args with standard output captured into out; returns its exit code. */
static int run_hello(int argc, char **argv, char *out, size_t outlen)
{
    fflush(stdout);
    FILE *f = tmpfile();
    int saved = dup(1);
    if (!f || saved < 0 || dup2(fileno(f), 1) < 0) {
        perror("docs_example_command");
        return -1;
    }
    int rc = cmd_hello(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(f);
    size_t got = fread(out, 1, outlen - 1, f);
    out[got] = '\0';
    fclose(f);
    return rc;
}

static int expect(int cond, const char *what)
{
    printf("%s %s\n", cond ? "PASS" : "FAIL", what);
    return !cond;
}

int main(void)
{
    static char out[1 << 16];
    int bad = 0;
    size_t ntypes;
    a4w4_backend_types(&ntypes);

    char *help[] = {"hello", "--help"};
    int rc = run_hello(2, help, out, sizeof out);
    bad += expect(rc == A4W4_EXIT_PASS && strstr(out, "usage: a4w4check hello") &&
                      strstr(out, "  --contract TEXT") && strstr(out, "  --gpu"),
                  "hello --help: usage and the generated option lines, exit 0");

    char *all[] = {"hello"};
    rc = run_hello(1, all, out, sizeof out);
    size_t lines = 0;
    for (const char *p = out; (p = strchr(p, '\n')); p++)
        lines++;
    bad += expect(rc == A4W4_EXIT_PASS && lines == ntypes && strstr(out, "cpu-asm  ordered(1)"),
                  "hello: one line per registered backend type");

    char *ordered[] = {"hello", "--contract", "ordered(1)"};
    rc = run_hello(3, ordered, out, sizeof out);
    bad += expect(rc == A4W4_EXIT_PASS && strstr(out, "cpu-asm  ordered(1)") &&
                      !strstr(out, "bytes"),
                  "hello --contract ordered(1): the ordered(1) types only");

    char *unknown[] = {"hello", "--frobnicate"};
    bad += expect(run_hello(2, unknown, out, sizeof out) == A4W4_EXIT_BADINPUT,
                  "hello --frobnicate: a usage error, exit 2");
    char *stray[] = {"hello", "extra"};
    bad += expect(run_hello(2, stray, out, sizeof out) == A4W4_EXIT_BADINPUT,
                  "hello extra: a positional argument to a command that takes none, exit 2");
    return bad ? 1 : 0;
}
