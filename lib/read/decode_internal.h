/*
 * decode_internal.h - turning a header or record frame body into the
 * public structs.
 */
#ifndef LCT_DECODE_INTERNAL_H
#define LCT_DECODE_INTERNAL_H

#include <stddef.h>

#include "msgpack/fields_internal.h"
#include "lct_read.h"

/*
 * Decode a header body.  LCT_OK, or LCT_ERR_MALFORMED with a reason in
 * why.  Magic and versions are decoded but not judged here.
 */
int lct__header_decode(const unsigned char *body, size_t len,
                       lct_header *out, char *why);

/*
 * Decode a record body into rec's time, qualname, args and body fields
 * (offset and length are the caller's).  LCT_OK, or LCT_ERR_MALFORMED /
 * LCT_ERR_DEPTH with a reason in why.  flags: LCT_LAZY.
 */
int lct__record_decode(const unsigned char *body, size_t len, unsigned flags,
                       lct_record *rec, char *why);

#endif
