/*
 * reader_internal.h - the lct_reader object, shared by reader.c (open,
 * iterate) and index.c (index and scans over the same data).
 */
#ifndef LCT_READER_INTERNAL_H
#define LCT_READER_INTERNAL_H

#include "lct.h"
#include "guard_internal.h"
#include "frame_internal.h"
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

/* The shrink check every mapped frame passes before it is believed (see
 * yield.c): true when bytes before `end` are gone; *cut is where they
 * start.  `suspect`: the frame did not decode, or is known to be short. */
bool lct__shrank_before(const lct_reader *r, uint64_t end, bool suspect,
                        uint64_t *cut);

/* What one whole frame turned out to be. */
typedef enum lct__outcome {
    LCT__RECORD,  /* rec is filled */
    LCT__SKIPPED, /* malformed: the reason is in why */
    LCT__LOST     /* the file no longer holds it: *cut says from where */
} lct__outcome;

/* Decoding alone, for frames that are copies (a stream's), which no
 * shrink can change after they were read (yield.c). */
lct__outcome lct__frame_decode(unsigned flags, const lct__frame *f,
                               lct_record *rec, char *why);

/* The one path from a whole frame to a record (yield.c). */
lct__outcome lct__frame_record(const lct_reader *r, const lct__frame *f,
                               lct_record *rec, char *why, uint64_t *cut);

#endif
