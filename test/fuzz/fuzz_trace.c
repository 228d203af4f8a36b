/*
 * fuzz_trace.c - libFuzzer target: arbitrary bytes as a whole trace.
 *
 * Opens the bytes with lct_open_buffer (strict and lazy), iterates every
 * record, validates and visits every args value, renders every record and
 * the header as JSON, builds the index, runs a one-thread scan and
 * random access, and checks the reader's own accounting: every complete
 * frame is either yielded or skipped, and the scan agrees with lct_next.
 * The same bytes are then read again as a stream (LCT_STREAM over a
 * memfd): the open decision, records, skips and truncation must agree.
 * The bytes are also fed through a pipe (read with read(2), where a frame
 * its first bytes refuse is never held): the same records and the same
 * warnings, word for word, as the mapping gives; only a header the first
 * bytes refuse may be refused sooner (as malformed, not truncated).
 * Rendering must stay linear: no record's JSON may exceed 64 bytes per
 * byte of its frame (plus a constant).  Every 64th input is also written
 * to a file, and an output opened on it, on a symbolic link to it and on
 * a hard link to it must be refused (outfile_open), while an output
 * beside it must come out whole.
 * Every record's keys go to a gathered stream and to a streamed curve
 * (the prefix rule, an L1 in front for every other input): the two
 * curves must agree, totals and ratios at every capacity; the gathered
 * stream's oracleGeneral export, and that of the same stream with every
 * size at least a byte (the export's other way), must give each
 * reference's true next access.
 * The mapping's records, skips and truncation must be those of the
 * reference reader's rules as test/support/oracle.c states them.
 * Inputs holding ObjectKeys are read once more with each one's tag made
 * "ObjectKez", which the walker's ObjectKey fast path does not take: the
 * same open decision, records, skips and truncation are expected.  (Not
 * the same JSON: where the changed byte is read as an int map key, 121
 * and 122 meet different keys.  test_json compares the JSON fast path
 * with the general one on inputs built for it.)
 *
 *     make fuzz && test/fuzz/fuzz_trace -max_total_time=60 corpus/ test/fixtures/
 */
#define _GNU_SOURCE /* memfd_create, F_SETPIPE_SZ */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lct.h"
#include "oracle.h"
#include "outfile.h"

static int discard(void *ctx, const char *data, size_t len)
{
    (void)data;
    *(size_t *)ctx += len;
    return 0;
}

static int count_value(void *ctx, const lct_visit *v)
{
    (*(size_t *)ctx)++;
    return v->depth > 100000; /* never: depth is bounded by the library */
}

static int scan_count(void *state, const lct_record *rec)
{
    (*(uint64_t *)state)++;
    size_t n = 0;
    lct_value_visit(rec->args, count_value, &n);
    return 0;
}

/* What a reader made of the input, to compare sources. */
typedef struct outcome {
    int open_rc;
    lct_stats st;
    uint64_t digest; /* offsets and bodies of the records */
    uint64_t said;   /* kinds, offsets and words of the warnings */
} outcome;

static void digest_warning(void *ctx, const lct_reader *r,
                           lct_warning_kind kind, uint64_t offset,
                           const char *message)
{
    (void)r;
    uint64_t *h = ctx;
    *h = *h * 31 + (uint64_t)kind;
    *h = *h * 31 + offset;
    for (const char *c = message; *c; c++)
        *h = *h * 131 + (unsigned char)*c;
}

/* Every record of r into o: offsets and bodies, warnings, stats. */
static void read_all(lct_reader *r, outcome *o)
{
    lct_reader_set_log(r, digest_warning, &o->said);
    lct_record rec;
    while (lct_next(r, &rec) == 1) {
        o->digest = o->digest * 31 + rec.offset;
        for (size_t i = 0; i < rec.body.len; i++)
            o->digest = o->digest * 131 + rec.body.ptr[i];
    }
    lct_reader_stats(r, &o->st);
}

static void reset_count(void *state)
{
    *(uint64_t *)state = 0;
}

static void read_stream(const uint8_t *data, size_t size, outcome *o)
{
    memset(o, 0, sizeof *o);
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size)
        abort();
    lct_reader *r;
    o->open_rc = lct_open_fd(fd, "fuzz", LCT_STREAM | LCT_QUIET, &r, NULL);
    close(fd);
    if (o->open_rc != LCT_OK)
        return;
    read_all(r, o);
    lct_reader_set_log(r, NULL, NULL); /* said: lct_next's words only */
    /* The one-pass parallel scan, split three ways, agrees. */
    uint64_t counts[3] = {0, 0, 0};
    void *states[3] = {&counts[0], &counts[1], &counts[2]};
    lct_scan scan = {3, scan_count, NULL, states, reset_count};
    lct_stats pst;
    if (lct_scan_file(r, &scan, &pst, NULL) != LCT_OK ||
        pst.records != o->st.records || pst.skipped != o->st.skipped ||
        pst.truncated != o->st.truncated ||
        counts[0] + counts[1] + counts[2] != o->st.records)
        abort(); /* the split scan and lct_next disagree */
    lct_close(r);
}

/* The bytes through a pipe: read(2), no seeking, no size known. */
static bool read_pipe(const uint8_t *data, size_t size, outcome *o)
{
    memset(o, 0, sizeof *o);
    int p[2];
    if (pipe(p) != 0)
        abort();
    bool fed = fcntl(p[1], F_SETPIPE_SZ, (int)(size + 4096)) >= (int)size &&
               write(p[1], data, size) == (ssize_t)size;
    close(p[1]);
    if (!fed) { /* larger than a pipe will hold: not this time */
        close(p[0]);
        return false;
    }
    lct_reader *r;
    o->open_rc = lct_open_fd(p[0], "fuzz", LCT_QUIET, &r, NULL);
    close(p[0]);
    if (o->open_rc != LCT_OK)
        return true;
    read_all(r, o);
    lct_close(r);
    return true;
}

/* An output on the input's file, or on a link to it, is refused; one
 * beside it is written whole. */
static void outputs_never_inputs(const uint8_t *data, size_t size)
{
    char dir[] = "/tmp/lct-fuzz-XXXXXX";
    if (!mkdtemp(dir))
        return;
    char in[64], sym[64], hard[64], out[64];
    snprintf(in, sizeof in, "%s/in", dir);
    snprintf(sym, sizeof sym, "%s/sym", dir);
    snprintf(hard, sizeof hard, "%s/hard", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    FILE *f = fopen(in, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0 ||
        symlink(in, sym) != 0 || link(in, hard) != 0)
        abort();
    const char *inputs[] = {in};
    const char *bad[] = {in, sym, hard};
    outfile *o;
    for (size_t i = 0; i < 3; i++) {
        const char *also[] = {bad[i]};
        if (outfile_open(bad[i], inputs, 1, &o, NULL) != LCT_ERR_IS_INPUT ||
            outfile_open(in, also, 1, &o, NULL) != LCT_ERR_IS_INPUT)
            abort(); /* an output on an input */
    }
    if (outfile_open(out, inputs, 1, &o, NULL) != LCT_OK ||
        write(outfile_fd(o), data, size) != (ssize_t)size ||
        outfile_commit(o, NULL) != LCT_OK)
        abort();
    struct stat a, b;
    if (stat(in, &a) != 0 || stat(out, &b) != 0 || a.st_size != b.st_size ||
        (uint64_t)a.st_size != size)
        abort(); /* the input changed, or the output is not whole */
    unlink(in);
    unlink(sym);
    unlink(hard);
    unlink(out);
    rmdir(dir);
}

/* A typed accessor that fails must say why. */
static void said(lct_status st, const lct_error *err)
{
    if (st != LCT_OK && strlen(err->message) == 0)
        abort();
}

/* LMCache's typed accessors on every argument, and the key iterator:
 * whatever the bytes, they must stay inside the value and explain a
 * refusal. */
static void typed_accessors(const lct_record *rec)
{
    lct_iter it;
    lct_value k, v;
    lct_error err;
    if (lct_map_iter_init(rec->args, &it) == LCT_OK)
        while (lct_map_iter_next(&it, &k, &v) == 1) {
            lct_object_key key;
            lct_layout_desc layout;
            lct_prefetch_spec spec;
            lct_prefetch_handle handle;
            lct_attn_window attn;
            lct_str name;
            lct_value list;
            uint64_t bytes;
            err.message[0] = 0;
            lct_status st = lct_object_key_get(v, &key, &err);
            said(st, &err);
            if (st == LCT_OK)
                lct_object_key_hash(&key);
            err.message[0] = 0;
            if ((st = lct_layout_desc_get(v, &layout, &err)) == LCT_OK)
                said(lct_layout_bytes(&layout, &bytes, &err), &err);
            said(st, &err);
            err.message[0] = 0;
            if ((st = lct_prefetch_spec_get(v, &spec, &err)) == LCT_OK &&
                lct_prefetch_spec_layout(&spec, 0, &layout, NULL) == LCT_OK)
                lct_layout_bytes(&layout, &bytes, NULL);
            said(st, &err);
            lct_prefetch_handle_get(v, &handle, NULL);
            lct_prefetch_task task;
            lct_key_group group;
            err.message[0] = 0;
            said(lct_prefetch_task_get(v, &task, &err), &err);
            err.message[0] = 0;
            if ((st = lct_key_group_get(v, &group, &err)) == LCT_OK)
                lct_key_group_bytes(&group, &bytes, NULL);
            said(st, &err);
            lct_attn_window_get(v, &attn, NULL);
            lct_enum_get(v, "TrimPolicy", &name, NULL);
            lct_dtype_get(v, &name, NULL);
            lct_list_get(v, &list, NULL, NULL);
        }
    lct_key_iter keys;
    lct_object_key key;
    uint64_t bytes;
    lct_str tag;
    lct_record_unread_keys(rec, &tag);
    if (lct_key_iter_init(rec, &keys, NULL) == LCT_OK)
        while (lct_key_iter_next(&keys, &key, &bytes, NULL) == 1)
            lct_object_key_hash(&key);
}

/* The keys of every record, as lct mrc takes them: into a gathered
 * stream and a streamed curve alike. */
typedef struct curves {
    lct_refs *refs;
    lct_mrc_stream *stream;
    lct_refs *sized; /* refs again, every size at least 1 byte */
} curves;

static void curves_add(curves *c, const lct_record *rec)
{
    lct_key_iter it;
    lct_object_key key;
    uint64_t bytes;
    lct_kv_ranks ranks = {{0}, 0};
    bool any = false;
    bool read = rec->qualname.len % 3 != 0; /* some calls are writes */
    if (lct_key_iter_init(rec, &it, NULL) != LCT_OK)
        return;
    while (lct_key_iter_next(&it, &key, &bytes, NULL) == 1) {
        uint64_t id = lct_object_key_hash(&key);
        lct_kv_ranks_add(&ranks, key.kv_rank);
        if (lct_refs_add(c->refs, id, bytes, rec->t_mono, read) != LCT_OK ||
            lct_refs_add(c->sized, id, bytes ? bytes : 1, rec->t_mono,
                         read) != LCT_OK ||
            lct_mrc_stream_add(c->stream, id, bytes, read) != LCT_OK)
            abort();
        any = true;
    }
    if (any && (lct_refs_end_call(c->refs, lct_kv_ranks_count(&ranks)) !=
                    LCT_OK ||
                lct_mrc_stream_end_call(c->stream,
                                        lct_kv_ranks_count(&ranks)) != LCT_OK))
        abort();
}

/* The oracleGeneral bytes of a stream, gathered. */
typedef struct gathered {
    unsigned char *p;
    size_t n, cap;
} gathered;

static int gather(void *ctx, const char *data, size_t len)
{
    gathered *g = ctx;
    if (g->n + len > g->cap) {
        g->cap = 2 * (g->n + len);
        if (!(g->p = realloc(g->p, g->cap)))
            abort();
    }
    memcpy(g->p + g->n, data, len);
    g->n += len;
    return 0;
}

static uint64_t le64_at(const unsigned char *p)
{
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--)
        x = x << 8 | p[i];
    return x;
}

/* The export of refs: a record a reference, each one's next access the
 * 1-based position of the next record with its id, searched for here
 * one by one (on streams short enough for that). */
static gathered export_checked(const lct_refs *refs)
{
    gathered g = {NULL, 0, 0};
    if (lct_refs_write_oracle_general(refs, gather, &g, NULL, NULL) !=
        LCT_OK)
        abort();
    uint64_t n = lct_refs_count(refs);
    if (g.n != 24 * n)
        abort();
    for (uint64_t i = 0; n <= 2000 && i < n; i++) {
        uint64_t id = le64_at(g.p + 24 * i + 4), j = i + 1;
        while (j < n && le64_at(g.p + 24 * j + 4) != id)
            j++;
        if (le64_at(g.p + 24 * i + 16) != (j < n ? j + 1 : UINT64_MAX))
            abort(); /* a wrong next access */
    }
    return g;
}

/* The export finds next accesses by one map when every reference has a
 * size, else by key numbers: the same ids, so the same next accesses. */
static void exports_check(const curves *c)
{
    gathered a = export_checked(c->refs), b = export_checked(c->sized);
    if (a.n != b.n)
        abort();
    for (size_t at = 0; at < a.n; at += 24)
        if (memcmp(a.p + at + 4, b.p + at + 4, 8) != 0 ||
            memcmp(a.p + at + 16, b.p + at + 16, 8) != 0)
            abort(); /* the two ways disagree */
    free(a.p);
    free(b.p);
}

static void curves_check(curves *c, bool l1)
{
    exports_check(c);
    lct_mrc_options o = {.sample_rate = 1, .prefix = true};
    lct_refs *l2 = NULL;
    lct_l1_stats want, got;
    lct_mrc *g, *m;
    if (l1 && (lct_refs_new(&l2) != LCT_OK ||
               lct_refs_behind_l1(c->refs, 3, false, l2, &want, NULL) !=
                   LCT_OK))
        abort();
    if (lct_mrc_compute_with(l1 ? l2 : c->refs, &o, &g, NULL) != LCT_OK ||
        lct_mrc_stream_finish(c->stream, &m, NULL) != LCT_OK)
        abort();
    if (l1 && (lct_mrc_stream_l1_stats(c->stream, &got) != LCT_OK ||
               memcmp(&want, &got, sizeof want) != 0))
        abort(); /* the L1 did not do what the gathered L1 did */
    lct_mrc_totals a, b;
    lct_mrc_totals_get(g, &a);
    lct_mrc_totals_get(m, &b);
    if (memcmp(&a, &b, sizeof a) != 0)
        abort(); /* the streamed curve is not the gathered one */
    for (uint64_t k = 0; k <= lct_mrc_max_distance(g) + 1; k++)
        if (lct_mrc_hit_ratio(g, k) != lct_mrc_hit_ratio(m, k) ||
            lct_mrc_position_hit_ratio(g, k) !=
                lct_mrc_position_hit_ratio(m, k) ||
            lct_mrc_byte_hit_ratio(g, k * a.max_key_bytes / 2) !=
                lct_mrc_byte_hit_ratio(m, k * a.max_key_bytes / 2))
            abort();
    lct_mrc_free(g);
    lct_mrc_free(m);
    lct_refs_free(l2);
}

static void run(const uint8_t *data, size_t size, unsigned flags,
                outcome *o)
{
    lct_reader *r;
    lct_error err;
    memset(o, 0, sizeof *o);
    o->open_rc =
        lct_open_buffer(data, size, "fuzz", flags | LCT_QUIET, &r, &err);
    if (o->open_rc != LCT_OK) {
        if (strlen(err.message) == 0)
            abort(); /* every refusal must say why */
        return;
    }
    lct_reader_set_log(r, digest_warning, &o->said);
    size_t out = 0;
    lct_header_write_json(lct_reader_header(r), discard, &out);
    if (out > 64 * lct_reader_header(r)->size + 1024)
        abort(); /* the header's JSON is not linear in its bytes */
    lct_record rec;
    uint64_t yielded = 0;
    curves cv = {NULL, NULL, NULL};
    lct_mrc_options prefix = {.sample_rate = 1, .prefix = true};
    bool l1 = size % 2 == 1;
    if (lct_refs_new(&cv.refs) != LCT_OK ||
        lct_refs_new(&cv.sized) != LCT_OK ||
        lct_mrc_stream_new(&prefix, &cv.stream, NULL) != LCT_OK ||
        (l1 && lct_mrc_stream_behind_l1(cv.stream, 3, false, NULL) != LCT_OK))
        abort();
    while (lct_next(r, &rec) == 1) {
        yielded++;
        curves_add(&cv, &rec);
        o->digest = o->digest * 31 + rec.offset;
        for (size_t i = 0; i < rec.body.len; i++)
            o->digest = o->digest * 131 + rec.body.ptr[i];
        size_t values = 0;
        lct_value_validate(rec.args, NULL);
        lct_value_visit(rec.args, count_value, &values);
        out = 0;
        lct_record_write_json(&rec, discard, &out);
        if (out > 64 * (size_t)rec.length + 1024)
            abort(); /* a record's JSON is not linear in its bytes */
        lct_value tmp;
        lct_map_find(rec.args, "keys", &tmp);
        lct_value_codec(rec.args, NULL, NULL);
        typed_accessors(&rec);
        if (rec.offset + 4 + rec.length > size)
            abort(); /* a record outside the input */
    }
    curves_check(&cv, l1);
    lct_mrc_stream_free(cv.stream);
    lct_refs_free(cv.refs);
    lct_refs_free(cv.sized);
    lct_stats st;
    lct_reader_stats(r, &st);
    lct_reader_set_log(r, NULL, NULL); /* said: lct_next's words only */
    if (st.records != yielded || st.bytes_read > size)
        abort();
    o->st = st;

    lct_index *idx;
    if (lct_index_build(r, &idx, NULL) == LCT_OK) {
        if (lct_index_count(idx) != st.records + st.skipped)
            abort(); /* every complete frame yielded or skipped */
        uint64_t scanned = 0;
        void *states[1] = {&scanned};
        lct_scan scan = {1, scan_count, NULL, states, NULL};
        lct_stats sst;
        if (lct_scan_run(idx, &scan, &sst, NULL) == LCT_OK &&
            (sst.records != st.records || sst.skipped != st.skipped ||
             sst.truncated != st.truncated || scanned != st.records))
            abort(); /* the scan and lct_next disagree */
        for (uint64_t i = 0; i < lct_index_count(idx) && i < 64; i++) {
            lct_record at;
            int by_index = lct_index_record(idx, i, &rec, NULL);
            int by_offset = lct_record_at(r, lct_index_offset(idx, i), &at,
                                          NULL);
            if (by_index != by_offset ||
                (by_index == 1 && at.offset != rec.offset))
                abort(); /* a frame by its offset, as by its index */
        }
        /* Any offset at all: an answer, never a crash. */
        for (uint64_t off = 0; off < size && off < 256; off += 7)
            (void)lct_record_at(r, off, &rec, NULL);
        lct_index_free(idx);
    }
    lct_close(r);
}

/* The same records, skips and cut tail (not compared: how the open
 * went, and the bytes and words of what was read). */
static bool same_counts(const outcome *a, const outcome *b)
{
    return a->st.records == b->st.records && a->st.skipped == b->st.skipped &&
           a->st.truncated == b->st.truncated &&
           a->st.truncated_offset == b->st.truncated_offset;
}

static bool same_answers(const outcome *a, const outcome *b)
{
    return a->open_rc == b->open_rc && same_counts(a, b);
}

/* Another reading of the same bytes gave the same records, word for word
 * the same warnings, and the same counts. */
static bool same_reading(const outcome *a, const outcome *b)
{
    return a->digest == b->digest && a->said == b->said && same_counts(a, b);
}

/*
 * The input with every ObjectKey opening ("__t__" then "ObjectKey" in a
 * two-pair map) that lies inside one frame's body made "ObjectKez": same
 * length, same framing; the changed byte is a fixint of its own or inside
 * a str/bin/ext payload whose header comes before the opening (no float,
 * int or timestamp header is among the bytes before it), so validity
 * cannot change and only the fast path can tell the two apart.
 */
static void compare_with_twin(const uint8_t *data, size_t size,
                              const outcome *mapped, const outcome *lazy)
{
    static const char opening[] = "\x82\xa5__t__\xa9ObjectKey\xa1v";
    const size_t n = sizeof opening - 1, y = 16;
    uint8_t *twin = malloc(size);
    if (!twin)
        return;
    memcpy(twin, data, size);
    for (size_t at = 0; size - at >= 4;) { /* frame by frame */
        size_t len = (size_t)data[at] << 24 | (size_t)data[at + 1] << 16 |
                     (size_t)data[at + 2] << 8 | data[at + 3];
        size_t body = at + 4;
        size_t end = len <= size - body ? body + len : size;
        for (uint8_t *k = twin + body;
             (k = memmem(k, end - (size_t)(k - twin), opening, n)) != NULL;
             k += n)
            k[y] = 'z';
        at = end;
    }
    outcome t_mapped, t_lazy;
    run(twin, size, 0, &t_mapped);
    run(twin, size, LCT_LAZY, &t_lazy);
    if (!same_answers(mapped, &t_mapped) || !same_answers(lazy, &t_lazy))
        abort(); /* a fast path answered differently */
    free(twin);
}

/* An L2-level trace's replay plan and run on the null backend: done, or
 * refused with a message (a hostile task id, index or footer included),
 * never a crash, a hang or a read past the input. */
static void l2_replay_survives(const uint8_t *data, size_t size)
{
    lct_reader *r;
    if (lct_open_buffer(data, size, "fuzz", LCT_QUIET, &r, NULL) != LCT_OK)
        return;
    if (!lct_str_eq(lct_reader_header(r)->level, "l2")) {
        lct_close(r);
        return;
    }
    const lct_backend_ops *ops = lct_backend_null();
    lct_backend_config cfg = {.workers = 1};
    void *state;
    if (ops->open("", &cfg, &state, NULL) != LCT_OK)
        abort();
    lct_l2_replay_options o = {.adapter = -1, .workers = 1, .prepare = true};
    lct_l2_replay_report rep;
    lct_error err = {0};
    lct_status st = lct_l2_replay_run(r, ops, state, &o, &rep, &err);
    if (st != LCT_OK && !err.message[0])
        abort(); /* refused without a word */
    if (st == LCT_OK && rep.operations_selected > rep.source_operations_total)
        abort();
    ops->close(state);
    lct_close(r);
}

/* The mapping yields what the reference reader's rules yield
 * (test/support/oracle.c, written plainly and sharing no code with
 * lib/): the same open decision, the same records at the same offsets,
 * the same skips and the same stop at a partial frame; with LCT_KEYS
 * (the walk then notes keys for the key layer) as without. */
static void agrees_with_oracle(const uint8_t *d, size_t n)
{
    uint64_t *want = malloc((n / 5 + 1) * sizeof *want);
    if (!want)
        return;
    oracle_reading o;
    oracle_trace(d, n, want, &o);
    static const unsigned flag_sets[] = {0, LCT_KEYS};
    for (size_t f = 0; f < 2; f++) {
        lct_reader *r;
        int rc = lct_open_buffer(d, n, "fuzz", flag_sets[f] | LCT_QUIET, &r,
                                 NULL);
        if (rc != o.open_rc)
            abort(); /* opened or refused otherwise than the reference */
        if (rc != LCT_OK)
            continue;
        lct_record rec;
        size_t got = 0;
        while (lct_next(r, &rec) == 1) {
            if (got == o.records || rec.offset != want[got])
                abort(); /* a record the reference does not yield */
            got++;
        }
        lct_stats st;
        lct_reader_stats(r, &st);
        if (got != o.records || st.skipped != o.skipped ||
            st.truncated != o.truncated)
            abort(); /* a record missed, or skips or the end otherwise */
        lct_close(r);
    }
    free(want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so reading one byte past the input is caught. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    agrees_with_oracle(copy, size);
    outcome mapped, lazy, streamed;
    run(copy, size, 0, &mapped);
    run(copy, size, LCT_LAZY, &lazy);
    read_stream(copy, size, &streamed);
    if (streamed.open_rc != mapped.open_rc ||
        streamed.st.bytes_read != mapped.st.bytes_read ||
        !same_reading(&streamed, &mapped))
        abort(); /* the stream and the buffer disagree */
    outcome piped;
    if (read_pipe(copy, size, &piped)) {
        bool refused_sooner = mapped.open_rc == LCT_ERR_TRUNCATED &&
                              piped.open_rc == LCT_ERR_MALFORMED;
        if ((piped.open_rc != mapped.open_rc && !refused_sooner) ||
            !same_reading(&piped, &mapped))
            abort(); /* the pipe and the buffer disagree */
    }
    static unsigned calls;
    if (calls++ % 64 == 0)
        outputs_never_inputs(copy, size);
    if (memmem(copy, size, "ObjectKey", 9))
        compare_with_twin(copy, size, &mapped, &lazy);
    if (memmem(copy, size, "l2", 2))
        l2_replay_survives(copy, size);
    free(copy);
    return 0;
}
