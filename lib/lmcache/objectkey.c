/*
 * objectkey.c - the bytes of LMCache's ObjectKey as its msgpack codec
 * writes it, given to the msgpack layer as a unit (msgpack/unit_internal.h)
 * so that the walker, its key templates, the JSON writer and the key
 * layer's fast path step over a key whole.  This is the one place that
 * knows the layout: a change to the encoder is made here, and the static
 * asserts say when it no longer fits the unit's fixed sizes.
 *
 *   82 a5 "__t__" a9 "ObjectKey" a1 "v" 8N aa "chunk_hash" c4 20 <32 bytes>
 *   then, in the usual form: "model_name" str, "kv_rank" fixint,
 *   "object_group_id" fixint (optional), "cache_salt" nil or str (optional)
 */
#include <assert.h>

#include "msgpack/unit_internal.h"

#define OPENING_FIXED                                                      \
    "\x82\xa5__t__\xa9ObjectKey\xa1v\x80\xaa" "chunk_hash\xc4\x20"
/* the payload map's head: only its high nibble is fixed */
#define COUNT_AT 19
static_assert(COUNT_AT == LCT__MP_UNIT_COUNT_AT, "the count is where the unit's is");

/* The key templates compare the opening's first 33 bytes and skip the
 * 32 after them (the hash): a layout that moves either needs them
 * changed too. */
static_assert(sizeof OPENING_FIXED - 1 == LCT__MP_UNIT_FREE_AT,
              "the opening's fixed bytes end where the unit's free ones start");
static_assert(LCT__MP_UNIT_FREE_AT + 32 == LCT__MP_UNIT_OPENING,
              "the 32-byte hash ends the unit's opening");

/* The bytes the key templates' slot hashes: the pair count, and the model
 * name's str head and (for a str8) length, after its 11-byte name. */
static_assert(LCT__MP_UNIT_TELL_AT0 == COUNT_AT &&
                  LCT__MP_UNIT_TELL_AT1 == LCT__MP_UNIT_OPENING + 11 &&
                  LCT__MP_UNIT_TELL_AT2 == LCT__MP_UNIT_OPENING + 12,
              "the slot's bytes are the pair count and the model name's head");

#define CARE_ALL(n) [0 ... (n)-1] = 0xff

#define PAIR(head, str, k)                                                 \
    {.name = head str, .care = {CARE_ALL(sizeof str)},                     \
     .name_len = sizeof str, .kind = (k),                                  \
     .json_key = ",\"" str "\":", .json_key_len = sizeof str + 3}

static_assert(sizeof "\xaf" "object_group_id" - 1 <= LCT__MP_UNIT_NAME_MAX,
              "the longest name fits the name compare");
static_assert(sizeof ",\"object_group_id\":" <= LCT__MP_UNIT_JSON_KEY_MAX,
              "the longest name's JSON key fits");

#define JSON_OPEN "{\"__t__\":\"ObjectKey\",\"v\":{\"chunk_hash\":"
#define JSON_OPEN_UNWRAPPED "{\"chunk_hash\":"
static_assert(sizeof JSON_OPEN <= LCT__MP_UNIT_JSON_OPEN_MAX,
              "the JSON opening fits");

const lct__mp_unit lct__mp_objectkey = {
    .want = OPENING_FIXED,
    .opening_pairs = 1,
    .usual = {PAIR("\xaa", "model_name", LCT__MP_UNIT_STR),
              PAIR("\xa7", "kv_rank", LCT__MP_UNIT_SMALL_UINT),
              PAIR("\xaf", "object_group_id", LCT__MP_UNIT_SMALL_UINT)},
    .usual_needed = 2,
    .last = PAIR("\xaa", "cache_salt", LCT__MP_UNIT_STR_OR_NIL),
    .json_open = JSON_OPEN,
    .json_open_len = sizeof JSON_OPEN - 1,
    .json_open_unwrapped = JSON_OPEN_UNWRAPPED,
    .json_open_unwrapped_len = sizeof JSON_OPEN_UNWRAPPED - 1,
};
