
/*
 * Query parameters: one reader for every route (see the header).
 * Repeated parameters are refused rather than resolved (first or last
 * wins): a cache, a proxy and this module could each pick another one.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_query.h"
#include "cms_query.h"
#include "cms_validate.h"


/* the longest number ngx_http_cms_query_uint() reads: 10^9 */
#define NGX_HTTP_CMS_QUERY_UINT_LEN  10


/* long: find, bound, decode, check: a refusal each */
ngx_int_t
ngx_http_cms_query_arg(ngx_http_request_t *r, const char *name, size_t max,
    ngx_str_t *value)
{
    size_t       n, vlen, len;
    u_char      *p;
    const char  *val;

    ngx_str_null(value);

    n = cms_query_find((const char *) r->args.data, r->args.len, name,
                       ngx_strlen(name), &val, &vlen);
    if (n == 0) {
        return NGX_DECLINED;
    }

    if (n > 1) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     name, "A query parameter is repeated");
    }

    /* escapes only shrink: 3 bytes each at most for "max" decoded bytes */
    if (vlen > 3 * max) {
        goto too_long;
    }

    p = ngx_pnalloc(r->pool, vlen ? vlen : 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    len = cms_query_decode(val, vlen, (char *) p);

    if (len == CMS_QUERY_BAD_ESCAPE) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     name, "A query parameter has a "
                                     "malformed percent escape");
    }

    if (len > max) {
        goto too_long;
    }

    if (!cms_utf8_valid((const char *) p, len)) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     name, "A query parameter is not valid "
                                     "UTF-8 or holds a NUL byte");
    }

    value->data = p;
    value->len = len;

    return NGX_OK;

too_long:

    return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST, name,
                                 "A query parameter is too long");
}


ngx_int_t
ngx_http_cms_query_uint(ngx_http_request_t *r, const char *name,
    ngx_uint_t *n)
{
    ngx_int_t  rc, v;
    ngx_str_t  s;

    /* room for a 30-digit number, read as "not a number", not as too long */
    rc = ngx_http_cms_query_arg(r, name, 64, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    if (s.len == 0 || s.len > NGX_HTTP_CMS_QUERY_UINT_LEN) {
        return NGX_ABORT;
    }

    v = ngx_atoi(s.data, s.len);

    if (v == NGX_ERROR || v > 1000000000) {
        return NGX_ABORT;
    }

    *n = (ngx_uint_t) v;

    return NGX_OK;
}


ngx_str_t *
ngx_http_cms_query_header(ngx_http_request_t *r, ngx_str_t *name,
    ngx_uint_t *n)
{
    ngx_table_elt_t  *h;

    h = ngx_http_cms_query_find(&r->headers_in.headers, name, n);

    return h ? &h->value : NULL;
}


ngx_table_elt_t *
ngx_http_cms_query_find(ngx_list_t *headers, ngx_str_t *name, ngx_uint_t *n)
{
    ngx_uint_t        i, count;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h, *first;

    first = NULL;
    count = 0;

    for (part = &headers->part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; i++) {
            if (h[i].hash != 0 && h[i].key.len == name->len
                && ngx_strncasecmp(h[i].key.data, name->data, name->len) == 0)
            {
                first = (count++ == 0) ? &h[i] : first;
            }
        }
    }

    if (n != NULL) {
        *n = count;
    }

    return first;
}
