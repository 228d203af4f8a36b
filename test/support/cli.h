/*
 * cli.h - what the test_cli_*.c suites share (cli.c): running the built
 * lct, the fixtures and their expectations, JSON equality, lines.
 */
#ifndef LCT_TEST_CLI_H
#define LCT_TEST_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "run.h"

/* Run lct (LCT_TOOL) with args (NULL-terminated), stdin from a file (or
 * /dev/null when NULL). */
run run_lct(const char *stdin_path, ...);
/* A temporary L2-level trace `lct gen --level l2` writes with these
 * options; its path, malloc'd (the test's assertion fails when gen
 * does). */
char *gen_l2_trace(const char *records, const char *adapters,
                   const char *seed);
/* A temporary trace `lct gen -n RECORDS OPT [VALUE]` writes ("--mix",
 * or "--shape" "llama"); its path, malloc'd (the test's assertion fails
 * when gen does). */
char *gen_shape_trace(const char *records, const char *opt,
                      const char *value);
/* test/fixtures/NAME EXT, malloc'd. */
char *fixture(const char *name, const char *ext);
/* The fixture's .expect.json, parsed (what LMCache's reader yields). */
jv *expectation(const char *name);
/* 3 when the reference skipped frames or the tail is cut, else 0. */
int damaged_status(const jv *want);
/* Every fixture's name. */
extern const char *const fixtures[];
extern const size_t nfixtures;
#define NFIXTURES nfixtures
/* JSON values equal, objects compared as sets of keys. */
bool jv_equal(const jv *a, const jv *b);
/* Split text into lines in place (CR LF or LF); how many, at most max. */
size_t lines_of(char *text, char **lines, size_t max);
/* Lines in s. */
size_t count_lines(const char *s);

#endif
