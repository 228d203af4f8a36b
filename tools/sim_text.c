/*
 * sim_text.c - lct sim's text report: LMCache's `cache-simulator`
 * print_statistics (simulator.py) line for line, its labels, em dashes,
 * thousands separators and Python's rounding of percentages, with an
 * L1's section after the aggregate when there is one.
 */
#include "tool.h"
#include "sim.h"

#include <inttypes.h>
#include <stdio.h>

static const char *const SEP =
    "============================================================";

static void heading(const char *title)
{
    printf("\n%s\n%s\n%s\n", SEP, title, SEP);
}

/* 1234567 as 1,234,567, as Python's {:,} */
static void put_count(uint64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%" PRIu64, v);
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            putchar(',');
        putchar(digits[i]);
    }
}

/* x as Python's {:.Nf%} prints it: the ratio times 100, then rounded */
static void put_pct(int decimals, double ratio)
{
    printf("%.*f%%", decimals, ratio * 100.0);
}

static double ratio(uint64_t part, uint64_t whole)
{
    return whole ? (double)part / (double)whole : 0;
}

/* A distribution's lines: the mean, the max (with_max), the percentiles;
 * labels padded as LMCache's f-strings pad them (`width` columns before
 * the colon). */
static void dist_lines(int width, const char *mean_label,
                       const lct_sim_dist *d, const char *max_label)
{
    printf("  %-*s: %.1f\n", width, mean_label, d->mean);
    if (max_label) {
        printf("  %-*s: ", width, max_label);
        put_count(d->max);
        putchar('\n');
    }
    const uint64_t p[] = {d->p25, d->p50, d->p75, d->p90, d->p99};
    const char *names[] = {"p25", "p50", "p75", "p90", "p99"};
    for (int i = 0; i < 5; i++)
        printf("  %-*s: %" PRIu64 "\n", width, names[i], p[i]);
}

static void print_aggregate(const lct_sim_report *r, bool tokens)
{
    printf("%s\nAggregate\n%s\n", SEP, SEP);
    printf("  Requests processed  : ");
    put_count(r->calls);
    if (tokens) {
        printf("\n  Total tokens        : ");
        put_count(r->tokens);
        printf("\n  Hit tokens          : ");
        put_count(r->hit_tokens);
        printf("\n  Miss tokens         : ");
        put_count(r->tokens - r->hit_tokens);
    } else {
        printf("\n  Total chunks        : ");
        put_count(r->positions);
        printf("  (no chunk size: --chunk-size N gives tokens)\n"
               "  Hit chunks          : ");
        put_count(r->positions_hit);
    }
    printf("\n  Token hit rate      : ");
    put_pct(2, ratio(r->hit_tokens, r->tokens));
    /* LMCache states the capacity in GiB; a capacity in keys is that
     * many keys of the first sized key's bytes */
    double bytes = r->in_bytes ? (double)r->capacity
                               : (double)r->capacity * (double)r->key_bytes;
    printf("\n  Cache capacity      : %.2f GiB  (", bytes / 1073741824.0);
    put_count(r->capacity_keys);
    printf(" chunks \u00d7 ");
    put_count(r->key_bytes);
    printf(" bytes/chunk)\n  Cache occupancy     : ");
    put_count(r->occupancy_keys);
    printf(" / ");
    put_count(r->capacity_keys);
    printf(" chunks\n");
}

double tool_sim_both_rate(const lct_sim_report *r, const lct_l1_stats *l1)
{
    return l1->positions ? (double)(l1->positions_hit + r->positions_hit) /
                               (double)l1->positions : 0;
}

static void print_l1(const lct_sim_report *r, const lct_l1_stats *l1)
{
    heading("L1 in front (the cache above is the L2 behind it)");
    printf("  L1 capacity        : ");
    if (l1->in_bytes)
        printf("%.2f GiB\n", (double)l1->capacity / 1073741824.0);
    else
        printf("%" PRIu64 " keys\n", l1->capacity);
    printf("  L1 served          : %" PRIu64 " of %" PRIu64 " chunks (%.2f%%)\n"
           "  Asked of L2        : %" PRIu64 " keys, %" PRIu64 " stores "
           "written through\n  Both tiers         : %.2f%% token hit rate\n",
           l1->positions_hit, l1->positions,
           l1->positions ? 100.0 * (double)l1->positions_hit /
                               (double)l1->positions : 0,
           l1->keys_to_l2, l1->writes, 100 * tool_sim_both_rate(r, l1));
}

static void print_requests(const lct_sim_report *r)
{
    heading("Stat 1 \u2014 Per-request token hit rate distribution");
    printf("  Requests with 0%% hit rate   : ");
    put_count(r->calls_no_hit);
    printf(" (");
    put_pct(1, ratio(r->calls_no_hit, r->calls));
    printf(")\n  Requests with 100%% hit rate : ");
    put_count(r->calls_all_hit);
    printf(" (");
    put_pct(1, ratio(r->calls_all_hit, r->calls));
    printf(")\n  Mean                        : ");
    put_pct(2, r->call_hit_mean);
    const char *names[] = {"p25", "p50", "p75", "p90", "p99"};
    for (int i = 0; i < 5; i++) {
        printf("\n  %-4s                        : ", names[i]);
        put_pct(2, r->call_hit_p[i]);
    }
    putchar('\n');
    heading("Stat 2 \u2014 Hit prefix length per request (chunks)");
    dist_lines(19, "Mean", &r->leading, NULL);
}

/* LMCache's print_statistics, line for line (its labels, em dashes and
 * thousands separators), the L1's section added after the aggregate. */
void tool_sim_text(const lct_sim_report *r, bool tokens,
                   const lct_l1_stats *l1)
{
    print_aggregate(r, tokens);
    if (l1)
        print_l1(r, l1);
    if (r->calls)
        print_requests(r);
    if (r->reuse.count) {
        heading("Stat 3 \u2014 Chunk reuse count distribution");
        printf("  Unique chunks hit at least once : ");
        put_count(r->reuse.count);
        putchar('\n');
        dist_lines(32, "Mean reuse count", &r->reuse, "Max reuse count");
    }
    if (r->calls) {
        heading("Stat 4 \u2014 Rolling (cumulative) token hit rate over "
                "time");
        for (int i = 0; i < 5; i++) {
            char n[32];
            int len = 0;
            for (uint64_t v = r->cumulative_calls[i], d = 0; v || !len;
                 v /= 10, d++) {
                if (d && d % 3 == 0)
                    n[len++] = ',';
                n[len++] = (char)('0' + v % 10);
            }
            printf("  After request %*s", len < 6 ? 6 - len : 0, "");
            while (len)
                putchar(n[--len]);
            printf(" : ");
            put_pct(2, r->cumulative[i]);
            putchar('\n');
        }
    }
    heading("Stat 5 \u2014 Evictions");
    printf("  Total evictions    : ");
    put_count(r->evictions);
    putchar('\n');
    if (r->span.count) {
        heading("Stat 6 \u2014 Global span distribution (chunks between "
                "last store and hit)");
        printf("  Total hit chunks   : ");
        put_count(r->span.count);
        putchar('\n');
        dist_lines(19, "Mean span", &r->span, "Max span");
    }
    if (r->lru_position.count) {
        heading("Stat 7 \u2014 Cache position at hit (0 = MRU, max = LRU)");
        dist_lines(19, "Mean position", &r->lru_position, "Max position");
    }
    printf("%s\n", SEP);
}

