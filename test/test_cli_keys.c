/*
 * test_cli_keys.c - the lct tool run as a program: keys and mrc as
 * programs: the reference stream and oracleGeneral against the library, the
 * curves against the library's, streamed against gathered, SVG, selections.
 * What every test_cli_*.c shares (running the tool, the fixtures, JSON
 * equality) is in test/support/cli.c.
 */
#define _GNU_SOURCE /* cpu_set_t, for cpus.h */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cpus.h"
#include "files.h"
#include "lct.h"
#include "json.h"
#include "mpw.h"
#include "run.h"

/* These tests wait on other processes: a regression that hangs one
 * fails it instead of stalling the run. */
TestSuite(cli, .timeout = 300);

static int tool_file_write_for_test(void *ctx, const char *data, size_t len)
{
    return fwrite(data, 1, len, ctx) == len ? 0 : -1;
}

/* A trace's key references through the library, key by key (not as
 * ids), as lct keys should list them: read and write calls (by qualname
 * suffix), each key. */
static lct_refs *trace_refs(const char *path, uint64_t *rows)
{
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    lct_refs *refs;
    cr_assert_eq(lct_refs_new(&refs), LCT_OK);
    lct_record rec;
    *rows = 0;
    while (lct_next(r, &rec) == 1) {
        bool read = lct_str_has_suffix(rec.qualname, ".submit_prefetch_task");
        bool write = lct_str_has_suffix(rec.qualname, ".reserve_write");
        if (!read && !write)
            continue;
        lct_key_iter it;
        lct_object_key k;
        uint64_t bytes;
        cr_assert_eq(lct_key_iter_init(&rec, &it, NULL), LCT_OK);
        while (lct_key_iter_next(&it, &k, &bytes, NULL) == 1) {
            lct_refs_add(refs, lct_object_key_hash(&k), bytes, rec.t_mono,
                         read);
            (*rows)++;
        }
    }
    lct_close(r);
    return refs;
}

static lct_refs *sample_refs(uint64_t *rows)
{
    return trace_refs(LCT_SAMPLE, rows);
}

/* lct keys --oracle-general's bytes for the trace equal the library's
 * (lct_refs_write_oracle_general of trace_refs). */
static void expect_oracle_general(const char *trace, const char *jobs)
{
    uint64_t rows;
    lct_refs *refs = trace_refs(trace, &rows);
    char *out = tmp_file_with("", 0);
    run t = run_lct(NULL, "keys", "-j", jobs, "--oracle-general", out, trace,
                    NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    size_t len;
    unsigned char *bin = (unsigned char *)read_whole_file(out, &len);
    cr_assert_eq(len, 24 * rows, "%s", trace);
    char *want = NULL;
    size_t wantlen = 0;
    FILE *mem = open_memstream(&want, &wantlen);
    cr_assert_eq(lct_refs_write_oracle_general(refs, tool_file_write_for_test,
                                               mem, NULL, NULL),
                 LCT_OK);
    fclose(mem);
    cr_expect_eq(wantlen, len);
    cr_expect(memcmp(want, bin, len) == 0, "%s -j %s: oracleGeneral bytes "
              "differ", trace, jobs);
    free(want);
    free(bin);
    unlink(out);
    free(out);
    run_free(&t);
    lct_refs_free(refs);
}

/* MARK: keys */

Test(cli, keys_lists_every_reference_and_writes_oracle_general)
{
    uint64_t rows;
    lct_refs *refs = sample_refs(&rows);
    cr_assert_gt(rows, 1000);
    run t = run_lct(NULL, "keys", "--csv", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect_eq(count_lines(t.out), rows + 1);
    cr_expect(strncmp(t.out, "idx,t_mono,op,chunk_hash,", 25) == 0);
    run_free(&t);

    t = run_lct(NULL, "keys", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0);
    char *nl = strchr(t.out, '\n');
    jv *first = json_parse(t.out, (size_t)(nl - t.out));
    cr_assert(first);
    cr_expect_str_eq(json_get(first, "op")->s, "read");
    cr_expect_eq(json_get(first, "bytes")->u, 2 * 32 * 256 * 8 * 128 * 2);
    cr_expect_eq(json_get(first, "chunk_hash")->slen, 64);
    json_free(first);
    run_free(&t);

    /* the tool takes keys as ids, a noted list hashed where it lies: the
     * same bytes as key by key, on the sample and on shapes that mix
     * salts and models or carry groups */
    expect_oracle_general(LCT_SAMPLE, "1");
    static const char *const shapes[][2] = {
        {"--shape", "llama"}, {"--mix", NULL}, {"--spec", NULL}};
    for (size_t k = 0; k < 3; k++) {
        char *gen = gen_shape_trace("2000", shapes[k][0], shapes[k][1]);
        expect_oracle_general(gen, "1");
        expect_oracle_general(gen, "2");
        unlink(gen);
        free(gen);
    }

    t = run_lct(NULL, "keys", "--oracle-general", "/nonexistent/dir/og",
                LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 1);
    cr_expect(strstr(t.err, "/nonexistent/dir/og"), "%s", t.err);
    run_free(&t);

    t = run_lct(NULL, "keys", "--all", "--csv", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0);
    cr_expect_gt(count_lines(t.out), rows + 1);
    cr_expect(strstr(t.out, ",lmcache.v1.distributed.storage_manager."
                            "StorageManager.finish_write,"));
    run_free(&t);
    lct_refs_free(refs);
}

/* keys remembers which patterns a qualname matched: with twelve
 * qualnames cycling (more than it remembers), some longer than it holds,
 * each record is still counted by its own qualname: --all's op column
 * and the read and write counts are the records written. */
Test(cli, keys_classifies_many_qualnames_alike)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    char names[12][200];
    for (int q = 0; q < 12; q++) {
        const char *call = q % 4 == 0   ? "submit_prefetch_task"
                           : q % 4 == 1 ? "reserve_write"
                                        : "call";
        /* some past 112 bytes; the others all 80 bytes long */
        int pad = q % 3 == 0 ? 150 : 74 - (int)strlen(call) - (q > 9);
        snprintf(names[q], sizeof names[q], "mod.%.*s.%s%d", pad,
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                 call, q);
        cr_assert(q % 3 == 0 || strlen(names[q]) == 80, "%s", names[q]);
    }
    for (int r = 0; r < 120; r++) {
        const char *q = names[(r * 5) % 12];
        lct_writer_record_begin(w, r, r, q, strlen(q));
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "keys");
        lct_writer_array(w, 1);
        unsigned char hash[2] = {(unsigned char)r, 1};
        write_object_key(w, hash, sizeof hash, 0, -1, NULL);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    /* names ending in a digit: "...submit_prefetch_task0" is no suffix
     * match for the default patterns, so ask by glob */
    run t = run_lct(NULL, "keys", "--csv", "--all", "--read",
                    "*submit_prefetch_task*", "--write", "*reserve_write*",
                    "--write", "no_such_call", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    int reads = 0, writes = 0, other[12] = {0};
    for (const char *l = strchr(t.out, '\n') + 1; *l;
         l = strchr(l, '\n') + 1) {
        const char *op = strchr(strchr(l, ',') + 1, ',') + 1;
        if (strncmp(op, "read,", 5) == 0)
            reads++;
        else if (strncmp(op, "write,", 6) == 0)
            writes++;
        else
            for (int q = 0; q < 12; q++)
                if (strncmp(op, names[q], strlen(names[q])) == 0 &&
                    op[strlen(names[q])] == ',')
                    other[q]++;
    }
    /* (r * 5) % 12 visits every name 10 times in 120 records */
    cr_expect_eq(reads, 30);
    cr_expect_eq(writes, 30);
    for (int q = 0; q < 12; q++)
        cr_expect_eq(other[q], q % 4 >= 2 ? 10 : 0, "%s", names[q]);
    cr_expect(strstr(t.err, "--write 'no_such_call' matched no record"),
              "%s", t.err);
    cr_expect(!strstr(t.err, "reserve_write*' matched no record"), "%s",
              t.err);
    run_free(&t);
    unlink(path);
    free(path);
}

/* Newer LMCache: keys under a PrefetchTaskSpec are read, group by group;
 * keys under a type this version does not read are counted and said,
 * never silently nothing. */
Test(cli, keys_of_newer_and_unknown_carriers)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    static const char *types[] = {"PrefetchTaskSpec", "PrefetchPlanV9",
                                  "PrefetchPlanV9"};
    for (int r = 0; r < 3; r++) {
        lct_writer_record_begin(w, r, r, "x.submit_prefetch_task", 22);
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "spec");
        lct_writer_codec(w, types[r]);
        lct_writer_map(w, 1);
        lct_writer_cstr(w, r == 0 ? "key_groups" : "some_keys");
        lct_writer_array(w, 1);
        if (r == 0) {
            lct_writer_codec(w, "GroupedObjectKeys");
            lct_writer_map(w, 2);
            lct_writer_cstr(w, "keys");
            lct_writer_array(w, 1);
        }
        unsigned char hash[2] = {(unsigned char)r, 7};
        write_object_key(w, hash, sizeof hash, 0, -1, NULL);
        if (r == 0) { /* the group's id, after its keys */
            lct_writer_cstr(w, "object_group_id");
            lct_writer_int(w, 0);
        }
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    run t = run_lct(NULL, "keys", "--csv", path, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "\r\n0,0.0,read,0007,m,0,0,"), "%s", t.out);
    cr_expect(strstr(t.err, "2 records hold ObjectKeys under types this "
                            "version does not read: PrefetchPlanV9"),
              "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "mrc", path, NULL);
    cr_expect(strstr(t.err, "2 records hold ObjectKeys"), "%s", t.err);
    cr_expect(strstr(t.out, "1 reads"), "%s", t.out);
    run_free(&t);
    unlink(path);
    free(path);
}

/* MARK: mrc */

Test(cli, mrc_matches_the_library_and_draws_svg)
{
    uint64_t rows;
    lct_refs *refs = sample_refs(&rows);
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute(refs, 1, &m, NULL), LCT_OK);
    run t = run_lct(NULL, "mrc", "--json", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    lct_mrc_totals tot;
    lct_mrc_totals_get(m, &tot);
    cr_expect_eq(json_get(j, "reads")->u, tot.reads);
    cr_expect_eq(json_get(j, "writes")->u, tot.writes);
    cr_expect_gt(tot.infinite_hit_ratio, 0.5, "the sample reuses keys");
    const jv *curve = json_get(j, "curve");
    cr_assert(curve && curve->n > 5);
    double prev = 0;
    for (size_t i = 0; i < curve->n; i++) {
        const jv *p = &curve->items[i];
        double hit = json_number(json_get(p, "hit_ratio"));
        cr_expect_eq(hit, lct_mrc_hit_ratio(m, json_get(p, "keys")->u));
        cr_expect_geq(hit, prev);
        prev = hit;
    }
    cr_expect_eq(prev, tot.infinite_hit_ratio, "the curve reaches the top");
    json_free(j);
    run_free(&t);

    char *svg = tmp_file_with("", 0);
    t = run_lct(NULL, "mrc", "--sample", "0.5", "--svg", svg, LCT_SAMPLE,
                NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "SHARDS sample rate 0.5"), "%s", t.out);
    size_t len;
    char *text = read_whole_file(svg, &len);
    cr_expect(strncmp(text, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
    cr_expect(strstr(text, "<polyline"));
    cr_expect(strstr(text, "<polygon"), "the samples' band");
    cr_expect(strstr(text, "(requests: reads)"), "the SVG says what it counts");
    cr_expect(strstr(text, "GiB"));
    cr_expect(strstr(text, "</svg>\n"));
    free(text);
    unlink(svg);
    free(svg);
    run_free(&t);

    t = run_lct(NULL, "mrc", "--read", "no_such_call", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 0);
    cr_expect(strstr(t.err, "--read 'no_such_call' matched no record"), "%s",
              t.err);
    cr_expect(strstr(t.out, "0 reads"), "%s", t.out);
    run_free(&t);

    t = run_lct(NULL, "mrc", "--sample", "0", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "--sample"), "%s", t.err);
    run_free(&t);
    lct_mrc_free(m);
    lct_refs_free(refs);
}

/* --policy: each policy's hit ratio at each capacity printed is what
 * lct_policy_run gives on the same references; LRU's is the exact
 * curve's; Belady's is never below another's; the CSV, the SVG's legend
 * and the refusals. */
Test(cli, mrc_policies_beside_the_curve)
{
    uint64_t rows;
    lct_refs *refs = sample_refs(&rows);
    run t = run_lct(NULL, "mrc", "--json", "-j", "2", "--policy",
                    "arc,lru,belady,SIEVE", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    const jv *curve = json_get(j, "curve");
    cr_assert(curve && curve->n > 5);
    static const char *names[] = {"arc", "lru", "belady", "sieve"};
    lct_policy_kind arc = LCT_POLICY_ARC;
    for (size_t i = 0; i < curve->n; i++) {
        const jv *p = &curve->items[i];
        const jv *ph = json_get(p, "policy_hit_ratio");
        cr_assert(ph, "point %zu has the policies' ratios", i);
        double r[4];
        for (size_t k = 0; k < 4; k++) {
            const jv *v = json_get(ph, names[k]);
            cr_assert(v, "%s", names[k]);
            r[k] = json_number(v);
        }
        const jv *h = json_get(p, "hit_ratio");
        cr_expect_eq(r[1], json_number(h));
        cr_expect_geq(r[2], r[0]);
        cr_expect_geq(r[2], r[1]);
        cr_expect_geq(r[2], r[3]);
        uint64_t cap = json_get(p, "keys")->u;
        lct_policy_run_options o = {.kinds = &arc, .nkinds = 1};
        lct_policy_point pt;
        cr_assert_eq(lct_policy_run(refs, &o, &cap, 1, &pt, NULL), LCT_OK);
        cr_expect_eq(r[0], (double)pt.hits / (double)pt.requests,
                     "arc at %llu", (unsigned long long)cap);
    }
    json_free(j);
    run_free(&t);

    char *svg = tmp_file_with("", 0);
    t = run_lct(NULL, "mrc", "--csv", "--policy", "s3fifo,belady", "--svg",
                svg, LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "byte_hit_ratio,s3fifo_hit_ratio,"
                            "belady_hit_ratio\r\n"), "%s", t.out);
    size_t len;
    char *text = read_whole_file(svg, &len);
    cr_expect(strstr(text, ">s3fifo</text>"), "a legend line a policy");
    cr_expect(strstr(text, ">belady (the ceiling, per key)</text>"));
    cr_expect(strstr(text, "Policies' hit ratio"));
    size_t lines = 0;
    for (const char *q = text; (q = strstr(q, "<polyline")); q++)
        lines++;
    cr_expect_eq(lines, 3, "LRU's line and one a policy");
    free(text);
    unlink(svg);
    free(svg);
    run_free(&t);

    t = run_lct(NULL, "mrc", "--policy", "lru,nope", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "unknown policy 'nope' (known: fifo, lru, "
                            "clock, sieve, lfu, arc, s3fifo, belady, mru, "
                            "lmcache-lru, lmcache-arc, lmcache-s3fifo, "
                            "lmcache-isolated-lru)"),
              "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "mrc", "--policy", "arc", "--l1", "64", LCT_SAMPLE,
                NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "--policy simulates every key"), "%s", t.err);
    run_free(&t);
    /* by the prefix rule: LRU's token ratio is the curve's (Belady
     * order is no ceiling there: not compared) */
    t = run_lct(NULL, "mrc", "--json", "--prefix", "--policy",
                "lru,sieve,belady", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    curve = json_get(j, "curve");
    for (size_t i = 0; curve && i < curve->n; i++) {
        const jv *p = &curve->items[i];
        const jv *tok = json_get(p, "policy_token_hit_ratio");
        cr_assert(tok, "point %zu", i);
        const jv *want = json_get(p, "token_hit_ratio");
        const jv *lru = json_get(tok, "lru");
        cr_assert(lru && json_get(tok, "sieve") && json_get(tok, "belady"));
        double w = json_number(want);
        double l = json_number(lru);
        cr_expect_eq(l, w, "at %llu",
                     (unsigned long long)json_get(p, "keys")->u);
    }
    json_free(j);
    run_free(&t);
    lct_refs_free(refs);
}

/* An exact curve is computed as the trace is read (one thread, memory by
 * keys) unless -j asks for threads, which gather the references first:
 * the same curve in every mode (an L1 in front too), on traces of three
 * shapes, one of four key sizes, and a damaged one. */
/* The policy's hit ratio at one capacity, per key. */
static double policy_ratio(const lct_refs *refs, lct_policy_kind kind,
                           uint64_t cap)
{
    lct_policy_run_options o = {.kinds = &kind, .nkinds = 1};
    lct_policy_point pt;
    cr_assert_eq(lct_policy_run(refs, &o, &cap, 1, &pt, NULL), LCT_OK);
    return (double)pt.hits / (double)pt.requests;
}

Test(cli, mrc_target_is_the_least_capacity)
{
    uint64_t rows;
    lct_refs *refs = sample_refs(&rows);
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute(refs, 1, &m, NULL), LCT_OK);
    run t = run_lct(NULL, "mrc", "--json", "--target", "0.3", "--policy",
                    "arc,lru", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    cr_expect_eq(json_number(json_get(j, "target")), 0.3);
    const jv *as = json_get(j, "answers");
    cr_assert(as && as->n == 2, "LRU's, then ARC's");
    const jv *lru = &as->items[0], *arc = &as->items[1];
    cr_expect_str_eq(json_get(lru, "policy")->s, "lru");
    uint64_t keys = json_get(lru, "keys")->u;
    cr_expect_eq(keys, lct_mrc_capacity_for(m, LCT_MRC_HIT, 0.3));
    cr_expect_geq(lct_mrc_hit_ratio(m, keys), 0.3);
    cr_expect_lt(lct_mrc_hit_ratio(m, keys - 1), 0.3);
    cr_expect_eq(json_get(lru, "bytes")->u,
                 lct_mrc_capacity_for(m, LCT_MRC_BYTE_HIT, 0.3));
    cr_expect_str_eq(json_get(lru, "bytes_from")->s, "byte_lru");
    cr_expect_str_eq(json_get(arc, "policy")->s, "arc");
    keys = json_get(arc, "keys")->u;
    cr_expect_eq(json_number(json_get(arc, "ratio")),
                 policy_ratio(refs, LCT_POLICY_ARC, keys));
    cr_expect_geq(policy_ratio(refs, LCT_POLICY_ARC, keys), 0.3);
    cr_expect_lt(policy_ratio(refs, LCT_POLICY_ARC, keys - 1), 0.3,
                 "one key less falls short");
    cr_expect_eq(json_number(json_get(arc, "ratio_one_key_less")),
                 policy_ratio(refs, LCT_POLICY_ARC, keys - 1));
    json_free(j);
    run_free(&t);

    /* above what an unbounded cache reaches: said, not a capacity */
    t = run_lct(NULL, "mrc", "--target", "0.9999", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "unreachable: an unbounded cache reaches"),
              "%s", t.out);
    run_free(&t);

    /* behind an L1: L2's own ratio and both tiers' */
    t = run_lct(NULL, "mrc", "--csv", "--target", "0.5", "--l1", "64",
                LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strncmp(t.out, "measure,target,policy,tiers,keys,", 33) == 0,
              "%s", t.out);
    cr_expect(strstr(t.out, "\r\ntoken_hit_ratio,0.5,lru,L2,"), "%s",
              t.out);
    cr_expect(strstr(t.out, "\r\ntoken_hit_ratio,0.5,lru,L1+L2,"), "%s",
              t.out);
    run_free(&t);

    /* the chart: the answer marked, the token line, round byte ticks */
    char *svg = tmp_file_with("", 0);
    t = run_lct(NULL, "mrc", "--l1", "64", "--target", "0.4", "--svg", svg,
                LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    size_t len;
    char *text = read_whole_file(svg, &len);
    cr_expect(strstr(text, "<circle "), "the answer is marked");
    cr_expect(strstr(text, ">both tiers' target 0.4: 78 keys (2.4 GiB)<"),
              "the answer in words, as the table says it");
    cr_expect(strstr(text, "(L2 behind an L1 of 64)</text>"), "the title");
    cr_expect(strstr(text, ">both tiers (an L1 of 64 in front), token hit "
                           "ratio</text>"), "both tiers' line");
    cr_expect(strstr(text, ">L2's LRU, token hit ratio (prefix rule)<"));
    size_t ticks = 0;
    for (const char *q = text; (q = strstr(q, "fill=\"#555\">")); q++) {
        double v = strtod(q + strlen("fill=\"#555\">"), NULL);
        if (v <= 0)
            continue; /* the unit's label */
        double mant = v / pow(10, floor(log10(v)));
        cr_expect(fabs(mant - 1) < 1e-9 || fabs(mant - 2) < 1e-9 ||
                      fabs(mant - 5) < 1e-9, "byte tick %g is round", v);
        ticks++;
    }
    cr_expect_geq(ticks, 2, "byte ticks drawn");
    free(text);
    run_free(&t);
    t = run_lct(NULL, "mrc", "--prefix", "--policy", "sieve", "--svg", svg,
                LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    text = read_whole_file(svg, &len);
    cr_expect(strstr(text, ">sieve token hit ratio</text>"),
              "under the prefix rule a policy's line is its token ratio");
    free(text);
    run_free(&t);

    /* keys of several sizes: the bytes a token ratio needs come from the
     * byte capacity's own curve, which the chart draws too */
    char *sized = tmp_file_with("", 0);
    t = run_lct(NULL, "gen", "-n", "3000", "--docs", "300", "--sizes", "4",
                sized, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "mrc", "--prefix", "--json", "--target", "0.2", sized,
                NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    lru = &json_get(j, "answers")->items[0];
    cr_expect_str_eq(json_get(lru, "bytes_from")->s, "byte_lru");
    cr_expect_geq(json_number(json_get(lru, "byte_token_hit_ratio")), 0.2);
    json_free(j);
    run_free(&t);
    t = run_lct(NULL, "mrc", "--prefix", "--svg", svg, sized, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    text = read_whole_file(svg, &len);
    cr_expect(strstr(text, ">bytes-capacity LRU (keys x mean key size), "
                           "token hit ratio</text>"));
    free(text);
    run_free(&t);
    unlink(sized);
    free(sized);
    unlink(svg);
    free(svg);

    static const char *bad[][2] = {{"--target", "0"}, {"--target", "1.5"},
                                   {"--target", "x"}};
    for (size_t i = 0; i < 3; i++) {
        t = run_lct(NULL, "mrc", bad[i][0], bad[i][1], LCT_SAMPLE, NULL);
        cr_expect_eq(t.status, 2, "%s %s", bad[i][0], bad[i][1]);
        cr_expect(strstr(t.err, "--target needs a hit ratio in (0, 1]"),
                  "%s", t.err);
        run_free(&t);
    }
    t = run_lct(NULL, "mrc", "--target", "0.5", "--sample", "0.5",
                LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "it takes no --sample"), "%s", t.err);
    run_free(&t);
    lct_mrc_free(m);
    lct_refs_free(refs);
}

Test(cli, mrc_streamed_is_mrc_gathered)
{
    for (int g = 0; g < 5; g++) {
        char *path = tmp_file_with("", 0);
        run m = g == 1 ? run_lct(NULL, "gen", "-n", "1500", "--docs", "100",
                                 "--shape", "llama", path, NULL)
                : g == 2 ? run_lct(NULL, "gen", "-n", "1500", "--docs",
                                   "100", "--spec", path, NULL)
                : g == 3 ? run_lct(NULL, "gen", "-n", "3000", "--docs",
                                   "300", "--sizes", "4", path, NULL)
                         : run_lct(NULL, "gen", "-n", "3000", "--docs",
                                   "300", path, NULL);
        cr_assert_eq(m.status, 0, "%s", m.err);
        run_free(&m);
        if (g == 4) { /* a frame in the middle no msgpack value starts */
            run o = run_lct(NULL, "dump", "--fields", "offset", "--range",
                            "1200:1201", path, NULL);
            long long off = atoll(strchr(o.out, ':') + 1);
            int fd = open(path, O_RDWR);
            cr_assert(off > 0 && fd >= 0, "%s", o.out);
            cr_assert_eq(pwrite(fd, "\xc1", 1, off + 4), 1);
            close(fd);
            run_free(&o);
        }
        for (int k = 0; k < 7; k++) {
            run r[2];
            for (int j = 0; j < 2; j++) {
                const char *jobs = j ? "2" : "1";
                r[j] = k == 5 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                        "--json", "--l1", "200", path, NULL)
                       : k == 6 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                          "--json", "--l1", "2G", path, NULL)
                       : k == 1 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                        "--json", "--prefix", path, NULL)
                       : k == 2 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                          "--json", "--requests", "all",
                                          path, NULL)
                       : k == 3 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                          "--json", "--prefix",
                                          "--lookups-only", path, NULL)
                       : k == 4 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                          "--csv", "--prefix", "--requests",
                                          "all", path, NULL)
                                : run_lct(NULL, "mrc", "-q", "-j", jobs,
                                          "--json", path, NULL);
            }
            cr_expect_eq(r[0].status, g == 4 ? 3 : 0, "%s", r[0].err);
            cr_expect_eq(r[0].status, r[1].status);
            cr_expect(strlen(r[0].out) > 200, "%s", r[0].out);
            cr_expect_str_eq(r[0].out, r[1].out, "trace %d mode %d", g, k);
            if (k >= 5) /* the L1's figures are in both */
                cr_expect(strstr(r[0].out, "\"l1\"") != NULL, "%.300s",
                          r[0].out);
            if (g == 3 && k == 0) /* four sizes: the byte curve is shown */
                cr_expect(strstr(r[0].out, "\"byte_hit_ratio\"") != NULL,
                          "%.300s", r[0].out);
            if (k == 1) /* and its token ratio, with four sizes only */
                cr_expect((strstr(r[0].out, "\"byte_token_hit_ratio\":0") !=
                           NULL) == (g == 3),
                          "trace %d: %.300s", g, r[0].out);
            run_free(&r[0]);
            run_free(&r[1]);
        }
        unlink(path);
        free(path);
    }
}

/* Issue 19: what lct mrc counts, how it samples, and an empty curve. */
Test(cli, mrc_requests_samples_and_nothing_to_draw)
{
    /* --read of both calls: the --write default matched records too (they
     * were taken as reads), so it must not be said to match nothing. */
    run t = run_lct(NULL, "mrc", "--read", "submit_prefetch_task", "--read",
                    "reserve_write", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 0);
    cr_expect_null(strstr(t.err, "matched no record"), "%s", t.err);
    run_free(&t);

    t = run_lct(NULL, "mrc", "--json", "--requests", "all", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    cr_expect_str_eq(json_get(j, "requests")->s, "all");
    cr_expect_eq(json_get(j, "reads")->u, json_get(j, "references")->u);
    cr_expect_eq(json_get(j, "writes")->u, 0);
    json_free(j);
    run_free(&t);

    t = run_lct(NULL, "mrc", "--json", "--sample", "0.5", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    const jv *samples = json_get(j, "samples");
    cr_assert(samples && samples->n == 9, "nine salted samples by default");
    for (size_t i = 0; i < samples->n; i++) {
        cr_expect_eq(json_get(&samples->items[i], "seed")->u, i + 1);
        cr_expect(json_get(&samples->items[i], "kept_references"));
        cr_expect(json_get(&samples->items[i], "adjustment"));
    }
    const jv *curve = json_get(j, "curve");
    cr_assert(curve && curve->n > 3);
    for (size_t i = 0; i < curve->n; i++) {
        const jv *p = &curve->items[i];
        double v[3];
        const char *names[] = {"hit_ratio_min", "hit_ratio", "hit_ratio_max"};
        for (int k = 0; k < 3; k++) {
            const jv *x = json_get(p, names[k]);
            cr_assert(x, "%s", names[k]);
            v[k] = json_number(x);
        }
        cr_expect(v[0] <= v[1] && v[1] <= v[2], "the band holds the mean");
    }
    json_free(j);
    run_free(&t);

    /* The same seed, the same curve. */
    run a = run_lct(NULL, "mrc", "--sample", "0.2", "--seed", "5", LCT_SAMPLE,
                    NULL);
    run b = run_lct(NULL, "mrc", "--sample", "0.2", "--seed", "5", LCT_SAMPLE,
                    NULL);
    cr_expect_eq(a.status, 0);
    cr_expect_str_eq(a.out, b.out);
    cr_expect(strstr(a.out, "seed 5 to 13"), "%s", a.out);
    cr_expect(strstr(a.out, "(expected "), "%s", a.out);
    run_free(&a);
    run_free(&b);

    /* A trace with no key references: said, no rows, and the SVG says so
     * in words (it printed a row "1 - 0.0000 1.0000"). */
    char *clean = fixture("clean", ".lct");
    char *svg = tmp_file_with("", 0);
    t = run_lct(NULL, "mrc", "--svg", svg, clean, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.err, "no key references"), "%s", t.err);
    const char *head = strstr(t.out, "miss_ratio\n");
    cr_expect(head && head[strlen("miss_ratio\n")] == '\0',
              "no rows after the header:\n%s", t.out);
    size_t len;
    char *text = read_whole_file(svg, &len);
    cr_expect(strstr(text, "No key references to draw"), "%s", text);
    cr_expect_null(strstr(text, "<polyline"));
    free(text);
    run_free(&t);
    t = run_lct(NULL, "mrc", "--csv", clean, NULL);
    cr_expect_str_eq(t.out, "keys,bytes,hit_ratio,miss_ratio,byte_hit_ratio\r\n");
    run_free(&t);
    unlink(svg);
    free(svg);
    free(clean);
}

/* MARK: selecting records */

/* keys and mrc select records as dump does: --qualname, --since, --until
 * (and report a --qualname that matched nothing). */
Test(cli, keys_and_mrc_select_records_as_dump_does)
{
    run all = run_lct(NULL, "keys", "--csv", LCT_SAMPLE, NULL);
    run w = run_lct(NULL, "keys", "--csv", "--qualname", "reserve_write",
                    LCT_SAMPLE, NULL);
    run late = run_lct(NULL, "keys", "--csv", "--since", "0.5", LCT_SAMPLE,
                       NULL);
    cr_expect_eq(w.status, 0, "%s", w.err);
    static char *lines[8192];
    size_t n_all = lines_of(all.out, lines, 8192);
    size_t n_w = lines_of(w.out, lines, 8192);
    for (size_t i = 1; i < n_w; i++)
        cr_assert(strstr(lines[i], ",write,"), "%s", lines[i]);
    size_t n_late = lines_of(late.out, lines, 8192);
    for (size_t i = 1; i < n_late; i++)
        cr_assert_geq(atof(strchr(lines[i], ',') + 1), 0.5, "%s", lines[i]);
    cr_expect(n_w > 1 && n_w < n_all && n_late > 1 && n_late < n_all,
              "%zu %zu %zu", n_all, n_w, n_late);
    run_free(&all);
    run_free(&w);
    run_free(&late);
    run m = run_lct(NULL, "mrc", "--qualname", "nothing_like_it", LCT_SAMPLE,
                    NULL);
    cr_expect(strstr(m.err, "--qualname 'nothing_like_it' matched no record"),
              "%s", m.err);
    cr_expect(strstr(m.out, "0 reads, 0 writes"), "%s", m.out);
    run_free(&m);
}
