
/*
 * Stripe-grade idempotency for POSTs: a Redis claim, the first answer kept
 * and replayed byte for byte, conflicts refused.
 */


#ifndef _NGX_HTTP_CMS_IDEMPOTENCY_H_INCLUDED_
#define _NGX_HTTP_CMS_IDEMPOTENCY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


#define NGX_HTTP_CMS_IDEM_HEX          64


/* a claimed key (ctx->idem) */
typedef struct {
    ngx_str_t                   key;       /* the Redis key */
    ngx_str_t                   scope;     /* credential and route: for SQL */
    u_char                      fp[NGX_HTTP_CMS_IDEM_HEX];
    ngx_http_cms_handler_pt     next;
    unsigned                    claimed:1;
    unsigned                    recorded:1;
    unsigned                    fused:1;   /* with the rate limit */
    unsigned                    eval:1;    /* NOSCRIPT seen: EVAL */
} ngx_http_cms_idem_t;


/*
 * Checks the Idempotency-Key header and claims the key in Redis, then runs
 * next(); or replays the first answer; or refuses (400, 409; 500 when
 * Redis cannot be asked: POSTs fail closed).  Handler contract codes.
 */
ngx_int_t ngx_http_cms_idempotency_claim(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_handler_pt next);

/*
 * Called with every answer of a request that claimed a key: keeps a 2xx
 * to 4xx answer for the retention, releases the key after a 5xx (the
 * retry runs again).  Fire and forget: the request does not wait.
 */
void ngx_http_cms_idempotency_record(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t status, ngx_str_t *body);


#endif /* _NGX_HTTP_CMS_IDEMPOTENCY_H_INCLUDED_ */
