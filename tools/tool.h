/*
 * tool.h - what every lct subcommand shares: opening a trace the way the
 * tool does ("-" is standard input), the option parser, writing to
 * stdout through the library's JSON sinks, escaping untrusted text for a
 * terminal, output files, progress on stderr, inputs merged, running
 * over records, the per-qualname table, --qualname, time windows,
 * --range, interrupts.  What only some commands share has its own
 * header: keys.h (the key stream), lookup.h (LMCache's lookup logs),
 * mrc.h, sim.h, dump.h, replay.h, info.h.
 */
#ifndef LCT_TOOL_H
#define LCT_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/tree.h>

#include "lct.h"
#include "outfile.h"

/* Exit codes, as documented in lct(1). */
enum {
    EXIT_OK = 0,
    EXIT_REFUSED = 1, /* cannot open, or header refused */
    EXIT_USAGE = 2,
    EXIT_DAMAGED = 3  /* opened, but frames were skipped or the tail cut */
};

extern const char *tool_name; /* "lct" */
extern const char *tool_cmd_name; /* the command running, e.g. "dump" */
extern bool tool_quiet;           /* -q was given: no progress anywhere */

/* The reader warnings the tool prints: lct_log_stderr's, except a shrink,
 * which is an error (exit 1): "lct: PATH: MESSAGE".  tool_log_quiet (-q)
 * prints only that error. */
void tool_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
              uint64_t offset, const char *message);
void tool_log_quiet(void *ctx, const lct_reader *r, lct_warning_kind kind,
                    uint64_t offset, const char *message);
void tool_report_shrink(const lct_reader *r, const char *message);

/* What a pipe may make a reader hold (--max-frame; 0: the library's
 * default), for every open below. */
extern uint64_t tool_max_stream_frame;

/* The name the tool gives an input: "<stdin>" for "-", else the path. */
const char *tool_input_name(const char *path);

/* lct_open_with of PATH ("-" for stdin) with --max-frame. */
lct_status tool_open_raw(const char *path, unsigned flags, lct_reader **r,
                         lct_error *err);

/* The one rule for a command that read a trace (lct --help, lct(1)): the
 * answer is printed, and the status says whether the file was whole: 0,
 * 3 when frames were skipped or the tail cut, 1 when it shrank while
 * read. */
int tool_exit_for(const lct_stats *st);

/* Open PATH ("-" for stdin); on failure print the message and return NULL. */
lct_reader *tool_open(const char *path, unsigned flags, bool quiet);

/* Usage error: one line and a hint, exit 2. */
_Noreturn void tool_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The usage error for what getopt_long (optstring starting with ':')
 * returned as c, '?' or ':': names the option, never another word. */
_Noreturn void tool_bad_option(const char *cmd, int c, char **argv);

/* MARK: the shared option parser */

/* Options every reading command may take: -q, -j N, --json, --csv, and
 * --mmap / --stream / --max-frame (TOOL_SRC) to choose how the file is
 * read. */
enum { TOOL_Q = 1, TOOL_J = 2, TOOL_JSON = 4, TOOL_CSV = 8, TOOL_SRC = 16 };
/* getopt values of the shared long options (commands' own start at 300). */
enum {
    TOOL_OPT_JSON_VAL = 256,
    TOOL_OPT_CSV_VAL,
    TOOL_OPT_MMAP_VAL,
    TOOL_OPT_STREAM_VAL,
    TOOL_OPT_MAX_FRAME_VAL,
    TOOL_OPT_QUALNAME_VAL,
    TOOL_OPT_SINCE_VAL,
    TOOL_OPT_UNTIL_VAL,
    TOOL_OPT_RANGE_VAL,
    TOOL_OPT_READ_VAL,  /* --read, --write: the key commands' */
    TOOL_OPT_WRITE_VAL
};

/* --qualname, --since, --until, --range for a command's own option
 * table, as dump means them (stat, keys, mrc). */
#define TOOL_SELECT_OPTIONS                                                   \
    {"qualname", required_argument, NULL, TOOL_OPT_QUALNAME_VAL},             \
        {"since", required_argument, NULL, TOOL_OPT_SINCE_VAL},               \
        {"until", required_argument, NULL, TOOL_OPT_UNTIL_VAL},               \
        {"range", required_argument, NULL, TOOL_OPT_RANGE_VAL}
/* How to read the file: the command's default, or as asked. */
typedef enum tool_source {
    TOOL_SOURCE_DEFAULT = 0,
    TOOL_SOURCE_MMAP,
    TOOL_SOURCE_STREAM
} tool_source;

struct option;

/* A command's command line: which shared options it takes, its own
 * (long ones, and short ones as a getopt string), and its help. */
typedef struct tool_cmd {
    const char *name;            /* "stat" */
    unsigned shared;             /* TOOL_Q | TOOL_J | ... */
    const struct option *own;    /* NULL-terminated, or NULL */
    const char *own_short;       /* e.g. "n:f", or NULL */
    void (*on_option)(void *ctx, int c, const char *arg);
    void *ctx;
    void (*help)(void);
    const char *operand;         /* "FILE" (the default) or "OUT" */
    int min_operands;            /* 0: exactly one; else at least this */
} tool_cmd;

/* What the shared options said, and the one operand. */
typedef struct tool_args {
    bool quiet, json, csv;
    unsigned jobs; /* 0: choose */
    tool_source source;
    const char *file;    /* the first operand */
    char **operands;     /* all of them (argv's) */
    int noperands;
} tool_args;

/* Parse argv: -h prints help and exits 0; a bad option, a missing value,
 * --csv with --json or a wrong number of operands exits 2 (tool_usage_error). */
void tool_parse_args(const tool_cmd *cmd, int argc, char **argv,
                     tool_args *out);

/* The lct_open flags that --mmap / --stream (or the default) ask for. */
unsigned tool_source_flags(const tool_args *a);
/* The end of a --help whose options sit in a 13-column field: the options
 * every reading command takes. */
#define TOOL_HELP_READING                                                   \
    "  -q           no warnings on stderr\n"                                \
    "  --mmap, --stream  how to read a file (default: the faster here)\n" \
    "  --max-frame SIZE  the longest frame a pipe may hold (256M)\n"        \
    "  -h, --help   this text\n"
/* tool_parse_args, then tool_open of its operand (NULL: refused, said). */
lct_reader *tool_start(const tool_cmd *cmd, int argc, char **argv,
                       unsigned flags, tool_args *a);

/* Parse a non-negative count or a float option; usage error if bad. */
long long tool_parse_count(const char *cmd, const char *opt, const char *arg);
double tool_parse_seconds(const char *cmd, const char *opt, const char *arg);
/* A number in (0, 1] (--watermark 0.8), or a usage error. */
double tool_parse_fraction(const char *cmd, const char *opt,
                           const char *arg);
/* A size in bytes, 1 to 4 GiB, with an optional K, M or G. */
uint64_t tool_parse_size(const char *cmd, const char *opt, const char *arg);
/* A cache capacity: keys ("1000", "1000keys") or bytes with B, K, M, G
 * or T, powers of 1024, optionally followed by iB or B ("64G", "1.5TiB");
 * a usage error otherwise. */
bool tool_parse_capacity(const char *cmd, const char *opt, const char *arg,
                         bool *in_bytes, uint64_t *value);

/* MARK: output */

/* lct_write_fn writing to stdout; remembers a write failure. */
int tool_stdout_write(void *ctx, const char *data, size_t len);
/* Print text escaped with strvis (for a terminal). */
void tool_put_vis(FILE *f, const char *s, size_t len);
/* Print a library message (lct_error.message, a warning): it is already
 * escaped (lct.h), so backslashes stay single; any control byte, or a
 * bidirectional control, is still escaped. */
void tool_put_message(FILE *f, const char *message);
/* Print one CSV field: control bytes escaped as tool_put_vis does, then
 * quoted per RFC 4180 when it holds ',' or '"'. */
void tool_put_csv(FILE *f, const char *s, size_t len);
/* Print s escaped, then pad with spaces to width code points (as Python's
 * f"{s:<width}" does). */
void tool_put_vis_padded(FILE *f, const char *s, size_t len, int width);
/* Print a value as Python's str() of what msgspec decodes it to (a str
 * as is, containers as repr: [1, 'x'], {'a': 1}), escaped for a terminal. */
void tool_put_py_str(FILE *f, lct_value v);
/* A timestamp ext's UTC fields as datetime has them: t[0..5] year, month,
 * day, hour, minute, second, and *us; false if v is not a timestamp. */
bool tool_timestamp_fields(lct_value v, int t[6], unsigned *us);
/* Which of the n keys of a map are one entry of the Python dict msgspec
 * decodes it to (pydict.c): keep[i] is the index whose value key i takes
 * (the last key equal to it), or UINT32_MAX when an earlier key is equal
 * (it keeps its place); false when out of memory. */
bool tool_py_dict(const lct_value *keys, uint32_t n, uint32_t *keep);
/* lct_write_fn writing to the FILE * in ctx. */
int tool_file_write(void *ctx, const char *data, size_t len);
/* Bytes gathered to be used whole (a record's JSON line, a key's
 * canonical form): tool_buf_write, an lct_write_fn, appends to the
 * tool_buf in ctx, doubling its room; -1 when memory ran out.  Free
 * buf. */
typedef struct tool_buf {
    char *buf;
    size_t len, cap;
} tool_buf;
int tool_buf_write(void *ctx, const char *data, size_t len);
/* Print a JSON string (quoted). */
void tool_put_json_str(const char *s, size_t len);
/* Print a double as JSON (shortest round-trip; null if not finite). */
void tool_put_json_double(double d);
/* The same two to another stream. */
void tool_put_json_str_to(FILE *f, const char *s, size_t len);
void tool_put_json_double_to(FILE *f, double d);
/* bytes in binary units, one decimal ("101.2 GiB", "512 B"). */
void tool_format_bytes(char *out, size_t size, double bytes);
/* Flush stdout; on a closed pipe exit quietly with status 0, on another
 * error report it and exit 1. */
void tool_finish_stdout(void);

/* MARK: output files (never an input; written whole or not at all) */

/* Open OUT of option `opt` ("-": stdout) for a command whose inputs are
 * a's operands.  An input is a usage error naming both (exit 2, before
 * anything is read); another failure is said and gives NULL. */
outfile *tool_output_open(const char *cmd, const char *opt,
                             const char *path, const tool_args *a);
/* A stdio stream on the output (its own descriptor: close it with
 * fclose before tool_output_commit); NULL after a message. */
FILE *tool_output_stream(const char *cmd, outfile *o);
/* Close f (if not NULL), then commit o: false after a message saying why
 * (errno's words: "No space left on device"). */
bool tool_output_finish(const char *cmd, outfile *o, FILE *f);

/* MARK: progress (stderr, only on a terminal, only for large inputs) */

typedef struct tool_progress {
    bool active;
    uint64_t total;
    uint64_t next_check;
    double last_shown;
    double started;  /* when it started (CLOCK_MONOTONIC seconds) */
    uint64_t every;  /* calls between looks at the clock */
    uint64_t merged_records; /* tool_inputs_progress's countdown */
} tool_progress;

void tool_progress_start(tool_progress *p, const lct_reader *r, bool quiet);
/* The same, for an input of `size` bytes read by someone else (SQL). */
void tool_progress_start_size(tool_progress *p, uint64_t size, bool quiet);
/* A run paced by the trace's clock (replay): progress whatever the
 * input's size, since the time, not the bytes, is long. */
void tool_progress_paced(tool_progress *p, bool quiet);
/* Cheap: looks at the clock only every few thousand calls. */
void tool_progress_update(tool_progress *p, const lct_reader *r);
/* The same, for a known fraction done (a scan thread's own range). */
void tool_progress_fraction(tool_progress *p, double fraction);
void tool_progress_end(tool_progress *p);

/* MARK: inputs: the one FILE, or several merged on one timeline */

typedef struct tool_inputs {
    lct_reader *r;        /* the only reader, or the first */
    lct_reader **readers; /* all of them, in the order given */
    size_t n;
    lct_merge *merge;     /* several: by t_wall (lct_merge) */
    lct_reader *current;  /* the reader of the record given last */
} tool_inputs;

/* Open every operand (tool_open: said and false when one is refused);
 * several are merged, and with `retime` their records' t_mono becomes
 * the seconds since the first record's t_wall. */
bool tool_inputs_open(tool_inputs *in, const tool_args *a, unsigned flags,
                      bool retime);
/* One reader already open, as inputs (closed by tool_inputs_close). */
void tool_inputs_one(tool_inputs *in, lct_reader *r);
void tool_inputs_close(tool_inputs *in);
/* The next record, and which input it came from: as lct_next. */
int tool_inputs_next(tool_inputs *in, lct_record *rec, size_t *which);
lct_reader *tool_inputs_reader(const tool_inputs *in, size_t which);
/* Every reader's counters summed (the first truncation and shrink). */
void tool_inputs_stats(const tool_inputs *in, lct_stats *sum);
/* Whether every input read whole so far (lct_reader_status LCT_OK). */
bool tool_inputs_whole(const tool_inputs *in);
void tool_inputs_set_log(tool_inputs *in, lct_log_fn log, void *ctx);
/* A usage error when `option` was given with several inputs. */
void tool_inputs_one_file(const tool_inputs *in, const char *cmd,
                          const char *option, bool given);
/* Progress over all inputs' bytes. */
void tool_inputs_progress_start(tool_progress *p, const tool_inputs *in,
                                bool quiet);
void tool_inputs_progress(tool_progress *p, const tool_inputs *in);

/* MARK: running over every record, in one thread or several */

/* Files at least this large are scanned in parallel unless -j says. */
#define TOOL_PARALLEL_MIN_BYTES (64ull << 20)

/* Parse -j N (1..1024); usage error if bad. */
unsigned tool_parse_jobs(const char *cmd, const char *arg);

typedef int (*tool_record_fn)(void *state, const lct_record *rec);
/* Free what a state gathered (it is zeroed after): a parallel read that
 * must start over with one thread calls it. */
typedef void (*tool_reset_fn)(void *state);

/*
 * The records of a run: one state (sequential) or one per thread, each
 * state_size bytes, zeroed, seeing its records in file order; merge them
 * in order.  Warnings reach `log` in file order either way.
 */
typedef struct tool_run {
    unsigned nstates;
    size_t state_size;
    char *states;
    lct_stats stats;
} tool_run;

/*
 * Call on_record for every record of r.  jobs: 0 chooses (all online CPUs
 * for files of TOOL_PARALLEL_MIN_BYTES or more, else 1); 1 is sequential.
 * Returns false (after a message) if on_record failed, memory ran out, or
 * the file shrank while it was read (lct_guard_install is in effect).
 */
bool tool_records(lct_reader *r, unsigned jobs, bool quiet,
                  size_t state_size, tool_record_fn on_record,
                  tool_reset_fn reset, lct_log_fn log, void *log_ctx,
                  tool_run *run);
/* tool_records over inputs: several are read by one thread, merged. */
bool tool_records_in(tool_inputs *in, unsigned jobs, bool quiet,
                     size_t state_size, tool_record_fn on_record,
                     tool_reset_fn reset, lct_log_fn log, void *log_ctx,
                     tool_run *run);
void *tool_run_state(const tool_run *run, unsigned t);
void tool_run_free(tool_run *run);

/* MARK: nearest-rank percentiles by selection (select.c) */

/* A double's bits as an unsigned key in the same order (negative
 * numbers below the positive ones, -0 below +0), and back. */
uint64_t tool_order_key(double d);
double tool_of_order_key(uint64_t key);
/* Nearest rank among n > 0: index ceil(p*n/100) - 1. */
size_t tool_nearest_rank(size_t n, unsigned p);
/* The shift of the highest byte in which some key differs from the
 * first, given the or of every key xor the first. */
int tool_first_differing_byte(uint64_t differ);
/* The key of rank `rank` among k[0..n) (k reordered); the bytes above
 * `shift` are the same in every key (56: none known to be). */
uint64_t tool_select_key(uint64_t *k, size_t n, size_t rank, int shift);
/* The keys of ranks lo and hi, n > 0, in one pass where they share a
 * byte value. */
void tool_select_two(uint64_t *k, size_t n, int shift, size_t lo,
                     size_t hi, uint64_t *at_lo, uint64_t *at_hi);

/* MARK: a set of 64-bit ids (idset.c) */

typedef struct tool_idset {
    uint64_t *slot;
    size_t mask, held; /* slots - 1; ids in the table */
    uint64_t n;        /* ids in the set, 0 too */
    bool zero;
} tool_idset;

/* 1 added, 0 held already, -1 out of memory (the set unchanged). */
int tool_idset_add(tool_idset *s, uint64_t id);
bool tool_idset_has(const tool_idset *s, uint64_t id);
/* How many ids are in both. */
uint64_t tool_idset_common(const tool_idset *a, const tool_idset *b);
void tool_idset_free(tool_idset *s);

/* A map from 64-bit ids to numbers (idset.c). */
typedef struct tool_idmap {
    uint64_t *slot, *value;
    size_t mask, held;
    uint64_t zero_value; /* id 0's */
} tool_idmap;

/* id's number, 0 for an id new to the map (the caller sets it); NULL
 * out of memory (the map unchanged). */
uint64_t *tool_idmap_get(tool_idmap *m, uint64_t id);
void tool_idmap_free(tool_idmap *m);

/* MARK: lct sql's query (sql_query.c) */

/* The whole text of the query file ("-": standard input), NUL-free and
 * NUL-terminated; a usage error when it cannot be read. */
char *tool_sql_read_query(const char *path);
/* Give each argument that opens with an SQL comment ("-- ...") a
 * leading space, which keeps it an operand and means the same to
 * SQLite (up to a "--" that ends the options). */
void tool_sql_protect_comments(int argc, char **argv);

/* MARK: lct stat --spans (stat_spans.c) */

/* Whether a record is selected (stat's --qualname, --since, ...). */
typedef bool (*tool_stat_select)(void *ctx, const lct_record *rec);
/* Pair the selected records' calls in order and print their spans as a
 * asks; false after a message. */
bool tool_stat_spans(tool_inputs *in, const tool_args *a,
                     tool_stat_select select, void *select_ctx,
                     lct_stats *st);

/* MARK: per-qualname table (keys are copies: they outlive a streamed record) */

typedef struct qentry {
    RB_ENTRY(qentry) link;
    lct_str qualname;
    uint64_t count;
    double first, last; /* t_mono */
    uint64_t first_offset;   /* of the first record */
    double gap_max;          /* the largest gap (count > 1) ... */
    uint64_t gap_max_offset; /* ... and the offset of the record ending it */
    uint64_t backwards;      /* records whose t_mono went back */
    uint64_t args_bytes;
    double *gaps; /* inter-arrival gaps in file order, kept only when asked */
    size_t ngaps, capgaps;
    double gap_mean, gap_p50, gap_p99; /* stat's, once every gap is in */
} qentry;

RB_HEAD(qtable, qentry);
RB_PROTOTYPE(qtable, qentry, link, qentry_cmp)

int qentry_cmp(qentry *a, qentry *b);
/* Find or add the qualname; NULL on out-of-memory (after a message). */
qentry *qtable_get(struct qtable *t, lct_str qualname);

/* Entries met lately, a slot per hash of the qualname's length and last
 * bytes: a trace's few qualnames share long prefixes ("StorageManager.")
 * that each compare of a tree walk reads again, while their ends tell
 * them apart.  All NULL to begin, and again when entries move. */
#define QCACHE_SLOTS 16
typedef struct qcache {
    qentry *slot[QCACHE_SLOTS];
} qcache;

/* Count one record (and its gap when keep_gaps), its entry found through
 * the cache. */
bool qtable_add(struct qtable *t, qcache *recent, const lct_record *rec,
                bool keep_gaps);
/* Move every entry of `later` (records after all of into's) into `into`,
 * adding the gap across the seam; later is left empty. */
bool qtable_merge(struct qtable *into, struct qtable *later, bool keep_gaps);
void qtable_free(struct qtable *t);

/* MARK: a run's tally (info, stat): qualnames, the largest t_mono, records */

typedef struct tool_tally {
    struct qtable ops;
    qcache recent;   /* for qtable_add */
    double duration; /* the largest t_mono seen */
    uint64_t total;  /* records counted */
} tool_tally;

/* tool_record_fn's over a tool_tally state: without and with gaps. */
int tool_tally_counts(void *state, const lct_record *rec);
int tool_tally_gaps(void *state, const lct_record *rec);

/*
 * Read every record of the inputs as the shared options say (threads, quiet) with
 * on_record over states of state_size bytes that begin with a tool_tally,
 * and merge the threads' tallies in file order into *out.  False if the
 * run failed (a message was printed) or the file shrank.
 */
bool tool_tally_run(tool_inputs *in, const tool_args *a, size_t state_size,
                    tool_record_fn on_record, bool keep_gaps, tool_tally *out,
                    lct_stats *st);
void tool_tally_free(tool_tally *t);

/* MARK: --qualname patterns */

/* Patterns, and how many records each one selected. */
typedef struct tool_patterns {
    const char **text;
    uint64_t *hits;
    size_t n;
} tool_patterns;

/* tool_qualname_wanted without counting (safe from several threads). */
bool tool_qualname_selects(const tool_patterns *p, lct_str q);
/* Whether q is selected: any pattern, as a glob when it holds * ? [, else
 * the exact name or a suffix after a dot; no patterns select all. */
bool tool_qualname_wanted(tool_patterns *p, lct_str q);
/* Say on stderr which patterns (of option, e.g. "--qualname") selected
 * nothing. */
void tool_patterns_report(const tool_patterns *p, const char *cmd,
                          const char *option);

/* --since / --until: a number of seconds bounds t_mono, a UTC time
 * (2026-12-01T10:00:00Z) bounds t_wall. */
typedef struct tool_bound {
    bool set, wall;
    double value;
} tool_bound;

typedef struct tool_window {
    tool_bound since, until;
} tool_window;

/* Set --since (until false) or --until from its argument; usage error if
 * it is neither seconds nor a UTC time. */
void tool_window_set(tool_window *w, const char *cmd, bool until,
                     const char *arg);
/* Whether the record lies in the window (NaN times lie outside a bound). */
bool tool_window_holds(const tool_window *w, const lct_record *rec);

/* MARK: --range */

/* --range A:B: records by number from 0, either side optional, negative
 * from the end (Python's slices), as dump, stat, keys and mrc take it. */
typedef struct tool_range {
    bool set; /* --range was given */
    bool has_from, has_to;
    int64_t from, to;
    uint64_t first, end; /* resolved: records [first, end) */
} tool_range;

bool tool_range_parse(const char *text, tool_range *out);
/* --range's argument, or a usage error naming it. */
void tool_range_set(tool_range *rg, const char *cmd, const char *arg);
/* Resolve against r's records, counting them first when a side is
 * negative (a file only: standard input is a usage error), from its
 * sidecar index when it has a valid one; the log is set back to the
 * tool's after.  With `seek` and a valid sidecar, r is put at the range's
 * first record as if the records before it had been read
 * (lct_reader_seek): for callers that number records from r's count. */
void tool_range_start(tool_range *rg, lct_reader *r, const char *cmd,
                      bool quiet, bool seek);
/* r's sidecar index, when it has one: one that is stale, damaged,
 * another file's or behind a trace that grew is said (unless quiet) and
 * written again first, r left rewound (NULL: none, or it could not be
 * built). */
lct_sidecar *tool_sidecar(lct_reader *r, const char *cmd, bool quiet);
/* Whether record idx is in the range (always, without --range)... */
static inline bool tool_range_holds(const tool_range *rg, uint64_t idx)
{
    return !rg->set || (idx >= rg->first && idx < rg->end);
}
/* ... and whether every record from idx on lies past it. */
static inline bool tool_range_done(const tool_range *rg, uint64_t idx)
{
    return rg->set && idx >= rg->end;
}

/* MARK: interrupts (follow.c) */

/* Set by SIGINT or SIGTERM once tool_catch_interrupts() was called: a
 * command that runs until stopped (dump --follow, replay) ends cleanly. */
extern volatile sig_atomic_t tool_interrupted;
void tool_catch_interrupts(void);

/* MARK: subcommands */

int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_mrc(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif
