/*
 * common.c - what every command shares before it parses anything: the
 * tool's and the command's names, the shared options' values (-q,
 * --max-frame), and how a usage error ends the process.  It calls no
 * other file of tools/, so any of them may use it.
 */
#include "tool.h"

#include <stdarg.h>
#include <stdlib.h>

const char *tool_cmd_name = "";
bool tool_quiet;
uint64_t tool_max_stream_frame;

const char *tool_name = "lct";

void tool_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s%s%s: ", tool_name, cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s%s%s --help'.\n", tool_name, cmd ? " " : "",
            cmd ? cmd : "");
    exit(EXIT_USAGE);
}
