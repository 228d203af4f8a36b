/*
 * test_cli_gen.c - the lct tool run as a program: gen: generated traces
 * read back cleanly, their key fields one by one, request specs, the
 * llama shape's keys.  What every test_cli_*.c shares (running the tool,
 * the fixtures, JSON equality) is in test/support/cli.c.
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


/* MARK: gen */

Test(cli, gen_writes_a_trace_that_reads_back_cleanly)
{
    char *a = tmp_file_with("", 0), *b = tmp_file_with("", 0),
         *c = tmp_file_with("", 0);
    run r = run_lct(NULL, "gen", "-n", "500", "--seed", "7", a, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = run_lct(NULL, "check", "--json", a, NULL);
    cr_expect_eq(r.status, 0, "%s", r.out);
    jv *got = json_parse(r.out, r.outlen);
    cr_assert_not_null(got);
    cr_expect_eq(json_get(got, "records")->u, 500);
    json_free(got);
    run_free(&r);
    r = run_lct(NULL, "gen", "-n", "500", "--seed", "7", b, NULL);
    run_free(&r);
    r = run_lct(NULL, "gen", "-n", "500", "--seed", "8", c, NULL);
    run_free(&r);
    size_t la, lb, lc;
    char *da = read_whole_file(a, &la), *db = read_whole_file(b, &lb),
         *dc = read_whole_file(c, &lc);
    cr_expect(la == lb && !memcmp(da, db, la), "same seed, same bytes");
    cr_expect(la != lc || memcmp(da, dc, la), "another seed, another trace");
    r = run_lct(NULL, "gen", a, NULL);
    cr_expect_eq(r.status, 2, "-n is required");
    run_free(&r);
    free(da);
    free(db);
    free(dc);
    unlink(a);
    unlink(b);
    unlink(c);
    free(a);
    free(b);
    free(c);
}

/* gen's key fields one by one, over a shape: the model name (31 bytes, a
 * fixstr; a long one, a str16), a salt, kv ranks, groups (0 leaves the
 * field out). */
Test(cli, gen_key_fields_one_by_one)
{
    char *path = tmp_file_with("", 0);
    run g = run_lct(NULL, "gen", "-n", "60", "--shape", "llama", "--model",
                    "meta-llama/Llama-3.1-8B-Instruc", "--kv-ranks", "3",
                    "--cache-salt", "t7", path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    run k = run_lct(NULL, "keys", "--csv", path, NULL);
    cr_expect(strstr(k.out, ",meta-llama/Llama-3.1-8B-Instruc,2,"),
              "kv rank 2 of 3: %.300s", k.out);
    cr_expect(!strstr(k.out, "-Instruc,3,"), "no kv rank 3 of 3");
    cr_expect(strstr(k.out, ",2,t7,"), "llama's groups stay, the salt is t7");
    run_free(&k);
    char model[301];
    memset(model, 'm', 300);
    model[300] = '\0';
    g = run_lct(NULL, "gen", "-n", "20", "--model", model, "--groups", "0",
                path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    k = run_lct(NULL, "keys", "--csv", path, NULL);
    cr_expect(strstr(k.out, model), "the 300-byte model name");
    cr_expect(strstr(k.out, ",0,,"), "no group (0), no salt");
    run_free(&k);
    run bad = run_lct(NULL, "gen", "-n", "5", "--kv-ranks", "0", path, NULL);
    cr_expect_eq(bad.status, 2);
    cr_expect(strstr(bad.err, "--kv-ranks is 1 to 1024"), "%s", bad.err);
    run_free(&bad);
    unlink(path);
    free(path);
}

/* gen --spec writes prefetches as newer LMCache records them: a
 * PrefetchRequestSpec with attn_desc and per-group layouts, whose keys
 * and sizes read as the flat form's do (the same seed, the same keys). */
Test(cli, gen_spec_writes_prefetches_as_request_specs)
{
    char *flat = tmp_file_with("", 0), *spec = tmp_file_with("", 0);
    run g = run_lct(NULL, "gen", "-n", "80", "--shape", "llama", flat, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    g = run_lct(NULL, "gen", "-n", "80", "--shape", "llama", "--spec", spec,
                NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    run d = run_lct(NULL, "dump", "--qualname", "*submit_prefetch_task",
                    spec, NULL);
    cr_expect(strstr(d.out, "\"spec\":{\"__t__\":\"PrefetchRequestSpec\""),
              "%.400s", d.out);
    cr_expect(strstr(d.out, "\"world_size\":8"), "%.400s", d.out);
    cr_expect(strstr(d.out, "\"group_layout_descs\":{\"0\":"), "layouts");
    run_free(&d);
    run a = run_lct(NULL, "keys", "--csv", flat, NULL);
    run b = run_lct(NULL, "keys", "--csv", spec, NULL);
    cr_expect_eq(a.status, 0);
    cr_expect_eq(b.status, 0);
    cr_expect_str_eq(b.out, a.out, "the spec's keys and sizes are the flat form's");
    run_free(&a);
    run_free(&b);
    unlink(flat);
    unlink(spec);
    free(flat);
    free(spec);
}

/* gen --shape llama writes keys as a multi-tenant server records them: a
 * 32-byte model name, kv ranks past 1, object groups, a cache_salt. */
Test(cli, gen_shape_llama_writes_the_keys_users_record)
{
    char *path = tmp_file_with("", 0);
    run g = run_lct(NULL, "gen", "-n", "50", "--shape", "llama", path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    run k = run_lct(NULL, "keys", "--csv", path, NULL);
    cr_expect_eq(k.status, 0, "%s", k.err);
    cr_expect(strstr(k.out, ",meta-llama/Llama-3.1-8B-Instruct,7,"),
              "kv rank 7: %.300s", k.out);
    cr_expect(strstr(k.out, ",2,tenant-42,"), "group 2 and a salt");
    run_free(&k);
    run bad = run_lct(NULL, "gen", "-n", "5", "--shape", "mistral", path,
                      NULL);
    cr_expect_eq(bad.status, 2);
    cr_expect(strstr(bad.err, "--shape is qwen or llama"), "%s", bad.err);
    run_free(&bad);
    unlink(path);
    free(path);
}
