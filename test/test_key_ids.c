/*
 * test_key_ids.c - lct_key_iter_next_ids against lct_key_iter_next: the
 * ids it hands out are lct_object_key_hash of the keys next hands out,
 * the weights, ranks and groups are next's, in the same order, ending
 * with the same failure; for model names of every length to 40 bytes, salts of several
 * lengths, keys with and without object_group_id, ranks and groups to
 * 127, lists longer than the iterator's cache, hostile lists, and the
 * generated shapes (spec groups, L2 sizes); read with and without
 * LCT_KEYS (which hashes a noted list where it lies), in batches of
 * every size, and mixed with next on one iterator; and the keys-only
 * start stat --spans takes (lct__key_iter_init_keys) against the whole
 * one.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lct.h"
#include "lmcache/keys_internal.h"
#include "support/cli.h"
#include "support/files.h"

#define MAXKEYS 600

/* A record's keys as one of the two calls hands them out. */
typedef struct seq {
    uint64_t id[MAXKEYS], bytes[MAXKEYS];
    int64_t rank[MAXKEYS], group[MAXKEYS];
    size_t n;
    long end; /* 0, or the failure the iterator ended with */
} seq;

static void by_next_from(const lct_record *rec, seq *s, bool keys_only)
{
    lct_key_iter it;
    memset(s, 0, sizeof *s);
    s->end = keys_only ? lct__key_iter_init_keys(rec, &it, NULL)
                       : lct_key_iter_init(rec, &it, NULL);
    if (s->end != LCT_OK)
        return;
    lct_object_key k;
    uint64_t b;
    int rc;
    while ((rc = lct_key_iter_next(&it, &k, &b, NULL)) == 1) {
        cr_assert_lt(s->n, MAXKEYS);
        s->id[s->n] = lct_object_key_hash(&k);
        s->rank[s->n] = k.kv_rank;
        s->group[s->n] = k.object_group_id;
        s->bytes[s->n++] = b;
    }
    s->end = rc;
}

static void by_next(const lct_record *rec, seq *s)
{
    by_next_from(rec, s, false);
}

/* With batches of `batch`; mixed: every other step one key by next.
 * *described counts records whose keys came as a described list. */
static void by_ids(const lct_record *rec, size_t batch, bool mixed, seq *s,
                   size_t *described)
{
    lct_key_iter it;
    memset(s, 0, sizeof *s);
    s->end = lct_key_iter_init(rec, &it, NULL);
    if (s->end != LCT_OK)
        return;
    *described += it.run_count > 0;
    for (unsigned step = 0;; step++) {
        long n;
        if (mixed && step % 2) {
            lct_object_key k;
            uint64_t b;
            n = lct_key_iter_next(&it, &k, &b, NULL);
            if (n == 1) {
                s->id[s->n] = lct_object_key_hash(&k);
                s->rank[s->n] = k.kv_rank;
                s->group[s->n] = k.object_group_id;
                s->bytes[s->n] = b;
            }
        } else {
            static lct_key_id out[MAXKEYS];
            size_t room = MAXKEYS - s->n < batch ? MAXKEYS - s->n : batch;
            cr_assert_gt(room, 0);
            n = lct_key_iter_next_ids(&it, out, room, NULL);
            cr_assert_leq(n, (long)room);
            for (long i = 0; i < n; i++) {
                s->id[s->n + (size_t)i] = out[i].id;
                s->bytes[s->n + (size_t)i] = out[i].bytes;
                s->rank[s->n + (size_t)i] = out[i].kv_rank;
                s->group[s->n + (size_t)i] = out[i].object_group_id;
            }
        }
        if (n <= 0) {
            s->end = n;
            return;
        }
        s->n += (size_t)n;
    }
}

static void expect_same(const seq *a, const seq *b, const char *what,
                        uint64_t rec)
{
    cr_expect_eq(a->n, b->n, "%s record %llu: %zu keys, %zu by ids", what,
                 (unsigned long long)rec, a->n, b->n);
    cr_expect_eq(a->end, b->end, "%s record %llu: ends %ld, %ld", what,
                 (unsigned long long)rec, a->end, b->end);
    for (size_t i = 0; i < a->n && i < b->n; i++) {
        cr_expect_eq(a->id[i], b->id[i], "%s record %llu key %zu: id", what,
                     (unsigned long long)rec, i);
        cr_expect_eq(a->bytes[i], b->bytes[i], "%s record %llu key %zu: "
                     "bytes", what, (unsigned long long)rec, i);
        cr_expect(a->rank[i] == b->rank[i] && a->group[i] == b->group[i],
                  "%s record %llu key %zu: rank and group", what,
                  (unsigned long long)rec, i);
    }
}

/* Every record of the file, read with flags, by next and by ids in
 * batches of 1, 2, 7 and 64, 1000 and mixed; how many records held a
 * described list. */
static size_t compare_file(const char *path, unsigned flags,
                           const char *what, bool *described_at,
                           size_t nat)
{
    static const size_t batches[] = {1, 2, 7, 64, 1000};
    lct_reader *r;
    cr_assert_eq(lct_open(path, flags | LCT_QUIET, &r, NULL), LCT_OK, "%s",
                 what);
    static seq want, got;
    lct_record rec;
    size_t described = 0, records = 0;
    for (uint64_t i = 0; lct_next(r, &rec) == 1; i++, records++) {
        /* the keys-only start (stat --spans') gives the same keys and
         * failures, weighing nothing */
        by_next_from(&rec, &got, true);
        by_next(&rec, &want);
        for (size_t k = 0; k < got.n; k++)
            got.bytes[k] = want.bytes[k];
        expect_same(&want, &got, "keys only", i);
        for (size_t b = 0; b < sizeof batches / sizeof *batches; b++) {
            by_ids(&rec, batches[b], false, &got, &described);
            expect_same(&want, &got, what, i);
        }
        size_t before = described;
        by_ids(&rec, 3, true, &got, &described);
        expect_same(&want, &got, what, i);
        if (i < nat)
            described_at[i] = described > before;
    }
    lct_close(r);
    cr_assert_gt(records, 0, "%s", what);
    return described;
}

/* An ObjectKey whose hash comes from seed (write_model_key's fields). */
static void write_key(lct_writer *w, unsigned seed, const char *model,
                      size_t model_len, int rank, int group,
                      const char *salt)
{
    unsigned char hash[32];
    for (size_t i = 0; i < sizeof hash; i++)
        hash[i] = (unsigned char)(seed * 131 + i * 29 + (seed >> 3));
    write_model_key(w, hash, sizeof hash, model, model_len, rank, group,
                    salt);
}

/* A submit_prefetch_task call at t whose `keys` list of n follows. */
static void begin_keys_call(lct_writer *w, double t, unsigned n)
{
    static const char q[] = "lmcache.v1.distributed.storage_manager."
                            "StorageManager.submit_prefetch_task";
    lct_writer_record_begin(w, t, 1.7e9 + t, q, sizeof q - 1);
    lct_writer_map(w, 1);
    lct_writer_cstr(w, "keys");
    lct_writer_array(w, n);
}

/* A submit_prefetch_task call whose `keys` are n keys of one shape, the
 * i-th with rank and group from i (to 127), or with `odd` at place odd_at
 * (an int instead of a key, or a rank of 200, which no template holds). */
enum odd { ODD_NONE, ODD_INT, ODD_RANK };
static void write_list(lct_writer *w, double t, const char *model,
                       size_t model_len, bool grouped, const char *salt,
                       unsigned n, enum odd odd, unsigned odd_at)
{
    begin_keys_call(w, t, n);
    for (unsigned i = 0; i < n; i++) {
        if (odd == ODD_INT && i == odd_at)
            lct_writer_int(w, 5);
        else
            write_key(w, (unsigned)t * 1000 + i, model, model_len,
                      odd == ODD_RANK && i == odd_at ? 200
                                                     : (int)(i * 5 % 128),
                      grouped ? (int)((i * 37 + 3) % 128) : -1, salt);
    }
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

/* A list of four keys like the 13-byte model's, but the third of a
 * 14-byte model. */
static void write_mixed(lct_writer *w, double t, const char *model)
{
    begin_keys_call(w, t, 4);
    for (unsigned i = 0; i < 4; i++)
        write_key(w, (unsigned)t * 1000 + i, model, i == 2 ? 14 : 13,
                  (int)i, 1, NULL);
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

Test(key_ids, every_key_shape_hashes_as_its_key)
{
    static const char model[] = "meta-llama/Llama-3.1-8B-Instruct-and-more!";
    static const char *const salts[] = {
        NULL, "s", "tenant-7", "a salt of 23 bytes long",
        "a salt that runs to forty bytes, exactly"};
    static const unsigned sizes[] = {1, 2, 5, 70, 130};
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    double t = 1;
    for (size_t len = 0; len <= 40; len++)
        for (size_t s = 0; s < sizeof salts / sizeof *salts; s++)
            for (int grouped = 0; grouped < 2; grouped++)
                for (int twice = 0; twice < 2; twice++) /* the 2nd noted */
                    write_list(w, t++, model, len, grouped, salts[s],
                               sizes[(len + s + (size_t)grouped) % 5],
                               ODD_NONE, 0);
    /* hostile lists: a key that is an int, a rank no template holds;
     * each after a list of its shape (which sets the templates) */
    for (unsigned at = 0; at < 4; at++) {
        write_list(w, t++, model, 13, true, NULL, 4, ODD_NONE, 0);
        write_list(w, t++, model, 13, true, NULL, 4, ODD_NONE, 0);
        write_list(w, t++, model, 13, true, NULL, 4, ODD_INT, at);
        write_list(w, t++, model, 13, true, NULL, 4, ODD_RANK, at);
        /* a list with one key of another shape among them */
        write_list(w, t++, model, 14, true, NULL, 1, ODD_NONE, 0);
        write_mixed(w, t++, model);
    }
    lct_writer_close(w);
    static bool at[1000];
    size_t plain = compare_file(path, 0, "hand, no LCT_KEYS", at, 1000);
    size_t noted = compare_file(path, LCT_KEYS, "hand, LCT_KEYS", at, 1000);
    cr_expect_eq(plain, 0, "no list is described without LCT_KEYS");
    /* a list like the one before it is noted (a list's first key is
     * walked whole, so the first of a shape may not be), each counted in
     * each of the six rounds of compare_file; a hostile one never is */
    size_t n = 0;
    for (size_t i = 1; i < 820; i += 2)
        n += at[i];
    cr_expect_eq(n, 410, "%zu second lists of a shape described", n);
    cr_expect_geq(noted, 414 * 6, "%zu", noted);
    for (size_t round = 0; round < 4; round++) {
        size_t first = 820 + 6 * round;
        cr_expect(at[first + 1], "round %zu: a list like the one before",
                  round);
        cr_expect(!at[first + 2] && !at[first + 3],
                  "round %zu: a hostile list is not described", round);
        /* the last round's rank of 200 is its list's last key, and its
         * slot's template stays that key's: the next list's first key of
         * that shape is walked whole */
        cr_expect(round == 3 || at[first + 5],
                  "round %zu: a list of two shapes is described", round);
    }
    unlink(path);
    free(path);
}

/* A submit_prefetch_task call whose keys carry the salts given, one a
 * key (a 13-byte model, grouped). */
static void write_salted(lct_writer *w, double t, const char *const *salts,
                         unsigned n)
{
    begin_keys_call(w, t, n);
    for (unsigned i = 0; i < n; i++)
        write_key(w, (unsigned)t * 1000 + i, "Qwen/Qwen3-8B", 13, (int)i,
                  1, salts[i]);
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

/* Keys that differ in an ASCII salt alone share a template once the walk
 * has seen two tenants' keys one after the other; a list of such keys
 * whose salts differ is not handed over whole (the ids of a handed-over
 * list take its first key's salt), one whose salts agree is. */
Test(key_ids, lists_of_tenants_keys_hash_with_each_keys_salt)
{
    static const char *const two[] = {"ten1", "ten2"};
    static const char *const differ[] = {"ten3", "ten4", "ten5"};
    static const char *const alike[] = {"ten6", "ten6", "ten6"};
    static const char *const past_ascii[] = {"ten7", "te\xc3\xa9"};
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    double t = 1;
    for (int round = 0; round < 3; round++) {
        write_salted(w, t++, two, 2);
        write_salted(w, t++, differ, 3);
        write_salted(w, t++, alike, 3);
        write_salted(w, t++, past_ascii, 2);
    }
    lct_writer_close(w);
    static bool at[12];
    compare_file(path, LCT_KEYS, "tenants, LCT_KEYS", at, 12);
    for (int round = 0; round < 3; round++) {
        cr_expect(!at[4 * round + 1],
                  "round %d: a list of differing salts is not described",
                  round);
        cr_expect(at[4 * round + 2],
                  "round %d: a list of one tenant's keys is described",
                  round);
    }
    compare_file(path, 0, "tenants, no LCT_KEYS", at, 12);
    unlink(path);
    free(path);
}

/* A list of keys of the kinds given: P a 13-byte model's, O a 14-byte
 * model's, 1-6 with the salt "tenN" (a 13-byte model's, grouped). */
static void write_kinds(lct_writer *w, double t, const char *kinds)
{
    static const char *const salts[] = {"ten1", "ten2", "ten3",
                                        "ten4", "ten5", "ten6"};
    unsigned n = (unsigned)strlen(kinds);
    begin_keys_call(w, t, n);
    for (unsigned i = 0; i < n; i++) {
        char c = kinds[i];
        write_key(w, (unsigned)t * 1000 + i, "Qwen/Qwen3-8B-and-more",
                  c == 'O' ? 14 : 13, (int)(i % 128), 1,
                  c >= '1' && c <= '6' ? salts[c - '1'] : NULL);
    }
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

/* Each record's keys by next, read with flags; whether each record's
 * list was described. */
static void keys_of_file(const char *path, unsigned flags, seq *out,
                         bool *described, size_t n)
{
    lct_reader *r;
    cr_assert_eq(lct_open(path, flags | LCT_QUIET, &r, NULL), LCT_OK);
    lct_record rec;
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(lct_next(r, &rec), 1);
        lct_key_iter it;
        cr_assert_eq(lct_key_iter_init(&rec, &it, NULL), LCT_OK);
        described[i] = it.run_count > 0;
        by_next(&rec, &out[i]);
    }
    lct_close(r);
}

/* A list of mixed shapes (salted and unsalted keys, two models), once
 * the walk has templates for each, is handed over in parts of one shape,
 * each part's model and salt its first key's: up to LCT_KEY_RUN_PARTS
 * parts; a part whose salts differ, or a list of more parts, is read key
 * by key.  The keys and ids are those of the list read key by key. */
Test(key_ids, lists_of_mixed_shapes_are_described_in_parts)
{
    char alternate32[33], alternate33[34];
    for (int i = 0; i < 33; i++)
        alternate32[i] = alternate33[i] = i % 2 ? '5' : 'P';
    alternate32[32] = alternate33[33] = '\0';
    alternate33[32] = 'O';
    static const char *const lists[] = {
        "P1P2O3P", /* the templates: each shape's, the salt's masked */
        "P55OP66P", "P56P", "555", "O6P6O", NULL, NULL, "PPPP1P"};
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    enum { NLISTS = sizeof lists / sizeof *lists };
    for (size_t i = 0; i < NLISTS; i++)
        write_kinds(w, (double)i + 1,
                    i == 5 ? alternate32 : i == 6 ? alternate33 : lists[i]);
    lct_writer_close(w);
    static seq plain[NLISTS], noted[NLISTS];
    bool was_plain[NLISTS], was_noted[NLISTS];
    keys_of_file(path, 0, plain, was_plain, NLISTS);
    keys_of_file(path, LCT_KEYS, noted, was_noted, NLISTS);
    for (size_t i = 0; i < NLISTS; i++)
        expect_same(&plain[i], &noted[i], "mixed", i);
    /* the first list's keys set the templates the first read found
     * empty (the read without LCT_KEYS, in this thread, left them set
     * for the second: no expectation) */
    static const bool described[NLISTS] = {false, true, false, true,
                                           true,  true, false, true};
    for (size_t i = 1; i < NLISTS; i++)
        cr_expect_eq(was_noted[i], described[i], "list %zu (%s): %s", i,
                     lists[i] ? lists[i] : "alternating",
                     described[i] ? "described" : "read key by key");
    compare_file(path, LCT_KEYS, "mixed, LCT_KEYS", NULL, 0);
    unlink(path);
    free(path);
}

/* lct_key_iter_next's keys of a described list are views into each key's
 * own bytes, as when the list is read key by key. */
Test(key_ids, a_described_list_hands_out_views_of_each_key)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    write_list(w, 1, "Qwen/Qwen3-8B", 13, true, "tenant", 70, ODD_NONE, 0);
    lct_writer_close(w);
    lct_object_key a[70], b[70];
    for (int f = 0; f < 2; f++) {
        lct_reader *r;
        cr_assert_eq(lct_open(path, f ? LCT_KEYS : 0, &r, NULL), LCT_OK);
        lct_record rec;
        cr_assert_eq(lct_next(r, &rec), 1);
        lct_key_iter it;
        cr_assert_eq(lct_key_iter_init(&rec, &it, NULL), LCT_OK);
        cr_assert_eq(it.run_count, f ? 70 : 0);
        lct_object_key *k = f ? b : a;
        for (int i = 0; i < 70; i++)
            cr_assert_eq(lct_key_iter_next(&it, &k[i], NULL, NULL), 1);
        lct_object_key after;
        cr_assert_eq(lct_key_iter_next(&it, &after, NULL, NULL), 0);
        lct_close(r); /* the same mapping is not kept: compare offsets */
        for (int i = 0; i < 70; i++) {
            const char *base = (const char *)k[i].chunk_hash.ptr;
            k[i].model_name.ptr = (const char *)(k[i].model_name.ptr - base);
            k[i].cache_salt.ptr = (const char *)(k[i].cache_salt.ptr - base);
        }
    }
    for (int i = 0; i < 70; i++) {
        cr_expect_eq(a[i].model_name.ptr, b[i].model_name.ptr, "key %d", i);
        cr_expect_eq(a[i].model_name.len, b[i].model_name.len, "key %d", i);
        cr_expect_eq(a[i].cache_salt.ptr, b[i].cache_salt.ptr, "key %d", i);
        cr_expect_eq(a[i].kv_rank, b[i].kv_rank, "key %d", i);
        cr_expect_eq(a[i].object_group_id, b[i].object_group_id, "key %d",
                     i);
    }
    cr_expect_eq(b[69].kv_rank, 69 * 5 % 128);
    cr_expect_eq(b[69].object_group_id, (69 * 37 + 3) % 128);
    unlink(path);
    free(path);
}

/* The generated shapes: a spec's keys weigh their group's layout, an L2
 * event's its object_sizes, the mix's lists are of mixed shapes. */
Test(key_ids, generated_shapes_hash_and_weigh_as_their_keys)
{
    static const char *const shapes[][2] = {{"--shape", "qwen"},
                                            {"--shape", "llama"},
                                            {"--mix", NULL},
                                            {"--spec", NULL}};
    for (size_t k = 0; k < 4; k++) {
        char *gen = gen_shape_trace("400", shapes[k][0], shapes[k][1]);
        compare_file(gen, 0, shapes[k][0], NULL, 0);
        size_t noted = compare_file(gen, LCT_KEYS, shapes[k][0], NULL, 0);
        cr_expect_gt(noted, 0, "%s %s: a list described",
                     shapes[k][0], shapes[k][1] ? shapes[k][1] : "");
        unlink(gen);
        free(gen);
    }
    char *l2 = gen_l2_trace("400", "2", "7");
    compare_file(l2, 0, "l2", NULL, 0);
    compare_file(l2, LCT_KEYS, "l2", NULL, 0);
    unlink(l2);
    free(l2);
}
