/*
 * sql_query.c - where `lct sql`'s query comes from: -f QUERYFILE (or
 * standard input), and a query on the command line that opens with an
 * SQL comment, which getopt would otherwise take for an option.
 */
#include "tool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The whole query text of -f, NUL-terminated (exits on failure). */
char *tool_sql_read_query(const char *path)
{
    bool stdin_query = strcmp(path, "-") == 0;
    FILE *f = stdin_query ? stdin : fopen(path, "rb");
    if (!f)
        tool_usage_error("sql", "-f %s: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0, n;
    do {
        if (cap - len < 4096) {
            cap = cap ? cap * 2 : 8192;
            char *grown = realloc(text, cap);
            if (!grown)
                tool_usage_error("sql", "out of memory");
            text = grown;
        }
        n = fread(text + len, 1, cap - len - 1, f);
        len += n;
    } while (n > 0);
    bool failed = ferror(f);
    if (!stdin_query)
        fclose(f);
    if (failed)
        tool_usage_error("sql", "-f %s: cannot read it", path);
    text[len] = '\0';
    if (strlen(text) != len)
        tool_usage_error("sql", "-f %s: the query holds a NUL byte", path);
    return text;
}

/* A query that opens with an SQL comment ("-- ...") is not an option:
 * a leading space keeps it an operand and means the same to SQLite. */
void tool_sql_protect_comments(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--") == 0)
            return; /* the rest are operands anyway */
        if (s[0] == '-' && s[1] == '-' &&
            (s[2] == ' ' || s[2] == '\t' || s[2] == '\n' || s[2] == '\r' ||
             strchr(s, '\n'))) {
            char *copy = malloc(strlen(s) + 2);
            if (!copy)
                tool_usage_error("sql", "out of memory");
            copy[0] = ' ';
            strcpy(copy + 1, s);
            argv[i] = copy; /* lives until exit, as argv does */
        }
    }
}

