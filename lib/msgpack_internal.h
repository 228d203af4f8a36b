/*
 * msgpack_internal.h - the byte-level msgpack layer shared by lib/.
 *
 * Everything here works on a [p, end) range and never reads at or past end.
 * Sizes and counts read from the data are compared with what remains
 * (need <= end - p) before any pointer is formed from them.
 */
#ifndef LCT_MSGPACK_INTERNAL_H
#define LCT_MSGPACK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lct.h"

static inline uint16_t lct__be16(const unsigned char *p)
{
    return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline uint32_t lct__be32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return __builtin_bswap32(v);
}

static inline uint64_t lct__be64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
}

static inline double lct__bedouble(const unsigned char *p)
{
    uint64_t bits = lct__be64(p);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/*
 * The parsed first bytes of one value: its type, the size of the header
 * (first byte plus any length/count bytes, or the whole scalar), and for
 * str/bin/ext the payload length, for array/map the element/pair count.
 */
typedef struct lct__mp_head {
    lct_type type;
    uint32_t head;  /* bytes before the payload (whole value for scalars) */
    uint32_t n;     /* payload bytes (str/bin/ext) or count (array/map) */
    int8_t ext_type;
} lct__mp_head;

/*
 * Parse the header of the value at p.  Returns LCT_OK, or
 * LCT_ERR_MALFORMED if the header is cut short or the byte is reserved.
 * The payload is not checked against end; callers compare n with what is
 * left after the header.
 */
int lct__mp_head_parse(const unsigned char *p, const unsigned char *end,
                       lct__mp_head *h);

/* Walk modes, combinable. */
enum {
    LCT__WALK_SKIP = 0,          /* structure only */
    LCT__WALK_UTF8 = 1u << 0,    /* every str must be valid UTF-8 */
    LCT__WALK_TIMESTAMP = 1u << 1, /* ext -1 must be a valid timestamp */
    LCT__WALK_STR_KEYS = 1u << 2,  /* top value: a map whose keys are str */
    LCT__WALK_VALIDATE = LCT__WALK_UTF8 | LCT__WALK_TIMESTAMP
};

/*
 * Step over one complete value starting at p, checking what mode asks.
 * On LCT_OK, *out is the first byte after it.  On failure, *why (if not
 * NULL) is a constant phrase for messages and *at (if not NULL) the byte
 * the problem was found at.  No recursion: nesting is tracked in a fixed
 * array of LCT_MAX_DEPTH counters.
 */
int lct__mp_walk(const unsigned char *p, const unsigned char *end,
                 unsigned mode, const unsigned char **out, const char **why,
                 const unsigned char **at);

/* Whether [p, p+len) is UTF-8 as Python's strict decoder accepts it. */
int lct__utf8_valid(const unsigned char *p, size_t len);

#endif
