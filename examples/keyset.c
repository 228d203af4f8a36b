/*
 * keyset.c - how many distinct keys a trace's calls name and what they
 * weigh: the bytes a cache needs to hold every key at once.  It asks
 * for keys as ids a batch at a time (lct_key_iter_next_ids), which for a
 * reader opened with LCT_KEYS hashes a list of alike keys where it lies.
 *
 *     examples/keyset TRACE
 */
#include <lct.h>

#include <stdio.h>
#include <stdlib.h>

/* A set of key ids, open addressing; 0 stands for an empty slot, so id 0
 * is kept aside. */
typedef struct id_set {
    uint64_t *slot;
    size_t cap, n;
    int has_zero;
} id_set;

static int set_grow(id_set *s);

/* 1 when id was new, 0 when seen, -1 when memory ran out. */
static int set_add(id_set *s, uint64_t id)
{
    if (id == 0) {
        int added = !s->has_zero;
        s->has_zero = 1;
        return added;
    }
    if (2 * (s->n + 1) > s->cap && set_grow(s) != 0)
        return -1;
    size_t i = (size_t)(id * 0x9e3779b97f4a7c15u) & (s->cap - 1);
    while (s->slot[i] && s->slot[i] != id)
        i = (i + 1) & (s->cap - 1);
    if (s->slot[i])
        return 0;
    s->slot[i] = id;
    s->n++;
    return 1;
}

static int set_grow(id_set *s)
{
    id_set bigger = {calloc(s->cap ? 2 * s->cap : 1024, sizeof(uint64_t)),
                     s->cap ? 2 * s->cap : 1024, 0, s->has_zero};
    if (!bigger.slot)
        return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slot[i])
            set_add(&bigger, s->slot[i]);
    free(s->slot);
    *s = bigger;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: keyset TRACE\n");
        return 2;
    }
    lct_reader *r;
    lct_error err;
    if (lct_open(argv[1], LCT_KEYS, &r, &err) != LCT_OK) {
        fprintf(stderr, "keyset: %s\n", err.message);
        return 1;
    }
    id_set seen = {0};
    uint64_t refs = 0, bytes = 0;
    lct_record rec;
    while (lct_next(r, &rec) == 1) {
        lct_key_iter it;
        if (lct_key_iter_init(&rec, &it, &err) != LCT_OK)
            continue; /* keys that are not a list: not counted */
        lct_key_id keys[64];
        long n;
        while ((n = lct_key_iter_next_ids(&it, keys, 64, &err)) > 0)
            for (long i = 0; i < n; i++, refs++) {
                int added = set_add(&seen, keys[i].id);
                if (added < 0) {
                    fprintf(stderr, "keyset: out of memory\n");
                    return 1;
                }
                bytes += added ? keys[i].bytes : 0;
            }
    }
    printf("%llu key references, %zu distinct keys, %llu bytes\n",
           (unsigned long long)refs, seen.n + (size_t)seen.has_zero,
           (unsigned long long)bytes);
    int damaged = lct_reader_status(r) != LCT_OK;
    free(seen.slot);
    lct_close(r);
    return damaged ? 3 : 0;
}
