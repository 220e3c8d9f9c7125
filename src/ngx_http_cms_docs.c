
/*
 * The API's own description, with no credential: GET /v1/openapi.json
 * (openapi/openapi.yaml as JSON) and GET /v1/docs (the reference page
 * @redocly/cli renders from it, Redoc's script inline).  Both are made at
 * build time by scripts/docs-embed into a generated source of the build
 * folder, with their strong ETags (a matching If-None-Match is 304; no
 * request hashes the 3 MB page) and the page's Content-Security-Policy,
 * which runs only the page's own inline scripts, by their hashes.  The
 * bodies are static: they are sent from the module's memory as they are.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_response_cache.h"
#include "ngx_http_cms_resources.h"


static ngx_int_t ngx_http_cms_docs_openapi(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_docs_page(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


/* defined in the generated source (scripts/docs-embed) */
extern ngx_str_t  ngx_http_cms_docs_json;
extern ngx_str_t  ngx_http_cms_docs_json_etag;
extern ngx_str_t  ngx_http_cms_docs_html;
extern ngx_str_t  ngx_http_cms_docs_html_etag;
extern ngx_str_t  ngx_http_cms_docs_html_csp;


ngx_http_cms_route_t  ngx_http_cms_docs_routes[] = {

    { NGX_HTTP_GET, ngx_string("/openapi.json"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_docs_openapi, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/docs"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_docs_page, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_docs_openapi(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    static ngx_str_t  type = ngx_string("application/json");

    return ngx_http_cms_send_cached(r, &type, &ngx_http_cms_docs_json,
                                    &ngx_http_cms_docs_json_etag);
}


static ngx_int_t
ngx_http_cms_docs_page(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    static ngx_str_t  type = ngx_string("text/html; charset=utf-8");
    static ngx_str_t  csp = ngx_string("Content-Security-Policy");

    if (ngx_http_cms_header_add(r, &csp, &ngx_http_cms_docs_html_csp)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_send_cached(r, &type, &ngx_http_cms_docs_html,
                                    &ngx_http_cms_docs_html_etag);
}
