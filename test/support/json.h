/*
 * json.h - a small strict JSON parser for tests: reads the fixtures'
 * .expect.json files (and later, tool output) into a tree, keeping
 * integers exact and floats as the doubles they read back to.
 */
#ifndef LCT_TEST_JSON_H
#define LCT_TEST_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum jtype { J_NULL, J_BOOL, J_INT, J_FLOAT, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jv {
    jtype t;
    bool b;          /* J_BOOL */
    bool neg;        /* J_INT: value is i (negative) rather than u */
    int64_t i;
    uint64_t u;
    double d;        /* J_FLOAT */
    char *s;         /* J_STR: UTF-8, NUL-terminated, slen bytes */
    size_t slen;
    size_t n;        /* J_ARR / J_OBJ: items */
    struct jv *items;
    char **keys;     /* J_OBJ */
    size_t *keylens;
} jv;

/* Parse text[0..len); NULL on any syntax error. */
jv *json_parse(const char *text, size_t len);
void json_free(jv *v);
/* The value of key in an object, NULL if absent or not an object. */
const jv *json_get(const jv *obj, const char *key);
/* A number's value as a double (a float, or an integer either sign). */
double json_number(const jv *v);

#endif
