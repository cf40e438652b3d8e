/* jsontext.h — every text of a JSON document UTF-8, so that what is printed is JSON. */
#ifndef A4W4_JSONTEXT_H
#define A4W4_JSONTEXT_H

#include <cjson/cJSON.h>

/* Replace, in j, its siblings after it and everything under them, each object key and string
 * value that is not well-formed UTF-8 (raw bytes of a path, a plugin's name, an
 * --upstream-version) by its a4w4_quote_ascii form, every byte outside printable ASCII as
 * \xNN, so that the document printed is JSON (RFC 8259 §8.1) and every report rendered from it
 * is well-formed (docs/cli/run.md, "Results, resume, shards"). Well-formed text is left as it is. */
void a4w4_json_text_guard(cJSON *j);

#endif
