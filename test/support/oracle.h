/*
 * oracle.h - an independent, deliberately plain statement of the
 * reference decoder's rules (FORMAT.md), used to judge liblct on damaged
 * input: a recursive decoder that shares no code with lib/.
 */
#ifndef LCT_TEST_ORACLE_H
#define LCT_TEST_ORACLE_H

#include <stdbool.h>
#include <stddef.h>

/* Would the reference reader yield this record body? */
bool oracle_record_ok(const unsigned char *body, size_t len);

/*
 * Would the reference reader open a file with this header body?  Returns
 * 0 (LCT_OK) or the lct_status liblct documents for the refusal.
 */
int oracle_header(const unsigned char *body, size_t len);

/* Strict UTF-8 (no overlongs, surrogates, or code points past U+10FFFF). */
bool oracle_utf8(const unsigned char *s, size_t n);

#endif
