/* contractfile.c — see contractfile.h. */
#include "contractfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_quote.h"
#include "fsutil.h"

a4w4_hstatus a4w4_contract_file_read(const char *path, a4w4_contract_set *set, char *err,
                                     size_t errlen)
{
    char shown[256];
    memset(set, 0, sizeof *set);
    a4w4_quote_ascii(path, shown, sizeof shown); /* a hidden byte shown: "exact\xe2\x80\x8b" */
    size_t n = 0;
    int missing;
    char why[4400];
    char *text = a4w4_read_regular(path, A4W4_CONTRACT_FILE_MAX, &n, &missing, why, sizeof why);
    if (!text) {
        size_t pl = strlen(path); /* why opens with the raw path: show ours, quoted */
        const char *rule = strncmp(why, path, pl) ? ": cannot read" : why + pl;
        snprintf(err, errlen, "contract file %s%s", shown, rule);
        return strstr(why, "out of memory") ? A4W4_ST_NOMEM : A4W4_ST_BADINPUT;
    }
    a4w4_hstatus st = A4W4_ST_BADINPUT;
    if (memchr(text, '\0', n))
        snprintf(err, errlen, "contract file %s: holds a NUL byte (a contract file is text)",
                 shown);
    else {
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
