/*
 * seal.c - the sidecar checksum, written from docs/format.md (not taken
 * from lib/read/sidecar.c), so a test that forges a sidecar also checks
 * that the format page says how to seal one.
 */
#include "seal.h"

#include <stdint.h>

static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t n)
{
    for (; n >= 8; p += 8, n -= 8) {
        h = (h ^ le64(p)) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    h = (h ^ w ^ ((uint64_t)n << 56)) * 0xc4ceb9fe1a85ec53u;
    return h ^ (h >> 29);
}

void seal_sidecar(unsigned char *b, size_t n)
{
    if (n < 8)
        return;
    uint64_t h = hash_bytes(0x9e3779b97f4a7c15u, b, n - 8);
    for (int i = 0; i < 8; i++)
        b[n - 8 + i] = (unsigned char)(h >> (8 * i));
}
