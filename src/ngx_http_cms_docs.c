
/*
 * The API's own description, with no credential: GET /v1/openapi.json
 * (openapi/openapi.yaml as JSON) and GET /v1/docs (the reference page
 * @redocly/cli renders from it, Redoc's script inline).  Both are made at
 * build time by scripts/docs-embed into a generated source of the build
 * folder, with their strong ETags (a matching If-None-Match is 304; no
 * request hashes the 3 MB page) and the page's Content-Security-Policy,
 * which runs only the page's own inline scripts, by their hashes.  The
 * bodies are static: they are sent from the module's memory as they are;
 * the page also gzipped at build time, for a client that takes gzip (its
 * own ETag, Vary: Accept-Encoding), so that no request compresses 3 MB.
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
static ngx_uint_t ngx_http_cms_docs_gzip(ngx_http_request_t *r);


/* defined in the generated source (scripts/docs-embed) */
extern ngx_str_t  ngx_http_cms_docs_json;
extern ngx_str_t  ngx_http_cms_docs_json_etag;
extern ngx_str_t  ngx_http_cms_docs_html;
extern ngx_str_t  ngx_http_cms_docs_html_etag;
extern ngx_str_t  ngx_http_cms_docs_html_csp;
extern ngx_str_t  ngx_http_cms_docs_html_gz;
extern ngx_str_t  ngx_http_cms_docs_html_gz_etag;


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
    ngx_table_elt_t  *h;

    static ngx_str_t  type = ngx_string("text/html; charset=utf-8");
    static ngx_str_t  csp = ngx_string("Content-Security-Policy");
    static ngx_str_t  vary = ngx_string("Vary");
    static ngx_str_t  accept = ngx_string("Accept-Encoding");

    if (ngx_http_cms_header_add(r, &csp, &ngx_http_cms_docs_html_csp)
        != NGX_OK
        || ngx_http_cms_header_add(r, &vary, &accept) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (!ngx_http_cms_docs_gzip(r)) {
        return ngx_http_cms_send_cached(r, &type, &ngx_http_cms_docs_html,
                                        &ngx_http_cms_docs_html_etag);
    }

    /* nginx's gzip filter leaves an encoded answer alone */
    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    h->hash = 1;
    ngx_str_set(&h->key, "Content-Encoding");
    ngx_str_set(&h->value, "gzip");
    r->headers_out.content_encoding = h;

    return ngx_http_cms_send_cached(r, &type, &ngx_http_cms_docs_html_gz,
                                    &ngx_http_cms_docs_html_gz_etag);
}


/* whether the client takes gzip: nginx's own test where it has one (the
   Accept-Encoding, gzip_http_version, gzip_proxied, gzip_disable) */
static ngx_uint_t
ngx_http_cms_docs_gzip(ngx_http_request_t *r)
{
#if (NGX_HTTP_GZIP)
    return ngx_http_gzip_ok(r) == NGX_OK;
#else
    return 0;
#endif
}
