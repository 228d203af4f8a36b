/*
 * test_lmcache.c - the typed accessors for LMCache's codec types, each in
 * its current and older forms, on frames written by the project's writer:
 * values, defaults, wrong shapes reported as LCT_ERR_TYPE with what was
 * found, layout bytes, the key hash, and the key iterator over records.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"

/* MARK: writing values */

static void object_key(lct_writer *w, unsigned char seed, int rank, int group,
                       const char *salt)
{
    unsigned char hash[4] = {seed, 1, 2, 3};
    write_object_key(w, hash, sizeof hash, rank, group, salt);
}

/* One tensor [a, b] of dtype, shapes as torch.Size, dtypes wrapped. */
static void layout(lct_writer *w, int a, int b, const char *dtype)
{
    lct_writer_codec(w, "MemoryLayoutDesc");
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "shapes");
    lct_writer_array(w, 1);
    lct_writer_codec(w, "torch.Size");
    lct_writer_array(w, 2);
    lct_writer_int(w, a);
    lct_writer_int(w, b);
    lct_writer_cstr(w, "dtypes");
    lct_writer_array(w, 1);
    lct_writer_codec(w, "torch.dtype");
    lct_writer_cstr(w, dtype);
}

static void enum_member(lct_writer *w, const char *tag, const char *name)
{
    lct_writer_codec(w, tag);
    lct_writer_cstr(w, name);
}

/* The records of the test trace, in order. */
enum {
    R_KEYS_LIST,   /* keys (list) + layout_desc: reserve_write today */
    R_KEYS_TUPLE,  /* keys as a tuple, no layout */
    R_SPEC,        /* a PrefetchRequestSpec with group layouts */
    R_SPEC_OLD,    /* the older spec: extra_count, one layout_desc */
    R_HANDLE,      /* a PrefetchHandle */
    R_NO_KEYS,
    R_BAD_KEYS,    /* keys: an int */
    R_BAD_KEY,     /* keys: [ObjectKey, 5] */
    R_TASK,        /* newer LMCache: a PrefetchTaskSpec of two groups */
    R_UNKNOWN,     /* ObjectKeys under a type this version does not read */
    R_COUNT
};

/* A GroupedObjectKeys of n keys (seeds from first) with an [a, b] layout. */
static void key_group(lct_writer *w, int group, int n, unsigned char first,
                      int a, int b)
{
    lct_writer_codec(w, "GroupedObjectKeys");
    lct_writer_map(w, 4);
    lct_writer_cstr(w, "keys");
    lct_writer_array(w, (uint32_t)n);
    for (int i = 0; i < n; i++)
        object_key(w, (unsigned char)(first + i), 0, group, NULL);
    lct_writer_cstr(w, "object_group_id");
    lct_writer_int(w, group);
    lct_writer_cstr(w, "layout_desc");
    layout(w, a, b, "torch.float16");
    lct_writer_cstr(w, "sliding_window_size");
    if (group)
        lct_writer_int(w, 4);
    else
        lct_writer_nil(w);
}

/* PrefetchTaskSpec: key_groups, num_kv_readers, fetching_policy and
 * lock_mode, as newer LMCache's submit_prefetch_task takes it. */
static void write_task(lct_writer *w)
{
    lct_writer_codec(w, "PrefetchTaskSpec");
    lct_writer_map(w, 4);
    lct_writer_cstr(w, "key_groups");
    lct_writer_array(w, 2);
    key_group(w, 0, 2, 20, 4, 8);  /* 64 bytes a key */
    key_group(w, 1, 3, 30, 1, 5);  /* 10 bytes a key */
    lct_writer_cstr(w, "num_kv_readers");
    lct_writer_int(w, 2);
    lct_writer_cstr(w, "fetching_policy");
    enum_member(w, "FetchingPolicy", "ALL_OR_NOTHING");
    lct_writer_cstr(w, "lock_mode");
    enum_member(w, "LockMode", "SHARED");
}

static void write_spec(lct_writer *w)
{
    lct_writer_codec(w, "PrefetchRequestSpec");
    lct_writer_map(w, 7);
    lct_writer_cstr(w, "keys");
    lct_writer_array(w, 2);
    object_key(w, 10, 0, 0, "salt");
    object_key(w, 11, 1, 1, NULL);
    lct_writer_cstr(w, "num_kv_readers");
    lct_writer_int(w, 4);
    lct_writer_cstr(w, "policy");
    enum_member(w, "TrimPolicy", "PREFIX");
    lct_writer_cstr(w, "attn_desc");
    lct_writer_codec(w, "AttnWindowDesc");
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "num_chunks_in_sw");
    lct_writer_array(w, 2);
    lct_writer_int(w, 3);
    lct_writer_int(w, 5);
    lct_writer_cstr(w, "world_size");
    lct_writer_int(w, 8);
    lct_writer_cstr(w, "group_layout_descs");
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "0");
    layout(w, 4, 8, "torch.float32");  /* 128 bytes */
    lct_writer_cstr(w, "1");
    layout(w, 2, 3, "torch.float8_e4m3fn"); /* 6 bytes */
    lct_writer_cstr(w, "mode");
    enum_member(w, "PrefetchMode", "LOOKUP");
    lct_writer_cstr(w, "generation");
    lct_writer_int(w, 7);
}

static void write_spec_old(lct_writer *w)
{
    lct_writer_codec(w, "PrefetchRequestSpec");
    lct_writer_map(w, 4);
    lct_writer_cstr(w, "keys");
    lct_writer_array(w, 1);
    object_key(w, 12, 0, -1, NULL);
    lct_writer_cstr(w, "extra_count");
    lct_writer_int(w, 2);
    lct_writer_cstr(w, "attn_desc");
    lct_writer_codec(w, "AttnWindowDesc");
    lct_writer_array(w, 1);
    lct_writer_int(w, 9);
    lct_writer_cstr(w, "layout_desc");
    layout(w, 10, 10, "torch.int64"); /* 800 bytes */
}

static void write_handle(lct_writer *w)
{
    lct_writer_codec(w, "PrefetchHandle");
    lct_writer_map(w, 5);
    lct_writer_cstr(w, "prefetch_request_id");
    lct_writer_int(w, 42);
    lct_writer_cstr(w, "external_request_id");
    lct_writer_cstr(w, "req-1");
    lct_writer_cstr(w, "l1_prefix_hit_count");
    lct_writer_int(w, 3);
    lct_writer_cstr(w, "submit_time");
    lct_writer_float64(w, 12.5);
    lct_writer_cstr(w, "generation");
    lct_writer_int(w, 2);
}

static void write_args(lct_writer *w, int r)
{
    switch (r) {
    case R_KEYS_LIST:
        lct_writer_map(w, 2);
        lct_writer_cstr(w, "keys");
        lct_writer_array(w, 3);
        object_key(w, 1, 0, -1, NULL);
        object_key(w, 2, 1, 3, "s");
        object_key(w, 1, 0, -1, NULL); /* the same key again */
        lct_writer_cstr(w, "layout_desc");
        layout(w, 2, 16, "torch.bfloat16"); /* 64 bytes */
        break;
    case R_KEYS_TUPLE:
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "keys");
        lct_writer_codec(w, "tuple");
        lct_writer_array(w, 1);
        object_key(w, 3, 0, -1, NULL);
        break;
    case R_SPEC:
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "spec");
        write_spec(w);
        break;
    case R_SPEC_OLD:
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "request");
        write_spec_old(w);
        break;
    case R_HANDLE:
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "handle");
        write_handle(w);
        break;
    case R_NO_KEYS:
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "x");
        lct_writer_int(w, 1);
        break;
    case R_BAD_KEYS:
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "keys");
        lct_writer_int(w, 5);
        break;
    case R_TASK:
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "spec");
        write_task(w);
        break;
    case R_UNKNOWN:
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "spec");
        lct_writer_codec(w, "PrefetchPlanV9");
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "some_keys");
        lct_writer_array(w, 1);
        object_key(w, 9, 0, 0, NULL);
        break;
    default:
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "keys");
        lct_writer_array(w, 2);
        object_key(w, 4, 0, -1, NULL);
        lct_writer_int(w, 5);
    }
}

static lct_reader *reader;
static lct_record records[R_COUNT];
static char *trace_path;

static void setup(void)
{
    lct_writer *w = tmp_trace_writer(&trace_path);
    for (int r = 0; r < R_COUNT; r++) {
        lct_writer_record_begin(w, r, r, "q", 1);
        write_args(w, r);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK, "record %d", r);
    }
    lct_writer_close(w);
    cr_assert_eq(lct_open(trace_path, 0, &reader, NULL), LCT_OK);
    for (int r = 0; r < R_COUNT; r++)
        cr_assert_eq(lct_next(reader, &records[r]), 1);
}

static void teardown(void)
{
    lct_close(reader);
    unlink(trace_path);
    free(trace_path);
}

TestSuite(lmcache, .init = setup, .fini = teardown);

static lct_value arg(int r, const char *name)
{
    lct_value v;
    cr_assert_eq(lct_map_find(records[r].args, name, &v), LCT_OK);
    return v;
}

static bool str_is(lct_str s, const char *text)
{
    return lct_str_eq(s, text);
}

/* MARK: types */

Test(lmcache, object_key_current_and_older_forms)
{
    lct_value keys, k;
    lct_iter it;
    lct_object_key key;
    keys = arg(R_KEYS_LIST, "keys");
    cr_assert_eq(lct_array_iter_init(keys, &it), LCT_OK);
    cr_assert_eq(lct_array_iter_next(&it, &k), 1);
    cr_assert_eq(lct_object_key_get(k, &key, NULL), LCT_OK);
    /* The older form: no object_group_id, no cache_salt. */
    cr_expect_eq(key.chunk_hash.len, 4);
    cr_expect_eq(key.chunk_hash.ptr[0], 1);
    cr_expect(str_is(key.model_name, "m"));
    cr_expect_eq(key.kv_rank, 0);
    cr_expect_eq(key.object_group_id, 0);
    cr_expect_eq(key.cache_salt.len, 0);
    cr_assert_eq(lct_array_iter_next(&it, &k), 1);
    cr_assert_eq(lct_object_key_get(k, &key, NULL), LCT_OK);
    cr_expect_eq(key.kv_rank, 1);
    cr_expect_eq(key.object_group_id, 3);
    cr_expect(str_is(key.cache_salt, "s"));
    /* The bare payload is accepted too. */
    lct_value payload;
    cr_assert(lct_value_codec(k, NULL, &payload));
    lct_object_key bare;
    cr_assert_eq(lct_object_key_get(payload, &bare, NULL), LCT_OK);
    cr_expect_eq(lct_object_key_hash(&bare), lct_object_key_hash(&key));
}

Test(lmcache, wrong_shapes_are_type_errors_saying_what_was_found)
{
    lct_error err;
    lct_object_key key;
    err.code = 0;
    cr_expect_eq(lct_object_key_get(arg(R_KEYS_LIST, "layout_desc"), &key,
                                     &err),
                 LCT_ERR_TYPE);
    cr_expect_eq(err.code, LCT_ERR_TYPE);
    cr_expect(strstr(err.message, "expected ObjectKey, found MemoryLayoutDesc"),
              "%s", err.message);
    cr_expect_eq(lct_object_key_get(arg(R_NO_KEYS, "x"), &key, &err),
                 LCT_ERR_TYPE);
    cr_expect(strstr(err.message, "found int"), "%s", err.message);
    lct_layout_desc l;
    cr_expect_eq(lct_layout_desc_get(arg(R_NO_KEYS, "x"), &l, &err),
                 LCT_ERR_TYPE);
    lct_str name;
    cr_expect_eq(lct_enum_get(arg(R_KEYS_LIST, "layout_desc"), "TrimPolicy",
                              &name, &err),
                 LCT_ERR_TYPE);
    lct_prefetch_spec spec;
    cr_expect_eq(lct_prefetch_spec_get(arg(R_HANDLE, "handle"), &spec, &err),
                 LCT_ERR_TYPE);
    cr_expect(strstr(err.message, "found PrefetchHandle"), "%s", err.message);
}

Test(lmcache, key_hash_is_stable_and_covers_every_field)
{
    static const unsigned char h[] = {1, 2, 3};
    lct_object_key a = {{h, 3}, {"m", 1}, 0, 0, {"", 0}};
    /* The documented function, pinned (the value was computed separately,
     * in Python, from lct.h's description): obj_ids must not move between
     * releases. */
    cr_expect_eq(lct_object_key_hash(&a), UINT64_C(0xeebb351d945dcc24),
                 "%#llx", (unsigned long long)lct_object_key_hash(&a));
    lct_object_key b = a;
    b.kv_rank = 1;
    cr_expect_neq(lct_object_key_hash(&a), lct_object_key_hash(&b));
    b = a;
    b.object_group_id = 1;
    cr_expect_neq(lct_object_key_hash(&a), lct_object_key_hash(&b));
    b = a;
    b.cache_salt = (lct_str){"x", 1};
    cr_expect_neq(lct_object_key_hash(&a), lct_object_key_hash(&b));
    b = a;
    b.model_name = (lct_str){"n", 1};
    cr_expect_neq(lct_object_key_hash(&a), lct_object_key_hash(&b));
    b = a;
    b.chunk_hash.len = 2;
    cr_expect_neq(lct_object_key_hash(&a), lct_object_key_hash(&b));
}

/* lct.h's description of the key hash, word by word from the laid-out
 * bytes, as simply as it can be written. */
static uint64_t documented_hash(const lct_object_key *k)
{
    unsigned char buf[1024] = {0};
    size_t n = 0;
    const struct {
        const void *p;
        size_t len;
    } fields[] = {{k->chunk_hash.ptr, k->chunk_hash.len},
                  {k->model_name.ptr, k->model_name.len},
                  {k->cache_salt.ptr, k->cache_salt.len}};
    for (int f = 0; f < 3; f++) {
        if (f == 2)
            for (int which = 0; which < 2; which++) {
                uint64_t x = (uint64_t)(which ? k->object_group_id : k->kv_rank);
                for (int i = 0; i < 8; i++)
                    buf[n++] = (unsigned char)(x >> (8 * i));
            }
        for (int i = 0; i < 4; i++)
            buf[n++] = (unsigned char)(fields[f].len >> (8 * i));
        if (fields[f].len)
            memcpy(buf + n, fields[f].p, fields[f].len);
        n += fields[f].len;
    }
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (size_t at = 0; at < n; at += 8) {
        uint64_t w = 0;
        for (int i = 0; i < 8; i++)
            w |= (uint64_t)buf[at + (size_t)i] << (8 * i);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    h ^= n;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9u;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebu;
    return h ^ (h >> 31);
}

/* Every word boundary a field can start or end on, each field from empty
 * to past the lengths keys have (the hash puts its words together in
 * registers, field piece by field piece). */
Test(lmcache, key_hash_is_the_documented_one_at_every_field_length)
{
    unsigned char bytes[300];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (unsigned char)(i * 131 + 7);
    static const int64_t ranks[] = {0, 1, -1, INT64_MAX, INT64_MIN};
    for (size_t c = 0; c <= 70; c++)
        for (size_t m = 0; m <= 40; m++)
            for (size_t salt = 0; salt <= 17; salt += (salt < 9 ? 1 : 8)) {
                lct_object_key k = {{c ? bytes : NULL, c},
                                    {m ? (const char *)bytes + 100 : NULL, m},
                                    ranks[(c + m) % 5],
                                    ranks[(c + salt) % 5] ^ (int64_t)m,
                                    {salt ? (const char *)bytes + 200 : NULL,
                                     salt}};
                uint64_t want = documented_hash(&k);
                cr_assert_eq(lct_object_key_hash(&k), want,
                             "chunk %zu model %zu salt %zu", c, m, salt);
            }
    lct_object_key big = {{bytes, 300}, {(const char *)bytes, 250}, 3, 4,
                          {(const char *)bytes + 1, 299}};
    cr_expect_eq(lct_object_key_hash(&big), documented_hash(&big));
}

Test(lmcache, layout_bytes_and_dtype_sizes)
{
    lct_layout_desc l;
    uint64_t bytes;
    cr_assert_eq(lct_layout_desc_get(arg(R_KEYS_LIST, "layout_desc"), &l,
                                     NULL),
                 LCT_OK);
    cr_expect_eq(l.count, 1);
    cr_assert_eq(lct_layout_bytes(&l, &bytes, NULL), LCT_OK);
    cr_expect_eq(bytes, 2 * 16 * 2);
    static const struct {
        const char *name;
        unsigned size;
    } cases[] = {{"torch.bfloat16", 2}, {"torch.float16", 2},
                 {"torch.float32", 4},  {"torch.float64", 8},
                 {"torch.float8_e4m3fn", 1}, {"torch.float8_e5m2", 1},
                 {"torch.int8", 1},     {"torch.uint8", 1},
                 {"torch.bool", 1},     {"torch.int16", 2},
                 {"torch.int32", 4},    {"torch.int64", 8},
                 {"bfloat16", 2}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned size = 0;
        lct_str s = {cases[i].name, strlen(cases[i].name)};
        cr_expect_eq(lct_dtype_size(s, &size), LCT_OK, "%s", cases[i].name);
        cr_expect_eq(size, cases[i].size, "%s", cases[i].name);
    }
    unsigned size;
    cr_expect_eq(lct_dtype_size((lct_str){"torch.complex64", 15}, &size),
                 LCT_ERR_TYPE);
    cr_expect_eq(lct_dtype_size((lct_str){"torch.", 6}, &size), LCT_ERR_TYPE);
}

Test(lmcache, unknown_dtype_is_an_error_not_a_guess)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    lct_writer_record_begin(w, 0, 0, "q", 1);
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "a");
    layout(w, 2, 2, "torch.complex64");
    lct_writer_cstr(w, "b"); /* two shapes, one dtype */
    lct_writer_codec(w, "MemoryLayoutDesc");
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "shapes");
    lct_writer_array(w, 2);
    lct_writer_array(w, 0);
    lct_writer_array(w, 0);
    lct_writer_cstr(w, "dtypes");
    lct_writer_array(w, 1);
    lct_writer_cstr(w, "torch.int8");
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    lct_writer_close(w);
    lct_reader *r;
    lct_record rec;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    cr_assert_eq(lct_next(r, &rec), 1);
    lct_value v;
    lct_layout_desc l;
    lct_error err;
    uint64_t bytes = 99;
    cr_assert_eq(lct_map_find(rec.args, "a", &v), LCT_OK);
    cr_assert_eq(lct_layout_desc_get(v, &l, NULL), LCT_OK);
    cr_expect_eq(lct_layout_bytes(&l, &bytes, &err), LCT_ERR_TYPE);
    cr_expect(strstr(err.message, "unknown dtype 'torch.complex64'"), "%s",
              err.message);
    cr_assert_eq(lct_map_find(rec.args, "b", &v), LCT_OK);
    cr_expect_eq(lct_layout_desc_get(v, &l, &err), LCT_ERR_TYPE);
    cr_expect(strstr(err.message, "2 shapes but 1 dtypes"), "%s", err.message);
    lct_close(r);
    unlink(path);
    free(path);
}

Test(lmcache, prefetch_spec_current_form)
{
    lct_prefetch_spec s;
    cr_assert_eq(lct_prefetch_spec_get(arg(R_SPEC, "spec"), &s, NULL), LCT_OK);
    cr_expect_eq(s.num_kv_readers, 4);
    cr_expect(str_is(s.policy, "PREFIX"));
    cr_expect(str_is(s.mode, "LOOKUP"));
    cr_expect_eq(s.generation, 7);
    cr_expect(s.has_attn);
    cr_expect_eq(s.attn.world_size, 8);
    lct_iter it;
    cr_assert_eq(lct_array_iter_init(s.attn.num_chunks_in_sw, &it), LCT_OK);
    cr_expect_eq(it.count, 2);
    cr_assert_eq(lct_array_iter_init(s.keys, &it), LCT_OK);
    cr_expect_eq(it.count, 2);
    lct_layout_desc l;
    uint64_t bytes;
    cr_assert_eq(lct_prefetch_spec_layout(&s, 1, &l, NULL), LCT_OK);
    cr_assert_eq(lct_layout_bytes(&l, &bytes, NULL), LCT_OK);
    cr_expect_eq(bytes, 6);
    cr_assert_eq(lct_prefetch_spec_layout(&s, 0, &l, NULL), LCT_OK);
    cr_assert_eq(lct_layout_bytes(&l, &bytes, NULL), LCT_OK);
    cr_expect_eq(bytes, 128, "group 0 is the first entry");
    cr_expect_eq(lct_prefetch_spec_layout(&s, 2, &l, NULL), LCT_ERR_NOT_FOUND);
    cr_expect_eq(lct_prefetch_spec_layout(&s, -1, &l, NULL), LCT_ERR_NOT_FOUND);
    cr_expect_eq(lct_prefetch_spec_layout(&s, 10, &l, NULL), LCT_ERR_NOT_FOUND,
                 "\"10\" is not \"1\"");
}

Test(lmcache, prefetch_spec_and_attn_window_older_forms)
{
    lct_prefetch_spec s;
    cr_assert_eq(lct_prefetch_spec_get(arg(R_SPEC_OLD, "request"), &s, NULL),
                 LCT_OK);
    cr_expect_eq(s.num_kv_readers, 3, "extra_count 2 is 3 readers");
    cr_expect_eq(s.policy.len, 0);
    cr_expect(s.has_attn);
    cr_expect_eq(s.attn.world_size, 0);
    lct_iter it;
    cr_assert_eq(lct_array_iter_init(s.attn.num_chunks_in_sw, &it), LCT_OK);
    cr_expect_eq(it.count, 1);
    cr_expect_null(s.group_layouts.ptr);
    lct_layout_desc l;
    uint64_t bytes;
    cr_assert_eq(lct_prefetch_spec_layout(&s, 5, &l, NULL), LCT_OK);
    cr_assert_eq(lct_layout_bytes(&l, &bytes, NULL), LCT_OK);
    cr_expect_eq(bytes, 800);
}

Test(lmcache, prefetch_handle_enums_and_lists)
{
    lct_prefetch_handle h;
    cr_assert_eq(lct_prefetch_handle_get(arg(R_HANDLE, "handle"), &h, NULL),
                 LCT_OK);
    int64_t id;
    cr_assert_eq(lct_value_get_int64(h.prefetch_request_id, &id), LCT_OK);
    cr_expect_eq(id, 42);
    cr_expect(lct_value_str_eq(h.external_request_id, "req-1"));
    cr_expect_eq(h.l1_prefix_hit_count, 3);
    cr_expect_eq(h.submit_time, 12.5);
    cr_expect_eq(h.generation, 2);
    cr_expect_null(h.l2_orig_indices.ptr);
    lct_value array;
    uint32_t n;
    cr_assert_eq(lct_list_get(arg(R_KEYS_TUPLE, "keys"), &array, &n, NULL),
                 LCT_OK);
    cr_expect_eq(n, 1);
    lct_error err;
    cr_expect_eq(lct_list_get(arg(R_KEYS_LIST, "layout_desc"), &array, &n,
                              &err),
                 LCT_ERR_TYPE);
    lct_str dtype;
    lct_layout_desc l;
    cr_assert_eq(lct_layout_desc_get(arg(R_KEYS_LIST, "layout_desc"), &l,
                                     NULL),
                 LCT_OK);
    lct_value d;
    cr_assert_eq(lct_array_iter_init(l.dtypes, &(lct_iter){0}), LCT_OK);
    lct_iter it;
    lct_array_iter_init(l.dtypes, &it);
    cr_assert_eq(lct_array_iter_next(&it, &d), 1);
    cr_assert_eq(lct_dtype_get(d, &dtype, NULL), LCT_OK);
    cr_expect(str_is(dtype, "torch.bfloat16"));
}

/* MARK: the key iterator */

static int keys_of(int r, uint64_t *hashes, uint64_t *bytes, int max,
                   lct_status *status)
{
    lct_key_iter it;
    *status = lct_key_iter_init(&records[r], &it, NULL);
    if (*status != LCT_OK)
        return 0;
    lct_object_key k;
    int n = 0, rc;
    while (n < max && (rc = lct_key_iter_next(&it, &k, &bytes[n], NULL)) == 1)
        hashes[n++] = lct_object_key_hash(&k);
    if (n < max && rc < 0)
        *status = rc;
    return n;
}

Test(lmcache, key_iterator_over_records)
{
    uint64_t h[8], b[8];
    lct_status st;
    cr_expect_eq(keys_of(R_KEYS_LIST, h, b, 8, &st), 3);
    cr_expect_eq(st, LCT_OK);
    cr_expect_eq(h[0], h[2], "the same key twice");
    cr_expect_neq(h[0], h[1]);
    cr_expect(b[0] == 64 && b[1] == 64 && b[2] == 64);
    cr_expect_eq(keys_of(R_KEYS_TUPLE, h, b, 8, &st), 1);
    cr_expect_eq(b[0], 0, "no layout: unknown");
    cr_expect_eq(keys_of(R_SPEC, h, b, 8, &st), 2);
    cr_expect_eq(b[0], 128, "group 0's layout");
    cr_expect_eq(b[1], 6, "group 1's layout");
    cr_expect_eq(keys_of(R_SPEC_OLD, h, b, 8, &st), 1);
    cr_expect_eq(b[0], 800);
    cr_expect_eq(keys_of(R_NO_KEYS, h, b, 8, &st), 0);
    cr_expect_eq(st, LCT_OK);
    cr_expect_eq(keys_of(R_HANDLE, h, b, 8, &st), 0);
    cr_expect_eq(keys_of(R_BAD_KEYS, h, b, 8, &st), 0);
    cr_expect_eq(st, LCT_ERR_TYPE);
    cr_expect_eq(keys_of(R_BAD_KEY, h, b, 8, &st), 1);
    cr_expect_eq(st, LCT_ERR_TYPE);
}

/* Close w and open the trace it wrote. */
static lct_reader *reopen(lct_writer *w, const char *path)
{
    lct_reader *r;
    lct_writer_close(w);
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    return r;
}

/* The next record of r, call i, and its key iterator. */
static void next_call(lct_reader *r, lct_record *rec, lct_key_iter *it, int i)
{
    cr_assert_eq(lct_next(r, rec), 1, "call %d", i);
    cr_assert_eq(lct_key_iter_init(rec, it, NULL), LCT_OK, "call %d", i);
}

/* Calls whose layout comes before their keys, one after another: a
 * layout sized once is stepped over by its bytes in the next call that
 * holds it, never taken for one that only begins like it. */
Test(lmcache, a_known_layout_is_stepped_over_only_where_it_is_whole)
{
    static const struct {
        int a;
        const char *dtype;
        uint64_t bytes;
    } calls[] = {{4, "torch.float32", 128}, {4, "torch.float16", 64},
                 {4, "torch.float32", 128}, {40, "torch.float32", 1280},
                 {4, "torch.float32", 128}};
    enum { N = sizeof calls / sizeof *calls };
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    for (int i = 0; i < N; i++) {
        lct_writer_record_begin(w, i, 1.7e9 + i, "StorageManager.reserve_write",
                                3);
        lct_writer_map(w, 3);
        lct_writer_cstr(w, "layout_desc");
        layout(w, calls[i].a, 8, calls[i].dtype);
        lct_writer_cstr(w, "mode");
        lct_writer_cstr(w, "new");
        lct_writer_cstr(w, "keys");
        lct_writer_array(w, 2);
        object_key(w, (unsigned char)(2 * i), 0, -1, NULL);
        object_key(w, (unsigned char)(2 * i + 1), 1, -1, NULL);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_reader *r = reopen(w, path);
    lct_record rec;
    for (int i = 0; i < N; i++) {
        lct_key_iter it;
        lct_object_key k;
        uint64_t bytes;
        next_call(r, &rec, &it, i);
        cr_expect(it.has_layout);
        cr_expect_eq(it.layout_bytes, calls[i].bytes, "call %d", i);
        for (int j = 0; j < 2; j++) {
            cr_assert_eq(lct_key_iter_next(&it, &k, &bytes, NULL), 1,
                         "call %d key %d", i, j);
            cr_expect_eq(k.chunk_hash.ptr[0], 2 * i + j);
            cr_expect_eq(k.kv_rank, j);
        }
        cr_expect_eq(lct_key_iter_next(&it, &k, &bytes, NULL), 0);
    }
    lct_close(r);
    unlink(path);
    free(path);
}

/* Spec calls whose attn_desc and group layouts repeat, change by a byte,
 * and come back: each call's window and its keys' bytes are its own (a
 * value met before is stepped over and decoded by its bytes). */
Test(lmcache, repeated_spec_values_are_read_as_each_call_holds_them)
{
    static const struct {
        int world, window, a;
        uint64_t bytes;
    } calls[] = {{2, -1, 4, 32}, {2, -1, 4, 32}, {3, -1, 5, 40},
                 {2, -1, 4, 32}, {2, 7, 4, 32},  {2, -1, 4, 32}};
    enum { N = sizeof calls / sizeof *calls };
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    for (int i = 0; i < N; i++) {
        lct_writer_record_begin(w, i, 1.7e9 + i,
                                "StorageManager.submit_prefetch_task", 1);
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "spec");
        lct_writer_codec(w, "PrefetchRequestSpec");
        lct_writer_map(w, 3);
        lct_writer_cstr(w, "attn_desc");
        lct_writer_codec(w, "AttnWindowDesc");
        lct_writer_map(w, 2);
        lct_writer_cstr(w, "num_chunks_in_sw");
        lct_writer_array(w, calls[i].window < 0 ? 1 : 2);
        lct_writer_int(w, -1);
        if (calls[i].window >= 0)
            lct_writer_int(w, calls[i].window);
        lct_writer_cstr(w, "world_size");
        lct_writer_int(w, calls[i].world);
        lct_writer_cstr(w, "group_layout_descs");
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "0");
        layout(w, calls[i].a, 2, "torch.float32");
        lct_writer_cstr(w, "keys");
        lct_writer_array(w, 1);
        object_key(w, (unsigned char)i, 0, 0, NULL);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_reader *r = reopen(w, path);
    lct_record rec;
    for (int i = 0; i < N; i++) {
        lct_key_iter it;
        lct_object_key k;
        uint64_t bytes;
        next_call(r, &rec, &it, i);
        cr_assert(it.from_spec && it.spec.has_attn);
        cr_expect_eq(it.spec.attn.world_size, calls[i].world, "call %d", i);
        lct_iter sw;
        cr_assert_eq(lct_array_iter_init(it.spec.attn.num_chunks_in_sw, &sw),
                     LCT_OK);
        cr_expect_eq(sw.count, calls[i].window < 0 ? 1u : 2u, "call %d", i);
        cr_expect(it.spec.attn.num_chunks_in_sw.ptr >= rec.args.ptr &&
                      it.spec.attn.num_chunks_in_sw.ptr <
                          rec.args.ptr + rec.args.len,
                  "the window is a view into call %d", i);
        cr_assert_eq(lct_key_iter_next(&it, &k, &bytes, NULL), 1);
        cr_expect_eq(bytes, calls[i].bytes, "call %d", i);
        cr_expect_eq(k.chunk_hash.ptr[0], i);
        cr_expect_eq(lct_key_iter_next(&it, &k, &bytes, NULL), 0);
    }
    lct_close(r);
    unlink(path);
    free(path);
}

/* Newer LMCache (issue 19): submit_prefetch_task takes a PrefetchTaskSpec
 * of GroupedObjectKeys; each group's layout gives its keys' bytes. */
Test(lmcache, prefetch_task_spec_and_key_groups)
{
    lct_prefetch_task t;
    lct_error err;
    cr_assert_eq(lct_prefetch_task_get(arg(R_TASK, "spec"), &t, &err), LCT_OK,
                 "%s", err.message);
    cr_expect_eq(t.ngroups, 2);
    cr_expect_eq(t.num_kv_readers, 2);
    cr_expect(str_is(t.fetching_policy_name, "ALL_OR_NOTHING"));
    cr_expect(str_is(t.lock_mode_name, "SHARED"));
    lct_iter it;
    lct_value g;
    cr_assert_eq(lct_array_iter_init(t.key_groups, &it), LCT_OK);
    static const struct { uint32_t count; int64_t id, window; uint64_t bytes; }
        want[] = {{2, 0, 0, 64}, {3, 1, 4, 10}};
    for (int i = 0; lct_array_iter_next(&it, &g) == 1; i++) {
        lct_key_group kg;
        cr_assert_eq(lct_key_group_get(g, &kg, &err), LCT_OK, "%s",
                     err.message);
        cr_expect_eq(kg.count, want[i].count);
        cr_expect_eq(kg.object_group_id, want[i].id);
        cr_expect_eq(kg.sliding_window_size, want[i].window);
        uint64_t bytes;
        cr_expect_eq(lct_key_group_bytes(&kg, &bytes, NULL), LCT_OK);
        cr_expect_eq(bytes, want[i].bytes);
    }
    /* A request spec is not a task spec, and says what it found. */
    cr_expect_eq(lct_prefetch_task_get(arg(R_SPEC, "spec"), &t, &err),
                 LCT_ERR_TYPE);
    cr_expect(strstr(err.message, "PrefetchRequestSpec"), "%s", err.message);
}

Test(lmcache, key_iterator_reads_task_specs_and_names_unread_types)
{
    uint64_t h[8], b[8];
    lct_status st;
    cr_expect_eq(keys_of(R_TASK, h, b, 8, &st), 5, "every group's keys");
    cr_expect_eq(st, LCT_OK);
    static const uint64_t bytes[] = {64, 64, 10, 10, 10};
    for (int i = 0; i < 5; i++)
        cr_expect_eq(b[i], bytes[i], "key %d", i);
    lct_str tag;
    cr_expect(!lct_record_unread_keys(&records[R_TASK], NULL));
    cr_expect(!lct_record_unread_keys(&records[R_SPEC], NULL));
    cr_expect(!lct_record_unread_keys(&records[R_KEYS_LIST], NULL));
    cr_expect_eq(keys_of(R_UNKNOWN, h, b, 8, &st), 0);
    cr_expect(lct_record_unread_keys(&records[R_UNKNOWN], &tag));
    cr_expect(str_is(tag, "PrefetchPlanV9"));
}

/* MARK: - the key iterator's fast path against the general decoder */

enum { SHAPES = 14 };

/* Key `shape`: the encoder's usual forms (which the iterator reads in one
 * step) and near misses of them (which it must leave to the general
 * decoder): the answers must agree either way. */
static void odd_key(lct_writer *w, int shape)
{
    static const char llama[] = "meta-llama/Llama-3.1-8B-Instruct"; /* 32 */
    unsigned char hash[32] = {1, 2, 3, (unsigned char)shape};
    unsigned pairs = shape == 6 ? 3 : shape >= 2 && shape <= 4 ? 5
                   : shape == 9 || shape == 10 || shape == 11 ? 5 : 4;
    lct_writer_codec(w, "ObjectKey");
    lct_writer_map(w, pairs);
    lct_writer_cstr(w, "chunk_hash");
    lct_writer_bin(w, hash, shape == 12 ? 31 : 32);
    lct_writer_cstr(w, "model_name");
    if (shape == 13) /* a short name as a str16: valid, not the usual */
        lct_writer_value(w, (lct_value){(const unsigned char *)"\xda\x00\x01m",
                                        4});
    else
        lct_writer_cstr(w, shape == 1 || shape == 5 ? llama : "Qwen/Qwen3-8B");
    lct_writer_cstr(w, "kv_rank");
    lct_writer_int(w, shape == 8 ? 200 : 3);
    if (shape == 10) { /* the salt before the group */
        lct_writer_cstr(w, "cache_salt");
        lct_writer_cstr(w, "s");
    }
    if (shape != 6) {
        lct_writer_cstr(w, "object_group_id");
        lct_writer_int(w, shape == 7 ? -1 : 2);
    }
    if (shape >= 2 && shape <= 4) {
        lct_writer_cstr(w, "cache_salt");
        if (shape == 2)
            lct_writer_cstr(w, "salt");
        else if (shape == 3)
            lct_writer_nil(w);
        else
            lct_writer_cstr(w, "a salt of forty bytes, a str8 not fixstr");
    }
    if (shape == 9) { /* kv_rank again: the last one wins */
        lct_writer_cstr(w, "kv_rank");
        lct_writer_int(w, 5);
    }
    if (shape == 11) {
        lct_writer_cstr(w, "extra");
        lct_writer_int(w, 1);
    }
}

static bool same_key(const lct_object_key *a, const lct_object_key *b)
{
    return a->chunk_hash.len == b->chunk_hash.len &&
           memcmp(a->chunk_hash.ptr, b->chunk_hash.ptr, a->chunk_hash.len) ==
               0 &&
           a->model_name.len == b->model_name.len &&
           memcmp(a->model_name.ptr, b->model_name.ptr, a->model_name.len) ==
               0 &&
           a->kv_rank == b->kv_rank &&
           a->object_group_id == b->object_group_id &&
           a->cache_salt.len == b->cache_salt.len &&
           memcmp(a->cache_salt.ptr, b->cache_salt.ptr, a->cache_salt.len) ==
               0 &&
           lct_object_key_hash(a) == lct_object_key_hash(b);
}

/* Every key the decoder's iterator over a keys list gives, against the
 * key iterator's, in order, and nothing more from the key iterator;
 * returns how many (which: the record, named in the messages). */
static int expect_decoder_keys(lct_iter *general, lct_key_iter *fast,
                               int which)
{
    int n = 0;
    lct_value elem;
    while (lct_array_iter_next(general, &elem) == 1) {
        lct_object_key x, y;
        cr_assert_eq(lct_object_key_get(elem, &x, NULL), LCT_OK,
                     "record %d key %d", which, n);
        cr_assert_eq(lct_key_iter_next(fast, &y, NULL, NULL), 1,
                     "record %d key %d", which, n);
        cr_expect(same_key(&x, &y), "record %d key %d", which, n);
        n++;
    }
    cr_expect_eq(lct_key_iter_next(fast, NULL, NULL, NULL), 0,
                 "record %d", which);
    return n;
}

Test(lmcache, key_iterator_agrees_with_the_decoder_on_every_encoding)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    for (int shape = 0; shape < SHAPES; shape++) {
        lct_writer_record_begin(w, shape, 0, "S.submit_prefetch_task", 22);
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "keys");
        lct_writer_array(w, 3); /* the shape between two usual keys */
        odd_key(w, 0);
        odd_key(w, shape);
        odd_key(w, 5);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK, "shape %d", shape);
    }
    lct_writer_close(w);
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    lct_record rec;
    int shape = 0;
    while (lct_next(r, &rec) == 1) {
        lct_value keys, array;
        lct_iter general;
        lct_key_iter fast;
        cr_assert_eq(lct_map_find(rec.args, "keys", &keys), LCT_OK);
        cr_assert_eq(lct_list_get(keys, &array, NULL, NULL), LCT_OK);
        cr_assert_eq(lct_array_iter_init(array, &general), LCT_OK);
        cr_assert_eq(lct_key_iter_init(&rec, &fast, NULL), LCT_OK);
        cr_expect_eq(expect_decoder_keys(&general, &fast, shape), 3);
        shape++;
    }
    cr_expect_eq(shape, SHAPES);
    lct_close(r);
    unlink(path);
    free(path);
}

Test(lmcache, usual_keys_decode_to_what_was_written)
{
    /* Pins the fast path's own answers, not only its agreement. */
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    lct_writer_record_begin(w, 0, 0, "S.reserve_write", 15);
    lct_writer_map(w, 1);
    lct_writer_cstr(w, "keys");
    lct_writer_array(w, 4);
    odd_key(w, 1); /* str8 model name */
    odd_key(w, 2); /* fixstr salt */
    odd_key(w, 3); /* nil salt */
    odd_key(w, 6); /* no object_group_id */
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    lct_writer_close(w);
    lct_reader *r;
    lct_record rec;
    lct_key_iter it;
    lct_object_key k;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    cr_assert_eq(lct_next(r, &rec), 1);
    cr_assert_eq(lct_key_iter_init(&rec, &it, NULL), LCT_OK);
    cr_assert_eq(lct_key_iter_next(&it, &k, NULL, NULL), 1);
    cr_expect(lct_str_eq(k.model_name, "meta-llama/Llama-3.1-8B-Instruct"));
    cr_expect_eq(k.chunk_hash.len, 32);
    cr_expect_eq(k.chunk_hash.ptr[3], 1);
    cr_expect_eq(k.kv_rank, 3);
    cr_expect_eq(k.object_group_id, 2);
    cr_expect_eq(k.cache_salt.len, 0);
    cr_assert_eq(lct_key_iter_next(&it, &k, NULL, NULL), 1);
    cr_expect(lct_str_eq(k.cache_salt, "salt"));
    cr_expect(lct_str_eq(k.model_name, "Qwen/Qwen3-8B"));
    cr_assert_eq(lct_key_iter_next(&it, &k, NULL, NULL), 1);
    cr_expect_eq(k.cache_salt.len, 0);
    cr_expect_eq(k.object_group_id, 2);
    cr_assert_eq(lct_key_iter_next(&it, &k, NULL, NULL), 1);
    cr_expect_eq(k.object_group_id, 0);
    cr_expect_eq(k.kv_rank, 3);
    cr_expect_eq(lct_key_iter_next(&it, &k, NULL, NULL), 0);
    lct_close(r);
    unlink(path);
    free(path);
}

/* A PrefetchRequestSpec of n keys (odd_key shapes i % SHAPES, so the
 * usual forms and near misses alike, more than the iterator reads ahead
 * when n > LCT_KEY_ITER_CACHE) with the encoder's field order. */
static void spec_of(lct_writer *w, int n)
{
    lct_writer_codec(w, "PrefetchRequestSpec");
    lct_writer_map(w, 3);
    lct_writer_cstr(w, "keys");
    lct_writer_array(w, (uint32_t)n);
    for (int i = 0; i < n; i++)
        odd_key(w, i % SHAPES);
    lct_writer_cstr(w, "num_kv_readers");
    lct_writer_int(w, 1);
    lct_writer_cstr(w, "policy");
    enum_member(w, "TrimPolicy", "PREFIX");
}

enum { SPEC_AMONG = 6 };

/* Arrangement a of a spec among other arguments; returns how many keys
 * the call has (a flat `keys` list wins over a spec). */
static int spec_among(lct_writer *w, int a)
{
    switch (a) {
    case 0: /* as LMCache records it: the spec, then two more */
        lct_writer_map(w, 3);
        lct_writer_cstr(w, "spec");
        spec_of(w, 70);
        lct_writer_cstr(w, "external_request_id");
        lct_writer_cstr(w, "req-1");
        lct_writer_cstr(w, "skip_l2");
        lct_writer_bool(w, true);
        return 70;
    case 1: /* a nil `keys` after the spec: the spec's keys still */
        lct_writer_map(w, 2);
        lct_writer_cstr(w, "spec");
        spec_of(w, 5);
        lct_writer_cstr(w, "keys");
        lct_writer_nil(w);
        return 5;
    case 2: /* and before it */
        lct_writer_map(w, 2);
        lct_writer_cstr(w, "keys");
        lct_writer_nil(w);
        lct_writer_cstr(w, "spec");
        spec_of(w, 5);
        return 5;
    case 3: /* a flat list after the spec wins */
        lct_writer_map(w, 2);
        lct_writer_cstr(w, "spec");
        spec_of(w, 5);
        lct_writer_cstr(w, "keys");
        lct_writer_array(w, 1);
        odd_key(w, 0);
        return 1;
    case 4: /* two specs: the first is the call's */
        lct_writer_map(w, 3);
        lct_writer_cstr(w, "a");
        spec_of(w, 3);
        lct_writer_cstr(w, "b");
        spec_of(w, 4);
        lct_writer_cstr(w, "x");
        lct_writer_int(w, 1);
        return 3;
    default: /* the spec last, after another argument */
        lct_writer_map(w, 2);
        lct_writer_cstr(w, "x");
        lct_writer_int(w, 1);
        lct_writer_cstr(w, "spec");
        spec_of(w, 66);
        return 66;
    }
}

/* The keys the generic decoder finds: the `keys` list if one is there
 * (and not nil), else the first argument that is a spec's. */
static lct_iter keys_by_decoder(const lct_record *rec)
{
    lct_value v, array;
    lct_iter it = {0}, args;
    if (lct_map_find(rec->args, "keys", &v) == LCT_OK &&
        !lct_value_is_nil(v)) {
        cr_assert_eq(lct_list_get(v, &array, NULL, NULL), LCT_OK);
        cr_assert_eq(lct_array_iter_init(array, &it), LCT_OK);
        return it;
    }
    lct_value k;
    lct_prefetch_spec spec;
    cr_assert_eq(lct_map_iter_init(rec->args, &args), LCT_OK);
    while (lct_map_iter_next(&args, &k, &v) == 1)
        if (lct_prefetch_spec_get(v, &spec, NULL) == LCT_OK) {
            cr_assert_eq(lct_array_iter_init(spec.keys, &it), LCT_OK);
            return it;
        }
    cr_assert_fail("no keys");
    return it;
}

/* The key iterator reads a spec where the arguments' scan meets it and
 * takes the spec's end from that read: the keys are the decoder's
 * wherever the spec sits, whatever follows it. */
Test(lmcache, a_spec_gives_its_keys_wherever_it_sits_among_arguments)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    int want[SPEC_AMONG];
    for (int a = 0; a < SPEC_AMONG; a++) {
        lct_writer_record_begin(w, a, 0, "S.submit_prefetch_task", 22);
        want[a] = spec_among(w, a);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK, "arrangement %d", a);
    }
    lct_writer_close(w);
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    lct_record rec;
    int a = 0;
    while (lct_next(r, &rec) == 1) {
        lct_iter general = keys_by_decoder(&rec);
        lct_key_iter fast;
        cr_assert_eq(lct_key_iter_init(&rec, &fast, NULL), LCT_OK, "%d", a);
        cr_expect_eq(expect_decoder_keys(&general, &fast, a), want[a],
                     "arrangement %d", a);
        if (a == 0) {
            cr_expect(lct_str_eq(fast.policy, "PREFIX"));
            cr_expect(fast.skip_l2, "the argument after the spec is read");
        }
        a++;
    }
    cr_expect_eq(a, SPEC_AMONG);
    lct_close(r);
    unlink(path);
    free(path);
}
