/* a4w4_quote.c — input text quoted inside one-line error messages (see a4w4_quote.h). */
#include "a4w4_quote.h"

#include <string.h>

const char *a4w4_quote(const char *s, char *buf, size_t len)
{
    if (!len)
        return buf;
    if (!s)
        s = "(null)";
    size_t i = 0;
    for (; s[i] && i < len - 1; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[i] = (c < 0x20 || c == 0x7F) ? '?' : (char)c;
    }
    if (s[i] && len >= 4)
        memcpy(buf + len - 4, "...", 3);
    buf[i] = '\0';
    return buf;
}
