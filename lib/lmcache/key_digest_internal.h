/*
 * key_digest_internal.h - a fast 64-bit digest of a key's bytes, for
 * telling key tuples apart in memory (stat --spans pairs calls by it):
 * not lct_object_key_hash, which is public and stable, and not for
 * anything stored or compared across builds.
 */
#ifndef LCT_KEY_DIGEST_INTERNAL_H
#define LCT_KEY_DIGEST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/bytes_internal.h"

/* 64 bits of a and b's 128-bit product, folded: one multiply. */
static inline uint64_t lct__mum(uint64_t a, uint64_t b)
{
    __uint128_t p = (__uint128_t)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
}

/* The bytes' 64-bit digest, two 16-byte lanes a step so the multiplies
 * overlap (the length goes in first, so "ab" + "c" and "a" + "bc"
 * differ).  A tail of 8 to 31 bytes is read as overlapping words from
 * both of its ends (for one length, every byte lands in a fixed place),
 * not copied byte by byte: a model name is such a tail. */
static inline uint64_t lct__digest(uint64_t seed, const unsigned char *p,
                                   size_t n)
{
    uint64_t h1 = seed ^ n, h2 = seed ^ 0x8ebc6af09c88c6e3u;
    for (; n >= 32; p += 32, n -= 32) {
        h1 = lct__mum(h1 ^ lct__le64(p),
                      lct__le64(p + 8) ^ 0xe7037ed1a0b428dbu);
        h2 = lct__mum(h2 ^ lct__le64(p + 16),
                      lct__le64(p + 24) ^ 0xa0761d6478bd642fu);
    }
    if (n == 0)
        return h1 ^ (h2 * 0x9e3779b97f4a7c15u);
    uint64_t w[4] = {0};
    if (n >= 16) {
        w[0] = lct__le64(p), w[1] = lct__le64(p + 8);
        w[2] = lct__le64(p + n - 16), w[3] = lct__le64(p + n - 8);
    } else if (n >= 8) {
        w[0] = lct__le64(p), w[1] = lct__le64(p + n - 8);
    } else {
        for (size_t i = 0; i < n; i++)
            w[0] |= (uint64_t)p[i] << (8 * i);
    }
    h1 = lct__mum(h1 ^ w[0], w[1] ^ 0xe7037ed1a0b428dbu);
    h2 = lct__mum(h2 ^ w[2], w[3] ^ 0xa0761d6478bd642fu);
    return h1 ^ (h2 * 0x9e3779b97f4a7c15u);
}

#endif
