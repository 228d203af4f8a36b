/*
 * test_frame.c - framing over a plain buffer (lib/frame.c): whole frames,
 * the clean end, a cut prefix, a cut or over-long body, at every offset.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "read/frame_internal.h"
#include "mpw.h"

Test(frame, whole_frames_then_clean_end)
{
    mpw f;
    mpw_init(&f);
    mpw_be32(&f, 3);
    mpw_raw(&f, "abc", 3);
    mpw_be32(&f, 0); /* zero-length frames are frames */
    lct__frame fr;
    cr_assert_eq(lct__frame_at(f.buf, f.len, 0, &fr), LCT__FRAME_OK);
    cr_expect_eq(fr.offset, 0);
    cr_expect_eq(fr.length, 3);
    cr_expect_eq(fr.body, f.buf + 4);
    cr_assert_eq(lct__frame_at(f.buf, f.len, 7, &fr), LCT__FRAME_OK);
    cr_expect_eq(fr.length, 0);
    cr_expect_eq(lct__frame_at(f.buf, f.len, 11, &fr), LCT__FRAME_END);
    mpw_free(&f);
}

Test(frame, prefix_cut_at_one_two_three_bytes)
{
    const unsigned char data[] = {0, 0, 0};
    lct__frame fr;
    for (uint64_t n = 1; n <= 3; n++) {
        cr_expect_eq(lct__frame_at(data, n, 0, &fr), LCT__FRAME_SHORT_PREFIX);
        cr_expect_eq(fr.available, n);
    }
}

Test(frame, body_cut_short_reports_what_is_there)
{
    mpw f;
    mpw_init(&f);
    mpw_be32(&f, 10);
    mpw_raw(&f, "abcd", 4);
    lct__frame fr;
    cr_assert_eq(lct__frame_at(f.buf, f.len, 0, &fr), LCT__FRAME_SHORT_BODY);
    cr_expect_eq(fr.length, 10);
    cr_expect_eq(fr.available, 4);
    mpw_free(&f);
}

Test(frame, huge_length_is_a_short_body_not_an_overread)
{
    const unsigned char data[] = {0xff, 0xff, 0xff, 0xff, 1, 2};
    lct__frame fr;
    cr_expect_eq(lct__frame_at(data, sizeof data, 0, &fr),
                 LCT__FRAME_SHORT_BODY);
    cr_expect_eq(fr.length, 0xffffffffu);
    cr_expect_eq(fr.available, 2);
}

Test(frame, every_cut_of_three_frames)
{
    mpw f;
    mpw_init(&f);
    uint64_t bounds[4] = {0};
    for (int i = 0; i < 3; i++) {
        mpw_be32(&f, (uint32_t)(i + 1));
        for (int j = 0; j <= i; j++)
            mpw_byte(&f, 'x');
        bounds[i + 1] = f.len;
    }
    for (uint64_t cut = 0; cut <= f.len; cut++) {
        /* Walk whole frames, then see what the cut looks like. */
        uint64_t pos = 0;
        lct__frame fr;
        lct__frame_status st;
        int whole = 0;
        while ((st = lct__frame_at(f.buf, cut, pos, &fr)) == LCT__FRAME_OK) {
            pos += 4 + fr.length;
            whole++;
        }
        int expect_whole = 0;
        while (expect_whole < 3 && bounds[expect_whole + 1] <= cut)
            expect_whole++;
        cr_expect_eq(whole, expect_whole, "cut %llu", (unsigned long long)cut);
        bool on_boundary = bounds[expect_whole] == cut;
        if (on_boundary)
            cr_expect_eq(st, LCT__FRAME_END, "cut %llu", (unsigned long long)cut);
        else if (cut - bounds[expect_whole] < 4)
            cr_expect_eq(st, LCT__FRAME_SHORT_PREFIX);
        else
            cr_expect_eq(st, LCT__FRAME_SHORT_BODY);
    }
    mpw_free(&f);
}
