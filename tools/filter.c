/*
 * filter.c - which qualnames a --qualname pattern selects: a glob when it
 * holds glob characters, else the exact name or a suffix after a dot
 * (`submit_prefetch_task` selects `...StorageManager.submit_prefetch_task`),
 * and saying so when a pattern selected nothing.
 */
#include "tool.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static bool is_glob(const char *p)
{
    return strpbrk(p, "*?[") != NULL;
}

/* A name-or-suffix pattern against a view (no NUL needed). */
static bool name_or_suffix(const char *pattern, lct_str q)
{
    size_t n = strlen(pattern);
    if (lct_str_eq(q, pattern))
        return true;
    return q.len > n && q.ptr[q.len - n - 1] == '.' &&
           lct_str_has_suffix(q, pattern);
}

/* fnmatch needs a C string; long qualnames go to the heap. */
static bool glob_matches(const char *pattern, lct_str q)
{
    char stack[512];
    char *s = q.len < sizeof stack ? stack : malloc(q.len + 1);
    if (!s)
        return false;
    memcpy(s, q.ptr, q.len);
    s[q.len] = '\0';
    /* an embedded NUL never matches */
    bool hit = strlen(s) == q.len && fnmatch(pattern, s, 0) == 0;
    if (s != stack)
        free(s);
    return hit;
}

static bool pattern_hit(const tool_patterns *p, size_t i, lct_str q)
{
    return is_glob(p->text[i]) ? glob_matches(p->text[i], q)
                               : name_or_suffix(p->text[i], q);
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

void tool_patterns_report(const tool_patterns *p, const char *cmd)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->hits[i])
            continue;
        fprintf(stderr, "%s %s: --qualname '", tool_name, cmd);
        tool_put_vis(stderr, p->text[i], strlen(p->text[i]));
        fputs("' matched no record\n", stderr);
    }
}
