
/*
 * The extension surface's rate limit: GCRA in one Redis Lua script, per
 * key, exact across workers and hosts; a per-worker fallback when Redis
 * cannot be asked.
 */


#ifndef _NGX_HTTP_CMS_RATELIMIT_H_INCLUDED_
#define _NGX_HTTP_CMS_RATELIMIT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


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

/* SHA-1 of the script, for EVALSHA; once per worker. */
ngx_int_t ngx_http_cms_ratelimit_init_process(ngx_cycle_t *cycle);


#endif /* _NGX_HTTP_CMS_RATELIMIT_H_INCLUDED_ */
