/*
 * svg.c - the miss-ratio chart of `lct mrc --svg`: one self-contained SVG
 * file (no scripts, no external fonts or styles) that any browser opens;
 * hit ratios against cache capacity on a log axis, labelled in keys below
 * and in bytes above (round values of one unit), a line and a legend
 * entry per ratio shown, and --target's answer marked on the curve.
 */
#include "tool.h"
#include "mrc.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

enum { W = 760, H = 460, LEFT = 70, RIGHT = 30, TOP = 60, BOTTOM = 60 };

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

size_t tool_svg_escape(char *out, size_t size, const char *text)
{
    /* XML gives meaning to < > & and wants UTF-8 without control
     * characters: those are escaped, and every other byte a file name
     * may hold is shown as strvis would (\ooo). */
    const unsigned char *p = (const unsigned char *)text;
    size_t len = strlen(text), n = 0;
    if (size)
        out[0] = '\0';
    for (size_t i = 0; i < len && n + 16 < size;) {
        size_t seq = utf8_sequence(p + i, len - i);
        const char *e = p[i] == '<' ? "&lt;" : p[i] == '>' ? "&gt;"
                        : p[i] == '&' ? "&amp;" : NULL;
        if (e) {
            n += (size_t)snprintf(out + n, size - n, "%s", e);
            i++;
        } else if (seq == 0 || (seq == 1 && (p[i] < 0x20 || p[i] == 0x7f))) {
            n += (size_t)snprintf(out + n, size - n, "\\%03o", p[i]);
            i++;
        } else {
            memcpy(out + n, p + i, seq);
            n += seq;
            i += seq;
            out[n] = '\0';
        }
    }
    return n;
}

static double x_of(double keys, double lo, double hi)
{
    double span = log10(hi) - log10(lo);
    double t = span > 0 ? (log10(keys) - log10(lo)) / span : 0;
    return LEFT + t * (W - LEFT - RIGHT);
}

static double y_of(double ratio)
{
    return TOP + (1 - ratio) * (H - TOP - BOTTOM);
}

static void frame(FILE *f, const char *title, const char *y_label)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"%d\" y=\"20\" font-size=\"15\">",
            W, H, W, H, LEFT);
    fputs(title, f); /* the caller's text, already escaped */
    fputs("</text>\n", f);
    for (int i = 0; i <= 10; i++) { /* y grid, hit ratio 0..1 */
        double y = y_of(i / 10.0);
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
                   "stroke=\"#ddd\"/>\n<text x=\"%d\" y=\"%.1f\" "
                   "text-anchor=\"end\">%.1f</text>\n",
                LEFT, W - RIGHT, y, y, LEFT - 6, y + 4, i / 10.0);
    }
    fprintf(f, "<text transform=\"translate(18 %d) rotate(-90)\" "
               "text-anchor=\"middle\">%s</text>\n"
               "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">cache "
               "capacity (keys, log scale)</text>\n",
            (TOP + H - BOTTOM) / 2, y_label, (LEFT + W - RIGHT) / 2, H - 12);
}

/* The unit capacities in bytes read best in over [lo, hi] bytes. */
static void byte_unit(double hi, double *unit, const char **name)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (hi / pow(1024, u) >= 4096 && u < 5)
        u++;
    *unit = pow(1024, u);
    *name = names[u];
}

/* Decades along the bottom in keys; on top, the same axis in bytes,
 * ticked at round values (1-2-5 steps) of the unit it reads best in. */
static void x_axis(FILE *f, double lo, double hi, double mean_bytes)
{
    for (double d = pow(10, floor(log10(lo))); d <= hi * 1.0001; d *= 10) {
        if (d < lo)
            continue;
        double x = x_of(d, lo, hi);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
                   "stroke=\"#ddd\"/>\n<text x=\"%.1f\" y=\"%d\" "
                   "text-anchor=\"middle\">%.0f</text>\n",
                x, x, TOP, H - BOTTOM, x, H - BOTTOM + 16, d);
    }
    if (mean_bytes <= 0)
        return;
    double unit;
    const char *name;
    byte_unit(hi * mean_bytes, &unit, &name);
    double blo = lo * mean_bytes / unit, bhi = hi * mean_bytes / unit;
    /* at most about 8 labels: 1-2-5 in each decade, or decades alone */
    bool dense = log10(bhi / blo) <= 2.5;
    for (double d = pow(10, floor(log10(blo))); d <= bhi * 1.0001; d *= 10)
        for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
            double v = d * m;
            if ((m > 1 && !dense) || v < blo * 0.9999 || v > bhi * 1.0001)
                continue;
            fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
                       "stroke=\"#555\"/>\n<text x=\"%.1f\" y=\"%d\" "
                       "text-anchor=\"middle\" fill=\"#555\">%g</text>\n",
                    x_of(v * unit / mean_bytes, lo, hi),
                    x_of(v * unit / mean_bytes, lo, hi), TOP - 4, TOP,
                    x_of(v * unit / mean_bytes, lo, hi), TOP - 8, v);
        }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" "
               "fill=\"#555\">%s (keys x mean key size)</text>\n",
            W - RIGHT, TOP - 24, name);
}

static void line(FILE *f, const tool_curve *c, const double *ratio,
                 const char *style)
{
    fputs("<polyline fill=\"none\" stroke-width=\"2\" ", f);
    fputs(style, f);
    fputs(" points=\"", f);
    for (size_t i = 0; i < c->n; i++)
        fprintf(f, "%.1f,%.1f ", x_of((double)c->keys[i], c->lo, c->hi),
                y_of(ratio[i]));
    fputs("\"/>\n", f);
}

/* The samples' min..max band under the median line. */
static void band(FILE *f, const tool_curve *c)
{
    fputs("<polygon fill=\"#1f6feb\" fill-opacity=\"0.18\" stroke=\"none\" "
          "points=\"", f);
    for (size_t i = 0; i < c->n; i++)
        fprintf(f, "%.1f,%.1f ", x_of((double)c->keys[i], c->lo, c->hi),
                y_of(c->hit_max[i]));
    for (size_t i = c->n; i-- > 0;)
        fprintf(f, "%.1f,%.1f ", x_of((double)c->keys[i], c->lo, c->hi),
                y_of(c->hit_min[i]));
    fputs("\"/>\n", f);
}

/* A line and its legend entry, one under the other. */
typedef struct legend {
    FILE *f;
    const tool_curve *c;
    int y;
} legend;

static void curve_line(legend *lg, const double *ratio, const char *colour,
                       const char *dash, const char *label)
{
    char style[96];
    snprintf(style, sizeof style, "stroke=\"%s\"%s%s%s", colour,
             dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
             dash ? "\"" : "");
    line(lg->f, lg->c, ratio, style);
    fprintf(lg->f, "<text x=\"%d\" y=\"%d\" fill=\"%s\">", LEFT + 10,
            lg->y, colour);
    fputs(label, lg->f); /* ours, or escaped by the caller */
    fputs("</text>\n", lg->f);
    lg->y += 16;
}

/* One line a policy other than LRU, each a colour: token hit ratios
 * under the prefix rule, else per key. */
static void policy_lines(legend *lg, const tool_mrc_policies *p)
{
    static const char *colours[] = {"#2f9e44", "#9c36b5", "#e8590c",
                                    "#0c8599", "#c2255c", "#5c940d",
                                    "#495057", "#f08c00"};
    size_t shown = 0;
    for (size_t k = 0; k < p->n; k++) {
        if (p->kind[k] == LCT_POLICY_LRU)
            continue;
        char label[96];
        bool belady = p->kind[k] == LCT_POLICY_BELADY;
        snprintf(label, sizeof label, "%s%s%s", lct_policy_name(p->kind[k]),
                 p->token_hit ? " token hit ratio" : "",
                 belady ? (p->token_hit ? " (Belady order)"
                                        : " (the ceiling, per key)")
                        : "");
        const double *v = p->token_hit ? p->token_hit : p->hit;
        curve_line(lg, v + k * lg->c->n, colours[shown++ % 8],
                   belady ? "2 3" : NULL, label);
    }
}

/* The answer to --target: a dashed line at the ratio, a dot where the
 * curve first reaches it, and the capacity in words. */
static void target_mark(FILE *f, const tool_curve *c,
                        const tool_svg_target *t)
{
    double y = y_of(t->ratio);
    fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
               "stroke=\"#c92a2a\" stroke-dasharray=\"4 4\"/>\n",
            LEFT, W - RIGHT, y, y);
    if (!t->keys || (double)t->keys < c->lo || (double)t->keys > c->hi) {
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
                   "fill=\"#c92a2a\">target %g: %s</text>\n",
                W - RIGHT - 4, y - 6, t->ratio,
                t->keys ? "off the chart" : "unreachable");
        return;
    }
    double x = x_of((double)t->keys, c->lo, c->hi);
    char bytes[32] = "";
    if (t->bytes)
        tool_format_bytes(bytes, sizeof bytes, (double)t->bytes);
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#c92a2a\"/>\n"
               "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
               "fill=\"#c92a2a\">%s%starget %g: %" PRIu64
               " keys%s%s%s</text>\n",
            x, y, x - 8, y - 8, t->whose ? t->whose : "",
            t->whose ? " " : "", t->ratio, t->keys, t->bytes ? " (" : "",
            bytes, t->bytes ? ")" : "");
}

void tool_svg_curves(FILE *f, const tool_svg_chart *ch)
{
    const tool_curve *c = ch->view->c;
    const tool_mrc_view *v = ch->view;
    frame(f, ch->title, v->policies || v->token_hit ? "hit ratio"
                                                    : "hit ratio (LRU)");
    if (c->n == 0) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
                   "font-size=\"15\">No key references to draw: the trace "
                   "(or the --read/--write patterns) selected none.</text>\n"
                   "</svg>\n",
                (LEFT + W - RIGHT) / 2, (TOP + H - BOTTOM) / 2);
        return;
    }
    x_axis(f, c->lo, c->hi, c->mean_bytes);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
               "fill=\"none\" stroke=\"#333\"/>\n",
            LEFT, TOP, W - LEFT - RIGHT, H - TOP - BOTTOM);
    if (c->hit_min)
        band(f, c);
    legend lg = {.f = f, .c = c, .y = TOP + 18};
    char label[160];
    snprintf(label, sizeof label, "%s LRU, hit ratio per key%s",
             v->l1 ? "L2's" : "keys-capacity",
             c->hit_min ? " (mean of the samples; band: min to max)" : "");
    curve_line(&lg, c->hit, "#1f6feb", v->token_hit ? "6 4" : NULL, label);
    if (c->byte_hit && !v->token_hit)
        curve_line(&lg, c->byte_hit, "#d9480f", "6 4",
                   "bytes-capacity LRU (keys x mean key size)");
    if (v->token_hit) {
        snprintf(label, sizeof label, "%s LRU, token hit ratio (prefix rule)",
                 v->l1 ? "L2's" : "keys-capacity");
        curve_line(&lg, v->token_hit, "#0b7285", NULL, label);
        if (c->token_byte_hit)
            curve_line(&lg, c->token_byte_hit, "#d9480f", NULL,
                       "bytes-capacity LRU (keys x mean key size), token "
                       "hit ratio");
    }
    if (v->l1) {
        char size[48];
        tool_svg_escape(size, sizeof size, ch->l1_label);
        snprintf(label, sizeof label, "both tiers (an L1 of %s in front), "
                 "token hit ratio", size);
        curve_line(&lg, v->combined_token_hit, "#862e9c", NULL, label);
    }
    if (v->policies)
        policy_lines(&lg, v->policies);
    if (ch->target)
        target_mark(f, c, ch->target);
    fputs("</svg>\n", f);
}

bool tool_mrc_svg_lines(outfile *out, const tool_args *a,
                        const tool_curve *c, const tool_svg_lines *lines)
{
    static const char *colours[] = {"#1f6feb", "#2f9e44", "#9c36b5",
                                    "#e8590c", "#0c8599", "#c2255c",
                                    "#5c940d", "#495057"};
    FILE *f = tool_output_stream("mrc", out);
    if (!f) {
        outfile_abort(out);
        return false;
    }
    char title[1024];
    size_t n = (size_t)snprintf(title, sizeof title, "LRU hit ratio by %s: ",
                                lines->title);
    n += tool_svg_escape(title + n, sizeof title - n - 64,
                         a->noperands > 1 ? "merged traces"
                                          : tool_input_name(a->file));
    snprintf(title + n, sizeof title - n, "%s",
             lines->isolated ? " (each group alone)"
                             : " (each group in the shared cache)");
    frame(f, title, "hit ratio");
    if (c->n) {
        x_axis(f, c->lo, c->hi, c->mean_bytes);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                   "fill=\"none\" stroke=\"#333\"/>\n",
                LEFT, TOP, W - LEFT - RIGHT, H - TOP - BOTTOM);
    }
    legend lg = {.f = f, .c = c, .y = TOP + 18};
    for (size_t k = 0; c->n && k < lines->n; k++) {
        char label[240];
        size_t at = (size_t)snprintf(label, sizeof label, "%s ",
                                     lines->title);
        if (!tool_svg_escape(label + at, sizeof label - at - 16,
                             lines->names[k]))
            snprintf(label + at, sizeof label - at, "(none)");
        curve_line(&lg, lines->ratio + k * c->n, colours[k % 8],
                   k >= 8 ? "6 4" : NULL, label);
    }
    fputs("</svg>\n", f);
    return tool_output_finish("mrc", out, f);
}

/* The chart's title names the trace (escaped for XML by svg.c). */
static void svg_title(const char *trace, const tool_mrc_view *v,
                      const char *l1_label, char *title, size_t size)
{
    const lct_mrc_totals *t = v->t;
    bool sampled = t->sample_rate < 1;
    size_t n = (size_t)snprintf(title, size, "%s hit ratio: ",
                                v->policies ? "Policies'" : "LRU");
    n += tool_svg_escape(title + n, size - n - 128, trace);
    n += (size_t)snprintf(title + n, size - n, "%s%s%s",
                          t->every_reference ? " (requests: every reference)"
                                             : " (requests: reads)",
                          t->prefix && !v->l1 ? " (prefix rule)" : "",
                          sampled ? " (sampled)" : "");
    if (v->l1 && n + 48 < size) {
        n += (size_t)snprintf(title + n, size - n, " (L2 behind an L1 of ");
        n += tool_svg_escape(title + n, 48, l1_label);
        snprintf(title + n, size - n, ")");
    }
}

bool tool_mrc_write_svg(outfile *out, const char *trace,
                        const tool_mrc_view *v, const char *l1_label,
                        const tool_svg_target *target)
{
    FILE *f = tool_output_stream("mrc", out);
    if (!f) {
        outfile_abort(out);
        return false;
    }
    char title[1024];
    svg_title(trace, v, l1_label, title, sizeof title);
    tool_svg_chart chart = {.view = v, .title = title, .l1_label = l1_label,
                            .target = target};
    tool_svg_curves(f, &chart);
    return tool_output_finish("mrc", out, f);
}
