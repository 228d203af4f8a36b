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
 * percentile(Y, P): as SQLite's ext/misc/percentile.c computes it.  Rows
 * whose Y is NULL are left out; the others' values, sorted, are read at
 * index P/100 x (n - 1), interpolated linearly between its neighbours;
 * NULL when no row has a Y.  P is a number from 0 to 100, the same in
 * every row; a Y that is not a number is an error.  median(Y) is
 * percentile(Y, 50).
 */
typedef struct percentile_acc {
    double *v;
    sqlite3_int64 n, cap;
    double p;
    bool have_p, failed;
} percentile_acc;

static bool numeric(sqlite3_value *v)
{
    int t = sqlite3_value_numeric_type(v);
    return t == SQLITE_INTEGER || t == SQLITE_FLOAT;
}

static void percentile_add(sqlite3_context *ctx, percentile_acc *a,
                           sqlite3_value *y, double p, const char *name)
{
    if (a->failed)
        return;
    if (a->have_p && p != a->p) {
        sqlite3_result_error(ctx, "the 2nd argument to percentile() is not "
                             "the same for all input rows", -1);
        a->failed = true;
        return;
    }
    a->p = p;
    a->have_p = true;
    if (sqlite3_value_type(y) == SQLITE_NULL)
        return;
    if (!numeric(y)) {
        char msg[80];
        sqlite3_snprintf(sizeof msg, msg, "1st argument to %s() is not "
                         "numeric", name);
        sqlite3_result_error(ctx, msg, -1);
        a->failed = true;
        return;
    }
    if (a->n == a->cap) {
        sqlite3_int64 cap = a->cap ? a->cap * 2 : 64;
        double *grown = sqlite3_realloc64(a->v, (sqlite3_uint64)cap *
                                                    sizeof *grown);
        if (!grown) {
            sqlite3_result_error_nomem(ctx);
            a->failed = true;
            return;
        }
        a->v = grown;
        a->cap = cap;
    }
    a->v[a->n++] = sqlite3_value_double(y);
}

static void percentile_step(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv)
{
    percentile_acc *a = sqlite3_aggregate_context(ctx, sizeof *a);
    if (!a)
        return;
    double p = 50;
    if (argc == 2) {
        if (!numeric(argv[1]) || sqlite3_value_double(argv[1]) < 0 ||
            sqlite3_value_double(argv[1]) > 100) {
            if (!a->failed)
                sqlite3_result_error(ctx, "2nd argument to percentile() is "
                                     "not a number between 0.0 and 100.0",
                                     -1);
            a->failed = true;
            return;
        }
        p = sqlite3_value_double(argv[1]);
    }
    percentile_add(ctx, a, argv[0], p, argc == 2 ? "percentile" : "median");
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void percentile_final(sqlite3_context *ctx)
{
    percentile_acc *a = sqlite3_aggregate_context(ctx, 0);
    if (!a || a->failed || a->n == 0) {
        if (a && !a->failed)
            sqlite3_result_null(ctx);
        if (a)
            sqlite3_free(a->v);
        return;
    }
    qsort(a->v, (size_t)a->n, sizeof *a->v, by_value);
    double ix = a->p / 100.0 * (double)(a->n - 1);
    sqlite3_int64 i1 = (sqlite3_int64)ix;
    sqlite3_int64 i2 = ix == (double)i1 || i1 == a->n - 1 ? i1 : i1 + 1;
    double v1 = a->v[i1], v2 = a->v[i2];
    sqlite3_result_double(ctx, v1 + (v2 - v1) * (ix - (double)i1));
    sqlite3_free(a->v);
}

int lct__sqlite_functions(sqlite3 *db)
{
    int rc = sqlite3_create_function_v2(
        db, "lct_hex", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, hex_fn,
        NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(
            db, "percentile", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
            NULL, percentile_step, percentile_final, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(
            db, "median", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, NULL,
            percentile_step, percentile_final, NULL);
    return rc;
}
