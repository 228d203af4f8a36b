/*
 * keys.h - the key reference stream that lct keys, mrc and sim share
 * (keys.c): which calls are reads and writes, the options that choose
 * them, walking or gathering every key of the inputs, and the chunk size
 * a header states (config.c).
 */
#ifndef LCT_TOOL_KEYS_H
#define LCT_TOOL_KEYS_H

#include <getopt.h>
#include "tool.h"

/* MARK: key references (lct keys, lct mrc) */

/* Which calls are cache reads and writes: --read / --write patterns
 * (as --qualname's), by default submit_prefetch_task and reserve_write;
 * with --all, other calls that carry keys too. */
typedef struct tool_keyops {
    tool_patterns read, write;
    bool all;
    /* Which records at all: --qualname, --since, --until. */
    tool_patterns only;
    tool_window window;
    tool_range range; /* read with one thread: numbers come in order */
    /* Selected records that gave no key but hold ObjectKeys under codec
     * types the library does not read keys from, and the first such type
     * (a copy). */
    uint64_t unread;
    char unread_tag[64];
    /* mrc --sample: gather only the references one of its samples keeps
     * (lct_refs_sample; rate 0: all). */
    double sample_rate;
    uint64_t sample_seed;
    unsigned samples;
    /* mrc --prefix: end each record's keys as a call (lct_refs_end_call),
     * its chunk positions as many keys as it has kv ranks. */
    bool calls;
    /* mrc --lookups-only: write calls give no references. */
    bool lookups_only;
    /* sim: a selected record with no key is given to the walk's fn once,
     * with a NULL key (a logged lookup of no whole chunk). */
    bool keyless;
    /* exact mrc: references go to this curve as they come, on one
     * thread, and none is gathered. */
    lct_mrc_stream *stream;
} tool_keyops;

typedef enum tool_key_op {
    TOOL_KEY_NONE = 0,
    TOOL_KEY_READ,
    TOOL_KEY_WRITE,
    TOOL_KEY_OTHER /* --all: op is the qualname */
} tool_key_op;

/* The options that choose a key stream's calls and records, for the
 * commands that read one (keys, mrc, sim; tool_keyops_select takes them):
 * their getopt entries and their --help lines. */
#define TOOL_KEYS_OPTIONS                                                   \
    {"read", required_argument, NULL, TOOL_OPT_READ_VAL},                    \
    TOOL_SELECT_OPTIONS,                                                     \
    {"write", required_argument, NULL, TOOL_OPT_WRITE_VAL}
#define TOOL_HELP_KEYS                                                      \
    "  --qualname PAT, --since T, --until T, --range A:B   only those\n"     \
    "               records, as dump takes them (--range reads with\n"      \
    "               one thread)\n"                                          \
    "  --read PAT, --write PAT   which calls are reads and writes\n"        \
    "               (default submit_prefetch_task, reserve_write)\n"

/* Room for as many patterns as there are arguments. */
void tool_keyops_init(tool_keyops *o, int argc);
void tool_keyops_add(tool_keyops *o, bool write, const char *pattern);
/* Parse a key command's arguments (its own options, the shared ones,
 * TOOL_KEYS_OPTIONS into ops): one or more FILEs. */
void tool_keys_parse(const char *name, const struct option *own,
                     void (*on_option)(void *, int, const char *), void *ctx,
                     void (*help)(void), tool_keyops *ops, int argc,
                     char **argv, tool_args *a);
/* Take a TOOL_KEYS_OPTIONS option; false if c is not one. */
bool tool_keyops_select(tool_keyops *o, const char *cmd, int c,
                        const char *arg);
/* The defaults for a side given no pattern. */
/* The default --read and --write calls for a trace of this level. */
void tool_keyops_defaults(tool_keyops *o, lct_str level);
void tool_keyops_free(tool_keyops *o);
/* Say on stderr which --read / --write patterns matched no record, and
 * how many records hold keys under types this version does not read. */
void tool_keyops_report(const tool_keyops *o, const char *cmd);
/* "read", "write", or the qualname (not NUL-terminated: *len). */
const char *tool_key_op_name(tool_key_op op, lct_str qualname, size_t *len);

/* One key reference; non-zero stops the walk. */
typedef int (*tool_key_fn)(void *ctx, const lct_record *rec, uint64_t idx,
                           tool_key_op op, const lct_object_key *key,
                           uint64_t bytes);
/* Every key reference of the inputs' records in trace order (a record whose keys
 * cannot be read is warned about with its offset and skipped).  False
 * when the trace was damaged (the reader warned). */
bool tool_keys_walk(tool_inputs *in, tool_keyops *o, const char *cmd,
                    tool_key_fn fn, void *ctx);

/* The read and write references of the inputs' records (with --all, others
 * too) appended to out, gathered on a->jobs threads (0: by file size)
 * and joined in file order; *whole false when the trace was damaged.
 * False if memory ran out or the file shrank. */
bool tool_keys_collect(tool_inputs *in, tool_keyops *o, const char *cmd,
                       const tool_args *a, lct_refs *out, bool *whole);

/* The chunk size in tokens the header's sm_config_json states
 * (chunk_size), or 0 when it states none. */
uint64_t tool_chunk_size(const lct_reader *r);

/* The start of `lct keys` and `lct mrc`, once their options are parsed:
 * the output file named by out_opt (when out_path is not NULL) opened
 * first, so one that is the trace or cannot be written fails before
 * anything is read; then the inputs (one FILE only with --range) and the
 * default patterns.  False (o freed, nothing left open) when either
 * could not be opened: exit EXIT_REFUSED. */
bool tool_keys_start(const char *cmd, const char *out_opt,
                     const char *out_path, const tool_args *a, tool_keyops *o,
                     outfile **out, tool_inputs *in);

/* The end of `lct keys` and `lct mrc`: report unmatched patterns (unless
 * quiet), free o, close the inputs, flush stdout, and return the exit code: 1 if
 * !ok or the file shrank, else 3 if the trace was not whole, else 0. */
int tool_keys_finish(tool_inputs *in, tool_keyops *o, const char *cmd,
                     bool quiet, bool ok, bool whole);

/* lct keys --top N (histogram false) or --reuse-histogram over the
 * walk's keys, printed as JSON lines or CSV (keys_reuse.c); false after
 * a message, *whole as tool_keys_walk says. */
bool tool_keys_reuse(tool_inputs *in, tool_keyops *ops, const tool_args *a,
                     size_t top, bool histogram, bool *whole);

#endif
