/*
 * cmd_info.c - `lct info`: the summary `lmcache trace info` prints, byte
 * for byte (FORMAT.md, "lmcache trace info output"), or the same facts as
 * one JSON object with --json.
 */
#include "tool.h"

#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_WIDTH 28

/* MARK: events-level summary */

/* One row of an events table; keys are copies (a streamed reader's views
 * die at the next record), stored after the entry. */
typedef struct ev_entry {
    RB_ENTRY(ev_entry) link;
    lct_str k[3];
    bool shared;
    uint64_t count;
    int64_t *incarnations;
    size_t ninc, capinc;
} ev_entry;

int ev_cmp(ev_entry *a, ev_entry *b);
int ev_cmp(ev_entry *a, ev_entry *b)
{
    for (int i = 0; i < 3; i++) {
        size_t n = a->k[i].len < b->k[i].len ? a->k[i].len : b->k[i].len;
        int c = n ? memcmp(a->k[i].ptr, b->k[i].ptr, n) : 0;
        if (c)
            return c;
        if (a->k[i].len != b->k[i].len)
            return a->k[i].len < b->k[i].len ? -1 : 1;
    }
    return (int)a->shared - (int)b->shared; /* local before shared */
}

RB_HEAD(ev_tree, ev_entry);
RB_PROTOTYPE(ev_tree, ev_entry, link, ev_cmp);
RB_GENERATE(ev_tree, ev_entry, link, ev_cmp)

typedef struct events {
    struct ev_tree instances; /* k[0] instance_id; incarnations */
    struct ev_tree batches;   /* k[0..2] type, tier, backend; shared */
    struct ev_tree entries;   /* k[0] event_type; count = entries */
    struct ev_tree lifecycle; /* k[0] phase */
    uint64_t store_bytes;
    uint64_t entries_with_tokens;
    bool failed; /* out of memory */
} events;

static ev_entry *ev_get(events *ev, struct ev_tree *t, const ev_entry *key)
{
    ev_entry *e = RB_FIND(ev_tree, t, (ev_entry *)key);
    if (e)
        return e;
    size_t bytes = key->k[0].len + key->k[1].len + key->k[2].len;
    e = calloc(1, sizeof *e + bytes);
    if (!e) {
        ev->failed = true;
        return NULL;
    }
    char *copy = (char *)(e + 1);
    for (int i = 0; i < 3; i++) {
        if (key->k[i].len)
            memcpy(copy, key->k[i].ptr, key->k[i].len);
        e->k[i] = (lct_str){copy, key->k[i].len};
        copy += key->k[i].len;
    }
    e->shared = key->shared;
    RB_INSERT(ev_tree, t, e);
    return e;
}

static void ev_free(struct ev_tree *t)
{
    ev_entry *e, *next;
    RB_FOREACH_SAFE(e, ev_tree, t, next) {
        RB_REMOVE(ev_tree, t, e);
        free(e->incarnations);
        free(e);
    }
}

static lct_str lit(const char *s)
{
    return (lct_str){s, strlen(s)};
}

/* args[key] as a str view, or the default when missing or not a str. */
static lct_str str_arg(lct_value args, const char *key, const char *dflt)
{
    lct_value v;
    lct_str s;
    if (lct_map_find(args, key, &v) == LCT_OK &&
        lct_value_get_str(v, &s) == LCT_OK)
        return s;
    return lit(dflt);
}

static int64_t int_arg(lct_value map, const char *key)
{
    lct_value v;
    int64_t i;
    if (lct_map_find(map, key, &v) == LCT_OK &&
        lct_value_get_int64(v, &i) == LCT_OK)
        return i;
    return 0;
}

static void add_incarnation(events *ev, ev_entry *e, int64_t inc)
{
    for (size_t i = 0; i < e->ninc; i++)
        if (e->incarnations[i] == inc)
            return;
    if (e->ninc == e->capinc) {
        size_t cap = e->capinc ? e->capinc * 2 : 4;
        int64_t *p = reallocarray(e->incarnations, cap, sizeof *p);
        if (!p) {
            ev->failed = true;
            return;
        }
        e->incarnations = p;
        e->capinc = cap;
    }
    e->incarnations[e->ninc++] = inc;
}

static void events_add(events *ev, const lct_record *rec)
{
    lct_value args = rec->args;
    ev_entry key;
    memset(&key, 0, sizeof key);
    if (lct_str_eq(rec->qualname, "events.lifecycle")) {
        key.k[0] = str_arg(args, "phase", "?");
        ev_entry *e = ev_get(ev, &ev->lifecycle, &key);
        if (e)
            e->count++;
        return;
    }
    if (!lct_str_eq(rec->qualname, "events.batch"))
        return;

    key.k[0] = str_arg(args, "instance_id", "?");
    ev_entry *inst = ev_get(ev, &ev->instances, &key);
    if (inst)
        add_incarnation(ev, inst, int_arg(args, "incarnation"));

    lct_str type = str_arg(args, "event_type", "?");
    key.k[0] = type;
    key.k[1] = str_arg(args, "tier", "?");
    key.k[2] = str_arg(args, "backend", "");
    lct_value v;
    bool shared = false;
    if (lct_map_find(args, "shared", &v) == LCT_OK)
        lct_value_get_bool(v, &shared);
    key.shared = shared;
    ev_entry *batch = ev_get(ev, &ev->batches, &key);
    if (batch)
        batch->count++;

    memset(&key, 0, sizeof key);
    key.k[0] = type;
    ev_entry *ent = ev_get(ev, &ev->entries, &key);
    lct_iter it;
    if (lct_map_find(args, "entries", &v) != LCT_OK ||
        lct_array_iter_init(v, &it) != LCT_OK)
        return;
    if (ent)
        ent->count += it.count;
    if (!lct_str_eq(type, "store"))
        return;
    lct_value entry, tokens;
    while (lct_array_iter_next(&it, &entry) == 1) {
        ev->store_bytes += (uint64_t)int_arg(entry, "size_bytes");
        lct_iter tok;
        if (lct_map_find(entry, "token_ids", &tokens) == LCT_OK &&
            lct_array_iter_init(tokens, &tok) == LCT_OK && tok.count > 0)
            ev->entries_with_tokens++;
    }
}

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* MARK: text layout */

/* "  label:" padded to the 28-character column (indent spaces first). */
static void label(const char *indent, const char *name, size_t len)
{
    fputs(indent, stdout);
    char buf[LABEL_WIDTH + 64];
    if (len + 1 < sizeof buf) {
        memcpy(buf, name, len);
        buf[len] = ':';
        tool_put_vis_padded(stdout, buf, len + 1, LABEL_WIDTH);
    } else {
        tool_put_vis(stdout, name, len);
        fputc(':', stdout);
    }
}

static void row(const char *indent, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void row(const char *indent, const char *name, const char *fmt, ...)
{
    label(indent, name, strlen(name));
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

typedef struct meta_pair {
    lct_str key;
    lct_value val;
} meta_pair;

static int meta_cmp(const void *a, const void *b)
{
    const meta_pair *x = a, *y = b;
    size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = memcmp(x->key.ptr, y->key.ptr, n);
    if (c)
        return c;
    return (x->key.len > y->key.len) - (x->key.len < y->key.len);
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

static void print_events_text(events *ev)
{
    ev_entry *e;
    fputs("  events:\n", stdout);
    uint64_t n = 0;
    RB_FOREACH(e, ev_tree, &ev->instances)
        n++;
    row("    ", "instances", "%" PRIu64, n);
    RB_FOREACH(e, ev_tree, &ev->instances) {
        qsort(e->incarnations, e->ninc, sizeof *e->incarnations, cmp_int64);
        fputs("      ", stdout);
        tool_put_vis(stdout, e->k[0].ptr, e->k[0].len);
        fputs(": incarnations=[", stdout);
        for (size_t i = 0; i < e->ninc; i++)
            printf("%s%" PRId64, i ? ", " : "", e->incarnations[i]);
        printf("] restarts=%zu\n", e->ninc > 0 ? e->ninc - 1 : 0);
    }
    fputs("    batches (type/tier/backend/shared):\n", stdout);
    RB_FOREACH(e, ev_tree, &ev->batches) {
        fputs("      ", stdout);
        tool_put_vis(stdout, e->k[0].ptr, e->k[0].len);
        fputc('/', stdout);
        tool_put_vis(stdout, e->k[1].ptr, e->k[1].len);
        fputc('/', stdout);
        if (e->k[2].len)
            tool_put_vis(stdout, e->k[2].ptr, e->k[2].len);
        else
            fputc('-', stdout);
        printf("/%s: %" PRIu64 "\n", e->shared ? "shared" : "local", e->count);
    }
    fputs("    entries:\n", stdout);
    RB_FOREACH(e, ev_tree, &ev->entries) {
        fputs("      ", stdout);
        tool_put_vis(stdout, e->k[0].ptr, e->k[0].len);
        printf(": %" PRIu64 "\n", e->count);
    }
    row("    ", "store_bytes", "%" PRIu64, ev->store_bytes);
    row("    ", "entries_with_tokens", "%" PRIu64, ev->entries_with_tokens);
    if (!RB_EMPTY(&ev->lifecycle)) {
        label("    ", "lifecycle", 9);
        bool first = true;
        RB_FOREACH(e, ev_tree, &ev->lifecycle) {
            fputs(first ? "" : ", ", stdout);
            tool_put_vis(stdout, e->k[0].ptr, e->k[0].len);
            printf("=%" PRIu64, e->count);
            first = false;
        }
        fputc('\n', stdout);
    }
}

static void print_text(const char *path, const lct_header *h,
                       struct qtable *ops, uint64_t total, double duration,
                       events *ev)
{
    fputs("Trace file: ", stdout);
    tool_put_vis(stdout, path, strlen(path));
    fputc('\n', stdout);
    label("  ", "level", 5);
    tool_put_vis(stdout, h->level.ptr, h->level.len);
    fputc('\n', stdout);
    row("  ", "format_version", "%" PRId64, h->format_version);
    row("  ", "trace_schema_version", "%" PRId64, h->trace_schema_version);
    row("  ", "duration", "%.3fs", duration);
    label("  ", "sm_config_digest", 16);
    if (h->sm_config_digest.len)
        tool_put_vis(stdout, h->sm_config_digest.ptr, h->sm_config_digest.len);
    else
        fputs("(none)", stdout);
    fputc('\n', stdout);
    size_t nmeta;
    meta_pair *meta = meta_sorted(h->level_meta, &nmeta);
    for (size_t i = 0; i < nmeta; i++) {
        label("  ", meta[i].key.ptr, meta[i].key.len);
        tool_put_py_str(stdout, meta[i].val);
        fputc('\n', stdout);
    }
    free(meta);
    row("  ", "total_records", "%" PRIu64, total);
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
        print_events_text(ev);
}

/* MARK: JSON */

static void print_events_json(events *ev)
{
    ev_entry *e;
    fputs(",\"events\":{\"instances\":{", stdout);
    bool first = true;
    RB_FOREACH(e, ev_tree, &ev->instances) {
        qsort(e->incarnations, e->ninc, sizeof *e->incarnations, cmp_int64);
        fputs(first ? "" : ",", stdout);
        first = false;
        tool_put_json_str(e->k[0].ptr, e->k[0].len);
        fputs(":{\"incarnations\":[", stdout);
        for (size_t i = 0; i < e->ninc; i++)
            printf("%s%" PRId64, i ? "," : "", e->incarnations[i]);
        printf("],\"restarts\":%zu}", e->ninc > 0 ? e->ninc - 1 : 0);
    }
    fputs("},\"batches\":[", stdout);
    first = true;
    RB_FOREACH(e, ev_tree, &ev->batches) {
        fputs(first ? "{\"event_type\":" : ",{\"event_type\":", stdout);
        first = false;
        tool_put_json_str(e->k[0].ptr, e->k[0].len);
        fputs(",\"tier\":", stdout);
        tool_put_json_str(e->k[1].ptr, e->k[1].len);
        fputs(",\"backend\":", stdout);
        tool_put_json_str(e->k[2].ptr, e->k[2].len);
        printf(",\"shared\":%s,\"count\":%" PRIu64 "}",
               e->shared ? "true" : "false", e->count);
    }
    fputs("],\"entries\":{", stdout);
    first = true;
    RB_FOREACH(e, ev_tree, &ev->entries) {
        fputs(first ? "" : ",", stdout);
        first = false;
        tool_put_json_str(e->k[0].ptr, e->k[0].len);
        printf(":%" PRIu64, e->count);
    }
    printf("},\"store_bytes\":%" PRIu64 ",\"entries_with_tokens\":%" PRIu64
           ",\"lifecycle\":{",
           ev->store_bytes, ev->entries_with_tokens);
    first = true;
    RB_FOREACH(e, ev_tree, &ev->lifecycle) {
        fputs(first ? "" : ",", stdout);
        first = false;
        tool_put_json_str(e->k[0].ptr, e->k[0].len);
        printf(":%" PRIu64, e->count);
    }
    fputs("}}", stdout);
}

static void print_json(const char *path, const lct_header *h,
                       struct qtable *ops, const lct_stats *st,
                       double duration, events *ev)
{
    fputs("{\"path\":", stdout);
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
        print_events_json(ev);
    fputs("}\n", stdout);
}

/* MARK: command */

typedef struct part {
    struct qtable ops;
    double duration;
    uint64_t seen;
} part;

/* Events-level traces are read by one thread, into this. */
static events *events_sink;

static int info_record(void *state, const lct_record *rec)
{
    part *p = state;
    if (!qtable_add(&p->ops, rec, false))
        return 1;
    /* duration: the largest t_mono, even a negative one */
    if (p->seen == 0 || rec->t_mono > p->duration)
        p->duration = rec->t_mono;
    p->seen++;
    if (events_sink) {
        events_add(events_sink, rec);
        if (events_sink->failed)
            return 1;
    }
    return 0;
}

static void help(void)
{
    printf("usage: lct info [--json] [-q] [-j N] FILE\n"
           "\n"
           "Summarise a trace exactly as 'lmcache trace info' does: header\n"
           "fields, duration (largest t_mono), records per qualname, and for\n"
           "events-level traces an events block.  FILE may be -.\n"
           "\n"
           "  --json     the same facts, plus skipped and truncated, as JSON\n"
           "  -q         no warnings on stderr\n"
           "  -j N       threads (default: all CPUs for files over 64 MiB;\n"
           "             events-level traces are always read by one)\n"
           "  -h, --help this text\n");
}

int cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'J'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool json = false, quiet = false;
    unsigned jobs = 0;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qhj:", opts, NULL)) != -1) {
        switch (c) {
        case 'J': json = true; break;
        case 'j': jobs = tool_parse_jobs("info", optarg); break;
        case 'q': quiet = true; break;
        case 'h': help(); return EXIT_OK;
        default:
            tool_bad_option("info", c, argv);
        }
    }
    if (optind != argc - 1)
        tool_usage_error("info", argc - optind < 1 ? "missing FILE"
                                                   : "too many arguments");
    const char *path = argv[optind];
    lct_reader *r = tool_open(path, 0, quiet);
    if (!r)
        return EXIT_REFUSED;
    const lct_header *h = lct_reader_header(r);
    bool is_events = lct_str_eq(h->level, "events");

    events ev;
    memset(&ev, 0, sizeof ev);
    RB_INIT(&ev.instances);
    RB_INIT(&ev.batches);
    RB_INIT(&ev.entries);
    RB_INIT(&ev.lifecycle);
    tool_run run;
    /* The events block's tables do not merge: one thread reads those. */
    events_sink = is_events ? &ev : NULL;
    int rc = tool_records(r, is_events ? 1 : jobs, quiet, sizeof(part),
                          info_record, quiet ? NULL : tool_log, NULL,
                          &run)
                 ? EXIT_OK
                 : EXIT_REFUSED;
    part *all = tool_run_state(&run, 0);
    struct qtable ops = all->ops;
    double duration = all->duration;
    uint64_t seen = all->seen;
    for (unsigned t = 1; t < run.nstates; t++) {
        part *p = tool_run_state(&run, t);
        if (rc == EXIT_OK && !qtable_merge(&ops, &p->ops, false))
            rc = EXIT_REFUSED;
        qtable_free(&p->ops);
        if (p->seen && (p->duration > duration || seen == 0))
            duration = p->duration;
        seen += p->seen;
    }
    if (rc == EXIT_OK) {
        lct_stats st = run.stats;
        if (json)
            print_json(path, h, &ops, &st, duration, is_events ? &ev : NULL);
        else
            print_text(path, h, &ops, st.records, duration,
                       is_events ? &ev : NULL);
    }
    /* Output refers to views: finish it before the mapping goes. */
    tool_finish_stdout();
    qtable_free(&ops);
    tool_run_free(&run);
    ev_free(&ev.instances);
    ev_free(&ev.batches);
    ev_free(&ev.entries);
    ev_free(&ev.lifecycle);
    lct_close(r);
    return rc;
}
