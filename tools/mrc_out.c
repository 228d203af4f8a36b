/*
 * mrc_out.c - what `lct mrc` prints: the totals and the curve's table,
 * its CSV and its JSON, per key, by the prefix rule (token hit ratios),
 * and with an L1 in front (both tiers' ratios beside L2's).
 */
#include "tool.h"
#include "mrc.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void put_bytes(double b)
{
    char text[32];
    tool_format_bytes(text, sizeof text, b);
    char *unit = strchr(text, ' ');
    *unit = '\0';
    printf("%9s %-3s", text, unit + 1);
}

/* What the samples kept against what a fair sample would keep, and the
 * SHARDS-adj adjustment each applied, as one line. */
static void print_sampling(const lct_mrc_totals *t, unsigned k)
{
    uint64_t kept_lo = UINT64_MAX, kept_hi = 0;
    double adj_lo = INFINITY, adj_hi = -INFINITY;
    for (unsigned s = 0; s < k; s++) {
        kept_lo = t[s].kept_references < kept_lo ? t[s].kept_references
                                                 : kept_lo;
        kept_hi = t[s].kept_references > kept_hi ? t[s].kept_references
                                                 : kept_hi;
        adj_lo = fmin(adj_lo, t[s].adjustment);
        adj_hi = fmax(adj_hi, t[s].adjustment);
    }
    printf("SHARDS sample rate %g, seed %" PRIu64, t->sample_rate, t->seed);
    if (k > 1)
        printf(" to %" PRIu64 " (%u samples: the mean curve, and the "
               "band from min to max)", t->seed + k - 1, k);
    printf(": counts below are of the first sample's keys; capacities below %.0f keys "
           "are not resolved\nkept %" PRIu64, ceil(1 / t->sample_rate),
           kept_lo);
    if (kept_hi != kept_lo)
        printf(" to %" PRIu64, kept_hi);
    printf(" of %" PRIu64 " references (expected %.0f); SHARDS-adj "
           "adjustment %+.1f", t->references,
           (double)t->references * t->sample_rate, adj_lo);
    if (adj_hi != adj_lo)
        printf(" to %+.1f", adj_hi);
    printf(" requests\n");
}

/* What L1 did, before L2's table; its size as the user gave it. */
static void print_l1(const lct_l1_stats *l1, const char *label)
{
    printf("L1 of %s", label);
    if (l1->in_bytes)
        printf(" (%" PRIu64 " bytes)", l1->capacity);
    else if (strspn(label, "0123456789") == strlen(label))
        printf(" keys");
    else
        printf(" (%" PRIu64 " keys)", l1->capacity);
    printf(" in front: it served %" PRIu64 " of %" PRIu64
           " looked-up keys (%.4f) and %" PRIu64 " of %" PRIu64
           " chunk positions;\nL2 was asked %" PRIu64 " keys and written "
           "%" PRIu64 " stores through; the table is L2's, with both "
           "tiers' ratios\n",
           l1->keys_hit,
           l1->keys, l1->keys ? (double)l1->keys_hit / (double)l1->keys : 0,
           l1->positions_hit, l1->positions, l1->keys_to_l2, l1->writes);
}

static void print_text(const tool_mrc_view *v)
{
    const lct_mrc_totals *t = v->t;
    unsigned k = v->k;
    const tool_curve *c = v->c;
    if (t->sample_rate < 1)
        print_sampling(t, k);
    if (t->every_reference)
        printf("%" PRIu64 " requests (every reference, as libCacheSim "
               "counts)", t->reads);
    else
        printf("%" PRIu64 " reads, %" PRIu64 " writes", t->reads, t->writes);
    printf(", %" PRIu64 " distinct keys, %" PRIu64 " compulsory misses\n",
           t->distinct_keys, t->compulsory_misses);
    if (t->prefix) {
        printf("prefix rule: %" PRIu64 " lookups of %" PRIu64 " chunk "
               "positions", t->calls, t->positions);
        if (v->chunk_size)
            printf(", %" PRIu64 " tokens at %" PRIu64 " a chunk",
                   t->positions * v->chunk_size, v->chunk_size);
        putchar('\n');
    }
    if (v->l1)
        print_l1(v->l1, v->l1_label);
    printf("infinite cache hit ratio %.4f", t->infinite_hit_ratio);
    if (c->mean_bytes > 0)
        printf("; mean key size %.0f bytes", c->mean_bytes);
    printf("\n%12s  %13s  %9s  %10s%s%s%s%s%s", "keys", "bytes", "hit_ratio",
           "miss_ratio", c->byte_hit ? "  byte_hit_ratio" : "",
           c->hit_min ? "  hit_ratio_min  hit_ratio_max" : "",
           v->token_hit ? "  token_hit_ratio" : "",
           v->token_hit && c->token_byte_hit ? "  byte_token_hit_ratio" : "",
           v->combined_hit ? "  both_hit_ratio  both_token_hit_ratio" : "");
    for (size_t j = 0; v->policies && j < v->policies->n; j++)
        printf(v->policies->token_hit ? "  %9s tok" : "  %9s",
               lct_policy_name(v->policies->kind[j]));
    putchar('\n');
    for (size_t i = 0; i < c->n; i++) {
        printf("%12" PRIu64 "  ", c->keys[i]);
        if (c->mean_bytes > 0)
            put_bytes((double)c->keys[i] * c->mean_bytes);
        else
            printf("%13s", "-");
        printf("  %9.4f  %10.4f", c->hit[i], 1 - c->hit[i]);
        if (c->byte_hit)
            printf("  %14.4f", c->byte_hit[i]);
        if (c->hit_min)
            printf("  %13.4f  %13.4f", c->hit_min[i], c->hit_max[i]);
        if (v->token_hit)
            printf("  %15.4f", v->token_hit[i]);
        if (v->token_hit && c->token_byte_hit)
            printf("  %20.4f", c->token_byte_hit[i]);
        if (v->combined_hit)
            printf("  %14.4f  %20.4f", v->combined_hit[i],
                   v->combined_token_hit[i]);
        for (size_t j = 0; v->policies && j < v->policies->n; j++)
            printf(v->policies->token_hit ? "  %13.4f" : "  %9.4f",
                   v->policies->token_hit
                       ? v->policies->token_hit[j * c->n + i]
                       : v->policies->hit[j * c->n + i]);
        putchar('\n');
    }
}

static void print_csv(const tool_mrc_view *v)
{
    const tool_curve *c = v->c;
    fputs("keys,bytes,hit_ratio,miss_ratio,byte_hit_ratio", stdout);
    fputs(c->hit_min ? ",hit_ratio_min,hit_ratio_max" : "", stdout);
    fputs(v->token_hit ? ",token_hit_ratio,byte_token_hit_ratio" : "",
          stdout);
    fputs(v->combined_hit ? ",both_hit_ratio,both_token_hit_ratio" : "",
          stdout);
    for (size_t k = 0; v->policies && k < v->policies->n; k++) {
        printf(",%s_hit_ratio", lct_policy_name(v->policies->kind[k]));
        if (v->policies->token_hit)
            printf(",%s_token_hit_ratio",
                   lct_policy_name(v->policies->kind[k]));
    }
    fputs("\r\n", stdout);
    for (size_t i = 0; i < c->n; i++) {
        printf("%" PRIu64 ",", c->keys[i]);
        if (c->mean_bytes > 0)
            printf("%.0f", (double)c->keys[i] * c->mean_bytes);
        putchar(',');
        tool_put_json_double(c->hit[i]);
        putchar(',');
        tool_put_json_double(1 - c->hit[i]);
        putchar(',');
        if (c->byte_hit)
            tool_put_json_double(c->byte_hit[i]);
        if (c->hit_min) {
            putchar(',');
            tool_put_json_double(c->hit_min[i]);
            putchar(',');
            tool_put_json_double(c->hit_max[i]);
        }
        if (v->token_hit) {
            putchar(',');
            tool_put_json_double(v->token_hit[i]);
            putchar(',');
            if (c->token_byte_hit)
                tool_put_json_double(c->token_byte_hit[i]);
        }
        if (v->combined_hit) {
            putchar(',');
            tool_put_json_double(v->combined_hit[i]);
            putchar(',');
            tool_put_json_double(v->combined_token_hit[i]);
        }
        for (size_t k = 0; v->policies && k < v->policies->n; k++) {
            putchar(',');
            tool_put_json_double(v->policies->hit[k * c->n + i]);
            if (v->policies->token_hit) {
                putchar(',');
                tool_put_json_double(v->policies->token_hit[k * c->n + i]);
            }
        }
        fputs("\r\n", stdout);
    }
}

static void print_json_samples(const lct_mrc_totals *t, unsigned k)
{
    fputs(",\"samples\":[", stdout);
    for (unsigned s = 0; s < k; s++) {
        printf("%s{\"seed\":%" PRIu64 ",\"kept_references\":%" PRIu64
               ",\"expected_references\":",
               s ? "," : "", t[s].seed, t[s].kept_references);
        tool_put_json_double((double)t[s].references * t[s].sample_rate);
        fputs(",\"adjustment\":", stdout);
        tool_put_json_double(t[s].adjustment);
        putchar('}');
    }
    putchar(']');
}

static void print_json_point(const tool_mrc_view *v, size_t i)
{
    const tool_curve *c = v->c;
    printf("%s{\"keys\":%" PRIu64 ",\"bytes\":", i ? "," : "", c->keys[i]);
    if (c->mean_bytes > 0)
        printf("%.0f", (double)c->keys[i] * c->mean_bytes);
    else
        fputs("null", stdout);
    fputs(",\"hit_ratio\":", stdout);
    tool_put_json_double(c->hit[i]);
    fputs(",\"miss_ratio\":", stdout);
    tool_put_json_double(1 - c->hit[i]);
    fputs(",\"byte_hit_ratio\":", stdout);
    if (c->byte_hit)
        tool_put_json_double(c->byte_hit[i]);
    else
        fputs("null", stdout);
    if (c->hit_min) {
        fputs(",\"hit_ratio_min\":", stdout);
        tool_put_json_double(c->hit_min[i]);
        fputs(",\"hit_ratio_max\":", stdout);
        tool_put_json_double(c->hit_max[i]);
    }
    if (v->token_hit) {
        fputs(",\"token_hit_ratio\":", stdout);
        tool_put_json_double(v->token_hit[i]);
        fputs(",\"byte_token_hit_ratio\":", stdout);
        if (c->token_byte_hit)
            tool_put_json_double(c->token_byte_hit[i]);
        else
            fputs("null", stdout);
    }
    if (v->combined_hit) {
        fputs(",\"both_hit_ratio\":", stdout);
        tool_put_json_double(v->combined_hit[i]);
        fputs(",\"both_token_hit_ratio\":", stdout);
        tool_put_json_double(v->combined_token_hit[i]);
    }
    for (size_t k = 0; v->policies && k < v->policies->n; k++) {
        printf("%s\"%s\":", k ? "," : ",\"policy_hit_ratio\":{",
               lct_policy_name(v->policies->kind[k]));
        tool_put_json_double(v->policies->hit[k * c->n + i]);
    }
    if (v->policies)
        putchar('}');
    for (size_t k = 0; v->policies && v->policies->token_hit &&
                       k < v->policies->n; k++) {
        printf("%s\"%s\":", k ? "," : ",\"policy_token_hit_ratio\":{",
               lct_policy_name(v->policies->kind[k]));
        tool_put_json_double(v->policies->token_hit[k * c->n + i]);
    }
    if (v->policies && v->policies->token_hit)
        putchar('}');
    putchar('}');
}

static void print_json(const tool_mrc_view *v)
{
    const lct_mrc_totals *t = v->t;
    unsigned k = v->k;
    const tool_curve *c = v->c;
    printf("{\"requests\":\"%s\",\"sample_rate\":",
           t->every_reference ? "all" : "reads");
    tool_put_json_double(t->sample_rate);
    if (t->sample_rate < 1)
        print_json_samples(t, k);
    printf(",\"references\":%" PRIu64 ",\"reads\":%" PRIu64
           ",\"writes\":%" PRIu64 ",\"distinct_keys\":%" PRIu64
           ",\"compulsory_misses\":%" PRIu64 ",\"infinite_hit_ratio\":",
           t->references, t->reads, t->writes, t->distinct_keys,
           t->compulsory_misses);
    tool_put_json_double(t->infinite_hit_ratio);
    if (t->prefix) {
        printf(",\"prefix\":true,\"calls\":%" PRIu64 ",\"positions\":%"
               PRIu64 ",\"chunk_size\":", t->calls, t->positions);
        if (v->chunk_size)
            printf("%" PRIu64 ",\"tokens\":%" PRIu64, v->chunk_size,
                   t->positions * v->chunk_size);
        else
            fputs("null,\"tokens\":null", stdout);
    }
    if (v->l1)
        printf(",\"l1\":{\"capacity\":%" PRIu64 ",\"capacity_unit\":\"%s\","
               "\"keys\":%" PRIu64 ",\"keys_hit\":%" PRIu64
               ",\"positions\":%" PRIu64 ",\"positions_hit\":%" PRIu64
               ",\"keys_to_l2\":%" PRIu64 ",\"writes_through\":%" PRIu64
               ",\"evictions\":%" PRIu64 "}",
               v->l1->capacity, v->l1->in_bytes ? "bytes" : "keys",
               v->l1->keys, v->l1->keys_hit, v->l1->positions,
               v->l1->positions_hit, v->l1->keys_to_l2, v->l1->writes,
               v->l1->evictions);
    fputs(",\"mean_key_bytes\":", stdout);
    tool_put_json_double(c->mean_bytes);
    fputs(",\"curve\":[", stdout);
    for (size_t i = 0; i < c->n; i++)
        print_json_point(v, i);
    fputs("]}\n", stdout);
}

void tool_mrc_print(const tool_args *a, const tool_mrc_view *v)
{
    if (a->json)
        print_json(v);
    else if (a->csv)
        print_csv(v);
    else
        print_text(v);
}
