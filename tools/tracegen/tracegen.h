/*
 * tracegen.h - a deterministic generator of realistic storage-level
 * traces: a small library of its own (tools/tracegen/libtracegen.a),
 * shared by `lct gen`, examples/mksample (the shipped sample) and
 * bench/lct-bench.
 */
#ifndef LCT_TRACEGEN_H
#define LCT_TRACEGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "lct.h"

/*
 * Write a header and `records` records to fd, one write per frame: prefetches
 * (submit, read enter/exit, finish) and writes (reserve, finish), 1 to
 * max_keys ObjectKeys per call (rounded up to whole chunks of every kv
 * rank) with 32-byte chunk hashes, codec-wrapped as
 * the recorder wraps them.  With ndocs > 0 a request's keys are the first
 * chunks of one of ndocs documents drawn by Zipf's law (s = 1), so keys
 * are reused the way shared prompt prefixes reuse them; with 0 every
 * request has keys of its own.  The same arguments give the same bytes.
 * Returns 0, or -1 if a write failed (or memory ran out).
 */
/* The keys' shape: Qwen's (the default: a 13-byte model name, kv ranks 0
 * and 1, no group or salt) or Llama's as a multi-tenant server records
 * them (a 32-byte model name, kv ranks 0 to 7, object groups 0 to 2, a
 * cache_salt). */
typedef enum gen_shape { GEN_SHAPE_QWEN = 0, GEN_SHAPE_LLAMA } gen_shape;
void gen_set_shape(gen_shape shape);

/* The keys' fields one by one (a shape is a preset of them). */
typedef struct gen_keys {
    const char *model;  /* model_name */
    const char *salt;   /* cache_salt; NULL: the field is left out */
    unsigned kv_ranks;  /* key i of a call has kv_rank i % kv_ranks */
    unsigned groups;    /* object_group_id chunk % groups; 0: left out */
} gen_keys;
gen_keys gen_shape_keys(gen_shape shape);
/* Use these fields (copied; the strings must outlive the generation). */
void gen_set_keys(const gen_keys *keys);

/* Key sizes that vary: the keys of a stream of chunks (a document, or a
 * request's own) weigh 256 x (1 to n) tokens of layout, n distinct sizes
 * (0 or 1: every key 256 tokens, as before). */
void gen_set_sizes(unsigned n);

/* Prefetches in newer LMCache's form, a PrefetchRequestSpec argument
 * with attn_desc and a layout per object group (false: the flat
 * arguments, as before). */
void gen_set_spec(bool on);

/* A fleet's mix, as recorded traces hold it: each request's keys drawn
 * from three models (Qwen/Qwen3-8B with 2 kv ranks, the 32-byte
 * meta-llama/Llama-3.1-8B-Instruct with 8 ranks and 3 object groups,
 * mistralai/Mistral-7B-Instruct-v0.3 with 4 ranks) and one of two
 * layouts (head dimensions 128 and 64), one chunk in five (always the
 * same ones) with a cache_salt of the request's tenant (one of eight),
 * so salted and unsalted keys alternate within a call; the fields of
 * gen_set_keys are then not used. */
void gen_set_mix(bool on);

/* Chunk hashes as the older generator wrote them (false: the default):
 * each key of a call its own chunk, of one kv rank, its hash 8 bytes
 * repeated; the default gives every chunk a key per kv rank sharing one
 * hash of 32 distinct-looking bytes that depend on the model, as
 * LMCache's keys are. */
void gen_set_per_rank_hashes(bool on);

/* The t_wall of t_mono 0 (default 1764600000, 2025-12-01): several seeds
 * with several starts make a fleet spread in time. */
void gen_set_start(double t_wall);

int gen_trace(int fd, uint64_t records, unsigned max_keys, unsigned ndocs,
              uint64_t seed);

/* An L2-level trace (level "l2", tracegen_l2.c) of at most `records`
 * records, the footer (l2.trace.end) last: requests on `adapters`
 * adapters (1 to GEN_L2_ADAPTERS_MAX), each a lookup, then a load of its
 * hits and an unlock, then a store of its misses; or a store alone; or a
 * delete.  Every task started completes.  The keys' shape, sizes and
 * documents are the storage generator's. */
#define GEN_L2_ADAPTERS_MAX 16
int gen_trace_l2(int fd, uint64_t records, unsigned max_keys, unsigned ndocs,
                 uint64_t seed, unsigned adapters);

#endif
