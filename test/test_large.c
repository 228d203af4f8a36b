/*
 * test_large.c - offsets past 4 GiB.  A sparse file (no disk blocks for
 * the hole) puts a record beyond 2^32 cheaply: header, one malformed frame
 * whose ~4 GiB body is all zero bytes, a record, then a cut frame.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lct.h"
#include "mpw.h"

static void write_all(int fd, const void *p, size_t n)
{
    cr_assert_eq(write(fd, p, n), (ssize_t)n);
}

Test(large, offsets_past_four_gib)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/lct-large-XXXXXX",
             dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    unlink(path); /* gone when the test ends, whatever happens */

    mpw f;
    mpw_init(&f);
    mpw body;
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&f, &body);
    uint32_t hole = 0xfffffff0u;
    mpw_be32(&f, hole);
    write_all(fd, f.buf, f.len);
    uint64_t hole_frame = f.len - 4;
    uint64_t record_offset = f.len + hole;
    if (ftruncate(fd, (off_t)record_offset) != 0)
        cr_skip_test("filesystem cannot hold a sparse 4 GiB file: %s",
                     strerror(errno));
    cr_assert_eq(lseek(fd, 0, SEEK_END), (off_t)record_offset);

    mpw_reset(&f);
    mpw_reset(&body);
    mpw_record_begin(&body, 7.5, 8.5, "far.away");
    mpw_map(&body, 0);
    mpw_frame(&f, &body);
    mpw_raw(&f, "\x00\x00", 2); /* a cut length prefix */
    write_all(fd, f.buf, f.len);
    uint64_t cut_offset = record_offset + 4 + body.len;
    cr_assert_gt(record_offset, UINT64_C(1) << 32);

    char fdpath[64];
    snprintf(fdpath, sizeof fdpath, "large-%d", fd);
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open_fd(fd, fdpath, LCT_QUIET, &r, &err), LCT_OK, "%s",
                 err.message);
    lct_record rec;
    cr_assert_eq(lct_next(r, &rec), 1);
    cr_expect_eq(rec.offset, record_offset);
    cr_expect_eq(rec.t_mono, 7.5);
    cr_expect(rec.qualname.len == 8 && !memcmp(rec.qualname.ptr, "far.away", 8));
    cr_expect_eq(lct_next(r, &rec), 0);
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect_eq(st.records, 1);
    cr_expect_eq(st.skipped, 1, "the zero-filled frame at %llu",
                 (unsigned long long)hole_frame);
    cr_expect(st.truncated);
    cr_expect_eq(st.truncated_offset, cut_offset);
    cr_expect_eq(st.file_size, cut_offset + 2);
    cr_expect_eq(st.bytes_read, cut_offset);
    lct_close(r);
    close(fd);
    mpw_free(&f);
    mpw_free(&body);
}
