
/*
 * GCRA rate limiting (burst 120, one token per 500 ms) per extension key.
 *
 * The bucket lives in Redis, updated by one Lua script using Redis TIME,
 * so it is exact across workers and hosts.  The script is sent with
 * EVALSHA, and with EVAL when Redis answers NOSCRIPT (which also caches it
 * again).  If Redis cannot be asked, each worker limits on its own with
 * the same maths (src/lib/cms_gcra.c) rather than refuse traffic.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <openssl/sha.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_ratelimit.h"
#include "ngx_http_cms_redis.h"
#include "cms_gcra.h"
#include "cms_hex.h"


#define NGX_HTTP_CMS_RL_BURST          120
#define NGX_HTTP_CMS_RL_INTERVAL       500
#define NGX_HTTP_CMS_RL_FALLBACK       1024


typedef struct {
    ngx_http_cms_ratelimit_next_pt  next;
    ngx_uint_t                      eval;      /* NOSCRIPT seen: EVAL */
} ngx_http_cms_ratelimit_t;


/* the fallback's buckets: a small table per worker, by key hash */
typedef struct {
    uint32_t                        hash;
    cms_gcra_state_t                state;
} ngx_http_cms_ratelimit_slot_t;


static ngx_int_t ngx_http_cms_ratelimit_send(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_ratelimit_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);
static ngx_int_t ngx_http_cms_ratelimit_local(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, cms_gcra_result_t *res);
static ngx_int_t ngx_http_cms_ratelimit_apply(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, cms_gcra_result_t *res);


static char  ngx_http_cms_ratelimit_lua[] = CMS_GCRA_LUA;
static char  ngx_http_cms_ratelimit_sha[SHA_DIGEST_LENGTH * 2];

static ngx_http_cms_ratelimit_slot_t
    ngx_http_cms_ratelimit_slots[NGX_HTTP_CMS_RL_FALLBACK];


ngx_int_t
ngx_http_cms_ratelimit_init_process(ngx_cycle_t *cycle)
{
    unsigned char  md[SHA_DIGEST_LENGTH];

    SHA1((u_char *) ngx_http_cms_ratelimit_lua,
         sizeof(ngx_http_cms_ratelimit_lua) - 1, md);
    cms_hex_encode(md, sizeof(md), ngx_http_cms_ratelimit_sha);

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_ratelimit_check(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_ratelimit_next_pt next)
{
    ngx_http_cms_ratelimit_t  *rl;

    rl = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_ratelimit_t));
    if (rl == NULL) {
        return NGX_ERROR;
    }

    rl->next = next;
    ctx->data = rl;

    return ngx_http_cms_ratelimit_send(r, ctx);
}


/* long: the script's arguments, one per bucket setting */
static ngx_int_t
ngx_http_cms_ratelimit_send(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    u_char                     *key;
    size_t                      len[6];
    ngx_int_t                   rc;
    const char                 *argv[6];
    cms_gcra_result_t           res;
    ngx_http_cms_ratelimit_t   *rl;
    ngx_http_cms_redis_cmds_t  *cmds;

    rl = ctx->data;

    cmds = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_cmds_t));
    key = ngx_pnalloc(r->pool, ctx->principal.key_id.len + 16);

    if (cmds == NULL || key == NULL) {
        return NGX_ERROR;
    }

    argv[0] = rl->eval ? "EVAL" : "EVALSHA";
    len[0] = ngx_strlen(argv[0]);
    argv[1] = rl->eval ? ngx_http_cms_ratelimit_lua
                       : ngx_http_cms_ratelimit_sha;
    len[1] = rl->eval ? sizeof(ngx_http_cms_ratelimit_lua) - 1
                      : sizeof(ngx_http_cms_ratelimit_sha);
    argv[2] = "1";
    len[2] = 1;

    /* the hash tag keeps a key's bucket on one cluster slot */
    argv[3] = (char *) key;
    len[3] = ngx_sprintf(key, "cms:rl:{%V}", &ctx->principal.key_id) - key;
    argv[4] = "120";
    len[4] = 3;
    argv[5] = "500";
    len[5] = 3;

    if (ngx_http_cms_redis_append(r->pool, cmds, 6, argv, len) != NGX_OK) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_redis_run(r, cmds, ngx_http_cms_ratelimit_done);

    if (rc == NGX_DONE) {
        return NGX_DONE;
    }

    /* Redis cannot be asked at all: the worker's own limit */
    ctx->has_err = 0;

    if (ngx_http_cms_ratelimit_local(r, ctx, &res) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_ratelimit_apply(r, ctx, &res);
}


static ngx_int_t
ngx_http_cms_ratelimit_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    redisReply **replies, ngx_uint_t n)
{
    redisReply                *rp;
    cms_gcra_result_t          res;
    ngx_http_cms_ratelimit_t  *rl;

    rl = ctx->data;
    rp = replies ? replies[0] : NULL;

    if (rp != NULL && rp->type == REDIS_REPLY_ERROR && !rl->eval
        && ngx_strncmp(rp->str, "NOSCRIPT", 8) == 0)
    {
        rl->eval = 1;
        return ngx_http_cms_ratelimit_send(r, ctx);
    }

    if (rp == NULL || rp->type != REDIS_REPLY_ARRAY || rp->elements != 4
        || rp->element[0]->type != REDIS_REPLY_INTEGER)
    {
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "cms: rate limit falls back to this worker: %s",
                      rp && rp->type == REDIS_REPLY_ERROR ? rp->str
                                                          : "no answer");

        if (ngx_http_cms_ratelimit_local(r, ctx, &res) != NGX_OK) {
            return NGX_ERROR;
        }

        return ngx_http_cms_ratelimit_apply(r, ctx, &res);
    }

    res.allowed = (int) rp->element[0]->integer;
    res.remaining = rp->element[1]->integer;
    res.retry_after_ms = rp->element[2]->integer;
    res.reset_after_ms = rp->element[3]->integer;

    return ngx_http_cms_ratelimit_apply(r, ctx, &res);
}


/* the per-worker fallback; a hash collision shares a bucket, erring safe */
static ngx_int_t
ngx_http_cms_ratelimit_local(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    cms_gcra_result_t *res)
{
    uint32_t                        hash;
    ngx_time_t                     *tp;
    ngx_http_cms_ratelimit_slot_t  *slot;

    hash = ngx_crc32_short(ctx->principal.key_id.data,
                           ctx->principal.key_id.len);
    slot = &ngx_http_cms_ratelimit_slots[hash % NGX_HTTP_CMS_RL_FALLBACK];

    if (slot->hash != hash) {
        slot->hash = hash;
        slot->state.tat_ms = 0;
    }

    tp = ngx_timeofday();

    cms_gcra_check(&slot->state, (int64_t) tp->sec * 1000 + tp->msec,
                   NGX_HTTP_CMS_RL_BURST, NGX_HTTP_CMS_RL_INTERVAL, res);

    return NGX_OK;
}


/* the headers every answer carries, then next() or 429 */
static ngx_int_t
ngx_http_cms_ratelimit_apply(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    cms_gcra_result_t *res)
{
    ngx_str_t                  v;
    ngx_http_cms_ratelimit_t  *rl;

    static ngx_str_t  policy_name = ngx_string("RateLimit-Policy");
    static ngx_str_t  policy = ngx_string("\"default\";q=120;w=60");
    static ngx_str_t  limit_name = ngx_string("RateLimit");
    static ngx_str_t  retry_name = ngx_string("Retry-After");

    rl = ctx->data;
    ctx->data = NULL;

    v.data = ngx_pnalloc(r->pool, 64);
    if (v.data == NULL) {
        return NGX_ERROR;
    }

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

    if (res->allowed) {
        return rl->next(r, ctx);
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
