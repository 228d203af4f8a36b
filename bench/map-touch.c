/*
 * map-touch.c - what the first touch of a mapped trace costs, 2 MiB
 * extent by 2 MiB extent, and whether the kernel mapped each extent by
 * one page-table entry (a 2 MiB page-cache folio mapped by its PMD) or
 * by 4 KiB entries: the reason a mapped pass can cost more than a
 * streamed one on a guest whose page tables the host shadows.
 *
 *     bench/map-touch FILE
 *
 * Maps FILE read-only (the library's way: MAP_PRIVATE, the kernel's
 * choice of address), reads one byte of every 4 KiB page, one 2 MiB
 * extent at a time, and counts the extent's minor faults: one fault
 * for the whole extent means it was mapped by its PMD.  Prints, for
 * each kind, the extents and the mean elapsed microseconds to touch
 * one; then the whole file touched again (every page already mapped)
 * and a pread(2) of it into a 256 KiB buffer, both in ms.  Run it on a
 * file in the page cache; what it prints depends on how the file got
 * there (bench/README.md).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXTENT ((size_t)2 << 20)
#define PAGE 4096

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static unsigned touch(const unsigned char *p, size_t len)
{
    unsigned sum = 0;
    for (size_t i = 0; i < len; i += PAGE)
        sum += *(const volatile unsigned char *)(p + i);
    return sum;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: map-touch FILE\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (off_t)EXTENT) {
        fprintf(stderr, "map-touch: %s: not a readable file of 2 MiB or more\n",
                argv[1]);
        return 1;
    }
    size_t size = (size_t)st.st_size;
    const unsigned char *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        perror("map-touch: mmap");
        return 1;
    }
    unsigned sum = 0;
    uint64_t ns[2] = {0, 0};
    size_t extents[2] = {0, 0};
    size_t whole = size / EXTENT * EXTENT;
    for (size_t at = 0; at < whole; at += EXTENT) {
        long f0 = minor_faults();
        uint64_t t0 = now_ns();
        sum += touch(map + at, EXTENT);
        uint64_t t = now_ns() - t0;
        int by_pmd = minor_faults() - f0 == 1;
        ns[by_pmd] += t;
        extents[by_pmd]++;
    }
    sum += touch(map + whole, size - whole);
    uint64_t t0 = now_ns();
    sum += touch(map, size);
    uint64_t again = now_ns() - t0;
    static unsigned char buf[256 << 10];
    t0 = now_ns();
    for (size_t at = 0; at < size;) {
        ssize_t got = pread(fd, buf, sizeof buf, (off_t)at);
        if (got <= 0)
            break;
        at += (size_t)got;
    }
    uint64_t copy = now_ns() - t0;
    printf("%s: %zu MiB\n", argv[1], size >> 20);
    printf("extents mapped by their PMD: %zu, %.1f us each to touch\n",
           extents[1], extents[1] ? (double)ns[1] / 1e3 / (double)extents[1] : 0);
    printf("extents mapped 4 KiB at a time: %zu, %.1f us each to touch\n",
           extents[0], extents[0] ? (double)ns[0] / 1e3 / (double)extents[0] : 0);
    printf("every page again: %.1f ms; pread of the file: %.1f ms\n",
           (double)again / 1e6, (double)copy / 1e6);
    return sum == 0xdeadbeef; /* keeps the reads */
}
