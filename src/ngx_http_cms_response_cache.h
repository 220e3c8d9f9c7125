
/*
 * Cacheable answers: strong ETags, the public surface's cache headers and
 * CORS.
 */


#ifndef _NGX_HTTP_CMS_RESPONSE_CACHE_H_INCLUDED_
#define _NGX_HTTP_CMS_RESPONSE_CACHE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


/*
 * A strong ETag for "body" (128 bits of its SHA-256) in the headers and
 * r->headers_out.etag, so that nginx's not-modified filter answers a
 * matching If-None-Match with 304.  NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_etag(ngx_http_request_t *r, ngx_str_t *body);

/*
 * A public 200 (ctx->cacheable): its ETag, Cache-Control from
 * cms_public_cache_control, Surrogate-Key and Cache-Tag from
 * ctx->surrogate.  NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_cache_headers(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *body);

/*
 * Access-Control-Allow-Origin "origin", Vary: Origin, and the headers a
 * page may read (ETag, the rate limit's, X-Request-Id).  NGX_OK or
 * NGX_ERROR.
 */
ngx_int_t ngx_http_cms_cache_cors(ngx_http_request_t *r, ngx_str_t *origin);


#endif /* _NGX_HTTP_CMS_RESPONSE_CACHE_H_INCLUDED_ */
