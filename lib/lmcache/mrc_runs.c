/*
 * mrc_runs.c - the byte distances of a streamed exact curve in memory
 * that does not grow with the references.  A byte curve exact at every
 * capacity needs every distinct byte distance, and with many key sizes
 * there can be nearly one a re-read.  So distances are buffered, sorted
 * and merged into a bounded set of distinct values with counts; a full
 * set is written to an unlinked temporary file ($TMPDIR, else /tmp) as a
 * sorted run; at the end the runs are merged, a bounded number at a
 * time, into the curve's arrays, which are then a read-only mapping of
 * that file: a query's binary search touches a few pages of it, not all.
 * Without a temporary file, the set grows in memory as it always could.
 *
 * Long because writing runs and merging them back share the runs' layout
 * in the file and its descriptor: split, each half would need the other's
 * internals.
 */
#define _GNU_SOURCE /* O_TMPFILE, mkostemp, fallocate */
#include "lmcache/mrc_runs_internal.h"

#include "base/pio_internal.h"
#include "lct_cache.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* 128 Ki distances buffered (1 MiB, and 1 MiB to sort them), 256 Ki in
 * the set (4 MiB), 64 runs merged at once (32 KiB each: 2 MiB). */
lct__mrc_runs_bounds lct__mrc_runs_limits = {(size_t)1 << 17,
                                             (size_t)1 << 18, 64};

#define CURSOR_ENTRIES 2048
#define OUT_ENTRIES 16384

/* MARK: - the spill file */

static int open_temp(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
#endif
    char path[4096];
    if (snprintf(path, sizeof path, "%s/lct-mrc-XXXXXX", dir) >=
        (int)sizeof path)
        return -1;
    int tmp = mkostemp(path, O_CLOEXEC);
    if (tmp >= 0)
        unlink(path);
    return tmp;
}

/* Give back the disk under bytes no run uses any more (best effort). */
static void punch(int fd, uint64_t off, uint64_t len)
{
#ifdef FALLOC_FL_PUNCH_HOLE
    if (len)
        (void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        (off_t)off, (off_t)len);
#else
    (void)fd, (void)off, (void)len;
#endif
}

static bool add_run(lct__mrc_runs *runs, lct__mrc_spilled r)
{
    if (runs->nrun == runs->runcap) {
        size_t cap = runs->runcap ? 2 * runs->runcap : 16;
        lct__mrc_spilled *grown = reallocarray(runs->run, cap, sizeof *grown);
        if (!grown)
            return false;
        runs->run = grown;
        runs->runcap = cap;
    }
    runs->run[runs->nrun++] = r;
    return true;
}

/* The set, written as a run and emptied; false (the set kept) when no
 * file takes it. */
static bool spill_set(lct__mrc_runs *runs)
{
    if (!runs->spill) {
        int fd = open_temp();
        if (fd < 0)
            return false;
        runs->spill = fd + 1;
    }
    int fd = runs->spill - 1;
    uint64_t n = runs->n, off = runs->end;
    lct__mrc_spilled r = {off, off + 8 * n, n};
    if (!lct__pwrite_full(fd, runs->value, 8 * n, r.off) ||
        !lct__pwrite_full(fd, runs->count, 8 * n, r.coff) ||
        !add_run(runs, r))
        return false;
    runs->end = r.coff + 8 * n;
    runs->n = 0;
    return true;
}

/* MARK: - buffer and set */

/* Sort v[0..n) with the scratch (16-bit digits, a digit no two values
 * differ in skipped: distances rarely use the top ones).  Not
 * lct__mrc_radix_sort: that one counts in size_t for arrays of any
 * length; a buffer's counts fit 32 bits, and sharing the wider counters
 * cost 1.2 MB of peak on bench/mrc-memory (106 bytes a key over 16 MiB
 * against 94). */
static void sort(lct__mrc_runs *runs, uint64_t *v, size_t n)
{
    uint64_t any = 0, all = ~(uint64_t)0;
    for (size_t i = 0; i < n; i++)
        any |= v[i], all &= v[i];
    uint64_t differ = any ^ all, *a = v, *b = runs->scratch;
    uint32_t *digit = runs->digits;
    for (unsigned shift = 0; shift < 64; shift += 16) {
        if (!((differ >> shift) & 0xffff))
            continue;
        memset(digit, 0, 65536 * sizeof *digit);
        for (size_t i = 0; i < n; i++)
            digit[(a[i] >> shift) & 0xffff]++;
        uint32_t at = 0;
        for (size_t d = 0; d < 65536; d++) {
            uint32_t c = digit[d];
            digit[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            b[digit[(a[i] >> shift) & 0xffff]++] = a[i];
        uint64_t *t = a;
        a = b, b = t;
    }
    if (a != v)
        memcpy(v, a, n * sizeof *v);
}

static bool reserve(lct__mrc_runs *runs, uint64_t need)
{
    if (need <= runs->cap)
        return true;
    /* doubling, but not past the bound a spilling set keeps to */
    uint64_t cap = runs->cap ? 2 * runs->cap : 1024, most = need;
    if (!runs->in_memory && most < lct__mrc_runs_limits.set)
        most = lct__mrc_runs_limits.set;
    if (cap > most)
        cap = most;
    if (cap < need)
        cap = need;
    uint64_t *v = reallocarray(runs->value, cap, sizeof *v);
    if (v)
        runs->value = v;
    uint64_t *c = v ? reallocarray(runs->count, cap, sizeof *c) : NULL;
    if (c)
        runs->count = c;
    if (c)
        runs->cap = cap;
    return c != NULL;
}

static bool unspill(lct__mrc_runs *runs);

/* Room in the set for k more: the set spilled first when that would
 * take it past its bound; when the file fails (a full disk), what it
 * holds comes back and the set stays in memory for good. */
static bool room_for(lct__mrc_runs *runs, uint64_t k)
{
    if (runs->n && runs->n + k > lct__mrc_runs_limits.set &&
        !runs->in_memory && !spill_set(runs) && !unspill(runs))
        return false;
    return reserve(runs, runs->n + k);
}

/* k sorted distinct values bv with counts bc merged into the set from
 * the back, in place. */
static bool merge_in(lct__mrc_runs *runs, const uint64_t *bv,
                     const uint64_t *bc, size_t k)
{
    if (!room_for(runs, k))
        return false;
    /* the write index never falls below the set's read index */
    uint64_t *v = runs->value, *c = runs->count;
    int64_t i = (int64_t)runs->n - 1, j = (int64_t)k - 1,
            w = (int64_t)(runs->n + k) - 1;
    for (; j >= 0; w--) {
        if (i >= 0 && v[i] > bv[j]) {
            v[w] = v[i], c[w] = c[i], i--;
        } else if (i >= 0 && v[i] == bv[j]) {
            v[w] = v[i], c[w] = c[i] + bc[j], i--, j--;
        } else {
            v[w] = bv[j], c[w] = bc[j], j--;
        }
    }
    /* the set's rest is in place at [0, i]; equal values left a gap */
    size_t gap = (size_t)(w - i);
    uint64_t n = runs->n + k - gap;
    if (gap && n > (uint64_t)(i + 1)) {
        memmove(v + i + 1, v + w + 1, (n - (size_t)(i + 1)) * sizeof *v);
        memmove(c + i + 1, c + w + 1, (n - (size_t)(i + 1)) * sizeof *c);
    }
    runs->n = n;
    return true;
}

/* The buffer sorted, run-length counted into buf/scratch, and merged
 * into the set. */
static bool flush(lct__mrc_runs *runs)
{
    size_t nb = runs->nbuf;
    if (nb == 0)
        return true;
    uint64_t *bv = runs->buf, *bc = runs->scratch;
    sort(runs, bv, nb);
    size_t k = 0;
    for (size_t i = 0; i < nb; k++) {
        size_t j = i;
        while (j < nb && bv[j] == bv[i])
            j++;
        bv[k] = bv[i];
        bc[k] = j - i;
        i = j;
    }
    runs->nbuf = 0;
    return merge_in(runs, bv, bc, k);
}

/* The nrun runs of file fd merged into runs' set, which stays in memory
 * for good. */
static bool read_back(lct__mrc_runs *runs, int fd,
                      const lct__mrc_spilled *run, size_t nrun)
{
    runs->in_memory = true;
    uint64_t *v = reallocarray(NULL, CURSOR_ENTRIES, sizeof *v);
    uint64_t *c = reallocarray(NULL, CURSOR_ENTRIES, sizeof *c);
    bool ok = v && c;
    for (size_t r = 0; ok && r < nrun; r++) {
        const lct__mrc_spilled *sp = &run[r];
        for (uint64_t at = 0; ok && at < sp->n; at += CURSOR_ENTRIES) {
            size_t k = sp->n - at < CURSOR_ENTRIES ? (size_t)(sp->n - at)
                                                   : CURSOR_ENTRIES;
            ok = lct__pread_full(fd, v, 8 * k, sp->off + 8 * at) &&
                 lct__pread_full(fd, c, 8 * k, sp->coff + 8 * at) &&
                 merge_in(runs, v, c, k);
        }
    }
    free(v);
    free(c);
    return ok;
}

/* Every spilled run read back into the set and the file given up: what
 * a failed write or mapping leaves.  The curve stays exact; only its
 * memory grows again. */
static bool unspill(lct__mrc_runs *runs)
{
    runs->in_memory = true;
    if (!runs->spill)
        return true;
    if (!read_back(runs, runs->spill - 1, runs->run, runs->nrun))
        return false;
    close(runs->spill - 1);
    runs->spill = 0;
    runs->nrun = 0;
    runs->end = 0;
    return true;
}

bool lct__mrc_runs_add(lct__mrc_runs *runs, uint64_t value)
{
    if (!runs->buf) {
        size_t n = lct__mrc_runs_limits.buffer;
        runs->buf = reallocarray(NULL, n, sizeof *runs->buf);
        runs->scratch = reallocarray(NULL, n, sizeof *runs->scratch);
        runs->digits = calloc(65536, sizeof *runs->digits);
        if (!runs->buf || !runs->scratch || !runs->digits) {
            free(runs->buf), free(runs->scratch), free(runs->digits);
            runs->buf = runs->scratch = NULL, runs->digits = NULL;
            return false;
        }
        runs->bufcap = n;
    }
    runs->buf[runs->nbuf++] = value;
    return runs->nbuf < runs->bufcap || flush(runs);
}

bool lct__mrc_runs_append(lct__mrc_runs *runs, uint64_t value,
                          uint64_t count)
{
    if (!flush(runs) || !room_for(runs, 1))
        return false;
    runs->value[runs->n] = value;
    runs->count[runs->n++] = count;
    return true;
}

bool lct__mrc_runs_copy(lct__mrc_runs *dst, lct__mrc_runs *src)
{
    memset(dst, 0, sizeof *dst);
    if (!flush(src) || !reserve(dst, src->n))
        return false;
    if (src->n) {
        memcpy(dst->value, src->value, src->n * sizeof *dst->value);
        memcpy(dst->count, src->count, src->n * sizeof *dst->count);
    }
    dst->n = src->n;
    dst->in_memory = src->in_memory;
    if (!src->nrun)
        return true;
    /* the runs on disk too, into a file of dst's own, or into dst's set
     * when that file cannot be had */
    int fd = open_temp();
    size_t chunk = 1 << 20;
    char *bounce = fd >= 0 ? malloc(chunk) : NULL;
    bool ok = bounce != NULL;
    for (uint64_t at = 0; ok && at < src->end; at += chunk) {
        size_t len = src->end - at < chunk ? (size_t)(src->end - at) : chunk;
        ok = lct__pread_full(src->spill - 1, bounce, len, at) &&
             lct__pwrite_full(fd, bounce, len, at);
    }
    free(bounce);
    for (size_t r = 0; ok && r < src->nrun; r++)
        ok = add_run(dst, src->run[r]);
    if (ok) {
        dst->spill = fd + 1;
        dst->end = src->end;
        return true;
    }
    if (fd >= 0)
        close(fd);
    dst->nrun = 0;
    return read_back(dst, src->spill - 1, src->run, src->nrun);
}

/* MARK: - merging the runs */

/* A run being read: a window of its values and counts. */
typedef struct cursor {
    uint64_t off, coff, left; /* still on disk */
    uint64_t v[CURSOR_ENTRIES], c[CURSOR_ENTRIES];
    size_t at, have;
} cursor;

static bool refill(int fd, cursor *k)
{
    size_t n = k->left < CURSOR_ENTRIES ? (size_t)k->left : CURSOR_ENTRIES;
    if (!lct__pread_full(fd, k->v, 8 * n, k->off) ||
        !lct__pread_full(fd, k->c, 8 * n, k->coff))
        return false;
    k->off += 8 * n, k->coff += 8 * n, k->left -= n;
    k->at = 0, k->have = n;
    return true;
}

/* Where merged entries go: values from off, counts from coff. */
typedef struct sink {
    int fd;
    uint64_t off, coff, n;
    bool cumulative;
    uint64_t total;
    uint64_t v[OUT_ENTRIES], c[OUT_ENTRIES];
    size_t k;
} sink;

static bool drain(sink *s)
{
    uint64_t at = 8 * s->n;
    bool ok = lct__pwrite_full(s->fd, s->v, 8 * s->k, s->off + at) &&
              lct__pwrite_full(s->fd, s->c, 8 * s->k, s->coff + at);
    s->n += s->k;
    s->k = 0;
    return ok;
}

static bool emit(sink *s, uint64_t v, uint64_t c)
{
    s->total += c;
    s->v[s->k] = v;
    s->c[s->k++] = s->cumulative ? s->total : c;
    return s->k < OUT_ENTRIES || drain(s);
}

static uint64_t head(cursor *const *heap, size_t i)
{
    return heap[i]->v[heap[i]->at];
}

static void sift_down(cursor **heap, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, least = i;
        if (l < n && head(heap, l) < head(heap, least))
            least = l;
        if (r < n && head(heap, r) < head(heap, least))
            least = r;
        if (least == i)
            return;
        cursor *t = heap[i];
        heap[i] = heap[least], heap[least] = t;
        i = least;
    }
}

/* Runs first..first+n of the spill file merged into s. */
static bool merge(lct__mrc_runs *runs, size_t first, size_t n, sink *s)
{
    int fd = runs->spill - 1;
    cursor *k = reallocarray(NULL, n, sizeof *k);
    cursor **heap = reallocarray(NULL, n, sizeof *heap);
    bool ok = k && heap;
    size_t live = 0;
    for (size_t r = 0; ok && r < n; r++) {
        const lct__mrc_spilled *sp = &runs->run[first + r];
        k[r] = (cursor){.off = sp->off, .coff = sp->coff, .left = sp->n};
        ok = refill(fd, &k[r]);
        if (ok && k[r].have)
            heap[live++] = &k[r];
    }
    for (size_t i = live; ok && i-- > 0;)
        sift_down(heap, live, i);
    while (ok && live) {
        uint64_t v = head(heap, 0), c = 0;
        while (live && head(heap, 0) == v) {
            cursor *top = heap[0];
            c += top->c[top->at++];
            if (top->at == top->have && top->left && !(ok = refill(fd, top)))
                break;
            if (top->at == top->have)
                heap[0] = heap[--live];
            sift_down(heap, live, 0);
        }
        ok = ok && emit(s, v, c);
    }
    ok = ok && drain(s);
    free(k);
    free(heap);
    return ok;
}

static uint64_t entries(const lct__mrc_runs *runs, size_t first, size_t n)
{
    uint64_t e = 0;
    for (size_t r = first; r < first + n; r++)
        e += runs->run[r].n;
    return e;
}

static uint64_t page_up(uint64_t x)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    return (x + page - 1) / page * page;
}

/* Runs merged fanin at a time into longer runs until fanin are left. */
static bool narrow(lct__mrc_runs *runs)
{
    size_t fanin = lct__mrc_runs_limits.fanin < 2 ? 2
                                                  : lct__mrc_runs_limits.fanin;
    sink *s = malloc(sizeof *s);
    bool ok = s != NULL;
    while (ok && runs->nrun > fanin) {
        uint64_t most = entries(runs, 0, fanin);
        *s = (sink){.fd = runs->spill - 1, .off = runs->end,
                    .coff = runs->end + 8 * most};
        /* the merged run is listed before its sources go */
        ok = merge(runs, 0, fanin, s) &&
             add_run(runs, (lct__mrc_spilled){s->off, s->coff, s->n});
        if (!ok)
            break;
        runs->end = s->coff + 8 * most;
        punch(s->fd, runs->run[0].off,
              runs->run[fanin - 1].coff + 8 * runs->run[fanin - 1].n -
                  runs->run[0].off);
        memmove(runs->run, runs->run + fanin,
                (runs->nrun - fanin) * sizeof *runs->run);
        runs->nrun -= fanin;
    }
    free(s);
    return ok;
}

/* The set as the curve's arrays: counts made cumulative in place. */
static void take_in_memory(lct__mrc_runs *runs, lct__mrc_dists *out)
{
    for (uint64_t i = 1; i < runs->n; i++)
        runs->count[i] += runs->count[i - 1];
    out->value = runs->value, out->cum = runs->count, out->n = runs->n;
    runs->value = runs->count = NULL;
    runs->n = runs->cap = 0;
}

/* Every run (the set among them) merged into the file, after them, and
 * mapped as the curve's arrays; false (the runs intact) when a write or
 * the mapping fails. */
static bool take_merged(lct__mrc_runs *runs, lct__mrc_dists *out)
{
    /* what the merge does not need goes before its cursors come */
    free(runs->buf), free(runs->scratch), free(runs->digits);
    free(runs->value), free(runs->count);
    runs->buf = runs->scratch = runs->value = runs->count = NULL;
    runs->digits = NULL;
    runs->nbuf = runs->bufcap = 0, runs->cap = 0;
    if (!narrow(runs))
        return false;
    int fd = runs->spill - 1;
    uint64_t most = entries(runs, 0, runs->nrun);
    uint64_t at = page_up(runs->end), cat = page_up(at + 8 * most);
    sink *s = malloc(sizeof *s);
    if (!s)
        return false;
    *s = (sink){.fd = fd, .off = at, .coff = cat, .cumulative = true};
    bool ok = merge(runs, 0, runs->nrun, s);
    uint64_t n = s->n;
    free(s);
    if (!ok)
        return false;
    size_t len = (size_t)(cat - at + 8 * n);
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)at);
    if (map == MAP_FAILED)
        return false;
    punch(fd, 0, at); /* the runs are merged: only the result is read */
    out->value = map;
    out->cum = (uint64_t *)((char *)map + (cat - at));
    out->n = n;
    out->map = map;
    out->map_len = len;
    return true;
}

bool lct__mrc_runs_take(lct__mrc_runs *runs, lct__mrc_dists *out)
{
    memset(out, 0, sizeof *out);
    if (!flush(runs))
        return false;
    /* with runs in the file, the set joins them, or they all come back
     * into memory when the file fails */
    if (runs->nrun && runs->n && !spill_set(runs) && !unspill(runs))
        return false;
    if (runs->nrun && !take_merged(runs, out) && !unspill(runs))
        return false;
    if (!out->map)
        take_in_memory(runs, out);
    return true;
}

void lct__mrc_runs_free(lct__mrc_runs *runs)
{
    free(runs->buf);
    free(runs->scratch);
    free(runs->digits);
    free(runs->value);
    free(runs->count);
    free(runs->run);
    if (runs->spill)
        close(runs->spill - 1);
    memset(runs, 0, sizeof *runs);
}

void lct__mrc_dists_free(uint64_t *value, uint64_t *cum, void *map,
                         size_t map_len)
{
    if (map) {
        munmap(map, map_len);
        return;
    }
    free(value);
    free(cum);
}
