/*
 * logged.c - what a lookup record states of LMCache's lookup-hash log
 * it came from (lct_lookup_tokens, lct_lookup_chunk_bytes): `lct import
 * lookup-logs` keeps each event's seq_len, chunk_size and the bytes a
 * chunk weighs by LMCache's dtype table in the record's args, which
 * LMCache's simulator counts by and a trace records otherwise nowhere.
 * The import writes them as the args' first pairs, so a record is read
 * from its start and the search stops at the first other name: a
 * recorded call (whose args start with its keys) costs one key compare,
 * not a walk of its keys.
 */
#include "lct_cache.h"

#include <string.h>

/* The int value of `name` among the args' leading logged pairs. */
static bool logged_uint(const lct_record *rec, const char *name,
                        uint64_t *out)
{
    static const char *const logged[] = {"seq_len", "chunk_size",
                                         "kv_bytes_per_chunk"};
    lct_iter it;
    lct_value k, v;
    lct_str s;
    if (lct_map_iter_init(rec->args, &it) != LCT_OK)
        return false;
    while (lct_map_iter_next(&it, &k, &v) == 1 &&
           lct_value_get_str(k, &s) == LCT_OK) {
        bool known = false;
        for (size_t i = 0; i < sizeof logged / sizeof *logged; i++)
            known |= lct_str_eq(s, logged[i]);
        if (!known)
            return false;
        int64_t n;
        if (lct_str_eq(s, name))
            return lct_value_get_int64(v, &n) == LCT_OK && n >= 0 &&
                   (*out = (uint64_t)n, true);
    }
    return false;
}

bool lct_lookup_tokens(const lct_record *rec, uint64_t *seq_len,
                       uint64_t *chunk_tokens)
{
    *seq_len = 0;
    if (!logged_uint(rec, "chunk_size", chunk_tokens))
        *chunk_tokens = 1; /* simulate(): event.get("chunk_size", 1) */
    return logged_uint(rec, "seq_len", seq_len);
}

bool lct_lookup_chunk_bytes(const lct_record *rec, uint64_t *bytes)
{
    *bytes = 0;
    return logged_uint(rec, "kv_bytes_per_chunk", bytes);
}
