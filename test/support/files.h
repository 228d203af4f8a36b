/*
 * files.h - temporary files for tests (each test makes its own; tests run
 * in parallel processes) and reading whole files.
 */
#ifndef LCT_TEST_FILES_H
#define LCT_TEST_FILES_H

#include <stddef.h>

/* Write data to a new mkstemp file; returns its malloc'd path. */
char *tmp_file_with(const void *data, size_t len);
/* Read a whole file into a malloc'd buffer (NUL-terminated); NULL on
 * failure. */
char *read_whole_file(const char *path, size_t *len);

#endif
