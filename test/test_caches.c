/*
 * test_caches.c - a record's fate does not depend on what was read
 * before it.  The library keeps state between records, files and
 * readers (the walker's key templates, the layouts, attn_descs and
 * values the key layer remembers, all per thread); each must give the
 * answer a cold read gives.  Every hostile record shape below is read
 * right after every record shape that fills those caches, in both
 * orders, through every way in: the mapping, LCT_STREAM, a buffer, a
 * pipe, the parallel scan, and the lct tool (--mmap, --stream, -j 2, a
 * pipe).  A record is judged twice: by the oracle (test/support/oracle.c,
 * the reference decoder's rules written plainly), and against a cold
 * read of it alone in a fresh thread (whose caches are empty): its JSON
 * and its keys must be the same.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "lmcache/keys_internal.h"
#include "msgpack/key_templates_internal.h"
#include "mpw.h"
#include "oracle.h"
#include "run.h"

#define RW "lmcache.v1.distributed.storage_manager.StorageManager.reserve_write"
#define SP "lmcache.v1.distributed.storage_manager.StorageManager." \
           "submit_prefetch_task"

/* MARK: key shapes, fillers and hostile records */

/* The key shapes a template is learnt from: lct gen's, the 32-byte model
 * name with several ranks and groups, a cache_salt, and a tail too short
 * for a template (decided by the general path every time). */
static const mpw_objectkey_shape key_shapes[] = {
    {"ObjectKey", 3, 32, "Qwen/Qwen3-8B", 1, 0, false},
    {"ObjectKey", 4, 32, "meta-llama/Llama-3.1-8B-Instruct", 7, 2, false},
    {"ObjectKey", 5, 32, "meta-llama/Llama-3.1-8B-Instruct", 3, 1, false},
    {"ObjectKey", 4, 32, "m", 1, 1, false},
    /* a tail of three whole 32-byte blocks and more: the 32-byte
     * compare's counted path (shorter tails take its fixed one) */
    {"ObjectKey", 4, 32,
     "org/a-model-name-of-seventy-bytes-so-the-tail-holds-3-blocks-of-32-B",
     2, 1, false},
};
#define NSHAPES (sizeof key_shapes / sizeof key_shapes[0])

static void key(mpw *w, const mpw_objectkey_shape *k, int64_t rank)
{
    mpw_objectkey_shape s = *k;
    s.rank = rank;
    mpw_objectkey(w, &s);
}

static void codec_str(mpw *w, const char *tag, const char *v)
{
    mpw_map(w, 2);
    mpw_str(w, "__t__");
    mpw_str(w, tag);
    mpw_str(w, "v");
    mpw_str(w, v);
}

/* Records that fill a cache: each appends a whole record body. */
static void fill_key_list(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.1, 1.1, RW);
    mpw_map(w, 3);
    mpw_str(w, "keys");
    mpw_array(w, 3);
    for (int r = 0; r < 3; r++)
        key(w, k, r);
    mpw_str(w, "layout_desc");
    mpw_layout_desc(w, 128);
    mpw_str(w, "mode");
    codec_str(w, "PrefetchMode", "LOOKUP");
}

static void fill_key_values(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.1, 1.1, "f");
    mpw_map(w, 2);
    mpw_str(w, "key");
    key(w, k, 1);
    mpw_str(w, "other");
    key(w, k, 2);
}

static void fill_spec(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.1, 1.1, SP);
    mpw_map(w, 1);
    mpw_str(w, "spec");
    mpw_map(w, 2);
    mpw_str(w, "__t__");
    mpw_str(w, "PrefetchRequestSpec");
    mpw_str(w, "v");
    mpw_map(w, 6);
    mpw_str(w, "keys");
    mpw_array(w, 2);
    key(w, k, 0);
    key(w, k, 1);
    mpw_str(w, "num_kv_readers");
    mpw_int(w, 1);
    mpw_str(w, "policy");
    codec_str(w, "TrimPolicy", "PREFIX");
    mpw_str(w, "attn_desc");
    mpw_map(w, 2);
    mpw_str(w, "__t__");
    mpw_str(w, "AttnWindowDesc");
    mpw_str(w, "v");
    mpw_map(w, 2);
    mpw_str(w, "num_chunks_in_sw");
    mpw_array(w, 2);
    mpw_int(w, 4);
    mpw_int(w, 4);
    mpw_str(w, "world_size");
    mpw_int(w, 1);
    mpw_str(w, "group_layout_descs");
    mpw_map(w, 1);
    mpw_str(w, "0");
    mpw_layout_desc(w, 128);
    mpw_str(w, "generation");
    mpw_int(w, 0);
}

/* Keys as the values of an inner map (under an int key and an array
 * key, which the reference decodes as a tuple), and in a tuple. */
static void fill_inner_map(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.1, 1.1, RW);
    mpw_map(w, 2);
    mpw_str(w, "m");
    mpw_map(w, 2);
    mpw_int(w, 7);
    key(w, k, 1);
    mpw_array(w, 2);
    mpw_int(w, 1);
    mpw_str(w, "x");
    key(w, k, 2);
    mpw_str(w, "keys");
    mpw_map(w, 2);
    mpw_str(w, "__t__");
    mpw_str(w, "tuple");
    mpw_str(w, "v");
    mpw_array(w, 2);
    key(w, k, 3);
    key(w, k, 4);
}

/* A key of k's shape (rank r) with a salt, or of another model, or k's
 * own: the shapes a fleet's lists mix. */
enum mixed { PLAIN, OTHER, SALT1, SALT2, SALT3, SALT5, SALT6 };
static void mixed_key(mpw *w, const mpw_objectkey_shape *k, enum mixed m,
                      int64_t r)
{
    static const char *const salts[] = {NULL, NULL, "ten1", "ten2", "ten3",
                                        "ten5", "ten6"};
    mpw_objectkey_shape s = *k;
    s.rank = r;
    if (m == PLAIN) {
        mpw_objectkey(w, &s);
    } else if (m == OTHER) {
        s.model = "other/Model-of-its-own";
        mpw_objectkey(w, &s);
    } else {
        s.pairs = 5;
        mpw_objectkey_salted(w, &s, salts[m]);
    }
}

static void mixed_list(mpw *w, const mpw_objectkey_shape *k,
                       const enum mixed *m, int n)
{
    mpw_array(w, (uint32_t)n);
    for (int i = 0; i < n; i++)
        mixed_key(w, k, m[i], i % 100);
}

/* A record at t whose one argument, `keys`, is mixed_list's. */
static void mixed_record(mpw *w, double t, const mpw_objectkey_shape *k,
                         const enum mixed *m, int n)
{
    mpw_record_begin(w, t, 1 + t, RW);
    mpw_map(w, 1);
    mpw_str(w, "keys");
    mixed_list(w, k, m, n);
}

/* A list of mixed shapes, salted, unsalted and another model's, whose
 * salted keys differ in their salts alone: every shape's template set,
 * the salted one's salt masked. */
static void fill_mixed_list(mpw *w, const mpw_objectkey_shape *k)
{
    static const enum mixed m[] = {PLAIN, SALT1, SALT2, PLAIN, OTHER, SALT3,
                                   PLAIN};
    mixed_record(w, 0.1, k, m, 7);
}

typedef void (*record_fn)(mpw *w, const mpw_objectkey_shape *k);
static const struct {
    const char *name;
    record_fn write;
} fillers[] = {
    {"list of mixed shapes", fill_mixed_list},
    {"key list", fill_key_list},
    {"keys as args values", fill_key_values},
    {"request spec", fill_spec},
    {"inner map and tuple", fill_inner_map},
};
#define NFILLERS (sizeof fillers / sizeof fillers[0])

/* Hostile records: built around the same key shape, so that a cache
 * filled above would be consulted for them. */
static void hostile_key_as_args_key(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, "h");
    mpw_map(w, 2);
    mpw_str(w, "key");
    key(w, k, 1);
    key(w, k, 2); /* a key of args, which must be a str */
    mpw_int(w, 1);
}

static void hostile_key_as_third_args_key(mpw *w,
                                          const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, "h");
    mpw_map(w, 3);
    mpw_str(w, "a");
    key(w, k, 1);
    mpw_str(w, "b");
    key(w, k, 2);
    key(w, k, 3);
    key(w, k, 4);
}

/* In a map below args, a run of keys from a value into the keys after
 * it: a map key must be hashable, which an ObjectKey is not. */
static void hostile_key_as_inner_map_key(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 1);
    mpw_str(w, "x");
    mpw_map(w, 2);
    mpw_str(w, "a");
    key(w, k, 1);
    key(w, k, 2);
    key(w, k, 3);
}

static void hostile_key_first(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, "h");
    mpw_map(w, 1);
    key(w, k, 1);
    mpw_int(w, 1);
}

static void hostile_list_then_key(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 2);
    mpw_str(w, "keys");
    mpw_array(w, 2);
    key(w, k, 0);
    key(w, k, 1);
    key(w, k, 2);
    mpw_int(w, 1);
}

/* The last key of a list with one of its bytes changed: at, counted
 * back from the key's end. */
static void key_list_patched(mpw *w, const mpw_objectkey_shape *k,
                             size_t from_end, unsigned char to)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 1);
    mpw_str(w, "keys");
    mpw_array(w, 3);
    key(w, k, 0);
    key(w, k, 1);
    key(w, k, 2);
    w->buf[w->len - from_end] = to;
}

/* How far from a key of k's shape's end its model name's last byte is:
 * before the pairs that follow it. */
static size_t model_last_from_end(const mpw_objectkey_shape *k)
{
    size_t after = 0;
    if (k->pairs > 2)
        after += 9; /* kv_rank and a fixint */
    if (k->pairs > 3)
        after += 17; /* object_group_id and a fixint */
    if (k->pairs > 4)
        after += 16; /* cache_salt and "salt" */
    return after + 1;
}

static void hostile_bad_model_utf8(mpw *w, const mpw_objectkey_shape *k)
{
    key_list_patched(w, k, model_last_from_end(k), 0xff);
}

static void hostile_bad_last_byte(mpw *w, const mpw_objectkey_shape *k)
{
    key_list_patched(w, k, 1, 0xc1); /* a reserved byte */
}

static void hostile_list_count_lies(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 1);
    mpw_str(w, "keys");
    mpw_array(w, 4); /* three follow */
    key(w, k, 0);
    key(w, k, 1);
    key(w, k, 2);
}

static void hostile_trailing_byte(mpw *w, const mpw_objectkey_shape *k)
{
    fill_key_list(w, k);
    mpw_byte(w, 0xc0);
}

static void hostile_too_deep(mpw *w, const mpw_objectkey_shape *k)
{
    /* record map, args, LCT_MAX_DEPTH - 4 arrays, a key list: the key's
     * payload is one level past the limit */
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 1);
    mpw_str(w, "keys");
    for (unsigned d = 0; d < LCT_MAX_DEPTH - 4; d++)
        mpw_array(w, 1);
    mpw_array(w, 2);
    key(w, k, 0);
    key(w, k, 1);
}

static void hostile_bad_timestamp_after(mpw *w, const mpw_objectkey_shape *k)
{
    static const unsigned char bad[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 1);
    mpw_str(w, "keys");
    mpw_array(w, 3);
    key(w, k, 0);
    key(w, k, 1);
    mpw_ext(w, -1, bad, sizeof bad); /* nanoseconds past a second */
}

static void hostile_layout_cut(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 2);
    mpw_str(w, "keys");
    mpw_array(w, 1);
    key(w, k, 0);
    mpw_str(w, "layout_desc");
    mpw_layout_desc(w, 128);
    w->len -= 3; /* "torch.bfloat16" cut short: the map runs out */
}

/* Valid, and near the caches' shapes: must be yielded, keys and all. */
static void valid_layout_other(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 2);
    mpw_str(w, "keys");
    mpw_array(w, 2);
    key(w, k, 5);
    key(w, k, 6);
    mpw_str(w, "layout_desc");
    mpw_layout_desc(w, 64);
}

/* A list whose last key has a model of its own: the keys before it are
 * like a template, the list as a whole is not. */
static void valid_list_other_last(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 1);
    mpw_str(w, "keys");
    mpw_array(w, 3);
    key(w, k, 0);
    key(w, k, 1);
    mpw_objectkey_shape other = *k;
    other.model = "other/Model-of-its-own";
    key(w, &other, 2);
}

static void valid_key_values(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, "h");
    mpw_map(w, 3);
    mpw_str(w, "a");
    key(w, k, 1);
    mpw_str(w, "b");
    key(w, k, 2);
    mpw_str(w, "c");
    mpw_int(w, 3);
}

/* A list of three keys of k's shape with a salt each (its group kept).
 * A salt's bytes are compared under a mask (any ASCII salt of the same
 * length is like the template's "salt"): these are of its length. */
static void key_list_salted(mpw *w, const mpw_objectkey_shape *k,
                            const char *const salts[3])
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 1);
    mpw_str(w, "keys");
    mpw_array(w, 3);
    for (int i = 0; i < 3; i++) {
        mpw_objectkey_shape s = *k;
        s.pairs = 5;
        s.rank = i;
        mpw_objectkey_salted(w, &s, salts[i]);
    }
}

/* A byte past ASCII that makes no UTF-8: not to be taken for a salt
 * like the template's. */
static void hostile_salt_not_utf8(mpw *w, const mpw_objectkey_shape *k)
{
    key_list_salted(w, k, (const char *const[3]){"sal1", "sal2", "sa\xff" "3"});
}

static void valid_salt_not_ascii(mpw *w, const mpw_objectkey_shape *k)
{
    key_list_salted(w, k,
                    (const char *const[3]){"s\xc3\xa9t", "salt", "s\xc3\xa9t"});
}

/* Keys like one template whose salts differ: each key's own salt, and
 * its id, not the first key's. */
static void valid_salts_differ(mpw *w, const mpw_objectkey_shape *k)
{
    key_list_salted(w, k, (const char *const[3]){"ten1", "ten2", "ten3"});
}

static void valid_salts_alike(mpw *w, const mpw_objectkey_shape *k)
{
    key_list_salted(w, k, (const char *const[3]){"ten7", "ten7", "ten7"});
}

/* Lists of mixed shapes: the walk hands them over in parts of one
 * shape, a part's salt its first key's; one whose part's salts differ,
 * and one of more parts than it hands over, read key by key. */
static void valid_mixed_list(mpw *w, const mpw_objectkey_shape *k)
{
    static const enum mixed m[] = {PLAIN, SALT5, SALT5, OTHER, PLAIN, SALT6,
                                   SALT6, PLAIN};
    mixed_record(w, 0.2, k, m, 8);
}

static void valid_mixed_salts_differ(mpw *w, const mpw_objectkey_shape *k)
{
    static const enum mixed m[] = {PLAIN, SALT5, SALT6, PLAIN};
    mixed_record(w, 0.2, k, m, 4);
}

static void valid_mixed_many_parts(mpw *w, const mpw_objectkey_shape *k)
{
    enum mixed m[70];
    for (int i = 0; i < 70; i++)
        m[i] = i % 2 ? SALT5 : PLAIN;
    mixed_record(w, 0.2, k, m, 70);
}

/* A mixed list whose last key (k's shape) has a model name of no UTF-8. */
static void hostile_mixed_bad_utf8(mpw *w, const mpw_objectkey_shape *k)
{
    static const enum mixed m[] = {PLAIN, SALT5, OTHER, PLAIN};
    mixed_record(w, 0.2, k, m, 4);
    w->buf[w->len - model_last_from_end(k)] = 0xff;
}

/* A `keys` argument twice (the last one wins, as in a dict): the first
 * a list the walk hands over (of one shape or, mixed, in parts), the
 * second nil or a list of one key, whose keys are the call's. */
static void keys_twice(mpw *w, const mpw_objectkey_shape *k, bool mixed,
                       bool nil)
{
    static const enum mixed m[] = {PLAIN, SALT5, SALT5, OTHER, PLAIN};
    static const enum mixed one[] = {PLAIN, PLAIN, PLAIN, PLAIN, PLAIN};
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 2);
    mpw_str(w, "keys");
    mixed_list(w, k, mixed ? m : one, 5);
    mpw_str(w, "keys");
    if (nil) {
        mpw_nil(w);
    } else {
        mpw_array(w, 1);
        key(w, k, 9);
    }
}

static void valid_mixed_then_nil(mpw *w, const mpw_objectkey_shape *k)
{
    keys_twice(w, k, true, true);
}

static void valid_mixed_then_list(mpw *w, const mpw_objectkey_shape *k)
{
    keys_twice(w, k, true, false);
}

static void valid_list_then_list(mpw *w, const mpw_objectkey_shape *k)
{
    keys_twice(w, k, false, false);
}

/* `keys` nil, then a list the walk hands over: the list is the call's. */
static void valid_nil_then_list(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 3);
    mpw_str(w, "keys");
    mpw_nil(w);
    mpw_str(w, "mode");
    codec_str(w, "PrefetchMode", "LOOKUP");
    mpw_str(w, "keys");
    mpw_array(w, 2);
    key(w, k, 4);
    key(w, k, 5);
}

/* A request spec without keys on either side of a `keys` list: the list
 * is the call's keys (a spec is read only when there is no `keys`). */
static void spec_without_keys(mpw *w)
{
    mpw_map(w, 2);
    mpw_str(w, "__t__");
    mpw_str(w, "PrefetchRequestSpec");
    mpw_str(w, "v");
    mpw_map(w, 1);
    mpw_str(w, "num_kv_readers");
    mpw_int(w, 2);
}

static void valid_specs_around_list(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, SP);
    mpw_map(w, 3);
    mpw_str(w, "spec");
    spec_without_keys(w);
    mpw_str(w, "keys");
    mpw_array(w, 2);
    key(w, k, 6);
    key(w, k, 7);
    mpw_str(w, "other");
    spec_without_keys(w);
}

/* An args key written as str8 (a str all the same, as any encoder may
 * write one): n bytes of s. */
static void str8_name(mpw *w, const char *s, size_t n)
{
    mpw_head(w, 0xd9, n);
    mpw_raw(w, s, n);
}

/* `keys` named by a str8: the call's keys all the same. */
static void valid_keys_named_by_str8(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 2);
    str8_name(w, "keys", 4);
    mpw_array(w, 2);
    key(w, k, 0);
    key(w, k, 1);
    str8_name(w, "mode", 4);
    mpw_str(w, "x");
}

/* A list the walk hands over, then `keys` again as a str8 name: the
 * second list is the call's (the last one wins, whatever its bytes). */
static void valid_list_then_str8_keys(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 2);
    mpw_str(w, "keys");
    mpw_array(w, 2);
    key(w, k, 0);
    key(w, k, 1);
    str8_name(w, "keys", 4);
    mpw_array(w, 1);
    key(w, k, 9);
}

/* A str8 args key of no UTF-8, after a list of keys. */
static void hostile_str8_name_not_utf8(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 2);
    mpw_str(w, "keys");
    mpw_array(w, 1);
    key(w, k, 0);
    str8_name(w, "k\xffy", 3);
    mpw_int(w, 1);
}

/* A bin args key: not a str. */
static void hostile_bin_name(mpw *w, const mpw_objectkey_shape *k)
{
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 2);
    mpw_str(w, "keys");
    mpw_array(w, 1);
    key(w, k, 0);
    mpw_bin(w, "keys", 4);
    mpw_int(w, 1);
}

static const struct {
    const char *name;
    record_fn write;
} hostiles[] = {
    {"valid: keys nil, then a list", valid_nil_then_list},
    {"valid: specs without keys around a list", valid_specs_around_list},
    {"valid: `keys` named by a str8", valid_keys_named_by_str8},
    {"valid: a list, then `keys` named by a str8", valid_list_then_str8_keys},
    {"an args key of no UTF-8, as a str8", hostile_str8_name_not_utf8},
    {"an args key that is bin", hostile_bin_name},
    {"valid: a mixed list, then keys nil", valid_mixed_then_nil},
    {"valid: a mixed list, then another list", valid_mixed_then_list},
    {"valid: a list, then another list", valid_list_then_list},
    {"valid: a list of mixed shapes", valid_mixed_list},
    {"valid: a mixed list whose salted keys differ", valid_mixed_salts_differ},
    {"valid: a list of 70 parts", valid_mixed_many_parts},
    {"a mixed list, invalid UTF-8 in its last model name",
     hostile_mixed_bad_utf8},
    {"key as an args key", hostile_key_as_args_key},
    {"key as the third args key", hostile_key_as_third_args_key},
    {"key as the first args key", hostile_key_first},
    {"key as an inner map's key", hostile_key_as_inner_map_key},
    {"key list, then a key as an args key", hostile_list_then_key},
    {"invalid UTF-8 in a model name", hostile_bad_model_utf8},
    {"a reserved byte ending a key", hostile_bad_last_byte},
    {"a list count past the data", hostile_list_count_lies},
    {"a byte after the body", hostile_trailing_byte},
    {"keys past the nesting limit", hostile_too_deep},
    {"an invalid timestamp after keys", hostile_bad_timestamp_after},
    {"a layout cut short", hostile_layout_cut},
    {"valid: another layout", valid_layout_other},
    {"valid: keys as args values", valid_key_values},
    {"valid: a list whose last key is another model's",
     valid_list_other_last},
    {"a salt of no UTF-8, of the template's length", hostile_salt_not_utf8},
    {"valid: a salt past ASCII", valid_salt_not_ascii},
    {"valid: a list whose salts differ", valid_salts_differ},
    {"valid: a list of one other tenant", valid_salts_alike},
    {"valid: a key list", fill_key_list},
    {"valid: a request spec", fill_spec},
};
#define NHOSTILES (sizeof hostiles / sizeof hostiles[0])

/* MARK: what a read gives */

typedef struct text {
    char *buf;
    size_t len, cap;
} text;

static int text_write(void *ctx, const char *data, size_t len)
{
    text *t = ctx;
    if (t->len + len + 1 > t->cap) {
        t->cap = 2 * (t->len + len + 1);
        t->buf = realloc(t->buf, t->cap);
        cr_assert_not_null(t->buf);
    }
    memcpy(t->buf + t->len, data, len);
    t->len += len;
    t->buf[t->len] = '\0';
    return 0;
}

static void text_printf(text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void text_printf(text *t, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    text_write(t, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* One record as every layer sees it: its JSON (offset left out, so the
 * same record agrees wherever it sits) and its keys. */
static void describe_record(const lct_record *rec, text *t)
{
    text_printf(t, "%.*s ", (int)rec->qualname.len, rec->qualname.ptr);
    lct_value_write_json(rec->args, text_write, t);
    lct_key_iter it;
    lct_error err;
    lct_status st = lct_key_iter_init(rec, &it, &err);
    text_printf(t, "\n keys (%d):", st);
    lct_object_key k;
    uint64_t bytes;
    int rc;
    while (st == LCT_OK && (rc = lct_key_iter_next(&it, &k, &bytes, &err)) == 1)
        text_printf(t, " [%zu %.*s %lld %lld %.*s %llu]", k.chunk_hash.len,
                    (int)k.model_name.len, k.model_name.ptr,
                    (long long)k.kv_rank, (long long)k.object_group_id,
                    (int)k.cache_salt.len, k.cache_salt.ptr,
                    (unsigned long long)bytes);
    if (st == LCT_OK)
        text_printf(t, " end %d", rc);
    /* and as ids, which a noted list's keys get from its first key's
     * model and salt */
    st = lct_key_iter_init(rec, &it, &err);
    text_printf(t, "\n ids (%d):", st);
    lct_key_id ids[2];
    size_t n;
    while (st == LCT_OK &&
           (rc = lct_key_iter_next_ids(&it, ids, 2, &err)) > 0)
        for (n = 0; n < (size_t)rc; n++)
            text_printf(t, " %016llx/%llu", (unsigned long long)ids[n].id,
                        (unsigned long long)ids[n].bytes);
    if (st == LCT_OK)
        text_printf(t, " end %d", rc);
    /* and from the keys-only start (stat --spans'), which takes a noted
     * list that is the last `keys` argument without reading the rest */
    st = lct__key_iter_init_keys(rec, &it, &err);
    text_printf(t, "\n keys only (%d):", st);
    while (st == LCT_OK && (rc = lct_key_iter_next(&it, &k, NULL, &err)) == 1)
        text_printf(t, " [%zu %.*s %lld %lld %.*s]", k.chunk_hash.len,
                    (int)k.model_name.len, k.model_name.ptr,
                    (long long)k.kv_rank, (long long)k.object_group_id,
                    (int)k.cache_salt.len, k.cache_salt.ptr);
    if (st == LCT_OK)
        text_printf(t, " end %d", rc);
    text_printf(t, "\n");
}

/* The ways to read a file.  The _KEYS ways open with LCT_KEYS: the keys
 * printed are the ones the validating walk handed over, where it did;
 * the cold read's are found by the key layer's own walk. */
enum way {
    MAPPED, STREAM, NO_MMAP, BUFFER, PIPE, SCAN,
    MAPPED_KEYS, STREAM_KEYS, SCAN_KEYS, NWAYS
};
static const char *way_names[] = {"mapped", "stream", "no-mmap", "buffer",
                                  "pipe", "scan -j 2", "mapped, LCT_KEYS",
                                  "stream, LCT_KEYS", "scan -j 2, LCT_KEYS"};

typedef struct scan_state {
    text t;
} scan_state;

static int scan_record(void *state, const lct_record *rec)
{
    scan_state *s = state;
    text_printf(&s->t, "@%llu ", (unsigned long long)rec->offset);
    describe_record(rec, &s->t);
    return 0;
}

static void scan_reset(void *state)
{
    scan_state *s = state;
    s->t.len = 0;
    if (s->t.buf)
        s->t.buf[0] = '\0';
}

static void *feed_pipe(void *arg)
{
    int *fds = arg; /* [write end, file] */
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[1], buf, sizeof buf)) > 0)
        if (write(fds[0], buf, (size_t)n) != n)
            break;
    close(fds[0]);
    return NULL;
}

/* What reading the file at path gives, one way. */
static void read_one_way(const char *path, enum way way, text *out)
{
    lct_reader *r = NULL;
    lct_error err;
    lct_status st;
    int fds[2] = {-1, -1};
    pthread_t feeder;
    size_t len = 0;
    char *data = NULL;
    if (way == PIPE) {
        int p[2];
        cr_assert_eq(pipe(p), 0);
        fds[0] = p[1];
        fds[1] = open(path, O_RDONLY);
        cr_assert_geq(fds[1], 0);
        pthread_create(&feeder, NULL, feed_pipe, fds);
        st = lct_open_fd(p[0], "pipe", LCT_QUIET, &r, &err);
        if (st != LCT_OK)
            close(p[0]);
    } else if (way == BUFFER) {
        data = read_whole_file(path, &len);
        cr_assert_not_null(data);
        st = lct_open_buffer(data, len, "buffer", LCT_QUIET, &r, &err);
    } else {
        unsigned flags =
            LCT_QUIET |
            (way == STREAM || way == STREAM_KEYS ? LCT_STREAM
             : way == NO_MMAP                    ? LCT_NO_MMAP
                                                 : 0) |
            (way >= MAPPED_KEYS ? LCT_KEYS : 0);
        st = lct_open(path, flags, &r, &err);
    }
    text_printf(out, "open %d\n", st);
    if (st == LCT_OK) {
        lct_stats stats;
        if (way == SCAN || way == SCAN_KEYS) {
            scan_state states[2] = {{{0}}, {{0}}};
            void *ptrs[2] = {&states[0], &states[1]};
            lct_scan scan = {.threads = 2, .on_record = scan_record,
                             .states = ptrs, .on_reset = scan_reset};
            cr_assert_eq(lct_scan_file(r, &scan, &stats, &err), LCT_OK, "%s",
                         err.message);
            for (int i = 0; i < 2; i++) {
                if (states[i].t.len)
                    text_write(out, states[i].t.buf, states[i].t.len);
                free(states[i].t.buf);
            }
        } else {
            lct_record rec;
            while (lct_next(r, &rec) == 1) {
                text_printf(out, "@%llu ", (unsigned long long)rec.offset);
                describe_record(&rec, out);
            }
            lct_reader_stats(r, &stats);
        }
        text_printf(out, "records %llu skipped %llu truncated %d\n",
                    (unsigned long long)stats.records,
                    (unsigned long long)stats.skipped, (int)stats.truncated);
        lct_close(r);
    }
    if (way == PIPE) {
        pthread_join(feeder, NULL);
        close(fds[1]);
    }
    free(data);
}

/* The same read, in a thread of its own: its caches start empty. */
typedef struct cold_read {
    const char *path;
    text out;
} cold_read;

static void *cold_thread(void *arg)
{
    cold_read *c = arg;
    read_one_way(c->path, MAPPED, &c->out);
    return NULL;
}

static text read_cold(const char *path)
{
    cold_read c = {.path = path};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, cold_thread, &c), 0);
    pthread_join(t, NULL);
    return c.out;
}

/* MARK: building the pairs */

typedef struct body {
    mpw bytes;
} body;

static void write_body(mpw *b, record_fn fn, const mpw_objectkey_shape *k)
{
    mpw_init(b);
    fn(b, k);
}

/* A trace of the standard header and the given record bodies; the
 * record offsets in offsets[]. */
static char *trace_of(const mpw *const *bodies, size_t n, uint64_t *offsets)
{
    mpw f, h;
    mpw_init(&f);
    mpw_init(&h);
    mpw_std_header(&h);
    mpw_frame(&f, &h);
    for (size_t i = 0; i < n; i++) {
        offsets[i] = f.len;
        mpw_frame(&f, bodies[i]);
    }
    char *path = tmp_file_with(f.buf, f.len);
    mpw_free(&f);
    mpw_free(&h);
    return path;
}

/* The lines a read gave for the record at offset, without its "@N". */
static char *record_lines(const text *t, uint64_t offset)
{
    char at[32];
    snprintf(at, sizeof at, "@%llu ", (unsigned long long)offset);
    const char *p = t->buf ? strstr(t->buf, at) : NULL;
    if (!p)
        return strdup("(not yielded)");
    p += strlen(at);
    const char *end = strstr(p, "\n@");
    const char *stats = strstr(p, "\nrecords ");
    if (!end || (stats && stats < end))
        end = stats;
    return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

/*
 * Read [a, b] every way in this thread, with every cache as the reads
 * before left it: each record must be yielded exactly when the oracle
 * says, and read as a cold read of it alone reads it.
 */
static unsigned check_pair(const mpw *a, const mpw *b, const text *cold_a,
                           const text *cold_b, const char *what)
{
    const mpw *bodies[2] = {a, b};
    uint64_t off[2];
    char *path = trace_of(bodies, 2, off);
    bool ok[2] = {oracle_record_ok(a->buf, a->len),
                  oracle_record_ok(b->buf, b->len)};
    const text *cold[2] = {cold_a, cold_b};
    unsigned checked = 0;
    for (enum way way = 0; way < NWAYS; way++) {
        text got = {0};
        read_one_way(path, way, &got);
        for (int i = 0; i < 2; i++) {
            char *line = record_lines(&got, off[i]);
            char *want = record_lines(cold[i], off[0]);
            cr_expect_eq(strcmp(line, "(not yielded)") != 0, ok[i],
                         "%s, %s, record %d: oracle says %s\n%s", what,
                         way_names[way], i, ok[i] ? "yield" : "skip", line);
            cr_expect_str_eq(line, want, "%s, %s, record %d: not as read cold",
                             what, way_names[way], i);
            free(line);
            free(want);
            checked++;
        }
        char stats[96];
        snprintf(stats, sizeof stats, "records %d skipped %d truncated 0",
                 ok[0] + ok[1], !ok[0] + !ok[1]);
        cr_expect(got.buf && strstr(got.buf, stats), "%s, %s: want %s\n%s",
                  what, way_names[way], stats, got.buf);
        free(got.buf);
    }
    unlink(path);
    free(path);
    return checked;
}

/* A cold read of the one record, at the offset a pair's first has. */
static text cold_alone(const mpw *b)
{
    const mpw *bodies[1] = {b};
    uint64_t off;
    char *path = trace_of(bodies, 1, &off);
    text t = read_cold(path);
    unlink(path);
    free(path);
    return t;
}

/* Every hostile shape after every filler, in both orders. */
static void hostile_after_fillers(void)
{
    unsigned checked = 0, hostile_skipped = 0;
    for (size_t s = 0; s < NSHAPES; s++) {
        const mpw_objectkey_shape *k = &key_shapes[s];
        mpw fill[NFILLERS], bad[NHOSTILES];
        text cold_fill[NFILLERS], cold_bad[NHOSTILES];
        for (size_t f = 0; f < NFILLERS; f++) {
            write_body(&fill[f], fillers[f].write, k);
            cr_assert(oracle_record_ok(fill[f].buf, fill[f].len), "%s",
                      fillers[f].name);
            cold_fill[f] = cold_alone(&fill[f]);
        }
        for (size_t h = 0; h < NHOSTILES; h++) {
            write_body(&bad[h], hostiles[h].write, k);
            cold_bad[h] = cold_alone(&bad[h]);
            hostile_skipped += !oracle_record_ok(bad[h].buf, bad[h].len);
        }
        for (size_t f = 0; f < NFILLERS; f++)
            for (size_t h = 0; h < NHOSTILES; h++) {
                char what[256];
                snprintf(what, sizeof what, "shape %zu: %s, then %s", s,
                         fillers[f].name, hostiles[h].name);
                checked += check_pair(&fill[f], &bad[h], &cold_fill[f],
                                      &cold_bad[h], what);
                snprintf(what, sizeof what, "shape %zu: %s, then %s", s,
                         hostiles[h].name, fillers[f].name);
                checked += check_pair(&bad[h], &fill[f], &cold_bad[h],
                                      &cold_fill[f], what);
            }
        for (size_t f = 0; f < NFILLERS; f++) {
            mpw_free(&fill[f]);
            free(cold_fill[f].buf);
        }
        for (size_t h = 0; h < NHOSTILES; h++) {
            mpw_free(&bad[h]);
            free(cold_bad[h].buf);
        }
    }
    /* the hostile shapes are hostile: most of them the oracle skips */
    cr_expect_geq(hostile_skipped, NSHAPES * 9, "%u skipped", hostile_skipped);
    cr_expect_eq(checked, NSHAPES * NFILLERS * NHOSTILES * 2 * NWAYS * 2);
}

/* The key compare a CPU with AVX2 takes (32 bytes at a time), and the
 * 16-byte one every other takes: both are read the same. */
Test(caches, hostile_records_after_every_cache_filler_read_as_cold,
     .timeout = 300)
{
#if defined(__x86_64__)
    cr_assert_eq(lct__key_run_wide(true), !!__builtin_cpu_supports("avx2"));
#endif
    hostile_after_fillers();
}

Test(caches, the_16_byte_key_compare_reads_them_as_cold, .timeout = 300)
{
    cr_assert_not(lct__key_run_wide(false));
    hostile_after_fillers();
    lct__key_run_wide(true);
}

/*
 * Every byte of a key that a template compares is compared: a list whose
 * last key has one byte made 0xc1 (reserved as a head, never in UTF-8)
 * after a record that set the template, one byte place at a time.  Only
 * a byte of the hash leaves the key valid; every other place must be
 * skipped as the oracle skips it, under both compares.
 */
static void every_byte(bool wide)
{
    lct__key_run_wide(wide);
    unsigned valid_places = 0;
    for (size_t s = 0; s < NSHAPES; s++) {
        const mpw_objectkey_shape *k = &key_shapes[s];
        mpw one = {0};
        key(&one, k, 0);
        size_t key_len = one.len;
        mpw_free(&one);
        mpw fill;
        write_body(&fill, fill_key_list, k);
        text cold_fill = cold_alone(&fill);
        for (size_t from_end = 1; from_end < key_len; from_end++) {
            mpw bad = {0};
            key_list_patched(&bad, k, from_end, 0xc1);
            text cold_bad = cold_alone(&bad);
            valid_places += oracle_record_ok(bad.buf, bad.len);
            char what[160];
            snprintf(what, sizeof what, "%s, shape %zu: byte %zu of %zu",
                     wide ? "32-byte" : "16-byte", s, key_len - from_end,
                     key_len);
            check_pair(&fill, &bad, &cold_fill, &cold_bad, what);
            mpw_free(&bad);
            free(cold_bad.buf);
        }
        mpw_free(&fill);
        free(cold_fill.buf);
    }
    cr_expect_eq(valid_places, NSHAPES * 32, "only the hash's 32 bytes");
    lct__key_run_wide(true);
}

Test(caches, every_byte_a_template_holds_is_compared, .timeout = 300)
{
    every_byte(true);
    every_byte(false);
}

/* The keys of rec, as describe_record prints them. */
static char *keys_of(const lct_record *rec)
{
    text t = {0};
    describe_record(rec, &t);
    t.buf[t.len - 1] = '\0'; /* as record_lines gives them */
    return t.buf;
}

/*
 * The keys a walk hands over are the last record's, in this thread: a
 * record read before them, a record of another reader, and a record read
 * without validation (LCT_LAZY) in a buffer where a handed-over list
 * once was, are each given their own keys.
 */
/* Two keys, then more bytes than a longer list would take. */
static void two_keys_then_text(mpw *w, const mpw_objectkey_shape *k)
{
    char text[400];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    mpw_record_begin(w, 0.2, 1.2, RW);
    mpw_map(w, 2);
    mpw_str(w, "keys");
    mpw_array(w, 2);
    key(w, k, 5);
    key(w, k, 6);
    mpw_str(w, "note");
    mpw_str(w, text);
}

/* two_keys_then_text with t_mono a float32, so the record decoder's
 * general path reads it, and a qualname 4 bytes longer, so that its
 * args start where the fast layout's do. */
static void two_keys_off_the_fast_layout(mpw *w, const mpw_objectkey_shape *k)
{
    mpw t, head;
    write_body(&t, two_keys_then_text, k);
    mpw_init(&head);
    mpw_record_begin(&head, 0.2, 1.2, RW);
    size_t args = head.len; /* where the fast layout's args start */
    mpw_free(&head);
    mpw_map(w, 5);
    mpw_str(w, "type");
    mpw_str(w, "record");
    mpw_str(w, "t_mono");
    mpw_f32(w, 0.2f);
    mpw_str(w, "t_wall");
    mpw_f64(w, 1.2);
    mpw_str(w, "qualname");
    mpw_str(w, RW "_off");
    mpw_str(w, "args");
    cr_assert_eq(w->len, args, "args at %zu, not %zu", w->len, args);
    mpw_raw(w, t.buf + args, t.len - args);
    mpw_free(&t);
}

Test(caches, handed_over_keys_are_only_the_last_records, .timeout = 60)
{
    mpw a, b;
    write_body(&a, fill_key_list, &key_shapes[0]);
    write_body(&b, two_keys_then_text, &key_shapes[0]);
    const mpw *two[2] = {&a, &b};
    uint64_t off[2], yoff[2];
    char *x = trace_of(two, 2, off);
    const mpw *other[2] = {&b, &a};
    char *y = trace_of(other, 2, yoff);
    mpw c;
    write_body(&c, two_keys_off_the_fast_layout, &key_shapes[0]);
    const mpw *third[2] = {&c, &a};
    uint64_t zoff[2];
    char *z = trace_of(third, 2, zoff);
    text cold_x = read_cold(x), cold_y = read_cold(y), cold_z = read_cold(z);

    /* two mapped readers, records kept while the other reads */
    lct_reader *rx, *ry;
    lct_error err;
    cr_assert_eq(lct_open(x, LCT_QUIET | LCT_KEYS, &rx, &err), LCT_OK);
    cr_assert_eq(lct_open(y, LCT_QUIET | LCT_KEYS, &ry, &err), LCT_OK);
    lct_record r1, r2, r3;
    cr_assert_eq(lct_next(rx, &r1), 1);
    cr_assert_eq(lct_next(ry, &r2), 1);
    cr_assert_eq(lct_next(rx, &r3), 1);
    char *k1 = keys_of(&r1), *k2 = keys_of(&r2), *k3 = keys_of(&r3);
    char *w1 = record_lines(&cold_x, off[0]), *w3 = record_lines(&cold_x, off[1]);
    char *w2 = record_lines(&cold_y, yoff[0]);
    cr_expect_str_eq(k1, w1);
    cr_expect_str_eq(k2, w2);
    cr_expect_str_eq(k3, w3);
    free(k1), free(k2), free(k3), free(w1), free(w2), free(w3);
    lct_close(rx);
    lct_close(ry);

    /* a streamed reader's buffer, freed, and in its place a lazy
     * reader's, or a record the decoder's general path reads */
    struct {
        const char *path;
        unsigned flags;
        const text *cold;
        uint64_t at;
    } after[2] = {{y, LCT_LAZY, &cold_y, yoff[0]},
                  {z, LCT_KEYS, &cold_z, zoff[0]}};
    for (int round = 0; round < 8; round++) {
        lct_reader *s;
        cr_assert_eq(lct_open(x, LCT_QUIET | LCT_KEYS | LCT_STREAM, &s, &err),
                     LCT_OK);
        cr_assert_eq(lct_next(s, &r1), 1);
        lct_close(s);
        cr_assert_eq(lct_open(after[round % 2].path,
                              LCT_QUIET | LCT_STREAM | after[round % 2].flags,
                              &s, &err),
                     LCT_OK);
        cr_assert_eq(lct_next(s, &r2), 1);
        k2 = keys_of(&r2);
        w2 = record_lines(after[round % 2].cold, after[round % 2].at);
        cr_expect_str_eq(k2, w2, "round %d", round);
        free(k2), free(w2);
        lct_close(s);
    }
    unlink(x), unlink(y), unlink(z), free(x), free(y), free(z);
    free(cold_x.buf), free(cold_y.buf), free(cold_z.buf);
    mpw_free(&a), mpw_free(&b), mpw_free(&c);
}

/* MARK: the lct tool */

/* Every record line of `lct dump` for the file, offsets left out. */
static char *dump_records(const char *const *argv, const char *stdin_path,
                          int *status)
{
    run r = run_argv(stdin_path, argv);
    *status = r.status;
    /* {"offset":N,... -> {... */
    text t = {0};
    for (char *line = r.out; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        const char *comma = memchr(line, ',', n);
        if (comma)
            text_write(&t, comma + 1, n - (size_t)(comma + 1 - line));
        text_write(&t, "\n", 1);
        line = nl ? nl + 1 : line + n;
    }
    run_free(&r);
    if (!t.buf)
        t.buf = strdup("");
    return t.buf;
}

/*
 * The tool, a fresh process a file, reads each pair as its records read
 * alone: the caches are per process there, so the file's first record
 * is the one that fills them.  check's exit status and dump's records
 * through the mapping, the stream, two threads and a pipe.
 */
static void tool_pairs(size_t s)
{
    static const char *modes[][3] = {{"--mmap", NULL, NULL},
                                     {"--stream", NULL, NULL},
                                     {"-j", "2", NULL},
                                     {"-", NULL, NULL}};
    unsigned runs = 0;
    const mpw_objectkey_shape *k = &key_shapes[s];
    for (size_t h = 0; h < NHOSTILES; h++) {
        mpw b;
        write_body(&b, hostiles[h].write, k);
        const mpw *alone[1] = {&b};
        uint64_t off[2];
        char *single = trace_of(alone, 1, off);
        const char *argv1[] = {LCT_TOOL, "dump", "-q", single, NULL};
        int st;
        char *want_b = dump_records(argv1, NULL, &st);
        bool ok = oracle_record_ok(b.buf, b.len);
        cr_expect_eq(st, ok ? 0 : 3);
        for (size_t f = 0; f < NFILLERS; f++) {
            mpw a;
            write_body(&a, fillers[f].write, k);
            const mpw *pairs[2][2] = {{&a, &b}, {&b, &a}};
            for (int order = 0; order < 2; order++) {
                char *path = trace_of(pairs[order], 2, off);
                for (size_t m = 0; m < 4; m++) {
                    bool piped = strcmp(modes[m][0], "-") == 0;
                    const char *argv[8] = {LCT_TOOL, "dump", "-q"};
                    size_t n = 3;
                    for (size_t i = 0; i < 2 && modes[m][i]; i++)
                        if (!piped)
                            argv[n++] = modes[m][i];
                    argv[n++] = piped ? "-" : path;
                    argv[n] = NULL;
                    char *got = dump_records(argv, piped ? path : NULL, &st);
                    cr_expect_eq(st, ok ? 0 : 3, "shape %zu, %s / %s, %s", s,
                                 fillers[f].name, hostiles[h].name,
                                 modes[m][0]);
                    /* the filler's line is valid: it is there, and the
                     * hostile's line, if any, is what it gave alone */
                    cr_expect(strstr(got, want_b) != NULL,
                              "shape %zu, %s / %s, order %d, %s:\n%s\n"
                              "alone:\n%s", s, fillers[f].name,
                              hostiles[h].name, order, modes[m][0], got,
                              want_b);
                    size_t lines = 0;
                    for (const char *c = got; *c; c++)
                        lines += *c == '\n';
                    cr_expect_eq(lines, 1 + (size_t)ok,
                                 "shape %zu, %s / %s, %s: %zu lines", s,
                                 fillers[f].name, hostiles[h].name,
                                 modes[m][0], lines);
                    free(got);
                    runs++;
                }
                unlink(path);
                free(path);
            }
            mpw_free(&a);
        }
        free(want_b);
        unlink(single);
        free(single);
        mpw_free(&b);
    }
    cr_expect_eq(runs, NFILLERS * NHOSTILES * 2 * 4);
}

/* One test a key shape: each runs the tool some 600 times, which under
 * the sanitizers on a busy machine is minutes. */
ParameterizedTestParameters(caches, tool_reads_hostiles_after_fillers_alone)
{
    static size_t shapes[NSHAPES];
    for (size_t s = 0; s < NSHAPES; s++)
        shapes[s] = s;
    return cr_make_param_array(size_t, shapes, NSHAPES);
}

ParameterizedTest(size_t *shape, caches,
                  tool_reads_hostiles_after_fillers_alone, .timeout = 600)
{
    tool_pairs(*shape);
}
