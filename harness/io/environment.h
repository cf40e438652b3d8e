/* environment.h — where a run happened, recorded in its results header. */
#ifndef A4W4_ENVIRONMENT_H
#define A4W4_ENVIRONMENT_H

#include <cjson/cJSON.h>

/* Add "environment" to a run's header: compiler (__VERSION__ of this build), git_commit
 * (`git rev-parse HEAD` in the source tree, "unknown" outside a repository) and git_dirty,
 * host, os (uname), date (UTC, ISO 8601), gpu and driver when the kernel exposes them
 * (amdgpu, nvidia), and tables: the AITER tuned and kernel tables the dispatch oracle reads
 * by default, with their FNV-1a 64 hashes. Replaces an existing "environment". */
void a4w4_environment_json(cJSON *header);

#endif
