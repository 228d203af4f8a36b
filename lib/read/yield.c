/*
 * yield.c - the one path from a whole frame to a record, shared by
 * lct_next, parallel scans and lct_index_record: decode it, then believe
 * it only if the file still holds every byte of it.
 *
 * When a file is truncated under a mapping, the page holding the new end
 * reads as zeros past it and later pages fault (zero pages under the
 * guard), so a frame that lost its tail is followed by zeros: the next
 * length prefix reads 0.  Only then, or when the frame did not decode, or
 * at the end of the data, is the file's real size asked for (one fstat).
 */
#include "read/decode_internal.h"
#include "msgpack/fields_internal.h"
#include "read/guard_internal.h"
#include "read/yield_internal.h"
#include "lct_read.h"

#include <string.h>

bool lct__yield_shrank_before(const lct__source *s, int guard_slot,
                              uint64_t end, bool suspect, uint64_t *cut)
{
    if (s->kind != LCT__SOURCE_MMAP)
        return false;
    /* Read the next prefix first: if it lies past the new end it faults
     * now, and the guard's record below already knows. */
    bool zeros_next = s->size < LCT__PREFIX_SIZE ||
                      end > s->size - LCT__PREFIX_SIZE ||
                      lct__be32(s->data + end) == 0;
    uint64_t lost = lct__guard_lost(guard_slot);
    if (!suspect && !zeros_next && lost == LCT__NOTHING_LOST)
        return false;
    uint64_t real;
    if (lct__source_real_size(s, &real) != LCT_OK)
        real = s->size; /* cannot tell: trust what the guard saw */
    *cut = real < lost ? real : lost;
    return *cut < end;
}

lct__outcome lct__frame_decode(unsigned flags, const lct__frame *f,
                               lct_record *rec, char *why)
{
    if (f->kept < f->length) { /* a streamed body its first bytes refused */
        lct__fields_doomed_why(f->body, (size_t)f->kept, f->length, why);
        return LCT__SKIPPED;
    }
    if (lct__record_decode(f->body, (size_t)f->kept, flags, rec, why) !=
        LCT_OK)
        return LCT__SKIPPED;
    rec->offset = f->offset;
    rec->length = f->length;
    return LCT__RECORD;
}

lct__outcome lct__yield_record(unsigned flags, const lct__source *s,
                               int guard_slot, const lct__frame *f,
                               lct_record *rec, char *why, uint64_t *cut)
{
    uint64_t end = f->offset + LCT__PREFIX_SIZE + (uint64_t)f->length;
    lct__outcome got = lct__frame_decode(flags, f, rec, why);
    if (lct__yield_shrank_before(s, guard_slot, end, got != LCT__RECORD,
                                 cut))
        return LCT__LOST;
    return got;
}

/* How many bytes of zeros p[0..n) starts with, in whole empty frames
 * (4 bytes each). */
static size_t zero_frames(const unsigned char *p, size_t n)
{
    static const unsigned char zero[64];
    size_t at = 0;
    while (at + sizeof zero <= n && memcmp(p + at, zero, sizeof zero) == 0)
        at += sizeof zero;
    while (at + 4 <= n && memcmp(p + at, zero, 4) == 0)
        at += 4;
    return at;
}

size_t lct__zero_run(unsigned flags, const lct__source *s, int guard_slot,
                     uint64_t pos, const unsigned char *p, size_t n,
                     char *why)
{
    size_t at = zero_frames(p, n);
    uint64_t cut;
    if (at < 8 || lct__yield_shrank_before(s, guard_slot, pos + at, true, &cut))
        return 0;
    lct__empty_frame_why(flags, why);
    return at;
}

void lct__empty_frame_why(unsigned flags, char *why)
{
    static const unsigned char none[1];
    lct__frame empty = {.body = none};
    lct_record rec;
    (void)lct__frame_decode(flags, &empty, &rec, why);
}
