/*
 * tracegen.c - the realistic trace generator (see tracegen.h), written
 * with the library's trace writer, so what it makes is what the recorder
 * writes.
 */
#include "tracegen.h"
#include "tracegen_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QN "lmcache.v1.distributed.storage_manager.StorageManager."

static uint64_t rng_state;

void gen__seed(uint64_t seed)
{
    rng_state = seed;
}
static gen_keys keys = {"Qwen/Qwen3-8B", NULL, 2, 0};
static unsigned sizes; /* gen_set_sizes: key sizes that vary, 0 or 1: one */
static bool spec_form; /* gen_set_spec: prefetches as a PrefetchRequestSpec */
static bool mix;       /* gen_set_mix: each request's keys from a fleet */
static unsigned head_dim = 128; /* the layout's last dimension */
static const char *mix_salt;    /* the request's tenant, with mix */
static bool per_rank;           /* gen_set_per_rank_hashes */
static double start = 1764600000.0; /* gen_set_start: t_wall at t_mono 0 */

gen_keys gen_shape_keys(gen_shape s)
{
    if (s == GEN_SHAPE_LLAMA) /* 32 bytes: past a fixstr, as real model
                               * names often are */
        return (gen_keys){"meta-llama/Llama-3.1-8B-Instruct", "tenant-42", 8,
                          3};
    return (gen_keys){"Qwen/Qwen3-8B", NULL, 2, 0};
}

void gen_set_shape(gen_shape s)
{
    keys = gen_shape_keys(s);
}

void gen_set_sizes(unsigned n)
{
    sizes = n;
}

void gen_set_spec(bool on)
{
    spec_form = on;
}

void gen_set_mix(bool on)
{
    mix = on;
}

void gen_set_per_rank_hashes(bool on)
{
    per_rank = on;
}

void gen_set_start(double t_wall)
{
    start = t_wall;
}

double gen__start(void)
{
    return start;
}

/* With gen_set_mix, the keys and layout of the next request, from one
 * draw. */
static void mix_request(uint64_t draw)
{
    static const gen_keys fleet[] = {
        {"Qwen/Qwen3-8B", NULL, 2, 0},
        {"meta-llama/Llama-3.1-8B-Instruct", NULL, 8, 3},
        {"mistralai/Mistral-7B-Instruct-v0.3", NULL, 4, 0},
    };
    static const char *tenants[] = {"tenant-1", "tenant-2", "tenant-3",
                                    "tenant-4", "tenant-5", "tenant-6",
                                    "tenant-7", "tenant-8"};
    keys = fleet[draw % 3];
    mix_salt = tenants[(draw >> 16) % 8];
    head_dim = (draw >> 24) % 2 ? 64 : 128;
}

void gen_set_keys(const gen_keys *k)
{
    keys = *k;
    if (keys.kv_ranks == 0)
        keys.kv_ranks = 1;
}

uint64_t gen__rng(void)
{
    /* splitmix64: tiny, and the same sequence everywhere */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}


static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Chunk s's hash: 32 bytes that look like a real one (four mixed words,
 * none repeating another), the model's name mixed in, as another model's
 * tokens hash to other chunks.  With gen_set_per_rank_hashes, the older
 * generator's: 8 bytes of s repeated, whatever the model. */
static void chunk_hash(unsigned char hash[32], uint64_t s)
{
    if (per_rank) {
        for (int b = 0; b < 32; b++)
            hash[b] = (unsigned char)((s * 2654435761u) >> (b % 8 * 4));
        return;
    }
    uint64_t m = 0xcbf29ce484222325u; /* FNV-1a of the model name */
    for (const char *c = keys.model; *c; c++)
        m = (m ^ (unsigned char)*c) * 0x100000001b3u;
    for (int w = 0; w < 4; w++) {
        uint64_t v = mix64(s * 4 + (uint64_t)w + m);
        for (int b = 0; b < 8; b++)
            hash[w * 8 + b] = (unsigned char)(v >> (8 * b));
    }
}

/* A call's object groups: each holds every chunk (1 without groups). */
static unsigned group_count(void)
{
    return keys.groups ? keys.groups : 1;
}

/* The keys a call of about n keys has: whole chunks, a key for every kv
 * rank of each in every object group (at least n); with
 * gen_set_per_rank_hashes, n. */
unsigned gen__call_keys(unsigned n)
{
    unsigned row = keys.kv_ranks * group_count();
    return per_rank ? n : (n + row - 1) / row * row;
}

/* Key i of a call from chunk `first` on: its chunk, rank and group.  As
 * LMCache's lookup module lays them out (_chunk_major_object_keys over
 * ipc_key_to_object_keys): chunk after chunk, each chunk's object groups
 * in order, a key per kv rank of each, the ranks and groups of a chunk
 * sharing its hash, so a chunk's keys are contiguous and a run of found
 * keys from the call's start is a run of whole chunks.  With
 * gen_set_per_rank_hashes, key
 * i is chunk first + i of rank i mod the ranks, its group the chunk's
 * number mod the groups, as the older generator wrote them. */
static void key_place(unsigned i, uint64_t first, uint64_t *chunk,
                      unsigned *rank, unsigned *grp)
{
    unsigned r = keys.kv_ranks;
    if (per_rank) {
        *chunk = first + i;
        *rank = i % r;
        *grp = keys.groups ? (unsigned)(*chunk % keys.groups) : 0;
        return;
    }
    *chunk = first + i / (r * group_count());
    *grp = (i / r) % group_count();
    *rank = i % r;
}

void gen__object_keys(lct_writer *w, unsigned n, uint64_t first)
{
    gen__object_keys_at(w, first, NULL, gen__call_keys(n));
}

void gen__object_keys_at(lct_writer *w, uint64_t first, const unsigned *at,
                         unsigned count)
{
    lct_writer_array(w, count);
    for (unsigned j = 0; j < count; j++) {
        unsigned i = at ? at[j] : j;
        unsigned char hash[32];
        uint64_t s;
        unsigned rank, grp;
        key_place(i, first, &s, &rank, &grp);
        chunk_hash(hash, s);
        lct_writer_codec(w, "ObjectKey");
        /* With mix, one chunk in five (always the same ones) carries the
         * request's tenant as its salt. */
        const char *salt = keys.salt;
        if (mix && ((s * 0x9e3779b97f4a7c15u) >> 32) % 5 == 0)
            salt = mix_salt;
        /* object_group_id (0) and cache_salt may be absent; the recorder
         * leaves them out when they hold their defaults. */
        lct_writer_map(w, 3u + (keys.groups > 0 ? 1u : 0u) +
                              (salt ? 1u : 0u));
        lct_writer_cstr(w, "chunk_hash");
        lct_writer_bin(w, hash, sizeof hash);
        lct_writer_cstr(w, "model_name");
        lct_writer_cstr(w, keys.model);
        lct_writer_cstr(w, "kv_rank");
        lct_writer_uint(w, rank);
        if (keys.groups) {
            lct_writer_cstr(w, "object_group_id");
            lct_writer_uint(w, grp);
        }
        if (salt) {
            lct_writer_cstr(w, "cache_salt");
            lct_writer_cstr(w, salt);
        }
    }
}

/* The layout of a call whose keys start at chunk `first`: 256 tokens a
 * chunk, or with gen_set_sizes(n) 256 x (1 + its stream's number mod n),
 * so keys weigh differently from stream to stream but each key always
 * the same. */
static uint64_t layout_tokens(uint64_t first)
{
    return 256 * (1 + (sizes > 1 ? (first / 131) % sizes : 0));
}

uint64_t gen__layout_bytes(uint64_t first)
{
    /* the shape below, in bfloat16 */
    return 2 * 32 * layout_tokens(first) * 8 * head_dim * 2;
}

void gen__layout_desc(lct_writer *w, uint64_t first)
{
    uint64_t tokens = layout_tokens(first);
    lct_writer_codec(w, "MemoryLayoutDesc");
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "shapes");
    lct_writer_array(w, 1);
    lct_writer_array(w, 5);
    lct_writer_uint(w, 2);
    lct_writer_uint(w, 32);
    lct_writer_uint(w, tokens);
    lct_writer_uint(w, 8);
    lct_writer_uint(w, head_dim);
    lct_writer_cstr(w, "dtypes");
    lct_writer_array(w, 1);
    lct_writer_cstr(w, "torch.bfloat16");
}

static void enum_value(lct_writer *w, const char *tag, const char *member)
{
    lct_writer_codec(w, tag);
    lct_writer_cstr(w, member);
}

/* Documents drawn with Zipf's law (s = 1): document d with probability
 * proportional to 1 / (d + 1), from one uniform draw, so the number of
 * random draws per record stays what it was without documents. */
int gen__docs_init(gen__docs *d, unsigned n)
{
    d->n = n;
    d->cdf = NULL;
    if (n == 0)
        return 0;
    if (!(d->cdf = malloc(n * sizeof *d->cdf)))
        return -1;
    double sum = 0;
    for (unsigned i = 0; i < n; i++)
        d->cdf[i] = sum += 1.0 / (i + 1);
    for (unsigned i = 0; i < n; i++)
        d->cdf[i] /= sum;
    return 0;
}

/* The first chunk number of a request's keys: a document's chunk 0 (so
 * requests for one document share a prefix of keys), or without
 * documents a place of the request's own. */
uint64_t gen__first_chunk(const gen__docs *d, uint64_t pick)
{
    if (d->n == 0)
        return pick * 131;
    double u = (double)(pick >> 12) / 4503599627370496.0; /* 2^52 */
    unsigned lo = 0, hi = d->n - 1;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (d->cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* A document's place: as random-looking as a request's own. */
    uint64_t z = ((uint64_t)lo + 1) * 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    return (z ^ (z >> 31)) * 131;
}

uint64_t gen__key_id(unsigned i, uint64_t first)
{
    uint64_t s;
    unsigned rank, grp;
    key_place(i, first, &s, &rank, &grp);
    return mix64(s * 4096 + rank * 64 + grp);
}

int gen__write_header(lct_writer *w, const char *level)
{
    lct_header h;
    memset(&h, 0, sizeof h);
    h.level = (lct_str){level, strlen(level)};
    h.trace_schema_version = 2;
    h.t_mono_start = 1000.5;
    h.t_wall_start = start + 0.25;
    h.sm_config_json = (lct_str){"{\"chunk_size\": 256}", 19};
    h.sm_config_digest = (lct_str){"", 0};
    return lct_writer_header(w, &h, NULL) == LCT_OK ? 0 : -1;
}

/* submit_prefetch_task's args: the request as the recorder passes it. */
static void prefetch_args(lct_writer *w, unsigned nkeys, uint64_t first,
                          uint64_t request)
{
    char ext_id[32];
    snprintf(ext_id, sizeof ext_id, "req-%llu", (unsigned long long)request);
    lct_writer_map(w, 8);
    lct_writer_cstr(w, "keys");
    gen__object_keys(w, nkeys, first);
    lct_writer_cstr(w, "layout_desc");
    gen__layout_desc(w, first);
    lct_writer_cstr(w, "extra_count");
    lct_writer_uint(w, 0);
    lct_writer_cstr(w, "external_request_id");
    lct_writer_cstr(w, ext_id);
    lct_writer_cstr(w, "policy");
    enum_value(w, "TrimPolicy", "PREFIX");
    lct_writer_cstr(w, "attn_desc");
    lct_writer_nil(w);
    lct_writer_cstr(w, "skip_l2");
    lct_writer_bool(w, false);
    lct_writer_cstr(w, "mode");
    enum_value(w, "PrefetchMode", "LOOKUP");
}

/* submit_prefetch_task's args in newer LMCache's form: the request as a
 * PrefetchRequestSpec (keys, readers, policy, the attention windows of
 * each object group with the kv ranks as world_size, a layout per
 * group, mode) beside the request id and skip_l2. */
static void prefetch_spec_args(lct_writer *w, unsigned nkeys, uint64_t first,
                               uint64_t request)
{
    char ext_id[32], group[16];
    unsigned groups = keys.groups ? keys.groups : 1;
    snprintf(ext_id, sizeof ext_id, "req-%llu", (unsigned long long)request);
    lct_writer_map(w, 3);
    lct_writer_cstr(w, "spec");
    lct_writer_codec(w, "PrefetchRequestSpec");
    lct_writer_map(w, 6);
    lct_writer_cstr(w, "keys");
    gen__object_keys(w, nkeys, first);
    lct_writer_cstr(w, "num_kv_readers");
    lct_writer_uint(w, 1);
    lct_writer_cstr(w, "policy");
    enum_value(w, "TrimPolicy", "PREFIX");
    lct_writer_cstr(w, "attn_desc");
    lct_writer_codec(w, "AttnWindowDesc");
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "num_chunks_in_sw");
    lct_writer_array(w, groups);
    for (unsigned g = 0; g < groups; g++)
        lct_writer_int(w, -1);
    lct_writer_cstr(w, "world_size");
    lct_writer_uint(w, keys.kv_ranks);
    lct_writer_cstr(w, "group_layout_descs");
    lct_writer_map(w, groups);
    for (unsigned g = 0; g < groups; g++) {
        snprintf(group, sizeof group, "%u", g);
        lct_writer_cstr(w, group);
        gen__layout_desc(w, first);
    }
    lct_writer_cstr(w, "mode");
    enum_value(w, "PrefetchMode", "LOOKUP");
    lct_writer_cstr(w, "external_request_id");
    lct_writer_cstr(w, ext_id);
    lct_writer_cstr(w, "skip_l2");
    lct_writer_bool(w, false);
}

/* The args of step `step` of a prefetch (4 calls) or a write (2 calls). */
static void step_args(lct_writer *w, bool prefetch, int step, unsigned nkeys,
                      uint64_t first, uint64_t request)
{
    if (prefetch && step == 0 && spec_form) {
        prefetch_spec_args(w, nkeys, first, request);
    } else if (prefetch && step == 0) {
        prefetch_args(w, nkeys, first, request);
    } else if (prefetch && step == 3) {
        lct_writer_map(w, 2);
        lct_writer_cstr(w, "keys");
        gen__object_keys(w, nkeys, first);
        lct_writer_cstr(w, "extra_count");
        lct_writer_uint(w, 0);
    } else if (!prefetch && step == 0) {
        lct_writer_map(w, 3);
        lct_writer_cstr(w, "keys");
        gen__object_keys(w, nkeys, first);
        lct_writer_cstr(w, "layout_desc");
        gen__layout_desc(w, first);
        lct_writer_cstr(w, "mode"); /* reserve_write's: new, update, all */
        lct_writer_cstr(w, "new");
    } else {
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "keys");
        gen__object_keys(w, nkeys, first);
    }
}

int gen_trace(int fd, uint64_t records, unsigned max_keys, unsigned ndocs,
              uint64_t seed)
{
    static const char *prefetch_ops[] = {
        QN "submit_prefetch_task", QN "read_prefetched_results.__enter__",
        QN "read_prefetched_results.__exit__", QN "finish_read_prefetched"};
    static const char *write_ops[] = {QN "reserve_write", QN "finish_write"};
    gen__seed(seed);
    lct_writer *w;
    gen__docs d;
    if (gen__docs_init(&d, ndocs) != 0)
        return -1;
    if (lct_writer_open_fd(fd, &w, NULL) != LCT_OK) {
        free(d.cdf);
        return -1;
    }
    int rc = gen__write_header(w, "storage");
    double t = 0.0;
    uint64_t request = 0, written = 0;
    while (written < records && rc == 0) {
        uint64_t pick = gen__rng();
        if (mix)
            mix_request(gen__rng());
        unsigned nkeys = 1 + (unsigned)(pick % max_keys);
        bool prefetch = (pick >> 8) % 3 != 0;
        int steps = prefetch ? 4 : 2;
        request++;
        for (int step = 0; step < steps && written < records && rc == 0;
             step++) {
            t += (double)(gen__rng() % 2000) / 1e6; /* up to 2 ms apart */
            const char *op = prefetch ? prefetch_ops[step] : write_ops[step];
            lct_writer_record_begin(w, t, start + t, op, strlen(op));
            step_args(w, prefetch, step, nkeys, gen__first_chunk(&d, pick),
                      request);
            if (lct_writer_end(w, NULL) != LCT_OK)
                rc = -1;
            written++;
        }
    }
    lct_writer_close(w);
    free(d.cdf);
    return rc;
}
