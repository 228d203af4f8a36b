/*
 * render_internal.h - what the renderers share: decimal digits, and the
 * base64 tables (base64.c).
 */
#ifndef LCT_RENDER_INTERNAL_H
#define LCT_RENDER_INTERNAL_H

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

/* The standard base64 alphabet. */
extern const char lct__base64_alphabet[];

/* Two base64 characters for every 12 bits, filled on first use. */
const char (*lct__base64_pairs(void))[2];

#endif
