/*
 * test_mrc_stream.c - the streaming curve (lct_mrc_stream) against the
 * curve of the gathered stream (lct_mrc_compute_with) over the same
 * references: equal totals and equal hit ratios at every key capacity,
 * every chunk-position capacity, and at and around every byte capacity
 * where a ratio can change, on streams that exercise what the stream
 * learns late: one size then another, sizes that arrive smallest first,
 * largest first and in between, unknown sizes, more sizes than bands,
 * calls under the prefix rule, a call never ended, and enough re-reads
 * to merge the byte distances several times; and, with the spill bounds
 * made tiny, byte distances written to a temporary file in many runs and
 * merged back in several rounds, or kept in memory when no file can be
 * made; on one CPU, where the pass runs on the caller's thread.
 */
#define _GNU_SOURCE /* cpu_set_t (cpus.h) */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cpus.h"
#include "lct.h"
#include "lmcache/mrc_internal.h" /* the spill bounds; where a curve lies */

static uint64_t rng_state;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t id_of(uint64_t k)
{
    uint64_t z = k * 0x9e3779b97f4a7c15u + 777;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    return z ^ (z >> 31);
}

/* How a stream's sizes go. */
typedef enum sizes {
    ONE,          /* every reference 4096 */
    ONE_THEN_TWO, /* 4096, then from the middle on some keys 1000 */
    ASCENDING,    /* new sizes come largest last */
    DESCENDING,   /* new sizes come smallest last */
    SCATTERED,    /* a size a key, five sizes, in no order */
    UNKNOWN,      /* some references say 0 */
    JUMPING,      /* a size drawn at each reference: keys grow and shrink */
    MANY,         /* 20 sizes: more than the bands */
} sizes;

static uint64_t size_of(sizes how, uint64_t key, size_t i, size_t n)
{
    switch (how) {
    case ONE:
        return 4096;
    case ONE_THEN_TWO:
        return i > n / 2 && key % 3 == 0 ? 1000 : 4096;
    case ASCENDING: /* size grows with time: each new one the largest */
        return 100 * (1 + (uint64_t)(i * 6 / n)) * (1 + key % 2);
    case DESCENDING:
        return 100 * (7 - (uint64_t)(i * 6 / n)) * (1 + key % 2);
    case SCATTERED:
        return (uint64_t[]){300, 50, 900, 120, 700}[key % 5];
    case UNKNOWN:
        return rng() % 4 == 0 ? 0 : 64 * (1 + key % 3);
    case JUMPING:
        return (uint64_t[]){64, 200, 900, 3000}[rng() % 4];
    case MANY:
        return 10 * (1 + key % 20);
    }
    return 1;
}

/* Both curves of one random stream: n references over `universe` keys
 * with skewed reuse, in calls of 1 to 12 keys (ended with `per` keys a
 * position, the last call left open when open_end). */
static void both(size_t n, uint64_t universe, sizes how, bool prefix,
                 bool every, unsigned per, bool open_end, uint64_t seed,
                 lct_mrc **gathered, lct_mrc **streamed)
{
    rng_state = seed;
    lct_refs *refs;
    lct_mrc_stream *s;
    lct_mrc_options o = {.sample_rate = 1, .every_reference = every,
                         .prefix = prefix};
    cr_assert_eq(lct_refs_new(&refs), LCT_OK);
    cr_assert_eq(lct_mrc_stream_new(&o, &s, NULL), LCT_OK);
    size_t left = 0;
    bool read = true;
    for (size_t i = 0; i < n; i++) {
        if (left == 0) {
            left = 1 + rng() % 12;
            read = rng() % 4 != 0;
        }
        double u = (double)(rng() >> 11) / 9007199254740992.0;
        uint64_t k = (uint64_t)(u * u * (double)universe);
        uint64_t bytes = size_of(how, k, i, n);
        cr_assert_eq(lct_refs_add(refs, id_of(k), bytes, 0, read), LCT_OK);
        cr_assert_eq(lct_mrc_stream_add(s, id_of(k), bytes, read), LCT_OK);
        if (--left == 0 && !(open_end && i + 1 == n)) {
            cr_assert_eq(lct_refs_end_call(refs, per), LCT_OK);
            cr_assert_eq(lct_mrc_stream_end_call(s, per), LCT_OK);
        }
    }
    if (open_end && left == 0) { /* the last call: one more, not ended */
        cr_assert_eq(lct_refs_add(refs, id_of(1), 4096, 0, true), LCT_OK);
        cr_assert_eq(lct_mrc_stream_add(s, id_of(1), 4096, true), LCT_OK);
    }
    cr_assert_eq(lct_mrc_compute_with(refs, &o, gathered, NULL), LCT_OK);
    cr_assert_eq(lct_mrc_stream_finish(s, streamed, NULL), LCT_OK);
    cr_assert_eq(lct_mrc_stream_add(s, 1, 1, true), LCT_ERR_NOMEM,
                 "a finished stream takes no more");
    lct_mrc_stream_free(s);
    lct_refs_free(refs);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void same_curves(const lct_mrc *a, const lct_mrc *b, const char *what)
{
    lct_mrc_totals ta, tb;
    lct_mrc_totals_get(a, &ta);
    lct_mrc_totals_get(b, &tb);
    cr_assert_eq(memcmp(&ta, &tb, sizeof ta), 0, "%s: totals differ "
                 "(reads %llu/%llu keys %llu/%llu min %llu/%llu max "
                 "%llu/%llu mean %g/%g calls %llu/%llu)", what,
                 (unsigned long long)ta.reads, (unsigned long long)tb.reads,
                 (unsigned long long)ta.distinct_keys,
                 (unsigned long long)tb.distinct_keys,
                 (unsigned long long)ta.min_key_bytes,
                 (unsigned long long)tb.min_key_bytes,
                 (unsigned long long)ta.max_key_bytes,
                 (unsigned long long)tb.max_key_bytes, ta.mean_key_bytes,
                 tb.mean_key_bytes, (unsigned long long)ta.calls,
                 (unsigned long long)tb.calls);
    uint64_t maxd = lct_mrc_max_distance(a);
    cr_assert_eq(maxd, lct_mrc_max_distance(b), "%s: max distance", what);
    for (uint64_t c = 0; c <= maxd + 2; c++) {
        cr_assert_eq(lct_mrc_hit_ratio(a, c), lct_mrc_hit_ratio(b, c),
                     "%s: keys %llu", what, (unsigned long long)c);
        cr_assert_eq(lct_mrc_position_hit_ratio(a, c),
                     lct_mrc_position_hit_ratio(b, c),
                     "%s: positions %llu", what, (unsigned long long)c);
    }
    /* A byte ratio changes only where a distance or a band bound is:
     * every capacity that is a sum of sizes up to the largest distance
     * is too many to try, so try each multiple of 10 and 64 bytes up to
     * a bound, and the bytes the curve's own points ask. */
    uint64_t top = (maxd + 2) * (ta.max_key_bytes + 1) + 1;
    uint64_t step = top / 20000 + 1;
    for (uint64_t x = 0; x <= top; x += step) {
        uint64_t xs[] = {x, x / 10 * 10, x / 64 * 64, x + 1};
        qsort(xs, 4, sizeof *xs, cmp_u64);
        for (int i = 0; i < 4; i++) {
            cr_assert_eq(lct_mrc_byte_hit_ratio(a, xs[i]),
                         lct_mrc_byte_hit_ratio(b, xs[i]),
                         "%s: bytes %llu", what, (unsigned long long)xs[i]);
            cr_assert_eq(lct_mrc_position_byte_hit_ratio(a, xs[i]),
                         lct_mrc_position_byte_hit_ratio(b, xs[i]),
                         "%s: positions at bytes %llu", what,
                         (unsigned long long)xs[i]);
        }
    }
    for (uint64_t x = 0; x < 5000; x++) {
        cr_assert_eq(lct_mrc_byte_hit_ratio(a, x),
                     lct_mrc_byte_hit_ratio(b, x), "%s: bytes %llu", what,
                     (unsigned long long)x);
        cr_assert_eq(lct_mrc_position_byte_hit_ratio(a, x),
                     lct_mrc_position_byte_hit_ratio(b, x),
                     "%s: positions at bytes %llu", what,
                     (unsigned long long)x);
    }
}

/* Whether a curve's byte distances (its own or a band's) came back from
 * the spill file: they then lie in a mapping. */
static bool spilled(const lct_mrc *m)
{
    bool any = m->bytes_map != NULL || m->pos_bytes.map != NULL;
    for (unsigned j = 0; j < m->nbands; j++)
        any |= m->band[j].map != NULL || m->band[j].pos.map != NULL;
    return any;
}

/* Both curves of one stream, the same; whether the streamed one was
 * spilled. */
static bool check(size_t n, uint64_t universe, sizes how, bool prefix,
                        bool every, unsigned per, bool open_end,
                        uint64_t seed)
{
    lct_mrc *g, *s;
    both(n, universe, how, prefix, every, per, open_end, seed, &g, &s);
    char what[128];
    snprintf(what, sizeof what, "sizes %d prefix %d every %d per %u "
             "open %d seed %llu", (int)how, prefix, every, per, open_end,
             (unsigned long long)seed);
    same_curves(g, s, what);
    cr_assert(!spilled(g), "%s: a gathered curve is never spilled", what);
    bool was = spilled(s);
    lct_mrc_free(g);
    lct_mrc_free(s);
    return was;
}

Test(mrc_stream, equals_the_gathered_curve_in_every_mode_and_size_order)
{
    for (int how = ONE; how <= MANY; how++)
        for (int mode = 0; mode < 4; mode++) {
            bool prefix = mode & 1, every = mode & 2;
            check(20000, 3000, (sizes)how, prefix, every, 1 + mode % 3,
                  mode == 3, 100 + (uint64_t)how * 10 + (uint64_t)mode);
        }
}

/* A process that may run on one CPU runs the pass on the thread that
 * feeds it, not a second one (lct__usable_cpus): the same curves. */
Test(mrc_stream, equals_it_on_one_cpu)
{
    cpu_set_t all;
    pin_to_one_cpu(&all);
    for (int mode = 0; mode < 4; mode++)
        check(20000, 3000, MANY, mode & 1, mode & 2, 1 + mode % 3, mode == 3,
              300 + (uint64_t)mode);
    unpin(&all);
}

Test(mrc_stream, equals_it_on_tiny_streams)
{
    for (uint64_t seed = 1; seed <= 200; seed++)
        check(1 + seed % 40, 1 + seed % 9, (sizes)(seed % 8), seed & 1,
              seed & 2, 1 + (unsigned)(seed % 4), seed % 5 == 0, seed);
}

Test(mrc_stream, merges_byte_distances_many_times)
{
    /* over 2^18 re-reads a buffer: several merges, and a band copied
     * after them */
    check(1200000, 20000, ONE_THEN_TWO, false, false, 1, false, 7);
    check(700000, 5000, SCATTERED, true, false, 2, false, 8);
}

static size_t entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* The spill tests' bounds and directory: 8 distances a buffer, 16 in
 * memory, 3 runs merged at once, so every varied stream spills hundreds
 * of runs, merged in several rounds, into a directory of its own. */
static char spill_dir[] = "/tmp/lct-spill-XXXXXX";
static lct__mrc_runs_bounds spill_saved;

static void spill_init(void)
{
    spill_saved = lct__mrc_runs_limits;
    lct__mrc_runs_limits = (lct__mrc_runs_bounds){8, 16, 3};
    cr_assert_not_null(mkdtemp(spill_dir));
    setenv("TMPDIR", spill_dir, 1);
}

static void spill_fini(void)
{
    unsetenv("TMPDIR");
    rmdir(spill_dir);
    lct__mrc_runs_limits = spill_saved;
}

Test(mrc_stream, spills_byte_distances_and_merges_them_back_exactly,
     .init = spill_init, .fini = spill_fini)
{
    for (int how = ONE; how <= MANY; how++)
        for (int mode = 0; mode < 4; mode++) {
            bool prefix = mode & 1, every = mode & 2;
            bool was = check(6000, 1500, (sizes)how, prefix, every,
                             1 + mode % 3, mode == 3,
                             300 + (uint64_t)how * 10 + (uint64_t)mode);
            /* one size: byte distances follow from key distances */
            cr_assert_eq(was, how != ONE, "sizes %d mode %d: spilled %d",
                         how, mode, was);
        }
    for (uint64_t seed = 1; seed <= 60; seed++)
        check(1 + seed % 40, 1 + seed % 9, (sizes)(seed % 7), seed & 1,
              seed & 2, 1 + (unsigned)(seed % 4), seed % 5 == 0, seed);
    cr_assert_eq(entries_in(spill_dir), 0, "the spill files are unlinked");
    /* no file can be made: the distances stay in memory, as exact */
    setenv("TMPDIR", "/nonexistent/lct-spill", 1);
    for (int how = ONE_THEN_TWO; how <= MANY; how++)
        cr_assert(!check(6000, 1500, (sizes)how, how & 1, false, 2, false,
                         400 + (uint64_t)how),
                  "sizes %d: nowhere to spill", how);
}

/* A spill file that stops growing (a full disk, here a file size limit)
 * at each stage in turn, from the second run to the merged result: the
 * runs come back into memory and the curve is the same. */
Test(mrc_stream, a_spill_that_fails_brings_the_distances_back,
     .init = spill_init, .fini = spill_fini)
{
    signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails, EFBIG */
    struct rlimit was;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
    static const rlim_t bytes[] = {300, 3000, 30000, 100000, 200000,
                                   400000, (rlim_t)1 << 30};
    size_t n = sizeof bytes / sizeof *bytes;
    for (size_t b = 0; b < n; b++) {
        struct rlimit lim = {bytes[b], was.rlim_max};
        cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
        for (int how = ONE_THEN_TWO; how <= MANY; how++) {
            bool spilled = check(6000, 1500, (sizes)how, how & 1, false, 2,
                                 false, 500 + (uint64_t)how);
            if (b == 0)
                cr_assert(!spilled, "sizes %d: spilled past %llu bytes",
                          how, (unsigned long long)bytes[b]);
            if (b == n - 1)
                cr_assert(spilled, "sizes %d: not spilled", how);
        }
    }
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &was), 0);
    cr_assert_eq(entries_in(spill_dir), 0, "the spill files are unlinked");
}

/* A band (a new size's pass) copies the pass's spilled runs into a file
 * of its own; with no descriptor left for that file it takes them into
 * memory instead, and the curve is the same. */
Test(mrc_stream, a_band_without_a_file_of_its_own_holds_its_runs_in_memory,
     .init = spill_init, .fini = spill_fini)
{
    struct rlimit was;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &was), 0);
    /* the least limit below which exactly one descriptor is free: the
     * main pass's spill file takes it, every band's copy finds none */
    rlim_t lim = 0;
    for (unsigned free_fds = 0; free_fds < 2; lim++)
        if (fcntl((int)lim, F_GETFD) == -1 && ++free_fds == 2)
            break;
    struct rlimit one = {lim, was.rlim_max};
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &one), 0);
    bool spilled[2];
    for (int i = 0; i < 2; i++)
        spilled[i] = check(6000, 1500, i ? DESCENDING : ASCENDING, i, false,
                           2, false, 600 + (uint64_t)i);
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &was), 0);
    cr_assert(spilled[0] && spilled[1], "the main pass spilled");
    cr_assert_eq(entries_in(spill_dir), 0, "the spill files are unlinked");
}

Test(mrc_stream, an_empty_stream_gives_an_empty_curve)
{
    lct_mrc_options o = {.prefix = true};
    lct_mrc_stream *s;
    lct_mrc *m;
    cr_assert_eq(lct_mrc_stream_new(&o, &s, NULL), LCT_OK);
    cr_assert_eq(lct_mrc_stream_end_call(s, 1), LCT_OK);
    cr_assert_eq(lct_mrc_stream_finish(s, &m, NULL), LCT_OK);
    lct_mrc_totals t;
    lct_mrc_totals_get(m, &t);
    cr_assert_eq(t.references + t.reads + t.distinct_keys, 0);
    cr_assert_eq(lct_mrc_hit_ratio(m, 10), 0);
    lct_mrc_free(m);
    lct_mrc_stream_free(s);
}

Test(mrc_stream, refuses_sampling)
{
    lct_mrc_options o = {.sample_rate = 0.5};
    lct_mrc_stream *s = (lct_mrc_stream *)&o;
    lct_error err;
    cr_assert_eq(lct_mrc_stream_new(&o, &s, &err), LCT_ERR_INVALID);
    cr_assert_null(s);
    cr_assert(strstr(err.message, "exact") != NULL, "%s", err.message);
    cr_assert_eq(lct_mrc_stream_end_call(NULL, 1), LCT_ERR_INVALID);
    cr_assert_eq(lct_mrc_stream_add(NULL, 1, 1, true), LCT_ERR_INVALID);
}

/* Behind an L1 (lct_mrc_stream_behind_l1) the streamed curve is L2's as
 * lct_refs_behind_l1 then lct_mrc_compute_with give it, and the L1's
 * figures are the same, in keys and in bytes, at several capacities. */
Test(mrc_stream, behind_an_l1_equals_the_gathered_l2)
{
    static const struct {
        uint64_t cap;
        bool bytes;
        sizes how;
    } cases[] = {{1, false, ONE},       {16, false, ONE},
                 {300, false, SCATTERED}, {2000, false, ONE_THEN_TWO},
                 {4096 * 20, true, ONE}, {3000, true, SCATTERED},
                 {500, true, UNKNOWN}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        rng_state = 900 + c;
        lct_mrc_options o = {.sample_rate = 1, .prefix = true};
        lct_refs *refs, *l2;
        lct_mrc_stream *s;
        cr_assert_eq(lct_refs_new(&refs), LCT_OK);
        cr_assert_eq(lct_refs_new(&l2), LCT_OK);
        cr_assert_eq(lct_mrc_stream_new(&o, &s, NULL), LCT_OK);
        cr_assert_eq(lct_mrc_stream_behind_l1(s, cases[c].cap,
                                              cases[c].bytes, NULL),
                     LCT_OK);
        cr_assert_eq(lct_mrc_stream_behind_l1(s, 5, false, NULL),
                     LCT_ERR_INVALID, "one L1");
        size_t n = 30000, left = 0;
        bool read = true;
        unsigned per = 1 + (unsigned)c % 3;
        for (size_t i = 0; i < n; i++) {
            if (left == 0) {
                left = 1 + rng() % 12;
                read = rng() % 4 != 0;
            }
            double u = (double)(rng() >> 11) / 9007199254740992.0;
            uint64_t k = (uint64_t)(u * u * 4000.0);
            uint64_t bytes = size_of(cases[c].how, k, i, n);
            cr_assert_eq(lct_refs_add(refs, id_of(k), bytes, 0, read),
                         LCT_OK);
            cr_assert_eq(lct_mrc_stream_add(s, id_of(k), bytes, read),
                         LCT_OK);
            if (--left == 0) {
                cr_assert_eq(lct_refs_end_call(refs, per), LCT_OK);
                cr_assert_eq(lct_mrc_stream_end_call(s, per), LCT_OK);
            }
        }
        lct_l1_stats want, got;
        lct_mrc *g, *m;
        cr_assert_eq(lct_refs_behind_l1(refs, cases[c].cap, cases[c].bytes,
                                        l2, &want, NULL), LCT_OK);
        cr_assert_eq(lct_mrc_compute_with(l2, &o, &g, NULL), LCT_OK);
        cr_assert_eq(lct_mrc_stream_finish(s, &m, NULL), LCT_OK);
        cr_assert_eq(lct_mrc_stream_l1_stats(s, &got), LCT_OK);
        cr_assert_eq(memcmp(&want, &got, sizeof want), 0,
                     "case %zu: L1 keys %llu/%llu hit %llu/%llu evict "
                     "%llu/%llu", c, (unsigned long long)want.keys,
                     (unsigned long long)got.keys,
                     (unsigned long long)want.keys_hit,
                     (unsigned long long)got.keys_hit,
                     (unsigned long long)want.evictions,
                     (unsigned long long)got.evictions);
        cr_assert_gt(want.keys_hit, 0, "case %zu: the L1 served some", c);
        cr_assert_gt(want.keys_to_l2, 0, "case %zu: L2 was asked", c);
        char what[32];
        snprintf(what, sizeof what, "L1 case %zu", c);
        same_curves(g, m, what);
        lct_mrc_free(g);
        lct_mrc_free(m);
        lct_mrc_stream_free(s);
        lct_refs_free(l2);
        lct_refs_free(refs);
    }
    lct_mrc_options no_prefix = {.sample_rate = 1};
    lct_mrc_stream *s;
    cr_assert_eq(lct_mrc_stream_new(&no_prefix, &s, NULL), LCT_OK);
    cr_assert_eq(lct_mrc_stream_behind_l1(s, 10, false, NULL),
                 LCT_ERR_INVALID, "an L1 needs the prefix rule");
    lct_mrc_stream_free(s);
}
