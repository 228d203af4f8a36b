/*
 * fuzz_sidecar.c - libFuzzer target: forged sidecar indexes (.lcti) for
 * three real traces (clean, with skipped frames, with a cut tail).
 *
 * Each input becomes the bytes of TRACE.lcti, made one of three ways
 * (its second byte says which): the trace's true sidecar with the input
 * XORed over it from a chosen offset, the input itself with the trace's
 * identity (size, mtime, inode, device, header size and hash) written
 * into its head so that it passes for the trace's, or the input as it
 * is.  The checksum at the end is then recomputed (but for one input in
 * eight), so the library trusts nothing it does not check itself: offsets
 * past the end or inside a frame, rows that step back or overlap, counts
 * past the bytes, a sidecar that says it is whole but ends early.
 *
 * Whatever the library accepts is then used as the tools use it: every
 * row read, the count, seeks to the first, middle and last records and to
 * the end, and a build that extends it.  The oracle is the trace read
 * without a sidecar: a seek must land where that reading would stand (the
 * next record the same offset, length, times and qualname, the counters
 * the same), an accepted whole sidecar must count the trace's records,
 * or the seek must be refused.  Under ASan, nothing may read out of
 * bounds.
 *
 *     make fuzz && test/fuzz/fuzz_sidecar -max_total_time=60 corpus-sc/
 */
#define _GNU_SOURCE /* mkdtemp */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lct.h"
#include "seal.h"

#ifndef LCT_FIXTURES_DIR
#error "build with -DLCT_FIXTURES_DIR=..."
#endif

#define NTRACES 3
#define MAX_RECORDS 256
#define HEAD_SIZE 128

typedef struct truth_record {
    uint64_t offset, t_mono, t_wall;
    uint32_t length;
    char qualname[128];
    size_t qlen;
} truth_record;

typedef struct trace {
    char path[4096];
    unsigned char *good; /* its true sidecar's bytes */
    size_t good_len;
    truth_record rec[MAX_RECORDS];
    uint64_t n;
    lct_stats end; /* a full read's counters */
} trace;

static trace traces[NTRACES];
static const char *const names[NTRACES] = {"clean.lct", "malformed_mixed.lct",
                                           "trunc_tail_74.lct"};

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        abort();
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
        abort();
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void spill(const char *path, const unsigned char *b, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || (n && write(fd, b, n) != (ssize_t)n) || close(fd) != 0)
        abort();
}

static void learn(trace *t, const char *dir, const char *name)
{
    char from[4096];
    snprintf(from, sizeof from, "%s/%s", LCT_FIXTURES_DIR, name);
    snprintf(t->path, sizeof t->path, "%s/%s", dir, name);
    size_t n;
    unsigned char *bytes = slurp(from, &n);
    spill(t->path, bytes, n);
    free(bytes);
    lct_reader *r;
    if (lct_open(t->path, LCT_QUIET, &r, NULL) != LCT_OK)
        abort();
    lct_record rec;
    while (lct_next(r, &rec) == 1) {
        if (t->n == MAX_RECORDS || rec.qualname.len > 127)
            abort();
        truth_record *x = &t->rec[t->n++];
        x->offset = rec.offset;
        x->length = rec.length;
        memcpy(&x->t_mono, &rec.t_mono, 8);
        memcpy(&x->t_wall, &rec.t_wall, 8);
        memcpy(x->qualname, rec.qualname.ptr, rec.qualname.len);
        x->qlen = rec.qualname.len;
    }
    lct_reader_stats(r, &t->end);
    lct_reader_rewind(r);
    lct_sidecar *s;
    char where[4096];
    if (lct_sidecar_build(r, NULL, &s, NULL) != LCT_OK ||
        lct_sidecar_save(s, r, where, sizeof where, NULL) != LCT_OK)
        abort();
    lct_sidecar_free(s);
    lct_close(r);
    t->good = slurp(where, &t->good_len);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    char tmpl[] = "/tmp/lct-fuzz-sidecar-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        abort();
    setenv("XDG_CACHE_HOME", dir, 1); /* never the user's cache */
    for (int i = 0; i < NTRACES; i++)
        learn(&traces[i], dir, names[i]);
    return 0;
}

/* The forged sidecar for this input, per its mode byte. */
static unsigned char *forge(const trace *t, unsigned mode,
                            const uint8_t *in, size_t n, size_t *out_len)
{
    unsigned char *b;
    size_t len;
    if (mode % 3 == 0) { /* the true one, the input XORed over it */
        size_t at = n >= 2 ? ((size_t)in[0] << 8 | in[1]) % t->good_len : 0;
        len = t->good_len;
        if (mode & 0x10) /* and cut, or grown */
            len = n >= 3 ? (size_t)in[2] * t->good_len / 128 : len;
        b = calloc(len ? len : 1, 1);
        if (!b)
            abort();
        memcpy(b, t->good, len < t->good_len ? len : t->good_len);
        for (size_t i = 3; i < n && at + i - 3 < len; i++)
            b[at + i - 3] ^= in[i];
    } else { /* the input as the file */
        len = n;
        b = malloc(n ? n : 1);
        if (!b)
            abort();
        memcpy(b, in, n);
        if (mode % 3 == 1 && len >= 72) /* passing for the trace's */
            memcpy(b, t->good, 72);
    }
    if ((mode & 0xe0) != 0xe0) /* one in eight keeps a wrong checksum */
        seal_sidecar(b, len);
    *out_len = len;
    return b;
}

static bool same(const truth_record *x, const lct_record *rec)
{
    uint64_t m, w;
    memcpy(&m, &rec->t_mono, 8);
    memcpy(&w, &rec->t_wall, 8);
    return x->offset == rec->offset && x->length == rec->length &&
           x->t_mono == m && x->t_wall == w && x->qlen == rec->qualname.len &&
           memcmp(x->qualname, rec->qualname.ptr, x->qlen) == 0;
}

/* Seek to record idx by the sidecar: refused, or exactly where a reading
 * from the start stands after idx records. */
static void check_seek(const trace *t, lct_reader *r, const lct_sidecar *s,
                       uint64_t idx)
{
    if (lct_reader_seek(r, s, idx, NULL) != LCT_OK) {
        lct_reader_rewind(r);
        return;
    }
    lct_stats st;
    lct_reader_stats(r, &st);
    if (st.records != idx)
        abort();
    lct_record rec;
    int got = lct_next(r, &rec);
    if (idx < t->n) {
        if (got != 1 || !same(&t->rec[idx], &rec))
            abort(); /* a wrong record, by the sidecar's word */
    } else if (got != 0) {
        abort(); /* past the trace's last record, one more */
    }
    while (lct_next(r, &rec) == 1)
        ;
    lct_reader_stats(r, &st);
    if (st.records != t->end.records || st.truncated != t->end.truncated)
        abort();
    lct_reader_rewind(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const trace *t = &traces[data[0] % NTRACES];
    size_t len;
    unsigned char *forged = forge(t, data[1], data + 2, size - 2, &len);
    char lcti[4200];
    snprintf(lcti, sizeof lcti, "%s.lcti", t->path);
    spill(lcti, forged, len);
    free(forged);
    lct_reader *r;
    if (lct_open(t->path, LCT_QUIET, &r, NULL) != LCT_OK)
        abort();
    lct_sidecar *s = NULL;
    lct_error err;
    lct_status st = lct_sidecar_load(r, &s, &err);
    if (st != LCT_OK && !err.message[0])
        abort(); /* a refusal says why */
    if (st == LCT_OK) {
        uint64_t n = lct_sidecar_count(s);
        if (lct_sidecar_whole(s) && n != t->n)
            abort(); /* a whole sidecar counts the trace's records */
        for (uint64_t i = 0; i < n; i++) {
            lct_sidecar_row row;
            if (lct_sidecar_get(s, i, &row) != LCT_OK)
                abort();
            lct_str q = lct_sidecar_qualname(s, row.qualname);
            if (q.len && !q.ptr)
                abort();
        }
        uint64_t picks[] = {0, 1, n / 2, n ? n - 1 : 0, n,
                            size > 2 ? data[2] % (n + 1) : 0};
        for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++)
            if (picks[i] <= n)
                check_seek(t, r, s, picks[i]);
        lct_sidecar *fresh = NULL;
        if (lct_sidecar_build(r, s, &fresh, NULL) == LCT_OK &&
            lct_sidecar_count(fresh) != t->n)
            abort(); /* extended from what it accepted, it counts right */
        lct_sidecar_free(fresh);
        lct_sidecar_free(s);
    }
    lct_close(r);
    return 0;
}
