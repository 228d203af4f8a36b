/*
 * lct-bench.c - how close liblct comes to the limits of the machine.
 *
 * On one trace, in one run, after a warm-up that puts the file in the page
 * cache and faults in every mapping, each row is timed several times and
 * its median reported:
 *
 *   memscan   read every byte of the mapping (sum of 64-bit words): the
 *             ceiling for anything that looks at every byte
 *   framehop  follow the length prefixes only: the ceiling for anything
 *             that touches every frame
 *   index     lct_index_build (what a parallel scan needs first)
 *   lazy      lct_next with LCT_LAZY, reading t_mono, t_wall, qualname
 *   full      lct_next with default validation, plus lct_value_visit over
 *             every value of every args map
 *   parallel  full, split over -j threads with lct_scan_run (index built
 *             beforehand, timed in its own row)
 *   validate  lct_next with default validation and nothing else
 *   stream    validate, on a reader opened with LCT_STREAM (read(2) into a
 *             reused buffer instead of the warm mapping)
 *   pscan     full, over -j threads with lct_scan_file (one pass, each
 *             thread preads its own range; no index)
 *   json      lct_record_write_json of every record into a sink that
 *             counts bytes (the output rate is printed too)
 *
 * Uses only the public header.  Built by `make bench`; see bench/README.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracegen.h"
#include "lct.h"

typedef struct result {
    const char *name;
    double seconds; /* median */
    uint64_t items; /* records (or frames) handled per run */
    const char *ratio_to;
    double ratio;
} result;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Results are folded into this so the compiler cannot drop the work. */
static volatile uint64_t sink;

/* MARK: the rows (noinline, so callgrind can count each alone) */

__attribute__((noinline)) static uint64_t run_memscan(lct_bytes data)
{
    const unsigned char *p = data.ptr;
    size_t n = data.len / 32 * 32;
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (size_t i = 0; i < n; i += 32) {
        uint64_t w[4];
        memcpy(w, p + i, 32);
        a += w[0];
        b += w[1];
        c += w[2];
        d += w[3];
    }
    for (size_t i = n; i < data.len; i++)
        a += p[i];
    sink += a + b + c + d;
    return data.len / 8;
}

__attribute__((noinline)) static uint64_t run_framehop(lct_bytes data,
                                                       uint64_t start)
{
    uint64_t pos = start, frames = 0;
    while (data.len - pos >= 4) {
        const unsigned char *p = data.ptr + pos;
        uint32_t len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                       (uint32_t)p[2] << 8 | p[3];
        if (len > data.len - pos - 4)
            break;
        pos += 4 + (uint64_t)len;
        frames++;
    }
    sink += pos;
    return frames;
}

__attribute__((noinline)) static uint64_t run_lazy(lct_reader *r)
{
    lct_reader_rewind(r);
    lct_record rec;
    uint64_t n = 0;
    double acc = 0;
    size_t qlen = 0;
    while (lct_next(r, &rec) == 1) {
        acc += rec.t_mono + rec.t_wall;
        qlen += rec.qualname.len;
        n++;
    }
    sink += (uint64_t)acc + qlen;
    return n;
}

/* One cache line each: per-thread accumulators must not share a line,
 * or the threads spend their time passing it back and forth. */
typedef struct walk_acc {
    uint64_t values, bytes;
    char pad[48];
} walk_acc;

static int on_value(void *ctx, const lct_visit *v)
{
    walk_acc *w = ctx;
    w->values++;
    w->bytes += v->value.len;
    return 0;
}

static int full_record(void *state, const lct_record *rec)
{
    walk_acc *w = state;
    if (lct_value_visit(rec->args, on_value, w) != LCT_OK)
        return 1;
    w->bytes += (uint64_t)rec->t_mono + rec->qualname.len;
    return 0;
}

__attribute__((noinline)) static uint64_t run_full(lct_reader *r)
{
    lct_reader_rewind(r);
    lct_record rec;
    uint64_t n = 0;
    walk_acc acc = {0, 0, {0}};
    while (lct_next(r, &rec) == 1) {
        full_record(&acc, &rec);
        n++;
    }
    sink += acc.values + acc.bytes;
    return n;
}

__attribute__((noinline)) static uint64_t run_index(lct_reader *r,
                                                    lct_index **out)
{
    lct_error err;
    if (lct_index_build(r, out, &err) != LCT_OK) {
        fprintf(stderr, "lct-bench: %s\n", err.message);
        exit(1);
    }
    return lct_index_count(*out);
}

static void reset_acc(void *state)
{
    memset(state, 0, sizeof(walk_acc));
}

/* full on `threads` threads: over the index (lct_scan_run) when given one,
 * else in one pass over the reader's file (lct_scan_file). */
__attribute__((noinline)) static uint64_t run_parallel(const lct_index *idx,
                                                       lct_reader *r,
                                                       unsigned threads)
{
    walk_acc accs[64];
    void *states[64];
    memset(accs, 0, sizeof accs);
    for (unsigned t = 0; t < 64; t++)
        states[t] = &accs[t];
    lct_scan scan = {.threads = threads, .on_record = full_record,
                     .states = states, .on_reset = reset_acc};
    lct_stats st;
    lct_error err;
    if ((idx ? lct_scan_run(idx, &scan, &st, &err)
             : lct_scan_file(r, &scan, &st, &err)) != LCT_OK) {
        fprintf(stderr, "lct-bench: %s\n", err.message);
        exit(1);
    }
    for (unsigned t = 0; t < 64; t++)
        sink += accs[t].values;
    return st.records;
}

__attribute__((noinline)) static uint64_t run_validate(lct_reader *r)
{
    lct_reader_rewind(r);
    lct_record rec;
    uint64_t n = 0;
    while (lct_next(r, &rec) == 1)
        n++;
    sink += n;
    return n;
}

static uint64_t json_bytes; /* output of the last json run */

static int count_bytes(void *ctx, const char *data, size_t len)
{
    (void)data;
    *(uint64_t *)ctx += len;
    return 0;
}

__attribute__((noinline)) static uint64_t run_json(lct_reader *r)
{
    lct_reader_rewind(r);
    lct_record rec;
    uint64_t n = 0;
    json_bytes = 0;
    while (lct_next(r, &rec) == 1) {
        lct_record_write_json(&rec, count_bytes, &json_bytes);
        n++;
    }
    return n;
}

/* MARK: driver */

static void usage(void)
{
    fprintf(stderr,
            "usage: lct-bench [--file TRACE | --records N [--out PATH]]\n"
            "                 [--runs R] [-j N] [--only ROWS] [--json]\n"
            "  --file TRACE  measure this trace instead of generating one\n"
            "  --records N   records to generate (default 1000000, ~1.6 GB)\n"
            "  --out PATH    where to generate (default /tmp/lct-bench-N.lct;\n"
            "                reused when it already exists)\n"
            "  --runs R      timed runs per row, median reported (default 5)\n"
            "  -j N          threads for the parallel row (default 2)\n"
            "  --only ROWS   comma-separated subset: memscan,framehop,index,\n"
            "                lazy,full,parallel,validate,stream,pscan,json\n"
            "  --json        one JSON object instead of the table\n");
    exit(2);
}

static bool wanted(const char *only, const char *row)
{
    if (!only)
        return true;
    size_t n = strlen(row);
    for (const char *p = only; (p = strstr(p, row)); p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

static void cpu_model(char *out, size_t outsz)
{
    snprintf(out, outsz, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                snprintf(out, outsz, "%s", colon + 2);
                out[strcspn(out, "\n")] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    const char *file = NULL, *out = NULL, *only = NULL;
    unsigned long long records = 1000000;
    int runs = 5;
    unsigned threads = 2;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--file") && v)
            file = v, i++;
        else if (!strcmp(a, "--out") && v)
            out = v, i++;
        else if (!strcmp(a, "--records") && v)
            records = strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--runs") && v)
            runs = atoi(v), i++;
        else if (!strcmp(a, "-j") && v)
            threads = (unsigned)atoi(v), i++;
        else if (!strcmp(a, "--only") && v)
            only = v, i++;
        else if (!strcmp(a, "--json"))
            json = true;
        else
            usage();
    }
    if (runs < 1 || records == 0 || threads < 1 || threads > 64)
        usage();

    char path[4096];
    if (file) {
        snprintf(path, sizeof path, "%s", file);
    } else {
        if (out)
            snprintf(path, sizeof path, "%s", out);
        else
            snprintf(path, sizeof path, "/tmp/lct-bench-%llu.lct", records);
        struct stat st;
        if (stat(path, &st) != 0) {
            fprintf(stderr, "lct-bench: writing %llu records to %s ...\n",
                    records, path);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || gen_trace(fd, records, 32, 0, 0x5eed) != 0 ||
                close(fd) != 0) {
                fprintf(stderr, "lct-bench: cannot write %s: %s\n", path,
                        strerror(errno));
                return 1;
            }
        }
    }

    lct_reader *full, *lazy, *streamed;
    lct_error err;
    if (lct_open(path, 0, &full, &err) != LCT_OK ||
        lct_open(path, LCT_LAZY, &lazy, &err) != LCT_OK ||
        lct_open(path, LCT_STREAM, &streamed, &err) != LCT_OK) {
        fprintf(stderr, "lct-bench: %s\n", err.message);
        return 1;
    }
    lct_bytes data = lct_reader_data(full);
    uint64_t start = lct_reader_header(full)->size;
    lct_index *idx = NULL;

    /* Warm-up: page cache, and page faults of both mappings. */
    run_memscan(data);
    run_memscan(lct_reader_data(lazy));
    uint64_t nrec = run_lazy(lazy);
    if (nrec == 0) {
        fprintf(stderr, "lct-bench: %s has no records\n", path);
        return 1;
    }

    enum {
        MEMSCAN,
        FRAMEHOP,
        INDEX,
        LAZY,
        FULL,
        PARALLEL,
        VALIDATE,
        STREAM,
        PSCAN,
        JSON,
        NROWS
    };
    result res[NROWS] = {
        {"memscan", 0, 0, NULL, 0},    {"framehop", 0, 0, NULL, 0},
        {"index", 0, 0, NULL, 0},      {"lazy", 0, 0, "framehop", 0},
        {"full", 0, 0, "memscan", 0},  {"parallel", 0, 0, "memscan", 0},
        {"validate", 0, 0, NULL, 0},   {"stream", 0, 0, NULL, 0},
        {"pscan", 0, 0, NULL, 0},      {"json", 0, 0, NULL, 0},
    };
    double *times = calloc((size_t)runs, sizeof *times);
    for (int row = 0; row < NROWS; row++) {
        bool need_index = row == PARALLEL && !idx;
        if (!wanted(only, res[row].name) && !need_index)
            continue;
        if (row == PARALLEL && !idx)
            run_index(full, &idx);
        if (!wanted(only, res[row].name))
            continue;
        if (row == FULL || row == PARALLEL || row == INDEX) {
            /* one untimed pass of this row, too */
            if (row == FULL)
                run_full(full);
            else if (row == PARALLEL)
                run_parallel(idx, NULL, threads);
        }
        for (int i = 0; i < runs; i++) {
            double t0 = now();
            uint64_t items = 0;
            switch (row) {
            case MEMSCAN: items = run_memscan(data); break;
            case FRAMEHOP: items = run_framehop(data, start); break;
            case INDEX:
                lct_index_free(idx);
                idx = NULL;
                items = run_index(full, &idx);
                break;
            case LAZY: items = run_lazy(lazy); break;
            case FULL: items = run_full(full); break;
            case PARALLEL: items = run_parallel(idx, NULL, threads); break;
            case VALIDATE: items = run_validate(full); break;
            case STREAM: items = run_validate(streamed); break;
            case PSCAN: items = run_parallel(NULL, streamed, threads); break;
            case JSON: items = run_json(full); break;
            }
            times[i] = now() - t0;
            res[row].items = items;
        }
        qsort(times, (size_t)runs, sizeof *times, cmp_double);
        res[row].seconds = times[runs / 2];
    }
    free(times);

    for (int row = 0; row < NROWS; row++) {
        if (!res[row].ratio_to)
            res[row].ratio_to = "memscan";
        double base = !strcmp(res[row].ratio_to, "framehop")
                          ? res[FRAMEHOP].seconds
                          : res[MEMSCAN].seconds;
        res[row].ratio = base > 0 ? res[row].seconds / base : 0;
    }

    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double gb = (double)data.len / 1e9;
    if (json) {
        printf("{\"file\":\"%s\",\"bytes\":%zu,\"records\":%" PRIu64
               ",\"cpu\":\"%s\",\"cores\":%ld,\"runs\":%d,\"threads\":%u,"
               "\"rows\":[",
               path, data.len, nrec, cpu, cores, runs, threads);
        bool first = true;
        for (int row = 0; row < NROWS; row++) {
            if (!res[row].seconds)
                continue;
            printf("%s{\"name\":\"%s\",\"seconds\":%.6f,\"gb_per_s\":%.3f,"
                   "\"records_per_s\":%.0f,\"ratio\":%.3f,\"ratio_to\":\"%s\"}",
                   first ? "" : ",", res[row].name, res[row].seconds,
                   gb / res[row].seconds, (double)nrec / res[row].seconds,
                   res[row].ratio, res[row].ratio_to);
            first = false;
        }
        printf("]}\n");
    } else {
        printf("trace: %s: %.3f GB, %" PRIu64 " records, %.0f bytes/record\n",
               path, gb, nrec, (double)data.len / (double)nrec);
        printf("machine: %s, %ld cores; median of %d runs; parallel -j %u\n",
               cpu, cores, runs, threads);
        printf("%-10s %10s %8s %14s %8s\n", "row", "seconds", "GB/s",
               "records/s", "ratio");
        for (int row = 0; row < NROWS; row++) {
            if (!res[row].seconds)
                continue;
            printf("%-10s %10.4f %8.2f %14.0f %6.2fx %s\n", res[row].name,
                   res[row].seconds, gb / res[row].seconds,
                   (double)nrec / res[row].seconds, res[row].ratio,
                   res[row].ratio_to);
        }
        if (res[FULL].seconds && res[PARALLEL].seconds)
            printf("parallel speed-up over full: %.2fx on %u threads\n",
                   res[FULL].seconds / res[PARALLEL].seconds, threads);
        if (res[JSON].seconds)
            printf("json: %.0f MB/s of output (%.0f bytes/record)\n",
                   (double)json_bytes / 1e6 / res[JSON].seconds,
                   (double)json_bytes / (double)nrec);
    }
    lct_index_free(idx);
    lct_close(full);
    lct_close(lazy);
    lct_close(streamed);
    return 0;
}
