/*
 * mrc_policy.c - `lct mrc --policy`: other eviction policies' hit ratios
 * beside LRU's exact curve, at its capacities: each policy simulated at
 * each capacity (lct_policy_run) on the gathered references, the runs
 * shared out over -j threads, with progress on a terminal.
 */
#include "tool.h"
#include "mrc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void tool_mrc_policies_parse(tool_mrc_policies *p, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        tool_usage_error("mrc", "out of memory");
    for (char *name = strtok_r(copy, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        lct_policy_kind kind;
        if (lct_policy_find(name, &kind) != LCT_OK)
            tool_usage_error("mrc", "unknown policy '%s' (known: %s)", name,
                             lct_policy_names()); /* exits */
        if (kind == LCT_POLICY_LMCACHE_ISOLATED_LRU)
            tool_usage_error("mrc", "lmcache-isolated-lru evicts by its "
                             "salts' quotas, not by a capacity: lct sim "
                             "--policy lmcache-isolated-lru --quota "
                             "SALT=CAP,...");
        bool seen = false;
        for (size_t i = 0; i < p->n; i++)
            seen |= p->kind[i] == kind;
        if (!seen && p->n < TOOL_MRC_POLICIES)
            p->kind[p->n++] = kind;
    }
    free(copy);
    if (p->n == 0)
        tool_usage_error("mrc", "--policy names no policy");
}

typedef struct progress_ctx {
    tool_progress shown;
    double last;
} progress_ctx;

/* "lct mrc: policies 3 of 40", a few times a second on a terminal. */
static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    progress_ctx *pc = ctx;
    if (!pc->shown.active)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    if (t - pc->last < 0.25 && done < total)
        return;
    pc->last = t;
    pc->shown.last_shown = t;
    fprintf(stderr, "\r%s mrc: policy runs %llu of %llu", tool_name,
            (unsigned long long)done, (unsigned long long)total);
    fflush(stderr);
}

bool tool_mrc_policies_run(tool_mrc_policies *p, const lct_refs *refs,
                           const tool_curve *c, bool every,
                           const double *lru_tokens, unsigned jobs,
                           bool quiet)
{
    size_t n = c->n;
    lct_policy_kind sim[TOOL_MRC_POLICIES];
    size_t nsim = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->kind[i] != LCT_POLICY_LRU) /* the exact curve's */
            sim[nsim++] = p->kind[i];
    p->hit = calloc(p->n * (n ? n : 1), sizeof *p->hit);
    if (lru_tokens)
        p->token_hit = calloc(p->n * (n ? n : 1), sizeof *p->token_hit);
    lct_policy_point *pts = calloc(nsim * (n ? n : 1), sizeof *pts);
    uint64_t *caps = calloc(n ? n : 1, sizeof *caps);
    bool ok = p->hit && pts && caps && (!lru_tokens || p->token_hit);
    for (size_t i = 0; ok && i < n; i++)
        caps[i] = c->keys[i];
    progress_ctx pc = {0};
    /* past a million references a run takes a while */
    tool_progress_start_size(&pc.shown,
                             (uint64_t)lct_refs_count(refs) * nsim * n * 64,
                             quiet);
    lct_policy_run_options o = {.kinds = sim, .nkinds = nsim,
                                .every_reference = every,
                                .prefix = lru_tokens != NULL, .threads = jobs,
                                .watermark = p->watermark,
                                .eviction_ratio = p->eviction_ratio,
                                .progress = on_progress,
                                .progress_ctx = &pc};
    lct_error err;
    if (ok && nsim && n &&
        lct_policy_run(refs, &o, caps, n, pts, &err) != LCT_OK) {
        fprintf(stderr, "%s mrc: %s\n", tool_name, err.message);
        ok = false;
    }
    tool_progress_end(&pc.shown);
    for (size_t k = 0, s = 0; ok && k < p->n; k++) {
        for (size_t i = 0; i < n; i++) {
            const lct_policy_point *pt = &pts[s * n + i];
            bool lru = p->kind[k] == LCT_POLICY_LRU;
            p->hit[k * n + i] =
                lru            ? c->hit[i]
                : pt->requests ? (double)pt->hits / (double)pt->requests
                               : 0;
            if (lru_tokens)
                p->token_hit[k * n + i] =
                    lru ? lru_tokens[i]
                    : pt->positions
                        ? (double)pt->positions_hit / (double)pt->positions
                        : 0;
        }
        s += p->kind[k] != LCT_POLICY_LRU;
    }
    if (!ok && !p->hit)
        fprintf(stderr, "%s mrc: out of memory\n", tool_name);
    free(pts);
    free(caps);
    return ok;
}
