/*
 * keys_reuse.c - `lct keys --top N` and `--reuse-histogram`: how often
 * each key is referenced (the rows `lct keys` would print for it, reads
 * and writes counted apart), the N most referenced keys with their
 * fields, and how many keys were referenced once, twice, ...  Keys are
 * told apart by their obj_id, as every key command does; a key's fields
 * are kept from its first reference (the chunk hash in one arena, model
 * names and salts once each), so a pipe needs no second pass.
 */
#include "tool.h"
#include "keys.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct key_count {
    uint64_t id, reads, writes, first_idx;
    double first_t, last_t;
    int64_t kv_rank, group;
    size_t hash_at, names_at; /* into the arena */
    uint32_t hash_len, model_len, salt_len;
} key_count;

typedef struct reuse {
    tool_idmap index; /* obj_id -> its place in keys + 1 */
    key_count *keys;
    size_t n, cap;
    char *arena;     /* every key's chunk hash, model name and salt */
    size_t used, room;
    bool failed;
} reuse;

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t want = *cap ? *cap : 1024;
    while (want < need)
        want *= 2;
    void *g = reallocarray(*p, want, size);
    if (!g)
        return false;
    *p = g;
    *cap = want;
    return true;
}

/* Bytes into the arena; their place. */
static size_t keep(reuse *r, const void *p, size_t n)
{
    size_t at = r->used;
    if (!grow((void **)&r->arena, &r->room, r->used + n + 1, 1)) {
        r->failed = true;
        return 0;
    }
    if (n)
        memcpy(r->arena + at, p, n);
    r->used += n;
    return at;
}

static key_count *first_sight(reuse *r, uint64_t *at,
                              const lct_object_key *k, uint64_t id)
{
    if (!grow((void **)&r->keys, &r->cap, r->n + 1, sizeof *r->keys)) {
        r->failed = true;
        return NULL;
    }
    key_count *c = &r->keys[r->n];
    *c = (key_count){.id = id, .kv_rank = k->kv_rank,
                     .group = k->object_group_id,
                     .hash_len = (uint32_t)k->chunk_hash.len,
                     .model_len = (uint32_t)k->model_name.len,
                     .salt_len = (uint32_t)k->cache_salt.len};
    c->hash_at = keep(r, k->chunk_hash.ptr, k->chunk_hash.len);
    c->names_at = keep(r, k->model_name.ptr, k->model_name.len);
    keep(r, k->cache_salt.ptr, k->cache_salt.len);
    *at = ++r->n;
    return c;
}

static int on_key(void *ctx, const lct_record *rec, uint64_t idx,
                  tool_key_op op, const lct_object_key *key, uint64_t bytes)
{
    (void)bytes;
    reuse *r = ctx;
    uint64_t id = lct_object_key_hash(key);
    uint64_t *at = tool_idmap_get(&r->index, id);
    bool added = at && !*at;
    key_count *c = !at      ? NULL
                   : added ? first_sight(r, at, key, id)
                           : &r->keys[*at - 1];
    if (!c) {
        r->failed = true;
        return 1;
    }
    if (added) {
        c->first_idx = idx;
        c->first_t = rec->t_mono;
    }
    c->last_t = rec->t_mono;
    c->reads += op == TOOL_KEY_READ;
    c->writes += op != TOOL_KEY_READ;
    return 0;
}

/* Most referenced first; ties by first appearance. */
static int by_references(const void *a, const void *b)
{
    const key_count *x = a, *y = b;
    uint64_t rx = x->reads + x->writes, ry = y->reads + y->writes;
    if (rx != ry)
        return rx < ry ? 1 : -1;
    return (x->first_idx > y->first_idx) - (x->first_idx < y->first_idx);
}

static void put_hex(const unsigned char *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        putchar(digits[p[i] >> 4]);
        putchar(digits[p[i] & 15]);
    }
}

static void put_top(const reuse *r, const key_count *c, bool csv)
{
    const char *model = r->arena + c->names_at;
    const char *salt = model + c->model_len;
    uint64_t refs = c->reads + c->writes;
    if (csv) {
        printf("%016" PRIx64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", c->id,
               refs, c->reads, c->writes);
        put_hex((const unsigned char *)r->arena + c->hash_at, c->hash_len);
        putchar(',');
        tool_put_csv(stdout, model, c->model_len);
        printf(",%" PRId64 ",%" PRId64 ",", c->kv_rank, c->group);
        tool_put_csv(stdout, salt, c->salt_len);
        putchar(',');
        tool_put_json_double(c->first_t);
        putchar(',');
        tool_put_json_double(c->last_t);
        fputs("\r\n", stdout);
        return;
    }
    printf("{\"obj_id\":\"%016" PRIx64 "\",\"references\":%" PRIu64
           ",\"reads\":%" PRIu64 ",\"writes\":%" PRIu64 ",\"chunk_hash\":\"",
           c->id, refs, c->reads, c->writes);
    put_hex((const unsigned char *)r->arena + c->hash_at, c->hash_len);
    fputs("\",\"model_name\":", stdout);
    tool_put_json_str(model, c->model_len);
    printf(",\"kv_rank\":%" PRId64 ",\"object_group_id\":%" PRId64
           ",\"cache_salt\":", c->kv_rank, c->group);
    tool_put_json_str(salt, c->salt_len);
    fputs(",\"first_t_mono\":", stdout);
    tool_put_json_double(c->first_t);
    fputs(",\"last_t_mono\":", stdout);
    tool_put_json_double(c->last_t);
    fputs("}\n", stdout);
}

static void print_top(reuse *r, size_t top, bool csv)
{
    qsort(r->keys, r->n, sizeof *r->keys, by_references);
    if (csv)
        fputs("obj_id,references,reads,writes,chunk_hash,model_name,"
              "kv_rank,object_group_id,cache_salt,first_t_mono,"
              "last_t_mono\r\n", stdout);
    for (size_t i = 0; i < r->n && i < top; i++)
        put_top(r, &r->keys[i], csv);
}

/* Keys by how many references each had: one row a count that occurs. */
static void print_histogram(reuse *r, bool csv)
{
    qsort(r->keys, r->n, sizeof *r->keys, by_references);
    if (csv)
        fputs("references,keys,share_of_keys,cumulative_share\r\n", stdout);
    size_t done = 0;
    for (size_t i = r->n; i > 0;) { /* fewest references first */
        uint64_t refs = r->keys[i - 1].reads + r->keys[i - 1].writes;
        size_t same = 0;
        while (i > 0 && r->keys[i - 1].reads + r->keys[i - 1].writes == refs)
            i--, same++;
        done += same;
        double share = (double)same / (double)r->n,
               cumulative = (double)done / (double)r->n;
        if (csv) {
            printf("%" PRIu64 ",%zu,", refs, same);
            tool_put_json_double(share);
            putchar(',');
            tool_put_json_double(cumulative);
            fputs("\r\n", stdout);
        } else {
            printf("{\"references\":%" PRIu64 ",\"keys\":%zu,"
                   "\"share_of_keys\":", refs, same);
            tool_put_json_double(share);
            fputs(",\"cumulative_share\":", stdout);
            tool_put_json_double(cumulative);
            fputs("}\n", stdout);
        }
    }
}

bool tool_keys_reuse(tool_inputs *in, tool_keyops *ops, const tool_args *a,
                     size_t top, bool histogram, bool *whole)
{
    reuse r = {0};
    *whole = tool_keys_walk(in, ops, "keys", on_key, &r);
    bool ok = !r.failed;
    if (!ok)
        fprintf(stderr, "%s keys: out of memory counting keys\n", tool_name);
    else if (histogram)
        print_histogram(&r, a->csv);
    else
        print_top(&r, top, a->csv);
    tool_idmap_free(&r.index);
    free(r.keys);
    free(r.arena);
    return ok;
}
