/*
 * bytes_internal.h - big-endian loads and stores, the only byte order the
 * format uses, through libbsd's <sys/endian.h> (correct on any host, and
 * safe on unaligned pointers), and the frame's 4-byte length prefix; and
 * the little-endian words of what liblct itself lays out (the key hash,
 * libCacheSim's oracleGeneral records).
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

/* Little-endian: one load or store where the host is little-endian
 * (libbsd's le64dec and le32enc go a byte at a time, which the key hash
 * would spend most of its instructions on); libbsd's on others. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint64_t lct__le64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}
static inline void lct__put_le64(unsigned char *p, uint64_t x)
{
    memcpy(p, &x, 8);
}
static inline void lct__put_le32(unsigned char *p, uint32_t x)
{
    memcpy(p, &x, 4);
}
#else
static inline uint64_t lct__le64(const unsigned char *p)
{
    return le64dec(p);
}
static inline void lct__put_le64(unsigned char *p, uint64_t x)
{
    le64enc(p, x);
}
static inline void lct__put_le32(unsigned char *p, uint32_t x)
{
    le32enc(p, x);
}
#endif

#endif
