/*
 * lct_json.h - JSON in msgspec's convention (what LMCache's tools print
 * with msgspec.json): values, records and headers rendered through a
 * sink of your choosing, or into a buffer.  The layer lib/render
 * (docs/architecture.md); docs/format.md gives the rules.
 *
 * Lifetimes: nothing is kept; a render call reads the views it is given
 * (which must be alive) and hands text to the sink before it returns.
 *
 * Threads: the render functions keep no state and are safe from any
 * thread; a sink is called on the calling thread only.
 */
#ifndef LCT_JSON_H
#define LCT_JSON_H

#include "lct_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MARK: = Layer: lib/render (docs/architecture.md) */

/* MARK: - JSON rendering */

/* lct_write_fn, the sink rendered text goes to, is in lct_core.h: the
 * curves' writers (lct_cache.h) use it too. */

/** Non-str map keys nested in one another that still print as JSON text
 *  (see lct_value_write_json). */
#define LCT_JSON_MAX_KEY_NESTING 3

/**
 * Render a value as JSON the way msgspec.json prints the decoded value, so
 * output compares with the Python tooling:
 * - str as a JSON string escaped per RFC 8259 (non-ASCII kept as UTF-8;
 *   invalid UTF-8, possible only under LCT_LAZY, becomes U+FFFD);
 * - bin as standard base64 with padding;
 * - integers exactly; floats as the shortest text that reads back to the
 *   same double (float32 via its double value); NaN and infinities as null;
 * - a timestamp ext (-1) as an RFC 3339 UTC string, microseconds truncated;
 *   other ext as {"ext": TYPE, "data": BASE64};
 * - map keys that are not str as strings holding their JSON text; a
 *   repeated key once, at its first position, with its last value.  Each
 *   key nested in such a key doubles the escaping of what it holds, so a
 *   non-str key inside more than LCT_JSON_MAX_KEY_NESTING others prints
 *   as "msgpack:" and the base64 of its msgpack bytes: output stays within
 *   a constant factor of the input (about 100x at worst), never 2^depth.
 * Output is produced in chunks of up to a few KiB through @p write.
 * @return LCT_OK, LCT_ERR_MALFORMED or LCT_ERR_DEPTH (nothing sensible
 *         to print: output so far is incomplete), LCT_ERR_SYS (the sink
 *         stopped), LCT_ERR_NOMEM (a map of many keys needed an index).
 */
lct_status lct_value_write_json(lct_value v, lct_write_fn write, void *ctx);

/**
 * Render a record as one JSON object, without a newline:
 * {"offset":N,"t_mono":F,"t_wall":F,"qualname":"...","args":{...}}.
 * Returns as lct_value_write_json.
 */
lct_status lct_record_write_json(const lct_record *rec, lct_write_fn write,
                          void *ctx);

/** Options of the _opts renderers. */
enum {
    /** Print a codec wrapper {"__t__": T, "v": V} as V, at every depth, so
     *  a path does not depend on whether keys were a list or a tuple. */
    LCT_JSON_UNWRAP = 1u << 0,
    /** Print bin as lowercase hex instead of base64 (LMCache's logs show
     *  hashes in hex). */
    LCT_JSON_BIN_HEX = 1u << 1
};

/** lct_value_write_json and lct_record_write_json with options
 *  (LCT_JSON_UNWRAP, LCT_JSON_BIN_HEX, or 0 for the plain ones).  Return
 *  as those. */
lct_status lct_value_write_json_opts(lct_value v, unsigned flags,
                                     lct_write_fn write, void *ctx);
lct_status lct_record_write_json_opts(const lct_record *rec, unsigned flags,
                                      lct_write_fn write, void *ctx);

/**
 * Render a header as one JSON object, without a newline: format_version,
 * level, trace_schema_version, t_mono_start, t_wall_start, sm_config_json,
 * sm_config_digest, and level_meta when present (the fixtures' layout).
 */
lct_status lct_header_write_json(const lct_header *h, lct_write_fn write, void *ctx);

/** Room for any lct_json_format_double() result, NUL included. */
#define LCT_DOUBLE_BUFSIZE 32

/**
 * Write the shortest decimal text (up to 17 significant digits) that
 * reads back to @p d, always with a '.' or an exponent ("1.0", "1e-300");
 * "null" for NaN and infinities.  Returns the length.
 */
size_t lct_json_format_double(double d, char out[LCT_DOUBLE_BUFSIZE]);

/**
 * Write @p len bytes at @p s as a quoted JSON string: RFC 8259 escapes,
 * invalid UTF-8 as U+FFFD.  Returns LCT_OK or LCT_ERR_SYS (sink stopped).
 */
lct_status lct_json_write_string(const char *s, size_t len, lct_write_fn write,
                          void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* LCT_JSON_H */
