/* fuzz_plugin_lib.c — the stand-in plugin fuzz_plugin_info loads: a shared library exporting
 * the plugin ABI (harness/backends/a4w4_plugin.h) whose a4w4_plugin_query returns whatever
 * info struct the fuzz target set last (a4w4_fuzz_plugin_set). The target dlopen()s this
 * library itself first, so the plugin backend's dlopen returns the same handle and sees the
 * same global. Test-only: never install or load it elsewhere. */
#include "a4w4_plugin.h"

static const a4w4_plugin_info *current;

/* Set what the next a4w4_plugin_query returns (NULL: the plugin refuses to load). */
A4W4_PLUGIN_EXPORT void a4w4_fuzz_plugin_set(const a4w4_plugin_info *info)
{
    current = info;
}

A4W4_PLUGIN_EXPORT const a4w4_plugin_info *a4w4_plugin_query(void)
{
    return current;
}
