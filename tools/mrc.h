/*
 * mrc.h - what lct mrc prints (mrc_out.c) and draws (svg.c).
 */
#ifndef LCT_TOOL_MRC_H
#define LCT_TOOL_MRC_H

#include "tool.h"
#include "keys.h"

/* MARK: lct mrc's curve, and its SVG chart */

/* The points lct mrc prints and draws (the library's). */
typedef lct_mrc_curve tool_curve;

/* --policy: the policies whose hit ratios go beside the curve's, each
 * simulated at each of the curve's capacities (mrc_policy.c); LRU's is
 * the exact curve's own. */
#define TOOL_MRC_POLICIES 16
typedef struct tool_mrc_policies {
    lct_policy_kind kind[TOOL_MRC_POLICIES];
    size_t n;
    double *hit; /* n x the curve's points: policy k's at point i is
                    hit[k * points + i] */
    double *token_hit; /* the same by the prefix rule's positions, or
                          NULL per key */
    double watermark, eviction_ratio; /* LMCache's L1 policies' (0: the
                                         defaults) */
} tool_mrc_policies;

/* The comma-separated names; an unknown one is a usage error naming
 * the known ones. */
void tool_mrc_policies_parse(tool_mrc_policies *p, const char *list);
/* Each policy at each of c's capacities over refs (jobs threads, 0:
 * every usable CPU); by the prefix rule when lru_tokens (LRU's token hit
 * ratios, the exact curve's) are given.  False after a message. */
bool tool_mrc_policies_run(tool_mrc_policies *p, const lct_refs *refs,
                           const tool_curve *c, bool every,
                           const double *lru_tokens, unsigned jobs,
                           bool quiet);

/* What lct mrc prints: the samples' totals and the curve, and by the
 * prefix rule each point's token hit ratio; with an L1 in front, the
 * curve is L2's, l1 says what L1 did, and both tiers' ratios at each
 * point (combined_*); chunk_size 0 when unknown. */
typedef struct tool_mrc_view {
    const lct_mrc_totals *t;
    unsigned k;
    const tool_curve *c;
    const double *token_hit;
    const lct_l1_stats *l1;
    const char *l1_label; /* --l1 as the user gave it */
    const double *combined_hit, *combined_token_hit;
    uint64_t chunk_size;
    const tool_mrc_policies *policies; /* --policy, or NULL */
} tool_mrc_view;

/* The table, or CSV or JSON as the arguments ask (mrc_out.c). */
void tool_mrc_print(const tool_args *a, const tool_mrc_view *v);

/* --target's answer on the chart: the ratio, and the capacity reaching
 * it (0 unreachable). */
typedef struct tool_svg_target {
    double ratio;
    uint64_t keys, bytes;
    const char *whose; /* "both tiers'", or NULL */
} tool_svg_target;

/* What --target answers from: the exact curve m (with l1, L2's behind
 * it), the gathered references when policies are to be simulated, the
 * mean key size (0 unknown). */
typedef struct tool_mrc_target_in {
    double target;
    const lct_mrc *m;
    const lct_l1_stats *l1;
    const tool_mrc_policies *policies;
    const lct_refs *refs;
    double mean_bytes;
} tool_mrc_target_in;

/* Print the least capacity reaching the target, per policy (and tier),
 * as the arguments ask; *lru is LRU's answer (both tiers' with an L1),
 * for the chart.  False after a message (mrc_target.c). */
bool tool_mrc_target(const tool_args *a, const tool_mrc_target_in *in,
                     tool_svg_target *lru);

/* Behind an L1: both tiers' hit ratio when the L2 behind it hits
 * l2_ratio of what reaches it: L1's hits plus L2's share of the rest,
 * over every lookup key (or, with positions, chunk position)
 * (mrc_target.c). */
double tool_mrc_both_ratio(const lct_l1_stats *l1, double l2_ratio,
                           bool positions);

/* What the chart draws: the view's lines (per key, bytes, tokens, both
 * tiers, the policies'), the title (already XML-escaped), the L1's size
 * as the user gave it, and the target's answer (or NULL). */
typedef struct tool_svg_chart {
    const tool_mrc_view *view;
    const char *title;
    const char *l1_label;
    const tool_svg_target *target;
} tool_svg_chart;

/* Write the chart; a curve of no points says in words that there was
 * nothing to draw. */
void tool_svg_curves(FILE *f, const tool_svg_chart *chart);
/* lct mrc --svg: the chart of the view, titled by the trace's name (the
 * L1 as the user gave it, and --target's answer, or NULL), written whole
 * to out or not at all; false after a message (svg.c). */
bool tool_mrc_write_svg(outfile *out, const char *trace,
                        const tool_mrc_view *v, const char *l1_label,
                        const tool_svg_target *target);

/* --by: which field of a key groups it. */
typedef enum tool_mrc_by {
    TOOL_MRC_BY_NONE = 0,
    TOOL_MRC_BY_MODEL,
    TOOL_MRC_BY_SALT,
    TOOL_MRC_BY_KV_RANK,
    TOOL_MRC_BY_GROUP
} tool_mrc_by;

typedef struct tool_mrc_by_options {
    tool_mrc_by by;
    bool isolated; /* each group alone, not in the shared cache */
    bool every;    /* --requests all */
} tool_mrc_by_options;

/* lct mrc --by: walk the inputs' keys, then one curve a group, printed
 * as a asks and drawn to svg (or NULL); false after a message, *whole as
 * tool_keys_walk says (mrc_by.c). */
bool tool_mrc_by_run(tool_inputs *in, tool_keyops *ops, const tool_args *a,
                     const tool_mrc_by_options *o, outfile *svg, bool *whole);

/* Lines of one ratio each over a curve's capacities, for the chart:
 * ratio[k * c->n + i] is line k's at point i. */
typedef struct tool_svg_lines {
    const char *const *names; /* unescaped */
    const double *ratio;
    size_t n;
    const char *title;        /* what the lines are by */
    bool isolated;
} tool_svg_lines;

/* The chart of such lines, a legend entry each, written whole to out (or
 * not at all); false after a message (svg.c). */
bool tool_mrc_svg_lines(outfile *out, const tool_args *a,
                        const tool_curve *c, const tool_svg_lines *lines);

/* text escaped for an SVG's XML into out (NUL-terminated, at most
 * size - 16 bytes of it); its length. */
size_t tool_svg_escape(char *out, size_t size, const char *text);

#endif
