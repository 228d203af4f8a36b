/*
 * grow_internal.h - a growing byte buffer as an lct_write_fn sink, for
 * bytes built to be kept rather than streamed: the JSON writer's text of
 * non-str map keys, the SQL modules' JSON columns, a sidecar index.
 */
#ifndef LCT_GROW_INTERNAL_H
#define LCT_GROW_INTERNAL_H

#include <stddef.h>

typedef struct lct__grow {
    char *ptr; /* NULL until the first write */
    size_t len, cap;
} lct__grow;

/* Append len bytes to the lct__grow at ctx, doubling its room as needed;
 * 0, or -1 (out of memory, the buffer unchanged).  Defined in grow.c. */
int lct__grow_write(void *ctx, const char *data, size_t len);

#endif
