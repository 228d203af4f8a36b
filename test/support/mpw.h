/*
 * mpw.h - a small msgpack and frame writer for tests and the sample
 * generator, so byte-level inputs are built in C rather than typed by hand.
 * Encodes like msgspec: the smallest encoding for every int, str and
 * container.  Aborts on out-of-memory (test code).
 */
#ifndef LCT_TEST_MPW_H
#define LCT_TEST_MPW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mpw {
    unsigned char *buf;
    size_t len, cap;
} mpw;

void mpw_init(mpw *w);
void mpw_free(mpw *w);
void mpw_reset(mpw *w);
void mpw_raw(mpw *w, const void *p, size_t n);
void mpw_byte(mpw *w, unsigned b);
void mpw_be32(mpw *w, uint32_t v);
/* v as `bytes` big-endian bytes (1 to 8). */
void mpw_be(mpw *w, uint64_t v, int bytes);
/* The head of a value of n items or bytes in the form the byte `head`
 * names, whatever msgpack's shortest form would be, for readers that
 * must take any: a fix form (0x80 map, 0x90 array, 0xa0 str: n or-ed
 * in) or one whose length follows it (0xc4-0xc6 bin, 0xd9-0xdb str,
 * 0xdc-0xdd array, 0xde-0xdf map). */
void mpw_head(mpw *w, unsigned head, uint64_t n);
void mpw_map(mpw *w, uint32_t n);
void mpw_array(mpw *w, uint32_t n);
void mpw_str(mpw *w, const char *s);
void mpw_strn(mpw *w, const void *s, size_t n);
void mpw_bin(mpw *w, const void *p, size_t n);
void mpw_int(mpw *w, int64_t v);
void mpw_uint(mpw *w, uint64_t v);
void mpw_f64(mpw *w, double d);
void mpw_f32(mpw *w, float f);
void mpw_bool(mpw *w, bool b);
void mpw_nil(mpw *w);
void mpw_ext(mpw *w, int8_t type, const void *p, size_t n);

/* Append body as one frame: u32 big-endian length, then the bytes. */
void mpw_frame(mpw *file, const mpw *body);

/* Header body as the recorder writes it (storage level, schema 2). */
void mpw_std_header(mpw *body);
/* Header body with chosen versions and magic (4 bytes). */
void mpw_header_with(mpw *body, const char *magic, int64_t format_version,
                     int64_t schema_version);
/*
 * Begin a record body in the recorder's layout, ready for the args map:
 * {"type":"record","t_mono":..,"t_wall":..,"qualname":..,"args": -- the
 * caller appends the args map.
 */
void mpw_record_begin(mpw *body, double t_mono, double t_wall,
                      const char *qualname);

/* Begin a trace built by hand: file gets the standard header's frame,
 * body is ready for the first record. */
void mpw_trace_begin(mpw *file, mpw *body);
/* Write file to a new temporary file (its malloc'd path) and free both. */
char *mpw_trace_finish(mpw *file, mpw *body);

/* A whole trace: header, then n records with args {"n": i}. */
void mpw_simple_trace(mpw *file, unsigned n);

/*
 * A codec-wrapped ObjectKey, or something near one, for tests of the fast
 * paths that recognise its bytes: {"__t__": tag, "v": payload}, the
 * payload a map of the first `pairs` of chunk_hash (bin of hash_len
 * bytes), model_name (model), kv_rank (rank), object_group_id (group),
 * cache_salt ("salt") and then "more" keys with ints, in the encoder's
 * order; with as_array, an array of the same items instead of the map.
 */
typedef struct mpw_objectkey_shape {
    const char *tag;
    unsigned pairs;
    size_t hash_len;
    const char *model;
    int64_t rank, group;
    bool as_array;
} mpw_objectkey_shape;
void mpw_objectkey(mpw *w, const mpw_objectkey_shape *s);
/* The same with this cache_salt where it has one (5 pairs; mpw_objectkey
 * writes "salt"). */
void mpw_objectkey_salted(mpw *w, const mpw_objectkey_shape *s,
                          const char *salt);

/* A codec-wrapped MemoryLayoutDesc of one bf16 tensor [2, 256, 8, dim]. */
void mpw_layout_desc(mpw *w, unsigned dim);

#endif
