/*
 * run.c - starting a command on its trace, and running a callback over
 * every record, in one thread or several, with warnings in file order
 * either way (the library gives them).
 */
#include "tool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

lct_reader *tool_start(const tool_cmd *cmd, int argc, char **argv,
                       unsigned flags, tool_args *a)
{
    tool_parse_args(cmd, argc, argv, a);
    return tool_open(a->file, flags | tool_source_flags(a), a->quiet);
}

/* MARK: running over every record */

void *tool_run_state(const tool_run *run, unsigned t)
{
    return run->states + (size_t)t * run->state_size;
}

void tool_run_free(tool_run *run)
{
    free(run->states);
    run->states = NULL;
    run->nstates = 0;
}

static bool alloc_states(tool_run *run, unsigned n, size_t state_size)
{
    run->nstates = n;
    run->state_size = state_size;
    run->states = calloc(n, state_size);
    if (!run->states)
        fprintf(stderr, "%s: out of memory\n", tool_name);
    return run->states != NULL;
}

/* One thread over the inputs' records: a file's in order, or several
 * files' merge. */
static bool run_sequential(tool_inputs *in, bool quiet,
                           tool_record_fn on_record, tool_run *run)
{
    tool_progress progress;
    tool_inputs_progress_start(&progress, in, quiet);
    lct_record rec;
    bool ok = true;
    void *state = tool_run_state(run, 0);
    while (tool_inputs_next(in, &rec, NULL) == 1) {
        tool_inputs_progress(&progress, in);
        if (on_record(state, &rec) != 0) {
            ok = false;
            break;
        }
    }
    tool_progress_end(&progress);
    tool_inputs_stats(in, &run->stats);
    return ok;
}

/* What each scan thread carries besides the caller's state. */
typedef struct lane {
    void *state;
    size_t state_size;
    tool_record_fn on_record;
    tool_reset_fn reset;
    bool failed;
    tool_progress *progress; /* thread 0 only */
    uint64_t first, span;    /* thread 0's byte range, for progress */
    char pad[64];            /* lanes are written by different threads */
} lane;

static int lane_record(void *state, const lct_record *rec)
{
    lane *l = state;
    if (l->progress && l->span)
        tool_progress_fraction(l->progress, (double)(rec->offset - l->first) /
                                                (double)l->span);
    if (l->on_record(l->state, rec) != 0) {
        l->failed = true;
        return 1;
    }
    return 0;
}

/* The file is read again by one thread: empty the state. */
static void lane_reset(void *state)
{
    lane *l = state;
    if (l->reset)
        l->reset(l->state);
    memset(l->state, 0, l->state_size);
    l->failed = false;
}

/* A skipped frame is progress too (its warning comes from the library). */
static void lane_skip(void *state, uint64_t offset, const char *reason)
{
    (void)reason;
    lane *l = state;
    if (l->progress && l->span)
        tool_progress_fraction(l->progress,
                               (double)(offset - l->first) / (double)l->span);
}

static void lane_empty_run(void *state, uint64_t offset, uint64_t frames)
{
    lane_skip(state, offset + 4 * (frames - 1), NULL);
}

/* One pass, each thread reading its own range of the file (through the
 * mapping, or with pread(2) under --stream): an index first is a serial
 * pass of its own (check -j 2 took 0.26 s of CPU that way on the 551 MB
 * trace, 0.13 s like this).
 * Only a reader with no file behind it (lct_open_buffer) takes the index.
 * Either way the library gives the warnings, in file order. */
static lct_status scan_file(lct_reader *r, lct_scan *scan, lct_stats *st,
                            lct_error *err)
{
    lct_status rc = lct_scan_file(r, scan, st, err);
    if (rc != LCT_ERR_INVALID || !lct_reader_data(r).ptr)
        return rc;
    lct_index *idx;
    rc = lct_index_build(r, &idx, err);
    if (rc == LCT_OK)
        rc = lct_scan_run(idx, scan, st, err);
    lct_index_free(idx);
    return rc;
}

static bool run_parallel(lct_reader *r, unsigned jobs, bool quiet,
                         size_t state_size, tool_record_fn on_record,
                         tool_reset_fn reset, tool_run *run)
{
    lct_scan scan = {.threads = jobs, .on_record = lane_record,
        .on_skip = lane_skip, .on_reset = lane_reset,
        .on_empty_run = lane_empty_run};
    unsigned n = lct_scan_threads(&scan, NULL);
    lane *lanes = calloc(n, sizeof *lanes);
    void **lane_ptrs = calloc(n, sizeof *lane_ptrs);
    bool ok = lanes && lane_ptrs && alloc_states(run, n, state_size);
    tool_progress progress;
    tool_progress_start(&progress, r, quiet);
    lct_stats st;
    lct_reader_stats(r, &st);
    for (unsigned t = 0; ok && t < n; t++) {
        lanes[t] = (lane){.state = tool_run_state(run, t),
                          .state_size = state_size,
                          .on_record = on_record,
                          .reset = reset};
        lane_ptrs[t] = &lanes[t];
    }
    if (ok) {
        lanes[0].progress = &progress;
        lanes[0].first = lct_reader_header(r)->size;
        lanes[0].span = st.file_size / n;
        scan.states = lane_ptrs;
        lct_error err;
        ok = scan_file(r, &scan, &run->stats, &err) == LCT_OK;
        if (!ok)
            fprintf(stderr, "%s: %s\n", tool_name, err.message);
    }
    tool_progress_end(&progress);
    for (unsigned t = 0; ok && t < n; t++)
        ok = !lanes[t].failed;
    free(lanes);
    free(lane_ptrs);
    return ok;
}

bool tool_records(lct_reader *r, unsigned jobs, bool quiet,
                  size_t state_size, tool_record_fn on_record,
                  tool_reset_fn reset, lct_log_fn log, void *log_ctx,
                  tool_run *run)
{
    memset(run, 0, sizeof *run);
    lct_reader_set_log(r, log, log_ctx);
    lct_stats st;
    lct_reader_stats(r, &st);
    if (jobs == 0)
        jobs = st.file_size >= TOOL_PARALLEL_MIN_BYTES ? 0 : 1;
    /* Several threads need a regular file with a size: a pipe, a FIFO
     * or a /proc file is read by one. */
    struct stat info;
    bool parallel = jobs != 1 && strcmp(lct_reader_path(r), "<stdin>") != 0 &&
                    stat(lct_reader_path(r), &info) == 0 &&
                    S_ISREG(info.st_mode) && info.st_size > 0;
    tool_inputs one;
    tool_inputs_one(&one, r);
    bool ok = parallel ? run_parallel(r, jobs, quiet, state_size, on_record,
                                      reset, run)
                       : alloc_states(run, 1, state_size) &&
                             run_sequential(&one, quiet, on_record, run);
    return !run->stats.shrank && ok;
}

bool tool_records_in(tool_inputs *in, unsigned jobs, bool quiet,
                     size_t state_size, tool_record_fn on_record,
                     tool_reset_fn reset, lct_log_fn log, void *log_ctx,
                     tool_run *run)
{
    if (!in->merge)
        return tool_records(in->r, jobs, quiet, state_size, on_record, reset,
                            log, log_ctx, run);
    memset(run, 0, sizeof *run);
    tool_inputs_set_log(in, log, log_ctx);
    bool ok = alloc_states(run, 1, state_size) &&
              run_sequential(in, quiet, on_record, run);
    return !run->stats.shrank && ok;
}
