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
    lct_status status; /* sticky: the worst met (lct_reader_status) */
    lct_log_fn log;
    void *log_ctx;
    char *name;
    char shown_name[256]; /* name with unprintable bytes escaped */
    int guard_slot;       /* in the SIGBUS guard's registry, or -1 */
    /* The header frame's body, copied when the source cannot keep it
     * (a stream reuses its buffer; a followed file is mapped anew). */
    unsigned char *header_copy;
};

/*
 * The shrink check every mapped frame passes before it is believed.  When
 * a file is truncated under a mapping, the page holding the new end reads
 * as zeros past it and later pages fault (zero pages under the guard), so
 * a frame that lost its tail is followed by zeros: the next length prefix
 * reads 0.  Only then, or when the frame did not decode (`suspect`), or at
 * the end of the data, is the file's real size asked for (one fstat).
 * True when bytes before `end` are gone; *cut is where they start.
 */
bool lct__shrank_before(const lct_reader *r, uint64_t end, bool suspect,
                        uint64_t *cut);

#endif
