/*
 * frame_internal.h - length-prefixed framing over a plain buffer.
 */
#ifndef LCT_FRAME_INTERNAL_H
#define LCT_FRAME_INTERNAL_H

#include <stdint.h>

#include "base/bytes_internal.h"

typedef enum lct__frame_status {
    LCT__FRAME_OK = 0,       /* a whole frame */
    LCT__FRAME_END,          /* pos is exactly the end of the data */
    LCT__FRAME_SHORT_PREFIX, /* 1..3 bytes left: a cut length prefix */
    LCT__FRAME_SHORT_BODY,   /* the length says more than is left */
    LCT__FRAME_READ_ERROR,   /* a streamed source could not read */
    LCT__FRAME_TOO_LONG      /* a pipe's frame over its stream limit */
} lct__frame_status;

typedef struct lct__frame {
    uint64_t offset;            /* of the length prefix */
    uint32_t length;            /* body length the prefix states */
    const unsigned char *body;  /* first body byte */
    uint64_t available;         /* body bytes present (< length if short) */
    /* Body bytes at `body` to decode: the length, except for a streamed
     * frame whose first byte already dooms it (see stream.c), of which
     * only the first few bytes are kept. */
    uint64_t kept;
} lct__frame;


/* The frame at pos in data[0..size); pos must be <= size. */
lct__frame_status lct__frame_at(const unsigned char *data, uint64_t size,
                                uint64_t pos, lct__frame *frame);

#endif
