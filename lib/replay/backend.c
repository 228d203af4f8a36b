/*
 * backend.c - choosing a backend from a URI (the caller's plug-ins first,
 * then the built-ins), the names of operation kinds, and the null
 * backend, which does no I/O so a run measures the engine alone.
 */
#include <string.h>

#include "base/error_internal.h"
#include "lct_replay.h"

const char *lct_replay_kind_name(lct_replay_kind kind)
{
    static const char *const names[] = {"store", "lookup", "load", "delete"};
    return (unsigned)kind < LCT_REPLAY_KINDS ? names[kind] : "?";
}

static lct_status null_open(const char *arg, const lct_backend_config *cfg,
                            void **state, lct_error *err)
{
    (void)cfg;
    if (arg && *arg)
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "backend null takes no argument (got '%s')", arg);
    *state = NULL;
    return LCT_OK;
}

static void null_close(void *state) { (void)state; }

static lct_status null_store(void *state, unsigned worker,
                             const lct_backend_key *key, const void *data,
                             size_t len, int *replaced, lct_error *err)
{
    (void)state, (void)worker, (void)key, (void)data, (void)len, (void)err;
    *replaced = -1;
    return LCT_OK;
}

/* Nothing is ever there, so a replay on null issues no loads. */
static lct_status null_lookup(void *state, unsigned worker,
                              const lct_backend_key *key, bool *present,
                              lct_error *err)
{
    (void)state, (void)worker, (void)key, (void)err;
    *present = false;
    return LCT_OK;
}

static lct_status null_load(void *state, unsigned worker,
                            const lct_backend_key *key, void *buf, size_t cap,
                            size_t *len, bool *present, lct_error *err)
{
    (void)state, (void)worker, (void)key, (void)buf, (void)cap, (void)err;
    *len = 0;
    *present = false;
    return LCT_OK;
}

static lct_status null_remove(void *state, unsigned worker,
                              const lct_backend_key *key, lct_error *err)
{
    (void)state, (void)worker, (void)key, (void)err;
    return LCT_OK;
}

const lct_backend_ops *lct_backend_null(void)
{
    static const lct_backend_ops ops = {
        "null", null_open, null_close, null_store,
        null_lookup, null_load, null_remove, NULL};
    return &ops;
}

static bool names(const lct_backend_ops *ops, const char *uri,
                  const char **arg)
{
    size_t n = strlen(ops->name);
    if (strncmp(uri, ops->name, n) != 0)
        return false;
    if (uri[n] == '\0') {
        *arg = uri + n;
        return true;
    }
    if (uri[n] != ':')
        return false;
    *arg = uri + n + 1;
    return true;
}

lct_status lct_backend_find(const char *uri,
                            const lct_backend_ops *const *extra, size_t n,
                            const lct_backend_ops **ops, const char **arg,
                            lct_error *err)
{
    if (!uri || !ops || !arg)
        return lct__fail(err, LCT_ERR_INVALID, 0, 0, "no backend named");
    for (size_t i = 0; i < n; i++)
        if (extra[i] && names(extra[i], uri, arg)) {
            *ops = extra[i];
            return LCT_OK;
        }
    const lct_backend_ops *builtin[] = {lct_backend_null(), lct_backend_mem(),
                                        lct_backend_dir()};
    for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++)
        if (names(builtin[i], uri, arg)) {
            *ops = builtin[i];
            return LCT_OK;
        }
    char shown[128];
    lct__vis_name(shown, sizeof shown, uri);
    return lct__fail(err, LCT_ERR_NOT_FOUND, 0, 0,
                     "unknown backend '%s'", shown);
}
