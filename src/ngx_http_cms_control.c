
/*
 * POST /v1/ext/control/drain-complete: an extension's old instance has
 * finished its in-flight work after a reload; the extension is running
 * again without waiting out the grace period.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_pg.h"


static ngx_int_t ngx_http_cms_control_drained(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_control_acknowledged(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);


static ngx_http_cms_pg_stmt_t  ngx_http_cms_control_drain_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE extensions SET status = 'running', updated_at = now()"
        " WHERE id = $1 AND facility_id = $2 AND status = 'reloading'",
        2);


ngx_http_cms_route_t  ngx_http_cms_control_routes[] = {

    { NGX_HTTP_POST, ngx_string("/ext/control/drain-complete"),
      NGX_HTTP_CMS_AUTH_EXT_KEY, NGX_HTTP_CMS_PRIV_CONTROL_WRITE,
      ngx_http_cms_control_drained, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_control_drained(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    /* the route takes no fields; an empty body or {} is fine */
    rc = ngx_http_cms_json_no_body(r, ctx->body);
    if (rc != NGX_OK) {
        return rc;
    }

    args[0] = ctx->principal.extension_id;
    args[1] = ctx->principal.facility_id;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_control_drain_sql, args, 2,
                                 ngx_http_cms_control_acknowledged);
}


static ngx_int_t
ngx_http_cms_control_acknowledged(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    static ngx_str_t  ack = ngx_string("{\"acknowledged\":true}");

    rc = ngx_http_cms_error_check(r, res, PGRES_COMMAND_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    /* acknowledged also when not reloading: the call is safe to repeat */
    return ngx_http_cms_send(r, NGX_HTTP_OK, &ack);
}
