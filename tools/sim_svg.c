/*
 * sim_svg.c - the chart of `lct sim --svg`: the seven panels of LMCache's
 * cache-simulator chart in one self-contained SVG file (no scripts, no
 * external fonts): the per-request hit-rate histogram, hit prefix
 * lengths, chunk reuse, the cumulative hit rate over t_mono, request
 * sizes, spans and LRU positions at hits, with --window the hit rate
 * per window, and a summary panel (both tiers' rate with an L1).
 */
#include "tool.h"
#include "mrc.h"
#include "sim.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

enum { PW = 330, PH = 250, COLS = 4, MARGIN_TOP = 50 };
enum { PL = 58, PR = 14, PT = 30, PB = 48 }; /* inside a panel */

typedef struct panel {
    FILE *f;
    int x, y; /* the panel's top left */
} panel;

static double inner_w(void) { return PW - PL - PR; }
static double inner_h(void) { return PH - PT - PB; }

static void panel_frame(const panel *p, const char *title, const char *xl,
                        const char *yl)
{
    fprintf(p->f, "<g transform=\"translate(%d %d)\">\n"
                  "<text x=\"%d\" y=\"18\" font-size=\"13\" "
                  "font-weight=\"bold\">%s</text>\n"
                  "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" "
                  "fill=\"none\" stroke=\"#999\"/>\n"
                  "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">%s"
                  "</text>\n<text transform=\"translate(14 %.0f) "
                  "rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
            p->x, p->y, PL, title, PL, PT, inner_w(), inner_h(),
            PL + inner_w() / 2, PH - 8, xl, PT + inner_h() / 2, yl);
}

static void panel_end(const panel *p)
{
    fputs("</g>\n", p->f);
}

/* A y axis from 0 to top (counts, or a ratio when ratio), every tick
 * in one format: the one the top needs. */
static void y_ticks(const panel *p, double top, bool ratio)
{
    double unit = ratio ? 0.01 : top >= 1e6 ? 1e6 : top >= 1e4 ? 1e3 : 1;
    const char *suffix = ratio ? "%" : unit == 1e6 ? "M" : unit == 1e3 ? "k"
                                                                       : "";
    /* one decimal when a step is not whole in the unit */
    bool decimal = !ratio && fmod(top / 4 / unit, 1) != 0 && top / unit < 40;
    for (int i = 0; i <= 4; i++) {
        double y = PT + inner_h() * (1 - i / 4.0), v = top * i / 4.0;
        fprintf(p->f, "<line x1=\"%d\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"#eee\"/>\n<text x=\"%d\" y=\"%.1f\" "
                      "text-anchor=\"end\" font-size=\"10\">%.*f%s</text>\n",
                PL, PL + inner_w(), y, y, PL - 4, y + 3, decimal ? 1 : 0,
                v / unit, v > 0 || ratio ? suffix : "");
    }
}

/* The least round axis top at least max: four steps of 1, 2 or 5 times
 * a power of ten, so every tick is a round count. */
static double round_top(double max)
{
    if (max <= 4)
        return 4;
    double raw = max / 4, step = pow(10, floor(log10(raw)));
    step = raw <= step ? step : raw <= 2 * step ? 2 * step
           : raw <= 5 * step ? 5 * step : 10 * step;
    return 4 * step;
}

/* Ticks along a time axis from lo to hi seconds at round steps (1, 2 or
 * 5 times a power of ten, about four of them). */
static void time_ticks(const panel *p, double lo, double hi)
{
    double raw = (hi - lo) / 4, step = pow(10, floor(log10(raw)));
    step = raw <= step ? step : raw <= 2 * step ? 2 * step
           : raw <= 5 * step ? 5 * step : 10 * step;
    for (double t = ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
        fprintf(p->f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" "
                      "font-size=\"10\">%g</text>\n",
                PL + inner_w() * (t - lo) / (hi - lo), PT + inner_h() + 13, t);
}

/* Bars of counts[0..n), each labelled by label(i) every `every` bars. */
static void bars(const panel *p, const uint64_t *counts, int n,
                 void (*label)(FILE *, int), int every)
{
    uint64_t top = 1;
    for (int i = 0; i < n; i++)
        top = counts[i] > top ? counts[i] : top;
    double axis = round_top((double)top);
    y_ticks(p, axis, false);
    double w = inner_w() / (n ? n : 1);
    for (int i = 0; i < n; i++) {
        double h = inner_h() * (double)counts[i] / axis;
        fprintf(p->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                      "height=\"%.1f\" fill=\"#4878a8\"/>\n",
                PL + i * w + 0.5, PT + inner_h() - h, w > 2 ? w - 1 : w, h);
        if (i % every == 0) {
            fprintf(p->f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" "
                          "font-size=\"10\">",
                    PL + (i + 0.5) * w, PT + inner_h() + 13);
            label(p->f, i);
            fputs("</text>\n", p->f);
        }
    }
}

static void pct_label(FILE *f, int i)
{
    fprintf(f, i == 20 ? "100" : "%d", 5 * i);
}

static void log2_label(FILE *f, int i)
{
    if (i == 0)
        fputs("0", f);
    else if (i <= 10)
        fprintf(f, "%" PRIu64, (uint64_t)1 << (i - 1));
    else
        fprintf(f, "2^%d", i - 1);
}

/* A log2 histogram's bars, up to its last non-empty bin. */
static void log2_bars(const panel *p, const lct_sim_dist *d)
{
    int n = 65;
    while (n > 1 && !d->bins[n - 1])
        n--;
    bars(p, d->bins, n, log2_label, n > 12 ? 3 : n > 6 ? 2 : 1);
}

static void cumulative(const panel *p, const lct_sim_report *r)
{
    y_ticks(p, 1, true);
    if (!r->nseries)
        return;
    double lo = r->series[0].seconds, hi = r->series[r->nseries - 1].seconds;
    if (hi <= lo)
        hi = lo + 1;
    fputs("<polyline fill=\"none\" stroke=\"#c0504d\" stroke-width=\"2\" "
          "points=\"", p->f);
    for (size_t i = 0; i < r->nseries; i++)
        fprintf(p->f, "%.1f,%.1f ",
                PL + inner_w() * (r->series[i].seconds - lo) / (hi - lo),
                PT + inner_h() * (1 - r->series[i].hit_ratio));
    fputs("\"/>\n", p->f);
    time_ticks(p, lo, hi);
}

/* --window: each window's token hit rate, a step a window. */
static void windows(const panel *p, const lct_sim_report *r,
                    uint32_t window)
{
    y_ticks(p, 1, true);
    if (!r->nwindows)
        return;
    double lo = (double)r->windows[0].t_start,
           hi = (double)(r->windows[r->nwindows - 1].t_start + window);
    fputs("<polyline fill=\"none\" stroke=\"#1f6feb\" stroke-width=\"2\" "
          "points=\"", p->f);
    for (size_t i = 0; i < r->nwindows; i++) {
        const lct_sim_window *w = &r->windows[i];
        double rate = w->tokens ? (double)w->hit_tokens / (double)w->tokens
                                : 0;
        double y = PT + inner_h() * (1 - rate);
        for (int edge = 0; edge < 2; edge++)
            fprintf(p->f, "%.1f,%.1f ",
                    PL + inner_w() * ((double)(w->t_start + (uint64_t)edge * window) -
                                      lo) / (hi - lo), y);
    }
    fputs("\"/>\n", p->f);
    time_ticks(p, lo, hi);
}

typedef struct size_text {
    char text[48];
} size_text;

/* The L1's size in words: bytes in binary units, or keys. */
static size_text l1_size(const lct_l1_stats *l1)
{
    size_text t;
    if (l1->in_bytes)
        tool_format_bytes(t.text, sizeof t.text, (double)l1->capacity);
    else
        snprintf(t.text, sizeof t.text, "%" PRIu64 " keys", l1->capacity);
    return t;
}

static void summary(const panel *p, const lct_sim_report *r, uint64_t chunk)
{
    double rate = r->tokens ? (double)r->hit_tokens / (double)r->tokens : 0;
    fprintf(p->f, "<g transform=\"translate(%d %d)\" font-size=\"12\">\n"
                  "<text x=\"10\" y=\"18\" font-size=\"13\" "
                  "font-weight=\"bold\">Summary</text>\n"
                  "<text x=\"10\" y=\"48\">requests: %" PRIu64 "</text>\n",
            p->x, p->y, r->calls);
    if (r->has_l1)
        fprintf(p->f, "<text x=\"10\" y=\"70\">token hit rate: %.2f%% "
                      "both tiers, %.2f%% L2 alone</text>\n"
                      "<text x=\"10\" y=\"180\">behind an L1 of %s</text>\n",
                100 * tool_sim_both_rate(r, &r->l1), 100 * rate,
                l1_size(&r->l1).text);
    else
        fprintf(p->f, "<text x=\"10\" y=\"70\">token hit rate: %.2f%%"
                      "</text>\n", 100 * rate);
    if (chunk)
        fprintf(p->f, "<text x=\"10\" y=\"92\">tokens: %" PRIu64
                      " (%" PRIu64 " a chunk)</text>\n",
                r->tokens, chunk);
    if (r->in_bytes)
        fprintf(p->f, "<text x=\"10\" y=\"114\">capacity: %.2f GiB</text>\n",
                (double)r->capacity / 1073741824.0);
    else
        fprintf(p->f, "<text x=\"10\" y=\"114\">capacity: %" PRIu64
                      " keys</text>\n", r->capacity);
    fprintf(p->f, "<text x=\"10\" y=\"136\">evictions: %" PRIu64 "</text>\n"
                  "<text x=\"10\" y=\"158\">occupancy: %" PRIu64
                  " keys</text>\n</g>\n",
            r->evictions, r->occupancy_keys);
}

static panel at(FILE *f, int i)
{
    return (panel){f, (i % COLS) * PW, MARGIN_TOP + (i / COLS) * PH};
}

bool tool_sim_svg(outfile *out, const char *trace,
                  const lct_sim_report *r, uint64_t chunk, uint32_t window)
{
    int rows = window ? 3 : 2;
    FILE *f = tool_output_stream("sim", out);
    if (!f) {
        outfile_abort(out);
        return false;
    }
    char name[1024];
    tool_svg_escape(name, sizeof name, trace);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"12\" y=\"28\" font-size=\"16\">LMCache cache "
               "simulator (prefix rule, LRU): %s</text>\n",
            COLS * PW, MARGIN_TOP + rows * PH, COLS * PW,
            MARGIN_TOP + rows * PH, name);
    struct {
        const char *title, *x, *y;
    } t[] = {
        {"1. Per-request token hit rate", "hit rate (%)", "requests"},
        {"2. Hit prefix length", "chunks hit (log2 bins)", "requests"},
        {"3. Chunk reuse", "hits per chunk (log2 bins)", "chunks"},
        {"4. Cumulative token hit rate", "t_mono (whole seconds)",
         "hit rate"},
        {"5. Request size", "chunks (log2 bins)", "requests"},
        {"6. Span from last use to hit", "references (log2 bins)", "hits"},
        {"7. LRU position at hit", "position, 0 = MRU (log2 bins)", "hits"},
    };
    const lct_sim_dist *d[] = {NULL, &r->leading, &r->reuse, NULL,
                               &r->call_positions, &r->span,
                               &r->lru_position};
    for (int i = 0; i < 7; i++) {
        panel p = at(f, i);
        panel_frame(&p, t[i].title, t[i].x, t[i].y);
        if (i == 0)
            bars(&p, r->call_hit_bins, 21, pct_label, 4);
        else if (i == 3)
            cumulative(&p, r);
        else
            log2_bars(&p, d[i]);
        panel_end(&p);
    }
    panel p = at(f, 7);
    if (window) {
        char title[64];
        snprintf(title, sizeof title, "8. Token hit rate per %" PRIu32 " s",
                 window);
        panel_frame(&p, title, "t_mono (whole seconds)", "hit rate");
        windows(&p, r, window);
        panel_end(&p);
        p = at(f, 8);
    }
    summary(&p, r, chunk);
    fputs("</svg>\n", f);
    return tool_output_finish("sim", out, f);
}
