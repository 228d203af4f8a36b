/*
 * cmd_info.c - `lct info`: the summary `lmcache trace info` prints, byte
 * for byte (docs/format.md, "lct info"), or the same facts as one JSON
 * object with --json.  The events block is events.c's.
 */
#include "info.h"
#include "l2_level.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct meta_pair {
    lct_str key;
    lct_value val;
} meta_pair;

static int meta_cmp(const void *a, const void *b)
{
    const meta_pair *x = a, *y = b;
    return lct_str_cmp(x->key, y->key);
}

/* level_meta's str keys, sorted; a repeated key keeps its last value. */
static meta_pair *meta_sorted(lct_value meta, size_t *n)
{
    lct_iter it;
    *n = 0;
    if (!meta.ptr || lct_map_iter_init(meta, &it) != LCT_OK)
        return NULL;
    meta_pair *pairs = reallocarray(NULL, it.count ? it.count : 1,
                                    sizeof *pairs);
    if (!pairs)
        return NULL;
    lct_value k, v;
    while (lct_map_iter_next(&it, &k, &v) == 1) {
        lct_str ks;
        if (lct_value_get_str(k, &ks) != LCT_OK)
            continue;
        size_t i;
        for (i = 0; i < *n; i++)
            if (pairs[i].key.len == ks.len &&
                memcmp(pairs[i].key.ptr, ks.ptr, ks.len) == 0)
                break;
        pairs[i].key = ks;
        pairs[i].val = v;
        if (i == *n)
            (*n)++;
    }
    qsort(pairs, *n, sizeof *pairs, meta_cmp);
    return pairs;
}

static void print_text(const char *path, const lct_header *h,
                       struct qtable *ops, uint64_t total, double duration,
                       events *ev, const tool_l2 *l2)
{
    fputs("Trace file: ", stdout);
    tool_put_vis(stdout, path, strlen(path));
    fputc('\n', stdout);
    info_label("  ", "level", 5);
    tool_put_vis(stdout, h->level.ptr, h->level.len);
    fputc('\n', stdout);
    info_row("  ", "format_version", "%" PRId64, h->format_version);
    info_row("  ", "trace_schema_version", "%" PRId64, h->trace_schema_version);
    info_row("  ", "duration", "%.3fs", duration);
    info_label("  ", "sm_config_digest", 16);
    if (h->sm_config_digest.len)
        tool_put_vis(stdout, h->sm_config_digest.ptr, h->sm_config_digest.len);
    else
        fputs("(none)", stdout);
    fputc('\n', stdout);
    size_t nmeta;
    meta_pair *meta = meta_sorted(h->level_meta, &nmeta);
    for (size_t i = 0; i < nmeta; i++) {
        info_label("  ", meta[i].key.ptr, meta[i].key.len);
        tool_put_py_str(stdout, meta[i].val);
        fputc('\n', stdout);
    }
    free(meta);
    info_row("  ", "total_records", "%" PRIu64, total);
    if (RB_EMPTY(ops)) {
        fputs("  ops: (none)\n", stdout);
    } else {
        fputs("  ops:\n", stdout);
        qentry *e;
        RB_FOREACH(e, qtable, ops) {
            fputs("    ", stdout);
            tool_put_vis(stdout, e->qualname.ptr, e->qualname.len);
            printf(": %" PRIu64 "\n", e->count);
        }
    }
    if (ev)
        events_print_text(ev);
    if (l2)
        tool_l2_print_info(l2);
}

/* MARK: JSON */

static void print_json(const char *path, const lct_header *h,
                       struct qtable *ops, const lct_stats *st,
                       double duration, events *ev, const tool_l2 *l2)
{
    fputs("{\"file\":", stdout);
    tool_put_json_str(path, strlen(path));
    fputs(",\"header\":", stdout);
    lct_header_write_json(h, tool_stdout_write, NULL);
    fputs(",\"duration\":", stdout);
    tool_put_json_double(duration);
    printf(",\"total_records\":%" PRIu64 ",\"ops\":{", st->records);
    qentry *e;
    bool first = true;
    RB_FOREACH(e, qtable, ops) {
        fputs(first ? "" : ",", stdout);
        first = false;
        tool_put_json_str(e->qualname.ptr, e->qualname.len);
        printf(":%" PRIu64, e->count);
    }
    printf("},\"skipped\":%" PRIu64 ",\"truncated\":%s", st->skipped,
           st->truncated ? "true" : "false");
    if (st->truncated)
        printf(",\"truncated_offset\":%" PRIu64, st->truncated_offset);
    if (ev)
        events_print_json(ev);
    if (l2)
        tool_l2_print_info_json(l2);
    fputs("}\n", stdout);
}

/* MARK: CSV */

/* One row of the facts that every trace has (level_meta's keys differ by
 * level, and the per-qualname counts are lct stat --csv's table). */
static void print_csv(const char *path, const lct_header *h,
                      const lct_stats *st, double duration)
{
    fputs("file,level,format_version,trace_schema_version,duration,"
          "sm_config_digest,total_records,skipped,truncated,"
          "truncated_offset\r\n", stdout);
    tool_put_csv(stdout, path, strlen(path));
    fputc(',', stdout);
    tool_put_csv(stdout, h->level.ptr, h->level.len);
    printf(",%" PRId64 ",%" PRId64 ",", h->format_version,
           h->trace_schema_version);
    char buf[LCT_DOUBLE_BUFSIZE];
    fwrite(buf, 1, lct_json_format_double(duration, buf), stdout);
    fputc(',', stdout);
    tool_put_csv(stdout, h->sm_config_digest.ptr, h->sm_config_digest.len);
    printf(",%" PRIu64 ",%" PRIu64 ",%s,", st->records, st->skipped,
           st->truncated ? "true" : "false");
    if (st->truncated)
        printf("%" PRIu64, st->truncated_offset);
    fputs("\r\n", stdout);
}

/* MARK: command */

/* Events-level and L2-level traces are read by one thread, into these. */
static events *events_sink;
static tool_l2 *l2_sink;

static int info_record(void *state, const lct_record *rec)
{
    if (tool_tally_counts(state, rec) != 0)
        return 1;
    if (events_sink) {
        events_add(events_sink, rec);
        if (events_sink->failed)
            return 1;
    }
    if (l2_sink) {
        tool_l2_add(l2_sink, rec);
        if (l2_sink->failed)
            return 1;
    }
    return 0;
}

static void help(void)
{
    printf("usage: lct info [--json | --csv] [-q] [-j N] FILE\n"
           "\n"
           "Summarise a trace exactly as 'lmcache trace info' does: header\n"
           "fields, duration (largest t_mono), records per qualname, and for\n"
           "events-level traces an events block.  FILE may be -.\n"
           "\n"
           "  --json     the same facts, plus skipped and truncated, as JSON\n"
           "  --csv      one CSV row: file, level, format_version,\n"
           "             trace_schema_version, duration, sm_config_digest,\n"
           "             total_records, skipped, truncated, truncated_offset\n"
           "             (per-qualname counts: lct stat --csv)\n"
           "  -q         no warnings on stderr\n"
           "  --mmap, --stream how to read a file (default: the faster here)\n"
           "  --max-frame SIZE the longest frame a pipe may hold (256M)\n"
           "  -j N       threads (default: one per usable CPU for files over 64 MiB;\n"
           "             events-level traces are always read by one)\n"
           "  -h, --help this text\n");
}

int cmd_info(int argc, char **argv)
{
    static const tool_cmd cmd = {.name = "info",
                                 .shared = TOOL_Q | TOOL_J | TOOL_JSON |
                                           TOOL_CSV | TOOL_SRC,
                                 .help = help};
    tool_args a;
    lct_reader *r = tool_start(&cmd, argc, argv, 0, &a);
    if (!r)
        return EXIT_REFUSED;
    const lct_header *h = lct_reader_header(r);
    bool is_events = lct_str_eq(h->level, "events");
    bool is_l2 = lct_str_eq(h->level, "l2");
    events ev;
    events_init(&ev);
    tool_l2 l2;
    tool_l2_init(&l2);
    /* The events block's tables do not merge, and an L2 completion pairs
     * with the submission before it: one thread reads those. */
    events_sink = is_events ? &ev : NULL;
    l2_sink = is_l2 ? &l2 : NULL;
    if (is_events || is_l2)
        a.jobs = 1;
    tool_tally t;
    lct_stats st;
    tool_inputs in;
    tool_inputs_one(&in, r);
    bool ok = tool_tally_run(&in, &a, sizeof t, info_record, false, &t, &st);
    if (ok && is_l2)
        tool_l2_finish(&l2);
    if (ok && a.json)
        print_json(a.file, h, &t.ops, &st, t.duration, events_sink, l2_sink);
    else if (ok && a.csv)
        print_csv(a.file, h, &st, t.duration);
    else if (ok)
        print_text(a.file, h, &t.ops, st.records, t.duration, events_sink,
                   l2_sink);
    /* Output refers to the header's views: finish it before they go. */
    tool_finish_stdout();
    tool_tally_free(&t);
    events_free(&ev);
    tool_l2_free(&l2);
    lct_close(r);
    return ok ? tool_exit_for(&st) : EXIT_REFUSED;
}
