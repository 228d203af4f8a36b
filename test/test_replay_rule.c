/*
 * test_replay_rule.c - what a replay loads and asks, as LMCache's
 * StorageManager would: the prefix rule over chunks (flat keys and a
 * task spec's rows alike), SPARSE and fetching_policy, skip_l2, WARM,
 * and the L1 in front, whose backend must see the stream `lct mrc --l1`
 * draws (its hit ratio is the two-tier curve's L2 point).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"

typedef struct key_spec {
    unsigned hash;
    int rank;
} key_spec;

static void object_key(lct_writer *w, key_spec k)
{
    unsigned char hash[32] = {(unsigned char)k.hash,
                              (unsigned char)(k.hash >> 8), 9};
    write_object_key(w, hash, sizeof hash, k.rank, 0, NULL);
}

static void keys_array(lct_writer *w, const key_spec *ks, size_t n)
{
    lct_writer_array(w, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        object_key(w, ks[i]);
}

/* A write (reserve then finish) of each key. */
static void store_keys(lct_writer *w, const key_spec *ks, size_t n)
{
    const char *calls[] = {"S.reserve_write", "S.finish_write"};
    for (int c = 0; c < 2; c++) {
        lct_writer_record_begin(w, 0, 0, calls[c], strlen(calls[c]));
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "keys");
        keys_array(w, ks, n);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
}

/* A flat submit_prefetch_task; policy and mode as TrimPolicy and
 * PrefetchMode members (NULL: absent). */
static void prefetch(lct_writer *w, const key_spec *ks, size_t n,
                     const char *policy, bool skip_l2, const char *mode)
{
    const char *q = "S.submit_prefetch_task";
    lct_writer_record_begin(w, 0, 0, q, strlen(q));
    lct_writer_map(w, 1 + (policy != NULL) + skip_l2 + (mode != NULL));
    lct_writer_cstr(w, "keys");
    keys_array(w, ks, n);
    if (policy) {
        lct_writer_cstr(w, "policy");
        lct_writer_codec(w, "TrimPolicy");
        lct_writer_cstr(w, policy);
    }
    if (skip_l2) {
        lct_writer_cstr(w, "skip_l2");
        lct_writer_bool(w, true);
    }
    if (mode) {
        lct_writer_cstr(w, "mode");
        lct_writer_codec(w, "PrefetchMode");
        lct_writer_cstr(w, mode);
    }
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

/* The same keys as a PrefetchRequestSpec with a policy. */
static void prefetch_spec(lct_writer *w, const key_spec *ks, size_t n,
                          const char *policy)
{
    const char *q = "S.submit_prefetch_task";
    lct_writer_record_begin(w, 0, 0, q, strlen(q));
    lct_writer_map(w, 1);
    lct_writer_cstr(w, "spec");
    lct_writer_codec(w, "PrefetchRequestSpec");
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "keys");
    keys_array(w, ks, n);
    lct_writer_cstr(w, "policy");
    lct_writer_codec(w, "TrimPolicy");
    lct_writer_cstr(w, policy);
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

/* A PrefetchTaskSpec: one GroupedObjectKeys row per kv rank, each
 * chunk-ordered (so its keys come row after row, not chunk-major). */
static void prefetch_task(lct_writer *w, const unsigned *hashes,
                          size_t nchunks, int ranks, const char *policy)
{
    const char *q = "S.submit_prefetch_task";
    lct_writer_record_begin(w, 0, 0, q, strlen(q));
    lct_writer_map(w, 1);
    lct_writer_cstr(w, "spec");
    lct_writer_codec(w, "PrefetchTaskSpec");
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "key_groups");
    lct_writer_array(w, (uint32_t)ranks);
    for (int r = 0; r < ranks; r++) {
        lct_writer_codec(w, "GroupedObjectKeys");
        lct_writer_map(w, 2);
        lct_writer_cstr(w, "keys");
        lct_writer_array(w, (uint32_t)nchunks);
        for (size_t c = 0; c < nchunks; c++)
            object_key(w, (key_spec){hashes[c], r});
        lct_writer_cstr(w, "object_group_id");
        lct_writer_int(w, 0);
    }
    lct_writer_cstr(w, "fetching_policy");
    lct_writer_cstr(w, policy);
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

/* A replay of path against a fresh mem:CAPACITY, as o says (opened for
 * the workers o makes). */
static lct_replay_report replay_mem(const char *path, const char *capacity,
                                    lct_replay_options o)
{
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open(path, 0, &r, &err), LCT_OK, "%s", err.message);
    void *state;
    lct_backend_config cfg = {.workers = lct_replay_workers(&o)};
    const lct_backend_ops *mem = lct_backend_mem();
    cr_assert_eq(mem->open(capacity, &cfg, &state, &err), LCT_OK, "%s",
                 err.message);
    lct_replay_report rep;
    cr_assert_eq(lct_replay_run(r, mem, state, &o, &rep, &err), LCT_OK, "%s",
                 err.message);
    mem->close(state);
    lct_close(r);
    return rep;
}

static lct_replay_report replay_file(const char *path, uint64_t l1)
{
    return replay_mem(path, "1000",
                      (lct_replay_options){.speed = 0, .value_bytes = 64,
                                           .l1_capacity = l1});
}

/* Keys 1, 2 and 4 stored; a call asks 1, 2, 3, 4 (one kv rank). */
static lct_replay_report gap_at_three(void (*call)(lct_writer *,
                                                   const key_spec *, size_t))
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    key_spec stored[] = {{1, 0}, {2, 0}, {4, 0}};
    key_spec asked[] = {{1, 0}, {2, 0}, {3, 0}, {4, 0}};
    store_keys(w, stored, 3);
    call(w, asked, 4);
    lct_writer_close(w);
    lct_replay_report rep = replay_file(path, 0);
    unlink(path);
    free(path);
    cr_expect_eq(rep.lookups, 4);
    cr_expect_eq(rep.hits, 3);
    cr_expect_eq(rep.kept, rep.latency[LCT_REPLAY_LOAD].count);
    cr_expect_eq(rep.corrupt, 0);
    return rep;
}

static void flat_default(lct_writer *w, const key_spec *k, size_t n)
{
    prefetch(w, k, n, NULL, false, NULL);
}
static void flat_prefix(lct_writer *w, const key_spec *k, size_t n)
{
    prefetch(w, k, n, "PREFIX", false, "LOOKUP");
}
static void flat_sparse(lct_writer *w, const key_spec *k, size_t n)
{
    prefetch(w, k, n, "SPARSE", false, NULL);
}
static void flat_segmented(lct_writer *w, const key_spec *k, size_t n)
{
    prefetch(w, k, n, "SEGMENTED_PREFIX", false, NULL);
}
static void spec_sparse(lct_writer *w, const key_spec *k, size_t n)
{
    prefetch_spec(w, k, n, "SPARSE");
}
static void spec_prefix(lct_writer *w, const key_spec *k, size_t n)
{
    prefetch_spec(w, k, n, "PREFIX");
}

Test(replay_rule, prefix_loads_only_the_keys_before_the_first_miss)
{
    cr_expect_eq(gap_at_three(flat_default).kept, 2, "no policy: PREFIX");
    cr_expect_eq(gap_at_three(flat_prefix).kept, 2);
    cr_expect_eq(gap_at_three(spec_prefix).kept, 2);
    lct_replay_report rep = gap_at_three(flat_prefix);
    cr_expect_eq(rep.calls_sparse, 0);
}

Test(replay_rule, other_policies_load_every_found_key)
{
    lct_replay_report rep = gap_at_three(flat_sparse);
    cr_expect_eq(rep.kept, 3);
    cr_expect_eq(rep.calls_sparse, 1);
    cr_expect_eq(gap_at_three(flat_segmented).kept, 3);
    cr_expect_eq(gap_at_three(spec_sparse).kept, 3);
}

/* Two kv ranks, chunks 1, 2, 3 stored but for chunk 2's rank 1: the
 * prefix ends at chunk 2 in any order the form lists them; a leading run
 * over the listed keys would keep 3 (chunk-major) or 4 (rows). */
Test(replay_rule, prefix_counts_chunks_across_kv_ranks_in_either_form)
{
    key_spec stored[] = {{1, 0}, {1, 1}, {2, 0}, {3, 0}, {3, 1}};
    key_spec flat[] = {{1, 0}, {1, 1}, {2, 0}, {2, 1}, {3, 0}, {3, 1}};
    unsigned hashes[] = {1, 2, 3};
    for (int form = 0; form < 4; form++) {
        char *path;
        lct_writer *w = tmp_trace_writer(&path);
        store_keys(w, stored, 5);
        if (form == 0)
            prefetch(w, flat, 6, NULL, false, NULL);
        else if (form == 1)
            prefetch_task(w, hashes, 3, 2, "prefix");
        else if (form == 2)
            prefetch(w, flat, 6, "SPARSE", false, NULL);
        else
            prefetch_task(w, hashes, 3, 2, "sparse");
        lct_writer_close(w);
        lct_replay_report rep = replay_file(path, 0);
        unlink(path);
        free(path);
        cr_expect_eq(rep.lookups, 6, "form %d", form);
        cr_expect_eq(rep.hits, 5, "form %d", form);
        cr_expect_eq(rep.kept, form < 2 ? 2 : 5, "form %d", form);
    }
}

Test(replay_rule, skip_l2_issues_nothing)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    key_spec ks[] = {{1, 0}, {2, 0}};
    store_keys(w, ks, 2);
    prefetch(w, ks, 2, NULL, true, NULL);
    lct_writer_close(w);
    lct_replay_report rep = replay_file(path, 0);
    unlink(path);
    free(path);
    cr_expect_eq(rep.lookups, 0);
    cr_expect_eq(rep.kept, 0);
    cr_expect_eq(rep.calls_skip_l2, 1);
    cr_expect_eq(rep.records_issued, 1, "the finish_write's store only");
    for (unsigned i = 0; i < rep.ncalls; i++)
        cr_expect_neq(strcmp(rep.calls[i].qualname, "S.submit_prefetch_task"),
                      0, "a skip_l2 call is not 'a call with no operation'");
}

/* With an L1 the stored keys are there: a LOOKUP call is served by L1
 * and asks the backend nothing; a WARM call asks every key. */
Test(replay_rule, l1_serves_its_leading_run_but_warm_asks_every_key)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    key_spec ks[] = {{1, 0}, {2, 0}, {3, 0}};
    store_keys(w, ks, 2);
    prefetch(w, ks, 3, NULL, false, NULL);
    prefetch(w, ks, 2, NULL, false, "WARM");
    lct_writer_close(w);
    lct_replay_report rep = replay_file(path, 10);
    unlink(path);
    free(path);
    cr_expect(rep.has_l1);
    cr_expect_eq(rep.l1.writes, 2);
    cr_expect_eq(rep.l1.keys, 5);
    cr_expect_eq(rep.l1.keys_hit, 2, "keys 1 and 2 of the first call");
    cr_expect_eq(rep.l1.keys_to_l2, 3, "key 3, then the WARM call's two");
    cr_expect_eq(rep.lookups, 3);
    cr_expect_eq(rep.hits, 2);
    cr_expect_eq(rep.kept, 2);
    cr_expect_eq(rep.calls_warm, 1);
}

/* The sample's key stream as lct mrc --prefix gathers it: a call's keys,
 * then its end with its kv ranks. */
static lct_refs *sample_refs(void)
{
    lct_reader *r;
    cr_assert_eq(lct_open(LCT_SAMPLE, 0, &r, NULL), LCT_OK);
    lct_refs *refs;
    cr_assert_eq(lct_refs_new(&refs), LCT_OK);
    lct_record rec;
    while (lct_next(r, &rec) == 1) {
        bool read = lct_qualname_match(rec.qualname, LCT_KEYS_READ_CALL);
        if (!read && !lct_qualname_match(rec.qualname, LCT_KEYS_WRITE_CALL))
            continue;
        lct_key_iter it;
        lct_object_key key;
        uint64_t bytes;
        lct_kv_ranks ranks = {0};
        cr_assert_eq(lct_key_iter_init(&rec, &it, NULL), LCT_OK);
        while (lct_key_iter_next(&it, &key, &bytes, NULL) == 1) {
            lct_kv_ranks_add(&ranks, key.kv_rank);
            cr_assert_eq(lct_refs_add(refs, lct_object_key_hash(&key), bytes,
                                      rec.t_mono, read), LCT_OK);
        }
        cr_assert_eq(lct_refs_end_call(refs, lct_kv_ranks_count(&ranks)),
                     LCT_OK);
    }
    lct_close(r);
    return refs;
}

Test(replay_rule, backend_behind_l1_hits_as_the_two_tier_curve_says)
{
    lct_refs *refs = sample_refs();
    uint64_t l1s[] = {16, 64, 300}, l2s[] = {8, 100, 1000};
    for (size_t i = 0; i < 3; i++) {
        lct_refs *l2;
        lct_l1_stats st;
        cr_assert_eq(lct_refs_new(&l2), LCT_OK);
        cr_assert_eq(lct_refs_behind_l1(refs, l1s[i], false, l2, &st, NULL),
                     LCT_OK);
        lct_mrc_options mo = {.prefix = true};
        lct_mrc *mrc;
        cr_assert_eq(lct_mrc_compute_with(l2, &mo, &mrc, NULL), LCT_OK);
        for (size_t j = 0; j < 3; j++) {
            char arg[32];
            snprintf(arg, sizeof arg, "%llu", (unsigned long long)l2s[j]);
            /* The curve's L2 takes in a key it missed (the engine then
             * computes and stores it); stores count at reserve_write. */
            lct_replay_report rep = replay_mem(
                LCT_SAMPLE, arg,
                (lct_replay_options){.speed = 0, .value_bytes = 64,
                                     .fill_on_miss = true,
                                     .store_at_reserve = true,
                                     .l1_capacity = l1s[i]});
            cr_expect_eq(rep.l1.keys, st.keys);
            cr_expect_eq(rep.l1.keys_hit, st.keys_hit);
            cr_expect_eq(rep.l1.keys_to_l2, st.keys_to_l2);
            cr_expect_eq(rep.l1.writes, st.writes);
            cr_expect_eq(rep.l1.evictions, st.evictions);
            cr_expect_eq(rep.lookups, st.keys_to_l2);
            cr_assert_gt(rep.lookups, 0);
            cr_expect_eq(rep.l1.positions, st.positions);
            cr_expect_eq(rep.l1.positions_hit, st.positions_hit);
            double got = (double)rep.chunks_hit / (double)rep.chunks;
            double want = lct_mrc_position_hit_ratio(mrc, l2s[j]);
            cr_expect_float_eq(got, want, 1e-12,
                               "L1 %llu, L2 %s: replay %.6f, curve %.6f",
                               (unsigned long long)l1s[i], arg, got, want);
        }
        lct_mrc_free(mrc);
        lct_refs_free(l2);
    }
    lct_refs_free(refs);
}

/* Without an L1 every lookup reaches the backend: its token hit ratio is
 * the one-tier prefix curve's. */
Test(replay_rule, backend_without_l1_hits_as_the_prefix_curve_says)
{
    lct_refs *refs = sample_refs();
    lct_mrc_options mo = {.prefix = true};
    lct_mrc *mrc;
    cr_assert_eq(lct_mrc_compute_with(refs, &mo, &mrc, NULL), LCT_OK);
    uint64_t l2s[] = {8, 100, 1000};
    for (size_t j = 0; j < 3; j++) {
        char arg[32];
        snprintf(arg, sizeof arg, "%llu", (unsigned long long)l2s[j]);
        lct_replay_report rep = replay_mem(
            LCT_SAMPLE, arg,
            (lct_replay_options){.speed = 0, .value_bytes = 64,
                                 .fill_on_miss = true,
                                 .store_at_reserve = true});
        cr_expect_lt(rep.kept, rep.hits, "the rule keeps fewer than found");
        double got = (double)rep.chunks_hit / (double)rep.chunks;
        double want = lct_mrc_position_hit_ratio(mrc, l2s[j]);
        cr_expect_float_eq(got, want, 1e-12, "L2 %s: replay %.6f, curve %.6f",
                           arg, got, want);
    }
    lct_mrc_free(mrc);
    lct_refs_free(refs);
}

/* A call's lookups answered on several workers: the rule sees them all.
 * With room for every key, what a lookup finds depends only on the
 * key's operations before it, which causal waits keep in order. */
Test(replay_rule, several_workers_keep_what_one_keeps)
{
    lct_replay_report one = {0};
    for (unsigned workers = 1; workers <= 4; workers *= 4) {
        lct_replay_report rep = replay_mem(
            LCT_SAMPLE, "100000",
            (lct_replay_options){.speed = 0, .value_bytes = 64,
                                 .workers = workers, .inflight = 64,
                                 .pipeline = workers == 1 ? 1 : 4});
        cr_assert_eq(rep.workers, workers);
        if (workers == 1) {
            one = rep;
            cr_assert_gt(one.kept, 0);
            continue;
        }
        cr_expect_eq(rep.lookups, one.lookups);
        cr_expect_eq(rep.hits, one.hits);
        cr_expect_eq(rep.kept, one.kept);
        cr_expect_eq(rep.chunks_hit, one.chunks_hit);
        cr_expect_eq(rep.latency[LCT_REPLAY_LOAD].count, one.kept);
        cr_expect_eq(rep.corrupt, 0);
    }
}

/* The key iterator hands the rule over as recorded, in each form. */
Test(replay_rule, key_iter_reports_policy_mode_and_skip_l2)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    key_spec ks[] = {{1, 0}};
    unsigned hashes[] = {1};
    prefetch(w, ks, 1, "SPARSE", true, "WARM");
    prefetch(w, ks, 1, NULL, false, NULL);
    prefetch_spec(w, ks, 1, "SEGMENTED_PREFIX");
    prefetch_task(w, hashes, 1, 1, "sparse");
    lct_writer_close(w);
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    const char *policy[] = {"SPARSE", "", "SEGMENTED_PREFIX", "sparse"};
    const char *mode[] = {"WARM", "", "", ""};
    lct_record rec;
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(lct_next(r, &rec), 1);
        lct_key_iter it;
        cr_assert_eq(lct_key_iter_init(&rec, &it, NULL), LCT_OK);
        cr_expect(lct_str_eq(it.policy, policy[i]), "record %d", i);
        cr_expect(lct_str_eq(it.mode, mode[i]), "record %d", i);
        cr_expect_eq(it.skip_l2, i == 0, "record %d", i);
    }
    lct_close(r);
    unlink(path);
    free(path);
}

/* A key in another field order than the encoder's: the iterator's
 * general path reads it. */
static void odd_key(lct_writer *w, key_spec k)
{
    lct_writer_codec(w, "ObjectKey");
    lct_writer_map(w, 3);
    lct_writer_cstr(w, "model_name");
    lct_writer_cstr(w, "m");
    lct_writer_cstr(w, "kv_rank");
    lct_writer_int(w, k.rank);
    lct_writer_cstr(w, "chunk_hash");
    unsigned char hash[32] = {(unsigned char)k.hash,
                              (unsigned char)(k.hash >> 8), 9};
    lct_writer_bin(w, hash, sizeof hash);
}

/* Lists longer than the keys the iterator reads on its way past them,
 * and lists with a key off the usual shape before or after that point,
 * give every key, in order, as the list's own elements decode. */
Test(replay_rule, key_iter_gives_every_key_of_long_and_odd_lists)
{
    unsigned sizes[] = {1, 64, 65, 200}, odd_at[] = {UINT32_MAX, 0, 10, 70};
    for (size_t s = 0; s < 4; s++)
        for (size_t o = 0; o < 4; o++) {
            char *path;
            lct_writer *w = tmp_trace_writer(&path);
            const char *q = "S.submit_prefetch_task";
            lct_writer_record_begin(w, 0, 0, q, strlen(q));
            lct_writer_map(w, 2);
            lct_writer_cstr(w, "keys");
            lct_writer_array(w, sizes[s]);
            for (unsigned i = 0; i < sizes[s]; i++)
                (i == odd_at[o] ? odd_key : object_key)(
                    w, (key_spec){i * 7 + 1, (int)(i % 3)});
            lct_writer_cstr(w, "policy"); /* after the list */
            lct_writer_cstr(w, "SPARSE");
            cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
            lct_writer_close(w);
            lct_reader *r;
            cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
            lct_record rec;
            cr_assert_eq(lct_next(r, &rec), 1);
            lct_value keys, array, elem;
            cr_assert_eq(lct_map_find(rec.args, "keys", &keys), LCT_OK);
            cr_assert_eq(lct_list_get(keys, &array, NULL, NULL), LCT_OK);
            lct_iter plain;
            cr_assert_eq(lct_array_iter_init(array, &plain), LCT_OK);
            lct_key_iter it;
            cr_assert_eq(lct_key_iter_init(&rec, &it, NULL), LCT_OK);
            cr_expect(lct_str_eq(it.policy, "SPARSE"));
            lct_object_key got, want;
            uint64_t bytes;
            unsigned n = 0;
            while (lct_key_iter_next(&it, &got, &bytes, NULL) == 1) {
                cr_assert_eq(lct_array_iter_next(&plain, &elem), 1);
                cr_assert_eq(lct_object_key_get(elem, &want, NULL), LCT_OK);
                cr_expect_eq(lct_object_key_hash(&got),
                             lct_object_key_hash(&want),
                             "%u keys, odd at %u: key %u", sizes[s],
                             odd_at[o], n);
                n++;
            }
            cr_expect_eq(n, sizes[s], "%u keys, odd at %u", sizes[s],
                         odd_at[o]);
            lct_close(r);
            unlink(path);
            free(path);
        }
}

/* --l1-policy: an L1 of another policy serves a different leading run
 * than LRU's at a capacity that evicts, the same one where nothing is
 * evicted; every key is L1's or asked of the backend; belady refused. */
Test(replay_rule, an_l1_of_another_policy)
{
    lct_replay_options o = {.speed = 0, .value_bytes = 64, .l1_capacity = 64};
    lct_replay_report lru = replay_mem(LCT_SAMPLE, "1000", o);
    o.l1_policy = LCT_POLICY_SIEVE;
    lct_replay_report sieve = replay_mem(LCT_SAMPLE, "1000", o);
    cr_expect_neq(sieve.l1.keys_hit, lru.l1.keys_hit);
    cr_expect_eq(sieve.l1.keys, lru.l1.keys);
    cr_expect_eq(sieve.l1.keys_hit + sieve.l1.keys_to_l2, sieve.l1.keys);
    cr_expect_eq(sieve.lookups, sieve.l1.keys_to_l2);
    cr_expect_gt(sieve.l1.evictions, 0);
    /* room for every key: no policy evicts, all serve the same */
    o.l1_capacity = 100000;
    lct_replay_report wide = replay_mem(LCT_SAMPLE, "1000", o);
    o.l1_policy = LCT_POLICY_LRU;
    lct_replay_report wide_lru = replay_mem(LCT_SAMPLE, "1000", o);
    cr_expect_eq(wide.l1.keys_hit, wide_lru.l1.keys_hit);
    cr_expect_eq(wide.l1.evictions, 0);
    /* Belady needs the trace's future, which a replay reads once */
    o.l1_policy = LCT_POLICY_BELADY;
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open(LCT_SAMPLE, 0, &r, &err), LCT_OK);
    lct_replay_report rep;
    cr_expect_eq(lct_replay_run(r, lct_backend_null(), NULL, &o, &rep, &err),
                 LCT_ERR_INVALID);
    cr_expect(strstr(err.message, "belady"), "%s", err.message);
    lct_close(r);
}
