/*
 * version.c - the version of the library as built, for comparison with the
 * header a program was compiled against.
 */
#include "lct_core.h"

const char *lct_version(void)
{
    return LCT_VERSION_STRING;
}
