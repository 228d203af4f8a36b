/*
 * replay.c - pace a trace like `lmcache trace replay` and report how late
 * each dispatch was, per qualname (p50 and p99, nearest rank).  A real
 * harness would issue the call where this one only takes the time; with
 * -k it prints, per call that carries keys, what the call would read or
 * write: its keys and their bytes, through the typed accessors
 * (lct_key_iter_*, lct_object_key_hash).
 *
 *     cc replay.c -o replay $(pkg-config --static --cflags --libs lct)
 *     ./replay [-k] trace.lct [SPEED]
 */
#include <lct.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct op {
    lct_str qualname; /* a view: valid while the reader is open */
    double *late;
    size_t n, cap;
} op;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: sorted[ceil(p*n/100) - 1]. */
static double percentile(const double *sorted, size_t n, unsigned p)
{
    size_t rank = ((size_t)p * n + 99) / 100;
    return sorted[rank ? rank - 1 : 0];
}

/* What a call would do to a cache: read (a lookup), write (a store). */
static const char *cache_op(lct_str qualname)
{
    if (lct_str_has_suffix(qualname, ".submit_prefetch_task"))
        return "read";
    if (lct_str_has_suffix(qualname, ".reserve_write"))
        return "write";
    return "-";
}

/* One line per call that carries keys: when it was due, what it does,
 * how many keys and bytes, and the first key's id and model. */
static void describe_keys(const lct_record *rec)
{
    lct_key_iter it;
    lct_object_key key, first;
    uint64_t bytes, total = 0, n = 0;
    lct_error err;
    if (lct_key_iter_init(rec, &it, &err) != LCT_OK) {
        printf("%10.6f  keys not readable: %s\n", rec->t_mono, err.message);
        return;
    }
    while (lct_key_iter_next(&it, &key, &bytes, NULL) == 1) {
        if (n++ == 0)
            first = key;
        total += bytes;
    }
    if (n == 0)
        return;
    size_t dot = rec->qualname.len;
    while (dot > 0 && rec->qualname.ptr[dot - 1] != '.')
        dot--;
    printf("%10.6f  %-5s %-24.*s %4llu keys %10.1f MiB  first %016llx "
           "(rank %lld)\n",
           rec->t_mono, cache_op(rec->qualname),
           (int)(rec->qualname.len - dot), rec->qualname.ptr + dot,
           (unsigned long long)n, (double)total / 1048576.0,
           (unsigned long long)lct_object_key_hash(&first),
           (long long)first.kv_rank);
}

int main(int argc, char **argv)
{
    bool show_keys = argc > 1 && strcmp(argv[1], "-k") == 0;
    argc -= show_keys;
    argv += show_keys;
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: replay [-k] TRACE.lct [SPEED]\n");
        return 2;
    }
    double speed = argc == 3 ? strtod(argv[2], NULL) : 1.0;
    lct_reader *r;
    lct_error err;
    if (lct_open(argv[1], 0, &r, &err) != LCT_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    lct_pacer *pacer;
    if (lct_pacer_new(speed, &pacer) != LCT_OK) {
        fprintf(stderr, "speed must be a positive number\n");
        return 2;
    }
    op *ops = NULL;
    size_t nops = 0;
    lct_record rec;
    lct_pacer_start(pacer);
    while (lct_next(r, &rec) == 1) {
        double late;
        if (lct_pacer_wait(pacer, rec.t_mono, &late) != LCT_OK) {
            fprintf(stderr, "clock failed\n");
            return 1;
        }
        /* ... dispatch the call here ... */
        if (show_keys)
            describe_keys(&rec);
        size_t i;
        for (i = 0; i < nops; i++)
            if (ops[i].qualname.len == rec.qualname.len &&
                !memcmp(ops[i].qualname.ptr, rec.qualname.ptr,
                        rec.qualname.len))
                break;
        if (i == nops) {
            op *grown = realloc(ops, (nops + 1) * sizeof *ops);
            if (!grown)
                return 1;
            ops = grown;
            memset(&ops[nops], 0, sizeof *ops);
            ops[nops++].qualname = rec.qualname;
        }
        if (ops[i].n == ops[i].cap) {
            size_t cap = ops[i].cap ? ops[i].cap * 2 : 64;
            double *l = realloc(ops[i].late, cap * sizeof *l);
            if (!l)
                return 1;
            ops[i].late = l;
            ops[i].cap = cap;
        }
        ops[i].late[ops[i].n++] = late;
    }
    printf("%10s %12s %12s  %s\n", "dispatches", "late_p50_ms", "late_p99_ms",
           "qualname");
    for (size_t i = 0; i < nops; i++) {
        qsort(ops[i].late, ops[i].n, sizeof *ops[i].late, cmp_double);
        /* Qualnames come from the file: print only printable ASCII. */
        printf("%10zu %12.3f %12.3f  ", ops[i].n,
               1e3 * percentile(ops[i].late, ops[i].n, 50),
               1e3 * percentile(ops[i].late, ops[i].n, 99));
        for (size_t k = 0; k < ops[i].qualname.len; k++) {
            unsigned char ch = (unsigned char)ops[i].qualname.ptr[k];
            putchar(ch >= 0x20 && ch < 0x7f ? ch : '?');
        }
        putchar('\n');
        free(ops[i].late);
    }
    free(ops);
    lct_pacer_free(pacer);
    lct_close(r);
    return 0;
}
