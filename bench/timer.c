/*
 * timer.c - what this machine's timer gives a paced replay: sleeps to
 * absolute CLOCK_MONOTONIC deadlines (clock_nanosleep TIMER_ABSTIME, as
 * lct_replay_run's planner sleeps, with the same 1 ns timer slack), N of
 * them 1 ms apart, and how late each wake-up was: p50, p99, max in us;
 * then as long again reading the clock in a loop, and the longest gaps
 * between two reads: the times the (virtual) CPU was taken away, which no
 * way of waiting avoids.
 *
 *     bench/timer [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static int cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5000;
    if (n < 1)
        n = 1;
    long *late = calloc((size_t)n, sizeof *late);
    if (!late)
        return 1;
    prctl(PR_SET_TIMERSLACK, 1ul, 0, 0, 0);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < n; i++) {
        long long at = (long long)start.tv_sec * 1000000000LL +
                       start.tv_nsec + (long long)(i + 1) * 1000000LL;
        struct timespec ts = {(time_t)(at / 1000000000LL),
                              (long)(at % 1000000000LL)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        late[i] = (long)((long long)now.tv_sec * 1000000000LL + now.tv_nsec -
                         at);
    }
    qsort(late, (size_t)n, sizeof *late, cmp);
    printf("timer: %d absolute sleeps 1 ms apart, woke late by p50 %.1f us, "
           "p99 %.1f us, max %.1f us\n",
           n, late[n / 2] / 1e3, late[(size_t)n * 99 / 100] / 1e3,
           late[n - 1] / 1e3);
    /* The same length of time, reading the clock without pause. */
    long long t0 = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    long long prev = t0, cur, worst = 0;
    long over100 = 0, over1000 = 0;
    do {
        clock_gettime(CLOCK_MONOTONIC, &now);
        cur = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
        long long gap = cur - prev;
        over100 += gap > 100000;
        over1000 += gap > 1000000;
        if (gap > worst)
            worst = gap;
        prev = cur;
    } while (cur - t0 < (long long)n * 1000000LL);
    printf("timer: a busy loop over %.1f s was held up %ld times by over "
           "100 us, %ld by over 1 ms, the longest %.1f us\n",
           n / 1e3, over100, over1000, worst / 1e3);
    free(late);
    return 0;
}
