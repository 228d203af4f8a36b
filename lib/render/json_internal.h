/*
 * json_internal.h - the JSON writer shared by json_value.c (which owns it)
 * and json_record.c (which puts records and headers together with it).
 */
#ifndef LCT_JSON_INTERNAL_H
#define LCT_JSON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "lct_json.h"

/* The writer: output gathers in buf and goes to the sink in chunks of up
 * to its size (64 KiB: few sink calls, and on the stack only while one
 * value is rendered). */
typedef struct jw {
    lct_write_fn write;
    void *ctx;
    int failed;    /* the sink said stop */
    int key_depth; /* > 0: inside a non-str key, so escape quotes */
    /* Non-str keys whose text this writer renders (0: a value's own
     * writer).  Each such level escapes the quotes of the one inside it
     * again, doubling them, so past LCT_JSON_MAX_KEY_NESTING a key prints
     * as its msgpack bytes (nothing to escape) and output stays linear. */
    unsigned key_nest;
    /* > 0 while a map is rendered in one pass (render_map_fast): its
     * output must stay in buf, to be taken back if a key repeats, so buf
     * is not flushed; what does not fit sets overflow instead. */
    unsigned hold;
    bool overflow;
    unsigned flags; /* LCT_JSON_UNWRAP, LCT_JSON_BIN_HEX */
    size_t len;
    char buf[64 * 1024];
} jw;

/* Begin writing to the sink with LCT_JSON_* flags. */
void lct__jw_begin(jw *w, lct_write_fn write, void *ctx, unsigned flags);
/* Text as it is (it is JSON already). */
void lct__jw_raw(jw *w, const char *s, size_t n);
/* A JSON string. */
void lct__jw_string(jw *w, lct_str s);
/* A double, shortest round trip; null if not finite. */
void lct__jw_double(jw *w, double d);
/* A value; LCT_OK or why it cannot print. */
int lct__jw_value(jw *w, lct_value v);
/* Flush; the status of the whole: rc, or LCT_ERR_SYS if the sink
 * stopped. */
lct_status lct__jw_end(jw *w, int rc);

#endif
