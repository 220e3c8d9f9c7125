
/*
 * What makes an answer cacheable by browsers and CDNs: strong ETags (so
 * that nginx's not-modified filter answers If-None-Match with 304), the
 * public surface's Cache-Control and surrogate keys, and CORS.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_response_cache.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_public_cache.h"


/* a public 200: its ETag, the public Cache-Control, its surrogate keys */
ngx_int_t
ngx_http_cms_cache_headers(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *body)
{
    ngx_http_cms_main_conf_t  *mcf;

    static ngx_str_t  cache_name = ngx_string("Cache-Control");
    static ngx_str_t  surrogate_name = ngx_string("Surrogate-Key");
    static ngx_str_t  tag_name = ngx_string("Cache-Tag");
    static ngx_str_t  vary_name = ngx_string("Vary");
    static ngx_str_t  vary = ngx_string("Authorization");

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    /* a section read: the ETag its version made, the body kept for it
       with the surrogate keys it goes out with */
    if (ctx->public_key.len) {
        ngx_http_cms_public_cache_body_put(r, &ctx->public_key,
                                           &ctx->surrogate, body);
    }

    if ((ctx->etag.len ? ngx_http_cms_etag_set(r, &ctx->etag)
                       : ngx_http_cms_etag(r, body)) != NGX_OK
        || ngx_http_cms_header_add(r, &cache_name,
                                   ctx->key_in_header ? &mcf->public_private
                                                      : &mcf->public_cache)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* another site's key, or none, must never get this answer from a
       cache keyed on the URL */
    if (ctx->key_in_header
        && ngx_http_cms_header_add(r, &vary_name, &vary) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ctx->surrogate.len
        && (ngx_http_cms_header_add(r, &surrogate_name, &ctx->surrogate)
            != NGX_OK
            || ngx_http_cms_header_add(r, &tag_name, &ctx->surrogate)
               != NGX_OK))
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_public_private(ngx_conf_t *cf, ngx_http_cms_main_conf_t *mcf)
{
    u_char     *p;
    ngx_str_t   rest;

    static ngx_str_t  private = ngx_string("private");

    rest = mcf->public_cache;

    if (rest.len >= 6 && ngx_strncasecmp(rest.data, (u_char *) "public", 6)
                         == 0)
    {
        rest.data += 6;
        rest.len -= 6;
    }

    while (rest.len && (rest.data[0] == ' ' || rest.data[0] == ',')) {
        rest.data++;
        rest.len--;
    }

    p = ngx_pnalloc(cf->pool, private.len + 2 + rest.len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    mcf->public_private.data = p;
    p = ngx_cpymem(p, private.data, private.len);

    if (rest.len) {
        p = ngx_cpymem(p, ", ", 2);
        p = ngx_cpymem(p, rest.data, rest.len);
    }

    mcf->public_private.len = p - mcf->public_private.data;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_etag(ngx_http_request_t *r, ngx_str_t *body)
{
    ngx_str_t  etag;

    etag.data = ngx_pnalloc(r->pool, 2 + 64);
    if (etag.data == NULL
        || ngx_http_cms_crypto_sha256_hex(body, 1, etag.data + 1) != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* 128 bits of the digest are enough to tell versions apart */
    etag.data[0] = '"';
    etag.data[33] = '"';
    etag.len = 34;

    return ngx_http_cms_etag_set(r, &etag);
}


ngx_int_t
ngx_http_cms_etag_set(ngx_http_request_t *r, ngx_str_t *etag)
{
    ngx_table_elt_t  *h;

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    h->hash = 1;
    ngx_str_set(&h->key, "ETag");
    h->value = *etag;
    h->lowcase_key = NULL;
#if (nginx_version >= 1023000)
    h->next = NULL;
#endif

    r->headers_out.etag = h;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_send_cached(ngx_http_request_t *r, ngx_str_t *type,
    ngx_str_t *body, ngx_str_t *etag)
{
    static ngx_str_t  cache_name = ngx_string("Cache-Control");
    static ngx_str_t  cache = ngx_string("public, max-age=300");

    if ((etag ? ngx_http_cms_etag_set(r, etag) : ngx_http_cms_etag(r, body))
        != NGX_OK
        || ngx_http_cms_header_add(r, &cache_name, &cache) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_send_typed(r, NGX_HTTP_OK, type, body);
}


ngx_int_t
ngx_http_cms_cache_cors(ngx_http_request_t *r, ngx_str_t *origin)
{
    ngx_uint_t  i;

    static ngx_str_t  headers[][2] = {
        { ngx_string("Vary"), ngx_string("Origin") },
        { ngx_string("Access-Control-Expose-Headers"),
          ngx_string("ETag, RateLimit, RateLimit-Policy, Retry-After,"
                     " X-Request-Id") },
    };

    static ngx_str_t  allow = ngx_string("Access-Control-Allow-Origin");

    if (ngx_http_cms_header_add(r, &allow, origin) != NGX_OK) {
        return NGX_ERROR;
    }

    for (i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
        if (ngx_http_cms_header_add(r, &headers[i][0], &headers[i][1])
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}
