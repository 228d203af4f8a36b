/*
 * trace_import.c - published KV-cache traces as LMCache traces (`lct
 * import mooncake|bailian FILE OUT`): one request a JSON line, its prompt
 * as `hash_ids` of fixed-size token blocks (a shared prefix shows as
 * shared leading ids), becomes the records LMCache would have written
 * for it: a submit_prefetch_task lookup of its whole chunks, then a
 * reserve_write and finish_write of the chunks no request before it had
 * stored (those it had to compute, as an unbounded cache would see it).
 * Blocks become LMCache chunks by tokens: chunk k ends at token (k + 1)
 * x chunk_size, inside block b at offset o, and is known by the hash of
 * the ids of blocks 0 to b and o, so 16-token blocks fold 16 to a
 * 256-token chunk and 512-token blocks split in two.
 */
#include "tool.h"
#include "lookup.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct request {
    double t;      /* seconds */
    size_t seq;    /* line order: equal times keep it */
    char *line;
    size_t lineno;
} request;

static int by_time(const void *a, const void *b)
{
    const request *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void warn_line(const char *file, size_t lineno, const char *why)
{
    fprintf(stderr, "%s import: WARNING: ", tool_name);
    tool_put_vis(stderr, file, strlen(file));
    fprintf(stderr, ":%zu: skipping malformed line: %s\n", lineno, why);
}

static bool whole(json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0;
}

/* Why a line is not a request of the format, or NULL; *t its time. */
static const char *check(const tool_trace_import *o, json_t *e, double *t,
                         json_error_t *err)
{
    if (!e)
        return err->text;
    if (!json_is_object(e))
        return "not a JSON object";
    json_t *ts = json_object_get(e, "timestamp");
    if (!json_is_number(ts) || json_number_value(ts) < 0)
        return "timestamp is not a number >= 0";
    *t = json_number_value(ts) / (o->millis ? 1000.0 : 1.0);
    if (!whole(json_object_get(e, "input_length")))
        return "input_length is not a whole number >= 0";
    json_t *ids = json_object_get(e, "hash_ids");
    if (!json_is_array(ids))
        return "hash_ids is not a list";
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id)
        if (!json_is_integer(id))
            return "a hash id is not an integer";
    json_t *chat = json_object_get(e, "chat_id");
    if (chat && !json_is_integer(chat) && !json_is_string(chat))
        return "chat_id is not an integer or a string";
    return NULL;
}

/* The file's requests, checked, into *rq; false if it cannot be read. */
static bool read_requests(const tool_trace_import *o, request **rq,
                          size_t *n, uint64_t *bad)
{
    FILE *f = fopen(o->path, "r");
    if (!f) {
        fprintf(stderr, "%s import: ", tool_name);
        tool_put_vis(stderr, o->path, strlen(o->path));
        fprintf(stderr, ": %s\n", strerror(errno));
        return false;
    }
    char *line = NULL;
    size_t len = 0, cap = 0;
    ssize_t got;
    bool ok = true;
    for (size_t lineno = 1; ok && (got = getline(&line, &len, f)) >= 0;
         lineno++) {
        if (strspn(line, " \t\r\n") == (size_t)got)
            continue;
        json_error_t err;
        json_t *e = json_loadb(line, (size_t)got, 0, &err);
        double t = 0;
        const char *why = check(o, e, &t, &err);
        json_decref(e);
        if (why) {
            if (!o->quiet)
                warn_line(o->path, lineno, why);
            ++*bad;
            continue;
        }
        if (*n == cap) {
            size_t c = cap ? 2 * cap : 1024;
            request *g = reallocarray(*rq, c, sizeof *g);
            ok = g != NULL;
            if (!ok)
                break;
            *rq = g;
            cap = c;
        }
        (*rq)[*n] = (request){t, *n, strndup(line, (size_t)got), lineno};
        ok = (*rq)[(*n)++].line != NULL;
    }
    free(line);
    fclose(f);
    if (!ok)
        fprintf(stderr, "%s import: out of memory\n", tool_name);
    return ok;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* The 32-byte chunk hash of a prefix's 64-bit id, as LMCache's hashes
 * are 32 bytes. */
static void chunk_hash(uint64_t id, unsigned char out[32])
{
    for (int w = 0; w < 4; w++) {
        uint64_t v = mix(id + 0x9e3779b97f4a7c15u * (uint64_t)(w + 1));
        memcpy(out + 8 * w, &v, 8);
    }
}

/* The ids of a request's whole chunks (*n of them), by tokens. */
static bool chunk_ids(const tool_trace_import *o, json_t *e, uint64_t **ids,
                      size_t *n, size_t *cap)
{
    json_t *blocks = json_object_get(e, "hash_ids");
    uint64_t tokens = (uint64_t)json_integer_value(
        json_object_get(e, "input_length"));
    uint64_t covered = (uint64_t)json_array_size(blocks) * o->block_size;
    uint64_t chunks = (tokens < covered ? tokens : covered) / o->chunk_size;
    if (chunks > *cap) {
        uint64_t *g = reallocarray(*ids, chunks, sizeof *g);
        if (!g)
            return false;
        *ids = g;
        *cap = chunks;
    }
    uint64_t prefix = 0x2545f4914f6cdd1du; /* the ids of blocks so far */
    size_t b = 0;
    for (uint64_t k = 0; k < chunks; k++) {
        uint64_t end = (k + 1) * o->chunk_size;
        size_t last = (size_t)((end - 1) / o->block_size);
        for (; b <= last; b++)
            prefix = mix(prefix ^ (uint64_t)json_integer_value(
                                      json_array_get(blocks, b)));
        uint64_t offset = end - (uint64_t)last * o->block_size;
        (*ids)[k] = mix(prefix + offset);
    }
    *n = (size_t)chunks;
    return true;
}

static void write_keys(const tool_trace_import *o, lct_writer *w,
                       const uint64_t *ids, size_t n, const bool *only)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += !only || only[i];
    lct_writer_array(w, (uint32_t)count);
    for (size_t i = 0; i < n; i++) {
        if (only && !only[i])
            continue;
        unsigned char hash[32];
        chunk_hash(ids[i], hash);
        lct_writer_codec(w, "ObjectKey");
        lct_writer_map(w, 3);
        lct_writer_cstr(w, "chunk_hash");
        lct_writer_bin(w, hash, sizeof hash);
        lct_writer_cstr(w, "model_name");
        lct_writer_cstr(w, o->model);
        lct_writer_cstr(w, "kv_rank");
        lct_writer_uint(w, 0);
    }
}

/* The KV cache of a chunk: keys and values, the layers, chunk_size
 * tokens, the kv heads and their dimension, of the dtype (by default
 * Llama-3.1-8B's: 32 layers, 8 kv heads of 128, bf16: 32 MiB at 256
 * tokens). */
static void write_layout(const tool_trace_import *o, lct_writer *w)
{
    lct_writer_codec(w, "MemoryLayoutDesc");
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "shapes");
    lct_writer_array(w, 1);
    lct_writer_array(w, 5);
    const int64_t shape[] = {2, o->layers, (int64_t)o->chunk_size,
                             o->kv_heads, o->head_dim};
    for (int i = 0; i < 5; i++)
        lct_writer_int(w, shape[i]);
    lct_writer_cstr(w, "dtypes");
    lct_writer_array(w, 1);
    char dtype[64];
    snprintf(dtype, sizeof dtype, "torch.%s", o->dtype);
    lct_writer_cstr(w, dtype);
}

/* The request's id: bailian's chat_id, else the line it came from. */
static void write_request_id(const tool_trace_import *o, lct_writer *w,
                             json_t *e, const request *r)
{
    json_t *chat = json_object_get(e, "chat_id");
    char id[64];
    if (json_is_string(chat)) {
        lct_writer_cstr(w, json_string_value(chat));
        return;
    }
    if (json_is_integer(chat))
        snprintf(id, sizeof id, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(chat));
    else
        snprintf(id, sizeof id, "%s-%zu", o->format, r->lineno);
    lct_writer_cstr(w, id);
}

#define QUALNAME_PREFIX "lmcache.v1.distributed.storage_manager.StorageManager."

static lct_status write_lookup(const tool_trace_import *o, lct_writer *w,
                               json_t *e, const request *r, double t0,
                               const uint64_t *ids, size_t n, lct_error *err)
{
    static const char q[] = QUALNAME_PREFIX "submit_prefetch_task";
    lct_writer_record_begin(w, r->t - t0, o->start + r->t, q, sizeof q - 1);
    lct_writer_map(w, 5);
    /* first: lct_lookup_tokens reads only the leading pairs */
    lct_writer_cstr(w, "seq_len");
    lct_writer_int(w, json_integer_value(json_object_get(e, "input_length")));
    lct_writer_cstr(w, "chunk_size");
    lct_writer_uint(w, o->chunk_size);
    lct_writer_cstr(w, "keys");
    write_keys(o, w, ids, n, NULL);
    lct_writer_cstr(w, "layout_desc");
    write_layout(o, w);
    lct_writer_cstr(w, "external_request_id");
    write_request_id(o, w, e, r);
    return lct_writer_end(w, err);
}

static lct_status write_store(const tool_trace_import *o, lct_writer *w,
                              const request *r, double t0, const char *call,
                              const uint64_t *ids, size_t n,
                              const bool *fresh, lct_error *err)
{
    char q[128];
    int len = snprintf(q, sizeof q, QUALNAME_PREFIX "%s", call);
    lct_writer_record_begin(w, r->t - t0, o->start + r->t, q, (size_t)len);
    bool reserve = strcmp(call, "reserve_write") == 0;
    lct_writer_map(w, reserve ? 3 : 1);
    lct_writer_cstr(w, "keys");
    write_keys(o, w, ids, n, fresh);
    if (reserve) {
        lct_writer_cstr(w, "layout_desc");
        write_layout(o, w);
        lct_writer_cstr(w, "mode");
        lct_writer_cstr(w, "new");
    }
    return lct_writer_end(w, err);
}

/* Marks in fresh the chunks no earlier request stored, and notes them
 * stored: how many. */
static size_t mark_fresh(tool_idset *stored, const uint64_t *ids, size_t n,
                         bool *fresh, bool *nomem)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int added = tool_idset_add(stored, ids[i]);
        *nomem |= added < 0;
        fresh[i] = added > 0;
        k += fresh[i];
    }
    return k;
}

static lct_status write_header(const tool_trace_import *o, lct_writer *w,
                               lct_error *err)
{
    char config[96];
    int n = snprintf(config, sizeof config,
                     "{\"chunk_size\": %" PRIu64 ", \"imported_from\": "
                     "\"%s\"}", o->chunk_size, o->format);
    lct_header h;
    memset(&h, 0, sizeof h);
    h.level = (lct_str){"storage", 7};
    h.trace_schema_version = 2;
    h.t_wall_start = o->start;
    h.sm_config_json = (lct_str){config, (size_t)n};
    h.sm_config_digest = (lct_str){"", 0};
    return lct_writer_header(w, &h, err);
}

/* Every request's records, in time order. */
static bool write_all(const tool_trace_import *o, lct_writer *w,
                      const request *rq, size_t n, lct_error *err)
{
    uint64_t *ids = NULL;
    size_t nids, cap = 0;
    bool *fresh = NULL, nomem = false, ok = true;
    size_t fresh_cap = 0;
    tool_idset stored = {0};
    double t0 = n ? rq[0].t : 0;
    for (size_t i = 0; ok && i < n; i++) {
        json_t *e = json_loads(rq[i].line, 0, NULL);
        ok = chunk_ids(o, e, &ids, &nids, &cap);
        if (ok && nids > fresh_cap) {
            bool *g = reallocarray(fresh, nids, sizeof *g);
            ok = g != NULL;
            fresh = ok ? g : fresh;
            fresh_cap = ok ? nids : fresh_cap;
        }
        ok = ok && write_lookup(o, w, e, &rq[i], t0, ids, nids, err) == LCT_OK;
        json_decref(e);
        if (ok && mark_fresh(&stored, ids, nids, fresh, &nomem) && !nomem)
            ok = write_store(o, w, &rq[i], t0, "reserve_write", ids, nids,
                             fresh, err) == LCT_OK &&
                 write_store(o, w, &rq[i], t0, "finish_write", ids, nids,
                             fresh, err) == LCT_OK;
        ok = ok && !nomem;
    }
    if (!ok && !err->message[0])
        fprintf(stderr, "%s import: out of memory\n", tool_name);
    tool_idset_free(&stored);
    free(ids);
    free(fresh);
    return ok;
}

bool tool_trace_import_run(const tool_trace_import *o, int fd,
                           uint64_t *requests, uint64_t *bad)
{
    request *rq = NULL;
    size_t n = 0;
    *bad = 0;
    bool ok = read_requests(o, &rq, &n, bad);
    if (ok && n > 1)
        qsort(rq, n, sizeof *rq, by_time);
    lct_writer *w = NULL;
    lct_error err = {0};
    ok = ok && lct_writer_open_fd(fd, &w, &err) == LCT_OK &&
         write_header(o, w, &err) == LCT_OK && write_all(o, w, rq, n, &err);
    if (!ok && err.message[0])
        fprintf(stderr, "%s import: %s\n", tool_name, err.message);
    lct_writer_close(w);
    for (size_t i = 0; i < n; i++)
        free(rq[i].line);
    free(rq);
    *requests = n;
    return ok;
}
