/*
 * follow.c - `lct dump --follow`: waiting for a trace that is not there
 * yet, is empty or holds half a header (the recorder writes it lazily),
 * picking up what is appended, and ending cleanly on Ctrl-C.
 */
#include "tool.h"
#include "dump.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

volatile sig_atomic_t tool_interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    tool_interrupted = 1;
}

static void nap(void)
{
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* --follow: the recorder writes the header lazily, so a live trace can be
 * empty, or hold half a header, for a while. */
lct_reader *tool_open_when_ready(const char *path, unsigned flags,
                                   bool quiet)
{
    for (;;) {
        lct_reader *r;
        lct_error err;
        int rc = tool_open_raw(path, flags | (quiet ? LCT_QUIET : 0), &r, &err);
        if (rc == LCT_OK) {
            lct_reader_set_log(r, quiet ? tool_log_quiet : tool_log, NULL);
            return r;
        }
        /* Like tail -F: a file that is not there yet is waited for. */
        bool not_yet = rc == LCT_ERR_EMPTY || rc == LCT_ERR_TRUNCATED ||
                       (rc == LCT_ERR_SYS && err.sys_errno == ENOENT);
        if (!not_yet || tool_interrupted) {
            if (!tool_interrupted)
                fprintf(stderr, "%s: %s\n", tool_name, err.message);
            return NULL;
        }
        nap();
    }
}

/* Flush what was printed, wait, and map what was appended.  False when
 * reading cannot go on (interrupted, or the file shrank or vanished). */
bool tool_wait_for_more(lct_reader *r)
{
    lct_stats st;
    lct_reader_stats(r, &st);
    if (st.shrank)
        return false;
    if (fflush(stdout) != 0)
        return false;
    nap();
    lct_error err;
    int rc = tool_interrupted ? LCT_OK : lct_reader_refresh(r, &err);
    /* A shrink is in the reader's stats: the caller reports it. */
    if (rc != LCT_OK && rc != LCT_ERR_CHANGED)
        fprintf(stderr, "%s: %s\n", tool_name, err.message);
    return rc == LCT_OK && !tool_interrupted;
}

void tool_catch_interrupts(void)
{
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
}

bool tool_skip_to_end(lct_reader *r)
{
    lct_record rec;
    while (lct_next(r, &rec) == 1 && !tool_interrupted)
        ;
    return !tool_interrupted;
}
