
/*
 * Request bodies: JSON only, with size and nesting limits.
 */


#ifndef _NGX_HTTP_CMS_BODY_H_INCLUDED_
#define _NGX_HTTP_CMS_BODY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


/*
 * The largest body of a kind (_resources.h) and the error past it: a
 * JSON body's cms_body_max_size (413 payload_too_large), a raw upload's
 * cms_upload_max_size (413 upload_too_large), an avatar's
 * cms_avatar_max_size (413 avatar_too_large).
 */
off_t ngx_http_cms_body_cap(ngx_http_request_t *r, ngx_uint_t kind,
    ngx_uint_t *code);

/*
 * Checks a declared Content-Length before any byte is read against the
 * route's cap (ctx->body_file's kind).  Returns NGX_OK, or 413 with the
 * error recorded.  The bytes of a body sent without a length are
 * counted as they come by the request body filter ngx_http_cms_body_init()
 * installs: past the cap, the error is recorded and the read ends with
 * 413.  (A "cms" location has no client_max_body_size of nginx's: these
 * are the limits.)
 */
ngx_int_t ngx_http_cms_body_precheck(ngx_http_request_t *r,
    ngx_uint_t kind);

ngx_int_t ngx_http_cms_body_init(ngx_conf_t *cf);

/*
 * Called once the body is read: checks the content type, size and
 * nesting depth, and parses it into ctx->body (NULL when there is no
 * body) with ctx->raw_body holding the exact bytes.  Returns NGX_OK, or an
 * error status with the error recorded (400, 413, 415), or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_body_parse(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


#endif /* _NGX_HTTP_CMS_BODY_H_INCLUDED_ */
