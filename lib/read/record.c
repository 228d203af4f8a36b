/*
 * record.c - decoding record frames.
 *
 * Every recorder writes a record map in one layout: "type": "record",
 * then t_mono and t_wall as float64, qualname, args.  The fast path checks
 * for exactly those bytes with a few compares and reads the fields at
 * fixed offsets; anything else (another order, float32 or int times,
 * extra keys, a different type tag) goes to the general decoder in
 * fields.c, which applies the same rules slowly.
 */
#include "read/decode_internal.h"
#include "msgpack/msgpack_internal.h"
#include "lct_read.h"

#include <stdio.h>

enum { F_T_MONO, F_T_WALL, F_QUALNAME, F_ARGS, F_COUNT };

static const lct__field_spec record_fields[F_COUNT] = {
    [F_T_MONO] = {"t_mono", LCT__FIELD_FLOAT, true},
    [F_T_WALL] = {"t_wall", LCT__FIELD_FLOAT, true},
    [F_QUALNAME] = {"qualname", LCT__FIELD_STR, true},
    [F_ARGS] = {"args", LCT__FIELD_ARGS, true},
};

/* 0x85 {"type": "record", "t_mono": 0xcb */
static const unsigned char prefix[] = {
    0x85, 0xa4, 't', 'y', 'p', 'e', 0xa6, 'r', 'e', 'c', 'o', 'r', 'd',
    0xa6, 't', '_', 'm', 'o', 'n', 'o', 0xcb};
/* after 8 bytes of t_mono: "t_wall": 0xcb */
static const unsigned char wall_key[] = {0xa6, 't', '_', 'w', 'a',
                                         'l',  'l', 0xcb};
static const unsigned char qualname_key[] = {0xa8, 'q', 'u', 'a', 'l',
                                             'n',  'a', 'm', 'e'};
static const unsigned char args_key[] = {0xa4, 'a', 'r', 'g', 's'};

#define FIXED_PART                                                             \
    (sizeof prefix + 8 + sizeof wall_key + 8 + sizeof qualname_key)

/* Returns 1 if the fast layout applied and decided, 0 to fall back. */
static int decode_fast(const unsigned char *body, size_t len, unsigned flags,
                       lct_record *rec, int *rc, char *why)
{
    const unsigned char *end = body + len;
    if (len < FIXED_PART + 1 + sizeof args_key + 1 ||
        memcmp(body, prefix, sizeof prefix) != 0)
        return 0;
    const unsigned char *p = body + sizeof prefix;
    double t_mono = lct__bedouble(p);
    p += 8;
    if (memcmp(p, wall_key, sizeof wall_key) != 0)
        return 0;
    p += sizeof wall_key;
    double t_wall = lct__bedouble(p);
    p += 8;
    if (memcmp(p, qualname_key, sizeof qualname_key) != 0)
        return 0;
    p += sizeof qualname_key;

    /* qualname: fixstr or str8, the only sizes a call site has. */
    size_t qlen;
    if ((*p & 0xe0) == 0xa0) {
        qlen = *p & 0x1f;
        p += 1;
    } else if (*p == 0xd9) {
        qlen = p[1];
        p += 2;
    } else {
        return 0;
    }
    if (qlen + sizeof args_key + 1 > (size_t)(end - p))
        return 0;
    const unsigned char *qualname = p;
    p += qlen;
    if (memcmp(p, args_key, sizeof args_key) != 0)
        return 0;
    p += sizeof args_key;

    if (!lct__str_valid(qualname, qlen, end)) {
        snprintf(why, LCT__WHY_SIZE, "field `qualname`: str is not valid UTF-8");
        *rc = LCT_ERR_MALFORMED;
        return 1;
    }
    const unsigned char *args_end;
    if (flags & LCT_LAZY) {
        /* Last pair of the map: the view runs to the end of the frame. */
        unsigned b = *p;
        if (!((b & 0xf0) == 0x80 || b == 0xde || b == 0xdf))
            return 0;
        args_end = end;
    } else {
        const char *walk_why = "malformed value";
        *rc = lct__mp_walk(p, end,
                           LCT__WALK_VALIDATE | LCT__WALK_STR_KEYS |
                               (flags & LCT_KEYS ? LCT__WALK_NOTE_KEYS : 0),
                           &args_end, &walk_why, NULL);
        if (*rc != LCT_OK || args_end != end)
            lct__key_notes_forget(); /* refused: nobody reads its keys */
        if (*rc != LCT_OK) {
            snprintf(why, LCT__WHY_SIZE, "field `args`: %s", walk_why);
            return 1;
        }
        if (args_end != end) {
            snprintf(why, LCT__WHY_SIZE, "%zu trailing bytes after the map",
                     (size_t)(end - args_end));
            *rc = LCT_ERR_MALFORMED;
            return 1;
        }
    }
    rec->t_mono = t_mono;
    rec->t_wall = t_wall;
    rec->qualname.ptr = (const char *)qualname;
    rec->qualname.len = qlen;
    rec->args.ptr = p;
    rec->args.len = (size_t)(args_end - p);
    rec->body.ptr = body;
    rec->body.len = len;
    *rc = LCT_OK;
    return 1;
}

int lct__record_decode(const unsigned char *body, size_t len, unsigned flags,
                       lct_record *rec, char *why)
{
    int rc;
    /* The key layer's notes are only ever of the record this thread read
     * last: forgotten here, whichever way the record is read. */
    lct__key_notes_forget();
    if (decode_fast(body, len, flags, rec, &rc, why))
        return rc;

    lct_value v[F_COUNT];
    rc = lct__fields_decode(body, len, "record", record_fields, F_COUNT,
                            (flags & LCT_LAZY) != 0, v, why);
    if (rc != LCT_OK)
        return rc;
    /* Types were checked by the decoder; these reads cannot fail. */
    lct_value_get_double(v[F_T_MONO], &rec->t_mono);
    lct_value_get_double(v[F_T_WALL], &rec->t_wall);
    lct_value_get_str(v[F_QUALNAME], &rec->qualname);
    rec->args = v[F_ARGS];
    rec->body.ptr = body;
    rec->body.len = len;
    return LCT_OK;
}
