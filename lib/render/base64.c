/*
 * base64.c - the base64 tables the renderers write bin with: the standard
 * alphabet, and a table of two characters for every 12 bits (half the
 * lookups of one per 6 bits), filled once on first use.
 */
#include "render/render_internal.h"
#include "lct_json.h"

#include <pthread.h>

const char lct__base64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Two base64 characters for every 12 bits: half the lookups of one per
 * 6 bits.  Filled once, on first use, from the alphabet. */
static char base64_pairs[4096][2];
static pthread_once_t base64_pairs_once = PTHREAD_ONCE_INIT;

static void fill_base64_pairs(void)
{
    for (unsigned i = 0; i < 4096; i++) {
        base64_pairs[i][0] = lct__base64_alphabet[i >> 6];
        base64_pairs[i][1] = lct__base64_alphabet[i & 63];
    }
}


const char (*lct__base64_pairs(void))[2]
{
    pthread_once(&base64_pairs_once, fill_base64_pairs);
    return (const char (*)[2])base64_pairs;
}
