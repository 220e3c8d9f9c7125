
/*
 * The extension surface's pipeline after authentication: Service-Version,
 * the rate limit, then idempotency for POSTs, then the route's handler.
 */


#ifndef _NGX_HTTP_CMS_EXT_H_INCLUDED_
#define _NGX_HTTP_CMS_EXT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


/*
 * Validates and echoes "Service-Version: YYYY-MM-DD" (400 invalid_request
 * naming it when malformed).  NGX_OK or 400.
 */
ngx_int_t ngx_http_cms_ext_version(ngx_http_request_t *r);

/* Rate limit, idempotency (POST), handler.  Handler contract codes. */
ngx_int_t ngx_http_cms_ext_guard(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


#endif /* _NGX_HTTP_CMS_EXT_H_INCLUDED_ */
