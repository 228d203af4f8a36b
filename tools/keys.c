/*
 * keys.c - the key reference stream of a trace, shared by `lct keys` and
 * `lct mrc`: which calls are reads (lookups) and writes (stores), and
 * every ObjectKey those records carry, in trace order, with what it
 * weighs (lib/lmcache.c does the decoding).
 */
#include "tool.h"
#include "keys.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void tool_keyops_init(tool_keyops *o, int argc)
{
    memset(o, 0, sizeof *o);
    tool_patterns *sets[] = {&o->read, &o->write, &o->only};
    for (int i = 0; i < 3; i++) {
        sets[i]->text = reallocarray(NULL, (size_t)argc + 1, sizeof(char *));
        sets[i]->hits = calloc((size_t)argc + 1, sizeof(uint64_t));
        if (!sets[i]->text || !sets[i]->hits)
            tool_usage_error(NULL, "out of memory");
    }
}

void tool_keyops_add(tool_keyops *o, bool write, const char *pattern)
{
    tool_patterns *p = write ? &o->write : &o->read;
    p->text[p->n++] = pattern;
}

bool tool_keyops_select(tool_keyops *o, const char *cmd, int c,
                        const char *arg)
{
    if (c == TOOL_OPT_QUALNAME_VAL)
        o->only.text[o->only.n++] = arg;
    else if (c == TOOL_OPT_SINCE_VAL || c == TOOL_OPT_UNTIL_VAL)
        tool_window_set(&o->window, cmd, c == TOOL_OPT_UNTIL_VAL, arg);
    else if (c == TOOL_OPT_RANGE_VAL)
        tool_range_set(&o->range, cmd, arg);
    else if (c == TOOL_OPT_READ_VAL || c == TOOL_OPT_WRITE_VAL)
        tool_keyops_add(o, c == TOOL_OPT_WRITE_VAL, arg);
    else
        return false;
    return true;
}

void tool_keys_parse(const char *name, const struct option *own,
                     void (*on_option)(void *, int, const char *), void *ctx,
                     void (*help)(void), tool_keyops *ops, int argc,
                     char **argv, tool_args *a)
{
    tool_keyops_init(ops, argc);
    tool_cmd cmd = {.name = name,
                    .shared = TOOL_Q | TOOL_J | TOOL_CSV | TOOL_JSON |
                              TOOL_SRC,
                    .own = own, .on_option = on_option, .ctx = ctx,
                    .help = help, .min_operands = 1};
    tool_parse_args(&cmd, argc, argv, a);
}

void tool_keyops_defaults(tool_keyops *o, lct_str level)
{
    bool l2 = lct_str_eq(level, "l2");
    if (o->read.n == 0)
        tool_keyops_add(o, false, l2 ? LCT_KEYS_L2_READ_CALL
                                     : LCT_KEYS_READ_CALL);
    if (o->write.n == 0)
        tool_keyops_add(o, true, l2 ? LCT_KEYS_L2_WRITE_CALL
                                    : LCT_KEYS_WRITE_CALL);
}

bool tool_keys_start(const char *cmd, const char *out_opt,
                     const char *out_path, const tool_args *a, tool_keyops *o,
                     outfile **out, tool_inputs *in)
{
    *out = NULL;
    if (out_path && !(*out = tool_output_open(cmd, out_opt, out_path, a))) {
        tool_keyops_free(o);
        return false;
    }
    /* every record's keys are read right after it (lct_key_iter_init) */
    if (!tool_inputs_open(in, a, tool_source_flags(a) | LCT_KEYS, true)) {
        outfile_abort(*out);
        tool_keyops_free(o);
        return false;
    }
    tool_inputs_one_file(in, cmd, "--range", o->range.set);
    tool_keyops_defaults(o, lct_reader_header(in->r)->level);
    return true;
}

void tool_keyops_free(tool_keyops *o)
{
    free(o->read.text);
    free(o->read.hits);
    free(o->write.text);
    free(o->write.hits);
    free(o->only.text);
    free(o->only.hits);
}

void tool_keyops_report(const tool_keyops *o, const char *cmd)
{
    tool_patterns_report(&o->read, cmd, "--read");
    tool_patterns_report(&o->write, cmd, "--write");
    tool_patterns_report(&o->only, cmd, "--qualname");
    if (o->unread) {
        fprintf(stderr, "%s %s: %" PRIu64 " records hold ObjectKeys under "
                "types this version does not read: ", tool_name, cmd,
                o->unread);
        tool_put_vis(stderr, o->unread_tag, strlen(o->unread_tag));
        fputc('\n', stderr);
    }
}

/* Count a record whose keys sit under a type the library does not read,
 * keeping the first such type's name.  Asked only of records that gave
 * no key: a record whose keys were read has not contributed nothing. */
static void note_unread(const lct_record *rec, uint64_t *count, char *tag,
                        size_t tagsz)
{
    lct_str t;
    if (!lct_record_unread_keys(rec, &t))
        return;
    if ((*count)++ == 0)
        snprintf(tag, tagsz, "%.*s", (int)(t.len < 63 ? t.len : 63), t.ptr);
}

/* Count into hits[i] each pattern of p that selects q; whether any did.
 * A record a --read pattern takes is still counted for --write's. */
static bool count_matches(const tool_patterns *p, lct_str q, uint64_t *hits)
{
    bool any = false;
    for (size_t i = 0; i < p->n; i++) {
        tool_patterns one = {&p->text[i], NULL, 1};
        if (tool_qualname_selects(&one, q)) {
            hits[i]++;
            any = true;
        }
    }
    return any;
}

/* Which patterns of each side matched a qualname seen before: a trace
 * has a few qualnames, and matching every pattern again (a strlen, a
 * strpbrk and a suffix compare each) would cost more than the rest of a
 * record's selection.  A qualname longer than an entry, or more than 64 patterns a
 * side, goes without. */
#define MEMO_ENTRIES 8
#define MEMO_NAME 112

typedef struct qual_memo {
    struct {
        unsigned char len; /* 0: empty */
        char name[MEMO_NAME];
        uint64_t matched[3]; /* read, write, only: bit i for pattern i */
    } e[MEMO_ENTRIES];
    unsigned next; /* the entry replaced next */
} qual_memo;

/* The patterns of p (at most 64) that select q, bit i for pattern i. */
static uint64_t matched_bits(const tool_patterns *p, lct_str q)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < p->n; i++) {
        tool_patterns one = {&p->text[i], NULL, 1};
        if (tool_qualname_selects(&one, q))
            bits |= (uint64_t)1 << i;
    }
    return bits;
}

/* The patterns of each side that select q: remembered, or matched now
 * and remembered.  False when the memo cannot hold them. */
static bool memo_matches(qual_memo *m, const tool_keyops *o, lct_str q,
                         uint64_t matched[3])
{
    if (!m || q.len == 0 || q.len > MEMO_NAME || o->read.n > 64 ||
        o->write.n > 64 || o->only.n > 64)
        return false;
    for (unsigned i = 0; i < MEMO_ENTRIES; i++)
        if (m->e[i].len == q.len && memcmp(m->e[i].name, q.ptr, q.len) == 0) {
            memcpy(matched, m->e[i].matched, sizeof m->e[i].matched);
            return true;
        }
    matched[0] = matched_bits(&o->read, q);
    matched[1] = matched_bits(&o->write, q);
    matched[2] = matched_bits(&o->only, q);
    unsigned slot = m->next++ % MEMO_ENTRIES;
    m->e[slot].len = (unsigned char)q.len;
    memcpy(m->e[slot].name, q.ptr, q.len);
    memcpy(m->e[slot].matched, matched, sizeof m->e[slot].matched);
    return true;
}

/* count_matches for one side of a call: from the patterns' bits when
 * the memo had them (known), else by matching q now. */
static inline bool side_matches(bool known, uint64_t bits, const tool_patterns *p,
                         lct_str q, uint64_t *hits)
{
    if (!known)
        return count_matches(p, q, hits);
    for (uint64_t b = bits; b; b &= b - 1)
        hits[__builtin_ctzll(b)]++;
    return bits != 0;
}

/* Which op a call is (read patterns first), counting the patterns that
 * matched it into read_hits and write_hits, for the report. */
static tool_key_op classify(const tool_keyops *o, const lct_record *rec,
                            uint64_t *read_hits, uint64_t *write_hits,
                            uint64_t *only_hits, qual_memo *memo)
{
    lct_str qualname = rec->qualname;
    if (!tool_window_holds(&o->window, rec))
        return TOOL_KEY_NONE;
    uint64_t m[3] = {0, 0, 0};
    bool known = memo_matches(memo, o, qualname, m);
    if (o->only.n &&
        !side_matches(known, m[2], &o->only, qualname, only_hits))
        return TOOL_KEY_NONE;
    /* Both sides count what they match, so a pattern that --read also
     * takes (read first) is not reported as matching nothing. */
    bool read = side_matches(known, m[0], &o->read, qualname, read_hits);
    bool write = side_matches(known, m[1], &o->write, qualname, write_hits);
    if (read)
        return TOOL_KEY_READ;
    if (write)
        return o->lookups_only ? TOOL_KEY_NONE : TOOL_KEY_WRITE;
    return o->all ? TOOL_KEY_OTHER : TOOL_KEY_NONE;
}

/* A record whose keys cannot be read: said with its offset, skipped. */
static void bad_keys(const lct_reader *r, const lct_record *rec,
                     const char *cmd, const lct_error *err)
{
    const char *path = lct_reader_path(r);
    fprintf(stderr, "%s %s: WARNING: ", tool_name, cmd);
    tool_put_vis(stderr, path, strlen(path));
    fprintf(stderr, ": record at offset %" PRIu64 ": keys not read: ",
            rec->offset);
    tool_put_message(stderr, err->message);
    fputc('\n', stderr);
}

/* Give fn every key of rec: how many, or -1 when fn said stop. */
static long record_keys(lct_reader *r, const lct_record *rec, uint64_t idx,
                        tool_key_op op, const char *cmd, tool_key_fn fn,
                        void *ctx)
{
    lct_key_iter it;
    lct_error err;
    lct_object_key key;
    uint64_t bytes;
    if (lct_key_iter_init(rec, &it, &err) != LCT_OK) {
        bad_keys(r, rec, cmd, &err);
        return 0;
    }
    int rc;
    long given = 0;
    while ((rc = lct_key_iter_next(&it, &key, &bytes, &err)) == 1) {
        if (fn(ctx, rec, idx, op, &key, bytes) != 0)
            return -1;
        given++;
    }
    if (rc < 0)
        bad_keys(r, rec, cmd, &err);
    return given;
}

bool tool_keys_walk(tool_inputs *in, tool_keyops *o, const char *cmd,
                    tool_key_fn fn, void *ctx)
{
    lct_record rec;
    uint64_t idx = 0;
    qual_memo memo = {0};
    tool_range_start(&o->range, in->r, cmd, tool_quiet, false);
    tool_progress progress;
    tool_inputs_progress_start(&progress, in, false);
    for (; tool_inputs_next(in, &rec, NULL) == 1; idx++) {
        tool_inputs_progress(&progress, in);
        if (tool_range_done(&o->range, idx))
            break;
        if (!tool_range_holds(&o->range, idx))
            continue;
        tool_key_op op = classify(o, &rec, o->read.hits, o->write.hits,
                                  o->only.hits, &memo);
        if (op == TOOL_KEY_NONE)
            continue;
        long given = record_keys(in->current, &rec, idx, op, cmd, fn, ctx);
        if (given == 0 && o->keyless && fn(ctx, &rec, idx, op, NULL, 0))
            break;
        if (given < 0)
            break;
        if (given == 0) /* only then: looking costs a walk of the args */
            note_unread(&rec, &o->unread, o->unread_tag,
                        sizeof o->unread_tag);
    }
    tool_progress_end(&progress);
    return tool_inputs_whole(in);
}

const char *tool_key_op_name(tool_key_op op, lct_str qualname, size_t *len)
{
    static const char *names[] = {"", "read", "write"};
    const char *l2 = lct_l2_key_op(qualname);
    if (l2) {
        *len = strlen(l2);
        return l2;
    }
    if (op == TOOL_KEY_OTHER) {
        *len = qualname.len;
        return qualname.ptr;
    }
    *len = strlen(names[op]);
    return names[op];
}

/* MARK: gathering the stream on several threads */

/* What every thread reads and none writes, for one run (the tool runs
 * one command per process). */
static struct {
    tool_keyops *ops;
    const char *cmd;
    tool_inputs *inputs; /* its current reader names a record's file */
} shared;

/* One thread's state (tool_records zeroes it, and again after a reset):
 * its references in file order, and how many records each pattern
 * matched (the read patterns' counts, then the write patterns'). */
typedef struct keys_lane {
    lct_refs *refs;
    uint64_t *hits;
    bool failed;
    uint64_t unread; /* as tool_keyops's */
    char unread_tag[64];
    uint64_t idx; /* records seen: their numbers, when one thread reads */
    /* Under the prefix rule, the record's keys held until it ends, to be
     * handed on chunk after chunk (its chunk positions). */
    lct_call_fold *fold;
    qual_memo memo;
} keys_lane;

/* Every key of rec to the lane's call (the prefix rule), stream or
 * references, as ids a batch at a time (a noted list hashed where it
 * lies).  How many, or -1 when memory ran out. */
static long lane_keys(keys_lane *l, const lct_record *rec, bool read)
{
    lct_key_iter it;
    lct_error err;
    if (lct_key_iter_init(rec, &it, &err) != LCT_OK) {
        bad_keys(shared.inputs->current, rec, shared.cmd, &err);
        return 0;
    }
    const tool_keyops *o = shared.ops;
    lct_key_id keys[64];
    long n, given = 0;
    while ((n = lct_key_iter_next_ids(&it, keys, 64, &err)) > 0) {
        for (long i = 0; i < n; i++) {
            const lct_key_id *k = &keys[i];
            if ((o->calls    ? lct_call_fold_add_id(l->fold, k, rec->t_mono,
                                                    read)
                 : o->stream ? lct_mrc_stream_add(o->stream, k->id,
                                                  k->bytes, read)
                             : lct_refs_add(l->refs, k->id, k->bytes,
                                            rec->t_mono, read)) != LCT_OK) {
                l->failed = true;
                return -1;
            }
        }
        given += n;
    }
    if (n < 0)
        bad_keys(shared.inputs->current, rec, shared.cmd, &err);
    return given;
}

static int lane_record(void *state, const lct_record *rec)
{
    keys_lane *l = state;
    const tool_keyops *o = shared.ops;
    if ((!l->refs && (lct_refs_new(&l->refs) != LCT_OK ||
                      (o->sample_rate > 0 &&
                       lct_refs_sample(l->refs, o->sample_rate, o->sample_seed,
                                       o->samples) != LCT_OK))) ||
        (!l->hits &&
         !(l->hits = calloc(o->read.n + o->write.n + o->only.n + 1,
                            sizeof *l->hits))) ||
        (o->calls && !l->fold && lct_call_fold_new(&l->fold) != LCT_OK)) {
        l->failed = true;
        return 1;
    }
    if (!tool_range_holds(&o->range, l->idx++))
        return 0;
    tool_key_op op = classify(o, rec, l->hits, l->hits + o->read.n,
                              l->hits + o->read.n + o->write.n, &l->memo);
    if (op == TOOL_KEY_NONE)
        return 0;
    long given = lane_keys(l, rec, op == TOOL_KEY_READ);
    if (given == 0)
        note_unread(rec, &l->unread, l->unread_tag, sizeof l->unread_tag);
    if (given > 0 && o->calls &&
        (o->stream ? lct_call_fold_to_stream(l->fold, o->stream)
                   : lct_call_fold_to_refs(l->fold, l->refs)) != LCT_OK)
        l->failed = true;
    return given < 0 || l->failed ? 1 : 0;
}

static void lane_reset(void *state)
{
    keys_lane *l = state;
    lct_refs_free(l->refs);
    lct_call_fold_free(l->fold);
    free(l->hits);
}

bool tool_keys_collect(tool_inputs *in, tool_keyops *o, const char *cmd,
                       const tool_args *a, lct_refs *out, bool *whole)
{
    shared.ops = o;
    shared.cmd = cmd;
    shared.inputs = in;
    tool_range_start(&o->range, in->r, cmd, a->quiet, false);
    tool_run run;
    /* Record numbers are known only in order, and a streaming curve
     * takes references in order: one thread. */
    bool one = o->range.set || o->stream;
    bool ok = tool_records_in(in, one ? 1 : a->jobs, a->quiet, sizeof(keys_lane),
                           lane_record, lane_reset,
                           a->quiet ? tool_log_quiet : tool_log, NULL, &run);
    for (unsigned t = 0; t < run.nstates; t++) {
        keys_lane *l = tool_run_state(&run, t);
        ok = ok && !l->failed &&
             (!l->refs || lct_refs_append(out, l->refs) == LCT_OK);
        for (size_t i = 0; l->hits && i < o->read.n; i++)
            o->read.hits[i] += l->hits[i];
        for (size_t i = 0; l->hits && i < o->write.n; i++)
            o->write.hits[i] += l->hits[o->read.n + i];
        for (size_t i = 0; l->hits && i < o->only.n; i++)
            o->only.hits[i] += l->hits[o->read.n + o->write.n + i];
        if (l->unread && !o->unread) /* the first type, in file order */
            memcpy(o->unread_tag, l->unread_tag, sizeof o->unread_tag);
        o->unread += l->unread;
        lane_reset(l);
    }
    *whole = !run.stats.skipped && !run.stats.truncated && !run.stats.shrank;
    tool_run_free(&run);
    return ok;
}

int tool_keys_finish(tool_inputs *in, tool_keyops *o, const char *cmd,
                     bool quiet, bool ok, bool whole)
{
    if (!quiet)
        tool_keyops_report(o, cmd);
    lct_stats st;
    tool_inputs_stats(in, &st);
    tool_keyops_free(o);
    tool_inputs_close(in);
    tool_finish_stdout();
    return !ok || st.shrank ? EXIT_REFUSED : whole ? EXIT_OK : EXIT_DAMAGED;
}
