/*
 * sim_data.c - lct sim's report as data: the whole of it as one JSON
 * object (the windows' too), and its distributions as CSV.
 */
#include "tool.h"
#include "sim.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

/* MARK: JSON and CSV */

static void json_dist(const char *name, const lct_sim_dist *d)
{
    printf(",\"%s\":{\"count\":%" PRIu64 ",\"mean\":", name, d->count);
    tool_put_json_double(d->mean);
    printf(",\"max\":%" PRIu64 ",\"p25\":%" PRIu64 ",\"p50\":%" PRIu64
           ",\"p75\":%" PRIu64 ",\"p90\":%" PRIu64 ",\"p99\":%" PRIu64
           ",\"log2_bins\":[",
           d->max, d->p25, d->p50, d->p75, d->p90, d->p99);
    int last = 64;
    while (last > 0 && !d->bins[last])
        last--;
    for (int i = 0; i <= last; i++)
        printf("%s%" PRIu64, i ? "," : "", d->bins[i]);
    fputs("]}", stdout);
}

/* The policy and the rule when they are not LMCache's simulator's. */
bool tool_sim_own_policy(const lct_sim_options *o)
{
    return (o->policy && o->policy != LCT_POLICY_LRU) || o->per_key ||
           (o->l1_policy && o->l1_policy != LCT_POLICY_LRU);
}

const char *tool_sim_policy_name(lct_policy_kind k)
{
    return lct_policy_name(k ? k : LCT_POLICY_LRU);
}

/* The L1's figures open the object when the simulation has one. */
static void print_json_l1(const lct_sim_report *r, const lct_l1_stats *l1)
{
    if (l1) {
        printf("{\"l1\":{\"capacity\":%" PRIu64 ",\"capacity_unit\":"
               "\"%s\",\"keys\":%" PRIu64 ",\"keys_hit\":%" PRIu64
               ",\"chunks\":%" PRIu64 ",\"hit_chunks\":%" PRIu64
               ",\"keys_to_l2\":%" PRIu64 ",\"writes_through\":%" PRIu64
               ",\"evictions\":%" PRIu64 "},\"both_token_hit_rate\":",
               l1->capacity, l1->in_bytes ? "bytes" : "keys", l1->keys,
               l1->keys_hit, l1->positions, l1->positions_hit,
               l1->keys_to_l2, l1->writes, l1->evictions);
        tool_put_json_double(tool_sim_both_rate(r, l1));
        putchar(',');
    } else {
        putchar('{');
    }
}

/* The report's five distributions, by the names JSON and CSV give them. */
static const struct {
    const char *name;
    size_t at; /* offsetof the lct_sim_dist in lct_sim_report */
} dists[] = {
    {"hit_prefix_chunks", offsetof(lct_sim_report, leading)},
    {"request_chunks", offsetof(lct_sim_report, call_positions)},
    {"chunk_reuse", offsetof(lct_sim_report, reuse)},
    {"span", offsetof(lct_sim_report, span)},
    {"lru_position", offsetof(lct_sim_report, lru_position)},
};

static const lct_sim_dist *dist_at(const lct_sim_report *r, size_t i)
{
    return (const lct_sim_dist *)(const void *)((const char *)r +
                                                dists[i].at);
}

/* From the mean request hit rate on: the per-request distributions,
 * the cumulative rates and the series over time. */
static void json_request_tail(const lct_sim_report *r, uint32_t window)
{
    tool_put_json_double(r->call_hit_mean);
    const char *names[] = {"p25", "p50", "p75", "p90", "p99"};
    for (int i = 0; i < 5; i++) {
        printf(",\"%s\":", names[i]);
        tool_put_json_double(r->call_hit_p[i]);
    }
    fputs(",\"bins_5pct\":[", stdout);
    for (int i = 0; i < 21; i++)
        printf("%s%" PRIu64, i ? "," : "", r->call_hit_bins[i]);
    fputs("]}", stdout);
    for (size_t i = 0; i < sizeof dists / sizeof dists[0]; i++)
        json_dist(dists[i].name, dist_at(r, i));
    fputs(",\"cumulative\":[", stdout);
    for (int i = 0; i < 5; i++) {
        printf("%s{\"after_requests\":%" PRIu64 ",\"token_hit_rate\":",
               i ? "," : "", r->cumulative_calls[i]);
        tool_put_json_double(r->cumulative[i]);
        putchar('}');
    }
    fputs("],\"series\":[", stdout);
    for (size_t i = 0; i < r->nseries; i++) {
        printf("%s{\"requests\":%" PRIu64 ",\"t_mono\":", i ? "," : "",
               r->series[i].calls);
        tool_put_json_double(r->series[i].seconds);
        fputs(",\"token_hit_rate\":", stdout);
        tool_put_json_double(r->series[i].hit_ratio);
        putchar('}');
    }
    if (r->windows) {
        fputs("],\"windows\":[", stdout);
        tool_sim_windows_json(r, window);
    }
}

void tool_sim_json(const lct_sim_report *r, uint64_t chunk,
                       bool tokens, const lct_l1_stats *l1,
                       const lct_sim_options *o)
{
    print_json_l1(r, l1);
    if (tool_sim_own_policy(o))
        printf("\"policy\":\"%s\",\"per_key\":%s,\"l1_policy\":\"%s\",",
               tool_sim_policy_name(o->policy), o->per_key ? "true" : "false",
               tool_sim_policy_name(o->l1_policy));
    if (o->nquotas) { /* lmcache-isolated-lru's, salt by salt */
        fputs("\"quotas\":{", stdout);
        for (size_t i = 0; i < o->nquotas; i++) {
            fputs(i ? "," : "", stdout);
            tool_put_json_str(o->quotas[i].cache_salt.ptr,
                              o->quotas[i].cache_salt.len);
            printf(":%" PRIu64, o->quotas[i].limit);
        }
        fputs("},", stdout);
    }
    printf("\"capacity\":%" PRIu64 ",\"capacity_unit\":\"%s\","
           "\"requests\":%" PRIu64 ",\"chunk_size\":",
           r->capacity, r->in_bytes ? "bytes" : "keys", r->calls);
    chunk ? (void)printf("%" PRIu64, chunk) : (void)fputs("null", stdout);
    if (tokens)
        printf(",\"total_tokens\":%" PRIu64 ",\"hit_tokens\":%" PRIu64
               ",\"miss_tokens\":%" PRIu64,
               r->tokens, r->hit_tokens, r->tokens - r->hit_tokens);
    else
        fputs(",\"total_tokens\":null,\"hit_tokens\":null,"
              "\"miss_tokens\":null", stdout);
    printf(",\"chunks\":%" PRIu64 ",\"hit_chunks\":%" PRIu64
           ",\"token_hit_rate\":", r->positions, r->positions_hit);
    tool_put_json_double(r->tokens ? (double)r->hit_tokens /
                                         (double)r->tokens : 0);
    printf(",\"keys\":%" PRIu64 ",\"keys_hit\":%" PRIu64
           ",\"references\":%" PRIu64 ",\"distinct_keys\":%" PRIu64
           ",\"capacity_keys\":%" PRIu64 ",\"key_bytes\":%" PRIu64
           ",\"mean_key_bytes\":",
           r->keys, r->keys_hit, r->references, r->distinct_keys,
           r->capacity_keys, r->key_bytes);
    tool_put_json_double(r->mean_key_bytes);
    printf(",\"occupancy_keys\":%" PRIu64 ",\"occupancy_bytes\":%" PRIu64
           ",\"evictions\":%" PRIu64 ",\"bypassed\":%" PRIu64
           ",\"refused\":%" PRIu64
           ",\"requests_no_hit\":%" PRIu64 ",\"requests_all_hit\":%" PRIu64
           ",\"request_hit_rate\":{\"mean\":",
           r->occupancy_keys, r->occupancy_bytes, r->evictions, r->bypassed,
           r->refused, r->calls_no_hit, r->calls_all_hit);
    json_request_tail(r, o->window_seconds);
    fputs("]}\n", stdout);
}

static void csv_dist(const char *name, const lct_sim_dist *d)
{
    printf("%s,%" PRIu64 ",", name, d->count);
    tool_put_json_double(d->mean);
    printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
           ",%" PRIu64 "\r\n",
           d->max, d->p25, d->p50, d->p75, d->p90, d->p99);
}

void tool_sim_csv(const lct_sim_report *r)
{
    fputs("distribution,count,mean,max,p25,p50,p75,p90,p99\r\n", stdout);
    for (size_t i = 0; i < sizeof dists / sizeof dists[0]; i++)
        csv_dist(dists[i].name, dist_at(r, i));
}

