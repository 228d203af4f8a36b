/*
 * svg.c - the miss-ratio chart of `lct mrc --svg`: one self-contained SVG
 * file (no scripts, no external fonts or styles) that any browser opens;
 * hit ratio against cache capacity on a log axis, labelled in keys below
 * and in GiB above.
 */
#include "tool.h"
#include "mrc.h"

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

/* Decades along the bottom in keys, and the same places in GiB on top. */
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
        if (mean_bytes > 0)
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
                       "fill=\"#555\">%.3g</text>\n",
                    x, TOP - 8, d * mean_bytes / 1073741824.0);
    }
    if (mean_bytes > 0)
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" "
                   "fill=\"#555\">GiB</text>\n", W - RIGHT, TOP - 24);
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

/* One line a policy other than LRU, each a colour, named in a legend
 * under LRU's. */
static void policy_lines(FILE *f, const tool_curve *c,
                         const tool_mrc_policies *p, int legend_y)
{
    static const char *colours[] = {"#2f9e44", "#9c36b5", "#e8590c",
                                    "#0c8599", "#c2255c", "#5c940d",
                                    "#495057", "#f08c00"};
    size_t shown = 0;
    for (size_t k = 0; k < p->n; k++) {
        if (p->kind[k] == LCT_POLICY_LRU)
            continue;
        const char *colour = colours[shown % 8];
        char style[64];
        snprintf(style, sizeof style, "stroke=\"%s\"%s", colour,
                 p->kind[k] == LCT_POLICY_BELADY
                     ? " stroke-dasharray=\"2 3\""
                     : "");
        line(f, c, p->hit + k * c->n, style);
        fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s%s</text>\n",
                LEFT + 10, legend_y + 16 * (int)shown, colour,
                lct_policy_name(p->kind[k]),
                p->kind[k] == LCT_POLICY_BELADY ? " (the ceiling, per key)"
                                                : "");
        shown++;
    }
}

void tool_svg_curve(FILE *f, const tool_curve *c, const char *title)
{
    tool_svg_curves(f, c, NULL, title);
}

void tool_svg_curves(FILE *f, const tool_curve *c,
                     const tool_mrc_policies *policies, const char *title)
{
    frame(f, title, policies ? "hit ratio" : "hit ratio (LRU)");
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
    line(f, c, c->hit, "stroke=\"#1f6feb\"");
    if (c->byte_hit)
        line(f, c, c->byte_hit, "stroke=\"#d9480f\" stroke-dasharray=\"6 4\"");
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#1f6feb\">keys-capacity LRU%s"
               "</text>\n", LEFT + 10, TOP + 18,
            c->hit_min ? " (mean of the samples; band: min to max)" : "");
    if (c->byte_hit)
        fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#d9480f\">bytes-capacity "
                   "LRU (keys x mean key size)</text>\n", LEFT + 10, TOP + 34);
    if (policies)
        policy_lines(f, c, policies, TOP + (c->byte_hit ? 50 : 34));
    fputs("</svg>\n", f);
}
