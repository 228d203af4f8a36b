/*
 * pacer.c - replay pacing: absolute CLOCK_MONOTONIC deadlines from one
 * start time, slept to with clock_nanosleep(TIMER_ABSTIME), so errors do
 * not accumulate and nothing is dispatched early.
 */
#include <errno.h>
#include <math.h> /* isfinite, isnan: macros, no libm */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "lct_write.h"

struct lct_pacer {
    double speed;
    bool started;
    struct timespec start;
};

lct_status lct_pacer_new(double speed, lct_pacer **out)
{
    if (!out || !(speed > 0) || !isfinite(speed))
        return LCT_ERR_INVALID;
    lct_pacer *p = calloc(1, sizeof *p);
    if (!p)
        return LCT_ERR_NOMEM;
    p->speed = speed;
    *out = p;
    return LCT_OK;
}

void lct_pacer_start(lct_pacer *p)
{
    if (!p)
        return;
    clock_gettime(CLOCK_MONOTONIC, &p->start);
    p->started = true;
}

static double diff(const struct timespec *a, const struct timespec *b)
{
    return (double)(a->tv_sec - b->tv_sec) +
           (double)(a->tv_nsec - b->tv_nsec) / 1e9;
}

double lct_pacer_offset(const lct_pacer *p, double t_mono)
{
    /* A record from before the start (t_mono <= 0, going backwards, or
     * NaN) is due at once. */
    if (!p || !(t_mono > 0))
        return 0;
    double offset = t_mono / p->speed;
    return offset > 1e9 ? 1e9 : offset; /* a corrupt time: ~31 years */
}

lct_status lct_pacer_wait(lct_pacer *p, double t_mono, double *lateness)
{
    if (!p || isnan(t_mono))
        return LCT_ERR_INVALID;
    if (!p->started)
        lct_pacer_start(p);
    /* The deadline, rounded up to a whole nanosecond so that waking at it
     * is never early (no libm needed for that). */
    double offset = lct_pacer_offset(p, t_mono);
    double nsd = offset * 1e9;
    int64_t ns = (int64_t)nsd;
    if ((double)ns < nsd)
        ns++;
    struct timespec deadline = p->start;
    deadline.tv_sec += (time_t)(ns / 1000000000);
    deadline.tv_nsec += (long)(ns % 1000000000);
    while (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_nsec -= 1000000000L;
        deadline.tv_sec++;
    }
    int rc;
    while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline,
                                 NULL)) == EINTR)
        ;
    if (rc != 0)
        return LCT_ERR_SYS;
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
        return LCT_ERR_SYS;
    if (lateness) {
        double late = diff(&now, &deadline);
        *lateness = late > 0 ? late : 0;
    }
    return LCT_OK;
}

void lct_pacer_free(lct_pacer *p)
{
    free(p);
}
