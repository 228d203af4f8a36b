/*
 * sidecar.c - the record index kept between processes (lct_sidecar; its
 * file format is in docs/format.md, "Sidecar index"): every record the
 * reader yields (offset, t_mono, t_wall, qualname), every frame it skips
 * (with the warning it gave), and where reading ended, keyed to the
 * trace's identity (inode, device, size, mtime, and hashes of the header
 * frame and of the last frame indexed).  A sidecar is checked before use,
 * serves a trace that grew since as a prefix, and is extended rather than
 * rebuilt.  lct_reader_seek puts a reader at record N as if it had read
 * the N before it: same counters, same warnings.
 *
 * Long because writing, checking and seeking share the sidecar's layout
 * and its checks (a forged sidecar is checked frame by frame against the
 * trace, and a seek re-checks the frame it lands past): as several files
 * they would call each other.
 */
#define _GNU_SOURCE /* realpath's PATH_MAX users, O_CLOEXEC */
#include "base/bytes_internal.h"
#include "base/error_internal.h"
#include "base/grow_internal.h"
#include "read/reader_internal.h"
#include "lct_read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "LCTI"
#define SIDECAR_VERSION 1u
#define HEAD_SIZE 128
#define ROW_SIZE 32
/* A skipped frame's warning is kept whole, as the reader said it. */
#define MAX_MESSAGE 1024

typedef struct skip {
    uint64_t offset;
    char *message;
} skip;

struct lct_sidecar {
    /* the trace as indexed */
    uint64_t size, ino, dev;
    int64_t mtime_sec, mtime_nsec;
    uint64_t header_size, header_hash;
    uint64_t end;                 /* where reading stopped */
    uint64_t last_offset, last_hash; /* the last frame read (0: none) */
    bool truncated;               /* a partial frame at end */
    /* rows: ROW_SIZE bytes each, little-endian; in the loaded file's
     * mapping (map) or owned */
    unsigned char *rows;
    void *map;
    size_t map_len;
    int guard_slot; /* the mapping's, in the SIGBUS guard (or -1) */
    uint64_t nrows, caprows;
    skip *skips;
    uint64_t nskips, capskips;
    lct_str *names;               /* qualnames; text owned by names_text */
    uint32_t nnames;
    char **names_text;
    bool whole;                   /* covers the file as it is now */
};

/* MARK: hashing */

static uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t n)
{
    for (; n >= 8; p += 8, n -= 8) {
        h = (h ^ le64dec(p)) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    h = (h ^ w ^ ((uint64_t)n << 56)) * 0xc4ceb9fe1a85ec53u;
    return h ^ (h >> 29);
}

/* The hash of the trace's bytes [off, off + n), read with pread. */
static bool hash_range(int fd, uint64_t off, uint64_t n, uint64_t *out)
{
    unsigned char buf[65536];
    uint64_t h = 0x9e3779b97f4a7c15u;
    while (n > 0) {
        size_t want = n < sizeof buf ? (size_t)n : sizeof buf;
        ssize_t got = pread(fd, buf, want, (off_t)off);
        if (got <= 0)
            return false;
        h = hash_bytes(h, buf, (size_t)got);
        off += (uint64_t)got;
        n -= (uint64_t)got;
    }
    *out = h;
    return true;
}

/* The hash of the whole frame at off (its prefix says how long). */
static bool hash_frame(int fd, uint64_t off, uint64_t *out)
{
    unsigned char prefix[4];
    if (pread(fd, prefix, 4, (off_t)off) != 4)
        return false;
    return hash_range(fd, off, 4 + (uint64_t)be32dec(prefix), out);
}

/* MARK: the object */

void lct_sidecar_free(lct_sidecar *s)
{
    if (!s)
        return;
    if (s->map) {
        lct__guard_unregister(s->guard_slot);
        munmap(s->map, s->map_len);
    }
    else
        free(s->rows);
    for (uint64_t i = 0; i < s->nskips; i++)
        free(s->skips[i].message);
    free(s->skips);
    for (uint32_t i = 0; i < s->nnames; i++)
        free(s->names_text[i]);
    free(s->names_text);
    free(s->names);
    free(s);
}

uint64_t lct_sidecar_count(const lct_sidecar *s)
{
    return s ? s->nrows : 0;
}

bool lct_sidecar_whole(const lct_sidecar *s)
{
    return s && s->whole;
}

int lct_sidecar_get(const lct_sidecar *s, uint64_t idx, lct_sidecar_row *row)
{
    if (!s || !row || idx >= s->nrows)
        return LCT_ERR_INVALID;
    const unsigned char *p = s->rows + idx * ROW_SIZE;
    uint64_t t_mono = le64dec(p + 8), t_wall = le64dec(p + 16);
    row->offset = le64dec(p);
    memcpy(&row->t_mono, &t_mono, 8);
    memcpy(&row->t_wall, &t_wall, 8);
    row->qualname = le32dec(p + 24);
    return LCT_OK;
}

lct_str lct_sidecar_qualname(const lct_sidecar *s, uint32_t id)
{
    return s && id < s->nnames ? s->names[id] : (lct_str){"", 0};
}

static bool add_row(lct_sidecar *s, const lct_record *rec, uint32_t name)
{
    if (s->nrows == s->caprows) {
        uint64_t cap = s->caprows ? 2 * s->caprows : 4096;
        unsigned char *grown = reallocarray(s->rows, cap, ROW_SIZE);
        if (!grown)
            return false;
        s->rows = grown;
        s->caprows = cap;
    }
    unsigned char *p = s->rows + s->nrows++ * ROW_SIZE;
    uint64_t t_mono, t_wall;
    memcpy(&t_mono, &rec->t_mono, 8);
    memcpy(&t_wall, &rec->t_wall, 8);
    le64enc(p, rec->offset);
    le64enc(p + 8, t_mono);
    le64enc(p + 16, t_wall);
    le32enc(p + 24, name);
    le32enc(p + 28, rec->length);
    return true;
}

static bool add_skip(lct_sidecar *s, uint64_t offset, const char *message,
                     size_t len)
{
    if (s->nskips == s->capskips) {
        uint64_t cap = s->capskips ? 2 * s->capskips : 16;
        skip *grown = reallocarray(s->skips, cap, sizeof *grown);
        if (!grown)
            return false;
        s->skips = grown;
        s->capskips = cap;
    }
    char *copy = strndup(message, len < MAX_MESSAGE ? len : MAX_MESSAGE);
    if (!copy)
        return false;
    s->skips[s->nskips++] = (skip){offset, copy};
    return true;
}

/* The id of a qualname, added when new.  A trace has a few dozen; a
 * hostile one may have one per record, so the search starts at the last
 * one found and gives up on the table past 4096 names (each further name
 * is added without looking: ids then repeat names, which is only a
 * larger table). */
static bool name_id(lct_sidecar *s, lct_str q, uint32_t *id, uint32_t *hint)
{
    if (*hint < s->nnames && s->names[*hint].len == q.len &&
        memcmp(s->names[*hint].ptr, q.ptr, q.len) == 0) {
        *id = *hint;
        return true;
    }
    for (uint32_t i = 0; s->nnames <= 4096 && i < s->nnames; i++)
        if (s->names[i].len == q.len &&
            memcmp(s->names[i].ptr, q.ptr, q.len) == 0) {
            *id = *hint = i;
            return true;
        }
    if (s->nnames == UINT32_MAX)
        return false;
    lct_str *names = reallocarray(s->names, s->nnames + 1, sizeof *names);
    if (!names)
        return false;
    s->names = names;
    char **text = reallocarray(s->names_text, s->nnames + 1, sizeof *text);
    if (!text)
        return false;
    s->names_text = text;
    char *copy = malloc(q.len ? q.len : 1);
    if (!copy)
        return false;
    memcpy(copy, q.ptr, q.len);
    text[s->nnames] = copy;
    names[s->nnames] = (lct_str){copy, q.len};
    *id = *hint = s->nnames++;
    return true;
}

/* MARK: identity */

static bool identity(const lct_reader *r, struct stat *st)
{
    return r->source.fd >= 0 && fstat(r->source.fd, st) == 0 &&
           S_ISREG(st->st_mode);
}

/* MARK: building */

typedef struct capture {
    lct_sidecar *s;
    lct__logsink pass; /* the reader's own sink, warnings go on to it */
    bool failed;
} capture;

static void capture_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
                        uint64_t offset, const char *message)
{
    capture *c = ctx;
    if (kind == LCT_WARN_MALFORMED &&
        !add_skip(c->s, offset, message, strlen(message)))
        c->failed = true;
    if (lct__sink_wants(&c->pass, kind))
        c->pass.fn(c->pass.ctx, r, kind, offset, message);
}

/* The record rows and skips of r from where it stands to its end. */
static lct_status index_rest(lct_reader *r, lct_sidecar *s, lct_error *err)
{
    capture c = {.s = s, .pass = r->sink};
    r->sink = (lct__logsink){capture_log, &c, ~0u}; /* every skip kept */
    lct_record rec;
    uint32_t hint = 0, id;
    bool ok = true;
    while (ok && lct_next(r, &rec) == 1) {
        ok = name_id(s, rec.qualname, &id, &hint) && add_row(s, &rec, id);
        s->last_offset = rec.offset; /* records come in file order */
    }
    r->sink = c.pass;
    if (!ok || c.failed)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    for (uint64_t i = 0; i < s->nskips; i++)
        if (s->skips[i].offset > s->last_offset)
            s->last_offset = s->skips[i].offset;
    if (r->stats.shrank)
        return lct__fail(err, LCT_ERR_CHANGED, 0, r->stats.shrank_offset,
                         "%s: the file shrank while it was indexed",
                         r->shown_name);
    s->end = r->stats.bytes_read;
    s->truncated = r->stats.truncated;
    return LCT_OK;
}

/* Whether row i of s is the frame the trace has there, read as the
 * reader reads it: a seek lands just past it, and a sidecar whose
 * checksum was recomputed over forged rows could otherwise put the reader
 * mid-frame, to yield bytes that are no record of the trace.  Quietly:
 * the frame is read again, for real, by whoever asked. */
static bool row_is_frame(lct_reader *r, const lct_sidecar *s, uint64_t i)
{
    const unsigned char *p = s->rows + i * ROW_SIZE;
    uint64_t offset = le64dec(p), t_mono = le64dec(p + 8),
             t_wall = le64dec(p + 16);
    lct_str name = lct_sidecar_qualname(s, le32dec(p + 24));
    lct__logsink sink = r->sink;
    r->sink = (lct__logsink){NULL, NULL, 0};
    lct_record rec;
    uint64_t got_mono, got_wall;
    bool ok = lct__reader_place(r, offset, 0, 0) && lct_next(r, &rec) == 1;
    if (ok) {
        memcpy(&got_mono, &rec.t_mono, 8);
        memcpy(&got_wall, &rec.t_wall, 8);
        ok = rec.offset == offset && rec.length == le32dec(p + 28) &&
             got_mono == t_mono && got_wall == t_wall &&
             rec.qualname.len == name.len &&
             memcmp(rec.qualname.ptr, name.ptr, name.len) == 0;
    }
    r->sink = sink;
    return ok;
}

/* Put r where a reader stands after lct_next gave record idx - 1 of s
 * (idx <= the count), or, with `at_end`, where indexing stopped: position,
 * counters and status as if it had read so far, and, when `say`, each
 * skip's warning before that point, in the reader's words. */
static lct_status seek_to(lct_reader *r, const lct_sidecar *s, uint64_t idx,
                          bool at_end, bool say, lct_error *err)
{
    uint64_t target = r->header.size;
    if (at_end) {
        target = s->end;
    } else if (idx > 0) { /* just past the frame of record idx - 1 */
        const unsigned char *p = s->rows + (idx - 1) * ROW_SIZE;
        target = le64dec(p) + 4 + le32dec(p + 28);
    }
    uint64_t skipped = 0;
    while (skipped < s->nskips && s->skips[skipped].offset < target)
        skipped++;
    if (!at_end && idx > 0 && !row_is_frame(r, s, idx - 1)) {
        lct_reader_rewind(r);
        return lct__fail(err, LCT_ERR_CHANGED, 0, target,
                         "%s: its sidecar's record %" PRIu64 " is not the "
                         "trace's frame at offset %" PRIu64 ": reading "
                         "from the start instead",
                         r->shown_name, idx - 1,
                         le64dec(s->rows + (idx - 1) * ROW_SIZE));
    }
    if (target < r->header.size || target > s->end ||
        !lct__reader_place(r, target, idx, skipped))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, target,
                         "%s: cannot go to offset %" PRIu64,
                         r->shown_name, target);
    for (uint64_t i = 0; say && r->sink.fn && i < skipped; i++)
        r->sink.fn(r->sink.ctx, r, LCT_WARN_MALFORMED, s->skips[i].offset,
                   s->skips[i].message);
    return LCT_OK;
}

lct_status lct_reader_seek(lct_reader *r, const lct_sidecar *s, uint64_t idx,
                           lct_error *err)
{
    if (!r || !s || idx > s->nrows)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_reader_seek: no reader or index, or record "
                         "%" PRIu64 " past its %" PRIu64,
                         idx, s ? s->nrows : 0);
    return seek_to(r, s, idx, false, true, err);
}

/* s begins as a copy of old's rows, skips and names; r stands at old's
 * end, having said nothing (the prefix was said when it was indexed). */
static lct_status take_prefix(lct_sidecar *s, const lct_sidecar *old,
                              lct_reader *r, lct_error *err)
{
    s->rows = malloc(old->nrows ? old->nrows * ROW_SIZE : 1);
    s->skips = calloc(old->nskips ? old->nskips : 1, sizeof *s->skips);
    s->names = calloc(old->nnames ? old->nnames : 1, sizeof *s->names);
    s->names_text = calloc(old->nnames ? old->nnames : 1, sizeof(char *));
    if (!s->rows || !s->skips || !s->names || !s->names_text)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    memcpy(s->rows, old->rows, old->nrows * ROW_SIZE);
    s->nrows = s->caprows = old->nrows;
    s->capskips = old->nskips ? old->nskips : 1;
    for (uint64_t i = 0; i < old->nskips; i++) {
        char *m = strdup(old->skips[i].message);
        if (!m)
            return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
        s->skips[s->nskips++] = (skip){old->skips[i].offset, m};
    }
    for (uint32_t i = 0; i < old->nnames; i++) {
        char *t = malloc(old->names[i].len ? old->names[i].len : 1);
        if (!t)
            return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
        memcpy(t, old->names[i].ptr, old->names[i].len);
        s->names_text[i] = t;
        s->names[i] = (lct_str){t, old->names[i].len};
        s->nnames++;
    }
    s->last_offset = old->last_offset;
    return seek_to(r, old, old->nrows, true, false, err);
}

lct_status lct_sidecar_build(lct_reader *r, const lct_sidecar *old,
                             lct_sidecar **out, lct_error *err)
{
    struct stat st;
    if (!r || !out)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sidecar_build: NULL argument");
    *out = NULL;
    if (!identity(r, &st))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "%s: a sidecar index needs a regular file",
                         r->shown_name);
    if (r->flags & LCT_LAZY)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "%s: a sidecar index needs every record "
                         "validated (not LCT_LAZY)", r->shown_name);
    lct_sidecar *s = calloc(1, sizeof *s);
    if (!s)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    s->guard_slot = -1;
    lct_status rc = LCT_OK;
    if (old) { /* a prefix still valid: take it, read on from its end */
        rc = take_prefix(s, old, r, err);
    } else {
        lct_reader_rewind(r);
    }
    if (rc == LCT_OK)
        rc = index_rest(r, s, err);
    s->size = (uint64_t)st.st_size;
    s->ino = (uint64_t)st.st_ino;
    s->dev = (uint64_t)st.st_dev;
    s->mtime_sec = (int64_t)st.st_mtim.tv_sec;
    s->mtime_nsec = (int64_t)st.st_mtim.tv_nsec;
    s->header_size = r->header.size;
    if (rc == LCT_OK &&
        (!hash_range(r->source.fd, 0, s->header_size, &s->header_hash) ||
         (s->last_offset &&
          !hash_frame(r->source.fd, s->last_offset, &s->last_hash))))
        rc = lct__fail(err, LCT_ERR_SYS, errno, 0, "%s: reading it again "
                       "failed", r->shown_name);
    if (rc != LCT_OK) {
        lct_sidecar_free(s);
        return rc;
    }
    s->whole = true;
    *out = s;
    return LCT_OK;
}

/* MARK: the file */

/* The sidecar's bytes as they are laid out, and whether memory ran out
 * on the way (the later puts are then skipped). */
typedef struct buf {
    lct__grow g;
    bool failed;
} buf;

static void put(buf *b, const void *data, size_t n)
{
    if (!b->failed && n && lct__grow_write(&b->g, data, n) != 0)
        b->failed = true;
}

static void put64(buf *b, uint64_t v)
{
    unsigned char e[8];
    le64enc(e, v);
    put(b, e, 8);
}

static void put32(buf *b, uint32_t v)
{
    unsigned char e[4];
    le32enc(e, v);
    put(b, e, 4);
}

/* The sidecar's bytes (docs/format.md, "Sidecar index"). */
static bool serialise(const lct_sidecar *s, buf *b)
{
    put(b, MAGIC, 4);
    put32(b, SIDECAR_VERSION);
    put64(b, s->size);
    put64(b, (uint64_t)s->mtime_sec);
    put64(b, (uint64_t)s->mtime_nsec);
    put64(b, s->ino);
    put64(b, s->dev);
    put64(b, s->header_size);
    put64(b, s->header_hash);
    put64(b, s->end);
    put64(b, s->last_offset);
    put64(b, s->last_hash);
    put64(b, s->nrows);
    put64(b, s->nskips);
    put64(b, s->nnames);
    put32(b, s->truncated ? 1u : 0u);
    put32(b, 0);
    put64(b, 0); /* reserved */
    put(b, s->rows, s->nrows * ROW_SIZE);
    for (uint64_t i = 0; i < s->nskips; i++) {
        size_t n = strlen(s->skips[i].message);
        put64(b, s->skips[i].offset);
        put32(b, (uint32_t)n);
        put(b, s->skips[i].message, n);
    }
    for (uint32_t i = 0; i < s->nnames; i++) {
        put32(b, (uint32_t)s->names[i].len);
        put(b, s->names[i].ptr, s->names[i].len);
    }
    if (!b->failed)
        put64(b, hash_bytes(0x9e3779b97f4a7c15u,
                            (const unsigned char *)b->g.ptr, b->g.len));
    return !b->failed;
}

/* A reader over the bytes of a loaded sidecar: every read bounds-checked. */
typedef struct cur {
    const unsigned char *p, *end;
    bool bad;
} cur;

static uint64_t get64(cur *c)
{
    if (c->bad || c->end - c->p < 8)
        return c->bad = true, 0;
    uint64_t v = le64dec(c->p);
    c->p += 8;
    return v;
}

static uint32_t get32(cur *c)
{
    if (c->bad || c->end - c->p < 4)
        return c->bad = true, 0;
    uint32_t v = le32dec(c->p);
    c->p += 4;
    return v;
}

static const unsigned char *get(cur *c, uint64_t n)
{
    if (c->bad || (uint64_t)(c->end - c->p) < n)
        return c->bad = true, NULL;
    const unsigned char *at = c->p;
    c->p += n;
    return at;
}

static bool parse_head(cur *c, lct_sidecar *s)
{
    const unsigned char *m = get(c, 4);
    if (!m || memcmp(m, MAGIC, 4) != 0 || get32(c) != SIDECAR_VERSION)
        return false;
    s->size = get64(c);
    s->mtime_sec = (int64_t)get64(c);
    s->mtime_nsec = (int64_t)get64(c);
    s->ino = get64(c);
    s->dev = get64(c);
    s->header_size = get64(c);
    s->header_hash = get64(c);
    s->end = get64(c);
    s->last_offset = get64(c);
    s->last_hash = get64(c);
    s->nrows = get64(c);
    /* the skips' count is kept only once they are there to free (a
     * sidecar refused below is freed with what it holds) */
    uint64_t nskips = get64(c);
    uint64_t nnames = get64(c);
    s->truncated = get32(c) & 1u;
    get32(c);
    get64(c);
    /* Every count must fit the bytes left: a row is 32 bytes, a skip at
     * least 12, a name at least 4; and nothing lies past the trace. */
    uint64_t left = (uint64_t)(c->end - c->p);
    if (c->bad || s->nrows > left / ROW_SIZE || nskips > left / 12 ||
        nnames > left / 4 || nnames > UINT32_MAX || s->end > s->size ||
        s->header_size > s->end ||
        (s->last_offset && s->last_offset >= s->end))
        return false;
    s->nnames = 0;
    s->skips = calloc(nskips ? nskips : 1, sizeof *s->skips);
    s->names = calloc(nnames ? nnames : 1, sizeof *s->names);
    s->names_text = calloc(nnames ? nnames : 1, sizeof(char *));
    s->capskips = nskips;
    s->caprows = s->nrows;
    if (!s->skips || !s->names || !s->names_text)
        return false;
    /* the rows stay in the mapping: reaching one costs no copy */
    s->rows = (unsigned char *)get(c, s->nrows * ROW_SIZE);
    if (!s->rows)
        return false;
    for (uint64_t i = 0; i < nskips; i++) {
        uint64_t off = get64(c);
        uint32_t n = get32(c);
        const unsigned char *text = get(c, n);
        if (!text || n > MAX_MESSAGE || !add_skip(s, off, (const char *)text, n))
            return false;
    }
    for (uint64_t i = 0; i < nnames; i++) {
        uint32_t n = get32(c);
        const unsigned char *text = get(c, n);
        char *copy = text ? malloc(n ? n : 1) : NULL;
        if (!copy)
            return false;
        memcpy(copy, text, n);
        s->names_text[i] = copy;
        s->names[i] = (lct_str){copy, n};
        s->nnames++;
    }
    return true;
}

/* Rows in order, each frame after the one before and inside the indexed
 * bytes, naming known qualnames; skips in order, their warnings
 * printable.  (That rows and skips tile the bytes is checked against the
 * trace: tiles().) */
static bool rows_sane(const lct_sidecar *s)
{
    uint64_t prev_end = s->header_size;
    for (uint64_t i = 0; i < s->nrows; i++) {
        lct_sidecar_row row;
        lct_sidecar_get(s, i, &row);
        uint32_t len = le32dec(s->rows + i * ROW_SIZE + 28);
        if (row.offset < prev_end || row.offset >= s->end ||
            row.offset + 4 + len > s->end || row.qualname >= s->nnames)
            return false;
        prev_end = row.offset + 4 + len;
    }
    for (uint64_t i = 0; i < s->nskips; i++) {
        if (s->skips[i].offset < s->header_size ||
            s->skips[i].offset >= s->end ||
            (i && s->skips[i].offset <= s->skips[i - 1].offset))
            return false;
        for (const char *m = s->skips[i].message; *m; m++)
            if ((unsigned char)*m < 0x20 || *m == 0x7f)
                return false;
    }
    return true;
}

/* Parse the mapping map[0, n) as a sidecar, which then owns the mapping:
 * NULL (and the mapping unmapped) when it is not one whole. */
static lct_sidecar *parse(void *map, size_t n)
{
    const unsigned char *bytes = map;
    lct_sidecar *s = calloc(1, sizeof *s);
    if (!s) {
        munmap(map, n);
        return NULL;
    }
    /* A sidecar cut while mapped reads as zeros (the guard), which the
     * hash then refuses, instead of killing the process. */
    s->map = map;
    s->map_len = n;
    s->guard_slot = lct__guard_register(map, n);
    cur c = {bytes, bytes + n - 8, false};
    if (s->guard_slot >= 0 && n >= HEAD_SIZE + 8 &&
        hash_bytes(0x9e3779b97f4a7c15u, bytes, n - 8) ==
            le64dec(bytes + n - 8) &&
        parse_head(&c, s) && c.p == c.end && rows_sane(s) &&
        lct__guard_lost(s->guard_slot) == LCT__NOTHING_LOST)
        return s;
    lct_sidecar_free(s); /* unmaps */
    return NULL;
}

/* MARK: where sidecars live */

/* Beside the trace: PATH.lcti. */
static bool beside_path(const lct_reader *r, char *out, size_t outsz)
{
    int n = snprintf(out, outsz, "%s.lcti", r->name);
    return n > 0 && (size_t)n < outsz && strcmp(r->name, "<stdin>") != 0;
}

/* In the cache directory ($XDG_CACHE_HOME/lct, else ~/.cache/lct), named
 * by the trace's real path and inode: for traces in directories we may
 * not write. */
static bool cache_path(const lct_reader *r, const struct stat *st, bool make,
                       char *out, size_t outsz)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[PATH_MAX];
    int n = xdg && *xdg ? snprintf(dir, sizeof dir, "%s/lct", xdg)
            : home && *home ? snprintf(dir, sizeof dir, "%s/.cache/lct", home)
                            : -1;
    if (n <= 0 || (size_t)n >= sizeof dir)
        return false;
    if (make) { /* the parent (~/.cache) too, as XDG says to */
        char *slash = strrchr(dir, '/');
        *slash = '\0';
        (void)mkdir(dir, 0700);
        *slash = '/';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return false;
    }
    char real[PATH_MAX];
    if (!realpath(r->name, real))
        return false;
    uint64_t h = hash_bytes(0x9e3779b97f4a7c15u, (const unsigned char *)real,
                            strlen(real));
    n = snprintf(out, outsz, "%s/%016" PRIx64 "-%" PRIx64 ".lcti", dir, h,
                 (uint64_t)st->st_ino);
    return n > 0 && (size_t)n < outsz;
}

/* MARK: loading and checking */

/* What a sidecar on disk says about the trace r reads now. */
typedef enum verdict { V_NONE, V_DAMAGED, V_OTHER, V_STALE, V_PREFIX, V_WHOLE } verdict;

/* Whether reading could have ended where s says: at the end of the bytes
 * indexed, or, when a partial frame was left, at a frame longer than the
 * bytes after it.  (A sidecar claiming to be whole but ending early would
 * count too few records.) */
static bool end_sane(const lct_reader *r, const lct_sidecar *s)
{
    if (!s->truncated)
        return s->end == s->size;
    unsigned char prefix[4];
    if (s->size - s->end < 4)
        return true; /* a cut length prefix */
    return pread(r->source.fd, prefix, 4, (off_t)s->end) == 4 &&
           4 + (uint64_t)be32dec(prefix) > s->size - s->end;
}

/* Whether the rows and skips tile the indexed bytes, frame after frame
 * from the header's end to `end` (a row carries its frame's length; a
 * skip's is read from the trace), the last of them the frame s names
 * last (whose hash judge then checks).  The checksum guards against
 * damage only: anyone can recompute it, and a sidecar whose rows left a
 * gap would count, and seek past, records that are there. */
static bool tiles(const lct_reader *r, const lct_sidecar *s)
{
    uint64_t pos = s->header_size, last = 0, i = 0, k = 0;
    while (i < s->nrows || k < s->nskips) {
        const unsigned char *row = s->rows + i * ROW_SIZE;
        uint64_t at, len;
        if (k == s->nskips ||
            (i < s->nrows && le64dec(row) < s->skips[k].offset)) {
            at = le64dec(row);
            len = le32dec(row + 28);
            i++;
        } else {
            unsigned char prefix[4];
            at = s->skips[k++].offset;
            if (pread(r->source.fd, prefix, 4, (off_t)at) != 4)
                return false;
            len = be32dec(prefix);
        }
        if (at != pos)
            return false;
        last = at;
        pos = at + 4 + len;
    }
    return pos == s->end && last == s->last_offset;
}

static verdict judge(const lct_reader *r, const struct stat *st,
                     const lct_sidecar *s)
{
    uint64_t h;
    if (s->ino != (uint64_t)st->st_ino || s->dev != (uint64_t)st->st_dev ||
        s->header_size != r->header.size)
        return V_OTHER;
    if (!hash_range(r->source.fd, 0, s->header_size, &h) ||
        h != s->header_hash)
        return V_OTHER;
    if ((uint64_t)st->st_size < s->end)
        return V_STALE; /* shorter than what was indexed */
    if (!end_sane(r, s) || !tiles(r, s))
        return V_DAMAGED;
    if (s->last_offset &&
        (!hash_frame(r->source.fd, s->last_offset, &h) || h != s->last_hash))
        return V_STALE;
    bool same_time = (int64_t)st->st_mtim.tv_sec == s->mtime_sec &&
                     (int64_t)st->st_mtim.tv_nsec == s->mtime_nsec;
    if ((uint64_t)st->st_size == s->size)
        return same_time ? V_WHOLE : V_STALE; /* rewritten in place */
    /* Longer: appended to, as a recording trace grows (what was indexed
     * is taken to be unchanged: its first and last frames are). */
    return (uint64_t)st->st_size > s->size ? V_PREFIX : V_STALE;
}

static lct_sidecar *read_sidecar(const char *path, bool *found)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *found = fd >= 0; /* none there, or none that can be read */
    struct stat st;
    lct_sidecar *s = NULL;
    void *map = MAP_FAILED;
    /* Mapped, its pages read in at once: the hash touches all of them. */
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX / 2)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ,
                   MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (map != MAP_FAILED)
        s = parse(map, (size_t)st.st_size);
    if (fd >= 0)
        close(fd);
    return s;
}

lct_status lct_sidecar_load(const lct_reader *r, lct_sidecar **out,
                            lct_error *err)
{
    struct stat st;
    char paths[2][PATH_MAX];
    if (!r || !out)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sidecar_load: NULL argument");
    *out = NULL;
    if (!identity(r, &st))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "%s: a sidecar index needs a regular file",
                         r->shown_name);
    int npaths = 0;
    if (beside_path(r, paths[npaths], sizeof paths[0]))
        npaths++;
    if (cache_path(r, &st, false, paths[npaths], sizeof paths[0]))
        npaths++;
    verdict worst = V_NONE;
    const char *worst_at = "";
    for (int i = 0; i < npaths; i++) {
        bool found;
        lct_sidecar *s = read_sidecar(paths[i], &found);
        verdict v = !found ? V_NONE : !s ? V_DAMAGED : judge(r, &st, s);
        if (v >= V_PREFIX) {
            s->whole = v == V_WHOLE;
            *out = s;
            return LCT_OK;
        }
        lct_sidecar_free(s);
        if (v > worst) {
            worst = v;
            worst_at = paths[i];
        }
    }
    if (worst == V_NONE)
        return lct__fail(err, LCT_ERR_NOT_FOUND, 0, 0,
                         "%s: no sidecar index", r->shown_name);
    return lct__fail(err, worst == V_DAMAGED ? LCT_ERR_MALFORMED
                                             : LCT_ERR_CHANGED,
                     0, 0, "%s: sidecar index %s %s: ignored",
                     r->shown_name, worst_at,
                     worst == V_DAMAGED ? "is damaged"
                     : worst == V_OTHER ? "is for another file"
                                        : "is stale (the trace changed)");
}

/* MARK: saving */

/* Write b to path whole or not at all: a temporary name beside it, then
 * rename.  A file already at path that is not a sidecar (it does not
 * begin with the magic) is never replaced. */
static int write_whole(const char *path, const buf *b)
{
    unsigned char magic[4];
    int old = open(path, O_RDONLY | O_CLOEXEC);
    if (old >= 0) {
        ssize_t n = read(old, magic, 4);
        close(old);
        if (n != 0 && (n != 4 || memcmp(magic, MAGIC, 4) != 0))
            return EEXIST;
    }
    char tmp[PATH_MAX + 16];
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp)
        return ENAMETOOLONG;
    int fd = mkstemp(tmp);
    if (fd < 0)
        return errno;
    size_t done = 0;
    while (done < b->g.len) {
        ssize_t w = write(fd, b->g.ptr + done, b->g.len - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int e = 0;
    if (done != b->g.len || fchmod(fd, 0644) != 0)
        e = errno ? errno : EIO;
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) != 0)
        e = errno;
    if (e)
        unlink(tmp);
    return e;
}

lct_status lct_sidecar_save(const lct_sidecar *s, const lct_reader *r,
                            char *where, size_t wsz, lct_error *err)
{
    struct stat st;
    char path[PATH_MAX];
    buf b = {0};
    if (!s || !r || !identity(r, &st))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sidecar_save: no index, or not a regular file");
    if (!serialise(s, &b)) {
        free(b.g.ptr);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    }
    int e = beside_path(r, path, sizeof path) ? write_whole(path, &b)
                                               : ENAMETOOLONG;
    /* A directory we may not write, or a name too long for the suffix:
     * the cache directory instead. */
    if (e == EACCES || e == EROFS || e == EPERM || e == ENAMETOOLONG)
        e = cache_path(r, &st, true, path, sizeof path) ? write_whole(path, &b)
                                                        : e;
    free(b.g.ptr);
    if (e == EEXIST)
        return lct__fail(err, LCT_ERR_SYS, e, 0,
                         "%s: %s is there and is not a sidecar index: not "
                         "replaced", r->shown_name, path);
    if (e)
        return lct__fail(err, LCT_ERR_SYS, e, 0,
                         "%s: writing its sidecar index %s failed: %s",
                         r->shown_name, path, strerror(e));
    if (where)
        snprintf(where, wsz, "%s", path);
    return LCT_OK;
}
