/*
 * mksample.c - write a realistic storage-level trace, deterministically,
 * with the project's msgpack writer (test/support/mpw.c).  This is how
 * examples/sample.lct is made:
 *
 *     make sample          # examples/mksample 3000 examples/sample.lct
 *
 * The mix follows what a StorageManager sees: prefetches (submit, read
 * enter/exit, finish) and writes (reserve, finish), 1-8 ObjectKeys per
 * call with 32-byte chunk hashes, codec-wrapped as the recorder wraps them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpw.h"

#define QN "lmcache.v1.distributed.storage_manager.StorageManager."

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

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
        mpw_map(w, 5);
        mpw_str(w, "chunk_hash");
        mpw_bin(w, hash, sizeof hash);
        mpw_str(w, "model_name");
        mpw_str(w, "meta-llama/Llama-3.1-8B-Instruct");
        mpw_str(w, "kv_rank");
        mpw_uint(w, 0);
        mpw_str(w, "object_group_id");
        mpw_uint(w, 0);
        mpw_str(w, "cache_salt");
        mpw_str(w, "");
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

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s RECORDS OUT.lct\n", argv[0]);
        return 2;
    }
    long records = strtol(argv[1], NULL, 10);
    FILE *out = fopen(argv[2], "wb");
    if (records <= 0 || !out) {
        fprintf(stderr, "%s: bad count or cannot write %s\n", argv[0], argv[2]);
        return 1;
    }
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);

    double t = 0.0;
    uint64_t request = 0;
    long written = 0;
    while (written < records) {
        uint64_t seed = rng();
        unsigned nkeys = 1 + (unsigned)(seed % 8);
        bool prefetch = (seed >> 8) % 3 != 0;
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
                object_keys(&body, nkeys, seed);
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
                object_keys(&body, nkeys, seed);
                mpw_str(&body, "extra_count");
                mpw_uint(&body, 0);
            } else if (!prefetch && step == 0) {
                mpw_map(&body, 3);
                mpw_str(&body, "keys");
                object_keys(&body, nkeys, seed);
                mpw_str(&body, "layout_desc");
                layout_desc(&body);
                mpw_str(&body, "mode");
                enum_value(&body, "PrefetchMode", "LOOKUP");
            } else {
                mpw_map(&body, 1);
                mpw_str(&body, "keys");
                object_keys(&body, nkeys, seed);
            }
            mpw_frame(&file, &body);
            written++;
        }
    }
    int ok = fwrite(file.buf, 1, file.len, out) == file.len;
    ok &= fclose(out) == 0;
    mpw_free(&file);
    mpw_free(&body);
    if (!ok) {
        fprintf(stderr, "%s: write failed\n", argv[0]);
        return 1;
    }
    return 0;
}
