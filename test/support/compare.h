/*
 * compare.h - compare a msgpack value view with the JSON the reference
 * tooling prints for it (msgspec.json's convention: bin as base64, NaN and
 * infinities as null, integer map keys as strings).  Values, not bytes.
 */
#ifndef LCT_TEST_COMPARE_H
#define LCT_TEST_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "lct.h"

/* True when v decodes to what e says; otherwise why[] names the path. */
bool value_matches_json(lct_value v, const jv *e, char *why, size_t whysz);

/* Standard base64 with padding of p[0..n) into out (4*ceil(n/3)+1). */
void base64_encode(const unsigned char *p, size_t n, char *out);

#endif
