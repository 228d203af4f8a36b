/*
 * source_probe.c - which source a one-pass read (LCT_ONE_PASS) of a large
 * regular file takes: the mapping or the stream, whichever costs less on
 * this machine, measured once per process on the first such file.
 *
 * The two differ by what the first touch of a page costs.  A mapped pass
 * pays it once per 4 KiB page of the trace; a streamed pass copies every
 * byte (read(2)) into one buffer whose pages stay warm.  Where the touch
 * of a page whose tables are filled ahead is cheap the mapping wins;
 * under shadow paging each first touch leaves the guest and the stream
 * wins (docs/performance.md has both machines' figures).  The probe
 * times both on the file's own first bytes, just read, so both meet
 * cached lines and what differs is a copy against a first touch per
 * page.  Either answer gives the same records.
 */
#include "base/clock_internal.h"
#include "base/pio_internal.h"
#include "read/source_internal.h"
#include "lct_read.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Bytes copied, and pages touched, per round (a stream's buffer holds
 * 256 KiB); rounds (the least of each counts, so one preemption does not
 * decide). */
#define PROBE_BYTES (256u << 10)
#define PROBE_ROUNDS 3

/* Smaller files are mapped without asking: the choice is worth at most a
 * few ms there, less than ten probes cost. */
#define PROBE_MIN_FILE (16ull << 20)

enum { UNKNOWN = 0, MAP = 1, STREAM = 2 };
static _Atomic int choice = UNKNOWN;

/* The least time of each way over the rounds; false if a read failed (a
 * file that shrank: keep the mapping, whose checks say so). */
static bool measure(int fd, const unsigned char *map, uint64_t *copy,
                    uint64_t *touch)
{
    unsigned char *buf = malloc(PROBE_BYTES);
    if (!buf)
        return false;
    memset(buf, 0, PROBE_BYTES); /* a stream's buffer is warm after its
                                    first fill */
    *copy = *touch = UINT64_MAX;
    bool ok = true;
    for (unsigned round = 0; ok && round < PROBE_ROUNDS; round++) {
        uint64_t at = (uint64_t)round * PROBE_BYTES;
        /* the first read brings the bytes into the page cache, where
         * both ways then find them */
        ok = lct__pread_full(fd, buf, PROBE_BYTES, at);
        uint64_t t0 = lct__now_ns();
        ok = ok && lct__pread_full(fd, buf, PROBE_BYTES, at);
        uint64_t t1 = lct__now_ns();
#ifdef MADV_POPULATE_READ
        (void)madvise((void *)(map + at), PROBE_BYTES, MADV_POPULATE_READ);
#endif
        uint64_t t2 = lct__now_ns();
        unsigned sum = 0;
        for (size_t page = 0; page < PROBE_BYTES; page += 4096)
            sum += *(const volatile unsigned char *)(map + at + page);
        uint64_t t3 = lct__now_ns();
        (void)sum;
        if (t1 - t0 < *copy)
            *copy = t1 - t0;
        if (t3 - t2 < *touch)
            *touch = t3 - t2;
    }
    free(buf);
    return ok;
}

int lct__one_pass_known(uint64_t size)
{
    if (size < PROBE_MIN_FILE)
        return 0;
    int c = atomic_load_explicit(&choice, memory_order_relaxed);
    return c == UNKNOWN ? -1 : c == STREAM;
}

bool lct__one_pass_streams(int fd, const unsigned char *map, uint64_t size)
{
    int known = lct__one_pass_known(size);
    if (known >= 0)
        return known;
    uint64_t copy, touch;
    if (!measure(fd, map, &copy, &touch))
        return false;
    int c = touch > copy ? STREAM : MAP;
    /* Two threads may both probe; either answer is one of the two ways. */
    atomic_store_explicit(&choice, c, memory_order_relaxed);
    return c == STREAM;
}

void lct__one_pass_decide(int streams)
{
    atomic_store_explicit(&choice, streams < 0 ? UNKNOWN
                                   : streams   ? STREAM
                                               : MAP,
                          memory_order_relaxed);
}
