/*
 * decode.c - msgpack bytes to the Python values msgspec gives for them
 * (a record's args, a header): one pass over the bytes, every read
 * bounds-checked, nesting bounded at LCT_MAX_DEPTH, short strings shared
 * through a small cache (map keys and codec tags repeat on every record).
 */
#include "lctpy.h"

#include <datetime.h>
#include <string.h>

PyObject *lctpy_ext_type;

typedef struct dec {
    const unsigned char *p, *end;
    unsigned depth;
} dec;

/* MARK: short strings, shared */

#define STR_CACHE_SIZE 256
#define STR_CACHE_MAX_LEN 48

typedef struct str_slot {
    PyObject *str;
    size_t len;
    uint64_t a, b; /* str_ends of its bytes */
    unsigned char bytes[STR_CACHE_MAX_LEN];
} str_slot;

static str_slot str_cache[STR_CACHE_SIZE];

static uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8); /* a fixed size: one load, no call */
    return v;
}

/* Two 8-byte loads cover a string of up to 16 bytes: its hash, and its
 * comparison with a cached one, without a loop over its bytes.  (Byte by
 * byte, and then through variable-length copies to the stack, the lookup
 * was a third of the time of building every args: perf.)  avail: bytes
 * readable from s on. */
static void str_ends(const unsigned char *s, size_t len, size_t avail,
                     uint64_t *a, uint64_t *b)
{
    *b = 0;
    if (len >= 8) {
        *a = load64(s);
        *b = load64(s + len - 8);
    } else if (avail >= 8) {
        *a = len ? load64(s) & (~0ull >> (64 - 8 * len)) : 0;
    } else {
        *a = 0;
        for (size_t i = 0; i < len; i++)
            *a |= (uint64_t)s[i] << (8 * i);
    }
}

static PyObject *make_str(const unsigned char *s, size_t len, size_t avail)
{
    if (len > STR_CACHE_MAX_LEN)
        return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)len, NULL);
    uint64_t a, b;
    str_ends(s, len, avail, &a, &b);
    uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ ((b + len) * 0xc2b2ae3d27d4eb4full);
    h ^= h >> 29;
    str_slot *slot = &str_cache[h % STR_CACHE_SIZE];
    if (slot->str && slot->len == len && slot->a == a && slot->b == b &&
        (len <= 16 || memcmp(slot->bytes, s, len) == 0)) {
        Py_INCREF(slot->str);
        return slot->str;
    }
    PyObject *str = PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)len,
                                         NULL);
    if (!str)
        return NULL;
    Py_XDECREF(slot->str);
    Py_INCREF(str);
    slot->str = str;
    slot->len = len;
    slot->a = a;
    slot->b = b;
    memcpy(slot->bytes, s, len);
    return str;
}

/* MARK: reading */

static PyObject *malformed(const char *what)
{
    PyErr_Format(PyExc_ValueError, "malformed msgpack value: %s", what);
    return NULL;
}

static bool take(dec *d, size_t n, const unsigned char **out)
{
    if ((size_t)(d->end - d->p) < n)
        return false;
    *out = d->p;
    d->p += n;
    return true;
}

static bool take_uint(dec *d, unsigned bytes, uint64_t *v)
{
    const unsigned char *q;
    if (!take(d, bytes, &q))
        return false;
    *v = 0;
    for (unsigned i = 0; i < bytes; i++)
        *v = (*v << 8) | q[i];
    return true;
}

static PyObject *value(dec *d, bool as_key);

static PyObject *array(dec *d, uint64_t n, bool as_key)
{
    if (n > (uint64_t)(d->end - d->p)) /* each element takes a byte */
        return malformed("array longer than its bytes");
    PyObject *out = as_key ? PyTuple_New((Py_ssize_t)n)
                           : PyList_New((Py_ssize_t)n);
    if (!out)
        return NULL;
    for (uint64_t i = 0; i < n; i++) {
        /* an array used as a map key is a tuple, and so are its arrays */
        PyObject *v = value(d, as_key);
        if (!v) {
            Py_DECREF(out);
            return NULL;
        }
        if (as_key)
            PyTuple_SET_ITEM(out, (Py_ssize_t)i, v);
        else
            PyList_SET_ITEM(out, (Py_ssize_t)i, v);
    }
    return out;
}

static PyObject *map(dec *d, uint64_t n)
{
    if (n > (uint64_t)(d->end - d->p) / 2)
        return malformed("map longer than its bytes");
    /* sized once: a map's entries never make it grow */
    PyObject *out = _PyDict_NewPresized((Py_ssize_t)n);
    if (!out)
        return NULL;
    for (uint64_t i = 0; i < n; i++) {
        PyObject *k = value(d, true);
        PyObject *v = k ? value(d, false) : NULL;
        /* Python's dict: equal keys (1, 1.0, True) are one entry, the
         * first position with the last value, as in the reference. */
        if (!v || PyDict_SetItem(out, k, v) != 0) {
            Py_XDECREF(k);
            Py_XDECREF(v);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(k);
        Py_DECREF(v);
    }
    return out;
}

/* A timestamp ext (type -1) as an aware UTC datetime, microseconds
 * truncated, as msgspec gives it. */
static PyObject *timestamp(const unsigned char *q, size_t len)
{
    int64_t sec;
    uint32_t nsec = 0;
    if (len == 4) {
        sec = (int64_t)((uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 |
                        (uint32_t)q[2] << 8 | q[3]);
    } else if (len == 8) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v = (v << 8) | q[i];
        nsec = (uint32_t)(v >> 34);
        sec = (int64_t)(v & 0x3ffffffffull);
    } else if (len == 12) {
        for (int i = 0; i < 4; i++)
            nsec = (nsec << 8) | q[i];
        uint64_t v = 0;
        for (int i = 4; i < 12; i++)
            v = (v << 8) | q[i];
        sec = (int64_t)v;
    } else {
        return malformed("timestamp of another length");
    }
    if (nsec >= 1000000000u || sec < -62135596800ll || sec > 253402300799ll)
        return malformed("timestamp out of range");
    int64_t days = sec / 86400, rem = sec % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    PyObject *delta = PyDelta_FromDSU((int)days, (int)rem, (int)(nsec / 1000));
    PyObject *epoch = delta ? PyDateTimeAPI->DateTime_FromDateAndTime(
                                  1970, 1, 1, 0, 0, 0, 0,
                                  PyDateTime_TimeZone_UTC,
                                  PyDateTimeAPI->DateTimeType)
                            : NULL;
    PyObject *out = epoch ? PyNumber_Add(epoch, delta) : NULL;
    Py_XDECREF(delta);
    Py_XDECREF(epoch);
    return out;
}

static PyObject *ext(dec *d, size_t len)
{
    const unsigned char *q, *data;
    if (!take(d, 1, &q) || !take(d, len, &data))
        return malformed("ext cut short");
    int8_t type = (int8_t)q[0];
    if (type == -1)
        return timestamp(data, len);
    return PyObject_CallFunction(lctpy_ext_type, "iy#", (int)type,
                                 (const char *)data, (Py_ssize_t)len);
}

static PyObject *str_of(dec *d, size_t len)
{
    const unsigned char *q;
    if (!take(d, len, &q))
        return malformed("str cut short");
    return make_str(q, len, (size_t)(d->end - q));
}

static PyObject *bin_of(dec *d, size_t len)
{
    const unsigned char *q;
    if (!take(d, len, &q))
        return malformed("bin cut short");
    return PyBytes_FromStringAndSize((const char *)q, (Py_ssize_t)len);
}

/* A container one level deeper: the depth bound holds for Python's
 * recursion here as it does for the library's walker. */
static PyObject *container(dec *d, bool is_array, uint64_t n, bool as_key)
{
    if (++d->depth > LCT_MAX_DEPTH)
        return malformed("nested too deeply");
    PyObject *v = is_array ? array(d, n, as_key) : map(d, n);
    d->depth--;
    return v;
}

/* float32/64, uint 8-64 and int 8-64 (0xca to 0xd3). */
static PyObject *number(dec *d, unsigned char t)
{
    uint64_t n;
    if (t == 0xca || t == 0xcb) {
        if (!take_uint(d, t == 0xca ? 4 : 8, &n))
            return malformed(t == 0xca ? "float32 cut short"
                                       : "float64 cut short");
        if (t == 0xcb) {
            double f;
            memcpy(&f, &n, 8);
            return PyFloat_FromDouble(f);
        }
        uint32_t b32 = (uint32_t)n;
        float f;
        memcpy(&f, &b32, 4);
        return PyFloat_FromDouble(f);
    }
    if (t <= 0xcf) {
        if (!take_uint(d, 1u << (t - 0xcc), &n))
            return malformed("uint cut short");
        return PyLong_FromUnsignedLongLong(n);
    }
    unsigned bytes = 1u << (t - 0xd0);
    if (!take_uint(d, bytes, &n))
        return malformed("int cut short");
    if (bytes < 8 && (n >> (bytes * 8 - 1)))
        n |= ~0ull << (bytes * 8); /* sign-extend */
    return PyLong_FromLongLong((long long)(int64_t)n);
}

static PyObject *value(dec *d, bool as_key)
{
    const unsigned char *q;
    uint64_t n;
    if (!take(d, 1, &q))
        return malformed("cut short");
    unsigned char t = q[0];
    if (t <= 0x7f)
        return PyLong_FromLong(t);
    if (t >= 0xe0)
        return PyLong_FromLong((int8_t)t);
    if ((t & 0xe0) == 0xa0)
        return str_of(d, t & 0x1f);
    if ((t & 0xf0) == 0x90 || (t & 0xf0) == 0x80)
        return container(d, (t & 0xf0) == 0x90, t & 0x0f, as_key);
    if (t >= 0xca && t <= 0xd3)
        return number(d, t);
    switch (t) {
    case 0xc0: Py_RETURN_NONE;
    case 0xc2: Py_RETURN_FALSE;
    case 0xc3: Py_RETURN_TRUE;
    case 0xc4: case 0xc5: case 0xc6:
        if (!take_uint(d, 1u << (t - 0xc4), &n))
            return malformed("bin length cut short");
        return bin_of(d, (size_t)n);
    case 0xc7: case 0xc8: case 0xc9:
        if (!take_uint(d, 1u << (t - 0xc7), &n))
            return malformed("ext length cut short");
        return ext(d, (size_t)n);
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        return ext(d, (size_t)1 << (t - 0xd4));
    case 0xd9: case 0xda: case 0xdb:
        if (!take_uint(d, 1u << (t - 0xd9), &n))
            return malformed("str length cut short");
        return str_of(d, (size_t)n);
    case 0xdc: case 0xdd: case 0xde: case 0xdf:
        if (!take_uint(d, (t & 1) ? 4 : 2, &n))
            return malformed("length cut short");
        return container(d, t <= 0xdd, n, as_key);
    default:
        return malformed("byte 0xc1 is never used");
    }
}

PyObject *lctpy_decode(const unsigned char *p, size_t len)
{
    if (!PyDateTimeAPI) {
        PyDateTime_IMPORT;
        if (!PyDateTimeAPI)
            return NULL;
    }
    dec d = {p, p + len, 0};
    PyObject *v = value(&d, false);
    if (v && d.p != d.end) {
        Py_DECREF(v);
        return malformed("bytes after the value");
    }
    return v;
}
