/*
 * info.h - what cmd_info.c and events.c share: the events tables and the
 * text layout of `lmcache trace info` (labels in a 28-character column).
 */
#ifndef LCT_TOOL_INFO_H
#define LCT_TOOL_INFO_H

#include "tool.h"

#define LABEL_WIDTH 28

typedef struct ev_entry {
    RB_ENTRY(ev_entry) link;
    lct_str k[3];
    bool shared;
    uint64_t count;
    int64_t *incarnations;
    size_t ninc, capinc;
} ev_entry;

int ev_cmp(ev_entry *a, ev_entry *b);
RB_HEAD(ev_tree, ev_entry);
RB_PROTOTYPE(ev_tree, ev_entry, link, ev_cmp);

typedef struct events {
    struct ev_tree instances; /* k[0] instance_id; incarnations */
    struct ev_tree batches;   /* k[0..2] type, tier, backend; shared */
    struct ev_tree entries;   /* k[0] event_type; count = entries */
    struct ev_tree lifecycle; /* k[0] phase */
    uint64_t store_bytes;
    uint64_t entries_with_tokens;
    bool failed; /* out of memory */
} events;

void events_init(events *ev);
void events_add(events *ev, const lct_record *rec);
void events_free(events *ev);
void events_print_text(events *ev);
void events_print_json(events *ev);

/* "  label:" padded to the label column (indent spaces first). */
void info_label(const char *indent, const char *name, size_t len);
/* A whole row: label, then the value printed with fmt. */
void info_row(const char *indent, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
