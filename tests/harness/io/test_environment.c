/* test_environment.c — the results header's git_commit: recorded only when the source tree
 * is the top level of its own checkout, "unknown" inside another repository or outside one. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "environment.h"

static char dir[256];

/* A temporary git repository with one commit and a subdirectory "sub"; its HEAD in head. */
static int make_repo(char head[72])
{
    snprintf(dir, sizeof dir, "/tmp/a4w4_envXXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && git init -q . && mkdir sub && echo x > sub/f && git add sub/f && "
             "git -c user.name=t -c user.email=t@t -c commit.gpgsign=false commit -q -m t",
             dir);
    if (system(cmd) != 0)
        return 0;
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD", dir);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cr_assert_not_null(fgets(head, 72, p));
    pclose(p);
    head[strcspn(head, "\n")] = 0;
    return 1;
}

static void cleanup(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(environment, commit_of_a_checkout_top_level)
{
    char head[72], got[72];
    int dirty = -1;
    cr_assert(make_repo(head), "git is needed for this test");
    cr_expect_eq(a4w4_env_git_commit(dir, got, sizeof got, &dirty), 1);
    cr_expect_str_eq(got, head);
    cr_expect_eq(dirty, 0);
    char f[300];
    snprintf(f, sizeof f, "%s/sub/f", dir);
    FILE *w = fopen(f, "w");
    cr_assert_not_null(w);
    fputs("changed\n", w);
    fclose(w);
    cr_expect_eq(a4w4_env_git_commit(dir, got, sizeof got, &dirty), 1);
    cr_expect_eq(dirty, 1);
    cleanup();
}

/* A source tree unpacked inside another repository: that repository's HEAD is not its commit. */
Test(environment, unknown_inside_an_enclosing_repository)
{
    char head[72], got[72], sub[300];
    int dirty = -1;
    cr_assert(make_repo(head), "git is needed for this test");
    snprintf(sub, sizeof sub, "%s/sub", dir);
    cr_expect_eq(a4w4_env_git_commit(sub, got, sizeof got, &dirty), 0);
    cr_expect_str_eq(got, "unknown");
    cr_expect_eq(dirty, 0);
    /* the same top level reached through another spelling still counts */
    snprintf(sub, sizeof sub, "%s/sub/..", dir);
    cr_expect_eq(a4w4_env_git_commit(sub, got, sizeof got, NULL), 1);
    cr_expect_str_eq(got, head);
    cleanup();
}

Test(environment, unknown_outside_any_repository)
{
    char got[72];
    snprintf(dir, sizeof dir, "/tmp/a4w4_envXXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    cr_expect_eq(a4w4_env_git_commit(dir, got, sizeof got, NULL), 0);
    cr_expect_str_eq(got, "unknown");
    cr_expect_eq(a4w4_env_git_commit("/nonexistent/a4w4", got, sizeof got, NULL), 0);
    cr_expect_str_eq(got, "unknown");
    cleanup();
}
