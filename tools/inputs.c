/*
 * inputs.c - a command's traces: the one FILE, or several put on one
 * timeline by lct_merge (one trace per server process of a fleet).  On
 * that timeline a record's t_mono, a clock of its own process that no
 * other file shares, is replaced where asked by its t_wall less the first
 * record's (LCT_MERGE_TIMELINE): the seconds since the fleet's first call.
 */
#include "tool.h"

#include <stdlib.h>
#include <string.h>

void tool_inputs_one(tool_inputs *in, lct_reader *r)
{
    memset(in, 0, sizeof *in);
    in->r = r;
    in->readers = &in->r;
    in->n = r ? 1 : 0;
    in->current = r;
}

bool tool_inputs_open(tool_inputs *in, const tool_args *a, unsigned flags,
                      bool retime)
{
    memset(in, 0, sizeof *in);
    int stdin_uses = 0;
    for (int i = 0; i < a->noperands; i++)
        stdin_uses += strcmp(a->operands[i], "-") == 0;
    if (stdin_uses > 1)
        tool_usage_error(NULL, "standard input (-) can be read only once");
    if (a->noperands == 1) {
        tool_inputs_one(in, tool_open(a->file, flags, a->quiet));
        return in->r != NULL;
    }
    size_t n = (size_t)(unsigned)a->noperands;
    in->readers = calloc(n, sizeof *in->readers);
    if (!in->readers) {
        fprintf(stderr, "%s: out of memory\n", tool_name);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        in->readers[in->n] = tool_open(a->operands[i], flags, a->quiet);
        if (!in->readers[in->n]) {
            tool_inputs_close(in);
            return false;
        }
        in->n++;
    }
    in->r = in->readers[0];
    lct_error err;
    if (lct_merge_new(in->readers, in->n, retime ? LCT_MERGE_TIMELINE : 0,
                      &in->merge, &err) != LCT_OK) {
        fprintf(stderr, "%s: %s\n", tool_name, err.message);
        tool_inputs_close(in);
        return false;
    }
    return true;
}

void tool_inputs_close(tool_inputs *in)
{
    lct_merge_free(in->merge);
    for (size_t i = 0; i < in->n; i++)
        lct_close(in->readers[i]);
    if (in->readers != &in->r)
        free(in->readers);
    memset(in, 0, sizeof *in);
}

int tool_inputs_next(tool_inputs *in, lct_record *rec, size_t *which)
{
    if (!in->merge) {
        if (which)
            *which = 0;
        return lct_next(in->r, rec);
    }
    size_t from = 0;
    int rc = lct_merge_next(in->merge, rec, &from);
    if (which)
        *which = from;
    if (rc == 1)
        in->current = in->readers[from];
    return rc;
}

lct_reader *tool_inputs_reader(const tool_inputs *in, size_t which)
{
    return which < in->n ? in->readers[which] : NULL;
}

void tool_inputs_stats(const tool_inputs *in, lct_stats *sum)
{
    if (in->merge)
        lct_merge_stats(in->merge, sum);
    else
        lct_reader_stats(in->r, sum);
}

bool tool_inputs_whole(const tool_inputs *in)
{
    for (size_t i = 0; i < in->n; i++)
        if (lct_reader_status(in->readers[i]) != LCT_OK)
            return false;
    return true;
}

void tool_inputs_set_log(tool_inputs *in, lct_log_fn log, void *ctx)
{
    for (size_t i = 0; i < in->n; i++)
        lct_reader_set_log(in->readers[i], log, ctx);
}

void tool_inputs_one_file(const tool_inputs *in, const char *cmd,
                          const char *option, bool given)
{
    if (given && in->n > 1)
        tool_usage_error(cmd, "%s works on one FILE, not on several merged",
                         option);
}

void tool_inputs_progress_start(tool_progress *p, const tool_inputs *in,
                                bool quiet)
{
    lct_stats st;
    tool_inputs_stats(in, &st);
    tool_progress_start_size(p, st.file_size, quiet);
    p->merged_records = 0;
}

void tool_inputs_progress(tool_progress *p, const tool_inputs *in)
{
    if (!in->merge) {
        tool_progress_update(p, in->r);
        return;
    }
    /* summing every reader's counters is cheap, but not per record */
    if (!p->active || (p->merged_records++ & 1023) != 0)
        return;
    lct_stats st;
    tool_inputs_stats(in, &st);
    tool_progress_fraction(p, (double)st.bytes_read / (double)p->total);
}
