/*
 * gen.c - the realistic trace generator (see gen.h), written with the
 * project's msgpack writer.
 */
#include "gen.h"

#include <stdbool.h>
#include <stdlib.h>

#include "mpw.h"

#define QN "lmcache.v1.distributed.storage_manager.StorageManager."

static uint64_t rng_state;

static uint64_t rng(void)
{
    /* splitmix64: tiny, and the same sequence everywhere */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void codec_begin(mpw *w, const char *tag)
{
    mpw_map(w, 2);
    mpw_str(w, "__t__");
    mpw_str(w, tag);
    mpw_str(w, "v");
}

static void object_keys(mpw *w, unsigned n, uint64_t seed)
{
    mpw_array(w, n);
    for (unsigned i = 0; i < n; i++) {
        unsigned char hash[32];
        uint64_t s = seed * 131 + i;
        for (int b = 0; b < 32; b++)
            hash[b] = (unsigned char)((s * 2654435761u) >> (b % 8 * 4));
        codec_begin(w, "ObjectKey");
        /* object_group_id (0) and cache_salt may be absent; the recorder
         * leaves them out when they hold their defaults. */
        mpw_map(w, 3);
        mpw_str(w, "chunk_hash");
        mpw_bin(w, hash, sizeof hash);
        mpw_str(w, "model_name");
        mpw_str(w, "Qwen/Qwen3-8B");
        mpw_str(w, "kv_rank");
        mpw_uint(w, i % 2);
    }
}

static void layout_desc(mpw *w)
{
    codec_begin(w, "MemoryLayoutDesc");
    mpw_map(w, 2);
    mpw_str(w, "shapes");
    mpw_array(w, 1);
    mpw_array(w, 5);
    mpw_uint(w, 2);
    mpw_uint(w, 32);
    mpw_uint(w, 256);
    mpw_uint(w, 8);
    mpw_uint(w, 128);
    mpw_str(w, "dtypes");
    mpw_array(w, 1);
    mpw_str(w, "torch.bfloat16");
}

static void enum_value(mpw *w, const char *tag, const char *member)
{
    codec_begin(w, tag);
    mpw_str(w, member);
}

int gen_trace(FILE *out, uint64_t records, unsigned max_keys, uint64_t seed)
{
    rng_state = seed;
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);

    double t = 0.0;
    uint64_t request = 0;
    uint64_t written = 0;
    int rc = 0;
    while (written < records && rc == 0) {
        uint64_t pick = rng();
        unsigned nkeys = 1 + (unsigned)(pick % max_keys);
        bool prefetch = (pick >> 8) % 3 != 0;
        static const char *prefetch_ops[] = {
            QN "submit_prefetch_task", QN "read_prefetched_results.__enter__",
            QN "read_prefetched_results.__exit__", QN "finish_read_prefetched"};
        static const char *write_ops[] = {QN "reserve_write",
                                          QN "finish_write"};
        int steps = prefetch ? 4 : 2;
        request++;
        for (int step = 0; step < steps && written < records; step++) {
            t += (double)(rng() % 2000) / 1e6; /* up to 2 ms apart */
            mpw_reset(&body);
            const char *op = prefetch ? prefetch_ops[step] : write_ops[step];
            mpw_record_begin(&body, t, 1764600000.0 + t, op);
            if (prefetch && step == 0) {
                char ext_id[32];
                snprintf(ext_id, sizeof ext_id, "req-%llu",
                         (unsigned long long)request);
                mpw_map(&body, 8);
                mpw_str(&body, "keys");
                object_keys(&body, nkeys, pick);
                mpw_str(&body, "layout_desc");
                layout_desc(&body);
                mpw_str(&body, "extra_count");
                mpw_uint(&body, 0);
                mpw_str(&body, "external_request_id");
                mpw_str(&body, ext_id);
                mpw_str(&body, "policy");
                enum_value(&body, "TrimPolicy", "PREFIX");
                mpw_str(&body, "attn_desc");
                mpw_nil(&body);
                mpw_str(&body, "skip_l2");
                mpw_bool(&body, false);
                mpw_str(&body, "mode");
                enum_value(&body, "PrefetchMode", "PREFIX");
            } else if (prefetch && step == 3) {
                mpw_map(&body, 2);
                mpw_str(&body, "keys");
                object_keys(&body, nkeys, pick);
                mpw_str(&body, "extra_count");
                mpw_uint(&body, 0);
            } else if (!prefetch && step == 0) {
                mpw_map(&body, 3);
                mpw_str(&body, "keys");
                object_keys(&body, nkeys, pick);
                mpw_str(&body, "layout_desc");
                layout_desc(&body);
                mpw_str(&body, "mode");
                enum_value(&body, "PrefetchMode", "LOOKUP");
            } else {
                mpw_map(&body, 1);
                mpw_str(&body, "keys");
                object_keys(&body, nkeys, pick);
            }
            mpw_frame(&file, &body);
            written++;
            /* Stream: a 1.6 GB trace never sits in memory. */
            if (file.len >= (1u << 20)) {
                if (fwrite(file.buf, 1, file.len, out) != file.len)
                    rc = -1;
                mpw_reset(&file);
            }
        }
    }
    if (rc == 0 && fwrite(file.buf, 1, file.len, out) != file.len)
        rc = -1;
    mpw_free(&file);
    mpw_free(&body);
    return rc;
}
