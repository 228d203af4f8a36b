/*
 * bench_refs.h - the key reference stream of a trace, as lct mrc gathers
 * it by default (reads: submit_prefetch_task, writes: reserve_write), on
 * one thread: shared by the benchmarks that measure curves.
 */
#ifndef LCT_BENCH_REFS_H
#define LCT_BENCH_REFS_H

#include <lct.h>

/* The references of the trace at path; exits on failure. */
lct_refs *bench_references(const char *path);

#endif
