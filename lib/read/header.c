/*
 * header.c - decoding the header frame's map into lct_header.  Judging
 * magic and versions is the reader's (reader.c), in the reference order.
 */
#include "read/decode_internal.h"
#include "lct_read.h"

#include <string.h>

enum {
    F_MAGIC,
    F_FORMAT_VERSION,
    F_LEVEL,
    F_SCHEMA,
    F_T_MONO_START,
    F_T_WALL_START,
    F_SM_CONFIG_JSON,
    F_SM_CONFIG_DIGEST,
    F_LEVEL_META,
    F_COUNT
};

static const lct__field_spec header_fields[F_COUNT] = {
    [F_MAGIC] = {"magic", LCT__FIELD_BIN, true},
    [F_FORMAT_VERSION] = {"format_version", LCT__FIELD_INT, true},
    [F_LEVEL] = {"level", LCT__FIELD_STR, true},
    [F_SCHEMA] = {"trace_schema_version", LCT__FIELD_INT, true},
    [F_T_MONO_START] = {"t_mono_start", LCT__FIELD_FLOAT, true},
    [F_T_WALL_START] = {"t_wall_start", LCT__FIELD_FLOAT, true},
    [F_SM_CONFIG_JSON] = {"sm_config_json", LCT__FIELD_STR, true},
    [F_SM_CONFIG_DIGEST] = {"sm_config_digest", LCT__FIELD_STR, true},
    /* Newer writers only; kept as a view for `info`, not interpreted. */
    [F_LEVEL_META] = {"level_meta", LCT__FIELD_ANY, false},
};

/* An int field as int64; a uint64 past INT64_MAX saturates, which is
 * refused as a version like any other wrong number. */
static int64_t int_field(lct_value v)
{
    int64_t i;
    if (lct_value_get_int64(v, &i) == LCT_OK)
        return i;
    return INT64_MAX;
}

int lct__header_decode(const unsigned char *body, size_t len,
                       lct_header *out, char *why)
{
    lct_value v[F_COUNT];
    int rc = lct__fields_decode(body, len, "header", header_fields, F_COUNT,
                                false, v, why);
    if (rc != LCT_OK)
        return rc;
    memset(out, 0, sizeof *out);
    lct_value_get_bin(v[F_MAGIC], &out->magic);
    out->format_version = int_field(v[F_FORMAT_VERSION]);
    lct_value_get_str(v[F_LEVEL], &out->level);
    out->trace_schema_version = int_field(v[F_SCHEMA]);
    lct_value_get_double(v[F_T_MONO_START], &out->t_mono_start);
    lct_value_get_double(v[F_T_WALL_START], &out->t_wall_start);
    lct_value_get_str(v[F_SM_CONFIG_JSON], &out->sm_config_json);
    lct_value_get_str(v[F_SM_CONFIG_DIGEST], &out->sm_config_digest);
    out->level_meta = v[F_LEVEL_META];
    out->body.ptr = body;
    out->body.len = len;
    return LCT_OK;
}
