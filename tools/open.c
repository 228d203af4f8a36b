/*
 * open.c - opening a trace the way the tool does ("-" is standard input,
 * --max-frame, the source -mmap/--stream picks), the tool's warning sinks,
 * and the exit status a reading earns.
 */
#include "tool.h"

#include <stdlib.h>
#include <string.h>

void tool_report_shrink(const lct_reader *r, const char *message)
{
    const char *path = lct_reader_path(r);
    fprintf(stderr, "%s: ", tool_name);
    tool_put_vis(stderr, path, strlen(path));
    fprintf(stderr, ": %s\n", message);
}

void tool_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
              uint64_t offset, const char *message)
{
    /* A shrink is an error (exit 1), said in the library's words. */
    if (kind == LCT_WARN_SHRANK)
        tool_report_shrink(r, message);
    else
        lct_log_stderr(ctx, r, kind, offset, message);
}

void tool_log_quiet(void *ctx, const lct_reader *r, lct_warning_kind kind,
                    uint64_t offset, const char *message)
{
    (void)ctx;
    (void)offset;
    if (kind == LCT_WARN_SHRANK)
        tool_report_shrink(r, message);
}

int tool_exit_for(const lct_stats *st)
{
    if (st->shrank)
        return EXIT_REFUSED;
    return st->skipped || st->truncated ? EXIT_DAMAGED : EXIT_OK;
}

const char *tool_input_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

lct_status tool_open_raw(const char *path, unsigned flags, lct_reader **r,
                         lct_error *err)
{
    lct_open_options o = {.flags = flags,
                          .max_stream_frame = tool_max_stream_frame};
    if (strcmp(path, "-") == 0)
        return lct_open_fd_with(0, tool_input_name(path), &o, r, err);
    return lct_open_with(path, &o, r, err);
}

lct_reader *tool_open(const char *path, unsigned flags, bool quiet)
{
    lct_reader *r = NULL;
    lct_error err;
    if (quiet)
        flags |= LCT_QUIET;
    int rc = tool_open_raw(path, flags, &r, &err);
    if (rc != LCT_OK) {
        fprintf(stderr, "%s: %s\n", tool_name, err.message);
        return NULL;
    }
    lct_reader_set_log(r, quiet ? tool_log_quiet : tool_log, NULL);
    if (quiet) /* only a shrink is said: skips are not even formatted */
        lct_reader_set_log_kinds(r, LCT_WARN_MASK(LCT_WARN_SHRANK));
    return r;
}

unsigned tool_source_flags(const tool_args *a)
{
    /* Every command reads a file once, front to back: unless told, the
     * library takes whichever of the mapping and the stream costs less on
     * this machine (LCT_ONE_PASS; docs/performance.md, "Sources").  Pipes
     * stream whatever this says. */
    return a->source == TOOL_SOURCE_STREAM ? LCT_STREAM
           : a->source == TOOL_SOURCE_MMAP ? 0
                                           : LCT_ONE_PASS;
}
