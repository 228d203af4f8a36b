/*
 * common.c - the pieces every lct subcommand uses (see tool.h).
 */
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <libutil.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vis.h>

const char *tool_name = "lct";

void tool_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
              uint64_t offset, const char *message)
{
    /* A shrink is the tool's error to report (tool_shrank), not a warning. */
    if (kind != LCT_WARN_SHRANK)
        lct_log_stderr(ctx, r, kind, offset, message);
}

lct_reader *tool_open(const char *path, unsigned flags, bool quiet)
{
    lct_reader *r = NULL;
    lct_error err;
    int rc;
    if (quiet)
        flags |= LCT_QUIET;
    if (strcmp(path, "-") == 0)
        rc = lct_open_fd(0, "<stdin>", flags, &r, &err);
    else
        rc = lct_open(path, flags, &r, &err);
    if (rc != LCT_OK) {
        fprintf(stderr, "%s: %s\n", tool_name, err.message);
        return NULL;
    }
    if (!quiet)
        lct_reader_set_log(r, tool_log, NULL);
    return r;
}

void tool_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s%s%s: ", tool_name, cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s%s%s --help'.\n", tool_name, cmd ? " " : "",
            cmd ? cmd : "");
    exit(EXIT_USAGE);
}

void tool_bad_option(const char *cmd, int c, char **argv)
{
    /* Inside a cluster (-qj) getopt has not moved optind yet, so only a
     * long option can be named by its word; a short one by optopt. */
    const char *word = argv[optind - 1];
    bool is_long = strncmp(word, "--", 2) == 0 && (c == ':' || !optopt);
    char shown[3] = {'-', (char)optopt, '\0'};
    if (c == ':')
        tool_usage_error(cmd, "option '%s' needs a value",
                         is_long ? word : shown);
    if (is_long)
        tool_usage_error(cmd, "unknown option '%s'", word);
    tool_usage_error(cmd,
                     "unknown option '%s' (to name a FILE that starts "
                     "with '-', write ./ before it)",
                     shown);
}

long long tool_parse_count(const char *cmd, const char *opt, const char *arg)
{
    const char *errstr;
    long long n = strtonum(arg, 0, LLONG_MAX, &errstr);
    if (errstr)
        tool_usage_error(cmd, "%s '%s' is %s", opt, arg, errstr);
    return n;
}

double tool_parse_seconds(const char *cmd, const char *opt, const char *arg)
{
    char *end;
    errno = 0;
    double d = strtod(arg, &end);
    if (end == arg || *end != '\0' || errno != 0 || isnan(d))
        tool_usage_error(cmd, "%s '%s' is not a number of seconds", opt, arg);
    return d;
}

static int stdout_errno; /* the first write failure's errno */

int tool_stdout_write(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    if (fwrite(data, 1, len, stdout) == len)
        return 0;
    if (!stdout_errno)
        stdout_errno = errno;
    return -1;
}

int tool_file_write(void *ctx, const char *data, size_t len)
{
    return fwrite(data, 1, len, ctx) == len ? 0 : -1;
}

void tool_put_vis(FILE *f, const char *s, size_t len)
{
    char buf[4 * 256 + 1];
    /* In pieces, so no allocation and no size limit. */
    while (len > 0) {
        size_t take = len < 256 ? len : 256;
        /* Do not split a UTF-8 sequence between pieces. */
        while (take < len && take > 252 &&
               ((unsigned char)s[take] & 0xc0) == 0x80)
            take--;
        strvisx(buf, s, take, VIS_CSTYLE | VIS_TAB | VIS_NL | VIS_OCTAL);
        fputs(buf, f);
        s += take;
        len -= take;
    }
}

void tool_put_csv(FILE *f, const char *s, size_t len)
{
    /* Control bytes are escaped first (as in every text output), so the
     * only bytes RFC 4180 cares about that remain are ',' and '"'. */
    bool quote = memchr(s, ',', len) || memchr(s, '"', len);
    if (!quote) {
        tool_put_vis(f, s, len);
        return;
    }
    fputc('"', f);
    const char *end = s + len;
    while (s < end) {
        const char *q = memchr(s, '"', (size_t)(end - s));
        size_t run = q ? (size_t)(q - s) : (size_t)(end - s);
        tool_put_vis(f, s, run);
        if (!q)
            break;
        fputs("\"\"", f);
        s = q + 1;
    }
    fputc('"', f);
}

void tool_put_vis_padded(FILE *f, const char *s, size_t len, int width)
{
    tool_put_vis(f, s, len);
    int points = 0;
    for (size_t i = 0; i < len; i++)
        points += ((unsigned char)s[i] & 0xc0) != 0x80;
    for (; points < width; points++)
        fputc(' ', f);
}

void tool_put_json_str(const char *s, size_t len)
{
    lct_json_write_string(s, len, tool_stdout_write, NULL);
}

void tool_put_json_double(double d)
{
    char buf[LCT_DOUBLE_BUFSIZE];
    size_t n = lct_json_format_double(d, buf);
    fwrite(buf, 1, n, stdout);
}

void tool_finish_stdout(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return;
    if (!stdout_errno)
        stdout_errno = errno;
    errno = stdout_errno;
    if (errno == EPIPE)
        exit(EXIT_OK); /* the reader went away: that is not our failure */
    fprintf(stderr, "%s: writing output: %s\n", tool_name, strerror(errno));
    exit(EXIT_REFUSED);
}

unsigned tool_parse_jobs(const char *cmd, const char *arg)
{
    const char *errstr;
    long long n = strtonum(arg, 1, 1024, &errstr);
    if (errstr)
        tool_usage_error(cmd, "-j '%s' is %s (1 to 1024)", arg, errstr);
    return (unsigned)n;
}

/* MARK: progress */

#define PROGRESS_MIN_BYTES (256ull << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void tool_progress_start(tool_progress *p, const lct_reader *r, bool quiet)
{
    lct_stats st;
    lct_reader_stats(r, &st);
    p->active = !quiet && st.file_size > PROGRESS_MIN_BYTES &&
                isatty(STDERR_FILENO);
    p->total = st.file_size;
    p->next_check = 0;
    p->last_shown = 0;
}

/* Show progress as a fraction of the file, a few times a second; cheap
 * between those (a countdown, not a clock read, per call). */
static void progress_fraction(tool_progress *p, double fraction)
{
    if (!p->active || p->next_check-- > 0)
        return;
    p->next_check = 4096;
    double t = now();
    if (t - p->last_shown < 0.25)
        return;
    p->last_shown = t;
    char total[8];
    humanize_number(total, sizeof total, (int64_t)p->total, "B", HN_AUTOSCALE,
                    HN_DECIMAL | HN_NOSPACE);
    fprintf(stderr, "\r%s: %3d%% of %s", tool_name, (int)(100.0 * fraction),
            total);
    fflush(stderr);
}

void tool_progress_update(tool_progress *p, const lct_reader *r)
{
    if (!p->active)
        return;
    lct_stats st;
    lct_reader_stats(r, &st);
    progress_fraction(p, (double)st.bytes_read / (double)p->total);
}

void tool_progress_end(tool_progress *p)
{
    if (p->active && p->last_shown > 0) {
        fputs("\r\033[K", stderr); /* erase the progress line */
        fflush(stderr);
    }
    p->active = false;
}

/* MARK: running over every record */

typedef struct skip_note {
    uint64_t offset;
    char *reason;
} skip_note;

/* What each scan thread carries besides the caller's state. */
typedef struct lane {
    void *state;
    tool_record_fn on_record;
    bool failed;
    skip_note *skips;
    size_t nskips, capskips;
    tool_progress *progress; /* thread 0 only */
    uint64_t first, span;    /* thread 0's byte range, for progress */
    char pad[64];            /* lanes are written by different threads */
} lane;

static int lane_record(void *state, const lct_record *rec)
{
    lane *l = state;
    if (l->progress && l->span)
        progress_fraction(l->progress,
                          (double)(rec->offset - l->first) / (double)l->span);
    if (l->on_record(l->state, rec) != 0) {
        l->failed = true;
        return 1;
    }
    return 0;
}

static void lane_skip(void *state, uint64_t offset, const char *reason)
{
    lane *l = state;
    if (l->progress && l->span)
        progress_fraction(l->progress,
                          (double)(offset - l->first) / (double)l->span);
    if (l->nskips == l->capskips) {
        size_t cap = l->capskips ? l->capskips * 2 : 16;
        skip_note *n = reallocarray(l->skips, cap, sizeof *n);
        if (!n) {
            l->failed = true;
            return;
        }
        l->skips = n;
        l->capskips = cap;
    }
    char *copy = strdup(reason);
    if (!copy) {
        l->failed = true;
        return;
    }
    l->skips[l->nskips].offset = offset;
    l->skips[l->nskips].reason = copy;
    l->nskips++;
}

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

static bool run_sequential(lct_reader *r, bool quiet, tool_record_fn on_record,
                           lct_log_fn log, void *log_ctx, tool_run *run)
{
    lct_reader_set_log(r, log, log_ctx);
    tool_progress progress;
    tool_progress_start(&progress, r, quiet);
    lct_record rec;
    bool ok = true;
    void *state = tool_run_state(run, 0);
    while (lct_next(r, &rec) == 1) {
        tool_progress_update(&progress, r);
        if (on_record(state, &rec) != 0) {
            ok = false;
            break;
        }
    }
    tool_progress_end(&progress);
    lct_reader_stats(r, &run->stats);
    return ok;
}

static bool tool_records_inner(lct_reader *r, unsigned jobs, bool quiet,
                               size_t state_size, tool_record_fn on_record,
                               lct_log_fn log, void *log_ctx, tool_run *run);

bool tool_shrank(const lct_reader *r, const lct_stats *st)
{
    if (!st->shrank)
        return false;
    const char *path = lct_reader_path(r);
    fprintf(stderr, "%s: ", tool_name);
    tool_put_vis(stderr, path, strlen(path));
    fprintf(stderr,
            ": file shrank while reading: bytes from offset %llu are gone\n",
            (unsigned long long)st->shrank_offset);
    return true;
}

bool tool_records(lct_reader *r, unsigned jobs, bool quiet,
                  size_t state_size, tool_record_fn on_record, lct_log_fn log,
                  void *log_ctx, tool_run *run)
{
    bool ok = tool_records_inner(r, jobs, quiet, state_size, on_record, log,
                                 log_ctx, run);
    return !tool_shrank(r, &run->stats) && ok;
}

static bool tool_records_inner(lct_reader *r, unsigned jobs, bool quiet,
                               size_t state_size, tool_record_fn on_record,
                               lct_log_fn log, void *log_ctx, tool_run *run)
{
    memset(run, 0, sizeof *run);
    lct_stats st;
    lct_reader_stats(r, &st);
    if (jobs == 0)
        jobs = st.file_size >= TOOL_PARALLEL_MIN_BYTES ? 0 : 1;
    if (jobs == 1)
        return alloc_states(run, 1, state_size) &&
               run_sequential(r, quiet, on_record, log, log_ctx, run);

    lct_index *idx;
    lct_error err;
    if (lct_index_build(r, &idx, &err) != LCT_OK) {
        fprintf(stderr, "%s: %s\n", tool_name, err.message);
        return false;
    }
    lct_scan scan = {jobs, lane_record, lane_skip, NULL};
    unsigned n = lct_scan_threads(&scan, idx);
    lane *lanes = calloc(n, sizeof *lanes);
    void **lane_ptrs = calloc(n, sizeof *lane_ptrs);
    bool ok = lanes && lane_ptrs && alloc_states(run, n, state_size);
    tool_progress progress;
    tool_progress_start(&progress, r, quiet);
    if (ok) {
        for (unsigned t = 0; t < n; t++) {
            lanes[t].state = tool_run_state(run, t);
            lanes[t].on_record = on_record;
            lane_ptrs[t] = &lanes[t];
        }
        lanes[0].progress = &progress;
        lanes[0].first = lct_index_offset(idx, 0);
        lanes[0].span = st.file_size / n;
        scan.states = lane_ptrs;
        if (lct_scan_run(idx, &scan, &run->stats, &err) != LCT_OK) {
            fprintf(stderr, "%s: %s\n", tool_name, err.message);
            ok = false;
        }
    }
    tool_progress_end(&progress);
    /* Warnings in file order: each thread's skips, then a cut tail (or the
     * shrink, which ends everything at its offset). */
    bool shrank = run->stats.shrank;
    for (unsigned t = 0; lanes && t < n; t++) {
        for (size_t i = 0; i < lanes[t].nskips; i++) {
            if (ok && log &&
                !(shrank && lanes[t].skips[i].offset >= run->stats.shrank_offset)) {
                char message[LCT_ERROR_MESSAGE_SIZE];
                snprintf(message, sizeof message,
                         "skipping malformed record at offset %llu: %s",
                         (unsigned long long)lanes[t].skips[i].offset,
                         lanes[t].skips[i].reason);
                log(log_ctx, r, LCT_WARN_MALFORMED, lanes[t].skips[i].offset,
                    message);
            }
            free(lanes[t].skips[i].reason);
        }
        free(lanes[t].skips);
        if (lanes[t].failed)
            ok = false;
    }
    uint64_t offset;
    const char *message;
    if (ok && log && shrank) {
        char text[LCT_ERROR_MESSAGE_SIZE];
        snprintf(text, sizeof text,
                 "file shrank while reading: bytes from offset %llu are gone",
                 (unsigned long long)run->stats.shrank_offset);
        log(log_ctx, r, LCT_WARN_SHRANK, run->stats.shrank_offset, text);
    } else if (ok && log && lct_index_truncation(idx, &offset, &message)) {
        log(log_ctx, r, LCT_WARN_TRUNCATED, offset, message);
    }
    if (!ok)
        fprintf(stderr, "%s: out of memory\n", tool_name);
    free(lanes);
    free(lane_ptrs);
    lct_index_free(idx);
    return ok;
}

/* MARK: per-qualname table */

int qentry_cmp(qentry *a, qentry *b)
{
    size_t n = a->qualname.len < b->qualname.len ? a->qualname.len
                                                 : b->qualname.len;
    int c = memcmp(a->qualname.ptr, b->qualname.ptr, n);
    if (c)
        return c;
    return (a->qualname.len > b->qualname.len) -
           (a->qualname.len < b->qualname.len);
}

RB_GENERATE(qtable, qentry, link, qentry_cmp)

qentry *qtable_get(struct qtable *t, lct_str qualname)
{
    qentry key = {.qualname = qualname};
    qentry *e = RB_FIND(qtable, t, &key);
    if (e)
        return e;
    /* The key is copied: a streamed reader's views die at the next record. */
    e = calloc(1, sizeof *e + qualname.len);
    if (!e) {
        fprintf(stderr, "%s: out of memory\n", tool_name);
        return NULL;
    }
    char *copy = (char *)(e + 1);
    if (qualname.len)
        memcpy(copy, qualname.ptr, qualname.len);
    e->qualname = (lct_str){copy, qualname.len};
    RB_INSERT(qtable, t, e);
    return e;
}

bool qtable_add(struct qtable *t, const lct_record *rec, bool keep_gaps)
{
    qentry *e = qtable_get(t, rec->qualname);
    if (!e)
        return false;
    if (e->count == 0) {
        e->first = rec->t_mono;
    } else if (keep_gaps) {
        if (e->ngaps == e->capgaps) {
            size_t cap = e->capgaps ? e->capgaps * 2 : 64;
            double *g = reallocarray(e->gaps, cap, sizeof *g);
            if (!g) {
                fprintf(stderr, "%s: out of memory\n", tool_name);
                return false;
            }
            e->gaps = g;
            e->capgaps = cap;
        }
        e->gaps[e->ngaps++] = rec->t_mono - e->last;
    }
    e->last = rec->t_mono;
    e->count++;
    e->args_bytes += rec->args.len;
    return true;
}

bool qtable_merge(struct qtable *into, struct qtable *later, bool keep_gaps)
{
    qentry *e, *next;
    RB_FOREACH_SAFE(e, qtable, later, next) {
        RB_REMOVE(qtable, later, e);
        qentry *mine = RB_FIND(qtable, into, e);
        if (!mine) {
            RB_INSERT(qtable, into, e);
            continue;
        }
        if (keep_gaps) {
            size_t need = mine->ngaps + e->ngaps + 1;
            if (need > mine->capgaps) {
                double *g = reallocarray(mine->gaps, need, sizeof *g);
                if (!g) {
                    fprintf(stderr, "%s: out of memory\n", tool_name);
                    free(e->gaps);
                    free(e);
                    return false;
                }
                mine->gaps = g;
                mine->capgaps = need;
            }
            /* the gap across the seam between the two ranges */
            mine->gaps[mine->ngaps++] = e->first - mine->last;
            if (e->ngaps)
                memcpy(mine->gaps + mine->ngaps, e->gaps,
                       e->ngaps * sizeof *e->gaps);
            mine->ngaps += e->ngaps;
        }
        mine->count += e->count;
        mine->last = e->last;
        mine->args_bytes += e->args_bytes;
        free(e->gaps);
        free(e);
    }
    return true;
}

void qtable_free(struct qtable *t)
{
    qentry *e, *next;
    RB_FOREACH_SAFE(e, qtable, t, next) {
        RB_REMOVE(qtable, t, e);
        free(e->gaps);
        free(e);
    }
}
