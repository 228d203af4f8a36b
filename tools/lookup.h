/*
 * lookup.h - LMCache's lookup-hash logs: written from a trace's lookups
 * (lookup_log.c, lct keys --lookup-jsonl) and read back as a trace
 * (lookup_import.c, lct import lookup-logs).
 */
#ifndef LCT_TOOL_LOOKUP_H
#define LCT_TOOL_LOOKUP_H

#include <glob.h>
#include "tool.h"

/* LMCache's lookup-hash log lines being written (lookup_log.c): keys of
 * one lookup gathered, then its line. */
typedef struct tool_lookup_log {
    FILE *f;
    uint64_t chunk_size; /* tokens a chunk holds (0: unknown) */
    bool open, failed;
    uint64_t idx, keys, lines; /* keys: the line's chunks */
    lct_chunk_rows rows;       /* the line's call's chunks so far */
    char *head, *layout, *hashes;
    size_t hashes_len, hashes_cap;
} tool_lookup_log;
/* A key of lookup record idx: a new idx ends the previous line; each
 * chunk of the call (lct_chunk_of) is one hash, its first key's, as
 * LMCache logs one hash a chunk. */
void tool_lookup_log_key(tool_lookup_log *l, const lct_record *rec,
                         uint64_t idx, const lct_object_key *k);
/* Write the line gathered (if any). */
void tool_lookup_log_flush(tool_lookup_log *l);
void tool_lookup_log_free(tool_lookup_log *l);

/* The log files paths name (a directory: its lookup_hashes_*.jsonl,
 * sorted), into g (globfree it); false if memory ran out. */
#include <glob.h>
bool tool_lookup_logs_files(char **paths, int n, glob_t *g);
/* The files' events, sorted by timestamp (stable), as a trace of
 * submit_prefetch_task records written to fd; malformed lines are warned
 * about with file:line and skipped (*bad).  False after a message. */
bool tool_lookup_logs_import(const glob_t *files, int fd, bool quiet,
                             uint64_t *events, uint64_t *bad);

/* lct import mooncake|bailian: one published trace file (trace_import.c). */
typedef struct tool_trace_import {
    const char *path;
    const char *format;   /* "mooncake" or "bailian": request ids, header */
    bool millis;          /* timestamps in milliseconds (mooncake) */
    uint64_t block_size;  /* tokens a hash id covers */
    uint64_t chunk_size;  /* tokens an LMCache chunk holds */
    const char *model;    /* the keys' model_name */
    /* the KV layout of a chunk: [2, layers, chunk_size, kv_heads,
     * head_dim] of dtype (a torch dtype's name without "torch.") */
    int64_t layers, kv_heads, head_dim;
    const char *dtype;
    double start;         /* t_wall of time 0 */
    bool quiet;
} tool_trace_import;

/* Write the trace to fd; *requests written, *bad lines skipped (each
 * warned about with file:line unless quiet).  False after a message. */
bool tool_trace_import_run(const tool_trace_import *o, int fd,
                           uint64_t *requests, uint64_t *bad);

#endif
