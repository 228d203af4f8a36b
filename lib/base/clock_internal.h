/*
 * clock_internal.h - the monotonic clock in nanoseconds, for every layer
 * that times something (the replay's pacing and latencies, a backend's
 * timeouts, the probes that pick a way per machine).
 */
#ifndef LCT_CLOCK_INTERNAL_H
#define LCT_CLOCK_INTERNAL_H

#include <stdint.h>
#include <time.h>

static inline uint64_t lct__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
