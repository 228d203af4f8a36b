/*
 * progress.c - progress on stderr for long reads: only where it cannot
 * land in the output (stderr a terminal, stdout not that terminal), only
 * for large inputs, never under -q, a few times a second, erased at the
 * end.
 */
#include "tool.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* MARK: progress */

#define PROGRESS_MIN_BYTES (256ull << 20)

/* Inputs at least this large show progress: 256 MiB, or what
 * LCT_PROGRESS_BYTES says (the tests' way to see it on small files). */
static uint64_t progress_min_bytes(void)
{
    const char *env = getenv("LCT_PROGRESS_BYTES");
    return env && *env ? strtoull(env, NULL, 10) : PROGRESS_MIN_BYTES;
}

/* stderr is a terminal and stdout is not that same terminal: a progress
 * line there cannot land inside the output. */
static bool progress_cannot_mix(void)
{
    if (!isatty(STDERR_FILENO))
        return false;
    struct stat out, err;
    if (fstat(STDOUT_FILENO, &out) != 0 || fstat(STDERR_FILENO, &err) != 0)
        return false;
    return !(out.st_dev == err.st_dev && out.st_ino == err.st_ino) &&
           !(S_ISCHR(out.st_mode) && out.st_rdev == err.st_rdev);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void tool_progress_start_size(tool_progress *p, uint64_t size, bool quiet)
{
    p->active = !quiet && !tool_quiet && size >= progress_min_bytes() &&
                progress_cannot_mix();
    p->total = size;
    p->next_check = 0;
    p->last_shown = 0;
    p->started = now();
    p->every = 4096;
}

void tool_progress_paced(tool_progress *p, bool quiet)
{
    p->active = !quiet && !tool_quiet && progress_cannot_mix();
    p->every = 0; /* records come slowly: look every time */
}

/* Seconds as M:SS, or H:MM:SS from an hour. */
static void put_clock(double seconds)
{
    unsigned long s = seconds > 0 && seconds < 1e9 ? (unsigned long)seconds
                                                   : 0;
    if (s >= 3600)
        fprintf(stderr, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
    else
        fprintf(stderr, "%lu:%02lu", s / 60, s % 60);
}

void tool_progress_start(tool_progress *p, const lct_reader *r, bool quiet)
{
    lct_stats st;
    lct_reader_stats(r, &st);
    tool_progress_start_size(p, st.file_size, quiet);
}

/* Show progress as a fraction of the file, a few times a second; cheap
 * between those (a countdown, not a clock read, per call). */
void tool_progress_fraction(tool_progress *p, double fraction)
{
    if (!p->active || p->next_check-- > 0)
        return;
    p->next_check = p->every;
    double t = now();
    if (t - p->last_shown < 0.25)
        return;
    p->last_shown = t;
    double size = (double)p->total;
    const char *unit = "MiB";
    size /= 1048576.0;
    if (size >= 1024) {
        size /= 1024;
        unit = "GiB";
    }
    fprintf(stderr, "\r%s %s: %3d%% of %.1f %s", tool_name, tool_cmd_name,
            (int)(100.0 * fraction), size, unit);
    double elapsed = t - p->started;
    if (elapsed >= 1) { /* a second in: how long so far, how long to go */
        fputs(", ", stderr);
        put_clock(elapsed);
        fputs(" elapsed", stderr);
        if (fraction >= 0.01 && fraction < 1) {
            fputs(", ETA ", stderr);
            put_clock(elapsed * (1 - fraction) / fraction);
        }
        fputs("\033[K", stderr); /* the end of a longer line before */
    }
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

