/* environment.h — where a run happened, recorded in its results header. */
#ifndef A4W4_ENVIRONMENT_H
#define A4W4_ENVIRONMENT_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Add "environment" to a run's header: compiler (__VERSION__ of this build), git_commit and
 * git_dirty (a4w4_env_git_commit of the source tree: "unknown" unless it is a checkout's top
 * level), host, os (uname), date (UTC, ISO 8601), gpu and driver when the kernel exposes them
 * (amdgpu, nvidia), and tables: the AITER tuned and kernel tables the dispatch oracle reads
 * by default, with their FNV-1a 64 hashes. Replaces an existing "environment". */
void a4w4_environment_json(cJSON *header);

/* FNV-1a 64 of the bytes of the regular file at path, as 16 lowercase hex digits and a NUL
 * in out (20 bytes); "unreadable" when it cannot be opened as a regular file (a FIFO is
 * refused, never read). The hash of the AITER tables in "environment" and of a plugin
 * library in a run header's "backend_files" (docs/cli/run.md, "Results, resume, shards"). */
void a4w4_file_fnv1a64(const char *path, char out[20]);

/* FNV-1a 64 over the regular files directly in dir (not its subdirectories; symbolic links
 * not followed), in name order: each file's name, a NUL, then its bytes; 16 lowercase hex
 * digits and a NUL in out (20 bytes), "unreadable" when dir cannot be listed. The hash of a
 * bundle:DIR backend's outputs in a run header's "backend_files" (docs/cli/run.md, "Results,
 * resume, shards"). */
void a4w4_dir_fnv1a64(const char *dir, char out[20]);

/* The commit of the checkout whose top level is the directory src (real paths compared):
 * writes its HEAD (7..64 lowercase hex digits) into out (outlen bytes, at least 65 for a
 * SHA-256 repository) and sets *dirty (when not NULL) to whether tracked files differ from
 * it; returns 1. Returns 0 with out = "unknown" and *dirty = 0 when src is no checkout, is a
 * subdirectory of another repository (whose commit says nothing about this tree), or git is
 * missing. Runs git (a child process); the results header's environment.git_commit. */
int a4w4_env_git_commit(const char *src, char *out, size_t outlen, int *dirty);

#endif
