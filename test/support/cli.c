/*
 * cli.c - what the test_cli_*.c suites share: running the built lct
 * (run_lct), the fixtures and their expectations, the exit status a
 * damaged fixture gives, JSON value equality, splitting output into
 * lines, and a generated L2 trace.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"

/* Run lct with args (NULL-terminated), stdin from a file (or /dev/null). */
run run_lct(const char *stdin_path, ...)
{
    const char *argv[32] = {LCT_TOOL};
    int argc = 1;
    va_list ap;
    va_start(ap, stdin_path);
    const char *a;
    while ((a = va_arg(ap, const char *)) && argc < 31)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    return run_argv(stdin_path, argv);
}

/* A new empty temporary file for lct gen to write; its malloc'd path. */
static char *gen_path(void)
{
    char *path = strdup("/tmp/lct-gen-XXXXXX");
    cr_assert_not_null(path);
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    return path;
}

char *gen_l2_trace(const char *records, const char *adapters,
                   const char *seed)
{
    char *path = gen_path();
    run g = run_lct(NULL, "gen", "-n", records, "--level", "l2",
                    "--l2-adapters", adapters, "--seed", seed, path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    return path;
}

char *gen_shape_trace(const char *records, const char *opt,
                      const char *value)
{
    char *path = gen_path();
    run g = value ? run_lct(NULL, "gen", "-n", records, opt, value, path,
                            NULL)
                  : run_lct(NULL, "gen", "-n", records, opt, path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    return path;
}

char *fixture(const char *name, const char *ext)
{
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/%s%s", LCT_FIXTURES_DIR, name, ext);
    return p;
}

jv *expectation(const char *name)
{
    char *p = fixture(name, ".expect.json");
    size_t len;
    char *text = read_whole_file(p, &len);
    cr_assert_not_null(text, "%s", p);
    jv *v = json_parse(text, len);
    cr_assert_not_null(v, "%s", p);
    free(text);
    free(p);
    return v;
}

/* The exit status of a command that read a fixture the reference opens:
 * 3 when it skipped frames or its tail is cut, else 0 (one rule for every
 * command). */
int damaged_status(const jv *want)
{
    const jv *truncated = json_get(want, "truncated");
    return json_get(want, "skipped")->u > 0 ||
                   (truncated && truncated->t == J_BOOL && truncated->b)
               ? 3
               : 0;
}

const char *const fixtures[] = {
    "bad_magic",   "clean",           "empty",
    "events",      "format_v2",       "header_only",
    "huge_length", "malformed_mixed", "schema_v1_readable",
    "schema_v3",   "trunc_header_body", "trunc_header_prefix",
    "trunc_tail_2", "trunc_tail_74"};
const size_t nfixtures = sizeof fixtures / sizeof *fixtures;

bool jv_equal(const jv *a, const jv *b)
{
    if (a->t != b->t)
        return false;
    switch (a->t) {
    case J_NULL: return true;
    case J_BOOL: return a->b == b->b;
    case J_INT: return a->neg == b->neg && (a->neg ? a->i == b->i : a->u == b->u);
    case J_FLOAT: return a->d == b->d;
    case J_STR: return a->slen == b->slen && !memcmp(a->s, b->s, a->slen);
    case J_ARR:
        if (a->n != b->n)
            return false;
        for (size_t i = 0; i < a->n; i++)
            if (!jv_equal(&a->items[i], &b->items[i]))
                return false;
        return true;
    case J_OBJ:
        if (a->n != b->n)
            return false;
        for (size_t i = 0; i < a->n; i++) {
            const jv *other = json_get(b, a->keys[i]);
            if (!other || !jv_equal(&a->items[i], other))
                return false;
        }
        return true;
    }
    return false;
}

/* Split output into lines (in place). */
size_t lines_of(char *text, char **lines, size_t max)
{
    size_t n = 0;
    /* CSV ends its lines with CR LF (RFC 4180) */
    char *save, *line = strtok_r(text, "\r\n", &save);
    while (line && n < max) {
        lines[n++] = line;
        line = strtok_r(NULL, "\r\n", &save);
    }
    return n;
}

size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}
