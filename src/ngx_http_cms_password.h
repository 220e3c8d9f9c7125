
/*
 * Password hashing (argon2id) in nginx's thread pool: the event loop never
 * spends the ~100 ms a hash costs.
 */


#ifndef _NGX_HTTP_CMS_PASSWORD_H_INCLUDED_
#define _NGX_HTTP_CMS_PASSWORD_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


/*
 * The continuation.  hash: "ok" is 1 with "encoded" set (pool memory), 0 on
 * failure (logged).  verify: "ok" is 1 on a match, else 0.
 */
typedef ngx_int_t (*ngx_http_cms_password_done_pt)(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t ok, ngx_str_t *encoded);


/*
 * Hashes "password" with a fresh salt in the thread pool.  Returns NGX_DONE
 * (done() follows), NGX_ERROR, or 503 service_unavailable recorded when
 * the worker's password queue is full (cms_password_queue).
 */
ngx_int_t ngx_http_cms_password_hash(ngx_http_request_t *r,
    ngx_str_t *password, ngx_http_cms_password_done_pt done);

/*
 * Holds a place in the worker's password queue for a check that follows
 * some I/O (a login's lookup), so that a flood is refused before it costs
 * queries.  Returns NGX_OK, NGX_ERROR, or 503 service_unavailable
 * recorded when the queue is full.
 */
ngx_int_t ngx_http_cms_password_reserve(ngx_http_request_t *r);

/*
 * Checks "password" against "encoded" in the thread pool; with "encoded"
 * NULL it checks against a fixed dummy hash, so that an unknown email
 * costs the same time as a wrong password.  Returns what
 * ngx_http_cms_password_hash() does.
 */
ngx_int_t ngx_http_cms_password_verify(ngx_http_request_t *r,
    ngx_str_t *password, ngx_str_t *encoded,
    ngx_http_cms_password_done_pt done);


/* A field check (cms_fields): long enough for a new password. */
int ngx_http_cms_password_long_enough(const char *p, size_t len);


#endif /* _NGX_HTTP_CMS_PASSWORD_H_INCLUDED_ */
