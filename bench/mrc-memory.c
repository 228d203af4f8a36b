/*
 * mrc-memory.c - the peak memory of an exact curve, a key and a
 * reference, when keys have one size and when they have many (lct gen's
 * traces all have one, so `lct mrc` on them cannot show the other): N
 * references over K keys, drawn with skewed reuse, computed by the
 * library in this process as they come (streamed, what `lct mrc` does)
 * or after gathering them (gathered, what `lct mrc -j N` does), and the
 * process's peak resident size (getrusage).
 *
 *     bench/mrc-memory N K uniform|varied [streamed|gathered]
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

static void draw(uint64_t keys, bool varied, uint64_t *id, uint64_t *bytes,
                 bool *read)
{
    double u = (double)(rng() >> 11) / 9007199254740992.0;
    uint64_t k = (uint64_t)(u * u * (double)keys); /* small keys often */
    *id = (k + 1) * 0x9e3779b97f4a7c15ull;
    *bytes = varied ? 4096 * (1 + k % 64) : 1 << 20;
    *read = rng() % 4 != 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5 ||
        (strcmp(argv[3], "uniform") && strcmp(argv[3], "varied")) ||
        (argc == 5 && strcmp(argv[4], "streamed") &&
         strcmp(argv[4], "gathered"))) {
        fprintf(stderr, "usage: %s N K uniform|varied [streamed|gathered]\n",
                argv[0]);
        return 2;
    }
    uint64_t n = strtoull(argv[1], NULL, 10), keys = strtoull(argv[2], NULL, 10);
    bool varied = strcmp(argv[3], "varied") == 0;
    bool gathered = argc == 5 && strcmp(argv[4], "gathered") == 0;
    if (n == 0 || keys == 0)
        return 2;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long before = ru.ru_maxrss;
    lct_refs *refs = NULL;
    lct_mrc_stream *s = NULL;
    lct_mrc_options o = {.sample_rate = 1};
    if (gathered ? lct_refs_new(&refs) != LCT_OK
                 : lct_mrc_stream_new(&o, &s, NULL) != LCT_OK)
        return 1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id, bytes;
        bool read;
        draw(keys, varied, &id, &bytes, &read);
        if ((gathered ? lct_refs_add(refs, id, bytes, (double)i / 1000, read)
                      : lct_mrc_stream_add(s, id, bytes, read)) != LCT_OK)
            return 1;
    }
    lct_mrc *m;
    if ((gathered ? lct_mrc_compute_with(refs, &o, &m, NULL)
                  : lct_mrc_stream_finish(s, &m, NULL)) != LCT_OK)
        return 1;
    lct_mrc_totals t;
    lct_mrc_totals_get(m, &t);
    getrusage(RUSAGE_SELF, &ru);
    double peak = (double)ru.ru_maxrss * 1024;
    printf("%s sizes, %s: %llu references over %llu keys: peak %.0f MB "
           "(%.0f MB before), %.1f bytes a key, %.1f a reference; "
           "(peak - 16 MiB) / keys %.1f\n",
           argv[3], gathered ? "gathered" : "streamed",
           (unsigned long long)n, (unsigned long long)t.distinct_keys,
           peak / 1e6, (double)before * 1024 / 1e6,
           peak / (double)t.distinct_keys, peak / (double)n,
           (peak - 16 * 1048576.0) / (double)t.distinct_keys);
    lct_mrc_free(m);
    lct_mrc_stream_free(s);
    lct_refs_free(refs);
    return 0;
}
