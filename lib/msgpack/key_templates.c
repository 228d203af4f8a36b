/*
 * key_templates.c - making a key template and stepping over the keys like
 * one (the walker's key runs; see key_templates_internal.h for the rule a
 * template stands for).  Two compares of the same bytes under the same
 * masks: 16 bytes at a time (SSE2, or plain words), and 32 at a time on
 * x86-64 CPUs with AVX2, chosen once per process.
 */
#include "msgpack/key_templates_internal.h"
#include "lct_core.h"

#include <stdbool.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static inline bytes16 load16(const unsigned char *p)
{
    bytes16 v;
    memcpy(&v, p, 16);
    return v;
}

/* Whether all 16 bytes are zero: a byte compare and its bit mask on
 * SSE2 (three instructions, where the two halves' or takes five). */
static inline bool bytes16_zero(bytes16 v)
{
#ifdef __SSE2__
    return _mm_movemask_epi8(_mm_cmpeq_epi8((__m128i)v, _mm_setzero_si128())) ==
           0xffff;
#else
    return (v[0] | v[1]) == 0;
#endif
}

/* 16 bytes of a template's store, on a 16-byte boundary. */
static inline bytes16 stored16(const unsigned char *p)
{
    return load16(__builtin_assume_aligned(p, 16));
}

/* Where the key at k (len bytes) has its fields, when it is a unit of
 * the usual form whole (lct__mp_unit_whole); false when not. */
static bool usual_fields(const unsigned char *k, size_t len,
                         lct__key_fields *f)
{
    lct__mp_unit_values v = {0};
    const unsigned char *last = k;
    size_t last_len = 0;
    if (lct__mp_unit_whole(&lct__mp_objectkey, k, k + len, &v, &last,
                           &last_len) != k + len)
        return false;
    memset(f, 0, sizeof *f);
    for (unsigned i = 0; i < v.pairs; i++)
        f->at[i] = (uint16_t)(v.at[i] - k), f->len[i] = (uint16_t)v.len[i];
    f->at[LCT__MP_UNIT_USUAL] = (uint16_t)(last - k);
    f->len[LCT__MP_UNIT_USUAL] = (uint16_t)last_len;
    return true;
}

/* Whether the key c (len bytes, its salt at salt_at) is t's but for its
 * salt's bytes and what t leaves out: a trace whose tenants' keys come
 * one after another.  Only then is the salt masked, so a trace of one
 * salt keeps the whole compare, and the key layer's lists no check of
 * their salts (salts_alike). */
static bool salt_only_change(const key_template *t, const key_candidate *c,
                             size_t len, size_t salt_at, size_t salt_len)
{
    if (t->depth1 != c->depth + 1 || t->len != len || !t->usual ||
        t->fields.at[LCT__MP_UNIT_USUAL] != salt_at ||
        t->fields.len[LCT__MP_UNIT_USUAL] != salt_len)
        return false;
    const unsigned char *m = t->mask + KEY_STORE_AT, *w = t->key + KEY_STORE_AT;
    for (size_t i = 0; i < len; i++)
        if ((i < salt_at || i >= salt_at + salt_len) &&
            (c->key[i] & m[i]) != w[i])
            return false;
    return true;
}

void lct__key_template_set(key_template *t, const key_candidate *c,
                           const unsigned char *after)
{
    size_t tail_len = (size_t)(after - (c->key + LCT__MP_UNIT_OPENING));
    /* Compared 16 bytes at a time: a tail (none, or the model name's
     * pair and more) shorter than that is left to objectkey_step. */
    if (tail_len > KEY_TAIL_MAX || tail_len < 16) {
        t->depth1 = 0;
        return;
    }
    size_t len = (size_t)(after - c->key);
    lct__key_fields fields = {0};
    bool usual = usual_fields(c->key, len, &fields);
    size_t salt_at = fields.at[LCT__MP_UNIT_USUAL],
           salt_len = fields.len[LCT__MP_UNIT_USUAL];
    /* an ASCII str is valid UTF-8 whatever its bytes: the salt's length
     * stays compared in its head, its bytes' high bits under the mask */
    bool mask_salt = usual && salt_len &&
                     lct__ascii_only(c->key + salt_at, salt_len, after) &&
                     salt_only_change(t, c, len, salt_at, salt_len);
    unsigned char *mask = t->mask + KEY_STORE_AT;
    unsigned char *key = t->key + KEY_STORE_AT;
    memset(mask, 0xff, len);
    memset(mask + LCT__MP_UNIT_FREE_AT, 0, /* the hash */
           LCT__MP_UNIT_OPENING - LCT__MP_UNIT_FREE_AT);
    for (unsigned i = 0; i < c->pairs; i++) /* they stay small uints */
        if (lct__mp_objectkey.usual[i].kind == LCT__MP_UNIT_SMALL_UINT)
            mask[c->at[i] - c->key] = 0x80;
    t->usual = usual;
    t->fields = fields;
    t->salt_at = t->salt_len = 0;
    if (mask_salt) {
        memset(mask + salt_at, 0x80, salt_len);
        t->salt_at = (uint16_t)salt_at, t->salt_len = (uint16_t)salt_len;
    }
    memcpy(key, c->key, len);
    for (size_t i = 0; i < len; i += 16) { /* the store has room past len */
        bytes16 k = load16(key + i) & load16(mask + i);
        memcpy(key + i, &k, 16);
    }
    t->full = (unsigned)(tail_len / 16);
    t->full32 = (unsigned)(tail_len / 32);
    for (unsigned i = 0; i < KEY_FIXED32; i++) { /* match32's blocks */
        size_t at = LCT__MP_UNIT_OPENING + 32 * i;
        t->at32[i] = (uint16_t)(at < len - 32 ? at : len - 32);
    }
    t->len = len;
    t->depth1 = c->depth + 1;
}

/* The template in p's slot, when p (before end) can hold one of its
 * length and it is at the template's depth; the 0x82 is checked here for
 * the keys after a run's first. */
static inline __attribute__((always_inline)) const key_template *
slot_template(const key_templates *ts, const unsigned char *p,
              const unsigned char *end, unsigned depth1)
{
    if ((size_t)(end - p) < KEY_SLOT_BYTES || *p != 0x82)
        return NULL;
    const key_template *t = &ts->t[key_slot(p, depth1 - 1)];
    /* Opaque to the optimiser, which otherwise works the slot's address
     * out again for each block of the compare. */
    __asm__("" : "+r"(t));
    if (t->depth1 != depth1 || (size_t)(end - p) < t->len)
        return NULL;
    return t;
}

/* The 16 bytes at key offset at, in p and the template (at + 15 is a
 * multiple of 16 for the blocks below but the last). */
#define DIFF16(at)                                                         \
    ((load16(p + (at)) & stored16(t->mask + KEY_STORE_AT + (at))) ^        \
     stored16(t->key + KEY_STORE_AT + (at)))

/* One whole 16-byte tail block of the compare, entered at the count. */
#define BLOCK16(i)                                                         \
    case i + 1:                                                            \
        diff |= DIFF16(LCT__MP_UNIT_OPENING + 16 * i);                    \
        __attribute__((fallthrough));

static inline __attribute__((always_inline)) bool
match16(const key_template *t, const unsigned char *p)
{
    const unsigned char *k = t->key + KEY_STORE_AT, *m = t->mask + KEY_STORE_AT;
    size_t last = t->len - 16;
    bytes16 diff = (load16(p + 1) ^ stored16(k + 1)) |
                   (load16(p + 17) ^ stored16(k + 17)) |
                   ((load16(p + last) & load16(m + last)) ^ load16(k + last));
    switch (t->full) {
        BLOCK16(11)
        BLOCK16(10)
        BLOCK16(9)
        BLOCK16(8)
        BLOCK16(7)
        BLOCK16(6)
        BLOCK16(5)
        BLOCK16(4)
        BLOCK16(3)
        BLOCK16(2)
        BLOCK16(1)
        BLOCK16(0)
    default:
        break;
    }
    return bytes16_zero(diff);
}
#undef BLOCK16
#undef DIFF16

/*
 * The run: each key is compared first with the template the key before
 * it matched (in a list that is nearly always the one), then with its
 * slot's.  Any template that matches proves the key valid, so which one
 * is tried first changes the cost, never the answer.  Out of line, so the
 * compare keeps its vectors in registers (inside the walker's loop they
 * were spilled to the stack).
 */
#define KEY_RUN(match, on_new)                                             \
    const unsigned char *p = *pp;                                          \
    size_t n = 0;                                                          \
    const key_template *t = NULL;                                          \
    while (n < max) {                                                      \
        if (!t || (size_t)(end - p) < t->len || *p != 0x82 ||             \
            !match(t, p)) {                                                \
            const key_template *s = slot_template(ts, p, end, depth + 1);  \
            if (!s || s == t || !match(s, p))                              \
                break;                                                     \
            t = s;                                                         \
            on_new;                                                        \
        }                                                                  \
        p += t->len;                                                       \
        n++;                                                               \
    }                                                                      \
    *pp = p;

static _Thread_local lct__key_notes lct__notes;

const lct__key_notes *lct__key_notes_here(void)
{
    return &lct__notes;
}

void lct__key_notes_forget(void)
{
    lct__notes.list = NULL;
}

static __attribute__((noinline)) size_t
run16(const key_templates *ts, const unsigned char **pp,
      const unsigned char *end, unsigned depth, size_t max)
{
    KEY_RUN(match16, (void)0)
    return n;
}

/* A run that also says where its keys switched template: part i begins
 * at key at[i] and its keys are like t[i] (the first LCT__KEY_NOTE_PARTS
 * of them; seen counts them all).  Only a switch stores. */
typedef struct run_parts {
    unsigned seen;
    size_t at[LCT__KEY_NOTE_PARTS];
    const key_template *t[LCT__KEY_NOTE_PARTS];
} run_parts;

#define RUN_PART                                                           \
    do {                                                                   \
        if (rp->seen < LCT__KEY_NOTE_PARTS)                                \
            rp->at[rp->seen] = n, rp->t[rp->seen] = t;                     \
        rp->seen++;                                                        \
    } while (0)

static __attribute__((noinline)) size_t
run16_parts(const key_templates *ts, const unsigned char **pp,
            const unsigned char *end, unsigned depth, size_t max,
            run_parts *rp)
{
    KEY_RUN(match16, RUN_PART)
    return n;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(LCT_NO_WIDE)
#define HAVE_WIDE 1
#include <immintrin.h>
typedef uint64_t bytes32 __attribute__((vector_size(32)));

/* VEX instructions take unaligned memory operands, so the key and mask
 * are read where they sit. */
static inline __attribute__((always_inline, target("avx2"))) bytes32
load32(const unsigned char *p)
{
    bytes32 v;
    memcpy(&v, p, 32);
    return v;
}

#define DIFF32(at)                                                         \
    ((load32(p + (at)) & load32(m + (at))) ^ load32(k + (at)))
#define BLOCK32(i)                                                         \
    case i + 1:                                                            \
        diff |= DIFF32(LCT__MP_UNIT_OPENING + 32 * i);                    \
        __attribute__((fallthrough));

static inline __attribute__((always_inline, target("avx2"))) bool
match32(const key_template *t, const unsigned char *p)
{
    /* the opening less its first byte, and the last 32 bytes of the key
     * (reaching back into the hash when the tail is short: masked) */
    const unsigned char *k = t->key + KEY_STORE_AT, *m = t->mask + KEY_STORE_AT;
    bytes32 diff = load32(p + 1) ^ load32(k + 1);
    _Static_assert(KEY_FIXED32 == 2, "the fixed compare's blocks");
    if (t->full32 < KEY_FIXED32) {
        /* addressed from t, as the counted path's constant offsets are:
         * k and m in registers of their own spilled the loop's */
        size_t a0 = t->at32[0], a1 = t->at32[1];
        diff |= ((load32(p + a0) & load32(t->mask + KEY_STORE_AT + a0)) ^
                 load32(t->key + KEY_STORE_AT + a0)) |
                ((load32(p + a1) & load32(t->mask + KEY_STORE_AT + a1)) ^
                 load32(t->key + KEY_STORE_AT + a1));
        return _mm256_testz_si256((__m256i)diff, (__m256i)diff);
    }
    diff |= DIFF32(t->len - 32);
    switch (t->full32) {
        BLOCK32(5)
        BLOCK32(4)
        BLOCK32(3)
        BLOCK32(2)
        BLOCK32(1)
        BLOCK32(0)
    default:
        break;
    }
    return _mm256_testz_si256((__m256i)diff, (__m256i)diff);
}
#undef BLOCK32
#undef DIFF32

static __attribute__((noinline, target("avx2"))) size_t
run32(const key_templates *ts, const unsigned char **pp,
      const unsigned char *end, unsigned depth, size_t max)
{
    KEY_RUN(match32, (void)0)
    return n;
}

static __attribute__((noinline, target("avx2"))) size_t
run32_parts(const key_templates *ts, const unsigned char **pp,
            const unsigned char *end, unsigned depth, size_t max,
            run_parts *rp)
{
    KEY_RUN(match32, RUN_PART)
    return n;
}

/* -1: not yet asked; set once, the same for every thread. */
static int wide = -1;
#endif

bool lct__key_run_wide(bool allow)
{
#ifdef HAVE_WIDE
    int now = allow && __builtin_cpu_supports("avx2");
    __atomic_store_n(&wide, now, __ATOMIC_RELAXED);
    return now;
#else
    (void)allow;
    return false;
#endif
}

/* Whether to take the 32-byte compare. */
static inline bool take_wide(void)
{
#ifdef HAVE_WIDE
    int w = __atomic_load_n(&wide, __ATOMIC_RELAXED);
    return w < 0 ? lct__key_run_wide(true) : w != 0;
#else
    return false;
#endif
}

size_t lct__key_run(const key_templates *ts, const unsigned char **pp,
                    const unsigned char *end, unsigned depth, size_t max)
{
#ifdef HAVE_WIDE
    if (take_wide())
        return run32(ts, pp, end, depth, max);
#endif
    return run16(ts, pp, end, depth, max);
}

/* Whether the n keys from first, each like t (whose salt is masked),
 * have the first one's salt.  A salt of 16 bytes or fewer is compared
 * as the 8 bytes that end it and the 8 it starts with, both inside the
 * key (before a short salt are its head and name, which t compares
 * whole): a call to memcmp a key cost the key commands 8% on a trace
 * whose every key is salted. */
static bool salts_alike(const unsigned char *first, size_t n,
                        const key_template *t)
{
    size_t at = t->salt_at, len = t->salt_len;
    if (len > 16) {
        for (size_t i = 1; i < n; i++)
            if (memcmp(first + i * t->len + at, first + at, len) != 0)
                return false;
        return true;
    }
    size_t tail = at + len - 8, stride = t->len;
    const unsigned char *k = first + stride, *past = first + n * stride;
    uint64_t tail0 = lct__le64(first + tail), diff = 0;
    if (len <= 8) {
        for (; k < past; k += stride)
            diff |= lct__le64(k + tail) ^ tail0;
    } else {
        uint64_t head0 = lct__le64(first + at);
        for (; k < past; k += stride)
            diff |= (lct__le64(k + tail) ^ tail0) |
                    (lct__le64(k + at) ^ head0);
    }
    return diff == 0;
}

/* The parts of a run of n keys from first into the notes; false when a
 * part is not of the usual form or its keys' salts differ. */
static bool note_parts(const run_parts *rp, const unsigned char *first,
                       size_t n)
{
    const unsigned char *k = first;
    for (unsigned i = 0; i < rp->seen; i++) {
        const key_template *t = rp->t[i];
        size_t count = (i + 1 < rp->seen ? rp->at[i + 1] : n) - rp->at[i];
        if (!t->usual || count > UINT32_MAX)
            return false;
        /* the key layer takes a part's salt from its first key: a part
         * whose keys are like a masked salt's template but differ in
         * their salts is left to be read key by key */
        if (t->salt_len && !salts_alike(k, count, t))
            return false;
        lct__notes.part[i] = (lct__key_part){.first = k,
                                             .count = (uint32_t)count,
                                             .len = (uint32_t)t->len,
                                             .fields = t->fields};
        k += count * t->len;
    }
    return true;
}

size_t lct__key_run_noted(key_templates *ts, const unsigned char **pp,
                          const unsigned char *end, unsigned depth,
                          size_t max, const unsigned char *list,
                          size_t count)
{
    const unsigned char *first = *pp;
    run_parts rp;
    rp.seen = 0;
    size_t n;
#ifdef HAVE_WIDE
    if (take_wide())
        n = run32_parts(ts, pp, end, depth, max, &rp);
    else
#endif
        n = run16_parts(ts, pp, end, depth, max, &rp);
    if (n != count || n == 0 || rp.seen > LCT__KEY_NOTE_PARTS ||
        !note_parts(&rp, first, n))
        return n;
    lct__notes.end = *pp;
    lct__notes.count = n;
    lct__notes.nparts = rp.seen;
    lct__notes.list = list; /* last: the notes hold from here */
    return n;
}
