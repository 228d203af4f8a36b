/*
 * test_pacer.c - the replay pacer as a library feature: deadlines are
 * t_mono / speed after one start, never early, in order, and a speed
 * factor really changes how long a replay takes.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <time.h>

#include "lct.h"

static double seconds(const struct timespec *t)
{
    return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

static void pace(double speed)
{
    static const double times[] = {0.0,  0.002, 0.002, 0.010,
                                   0.005 /* backwards */, 0.020, -1.0};
    lct_pacer *p;
    cr_assert_eq(lct_pacer_new(speed, &p), LCT_OK);
    struct timespec before;
    clock_gettime(CLOCK_MONOTONIC, &before); /* no later than the start */
    lct_pacer_start(p);
    double last = 0;
    for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
        double late = -1;
        cr_assert_eq(lct_pacer_wait(p, times[i], &late), LCT_OK);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double due = seconds(&before) + (times[i] > 0 ? times[i] / speed : 0);
        cr_expect_geq(seconds(&now), due, "record %zu dispatched early", i);
        cr_expect_geq(late, 0.0);
        cr_expect_geq(seconds(&now), last, "dispatches keep their order");
        last = seconds(&now);
    }
    lct_pacer_free(p);
}

Test(pacer, never_early_and_in_order) { pace(1.0); }
Test(pacer, speed_factor) { pace(4.0); }

/* The deadline of each record: t_mono / speed after the start, exactly;
 * nothing before the start. */
Test(pacer, offsets_divide_by_the_speed)
{
    static const struct {
        double speed, t_mono, due;
    } cases[] = {{1.0, 0.25, 0.25}, {4.0, 0.5, 0.125}, {0.5, 0.25, 0.5},
                 {2.0, 0.0, 0.0},   {2.0, -3.0, 0.0}, {8.0, 1.0, 0.125}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        lct_pacer *p;
        cr_assert_eq(lct_pacer_new(cases[i].speed, &p), LCT_OK);
        cr_expect_eq(lct_pacer_offset(p, cases[i].t_mono), cases[i].due,
                     "speed %g, t_mono %g: due %g, got %g", cases[i].speed,
                     cases[i].t_mono, cases[i].due,
                     lct_pacer_offset(p, cases[i].t_mono));
        lct_pacer_free(p);
    }
}

/* A fast replay really is fast: at speed 100 a record 10 s in is due
 * after 0.1 s.  The bound is loose (5 s), so only an ignored speed (a
 * 10 s wait) fails it, never a slow machine. */
Test(pacer, a_fast_replay_waits_less, .timeout = 30)
{
    lct_pacer *p;
    cr_assert_eq(lct_pacer_new(100.0, &p), LCT_OK);
    struct timespec before, after;
    clock_gettime(CLOCK_MONOTONIC, &before);
    lct_pacer_start(p);
    cr_assert_eq(lct_pacer_wait(p, 10.0, NULL), LCT_OK);
    clock_gettime(CLOCK_MONOTONIC, &after);
    double waited = seconds(&after) - seconds(&before);
    cr_expect_geq(waited, 0.1);
    cr_expect_lt(waited, 5.0, "waited %.3f s: the speed was not applied",
                 waited);
    lct_pacer_free(p);
}

Test(pacer, invalid_speed)
{
    lct_pacer *p;
    cr_expect_eq(lct_pacer_new(0, &p), LCT_ERR_INVALID);
    cr_expect_eq(lct_pacer_new(-1, &p), LCT_ERR_INVALID);
    cr_expect_eq(lct_pacer_wait(NULL, 1, NULL), LCT_ERR_INVALID);
    lct_pacer_free(NULL);
}
