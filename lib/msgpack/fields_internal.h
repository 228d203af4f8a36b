/*
 * fields_internal.h - decoding a msgpack map into known fields, as the
 * reference decoder (msgspec, into a typed Struct) does.
 */
#ifndef LCT_FIELDS_INTERNAL_H
#define LCT_FIELDS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "lct_core.h"

typedef enum lct__field_kind {
    LCT__FIELD_STR,   /* msgpack str, valid UTF-8 */
    LCT__FIELD_INT,   /* any msgpack integer */
    LCT__FIELD_FLOAT, /* float64, float32 or any integer */
    LCT__FIELD_BIN,   /* msgpack bin */
    LCT__FIELD_ARGS,  /* map with str keys, values validated unless lazy */
    LCT__FIELD_ANY    /* any well-formed value, not interpreted */
} lct__field_kind;

typedef struct lct__field_spec {
    const char *name;
    lct__field_kind kind;
    bool required;
} lct__field_spec;

/* Longest reason a decoder writes, NUL included. */
#define LCT__WHY_SIZE 160

/*
 * Decode body[0..len) as exactly one map.  A "type" key must be the str
 * tag; keys must be str; spec[i]'s value (the last one when repeated) is
 * stored in values[i] with its exact size, or left {NULL, 0} when absent;
 * unknown keys are stepped over.  With lazy_args (a reader's LCT_LAZY)
 * an ARGS field is only checked to be a map, and when it is the last pair it is not walked
 * at all (its view then runs to the end of body, and trailing bytes go
 * unnoticed).
 *
 * Returns LCT_OK, or LCT_ERR_MALFORMED / LCT_ERR_DEPTH with a reason in
 * why[0..LCT__WHY_SIZE).
 */
int lct__fields_decode(const unsigned char *body, size_t len, const char *tag,
                       const lct__field_spec *spec, size_t nspec,
                       bool lazy_args, lct_value *values, char *why);

/*
 * The reason a header or record body of `length` bytes is refused, from
 * its first `kept` bytes alone, when those already refuse it (a streamed
 * frame's doomed body, see stream.c): the words lct__fields_decode would
 * find in the whole body.
 */
void lct__fields_doomed_why(const unsigned char *body, size_t kept,
                            uint64_t length, char *why);

#endif
