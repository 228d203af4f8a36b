/*
 * common.c - what every command shares before it parses anything: the
 * tool's and the command's names, the shared options' values (-q,
 * --max-frame), and how a usage error ends the process (its control bytes
 * escaped).  It calls no other file of tools/, so any of them may use it.
 */
#include "tool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *tool_cmd_name = "";
bool tool_quiet;
uint64_t tool_max_stream_frame;

const char *tool_name = "lct";

void tool_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s%s%s: ", tool_name, cmd ? " " : "", cmd ? cmd : "");
    /* The message quotes what was typed (an option, a name, a path):
     * its control bytes reach the terminal escaped, C-style, as every
     * other message's do; other bytes (UTF-8, a library message's
     * escapes) as they are. */
    char line[2048];
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (const unsigned char *c = (const unsigned char *)line; *c; c++) {
        if (*c < 0x20 || *c == 0x7f)
            fprintf(stderr, "\\%03o", *c);
        else
            fputc(*c, stderr);
    }
    fprintf(stderr, "\nTry '%s%s%s --help'.\n", tool_name, cmd ? " " : "",
            cmd ? cmd : "");
    exit(EXIT_USAGE);
}
