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

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLOTS 256

typedef struct slot {
    _Atomic(uintptr_t) start; /* 0: free */
    _Atomic(size_t) len;
    _Atomic(uint64_t) lost;
} slot;

static slot slots[SLOTS];
static struct sigaction previous;
static atomic_int installed;

int lct__guard_register(const void *start, size_t len)
{
    /* A free slot has start 0 and len 0; claim it by its start, then
     * give it a length (the handler matches nothing on a zero length). */
    for (int i = 0; i < SLOTS; i++) {
        uintptr_t expected = 0;
        if (atomic_compare_exchange_strong(&slots[i].start, &expected,
                                           (uintptr_t)start)) {
            atomic_store(&slots[i].lost, LCT__NOTHING_LOST);
            atomic_store(&slots[i].len, len);
            return i;
        }
    }
    return -1;
}

void lct__guard_update(int i, const void *start, size_t len)
{
    if (i < 0)
        return;
    /* Shrink to nothing first, so the handler never sees a half update. */
    atomic_store(&slots[i].len, 0);
    atomic_store(&slots[i].start, (uintptr_t)start);
    atomic_store(&slots[i].len, len);
}

void lct__guard_unregister(int i)
{
    if (i < 0)
        return;
    atomic_store(&slots[i].len, 0);
    atomic_store(&slots[i].start, 0);
}

uint64_t lct__guard_lost(int i)
{
    return i < 0 ? LCT__NOTHING_LOST
                 : atomic_load_explicit(&slots[i].lost, memory_order_relaxed);
}

static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
    uintptr_t addr = (uintptr_t)info->si_addr;
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < SLOTS; i++) {
        uintptr_t start = atomic_load(&slots[i].start);
        size_t len = atomic_load(&slots[i].len);
        if (!start || addr < start || addr - start >= len)
            continue;
        uintptr_t from = addr & ~((uintptr_t)page - 1);
        if (from < start)
            from = start;
        size_t rest = start + len - from;
        if (mmap((void *)from, rest, PROT_READ,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
            break; /* cannot repair: fall through to the default */
        uint64_t off = from - start, seen = atomic_load(&slots[i].lost);
        while (off < seen &&
               !atomic_compare_exchange_weak(&slots[i].lost, &seen, off))
            ;
        return; /* the read is retried and now sees zeros */
    }
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
