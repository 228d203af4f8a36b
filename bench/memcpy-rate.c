/*
 * memcpy-rate.c - what a plain memcpy of one value size gives, for
 * bench/replay's mem: store figures to be read against: COUNT copies of
 * SIZE bytes from one source into BUFFERS destination buffers taken in
 * turn (faulted in before timing, as a full mem: store's buffers are),
 * bytes a second of CPU time.
 *
 *     bench/memcpy-rate SIZE COUNT BUFFERS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: memcpy-rate SIZE COUNT BUFFERS\n");
        return 2;
    }
    size_t size = strtoull(argv[1], NULL, 10);
    long count = strtol(argv[2], NULL, 10), nbuf = strtol(argv[3], NULL, 10);
    if (size == 0 || count < 1 || nbuf < 1)
        return 2;
    unsigned char *src = malloc(size);
    unsigned char **dst = calloc((size_t)nbuf, sizeof *dst);
    if (!src || !dst)
        return 1;
    memset(src, 0x5a, size);
    for (long i = 0; i < nbuf; i++) {
        if (!(dst[i] = malloc(size)))
            return 1;
        memset(dst[i], 1, size);
    }
    double t0 = cpu_seconds();
    for (long i = 0; i < count; i++) {
        src[0] = (unsigned char)i; /* each copy differs: none is elided */
        memcpy(dst[i % nbuf], src, size);
    }
    double t = cpu_seconds() - t0;
    unsigned sum = 0;
    for (long i = 0; i < nbuf; i++)
        sum += dst[i][0];
    printf("%.0f %u\n", (double)size * (double)count / t, sum);
    return 0;
}
