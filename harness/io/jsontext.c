/* jsontext.c — text of a JSON document kept UTF-8 (see jsontext.h). */
#include "jsontext.h"

#include <string.h>

#include "a4w4_quote.h"

/* Length of the UTF-8 sequence starting at s (1..4), or 0 when it is not well-formed
 * (a stray continuation byte, a cut or overlong sequence, a surrogate, above U+10FFFF). */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) || (c == 0xF0 && s[1] < 0x90) ||
        (c == 0xF4 && s[1] > 0x8F))
        return 0;
    return n;
}

/* s in a4w4_quote_ascii's form (malloc'ed with cJSON_malloc) when it is not UTF-8, else NULL
 * (also when out of memory: the text then stays, and is replaced by the first caller that can). */
static char *ascii_form(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n;
    while (*p && (n = utf8_seq(p)))
        p += n;
    if (!*p)
        return NULL;
    size_t len = 4 * strlen(s) + 1;
    char *buf = cJSON_malloc(len);
    return buf ? (char *)a4w4_quote_ascii(s, buf, len) : NULL;
}

void a4w4_json_text_guard(cJSON *j)
{
    for (; j; j = j->next) {
        char *k = j->string ? ascii_form(j->string) : NULL;
        if (k && !(j->type & cJSON_StringIsConst)) {
            cJSON_free(j->string);
            j->string = k;
        } else if (k)
            cJSON_free(k);
        char *v = cJSON_IsString(j) && j->valuestring ? ascii_form(j->valuestring) : NULL;
        if (v) {
            cJSON_free(j->valuestring);
            j->valuestring = v;
        }
        a4w4_json_text_guard(j->child);
    }
}
