/*
 * key_templates_internal.h - the walker's key templates (msgpack.c's
 * only): a key like one walked whole before is stepped over by comparing
 * it with that one's bytes, and the codec's ObjectKey opening as one
 * unit.  Inline functions for the walker's hot path; the templates'
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
 * checked, same nesting room) and is stepped over in a few 16-byte
 * compares.  The template is a copy of the key's bytes, kept per thread
 * and per mode, so it outlives the buffer it came from and the next walk
 * starts with it.  mask holds, for each tail byte (from the end of the
 * hash), 0xff where it must equal the template and 0x80 at the rank and
 * group, whose high bit must stay clear.  A key is a candidate from
 * objectkey_step, which knows where its rank and group are; it becomes
 * the template when its map closes.
 */
#define KEY_TAIL_MAX 192
typedef struct key_candidate {
    const unsigned char *key; /* NULL: none open */
    unsigned depth;           /* the nesting the key itself sits at */
    size_t rank_at, group_at; /* tail offsets of the two fixints, or 0 */
} key_candidate;

typedef struct key_template {
    size_t len; /* 0: none yet */
    unsigned depth;
    unsigned char key[LCT__OBJECTKEY_PREFIX + KEY_TAIL_MAX];
    unsigned char mask[KEY_TAIL_MAX];
} key_template;

/* Several templates, for traces whose keys mix shapes (salted and not,
 * several models): a key's slot is chosen by bytes that tell the shapes
 * apart (its payload's pair count and the model name's str head and
 * length, which sit at fixed places after the codec's opening), so each
 * shape keeps its own and a key is compared with one. */
#define KEY_TEMPLATES 8
#define KEY_SLOT_BYTES (LCT__OBJECTKEY_PREFIX + 13)
typedef struct key_templates {
    key_template t[KEY_TEMPLATES];
} key_templates;

/* The slot of the key at p, which has KEY_SLOT_BYTES bytes. */
static inline unsigned key_slot(const unsigned char *p)
{
    const unsigned char *q = p + LCT__OBJECTKEY_PREFIX;
    return (p[19] ^ (unsigned)q[11] * 3u ^ (unsigned)q[12] * 5u) %
           KEY_TEMPLATES;
}

/* A stack entry of the walker: a container's count shifted over its
 * flags (WALK_IS_MAP, WALK_IN_KEY below). */
#define WALK_FLAG_BITS 2
#define WALK_FLAG_MASK 3u


/* 16 bytes as one vector (GNU C, like the range initialisers above): one
 * SSE2 register on x86-64, two words where there is no vector unit. */
typedef uint64_t bytes16 __attribute__((vector_size(16)));

static inline bytes16 load16(const unsigned char *p)
{
    bytes16 v;
    memcpy(&v, p, 16);
    return v;
}

/* The bits where 16 bytes at a and b differ, under mask m. */
static inline bytes16 diff16(const unsigned char *a, const unsigned char *b,
                             const unsigned char *m)
{
    return (load16(a) ^ load16(b)) & load16(m);
}

/* The candidate's key, walked whole, ends at after. */
static void key_template_set(key_template *t, const key_candidate *c,
                             const unsigned char *after)
{
    size_t tail_len = (size_t)(after - (c->key + LCT__OBJECTKEY_PREFIX));
    /* Compared 16 bytes at a time: a tail (none, or the model name's
     * pair and more) shorter than that is left to objectkey_step. */
    if (tail_len > KEY_TAIL_MAX || (tail_len && tail_len < 16)) {
        t->len = 0;
        return;
    }
    memset(t->mask, 0xff, tail_len);
    if (c->rank_at)
        t->mask[c->rank_at] = 0x80;
    if (c->group_at)
        t->mask[c->group_at] = 0x80;
    t->len = (size_t)(after - c->key);
    memcpy(t->key, c->key, t->len);
    t->depth = c->depth;
}

/* Whether the bytes at p, before end, are a key of the template's layout
 * at the template's depth (see key_template). */
static inline bool key_template_match(const key_template *t,
                                      const unsigned char *p,
                                      const unsigned char *end,
                                      unsigned depth)
{
    static const unsigned char all[16] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (!t->len || t->depth != depth || (size_t)(end - p) < t->len)
        return false;
    const unsigned char *k = t->key;
    bytes16 diff = diff16(p, k, all) | diff16(p + 16, k + 16, all);
    size_t tail_len = t->len - LCT__OBJECTKEY_PREFIX;
    const unsigned char *a = p + LCT__OBJECTKEY_PREFIX;
    const unsigned char *b = k + LCT__OBJECTKEY_PREFIX;
    size_t i = 0;
    for (; i + 16 <= tail_len; i += 16)
        diff |= diff16(a + i, b + i, t->mask + i);
    if (i < tail_len) /* the last 16, overlapping the ones before */
        diff |= diff16(a + tail_len - 16, b + tail_len - 16,
                       t->mask + tail_len - 16);
    return (diff[0] | diff[1] | (uint64_t)(p[32] ^ k[32])) == 0;
}

/*
 * At p (0x82), with room for two more levels at opened: the ObjectKey
 * fast path.  When the opening is there, step over it and the usual
 * pairs after it (lct__objectkey_usual_read), leaving the nesting as the
 * token-by-token path would (the wrapper map with its last value open in
 * opened[0], the payload map's remaining values in *rem), note the key in
 * *cand (its depth is the caller's to fill) and return true; else change
 * nothing.
 */
static inline bool objectkey_step(const unsigned char **pp,
                                  const unsigned char *end, bool utf8,
                                  size_t *opened, size_t *rem, unsigned flags,
                                  key_candidate *cand)
{
    const unsigned char *p = *pp;
    if ((size_t)(end - p) < LCT__OBJECTKEY_PREFIX)
        return false;
    unsigned pairs = lct__objectkey_pairs(p);
    if (!pairs)
        return false;
    /* Counts fit what is left: 65 bytes were there.  Stack entries as
     * the walker keeps them (see lct__mp_walk); the wrapper's flags are
     * the payload's, the map's own bit under the same mode. */
    opened[0] = *rem << WALK_FLAG_BITS | flags;
    opened[1] = 0;
    lct__objectkey_usual u;
    lct__objectkey_usual_read(p + LCT__OBJECTKEY_PREFIX, end, pairs - 1, &u);
    if (u.pairs && utf8 && !lct__str_valid(u.model, u.model_len, end)) {
        /* the general path finds it, at the model name */
        u.pairs = 0;
        u.after = p + LCT__OBJECTKEY_PREFIX;
    }
    *rem = 2 * (size_t)(pairs - 1 - u.pairs);
    const unsigned char *tail = p + LCT__OBJECTKEY_PREFIX;
    cand->key = p;
    cand->rank_at = u.pairs >= 2 ? (size_t)(u.rank_at - tail) : 0;
    cand->group_at = u.pairs >= 3 ? (size_t)(u.group_at - tail) : 0;
    *pp = u.after;
    return true;
}

typedef struct key_state {
    key_templates *tpls; /* this thread's for the walk's mode */
    key_candidate cand;
} key_state;

/* The template the key at p is like (its slot's); NULL when it is not. */
static inline __attribute__((always_inline)) const key_template *
find_template(key_templates *ts,
                                                const unsigned char *p,
                                                const unsigned char *end,
                                                unsigned depth)
{
    if ((size_t)(end - p) < KEY_SLOT_BYTES)
        return NULL;
    const key_template *t = &ts->t[key_slot(p)];
    return key_template_match(t, p, end, depth) ? t : NULL;
}

/* The candidate, walked whole (its map closed at after), becomes its
 * slot's template (a template's key is longer than KEY_SLOT_BYTES). */
static void key_templates_add(key_templates *ts, const key_candidate *c,
                              const unsigned char *after)
{
    if ((size_t)(after - c->key) >= KEY_SLOT_BYTES)
        key_template_set(&ts->t[key_slot(c->key)], c, after);
}

/*
 * At p (0x82, with two levels of room): a key like the template, and,
 * with `run`, the values after it in its container that are too (stepped
 * over whole), or the ObjectKey opening (objectkey_step, the key becoming
 * the candidate, *flags the open payload map's: map_flag).  False when
 * neither: the token-by-token path reads it.
 * A run must not cross the args map's own keys, which must be str: there
 * the caller passes run false, so each value is judged where it sits.
 */
static inline __attribute__((always_inline)) bool
key_step(key_state *keys, const unsigned char **pp, const unsigned char *end,
         bool utf8, bool run, size_t *stack, unsigned *depth, size_t *rem,
         unsigned *flags, unsigned map_flag)
{
    const unsigned char *p = *pp;
    const key_template *tpl = find_template(keys->tpls, p, end, *depth);
    if (tpl) {
        size_t left = *rem;
        p += tpl->len;
        while (run && left &&
               (key_template_match(tpl, p, end, *depth) ||
                (tpl = find_template(keys->tpls, p, end, *depth)))) {
            p += tpl->len;
            left--;
        }
        *rem = left;
        *pp = p;
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
