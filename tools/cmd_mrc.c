/*
 * cmd_mrc.c - `lct mrc`: LRU miss-ratio curves of a trace's key
 * references (lib/mrc.c computes every capacity at once), printed at
 * log-spaced capacities as a table, CSV or JSON, and drawn as SVG.
 */
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_READ = 300, OPT_WRITE, OPT_SAMPLE, OPT_SVG };

typedef struct mrc_opts {
    tool_keyops ops;
    double sample;
    const char *svg;
    lct_refs *refs;
    bool failed;
} mrc_opts;

static void help(void)
{
    printf("usage: lct mrc [-q] [-j N] [--csv | --json] [--svg FILE]\n"
           "               [--sample R] [--read PAT] [--write PAT] FILE\n"
           "\n"
           "LRU miss-ratio curves of the trace's key references (see lct\n"
           "keys): every read or write makes its key the most recent; a read\n"
           "hits at capacity C when its key is among the C most recently used\n"
           "distinct keys.  All capacities at once (stack distances); shown\n"
           "at log-spaced capacities in keys, with bytes (keys x the mean key\n"
           "size) and the hit ratio of an LRU cache of that many bytes.\n"
           "\n"
           "  --sample R   SHARDS sampling: keep keys whose id falls under R\n"
           "               (0 < R <= 1), scale distances by 1/R\n"
           "  --svg FILE   also draw the curve as a self-contained SVG chart\n"
           "  --read PAT, --write PAT   which calls are reads and writes\n"
           "               (default submit_prefetch_task, reserve_write)\n"
           "  --csv, --json  other formats\n"
           "  -j N         read the trace with N threads (default: all CPUs\n"
           "               for files of 64 MiB or more)\n");
}

static void on_option(void *ctx, int c, const char *arg)
{
    mrc_opts *o = ctx;
    char *end;
    if (c == OPT_READ || c == OPT_WRITE) {
        tool_keyops_add(&o->ops, c == OPT_WRITE, arg);
    } else if (c == OPT_SVG) {
        o->svg = arg;
    } else if (c == OPT_SAMPLE) {
        errno = 0;
        o->sample = strtod(arg, &end);
        if (errno || *end || !(o->sample > 0 && o->sample <= 1))
            tool_usage_error("mrc", "--sample needs a rate in (0, 1], not "
                             "'%s'", arg);
    }
}

/* Capacities 1, 2, 3, 4, 6, 8, 11, ... (x sqrt 2) up to past every
 * finite distance, where the curve has reached its top.  A sample at rate
 * R cannot tell capacities below 1/R keys apart: they are left out. */
static bool make_curve(const lct_mrc *m, tool_curve *c)
{
    lct_mrc_totals t;
    lct_mrc_totals_get(m, &t);
    uint64_t top = lct_mrc_max_distance(m) + 1;
    size_t cap = 8;
    memset(c, 0, sizeof *c);
    c->keys = malloc(cap * sizeof *c->keys);
    double first = t.sample_rate < 1 ? ceil(1 / t.sample_rate) : 1;
    for (double k = first; c->keys; k *= M_SQRT2) {
        uint64_t keys = (uint64_t)llround(k);
        if (c->n && keys <= c->keys[c->n - 1])
            continue;
        if (c->n == cap && !(c->keys = reallocarray(c->keys, cap *= 2, 8)))
            break;
        c->keys[c->n++] = keys;
        if (keys >= top)
            break;
    }
    c->hit = calloc(c->n + 1, sizeof *c->hit);
    c->mean_bytes = t.mean_key_bytes;
    /* Keys of one size make the byte curve the key curve: shown only
     * when sizes differ. */
    bool vary = t.min_key_bytes != t.max_key_bytes || t.bytes_unknown;
    c->byte_hit = c->mean_bytes > 0 && vary ? calloc(c->n + 1, sizeof(double))
                                            : NULL;
    if (!c->keys || !c->hit || (c->mean_bytes > 0 && vary && !c->byte_hit))
        return false;
    for (size_t i = 0; i < c->n; i++) {
        c->hit[i] = lct_mrc_hit_ratio(m, c->keys[i]);
        if (c->byte_hit)
            c->byte_hit[i] = lct_mrc_byte_hit_ratio(
                m, (uint64_t)llround((double)c->keys[i] * c->mean_bytes));
    }
    c->lo = first;
    c->hi = (double)c->keys[c->n - 1] > 1 ? (double)c->keys[c->n - 1] : 10;
    return true;
}

static void free_curve(tool_curve *c)
{
    free(c->keys);
    free(c->hit);
    free(c->byte_hit);
}

static void put_bytes(double b)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (b >= 1024 && u < 5)
        b /= 1024, u++;
    printf(u ? "%9.1f %-3s" : "%9.0f %-3s", b, units[u]);
}

static void print_text(const lct_mrc_totals *t, const tool_curve *c)
{
    if (t->sample_rate < 1)
        printf("SHARDS sample rate %g: counts are of the sampled keys; "
               "capacities below %.0f keys are not resolved\n",
               t->sample_rate, ceil(1 / t->sample_rate));
    printf("%" PRIu64 " reads, %" PRIu64 " writes, %" PRIu64
           " distinct keys, %" PRIu64 " compulsory misses\n"
           "infinite cache hit ratio %.4f",
           t->reads, t->writes, t->distinct_keys, t->compulsory_misses,
           t->infinite_hit_ratio);
    if (c->mean_bytes > 0)
        printf("; mean key size %.0f bytes", c->mean_bytes);
    printf("\n%12s  %13s  %9s  %10s%s\n", "keys", "bytes", "hit_ratio",
           "miss_ratio", c->byte_hit ? "  byte_hit_ratio" : "");
    for (size_t i = 0; i < c->n; i++) {
        printf("%12" PRIu64 "  ", c->keys[i]);
        if (c->mean_bytes > 0)
            put_bytes((double)c->keys[i] * c->mean_bytes);
        else
            printf("%13s", "-");
        printf("  %9.4f  %10.4f", c->hit[i], 1 - c->hit[i]);
        if (c->byte_hit)
            printf("  %14.4f", c->byte_hit[i]);
        putchar('\n');
    }
}

static void print_csv(const tool_curve *c)
{
    fputs("keys,bytes,hit_ratio,miss_ratio,byte_hit_ratio\r\n", stdout);
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
        fputs("\r\n", stdout);
    }
}

static void print_json(const lct_mrc_totals *t, const tool_curve *c)
{
    printf("{\"sample_rate\":");
    tool_put_json_double(t->sample_rate);
    printf(",\"reads\":%" PRIu64 ",\"writes\":%" PRIu64
           ",\"distinct_keys\":%" PRIu64 ",\"compulsory_misses\":%" PRIu64
           ",\"infinite_hit_ratio\":",
           t->reads, t->writes, t->distinct_keys, t->compulsory_misses);
    tool_put_json_double(t->infinite_hit_ratio);
    fputs(",\"mean_key_bytes\":", stdout);
    tool_put_json_double(c->mean_bytes);
    fputs(",\"curve\":[", stdout);
    for (size_t i = 0; i < c->n; i++) {
        printf("%s{\"keys\":%" PRIu64 ",\"bytes\":", i ? "," : "",
               c->keys[i]);
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
        putchar('}');
    }
    fputs("]}\n", stdout);
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0. */
static size_t utf8_sequence(const unsigned char *p, size_t n)
{
    if (p[0] < 0x80)
        return 1;
    size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
    if (len == 0 || p[0] > 0xf4 || len > n)
        return 0;
    for (size_t k = 1; k < len; k++)
        if ((p[k] & 0xc0) != 0x80)
            return 0;
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
        (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
        return 0; /* overlong, a surrogate, or past U+10FFFF */
    return len;
}

/* The chart's title names the trace: XML gives meaning to < > & and
 * wants UTF-8 without control characters, so those are escaped and every
 * other byte a file name may hold is shown as strvis would (\ooo). */
static void svg_title(const char *trace, bool sampled, char *title,
                      size_t size)
{
    size_t n = (size_t)snprintf(title, size, "LRU hit ratio: ");
    const unsigned char *p = (const unsigned char *)trace;
    size_t len = strlen(trace);
    for (size_t i = 0; i < len && n + 16 < size;) {
        size_t seq = utf8_sequence(p + i, len - i);
        const char *e = p[i] == '<' ? "&lt;" : p[i] == '>' ? "&gt;"
                        : p[i] == '&' ? "&amp;" : NULL;
        if (e) {
            n += (size_t)snprintf(title + n, size - n, "%s", e);
            i++;
        } else if (seq == 0 || (seq == 1 && (p[i] < 0x20 || p[i] == 0x7f))) {
            n += (size_t)snprintf(title + n, size - n, "\\%03o", p[i]);
            i++;
        } else {
            memcpy(title + n, p + i, seq);
            n += seq;
            i += seq;
        }
    }
    snprintf(title + n, size - n, "%s", sampled ? " (sampled)" : "");
}

static bool write_svg(lct_output *out, const char *trace,
                      const lct_mrc_totals *t, const tool_curve *c)
{
    FILE *f = tool_output_stream("mrc", out);
    if (!f) {
        lct_output_abort(out);
        return false;
    }
    char title[1024];
    svg_title(trace, t->sample_rate < 1, title, sizeof title);
    tool_svg_curve(f, c, title);
    return tool_output_finish("mrc", out, f);
}

int cmd_mrc(int argc, char **argv)
{
    static const struct option own[] = {
        {"read", required_argument, NULL, OPT_READ},
        {"write", required_argument, NULL, OPT_WRITE},
        {"sample", required_argument, NULL, OPT_SAMPLE},
        {"svg", required_argument, NULL, OPT_SVG},
        {NULL, 0, NULL, 0}};
    mrc_opts o = {.sample = 1};
    tool_keyops_init(&o.ops, argc);
    tool_cmd cmd = {.name = "mrc",
                    .shared = TOOL_Q | TOOL_J | TOOL_CSV | TOOL_JSON |
                              TOOL_SRC,
                    .own = own, .on_option = on_option, .ctx = &o,
                    .help = help};
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    /* The SVG's path first: one that is the trace, or cannot be written,
     * fails before anything is read. */
    lct_output *svg = NULL;
    if (o.svg && !(svg = tool_output_open("mrc", "--svg", o.svg, &a))) {
        tool_keyops_free(&o.ops);
        return EXIT_REFUSED;
    }
    lct_reader *r = tool_open(a.file, tool_source_flags(&a), a.quiet);
    if (!r) {
        lct_output_abort(svg);
        tool_keyops_free(&o.ops);
        return EXIT_REFUSED;
    }
    tool_keyops_defaults(&o.ops);
    if (lct_refs_new(&o.refs) != LCT_OK)
        tool_usage_error("mrc", "out of memory");
    bool whole;
    o.failed = !tool_keys_collect(r, &o.ops, "mrc", &a, o.refs, &whole);
    lct_mrc *m = NULL;
    lct_error err;
    tool_curve c = {0};
    bool ok = !o.failed &&
              lct_mrc_compute(o.refs, o.sample, &m, &err) == LCT_OK &&
              make_curve(m, &c);
    if (!ok && !o.failed)
        fprintf(stderr, "%s mrc: out of memory\n", tool_name);
    lct_mrc_totals t;
    lct_mrc_totals_get(m, &t);
    if (ok && a.json)
        print_json(&t, &c);
    else if (ok && a.csv)
        print_csv(&c);
    else if (ok)
        print_text(&t, &c);
    if (svg && ok)
        ok = write_svg(svg, tool_input_name(a.file), &t, &c);
    else
        lct_output_abort(svg);
    free_curve(&c);
    lct_mrc_free(m);
    lct_refs_free(o.refs);
    return tool_keys_finish(r, &o.ops, "mrc", a.quiet, ok, whole);
}
