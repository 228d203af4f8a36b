/*
 * l2_print.c - an L2-level trace's tasks (l2_level.c gathers them) as lct
 * info's block and lct stat's table: per adapter and kind the counts,
 * latency in microseconds (mean, nearest-rank p50, p90, p99, min, max),
 * bytes, throughput and the found ratio, in text, JSON or CSV.
 */
#include "l2_level.h"
#include "tool.h"

#include <inttypes.h>
#include <stdio.h>

/* MARK: printing */

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0;
}

void tool_l2_print_info(const tool_l2 *l2)
{
    fputs("  l2:\n", stdout);
    for (unsigned a = 0; a < TOOL_L2_ADAPTERS; a++) {
        if (!l2->seen[a])
            continue;
        printf("    adapter %u:\n", a);
        for (unsigned k = 0; k < TOOL_L2_KINDS; k++) {
            const tool_l2_tasks *t = &l2->k[a][k];
            printf("      %-7s submitted %" PRIu64, tool_l2_kind_name(k),
                   t->submitted);
            if (k <= TOOL_L2_LOAD)
                printf(", completed %" PRIu64, t->completed);
            putchar('\n');
        }
    }
    char msg[160];
    bool bad = tool_l2_footer_problem(l2->footers, l2->recorder_dropped,
                                      l2->event_bus_dropped, msg, sizeof msg);
    printf("    footer: %s\n", bad ? msg : "present, nothing dropped");
}

void tool_l2_print_info_json(const tool_l2 *l2)
{
    fputs(",\"l2\":{\"adapters\":[", stdout);
    bool first = true;
    for (unsigned a = 0; a < TOOL_L2_ADAPTERS; a++) {
        if (!l2->seen[a])
            continue;
        printf("%s{\"adapter_index\":%u", first ? "" : ",", a);
        first = false;
        for (unsigned k = 0; k < TOOL_L2_KINDS; k++) {
            const tool_l2_tasks *t = &l2->k[a][k];
            printf(",\"%s\":{\"submitted\":%" PRIu64, tool_l2_kind_name(k),
                   t->submitted);
            if (k <= TOOL_L2_LOAD)
                printf(",\"completed\":%" PRIu64, t->completed);
            putchar('}');
        }
        putchar('}');
    }
    printf("],\"footers\":%" PRIu64 ",\"recorder_dropped_count\":%" PRIu64
           ",\"event_bus_dropped_count\":%" PRIu64 "}",
           l2->footers, l2->recorder_dropped, l2->event_bus_dropped);
}

/* The nearest-rank percentile p of sorted latencies, in microseconds. */
static double pct_us(const tool_l2_latencies *l, unsigned p)
{
    return l->n ? l->v[tool_nearest_rank(l->n, p)] * 1e6 : 0;
}

/* One kind's figures: count, latency (us) mean p50 p90 p99 min max,
 * bytes, throughput (bytes/s from its first submission to its last
 * completion), the found ratio, unpaired. */
typedef struct row {
    uint64_t count, bytes, unpaired, orphans;
    double lat[6], throughput, ratio;
    bool has_ratio;
} row;

static row row_of(const tool_l2_tasks *t, unsigned kind)
{
    const tool_l2_latencies *l = &t->latency;
    row r = {.count = kind <= TOOL_L2_LOAD ? t->completed : t->submitted,
             .bytes = t->bytes, .unpaired = t->unpaired,
             .orphans = t->orphans};
    if (l->n) {
        r.lat[0] = l->sum / (double)l->n * 1e6;
        r.lat[1] = pct_us(l, 50), r.lat[2] = pct_us(l, 90);
        r.lat[3] = pct_us(l, 99);
        r.lat[4] = l->min * 1e6, r.lat[5] = l->max * 1e6;
    }
    double window = t->last - t->first;
    r.throughput = window > 0 ? (double)t->bytes / window : 0;
    r.has_ratio = kind <= TOOL_L2_LOAD;
    r.ratio = kind == TOOL_L2_STORE
                  ? ratio(t->found, t->found + t->failed)
                  : ratio(t->found, t->completed_keys);
    return r;
}

static const char *const lat_names[6] = {"mean", "p50", "p90", "p99",
                                         "min", "max"};

static void print_json_stat(const tool_l2 *l2)
{
    fputs("{\"adapters\":[", stdout);
    bool first = true;
    for (unsigned a = 0; a < TOOL_L2_ADAPTERS; a++) {
        if (!l2->seen[a])
            continue;
        printf("%s{\"adapter_index\":%u", first ? "" : ",", a);
        first = false;
        for (unsigned k = 0; k < TOOL_L2_KINDS; k++) {
            row r = row_of(&l2->k[a][k], k);
            printf(",\"%s\":{\"count\":%" PRIu64, tool_l2_kind_name(k), r.count);
            if (k <= TOOL_L2_LOAD) {
                fputs(",\"latency_us\":{", stdout);
                for (int i = 0; i < 6; i++) {
                    printf("%s\"%s\":", i ? "," : "", lat_names[i]);
                    tool_put_json_double(r.lat[i]);
                }
                printf("},\"bytes\":%" PRIu64 ",\"throughput_bytes_per_second\":",
                       r.bytes);
                tool_put_json_double(r.throughput);
                printf(",\"%s\":", k == TOOL_L2_STORE    ? "success_ratio"
                                   : k == TOOL_L2_LOOKUP ? "hit_ratio"
                                                         : "success_ratio");
                tool_put_json_double(r.ratio);
                printf(",\"unpaired\":%" PRIu64 ",\"completed_unsubmitted\":%"
                       PRIu64, r.unpaired, r.orphans);
            }
            putchar('}');
        }
        putchar('}');
    }
    printf("],\"footers\":%" PRIu64 ",\"unreadable\":%" PRIu64 "}\n",
           l2->footers, l2->unreadable);
}

static void print_csv_stat(const tool_l2 *l2)
{
    fputs("adapter,kind,count,lat_mean_us,lat_p50_us,lat_p90_us,lat_p99_us,"
          "lat_min_us,lat_max_us,bytes,throughput_bytes_per_second,ratio,"
          "unpaired\r\n", stdout);
    for (unsigned a = 0; a < TOOL_L2_ADAPTERS; a++) {
        for (unsigned k = 0; l2->seen[a] && k < TOOL_L2_KINDS; k++) {
            row r = row_of(&l2->k[a][k], k);
            printf("%u,%s,%" PRIu64, a, tool_l2_kind_name(k), r.count);
            for (int i = 0; i < 6; i++) {
                putchar(',');
                if (k <= TOOL_L2_LOAD)
                    tool_put_json_double(r.lat[i]);
            }
            printf(",%" PRIu64 ",", r.bytes);
            if (k <= TOOL_L2_LOAD)
                tool_put_json_double(r.throughput);
            putchar(',');
            if (r.has_ratio)
                tool_put_json_double(r.ratio);
            printf(",%" PRIu64 "\r\n", r.unpaired);
        }
    }
}

void tool_l2_print_stat(const tool_l2 *l2, bool json, bool csv)
{
    if (json) {
        print_json_stat(l2);
        return;
    }
    if (csv) {
        print_csv_stat(l2);
        return;
    }
    for (unsigned a = 0; a < TOOL_L2_ADAPTERS; a++) {
        if (!l2->seen[a])
            continue;
        printf("adapter %u\n%-7s %8s %9s %9s %9s %9s %9s %9s %14s %10s %7s "
               "%8s\n",
               a, "kind", "count", "mean_us", "p50_us", "p90_us", "p99_us",
               "min_us", "max_us", "bytes", "MB/s", "ratio", "unpaired");
        for (unsigned k = 0; k < TOOL_L2_KINDS; k++) {
            row r = row_of(&l2->k[a][k], k);
            printf("%-7s %8" PRIu64, tool_l2_kind_name(k), r.count);
            if (k > TOOL_L2_LOAD) {
                printf(" %9s %9s %9s %9s %9s %9s %14s %10s %7s %8s\n", "-",
                       "-", "-", "-", "-", "-", "-", "-", "-", "-");
                continue;
            }
            for (int i = 0; i < 6; i++)
                printf(" %9.1f", r.lat[i]);
            printf(" %14" PRIu64 " %10.1f %7.4f %8" PRIu64 "\n", r.bytes,
                   r.throughput / 1e6, r.ratio, r.unpaired);
        }
    }
    printf("latency: completion's t_mono less the submission's, paired by "
           "(operation, adapter_index, task_id); ratio: stores' succeeded "
           "objects, lookups' hits, loads' successes over their keys\n");
    char msg[160];
    if (tool_l2_footer_problem(l2->footers, l2->recorder_dropped,
                               l2->event_bus_dropped, msg, sizeof msg))
        printf("WARNING: %s\n", msg);
}
