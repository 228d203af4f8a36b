/*
 * bigmem.c - large fresh allocations, and whether to back them with
 * 2 MiB pages.  A reference stream of a few million references, its
 * export and its key map are tens of MB that are written once, in
 * order, soon after they are allocated: the cost is the first touch of
 * each page.  Under shadow paging (a PVM guest) a 4 KiB page's first
 * touch costs about 10 us and a 2 MiB page's a few hundred, so `lct
 * keys` spent about a quarter of its time faulting; on the VM measured
 * before it, 2 MiB pages were the slower (`lct keys -j 2` 1.3-1.9 s
 * against 0.9-1.0 s, the time in zeroing them).  So the first large
 * allocation of a process times both, on fresh memory of each kind, and
 * the advice follows the answer.  Either answer gives the same results.
 */
#include "base/bigmem_internal.h"

#include "base/clock_internal.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)
/* Per round: 4 KiB pages touched (a quarter of an extent, scaled up)
 * against one 2 MiB extent; the least of the rounds counts.  About
 * 3 ms in all under shadow paging, well under a millisecond elsewhere. */
#define SMALL_PAGES 128
#define ROUNDS 2

enum { UNKNOWN = 0, HUGE = 1, SMALL = 2 };
static _Atomic int verdict = UNKNOWN;

static uint64_t touch(unsigned char *p, size_t pages)
{
    uint64_t t0 = lct__now_ns();
    for (size_t i = 0; i < pages; i++)
        ((volatile unsigned char *)p)[i * 4096] = 1;
    return lct__now_ns() - t0;
}

/* Whether 2 MiB pages fault in clearly cheaper here, measured now. */
static bool measure(void)
{
#ifdef MADV_HUGEPAGE
    size_t len = (2 * ROUNDS + 1) * HUGE_PAGE;
    unsigned char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return false;
    unsigned char *a = (unsigned char *)(((uintptr_t)raw + HUGE_PAGE - 1) &
                                         ~(uintptr_t)(HUGE_PAGE - 1));
    uint64_t small = UINT64_MAX, huge = UINT64_MAX;
    bool ok = true;
    for (unsigned r = 0; ok && r < ROUNDS; r++) {
        unsigned char *s = a + 2 * r * HUGE_PAGE, *h = s + HUGE_PAGE;
        ok = madvise(s, HUGE_PAGE, MADV_NOHUGEPAGE) == 0 &&
             madvise(h, HUGE_PAGE, MADV_HUGEPAGE) == 0;
        if (!ok)
            break; /* no transparent huge pages here */
        uint64_t ts = touch(s, SMALL_PAGES) * (HUGE_PAGE / 4096 / SMALL_PAGES);
        uint64_t th = touch(h, HUGE_PAGE / 4096);
        small = ts < small ? ts : small;
        huge = th < huge ? th : huge;
    }
    munmap(raw, len);
    /* clearly cheaper, not within noise */
    return ok && 2 * huge < small;
#else
    return false;
#endif
}

void lct__huge_pages_decide(int huge)
{
    atomic_store_explicit(&verdict, huge < 0 ? UNKNOWN : huge ? HUGE : SMALL,
                          memory_order_relaxed);
}

/* The verdict, measured at the first question. */
static bool huge_pays(void)
{
    int v = atomic_load_explicit(&verdict, memory_order_relaxed);
    if (v == UNKNOWN) {
        /* two threads may both measure; either answer is a valid one */
        v = measure() ? HUGE : SMALL;
        atomic_store_explicit(&verdict, v, memory_order_relaxed);
    }
    return v == HUGE;
}

void *lct__big_alloc(size_t bytes)
{
    if (bytes < HUGE_PAGE || bytes > SIZE_MAX - HUGE_PAGE || !huge_pays())
        return malloc(bytes ? bytes : 1);
    size_t whole = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    void *p = aligned_alloc(HUGE_PAGE, whole);
    if (p)
        (void)madvise(p, whole, MADV_HUGEPAGE);
    return p;
}

void *lct__big_grow(void *p, size_t used, size_t bytes)
{
    if (bytes < HUGE_PAGE || !huge_pays())
        return realloc(p, bytes ? bytes : 1);
    void *grown = lct__big_alloc(bytes);
    if (grown && used)
        memcpy(grown, p, used < bytes ? used : bytes);
    if (grown)
        free(p);
    return grown;
}

void *lct__big_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    size_t bytes = n * size;
    void *p = lct__big_alloc(bytes);
    if (p)
        memset(p, 0, bytes); /* the pages in order, not at random later */
    return p;
}
