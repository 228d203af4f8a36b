/*
 * unit_internal.h - a codec's most frequent map, stepped over as one unit.
 *
 * The msgpack layer declares here what it needs to know of such a map to
 * match it in a few word compares (the walker, its key templates, the
 * JSON writer) and reads it with the functions below; it does not know
 * which codec writes it.  The layer that owns the codec fills the
 * description: LMCache's ObjectKey is lct__mp_objectkey, defined once in
 * lib/lmcache/objectkey.c.  A change to LMCache's encoder changes that
 * file alone (and its static asserts say when the change needs more).
 *
 * A unit is a fixed opening (LCT__MP_UNIT_OPENING bytes: some fixed under
 * a mask, the rest free, such as a hash), then, inside the map the
 * opening leaves open, the "usual" pairs in a fixed order, each a fixstr
 * name and a value of one kind, and at most one more, the "last" pair.
 * Nothing is decided by a match alone: a unit that is not in the usual
 * form is read token by token, to the same answer.
 */
#ifndef LCT_MSGPACK_UNIT_INTERNAL_H
#define LCT_MSGPACK_UNIT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The opening's length and where its free bytes start are fixed here, not
 * by the codec: the walker's key templates lay their 16- and 32-byte
 * compare blocks out for them (bytes 1 to 32 compared whole, the free
 * ones skipped, the pairs after the opening on 16-byte boundaries). */
#define LCT__MP_UNIT_OPENING 65
#define LCT__MP_UNIT_FREE_AT 33
/* The byte whose low nibble counts the inner map's pairs: the one byte
 * of the opening's fixed part that is not compared whole. */
#define LCT__MP_UNIT_COUNT_AT 19
/* Three bytes that tell a unit's common shapes apart, hashed to choose a
 * key template's slot on the walker's hot path, where a load of each place
 * from the description cost 2% of a check: fixed here too.  Placed wrong
 * they cost speed, never an answer (a template is always compared). */
#define LCT__MP_UNIT_TELL_AT0 LCT__MP_UNIT_COUNT_AT
#define LCT__MP_UNIT_TELL_AT1 (LCT__MP_UNIT_OPENING + 11)
#define LCT__MP_UNIT_TELL_AT2 (LCT__MP_UNIT_OPENING + 12)
#define LCT__MP_UNIT_USUAL 3
/* A pair's name, its fixstr head included, is compared as 16 bytes. */
#define LCT__MP_UNIT_NAME_MAX 16
/* The JSON writer copies its pieces of text in blocks of these sizes. */
#define LCT__MP_UNIT_JSON_KEY_MAX 24
#define LCT__MP_UNIT_JSON_OPEN_MAX 48

typedef enum lct__mp_unit_kind {
    LCT__MP_UNIT_STR,        /* fixstr or str8 */
    LCT__MP_UNIT_SMALL_UINT, /* a positive fixint */
    LCT__MP_UNIT_STR_OR_NIL, /* nil, fixstr or str8 */
} lct__mp_unit_kind;

typedef struct lct__mp_unit_pair {
    unsigned char name[LCT__MP_UNIT_NAME_MAX]; /* head and bytes, then 0 */
    unsigned char care[LCT__MP_UNIT_NAME_MAX]; /* 0xff over the name */
    unsigned name_len;                         /* head included */
    lct__mp_unit_kind kind;
    /* the JSON writer's text before its value: ,"name": */
    char json_key[LCT__MP_UNIT_JSON_KEY_MAX];
    unsigned json_key_len;
} lct__mp_unit_pair;

typedef struct lct__mp_unit {
    /* The opening's fixed bytes, [0, LCT__MP_UNIT_FREE_AT), the count's
     * low nibble 0; the count includes opening_pairs of the opening's. */
    _Alignas(8) unsigned char want[LCT__MP_UNIT_FREE_AT];
    unsigned opening_pairs;
    lct__mp_unit_pair usual[LCT__MP_UNIT_USUAL]; /* STR or SMALL_UINT */
    unsigned usual_needed; /* a whole unit has at least these */
    lct__mp_unit_pair last;
    /* the JSON writer's opening for it, wrapped and unwrapped (the free
     * bytes, a bin, follow as base64) */
    char json_open[LCT__MP_UNIT_JSON_OPEN_MAX];
    char json_open_unwrapped[LCT__MP_UNIT_JSON_OPEN_MAX];
    unsigned json_open_len, json_open_unwrapped_len;
} lct__mp_unit;

/* LMCache's ObjectKey (lib/lmcache/objectkey.c).  Hidden, so that code
 * built position-independent reaches it without a GOT load. */
extern const lct__mp_unit lct__mp_objectkey
    __attribute__((visibility("hidden")));

/* The usual pairs read from a unit: each value's place (a str's bytes, a
 * small uint's own byte) and length. */
typedef struct lct__mp_unit_values {
    unsigned pairs; /* usual pairs read, in order */
    const unsigned char *at[LCT__MP_UNIT_USUAL];
    size_t len[LCT__MP_UNIT_USUAL];
    const unsigned char *after; /* the first byte after them */
} lct__mp_unit_values;

/* The inner map's pair count when p (LCT__MP_UNIT_OPENING bytes there)
 * opens as u says; 0 when it does not.  Four words and a byte, the count's
 * nibble masked out by a constant. */
_Static_assert(LCT__MP_UNIT_FREE_AT == 33 && LCT__MP_UNIT_COUNT_AT < 32,
               "the opening's fixed part is four words and a byte");
static inline unsigned lct__mp_unit_pairs(const lct__mp_unit *u,
                                          const unsigned char *p)
{
    /* laid out in bytes, so this holds on any endianness */
    static const unsigned char care_bytes[32] = {
        [0 ... LCT__MP_UNIT_COUNT_AT - 1] = 0xff,
        [LCT__MP_UNIT_COUNT_AT] = 0xf0,
        [LCT__MP_UNIT_COUNT_AT + 1 ... 31] = 0xff};
    uint64_t a[4], w[4], c[4];
    memcpy(a, p, 32);
    memcpy(w, u->want, 32);
    memcpy(c, care_bytes, 32);
    uint64_t diff = ((a[0] ^ w[0]) & c[0]) | ((a[1] ^ w[1]) & c[1]) |
                    ((a[2] ^ w[2]) & c[2]) | ((a[3] ^ w[3]) & c[3]) |
                    (uint64_t)(p[32] ^ u->want[32]);
    return diff == 0 ? p[LCT__MP_UNIT_COUNT_AT] & 0x0fu : 0;
}

/* Whether the pair name k is at q (before end). */
static inline bool lct__mp_unit_name_at(const lct__mp_unit_pair *k,
                                        const unsigned char *q,
                                        const unsigned char *end)
{
    size_t left = (size_t)(end - q);
    if (left >= LCT__MP_UNIT_NAME_MAX) {
        uint64_t a[2], w[2], c[2];
        memcpy(a, q, 16);
        memcpy(w, k->name, 16);
        memcpy(c, k->care, 16);
        return (((a[0] ^ w[0]) & c[0]) | ((a[1] ^ w[1]) & c[1])) == 0;
    }
    return left >= k->name_len && memcmp(q, k->name, k->name_len) == 0;
}

/* The value of kind at v (before end): its bytes' place and length, and
 * the first byte after it; NULL when it is not of that kind or not whole.
 * A nil is bytes of length 0. */
static inline const unsigned char *
lct__mp_unit_value(lct__mp_unit_kind kind, const unsigned char *v,
                   const unsigned char *end, const unsigned char **at,
                   size_t *len)
{
    size_t left = (size_t)(end - v), head;
    if (left < 1)
        return NULL;
    if (kind == LCT__MP_UNIT_SMALL_UINT) {
        if (v[0] >= 0x80)
            return NULL;
        *at = v, *len = 1;
        return v + 1;
    }
    if (kind == LCT__MP_UNIT_STR_OR_NIL && v[0] == 0xc0)
        head = 1, *len = 0;
    else if ((v[0] & 0xe0) == 0xa0)
        head = 1, *len = v[0] & 0x1fu;
    else if (v[0] == 0xd9 && left >= 2)
        head = 2, *len = v[1];
    else
        return NULL;
    if (*len > left - head)
        return NULL;
    *at = v + head;
    return v + head + *len;
}

/* From q, where the usual pairs would start: at most `most` of them, each
 * only when whole and inside [q, end).  Strings are not checked as UTF-8
 * here: the walker does that. */
static inline void lct__mp_unit_usual_read(const lct__mp_unit *u,
                                           const unsigned char *q,
                                           const unsigned char *end,
                                           unsigned most,
                                           lct__mp_unit_values *out)
{
    out->pairs = 0;
    out->after = q;
    if (most > LCT__MP_UNIT_USUAL)
        most = LCT__MP_UNIT_USUAL;
    for (unsigned i = 0; i < most; i++) {
        const lct__mp_unit_pair *k = &u->usual[i];
        if (!lct__mp_unit_name_at(k, q, end))
            return;
        q = lct__mp_unit_value(k->kind, q + k->name_len, end, &out->at[i],
                               &out->len[i]);
        if (!q)
            return;
        out->pairs = i + 1;
        out->after = q;
    }
}

/*
 * A whole unit of the usual form at p (its opening there): the usual
 * pairs (at least usual_needed of them), then at most the last pair, and
 * no other.  Returns the first byte after it, with *v and the last
 * pair's bytes (*last_len 0 for nil or none); NULL when the unit is not
 * of that form.
 */
static inline const unsigned char *
lct__mp_unit_whole(const lct__mp_unit *u, const unsigned char *p,
                   const unsigned char *end, lct__mp_unit_values *v,
                   const unsigned char **last, size_t *last_len)
{
    unsigned pairs = lct__mp_unit_pairs(u, p);
    if (pairs < u->opening_pairs + u->usual_needed)
        return NULL;
    unsigned inner = pairs - u->opening_pairs;
    lct__mp_unit_usual_read(u, p + LCT__MP_UNIT_OPENING, end, inner, v);
    if (v->pairs < u->usual_needed)
        return NULL;
    const unsigned char *q = v->after;
    *last = q, *last_len = 0;
    if (inner == v->pairs)
        return q;
    if (inner != v->pairs + 1 || !lct__mp_unit_name_at(&u->last, q, end))
        return NULL; /* more than the last pair, or another */
    return lct__mp_unit_value(u->last.kind, q + u->last.name_len, end,
                              last, last_len);
}

#endif
