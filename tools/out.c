/*
 * out.c - everything the tool prints goes through here: stdout as a
 * library sink, text escaped for a terminal (strvis), CSV fields, JSON
 * strings and numbers, and the last flush that turns a closed pipe into a
 * quiet exit.
 */
#include "tool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <vis.h>

static int stdout_errno; /* the first write failure's errno */

int tool_stdout_write(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    if (fwrite(data, 1, len, stdout) == len)
        return 0;
    if (!stdout_errno)
        stdout_errno = errno;
    return -1;
}

int tool_file_write(void *ctx, const char *data, size_t len)
{
    return fwrite(data, 1, len, ctx) == len ? 0 : -1;
}

void tool_put_vis(FILE *f, const char *s, size_t len)
{
    char buf[4 * 256 + 1];
    /* In pieces, so no allocation and no size limit. */
    while (len > 0) {
        size_t take = len < 256 ? len : 256;
        /* Do not split a UTF-8 sequence between pieces. */
        while (take < len && take > 252 &&
               ((unsigned char)s[take] & 0xc0) == 0x80)
            take--;
        strvisx(buf, s, take, VIS_CSTYLE | VIS_TAB | VIS_NL | VIS_OCTAL);
        fputs(buf, f);
        s += take;
        len -= take;
    }
}

void tool_put_csv(FILE *f, const char *s, size_t len)
{
    /* Control bytes are escaped first (as in every text output), so the
     * only bytes RFC 4180 cares about that remain are ',' and '"'. */
    bool quote = memchr(s, ',', len) || memchr(s, '"', len);
    if (!quote) {
        tool_put_vis(f, s, len);
        return;
    }
    fputc('"', f);
    const char *end = s + len;
    while (s < end) {
        const char *q = memchr(s, '"', (size_t)(end - s));
        size_t run = q ? (size_t)(q - s) : (size_t)(end - s);
        tool_put_vis(f, s, run);
        if (!q)
            break;
        fputs("\"\"", f);
        s = q + 1;
    }
    fputc('"', f);
}

void tool_put_vis_padded(FILE *f, const char *s, size_t len, int width)
{
    tool_put_vis(f, s, len);
    int points = 0;
    for (size_t i = 0; i < len; i++)
        points += ((unsigned char)s[i] & 0xc0) != 0x80;
    for (; points < width; points++)
        fputc(' ', f);
}

void tool_put_json_str(const char *s, size_t len)
{
    lct_json_write_string(s, len, tool_stdout_write, NULL);
}

void tool_put_json_double(double d)
{
    char buf[LCT_DOUBLE_BUFSIZE];
    size_t n = lct_json_format_double(d, buf);
    fwrite(buf, 1, n, stdout);
}

void tool_finish_stdout(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return;
    if (!stdout_errno)
        stdout_errno = errno;
    errno = stdout_errno;
    if (errno == EPIPE)
        exit(EXIT_OK); /* the reader went away: that is not our failure */
    fprintf(stderr, "%s: writing output: %s\n", tool_name, strerror(errno));
    exit(EXIT_REFUSED);
}

