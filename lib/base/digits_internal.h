/*
 * digits_internal.h - decimal digits of an unsigned integer, written
 * backwards from the end of a buffer: what the JSON renderer, a spec's
 * group key and the redis backend's commands all need, without printf.
 */
#ifndef LCT_DIGITS_INTERNAL_H
#define LCT_DIGITS_INTERNAL_H

#include <stdint.h>

/* Decimal digits of v at the end of out[0..20); returns where they start. */
static inline char *lct__u64_digits(uint64_t v, char *end)
{
    char *p = end;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

#endif
