
/*
 * The router: a linear walk over the resources' route tables.  Patterns
 * are matched segment by segment below "/v1"; ":name" takes one non-empty
 * segment as a parameter.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_router.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_ext.h"


#define NGX_HTTP_CMS_PREFIX      "/v1"


static ngx_int_t ngx_http_cms_router_path(ngx_http_request_t *r,
    ngx_str_t *path);
static ngx_int_t ngx_http_cms_route_matches(ngx_str_t *pattern,
    ngx_str_t *path, ngx_str_t *params, ngx_uint_t *nparams);
static ngx_int_t ngx_http_cms_router_allow(ngx_http_request_t *r,
    ngx_uint_t methods);


static ngx_http_cms_route_t  *ngx_http_cms_tables[] = {
    ngx_http_cms_health_routes,
    ngx_http_cms_accounts_routes,
    ngx_http_cms_workspaces_routes,
    ngx_http_cms_api_keys_routes,
    ngx_http_cms_categories_routes,
    ngx_http_cms_articles_routes,
    ngx_http_cms_billing_routes,
    ngx_http_cms_control_routes,
    ngx_http_cms_extensions_routes,
    ngx_http_cms_testing_routes,
    NULL
};


static struct {
    ngx_uint_t                  method;
    ngx_str_t                   name;
} ngx_http_cms_methods[] = {
    { NGX_HTTP_GET,     ngx_string("GET") },
    { NGX_HTTP_HEAD,    ngx_string("HEAD") },
    { NGX_HTTP_POST,    ngx_string("POST") },
    { NGX_HTTP_PUT,     ngx_string("PUT") },
    { NGX_HTTP_PATCH,   ngx_string("PATCH") },
    { NGX_HTTP_DELETE,  ngx_string("DELETE") },
    { NGX_HTTP_OPTIONS, ngx_string("OPTIONS") },
};


ngx_http_cms_shape_e
ngx_http_cms_router_shape(ngx_str_t *uri)
{
    static ngx_str_t  ext = ngx_string(NGX_HTTP_CMS_PREFIX "/ext");

    /* "/v1/ext..." covers both /v1/ext/ and /v1/extensions */
    if (uri->len >= ext.len
        && ngx_strncmp(uri->data, ext.data, ext.len) == 0
        && (uri->len == ext.len || uri->data[ext.len] == '/'
            || ngx_strncmp(uri->data + ext.len, "ensions",
                           ngx_min(uri->len - ext.len, 7)) == 0))
    {
        return NGX_HTTP_CMS_SHAPE_EXT;
    }

    return NGX_HTTP_CMS_SHAPE_CONTENT;
}


ngx_int_t
ngx_http_cms_router_match(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t                  path;
    ngx_uint_t                 t, methods, method;
    ngx_http_cms_route_t      *rt;
    ngx_http_cms_main_conf_t  *mcf;

    if (ngx_http_cms_router_path(r, &path) != NGX_OK) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    /* HEAD is answered by the GET route, without a body */
    method = (r->method == NGX_HTTP_HEAD) ? NGX_HTTP_GET : r->method;
    methods = 0;

    for (t = 0; ngx_http_cms_tables[t] != NULL; t++) {
        rt = ngx_http_cms_tables[t];

        if (rt == ngx_http_cms_testing_routes && !mcf->test_routes) {
            continue;
        }

        for ( /* void */ ; rt->handler; rt++) {
            if (ngx_http_cms_route_matches(&rt->pattern, &path, ctx->params,
                                           &ctx->nparams)
                != NGX_OK)
            {
                continue;
            }

            if (rt->method == method) {
                ctx->route = rt;
                return NGX_OK;
            }

            methods |= rt->method;
        }
    }

    if (methods == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    if (ngx_http_cms_router_allow(r, methods) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_METHOD_NOT_ALLOWED, NULL);
}


ngx_int_t
ngx_http_cms_router_dispatch(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;

    if (ctx->shape == NGX_HTTP_CMS_SHAPE_EXT) {
        rc = ngx_http_cms_ext_version(r);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    return ngx_http_cms_auth_run(r, ctx);
}


/* r->uri below "/v1", e.g. "/health"; nginx has already normalised it */
static ngx_int_t
ngx_http_cms_router_path(ngx_http_request_t *r, ngx_str_t *path)
{
    size_t  n;

    n = sizeof(NGX_HTTP_CMS_PREFIX) - 1;

    if (r->uri.len <= n + 1
        || ngx_strncmp(r->uri.data, NGX_HTTP_CMS_PREFIX, n) != 0
        || r->uri.data[n] != '/')
    {
        return NGX_DECLINED;
    }

    path->data = r->uri.data + n;
    path->len = r->uri.len - n;

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_route_matches(ngx_str_t *pattern, ngx_str_t *path,
    ngx_str_t *params, ngx_uint_t *nparams)
{
    u_char      *p, *pe, *s, *se, *seg;
    ngx_uint_t   n;

    p = pattern->data;
    pe = p + pattern->len;
    s = path->data;
    se = s + path->len;
    n = 0;

    while (p < pe && s < se) {

        if (*p == ':') {
            /* a parameter: one non-empty segment */
            while (p < pe && *p != '/') {
                p++;
            }

            seg = s;

            while (s < se && *s != '/') {
                s++;
            }

            if (s == seg || n == NGX_HTTP_CMS_MAX_PARAMS) {
                return NGX_DECLINED;
            }

            params[n].data = seg;
            params[n].len = s - seg;
            n++;

            continue;
        }

        if (*p != *s) {
            return NGX_DECLINED;
        }

        p++;
        s++;
    }

    if (p != pe || s != se) {
        return NGX_DECLINED;
    }

    *nparams = n;

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_router_allow(ngx_http_request_t *r, ngx_uint_t methods)
{
    u_char      *p;
    size_t       len;
    ngx_str_t    value;
    ngx_uint_t   i;

    static ngx_str_t  allow = ngx_string("Allow");

    if (methods & NGX_HTTP_GET) {
        methods |= NGX_HTTP_HEAD;
    }

    len = 0;

    for (i = 0; i < sizeof(ngx_http_cms_methods)
                    / sizeof(ngx_http_cms_methods[0]); i++)
    {
        len += ngx_http_cms_methods[i].name.len + 2;
    }

    p = ngx_pnalloc(r->pool, len);

    if (p == NULL) {
        return NGX_ERROR;
    }

    value.data = p;

    for (i = 0; i < sizeof(ngx_http_cms_methods)
                    / sizeof(ngx_http_cms_methods[0]); i++)
    {
        if (!(methods & ngx_http_cms_methods[i].method)) {
            continue;
        }

        if (p != value.data) {
            *p++ = ','; *p++ = ' ';
        }

        p = ngx_cpymem(p, ngx_http_cms_methods[i].name.data,
                       ngx_http_cms_methods[i].name.len);
    }

    value.len = p - value.data;

    return ngx_http_cms_header_add(r, &allow, &value);
}


ngx_str_t *
ngx_http_cms_router_header(ngx_http_request_t *r, ngx_str_t *name,
    ngx_uint_t *n)
{
    ngx_str_t        *v;
    ngx_uint_t        i, count;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    v = NULL;
    count = 0;

    for (part = &r->headers_in.headers.part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; i++) {
            if (h[i].key.len == name->len
                && ngx_strncasecmp(h[i].key.data, name->data, name->len) == 0)
            {
                v = (count++ == 0) ? &h[i].value : v;
            }
        }
    }

    if (n != NULL) {
        *n = count;
    }

    return v;
}
