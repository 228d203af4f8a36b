/*
 * test_cli_info.c - the lct tool run as a program: info against the text
 * `lmcache trace info` prints (derived here from each fixture's
 * expectation, by the rules in docs/format.md), and check's exit codes.
 * What every test_cli_*.c shares (running the tool, the fixtures, JSON
 * equality) is in test/support/cli.c.
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

#include "cli.h"
#include "cpus.h"
#include "files.h"
#include "lct.h"
#include "json.h"
#include "mpw.h"
#include "run.h"

/* These tests wait on other processes: a regression that hangs one
 * fails it instead of stalling the run. */
TestSuite(cli, .timeout = 300);

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

/* MARK: info */

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

/* A header whose level_meta is a map of n pairs, written by the caller
 * into *body after this returns it begun. */
static void begin_level_meta(mpw *body, uint32_t n)
{
    mpw_init(body);
    mpw_std_header(body);
    body->buf[0] = 0x8a; /* one more pair: level_meta */
    mpw_str(body, "level_meta");
    mpw_map(body, n);
}

/* `lct info` of the trace of that header alone prints each wanted line. */
static void info_prints(mpw *body, const char *const *want, size_t n)
{
    mpw file;
    mpw_init(&file);
    mpw_frame(&file, body);
    char *path = tmp_file_with(file.buf, file.len);
    run r = run_lct(NULL, "info", path, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    for (size_t i = 0; i < n; i++)
        cr_expect(strstr(r.out, want[i]), "missing %s in:\n%s", want[i], r.out);
    run_free(&r);
    unlink(path);
    free(path);
    mpw_free(&file);
    mpw_free(body);
}

/* level_meta values print as Python's str() of the decoded value. */
Test(cli, info_prints_level_meta_as_python_does)
{
    mpw body;
    begin_level_meta(&body, 8);
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
    info_prints(&body, want, sizeof want / sizeof *want);
}

/* Inside a repr, a str escapes what Python's str.isprintable() calls not
 * printable (Unicode 14.0, as Python 3.11 has it), as Python prints
 * them: \xNN up to U+00FF, \uNNNN, \UNNNNNNNN; a top-level str prints
 * as is.  The wanted line is Python's own str() of the list (but for the
 * last str, which no Python str can be). */
Test(cli, info_escapes_in_a_repr_what_python_does_not_print)
{
    static const char *const strs[] = {
        "x\xc2\xa0y",       /* U+00A0, a space (Zs) */
        "\xc2\xad",         /* U+00AD soft hyphen (Cf) */
        "\xcd\xb8",         /* U+0378, unassigned (Cn) */
        "\xe2\x80\x8b",     /* U+200B (Cf) */
        "\xe2\x80\xa8",     /* U+2028 (Zl) */
        "\xe3\x80\x80",     /* U+3000 (Zs) */
        "\xee\x80\x80",     /* U+E000, private use (Co) */
        "\xf3\xa0\x80\x81", /* U+E0001 (Cf) */
        "\xc3\xa9\x65\xcc\x81", /* e-acute, e and a combining acute: printed */
        "\xf0\x9f\x98\x80", /* U+1F600: printed */
        "\xc2\x85\x7f",     /* C1 and DEL */
        /* not UTF-8 (level_meta is stepped over when read, not checked):
         * each such byte escaped, so a lone 0x9b (an 8-bit CSI) never
         * reaches the terminal */
        "\x9b\x33\x31m\xff", /* 0x9b, "31m", 0xff */
    };
    size_t n = sizeof strs / sizeof *strs;
    mpw body;
    begin_level_meta(&body, 2);
    mpw_str(&body, "a");
    mpw_array(&body, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        mpw_str(&body, strs[i]);
    mpw_str(&body, "b");
    mpw_str(&body, strs[0]);
    const char *want[] = {
        "  a:                          ['x\\xa0y', '\\xad', '\\u0378', "
        "'\\u200b', '\\u2028', '\\u3000', '\\ue000', '\\U000e0001', "
        "'\xc3\xa9\x65\xcc\x81', '\xf0\x9f\x98\x80', '\\x85\\x7f', "
        "'\\x9b31m\\xff']\n",
        "  b:                          x\xc2\xa0y\n",
    };
    info_prints(&body, want, sizeof want / sizeof *want);
}

/* What msgspec decodes, printed as Python prints it: a float's shortest
 * digits even below a power of two, where the gap to the double under it
 * is half the gap above (Python's repr of 2^-1017 is
 * 7.120236347223045e-307; the nearest 16-digit decimal does not read
 * back, the next one up does); an array as a map's key is a tuple (at any
 * depth inside the key); keys equal as Python values are one dict entry,
 * the first key in its place with the last value (1, True, 1.0; 0 and
 * -0.0), while each NaN is a key of its own; and a datetime at the top is
 * its str(), not its repr. */
Test(cli, info_prints_level_meta_values_as_python_decodes_them)
{
    mpw body;
    begin_level_meta(&body, 5);
    mpw_str(&body, "a");
    mpw_array(&body, 3);
    mpw_f64(&body, ldexp(1, -1017));
    mpw_f64(&body, ldexp(1, -957));
    mpw_f64(&body, ldexp(1, 60));
    mpw_str(&body, "b");
    mpw_map(&body, 4);
    mpw_array(&body, 2); mpw_int(&body, 1); mpw_int(&body, 2); mpw_str(&body, "t");
    mpw_array(&body, 0); mpw_int(&body, 1);
    mpw_array(&body, 1); mpw_array(&body, 1); mpw_int(&body, 1); mpw_int(&body, 2);
    mpw_array(&body, 1); mpw_nil(&body); mpw_array(&body, 1); mpw_int(&body, 3);
    mpw_str(&body, "c");
    mpw_map(&body, 8);
    mpw_int(&body, 1); mpw_str(&body, "x");
    mpw_bool(&body, true); mpw_str(&body, "y");
    mpw_f64(&body, 0.0); mpw_str(&body, "o");
    mpw_f64(&body, 1.0); mpw_str(&body, "z");
    mpw_f64(&body, NAN); mpw_int(&body, 1);
    mpw_f64(&body, -0.0); mpw_str(&body, "p");
    mpw_f64(&body, NAN); mpw_int(&body, 2);
    mpw_int(&body, 2); mpw_str(&body, "w");
    mpw_str(&body, "d");
    mpw_ext(&body, -1, "\x5e\x0b\xe1\x00", 4); /* 2020-01-01 */
    mpw_str(&body, "e");
    /* 2020-01-01, 123,456,000 ns: nanoseconds << 34 | seconds */
    mpw_ext(&body, -1, "\x1d\x6f\x28\x00\x5e\x0b\xe1\x00", 8);
    const char *want[] = {
        "  a:                          [7.120236347223045e-307, "
        "8.209073602596753e-289, 1.152921504606847e+18]\n",
        "  b:                          {(1, 2): 't', (): 1, ((1,),): 2, "
        "(None,): [3]}\n",
        "  c:                          {1: 'z', 0.0: 'p', nan: 1, nan: 2, "
        "2: 'w'}\n",
        "  d:                          2020-01-01 00:00:00+00:00\n",
        "  e:                          2020-01-01 00:00:00.123456+00:00\n",
    };
    info_prints(&body, want, sizeof want / sizeof *want);
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
