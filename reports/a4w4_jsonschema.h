/* a4w4_jsonschema.h — a small JSON Schema (draft 2020-12) validator for the subset of keywords
 * reports/schema/results.schema.json uses.
 *
 * Why our own: Debian packages no JSON Schema validator for C (python3-jsonschema is the packaged
 * one; the CTest tests use it to check the same schema independently), and `a4w4check report`
 * must refuse an invalid results document by itself with exit 2. The subset:
 *   type (a name or a list of names), enum, const, properties, required, additionalProperties
 *   (true, false or a schema), items (one schema), minItems, maxItems, minimum, maximum,
 *   minLength, maxLength (counted in code points), pattern (POSIX extended regex, searched
 *   unanchored as ECMA-262 patterns are), $ref (local "#/..." JSON pointers only), allOf,
 *   anyOf, oneOf, not, and the annotations $schema, $id, $defs, $comment, title, description,
 *   default, examples.
 * a4w4_jsonschema_check refuses a schema using any other keyword, so a schema edit cannot be
 * silently ignored by this validator. Nothing here prints. */
#ifndef A4W4_JSONSCHEMA_H
#define A4W4_JSONSCHEMA_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Check that schema uses only the subset above, that every $ref resolves and every pattern
 * compiles. Returns 0, or -1 with one line in err naming the schema location and the rule. */
int a4w4_jsonschema_check(const cJSON *schema, char *err, size_t errlen);

/* Validate instance against schema (the root, for $ref resolution). Returns 0 when valid,
 * else -1 with one line in err: the instance location as a JSON pointer ("/cases/3/verdict")
 * and the rule it breaks. Reports the first violation found (depth first, document order). */
int a4w4_jsonschema_validate(const cJSON *schema, const cJSON *instance, char *err, size_t errlen);

#endif
