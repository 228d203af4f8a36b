/*
 * test_cli.c - the lct tool, run as a program: dump against every
 * fixture's expectation (parsed JSON values), info against the text
 * `lmcache trace info` prints (derived here from the expectation, by the
 * rules in docs/format.md), check's exit codes, filters, standard input, a
 * closed pipe, usage errors, and escaping of a hostile qualname.
 */
#define _GNU_SOURCE /* cpu_set_t, for cpus.h */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpus.h"
#include "files.h"
#include "lct.h"
#include "json.h"
#include "mpw.h"
#include "run.h"

/* These tests wait on other processes: a regression that hangs one
 * fails it instead of stalling the run. */
TestSuite(cli, .timeout = 300);

/* MARK: running the tool */

/* Run lct with args (NULL-terminated), stdin from a file (or /dev/null). */
static run run_lct(const char *stdin_path, ...)
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

static char *fixture(const char *name, const char *ext)
{
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/%s%s", LCT_FIXTURES_DIR, name, ext);
    return p;
}

static jv *expectation(const char *name)
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
static int damaged_status(const jv *want)
{
    const jv *truncated = json_get(want, "truncated");
    return json_get(want, "skipped")->u > 0 ||
                   (truncated && truncated->t == J_BOOL && truncated->b)
               ? 3
               : 0;
}

static const char *fixtures[] = {
    "bad_magic",   "clean",           "empty",
    "events",      "format_v2",       "header_only",
    "huge_length", "malformed_mixed", "schema_v1_readable",
    "schema_v3",   "trunc_header_body", "trunc_header_prefix",
    "trunc_tail_2", "trunc_tail_74"};
#define NFIXTURES (sizeof fixtures / sizeof *fixtures)

/* MARK: JSON value equality (objects compare as sets of keys) */

static bool jv_equal(const jv *a, const jv *b)
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
static size_t lines_of(char *text, char **lines, size_t max)
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

/* MARK: dump */

Test(cli, dump_matches_every_fixture)
{
    for (size_t f = 0; f < NFIXTURES; f++) {
        jv *want = expectation(fixtures[f]);
        char *path = fixture(fixtures[f], ".lct");
        run r = run_lct(NULL, "dump", path, NULL);
        const jv *open_error = json_get(want, "open_error");
        if (open_error->t == J_STR) {
            cr_expect_eq(r.status, 1, "%s: exit %d", fixtures[f], r.status);
            cr_expect(strstr(r.err, open_error->s), "%s: %s", fixtures[f],
                      r.err);
            cr_expect_eq(r.outlen, 0);
        } else {
            cr_expect_eq(r.status, damaged_status(want), "%s: exit %d",
                         fixtures[f], r.status);
            const jv *records = json_get(want, "records");
            static char *lines[4096];
            size_t n = lines_of(r.out, lines, 4096);
            cr_expect_eq(n, records->n, "%s: %zu lines", fixtures[f], n);
            for (size_t i = 0; i < n && i < records->n; i++) {
                jv *got = json_parse(lines[i], strlen(lines[i]));
                cr_assert_not_null(got, "%s line %zu is not JSON: %s",
                                   fixtures[f], i, lines[i]);
                const jv *e = &records->items[i];
                const jv *offset = json_get(got, "offset");
                cr_expect(offset && offset->t == J_INT && offset->u > 0);
                static const char *fields[] = {"t_mono", "t_wall",
                                               "qualname", "args"};
                for (int k = 0; k < 4; k++) {
                    const jv *g = json_get(got, fields[k]);
                    cr_expect(g && jv_equal(g, json_get(e, fields[k])),
                              "%s record %zu: %s differs", fixtures[f], i,
                              fields[k]);
                }
                cr_expect_eq(got->n, 5, "exactly five keys");
                json_free(got);
            }
        }
        run_free(&r);
        free(path);
        json_free(want);
    }
}

Test(cli, dump_header_line_and_filters)
{
    char *path = fixture("clean", ".lct");
    jv *want = expectation("clean");
    run r = run_lct(NULL, "dump", "--header", "-n", "0", path, NULL);
    cr_assert_eq(r.status, 0);
    jv *h = json_parse(r.out, r.outlen);
    cr_assert_not_null(h);
    cr_expect(jv_equal(h, json_get(want, "header")), "header line: %s", r.out);
    json_free(h);
    run_free(&r);

    /* Globs: count what the expectation says should match. */
    const jv *records = json_get(want, "records");
    size_t want_n = 0;
    for (size_t i = 0; i < records->n; i++) {
        const char *q = json_get(&records->items[i], "qualname")->s;
        want_n += fnmatch("*.finish_write", q, 0) == 0 ||
                  fnmatch("*__enter__", q, 0) == 0;
    }
    r = run_lct(NULL, "dump", "--qualname", "*.finish_write", "--qualname",
                "*__enter__", path, NULL);
    char *lines[64];
    cr_expect_eq(lines_of(r.out, lines, 64), want_n);
    cr_expect_gt(want_n, 0);
    run_free(&r);

    /* Time window and limit. */
    size_t in_window = 0;
    for (size_t i = 0; i < records->n; i++) {
        double t = json_get(&records->items[i], "t_mono")->d;
        in_window += t >= 0.1 && t <= 0.2;
    }
    r = run_lct(NULL, "dump", "--since", "0.1", "--until", "0.2", path, NULL);
    cr_expect_eq(lines_of(r.out, lines, 64), in_window);
    cr_expect_gt(in_window, 0);
    run_free(&r);
    r = run_lct(NULL, "dump", "-n", "3", path, "-q", NULL);
    cr_expect_eq(lines_of(r.out, lines, 64), 3, "options after FILE work");
    run_free(&r);
    free(path);
    json_free(want);
}

Test(cli, stdin_dash_reads_the_same)
{
    char *path = fixture("clean", ".lct");
    run a = run_lct(NULL, "dump", path, NULL);
    run b = run_lct(path, "dump", "-", NULL);
    cr_expect_eq(b.status, 0);
    cr_expect_eq(a.outlen, b.outlen);
    cr_expect(a.outlen == b.outlen && !memcmp(a.out, b.out, a.outlen));
    run_free(&a);
    run_free(&b);
    run c = run_lct(path, "info", "-", NULL);
    cr_expect_eq(c.status, 0);
    cr_expect(strncmp(c.out, "Trace file: -\n", 14) == 0, "%s", c.out);
    run_free(&c);
    free(path);
}

Test(cli, closed_pipe_ends_quietly)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    char err_path[] = "/tmp/lct-cli-err-XXXXXX";
    int err_fd = mkstemp(err_path);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        dup2(p[1], 1);
        dup2(err_fd, 2);
        execl(LCT_TOOL, LCT_TOOL, "dump", LCT_SAMPLE, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char buf[100];
    cr_assert_gt(read(p[0], buf, sizeof buf), 0);
    close(p[0]); /* like `| head -c 100` */
    int ws;
    waitpid(pid, &ws, 0);
    cr_expect(WIFEXITED(ws), "killed by signal %d", WTERMSIG(ws));
    cr_expect_eq(WEXITSTATUS(ws), 0);
    size_t errlen;
    char *err = read_whole_file(err_path, &errlen);
    cr_expect_eq(errlen, 0, "stderr: %s", err);
    free(err);
    unlink(err_path);
}

/* MARK: info */

/* "  label:" padded to 28 columns, as the Python tool lays it out. */
static void label(char **o, const char *indent, const char *name)
{
    *o += sprintf(*o, "%s%s:", indent, name);
    for (int pad = 28 - (int)strlen(name) - 1; pad > 0; pad--)
        *(*o)++ = ' ';
    **o = '\0';
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *arg_str(const jv *args, const char *key, const char *dflt)
{
    const jv *v = json_get(args, key);
    return v && v->t == J_STR ? v->s : dflt;
}

/* The events block, from the expectation's records (docs/format.md rules). */
static void events_block(char **o, const jv *records)
{
    /* Small fixed tables suffice for the fixtures. */
    char *instances[64];
    long long incs[64][16];
    int ninc[64] = {0};
    size_t ni = 0;
    char *batches[64];
    int bcount[64];
    size_t nb = 0;
    char *etypes[64];
    long long ecount[64];
    size_t ne = 0;
    char *phases[64];
    int pcount[64];
    size_t np = 0;
    long long store_bytes = 0, with_tokens = 0;
    for (size_t i = 0; i < records->n; i++) {
        const jv *rec = &records->items[i];
        const char *q = json_get(rec, "qualname")->s;
        const jv *args = json_get(rec, "args");
        if (strcmp(q, "events.lifecycle") == 0) {
            const char *ph = arg_str(args, "phase", "?");
            size_t k;
            for (k = 0; k < np && strcmp(phases[k], ph); k++)
                ;
            if (k == np) {
                phases[np] = (char *)ph;
                pcount[np++] = 0;
            }
            pcount[k]++;
            continue;
        }
        if (strcmp(q, "events.batch") != 0)
            continue;
        const char *id = arg_str(args, "instance_id", "?");
        size_t k;
        for (k = 0; k < ni && strcmp(instances[k], id); k++)
            ;
        if (k == ni)
            instances[ni++] = (char *)id;
        const jv *incv = json_get(args, "incarnation");
        long long inc = incv && incv->t == J_INT ? (long long)incv->u : 0;
        int j;
        for (j = 0; j < ninc[k] && incs[k][j] != inc; j++)
            ;
        if (j == ninc[k])
            incs[k][ninc[k]++] = inc;

        const char *type = arg_str(args, "event_type", "?");
        const jv *sh = json_get(args, "shared");
        /* Sort key: type, tier, backend, then local (0) before shared (1). */
        char key[256];
        snprintf(key, sizeof key, "%s\x01%s\x01%s\x01%d", type,
                 arg_str(args, "tier", "?"), arg_str(args, "backend", ""),
                 sh && sh->t == J_BOOL && sh->b);
        for (k = 0; k < nb && strcmp(batches[k], key); k++)
            ;
        if (k == nb) {
            batches[nb] = strdup(key);
            bcount[nb++] = 0;
        }
        bcount[k]++;

        const jv *entries = json_get(args, "entries");
        for (k = 0; k < ne && strcmp(etypes[k], type); k++)
            ;
        if (k == ne) {
            etypes[ne] = (char *)type;
            ecount[ne++] = 0;
        }
        if (!entries || entries->t != J_ARR)
            continue;
        ecount[k] += (long long)entries->n;
        if (strcmp(type, "store") != 0)
            continue;
        for (size_t e = 0; e < entries->n; e++) {
            const jv *sb = json_get(&entries->items[e], "size_bytes");
            const jv *tok = json_get(&entries->items[e], "token_ids");
            store_bytes += sb && sb->t == J_INT ? (long long)sb->u : 0;
            with_tokens += tok && tok->t == J_ARR && tok->n > 0;
        }
    }
    *o += sprintf(*o, "  events:\n");
    label(o, "    ", "instances");
    *o += sprintf(*o, "%zu\n", ni);
    /* Sort instances with their incarnations alongside. */
    for (size_t a = 0; a < ni; a++)
        for (size_t b = a + 1; b < ni; b++)
            if (strcmp(instances[b], instances[a]) < 0) {
                char *t = instances[a];
                instances[a] = instances[b];
                instances[b] = t;
                long long tmp[16];
                memcpy(tmp, incs[a], sizeof tmp);
                memcpy(incs[a], incs[b], sizeof tmp);
                memcpy(incs[b], tmp, sizeof tmp);
                int tn = ninc[a];
                ninc[a] = ninc[b];
                ninc[b] = tn;
            }
    for (size_t a = 0; a < ni; a++) {
        for (int x = 0; x < ninc[a]; x++)
            for (int y = x + 1; y < ninc[a]; y++)
                if (incs[a][y] < incs[a][x]) {
                    long long t = incs[a][x];
                    incs[a][x] = incs[a][y];
                    incs[a][y] = t;
                }
        *o += sprintf(*o, "      %s: incarnations=[", instances[a]);
        for (int x = 0; x < ninc[a]; x++)
            *o += sprintf(*o, "%s%lld", x ? ", " : "", incs[a][x]);
        *o += sprintf(*o, "] restarts=%d\n", ninc[a] > 0 ? ninc[a] - 1 : 0);
    }
    *o += sprintf(*o, "    batches (type/tier/backend/shared):\n");
    for (size_t a = 0; a < nb; a++)
        for (size_t b = a + 1; b < nb; b++)
            if (strcmp(batches[b], batches[a]) < 0) {
                char *t = batches[a];
                batches[a] = batches[b];
                batches[b] = t;
                int c = bcount[a];
                bcount[a] = bcount[b];
                bcount[b] = c;
            }
    for (size_t a = 0; a < nb; a++) {
        char type[64], tier[64], backend[64];
        int shared;
        sscanf(batches[a], "%63[^\x01]\x01%63[^\x01]\x01", type, tier);
        const char *p = strchr(strchr(batches[a], '\x01') + 1, '\x01') + 1;
        size_t bl = (size_t)(strchr(p, '\x01') - p);
        memcpy(backend, p, bl);
        backend[bl] = '\0';
        shared = p[bl + 1] == '1';
        *o += sprintf(*o, "      %s/%s/%s/%s: %d\n", type, tier,
                      bl ? backend : "-", shared ? "shared" : "local",
                      bcount[a]);
        free(batches[a]);
    }
    *o += sprintf(*o, "    entries:\n");
    for (size_t a = 0; a < ne; a++)
        for (size_t b = a + 1; b < ne; b++)
            if (strcmp(etypes[b], etypes[a]) < 0) {
                char *t = etypes[a];
                etypes[a] = etypes[b];
                etypes[b] = t;
                long long c = ecount[a];
                ecount[a] = ecount[b];
                ecount[b] = c;
            }
    for (size_t a = 0; a < ne; a++)
        *o += sprintf(*o, "      %s: %lld\n", etypes[a], ecount[a]);
    label(o, "    ", "store_bytes");
    *o += sprintf(*o, "%lld\n", store_bytes);
    label(o, "    ", "entries_with_tokens");
    *o += sprintf(*o, "%lld\n", with_tokens);
    if (np) {
        qsort(phases, np, sizeof *phases, cmp_str); /* counts follow below */
        label(o, "    ", "lifecycle");
        for (size_t a = 0; a < np; a++) {
            int count = 0;
            for (size_t i = 0; i < records->n; i++) {
                const jv *rec = &records->items[i];
                if (!strcmp(json_get(rec, "qualname")->s, "events.lifecycle") &&
                    !strcmp(arg_str(json_get(rec, "args"), "phase", "?"),
                            phases[a]))
                    count++;
            }
            *o += sprintf(*o, "%s%s=%d", a ? ", " : "", phases[a], count);
        }
        *o += sprintf(*o, "\n");
    }
    (void)pcount;
}

static char *expected_info(const char *path, const jv *want)
{
    char *buf = malloc(1 << 16), *o = buf;
    const jv *h = json_get(want, "header");
    const jv *records = json_get(want, "records");
    o += sprintf(o, "Trace file: %s\n", path);
    label(&o, "  ", "level");
    o += sprintf(o, "%s\n", json_get(h, "level")->s);
    label(&o, "  ", "format_version");
    o += sprintf(o, "%llu\n", (unsigned long long)json_get(h, "format_version")->u);
    label(&o, "  ", "trace_schema_version");
    o += sprintf(o, "%llu\n",
                 (unsigned long long)json_get(h, "trace_schema_version")->u);
    double duration = 0;
    for (size_t i = 0; i < records->n; i++) {
        double t = json_get(&records->items[i], "t_mono")->d;
        if (i == 0 || t > duration)
            duration = t;
    }
    label(&o, "  ", "duration");
    o += sprintf(o, "%.3fs\n", duration);
    label(&o, "  ", "sm_config_digest");
    const char *digest = json_get(h, "sm_config_digest")->s;
    o += sprintf(o, "%s\n", *digest ? digest : "(none)");
    const jv *meta = json_get(h, "level_meta");
    if (meta) {
        char *keys[64];
        for (size_t i = 0; i < meta->n; i++)
            keys[i] = meta->keys[i];
        qsort(keys, meta->n, sizeof *keys, cmp_str);
        for (size_t i = 0; i < meta->n; i++) {
            const jv *v = json_get(meta, keys[i]);
            label(&o, "  ", keys[i]);
            if (v->t == J_STR)
                o += sprintf(o, "%s\n", v->s);
            else
                o += sprintf(o, "%llu\n", (unsigned long long)v->u);
        }
    }
    label(&o, "  ", "total_records");
    o += sprintf(o, "%zu\n", records->n);
    char *qualnames[4096];
    size_t nq = 0;
    for (size_t i = 0; i < records->n; i++)
        qualnames[nq++] = json_get(&records->items[i], "qualname")->s;
    qsort(qualnames, nq, sizeof *qualnames, cmp_str);
    if (nq == 0)
        o += sprintf(o, "  ops: (none)\n");
    else
        o += sprintf(o, "  ops:\n");
    for (size_t i = 0; i < nq;) {
        size_t j = i;
        while (j < nq && strcmp(qualnames[j], qualnames[i]) == 0)
            j++;
        o += sprintf(o, "    %s: %zu\n", qualnames[i], j - i);
        i = j;
    }
    if (strcmp(json_get(h, "level")->s, "events") == 0)
        events_block(&o, records);
    return buf;
}

Test(cli, info_is_the_reference_text_on_every_fixture)
{
    for (size_t f = 0; f < NFIXTURES; f++) {
        jv *want = expectation(fixtures[f]);
        char *path = fixture(fixtures[f], ".lct");
        run r = run_lct(NULL, "info", "-q", path, NULL);
        if (json_get(want, "open_error")->t == J_STR) {
            cr_expect_eq(r.status, 1, "%s", fixtures[f]);
        } else {
            char *text = expected_info(path, want);
            cr_expect_eq(r.status, damaged_status(want), "%s", fixtures[f]);
            cr_expect_str_eq(r.out, text, "%s: got\n%s\nwant\n%s", fixtures[f],
                             r.out, text);
            free(text);

            run j = run_lct(NULL, "info", "--json", "-q", path, NULL);
            jv *got = json_parse(j.out, j.outlen);
            cr_assert_not_null(got, "%s: info --json: %s", fixtures[f], j.out);
            cr_expect_eq(json_get(got, "total_records")->u,
                         json_get(want, "records")->n);
            cr_expect_eq(json_get(got, "skipped")->u,
                         json_get(want, "skipped")->u);
            cr_expect_eq(json_get(got, "truncated")->b,
                         json_get(want, "truncated")->b);
            cr_expect(jv_equal(json_get(got, "header"), json_get(want, "header")),
                      "%s: header", fixtures[f]);
            json_free(got);
            run_free(&j);
        }
        run_free(&r);
        free(path);
        json_free(want);
    }
}

/* level_meta values print as Python's str() of the decoded value. */
Test(cli, info_prints_level_meta_as_python_does)
{
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    body.buf[0] = 0x8a; /* one more pair: level_meta */
    mpw_str(&body, "level_meta");
    mpw_map(&body, 8);
    mpw_str(&body, "a"); mpw_array(&body, 2); mpw_int(&body, 1); mpw_str(&body, "x");
    mpw_str(&body, "b"); mpw_map(&body, 1); mpw_str(&body, "a"); mpw_int(&body, 1);
    mpw_str(&body, "c"); mpw_f64(&body, 1.5);
    mpw_str(&body, "d"); mpw_str(&body, "it's");
    mpw_str(&body, "e"); mpw_array(&body, 3);
    mpw_bin(&body, "\x00'", 2); mpw_str(&body, "it's"); mpw_str(&body, "t\x1b\n");
    mpw_str(&body, "f"); mpw_array(&body, 4);
    mpw_f64(&body, 1e20); mpw_f64(&body, 0.0001); mpw_f64(&body, 1e-5);
    mpw_f64(&body, 123456.0);
    mpw_str(&body, "g"); mpw_array(&body, 3);
    mpw_nil(&body); mpw_bool(&body, true); mpw_f64(&body, -0.5);
    mpw_str(&body, "h"); mpw_int(&body, -7);
    mpw_frame(&file, &body);
    char *path = tmp_file_with(file.buf, file.len);
    run r = run_lct(NULL, "info", path, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    const char *want[] = {
        "  a:                          [1, 'x']\n",
        "  b:                          {'a': 1}\n",
        "  c:                          1.5\n",
        "  d:                          it's\n",
        "  e:                          [b\"\\x00'\", \"it's\", 't\\x1b\\n']\n",
        "  f:                          [1e+20, 0.0001, 1e-05, 123456.0]\n",
        "  g:                          [None, True, -0.5]\n",
        "  h:                          -7\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_expect(strstr(r.out, want[i]), "missing %s in:\n%s", want[i], r.out);
    run_free(&r);
    unlink(path);
    free(path);
    mpw_free(&file);
    mpw_free(&body);
}

/* MARK: check */

Test(cli, check_exit_codes_match_the_expectations)
{
    for (size_t f = 0; f < NFIXTURES; f++) {
        jv *want = expectation(fixtures[f]);
        char *path = fixture(fixtures[f], ".lct");
        int expect = json_get(want, "open_error")->t == J_STR ? 1
                     : (json_get(want, "skipped")->u ||
                        json_get(want, "truncated")->b)
                         ? 3
                         : 0;
        run r = run_lct(NULL, "check", path, NULL);
        cr_expect_eq(r.status, expect, "%s: exit %d, want %d", fixtures[f],
                     r.status, expect);
        run_free(&r);
        r = run_lct(NULL, "check", "--json", "-q", path, NULL);
        cr_expect_eq(r.status, expect);
        jv *got = json_parse(r.out, r.outlen);
        cr_assert_not_null(got, "%s: %s", fixtures[f], r.out);
        cr_expect_eq(json_get(got, "ok")->b, expect == 0);
        if (expect != 1) {
            cr_expect_eq(json_get(got, "records")->u, json_get(want, "records")->n);
            const jv *problems = json_get(got, "problems");
            cr_expect_eq(problems->n, json_get(want, "skipped")->u +
                                          json_get(want, "truncated")->b);
        }
        json_free(got);
        run_free(&r);
        free(path);
        json_free(want);
    }
}

/* MARK: stat */

/* A JSON number as a double, whether printed as an integer or not. */
static double json_num(const jv *v)
{
    cr_assert_not_null(v);
    if (v->t == J_INT)
        return v->neg ? (double)v->i : (double)v->u;
    cr_assert_eq(v->t, J_FLOAT);
    return v->d;
}

static int cmp_gap(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* `lct stat --json -j JOBS path`, parsed (json_free it). */
static jv *stat_json(const char *path, int jobs)
{
    char j[2] = {(char)('0' + jobs), 0};
    run r = run_lct(NULL, "stat", "--json", "-j", j, path, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    jv *got = json_parse(r.out, r.outlen);
    cr_assert_not_null(got, "%s", r.out);
    run_free(&r);
    return got;
}

/* Which of names[0..n) the qualname of an op of stat's JSON is. */
static int op_index(const jv *op, const char *const *names, int n)
{
    int q = 0;
    while (q < n && strcmp(json_get(op, "qualname")->s, names[q]))
        q++;
    cr_assert_lt(q, n, "%s", json_get(op, "qualname")->s);
    return q;
}

/* stat's percentiles are picked by selection, not a sort, and its mean
 * summed in file order: both checked against a sort and a sum here, on
 * qualnames whose gaps take every path of the selection (many values
 * sharing their top bytes, repeats, negatives, all equal, counts either
 * side of where a few are sorted directly, the first differing byte far
 * down, and the median and the 99th percentile in different values of
 * that byte or in one), on one thread and three. */
Test(cli, stat_percentiles_are_the_sorted_gaps)
{
    /* MOST past 32,768 gaps: the column grows past 256 KiB, onto 2 MiB
     * pages where they pay (lct_large_array_grow), on one thread and in
     * the merge of three. */
    enum { OPS = 7, MOST = 40000 };
    static const char *names[OPS] = {"mixed.op", "equal.op", "few31.op",
                                     "few32.op", "two.op",   "close.op",
                                     "narrow.op"};
    static const size_t records[OPS] = {MOST, 400, 32, 33, 3, 5000, 5000};
    static double gaps[OPS][MOST];
    size_t made[OPS] = {0};
    double t[OPS] = {0};
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    uint64_t rng = 12345;
    for (bool more = true; more;) {
        more = false;
        for (int q = 0; q < OPS; q++) {
            if (made[q] == records[q])
                continue;
            more = true;
            rng = rng * 6364136223846793005u + 1442695040888963407u;
            unsigned r = (unsigned)(rng >> 33);
            double gap = q == 1 ? 0.25
                         /* alike down to the third byte of their keys */
                         : q == 5 ? 1.0 + (double)(r % 256) * 0x1p-30
                         /* the 99th percentile among the many 1.x */
                         : q == 6 ? (r % 200 == 0 ? 2.0 : 1.0 + (r % 4) * 0x1p-30)
                         : r % 10 == 0 ? 0 /* a repeated t_mono */
                         : r % 10 == 1 ? -(double)(r % 1000) / 1024
                         : r % 10 < 6   ? (double)(r % 4096) / 1024
                                        : ldexp((double)r, -40 - (int)(r % 9));
            if (made[q]) { /* the gap as stat finds it: t_mono - the last */
                double next = t[q] + gap;
                gaps[q][made[q] - 1] = next - t[q];
                t[q] = next;
            }
            mpw_reset(&body);
            mpw_record_begin(&body, t[q], 1e9 + t[q], names[q]);
            mpw_map(&body, 0);
            mpw_frame(&file, &body);
            made[q]++;
        }
    }
    char *path = tmp_file_with(file.buf, file.len);
    for (int jobs = 1; jobs <= 3; jobs += 2) {
        jv *got = stat_json(path, jobs);
        const jv *ops = json_get(got, "ops");
        cr_assert_eq(ops->n, OPS);
        for (size_t i = 0; i < ops->n; i++) {
            const jv *op = &ops->items[i];
            int q = op_index(op, names, OPS);
            size_t n = records[q] - 1;
            static double sorted[MOST];
            double sum = 0;
            for (size_t g = 0; g < n; g++)
                sum += gaps[q][g];
            memcpy(sorted, gaps[q], n * sizeof *sorted);
            qsort(sorted, n, sizeof *sorted, cmp_gap);
            cr_expect_eq(json_num(json_get(op, "gap_mean")), sum / (double)n,
                         "%s -j %d", names[q], jobs);
            cr_expect_eq(json_num(json_get(op, "gap_p50")),
                         sorted[(50 * n + 99) / 100 - 1], "%s -j %d",
                         names[q], jobs);
            cr_expect_eq(json_num(json_get(op, "gap_p99")),
                         sorted[(99 * n + 99) / 100 - 1], "%s -j %d",
                         names[q], jobs);
        }
        json_free(got);
    }
    mpw_free(&file);
    mpw_free(&body);
    free(path);
}

/* info and stat find a record's qualname through a small cache keyed by
 * the name's length and last bytes: names that share both (all in one
 * slot), names shorter than 8 bytes and names a byte apart still count
 * apart, on one thread and three. */
Test(cli, stat_counts_qualnames_that_share_their_ends)
{
    /* 40 names of one length and one last 8 bytes (one slot), a byte
     * apart at each place before those; "a".."z" and "aa".."zz", each
     * the start of another. */
    enum { SAME_END = 40, SHORT = 52, NAMES = SAME_END + SHORT, RECS = 6000 };
    char names[NAMES][32];
    const char *name_of[NAMES];
    for (int i = 0; i < NAMES; i++)
        name_of[i] = names[i];
    for (int i = 0; i < SAME_END; i++) {
        snprintf(names[i], sizeof names[i], "storage.manager.op_tail");
        names[i][i % 15] = (char)('A' + i / 15);
    }
    for (int i = 0; i < 26; i++) {
        snprintf(names[SAME_END + i], sizeof names[0], "%c", 'a' + i);
        snprintf(names[SAME_END + 26 + i], sizeof names[0], "%c%c", 'a' + i,
                 'a' + i);
    }
    uint64_t count[NAMES] = {0};
    double first[NAMES], last[NAMES];
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    /* At random, then each name right after one a byte apart (the
     * byte at the same place, 'A' against 'B'; "c" against "cc"). */
    uint64_t rng = 99;
    for (int i = 0; i < RECS + 2 * NAMES; i++) {
        rng = rng * 6364136223846793005u + 1442695040888963407u;
        int k = i - RECS;
        int q = k < 0            ? (int)((rng >> 33) % NAMES)
                : k % 2 == 0     ? k / 2
                : k / 2 < SAME_END ? (k / 2 + 15) % SAME_END
                : k / 2 < SAME_END + 26 ? k / 2 + 26
                                        : k / 2 - 26;
        double t = i * 0.001;
        if (!count[q]++)
            first[q] = t;
        last[q] = t;
        mpw_reset(&body);
        mpw_record_begin(&body, t, 1e9 + t, names[q]);
        mpw_map(&body, 0);
        mpw_frame(&file, &body);
    }
    char *path = tmp_file_with(file.buf, file.len);
    for (int jobs = 1; jobs <= 3; jobs += 2) {
        jv *got = stat_json(path, jobs);
        const jv *ops = json_get(got, "ops");
        cr_assert_eq(ops->n, NAMES, "-j %d", jobs);
        for (size_t i = 0; i < ops->n; i++) {
            const jv *op = &ops->items[i];
            int q = op_index(op, name_of, NAMES);
            cr_expect_eq(json_get(op, "count")->u, count[q], "%s -j %d",
                         names[q], jobs);
            cr_expect_eq(json_num(json_get(op, "first_t_mono")), first[q]);
            cr_expect_eq(json_num(json_get(op, "last_t_mono")), last[q]);
        }
        json_free(got);
    }
    mpw_free(&file);
    mpw_free(&body);
    free(path);
}

Test(cli, stat_gaps_are_nearest_rank)
{
    /* One qualname at t = 0, 1, 3, 6, 10: gaps 1, 2, 3, 4. */
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    const double times[] = {0, 1, 3, 6, 10};
    for (int i = 0; i < 5; i++) {
        mpw_reset(&body);
        mpw_record_begin(&body, times[i], times[i], "a.op");
        mpw_map(&body, 0);
        mpw_frame(&file, &body);
    }
    mpw_reset(&body);
    mpw_record_begin(&body, 2, 2, "b.op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    char *path = tmp_file_with(file.buf, file.len);
    run r = run_lct(NULL, "stat", "--json", path, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    jv *got = json_parse(r.out, r.outlen);
    cr_assert_not_null(got, "%s", r.out);
    cr_expect_eq(json_get(got, "records")->u, 6);
    cr_expect_eq(json_get(got, "duration")->d, 10.0);
    const jv *ops = json_get(got, "ops");
    cr_assert_eq(ops->n, 2);
    const jv *a = &ops->items[0];
    cr_expect_str_eq(json_get(a, "qualname")->s, "a.op");
    cr_expect_eq(json_get(a, "count")->u, 5);
    cr_expect_eq(json_get(a, "gap_mean")->d, 2.5);
    cr_expect_eq(json_get(a, "gap_p50")->d, 2.0, "ceil(50*4/100)-1 = 1");
    cr_expect_eq(json_get(a, "gap_p99")->d, 4.0, "ceil(99*4/100)-1 = 3");
    cr_expect_eq(json_get(a, "first_t_mono")->d, 0.0);
    cr_expect_eq(json_get(a, "last_t_mono")->d, 10.0);
    cr_expect_eq(json_get(&ops->items[1], "gap_p50")->t, J_NULL,
                 "one record has no gaps");
    cr_expect_eq(json_get(a, "gap_max")->d, 4.0);
    cr_expect_eq(json_get(a, "backwards")->u, 0);
    cr_expect_eq(json_get(got, "skipped")->u, 0);
    cr_expect_eq(json_get(got, "truncated")->b, false);
    json_free(got);
    run_free(&r);

    r = run_lct(NULL, "stat", "--csv", path, NULL);
    cr_expect(strncmp(r.out, "qualname,op,count,share,", 24) == 0, "%s",
              r.out);
    char *lines[8];
    cr_expect_eq(lines_of(r.out, lines, 8), 3);
    run_free(&r);
    r = run_lct(NULL, "stat", path, NULL);
    cr_expect(strstr(r.out, "total: 6 records, duration 10.000s") != NULL,
              "%s", r.out);
    run_free(&r);
    unlink(path);
    free(path);
    mpw_free(&file);
    mpw_free(&body);
}

/* MARK: usage and escaping */

Test(cli, usage_errors_and_help)
{
    struct {
        const char *a[4];
        int status;
        const char *in_err, *in_out;
    } cases[] = {
        {{NULL}, 2, "missing command", NULL},
        {{"frobnicate", NULL}, 2, "unknown command", NULL},
        {{"dump", "--bogus", "x", NULL}, 2, "Try 'lct dump --help'", NULL},
        {{"dump", "-n", "many", NULL}, 2, "--limit", NULL},
        {{"dump", "--since", "soon", NULL}, 2, "--since", NULL},
        {{"info", NULL}, 2, "missing FILE", NULL},
        {{"stat", "--csv", "--json", "x"}, 2, "exclude", NULL},
        {{"info", "a", "b", NULL}, 2, "too many", NULL},
        {{"--help", NULL}, 0, NULL, "usage: lct COMMAND"},
        {{"dump", "--help", NULL}, 0, NULL, "--qualname"},
        {{"--version", NULL}, 0, NULL, "lct " LCT_VERSION_STRING " (liblct)\n"},
        {{"info", "/nonexistent.lct", NULL}, 1, "No such file", NULL},
        /* a missing value is named as such, in every command */
        {{"check", "-j", NULL}, 2, "option '-j' needs a value", NULL},
        {{"info", "-j", NULL}, 2, "option '-j' needs a value", NULL},
        {{"stat", "-j", NULL}, 2, "option '-j' needs a value", NULL},
        {{"dump", "--limit", NULL}, 2, "option '--limit' needs a value",
         NULL},
        /* an unknown short option is named, not the command */
        {{"info", "-dash.lct", NULL}, 2, "unknown option '-d'", NULL},
        {{"stat", "-qz", "x", NULL}, 2, "unknown option '-z'", NULL},
        {{"check", "--frob", "x", NULL}, 2, "unknown option '--frob'", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run r = run_lct(NULL, cases[i].a[0], cases[i].a[1], cases[i].a[2],
                        cases[i].a[3], NULL);
        cr_expect_eq(r.status, cases[i].status, "case %zu: exit %d", i,
                     r.status);
        if (cases[i].in_err)
            cr_expect(strstr(r.err, cases[i].in_err), "case %zu: %s", i, r.err);
        if (cases[i].in_out)
            cr_expect(strstr(r.out, cases[i].in_out), "case %zu: %s", i, r.out);
        run_free(&r);
    }
}

Test(cli, hostile_qualname_is_escaped)
{
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    mpw_reset(&body);
    mpw_record_begin(&body, 1, 2, "evil\x1b]0;pwned\x07\x1b[2J.op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    /* Another ".op", so stat prints whole qualnames, not short names. */
    mpw_reset(&body);
    mpw_record_begin(&body, 2, 3, "other.op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    char *path = tmp_file_with(file.buf, file.len);
    const char *cmds[][2] = {{"info", NULL}, {"stat", NULL}};
    for (int i = 0; i < 2; i++) {
        run r = run_lct(NULL, cmds[i][0], path, NULL);
        cr_expect_eq(r.status, 0);
        cr_expect_null(memchr(r.out, 0x1b, r.outlen), "%s printed ESC",
                       cmds[i][0]);
        cr_expect_null(memchr(r.out, 0x07, r.outlen));
        cr_expect(strstr(r.out, "evil\\033]0;pwned\\a\\033[2J.op") ||
                      strstr(r.out, "evil\\033]0;pwned\\007\\033[2J.op"),
                  "%s: %s", cmds[i][0], r.out);
        run_free(&r);
    }
    run r = run_lct(NULL, "dump", path, NULL);
    cr_expect_null(memchr(r.out, 0x1b, r.outlen));
    cr_expect(strstr(r.out, "\"evil\\u001b]0;pwned\\u0007\\u001b[2J.op\""),
              "%s", r.out);
    run_free(&r);
    unlink(path);
    free(path);

    /* Every control byte, DEL, a comma and a quote, in CSV and JSON. */
    mpw_reset(&file);
    mpw_reset(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    mpw_reset(&body);
    mpw_record_begin(&body, 1, 2, "a\x1b[2J\a\b\r\x7f,\"q\".op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    path = tmp_file_with(file.buf, file.len);
    r = run_lct(NULL, "stat", "--csv", path, NULL);
    cr_expect_eq(r.status, 0);
    for (size_t i = 0; i < r.outlen; i++)
        cr_expect(((unsigned char)r.out[i] >= 0x20 &&
                   (unsigned char)r.out[i] != 0x7f) ||
                      (r.out[i] == '\r' && r.out[i + 1] == '\n') ||
                      (r.out[i] == '\n' && i && r.out[i - 1] == '\r'),
                  "stat --csv printed byte 0x%02x at %zu (only CR LF ends "
                  "a row)", (unsigned char)r.out[i], i);
    cr_expect(strstr(r.out, "\"a\\033[2J\\a\\b\\r\\177,\"\"q\"\".op\","),
              "%s", r.out);
    run_free(&r);
    r = run_lct(NULL, "dump", path, NULL);
    cr_expect(strstr(r.out, "\"a\\u001b[2J\\u0007\\b\\r\\u007f,\\\"q\\\".op\""),
              "%s", r.out);
    cr_expect_null(memchr(r.out, 0x7f, r.outlen));
    run_free(&r);
    unlink(path);
    free(path);
    mpw_free(&file);
    mpw_free(&body);
}

/* Under --lazy, args that cannot be rendered still leave one whole JSON
 * object on the line, saying so, and the reason on stderr. */
Test(cli, dump_lazy_prints_whole_lines_when_args_cannot_render)
{
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    mpw_reset(&body);
    mpw_record_begin(&body, 1, 2, "bad.op");
    mpw_map(&body, 1);
    mpw_str(&body, "k");
    mpw_raw(&body, "\xc1", 1); /* reserved byte: no value */
    mpw_frame(&file, &body);
    mpw_reset(&body);
    mpw_record_begin(&body, 3, 4, "good.op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    char *path = tmp_file_with(file.buf, file.len);
    run r = run_lct(NULL, "dump", "--lazy", path, NULL);
    cr_expect_eq(r.status, 3);
    char *nl = memchr(r.out, '\n', r.outlen);
    cr_assert_not_null(nl, "%s", r.out);
    jv *first = json_parse(r.out, (size_t)(nl - r.out));
    cr_assert_not_null(first, "not one JSON object: %.*s",
                       (int)(nl - r.out), r.out);
    cr_expect_eq(json_get(first, "args")->t, J_NULL);
    cr_expect_str_eq(json_get(first, "qualname")->s, "bad.op");
    cr_expect_eq(json_get(first, "args_error")->t, J_STR);
    jv *second = json_parse(nl + 1, r.outlen - (size_t)(nl + 1 - r.out));
    cr_expect_not_null(second, "%s", nl + 1);
    cr_expect(strstr(r.err, "args cannot be rendered"), "%s", r.err);
    /* on two threads (and as CSV) the same lines and status */
    run two = run_lct(NULL, "dump", "--lazy", "-j", "2", path, NULL);
    cr_expect_eq(two.status, 3);
    cr_expect_str_eq(two.out, r.out);
    run_free(&two);
    run c1 = run_lct(NULL, "dump", "--lazy", "--csv", "-j", "1", path, NULL);
    run c2 = run_lct(NULL, "dump", "--lazy", "--csv", "-j", "2", path, NULL);
    cr_expect_eq(c1.status, 3);
    cr_expect_eq(c2.status, 3);
    cr_expect_str_eq(c2.out, c1.out);
    cr_expect(strstr(c1.out, "bad.op,\r\n"), "args empty: %s", c1.out);
    run_free(&c1);
    run_free(&c2);
    json_free(first);
    json_free(second);
    run_free(&r);
    unlink(path);
    free(path);
    mpw_free(&file);
    mpw_free(&body);
}

/* MARK: progress */

/* A sparse trace over 256 MiB: header, a ~4 GiB zero-filled (malformed)
 * frame that costs no disk, then a few records. */
static char *big_sparse_trace(void)
{
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    mpw_be32(&file, 0xfffffff0u);
    char *path = tmp_file_with(file.buf, file.len);
    int fd = open(path, O_WRONLY);
    off_t end = (off_t)file.len + 0xfffffff0;
    cr_assert_eq(ftruncate(fd, end), 0);
    mpw_reset(&file);
    for (int i = 0; i < 3; i++) {
        mpw_reset(&body);
        mpw_record_begin(&body, i, i, "big.op");
        mpw_map(&body, 0);
        mpw_frame(&file, &body);
    }
    cr_assert_eq(pwrite(fd, file.buf, file.len, end), (ssize_t)file.len);
    close(fd);
    mpw_free(&file);
    mpw_free(&body);
    return path;
}

Test(cli, progress_only_on_a_terminal)
{
    char *path = big_sparse_trace();
    /* Not a terminal: nothing but the report. */
    run r = run_lct(NULL, "check", path, NULL);
    cr_expect_eq(r.status, 3, "the zero frame is skipped");
    cr_expect_null(memchr(r.err, '\r', r.errlen), "stderr: %s", r.err);
    run_free(&r);

    /* stderr on a terminal (script(1) gives it a pty), the report
     * elsewhere: progress, then erased. */
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s check %s > /dev/null", LCT_TOOL, path);
    char out_path[] = "/tmp/lct-cli-tty-XXXXXX";
    int out_fd = mkstemp(out_path);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out_fd, 1);
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, 0);
        execlp("script", "script", "-qec", cmd, "/dev/null", (char *)NULL);
        _exit(127);
    }
    int ws;
    waitpid(pid, &ws, 0);
    close(out_fd);
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 127)
        cr_skip_test("script(1) is not available");
    size_t len;
    char *out = read_whole_file(out_path, &len);
    cr_expect(strstr(out, "\rlct check: ") != NULL, "no progress line: %s",
              out);
    cr_expect(strstr(out, "% ") != NULL);
    cr_expect(strstr(out, "\r\033[K") != NULL, "progress not erased");
    free(out);
    unlink(out_path);
    unlink(path);
    free(path);
}

/* MARK: threads */

Test(cli, parallel_output_is_identical_to_sequential)
{
    static const char *names[] = {"clean", "malformed_mixed", "trunc_tail_74",
                                  "huge_length", "header_only"};
    static const char *cmds[][2] = {{"check", NULL},   {"check", "--json"},
                                    {"stat", NULL},    {"stat", "--json"},
                                    {"info", NULL},    {"info", "--json"},
                                    {"dump", NULL},    {"dump", "--csv"},
                                    {"sql", "SELECT idx, offset, qualname "
                                            "FROM records WHERE idx > 3"}};
    for (size_t f = 0; f < sizeof names / sizeof *names + 1; f++) {
        char *path = f < sizeof names / sizeof *names
                         ? fixture(names[f], ".lct")
                         : strdup(LCT_SAMPLE);
        for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
            const char *extra = cmds[c][1] ? cmds[c][1] : "-q";
            run one = run_lct(NULL, cmds[c][0], "-j", "1", extra, path, NULL);
            run three = run_lct(NULL, cmds[c][0], "-j", "3", extra, path, NULL);
            cr_expect_eq(one.status, three.status, "%s %s", cmds[c][0], path);
            cr_expect_str_eq(three.out, one.out, "%s %s %s", cmds[c][0], extra,
                             path);
            cr_expect_str_eq(three.err, one.err, "%s %s stderr", cmds[c][0],
                             path);
            run_free(&one);
            run_free(&three);
        }
        /* Warnings too, in the same order. */
        run one = run_lct(NULL, "stat", "-j", "1", path, NULL);
        run three = run_lct(NULL, "stat", "-j", "3", path, NULL);
        cr_expect_str_eq(three.err, one.err, "stat warnings %s", path);
        run_free(&one);
        run_free(&three);
        free(path);
    }
}

/* The mapping and the stream (the default for one pass) print the same
 * bytes, warnings included, for every command. */
Test(cli, mmap_and_stream_print_the_same)
{
    static const char *cmds[][2] = {{"check", "--json"}, {"stat", "--csv"},
                                    {"info", "--json"},  {"info", "-q"},
                                    {"dump", "-q"},      {"check", "-q"}};
    for (size_t f = 0; f < NFIXTURES + 1; f++) {
        char *path = f < NFIXTURES ? fixture(fixtures[f], ".lct")
                                   : strdup(LCT_SAMPLE);
        for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
            run m = run_lct(NULL, cmds[c][0], "--mmap", cmds[c][1], path,
                            NULL);
            run s = run_lct(NULL, cmds[c][0], "--stream", cmds[c][1], path,
                            NULL);
            run d = run_lct(NULL, cmds[c][0], cmds[c][1], path, NULL);
            cr_expect_eq(m.status, s.status, "%s %s", cmds[c][0], path);
            cr_expect_str_eq(s.out, m.out, "%s %s %s", cmds[c][0],
                             cmds[c][1], path);
            cr_expect_str_eq(s.err, m.err, "%s %s stderr", cmds[c][0], path);
            cr_expect_str_eq(d.out, s.out, "the default is one of them");
            run_free(&m);
            run_free(&s);
            run_free(&d);
        }
        free(path);
    }
}

/* A new trace of `lct gen -n records --seed seed` (its malloc'd path),
 * and its size. */
static char *generated(int records, const char *seed, off_t *size)
{
    char *path = tmp_file_with("", 0), n[16];
    snprintf(n, sizeof n, "%d", records);
    run g = run_lct(NULL, "gen", "-n", n, "--seed", seed, path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    struct stat info;
    cr_assert_eq(stat(path, &info), 0);
    *size = info.st_size;
    return path;
}

/* The minor page faults of `lct dump -q --mmap [-j 1] path`, its output
 * dropped: a count of the memory it touched (mapped either way, so that
 * the file's pages count alike). */
static long dump_faults(const char *path, bool one_thread)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
            _exit(126);
        if (one_thread)
            execl(LCT_TOOL, LCT_TOOL, "dump", "-q", "--mmap", "-j", "1",
                  path, (char *)NULL);
        else
            execl(LCT_TOOL, LCT_TOOL, "dump", "-q", "--mmap", path,
                  (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage use;
    cr_assert_eq(wait4(pid, &status, 0, &use), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d",
              status);
    return use.ru_minflt;
}

/* A process that may use one CPU renders a large trace's records as one
 * thread does: the batches for several threads (a frame index, each
 * lane's output held a batch at a time) were 9,762 page faults on this
 * 73 MB trace against 405, and 2.4x the CPU time. */
Test(cli, dump_on_one_cpu_renders_as_one_thread, .timeout = 120)
{
    off_t size;
    char *path = generated(40000, "5", &size);
    cr_assert_geq(size, 64 << 20, "threads by default from 64 MiB");
    cpu_set_t all;
    pin_to_one_cpu(&all); /* the tool inherits the mask */
    long one = dump_faults(path, true), chosen = dump_faults(path, false);
    unpin(&all);
    cr_expect_leq(chosen, one + one / 4 + 300,
                  "default %ld page faults, -j 1 %ld", chosen, one);
    unlink(path);
    free(path);
}

/* Past 16 MiB the default is whichever way a probe finds cheaper here
 * (LCT_ONE_PASS): every way prints the same, on a trace whose tail is
 * cut.  test_stream forces each way in the library. */
Test(cli, a_large_trace_reads_the_same_every_way, .timeout = 120)
{
    off_t size;
    char *path = generated(10000, "3", &size);
    cr_assert_gt(size, 17 << 20, "the probe's size, and more");
    cr_assert_eq(truncate(path, size - 100), 0);
    static const char *cmds[][4] = {{"check", "--json", "-j", "1"},
                                    {"stat", "--csv", "-j", "2"},
                                    {"keys", "--csv", "-j", "1"},
                                    {"mrc", "--json", "-j", "1"}};
    for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
        run m = run_lct(NULL, cmds[c][0], "--mmap", cmds[c][1], cmds[c][2],
                        cmds[c][3], path, NULL);
        run s = run_lct(NULL, cmds[c][0], "--stream", cmds[c][1], cmds[c][2],
                        cmds[c][3], path, NULL);
        run d = run_lct(NULL, cmds[c][0], cmds[c][1], cmds[c][2], cmds[c][3],
                        path, NULL);
        cr_expect_eq(m.status, 3, "%s: the cut tail", cmds[c][0]);
        cr_expect(m.outlen > 0, "%s printed", cmds[c][0]);
        cr_expect_eq(s.status, m.status, "%s", cmds[c][0]);
        cr_expect_eq(d.status, m.status, "%s", cmds[c][0]);
        cr_expect_str_eq(s.out, m.out, "%s --stream", cmds[c][0]);
        cr_expect_str_eq(d.out, m.out, "%s by default", cmds[c][0]);
        cr_expect_str_eq(s.err, m.err, "%s --stream stderr", cmds[c][0]);
        cr_expect_str_eq(d.err, m.err, "%s stderr by default", cmds[c][0]);
        run_free(&m);
        run_free(&s);
        run_free(&d);
    }
    unlink(path);
    free(path);
}

/* dump --fields: only what was asked, in that order; idx counts records
 * as the reader yields them, filtered or not. */
Test(cli, dump_fields_projects_each_record)
{
    char *path = fixture("malformed_mixed", ".lct");
    run all = run_lct(NULL, "dump", "-q", path, NULL);
    run some = run_lct(NULL, "dump", "-q", "--fields", "qualname,idx,t_mono",
                       path, NULL);
    cr_assert_eq(some.status, all.status);
    const char *a = all.out, *b = some.out;
    uint64_t idx = 0;
    for (; *a && *b; idx++) {
        const char *na = strchr(a, '\n'), *nb = strchr(b, '\n');
        cr_assert(na && nb);
        jv *full = json_parse(a, (size_t)(na - a));
        jv *proj = json_parse(b, (size_t)(nb - b));
        cr_assert(full && proj, "%.*s", (int)(nb - b), b);
        cr_expect_eq(proj->n, 3, "three members");
        cr_expect(jv_equal(json_get(proj, "qualname"), json_get(full, "qualname")));
        cr_expect(jv_equal(json_get(proj, "t_mono"), json_get(full, "t_mono")));
        cr_expect_eq(json_get(proj, "idx")->u, idx);
        cr_expect(strncmp(b, "{\"qualname\":", 12) == 0, "in the order asked");
        json_free(full);
        json_free(proj);
        a = na + 1;
        b = nb + 1;
    }
    cr_expect(!*a && !*b, "as many lines");
    run bad = run_lct(NULL, "dump", "--fields", "t_mono,nope", path, NULL);
    cr_expect_eq(bad.status, 2);
    cr_expect(strstr(bad.err, "--fields"), "%s", bad.err);
    run_free(&all);
    run_free(&some);
    run_free(&bad);
    free(path);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* --qualname: exact name, suffix after a dot, or glob; a pattern that
 * selects nothing is said on stderr.  --unwrap and --bin hex. */
Test(cli, dump_qualname_unwrap_and_hex)
{
    const char *sample = LCT_SAMPLE;
    struct {
        const char *pattern;
        size_t lines;
    } cases[] = {
        {"lmcache.v1.distributed.storage_manager.StorageManager.finish_write",
         280},
        {"finish_write", 280},
        {"StorageManager.finish_write", 280},
        {"inish_write", 0}, /* a suffix only after a dot */
        {"*_write", 560},
        {"__exit__", 610},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run r = run_lct(NULL, "dump", "--qualname", cases[i].pattern, sample,
                        NULL);
        cr_expect_eq(count_lines(r.out), cases[i].lines, "%s",
                     cases[i].pattern);
        cr_expect_eq(strstr(r.err, "matched no record") != NULL,
                     cases[i].lines == 0, "%s: %s", cases[i].pattern, r.err);
        run_free(&r);
    }
    run plain = run_lct(NULL, "dump", "-n", "1", sample, NULL);
    run flat = run_lct(NULL, "dump", "-n", "1", "--unwrap", "--bin", "hex",
                       sample, NULL);
    cr_expect(strstr(plain.out, "\"__t__\""), "%s", plain.out);
    cr_expect_null(strstr(flat.out, "__t__"), "%s", flat.out);
    jv *a = json_parse(plain.out, plain.outlen);
    jv *b = json_parse(flat.out, flat.outlen);
    cr_assert(a && b);
    const jv *key0 = &json_get(json_get(a, "args"), "keys")->items[0];
    const jv *flat0 = &json_get(json_get(b, "args"), "keys")->items[0];
    const jv *b64 = json_get(json_get(key0, "v"), "chunk_hash");
    const jv *hex = json_get(flat0, "chunk_hash");
    cr_assert(b64 && hex);
    cr_expect_eq(hex->slen, 64, "32 bytes as hex: %s", hex->s);
    cr_expect_eq(b64->slen, 44);
    json_free(a);
    json_free(b);
    run_free(&plain);
    run_free(&flat);
    run bad = run_lct(NULL, "dump", "--bin", "octal", sample, NULL);
    cr_expect_eq(bad.status, 2);
    run_free(&bad);
}

/* stat: the largest gap and the record ending it, t_mono going back
 * counted and said, skips and a cut tail in every format, filters. */
Test(cli, stat_reports_gap_max_backwards_and_damage)
{
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    /* a.op at 0, 5, 4 (back by 1), 4.5; b.op at 1 */
    const double times[] = {0, 5, 4, 4.5};
    uint64_t offset_of[4];
    for (int i = 0; i < 4; i++) {
        mpw_reset(&body);
        mpw_record_begin(&body, times[i], times[i], "x.a.op");
        mpw_map(&body, 0);
        offset_of[i] = file.len;
        mpw_frame(&file, &body);
        if (i == 1) { /* a malformed frame in between */
            mpw_reset(&body);
            mpw_array(&body, 0);
            mpw_frame(&file, &body);
        }
    }
    mpw_reset(&body);
    mpw_record_begin(&body, 1, 1, "x.b.op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    mpw_raw(&file, "\x00\x00", 2); /* a cut tail */
    char *path = tmp_file_with(file.buf, file.len);
    run r = run_lct(NULL, "stat", "--json", "-q", path, NULL);
    jv *got = json_parse(r.out, r.outlen);
    cr_assert_not_null(got, "%s", r.out);
    cr_expect_eq(json_get(got, "skipped")->u, 1);
    cr_expect_eq(json_get(got, "truncated")->b, true);
    cr_expect_eq(json_get(got, "backwards")->u, 1);
    const jv *a = &json_get(got, "ops")->items[0];
    cr_expect_eq(json_get(a, "gap_max")->d, 5.0);
    cr_expect_eq(json_get(a, "gap_max_offset")->u, offset_of[1]);
    cr_expect_eq(json_get(a, "backwards")->u, 1);
    cr_expect_eq(json_get(a, "share")->d, 0.8);
    json_free(got);
    run_free(&r);
    r = run_lct(NULL, "stat", "-q", path, NULL);
    cr_expect(strstr(r.out, "damaged: 1 frames skipped, tail cut short"),
              "%s", r.out);
    cr_expect(strstr(r.out, "note: 1 records have a t_mono below"), "%s",
              r.out);
    run_free(&r);
    r = run_lct(NULL, "stat", "--csv", "-q", path, NULL);
    cr_expect(strstr(r.out, ",1,true\r\n"), "skipped and truncated: %s",
              r.out);
    run_free(&r);
    /* Filters: a suffix, a time window, and a pattern that selects none. */
    r = run_lct(NULL, "stat", "--json", "-q", "--qualname", "b.op", path,
                NULL);
    got = json_parse(r.out, r.outlen);
    cr_expect_eq(json_get(got, "records")->u, 1);
    json_free(got);
    run_free(&r);
    r = run_lct(NULL, "stat", "--json", "-q", "--since", "4", "--until",
                "4.5", path, NULL);
    got = json_parse(r.out, r.outlen);
    cr_expect_eq(json_get(got, "records")->u, 2);
    json_free(got);
    run_free(&r);
    r = run_lct(NULL, "stat", "--qualname", "zzz", path, NULL);
    cr_expect(strstr(r.err, "--qualname 'zzz' matched no record"), "%s",
              r.err);
    run_free(&r);
    unlink(path);
    free(path);
    mpw_free(&file);
    mpw_free(&body);
}

/* --range by record number with Python's slice rules; --at by offset,
 * a skipped frame shown with why. */
Test(cli, dump_range_and_at)
{
    char *path = fixture("malformed_mixed", ".lct");
    run all = run_lct(NULL, "dump", "-q", path, NULL);
    char *lines[64];
    size_t n = lines_of(all.out, lines, 64);
    cr_assert_geq(n, 5);
    struct {
        const char *range;
        size_t from, to;
    } cases[] = {{"1:3", 1, 3}, {":2", 0, 2}, {"-2:", n - 2, n},
                 {"-3:-1", n - 3, n - 1}, {"5:2", 0, 0}, {":", 0, n},
                 {"100:", 0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        run r = run_lct(NULL, "dump", "-q", "--range", cases[c].range, path,
                        NULL);
        char *got[64];
        size_t m = lines_of(r.out, got, 64);
        size_t want = cases[c].to > cases[c].from ? cases[c].to - cases[c].from
                                                  : 0;
        cr_expect_eq(m, want, "--range %s", cases[c].range);
        for (size_t i = 0; i < m && i < want; i++)
            cr_expect_str_eq(got[i], lines[cases[c].from + i], "--range %s",
                             cases[c].range);
        run_free(&r);
    }
    /* --at: a record's own offset gives its line; a skipped frame's gives
     * why, and its body. */
    jv *first = json_parse(lines[0], strlen(lines[0]));
    char off[32];
    snprintf(off, sizeof off, "%llu",
             (unsigned long long)json_get(first, "offset")->u);
    run at = run_lct(NULL, "dump", "--at", off, path, NULL);
    cr_expect_eq(at.status, 0);
    cr_expect(strncmp(at.out, lines[0], strlen(lines[0])) == 0, "%s", at.out);
    run_free(&at);
    at = run_lct(NULL, "dump", "--at", "1102", path, NULL);
    cr_expect_eq(at.status, 3);
    jv *bad = json_parse(at.out, at.outlen);
    cr_assert_not_null(bad, "%s", at.out);
    cr_expect(strstr(json_get(bad, "error")->s, "missing required field"));
    cr_expect_eq(json_get(bad, "body")->t, J_OBJ);
    run_free(&at);
    at = run_lct(NULL, "dump", "--at", "3", path, NULL);
    cr_expect_eq(at.status, 1, "inside the header");
    run_free(&at);
    json_free(first);
    json_free(bad);
    run_free(&all);
    free(path);
}

/* --since/--until: seconds bound t_mono, a UTC time bounds t_wall. */
Test(cli, time_windows_on_t_mono_and_t_wall)
{
    run all = run_lct(NULL, "dump", "-q", "--fields", "t_mono,t_wall",
                      LCT_SAMPLE, NULL);
    size_t by_mono = 0, by_wall = 0;
    for (char *line = all.out; line && *line;) {
        char *nl = strchr(line, '\n');
        jv *v = json_parse(line, (size_t)(nl - line));
        double m = json_get(v, "t_mono")->d, w = json_get(v, "t_wall")->d;
        by_mono += m >= 1.0 && m <= 1.5;
        by_wall += w >= 1764600002.0 && w <= 1764600002.5; /* 14:40:02Z */
        json_free(v);
        line = nl + 1;
    }
    cr_assert_gt(by_mono, 0);
    cr_assert_gt(by_wall, 0);
    run m = run_lct(NULL, "dump", "--since", "1", "--until", "1.5", LCT_SAMPLE,
                    NULL);
    run w = run_lct(NULL, "dump", "--since", "2025-12-01T14:40:02Z", "--until",
                    "2025-12-01T14:40:02.5Z", LCT_SAMPLE, NULL);
    run s = run_lct(NULL, "stat", "--json", "--since", "2025-12-01T14:40:02Z",
                    "--until", "2025-12-01T14:40:02.5Z", LCT_SAMPLE, NULL);
    cr_expect_eq(count_lines(m.out), by_mono);
    cr_expect_eq(count_lines(w.out), by_wall);
    jv *st = json_parse(s.out, s.outlen);
    cr_assert_not_null(st, "%s", s.out);
    cr_expect_eq(json_get(st, "records")->u, by_wall);
    json_free(st);
    run_free(&all);
    run_free(&m);
    run_free(&w);
    run_free(&s);
}

/* MARK: files that change while read */

Test(cli, file_truncated_during_dump_is_an_error_not_a_crash)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 200000); /* ~20 MB of JSON: far more than a pipe */
    char *path = tmp_file_with(t.buf, t.len);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    char err_path[] = "/tmp/lct-cli-err-XXXXXX";
    int err_fd = mkstemp(err_path);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        dup2(p[1], 1);
        dup2(err_fd, 2);
        execl(LCT_TOOL, LCT_TOOL, "dump", path, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    /* lct now blocks on the full pipe, early in the file: cut it under it. */
    char buf[65536];
    cr_assert_gt(read(p[0], buf, sizeof buf), 0);
    cr_assert_eq(truncate(path, 1 << 20), 0);
    while (read(p[0], buf, sizeof buf) > 0)
        ;
    close(p[0]);
    int ws;
    waitpid(pid, &ws, 0);
    cr_expect(WIFEXITED(ws), "lct died of signal %d", WTERMSIG(ws));
    cr_expect_eq(WEXITSTATUS(ws), 1);
    size_t errlen;
    char *err = read_whole_file(err_path, &errlen);
    cr_expect(strstr(err, "file shrank while reading: bytes from offset "),
              "stderr: %s", err);
    free(err);
    unlink(err_path);
    unlink(path);
    free(path);
    mpw_free(&t);
}

Test(cli, dump_follow_waits_for_an_empty_file_and_prints_appends)
{
    char *path = tmp_file_with("", 0);
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 5);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        dup2(p[1], 1);
        execl(LCT_TOOL, LCT_TOOL, "dump", "--follow", "-q", path, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    /* The recorder writes the header late, and a record in two halves. */
    int fd = open(path, O_WRONLY | O_APPEND);
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    size_t hlen = 4 + ((size_t)t.buf[2] << 8 | t.buf[3]);
    cr_assert_eq(write(fd, t.buf, hlen / 2), (ssize_t)(hlen / 2));
    nanosleep(&pause, NULL);
    size_t rest = t.len - hlen / 2 - 10;
    cr_assert_eq(write(fd, t.buf + hlen / 2, rest), (ssize_t)rest);
    nanosleep(&pause, NULL);
    cr_assert_eq(write(fd, t.buf + t.len - 10, 10), 10);
    close(fd);
    /* Read the five lines, then interrupt it like Ctrl-C. */
    char out[8192];
    size_t got = 0;
    int lines = 0;
    while (lines < 5 && got < sizeof out) {
        ssize_t n = read(p[0], out + got, sizeof out - got);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            lines += out[got + (size_t)i] == '\n';
        got += (size_t)n;
    }
    cr_expect_eq(lines, 5, "%.*s", (int)got, out);
    kill(pid, SIGINT);
    int ws;
    waitpid(pid, &ws, 0);
    cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d", ws);
    close(p[0]);
    unlink(path);
    free(path);
    mpw_free(&t);
}

/* Start lct with args (NULL-terminated) and its standard descriptors on
 * the given ones (-1 keeps the test's); the child closes every other end
 * listed in `close_in_child` (-1 terminated). */
static pid_t spawn_lct(int in, int out, int err, const int *close_in_child,
                       const char *const *args)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        if (in >= 0)
            dup2(in, 0);
        if (out >= 0)
            dup2(out, 1);
        if (err >= 0)
            dup2(err, 2);
        for (const int *c = close_in_child; *c >= 0; c++)
            close(*c);
        execv(LCT_TOOL, (char *const *)args);
        _exit(127);
    }
    return pid;
}

/* Read lines from fd until `want` newlines arrived or it ends. */
static int read_lines(int fd, char *out, size_t cap, int want)
{
    size_t got = 0;
    int lines = 0;
    while (lines < want && got < cap) {
        ssize_t n = read(fd, out + got, cap - got);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            lines += out[got + (size_t)i] == '\n';
        got += (size_t)n;
    }
    return lines;
}

/* `(cat t.lct; sleep) | lct dump -n 1 -`: the record prints as soon as it
 * has arrived, not when the input ends; `-f -` is the same streaming. */
Test(cli, stdin_is_streamed_record_by_record, .timeout = 30)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 5);
    const char *modes[][2] = {{"-n", "1"}, {"-f", "-q"}};
    for (int m = 0; m < 2; m++) {
        int in[2], out[2];
        cr_assert_eq(pipe(in), 0);
        cr_assert_eq(pipe(out), 0);
        const char *args[] = {LCT_TOOL, "dump", modes[m][0], modes[m][1],
                              "-", NULL};
        pid_t pid = spawn_lct(in[0], out[1], -1,
                              (const int[]){in[1], out[0], -1}, args);
        close(in[0]);
        close(out[1]);
        cr_assert_eq(write(in[1], t.buf, t.len), (ssize_t)t.len);
        /* The input stays open: the lines must come anyway. */
        char text[4096];
        int want = m == 0 ? 1 : 5;
        cr_expect_eq(read_lines(out[0], text, sizeof text, want), want,
                     "mode %d", m);
        close(in[1]);
        int ws;
        waitpid(pid, &ws, 0);
        cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d", ws);
        close(out[0]);
    }
    mpw_free(&t);
}

/* -j 2 on a FIFO (no size, no seeking): read by one thread, not refused. */
Test(cli, threads_on_a_fifo_fall_back_to_one, .timeout = 30)
{
    char dir[] = "/tmp/lct-cli-fifo-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/t.lct", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 50);
    pid_t writer = fork();
    if (writer == 0) {
        int fd = open(path, O_WRONLY);
        _exit(fd >= 0 && write(fd, t.buf, t.len) == (ssize_t)t.len ? 0 : 1);
    }
    run r = run_lct(NULL, "check", "-j", "2", path, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, ": ok: 50 records"), "%s", r.out);
    waitpid(writer, NULL, 0);
    run_free(&r);
    unlink(path);
    rmdir(dir);
    mpw_free(&t);
}

/* Like tail -F: a file that is not there yet is waited for; --from-end
 * prints only what is appended after the start. */
Test(cli, dump_follow_waits_for_a_missing_file_and_from_end, .timeout = 60)
{
    char dir[] = "/tmp/lct-cli-follow-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/t.lct", dir);
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 5);
    struct timespec pause = {0, 400 * 1000 * 1000};
    for (int from_end = 0; from_end < 2; from_end++) {
        unlink(path);
        if (from_end) { /* five records there before it starts */
            int fd = open(path, O_WRONLY | O_CREAT, 0644);
            cr_assert_eq(write(fd, t.buf, t.len), (ssize_t)t.len);
            close(fd);
        }
        int out[2];
        cr_assert_eq(pipe(out), 0);
        const char *args[] = {LCT_TOOL, "dump", "-f", "-q",
                              from_end ? "--from-end" : "--header",
                              "--fields", "idx", path, NULL};
        pid_t pid = spawn_lct(-1, out[1], -1, (const int[]){out[0], -1},
                              args);
        close(out[1]);
        nanosleep(&pause, NULL);
        /* Not there yet (first round), or appended to (second). */
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        size_t header = 4 + ((size_t)t.buf[2] << 8 | t.buf[3]);
        if (from_end) /* five more records */
            cr_assert_eq(write(fd, t.buf + header, t.len - header),
                         (ssize_t)(t.len - header));
        else
            cr_assert_eq(write(fd, t.buf, t.len), (ssize_t)t.len);
        close(fd);
        char text[8192];
        int want = from_end ? 5 : 6; /* 5 appended; or header + 5 */
        cr_expect_eq(read_lines(out[0], text, sizeof text, want), want,
                     "round %d", from_end);
        /* Numbered as a plain dump numbers them: 5 to 9 after the five
         * that were there (it printed 0 to 4). */
        if (from_end)
            cr_expect(strncmp(text, "{\"idx\":5}\n", 10) == 0 &&
                          strstr(text, "{\"idx\":9}\n"),
                      "%s", text);
        kill(pid, SIGINT);
        int ws;
        waitpid(pid, &ws, 0);
        cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d", ws);
        /* Nothing more was printed: --from-end skipped the first five. */
        ssize_t more = read(out[0], text, sizeof text);
        cr_expect_leq(more, 0, "round %d: %.*s", from_end,
                      (int)(more > 0 ? more : 0), text);
        close(out[0]);
    }
    unlink(path);
    rmdir(dir);
    mpw_free(&t);
}

/* A followed file that shrinks ends `dump -f` with status 1, as lct(1)
 * says, and the message names the new size. */
Test(cli, dump_follow_exits_1_when_the_file_shrinks, .timeout = 30)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 5);
    char *path = tmp_file_with(t.buf, t.len);
    int out[2], err[2];
    cr_assert_eq(pipe(out), 0);
    cr_assert_eq(pipe(err), 0);
    const char *args[] = {LCT_TOOL, "dump", "-f", path, NULL};
    pid_t pid = spawn_lct(-1, out[1], err[1],
                          (const int[]){out[0], err[0], -1}, args);
    close(out[1]);
    close(err[1]);
    char text[4096];
    cr_expect_eq(read_lines(out[0], text, sizeof text, 5), 5);
    cr_assert_eq(truncate(path, 40), 0);
    int ws;
    waitpid(pid, &ws, 0);
    cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 1, "status %d", ws);
    ssize_t n = read(err[0], text, sizeof text - 1);
    text[n > 0 ? n : 0] = '\0';
    cr_expect(strstr(text, "bytes from offset 40 are gone"), "%s", text);
    close(out[0]);
    close(err[0]);
    unlink(path);
    free(path);
    mpw_free(&t);
}

/* MARK: gen */

Test(cli, gen_writes_a_trace_that_reads_back_cleanly)
{
    char *a = tmp_file_with("", 0), *b = tmp_file_with("", 0),
         *c = tmp_file_with("", 0);
    run r = run_lct(NULL, "gen", "-n", "500", "--seed", "7", a, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = run_lct(NULL, "check", "--json", a, NULL);
    cr_expect_eq(r.status, 0, "%s", r.out);
    jv *got = json_parse(r.out, r.outlen);
    cr_assert_not_null(got);
    cr_expect_eq(json_get(got, "records")->u, 500);
    json_free(got);
    run_free(&r);
    r = run_lct(NULL, "gen", "-n", "500", "--seed", "7", b, NULL);
    run_free(&r);
    r = run_lct(NULL, "gen", "-n", "500", "--seed", "8", c, NULL);
    run_free(&r);
    size_t la, lb, lc;
    char *da = read_whole_file(a, &la), *db = read_whole_file(b, &lb),
         *dc = read_whole_file(c, &lc);
    cr_expect(la == lb && !memcmp(da, db, la), "same seed, same bytes");
    cr_expect(la != lc || memcmp(da, dc, la), "another seed, another trace");
    r = run_lct(NULL, "gen", a, NULL);
    cr_expect_eq(r.status, 2, "-n is required");
    run_free(&r);
    free(da);
    free(db);
    free(dc);
    unlink(a);
    unlink(b);
    unlink(c);
    free(a);
    free(b);
    free(c);
}

/* MARK: lct sql */

Test(cli, sql_prints_aligned_csv_and_json)
{
    const char *q = "SELECT qualname, count(*) AS n FROM records "
                    "GROUP BY qualname ORDER BY n DESC, qualname LIMIT 2";
    run t = run_lct(NULL, "sql", q, LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    char *lines[8];
    size_t n = lines_of(t.out, lines, 8);
    cr_assert_eq(n, 4, "%s", t.out);
    cr_expect(strncmp(lines[0], "qualname ", 9) == 0, "%s", lines[0]);
    cr_expect(strstr(lines[0], "  n"), "%s", lines[0]);
    cr_expect(strspn(lines[1], "- ") == strlen(lines[1]), "%s", lines[1]);
    /* Columns line up: n starts at the same place in every line. */
    size_t at = (size_t)(strstr(lines[0], "  n") - lines[0]) + 2;
    cr_expect(strncmp(lines[2] + at, "610", 3) == 0, "%s", lines[2]);
    run_free(&t);

    t = run_lct(NULL, "sql", "--csv", "SELECT 'a,\"b' AS x, 1.5 AS y, "
                "NULL AS z", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect_str_eq(t.out, "x,y,z\r\n\"a,\"\"b\",1.5,\r\n");
    run_free(&t);

    t = run_lct(NULL, "sql", "--json", "SELECT idx, qualname, t_mono, args "
                "FROM records WHERE idx = 2", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *row = json_parse(t.out, t.outlen);
    cr_assert(row, "%s", t.out);
    cr_expect_eq(json_get(row, "idx")->u, 2);
    cr_expect_eq(json_get(row, "qualname")->t, J_STR);
    cr_expect_eq(json_get(row, "t_mono")->t, J_FLOAT);
    const jv *args = json_get(row, "args");
    cr_assert(args && args->t == J_STR);
    jv *inner = json_parse(args->s, args->slen);
    cr_expect(inner && inner->t == J_OBJ, "%s", args->s);
    json_free(inner);
    json_free(row);
    run_free(&t);
}

Test(cli, sql_exit_codes_and_messages)
{
    run t = run_lct(NULL, "sql", "SELEC 1", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "syntax error"), "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "sql", "SELECT nope FROM records", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "no such column: nope"), "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "sql", "SELECT 1", NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "missing FILE"), "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "sql", "SELECT 1", "-", NULL);
    cr_expect_eq(t.status, 2);
    run_free(&t);
    t = run_lct(NULL, "sql", "SELECT 1", "/nonexistent.lct", NULL);
    cr_expect_eq(t.status, 1);
    cr_expect(strstr(t.err, "/nonexistent.lct"), "%s", t.err);
    run_free(&t);

    char *mixed = fixture("malformed_mixed", ".lct");
    t = run_lct(NULL, "sql", "SELECT count(*) FROM records; "
                "SELECT count(*) FROM records", mixed, NULL);
    cr_expect_eq(t.status, 3);
    cr_expect_str_eq(t.out, "count(*)\n--------\n13\n\ncount(*)\n--------\n13\n");
    /* Five skipped frames, each said once although read twice. */
    size_t warnings = 0;
    for (const char *p = t.err; (p = strstr(p, "skipping malformed")); p++)
        warnings++;
    cr_expect_eq(warnings, 5, "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "sql", "-q", "SELECT count(*) FROM records", mixed,
                NULL);
    cr_expect_eq(t.status, 3);
    cr_expect_eq(t.errlen, 0, "%s", t.err);
    run_free(&t);
    free(mixed);
}

Test(cli, sql_over_several_files)
{
    char *clean = fixture("clean", ".lct"), *events = fixture("events", ".lct");
    run t = run_lct(NULL, "sql", "--csv",
                    "SELECT h.level, count(*) FROM records r JOIN header h "
                    "USING (file) GROUP BY file ORDER BY h.level",
                    clean, events, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect_str_eq(t.out, "level,count(*)\r\nevents,8\r\nstorage,40\r\n");
    run_free(&t);
    free(clean);
    free(events);
}

/* MARK: lct keys, lct mrc */

static int tool_file_write_for_test(void *ctx, const char *data, size_t len)
{
    return fwrite(data, 1, len, ctx) == len ? 0 : -1;
}

/* The sample's key references through the library, as lct keys should
 * list them: read and write calls (by qualname suffix), each key. */
static lct_refs *sample_refs(uint64_t *rows)
{
    lct_reader *r;
    cr_assert_eq(lct_open(LCT_SAMPLE, 0, &r, NULL), LCT_OK);
    lct_refs *refs;
    cr_assert_eq(lct_refs_new(&refs), LCT_OK);
    lct_record rec;
    *rows = 0;
    while (lct_next(r, &rec) == 1) {
        bool read = lct_str_has_suffix(rec.qualname, ".submit_prefetch_task");
        bool write = lct_str_has_suffix(rec.qualname, ".reserve_write");
        if (!read && !write)
            continue;
        lct_key_iter it;
        lct_object_key k;
        uint64_t bytes;
        cr_assert_eq(lct_key_iter_init(&rec, &it, NULL), LCT_OK);
        while (lct_key_iter_next(&it, &k, &bytes, NULL) == 1) {
            lct_refs_add(refs, lct_object_key_hash(&k), bytes, rec.t_mono,
                         read);
            (*rows)++;
        }
    }
    lct_close(r);
    return refs;
}

Test(cli, keys_lists_every_reference_and_writes_oracle_general)
{
    uint64_t rows;
    lct_refs *refs = sample_refs(&rows);
    cr_assert_gt(rows, 1000);
    run t = run_lct(NULL, "keys", "--csv", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect_eq(count_lines(t.out), rows + 1);
    cr_expect(strncmp(t.out, "idx,t_mono,op,chunk_hash,", 25) == 0);
    run_free(&t);

    t = run_lct(NULL, "keys", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0);
    char *nl = strchr(t.out, '\n');
    jv *first = json_parse(t.out, (size_t)(nl - t.out));
    cr_assert(first);
    cr_expect_str_eq(json_get(first, "op")->s, "read");
    cr_expect_eq(json_get(first, "bytes")->u, 2 * 32 * 256 * 8 * 128 * 2);
    cr_expect_eq(json_get(first, "chunk_hash")->slen, 64);
    json_free(first);
    run_free(&t);

    char *out = tmp_file_with("", 0);
    t = run_lct(NULL, "keys", "--oracle-general", out, LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    size_t len;
    unsigned char *bin = (unsigned char *)read_whole_file(out, &len);
    cr_assert_eq(len, 24 * rows);
    char *want = NULL;
    size_t wantlen = 0;
    FILE *mem = open_memstream(&want, &wantlen);
    cr_assert_eq(lct_refs_write_oracle_general(refs, tool_file_write_for_test,
                                               mem, NULL, NULL),
                 LCT_OK);
    fclose(mem);
    cr_expect_eq(wantlen, len);
    cr_expect(memcmp(want, bin, len) == 0, "oracleGeneral bytes differ");
    free(want);
    free(bin);
    unlink(out);
    free(out);
    run_free(&t);

    t = run_lct(NULL, "keys", "--oracle-general", "/nonexistent/dir/og",
                LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 1);
    cr_expect(strstr(t.err, "/nonexistent/dir/og"), "%s", t.err);
    run_free(&t);

    t = run_lct(NULL, "keys", "--all", "--csv", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0);
    cr_expect_gt(count_lines(t.out), rows + 1);
    cr_expect(strstr(t.out, ",lmcache.v1.distributed.storage_manager."
                            "StorageManager.finish_write,"));
    run_free(&t);
    lct_refs_free(refs);
}

Test(cli, mrc_matches_the_library_and_draws_svg)
{
    uint64_t rows;
    lct_refs *refs = sample_refs(&rows);
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute(refs, 1, &m, NULL), LCT_OK);
    run t = run_lct(NULL, "mrc", "--json", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    lct_mrc_totals tot;
    lct_mrc_totals_get(m, &tot);
    cr_expect_eq(json_get(j, "reads")->u, tot.reads);
    cr_expect_eq(json_get(j, "writes")->u, tot.writes);
    cr_expect_gt(tot.infinite_hit_ratio, 0.5, "the sample reuses keys");
    const jv *curve = json_get(j, "curve");
    cr_assert(curve && curve->n > 5);
    double prev = 0;
    for (size_t i = 0; i < curve->n; i++) {
        const jv *p = &curve->items[i];
        double hit = json_get(p, "hit_ratio")->t == J_FLOAT
                         ? json_get(p, "hit_ratio")->d
                         : (double)json_get(p, "hit_ratio")->u;
        cr_expect_eq(hit, lct_mrc_hit_ratio(m, json_get(p, "keys")->u));
        cr_expect_geq(hit, prev);
        prev = hit;
    }
    cr_expect_eq(prev, tot.infinite_hit_ratio, "the curve reaches the top");
    json_free(j);
    run_free(&t);

    char *svg = tmp_file_with("", 0);
    t = run_lct(NULL, "mrc", "--sample", "0.5", "--svg", svg, LCT_SAMPLE,
                NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "SHARDS sample rate 0.5"), "%s", t.out);
    size_t len;
    char *text = read_whole_file(svg, &len);
    cr_expect(strncmp(text, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
    cr_expect(strstr(text, "<polyline"));
    cr_expect(strstr(text, "<polygon"), "the samples' band");
    cr_expect(strstr(text, "(requests: reads)"), "the SVG says what it counts");
    cr_expect(strstr(text, "GiB"));
    cr_expect(strstr(text, "</svg>\n"));
    free(text);
    unlink(svg);
    free(svg);
    run_free(&t);

    t = run_lct(NULL, "mrc", "--read", "no_such_call", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 0);
    cr_expect(strstr(t.err, "--read 'no_such_call' matched no record"), "%s",
              t.err);
    cr_expect(strstr(t.out, "0 reads"), "%s", t.out);
    run_free(&t);

    t = run_lct(NULL, "mrc", "--sample", "0", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "--sample"), "%s", t.err);
    run_free(&t);
    lct_mrc_free(m);
    lct_refs_free(refs);
}

/* An exact curve is computed as the trace is read (one thread, memory by
 * keys) unless -j asks for threads, which gather the references first:
 * the same curve in every mode (an L1 in front too), on traces of three
 * shapes, one of four key sizes, and a damaged one. */
Test(cli, mrc_streamed_is_mrc_gathered)
{
    for (int g = 0; g < 5; g++) {
        char *path = tmp_file_with("", 0);
        run m = g == 1 ? run_lct(NULL, "gen", "-n", "1500", "--docs", "100",
                                 "--shape", "llama", path, NULL)
                : g == 2 ? run_lct(NULL, "gen", "-n", "1500", "--docs",
                                   "100", "--spec", path, NULL)
                : g == 3 ? run_lct(NULL, "gen", "-n", "3000", "--docs",
                                   "300", "--sizes", "4", path, NULL)
                         : run_lct(NULL, "gen", "-n", "3000", "--docs",
                                   "300", path, NULL);
        cr_assert_eq(m.status, 0, "%s", m.err);
        run_free(&m);
        if (g == 4) { /* a frame in the middle no msgpack value starts */
            run o = run_lct(NULL, "dump", "--fields", "offset", "--range",
                            "1200:1201", path, NULL);
            long long off = atoll(strchr(o.out, ':') + 1);
            int fd = open(path, O_RDWR);
            cr_assert(off > 0 && fd >= 0, "%s", o.out);
            cr_assert_eq(pwrite(fd, "\xc1", 1, off + 4), 1);
            close(fd);
            run_free(&o);
        }
        for (int k = 0; k < 7; k++) {
            run r[2];
            for (int j = 0; j < 2; j++) {
                const char *jobs = j ? "2" : "1";
                r[j] = k == 5 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                        "--json", "--l1", "200", path, NULL)
                       : k == 6 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                          "--json", "--l1", "2G", path, NULL)
                       : k == 1 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                        "--json", "--prefix", path, NULL)
                       : k == 2 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                          "--json", "--requests", "all",
                                          path, NULL)
                       : k == 3 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                          "--json", "--prefix",
                                          "--lookups-only", path, NULL)
                       : k == 4 ? run_lct(NULL, "mrc", "-q", "-j", jobs,
                                          "--csv", "--prefix", "--requests",
                                          "all", path, NULL)
                                : run_lct(NULL, "mrc", "-q", "-j", jobs,
                                          "--json", path, NULL);
            }
            cr_expect_eq(r[0].status, g == 4 ? 3 : 0, "%s", r[0].err);
            cr_expect_eq(r[0].status, r[1].status);
            cr_expect(strlen(r[0].out) > 200, "%s", r[0].out);
            cr_expect_str_eq(r[0].out, r[1].out, "trace %d mode %d", g, k);
            if (k >= 5) /* the L1's figures are in both */
                cr_expect(strstr(r[0].out, "\"l1\"") != NULL, "%.300s",
                          r[0].out);
            if (g == 3 && k == 0) /* four sizes: the byte curve is shown */
                cr_expect(strstr(r[0].out, "\"byte_hit_ratio\"") != NULL,
                          "%.300s", r[0].out);
            run_free(&r[0]);
            run_free(&r[1]);
        }
        unlink(path);
        free(path);
    }
}

/* Issue 19: what lct mrc counts, how it samples, and an empty curve. */
Test(cli, mrc_requests_samples_and_nothing_to_draw)
{
    /* --read of both calls: the --write default matched records too (they
     * were taken as reads), so it must not be said to match nothing. */
    run t = run_lct(NULL, "mrc", "--read", "submit_prefetch_task", "--read",
                    "reserve_write", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 0);
    cr_expect_null(strstr(t.err, "matched no record"), "%s", t.err);
    run_free(&t);

    t = run_lct(NULL, "mrc", "--json", "--requests", "all", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    cr_expect_str_eq(json_get(j, "requests")->s, "all");
    cr_expect_eq(json_get(j, "reads")->u, json_get(j, "references")->u);
    cr_expect_eq(json_get(j, "writes")->u, 0);
    json_free(j);
    run_free(&t);

    t = run_lct(NULL, "mrc", "--json", "--sample", "0.5", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    const jv *samples = json_get(j, "samples");
    cr_assert(samples && samples->n == 9, "nine salted samples by default");
    for (size_t i = 0; i < samples->n; i++) {
        cr_expect_eq(json_get(&samples->items[i], "seed")->u, i + 1);
        cr_expect(json_get(&samples->items[i], "kept_references"));
        cr_expect(json_get(&samples->items[i], "adjustment"));
    }
    const jv *curve = json_get(j, "curve");
    cr_assert(curve && curve->n > 3);
    for (size_t i = 0; i < curve->n; i++) {
        const jv *p = &curve->items[i];
        double v[3];
        const char *names[] = {"hit_ratio_min", "hit_ratio", "hit_ratio_max"};
        for (int k = 0; k < 3; k++) {
            const jv *x = json_get(p, names[k]);
            cr_assert(x, "%s", names[k]);
            v[k] = x->t == J_FLOAT ? x->d : (double)x->u;
        }
        cr_expect(v[0] <= v[1] && v[1] <= v[2], "the band holds the mean");
    }
    json_free(j);
    run_free(&t);

    /* The same seed, the same curve. */
    run a = run_lct(NULL, "mrc", "--sample", "0.2", "--seed", "5", LCT_SAMPLE,
                    NULL);
    run b = run_lct(NULL, "mrc", "--sample", "0.2", "--seed", "5", LCT_SAMPLE,
                    NULL);
    cr_expect_eq(a.status, 0);
    cr_expect_str_eq(a.out, b.out);
    cr_expect(strstr(a.out, "seed 5 to 13"), "%s", a.out);
    cr_expect(strstr(a.out, "(expected "), "%s", a.out);
    run_free(&a);
    run_free(&b);

    /* A trace with no key references: said, no rows, and the SVG says so
     * in words (it printed a row "1 - 0.0000 1.0000"). */
    char *clean = fixture("clean", ".lct");
    char *svg = tmp_file_with("", 0);
    t = run_lct(NULL, "mrc", "--svg", svg, clean, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.err, "no key references"), "%s", t.err);
    const char *head = strstr(t.out, "miss_ratio\n");
    cr_expect(head && head[strlen("miss_ratio\n")] == '\0',
              "no rows after the header:\n%s", t.out);
    size_t len;
    char *text = read_whole_file(svg, &len);
    cr_expect(strstr(text, "No key references to draw"), "%s", text);
    cr_expect_null(strstr(text, "<polyline"));
    free(text);
    run_free(&t);
    t = run_lct(NULL, "mrc", "--csv", clean, NULL);
    cr_expect_str_eq(t.out, "keys,bytes,hit_ratio,miss_ratio,byte_hit_ratio\r\n");
    run_free(&t);
    unlink(svg);
    free(svg);
    free(clean);
}

/* keys remembers which patterns a qualname matched: with twelve
 * qualnames cycling (more than it remembers), some longer than it holds,
 * each record is still counted by its own qualname: --all's op column
 * and the read and write counts are the records written. */
Test(cli, keys_classifies_many_qualnames_alike)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    char names[12][200];
    for (int q = 0; q < 12; q++) {
        const char *call = q % 4 == 0   ? "submit_prefetch_task"
                           : q % 4 == 1 ? "reserve_write"
                                        : "call";
        /* some past 112 bytes; the others all 80 bytes long */
        int pad = q % 3 == 0 ? 150 : 74 - (int)strlen(call) - (q > 9);
        snprintf(names[q], sizeof names[q], "mod.%.*s.%s%d", pad,
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                 call, q);
        cr_assert(q % 3 == 0 || strlen(names[q]) == 80, "%s", names[q]);
    }
    for (int r = 0; r < 120; r++) {
        const char *q = names[(r * 5) % 12];
        lct_writer_record_begin(w, r, r, q, strlen(q));
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "keys");
        lct_writer_array(w, 1);
        unsigned char hash[2] = {(unsigned char)r, 1};
        write_object_key(w, hash, sizeof hash, 0, -1, NULL);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    /* names ending in a digit: "...submit_prefetch_task0" is no suffix
     * match for the default patterns, so ask by glob */
    run t = run_lct(NULL, "keys", "--csv", "--all", "--read",
                    "*submit_prefetch_task*", "--write", "*reserve_write*",
                    "--write", "no_such_call", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    int reads = 0, writes = 0, other[12] = {0};
    for (const char *l = strchr(t.out, '\n') + 1; *l;
         l = strchr(l, '\n') + 1) {
        const char *op = strchr(strchr(l, ',') + 1, ',') + 1;
        if (strncmp(op, "read,", 5) == 0)
            reads++;
        else if (strncmp(op, "write,", 6) == 0)
            writes++;
        else
            for (int q = 0; q < 12; q++)
                if (strncmp(op, names[q], strlen(names[q])) == 0 &&
                    op[strlen(names[q])] == ',')
                    other[q]++;
    }
    /* (r * 5) % 12 visits every name 10 times in 120 records */
    cr_expect_eq(reads, 30);
    cr_expect_eq(writes, 30);
    for (int q = 0; q < 12; q++)
        cr_expect_eq(other[q], q % 4 >= 2 ? 10 : 0, "%s", names[q]);
    cr_expect(strstr(t.err, "--write 'no_such_call' matched no record"),
              "%s", t.err);
    cr_expect(!strstr(t.err, "reserve_write*' matched no record"), "%s",
              t.err);
    run_free(&t);
    unlink(path);
    free(path);
}

/* Newer LMCache: keys under a PrefetchTaskSpec are read, group by group;
 * keys under a type this version does not read are counted and said,
 * never silently nothing. */
Test(cli, keys_of_newer_and_unknown_carriers)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    static const char *types[] = {"PrefetchTaskSpec", "PrefetchPlanV9",
                                  "PrefetchPlanV9"};
    for (int r = 0; r < 3; r++) {
        lct_writer_record_begin(w, r, r, "x.submit_prefetch_task", 22);
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "spec");
        lct_writer_codec(w, types[r]);
        lct_writer_map(w, 1);
        lct_writer_cstr(w, r == 0 ? "key_groups" : "some_keys");
        lct_writer_array(w, 1);
        if (r == 0) {
            lct_writer_codec(w, "GroupedObjectKeys");
            lct_writer_map(w, 2);
            lct_writer_cstr(w, "keys");
            lct_writer_array(w, 1);
        }
        unsigned char hash[2] = {(unsigned char)r, 7};
        write_object_key(w, hash, sizeof hash, 0, -1, NULL);
        if (r == 0) { /* the group's id, after its keys */
            lct_writer_cstr(w, "object_group_id");
            lct_writer_int(w, 0);
        }
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    run t = run_lct(NULL, "keys", "--csv", path, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "\r\n0,0.0,read,0007,m,0,0,"), "%s", t.out);
    cr_expect(strstr(t.err, "2 records hold ObjectKeys under types this "
                            "version does not read: PrefetchPlanV9"),
              "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "mrc", path, NULL);
    cr_expect(strstr(t.err, "2 records hold ObjectKeys"), "%s", t.err);
    cr_expect(strstr(t.out, "1 reads"), "%s", t.out);
    run_free(&t);
    unlink(path);
    free(path);
}

/* Progress goes where it cannot land in the output: with stdout and
 * stderr on one terminal it printed "lct:   0% of 281MB{"idx":0,...".
 * Now: only when stderr is a terminal and stdout is not that terminal,
 * naming the command, in MiB, and never under -q.  Run under script(1),
 * which gives the command a pty; LCT_PROGRESS_BYTES=1 makes the sample
 * large enough to show it. */
/* A shell command run with a pseudo-terminal as its stdin, stdout and
 * stderr (script(1)); what the terminal showed is r.out. */
static run run_on_a_terminal(const char *cmd)
{
    const char *const argv[] = {"/usr/bin/script", "-qec", cmd, "/dev/null",
                                NULL};
    return run_argv(NULL, argv);
}

Test(cli, progress_never_lands_in_the_output)
{
    char out[] = "/tmp/lct-progress-XXXXXX";
    int fd = mkstemp(out);
    cr_assert(fd >= 0);
    close(fd);
    char cmd[4096];
    /* Both on the terminal: no progress at all. */
    snprintf(cmd, sizeof cmd,
             "LCT_PROGRESS_BYTES=1 %s dump --fields idx %s", LCT_TOOL,
             LCT_SAMPLE);
    run r = run_on_a_terminal(cmd);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "{\"idx\":2999}"), "the output is there");
    cr_expect_null(strstr(r.out, "% of"), "progress in the output");
    run_free(&r);
    /* stdout to a file, stderr the terminal: progress, named, in MiB. */
    const char *cmds[] = {"dump --fields idx", "keys", "keys -q", "info -q"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        snprintf(cmd, sizeof cmd, "LCT_PROGRESS_BYTES=1 %s %s %s > %s",
                 LCT_TOOL, cmds[i], LCT_SAMPLE, out);
        r = run_on_a_terminal(cmd);
        cr_expect_eq(r.status, 0, "%s: %s", cmds[i], r.err);
        bool quiet = strstr(cmds[i], "-q") != NULL;
        char name[64];
        snprintf(name, sizeof name, "lct %.*s: ",
                 (int)strcspn(cmds[i], " "), cmds[i]);
        if (quiet)
            cr_expect_null(strstr(r.out, "% of"), "%s showed progress",
                           cmds[i]);
        else
            cr_expect(strstr(r.out, name) && strstr(r.out, "% of 1.9 MiB"),
                      "%s: %s", cmds[i], r.out);
        size_t len;
        char *text = read_whole_file(out, &len);
        cr_expect_null(strstr(text, "% of"), "%s: progress in the file",
                       cmds[i]);
        free(text);
        run_free(&r);
    }
    /* lct sql shows progress as the library reads a file from its start
     * (the row cache's pass on two threads, a keys scan): a larger file,
     * since it is told every 4096 records. */
    char *big = tmp_file_with("", 0);
    run g = run_lct(NULL, "gen", "-n", "20000", big, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    const char *queries[] = {
        "-j 2 'SELECT count(*) FROM records WHERE idx > 5'",
        "'SELECT count(*) FROM keys'",
        "-q 'SELECT count(*) FROM keys'"};
    for (size_t i = 0; i < sizeof queries / sizeof *queries; i++) {
        snprintf(cmd, sizeof cmd, "LCT_PROGRESS_BYTES=1 %s sql %s %s > %s",
                 LCT_TOOL, queries[i], big, out);
        r = run_on_a_terminal(cmd);
        cr_expect_eq(r.status, 0, "%s: %s", queries[i], r.out);
        if (strncmp(queries[i], "-q", 2) == 0)
            cr_expect_null(strstr(r.out, "% of"), "%s", r.out);
        else
            cr_expect(strstr(r.out, "lct sql: ") && strstr(r.out, "% of "),
                      "%s: %s", queries[i], r.out);
        size_t len;
        char *text = read_whole_file(out, &len);
        cr_expect_null(strstr(text, "% of"), "progress in the rows");
        cr_expect(strstr(text, "count(*)"), "%s", text);
        free(text);
        run_free(&r);
    }
    unlink(big);
    free(big);
    unlink(out);
}

/* dump --at: options that choose among records are refused, not ignored;
 * --fields is honoured (idx as a plain dump numbers it); an offset that
 * holds no record frame is said for what it is. */
Test(cli, dump_at_refuses_honours_and_says_what_is_there)
{
    static const char *const refused[][3] = {
        {"-n", "3", "-n"},         {"--range", "1:2", "--range"},
        {"--since", "1", "--since"}, {"--until", "1", "--until"},
        {"--qualname", "x", "--qualname"}, {"-f", NULL, "--follow"}};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        run t = refused[i][1]
                    ? run_lct(NULL, "dump", "--at", "1679", refused[i][0],
                              refused[i][1], LCT_SAMPLE, NULL)
                    : run_lct(NULL, "dump", "--at", "1679", refused[i][0],
                              LCT_SAMPLE, NULL);
        cr_expect_eq(t.status, 2, "%s", refused[i][0]);
        char want[64];
        snprintf(want, sizeof want, "--at and %s", refused[i][2]);
        cr_expect(strstr(t.err, want), "%s", t.err);
        cr_expect_eq(t.outlen, 0);
        run_free(&t);
    }
    run t = run_lct(NULL, "dump", "--at", "1679", "--fields",
                    "idx,offset,t_mono", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect_str_eq(t.out, "{\"idx\":2,\"offset\":1679,\"t_mono\":0.00287}\n");
    run_free(&t);
    t = run_lct(NULL, "dump", "--at", "0", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 1);
    cr_expect(strstr(t.err, "offset 0 is the header frame"), "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "dump", "--at", "7", LCT_SAMPLE, NULL);
    cr_expect(strstr(t.err, "offset 7 is inside the header frame"), "%s",
              t.err);
    run_free(&t);
    t = run_lct(NULL, "dump", "--at", "99999999", LCT_SAMPLE, NULL);
    cr_expect(strstr(t.err, "offset 99999999 is past the end of the file "
                            "(1963217 bytes)"),
              "%s", t.err);
    run_free(&t);
}

/* lct check takes several files, as lct sql does: each reported whole,
 * the status the worst (refused 1, over damaged 3, over clean 0). */
Test(cli, check_several_files_worst_status)
{
    char *clean = fixture("clean", ".lct"), *bad = fixture("malformed_mixed", ".lct"),
         *refused = fixture("bad_magic", ".lct");
    run t = run_lct(NULL, "check", clean, bad, NULL);
    cr_expect_eq(t.status, 3);
    cr_expect(strstr(t.out, "clean.lct: ok: 40 records"), "%s", t.out);
    cr_expect(strstr(t.out, "malformed_mixed.lct: DAMAGED: 13 records"), "%s",
              t.out);
    run_free(&t);
    t = run_lct(NULL, "check", "-q", bad, refused, clean, NULL);
    cr_expect_eq(t.status, 1, "a refused file is the worst");
    cr_expect(strstr(t.out, "bad_magic.lct: refused"), "%s", t.out);
    cr_expect(strstr(t.out, "clean.lct: ok"), "the files after it are checked");
    run_free(&t);
    t = run_lct(NULL, "check", "--json", clean, clean, NULL);
    cr_expect_eq(t.status, 0);
    static char *lines[8];
    cr_expect_eq(lines_of(t.out, lines, 8), 2, "one object per file");
    run_free(&t);
    free(clean);
    free(bad);
    free(refused);
}

/* A query that selects no rows still says its columns (it printed
 * nothing); --mmap with --stream is a usage error. */
Test(cli, sql_without_rows_prints_the_header_and_sources_exclude)
{
    run t = run_lct(NULL, "sql", "SELECT idx, qualname FROM records WHERE 0",
                    LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect_str_eq(t.out, "idx  qualname\n---  --------\n");
    run_free(&t);
    t = run_lct(NULL, "sql", "--csv", "SELECT idx, qualname FROM records "
                "WHERE 0", LCT_SAMPLE, NULL);
    cr_expect_str_eq(t.out, "idx,qualname\r\n");
    run_free(&t);
    t = run_lct(NULL, "dump", "--mmap", "--stream", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "--mmap and --stream exclude each other"), "%s",
              t.err);
    run_free(&t);
}

/* keys and mrc select records as dump does: --qualname, --since, --until
 * (and report a --qualname that matched nothing). */
Test(cli, keys_and_mrc_select_records_as_dump_does)
{
    run all = run_lct(NULL, "keys", "--csv", LCT_SAMPLE, NULL);
    run w = run_lct(NULL, "keys", "--csv", "--qualname", "reserve_write",
                    LCT_SAMPLE, NULL);
    run late = run_lct(NULL, "keys", "--csv", "--since", "0.5", LCT_SAMPLE,
                       NULL);
    cr_expect_eq(w.status, 0, "%s", w.err);
    static char *lines[8192];
    size_t n_all = lines_of(all.out, lines, 8192);
    size_t n_w = lines_of(w.out, lines, 8192);
    for (size_t i = 1; i < n_w; i++)
        cr_assert(strstr(lines[i], ",write,"), "%s", lines[i]);
    size_t n_late = lines_of(late.out, lines, 8192);
    for (size_t i = 1; i < n_late; i++)
        cr_assert_geq(atof(strchr(lines[i], ',') + 1), 0.5, "%s", lines[i]);
    cr_expect(n_w > 1 && n_w < n_all && n_late > 1 && n_late < n_all,
              "%zu %zu %zu", n_all, n_w, n_late);
    run_free(&all);
    run_free(&w);
    run_free(&late);
    run m = run_lct(NULL, "mrc", "--qualname", "nothing_like_it", LCT_SAMPLE,
                    NULL);
    cr_expect(strstr(m.err, "--qualname 'nothing_like_it' matched no record"),
              "%s", m.err);
    cr_expect(strstr(m.out, "0 reads, 0 writes"), "%s", m.out);
    run_free(&m);
}

/* One name for each fact across commands and formats: stat's text says
 * what its CSV says; info and check name the file "file", as sql does;
 * keys takes --json (its default) like the other row printers. */
Test(cli, one_name_for_each_fact)
{
    run text = run_lct(NULL, "stat", LCT_SAMPLE, NULL);
    run csv = run_lct(NULL, "stat", "--csv", LCT_SAMPLE, NULL);
    static const char *names[] = {"first_t_mono", "last_t_mono", "gap_mean",
                                  "gap_p50", "gap_p99", "gap_max",
                                  "args_mean_bytes", "op", "count",
                                  "share"};
    char *eol = strchr(text.out, '\n');
    cr_assert_not_null(eol);
    *eol = '\0';
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        cr_expect(strstr(text.out, names[i]), "text lacks %s", names[i]);
        cr_expect(strstr(csv.out, names[i]), "CSV lacks %s", names[i]);
    }
    run_free(&text);
    run_free(&csv);
    const char *cmds[] = {"info", "check"};
    for (int i = 0; i < 2; i++) {
        run j = run_lct(NULL, cmds[i], "--json", LCT_SAMPLE, NULL);
        cr_expect(strncmp(j.out, "{\"file\":", 8) == 0, "%s: %.40s", cmds[i],
                  j.out);
        run_free(&j);
    }
    run a = run_lct(NULL, "keys", "--json", LCT_SAMPLE, NULL);
    run b = run_lct(NULL, "keys", LCT_SAMPLE, NULL);
    cr_expect_eq(a.status, 0, "%s", a.err);
    cr_expect_str_eq(a.out, b.out);
    run_free(&a);
    run_free(&b);
}

/* stat prints the short name (after the last dot) when every one in the
 * table is its own, and the whole qualname otherwise; CSV and JSON carry
 * both. */
Test(cli, stat_prints_short_names_when_unambiguous)
{
    run t = run_lct(NULL, "stat", LCT_SAMPLE, NULL);
    cr_expect(strstr(t.out, "  op\n"), "%s", t.out);
    cr_expect(strstr(t.out, "  finish_write\n"), "%s", t.out);
    cr_expect_null(strstr(t.out, "StorageManager"), "%s", t.out);
    run_free(&t);
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    const char *names[] = {"a.x.op", "b.x.op"}; /* one short name, twice */
    for (int i = 0; i < 2; i++) {
        lct_writer_record_begin(w, i, i, names[i], strlen(names[i]));
        lct_writer_map(w, 0);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    t = run_lct(NULL, "stat", path, NULL);
    cr_expect(strstr(t.out, "  qualname\n") && strstr(t.out, "a.x.op") &&
                  strstr(t.out, "b.x.op"),
              "%s", t.out);
    run_free(&t);
    t = run_lct(NULL, "stat", "--json", path, NULL);
    cr_expect(strstr(t.out, "\"op\":\"op\""), "%s", t.out);
    run_free(&t);
    unlink(path);
    free(path);
}

/* Every row printer takes --csv: dump (its --fields as columns, args as
 * JSON text in one cell), info (one row of the facts every trace has) and
 * check (one row per file, a refused one with its error); the header line
 * names what the JSON names. */
Test(cli, csv_on_every_row_printer)
{
    char *bad = fixture("malformed_mixed", ".lct");
    run d = run_lct(NULL, "dump", "-q", "--csv", bad, NULL);
    static char *lines[64];
    cr_expect_eq(d.status, 3, "damage is said by the status");
    size_t n = lines_of(d.out, lines, 64);
    cr_assert_eq(n, 14, "a header and 13 records: %s", d.out);
    cr_expect_str_eq(lines[0], "offset,t_mono,t_wall,qualname,args");
    cr_expect(strncmp(lines[1], "289,", 4) == 0, "%s", lines[1]);
    cr_expect(strstr(lines[1], ",\"{\"\"a0\"\":9223372036854775807,"),
              "args are JSON text, quoted per RFC 4180: %s", lines[1]);
    run_free(&d);
    d = run_lct(NULL, "dump", "-q", "--csv", "--fields", "idx,qualname",
                "--range", "-1:", bad, NULL);
    cr_expect_str_eq(d.out, "idx,qualname\r\n12,lmcache.v1.distributed."
                     "storage_manager.StorageManager.reserve_write\r\n");
    run_free(&d);
    d = run_lct(NULL, "dump", "--csv", "--header", bad, NULL);
    cr_expect_eq(d.status, 2);
    cr_expect(strstr(d.err, "--header and --csv"), "%s", d.err);
    run_free(&d);

    run i = run_lct(NULL, "info", "-q", "--csv", bad, NULL);
    cr_expect_eq(i.status, 3);
    n = lines_of(i.out, lines, 64);
    cr_assert_eq(n, 2, "%s", i.out);
    cr_expect_str_eq(lines[0], "file,level,format_version,"
                     "trace_schema_version,duration,sm_config_digest,"
                     "total_records,skipped,truncated,truncated_offset");
    cr_expect(strstr(lines[1], ",storage,1,2,3.0,6e4e4966") &&
                  strstr(lines[1], ",13,5,false,"), "%s", lines[1]);
    run_free(&i);

    char *cut = fixture("trunc_tail_2", ".lct");
    run c = run_lct(NULL, "check", "--csv", bad, cut, "/nonexistent.lct",
                    NULL);
    cr_expect_eq(c.status, 1, "the worst of the files");
    n = lines_of(c.out, lines, 64);
    cr_assert_eq(n, 4, "%s", c.out);
    cr_expect_str_eq(lines[0], "file,ok,records,skipped,truncated,"
                     "truncated_offset,bytes,problems,error");
    cr_expect(strstr(lines[1], ",false,13,5,false,,3557,5,"), "%s", lines[1]);
    cr_expect(strstr(lines[2], ",false,39,0,true,12312,12314,1,"), "%s",
              lines[2]);
    cr_expect(strstr(lines[3], "/nonexistent.lct,false,,,,,,,") &&
                  strstr(lines[3], "No such file"), "%s", lines[3]);
    cr_expect(strstr(c.err, "skipping malformed record at offset 1102"),
              "problems are warnings on stderr: %s", c.err);
    run_free(&c);
    free(bad);
    free(cut);
}

/* --range means on stat, keys and mrc what it means on dump: records by
 * number; a negative side counts from the end. */
Test(cli, range_selects_the_same_records_everywhere)
{
    run all = run_lct(NULL, "keys", "--csv", LCT_SAMPLE, NULL);
    run some = run_lct(NULL, "keys", "--csv", "--range", "20:40", LCT_SAMPLE,
                       NULL);
    cr_expect_eq(some.status, 0, "%s", some.err);
    /* the expected rows: every row of the whole listing with idx 20..39 */
    size_t cap = strlen(all.out) + 1;
    char *want = calloc(1, cap), *w = want;
    size_t rows = 0;
    for (char *line = all.out, *eol; (eol = strchr(line, '\n'));
         line = eol + 1) {
        long idx = atol(line);
        if (line == all.out || (idx >= 20 && idx < 40)) {
            memcpy(w, line, (size_t)(eol - line) + 1);
            w += eol - line + 1;
            rows++;
        }
    }
    cr_expect(rows > 1 && strlen(want) < strlen(all.out), "%zu rows", rows);
    cr_expect_str_eq(some.out, want);
    free(want);
    run_free(&all);
    run_free(&some);

    run st = run_lct(NULL, "stat", "--json", "--range", "-10:", LCT_SAMPLE,
                     NULL);
    cr_expect_eq(st.status, 0, "%s", st.err);
    cr_expect(strstr(st.out, "\"records\":10"), "%s", st.out);
    run_free(&st);
    run d = run_lct(NULL, "dump", "--fields", "idx", "--range", "-10:",
                    LCT_SAMPLE, NULL);
    cr_expect_eq(count_lines(d.out), 10);
    run_free(&d);
    run m = run_lct(NULL, "mrc", "--json", "--range", "0:0", LCT_SAMPLE, NULL);
    cr_expect(strstr(m.err, "no key references"), "%s", m.err);
    run_free(&m);
    run bad = run_lct(NULL, "mrc", "--range", "1-2", LCT_SAMPLE, NULL);
    cr_expect_eq(bad.status, 2);
    cr_expect(strstr(bad.err, "lct mrc: --range '1-2' is not A:B"), "%s",
              bad.err);
    run_free(&bad);
    /* Standard input that is a regular file is mapped and counted; read
     * as a stream (as a pipe is) it cannot be counted ahead. */
    run mapped = run_lct(LCT_SAMPLE, "stat", "--json", "--range", "-3:", "-",
                         NULL);
    cr_expect_eq(mapped.status, 0, "%s", mapped.err);
    cr_expect(strstr(mapped.out, "\"records\":3"), "%s", mapped.out);
    run_free(&mapped);
    run pipe = run_lct(LCT_SAMPLE, "stat", "--stream", "--range", "-3:", "-",
                       NULL);
    cr_expect_eq(pipe.status, 2);
    cr_expect(strstr(pipe.err, "needs a file, not standard input"), "%s",
              pipe.err);
    run_free(&pipe);
}

/* dump -j N renders a batch of frames at a time on N threads: across
 * several batches, with frames skipped in different ones, its lines,
 * warnings and status are one thread's; -n stops at the same line; and
 * output that needs record numbers (--fields idx) is the same too. */
Test(cli, dump_in_parallel_batches_is_dump)
{
    char *path = tmp_file_with("", 0); /* gen replaces it */
    run g = run_lct(NULL, "gen", "-n", "30000", path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    /* Damage three frames in different batches: a byte no msgpack value
     * starts with, as the first of the body. */
    static const char *at[] = {"5000:5001", "13000:13001", "25000:25001"};
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    for (int i = 0; i < 3; i++) {
        run o = run_lct(NULL, "dump", "--fields", "offset", "--range", at[i],
                        path, NULL);
        long long off = atoll(strchr(o.out, ':') + 1);
        cr_assert_gt(off, 0, "%s", o.out);
        cr_assert_eq(pwrite(fd, "\xc1", 1, off + 4), 1);
        run_free(&o);
    }
    close(fd);
    static const char *variants[][4] = {
        {"-q", NULL},
        {"--csv", NULL},
        {"-n", "17000", NULL},
        {"--qualname", "reserve_write", "--unwrap", NULL},
        {"--fields", "idx,qualname", NULL},
    };
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        const char *const *x = variants[v];
        run one = run_lct(NULL, "dump", "-j", "1", x[0], x[1] ? x[1] : path,
                          x[1] && x[2] ? x[2] : (x[1] ? path : NULL),
                          x[1] && x[2] ? path : NULL, NULL);
        run two = run_lct(NULL, "dump", "-j", "2", x[0], x[1] ? x[1] : path,
                          x[1] && x[2] ? x[2] : (x[1] ? path : NULL),
                          x[1] && x[2] ? path : NULL, NULL);
        cr_expect_eq(one.status, 3, "three frames skipped: %s", one.err);
        cr_expect_eq(two.status, one.status, "%s", x[0]);
        cr_expect(one.outlen > 0 && one.outlen == two.outlen &&
                      memcmp(one.out, two.out, one.outlen) == 0,
                  "dump %s: -j 2 printed other lines", x[0]);
        cr_expect_str_eq(two.err, one.err, "dump %s: warnings", x[0]);
        run_free(&one);
        run_free(&two);
    }
    run n = run_lct(NULL, "dump", "-j", "2", "-q", "-n", "17000", path, NULL);
    cr_expect_eq(count_lines(n.out), 17000);
    run_free(&n);
    unlink(path);
    free(path);
}

/* lct_keys() in SQL takes lct keys's choices: read_calls and
 * write_calls (comma-separated patterns, as --read and --write), and
 * all_calls (--all): the same rows as the tool's, choice for choice. */
Test(cli, sql_lct_keys_takes_the_choices_of_lct_keys)
{
    static const char *cases[][4] = {
        /* SQL arguments after the path, then lct keys's options */
        {"", "--csv", NULL, NULL},
        {", 'finish_write,submit_prefetch_task'", "--read", "finish_write",
         "--read"},
        {", NULL, 'finish_write'", "--write", "finish_write", NULL},
        {", NULL, NULL, 'all'", "--all", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char sql[4096];
        snprintf(sql, sizeof sql,
                 "SELECT idx, op, obj_id FROM lct_keys('%s'%s)", LCT_SAMPLE,
                 cases[i][0]);
        run s = run_lct(NULL, "sql", "--csv", sql, LCT_SAMPLE, NULL);
        run k = i == 1 ? run_lct(NULL, "keys", "--csv", "--read",
                                 "finish_write", "--read",
                                 "submit_prefetch_task", LCT_SAMPLE, NULL)
                : cases[i][2]
                    ? run_lct(NULL, "keys", "--csv", cases[i][1], cases[i][2],
                              LCT_SAMPLE, NULL)
                    : run_lct(NULL, "keys", "--csv", cases[i][1], LCT_SAMPLE,
                              NULL);
        cr_assert_eq(s.status, 0, "%s: %s", sql, s.err);
        cr_assert_eq(k.status, 0, "%s", k.err);
        /* keys's columns idx (1st), op (3rd), obj_id (9th) */
        size_t cap = strlen(k.out) + 1;
        char *want = calloc(1, cap), *w = want;
        w += sprintf(w, "idx,op,obj_id\r\n");
        bool head = true;
        for (char *line = k.out, *eol; (eol = strstr(line, "\r\n"));
             line = eol + 2) {
            if (head) {
                head = false;
                continue;
            }
            char *f[10];
            int nf = 0;
            *eol = '\0';
            for (char *p = line; p && nf < 10; nf++) {
                f[nf] = p;
                if ((p = strchr(p, ',')))
                    *p++ = '\0';
            }
            cr_assert_geq(nf, 9);
            w += sprintf(w, "%s,%s,%s\r\n", f[0], f[2], f[8]);
        }
        cr_expect(strlen(want) > 20, "case %zu selected nothing", i);
        cr_expect_str_eq(s.out, want, "%s", sql);
        free(want);
        run_free(&s);
        run_free(&k);
    }
}

/* gen's key fields one by one, over a shape: the model name (31 bytes, a
 * fixstr; a long one, a str16), a salt, kv ranks, groups (0 leaves the
 * field out). */
Test(cli, gen_key_fields_one_by_one)
{
    char *path = tmp_file_with("", 0);
    run g = run_lct(NULL, "gen", "-n", "60", "--shape", "llama", "--model",
                    "meta-llama/Llama-3.1-8B-Instruc", "--kv-ranks", "3",
                    "--cache-salt", "t7", path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    run k = run_lct(NULL, "keys", "--csv", path, NULL);
    cr_expect(strstr(k.out, ",meta-llama/Llama-3.1-8B-Instruc,2,"),
              "kv rank 2 of 3: %.300s", k.out);
    cr_expect(!strstr(k.out, "-Instruc,3,"), "no kv rank 3 of 3");
    cr_expect(strstr(k.out, ",2,t7,"), "llama's groups stay, the salt is t7");
    run_free(&k);
    char model[301];
    memset(model, 'm', 300);
    model[300] = '\0';
    g = run_lct(NULL, "gen", "-n", "20", "--model", model, "--groups", "0",
                path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    k = run_lct(NULL, "keys", "--csv", path, NULL);
    cr_expect(strstr(k.out, model), "the 300-byte model name");
    cr_expect(strstr(k.out, ",0,,"), "no group (0), no salt");
    run_free(&k);
    run bad = run_lct(NULL, "gen", "-n", "5", "--kv-ranks", "0", path, NULL);
    cr_expect_eq(bad.status, 2);
    cr_expect(strstr(bad.err, "--kv-ranks is 1 to 1024"), "%s", bad.err);
    run_free(&bad);
    unlink(path);
    free(path);
}

/* gen --spec writes prefetches as newer LMCache records them: a
 * PrefetchRequestSpec with attn_desc and per-group layouts, whose keys
 * and sizes read as the flat form's do (the same seed, the same keys). */
Test(cli, gen_spec_writes_prefetches_as_request_specs)
{
    char *flat = tmp_file_with("", 0), *spec = tmp_file_with("", 0);
    run g = run_lct(NULL, "gen", "-n", "80", "--shape", "llama", flat, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    g = run_lct(NULL, "gen", "-n", "80", "--shape", "llama", "--spec", spec,
                NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    run d = run_lct(NULL, "dump", "--qualname", "*submit_prefetch_task",
                    spec, NULL);
    cr_expect(strstr(d.out, "\"spec\":{\"__t__\":\"PrefetchRequestSpec\""),
              "%.400s", d.out);
    cr_expect(strstr(d.out, "\"world_size\":8"), "%.400s", d.out);
    cr_expect(strstr(d.out, "\"group_layout_descs\":{\"0\":"), "layouts");
    run_free(&d);
    run a = run_lct(NULL, "keys", "--csv", flat, NULL);
    run b = run_lct(NULL, "keys", "--csv", spec, NULL);
    cr_expect_eq(a.status, 0);
    cr_expect_eq(b.status, 0);
    cr_expect_str_eq(b.out, a.out, "the spec's keys and sizes are the flat form's");
    run_free(&a);
    run_free(&b);
    unlink(flat);
    unlink(spec);
    free(flat);
    free(spec);
}

/* gen --shape llama writes keys as a multi-tenant server records them: a
 * 32-byte model name, kv ranks past 1, object groups, a cache_salt. */
Test(cli, gen_shape_llama_writes_the_keys_users_record)
{
    char *path = tmp_file_with("", 0);
    run g = run_lct(NULL, "gen", "-n", "50", "--shape", "llama", path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    run k = run_lct(NULL, "keys", "--csv", path, NULL);
    cr_expect_eq(k.status, 0, "%s", k.err);
    cr_expect(strstr(k.out, ",meta-llama/Llama-3.1-8B-Instruct,7,"),
              "kv rank 7: %.300s", k.out);
    cr_expect(strstr(k.out, ",2,tenant-42,"), "group 2 and a salt");
    run_free(&k);
    run bad = run_lct(NULL, "gen", "-n", "5", "--shape", "mistral", path,
                      NULL);
    cr_expect_eq(bad.status, 2);
    cr_expect(strstr(bad.err, "--shape is qwen or llama"), "%s", bad.err);
    run_free(&bad);
    unlink(path);
    free(path);
}

/* dump --csv's bytes, pinned: on every fixture and the sample they hash
 * as test/golden/dump-csv.sha256 says (written before the CSV fast
 * path), and on strings with quotes, commas, a backslash, UTF-8, a
 * control byte and a bidi control they are test/golden's file. */
Test(cli, dump_csv_bytes_stay_as_they_were)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s/..' && while read -r sum file; do "
             "got=$('%s' dump --csv \"$file\" 2>/dev/null | "
             "sha256sum | cut -d' ' -f1); [ \"$got\" = \"$sum\" ] || "
             "{ echo \"differs: $file\"; exit 1; }; done "
             "< test/golden/dump-csv.sha256",
             LCT_FIXTURES_DIR "/..", LCT_TOOL);
    cr_expect_eq(system(cmd), 0, "a file's CSV differs from before");
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    const char *qs[] = {"S.plain", "S.with,comma", "S.\"quoted\"",
                        "S.tab\there"};
    const char *vals[] = {"a \"quote\", a comma", "back\\slash \"q\"",
                          "caf\xc3\xa9 \"x\"", "ctl\x01 \"y\"",
                          "bidi\xe2\x80\xae \"z\""};
    for (int i = 0; i < 5; i++) {
        const char *q = qs[i % 4];
        lct_writer_record_begin(w, i, i, q, strlen(q));
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "s");
        lct_writer_str(w, vals[i], strlen(vals[i]));
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    run r = run_lct(NULL, "dump", "--csv", path, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    size_t len;
    char *want = read_whole_file(LCT_FIXTURES_DIR
                                 "/../golden/dump-csv-hostile.csv", &len);
    cr_assert(want);
    cr_expect_str_eq(r.out, want);
    free(want);
    run_free(&r);
    unlink(path);
    free(path);
    /* A field longer than the buffer the fast path fills at a time. */
    w = tmp_trace_writer(&path);
    static char longer[10001];
    memset(longer, 'x', 10000);
    lct_writer_record_begin(w, 0, 0, "S.long", 6);
    lct_writer_map(w, 1);
    lct_writer_cstr(w, "s");
    lct_writer_cstr(w, longer);
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    lct_writer_close(w);
    r = run_lct(NULL, "dump", "--csv", "--fields", "args", path, NULL);
    static char expect[10100];
    snprintf(expect, sizeof expect, "args\r\n\"{\"\"s\"\":\"\"%s\"\"}\"\r\n",
             longer);
    cr_expect_str_eq(r.out, expect);
    run_free(&r);
    unlink(path);
    free(path);
}

/* The CSV fast path doubles quotes sixteen bytes at a time: args whose
 * JSON is 8 to 9,000 bytes, with quotes at every place in a block
 * (strings of 0 to 6 bytes), and one with a backslash (which vis
 * escapes) after 4,096 bytes, each against the JSON line's args with
 * quotes (and backslashes) doubled by hand. */
Test(cli, dump_csv_doubles_quotes_at_every_place)
{
    enum { N = 130 };
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    for (int i = 0; i < N; i++) {
        unsigned n = i < 100 ? (unsigned)i : 900 + (unsigned)i * 3;
        lct_writer_record_begin(w, i, i, "S.q", 3);
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "s");
        lct_writer_array(w, n + 1);
        for (unsigned j = 0; j < n; j++)
            lct_writer_str(w, "abcdef", (j + (unsigned)i) % 7);
        lct_writer_cstr(w, i == N - 1 ? "back\\slash" : "end");
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    run c = run_lct(NULL, "dump", "--csv", "--fields", "args", path, NULL);
    run j = run_lct(NULL, "dump", "--fields", "args", path, NULL);
    cr_assert_eq(c.status, 0, "%s", c.err);
    cr_assert_eq(j.status, 0, "%s", j.err);
    size_t cap = 2 * strlen(j.out) + 64, at = 0;
    char *want = malloc(cap);
    at += (size_t)snprintf(want, cap, "args\r\n");
    for (const char *line = j.out; *line; line = strchr(line, '\n') + 1) {
        const char *args = line + strlen("{\"args\":");
        const char *end = strchr(line, '\n') - 1; /* the line's '}' */
        want[at++] = '"';
        for (const char *p = args; p < end; p++) {
            want[at++] = *p;
            if (*p == '"' || *p == '\\')
                want[at++] = *p;
        }
        at += (size_t)snprintf(want + at, cap - at, "\"\r\n");
    }
    cr_expect(strstr(j.out, "back\\\\slash") != NULL, "%.200s", j.out);
    cr_expect_str_eq(c.out, want);
    free(want);
    run_free(&c);
    run_free(&j);
    unlink(path);
    free(path);
}
