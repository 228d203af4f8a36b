/*
 * cpus.c - a test's process narrowed to one CPU and widened again.
 */
#define _GNU_SOURCE /* cpu_set_t */
#include "cpus.h"

#include <criterion/criterion.h>

void pin_to_one_cpu(cpu_set_t *saved)
{
    cr_assert_eq(sched_getaffinity(0, sizeof *saved, saved), 0);
    int first = 0;
    while (!CPU_ISSET(first, saved))
        first++;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
}

void unpin(const cpu_set_t *saved)
{
    cr_assert_eq(sched_setaffinity(0, sizeof *saved, saved), 0);
}
