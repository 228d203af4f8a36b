/*
 * fuzz_twice.c - libFuzzer target: arbitrary bytes as a whole trace, read
 * twice in one process, each time right after a different random prefix
 * of records that fill the library's per-thread caches (the walker's key
 * templates at several depths, the key layer's layouts, attn_descs and
 * remembered values), and once cold in a fresh thread.  The three reads
 * must give the same open decision, the same records (offset, qualname,
 * args as JSON, and every key with its bytes, read as keys and as ids)
 * and the same skips and truncation: an answer may never depend on what
 * was read before it.  The two warm reads open with LCT_KEYS (the walk
 * hands its key lists over), the cold one without.
 *
 * The prefixes are drawn from a seed taken from the input's bytes, so a
 * crash reproduces from the input alone.
 *
 *     make fuzz && test/fuzz/fuzz_twice -max_total_time=60 corpus/ test/fixtures/
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lct.h"
#include "lmcache/keys_internal.h"
#include "mpw.h"

/* MARK: what a read gives */

typedef struct text {
    char *buf;
    size_t len, cap;
} text;

static int text_write(void *ctx, const char *data, size_t len)
{
    text *t = ctx;
    if (t->len + len + 1 > t->cap) {
        t->cap = 2 * (t->len + len + 1) + 256;
        t->buf = realloc(t->buf, t->cap);
        if (!t->buf)
            abort();
    }
    memcpy(t->buf + t->len, data, len);
    t->len += len;
    t->buf[t->len] = '\0';
    return 0;
}

static void text_num(text *t, const char *label, long long v)
{
    char s[64];
    int n = snprintf(s, sizeof s, " %s=%lld", label, v);
    text_write(t, s, (size_t)n);
}

/* Everything a reader and the key layer say of the bytes, opened with
 * flags (the warm reads take LCT_KEYS: the key lists the walk hands
 * over, whole or in parts of one shape; the cold one the key layer's own
 * walk). */
static void read_all(const uint8_t *data, size_t size, unsigned flags,
                     text *out)
{
    lct_reader *r;
    lct_error err;
    lct_status st =
        lct_open_buffer(data, size, "fuzz", LCT_QUIET | flags, &r, &err);
    text_num(out, "open", st);
    if (st != LCT_OK)
        return;
    lct_record rec;
    while (lct_next(r, &rec) == 1) {
        text_num(out, "\n@", (long long)rec.offset);
        text_write(out, " ", 1);
        text_write(out, rec.qualname.ptr, rec.qualname.len);
        text_write(out, " ", 1);
        text_num(out, "json", lct_value_write_json(rec.args, text_write, out));
        lct_key_iter it;
        text_num(out, "keys", lct_key_iter_init(&rec, &it, &err));
        lct_object_key k;
        uint64_t bytes;
        int rc;
        while ((rc = lct_key_iter_next(&it, &k, &bytes, &err)) == 1) {
            text_num(out, "hash", (long long)lct_object_key_hash(&k));
            text_num(out, "bytes", (long long)bytes);
        }
        text_num(out, "end", rc);
        /* and as ids, which a list the walk noted gets from its first
         * key's model and salt */
        text_num(out, "ids", lct_key_iter_init(&rec, &it, &err));
        lct_key_id ids[3];
        long got;
        while ((got = lct_key_iter_next_ids(&it, ids, 3, &err)) > 0)
            for (long i = 0; i < got; i++) {
                text_num(out, "id", (long long)ids[i].id);
                text_num(out, "bytes", (long long)ids[i].bytes);
            }
        text_num(out, "end", got);
        /* and from the keys-only start (stat --spans'), which takes a
         * noted list that is the last `keys` argument as it lies */
        text_num(out, "keys only", lct__key_iter_init_keys(&rec, &it, &err));
        while ((rc = lct_key_iter_next(&it, &k, NULL, &err)) == 1)
            text_num(out, "hash", (long long)lct_object_key_hash(&k));
        text_num(out, "end", rc);
    }
    lct_stats stats;
    lct_reader_stats(r, &stats);
    text_num(out, "\nrecords", (long long)stats.records);
    text_num(out, "skipped", (long long)stats.skipped);
    text_num(out, "truncated", stats.truncated);
    lct_close(r);
}

typedef struct cold {
    const uint8_t *data;
    size_t size;
    text out;
} cold;

static void *cold_read(void *arg)
{
    cold *c = arg;
    read_all(c->data, c->size, 0, &c->out);
    return NULL;
}

/* MARK: random prefixes */

static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void random_key(mpw *w, uint64_t *s)
{
    static const char *models[] = {
        "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct", "m",
        "a model name of 31 bytes ......"};
    mpw_objectkey_shape k = {"ObjectKey", 3 + (unsigned)(next_rand(s) % 3),
                             32, models[next_rand(s) % 4],
                             (int64_t)(next_rand(s) % 8),
                             (int64_t)(next_rand(s) % 3), false};
    /* salts of one length: an ASCII salt's bytes are compared under a
     * mask, so each is like the others' template */
    static const char *salts[] = {"salt", "ten1", "ten2", "s\xc3\xa9t"};
    mpw_objectkey_salted(w, &k, salts[next_rand(s) % 4]);
}

/* One cache-filling record: keys in a list, as args values, in a spec
 * with an attn_desc and group layouts, or nested in arrays. */
static void random_record(mpw *body, uint64_t *s)
{
    static const char *calls[] = {
        "lmcache.v1.distributed.storage_manager.StorageManager.reserve_write",
        "lmcache.v1.distributed.storage_manager.StorageManager."
        "submit_prefetch_task",
        "x"};
    mpw_reset(body);
    mpw_record_begin(body, 0.5, 1.5, calls[next_rand(s) % 3]);
    unsigned n = 1 + (unsigned)(next_rand(s) % 4);
    switch (next_rand(s) % 4) {
    case 0:
        mpw_map(body, 2);
        mpw_str(body, "keys");
        mpw_array(body, n);
        for (unsigned i = 0; i < n; i++)
            random_key(body, s);
        mpw_str(body, "layout_desc");
        mpw_layout_desc(body, 64 << (next_rand(s) % 2));
        break;
    case 1:
        mpw_map(body, n);
        for (unsigned i = 0; i < n; i++) {
            char name[2] = {(char)('a' + i), 0};
            mpw_str(body, name);
            random_key(body, s);
        }
        break;
    case 2:
        mpw_map(body, 1);
        mpw_str(body, "spec");
        mpw_map(body, 2);
        mpw_str(body, "__t__");
        mpw_str(body, "PrefetchRequestSpec");
        mpw_str(body, "v");
        mpw_map(body, 3);
        mpw_str(body, "keys");
        mpw_array(body, n);
        for (unsigned i = 0; i < n; i++)
            random_key(body, s);
        mpw_str(body, "attn_desc");
        mpw_map(body, 2);
        mpw_str(body, "__t__");
        mpw_str(body, "AttnWindowDesc");
        mpw_str(body, "v");
        mpw_array(body, 2);
        mpw_int(body, 4);
        mpw_int(body, (int64_t)(next_rand(s) % 8));
        mpw_str(body, "group_layout_descs");
        mpw_map(body, 1);
        mpw_str(body, "0");
        mpw_layout_desc(body, 128);
        break;
    default: {
        unsigned depth = (unsigned)(next_rand(s) % 6);
        mpw_map(body, 1);
        mpw_str(body, "keys");
        for (unsigned d = 0; d < depth; d++)
            mpw_array(body, 1);
        mpw_array(body, n);
        for (unsigned i = 0; i < n; i++)
            random_key(body, s);
    }
    }
}

/* The whole frames after the first (the header's) in data: up to most
 * of their starts in at[]; how many. */
static size_t input_frames(const uint8_t *data, size_t size, size_t *at,
                           size_t most)
{
    size_t n = 0, pos = 0;
    bool header = true;
    while (n < most && size - pos >= 4) {
        size_t len = (size_t)data[pos] << 24 | (size_t)data[pos + 1] << 16 |
                     (size_t)data[pos + 2] << 8 | data[pos + 3];
        if (len > size - pos - 4)
            break;
        if (!header)
            at[n++] = pos;
        header = false;
        pos += 4 + len;
    }
    return n;
}

/*
 * A trace of records that fill the caches, read whole: generated ones
 * and the input's own frames (so the caches learn the shapes the input
 * holds), each frame in with even odds, in an order of the seed's.
 */
static void read_random_prefix(const uint8_t *data, size_t size, uint64_t seed)
{
    enum { MOST = 64 };
    size_t at[MOST];
    size_t nframes = input_frames(data, size, at, MOST);
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    unsigned n = 1 + (unsigned)(next_rand(&seed) % 6);
    for (unsigned i = 0; i < n + nframes; i++) {
        uint64_t pick = next_rand(&seed);
        if (pick % (n + nframes) < n) {
            random_record(&body, &seed);
            mpw_frame(&file, &body);
        } else if (pick & (1ull << 40)) {
            size_t f = at[(pick >> 8) % nframes];
            size_t len = (size_t)data[f] << 24 | (size_t)data[f + 1] << 16 |
                         (size_t)data[f + 2] << 8 | data[f + 3];
            mpw_raw(&file, data + f, 4 + len);
        }
    }
    text ignored = {0};
    read_all(file.buf, file.len, LCT_KEYS, &ignored);
    free(ignored.buf);
    mpw_free(&file);
    mpw_free(&body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t seed = 0;
    for (size_t i = 0; i < size; i++)
        seed = (seed ^ data[i]) * 0x100000001b3ull;
    /* an exact-size copy: a byte read past the input is an ASan report */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);

    text first = {0}, second = {0};
    read_random_prefix(copy, size, seed);
    read_all(copy, size, LCT_KEYS, &first);
    read_random_prefix(copy, size, seed ^ 0x5555555555555555ull);
    read_all(copy, size, LCT_KEYS, &second);
    cold c = {copy, size, {0}};
    pthread_t t;
    if (pthread_create(&t, NULL, cold_read, &c) != 0)
        abort();
    pthread_join(t, NULL);
    if (first.len != second.len || memcmp(first.buf, second.buf, first.len) ||
        first.len != c.out.len || memcmp(first.buf, c.out.buf, first.len)) {
        fprintf(stderr, "after one prefix:\n%s\nafter another:\n%s\ncold:\n%s\n",
                first.buf, second.buf, c.out.buf);
        abort();
    }
    free(first.buf);
    free(second.buf);
    free(c.out.buf);
    free(copy);
    return 0;
}
