
/*
 * The extension family's own pipeline step: the Service-Version header.
 */


#ifndef _NGX_HTTP_CMS_EXT_H_INCLUDED_
#define _NGX_HTTP_CMS_EXT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


/*
 * Validates and echoes "Service-Version: YYYY-MM-DD".  Returns
 * NGX_DECLINED (the pipeline goes on), 400 invalid_request naming it when
 * malformed or given twice, or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_ext_version(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


#endif /* _NGX_HTTP_CMS_EXT_H_INCLUDED_ */
