/*
 * run.c - run a program with its output captured in temporary files.
 */
#include "run.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"

void run_free(run *r)
{
    free(r->out);
    free(r->err);
}

run run_argv(const char *stdin_path, const char *const *argv)
{
    char out_path[] = "/tmp/lct-cli-out-XXXXXX";
    char err_path[] = "/tmp/lct-cli-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    cr_assert(out_fd >= 0 && err_fd >= 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);
        dup2(in, 0);
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int ws;
    waitpid(pid, &ws, 0);
    close(out_fd);
    close(err_fd);
    run r;
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    r.out = read_whole_file(out_path, &r.outlen);
    r.err = read_whole_file(err_path, &r.errlen);
    unlink(out_path);
    unlink(err_path);
    return r;
}
