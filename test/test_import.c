/*
 * test_import.c - lct import mooncake and bailian on small files written
 * by hand, with shared prefixes, whose hit ratios are worked out below:
 * blocks split (Mooncake's 512 tokens into two 256-token chunks) and
 * folded (Bailian's 16 tokens, 16 to a chunk), input_length carried as
 * the lookup's seq_len, time order, request ids, and a malformed line
 * named by file:line and skipped with exit 3.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"
#include "json.h"
#include "lct.h"
#include "run.h"

TestSuite(import, .timeout = 120);

#ifdef LCT_HAVE_JANSSON /* lct import is built with jansson */

/* The curve's last point: an unbounded cache's token hit ratio. */
static double unbounded_token_ratio(const char *path)
{
    run t = run_lct(NULL, "mrc", "--prefix", "--json", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    const jv *curve = json_get(j, "curve");
    cr_assert(curve && curve->n > 0);
    double r = json_number(json_get(&curve->items[curve->n - 1],
                                    "token_hit_ratio"));
    json_free(j);
    run_free(&t);
    return r;
}

static jv *sim_json(const char *path)
{
    run t = run_lct(NULL, "sim", "--json", "--capacity", "1000", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    run_free(&t);
    return j;
}

/*
 * Mooncake, 512-token blocks into 256-token chunks:
 *   t 0    ids [1 2], 1024 tokens: chunks 1a 1b 2a 2b, all missed, stored
 *   (a malformed line: skipped)
 *   t 0.5  ids [1], 300 tokens: one whole chunk, 1a: found
 *   t 1    ids [1 3 4], 1100 tokens (of 1536 the ids cover): 4 chunks,
 *          1a 1b found, 3a 3b missed, stored
 * Positions 4 + 1 + 4 = 9, hit 0 + 1 + 2 = 3: 1/3.  In tokens, as
 * LMCache's simulator counts seq_len: 768 hit of 1024 + 300 + 1100.
 */
Test(import, mooncake_splits_blocks_into_chunks)
{
    const char lines[] =
        "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 5, "
        "\"hash_ids\": [1, 2]}\n"
        "{\"timestamp\": \"soon\", \"input_length\": 10, \"hash_ids\": []}\n"
        "{\"timestamp\": 1000, \"input_length\": 1100, \"output_length\": 5, "
        "\"hash_ids\": [1, 3, 4]}\n"
        "{\"timestamp\": 500, \"input_length\": 300, \"output_length\": 5, "
        "\"hash_ids\": [1]}\n";
    char *in = tmp_file_with(lines, sizeof lines - 1);
    char *out = tmp_file_with("", 0);
    unlink(out);
    run t = run_lct(NULL, "import", "mooncake", in, out, NULL);
    cr_expect_eq(t.status, 3, "a line skipped: %s", t.err);
    cr_expect(strstr(t.err, ":2: skipping malformed line: timestamp"),
              "%s", t.err);
    cr_expect(strstr(t.err, "3 requests written"), "%s", t.err);
    run_free(&t);
    cr_expect_eq(unbounded_token_ratio(out), 1.0 / 3);
    jv *j = sim_json(out);
    cr_expect_eq(json_get(j, "total_tokens")->u, 1024 + 300 + 1100);
    cr_expect_eq(json_get(j, "hit_tokens")->u, 768);
    json_free(j);
    /* records: a lookup each, a store (reserve, finish) for the first
     * and last, none for the one that found everything; in time order */
    t = run_lct(NULL, "sql", "--csv", "SELECT op, t_mono, t_wall, "
                "json_array_length(args, '$.keys') AS n, "
                "json_extract(args, '$.external_request_id') AS id, "
                "json_extract(args, '$.seq_len') AS seq FROM records", out,
                NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect_str_eq(t.out,
                     "op,t_mono,t_wall,n,id,seq\r\n"
                     "submit_prefetch_task,0.0,1764600000.0,4,mooncake-1,1024\r\n"
                     "reserve_write,0.0,1764600000.0,4,,\r\n"
                     "finish_write,0.0,1764600000.0,4,,\r\n"
                     "submit_prefetch_task,0.5,1764600000.5,1,mooncake-4,300\r\n"
                     "submit_prefetch_task,1.0,1764600001.0,4,mooncake-3,1100\r\n"
                     "reserve_write,1.0,1764600001.0,2,,\r\n"
                     "finish_write,1.0,1764600001.0,2,,\r\n");
    run_free(&t);
    t = run_lct(NULL, "check", out, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    run_free(&t);
    unlink(out);
    unlink(in);
    free(in);
    free(out);
}

/*
 * Bailian, 16-token blocks folded 16 to a 256-token chunk:
 *   chat 7, t 1.5 s, ids 1..32, 512 tokens: 2 chunks, missed
 *   chat 8, t 2 s, ids 1..16 then 100..116, 520 tokens: its first chunk
 *   is chat 7's (the same 16 ids), its second not: 1 of 2
 * Positions 4, hit 1: 0.25; tokens 256 hit of 1032.
 */
Test(import, bailian_folds_blocks_into_chunks)
{
    char lines[2048];
    int n = snprintf(lines, sizeof lines,
                     "{\"chat_id\": 7, \"parent_chat_id\": -1, \"timestamp\": "
                     "1.5, \"input_length\": 512, \"output_length\": 9, "
                     "\"type\": \"text\", \"turn\": 1, \"hash_ids\": [");
    for (int i = 1; i <= 32; i++)
        n += snprintf(lines + n, sizeof lines - (size_t)n, "%s%d",
                      i > 1 ? ", " : "", i);
    n += snprintf(lines + n, sizeof lines - (size_t)n,
                  "]}\n{\"chat_id\": 8, \"parent_chat_id\": 7, "
                  "\"timestamp\": 2.0, \"input_length\": 520, "
                  "\"output_length\": 9, \"type\": \"text\", \"turn\": 2, "
                  "\"hash_ids\": [");
    for (int i = 1; i <= 33; i++)
        n += snprintf(lines + n, sizeof lines - (size_t)n, "%s%d",
                      i > 1 ? ", " : "", i <= 16 ? i : 83 + i);
    n += snprintf(lines + n, sizeof lines - (size_t)n, "]}\n");
    char *in = tmp_file_with(lines, (size_t)n);
    char *out = tmp_file_with("", 0);
    unlink(out);
    run t = run_lct(NULL, "import", "bailian", "-q", "--model", "m", in, out,
                    NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    run_free(&t);
    cr_expect_eq(unbounded_token_ratio(out), 0.25);
    jv *j = sim_json(out);
    cr_expect_eq(json_get(j, "total_tokens")->u, 1032);
    cr_expect_eq(json_get(j, "hit_tokens")->u, 256);
    json_free(j);
    t = run_lct(NULL, "sql", "--csv", "SELECT t_wall, json_extract(args, "
                "'$.external_request_id') AS id, json_extract(args, "
                "'$.keys[0].v.model_name') AS model FROM records WHERE op = "
                "'submit_prefetch_task'", out, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect_str_eq(t.out, "t_wall,id,model\r\n1764600001.5,7,m\r\n"
                            "1764600002.0,8,m\r\n");
    run_free(&t);
    /* folded to 512-token chunks instead: one chunk each, different */
    unlink(out);
    t = run_lct(NULL, "import", "bailian", "-q", "--chunk-size", "512", in,
                out, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    run_free(&t);
    cr_expect_eq(unbounded_token_ratio(out), 0);
    /* the layout sizes each key: 2 x 80 layers x 256 tokens x 8 heads x
     * 128 x 2 bytes (float16) = 83,886,080 */
    unlink(out);
    t = run_lct(NULL, "import", "bailian", "-q", "--layout",
                "80,8,128,float16", in, out, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "keys", "--csv", out, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, ",83886080\r\n"), "%s", t.out);
    cr_expect_null(strstr(t.out, ",33554432\r\n"), "the default's size");
    run_free(&t);
    static const char *bad[][3] = {{"--chunk-size", "0", "1 to 16777216"},
                                   {"--block-size", "x", "--block-size"},
                                   {"--layout", "32,8", "--layout is"},
                                   {"--layout", "32,8,128,fp4", "--layout is"}};
    for (size_t i = 0; i < 4; i++) {
        t = run_lct(NULL, "import", "bailian", bad[i][0], bad[i][1], in,
                    out, NULL);
        cr_expect_eq(t.status, 2);
        cr_expect(strstr(t.err, bad[i][2]), "%s", t.err);
        run_free(&t);
    }
    t = run_lct(NULL, "import", "mooncake", in, in, NULL);
    cr_expect_eq(t.status, 2, "OUT may not be the input: %s", t.err);
    run_free(&t);
    unlink(out);
    unlink(in);
    free(in);
    free(out);
}

#endif
