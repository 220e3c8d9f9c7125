
/*
 * Rate limits: GCRA in one Redis Lua script per bucket, exact across
 * workers and hosts; a per-worker fallback when Redis cannot be asked.
 * The extension surface's limit per key, and the login and signup
 * throttles per client address and per email.
 */


#ifndef _NGX_HTTP_CMS_RATELIMIT_H_INCLUDED_
#define _NGX_HTTP_CMS_RATELIMIT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_redis.h"


/* what comes after a request is let through */
typedef ngx_int_t (*ngx_http_cms_ratelimit_next_pt)(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


/*
 * Counts the request against the bucket of ctx->principal.key_id, adds the
 * RateLimit-Policy and RateLimit headers, and runs next() when it is
 * allowed; else 429 rate_limited with Retry-After.  Returns the handler
 * contract's codes.
 */
ngx_int_t ngx_http_cms_ratelimit_check(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_ratelimit_next_pt next);

/*
 * The credential's bucket (as ngx_http_cms_ratelimit_check() counts it)
 * and, when it lets the request through, SET "key" "claim" NX PX "ms", in
 * one script appended to cmds (EVAL when "eval", after NOSCRIPT): an
 * idempotency claim counts its request in the same round trip, and a
 * refused request claims nothing.  "key" carries the credential's hash
 * tag.  NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_ratelimit_claim(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_redis_cmds_t *cmds, ngx_str_t *key,
    ngx_str_t *claim, ngx_msec_t ms, ngx_uint_t eval);

/*
 * That script's reply, with the RateLimit headers: NGX_DECLINED when the
 * bucket let the request through, *held NULL when the claim is the
 * request's, else the key's value (a nil reply when it went in between);
 * the 429 (rate_limited, Retry-After) recorded; NGX_AGAIN when Redis
 * lacks the script (send it again with "eval"); NGX_ERROR, logged, for
 * any other reply.
 */
ngx_int_t ngx_http_cms_ratelimit_claimed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply *rp, redisReply **held);

/*
 * The public surface's ceiling per site (cms_public_site_limit), for a
 * request about to ask PostgreSQL: counts it against the bucket of
 * ctx->principal.site_id and runs next() when it is allowed, else 429
 * rate_limited with Retry-After.  ctx->data is the caller's again when
 * next() runs.  Returns the handler contract's codes.
 */
ngx_int_t ngx_http_cms_ratelimit_site(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_ratelimit_next_pt next);

/*
 * A route's own limit: counts the request against the bucket
 * "<prefix>{<id>}" of setting "th" (none when its burst is 0) and runs
 * next() when it is allowed, else 429 rate_limited with Retry-After; no
 * RateLimit headers.  ctx->data is the caller's again when next() runs.
 * Returns the handler contract's codes.
 */
ngx_int_t ngx_http_cms_ratelimit_own(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, const char *prefix, ngx_str_t *id,
    ngx_http_cms_throttle_t *th, ngx_http_cms_ratelimit_next_pt next);

/*
 * The login or signup throttle ("signup" 0 or 1): counts the request
 * against the buckets of the client's address and of "email" (the ones
 * cms_auth_throttle leaves on) and runs next() when both allow it, else
 * 429 rate_limited with Retry-After.  ctx->data is the caller's again
 * when next() runs.  Returns the handler contract's codes.
 */
ngx_int_t ngx_http_cms_ratelimit_throttle(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t signup, ngx_str_t *email,
    ngx_http_cms_ratelimit_next_pt next);

/* "cms_auth_throttle" directive */
char *ngx_http_cms_ratelimit_throttle_conf(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);

/* "cms_public_site_limit" directive */
char *ngx_http_cms_ratelimit_site_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/* the throttles' defaults, where no cms_auth_throttle set them */
void ngx_http_cms_ratelimit_throttle_init(ngx_http_cms_main_conf_t *mcf);

/* the fallback's salt; once per worker.  NGX_OK or NGX_ERROR. */
ngx_int_t ngx_http_cms_ratelimit_init_process(ngx_cycle_t *cycle);


#endif /* _NGX_HTTP_CMS_RATELIMIT_H_INCLUDED_ */
