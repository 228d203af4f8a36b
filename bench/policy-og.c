/*
 * policy-og.c - one lct_policy at one capacity over a libCacheSim
 * oracleGeneral file (24-byte records: uint32 time, uint64 id, uint32
 * size, int64 next access, -1 none), every record a request, as
 * libCacheSim's cachesim reads the same file: the work bench/cachesim
 * times against cachesim's.  Prints "requests misses".
 *
 *   bench/policy-og FILE POLICY CAPACITY [bytes]
 * Sizes count only with "bytes" (cachesim's default); without, every
 * record weighs 1, as cachesim --ignore-obj-size 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lct.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: policy-og FILE POLICY CAPACITY [bytes]\n");
        return 2;
    }
    lct_policy_kind kind;
    lct_policy *p;
    FILE *f = fopen(argv[1], "rb");
    if (!f || lct_policy_find(argv[2], &kind) != LCT_OK ||
        lct_policy_new(kind, strtoull(argv[3], NULL, 10), &p, NULL) !=
            LCT_OK) {
        fprintf(stderr, "policy-og: cannot open %s or run %s at %s\n",
                argv[1], argv[2], argv[3]);
        return 2;
    }
    bool sized = argc > 4 && strcmp(argv[4], "bytes") == 0;
    static unsigned char buf[24 * 4096];
    uint64_t n = 0, misses = 0;
    size_t got;
    while ((got = fread(buf, 24, 4096, f)) > 0) {
        for (size_t r = 0; r < got; r++) {
            const unsigned char *rec = buf + 24 * r;
            uint64_t id;
            uint32_t size;
            int64_t next;
            memcpy(&id, rec + 4, 8);
            memcpy(&size, rec + 12, 4);
            memcpy(&next, rec + 16, 8);
            int hit = lct_policy_get(p, id, sized ? size : 1,
                                     next < 0 ? INT64_MAX : next);
            if (hit < 0) {
                fprintf(stderr, "policy-og: out of memory\n");
                return 1;
            }
            misses += hit == 0;
            n++;
        }
    }
    printf("%" PRIu64 " %" PRIu64 "\n", n, misses);
    lct_policy_free(p);
    fclose(f);
    return 0;
}
