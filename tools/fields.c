/*
 * fields.c - `lct dump --fields`: a projection of each record onto the
 * fields asked for, in the order asked, rendering nothing else (so a dump
 * of times and qualnames costs about what reading the file costs).
 */
#include "tool.h"
#include "dump.h"

#include <stdio.h>
#include <string.h>

static const char *const field_names[TOOL_FIELD_COUNT] = {
    [TOOL_FIELD_OFFSET] = "offset",   [TOOL_FIELD_IDX] = "idx",
    [TOOL_FIELD_T_MONO] = "t_mono",   [TOOL_FIELD_T_WALL] = "t_wall",
    [TOOL_FIELD_QUALNAME] = "qualname", [TOOL_FIELD_ARGS] = "args"};

const char *tool_field_name(unsigned field)
{
    return field < TOOL_FIELD_COUNT ? field_names[field] : "";
}

bool tool_fields_parse(const char *list, tool_fields *out)
{
    memset(out, 0, sizeof *out);
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        unsigned f;
        for (f = 0; f < TOOL_FIELD_COUNT; f++)
            if (strlen(field_names[f]) == len &&
                memcmp(field_names[f], p, len) == 0)
                break;
        if (f == TOOL_FIELD_COUNT || out->n == TOOL_FIELD_COUNT)
            return false;
        for (unsigned i = 0; i < out->n; i++)
            if (out->order[i] == f)
                return false; /* named twice */
        out->order[out->n++] = (unsigned char)f;
        p += len;
        if (*p == ',' && p[1] != '\0')
            p++;
        else if (*p == ',')
            return false;
    }
    return out->n > 0;
}

/* Decimal digits of v at out; returns how many (at most 20). */
static size_t put_u64(uint64_t v, char *out)
{
    char rev[20];
    size_t n = 0;
    do {
        rev[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    return n;
}

/* One field's "name": and value.  printf-free: at one or two fields a
 * record, the format parsing of snprintf was a tenth of the projection's
 * time (perf, 300,000 records). */
static lct_status write_field(unsigned f, const lct_record *rec, uint64_t idx,
                              unsigned json, lct_write_fn write, void *ctx)
{
    char buf[LCT_DOUBLE_BUFSIZE + 32];
    size_t name = strlen(field_names[f]), len = 0;
    buf[len++] = '"';
    memcpy(buf + len, field_names[f], name);
    len += name;
    buf[len++] = '"';
    buf[len++] = ':';
    switch (f) {
    case TOOL_FIELD_OFFSET:
    case TOOL_FIELD_IDX:
        len += put_u64(f == TOOL_FIELD_IDX ? idx : rec->offset, buf + len);
        break;
    case TOOL_FIELD_T_MONO:
    case TOOL_FIELD_T_WALL:
        len += lct_json_format_double(
            f == TOOL_FIELD_T_MONO ? rec->t_mono : rec->t_wall, buf + len);
        break;
    default:
        break;
    }
    if (write(ctx, buf, len) != 0)
        return LCT_ERR_SYS;
    if (f == TOOL_FIELD_QUALNAME)
        return lct_json_write_string(rec->qualname.ptr, rec->qualname.len,
                                     write, ctx);
    if (f == TOOL_FIELD_ARGS)
        return lct_value_write_json_opts(rec->args, json, write, ctx);
    return LCT_OK;
}

lct_status tool_fields_write(const tool_fields *fl, const lct_record *rec,
                             uint64_t idx, unsigned json, lct_write_fn write,
                             void *ctx)
{
    lct_status rc = write(ctx, "{", 1) != 0 ? LCT_ERR_SYS : LCT_OK;
    for (unsigned i = 0; i < fl->n && rc == LCT_OK; i++) {
        if (i && write(ctx, ",", 1) != 0)
            return LCT_ERR_SYS;
        rc = write_field(fl->order[i], rec, idx, json, write, ctx);
    }
    if (rc == LCT_OK && write(ctx, "}", 1) != 0)
        rc = LCT_ERR_SYS;
    return rc;
}
