/*
 * test_unit.c - the ObjectKey as lib/lmcache/objectkey.c describes it to
 * the msgpack layer (msgpack/unit_internal.h) is the key LMCache's encoder
 * writes: a key from a fixture the real encoder wrote is read whole, with
 * its fields; every fixed bit of the opening and of each pair name is
 * compared (one flipped, the unit or the pair is not taken) and the free
 * ones (the hash, the count's nibble) are not; the last pair's three
 * forms are read and any other refused.
 */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "msgpack/msgpack_internal.h"

#define OPENING "\x82\xa5__t__\xa9ObjectKey\xa1v"

/* The first codec-wrapped ObjectKey in clean.lct (the real encoder's),
 * copied out, and its length as the general walker steps over it. */
static unsigned char *fixture_key(size_t *len)
{
    size_t n;
    unsigned char *file = (unsigned char *)read_whole_file(
        LCT_FIXTURES_DIR "/clean.lct", &n);
    cr_assert(file);
    unsigned char *p = memmem(file, n, OPENING, sizeof OPENING - 1);
    cr_assert(p, "clean.lct holds an ObjectKey");
    const unsigned char *after;
    cr_assert_eq(lct__mp_walk(p, file + n, LCT__WALK_VALIDATE, &after, NULL,
                              NULL),
                 LCT_OK);
    *len = (size_t)(after - p);
    unsigned char *key = malloc(*len);
    memcpy(key, p, *len);
    free(file);
    return key;
}

Test(unit, the_encoders_key_is_read_whole_with_its_fields)
{
    size_t len;
    unsigned char *k = fixture_key(&len);
    const lct__mp_unit *u = &lct__mp_objectkey;
    cr_assert_eq(lct__mp_unit_pairs(u, k), 4u); /* hash, model, rank, group */
    lct__mp_unit_values v;
    const unsigned char *last;
    size_t last_len = 99;
    cr_assert_eq(lct__mp_unit_whole(u, k, k + len, &v, &last, &last_len),
                 k + len);
    cr_expect_eq(v.pairs, 3u);
    cr_expect_eq(v.len[0], 1u);
    cr_expect_eq(memcmp(v.at[0], "m", 1), 0);
    cr_expect_eq(*v.at[1], 0);
    cr_expect_eq(*v.at[2], 0);
    cr_expect_eq(last_len, 0u);
    /* one byte short, it is not whole */
    cr_expect_null(lct__mp_unit_whole(u, k, k + len - 1, &v, &last,
                                      &last_len));
    free(k);
}

Test(unit, every_fixed_bit_of_the_opening_is_compared_and_no_free_one)
{
    size_t len;
    unsigned char *k = fixture_key(&len);
    const lct__mp_unit *u = &lct__mp_objectkey;
    for (size_t i = 0; i < LCT__MP_UNIT_OPENING; i++) {
        for (unsigned bit = 0; bit < 8; bit++) {
            k[i] ^= (unsigned char)(1u << bit);
            unsigned pairs = lct__mp_unit_pairs(u, k);
            if (i >= LCT__MP_UNIT_FREE_AT)
                cr_expect_eq(pairs, 4u, "hash byte %zu bit %u", i, bit);
            else if (i == LCT__MP_UNIT_COUNT_AT && bit < 4)
                cr_expect_eq(pairs, 4u ^ (1u << bit), "count bit %u", bit);
            else
                cr_expect_eq(pairs, 0u, "opening byte %zu bit %u", i, bit);
            k[i] ^= (unsigned char)(1u << bit);
        }
    }
    free(k);
}

Test(unit, every_bit_of_each_pair_name_is_compared)
{
    size_t len;
    unsigned char *k = fixture_key(&len);
    const lct__mp_unit *u = &lct__mp_objectkey;
    unsigned char *q = k + LCT__MP_UNIT_OPENING;
    for (unsigned pair = 0; pair < LCT__MP_UNIT_USUAL; pair++) {
        lct__mp_unit_values v;
        lct__mp_unit_usual_read(u, q, k + len, 3, &v);
        cr_assert_eq(v.pairs, 3u);
        /* the name's first byte: after the value before it */
        unsigned char *name =
            pair == 0 ? q : (unsigned char *)v.at[pair - 1] + v.len[pair - 1];
        for (unsigned i = 0; i < u->usual[pair].name_len; i++) {
            for (unsigned bit = 0; bit < 8; bit++) {
                name[i] ^= (unsigned char)(1u << bit);
                lct__mp_unit_usual_read(u, q, k + len, 3, &v);
                /* a fixstr head whose length nibble changes can still
                 * not be the name: its bytes are compared too */
                cr_expect_eq(v.pairs, pair, "pair %u byte %u bit %u", pair,
                             i, bit);
                name[i] ^= (unsigned char)(1u << bit);
            }
        }
    }
    free(k);
}

/* The fixture's key with a cache_salt of the value `salt` (n bytes). */
static unsigned char *salted(const char *salt, size_t n, size_t *len)
{
    size_t base;
    unsigned char *k = fixture_key(&base);
    static const char name[] = "\xaa" "cache_salt";
    *len = base + sizeof name - 1 + n;
    k = realloc(k, *len);
    memcpy(k + base, name, sizeof name - 1);
    memcpy(k + base + sizeof name - 1, salt, n);
    k[LCT__MP_UNIT_COUNT_AT] = 0x85;
    return k;
}

Test(unit, the_last_pair_is_nil_a_fixstr_or_a_str8_and_nothing_else)
{
    const lct__mp_unit *u = &lct__mp_objectkey;
    struct {
        const char *value;
        size_t n;
        bool whole;
        size_t salt_len;
    } cases[] = {
        {"\xc0", 1, true, 0},
        {"\xa3" "abc", 4, true, 3},
        {"\xd9\x02" "ab", 4, true, 2},
        {"\x01", 1, false, 0},         /* an int */
        {"\xc4\x01" "a", 3, false, 0}, /* a bin */
        {"\xa3" "ab", 3, false, 0},    /* cut short */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t len;
        unsigned char *k = salted(cases[c].value, cases[c].n, &len);
        lct__mp_unit_values v;
        const unsigned char *last;
        size_t last_len = 99;
        const unsigned char *got =
            lct__mp_unit_whole(u, k, k + len, &v, &last, &last_len);
        if (cases[c].whole) {
            cr_expect_eq(got, k + len, "case %zu", c);
            cr_expect_eq(last_len, cases[c].salt_len, "case %zu", c);
        } else {
            cr_expect_null(got, "case %zu", c);
        }
        free(k);
    }
}

Test(unit, a_pair_more_than_the_last_is_not_the_usual_form)
{
    size_t len;
    unsigned char *k = salted("\xc0", 1, &len);
    k[LCT__MP_UNIT_COUNT_AT] = 0x86; /* says one pair more */
    lct__mp_unit_values v;
    const unsigned char *last;
    size_t last_len;
    cr_expect_null(lct__mp_unit_whole(&lct__mp_objectkey, k, k + len, &v,
                                      &last, &last_len));
    free(k);
}
