/*
 * filter.c - the record filters dump and stat share: which qualnames a
 * --qualname pattern selects (a glob when it holds glob characters, else
 * the exact name or a suffix after a dot: `submit_prefetch_task` selects
 * `...StorageManager.submit_prefetch_task`), saying so when a pattern
 * selected nothing; and the --since/--until window, on t_mono for a number
 * of seconds, on t_wall for a UTC time such as 2026-12-01T10:00:00Z.
 */
#include "tool.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool pattern_hit(const tool_patterns *p, size_t i, lct_str q)
{
    return lct_qualname_match(q, p->text[i]);
}

bool tool_qualname_selects(const tool_patterns *p, lct_str q)
{
    if (p->n == 0)
        return true;
    for (size_t i = 0; i < p->n; i++)
        if (pattern_hit(p, i, q))
            return true;
    return false;
}

bool tool_qualname_wanted(tool_patterns *p, lct_str q)
{
    if (p->n == 0)
        return true;
    bool any = false;
    for (size_t i = 0; i < p->n; i++) {
        if (pattern_hit(p, i, q)) {
            p->hits[i]++;
            any = true;
        }
    }
    return any;
}

void tool_patterns_report(const tool_patterns *p, const char *cmd,
                          const char *option)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->hits[i])
            continue;
        fprintf(stderr, "%s %s: %s '", tool_name, cmd, option);
        tool_put_vis(stderr, p->text[i], strlen(p->text[i]));
        fputs("' matched no record\n", stderr);
    }
}

/* YYYY-MM-DDTHH:MM:SS[.frac][Z]: Unix seconds, or false. */
static bool parse_utc(const char *arg, double *out)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int used = 0;
    if (sscanf(arg, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
               &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &used) != 6)
        return false;
    const char *rest = arg + used;
    double frac = 0;
    if (*rest == '.') {
        char *end;
        frac = strtod(rest, &end);
        rest = end;
    }
    if (*rest == 'Z')
        rest++;
    if (*rest != '\0' || tm.tm_mon < 1 || tm.tm_mon > 12)
        return false;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return false;
    *out = (double)t + frac;
    return true;
}

void tool_window_set(tool_window *w, const char *cmd, bool until,
                     const char *arg)
{
    double v;
    bool wall = strchr(arg, 'T') != NULL;
    if (wall && !parse_utc(arg, &v))
        tool_usage_error(cmd, "%s '%s' is not a UTC time like "
                         "2026-12-01T10:00:00Z",
                         until ? "--until" : "--since", arg);
    if (!wall)
        v = tool_parse_seconds(cmd, until ? "--until" : "--since", arg);
    tool_bound *b = until ? &w->until : &w->since;
    b->set = true;
    b->wall = wall;
    b->value = v;
}

bool tool_window_holds(const tool_window *w, const lct_record *rec)
{
    const tool_bound *s = &w->since, *u = &w->until;
    if (s->set && !((s->wall ? rec->t_wall : rec->t_mono) >= s->value))
        return false;
    return !u->set || (u->wall ? rec->t_wall : rec->t_mono) <= u->value;
}
