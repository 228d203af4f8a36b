/*
 * guard.c - surviving a file that shrinks under its mapping.
 *
 * Touching a page of a file mapping past the file's end raises SIGBUS.
 * Readers register their mappings here; the handler, when the faulting
 * address lies in one, maps anonymous zero pages over the rest of that
 * mapping (so the faulting instruction, restarted, reads zeros), and
 * records the lost offset.  The reader checks that offset after decoding
 * each frame and never yields a record that touched lost bytes.
 *
 * The handler only reads atomics and calls mmap (a system call that is
 * safe here in practice on Linux, though POSIX does not list it).
 */
#include "base/error_internal.h"
#include "read/guard_internal.h"
#include "lct_read.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Slots come in chunks: the first is static, the others are mapped when
 * every slot is taken and never given back, so the handler can walk the
 * chain at any moment without a lock (a chunk, once linked, stays). */
#define CHUNK_SLOTS 256

typedef struct slot {
    _Atomic(uintptr_t) start; /* 0: free */
    _Atomic(size_t) len;
    _Atomic(uint64_t) lost;
} slot;

typedef struct chunk {
    slot slots[CHUNK_SLOTS];
    struct chunk *_Atomic next;
} chunk;

static chunk first;
static struct sigaction previous;
static atomic_int installed;

/* The next chunk, mapped and linked if there is none yet; NULL when no
 * memory could be had. */
static chunk *next_chunk(chunk *c)
{
    chunk *n = atomic_load(&c->next);
    if (n)
        return n;
    void *m = mmap(NULL, sizeof(chunk), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    chunk *mine = m, *expected = NULL; /* zero pages: every slot free */
    if (atomic_compare_exchange_strong(&c->next, &expected, mine))
        return mine;
    munmap(m, sizeof(chunk)); /* another thread linked one first */
    return expected;
}

static slot *slot_at(int i)
{
    if (i < 0)
        return NULL;
    chunk *c = &first;
    for (int n = i / CHUNK_SLOTS; c && n > 0; n--)
        c = atomic_load(&c->next);
    return c ? &c->slots[i % CHUNK_SLOTS] : NULL;
}

int lct__guard_register(const void *start, size_t len)
{
    /* A free slot has start 0 and len 0; claim it by its start, then
     * give it a length (the handler matches nothing on a zero length). */
    int base = 0;
    for (chunk *c = &first; c; c = next_chunk(c), base += CHUNK_SLOTS) {
        if (base > INT_MAX - 2 * CHUNK_SLOTS)
            return -1;
        for (int i = 0; i < CHUNK_SLOTS; i++) {
            uintptr_t expected = 0;
            if (atomic_compare_exchange_strong(&c->slots[i].start, &expected,
                                               (uintptr_t)start)) {
                atomic_store(&c->slots[i].lost, LCT__NOTHING_LOST);
                atomic_store(&c->slots[i].len, len);
                return base + i;
            }
        }
    }
    return -1;
}

void lct__guard_update(int i, const void *start, size_t len)
{
    slot *s = slot_at(i);
    if (!s)
        return;
    /* Shrink to nothing first, so the handler never sees a half update. */
    atomic_store(&s->len, 0);
    atomic_store(&s->start, (uintptr_t)start);
    atomic_store(&s->len, len);
}

void lct__guard_unregister(int i)
{
    slot *s = slot_at(i);
    if (!s)
        return;
    atomic_store(&s->len, 0);
    atomic_store(&s->start, 0);
}

uint64_t lct__guard_lost(int i)
{
    slot *s = slot_at(i);
    return s ? atomic_load_explicit(&s->lost, memory_order_relaxed)
             : LCT__NOTHING_LOST;
}

/* Repair a fault at addr if it lies in slot s's mapping. */
static bool repair(slot *s, uintptr_t addr, uintptr_t page)
{
    uintptr_t start = atomic_load(&s->start);
    size_t len = atomic_load(&s->len);
    if (!start || addr < start || addr - start >= len)
        return false;
    uintptr_t from = addr & ~(page - 1);
    if (from < start)
        from = start;
    size_t rest = start + len - from;
    if (mmap((void *)from, rest, PROT_READ,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
        return false; /* cannot repair: fall through to the default */
    uint64_t off = from - start, seen = atomic_load(&s->lost);
    while (off < seen && !atomic_compare_exchange_weak(&s->lost, &seen, off))
        ;
    return true; /* the read is retried and now sees zeros */
}

static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
    uintptr_t addr = (uintptr_t)info->si_addr;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (chunk *c = &first; c; c = atomic_load(&c->next))
        for (int i = 0; i < CHUNK_SLOTS; i++)
            if (repair(&c->slots[i], addr, page))
                return;
    /* Not ours: whatever was there before us. */
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, info, uctx);
        return;
    }
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        return;
    }
    signal(SIGBUS, SIG_DFL);
    raise(SIGBUS);
}

bool lct__guard_installed(void)
{
    return atomic_load(&installed) != 0;
}

lct_status lct_guard_install(lct_error *err)
{
    if (atomic_exchange(&installed, 1))
        return LCT_OK;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &previous) != 0) {
        int e = errno;
        atomic_store(&installed, 0);
        return lct__fail(err, LCT_ERR_SYS, e, 0,
                         "lct_guard_install: sigaction: %s", strerror(e));
    }
    return LCT_OK;
}
