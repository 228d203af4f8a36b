/*
 * backend_redis.c - "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]" through
 * hiredis: one blocking connection per worker, opened at the start (so an
 * unreachable server fails the run at once, naming the address), commands
 * one at a time or pipelined, and every failure turned into an lct_error
 * that names the server and says what hiredis said.
 *
 * Long because the connections, their pipeline windows and the clean-up
 * at open share the connection state and its error words.
 */
#include <errno.h>
#include <inttypes.h>
#include <hiredis/hiredis.h>
#include <hiredis/sds.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock_internal.h"
#include "base/digits_internal.h"
#include "base/error_internal.h"
#include "lct_redis.h"

typedef struct redis_conn {
    redisContext *c;
    time_t last_retry;
    int lost_errno; /* why it failed, for the commands sent after */
} redis_conn;

typedef struct redis_store {
    char host[256];
    int port;
    char user[128], password[256]; /* AUTH's, when the URI gives them */
    bool auth;
    long db; /* SELECTed on every connection when not 0 */
    struct timeval timeout;
    unsigned nconn, per_worker;
    unsigned window; /* commands a connection has outstanding */
    redis_conn conn[];
} redis_store;

/* "//[[USER]:PASSWORD@]HOST[:PORT][/DB]": the userinfo up to the last
 * '@' (a password may hold '@' and ':'; taken as written, not
 * percent-decoded), the database a decimal number. */
static bool parse_address(const char *arg, redis_store *r)
{
    if (strncmp(arg, "//", 2) == 0)
        arg += 2;
    const char *at = strrchr(arg, '@');
    if (at) {
        const char *colon = memchr(arg, ':', (size_t)(at - arg));
        size_t ulen = colon ? (size_t)(colon - arg) : 0;
        const char *pw = colon ? colon + 1 : arg;
        size_t plen = (size_t)(at - pw);
        if (ulen >= sizeof r->user || plen == 0 ||
            plen >= sizeof r->password)
            return false;
        memcpy(r->user, arg, ulen);
        r->user[ulen] = '\0';
        memcpy(r->password, pw, plen);
        r->password[plen] = '\0';
        r->auth = true;
        arg = at + 1;
    }
    const char *slash = strchr(arg, '/');
    size_t addrlen = slash ? (size_t)(slash - arg) : strlen(arg);
    r->db = 0;
    if (slash) {
        char *end;
        errno = 0;
        r->db = strtol(slash + 1, &end, 10);
        if (end == slash + 1 || *end || errno || r->db < 0 ||
            r->db > 1000000 || slash[1] == '-' || slash[1] == '+')
            return false;
    }
    const char *colon = NULL;
    for (size_t i = addrlen; i-- > 0 && !colon;)
        if (arg[i] == ':')
            colon = arg + i;
    size_t hostlen = colon ? (size_t)(colon - arg) : addrlen;
    if (hostlen == 0 || hostlen >= sizeof r->host)
        return false;
    memcpy(r->host, arg, hostlen);
    r->host[hostlen] = '\0';
    r->port = 6379;
    if (colon) {
        char port[8];
        size_t plen = addrlen - hostlen - 1;
        if (plen == 0 || plen >= sizeof port)
            return false;
        memcpy(port, colon + 1, plen);
        port[plen] = '\0';
        char *end;
        long v = strtol(port, &end, 10);
        if (*end || v < 1 || v > 65535 || port[0] == '-' || port[0] == '+')
            return false;
        r->port = (int)v;
    }
    return true;
}

/* The status and message for a context that failed. */
static lct_status conn_fail(const redis_store *r, const redisContext *c,
                            int saved_errno, const char *doing,
                            lct_error *err)
{
    int e = 0;
    if (!c || c->err == REDIS_ERR_IO)
        e = saved_errno ? saved_errno : EIO;
    else if (c->err == REDIS_ERR_EOF)
        e = ECONNRESET;
#ifdef REDIS_ERR_TIMEOUT
    else if (c->err == REDIS_ERR_TIMEOUT)
        e = ETIMEDOUT;
#endif
    /* a blocking read past its timeout fails with EAGAIN */
    if (e == EAGAIN || e == EWOULDBLOCK) {
        e = ETIMEDOUT;
        return lct__fail(err, LCT_ERR_SYS, e, 0,
                         "redis://%s:%d: %s: no answer within --timeout "
                         "(%.1f s)",
                         r->host, r->port, doing,
                         (double)r->timeout.tv_sec +
                             (double)r->timeout.tv_usec / 1e6);
    }
    const char *why = c && c->errstr[0] ? c->errstr : strerror(e ? e : EIO);
    return lct__fail(err, e ? LCT_ERR_SYS : LCT_ERR_BACKEND, e, 0,
                     "redis://%s:%d: %s: %s", r->host, r->port, doing, why);
}

/* A reply to a set-up command: LCT_OK when it is the status wanted,
 * else the message (the password is never in it). */
static lct_status expect_status(const redis_store *r, redisContext *c,
                                redisReply *reply, const char *doing,
                                const char *want, lct_error *err)
{
    lct_status st = LCT_OK;
    if (!reply) {
        st = c->err == REDIS_ERR_PROTOCOL
                 ? lct__fail(err, LCT_ERR_BACKEND, 0, 0,
                             "redis://%s:%d: %s: %s: is this a redis "
                             "server?",
                             r->host, r->port, doing, c->errstr)
                 : conn_fail(r, c, errno, doing, err);
    } else if (reply->type == REDIS_REPLY_ERROR &&
               strncmp(reply->str, "NOAUTH", 6) == 0) {
        st = lct__fail(err, LCT_ERR_BACKEND, 0, 0,
                       "redis://%s:%d: the server wants a password: give "
                       "redis://:PASSWORD@HOST:PORT (or USER:PASSWORD@ for "
                       "an ACL user)",
                       r->host, r->port);
    } else if (reply->type == REDIS_REPLY_ERROR) {
        st = lct__fail(err, LCT_ERR_BACKEND, 0, 0, "redis://%s:%d: %s: %.200s",
                       r->host, r->port, doing, reply->str);
    } else if (reply->type != REDIS_REPLY_STATUS ||
               strcmp(reply->str, want) != 0) {
        st = lct__fail(err, LCT_ERR_BACKEND, 0, 0,
                       "redis://%s:%d: %s: not the +%s redis answers: is "
                       "this a redis server?",
                       r->host, r->port, doing, want);
    }
    if (reply)
        freeReplyObject(reply);
    return st;
}

/* AUTH and SELECT as the URI asks, then PING: a server that is not redis
 * (or wants a password) is told apart from one that is, at the start. */
static lct_status set_up(const redis_store *r, redisContext *c,
                         lct_error *err)
{
    lct_status st = LCT_OK;
    if (r->auth)
        st = expect_status(r, c,
                           r->user[0] ? redisCommand(c, "AUTH %s %s", r->user,
                                                     r->password)
                                      : redisCommand(c, "AUTH %s",
                                                     r->password),
                           "AUTH", "OK", err);
    if (st == LCT_OK && r->db) {
        char doing[32];
        snprintf(doing, sizeof doing, "SELECT %ld", r->db);
        st = expect_status(r, c, redisCommand(c, "SELECT %ld", r->db), doing,
                           "OK", err);
    }
    if (st == LCT_OK)
        st = expect_status(r, c, redisCommand(c, "PING"), "PING", "PONG",
                           err);
    return st;
}

static lct_status connect_one(redis_store *r, redis_conn *k, lct_error *err)
{
    errno = 0;
    redisContext *c = redisConnectWithTimeout(r->host, r->port, r->timeout);
    int saved = errno;
    if (!c || c->err) {
        lct_status st = conn_fail(r, c, saved, "cannot connect", err);
        if (c)
            redisFree(c);
        return st;
    }
    redisSetTimeout(c, r->timeout);
    lct_status st = set_up(r, c, err);
    if (st != LCT_OK) {
        redisFree(c);
        return st;
    }
    k->c = c;
    return LCT_OK;
}

/* The keys SCAN may return a page: redis walks at least COUNT buckets a
 * page (up to 10 x COUNT empty ones), so a database of N keys is done in
 * well under 16 N / COUNT + 1024 pages; past that the cursor is not
 * coming back to 0 (a broken or hostile server) and the clean-up stops
 * rather than loop for ever. */
#define SCAN_COUNT 1000

/* What DBSIZE says the database holds. */
static lct_status db_size(redis_store *r, long long *size, lct_error *err)
{
    redisContext *c = r->conn[0].c;
    redisReply *n = redisCommand(c, "DBSIZE");
    if (!n)
        return conn_fail(r, c, errno, "DBSIZE", err);
    *size = n->type == REDIS_REPLY_INTEGER ? n->integer : -1;
    lct_status st = LCT_OK;
    if (*size < 0)
        st = lct__fail(err, LCT_ERR_BACKEND, 0, 0,
                       "redis://%s:%d: DBSIZE: %s: is this a redis server?",
                       r->host, r->port,
                       n->type == REDIS_REPLY_ERROR ? n->str : "not a count");
    freeReplyObject(n);
    return st;
}

/* UNLINK a SCAN page's keys (pipelined). */
static lct_status unlink_page(redis_store *r, const redisReply *keys,
                              lct_error *err)
{
    redisContext *c = r->conn[0].c;
    for (size_t i = 0; i < keys->elements; i++)
        redisAppendCommand(c, "UNLINK %b", keys->element[i]->str,
                           keys->element[i]->len);
    for (size_t i = 0; i < keys->elements; i++) {
        redisReply *done = NULL;
        if (redisGetReply(c, (void **)&done) != REDIS_OK)
            return conn_fail(r, c, errno, "UNLINK", err);
        freeReplyObject(done);
    }
    return LCT_OK;
}

static bool is_page(const redisReply *page)
{
    if (!page || page->type != REDIS_REPLY_ARRAY || page->elements != 2 ||
        page->element[0]->type != REDIS_REPLY_STRING ||
        page->element[1]->type != REDIS_REPLY_ARRAY)
        return false;
    for (size_t i = 0; i < page->element[1]->elements; i++)
        if (page->element[1]->element[i]->type != REDIS_REPLY_STRING)
            return false;
    return true;
}

/* Remove the lct:* keys an earlier run left (SCAN, then UNLINK a page at
 * a time), so hit ratios are this run's; other keys are not touched.
 * Bounded in pages, and given up when *stop is set: either way the error
 * says how many were removed and that the rest are left. */
static lct_status clear_keys(redis_store *r, const volatile int *stop,
                             lct_error *err)
{
    redisContext *c = r->conn[0].c;
    long long size = 0;
    lct_status st = db_size(r, &size, err);
    if (st != LCT_OK)
        return st;
    uint64_t max_pages = 1024 + 16 * (uint64_t)size / SCAN_COUNT;
    uint64_t removed = 0, pages = 0;
    char cursor[32] = "0";
    do {
        if (stop && *stop)
            return lct__fail(err, LCT_ERR_BACKEND, EINTR, 0,
                             "redis://%s:%d: interrupted while removing an "
                             "earlier run's lct:* keys (%" PRIu64 " removed, "
                             "the rest left; --keep skips this)",
                             r->host, r->port, removed);
        if (pages++ == max_pages)
            return lct__fail(err, LCT_ERR_BACKEND, 0, 0,
                             "redis://%s:%d: SCAN's cursor did not come back "
                             "to 0 in %" PRIu64 " pages for %lld keys: is "
                             "this a redis server? (%" PRIu64 " lct:* keys "
                             "removed, any others left; --keep skips this)",
                             r->host, r->port, max_pages, size, removed);
        redisReply *page = redisCommand(c, "SCAN %s MATCH lct:* COUNT %d",
                                        cursor, SCAN_COUNT);
        if (!is_page(page)) {
            st = page && page->type == REDIS_REPLY_ERROR
                                ? lct__fail(err, LCT_ERR_BACKEND, 0, 0,
                                            "redis://%s:%d: SCAN: %s",
                                            r->host, r->port, page->str)
                            : page ? lct__fail(err, LCT_ERR_BACKEND, 0, 0,
                                               "redis://%s:%d: SCAN: not a "
                                               "cursor and a page of keys: "
                                               "is this a redis server?",
                                               r->host, r->port)
                                   : conn_fail(r, c, errno, "SCAN", err);
            if (page)
                freeReplyObject(page);
            return st;
        }
        snprintf(cursor, sizeof cursor, "%s", page->element[0]->str);
        st = unlink_page(r, page->element[1], err);
        removed += page->element[1]->elements;
        freeReplyObject(page);
        if (st != LCT_OK)
            return st;
    } while (strcmp(cursor, "0") != 0);
    return LCT_OK;
}

static void redis_close(void *state)
{
    redis_store *r = state;
    if (!r)
        return;
    for (unsigned i = 0; i < r->nconn; i++)
        if (r->conn[i].c)
            redisFree(r->conn[i].c);
    free(r);
}

static lct_status redis_open(const char *arg, const lct_backend_config *cfg,
                             void **state, lct_error *err)
{
    unsigned per = cfg && cfg->redis.connections ? cfg->redis.connections : 1;
    if (per > LCT_REDIS_MAX_CONNECTIONS)
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "redis: %u connections a worker, at most %d", per,
                         LCT_REDIS_MAX_CONNECTIONS);
    unsigned n = (cfg && cfg->workers ? cfg->workers : 1) * per;
    redis_store *r = calloc(1, sizeof *r + n * sizeof r->conn[0]);
    if (!r)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    if (!arg || !parse_address(arg, r)) {
        free(r);
        bool secret = arg && strchr(arg, '@');
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "redis URI wants redis://[[USER]:PASSWORD@]HOST"
                         "[:PORT][/DB], got %s%s%s",
                         secret ? "one that does not parse (not shown: it "
                                  "may hold a password)"
                                : "'redis:",
                         secret ? "" : arg ? arg : "", secret ? "" : "'");
    }
    double t = cfg && cfg->timeout > 0 ? cfg->timeout : 2.0;
    r->timeout.tv_sec = (time_t)t;
    r->timeout.tv_usec = (suseconds_t)((t - (double)(time_t)t) * 1e6);
    r->nconn = n;
    r->per_worker = per;
    r->window = cfg && cfg->redis.pipeline ? cfg->redis.pipeline : 1;
    for (unsigned i = 0; i < n; i++) {
        lct_status st = connect_one(r, &r->conn[i], err);
        if (st != LCT_OK) {
            redis_close(r);
            return st;
        }
    }
    const volatile int *stop = cfg ? cfg->stop : NULL;
    lct_status st = cfg && cfg->keep ? LCT_OK : clear_keys(r, stop, err);
    if (st != LCT_OK) {
        redis_close(r);
        return st;
    }
    *state = r;
    return LCT_OK;
}

/* Replies are read into the operation they answer, without a reply
 * object: hiredis's reader calls these with the operation as its
 * privdata, and what they return is only a token (no malloc and free per
 * reply, and a GET's value is copied once, into the load's buffer). */
typedef struct reply_into {
    const redis_store *r;
    lct_backend_op *op;
} reply_into;

static char reply_token;

static void *reply_string(const redisReadTask *t, char *s, size_t len)
{
    reply_into *into = t->privdata;
    lct_backend_op *op = into ? into->op : NULL;
    if (!op || t->parent)
        return &reply_token;
    if (t->type == REDIS_REPLY_ERROR) {
        op->status = lct__fail(&op->err, LCT_ERR_BACKEND, 0, 0,
                               "redis://%s:%d: %s: %.*s", into->r->host,
                               into->r->port, lct_replay_kind_name(op->kind),
                               (int)(len > 200 ? 200 : len), s);
    } else if (t->type == REDIS_REPLY_STRING && op->kind == LCT_REPLAY_LOAD) {
        op->present = true;
        op->len = len < op->cap ? len : op->cap;
        if (op->len)
            memcpy(op->buf, s, op->len);
    }
    return &reply_token;
}

static void *reply_array(const redisReadTask *t, int n)
{
    (void)t, (void)n;
    return &reply_token;
}

static void *reply_integer(const redisReadTask *t, long long v)
{
    reply_into *into = t->privdata;
    if (into && into->op && !t->parent &&
        into->op->kind == LCT_REPLAY_LOOKUP)
        into->op->present = v > 0;
    return &reply_token;
}

static void *reply_nil(const redisReadTask *t)
{
    (void)t; /* present stays false */
    return &reply_token;
}

static void reply_free(void *obj) { (void)obj; }

static redisReplyObjectFunctions reply_functions = {
    reply_string, reply_array, reply_integer, reply_nil, reply_free};

/* The worker's connection for a key: a key always takes the same one, so
 * its commands stay in order. */
static unsigned conn_slot(const redis_store *r, unsigned worker, uint64_t id)
{
    return (worker * r->per_worker + (unsigned)(id % r->per_worker)) %
           r->nconn;
}

/* Connection k's context, reconnected (at most once a second) when lost;
 * NULL after filling err. */
static redisContext *conn_get(redis_store *r, redis_conn *k, lct_error *err)
{
    if (k->c && !k->c->err)
        return k->c;
    time_t now = time(NULL);
    if (now == k->last_retry) {
        if (k->c)
            conn_fail(r, k->c, k->lost_errno, "connection lost", err);
        else
            lct__fail(err, LCT_ERR_SYS, ECONNREFUSED, 0,
                      "redis://%s:%d: not connected (tried again this "
                      "second)", r->host, r->port);
        return NULL;
    }
    k->last_retry = now;
    if (k->c) {
        redisFree(k->c);
        k->c = NULL;
    }
    if (connect_one(r, k, err) != LCT_OK)
        return NULL;
    k->lost_errno = 0;
    return k->c;
}

/* Write n's decimal digits at p; their count. */
static size_t put_decimal(char *p, size_t n)
{
    char digits[24], *end = digits + sizeof digits;
    char *d = lct__u64_digits(n, end);
    memcpy(p, d, (size_t)(end - d));
    return (size_t)(end - d);
}

/* The command for op in RESP, written straight onto the end of c's output
 * buffer (an sds string hiredis exports): the value is copied once, where
 * redisAppendCommandArgv formats a command of its own and copies that
 * again, allocating for each. */
static int append(redisContext *c, const lct_backend_op *op)
{
    static const char *const verbs[] = {"*3\r\n$3\r\nSET\r\n",
                                        "*2\r\n$6\r\nEXISTS\r\n",
                                        "*2\r\n$3\r\nGET\r\n",
                                        "*2\r\n$3\r\nDEL\r\n"};
    bool store = op->kind == LCT_REPLAY_STORE;
    const char *verb = verbs[op->kind < LCT_REPLAY_KINDS ? op->kind : 3];
    char head[96];
    size_t n = strlen(verb);
    memcpy(head, verb, n);
    memcpy(head + n, "$20\r\nlct:", 9);
    memcpy(head + n + 9, op->key.name, 16);
    memcpy(head + n + 25, "\r\n", 2);
    n += 27;
    if (store) {
        head[n++] = '$';
        n += put_decimal(head + n, op->len);
        memcpy(head + n, "\r\n", 2);
        n += 2;
    }
    size_t total = n + (store ? op->len + 2 : 0);
    sds out = sdsMakeRoomFor(c->obuf, total);
    if (!out)
        return REDIS_ERR;
    char *end = out + sdslen(out);
    memcpy(end, head, n);
    if (store) {
        if (op->len)
            memcpy(end + n, op->buf, op->len);
        memcpy(end + n + op->len, "\r\n", 2);
    }
    sdsIncrLen(out, (int)total);
    c->obuf = out;
    return REDIS_OK;
}

/* Write out what was appended to c; a failure shows in c->err. */
static void flush(redisContext *c)
{
    int done = 0;
    while (!done && redisBufferWrite(c, &done) == REDIS_OK)
        ;
}

/* One connection's share of a pipeline: its operations in order, linked
 * through `next`, with a cursor for the next to send and one for the next
 * to answer (replies come back in the order commands went out). */
typedef struct conn_queue {
    size_t send, read, tail; /* operation indices; NONE: none */
    unsigned outstanding;
    redisContext *c; /* what the outstanding ones went out on */
    redis_conn *conn;
} conn_queue;

#define NONE SIZE_MAX

/* Every operation on q still outstanding fails with the connection's
 * error; the context is marked failed, so its late replies are never
 * taken for later commands' (the next send reconnects). */
static void fail_outstanding(redis_store *r, conn_queue *q,
                             lct_backend_op *ops, const size_t *next,
                             int saved_errno, const char *doing)
{
    q->conn->lost_errno = saved_errno;
    if (!q->c->err) {
        q->c->err = REDIS_ERR_IO;
        snprintf(q->c->errstr, sizeof q->c->errstr, "%s",
                 strerror(saved_errno));
        errno = saved_errno;
    }
    uint64_t now = lct__now_ns();
    for (; q->outstanding; q->read = next[q->read]) {
        lct_backend_op *op = &ops[q->read];
        if (op->status != LCT_OK)
            continue; /* failed before it was sent */
        op->status = conn_fail(r, q->c, saved_errno, doing, &op->err);
        op->done_ns = now;
        q->outstanding--;
    }
}

/* Send q's next operations, up to the window: the first ones on a
 * connection that cannot be had fail at once. */
static void send_more(redis_store *r, conn_queue *q, lct_backend_op *ops,
                      const size_t *next)
{
    if (q->send == NONE || q->outstanding > r->window / 2)
        return;
    lct_error err;
    redisContext *c = conn_get(r, q->conn, &err);
    if (c) /* replies read into their operations (above) */
        c->reader->fn = &reply_functions;
    uint64_t now = lct__now_ns();
    size_t appended = 0;
    for (; q->send != NONE && q->outstanding < r->window;
         q->send = next[q->send]) {
        lct_backend_op *op = &ops[q->send];
        op->sent_ns = now; /* written out below, together */
        errno = 0;
        if (c && append(c, op) != REDIS_OK) {
            conn_fail(r, c, errno, "sending", &err);
            c = NULL;
        }
        if (!c) {
            op->status = err.code;
            op->err = err;
            op->done_ns = now;
            continue;
        }
        if (q->outstanding++ == 0)
            q->read = q->send;
        q->c = c;
        appended++;
    }
    if (appended)
        flush(c);
}

/* Take the replies c's reader has whole, each into the operation it
 * answers, in order. */
static void take_replies(redis_store *r, conn_queue *q, lct_backend_op *ops,
                         const size_t *next)
{
    while (q->outstanding) {
        lct_backend_op *op = &ops[q->read];
        reply_into into = {r, op};
        void *reply = NULL;
        q->c->reader->privdata = &into;
        int rc = redisReaderGetReply(q->c->reader, &reply);
        q->c->reader->privdata = NULL;
        if (rc != REDIS_OK) {
            fail_outstanding(r, q, ops, next, EPROTO, "reading a reply");
            return;
        }
        if (!reply)
            return;
        op->done_ns = lct__now_ns();
        q->outstanding--;
        do
            q->read = next[q->read];
        while (q->outstanding && ops[q->read].status != LCT_OK);
    }
}

static int timeout_ms(const redis_store *r)
{
    return (int)(r->timeout.tv_sec * 1000 + r->timeout.tv_usec / 1000);
}

/* As redis-benchmark keeps its connections busy: each of the worker's
 * connections has up to `pipeline` commands outstanding, and is sent more
 * as soon as half of its own have answered, whatever the others do;
 * replies are read from whichever connection has them (poll), so one
 * slow connection does not hold the rest back.  A key's commands all go
 * on one connection, so they stay in order. */
static void redis_pipeline(void *state, unsigned worker, lct_backend_op *ops,
                           size_t n)
{
    redis_store *r = state;
    size_t next[n ? n : 1];
    conn_queue q[LCT_REDIS_MAX_CONNECTIONS];
    unsigned base = conn_slot(r, worker, 0);
    for (unsigned k = 0; k < r->per_worker; k++)
        q[k] = (conn_queue){NONE, NONE, NONE, 0, NULL, &r->conn[base + k]};
    for (size_t i = 0; i < n; i++) {
        conn_queue *k = &q[conn_slot(r, worker, ops[i].key.id) - base];
        ops[i].status = LCT_OK;
        ops[i].present = false;
        if (ops[i].kind == LCT_REPLAY_LOAD)
            ops[i].len = 0;
        next[i] = NONE;
        if (k->tail == NONE)
            k->send = i;
        else
            next[k->tail] = i;
        k->tail = i;
    }
    for (;;) {
        struct pollfd fds[LCT_REDIS_MAX_CONNECTIONS];
        unsigned waiting[LCT_REDIS_MAX_CONNECTIONS], nfds = 0;
        for (unsigned k = 0; k < r->per_worker; k++) {
            send_more(r, &q[k], ops, next);
            if (q[k].outstanding && q[k].c->err)
                fail_outstanding(r, &q[k], ops, next, errno, "sending");
            else if (q[k].outstanding) {
                fds[nfds] = (struct pollfd){q[k].c->fd, POLLIN, 0};
                waiting[nfds++] = k;
            }
        }
        if (nfds == 0)
            return;
        int ready = poll(fds, nfds, timeout_ms(r));
        if (ready < 0 && errno == EINTR)
            continue;
        for (unsigned f = 0; f < nfds; f++) {
            conn_queue *k = &q[waiting[f]];
            if (ready <= 0) {
                fail_outstanding(r, k, ops, next,
                                 ready == 0 ? ETIMEDOUT : errno,
                                 "waiting for replies");
            } else if (fds[f].revents) {
                errno = 0;
                if (redisBufferRead(k->c) != REDIS_OK)
                    fail_outstanding(r, k, ops, next, errno,
                                     "reading replies");
                else
                    take_replies(r, k, ops, next);
            }
        }
    }
}

#undef NONE

static void run_one(redis_store *r, unsigned worker, lct_backend_op *op)
{
    redis_pipeline(r, worker, op, 1);
}

static lct_status redis_store_key(void *state, unsigned worker,
                                  const lct_backend_key *key,
                                  const void *data, size_t len, int *replaced,
                                  lct_error *err)
{
    lct_backend_op op = {.kind = LCT_REPLAY_STORE, .key = *key,
                         .buf = (void *)data, .len = len};
    run_one(state, worker, &op);
    *replaced = -1; /* SET does not say */
    if (op.status != LCT_OK && err)
        *err = op.err;
    return op.status;
}

static lct_status redis_lookup(void *state, unsigned worker,
                               const lct_backend_key *key, bool *present,
                               lct_error *err)
{
    lct_backend_op op = {.kind = LCT_REPLAY_LOOKUP, .key = *key};
    run_one(state, worker, &op);
    *present = op.present;
    if (op.status != LCT_OK && err)
        *err = op.err;
    return op.status;
}

static lct_status redis_load(void *state, unsigned worker,
                             const lct_backend_key *key, void *buf,
                             size_t cap, size_t *len, bool *present,
                             lct_error *err)
{
    lct_backend_op op = {.kind = LCT_REPLAY_LOAD, .key = *key, .buf = buf,
                         .cap = cap};
    run_one(state, worker, &op);
    *present = op.present;
    *len = op.len;
    if (op.status != LCT_OK && err)
        *err = op.err;
    return op.status;
}

static lct_status redis_remove(void *state, unsigned worker,
                               const lct_backend_key *key, lct_error *err)
{
    lct_backend_op op = {.kind = LCT_REPLAY_DELETE, .key = *key};
    run_one(state, worker, &op);
    if (op.status != LCT_OK && err)
        *err = op.err;
    return op.status;
}

const lct_backend_ops *lct_backend_redis(void)
{
    static const lct_backend_ops ops = {
        "redis", redis_open, redis_close, redis_store_key, redis_lookup,
        redis_load, redis_remove, redis_pipeline};
    return &ops;
}
