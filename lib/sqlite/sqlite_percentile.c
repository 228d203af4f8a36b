/*
 * sqlite_percentile.c - the SQL aggregates percentile(Y, P) and median(Y),
 * to the last digit as SQLite's ext/misc/percentile.c computes them, as
 * aggregates and as window functions.
 *
 * The rules: rows whose Y is NULL are left out; a Y of another type than
 * integer or real is an error (a text '3' too: Y's own type counts, not
 * its affinity), as is an infinite one.  P is a number from 0 to 100 (its
 * affinity counts), the same within 0.001 in every row (the first row's
 * counts).  The values, sorted, are read at index (P + 1 - 1) x (n - 1) x
 * 0.01, as the extension computes it (P / 100 x (n - 1) differs in the
 * last bit: the 7th percentile of 101 values would not land on the 8th
 * one), interpolated linearly between its two neighbours; NULL when no
 * row has a Y.  median(Y) is percentile(Y, 50) and says percentile() in
 * its errors, as there.
 *
 * An aggregate gathers its values in an array sorted once at the end.  A
 * window (SQLite calls xValue and xInverse) keeps them in an
 * order-statistic tree instead, a treap whose nodes count their
 * subtrees: the extension's sorted array costs a memmove a row, so a
 * frame that grows with the rows took time quadratic in them (3.7 s for
 * 300,000 rows); the tree costs O(log n) a row.  The answer depends only
 * on the two values at the ranks read, so both give the same digits.
 */
#include "sqlite/sqlite_internal.h"
SQLITE_EXTENSION_INIT3

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A tree node; index 0 is no node. */
typedef struct pct_node {
    double v;
    uint32_t left, right, size, prio;
} pct_node;

typedef struct percentile_acc {
    double *v;               /* the aggregate's values */
    sqlite3_int64 n, cap;
    double p_plus_1;         /* P + 1, as the extension keeps it; 0: none */
    bool tree;               /* a window: the values are in the tree */
    pct_node *node;          /* node[1..used]; freed ones chained by left */
    uint32_t node_cap, used, free_node, root;
    uint64_t rng;            /* the priorities' xorshift state */
} percentile_acc;

static bool is_infinite(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (u >> 52 & 0x7ff) == 0x7ff;
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* MARK: the order-statistic tree */

static inline uint32_t size_of(const percentile_acc *a, uint32_t t)
{
    return t ? a->node[t].size : 0;
}

static inline void resize(percentile_acc *a, uint32_t t)
{
    a->node[t].size =
        1 + size_of(a, a->node[t].left) + size_of(a, a->node[t].right);
}

/* A node for v, or 0 when memory ran out (or 2^32 - 2 of them). */
static uint32_t node_new(percentile_acc *a, double v)
{
    uint32_t t = a->free_node;
    if (t) {
        a->free_node = a->node[t].left;
    } else {
        if (a->used + 1 >= a->node_cap) {
            if (a->node_cap >= UINT32_MAX / 2)
                return 0;
            uint32_t cap = a->node_cap ? a->node_cap * 2 : 64;
            pct_node *grown = sqlite3_realloc64(
                a->node, (sqlite3_uint64)cap * sizeof *grown);
            if (!grown)
                return 0;
            a->node = grown;
            a->node_cap = cap;
        }
        t = ++a->used;
    }
    a->rng ^= a->rng << 13;
    a->rng ^= a->rng >> 7;
    a->rng ^= a->rng << 17;
    a->node[t] = (pct_node){v, 0, 0, 1, (uint32_t)(a->rng >> 32)};
    return t;
}

/* t's values below v into *lo, the others into *hi.  Recursion as deep
 * as the tree: about 3 ln n with priorities drawn at random (to_tree). */
static void split(percentile_acc *a, uint32_t t, double v, uint32_t *lo,
                  uint32_t *hi)
{
    if (!t) {
        *lo = *hi = 0;
    } else if (a->node[t].v < v) {
        split(a, a->node[t].right, v, &a->node[t].right, hi);
        *lo = t;
        resize(a, t);
    } else {
        split(a, a->node[t].left, v, lo, &a->node[t].left);
        *hi = t;
        resize(a, t);
    }
}

/* The tree of lo's values then hi's (every value in lo <= hi's). */
static uint32_t merge(percentile_acc *a, uint32_t lo, uint32_t hi)
{
    if (!lo || !hi)
        return lo ? lo : hi;
    if (a->node[lo].prio > a->node[hi].prio) {
        a->node[lo].right = merge(a, a->node[lo].right, hi);
        resize(a, lo);
        return lo;
    }
    a->node[hi].left = merge(a, lo, a->node[hi].left);
    resize(a, hi);
    return hi;
}

static bool tree_insert(percentile_acc *a, double v)
{
    uint32_t t = node_new(a, v), lo, hi;
    if (!t)
        return false;
    split(a, a->root, v, &lo, &hi);
    a->root = merge(a, merge(a, lo, t), hi);
    return true;
}

/* One value equal to v out of the tree under t (none: unchanged); the
 * subtree's new root. */
static uint32_t tree_erase(percentile_acc *a, uint32_t t, double v)
{
    if (!t)
        return 0;
    pct_node *n = &a->node[t];
    if (v < n->v) {
        n->left = tree_erase(a, n->left, v);
    } else if (v > n->v) {
        n->right = tree_erase(a, n->right, v);
    } else {
        uint32_t joined = merge(a, n->left, n->right);
        n->left = a->free_node; /* merge moves no node: n still holds */
        a->free_node = t;
        return joined;
    }
    resize(a, t);
    return t;
}

/* The value of rank k (from 0; k < the tree's size). */
static double tree_at(const percentile_acc *a, uint64_t k)
{
    uint32_t t = a->root;
    for (;;) {
        uint32_t left = size_of(a, a->node[t].left);
        if (k < left) {
            t = a->node[t].left;
        } else if (k == left) {
            return a->node[t].v;
        } else {
            k -= left + 1;
            t = a->node[t].right;
        }
    }
}

/* The aggregate's values into the tree, the first time SQLite treats it
 * as a window. */
static bool to_tree(sqlite3_context *ctx, percentile_acc *a)
{
    if (a->tree)
        return true;
    a->tree = true;
    /* Priorities a trace cannot predict: from a fixed seed, values laid
     * out in the order of their priorities would build a chain as deep
     * as the frame, and split and merge recurse that deep.  Nonzero, as
     * xorshift's state must be.  The answers do not depend on them. */
    a->rng = ((uint64_t)arc4random() << 32 | arc4random()) | 1;
    for (sqlite3_int64 i = 0; i < a->n; i++)
        if (!tree_insert(a, a->v[i])) {
            sqlite3_result_error_nomem(ctx);
            return false;
        }
    sqlite3_free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
    return true;
}

/* MARK: the aggregate */

/* y into the values: the tree's, or the array's (doubled as needed);
 * out of memory is the statement's error. */
static void add_value(sqlite3_context *ctx, percentile_acc *a, double y)
{
    if (a->tree) {
        if (!tree_insert(a, y))
            sqlite3_result_error_nomem(ctx);
        return;
    }
    if (a->n == a->cap) {
        sqlite3_int64 cap = a->cap ? a->cap * 2 : 64;
        double *grown = sqlite3_realloc64(a->v, (sqlite3_uint64)cap *
                                                    sizeof *grown);
        if (!grown) {
            sqlite3_result_error_nomem(ctx);
            return;
        }
        a->v = grown;
        a->cap = cap;
    }
    a->v[a->n++] = y;
}

static void percentile_step(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv)
{
    double p = 50;
    if (argc == 2) {
        int type = sqlite3_value_numeric_type(argv[1]);
        p = sqlite3_value_double(argv[1]);
        if ((type != SQLITE_INTEGER && type != SQLITE_FLOAT) || p < 0 ||
            p > 100) {
            sqlite3_result_error(ctx, "2nd argument to percentile() is not "
                                 "a number between 0.0 and 100.0", -1);
            return;
        }
    }
    percentile_acc *a = sqlite3_aggregate_context(ctx, sizeof *a);
    if (!a)
        return;
    double d = a->p_plus_1 - (p + 1);
    if (a->p_plus_1 == 0) {
        a->p_plus_1 = p + 1;
    } else if (!(d >= -0.001 && d <= 0.001)) {
        sqlite3_result_error(ctx, "2nd argument to percentile() is not the "
                             "same for all input rows", -1);
        return;
    }
    int type = sqlite3_value_type(argv[0]);
    if (type == SQLITE_NULL)
        return;
    if (type != SQLITE_INTEGER && type != SQLITE_FLOAT) {
        sqlite3_result_error(ctx, "1st argument to percentile() is not "
                             "numeric", -1);
        return;
    }
    double y = sqlite3_value_double(argv[0]);
    if (is_infinite(y)) {
        sqlite3_result_error(ctx, "Inf input to percentile()", -1);
        return;
    }
    add_value(ctx, a, y);
}

/* A row leaving a window: its Y out of the values (the rows that step
 * refused never came in). */
static void percentile_inverse(sqlite3_context *ctx, int argc,
                               sqlite3_value **argv)
{
    (void)argc;
    percentile_acc *a = sqlite3_aggregate_context(ctx, sizeof *a);
    int type = sqlite3_value_type(argv[0]);
    if (!a || (type != SQLITE_INTEGER && type != SQLITE_FLOAT))
        return;
    double y = sqlite3_value_double(argv[0]);
    if (!is_infinite(y) && to_tree(ctx, a))
        a->root = tree_erase(a, a->root, y);
}

/* The result over the values so far; the last call frees them. */
static void percentile_result(sqlite3_context *ctx, bool last)
{
    percentile_acc *a = sqlite3_aggregate_context(ctx, 0);
    if (!a)
        return;
    uint64_t n = a->tree ? size_of(a, a->root) : (uint64_t)a->n;
    if (n > 0) {
        if (!a->tree)
            qsort(a->v, (size_t)n, sizeof *a->v, by_value);
        double ix = (a->p_plus_1 - 1.0) * (double)(n - 1) * 0.01;
        uint64_t i1 = (uint64_t)ix;
        uint64_t i2 = ix == (double)i1 || i1 == n - 1 ? i1 : i1 + 1;
        double v1 = a->tree ? tree_at(a, i1) : a->v[i1];
        double v2 = a->tree ? tree_at(a, i2) : a->v[i2];
        sqlite3_result_double(ctx, v1 + (v2 - v1) * (ix - (double)i1));
    }
    if (last) {
        sqlite3_free(a->v);
        sqlite3_free(a->node);
        memset(a, 0, sizeof *a);
    }
}

static void percentile_final(sqlite3_context *ctx)
{
    percentile_result(ctx, true);
}

/* A window's current value: from here on the values are kept in the
 * tree. */
static void percentile_value(sqlite3_context *ctx)
{
    percentile_acc *a = sqlite3_aggregate_context(ctx, 0);
    if (a && !to_tree(ctx, a))
        return;
    percentile_result(ctx, false);
}

int lct__sqlite_percentile(sqlite3 *db)
{
    int rc = sqlite3_create_window_function(
        db, "percentile", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
        percentile_step, percentile_final, percentile_value,
        percentile_inverse, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_window_function(
            db, "median", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
            percentile_step, percentile_final, percentile_value,
            percentile_inverse, NULL);
    return rc;
}
