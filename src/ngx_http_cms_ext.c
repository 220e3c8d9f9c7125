
/*
 * The extension family's Service-Version step.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_ext.h"


static ngx_int_t ngx_http_cms_ext_date_valid(u_char *p, size_t len);


ngx_int_t
ngx_http_cms_ext_version(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t   *v;
    ngx_uint_t   n;

    static ngx_str_t  name = ngx_string("Service-Version");

    v = ngx_http_cms_query_header(r, &name, &n);

    if (v == NULL) {
        return NGX_DECLINED;
    }

    if (n > 1) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     "Service-Version",
                                     "Service-Version is given twice");
    }

    if (ngx_http_cms_ext_date_valid(v->data, v->len) != NGX_OK) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     "Service-Version",
                                     "Service-Version must be a date, "
                                     "YYYY-MM-DD");
    }

    return ngx_http_cms_header_add(r, &name, v) == NGX_OK ? NGX_DECLINED
                                                          : NGX_ERROR;
}


/* a real calendar date, 2000-01-01 .. 2999-12-31 */
static ngx_int_t
ngx_http_cms_ext_date_valid(u_char *p, size_t len)
{
    ngx_int_t  y, m, d, days;

    static ngx_int_t  month_days[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30,
                                       31, 30, 31 };

    if (len != 10 || p[4] != '-' || p[7] != '-') {
        return NGX_DECLINED;
    }

    y = ngx_atoi(p, 4);
    m = ngx_atoi(p + 5, 2);
    d = ngx_atoi(p + 8, 2);

    if (y < 2000 || y > 2999 || m < 1 || m > 12 || d < 1) {
        return NGX_DECLINED;
    }

    days = month_days[m - 1];

    if (m == 2 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) {
        days = 28;
    }

    return d <= days ? NGX_OK : NGX_DECLINED;
}
