/* sanitizer_options.c — the options a sanitizer build of a4w4check starts with, built into the
 * binary (CMake's A4W4_SANITIZE defines A4W4_SANITIZER_DEFAULTS and links this file into the
 * a4w4check executable only), so that such a build run anywhere, not only under ci/test.sh's
 * environment, ends a sanitizer report with its own exit code: UBSan 86, ASan and
 * LeakSanitizer 87, never 1 (a mismatch, a4w4check.h) and never 0. UBSAN_OPTIONS and
 * ASAN_OPTIONS in the environment still apply on top (the runtimes read them after these).
 * tests/cli/sanitizer_exit_codes.sh holds these values. */
#ifdef A4W4_SANITIZER_DEFAULTS

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

__attribute__((used, visibility("default"))) const char *__asan_default_options(void)
{
    return "detect_leaks=1:halt_on_error=1:exitcode=87";
}

__attribute__((used, visibility("default"))) const char *__ubsan_default_options(void)
{
    return "halt_on_error=1:print_stacktrace=1:exitcode=86";
}

#else
typedef int a4w4_no_sanitizer_options; /* a translation unit is never empty (ISO C) */
#endif
