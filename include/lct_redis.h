/*
 * lct_redis.h - the redis backend for lct_replay_run(), in its own
 * library (liblct_redis.a, `pkg-config lct_redis`) because it needs
 * hiredis and liblct does not.
 *
 *     const lct_backend_ops *extra[] = {lct_backend_redis()};
 *     lct_backend_find("redis://127.0.0.1:6379", extra, 1, &ops, &arg, &err);
 *
 * Keys are "lct:" and the key's 16 hex digits; a store is SET, a lookup
 * EXISTS, a load GET, a delete DEL.  Each worker has its own
 * connections (lct_backend_config.redis.connections, default 1), a key always
 * on the same one; the operations a worker is handed at once go out in a
 * sliding window of lct_backend_config.redis.pipeline commands per connection,
 * replies read in order, as redis-benchmark's -c and -P do.  A lost connection fails the
 * operations in flight (counted as errors) and is tried again at most
 * once a second.
 */
#ifndef LCT_REDIS_H
#define LCT_REDIS_H

#include "lct_replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/** "redis": the URI redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] (PORT
 *  defaults to 6379, DB to 0).  Each connection sends AUTH (PASSWORD, or
 *  USER PASSWORD for an ACL user; taken as written, not percent-decoded)
 *  and SELECT DB when asked, then PING: a server that wants a password,
 *  refuses it, or is not redis fails the open with a message that says
 *  so and never shows the password. */
const lct_backend_ops *lct_backend_redis(void);

#ifdef __cplusplus
}
#endif

#endif
