/*
 * error.c - status code names, filling lct_error, and quoting bytes that
 * came from a file or a command line before they reach a message.
 */
#include "base/error_internal.h"
#include "lct_core.h"

#include <vis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *lct_strerror(int code)
{
    switch (code) {
    case LCT_OK: return "success";
    case LCT_ERR_SYS: return "system call failed";
    case LCT_ERR_EMPTY: return "trace file is empty";
    case LCT_ERR_TRUNCATED: return "frame cut short";
    case LCT_ERR_MALFORMED: return "malformed data";
    case LCT_ERR_MAGIC: return "bad magic";
    case LCT_ERR_VERSION: return "unsupported format_version";
    case LCT_ERR_SCHEMA: return "unsupported trace_schema_version";
    case LCT_ERR_TYPE: return "value has another type";
    case LCT_ERR_RANGE: return "number out of range";
    case LCT_ERR_DEPTH: return "nesting too deep";
    case LCT_ERR_NOMEM: return "out of memory";
    case LCT_ERR_INVALID: return "invalid argument";
    case LCT_ERR_NOT_FOUND: return "key not found";
    case LCT_ERR_CHANGED: return "file changed while read";
    case LCT_ERR_LIMIT: return "frame over the stream limit";
    case LCT_ERR_IS_INPUT: return "output file is an input";
    case LCT_ERR_BACKEND: return "storage backend failed";
    }
    return "unknown status";
}

/* Names reach a message escaped (lct__vis_name); text that came from
 * elsewhere (a server's reply) may not have been.  Whatever control byte
 * is left is escaped here, in the same C style, so a message is always
 * safe to print as it is and never needs escaping again (which doubled
 * the backslashes of the names in it). */
static void escape_controls(char *msg, size_t size)
{
    size_t i = 0;
    while (msg[i] && (unsigned char)msg[i] >= 0x20 && msg[i] != 0x7f)
        i++;
    if (!msg[i])
        return;
    char out[LCT_ERROR_MESSAGE_SIZE];
    size_t o = 0;
    for (const char *p = msg; *p && o + 5 < sizeof out; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != 0x7f)
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, sizeof out - o, "\\%03o", c);
    }
    out[o] = '\0';
    snprintf(msg, size, "%s", out);
}

int lct__fail(lct_error *err, int code, int sys_errno, uint64_t offset,
              const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    err->sys_errno = sys_errno;
    err->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    escape_controls(err->message, sizeof err->message);
    return code;
}

void lct__repr_bytes(char *out, size_t outsz, const unsigned char *p,
                     size_t n)
{
    size_t o = 0;
#define PUT(...)                                                               \
    do {                                                                       \
        int w_ = snprintf(out + o, outsz - o, __VA_ARGS__);                    \
        if (w_ < 0 || (size_t)w_ >= outsz - o) {                               \
            out[outsz - 1] = '\0';                                             \
            return;                                                            \
        }                                                                      \
        o += (size_t)w_;                                                       \
    } while (0)
    if (outsz == 0)
        return;
    out[0] = '\0';
    PUT("b'");
    for (size_t i = 0; i < n; i++) {
        unsigned c = p[i];
        if (c == '\\' || c == '\'')
            PUT("\\%c", c);
        else if (c == '\t')
            PUT("\\t");
        else if (c == '\n')
            PUT("\\n");
        else if (c == '\r')
            PUT("\\r");
        else if (c >= 0x20 && c < 0x7f)
            PUT("%c", c);
        else
            PUT("\\x%02x", c);
    }
    PUT("'");
#undef PUT
}

void lct__vis_name(char *out, size_t outsz, const char *name)
{
    if (outsz == 0)
        return;
    /* A name too long for the buffer, escaped, is shown by its head: the
     * longest half, quarter, ... of it that fits. */
    size_t len = strlen(name);
    while (strnvisx(out, outsz, name, len,
                    VIS_CSTYLE | VIS_TAB | VIS_NL | VIS_OCTAL) < 0) {
        if (len == 0) {
            out[0] = '\0';
            return;
        }
        len /= 2;
    }
}

lct_status lct__fail_open(lct_error *err, int e, const char *path,
                          const char *doing)
{
    char shown[256];
    lct__vis_name(shown, sizeof shown, path);
    return lct__fail(err, LCT_ERR_SYS, e, 0, "trace file '%s': %s: %s", shown,
                     doing, strerror(e));
}
