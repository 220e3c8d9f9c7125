
/*
 * GET /v1/extensions/:name/ui-token: a token for an extension's own view
 * (cms_ui_token_ttl), given to a user session whose member privileges in
 * the extension's facility hold the manifest's required privilege.  It is
 * signed with a key of its own derived from cms_secret, so it is never
 * taken for a session.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_extensions.h"
#include "cms_jwt.h"
#include "cms_uuid.h"


static ngx_int_t ngx_http_cms_extensions_ui_found(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_extensions_ui_sign(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);


/* $1 user, $2 extension name, $3 facility or NULL */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_extensions_ui_sql =
    ngx_http_cms_pg_stmt(
        "SELECT e.id, e.facility_id,"
        " e.required_privilege = ''"
        "  OR fm.privileges @> ARRAY[e.required_privilege]"
        " FROM extensions e"
        " JOIN facility_members fm ON fm.facility_id = e.facility_id"
        "  AND fm.user_id = $1"
        " WHERE e.name = $2 AND ($3::uuid IS NULL OR e.facility_id = $3)"
        " LIMIT 2",
        3);


/* the route's handler: the name and ?facility_id= checked, then the lookup */
ngx_int_t
ngx_http_cms_extensions_ui_token(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[3];

    rc = ngx_http_cms_extensions_name(r, ctx);
    if (rc != NGX_OK) {
        return rc;
    }

    args[0] = ctx->principal.user_id;
    args[1] = ctx->params[0];

    rc = ngx_http_cms_query_arg(r, "facility_id", CMS_UUID_LEN, &args[2]);

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    if (rc == NGX_OK && !cms_uuid_valid((char *) args[2].data, args[2].len)) {
        return ngx_http_cms_extensions_invalid(r, "facility_id",
                                               "facility_id must be a uuid");
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_extensions_ui_sql, args, 3,
                                 ngx_http_cms_extensions_ui_found);
}


static ngx_int_t
ngx_http_cms_extensions_ui_found(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    if (PQntuples(res) > 1) {
        return ngx_http_cms_extensions_invalid(r, "facility_id",
                                               "the extension is installed in "
                                               "several of your facilities: "
                                               "name one with ?facility_id=");
    }

    if (PQgetvalue(res, 0, 2)[0] != 't') {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_MISSING_SCOPE, NULL,
                                     "You lack the privilege this "
                                     "extension's view requires");
    }

    return ngx_http_cms_extensions_ui_sign(r, ctx, res);
}


/* {token, expires_in} for the row's extension and facility */
static ngx_int_t
ngx_http_cms_extensions_ui_sign(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    u_char                    *p, payload[512];
    size_t                     len, plen;
    time_t                     now;
    ngx_str_t                  body;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);
    now = ngx_time();

    plen = ngx_snprintf(payload, sizeof(payload),
                        "{\"sub\":\"%V\",\"ext\":\"%s\",\"fac\":\"%s\","
                        "\"aud\":\"extension-ui\",\"iat\":%T,\"exp\":%T}",
                        &ctx->principal.user_id, PQgetvalue(res, 0, 0),
                        PQgetvalue(res, 0, 1), now, now + mcf->ui_token_ttl)
           - payload;

    body.data = ngx_pnalloc(r->pool, CMS_JWT_MAX_LEN + 64);
    if (body.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_cpymem(body.data, "{\"token\":\"", 10);

    /* signed with its own key: a UI token is never a session */
    len = cms_jwt_sign(mcf->ui_key, (char *) payload, plen, (char *) p,
                       CMS_JWT_MAX_LEN);
    if (len == 0) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(p + len, "\",\"expires_in\":%T}", mcf->ui_token_ttl);
    body.len = p - body.data;

    /* a bearer token: no cache may keep the answer */
    ctx->no_store = 1;

    return ngx_http_cms_send(r, NGX_HTTP_OK, &body);
}
