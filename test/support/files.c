/*
 * files.c - temporary files and whole-file reads for tests.
 */
#include "files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tmp_file_with(const void *data, size_t len)
{
    const char *dir = getenv("TMPDIR");
    char *path = malloc(4096);
    if (!path)
        abort();
    snprintf(path, 4096, "%s/lct-test-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        abort();
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w <= 0)
            abort();
        p += w;
        len -= (size_t)w;
    }
    close(fd);
    return path;
}

char *read_whole_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            char *b = realloc(buf, cap + 1);
            if (!b) {
                free(buf);
                buf = NULL;
            }
            buf = b;
        }
    }
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

lct_writer *tmp_trace_writer(char **path)
{
    return tmp_level_writer(path, "storage");
}

lct_writer *tmp_level_writer(char **path, const char *level)
{
    *path = tmp_file_with("", 0);
    lct_writer *w;
    if (lct_writer_open(*path, false, &w, NULL) != LCT_OK)
        abort();
    lct_header h = {.level = {level, strlen(level)},
                    .trace_schema_version = 2,
                    .sm_config_json = {"", 0}, .sm_config_digest = {"", 0}};
    if (lct_writer_header(w, &h, NULL) != LCT_OK)
        abort();
    return w;
}

void write_model_key(lct_writer *w, const void *hash, size_t hash_len,
                     const char *model, size_t model_len, int rank,
                     int group, const char *salt)
{
    lct_writer_codec(w, "ObjectKey");
    lct_writer_map(w, 3 + (group >= 0) + (salt != NULL));
    lct_writer_cstr(w, "chunk_hash");
    lct_writer_bin(w, hash, hash_len);
    lct_writer_cstr(w, "model_name");
    lct_writer_str(w, model, model_len);
    lct_writer_cstr(w, "kv_rank");
    lct_writer_int(w, rank);
    if (group >= 0) {
        lct_writer_cstr(w, "object_group_id");
        lct_writer_int(w, group);
    }
    if (salt) {
        lct_writer_cstr(w, "cache_salt");
        lct_writer_cstr(w, salt);
    }
}

void write_object_key(lct_writer *w, const void *hash, size_t hash_len,
                      int rank, int group, const char *salt)
{
    write_model_key(w, hash, hash_len, "m", 1, rank, group, salt);
}

unsigned long long proc_counter(const char *path, const char *format)
{
    FILE *f = fopen(path, "r");
    char line[256];
    unsigned long long n = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, format, &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

unsigned long long process_bytes_read(void)
{
    return proc_counter("/proc/self/io", "rchar: %llu");
}

void write_call(lct_writer *w, double t, const char *op, const char *letters)
{
    char q[160];
    snprintf(q, sizeof q, "lmcache.v1.distributed.storage_manager."
                          "StorageManager.%s", op);
    lct_writer_record_begin(w, t, 1.7e9 + t, q, strlen(q));
    lct_writer_map(w, 1);
    lct_writer_cstr(w, "keys");
    if (!letters) {
        lct_writer_int(w, 5);
    } else {
        lct_writer_array(w, (uint32_t)strlen(letters));
        for (const char *h = letters; *h; h++) {
            unsigned char hash[32] = {(unsigned char)*h, 7};
            write_object_key(w, hash, sizeof hash, 0, 0, NULL);
        }
    }
    if (lct_writer_end(w, NULL) != LCT_OK)
        abort(); /* test code: a write to a fresh file cannot fail */
}
