/*
 * lookup_import.c - LMCache's lookup-hash logs read, checked with jansson
 * and written as a trace of submit_prefetch_task records (`lct import
 * lookup-logs`), as LMCache's cache simulator reads the same lines.
 */
#include "tool.h"
#include "lookup.h"

#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct event {
    double t;
    size_t seq; /* read order: equal times keep it, as Python's sort */
    char *line;
} event;

static int by_time(const void *a, const void *b)
{
    const event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The files a path names: a directory's lookup_hashes_*.jsonl, sorted,
 * or the path itself. */
static bool expand(const char *path, glob_t *g)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t size = strlen(path) + 32;
        char *pat = malloc(size);
        if (!pat)
            return false;
        snprintf(pat, size, "%s/lookup_hashes_*.jsonl", path);
        int rc = glob(pat, GLOB_APPEND, NULL, g);
        free(pat);
        if (rc == GLOB_NOMATCH)
            fprintf(stderr, "%s import: WARNING: %s: no lookup_hashes_*.jsonl "
                    "in this directory\n", tool_name, path);
        return rc == 0 || rc == GLOB_NOMATCH;
    }
    return glob(path, GLOB_APPEND | GLOB_NOCHECK | GLOB_NOMAGIC, NULL, g) == 0;
}

bool tool_lookup_logs_files(char **paths, int n, glob_t *g)
{
    memset(g, 0, sizeof *g);
    for (int i = 0; i < n; i++)
        if (!expand(paths[i], g))
            return false;
    return true;
}

static void warn_line(const char *file, size_t lineno, const char *why)
{
    fprintf(stderr, "%s import: WARNING: ", tool_name);
    tool_put_vis(stderr, file, strlen(file));
    fprintf(stderr, ":%zu: skipping malformed line: %s\n", lineno, why);
}

/* Why a line is not a lookup event LMCache's simulator would take, or
 * NULL; *t its timestamp. */
static const char *check_event(json_t *e, double *t, json_error_t *err)
{
    if (!e)
        return err->text;
    if (!json_is_object(e))
        return "not a JSON object";
    json_t *ts = json_object_get(e, "timestamp");
    json_t *hashes = json_object_get(e, "chunk_hashes");
    if (ts && !json_is_number(ts))
        return "timestamp is not a number";
    *t = ts ? json_number_value(ts) : 0;
    if (!hashes)
        return "no chunk_hashes";
    if (!json_is_array(hashes))
        return "chunk_hashes is not a list";
    size_t i;
    json_t *h;
    json_array_foreach(hashes, i, h) {
        const char *s = json_string_value(h);
        if (!s || strncmp(s, "0x", 2) != 0 || !s[2] ||
            strspn(s + 2, "0123456789abcdefABCDEF") != strlen(s + 2) ||
            strlen(s + 2) > 128)
            return "a chunk hash is not 0x and hex digits";
    }
    /* simulate() fails on a string or null (TypeError) and counts a
     * fraction or a negative as it is, which lct's token counts (whole,
     * unsigned) cannot follow: the line is refused, not guessed at */
    const char *counts[] = {"seq_len", "chunk_size"};
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(e, counts[k]);
        if (v && !(json_is_integer(v) && json_integer_value(v) >= 0))
            return "seq_len and chunk_size must be whole numbers >= 0 "
                   "(LMCache's simulator fails on other types and counts "
                   "fractions and negatives as they are)";
    }
    const char *str_fields[] = {"request_id", "model_name"};
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(e, str_fields[k]);
        if (v && !json_is_string(v))
            return "request_id and model_name must be strings";
    }
    if (!json_object_get(e, "model_name"))
        return "no model_name";
    return NULL;
}

/* One file's lines into *ev (grown); false if it could not be read. */
static bool read_file(const char *file, event **ev, size_t *n, size_t *cap,
                      bool quiet, uint64_t *bad)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        fprintf(stderr, "%s import: ", tool_name);
        tool_put_vis(stderr, file, strlen(file));
        fprintf(stderr, ": %s\n", strerror(errno));
        return false;
    }
    char *line = NULL;
    size_t len = 0;
    ssize_t got;
    for (size_t lineno = 1; (got = getline(&line, &len, f)) >= 0; lineno++) {
        if (strspn(line, " \t\r\n") == (size_t)got)
            continue;
        json_error_t err;
        json_t *e = json_loadb(line, (size_t)got, 0, &err);
        double t = 0;
        const char *why = check_event(e, &t, &err);
        json_decref(e);
        if (why) {
            if (!quiet)
                warn_line(file, lineno, why);
            ++*bad;
            continue;
        }
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 1024;
            event *g = reallocarray(*ev, c, sizeof *g);
            if (!g)
                break;
            *ev = g;
            *cap = c;
        }
        (*ev)[*n] = (event){t, *n, strndup(line, (size_t)got)};
        if (!(*ev)[(*n)++].line)
            break;
    }
    free(line);
    fclose(f);
    return true;
}

static unsigned hex_digit(char c)
{
    return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
}

/* The chunk hash "0x..." (checked: hex digits, at most 128) as bytes.
 * LMCache keys its simulator by the string, and its logs spell hashes
 * as hex(int) does: lowercase, no leading zero (an odd count of digits
 * gets one here, to make whole bytes).  Any other spelling ("0x0abc",
 * "0xABC") is another key there, so it becomes two zero bytes and the
 * string itself, which no hex(int) spelling's bytes begin with. */
static size_t hash_bytes(const char *s, unsigned char *out)
{
    size_t n = strlen(s + 2), k = 0, i = 0;
    bool plain = strspn(s + 2, "0123456789abcdef") == n &&
                 (n == 1 || s[2] != '0');
    if (!plain) {
        out[k++] = 0;
        out[k++] = 0;
        memcpy(out + k, s, n + 2);
        return k + n + 2;
    }
    s += 2;
    if (n % 2)
        out[k++] = (unsigned char)hex_digit(s[i++]);
    for (; i < n; i += 2)
        out[k++] = (unsigned char)(hex_digit(s[i]) << 4 | hex_digit(s[i + 1]));
    return k;
}

static void write_layout(lct_writer *w, json_t *e)
{
    json_t *shapes = json_object_get(e, "shapes");
    json_t *dtypes = json_object_get(e, "dtypes");
    size_t n = json_array_size(shapes) < json_array_size(dtypes)
                   ? json_array_size(shapes) : json_array_size(dtypes);
    lct_writer_codec(w, "MemoryLayoutDesc");
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "shapes");
    lct_writer_array(w, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(shapes, i), *d;
        size_t j;
        lct_writer_array(w, (uint32_t)json_array_size(s));
        json_array_foreach(s, j, d)
            lct_writer_int(w, json_is_integer(d) ? json_integer_value(d) : 0);
    }
    lct_writer_cstr(w, "dtypes");
    lct_writer_array(w, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        const char *d = json_string_value(json_array_get(dtypes, i));
        char name[128];
        snprintf(name, sizeof name, "%s%s",
                 d && strncmp(d, "torch.", 6) == 0 ? "" : "torch.",
                 d ? d : "unknown");
        lct_writer_cstr(w, name);
    }
}

/* LMCache's compute_kv_bytes_per_chunk (simulator.py): over the pairs
 * of shapes and dtypes, the product of the shape times the dtype's bytes
 * in its own table, a dtype outside it counted 0 ("torch.bfloat16" and
 * "uint8" among them); 0 without shapes or dtypes. */
static int64_t lmcache_chunk_bytes(json_t *e)
{
    static const struct {
        const char *name;
        int64_t size;
    } table[] = {{"float32", 4}, {"float16", 2}, {"bfloat16", 2},
                 {"float8_e4m3fn", 1}, {"float8_e5m2", 1}, {"int8", 1},
                 {"int32", 4}, {"int64", 8}};
    json_t *shapes = json_object_get(e, "shapes");
    json_t *dtypes = json_object_get(e, "dtypes");
    size_t n = json_array_size(shapes) < json_array_size(dtypes)
                   ? json_array_size(shapes) : json_array_size(dtypes);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const char *d = json_string_value(json_array_get(dtypes, i));
        int64_t size = 0, prod = 1;
        for (size_t k = 0; d && k < sizeof table / sizeof *table; k++)
            if (strcmp(d, table[k].name) == 0)
                size = table[k].size;
        json_t *shape = json_array_get(shapes, i), *x;
        size_t j;
        json_array_foreach(shape, j, x)
            prod *= json_is_integer(x) ? json_integer_value(x) : 0;
        total += prod * size;
    }
    return total;
}

/* One event as a submit_prefetch_task record. */
static lct_status write_event(lct_writer *w, const event *ev, double t0,
                              lct_error *err)
{
    json_t *e = json_loads(ev->line, 0, NULL);
    json_t *hashes = json_object_get(e, "chunk_hashes");
    const char *model = json_string_value(json_object_get(e, "model_name"));
    const char *id = json_string_value(json_object_get(e, "request_id"));
    static const char qualname[] = "lmcache.v1.distributed.storage_manager."
                                   "StorageManager.submit_prefetch_task";
    lct_writer_record_begin(w, ev->t - t0, ev->t, qualname,
                            sizeof qualname - 1);
    /* the logged token counts and chunk bytes, which a trace has nowhere
     * else: LMCache's simulator counts seq_len tokens, chunk_size a hit
     * chunk, and sizes chunks by kv_bytes_per_chunk */
    json_t *seq = json_object_get(e, "seq_len");
    json_t *cs = json_object_get(e, "chunk_size");
    bool has_cs = cs != NULL; /* check_event: whole numbers >= 0 */
    lct_writer_map(w, 5u + (uint32_t)has_cs);
    /* first in the map: lct_lookup_tokens reads only the leading pairs;
     * a missing seq_len is 0, as simulate() takes event.get("seq_len", 0)
     * (its chunks' tokens are not counted) */
    lct_writer_cstr(w, "seq_len");
    lct_writer_int(w, seq ? json_integer_value(seq) : 0);
    if (has_cs) {
        lct_writer_cstr(w, "chunk_size");
        lct_writer_int(w, json_integer_value(cs));
    }
    /* what LMCache's simulator sizes a chunk by, which lct's own dtype
     * table does not always give (it knows uint8, LMCache's does not) */
    lct_writer_cstr(w, "kv_bytes_per_chunk");
    lct_writer_int(w, lmcache_chunk_bytes(e));
    lct_writer_cstr(w, "keys");
    lct_writer_array(w, (uint32_t)json_array_size(hashes));
    size_t i;
    json_t *h;
    json_array_foreach(hashes, i, h) {
        unsigned char bytes[2 + 2 + 128];
        size_t n = hash_bytes(json_string_value(h), bytes);
        lct_writer_codec(w, "ObjectKey");
        lct_writer_map(w, 3);
        lct_writer_cstr(w, "chunk_hash");
        lct_writer_bin(w, bytes, n);
        lct_writer_cstr(w, "model_name");
        lct_writer_cstr(w, model ? model : "");
        lct_writer_cstr(w, "kv_rank");
        lct_writer_uint(w, 0);
    }
    lct_writer_cstr(w, "layout_desc");
    write_layout(w, e);
    lct_writer_cstr(w, "external_request_id");
    lct_writer_cstr(w, id ? id : "");
    json_decref(e);
    return lct_writer_end(w, err);
}

static lct_status write_header(lct_writer *w, const event *first, double t0,
                               lct_error *err)
{
    json_t *e = first ? json_loads(first->line, 0, NULL) : NULL;
    json_t *cs = json_object_get(e, "chunk_size");
    char config[64];
    int n = snprintf(config, sizeof config, "{\"chunk_size\": %" PRId64 "}",
                     json_is_integer(cs) ? (int64_t)json_integer_value(cs)
                                         : (int64_t)0);
    json_decref(e);
    lct_header h;
    memset(&h, 0, sizeof h);
    h.level = (lct_str){"storage", 7};
    h.trace_schema_version = 2;
    h.t_mono_start = 0;
    h.t_wall_start = t0;
    h.sm_config_json = (lct_str){config, (size_t)n};
    h.sm_config_digest = (lct_str){"", 0};
    return lct_writer_header(w, &h, err);
}

bool tool_lookup_logs_import(const glob_t *files, int fd, bool quiet,
                             uint64_t *events, uint64_t *bad)
{
    event *ev = NULL;
    size_t n = 0, cap = 0;
    *bad = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < files->gl_pathc; i++)
        ok = read_file(files->gl_pathv[i], &ev, &n, &cap, quiet, bad);
    if (ok && n > 1)
        qsort(ev, n, sizeof *ev, by_time);
    lct_writer *w = NULL;
    lct_error err;
    double t0 = n ? ev[0].t : 0;
    ok = ok && lct_writer_open_fd(fd, &w, &err) == LCT_OK &&
         write_header(w, n ? &ev[0] : NULL, t0, &err) == LCT_OK;
    for (size_t i = 0; ok && i < n; i++)
        ok = write_event(w, &ev[i], t0, &err) == LCT_OK;
    if (!ok && w)
        fprintf(stderr, "%s import: %s\n", tool_name, err.message);
    lct_writer_close(w);
    for (size_t i = 0; i < n; i++)
        free(ev[i].line);
    free(ev);
    *events = n;
    return ok;
}
