/*
 * key_templates_internal.h - the walker's key templates (msgpack.c's
 * and key_templates.c's): a key like one walked whole before is stepped
 * over by comparing it with that one's bytes, and the codec's ObjectKey
 * opening as one unit.  The types and the walker's inline steps are here; making a
 * template and the compares are key_templates.c's; the templates'
 * storage (per thread and walk mode) is msgpack.c's.
 */
#ifndef LCT_KEY_TEMPLATES_INTERNAL_H
#define LCT_KEY_TEMPLATES_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "msgpack/msgpack_internal.h"

/*
 * The keys of one list nearly always differ from each other only in the
 * hash and in kv_rank and object_group_id, and the next record's keys
 * from this one's the same way.  Once a key has been walked whole, a
 * later key at the same depth, in a walk of the same mode, whose bytes
 * equal it outside the hash and whose rank and group are again positive
 * fixints, is valid as that one was (same layout, same strings already
 * checked, same nesting room) and is stepped over in a few 16- or 32-byte
 * compares.  Once a slot has seen keys that differ in their ASCII
 * cache_salt alone, the salt may differ too, in ASCII bytes of the same
 * length: a str of ASCII is valid UTF-8 whatever its bytes, and a
 * trace's tenants' keys then share a template.  The template is a copy
 * of the key's bytes, kept per thread and per mode, so it outlives the
 * buffer it came from and the next walk starts with it (key_template
 * says how it is kept).  A key is a candidate from objectkey_step, which
 * knows where its usual pairs' values are; it becomes the template when
 * its map closes.
 */
#define KEY_TAIL_MAX 192
typedef struct key_candidate {
    const unsigned char *key; /* NULL: none open */
    unsigned depth;           /* the nesting the key itself sits at */
    unsigned pairs;           /* usual pairs read whole */
    const unsigned char *at[LCT__MP_UNIT_USUAL]; /* their values */
} key_candidate;

/* 16 bytes as one vector (GNU C, like the range initialisers in
 * msgpack.c): one SSE2 register on x86-64, two words where there is no
 * vector unit. */
typedef uint64_t bytes16 __attribute__((vector_size(16)));

/* A template is the key's bytes masked and the mask: 0 over the hash,
 * 0x80 at the rank and group (whose high bit must stay clear) and at an
 * ASCII cache_salt's bytes (salt_at), 0xff elsewhere.  Both are stored
 * one place on, byte j at [j + 15], so that
 * the blocks the 16-byte compare reads (bytes 1, 17, then 65 + 16 i:
 * the codec's opening less the 0x82 the caller has seen, and the tail
 * after the hash) sit on 16-byte boundaries, where an SSE2 instruction
 * can take them as operands. */
#define KEY_MAX (LCT__MP_UNIT_OPENING + KEY_TAIL_MAX)
#define KEY_STORE_AT 15

/* A tail of fewer whole 32-byte blocks than this (most keys': qwen's
 * one) is compared in this many blocks (a template's at32: the last one
 * moved back to end where the key ends, a byte compared twice compared
 * alike), without the jump on the count: a trace that mixes key shapes
 * (salted and not, several models) changes the count from key to key,
 * and the jump's target with it (cachegrind, 20,000 `lct gen --mix`
 * records: 75,000 indirect mispredictions, 700 after). */
#define KEY_FIXED32 2

typedef struct key_template {
    unsigned depth1; /* the key's depth plus 1; 0: none yet */
    unsigned full;   /* whole 16-byte tail blocks */
    unsigned full32; /* whole 32-byte tail blocks */
    uint16_t at32[KEY_FIXED32]; /* a short tail's blocks (KEY_FIXED32) */
    bool usual;      /* of the usual form (fields says where) */
    lct__key_fields fields;
    /* The cache_salt's bytes, when the key's is ASCII and it followed a
     * key of this slot that differed from it in its salt alone, are
     * compared under a mask of 0x80: any other ASCII salt of the same
     * length is as valid (a tenant's key is like another tenant's), and
     * a byte with its high bit set is not taken.  0: none masked. */
    uint16_t salt_at, salt_len;
    size_t len;
    _Alignas(32) unsigned char key[KEY_STORE_AT + KEY_MAX];
    _Alignas(32) unsigned char mask[KEY_STORE_AT + KEY_MAX];
} key_template;

/* Several templates, for traces whose keys mix shapes (salted and not,
 * several models) and sit at several depths (a flat list, a request
 * spec's): a key's slot is chosen by its depth and the bytes that tell
 * the shapes apart (its payload's pair count and the model name's str
 * head and length, which sit at fixed places after the codec's
 * opening), so each keeps its own and a key is compared with one. */
#define KEY_TEMPLATES 16
#define KEY_SLOT_BYTES (LCT__MP_UNIT_TELL_AT2 + 1)
typedef struct key_templates {
    key_template t[KEY_TEMPLATES];
} key_templates;

/* The slot of the key at p, which has KEY_SLOT_BYTES bytes, at depth. */
static inline unsigned key_slot(const unsigned char *p, unsigned depth)
{
    return (p[LCT__MP_UNIT_TELL_AT0] ^
            (unsigned)p[LCT__MP_UNIT_TELL_AT1] * 3u ^
            (unsigned)p[LCT__MP_UNIT_TELL_AT2] * 5u ^ depth * 9u) %
           KEY_TEMPLATES;
}

/* The candidate's key, walked whole, ends at after: it becomes *t, or
 * *t is emptied when it is not a key a template can hold. */
void lct__key_template_set(key_template *t, const key_candidate *c,
                           const unsigned char *after);

/* From *pp: the keys like their slot's template at depth, at most max of
 * them, stepped over whole; returns how many and sets *pp past them. */
size_t lct__key_run(const key_templates *ts, const unsigned char **pp,
                    const unsigned char *end, unsigned depth, size_t max);

/* lct__key_run from the first element of the array at list (of count
 * elements): when its keys are the whole array, each like a template of
 * the usual form, in at most LCT__KEY_NOTE_PARTS parts of one template
 * (and one salt) each, the array becomes this thread's notes. */
size_t lct__key_run_noted(key_templates *ts, const unsigned char **pp,
                          const unsigned char *end, unsigned depth,
                          size_t max, const unsigned char *list,
                          size_t count);

/* Whether lct__key_run may take the 32-byte compare where the CPU has
 * AVX2 (by default it does), so that tests run both; returns whether it
 * now will. */
bool lct__key_run_wide(bool allow);

/* A stack entry of the walker: a container's count shifted over its
 * flags (WALK_IS_MAP, WALK_IN_KEY below). */
#define WALK_FLAG_BITS 2
#define WALK_FLAG_MASK 3u

/*
 * At p (0x82), with room for two more levels at opened: the ObjectKey
 * fast path.  When the unit's opening is there, step over it and the
 * usual pairs after it (lct__mp_unit_usual_read), leaving the nesting as
 * the token-by-token path would (the wrapper map with its last value open
 * in opened[0], the payload map's remaining values in *rem), note the key
 * in *cand (its depth is the caller's to fill) and return true; else
 * change nothing.
 */
static inline bool objectkey_step(const unsigned char **pp,
                                  const unsigned char *end, bool utf8,
                                  size_t *opened, size_t *rem, unsigned flags,
                                  key_candidate *cand)
{
    const lct__mp_unit *unit = &lct__mp_objectkey;
    const unsigned char *p = *pp;
    if ((size_t)(end - p) < LCT__MP_UNIT_OPENING)
        return false;
    unsigned pairs = lct__mp_unit_pairs(unit, p);
    if (pairs < unit->opening_pairs)
        return false;
    /* Counts fit what is left: the opening's bytes were there.  Stack
     * entries as the walker keeps them (see lct__mp_walk); the wrapper's
     * flags are the payload's, the map's own bit under the same mode. */
    opened[0] = *rem << WALK_FLAG_BITS | flags;
    opened[1] = 0;
    unsigned inner = pairs - unit->opening_pairs;
    lct__mp_unit_values v;
    lct__mp_unit_usual_read(unit, p + LCT__MP_UNIT_OPENING, end, inner, &v);
    for (unsigned i = 0; utf8 && i < v.pairs; i++) {
        if (unit->usual[i].kind == LCT__MP_UNIT_STR &&
            !lct__str_valid(v.at[i], v.len[i], end)) {
            /* the general path finds it, at this pair */
            v.pairs = i;
            v.after = i ? v.at[i - 1] + v.len[i - 1] : p + LCT__MP_UNIT_OPENING;
            break;
        }
    }
    *rem = 2 * (size_t)(inner - v.pairs);
    cand->key = p;
    cand->pairs = v.pairs;
    memcpy(cand->at, v.at, sizeof cand->at);
    *pp = v.after;
    return true;
}

typedef struct key_state {
    key_templates *tpls; /* this thread's for the walk's mode */
    key_candidate cand;
    /* Noting (LCT__WALK_NOTE_KEYS, until a first list of keys is
     * tried): the last array opened, and where its first element
     * starts. */
    bool note;
    const unsigned char *list, *list_first;
    size_t list_count;
} key_state;

/* The candidate, walked whole (its map closed at after), becomes its
 * slot's template (a template's key is longer than KEY_SLOT_BYTES). */
static inline void key_templates_add(key_templates *ts, const key_candidate *c,
                                     const unsigned char *after)
{
    if ((size_t)(after - c->key) >= KEY_SLOT_BYTES)
        lct__key_template_set(&ts->t[key_slot(c->key, c->depth)], c, after);
}

/*
 * At p (0x82, with two levels of room): a key like its template, and,
 * with `run`, the values after it in its container that are too (stepped
 * over whole), or the ObjectKey opening (objectkey_step, the key becoming
 * the candidate, *flags the open payload map's: map_flag).  False when
 * neither: the token-by-token path reads it.
 * A run must not cross a map's keys, which must be str (args) or
 * hashable: there the caller passes run false, so each value is judged
 * where it sits.
 */
static inline __attribute__((always_inline)) bool
key_step(key_state *keys, const unsigned char **pp, const unsigned char *end,
         bool utf8, bool run, size_t *stack, unsigned *depth, size_t *rem,
         unsigned *flags, unsigned map_flag)
{
    size_t max = run ? *rem + 1 : 1, n;
    if (keys->note && *pp == keys->list_first && run) {
        n = lct__key_run_noted(keys->tpls, pp, end, *depth, max, keys->list,
                               keys->list_count);
        keys->note = false; /* a record's first list of keys, or none */
    } else {
        n = lct__key_run(keys->tpls, pp, end, *depth, max);
    }
    if (n) {
        *rem -= n - 1; /* the first was counted by the caller */
        return true;
    }
    if (!objectkey_step(pp, end, utf8, stack + *depth, rem, *flags,
                        &keys->cand))
        return false;
    keys->cand.depth = *depth;
    *depth += 2;
    *flags = map_flag; /* the payload map is open */
    return true;
}

/* The walker's flags of an open container, kept beside its counter:
 * whether it is a map, and whether it is a map key or inside one (both
 * only under LCT__WALK_HASHABLE_KEYS, else always clear). */
enum { WALK_IS_MAP = 1, WALK_IN_KEY = 2 };

#endif
