/*
 * render_internal.h - what the renderers share: decimal digits
 * (base/digits_internal.h), and the base64 tables (base64.c).
 */
#ifndef LCT_RENDER_INTERNAL_H
#define LCT_RENDER_INTERNAL_H

#include "base/digits_internal.h"

/* The standard base64 alphabet. */
extern const char lct__base64_alphabet[];

/* Two base64 characters for every 12 bits, filled on first use. */
const char (*lct__base64_pairs(void))[2];

#endif
