/*
 * bigmem.c - large fresh allocations, and whether to back them with
 * 2 MiB pages.  A reference stream of a few million references, its
 * export and its key map are tens of MB that are written once, in
 * order, soon after they are allocated: the cost is the first touch of
 * each page.  Under shadow paging a 4 KiB page's first touch costs a
 * trip to the hypervisor and 2 MiB pages save most of those; elsewhere
 * 2 MiB pages can be the slower (the time goes in zeroing them); the
 * figures are in docs/performance.md.  So the first large
 * allocation of a process times both, on fresh memory of each kind, and
 * the advice follows the answer.  Either answer gives the same results.
 */
#include "base/bigmem_internal.h"

#include "base/clock_internal.h"
#include "lct_core.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)
/* Arrays from 256 KiB take 2 MiB pages where those pay: a key map's
 * table or a stream's first block grows through 256 KiB-1 MiB, 64-256
 * pages of 4 KiB that each fault under shadow paging, where one 2 MiB
 * page costs about what a few dozen of them do.  At most 1.75 MiB more
 * memory an array, and the arrays that come here are few. */
#define BIG_MIN (HUGE_PAGE / 8)
/* Per round: 4 KiB pages touched (a sixteenth of an extent, scaled up)
 * against one 2 MiB extent; the least of the rounds counts.  Few pages,
 * so the probe stays a small part of a command's faults. */
#define SMALL_PAGES 32
#define ROUNDS 2
#define ATTEMPTS 3 /* measurements, while one is unclear */

enum { UNKNOWN = 0, HUGE = 1, SMALL = 2 };
static _Atomic int verdict = UNKNOWN;

static uint64_t touch(unsigned char *p, size_t pages)
{
    uint64_t t0 = lct__now_ns();
    for (size_t i = 0; i < pages; i++)
        ((volatile unsigned char *)p)[i * 4096] = 1;
    return lct__now_ns() - t0;
}

int lct__huge_pages_judge(uint64_t small, uint64_t huge)
{
    if (huge < small / 2 + small % 2) /* 2 * huge < small, unbounded */
        return 1; /* clearly cheaper, not within noise */
    return huge < small ? -1 : 0;
}

/* One measurement on fresh memory: lct__huge_pages_judge's answer, or 0
 * when 2 MiB pages cannot be asked for here. */
static int measure_once(void)
{
#ifdef MADV_HUGEPAGE
    size_t len = (2 * ROUNDS + 1) * HUGE_PAGE;
    unsigned char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return 0;
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
    return ok ? lct__huge_pages_judge(small, huge) : 0;
#else
    return 0;
#endif
}

/* Whether 2 MiB pages fault in clearly cheaper here, measured now.  A
 * 2 MiB page cheaper but not clearly so is measured again on other
 * fresh memory: one unlucky round (a host busy granting huge pages) must
 * not send a whole command to 4 KiB pages (docs/performance.md). */
static bool measure(void)
{
    int answer = -1;
    for (unsigned attempt = 0; answer < 0 && attempt < ATTEMPTS; attempt++)
        answer = measure_once();
    return answer == 1;
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
    if (bytes < BIG_MIN || bytes > SIZE_MAX - HUGE_PAGE || !huge_pays())
        return malloc(bytes ? bytes : 1);
    size_t whole = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    void *p = aligned_alloc(HUGE_PAGE, whole);
    if (p)
        (void)madvise(p, whole, MADV_HUGEPAGE);
    return p;
}

void *lct__big_grow(void *p, size_t used, uint64_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    size_t bytes = (size_t)n * size;
    if (bytes < BIG_MIN || !huge_pays())
        return realloc(p, bytes ? bytes : 1);
    void *grown = lct__big_alloc(bytes);
    if (grown && used)
        memcpy(grown, p, (used < n ? used : (size_t)n) * size);
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
