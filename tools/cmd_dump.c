/*
 * cmd_dump.c - `lct dump`: one JSON object per record per line (JSONL),
 * rendered by the library (lct_record_write_json), with filters.
 *
 * Long because the sequential and the parallel renderer share dump's
 * filters, field selection and line writers, which no other command
 * uses; as two files they would call each other.
 */
#include "tool.h"
#include "dump.h"

#include <signal.h>
#include <time.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void help(void)
{
    printf("usage: lct dump [OPTIONS] FILE...\n"
           "\n"
           "Print every record as one JSON object per line:\n"
           "  {\"offset\":N,\"t_mono\":F,\"t_wall\":F,\"qualname\":\"...\",\"args\":{...}}\n"
           "FILE may be -.  Several FILEs are merged by t_wall (ties: the\n"
           "file given first, then file order) and each line starts with\n"
           "\"file\":NAME; records keep their own t_mono, idx counts the\n"
           "merged records, and --at, --range, -f, --header and --csv take\n"
           "one FILE.\n"
           "\n"
           "  --header            print the header as a first JSON line\n"
           "  --qualname NAME     only records of this qualname: the exact name,\n"
           "                      a suffix after a dot (submit_prefetch_task),\n"
           "                      or a shell glob (repeatable: any match)\n"
           "  --since T           only records with t_mono >= T seconds, or\n"
           "                      t_wall >= T for a UTC time (2026-12-01T10:00:00Z)\n"
           "  --until T           only records with t_mono (t_wall) <= T\n"
           "  -n, --limit N       stop after N records printed\n"
           "  --unwrap            print codec wrappers {\"__t__\":T,\"v\":V} as V\n"
           "  --bin hex|base64    how bin values print (default base64)\n"
           "  --range A:B         records A to before B by number, from 0\n"
           "                      (Python's slices: -5: is the last five)\n"
           "  --at OFFSET         the frame at this file offset (as warnings\n"
           "                      name them), even one that would be skipped\n"
           "  --fields LIST       only these fields, in this order (any of\n"
           "                      offset,idx,t_mono,t_wall,qualname,args;\n"
           "                      idx is the record number from 0)\n"
           "  --lazy              skip args validation (faster; may print\n"
           "                      records the reference reader would skip)\n"
           "  -f, --follow        keep printing records as they are appended,\n"
           "                      as tail(1) follows a name, until stopped; waits for\n"
           "                      a file that is not there yet or empty\n"
           "  --from-end          with -f: only records appended from now on\n"
           "  --csv               CSV with a header line instead: the --fields\n"
           "                      (default offset,t_mono,t_wall,qualname,args;\n"
           "                      args as JSON text in one cell)\n"
           "  -q                  no warnings on stderr\n"
           "  -j N                render on N threads, a batch of records at a\n"
           "                      time, printed in file order (default: one per\n"
           "                      usable CPU for files of 64 MiB or more); the\n"
           "                      file is then mapped.  One thread for --range,\n"
           "                      --fields idx, -f and --stream\n"
           "  --mmap, --stream    how to read a file "
           "(default: the faster here)\n"
           "  --max-frame SIZE    the longest frame a pipe may hold (256M)\n"
           "  -h, --help          this text\n");
}

/* One record's JSON, gathered before it is written: if the file shrank
 * while the record was rendered, the line is dropped, not printed. */
typedef tool_buf line;

/* The record without its args, which could not be rendered:
 * {"offset":..,"t_mono":..,"t_wall":..,"qualname":"..","args":null,
 *  "args_error":"..."}. */
static int args_dropped(const lct_record *rec, int why, line *out)
{
    char head[96];
    char mono[LCT_DOUBLE_BUFSIZE], wall[LCT_DOUBLE_BUFSIZE];
    lct_json_format_double(rec->t_mono, mono);
    lct_json_format_double(rec->t_wall, wall);
    int n = snprintf(head, sizeof head,
                     "{\"offset\":%llu,\"t_mono\":%s,\"t_wall\":%s,"
                     "\"qualname\":",
                     (unsigned long long)rec->offset, mono, wall);
    if (tool_buf_write(out, head, (size_t)n) != 0 ||
        lct_json_write_string(rec->qualname.ptr, rec->qualname.len,
                              tool_buf_write, out) != LCT_OK ||
        tool_buf_write(out, ",\"args\":null,\"args_error\":", 26) != 0)
        return LCT_ERR_NOMEM;
    const char *text = lct_strerror(why);
    if (lct_json_write_string(text, strlen(text), tool_buf_write, out) !=
            LCT_OK ||
        tool_buf_write(out, "}", 1) != 0)
        return LCT_ERR_NOMEM;
    return LCT_OK;
}


/* --lazy args that cannot be rendered, said on stderr with how the
 * record was printed instead. */
static void say_args_dropped(const lct_reader *r, const lct_record *rec,
                             int why, const char *printed)
{
    fprintf(stderr, "%s: ", tool_name);
    const char *path = lct_reader_path(r);
    tool_put_vis(stderr, path, strlen(path));
    fprintf(stderr, ": record at offset %llu: args cannot be rendered (%s); "
                    "printed %s\n",
            (unsigned long long)rec->offset, lct_strerror(why), printed);
}

/* What dump's own options asked for. */
typedef struct dump_opts {
    bool header, lazy, follow, from_end;
    tool_window window;
    long long limit; /* -1: no limit */
    bool project;
    tool_fields fields; /* --fields, when project */
    tool_patterns qualnames;
    unsigned json; /* LCT_JSON_UNWRAP, LCT_JSON_BIN_HEX */
    const char *at; /* --at OFFSET */
    tool_range range;
    bool csv; /* --csv: the fields as CSV columns, args as JSON text */
    /* Several files: `{"file":NAME,` of the record's file, which takes
     * the place of its line's opening brace. */
    const line *file_member;
} dump_opts;

enum {
    OPT_HEADER = 300,
    OPT_QUALNAME,
    OPT_SINCE,
    OPT_UNTIL,
    OPT_LAZY,
    OPT_FIELDS,
    OPT_UNWRAP,
    OPT_BIN,
    OPT_AT,
    OPT_RANGE,
    OPT_FROM_END
};

static void dump_option(void *ctx, int c, const char *arg)
{
    dump_opts *o = ctx;
    switch (c) {
    case OPT_HEADER: o->header = true; break;
    case OPT_QUALNAME: o->qualnames.text[o->qualnames.n++] = arg; break;
    case OPT_UNWRAP: o->json |= LCT_JSON_UNWRAP; break;
    case OPT_AT: o->at = arg; break;
    case OPT_FROM_END: o->from_end = true; break;
    case OPT_RANGE: tool_range_set(&o->range, "dump", arg); break;
    case OPT_BIN:
        if (strcmp(arg, "hex") == 0)
            o->json |= LCT_JSON_BIN_HEX;
        else if (strcmp(arg, "base64") == 0)
            o->json &= ~(unsigned)LCT_JSON_BIN_HEX;
        else
            tool_usage_error("dump", "--bin is hex or base64, not '%s'", arg);
        break;
    case OPT_SINCE:
        tool_window_set(&o->window, "dump", false, arg);
        break;
    case OPT_UNTIL:
        tool_window_set(&o->window, "dump", true, arg);
        break;
    case 'n': o->limit = tool_parse_count("dump", "--limit", arg); break;
    case OPT_LAZY: o->lazy = true; break;
    case OPT_FIELDS:
        if (!tool_fields_parse(arg, &o->fields))
            tool_usage_error("dump", "--fields '%s': a comma-separated list "
                             "of offset, idx, t_mono, t_wall, qualname, args",
                             arg);
        o->project = true;
        break;
    case 'f': o->follow = true; break;
    default: break; /* getopt returns only the options listed */
    }
}

static bool wanted(dump_opts *o, const lct_record *rec)
{
    return tool_window_holds(&o->window, rec) &&
           tool_qualname_wanted(&o->qualnames, rec->qualname);
}

/* The fields --csv prints when --fields does not say. */
static const tool_fields csv_default_fields = {
    5, {TOOL_FIELD_OFFSET, TOOL_FIELD_T_MONO, TOOL_FIELD_T_WALL,
        TOOL_FIELD_QUALNAME, TOOL_FIELD_ARGS}};

/* --csv: one record as one row of its fields, args as JSON text in one
 * cell.  Args are rendered into out first and the row printed only when
 * the record is still intact (a shrink drops the row whole). */
static lct_status csv_row(lct_reader *r, const dump_opts *o,
                          const lct_record *rec, uint64_t idx,
                          bool render_args, line *out, FILE *f)
{
    const tool_fields *fl = o->project ? &o->fields : &csv_default_fields;
    for (unsigned i = 0; i < fl->n && render_args; i++)
        if (fl->order[i] == TOOL_FIELD_ARGS) {
            lct_status rc = lct_value_write_json_opts(rec->args, o->json,
                                                      tool_buf_write, out);
            if (rc != LCT_OK)
                return rc;
        }
    if (!lct_record_intact(r, rec))
        return LCT_ERR_CHANGED;
    char buf[LCT_DOUBLE_BUFSIZE];
    for (unsigned i = 0; i < fl->n; i++) {
        if (i)
            fputc(',', f);
        switch (fl->order[i]) {
        case TOOL_FIELD_OFFSET:
            fprintf(f, "%llu", (unsigned long long)rec->offset);
            break;
        case TOOL_FIELD_IDX:
            fprintf(f, "%llu", (unsigned long long)idx);
            break;
        case TOOL_FIELD_T_MONO:
        case TOOL_FIELD_T_WALL:
            fwrite(buf, 1,
                   lct_json_format_double(fl->order[i] == TOOL_FIELD_T_MONO
                                              ? rec->t_mono
                                              : rec->t_wall,
                                          buf),
                   f);
            break;
        case TOOL_FIELD_QUALNAME:
            tool_put_csv(f, rec->qualname.ptr, rec->qualname.len);
            break;
        default:
            tool_put_csv(f, out->buf, out->len);
            break;
        }
    }
    fputs("\r\n", f); /* RFC 4180, as every --csv */
    return LCT_OK;
}

/* --csv's header line: the names of the fields it prints. */
static void csv_header(const dump_opts *o)
{
    const tool_fields *fl = o->project ? &o->fields : &csv_default_fields;
    for (unsigned i = 0; i < fl->n; i++)
        printf("%s%s", i ? "," : "", tool_field_name(fl->order[i]));
    fputs("\r\n", stdout);
}

/* Put the file's member first in a JSON object line: {"file":NAME, then
 * the object's own members (no comma before an empty object's end). */
static int name_file(line *out, const line *member)
{
    if (out->len < 2 || out->buf[0] != '{')
        return 0;
    size_t m = member->len - (out->buf[1] == '}' ? 1 : 0);
    size_t rest = out->len - 1; /* after the '{' it replaces */
    if (tool_buf_write(out, member->buf, m - 1) != 0)
        return -1;
    memmove(out->buf + m, out->buf + 1, rest);
    memcpy(out->buf, member->buf, m);
    return 0;
}

/* One record as one line on f; EXIT_OK, EXIT_DAMAGED (args dropped,
 * said on stderr), EXIT_REFUSED (out of memory), or -1 to stop quietly
 * (the file shrank under the record, or f failed: reported later). */
static int print_record(lct_reader *r, const dump_opts *o,
                        const lct_record *rec, uint64_t idx, line *out,
                        FILE *f)
{
    out->len = 0;
    int rc = EXIT_OK;
    if (o->csv) {
        lct_status crc = csv_row(r, o, rec, idx, true, out, f);
        if (crc == LCT_ERR_CHANGED)
            return -1;
        if (crc == LCT_ERR_SYS) {
            fprintf(stderr, "%s: out of memory\n", tool_name);
            return EXIT_REFUSED;
        }
        if (crc == LCT_OK)
            return ferror(f) ? -1 : EXIT_OK;
        /* --lazy args that cannot be rendered: a row with empty args */
        out->len = 0;
        say_args_dropped(r, rec, crc, "empty");
        return csv_row(r, o, rec, idx, false, out, f) == LCT_OK
                   ? EXIT_DAMAGED
                   : -1;
    }
    lct_status wrc =
        o->project
            ? tool_fields_write(&o->fields, rec, idx, o->json,
                                tool_buf_write, out)
            : lct_record_write_json_opts(rec, o->json, tool_buf_write, out);
    if (!lct_record_intact(r, rec))
        return -1;
    if (wrc == LCT_ERR_SYS) {
        fprintf(stderr, "%s: out of memory\n", tool_name);
        return EXIT_REFUSED;
    }
    if (wrc != LCT_OK) {
        /* Only reachable under --lazy: args that cannot be rendered.
         * The line stays one whole JSON object, saying what it lacks. */
        out->len = 0;
        if (args_dropped(rec, wrc, out) != LCT_OK) {
            fprintf(stderr, "%s: out of memory\n", tool_name);
            return EXIT_REFUSED;
        }
        say_args_dropped(r, rec, wrc, "as null");
        rc = EXIT_DAMAGED;
    }
    if (o->file_member && name_file(out, o->file_member) != 0) {
        fprintf(stderr, "%s: out of memory\n", tool_name);
        return EXIT_REFUSED;
    }
    /* the newline joins the line: one stdio call a record */
    if (tool_buf_write(out, "\n", 1) != 0) {
        fprintf(stderr, "%s: out of memory\n", tool_name);
        return EXIT_REFUSED;
    }
    if (f == stdout ? tool_stdout_write(NULL, out->buf, out->len) != 0
                    : fwrite(out->buf, 1, out->len, f) != out->len)
        return -1;
    return rc;
}

/* --at prints the one frame at an offset: options that choose among
 * records mean nothing with it, and are refused rather than ignored. */
static void at_alone(const dump_opts *o)
{
    const char *other = !o->at                       ? NULL
                        : o->limit >= 0              ? "-n"
                        : o->range.set               ? "--range"
                        : o->window.since.set        ? "--since"
                        : o->window.until.set        ? "--until"
                        : o->follow                  ? "--follow"
                        : o->qualnames.n             ? "--qualname"
                                                     : NULL;
    if (other)
        tool_usage_error("dump", "--at and %s mean nothing together: --at "
                         "prints the one frame at an offset", other);
}

/* How stdout is buffered: by line when following a pipe, else in large
 * pieces. */
static void buffer_stdout(dump_opts *o, const tool_args *a)
{
    /* Standard input is streamed: records are read as their frames
     * arrive, so following a pipe only means printing each line at once. */
    if (o->follow && strcmp(a->file, "-") == 0) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        o->follow = false;
    } else if (!o->follow) {
        /* Lines by the thousand: write(2) them in large pieces. */
        static char out_buf[256 * 1024];
        setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
    }
}

/* --csv prints rows of fields: what is not a row means nothing with it. */
static void refuse_with_csv(const dump_opts *o)
{
    if (o->csv && o->header)
        tool_usage_error("dump", "--header and --csv mean nothing together: "
                         "the header is one JSON object (lct info --csv)");
    if (o->csv && o->at)
        tool_usage_error("dump", "--at and --csv mean nothing together: --at "
                         "prints one frame as JSON");
}

/* print_record's status folded into the run's: false to stop (-1 quietly,
 * EXIT_REFUSED with it), else a damaged record's EXIT_DAMAGED kept. */
static bool fold_status(int one, int *rc)
{
    if (one < 0 || one == EXIT_REFUSED) {
        *rc = one < 0 ? *rc : one;
        return false;
    }
    if (one != EXIT_OK)
        *rc = one;
    return true;
}

/* Every wanted record, until the end (or, following, an interrupt). */
static int print_records(lct_reader *r, dump_opts *o, bool quiet)
{
    tool_progress progress;
    tool_progress_start(&progress, r, quiet || o->follow);
    lct_record rec;
    long long printed = 0;
    /* Record number, wanted or not, counting those already passed
     * (--from-end): the number a plain dump gives the same record. */
    lct_stats before;
    lct_reader_stats(r, &before);
    uint64_t idx = before.records;
    int rc = EXIT_OK;
    line out = {NULL, 0, 0};
    for (; (o->limit < 0 || printed < o->limit) && !tool_interrupted; idx++) {
        if (lct_next(r, &rec) != 1) {
            if (!o->follow || !tool_wait_for_more(r))
                break;
            idx--;
            continue;
        }
        tool_progress_update(&progress, r);
        if (tool_range_done(&o->range, idx))
            break;
        if (!tool_range_holds(&o->range, idx) || !wanted(o, &rec))
            continue;
        int one = print_record(r, o, &rec, idx, &out, stdout);
        if (!fold_status(one, &rc))
            break;
        printed++;
    }
    tool_progress_end(&progress);
    free(out.buf);
    return rc;
}

/* MARK: several files on one timeline */

/* Refuse what needs one file: a frame by offset, record numbers taken
 * from the file's index, following it, its one header, or CSV rows
 * (which would need a column for the file). */
static void merged_alone(const dump_opts *o)
{
    const char *one = o->at          ? "--at"
                      : o->range.set ? "--range"
                      : o->follow    ? "--follow"
                      : o->from_end  ? "--from-end"
                      : o->header    ? "--header"
                      : o->csv       ? "--csv"
                                     : NULL;
    if (one)
        tool_usage_error("dump", "%s works on one FILE, not on several "
                         "merged", one);
}

/* Every wanted record of the merge, each line naming its file. */
static int print_merged(tool_inputs *in, dump_opts *o, bool quiet)
{
    line *names = calloc(in->n, sizeof *names);
    bool ok = names != NULL;
    for (size_t i = 0; ok && i < in->n; i++) {
        const char *path = lct_reader_path(in->readers[i]);
        ok = tool_buf_write(&names[i], "{\"file\":", 8) == 0 &&
             lct_json_write_string(path, strlen(path), tool_buf_write,
                                   &names[i]) == LCT_OK &&
             tool_buf_write(&names[i], ",", 1) == 0;
    }
    int rc = ok ? EXIT_OK : EXIT_REFUSED;
    if (!ok)
        fprintf(stderr, "%s: out of memory\n", tool_name);
    tool_progress progress;
    tool_inputs_progress_start(&progress, in, quiet);
    lct_record rec;
    size_t which;
    long long printed = 0;
    line out = {NULL, 0, 0};
    for (uint64_t idx = 0; ok && (o->limit < 0 || printed < o->limit) &&
                           !tool_interrupted &&
                           tool_inputs_next(in, &rec, &which) == 1;
         idx++) {
        tool_inputs_progress(&progress, in);
        if (!wanted(o, &rec))
            continue;
        o->file_member = &names[which];
        int one = print_record(in->readers[which], o, &rec, idx, &out,
                               stdout);
        if (!fold_status(one, &rc))
            break;
        printed++;
    }
    tool_progress_end(&progress);
    for (size_t i = 0; names && i < in->n; i++)
        free(names[i].buf);
    free(names);
    free(out.buf);
    return rc;
}

/* MARK: -j N: a batch of frames at a time on N threads */

/* Frames a thread renders per batch: the batch's output is what is held
 * (about 4096 records' lines per thread), so memory stays bounded. */
#define FRAMES_PER_THREAD 4096

/* One thread's share of a batch: its lines, rendered into a memory
 * stream, and how many; the --qualname counts are its own. */
typedef struct dump_lane {
    lct_reader *r;
    const dump_opts *o;
    tool_patterns qualnames;
    line scratch;
    FILE *mem;
    char *buf;
    size_t len;
    uint64_t rows;
    int rc; /* EXIT_OK, EXIT_DAMAGED, EXIT_REFUSED, or -1: stop */
} dump_lane;

static int lane_record(void *state, const lct_record *rec)
{
    dump_lane *l = state;
    if (!tool_window_holds(&l->o->window, rec) ||
        !tool_qualname_wanted(&l->qualnames, rec->qualname))
        return 0;
    int one = print_record(l->r, l->o, rec, 0, &l->scratch, l->mem);
    if (one < 0 || one == EXIT_REFUSED) {
        l->rc = one;
        return 1;
    }
    if (one != EXIT_OK)
        l->rc = one;
    l->rows++;
    return 0;
}

/* Write at most *left of a lane's lines (all when *left < 0). */
static bool write_lane(const dump_lane *l, long long *left)
{
    size_t len = l->len;
    if (*left >= 0 && (uint64_t)*left < l->rows) {
        /* a line ends at each newline: JSON and CSV escape theirs */
        const char *p = l->buf;
        for (long long k = 0; k < *left; k++)
            p = memchr(p, '\n', l->len - (size_t)(p - l->buf)) + 1;
        len = (size_t)(p - l->buf);
    }
    if (*left >= 0)
        *left -= *left < (long long)l->rows ? *left : (long long)l->rows;
    return len == 0 || tool_stdout_write(NULL, l->buf, len) == 0;
}

/* Whether -j asks for threads here: several asked (or, by default, a
 * file of TOOL_PARALLEL_MIN_BYTES or more and more than one CPU to use),
 * a regular file read mapped, and output that needs no record numbers
 * (--range, --fields idx), which come only in order.  On one CPU the
 * batches cost without paying (the frame index and the lanes' growing
 * output buffers fault in pages the plain dump never touches). */
static bool dump_parallel(const dump_opts *o, const tool_args *a)
{
    struct stat info;
    bool numbered = o->range.set;
    for (unsigned i = 0; o->project && i < o->fields.n; i++)
        numbered |= o->fields.order[i] == TOOL_FIELD_IDX;
    if (a->jobs == 1 || o->follow || o->at || numbered || a->noperands > 1 ||
        a->source == TOOL_SOURCE_STREAM || strcmp(a->file, "-") == 0 ||
        stat(a->file, &info) != 0 || !S_ISREG(info.st_mode))
        return false;
    lct_scan every_cpu = {.threads = 0};
    return a->jobs > 1 ||
           ((uint64_t)info.st_size >= TOOL_PARALLEL_MIN_BYTES &&
            lct_scan_threads(&every_cpu, NULL) > 1);
}

/* Each lane's memory stream written again from its start: one stream
 * per lane for the whole run (a fresh one per batch was fresh pages to
 * fault in for every line: sys time above the rendering's). */
static bool lanes_rewind(dump_lane *lanes, unsigned n)
{
    for (unsigned t = 0; t < n; t++) {
        lanes[t].rows = 0;
        if (!lanes[t].mem)
            lanes[t].mem = open_memstream(&lanes[t].buf, &lanes[t].len);
        if (!lanes[t].mem || fseeko(lanes[t].mem, 0, SEEK_SET) != 0)
            return false;
    }
    return true;
}

/* A batch's lines, lane after lane, at most *left of them: EXIT_OK,
 * EXIT_REFUSED (out of memory), or -1 to stop quietly (a shrink under a
 * record, or stdout failed: said later).  *damaged when a lane printed a
 * record without its args (--lazy). */
static int lanes_write(dump_lane *lanes, unsigned n, long long *left,
                       bool *damaged)
{
    for (unsigned t = 0; t < n; t++) {
        if (fflush(lanes[t].mem) != 0)
            return EXIT_REFUSED;
        if (lanes[t].rc < 0 || lanes[t].rc == EXIT_REFUSED)
            return lanes[t].rc;
        *damaged |= lanes[t].rc == EXIT_DAMAGED;
        if (*left != 0 && !write_lane(&lanes[t], left))
            return -1;
    }
    return EXIT_OK;
}

static void stats_add(lct_stats *st, const lct_stats *batch)
{
    st->records += batch->records;
    st->skipped += batch->skipped;
    st->truncated = batch->truncated;
    st->truncated_offset = batch->truncated_offset;
    st->shrank = batch->shrank;
    st->shrank_offset = batch->shrank_offset;
}

/* The batches: frames [from, from + n x FRAMES_PER_THREAD) at a time. */
static int run_batches(lct_reader *r, const lct_index *idx, lct_scan *scan,
                       dump_lane *lanes, unsigned n, long long left,
                       bool quiet, lct_stats *st)
{
    tool_progress progress;
    tool_progress_start(&progress, r, quiet);
    uint64_t count = lct_index_count(idx), from = 0;
    uint64_t batch_frames = (uint64_t)n * FRAMES_PER_THREAD;
    bool damaged = false;
    int rc = EXIT_OK;
    lct_error err;
    do {
        scan->frames_from = from;
        scan->frames_to =
            count - from < batch_frames ? count : from + batch_frames;
        lct_stats batch = {0};
        if (!lanes_rewind(lanes, n)) {
            rc = EXIT_REFUSED;
        } else if (lct_scan_run(idx, scan, &batch, &err) != LCT_OK) {
            fprintf(stderr, "%s dump: %s\n", tool_name, err.message);
            rc = EXIT_REFUSED;
        } else {
            stats_add(st, &batch);
            rc = lanes_write(lanes, n, &left, &damaged);
        }
        from = scan->frames_to;
        tool_progress_fraction(&progress, (double)batch.bytes_read /
                                              (double)(progress.total + 1));
    } while (rc == EXIT_OK && from < count && left != 0 && !st->shrank);
    tool_progress_end(&progress);
    if (rc == EXIT_REFUSED)
        fprintf(stderr, "%s: out of memory\n", tool_name);
    return rc < 0 ? EXIT_OK : rc == EXIT_OK && damaged ? EXIT_DAMAGED : rc;
}

/* Every wanted record, rendered on `jobs` threads (0: every CPU) a batch
 * at a time and written in file order; the stats of the whole run. */
static int print_records_parallel(lct_reader *r, dump_opts *o, unsigned jobs,
                                  bool quiet, lct_stats *st)
{
    memset(st, 0, sizeof *st);
    lct_index *idx;
    lct_error err;
    if (lct_index_build(r, &idx, &err) != LCT_OK) {
        fprintf(stderr, "%s dump: %s\n", tool_name, err.message);
        return EXIT_REFUSED;
    }
    lct_scan scan = {.threads = jobs, .on_record = lane_record};
    unsigned n = lct_scan_threads(&scan, NULL);
    dump_lane *lanes = calloc(n, sizeof *lanes);
    void **states = calloc(n, sizeof *states);
    uint64_t *hits = calloc((size_t)n * (o->qualnames.n + 1), sizeof *hits);
    int rc = EXIT_REFUSED;
    if (lanes && states && hits) {
        for (unsigned t = 0; t < n; t++) {
            lanes[t] = (dump_lane){.r = r, .o = o, .qualnames = o->qualnames};
            lanes[t].qualnames.hits = hits + (size_t)t * (o->qualnames.n + 1);
            states[t] = &lanes[t];
        }
        scan.states = states;
        rc = run_batches(r, idx, &scan, lanes, n, o->limit, quiet, st);
    } else {
        fprintf(stderr, "%s: out of memory\n", tool_name);
    }
    for (unsigned t = 0; lanes && hits && t < n; t++) {
        for (size_t i = 0; i < o->qualnames.n; i++)
            o->qualnames.hits[i] += lanes[t].qualnames.hits[i];
        free(lanes[t].scratch.buf);
        if (lanes[t].mem)
            fclose(lanes[t].mem);
        free(lanes[t].buf);
    }
    free(hits);
    free(states);
    free(lanes);
    lct_index_free(idx);
    return rc;
}

/* The end of every dump: the exit status from what was read (`judge`:
 * whether skips and a cut tail may make it 3), stdout flushed, patterns
 * that matched nothing said, the patterns freed. */
static int dump_end(dump_opts *o, const tool_args *a, const lct_stats *st,
                    int rc, bool judge)
{
    if (st->shrank) /* said by the log, in the library's words */
        rc = EXIT_REFUSED;
    else if (judge && rc == EXIT_OK)
        rc = tool_exit_for(st);
    tool_finish_stdout();
    if (rc != EXIT_REFUSED && !tool_interrupted && !a->quiet)
        tool_patterns_report(&o->qualnames, "dump", "--qualname");
    free(o->qualnames.text);
    free(o->qualnames.hits);
    return rc;
}

/* dump FILE FILE...: the records merged by t_wall, as they are (each
 * its own t_mono), each line naming its file. */
static int dump_merged(dump_opts *o, const tool_args *a)
{
    merged_alone(o);
    setvbuf(stdout, NULL, _IOFBF, 256 * 1024);
    tool_inputs in;
    lct_stats st = {0};
    unsigned flags = (o->lazy ? LCT_LAZY : 0) | tool_source_flags(a);
    if (!tool_inputs_open(&in, a, flags, false))
        return dump_end(o, a, &st, EXIT_REFUSED, false);
    int rc = print_merged(&in, o, a->quiet);
    tool_inputs_stats(&in, &st);
    rc = dump_end(o, a, &st, rc, true);
    tool_inputs_close(&in);
    return rc;
}

int cmd_dump(int argc, char **argv)
{
    static const struct option own[] = {
        {"header", no_argument, NULL, OPT_HEADER},
        {"qualname", required_argument, NULL, OPT_QUALNAME},
        {"since", required_argument, NULL, OPT_SINCE},
        {"until", required_argument, NULL, OPT_UNTIL},
        {"limit", required_argument, NULL, 'n'},
        {"lazy", no_argument, NULL, OPT_LAZY},
        {"fields", required_argument, NULL, OPT_FIELDS},
        {"unwrap", no_argument, NULL, OPT_UNWRAP},
        {"bin", required_argument, NULL, OPT_BIN},
        {"at", required_argument, NULL, OPT_AT},
        {"range", required_argument, NULL, OPT_RANGE},
        {"from-end", no_argument, NULL, OPT_FROM_END},
        {"follow", no_argument, NULL, 'f'},
        {NULL, 0, NULL, 0}};
    dump_opts o = {.limit = -1};
    o.qualnames.text = reallocarray(NULL, (size_t)argc, sizeof(char *));
    o.qualnames.hits = calloc((size_t)argc, sizeof(uint64_t));
    if (!o.qualnames.text || !o.qualnames.hits) {
        fprintf(stderr, "%s: out of memory\n", tool_name);
        return EXIT_REFUSED;
    }
    tool_cmd cmd = {.name = "dump",
                    .shared = TOOL_Q | TOOL_J | TOOL_CSV | TOOL_SRC,
                    .own = own, .own_short = "n:f", .on_option = dump_option, .ctx = &o,
                    .help = help, .min_operands = 1};
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    o.csv = a.csv;
    if (a.noperands > 1)
        return dump_merged(&o, &a);
    refuse_with_csv(&o);
    buffer_stdout(&o, &a);
    /* Following re-maps a growing file; one pass is faster streamed. */
    unsigned flags = (o.lazy ? LCT_LAZY : 0) |
                     (o.follow ? LCT_FOLLOW : tool_source_flags(&a));
    /* a frame by its offset, or several threads: the mapping */
    bool parallel = dump_parallel(&o, &a);
    if (o.at || parallel)
        flags = o.lazy ? LCT_LAZY : 0;
    /* usage errors before anything is opened or read */
    if (o.from_end && !o.follow)
        tool_usage_error("dump", "--from-end goes with --follow");
    at_alone(&o);
    if (o.follow) { /* end cleanly, output flushed, when tool_interrupted */
        tool_catch_interrupts();
    }
    lct_stats st;
    lct_reader *r = o.follow ? tool_open_when_ready(a.file, flags, a.quiet)
                             : tool_open(a.file, flags, a.quiet);
    int rc = tool_interrupted ? EXIT_OK : EXIT_REFUSED;
    if (r && o.from_end && !tool_skip_to_end(r))
        o.limit = 0; /* interrupted while passing what was there */
    if (r) /* record A at once, given a sidecar, when read in order */
        tool_range_start(&o.range, r, "dump", a.quiet, !parallel && !o.follow);
    if (r && o.header) {
        lct_header_write_json(lct_reader_header(r), tool_stdout_write, NULL);
        fputc('\n', stdout);
    }
    if (r && o.csv)
        csv_header(&o);
    if (r && o.at)
        rc = tool_dump_at(r, o.at, o.json, o.project ? &o.fields : NULL);
    else if (r)
        rc = parallel ? print_records_parallel(r, &o, a.jobs, a.quiet, &st)
                      : print_records(r, &o, a.quiet);
    if (!r || !parallel)
        lct_reader_stats(r, &st);
    rc = dump_end(&o, &a, &st, rc, r && !o.at);
    lct_close(r);
    return rc;
}
