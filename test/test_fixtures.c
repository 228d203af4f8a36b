/*
 * test_fixtures.c - every trace in test/fixtures/ (written by the real
 * Python encoder) read through liblct must give what the reference reader
 * gave, as recorded in its .expect.json: the open error, header fields,
 * every record's fields and args (as values), skipped and truncated.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "files.h"
#include "json.h"
#include "lct.h"

typedef struct warnings {
    int malformed, truncated;
} warnings;

static void count_warning(void *ctx, const lct_reader *r,
                          lct_warning_kind kind, uint64_t offset,
                          const char *message)
{
    (void)r;
    (void)offset;
    (void)message;
    warnings *w = ctx;
    if (kind == LCT_WARN_MALFORMED)
        w->malformed++;
    else
        w->truncated++;
}

static void expect_str(lct_str got, const jv *want, const char *what)
{
    cr_assert(want && want->t == J_STR, "%s missing from expectation", what);
    cr_expect(got.len == want->slen && memcmp(got.ptr, want->s, got.len) == 0,
              "%s: got \"%.*s\", want \"%s\"", what, (int)got.len, got.ptr,
              want->s);
}

static void expect_double(double got, const jv *want, const char *what)
{
    cr_assert(want && (want->t == J_FLOAT || want->t == J_INT), "%s", what);
    double w = json_number(want);
    cr_expect(got == w, "%s: got %.17g, want %.17g", what, got, w);
}

static void check_header(const lct_header *h, const jv *want)
{
    const jv *fv = json_get(want, "format_version");
    const jv *sv = json_get(want, "trace_schema_version");
    cr_assert(fv && sv);
    cr_expect_eq(h->format_version, (int64_t)fv->u);
    cr_expect_eq(h->trace_schema_version, (int64_t)sv->u);
    expect_str(h->level, json_get(want, "level"), "level");
    expect_double(h->t_mono_start, json_get(want, "t_mono_start"),
                  "t_mono_start");
    expect_double(h->t_wall_start, json_get(want, "t_wall_start"),
                  "t_wall_start");
    expect_str(h->sm_config_json, json_get(want, "sm_config_json"),
               "sm_config_json");
    expect_str(h->sm_config_digest, json_get(want, "sm_config_digest"),
               "sm_config_digest");
    cr_expect(h->magic.len == 4 && memcmp(h->magic.ptr, "LMCT", 4) == 0);
    const jv *meta = json_get(want, "level_meta");
    if (meta) {
        char why[512];
        cr_expect(value_matches_json(h->level_meta, meta, why, sizeof why),
                  "level_meta: %s", why);
    } else {
        cr_expect_null(h->level_meta.ptr, "level_meta present but not expected");
    }
}

static void check_fixture(const char *name)
{
    char path[4096], expect_path[4096];
    snprintf(path, sizeof path, "%s/%s.lct", LCT_FIXTURES_DIR, name);
    snprintf(expect_path, sizeof expect_path, "%s/%s.expect.json",
             LCT_FIXTURES_DIR, name);
    size_t len;
    char *text = read_whole_file(expect_path, &len);
    cr_assert_not_null(text, "cannot read %s", expect_path);
    jv *want = json_parse(text, len);
    cr_assert_not_null(want, "cannot parse %s", expect_path);

    lct_reader *r;
    lct_error err;
    memset(&err, -1, sizeof err);
    int rc = lct_open(path, 0, &r, &err);
    const jv *open_error = json_get(want, "open_error");
    cr_assert_not_null(open_error);
    if (open_error->t == J_STR) {
        cr_assert_neq(rc, LCT_OK, "%s opened but the reference refused it",
                      name);
        cr_expect_null(r);
        cr_expect_eq(err.code, rc);
        cr_expect(strstr(err.message, open_error->s) != NULL,
                  "message \"%s\" lacks \"%s\"", err.message, open_error->s);
        cr_expect(strstr(err.message, path) != NULL,
                  "message \"%s\" does not name the path", err.message);
        json_free(want);
        free(text);
        return;
    }
    cr_assert_eq(rc, LCT_OK, "%s: %s", name, err.message);
    check_header(lct_reader_header(r), json_get(want, "header"));

    warnings w = {0, 0};
    lct_reader_set_log(r, count_warning, &w);
    const jv *records = json_get(want, "records");
    cr_assert(records && records->t == J_ARR);
    lct_record rec;
    size_t i = 0;
    uint64_t last_offset = 0;
    while (lct_next(r, &rec) == 1) {
        cr_assert_lt(i, records->n, "%s: more records than expected", name);
        const jv *e = &records->items[i];
        char what[64];
        snprintf(what, sizeof what, "record %zu t_mono", i);
        expect_double(rec.t_mono, json_get(e, "t_mono"), what);
        snprintf(what, sizeof what, "record %zu t_wall", i);
        expect_double(rec.t_wall, json_get(e, "t_wall"), what);
        snprintf(what, sizeof what, "record %zu qualname", i);
        expect_str(rec.qualname, json_get(e, "qualname"), what);
        char why[512];
        cr_expect(value_matches_json(rec.args, json_get(e, "args"), why,
                                     sizeof why),
                  "%s record %zu args: %s", name, i, why);
        cr_expect_gt(rec.offset, last_offset, "offsets must increase");
        last_offset = rec.offset;
        i++;
    }
    cr_expect_eq(i, records->n, "%s: %zu records, want %zu", name, i,
                 records->n);

    lct_stats st;
    lct_reader_stats(r, &st);
    const jv *skipped = json_get(want, "skipped");
    const jv *truncated = json_get(want, "truncated");
    cr_expect_eq(st.records, records->n);
    cr_expect_eq(st.skipped, skipped->u, "%s: skipped %llu, want %llu", name,
                 (unsigned long long)st.skipped,
                 (unsigned long long)skipped->u);
    cr_expect_eq(st.truncated, truncated->b, "%s: truncated flag", name);
    cr_expect_eq((uint64_t)w.malformed, st.skipped, "one warning per skip");
    cr_expect_eq(w.truncated, st.truncated ? 1 : 0);
    if (!st.truncated)
        cr_expect_eq(st.bytes_read, st.file_size,
                     "a clean end consumes the whole file");
    else
        cr_expect_eq(st.truncated_offset, st.bytes_read,
                     "the partial frame starts where whole frames end");

    lct_close(r);

    /* LCT_LAZY skips only args validation: on a trace with nothing to
     * skip it must yield the same records. */
    if (skipped->u == 0) {
        cr_assert_eq(lct_open(path, LCT_LAZY | LCT_QUIET, &r, &err), LCT_OK);
        i = 0;
        while (lct_next(r, &rec) == 1) {
            cr_assert_lt(i, records->n);
            char why[512];
            cr_expect(value_matches_json(rec.args,
                                         json_get(&records->items[i], "args"),
                                         why, sizeof why),
                      "lazy %s record %zu: %s", name, i, why);
            i++;
        }
        cr_expect_eq(i, records->n, "lazy %s: record count", name);
        lct_close(r);
    }
    json_free(want);
    free(text);
}

#define FIXTURE(name)                                                          \
    Test(fixtures, name) { check_fixture(#name); }

FIXTURE(bad_magic)
FIXTURE(clean)
FIXTURE(empty)
FIXTURE(events)
FIXTURE(format_v2)
FIXTURE(header_only)
FIXTURE(huge_length)
FIXTURE(malformed_mixed)
FIXTURE(schema_v1_readable)
FIXTURE(schema_v3)
FIXTURE(trunc_header_body)
FIXTURE(trunc_header_prefix)
FIXTURE(trunc_tail_2)
FIXTURE(trunc_tail_74)

/* A fixture added to the folder but not above would go untested. */
Test(fixtures, every_fixture_is_listed)
{
    static const char *listed[] = {
        "bad_magic",   "clean",           "empty",
        "events",      "format_v2",       "header_only",
        "huge_length", "malformed_mixed", "schema_v1_readable",
        "schema_v3",   "trunc_header_body", "trunc_header_prefix",
        "trunc_tail_2", "trunc_tail_74"};
    DIR *d = opendir(LCT_FIXTURES_DIR);
    cr_assert_not_null(d);
    struct dirent *de;
    int seen = 0;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 5 || strcmp(de->d_name + n - 4, ".lct") != 0)
            continue;
        bool found = false;
        for (size_t i = 0; i < sizeof listed / sizeof *listed; i++)
            if (strlen(listed[i]) == n - 4 &&
                strncmp(listed[i], de->d_name, n - 4) == 0)
                found = true;
        cr_expect(found, "fixture %s is not tested", de->d_name);
        seen++;
    }
    closedir(d);
    cr_expect_eq(seen, (int)(sizeof listed / sizeof *listed));
}

/* The shipped sample is made by examples/mksample; it must read cleanly. */
Test(sample, shipped_sample_reads_cleanly)
{
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open(LCT_SAMPLE, 0, &r, &err), LCT_OK, "%s", err.message);
    lct_record rec;
    uint64_t n = 0;
    double last = -1;
    while (lct_next(r, &rec) == 1) {
        cr_expect_geq(rec.t_mono, last, "t_mono goes forward in the sample");
        last = rec.t_mono;
        lct_value keys;
        cr_expect_eq(lct_map_find(rec.args, "keys", &keys), LCT_OK);
        n++;
    }
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect_eq(n, 3000);
    cr_expect_eq(st.skipped, 0);
    cr_expect(!st.truncated);
    lct_close(r);
}
