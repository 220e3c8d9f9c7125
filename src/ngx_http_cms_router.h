
/*
 * Routing: method + path pattern -> handler, with the credential family and
 * the permission the route needs kept as data in the route tables.
 */


#ifndef _NGX_HTTP_CMS_ROUTER_H_INCLUDED_
#define _NGX_HTTP_CMS_ROUTER_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_pg.h"


/*
 * A handler or a continuation.  Returns NGX_DONE (asynchronous work queued;
 * its callback finishes the request), NGX_OK (answer sent), an HTTP status
 * >= 300 (error recorded with ngx_http_cms_fail()) or NGX_ERROR.
 */
typedef ngx_int_t (*ngx_http_cms_handler_pt)(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


/* the credential a route takes (DESIGN.md, Credentials) */
typedef enum {
    NGX_HTTP_CMS_AUTH_NONE = 0,
    NGX_HTTP_CMS_AUTH_SECRET_KEY,
    NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY,
    NGX_HTTP_CMS_AUTH_SESSION,            /* a session, no workspace */
    NGX_HTTP_CMS_AUTH_MEMBER,             /* a session of a member of :id */
    NGX_HTTP_CMS_AUTH_ADMIN_KEY,
    NGX_HTTP_CMS_AUTH_EXT_KEY
} ngx_http_cms_auth_e;


struct ngx_http_cms_route_s {
    ngx_uint_t                  method;     /* NGX_HTTP_GET, ... */
    ngx_str_t                   pattern;    /* below /v1, ":x" = one segment */
    ngx_uint_t                  auth;       /* ngx_http_cms_auth_e */
    ngx_uint_t                  perm;       /* scope, role or privilege */
    ngx_http_cms_handler_pt     handler;

    /*
     * Secret-key reads may name one statement that authenticates the key
     * and fetches the record in one round trip: $1 is the key's HMAC, $2..
     * the path parameters (malformed uuids as NULL), its first columns
     * those of NGX_HTTP_CMS_AUTH_KEY_SQL.  fused_done() then answers from
     * the same result instead of handler().
     */
    ngx_http_cms_pg_stmt_t     *fused;
    ngx_http_cms_pg_done_pt     fused_done;
};


#define ngx_http_cms_null_route  { 0, ngx_null_string, 0, 0, NULL, NULL, NULL }


/*
 * Finds the route for r->uri and the method, filling ctx->route and
 * ctx->params.  Returns NGX_OK, or 404 / 405 (with Allow) recorded.
 */
ngx_int_t ngx_http_cms_router_match(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);

/*
 * Runs the matched route: credential, permission, then its handler.
 * Returns the handler contract's codes.
 */
ngx_int_t ngx_http_cms_router_dispatch(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);

/*
 * The value of request header "name" (case-insensitive), the first when
 * it is given more than once, or NULL when the request has none.  *n (if
 * n is not NULL) is set to how many times it is given.
 */
ngx_str_t *ngx_http_cms_router_header(ngx_http_request_t *r,
    ngx_str_t *name, ngx_uint_t *n);

/* The error shape for a path: the extension routes answer their own. */
ngx_http_cms_shape_e ngx_http_cms_router_shape(ngx_str_t *uri);


#endif /* _NGX_HTTP_CMS_ROUTER_H_INCLUDED_ */
