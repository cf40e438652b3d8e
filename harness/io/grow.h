/* grow.h — the one growable array (as git's ALLOC_GROW): room for `need` elements in a
 * malloc'ed array ptr of capacity cap, doubling from `first`. Header only; every room may use
 * it.
 *
 *   if (A4W4_GROW(l->items, l->n + 1, l->cap, 8))
 *       return NULL; // out of memory: l->items and l->cap unchanged, still valid
 *   l->items[l->n++] = x;
 *
 * ptr and cap must be lvalues (each is evaluated more than once, need too); cap is counted in
 * elements. A4W4_GROW is 0 when the array holds room for need elements (grown with realloc
 * when it did not), -1 when it cannot (the size overflows or realloc fails: ptr and cap are
 * unchanged, so the caller frees ptr as before). */
#ifndef A4W4_GROW_H
#define A4W4_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* ptr's storage grown to hold need elements of elem bytes: the new storage, *cap set; or ptr
 * itself, *cap unchanged, when it cannot grow. */
static inline void *a4w4_grow_to(void *ptr, size_t elem, size_t need, size_t *cap, size_t first)
{
    size_t c = *cap ? *cap : (first ? first : 1);
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return ptr;
        c *= 2;
    }
    if (c > SIZE_MAX / elem)
        return ptr;
    void *q = realloc(ptr, c * elem);
    if (!q)
        return ptr;
    *cap = c;
    return q;
}

#define A4W4_GROW(ptr, need, cap, first)                                                     \
    ((need) <= (cap) ? 0                                                                     \
                     : ((ptr) = a4w4_grow_to((ptr), sizeof *(ptr), (need), &(cap), (first)), \
                        (need) <= (cap) ? 0 : -1))

#endif
