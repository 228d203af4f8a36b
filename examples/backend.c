/*
 * backend.c - a harness's own store plugged into lct_replay_run: a
 * fixed-size table of key ids that forgets the older key on a collision
 * (a direct-mapped cache), replayed as fast as it goes.
 *
 *     cc backend.c -o backend $(pkg-config --static --cflags --libs lct)
 *     ./backend trace.lct [SLOTS]
 */
#include <lct.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct table {
    size_t slots;
    uint64_t ids[]; /* 0: empty */
} table;

static lct_status t_open(const char *arg, const lct_backend_config *cfg,
                         void **state, lct_error *err)
{
    (void)cfg, (void)err;
    size_t slots = arg && *arg ? strtoul(arg, NULL, 10) : 1024;
    table *t = calloc(1, sizeof *t + (slots ? slots : 1) * sizeof(uint64_t));
    if (!t)
        return LCT_ERR_NOMEM;
    t->slots = slots ? slots : 1;
    *state = t;
    return LCT_OK;
}

static void t_close(void *state) { free(state); }
/* One worker only (the default -c 1), so no lock. */
static lct_status t_store(void *state, unsigned worker,
                          const lct_backend_key *key, const void *data,
                          size_t len, int *replaced, lct_error *err)
{
    (void)worker, (void)data, (void)len, (void)err;
    table *t = state;
    uint64_t *slot = &t->ids[key->id % t->slots];
    *replaced = *slot == key->id;
    *slot = key->id;
    return LCT_OK;
}

static lct_status t_lookup(void *state, unsigned worker,
                           const lct_backend_key *key, bool *present,
                           lct_error *err)
{
    (void)worker, (void)err;
    table *t = state;
    *present = t->ids[key->id % t->slots] == key->id;
    return LCT_OK;
}

static lct_status t_load(void *state, unsigned worker,
                         const lct_backend_key *key, void *buf, size_t cap,
                         size_t *len, bool *present, lct_error *err)
{
    (void)buf, (void)cap;
    *len = 0; /* ids only: the bytes are not kept */
    return t_lookup(state, worker, key, present, err);
}

static lct_status t_remove(void *state, unsigned worker,
                           const lct_backend_key *key, lct_error *err)
{
    (void)worker, (void)err;
    uint64_t *slot = &((table *)state)->ids[key->id % ((table *)state)->slots];
    *slot = *slot == key->id ? 0 : *slot;
    return LCT_OK;
}

int main(int argc, char **argv)
{
    static const lct_backend_ops ops = {"table", t_open, t_close, t_store,
                                        t_lookup, t_load, t_remove, NULL};
    lct_reader *r;
    lct_error err;
    void *state;
    if (argc < 2 || lct_open(argv[1], 0, &r, &err) != LCT_OK) {
        fprintf(stderr, "usage: backend trace.lct [SLOTS]\n");
        return 2;
    }
    lct_backend_config cfg = {.workers = 1};
    if (ops.open(argc > 2 ? argv[2] : NULL, &cfg, &state, &err) != LCT_OK)
        return 1;
    lct_replay_options opts = {.speed = 0, .value_bytes = 64};
    lct_replay_report rep;
    lct_status st = lct_replay_run(r, &ops, state, &opts, &rep, &err);
    ops.close(state);
    lct_close(r);
    if (st != LCT_OK)
        return fprintf(stderr, "%s\n", err.message), 1;
    printf("%llu lookups, %llu hits, %.3f s\n",
           (unsigned long long)rep.lookups, (unsigned long long)rep.hits,
           rep.duration);
    return 0;
}
