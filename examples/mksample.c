/*
 * mksample.c - write examples/sample.lct, the shipped realistic sample:
 *
 *     make sample          # examples/mksample 3000 examples/sample.lct
 *
 * The generator (test/support/gen.c) is shared with bench/lct-bench.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gen.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s RECORDS OUT.lct\n", argv[0]);
        return 2;
    }
    long records = strtol(argv[1], NULL, 10);
    FILE *out = fopen(argv[2], "wb");
    if (records <= 0 || !out) {
        fprintf(stderr, "%s: bad count or cannot write %s\n", argv[0], argv[2]);
        return 1;
    }
    int rc = gen_trace(out, (uint64_t)records, 8, 0x9e3779b97f4a7c15u);
    if (fclose(out) != 0 || rc != 0) {
        fprintf(stderr, "%s: write failed\n", argv[0]);
        return 1;
    }
    return 0;
}
