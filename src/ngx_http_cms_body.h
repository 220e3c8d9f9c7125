
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
 * Checks a declared Content-Length before any byte is read: a JSON body
 * (kind NGX_HTTP_CMS_BODY_JSON) against cms_body_max_size (413
 * payload_too_large), a raw upload's (NGX_HTTP_CMS_BODY_FILE) against
 * cms_upload_max_size (413 upload_too_large).  Returns NGX_OK, or 413
 * with the error recorded.
 */
ngx_int_t ngx_http_cms_body_precheck(ngx_http_request_t *r,
    ngx_uint_t kind);

/*
 * Called once the body is read: checks the content type, size and
 * nesting depth, and parses it into ctx->body (NULL when there is no
 * body) with ctx->raw_body holding the exact bytes.  Returns NGX_OK, or an
 * error status with the error recorded (400, 413, 415), or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_body_parse(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


#endif /* _NGX_HTTP_CMS_BODY_H_INCLUDED_ */
