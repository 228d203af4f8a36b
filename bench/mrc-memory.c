/*
 * mrc-memory.c - the peak memory of an exact curve a reference, when
 * keys have one size and when they have many (lct gen's traces all have
 * one, so `lct mrc` on them cannot show the other): N references over K
 * keys, drawn with skewed reuse, gathered and computed by the library in
 * this process, and its peak resident size (getrusage) over N.
 *
 *     bench/mrc-memory N K uniform|varied
 */
#include <lct.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[3], "uniform") && strcmp(argv[3], "varied"))) {
        fprintf(stderr, "usage: %s N K uniform|varied\n", argv[0]);
        return 2;
    }
    uint64_t n = strtoull(argv[1], NULL, 10), keys = strtoull(argv[2], NULL, 10);
    bool varied = strcmp(argv[3], "varied") == 0;
    if (n == 0 || keys == 0)
        return 2;
    lct_refs *refs;
    if (lct_refs_new(&refs) != LCT_OK)
        return 1;
    for (uint64_t i = 0; i < n; i++) {
        double u = (double)(rng() >> 11) / 9007199254740992.0;
        uint64_t k = (uint64_t)(u * u * (double)keys); /* small keys often */
        uint64_t id = (k + 1) * 0x9e3779b97f4a7c15ull;
        uint64_t bytes = varied ? 4096 * (1 + k % 64) : 1 << 20;
        if (lct_refs_add(refs, id, bytes, (double)i / 1000, rng() % 4 != 0) !=
            LCT_OK)
            return 1;
    }
    lct_mrc *m;
    if (lct_mrc_compute(refs, 1, &m, NULL) != LCT_OK)
        return 1;
    lct_mrc_totals t;
    lct_mrc_totals_get(m, &t);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%s sizes: %llu references over %llu keys: peak %.0f MB, "
           "%.1f bytes a reference\n",
           argv[3], (unsigned long long)n,
           (unsigned long long)t.distinct_keys, (double)ru.ru_maxrss / 1024,
           (double)ru.ru_maxrss * 1024 / (double)n);
    lct_mrc_free(m);
    lct_refs_free(refs);
    return 0;
}
