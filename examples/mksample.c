/*
 * mksample.c - write examples/sample.lct, the shipped realistic sample:
 *
 *     make sample          # examples/mksample 3000 examples/sample.lct
 *
 * The generator (tools/tracegen/, on the library's writer) is shared with
 * `lct gen` and bench/lct-bench.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tracegen.h"

/* Keys drawn from 100 documents: reuse enough that the sample's
 * miss-ratio curve (lct mrc) climbs instead of lying flat. */
#define SAMPLE_DOCS 100

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s RECORDS OUT.lct\n", argv[0]);
        return 2;
    }
    long records = strtol(argv[1], NULL, 10);
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (records <= 0 || fd < 0) {
        fprintf(stderr, "%s: bad count or cannot write %s\n", argv[0], argv[2]);
        return 1;
    }
    /* The shipped sample's keys are the older generator's (a chunk per
     * key): the documentation's figures are read off it. */
    gen_set_per_rank_hashes(true);
    int rc = gen_trace(fd, (uint64_t)records, 8, SAMPLE_DOCS, 0x9e3779b97f4a7c15u);
    if (close(fd) != 0 || rc != 0) {
        fprintf(stderr, "%s: write failed\n", argv[0]);
        return 1;
    }
    return 0;
}
