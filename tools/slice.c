/*
 * slice.c - `lct dump --at OFFSET` (the frame at a file offset, even one
 * the reader would skip, with why) and `--range A:B` (records by number,
 * Python's slice rules: from A to before B, negative counting from the
 * end, either side may be left out).
 */
#include "tool.h"
#include "dump.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* One side of A:B: empty, or a whole number that may be negative. */
static bool range_side(const char *s, size_t len, bool *given, int64_t *v)
{
    *given = len > 0;
    if (!len)
        return true;
    char buf[32];
    if (len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    const char *err;
    *v = strtonum(buf, LLONG_MIN + 1, LLONG_MAX, &err);
    return err == NULL;
}

bool tool_range_parse(const char *text, tool_range *out)
{
    const char *colon = strchr(text, ':');
    if (!colon)
        return false;
    return range_side(text, (size_t)(colon - text), &out->has_from,
                      &out->from) &&
           range_side(colon + 1, strlen(colon + 1), &out->has_to, &out->to);
}

static bool tool_range_needs_count(const tool_range *rg)
{
    return (rg->has_from && rg->from < 0) || (rg->has_to && rg->to < 0);
}

/* A side against `count` records, as Python clamps it. */
static uint64_t clamp(bool given, int64_t v, uint64_t dflt, uint64_t count)
{
    if (!given)
        return dflt;
    if (v < 0)
        return (uint64_t)-v > count ? 0 : count - (uint64_t)-v;
    return (uint64_t)v > count ? count : (uint64_t)v;
}

void tool_range_set(tool_range *rg, const char *cmd, const char *arg)
{
    if (!tool_range_parse(arg, rg))
        tool_usage_error(cmd, "--range '%s' is not A:B (record numbers, "
                         "either may be left out or negative)", arg);
    rg->set = true;
}

/* Write r's sidecar again (extend it, given the prefix `old`): a sidecar
 * that is there says its user wants one, so one that is stale, damaged
 * or behind a trace that grew is rebuilt where it can be written (beside
 * the trace, else the cache directory), as lct index would; none is made
 * where there was none.  The fresh one, or NULL after a warning. */
static lct_sidecar *rebuild(lct_reader *r, const lct_sidecar *old,
                            const char *cmd, bool quiet)
{
    lct_sidecar *fresh = NULL;
    lct_error err;
    char where[PATH_MAX];
    lct_reader_set_log(r, NULL, NULL); /* the caller's pass says them */
    lct_status st = lct_sidecar_build(r, old, &fresh, &err);
    lct_reader_rewind(r);
    lct_reader_set_log(r, quiet ? tool_log_quiet : tool_log, NULL);
    if (st == LCT_OK &&
        lct_sidecar_save(fresh, r, where, sizeof where, &err) == LCT_OK)
        return fresh;
    if (!quiet) {
        fprintf(stderr, "%s %s: WARNING: the sidecar index could not be "
                "written again: ", tool_name, cmd);
        tool_put_message(stderr, err.message);
        fputc('\n', stderr);
    }
    if (st == LCT_OK)
        return fresh; /* good for this run */
    lct_sidecar_free(fresh);
    return NULL;
}

lct_sidecar *tool_sidecar(lct_reader *r, const char *cmd, bool quiet)
{
    if (strcmp(lct_reader_path(r), "<stdin>") == 0)
        return NULL;
    lct_sidecar *s;
    lct_error err;
    lct_status st = lct_sidecar_load(r, &s, &err);
    if (st == LCT_OK && lct_sidecar_whole(s))
        return s;
    if (st == LCT_ERR_NOT_FOUND || st == LCT_ERR_INVALID)
        return NULL;
    if (st != LCT_OK && !quiet) {
        fprintf(stderr, "%s %s: WARNING: ", tool_name, cmd);
        tool_put_message(stderr, err.message);
        fputs("; writing it again\n", stderr);
    }
    lct_sidecar *fresh = rebuild(r, st == LCT_OK ? s : NULL, cmd, quiet);
    if (st == LCT_OK)
        lct_sidecar_free(s);
    return fresh;
}

/* The records of r: its sidecar's (s, when it has a valid one), and those
 * after what it indexed when the trace grew since; without one, a pass
 * over the file. */
static uint64_t count_records(lct_reader *r, const lct_sidecar *s)
{
    if (!s)
        return tool_count_records(r);
    uint64_t n = lct_sidecar_count(s);
    if (!lct_sidecar_whole(s)) {
        lct_reader_set_log(r, NULL, NULL);
        lct_record rec;
        if (lct_reader_seek(r, s, n, NULL) == LCT_OK)
            while (lct_next(r, &rec) == 1)
                n++;
        lct_reader_rewind(r);
    }
    return n;
}

void tool_range_start(tool_range *rg, lct_reader *r, const char *cmd,
                      bool quiet, bool seek)
{
    if (!rg->set)
        return;
    bool need_count = tool_range_needs_count(rg);
    if (need_count && !lct_reader_data(r).ptr &&
        strcmp(lct_reader_path(r), "<stdin>") == 0)
        tool_usage_error(cmd, "a negative --range needs a file, not "
                         "standard input");
    /* loaded once, for the count and the seek both */
    lct_sidecar *s = need_count || (seek && rg->has_from && rg->from > 0)
                         ? tool_sidecar(r, cmd, quiet)
                         : NULL;
    uint64_t count = UINT64_MAX;
    if (need_count) {
        count = count_records(r, s);
        lct_reader_set_log(r, quiet ? tool_log_quiet : tool_log, NULL);
    }
    rg->first = clamp(rg->has_from, rg->from, 0, count);
    rg->end = clamp(rg->has_to, rg->to, count, count);
    lct_error err;
    if (seek && s && rg->first > 0 && rg->first <= lct_sidecar_count(s) &&
        lct_reader_seek(r, s, rg->first, &err) != LCT_OK && !quiet)
        fprintf(stderr, "%s %s: %s\n", tool_name, cmd, err.message);
    lct_sidecar_free(s);
}

/* A frame the reader skips: its place, why, and its body if it is one
 * whole msgpack value (else null). */
static lct_status print_skipped(const lct_record *rec, const char *why,
                                unsigned json)
{
    printf("{\"offset\":%" PRIu64 ",\"length\":%" PRIu32 ",\"error\":",
           rec->offset, rec->length);
    tool_put_json_str(why, strlen(why));
    fputs(",\"body\":", stdout);
    size_t size;
    if (lct_value_size(rec->body, &size) == LCT_OK && size == rec->length)
        lct_value_write_json_opts(rec->body, json, tool_stdout_write, NULL);
    else
        fputs("null", stdout);
    fputs("}\n", stdout);
    return LCT_OK;
}

/* What lies at an offset that holds no record frame, said on stderr;
 * false when the offset may hold one. */
static bool say_no_record_at(const lct_reader *r, uint64_t offset)
{
    uint64_t header = lct_reader_header(r)->size;
    lct_stats st;
    lct_reader_stats(r, &st);
    if (offset == 0)
        fprintf(stderr, "%s dump: offset 0 is the header frame (%" PRIu64
                " bytes; --header prints it)\n", tool_name, header);
    else if (offset < header)
        fprintf(stderr, "%s dump: offset %" PRIu64 " is inside the header "
                "frame (offsets 0 to %" PRIu64 ")\n", tool_name, offset,
                header - 1);
    else if (offset >= st.file_size)
        fprintf(stderr, "%s dump: offset %" PRIu64 " is %s the end of the "
                "file (%" PRIu64 " bytes)\n", tool_name, offset,
                offset == st.file_size ? "at" : "past", st.file_size);
    else
        return false;
    return true;
}

/* The number a plain dump gives the record at offset: the records the
 * reader yields before it (a pass up to it). */
static uint64_t record_number(lct_reader *r, uint64_t offset)
{
    lct_sidecar *s = tool_sidecar(r, "dump", false);
    uint64_t lo = 0, hi = lct_sidecar_count(s);
    lct_sidecar_row row;
    if (s && hi && (lct_sidecar_get(s, hi - 1, &row), row.offset >= offset)) {
        while (lo < hi) { /* the first row at or after offset */
            uint64_t mid = lo + (hi - lo) / 2;
            lct_sidecar_get(s, mid, &row);
            if (row.offset < offset)
                lo = mid + 1;
            else
                hi = mid;
        }
        lct_sidecar_free(s);
        return lo;
    }
    lct_sidecar_free(s);
    lct_reader_set_log(r, NULL, NULL); /* the frame's own report says it */
    lct_record rec;
    uint64_t n = 0;
    while (lct_next(r, &rec) == 1 && rec.offset < offset)
        n++;
    return n;
}

int tool_dump_at(lct_reader *r, const char *text, unsigned json,
                 const tool_fields *fields)
{
    const char *err;
    long long offset = strtonum(text, 0, LLONG_MAX, &err);
    if (err)
        tool_usage_error("dump", "--at '%s' is %s", text, err);
    if (say_no_record_at(r, (uint64_t)offset))
        return EXIT_REFUSED;
    lct_record rec;
    const char *why = "";
    int rc = lct_record_at(r, (uint64_t)offset, &rec, &why);
    if (rc == 1 && fields) {
        uint64_t idx = record_number(r, (uint64_t)offset);
        tool_fields_write(fields, &rec, idx, json, tool_stdout_write, NULL);
        fputc('\n', stdout);
        return EXIT_OK;
    }
    if (rc == 1) {
        lct_record_write_json_opts(&rec, json, tool_stdout_write, NULL);
        fputc('\n', stdout);
        return EXIT_OK;
    }
    if (rc == 0) {
        print_skipped(&rec, why, json);
        return EXIT_DAMAGED;
    }
    fprintf(stderr, "%s dump: no whole frame at offset %lld: %s\n", tool_name,
            offset, lct_strerror(rc));
    return EXIT_REFUSED;
}

uint64_t tool_count_records(lct_reader *r)
{
    lct_reader_set_log(r, NULL, NULL); /* the second pass says it all */
    lct_record rec;
    uint64_t n = 0;
    while (lct_next(r, &rec) == 1)
        n++;
    lct_reader_rewind(r);
    return n;
}
