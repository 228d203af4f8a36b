/*
 * test_stop.c - a command told to stop (SIGINT as Ctrl-C sends it, or
 * SIGTERM) ends within half a second, and the file it was writing is
 * absent: no partial output, no temporary left beside it.  The trace
 * comes through a pipe the test keeps open, so every command is still
 * at work (waiting for more) when the signal comes, whatever the
 * machine's speed.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void remove_all(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char path[512];
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* A 2,000-record trace as `lct gen` writes it. */
static run gen_trace(void)
{
    const char *argv[] = {LCT_TOOL, "gen", "-n", "2000", "-", NULL};
    run r = run_argv(NULL, argv);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_gt(r.outlen, 100000u);
    return r;
}

/*
 * lct with args (OUT replaced by a path in a fresh directory) reading the
 * first half of the trace from a pipe that stays open; signalled once it
 * has had time to take it in.
 */
static void stops(const run *trace, const char *const *args, int sig)
{
    char dir[] = "/tmp/lct-stop-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char out[64];
    snprintf(out, sizeof out, "%s/out", dir);
    const char *argv[16];
    size_t n = 0;
    argv[n++] = LCT_TOOL;
    for (; args[n - 1]; n++)
        argv[n] = strcmp(args[n - 1], "OUT") == 0 ? out : args[n - 1];
    argv[n] = NULL;

    int in[2], devnull = -1;
    cr_assert_eq(pipe(in), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        devnull = open("/dev/null", O_WRONLY);
        dup2(in[0], 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        close(in[1]);
        signal(SIGINT, SIG_DFL); /* as a shell leaves it for a command */
        execv(LCT_TOOL, (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    /* Half the trace fits the pipe and the command's reads; the rest is
     * never written, so it waits for it. */
    size_t half = trace->outlen / 2, done = 0;
    while (done < half) {
        ssize_t w = write(in[1], trace->out + done, half - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    int ws;
    cr_assert_eq(waitpid(pid, &ws, WNOHANG), 0, "%s ended before the signal",
                 args[0]);
    double t0 = now(), took;
    kill(pid, sig);
    /* One that does not stop is failed, not waited for. */
    while (waitpid(pid, &ws, WNOHANG) == 0 && (took = now() - t0) < 2) {
        struct timespec tick = {0, 5 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    if ((took = now() - t0) >= 2) {
        kill(pid, SIGKILL);
        waitpid(pid, &ws, 0);
    }
    close(in[1]);
    cr_expect_leq(took, 0.5, "%s %s: %.3f s after %s", args[0], args[1],
                  took, strsignal(sig));
    bool by_signal = (WIFSIGNALED(ws) && WTERMSIG(ws) == sig) ||
                     (WIFEXITED(ws) && WEXITSTATUS(ws) == 128 + sig);
    cr_expect(by_signal, "%s %s: status %d after %s", args[0], args[1], ws,
              strsignal(sig));
    cr_expect_eq(entries(dir), 0, "%s %s: left a file after %s", args[0],
                 args[1], strsignal(sig));
    remove_all(dir);
}

Test(stop, commands_writing_files_stop_at_once_and_leave_none, .timeout = 60)
{
    static const char *const commands[][8] = {
        {"keys", "--lookup-jsonl", "OUT", "-", NULL},
        {"keys", "--oracle-general", "OUT", "-", NULL},
        {"mrc", "--svg", "OUT", "-", NULL},
        {"sim", "--capacity", "1G", "--svg", "OUT", "-", NULL},
    };
    run trace = gen_trace();
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++) {
        stops(&trace, commands[c], SIGINT);
        stops(&trace, commands[c], SIGTERM);
    }
    run_free(&trace);
}
