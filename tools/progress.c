/*
 * progress.c - progress on stderr for long reads: only on a terminal,
 * only for large inputs, a few times a second, erased at the end.
 */
#include "tool.h"

#include <libutil.h>
#include <time.h>
#include <unistd.h>

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
void tool_progress_fraction(tool_progress *p, double fraction)
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
    tool_progress_fraction(p, (double)st.bytes_read / (double)p->total);
}

void tool_progress_end(tool_progress *p)
{
    if (p->active && p->last_shown > 0) {
        fputs("\r\033[K", stderr); /* erase the progress line */
        fflush(stderr);
    }
    p->active = false;
}

