/*
 * test_alloc.c - iterating records makes no heap allocation.
 *
 * This program is linked with -Wl,--wrap for malloc, calloc, realloc,
 * reallocarray and strdup, so every such call from liblct lands in the
 * counters below.  The test first checks that opening a reader is counted
 * (so the wrapping really works), then that iterating a large synthetic
 * trace with full validation, walking every args value and looking up
 * keys, counts nothing.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "mpw.h"

static unsigned long allocations;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__real_reallocarray(void *p, size_t n, size_t m);
char *__real_strdup(const char *s);

void *__wrap_malloc(size_t n)
{
    allocations++;
    return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t m)
{
    allocations++;
    return __real_calloc(n, m);
}
void *__wrap_realloc(void *p, size_t n)
{
    allocations++;
    return __real_realloc(p, n);
}
void *__wrap_reallocarray(void *p, size_t n, size_t m)
{
    allocations++;
    return __real_reallocarray(p, n, m);
}
char *__wrap_strdup(const char *s)
{
    allocations++;
    return __real_strdup(s);
}

/* Storage-level records: codec-wrapped keys with 32-byte hashes. */
static void build_trace(mpw *file, unsigned records)
{
    mpw body;
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(file, &body);
    unsigned char hash[32];
    for (unsigned i = 0; i < records; i++) {
        mpw_reset(&body);
        mpw_record_begin(&body, i * 0.001, 1764600000.0 + i * 0.001,
                         "lmcache.v1.distributed.storage_manager."
                         "StorageManager.reserve_write");
        mpw_map(&body, 2);
        mpw_str(&body, "keys");
        unsigned nkeys = 1 + i % 8;
        mpw_array(&body, nkeys);
        for (unsigned k = 0; k < nkeys; k++) {
            memset(hash, (int)(i + k), sizeof hash);
            mpw_map(&body, 2);
            mpw_str(&body, "__t__");
            mpw_str(&body, "ObjectKey");
            mpw_str(&body, "v");
            mpw_map(&body, 4);
            mpw_str(&body, "chunk_hash");
            mpw_bin(&body, hash, sizeof hash);
            mpw_str(&body, "model_name");
            mpw_str(&body, "meta-llama/Llama-3.1-8B");
            mpw_str(&body, "kv_rank");
            mpw_uint(&body, k);
            mpw_str(&body, "object_group_id");
            mpw_uint(&body, 0);
        }
        mpw_str(&body, "mode");
        mpw_map(&body, 2);
        mpw_str(&body, "__t__");
        mpw_str(&body, "PrefetchMode");
        mpw_str(&body, "v");
        mpw_str(&body, "PREFIX");
        mpw_frame(file, &body);
    }
    mpw_free(&body);
}

/* Visit every value below v with an explicit stack of iterators. */
static unsigned long walk_all(lct_value v)
{
    lct_iter stack[64];
    int depth = 0;
    unsigned long values = 1;
    lct_type t = lct_value_type(v);
    if (t == LCT_TYPE_MAP)
        cr_assert_eq(lct_map_iter_init(v, &stack[depth++]), LCT_OK);
    else if (t == LCT_TYPE_ARRAY)
        cr_assert_eq(lct_array_iter_init(v, &stack[depth++]), LCT_OK);
    while (depth > 0) {
        lct_iter *it = &stack[depth - 1];
        lct_value k, e;
        int rc = it->is_map ? lct_map_iter_next(it, &k, &e) : lct_array_iter_next(it, &e);
        cr_assert_geq(rc, 0);
        if (rc == 0) {
            depth--;
            continue;
        }
        values += 1 + it->is_map;
        t = lct_value_type(e);
        cr_assert_lt(depth, 64);
        if (t == LCT_TYPE_MAP)
            cr_assert_eq(lct_map_iter_init(e, &stack[depth++]), LCT_OK);
        else if (t == LCT_TYPE_ARRAY)
            cr_assert_eq(lct_array_iter_init(e, &stack[depth++]), LCT_OK);
        else if (t == LCT_TYPE_BIN) {
            lct_bytes b;
            cr_assert_eq(lct_value_get_bin(e, &b), LCT_OK);
        }
    }
    return values;
}

typedef struct walk_state {
    unsigned long records, values;
    char pad[48];
} walk_state;

static int scan_walk(void *state, const lct_record *rec)
{
    walk_state *w = state;
    w->records++;
    w->values += walk_all(rec->args);
    return 0;
}

Test(alloc, iteration_makes_no_heap_allocation)
{
    mpw file;
    mpw_init(&file);
    build_trace(&file, 100000);

    unsigned long before_open = allocations;
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open_buffer(file.buf, file.len, "synthetic", 0, &r, &err),
                 LCT_OK, "%s", err.message);
    cr_assert_gt(allocations, before_open,
                 "opening allocates the reader: if this is not counted, the "
                 "--wrap link flags are not in effect");

    unsigned long before = allocations;
    lct_record rec;
    unsigned long n = 0, values = 0, codecs = 0;
    while (lct_next(r, &rec) == 1) {
        values += walk_all(rec.args);
        lct_value keys, first;
        lct_iter it;
        cr_assert_eq(lct_map_find(rec.args, "keys", &keys), LCT_OK);
        cr_assert_eq(lct_array_iter_init(keys, &it), LCT_OK);
        cr_assert_eq(lct_array_iter_next(&it, &first), 1);
        lct_str tag;
        codecs += lct_value_codec(first, &tag, NULL);
        n++;
    }
    unsigned long during = allocations - before;
    cr_expect_eq(n, 100000);
    cr_expect_eq(codecs, 100000);
    cr_expect_gt(values, 100000 * 10);
    cr_expect_eq(during, 0, "%lu allocations while iterating", during);

    /* The parallel scan: a fixed number of allocations per run (its
     * per-thread array), however many records. */
    lct_index *idx;
    cr_assert_eq(lct_index_build(r, &idx, NULL), LCT_OK);
    walk_state states[2] = {{0}, {0}};
    void *ptrs[2] = {&states[0], &states[1]};
    lct_scan scan = {.threads = 2, .on_record = scan_walk, .states = ptrs};
    lct_stats st;
    before = allocations;
    cr_assert_eq(lct_scan_run(idx, &scan, &st, NULL), LCT_OK);
    cr_expect_eq(st.records, 100000);
    cr_expect_eq(states[0].records + states[1].records, 100000);
    cr_expect_leq(allocations - before, 1, "%lu allocations in a scan",
                  allocations - before);
    lct_index_free(idx);

    /* The lazy path, too. */
    lct_close(r);
    cr_assert_eq(lct_open_buffer(file.buf, file.len, "synthetic", LCT_LAZY, &r,
                                 &err),
                 LCT_OK);
    before = allocations;
    while (lct_next(r, &rec) == 1)
        ;
    cr_expect_eq(allocations - before, 0);
    lct_close(r);
    mpw_free(&file);
}

static void reset_walk(void *state)
{
    memset(state, 0, sizeof(walk_state));
}

static int discard_json(void *ctx, const char *data, size_t len)
{
    (void)data;
    *(size_t *)ctx += len;
    return 0;
}

/* The streamed source and the one-pass file scan: after open, a buffer
 * that grows only for a frame larger than it, so nothing per record; and
 * rendering every record as JSON allocates nothing either. */
Test(alloc, streaming_scanning_and_rendering_make_no_allocation_per_record)
{
    mpw file;
    mpw_init(&file);
    build_trace(&file, 50000);
    char *path = tmp_file_with(file.buf, file.len);
    lct_reader *r;
    cr_assert_eq(lct_open(path, LCT_STREAM, &r, NULL), LCT_OK);
    unsigned long before = allocations;
    lct_record rec;
    size_t n = 0, out = 0;
    while (lct_next(r, &rec) == 1) {
        cr_assert_eq(lct_record_write_json(&rec, discard_json, &out), LCT_OK);
        n++;
    }
    cr_expect_eq(n, 50000);
    cr_expect_gt(out, n * 100);
    cr_expect_eq(allocations - before, 0, "%lu allocations while streaming",
                 allocations - before);

    walk_state states[2] = {{0}, {0}};
    void *ptrs[2] = {&states[0], &states[1]};
    lct_scan scan = {.threads = 2, .on_record = scan_walk, .states = ptrs,
        .on_reset = reset_walk};
    lct_stats st;
    before = allocations;
    cr_assert_eq(lct_scan_file(r, &scan, &st, NULL), LCT_OK);
    cr_expect_eq(st.records, 50000);
    /* The thread array, and each thread's buffer (one, or a few doublings
     * for its largest frame): a handful, not one per record. */
    cr_expect_leq(allocations - before, 8, "%lu allocations in a file scan",
                  allocations - before);
    lct_close(r);
    unlink(path);
    free(path);
    mpw_free(&file);
}
