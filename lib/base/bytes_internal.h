/*
 * bytes_internal.h - big-endian loads and stores, the only byte order the
 * format uses, through libbsd's <sys/endian.h> (correct on any host, and
 * safe on unaligned pointers), and the frame's 4-byte length prefix.
 */
#ifndef LCT_BYTES_INTERNAL_H
#define LCT_BYTES_INTERNAL_H

#include <stdint.h>
#include <string.h>
#include <sys/endian.h>

/* The 4-byte big-endian length that opens every frame. */
#define LCT__PREFIX_SIZE 4

static inline uint16_t lct__be16(const unsigned char *p)
{
    return be16dec(p);
}

static inline uint32_t lct__be32(const unsigned char *p)
{
    return be32dec(p);
}

static inline uint64_t lct__be64(const unsigned char *p)
{
    return be64dec(p);
}

static inline double lct__bedouble(const unsigned char *p)
{
    uint64_t bits = be64dec(p);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

#endif
