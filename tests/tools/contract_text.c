/* contract_text.c — the canonical text of a contract (contracts §4.2), for the CLI tests:
 *   contract_text TEXT          TEXT parsed and printed canonically
 *   contract_text --plugin LIB  the contract plugin LIB declares, canonically
 *   contract_text --file FILE   the first rule of a contract file (its contract), canonically
 * A tree that is ordered(S)'s tree prints as ordered(S), as `discover` writes it. Exit 0, or 2
 * with one line on stderr (unparsable text, no plugin, no rule). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_plugin.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"

static int print(const char *text)
{
    a4w4_contract_set set;
    char err[512], out[A4W4_CONTRACT_MAX];
    if (a4w4_contract_set_parse(text, &set, err, sizeof err) != A4W4_OK || set.n < 1) {
        fprintf(stderr, "contract_text: %s\n", err);
        return 2;
    }
    a4w4_contract c = set.rules[0].contract;
    a4w4_contract_set_free(&set);
    if (c.kind == A4W4_CONTRACT_TREE && c.tree.nbounds == 0) {
        a4w4_tree d;
        a4w4_tree_defaults(&d);
        d.split = c.tree.split;
        if (!memcmp(&d, &c.tree, sizeof d))
            c = (a4w4_contract){A4W4_CONTRACT_ORDERED, d.split, {0}};
    }
    if (a4w4_contract_format(&c, out, sizeof out) < 0)
        return 2;
    puts(out);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--plugin")) {
        void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
        a4w4_plugin_query_fn q = h ? (a4w4_plugin_query_fn)dlsym(h, A4W4_PLUGIN_QUERY_SYMBOL) : NULL;
        const a4w4_plugin_info *info = q ? q() : NULL;
        if (!info || !info->contract) {
            fprintf(stderr, "contract_text: %s: no plugin (%s)\n", argv[2], dlerror());
            return 2;
        }
        return print(info->contract);
    }
    if (argc == 3 && !strcmp(argv[1], "--file")) {
        FILE *f = fopen(argv[2], "rb");
        static char buf[1 << 16];
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        if (!f) {
            fprintf(stderr, "contract_text: cannot read %s\n", argv[2]);
            return 2;
        }
        return print(buf);
    }
    if (argc == 2)
        return print(argv[1]);
    fprintf(stderr, "usage: contract_text TEXT | --plugin LIB | --file FILE\n");
    return 2;
}
