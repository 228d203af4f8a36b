/*
 * bench_refs.c - see bench_refs.h.
 */
#include "bench_refs.h"

#include <stdio.h>
#include <stdlib.h>

lct_refs *bench_references(const char *path)
{
    lct_reader *r;
    lct_error err;
    lct_refs *refs;
    if (lct_open(path, LCT_STREAM, &r, &err) != LCT_OK) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    if (lct_refs_new(&refs) != LCT_OK)
        exit(1);
    lct_record rec;
    while (lct_next(r, &rec) == 1) {
        bool read = lct_str_has_suffix(rec.qualname, "." LCT_KEYS_READ_CALL);
        if (!read && !lct_str_has_suffix(rec.qualname, "." LCT_KEYS_WRITE_CALL))
            continue;
        lct_key_iter it;
        lct_object_key k;
        uint64_t bytes;
        if (lct_key_iter_init(&rec, &it, NULL) != LCT_OK)
            continue;
        while (lct_key_iter_next(&it, &k, &bytes, NULL) == 1)
            if (lct_refs_add(refs, lct_object_key_hash(&k), bytes,
                             rec.t_mono, read) != LCT_OK)
                exit(1);
    }
    lct_close(r);
    return refs;
}
