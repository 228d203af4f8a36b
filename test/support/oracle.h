/*
 * oracle.h - an independent, deliberately plain statement of the
 * reference decoder's rules (FORMAT.md), used to judge liblct on damaged
 * input: a recursive decoder that shares no code with lib/.
 */
#ifndef LCT_TEST_ORACLE_H
#define LCT_TEST_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Would the reference reader yield this record body? */
bool oracle_record_ok(const unsigned char *body, size_t len);

/*
 * Would the reference reader open a file with this header body?  Returns
 * 0 (LCT_OK) or the lct_status liblct documents for the refusal.
 */
int oracle_header(const unsigned char *body, size_t len);

/* The reference reader's reading of a whole trace of n bytes: whether
 * it opens (open_rc 0, else the lct_status liblct documents), the
 * offsets of the records it yields into recs (room for n / 5: a record
 * takes a length and at least a byte), the frames it skips, and whether
 * it stops at a partial frame. */
typedef struct oracle_reading {
    int open_rc;
    size_t records, skipped;
    bool truncated;
} oracle_reading;
void oracle_trace(const unsigned char *d, size_t n, uint64_t *recs,
                  oracle_reading *out);

/* Strict UTF-8 (no overlongs, surrogates, or code points past U+10FFFF). */
bool oracle_utf8(const unsigned char *s, size_t n);

#endif
