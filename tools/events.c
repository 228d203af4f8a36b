/*
 * events.c - the events block of `lct info` for an events-level trace:
 * instances and their incarnations, batches, entries, stored bytes and
 * lifecycle phases, gathered from events.batch and events.lifecycle
 * records, and printed as `lmcache trace info` does or as JSON.
 */
#include "info.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One row of an events table; keys are copies (a streamed reader's views
 * die at the next record), stored after the entry. */

int ev_cmp(ev_entry *a, ev_entry *b)
{
    for (int i = 0; i < 3; i++) {
        int c = lct_str_cmp(a->k[i], b->k[i]);
        if (c)
            return c;
    }
    return (int)a->shared - (int)b->shared; /* local before shared */
}

RB_GENERATE(ev_tree, ev_entry, link, ev_cmp)


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

void events_add(events *ev, const lct_record *rec)
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

void events_init(events *ev)
{
    memset(ev, 0, sizeof *ev);
    RB_INIT(&ev->instances);
    RB_INIT(&ev->batches);
    RB_INIT(&ev->entries);
    RB_INIT(&ev->lifecycle);
}

void events_free(events *ev)
{
    ev_free(&ev->instances);
    ev_free(&ev->batches);
    ev_free(&ev->entries);
    ev_free(&ev->lifecycle);
}

void events_print_text(events *ev)
{
    ev_entry *e;
    fputs("  events:\n", stdout);
    uint64_t n = 0;
    RB_FOREACH(e, ev_tree, &ev->instances)
        n++;
    info_row("    ", "instances", "%" PRIu64, n);
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
    info_row("    ", "store_bytes", "%" PRIu64, ev->store_bytes);
    info_row("    ", "entries_with_tokens", "%" PRIu64, ev->entries_with_tokens);
    if (!RB_EMPTY(&ev->lifecycle)) {
        info_label("    ", "lifecycle", 9);
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

void events_print_json(events *ev)
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

