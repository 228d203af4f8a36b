/*
 * json_record.c - records and headers as one JSON object each, from the
 * value writer's pieces (json_value.c).
 */
#include "render/json_internal.h"
#include "render/render_internal.h"
#include "lct_json.h"

#include <inttypes.h>
#include <stdio.h>

lct_status lct_record_write_json(const lct_record *rec, lct_write_fn write,
                          void *ctx)
{
    return lct_record_write_json_opts(rec, 0, write, ctx);
}

lct_status lct_record_write_json_opts(const lct_record *rec, unsigned flags,
                                      lct_write_fn write, void *ctx)
{
    if (!rec || !write)
        return LCT_ERR_INVALID;
    jw w;
    lct__jw_begin(&w, write, ctx, flags);
    char digits[24], *end = digits + sizeof digits;
    char *d = lct__u64_digits(rec->offset, end);
    lct__jw_raw(&w, "{\"offset\":", 10);
    lct__jw_raw(&w, d, (size_t)(end - d));
    lct__jw_raw(&w, ",\"t_mono\":", 10);
    lct__jw_double(&w, rec->t_mono);
    lct__jw_raw(&w, ",\"t_wall\":", 10);
    lct__jw_double(&w, rec->t_wall);
    lct__jw_raw(&w, ",\"qualname\":", 12);
    lct__jw_string(&w, rec->qualname);
    lct__jw_raw(&w, ",\"args\":", 8);
    int rc = lct__jw_value(&w, rec->args);
    lct__jw_raw(&w, "}", 1);
    return lct__jw_end(&w, rc);
}

lct_status lct_header_write_json(const lct_header *h, lct_write_fn write, void *ctx)
{
    if (!h || !write)
        return LCT_ERR_INVALID;
    jw w;
    lct__jw_begin(&w, write, ctx, 0);
    char buf[64];
    int n = snprintf(buf, sizeof buf, "{\"format_version\":%" PRId64
                     ",\"level\":", h->format_version);
    lct__jw_raw(&w, buf, (size_t)n);
    lct__jw_string(&w, h->level);
    n = snprintf(buf, sizeof buf, ",\"trace_schema_version\":%" PRId64
                 ",\"t_mono_start\":", h->trace_schema_version);
    lct__jw_raw(&w, buf, (size_t)n);
    lct__jw_double(&w, h->t_mono_start);
    lct__jw_raw(&w, ",\"t_wall_start\":", 16);
    lct__jw_double(&w, h->t_wall_start);
    lct__jw_raw(&w, ",\"sm_config_json\":", 18);
    lct__jw_string(&w, h->sm_config_json);
    lct__jw_raw(&w, ",\"sm_config_digest\":", 20);
    lct__jw_string(&w, h->sm_config_digest);
    int rc = LCT_OK;
    if (h->level_meta.ptr) {
        lct__jw_raw(&w, ",\"level_meta\":", 14);
        rc = lct__jw_value(&w, h->level_meta);
    }
    lct__jw_raw(&w, "}", 1);
    return lct__jw_end(&w, rc);
}
