/*
 * yield_internal.h - the one path from a whole frame to a record, shared
 * by lct_next, parallel scans and lct_index_record (yield.c): decoding,
 * and the shrink check a mapped frame passes before it is believed.  It
 * knows sources and the guard, not the reader built on them.
 */
#ifndef LCT_YIELD_INTERNAL_H
#define LCT_YIELD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "read/frame_internal.h"
#include "lct_read.h"
#include "read/source_internal.h"

/* What one whole frame turned out to be. */
typedef enum lct__outcome {
    LCT__RECORD,  /* rec is filled */
    LCT__SKIPPED, /* malformed: the reason is in why */
    LCT__LOST     /* the file no longer holds it: *cut says from where */
} lct__outcome;

/* Decoding alone, for frames that are copies (a stream's), which no
 * shrink can change after they were read. */
lct__outcome lct__frame_decode(unsigned flags, const lct__frame *f,
                               lct_record *rec, char *why);

/* Whether bytes of the mapped source s before `end` are gone (true, *cut
 * where they start); `suspect`: the frame did not decode, or is known to
 * be short.  guard_slot: the source's slot in the SIGBUS guard, or -1. */
bool lct__yield_shrank_before(const lct__source *s, int guard_slot,
                              uint64_t end, bool suspect, uint64_t *cut);

/* Decode f (flags: LCT_LAZY), then believe it only if s still holds
 * every byte of it. */
lct__outcome lct__yield_record(unsigned flags, const lct__source *s,
                               int guard_slot, const lct__frame *f,
                               lct_record *rec, char *why, uint64_t *cut);

/*
 * A run of empty frames (zero bytes where frames should be) at `pos` of
 * the mapped or streamed bytes p[0..n): its length in bytes when it holds
 * two frames or more and, on a mapping, the file still holds all of it
 * (one fstat for the run, after its bytes were read: zeros may be a file
 * that shrank, the guard's zero pages); else 0, and the usual path takes
 * the frame.  `why` gets the reason one empty frame is skipped.
 */
size_t lct__zero_run(unsigned flags, const lct__source *s, int guard_slot,
                     uint64_t pos, const unsigned char *p, size_t n,
                     char *why);

/* The reason an empty frame is skipped, into why (as decoding says it). */
void lct__empty_frame_why(unsigned flags, char *why);

#endif
