/*
 * logged.c - what a lookup record states of LMCache's lookup-hash log
 * it came from (lct_lookup_tokens, lct_lookup_chunk_bytes): `lct import
 * lookup-logs` keeps each event's seq_len, chunk_size and the bytes a
 * chunk weighs by LMCache's dtype table in the record's args, which
 * LMCache's simulator counts by and a trace records otherwise nowhere.
 */
#include "lct.h"

static bool arg_uint(const lct_record *rec, const char *name, uint64_t *out)
{
    lct_value v;
    int64_t n;
    if (lct_map_find(rec->args, name, &v) != LCT_OK ||
        lct_value_get_int64(v, &n) != LCT_OK || n < 0)
        return false;
    *out = (uint64_t)n;
    return true;
}

bool lct_lookup_tokens(const lct_record *rec, uint64_t *seq_len,
                       uint64_t *chunk_tokens)
{
    *seq_len = 0;
    if (!arg_uint(rec, "chunk_size", chunk_tokens))
        *chunk_tokens = 1; /* simulate(): event.get("chunk_size", 1) */
    return arg_uint(rec, "seq_len", seq_len);
}

bool lct_lookup_chunk_bytes(const lct_record *rec, uint64_t *bytes)
{
    *bytes = 0;
    return arg_uint(rec, "kv_bytes_per_chunk", bytes);
}
