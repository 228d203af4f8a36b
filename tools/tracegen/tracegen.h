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
 * the recorder wraps them.  The same seed gives the same bytes.
 * Returns 0, or -1 if a write failed.
 */
int gen_trace(int fd, uint64_t records, unsigned max_keys, uint64_t seed);

#endif
