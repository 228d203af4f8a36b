/*
 * sqlite_records.c - the lct_records table: one row per record, from a
 * streamed reader for scans (one pass at read speed), or through the
 * file's row cache (sqlite_rows.c) when the query bounds idx, so rows far
 * into the file are reached without rendering or even decoding what
 * comes before them.  Constraints SQLite passes down only ever drop rows
 * it would drop itself (every one is checked again by SQLite), so a
 * bound that cannot be applied exactly is applied loosely or not at all.
 *
 * Long because SQLite's virtual-table interface is a dozen callbacks
 * sharing one cursor, and the constraint push-down is most of it.
 */
#include "sqlite/sqlite_internal.h"
#include "read/guard_internal.h"
#include "lct_sqlite.h"
SQLITE_EXTENSION_INIT3

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    R_IDX, R_OFFSET, R_T_MONO, R_T_WALL, R_QUALNAME, R_ARGS, R_ARGS_BYTES,
    R_FILE, R_OP, R_PATH
};


/* idxNum bits, in the order of xFilter's arguments. */
enum {
    P_PATH = 1 << 0,
    P_IDX_EQ = 1 << 1,
    P_IDX_LO = 1 << 2,
    P_IDX_HI = 1 << 3,
    P_QUALNAME = 1 << 4,
    P_MONO_LO = 1 << 5,
    P_MONO_HI = 1 << 6,
    P_WALL_LO = 1 << 7,
    P_WALL_HI = 1 << 8,
    P_COUNT = 9
};
/* Not a constraint: the query reads neither args nor args_bytes, so rows
 * can come from the file's row cache without reading the file again. */
#define P_NO_ARGS (1 << 12)
/* Not constraints: rows come grouped by qualname, the groups in the
 * order of their names (descending with P_DESCENDING), from the row
 * cache, which is what GROUP BY and ORDER BY qualname need: SQLite then
 * sorts nothing (its sort was most of such a query's time). */
#define P_BY_QUALNAME (1 << 13)
#define P_DESCENDING (1 << 14)

static const char *const plan_names[P_COUNT] = {
    "path=", "idx=", "idx>", "idx<", "qualname=",
    "t_mono>", "t_mono<", "t_wall>", "t_wall<"};

/* The row cache pays for itself once a query starts this far in. */
#define INDEX_WORTH 4096

/* What a query asks of the rows; bounds are inclusive and loose. */
typedef struct bounds {
    uint64_t idx_lo, idx_hi;
    char *qualname; /* NULL: any */
    size_t qualname_len;
    double mono_lo, mono_hi, wall_lo, wall_hi;
} bounds;

typedef struct records_cursor {
    sqlite3_vtab_cursor base;
    lct__sqlfile *one;     /* the table-valued function's file */
    int file;              /* which of the query's files is being read */
    bounds b;
    lct_reader *stream;    /* a scan's reader, or NULL: the row cache */
    lct__sqlfile *mapped;  /* the file whose mapping is held */
    int plan;
    bool cached;           /* rows from the row cache, args not read */
    uint64_t next;         /* index mode: the next record number */
    /* P_BY_QUALNAME: groups begun, and the place in the current one */
    uint32_t groups_begun;
    uint64_t pos, pos_end;
    uint64_t idx;
    lct_record rec;
    bool eof;
    lct__sqltext json;     /* the current row's args as JSON */
    bool json_ready;
} records_cursor;

static int plan_bit_for(int col, unsigned char op, bool rowid_is_idx,
                        bool binary)
{
    bool lo = op == SQLITE_INDEX_CONSTRAINT_GT ||
              op == SQLITE_INDEX_CONSTRAINT_GE;
    bool hi = op == SQLITE_INDEX_CONSTRAINT_LT ||
              op == SQLITE_INDEX_CONSTRAINT_LE;
    bool eq = op == SQLITE_INDEX_CONSTRAINT_EQ;
    if (col == R_PATH)
        return eq ? P_PATH : 0;
    if (col == R_IDX || (col == -1 && rowid_is_idx))
        return eq ? P_IDX_EQ : lo ? P_IDX_LO : hi ? P_IDX_HI : 0;
    if (col == R_QUALNAME)
        return eq && binary ? P_QUALNAME : 0;
    if (col == R_T_MONO)
        return lo ? P_MONO_LO : hi ? P_MONO_HI : eq ? P_MONO_LO : 0;
    if (col == R_T_WALL)
        return lo ? P_WALL_LO : hi ? P_WALL_HI : eq ? P_WALL_LO : 0;
    return 0;
}

static void plan_cost(sqlite3_index_info *info, int plan, int nfiles)
{
    double rows = 1e6;
    if (plan & P_IDX_EQ)
        rows = nfiles;
    else if ((plan & P_IDX_LO) && (plan & P_IDX_HI))
        rows = 1e3;
    else if (plan & (P_IDX_LO | P_IDX_HI))
        rows = 3e5;
    if (plan & P_QUALNAME)
        rows /= 10;
    if (plan & (P_MONO_LO | P_MONO_HI | P_WALL_LO | P_WALL_HI))
        rows /= 4;
    info->estimatedRows = (sqlite3_int64)(rows < 1 ? 1 : rows);
    info->estimatedCost = rows < 1 ? 1 : rows;
    if ((plan & P_IDX_EQ) && nfiles == 1)
        info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
}

static char *plan_string(int plan)
{
    char *s = sqlite3_mprintf("%s", "");
    for (int bit = 0; s && bit < P_COUNT; bit++)
        if (plan & (1 << bit)) {
            char *longer = sqlite3_mprintf("%s%s%s", s, *s ? " " : "",
                                           plan_names[bit]);
            sqlite3_free(s);
            s = longer;
        }
    if (s && (plan & (P_IDX_EQ | P_IDX_LO)))
        s = sqlite3_mprintf("%z (row cache when far in)", s);
    if (s && (plan & P_BY_QUALNAME))
        s = sqlite3_mprintf("%z%sgrouped by qualname%s from the row cache",
                            s, *s ? " " : "",
                            plan & P_DESCENDING ? " descending" : "");
    if (s && (plan & P_NO_ARGS) && (plan & P_BY_QUALNAME))
        s = sqlite3_mprintf("%z (args not read)", s);
    else if (s && (plan & P_NO_ARGS))
        s = sqlite3_mprintf("%z%s(args not read: from the row cache once "
                            "built)", s, *s ? " " : "");
    return s;
}

/* Whether rows in the order of the ORDER BY terms give the answer
 * SQLite's own plan gives.  Not for a DISTINCT without ORDER BY
 * (sqlite3_vtab_distinct 2): SQLite's answer then comes in the order
 * rows were first met, which sorted groups would change.  Asked only of
 * an SQLite that can answer (3.38). */
static bool sorted_suffices(sqlite3_index_info *info)
{
    return sqlite3_libversion_number() >= 3038000 &&
           sqlite3_vtab_distinct(info) != 2;
}

static int records_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
    lct__sqltab *tab = (lct__sqltab *)vtab;
    int nfiles = tab->fixed ? tab->nfiles : 1;
    int chosen[P_COUNT];
    int plan = 0;
    bool path_unusable = false;
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];
        const char *coll = sqlite3_vtab_collation(info, i);
        int bit = plan_bit_for(c->iColumn, c->op, nfiles == 1,
                               !coll || sqlite3_stricmp(coll, "BINARY") == 0);
        if (bit == P_PATH && tab->fixed)
            continue; /* the files are the table's; SQLite compares */
        if (bit == P_PATH && !c->usable)
            path_unusable = true;
        if (!bit || !c->usable || (plan & bit))
            continue;
        plan |= bit;
        chosen[__builtin_ctz((unsigned)bit)] = i;
    }
    if (path_unusable && !(plan & P_PATH))
        return SQLITE_CONSTRAINT;
    int argv_index = 1;
    for (int bit = 0; bit < P_COUNT; bit++)
        if (plan & (1 << bit)) {
            info->aConstraintUsage[chosen[bit]].argvIndex = argv_index++;
            /* The path is consumed; SQLite checks all else again. */
            info->aConstraintUsage[chosen[bit]].omit = (1 << bit) == P_PATH;
        }
    plan_cost(info, plan, nfiles);
    if (!tab->fixed && !(plan & P_PATH))
        info->estimatedCost = 1e300; /* no file: xFilter will say so */
    if (!(info->colUsed & ((1u << R_ARGS) | (1u << R_ARGS_BYTES))))
        plan |= P_NO_ARGS;
    int by = info->nOrderBy == 1 && nfiles == 1 ? info->aOrderBy[0].iColumn
                                                 : -2;
    if ((by == R_IDX || by == -1) && !info->aOrderBy[0].desc) {
        info->orderByConsumed = 1; /* rows come in record order */
    } else if (by == R_QUALNAME && sorted_suffices(info) &&
               ((plan & P_NO_ARGS) || lct__guard_installed())) {
        /* Grouped rows that read args read them from the mapping, out
         * of record order: only where a file cut meanwhile cannot kill
         * the process. */
        plan |= P_BY_QUALNAME | (info->aOrderBy[0].desc ? P_DESCENDING : 0);
        info->orderByConsumed = 1;
    }
    info->idxNum = plan;
    info->idxStr = plan_string(plan);
    info->needToFreeIdxStr = 1;
    return SQLITE_OK;
}

static int records_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
    (void)vtab;
    return lct__sqlcursor_new(sizeof(records_cursor), out);
}

/* Let go of the file being read. */
static void end_file(records_cursor *c)
{
    lct_close(c->stream);
    c->stream = NULL;
    if (c->mapped)
        c->mapped->users--;
    c->mapped = NULL;
}

static int records_close(sqlite3_vtab_cursor *cur)
{
    records_cursor *c = (records_cursor *)cur;
    end_file(c);
    sqlite3_free(c->b.qualname);
    lct__sqltext_free(&c->json);
    sqlite3_free(c);
    return SQLITE_OK;
}

static bool numeric(sqlite3_value *v)
{
    int t = sqlite3_value_type(v);
    return t == SQLITE_INTEGER || t == SQLITE_FLOAT;
}

/* A loose record-number bound: an integer as is, a real rounded outward
 * (SQLite keeps the exact comparison). */
static void idx_bound(sqlite3_value *v, int bit, bounds *b)
{
    if (!numeric(v))
        return;
    double d = sqlite3_value_double(v);
    int64_t i = sqlite3_value_int64(v);
    bool is_int = sqlite3_value_type(v) == SQLITE_INTEGER;
    if (bit == P_IDX_EQ || bit == P_IDX_LO) {
        double lo = is_int ? (double)i : floor(d);
        if (lo > 0)
            b->idx_lo = lo >= 1.8e19 ? UINT64_MAX
                        : is_int     ? (uint64_t)i
                                     : (uint64_t)lo;
    }
    if (bit == P_IDX_EQ || bit == P_IDX_HI) {
        double hi = is_int ? (double)i : ceil(d);
        uint64_t h = hi < 0          ? 0
                     : hi >= 1.8e19 ? UINT64_MAX
                     : is_int       ? (uint64_t)i
                                    : (uint64_t)hi;
        if (hi < 0)
            b->idx_lo = UINT64_MAX, h = 0; /* nothing */
        if (h < b->idx_hi)
            b->idx_hi = h;
    }
}

static int read_bounds(records_cursor *c, int plan, int argc,
                       sqlite3_value **argv, const char **path)
{
    bounds *b = &c->b;
    sqlite3_free(b->qualname);
    *b = (bounds){0, UINT64_MAX, NULL, 0, -INFINITY, INFINITY, -INFINITY,
                  INFINITY};
    *path = NULL;
    int arg = 0;
    for (int bit = 1; bit < (1 << P_COUNT) && arg < argc; bit <<= 1) {
        if (!(plan & bit))
            continue;
        sqlite3_value *v = argv[arg++];
        double d = numeric(v) ? sqlite3_value_double(v) : NAN;
        if (bit == P_PATH)
            *path = (const char *)sqlite3_value_text(v);
        else if (bit == P_IDX_EQ || bit == P_IDX_LO || bit == P_IDX_HI)
            idx_bound(v, bit, b);
        else if (bit == P_QUALNAME && sqlite3_value_type(v) == SQLITE_TEXT) {
            const void *text = sqlite3_value_text(v);
            b->qualname_len = (size_t)sqlite3_value_bytes(v);
            b->qualname = sqlite3_malloc64(b->qualname_len + 1);
            if (!b->qualname)
                return SQLITE_NOMEM;
            memcpy(b->qualname, text, b->qualname_len);
        } else if (isnan(d)) {
            continue; /* not a number: SQLite's comparison decides */
        } else if (bit == P_MONO_LO) {
            b->mono_lo = d; /* t_mono = x arrives here too: loose */
        } else if (bit == P_MONO_HI) {
            b->mono_hi = d;
        } else if (bit == P_WALL_LO) {
            b->wall_lo = d;
        } else if (bit == P_WALL_HI) {
            b->wall_hi = d;
        }
    }
    return SQLITE_OK;
}

static lct__sqlfile *query_file(records_cursor *c, int i)
{
    return lct__sqltab_query_file((lct__sqltab *)c->base.pVtab, c->one, i);
}

/* Begin reading file c->file: through its row cache when the query
 * starts far in (building it), or reads no args and the cache is there
 * already; else streamed.  A first scan streams: building the cache
 * costs more than one streamed pass, and pays only from the second
 * query on. */
static int start_file(records_cursor *c, lct__sqlfile *f)
{
    lct__sqltab *tab = (lct__sqltab *)c->base.pVtab;
    bool bounded = c->b.idx_lo > 0 || c->b.idx_hi < UINT64_MAX;
    bool no_args = (c->plan & P_NO_ARGS) != 0;
    /* Lookups by idx near the start stream, but a join makes one per row
     * of the other table: each from the start would be quadratic, so the
     * second bounded query of a file builds its cache. */
    bool far = bounded && (f->indexed || c->b.idx_lo >= INDEX_WORTH ||
                           f->bounded_queries >= 1);
    if (bounded)
        f->bounded_queries++;
    bool cache = no_args && f->indexed;
    bool grouped = (c->plan & P_BY_QUALNAME) != 0;
    c->cached = false;
    if (grouped || far || cache) {
        if (!lct__sqlfile_map(tab, f) ||
            !(grouped ? lct__sqlfile_order(tab, f)
                      : lct__sqlfile_index(tab, f)))
            return SQLITE_ERROR;
        f->users++;
        c->mapped = f;
        c->cached = no_args;
        c->next = c->b.idx_lo;
        c->groups_begun = 0;
        c->pos = c->pos_end = 0;
        return SQLITE_OK;
    }
    lct_error err;
    if (lct_open(f->path, lct__sqlfile_pass_flags(f), &c->stream, &err) !=
        LCT_OK) {
        lct__sqltab_error(tab, "%s", err.message);
        return SQLITE_ERROR;
    }
    lct_reader_set_log(c->stream, lct__sqlfile_log, f);
    c->next = 0;
    return SQLITE_OK;
}

/* What next_in_file found. */
enum { FILE_END = 0, FILE_ROW = 1 };

/* A row cache entry whose record no longer decodes (the file changed
 * under the mapping): the reader's warning, as a streamed scan gives it,
 * ends the file's rows, and the next query maps and indexes it again. */
static int cached_row_failed(lct__sqlfile *f, uint64_t offset, int rc,
                             const char *why)
{
    char message[LCT_ERROR_MESSAGE_SIZE];
    if (rc == LCT_ERR_CHANGED)
        snprintf(message, sizeof message,
                 "file shrank while reading: bytes from offset %llu are gone",
                 (unsigned long long)offset);
    else
        snprintf(message, sizeof message,
                 "skipping malformed record at offset %llu: %s",
                 (unsigned long long)offset,
                 rc == 0 && why ? why : "no whole frame there any more");
    lct__sqlfile_log(f, f->map,
                     rc == LCT_ERR_CHANGED ? LCT_WARN_SHRANK
                                           : LCT_WARN_MALFORMED,
                     offset, message);
    f->stale = true;
    return FILE_END;
}

/* Row n of the row cache as the current row: FILE_ROW, or FILE_END when
 * its record no longer decodes. */
static int row_at(records_cursor *c, lct__sqlfile *f, uint64_t n)
{
    const lct__sqlrow *row = &f->rows[n];
    if (c->cached) {
        c->rec = (lct_record){.offset = row->offset,
                              .t_mono = row->t_mono,
                              .t_wall = row->t_wall,
                              .qualname = f->qualnames[row->qualname]};
        c->idx = n;
        return FILE_ROW;
    }
    const char *why = NULL;
    int rc = lct_record_at(f->map, row->offset, &c->rec, &why);
    if (rc == 1) {
        c->idx = n;
        return FILE_ROW;
    }
    return cached_row_failed(f, row->offset, rc, why);
}

/* The next row grouped by qualname within the idx bounds. */
static int next_grouped(records_cursor *c, lct__sqlfile *f)
{
    for (;;) {
        while (c->pos == c->pos_end) {
            if (c->groups_begun == f->nqualnames)
                return FILE_END;
            uint32_t g = c->groups_begun++;
            if (c->plan & P_DESCENDING)
                g = f->nqualnames - 1 - g;
            c->pos = f->group_start[g];
            c->pos_end = f->group_start[g + 1];
        }
        uint64_t n = f->by_qualname[c->pos++];
        if (n >= c->b.idx_lo && n <= c->b.idx_hi)
            return row_at(c, f, n);
    }
}

/* The next record of the current file within the idx bounds: FILE_ROW,
 * FILE_END at the file's end (or where its cache stopped holding). */
static int next_in_file(records_cursor *c, lct__sqlfile *f)
{
    if (c->plan & P_BY_QUALNAME)
        return next_grouped(c, f);
    if (c->next > c->b.idx_hi)
        return FILE_END;
    if (c->stream) {
        for (;;) {
            int rc = lct_next(c->stream, &c->rec);
            if (rc != 1)
                return FILE_END; /* any damage went to the log */
            c->idx = c->next++;
            if (c->idx % LCT__SQL_PROGRESS_EVERY == 0) {
                lct_stats st;
                lct_reader_stats(c->stream, &st);
                lct__sqlfile_progress(f, c->stream, st.bytes_read);
            }
            if (c->idx >= c->b.idx_lo)
                return FILE_ROW;
            if (c->next > c->b.idx_hi)
                return FILE_END;
        }
    }
    if (c->next >= f->nrows)
        return FILE_END;
    return row_at(c, f, c->next++);
}

/* A cached row whose args SQLite asks for after all: read the record. */
static int load_args(records_cursor *c)
{
    if (!c->cached || c->rec.args.ptr)
        return SQLITE_OK;
    lct_record full;
    if (lct_record_at(c->mapped->map, c->rec.offset, &full, NULL) != 1) {
        c->mapped->stale = true; /* the next query reads it afresh */
        lct__sqltab_error((lct__sqltab *)c->base.pVtab,
                          "trace file '%s': the record at offset %llu no "
                          "longer decodes", c->mapped->path,
                          (unsigned long long)c->rec.offset);
        return SQLITE_ERROR;
    }
    c->rec = full;
    return SQLITE_OK;
}

static bool wanted(const records_cursor *c)
{
    const bounds *b = &c->b;
    const lct_record *r = &c->rec;
    if (b->qualname && (r->qualname.len != b->qualname_len ||
                        memcmp(r->qualname.ptr, b->qualname,
                               b->qualname_len) != 0))
        return false;
    return r->t_mono >= b->mono_lo && r->t_mono <= b->mono_hi &&
           r->t_wall >= b->wall_lo && r->t_wall <= b->wall_hi;
}

/* Move to the next wanted row, across the query's files. */
static int advance(records_cursor *c)
{
    c->json_ready = false;
    for (;;) {
        lct__sqlfile *f = query_file(c, c->file);
        if (!f) {
            c->eof = true;
            return SQLITE_OK;
        }
        if (next_in_file(c, f) == FILE_ROW) {
            if (wanted(c))
                return SQLITE_OK;
            continue;
        }
        end_file(c);
        f = query_file(c, ++c->file);
        int rc = f ? start_file(c, f) : SQLITE_OK;
        if (rc != SQLITE_OK)
            return rc;
    }
}

static int records_filter(sqlite3_vtab_cursor *cur, int plan,
                          const char *plan_str, int argc, sqlite3_value **argv)
{
    (void)plan_str;
    records_cursor *c = (records_cursor *)cur;
    lct__sqltab *tab = (lct__sqltab *)cur->pVtab;
    end_file(c);
    c->eof = false;
    c->file = 0;
    c->one = NULL;
    c->plan = plan;
    const char *path;
    int rc = read_bounds(c, plan, argc, argv, &path);
    if (rc != SQLITE_OK)
        return rc;
    if (!tab->fixed) {
        if (!path) {
            lct__sqltab_error(tab, "lct_records: name a file: "
                              "SELECT * FROM lct_records('run.lct')");
            return SQLITE_ERROR;
        }
        if (!(c->one = lct__sqltab_file(tab, path)))
            return SQLITE_ERROR;
    }
    lct__sqlfile *f = query_file(c, 0);
    if (!f || c->b.idx_lo > c->b.idx_hi) {
        c->eof = true;
        return SQLITE_OK;
    }
    rc = start_file(c, f);
    return rc == SQLITE_OK ? advance(c) : rc;
}

static int records_next(sqlite3_vtab_cursor *cur)
{
    return advance((records_cursor *)cur);
}

static int records_eof(sqlite3_vtab_cursor *cur)
{
    return ((records_cursor *)cur)->eof;
}

static int column_args(records_cursor *c, sqlite3_context *ctx)
{
    if (load_args(c) != SQLITE_OK)
        return SQLITE_ERROR;
    if (!c->json_ready) {
        lct_status st = lct__sqltext_json(&c->json, c->rec.args);
        if (st != LCT_OK) {
            /* Only under LCT_LAZY can args be unrenderable. */
            sqlite3_result_error(ctx, st == LCT_ERR_SYS
                                          ? "out of memory rendering args"
                                          : "args are not well-formed msgpack",
                                 -1);
            return SQLITE_ERROR;
        }
        c->json_ready = true;
    }
    sqlite3_result_text64(ctx, c->json.ptr ? c->json.ptr : "", c->json.len,
                          SQLITE_TRANSIENT, SQLITE_UTF8);
    return SQLITE_OK;
}

static int records_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                          int col)
{
    records_cursor *c = (records_cursor *)cur;
    const lct_record *r = &c->rec;
    size_t size;
    switch (col) {
    case R_IDX: sqlite3_result_int64(ctx, (sqlite3_int64)c->idx); break;
    case R_OFFSET: sqlite3_result_int64(ctx, (sqlite3_int64)r->offset); break;
    case R_T_MONO: sqlite3_result_double(ctx, r->t_mono); break;
    case R_T_WALL: sqlite3_result_double(ctx, r->t_wall); break;
    case R_QUALNAME: lct__sqlresult_str(ctx, r->qualname); break;
    case R_OP: /* the call's short name */
        lct__sqlresult_str(ctx, lct_str_after_last(r->qualname, '.'));
        break;
    case R_ARGS: return column_args(c, ctx);
    case R_ARGS_BYTES:
        if (load_args(c) != SQLITE_OK)
            return SQLITE_ERROR;
        if (lct_value_size(r->args, &size) != LCT_OK)
            size = r->args.len;
        sqlite3_result_int64(ctx, (sqlite3_int64)size);
        break;
    case R_FILE:
    case R_PATH:
        sqlite3_result_text(ctx, query_file(c, c->file)->path, -1,
                            SQLITE_TRANSIENT);
        break;
    default: sqlite3_result_null(ctx);
    }
    return SQLITE_OK;
}

static int records_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    records_cursor *c = (records_cursor *)cur;
    *rowid = (sqlite3_int64)(query_file(c, c->file)->rowid_base | c->idx);
    return SQLITE_OK;
}

const sqlite3_module lct__records_module = {
    .iVersion = 0,
    .xCreate = lct__records_connect, /* as connect: also eponymous */
    .xConnect = lct__records_connect,
    .xBestIndex = records_best_index,
    .xDisconnect = lct__records_disconnect,
    .xDestroy = lct__records_disconnect,
    .xOpen = records_open,
    .xClose = records_close,
    .xFilter = records_filter,
    .xNext = records_next,
    .xEof = records_eof,
    .xColumn = records_column,
    .xRowid = records_rowid,
};
