/*
 * cpus.h - running part of a test as a process that may use one CPU
 * (taskset -c N), for what chooses its threads by the CPUs it may use.
 * cpu_set_t needs _GNU_SOURCE defined before the file's first include.
 */
#ifndef LCT_TEST_CPUS_H
#define LCT_TEST_CPUS_H

#include <sched.h>

/* Narrow the process to the first CPU it may use, keeping the mask it
 * had in *saved; aborts the test if it cannot. */
void pin_to_one_cpu(cpu_set_t *saved);

/* Give the process back the mask pin_to_one_cpu kept. */
void unpin(const cpu_set_t *saved);

#endif
