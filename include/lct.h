/*
 * lct.h - liblct, a zero-copy reader for LMCache trace files (.lct): the
 * whole library, as the headers below, one per layer (lowest first;
 * docs/architecture.md).  Include this one, or only the headers you use:
 * each includes the ones it needs.
 *
 *   lct_core.h     version, status codes and lct_error, views (lct_str,
 *                  lct_bytes, lct_value) and msgpack values, visiting
 *                  every value, large arrays, lct_header and lct_record;
 *                  the naming rules, and how long views live
 *   lct_read.h     opening a trace and iterating its records, the
 *                  sidecar index, merging traces, warnings, files that
 *                  shrink while mapped, the frame index and parallel
 *                  scans; a typical loop, and the rules for threads
 *   lct_json.h     JSON of values, records and headers (msgspec's)
 *   lct_write.h    writing traces, output files that never replace an
 *                  input, the replay pacer
 *   lct_lmcache.h  LMCache's argument types, the key hash, qualname
 *                  patterns, the key iterator
 *   lct_cache.h    key reference streams, miss-ratio curves, the prefix
 *                  rule's fold, LMCache's cache simulator, two tiers
 *   lct_replay.h   replay: operations, backends (null, mem:, dir:) and
 *                  the engine
 *
 * Beside them, built into archives of their own: lct_sqlite.h (the SQL
 * tables, liblct_sqlite.a) and lct_redis.h (the redis backend,
 * liblct_redis.a).  The format is docs/format.md.
 */
#ifndef LCT_H
#define LCT_H

#include "lct_core.h"
#include "lct_read.h"
#include "lct_json.h"
#include "lct_write.h"
#include "lct_lmcache.h"
#include "lct_cache.h"
#include "lct_replay.h"

#endif /* LCT_H */
