/*
 * bigmem_internal.h - large fresh allocations (bigmem.c): the reference
 * streams, their export, key maps and a pass's trees, backed by 2 MiB
 * pages where those fault in cheaper than 4 KiB ones.
 */
#ifndef LCT_BIGMEM_INTERNAL_H
#define LCT_BIGMEM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* bytes of memory (not zeroed), for an array written soon and whole:
 * when it is 256 KiB or more and 2 MiB pages fault in cheaper here
 * (measured once per process, at the first such call), on 2 MiB
 * boundaries with MADV_HUGEPAGE (unaligned, its first and last extents
 * would fault 4 KiB at a time); else malloc's.  Only the pages differ.
 * Free with free(); NULL when out of memory. */
void *lct__big_alloc(size_t bytes);

/* An array of lct__big_alloc's or malloc's (or NULL: a new one) grown
 * to n elements of size bytes, its first used elements kept, as
 * reallocarray: realloc below 256 KiB or where 2 MiB pages do not pay,
 * else fresh 2 MiB pages and a copy (a copy of pages already touched
 * costs less here than faulting the new ones 4 KiB at a time).  On
 * failure or overflow (n counts in 64 bits, so a count past size_t
 * is one) NULL, and p is still the caller's. */
void *lct__big_grow(void *p, size_t used, uint64_t n, size_t size);

/* Zeroed memory (lct__big_alloc's) for a large table read at random,
 * its pages made present in order so the random reads find them.  Free
 * with free(). */
void *lct__big_calloc(size_t n, size_t size);

/* Tests: whether 2 MiB pages are asked for (1), not (0), or the probe
 * decides at the next large allocation (-1). */
void lct__huge_pages_decide(int huge);

/* The probe's reading of one measurement, nanoseconds to fault in 2 MiB
 * as 4 KiB pages (small) and as one 2 MiB page (huge): 1 clearly
 * cheaper (under half), 0 not cheaper, -1 cheaper but not clearly (the
 * probe measures again, at most three times, then says no). */
int lct__huge_pages_judge(uint64_t small, uint64_t huge);

#endif
