/*
 * msgpack_internal.h - the byte-level msgpack layer shared by lib/.
 *
 * Everything here works on a [p, end) range and never reads at or past end.
 * Sizes and counts read from the data are compared with what remains
 * (need <= end - p) before any pointer is formed from them.
 */
#ifndef LCT_MSGPACK_INTERNAL_H
#define LCT_MSGPACK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/bytes_internal.h"
#include "lct_core.h"
#include "msgpack/unit_internal.h"

/* Whether s ends with the n bytes at suffix (lct_str_has_suffix, for a
 * caller that knows n): the last byte first, which tells most candidates
 * apart without a memcmp. */
static inline bool lct__str_ends_with(lct_str s, const char *suffix,
                                      size_t n)
{
    return s.len >= n &&
           (n == 0 || (s.ptr[s.len - 1] == suffix[n - 1] &&
                       memcmp(s.ptr + s.len - n, suffix, n) == 0));
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
 * What each first byte means, so parsing a header is one table load and
 * no branch ladder (MsgPuck's parser-hint idea): the type, the header
 * size (first byte, length or count bytes, ext type byte; for scalars the
 * whole value), how many bytes hold the length or count (0, 1, 2, 4), and
 * for fix types and fixext the length or count itself.
 */
typedef struct lct__mp_hint {
    uint8_t type;  /* lct_type; LCT_TYPE_INVALID for 0xc1 */
    uint8_t head;
    uint8_t len_bytes;
    uint8_t fixed_n;
} lct__mp_hint;

extern const lct__mp_hint lct__mp_hints[256];

/*
 * Parse the header of the value at p.  Returns LCT_OK, or
 * LCT_ERR_MALFORMED if the header is cut short or the byte is reserved.
 * The payload is not checked against end; callers compare n with what is
 * left after the header.
 */
static inline int lct__mp_head_parse(const unsigned char *p,
                                     const unsigned char *end,
                                     lct__mp_head *h)
{
    if (p >= end)
        return LCT_ERR_MALFORMED;
    const lct__mp_hint *t = &lct__mp_hints[p[0]];
    if (t->type == LCT_TYPE_INVALID || t->head > (size_t)(end - p))
        return LCT_ERR_MALFORMED;
    h->type = (lct_type)t->type;
    h->head = t->head;
    h->ext_type = 0;
    switch (t->len_bytes) {
    case 0: h->n = t->fixed_n; break;
    case 1: h->n = p[1]; break;
    case 2: h->n = lct__be16(p + 1); break;
    default: h->n = lct__be32(p + 1); break;
    }
    if (t->type == LCT_TYPE_EXT)
        h->ext_type = (int8_t)p[t->head - 1];
    return LCT_OK;
}

/* Walk modes, combinable. */
enum {
    LCT__WALK_SKIP = 0,          /* structure only */
    LCT__WALK_UTF8 = 1u << 0,    /* every str must be valid UTF-8 */
    LCT__WALK_TIMESTAMP = 1u << 1, /* ext -1 must be a valid timestamp */
    LCT__WALK_STR_KEYS = 1u << 2,  /* top value: a map whose keys are str */
    /* a map key must be a value Python can hash, as the reference
     * decoder builds dicts: no map and no ext but a timestamp in it
     * (an array is a tuple, hashable when what it holds is) */
    LCT__WALK_HASHABLE_KEYS = 1u << 3,
    /* note the first array of keys for the key layer (key_templates_
     * internal.h: lct__key_notes); a record's walk only */
    LCT__WALK_NOTE_KEYS = 1u << 4,
    LCT__WALK_VALIDATE = LCT__WALK_UTF8 | LCT__WALK_TIMESTAMP |
                         LCT__WALK_HASHABLE_KEYS
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

/*
 * Whether n bytes at p are all ASCII, the common case for trace strings,
 * in a few word operations: one masked 8-byte load for short strings (when
 * 8 bytes are readable before end), whole words plus one overlapping last
 * word for longer ones.
 */
static inline bool lct__ascii_only(const unsigned char *p, size_t n,
                              const unsigned char *end)
{
    const uint64_t high = UINT64_C(0x8080808080808080);
    uint64_t w, acc = 0;
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            memcpy(&w, p + i, 8);
            acc |= w;
        }
        memcpy(&w, p + n - 8, 8);
        return ((acc | w) & high) == 0;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if ((size_t)(end - p) >= 8) {
        memcpy(&w, p, 8);
        /* keep the low n bytes: the string's, on a little-endian load */
        uint64_t mask = n ? (~UINT64_C(0) >> (64 - 8 * n)) : 0;
        return (w & mask & high) == 0;
    }
#else
    (void)end;
#endif
    for (size_t i = 0; i < n; i++)
        acc |= p[i];
    return (acc & 0x80) == 0;
}

/* UTF-8 validity with the ASCII fast path; end bounds the extra bytes the
 * fast path may load (never past it). */
static inline bool lct__str_valid(const unsigned char *p, size_t n,
                                  const unsigned char *end)
{
    return lct__ascii_only(p, n, end) || lct__utf8_valid(p, n);
}

/* Where a key of the usual form (a unit's, unit_internal.h, whole) has
 * its fields, from its first byte: every key like a template has them
 * where the template has.  Index i < LCT__MP_UNIT_USUAL is the i-th usual
 * pair's value, the one after them the last pair's; len 0 for a pair
 * that is not there (or an empty str or nil). */
#define LCT__KEY_FIELDS (LCT__MP_UNIT_USUAL + 1)
typedef struct lct__key_fields {
    uint16_t at[LCT__KEY_FIELDS], len[LCT__KEY_FIELDS];
} lct__key_fields;

/*
 * The keys a record's validating walk found (LCT_KEYS), handed to the key
 * layer so that it need not find them again: the first array of the
 * record whose elements are all keys of the usual form, each like one of
 * the walk's templates, in parts of keys like one template (so each of a
 * part's keys of the same length, at first + i * len).  A list of mixed
 * shapes (a salted key among unsalted ones) comes in several parts, at
 * most LCT__KEY_NOTE_PARTS (a list that switches shape more often is not
 * noted).  Per thread, and only ever of the record this thread decoded
 * last (lct__record_decode forgets them before each record and after a
 * refused one), so a list is known by its address.  Noting costs nothing
 * a key, only a store at each switch of shape; a part whose keys' salts
 * differ is not noted (the key layer takes a part's salt from its first
 * key), nor the list it is in.
 */
#define LCT__KEY_NOTE_PARTS 32
typedef struct lct__key_part {
    const unsigned char *first; /* its first key */
    uint32_t count, len;        /* its keys, and each one's bytes */
    lct__key_fields fields;     /* where each has its fields */
} lct__key_part;

typedef struct lct__key_notes {
    const unsigned char *list;  /* the array's first byte; NULL: none */
    const unsigned char *end;   /* past its last key */
    size_t count;               /* its keys */
    unsigned nparts;
    lct__key_part part[LCT__KEY_NOTE_PARTS];
} lct__key_notes;

/* This thread's notes (key_templates.c). */
const lct__key_notes *lct__key_notes_here(void);
void lct__key_notes_forget(void);

#endif
