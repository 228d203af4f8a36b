/*
 * common.c - the pieces every lct subcommand uses (see tool.h).
 */
#include "tool.h"

#include <errno.h>
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
    lct_write_json_string(s, len, tool_stdout_write, NULL);
}

void tool_put_json_double(double d)
{
    char buf[LCT_DOUBLE_BUFSIZE];
    size_t n = lct_format_double(d, buf);
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

/* MARK: progress */

#define PROGRESS_MIN_BYTES (256ull << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
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

void tool_progress_update(tool_progress *p, const lct_reader *r)
{
    if (!p->active || p->next_check-- > 0)
        return;
    p->next_check = 4096;
    double t = now();
    if (t - p->last_shown < 0.25)
        return;
    p->last_shown = t;
    lct_stats st;
    lct_reader_stats(r, &st);
    char done[8], total[8];
    humanize_number(done, sizeof done, (int64_t)st.bytes_read, "B",
                    HN_AUTOSCALE, HN_DECIMAL | HN_NOSPACE);
    humanize_number(total, sizeof total, (int64_t)p->total, "B", HN_AUTOSCALE,
                    HN_DECIMAL | HN_NOSPACE);
    fprintf(stderr, "\r%s: %3d%% %s / %s", tool_name,
            (int)(100.0 * (double)st.bytes_read / (double)p->total), done,
            total);
    fflush(stderr);
}

void tool_progress_end(tool_progress *p)
{
    if (p->active && p->last_shown > 0) {
        fputs("\r\033[K", stderr); /* erase the progress line */
        fflush(stderr);
    }
    p->active = false;
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
    e = calloc(1, sizeof *e);
    if (!e) {
        fprintf(stderr, "%s: out of memory\n", tool_name);
        return NULL;
    }
    e->qualname = qualname;
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

void qtable_free(struct qtable *t)
{
    qentry *e, *next;
    RB_FOREACH_SAFE(e, qtable, t, next) {
        RB_REMOVE(qtable, t, e);
        free(e->gaps);
        free(e);
    }
}
