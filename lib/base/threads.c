/*
 * threads.c - the pieces both parallel scans share (threads_internal.h).
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "base/error_internal.h"
#include "base/threads_internal.h"
#include "lct_core.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned lct__usable_cpus(void)
{
    cpu_set_t set;
    /* fails past CPU_SETSIZE (1024) CPUs: then the online count */
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (unsigned)online : 1;
}

bool lct__u64s_push(lct__u64s *list, uint64_t x)
{
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 64;
        uint64_t *grown = reallocarray(list->v, cap, sizeof *grown);
        if (!grown)
            return false;
        list->v = grown;
        list->cap = cap;
    }
    list->v[list->n++] = x;
    return true;
}

lct_status lct__run_threads(void *workers, size_t size, size_t thread_at,
                            unsigned n, void *(*fn)(void *), const char *who,
                            lct_error *err)
{
    unsigned char *base = workers;
    lct_status rc = LCT_OK;
    unsigned started = 1;
    for (unsigned t = 1; t < n; t++, started++) {
        void *w = base + (size_t)t * size;
        int e = pthread_create((pthread_t *)((unsigned char *)w + thread_at),
                               NULL, fn, w);
        if (e != 0) {
            rc = lct__fail(err, LCT_ERR_SYS, e, 0,
                           "%s: cannot start a thread: %s", who, strerror(e));
            break;
        }
    }
    if (rc == LCT_OK)
        fn(base);
    for (unsigned t = 1; t < started; t++)
        pthread_join(*(pthread_t *)(base + (size_t)t * size + thread_at),
                     NULL);
    return rc;
}
