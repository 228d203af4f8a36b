/*
 * tracegen_internal.h - what the storage-level generator (tracegen.c)
 * shares with the L2-level one (tracegen_l2.c): the random sequence, the
 * keys of a call and their layout, the documents requests draw from, the
 * header.
 */
#ifndef LCT_TRACEGEN_INTERNAL_H
#define LCT_TRACEGEN_INTERNAL_H

#include <stdint.h>

#include "lct.h"

void gen__seed(uint64_t seed);
/* gen_set_start's t_wall of t_mono 0 */
double gen__start(void);
uint64_t gen__rng(void);

/* The keys a call of about n keys has (whole chunks of every kv rank and
 * object group), written as an array of codec-wrapped ObjectKeys from
 * chunk `first` on; key i's identity (the same key, the same id). */
unsigned gen__call_keys(unsigned n);
void gen__object_keys(lct_writer *w, unsigned n, uint64_t first);
/* Only keys at[0..count) of that call, in that order. */
void gen__object_keys_at(lct_writer *w, uint64_t first, const unsigned *at,
                         unsigned count);
uint64_t gen__key_id(unsigned i, uint64_t first);

/* The MemoryLayoutDesc of a call from chunk `first`, and the bytes of
 * one key under it. */
void gen__layout_desc(lct_writer *w, uint64_t first);
uint64_t gen__layout_bytes(uint64_t first);

/* Documents drawn with Zipf's law (s = 1); a request's first chunk. */
typedef struct gen__docs {
    double *cdf;
    unsigned n;
} gen__docs;
int gen__docs_init(gen__docs *d, unsigned n);
uint64_t gen__first_chunk(const gen__docs *d, uint64_t pick);

/* The header of a trace of this level (sm_config_json's chunk_size 256). */
int gen__write_header(lct_writer *w, const char *level);

#endif
