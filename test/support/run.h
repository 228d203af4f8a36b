/*
 * run.h - running a program (the lct tool) as a test would from a shell:
 * arguments, standard input from a file, and what it printed and exited
 * with.
 */
#ifndef LCT_TEST_RUN_H
#define LCT_TEST_RUN_H

#include <stddef.h>

typedef struct run {
    int status; /* exit code, or 128+signal */
    char *out, *err;
    size_t outlen, errlen;
} run;

/* Run argv[0] with argv (NULL-terminated), stdin from a file (or
 * /dev/null); aborts the test if it cannot. */
run run_argv(const char *stdin_path, const char *const *argv);
void run_free(run *r);

#endif
