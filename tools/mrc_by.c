/*
 * mrc_by.c - `lct mrc --by model|cache_salt|kv_rank|object_group`: one
 * LRU curve per group of keys.  Over the shared cache (the default),
 * every reference moves its key in the one LRU and a group's requests
 * are its own reads, so each group's curve says what it gets from the
 * cache all groups share; with --isolated, each group's references
 * alone, as if it had a cache of its own.  Each curve is the library's
 * exact one (lct_mrc_compute_with) over a stream made for the group.
 */
#include "tool.h"
#include "keys.h"
#include "mrc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUPS 64

typedef struct by_ref {
    uint64_t id, bytes;
    double t;
    bool read;
    uint8_t group;
} by_ref;

typedef struct by_walk {
    tool_mrc_by by;
    by_ref *v;
    size_t n, cap;
    char *name[MAX_GROUPS]; /* each group's value as text */
    size_t ngroups;
    bool too_many, failed;
} by_walk;

/* The key's group value as text (escaped later, when printed). */
static void group_text(tool_mrc_by by, const lct_object_key *k, char *out,
                       size_t size)
{
    if (by == TOOL_MRC_BY_KV_RANK || by == TOOL_MRC_BY_GROUP) {
        snprintf(out, size, "%" PRId64,
                 by == TOOL_MRC_BY_KV_RANK ? k->kv_rank : k->object_group_id);
        return;
    }
    lct_str s = by == TOOL_MRC_BY_MODEL ? k->model_name : k->cache_salt;
    size_t n = s.len < size - 1 ? s.len : size - 1;
    memcpy(out, s.ptr, n);
    out[n] = '\0';
}

/* The group's number, numbered on first sight; -1 past MAX_GROUPS. */
static int group_of(by_walk *w, const lct_object_key *k)
{
    char text[256];
    group_text(w->by, k, text, sizeof text);
    for (size_t g = 0; g < w->ngroups; g++)
        if (strcmp(w->name[g], text) == 0)
            return (int)g;
    if (w->ngroups == MAX_GROUPS) {
        w->too_many = true;
        return -1;
    }
    if (!(w->name[w->ngroups] = strdup(text))) {
        w->failed = true;
        return -1;
    }
    return (int)w->ngroups++;
}

static int on_key(void *ctx, const lct_record *rec, uint64_t idx,
                  tool_key_op op, const lct_object_key *key, uint64_t bytes)
{
    (void)idx;
    by_walk *w = ctx;
    int g = group_of(w, key);
    if (g < 0)
        return 1;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 4096;
        by_ref *grown = reallocarray(w->v, cap, sizeof *grown);
        if (!grown) {
            w->failed = true;
            return 1;
        }
        w->v = grown;
        w->cap = cap;
    }
    w->v[w->n++] = (by_ref){lct_object_key_hash(key), bytes, rec->t_mono,
                            op == TOOL_KEY_READ, (uint8_t)g};
    return 0;
}

/* Group g's curve: shared, every reference in the stream and g's
 * requests alone counted; isolated, g's references alone.  g < 0: the
 * whole stream's.  NULL after a message. */
static lct_mrc *curve_of(const by_walk *w, int g, bool isolated, bool every)
{
    lct_refs *refs;
    if (lct_refs_new(&refs) != LCT_OK)
        return NULL;
    bool ok = true;
    for (size_t i = 0; ok && i < w->n; i++) {
        const by_ref *r = &w->v[i];
        bool mine = g < 0 || r->group == g;
        if (isolated && !mine)
            continue;
        bool request = mine && (r->read || every);
        ok = lct_refs_add(refs, r->id, r->bytes, r->t, request) == LCT_OK;
    }
    lct_mrc *m = NULL;
    lct_error err;
    lct_mrc_options o = {0}; /* the requests are marked as reads */
    if (ok && lct_mrc_compute_with(refs, &o, &m, &err) != LCT_OK) {
        fprintf(stderr, "%s mrc: %s\n", tool_name, err.message);
        m = NULL;
    }
    lct_refs_free(refs);
    return m;
}

static const char *by_name(tool_mrc_by by)
{
    static const char *names[] = {NULL, "model", "cache_salt", "kv_rank",
                                  "object_group"};
    return names[by];
}

static void print_text(const by_walk *w, const tool_curve *c,
                       const double *ratio, const uint64_t *reads,
                       bool isolated)
{
    printf("hit ratio by %s, %s:\n", by_name(w->by),
           isolated ? "each group alone in a cache of its own"
                    : "each group's reads in the one cache all share");
    for (size_t g = 0; g < w->ngroups; g++) {
        printf("  g%zu = ", g);
        tool_put_vis(stdout, w->name[g], strlen(w->name[g]));
        printf(" (%" PRIu64 " requests)\n", reads[g]);
    }
    printf("%12s  %13s", "keys", "bytes");
    for (size_t g = 0; g < w->ngroups; g++) {
        char col[24];
        snprintf(col, sizeof col, "g%zu", g);
        printf("  %11s", col);
    }
    putchar('\n');
    for (size_t i = 0; i < c->n; i++) {
        printf("%12" PRIu64 "  ", c->keys[i]);
        if (c->mean_bytes > 0) {
            char b[32];
            tool_format_bytes(b, sizeof b, (double)c->keys[i] * c->mean_bytes);
            printf("%13s", b);
        } else {
            printf("%13s", "-");
        }
        for (size_t g = 0; g < w->ngroups; g++)
            printf("  %11.4f", ratio[g * c->n + i]);
        putchar('\n');
    }
}

static void print_csv(const by_walk *w, const tool_curve *c,
                      const double *ratio)
{
    fputs("keys,bytes", stdout);
    for (size_t g = 0; g < w->ngroups; g++) {
        char col[300];
        snprintf(col, sizeof col, "hit_ratio:%s", w->name[g]);
        putchar(',');
        tool_put_csv(stdout, col, strlen(col));
    }
    fputs("\r\n", stdout);
    for (size_t i = 0; i < c->n; i++) {
        printf("%" PRIu64 ",", c->keys[i]);
        if (c->mean_bytes > 0)
            printf("%.0f", (double)c->keys[i] * c->mean_bytes);
        for (size_t g = 0; g < w->ngroups; g++) {
            putchar(',');
            tool_put_json_double(ratio[g * c->n + i]);
        }
        fputs("\r\n", stdout);
    }
}

static void print_json(const by_walk *w, const tool_curve *c,
                       const double *ratio, const uint64_t *reads,
                       bool isolated)
{
    printf("{\"by\":\"%s\",\"isolated\":%s,\"groups\":[", by_name(w->by),
           isolated ? "true" : "false");
    for (size_t g = 0; g < w->ngroups; g++) {
        fputs(g ? ",{\"group\":" : "{\"group\":", stdout);
        tool_put_json_str(w->name[g], strlen(w->name[g]));
        printf(",\"requests\":%" PRIu64 "}", reads[g]);
    }
    fputs("],\"curve\":[", stdout);
    for (size_t i = 0; i < c->n; i++) {
        printf("%s{\"keys\":%" PRIu64 ",\"bytes\":", i ? "," : "",
               c->keys[i]);
        if (c->mean_bytes > 0)
            printf("%.0f", (double)c->keys[i] * c->mean_bytes);
        else
            fputs("null", stdout);
        fputs(",\"hit_ratio\":[", stdout);
        for (size_t g = 0; g < w->ngroups; g++) {
            if (g)
                putchar(',');
            tool_put_json_double(ratio[g * c->n + i]);
        }
        fputs("]}", stdout);
    }
    fputs("]}\n", stdout);
}

/* Each group's ratio at each of c's capacities, and its requests. */
static bool group_curves(const by_walk *w, const tool_curve *c,
                         bool isolated, bool every, double *ratio,
                         uint64_t *reads)
{
    for (size_t g = 0; g < w->ngroups; g++) {
        lct_mrc *m = curve_of(w, (int)g, isolated, every);
        if (!m)
            return false;
        lct_mrc_totals t;
        lct_mrc_totals_get(m, &t);
        reads[g] = t.reads;
        for (size_t i = 0; i < c->n; i++)
            ratio[g * c->n + i] = lct_mrc_hit_ratio(m, c->keys[i]);
        lct_mrc_free(m);
    }
    return true;
}

bool tool_mrc_by_run(tool_inputs *in, tool_keyops *ops, const tool_args *a,
                     const tool_mrc_by_options *o, outfile *svg, bool *whole)
{
    by_walk w = {.by = o->by};
    *whole = tool_keys_walk(in, ops, "mrc", on_key, &w);
    bool ok = !w.failed && !w.too_many;
    if (w.too_many)
        fprintf(stderr, "%s mrc: --by %s: more than %d groups\n", tool_name,
                by_name(o->by), MAX_GROUPS);
    lct_mrc *all = ok ? curve_of(&w, -1, false, o->every) : NULL;
    tool_curve c = {0};
    ok = ok && all && lct_mrc_curve_make(&all, 1, &c, NULL) == LCT_OK;
    double *ratio = ok ? calloc(w.ngroups * (c.n ? c.n : 1), sizeof *ratio)
                       : NULL;
    uint64_t reads[MAX_GROUPS] = {0};
    ok = ok && ratio &&
         group_curves(&w, &c, o->isolated, o->every, ratio, reads);
    if (ok && a->json)
        print_json(&w, &c, ratio, reads, o->isolated);
    else if (ok && a->csv)
        print_csv(&w, &c, ratio);
    else if (ok)
        print_text(&w, &c, ratio, reads, o->isolated);
    if (ok && svg) {
        const char *names[MAX_GROUPS];
        for (size_t g = 0; g < w.ngroups; g++)
            names[g] = w.name[g];
        tool_svg_lines lines = {.names = names, .ratio = ratio,
                                .n = w.ngroups, .title = by_name(o->by),
                                .isolated = o->isolated};
        ok = tool_mrc_svg_lines(svg, a, &c, &lines);
    } else {
        outfile_abort(svg);
    }
    if (!ok && !w.too_many)
        fprintf(stderr, "%s mrc: --by: out of memory\n", tool_name);
    free(ratio);
    lct_mrc_curve_free(&c);
    lct_mrc_free(all);
    for (size_t g = 0; g < w.ngroups; g++)
        free(w.name[g]);
    free(w.v);
    return ok;
}
