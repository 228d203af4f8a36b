/*
 * seal.h - the sidecar format's checksum (docs/format.md, "Sidecar
 * index"), so tests and the fuzz target can forge sidecars the library
 * must not trust for their checksum alone.
 */
#ifndef LCT_TEST_SEAL_H
#define LCT_TEST_SEAL_H

#include <stddef.h>

/* Write the checksum of b[0, n - 8) into its last 8 bytes (n >= 8). */
void seal_sidecar(unsigned char *b, size_t n);

#endif
