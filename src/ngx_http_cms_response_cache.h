
/*
 * Cacheable answers: strong ETags, the public surface's cache headers,
 * CORS, and the five-minute answers of routes with no credential.
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
 * The same with a strong ETag already made ("etag", quoted, living as long
 * as the request), e.g. at build time for a body too large to hash per
 * request.  NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_etag_set(ngx_http_request_t *r, ngx_str_t *etag);

/*
 * Sends "body" of content type "type" as a 200 that browsers and caches may
 * keep five minutes (Cache-Control: public, max-age=300), with the strong
 * ETag "etag", or the body's own (ngx_http_cms_etag()) when it is NULL; a
 * matching If-None-Match is answered 304 by nginx's not-modified filter.
 * "type", "body" and "etag" live as long as the request.  Returns what
 * ngx_http_cms_send_typed() returns: NGX_OK (sent) or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_send_cached(ngx_http_request_t *r, ngx_str_t *type,
    ngx_str_t *body, ngx_str_t *etag);

/*
 * A public 200 (ctx->cacheable): its ETag, Cache-Control from
 * cms_public_cache_control (made private, with Vary: Authorization, when
 * the key came in a header: ctx->key_in_header), Surrogate-Key and
 * Cache-Tag from ctx->surrogate.  NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_cache_headers(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *body);

/*
 * mcf->public_private from mcf->public_cache: "private" in place of a
 * leading "public" (or before it all), the rest kept, so that a browser
 * keeps a header-keyed answer as long and no shared cache keeps it at all.
 * NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_public_private(ngx_conf_t *cf,
    ngx_http_cms_main_conf_t *mcf);

/*
 * Access-Control-Allow-Origin "origin", Vary: Origin, and the headers a
 * page may read (ETag, the rate limit's, X-Request-Id).  NGX_OK or
 * NGX_ERROR.
 */
ngx_int_t ngx_http_cms_cache_cors(ngx_http_request_t *r, ngx_str_t *origin);


#endif /* _NGX_HTTP_CMS_RESPONSE_CACHE_H_INCLUDED_ */
