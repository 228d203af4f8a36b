/*
 * cmd_diff.c - `lct diff A B`: where two runs differ.  The two traces
 * are read side by side, once: their headers (level, versions, config
 * digest), calls per qualname with their rates, the keys each named
 * (A only, B only, both, by obj_id), the first record at which the call
 * sequences part (by qualname and keys, in order), and each one's LRU
 * hit-ratio curve (per key, lct mrc's default) at the same capacities.
 * Exit 0 when they are the same in all these terms, 1 when they differ,
 * 2 when a trace could not be read or the usage was wrong (diff(1)'s).
 */
#include "tool.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One side: its reader and what was gathered from it. */
typedef struct side {
    const char *path;
    lct_reader *r;
    struct qtable ops;
    qcache recent;
    tool_idset keys;
    lct_refs *refs;
    uint64_t records;
    double duration;
    lct_mrc *mrc;
} side;

/* The record's keys: into the side's set and stream (reads and writes
 * as lct keys takes them), and their tuple's id. */
static bool take_keys(side *s, const lct_record *rec, uint64_t *tuple)
{
    lct_call call = lct_call_of(rec->qualname);
    bool read = call == LCT_CALL_SUBMIT_PREFETCH,
         write = call == LCT_CALL_RESERVE_WRITE;
    lct_key_iter it;
    lct_object_key k;
    uint64_t bytes;
    *tuple = 0x9e3779b97f4a7c15u;
    if (lct_key_iter_init(rec, &it, NULL) != LCT_OK)
        return true; /* a call whose keys cannot be read: its qualname */
    while (lct_key_iter_next(&it, &k, &bytes, NULL) == 1) {
        uint64_t id = lct_object_key_hash(&k);
        *tuple = (*tuple ^ id) * 0xff51afd7ed558ccdu;
        *tuple ^= *tuple >> 32;
        if (tool_idset_add(&s->keys, id) < 0 ||
            ((read || write) &&
             lct_refs_add(s->refs, id, bytes, rec->t_mono, read) != LCT_OK))
            return false;
    }
    return true;
}

static bool take(side *s, const lct_record *rec, uint64_t *tuple)
{
    s->records++;
    if (rec->t_mono > s->duration)
        s->duration = rec->t_mono;
    return qtable_add(&s->ops, &s->recent, rec, false) &&
           take_keys(s, rec, tuple);
}

/* Where the call sequences part: the record number, and each side's
 * record there (has false past its end). */
typedef struct divergence {
    bool found;
    uint64_t idx;
    bool has[2];
    uint64_t offset[2];
    char op[2][96];
} divergence;

static void note_divergence(divergence *d, uint64_t idx, const side *s,
                            const lct_record *rec, const bool *has)
{
    d->found = true;
    d->idx = idx;
    for (int i = 0; i < 2; i++) {
        d->has[i] = has[i];
        if (!has[i])
            continue;
        lct_str op = lct_str_after_last(rec[i].qualname, '.');
        d->offset[i] = rec[i].offset;
        snprintf(d->op[i], sizeof d->op[i], "%.*s",
                 (int)(op.len < 90 ? op.len : 90), op.ptr);
    }
    (void)s;
}

/* Both traces side by side, once. */
static bool walk(side *s, divergence *d)
{
    lct_record rec[2];
    bool has[2] = {true, true};
    for (uint64_t idx = 0;; idx++) {
        uint64_t tuple[2] = {0, 0};
        for (int i = 0; i < 2; i++) {
            if (!has[i])
                continue;
            int rc = lct_next(s[i].r, &rec[i]);
            if (rc < 0)
                return false;
            has[i] = rc == 1;
            if (has[i] && !take(&s[i], &rec[i], &tuple[i])) {
                fprintf(stderr, "%s diff: out of memory\n", tool_name);
                return false;
            }
        }
        if (!has[0] && !has[1])
            return true;
        if (!d->found &&
            (has[0] != has[1] || tuple[0] != tuple[1] ||
             lct_str_cmp(rec[0].qualname, rec[1].qualname) != 0))
            note_divergence(d, idx, s, rec, has);
    }
}

/* MARK: what differs */

typedef struct verdict {
    bool header, calls, keys, order, curve;
} verdict;

static bool str_differs(lct_str a, lct_str b)
{
    return a.len != b.len || (a.len && memcmp(a.ptr, b.ptr, a.len) != 0);
}

static void header_row(const char *name, lct_str a, lct_str b, bool json,
                       bool *first)
{
    if (json) {
        printf("%s{\"field\":\"%s\",\"a\":", *first ? "" : ",", name);
        tool_put_json_str(a.ptr, a.len);
        fputs(",\"b\":", stdout);
        tool_put_json_str(b.ptr, b.len);
        putchar('}');
    } else {
        printf("  %-22s ", name);
        tool_put_vis(stdout, a.ptr, a.len < 40 ? a.len : 40);
        fputs("  |  ", stdout);
        tool_put_vis(stdout, b.ptr, b.len < 40 ? b.len : 40);
        putchar('\n');
    }
    *first = false;
}

static bool headers(const side *s, bool json)
{
    const lct_header *a = lct_reader_header(s[0].r),
                     *b = lct_reader_header(s[1].r);
    char av[2][32], bv[2][32];
    snprintf(av[0], 32, "%" PRId64, a->format_version);
    snprintf(bv[0], 32, "%" PRId64, b->format_version);
    snprintf(av[1], 32, "%" PRId64, a->trace_schema_version);
    snprintf(bv[1], 32, "%" PRId64, b->trace_schema_version);
    struct {
        const char *name;
        lct_str a, b;
    } f[] = {{"level", a->level, b->level},
             {"format_version", {av[0], strlen(av[0])},
              {bv[0], strlen(bv[0])}},
             {"trace_schema_version", {av[1], strlen(av[1])},
              {bv[1], strlen(bv[1])}},
             {"sm_config_digest", a->sm_config_digest, b->sm_config_digest},
             {"sm_config_json", a->sm_config_json, b->sm_config_json}};
    bool differs = false, first = true;
    fputs(json ? "\"headers\":[" : "headers (A | B), where they differ:\n",
          stdout);
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (str_differs(f[i].a, f[i].b)) {
            header_row(f[i].name, f[i].a, f[i].b, json, &first);
            differs = true;
        }
    if (!differs && !json)
        puts("  none");
    fputs(json ? "]" : "", stdout);
    return differs;
}

static uint64_t count_of(const struct qtable *t, lct_str q)
{
    qentry key = {.qualname = q};
    qentry *e = RB_FIND(qtable, (struct qtable *)t, &key);
    return e ? e->count : 0;
}

static void call_row(lct_str q, uint64_t a, uint64_t b, const side *s,
                     bool json, bool first)
{
    double ra = s[0].duration > 0 ? (double)a / s[0].duration : 0,
           rb = s[1].duration > 0 ? (double)b / s[1].duration : 0;
    lct_str op = lct_str_after_last(q, '.');
    if (json) {
        fputs(first ? "{\"qualname\":" : ",{\"qualname\":", stdout);
        tool_put_json_str(q.ptr, q.len);
        printf(",\"a\":%" PRIu64 ",\"b\":%" PRIu64 ",\"delta\":%" PRId64
               ",\"a_per_s\":", a, b, (int64_t)(b - a));
        tool_put_json_double(ra);
        fputs(",\"b_per_s\":", stdout);
        tool_put_json_double(rb);
        putchar('}');
        return;
    }
    printf("  %10" PRIu64 " %10" PRIu64 " %+10" PRId64 " %10.1f %10.1f  ",
           a, b, (int64_t)(b - a), ra, rb);
    tool_put_vis(stdout, op.ptr, op.len);
    putchar('\n');
}

/* Every qualname of either side, A's first. */
static bool calls(const side *s, bool json)
{
    bool differs = false, first = true;
    fputs(json ? ",\"calls\":[" : "\ncalls:\n           A          B      delta"
                                  "      A / s      B / s  op\n",
          stdout);
    for (int i = 0; i < 2; i++) {
        qentry *e;
        RB_FOREACH(e, qtable, (struct qtable *)&s[i].ops) {
            if (i == 1 && count_of(&s[0].ops, e->qualname))
                continue; /* shown with A's */
            uint64_t a = i ? 0 : e->count,
                     b = count_of(&s[1].ops, e->qualname);
            if (i)
                b = e->count;
            differs |= a != b;
            call_row(e->qualname, a, b, s, json, first);
            first = false;
        }
    }
    fputs(json ? "]" : "", stdout);
    return differs;
}

static bool keys(const side *s, bool json)
{
    uint64_t both = tool_idset_common(&s[0].keys, &s[1].keys);
    uint64_t a_only = s[0].keys.n - both, b_only = s[1].keys.n - both;
    if (json)
        printf(",\"keys\":{\"a_only\":%" PRIu64 ",\"b_only\":%" PRIu64
               ",\"both\":%" PRIu64 "}", a_only, b_only, both);
    else
        printf("\nkeys (by obj_id): %" PRIu64 " in A only, %" PRIu64
               " in B only, %" PRIu64 " in both\n", a_only, b_only, both);
    return a_only || b_only;
}

static void order(const divergence *d, bool json)
{
    if (json) {
        fputs(",\"first_divergence\":", stdout);
        if (!d->found) {
            fputs("null", stdout);
            return;
        }
        printf("{\"record\":%" PRIu64, d->idx);
        for (int i = 0; i < 2; i++) {
            printf(",\"%s\":", i ? "b" : "a");
            if (d->has[i]) {
                printf("{\"offset\":%" PRIu64 ",\"op\":", d->offset[i]);
                tool_put_json_str(d->op[i], strlen(d->op[i]));
                putchar('}');
            } else {
                fputs("null", stdout);
            }
        }
        putchar('}');
        return;
    }
    if (!d->found) {
        puts("\ncall sequences: the same, record for record");
        return;
    }
    printf("\ncall sequences part at record %" PRIu64 ":", d->idx);
    for (int i = 0; i < 2; i++) {
        if (d->has[i])
            printf(" %s %s at offset %" PRIu64 "%s", i ? "B" : "A", d->op[i],
                   d->offset[i], i ? "" : ",");
        else
            printf(" %s has ended%s", i ? "B" : "A", i ? "" : ",");
    }
    puts(" (by qualname and keys)");
}

/* Both curves at the capacities of the one that reaches further. */
static bool curves(side *s, bool json)
{
    lct_mrc_curve c[2] = {{0}};
    for (int i = 0; i < 2; i++)
        if (lct_mrc_compute(s[i].refs, 1, &s[i].mrc, NULL) != LCT_OK ||
            lct_mrc_curve_make(&s[i].mrc, 1, &c[i], NULL) != LCT_OK)
            return true; /* said below as a difference: none to compare */
    const lct_mrc_curve *at = c[1].n > c[0].n ? &c[1] : &c[0];
    bool differs = false;
    fputs(json ? ",\"curve\":[" : "\nLRU hit ratio (per key):\n        keys"
                                  "          A          B      delta\n",
          stdout);
    for (size_t i = 0; i < at->n; i++) {
        double a = lct_mrc_hit_ratio(s[0].mrc, at->keys[i]),
               b = lct_mrc_hit_ratio(s[1].mrc, at->keys[i]);
        differs |= a != b;
        if (json) {
            printf("%s{\"keys\":%" PRIu64 ",\"a\":", i ? "," : "",
                   at->keys[i]);
            tool_put_json_double(a);
            fputs(",\"b\":", stdout);
            tool_put_json_double(b);
            putchar('}');
        } else {
            printf("%12" PRIu64 " %10.4f %10.4f %+10.4f\n", at->keys[i], a,
                   b, b - a);
        }
    }
    fputs(json ? "]" : "", stdout);
    for (int i = 0; i < 2; i++)
        lct_mrc_curve_free(&c[i]);
    return differs;
}

static void report(side *s, const divergence *d, bool json, verdict *v)
{
    if (json)
        putchar('{');
    v->header = headers(s, json);
    v->calls = calls(s, json);
    v->keys = keys(s, json);
    order(d, json);
    v->order = d->found;
    v->curve = curves(s, json);
    bool same = !(v->header || v->calls || v->keys || v->order || v->curve);
    if (json) {
        printf(",\"same\":%s}\n", same ? "true" : "false");
        return;
    }
    if (same)
        puts("\nthe same in these terms");
    else
        printf("\ndiffer in:%s%s%s%s%s\n", v->header ? " headers" : "",
               v->calls ? " calls" : "", v->keys ? " keys" : "",
               v->order ? " order" : "", v->curve ? " curve" : "");
}

static void help(void)
{
    printf("usage: lct diff [-q] [--json] A B\n"
           "\n"
           "Where two runs differ, read side by side once: the headers'\n"
           "level, versions and config (where they differ); calls per\n"
           "qualname in each, with the delta and the rates; the keys (by\n"
           "obj_id) in A only, in B only and in both; the first record at\n"
           "which the call sequences part, by qualname and keys; and each\n"
           "one's LRU hit-ratio curve per key at the same capacities, with\n"
           "the difference.  Exit 0 when the two are the same in all these\n"
           "terms, 1 when they differ, 2 when a trace cannot be read or the\n"
           "usage is wrong.\n"
           "\n"
           "  --json       one JSON object\n"
           TOOL_HELP_READING);
}

int cmd_diff(int argc, char **argv)
{
    tool_cmd cmd = {.name = "diff", .shared = TOOL_Q | TOOL_JSON | TOOL_SRC,
                    .help = help, .min_operands = 2};
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    if (a.noperands != 2)
        tool_usage_error("diff", "two traces to compare, A and B");
    side s[2] = {{.path = a.operands[0]}, {.path = a.operands[1]}};
    bool ok = true;
    for (int i = 0; ok && i < 2; i++) {
        lct_error err;
        RB_INIT(&s[i].ops);
        ok = lct_open(s[i].path, tool_source_flags(&a) | LCT_KEYS, &s[i].r,
                      &err) == LCT_OK;
        if (!ok)
            fprintf(stderr, "%s: %s\n", tool_name, err.message);
        else
            lct_reader_set_log(s[i].r, a.quiet ? tool_log_quiet : tool_log,
                               NULL);
        ok = ok && lct_refs_new(&s[i].refs) == LCT_OK;
    }
    divergence d = {0};
    verdict v = {0};
    ok = ok && walk(s, &d);
    if (ok)
        report(s, &d, a.json, &v);
    /* a damaged input's answer covers what could be read: trouble, as
     * diff(1) counts it, and lct's damaged status; one that shrank while
     * read, trouble alone */
    int whole = EXIT_OK;
    for (int i = 0; ok && i < 2; i++) {
        lct_stats st;
        lct_reader_stats(s[i].r, &st);
        int rc = tool_exit_for(&st);
        whole = rc == EXIT_REFUSED || whole == EXIT_REFUSED ? EXIT_REFUSED
                : rc != EXIT_OK                             ? rc
                                                            : whole;
    }
    for (int i = 0; i < 2; i++) {
        lct_close(s[i].r);
        qtable_free(&s[i].ops);
        tool_idset_free(&s[i].keys);
        lct_refs_free(s[i].refs);
        lct_mrc_free(s[i].mrc);
    }
    if (!ok || whole == EXIT_REFUSED)
        return 2;
    if (whole == EXIT_DAMAGED)
        return EXIT_DAMAGED;
    return v.header || v.calls || v.keys || v.order || v.curve ? 1 : 0;
}
