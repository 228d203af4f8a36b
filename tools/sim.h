/*
 * sim.h - lct sim's text report (sim_text.c) and chart (sim_svg.c).
 */
#ifndef LCT_TOOL_SIM_H
#define LCT_TOOL_SIM_H

#include "tool.h"

/* lct sim --svg: the report's seven panels, written whole to out (or not
 * at all); false after a message. */
bool tool_sim_svg(outfile *out, const char *trace,
                  const lct_sim_report *r, uint64_t chunk_size);
/* lct sim's text report on stdout (sim_text.c), with l1's section when
 * an L1 was in front; tokens: counted (a chunk size, or logged tokens),
 * else the chunks are printed instead. */
void tool_sim_text(const lct_sim_report *r, bool tokens,
                   const lct_l1_stats *l1);
/* Both tiers' token hit rate: L1's chunk positions hit and L2's. */
double tool_sim_both_rate(const lct_sim_report *r, const lct_l1_stats *l1);

#endif
