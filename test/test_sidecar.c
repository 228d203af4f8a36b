/*
 * test_sidecar.c - the sidecar index against the reader it stands for:
 * its rows are the records lct_next yields on every fixture and on a
 * damaged trace; a seek to record k leaves the reader as reading k
 * records would (the next record, the counters, the warnings); a sidecar
 * that is stale, for another file or damaged is refused and says so; one
 * for a trace that grew serves its prefix and is extended to what a new
 * one would be; one that cannot go beside its trace goes to the cache
 * directory; a file at its name that is not a sidecar is not replaced.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "seal.h"

#define LCT_FIXTURES LCT_FIXTURES_DIR

static unsigned nwarned;
static char warned[64][200];
static void keep_warning(void *ctx, const lct_reader *r,
                         lct_warning_kind kind, uint64_t offset,
                         const char *message)
{
    (void)ctx, (void)r, (void)kind, (void)offset;
    if (nwarned < 64)
        snprintf(warned[nwarned], sizeof warned[0], "%s", message);
    nwarned++;
}

static lct_reader *open_quiet(const char *path, unsigned flags)
{
    lct_reader *r;
    if (lct_open(path, flags, &r, NULL) != LCT_OK)
        return NULL;
    lct_reader_set_log(r, keep_warning, NULL);
    return r;
}

static void remove_sidecar(const char *path)
{
    char side[PATH_MAX];
    snprintf(side, sizeof side, "%s.lcti", path);
    unlink(side);
}

static lct_sidecar *build_and_save(const char *path)
{
    lct_reader *r = open_quiet(path, 0);
    cr_assert(r, "%s", path);
    lct_sidecar *s;
    lct_error err;
    cr_assert_eq(lct_sidecar_build(r, NULL, &s, &err), LCT_OK, "%s",
                 err.message);
    cr_assert_eq(lct_sidecar_save(s, r, NULL, 0, &err), LCT_OK, "%s",
                 err.message);
    lct_close(r);
    return s;
}

/* The rows are the records, and a seek to each k is reading k. */
static void check_against_reader(const char *path, unsigned flags)
{
    lct_sidecar *built = build_and_save(path);
    lct_reader *r = open_quiet(path, flags);
    lct_sidecar *s;
    lct_error err;
    cr_assert_eq(lct_sidecar_load(r, &s, &err), LCT_OK, "%s: %s", path,
                 err.message);
    cr_expect(lct_sidecar_whole(s));
    cr_expect_eq(lct_sidecar_count(s), lct_sidecar_count(built));
    lct_record rec;
    uint64_t k = 0;
    nwarned = 0;
    while (lct_next(r, &rec) == 1) {
        lct_sidecar_row row;
        cr_assert_eq(lct_sidecar_get(s, k, &row), LCT_OK, "%s %llu", path,
                     (unsigned long long)k);
        cr_expect_eq(row.offset, rec.offset);
        cr_expect(row.t_mono == rec.t_mono ||
                  (row.t_mono != row.t_mono && rec.t_mono != rec.t_mono));
        cr_expect(row.t_wall == rec.t_wall ||
                  (row.t_wall != row.t_wall && rec.t_wall != rec.t_wall));
        lct_str q = lct_sidecar_qualname(s, row.qualname);
        cr_expect(q.len == rec.qualname.len &&
                  memcmp(q.ptr, rec.qualname.ptr, q.len) == 0);
        k++;
    }
    cr_expect_eq(k, lct_sidecar_count(s), "%s", path);
    unsigned all_warnings = nwarned;
    lct_stats whole;
    lct_reader_stats(r, &whole);
    /* seek to every k (and the end): the same next record, counters and
     * the warnings of the skips before it */
    for (uint64_t at = 0; at <= k; at++) {
        lct_reader_rewind(r);
        nwarned = 0;
        for (uint64_t i = 0; i < at; i++)
            cr_assert_eq(lct_next(r, &rec), 1);
        lct_stats want;
        lct_reader_stats(r, &want);
        unsigned want_warned = nwarned;
        int want_next = lct_next(r, &rec);
        uint64_t want_offset = want_next == 1 ? rec.offset : 0;
        nwarned = 0;
        cr_assert_eq(lct_reader_seek(r, s, at, &err), LCT_OK, "%s",
                     err.message);
        lct_stats got;
        lct_reader_stats(r, &got);
        cr_expect_eq(got.records, want.records, "%s at %llu", path,
                     (unsigned long long)at);
        cr_expect_eq(got.skipped, want.skipped, "%s at %llu", path,
                     (unsigned long long)at);
        cr_expect_eq(nwarned, want_warned, "%s at %llu: warnings", path,
                     (unsigned long long)at);
        cr_expect_eq(lct_next(r, &rec), want_next);
        if (want_next == 1)
            cr_expect_eq(rec.offset, want_offset);
    }
    /* read on from a seek to the end of what was read: the tail */
    cr_expect_geq(all_warnings, whole.skipped);
    lct_sidecar_free(s);
    lct_sidecar_free(built);
    lct_close(r);
    remove_sidecar(path);
}

/* A copy of a fixture in a temporary file (sidecars go beside it). */
static char *copy_of(const char *name)
{
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/%s", LCT_FIXTURES, name);
    size_t n;
    char *data = read_whole_file(src, &n);
    cr_assert(data, "%s", src);
    char *path = tmp_file_with(data, n);
    free(data);
    return path;
}

Test(sidecar, rows_and_seeks_equal_the_reader_on_every_fixture)
{
    DIR *d = opendir(LCT_FIXTURES);
    cr_assert(d);
    struct dirent *e;
    unsigned tried = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".lct") != 0)
            continue;
        char *path = copy_of(e->d_name);
        lct_reader *r = open_quiet(path, 0);
        if (r) { /* a refused header has no records to index */
            lct_close(r);
            check_against_reader(path, 0);
            check_against_reader(path, LCT_STREAM);
            tried++;
        }
        unlink(path);
        free(path);
    }
    closedir(d);
    cr_expect_geq(tried, 8);
}

static char *small_trace(unsigned n)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    for (unsigned i = 0; i < n; i++) {
        lct_writer_record_begin(w, i * 0.5, 1000 + i, "S.call", 6);
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "i");
        lct_writer_int(w, i);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    return path;
}

static lct_status load(const char *path, lct_sidecar **s, lct_error *err)
{
    lct_reader *r = open_quiet(path, 0);
    cr_assert(r);
    lct_status st = lct_sidecar_load(r, s, err);
    lct_close(r);
    return st;
}

Test(sidecar, stale_other_and_damaged_sidecars_are_refused)
{
    char *path = small_trace(50);
    lct_sidecar_free(build_and_save(path));
    lct_sidecar *s;
    lct_error err;
    cr_assert_eq(load(path, &s, &err), LCT_OK, "%s", err.message);
    lct_sidecar_free(s);
    char side[PATH_MAX];
    snprintf(side, sizeof side, "%s.lcti", path);
    size_t n;
    char *bytes = read_whole_file(side, &n);
    cr_assert(bytes);

    /* damaged: one byte changed, or cut short */
    for (int cut = 0; cut < 2; cut++) {
        FILE *f = fopen(side, "wb");
        bytes[n / 2] ^= cut ? 0 : 0x40;
        fwrite(bytes, 1, cut ? n - 9 : n, f);
        bytes[n / 2] ^= cut ? 0 : 0x40;
        fclose(f);
        cr_expect_eq(load(path, &s, &err), LCT_ERR_MALFORMED);
        cr_expect(strstr(err.message, "is damaged"), "%s", err.message);
        cr_expect(strstr(err.message, side), "%s", err.message);
    }

    /* for another file: the trace's bytes and sidecar under other names */
    size_t tn;
    char *trace = read_whole_file(path, &tn);
    char *other = tmp_file_with(trace, tn);
    char other_side[PATH_MAX];
    snprintf(other_side, sizeof other_side, "%s.lcti", other);
    FILE *f = fopen(other_side, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
    cr_expect_eq(load(other, &s, &err), LCT_ERR_CHANGED);
    cr_expect(strstr(err.message, "another file"), "%s", err.message);

    /* stale: the trace's last frame rewritten in place, then cut short */
    f = fopen(side, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
    f = fopen(path, "r+b");
    fseek(f, (long)tn - 3, SEEK_SET);
    fputc('Z', f);
    fclose(f);
    cr_expect_eq(load(path, &s, &err), LCT_ERR_CHANGED);
    cr_expect(strstr(err.message, "stale"), "%s", err.message);
    cr_assert_eq(truncate(path, (off_t)tn - 200), 0);
    cr_expect_eq(load(path, &s, &err), LCT_ERR_CHANGED);

    /* none */
    unlink(side);
    cr_expect_eq(load(path, &s, &err), LCT_ERR_NOT_FOUND);
    unlink(other_side);
    unlink(other);
    unlink(path);
    free(other);
    free(trace);
    free(bytes);
    free(path);
}

static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The sidecar bytes, changed by `forge`, sealed with a checksum that
 * matches, written back; what loading then says. */
static lct_status load_forged(const char *path, const unsigned char *good,
                              size_t n, void (*forge)(unsigned char *),
                              lct_sidecar **s, lct_error *err)
{
    char side[PATH_MAX];
    snprintf(side, sizeof side, "%s.lcti", path);
    unsigned char *b = malloc(n);
    cr_assert(b);
    memcpy(b, good, n);
    forge(b);
    seal_sidecar(b, n);
    FILE *f = fopen(side, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    fclose(f);
    free(b);
    return load(path, s, err);
}

#define ROW(b, i) ((b) + 128 + 32 * (i))
static void huge_skip_count(unsigned char *b) { put_le64(b + 96, UINT64_MAX / 2); }
static void row_mid_frame(unsigned char *b) { put_le64(ROW(b, 5), get_le64(ROW(b, 5)) + 1); }
static void rows_step_back(unsigned char *b)
{
    unsigned char t[32];
    memcpy(t, ROW(b, 3), 32);
    memcpy(ROW(b, 3), ROW(b, 4), 32);
    memcpy(ROW(b, 4), t, 32);
}
static void ends_early(unsigned char *b)
{
    put_le64(b + 8, get_le64(b + 8) + 100); /* "indexed" a longer trace */
}
static void unchanged(unsigned char *b) { (void)b; }
static void row_time(unsigned char *b)
{
    double t = 1e9;
    memcpy(ROW(b, 9) + 8, &t, 8);
}

/* Forged sidecars, their checksums recomputed: the counts, order, tiling
 * and end are checked, a crash-free refusal each (a huge skip count made
 * the refusal free a NULL array: fuzz_sidecar); a row that tiles but
 * whose frame is not the trace's is found by the seek that lands past it,
 * which then reads from the start. */
Test(sidecar, forged_sidecars_are_refused_or_found_out)
{
    char *path = small_trace(50);
    lct_sidecar_free(build_and_save(path));
    char side[PATH_MAX];
    snprintf(side, sizeof side, "%s.lcti", path);
    size_t n;
    unsigned char *good = (unsigned char *)read_whole_file(side, &n);
    cr_assert(good);
    lct_sidecar *s;
    lct_error err;
    void (*damaged[])(unsigned char *) = {huge_skip_count, row_mid_frame,
                                          rows_step_back, ends_early};
    for (size_t i = 0; i < sizeof damaged / sizeof damaged[0]; i++) {
        cr_expect_eq(load_forged(path, good, n, damaged[i], &s, &err),
                     LCT_ERR_MALFORMED,
                     "forgery %zu: %s", i, err.message);
    }
    cr_assert_eq(load_forged(path, good, n, unchanged, &s, &err), LCT_OK,
                 "%s", err.message);
    lct_sidecar_free(s);
    cr_assert_eq(load_forged(path, good, n, row_time, &s, &err), LCT_OK,
                 "%s", err.message);
    lct_reader *r = open_quiet(path, 0);
    cr_assert_eq(lct_reader_seek(r, s, 5, &err), LCT_OK, "%s", err.message);
    cr_expect_eq(lct_reader_seek(r, s, 10, &err), LCT_ERR_CHANGED);
    cr_expect(strstr(err.message, "record 9 is not the trace's frame"), "%s",
              err.message);
    lct_record rec;
    cr_assert_eq(lct_next(r, &rec), 1);
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect_eq(st.records, 1, "read from the start after the refusal");
    lct_close(r);
    lct_sidecar_free(s);
    unlink(side);
    unlink(path);
    free(good);
    free(path);
}

Test(sidecar, a_trace_that_grew_is_served_then_extended)
{
    char *path = small_trace(30);
    lct_sidecar_free(build_and_save(path));
    lct_writer *w;
    cr_assert_eq(lct_writer_open(path, true, &w, NULL), LCT_OK);
    for (int i = 0; i < 20; i++) {
        lct_writer_record_begin(w, 100 + i, 2000 + i, "S.more", 6);
        lct_writer_map(w, 0);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    lct_reader *r = open_quiet(path, 0);
    lct_sidecar *old, *grown, *fresh;
    lct_error err;
    cr_assert_eq(lct_sidecar_load(r, &old, &err), LCT_OK, "%s", err.message);
    cr_expect(!lct_sidecar_whole(old));
    cr_expect_eq(lct_sidecar_count(old), 30);
    /* the prefix serves seeks */
    lct_record rec;
    cr_assert_eq(lct_reader_seek(r, old, 29, &err), LCT_OK);
    cr_assert_eq(lct_next(r, &rec), 1);
    cr_expect(lct_str_eq(rec.qualname, "S.call"));
    cr_assert_eq(lct_next(r, &rec), 1);
    cr_expect(lct_str_eq(rec.qualname, "S.more"));
    cr_assert_eq(lct_sidecar_build(r, old, &grown, &err), LCT_OK, "%s",
                 err.message);
    cr_assert_eq(lct_sidecar_build(r, NULL, &fresh, &err), LCT_OK);
    cr_expect_eq(lct_sidecar_count(grown), 50);
    for (uint64_t i = 0; i < 50; i++) {
        lct_sidecar_row a, b;
        lct_sidecar_get(grown, i, &a);
        lct_sidecar_get(fresh, i, &b);
        cr_expect_eq(a.offset, b.offset);
        cr_expect(lct_str_eq(lct_sidecar_qualname(grown, a.qualname),
                             i < 30 ? "S.call" : "S.more"));
    }
    cr_assert_eq(lct_sidecar_save(grown, r, NULL, 0, &err), LCT_OK);
    lct_sidecar *again;
    cr_assert_eq(lct_sidecar_load(r, &again, &err), LCT_OK);
    cr_expect(lct_sidecar_whole(again));
    lct_sidecar_free(again);
    lct_sidecar_free(old);
    lct_sidecar_free(grown);
    lct_sidecar_free(fresh);
    lct_close(r);
    remove_sidecar(path);
    unlink(path);
    free(path);
}

/* A trace whose PATH.lcti cannot be made beside it: the cache directory
 * ($XDG_CACHE_HOME/lct) takes it, and loading finds it there. */
static void check_cache_fallback(const char *dir, const char *path)
{
    char cache[PATH_MAX];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    lct_reader *r = open_quiet(path, 0);
    cr_assert(r, "%s", path);
    lct_sidecar *s, *back;
    lct_error err;
    char where[PATH_MAX];
    cr_assert_eq(lct_sidecar_build(r, NULL, &s, &err), LCT_OK);
    cr_assert_eq(lct_sidecar_save(s, r, where, sizeof where, &err), LCT_OK,
                 "%s", err.message);
    cr_expect(strncmp(where, cache, strlen(cache)) == 0, "went to %s",
              where);
    cr_assert_eq(lct_sidecar_load(r, &back, &err), LCT_OK, "%s",
                 err.message);
    cr_expect_eq(lct_sidecar_count(back), lct_sidecar_count(s));
    lct_sidecar_free(s);
    lct_sidecar_free(back);
    lct_close(r);
    unlink(where);
    unsetenv("XDG_CACHE_HOME");
}

Test(sidecar, a_directory_that_cannot_be_written_sends_it_to_the_cache)
{
    char dir[] = "/tmp/lct-sidecar-XXXXXX";
    cr_assert(mkdtemp(dir));
    char *src = small_trace(10);
    size_t n;
    char *bytes = read_whole_file(src, &n);
    /* a name so long that NAME.lcti is past NAME_MAX */
    char path[PATH_MAX];
    int len = snprintf(path, sizeof path, "%s/", dir);
    memset(path + len, 'x', 252);
    path[len + 252] = '\0';
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    fwrite(bytes, 1, n, f);
    fclose(f);
    check_cache_fallback(dir, path);
    unlink(path);
    /* a read-only directory (root may write there anyway: then only the
     * long name above is tried) */
    char ro[PATH_MAX], trace[PATH_MAX + 16];
    snprintf(ro, sizeof ro, "%s/ro", dir);
    snprintf(trace, sizeof trace, "%s/t.lct", ro);
    mkdir(ro, 0755);
    f = fopen(trace, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
    if (geteuid() != 0) {
        chmod(ro, 0555);
        check_cache_fallback(dir, trace);
        chmod(ro, 0755);
    }
    unlink(trace);
    rmdir(ro);
    char cache[PATH_MAX];
    snprintf(cache, sizeof cache, "%s/cache/lct", dir);
    rmdir(cache);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    rmdir(cache);
    cr_expect_eq(rmdir(dir), 0, "left behind in %s", dir);
    unlink(src);
    free(src);
    free(bytes);
}

Test(sidecar, a_file_that_is_not_a_sidecar_is_not_replaced)
{
    char *path = small_trace(5);
    char side[PATH_MAX];
    snprintf(side, sizeof side, "%s.lcti", path);
    FILE *f = fopen(side, "wb");
    fputs("someone's notes", f);
    fclose(f);
    lct_reader *r = open_quiet(path, 0);
    lct_sidecar *s;
    lct_error err;
    cr_assert_eq(lct_sidecar_build(r, NULL, &s, &err), LCT_OK);
    cr_expect_eq(lct_sidecar_save(s, r, NULL, 0, &err), LCT_ERR_SYS);
    cr_expect(strstr(err.message, "not a sidecar"), "%s", err.message);
    char *kept = read_whole_file(side, NULL);
    cr_expect_str_eq(kept, "someone's notes");
    free(kept);
    lct_sidecar_free(s);
    lct_close(r);
    unlink(side);
    unlink(path);
    free(path);
}
