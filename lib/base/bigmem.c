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
 * lct_large_array_grow hands the same to the tools' own columns.
 */
#include "base/bigmem_internal.h"

#include "base/clock_internal.h"
#include "lct.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)
/* Arrays from 256 KiB take 2 MiB pages where those pay: a key map's
 * table or a stream's first block grows through 256 KiB-1 MiB, 64-256
 * pages of 4 KiB that fault at about 15 us each under shadow paging,
 * against a few hundred us for a 2 MiB page.  At most 1.75 MiB more
 * memory an array, and the arrays that come here are few. */
#define BIG_MIN (HUGE_PAGE / 8)
/* Per round: 4 KiB pages touched (a sixteenth of an extent, scaled up)
 * against one 2 MiB extent; the least of the rounds counts.  About
 * 1.5-1.9 ms in all under shadow paging (4.7-5.8 ms with 128 pages a
 * round, whose faults were a fifth of `lct keys`'), well under a
 * millisecond elsewhere. */
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
 * fresh memory: in one hour here 3 of 16 `lct keys` runs went on 4 KiB
 * pages (11,000 faults against 2,300, twice the CPU time), and a copy of
 * this probe once saw both rounds' 2 MiB pages take 4.2-4.6 ms against
 * the usual 0.14, 4 KiB pages as usual (no thp_fault_fallback: every
 * 2 MiB page was granted).  An hour later none did. */
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

void *lct_large_array_grow(void *p, size_t used, uint64_t n, size_t size)
{
    return lct__big_grow(p, used, n, size);
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
