/*
 * reader_internal.h - the lct_reader object, shared by reader.c (open,
 * iterate) and index.c (index and scans over the same data).
 */
#ifndef LCT_READER_INTERNAL_H
#define LCT_READER_INTERNAL_H

#include "lct.h"
#include "guard_internal.h"
#include "source_internal.h"

struct lct_reader {
    lct__source source;
    lct_header header;
    unsigned flags;
    uint64_t pos;   /* next frame's offset */
    bool done;      /* end reached: every further lct_next returns 0 */
    lct_stats stats;
    lct_log_fn log;
    void *log_ctx;
    char *name;
    char shown_name[256]; /* name with unprintable bytes escaped */
    int guard_slot;       /* in the SIGBUS guard's registry, or -1 */
};

/* The shrink check every decoded frame passes: did the file lose bytes
 * before frame_end?  Then the frame's bytes may be zeros, not data. */
static inline bool lct__lost_before(const lct_reader *r, uint64_t frame_end,
                                    uint64_t *lost)
{
    *lost = lct__guard_lost(r->guard_slot);
    return *lost < frame_end;
}

#endif
