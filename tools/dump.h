/*
 * dump.h - what lct dump's files share: --fields (fields.c), --at and
 * --range's printing (slice.c), --follow (follow.c).
 */
#ifndef LCT_TOOL_DUMP_H
#define LCT_TOOL_DUMP_H

#include "tool.h"

/* MARK: dump --fields */

enum {
    TOOL_FIELD_OFFSET,
    TOOL_FIELD_IDX, /* record number, from 0, as the reader yields them */
    TOOL_FIELD_T_MONO,
    TOOL_FIELD_T_WALL,
    TOOL_FIELD_QUALNAME,
    TOOL_FIELD_ARGS,
    TOOL_FIELD_COUNT
};

/* The fields asked for, in the order asked. */
typedef struct tool_fields {
    unsigned n;
    unsigned char order[TOOL_FIELD_COUNT];
} tool_fields;

/* The name of a field ("t_mono"). */
const char *tool_field_name(unsigned field);
/* "t_mono,qualname" -> fields; false for an unknown or repeated name. */
bool tool_fields_parse(const char *list, tool_fields *out);
/* One record as a JSON object of those fields (no newline); json: the
 * lct_value_write_json_opts flags for args. */
lct_status tool_fields_write(const tool_fields *fl, const lct_record *rec,
                             uint64_t idx, unsigned json, lct_write_fn write,
                             void *ctx);

/* MARK: dump --at, --range */

/* Print the frame at the offset in `text` (only `fields` of it when not
 * NULL), or say what is there instead; returns the exit status. */
int tool_dump_at(lct_reader *r, const char *text, unsigned json,
                 const tool_fields *fields);
/* Records of r (a pass without warnings), and back to the start. */
uint64_t tool_count_records(lct_reader *r);

/* MARK: dump --follow */

/* Open path, waiting while it does not exist, is empty or holds half a
 * header; NULL (after a message) on any other refusal or an interrupt. */
lct_reader *tool_open_when_ready(const char *path, unsigned flags,
                                 bool quiet);
/* Flush, wait, take in what was appended; false when reading cannot go on
 * (interrupted, or the file shrank: the log has said so). */
bool tool_wait_for_more(lct_reader *r);
/* --from-end: pass the records already there; false if interrupted. */
bool tool_skip_to_end(lct_reader *r);

#endif
