/*
 * test_answers.c - lct sim's direct answers: the token hit rate per
 * window of time (lct_sim_options.window_seconds), on a hand-made stream
 * whose windows are worked out below, and several capacities in one
 * pass (--capacity A,B,...) giving each capacity's own report.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"
#include "json.h"
#include "lct.h"
#include "run.h"

TestSuite(answers, .timeout = 120);

static void lookup(lct_sim *s, double t, const uint64_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(lct_sim_add(s, ids[i], 1, t, true), LCT_OK);
    cr_assert_eq(lct_sim_end_call(s, 1), LCT_OK);
}

/*
 * 256 tokens a chunk, 10 keys of cache, windows of 10 s; lookups in this
 * order:
 *   t 1  [1 2]  both missed           512 tokens,   0 hit   window 0
 *   t 5  [1 2]  both found            512         512       window 0
 *   t 12 [3]    missed                256           0       window 10
 *   t 15 [1 3]  both found            512         512       window 10
 *   t 35 [2]    found                 256         256       window 30
 *   t 8  [4]    missed (time went back) 256         0       window 0
 * window 0: 3 lookups, 1280 tokens, 512 hit; 10: 2, 768, 512; 30: 1,
 * 256, 256.  Window 20 had none and is not listed.
 */
Test(answers, windows_count_each_lookup_in_its_time)
{
    lct_sim_options o = {.capacity = 10, .chunk_tokens = 256,
                         .window_seconds = 10};
    lct_sim *s;
    cr_assert_eq(lct_sim_new(&o, &s, NULL), LCT_OK);
    lookup(s, 1, (uint64_t[]){1, 2}, 2);
    lookup(s, 5, (uint64_t[]){1, 2}, 2);
    lookup(s, 12, (uint64_t[]){3}, 1);
    lookup(s, 15, (uint64_t[]){1, 3}, 2);
    lookup(s, 35, (uint64_t[]){2}, 1);
    lookup(s, 8, (uint64_t[]){4}, 1);
    lct_sim_report r;
    cr_assert_eq(lct_sim_finish(s, &r, NULL), LCT_OK);
    lct_sim_free(s);
    cr_assert_eq(r.nwindows, 3);
    static const lct_sim_window want[] = {
        {0, 3, 1280, 512}, {10, 2, 768, 512}, {30, 1, 256, 256}};
    for (size_t i = 0; i < 3; i++) {
        cr_expect_eq(r.windows[i].t_start, want[i].t_start, "window %zu", i);
        cr_expect_eq(r.windows[i].calls, want[i].calls, "window %zu", i);
        cr_expect_eq(r.windows[i].tokens, want[i].tokens, "window %zu", i);
        cr_expect_eq(r.windows[i].hit_tokens, want[i].hit_tokens,
                     "window %zu", i);
    }
    cr_expect_eq(r.tokens, 1280 + 768 + 256);
    cr_expect_eq(r.hit_tokens, 512 + 512 + 256);
    lct_sim_report_free(&r);
    cr_expect_null(r.windows);
}

Test(answers, no_window_no_windows)
{
    lct_sim_options o = {.capacity = 10};
    lct_sim *s;
    cr_assert_eq(lct_sim_new(&o, &s, NULL), LCT_OK);
    lookup(s, 1, (uint64_t[]){1}, 1);
    lct_sim_report r;
    cr_assert_eq(lct_sim_finish(s, &r, NULL), LCT_OK);
    lct_sim_free(s);
    cr_expect_eq(r.nwindows, 0);
    cr_expect_null(r.windows);
    lct_sim_report_free(&r);
}

/* One capacity's figures from its own run. */
static jv *sim_json(const char *capacity)
{
    run t = run_lct(NULL, "sim", "--json", "--capacity", capacity,
                    LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    run_free(&t);
    return j;
}

Test(answers, several_capacities_in_one_pass_are_each_ones_own)
{
    run t = run_lct(NULL, "sim", "--json", "--capacity", "2G,4G,8G",
                    LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    const jv *caps = json_get(j, "capacities");
    cr_assert(caps && caps->n == 3);
    static const char *names[] = {"2G", "4G", "8G"};
    for (size_t i = 0; i < 3; i++) {
        const jv *row = &caps->items[i];
        cr_expect_str_eq(json_get(row, "capacity")->s, names[i]);
        jv *one = sim_json(names[i]);
        /* the row's name, then the one-capacity report's */
        static const char *same[][2] = {
            {"capacity_keys", "capacity_keys"}, {"requests", "requests"},
            {"chunks", "chunks"},               {"hit_chunks", "hit_chunks"},
            {"evictions", "evictions"},
            {"occupancy_keys", "occupancy_keys"}};
        for (size_t k = 0; k < 6; k++) {
            const jv *a = json_get(row, same[k][0]),
                     *b = json_get(one, same[k][1]);
            cr_assert(a && b, "%s", same[k][0]);
            cr_expect_eq(a->u, b->u, "%s %s", names[i], same[k][0]);
        }
        cr_expect_eq(json_number(json_get(row, "token_hit_rate")),
                     json_number(json_get(one, "token_hit_rate")));
        json_free(one);
    }
    json_free(j);
    run_free(&t);

    t = run_lct(NULL, "sim", "--capacity", "2G,100", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "every capacity in chunks or every one in "
                            "bytes"), "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "sim", "--capacity", "2G,4G", "--window", "30",
                LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "take one capacity"), "%s", t.err);
    run_free(&t);
}

Test(answers, sim_window_in_every_format)
{
    run t = run_lct(NULL, "sim", "--json", "--capacity", "4G", "--window",
                    "1s", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    const jv *w = json_get(j, "windows");
    cr_assert(w && w->n >= 2, "%s", t.out);
    uint64_t calls = 0, tokens = 0, hit = 0;
    for (size_t i = 0; i < w->n; i++) {
        const jv *x = &w->items[i];
        cr_expect_eq(json_get(x, "end_s")->u - json_get(x, "start_s")->u, 1);
        if (i)
            cr_expect_gt(json_get(x, "start_s")->u,
                         json_get(&w->items[i - 1], "start_s")->u);
        calls += json_get(x, "requests")->u;
        tokens += json_get(x, "tokens")->u;
        hit += json_get(x, "hit_tokens")->u;
    }
    cr_expect_eq(calls, json_get(j, "requests")->u, "every lookup once");
    /* without jansson the header's chunk size is unread: a window's
     * tokens are then its chunks, as the report's chunks are */
    bool known = json_get(j, "total_tokens")->t != J_NULL;
    cr_expect_eq(tokens, json_get(j, known ? "total_tokens" : "chunks")->u);
    cr_expect_eq(hit, json_get(j, known ? "hit_tokens" : "hit_chunks")->u);
    json_free(j);
    run_free(&t);

    t = run_lct(NULL, "sim", "--csv", "--capacity", "4G", "--window", "1",
                LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strncmp(t.out, "start_s,end_s,requests,tokens,hit_tokens,"
                             "token_hit_rate\r\n0,1,", 47) == 0, "%s", t.out);
    run_free(&t);

    t = run_lct(NULL, "sim", "--capacity", "4G", "--window", "1m",
                LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "Token hit rate per 60 s of t_mono"), "%s",
              t.out);
    run_free(&t);

    char *svg = tmp_file_with("", 0);
    t = run_lct(NULL, "sim", "--capacity", "4G", "--l1", "1G", "--window",
                "1", "--svg", svg, LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    size_t len;
    char *text = read_whole_file(svg, &len);
    cr_expect(strstr(text, ">8. Token hit rate per 1 s</text>"));
    cr_expect(strstr(text, "% both tiers, "), "the summary's both tiers");
    cr_expect(strstr(text, ">behind an L1 of 1.0 GiB</text>"));
    free(text);
    unlink(svg);
    free(svg);
    run_free(&t);

    static const char *bad[] = {"0", "1.5", "-3", "10x", "5000000000"};
    for (size_t i = 0; i < 5; i++) {
        t = run_lct(NULL, "sim", "--capacity", "4G", "--window", bad[i],
                    LCT_SAMPLE, NULL);
        cr_expect_eq(t.status, 2, "--window %s", bad[i]);
        cr_expect(strstr(t.err, "--window is a whole number of seconds"),
                  "%s", t.err);
        run_free(&t);
    }
}


/*
 * reserve A, submit AB, submit CA, submit C, finish_write A (not a read
 * or write call of lct keys): A 3 references (2 reads, 1 write), C 2, B
 * 1.  --top orders A, C, B; the histogram: 1 reference 1 key, 2 one, 3
 * one, shares 1/3 each.
 */
Test(answers, keys_top_and_reuse_histogram)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    write_call(w, 1, "reserve_write", "A");
    write_call(w, 2, "submit_prefetch_task", "AB");
    write_call(w, 3, "submit_prefetch_task", "CA");
    write_call(w, 4, "submit_prefetch_task", "C");
    write_call(w, 5, "finish_write", "A");
    lct_writer_close(w);
    run t = run_lct(NULL, "keys", "--top", "2", "--csv", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    const char *row = strchr(t.out, '\n') + 1;
    cr_expect(strstr(row, ",3,2,1,41070000") == row + 16, "A first: %s",
              t.out);
    row = strchr(row, '\n') + 1;
    cr_expect(strstr(row, ",2,2,0,43070000") == row + 16, "then C: %s",
              t.out);
    cr_expect_null(strchr(strchr(row, '\n') + 1, '\n'), "two rows");
    run_free(&t);

    t = run_lct(NULL, "keys", "--top", "1", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    cr_expect_eq(json_get(j, "references")->u, 3);
    cr_expect_eq(json_number(json_get(j, "first_t_mono")), 1);
    cr_expect_eq(json_number(json_get(j, "last_t_mono")), 3);
    json_free(j);
    run_free(&t);

    t = run_lct(NULL, "keys", "--reuse-histogram", "--csv", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    /* thirds as the shortest round-trip form prints them */
    cr_expect_str_eq(t.out,
                     "references,keys,share_of_keys,cumulative_share\r\n"
                     "1,1,0.3333333333333333,0.3333333333333333\r\n"
                     "2,1,0.3333333333333333,0.6666666666666666\r\n"
                     "3,1,0.3333333333333333,1.0\r\n");
    run_free(&t);

    t = run_lct(NULL, "keys", "--top", "0", path, NULL);
    cr_expect_eq(t.status, 2);
    run_free(&t);
    t = run_lct(NULL, "keys", "--top", "1", "--reuse-histogram", path, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "one output at a time"), "%s", t.err);
    run_free(&t);
    unlink(path);
    free(path);
}

/* A read of one key of model `model` at t. */
static void read_of(lct_writer *w, double t, const char *model, char key)
{
    const char *q = "S.submit_prefetch_task";
    lct_writer_record_begin(w, t, 1.7e9 + t, q, strlen(q));
    lct_writer_map(w, 1);
    lct_writer_cstr(w, "keys");
    lct_writer_array(w, 1);
    lct_writer_codec(w, "ObjectKey");
    lct_writer_map(w, 3);
    lct_writer_cstr(w, "chunk_hash");
    unsigned char hash[32] = {(unsigned char)key};
    lct_writer_bin(w, hash, sizeof hash);
    lct_writer_cstr(w, "model_name");
    lct_writer_cstr(w, model);
    lct_writer_cstr(w, "kv_rank");
    lct_writer_int(w, 0);
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

/*
 * Reads x (model m1), y (model "m<ESC>2"), x, y.  In the shared cache
 * x's second read is at distance 1 (y since): m1 hits 0 of 2 at 1 key,
 * 1 of 2 from 2 keys; alone, x follows x: 1 of 2 from 1 key.
 */
Test(answers, mrc_by_group_shared_and_isolated)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    read_of(w, 1, "m1", 'x');
    read_of(w, 2, "m\0332", 'y');
    read_of(w, 3, "m1", 'x');
    read_of(w, 4, "m\0332", 'y');
    lct_writer_close(w);
    run t = run_lct(NULL, "mrc", "--by", "model", "--json", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    const jv *groups = json_get(j, "groups");
    cr_assert(groups && groups->n == 2);
    cr_expect_str_eq(json_get(&groups->items[0], "group")->s, "m1");
    cr_expect_str_eq(json_get(&groups->items[1], "group")->s, "m\0332");
    cr_expect_eq(json_get(&groups->items[0], "requests")->u, 2);
    const jv *curve = json_get(j, "curve");
    cr_assert(curve && curve->n >= 2);
    cr_expect_eq(json_get(&curve->items[0], "keys")->u, 1);
    cr_expect_eq(json_number(&json_get(&curve->items[0],
                                       "hit_ratio")->items[0]), 0);
    cr_expect_eq(json_number(&json_get(&curve->items[1],
                                       "hit_ratio")->items[0]), 0.5);
    json_free(j);
    run_free(&t);

    t = run_lct(NULL, "mrc", "--by", "model", "--isolated", "--json", path,
                NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    j = json_parse(t.out, t.outlen);
    curve = json_get(j, "curve");
    cr_expect_eq(json_number(&json_get(&curve->items[0],
                                       "hit_ratio")->items[0]), 0.5,
                 "alone, x follows x");
    cr_expect(json_get(j, "isolated")->t == J_BOOL && json_get(j, "isolated")->b);
    json_free(j);
    run_free(&t);

    /* text: the group named escaped; the chart: a line and a legend a
     * group */
    char *svg = tmp_file_with("", 0);
    t = run_lct(NULL, "mrc", "--by", "model", "--svg", svg, path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "g1 = m\\0332 (2 requests)"), "%s", t.out);
    cr_expect_null(strchr(t.out, '\033'), "no raw escape byte");
    size_t len;
    char *text = read_whole_file(svg, &len);
    size_t lines = 0;
    for (const char *q = text; (q = strstr(q, "<polyline")); q++)
        lines++;
    cr_expect_eq(lines, 2);
    cr_expect(strstr(text, ">model m1</text>"), "legend: field and group");
    cr_expect(strstr(text, "LRU hit ratio by model: "));
    free(text);
    unlink(svg);
    free(svg);
    run_free(&t);

    static const char *bad[][3] = {{"--by", "nope", "--by is model"},
                                   {"--isolated", NULL, "goes with --by"},
                                   {"--by", "kv_rank", "takes no --prefix"}};
    for (size_t i = 0; i < 3; i++) {
        t = i == 2 ? run_lct(NULL, "mrc", "--by", "kv_rank", "--prefix",
                             path, NULL)
            : bad[i][1] ? run_lct(NULL, "mrc", bad[i][0], bad[i][1], path,
                                  NULL)
                        : run_lct(NULL, "mrc", bad[i][0], path, NULL);
        cr_expect_eq(t.status, 2, "%zu", i);
        cr_expect(strstr(t.err, bad[i][2]), "%s", t.err);
        run_free(&t);
    }
    unlink(path);
    free(path);
}

/* A and B: the same calls to record 2, then B looks up other keys (D
 * for C) and adds a finish_write. */
static char *run_of(bool b)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    write_call(w, 1, "reserve_write", "AB");
    write_call(w, 2, "submit_prefetch_task", "AB");
    write_call(w, 3, "submit_prefetch_task", b ? "AD" : "AC");
    write_call(w, 4, "reserve_write", "A");
    if (b)
        write_call(w, 5, "finish_write", "A");
    lct_writer_close(w);
    return path;
}

/*
 * Keys: A has A, B, C; B has A, B, D: one in A only, one in B only, two
 * in both.  The sequences part at record 2 (keys AC against AD).  Calls:
 * finish_write 0 against 1.
 */
Test(answers, diff_says_where_two_runs_part)
{
    char *a = run_of(false), *b = run_of(true);
    run t = run_lct(NULL, "diff", a, a, NULL);
    cr_expect_eq(t.status, 0, "the same run: %s%s", t.out, t.err);
    cr_expect(strstr(t.out, "the same in these terms"), "%s", t.out);
    run_free(&t);

    t = run_lct(NULL, "diff", "--json", a, b, NULL);
    cr_expect_eq(t.status, 1, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    const jv *k = json_get(j, "keys");
    cr_expect_eq(json_get(k, "a_only")->u, 1);
    cr_expect_eq(json_get(k, "b_only")->u, 1);
    cr_expect_eq(json_get(k, "both")->u, 2);
    const jv *d = json_get(j, "first_divergence");
    cr_assert(d && d->t == J_OBJ, "%s", t.out);
    cr_expect_eq(json_get(d, "record")->u, 2);
    cr_expect_str_eq(json_get(json_get(d, "a"), "op")->s,
                     "submit_prefetch_task");
    const jv *calls = json_get(j, "calls");
    bool saw = false;
    for (size_t i = 0; calls && i < calls->n; i++) {
        const jv *c = &calls->items[i];
        if (strstr(json_get(c, "qualname")->s, ".finish_write")) {
            cr_expect_eq(json_get(c, "a")->u, 0);
            cr_expect_eq(json_get(c, "b")->u, 1);
            cr_expect_eq(json_number(json_get(c, "delta")), 1);
            saw = true;
        }
    }
    cr_expect(saw, "finish_write, in B only, is listed");
    cr_expect(json_get(j, "headers")->n == 0, "the same headers");
    cr_expect(json_get(j, "same")->t == J_BOOL && !json_get(j, "same")->b);
    json_free(j);
    run_free(&t);

    t = run_lct(NULL, "diff", a, b, NULL);
    cr_expect_eq(t.status, 1);
    cr_expect(strstr(t.out, "call sequences part at record 2:"), "%s", t.out);
    cr_expect(strstr(t.out, "differ in: calls keys order"), "%s", t.out);
    run_free(&t);
    t = run_lct(NULL, "diff", a, "/nonexistent.lct", NULL);
    cr_expect_eq(t.status, 2, "trouble is 2, as diff(1)'s");
    run_free(&t);
    /* B cut in its last record: compared as far as it goes, the damage
     * named, and the status lct's damaged 3, whichever side it is on */
    size_t blen;
    char *bytes = read_whole_file(b, &blen);
    cr_assert(bytes && blen > 3);
    char *cut = tmp_file_with(bytes, blen - 3);
    free(bytes);
    for (int side = 0; side < 2; side++) {
        t = run_lct(NULL, "diff", side ? cut : a, side ? a : cut, NULL);
        cr_expect_eq(t.status, 3, "%s", t.err);
        cr_expect(strstr(t.out, "differ in:") != NULL, "%s", t.out);
        cr_expect(strstr(t.err, "truncat") != NULL, "%s", t.err);
        run_free(&t);
    }
    unlink(cut);
    free(cut);
    t = run_lct(NULL, "diff", a, NULL);
    cr_expect_eq(t.status, 2);
    run_free(&t);
    unlink(a);
    unlink(b);
    free(a);
    free(b);
}
