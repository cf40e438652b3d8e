/* a4w4_quote.c — input text quoted inside one-line error messages (see a4w4_quote.h). */
#include "a4w4_quote.h"

#include <stdio.h>
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

/* The width of byte c in a4w4_quote_ascii's output. */
static size_t ascii_width(unsigned char c)
{
    return c >= 0x20 && c < 0x7F ? 1 : 4;
}

const char *a4w4_quote_ascii(const char *s, char *buf, size_t len)
{
    if (!len)
        return buf;
    if (!s)
        s = "(null)";
    size_t need = 0;
    for (const char *p = s; *p; p++)
        need += ascii_width((unsigned char)*p);
    int cut = need > len - 1;
    size_t room = cut && len >= 4 ? len - 4 : len - 1, o = 0; /* "..." after a cut */
    for (; *s && o + ascii_width((unsigned char)*s) <= room; s++) {
        unsigned char c = (unsigned char)*s;
        if (ascii_width(c) == 1)
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, 5, "\\x%02x", c);
    }
    if (cut && len >= 4) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}
