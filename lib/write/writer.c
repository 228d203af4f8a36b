/*
 * writer.c - writing traces: a msgpack builder that encodes as msgspec
 * does (smallest encodings, float64 floats), and frames written with one
 * write(2) each.
 */
#include "base/bytes_internal.h"
#include "base/error_internal.h"
#include "msgpack/msgpack_internal.h"
#include "lct_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lct_writer {
    int fd;
    bool owns_fd;
    bool in_frame;
    int failed; /* 0, or the status lct_writer_end will report */
    unsigned char *buf; /* the frame: 4 length bytes, then the body */
    size_t len, cap;
    char *name;
};

static void put(lct_writer *w, const void *p, size_t n)
{
    if (w->failed)
        return;
    if (w->cap - w->len < n) {
        size_t cap = w->cap ? w->cap : 1024;
        while (cap - w->len < n) {
            if (cap > SIZE_MAX / 2) {
                w->failed = LCT_ERR_NOMEM;
                return;
            }
            cap *= 2;
        }
        unsigned char *b = realloc(w->buf, cap);
        if (!b) {
            w->failed = LCT_ERR_NOMEM;
            return;
        }
        w->buf = b;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

static void put_byte(lct_writer *w, unsigned b)
{
    unsigned char c = (unsigned char)b;
    put(w, &c, 1);
}

static void put_be(lct_writer *w, uint64_t v, int bytes)
{
    unsigned char b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    put(w, b, (size_t)bytes);
}

/* A length or count in the smallest form: fix (if any), 8, 16, 32 bits. */
static void sized(lct_writer *w, uint64_t n, unsigned fix, uint64_t fixmax,
                  unsigned b8, unsigned b16, unsigned b32)
{
    if (fix && n <= fixmax) {
        put_byte(w, fix | (unsigned)n);
    } else if (b8 && n <= 0xff) {
        put_byte(w, b8);
        put_be(w, n, 1);
    } else if (n <= 0xffff) {
        put_byte(w, b16);
        put_be(w, n, 2);
    } else if (n <= 0xffffffffu) {
        put_byte(w, b32);
        put_be(w, n, 4);
    } else if (!w->failed) {
        w->failed = LCT_ERR_RANGE;
    }
}

lct_status lct_writer_open_fd(int fd, lct_writer **out, lct_error *err)
{
    if (out)
        *out = NULL;
    if (fd < 0 || !out)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_writer_open_fd: invalid argument");
    lct_writer *w = calloc(1, sizeof *w);
    if (!w)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "lct_writer_open_fd: out of memory");
    w->fd = fd;
    *out = w;
    return LCT_OK;
}

lct_status lct_writer_open(const char *path, bool append, lct_writer **out,
                    lct_error *err)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_writer_open: invalid argument");
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
    int fd = open(path, flags, 0644);
    if (fd < 0)
        return lct__fail_open(err, errno, path, "cannot open for writing");
    int rc = lct_writer_open_fd(fd, out, err);
    if (rc != LCT_OK) {
        close(fd);
        return rc;
    }
    (*out)->owns_fd = true;
    return LCT_OK;
}

void lct_writer_close(lct_writer *w)
{
    if (!w)
        return;
    if (w->owns_fd)
        close(w->fd);
    free(w->buf);
    free(w);
}

void lct_writer_begin(lct_writer *w)
{
    w->len = 0;
    w->failed = 0;
    w->in_frame = true;
    put(w, "\0\0\0\0", LCT__PREFIX_SIZE); /* the length, set at the end */
}

lct_status lct_writer_end(lct_writer *w, lct_error *err)
{
    if (!w || !w->in_frame)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_writer_end: no frame begun");
    w->in_frame = false;
    if (w->failed)
        return lct__fail(err, w->failed, 0, 0,
                         "lct_writer_end: the frame could not be built: %s",
                         lct_strerror(w->failed));
    size_t body = w->len - LCT__PREFIX_SIZE;
    if (body > 0xffffffffu)
        return lct__fail(err, LCT_ERR_RANGE, 0, 0,
                         "lct_writer_end: a frame of %zu bytes is too large",
                         body);
    be32enc(w->buf, (uint32_t)body);
    /* One write for the whole frame: appends under PIPE_BUF are atomic.
     * A short write (a full disk, a signal) is finished by more. */
    size_t done = 0;
    while (done < w->len) {
        ssize_t n = write(w->fd, w->buf + done, w->len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            return lct__fail(err, LCT_ERR_SYS, e, 0,
                             "lct_writer_end: write failed: %s", strerror(e));
        }
        done += (size_t)n;
    }
    return LCT_OK;
}

void lct_writer_map(lct_writer *w, uint32_t pairs)
{
    sized(w, pairs, 0x80, 15, 0, 0xde, 0xdf);
}

void lct_writer_array(lct_writer *w, uint32_t count)
{
    sized(w, count, 0x90, 15, 0, 0xdc, 0xdd);
}

void lct_writer_str(lct_writer *w, const char *s, size_t len)
{
    sized(w, len, 0xa0, 31, 0xd9, 0xda, 0xdb);
    put(w, s, len);
}

void lct_writer_cstr(lct_writer *w, const char *s)
{
    lct_writer_str(w, s, strlen(s));
}

void lct_writer_bin(lct_writer *w, const void *p, size_t len)
{
    sized(w, len, 0, 0, 0xc4, 0xc5, 0xc6);
    put(w, p, len);
}

void lct_writer_uint(lct_writer *w, uint64_t v)
{
    if (v <= 0x7f) {
        put_byte(w, (unsigned)v);
    } else if (v <= 0xff) {
        put_byte(w, 0xcc);
        put_be(w, v, 1);
    } else if (v <= 0xffff) {
        put_byte(w, 0xcd);
        put_be(w, v, 2);
    } else if (v <= 0xffffffffu) {
        put_byte(w, 0xce);
        put_be(w, v, 4);
    } else {
        put_byte(w, 0xcf);
        put_be(w, v, 8);
    }
}

void lct_writer_int(lct_writer *w, int64_t v)
{
    if (v >= 0) {
        lct_writer_uint(w, (uint64_t)v);
    } else if (v >= -32) {
        put_byte(w, (unsigned)(v & 0xff));
    } else if (v >= INT8_MIN) {
        put_byte(w, 0xd0);
        put_be(w, (uint64_t)v, 1);
    } else if (v >= INT16_MIN) {
        put_byte(w, 0xd1);
        put_be(w, (uint64_t)v, 2);
    } else if (v >= INT32_MIN) {
        put_byte(w, 0xd2);
        put_be(w, (uint64_t)v, 4);
    } else {
        put_byte(w, 0xd3);
        put_be(w, (uint64_t)v, 8);
    }
}

void lct_writer_float64(lct_writer *w, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    put_byte(w, 0xcb);
    put_be(w, bits, 8);
}

void lct_writer_bool(lct_writer *w, bool v)
{
    put_byte(w, v ? 0xc3 : 0xc2);
}

void lct_writer_nil(lct_writer *w)
{
    put_byte(w, 0xc0);
}

void lct_writer_ext(lct_writer *w, int8_t type, const void *p, size_t len)
{
    static const unsigned char fixext[17] = {[1] = 0xd4, [2] = 0xd5,
                                             [4] = 0xd6, [8] = 0xd7,
                                             [16] = 0xd8};
    if (len <= 16 && fixext[len])
        put_byte(w, fixext[len]);
    else
        sized(w, len, 0, 0, 0xc7, 0xc8, 0xc9);
    put_byte(w, (unsigned)(uint8_t)type);
    put(w, p, len);
}

void lct_writer_codec(lct_writer *w, const char *tag)
{
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "__t__");
    lct_writer_cstr(w, tag);
    lct_writer_cstr(w, "v");
}

/* Re-encode one value, recursing into containers (bounded: the value was
 * walked, so its nesting is within LCT_MAX_DEPTH). */
static void copy_value(lct_writer *w, lct_value v, unsigned depth)
{
    lct_iter it;
    lct_value a, b;
    int64_t i;
    uint64_t u;
    double d;
    bool flag;
    lct_str s;
    lct_bytes bytes;
    int8_t type;
    if (depth > LCT_MAX_DEPTH) {
        w->failed = w->failed ? w->failed : LCT_ERR_DEPTH;
        return;
    }
    switch (lct_value_type(v)) {
    case LCT_TYPE_NIL: lct_writer_nil(w); return;
    case LCT_TYPE_BOOL: lct_value_get_bool(v, &flag); lct_writer_bool(w, flag); return;
    case LCT_TYPE_INT:
        if (lct_value_get_int64(v, &i) == LCT_OK)
            lct_writer_int(w, i);
        else if (lct_value_get_uint64(v, &u) == LCT_OK)
            lct_writer_uint(w, u);
        return;
    case LCT_TYPE_FLOAT32:
    case LCT_TYPE_FLOAT64:
        /* Python floats are doubles, and msgspec writes them as float64. */
        lct_value_get_double(v, &d);
        lct_writer_float64(w, d);
        return;
    case LCT_TYPE_STR:
        if (lct_value_get_str(v, &s) == LCT_OK) {
            lct_writer_str(w, s.ptr, s.len);
            return;
        }
        break;
    case LCT_TYPE_BIN:
        if (lct_value_get_bin(v, &bytes) == LCT_OK) {
            lct_writer_bin(w, bytes.ptr, bytes.len);
            return;
        }
        break;
    case LCT_TYPE_EXT:
        if (lct_value_get_ext(v, &type, &bytes) == LCT_OK) {
            lct_writer_ext(w, type, bytes.ptr, bytes.len);
            return;
        }
        break;
    case LCT_TYPE_ARRAY:
        if (lct_array_iter_init(v, &it) == LCT_OK) {
            lct_writer_array(w, it.count);
            int rc;
            while ((rc = lct_array_iter_next(&it, &a)) == 1)
                copy_value(w, a, depth + 1);
            if (rc == 0)
                return;
            /* Elements went missing: the header already promised them. */
        }
        break;
    case LCT_TYPE_MAP:
        if (lct_map_iter_init(v, &it) == LCT_OK) {
            lct_writer_map(w, it.count);
            int rc;
            while ((rc = lct_map_iter_next(&it, &a, &b)) == 1) {
                copy_value(w, a, depth + 1);
                copy_value(w, b, depth + 1);
            }
            if (rc == 0)
                return;
        }
        break;
    case LCT_TYPE_INVALID:
        break;
    }
    lct_writer_nil(w);
    if (!w->failed)
        w->failed = LCT_ERR_MALFORMED;
}

void lct_writer_value(lct_writer *w, lct_value v)
{
    copy_value(w, v, 0);
}

lct_status lct_writer_header(lct_writer *w, const lct_header *h, lct_error *err)
{
    if (!w || !h)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_writer_header: invalid argument");
    lct_writer_begin(w);
    lct_writer_map(w, h->level_meta.ptr ? 10 : 9);
    lct_writer_cstr(w, "type");
    lct_writer_cstr(w, "header");
    lct_writer_cstr(w, "magic");
    lct_writer_bin(w, "LMCT", 4);
    lct_writer_cstr(w, "format_version");
    lct_writer_int(w, LCT_FORMAT_VERSION);
    lct_writer_cstr(w, "level");
    lct_writer_str(w, h->level.ptr, h->level.len);
    lct_writer_cstr(w, "trace_schema_version");
    lct_writer_int(w, h->trace_schema_version);
    lct_writer_cstr(w, "t_mono_start");
    lct_writer_float64(w, h->t_mono_start);
    lct_writer_cstr(w, "t_wall_start");
    lct_writer_float64(w, h->t_wall_start);
    lct_writer_cstr(w, "sm_config_json");
    lct_writer_str(w, h->sm_config_json.ptr, h->sm_config_json.len);
    lct_writer_cstr(w, "sm_config_digest");
    lct_writer_str(w, h->sm_config_digest.ptr, h->sm_config_digest.len);
    if (h->level_meta.ptr) {
        lct_writer_cstr(w, "level_meta");
        lct_writer_value(w, h->level_meta);
    }
    return lct_writer_end(w, err);
}

void lct_writer_record_begin(lct_writer *w, double t_mono, double t_wall,
                             const char *qualname, size_t qualname_len)
{
    lct_writer_begin(w);
    lct_writer_map(w, 5);
    lct_writer_cstr(w, "type");
    lct_writer_cstr(w, "record");
    lct_writer_cstr(w, "t_mono");
    lct_writer_float64(w, t_mono);
    lct_writer_cstr(w, "t_wall");
    lct_writer_float64(w, t_wall);
    lct_writer_cstr(w, "qualname");
    lct_writer_str(w, qualname, qualname_len);
    lct_writer_cstr(w, "args");
}
