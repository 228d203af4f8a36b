/*
 * config.c - what a trace's header says of the StorageManager's
 * configuration (sm_config_json, parsed with jansson): the chunk size in
 * tokens, which turns the prefix rule's chunk positions into tokens.
 * Built without jansson, no chunk size is read (0: the commands count
 * chunks, or take --chunk-size).
 */
#include "tool.h"
#include "keys.h"

#include <string.h>

#ifndef LCT_HAVE_JANSSON
uint64_t tool_chunk_size(const lct_reader *r)
{
    (void)r;
    return 0;
}
#else
#include <jansson.h>

uint64_t tool_chunk_size(const lct_reader *r)
{
    const lct_header *h = lct_reader_header(r);
    if (!h || !h->sm_config_json.len)
        return 0;
    json_error_t err;
    json_t *root = json_loadb(h->sm_config_json.ptr, h->sm_config_json.len,
                              JSON_DISABLE_EOF_CHECK, &err);
    json_t *v = root && json_is_object(root)
                    ? json_object_get(root, "chunk_size") : NULL;
    uint64_t n = v && json_is_integer(v) && json_integer_value(v) > 0
                     ? (uint64_t)json_integer_value(v) : 0;
    json_decref(root);
    return n;
}
#endif
