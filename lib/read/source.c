/*
 * source.c - choosing where a trace's bytes come from and releasing it:
 * mmap for regular files, one heap buffer under LCT_NO_MMAP, and the
 * streaming source (stream.c) for everything that cannot be mapped
 * (pipes, FIFOs, terminals, devices, /proc files), when LCT_STREAM asks, and
 * under LCT_ONE_PASS when the stream is the faster here (source_probe.c).
 *
 * Mapped and read-whole inputs end in the same {data, size}, so framing
 * and decoding never know which one they read.
 */
#include "base/error_internal.h"
#include "read/source_internal.h"
#include "lct_read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_whole(int fd, const char *name, lct__source *src,
                      lct_error *err)
{
    unsigned char *buf = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (len == cap) {
            size_t grown = cap ? cap : 64 * 1024;
            /* Double until a step would pass SIZE_MAX/2; reallocarray
             * checks the multiplication for us. */
            unsigned char *next = reallocarray(buf, grown, 2);
            if (!next) {
                free(buf);
                return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, len,
                                 "trace file '%s': out of memory after "
                                 "reading %zu bytes",
                                 name, len);
            }
            buf = next;
            cap = grown * 2;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            return lct__fail(err, LCT_ERR_SYS, e, len,
                             "trace file '%s': read failed at offset %zu: %s",
                             name, len, strerror(e));
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    if (len == 0) {
        free(buf);
        buf = NULL;
    }
    src->data = buf;
    src->size = len;
    src->kind = buf ? LCT__SOURCE_HEAP : LCT__SOURCE_NONE;
    src->fd = -1;
    return LCT_OK;
}

/* Map size bytes of fd read-only, advised for reading front to back. */
static int map_file(int fd, size_t size, int extra_flags, const char *name,
                    void **out, lct_error *err)
{
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | extra_flags, fd, 0);
    if (map == MAP_FAILED) {
        int e = errno;
        return lct__fail(err, LCT_ERR_SYS, e, 0,
                         "trace file '%s': cannot map %zu bytes: %s", name,
                         size, strerror(e));
    }
    /* Traces are read front to back; a failed hint costs nothing. */
    (void)madvise(map, size, MADV_SEQUENTIAL);
    *out = map;
    return LCT_OK;
}

/* Keep our own copy of fd (the caller's stays theirs). */
static int keep_fd(int fd, const char *name, lct__source_kind kind,
                   bool seekable, lct__source *src, lct_error *err)
{
    src->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (src->fd < 0) {
        int e = errno;
        return lct__fail(err, LCT_ERR_SYS, e, 0,
                         "trace file '%s': cannot keep it open: %s", name,
                         strerror(e));
    }
    src->kind = kind;
    src->seekable = kind == LCT__SOURCE_STREAM && seekable;
    return LCT_OK;
}

/* Read fd as a stream: what cannot be mapped, or what is asked (or, under
 * LCT_ONE_PASS, found cheaper) to be streamed. */
static int as_stream(int fd, const char *name, const struct stat *st,
                     bool sized, unsigned flags, lct__source *src,
                     lct_error *err)
{
    /* A regular file's size is known up front (progress, stats); a pipe's
     * is what has been read so far. */
    src->size = sized ? (uint64_t)st->st_size : 0;
    src->regular = S_ISREG(st->st_mode);
    /* Not asked to stream: views must live until close, as a mapping's
     * do, so nothing read is dropped. */
    src->keep = !(flags & (LCT_STREAM | LCT_ONE_PASS));
    return keep_fd(fd, name, LCT__SOURCE_STREAM, sized, src, err);
}

int lct__source_from_fd(int fd, const char *name, unsigned flags,
                        lct__source *src, lct_error *err)
{
    memset(src, 0, sizeof *src);
    src->fd = -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        return lct__fail(err, LCT_ERR_SYS, e, 0,
                         "trace file '%s': cannot stat: %s", name,
                         strerror(e));
    }
    if (S_ISDIR(st.st_mode))
        return lct__fail(err, LCT_ERR_SYS, EISDIR, 0,
                         "trace file '%s': %s", name, strerror(EISDIR));
    /* A regular file whose size reads as 0 may still have bytes (/proc). */
    bool sized = S_ISREG(st.st_mode) && st.st_size > 0;
    if (flags & LCT_NO_MMAP)
        return read_whole(fd, name, src, err);
    bool one_pass = (flags & LCT_ONE_PASS) && sized &&
                    !(flags & (LCT_FOLLOW | LCT_POPULATE));
    if (!sized || (flags & LCT_STREAM) ||
        (one_pass && lct__one_pass_known((uint64_t)st.st_size) == 1))
        return as_stream(fd, name, &st, sized, flags, src, err);
    if ((uint64_t)st.st_size > SIZE_MAX)
        return lct__fail(err, LCT_ERR_SYS, EFBIG, 0,
                         "trace file '%s': %s", name, strerror(EFBIG));

    size_t size = (size_t)st.st_size;
    void *map = NULL; /* set when map_file succeeds */
    int rc = map_file(fd, size, (flags & LCT_POPULATE) ? MAP_POPULATE : 0,
                      name, &map, err);
    if (rc != LCT_OK)
        return rc;
    if (one_pass && lct__one_pass_streams(fd, map, size)) {
        munmap(map, size);
        return as_stream(fd, name, &st, sized, flags, src, err);
    }
    src->data = map;
    src->size = size;
    /* The descriptor stays for fstat: a mapping cannot tell a file that
     * shrank from one that holds zeros (reader.c, lct__shrank_before). */
    rc = keep_fd(fd, name, LCT__SOURCE_MMAP, true, src, err);
    if (rc != LCT_OK)
        lct__source_release(src);
    return rc;
}

int lct__source_real_size(const lct__source *src, uint64_t *size)
{
    struct stat st;
    if (src->fd < 0 || fstat(src->fd, &st) != 0)
        return LCT_ERR_SYS;
    *size = (uint64_t)st.st_size;
    return LCT_OK;
}

void lct__source_forget_after(lct__source *src, uint64_t size)
{
    if (src->kind != LCT__SOURCE_MMAP || size >= src->size)
        return;
    /* Whole pages past the end fault (SIGBUS); the page holding the end
     * already reads as zeros past it.  Zero pages in their place keep
     * every old view readable, if meaningless (callers were told). */
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t from = (size + page - 1) / page * page;
    if (from < src->size)
        (void)mmap((void *)(src->data + from), (size_t)(src->size - from),
                   PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

int lct__source_remap(lct__source *src, const char *name, bool *changed,
                      uint64_t *now_size, lct_error *err)
{
    *changed = false;
    if (src->kind != LCT__SOURCE_MMAP || src->fd < 0)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "trace file '%s': only a mapped file opened with "
                         "LCT_FOLLOW can be refreshed",
                         name);
    uint64_t now;
    if (lct__source_real_size(src, &now) != LCT_OK) {
        int e = errno;
        return lct__fail(err, LCT_ERR_SYS, e, 0,
                         "trace file '%s': cannot stat: %s", name,
                         strerror(e));
    }
    *now_size = now;
    if (now == src->size)
        return LCT_OK;
    if (now < src->size) {
        lct__source_forget_after(src, now);
        return lct__fail(err, LCT_ERR_CHANGED, 0, now,
                         "trace file '%s': shrank from %" PRIu64
                         " to %" PRIu64 " bytes while followed",
                         name, src->size, now);
    }
    if (now > SIZE_MAX)
        return lct__fail(err, LCT_ERR_SYS, EFBIG, 0, "trace file '%s': %s",
                         name, strerror(EFBIG));
    void *map = NULL; /* set when map_file succeeds */
    int rc = map_file(src->fd, (size_t)now, 0, name, &map, err);
    if (rc != LCT_OK)
        return rc;
    munmap((void *)src->data, (size_t)src->size);
    src->data = map;
    src->size = now;
    src->populated = 0; /* a new mapping: filled again from the reader on */
    src->prefetched = src->dropped = 0;
    *changed = true;
    return LCT_OK;
}

void lct__source_release(lct__source *src)
{
    if (src->fd >= 0)
        close(src->fd);
    if (src->kind == LCT__SOURCE_MMAP)
        munmap((void *)src->data, (size_t)src->size);
    else if (src->kind == LCT__SOURCE_HEAP)
        free((void *)src->data);
    free(src->buf);
    for (size_t i = 0; i < src->nretired; i++)
        free(src->retired[i]);
    free(src->retired);
    memset(src, 0, sizeof *src);
    src->fd = -1;
}

/* Filled this far ahead, in windows this large: a fault per 4 KiB page
 * makes a pass over a mapping cost more than a streamed pass; filling
 * ahead by madvise is one system call per window.  2 MiB windows cost
 * the CPU of larger ones and keep less of the file resident. */
#define AHEAD_WINDOW (2u << 20)

/* The first cache lines of the page after the reader's, asked for once
 * a page: a CPU whose prefetcher stops at each 4 KiB page waited on
 * memory at every page of a mapping where a read(2) into a small buffer
 * did not (the VM this was first measured on: `check --mmap` 123 ms
 * with a hint, twice the stream's user time without).  Every line 4 KiB
 * ahead, the hint first taken, cost 10-16% more CPU on a later VM whose
 * prefetcher needed none; the next page's first 8 lines cost it about
 * 5% more than no hint at all (docs/performance.md). */
#define PREFETCH_LINES 8

static void prefetch_ahead(lct__source *s, uint64_t pos)
{
    uint64_t next = (pos + 4096) & ~4095ull;
    if (next <= s->prefetched || next >= s->size)
        return;
    uint64_t to = next + PREFETCH_LINES * 64 < s->size
                      ? next + PREFETCH_LINES * 64
                      : s->size;
    for (uint64_t at = next; at < to; at += 64)
        __builtin_prefetch(s->data + at);
    s->prefetched = next;
}

/* Pages let go once they are this far behind the reader.  Kept, a pass
 * over a trace held all of it mapped in until lct_close: `lct check` on
 * the 551 MB trace had a 541 MB resident set (now 9 MB), and page tables
 * grow by 2 MB a GB read. */
#define BEHIND_KEEP (2u << 20)
#define DROP_STEP (2u << 20) /* at most a system call per this many bytes */

static void drop_behind(lct__source *s, uint64_t pos)
{
    if (pos < s->dropped + BEHIND_KEEP + DROP_STEP)
        return;
    uint64_t from = s->dropped & ~4095ull, to = (pos - BEHIND_KEEP) & ~4095ull;
    /* Only a hint: if refused, the pages stay until lct_close. */
    (void)madvise((void *)(s->data + from), (size_t)(to - from),
                  MADV_DONTNEED);
    s->dropped = to;
}

void lct__source_ahead(lct__source *s, uint64_t pos)
{
    if (s->kind != LCT__SOURCE_MMAP)
        return;
    prefetch_ahead(s, pos);
    drop_behind(s, pos);
#ifdef MADV_POPULATE_READ
    if (s->populated >= s->size || pos + AHEAD_WINDOW / 2 < s->populated)
        return;
    uint64_t from = s->populated > pos ? s->populated : pos & ~4095ull;
    uint64_t to = from + AHEAD_WINDOW < s->size ? from + AHEAD_WINDOW
                                                : s->size;
    /* An old kernel (EINVAL) or a file cut short (EFAULT): stop asking;
     * the pages fault in as they are read, as without this. */
    if (madvise((void *)(s->data + from), (size_t)(to - from),
                MADV_POPULATE_READ) != 0)
        to = s->size;
    s->populated = to;
#else
    (void)s;
    (void)pos;
#endif
}
