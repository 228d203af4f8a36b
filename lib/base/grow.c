/*
 * grow.c - the growing byte buffer of grow_internal.h: the sink that
 * rendered text is kept in (JSON keys, SQL columns) and that a sidecar
 * index is laid out in before it is written.
 */
#include "base/grow_internal.h"
#include "lct_core.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int lct__grow_write(void *ctx, const char *data, size_t len)
{
    lct__grow *t = ctx;
    if (t->cap - t->len < len) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap - t->len < len) {
            if (cap > SIZE_MAX / 2)
                return -1;
            cap *= 2;
        }
        char *p = realloc(t->ptr, cap);
        if (!p)
            return -1;
        t->ptr = p;
        t->cap = cap;
    }
    memcpy(t->ptr + t->len, data, len);
    t->len += len;
    return 0;
}
