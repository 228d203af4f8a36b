/*
 * stream.c - the streaming source: frames read with read(2) (pipes) or
 * pread(2) (regular files) into one reused buffer, one frame at a time.
 *
 * Memory is bounded by the largest frame, not by the input: the buffer
 * (256 KiB to start) holds the current frame and what was read past it,
 * and grows only when a frame's bytes have arrived and do not fit, never
 * by what a length prefix claims.  Frames are consumed by moving an
 * index; bytes are moved to the front only when the tail runs short.
 *
 * A frame whose first body bytes already refuse it (not a msgpack map, a
 * map claiming more pairs than the body could hold, or a first key that
 * is not a str: no header or record can begin so) can never decode, so
 * past its first few bytes its body is counted, not kept (on a regular
 * file, stepped over unread): `yes | lct info -` costs the one buffer,
 * and the answer (malformed, or truncated if the input ends first) is
 * still the one the reference reader gives after reading the same bytes.
 * Any other frame of a pipe longer than max_frame is read up to that
 * limit and refused if the input goes on, so what a pipe can make the
 * reader hold has a bound.
 */
#include "msgpack/msgpack_internal.h"
#include "read/source_internal.h"
#include "lct_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The buffer's first size, and the least room worth a read(2): reads of
 * 256 KiB are what `dd bs=256k` (the read limit in bench/ratios) uses. */
#define STREAM_CHUNK (256 * 1024)
/* Body bytes kept of a doomed frame: enough for a map head and a key's
 * head, so the decoder names the reason it would from the whole body. */
#define DOOMED_KEEP 16

/* Where the current frame starts in the buffer (a valid pointer even
 * before anything was read, so that no arithmetic is done on NULL). */
static const unsigned char *at_start(const lct__source *s)
{
    /* as long as a prefix, which is all the compiler cannot rule out
     * being read from here (have() is 0 then) */
    static const unsigned char nothing[LCT__PREFIX_SIZE + DOOMED_KEEP];
    return s->buf ? s->buf + s->start : nothing;
}

/* The current frame's bytes in the buffer: buf[start..fill). */
static size_t have(const lct__source *s)
{
    return s->fill - s->start;
}

/* Read once into into[0..room); returns bytes read, 0 at end of input, -1
 * on error (errno in read_errno). */
static ssize_t read_some(lct__source *s, unsigned char *into, size_t room)
{
    for (;;) {
        ssize_t got = s->seekable
                          ? pread(s->fd, into, room, (off_t)s->consumed)
                          : read(s->fd, into, room);
        if (got >= 0) {
            s->consumed += (uint64_t)got;
            if (s->consumed > s->size)
                s->size = s->consumed;
            return got;
        }
        if (errno != EINTR) {
            s->read_errno = errno;
            return -1;
        }
    }
}

/* Keep mode: set the buffer aside, its frames' views still valid, until
 * release; the source has none after. */
static bool keep_buffer(lct__source *s)
{
    if (!s->buf)
        return true;
    unsigned char **list = reallocarray(s->retired, s->nretired + 1,
                                        sizeof *list);
    if (!list)
        return false;
    s->retired = list;
    s->retired[s->nretired++] = s->buf;
    s->buf = NULL;
    s->cap = 0;
    return true;
}

/* Keep mode: the full buffer is set aside with every frame in it, and a
 * new one (room for twice the current frame, at least a chunk) takes the
 * current frame's bytes read so far. */
static bool retire(lct__source *s)
{
    size_t now = have(s);
    size_t cap = now > STREAM_CHUNK / 2 ? 2 * now : STREAM_CHUNK;
    if (now > SIZE_MAX / 4)
        return false;
    unsigned char *fresh = malloc(cap);
    if (!fresh)
        return false;
    if (now)
        memcpy(fresh, s->buf + s->start, now);
    if (!keep_buffer(s)) {
        free(fresh);
        return false;
    }
    s->buf = fresh;
    s->cap = cap;
    s->base += s->start;
    s->fill = now;
    s->start = 0;
    return true;
}

/* Room for the next read: move the current frame to the front when the
 * tail runs short (once per buffer, not per frame), and grow (doubling)
 * only when the frame's bytes already fill it: never by what a length
 * claims, only by what has arrived. */
static bool make_room(lct__source *s)
{
    if (s->cap - s->fill >= STREAM_CHUNK / 4)
        return true;
    if (s->keep)
        return retire(s);
    if (s->start > 0) {
        memmove(s->buf, s->buf + s->start, have(s));
        s->fill -= s->start;
        s->base += s->start;
        s->start = 0;
        if (s->cap - s->fill >= STREAM_CHUNK / 4)
            return true;
    }
    size_t cap = s->cap ? s->cap : STREAM_CHUNK;
    if (s->cap) {
        if (cap > SIZE_MAX / 2)
            return false;
        cap *= 2;
    }
    unsigned char *grown = realloc(s->buf, cap);
    if (!grown)
        return false;
    s->buf = grown;
    s->cap = cap;
    return true;
}

/* fill_to's reading part, out of line: most frames are in the buffer. */
static __attribute__((noinline)) int fill_more(lct__source *s, size_t want,
                                               bool follow)
{
    while (have(s) < want) {
        if (s->eof && !follow)
            return 0;
        if (!make_room(s)) {
            s->read_errno = ENOMEM;
            return -1;
        }
        ssize_t got = read_some(s, s->buf + s->fill, s->cap - s->fill);
        if (got < 0)
            return -1;
        if (got == 0) {
            s->eof = true;
            return 0;
        }
        s->eof = false;
        s->fill += (size_t)got;
    }
    return 1;
}

/* Make the buffer hold `want` bytes of the current frame: 1 done, 0 the
 * input ended first, -1 read error or out of memory. */
static inline int fill_to(lct__source *s, size_t want, bool follow)
{
    return have(s) >= want ? 1 : fill_more(s, want, follow);
}

/* Read and drop n input bytes (the rest of a doomed body): 1 done, 0 the
 * input ended first (*dropped says how far it got), -1 read error. */
static int discard(lct__source *s, uint64_t n, uint64_t *dropped)
{
    unsigned char scratch[16 * 1024];
    *dropped = 0;
    if (s->seekable) { /* a file: step over what it holds, unread */
        uint64_t left = s->size > s->consumed ? s->size - s->consumed : 0;
        *dropped = n < left ? n : left;
        s->consumed += *dropped;
        s->eof = *dropped < n;
        return *dropped == n ? 1 : 0;
    }
    while (*dropped < n) {
        size_t take = n - *dropped < sizeof scratch ? (size_t)(n - *dropped)
                                                    : sizeof scratch;
        ssize_t got = read_some(s, scratch, take);
        if (got <= 0) {
            s->eof = got == 0;
            return got == 0 ? 0 : -1;
        }
        *dropped += (uint64_t)got;
    }
    return 1;
}

/* Forget the bytes before pos: the frame at pos becomes the current one. */
static void drop_before(lct__source *s, uint64_t pos)
{
    uint64_t at = s->base + s->start;
    if (pos <= at)
        return;
    if (pos - at >= have(s)) {
        /* Everything read is used up (a discarded body may even have been
         * read past the buffer): start afresh at pos, which is consumed;
         * kept, the bytes before stay where they are. */
        if (s->keep) {
            s->start = s->fill;
            s->base = pos - s->fill;
            return;
        }
        s->fill = s->start = 0;
        s->base = pos;
        return;
    }
    s->start += (size_t)(pos - at);
}

static bool is_map_head(unsigned char b)
{
    return (b & 0xf0) == 0x80 || b == 0xde || b == 0xdf;
}

static bool is_str_head(unsigned char b)
{
    return (b & 0xe0) == 0xa0 || b == 0xd9 || b == 0xda || b == 0xdb;
}

/* Whether the first `have` bytes of a body of `length` already refuse it
 * as a header or a record (lct__fields_doomed_why says why). */
static bool doomed(const unsigned char *p, size_t have, uint64_t length)
{
    if (!is_map_head(p[0]))
        return true;
    lct__mp_head h;
    if (lct__mp_head_parse(p, p + have, &h) != LCT_OK)
        return false; /* the map head is not all here: cannot tell */
    if (2 * (uint64_t)h.n > length - h.head)
        return true;
    return h.n > 0 && h.head < have && !is_str_head(p[h.head]);
}

static lct__frame_status short_or_error(int rc, lct__frame_status shortness)
{
    return rc < 0 ? LCT__FRAME_READ_ERROR : shortness;
}

/* The rest of a frame that cannot decode: keep its head, count the rest. */
static lct__frame_status doomed_body(lct__source *s, bool follow,
                                     lct__frame *f)
{
    uint64_t keep = f->length < DOOMED_KEEP ? f->length : DOOMED_KEEP;
    int rc = fill_to(s, LCT__PREFIX_SIZE + (size_t)keep, follow);
    f->body = at_start(s) + LCT__PREFIX_SIZE;
    if (rc != 1) {
        f->available = have(s) - LCT__PREFIX_SIZE;
        return short_or_error(rc, LCT__FRAME_SHORT_BODY);
    }
    /* Reads come in chunks, so more of the body (or, for a short body,
     * the next frames) may be in the buffer already; it stays there. */
    uint64_t beyond = have(s) - LCT__PREFIX_SIZE - keep, dropped;
    if (beyond > f->length - keep)
        beyond = f->length - keep;
    rc = discard(s, f->length - keep - beyond, &dropped);
    f->available = keep + beyond + dropped;
    f->kept = keep;
    if (rc != 1)
        return short_or_error(rc, LCT__FRAME_SHORT_BODY);
    return LCT__FRAME_OK;
}

size_t lct__stream_peek(const lct__source *s, const unsigned char **p)
{
    *p = at_start(s);
    return have(s);
}

lct__frame_status lct__stream_frame(lct__source *s, uint64_t pos,
                                    unsigned how, lct__frame *f)
{
    bool follow = (how & LCT__STREAM_FOLLOW) != 0;
    drop_before(s, pos);
    f->offset = pos;
    f->length = 0;
    f->body = at_start(s);
    f->available = 0;
    f->kept = 0;
    int rc = fill_to(s, LCT__PREFIX_SIZE, follow);
    if (rc != 1) {
        f->available = have(s);
        if (rc < 0)
            return LCT__FRAME_READ_ERROR;
        return have(s) == 0 ? LCT__FRAME_END : LCT__FRAME_SHORT_PREFIX;
    }
    f->length = lct__be32(at_start(s));
    f->body = at_start(s) + LCT__PREFIX_SIZE;
    /* Streams fed by a writer (follow) keep every byte: frames there are
     * the recorder's, and a doomed one would be waited for the same way. */
    if (!follow && f->length > 0) {
        size_t look = f->length < DOOMED_KEEP ? f->length : DOOMED_KEEP;
        /* Cut short or unreadable: the full read below says which. */
        rc = fill_to(s, LCT__PREFIX_SIZE + look, follow);
        if (rc == 1 && doomed(at_start(s) + LCT__PREFIX_SIZE, look,
                              f->length)) {
            /* A file ends (and its rest is stepped over unread), so
             * there the reference's exact answer costs little. */
            if (!(how & LCT__STREAM_HEADER) || s->regular)
                return doomed_body(s, follow, f);
            f->body = at_start(s) + LCT__PREFIX_SIZE;
            f->kept = f->available = look;
            return LCT__FRAME_OK;
        }
    }
    if (!s->seekable && s->max_frame && f->length > s->max_frame) {
        /* Held up to the limit: an input that ends sooner gets the
         * reference's answer (cut short); one that goes on is refused. */
        rc = fill_to(s, LCT__PREFIX_SIZE + (size_t)s->max_frame, follow);
        f->body = at_start(s) + LCT__PREFIX_SIZE;
        if (rc != 1) {
            f->available = have(s) - LCT__PREFIX_SIZE;
            return short_or_error(rc, LCT__FRAME_SHORT_BODY);
        }
        return LCT__FRAME_TOO_LONG;
    }
    rc = fill_to(s, LCT__PREFIX_SIZE + (size_t)f->length, follow);
    /* The buffer may have moved, or the frame within it. */
    f->body = at_start(s) + LCT__PREFIX_SIZE;
    if (rc != 1) {
        f->available = have(s) - LCT__PREFIX_SIZE;
        return short_or_error(rc, LCT__FRAME_SHORT_BODY);
    }
    f->available = f->length;
    f->kept = f->length;
    return LCT__FRAME_OK;
}

bool lct__stream_seek(lct__source *s, uint64_t pos)
{
    if (!s->seekable)
        return false;
    if (s->keep && !keep_buffer(s)) /* views must outlive the seek */
        return false;
    s->base = s->consumed = pos;
    s->fill = s->start = 0;
    s->eof = false;
    return true;
}

bool lct__stream_shrank(const lct__source *s, uint64_t *cut)
{
    /* A file read to its end should have been as long as it was at open
     * (or as it grew to); shorter means it lost bytes while read, which a
     * copy cannot show as zeros but shows as an early end. */
    uint64_t real;
    if (s->kind != LCT__SOURCE_STREAM || !s->seekable ||
        lct__source_real_size(s, &real) != LCT_OK || real >= s->size)
        return false;
    *cut = real;
    return true;
}
