/*
 * source_internal.h - where a trace's bytes come from: a read-only
 * mapping, a heap buffer (LCT_NO_MMAP), a caller's buffer, or a stream
 * read frame by frame into a reused buffer (pipes, LCT_STREAM).
 */
#ifndef LCT_SOURCE_INTERNAL_H
#define LCT_SOURCE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "read/frame_internal.h"
#include "lct_read.h"

typedef enum lct__source_kind {
    LCT__SOURCE_NONE = 0,
    LCT__SOURCE_MMAP,     /* munmap at close */
    LCT__SOURCE_HEAP,     /* free at close */
    LCT__SOURCE_BORROWED, /* the caller's; nothing to release */
    LCT__SOURCE_STREAM    /* frames read one at a time; free buf at close */
} lct__source_kind;

typedef struct lct__source {
    /* The whole input (MMAP, HEAP, BORROWED); NULL for a stream. */
    const unsigned char *data;
    /* Bytes of the input: mapped, read, or for a stream read so far. */
    uint64_t size;
    /* A mapping only: its page tables are filled up to here
     * (lct__source_ahead). */
    uint64_t populated;
    /* A mapping only: the last page whose first lines were asked for,
     * and pages let go below here (lct__source_ahead). */
    uint64_t prefetched, dropped;
    lct__source_kind kind;
    /* Our own descriptor: a mapped file's, for fstat (shrink checks) and
     * lct_reader_refresh; a stream's, to read from.  -1 otherwise. */
    int fd;

    /* A stream only: buf[0..fill) holds input bytes from offset base on,
     * the current frame from buf[start]; `consumed` is the offset of the
     * next byte to read from fd. */
    unsigned char *buf;
    size_t cap, fill, start;
    uint64_t base, consumed;
    bool seekable; /* pread at offsets (a regular file), else read(2) */
    bool regular;  /* a regular file (even one whose size reads as 0) */
    bool eof;      /* read(2) said end of input (sticky unless following) */
    /* A pipe only (not seekable): the longest frame body it will hold
     * (lct_open_options.max_stream_frame); a longer one that its first
     * bytes do not already refuse is LCT__FRAME_TOO_LONG. */
    uint64_t max_frame;
    /* Keep every frame until release (an input that cannot be mapped,
     * opened without LCT_STREAM): a full buffer is retired, not reused,
     * so views stay valid as a mapping's do.  Memory: the input. */
    bool keep;
    unsigned char **retired;
    size_t nretired;
    int read_errno;
} lct__source;

/*
 * Fill src from fd: map a regular file of known size (unless LCT_NO_MMAP
 * or LCT_STREAM), read it whole under LCT_NO_MMAP, stream everything else
 * (pipes, FIFOs, terminals, devices, files whose size reads as 0 such as
 * /proc's) and whatever LCT_STREAM asks for.  name is for messages only.
 * A directory is LCT_ERR_SYS with EISDIR.  An empty mapped or read input
 * succeeds with size 0 (the caller reports "empty").
 */
int lct__source_from_fd(int fd, const char *name, unsigned flags,
                        lct__source *src, lct_error *err);

/* Under LCT_ONE_PASS: whether the mapped file (map, size bytes, read
 * through fd) is read faster as a stream here (source_probe.c).  Files
 * under 16 MiB are mapped; the first larger one decides for the process. */
bool lct__one_pass_streams(int fd, const unsigned char *map, uint64_t size);

/* What lct__one_pass_streams would say without a probe: 1 stream, 0 map,
 * -1 not yet known (a probe needs the mapping). */
int lct__one_pass_known(uint64_t size);

/* Tests: decide for the process (1 stream, 0 map), or -1 to probe again. */
void lct__one_pass_decide(int streams);

/* The file's size now (fstat of the kept descriptor): LCT_OK or
 * LCT_ERR_SYS (no descriptor, or fstat failed). */
int lct__source_real_size(const lct__source *src, uint64_t *size);

/* Make the pages of a mapping past `size` zero pages, so touching them no
 * longer faults.  Nothing for other kinds of source. */
void lct__source_forget_after(lct__source *src, uint64_t size);

/* Release what src holds; safe on a zeroed or released source. */
void lct__source_release(lct__source *src);

/*
 * Map the kept descriptor again at the file's current size.  On success
 * the old mapping is gone; *changed says whether anything moved.  A file
 * now smaller than the mapping is LCT_ERR_CHANGED (err->offset: its size);
 * the old mapping stays, its lost pages made zero pages.
 */
int lct__source_remap(lct__source *src, const char *name, bool *changed,
                      uint64_t *now_size, lct_error *err);

/* How lct__stream_frame reads. */
enum {
    /* End of input is not final: the same call later reads what was
     * appended (a trace being written). */
    LCT__STREAM_FOLLOW = 1u << 0,
    /* The header frame: one that its first bytes refuse is returned at
     * once, its rest neither read nor counted (the file is refused
     * anyway: /dev/urandom must not cost 4 GiB of reading). */
    LCT__STREAM_HEADER = 1u << 1
};

/*
 * A stream's frame at file offset pos (the frame after the last one asked
 * for, or the same one again): bytes before pos are dropped (their views
 * die), then the prefix and body are read into the buffer.  Statuses as
 * lct__frame_at, plus LCT__FRAME_READ_ERROR (errno in src->read_errno) and
 * LCT__FRAME_TOO_LONG.  A frame its first bytes refuse (kept < length)
 * keeps only those bytes; how: LCT__STREAM_FOLLOW, LCT__STREAM_HEADER.
 */
lct__frame_status lct__stream_frame(lct__source *src, uint64_t pos,
                                    unsigned how, lct__frame *frame);

/* The bytes already read from the frame lct__stream_frame last handed
 * out (its prefix first): *p and their count, for a look ahead that
 * costs no read. */
size_t lct__stream_peek(const lct__source *src, const unsigned char **p);

/* Whether a seekable stream's file is now shorter than it was (at open,
 * or as far as it was read): *cut is its size.  Asked when reading ends. */
bool lct__stream_shrank(const lct__source *src, uint64_t *cut);

/* Go back to offset pos of a seekable stream; false if it is not. */
bool lct__stream_seek(lct__source *src, uint64_t pos);

/* A mapping read front to back, now at pos: fill the page tables of the
 * next few MiB when the reader nears the end of what is filled, ask for
 * the next cache lines, and let go of the pages far behind (a view there
 * stays valid: touched again, its page is read back from the file).
 * Costs a system call per window; does nothing for other sources. */
void lct__source_ahead(lct__source *s, uint64_t pos);

#endif
