/* itemfile.c — item names to bundle file names (see itemfile.h). */
#include "itemfile.h"

#include <stdio.h>
#include <string.h>

int a4w4_item_file_name(const char *name, char *buf, size_t len)
{
    static const char ext[] = ".safetensors";
    size_t o = 0;
    if (!name || !*name || !len)
        return -1;
    for (const char *p = name; *p; p++) {
        size_t n = *p == '/' ? 2 : 1;
        if (o + n >= len)
            return -1;
        memcpy(buf + o, *p == '/' ? "__" : p, n);
        o += n;
    }
    if (o + sizeof ext > len)
        return -1;
    memcpy(buf + o, ext, sizeof ext);
    return 0;
}

int a4w4_item_path(const char *dir, const char *name, char *buf, size_t len)
{
    char f[512];
    if (a4w4_item_file_name(name, f, sizeof f))
        return -1;
    int n = snprintf(buf, len, "%s/%s", dir, f);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}
