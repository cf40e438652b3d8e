/* discover_plan.h — the probe directory's plan file, DIR/discover.json (contracts §4.4: the
 * options the probes were planned with, so that a later `discover --probes DIR` plans the same
 * rounds): format "a4w4-discover-probes/1", tool_version, shapes ("MxNxK" strings), groups (the
 * shape each one's probes are shared with), validate_only (0/1 per shape), seed (a decimal
 * string), repeats, validate_cases, validate_outputs. Nothing here prints; errors come back as
 * one line for the caller's message. */
#ifndef A4W4_DISCOVER_PLAN_H
#define A4W4_DISCOVER_PLAN_H

#include <stddef.h>

#include "discover.h"

/* The plan file's name inside a probe directory. */
#define A4W4_DISCOVER_PLAN_FILE "discover.json"

/* The largest discover.json or round manifest read: a round's manifest lists every probe
 * call (thousands of names at the largest plans), as an output bundle's may (bundle_dir.c). */
#define A4W4_DISCOVER_JSON_MAX (64u << 20)

/* Write DIR/discover.json for o (atomically; DIR exists), tool_version recorded. Returns 0,
 * or -1 with err set (the write's reason, or "out of memory"). */
int a4w4_discover_plan_write(const char *dir, const a4w4_discover_opts *o,
                             const char *tool_version, char *err, size_t errlen);

/* Read DIR/discover.json into *o: shapes, groups and validate-only marks malloc'ed into
 * *shapes, *groups, *vo (o points at them; a plan without "validate_only" probes every
 * shape). Returns 0, or -1 with all three NULL and err set: why the file could not be read,
 * or "not a probe directory (PATH: FORMAT with ...)" for one that breaks the format. */
int a4w4_discover_plan_read(const char *dir, a4w4_discover_opts *o, a4w4_shape **shapes,
                            size_t **groups, unsigned char **vo, char *err, size_t errlen);

/* The whole regular file at path (at most A4W4_DISCOVER_JSON_MAX bytes; a FIFO is refused
 * at once, never read: io/fsutil.h a4w4_read_regular), malloc'ed and NUL-terminated, or NULL
 * with why set. */
char *a4w4_discover_read_json(const char *path, char *why, size_t whylen);

#endif
