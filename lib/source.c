/*
 * source.c - getting a trace's bytes into memory: mmap for regular files,
 * one growing heap buffer for everything that cannot be mapped (pipes,
 * FIFOs, terminals, character devices), and releasing either.
 *
 * Both paths end in the same {data, size} so framing and decoding never
 * know which one they read.
 */
#include "error_internal.h"
#include "source_internal.h"

#include <errno.h>
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
    return LCT_OK;
}

int lct__source_from_fd(int fd, const char *name, unsigned flags,
                        lct__source *src, lct_error *err)
{
    memset(src, 0, sizeof *src);
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
    if (!S_ISREG(st.st_mode) || (flags & LCT_NO_MMAP))
        return read_whole(fd, name, src, err);
    if (st.st_size == 0)
        return LCT_OK; /* mmap refuses length 0; the caller says "empty" */
    if ((uint64_t)st.st_size > SIZE_MAX)
        return lct__fail(err, LCT_ERR_SYS, EFBIG, 0,
                         "trace file '%s': %s", name, strerror(EFBIG));

    size_t size = (size_t)st.st_size;
    int map_flags = MAP_PRIVATE | ((flags & LCT_POPULATE) ? MAP_POPULATE : 0);
    void *map = mmap(NULL, size, PROT_READ, map_flags, fd, 0);
    if (map == MAP_FAILED) {
        int e = errno;
        return lct__fail(err, LCT_ERR_SYS, e, 0,
                         "trace file '%s': cannot map %zu bytes: %s", name,
                         size, strerror(e));
    }
    /* Traces are read front to back; a failed hint costs nothing. */
    (void)madvise(map, size, MADV_SEQUENTIAL);
    src->data = map;
    src->size = size;
    src->kind = LCT__SOURCE_MMAP;
    return LCT_OK;
}

void lct__source_release(lct__source *src)
{
    if (src->kind == LCT__SOURCE_MMAP)
        munmap((void *)src->data, (size_t)src->size);
    else if (src->kind == LCT__SOURCE_HEAP)
        free((void *)src->data);
    memset(src, 0, sizeof *src);
}
