/*
 * source_internal.h - where a trace's bytes come from: a read-only
 * mapping, a heap buffer read from a pipe, or a caller's buffer.
 */
#ifndef LCT_SOURCE_INTERNAL_H
#define LCT_SOURCE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "lct.h"

typedef enum lct__source_kind {
    LCT__SOURCE_NONE = 0,
    LCT__SOURCE_MMAP,     /* munmap at close */
    LCT__SOURCE_HEAP,     /* free at close */
    LCT__SOURCE_BORROWED  /* the caller's; nothing to release */
} lct__source_kind;

typedef struct lct__source {
    const unsigned char *data;
    uint64_t size;
    lct__source_kind kind;
    int fd; /* kept for lct_refresh (LCT_FOLLOW on a mapped file), else -1 */
} lct__source;

/*
 * Fill src from fd: map a non-empty regular file (unless LCT_NO_MMAP),
 * otherwise read to end of input.  name is for messages only.  A directory
 * is LCT_ERR_SYS with EISDIR.  An empty input succeeds with size 0 (the
 * caller reports "empty").
 */
int lct__source_from_fd(int fd, const char *name, unsigned flags,
                        lct__source *src, lct_error *err);

/* Release what src holds; safe on a zeroed or released source. */
void lct__source_release(lct__source *src);

/*
 * Map the kept descriptor again at the file's current size.  On success
 * the old mapping is gone; *changed says whether anything moved.
 */
int lct__source_remap(lct__source *src, const char *name, bool *changed,
                      lct_error *err);

#endif
