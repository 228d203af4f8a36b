/*
 * mpw.c - the test-side msgpack and frame writer (see mpw.h).
 */
#include "mpw.h"

#include "files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mpw_init(mpw *w)
{
    w->buf = NULL;
    w->len = w->cap = 0;
}

void mpw_free(mpw *w)
{
    free(w->buf);
    mpw_init(w);
}

void mpw_reset(mpw *w)
{
    w->len = 0;
}

void mpw_raw(mpw *w, const void *p, size_t n)
{
    if (w->cap - w->len < n) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap - w->len < n)
            cap *= 2;
        unsigned char *b = realloc(w->buf, cap);
        if (!b) {
            fprintf(stderr, "mpw: out of memory\n");
            abort();
        }
        w->buf = b;
        w->cap = cap;
    }
    if (n)
        memcpy(w->buf + w->len, p, n);
    w->len += n;
}

void mpw_byte(mpw *w, unsigned b)
{
    unsigned char c = (unsigned char)b;
    mpw_raw(w, &c, 1);
}

static void put_be(mpw *w, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--)
        mpw_byte(w, (unsigned)(v >> (8 * i)) & 0xff);
}

void mpw_be32(mpw *w, uint32_t v)
{
    put_be(w, v, 4);
}

void mpw_be(mpw *w, uint64_t v, int bytes)
{
    put_be(w, v, bytes);
}

void mpw_head(mpw *w, unsigned head, uint64_t n)
{
    int bytes;
    switch (head) {
    case 0x80: case 0x90: case 0xa0:
        mpw_byte(w, head | (unsigned)n);
        return;
    case 0xc4: case 0xd9: bytes = 1; break;
    case 0xc5: case 0xda: case 0xdc: case 0xde: bytes = 2; break;
    default: bytes = 4; break; /* 0xc6, 0xdb, 0xdd, 0xdf */
    }
    mpw_byte(w, head);
    put_be(w, n, bytes);
}

static void sized(mpw *w, uint64_t n, unsigned fix, unsigned fixmax,
                  unsigned b8, unsigned b16, unsigned b32)
{
    if (n <= fixmax && fix)
        mpw_byte(w, fix | (unsigned)n);
    else if (n <= 0xff && b8) {
        mpw_byte(w, b8);
        put_be(w, n, 1);
    } else if (n <= 0xffff) {
        mpw_byte(w, b16);
        put_be(w, n, 2);
    } else {
        mpw_byte(w, b32);
        put_be(w, n, 4);
    }
}

void mpw_map(mpw *w, uint32_t n) { sized(w, n, 0x80, 15, 0, 0xde, 0xdf); }
void mpw_array(mpw *w, uint32_t n) { sized(w, n, 0x90, 15, 0, 0xdc, 0xdd); }

void mpw_strn(mpw *w, const void *s, size_t n)
{
    sized(w, n, 0xa0, 31, 0xd9, 0xda, 0xdb);
    mpw_raw(w, s, n);
}

void mpw_str(mpw *w, const char *s)
{
    mpw_strn(w, s, strlen(s));
}

void mpw_bin(mpw *w, const void *p, size_t n)
{
    sized(w, n, 0, 0, 0xc4, 0xc5, 0xc6);
    mpw_raw(w, p, n);
}

void mpw_uint(mpw *w, uint64_t v)
{
    if (v <= 0x7f)
        mpw_byte(w, (unsigned)v);
    else if (v <= 0xff) {
        mpw_byte(w, 0xcc);
        put_be(w, v, 1);
    } else if (v <= 0xffff) {
        mpw_byte(w, 0xcd);
        put_be(w, v, 2);
    } else if (v <= 0xffffffffu) {
        mpw_byte(w, 0xce);
        put_be(w, v, 4);
    } else {
        mpw_byte(w, 0xcf);
        put_be(w, v, 8);
    }
}

void mpw_int(mpw *w, int64_t v)
{
    if (v >= 0) {
        mpw_uint(w, (uint64_t)v);
    } else if (v >= -32) {
        mpw_byte(w, (unsigned)(v & 0xff));
    } else if (v >= INT8_MIN) {
        mpw_byte(w, 0xd0);
        put_be(w, (uint64_t)v, 1);
    } else if (v >= INT16_MIN) {
        mpw_byte(w, 0xd1);
        put_be(w, (uint64_t)v, 2);
    } else if (v >= INT32_MIN) {
        mpw_byte(w, 0xd2);
        put_be(w, (uint64_t)v, 4);
    } else {
        mpw_byte(w, 0xd3);
        put_be(w, (uint64_t)v, 8);
    }
}

void mpw_f64(mpw *w, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    mpw_byte(w, 0xcb);
    put_be(w, bits, 8);
}

void mpw_f32(mpw *w, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    mpw_byte(w, 0xca);
    put_be(w, bits, 4);
}

void mpw_bool(mpw *w, bool b) { mpw_byte(w, b ? 0xc3 : 0xc2); }
void mpw_nil(mpw *w) { mpw_byte(w, 0xc0); }

void mpw_ext(mpw *w, int8_t type, const void *p, size_t n)
{
    static const unsigned fixext[17] = {[1] = 0xd4, [2] = 0xd5, [4] = 0xd6,
                                        [8] = 0xd7, [16] = 0xd8};
    if (n <= 16 && fixext[n]) {
        mpw_byte(w, fixext[n]);
    } else {
        sized(w, n, 0, 0, 0xc7, 0xc8, 0xc9);
    }
    mpw_byte(w, (unsigned)(uint8_t)type);
    mpw_raw(w, p, n);
}

void mpw_frame(mpw *file, const mpw *body)
{
    mpw_be32(file, (uint32_t)body->len);
    mpw_raw(file, body->buf, body->len);
}

void mpw_header_with(mpw *body, const char *magic, int64_t format_version,
                     int64_t schema_version)
{
    mpw_map(body, 9);
    mpw_str(body, "type");
    mpw_str(body, "header");
    mpw_str(body, "magic");
    mpw_bin(body, magic, 4);
    mpw_str(body, "format_version");
    mpw_int(body, format_version);
    mpw_str(body, "level");
    mpw_str(body, "storage");
    mpw_str(body, "trace_schema_version");
    mpw_int(body, schema_version);
    mpw_str(body, "t_mono_start");
    mpw_f64(body, 1000.5);
    mpw_str(body, "t_wall_start");
    mpw_f64(body, 1764600000.25);
    mpw_str(body, "sm_config_json");
    mpw_str(body, "{\"chunk_size\": 256}");
    mpw_str(body, "sm_config_digest");
    mpw_str(body, "");
}

void mpw_std_header(mpw *body)
{
    mpw_header_with(body, "LMCT", 1, 2);
}

void mpw_record_begin(mpw *body, double t_mono, double t_wall,
                      const char *qualname)
{
    mpw_map(body, 5);
    mpw_str(body, "type");
    mpw_str(body, "record");
    mpw_str(body, "t_mono");
    mpw_f64(body, t_mono);
    mpw_str(body, "t_wall");
    mpw_f64(body, t_wall);
    mpw_str(body, "qualname");
    mpw_str(body, qualname);
    mpw_str(body, "args");
}

void mpw_simple_trace(mpw *file, unsigned n)
{
    mpw body;
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(file, &body);
    for (unsigned i = 0; i < n; i++) {
        mpw_reset(&body);
        mpw_record_begin(&body, i * 0.5, 1764600000.0 + i * 0.5, "x.op");
        mpw_map(&body, 1);
        mpw_str(&body, "n");
        mpw_uint(&body, i);
        mpw_frame(file, &body);
    }
    mpw_free(&body);
}

void mpw_objectkey(mpw *w, const mpw_objectkey_shape *s)
{
    mpw_objectkey_salted(w, s, "salt");
}

void mpw_objectkey_salted(mpw *w, const mpw_objectkey_shape *s,
                          const char *salt)
{
    static const unsigned char hash[64] =
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    static const char *names[] = {"model_name", "kv_rank", "object_group_id",
                                  "cache_salt", "more"};
    mpw_map(w, 2);
    mpw_str(w, "__t__");
    mpw_str(w, s->tag);
    mpw_str(w, "v");
    if (s->as_array)
        mpw_array(w, 2 * s->pairs);
    else
        mpw_map(w, s->pairs);
    if (s->pairs == 0)
        return;
    mpw_str(w, "chunk_hash");
    mpw_bin(w, hash, s->hash_len < sizeof hash ? s->hash_len : sizeof hash);
    for (unsigned i = 1; i < s->pairs; i++) {
        mpw_str(w, names[i < 5 ? i - 1 : 4]);
        if (i == 1)
            mpw_str(w, s->model);
        else if (i == 4)
            mpw_str(w, salt);
        else
            mpw_int(w, i == 2 ? s->rank : i == 3 ? s->group : (int64_t)i);
    }
}

void mpw_layout_desc(mpw *w, unsigned dim)
{
    mpw_map(w, 2);
    mpw_str(w, "__t__");
    mpw_str(w, "MemoryLayoutDesc");
    mpw_str(w, "v");
    mpw_map(w, 2);
    mpw_str(w, "shapes");
    mpw_array(w, 1);
    mpw_array(w, 4);
    mpw_int(w, 2);
    mpw_int(w, 256);
    mpw_int(w, 8);
    mpw_int(w, dim);
    mpw_str(w, "dtypes");
    mpw_array(w, 1);
    mpw_str(w, "torch.bfloat16");
}

void mpw_trace_begin(mpw *file, mpw *body)
{
    mpw_init(file);
    mpw_init(body);
    mpw_std_header(body);
    mpw_frame(file, body);
    mpw_reset(body);
}

char *mpw_trace_finish(mpw *file, mpw *body)
{
    char *path = tmp_file_with(file->buf, file->len);
    mpw_free(file);
    mpw_free(body);
    return path;
}
