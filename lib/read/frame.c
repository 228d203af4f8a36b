/*
 * frame.c - finding frames: [u32 big-endian length][body], checked against
 * the size of the data, never against what the length claims.
 *
 * It knows no file descriptors or paths, so tests feed it memory.
 */
#include "read/frame_internal.h"
#include "lct_read.h"

lct__frame_status lct__frame_at(const unsigned char *data, uint64_t size,
                                uint64_t pos, lct__frame *frame)
{
    uint64_t left = size - pos;
    frame->offset = pos;
    frame->length = 0;
    /* An empty input may have no buffer at all: NULL + 0 is undefined. */
    frame->body = data ? data + pos : data;
    frame->available = 0;
    frame->kept = 0;
    if (left == 0)
        return LCT__FRAME_END;
    if (left < LCT__PREFIX_SIZE) {
        frame->available = left;
        return LCT__FRAME_SHORT_PREFIX;
    }
    frame->length = lct__be32(data + pos);
    frame->body = data + pos + LCT__PREFIX_SIZE;
    frame->available = left - LCT__PREFIX_SIZE;
    /* A corrupt, huge length looks exactly like a body cut short. */
    if (frame->length > left - LCT__PREFIX_SIZE)
        return LCT__FRAME_SHORT_BODY;
    frame->available = frame->length;
    frame->kept = frame->length;
    return LCT__FRAME_OK;
}
