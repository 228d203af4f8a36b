/*
 * info_layout.c - the text layout of `lmcache trace info` that `lct info`
 * and its events block share: labels padded to a 28-character column.
 */
#include "info.h"

#include <stdarg.h>
#include <string.h>

/* "  label:" padded to the 28-character column (indent spaces first). */
void info_label(const char *indent, const char *name, size_t len)
{
    fputs(indent, stdout);
    char buf[LABEL_WIDTH + 64];
    if (len + 1 < sizeof buf) {
        memcpy(buf, name, len);
        buf[len] = ':';
        tool_put_vis_padded(stdout, buf, len + 1, LABEL_WIDTH);
    } else {
        tool_put_vis(stdout, name, len);
        fputc(':', stdout);
    }
}

void info_row(const char *indent, const char *name, const char *fmt, ...)
{
    info_label(indent, name, strlen(name));
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}
