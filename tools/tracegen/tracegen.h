/*
 * tracegen.h - a deterministic generator of realistic storage-level
 * traces: a small library of its own (tools/tracegen/libtracegen.a),
 * shared by `lct gen`, examples/mksample (the shipped sample) and
 * bench/lct-bench.
 */
#ifndef LCT_TRACEGEN_H
#define LCT_TRACEGEN_H

#include <stdint.h>

#include "lct.h"

/*
 * Write a header and `records` records to fd, one write per frame: prefetches
 * (submit, read enter/exit, finish) and writes (reserve, finish), 1 to
 * max_keys ObjectKeys per call with 32-byte chunk hashes, codec-wrapped as
 * the recorder wraps them.  With ndocs > 0 a request's keys are the first
 * chunks of one of ndocs documents drawn by Zipf's law (s = 1), so keys
 * are reused the way shared prompt prefixes reuse them; with 0 every
 * request has keys of its own.  The same arguments give the same bytes.
 * Returns 0, or -1 if a write failed (or memory ran out).
 */
int gen_trace(int fd, uint64_t records, unsigned max_keys, unsigned ndocs,
              uint64_t seed);

#endif
