/*
 * backend_dir.c - "dir:PATH": one file per key, PATH/<16 hex digits>.kv.
 * A store writes the whole file (fsync'd when asked), a lookup is a
 * stat, a load reads the file back.  A run starts on an empty store: the
 * .kv files an earlier run left are removed at open unless keep is set;
 * no other file in PATH is touched.  With direct, files are opened
 * O_DIRECT: writes go out rounded up to 4096 bytes then are cut to size.
 *
 * It never fills the disk: it holds at most 4/5 of the space free at
 * open (after the earlier run's files went).  A fixed value_bytes over
 * that is refused at open; a store that would pass it fails (ENOSPC)
 * with the arithmetic, so the run stops on --max-errors and still
 * writes its reports, and the disk keeps room for them.
 */
#define _GNU_SOURCE /* O_DIRECT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/error_internal.h"
#include "lct_replay.h"

#define DIRECT_ALIGN 4096u

typedef struct dir_store {
    int fd; /* the directory */
    bool fsync, direct;
    int64_t budget;      /* bytes it may add, 4/5 of those free at open */
    uint64_t free;       /* free at open */
    atomic_int_fast64_t held; /* added since open (less what it removed) */
    char shown[256]; /* the path, escaped, for messages */
} dir_store;

/* Bytes as "12.50 GiB", or in MiB below a GiB. */
static const char *size_text(char buf[32], double bytes)
{
    if (bytes >= 1024.0 * 1024 * 1024)
        snprintf(buf, 32, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
    else
        snprintf(buf, 32, "%.2f MiB", bytes / (1024.0 * 1024));
    return buf;
}

/* The budget from the space free for an unprivileged writer; a fixed
 * value size that cannot fit once is refused now, not a run later. */
static lct_status set_budget(dir_store *d, const lct_backend_config *cfg,
                             lct_error *err)
{
    struct statvfs fs;
    if (fstatvfs(d->fd, &fs) != 0)
        return lct__fail(err, LCT_ERR_SYS, errno, 0, "dir:%s: statvfs: %s",
                         d->shown, strerror(errno));
    d->free = (uint64_t)fs.f_bavail * fs.f_frsize;
    d->budget = (int64_t)(d->free / 5 * 4);
    bool fixed = cfg && cfg->value_bytes;
    uint64_t value = !cfg ? 0 : fixed ? cfg->value_bytes
                                      : cfg->first_value_bytes;
    char free_text[32];
    if (value > (uint64_t)d->budget)
        return lct__fail(err, LCT_ERR_RANGE, 0, 0,
                         "dir:%s: one value of %s%" PRIu64
                         " bytes passes 4/5 of the %s free there: give a "
                         "smaller --value-bytes or --scale, or another PATH",
                         d->shown,
                         fixed ? "--value-bytes " : "the trace's first key, ",
                         value, size_text(free_text, (double)d->free));
    return LCT_OK;
}

/* Room for delta more bytes, taken; false (errno ENOSPC, the message
 * in err) when it would pass the budget. */
static bool take_room(dir_store *d, int64_t delta, const lct_backend_key *key,
                      lct_error *err)
{
    int64_t now = atomic_fetch_add(&d->held, delta) + delta;
    if (delta <= 0 || now <= d->budget)
        return true;
    atomic_fetch_sub(&d->held, delta);
    char held_text[32], free_text[32];
    lct__fail(err, LCT_ERR_SYS, ENOSPC, 0,
              "dir:%s: %s.kv: %s stored, %" PRId64 " bytes more pass 4/5 "
              "of the %s free at the start: give --value-bytes, --scale or "
              "another PATH",
              d->shown, key->name, size_text(held_text, (double)(now - delta)),
              delta, size_text(free_text, (double)d->free));
    return false;
}

static bool is_key_file(const char *name)
{
    size_t n = strlen(name);
    if (n != 19 || strcmp(name + 16, ".kv") != 0)
        return false;
    for (size_t i = 0; i < 16; i++)
        if (!strchr("0123456789abcdef", name[i]))
            return false;
    return true;
}

static lct_status clear_keys(dir_store *d, lct_error *err)
{
    int fd = dup(d->fd);
    DIR *dir = fd < 0 ? NULL : fdopendir(fd);
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return lct__fail(err, LCT_ERR_SYS, errno, 0, "dir:%s: %s", d->shown,
                         strerror(errno));
    }
    struct dirent *e;
    while ((e = readdir(dir)))
        if (is_key_file(e->d_name) && unlinkat(d->fd, e->d_name, 0) != 0 &&
            errno != ENOENT) {
            int saved = errno;
            closedir(dir);
            return lct__fail(err, LCT_ERR_SYS, saved, 0,
                             "dir:%s: removing %s: %s", d->shown, e->d_name,
                             strerror(saved));
        }
    closedir(dir);
    return LCT_OK;
}

static lct_status dir_open(const char *arg, const lct_backend_config *cfg,
                           void **state, lct_error *err)
{
    if (!arg || !*arg)
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "dir:PATH wants a directory");
    dir_store *d = calloc(1, sizeof *d);
    if (!d)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    lct__vis_name(d->shown, sizeof d->shown, arg);
    d->fsync = cfg && cfg->dir.fsync;
    d->direct = cfg && cfg->dir.direct;
    if (mkdir(arg, 0777) != 0 && errno != EEXIST) {
        lct_status st = lct__fail(err, LCT_ERR_SYS, errno, 0,
                                  "dir:%s: cannot create: %s", d->shown,
                                  strerror(errno));
        free(d);
        return st;
    }
    d->fd = open(arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d->fd < 0) {
        lct_status st = lct__fail(err, LCT_ERR_SYS, errno, 0,
                                  "dir:%s: cannot open: %s", d->shown,
                                  strerror(errno));
        free(d);
        return st;
    }
    lct_status st = (cfg && cfg->keep) ? LCT_OK : clear_keys(d, err);
    if (st == LCT_OK)
        st = set_budget(d, cfg, err);
    if (st != LCT_OK) {
        close(d->fd);
        free(d);
        return st;
    }
    *state = d;
    return LCT_OK;
}

static void dir_close(void *state)
{
    dir_store *d = state;
    if (!d)
        return;
    close(d->fd);
    free(d);
}

static lct_status sys_fail(const dir_store *d, lct_error *err, const char *op,
                           const lct_backend_key *key)
{
    int e = errno;
    return lct__fail(err, LCT_ERR_SYS, e, 0, "dir:%s: %s %s.kv: %s",
                     d->shown, op, key->name, strerror(e));
}

static int open_key(const dir_store *d, const lct_backend_key *key, int flags)
{
    char name[24];
    snprintf(name, sizeof name, "%s.kv", key->name);
    if (d->direct)
        flags |= O_DIRECT;
    return openat(d->fd, name, flags | O_CLOEXEC, 0666);
}

static bool write_all(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return false;
        }
        p += w;
        len -= (size_t)w;
    }
    return true;
}

static lct_status dir_store_key(void *state, unsigned worker,
                                const lct_backend_key *key, const void *data,
                                size_t len, int *replaced, lct_error *err)
{
    (void)worker;
    dir_store *d = state;
    char name[24];
    snprintf(name, sizeof name, "%s.kv", key->name);
    struct stat sb;
    *replaced = fstatat(d->fd, name, &sb, 0) == 0;
    int64_t old = *replaced ? (int64_t)sb.st_size : 0;
    if (!take_room(d, (int64_t)len - old, key, err))
        return LCT_ERR_SYS;
    int fd = open_key(d, key, O_WRONLY | O_CREAT | O_TRUNC);
    if (fd < 0) {
        atomic_fetch_sub(&d->held, (int64_t)len - old);
        return sys_fail(d, err, "creating", key);
    }
    /* O_DIRECT writes whole blocks: the engine's buffers have room. */
    size_t out = d->direct ? (len + DIRECT_ALIGN - 1) / DIRECT_ALIGN *
                                 DIRECT_ALIGN
                           : len;
    bool ok = write_all(fd, data, out) &&
              (out == len || ftruncate(fd, (off_t)len) == 0) &&
              (!d->fsync || fsync(fd) == 0);
    int saved = errno;
    close(fd);
    if (!ok) {
        errno = saved;
        unlinkat(d->fd, name, 0); /* no half-written value stays */
        atomic_fetch_sub(&d->held, (int64_t)len);
        errno = saved;
        return sys_fail(d, err, "writing", key);
    }
    return LCT_OK;
}

static lct_status dir_lookup(void *state, unsigned worker,
                             const lct_backend_key *key, bool *present,
                             lct_error *err)
{
    (void)worker;
    dir_store *d = state;
    char name[24];
    snprintf(name, sizeof name, "%s.kv", key->name);
    struct stat sb;
    if (fstatat(d->fd, name, &sb, 0) == 0) {
        *present = true;
        return LCT_OK;
    }
    *present = false;
    return errno == ENOENT ? LCT_OK : sys_fail(d, err, "looking up", key);
}

static lct_status dir_load(void *state, unsigned worker,
                           const lct_backend_key *key, void *buf, size_t cap,
                           size_t *len, bool *present, lct_error *err)
{
    (void)worker;
    dir_store *d = state;
    *len = 0;
    int fd = open_key(d, key, O_RDONLY);
    if (fd < 0) {
        *present = false;
        return errno == ENOENT ? LCT_OK : sys_fail(d, err, "opening", key);
    }
    *present = true;
    size_t want = d->direct ? cap / DIRECT_ALIGN * DIRECT_ALIGN : cap;
    while (*len < want) {
        ssize_t r = read(fd, (unsigned char *)buf + *len, want - *len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int saved = errno;
            close(fd);
            errno = saved;
            return sys_fail(d, err, "reading", key);
        }
        if (r == 0)
            break;
        *len += (size_t)r;
    }
    close(fd);
    return LCT_OK;
}

static lct_status dir_remove(void *state, unsigned worker,
                             const lct_backend_key *key, lct_error *err)
{
    (void)worker;
    dir_store *d = state;
    char name[24];
    snprintf(name, sizeof name, "%s.kv", key->name);
    struct stat sb;
    int64_t had = fstatat(d->fd, name, &sb, 0) == 0 ? (int64_t)sb.st_size : 0;
    if (unlinkat(d->fd, name, 0) != 0 && errno != ENOENT)
        return sys_fail(d, err, "removing", key);
    atomic_fetch_sub(&d->held, had);
    return LCT_OK;
}

const lct_backend_ops *lct_backend_dir(void)
{
    static const lct_backend_ops ops = {
        "dir", dir_open, dir_close, dir_store_key,
        dir_lookup, dir_load, dir_remove, NULL};
    return &ops;
}
