/*
 * count.c - records per qualname, the smallest useful liblct program.
 *
 *     cc count.c -o count $(pkg-config --static --cflags --libs lct)
 *     ./count trace.lct
 *
 * Qualnames are kept in a red-black tree (libbsd's <bsd/sys/tree.h>) keyed by
 * the view itself: views stay valid until lct_close, so nothing is copied.
 */
/* Ask libbsd for the NetBSD strnvis() prototype; we only use strvisx(). */
#ifndef LIBBSD_NETBSD_VIS
#define LIBBSD_NETBSD_VIS
#endif
#include <lct.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bsd/sys/tree.h>
#include <bsd/vis.h>

struct entry {
    RB_ENTRY(entry) link;
    lct_str qualname;
    unsigned long long count;
};

static int entry_cmp(struct entry *a, struct entry *b)
{
    return lct_str_cmp(a->qualname, b->qualname);
}

RB_HEAD(entries, entry);
RB_PROTOTYPE(entries, entry, link, entry_cmp);
RB_GENERATE(entries, entry, link, entry_cmp)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TRACE.lct\n", argv[0]);
        return 2;
    }
    lct_reader *r;
    lct_error err;
    if (lct_open(argv[1], 0, &r, &err) != LCT_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }

    struct entries tree = RB_INITIALIZER(&tree);
    lct_record rec;
    while (lct_next(r, &rec) == 1) {
        struct entry key = {.qualname = rec.qualname};
        struct entry *e = RB_FIND(entries, &tree, &key);
        if (!e) {
            e = calloc(1, sizeof *e);
            if (!e) {
                fprintf(stderr, "out of memory\n");
                return 1;
            }
            e->qualname = rec.qualname;
            RB_INSERT(entries, &tree, e);
        }
        e->count++;
    }

    lct_stats st;
    lct_reader_stats(r, &st);
    struct entry *e, *next;
    RB_FOREACH_SAFE(e, entries, &tree, next) {
        /* Qualnames come from the file: escape what a terminal would obey. */
        char *shown = malloc(4 * e->qualname.len + 1);
        if (!shown) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        strvisx(shown, e->qualname.ptr, e->qualname.len,
                VIS_CSTYLE | VIS_TAB | VIS_NL | VIS_OCTAL);
        printf("%10llu  %s\n", e->count, shown);
        free(shown);
        RB_REMOVE(entries, &tree, e);
        free(e);
    }
    printf("%10llu  records (%llu skipped%s)\n",
           (unsigned long long)st.records, (unsigned long long)st.skipped,
           st.truncated ? ", truncated tail" : "");
    lct_close(r);
    return 0;
}
