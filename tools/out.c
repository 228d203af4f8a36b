/*
 * out.c - everything the tool prints goes through here: stdout as a
 * library sink, text escaped for a terminal (strvis), CSV fields, JSON
 * strings and numbers, and the last flush that turns a closed pipe into a
 * quiet exit; and tool_buf, a sink that gathers bytes to be used whole.
 */
#include "tool.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vis.h>
#include <pthread.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <tmmintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

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

int tool_buf_write(void *ctx, const char *data, size_t len)
{
    tool_buf *b = ctx;
    if (b->cap - b->len < len) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < len)
            cap *= 2;
        char *grown = realloc(b->buf, cap);
        if (!grown)
            return -1;
        b->buf = grown;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, data, len);
    b->len += len;
    return 0;
}

/* strvis's escaping of s, in pieces, so no allocation and no size limit. */
static void put_strvis(FILE *f, const char *s, size_t len, int flags)
{
    char buf[4 * 256 + 1];
    while (len > 0) {
        size_t take = len < 256 ? len : 256;
        /* Do not split a UTF-8 sequence between pieces. */
        while (take < len && take > 252 &&
               ((unsigned char)s[take] & 0xc0) == 0x80)
            take--;
        strvisx(buf, s, take,
                VIS_CSTYLE | VIS_TAB | VIS_NL | VIS_OCTAL | flags);
        fputs(buf, f);
        s += take;
        len -= take;
    }
}

/* Whether the 3 bytes at p encode a bidirectional control (U+061C's two
 * bytes aside): printable to strvis, but they reorder what a terminal
 * shows around them, so a name could pass for another. */
static size_t bidi_control_at(const unsigned char *p, size_t left)
{
    if (left >= 2 && p[0] == 0xd8 && p[1] == 0x9c)
        return 2; /* U+061C ARABIC LETTER MARK */
    if (left < 3 || p[0] != 0xe2)
        return 0;
    unsigned cp = (unsigned)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
    cp |= 0x2000;
    if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
        return 0;
    bool bidi = cp == 0x200e || cp == 0x200f ||
                (cp >= 0x202a && cp <= 0x202e) ||
                (cp >= 0x2066 && cp <= 0x2069);
    return bidi ? 3 : 0;
}

/* How many bytes at the start of p vis leaves as they are: printable
 * ASCII, the backslash only when slash_plain; eight bytes at a time
 * until a word holds another byte. */
static size_t plain_prefix(const unsigned char *p, size_t len,
                           bool slash_plain)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        uint64_t del = x ^ (0x7f * ones), slash = x ^ (0x5c * ones);
        uint64_t bad = (x & highs) | ((x - 0x20 * ones) & ~x & highs) |
                       ((del - ones) & ~del & highs);
        if (!slash_plain)
            bad |= (slash - ones) & ~slash & highs;
        if (bad)
            break;
    }
    while (i < len && p[i] >= 0x20 && p[i] < 0x7f &&
           (slash_plain || p[i] != '\\'))
        i++;
    return i;
}

/* tool_put_vis, or with VIS_NOSLASH tool_put_message. */
static void put_escaped(FILE *f, const char *s, size_t len, int flags)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    /* Printable ASCII but the backslash is what it is: the usual case. */
    size_t plain = plain_prefix(p, len, flags & VIS_NOSLASH);
    if (plain == len) {
        fwrite(s, 1, len, f);
        return;
    }
    size_t start = 0;
    for (i = plain; i < len; i++) {
        size_t n = p[i] >= 0xd8 ? bidi_control_at(p + i, len - i) : 0;
        if (n == 0)
            continue;
        put_strvis(f, s + start, i - start, flags);
        for (size_t k = 0; k < n; k++) /* as strvis writes other bytes */
            fprintf(f, "\\%03o", p[i + k]);
        i += n - 1;
        start = i + 1;
    }
    put_strvis(f, s + start, len - start, flags);
}

void tool_put_vis(FILE *f, const char *s, size_t len)
{
    put_escaped(f, s, len, 0);
}

void tool_put_message(FILE *f, const char *message)
{
    put_escaped(f, message, strlen(message), VIS_NOSLASH);
}

#ifdef __SSE2__
/* Which of x's sixteen bytes vis would change (a control, DEL, a byte
 * from 0x80, the backslash), as a bit mask. */
static inline unsigned vis_changes16(__m128i x)
{
    /* signed: 0x80-0xff are below the space too */
    __m128i bad = _mm_or_si128(
        _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)),
        _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f)),
                     _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
    return (unsigned)_mm_movemask_epi8(bad);
}
#endif

/* Whether every byte of s is one vis leaves as it is (printable ASCII,
 * no backslash): sixteen at a time where SSE2 is (every x86-64). */
static bool all_plain(const char *s, size_t len)
{
    size_t i = 0;
#ifdef __SSE2__
    for (; i + 16 <= len; i += 16)
        if (vis_changes16(_mm_loadu_si128(
                (const __m128i *)(const void *)(s + i))))
            return false;
#endif
    return plain_prefix((const unsigned char *)s + i, len - i, false) ==
           len - i;
}

/* Copy s to out with each '"' doubled; the length written, or SIZE_MAX
 * at a byte vis would change. */
static size_t double_quotes_bytes(const char *s, size_t len, char *out)
{
    char *q = out;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7f || c == '\\')
            return SIZE_MAX;
        *q++ = (char)c;
        if (c == '"')
            *q++ = '"';
    }
    return (size_t)(q - out);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* With SSSE3's byte shuffle, eight bytes at a time: for each pattern of
 * quotes among eight bytes, the shuffle that writes them with every
 * quote twice, and how many bytes that makes.  An args column holds a
 * quote every few bytes: a call per piece (memchr, memcpy) was most of
 * `dump --csv`, a branch per quote still a fifth of it. */
static unsigned char expand_shuffle[256][16], expand_len[256];
static bool have_ssse3;
static pthread_once_t expand_once = PTHREAD_ONCE_INIT;

static void expand_init(void)
{
    have_ssse3 = __builtin_cpu_supports("ssse3") != 0;
    for (unsigned m = 0; have_ssse3 && m < 256; m++) {
        unsigned k = 0;
        memset(expand_shuffle[m], 0x80, 16); /* 0x80: a zero byte */
        for (unsigned b = 0; b < 8; b++) {
            expand_shuffle[m][k++] = (unsigned char)b;
            if (m >> b & 1)
                expand_shuffle[m][k++] = (unsigned char)b;
        }
        expand_len[m] = (unsigned char)k;
    }
}

__attribute__((target("ssse3"))) static size_t
double_quotes_ssse3(const char *s, size_t len, char *out)
{
    const __m128i quote = _mm_set1_epi8('"');
    char *q = out;
    size_t i = 0;
    for (; i + 16 <= len; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        if (vis_changes16(x))
            return SIZE_MAX;
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, quote));
        unsigned lo = m & 0xff, hi = m >> 8;
        _mm_storeu_si128((__m128i *)(void *)q,
                         _mm_shuffle_epi8(x, _mm_loadu_si128(
                                                 (const __m128i *)(const void *)
                                                     expand_shuffle[lo])));
        q += expand_len[lo];
        _mm_storeu_si128((__m128i *)(void *)q,
                         _mm_shuffle_epi8(_mm_srli_si128(x, 8),
                                          _mm_loadu_si128(
                                              (const __m128i *)(const void *)
                                                  expand_shuffle[hi])));
        q += expand_len[hi];
    }
    size_t tail = double_quotes_bytes(s + i, len - i, q);
    return tail == SIZE_MAX ? SIZE_MAX : (size_t)(q - out) + tail;
}
#endif

/* Copy s to out with each '"' doubled (out has room for 2 len + 16
 * bytes); the length written, or SIZE_MAX at a byte vis would change
 * (out then holds a part). */
static size_t double_quotes(const char *s, size_t len, char *out)
{
#if defined(__x86_64__) && defined(__GNUC__)
    /* the CPU asked once, with the tables, for every thread */
    if (pthread_once(&expand_once, expand_init) == 0 && have_ssse3)
        return double_quotes_ssse3(s, len, out);
#endif
    return double_quotes_bytes(s, len, out);
}

/* A quoted CSV field of printable ASCII with no backslash (what vis
 * leaves as it is), its quotes doubled in a buffer on the stack (each
 * thread of a parallel dump has its own) and written a few KiB at a
 * time.  False, nothing written, when s holds another byte. */
static bool put_csv_plain(FILE *f, const char *s, size_t len)
{
    enum { PIECE = 4096 };
    char buf[2 * PIECE + 64]; /* quotes doubled, and a store's overrun */
    /* past one piece, the whole field is checked before any is written */
    if (len > PIECE && !all_plain(s, len))
        return false;
    buf[0] = '"';
    size_t at = 1;
    for (size_t done = 0; done < len; done += PIECE) {
        size_t take = len - done < PIECE ? len - done : PIECE;
        size_t n = double_quotes(s + done, take, buf + at);
        if (n == SIZE_MAX)
            return false; /* in the first piece: nothing written */
        at += n;
        if (done + take < len) {
            fwrite(buf, 1, at, f);
            at = 0;
        }
    }
    buf[at++] = '"';
    fwrite(buf, 1, at, f);
    return true;
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
    if (put_csv_plain(f, s, len))
        return;
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
    tool_put_json_double_to(stdout, d);
}

void tool_put_json_str_to(FILE *f, const char *s, size_t len)
{
    lct_json_write_string(s, len, tool_file_write, f);
}

void tool_put_json_double_to(FILE *f, double d)
{
    char buf[LCT_DOUBLE_BUFSIZE];
    size_t n = lct_json_format_double(d, buf);
    fwrite(buf, 1, n, f);
}

void tool_format_bytes(char *out, size_t size, double b)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (b >= 1024 && u < 5)
        b /= 1024, u++;
    snprintf(out, size, u ? "%.1f %s" : "%.0f %s", b, units[u]);
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


/* MARK: output files */

outfile *tool_output_open(const char *cmd, const char *opt,
                             const char *path, const tool_args *a)
{
    outfile *o;
    lct_error err;
    lct_status rc = outfile_open(path, (const char *const *)a->operands,
                                    (size_t)a->noperands, &o, &err);
    if (rc == LCT_ERR_IS_INPUT)
        tool_usage_error(cmd, "%s: %s", opt, err.message);
    if (rc != LCT_OK) {
        fprintf(stderr, "%s %s: ", tool_name, cmd);
        tool_put_message(stderr, err.message);
        fputc('\n', stderr);
        return NULL;
    }
    return o;
}

FILE *tool_output_stream(const char *cmd, outfile *o)
{
    fflush(stdout); /* "-" shares the descriptor with what was printed */
    int fd = dup(outfile_fd(o));
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "%s %s: %s\n", tool_name, cmd, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    return f;
}

bool tool_output_finish(const char *cmd, outfile *o, FILE *f)
{
    int e = 0;
    if (f && fclose(f) != 0)
        e = errno;
    lct_error err;
    if (e == EPIPE) { /* the reader went away (| head): not a failure */
        outfile_abort(o);
        return true;
    }
    if (e) {
        outfile_abort(o);
        fprintf(stderr, "%s %s: writing the output failed: %s\n", tool_name,
                cmd, strerror(e));
        return false;
    }
    if (outfile_commit(o, &err) != LCT_OK) {
        fprintf(stderr, "%s %s: ", tool_name, cmd);
        tool_put_message(stderr, err.message);
        fputc('\n', stderr);
        return false;
    }
    return true;
}
