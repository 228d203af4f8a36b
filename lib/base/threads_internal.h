/*
 * threads_internal.h - what both kinds of parallel scan share (index.c,
 * pscan.c): how many CPUs there are to run on, running one function per
 * worker on POSIX threads, and a growing list of 64-bit numbers (the
 * frames a thread skipped).
 */
#ifndef LCT_THREADS_INTERNAL_H
#define LCT_THREADS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lct_core.h"

/* The CPUs this process may run on: its affinity mask (taskset, a
 * cpuset, a container's CPUs), as nproc(1) counts them; the online CPUs
 * where the mask cannot be read; at least 1.  The default thread count:
 * threads past it share CPUs, and pay for their merge with nothing. */
unsigned lct__usable_cpus(void);

/* Numbers noted one at a time; 8 bytes each, nothing until the first. */
typedef struct lct__u64s {
    uint64_t *v;
    size_t n, cap;
} lct__u64s;

/* Append x; false when memory ran out (the list is unchanged). */
bool lct__u64s_push(lct__u64s *list, uint64_t x);

/*
 * Run fn on n workers laid out `size` bytes apart from `workers`, each
 * with a pthread_t at `thread_at` bytes into it: workers 1..n-1 on new
 * threads, worker 0 on the calling one, then join.  LCT_OK, or
 * LCT_ERR_SYS naming `who` when a thread could not start (those that
 * did are still joined; worker 0 does not run).
 */
lct_status lct__run_threads(void *workers, size_t size, size_t thread_at,
                            unsigned n, void *(*fn)(void *), const char *who,
                            lct_error *err);

#endif
