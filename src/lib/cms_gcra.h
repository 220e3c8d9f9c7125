
/*
 * GCRA (generic cell rate algorithm) rate limiting, as redis-cell computes
 * it: a token bucket of capacity "burst" refilled with one token every
 * "interval" ms, kept as a single number, the theoretical arrival time
 * (TAT, ms): the time at which the bucket will be full again.
 *
 * With T = interval and B = burst, a request at "now" is accepted when
 *
 *     max(TAT, now) + T - now <= T * B        (i.e. TAT - now <= T * (B-1))
 *
 * and then TAT = max(TAT, now) + T.  So a fresh bucket accepts exactly B
 * requests at one instant, the next one T ms later, then one every T ms.
 * For a refused request:
 *
 *     retry_after = max(TAT, now) + T - T * B - now    (1 to T)
 *
 * remaining = how many more requests would be accepted right now
 * (floor((T * B - (TAT - now)) / T) after the update, 0 when refused);
 * reset_after = TAT - now after the update, the ms until the bucket is full
 * again (0 to T * B).
 *
 * The clock: only TAT is kept, not the time of the last call, but every
 * accepted request leaves TAT <= now + T * B, so a "now" earlier than
 * TAT - T * B proves that the clock went backwards further than the state
 * spans.  The state is then anchored again on the new clock as an empty
 * bucket (TAT = now + T * B, stored even though the request is refused):
 * the wait is T, not the length of the step, and nothing beyond the rate
 * gets through across the step.  A smaller step back is absorbed as debt
 * (the wait stays within 1 .. T).  Freezing "now" at the last time instead
 * would refuse every request until the clock caught up.  Inputs are
 * clamped to the ranges below, so no sum or product can overflow; now_ms
 * below 0 counts as 0, so tat_ms == 0 means a fresh (full) bucket.
 *
 * CMS_GCRA_LUA is the same algorithm as a Redis script over the server's
 * clock (TIME), so that every worker of every nginx host shares one bucket
 * per key.  Contract: no allocation, no I/O; the caller owns the state.
 */


#ifndef _CMS_GCRA_H_INCLUDED_
#define _CMS_GCRA_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>


#define CMS_GCRA_BURST_MAX     (INT64_C(1) << 30)
#define CMS_GCRA_INTERVAL_MAX  (INT64_C(1) << 30)      /* ms, ~12 days */
#define CMS_GCRA_TIME_MAX      (INT64_C(1) << 61)      /* ms */


typedef struct {
    int64_t   tat_ms;           /* 0 = fresh */
} cms_gcra_state_t;


typedef struct {
    int       allowed;
    int64_t   remaining;
    int64_t   retry_after_ms;   /* 0 when allowed, else >= 1 */
    int64_t   reset_after_ms;
} cms_gcra_result_t;


void cms_gcra_check(cms_gcra_state_t *st, int64_t now_ms, int64_t burst,
    int64_t interval_ms, cms_gcra_result_t *res);


/*
 * A fixed table of buckets by key, for a limiter that cannot keep its
 * state elsewhere (a worker while Redis is away).  The caller owns the
 * slots (zeroed: every bucket fresh) and hashes its keys (a keyed hash,
 * so that nobody can aim keys at one set).
 *
 * The table is set-associative: a key lives in one set of CMS_GCRA_WAYS
 * slots.  It finds its own slot there, or takes a slot whose bucket is
 * full again (tat_ms <= now: forgetting it loses nothing, a full bucket
 * is a fresh one).  When every slot of the set holds a bucket still
 * draining, the key shares the most drained one without taking it over:
 * a collision makes a limit stricter, it never hands a drained key
 * a fresh bucket (what resetting the slot did).  A key that shared takes
 * a fresh slot of its own once one comes free, which happens only when
 * another key's bucket has filled up again: at most one burst per freed
 * slot, never a reset on demand.
 */

#define CMS_GCRA_WAYS  8

typedef struct {
    uint64_t            key;        /* 0: empty */
    cms_gcra_state_t    state;
} cms_gcra_slot_t;


/*
 * cms_gcra_check() on the bucket of "key" in "slots" (nslots of them, a
 * multiple of CMS_GCRA_WAYS, at least one set).  Key 0 is taken as 1.
 */
void cms_gcra_table_check(cms_gcra_slot_t *slots, size_t nslots,
    uint64_t key, int64_t now_ms, int64_t burst, int64_t interval_ms,
    cms_gcra_result_t *res);


/*
 * EVAL/EVALSHA CMS_GCRA_LUA 1 <bucket key> <burst> <interval ms> <ttl cap>
 *     [<now ms>]
 *
 * Returns { allowed (0 or 1), remaining, retry_after_ms, reset_after_ms },
 * all integers, computed exactly as cms_gcra_check() with now = the Redis
 * server's TIME in ms.  The TAT is stored (as a decimal integer string)
 * when a request is accepted (or the clock went back), with PEXPIRE =
 * reset_after (at least 1 ms): the key disappears when the bucket is full
 * again, which is the same state as no key.  A refused request otherwise
 * writes nothing.  ARGV[3] caps that TTL in ms (0: no cap); a cap below
 * burst * interval would forget part of a drained bucket, so pass at
 * least that.  Malformed arguments are clamped as in C (burst and
 * interval to 1 .. 2^30); a stored value that is not a number, or is
 * negative, counts as a fresh bucket.
 *
 * ARGV[4], for tests only, is the clock to use instead of TIME, so that a
 * test decides when tokens come back (a busy machine cannot move them);
 * the key is then kept an hour past its TTL, since the server's clock no
 * longer says when the bucket is full again.
 *
 * Only KEYS[1] is touched, so it runs on Redis Cluster (the key's hash tag
 * picks the slot).  redis.replicate_commands() is needed before a write
 * that follows TIME on Redis 3.2 to 4; on 5 and later it is the default
 * (7 keeps the call as a no-op).  Lua numbers are doubles: integers stay
 * exact below 2^53, far above any ms timestamp.
 */

#define CMS_GCRA_LUA                                                          \
    "if redis.replicate_commands then redis.replicate_commands() end\n"       \
    "local function clamp(v, lo, hi)\n"                                       \
    "  v = math.floor(tonumber(v) or lo)\n"                                   \
    "  if v < lo then return lo end\n"                                        \
    "  if v > hi then return hi end\n"                                        \
    "  return v\n"                                                            \
    "end\n"                                                                   \
    "local burst = clamp(ARGV[1], 1, 1073741824)\n"                           \
    "local interval = clamp(ARGV[2], 1, 1073741824)\n"                        \
    "local cap = clamp(ARGV[3], 0, 1073741824 * 1073741824)\n"                \
    "local now, keep = 0, 0\n"                                                \
    "if ARGV[4] then\n"                                                       \
    "  now, keep = clamp(ARGV[4], 0, 2305843009213693952), 3600000\n"         \
    "else\n"                                                                  \
    "  local t = redis.call('TIME')\n"                                        \
    "  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"     \
    "end\n"                                                                   \
    "local full = interval * burst\n"                                         \
    "local tat = tonumber(redis.call('GET', KEYS[1]) or 0) or 0\n"            \
    "if tat ~= tat or tat < 0 then tat = 0 end\n"                             \
    "local function store(v, ttl)\n"                                          \
    "  if cap > 0 and ttl > cap then ttl = cap end\n"                         \
    "  if ttl < 1 then ttl = 1 end\n"                                         \
    "  ttl = ttl + keep\n"                                                    \
    "  redis.call('SET', KEYS[1], string.format('%d', v), 'PX',\n"            \
    "             string.format('%d', ttl))\n"                                \
    "end\n"                                                                   \
    "if now < tat - full then\n"                                              \
    "  tat = now + full\n"                                                    \
    "  store(tat, full)\n"                                                    \
    "end\n"                                                                   \
    "if tat < now then tat = now end\n"                                       \
    "local d = tat - now\n"                                                   \
    "if d > full - interval then\n"                                           \
    "  return {0, 0, d - (full - interval), d}\n"                             \
    "end\n"                                                                   \
    "tat = tat + interval\n"                                                  \
    "d = d + interval\n"                                                      \
    "store(tat, d)\n"                                                         \
    "return {1, math.floor((full - d) / interval), 0, d}\n"


#endif /* _CMS_GCRA_H_INCLUDED_ */
