/*
 * lookup_log.c - LMCache's lookup-hash logs (the JSONL files its
 * LookupHashLoggingSubscriber writes and its cache simulator reads)
 * written from a trace's lookups (`lct keys --lookup-jsonl`); reading
 * them back as a trace is lookup_import.c's.
 */
#include "tool.h"
#include "lookup.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Append s (len bytes) to a growing buffer. */
static bool put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n + 1)
            c *= 2;
        char *g = realloc(*buf, c);
        if (!g)
            return false;
        *buf = g;
        *cap = c;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return true;
}

/* A str as JSON (RFC 8259 escapes; non-ASCII left as UTF-8, where
 * Python's json.dumps writes \\u escapes: the same value to a reader). */
static void json_str(FILE *f, const char *s, size_t n)
{
    lct_json_write_string(s, n, tool_file_write, f);
}

static void json_double(FILE *f, double d)
{
    char buf[LCT_DOUBLE_BUFSIZE];
    fwrite(buf, 1, lct_json_format_double(d, buf), f);
}

/* The call's layout as LMCache logs it: dtypes without "torch.", shapes
 * as lists of ints; empty lists when the call has none. */
static void layout_json(FILE *f, const lct_record *rec)
{
    lct_value v;
    lct_layout_desc d;
    lct_prefetch_spec spec;
    /* a request spec's: object group 0's, LMCache's layout_descs[0] */
    bool have = lct_map_find(rec->args, "layout_desc", &v) == LCT_OK
                    ? lct_layout_desc_get(v, &d, NULL) == LCT_OK
                    : lct_map_find(rec->args, "spec", &v) == LCT_OK &&
                          lct_prefetch_spec_get(v, &spec, NULL) == LCT_OK &&
                          lct_prefetch_spec_layout(&spec, 0, &d, NULL) ==
                              LCT_OK;
    fputs(", \"dtypes\": [", f);
    lct_iter it;
    lct_value x;
    if (have && lct_array_iter_init(d.dtypes, &it) == LCT_OK)
        for (int i = 0; lct_array_iter_next(&it, &x) == 1; i++) {
            lct_str name = {"", 0};
            lct_dtype_get(x, &name, NULL);
            if (name.len > 6 && memcmp(name.ptr, "torch.", 6) == 0)
                name.ptr += 6, name.len -= 6;
            fputs(i ? ", " : "", f);
            json_str(f, name.ptr, name.len);
        }
    fputs("], \"shapes\": [", f);
    if (have && lct_array_iter_init(d.shapes, &it) == LCT_OK)
        for (int i = 0; lct_array_iter_next(&it, &x) == 1; i++) {
            lct_value arr, dim;
            lct_iter dims;
            fputs(i ? ", [" : "[", f);
            if (lct_list_get(x, &arr, NULL, NULL) == LCT_OK &&
                lct_array_iter_init(arr, &dims) == LCT_OK)
                for (int j = 0; lct_array_iter_next(&dims, &dim) == 1; j++) {
                    int64_t n = 0;
                    lct_value_get_int64(dim, &n);
                    fprintf(f, "%s%" PRId64, j ? ", " : "", n);
                }
            fputc(']', f);
        }
    fputc(']', f);
}

void tool_lookup_log_key(tool_lookup_log *l, const lct_record *rec,
                         uint64_t idx, const lct_object_key *k)
{
    if (l->failed)
        return;
    if (!l->open || idx != l->idx) {
        tool_lookup_log_flush(l);
        l->open = true;
        l->idx = idx;
        l->keys = 0;
        l->hashes_len = 0;
        lct_chunk_rows_reset(&l->rows);
        /* what the line needs of the record, taken now: a streamed
         * record's views die at the next one */
        char *head = NULL;
        size_t hl = 0;
        FILE *f = open_memstream(&head, &hl);
        if (!f) {
            l->failed = true;
            return;
        }
        fputs("{\"timestamp\": ", f);
        json_double(f, rec->t_wall);
        fputs(", \"request_id\": ", f);
        lct_value v;
        lct_str id = {"", 0};
        if (lct_map_find(rec->args, "external_request_id", &v) == LCT_OK)
            lct_value_get_str(v, &id);
        json_str(f, id.ptr, id.len);
        fputs(", \"model_name\": ", f);
        json_str(f, k->model_name.ptr, k->model_name.len);
        fprintf(f, ", \"chunk_size\": %" PRIu64 ", \"seq_len\": ",
                l->chunk_size);
        fclose(f);
        free(l->head);
        l->head = head;
        char *lay = NULL;
        size_t ll = 0;
        f = open_memstream(&lay, &ll);
        if (!f) {
            l->failed = true;
            return;
        }
        layout_json(f, rec);
        fclose(f);
        free(l->layout);
        l->layout = lay;
    }
    if (lct_chunk_of(&l->rows, k) != l->keys)
        return; /* the chunk's hash is written: an earlier row's key */
    if ((l->keys && !put(&l->hashes, &l->hashes_len, &l->hashes_cap, ", ", 2)) ||
        !put(&l->hashes, &l->hashes_len, &l->hashes_cap, "\"0x", 3))
        l->failed = true;
    /* every byte, however long the hash: a shortened one could make two
     * keys one */
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < k->chunk_hash.len && !l->failed; i++) {
        unsigned char b = (unsigned char)k->chunk_hash.ptr[i];
        char two[2] = {digits[b >> 4], digits[b & 15]};
        l->failed = !put(&l->hashes, &l->hashes_len, &l->hashes_cap, two, 2);
    }
    if (!put(&l->hashes, &l->hashes_len, &l->hashes_cap, "\"", 1))
        l->failed = true;
    l->keys++;
}

void tool_lookup_log_flush(tool_lookup_log *l)
{
    if (!l->open || l->failed)
        return;
    l->open = false;
    fprintf(l->f, "%s%" PRIu64 "%s, \"chunk_hashes\": [%s]}\n", l->head,
            l->keys * l->chunk_size, l->layout,
            l->hashes ? l->hashes : "");
    l->lines++;
}

void tool_lookup_log_free(tool_lookup_log *l)
{
    free(l->head);
    free(l->layout);
    free(l->hashes);
}

