/*
 * pio_internal.h - whole reads and writes at an offset (pread/pwrite
 * until done), for the files the library reads or writes by position:
 * the source probe's sample of a trace, a curve's spill file.
 */
#ifndef LCT_PIO_INTERNAL_H
#define LCT_PIO_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

/* len bytes at off into p; false on an error or an end of file first. */
static inline bool lct__pread_full(int fd, void *p, size_t len, uint64_t off)
{
    char *c = p;
    while (len) {
        ssize_t r = pread(fd, c, len, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        c += r, len -= (size_t)r, off += (uint64_t)r;
    }
    return true;
}

/* len bytes of p written at off; false on an error (a full disk). */
static inline bool lct__pwrite_full(int fd, const void *p, size_t len,
                                    uint64_t off)
{
    const char *c = p;
    while (len) {
        ssize_t w = pwrite(fd, c, len, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c += w, len -= (size_t)w, off += (uint64_t)w;
    }
    return true;
}

#endif
