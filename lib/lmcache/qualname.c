/*
 * qualname.c - which calls a pattern names: the way `lct` options and the
 * lct_keys SQL table choose calls by qualname (the exact name, a suffix
 * after a dot, or a shell glob), so every front end chooses alike; and
 * the operation an L2-level event's keys are.
 */
#include "lct_cache.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static bool is_glob(const char *p)
{
    return strpbrk(p, "*?[") != NULL;
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

bool lct_qualname_match(lct_str qualname, const char *pattern)
{
    if (!pattern)
        return false;
    if (is_glob(pattern))
        return glob_matches(pattern, qualname);
    size_t n = strlen(pattern);
    if (lct_str_eq(qualname, pattern))
        return true;
    return qualname.len > n && qualname.ptr[qualname.len - n - 1] == '.' &&
           lct_str_has_suffix(qualname, pattern);
}

const char *lct_l2_key_op(lct_str q)
{
    static const struct {
        const char *qualname, *op;
    } ops[] = {{"l2.store.submitted", "store"},
               {"l2.lookup_task.submitted", "lookup"},
               {"l2.load_task.submitted", "load"},
               {"l2.unlock.submitted", "unlock"},
               {"l2.delete.submitted", "delete"}};
    if (q.len < 3 || memcmp(q.ptr, "l2.", 3) != 0)
        return NULL;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (lct_str_eq(q, ops[i].qualname))
            return ops[i].op;
    return NULL;
}
