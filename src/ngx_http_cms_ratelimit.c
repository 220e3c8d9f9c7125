
/*
 * GCRA rate limiting: the extension surface's limit (burst 120, one token
 * per 500 ms, per extension key), the public surface's (burst 240, the
 * same rate, per site and client address, and a site's ceiling on what
 * reaches PostgreSQL, cms_public_site_limit) and the login and signup
 * throttles (per client address and per email, cms_auth_throttle).
 *
 * Each bucket lives in Redis, updated by one Lua script using Redis TIME,
 * so it is exact across workers and hosts; a request's buckets go in one
 * pipeline, and an extension POST's bucket in its idempotency claim's
 * script (the claim is made only when the bucket lets it through).  The
 * script is sent with EVALSHA, and with EVAL when Redis answers NOSCRIPT
 * (which also caches it again).  If Redis cannot be asked, each worker
 * limits on its own with the same maths (src/lib/cms_gcra.c) in a keyed
 * table, rather than refuse traffic or let it all through.  The
 * directives are in ngx_http_cms_ratelimit_conf.c.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_ratelimit.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_query.h"
#include "cms_gcra.h"


#define NGX_HTTP_CMS_RL_BURST          120
#define NGX_HTTP_CMS_RL_INTERVAL       500
#define NGX_HTTP_CMS_RL_PK_BURST       240
#define NGX_HTTP_CMS_RL_FALLBACK       (512 * CMS_GCRA_WAYS)
#define NGX_HTTP_CMS_RL_BUCKETS        2
#define NGX_HTTP_CMS_RL_KEY_MAX        64


typedef struct {
    ngx_str_t                       key;       /* Redis key, hash tag */
    ngx_uint_t                      burst;
    ngx_msec_t                      interval;
} ngx_http_cms_ratelimit_bucket_t;


typedef struct {
    ngx_http_cms_ratelimit_next_pt  next;
    void                           *data;      /* ctx->data before */
    ngx_http_cms_ratelimit_bucket_t bucket[NGX_HTTP_CMS_RL_BUCKETS];
    ngx_uint_t                      n;
    unsigned                        eval:1;    /* NOSCRIPT seen: EVAL */
    unsigned                        headers:1; /* RateLimit headers */
} ngx_http_cms_ratelimit_t;


static ngx_int_t ngx_http_cms_ratelimit_credential(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_ratelimit_bucket_t *b);
static void ngx_http_cms_ratelimit_policy(ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_ratelimit_bucket_t *b);
static u_char *ngx_http_cms_ratelimit_args(
    ngx_http_cms_ratelimit_bucket_t *b, u_char *p, const char **argv,
    size_t *len);
static ngx_int_t ngx_http_cms_ratelimit_verdict(ngx_http_request_t *r,
    ngx_http_cms_ratelimit_bucket_t *b, cms_gcra_result_t *res);
static ngx_int_t ngx_http_cms_ratelimit_start(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_ratelimit_t *rl,
    ngx_http_cms_ratelimit_next_pt next);
static ngx_int_t ngx_http_cms_ratelimit_key(ngx_http_request_t *r,
    ngx_http_cms_ratelimit_bucket_t *b, const char *prefix, ngx_str_t *id,
    ngx_str_t *who);
static ngx_int_t ngx_http_cms_ratelimit_send(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_ratelimit_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);
static ngx_uint_t ngx_http_cms_ratelimit_reply(redisReply *rp,
    cms_gcra_result_t *res);
static void ngx_http_cms_ratelimit_local(ngx_http_cms_ratelimit_bucket_t *b,
    cms_gcra_result_t *res);
static void ngx_http_cms_ratelimit_merge(cms_gcra_result_t *all,
    cms_gcra_result_t *res, ngx_uint_t i);
static ngx_int_t ngx_http_cms_ratelimit_apply(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, cms_gcra_result_t *res);
static ngx_int_t ngx_http_cms_ratelimit_headers(ngx_http_request_t *r,
    ngx_http_cms_ratelimit_bucket_t *b, cms_gcra_result_t *res);
static ngx_int_t ngx_http_cms_ratelimit_bucket(ngx_http_request_t *r,
    ngx_http_cms_ratelimit_t *rl, ngx_uint_t which, ngx_str_t *who);
static ngx_int_t ngx_http_cms_ratelimit_address(ngx_http_request_t *r,
    ngx_str_t *who);
static ngx_int_t ngx_http_cms_ratelimit_email(ngx_http_request_t *r,
    ngx_str_t *email, ngx_str_t *who);
#if (NGX_HTTP_CMS_FAULTS)
static int ngx_http_cms_ratelimit_test_clock(ngx_http_request_t *r,
    const char **argv, size_t *len);
#endif


static ngx_http_cms_redis_script_t  ngx_http_cms_ratelimit_script =
    ngx_http_cms_redis_script(CMS_GCRA_LUA);

/*
 * The bucket of KEYS[1], then, when it lets the request through,
 * SET KEYS[2] <claim> NX PX <ms> and, when that key is taken, its value:
 * { allowed, remaining, retry_after, reset_after[, taken, value] }, the
 * claim's two arguments after the bucket's.  A refused request claims
 * nothing.  Both keys carry the same hash tag (one cluster slot).
 */
static ngx_http_cms_redis_script_t  ngx_http_cms_ratelimit_claim_script =
    ngx_http_cms_redis_script(
    "local ms = table.remove(ARGV)\n"
    "local claim = table.remove(ARGV)\n"
    "local rl = (function()\n" CMS_GCRA_LUA "end)()\n"
    "if rl[1] == 0 then return rl end\n"
    "if redis.call('SET', KEYS[2], claim, 'NX', 'PX', ms) then\n"
    "  return {rl[1], rl[2], rl[3], rl[4], 1}\n"
    "end\n"
    "return {rl[1], rl[2], rl[3], rl[4], 0, redis.call('GET', KEYS[2])}\n");

/* the fallback's buckets, and the salt of their keys' hash, per worker */
static cms_gcra_slot_t  ngx_http_cms_ratelimit_slots[NGX_HTTP_CMS_RL_FALLBACK];
static u_char           ngx_http_cms_ratelimit_salt[16];


ngx_int_t
ngx_http_cms_ratelimit_init_process(ngx_cycle_t *cycle)
{
    /* nobody outside can aim keys at one set of the fallback table */
    return ngx_http_cms_crypto_random(ngx_http_cms_ratelimit_salt,
                                      sizeof(ngx_http_cms_ratelimit_salt));
}


ngx_int_t
ngx_http_cms_ratelimit_check(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_ratelimit_next_pt next)
{
    ngx_http_cms_ratelimit_t  *rl;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    /* cms_public_rate_limit off: load tests of the public surface */
    if (ctx->auth == NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY && !mcf->public_limit) {
        return next(r, ctx);
    }

    rl = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_ratelimit_t));

    if (rl == NULL
        || ngx_http_cms_ratelimit_credential(r, ctx, &rl->bucket[0])
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    rl->headers = 1;
    rl->n = 1;

    return ngx_http_cms_ratelimit_start(r, ctx, rl, next);
}


/* the credential's bucket: NGX_OK or NGX_ERROR */
static ngx_int_t
ngx_http_cms_ratelimit_credential(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_ratelimit_bucket_t *b)
{
    ngx_str_t   who;
    ngx_uint_t  pk;

    pk = (ctx->auth == NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY);

    ngx_http_cms_ratelimit_policy(ctx, b);

    /*
     * A publishable key is public: its bucket is the site's and the
     * client's address, so that one client cannot use up a site's
     * (docs/public-surface.md)
     */
    if (pk && ngx_http_cms_ratelimit_address(r, &who) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_ratelimit_key(r, b, pk ? "cms:rl:pk:" : "cms:rl:",
                                      &ctx->principal.key_id,
                                      pk ? &who : NULL);
}


ngx_int_t
ngx_http_cms_ratelimit_site(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_ratelimit_next_pt next)
{
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (!mcf->public_limit) {
        return next(r, ctx);
    }

    return ngx_http_cms_ratelimit_own(r, ctx, "cms:rl:pk:",
                                      &ctx->principal.site_id,
                                      &mcf->public_site, next);
}


/* a route's own limit: one bucket, no RateLimit headers (those describe
   the credential's) */
ngx_int_t
ngx_http_cms_ratelimit_own(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    const char *prefix, ngx_str_t *id, ngx_http_cms_throttle_t *th,
    ngx_http_cms_ratelimit_next_pt next)
{
    ngx_http_cms_ratelimit_t  *rl;

    if (th->burst == 0) {
        return next(r, ctx);
    }

    rl = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_ratelimit_t));
    if (rl == NULL) {
        return NGX_ERROR;
    }

    rl->n = 1;
    rl->bucket[0].burst = th->burst;
    rl->bucket[0].interval = th->interval;

    if (ngx_http_cms_ratelimit_key(r, &rl->bucket[0], prefix, id, NULL)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_ratelimit_start(r, ctx, rl, next);
}


ngx_int_t
ngx_http_cms_ratelimit_throttle(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t signup, ngx_str_t *email,
    ngx_http_cms_ratelimit_next_pt next)
{
    ngx_str_t                  who;
    ngx_uint_t                 first;
    ngx_http_cms_ratelimit_t  *rl;

    rl = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_ratelimit_t));
    if (rl == NULL) {
        return NGX_ERROR;
    }

    first = signup ? NGX_HTTP_CMS_THROTTLE_SIGNUP_EMAIL
                   : NGX_HTTP_CMS_THROTTLE_LOGIN_EMAIL;

    if (ngx_http_cms_ratelimit_address(r, &who) != NGX_OK
        || ngx_http_cms_ratelimit_bucket(r, rl, first + 1, &who) != NGX_OK
        || ngx_http_cms_ratelimit_email(r, email, &who) != NGX_OK
        || ngx_http_cms_ratelimit_bucket(r, rl, first, &who) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (rl->n == 0) {
        return next(r, ctx);
    }

    return ngx_http_cms_ratelimit_start(r, ctx, rl, next);
}


/* the credential's burst and rate */
static void
ngx_http_cms_ratelimit_policy(ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_ratelimit_bucket_t *b)
{
    b->interval = NGX_HTTP_CMS_RL_INTERVAL;

    /* the same rate; a publishable key's bucket holds a browser burst */
    b->burst = (ctx->auth == NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY)
               ? NGX_HTTP_CMS_RL_PK_BURST : NGX_HTTP_CMS_RL_BURST;
}


/*
 * One call of the credential's bucket and a claim (the claim script):
 * the idempotency claim counts its request as it claims its key, in one
 * round trip.
 */
/* long: the script's arguments, the bucket's then the claim's */
ngx_int_t
ngx_http_cms_ratelimit_claim(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_redis_cmds_t *cmds, ngx_str_t *key, ngx_str_t *claim,
    ngx_msec_t ms, ngx_uint_t eval)
{
    int                              argc;
    u_char                          *p;
    size_t                           len[11];
    const char                      *argv[11];
    ngx_http_cms_ratelimit_bucket_t  b;

    p = ngx_pnalloc(r->pool, 3 * NGX_INT_T_LEN);

    if (p == NULL || ngx_http_cms_ratelimit_credential(r, ctx, &b) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_cms_redis_script_argv(&ngx_http_cms_ratelimit_claim_script,
                                   eval, argv, len);
    argv[2] = "2";
    len[2] = 1;
    argv[3] = (char *) b.key.data;
    len[3] = b.key.len;
    argv[4] = (char *) key->data;
    len[4] = key->len;

    p = ngx_http_cms_ratelimit_args(&b, p, &argv[5], &len[5]);
    argc = 7;

#if (NGX_HTTP_CMS_FAULTS)
    argc += ngx_http_cms_ratelimit_test_clock(r, &argv[7], &len[7]);
#endif

    argv[argc] = (char *) claim->data;
    len[argc] = claim->len;
    argv[argc + 1] = (char *) p;
    len[argc + 1] = ngx_sprintf(p, "%M", ms) - p;

    return ngx_http_cms_redis_append(r->pool, cmds, argc + 2, argv, len);
}


ngx_int_t
ngx_http_cms_ratelimit_claimed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply *rp, redisReply **held)
{
    cms_gcra_result_t                res;
    ngx_http_cms_ratelimit_bucket_t  b;

    if (ngx_http_cms_redis_noscript(rp)) {
        return NGX_AGAIN;
    }

    if (!ngx_http_cms_ratelimit_reply(rp, &res)
        || (res.allowed
            && (rp->elements < 5
                || rp->element[4]->type != REDIS_REPLY_INTEGER
                || (rp->element[4]->integer == 0 && rp->elements != 6))))
    {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: rate limit and claim failed in redis: %s",
                      rp->type == REDIS_REPLY_ERROR ? rp->str
                                                    : "unexpected reply");
        return NGX_ERROR;
    }

    *held = (res.allowed && rp->element[4]->integer == 0) ? rp->element[5]
                                                          : NULL;

    ngx_http_cms_ratelimit_policy(ctx, &b);

    return ngx_http_cms_ratelimit_verdict(r, &b, &res);
}


/* "<prefix>{<id>}" or "<prefix>{<id>}:<who>": the hash tag keeps an id's
   buckets on one cluster slot */
static ngx_int_t
ngx_http_cms_ratelimit_key(ngx_http_request_t *r,
    ngx_http_cms_ratelimit_bucket_t *b, const char *prefix, ngx_str_t *id,
    ngx_str_t *who)
{
    u_char  *p;
    size_t   len;

    len = ngx_strlen(prefix) + id->len + 3 + (who ? who->len : 0);

    b->key.data = ngx_pnalloc(r->pool, len);
    if (b->key.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(b->key.data, "%s{%V}", prefix, id);

    if (who != NULL) {
        p = ngx_sprintf(p, ":%V", who);
    }

    b->key.len = p - b->key.data;

    return NGX_OK;
}


/* the request's state moves aside while the buckets are asked */
static ngx_int_t
ngx_http_cms_ratelimit_start(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_ratelimit_t *rl, ngx_http_cms_ratelimit_next_pt next)
{
    rl->next = next;
    rl->data = ctx->data;
    ctx->data = rl;

    return ngx_http_cms_ratelimit_send(r, ctx);
}


/* one EVALSHA (or EVAL) a bucket, in one pipeline */
/* long: the script's six arguments, per bucket */
static ngx_int_t
ngx_http_cms_ratelimit_send(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    int                         argc;
    u_char                     *p;
    size_t                      len[8];
    ngx_int_t                   rc;
    ngx_uint_t                  i;
    const char                 *argv[8];
    ngx_http_cms_ratelimit_t   *rl;
    ngx_http_cms_redis_cmds_t  *cmds;

    rl = ctx->data;

    cmds = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_cmds_t));
    p = ngx_pnalloc(r->pool, rl->n * 2 * NGX_INT_T_LEN);

    if (cmds == NULL || p == NULL) {
        return NGX_ERROR;
    }

    ngx_http_cms_redis_script_argv(&ngx_http_cms_ratelimit_script, rl->eval,
                                   argv, len);
    argv[2] = "1";
    len[2] = 1;
    argc = 6;

#if (NGX_HTTP_CMS_FAULTS)
    argc += ngx_http_cms_ratelimit_test_clock(r, &argv[6], &len[6]);
#endif

    for (i = 0; i < rl->n; i++) {
        argv[3] = (char *) rl->bucket[i].key.data;
        len[3] = rl->bucket[i].key.len;
        p = ngx_http_cms_ratelimit_args(&rl->bucket[i], p, &argv[4],
                                        &len[4]);

        if (ngx_http_cms_redis_append(r->pool, cmds, argc, argv, len)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    rc = ngx_http_cms_redis_run(r, cmds, ngx_http_cms_ratelimit_done);

    if (rc == NGX_DONE) {
        return NGX_DONE;
    }

    /* Redis cannot be asked at all: the worker's own limit */
    ctx->has_err = 0;

    return ngx_http_cms_ratelimit_done(r, ctx, NULL, 0);
}


/* the script's burst and interval, written at p (2 * NGX_INT_T_LEN); the
   end of what was written */
static u_char *
ngx_http_cms_ratelimit_args(ngx_http_cms_ratelimit_bucket_t *b, u_char *p,
    const char **argv, size_t *len)
{
    argv[0] = (char *) p;
    len[0] = ngx_sprintf(p, "%ui", b->burst) - p;
    p += len[0];
    argv[1] = (char *) p;
    len[1] = ngx_sprintf(p, "%M", b->interval) - p;

    return p + len[1];
}


/* the replies in bucket order; NULL when Redis could not be asked */
static ngx_int_t
ngx_http_cms_ratelimit_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    redisReply **replies, ngx_uint_t n)
{
    ngx_uint_t                 i;
    redisReply                *rp;
    cms_gcra_result_t          res, all;
    ngx_http_cms_ratelimit_t  *rl;

    rl = ctx->data;
    ngx_memzero(&all, sizeof(cms_gcra_result_t));

    for (i = 0; replies != NULL && !rl->eval && i < n; i++) {
        rp = replies[i];

        if (ngx_http_cms_redis_noscript(rp)) {
            rl->eval = 1;
            return ngx_http_cms_ratelimit_send(r, ctx);
        }
    }

    for (i = 0; i < rl->n; i++) {
        rp = (replies != NULL && i < n) ? replies[i] : NULL;

        if (!ngx_http_cms_ratelimit_reply(rp, &res)) {
            ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                          "cms: rate limit falls back to this worker: %s",
                          rp && rp->type == REDIS_REPLY_ERROR ? rp->str
                                                              : "no answer");

            ngx_http_cms_ratelimit_local(&rl->bucket[i], &res);
        }

        ngx_http_cms_ratelimit_merge(&all, &res, i);
    }

    return ngx_http_cms_ratelimit_apply(r, ctx, &all);
}


/* the script's { allowed, remaining, retry_after, reset_after } (the
   claim script's, first); 0 when the reply is something else */
static ngx_uint_t
ngx_http_cms_ratelimit_reply(redisReply *rp, cms_gcra_result_t *res)
{
    ngx_uint_t  i;

    if (rp == NULL || rp->type != REDIS_REPLY_ARRAY || rp->elements < 4) {
        return 0;
    }

    for (i = 0; i < 4; i++) {
        if (rp->element[i]->type != REDIS_REPLY_INTEGER) {
            return 0;
        }
    }

    res->allowed = (int) rp->element[0]->integer;
    res->remaining = rp->element[1]->integer;
    res->retry_after_ms = rp->element[2]->integer;
    res->reset_after_ms = rp->element[3]->integer;

    return 1;
}


/*
 * The per-worker fallback: a keyed table (see cms_gcra_table_check()), the
 * keys hashed with this worker's salt; a collision never resets a bucket.
 */
static void
ngx_http_cms_ratelimit_local(ngx_http_cms_ratelimit_bucket_t *b,
    cms_gcra_result_t *res)
{
    u_char       hex[64];
    uint64_t     key;
    ngx_str_t    parts[2];
    ngx_uint_t   i;
    ngx_time_t  *tp;

    parts[0].data = ngx_http_cms_ratelimit_salt;
    parts[0].len = sizeof(ngx_http_cms_ratelimit_salt);
    parts[1] = b->key;

    key = 0;

    if (ngx_http_cms_crypto_sha256_hex(parts, 2, hex) == NGX_OK) {
        for (i = 0; i < 16; i++) {
            key = key << 4 | (uint64_t) ngx_hextoi(&hex[i], 1);
        }

    } else {
        /* OpenSSL failed: unsalted, still a bucket per key mostly */
        key = ngx_crc32_short(b->key.data, b->key.len);
    }

    tp = ngx_timeofday();

    cms_gcra_table_check(ngx_http_cms_ratelimit_slots,
                         NGX_HTTP_CMS_RL_FALLBACK, key,
                         (int64_t) tp->sec * 1000 + tp->msec,
                         (int64_t) b->burst, (int64_t) b->interval, res);
}


/* several buckets answer as the strictest: refused by any, the longest
   wait, the fewest remaining; the first one ("i" 0) as it is */
static void
ngx_http_cms_ratelimit_merge(cms_gcra_result_t *all, cms_gcra_result_t *res,
    ngx_uint_t i)
{
    if (i == 0) {
        *all = *res;
        return;
    }

    all->allowed = all->allowed && res->allowed;
    all->remaining = ngx_min(all->remaining, res->remaining);
    all->retry_after_ms = ngx_max(all->retry_after_ms, res->retry_after_ms);
    all->reset_after_ms = ngx_max(all->reset_after_ms, res->reset_after_ms);
}


/* next() or 429 */
static ngx_int_t
ngx_http_cms_ratelimit_apply(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    cms_gcra_result_t *res)
{
    ngx_int_t                  rc;
    ngx_http_cms_ratelimit_t  *rl;

    rl = ctx->data;
    ctx->data = rl->data;

    rc = ngx_http_cms_ratelimit_verdict(r, rl->headers ? &rl->bucket[0]
                                                       : NULL, res);

    return rc == NGX_DECLINED ? rl->next(r, ctx) : rc;
}


/* NGX_DECLINED, or the 429 recorded; the RateLimit headers of bucket "b"
   (the extension surface's answers carry them), unless it is NULL */
static ngx_int_t
ngx_http_cms_ratelimit_verdict(ngx_http_request_t *r,
    ngx_http_cms_ratelimit_bucket_t *b, cms_gcra_result_t *res)
{
    ngx_str_t  v;

    static ngx_str_t  retry_name = ngx_string("Retry-After");

    if (b != NULL && ngx_http_cms_ratelimit_headers(r, b, res) != NGX_OK) {
        return NGX_ERROR;
    }

    if (res->allowed) {
        return NGX_DECLINED;
    }

    v.data = ngx_pnalloc(r->pool, NGX_INT64_LEN);
    if (v.data == NULL) {
        return NGX_ERROR;
    }

    /* whole seconds, never 0: a client that waits this long gets in */
    v.len = ngx_sprintf(v.data, "%L",
                        (int64_t) ngx_max(1, (res->retry_after_ms + 999)
                                             / 1000))
            - v.data;

    if (ngx_http_cms_header_add(r, &retry_name, &v) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_RATE_LIMITED, NULL);
}


/*
 * RateLimit-Policy and RateLimit (IETF draft): the bucket's burst as the
 * quota, and the time an empty bucket takes to fill again as its window
 * (burst 240 at one a 500 ms: q=240;w=120), so a client that trusts the
 * policy sees the burst it may use
 */
static ngx_int_t
ngx_http_cms_ratelimit_headers(ngx_http_request_t *r,
    ngx_http_cms_ratelimit_bucket_t *b, cms_gcra_result_t *res)
{
    ngx_str_t  v, policy;

    static ngx_str_t  policy_name = ngx_string("RateLimit-Policy");
    static ngx_str_t  limit_name = ngx_string("RateLimit");

    v.data = ngx_pnalloc(r->pool, 64);
    policy.data = ngx_pnalloc(r->pool, 64);

    if (v.data == NULL || policy.data == NULL) {
        return NGX_ERROR;
    }

    policy.len = ngx_sprintf(policy.data, "\"default\";q=%ui;w=%M",
                             b->burst,
                             (b->burst * b->interval + 999) / 1000)
                 - policy.data;

    v.len = ngx_sprintf(v.data, "\"default\";r=%L;t=%L",
                        (int64_t) ngx_max(res->remaining, 0),
                        (int64_t) (ngx_max(res->reset_after_ms, 0) + 999)
                        / 1000)
            - v.data;

    if (ngx_http_cms_header_add(r, &policy_name, &policy) != NGX_OK
        || ngx_http_cms_header_add(r, &limit_name, &v) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* adds the bucket of throttle "which" for "who", unless it is off */
static ngx_int_t
ngx_http_cms_ratelimit_bucket(ngx_http_request_t *r,
    ngx_http_cms_ratelimit_t *rl, ngx_uint_t which, ngx_str_t *who)
{
    ngx_http_cms_throttle_t          *th;
    ngx_http_cms_main_conf_t         *mcf;
    ngx_http_cms_ratelimit_bucket_t  *b;

    static const char  *names[] = { "login:e", "login:a", "signup:e",
                                    "signup:a" };

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);
    th = &mcf->throttle[which];

    if (th->burst == 0) {
        return NGX_OK;
    }

    b = &rl->bucket[rl->n++];
    b->burst = th->burst;
    b->interval = th->interval;

    b->key.data = ngx_pnalloc(r->pool, NGX_HTTP_CMS_RL_KEY_MAX + 16);
    if (b->key.data == NULL) {
        return NGX_ERROR;
    }

    b->key.len = ngx_snprintf(b->key.data, NGX_HTTP_CMS_RL_KEY_MAX + 16,
                              "cms:th:{%s:%V}", names[which], who)
                 - b->key.data;

    return NGX_OK;
}


/*
 * The client's address as nginx has it (after the realip module, when it
 * is set up): IPv4 whole, IPv6 by its /64 (one subscriber's network; an
 * IPv4-mapped address as IPv4), in hex.
 */
static ngx_int_t
ngx_http_cms_ratelimit_address(ngx_http_request_t *r, ngx_str_t *who)
{
    u_char               *a;
    size_t                n;
    struct sockaddr      *sa;
    struct sockaddr_in   *sin;
#if (NGX_HAVE_INET6)
    struct sockaddr_in6  *sin6;
#endif

    sa = r->connection->sockaddr;
    a = NULL;
    n = 0;

    if (sa->sa_family == AF_INET) {
        sin = (struct sockaddr_in *) sa;
        a = (u_char *) &sin->sin_addr;
        n = 4;
    }

#if (NGX_HAVE_INET6)
    if (sa->sa_family == AF_INET6) {
        sin6 = (struct sockaddr_in6 *) sa;
        a = sin6->sin6_addr.s6_addr;
        n = 8;

        if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
            a += 12;
            n = 4;
        }
    }
#endif

    if (a == NULL) {
        /* a unix socket: every client is the same one */
        ngx_str_set(who, "local");
        return NGX_OK;
    }

    who->data = ngx_pnalloc(r->pool, 2 * n + 2);
    if (who->data == NULL) {
        return NGX_ERROR;
    }

    who->len = ngx_hex_dump(ngx_cpymem(who->data, n == 4 ? "4-" : "6-", 2),
                            a, n)
               - who->data;

    return NGX_OK;
}


/*
 * The email as a keyed SHA-256 (the key peppered from cms_secret), lower
 * case, 32 hex: Redis never holds the address itself.
 */
static ngx_int_t
ngx_http_cms_ratelimit_email(ngx_http_request_t *r, ngx_str_t *email,
    ngx_str_t *who)
{
    u_char                    *hex;
    ngx_str_t                  parts[3];
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    hex = ngx_pnalloc(r->pool, 64);
    parts[2].data = ngx_pnalloc(r->pool, email->len);

    if (hex == NULL || parts[2].data == NULL) {
        return NGX_ERROR;
    }

    ngx_strlow(parts[2].data, email->data, email->len);
    parts[2].len = email->len;

    parts[0].data = mcf->api_pepper;
    parts[0].len = sizeof(mcf->api_pepper);
    ngx_str_set(&parts[1], "cms throttle email v1:");

    if (ngx_http_cms_crypto_sha256_hex(parts, 3, hex) != NGX_OK) {
        return NGX_ERROR;
    }

    who->data = hex;
    who->len = 32;

    return NGX_OK;
}


#if (NGX_HTTP_CMS_FAULTS)

/*
 * "X-Cms-Test-Clock: <ms>", only in builds for the test suite: the
 * script's clock (CMS_GCRA_LUA's ARGV[4], after a TTL cap of 0), so that
 * a test's burst does not depend on how fast a busy machine sends it.
 * Returns how many arguments it set: 2, or 0 without the header.
 */
static int
ngx_http_cms_ratelimit_test_clock(ngx_http_request_t *r, const char **argv,
    size_t *len)
{
    ngx_str_t  *v;

    static ngx_str_t  name = ngx_string("X-Cms-Test-Clock");

    v = ngx_http_cms_query_header(r, &name, NULL);

    if (v == NULL || v->len == 0 || v->len > 18
        || ngx_atoi(v->data, v->len) == NGX_ERROR)
    {
        return 0;
    }

    argv[0] = "0";
    len[0] = 1;
    argv[1] = (const char *) v->data;
    len[1] = v->len;

    return 2;
}

#endif
