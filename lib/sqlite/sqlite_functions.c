/*
 * sqlite_functions.c - SQL functions that join liblct's tables: lct_hex()
 * turns what `records.args` shows of a hash (base64 text, as msgspec's
 * JSON writes bin) or a blob into the lowercase hex `keys.chunk_hash`
 * holds; percentile(x, p) and median(x) are exact aggregates, as
 * SQLite's own percentile extension defines them (SQLite 3.40 has none).
 */
#include "sqlite/sqlite_internal.h"
#include "lct_sqlite.h"
SQLITE_EXTENSION_INIT3

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The value of a standard base64 character, or -1. */
static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Standard base64 with padding into out (room for len * 3 / 4); the byte
 * count, or -1 when text is not base64. */
static long b64_decode(const unsigned char *text, size_t len,
                       unsigned char *out)
{
    if (len % 4)
        return -1;
    long n = 0;
    for (size_t i = 0; i < len; i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            bool last = i + 4 == len;
            if (last && k >= 2 && text[i + (size_t)k] == '=' &&
                (k == 3 || text[i + 3] == '=')) {
                v[k] = 0;
                pad++;
                continue;
            }
            if ((v[k] = b64_value(text[i + (size_t)k])) < 0)
                return -1;
        }
        unsigned long w = (unsigned long)v[0] << 18 | (unsigned long)v[1] << 12 |
                          (unsigned long)v[2] << 6 | (unsigned long)v[3];
        out[n++] = (unsigned char)(w >> 16);
        if (pad < 2)
            out[n++] = (unsigned char)(w >> 8);
        if (pad < 1)
            out[n++] = (unsigned char)w;
    }
    return n;
}

/* lct_hex(blob) and lct_hex(base64 text): lowercase hex; NULL for NULL
 * or text that is not base64. */
static void hex_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    int type = sqlite3_value_type(argv[0]);
    if (type == SQLITE_BLOB) {
        lct__sqlresult_hex(ctx, sqlite3_value_blob(argv[0]),
                   (size_t)sqlite3_value_bytes(argv[0]));
        return;
    }
    if (type != SQLITE_TEXT) {
        sqlite3_result_null(ctx);
        return;
    }
    const unsigned char *text = sqlite3_value_text(argv[0]);
    size_t len = (size_t)sqlite3_value_bytes(argv[0]);
    unsigned char *bytes = sqlite3_malloc64(len / 4 * 3 + 1);
    if (!bytes) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    long n = b64_decode(text, len, bytes);
    if (n < 0)
        sqlite3_result_null(ctx);
    else
        lct__sqlresult_hex(ctx, bytes, (size_t)n);
    sqlite3_free(bytes);
}

/*
 * percentile(Y, P) and median(Y) as SQLite's ext/misc/percentile.c has
 * them, to the last digit, as aggregates and as window functions.  Rows
 * whose Y is NULL are left out; a Y of another type than integer or real
 * is an error (a text '3' too: Y's own type counts, not its affinity), as
 * is an infinite one.  P is a number from 0 to 100 (its affinity counts),
 * the same within 0.001 in every row.  The values, sorted, are read at
 * index (P + 1 - 1) x (n - 1) x 0.01, as the extension computes it (P / 100
 * x (n - 1) differs in the last bit: the 7th percentile of 101 values
 * would not land on the 8th one), interpolated linearly between its two
 * neighbours; NULL when no row has a Y.  median(Y) is percentile(Y, 50)
 * and says percentile() in its errors, as there.
 */
typedef struct percentile_acc {
    double *v;
    sqlite3_int64 n, cap;
    double p_plus_1;  /* P + 1, as the extension keeps it; 0: no row yet */
    bool sorted;      /* v is in order */
    bool keep_sorted; /* a window: keep it so, inserting in place */
} percentile_acc;

static bool is_infinite(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (u >> 52 & 0x7ff) == 0x7ff;
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Where y is in the sorted values (exact: -1 when absent), or where it
 * would go to keep them sorted. */
static sqlite3_int64 percentile_find(const percentile_acc *a, double y,
                                     bool exact)
{
    sqlite3_int64 lo = 0, hi = a->n - 1;
    while (hi >= lo) {
        sqlite3_int64 mid = lo + (hi - lo) / 2;
        if (a->v[mid] < y)
            lo = mid + 1;
        else if (a->v[mid] > y)
            hi = mid - 1;
        else
            return mid;
    }
    return exact ? -1 : lo;
}

static bool percentile_room(sqlite3_context *ctx, percentile_acc *a)
{
    if (a->n < a->cap)
        return true;
    sqlite3_int64 cap = a->cap ? a->cap * 2 : 64;
    double *grown = sqlite3_realloc64(a->v, (sqlite3_uint64)cap *
                                                sizeof *grown);
    if (!grown) {
        sqlite3_result_error_nomem(ctx);
        return false;
    }
    a->v = grown;
    a->cap = cap;
    return true;
}

/* y into the values, keeping them sorted while they are and a window
 * asks for it. */
static void percentile_put(percentile_acc *a, double y)
{
    if (a->n == 0) {
        a->sorted = true;
    } else if (a->sorted && y < a->v[a->n - 1]) {
        if (!a->keep_sorted) {
            a->sorted = false;
        } else {
            sqlite3_int64 at = percentile_find(a, y, false);
            memmove(&a->v[at + 1], &a->v[at],
                    (size_t)(a->n - at) * sizeof *a->v);
            a->v[at] = y;
            a->n++;
            return;
        }
    }
    a->v[a->n++] = y;
}

static void percentile_step(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv)
{
    double p = 50;
    if (argc == 2) {
        int type = sqlite3_value_numeric_type(argv[1]);
        p = sqlite3_value_double(argv[1]);
        if ((type != SQLITE_INTEGER && type != SQLITE_FLOAT) || p < 0 ||
            p > 100) {
            sqlite3_result_error(ctx, "2nd argument to percentile() is not "
                                 "a number between 0.0 and 100.0", -1);
            return;
        }
    }
    percentile_acc *a = sqlite3_aggregate_context(ctx, sizeof *a);
    if (!a)
        return;
    double d = a->p_plus_1 - (p + 1);
    if (a->p_plus_1 == 0) {
        a->p_plus_1 = p + 1;
    } else if (!(d >= -0.001 && d <= 0.001)) {
        sqlite3_result_error(ctx, "2nd argument to percentile() is not the "
                             "same for all input rows", -1);
        return;
    }
    int type = sqlite3_value_type(argv[0]);
    if (type == SQLITE_NULL)
        return;
    if (type != SQLITE_INTEGER && type != SQLITE_FLOAT) {
        sqlite3_result_error(ctx, "1st argument to percentile() is not "
                             "numeric", -1);
        return;
    }
    double y = sqlite3_value_double(argv[0]);
    if (is_infinite(y)) {
        sqlite3_result_error(ctx, "Inf input to percentile()", -1);
        return;
    }
    if (percentile_room(ctx, a))
        percentile_put(a, y);
}

/* A row leaving a window: its Y out of the values. */
static void percentile_inverse(sqlite3_context *ctx, int argc,
                               sqlite3_value **argv)
{
    (void)argc;
    percentile_acc *a = sqlite3_aggregate_context(ctx, sizeof *a);
    int type = sqlite3_value_type(argv[0]);
    if (!a || (type != SQLITE_INTEGER && type != SQLITE_FLOAT))
        return;
    double y = sqlite3_value_double(argv[0]);
    if (is_infinite(y))
        return;
    if (!a->sorted)
        qsort(a->v, (size_t)a->n, sizeof *a->v, by_value);
    a->sorted = a->keep_sorted = true;
    sqlite3_int64 at = percentile_find(a, y, true);
    if (at >= 0) {
        a->n--;
        memmove(&a->v[at], &a->v[at + 1], (size_t)(a->n - at) * sizeof *a->v);
    }
}

/* The result over the values so far; a window's go on kept sorted, the
 * last call's are freed. */
static void percentile_result(sqlite3_context *ctx, bool last)
{
    percentile_acc *a = sqlite3_aggregate_context(ctx, 0);
    if (!a)
        return;
    if (a->n > 0) {
        if (!a->sorted)
            qsort(a->v, (size_t)a->n, sizeof *a->v, by_value);
        a->sorted = true;
        double ix = (a->p_plus_1 - 1.0) * (double)(a->n - 1) * 0.01;
        sqlite3_int64 i1 = (sqlite3_int64)ix;
        sqlite3_int64 i2 = ix == (double)i1 || i1 == a->n - 1 ? i1 : i1 + 1;
        double v1 = a->v[i1], v2 = a->v[i2];
        sqlite3_result_double(ctx, v1 + (v2 - v1) * (ix - (double)i1));
    }
    if (last) {
        sqlite3_free(a->v);
        memset(a, 0, sizeof *a);
    } else {
        a->keep_sorted = true;
    }
}

static void percentile_final(sqlite3_context *ctx)
{
    percentile_result(ctx, true);
}

static void percentile_value(sqlite3_context *ctx)
{
    percentile_result(ctx, false);
}

int lct__sqlite_functions(sqlite3 *db)
{
    int rc = sqlite3_create_function_v2(
        db, "lct_hex", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, hex_fn,
        NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_window_function(
            db, "percentile", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
            percentile_step, percentile_final, percentile_value,
            percentile_inverse, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_window_function(
            db, "median", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
            percentile_step, percentile_final, percentile_value,
            percentile_inverse, NULL);
    return rc;
}
