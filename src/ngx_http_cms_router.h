
/*
 * The router owns the request: it matches the route, then runs the route
 * family's steps in order, the route's handler last.  The route tables
 * (the resources' only export) are in ngx_http_cms_resources.h.
 */


#ifndef _NGX_HTTP_CMS_ROUTER_H_INCLUDED_
#define _NGX_HTTP_CMS_ROUTER_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


/*
 * Finds the route for r->uri and the method, filling ctx->route,
 * ctx->auth, ctx->perm and ctx->params.  Returns NGX_OK, or 404 / 405
 * (with Allow) recorded.
 */
ngx_int_t ngx_http_cms_router_match(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);

/*
 * Runs the matched route's family steps, then its handler.  Returns the
 * handler contract's codes (NGX_DONE while a step or the handler waits).
 */
ngx_int_t ngx_http_cms_router_dispatch(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


#endif /* _NGX_HTTP_CMS_ROUTER_H_INCLUDED_ */
