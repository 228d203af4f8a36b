/*
 * sqlite_functions.c - SQL functions that join liblct's tables: lct_hex()
 * turns what `records.args` shows of a hash (base64 text, as msgspec's
 * JSON writes bin) or a blob into the lowercase hex `keys.chunk_hash`
 * holds; and registers those of sqlite_percentile.c.
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

int lct__sqlite_functions(sqlite3 *db)
{
    int rc = sqlite3_create_function_v2(
        db, "lct_hex", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, hex_fn,
        NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = lct__sqlite_percentile(db);
    return rc;
}
