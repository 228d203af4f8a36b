/*
 * files.h - temporary files for tests (each test makes its own; tests run
 * in parallel processes), reading whole files, and the ObjectKey that
 * traces written by hand carry.
 */
#ifndef LCT_TEST_FILES_H
#define LCT_TEST_FILES_H

#include <stddef.h>

#include "lct.h"

/* Write data to a new mkstemp file; returns its malloc'd path. */
char *tmp_file_with(const void *data, size_t len);
/* A new mkstemp file (its malloc'd path in *path) open in the library's
 * writer with a header as the recorder writes it (storage level, schema
 * 2, no config); aborts if either fails (test code). */
lct_writer *tmp_trace_writer(char **path);
/* The same with a header of this level ("l2": an L2-level trace). */
lct_writer *tmp_level_writer(char **path, const char *level);
/* An ObjectKey as the encoder orders it: chunk_hash (hash_len bytes),
 * model_name "m", kv_rank, then object_group_id unless group < 0, then
 * cache_salt unless salt is NULL. */
void write_object_key(lct_writer *w, const void *hash, size_t hash_len,
                      int rank, int group, const char *salt);
/* The same with this model_name (model_len bytes). */
void write_model_key(lct_writer *w, const void *hash, size_t hash_len,
                     const char *model, size_t model_len, int rank,
                     int group, const char *salt);
/* A StorageManager call `op` at t_mono t (t_wall 1.7e9 + t) naming a
 * key a letter of `letters` (its chunk hash the letter, then 7, then
 * zeros; write_object_key's other fields), or with NULL a `keys` that is
 * the int 5. */
void write_call(lct_writer *w, double t, const char *op,
                const char *letters);
/* Read a whole file into a malloc'd buffer (NUL-terminated); NULL on
 * failure. */
char *read_whole_file(const char *path, size_t *len);
/* The number on the first line of a /proc file that `format` (one
 * %llu) matches; 0 when none does or the file cannot be read. */
unsigned long long proc_counter(const char *path, const char *format);
/* Bytes this process has read with read(2) and pread(2) so far
 * (/proc/self/io rchar): work counted in bytes, not seconds. */
unsigned long long process_bytes_read(void);

#endif
