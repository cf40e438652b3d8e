/* contractfile.c — see contractfile.h. */
#include "contractfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_quote.h"

a4w4_hstatus a4w4_contract_file_read(const char *path, a4w4_contract_set *set, char *err,
                                     size_t errlen)
{
    char shown[256];
    memset(set, 0, sizeof *set);
    a4w4_quote(path, shown, sizeof shown);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "contract file %s: cannot read (%s)", shown, strerror(errno));
        return A4W4_ST_BADINPUT;
    }
    char *text = malloc(A4W4_CONTRACT_FILE_MAX + 1);
    if (!text) {
        fclose(f);
        snprintf(err, errlen, "contract file %s: out of memory", shown);
        return A4W4_ST_NOMEM;
    }
    size_t n = fread(text, 1, A4W4_CONTRACT_FILE_MAX + 1, f);
    int failed = ferror(f);
    fclose(f);
    a4w4_hstatus st = A4W4_ST_BADINPUT;
    char why[512];
    if (failed)
        snprintf(err, errlen, "contract file %s: cannot read (read error)", shown);
    else if (n > A4W4_CONTRACT_FILE_MAX)
        snprintf(err, errlen, "contract file %s: larger than %u bytes", shown,
                 A4W4_CONTRACT_FILE_MAX);
    else if (memchr(text, '\0', n))
        snprintf(err, errlen, "contract file %s: holds a NUL byte (a contract file is text)",
                 shown);
    else {
        text[n] = '\0';
        int rc = a4w4_contract_set_parse(text, set, why, sizeof why);
        if (rc == A4W4_OK)
            st = A4W4_ST_OK;
        else if (rc == A4W4_ENOMEM) {
            snprintf(err, errlen, "contract file %s: out of memory", shown);
            st = A4W4_ST_NOMEM;
        } else
            snprintf(err, errlen, "contract file %s: %s", shown, why);
    }
    free(text);
    return st;
}
