/*
 * replay_backend.c - what lct replay's storage and L2 runs share
 * (replay.h): the backend a URI names, --output-dir made before a run,
 * and --compare's directory for each backend.
 */
#include "replay.h"
#include "tool.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef LCT_HAVE_REDIS
#include "lct_redis.h"
#endif

void replay_find_backend(const char *uri, const lct_backend_ops **ops,
                         const char **arg)
{
#ifdef LCT_HAVE_REDIS
    const lct_backend_ops *extra[] = {lct_backend_redis()};
    size_t nextra = 1;
#else
    const lct_backend_ops *const *extra = NULL;
    size_t nextra = 0;
    if (strncmp(uri, "redis://", 8) == 0)
        tool_usage_error("replay", "%s: the redis backend is not built: "
                         "configure did not find hiredis "
                         "(libhiredis-dev); install it and configure again",
                         uri);
#endif
    lct_error err;
    if (lct_backend_find(uri, extra, nextra, ops, arg, &err) != LCT_OK)
        tool_usage_error("replay", "%s: the backends are null, "
                         "mem:CAPACITY, dir:PATH and redis://HOST:PORT",
                         err.message);
}

/* --output-dir made (if missing) and checked before the run, so a run
 * is never thrown away for want of a place to report it. */
bool replay_prepare_output_dir(const char *dir)
{
    struct stat sb;
    const char *why = NULL;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        why = strerror(errno);
    else if (stat(dir, &sb) != 0)
        why = strerror(errno);
    else if (!S_ISDIR(sb.st_mode))
        why = "not a directory";
    else if (access(dir, W_OK | X_OK) != 0)
        why = strerror(errno);
    if (!why)
        return true;
    fprintf(stderr, "lct replay: --output-dir ");
    tool_put_vis(stderr, dir, strlen(dir));
    fprintf(stderr, ": %s (nothing was replayed)\n", why);
    return false;
}

/* --compare --output-dir D: backend A's reports in D/A-<uri>, B's in
 * D/B-<uri>, the URI with anything but letters, digits, '.', '-' and '_'
 * made '_' (so "mem:2000" gives D/A-mem_2000). */
void replay_compare_dir(char *out, size_t size, const char *dir, int which,
                        const char *uri)
{
    int n = snprintf(out, size, "%s/%c-", dir, which ? 'B' : 'A');
    for (size_t i = 0; uri[i] && n >= 0 && (size_t)n + 1 < size && i < 64;
         i++) {
        unsigned char c = (unsigned char)uri[i];
        out[n++] = isalnum(c) || c == '.' || c == '-' || c == '_' ? (char)c
                                                                 : '_';
        out[n] = '\0';
    }
}
