/*
 * mrc_target.c - `lct mrc --target R`: the smallest cache that reaches a
 * hit ratio (the token hit ratio under the prefix rule), in keys and in
 * bytes.  LRU's answer comes from the exact curve (lct_mrc_capacity_for);
 * behind an L1, for L2 alone and for both tiers; other policies' by
 * bisection over simulations of one capacity each, several at a time.
 */
#include "tool.h"
#include "mrc.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

/* One answer: a policy (and with an L1, a tier) at its least capacity. */
typedef struct answer {
    const char *policy;
    const char *tiers;    /* "L2", "L1+L2", or NULL for one cache */
    uint64_t keys;        /* 0: unreachable */
    double ratio, below;  /* at keys, and at keys - 1 */
    double ceiling;       /* what an unbounded cache reaches */
    uint64_t bytes;       /* 0: unknown */
    const char *bytes_from; /* "byte_lru", "key_size", "mean_key_size" */
    double bytes_ratio;   /* byte_lru: the byte curve's ratio there */
} answer;

#define MAX_ANSWERS (TOOL_MRC_POLICIES + 2)

typedef struct answers {
    answer a[MAX_ANSWERS];
    size_t n;
} answers;

/* A ratio as a function of a capacity in keys. */
typedef double ratio_fn(const void *ctx, uint64_t keys);

/* The least keys in [lo, hi] where f reaches target, f growing; 0 when
 * none does. */
static uint64_t least(ratio_fn *f, const void *ctx, uint64_t lo,
                      uint64_t hi, double target)
{
    if (lo > hi || f(ctx, hi) < target)
        return 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (f(ctx, mid) >= target)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Behind an L1: both tiers' ratio at an L2 of `keys` keys, as the
 * table's both_*_ratio columns count it. */
typedef struct both_ctx {
    const lct_mrc *m;
    const lct_l1_stats *l1;
    bool tokens;
} both_ctx;

double tool_mrc_both_ratio(const lct_l1_stats *l1, double l2_ratio,
                           bool positions)
{
    if (positions)
        return l1->positions
                   ? ((double)l1->positions_hit +
                      l2_ratio * (double)(l1->positions - l1->positions_hit)) /
                         (double)l1->positions
                   : 0;
    return l1->keys ? ((double)l1->keys_hit +
                       l2_ratio * (double)l1->keys_to_l2) /
                          (double)l1->keys
                    : 0;
}

static double both_ratio(const void *ctx, uint64_t keys)
{
    const both_ctx *b = ctx;
    return tool_mrc_both_ratio(b->l1,
                               b->tokens
                                   ? lct_mrc_position_hit_ratio(b->m, keys)
                                   : lct_mrc_hit_ratio(b->m, keys),
                               b->tokens);
}

/* The curve's own ratio: its token hit ratio under the prefix rule. */
typedef struct curve_ctx {
    const lct_mrc *m;
    bool tokens;
} curve_ctx;

static double curve_ratio(const void *ctx, uint64_t keys)
{
    const curve_ctx *c = ctx;
    return c->tokens ? lct_mrc_position_hit_ratio(c->m, keys)
                     : lct_mrc_hit_ratio(c->m, keys);
}

/* Bytes for a capacity in keys: exact when every key weighs the same,
 * else keys x the mean key size, said so. */
static void bytes_of_keys(answer *an, const lct_mrc_totals *t,
                          double mean_bytes)
{
    if (!an->keys || mean_bytes <= 0)
        return;
    bool uniform = !t->bytes_unknown &&
                   t->min_key_bytes == t->max_key_bytes;
    an->bytes = uniform ? an->keys * t->min_key_bytes
                        : (uint64_t)llround((double)an->keys * mean_bytes);
    an->bytes_from = uniform ? "key_size" : "mean_key_size";
}

static void fill(answer *an, ratio_fn *f, const void *ctx, uint64_t hi,
                 double target)
{
    an->ceiling = f(ctx, hi);
    an->keys = least(f, ctx, 1, hi, target);
    if (an->keys) {
        an->ratio = f(ctx, an->keys);
        an->below = an->keys > 1 ? f(ctx, an->keys - 1) : 0;
    }
}

/* LRU's answers from the exact curve: one cache, or L2 and both tiers
 * behind an L1. */
static void lru_answers(answers *out, const lct_mrc *m,
                        const lct_l1_stats *l1, double mean_bytes,
                        double target)
{
    lct_mrc_totals t;
    lct_mrc_totals_get(m, &t);
    uint64_t hi = lct_mrc_max_distance(m) + 2;
    answer *an = &out->a[out->n++];
    *an = (answer){.policy = "lru", .tiers = l1 ? "L2" : NULL};
    curve_ctx cc = {.m = m, .tokens = t.prefix};
    fill(an, curve_ratio, &cc, hi, target);
    bool uniform = !t.bytes_unknown && t.min_key_bytes == t.max_key_bytes;
    if (!l1 && mean_bytes > 0 && (!t.prefix || !uniform)) {
        /* a cache of bytes: its own curve (tokens too, when sizes
         * differ; with one size keys x that size is exact) */
        lct_mrc_measure what =
            t.prefix ? LCT_MRC_POSITION_BYTE_HIT : LCT_MRC_BYTE_HIT;
        an->bytes = lct_mrc_capacity_for(m, what, target);
        an->bytes_from = "byte_lru";
        an->bytes_ratio =
            !an->bytes ? 0
            : t.prefix ? lct_mrc_position_byte_hit_ratio(m, an->bytes)
                       : lct_mrc_byte_hit_ratio(m, an->bytes);
    } else {
        bytes_of_keys(an, &t, mean_bytes);
    }
    if (!l1)
        return;
    both_ctx b = {.m = m, .l1 = l1, .tokens = t.prefix};
    an = &out->a[out->n++];
    *an = (answer){.policy = "lru", .tiers = "L1+L2"};
    fill(an, both_ratio, &b, hi, target);
    bytes_of_keys(an, &t, mean_bytes);
}

/* One policy's ratio at each of n capacities, one simulation each. */
static bool run_points(const lct_refs *refs, const tool_mrc_policies *pol,
                       size_t k, bool every, bool prefix, unsigned jobs,
                       const uint64_t *caps, size_t n, double *ratio)
{
    lct_policy_point pts[64];
    lct_policy_run_options o = {.kinds = &pol->kind[k], .nkinds = 1,
                                .every_reference = every, .prefix = prefix,
                                .threads = jobs,
                                .watermark = pol->watermark,
                                .eviction_ratio = pol->eviction_ratio};
    lct_error err;
    if (lct_policy_run(refs, &o, caps, n, pts, &err) != LCT_OK) {
        fprintf(stderr, "%s mrc: %s\n", tool_name, err.message);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        ratio[i] = prefix ? (pts[i].positions ? (double)pts[i].positions_hit /
                                                    (double)pts[i].positions
                                              : 0)
                          : (pts[i].requests ? (double)pts[i].hits /
                                                   (double)pts[i].requests
                                             : 0);
    return true;
}

/* A policy's least capacity by k-ary bisection: each round simulates
 * `width` capacities spread over what is left, one per thread.  It
 * takes the ratio to grow with the capacity, which FIFO's and CLOCK's
 * need not on every trace (Belady's anomaly): then it is the least of
 * the capacities it tried. */
static bool policy_answer(answer *an, const lct_refs *refs,
                          const tool_mrc_policies *pol, size_t k,
                          bool every, bool prefix,
                          unsigned jobs, uint64_t distinct, double target)
{
    uint64_t lo = 1, hi = distinct ? distinct : 1;
    double r_hi;
    if (!run_points(refs, pol, k, every, prefix, jobs, &hi, 1, &r_hi))
        return false;
    an->ceiling = r_hi;
    if (r_hi < target)
        return true;
    double r_lo = 0; /* the ratio at lo - 1 (none at 0) */
    unsigned width = jobs ? jobs : (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
    width = width < 1 ? 1 : width > 64 ? 64 : width;
    while (lo < hi) { /* hi reaches the target; what is below lo does not */
        uint64_t caps[64], span = hi - lo;
        double r[64];
        size_t n = 0;
        for (unsigned i = 1; i <= width && n < span; i++) {
            uint64_t c = lo + span * i / (width + 1);
            if (n == 0 || c > caps[n - 1])
                caps[n++] = c;
        }
        if (!run_points(refs, pol, k, every, prefix, jobs, caps, n, r))
            return false;
        size_t i = 0;
        while (i < n && r[i] < target)
            i++;
        if (i > 0) {
            lo = caps[i - 1] + 1;
            r_lo = r[i - 1];
        }
        if (i < n) {
            hi = caps[i];
            r_hi = r[i];
        }
    }
    an->keys = hi;
    an->ratio = r_hi;
    an->below = r_lo; /* at lo - 1, which is now hi - 1 */
    return true;
}

static void print_text(const answers *as, double target, bool prefix)
{
    printf("least capacity for a %s of %.4f:\n",
           prefix ? "token hit ratio" : "hit ratio", target);
    printf("%-8s  %-5s  %12s  %9s  %11s  %13s  %s\n", "policy", "tiers",
           "keys", "ratio", "one_less", "bytes", "bytes_from");
    for (size_t i = 0; i < as->n; i++) {
        const answer *an = &as->a[i];
        printf("%-8s  %-5s  ", an->policy, an->tiers ? an->tiers : "-");
        if (!an->keys) {
            printf("%12s  unreachable: an unbounded cache reaches %.4f\n",
                   "-", an->ceiling);
            continue;
        }
        printf("%12" PRIu64 "  %9.6f  %11.6f  ", an->keys, an->ratio,
               an->below);
        if (an->bytes) {
            char b[32];
            tool_format_bytes(b, sizeof b, (double)an->bytes);
            printf("%13s  %s", b, an->bytes_from);
        } else {
            printf("%13s  %s", "-", an->bytes_from ? "unreachable" : "-");
        }
        putchar('\n');
    }
}

static void put_number_or_null(uint64_t v, bool known)
{
    known ? (void)printf("%" PRIu64, v) : (void)fputs("null", stdout);
}

static void print_json(const answers *as, double target, bool prefix)
{
    fputs("{\"target\":", stdout);
    tool_put_json_double(target);
    printf(",\"measure\":\"%s\",\"answers\":[",
           prefix ? "token_hit_ratio" : "hit_ratio");
    for (size_t i = 0; i < as->n; i++) {
        const answer *an = &as->a[i];
        printf("%s{\"policy\":\"%s\",\"tiers\":", i ? "," : "", an->policy);
        an->tiers ? (void)printf("\"%s\"", an->tiers)
                  : (void)fputs("null", stdout);
        fputs(",\"keys\":", stdout);
        put_number_or_null(an->keys, an->keys);
        fputs(",\"ratio\":", stdout);
        an->keys ? tool_put_json_double(an->ratio)
                 : (void)fputs("null", stdout);
        fputs(",\"ratio_one_key_less\":", stdout);
        an->keys ? tool_put_json_double(an->below)
                 : (void)fputs("null", stdout);
        fputs(",\"unbounded_ratio\":", stdout);
        tool_put_json_double(an->ceiling);
        fputs(",\"bytes\":", stdout);
        put_number_or_null(an->bytes, an->bytes);
        fputs(",\"bytes_from\":", stdout);
        an->bytes_from ? (void)printf("\"%s\"", an->bytes_from)
                       : (void)fputs("null", stdout);
        if (an->bytes_from && an->bytes && an->bytes_ratio > 0) {
            fputs(prefix ? ",\"byte_token_hit_ratio\":"
                         : ",\"byte_hit_ratio\":",
                  stdout);
            tool_put_json_double(an->bytes_ratio);
        }
        putchar('}');
    }
    fputs("]}\n", stdout);
}

static void print_csv(const answers *as, double target, bool prefix)
{
    fputs("measure,target,policy,tiers,keys,ratio,ratio_one_key_less,"
          "unbounded_ratio,bytes,bytes_from\r\n", stdout);
    for (size_t i = 0; i < as->n; i++) {
        const answer *an = &as->a[i];
        printf("%s,", prefix ? "token_hit_ratio" : "hit_ratio");
        tool_put_json_double(target);
        printf(",%s,%s,", an->policy, an->tiers ? an->tiers : "");
        if (an->keys) {
            printf("%" PRIu64 ",", an->keys);
            tool_put_json_double(an->ratio);
            putchar(',');
            tool_put_json_double(an->below);
        } else {
            fputs(",,", stdout);
        }
        putchar(',');
        tool_put_json_double(an->ceiling);
        putchar(',');
        if (an->bytes)
            printf("%" PRIu64, an->bytes);
        printf(",%s\r\n", an->bytes_from ? an->bytes_from : "");
    }
}

bool tool_mrc_target(const tool_args *a, const tool_mrc_target_in *in,
                     tool_svg_target *lru)
{
    answers as = {0};
    lct_mrc_totals t;
    lct_mrc_totals_get(in->m, &t);
    lru_answers(&as, in->m, in->l1, in->mean_bytes, in->target);
    *lru = (tool_svg_target){.ratio = in->target,
                             .keys = as.a[as.n - 1].keys,
                             .bytes = as.a[as.n - 1].bytes,
                             .whose = in->l1 ? "both tiers'" : NULL};
    for (size_t k = 0; in->policies && k < in->policies->n; k++) {
        if (in->policies->kind[k] == LCT_POLICY_LRU)
            continue; /* the curve's own, above */
        answer *an = &as.a[as.n++];
        *an = (answer){.policy = lct_policy_name(in->policies->kind[k])};
        if (!policy_answer(an, in->refs, in->policies, k,
                           t.every_reference, t.prefix, a->jobs,
                           t.distinct_keys, in->target))
            return false;
        bytes_of_keys(an, &t, in->mean_bytes);
    }
    if (a->json)
        print_json(&as, in->target, t.prefix);
    else if (a->csv)
        print_csv(&as, in->target, t.prefix);
    else
        print_text(&as, in->target, t.prefix);
    return true;
}
