/*
 * sim.h - lct sim's text report (sim_text.c) and chart (sim_svg.c), and
 * a record fed to the simulation as one call (sim_call.c).
 */
#ifndef LCT_TOOL_SIM_H
#define LCT_TOOL_SIM_H

#include "tool.h"

/* lct sim --svg: the report's seven panels (and with window seconds its
 * windows' hit rate), written whole to out (or not at all); false after
 * a message. */
bool tool_sim_svg(outfile *out, const char *trace,
                  const lct_sim_report *r, uint64_t chunk_size,
                  uint32_t window);
/* --window: the hit rate per window as a table after the report, as
 * CSV, or as the JSON array's items (sim_text.c). */
void tool_sim_windows_text(const lct_sim_report *r, uint32_t window);
void tool_sim_windows_csv(const lct_sim_report *r, uint32_t window);
void tool_sim_windows_json(const lct_sim_report *r, uint32_t window);
/* --capacity A,B,...: a row a capacity (text, CSV or JSON as a asks);
 * names[i] as the user gave it. */
void tool_sim_capacities(const tool_args *a, const lct_sim_report *r,
                         const char *const *names, size_t n, bool tokens);
/* lct sim's text report on stdout (sim_text.c), with l1's section when
 * an L1 was in front; tokens: counted (a chunk size, or logged tokens),
 * else the chunks are printed instead. */
void tool_sim_text(const lct_sim_report *r, bool tokens,
                   const lct_l1_stats *l1);
/* Both tiers' token hit rate: L1's chunk positions hit and L2's. */
double tool_sim_both_rate(const lct_sim_report *r, const lct_l1_stats *l1);

/* The report as one JSON object on stdout (the L1's, the policy's when
 * not LMCache's, the windows'); chunk_size 0 unknown (sim_data.c). */
void tool_sim_json(const lct_sim_report *r, uint64_t chunk_size,
                   bool tokens, const lct_l1_stats *l1,
                   const lct_sim_options *o);
/* Its distributions as CSV. */
void tool_sim_csv(const lct_sim_report *r);
/* Whether o runs another policy or rule than LMCache's simulator. */
bool tool_sim_own_policy(const lct_sim_options *o);
/* A policy's name, LRU for 0. */
const char *tool_sim_policy_name(lct_policy_kind k);

/* One record as one call of the simulation (sim_call.c): begun from the
 * record (a read's logged tokens, the chunk bytes it states), its keys
 * added, ended; lct sim and lct export --hit-rate feed it alike. */
typedef struct tool_sim_call {
    bool read;
    bool logged; /* the record states its tokens: */
    uint64_t seq_len, chunk_tokens;
    bool sized;  /* and its chunk bytes by LMCache's dtype table: */
    uint64_t chunk_bytes;
} tool_sim_call;
void tool_sim_call_begin(tool_sim_call *c, const lct_record *rec, bool read);
lct_status tool_sim_call_key(const tool_sim_call *c, lct_sim *sim,
                             const lct_object_key *key, uint64_t bytes,
                             double t_mono);
lct_status tool_sim_call_end(const tool_sim_call *c, lct_sim *sim);

#endif
